/* wide.c - vector sums of wide-range doubles, an unmodified MPI program for
   the reproducible mode of the redcoll drop-in (test/repro/run.sh).

   Includes only mpi.h. MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter_block
   and MPI_Reduce_scatter of MPI_SUM on doubles whose exponents span from a
   few to 1800 binades (blocks of 64 elements at four widths), floats, and
   double complex, at lengths from 1 to 36000, then one of a derived
   datatype (MPI's in either mode, not printed). `wide D`: ranks 0 .. D-1 hold
   the data and the others zeros, so with D fixed the inputs do not depend
   on the process count. Rank 0 prints, per case, a hash of the whole result
   (the scattered pieces collected), the bits of its first element, and
   whether every element is the correctly rounded sum (fsum: the exact sum,
   rounded once). test/fortran's wide.f90 is the same program in Fortran and
   prints the same lines. */
#include <mpi.h>

#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "repro.h"

static int R, P, D;

/* Element i of rank q's input to case c: 53-bit mantissas within 4, 60,
   400 or 1800 binades by i's block of 64; zero on ranks from D. Floats
   (f = 1): 24 bits within 26 binades, so a double sum of up to 8 of them
   is exact. */
static double gen(int q, long i, int c, int f) {
    static const int64_t widths[4] = { 4, 60, 400, 1800 };
    if (q >= D) return 0.0;
    return draw(1 + (q * 1000003LL + i * 7919LL + c * 104729LL) % 2147483646LL,
                f ? 26 : widths[(i / 64) % 4], f ? 24 : 53);
}

/* The correctly rounded sum of x[0..n-1] (Shewchuk's partials, rounded
   once as CPython's math.fsum does; no overflow in these data). */
static double fsum(const double *x, int n) {
    double part[64], hi = 0.0, lo = 0.0;
    int np = 0, k, j;
    for (k = 0; k < n; ++k) {
        double v = x[k];
        int i = 0;
        for (j = 0; j < np; ++j) {
            double y = part[j], t;
            if (fabs(v) < fabs(y)) { t = v; v = y; y = t; }
            t = v + y;
            lo = y - (t - v);
            if (lo != 0.0) part[i++] = lo;
            v = t;
        }
        np = i;
        part[np++] = v;
    }
    if (np == 0) return 0.0;
    hi = part[--np];
    while (np > 0) {
        double v = hi, y = part[--np];
        hi = v + y;
        lo = y - (hi - v);
        if (lo != 0.0) break;
    }
    if (np > 0 && ((lo < 0 && part[np - 1] < 0) || (lo > 0 && part[np - 1] > 0))) {
        double y = lo * 2, v = hi + y;
        if (y == v - hi) hi = v;
    }
    return hi;
}

/* The correctly rounded sum of element i of case c over every rank. */
static double want(long i, int c, int f) {
    double x[64];
    int q;
    for (q = 0; q < P; ++q) x[q] = f ? (double)(float)gen(q, i, c, 1) : gen(q, i, c, 0);
    return fsum(x, P);
}

/* Rank 0 prints the case: res holds all n results (doubles, or floats when f). */
static void line(const char *name, int c, const void *res, long n, int f) {
    long i;
    int exact = 1;
    uint64_t first = 0;
    if (R != 0) return;
    for (i = 0; i < n; ++i) {
        double w = want(i, c, f);
        exact &= f ? ((const float *)res)[i] == (float)w && !signbit(((const float *)res)[i]) == !signbit(w)
                   : memcmp(&((const double *)res)[i], &w, 8) == 0;
    }
    if (n > 0 && f) { uint32_t b; memcpy(&b, res, 4); first = b; }
    else if (n > 0) memcpy(&first, res, 8);
    printf("%-40s %08X %016llX %s\n", name, (unsigned)fnv(res, (size_t)n * (f ? 4 : 8)),
           (unsigned long long)first, exact ? "correctly-rounded" : "not-correctly-rounded");
}

/* Rank 0 collects every rank's piece of a scattered result (point to point). */
static void collect(double *all, const double *mine, const int *counts) {
    int q, at = 0;
    if (R != 0) { MPI_Send(mine, counts[R], MPI_DOUBLE, 0, 5, MPI_COMM_WORLD); return; }
    memcpy(all, mine, sizeof(double) * (size_t)counts[0]);
    for (q = 1, at = counts[0]; q < P; at += counts[q++])
        MPI_Recv(all + at, counts[q], MPI_DOUBLE, q, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
    static const long lens[] = { 1, 7, 1000, 36000 };
    enum { SCAT = 1200 };
    char name[64];
    double *x, *y, *all;
    float xf[1000], yf[1000];
    double complex z[500], zs[500];
    int k, j, c = 0, counts[64], before;
    long i;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    D = argc > 1 ? atoi(argv[1]) : P;
    if (P > 64) MPI_Abort(MPI_COMM_WORLD, 2);
    x = (double *)malloc(sizeof(double) * 36000);
    y = (double *)malloc(sizeof(double) * 36000);
    all = (double *)malloc(sizeof(double) * 36000);
    for (k = 0; k < 4; ++k, ++c) {
        long n = lens[k];
        for (i = 0; i < n; ++i) x[i] = gen(R, i, c, 0);
        MPI_Allreduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        snprintf(name, sizeof name, "allreduce double n=%ld", n);
        line(name, c, y, n, 0);
    }
    for (i = 0; i < 1000; ++i) y[i] = gen(R, i, c, 0);
    MPI_Allreduce(MPI_IN_PLACE, y, 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    line("allreduce double n=1000 in-place", c++, y, 1000, 0);
    for (i = 0; i < 1000; ++i) xf[i] = (float)gen(R, i, c, 1);
    MPI_Allreduce(xf, yf, 1000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    line("allreduce float n=1000", c++, yf, 1000, 1);
    for (i = 0; i < 500; ++i) z[i] = CMPLX(gen(R, 2 * i, c, 0), gen(R, 2 * i + 1, c, 0));
    MPI_Allreduce(z, zs, 500, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
    line("allreduce double complex n=500", c++, zs, 1000, 0);
    for (k = 2; k < 4; ++k)
        for (j = 0; j < 2; ++j, ++c) {
            long n = lens[k];
            int root = j ? P - 1 : 0;
            for (i = 0; i < n; ++i) x[i] = gen(R, i, c, 0);
            MPI_Reduce(x, y, (int)n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
            if (root != 0 && R == root) MPI_Send(y, (int)n, MPI_DOUBLE, 0, 6, MPI_COMM_WORLD);
            if (root != 0 && R == 0) MPI_Recv(y, (int)n, MPI_DOUBLE, root, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            snprintf(name, sizeof name, "reduce double n=%ld root=%s", n, j ? "last" : "first");
            line(name, c, y, n, 0);
        }
    for (i = 0; i < SCAT; ++i) x[i] = gen(R, i, c, 0);
    for (k = 0; k < P; ++k) counts[k] = SCAT / P;
    MPI_Reduce_scatter_block(x, y, SCAT / P, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    collect(all, y, counts);
    line("reduce_scatter_block double n=1200", c++, all, SCAT, 0);
    for (i = 0; i < SCAT; ++i) x[i] = gen(R, i, c, 0);
    for (k = 0, before = 0; k < P; ++k) { /* uneven: rank k gets about k + 1 shares */
        counts[k] = k == P - 1 ? SCAT - before : SCAT * 2 * (k + 1) / (P * (P + 1));
        before += counts[k];
    }
    MPI_Reduce_scatter(x, y, counts, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    collect(all, y, counts);
    line("reduce_scatter double n=1200", c++, all, SCAT, 0);
    { /* A derived datatype of doubles stays MPI's, whatever MPI makes of it
         (MPICH 4.0.2 refuses MPI_SUM on it: errors return, on a duplicate). */
        MPI_Datatype two;
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        MPI_Type_contiguous(2, MPI_DOUBLE, &two);
        MPI_Type_commit(&two);
        MPI_Allreduce(x, y, 500, two, MPI_SUM, dup);
        MPI_Type_free(&two);
        MPI_Comm_free(&dup);
    }
    free(x);
    free(y);
    free(all);
    MPI_Finalize();
    return 0;
}
