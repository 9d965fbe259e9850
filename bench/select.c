/* select.c - what one AUTO decision costs (REDCOLL_SELECTOR_MODEL against the
   paper rules), per collective, at p = 1024 and sizes 8 B .. 64 MB.

   make bench-select             (p = 1024; BENCH_FLAGS=500: p = 500, where the
                                  recursive-doubling and pipeline rows are walked)

   Prints the median of 9 timed batches of 2000 calls per (collective,
   selector), interleaved batch by batch, in ns per call: the model as a
   program calling the same shapes sees it (192 shapes, cached), the model
   when every call is a new shape (each one a cache miss), the paper rules. */
#define _POSIX_C_SOURCE 199309L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    enum { BATCHES = 9, CALLS = 2000, SIZES = 24 };
    int c, k, i, j, sink = 0, P = argc > 1 ? atoi(argv[1]) : 1024;
    if (P < 8) P = 8;
    printf("p = %d .. %d\n", P - 7, P);
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c) {
        double t[3][BATCHES];
        for (k = 0; k < BATCHES; ++k)
            for (j = 0; j < 3; ++j) {
                redcoll_options o = { 0 };
                double t0;
                o.selector = j == 1 ? REDCOLL_SELECTOR_PAPERS : REDCOLL_SELECTOR_MODEL;
                t0 = now();
                for (i = 0; i < CALLS; ++i) /* j = 2: every call a new size, so every call misses */
                    sink += (int)redcoll_select((redcoll_coll)c, P - (i & 7),
                                                ((size_t)8 << (i % SIZES)) + (j == 2 ? (size_t)(k * CALLS + i) : 0),
                                                1, &o);
                t[j][k] = (now() - t0) / CALLS * 1e9;
            }
        qsort(t[0], BATCHES, sizeof(double), cmp);
        qsort(t[1], BATCHES, sizeof(double), cmp);
        qsort(t[2], BATCHES, sizeof(double), cmp);
        printf("%-22s model %6.0f ns (cache miss %6.0f ns)   papers %4.0f ns\n",
               redcoll_coll_name((redcoll_coll)c), t[0][BATCHES / 2], t[2][BATCHES / 2], t[1][BATCHES / 2]);
    }
    return sink == -1;
}
