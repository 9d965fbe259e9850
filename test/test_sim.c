/* test_sim.c - the simulator's own promises, and the reliability of every
   registered schedule: rendezvous sends, deadlock reports, fault injection,
   receive-and-reduce, determinism, the figures recorded on a grid, and
   scale. */
#include <pthread.h>
#include "sim_figures.h"

static redcoll_result ts_send_first(const redcoll_transport *t, void *arg) {
    int x = t->rank, y = -1, p = t->size;
    redcoll_result r;
    (void)arg;
    r = t->send(t->user, (t->rank + 1) % p, &x, sizeof x, 7); /* buffered sends would pass */
    if (r) return r;
    return t->recv(t->user, (t->rank + p - 1) % p, &y, sizeof y, 7);
}

static void test_rendezvous_deadlock(void) {
    redcoll_mock_config cfg = redcoll_mock_defaults(5);
    redcoll_mock_report rep;
    int i;
    CHECK(redcoll_mock_run(&cfg, ts_send_first, NULL, &rep) == REDCOLL_OK, "run");
    CHECK(rep.deadlocked, "a ring of blocking sends deadlocks under rendezvous");
    for (i = 0; i < 5; ++i)
        CHECK(rep.results[i] == REDCOLL_ERR_DEADLOCK, "rank %d: %s", i,
              redcoll_result_string(rep.results[i]));
    CHECK(rep.log && strstr(rep.log, "rank 0 waits to send 4 bytes to rank 1"),
          "the report says who waits for whom:\n%s", rep.log ? rep.log : "(none)");
    redcoll_mock_report_free(&rep);
}

static redcoll_result ts_mismatch(const redcoll_transport *t, void *arg) {
    char buf[8] = { 0 };
    (void)arg;
    if (t->rank == 0) return t->send(t->user, 1, buf, 8, 1);
    return t->recv(t->user, 0, buf, 4, 1);
}

static void test_size_mismatch(void) {
    redcoll_mock_config cfg = redcoll_mock_defaults(2);
    redcoll_mock_report rep;
    redcoll_mock_run(&cfg, ts_mismatch, NULL, &rep);
    CHECK(rep.results[0] == REDCOLL_ERR_TRANSPORT && rep.results[1] == REDCOLL_ERR_TRANSPORT,
          "a size mismatch fails both ends");
    CHECK(rep.log && strstr(rep.log, "size mismatch"), "and is reported");
    redcoll_mock_report_free(&rep);
}

/* One-way and exchange messages follow the cost model exactly. */
static redcoll_result ts_timing(const redcoll_transport *t, void *arg) {
    static char big[1000], sink[1000];
    (void)arg;
    if (t->rank == 0) {
        t->send(t->user, 1, big, 1000, 1);                     /* one-way */
        return t->sendrecv(t->user, 1, big, 1000, 1, sink, 500, 2); /* exchange */
    }
    t->recv(t->user, 0, sink, 1000, 1);
    return t->sendrecv(t->user, 0, big, 500, 0, sink, 1000, 2);
}

static void test_cost_model(void) {
    redcoll_mock_config cfg = redcoll_mock_defaults(2);
    redcoll_mock_report rep;
    double a = 1e-6, b = 1e-9, fa = 0.5, fb = 0.75, want;
    cfg.model.alpha = a; cfg.model.beta = b; cfg.model.f_alpha = fa; cfg.model.f_beta = fb;
    redcoll_mock_run(&cfg, ts_timing, NULL, &rep);
    want = (fa * a + 1000 * fb * b) + (a + 1000 * b);
    CHECK(tf_close(rep.stats[0].time, want) && tf_close(rep.stats[1].time, want),
          "one-way then exchange: %g %g want %g", rep.stats[0].time, rep.stats[1].time, want);
    CHECK(rep.stats[0].rounds == 2 && rep.stats[0].msgs_sent == 2 && rep.stats[0].bytes_sent == 2000,
          "counters: rounds %ld msgs %llu bytes %llu", rep.stats[0].rounds,
          rep.stats[0].msgs_sent, rep.stats[0].bytes_sent);
    CHECK(rep.stats[1].bytes_recv == 2000 && rep.stats[1].bytes_sent == 500, "receiver counters");
    redcoll_mock_report_free(&rep);
}

/* ---- receive-and-reduce ------------------------------------------------------
   A consumer that adds int32 pieces into acc and records how it was called. */
typedef struct ts_sum {
    int32_t *acc;
    int      calls;
    size_t   off, bytes;
} ts_sum;

static void ts_sum_fn(void *arg, const void *piece, size_t off, size_t bytes) {
    ts_sum *s = (ts_sum *)arg;
    const int32_t *x = (const int32_t *)piece;
    size_t i;
    s->calls++;
    s->off = off;
    s->bytes = bytes;
    for (i = 0; i < bytes / 4; ++i) s->acc[off / 4 + i] += x[i];
}

#define TS_N   100 /* elements per message */
#define TS_P   4

/* Per rank: its input, what it accumulates, its consumer. */
typedef struct ts_rr {
    int          use_reduce;  /* recv_reduce / sendrecv_reduce, else recv / sendrecv + add */
    int32_t      in[TS_P][TS_N], acc[TS_P][TS_N], tmp[TS_P][TS_N];
    ts_sum       sum[TS_P];
    redcoll_consumer into[TS_P];
} ts_rr;

static void ts_add(int32_t *acc, const int32_t *x) {
    int i;
    for (i = 0; i < TS_N; ++i) acc[i] += x[i];
}

/* A chain 0 -> 1 -> ... -> p-1 of one-way messages (each rank adds what it
   receives to its own input and passes the sum on), then one ring exchange
   step: every rank sends its sum right and adds what comes from the left.
   Each reduction is reported through on_compute after the call, in both
   modes, as the library accounts for it (the transport does not). */
static redcoll_result ts_rr_rank(const redcoll_transport *t, void *arg) {
    ts_rr *x = (ts_rr *)arg;
    int r = t->rank, p = t->size, i;
    size_t bytes = sizeof x->in[r];
    redcoll_result res = REDCOLL_OK;
    for (i = 0; i < TS_N; ++i) x->acc[r][i] = x->in[r][i];
    if (r > 0) {
        if (x->use_reduce) res = t->recv_reduce(t->user, r - 1, bytes, 1, &x->into[r]);
        else if ((res = t->recv(t->user, r - 1, x->tmp[r], bytes, 1)) == REDCOLL_OK) ts_add(x->acc[r], x->tmp[r]);
        if (res) return res;
        t->on_compute(t->user, TS_N, bytes);
    }
    if (r + 1 < p && (res = t->send(t->user, r + 1, x->acc[r], bytes, 1)) != REDCOLL_OK) return res;
    memcpy(x->tmp[r], x->acc[r], bytes); /* the ring step sends a copy: the consumer writes acc */
    if (x->use_reduce) {
        res = t->sendrecv_reduce(t->user, (r + 1) % p, x->tmp[r], bytes, (r + p - 1) % p, bytes, 2,
                                 &x->into[r]);
    } else {
        int32_t got[TS_N];
        res = t->sendrecv(t->user, (r + 1) % p, x->tmp[r], bytes, (r + p - 1) % p, got, bytes, 2);
        if (res == REDCOLL_OK) ts_add(x->acc[r], got);
    }
    if (res == REDCOLL_OK) t->on_compute(t->user, TS_N, bytes);
    return res;
}

static void ts_rr_init(ts_rr *x, int use_reduce) {
    int r, i;
    memset(x, 0, sizeof *x);
    x->use_reduce = use_reduce;
    for (r = 0; r < TS_P; ++r) {
        for (i = 0; i < TS_N; ++i) x->in[r][i] = (int32_t)(r * 1000 + i);
        x->sum[r].acc = x->acc[r];
        x->into[r].fn = ts_sum_fn;
        x->into[r].arg = &x->sum[r];
        x->into[r].unit = 4;
    }
}

/* recv_reduce and sendrecv_reduce deliver through the consumer, once per
   message on the sender's bytes, and count exactly as recv and sendrecv. */
static void test_recv_reduce(void) {
    static ts_rr a, b;
    int no_data;
    for (no_data = 0; no_data < 2; ++no_data) {
        redcoll_mock_config cfg = redcoll_mock_defaults(TS_P);
        redcoll_mock_report ra, rb;
        int r, i, ok = 1;
        cfg.no_data = no_data;
        cfg.model.f_alpha = 0.5;
        cfg.model.f_beta = 0.75; /* one-way and exchange messages cost differently */
        ts_rr_init(&a, 1);
        ts_rr_init(&b, 0);
        CHECK(redcoll_mock_run(&cfg, ts_rr_rank, &a, &ra) == REDCOLL_OK, "run");
        CHECK(redcoll_mock_run(&cfg, ts_rr_rank, &b, &rb) == REDCOLL_OK, "run");
        CHECK(redcoll_mock_first_error(&ra) == REDCOLL_OK && redcoll_mock_first_error(&rb) == REDCOLL_OK,
              "no-data %d: every rank succeeds", no_data);
        CHECK(memcmp(ra.stats, rb.stats, sizeof *ra.stats * TS_P) == 0 && ra.time == rb.time &&
              ra.rounds == rb.rounds, "no-data %d: the same counters, rounds and modeled times as recv / sendrecv",
              no_data);
        CHECK(ra.stats[1].msgs_recv == 2 && ra.stats[1].bytes_recv == 2 * sizeof a.in[0] &&
              ra.stats[1].calls == 3 && ra.stats[1].elems_reduced == 2 * TS_N,
              "rank 1: %llu messages, %llu bytes, %ld calls, %llu elements reduced", ra.stats[1].msgs_recv,
              ra.stats[1].bytes_recv, ra.stats[1].calls, ra.stats[1].elems_reduced);
        for (r = 0; r < TS_P; ++r) {
            int want_calls = no_data ? 0 : r > 0 ? 2 : 1;
            CHECK(a.sum[r].calls == want_calls, "no-data %d, rank %d: the consumer ran %d times, want %d",
                  no_data, r, a.sum[r].calls, want_calls);
            if (!no_data) {
                CHECK(a.sum[r].off == 0 && a.sum[r].bytes == sizeof a.in[0], "one piece covers the message");
                for (i = 0; i < TS_N; ++i) ok &= a.acc[r][i] == b.acc[r][i];
            }
        }
        CHECK(ok, "no-data %d: the consumer's sums equal receive-then-add", no_data);
        redcoll_mock_report_free(&ra);
        redcoll_mock_report_free(&rb);
    }
}

/* Small cases on two ranks, chosen by arg. */
enum { TS_MISMATCH, TS_FAULT, TS_DEADLOCK, TS_ABORTED, TS_EMPTY, TS_NO_CONSUMER };

typedef struct ts_rr2 {
    int              what;
    int32_t          acc[2][4], in[2][4];
    ts_sum           sum[2];
    redcoll_consumer into[2];
} ts_rr2;

static redcoll_result ts_rr2_rank(const redcoll_transport *t, void *arg) {
    ts_rr2 *x = (ts_rr2 *)arg;
    int r = t->rank;
    redcoll_result res;
    switch (x->what) {
    case TS_MISMATCH: /* rank 0 sends 16 bytes, rank 1 expects 8 */
        if (r == 0) return t->send(t->user, 1, x->in[0], 16, 3);
        return t->recv_reduce(t->user, 0, 8, 3, &x->into[1]);
    case TS_FAULT: /* the fault hits rank 1's sendrecv_reduce; it aborts, as the library would */
        res = t->sendrecv_reduce(t->user, 1 - r, x->in[r], 16, 1 - r, 16, 4, &x->into[r]);
        if (res != REDCOLL_OK) t->abort(t->user, res);
        return res;
    case TS_DEADLOCK: /* both wait to receive first */
        if ((res = t->recv_reduce(t->user, 1 - r, 16, 5, &x->into[r])) != REDCOLL_OK) return res;
        return t->send(t->user, 1 - r, x->in[r], 16, 5);
    case TS_ABORTED: /* rank 1 waits in recv_reduce; rank 0 gives up */
        if (r == 0) { t->abort(t->user, REDCOLL_ERR_TRANSPORT); return REDCOLL_ERR_TRANSPORT; }
        return t->recv_reduce(t->user, 0, 16, 6, &x->into[1]);
    case TS_EMPTY:
        if (r == 0) return t->send(t->user, 1, x->in[0], 0, 7);
        return t->recv_reduce(t->user, 0, 0, 7, &x->into[1]);
    default: /* a receive-and-reduce needs a consumer */
        if (r == 0) return REDCOLL_OK;
        return t->recv_reduce(t->user, 0, 16, 8, NULL);
    }
}

static void ts_rr2_run(ts_rr2 *x, int what, long fail_call, redcoll_mock_report *rep) {
    redcoll_mock_config cfg = redcoll_mock_defaults(2);
    int r;
    memset(x, 0, sizeof *x);
    x->what = what;
    for (r = 0; r < 2; ++r) {
        int i;
        for (i = 0; i < 4; ++i) x->in[r][i] = r * 10 + i + 1;
        x->sum[r].acc = x->acc[r];
        x->into[r].fn = ts_sum_fn;
        x->into[r].arg = &x->sum[r];
        x->into[r].unit = 4;
    }
    if (fail_call) { cfg.fail_rank = 1; cfg.fail_call = fail_call; }
    CHECK(redcoll_mock_run(&cfg, ts_rr2_rank, x, rep) == REDCOLL_OK, "run");
}

/* Mismatched sizes, an injected fault, a deadlock, an abort while waiting:
   receive-and-reduce takes part in each as a receive does, and the
   consumer never sees a failed message. */
static void test_recv_reduce_failures(void) {
    static ts_rr2 x;
    redcoll_mock_report rep;
    ts_rr2_run(&x, TS_MISMATCH, 0, &rep);
    CHECK(rep.results[0] == REDCOLL_ERR_TRANSPORT && rep.results[1] == REDCOLL_ERR_TRANSPORT,
          "a size mismatch fails both ends");
    CHECK(rep.log && strstr(rep.log, "size mismatch: rank 0 sends 16 bytes to rank 1, which expects 8"),
          "and is reported:\n%s", rep.log ? rep.log : "");
    CHECK(x.sum[1].calls == 0, "the consumer does not run for a mismatched message");
    redcoll_mock_report_free(&rep);

    ts_rr2_run(&x, TS_FAULT, 1, &rep);
    CHECK(rep.results[1] == REDCOLL_ERR_TRANSPORT && rep.results[0] == REDCOLL_ERR_ABORTED && !rep.deadlocked,
          "the faulty rank fails, its peer is released: %s %s", redcoll_result_string(rep.results[0]),
          redcoll_result_string(rep.results[1]));
    CHECK(rep.log && strstr(rep.log, "injected fault: rank 1, call 1 (sendrecv_reduce, peer 0)"),
          "the fault is reported:\n%s", rep.log ? rep.log : "");
    CHECK(x.sum[0].calls == 0 && x.sum[1].calls == 0 && rep.stats[1].calls == 1,
          "no consumer ran; the call was counted");
    redcoll_mock_report_free(&rep);

    ts_rr2_run(&x, TS_DEADLOCK, 0, &rep);
    CHECK(rep.deadlocked && rep.results[0] == REDCOLL_ERR_DEADLOCK && rep.results[1] == REDCOLL_ERR_DEADLOCK,
          "two receivers deadlock");
    CHECK(rep.log && strstr(rep.log, "rank 0 waits to receive-and-reduce 16 bytes from rank 1 (tag 5)") &&
          strstr(rep.log, "rank 1 waits to receive-and-reduce 16 bytes from rank 0 (tag 5)"),
          "the report says who waits for whom:\n%s", rep.log ? rep.log : "");
    redcoll_mock_report_free(&rep);

    ts_rr2_run(&x, TS_ABORTED, 0, &rep);
    CHECK(rep.results[1] == REDCOLL_ERR_ABORTED && rep.aborted && !rep.deadlocked && x.sum[1].calls == 0,
          "an abort releases a rank waiting in recv_reduce: %s", redcoll_result_string(rep.results[1]));
    redcoll_mock_report_free(&rep);

    ts_rr2_run(&x, TS_EMPTY, 0, &rep);
    CHECK(redcoll_mock_first_error(&rep) == REDCOLL_OK && x.sum[1].calls == 0 && rep.stats[1].msgs_recv == 1,
          "an empty message is a message, with nothing to consume");
    redcoll_mock_report_free(&rep);

    ts_rr2_run(&x, TS_NO_CONSUMER, 0, &rep);
    CHECK(rep.results[1] == REDCOLL_ERR_TRANSPORT && rep.log && strstr(rep.log, "without a consumer"),
          "recv_reduce without a consumer fails");
    redcoll_mock_report_free(&rep);
}

/* A group view forwards receive-and-reduce with its ranks and tags. */
static redcoll_result ts_rr_view_rank(const redcoll_transport *t, void *arg) {
    ts_rr2 *x = (ts_rr2 *)arg;
    redcoll_group g;
    redcoll_result res = redcoll_group_range(&g, t, 1, 2, 3);
    if (t->rank == 0) return REDCOLL_OK;
    if (res) return res;
    if (g.t.rank == 0) return g.t.send(g.t.user, 1, x->in[0], 16, 9);
    return g.t.recv_reduce ? g.t.recv_reduce(g.t.user, 0, 16, 9, &x->into[1]) : REDCOLL_ERR_UNSUPPORTED;
}

static void test_recv_reduce_view(void) {
    static ts_rr2 x;
    redcoll_mock_config cfg = redcoll_mock_defaults(3);
    redcoll_mock_report rep;
    ts_rr2_run(&x, TS_EMPTY, 0, &rep); /* fills x */
    redcoll_mock_report_free(&rep);
    x.sum[1].calls = 0;
    memset(x.acc, 0, sizeof x.acc);
    CHECK(redcoll_mock_run(&cfg, ts_rr_view_rank, &x, &rep) == REDCOLL_OK, "run");
    CHECK(redcoll_mock_first_error(&rep) == REDCOLL_OK && x.sum[1].calls == 1 && x.acc[1][3] == 4 &&
          rep.stats[2].msgs_recv == 1 && rep.stats[1].msgs_sent == 1,
          "view rank 1 (rank 2) received view rank 0's (rank 1's) 16 bytes through the consumer");
    redcoll_mock_report_free(&rep);
}

/* Every registered (collective, algorithm) pair, for the reliability sweeps. */
typedef struct ts_pair { redcoll_coll coll; redcoll_algo algo; } ts_pair;

static int ts_pairs(ts_pair *out, int max) {
    int c, a, n = 0;
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a)
            if (redcoll_algo_supported((redcoll_coll)c, (redcoll_algo)a) && n < max) {
                out[n].coll = (redcoll_coll)c; out[n].algo = (redcoll_algo)a; ++n;
            }
    return n;
}

/* A fault on any call of a rank fails that rank with the transport error;
   every peer it strands is released with an error (never a deadlock), and
   every rank that still returns OK holds the right result. */
static void test_faults_every_schedule(void) {
    ts_pair pairs[256];
    int n = ts_pairs(pairs, 256), i, pi;
    static const int ps[3] = { 2, 5, 8 };
    for (i = 0; i < n; ++i)
        for (pi = 0; pi < 3; ++pi) {
            int p = ps[pi], victim, k;
            for (victim = 0; victim < p; victim += p - 1 > 0 ? p - 1 : 1) {
                rc_spec s = rc_spec_make(pairs[i].coll, pairs[i].algo, p, (size_t)p + 3);
                rc_outcome clean;
                long calls;
                s.root = 1 % p;
                rc_run(&s, &clean);
                calls = clean.rep.stats ? clean.rep.stats[victim].calls : 0;
                rc_outcome_free(&clean);
                for (k = 1; k <= calls && k <= 6; ++k) {
                    rc_outcome o;
                    int r, sane = 1;
                    s.sim.fail_rank = victim;
                    s.sim.fail_call = k;
                    rc_run(&s, &o);
                    CHECK(o.rep.results && o.rep.results[victim] == REDCOLL_ERR_TRANSPORT,
                          "%s: fault at call %d of rank %d gave %s", tf_describe(&s), k, victim,
                          o.rep.results ? redcoll_result_string(o.rep.results[victim]) : "no run");
                    CHECK(!o.rep.deadlocked, "%s: fault at call %d of rank %d left peers stranded:\n%s",
                          tf_describe(&s), k, victim, o.rep.log ? o.rep.log : "");
                    CHECK(o.wrong == 0, "%s: a rank returned OK with a wrong result", tf_describe(&s));
                    for (r = 0; o.rep.results && r < p; ++r)
                        sane &= o.rep.results[r] == REDCOLL_OK || o.rep.results[r] == REDCOLL_ERR_TRANSPORT ||
                                o.rep.results[r] == REDCOLL_ERR_ABORTED;
                    CHECK(sane, "%s: unexpected result codes", tf_describe(&s));
                    rc_outcome_free(&o);
                }
            }
        }
}

/* A rank that never joins strands the others: the simulator reports the
   deadlock and every stranded rank gets an error instead of hanging. The
   others call the collective as `nonblock` says (RC_BLOCKING, RC_NB_*). */
static void ts_absent_every_schedule(int nonblock) {
    ts_pair pairs[256];
    int n = ts_pairs(pairs, 256), i;
    for (i = 0; i < n; ++i) {
        rc_spec s = rc_spec_make(pairs[i].coll, pairs[i].algo, 6, 9);
        rc_outcome o;
        int r, errors = 0;
        s.root = 2;
        s.absent_rank1 = 5 + 1;
        s.nonblock = nonblock;
        rc_run(&s, &o);
        for (r = 0; o.rep.results && r < 5; ++r) errors += o.rep.results[r] != REDCOLL_OK;
        CHECK(o.rep.deadlocked && errors > 0, "%s: a missing rank must be reported as a deadlock",
              tf_describe(&s));
        CHECK(o.wrong == 0, "%s: a rank returned OK with a wrong result", tf_describe(&s));
        rc_outcome_free(&o);
    }
}

static void test_deadlock_every_schedule(void) { ts_absent_every_schedule(RC_BLOCKING); }

static void test_deterministic(void) {
    rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, 23, 4099);
    rc_outcome a, b;
    s.dtype = REDCOLL_DOUBLE;
    rc_run(&s, &a);
    rc_run(&s, &b);
    CHECK(a.ok && b.ok, "both runs verify");
    CHECK(a.rep.stats && b.rep.stats &&
          memcmp(a.rep.stats, b.rep.stats, sizeof *a.rep.stats * 23) == 0,
          "two runs report identical counters and modeled times");
    rc_outcome_free(&a);
    rc_outcome_free(&b);
}

/* Simulations on several threads at once: each runs on its own thread and
   reports what it reports alone. */
typedef struct ts_conc {
    rc_spec    spec;
    rc_outcome out;
    redcoll_result run;
} ts_conc;

static void *ts_conc_main(void *arg) {
    ts_conc *c = (ts_conc *)arg;
    int k;
    for (k = 0; k < 3; ++k) { /* a few runs each, so that they overlap */
        if (k) rc_outcome_free(&c->out);
        c->run = rc_run(&c->spec, &c->out);
    }
    return NULL;
}

static void test_concurrent_runs(void) {
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_RING, REDCOLL_ALGO_RECURSIVE_DOUBLING,
                                           REDCOLL_ALGO_HALVING_DOUBLING };
    ts_conc c[3];
    pthread_t th[3];
    int i, started[3];
    for (i = 0; i < 3; ++i) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].spec = rc_spec_make(REDCOLL_COLL_ALLREDUCE, algos[i], 29 + i, 1001);
        started[i] = pthread_create(&th[i], NULL, ts_conc_main, &c[i]) == 0;
        CHECK(started[i], "thread %d", i);
    }
    for (i = 0; i < 3; ++i) {
        rc_outcome alone;
        if (!started[i]) continue;
        pthread_join(th[i], NULL);
        CHECK(c[i].run == REDCOLL_OK && c[i].out.ok, "%s: %s", tf_describe(&c[i].spec), c[i].out.why);
        rc_run(&c[i].spec, &alone);
        CHECK(alone.ok && c[i].out.rep.stats &&
              memcmp(alone.rep.stats, c[i].out.rep.stats, sizeof *alone.rep.stats * (size_t)c[i].spec.p) == 0,
              "%s: the same figures as a run alone", tf_describe(&c[i].spec));
        rc_outcome_free(&alone);
        rc_outcome_free(&c[i].out);
    }
}

/* stack_bytes is each rank's stack: a rank function with 1 MiB of locals
   runs when the stacks are large enough. */
static redcoll_result ts_big_frame(const redcoll_transport *t, void *arg) {
    volatile char big[1 << 20];
    int p = t->size, r = t->rank;
    (void)arg;
    big[0] = (char)r;
    big[sizeof big - 1] = (char)r;
    return t->sendrecv(t->user, (r + 1) % p, (const char *)&big[0], 1, (r + p - 1) % p,
                       (char *)&big[sizeof big - 1], 1, 0) == REDCOLL_OK && big[0] == (char)r &&
                   big[sizeof big - 1] == (char)((r + p - 1) % p) ? REDCOLL_OK : REDCOLL_ERR_TRANSPORT;
}

static void test_stack_bytes(void) {
    redcoll_mock_config cfg = redcoll_mock_defaults(5);
    redcoll_mock_report rep;
    cfg.stack_bytes = (size_t)2 << 20;
    CHECK(redcoll_mock_run(&cfg, ts_big_frame, NULL, &rep) == REDCOLL_OK &&
          redcoll_mock_first_error(&rep) == REDCOLL_OK, "1 MiB of locals on 2 MiB stacks");
    redcoll_mock_report_free(&rep);
}

/* DESIGN's scale promise: 1 M doubles at p = 1024, and p = 4096 works;
   and a schedule of many rounds: the ring at p = 1024. */
static void test_scale(void) {
    static const int ps[2] = { 1024, 4096 };
    int i;
    for (i = 0; i < 2; ++i) {
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, ps[i], 1 << 20);
        rc_outcome o;
        s.dtype = REDCOLL_DOUBLE;
        s.sim.no_data = 1;
        rc_run(&s, &o);
        CHECK(o.ok && !o.verified, "p=%d runs in no-data mode: %s", ps[i], o.why);
        CHECK(o.rep.stats && o.rep.stats[0].msgs_sent == (unsigned long long)tf_ceil_lg(ps[i]),
              "p=%d: lg p exchanges", ps[i]);
        rc_outcome_free(&o);
    }
    {
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RING, 1024, 1 << 20);
        rc_outcome o;
        s.dtype = REDCOLL_DOUBLE;
        s.sim.no_data = 1;
        rc_run(&s, &o);
        CHECK(o.ok && o.rep.rounds == 2 * 1023 && o.rep.stats[5].msgs_sent == 2 * 1023,
              "ring p=1024: 2(p-1) rounds and messages per rank (%ld rounds)", o.rep.rounds);
        rc_outcome_free(&o);
    }
}

/* No-data mode allocates no vectors: every row at p = 16 with 2^20 doubles
   (2^20 per block for the block collectives: 2^16) through a counting
   allocator. The ranks still report their scratch peaks (on_scratch), but
   what the allocator hands out at once stays within index arrays, far below
   one vector (8 MiB). The exact sum: test_exact.c (exact/nodata). */
static void test_nodata_allocates_no_vectors(void) {
    ts_pair pairs[256];
    int n = ts_pairs(pairs, 256), i, r, p = 16, big = 0;
    for (i = 0; i < n; ++i) {
        tf_count k = { 0, 0, 0, 0 };
        int blocks = rc_blocks(pairs[i].coll);
        rc_spec s = rc_spec_make(pairs[i].coll, pairs[i].algo, p, blocks ? 1 << 16 : 1 << 20);
        rc_outcome o;
        unsigned long long scratch = 0;
        s.dtype = REDCOLL_DOUBLE;
        s.root = 3;
        s.sim.no_data = 1;
        s.opts.allocator.alloc_fn = tf_count_alloc;
        s.opts.allocator.free_fn = tf_count_free;
        s.opts.allocator.user_data = &k;
        rc_run(&s, &o);
        CHECK(o.ok && !o.verified, "%s: %s", tf_describe(&s), o.why);
        for (r = 0; o.rep.stats && r < p; ++r)
            if (o.rep.stats[r].scratch_bytes > scratch) scratch = o.rep.stats[r].scratch_bytes;
        big += scratch >= ((size_t)8 << 20);
        CHECK(k.live == 0, "%s: %lld bytes never given back", tf_describe(&s), k.live);
        CHECK(k.peak <= 64 * 1024, "%s: the allocator held %lld bytes at once (a rank's scratch peak: %llu)",
              tf_describe(&s), k.peak, scratch);
        rc_outcome_free(&o);
    }
    CHECK(big >= 10, "only %d rows hold a whole vector of scratch: the check above proves little", big);
}

/* Every pair's figures on the grid of sim_figures.h (but its largest runs,
   which `build/sim_figures --check test/sim_figures.txt` adds) equal those
   in test/sim_figures.txt, first written by the thread-per-rank engine. */
static void test_figures(void) {
    redcoll_coll colls[512];
    redcoll_algo algos[512];
    char *rec = rc_read_file("test/sim_figures.txt");
    sf_hashes h;
    int n = sf_pairs(colls, algos, 512), i, k;
    long compared = 0;
    CHECK(rec != NULL, "test/sim_figures.txt not found (run the tests from the repository root)");
    if (!rec) return;
    memset(&h, 0, sizeof h);
    h.parts = ~(1u << SF_LARGE);
    for (i = 0; i < n; ++i) {
        sf_hash_pair(&h, colls[i], algos[i]);
        for (k = 0; k < SF_PARTS; ++k) {
            long cases;
            uint64_t want;
            if (!h.cases[k]) continue;
            if (!sf_recorded(rec, colls[i], algos[i], k, &cases, &want)) {
                printf("      note: %s/%s %s has no recorded figures (make sim-figures)\n",
                       redcoll_coll_name(colls[i]), redcoll_algo_name(algos[i]), sf_part_names[k]);
                continue;
            }
            compared += h.cases[k];
            CHECK(cases == h.cases[k] && want == h.hash[k],
                  "%s/%s, part %s of the grid: the figures differ from test/sim_figures.txt. If redcoll.h "
                  "changed this schedule on purpose, regenerate the file (make sim-figures); otherwise the "
                  "simulator changed them: compare `build/sim_figures --dump %s/%s` of both builds",
                  redcoll_coll_name(colls[i]), redcoll_algo_name(algos[i]), sf_part_names[k],
                  redcoll_coll_name(colls[i]), redcoll_algo_name(algos[i]));
        }
    }
    CHECK(compared > 0, "no case compared");
    if (tf_verbose) printf("      %ld cases compared\n", compared);
    free(h.text.s);
    free(rec);
}

/* ---- ranks that disagree (issue 13 item 4) ----------------------------------
   Rank 0 calls one thing, the others another: another algorithm, root, count
   or collective. That is an erroneous program, but an easy one to write with
   per-rank options; it must end with an error or a deadlock report, and a
   rank that returns OK must hold the right result for the call it made. */
typedef struct tm_call { redcoll_coll coll; redcoll_algo algo; int root; size_t count; } tm_call;
typedef struct tm_arg { tm_call call[2]; int32_t out[8][16]; } tm_arg;

static int32_t tm_input(int rank, size_t i) { return (int32_t)((rank + 1) * 10 + (int)i % 7); }

static redcoll_result tm_rank(const redcoll_transport *t, void *arg) {
    tm_arg *x = (tm_arg *)arg;
    const tm_call *c = &x->call[t->rank == 0 ? 0 : 1];
    int32_t in[16];
    redcoll_options o;
    size_t i;
    memset(&o, 0, sizeof o);
    o.algo = c->algo;
    for (i = 0; i < 16; ++i) in[i] = tm_input(t->rank, i);
    memcpy(x->out[t->rank], in, sizeof in); /* bcast: the root's input */
    switch (c->coll) {
    case REDCOLL_COLL_ALLREDUCE:
        return redcoll_allreduce(t, in, x->out[t->rank], c->count, REDCOLL_INT32, REDCOLL_SUM, &o);
    case REDCOLL_COLL_REDUCE:
        return redcoll_reduce(t, in, x->out[t->rank], c->count, REDCOLL_INT32, REDCOLL_SUM, c->root, &o);
    default:
        if (t->rank != c->root) memset(x->out[t->rank], 0, sizeof x->out[t->rank]);
        return redcoll_bcast(t, x->out[t->rank], c->count, REDCOLL_INT32, c->root, &o);
    }
}

/* Runs one disagreement on p ranks; returns the number of ranks that
   returned OK with a wrong result (0 is the promise), counts errored runs. */
static int tm_run(const tm_call *c0, const tm_call *c1, int p, int *errored) {
    tm_arg x;
    redcoll_mock_config cfg = redcoll_mock_defaults(p);
    redcoll_mock_report rep;
    int r, q, wrong = 0, any_error = 0;
    memset(&x, 0, sizeof x);
    x.call[0] = *c0; x.call[1] = *c1;
    if (redcoll_mock_run(&cfg, tm_rank, &x, &rep) != REDCOLL_OK) return -1;
    for (r = 0; r < p; ++r) {
        const tm_call *c = &x.call[r == 0 ? 0 : 1];
        size_t i;
        if (rep.results[r] != REDCOLL_OK) { any_error = 1; continue; }
        if (c->coll == REDCOLL_COLL_REDUCE && r != c->root) continue;
        for (i = 0; i < c->count; ++i) {
            int32_t want = 0;
            if (c->coll == REDCOLL_COLL_BCAST) want = tm_input(c->root, i);
            else for (q = 0; q < p; ++q) want += tm_input(q, i);
            if (x.out[r][i] != want) { wrong++; break; }
        }
    }
    *errored += any_error || rep.deadlocked;
    redcoll_mock_report_free(&rep);
    return wrong;
}

static void test_ranks_that_disagree(void) {
    static const redcoll_coll colls[3] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE, REDCOLL_COLL_BCAST };
    int p, a, b, ci, runs = 0, errored = 0;
    for (p = 4; p <= 5; ++p) {
        /* every mismatched pair of algorithms of allreduce, reduce and bcast */
        for (ci = 0; ci < 3; ++ci)
            for (a = 1; a < REDCOLL_ALGO_COUNT; ++a)
                for (b = 1; b < REDCOLL_ALGO_COUNT; ++b) {
                    tm_call c0, c1;
                    int w;
                    if (a == b || !redcoll_algo_supported(colls[ci], (redcoll_algo)a) ||
                        !redcoll_algo_supported(colls[ci], (redcoll_algo)b)) continue;
                    c0.coll = c1.coll = colls[ci];
                    c0.algo = (redcoll_algo)a; c1.algo = (redcoll_algo)b;
                    c0.root = c1.root = p - 2;
                    c0.count = c1.count = 7;
                    w = tm_run(&c0, &c1, p, &errored);
                    runs++;
                    CHECK(w == 0, "p=%d %s: rank 0 %s, others %s: %d ranks OK with a wrong result", p,
                          redcoll_coll_name(colls[ci]), redcoll_algo_name((redcoll_algo)a),
                          redcoll_algo_name((redcoll_algo)b), w);
                }
        /* same algorithm, another root or count; another collective */
        for (ci = 0; ci < 3; ++ci)
            for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
                tm_call c0, c1;
                int k, w;
                if (!redcoll_algo_supported(colls[ci], (redcoll_algo)a)) continue;
                for (k = 0; k < 4; ++k) {
                    c0.coll = c1.coll = colls[ci];
                    c0.algo = c1.algo = (redcoll_algo)a;
                    c0.root = c1.root = 1;
                    c0.count = c1.count = 7;
                    if (k == 0) { if (colls[ci] == REDCOLL_COLL_ALLREDUCE) continue; c0.root = 2; }
                    if (k == 1) { if (colls[ci] == REDCOLL_COLL_ALLREDUCE) continue; c1.root = 0; c0.root = p - 1; }
                    if (k == 2) c0.count = 6;
                    if (k == 3) { c0.coll = colls[(ci + 1) % 3]; c0.algo = REDCOLL_ALGO_AUTO; }
                    w = tm_run(&c0, &c1, p, &errored);
                    runs++;
                    CHECK(w == 0, "p=%d %s %s: rank 0 %s root %d count %zu, others root %d count %zu: "
                          "%d ranks OK with a wrong result", p, redcoll_coll_name(colls[ci]),
                          redcoll_algo_name((redcoll_algo)a), redcoll_coll_name(c0.coll), c0.root, c0.count,
                          c1.root, c1.count, w);
                }
            }
    }
    CHECK(runs > 400, "%d disagreements run", runs);
    if (tf_verbose) printf("    %d disagreements, %d ended with an error or a deadlock report\n", runs, errored);
}

static void suite_sim(void) {
    tf_test("sim/rendezvous deadlock", test_rendezvous_deadlock);
    tf_test("sim/size mismatch", test_size_mismatch);
    tf_test("sim/cost model", test_cost_model);
    tf_test("sim/recv_reduce and sendrecv_reduce count as recv and sendrecv", test_recv_reduce);
    tf_test("sim/recv_reduce: mismatch, fault, deadlock, abort", test_recv_reduce_failures);
    tf_test("sim/recv_reduce through a group view", test_recv_reduce_view);
    tf_test("sim/deterministic", test_deterministic);
    tf_test("sim/figures as recorded on the grid", test_figures);
    tf_test("sim/concurrent runs on three threads", test_concurrent_runs);
    tf_test("sim/stack_bytes", test_stack_bytes);
    tf_test("sim/scale p=1024 and 4096", test_scale);
    tf_test("sim/no-data mode allocates no vectors", test_nodata_allocates_no_vectors);
    tf_test("reliability/fault injection, every schedule", test_faults_every_schedule);
    tf_test("reliability/deadlock, every schedule", test_deadlock_every_schedule);
    tf_test("reliability/ranks that disagree (issue 13.4)", test_ranks_that_disagree);
}
