/* overlap.c - how much of a non-blocking allreduce hides behind computation,
   measured as the OSU micro-benchmarks do it (osu_iallreduce), and what the
   non-blocking form costs when waited on at once.

   Per size, interleaved in one run (every iteration does each in turn, after
   a barrier): the blocking redcoll_allreduce (t_block); redcoll_iallreduce
   waited on at once (t_pure, osu's "pure" time); computation alone lasting
   about t_pure (t_comp); and start + the same computation, calling
   redcoll_test every --test-us microseconds of it, + wait (t_total). Then

       overlap = max(0, 100 (1 - (t_total - t_comp) / t_pure))  %

   the part of the collective hidden behind the computation, and
   t_pure / t_block, the cost of the non-blocking form waited on at once.
   Medians over the iterations, rank 0's clock. The computation is a chain
   of floating-point operations in registers (no memory traffic), so it
   competes with the collective for the core, not for memory bandwidth.

   Threads (default): p ranks on threads of this process (redcoll_shm.h).
   Built with -DOVERLAP_MPI (build/overlap_mpi): the MPI transport, under
   mpiexec. Usage: overlap [-p P] [--sizes 8,1K,...] [--iters N]
   [--test-us U] (make bench-overlap runs both at p = 2). The last column
   is the process's minor page faults per timed iteration (all four runs):
   0 once the requests' blocks and scratch are reused. */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#ifdef OVERLAP_MPI
#include "transports/redcoll_mpi.h"
#else
#include "transports/redcoll_shm.h"
#endif
#include "bench.h"

#include <math.h>
#include <time.h>

static size_t o_sizes[32];
static int o_nsizes, o_iters = 31, o_p = 2;
static double o_test_us = 50;
static double o_spin_per_us; /* compute steps per microsecond */

static double o_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* `steps` dependent multiply-adds; x passes through memory each step, so
   the compiler can neither drop nor batch them. */
static double o_spin(long steps) {
    volatile double x = 1.0;
    long i;
    for (i = 0; i < steps; ++i) x = x * (1.0 - 1e-7) + 1e-7;
    return x;
}

static void o_calibrate(void) {
    long steps = 1 << 20;
    double t0 = o_now(), t;
    o_spin(steps);
    t = o_now() - t0;
    o_spin_per_us = (double)steps / (t * 1e6);
}

/* Computation of `us` microseconds in slices of o_test_us, calling
   redcoll_test on req (when given) between slices. */
static void o_compute(double us, redcoll_coll_request *req) {
    long slice = (long)(o_test_us * o_spin_per_us), left = (long)(us * o_spin_per_us);
    int done = 0;
    while (left > 0) {
        long now = left < slice ? left : slice;
        o_spin(now);
        left -= now;
        if (req && !done) redcoll_test(req, &done);
    }
}

typedef struct o_row {
    size_t bytes;
    double block, pure, comp, total, faults;
} o_row;

static int o_run(const redcoll_transport *t, o_row *rows) {
    int si, it, err = 0;
    for (si = 0; si < o_nsizes; ++si) {
        size_t n = o_sizes[si] / 8, i;
        double *x = (double *)malloc(n * sizeof *x), *y = (double *)malloc(n * sizeof *y);
        double *tb = (double *)malloc(sizeof(double) * (size_t)o_iters), *tp = (double *)malloc(sizeof(double) * (size_t)o_iters);
        double *tc = (double *)malloc(sizeof(double) * (size_t)o_iters), *tt = (double *)malloc(sizeof(double) * (size_t)o_iters);
        double pure = 0;
        long faults = 0;
        if (!x || !y || !tb || !tp || !tc || !tt) return 1;
        for (i = 0; i < n; ++i) x[i] = (double)(t->rank + 1) * (double)(i % 7);
        for (it = -3; it < o_iters; ++it) { /* 3 warm-up rounds */
            redcoll_coll_request *q;
            double t0, b, pr, c, tot;
            if (it == 0) faults = bench_minor_faults();
            redcoll_barrier(t, NULL);
            t0 = o_now();
            err |= redcoll_allreduce(t, x, y, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL) != REDCOLL_OK;
            b = o_now() - t0;
            redcoll_barrier(t, NULL);
            t0 = o_now();
            err |= redcoll_iallreduce(t, x, y, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL, &q) != REDCOLL_OK;
            err |= redcoll_wait(q) != REDCOLL_OK;
            pr = o_now() - t0;
            redcoll_request_free(q);
            if (it < 0) pure = pr; /* the computation's length: osu's calibration */
            redcoll_barrier(t, NULL);
            t0 = o_now();
            o_compute(pure * 1e6, NULL);
            c = o_now() - t0;
            redcoll_barrier(t, NULL);
            t0 = o_now();
            err |= redcoll_iallreduce(t, x, y, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL, &q) != REDCOLL_OK;
            o_compute(pure * 1e6, q);
            err |= redcoll_wait(q) != REDCOLL_OK;
            tot = o_now() - t0;
            redcoll_request_free(q);
            if (it >= 0) { tb[it] = b; tp[it] = pr; tc[it] = c; tt[it] = tot; }
        }
        rows[si].faults = (double)(bench_minor_faults() - faults) / o_iters;
        rows[si].bytes = o_sizes[si];
        rows[si].block = bench_median(tb, o_iters);
        rows[si].pure = bench_median(tp, o_iters);
        rows[si].comp = bench_median(tc, o_iters);
        rows[si].total = bench_median(tt, o_iters);
        for (i = 0; i < n && !err; ++i) /* sum over ranks r of (r + 1) (i % 7) */
            err |= y[i] != (double)(t->size * (t->size + 1) / 2) * (double)(i % 7);
        free(x); free(y); free(tb); free(tp); free(tc); free(tt);
    }
    return err;
}

static void o_print(const o_row *rows, const char *transport, int p) {
    int si;
    printf("# overlap of redcoll_iallreduce (doubles, sum) on %s, p = %d: median of %d iterations,\n"
           "# redcoll_test every %.0f us of computation; osu_iallreduce's formula\n",
           transport, p, o_iters, o_test_us);
    printf("# %10s %12s %12s %12s %12s %9s %11s %9s\n", "bytes", "block_us", "pure_us", "comp_us",
           "total_us", "overlap%", "pure/block", "faults/it");
    for (si = 0; si < o_nsizes; ++si) {
        const o_row *w = &rows[si];
        double ov = 100.0 * (1.0 - (w->total - w->comp) / w->pure);
        printf("  %10zu %12.2f %12.2f %12.2f %12.2f %9.1f %11.3f %9.1f\n", w->bytes, w->block * 1e6,
               w->pure * 1e6, w->comp * 1e6, w->total * 1e6, ov < 0 ? 0.0 : ov, w->pure / w->block,
               w->faults);
    }
}

static void o_args(int argc, char **argv) {
    int i;
    o_nsizes = bench_parse_sizes("8,64,512,4K,32K,64K,256K,1M,4M,8M", o_sizes, 32);
    for (i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc) o_p = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) o_nsizes = bench_parse_sizes(argv[++i], o_sizes, 32);
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) o_iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--test-us") && i + 1 < argc) o_test_us = atof(argv[++i]);
        else { fprintf(stderr, "usage: %s [-p P] [--sizes 8,1K,...] [--iters N] [--test-us U]\n", argv[0]); exit(2); }
    }
    if (o_iters < 1) o_iters = 1;
    if (o_p < 1) o_p = 1;
}

#ifdef OVERLAP_MPI
int main(int argc, char **argv) {
    redcoll_mpi m;
    o_row rows[32];
    int err;
    MPI_Init(&argc, &argv);
    o_args(argc, argv);
    o_calibrate();
    if (redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) MPI_Abort(MPI_COMM_WORLD, 2);
    err = o_run(&m.t, rows);
    if (m.t.rank == 0) { bench_print_loadavg("overlap_mpi"); o_print(rows, "MPI (redcoll_mpi.h)", m.t.size); }
    redcoll_mpi_finalize(&m);
    MPI_Finalize();
    if (err) fprintf(stderr, "overlap: a wrong result or an error\n");
    return err;
}
#else
static o_row o_rows[32];

static redcoll_result o_rank(const redcoll_transport *t, void *arg) {
    o_row mine[32];
    (void)arg;
    if (o_run(t, mine)) return REDCOLL_ERR_TRANSPORT;
    if (t->rank == 0) memcpy(o_rows, mine, sizeof mine);
    return REDCOLL_OK;
}

int main(int argc, char **argv) {
    redcoll_result r;
    o_args(argc, argv);
    o_calibrate();
    r = redcoll_shm_run(o_p, o_rank, NULL, NULL);
    bench_print_loadavg("overlap");
    o_print(o_rows, "threads (redcoll_shm.h)", o_p);
    if (r != REDCOLL_OK) fprintf(stderr, "overlap: %s\n", redcoll_result_string(r));
    return r != REDCOLL_OK;
}
#endif
