/* cg.c - conjugate gradients whose dot products are MPI_Allreduce of
   doubles: an unmodified MPI program for the reproducible mode of the redcoll
   drop-in (test/repro/run.sh).

   Includes only mpi.h. Solves A x = b for a tridiagonal symmetric positive
   definite A of order N (diagonal 2 + (i mod 7) / 8 + i / N, off-diagonals
   -1) with b's entries spread over 60 binades, 80 iterations, no stopping
   test (so the iterations are the same whatever the sums). `cg D`: the
   rows are split in D contiguous blocks held by ranks 0 .. D-1, the other
   ranks hold no rows and add zeros, so with D fixed every rank's partial
   dot products, and so the inputs of each sum, do not depend on the process
   count. Each iteration: MPI_Allgatherv of the search direction, the local
   rows of A p, and two dot products (MPI_Allreduce, one double each).
   Rank 0 prints the bits of the residual norm every 10 iterations and a
   hash of the solution. test/repro/cg.f90 is the same program in Fortran. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "repro.h"

enum { N = 6000, ITERS = 80 };

static double dot(const double *a, const double *b, int n) {
    double s = 0.0, g = 0.0;
    int i;
    for (i = 0; i < n; ++i) s += a[i] * b[i];
    MPI_Allreduce(&s, &g, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return g;
}

int main(int argc, char **argv) {
    int R, P, D, q, lo, n, it, i, counts[64], displs[64];
    double *x, *r, *p, *ap, *full, rr, alpha, beta, rr1;
    uint64_t bits;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    D = argc > 1 ? atoi(argv[1]) : P;
    if (P > 64 || D > P) MPI_Abort(MPI_COMM_WORLD, 2);
    for (q = 0; q < P; ++q) { /* rows [displs[q], displs[q] + counts[q]) */
        counts[q] = q < D ? N / D + (q < N % D) : 0;
        displs[q] = q == 0 ? 0 : displs[q - 1] + counts[q - 1];
    }
    lo = displs[R];
    n = counts[R];
    x = (double *)calloc((size_t)n + 1, sizeof(double));
    r = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    p = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    ap = (double *)malloc(sizeof(double) * ((size_t)n + 1));
    full = (double *)calloc(N + 2, sizeof(double)); /* p with a zero on each side */
    for (i = 0; i < n; ++i) r[i] = p[i] = draw(lcg(1 + lo + i), 60, 53); /* b: within 60 binades */
    rr = dot(r, r, n);
    for (it = 1; it <= ITERS; ++it) {
        MPI_Allgatherv(p, n, MPI_DOUBLE, full + 1, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
        for (i = 0; i < n; ++i) {
            int g = lo + i;
            ap[i] = (2.0 + (double)(g % 7) / 8.0 + (double)g / N) * full[g + 1] - full[g] - full[g + 2];
        }
        alpha = rr / dot(p, ap, n);
        for (i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * ap[i];
        }
        rr1 = dot(r, r, n);
        beta = rr1 / rr;
        rr = rr1;
        for (i = 0; i < n; ++i) p[i] = r[i] + beta * p[i];
        if (R == 0 && it % 10 == 0) {
            memcpy(&bits, &rr, 8);
            printf("iteration %3d  r.r %016llX\n", it, (unsigned long long)bits);
        }
    }
    MPI_Allgatherv(x, n, MPI_DOUBLE, full + 1, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
    if (R == 0) printf("solution hash %08X\n", (unsigned)fnv(full + 1, sizeof(double) * N));
    free(x);
    free(r);
    free(p);
    free(ap);
    free(full);
    MPI_Finalize();
    return 0;
}
