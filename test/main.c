/* main.c - the redcoll test runner: one translation unit with every suite.

   Usage: test_runner [-v] [-t] [-s K/N] [FILTER]   runs the tests whose name contains
   FILTER (-v: every failed check; -t: each test's CPU seconds; -s K/N: every N-th of
   them from the K-th, K = 0..N-1, so N runners share the suite).
   The last line is "N passed, N failed"; the exit status is 1 on any failure. */
#include "fresh_memory.h"
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"
#include "test.h"

#include "test_core.c"
#include "test_sim.c"
#include "test_foundation.c"
#include "test_shm.c"
#include "test_disagree.c"
#include "test_mpich.c"
#include "test_rabenseifner.c"
#include "test_hierarchical.c"
#include "test_elimination.c"
#include "test_exact.c"
#include "test_kernels.c"
#include "test_model.c"
#include "test_plans.c"
#include "test_chunked.c"
#include "test_nonblock.c"
#include "test_nodes.c"
#include "test_pshm.c"

#ifdef __GLIBC__
#include <malloc.h>
#endif

int main(int argc, char **argv) {
    int i;
#ifdef __GLIBC__
    /* The sweeps allocate and free vectors of up to tens of MiB thousands of
       times. glibc maps the large ones afresh each time and the kernel faults
       and zeroes every page again (two thirds of sweep/alltoall's CPU on the
       2-core VM); kept in the heap, the pages are reused. */
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-v") == 0) tf_verbose = 1;
        else if (strcmp(argv[i], "-t") == 0) tf_times = 1;
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            if (sscanf(argv[++i], "%d/%d", &tf_shard, &tf_shards) != 2 || tf_shards < 1 ||
                tf_shard < 0 || tf_shard >= tf_shards) {
                fprintf(stderr, "test_runner: -s K/N with 0 <= K < N, not %s\n", argv[i]);
                return 2;
            }
        }
        else tf_filter = argv[i];
    }
    suite_core();
    suite_sim();
    suite_foundation();
    suite_shm();
    suite_pshm(); /* early: it forks, and the heap grows with the sweeps */
    suite_disagree();
    suite_mpich();
    suite_rabenseifner();
    suite_hierarchical();
    suite_elimination();
    suite_exact();
    suite_kernels();
    suite_model();
    suite_plans();
    suite_chunked();
    suite_nonblock();
    suite_nodes();
    printf("%ld passed, %ld failed\n", tf_passed, tf_failed);
    return tf_failed ? 1 : 0;
}
