/* test_mpi.c - the MPI transport (transports/redcoll_mpi.h) under mpiexec.

   Run under `mpiexec.mpich -n P` for P = 1..5 by test/mpi/run.sh. Every
   redcoll collective and every algorithm the library registers (found with
   redcoll_algo_supported, so schedules merged later are covered) is compared
   with the native MPI collective on integer data, exactly; the
   non-commutative matrix product with MPI_Op_create(commute = 0); the
   chunking of messages above the size limit with a test-only limit of a few
   hundred bytes; the MPI datatype/op/IN_PLACE helpers, node_of, the error
   mapping and the abort flag. Rank 0 prints one line per test and
   "N passed, N failed" (failures are summed over ranks). */
#define _POSIX_C_SOURCE 200809L /* alarm */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mpi.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#include "test/disagree_cases.h"

static int g_rank, g_size;
static long g_checks, g_fails, g_passed, g_failed;

#define MCHECK(cond, ...)                                                       \
    do {                                                                        \
        g_checks++;                                                             \
        if (!(cond)) {                                                          \
            if (++g_fails <= 10) {                                              \
                fprintf(stderr, "    [rank %d] %s:%d: ", g_rank, __FILE__, __LINE__); \
                fprintf(stderr, __VA_ARGS__);                                   \
                fputc('\n', stderr);                                            \
            }                                                                   \
        }                                                                       \
    } while (0)

/* A test passes when no rank failed a check and some rank made one. */
static void mtest(const char *name, void (*fn)(void)) {
    long fails = 0, checks = 0;
    g_checks = g_fails = 0;
    fn();
    MPI_Allreduce(&g_fails, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&g_checks, &checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (fails == 0 && checks > 0) g_passed++; else g_failed++;
    if (g_rank == 0) {
        if (fails == 0 && checks > 0)
            printf("ok    mpi/p=%d %-44s %8ld checks\n", g_size, name, checks);
        else
            printf("FAIL  mpi/p=%d %-44s %ld of %ld checks failed\n", g_size, name, fails, checks);
        fflush(stdout);
    }
}

/* ---- data ------------------------------------------------------------------ */

static uint32_t mhash(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

/* int32 element i of rank r's input (block b for per-block collectives). */
static int32_t mval(int r, size_t i) {
    return (int32_t)(mhash((uint32_t)r * 2654435761U ^ (uint32_t)i * 40503U) % 2001) - 1000;
}

static void mfill(int32_t *buf, size_t n, int r) {
    size_t i;
    for (i = 0; i < n; ++i) buf[i] = mval(r, i);
}

/* 2x2 uint32 matrix product, inout = in * inout (non-commutative). */
static void mat_apply(const uint32_t *a, uint32_t *b, size_t count) {
    size_t i;
    for (i = 0; i < count; ++i, a += 4, b += 4) {
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0; b[1] = r1; b[2] = r2; b[3] = r3;
    }
}
static void mat_rc(const void *in, void *inout, size_t count, void *user) {
    (void)user;
    mat_apply((const uint32_t *)in, (uint32_t *)inout, count);
}
static void mat_mpi(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    mat_apply((const uint32_t *)in, (uint32_t *)inout, (size_t)*len);
}

/* ---- one collective against the native one ---------------------------------- */

typedef struct mcase {
    redcoll_mpi  *m;
    redcoll_coll  coll;
    redcoll_algo  algo;
    size_t        count;  /* elements per rank, or per block */
    int           root;
    int           in_place;
    int           matmul; /* the non-commutative op on 16-byte elements */
    size_t        chunk_bytes;        /* opts.chunk_bytes */
    const redcoll_transport *t;       /* NULL: &m->t */
    int           nb;                 /* MNB_*: how redcoll's call is made */
} mcase;

/* mcase.nb: the blocking call; started and waited for; started and polled
   with redcoll_test; a plan made, started and waited for. */
enum { MNB_BLOCKING = 0, MNB_WAIT, MNB_TEST, MNB_PLAN };
static const char *const mnb_name[4] = { "", " started+wait", " started+test", " plan started" };

/* Completes what MRC started (r: the start's result) and frees it; the
   request and plan are read through pointers, after the start wrote them. */
static redcoll_result mfinish(int nb, redcoll_result r, redcoll_coll_request *const *rqp,
                              redcoll_plan *const *plp) {
    redcoll_coll_request *rq = *rqp;
    redcoll_plan *pl = *plp;
    int done = 0;
    if (nb == MNB_BLOCKING || r != REDCOLL_OK) return r;
    if (nb == MNB_PLAN) {
        r = redcoll_plan_start(pl);
        if (r == REDCOLL_OK) r = redcoll_plan_wait(pl);
        redcoll_plan_free(pl);
        return r;
    }
    if (nb == MNB_TEST) do r = redcoll_test(rq, &done); while (!done);
    else r = redcoll_wait(rq);
    redcoll_request_free(rq);
    return r;
}

/* Calls redcoll_<f> as c->nb says, with the blocking call's arguments. */
#define MRC(f, ...)                                                                          \
    mfinish(c->nb, c->nb == MNB_PLAN ? redcoll_##f##_init(__VA_ARGS__, &pl)                  \
                   : c->nb ? redcoll_i##f(__VA_ARGS__, &rq) : redcoll_##f(__VA_ARGS__), &rq, &pl)

static const char *mdescribe(const mcase *c) {
    static char buf[200];
    snprintf(buf, sizeof buf, "%s/%s p=%d count=%zu root=%d%s%s chunk=%zu%s",
             redcoll_coll_name(c->coll), redcoll_algo_name(c->algo), g_size, c->count, c->root,
             c->in_place ? " in-place" : "", c->matmul ? " matmul" : "", c->m->max_chunk,
             mnb_name[c->nb]);
    return buf;
}

static int mreduces(redcoll_coll c) {
    return c == REDCOLL_COLL_ALLREDUCE || c == REDCOLL_COLL_REDUCE ||
           c == REDCOLL_COLL_REDUCE_SCATTER || c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
}

/* Runs c with redcoll and with MPI and compares the results bytewise. */
static void mrun(const mcase *c) {
    int p = g_size, r = g_rank, i, pn_ok;
    size_t n = c->count, es = c->matmul ? 16 : 4, pn = n * (size_t)p;
    size_t words = pn + n + 8;
    int32_t *in = (int32_t *)calloc(words, es), *got = (int32_t *)calloc(words, es);
    int32_t *want = (int32_t *)calloc(words, es);
    int *icounts = (int *)calloc((size_t)p, sizeof(int)), *idispls = (int *)calloc((size_t)p, sizeof(int));
    size_t *counts = (size_t *)calloc((size_t)p, sizeof(size_t));
    redcoll_options o;
    redcoll_dtype dt = c->matmul ? REDCOLL_OPAQUE(16) : REDCOLL_INT32;
    redcoll_op op = c->matmul ? redcoll_op_user(mat_rc, NULL, 0) : REDCOLL_SUM;
    MPI_Datatype mdt = MPI_INT32_T;
    MPI_Op mop = MPI_SUM;
    redcoll_result res = REDCOLL_OK;
    size_t cmp = 0; /* elements of got/want to compare */
    const void *sb;
    const redcoll_transport *t = c->t ? c->t : &c->m->t;
    redcoll_coll_request *rq = NULL;
    redcoll_plan *pl = NULL;

    if (!in || !got || !want || !icounts || !idispls || !counts) { MCHECK(0, "out of memory"); goto out; }
    memset(&o, 0, sizeof o);
    o.algo = c->algo;
    o.chunk_bytes = c->chunk_bytes;
    if (c->matmul) {
        MPI_Type_contiguous(4, MPI_UINT32_T, &mdt);
        MPI_Type_commit(&mdt);
        MPI_Op_create(mat_mpi, 0, &mop);
        for (i = 0; (size_t)i < pn * 4; ++i) in[i] = (int32_t)(mhash((uint32_t)(r * 7919 + i)) % 5);
    } else {
        mfill(in, pn, r);
    }
    for (i = 0; i < p; ++i) { /* irregular counts: rank i gets count + (i % 3) - 1 (>= 0) */
        size_t ci = n + (size_t)(i % 3);
        counts[i] = ci > 0 ? ci - 1 : 0;
        if (n == 0) counts[i] = 0;
        icounts[i] = (int)counts[i];
        idispls[i] = i ? idispls[i - 1] + icounts[i - 1] : 0;
    }
    pn_ok = 1;
    sb = c->in_place ? REDCOLL_IN_PLACE : in;
    switch (c->coll) {
    case REDCOLL_COLL_ALLREDUCE:
        if (c->in_place) memcpy(got, in, n * es);
        res = MRC(allreduce, t, sb, got, n, dt, op, &o);
        MPI_Allreduce(in, want, (int)n, mdt, mop, MPI_COMM_WORLD);
        cmp = n;
        break;
    case REDCOLL_COLL_REDUCE:
        if (c->in_place && r == c->root) memcpy(got, in, n * es);
        else sb = in;
        res = MRC(reduce, t, sb, got, n, dt, op, c->root, &o);
        MPI_Reduce(in, want, (int)n, mdt, mop, c->root, MPI_COMM_WORLD);
        cmp = r == c->root ? n : 0;
        break;
    case REDCOLL_COLL_BCAST:
        if (r == c->root) { memcpy(got, in, n * es); memcpy(want, in, n * es); }
        res = MRC(bcast, t, got, n, dt, c->root, &o);
        MPI_Bcast(want, (int)n, mdt, c->root, MPI_COMM_WORLD);
        cmp = n;
        break;
    case REDCOLL_COLL_GATHER:
        if (c->in_place && r == c->root) memcpy((char *)got + (size_t)r * n * es, in, n * es);
        else sb = in;
        res = MRC(gather, t, sb, got, n, dt, c->root, &o);
        MPI_Gather(in, (int)n, mdt, want, (int)n, mdt, c->root, MPI_COMM_WORLD);
        cmp = r == c->root ? pn : 0;
        break;
    case REDCOLL_COLL_SCATTER: {
        void *rb = c->in_place && r == c->root ? REDCOLL_IN_PLACE : (void *)got;
        res = MRC(scatter, t, in, rb, n, dt, c->root, &o);
        MPI_Scatter(in, (int)n, mdt, want, (int)n, mdt, c->root, MPI_COMM_WORLD);
        if (rb == REDCOLL_IN_PLACE) memcpy(got, (char *)in + (size_t)r * n * es, n * es);
        cmp = n;
        break;
    }
    case REDCOLL_COLL_BARRIER:
        res = MRC(barrier, t, &o);
        break;
    case REDCOLL_COLL_REDUCE_SCATTER:
        res = MRC(reduce_scatter, t, in, got, counts, dt, op, &o);
        MPI_Reduce_scatter(in, want, icounts, mdt, mop, MPI_COMM_WORLD);
        cmp = counts[r];
        break;
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        res = MRC(reduce_scatter_block, t, in, got, n, dt, op, &o);
        MPI_Reduce_scatter_block(in, want, (int)n, mdt, mop, MPI_COMM_WORLD);
        cmp = n;
        break;
    case REDCOLL_COLL_ALLGATHER:
        res = MRC(allgather, t, in, got, n, dt, &o);
        MPI_Allgather(in, (int)n, mdt, want, (int)n, mdt, MPI_COMM_WORLD);
        cmp = pn;
        break;
    case REDCOLL_COLL_ALLGATHERV:
        res = MRC(allgatherv, t, in, got, counts, dt, &o);
        MPI_Allgatherv(in, icounts[r], mdt, want, icounts, idispls, mdt, MPI_COMM_WORLD);
        cmp = (size_t)idispls[p - 1] + counts[p - 1];
        break;
    case REDCOLL_COLL_ALLTOALL:
        res = MRC(alltoall, t, in, got, n, dt, &o);
        MPI_Alltoall(in, (int)n, mdt, want, (int)n, mdt, MPI_COMM_WORLD);
        cmp = pn;
        break;
    default:
        pn_ok = 0;
        break;
    }
    MCHECK(pn_ok, "%s: the test does not drive this collective", mdescribe(c));
    MCHECK(res == REDCOLL_OK, "%s: %s", mdescribe(c), redcoll_result_string(res));
    if (res == REDCOLL_OK && cmp && memcmp(got, want, cmp * es) != 0) {
        size_t k;
        for (k = 0; k < cmp && !memcmp((char *)got + k * es, (char *)want + k * es, es); ++k) {}
        MCHECK(0, "%s: element %zu differs from MPI", mdescribe(c), k);
    } else {
        MCHECK(1, "compared");
    }
    if (c->matmul) { MPI_Op_free(&mop); MPI_Type_free(&mdt); }
out:
    free(in); free(got); free(want); free(icounts); free(idispls); free(counts);
}

static int mrooted(redcoll_coll c) {
    return c == REDCOLL_COLL_REDUCE || c == REDCOLL_COLL_BCAST || c == REDCOLL_COLL_GATHER ||
           c == REDCOLL_COLL_SCATTER;
}

static int mhas_in_place(redcoll_coll c) {
    return c == REDCOLL_COLL_ALLREDUCE || c == REDCOLL_COLL_REDUCE ||
           c == REDCOLL_COLL_GATHER || c == REDCOLL_COLL_SCATTER;
}

static int mdriven(redcoll_coll c) {
    (void)c;
    return 1;
}

/* Every collective and algorithm over m with the given counts, roots 0 and
   p-1, alternating in place, and the matrix product where order is kept. */
static void msweep(redcoll_mpi *m, const size_t *counts, int ncounts, int nb) {
    int coll, algo, k, j;
    for (coll = 0; coll < REDCOLL_COLL_COUNT; ++coll) {
        if (!mdriven((redcoll_coll)coll)) continue;
        for (algo = 0; algo < REDCOLL_ALGO_COUNT; ++algo) {
            if (!redcoll_algo_supported((redcoll_coll)coll, (redcoll_algo)algo)) continue;
            for (k = 0; k < ncounts; ++k) {
                int nroots = mrooted((redcoll_coll)coll) && g_size > 1 ? 2 : 1;
                for (j = 0; j < nroots; ++j) {
                    mcase c;
                    memset(&c, 0, sizeof c);
                    c.m = m;
                    c.coll = (redcoll_coll)coll;
                    c.algo = (redcoll_algo)algo;
                    c.count = counts[k];
                    c.root = j ? g_size - 1 : 0;
                    c.in_place = mhas_in_place(c.coll) && (k + j) % 2;
                    c.nb = nb >= 0 ? nb : 1 + (k + j + algo) % 3;
                    mrun(&c);
                }
            }
            if (mreduces((redcoll_coll)coll) &&
                (algo == 0 || redcoll_algo_keeps_order((redcoll_coll)coll, (redcoll_algo)algo))) {
                mcase c;
                memset(&c, 0, sizeof c);
                c.m = m; c.coll = (redcoll_coll)coll; c.algo = (redcoll_algo)algo;
                c.count = (size_t)g_size + 3; c.root = g_size / 2; c.matmul = 1;
                c.nb = nb >= 0 ? nb : 1 + algo % 3;
                mrun(&c);
            }
        }
    }
}

/* ---- tests ------------------------------------------------------------------- */

static redcoll_mpi g_m; /* default limits */

/* Counts 0, 1, p+1, 1000 and 20011 (0 and 1000 only up to p = 3: more
   ranks than the 2 cores of CI make every message slow under MPICH). */
static void test_collectives(void) {
    size_t counts[5];
    int n = 0;
    if (g_size <= 3) counts[n++] = 0;
    counts[n++] = 1;
    counts[n++] = (size_t)g_size + 1;
    if (g_size <= 3) counts[n++] = 1000;
    counts[n++] = 20011;
    msweep(&g_m, counts, n, MNB_BLOCKING);
}

/* The same, each collective started (redcoll_i<coll> or a plan) and
   completed by redcoll_wait, by polling redcoll_test, or redcoll_plan_wait,
   in turn. */
static void test_started(void) {
    size_t counts[4];
    int n = 0;
    counts[n++] = 1;
    counts[n++] = (size_t)g_size + 1;
    if (g_size <= 3) counts[n++] = 1000;
    counts[n++] = 20011;
    msweep(&g_m, counts, n, -1);
}

/* The chunking path: a limit of 300 bytes makes every message above it a
   multi-chunk one, as a message above INT_MAX bytes is with the real limit. */
static void test_chunking(void) {
    redcoll_mpi m;
    redcoll_mpi_config cfg;
    int p = g_size, r = g_rank, nxt = (g_rank + 1) % g_size, prv = (g_rank + g_size - 1) % g_size;
    size_t sbytes = 1000 + 37 * (size_t)r, rbytes = 1000 + 37 * (size_t)prv, i;
    unsigned char *sb = (unsigned char *)malloc(sbytes), *rb = (unsigned char *)malloc(rbytes);
    unsigned char *big = (unsigned char *)malloc(5000), *bigr = (unsigned char *)malloc(5000);
    redcoll_request q[2];
    memset(&cfg, 0, sizeof cfg);
    cfg.max_chunk_bytes = 300;
    MCHECK(redcoll_mpi_init(&m, MPI_COMM_WORLD, &cfg) == REDCOLL_OK && m.max_chunk == 300, "init");
    for (i = 0; i < sbytes; ++i) sb[i] = (unsigned char)(r * 31 + i);
    /* a ring of unequal sizes through sendrecv: chunk counts differ by rank */
    MCHECK(m.t.sendrecv(m.t.user, nxt, sb, sbytes, prv, rb, rbytes, 11) == REDCOLL_OK, "sendrecv");
    for (i = 0; i < rbytes && rb[i] == (unsigned char)(prv * 31 + i); ++i) {}
    MCHECK(i == rbytes, "sendrecv ring: byte %zu of %zu from rank %d", i, rbytes, prv);
    /* non-blocking, chunked, both directions at once */
    for (i = 0; i < 5000; ++i) big[i] = (unsigned char)(r + i * 7);
    MCHECK(m.t.irecv(m.t.user, prv, bigr, 4999, 12, &q[0]) == REDCOLL_OK, "irecv");
    MCHECK(m.t.isend(m.t.user, nxt, big, 4999, 12, &q[1]) == REDCOLL_OK, "isend");
    MCHECK(m.t.waitall(m.t.user, 2, q) == REDCOLL_OK && !q[0].ptr && !q[1].ptr, "waitall");
    for (i = 0; i < 4999 && bigr[i] == (unsigned char)(prv + i * 7); ++i) {}
    MCHECK(i == 4999, "isend/irecv ring: byte %zu", i);
    /* blocking send/recv, chunked, and an empty message */
    if (p > 1) {
        if (r == 0) {
            MCHECK(m.t.send(m.t.user, 1, big, 5000, 13) == REDCOLL_OK, "send");
            MCHECK(m.t.send(m.t.user, 1, big, 0, 14) == REDCOLL_OK, "send 0 bytes");
        } else if (r == 1) {
            MCHECK(m.t.recv(m.t.user, 0, bigr, 5000, 13) == REDCOLL_OK && bigr[4999] == (unsigned char)(4999 * 7),
                   "recv");
            MCHECK(m.t.recv(m.t.user, 0, bigr, 0, 14) == REDCOLL_OK, "recv 0 bytes");
        }
    }
    {   /* every collective with multi-chunk messages */
        const size_t counts[1] = { 1001 };
        msweep(&m, counts, 1, MNB_BLOCKING);
        msweep(&m, counts, 1, -1);
    }
    redcoll_mpi_finalize(&m);
    free(sb); free(rb); free(big); free(bigr);
}

/* The library's cut messages over MPI: the transport has no recv_reduce,
   so opts.chunk_bytes cuts every message above it (redcoll.h's
   receive-and-reduce block). A counting wrapper sees more transport calls
   with chunks of 3 elements than with the default, and every reducing
   collective and algorithm still matches MPI bytewise. */
typedef struct mcount {
    redcoll_transport        t;
    const redcoll_transport *in;
    long                     calls;
    long                     local; /* messages to or from a rank of this rank's node (in's node_of) */
} mcount;

static void mc_peer(mcount *w, int peer) {
    if (peer >= 0 && w->in->node_of &&
        w->in->node_of(w->in->user, peer) == w->in->node_of(w->in->user, w->in->rank))
        w->local++;
}
static redcoll_result mc_send(void *u, int dst, const void *b, size_t n, int tag) {
    mcount *w = (mcount *)u;
    w->calls++;
    mc_peer(w, dst);
    return w->in->send(w->in->user, dst, b, n, tag);
}
static redcoll_result mc_recv(void *u, int src, void *b, size_t n, int tag) {
    mcount *w = (mcount *)u;
    w->calls++;
    mc_peer(w, src);
    return w->in->recv(w->in->user, src, b, n, tag);
}
static redcoll_result mc_sendrecv(void *u, int dst, const void *sb, size_t sn, int src, void *rb,
                                  size_t rn, int tag) {
    mcount *w = (mcount *)u;
    w->calls++;
    mc_peer(w, dst);
    mc_peer(w, src);
    return w->in->sendrecv(w->in->user, dst, sb, sn, src, rb, rn, tag);
}

static long mcut_sweep(size_t chunk_bytes) {
    mcount w;
    int coll, algo, k;
    memset(&w, 0, sizeof w);
    w.in = &g_m.t;
    w.t.user = &w; w.t.rank = g_m.t.rank; w.t.size = g_m.t.size;
    w.t.send = mc_send; w.t.recv = mc_recv; w.t.sendrecv = mc_sendrecv;
    for (coll = 0; coll < REDCOLL_COLL_COUNT; ++coll) {
        if (!mreduces((redcoll_coll)coll)) continue;
        for (algo = 1; algo < REDCOLL_ALGO_COUNT; ++algo) {
            if (!redcoll_algo_supported((redcoll_coll)coll, (redcoll_algo)algo)) continue;
            for (k = 0; k < 3; ++k) {
                mcase c;
                memset(&c, 0, sizeof c);
                c.m = &g_m; c.t = &w.t; c.chunk_bytes = chunk_bytes;
                c.coll = (redcoll_coll)coll; c.algo = (redcoll_algo)algo;
                c.count = k == 0 ? 7 : k == 1 ? 3 * (size_t)g_size + 1 : 101;
                c.root = k % g_size;
                c.in_place = mhas_in_place(c.coll) && k == 1;
                c.matmul = k == 2 && redcoll_algo_keeps_order(c.coll, c.algo);
                mrun(&c);
            }
        }
    }
    return w.calls;
}

static void test_library_chunks(void) {
    long whole, cut;
    MCHECK(g_m.t.recv_reduce == NULL && g_m.t.sendrecv_reduce == NULL,
           "the MPI transport has no fused entries: the library cuts its messages");
    whole = mcut_sweep(0);
    cut = mcut_sweep(12); /* 3 int32, or 1 matmul element */
    MCHECK(g_size == 1 ? cut == whole && whole == 0 : cut > whole,
           "transport calls: %ld cut, %ld whole", cut, whole);
}

/* The node's transport (the MPI transport's `node` entry): nodes of 2
   (cfg.ranks_per_node), a second MPI transport on each node's communicator
   (redcoll_mpi_split_node) set as the node entry, both wrapped to count
   their calls. The node-aware rows match MPI bytewise (commutative and
   not, one-shot and planned), their levels inside nodes run on the node's
   transport and no message between two ranks of one node goes over the
   outer one; without the entry they do (the control). */
static int mw_node_of(void *u, int r) { const mcount *w = (const mcount *)u; return w->in->node_of(w->in->user, r); }
static const redcoll_transport *mw_node(void *u) {
    const mcount *w = (const mcount *)u;
    return w->in->node(w->in->user);
}
static void *mw_scratch(void *u, size_t bytes) { const mcount *w = (const mcount *)u; return w->in->scratch(w->in->user, bytes); }

static void mwrap(mcount *w, const redcoll_transport *in) {
    memset(w, 0, sizeof *w);
    w->in = in;
    w->t.user = w; w->t.rank = in->rank; w->t.size = in->size;
    w->t.send = mc_send; w->t.recv = mc_recv; w->t.sendrecv = mc_sendrecv;
    w->t.node_of = in->node_of ? mw_node_of : NULL;
    w->t.node = in->node ? mw_node : NULL;
    w->t.scratch = in->scratch ? mw_scratch : NULL;
}

static void test_node_transport(void) {
    static const redcoll_coll colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE, REDCOLL_COLL_BCAST,
                                           REDCOLL_COLL_ALLGATHER };
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_NODE_SPLIT, REDCOLL_ALGO_NODE_LEADER,
                                           REDCOLL_ALGO_NODE_LANES };
    redcoll_mpi_config cfg;
    redcoll_mpi outer, inner;
    MPI_Comm nc = MPI_COMM_NULL;
    mcount out, in;
    int i, j, k, pair = (g_rank | 1) < g_size; /* my node has 2 ranks */
    memset(&cfg, 0, sizeof cfg);
    cfg.ranks_per_node = 2;
    MCHECK(redcoll_mpi_init(&outer, MPI_COMM_WORLD, &cfg) == REDCOLL_OK && outer.nodes == (g_size + 1) / 2,
           "init with nodes of 2");
    MCHECK(redcoll_mpi_split_node(&outer, &nc) == REDCOLL_OK, "the node's communicator");
    cfg.ranks_per_node = g_size; /* one node */
    MCHECK(redcoll_mpi_init(&inner, nc, &cfg) == REDCOLL_OK, "a transport on it");
    MPI_Comm_free(&nc);
    MCHECK(inner.t.size == 1 + pair && inner.t.rank == g_rank % 2, "rank %d of %d in the node", inner.t.rank,
           inner.t.size);
    mwrap(&in, &inner.t);
    redcoll_mpi_set_node(&outer, &in.t);
    mwrap(&out, &outer.t);
    MCHECK(out.t.node && out.t.node(out.t.user) == &in.t, "the node entry");
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 3; ++j)
            for (k = 0; k < 4; ++k) {
                mcase c;
                memset(&c, 0, sizeof c);
                c.m = &outer; c.t = &out.t;
                c.coll = colls[i]; c.algo = algos[j];
                c.count = k == 0 ? 1 : k == 1 ? (size_t)g_size + 1 : 1000;
                c.root = k % g_size;
                c.in_place = mhas_in_place(c.coll) && k == 1;
                c.matmul = k == 3;
                if (c.matmul && !mreduces(c.coll)) continue;
                if (c.algo == REDCOLL_ALGO_NODE_LANES && (c.coll != REDCOLL_COLL_ALLREDUCE || c.matmul)) continue;
                mrun(&c);
            }
    {   /* a plan: the measuring pass stands in for the node's transport too */
        double x[64], y[64], want[64];
        redcoll_options o;
        redcoll_plan *pl = NULL;
        int r;
        memset(&o, 0, sizeof o);
        o.algo = REDCOLL_ALGO_NODE_SPLIT;
        for (r = 0; r < 64; ++r) x[r] = g_rank * 64 + r;
        MPI_Allreduce(x, want, 64, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MCHECK(redcoll_allreduce_init(&out.t, x, y, 64, REDCOLL_DOUBLE, REDCOLL_SUM, &o, &pl) == REDCOLL_OK,
               "plan");
        for (r = 0; r < 2; ++r) {
            memset(y, 0, sizeof y);
            MCHECK(redcoll_plan_run(pl) == REDCOLL_OK && !memcmp(y, want, sizeof y), "plan run %d", r);
        }
        redcoll_plan_free(pl);
    }
    MCHECK(out.local == 0, "%ld messages inside a node went over MPI", out.local);
    MCHECK(pair ? in.calls > 0 : in.calls == 0, "%ld calls on the node's transport", in.calls);
    redcoll_mpi_set_node(&outer, NULL); /* the control */
    out.local = in.calls = 0;
    {
        mcase c;
        memset(&c, 0, sizeof c);
        c.m = &outer; c.t = &out.t; c.coll = REDCOLL_COLL_ALLREDUCE; c.algo = REDCOLL_ALGO_NODE_SPLIT;
        c.count = 1000;
        mrun(&c);
    }
    MCHECK(in.calls == 0 && (pair ? out.local > 0 : out.local == 0),
           "without the node's transport: %ld messages inside a node over MPI", out.local);
    MPI_Barrier(MPI_COMM_WORLD);
    redcoll_mpi_finalize(&inner);
    redcoll_mpi_finalize(&outer);
}

/* One-shot calls take their scratch from the transport's persistent block:
   the allocator in the options is never called, and the block stays. */
static void *mcount_alloc(size_t bytes, void *user) { ++*(long *)user; return malloc(bytes); }
static void mcount_free(void *ptr, void *user) { (void)user; free(ptr); }

static void test_scratch_entry(void) {
    static const redcoll_coll colls[3] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                           REDCOLL_COLL_ALLGATHER };
    size_t n = 30000, k;
    int32_t *x = (int32_t *)calloc(n * (size_t)g_size, 4), *y = (int32_t *)calloc(n * (size_t)g_size, 4);
    long allocs = 0;
    int rep, i;
    redcoll_options o;
    memset(&o, 0, sizeof o);
    o.allocator.alloc_fn = mcount_alloc; o.allocator.free_fn = mcount_free; o.allocator.user_data = &allocs;
    MCHECK(g_m.t.scratch != NULL, "the MPI transport has a scratch entry");
    for (k = 0; x && k < n * (size_t)g_size; ++k) x[k] = (int32_t)(k % 97);
    for (rep = 0; x && y && rep < 3; ++rep)
        for (i = 0; i < 3; ++i) {
            redcoll_result r = colls[i] == REDCOLL_COLL_ALLREDUCE
                ? redcoll_allreduce(&g_m.t, x, y, n, REDCOLL_INT32, REDCOLL_SUM, &o)
                : colls[i] == REDCOLL_COLL_ALLGATHER
                ? redcoll_allgather(&g_m.t, x, y, n, REDCOLL_INT32, &o)
                : redcoll_reduce_scatter_block(&g_m.t, x, y, n, REDCOLL_INT32, REDCOLL_SUM, &o);
            MCHECK(r == REDCOLL_OK, "%s: %s", redcoll_coll_name(colls[i]), redcoll_result_string(r));
        }
    MCHECK(allocs == 0, "%ld allocator calls in one-shot calls", allocs);
    MCHECK(g_size == 1 || g_m.scratch.bytes > 0, "the block is kept");
    free(x); free(y);
}

static void test_helpers(void) {
    redcoll_dtype d;
    redcoll_op o;
    int in_node_rank = -1, node_leader, i;
    MPI_Comm node;
    MPI_Datatype derived;
    MCHECK(redcoll_mpi_dtype(MPI_INT, &d) && d == REDCOLL_INT32, "MPI_INT");
    MCHECK(redcoll_mpi_dtype(MPI_UNSIGNED_CHAR, &d) && d == REDCOLL_UINT8, "MPI_UNSIGNED_CHAR");
    MCHECK(redcoll_mpi_dtype(MPI_LONG, &d) && redcoll_dtype_size(d) == sizeof(long), "MPI_LONG");
    MCHECK(redcoll_mpi_dtype(MPI_UINT64_T, &d) && d == REDCOLL_UINT64, "MPI_UINT64_T");
    MCHECK(redcoll_mpi_dtype(MPI_DOUBLE, &d) && d == REDCOLL_DOUBLE, "MPI_DOUBLE");
    MCHECK(redcoll_mpi_dtype(MPI_LONG_DOUBLE, &d) && d == REDCOLL_LONG_DOUBLE, "MPI_LONG_DOUBLE");
    MCHECK(redcoll_mpi_dtype(MPI_DOUBLE_INT, &d) && d == REDCOLL_DOUBLE_INT, "MPI_DOUBLE_INT");
    MCHECK(redcoll_mpi_dtype(MPI_2INT, &d) && d == REDCOLL_2INT, "MPI_2INT");
    MCHECK(redcoll_mpi_dtype(MPI_SHORT_INT, &d) && d == REDCOLL_SHORT_INT, "MPI_SHORT_INT");
    MCHECK(redcoll_mpi_dtype(MPI_LONG_DOUBLE_INT, &d) && d == REDCOLL_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
    {   /* every mapped type has MPI's extent (the pair types include padding) */
        MPI_Datatype all[] = { MPI_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_LONG_LONG, MPI_FLOAT,
                               MPI_DOUBLE, MPI_LONG_DOUBLE, MPI_FLOAT_INT, MPI_DOUBLE_INT,
                               MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
                               MPI_C_BOOL, MPI_AINT, MPI_INT16_T, MPI_UNSIGNED_LONG };
        for (i = 0; i < (int)(sizeof all / sizeof all[0]); ++i) {
            MPI_Aint lb = 0, extent = 0;
            MPI_Type_get_extent(all[i], &lb, &extent);
            MCHECK(redcoll_mpi_dtype(all[i], &d) && redcoll_dtype_size(d) == (size_t)extent,
                   "type %d: extent %ld", i, (long)extent);
        }
    }
    MPI_Type_contiguous(2, MPI_INT, &derived);
    MPI_Type_commit(&derived);
    MCHECK(!redcoll_mpi_dtype(derived, &d), "a derived type is not mapped");
    MPI_Type_free(&derived);
    MCHECK(redcoll_mpi_op(MPI_SUM, &o) && o.kind == REDCOLL_OP_SUM && o.commutative, "MPI_SUM");
    MCHECK(redcoll_mpi_op(MPI_MAXLOC, &o) && o.kind == REDCOLL_OP_MAXLOC, "MPI_MAXLOC");
    MCHECK(redcoll_mpi_op(MPI_BXOR, &o) && o.kind == REDCOLL_OP_BXOR, "MPI_BXOR");
    MCHECK(!redcoll_mpi_op(MPI_REPLACE, &o), "MPI_REPLACE is not a reduction");
    MCHECK(redcoll_mpi_buf(MPI_IN_PLACE) == REDCOLL_IN_PLACE, "MPI_IN_PLACE");
    MCHECK(redcoll_mpi_buf(&o) == (void *)&o, "other buffers pass through");
    MCHECK(redcoll_mpi_result(MPI_SUCCESS) == REDCOLL_OK, "MPI_SUCCESS");
    MCHECK(redcoll_mpi_result(MPI_ERR_TRUNCATE) == REDCOLL_ERR_TRANSPORT, "MPI_ERR_TRUNCATE");
    MCHECK(redcoll_mpi_result(MPI_ERR_NO_MEM) == REDCOLL_ERR_OUT_OF_MEMORY, "MPI_ERR_NO_MEM");
    {   /* the real limit: a 5 GB message is INT_MAX, INT_MAX and the rest */
        size_t five = (size_t)5000000000ULL, im = (size_t)INT_MAX;
        MCHECK(g_m.max_chunk == im, "default limit INT_MAX");
        MCHECK(redcoll__mpi_nchunks(&g_m, five) == 3 && redcoll__mpi_chunk(&g_m, five, 0) == INT_MAX &&
                   redcoll__mpi_chunk(&g_m, five, 1) == INT_MAX &&
                   (size_t)redcoll__mpi_chunk(&g_m, five, 2) == five - 2 * im,
               "5 GB in three chunks");
        MCHECK(redcoll__mpi_nchunks(&g_m, im) == 1 && redcoll__mpi_nchunks(&g_m, im + 1) == 2 &&
                   redcoll__mpi_chunk(&g_m, im + 1, 1) == 1 && redcoll__mpi_nchunks(&g_m, 0) == 1,
               "INT_MAX is one chunk, INT_MAX + 1 two; an empty message is one");
    }
    /* node_of agrees with an independent split */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &in_node_rank);
    node_leader = g_rank;
    MPI_Allreduce(MPI_IN_PLACE, &node_leader, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MCHECK(g_m.t.node_of != NULL, "node_of is provided");
    MCHECK(g_m.t.node_of(g_m.t.user, g_rank) == g_m.t.node_of(g_m.t.user, node_leader),
           "same node as my node's lowest rank");
    MCHECK(g_m.t.node_of(g_m.t.user, 0) == 0 && g_m.nodes >= 1, "ids start at 0");
    for (i = 0; i < g_size; ++i)
        MCHECK(g_m.t.node_of(g_m.t.user, i) >= 0 && g_m.t.node_of(g_m.t.user, i) < g_m.nodes,
               "rank %d: id in range", i);
    {   /* the duplicate: redcoll's messages never meet the application's */
        int cmp = 0;
        MPI_Comm_compare(g_m.comm, MPI_COMM_WORLD, &cmp);
        MCHECK(cmp == MPI_CONGRUENT, "a duplicate of the communicator");
    }
}

/* redcoll's 28-bit tags fit any MPI: the transport keeps the low bits that
   MPI_TAG_UB allows (MPICH: all of them), at least the 15 every MPI has. */
static void test_tags(void) {
    int *ub = NULL, flag = 0, x = g_rank, y = -1;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    MCHECK(flag && g_m.tag_mask >= 32767 && g_m.tag_mask <= *ub && (g_m.tag_mask & (g_m.tag_mask + 1)) == 0 &&
           (g_m.tag_mask == REDCOLL_TAG_MAX || g_m.tag_mask * 2 + 1 > *ub),
           "tag mask %d for MPI_TAG_UB %d", g_m.tag_mask, flag ? *ub : -1);
    if (g_size > 1 && g_rank < 2) /* the largest tag goes through */
        MCHECK(g_m.t.sendrecv(g_m.t.user, 1 - g_rank, &x, sizeof x, 1 - g_rank, &y, sizeof y,
                              REDCOLL_TAG_MAX) == REDCOLL_OK && y == 1 - g_rank, "REDCOLL_TAG_MAX");
}

/* Sizes that do not match become TRANSPORT errors; abort marks the transport
   failed without ending the job. */
static void test_errors(void) {
    redcoll_mpi m;
    char buf[8] = { 0 };
    MCHECK(redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) == REDCOLL_OK, "init");
    if (g_size > 1 && g_rank < 2) {
        if (g_rank == 0) {
            MCHECK(m.t.send(m.t.user, 1, buf, 8, 1) == REDCOLL_OK, "send 8");
            MCHECK(m.t.send(m.t.user, 1, buf, 4, 2) == REDCOLL_OK, "send 4");
        } else {
            MCHECK(m.t.recv(m.t.user, 0, buf, 4, 1) == REDCOLL_ERR_TRANSPORT, "8 bytes into 4: truncation");
            MCHECK(m.t.recv(m.t.user, 0, buf, 8, 2) == REDCOLL_ERR_TRANSPORT, "4 bytes where 8 were expected");
            MCHECK(m.last_mpi_error != MPI_SUCCESS, "the MPI error code is kept");
            MCHECK(m.failure.why == REDCOLL_ERR_TRANSPORT && m.failure.peer == 0 && m.failure.want == 4 &&
                   m.failure.got == 8, "the first failure is kept: 8 bytes from rank 0 where 4 were expected");
            /* a message of the wrong size is not taken: the right receive still gets it */
            MCHECK(m.t.recv(m.t.user, 0, buf, 8, 1) == REDCOLL_OK && m.t.recv(m.t.user, 0, buf, 4, 2) == REDCOLL_OK,
                   "the messages stay until a receive of their size takes them");
        }
    }
    MCHECK(redcoll_mpi_init(NULL, MPI_COMM_WORLD, NULL) == REDCOLL_ERR_INVALID_ARG, "NULL");
    /* abort tells every rank: ranks 0 and 1 finish their transfers first, or
       rank 2's notice could end rank 1's receives before their own failures */
    MPI_Barrier(MPI_COMM_WORLD);
    m.t.abort(m.t.user, REDCOLL_ERR_TRANSPORT);
    MCHECK(m.failed, "abort marks the transport failed");
    MCHECK(m.t.send(m.t.user, 0, buf, 1, 3) == REDCOLL_ERR_ABORTED, "later calls: ABORTED");
    MCHECK(redcoll_allreduce(&m.t, REDCOLL_IN_PLACE, buf, 2, REDCOLL_INT32, REDCOLL_SUM, NULL) ==
               (g_size == 1 ? REDCOLL_OK : REDCOLL_ERR_ABORTED),
           "a collective on an aborted transport fails at once (p = 1 sends nothing)");
    MPI_Barrier(MPI_COMM_WORLD);
    redcoll_mpi_finalize(&m);
}

/* Requests outstanding at once beside the application's own MPI traffic:
   ten allreduces of one shape (different data; beyond the 7 tag slots)
   and a bcast started, a ring of MPI_Isend/MPI_Irecv posted on
   MPI_COMM_WORLD, then the requests completed in reverse order (polling
   the odd ones), the ring waited for last; each result against MPI. */
#define MOUT 10
static void test_outstanding(void) {
    int p = g_size, r = g_rank, i, k, nxt = (r + 1) % p, prv = (r + p - 1) % p;
    size_t n = 5003;
    int32_t *in = (int32_t *)malloc(MOUT * n * sizeof *in), *got = (int32_t *)malloc(MOUT * n * sizeof *got);
    int32_t *want = (int32_t *)malloc(n * sizeof *want), bc[64], bcw[64], sring[100], rring[100];
    redcoll_coll_request *q[MOUT + 1];
    MPI_Request ring[2];
    MPI_Status rst[2];
    redcoll_options o;
    if (!in || !got || !want) { MCHECK(0, "out of memory"); free(in); free(got); free(want); return; }
    memset(&o, 0, sizeof o);
    for (k = 0; k < MOUT; ++k) {
        for (i = 0; (size_t)i < n; ++i) in[(size_t)k * n + (size_t)i] = mval(r + 17 * k, (size_t)i);
        o.algo = k % 2 ? REDCOLL_ALGO_RING : REDCOLL_ALGO_AUTO;
        MCHECK(redcoll_iallreduce(&g_m.t, in + (size_t)k * n, got + (size_t)k * n, n, REDCOLL_INT32, REDCOLL_SUM,
                                  &o, &q[k]) == REDCOLL_OK, "start %d", k);
    }
    for (i = 0; i < 64; ++i) bc[i] = bcw[i] = r == p - 1 ? 1000 + i : -1;
    MCHECK(redcoll_ibcast(&g_m.t, bc, 64, REDCOLL_INT32, p - 1, NULL, &q[MOUT]) == REDCOLL_OK, "ibcast");
    for (i = 0; i < 100; ++i) sring[i] = r * 100 + i;
    MPI_Irecv(rring, 100, MPI_INT, prv, 5, MPI_COMM_WORLD, &ring[0]);
    MPI_Isend(sring, 100, MPI_INT, nxt, 5, MPI_COMM_WORLD, &ring[1]);
    for (k = MOUT; k >= 0; --k) {
        redcoll_result res;
        int done = 0;
        if (k % 2) do res = redcoll_test(q[k], &done); while (!done);
        else res = redcoll_wait(q[k]);
        MCHECK(res == REDCOLL_OK, "request %d: %s", k, redcoll_result_string(res));
        redcoll_request_free(q[k]);
    }
    MPI_Waitall(2, ring, rst);
    for (i = 0; i < 100 && rring[i] == prv * 100 + i; ++i) {}
    MCHECK(i == 100, "the application's ring: element %d", i);
    MPI_Bcast(bcw, 64, MPI_INT, p - 1, MPI_COMM_WORLD);
    MCHECK(memcmp(bc, bcw, sizeof bc) == 0, "ibcast against MPI_Bcast");
    for (k = 0; k < MOUT; ++k) {
        MPI_Allreduce(in + (size_t)k * n, want, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
        MCHECK(memcmp(got + (size_t)k * n, want, n * sizeof *want) == 0, "allreduce %d against MPI", k);
    }
    free(in); free(got); free(want);
}

/* A plan started again and again takes nothing from its allocator. */
static void test_plan_starts(void) {
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_AUTO, REDCOLL_ALGO_RING, REDCOLL_ALGO_RECURSIVE_DOUBLING };
    double x[3000], y[3000];
    int i, k;
    for (k = 0; k < 3; ++k) {
        long allocs = 0, before;
        redcoll_options o;
        redcoll_plan *pl;
        memset(&o, 0, sizeof o);
        o.algo = algos[k];
        o.allocator.alloc_fn = mcount_alloc; o.allocator.free_fn = mcount_free; o.allocator.user_data = &allocs;
        for (i = 0; i < 3000; ++i) x[i] = g_rank + i;
        MCHECK(redcoll_allreduce_init(&g_m.t, x, y, 3000, REDCOLL_DOUBLE, REDCOLL_SUM, &o, &pl) == REDCOLL_OK,
               "init");
        before = allocs;
        for (i = 0; i < 5; ++i) {
            MCHECK(redcoll_plan_start(pl) == REDCOLL_OK && redcoll_plan_wait(pl) == REDCOLL_OK, "start %d", i);
            MCHECK(y[7] == (double)g_size * (g_size - 1) / 2 + (double)g_size * 7, "result");
        }
        MCHECK(allocs == before, "%s: %ld allocations in 5 starts", redcoll_algo_name(algos[k]), allocs - before);
        redcoll_plan_free(pl);
    }
}

/* The cases of ranks that disagree (test/disagree_cases.h) that wait
   forever over MPI (found with `test_mpi --disagree CASE`: its watchdog ends it),
   as MPICH's own collectives wait in each but `algorithm` (test/pmpi/run.sh
   shows MPICH's behaviour): no rank is shown a message of the other call by
   the peer it waits for -- each waits to receive from a rank that waits to
   receive (two roots of a reduce or gather, a bcast among reductions, a
   reduce_bcast allreduce beside a recursive doubling one at odd p), and the
   one stale message lies with a rank that waits for another. The threads
   and simulator suites run these cases too, and end them with an error. */
static int td_mpi_waits(redcoll_coll c, td_kind k, int p) {
    static const char *const waits[] = {
        "2 reduce:root", "2 reduce:other collective", "2 gather:root", "2 gather:other collective",
        "3 allreduce:algorithm", "3 allreduce:other collective", "3 reduce:other collective",
        "3 reduce_scatter:other collective", "3 reduce_scatter_block:other collective",
        "3 allgather:other collective", "3 allgatherv:other collective", "3 alltoall:other collective",
        "3 gather:other collective", "3 barrier:skip", "3 barrier:other collective",
        "4 reduce:root", "4 reduce:skip", "4 reduce:other collective", "4 gather:root", "4 gather:skip",
        "4 gather:other collective",
        "5 allreduce:algorithm", "5 reduce:other collective", "5 reduce_scatter:other collective",
        "5 reduce_scatter_block:other collective", "5 alltoall:other collective",
        "5 gather:other collective", "5 barrier:skip", "5 barrier:other collective"
    };
    char name[80];
    size_t i;
    snprintf(name, sizeof name, "%d %s:%s", p, redcoll_coll_name(c), td_kind_names[k]);
    for (i = 0; i < sizeof waits / sizeof waits[0]; ++i)
        if (strcmp(waits[i], name) == 0) return 1;
    return 0;
}

static char td_running[80]; /* the case running, for the watchdog */

/* A case that has not ended after 10 s (alarm) ends the program with its
   name on stderr and status 3: the suite fails on it (mpiexec stops the
   other ranks). */
static void td_watchdog(int sig) {
    static const char msg[] = ": no end after 10 s (a hang)\n";
    (void)sig;
    if (write(2, td_running, strlen(td_running)) < 0 || write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(3);
}

/* One case on a transport of its own (a failed transport stays failed);
   every rank's first error gathered on every rank. Each rank's part of
   the case, up to the gathering, is bounded by the watchdog. */
static void td_mpi_case(td_case *x, redcoll_result *all) {
    redcoll_mpi m;
    int res;
    if (redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) { MPI_Abort(MPI_COMM_WORLD, 2); return; }
    snprintf(td_running, sizeof td_running, "test_mpi: rank %d, case %s:%s", g_rank, redcoll_coll_name(x->coll),
             td_kind_names[x->kind]);
    signal(SIGALRM, td_watchdog);
    alarm(10);
    td_rank(&m.t, x);
    res = (int)x->res[g_rank];
    MPI_Allgather(&res, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD); /* redcoll_result is an int enum */
    alarm(0);
    MPI_Barrier(MPI_COMM_WORLD); /* what the case left has arrived: finalize drops it */
    redcoll_mpi_finalize(&m);
}

static const char *td_filter; /* test_mpi --disagree COLL:KIND runs that case alone */

static void test_disagree(void) {
    int c, k, runs = 0, r;
    redcoll_result all[TD_PMAX];
    if (g_size < 2 || g_size > TD_PMAX) { MCHECK(1, "p"); return; }
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
        for (k = 0; k < TD_KINDS; ++k) {
            td_case x;
            char name[64];
            int ok = 0;
            memset(&x, 0, sizeof x);
            x.coll = (redcoll_coll)c; x.kind = (td_kind)k;
            if (!td_applies(x.coll, x.kind, x.algo)) continue;
            snprintf(name, sizeof name, "%s:%s", redcoll_coll_name(x.coll), td_kind_names[k]);
            if (td_filter ? strcmp(td_filter, name) != 0 : td_mpi_waits(x.coll, x.kind, g_size)) continue;
            td_mpi_case(&x, all);
            for (r = 0; r < g_size; ++r) ok += all[r] == REDCOLL_OK;
            if (td_filter && g_rank == 0) printf("%s: %d of %d ranks OK\n", name, ok, g_size);
            if (k == TD_NONE) MCHECK(ok == g_size, "%s: ranks that agree failed", name);
            else MCHECK(ok == 0, "%s: %d of %d ranks ended without an error", name, ok, g_size);
            if (k == TD_NONE && c == REDCOLL_COLL_ALLREDUCE)
                MCHECK(x.out[g_rank][1] == (int32_t)(100 * g_size * (g_size - 1) / 2 + g_size), "result");
            runs++;
        }
    MCHECK(runs > (td_filter ? 0 : 50), "%d cases", runs);
}

/* A correct program's long sends are never taken for a disagreement: the
   exact sum's allreduce at 2 MiB cuts it into rendezvous messages, and a
   receiver that took one and went on to the next nested call (the
   allgatherv after the allreduce) shows that call's message at the head
   while the sender's MPI_Test may not have seen its send complete yet.
   Meant for the build with looks at every poll and one look enough
   (run.sh's test_mpi_looks, --looks): there, a look that counted a send
   its own probe completed as suspect failed within a few dozen calls at
   -n 4. */
static void test_long_sends(void) {
    size_t n = ((size_t)2 << 20) / sizeof(double), k;
    double *a = (double *)malloc(n * sizeof *a), *b = (double *)malloc(n * sizeof *b);
    int i, bad = 0;
    char why[400];
    MCHECK(a && b, "memory");
    if (!a || !b) { free(a); free(b); return; }
    for (k = 0; k < n; ++k) a[k] = (double)(g_rank + 1) + (double)k * 0x1p-30;
    for (i = 0; i < 60 && !bad; ++i) {
        redcoll_result r = redcoll_allreduce(&g_m.t, a, b, n, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT, NULL);
        MCHECK(r == REDCOLL_OK, "call %d: %s", i, redcoll_mpi_failure_string(&g_m, why, sizeof why));
        MCHECK(b[n - 1] == (double)g_size * (g_size + 1) / 2 + (double)g_size * (double)(n - 1) * 0x1p-30,
               "call %d: result", i);
        bad = r != REDCOLL_OK;
    }
    free(a);
    free(b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc == 2 && strcmp(argv[1], "--looks") == 0) { /* test_long_sends alone */
        if (redcoll_mpi_init(&g_m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) MPI_Abort(MPI_COMM_WORLD, 2);
        mtest("long sends of a correct program, a look per poll", test_long_sends);
        redcoll_mpi_finalize(&g_m);
        if (g_rank == 0) printf("%ld passed, %ld failed\n", g_passed, g_failed);
        MPI_Finalize();
        return g_failed ? 1 : 0;
    }
    if (argc == 3 && strcmp(argv[1], "--disagree") == 0) { /* one case alone (the waits list) */
        td_filter = argv[2];
        test_disagree();
        MPI_Finalize();
        return 0;
    }
    if (redcoll_mpi_init(&g_m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) {
        fprintf(stderr, "redcoll_mpi_init failed\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mtest("helpers, node_of", test_helpers);
    mtest("every collective and algorithm vs MPI", test_collectives);
    mtest("every collective and algorithm started", test_started);
    mtest("outstanding requests and MPI's own", test_outstanding);
    mtest("plan starts allocate nothing", test_plan_starts);
    mtest("chunking (300-byte limit)", test_chunking);
    mtest("library chunks (chunk_bytes) over MPI", test_library_chunks);
    mtest("one-shot scratch from the transport's block", test_scratch_entry);
    mtest("tags within MPI_TAG_UB", test_tags);
    mtest("size mismatch and abort", test_errors);
    mtest("ranks that disagree: every collective and kind", test_disagree);
    mtest("node-aware rows on the node's transport", test_node_transport);
    redcoll_mpi_finalize(&g_m);
    if (g_rank == 0) printf("%ld passed, %ld failed\n", g_passed, g_failed);
    MPI_Finalize();
    return g_failed ? 1 : 0;
}
