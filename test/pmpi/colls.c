/* colls.c - an unmodified MPI program for the redcoll drop-in (test/pmpi/run.sh).

   Includes only mpi.h and knows nothing of redcoll. Runs every collective
   the shim serves with integer data (exact, so the results do not depend on
   the algorithm): MPI_IN_PLACE forms, every root, zero counts, a
   non-commutative user op on a contiguous derived type, a commutative one,
   pair types, datatypes that differ between ranks with the same type
   signature (vector, resized and reordered types on some ranks, contiguous
   on others), allgatherv with gaps and reversed displacements, calls that
   must pass through (holey types, complex products, intercommunicators, invalid
   arguments with MPI_ERRORS_RETURN), MPI_BOTTOM with absolute datatypes,
   the large-count _c entry points, on
   MPI_COMM_WORLD, a duplicate, a split communicator with reversed ranks and
   communicators freed and recreated. `colls world` runs the MPI_COMM_WORLD
   cases only (the quick run of the forced-algorithm sweep).

   Every rank checks its result against a sequential reference; rank 0
   prints one line per case: name, "ok" or "WRONG", and a hash of every
   rank's result buffer (holes included), collected with point-to-point
   messages. run.sh compares this output with and without LD_PRELOAD. */
#include <mpi.h>

#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int W, P; /* world rank and size */
static int g_wrong;

#define POISON ((int32_t)0x5a5a5a5a)

static int32_t val(int r, long i) { return (int32_t)(((long)r * 131 + i * 7919 + 17) % 1000) - 500; }

static uint32_t fnv(uint32_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; ++i) h = (h ^ b[i]) * 16777619u;
    return h;
}

/* Each rank logs its cases (name, ok or WRONG, a hash of its result bytes);
   print_logs() prints every rank's log in rank order at the end. Ranks of
   different split communicators run different cases, so nothing here is
   in lockstep. */
static char *g_log;
static size_t g_log_len, g_log_cap;

static void report(const char *name, const void *buf, size_t bytes, int ok) {
    char line[256];
    int n = snprintf(line, sizeof line, "%-64s %s %08x\n", name, ok ? "ok" : "WRONG",
                     (unsigned)fnv(2166136261u, buf, bytes));
    if (!ok) g_wrong++;
    if (g_log_len + (size_t)n + 1 > g_log_cap) {
        g_log_cap = 2 * g_log_cap + (size_t)n + 4096;
        g_log = (char *)realloc(g_log, g_log_cap);
        if (!g_log) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    }
    memcpy(g_log + g_log_len, line, (size_t)n + 1);
    g_log_len += (size_t)n;
}

/* Rank 0 prints "rank q: line" for every rank's log; returns the total of WRONG cases. */
static int print_logs(void) {
    int q, wrong = g_wrong;
    if (W != 0) {
        MPI_Send(&g_wrong, 1, MPI_INT, 0, 778, MPI_COMM_WORLD);
        MPI_Send(g_log, (int)g_log_len, MPI_CHAR, 0, 777, MPI_COMM_WORLD);
        return 0;
    }
    for (q = 0; q < P; ++q) {
        char *text = g_log, *line;
        int len = (int)g_log_len, w = 0;
        if (q > 0) {
            MPI_Status st;
            MPI_Recv(&w, 1, MPI_INT, q, 778, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            wrong += w;
            MPI_Probe(q, 777, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_CHAR, &len);
            text = (char *)malloc((size_t)len + 1);
            MPI_Recv(text, len, MPI_CHAR, q, 777, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        text[len] = 0;
        for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) printf("rank %d: %s\n", q, line);
        if (q > 0) free(text);
    }
    return wrong;
}

static void whoami(MPI_Comm comm, int *r, int *p) {
    MPI_Comm_rank(comm, r);
    MPI_Comm_size(comm, p);
}

static int32_t *ints(long n) {
    int32_t *b = (int32_t *)malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    long i;
    if (!b) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    for (i = 0; i < n; ++i) b[i] = POISON;
    return b;
}

static int32_t sum_over(int p, long i) {
    int32_t s = 0;
    int q;
    for (q = 0; q < p; ++q) s += val(q, i);
    return s;
}

/* A case's buffers: *in holds n values of rank r, *out m poisoned ints,
   with *in copied to element `at` of *out when in place (ip). */
static void buffers(int32_t **in, long n, int32_t **out, long m, int r, int ip, long at) {
    long i;
    *in = ints(n);
    *out = ints(m);
    for (i = 0; i < n; ++i) (*in)[i] = val(r, i);
    if (ip) memcpy(*out + at, *in, sizeof(int32_t) * (size_t)n);
}

/* Reports a case on `out_n` ints of out and frees its buffers. */
static void finish(const char *name, int32_t *in, int32_t *out, long out_n, int ok) {
    report(name, out, sizeof(int32_t) * (size_t)out_n, ok);
    free(in);
    free(out);
}

/* ---- reductions on predefined types ----------------------------------------------- */

static const int g_counts[] = { 0, 1, 3, 7, 100, 1000, 20000 };
#define NCOUNTS (int)(sizeof g_counts / sizeof g_counts[0])
static const int g_blocks[] = { 0, 1, 3, 100 }; /* per-block counts */

static void t_allreduce(MPI_Comm comm, const char *lbl) {
    int r, p, k, ip;
    char name[128];
    whoami(comm, &r, &p);
    for (k = 0; k < NCOUNTS; ++k)
        for (ip = 0; ip < 2; ++ip) {
            int n = g_counts[k], ok = 1, i;
            int32_t *in, *out;
            buffers(&in, n, &out, n, r, ip, 0);
            MPI_Allreduce(ip ? MPI_IN_PLACE : in, out, n, MPI_INT32_T, MPI_SUM, comm);
            for (i = 0; i < n; ++i) ok &= out[i] == sum_over(p, i);
            snprintf(name, sizeof name, "allreduce sum n=%d%s [%s]", n, ip ? " in-place" : "", lbl);
            finish(name, in, out, n, ok);
        }
}

/* Predefined ops on more types, 13 elements. */
static void t_ops(MPI_Comm comm, const char *lbl) {
    int r, p, i, q, ok;
    char name[128];
    enum { N = 13 };
    int32_t imax[N], iin[N];
    uint32_t uin[N], ux[N];
    double din[N], dsum[N];
    struct { int v, i; } pin[N], pmin[N];
    struct { double v; int i; } dpin[N], dpmax[N];
    whoami(comm, &r, &p);
    for (i = 0; i < N; ++i) {
        iin[i] = val(r, i);
        uin[i] = (uint32_t)val(r, i) * 2654435761u;
        din[i] = (double)val(r, i) * 0.5;
        pin[i].v = val(r, i) % 7; pin[i].i = r;
        memset(&dpin[i], 0, sizeof dpin[i]);
        dpin[i].v = (double)(val(r, i) % 5); dpin[i].i = r;
    }
    MPI_Allreduce(iin, imax, N, MPI_INT, MPI_MAX, comm);
    for (i = 0, ok = 1; i < N; ++i) {
        int32_t m = val(0, i);
        for (q = 1; q < p; ++q) if (val(q, i) > m) m = val(q, i);
        ok &= imax[i] == m;
    }
    snprintf(name, sizeof name, "allreduce max int [%s]", lbl);
    report(name, imax, sizeof imax, ok);
    MPI_Allreduce(uin, ux, N, MPI_UNSIGNED, MPI_BXOR, comm);
    for (i = 0, ok = 1; i < N; ++i) {
        uint32_t x = 0;
        for (q = 0; q < p; ++q) x ^= (uint32_t)val(q, i) * 2654435761u;
        ok &= ux[i] == x;
    }
    snprintf(name, sizeof name, "allreduce bxor unsigned [%s]", lbl);
    report(name, ux, sizeof ux, ok);
    MPI_Allreduce(din, dsum, N, MPI_DOUBLE, MPI_SUM, comm); /* halves of small ints: exact */
    for (i = 0, ok = 1; i < N; ++i) ok &= dsum[i] == (double)sum_over(p, i) * 0.5;
    snprintf(name, sizeof name, "allreduce sum double [%s]", lbl);
    report(name, dsum, sizeof dsum, ok);
    MPI_Allreduce(pin, pmin, N, MPI_2INT, MPI_MINLOC, comm);
    for (i = 0, ok = 1; i < N; ++i) {
        int v = val(0, i) % 7, at = 0;
        for (q = 1; q < p; ++q) if (val(q, i) % 7 < v) { v = val(q, i) % 7; at = q; }
        ok &= pmin[i].v == v && pmin[i].i == at;
    }
    snprintf(name, sizeof name, "allreduce minloc 2int [%s]", lbl);
    report(name, pmin, sizeof pmin, ok);
    memset(dpmax, 0, sizeof dpmax);
    MPI_Allreduce(dpin, dpmax, N, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    for (i = 0, ok = 1; i < N; ++i) {
        double v = (double)(val(0, i) % 5);
        int at = 0;
        for (q = 1; q < p; ++q) if ((double)(val(q, i) % 5) > v) { v = (double)(val(q, i) % 5); at = q; }
        ok &= dpmax[i].v == v && dpmax[i].i == at;
    }
    snprintf(name, sizeof name, "allreduce maxloc double_int [%s]", lbl);
    report(name, dpmax, sizeof dpmax, ok);
}

static void t_reduce(MPI_Comm comm, const char *lbl) {
    static const int counts[] = { 0, 1, 5, 500, 3000 };
    int r, p, root, k, ip;
    char name[128];
    whoami(comm, &r, &p);
    for (root = 0; root < p; ++root)
        for (k = 0; k < 5; ++k)
            for (ip = 0; ip < 2; ++ip) {
                int n = counts[k], ok = 1, i, me = r == root;
                int32_t *in, *out;
                if (ip && root != 0 && n > 500) continue; /* MPICH 4.0.2 crashes there */
                buffers(&in, n, &out, n, r, ip && me, 0);
                MPI_Reduce(ip && me ? MPI_IN_PLACE : in, out, n, MPI_INT32_T, MPI_SUM, root, comm);
                for (i = 0; i < n; ++i) ok &= me ? out[i] == sum_over(p, i) : out[i] == POISON;
                snprintf(name, sizeof name, "reduce sum root=%d n=%d%s [%s]", root, n,
                         ip ? " in-place" : "", lbl);
                finish(name, in, out, n, ok);
            }
}

/* Irregular counts: rank i keeps (3i + 1) % 5 elements (zeros included). */
static void t_reduce_scatter(MPI_Comm comm, const char *lbl) {
    int r, p, ip, i, total = 0, before = 0, *rc;
    char name[128];
    whoami(comm, &r, &p);
    rc = (int *)malloc(sizeof(int) * (size_t)p);
    for (i = 0; i < p; ++i) {
        rc[i] = (3 * i + 1) % 5;
        if (i < r) before += rc[i];
        total += rc[i];
    }
    for (ip = 0; ip < 2; ++ip) {
        int32_t *in = ints(total), *out = ints(total);
        int ok = 1;
        for (i = 0; i < total; ++i) in[i] = val(r, i);
        if (ip) memcpy(out, in, sizeof(int32_t) * (size_t)total);
        MPI_Reduce_scatter(ip ? MPI_IN_PLACE : in, out, rc, MPI_INT32_T, MPI_SUM, comm);
        for (i = 0; i < rc[r]; ++i) ok &= out[i] == sum_over(p, before + i);
        if (!ip) for (i = rc[r]; i < total; ++i) ok &= out[i] == POISON;
        snprintf(name, sizeof name, "reduce_scatter sum irregular%s [%s]", ip ? " in-place" : "", lbl);
        report(name, out, sizeof(int32_t) * (size_t)rc[r], ok);
        free(in);
        free(out);
    }
    free(rc);
}

static void t_reduce_scatter_block(MPI_Comm comm, const char *lbl) {
    static const int counts[] = { 0, 1, 7 };
    int r, p, k, ip, i;
    char name[128];
    whoami(comm, &r, &p);
    for (k = 0; k < 3; ++k)
        for (ip = 0; ip < 2; ++ip) {
            int n = counts[k], ok = 1;
            int32_t *in, *out;
            buffers(&in, (long)n * p, &out, (long)n * p, r, ip, 0);
            MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : in, out, n, MPI_INT32_T, MPI_SUM, comm);
            for (i = 0; i < n; ++i) ok &= out[i] == sum_over(p, (long)r * n + i);
            snprintf(name, sizeof name, "reduce_scatter_block sum n=%d%s [%s]", n,
                     ip ? " in-place" : "", lbl);
            finish(name, in, out, n, ok);
        }
}

/* ---- data movement ------------------------------------------------------------------ */

/* Allgather (a2a = 0) and alltoall (a2a = 1): block q of out comes from rank q. */
static void t_blocks(MPI_Comm comm, const char *lbl, int a2a) {
    int r, p, k, ip, i, q;
    char name[128];
    whoami(comm, &r, &p);
    for (k = 0; k < 4; ++k)
        for (ip = 0; ip < 2; ++ip) {
            int n = g_blocks[k], ok = 1;
            long from = a2a ? (long)r * n : 0; /* where rank q's block for r starts */
            int32_t *in, *out;
            buffers(&in, a2a ? (long)n * p : n, &out, (long)n * p, r, ip, a2a ? 0 : (long)r * n);
            if (a2a) MPI_Alltoall(ip ? MPI_IN_PLACE : in, n, MPI_INT32_T, out, n, MPI_INT32_T, comm);
            else MPI_Allgather(ip ? MPI_IN_PLACE : in, n, MPI_INT32_T, out, n, MPI_INT32_T, comm);
            for (q = 0; q < p; ++q)
                for (i = 0; i < n; ++i) ok &= out[(long)q * n + i] == val(q, from + i);
            snprintf(name, sizeof name, "%s n=%d%s [%s]", a2a ? "alltoall" : "allgather", n,
                     ip ? " in-place" : "", lbl);
            finish(name, in, out, (long)n * p, ok);
        }
}

/* layout 0: packed displacements; 1: gaps of 2; 2: blocks in reverse rank order with gaps. */
static void t_allgatherv(MPI_Comm comm, const char *lbl) {
    int r, p, layout, ip, i, q;
    char name[128];
    whoami(comm, &r, &p);
    for (layout = 0; layout < 3; ++layout)
        for (ip = 0; ip < 2; ++ip) {
            int *rc, *dp, span = 0, ok = 1;
            int32_t *in, *out;
            if (p == 1 && layout && !ip) continue; /* MPICH 4.0.2 ignores displs at p = 1 */
            rc = (int *)malloc(sizeof(int) * (size_t)p);
            dp = (int *)malloc(sizeof(int) * (size_t)p);
            for (q = 0; q < p; ++q) rc[q] = q % 3 == 1 ? 0 : q + 2;
            for (q = 0; q < p; ++q) {
                int owner = layout == 2 ? p - 1 - q : q; /* the block placed q-th */
                dp[owner] = span + (layout ? 2 : 0);
                span = dp[owner] + rc[owner];
            }
            in = ints(rc[r]);
            out = ints(span);
            for (i = 0; i < rc[r]; ++i) in[i] = val(r, i);
            if (ip) memcpy(out + dp[r], in, sizeof(int32_t) * (size_t)rc[r]);
            MPI_Allgatherv(ip ? MPI_IN_PLACE : in, rc[r], MPI_INT32_T, out, rc, dp, MPI_INT32_T, comm);
            for (q = 0; q < p; ++q)
                for (i = 0; i < rc[q]; ++i) ok &= out[dp[q] + i] == val(q, i);
            for (i = 0; i < span; ++i) { /* gaps untouched */
                int covered = 0;
                for (q = 0; q < p; ++q) covered |= i >= dp[q] && i < dp[q] + rc[q];
                if (!covered) ok &= out[i] == POISON;
            }
            snprintf(name, sizeof name, "allgatherv %s%s [%s]",
                     layout == 0 ? "packed" : layout == 1 ? "gaps" : "reversed", ip ? " in-place" : "", lbl);
            report(name, out, sizeof(int32_t) * (size_t)span, ok);
            free(in);
            free(out);
            free(rc);
            free(dp);
        }
}

static void t_bcast(MPI_Comm comm, const char *lbl) {
    static const int counts[] = { 0, 1, 100, 10000 };
    int r, p, root, k, i;
    char name[128];
    whoami(comm, &r, &p);
    for (root = 0; root < p; ++root)
        for (k = 0; k < 4; ++k) {
            int n = counts[k], ok = 1;
            int32_t *buf = ints(n);
            if (r == root) for (i = 0; i < n; ++i) buf[i] = val(root, i);
            MPI_Bcast(buf, n, MPI_INT32_T, root, comm);
            for (i = 0; i < n; ++i) ok &= buf[i] == val(root, i);
            snprintf(name, sizeof name, "bcast root=%d n=%d [%s]", root, n, lbl);
            report(name, buf, sizeof(int32_t) * (size_t)n, ok);
            free(buf);
        }
}

static void t_gather_scatter(MPI_Comm comm, const char *lbl) {
    static const int counts[] = { 0, 1, 5, 300 };
    int r, p, root, k, ip, i, q;
    char name[128];
    whoami(comm, &r, &p);
    for (root = 0; root < p; ++root)
        for (k = 0; k < 4; ++k)
            for (ip = 0; ip < 2; ++ip) {
                int n = counts[k], ok = 1, me = r == root;
                int32_t *in = ints(n), *all = ints((long)n * p);
                for (i = 0; i < n; ++i) in[i] = val(r, i);
                if (ip && me) memcpy(all + (long)r * n, in, sizeof(int32_t) * (size_t)n);
                MPI_Gather(ip && me ? MPI_IN_PLACE : in, n, MPI_INT32_T, all, n, MPI_INT32_T, root, comm);
                for (q = 0; q < p && me; ++q)
                    for (i = 0; i < n; ++i) ok &= all[(long)q * n + i] == val(q, i);
                snprintf(name, sizeof name, "gather root=%d n=%d%s [%s]", root, n, ip ? " in-place" : "", lbl);
                report(name, me ? all : NULL, me ? sizeof(int32_t) * (size_t)(n * p) : 0, ok);
                /* scatter back what rank `root` holds: block q of val(root + 7, .) */
                for (i = 0; i < n * p; ++i) all[i] = me ? val(root + 7, i) : POISON;
                for (i = 0; i < n; ++i) in[i] = me && ip ? val(root + 7, (long)root * n + i) : POISON;
                MPI_Scatter(all, n, MPI_INT32_T, ip && me ? MPI_IN_PLACE : in, n, MPI_INT32_T, root, comm);
                ok = 1;
                for (i = 0; i < n; ++i) ok &= in[i] == (me && ip ? val(root + 7, (long)root * n + i)
                                                               : val(root + 7, (long)r * n + i));
                snprintf(name, sizeof name, "scatter root=%d n=%d%s [%s]", root, n, ip ? " in-place" : "", lbl);
                report(name, in, sizeof(int32_t) * (size_t)n, ok);
                free(in);
                free(all);
            }
}

static void t_barrier(MPI_Comm comm, const char *lbl) {
    char name[128];
    int i;
    for (i = 0; i < 3; ++i) MPI_Barrier(comm);
    snprintf(name, sizeof name, "barrier x3 [%s]", lbl);
    report(name, NULL, 0, 1);
}

/* ---- user ops ------------------------------------------------------------------------- */

/* 2x2 uint32 matrices, inout = in * inout: not commutative. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    const uint32_t *a = (const uint32_t *)in;
    uint32_t *b = (uint32_t *)inout;
    int k;
    (void)dt;
    for (k = 0; k < *len; ++k, a += 4, b += 4) {
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0; b[1] = r1; b[2] = r2; b[3] = r3;
    }
}

static void mat_of(int r, long i, uint32_t m[4]) {
    int j;
    for (j = 0; j < 4; ++j) m[j] = (uint32_t)((r * 7 + i * 3 + j * 5 + (r * j) % 3) % 5);
}

/* x_lo * x_(lo+1) * ... * x_(hi-1) of element i (canonical order). */
static void mat_product(int lo, int hi, long i, uint32_t out[4]) {
    uint32_t m[4];
    int len = 1, q;
    mat_of(hi - 1, i, out);
    for (q = hi - 2; q >= lo; --q) { mat_of(q, i, m); matmul(m, out, &len, NULL); }
}

static void isum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int k;
    (void)dt;
    for (k = 0; k < *len; ++k) ((int *)inout)[k] += ((const int *)in)[k];
}

/* Sums for the derived types of t_passthrough: a vector of 2 ints one in
   two (extent 3 ints), and 2 contiguous ints. */
static void vecsum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int k;
    (void)dt;
    for (k = 0; k < *len; ++k) {
        ((int *)inout)[3 * k] += ((const int *)in)[3 * k];
        ((int *)inout)[3 * k + 2] += ((const int *)in)[3 * k + 2];
    }
}
static void pairsum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int k;
    (void)dt;
    for (k = 0; k < 2 * *len; ++k) ((int *)inout)[k] += ((const int *)in)[k];
}

static void t_user_ops(MPI_Comm comm, const char *lbl) {
    MPI_Datatype mat;
    MPI_Op mop, sop;
    int r, p, k, i, root, q;
    char name[128];
    static const int counts[] = { 1, 3, 50 };
    whoami(comm, &r, &p);
    MPI_Type_contiguous(4, MPI_UINT32_T, &mat);
    MPI_Type_commit(&mat);
    MPI_Op_create(matmul, 0, &mop);
    MPI_Op_create(isum, 1, &sop);
    for (k = 0; k < 3; ++k) {
        int n = counts[k], ok = 1;
        uint32_t *in = (uint32_t *)malloc(16 * (size_t)n * (size_t)p), *out = (uint32_t *)malloc(16 * (size_t)n * (size_t)p);
        uint32_t want[4];
        for (i = 0; i < n * p; ++i) mat_of(r, i, in + 4 * i);
        MPI_Allreduce(in, out, n, mat, mop, comm);
        for (i = 0; i < n; ++i) { mat_product(0, p, i, want); ok &= memcmp(want, out + 4 * i, 16) == 0; }
        snprintf(name, sizeof name, "allreduce matmul (non-commutative) n=%d [%s]", n, lbl);
        report(name, out, 16 * (size_t)n, ok);
        for (root = 0; root < p; root += p > 1 ? p - 1 : 1) {
            memset(out, 0, 16 * (size_t)n);
            MPI_Reduce(in, out, n, mat, mop, root, comm);
            for (i = 0, ok = 1; i < n && r == root; ++i) {
                mat_product(0, p, i, want);
                ok &= memcmp(want, out + 4 * i, 16) == 0;
            }
            snprintf(name, sizeof name, "reduce matmul root=%d n=%d [%s]", root, n, lbl);
            report(name, out, r == root ? 16 * (size_t)n : 0, ok);
        }
        memcpy(out, in, 16 * (size_t)n * (size_t)p);
        MPI_Reduce_scatter_block(MPI_IN_PLACE, out, n, mat, mop, comm);
        for (i = 0, ok = 1; i < n; ++i) {
            mat_product(0, p, (long)r * n + i, want);
            ok &= memcmp(want, out + 4 * i, 16) == 0;
        }
        snprintf(name, sizeof name, "reduce_scatter_block matmul in-place n=%d [%s]", n, lbl);
        report(name, out, 16 * (size_t)n, ok);
        free(in);
        free(out);
    }
    { /* irregular: rank q keeps q + 1 matrices */
        int *rc = (int *)malloc(sizeof(int) * (size_t)p), total = 0, before = 0, ok = 1;
        uint32_t *in, *out, want[4];
        for (q = 0; q < p; ++q) { rc[q] = q + 1; total += rc[q]; if (q < r) before += rc[q]; }
        in = (uint32_t *)malloc(16 * (size_t)total);
        out = (uint32_t *)malloc(16 * (size_t)total);
        for (i = 0; i < total; ++i) mat_of(r, i, in + 4 * i);
        MPI_Reduce_scatter(in, out, rc, mat, mop, comm);
        for (i = 0; i < rc[r]; ++i) { mat_product(0, p, before + i, want); ok &= memcmp(want, out + 4 * i, 16) == 0; }
        snprintf(name, sizeof name, "reduce_scatter matmul irregular [%s]", lbl);
        report(name, out, 16 * (size_t)rc[r], ok);
        free(in); free(out); free(rc);
    }
    {
        int in[10], out[10], ok = 1;
        for (i = 0; i < 10; ++i) in[i] = val(r, i);
        MPI_Allreduce(in, out, 10, MPI_INT, sop, comm);
        for (i = 0; i < 10; ++i) ok &= out[i] == sum_over(p, i);
        snprintf(name, sizeof name, "allreduce user sum (commutative) int [%s]", lbl);
        report(name, out, sizeof out, ok);
    }
    MPI_Op_free(&mop);
    MPI_Op_free(&sop);
    MPI_Type_free(&mat);
}

/* ---- layouts that differ between ranks --------------------------------------------------- */

/* Two ints stored in reverse order: the type signature (int, int) reads offset 4 first. */
static MPI_Datatype swapped_pair(void) {
    MPI_Datatype t, u;
    int bl[2] = { 1, 1 };
    MPI_Aint disp[2] = { 4, 0 };
    MPI_Datatype ty[2] = { MPI_INT, MPI_INT };
    MPI_Type_create_struct(2, bl, disp, ty, &t);
    MPI_Type_create_resized(t, 0, 8, &u);
    MPI_Type_free(&t);
    MPI_Type_commit(&u);
    return u;
}

/* Bcast of n ints: rank % 3 == 0 contiguous, 1 a strided vector (holes
   poisoned), 2 swapped pairs. The same type signature everywhere. */
static void t_bcast_layouts(MPI_Comm comm, const char *lbl) {
    MPI_Datatype vec, sw = swapped_pair();
    int r, p, root, i;
    const int n = 40;
    char name[128];
    whoami(comm, &r, &p);
    MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (root = 0; root < p; ++root) {
        int32_t *buf = ints(2 * n);
        int ok = 1, kind = r % 3;
        for (i = 0; i < n && r == root; ++i) {
            int at = kind == 0 ? i : kind == 1 ? 2 * i : (i ^ 1);
            buf[at] = val(root, i);
        }
        if (kind == 0) MPI_Bcast(buf, n, MPI_INT, root, comm);
        else if (kind == 1) MPI_Bcast(buf, 1, vec, root, comm);
        else MPI_Bcast(buf, n / 2, sw, root, comm);
        for (i = 0; i < n; ++i) {
            int at = kind == 0 ? i : kind == 1 ? 2 * i : (i ^ 1);
            ok &= buf[at] == val(root, i);
            if (kind == 1) ok &= buf[2 * i + 1] == POISON;
        }
        snprintf(name, sizeof name, "bcast mixed layouts root=%d [%s]", root, lbl);
        report(name, buf, sizeof(int32_t) * 2 * (size_t)n, ok);
        free(buf);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&sw);
}

/* Gather / scatter of columns: the root's type is a resized column vector
   of an n x p matrix, the others send or receive n contiguous ints. */
static void t_gather_columns(MPI_Comm comm, const char *lbl) {
    MPI_Datatype col0, col;
    int r, p, root, i, q;
    const int n = 6;
    char name[128];
    whoami(comm, &r, &p);
    MPI_Type_vector(n, 1, p, MPI_INT, &col0);
    MPI_Type_create_resized(col0, 0, sizeof(int), &col);
    MPI_Type_free(&col0);
    MPI_Type_commit(&col);
    for (root = 0; root < p; ++root) {
        int32_t *mine = ints(n), *mat = ints((long)n * p);
        int ok = 1, me = r == root;
        for (i = 0; i < n; ++i) mine[i] = val(r, i);
        if (me) MPI_Gather(mine, n, MPI_INT, mat, 1, col, root, comm);
        else MPI_Gather(mine, n, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, root, comm);
        for (q = 0; q < p && me; ++q)
            for (i = 0; i < n; ++i) ok &= mat[(long)i * p + q] == val(q, i);
        snprintf(name, sizeof name, "gather columns root=%d [%s]", root, lbl);
        report(name, mat, me ? sizeof(int32_t) * (size_t)(n * p) : 0, ok);
        for (i = 0; i < n * p; ++i) mat[i] = me ? val(root + 3, i) : POISON;
        for (i = 0; i < n; ++i) mine[i] = POISON;
        if (me) MPI_Scatter(mat, 1, col, mine, n, MPI_INT, root, comm);
        else MPI_Scatter(NULL, 0, MPI_DATATYPE_NULL, mine, n, MPI_INT, root, comm);
        for (i = 0, ok = 1; i < n; ++i) ok &= mine[i] == val(root + 3, (long)i * p + r);
        snprintf(name, sizeof name, "scatter columns root=%d [%s]", root, lbl);
        report(name, mine, sizeof(int32_t) * (size_t)n, ok);
        free(mine);
        free(mat);
    }
    MPI_Type_free(&col);
}

/* Allgather and alltoall where the receive type is a strided vector on odd ranks. */
static void t_strided_receive(MPI_Comm comm, const char *lbl) {
    MPI_Datatype two;
    int r, p, i, q;
    const int n = 4;
    char name[128];
    int32_t *in, *out;
    int ok = 1, odd;
    whoami(comm, &r, &p);
    odd = r & 1;
    MPI_Type_vector(n, 1, 2, MPI_INT, &two);   /* n ints, one in two */
    MPI_Type_commit(&two);
    in = ints(n * p);
    out = ints(2L * n * p);
    for (i = 0; i < n * p; ++i) in[i] = val(r, i);
    if (odd) MPI_Allgather(in, n, MPI_INT, out, 1, two, comm);
    else MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
    for (q = 0; q < p; ++q)
        for (i = 0; i < n; ++i) {
            /* block q of the odd layout starts at q * extent(two) = q * (2n - 1) ints */
            long at = odd ? (long)q * (2 * n - 1) + 2 * i : (long)q * n + i;
            ok &= out[at] == val(q, i);
        }
    snprintf(name, sizeof name, "allgather strided receive on odd ranks [%s]", lbl);
    report(name, out, sizeof(int32_t) * 2 * (size_t)(n * p), ok);
    free(out);
    out = ints(2L * n * p);
    if (odd) MPI_Alltoall(in, n, MPI_INT, out, 1, two, comm);
    else MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm);
    for (q = 0, ok = 1; q < p; ++q)
        for (i = 0; i < n; ++i) {
            long at = odd ? (long)q * (2 * n - 1) + 2 * i : (long)q * n + i;
            ok &= out[at] == val(q, (long)r * n + i);
        }
    snprintf(name, sizeof name, "alltoall strided receive on odd ranks [%s]", lbl);
    report(name, out, sizeof(int32_t) * 2 * (size_t)(n * p), ok);
    free(in);
    free(out);
    MPI_Type_free(&two);
}

static void t_pairs_bcast(MPI_Comm comm, const char *lbl) {
    struct { double v; int i; } x[3];
    int r, i, ok = 1;
    char name[128];
    MPI_Comm_rank(comm, &r);
    memset(x, 0, sizeof x);
    for (i = 0; i < 3 && r == 0; ++i) { x[i].v = i + 0.25; x[i].i = 10 * i; }
    MPI_Bcast(x, 3, MPI_DOUBLE_INT, 0, comm);
    for (i = 0; i < 3; ++i) ok &= x[i].v == i + 0.25 && x[i].i == 10 * i;
    snprintf(name, sizeof name, "bcast double_int (padded pairs) [%s]", lbl);
    report(name, x, sizeof x, ok);
}

/* MPI_BOTTOM with a datatype of absolute addresses (MPI_Get_address). */
static int32_t g_abs[16];

/* As MPI defines it, the data of element 0 is at the buffer plus the
   datatype's true lower bound (here the absolute address). */
static void sum16(void *in, void *inout, int *len, MPI_Datatype *dt) {
    MPI_Aint lb, extent;
    int k;
    const int *a;
    int *b;
    MPI_Type_get_true_extent(*dt, &lb, &extent);
    a = (const int *)((char *)in + lb);
    b = (int *)((char *)inout + lb);
    for (k = 0; k < 16 * *len; ++k) b[k] += a[k];
}

static void t_bottom(MPI_Comm comm, const char *lbl) {
    MPI_Datatype t;
    MPI_Aint addr;
    MPI_Op op;
    int bl = 16, r, p, i, ok = 1, root;
    char name[128];
    whoami(comm, &r, &p);
    root = p - 1;
    MPI_Get_address(g_abs, &addr);
    MPI_Type_create_hindexed(1, &bl, &addr, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Op_create(sum16, 1, &op);
    for (i = 0; i < 16; ++i) g_abs[i] = r == root ? val(root, i) : POISON;
    MPI_Bcast(MPI_BOTTOM, 1, t, root, comm);
    for (i = 0; i < 16; ++i) ok &= g_abs[i] == val(root, i);
    snprintf(name, sizeof name, "bcast from MPI_BOTTOM, absolute datatype [%s]", lbl);
    report(name, g_abs, sizeof g_abs, ok);
    for (i = 0; i < 16; ++i) g_abs[i] = val(r, i);
    MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, t, op, comm);
    for (i = 0, ok = 1; i < 16; ++i) ok &= g_abs[i] == sum_over(p, i);
    snprintf(name, sizeof name, "allreduce in place at MPI_BOTTOM, user op [%s]", lbl);
    report(name, g_abs, sizeof g_abs, ok);
    MPI_Op_free(&op);
    MPI_Type_free(&t);
}

/* ---- what passes through -------------------------------------------------------------------- */

static void t_passthrough(MPI_Comm comm, const char *lbl) {
    MPI_Datatype holey, pair;
    MPI_Op vop, pop;
    int r, p, i, ok = 1;
    char name[128];
    int32_t in[8], out[8];
    double _Complex z = 0, zs = 0;
    whoami(comm, &r, &p);
    MPI_Type_vector(2, 1, 2, MPI_INT, &holey);
    MPI_Type_commit(&holey);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(vecsum, 1, &vop);
    MPI_Op_create(pairsum, 1, &pop);
    for (i = 0; i < 8; ++i) { in[i] = val(r, i); out[i] = POISON; }
    MPI_Allreduce(in, out, 2, holey, vop, comm); /* a user op on a type with holes */
    for (i = 0; i < 8; ++i) /* elements at ints 0, 2 and 3, 5 (extent 3 ints) */
        ok &= (i == 0 || i == 2 || i == 3 || i == 5) ? out[i] == sum_over(p, i) : out[i] == POISON;
    snprintf(name, sizeof name, "allreduce user op on holey type [%s]", lbl);
    report(name, out, sizeof out, ok);
    for (i = 0; i < 8; ++i) out[i] = POISON;
    MPI_Reduce(in, out, 4, pair, pop, 0, comm); /* a user op on a contiguous derived type: served */
    for (i = 0, ok = 1; i < 8 && r == 0; ++i) ok &= out[i] == sum_over(p, i);
    snprintf(name, sizeof name, "reduce user sum on contiguous derived type [%s]", lbl);
    report(name, out, sizeof out, ok);
    z = (double)r + 2.0 * (double)r * I;
    MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm); /* served: 2 doubles */
    ok = zs == (double)(p * (p - 1) / 2) + 2.0 * (double)(p * (p - 1) / 2) * I;
    snprintf(name, sizeof name, "allreduce sum double complex [%s]", lbl);
    report(name, &zs, sizeof zs, ok);
    z = I;
    MPI_Allreduce(&z, &zs, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, comm); /* passes: MPI's formula */
    ok = p % 4 == 0 ? zs == 1 : p % 4 == 1 ? zs == I : p % 4 == 2 ? zs == -1 : zs == -I;
    snprintf(name, sizeof name, "allreduce prod double complex [%s]", lbl);
    report(name, &zs, sizeof zs, ok);
    MPI_Op_free(&vop);
    MPI_Op_free(&pop);
    MPI_Type_free(&holey);
    MPI_Type_free(&pair);
}

/* Invalid arguments under MPI_ERRORS_RETURN: MPI's own error classes. */
static void t_errors(MPI_Comm comm, const char *lbl) {
    MPI_Comm d;
    int p, cls1 = -1, cls2 = -1, cls3 = -1, cls4 = -1, x = 1, y = 0;
    char name[160];
    MPI_Comm_size(comm, &p);
    MPI_Comm_dup(comm, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Error_class(MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM, p, d), &cls1); /* root out of range */
    MPI_Error_class(MPI_Bcast(&x, -1, MPI_INT, 0, d), &cls2);              /* negative count */
    MPI_Error_class(MPI_Allreduce(NULL, &y, 1, MPI_INT, MPI_SUM, d), &cls3); /* NULL buffers */
    MPI_Error_class(MPI_Allgather(&x, 1, MPI_INT, NULL, 1, MPI_INT, d), &cls4);
    snprintf(name, sizeof name, "errors: bad root class %d, negative count %d, NULL buffers %d %d [%s]",
             cls1, cls2, cls3, cls4, lbl);
    report(name, NULL, 0, cls1 == MPI_ERR_ROOT && cls2 == MPI_ERR_COUNT && cls3 == MPI_ERR_BUFFER &&
                          cls4 == MPI_ERR_BUFFER);
    MPI_Comm_free(&d);
}

static void t_intercomm(const char *lbl) {
    MPI_Comm half, inter;
    int color = W < P / 2, x = val(W, 1), y = 0, want = 0, q, ok;
    char name[128];
    if (P < 2) return;
    MPI_Comm_split(MPI_COMM_WORLD, color, W, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? P / 2 : 0, 99, &inter);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, inter); /* the other group's sum */
    for (q = 0; q < P; ++q) if ((q < P / 2) != color) want += val(q, 1);
    ok = y == want;
    MPI_Barrier(inter);
    snprintf(name, sizeof name, "intercommunicator allreduce [%s]", lbl);
    report(name, &y, sizeof y, ok);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
}

#if MPI_VERSION >= 4
static void isum_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    MPI_Count k;
    (void)dt;
    for (k = 0; k < *len; ++k) ((int *)inout)[k] += ((const int *)in)[k];
}

static void t_large_count_api(MPI_Comm comm, const char *lbl) {
    int r, p, i, q, ok = 1;
    MPI_Op op;
    MPI_Count *rc;
    MPI_Aint *dp;
    int32_t in[9], out[9], *all;
    char name[128];
    whoami(comm, &r, &p);
    MPI_Op_create_c(isum_c, 1, &op);
    for (i = 0; i < 9; ++i) in[i] = val(r, i);
    MPI_Allreduce_c(in, out, 9, MPI_INT, op, comm);
    for (i = 0; i < 9; ++i) ok &= out[i] == sum_over(p, i);
    snprintf(name, sizeof name, "allreduce_c with MPI_Op_create_c [%s]", lbl);
    report(name, out, sizeof out, ok);
    for (i = 0; i < 9; ++i) out[i] = r == p - 1 ? val(p - 1, i) : POISON;
    MPI_Bcast_c(out, 9, MPI_INT, p - 1, comm);
    for (i = 0, ok = 1; i < 9; ++i) ok &= out[i] == val(p - 1, i);
    snprintf(name, sizeof name, "bcast_c [%s]", lbl);
    report(name, out, sizeof out, ok);
    rc = (MPI_Count *)malloc(sizeof(MPI_Count) * (size_t)p);
    dp = (MPI_Aint *)malloc(sizeof(MPI_Aint) * (size_t)p);
    for (q = 0; q < p; ++q) { rc[q] = q % 2 + 1; dp[q] = 3 * q; }
    all = ints(3L * p);
    MPI_Allgatherv_c(in, rc[r], MPI_INT, all, rc, dp, MPI_INT, comm);
    for (q = 0, ok = 1; q < p; ++q)
        for (i = 0; i < rc[q]; ++i) ok &= all[dp[q] + i] == val(q, i);
    snprintf(name, sizeof name, "allgatherv_c [%s]", lbl);
    report(name, all, sizeof(int32_t) * 3 * (size_t)p, ok);
    for (q = 0; q < p; ++q) rc[q] = 2;
    free(all);
    all = ints(2L * p);
    for (i = 0; i < 2 * p; ++i) all[i] = val(r, i);
    MPI_Reduce_scatter_c(MPI_IN_PLACE, all, rc, MPI_INT, MPI_SUM, comm);
    for (i = 0, ok = 1; i < 2; ++i) ok &= all[i] == sum_over(p, 2L * r + i);
    snprintf(name, sizeof name, "reduce_scatter_c in-place [%s]", lbl);
    report(name, all, sizeof(int32_t) * 2, ok);
    free(all);
    free(rc);
    free(dp);
    MPI_Op_free(&op);
}
#endif

static void run_all(MPI_Comm comm, const char *lbl) {
    t_allreduce(comm, lbl);
    t_ops(comm, lbl);
    t_reduce(comm, lbl);
    t_reduce_scatter(comm, lbl);
    t_reduce_scatter_block(comm, lbl);
    t_blocks(comm, lbl, 0);
    t_allgatherv(comm, lbl);
    t_bcast(comm, lbl);
    t_blocks(comm, lbl, 1);
    t_gather_scatter(comm, lbl);
    t_barrier(comm, lbl);
    t_user_ops(comm, lbl);
    t_bcast_layouts(comm, lbl);
    t_gather_columns(comm, lbl);
    t_strided_receive(comm, lbl);
    t_pairs_bcast(comm, lbl);
    t_bottom(comm, lbl);
    t_passthrough(comm, lbl);
#if MPI_VERSION >= 4
    t_large_count_api(comm, lbl);
#endif
}

int main(int argc, char **argv) {
    MPI_Comm dup, split;
    int round;
    int world_only = argc > 1 && strcmp(argv[1], "world") == 0; /* the quick run */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &W);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    run_all(MPI_COMM_WORLD, "world");
    if (world_only) goto done;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run_all(dup, "dup");
    MPI_Comm_split(MPI_COMM_WORLD, W % 2, -W, &split); /* halves, ranks reversed */
    t_allreduce(split, "split");
    t_reduce(split, "split");
    t_allgatherv(split, "split");
    t_gather_columns(split, "split");
    t_user_ops(split, "split");
    MPI_Comm_free(&split);
    for (round = 0; round < 3; ++round) { /* freed and recreated */
        MPI_Comm c;
        char lbl[32];
        MPI_Comm_dup(dup, &c);
        snprintf(lbl, sizeof lbl, "recreated %d", round);
        t_reduce_scatter(c, lbl);
        t_bcast(c, lbl);
        MPI_Comm_free(&c);
    }
    MPI_Comm_free(&dup);
done:
    t_errors(MPI_COMM_WORLD, "world");
    t_intercomm("world");
    if (!g_log) report("empty log", NULL, 0, 1);
    round = print_logs();
    if (W == 0) printf("%s: %d wrong\n", round ? "FAILED" : "done", round);
    free(g_log);
    MPI_Finalize();
    return g_wrong ? 1 : 0;
}
