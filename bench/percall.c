/* percall.c - the library's own cost per one-shot call: redcoll_allreduce
   (and a few other collectives) of 8 bytes over a transport that only
   copies, as rank 0 of p = 2, so what is timed is setup, selection, the
   tag and the schedule's bookkeeping, not a transport.

   make bench-percall     (or: cc -std=c11 -O2 -I. bench/percall.c -o build/percall -lm)

   Prints, per case, the median over 15 batches of 200000 calls (ns per
   call). The program uses only the public API, so the same file builds
   against an older redcoll.h: compare two builds by running their binaries
   in turn (docs/benchmarks.md, "The library's per-call path"). */
#define _POSIX_C_SOURCE 199309L
#define REDCOLL_IMPLEMENTATION
#define REDCOLL_STATIC
#include "redcoll.h"
#include "bench/bench.h"

#include <time.h>

/* The peer's half of every exchange: a send goes nowhere, a receive reads
   zeros, a sendrecv reads back what it sent. */
static redcoll_result copy_send(void *u, int peer, const void *b, size_t n, int tag) {
    (void)u; (void)peer; (void)b; (void)n; (void)tag;
    return REDCOLL_OK;
}
static redcoll_result copy_recv(void *u, int peer, void *b, size_t n, int tag) {
    (void)u; (void)peer; (void)tag;
    memset(b, 0, n);
    return REDCOLL_OK;
}
static redcoll_result copy_sendrecv(void *u, int dst, const void *sb, size_t sn, int src,
                                    void *rb, size_t rn, int tag) {
    (void)u; (void)dst; (void)src; (void)tag;
    memcpy(rb, sb, rn < sn ? rn : sn);
    return REDCOLL_OK;
}
static void copy_abort(void *u, redcoll_result why) { (void)u; (void)why; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { CASES = 5, BATCHES = 15 };
static const char *const names[CASES] = {
    "allreduce 8 B, NULL options", "allreduce 8 B, options set", "reduce 8 B, root 0",
    "bcast 8 B, root 0", "allreduce 8 B, p = 1"
};

int main(int argc, char **argv) {
    redcoll_transport t, t1;
    redcoll_options o = { 0 };
    double x = 1, y = 0, res[CASES][BATCHES];
    long calls = argc > 1 ? atol(argv[1]) : 200000, i;
    int c, k, bad = 0;
    memset(&t, 0, sizeof t);
    t.rank = 0; t.size = 2;
    t.send = copy_send; t.recv = copy_recv; t.sendrecv = copy_sendrecv; t.abort = copy_abort;
    t1 = t;
    t1.size = 1;
    o.segment_bytes = 4096; /* any option set: the path that reads a caller's struct */
    for (k = 0; k < BATCHES; ++k)
        for (c = 0; c < CASES; ++c) {
            double t0 = now();
            for (i = 0; i < calls; ++i) {
                redcoll_result r;
                switch (c) {
                case 0: r = redcoll_allreduce(&t, &x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM, NULL); break;
                case 1: r = redcoll_allreduce(&t, &x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM, &o); break;
                case 2: r = redcoll_reduce(&t, &x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM, 0, NULL); break;
                case 3: r = redcoll_bcast(&t, &y, 1, REDCOLL_DOUBLE, 0, NULL); break;
                default: r = redcoll_allreduce(&t1, &x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM, NULL); break;
                }
                bad |= r != REDCOLL_OK;
            }
            res[c][k] = (now() - t0) / (double)calls * 1e9;
        }
    for (c = 0; c < CASES; ++c) {
        qsort(res[c], BATCHES, sizeof(double), bench_cmp_double);
        printf("%-30s %6.1f ns per call (q1 %.1f, q3 %.1f)\n", names[c], res[c][BATCHES / 2],
               res[c][BATCHES / 4], res[c][3 * BATCHES / 4]);
    }
    if (bad) printf("a call failed\n");
    return bad;
}
