/* test_foundation.c - the first schedules (issue 2): binomial reduce, bcast,
   gather and scatter, reduce+bcast and recursive-doubling allreduce, and the
   dissemination barrier. Sweeps, then counters against the papers' costs. */

static void test_sweep_reduce_binomial(void) { tf_sweep(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_BINOMIAL); }
static void test_sweep_bcast_binomial(void) { tf_sweep(REDCOLL_COLL_BCAST, REDCOLL_ALGO_BINOMIAL); }
static void test_sweep_gather_binomial(void) { tf_sweep(REDCOLL_COLL_GATHER, REDCOLL_ALGO_BINOMIAL); }
static void test_sweep_scatter_binomial(void) { tf_sweep(REDCOLL_COLL_SCATTER, REDCOLL_ALGO_BINOMIAL); }
static void test_sweep_allreduce_reduce_bcast(void) {
    tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_REDUCE_BCAST);
}
static void test_sweep_allreduce_recursive_doubling(void) {
    tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING);
}
static void test_sweep_barrier(void) { tf_sweep(REDCOLL_COLL_BARRIER, REDCOLL_ALGO_DISSEMINATION); }
static void test_sweep_auto(void) {
    tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_AUTO);
    tf_sweep(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_AUTO);
}

/* A cost model with distinct one-way factors, so formulas can tell
   one-way from exchange messages. */
static rc_spec tfo_spec(redcoll_coll coll, redcoll_algo algo, int p, size_t count) {
    rc_spec s = rc_spec_make(coll, algo, p, count);
    s.dtype = REDCOLL_DOUBLE;
    s.use_model = 1;
    s.sim.model.alpha = 1e-6;
    s.sim.model.beta = 1e-9;
    s.sim.model.gamma = 3e-10;
    s.sim.model.f_alpha = 0.5;
    s.sim.model.f_beta = 0.75;
    return s;
}

static const int tfo_ps[] = { 1, 2, 3, 4, 5, 7, 8, 12, 13, 16, 17, 31, 32, 33, 64, 100 };
#define TFO_NP ((int)(sizeof tfo_ps / sizeof tfo_ps[0]))

/* MPICH paper 4.5 / Rabenseifner 2004 3.3: the root receives ceil(lg p)
   messages of n bytes, and its modeled time is
   ceil(lg p)(f_alpha alpha + n f_beta beta + n gamma). */
static void test_counters_reduce_binomial(void) {
    int i;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tf_ceil_lg(p), root;
        for (root = 0; root < p; root += (p + 2) / 3) {
            rc_spec s = tfo_spec(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_BINOMIAL, p, 1000);
            rc_outcome o;
            const redcoll_cost_model *m = &s.sim.model;
            double n = 8000, want = k * (m->f_alpha * m->alpha + n * m->f_beta * m->beta + n * m->gamma);
            s.root = root;
            if (tf_measure(&s, &o)) {
                const redcoll_mock_stats *st = &o.rep.stats[root];
                CHECK(st->msgs_recv == (unsigned long long)k && st->bytes_recv == (unsigned long long)(k * 8000),
                      "p=%d root=%d: root receives %llu msgs %llu bytes, want %d of 8000", p, root,
                      st->msgs_recv, st->bytes_recv, k);
                CHECK(tf_close(st->time, want), "p=%d root=%d: time %.9g want %.9g", p, root, st->time, want);
                CHECK(st->elems_reduced == (unsigned long long)k * 1000, "p=%d: root reduces k n", p);
                CHECK(st->scratch_bytes <= 8000, "p=%d: root scratch %llu > one vector", p, st->scratch_bytes);
            }
            rc_outcome_free(&o);
        }
    }
}

/* Non-commutative ops root the tree at rank 0 and forward: one more message. */
static void test_counters_reduce_binomial_noncommutative(void) {
    rc_spec s = tfo_spec(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_BINOMIAL, 13, 10);
    rc_outcome o;
    s.op = "matmul";
    s.root = 6;
    if (tf_measure(&s, &o)) {
        CHECK(o.rep.stats[0].msgs_recv == 4 && o.rep.stats[0].msgs_sent == 1,
              "rank 0 gathers the whole tree and forwards once");
        CHECK(o.rep.stats[6].msgs_recv == 1 + 1, "root 6: one child (7) plus the result");
    }
    rc_outcome_free(&o);
}

/* Rabenseifner 2004 3.4: recursive doubling, lg p' exchanges of n bytes, plus
   for non-power-of-two p a one-way fold-in and fold-out:
   lg p'(alpha + n beta + n gamma) + [2(f_alpha alpha + n f_beta beta) + n gamma]. */
static void test_counters_allreduce_recursive_doubling(void) {
    int i;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], pof2 = 1, lg = 0;
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, p, 500);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        double n = 4000, want;
        while (pof2 * 2 <= p) { pof2 *= 2; lg++; }
        want = lg * (m->alpha + n * m->beta + n * m->gamma);
        if (p != pof2) want += 2 * (m->f_alpha * m->alpha + n * m->f_beta * m->beta) + n * m->gamma;
        if (tf_measure(&s, &o)) {
            int r;
            CHECK(tf_close(o.rep.time, want), "p=%d: time %.9g want %.9g", p, o.rep.time, want);
            for (r = 0; r < p; ++r) {
                const redcoll_mock_stats *st = &o.rep.stats[r];
                int survivor = r >= 2 * (p - pof2) || r % 2 == 1;
                unsigned long long msgs = survivor ? (unsigned long long)lg + (r < 2 * (p - pof2)) : 1;
                CHECK(st->msgs_sent == msgs && st->bytes_sent == msgs * 4000,
                      "p=%d rank %d: sent %llu msgs, want %llu", p, r, st->msgs_sent, msgs);
                if (tf_is_pof2(p))
                    CHECK(st->elems_reduced == (unsigned long long)lg * 500 && st->rounds == lg,
                          "p=%d rank %d: lg p reductions and rounds", p, r);
            }
        }
        rc_outcome_free(&o);
    }
}

/* Binomial bcast: p-1 messages in all, ceil(lg p) hops to the deepest rank,
   modeled time ceil(lg p)(f_alpha alpha + n f_beta beta). */
static void test_counters_bcast_binomial(void) {
    int i;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tf_ceil_lg(p), r;
        unsigned long long total = 0;
        rc_spec s = tfo_spec(REDCOLL_COLL_BCAST, REDCOLL_ALGO_BINOMIAL, p, 100);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        s.root = p / 2;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r) total += o.rep.stats[r].msgs_sent;
            CHECK(total == (unsigned long long)(p - 1), "p=%d: %llu messages", p, total);
            CHECK(o.rep.rounds == k, "p=%d: %ld hops, want %d", p, o.rep.rounds, k);
            CHECK(tf_close(o.rep.time, k * (m->f_alpha * m->alpha + 800 * m->f_beta * m->beta)),
                  "p=%d: time %.9g", p, o.rep.time);
        }
        rc_outcome_free(&o);
    }
}

/* Reduce to 0 then bcast (Rabenseifner 2004 3.2) for power-of-two p:
   lg p(T + n gamma) + lg p T with T = f_alpha alpha + n f_beta beta. */
static void test_counters_allreduce_reduce_bcast(void) {
    static const int ps[5] = { 2, 4, 8, 16, 64 };
    int i;
    for (i = 0; i < 5; ++i) {
        int p = ps[i], k = tf_ceil_lg(p);
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_REDUCE_BCAST, p, 300);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        double n = 2400, T = m->f_alpha * m->alpha + n * m->f_beta * m->beta;
        if (tf_measure(&s, &o))
            CHECK(tf_close(o.rep.time, k * (T + n * m->gamma) + k * T), "p=%d: time %.9g", p, o.rep.time);
        rc_outcome_free(&o);
    }
}

/* Binomial gather and scatter: the root takes part in ceil(lg p) messages
   carrying the other p-1 blocks. */
static void test_counters_gather_scatter(void) {
    int i, which;
    for (which = 0; which < 2; ++which)
        for (i = 0; i < TFO_NP; ++i) {
            int p = tfo_ps[i], k = tf_ceil_lg(p);
            rc_spec s = tfo_spec(which ? REDCOLL_COLL_SCATTER : REDCOLL_COLL_GATHER,
                                 REDCOLL_ALGO_BINOMIAL, p, 10);
            rc_outcome o;
            s.root = p - 1;
            if (tf_measure(&s, &o)) {
                const redcoll_mock_stats *st = &o.rep.stats[p - 1];
                unsigned long long msgs = which ? st->msgs_sent : st->msgs_recv;
                unsigned long long bytes = which ? st->bytes_sent : st->bytes_recv;
                CHECK(msgs == (unsigned long long)k && bytes == (unsigned long long)(p - 1) * 80,
                      "%s p=%d: root %llu msgs %llu bytes", which ? "scatter" : "gather", p, msgs, bytes);
            }
            rc_outcome_free(&o);
        }
}

/* Dissemination: ceil(lg p) zero-byte exchanges per rank. */
static void test_counters_barrier(void) {
    int i;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tf_ceil_lg(p), r;
        rc_spec s = tfo_spec(REDCOLL_COLL_BARRIER, REDCOLL_ALGO_DISSEMINATION, p, 0);
        rc_outcome o;
        if (tf_measure(&s, &o))
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)k && o.rep.stats[r].rounds == k &&
                      tf_close(o.rep.stats[r].time, k * s.sim.model.alpha),
                      "p=%d rank %d: %llu exchanges, %ld rounds", p, r, o.rep.stats[r].msgs_sent,
                      o.rep.stats[r].rounds);
        rc_outcome_free(&o);
    }
}

/* The harness's float products are exact in any bracketing at large p:
   a commutative schedule multiplies non-consecutive ranks (recursive
   halving pairs rank i with i + p'/2), and with a factor 2 on every fourth
   rank 577 ranks overflowed float (CI's fuzz: seed 1795454677, case 2724). */
static void test_sweep_float_prod_large_p(void) {
    static const redcoll_coll colls[3] = { REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_COLL_ALLREDUCE,
                                           REDCOLL_COLL_REDUCE };
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_RECURSIVE_HALVING, REDCOLL_ALGO_HALVING_DOUBLING,
                                           REDCOLL_ALGO_BINOMIAL };
    int k;
    for (k = 0; k < 3; ++k) {
        rc_spec s = rc_spec_make(colls[k], algos[k], 577, 1733);
        rc_outcome o;
        s.dtype = REDCOLL_FLOAT;
        s.op = "prod";
        s.root = 339;
        tf_measure(&s, &o);
        rc_outcome_free(&o);
    }
}

static void suite_foundation(void) {
    tf_test("sweep/reduce binomial", test_sweep_reduce_binomial);
    tf_test("sweep/bcast binomial", test_sweep_bcast_binomial);
    tf_test("sweep/gather binomial", test_sweep_gather_binomial);
    tf_test("sweep/scatter binomial", test_sweep_scatter_binomial);
    tf_test("sweep/allreduce reduce_bcast", test_sweep_allreduce_reduce_bcast);
    tf_test("sweep/allreduce recursive_doubling", test_sweep_allreduce_recursive_doubling);
    tf_test("sweep/barrier dissemination", test_sweep_barrier);
    tf_test("sweep/allreduce and reduce auto", test_sweep_auto);
    tf_test("sweep/float prod exact in any bracketing at p = 577", test_sweep_float_prod_large_p);
    tf_test("counters/reduce binomial", test_counters_reduce_binomial);
    tf_test("counters/reduce binomial non-commutative", test_counters_reduce_binomial_noncommutative);
    tf_test("counters/allreduce recursive_doubling", test_counters_allreduce_recursive_doubling);
    tf_test("counters/bcast binomial", test_counters_bcast_binomial);
    tf_test("counters/allreduce reduce_bcast", test_counters_allreduce_reduce_bcast);
    tf_test("counters/gather and scatter binomial", test_counters_gather_scatter);
    tf_test("counters/barrier dissemination", test_counters_barrier);
}
