/* nonblock.c - an unmodified MPI program for the redcoll drop-in
   (test/pmpi/run.sh): non-blocking (MPI_I<coll>) and persistent (MPI-4's
   MPI_<coll>_init with MPI_Start / MPI_Startall) collectives.

   Includes only mpi.h. Every served collective started and completed with
   MPI_Wait; several outstanding at once, beside the program's own
   MPI_Isend / MPI_Irecv ring, completed with MPI_Waitall, MPI_Waitany,
   MPI_Testall, MPI_Testany, MPI_Waitsome, MPI_Testsome and MPI_Test in
   turn; ten of one shape completed in reverse order; persistent ones
   started again with new data, several at once with MPI_Startall, freed;
   MPI_IN_PLACE; a non-commutative user op; datatypes with holes (staged by
   the drop-in) on the receiving side. Each rank checks its results against
   a sequential reference; rank 0 prints one line per case ("ok" or
   "WRONG") and run.sh compares the output with and without LD_PRELOAD. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int R, P, g_wrong, g_cases;
/* `nonblock gather_scatter_init`: also MPI_Gather_init and MPI_Scatter_init,
   which MPICH 4.0.2 itself gets wrong (the gather's root holds garbage at
   -n 2; at -n 3 either fails in MPI_Wait with "Invalid communicator"), so
   run.sh runs them only with the drop-in, checked against the reference. */
static int g_rooted_init;
static MPI_Status g_sts[16]; /* statuses of the array calls (GCC warns at MPI_STATUSES_IGNORE) */

static int32_t val(int r, long i, int seed) { return (int32_t)(((long)r * 131 + i * 7919 + 17 + seed * 101) % 1000) - 500; }

static int32_t sum_over(long i, int seed) {
    int32_t s = 0;
    int r;
    for (r = 0; r < P; ++r) s += val(r, i, seed);
    return s;
}

/* Every rank's verdict for one case; rank 0 prints it. */
static void verdict(const char *name, int ok) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) g_wrong++;
    g_cases++;
    if (R == 0) printf("%-60s %s\n", name, all ? "ok" : "WRONG");
}

static int32_t *ints(long n) {
    int32_t *p = (int32_t *)calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    if (!p) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    return p;
}

/* ---- one started collective of each kind ---- */

typedef struct one {
    int32_t *in, *out, *ref;
    long     in_n, out_n;
    int     *counts, *displs;
} one;

static void one_free(one *o) { free(o->in); free(o->out); free(o->ref); free(o->counts); free(o->displs); }

/* Starts collective k (0..10) with n elements per rank (or block) and seed;
   fills o->ref with what this rank must hold. */
static void start_k(int k, long n, int seed, int root, one *o, MPI_Request *q) {
    long i, b, pn = n * P;
    int r;
    memset(o, 0, sizeof *o);
    o->counts = (int *)calloc((size_t)P, sizeof(int));
    o->displs = (int *)calloc((size_t)P, sizeof(int));
    switch (k) {
    case 0: /* allreduce */
        o->in = ints(n); o->out = ints(n); o->ref = ints(n); o->out_n = n;
        for (i = 0; i < n; ++i) { o->in[i] = val(R, i, seed); o->ref[i] = sum_over(i, seed); }
        MPI_Iallreduce(o->in, o->out, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, q);
        break;
    case 1: /* reduce */
        o->in = ints(n); o->out = ints(n); o->ref = ints(n); o->out_n = R == root ? n : 0;
        for (i = 0; i < n; ++i) { o->in[i] = val(R, i, seed); o->ref[i] = sum_over(i, seed); }
        MPI_Ireduce(o->in, o->out, (int)n, MPI_INT32_T, MPI_SUM, root, MPI_COMM_WORLD, q);
        break;
    case 2: /* reduce_scatter: rank r gets n + r % 2 */
        for (r = 0, b = 0; r < P; ++r) { o->counts[r] = (int)(n + r % 2); b += o->counts[r]; }
        o->in = ints(b); o->out = ints(o->counts[R]); o->ref = ints(o->counts[R]); o->out_n = o->counts[R];
        for (i = 0; i < b; ++i) o->in[i] = val(R, i, seed);
        for (r = 0, b = 0; r < R; ++r) b += o->counts[r];
        for (i = 0; i < o->counts[R]; ++i) o->ref[i] = sum_over(b + i, seed);
        MPI_Ireduce_scatter(o->in, o->out, o->counts, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, q);
        break;
    case 3: /* reduce_scatter_block */
        o->in = ints(pn); o->out = ints(n); o->ref = ints(n); o->out_n = n;
        for (i = 0; i < pn; ++i) o->in[i] = val(R, i, seed);
        for (i = 0; i < n; ++i) o->ref[i] = sum_over(R * n + i, seed);
        MPI_Ireduce_scatter_block(o->in, o->out, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, q);
        break;
    case 4: /* allgather */
        o->in = ints(n); o->out = ints(pn); o->ref = ints(pn); o->out_n = pn;
        for (i = 0; i < n; ++i) o->in[i] = val(R, i, seed);
        for (r = 0; r < P; ++r) for (i = 0; i < n; ++i) o->ref[r * n + i] = val(r, i, seed);
        MPI_Iallgather(o->in, (int)n, MPI_INT32_T, o->out, (int)n, MPI_INT32_T, MPI_COMM_WORLD, q);
        break;
    case 5: /* allgatherv, blocks in reverse rank order with a gap after each */
        for (r = P - 1, b = 0; r >= 0; --r) { o->counts[r] = (int)(n + r % 3); o->displs[r] = (int)b; b += o->counts[r] + 1; }
        o->in = ints(o->counts[R]); o->out = ints(b); o->ref = ints(b); o->out_n = b;
        for (i = 0; i < o->counts[R]; ++i) o->in[i] = val(R, i, seed);
        for (r = 0; r < P; ++r) for (i = 0; i < o->counts[r]; ++i) o->ref[o->displs[r] + i] = val(r, i, seed);
        MPI_Iallgatherv(o->in, o->counts[R], MPI_INT32_T, o->out, o->counts, o->displs, MPI_INT32_T,
                        MPI_COMM_WORLD, q);
        break;
    case 6: /* bcast */
        o->out = ints(n); o->ref = ints(n); o->out_n = n;
        for (i = 0; i < n; ++i) { o->ref[i] = val(root, i, seed); o->out[i] = R == root ? o->ref[i] : -1; }
        MPI_Ibcast(o->out, (int)n, MPI_INT32_T, root, MPI_COMM_WORLD, q);
        break;
    case 7: /* alltoall */
        o->in = ints(pn); o->out = ints(pn); o->ref = ints(pn); o->out_n = pn;
        for (i = 0; i < pn; ++i) o->in[i] = val(R, i, seed);
        for (r = 0; r < P; ++r) for (i = 0; i < n; ++i) o->ref[r * n + i] = val(r, R * n + i, seed);
        MPI_Ialltoall(o->in, (int)n, MPI_INT32_T, o->out, (int)n, MPI_INT32_T, MPI_COMM_WORLD, q);
        break;
    case 8: /* gather */
        o->in = ints(n); o->out = ints(pn); o->ref = ints(pn); o->out_n = R == root ? pn : 0;
        for (i = 0; i < n; ++i) o->in[i] = val(R, i, seed);
        for (r = 0; r < P; ++r) for (i = 0; i < n; ++i) o->ref[r * n + i] = val(r, i, seed);
        MPI_Igather(o->in, (int)n, MPI_INT32_T, o->out, (int)n, MPI_INT32_T, root, MPI_COMM_WORLD, q);
        break;
    case 9: /* scatter */
        o->in = ints(pn); o->out = ints(n); o->ref = ints(n); o->out_n = n;
        for (i = 0; i < pn; ++i) o->in[i] = val(root, i, seed);
        for (i = 0; i < n; ++i) o->ref[i] = val(root, R * n + i, seed);
        MPI_Iscatter(o->in, (int)n, MPI_INT32_T, o->out, (int)n, MPI_INT32_T, root, MPI_COMM_WORLD, q);
        break;
    default: /* barrier */
        MPI_Ibarrier(MPI_COMM_WORLD, q);
        break;
    }
}

static int one_ok(const one *o) {
    return o->out_n == 0 || memcmp(o->out, o->ref, sizeof(int32_t) * (size_t)o->out_n) == 0;
}

static const char *const kname[11] = { "allreduce", "reduce", "reduce_scatter", "reduce_scatter_block",
                                       "allgather", "allgatherv", "bcast", "alltoall", "gather",
                                       "scatter", "barrier" };

/* Every kind, sizes 0, 1, 7, 1000 and 20000 (per rank or block), started
   and completed by MPI_Wait; roots spread. */
static void t_each(void) {
    static const long ns[5] = { 0, 1, 7, 1000, 20000 };
    int k, s;
    for (k = 0; k < 11; ++k)
        for (s = 0; s < 5; ++s) {
            char name[96];
            one o;
            MPI_Request q;
            int ok;
            if (k == 10 && s > 0) break;
            start_k(k, ns[s], s, (s * 3 + k) % P, &o, &q);
            ok = MPI_Wait(&q, MPI_STATUS_IGNORE) == MPI_SUCCESS && q == MPI_REQUEST_NULL && one_ok(&o);
            snprintf(name, sizeof name, "I%s n=%ld, MPI_Wait", kname[k], ns[s]);
            verdict(name, ok);
            one_free(&o);
        }
}

/* All eleven kinds outstanding at once with a ring of the program's own
   messages, completed by `how`: 0 Waitall, 1 Waitany, 2 Testall, 3
   Testany, 4 Waitsome, 5 Testsome, 6 Test on each in reverse. */
static void t_mixed(int how, long n) {
    static const char *const hname[7] = { "MPI_Waitall", "MPI_Waitany", "MPI_Testall", "MPI_Testany",
                                          "MPI_Waitsome", "MPI_Testsome", "MPI_Test in reverse" };
    one o[11];
    MPI_Request q[13];
    int32_t sring[64], rring[64];
    int k, ok = 1, left = 13, flag, idx, out, ids[13];
    char name[96];
    for (k = 0; k < 11; ++k) start_k(k, n, k + how, (k + how) % P, &o[k], &q[k]);
    for (k = 0; k < 64; ++k) sring[k] = R * 64 + k;
    MPI_Irecv(rring, 64, MPI_INT32_T, (R + P - 1) % P, 9, MPI_COMM_WORLD, &q[11]);
    MPI_Isend(sring, 64, MPI_INT32_T, (R + 1) % P, 9, MPI_COMM_WORLD, &q[12]);
    switch (how) {
    case 0: ok &= MPI_Waitall(13, q, g_sts) == MPI_SUCCESS; break;
    case 1:
        while (left > 0) {
            ok &= MPI_Waitany(13, q, &idx, MPI_STATUS_IGNORE) == MPI_SUCCESS;
            if (idx == MPI_UNDEFINED) break;
            --left;
        }
        break;
    case 2: do ok &= MPI_Testall(13, q, &flag, g_sts) == MPI_SUCCESS; while (!flag); break;
    case 3:
        while (left > 0) {
            ok &= MPI_Testany(13, q, &idx, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS;
            if (flag && idx == MPI_UNDEFINED) break;
            if (flag) --left;
        }
        break;
    case 4: case 5:
        while (left > 0) {
            ok &= (how == 4 ? MPI_Waitsome(13, q, &out, ids, g_sts)
                            : MPI_Testsome(13, q, &out, ids, g_sts)) == MPI_SUCCESS;
            if (out == MPI_UNDEFINED) break;
            left -= out;
        }
        break;
    default:
        for (k = 12; k >= 0; --k)
            do ok &= MPI_Test(&q[k], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS; while (!flag);
        break;
    }
    for (k = 0; k < 13; ++k) ok &= q[k] == MPI_REQUEST_NULL;
    for (k = 0; k < 11; ++k) { ok &= one_ok(&o[k]); one_free(&o[k]); }
    for (k = 0; k < 64; ++k) ok &= rring[k] == ((R + P - 1) % P) * 64 + k;
    snprintf(name, sizeof name, "all kinds and a p2p ring outstanding, n=%ld, %s", n, hname[how]);
    verdict(name, ok);
}

/* Ten allreduces of one shape (other data each), completed last first. */
static void t_reverse(void) {
    one o[10];
    MPI_Request q[10];
    int k, ok = 1;
    for (k = 0; k < 10; ++k) start_k(0, 3000, 40 + k, 0, &o[k], &q[k]);
    for (k = 9; k >= 0; --k) ok &= MPI_Wait(&q[k], MPI_STATUS_IGNORE) == MPI_SUCCESS;
    for (k = 0; k < 10; ++k) { ok &= one_ok(&o[k]); one_free(&o[k]); }
    verdict("ten Iallreduce of one shape, waited in reverse", ok);
}

/* MPI_IN_PLACE forms and a non-commutative user op (2x2 matrices). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    uint32_t *a = (uint32_t *)in, *b = (uint32_t *)inout;
    int i;
    (void)dt;
    for (i = 0; i < *len; ++i, a += 4, b += 4) {
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0; b[1] = r1; b[2] = r2; b[3] = r3;
    }
}

static void t_in_place_and_user_op(void) {
    int32_t x[500], want[500];
    uint32_t m[40 * 4], acc[40 * 4], tmp[40 * 4];
    MPI_Datatype mt;
    MPI_Op op;
    MPI_Request q[2];
    int i, r, ok = 1;
    for (i = 0; i < 500; ++i) { x[i] = val(R, i, 7); want[i] = sum_over(i, 7); }
    MPI_Iallreduce(MPI_IN_PLACE, x, 500, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, &q[0]);
    MPI_Type_contiguous(4, MPI_UINT32_T, &mt);
    MPI_Type_commit(&mt);
    MPI_Op_create(matmul, 0, &op);
    for (i = 0; i < 160; ++i) m[i] = (uint32_t)((R * 7 + i * 3) % 5);
    MPI_Iallreduce(MPI_IN_PLACE, m, 40, mt, op, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, g_sts);
    for (i = 0; i < 500; ++i) ok &= x[i] == want[i];
    for (i = 0; i < 160; ++i) acc[i] = (uint32_t)(i * 3 % 5); /* rank 0's */
    for (r = 1; r < P; ++r) { /* acc = acc * m_r, in rank order */
        int len = 40;
        for (i = 0; i < 160; ++i) tmp[i] = (uint32_t)((r * 7 + i * 3) % 5);
        matmul(acc, tmp, &len, &mt);
        memcpy(acc, tmp, sizeof acc);
    }
    ok &= memcmp(acc, m, sizeof m) == 0;
    verdict("Iallreduce in place; a non-commutative user op", ok);
    MPI_Op_free(&op);
    MPI_Type_free(&mt);
}

/* Datatypes with holes on the receiving side: the drop-in stages them and
   unpacks when the collective completes. */
static void t_holes(void) {
    int32_t in[300], out[2 * 300 * 8], ref[2 * 300 * 8];
    MPI_Datatype vec, every2;
    MPI_Request q[2];
    int i, r, ok = 1, n = 300;
    MPI_Type_vector(n, 1, 2, MPI_INT32_T, &vec); /* n ints, every other slot, */
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * n * sizeof(int32_t)), &every2); /* 2n wide */
    MPI_Type_commit(&every2);
    MPI_Type_free(&vec);
    for (i = 0; i < n; ++i) in[i] = val(R, i, 9);
    for (i = 0; i < 2 * n * P; ++i) out[i] = ref[i] = -7;
    for (r = 0; r < P; ++r) for (i = 0; i < n; ++i) ref[r * 2 * n + 2 * i] = val(r, i, 9);
    MPI_Iallgather(in, n, MPI_INT32_T, out, 1, every2, MPI_COMM_WORLD, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    for (i = 0; i < 2 * n * P - 1; ++i) ok &= out[i] == ref[i];
    for (i = 0; i < 2 * n; ++i) out[i] = -7;
    if (R == 0) for (i = 0; i < n; ++i) out[2 * i] = val(0, i, 9);
    MPI_Ibcast(out, 1, every2, 0, MPI_COMM_WORLD, &q[1]);
    MPI_Wait(&q[1], MPI_STATUS_IGNORE);
    for (i = 0; i < n; ++i) ok &= out[2 * i] == val(0, i, 9) && out[2 * i + 1] == -7;
    verdict("Iallgather and Ibcast into a strided datatype", ok);
    MPI_Type_free(&every2);
}

#if MPI_VERSION >= 4
/* Persistent: each kind made once, started three times with new data and
   waited (Wait, then Test, then Waitall with a second one), then freed; a
   plan of each kind started together with MPI_Startall. */
static void t_persistent(void) {
    int32_t a[2000], b[2000], bc[100], g[100 * 64], in[100];
    MPI_Request q[4];
    int it, i, ok = 1, flag, n = 2000;
    memset(a, 0, sizeof a); memset(in, 0, sizeof in); memset(bc, 0, sizeof bc);
    MPI_Allreduce_init(a, b, n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    MPI_Bcast_init(bc, 100, MPI_INT32_T, P - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
    MPI_Allgather_init(in, 100 / P, MPI_INT32_T, g, 100 / P, MPI_INT32_T, MPI_COMM_WORLD, MPI_INFO_NULL, &q[2]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[3]);
    for (it = 0; it < 3; ++it) {
        for (i = 0; i < n; ++i) a[i] = val(R, i, it);
        for (i = 0; i < 100; ++i) { bc[i] = R == P - 1 ? val(R, i, it) : -1; in[i] = val(R, i, 20 + it); }
        MPI_Start(&q[0]);
        if (it == 0) MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        else if (it == 1) do MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE); while (!flag);
        else { MPI_Start(&q[1]); MPI_Waitall(2, q, g_sts); }
        ok &= q[0] != MPI_REQUEST_NULL; /* persistent: the handle stays */
        for (i = 0; i < n; ++i) ok &= b[i] == sum_over(i, it);
        if (it == 2) for (i = 0; i < 100; ++i) ok &= bc[i] == val(P - 1, i, it);
    }
    MPI_Startall(4, q);
    MPI_Waitall(4, q, g_sts);
    for (i = 0; i < n; ++i) ok &= b[i] == sum_over(i, 2);
    for (i = 0; i < (100 / P) * P; ++i) ok &= g[i] == val(i / (100 / P), i % (100 / P), 22);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE); /* inactive: returns at once */
    for (i = 0; i < 4; ++i) { MPI_Request_free(&q[i]); ok &= q[i] == MPI_REQUEST_NULL; }
    verdict("persistent allreduce, bcast, allgather, barrier: restarts, Startall", ok);
    {   /* every kind made persistent through its init, started twice */
        int32_t x[64], y[64 * 8], z[64 * 8], cnt[8], dsp[8];
        MPI_Request r[11];
        int k;
        memset(x, 0, sizeof x);
        for (k = 0; k < P; ++k) { cnt[k] = 3; dsp[k] = 3 * k; }
        MPI_Reduce_init(x, y, 64, MPI_INT32_T, MPI_SUM, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Reduce_scatter_init(x, y, cnt, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        MPI_Reduce_scatter_block_init(x, z, 3, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
        MPI_Allgatherv_init(x, 3, MPI_INT32_T, y, cnt, dsp, MPI_INT32_T, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
        MPI_Alltoall_init(x, 2, MPI_INT32_T, z, 2, MPI_INT32_T, MPI_COMM_WORLD, MPI_INFO_NULL, &r[4]);
        r[5] = r[6] = MPI_REQUEST_NULL;
        if (g_rooted_init) {
            MPI_Gather_init(x, 5, MPI_INT32_T, y, 5, MPI_INT32_T, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[5]);
            MPI_Scatter_init(x, 4, MPI_INT32_T, z, 4, MPI_INT32_T, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[6]);
        }
        for (it = 0; it < 2; ++it) {
            for (i = 0; i < 64; ++i) x[i] = val(R, i, it);
            for (k = 0; k < 7; ++k) { /* one at a time: they share buffers */
                if ((k == 5 || k == 6) && !g_rooted_init) continue;
                int j;
                MPI_Start(&r[k]);
                MPI_Wait(&r[k], MPI_STATUS_IGNORE);
                switch (k) {
                case 0: if (R == 0) for (j = 0; j < 64; ++j) ok &= y[j] == sum_over(j, it); break;
                case 1: for (j = 0; j < 3; ++j) ok &= y[j] == sum_over(3 * R + j, it); break;
                case 2: for (j = 0; j < 3; ++j) ok &= z[j] == sum_over(3 * R + j, it); break;
                case 3: for (j = 0; j < 3 * P; ++j) ok &= y[j] == val(j / 3, j % 3, it); break;
                case 4: for (j = 0; j < 2 * P; ++j) ok &= z[j] == val(j / 2, 2 * R + j % 2, it); break;
                case 5: if (R == 0) for (j = 0; j < 5 * P; ++j) ok &= y[j] == val(j / 5, j % 5, it); break;
                default: for (j = 0; j < 4; ++j) ok &= z[j] == val(0, 4 * R + j, it); break;
                }
            }
        }
        for (k = 0; k < 7; ++k) if (r[k] != MPI_REQUEST_NULL) MPI_Request_free(&r[k]);
        verdict(g_rooted_init ? "persistent reduce, reduce_scatter(_block), allgatherv, alltoall, gather, scatter"
                              : "persistent reduce, reduce_scatter(_block), allgatherv, alltoall", ok);
    }
}
#endif

int main(int argc, char **argv) {
    int how;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P > 8) { if (R == 0) printf("nonblock: at most 8 ranks\n"); MPI_Finalize(); return 1; }
    g_rooted_init = argc > 1 && strcmp(argv[1], "gather_scatter_init") == 0;
    t_each();
    for (how = 0; how < 7; ++how) t_mixed(how, how % 2 ? 5 : 3000);
    t_reverse();
    t_in_place_and_user_op();
    t_holes();
#if MPI_VERSION >= 4
    t_persistent();
#endif
    if (R == 0) printf("%d cases, %d wrong\n", g_cases, g_wrong);
    MPI_Finalize();
    return g_wrong ? 1 : 0;
}
