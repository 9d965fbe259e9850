/* lifetimes.c - an unmodified MPI program for the redcoll drop-in
   (test/pmpi/run.sh): datatypes and user ops freed while a non-blocking or
   persistent collective that uses them is pending, which MPI allows (the
   object lives until the operation completes, MPI 4.1 sections 5.1.9 and
   6.9.5).

   Includes only mpi.h. Cases:
   - MPI_Igather, MPI_Iscatter, MPI_Iallgather, MPI_Ibcast whose datatypes
     are MPI_Type_dup's of a strided type (one int in two, resized to tile),
     every handle freed between the start and MPI_Wait;
   - MPI_Ireduce and MPI_Iallreduce with a commutative user op on MPI_INT,
     and with a non-commutative one on a dup'd contiguous pair type (whose
     function asks MPI the size of the datatype it is given), op and type
     freed before the wait;
   - MPI_Allreduce_init (pair type, non-commutative op) and MPI_Bcast_init
     (strided type) whose type and op are freed after the init, then a
     different type and op created (MPI may give them the freed handles),
     each started twice with new data, then MPI_Request_free.
   Each case runs once with each rank starting late, so every rank that
   receives has its collective pending when it frees the handles.
   Results are checked against closed forms; rank 0 prints one line per case
   ("ok" or "WRONG") and run.sh compares the output with and without
   LD_PRELOAD. `lifetimes NAME...` runs only the cases whose names start
   with one of the NAMEs (igather, iscatter, iallgather, ibcast, ireduce,
   iallreduce, allreduce_init, bcast_init), each in a job of its own where a
   crash in one would hide the others. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int R, P, g_wrong, g_cases;
static int g_argc;
static char **g_argv;
static int g_bad_type; /* a user op was given a datatype MPI does not know as 8 bytes */

enum { HOLE = -7 }; /* what the skipped ints of a strided buffer hold */

static int val(int r, int i, int seed) { return r * 1000 + i * 7 + seed * 100000 + 1; }

/* Every rank's verdict for one case; rank 0 prints it. */
static void verdict(const char *name, int n, int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) g_wrong++;
    g_cases++;
    if (R == 0) printf("%-68s n=%-4d %s\n", name, n, all ? "ok" : "WRONG");
}

static int *ints(long n) {
    int *p = (int *)malloc(sizeof *p * (size_t)(n > 0 ? n : 1));
    long i;
    if (!p) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    for (i = 0; i < n; ++i) p[i] = HOLE;
    return p;
}

/* Rank `who` starts after the others (and after they freed their handles). */
static void late(int who) {
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    if (R == who) nanosleep(&ts, NULL);
}

/* n ints, one in two, extent 2n ints: an MPI_Type_dup of a resized vector,
   the vector and the resized type freed at once (the dup keeps them). */
static MPI_Datatype strided(int n) {
    MPI_Datatype vec, res, dup;
    MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * (size_t)n * sizeof(int)), &res);
    MPI_Type_commit(&res);
    MPI_Type_dup(res, &dup);
    MPI_Type_commit(&dup);
    MPI_Type_free(&vec);
    MPI_Type_free(&res);
    return dup;
}

/* Element k (of n ints) of strided block b in buf: set, and checked with
   the holes between untouched. */
static void put(int *buf, int b, int n, int k, int v) { buf[(long)b * 2 * n + 2 * k] = v; }
static int block_is(const int *buf, int b, int n, int r, int seed) {
    int k, ok = 1;
    for (k = 0; k < n; ++k)
        ok &= buf[(long)b * 2 * n + 2 * k] == val(r, k, seed) && buf[(long)b * 2 * n + 2 * k + 1] == HOLE;
    return ok;
}

/* Whether the command line asks for the case `name` (all of them without names). */
static int want(const char *name) {
    int i;
    for (i = 1; i < g_argc; ++i)
        if (strncmp(name, g_argv[i], strlen(g_argv[i])) == 0) return 1;
    return g_argc < 2;
}

/* ---- data movement with strided dup'd types freed before the wait ---- */

static int t_gather(int n, int root, int lag) {
    MPI_Datatype st = strided(n), rt = strided(n);
    int *s = ints(2 * n), *r = ints(2L * n * P), k, ok = 1;
    MPI_Request q;
    for (k = 0; k < n; ++k) put(s, 0, n, k, val(R, k, 1));
    late(lag);
    MPI_Igather(s, 1, st, r, 1, rt, root, MPI_COMM_WORLD, &q);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (R == root) for (k = 0; k < P; ++k) ok &= block_is(r, k, n, k, 1);
    free(s); free(r);
    return ok;
}

static int t_scatter(int n, int root, int lag) {
    MPI_Datatype st = strided(n), rt = strided(n);
    int *s = ints(2L * n * P), *r = ints(2 * n), k, b, ok;
    MPI_Request q;
    for (b = 0; b < P; ++b) for (k = 0; k < n; ++k) put(s, b, n, k, val(b, k, 2));
    late(lag);
    MPI_Iscatter(s, 1, st, r, 1, rt, root, MPI_COMM_WORLD, &q);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    ok = block_is(r, 0, n, R, 2);
    free(s); free(r);
    return ok;
}

static int t_allgather(int n, int root, int lag) {
    MPI_Datatype st = strided(n), rt = strided(n);
    int *s = ints(2 * n), *r = ints(2L * n * P), k, ok = 1;
    MPI_Request q;
    (void)root;
    for (k = 0; k < n; ++k) put(s, 0, n, k, val(R, k, 3));
    late(lag);
    MPI_Iallgather(s, 1, st, r, 1, rt, MPI_COMM_WORLD, &q);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (k = 0; k < P; ++k) ok &= block_is(r, k, n, k, 3);
    free(s); free(r);
    return ok;
}

static int t_bcast(int n, int root, int lag) {
    MPI_Datatype t = strided(n);
    int *b = ints(4 * n), k, ok;
    MPI_Request q;
    if (R == root) for (k = 0; k < n; ++k) { put(b, 0, n, k, val(root, k, 4)); put(b, 1, n, k, val(root + 1, k, 4)); }
    late(lag);
    MPI_Ibcast(b, 2, t, root, MPI_COMM_WORLD, &q);
    MPI_Type_free(&t);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    ok = block_is(b, 0, n, root, 4) && block_is(b, 1, n, root + 1, 4);
    free(b);
    return ok;
}

/* ---- reductions with user ops (and a type) freed before the wait ---- */

static void isum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int i;
    (void)dt;
    for (i = 0; i < *len; ++i) ((int *)inout)[i] += ((const int *)in)[i];
}

/* Affine maps x -> m x + c as (m, c) pairs of uint32 (mod 2^32), composed:
   in o inout = (m_in m_io, m_in c_io + c_in). Not commutative: with m = 2
   everywhere, x_0 o ... o x_(p-1) has c = sum_r c_r 2^r. */
typedef struct aff { uint32_t m, c; } aff;
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt) {
    const aff *a = (const aff *)in;
    aff *b = (aff *)inout;
    int i, size = 0;
    if (MPI_Type_size(*dt, &size) != MPI_SUCCESS || size != (int)sizeof(aff)) g_bad_type = 1;
    for (i = 0; i < *len; ++i) {
        b[i].c = a[i].m * b[i].c + a[i].c;
        b[i].m = a[i].m * b[i].m;
    }
}

static aff aff_of(int r, int i, int seed) { aff x = { 2u, (uint32_t)val(r, i, seed) }; return x; }
static int aff_is(aff x, int i, int seed) { /* x_0 o ... o x_(p-1) in closed form */
    uint32_t c = 0, m = 1;
    int r;
    for (r = 0; r < P; ++r, m *= 2u) c += (uint32_t)val(r, i, seed) * m;
    return x.m == m && x.c == c;
}

static MPI_Datatype pair_type(void) { /* a dup of a contiguous type of two uint32 */
    MPI_Datatype t, d;
    MPI_Type_contiguous(2, MPI_UINT32_T, &t);
    MPI_Type_commit(&t);
    MPI_Type_dup(t, &d);
    MPI_Type_commit(&d);
    MPI_Type_free(&t);
    return d;
}

static int t_reduce_sum(int n, int root, int lag, int all) {
    MPI_Op op;
    int *s = ints(n), *r = ints(n), i, ok = 1;
    MPI_Request q;
    MPI_Op_create(isum, 1, &op);
    for (i = 0; i < n; ++i) s[i] = val(R, i, 5);
    late(lag);
    if (all) MPI_Iallreduce(s, r, n, MPI_INT, op, MPI_COMM_WORLD, &q);
    else MPI_Ireduce(s, r, n, MPI_INT, op, root, MPI_COMM_WORLD, &q);
    MPI_Op_free(&op);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (all || R == root) /* sum_r val(r, i, 5) */
        for (i = 0; i < n; ++i) ok &= r[i] == P * (i * 7 + 500001) + 1000 * P * (P - 1) / 2;
    free(s); free(r);
    return ok;
}

static int t_reduce_compose(int n, int root, int lag, int all) {
    MPI_Op op;
    MPI_Datatype t = pair_type();
    aff *s = (aff *)malloc(sizeof *s * (size_t)n), *r = (aff *)calloc((size_t)n, sizeof *r);
    int i, ok = 1;
    MPI_Request q;
    MPI_Op_create(compose, 0, &op);
    for (i = 0; i < n; ++i) s[i] = aff_of(R, i, 6);
    g_bad_type = 0;
    late(lag);
    if (all) MPI_Iallreduce(s, r, n, t, op, MPI_COMM_WORLD, &q);
    else MPI_Ireduce(s, r, n, t, op, root, MPI_COMM_WORLD, &q);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (all || R == root) for (i = 0; i < n; ++i) ok &= aff_is(r[i], i, 6);
    free(s); free(r);
    return ok && !g_bad_type;
}

/* ---- persistent: type and op freed after the init, before MPI_Start ---- */

#if MPI_VERSION >= 4
/* A different op for the handle a freed one may leave: wrong if called. */
static void iwrong(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int i;
    (void)dt;
    for (i = 0; i < *len; ++i) ((int *)inout)[i] ^= ((const int *)in)[i] | 1;
}

static int t_persistent_allreduce(int n, int root, int lag) {
    MPI_Op op, other;
    MPI_Datatype t = pair_type(), decoy;
    aff *s = (aff *)malloc(sizeof *s * (size_t)n), *r = (aff *)calloc((size_t)n, sizeof *r);
    int i, round, ok = 1;
    MPI_Request q;
    (void)root;
    MPI_Op_create(compose, 0, &op);
    MPI_Allreduce_init(s, r, n, t, op, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
    MPI_Op_create(iwrong, 1, &other); /* may take the freed handles */
    MPI_Type_contiguous(3, MPI_INT, &decoy);
    MPI_Type_commit(&decoy);
    g_bad_type = 0;
    for (round = 0; round < 2; ++round) {
        for (i = 0; i < n; ++i) { s[i] = aff_of(R, i, 7 + round); r[i].m = r[i].c = 0; }
        late(lag);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        for (i = 0; i < n; ++i) ok &= aff_is(r[i], i, 7 + round);
    }
    MPI_Request_free(&q);
    MPI_Op_free(&other);
    MPI_Type_free(&decoy);
    free(s); free(r);
    return ok && !g_bad_type && q == MPI_REQUEST_NULL;
}

static int t_persistent_bcast(int n, int root, int lag) {
    MPI_Datatype t = strided(n), decoy;
    int *b = ints(4 * n), k, round, ok = 1;
    MPI_Request q;
    MPI_Bcast_init(b, 2, t, root, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    MPI_Type_free(&t);
    MPI_Type_contiguous(5, MPI_CHAR, &decoy); /* may take the freed handle */
    MPI_Type_commit(&decoy);
    for (round = 0; round < 2; ++round) {
        for (k = 0; k < 4 * n; ++k) b[k] = HOLE;
        if (R == root)
            for (k = 0; k < n; ++k) { put(b, 0, n, k, val(root, k, 9 + round)); put(b, 1, n, k, val(root + 2, k, 9 + round)); }
        late(lag);
        MPI_Start(&q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        ok &= block_is(b, 0, n, root, 9 + round) && block_is(b, 1, n, root + 2, 9 + round);
    }
    MPI_Request_free(&q);
    MPI_Type_free(&decoy);
    free(b);
    return ok;
}
#endif

static int t_ireduce_sum(int n, int root, int lag) { return t_reduce_sum(n, root, lag, 0); }
static int t_iallreduce_sum(int n, int root, int lag) { return t_reduce_sum(n, root, lag, 1); }
static int t_ireduce_compose(int n, int root, int lag) { return t_reduce_compose(n, root, lag, 0); }
static int t_iallreduce_compose(int n, int root, int lag) { return t_reduce_compose(n, root, lag, 1); }

/* Case `name` (if asked for) once with each rank late. */
static void run(const char *name, int (*f)(int n, int root, int lag), int n, int root) {
    int lag, ok = 1;
    if (!want(name)) return;
    for (lag = 0; lag < P; ++lag) ok &= f(n, root, lag);
    verdict(name, n, ok);
}

int main(int argc, char **argv) {
    static const int sizes[] = { 3, 1000 };
    int k;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    g_argc = argc;
    g_argv = argv;
    for (k = 0; k < 2; ++k) {
        int n = sizes[k], root = P - 1 - k % P;
        run("igather, dup'd strided types freed before the wait", t_gather, n, root);
        run("iscatter, dup'd strided types freed before the wait", t_scatter, n, root);
        run("iallgather, dup'd strided types freed before the wait", t_allgather, n, root);
        run("ibcast, a dup'd strided type freed before the wait", t_bcast, n, root);
        run("ireduce, commutative user op freed before the wait", t_ireduce_sum, n, root);
        run("ireduce, non-commutative op and pair type freed before the wait", t_ireduce_compose, n, root);
        run("iallreduce, commutative user op freed before the wait", t_iallreduce_sum, n, root);
        run("iallreduce, non-commutative op and pair type freed before the wait", t_iallreduce_compose, n, root);
#if MPI_VERSION >= 4
        run("allreduce_init, op and type freed before two starts", t_persistent_allreduce, n, root);
        run("bcast_init, type freed before two starts", t_persistent_bcast, n, root);
#endif
    }
#if MPI_VERSION < 4
    if (R == 0) printf("allreduce_init, bcast_init: skipped (MPI %d.%d has no persistent collectives)\n",
                       MPI_VERSION, MPI_SUBVERSION);
#endif
    if (R == 0) printf("%d cases, %d wrong\n", g_cases, g_wrong);
    MPI_Finalize();
    return g_wrong ? 1 : 0;
}
