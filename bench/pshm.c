/* pshm.c - the process-shared-memory transport against the threads
   transport, in one run: allreduce of doubles (sum, AUTO) on p threads of
   this process (transports/redcoll_shm.h) and on p processes sharing a
   segment (transports/redcoll_pshm.h), with the processes' vectors in their
   private memory (as an MPI program's) and in the segment
   (redcoll_pshm_alloc), timed interleaved. A benchmark, not a test.

   Usage: pshm [-p P] [--sizes 8,64,...] [--batches B] [--seconds S] [--no-cma]
               [--cma-min BYTES] [--cma-copy-min BYTES] [--cma-chunk BYTES]
               [--algo NAME] [--only threads|private|segment]
   Default: p = 2, 8 B .. 16 MiB by factors of 8, 7 batches of about 20 ms,
   auto (--algo forces an allreduce algorithm on both transports); --only
   times one variant (for a profiler); --no-cma, --cma-min, --cma-copy-min
   and --cma-chunk set redcoll_pshm_config's process_vm_readv fields (when
   a receiver reads private memory itself instead of the pipeline through
   cells).

   This process is rank 0 of the processes (ranks 1..p-1 are forked at the
   start and sleep in a read of a pipe between their batches: they take no
   core from the threads) and runs the threads team. Per size, each variant's calls per batch are set once from
   a short run; then B rounds time one batch of each variant, the order
   rotating; a batch starts after a barrier and counts as the slowest rank's.
   Prints the median time per call and the ratios to the threads transport
   (the ratio of the medians and the median of per-round ratios); every
   result is checked. */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_shm.h"
#include "transports/redcoll_pshm.h"

#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { V_THREADS, V_PRIVATE, V_SEGMENT, V_COUNT };
static const char *const vname[V_COUNT] = { "threads", "processes, private buffers",
                                            "processes, buffers in the segment" };

static double now_s(void) { return (double)redcoll__ho_now() * 1e-9; }

static redcoll_options g_opts; /* --algo */
static int g_only = -1;        /* --only */

/* What rank 0 asks of the processes: run `calls` allreduces of `count`
   doubles from private or segment buffers (stop: leave). */
typedef struct order { long calls; long long count; int segment, stop; } order;

/* One rank's buffers for `count` doubles, filled: x[i] = rank + i % 1000. */
typedef struct bufs { double *x, *y; size_t cap; } bufs;

static int fill(bufs *b, redcoll_pshm *h, int segment, int rank, size_t count) {
    size_t i, bytes = (count ? count : 1) * sizeof(double);
    if (h && segment) {
        b->x = (double *)redcoll_pshm_alloc(h, bytes);
        b->y = (double *)redcoll_pshm_alloc(h, bytes);
    } else {
        b->x = (double *)malloc(bytes);
        b->y = (double *)malloc(bytes);
    }
    if (!b->x || !b->y) return 0;
    for (i = 0; i < count; ++i) b->x[i] = rank + (double)(i % 1000);
    memset(b->y, 0, bytes);
    return 1;
}

static void drop(bufs *b, redcoll_pshm *h, int segment) {
    if (h && segment) { redcoll_pshm_free(h, b->x); redcoll_pshm_free(h, b->y); }
    else { free(b->x); free(b->y); }
    b->x = b->y = NULL;
}

static int right(const double *y, size_t count, int p) {
    size_t i;
    for (i = 0; i < count; ++i)
        if (y[i] != (double)p * (p - 1) / 2 + (double)p * (double)(i % 1000)) return 0;
    return 1;
}

/* n allreduces on t; this rank's seconds per call, or < 0 on an error. */
static double timed(const redcoll_transport *t, const bufs *b, size_t count, long n) {
    double t0;
    long i;
    if (redcoll_barrier(t, NULL) != REDCOLL_OK) return -1;
    t0 = now_s();
    for (i = 0; i < n; ++i)
        if (redcoll_allreduce(t, b->x, b->y, count, REDCOLL_DOUBLE, REDCOLL_SUM, &g_opts) != REDCOLL_OK) return -1;
    return (now_s() - t0) / (double)n;
}

/* The slowest rank's time (max over ranks), or < 0 if one failed; and
   whether every rank's result was right. */
static double slowest(const redcoll_transport *t, double dt, int ok, int *all_ok) {
    double v[2];
    v[0] = dt < 0 ? 1e30 : dt;
    v[1] = ok ? 0 : 1;
    if (redcoll_allreduce(t, REDCOLL_IN_PLACE, v, 2, REDCOLL_DOUBLE, REDCOLL_MAX, NULL) != REDCOLL_OK) return -1;
    if (all_ok) *all_ok = v[1] == 0;
    return v[0] >= 1e30 ? -1 : v[0];
}

/* Ranks 1..p-1: follow rank 0's orders (read from fd) until told to stop. */
static int follower(redcoll_pshm *h, int fd) {
    const redcoll_transport *t = redcoll_pshm_transport(h);
    for (;;) {
        order o;
        bufs b;
        double dt;
        int ok;
        if (read(fd, &o, sizeof o) != (ssize_t)sizeof o || o.stop) break;
        if (!fill(&b, h, o.segment, t->rank, (size_t)o.count)) return 1;
        dt = timed(t, &b, (size_t)o.count, o.calls);
        ok = right(b.y, (size_t)o.count, t->size);
        drop(&b, h, o.segment);
        if (slowest(t, dt, ok, NULL) < 0) return 1;
    }
    return 0;
}

static int *g_orders; /* write ends of the followers' pipes, [1..p-1] */

static int tell(int p, const order *o) {
    int i;
    for (i = 1; i < p; ++i)
        if (write(g_orders[i], o, sizeof *o) != (ssize_t)sizeof *o) return 0;
    return 1;
}

/* Rank 0's half of one process batch. */
static double process_batch(redcoll_pshm *h, int segment, size_t count, long calls, int *ok) {
    const redcoll_transport *t = redcoll_pshm_transport(h);
    order o;
    bufs b;
    double dt;
    memset(&o, 0, sizeof o);
    o.calls = calls; o.count = (long long)count; o.segment = segment;
    if (!tell(t->size, &o)) return -1;
    if (!fill(&b, h, segment, 0, count)) return -1;
    dt = timed(t, &b, count, calls);
    dt = slowest(t, dt, right(b.y, count, t->size), ok);
    drop(&b, h, segment);
    return dt;
}

/* The threads: a team per batch (its creation is not timed). */
typedef struct tjob { size_t count; long calls; double dt; int ok; } tjob;

static redcoll_result thread_rank(const redcoll_transport *t, void *arg) {
    tjob *j = (tjob *)arg;
    bufs b;
    double dt;
    int ok;
    if (!fill(&b, NULL, 0, t->rank, j->count)) return REDCOLL_ERR_OUT_OF_MEMORY;
    dt = timed(t, &b, j->count, j->calls);
    ok = right(b.y, j->count, t->size);
    drop(&b, NULL, 0);
    dt = slowest(t, dt, ok, &ok);
    if (t->rank == 0) { j->dt = dt; j->ok = ok; }
    return dt < 0 ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK;
}

static double thread_batch(int p, size_t count, long calls, int *ok) {
    tjob j;
    j.count = count; j.calls = calls; j.dt = -1; j.ok = 0;
    if (redcoll_shm_run(p, thread_rank, &j, NULL) != REDCOLL_OK) return -1;
    *ok = j.ok;
    return j.dt;
}

static double run_batch(int v, redcoll_pshm *h, int p, size_t count, long calls, int *ok) {
    if (v == V_THREADS) return thread_batch(p, count, calls, ok);
    return process_batch(h, v == V_SEGMENT, count, calls, ok);
}

int main(int argc, char **argv) {
    size_t sizes[32];
    int nsizes = 0, batches = 7, p = 2, i, si, bad = 0, no_cma = 0, st;
    size_t cma_min = 0, cma_copy_min = 0, cma_chunk = 0;
    double seconds = 0.02;
    redcoll_pshm_config cfg;
    redcoll_pshm *h;
    pid_t *kids;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) p = atoi(argv[++i]);
        else if (bench_timing_option(argc, argv, &i, sizes, &nsizes, &batches, &seconds)) continue;
        else if (strcmp(argv[i], "--no-cma") == 0) no_cma = 1;
        else if ((strcmp(argv[i], "--cma-min") == 0 || strcmp(argv[i], "--cma-copy-min") == 0 ||
                  strcmp(argv[i], "--cma-chunk") == 0) && i + 1 < argc) {
            size_t one[1] = { 0 };
            const char *flag = argv[i];
            if (bench_parse_sizes(argv[++i], one, 1) != 1) one[0] = 0;
            *(strcmp(flag, "--cma-min") == 0 ? &cma_min : strcmp(flag, "--cma-chunk") == 0 ? &cma_chunk
                                                                                           : &cma_copy_min) = one[0];
        }
        else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc && redcoll_algo_from_name(argv[i + 1], &g_opts.algo)) ++i;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            g_only = strcmp(v, "threads") == 0 ? V_THREADS : strcmp(v, "private") == 0 ? V_PRIVATE
                   : strcmp(v, "segment") == 0 ? V_SEGMENT : -2;
            if (g_only == -2) { fprintf(stderr, "pshm: --only threads, private or segment\n"); return 2; }
        }
        else {
            fprintf(stderr, "usage: %s [-p P] [--sizes LIST] [--batches B] [--seconds S] [--no-cma]"
                            " [--cma-min BYTES] [--cma-copy-min BYTES] [--cma-chunk BYTES] [--algo NAME]"
                            " [--only VARIANT]\n", argv[0]);
            return 2;
        }
    }
    if (p < 2 || batches < 1) { fprintf(stderr, "pshm: -p 2 or more, --batches 1 or more\n"); return 2; }
    if (!nsizes) nsizes = bench_sizes_by_8(sizes, (size_t)16 << 20);
    memset(&cfg, 0, sizeof cfg);
    cfg.arena_bytes = 3 * sizes[nsizes - 1] + ((size_t)1 << 20); /* x, y and the scratch */
    cfg.no_cma = no_cma;
    cfg.cma_min_bytes = cma_min;
    cfg.cma_copy_min_bytes = cma_copy_min;
    cfg.cma_chunk_bytes = cma_chunk;
    if (redcoll_pshm_create(&cfg, p, &h) != REDCOLL_OK) {
        fprintf(stderr, "pshm: %s\n", redcoll_pshm_last_error());
        return 1;
    }
    kids = (pid_t *)calloc((size_t)p, sizeof *kids);
    g_orders = (int *)calloc((size_t)p, sizeof *g_orders);
    fflush(NULL);
    for (i = 1; i < p; ++i) {
        int fds[2];
        if (pipe(fds) != 0) return 1;
        if ((kids[i] = fork()) == 0) {
            int r;
            close(fds[1]);
            r = redcoll_pshm_attach(h, i) != REDCOLL_OK || follower(h, fds[0]);
            redcoll_pshm_destroy(h);
            _exit(r);
        }
        close(fds[0]);
        g_orders[i] = fds[1];
    }
    if (redcoll_pshm_attach(h, 0) != REDCOLL_OK) { fprintf(stderr, "pshm: %s\n", redcoll_pshm_last_error()); return 1; }
    bench_print_loadavg("pshm");
    printf("# allreduce of doubles (sum, %s), p=%d: threads of one process against processes sharing a\n"
           "# segment (process_vm_readv %s); median of %d interleaved batches of about %.0f ms\n"
           "# (the slowest rank's), time per call; ratios: the processes' median over the threads'\n#\n",
           redcoll_algo_name(g_opts.algo), p, no_cma ? "off: cells only"
           : cma_min || cma_copy_min || cma_chunk ? "where the kernel allows, thresholds from the flags"
           : "where the kernel allows: from 16 KiB, reductions by 128 KiB chunks, copies from 4 MiB",
           batches, seconds * 1e3);
    printf("| size | %s | %s | %s | private / threads | segment / threads |\n|---|---|---|---|---|---|\n",
           vname[0], vname[1], vname[2]);
    for (si = 0; si < nsizes; ++si) {
        size_t count = sizes[si] / 8;
        double *t = (double *)calloc((size_t)(V_COUNT * batches), sizeof(double)), med[V_COUNT], cell;
        long calls[V_COUNT];
        int v, b, ok = 1;
        char hname[32];
        if (!t) return 1;
        for (v = 0; v < V_COUNT; ++v) { /* calls per batch from a short run */
            long n = 1;
            if (g_only >= 0 && v != g_only) { calls[v] = 0; continue; }
            for (;;) {
                double dt = run_batch(v, h, p, count, n, &ok);
                if (dt < 0) { fprintf(stderr, "pshm: %s failed\n", vname[v]); return 1; }
                if (dt * (double)n >= seconds / 8 || n >= (1L << 22)) {
                    calls[v] = (long)(seconds / dt) + 1;
                    break;
                }
                n *= 4;
            }
        }
        for (b = 0; b < batches; ++b)
            for (v = 0; v < V_COUNT; ++v) {
                int w = (v + b) % V_COUNT, okb = 0;
                if (!calls[w]) continue;
                t[w * batches + b] = run_batch(w, h, p, count, calls[w], &okb);
                if (t[w * batches + b] < 0 || !okb) bad = 1;
            }
        for (v = 0; v < V_COUNT; ++v) med[v] = bench_median(t + v * batches, batches);
        snprintf(hname, sizeof hname, sizes[si] >= (1 << 20) ? "%zu MB" : sizes[si] >= 1024 ? "%zu KB" : "%zu B",
                 sizes[si] >= (1 << 20) ? sizes[si] >> 20 : sizes[si] >= 1024 ? sizes[si] >> 10 : sizes[si]);
        printf("| %s |", hname);
        for (v = 0; v < V_COUNT; ++v) {
            cell = med[v] * 1e6;
            printf(cell >= 1000 ? " %.0f us |" : " %.2f us |", cell);
        }
        printf(" %.2f | %.2f |\n", med[V_PRIVATE] / med[V_THREADS], med[V_SEGMENT] / med[V_THREADS]);
        fflush(stdout);
        free(t);
    }
    {
        order o;
        memset(&o, 0, sizeof o);
        o.stop = 1;
        tell(p, &o);
    }
    for (i = 1; i < p; ++i) {
        waitpid(kids[i], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    redcoll_pshm_destroy(h);
    free(kids);
    printf("#\n# %s\n", bad ? "ERRORS OR WRONG RESULTS" : "every result checked and right");
    return bad;
}
