/* pmpi_overhead.c - what the MPI drop-in costs over calling redcoll
   directly: MPI_Allreduce of one double (8 B) through
   build/libredcoll_pmpi.so against redcoll_allreduce on this program's own
   redcoll_mpi transport (the same auto algorithm), with MPICH's
   PMPI_Allreduce for reference. A benchmark, not a test.

   Build and run (the shim must be preloaded; the program checks):
       make shim build/pmpi_overhead
       mpiexec.mpich -n 2 -genv LD_PRELOAD $PWD/build/libredcoll_pmpi.so build/pmpi_overhead

   Rounds of three short batches (CALLS calls of each variant, the order
   rotating), ROUNDS times; each batch timed on rank 0 and started after a
   barrier. Short batches and many rounds let the median skip the batches a
   busy machine's scheduler hit. Prints the median time per call of each
   variant and the median over rounds of each round's ratio to direct. */
#define REDCOLL_IMPLEMENTATION
#define REDCOLL_STATIC
#include "redcoll.h"
#include "transports/redcoll_mpi.h"

#include <stdio.h>
#include <stdlib.h>

#define CALLS 100
#define ROUNDS 801

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    static double t[3][ROUNDS], ratio[3][ROUNDS];
    static const char *const names[3] = { "shim (MPI_Allreduce)", "redcoll_allreduce direct",
                                          "MPICH (PMPI_Allreduce)" };
    /* called through a pointer, as from a file other than the one with
       REDCOLL_IMPLEMENTATION: no inlining or constant propagation into it */
    redcoll_result (*volatile direct)(const redcoll_transport *, const void *, void *, size_t,
                                      redcoll_dtype, redcoll_op, const redcoll_options *) =
        redcoll_allreduce;
    redcoll_mpi m;
    int rank, size, b, v, i, shim_loaded;
    double x = 1.0, y = 0.0, med[3];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* preloaded, MPI_Allreduce is the shim's, no longer MPICH's alias of PMPI_Allreduce */
    shim_loaded = (void (*)(void))MPI_Allreduce != (void (*)(void))PMPI_Allreduce;
    if (!shim_loaded) {
        if (rank == 0) fprintf(stderr, "pmpi_overhead: run with -genv LD_PRELOAD .../libredcoll_pmpi.so\n");
        MPI_Finalize();
        return 2;
    }
    if (redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    for (i = 0; i < CALLS; ++i) { /* warm up all three */
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        direct(&m.t, &x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
        PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    for (b = 0; b < ROUNDS; ++b)
        for (v = 0; v < 3; ++v) {
            int w = (v + b) % 3; /* rotate the order inside a batch */
            double t0;
            PMPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (i = 0; i < CALLS; ++i) {
                if (w == 0) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                else if (w == 1) direct(&m.t, &x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
                else PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            }
            t[w][b] = (MPI_Wtime() - t0) / CALLS;
        }
    if (y != (double)size) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        double rmed[3];
        for (v = 0; v < 3; ++v) {
            for (b = 0; b < ROUNDS; ++b) ratio[v][b] = t[v][b] / t[1][b];
            qsort(t[v], ROUNDS, sizeof(double), cmp_double);
            qsort(ratio[v], ROUNDS, sizeof(double), cmp_double);
            med[v] = t[v][ROUNDS / 2];
            rmed[v] = ratio[v][ROUNDS / 2];
        }
        printf("allreduce 8 B, p=%d, %d rounds of %d calls each, medians:\n", size, ROUNDS, CALLS);
        for (v = 0; v < 3; ++v)
            printf("  %-26s %8.3f us per call, %.3fx direct (median of per-round ratios)\n", names[v],
                   med[v] * 1e6, rmed[v]);
    }
    redcoll_mpi_finalize(&m);
    MPI_Finalize();
    return 0;
}
