/* node_allreduce.c - allreduce inside one node, four ways, in one run: the
   same processes time, interleaved, redcoll over the process-shared-memory
   transport (transports/redcoll_pshm.h, the drop-in's path on one node),
   redcoll over MPI point-to-point (transports/redcoll_mpi.h, the drop-in's
   path with REDCOLL_SHM=0), MPICH's own MPI_Allreduce, and redcoll between
   p threads of rank 0 (transports/redcoll_shm.h; the other ranks sleep in
   a futex meanwhile, taking no core). Doubles, sum, AUTO, vectors in each
   process's private memory. A benchmark, not a test.

   Build and run (not preloaded: MPI_Allreduce is MPICH's):
       make build/node_allreduce
       mpiexec.mpich -n 2 build/node_allreduce
   Options: --sizes 8,64,... (bytes; default 8 B .. 64 MiB), --batches B
   (default 7), --seconds S (target length of one batch, default 0.02).

   Per size: each variant's calls per batch are set once from a short run;
   then B rounds time one batch of each variant, the order rotating; a
   batch starts after a barrier and counts as the slowest rank's (the
   slowest thread's). Prints the median time per call of each and the
   ratios of the medians to MPICH's; every result is checked. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mpi.h"
#include "transports/redcoll_pshm.h"
#include "transports/redcoll_shm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench.h"

enum { V_PSHM, V_THREADS, V_MPI, V_NATIVE, V_COUNT };
static const char *const vname[V_COUNT] = { "redcoll, processes (pshm)", "redcoll, threads",
                                            "redcoll over MPI", "MPICH MPI_Allreduce" };

static const redcoll_transport *g_pshm, *g_mpi, *g_rest; /* g_rest: a barrier that sleeps */
static int g_rank, g_size;

static void fill(double *x, size_t count, int rank) {
    size_t i;
    for (i = 0; i < count; ++i) x[i] = rank + (double)(i % 1000);
}

static int right(const double *y, size_t count, int p) {
    size_t i;
    for (i = 0; i < count; ++i)
        if (y[i] != (double)p * (p - 1) / 2 + (double)p * (double)(i % 1000)) return 0;
    return 1;
}

/* n calls of variant v (not threads) on this rank; seconds per call. */
static double timed(int v, const double *x, double *y, size_t count, long n) {
    double t0;
    long i;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < n; ++i) {
        if (v == V_NATIVE) MPI_Allreduce(x, y, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else redcoll_allreduce(v == V_PSHM ? g_pshm : g_mpi, x, y, count, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    }
    return (MPI_Wtime() - t0) / (double)n;
}

static double now_s(void) { /* MPI_Wtime needs MPI_THREAD_MULTIPLE in the team's threads */
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The threads: a team of g_size threads in rank 0 per batch (its creation
   is not timed), each with its own vectors. */
typedef struct tjob { size_t count; long calls; double dt; int ok; } tjob;

static redcoll_result thread_rank(const redcoll_transport *t, void *arg) {
    tjob *j = (tjob *)arg;
    double *x = (double *)malloc(j->count * sizeof(double) + 8), *y = (double *)malloc(j->count * sizeof(double) + 8);
    double t0, dt, ok;
    long i;
    if (!x || !y) { free(x); free(y); return REDCOLL_ERR_OUT_OF_MEMORY; }
    fill(x, j->count, t->rank);
    memset(y, 0, j->count * sizeof(double)); /* its pages faulted in before the clock starts */
    redcoll_barrier(t, NULL);
    t0 = now_s();
    for (i = 0; i < j->calls; ++i) redcoll_allreduce(t, x, y, j->count, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    dt = (now_s() - t0) / (double)j->calls;
    ok = right(y, j->count, t->size) ? 0 : 1;
    redcoll_allreduce(t, REDCOLL_IN_PLACE, &dt, 1, REDCOLL_DOUBLE, REDCOLL_MAX, NULL);
    redcoll_allreduce(t, REDCOLL_IN_PLACE, &ok, 1, REDCOLL_DOUBLE, REDCOLL_MAX, NULL);
    if (t->rank == 0) { j->dt = dt; j->ok = ok == 0; }
    free(x); free(y);
    return REDCOLL_OK;
}

/* One batch of variant v: seconds per call, the slowest rank's; *ok = 0 on a wrong result. */
static double batch(int v, const double *x, double *y, size_t count, long n, int *ok) {
    double dt;
    int good = 1;
    if (v == V_THREADS) {
        tjob j;
        j.count = count; j.calls = n; j.dt = -1; j.ok = 0;
        if (g_rank == 0 && redcoll_shm_run(g_size, thread_rank, &j, NULL) != REDCOLL_OK) j.dt = -1;
        redcoll_barrier(g_rest, NULL); /* the others sleep here meanwhile */
        dt = j.dt;
        good = g_rank != 0 || j.ok;
        PMPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    } else {
        memset(y, 0, count * sizeof(double));
        dt = timed(v, x, y, count, n);
        good = right(y, count, g_size);
        PMPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    PMPI_Allreduce(MPI_IN_PLACE, &good, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!good) *ok = 0;
    return dt;
}

/* Calls that fill `seconds`, the same on every rank. */
static long calls_for(int v, const double *x, double *y, size_t count, double seconds, int *ok) {
    long n = 1;
    for (;;) {
        double dt = batch(v, x, y, count, n, ok) * (double)n;
        if (dt >= seconds / 8 || n >= (1L << 22)) {
            long k = dt > 0 ? (long)(seconds / (dt / (double)n)) : n;
            return k < 1 ? 1 : k;
        }
        n *= 4;
    }
}

int main(int argc, char **argv) {
    size_t sizes[32];
    int nsizes = 0, batches = 7, si, i, ok = 1;
    double seconds = 0.02;
    redcoll_mpi m;
    redcoll_pshm *h = NULL, *rest = NULL;
    redcoll_pshm_config sleepy;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    for (i = 1; i < argc; ++i) {
        bench_timing_option(argc, argv, &i, sizes, &nsizes, &batches, &seconds);
    }
    if (batches < 1) batches = 1;
    if (!nsizes) nsizes = bench_sizes_by_8(sizes, (size_t)64 << 20);
    memset(&sleepy, 0, sizeof sleepy);
    sleepy.spin = -1;
    if (redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) != REDCOLL_OK ||
        redcoll_pshm_init_mpi(&h, MPI_COMM_WORLD, NULL) != REDCOLL_OK ||
        redcoll_pshm_init_mpi(&rest, MPI_COMM_WORLD, &sleepy) != REDCOLL_OK) {
        if (g_rank == 0) fprintf(stderr, "node_allreduce: no transport: %s\n", redcoll_pshm_last_error());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    g_mpi = &m.t;
    g_pshm = redcoll_pshm_transport(h);
    g_rest = redcoll_pshm_transport(rest);
    if (g_rank == 0) {
        bench_print_loadavg("node_allreduce");
        printf("# allreduce of doubles (sum, auto), p=%d, private vectors: median of %d interleaved batches\n"
               "# of about %.0f ms (the slowest rank's), time per call; ratios: each median over MPICH's\n#\n",
               g_size, batches, seconds * 1e3);
        printf("| size |");
        for (i = 0; i < V_COUNT; ++i) printf(" %s |", vname[i]);
        printf(" pshm / MPICH | threads / MPICH | over MPI / MPICH | pshm / threads |\n|---|");
        for (i = 0; i < V_COUNT + 4; ++i) printf("---|");
        printf("\n");
    }
    for (si = 0; si < nsizes; ++si) {
        size_t count = sizes[si] / 8 ? sizes[si] / 8 : 1;
        double *x = (double *)malloc(count * sizeof(double)), *y = (double *)malloc(count * sizeof(double));
        double *t = (double *)calloc((size_t)V_COUNT * (size_t)batches, sizeof(double)), med[V_COUNT];
        long n[V_COUNT];
        int v, b;
        char hsz[32];
        if (!x || !y || !t) MPI_Abort(MPI_COMM_WORLD, 1);
        fill(x, count, g_rank);
        for (v = 0; v < V_COUNT; ++v) n[v] = calls_for(v, x, y, count, seconds, &ok);
        for (b = 0; b < batches; ++b)
            for (v = 0; v < V_COUNT; ++v) {
                int w = (v + b) % V_COUNT; /* each variant goes first in turn */
                t[w * batches + b] = batch(w, x, y, count, n[w], &ok);
            }
        for (v = 0; v < V_COUNT; ++v) med[v] = bench_median(t + v * batches, batches);
        if (g_rank == 0) {
            size_t s = count * 8;
            snprintf(hsz, sizeof hsz, s >= (1 << 20) ? "%zu MB" : s >= 1024 ? "%zu KB" : "%zu B",
                     s >= (1 << 20) ? s >> 20 : s >= 1024 ? s >> 10 : s);
            printf("| %s |", hsz);
            for (v = 0; v < V_COUNT; ++v)
                printf(med[v] >= 1e-3 ? " %.0f us |" : " %.2f us |", med[v] * 1e6);
            printf(" %.2f | %.2f | %.2f | %.2f |\n", med[V_PSHM] / med[V_NATIVE], med[V_THREADS] / med[V_NATIVE],
                   med[V_MPI] / med[V_NATIVE], med[V_PSHM] / med[V_THREADS]);
            fflush(stdout);
        }
        free(x); free(y); free(t);
    }
    if (g_rank == 0) printf("#\n# %s\n", ok ? "every result checked and right" : "WRONG RESULTS");
    redcoll_pshm_destroy(rest);
    redcoll_pshm_destroy(h);
    redcoll_mpi_finalize(&m);
    MPI_Finalize();
    return !ok;
}
