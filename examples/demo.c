/* demo.c - what it shows: the main job on real threads. Allreduce of a few
   vector sizes across a team of threads (the shared-memory transport), with
   every allreduce algorithm the library has, side by side: time per call,
   algorithm and bus bandwidth (nccl-tests' columns; busbw = algbw * 2(p-1)/p),
   which algorithm the selector would pick, and a check of every result.
   `make demo` runs it; needs only a C11 compiler and pthreads.

   Usage: demo [-p threads] [--max-bytes N] [--seconds S]
     -p N           threads (ranks), default 4
     --max-bytes N  largest vector in bytes, default 4 MiB (sizes grow x16 from 64 B)
     --seconds S    time budget per (size, algorithm): sizing, then 5 timed batches
                    of about S/5 each, reported as the median; default 0.1
   Exits 1 if any result is wrong or any call fails. */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_shm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One measurement: every rank runs allreduces of `count` doubles with
   `algo` for about twice `budget` seconds; rank 0 times them, and every
   rank checks its last result element by element. */
typedef struct bench {
    redcoll_algo algo;
    size_t       count;
    double       budget;   /* seconds */
    int          iters;    /* timed calls */
    double       seconds;  /* per call, rank 0 */
    int          wrong;    /* elements wrong, summed over ranks after the join */
    redcoll_result err;
    int         *wrong_by_rank; /* each rank counts its own */
} bench;

/* x_r[i] = (r + 1) * (i % 64 + 1): every partial sum is a small integer, so
   the sum is exact in double in any order and the check can be exact. */
static double input(int r, size_t i) { return (double)(r + 1) * (double)(i % 64 + 1); }

static redcoll_result bench_rank(const redcoll_transport *t, void *arg) {
    bench *b = (bench *)arg;
    size_t n = b->count, i;
    int p = t->size, k, batch, iters = 0, nsamples = 0;
    double *x = (double *)malloc((n ? n : 1) * sizeof *x), *y = (double *)malloc((n ? n : 1) * sizeof *y);
    double t0 = 0, sample[5], want_scale = (double)p * (p + 1) / 2;
    redcoll_options o;
    redcoll_result r = REDCOLL_OK;
    int32_t go[1];
    if (!x || !y) { free(x); free(y); return REDCOLL_ERR_OUT_OF_MEMORY; }
    memset(&o, 0, sizeof o);
    o.algo = b->algo;
    for (i = 0; i < n; ++i) x[i] = input(t->rank, i);
    /* one warm-up call; batches of 1, 2, 4, ... calls until one lasts a
       fifth of the budget; then five batches of that size, each timed by
       rank 0 between barriers: the median is robust to a busy machine */
    r = redcoll_allreduce(t, x, y, n, REDCOLL_DOUBLE, REDCOLL_SUM, &o);
    for (batch = 1, go[0] = 1; go[0] && r == REDCOLL_OK;) {
        double dt = 0;
        if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
        if (t->rank == 0) t0 = now();
        for (k = 0; k < go[0] && r == REDCOLL_OK; ++k)
            r = redcoll_allreduce(t, x, y, n, REDCOLL_DOUBLE, REDCOLL_SUM, &o);
        if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
        if (t->rank == 0) {
            dt = now() - t0;
            if (nsamples == 0 && dt < b->budget / 5 && batch < 65536) batch *= 2; /* still sizing */
            else { sample[nsamples++] = dt / batch; iters += batch; }
            go[0] = nsamples < 5 ? batch : 0;
        }
        if (r == REDCOLL_OK) r = redcoll_bcast(t, go, 1, REDCOLL_INT32, 0, NULL);
    }
    if (t->rank == 0 && nsamples == 5) { /* the median of five */
        int u, v;
        for (u = 0; u < 5; ++u)
            for (v = u + 1; v < 5; ++v)
                if (sample[v] < sample[u]) { double w = sample[u]; sample[u] = sample[v]; sample[v] = w; }
        b->seconds = sample[2];
        b->iters = iters;
    }
    for (i = 0; r == REDCOLL_OK && i < n; ++i)
        b->wrong_by_rank[t->rank] += y[i] != want_scale * (double)(i % 64 + 1);
    free(x);
    free(y);
    return r;
}

static void human(char *out, size_t cap, size_t bytes) {
    if (bytes >= (1u << 20)) snprintf(out, cap, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024) snprintf(out, cap, "%zu KiB", bytes >> 10);
    else snprintf(out, cap, "%zu B", bytes);
}

int main(int argc, char **argv) {
    int p = 4, i, failures = 0, checked = 0;
    size_t max_bytes = (size_t)4 << 20, bytes;
    double budget = 0.1;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) p = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-bytes") == 0 && i + 1 < argc) max_bytes = (size_t)atoll(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) budget = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-p threads] [--max-bytes N] [--seconds S]\n", argv[0]);
            return 2;
        }
    }
    if (p < 1 || max_bytes < 8 || budget <= 0) { fprintf(stderr, "bad arguments\n"); return 2; }

    printf("redcoll %s demo: allreduce (double, sum) across %d threads, shared-memory transport\n",
           REDCOLL_VERSION_STRING, p);
    printf("busbw = algbw * 2(p-1)/p (nccl-tests); '*' marks the selector's choice; "
           "#wrong counts wrong elements over all ranks\n\n");
    printf("%10s %10s  %-26s %12s %10s %10s %7s %7s\n", "size", "count", "algorithm", "time/call(us)",
           "algbw(GB/s)", "busbw(GB/s)", "#wrong", "iters");
    for (bytes = 64; bytes <= max_bytes; bytes *= 16) {
        size_t count = bytes / sizeof(double);
        redcoll_algo pick = redcoll_select(REDCOLL_COLL_ALLREDUCE, p, bytes, 1, NULL);
        char size[32];
        int a;
        human(size, sizeof size, bytes);
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
            bench b;
            redcoll_result r;
            int k;
            if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)a)) continue;
            memset(&b, 0, sizeof b);
            b.algo = (redcoll_algo)a;
            b.count = count;
            b.budget = budget;
            b.wrong_by_rank = (int *)calloc((size_t)p, sizeof(int));
            if (!b.wrong_by_rank) return 1;
            r = redcoll_shm_run(p, bench_rank, &b, NULL);
            for (k = 0; k < p; ++k) b.wrong += b.wrong_by_rank[k];
            free(b.wrong_by_rank);
            ++checked;
            if (r != REDCOLL_OK) {
                printf("%10s %10zu %c%-26s failed: %s\n", size, count, a == (int)pick ? '*' : ' ',
                       redcoll_algo_name((redcoll_algo)a), redcoll_result_string(r));
                ++failures;
                continue;
            }
            failures += b.wrong != 0;
            {
                double algbw = (double)bytes / b.seconds / 1e9;
                double busbw = algbw * (p > 1 ? 2.0 * (p - 1) / p : 0.0);
                printf("%10s %10zu %c%-26s %12.2f %10.3f %10.3f %7d %7d\n", size, count,
                       a == (int)pick ? '*' : ' ', redcoll_algo_name((redcoll_algo)a),
                       b.seconds * 1e6, algbw, busbw, b.wrong, b.iters);
            }
        }
        printf("%10s %10s  selector picks %s\n\n", "", "", redcoll_algo_name(pick));
        fflush(stdout);
    }
    printf("%d measurements, %d with a wrong result or an error: %s\n", checked, failures,
           failures ? "FAILED" : "every result checked and right");
    return failures ? 1 : 0;
}
