/* pmpi_allreduce.c - the MPI drop-in against the MPI library it sits on:
   MPI_Allreduce (redcoll, when build/libredcoll_pmpi.so is preloaded) and
   PMPI_Allreduce (the MPI library itself) in the same processes, timed
   interleaved, for a range of sizes (doubles, MPI_SUM, MPI_COMM_WORLD).
   A benchmark, not a test.

   Build and run (the shim must be preloaded; the program checks):
       make shim build/pmpi_allreduce
       mpiexec.mpich -n 2 -genv LD_PRELOAD $PWD/build/libredcoll_pmpi.so build/pmpi_allreduce
   REDCOLL_SHM=0 in the environment gives the drop-in over MPI point-to-point.

   Options: --sizes 8,64,512,... (bytes; default 8 B .. 16 MiB by factors of
   8), --batches B (default 7), --seconds S (target length of one batch,
   default 0.02).

   Per size: each variant's batch length (calls) is set once from a short
   run; then B rounds, each timing one batch of each variant, the order
   alternating; a batch starts after a barrier and counts as the slowest
   rank's. Prints the median time per call of each, the ratio of the
   medians, and the median of the per-round ratios; every result is
   checked (the inputs make every sum exact). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm);

/* One batch of n calls; the slowest rank's seconds per call. */
static double batch(allreduce_fn f, const double *x, double *y, int count, long n) {
    double t0, dt;
    long i;
    PMPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (i = 0; i < n; ++i) f(x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    dt = (MPI_Wtime() - t0) / (double)n;
    PMPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return dt;
}

/* Calls that fill `seconds`, agreed by every rank. */
static long calls_for(allreduce_fn f, const double *x, double *y, int count, double seconds) {
    long n = 1;
    for (;;) {
        double dt = batch(f, x, y, count, n) * (double)n;
        if (dt >= seconds / 8 || n >= (1L << 22)) {
            long k = dt > 0 ? (long)(seconds / (dt / (double)n)) : n;
            return k < 1 ? 1 : k;
        }
        n *= 4;
    }
}

int main(int argc, char **argv) {
    static const char *const names[2] = { "MPI_Allreduce (drop-in)", "PMPI_Allreduce (MPI)" };
    allreduce_fn fns[2];
    size_t sizes[32];
    int nsizes = 0, batches = 7, rank, size, si, i, bad = 0;
    double seconds = 0.02;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    fns[0] = MPI_Allreduce;
    fns[1] = PMPI_Allreduce;
    /* preloaded, MPI_Allreduce is the shim's, no longer the MPI library's alias of PMPI_Allreduce */
    if ((void (*)(void))fns[0] == (void (*)(void))fns[1]) {
        if (rank == 0) fprintf(stderr, "pmpi_allreduce: run with -genv LD_PRELOAD .../libredcoll_pmpi.so\n");
        MPI_Finalize();
        return 2;
    }
    for (i = 1; i < argc; ++i) {
        bench_timing_option(argc, argv, &i, sizes, &nsizes, &batches, &seconds);
    }
    if (batches < 1) batches = 1;
    if (!nsizes) nsizes = bench_sizes_by_8(sizes, (size_t)16 << 20);
    if (rank == 0) {
        const char *shm = getenv("REDCOLL_SHM");
        bench_print_loadavg("pmpi_allreduce");
        printf("# allreduce of doubles (sum) on MPI_COMM_WORLD, p=%d, REDCOLL_SHM=%s: median of %d interleaved\n"
               "# batches of about %.0f ms each (the slowest rank's), time per call\n#\n",
               size, shm ? shm : "(unset: shared memory on one node)", batches, seconds * 1e3);
        printf("| size | MPI_Allreduce (drop-in) | PMPI_Allreduce (MPI) | drop-in / MPI | median per-round ratio |\n");
        printf("|---|---|---|---|---|\n");
    }
    for (si = 0; si < nsizes; ++si) {
        int count = (int)(sizes[si] / 8), v, b;
        double *x = (double *)malloc(sizes[si]), *y = (double *)malloc(sizes[si]);
        double *t = (double *)calloc(2 * (size_t)batches, sizeof(double));
        double *ratio = (double *)calloc((size_t)batches, sizeof(double)), med[2];
        long n[2];
        char h[32];
        if (!x || !y || !t || !ratio) MPI_Abort(MPI_COMM_WORLD, 1);
        for (i = 0; i < count; ++i) x[i] = rank + i % 1000;
        for (v = 0; v < 2; ++v) {
            fns[v](x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* warm up: pages, segments */
            n[v] = calls_for(fns[v], x, y, count, seconds);
        }
        for (b = 0; b < batches; ++b)
            for (v = 0; v < 2; ++v) {
                int w = (v + b) % 2; /* each variant goes first in every other round */
                t[w * batches + b] = batch(fns[w], x, y, count, n[w]);
            }
        for (v = 0; v < 2; ++v) { /* every result right */
            memset(y, 0, sizes[si]);
            fns[v](x, y, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            for (i = 0; i < count; ++i)
                if (y[i] != (double)size * (size - 1) / 2 + (double)size * (i % 1000)) { bad = 1; break; }
        }
        for (b = 0; b < batches; ++b) ratio[b] = t[b] / t[batches + b];
        for (v = 0; v < 2; ++v) med[v] = bench_median(t + v * batches, batches);
        if (rank == 0) {
            snprintf(h, sizeof h, sizes[si] >= (1 << 20) ? "%zu MB" : sizes[si] >= 1024 ? "%zu KB" : "%zu B",
                     sizes[si] >= (1 << 20) ? sizes[si] >> 20 : sizes[si] >= 1024 ? sizes[si] >> 10 : sizes[si]);
            printf("| %s | %.2f us | %.2f us | %.2f | %.2f |\n", h, med[0] * 1e6, med[1] * 1e6,
                   med[0] / med[1], bench_median(ratio, batches));
            fflush(stdout);
        }
        free(x); free(y); free(t); free(ratio);
    }
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("#\n# %s (%s and %s checked)\n", bad ? "WRONG RESULTS" : "every result right",
                          names[0], names[1]);
    MPI_Finalize();
    return bad;
}
