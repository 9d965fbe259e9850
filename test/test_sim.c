/* test_sim.c - the simulator's own promises, and the reliability of every
   registered schedule: rendezvous sends, deadlock reports, fault injection,
   determinism and scale. */

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
                rc_spec s = tf_spec(pairs[i].coll, pairs[i].algo, p, (size_t)p + 3);
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
   deadlock and every stranded rank gets an error instead of hanging. */
static void test_deadlock_every_schedule(void) {
    ts_pair pairs[256];
    int n = ts_pairs(pairs, 256), i;
    for (i = 0; i < n; ++i) {
        rc_spec s = tf_spec(pairs[i].coll, pairs[i].algo, 6, 9);
        rc_outcome o;
        int r, errors = 0;
        s.root = 2;
        s.absent_rank1 = 5 + 1;
        rc_run(&s, &o);
        for (r = 0; o.rep.results && r < 5; ++r) errors += o.rep.results[r] != REDCOLL_OK;
        CHECK(o.rep.deadlocked && errors > 0, "%s: a missing rank must be reported as a deadlock",
              tf_describe(&s));
        CHECK(o.wrong == 0, "%s: a rank returned OK with a wrong result", tf_describe(&s));
        rc_outcome_free(&o);
    }
}

static void test_deterministic(void) {
    rc_spec s = tf_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, 23, 4099);
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

/* DESIGN's scale promise: 1 M doubles at p = 1024, and p = 4096 works. */
static void test_scale(void) {
    static const int ps[2] = { 1024, 4096 };
    int i;
    for (i = 0; i < 2; ++i) {
        rc_spec s = tf_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, ps[i], 1 << 20);
        rc_outcome o;
        s.dtype = REDCOLL_DOUBLE;
        s.sim.no_data = 1;
        rc_run(&s, &o);
        CHECK(o.ok && !o.verified, "p=%d runs in no-data mode: %s", ps[i], o.why);
        CHECK(o.rep.stats && o.rep.stats[0].msgs_sent == (unsigned long long)tf_ceil_lg(ps[i]),
              "p=%d: lg p exchanges", ps[i]);
        rc_outcome_free(&o);
    }
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
    tf_test("sim/deterministic", test_deterministic);
    tf_test("sim/scale p=1024 and 4096", test_scale);
    tf_test("reliability/fault injection, every schedule", test_faults_every_schedule);
    tf_test("reliability/deadlock, every schedule", test_deadlock_every_schedule);
    tf_test("reliability/ranks that disagree (issue 13.4)", test_ranks_that_disagree);
}
