/* exact_sum.c - what the reproducible sum costs: allreduce with
   REDCOLL_SUM_EXACT against the ordinary REDCOLL_SUM on the same doubles, in
   the same run, for 8 B .. 8 MiB per rank.

   Data: x = +-(1 + f) 2^e with e uniform in [-32, 31] (a field spanning 64
   binades: max|x| / min|x| <= 2^64), different on every rank.

   Threads: p ranks on the shared-memory transport; for every size, batches of
   ordinary and exact calls alternate (sized to about --seconds / 20 each),
   each timed by rank 0 between barriers; reported: the median wall time per
   call of each and the median of the per-pair ratios exact / ordinary; and
   the same for CPU time (thread CPU clocks summed over the ranks), which a
   busy machine disturbs less than wall time (a rank that waits for a
   descheduled peer yields its core and spends no CPU).
   Model: the simulator (default alpha, beta, gamma; p ranks, the same data):
   modeled times, their ratio, and bytes sent per element by rank 0.

   --float: the same with floats (x rounded to float), bytes still per rank.
   --model-only: the simulator's columns alone (any p, no threads).
   --pin: rank r's thread runs on CPU r only (mod the CPUs online), so that
   the ranks have a core each when the machine has them, or share one on
   purpose with --pin-one (every rank on CPU 0): the regime stays the same
   through a run instead of following the scheduler (Linux only).

   Usage: exact_sum [-p P] [--seconds S] [--min-bytes N] [--max-bytes N] [--float] [--model-only]
                    [--pin | --pin-one]
          (make bench-exact); sizes 8 B times powers of 4, from --min-bytes on
   Exits 1 if an exact result differs between ranks or a call fails. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "transports/redcoll_shm.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NPAIRS 9

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int pin = -1; /* --pin: 1, --pin-one: 0; -1: the scheduler's choice */

/* Pins the calling thread (rank `rank`) as --pin / --pin-one asked. */
static void pin_rank(int rank) {
#ifdef __linux__
    cpu_set_t set;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (pin < 0) return;
    CPU_ZERO(&set);
    CPU_SET(pin ? (int)(rank % (cpus > 0 ? cpus : 1)) : 0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) perror("exact_sum: sched_setaffinity");
#else
    (void)rank;
#endif
}

static uint64_t mix(uint64_t x) {
    x ^= x >> 31; x *= 0x7fb5d329728ea185ULL; x ^= x >> 27; x *= 0x81dadef4bc2dd44dULL;
    return x ^ (x >> 33);
}

static redcoll_dtype dtype = REDCOLL_DOUBLE; /* --float: REDCOLL_FLOAT */
static size_t esize = 8;

static void fill(void *x, size_t n, int rank) {
    size_t i;
    for (i = 0; i < n; ++i) {
        uint64_t h = mix((uint64_t)rank << 40 ^ i);
        double f = 1.0 + (double)(h >> 12 & 0xfffff) / 1048576.0, v = ldexp(h & 1 ? -f : f, (int)(h >> 1 & 63) - 32);
        if (esize == 8) ((double *)x)[i] = v;
        else ((float *)x)[i] = (float)v;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct job {
    size_t  count;
    double  budget;          /* seconds per batch */
    double  t_sum[NPAIRS], t_exact[NPAIRS];
    double  c_sum[NPAIRS], c_exact[NPAIRS]; /* CPU seconds per call, summed over ranks */
    char   *first;           /* rank 0's exact result, compared by the others */
    double *cpu;             /* per rank: NPAIRS CPU seconds per ordinary call, then exact */
    int     differs;
    redcoll_result err;
} job;

/* One timed batch: wall seconds per call (rank 0's view) and this rank's
   CPU seconds per call, added into *cpu_sum under the caller's lock-free
   discipline: ranks write their own slot. */
static redcoll_result run_batch(const redcoll_transport *t, const void *x, void *y, size_t n,
                                redcoll_op op, int calls, double *seconds, double *cpu) {
    redcoll_result r = redcoll_barrier(t, NULL);
    double t0 = now(), c0 = cpu_now();
    int k;
    for (k = 0; k < calls && r == REDCOLL_OK; ++k)
        r = redcoll_allreduce(t, x, y, n, dtype, op, NULL);
    *cpu = (cpu_now() - c0) / calls;
    if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
    *seconds = (now() - t0) / calls;
    return r;
}

static redcoll_result bench_rank(const redcoll_transport *t, void *arg) {
    job *j = (job *)arg;
    size_t n = j->count;
    char *x = (char *)malloc(n * esize), *y = (char *)malloc(n * esize);
    double dt = 0, dc = 0;
    double *mycpu = j->cpu + (size_t)t->rank * 2 * NPAIRS; /* this rank's CPU per call: sum, exact */
    int32_t calls = 1;
    int k;
    redcoll_result r;
    if (!x || !y) { free(x); free(y); return REDCOLL_ERR_OUT_OF_MEMORY; }
    pin_rank(t->rank);
    fill(x, n, t->rank);
    r = redcoll_allreduce(t, x, y, n, dtype, REDCOLL_SUM_EXACT, NULL); /* warm up */
    if (r == REDCOLL_OK) r = redcoll_allreduce(t, x, y, n, dtype, REDCOLL_SUM, NULL);
    while (r == REDCOLL_OK) { /* size the batches on the ordinary sum: rank 0 decides */
        int32_t go;
        r = run_batch(t, x, y, n, REDCOLL_SUM, calls, &dt, &dc);
        go = dt * calls < j->budget && calls < (1 << 20);
        if (r == REDCOLL_OK) r = redcoll_bcast(t, &go, 1, REDCOLL_INT32, 0, NULL);
        if (r != REDCOLL_OK || !go) break;
        calls *= 2;
    }
    for (k = 0; k < NPAIRS && r == REDCOLL_OK; ++k) {
        double a = 0, b = 0;
        r = run_batch(t, x, y, n, REDCOLL_SUM, calls, &a, &mycpu[k]);
        if (r == REDCOLL_OK) r = run_batch(t, x, y, n, REDCOLL_SUM_EXACT, calls, &b, &mycpu[NPAIRS + k]);
        if (t->rank == 0) { j->t_sum[k] = a; j->t_exact[k] = b; }
    }
    /* every rank holds the same bits: rank 0 publishes, the others compare */
    if (t->rank == 0 && r == REDCOLL_OK) memcpy(j->first, y, n * esize);
    if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
    if (t->rank != 0 && r == REDCOLL_OK && memcmp(j->first, y, n * esize) != 0) j->differs = 1;
    if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
    free(x);
    free(y);
    return r;
}

/* The simulator: modeled time and rank 0's bytes sent for one op. */
typedef struct model_job { size_t count; redcoll_op op; } model_job;

static redcoll_result model_rank(const redcoll_transport *t, void *arg) {
    model_job *m = (model_job *)arg;
    char *x = (char *)malloc(m->count * esize), *y = (char *)malloc(m->count * esize);
    redcoll_result r;
    if (!x || !y) { free(x); free(y); return REDCOLL_ERR_OUT_OF_MEMORY; }
    fill(x, m->count, t->rank);
    r = redcoll_allreduce(t, x, y, m->count, dtype, m->op, NULL);
    free(x);
    free(y);
    return r;
}

static int model(int p, size_t count, redcoll_op op, double *time, double *bytes_per_elem) {
    redcoll_mock_config cfg = redcoll_mock_defaults(p);
    redcoll_mock_report rep;
    model_job m;
    int ok;
    m.count = count;
    m.op = op;
    ok = redcoll_mock_run(&cfg, model_rank, &m, &rep) == REDCOLL_OK &&
         redcoll_mock_first_error(&rep) == REDCOLL_OK;
    *time = rep.time;
    *bytes_per_elem = (double)rep.stats[0].bytes_sent / (double)count;
    redcoll_mock_report_free(&rep);
    return ok;
}

int main(int argc, char **argv) {
    static const char usage[] = "usage: exact_sum [-p P] [--seconds S] [--min-bytes N] [--max-bytes N] [--float] [--model-only] [--pin | --pin-one]\n";
    int p = 2, i, bad = 0, model_only = 0;
    double seconds = 0.5;
    size_t min_bytes = 8, max_bytes = (size_t)8 << 20, bytes;
    for (i = 1; i < argc; i += 2) {
        if (strcmp(argv[i], "--float") == 0) { dtype = REDCOLL_FLOAT; esize = 4; --i; continue; }
        if (strcmp(argv[i], "--model-only") == 0) { model_only = 1; --i; continue; }
        if (strcmp(argv[i], "--pin") == 0) { pin = 1; --i; continue; }
        if (strcmp(argv[i], "--pin-one") == 0) { pin = 0; --i; continue; }
        if (i + 1 == argc) { fputs(usage, stderr); return 2; }
        if (strcmp(argv[i], "-p") == 0) p = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--min-bytes") == 0) min_bytes = (size_t)atoll(argv[i + 1]);
        else if (strcmp(argv[i], "--max-bytes") == 0) max_bytes = (size_t)atoll(argv[i + 1]);
        else { fputs(usage, stderr); return 2; }
    }
    if (p < 1 || seconds <= 0) { fprintf(stderr, "exact_sum: bad -p or --seconds\n"); return 2; }
    printf("# allreduce of %s spanning 64 binades, p = %d: REDCOLL_SUM_EXACT / REDCOLL_SUM\n",
           esize == 8 ? "doubles" : "floats", p);
    printf("# threads: medians of %d interleaved batches; model: simulator, default alpha beta gamma\n", NPAIRS);
    printf("%10s %9s | %10s %10s %6s | %10s %10s %6s | %10s %10s %6s | %6s %6s\n", "bytes", "count",
           "wall sum", "wall exact", "ratio", "cpu sum", "cpu exact", "ratio", "model sum",
           "mod. exact", "ratio", "B/el", "B/el x");
    printf("%10s %9s | %10s %10s %6s | %10s %10s %6s | %10s %10s %6s | %6s %6s\n", "", "", "us", "us", "",
           "us", "us", "", "us", "us", "", "sum", "exact");
    for (bytes = 8; bytes <= max_bytes; bytes *= 4) {
        size_t count = bytes / esize;
        job j;
        double ratios[NPAIRS], cratios[NPAIRS], cs[NPAIRS], ce[NPAIRS], ts, te, ms = 0, me = 0, bs = 0, be = 0;
        redcoll_result r;
        int k, mok;
        if (bytes < min_bytes) continue;
        memset(&j, 0, sizeof j);
        j.count = count;
        j.budget = seconds / (2 * NPAIRS + 2);
        j.first = (char *)malloc(count * esize);
        j.cpu = (double *)calloc((size_t)p * 2 * NPAIRS, sizeof(double));
        if (!j.first || !j.cpu) return 1;
        r = model_only ? REDCOLL_OK : redcoll_shm_run(p, bench_rank, &j, NULL);
        for (k = 0; k < NPAIRS; ++k) {
            int q;
            cs[k] = ce[k] = 0;
            for (q = 0; q < p; ++q) { cs[k] += j.cpu[(size_t)q * 2 * NPAIRS + (size_t)k]; ce[k] += j.cpu[(size_t)q * 2 * NPAIRS + NPAIRS + (size_t)k]; }
            ratios[k] = model_only ? 0 : j.t_exact[k] / j.t_sum[k];
            cratios[k] = model_only ? 0 : ce[k] / cs[k];
        }
        ts = median(j.t_sum, NPAIRS);
        te = median(j.t_exact, NPAIRS);
        mok = model(p, count, REDCOLL_SUM, &ms, &bs) && model(p, count, REDCOLL_SUM_EXACT, &me, &be);
        printf("%10zu %9zu | %10.1f %10.1f %6.2f | %10.1f %10.1f %6.2f | %10.1f %10.1f %6.2f | %6.2f %6.2f%s\n",
               bytes, count, ts * 1e6, te * 1e6, median(ratios, NPAIRS), median(cs, NPAIRS) * 1e6,
               median(ce, NPAIRS) * 1e6, median(cratios, NPAIRS), ms * 1e6, me * 1e6, me / ms, bs, be,
               r != REDCOLL_OK || !mok ? "  FAILED" : j.differs ? "  RANKS DIFFER" : "");
        bad |= r != REDCOLL_OK || !mok || j.differs;
        free(j.first);
        free(j.cpu);
    }
    return bad;
}
