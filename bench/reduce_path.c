/* reduce_path.c - redcoll_reduce of doubles (sum, root 0) on the threads
   transport at p = 2, 1 KB / 1 MB / 8 MB, AUTO and three forced schedules,
   interleaved in 7 batches; prints rank 0's median time per call. It times
   reduce's data path (no copy of the input up front), which bench/datapath
   (allreduce only) does not cover; compare two builds by running their
   binaries in turn.
     cc -std=c11 -O2 -I. bench/reduce_path.c -o build/reduce_path -lpthread -lm */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_shm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static const size_t sizes[] = { 1024, 1 << 20, 8 << 20 };
static const redcoll_algo algos[] = { REDCOLL_ALGO_AUTO, REDCOLL_ALGO_HALVING_DOUBLING, REDCOLL_ALGO_BUTTERFLY, REDCOLL_ALGO_RING };
#define NB 7
static double res[3][4][NB];
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
static redcoll_result rank_fn(const redcoll_transport *t, void *arg) {
    size_t si, n; int ai, b, k;
    (void)arg;
    for (si = 0; si < 3; ++si) {
        double *in, *out; long calls;
        n = sizes[si] / 8;
        in = malloc(n * 8); out = malloc(n * 8);
        for (k = 0; k < (int)n; ++k) in[k] = (double)(t->rank + 1) * (k % 64 + 1);
        calls = sizes[si] <= 1024 ? 20000 : sizes[si] <= (1 << 20) ? 200 : 25;
        for (b = 0; b < NB; ++b)
            for (ai = 0; ai < 4; ++ai) {
                redcoll_options o; double t0; long c;
                memset(&o, 0, sizeof o); o.algo = algos[ai];
                redcoll_barrier(t, NULL);
                redcoll_reduce(t, in, out, n, REDCOLL_DOUBLE, redcoll_op_predefined(REDCOLL_OP_SUM), 0, &o);
                redcoll_barrier(t, NULL);
                t0 = now();
                for (c = 0; c < calls; ++c)
                    if (redcoll_reduce(t, in, out, n, REDCOLL_DOUBLE, redcoll_op_predefined(REDCOLL_OP_SUM), 0, &o)) return REDCOLL_ERR_TRANSPORT;
                redcoll_barrier(t, NULL);
                if (t->rank == 0) res[si][ai][b] = (now() - t0) / calls;
            }
        if (t->rank == 0 && out[5] != 3.0 * 6) fprintf(stderr, "wrong\n");
        free(in); free(out);
    }
    return REDCOLL_OK;
}
int main(void) {
    int si, ai;
    if (redcoll_shm_run(2, rank_fn, NULL, NULL) != REDCOLL_OK) { fprintf(stderr, "run failed\n"); return 1; }
    for (si = 0; si < 3; ++si) {
        printf("%8zu B", sizes[si]);
        for (ai = 0; ai < 4; ++ai) {
            qsort(res[si][ai], NB, sizeof(double), cmp);
            printf("  %s %9.3f us", ai == 0 ? "auto" : redcoll_algo_name(algos[ai]), res[si][ai][NB / 2] * 1e6);
        }
        printf("\n");
    }
    return 0;
}
