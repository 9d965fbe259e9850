/* test_shm.c - the POSIX-threads transport (transports/redcoll_shm.h): every
   registered schedule on real threads, checked bitwise against the harness's
   sequential canonical-order reference; the transport's own promises
   (rendezvous, eager inline sends, FIFO per (source, tag), exact sizes, progress of pending
   receives, self exchange); abort, fault and timeout release. Runs under
   `make tsan` as well, with smaller vectors. */
#include "transports/redcoll_shm.h"

#include <sched.h>

#if defined(__SANITIZE_THREAD__)
#define TSHM_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TSHM_SANITIZED 1
#endif
#endif
#ifndef TSHM_SANITIZED
#define TSHM_SANITIZED 0
#endif

/* Largest vector per rank: 4 MiB, or 256 KiB under the thread sanitizer. */
#define TSHM_BIG_BYTES ((size_t)(TSHM_SANITIZED ? 256 : 4096) << 10)

static const int tshm_ps[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 16 };
#define TSHM_NP ((int)(sizeof tshm_ps / sizeof tshm_ps[0]))

/* ---- running one harness case on the shm transport ------------------------ */

typedef struct tshm_case {
    rc_state       *st;
    long            fail_at;   /* > 0: call fail_at of rank fail_rank fails */
    int             fail_rank;
    int            *hit;       /* set when the fault fired */
} tshm_case;

/* A transport that forwards to another and fails one call: the fault
   injection of the simulator, for a real transport. */
typedef struct tshm_faulty {
    const redcoll_transport *in;
    redcoll_transport        t;
    long                     calls, fail_at;
    int                      hit;
} tshm_faulty;

static int tshm_fault(tshm_faulty *f) {
    if (++f->calls != f->fail_at) return 0;
    f->hit = 1;
    return 1;
}
static redcoll_result tshm_f_send(void *u, int dst, const void *b, size_t n, int tag) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT : f->in->send(f->in->user, dst, b, n, tag);
}
static redcoll_result tshm_f_recv(void *u, int src, void *b, size_t n, int tag) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT : f->in->recv(f->in->user, src, b, n, tag);
}
static redcoll_result tshm_f_sendrecv(void *u, int dst, const void *sb, size_t sn, int src,
                                      void *rb, size_t rn, int tag) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT
                         : f->in->sendrecv(f->in->user, dst, sb, sn, src, rb, rn, tag);
}
static redcoll_result tshm_f_isend(void *u, int dst, const void *b, size_t n, int tag,
                                   redcoll_request *q) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT : f->in->isend(f->in->user, dst, b, n, tag, q);
}
static redcoll_result tshm_f_irecv(void *u, int src, void *b, size_t n, int tag,
                                   redcoll_request *q) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT : f->in->irecv(f->in->user, src, b, n, tag, q);
}
static redcoll_result tshm_f_waitall(void *u, int n, redcoll_request *q) {
    tshm_faulty *f = (tshm_faulty *)u;
    return f->in->waitall(f->in->user, n, q);
}
static void tshm_f_abort(void *u, redcoll_result why) {
    tshm_faulty *f = (tshm_faulty *)u;
    f->in->abort(f->in->user, why);
}
static int tshm_f_node_of(void *u, int rank) {
    tshm_faulty *f = (tshm_faulty *)u;
    return f->in->node_of(f->in->user, rank);
}

static redcoll_result tshm_f_recv_reduce(void *u, int src, size_t n, int tag,
                                         const redcoll_consumer *into) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT : f->in->recv_reduce(f->in->user, src, n, tag, into);
}
static redcoll_result tshm_f_sendrecv_reduce(void *u, int dst, const void *sb, size_t sn, int src,
                                             size_t rn, int tag, const redcoll_consumer *into) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT
                         : f->in->sendrecv_reduce(f->in->user, dst, sb, sn, src, rn, tag, into);
}
static void *tshm_f_scratch(void *u, size_t bytes) {
    tshm_faulty *f = (tshm_faulty *)u;
    return f->in->scratch(f->in->user, bytes);
}

static redcoll_result tshm_f_test(void *u, int n, redcoll_request *q, int *done) {
    tshm_faulty *f = (tshm_faulty *)u;
    return f->in->test(f->in->user, n, q, done);
}
static redcoll_result tshm_f_irecv_reduce(void *u, int src, size_t n, int tag,
                                          const redcoll_consumer *into, redcoll_request *q) {
    tshm_faulty *f = (tshm_faulty *)u;
    return tshm_fault(f) ? REDCOLL_ERR_TRANSPORT : f->in->irecv_reduce(f->in->user, src, n, tag, into, q);
}

/* f forwards every entry of t, and fails its call number fail_at. */
static void tshm_faulty_make(tshm_faulty *f, const redcoll_transport *t, long fail_at) {
    memset(f, 0, sizeof *f);
    f->in = t;
    f->fail_at = fail_at;
    f->t = *t;
    f->t.user = f;
    f->t.send = tshm_f_send; f->t.recv = tshm_f_recv; f->t.sendrecv = tshm_f_sendrecv;
    f->t.isend = tshm_f_isend; f->t.irecv = tshm_f_irecv; f->t.waitall = tshm_f_waitall;
    f->t.abort = tshm_f_abort; f->t.node_of = tshm_f_node_of;
    f->t.recv_reduce = t->recv_reduce ? tshm_f_recv_reduce : NULL; /* every entry the library calls */
    f->t.sendrecv_reduce = t->sendrecv_reduce ? tshm_f_sendrecv_reduce : NULL;
    f->t.scratch = t->scratch ? tshm_f_scratch : NULL;
    f->t.test = t->test ? tshm_f_test : NULL;
    f->t.irecv_reduce = t->irecv_reduce ? tshm_f_irecv_reduce : NULL;
}

static redcoll_result tshm_case_rank(const redcoll_transport *t, void *arg) {
    tshm_case *c = (tshm_case *)arg;
    tshm_faulty f;
    redcoll_result r;
    if (c->fail_at <= 0 || t->rank != c->fail_rank) return rc_rank(t, c->st);
    tshm_faulty_make(&f, t, c->fail_at);
    r = rc_rank(&f.t, c->st);
    *c->hit = f.hit;
    return r;
}

static const char *tshm_describe(const rc_spec *s, const redcoll_shm_config *cfg) {
    static char buf[320];
    snprintf(buf, sizeof buf, "shm %s spin=%d", tf_describe(s), cfg ? cfg->spin : 0);
    return buf;
}

/* Runs spec on a shm team of spec->p threads. results[] gets each rank's
   return; *verified whether every result was compared with the reference. */
static redcoll_result tshm_run(const rc_spec *spec, const redcoll_shm_config *cfg,
                               long fail_at, int fail_rank, int *hit, redcoll_result *results,
                               rc_outcome *o) {
    rc_state st;
    tshm_case c;
    redcoll_result r = rc_begin(spec, &st, o);
    if (r != REDCOLL_OK) return r;
    memset(&c, 0, sizeof c);
    c.st = &st; c.fail_at = fail_at; c.fail_rank = fail_rank; c.hit = hit;
    r = redcoll_shm_run_config(cfg, spec->p, tshm_case_rank, &c, results);
    o->rep.size = spec->p;
    o->rep.results = results; /* borrowed: the caller's array, never freed here */
    rc_end(&st, o);
    return r;
}

/* One case that must succeed with the right result on every rank. */
static void tshm_ok(const rc_spec *s, const redcoll_shm_config *cfg) {
    rc_outcome o;
    redcoll_result *res = (redcoll_result *)calloc((size_t)s->p, sizeof *res);
    if (!res) { CHECK(0, "out of memory"); return; }
    tshm_run(s, cfg, 0, 0, NULL, res, &o);
    CHECK(o.ok, "%s: %s", tshm_describe(s, cfg), o.why);
    free(res);
}

static int tshm_block_coll(redcoll_coll c) { /* count is per block of p */
    return c == REDCOLL_COLL_GATHER || c == REDCOLL_COLL_SCATTER || c == REDCOLL_COLL_ALLGATHER ||
           c == REDCOLL_COLL_ALLGATHERV || c == REDCOLL_COLL_ALLTOALL ||
           c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
}

/* Whether the harness drives this collective (it grows with the library):
   its rank function answers UNSUPPORTED for collectives it does not know,
   and an argument error (an empty transport) for those it does. */
static int tshm_harness_has(redcoll_coll coll) {
    static const redcoll_transport none;
    rc_spec s = rc_spec_make(coll, REDCOLL_ALGO_AUTO, 1, 0);
    rc_state st;
    char *nil[1] = { NULL };
    memset(&st, 0, sizeof st);
    st.spec = &s;
    st.dtype = REDCOLL_INT32;
    st.op = REDCOLL_SUM;
    st.esize = 4;
    st.sbuf = st.rbuf = nil;
    return rc_rank(&none, &st) != REDCOLL_ERR_UNSUPPORTED;
}

/* Every schedule of one collective on p = 1..9 and 16 threads: counts 0, 1,
   p+1, 1000, 65537 and a 4 MiB vector at p = 4 and 7; in place and out;
   roots 0, p/2, p-1; int32 sum, double sum, 2int MINLOC and the
   non-commutative matrix product (where the schedule keeps order). Spinning
   and sleeping waits alternate. (Per-block collectives divide the counts
   by p, so every case moves about the same bytes.) */
static void tshm_sweep_coll(redcoll_coll coll) {
    int algo, pi, k;
    for (algo = 0; algo < REDCOLL_ALGO_COUNT; ++algo) {
        if (!redcoll_algo_supported(coll, (redcoll_algo)algo)) continue;
        for (pi = 0; pi < TSHM_NP; ++pi) {
            int p = tshm_ps[pi], div = tshm_block_coll(coll) ? p : 1;
            size_t counts[6];
            int nc = 5;
            counts[0] = 0; counts[1] = 1; counts[2] = (size_t)p + 1; counts[3] = 1000;
            counts[4] = 65537 / (size_t)div;
            if (p == 4 || p == 7) counts[nc++] = TSHM_BIG_BYTES / 8 / (size_t)div + 3;
            for (k = 0; k < nc; ++k) {
                rc_spec s = rc_spec_make(coll, (redcoll_algo)algo, p, counts[k]);
                redcoll_shm_config cfg;
                int roots[3], nroots = 1, j;
                memset(&cfg, 0, sizeof cfg);
                cfg.spin = k % 2 ? 300 : -1;
                cfg.timeout_seconds = 120; /* a hang fails the test instead of the run */
                s.in_place = tf_has_in_place(coll) && (k % 2 == 1);
                if (k >= 4) s.dtype = REDCOLL_DOUBLE;
                roots[0] = 0;
                if (rc_rooted(coll) && p > 1) { roots[1] = p / 2; roots[2] = p - 1; nroots = 3; }
                if (k >= 4) { roots[0] = p / 2; nroots = 1; } /* large vectors: one root */
                for (j = 0; j < nroots; ++j) { s.root = roots[j]; tshm_ok(&s, &cfg); }
            }
            if (rc_reduces(coll)) {
                rc_spec s = rc_spec_make(coll, (redcoll_algo)algo, p, (size_t)p + 2);
                s.op = "minloc";
                s.dtype = REDCOLL_2INT;
                s.root = p - 1;
                tshm_ok(&s, NULL);
                if (algo == REDCOLL_ALGO_AUTO || redcoll_algo_keeps_order(coll, (redcoll_algo)algo)) {
                    s = rc_spec_make(coll, (redcoll_algo)algo, p, 3 * (size_t)p + 5);
                    s.op = "matmul";
                    s.root = p / 2;
                    s.in_place = p % 2;
                    tshm_ok(&s, NULL);
                }
            }
        }
    }
}

static void test_shm_sweep(void) {
    int coll, skipped = 0;
    for (coll = 0; coll < REDCOLL_COLL_COUNT; ++coll) {
        if (!tshm_harness_has((redcoll_coll)coll)) { ++skipped; continue; }
        tshm_sweep_coll((redcoll_coll)coll);
    }
    if (skipped && tf_verbose)
        printf("      (%d collectives not driven by the harness yet)\n", skipped);
}

/* Many calls back to back on one team: races show up as wrong results. */
static redcoll_result tshm_repeat_rank(const redcoll_transport *t, void *arg) {
    int32_t buf[67], want[67];
    int it, i, p = t->size;
    (void)arg;
    for (it = 0; it < 300; ++it) {
        redcoll_options o;
        memset(&o, 0, sizeof o);
        o.algo = it % 2 ? REDCOLL_ALGO_RECURSIVE_DOUBLING : REDCOLL_ALGO_AUTO;
        for (i = 0; i < 67; ++i) { buf[i] = t->rank * 1000 + i + it; want[i] = (p * (p - 1) / 2) * 1000 + p * (i + it); }
        if (redcoll_allreduce(t, REDCOLL_IN_PLACE, buf, (size_t)(it % 67) + 1, REDCOLL_INT32,
                              REDCOLL_SUM, &o) != REDCOLL_OK)
            return REDCOLL_ERR_TRANSPORT;
        if (memcmp(buf, want, sizeof(int32_t) * (size_t)(it % 67 + 1)) != 0) return REDCOLL_ERR_INVALID_ARG;
        if (redcoll_barrier(t, NULL) != REDCOLL_OK) return REDCOLL_ERR_TRANSPORT;
    }
    return REDCOLL_OK;
}

static void test_shm_repeat(void) {
    static const int ps[] = { 2, 3, 5, 8 };
    int i;
    for (i = 0; i < 4; ++i) {
        redcoll_shm_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.spin = i % 2 ? 300 : -1;
        CHECK(redcoll_shm_run_config(&cfg, ps[i], tshm_repeat_rank, NULL, NULL) == REDCOLL_OK,
              "p=%d: 300 allreduce+barrier rounds", ps[i]);
    }
}

/* ---- the transport's own promises ------------------------------------------ */

/* FIFO per (source, tag), tags kept apart, exact sizes. */
static redcoll_result tshm_fifo_rank(const redcoll_transport *t, void *arg) {
    int32_t a[3] = { 1, 2, 3 }, b[2] = { 4, 5 }, c[1] = { 6 }, x[3] = { 0, 0, 0 }, tag7 = 7;
    redcoll_request q[4];
    (void)arg;
    if (t->rank == 0) {
        if (t->isend(t->user, 1, a, 12, 5, &q[0]) || t->isend(t->user, 1, b, 8, 5, &q[1]) ||
            t->isend(t->user, 1, c, 4, 5, &q[2]) || t->isend(t->user, 1, &tag7, 4, 6, &q[3]))
            return REDCOLL_ERR_TRANSPORT;
        return t->waitall(t->user, 4, q);
    }
    if (t->recv(t->user, 0, x, 4, 6) || x[0] != 7) return REDCOLL_ERR_INVALID_ARG; /* other tag first */
    if (t->recv(t->user, 0, x, 12, 5) || x[0] != 1 || x[2] != 3) return REDCOLL_ERR_INVALID_ARG;
    if (t->recv(t->user, 0, x, 8, 5) || x[0] != 4 || x[1] != 5) return REDCOLL_ERR_INVALID_ARG;
    if (t->recv(t->user, 0, x, 4, 5) || x[0] != 6) return REDCOLL_ERR_INVALID_ARG;
    return REDCOLL_OK;
}

/* Rank 0 sends arg[0] bytes, rank 1 expects arg[1]. */
static redcoll_result tshm_mismatch_rank(const redcoll_transport *t, void *arg) {
    const size_t *m = (const size_t *)arg;
    char buf[64] = { 0 };
    if (t->rank == 0) return t->send(t->user, 1, buf, m[0], 1);
    return t->recv(t->user, 0, buf, m[1], 1);
}

/* A send above the inline size must not complete before its receive is
   posted: rank 1 waits a while before receiving and checks rank 0 is still
   inside send. */
static int tshm_flag;
static redcoll_result tshm_rendezvous_rank(const redcoll_transport *t, void *arg) {
    int x[10] = { 42 }, y[10] = { 0 }, i, early;
    (void)arg;
    if (t->rank == 0) {
        redcoll_result r = t->send(t->user, 1, x, sizeof x, 3);
        __atomic_store_n(&tshm_flag, 1, __ATOMIC_SEQ_CST);
        return r;
    }
    for (i = 0; i < 2000; ++i) sched_yield();
    early = __atomic_load_n(&tshm_flag, __ATOMIC_SEQ_CST);
    if (t->recv(t->user, 0, y, sizeof y, 3) != REDCOLL_OK || y[0] != 42) return REDCOLL_ERR_TRANSPORT;
    return early ? REDCOLL_ERR_INVALID_ARG : REDCOLL_OK;
}

/* Inline sends (<= 32 bytes) are eager: two blocking sends to one rank
   complete before it posts any receive (they fill the channel's two
   slots); a third waits in the queue until received (rendezvous again). */
static redcoll_result tshm_eager_rank(const redcoll_transport *t, void *arg) {
    int64_t x[4] = { 7, 8, 9, 10 }, y[4] = { 0, 0, 0, 0 };
    int i, flag;
    redcoll_result r;
    (void)arg;
    if (t->rank == 0) {
        if ((r = t->send(t->user, 1, x, 32, 4)) || (r = t->send(t->user, 1, &x[1], 8, 4))) return r;
        __atomic_store_n(&tshm_flag, 1, __ATOMIC_SEQ_CST);
        r = t->send(t->user, 1, &x[2], 8, 4);
        __atomic_store_n(&tshm_flag, 2, __ATOMIC_SEQ_CST);
        return r;
    }
    for (i = 0; i < 100000 && __atomic_load_n(&tshm_flag, __ATOMIC_SEQ_CST) == 0; ++i) sched_yield();
    for (i = 0; i < 2000; ++i) sched_yield();
    flag = __atomic_load_n(&tshm_flag, __ATOMIC_SEQ_CST);
    if ((r = t->recv(t->user, 0, y, 32, 4))) return r;
    if (y[0] != 7 || y[1] != 8 || y[2] != 9 || y[3] != 10) return REDCOLL_ERR_TRANSPORT;
    if ((r = t->recv(t->user, 0, y, 8, 4)) || y[0] != 8) return r ? r : REDCOLL_ERR_TRANSPORT;
    if ((r = t->recv(t->user, 0, y, 8, 4)) || y[0] != 9) return r ? r : REDCOLL_ERR_TRANSPORT;
    return flag == 1 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* Back-to-back sends on one channel, sizes 0..40 (eager inline ones that
   fill both slots, rendezvous ones, queued ones), two tags: rank 1
   receives tag 1 in turn with recv, tag 2 through irecvs completed in
   batches of 5 (served meanwhile by the progress guarantee), and must see
   each tag's messages in posting order, every byte intact. arg != NULL:
   rank 1 yields now and then, so rank 0 runs ahead into the queue. */
#define TSHM_B2B (TSHM_SANITIZED ? 2000 : 10000)
static size_t tshm_b2b_bytes(int k) { return (size_t)(k * 7) % 41; }
static int tshm_b2b_tag(int k) { return k % 3 == 2 ? 2 : 1; }
static unsigned char tshm_b2b_byte(int k, size_t i) { return (unsigned char)(k * 31 + (int)i * 5 + 1); }
static redcoll_result tshm_b2b_rank(const redcoll_transport *t, void *arg) {
    unsigned char buf[6][40];
    redcoll_request q[5];
    int k, j, nq = 0, at[5];
    size_t i;
    redcoll_result r;
    if (t->rank == 0) {
        for (k = 0; k < TSHM_B2B; ++k) {
            for (i = 0; i < tshm_b2b_bytes(k); ++i) buf[0][i] = tshm_b2b_byte(k, i);
            if ((r = t->send(t->user, 1, buf[0], tshm_b2b_bytes(k), tshm_b2b_tag(k)))) return r;
        }
        return REDCOLL_OK;
    }
    for (k = 0; k <= TSHM_B2B; ++k) {
        if (nq == 5 || (k == TSHM_B2B && nq)) { /* check a batch of tag 2 */
            if ((r = t->waitall(t->user, nq, q))) return r;
            for (j = 0; j < nq; ++j)
                for (i = 0; i < tshm_b2b_bytes(at[j]); ++i)
                    if (buf[1 + j][i] != tshm_b2b_byte(at[j], i)) return REDCOLL_ERR_INVALID_ARG;
            nq = 0;
        }
        if (k == TSHM_B2B) break;
        if (arg && k % 7 == 0) sched_yield();
        memset(buf[nq + 1], 0, sizeof buf[0]);
        if (tshm_b2b_tag(k) == 2) {
            at[nq] = k;
            if ((r = t->irecv(t->user, 0, buf[nq + 1], tshm_b2b_bytes(k), 2, &q[nq]))) return r;
            ++nq;
            continue;
        }
        if ((r = t->recv(t->user, 0, buf[0], tshm_b2b_bytes(k), 1))) return r;
        for (i = 0; i < tshm_b2b_bytes(k); ++i)
            if (buf[0][i] != tshm_b2b_byte(k, i)) return REDCOLL_ERR_INVALID_ARG;
    }
    return REDCOLL_OK;
}

/* Progress: rank 1's pending irecv is served while it waits in another call
   (rank 0's blocking send to it must complete before rank 0 reaches the
   exchange rank 1 is waiting in). Also an exchange with oneself. */
static redcoll_result tshm_progress_rank(const redcoll_transport *t, void *arg) {
    int x = t->rank + 10, y = -1, z = -1;
    redcoll_request q;
    redcoll_result r;
    (void)arg;
    r = t->sendrecv(t->user, t->rank, &x, sizeof x, t->rank, &z, sizeof z, 9); /* self */
    if (r || z != x) return REDCOLL_ERR_INVALID_ARG;
    if (t->rank == 0) {
        if ((r = t->send(t->user, 1, &x, sizeof x, 1))) return r;
        return t->sendrecv(t->user, 1, &x, sizeof x, 1, &y, sizeof y, 2);
    }
    if ((r = t->irecv(t->user, 0, &z, sizeof z, 1, &q))) return r;
    if ((r = t->sendrecv(t->user, 0, &x, sizeof x, 0, &y, sizeof y, 2))) return r;
    if ((r = t->waitall(t->user, 1, &q))) return r;
    return z == 10 && y == 10 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

static void test_shm_transport(void) {
    redcoll_result res[2];
    redcoll_shm_config cfg;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_seconds = 60;
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_fifo_rank, NULL, res) == REDCOLL_OK,
          "FIFO per (source, tag): %s / %s", redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    {
        static const size_t mis[][2] = { { 40, 36 }, { 36, 40 }, { 8, 4 }, { 4, 8 }, { 0, 8 }, { 33, 32 } };
        for (i = 0; i < (int)(sizeof mis / sizeof mis[0]); ++i) {
            int eager = mis[i][0] <= 32;
            redcoll_shm_run_config(&cfg, 2, tshm_mismatch_rank, (void *)mis[i], res);
            CHECK(res[0] == (eager ? REDCOLL_OK : REDCOLL_ERR_TRANSPORT) && res[1] == REDCOLL_ERR_TRANSPORT,
                  "send %zu bytes to a recv of %zu: %s: %s / %s", mis[i][0], mis[i][1],
                  eager ? "the receiver fails (the eager sender is done)" : "both fail",
                  redcoll_result_string(res[0]), redcoll_result_string(res[1]));
        }
    }
    tshm_flag = 0;
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_rendezvous_rank, NULL, res) == REDCOLL_OK,
          "a 40-byte send is rendezvous: %s / %s", redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    tshm_flag = 0;
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_eager_rank, NULL, res) == REDCOLL_OK,
          "two inline sends complete unreceived, a third waits: %s / %s", redcoll_result_string(res[0]),
          redcoll_result_string(res[1]));
    for (i = 0; i < 8; ++i) { /* races are rare: several runs */
        cfg.spin = i % 4 == 0 ? -1 : 300;
        CHECK(redcoll_shm_run_config(&cfg, 2, tshm_b2b_rank, i % 2 ? &cfg : NULL, res) == REDCOLL_OK,
              "spin=%d%s: %d back-to-back sends of 0..40 bytes, two tags, in order and intact: %s / %s",
              cfg.spin, i % 2 ? ", receiver yields" : "", TSHM_B2B, redcoll_result_string(res[0]),
              redcoll_result_string(res[1]));
    }
    cfg.spin = 0;
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_progress_rank, NULL, res) == REDCOLL_OK,
          "pending irecv served while waiting elsewhere: %s / %s", redcoll_result_string(res[0]),
          redcoll_result_string(res[1]));
    CHECK(redcoll_shm_run(0, tshm_progress_rank, NULL, NULL) == REDCOLL_ERR_INVALID_ARG, "p = 0");
    {
        redcoll_shm_team *team = NULL;
        const redcoll_transport *t;
        CHECK(redcoll_shm_team_create(NULL, 3, &team) == REDCOLL_OK && team, "create");
        t = redcoll_shm_transport(team, 2);
        CHECK(t && t->rank == 2 && t->size == 3 && t->node_of && t->node_of(t->user, 1) == 0,
              "transport of rank 2 of 3, one node");
        CHECK(!redcoll_shm_transport(team, 3) && !redcoll_shm_transport(team, -1), "bad ranks");
        CHECK(t && t->send(t->user, 3, &cfg, 1, 0) == REDCOLL_ERR_TRANSPORT, "peer out of range");
        CHECK(redcoll_shm_team_status(team) == REDCOLL_OK, "not aborted");
        redcoll_shm_team_destroy(team);
    }
}

/* ---- receive-and-reduce, the overflow queue, scratch ------------------------ */

/* A consumer that records how it was called and adds 12-byte units (three
   int32 each, an odd unit) into `acc`: acc[k] += piece[k]. */
typedef struct tshm_sink {
    int32_t *acc;
    size_t   unit, next;   /* next: the offset the following piece must start at */
    int      calls, bad;   /* bad: a piece out of order, not whole units, or past the end */
    size_t   cap;          /* bytes acc holds */
} tshm_sink;

static void tshm_sink_fn(void *arg, const void *piece, size_t off, size_t bytes) {
    tshm_sink *k = (tshm_sink *)arg;
    const int32_t *q = (const int32_t *)piece;
    size_t i;
    k->calls++;
    if (off != k->next || off % k->unit || bytes % k->unit || bytes == 0 || off + bytes > k->cap) {
        k->bad = 1;
        return;
    }
    for (i = 0; i < bytes / 4; ++i) k->acc[off / 4 + i] += q[i];
    k->next = off + bytes;
}

static redcoll_consumer tshm_sink_make(tshm_sink *k, int32_t *acc, size_t bytes) {
    redcoll_consumer c;
    memset(k, 0, sizeof *k);
    k->acc = acc; k->unit = 12; k->cap = bytes;
    c.fn = tshm_sink_fn; c.arg = k; c.unit = 12;
    return c;
}

/* Payload of `units` 12-byte units from rank r: word i is r * 100000 + i + 1. */
static void tshm_fill(int32_t *b, int r, size_t units) {
    size_t i;
    for (i = 0; i < units * 3; ++i) b[i] = r * 100000 + (int32_t)i + 1;
}

static const size_t tshm_units[] = { 0, 1, 2, 3, 5, 11, 333, 87381 }; /* 0..1 MiB; 24, 36 bytes: the inline edge */
#define TSHM_NUNITS ((int)(sizeof tshm_units / sizeof tshm_units[0]))

/* The consumer entries against every partner: rank 1's recv_reduce matches
   rank 0's send; rank 0's sendrecv_reduce matches rank 1's plain sendrecv,
   then a fused exchange on both sides; acc = own values + partner's. Every
   size of tshm_units; acc is checked word by word, and the consumer saw one
   in-order cover of whole units (or no call for an empty message). */
static redcoll_result tshm_fused_rank(const redcoll_transport *t, void *arg) {
    int me = t->rank, other = 1 - t->rank, ui, step;
    int32_t *mine, *theirs, *acc;
    size_t maxb = tshm_units[TSHM_NUNITS - 1] * 12;
    redcoll_result res = REDCOLL_OK;
    (void)arg;
    mine = (int32_t *)malloc(maxb); theirs = (int32_t *)malloc(maxb); acc = (int32_t *)malloc(maxb);
    if (!mine || !theirs || !acc) { free(mine); free(theirs); free(acc); return REDCOLL_ERR_OUT_OF_MEMORY; }
    for (ui = 0; ui < TSHM_NUNITS && res == REDCOLL_OK; ++ui) {
        size_t units = tshm_units[ui], b = units * 12, i;
        tshm_fill(mine, me, units);
        tshm_fill(theirs, other, units);
        for (step = 0; step < 3 && res == REDCOLL_OK; ++step) {
            tshm_sink k;
            redcoll_consumer c = tshm_sink_make(&k, acc, b);
            int fused = step == 2 || (step == 0 && me == 1) || (step == 1 && me == 0);
            memcpy(acc, mine, b);
            if (step == 0 && me == 0) res = t->send(t->user, 1, mine, b, 3);
            else if (step == 0) res = t->recv_reduce(t->user, 0, b, 3, &c);
            else if (!fused) res = t->sendrecv(t->user, other, mine, b, other, acc, b, 3);
            else res = t->sendrecv_reduce(t->user, other, mine, b, other, b, 3, &c);
            if (res != REDCOLL_OK) break;
            if (!fused) { /* plain receive: acc holds the partner's payload */
                for (i = 0; step > 0 && i < units * 3; ++i)
                    if (acc[i] != theirs[i]) res = REDCOLL_ERR_INVALID_ARG;
                continue;
            }
            if (k.bad || k.next != b || k.calls != (b ? 1 : 0)) res = REDCOLL_ERR_INVALID_ARG;
            for (i = 0; i < units * 3; ++i)
                if (acc[i] != mine[i] + theirs[i]) res = REDCOLL_ERR_INVALID_ARG;
        }
    }
    free(mine); free(theirs); free(acc);
    return res;
}

/* FIFO across the entries: rank 1 posts an irecv, then a recv_reduce, then
   a plain recv, all from rank 0 with one tag; rank 0 sends 1, 2, 3 (the
   second and third wait in the overflow queue behind the first's slot). */
static redcoll_result tshm_fused_fifo_rank(const redcoll_transport *t, void *arg) {
    int32_t v[3] = { 1, 2, 3 }, a = 0, b[3] = { 0, 0, 0 }, c = 0;
    redcoll_request q[3];
    tshm_sink k;
    redcoll_consumer sink;
    redcoll_result r;
    (void)arg;
    if (t->rank == 0) {
        if (t->isend(t->user, 1, &v[0], 4, 8, &q[0]) || t->isend(t->user, 1, &v[1], 4, 8, &q[1]) ||
            t->isend(t->user, 1, &v[2], 4, 8, &q[2]))
            return REDCOLL_ERR_TRANSPORT;
        return t->waitall(t->user, 3, q);
    }
    sink = tshm_sink_make(&k, b, sizeof b);
    k.unit = sink.unit = 4;
    b[0] = 40;
    if ((r = t->irecv(t->user, 0, &a, 4, 8, &q[0]))) return r;
    if ((r = t->recv_reduce(t->user, 0, 4, 8, &sink))) return r;
    if ((r = t->recv(t->user, 0, &c, 4, 8))) return r;
    if ((r = t->waitall(t->user, 1, q))) return r;
    return a == 1 && b[0] == 42 && c == 3 && k.calls == 1 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* Sizes must match exactly, through the consumer too: rank 0 sends
   `sent` bytes, rank 1 expects `want`; the receiver fails, so does the
   sender unless its send was inline (eager: done when posted), and the
   consumer is never called. Pairs cross the inline edge (24, 36 bytes)
   and beyond. */
static const size_t tshm_mis[][2] = { { 12, 24 }, { 24, 12 }, { 36, 48 }, { 120, 108 }, { 0, 12 } };
static redcoll_result tshm_fused_mismatch_rank(const redcoll_transport *t, void *arg) {
    const size_t *m = tshm_mis[*(int *)arg];
    int32_t buf[32] = { 0 }, acc[32] = { 0 };
    tshm_sink k;
    redcoll_consumer c = tshm_sink_make(&k, acc, sizeof acc);
    redcoll_result r;
    if (t->rank == 0) return t->send(t->user, 1, buf, m[0], 4);
    r = t->recv_reduce(t->user, 0, m[1], 4, &c);
    return k.calls ? REDCOLL_ERR_INVALID_ARG : r;
}

/* Exchanges of mismatched sizes: rank 0 fused, rank 1 plain sendrecv. */
static redcoll_result tshm_fused_xmismatch_rank(const redcoll_transport *t, void *arg) {
    int32_t buf[32] = { 0 }, acc[32] = { 0 };
    tshm_sink k;
    redcoll_consumer c = tshm_sink_make(&k, acc, sizeof acc);
    redcoll_result r;
    (void)arg;
    if (t->rank == 1) return t->sendrecv(t->user, 0, buf, 60, 0, acc, 60, 5);
    r = t->sendrecv_reduce(t->user, 1, buf, 60, 1, 48, 5, &c);
    return k.calls ? REDCOLL_ERR_INVALID_ARG : r;
}

/* Waiting in a consumer entry: rank 0 waits for a message rank 1 never
   sends (a timeout); with `arg` set rank 1 aborts instead. */
static redcoll_result tshm_fused_stuck_rank(const redcoll_transport *t, void *arg) {
    int32_t buf[3] = { 0 }, acc[3] = { 0 };
    tshm_sink k;
    redcoll_consumer c = tshm_sink_make(&k, acc, sizeof acc);
    redcoll_result r;
    int i;
    if (t->rank == 1) {
        if (!arg) return REDCOLL_OK;
        for (i = 0; i < 200; ++i) sched_yield(); /* usually rank 0 is waiting by now */
        t->abort(t->user, REDCOLL_ERR_TRANSPORT);
        return REDCOLL_OK;
    }
    r = t->recv_reduce(t->user, 1, 12, 6, &c);
    if (r == (arg ? REDCOLL_ERR_ABORTED : REDCOLL_ERR_TIMEOUT))
        r = t->sendrecv_reduce(t->user, 1, buf, 12, 1, 12, 6, &c);
    return k.calls ? REDCOLL_ERR_INVALID_ARG : r;
}

/* A fused exchange with oneself, and consumers the transport refuses. */
static redcoll_result tshm_fused_self_rank(const redcoll_transport *t, void *arg) {
    int32_t x[6], acc[6];
    tshm_sink k;
    redcoll_consumer c = tshm_sink_make(&k, acc, sizeof acc), bad = c;
    int i;
    (void)arg;
    for (i = 0; i < 6; ++i) { x[i] = i + 1; acc[i] = 10 * i; }
    if (t->sendrecv_reduce(t->user, t->rank, x, 24, t->rank, 24, 2, &c)) return REDCOLL_ERR_TRANSPORT;
    for (i = 0; i < 6; ++i) if (acc[i] != 11 * i + 1) return REDCOLL_ERR_INVALID_ARG;
    bad.unit = 0;
    if (t->recv_reduce(t->user, t->rank, 24, 2, &bad) != REDCOLL_ERR_INVALID_ARG) return REDCOLL_ERR_INVALID_ARG;
    bad.unit = 12;
    if (t->recv_reduce(t->user, t->rank, 20, 2, &bad) != REDCOLL_ERR_INVALID_ARG) return REDCOLL_ERR_INVALID_ARG;
    bad.fn = NULL;
    if (t->sendrecv_reduce(t->user, t->rank, x, 24, t->rank, 24, 2, &bad) != REDCOLL_ERR_INVALID_ARG ||
        t->recv_reduce(t->user, t->rank, 24, 2, NULL) != REDCOLL_ERR_INVALID_ARG)
        return REDCOLL_ERR_INVALID_ARG;
    return k.calls == 1 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

static void test_shm_fused(void) {
    redcoll_result res[3];
    redcoll_shm_config cfg;
    int spin, i;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_seconds = 60;
    for (spin = -1; spin <= 300; spin += 301) { /* sleeping and spinning waits */
        cfg.spin = spin;
        CHECK(redcoll_shm_run_config(&cfg, 2, tshm_fused_rank, NULL, res) == REDCOLL_OK,
              "spin=%d: recv_reduce / sendrecv_reduce against send / sendrecv / themselves, odd sizes: %s / %s",
              spin, redcoll_result_string(res[0]), redcoll_result_string(res[1]));
        CHECK(redcoll_shm_run_config(&cfg, 2, tshm_fused_fifo_rank, NULL, res) == REDCOLL_OK,
              "spin=%d: FIFO across irecv, recv_reduce, recv: %s / %s", spin,
              redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    }
    cfg.spin = 0;
    for (i = 0; i < (int)(sizeof tshm_mis / sizeof tshm_mis[0]); ++i) {
        redcoll_shm_run_config(&cfg, 2, tshm_fused_mismatch_rank, &i, res);
        CHECK(res[0] == (tshm_mis[i][0] <= 32 ? REDCOLL_OK : REDCOLL_ERR_TRANSPORT) &&
              res[1] == REDCOLL_ERR_TRANSPORT,
              "send %zu bytes to a recv_reduce of %zu: receiver (and rendezvous sender) fail, no consumer call: %s / %s",
              tshm_mis[i][0], tshm_mis[i][1], redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    }
    redcoll_shm_run_config(&cfg, 2, tshm_fused_xmismatch_rank, NULL, res);
    CHECK(res[0] == REDCOLL_ERR_TRANSPORT && res[1] == REDCOLL_ERR_TRANSPORT,
          "sendrecv_reduce expecting 48 bytes of a 60-byte sendrecv: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    CHECK(redcoll_shm_run_config(&cfg, 3, tshm_fused_self_rank, NULL, res) == REDCOLL_OK,
          "fused exchange with oneself; bad consumers refused: %s", redcoll_result_string(res[0]));
    cfg.timeout_seconds = 0.05;
    redcoll_shm_run_config(&cfg, 2, tshm_fused_stuck_rank, NULL, res);
    CHECK(res[0] == REDCOLL_ERR_TIMEOUT && res[1] == REDCOLL_OK,
          "recv_reduce / sendrecv_reduce time out, consumer untouched: %s", redcoll_result_string(res[0]));
    cfg.timeout_seconds = 60;
    redcoll_shm_run_config(&cfg, 2, tshm_fused_stuck_rank, &cfg, res);
    CHECK(res[0] == REDCOLL_ERR_ABORTED && res[1] == REDCOLL_OK,
          "recv_reduce / sendrecv_reduce released by abort: %s", redcoll_result_string(res[0]));
}

/* Overflow queue: rank 0 posts 9 isends to rank 1 with tags 0..8 (two in
   the slots, seven queued); rank 1 receives them in reverse tag order. With
   `arg` set (and a short timeout), three 40-byte isends (rendezvous) nobody
   receives are withdrawn instead (both slots and the queue) and the channel
   still works in order. */
static int tshm_withdrawn;
static redcoll_result tshm_overflow_rank(const redcoll_transport *t, void *arg) {
    int32_t v[9], big[10] = { 0 }, w = 0, i;
    redcoll_request q[9];
    redcoll_result r;
    if (t->rank == 0) {
        for (i = 0; i < 9; ++i) v[i] = 100 + i;
        if (!arg) {
            for (i = 0; i < 9; ++i)
                if ((r = t->isend(t->user, 1, &v[i], 4, i, &q[i]))) return r;
            return t->waitall(t->user, 9, q);
        }
        for (i = 0; i < 3; ++i)
            if (t->isend(t->user, 1, big, sizeof big, 30 + i, &q[i])) return REDCOLL_ERR_TRANSPORT;
        r = t->waitall(t->user, 3, q);
        __atomic_store_n(&tshm_withdrawn, 1, __ATOMIC_SEQ_CST);
        if (r != REDCOLL_ERR_TIMEOUT) return REDCOLL_ERR_INVALID_ARG;
        if ((r = t->send(t->user, 1, &v[2], 4, 22))) return r;
        return t->send(t->user, 1, &v[3], 4, 22);
    }
    for (i = 8; !arg && i >= 0; --i)
        if ((r = t->recv(t->user, 0, &w, 4, i)) || w != 100 + i) return r ? r : REDCOLL_ERR_INVALID_ARG;
    if (!arg) return REDCOLL_OK;
    while (!__atomic_load_n(&tshm_withdrawn, __ATOMIC_SEQ_CST)) sched_yield();
    if ((r = t->recv(t->user, 0, &w, 4, 22)) || w != 102) return r ? r : REDCOLL_ERR_INVALID_ARG;
    if ((r = t->recv(t->user, 0, &w, 4, 22)) || w != 103) return r ? r : REDCOLL_ERR_INVALID_ARG;
    return REDCOLL_OK;
}

/* Many small exchanges and ping-pongs in a row, every rank with its ring
   neighbours: a lost wake-up would hang (the timeout catches it). */
static redcoll_result tshm_stress_rank(const redcoll_transport *t, void *arg) {
    int p = t->size, me = t->rank, right = (me + 1) % p, left = (me + p - 1) % p, it;
    int64_t x, y;
    redcoll_result r;
    (void)arg;
    for (it = 0; it < 2000; ++it) {
        x = (int64_t)me * 1000000 + it;
        if ((r = t->sendrecv(t->user, right, &x, 8, left, &y, 8, 1))) return r;
        if (y != (int64_t)left * 1000000 + it) return REDCOLL_ERR_INVALID_ARG;
        if (me % 2 == 0 && me + 1 < p && (r = t->send(t->user, me + 1, &x, 8, 2))) return r;
        if (me % 2 == 1 && (r = t->recv(t->user, me - 1, &y, 8, 2))) return r;
    }
    return REDCOLL_OK;
}

static void test_shm_overflow(void) {
    static const int ps[] = { 2, 3, 4, 6 };
    redcoll_result res[6];
    redcoll_shm_config cfg;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_seconds = 120;
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_overflow_rank, NULL, res) == REDCOLL_OK,
          "9 isends to one rank received in reverse tag order: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg.timeout_seconds = 0.5;
    tshm_withdrawn = 0;
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_overflow_rank, &cfg, res) == REDCOLL_OK,
          "isends withdrawn by a timeout (slot and queue) leave the order intact: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg.timeout_seconds = 120;
    for (i = 0; i < 4; ++i) {
        cfg.spin = i % 2 ? 0 : -1;
        CHECK(redcoll_shm_run_config(&cfg, ps[i], tshm_stress_rank, NULL, res) == REDCOLL_OK,
              "p=%d spin=%d: 2000 ring exchanges and ping-pongs", ps[i], cfg.spin);
    }
}

/* The scratch entry: a block per rank, the same pointer while requests do
   not grow, a larger block after a larger request, 64-byte aligned, every
   byte writable; freed by team_destroy (the sanitizers check the rest). */
static void test_shm_scratch(void) {
    redcoll_shm_team *team = NULL;
    const redcoll_transport *t0, *t1;
    char *a, *b, *c, *d;
    CHECK(redcoll_shm_team_create(NULL, 2, &team) == REDCOLL_OK, "create");
    if (!team) return;
    t0 = redcoll_shm_transport(team, 0);
    t1 = redcoll_shm_transport(team, 1);
    CHECK(t0->scratch && t0->recv_reduce && t0->sendrecv_reduce, "optional entries filled");
    CHECK(t0->flags == REDCOLL_TRANSPORT_PEER_REDUCE && t1->flags == REDCOLL_TRANSPORT_PEER_REDUCE,
          "reduces from the sender's memory, and says so (AUTO's model reads it)");
    a = (char *)t0->scratch(t0->user, 1000);
    CHECK(a && ((uintptr_t)a & 63) == 0, "1000 bytes, aligned");
    if (a) memset(a, 1, 1000);
    CHECK((char *)t0->scratch(t0->user, 1000) == a && (char *)t0->scratch(t0->user, 10) == a &&
          (char *)t0->scratch(t0->user, 0) == a, "same block for the same or smaller requests");
    b = (char *)t1->scratch(t1->user, 1000);
    CHECK(b && b != a, "each rank its own block");
    c = (char *)t0->scratch(t0->user, (size_t)3 << 20);
    CHECK(c && ((uintptr_t)c & 63) == 0, "grows to 3 MiB");
    if (c) memset(c, 2, (size_t)3 << 20);
    d = (char *)t0->scratch(t0->user, 1000);
    CHECK(d == c && (char *)t0->scratch(t0->user, (size_t)3 << 20) == c,
          "steady state: the grown block stays");
    CHECK(t0->scratch(t0->user, (size_t)-1) == NULL, "an impossible request: NULL");
    CHECK((d = (char *)t0->scratch(t0->user, 64)) != NULL && ((uintptr_t)d & 63) == 0,
          "usable again after a failed request");
    redcoll_shm_team_destroy(team);
}

/* Issue 13 item 2: a timeout too large for a deadline (1e19 s, 1e300 s,
   infinity) means no timeout; it used to fail every wait at once. NaN and
   negative ones are refused. Rank 1 sends after a pause; rank 0, never
   spinning, sleeps with the deadline. */
static redcoll_result tshm_late_rank(const redcoll_transport *t, void *arg) {
    int x = 5, y = 0, i;
    (void)arg;
    if (t->rank == 1) {
        for (i = 0; i < 300; ++i) sched_yield();
        return t->send(t->user, 0, &x, sizeof x, 1);
    }
    return t->recv(t->user, 1, &y, sizeof y, 1) == REDCOLL_OK && y == 5 ? REDCOLL_OK
                                                                      : REDCOLL_ERR_TIMEOUT;
}

static void test_shm_timeout_range(void) {
    static const double huge[] = { 1e10, 1e19, 1e30, 1e300, HUGE_VAL };
    redcoll_result res[2];
    redcoll_shm_config cfg;
    redcoll_shm_team *team = NULL;
    int i;
    memset(&cfg, 0, sizeof cfg);
    cfg.spin = -1;
    for (i = 0; i < 5; ++i) {
        cfg.timeout_seconds = huge[i];
        CHECK(redcoll_shm_run_config(&cfg, 2, tshm_late_rank, NULL, res) == REDCOLL_OK,
              "timeout %g s: a late message still arrives: %s", huge[i], redcoll_result_string(res[0]));
    }
    cfg.timeout_seconds = nan("");
    CHECK(redcoll_shm_team_create(&cfg, 2, &team) == REDCOLL_ERR_INVALID_ARG && team == NULL,
          "NaN timeout refused");
    CHECK(redcoll_shm_run_config(&cfg, 2, tshm_late_rank, NULL, NULL) == REDCOLL_ERR_INVALID_ARG,
          "NaN timeout refused by run_config");
    cfg.timeout_seconds = -1;
    CHECK(redcoll_shm_team_create(&cfg, 2, &team) == REDCOLL_ERR_INVALID_ARG, "negative timeout refused");
    cfg.timeout_seconds = -HUGE_VAL;
    CHECK(redcoll_shm_team_create(&cfg, 2, &team) == REDCOLL_ERR_INVALID_ARG, "-infinity refused");
}

/* ---- abort, faults, timeout ---------------------------------------------------- */

/* Rank 0 aborts; ranks 1..p-1 are blocked in (or about to enter) a receive
   from rank 0 and are all released with ABORTED; later calls fail too. */
static redcoll_result tshm_abort_rank(const redcoll_transport *t, void *arg) {
    int x = 0;
    (void)arg;
    if (t->rank == 0) {
        int i;
        for (i = 0; i < 100; ++i) sched_yield(); /* usually the others block first */
        t->abort(t->user, REDCOLL_ERR_TRANSPORT);
        return t->send(t->user, 1, &x, sizeof x, 1) == REDCOLL_ERR_ABORTED ? REDCOLL_OK
                                                                          : REDCOLL_ERR_INVALID_ARG;
    }
    return t->recv(t->user, 0, &x, sizeof x, 1);
}

static redcoll_result tshm_timeout_rank(const redcoll_transport *t, void *arg) {
    int x = 0;
    (void)arg;
    if (t->rank == 1) return REDCOLL_OK; /* never sends */
    return t->recv(t->user, 1, &x, sizeof x, 1);
}

/* Non-blocking requests nobody matches: waitall times out and withdraws
   them (no dangling request left in a queue: the sanitizers would see it);
   then rank 1, told by a flag, sends a message rank 0 receives normally. */
static int tshm_timed_out;
static redcoll_result tshm_waitall_timeout_rank(const redcoll_transport *t, void *arg) {
    int a = 1, b = 0, c = 0;
    redcoll_request q[2];
    redcoll_result r;
    (void)arg;
    if (t->rank == 0) {
        if (t->irecv(t->user, 1, &b, sizeof b, 40, &q[0]) || t->isend(t->user, 1, &a, sizeof a, 41, &q[1]))
            return REDCOLL_ERR_INVALID_ARG;
        r = t->waitall(t->user, 2, q);
        __atomic_store_n(&tshm_timed_out, 1, __ATOMIC_SEQ_CST);
        if (r != REDCOLL_ERR_TIMEOUT || q[0].ptr || q[1].ptr) return REDCOLL_ERR_INVALID_ARG;
        r = t->recv(t->user, 1, &c, sizeof c, 42);
        return r == REDCOLL_OK && c == 7 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
    }
    c = 7;
    while (!__atomic_load_n(&tshm_timed_out, __ATOMIC_SEQ_CST)) sched_yield();
    return t->send(t->user, 0, &c, sizeof c, 42);
}

/* Rank p-1 skips the collective; the others must not hang. */
static redcoll_result tshm_absent_rank(const redcoll_transport *t, void *arg) {
    int32_t buf[16] = { 0 };
    redcoll_options *o = (redcoll_options *)arg;
    if (t->rank == t->size - 1) return REDCOLL_OK;
    return redcoll_allreduce(t, REDCOLL_IN_PLACE, buf, 16, REDCOLL_INT32, REDCOLL_SUM, o);
}

static void test_shm_abort_timeout(void) {
    redcoll_result res[6];
    redcoll_shm_config cfg;
    int i, algo;
    memset(&cfg, 0, sizeof cfg);
    cfg.timeout_seconds = 60;
    redcoll_shm_run_config(&cfg, 6, tshm_abort_rank, NULL, res);
    CHECK(res[0] == REDCOLL_OK, "the aborting rank's later calls fail with ABORTED");
    for (i = 1; i < 6; ++i)
        CHECK(res[i] == REDCOLL_ERR_ABORTED, "rank %d released with ABORTED, got %s", i,
              redcoll_result_string(res[i]));

    cfg.timeout_seconds = 0.05;
    redcoll_shm_run_config(&cfg, 2, tshm_timeout_rank, NULL, res);
    CHECK(res[0] == REDCOLL_ERR_TIMEOUT, "a receive nobody serves times out: %s",
          redcoll_result_string(res[0]));
    cfg.timeout_seconds = 1;
    tshm_timed_out = 0;
    redcoll_shm_run_config(&cfg, 2, tshm_waitall_timeout_rank, NULL, res);
    CHECK(res[0] == REDCOLL_OK && res[1] == REDCOLL_OK,
          "waitall times out, withdraws its requests, the team goes on: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg.timeout_seconds = 0.05;

    /* a missing rank inside a collective: TIMEOUT where it is noticed, the
       library's abort releases every other rank with ABORTED */
    for (algo = 1; algo < REDCOLL_ALGO_COUNT; ++algo) {
        redcoll_options o;
        int timeouts = 0, ok = 1;
        if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)algo)) continue;
        memset(&o, 0, sizeof o);
        o.algo = (redcoll_algo)algo;
        redcoll_shm_run_config(&cfg, 5, tshm_absent_rank, &o, res);
        for (i = 0; i < 4; ++i) {
            timeouts += res[i] == REDCOLL_ERR_TIMEOUT;
            ok &= res[i] == REDCOLL_ERR_TIMEOUT || res[i] == REDCOLL_ERR_ABORTED ||
                  res[i] == REDCOLL_OK;
        }
        CHECK(ok && timeouts >= 1, "allreduce/%s with a rank missing: %d timeouts, results %s %s %s %s",
              redcoll_algo_name((redcoll_algo)algo), timeouts, redcoll_result_string(res[0]),
              redcoll_result_string(res[1]), redcoll_result_string(res[2]),
              redcoll_result_string(res[3]));
    }
}

/* Fault injection on real threads: call k of one rank fails; that rank
   returns the transport error, every other rank returns OK or ABORTED (a
   rank may finish before the failure, and then its result is right),
   nobody hangs. Every schedule. */
static void test_shm_faults(void) {
    int coll, algo;
    for (coll = 0; coll < REDCOLL_COLL_COUNT; ++coll) {
        if (!tshm_harness_has((redcoll_coll)coll)) continue;
        for (algo = 1; algo < REDCOLL_ALGO_COUNT; ++algo) {
            int fr, p = 5;
            long k;
            if (!redcoll_algo_supported((redcoll_coll)coll, (redcoll_algo)algo)) continue;
            for (fr = 0; fr < p; fr += 2) {
                for (k = 1; k <= 12; ++k) {
                    rc_spec s = rc_spec_make((redcoll_coll)coll, (redcoll_algo)algo, p, 50);
                    redcoll_shm_config cfg;
                    redcoll_result res[5];
                    rc_outcome o;
                    int hit = 0, i, others = 1;
                    memset(&cfg, 0, sizeof cfg);
                    cfg.timeout_seconds = 30;
                    s.root = 1;
                    tshm_run(&s, &cfg, k, fr, &hit, res, &o);
                    if (!hit) { CHECK(o.ok, "%s without fault: %s", tshm_describe(&s, &cfg), o.why); break; }
                    for (i = 0; i < p; ++i)
                        if (i != fr) others &= res[i] == REDCOLL_OK || res[i] == REDCOLL_ERR_ABORTED;
                    CHECK(res[fr] == REDCOLL_ERR_TRANSPORT && others && o.wrong == 0,
                          "%s, call %ld of rank %d fails: rank results %s %s %s %s %s (%s)",
                          tshm_describe(&s, &cfg), k, fr, redcoll_result_string(res[0]),
                          redcoll_result_string(res[1]), redcoll_result_string(res[2]),
                          redcoll_result_string(res[3]), redcoll_result_string(res[4]),
                          o.wrong ? o.why : "finished ranks right");
                }
            }
        }
    }
}

static void suite_shm(void) {
    tf_test("shm/transport semantics", test_shm_transport);
    tf_test("shm/receive-and-reduce", test_shm_fused);
    tf_test("shm/overflow queue and stress", test_shm_overflow);
    tf_test("shm/scratch", test_shm_scratch);
    tf_test("shm/timeout range", test_shm_timeout_range);
    tf_test("shm/abort and timeout", test_shm_abort_timeout);
    tf_test("shm/faults on every schedule", test_shm_faults);
    tf_test("shm/repeated calls", test_shm_repeat);
    tf_test("shm/every schedule on threads", test_shm_sweep);
}
