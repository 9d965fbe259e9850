/* datapath_mpi.c - the MPI side of the data-path benchmark (bench/datapath.c):
   allreduce of doubles (sum) with MPICH's native MPI_Allreduce and with
   redcoll_allreduce (auto) over the MPI transport -- as it runs (messages
   above opts.chunk_bytes cut and reduced chunk by chunk) and uncut
   (chunk_bytes = SIZE_MAX: whole messages staged in a vector of scratch) --,
   medians of interleaved batches, minor page faults per call (getrusage,
   rank 0's process), time / native.
   Prints a table, and one line per measurement for datapath --mpi:
     R <native|redcoll> <p> <bytes> <seconds per call> <faults per call>

   Usage: mpiexec.mpich -n 2 datapath_mpi [--sizes 8,1K,1M,8M,64M] [--batches 7] [--seconds 0.02]
                                          [--chunk BYTES]   (opts.chunk_bytes of "redcoll"; 0: default)
   (`make bench-datapath` runs it right after the threads.) */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mpi.h"

#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 16
#define NMETHODS 3

static size_t g_chunk; /* --chunk: opts.chunk_bytes of method redcoll (0: the default) */

static int call(int method, redcoll_mpi *m, const double *x, double *y, size_t n) {
    redcoll_options o;
    if (method == 0) return MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS;
    memset(&o, 0, sizeof o);
    o.chunk_bytes = method == 2 ? (size_t)-1 : g_chunk;
    return redcoll_allreduce(&m->t, x, y, n, REDCOLL_DOUBLE, REDCOLL_SUM, &o) != REDCOLL_OK;
}

int main(int argc, char **argv) {
    static const char *const names[NMETHODS] = { "native", "redcoll", "uncut" };
    size_t sizes[MAX_SIZES] = { 8, 1024, 1 << 20, 8 << 20, 64 << 20 }, maxn = 0, i;
    int nsizes = 5, batches = 7, rank, p, si, mi, bi, errors = 0;
    double target = 0.02, *x, *y;
    redcoll_mpi m;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (si = 1; si < argc; ++si) {
        const char *a = argv[si], *v = si + 1 < argc ? argv[si + 1] : NULL;
        if (strcmp(a, "--batches") == 0 && v) { batches = atoi(v); ++si; }
        else if (strcmp(a, "--seconds") == 0 && v) { target = atof(v); ++si; }
        else if (strcmp(a, "--sizes") == 0 && v) { nsizes = bench_parse_sizes(v, sizes, MAX_SIZES); ++si; }
        else if (strcmp(a, "--chunk") == 0 && v) { size_t c[1] = { 0 }; bench_parse_sizes(v, c, 1); g_chunk = c[0]; ++si; }
    }
    if (batches < 1) batches = 1;
    for (si = 0; si < nsizes; ++si) if (sizes[si] / 8 > maxn) maxn = sizes[si] / 8;
    x = (double *)malloc(maxn * sizeof *x);
    y = (double *)malloc(maxn * sizeof *y);
    if (!x || !y || redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    for (i = 0; i < maxn; ++i) { x[i] = (double)(rank + 1) * (double)(i % 64 + 1); y[i] = 0; }
    if (rank == 0) bench_print_loadavg("MPI start");
    if (rank == 0)
        printf("# MPI allreduce of doubles (sum), p = %d processes; medians of %d interleaved batches\n"
               "#     size  method        time per call  faults/call  wrong  x native\n", p, batches);
    for (si = 0; si < nsizes; ++si) {
        size_t n = sizes[si] / 8;
        long iters[NMETHODS], wrong[NMETHODS] = { 0, 0, 0 };
        double sample[NMETHODS][64], faults[NMETHODS] = { 0, 0, 0 }, native = 0;
        for (mi = 0; mi < NMETHODS; ++mi) { /* warm up, then size the batches */
            double t0, dt;
            errors += call(mi, &m, x, y, n);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            errors += call(mi, &m, x, y, n);
            dt = MPI_Wtime() - t0;
            MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            dt = target / (dt > 1e-9 ? dt : 1e-9);
            iters[mi] = dt < 1 ? 1 : dt > 1e6 ? 1000000L : (long)dt;
        }
        for (bi = 0; bi < batches && bi < 64; ++bi) {
            for (mi = 0; mi < NMETHODS; ++mi) {
                long k, f0;
                double t0;
                MPI_Barrier(MPI_COMM_WORLD);
                f0 = bench_minor_faults();
                t0 = MPI_Wtime();
                for (k = 0; k < iters[mi]; ++k) errors += call(mi, &m, x, y, n);
                MPI_Barrier(MPI_COMM_WORLD);
                sample[mi][bi] = (MPI_Wtime() - t0) / (double)iters[mi];
                faults[mi] += (double)(bench_minor_faults() - f0) / (double)iters[mi] / batches;
                if (bi == batches - 1)
                    for (i = 0; i < n; ++i) wrong[mi] += y[i] != (double)p * (p + 1) / 2 * (double)(i % 64 + 1);
            }
        }
        for (mi = 0; rank == 0 && mi < NMETHODS; ++mi) {
            double med = bench_median(sample[mi], batches < 64 ? batches : 64);
            if (mi == 0) native = med;
            printf("%9zu B  %-10s  %12.3f us  %11.1f  %5ld  %8.2f\n", sizes[si], names[mi], med * 1e6,
                   faults[mi], wrong[mi], native > 0 ? med / native : 0);
            printf("R %s %d %zu %.9g %.3f\n", names[mi], p, sizes[si], med, faults[mi]);
        }
        fflush(stdout);
    }
    redcoll_mpi_finalize(&m);
    free(x); free(y);
    MPI_Finalize();
    return errors != 0;
}
