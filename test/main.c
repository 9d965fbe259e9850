/* main.c - the redcoll test runner: one translation unit with every suite.

   Usage: test_runner [-v] [FILTER]   runs the tests whose name contains FILTER.
   The last line is "N passed, N failed"; the exit status is 1 on any failure. */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"
#include "test.h"

#include "test_core.c"
#include "test_sim.c"
#include "test_foundation.c"
#include "test_shm.c"
#include "test_mpich.c"
#include "test_rabenseifner.c"
#include "test_hierarchical.c"
#include "test_elimination.c"
#include "test_exact.c"
#include "test_kernels.c"
#include "test_model.c"
#include "test_plans.c"
#include "test_chunked.c"

int main(int argc, char **argv) {
    int i;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-v") == 0) tf_verbose = 1;
        else tf_filter = argv[i];
    }
    suite_core();
    suite_sim();
    suite_foundation();
    suite_shm();
    suite_mpich();
    suite_rabenseifner();
    suite_hierarchical();
    suite_elimination();
    suite_exact();
    suite_kernels();
    suite_model();
    suite_plans();
    suite_chunked();
    printf("%ld passed, %ld failed\n", tf_passed, tf_failed);
    return tf_failed ? 1 : 0;
}
