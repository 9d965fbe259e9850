/* test_nonblock.c - non-blocking collectives and started plans on the
   simulator: every row of the algorithm list started with redcoll_i<coll>
   (or redcoll_plan_start) and completed by redcoll_test, redcoll_wait or
   redcoll_plan_wait for p = 1..33, bitwise equal to the blocking call; many
   requests of one shape outstanding at once (more than the 6 tag slots),
   completed in reverse order; 24 of seven shapes, completed in a different
   order per rank; a blocking call between a start and its wait; requests on a group view beside its parent's; faults injected
   mid-request; a rank that never joins while the others poll; argument
   errors at start; a transport without non-blocking progress; plans that
   start again and again without allocating. */

/* ---- one case, blocking and non-blocking ---- */

static const char *tnb_mode(int m) {
    return m == RC_NB_WAIT ? "wait" : m == RC_NB_TEST ? "test" : m == RC_NB_PLAN ? "plan" : "blocking";
}

static int tnb_defined(const rc_spec *s, int r) { /* reduce and gather: the root's result only */
    return (s->coll != REDCOLL_COLL_REDUCE && s->coll != REDCOLL_COLL_GATHER) || r == s->root;
}

/* Runs s blocking and started in `mode`; both right, and every rank's result
   the same bytes. */
static void tnb_compare(rc_spec s, int mode) {
    tf_capture a, b;
    redcoll_result ea, eb;
    int r, same = 1, p = s.p;
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
    s.nonblock = RC_BLOCKING;
    ea = tf_capture_run(&s, rc_rank, &a);
    s.nonblock = mode;
    eb = tf_capture_run(&s, rc_rank, &b);
    CHECK(ea == REDCOLL_OK && a.o.ok, "%s blocking: %s", tf_describe(&s), ea ? redcoll_result_string(ea) : a.o.why);
    CHECK(eb == REDCOLL_OK && b.o.ok, "%s %s: %s%s%s", tf_describe(&s), tnb_mode(mode),
          eb ? redcoll_result_string(eb) : b.o.why, eb == REDCOLL_OK && b.o.rep.log ? "\n" : "",
          eb == REDCOLL_OK && b.o.rep.log ? b.o.rep.log : "");
    if (ea == REDCOLL_OK && eb == REDCOLL_OK)
        for (r = 0; r < p; ++r)
            if (tnb_defined(&s, r) && (a.bytes[r] != b.bytes[r] || !a.res[r] || !b.res[r] ||
                                       memcmp(a.res[r], b.res[r], a.bytes[r]) != 0))
                same = 0;
    CHECK(same, "%s %s: results differ from the blocking call's", tf_describe(&s), tnb_mode(mode));
    if (ea == REDCOLL_OK) tf_capture_free(&a, p);
    if (eb == REDCOLL_OK) tf_capture_free(&b, p);
}

/* Every row, p = 1..33: counts 0, 1, p+1, 1000 and 3p+5 in turn, in place
   and not, roots spread, the non-commutative matrix product on the rows
   that keep order, doubles with max elsewhere; completed by polling with
   redcoll_test, by redcoll_wait, and as a started plan. */
static void test_nb_every_row(void) {
    const redcoll_algo_info *e;
    int i, p, k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (p = 1; p <= 33; ++p)
            for (k = 0; k < 3; ++k) {
                size_t counts[5];
                rc_spec s;
                int c = (p + k) % 5;
                counts[0] = 0; counts[1] = 1; counts[2] = (size_t)p + 1; counts[3] = 1000;
                counts[4] = 3 * (size_t)p + 5;
                s = rc_spec_make(e->coll, e->algo, p, counts[c]);
                s.in_place = tf_has_in_place(e->coll) && (p + k) % 2;
                s.root = (p * 5 + k) % p;
                if (rc_reduces(e->coll) && e->keeps_order && (p + k) % 4 == 0) s.op = "matmul";
                else if (rc_reduces(e->coll) && (p + k) % 4 == 1) { s.op = "max"; s.dtype = REDCOLL_DOUBLE; }
                tnb_compare(s, k == 0 ? RC_NB_TEST : k == 1 ? RC_NB_WAIT : RC_NB_PLAN);
            }
}

/* The reproducible sum (its nested calls run on the request's stack too) and
   long vectors (the library's chunks, scratch measured for the request). */
static void test_nb_exact_and_long(void) {
    static const int ps[4] = { 2, 3, 7, 33 };
    static const redcoll_coll colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
                                           REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_COLL_REDUCE_SCATTER_BLOCK };
    int i, j;
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 4; ++j) {
            rc_spec s = rc_spec_make(colls[j], REDCOLL_ALGO_AUTO, ps[i], j == 3 ? 301 : 10007);
            s.op = "sum_exact";
            s.dtype = j % 2 ? REDCOLL_FLOAT : REDCOLL_DOUBLE;
            s.root = ps[i] - 1;
            tnb_compare(s, RC_NB_TEST);
            s = rc_spec_make(colls[j], REDCOLL_ALGO_AUTO, ps[i], j == 3 ? 30011 : 100003);
            s.dtype = REDCOLL_DOUBLE;
            s.opts.chunk_bytes = 4096; /* the unfused path's chunks on a transport with them */
            tnb_compare(s, RC_NB_WAIT);
        }
}

/* ---- many outstanding ---- */

#define TNB_MAX 10

typedef struct tnb_many {
    rc_state st[TNB_MAX];
    int      k;        /* requests started */
    int      blocking; /* 1: the second is a blocking call between the first's start and wait */
    long     fail_at;  /* > 0: call fail_at of rank fail_rank fails (tshm_faulty) */
    int      fail_rank;
    int      hit;      /* the fault fired */
} tnb_many;

/* Worst of two results: a transport failure over the errors it causes elsewhere. */
static redcoll_result tnb_worse(redcoll_result a, redcoll_result b) {
    if (a == REDCOLL_ERR_TRANSPORT || b == REDCOLL_ERR_TRANSPORT) return REDCOLL_ERR_TRANSPORT;
    return a != REDCOLL_OK ? a : b;
}

/* Starts st[0..k-1] in order on every rank and completes them in reverse
   order, odd ones by polling, even ones by redcoll_wait. */
static redcoll_result tnb_many_calls(const redcoll_transport *t, tnb_many *m) {
    redcoll_coll_request *q[TNB_MAX];
    redcoll_result r = REDCOLL_OK;
    int i, n = 0;
    if (m->blocking) { /* start A; B blocking; complete A */
        r = rc_call(t, &m->st[0], &q[0], NULL);
        if (r != REDCOLL_OK) return r;
        r = rc_call(t, &m->st[1], NULL, NULL);
        return tnb_worse(r, rc_complete(q[0], 1));
    }
    for (i = 0; i < m->k && r == REDCOLL_OK; ++i) {
        r = rc_call(t, &m->st[i], &q[i], NULL);
        if (r == REDCOLL_OK) ++n;
    }
    for (i = n - 1; i >= 0; --i) r = tnb_worse(r, rc_complete(q[i], i % 2));
    return r;
}

static redcoll_result tnb_many_rank(const redcoll_transport *t, void *arg) {
    tnb_many *m = (tnb_many *)arg;
    tshm_faulty f;
    redcoll_result r;
    if (m->fail_at <= 0 || t->rank != m->fail_rank) return tnb_many_calls(t, m);
    tshm_faulty_make(&f, t, m->fail_at);
    r = tnb_many_calls(&f.t, m);
    if (f.hit) m->hit = 1;
    return r;
}

/* What a tnb_many_run found. */
typedef struct tnb_out {
    rc_outcome     o;        /* o.rep: the simulator's report; threads: results only */
    redcoll_result res[64];  /* threads: each rank's result */
    int            ok, wrong, hit;
} tnb_out;

/* Runs spec as k requests (seeds 0..k-1: different data, the same tags but
   for their slots) on the simulator, or with threads != NULL on a team of
   threads (fail_at > 0: a fault on that call of rank fail_rank); every rank
   that returned OK must hold every request's right result. */
static void tnb_many_run(const rc_spec *spec, int k, int blocking, const redcoll_shm_config *threads,
                         long fail_at, int fail_rank, tnb_out *out) {
    tnb_many m;
    rc_spec specs[TNB_MAX];
    redcoll_mock_config cfg = spec->sim;
    int i, started = 0, p = spec->p, ran;
    memset(&m, 0, sizeof m);
    memset(out, 0, sizeof *out);
    m.k = k; m.blocking = blocking; m.fail_at = fail_at; m.fail_rank = fail_rank;
    for (i = 0; i < k; ++i) {
        rc_outcome tmp;
        specs[i] = *spec;
        specs[i].seed = (unsigned)i;
        if (rc_begin(&specs[i], &m.st[i], &tmp) != REDCOLL_OK) break;
        ++started;
    }
    cfg.model = redcoll_mock_defaults(p).model;
    cfg.size = p;
    if (started < k || p > 64) ran = 0;
    else if (threads) {
        redcoll_shm_run_config(threads, p, tnb_many_rank, &m, out->res);
        out->o.rep.size = p;
        out->o.rep.results = out->res; /* borrowed */
        ran = 1;
    } else {
        ran = redcoll_mock_run(&cfg, tnb_many_rank, &m, &out->o.rep) == REDCOLL_OK;
    }
    if (!ran) {
        for (i = 0; i < started; ++i) rc_teardown(&m.st[i]);
        CHECK(0, "%s: could not run", tf_describe(spec));
        return;
    }
    out->ok = 1;
    out->hit = m.hit;
    for (i = 0; i < k; ++i) {
        rc_outcome one;
        memset(&one, 0, sizeof one);
        one.rep = out->o.rep;
        rc_end(&m.st[i], &one);
        out->wrong += one.wrong;
        if (!one.ok && out->ok) { out->ok = 0; memcpy(out->o.why, one.why, sizeof out->o.why); }
    }
}

static void tnb_out_free(tnb_out *out, int threads) {
    if (!threads) redcoll_mock_report_free(&out->o.rep);
}

/* Every row: 2 requests of one shape and 10 (beyond the 6 slots, so the
   seventh start queues behind the first), started in order and completed in
   reverse, at p = 1, 2, 3, 5, 8 and 13; and a blocking call of the same
   shape between a start and its wait. */
static void test_nb_many_outstanding(void) {
    static const int ps[6] = { 1, 2, 3, 5, 8, 13 };
    const redcoll_algo_info *e;
    int i, pi, v;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < 6; ++pi)
            for (v = 0; v < 3; ++v) {
                int p = ps[pi];
                rc_spec s = rc_spec_make(e->coll, e->algo, p, v == 1 ? 37 : (size_t)p + 3);
                tnb_out out;
                s.root = p / 2;
                s.in_place = tf_has_in_place(e->coll) && v == 2;
                tnb_many_run(&s, v == 1 ? TNB_MAX : 2, v == 2, NULL, 0, 0, &out);
                CHECK(out.ok && out.wrong == 0, "%s, %s: %s%s%s", tf_describe(&s),
                      v == 1 ? "10 outstanding" : v == 2 ? "blocking call between" : "2 outstanding",
                      out.o.why, out.o.rep.log ? "\n" : "", out.o.rep.log ? out.o.rep.log : "");
                tnb_out_free(&out, 0);
            }
}

/* Checks a run with a fault at call k of rank victim: that rank fails with
   the transport error (when the fault fired), the peers are released (the
   simulator saw no deadlock; threads: the run ended), nobody returns OK with
   a wrong result. */
static void tnb_check_fault(const rc_spec *s, const tnb_out *out, int fired, long k, int victim) {
    int r, sane = 1, errors = 0;
    for (r = 0; r < s->p; ++r) {
        sane &= out->o.rep.results[r] == REDCOLL_OK || out->o.rep.results[r] == REDCOLL_ERR_TRANSPORT ||
                out->o.rep.results[r] == REDCOLL_ERR_ABORTED;
        errors += out->o.rep.results[r] != REDCOLL_OK;
    }
    CHECK(!out->o.rep.deadlocked, "%s: fault at call %ld of rank %d left peers stranded:\n%s",
          tf_describe(s), k, victim, out->o.rep.log ? out->o.rep.log : "");
    CHECK(sane && out->wrong == 0, "%s: fault at call %ld of rank %d: unexpected results (%d wrong)",
          tf_describe(s), k, victim, out->wrong);
    CHECK(!fired || (out->o.rep.results[victim] == REDCOLL_ERR_TRANSPORT && errors > 0),
          "%s: fault at call %ld of rank %d gave %s", tf_describe(s), k, victim,
          redcoll_result_string(out->o.rep.results[victim]));
}

/* A fault on any of the first calls of a rank while two requests are
   outstanding (the simulator's fault injection). */
static void test_nb_faults(void) {
    static const int ps[2] = { 2, 5 };
    const redcoll_algo_info *e;
    int i, pi, victim, k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < 2; ++pi) {
            int p = ps[pi];
            for (victim = 0; victim < p; victim += p - 1)
                for (k = 1; k <= 6; ++k) {
                    rc_spec s = rc_spec_make(e->coll, e->algo, p, (size_t)p + 3);
                    tnb_out out;
                    s.root = 1 % p;
                    s.sim.fail_rank = victim;
                    s.sim.fail_call = k;
                    tnb_many_run(&s, 2, 0, NULL, 0, 0, &out);
                    if (out.o.rep.results)
                        tnb_check_fault(&s, &out, out.o.rep.stats[victim].calls >= k, k, victim);
                    tnb_out_free(&out, 0);
                }
        }
}

/* A rank that never joins while the others poll with redcoll_test: the
   simulator finds the deadlock and every stranded rank gets an error. */
static void test_nb_absent_rank(void) { ts_absent_every_schedule(RC_NB_TEST); }

/* ---- requests on a view beside the parent's ---- */

static redcoll_result tnb_view_rank(const redcoll_transport *t, void *arg) {
    int32_t a[257], b[257];
    int p = t->size, me = t->rank, i, ok = 1, evens = (p + 1) / 2;
    redcoll_group g;
    redcoll_coll_request *qa = NULL, *qb = NULL;
    redcoll_result r;
    (void)arg;
    for (i = 0; i < 257; ++i) { a[i] = me + i; b[i] = 2 * me - i; }
    r = redcoll_iallreduce(t, REDCOLL_IN_PLACE, a, 257, REDCOLL_INT32, REDCOLL_SUM, NULL, &qa);
    if (r == REDCOLL_OK && me % 2 == 0) {
        int ranks[64], n = 0;
        for (i = 0; i < p; i += 2) ranks[n++] = i;
        r = redcoll_group_init(&g, t, ranks, n, 3);
        if (r == REDCOLL_OK)
            r = redcoll_iallreduce(&g.t, REDCOLL_IN_PLACE, b, 257, REDCOLL_INT32, REDCOLL_SUM, NULL, &qb);
        if (r == REDCOLL_OK) r = rc_complete(qb, 1);
        for (i = 0; r == REDCOLL_OK && i < 257; ++i) /* sum over even ranks m of 2m - i */
            ok &= b[i] == 2 * (evens * (evens - 1)) - evens * i;
    }
    r = tnb_worse(r, qa ? rc_complete(qa, 0) : REDCOLL_OK);
    for (i = 0; r == REDCOLL_OK && i < 257; ++i) ok &= a[i] == p * (p - 1) / 2 + p * i;
    return r != REDCOLL_OK ? r : ok ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

static void test_nb_view(void) {
    int p;
    for (p = 1; p <= 17; p += 2) {
        redcoll_mock_config cfg = redcoll_mock_defaults(p);
        redcoll_mock_report rep;
        CHECK(redcoll_mock_run(&cfg, tnb_view_rank, NULL, &rep) == REDCOLL_OK &&
              redcoll_mock_first_error(&rep) == REDCOLL_OK,
              "p=%d: requests on a view and its parent: %s%s", p,
              redcoll_result_string(redcoll_mock_first_error(&rep)), rep.log ? rep.log : "");
        redcoll_mock_report_free(&rep);
    }
}

/* ---- arguments, a transport without progress, plans ---- */

static redcoll_result tnb_args_rank(const redcoll_transport *t, void *arg) {
    tf_count *k = (tf_count *)arg;
    redcoll_options o;
    redcoll_coll_request *q = (redcoll_coll_request *)&o; /* must become NULL */
    double x[16] = { 1, 2, 3, 4 }, y[16] = { 5, 6, 7, 8 };
    size_t bad_counts[64];
    int done = 7, ok = 1, i;
    memset(&o, 0, sizeof o);
    o.allocator.alloc_fn = tf_count_alloc; o.allocator.free_fn = tf_count_free; o.allocator.user_data = k;
    for (i = 0; i < 64; ++i) bad_counts[i] = (size_t)-1;
    ok &= redcoll_iallreduce(t, NULL, y, 4, REDCOLL_DOUBLE, REDCOLL_SUM, &o, &q) == REDCOLL_ERR_INVALID_ARG && !q;
    ok &= redcoll_ireduce(t, x, y, 4, REDCOLL_DOUBLE, REDCOLL_SUM, t->size, &o, &q) == REDCOLL_ERR_INVALID_ARG;
    ok &= redcoll_iallreduce(t, x, y, 4, REDCOLL_DOUBLE, REDCOLL_BAND, &o, &q) == REDCOLL_ERR_INVALID_ARG;
    ok &= redcoll_ireduce_scatter(t, x, y, bad_counts, REDCOLL_DOUBLE, REDCOLL_SUM, &o, &q) == REDCOLL_ERR_INVALID_ARG;
    ok &= redcoll_iallreduce(t, x, y, 4, REDCOLL_DOUBLE, REDCOLL_SUM, &o, NULL) == REDCOLL_ERR_INVALID_ARG;
    o.algo = REDCOLL_ALGO_RECURSIVE_HALVING; /* commutative ops only */
    ok &= redcoll_ireduce_scatter_block(t, x, y, 1, REDCOLL_OPAQUE(16), redcoll_op_user(rc_matmul_fn, NULL, 0),
                                        &o, &q) == REDCOLL_ERR_UNSUPPORTED;
    ok &= x[0] == 1 && x[3] == 4 && y[0] == 5 && y[3] == 8 && !q;
    ok &= redcoll_test(NULL, &done) == REDCOLL_ERR_INVALID_ARG && redcoll_wait(NULL) == REDCOLL_ERR_INVALID_ARG;
    ok &= redcoll_plan_start(NULL) == REDCOLL_ERR_INVALID_ARG;
    redcoll_request_free(NULL);
    ok &= k->allocs == 0;
    return ok ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* Argument errors are reported by the start, with nothing sent, touched or
   allocated, and *req NULL. */
static void test_nb_arguments(void) {
    redcoll_mock_config cfg = redcoll_mock_defaults(3);
    redcoll_mock_report rep;
    tf_count k;
    memset(&k, 0, sizeof k);
    CHECK(redcoll_mock_run(&cfg, tnb_args_rank, &k, &rep) == REDCOLL_OK &&
          redcoll_mock_first_error(&rep) == REDCOLL_OK && rep.stats[0].msgs_sent == 0,
          "argument errors at start");
    CHECK(k.allocs == 0, "%ld allocations on argument errors", k.allocs);
    redcoll_mock_report_free(&rep);
}

/* The simulator's transport without `test`: requests run to completion in
   their start (done at once), with the right results. */
static redcoll_result tnb_noprogress_rank(const redcoll_transport *t, void *arg) {
    rc_state *st = (rc_state *)arg;
    redcoll_transport u = *t;
    redcoll_coll_request *q;
    redcoll_result r;
    int done = 0;
    u.test = NULL;
    r = rc_call(&u, st, &q, NULL);
    if (r != REDCOLL_OK) return r;
    r = redcoll_test(q, &done);
    redcoll_request_free(q);
    return done ? r : REDCOLL_ERR_INVALID_ARG;
}

static void test_nb_without_progress(void) {
    static const redcoll_coll colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_BCAST,
                                           REDCOLL_COLL_ALLTOALL, REDCOLL_COLL_BARRIER };
    int i, p;
    for (i = 0; i < 4; ++i)
        for (p = 1; p <= 9; p += 4) {
            rc_spec s = rc_spec_make(colls[i], REDCOLL_ALGO_AUTO, p, 300);
            tf_capture c;
            memset(&c, 0, sizeof c);
            CHECK(tf_capture_run(&s, tnb_noprogress_rank, &c) == REDCOLL_OK && c.o.ok,
                  "%s without test: %s", tf_describe(&s), c.o.why);
            tf_capture_free(&c, p);
        }
}

typedef struct tnb_plan_case {
    rc_state st;
    tf_count k[8];    /* per rank: ranks interleave on the simulator */
    long     start_allocs;
    long long live;
    int      bad;
} tnb_plan_case;

/* init; then start + wait (or test) five times; a second start while one
   runs and a run while one runs are refused; counts the allocator. */
static redcoll_result tnb_plan_rank(const redcoll_transport *t, void *arg) {
    tnb_plan_case *c = (tnb_plan_case *)arg;
    tf_count *k = &c->k[t->rank];
    rc_spec s = *c->st.spec;
    redcoll_plan *pl = NULL;
    redcoll_result r;
    long before;
    int i, done = 0;
    rc_state st = c->st;
    st.spec = &s;
    s.opts.allocator.alloc_fn = tf_count_alloc; s.opts.allocator.free_fn = tf_count_free;
    s.opts.allocator.user_data = k;
    r = rc_call(t, &st, NULL, &pl);
    if (r != REDCOLL_OK) return r;
    before = k->allocs;
    for (i = 0; i < 5 && r == REDCOLL_OK; ++i) {
        r = redcoll_plan_start(pl);
        if (r != REDCOLL_OK) break;
        if (i == 1 && t->size > 1 && s.count > 0) { /* a peer's message is due: still running */
            c->bad += redcoll_plan_start(pl) != REDCOLL_ERR_INVALID_ARG;
            c->bad += redcoll_plan_run(pl) != REDCOLL_ERR_INVALID_ARG;
        }
        if (i % 2) r = redcoll_plan_wait(pl);
        else do r = redcoll_plan_test(pl, &done); while (!done);
        c->bad += redcoll_plan_wait(pl) != r; /* the result again */
    }
    c->start_allocs += k->allocs - before;
    redcoll_plan_free(pl);
    c->live += k->live;
    return r;
}

/* Every row at p = 5 (and 1 and 8 for a few): a plan started five times
   (not in place, so every run gives the same result) allocates nothing per
   start, refuses a second start or a run while it runs, and gives the right
   result; a freed plan gives back what init took. */
static void test_nb_plan_starts(void) {
    const redcoll_algo_info *e;
    int i, pi;
    static const int ps[3] = { 5, 1, 8 };
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < (i % 5 == 0 ? 3 : 1); ++pi) {
            rc_spec s = rc_spec_make(e->coll, e->algo, ps[pi], 1000);
            tnb_plan_case c;
            rc_outcome o;
            redcoll_mock_config cfg = redcoll_mock_defaults(ps[pi]);
            memset(&c, 0, sizeof c);
            s.root = ps[pi] - 1;
            if (rc_begin(&s, &c.st, &o) != REDCOLL_OK) { CHECK(0, "setup"); continue; }
            if (redcoll_mock_run(&cfg, tnb_plan_rank, &c, &o.rep) != REDCOLL_OK) {
                rc_teardown(&c.st); CHECK(0, "run"); continue;
            }
            rc_end(&c.st, &o);
            CHECK(o.ok, "%s: plan started 5 times: %s", tf_describe(&s), o.why);
            CHECK(c.start_allocs == 0, "%s: %ld allocations in 5 starts", tf_describe(&s), c.start_allocs);
            CHECK(c.bad == 0, "%s: a second start or a run while started was not refused", tf_describe(&s));
            CHECK(c.live == 0, "%s: %lld bytes not given back", tf_describe(&s), c.live);
            rc_outcome_free(&o);
        }
}

/* ---- threads ---- */

/* Every row on threads, p = 1..5 and 8: started and completed by polling,
   by waiting and as a plan, counts 1000 and 65537 (per block: divided by
   p), in place and not; spinning and sleeping waits alternate. */
static void test_shm_nb_every_row(void) {
    static const int ps[6] = { 1, 2, 3, 4, 5, 8 };
    const redcoll_algo_info *e;
    int i, pi, k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < 6; ++pi)
            for (k = 0; k < 3; ++k) {
                int p = ps[pi], div = tshm_block_coll(e->coll) ? p : 1;
                rc_spec s = rc_spec_make(e->coll, e->algo, p, k == 1 ? 65537 / (size_t)div : 1000);
                redcoll_shm_config cfg;
                memset(&cfg, 0, sizeof cfg);
                cfg.spin = k % 2 ? 300 : -1;
                cfg.timeout_seconds = 120; /* a hang fails the test instead of the run */
                s.nonblock = k == 0 ? RC_NB_TEST : k == 1 ? RC_NB_WAIT : RC_NB_PLAN;
                s.in_place = tf_has_in_place(e->coll) && (p + k) % 2;
                s.root = (p + k) % p;
                if (k == 1) s.dtype = REDCOLL_DOUBLE;
                if (k == 2 && rc_reduces(e->coll) && e->keeps_order) s.op = "matmul";
                tshm_ok(&s, &cfg);
            }
}

/* Two and ten requests of one shape outstanding on threads, completed in
   reverse order, and a blocking call between a start and its wait. */
static void test_shm_nb_many(void) {
    static const int ps[3] = { 2, 3, 4 };
    const redcoll_algo_info *e;
    int i, pi, v;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < 3; ++pi)
            for (v = 0; v < 3; ++v) {
                int p = ps[pi];
                rc_spec s = rc_spec_make(e->coll, e->algo, p, v == 1 ? 37 : 2000);
                redcoll_shm_config cfg;
                tnb_out out;
                memset(&cfg, 0, sizeof cfg);
                cfg.timeout_seconds = 120;
                cfg.spin = v == 2 ? -1 : 0;
                s.root = p - 1;
                s.in_place = tf_has_in_place(e->coll) && v == 2;
                tnb_many_run(&s, v == 1 ? TNB_MAX : 2, v == 2, &cfg, 0, 0, &out);
                CHECK(out.ok && out.wrong == 0, "shm %s, %s: %s", tf_describe(&s),
                      v == 1 ? "10 outstanding" : v == 2 ? "blocking call between" : "2 outstanding",
                      out.o.why);
            }
}

/* A fault on call k of rank 0 or 3 of 4 threads while two requests are
   outstanding: that rank fails, the others end (OK and right, or ABORTED). */
static void test_shm_nb_faults(void) {
    const redcoll_algo_info *e;
    int i, victim;
    long k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (victim = 0; victim < 4; victim += 3)
            for (k = 1; k <= 10; ++k) {
                rc_spec s = rc_spec_make(e->coll, e->algo, 4, 50);
                redcoll_shm_config cfg;
                tnb_out out;
                memset(&cfg, 0, sizeof cfg);
                cfg.timeout_seconds = 30;
                s.root = 1;
                tnb_many_run(&s, 2, 0, &cfg, k, victim, &out);
                tnb_check_fault(&s, &out, out.hit, k, victim);
                if (!out.hit) break; /* fewer calls than k */
            }
}

/* A rank that never joins while the others poll (and, alone, wait): the
   team's timeout fails the waiting requests and the library's abort
   releases the rest (ranks that need nothing from it may end OK). */
static void test_shm_nb_timeout(void) {
    static const int modes[3] = { RC_NB_TEST, RC_NB_WAIT, RC_NB_PLAN };
    int m, coll;
    for (m = 0; m < 3; ++m)
        for (coll = 0; coll < REDCOLL_COLL_COUNT; coll += 3) {
            rc_spec s = rc_spec_make((redcoll_coll)coll, REDCOLL_ALGO_AUTO, 4, 100);
            redcoll_shm_config cfg;
            redcoll_result res[4];
            rc_outcome o;
            int r, stuck = 0;
            memset(&cfg, 0, sizeof cfg);
            cfg.timeout_seconds = 0.2;
            s.nonblock = modes[m];
            s.absent_rank1 = 2 + 1;
            s.root = 1;
            tshm_run(&s, &cfg, 0, 0, NULL, res, &o);
            for (r = 0; r < 4; ++r) /* a rank that needs nothing from rank 2 may end OK */
                stuck += r != 2 && res[r] != REDCOLL_OK && res[r] != REDCOLL_ERR_TIMEOUT &&
                         res[r] != REDCOLL_ERR_ABORTED;
            CHECK(stuck == 0 && o.wrong == 0 && (res[0] == REDCOLL_ERR_TIMEOUT || res[1] == REDCOLL_ERR_TIMEOUT ||
                                                 res[3] == REDCOLL_ERR_TIMEOUT),
                  "shm %s %s: results %s %s - %s", tf_describe(&s), tnb_mode(modes[m]),
                  redcoll_result_string(res[0]), redcoll_result_string(res[1]), redcoll_result_string(res[3]));
        }
}

/* ---- many requests of many shapes, completed in a different order per rank ---- */

#define TNQ_N 24     /* outstanding at once: more than three times the tag slots */
#define TNQ_EARLY 7  /* started before the message from the previous rank */
#define TNQ_RAW 1    /* the test's own messages: row 0, no call of the library's */

/* Call i of the sequence: allreduce, bcast, allgather, alltoall,
   reduce_scatter_block, barrier, reduce in turn, sums of doubles with
   fractions (so the order of the additions shows in the bits), counts 1..61
   per rank, roots spread. `how`: 0 blocking, 1 started (req), 2 a plan (pl). */
static size_t tnq_count(int i) { return (size_t)(1 + i * 37 % 61); }

static redcoll_result tnq_call(const redcoll_transport *t, int i, const double *sb, double *rb, int how,
                               redcoll_coll_request **req, redcoll_plan **pl) {
    int p = t->size, root = (i * 5 + 1) % p;
    size_t n = tnq_count(i);
    redcoll_op sum = REDCOLL_SUM;
#define TNQ_CALL(f, ...) \
    (how == 2 ? redcoll_##f##_init(__VA_ARGS__, pl) : how == 1 ? redcoll_i##f(__VA_ARGS__, req) : redcoll_##f(__VA_ARGS__))
    switch (i % 7) {
    case 0: return TNQ_CALL(allreduce, t, sb, rb, n, REDCOLL_DOUBLE, sum, NULL);
    case 1: return TNQ_CALL(bcast, t, rb, n, REDCOLL_DOUBLE, root, NULL);
    case 2: return TNQ_CALL(allgather, t, sb, rb, n, REDCOLL_DOUBLE, NULL);
    case 3: return TNQ_CALL(alltoall, t, sb, rb, n, REDCOLL_DOUBLE, NULL);
    case 4: return TNQ_CALL(reduce_scatter_block, t, sb, rb, n, REDCOLL_DOUBLE, sum, NULL);
    case 5: return TNQ_CALL(barrier, t, NULL);
    default: return TNQ_CALL(reduce, t, sb, rb, n, REDCOLL_DOUBLE, sum, root, NULL);
    }
#undef TNQ_CALL
}

/* Every rank's buffers for the sequence: inputs, the blocking results, the
   started ones; each vector of n * p doubles. */
typedef struct tnq_bufs {
    double *sb[TNQ_N], *ref[TNQ_N], *got[TNQ_N];
} tnq_bufs;

static void tnq_free(tnq_bufs *b) {
    int i;
    for (i = 0; i < TNQ_N; ++i) { free(b->sb[i]); free(b->ref[i]); free(b->got[i]); }
}

/* Inputs, and both result vectors filled alike (bcast: the root's data). */
static int tnq_fill(const redcoll_transport *t, tnq_bufs *b) {
    int i, p = t->size;
    memset(b, 0, sizeof *b);
    for (i = 0; i < TNQ_N; ++i) {
        size_t j, m = tnq_count(i) * (size_t)p;
        b->sb[i] = (double *)malloc(m * sizeof(double));
        b->ref[i] = (double *)malloc(m * sizeof(double));
        b->got[i] = (double *)malloc(m * sizeof(double));
        if (!b->sb[i] || !b->ref[i] || !b->got[i]) { tnq_free(b); return 0; }
        for (j = 0; j < m; ++j) {
            b->sb[i][j] = (double)(t->rank + 1) / 3.0 + (double)j * 0.1 + (double)i / 7.0;
            b->ref[i][j] = b->got[i][j] = i % 7 == 1 ? b->sb[i][j] : -1.0;
        }
    }
    return 1;
}

/* The started results back to what tnq_fill made them. */
static void tnq_reset(const redcoll_transport *t, tnq_bufs *b) {
    int i;
    for (i = 0; i < TNQ_N; ++i) {
        size_t j, m = tnq_count(i) * (size_t)t->size;
        for (j = 0; j < m; ++j) b->got[i][j] = i % 7 == 1 ? b->sb[i][j] : -1.0;
    }
}

/* 1 when every result of the started (or planned) sequence is the blocking
   one's, bit for bit. */
static int tnq_same(const redcoll_transport *t, const tnq_bufs *b) {
    int i;
    for (i = 0; i < TNQ_N; ++i)
        if (memcmp(b->ref[i], b->got[i], tnq_count(i) * (size_t)t->size * sizeof(double)) != 0) return 0;
    return 1;
}

/* The order rank r completes its requests in: reverse; by polling all of
   them round and round (starting at a rotating place); odd ones forward,
   then even ones backward. Mode 1 is polled, the others waited for. */
static void tnq_order(int r, int *order) {
    int i, k = 0;
    if (r % 3 == 0) for (i = 0; i < TNQ_N; ++i) order[i] = TNQ_N - 1 - i;
    else if (r % 3 == 1) for (i = 0; i < TNQ_N; ++i) order[i] = (i * 5 + r) % TNQ_N;
    else {
        for (i = 1; i < TNQ_N; i += 2) order[k++] = i;
        for (i = TNQ_N - 2 + TNQ_N % 2; i >= 0; i -= 2) order[k++] = i;
    }
}

/* Completes reqs (NULL: done already) in rank r's order; 0 on any error. */
static int tnq_complete(int r, redcoll_coll_request **reqs) {
    int order[TNQ_N], i, left = TNQ_N, ok = 1;
    tnq_order(r, order);
    if (r % 3 != 1) {
        for (i = 0; i < TNQ_N; ++i)
            if (reqs[order[i]]) { ok &= redcoll_wait(reqs[order[i]]) == REDCOLL_OK; }
        return ok;
    }
    while (left > 0 && ok) {
        left = 0;
        for (i = 0; i < TNQ_N; ++i) {
            int done = 1;
            redcoll_coll_request *q = reqs[order[i]];
            if (q && redcoll_test(q, &done) != REDCOLL_OK) ok = 0;
            left += !done;
        }
    }
    return ok;
}

/* The sequence blocking (the reference), then started: TNQ_EARLY requests,
   a message from the previous rank, the rest, a message to the next rank,
   then completion in this rank's order. A start that waited for one of
   this rank's older requests would wait for a peer that waits for this
   rank's message. */
static redcoll_result tnq_rank(const redcoll_transport *t, void *arg) {
    tnq_bufs b;
    redcoll_coll_request *reqs[TNQ_N];
    redcoll_result r = REDCOLL_OK;
    int i, ok = 1, token = 0, me = t->rank, p = t->size;
    (void)arg;
    if (!tnq_fill(t, &b)) return REDCOLL_ERR_OUT_OF_MEMORY;
    memset(reqs, 0, sizeof reqs);
    for (i = 0; i < TNQ_N && r == REDCOLL_OK; ++i) r = tnq_call(t, i, b.sb[i], b.ref[i], 0, NULL, NULL);
    for (i = 0; i < TNQ_N && r == REDCOLL_OK; ++i) {
        if (i == TNQ_EARLY && me > 0) r = t->recv(t->user, me - 1, &token, sizeof token, TNQ_RAW);
        if (r == REDCOLL_OK) r = tnq_call(t, i, b.sb[i], b.got[i], 1, &reqs[i], NULL);
    }
    if (r == REDCOLL_OK && me + 1 < p) r = t->send(t->user, me + 1, &token, sizeof token, TNQ_RAW);
    ok = tnq_complete(me, reqs);
    for (i = 0; i < TNQ_N; ++i) redcoll_request_free(reqs[i]);
    ok &= r == REDCOLL_OK && tnq_same(t, &b);
    tnq_free(&b);
    return r != REDCOLL_OK ? r : ok ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* The sequence as plans made in one order on every rank (after the blocking
   reference), started twice in a different order per rank (ascending,
   descending, or by a stride) with a message between ranks amid the
   starts, and completed in this rank's completion order: each start's
   results are the blocking call's, bit for bit. Plans are matched by the
   order of their inits, so the starts' order is each rank's own. */
static redcoll_result tnq_plan_rank(const redcoll_transport *t, void *arg) {
    tnq_bufs b;
    redcoll_plan *pl[TNQ_N];
    int i, k, ok = 1, token = 0, me = t->rank, p = t->size, order[TNQ_N], round;
    redcoll_result r = REDCOLL_OK;
    (void)arg;
    if (!tnq_fill(t, &b)) return REDCOLL_ERR_OUT_OF_MEMORY;
    memset(pl, 0, sizeof pl);
    for (i = 0; i < TNQ_N && r == REDCOLL_OK; ++i) r = tnq_call(t, i, b.sb[i], b.ref[i], 0, NULL, NULL);
    for (i = 0; i < TNQ_N && r == REDCOLL_OK; ++i) r = tnq_call(t, i, b.sb[i], b.got[i], 2, NULL, &pl[i]);
    if (r != REDCOLL_OK) { for (i = 0; i < TNQ_N; ++i) redcoll_plan_free(pl[i]); tnq_free(&b); return r; }
    for (round = 0; round < 2 && r == REDCOLL_OK; ++round) {
        for (k = 0; k < TNQ_N; ++k) /* this rank's start order */
            order[k] = (me + round) % 3 == 0 ? k : (me + round) % 3 == 1 ? TNQ_N - 1 - k : (k * 7 + me) % TNQ_N;
        for (k = 0; k < TNQ_N && r == REDCOLL_OK; ++k) {
            if (k == TNQ_EARLY && me > 0) r = t->recv(t->user, me - 1, &token, sizeof token, TNQ_RAW);
            if (r == REDCOLL_OK) r = redcoll_plan_start(pl[order[k]]);
        }
        if (r == REDCOLL_OK && me + 1 < p) r = t->send(t->user, me + 1, &token, sizeof token, TNQ_RAW);
        tnq_order(me + round, order);
        for (k = 0; k < TNQ_N; ++k) {
            int done = 0;
            if ((me + round) % 3 == 1) {
                redcoll_result e;
                do e = redcoll_plan_test(pl[order[k]], &done); while (e == REDCOLL_OK && !done);
                ok &= e == REDCOLL_OK;
            } else {
                ok &= redcoll_plan_wait(pl[order[k]]) == REDCOLL_OK;
            }
        }
        ok &= tnq_same(t, &b);
        tnq_reset(t, &b); /* the next round's results from scratch */
    }
    for (i = 0; i < TNQ_N; ++i) redcoll_plan_free(pl[i]);
    tnq_free(&b);
    return r != REDCOLL_OK ? r : ok ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* More persistent requests than the tag's 64 ids: 150 allreduce plans made
   in one order, all started in that order on every rank (plans 64 apart
   share an id and queue one behind the other), completed in reverse;
   every sum right. */
#define TNQ_WRAP 150
static redcoll_result tnq_wrap_rank(const redcoll_transport *t, void *arg) {
    int64_t (*x)[3] = (int64_t (*)[3])malloc(sizeof(int64_t) * 3 * TNQ_WRAP);
    redcoll_plan *pl[TNQ_WRAP];
    redcoll_result r = REDCOLL_OK;
    int i, j, made = 0, ok = 1, p = t->size;
    (void)arg;
    if (!x) return REDCOLL_ERR_OUT_OF_MEMORY;
    for (i = 0; i < TNQ_WRAP && r == REDCOLL_OK; ++i, ++made) {
        for (j = 0; j < 3; ++j) x[i][j] = t->rank * 1000 + i * 3 + j;
        r = redcoll_allreduce_init(t, REDCOLL_IN_PLACE, x[i], 3, REDCOLL_INT64, REDCOLL_SUM, NULL, &pl[i]);
        if (r != REDCOLL_OK) break;
    }
    for (i = 0; i < made && r == REDCOLL_OK; ++i) r = redcoll_plan_start(pl[i]);
    for (i = made - 1; i >= 0; --i) ok &= redcoll_plan_wait(pl[i]) == REDCOLL_OK;
    for (i = 0; i < made; ++i) {
        for (j = 0; j < 3; ++j) ok &= x[i][j] == (int64_t)1000 * p * (p - 1) / 2 + (int64_t)p * (i * 3 + j);
        redcoll_plan_free(pl[i]);
    }
    free(x);
    return r != REDCOLL_OK ? r : ok ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* Runs fn on the simulator (threads NULL) or on threads, p ranks; 1 when
   every rank returned OK. */
static int tnq_run(redcoll_result (*fn)(const redcoll_transport *, void *), int p, int threads,
                   char *why, size_t n) {
    redcoll_result res[16];
    int r, ok = 1;
    if (threads) {
        redcoll_shm_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.timeout_seconds = 20; /* a hang fails the test */
        cfg.spin = p % 2 ? 200 : -1;
        redcoll_shm_run_config(&cfg, p, fn, NULL, res);
        for (r = 0; r < p; ++r) ok &= res[r] == REDCOLL_OK;
        snprintf(why, n, "rank 0: %s, rank %d: %s", redcoll_result_string(res[0]), p - 1,
                 redcoll_result_string(res[p - 1]));
    } else {
        redcoll_mock_config cfg = redcoll_mock_defaults(p);
        redcoll_mock_report rep;
        ok = redcoll_mock_run(&cfg, fn, NULL, &rep) == REDCOLL_OK && redcoll_mock_first_error(&rep) == REDCOLL_OK;
        snprintf(why, n, "%s%s%.300s", redcoll_result_string(redcoll_mock_first_error(&rep)),
                 rep.log ? "\n" : "", rep.log ? rep.log : "");
        redcoll_mock_report_free(&rep);
    }
    return ok;
}

/* TNQ_N requests of seven shapes outstanding on one transport, started in
   one order on every rank with a message between ranks in the middle of
   the starts, completed in a different order per rank (reverse, polling,
   odd then even): every result the blocking call's, bit for bit; on the
   simulator p = 1..6 and 9, on threads p = 2..5. */
static void test_nb_queued(void) {
    static const int ps[7] = { 1, 2, 3, 4, 5, 6, 9 };
    char why[512];
    int i;
    for (i = 0; i < 7; ++i)
        CHECK(tnq_run(tnq_rank, ps[i], 0, why, sizeof why), "sim p=%d: %d outstanding, per-rank order: %s",
              ps[i], TNQ_N, why);
}

/* TNQ_N plans of seven shapes made in one order and started twice in a
   different order per rank, completed in different orders: results the
   blocking call's, bit for bit; simulator p = 1..6 and 9, threads 2..5. */
static void test_nb_plans_out_of_order(void) {
    static const int ps[7] = { 1, 2, 3, 4, 5, 6, 9 };
    char why[512];
    int i;
    for (i = 0; i < 7; ++i)
        CHECK(tnq_run(tnq_plan_rank, ps[i], 0, why, sizeof why), "sim p=%d: %d plans started in per-rank order: %s",
              ps[i], TNQ_N, why);
}

static void test_nb_plans_wrap(void) {
    char why[512];
    int p;
    for (p = 1; p <= 4; ++p)
        CHECK(tnq_run(tnq_wrap_rank, p, 0, why, sizeof why), "sim p=%d: %d plans started at once: %s", p, TNQ_WRAP,
              why);
    for (p = 2; p <= 3; ++p)
        CHECK(tnq_run(tnq_wrap_rank, p, 1, why, sizeof why), "shm p=%d: %d plans started at once: %s", p, TNQ_WRAP,
              why);
}

static void test_shm_nb_plans_out_of_order(void) {
    char why[512];
    int p;
    for (p = 2; p <= 5; ++p)
        CHECK(tnq_run(tnq_plan_rank, p, 1, why, sizeof why), "shm p=%d: %d plans started in per-rank order: %s", p,
              TNQ_N, why);
}

static void test_shm_nb_queued(void) {
    char why[512];
    int p;
    for (p = 2; p <= 5; ++p)
        CHECK(tnq_run(tnq_rank, p, 1, why, sizeof why), "shm p=%d: %d outstanding, per-rank order: %s", p,
              TNQ_N, why);
}

static void suite_nonblock(void) {
    tf_test("nb/every row started = blocking, p = 1..33", test_nb_every_row);
    tf_test("nb/exact sums and long vectors started", test_nb_exact_and_long);
    tf_test("nb/2 and 10 outstanding, reverse order; blocking between", test_nb_many_outstanding);
    tf_test("nb/faults mid-request, two outstanding", test_nb_faults);
    tf_test("nb/a rank that never joins while others poll", test_nb_absent_rank);
    tf_test("nb/requests on a view beside the parent's", test_nb_view);
    tf_test("nb/argument errors at start: nothing touched", test_nb_arguments);
    tf_test("nb/transport without progress: done at start", test_nb_without_progress);
    tf_test("nb/plans: start again, nothing allocated per start", test_nb_plan_starts);
    tf_test("nb/24 outstanding, queued starts, per-rank completion order", test_nb_queued);
    tf_test("nb/24 plans started in a different order per rank", test_nb_plans_out_of_order);
    tf_test("nb/150 plans started at once: ids beyond the tag's 64 queue", test_nb_plans_wrap);
    tf_test("shm/non-blocking: every row started, p = 1..5, 8", test_shm_nb_every_row);
    tf_test("shm/non-blocking: 2 and 10 outstanding; blocking between", test_shm_nb_many);
    tf_test("shm/non-blocking: faults mid-request", test_shm_nb_faults);
    tf_test("shm/non-blocking: 24 outstanding, per-rank completion order", test_shm_nb_queued);
    tf_test("shm/non-blocking: 24 plans started in a different order per rank", test_shm_nb_plans_out_of_order);
    tf_test("shm/non-blocking: timeout while polling or waiting", test_shm_nb_timeout);
}
