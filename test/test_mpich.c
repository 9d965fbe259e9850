/* test_mpich.c - the MPICH suite (issue 5): allgather(v), the van de Geijn
   bcasts, alltoall and reduce_scatter(_block) of Thakur, Rabenseifner & Gropp
   2005 section 4, their selection rules, then counters against section 4's
   costs. */

/* ---- sweeps ------------------------------------------------------------------ */

static void test_sweep_allgather(void) {
    tf_sweep(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_RING);
    tf_sweep(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_RECURSIVE_DOUBLING);
    tf_sweep(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_BRUCK);
}
static void test_sweep_allgatherv(void) {
    tf_sweep(REDCOLL_COLL_ALLGATHERV, REDCOLL_ALGO_RING);
    tf_sweep(REDCOLL_COLL_ALLGATHERV, REDCOLL_ALGO_RECURSIVE_DOUBLING);
    tf_sweep(REDCOLL_COLL_ALLGATHERV, REDCOLL_ALGO_BRUCK);
}
static void test_sweep_bcast_scatter(void) {
    tf_sweep(REDCOLL_COLL_BCAST, REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING);
    tf_sweep(REDCOLL_COLL_BCAST, REDCOLL_ALGO_SCATTER_RING);
}
static void test_sweep_alltoall(void) {
    tf_sweep(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_BRUCK);
    tf_sweep(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_SCATTERED);
    tf_sweep(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_PAIRWISE);
}
static void test_sweep_reduce_scatter(void) {
    tf_sweep(REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_ALGO_RECURSIVE_HALVING);
    tf_sweep(REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_ALGO_RECURSIVE_DOUBLING);
    tf_sweep(REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_ALGO_PAIRWISE);
}
static void test_sweep_reduce_scatter_block(void) {
    tf_sweep(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, REDCOLL_ALGO_RECURSIVE_HALVING);
    tf_sweep(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, REDCOLL_ALGO_RECURSIVE_DOUBLING);
    tf_sweep(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, REDCOLL_ALGO_PAIRWISE);
}

/* ---- counters against section 4's costs ---------------------------------------
   tfo_spec (test_foundation.c): doubles, alpha 1e-6, beta 1e-9, gamma 3e-10,
   one-way factors 0.5 / 0.75, so exchanges and one-way messages differ. */

static int tfm_lg_floor(int p) { int k = 0; while ((2 << k) <= p) ++k; return k; }

/* Ring allgather (4.1): every rank sends p-1 messages of n/p, p-1 rounds,
   time (p-1)(alpha + n/p beta). */
static void test_counters_allgather_ring(void) {
    int i, r;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i];
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_RING, p, 100);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)(p - 1) &&
                      o.rep.stats[r].bytes_sent == (unsigned long long)(p - 1) * 800 &&
                      o.rep.stats[r].scratch_bytes == 0,
                      "p=%d rank %d: %llu msgs %llu bytes", p, r, o.rep.stats[r].msgs_sent,
                      o.rep.stats[r].bytes_sent);
            CHECK(o.rep.rounds == p - 1, "p=%d: %ld rounds", p, o.rep.rounds);
            CHECK(tf_close(o.rep.time, (p - 1) * (m->alpha + 800 * m->beta)), "p=%d: time %.9g", p,
                  o.rep.time);
        }
        rc_outcome_free(&o);
    }
}

/* Recursive doubling allgather (4.1.1): power-of-two p, lg p messages
   totalling (p-1)/p n, time lg p alpha + (p-1)/p n beta; any p at most
   2 ceil(lg p) rounds and messages per rank. */
static void test_counters_allgather_recursive_doubling(void) {
    int i, r;
    for (i = 0; i < TF_NP; ++i) {
        int p = tf_sweep_p[i], k = tf_ceil_lg(p);
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_RECURSIVE_DOUBLING, p, 100);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        s.sim.no_data = p > 33;
        if (tf_measure(&s, &o)) {
            CHECK(o.rep.rounds <= 2 * k, "p=%d: %ld rounds > 2 ceil(lg p)", p, o.rep.rounds);
            for (r = 0; r < p; ++r) {
                const redcoll_mock_stats *st = &o.rep.stats[r];
                CHECK(st->msgs_sent + st->msgs_recv <= (unsigned long long)(4 * k), "p=%d rank %d: %llu+%llu msgs", p, r,
                      st->msgs_sent, st->msgs_recv);
                CHECK(st->bytes_recv == (unsigned long long)(p - 1) * 800, "p=%d rank %d: received %llu bytes", p, r,
                      st->bytes_recv);
                if (tf_is_pof2(p))
                    CHECK(st->msgs_sent == (unsigned long long)k && st->bytes_sent == (unsigned long long)(p - 1) * 800,
                          "p=%d rank %d: %llu msgs %llu bytes", p, r, st->msgs_sent, st->bytes_sent);
            }
            if (tf_is_pof2(p))
                CHECK(o.rep.rounds == k && tf_close(o.rep.time, k * m->alpha + (p - 1) * 800 * m->beta),
                      "p=%d: %ld rounds, time %.9g", p, o.rep.rounds, o.rep.time);
        }
        rc_outcome_free(&o);
    }
}

/* Bruck allgather (4.1.2): ceil(lg p) messages per rank for any p, (p-1)/p n
   bytes, time ceil(lg p) alpha + (p-1)/p n beta, no scratch. */
static void test_counters_allgather_bruck(void) {
    int i, r;
    for (i = 0; i < TF_NP; ++i) {
        int p = tf_sweep_p[i], k = tf_ceil_lg(p);
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_BRUCK, p, 100);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        s.sim.no_data = p > 33;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)k &&
                      o.rep.stats[r].bytes_sent == (unsigned long long)(p - 1) * 800 &&
                      o.rep.stats[r].scratch_bytes == 0,
                      "p=%d rank %d: %llu msgs %llu bytes", p, r, o.rep.stats[r].msgs_sent,
                      o.rep.stats[r].bytes_sent);
            CHECK(o.rep.rounds == k, "p=%d: %ld rounds", p, o.rep.rounds);
            CHECK(tf_close(o.rep.time, k * m->alpha + (p - 1) * 800 * m->beta), "p=%d: time %.9g", p,
                  o.rep.time);
        }
        rc_outcome_free(&o);
    }
}

/* Bcast (4.2): binomial ceil(lg p) hops of n; scatter + ring: the root sends
   ceil(lg p) + p - 1 messages, 2 (p-1)/p n bytes, and the last block arrives
   after lg p + p - 1 rounds (power-of-two p); neither uses scratch. */
static void test_counters_bcast_scatter(void) {
    int i;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tf_ceil_lg(p), root = p / 3;
        rc_spec s = tfo_spec(REDCOLL_COLL_BCAST, REDCOLL_ALGO_SCATTER_RING, p, (size_t)p * 10);
        rc_spec b = tfo_spec(REDCOLL_COLL_BCAST, REDCOLL_ALGO_BINOMIAL, p, (size_t)p * 10);
        rc_outcome o;
        s.root = b.root = root;
        if (tf_measure(&b, &o)) CHECK(o.rep.rounds == k, "p=%d: binomial %ld hops", p, o.rep.rounds);
        rc_outcome_free(&o);
        if (tf_measure(&s, &o)) {
            const redcoll_mock_stats *st = &o.rep.stats[root];
            int r;
            CHECK(st->msgs_sent == (unsigned long long)(k + p - 1) &&
                  st->bytes_sent == 2ull * (unsigned long long)(p - 1) * 80,
                  "p=%d: root sent %llu msgs %llu bytes", p, st->msgs_sent, st->bytes_sent);
            if (tf_is_pof2(p)) CHECK(o.rep.rounds == k + p - 1, "p=%d: %ld rounds", p, o.rep.rounds);
            for (r = 0; r < p; ++r) CHECK(o.rep.stats[r].scratch_bytes == 0, "p=%d rank %d: scratch", p, r);
        }
        rc_outcome_free(&o);
        s.opts.algo = REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING;
        if (tf_measure(&s, &o)) {
            const redcoll_mock_stats *st = &o.rep.stats[root];
            if (tf_is_pof2(p))
                CHECK(st->msgs_sent == 2ull * (unsigned long long)k && o.rep.rounds == 2 * k &&
                      st->bytes_sent == 2ull * (unsigned long long)(p - 1) * 80,
                      "p=%d: root sent %llu msgs %llu bytes, %ld rounds", p, st->msgs_sent,
                      st->bytes_sent, o.rep.rounds);
            CHECK(o.rep.rounds <= 3 * k, "p=%d: %ld rounds", p, o.rep.rounds);
        }
        rc_outcome_free(&o);
    }
}

/* Bruck alltoall (4.3): ceil(lg p) steps; step k moves the blocks whose
   index has bit k set, (n/2) lg p in all for power-of-two p. Pairwise and
   scattered: p-1 messages of n/p. */
static void test_counters_alltoall(void) {
    int i, r;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tf_ceil_lg(p), d, j;
        unsigned long long blocks = 0;
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_BRUCK, p, 10);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        for (d = 1; d < p; d <<= 1)
            for (j = 0; j < p; ++j) blocks += (j & d) != 0;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)k &&
                      o.rep.stats[r].bytes_sent == blocks * 80 &&
                      o.rep.stats[r].scratch_bytes <= (unsigned long long)p * 80,
                      "p=%d rank %d: %llu msgs %llu bytes", p, r, o.rep.stats[r].msgs_sent,
                      o.rep.stats[r].bytes_sent);
            if (tf_is_pof2(p))
                CHECK(blocks * 80 == (unsigned long long)(p * 80 / 2 * k) &&
                      tf_close(o.rep.time, k * (m->alpha + p * 80 / 2 * m->beta)),
                      "p=%d: (n/2) lg p, time %.9g", p, o.rep.time);
        }
        rc_outcome_free(&o);
        s.opts.algo = REDCOLL_ALGO_PAIRWISE;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)(p - 1) &&
                      o.rep.stats[r].bytes_sent == (unsigned long long)(p - 1) * 80 &&
                      o.rep.stats[r].scratch_bytes == 0,
                      "p=%d rank %d: %llu msgs", p, r, o.rep.stats[r].msgs_sent);
            CHECK(o.rep.rounds == p - 1 && tf_close(o.rep.time, (p - 1) * (m->alpha + 80 * m->beta)),
                  "p=%d: %ld steps, time %.9g", p, o.rep.rounds, o.rep.time);
        }
        rc_outcome_free(&o);
        s.opts.algo = REDCOLL_ALGO_SCATTERED;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)(p - 1) &&
                      o.rep.stats[r].bytes_sent == (unsigned long long)(p - 1) * 80,
                      "p=%d rank %d: %llu msgs", p, r, o.rep.stats[r].msgs_sent);
            CHECK(o.rep.rounds == (p > 1), "p=%d: all posted at once, %ld rounds", p, o.rep.rounds);
        }
        rc_outcome_free(&o);
    }
}

/* A transport without isend/irecv/waitall: the scattered alltoall falls back
   to p-1 sendrecv steps with the same peers, and stays correct. */
static redcoll_result tfm_blocking_only(const redcoll_transport *t, void *arg) {
    redcoll_transport b = *t;
    b.isend = NULL; b.irecv = NULL; b.waitall = NULL;
    return rc_rank(&b, arg);
}

static void test_alltoall_scattered_fallback(void) {
    static const int ps[] = { 1, 2, 5, 8, 13 };
    int i, r;
    for (i = 0; i < 5; ++i) {
        int p = ps[i];
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_SCATTERED, p, 7);
        rc_state st;
        rc_outcome o;
        redcoll_mock_config cfg = redcoll_mock_defaults(p);
        memset(&st, 0, sizeof st);
        memset(&o, 0, sizeof o);
        st.spec = &s;
        rc_op_from_name(s.op, &st.dtype, &st.op);
        st.dtype = s.dtype;
        st.esize = redcoll_dtype_size(st.dtype);
        CHECK(rc_setup(&st), "setup");
        CHECK(redcoll_mock_run(&cfg, tfm_blocking_only, &st, &o.rep) == REDCOLL_OK, "run");
        o.ok = redcoll_mock_first_error(&o.rep) == REDCOLL_OK;
        rc_verify(&st, &o);
        CHECK(o.ok, "p=%d: %s", p, o.why);
        CHECK(o.rep.rounds == p - 1, "p=%d: %ld rounds, want p-1 sendrecv steps", p, o.rep.rounds);
        for (r = 0; r < p; ++r)
            CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)(p - 1), "p=%d: messages", p);
        rc_teardown(&st);
        rc_outcome_free(&o);
    }
}

/* Recursive halving reduce_scatter (4.4): power-of-two p, lg p steps moving
   and reducing (p-1)/p n in all, time lg p alpha + (p-1)/p n (beta + gamma);
   other p: floor(lg p) + 2 rounds (fold-in, halving, fold-out). */
static void test_counters_reduce_scatter_recursive_halving(void) {
    int i, r;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tfm_lg_floor(p);
        rc_spec s = tfo_spec(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, REDCOLL_ALGO_RECURSIVE_HALVING, p, 16);
        rc_outcome o;
        const redcoll_cost_model *m = &s.sim.model;
        unsigned long long n = (unsigned long long)p * 16;
        if (tf_measure(&s, &o)) {
            if (tf_is_pof2(p)) {
                for (r = 0; r < p; ++r)
                    CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)k &&
                          o.rep.stats[r].bytes_sent == (n - 16) * 8 &&
                          o.rep.stats[r].elems_reduced == n - 16,
                          "p=%d rank %d: %llu msgs %llu bytes %llu reduced", p, r,
                          o.rep.stats[r].msgs_sent, o.rep.stats[r].bytes_sent,
                          o.rep.stats[r].elems_reduced);
                CHECK(o.rep.rounds == k &&
                      tf_close(o.rep.time, k * m->alpha + (double)(n - 16) * 8 * (m->beta + m->gamma)),
                      "p=%d: %ld rounds, time %.9g", p, o.rep.rounds, o.rep.time);
            } else {
                CHECK(o.rep.rounds == k + 2, "p=%d: %ld rounds, want floor(lg p) + 2", p, o.rep.rounds);
            }
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].scratch_bytes <= 2 * n * 8, "p=%d: scratch %llu", p,
                      o.rep.stats[r].scratch_bytes);
        }
        rc_outcome_free(&o);
    }
}

/* Recursive doubling reduce_scatter (4.4, non-commutative): power-of-two p,
   lg p steps of n - 2^k n/p, n (lg p - (p-1)/p) in all, as much reduced;
   any p at most 2 ceil(lg p) rounds. Pairwise: p-1 steps of n/p. */
static void test_counters_reduce_scatter_doubling_pairwise(void) {
    int i, r;
    for (i = 0; i < TFO_NP; ++i) {
        int p = tfo_ps[i], k = tf_ceil_lg(p);
        rc_spec s = tfo_spec(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, REDCOLL_ALGO_RECURSIVE_DOUBLING, p, 4);
        rc_outcome o;
        unsigned long long n = (unsigned long long)p * 4, want = n * (unsigned long long)k - (n - 4);
        s.op = "matmul"; /* 16-byte elements */
        if (tf_measure(&s, &o)) {
            CHECK(o.rep.rounds <= 2 * k, "p=%d: %ld rounds", p, o.rep.rounds);
            if (tf_is_pof2(p))
                for (r = 0; r < p; ++r)
                    CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)k &&
                          o.rep.stats[r].bytes_sent == want * 16 && o.rep.stats[r].elems_reduced == want,
                          "p=%d rank %d: %llu msgs %llu bytes %llu reduced", p, r,
                          o.rep.stats[r].msgs_sent, o.rep.stats[r].bytes_sent,
                          o.rep.stats[r].elems_reduced);
        }
        rc_outcome_free(&o);
        s.opts.algo = REDCOLL_ALGO_PAIRWISE;
        if (tf_measure(&s, &o)) {
            for (r = 0; r < p; ++r)
                CHECK(o.rep.stats[r].msgs_sent == (unsigned long long)(p - 1) &&
                      o.rep.stats[r].bytes_sent == (n - 4) * 16 &&
                      o.rep.stats[r].elems_reduced == n - 4 &&
                      o.rep.stats[r].scratch_bytes <= 2 * 4 * 16,
                      "p=%d rank %d: %llu msgs %llu reduced", p, r, o.rep.stats[r].msgs_sent,
                      o.rep.stats[r].elems_reduced);
            CHECK(o.rep.rounds == p - 1, "p=%d: %ld rounds", p, o.rep.rounds);
        }
        rc_outcome_free(&o);
    }
}

/* ---- selection ----------------------------------------------------------------- */

static void test_select_mpich(void) {
    redcoll_options mp, pa; /* pa: the paper rules, MPICH's cutoffs off (all)reduce */
    memset(&mp, 0, sizeof mp);
    memset(&pa, 0, sizeof pa);
    pa.selector = REDCOLL_SELECTOR_PAPERS;
    mp.selector = REDCOLL_SELECTOR_MPICH;
    /* allgather: bytes is one block; the cutoffs are on the total */
    CHECK(redcoll_select(REDCOLL_COLL_ALLGATHER, 16, 32767, 1, &pa) == REDCOLL_ALGO_RECURSIVE_DOUBLING, "2^k < 512 KB");
    CHECK(redcoll_select(REDCOLL_COLL_ALLGATHER, 16, 32768, 1, &pa) == REDCOLL_ALGO_RING, "2^k, 512 KB");
    CHECK(redcoll_select(REDCOLL_COLL_ALLGATHER, 10, 8191, 1, &pa) == REDCOLL_ALGO_BRUCK, "< 80 KB");
    CHECK(redcoll_select(REDCOLL_COLL_ALLGATHER, 10, 8192, 1, &pa) == REDCOLL_ALGO_RING, "80 KB");
    CHECK(redcoll_select(REDCOLL_COLL_ALLGATHERV, 10, 81919, 1, &pa) == REDCOLL_ALGO_BRUCK, "v: total");
    CHECK(redcoll_select(REDCOLL_COLL_ALLGATHERV, 8, 524287, 1, &pa) == REDCOLL_ALGO_RECURSIVE_DOUBLING, "v");
    /* bcast */
    CHECK(redcoll_select(REDCOLL_COLL_BCAST, 64, 12287, 1, &pa) == REDCOLL_ALGO_BINOMIAL, "< 12 KB");
    CHECK(redcoll_select(REDCOLL_COLL_BCAST, 7, 1 << 20, 1, &pa) == REDCOLL_ALGO_BINOMIAL, "p < 8");
    CHECK(redcoll_select(REDCOLL_COLL_BCAST, 64, 12288, 1, &pa) == REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING, "medium");
    CHECK(redcoll_select(REDCOLL_COLL_BCAST, 64, 524288, 1, &pa) == REDCOLL_ALGO_SCATTER_RING, "long");
    CHECK(redcoll_select(REDCOLL_COLL_BCAST, 12, 20000, 1, &pa) == REDCOLL_ALGO_SCATTER_RING, "medium, p not 2^k");
    /* alltoall: bytes per block */
    CHECK(redcoll_select(REDCOLL_COLL_ALLTOALL, 5, 256, 1, &pa) == REDCOLL_ALGO_BRUCK, "<= 256 B");
    CHECK(redcoll_select(REDCOLL_COLL_ALLTOALL, 5, 257, 1, &pa) == REDCOLL_ALGO_SCATTERED, "medium");
    CHECK(redcoll_select(REDCOLL_COLL_ALLTOALL, 5, 32768, 1, &pa) == REDCOLL_ALGO_SCATTERED, "<= 32 KB");
    CHECK(redcoll_select(REDCOLL_COLL_ALLTOALL, 5, 32769, 1, &pa) == REDCOLL_ALGO_PAIRWISE, "long");
    /* reduce_scatter: total bytes, commutativity */
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE_SCATTER, 6, 524287, 1, &pa) == REDCOLL_ALGO_RECURSIVE_HALVING, "comm");
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE_SCATTER, 6, 524288, 1, &pa) == REDCOLL_ALGO_PAIRWISE, "comm long");
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, 6, 511, 0, &pa) == REDCOLL_ALGO_RECURSIVE_DOUBLING, "noncomm");
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, 6, 512, 0, &pa) == REDCOLL_ALGO_PAIRWISE, "noncomm long");
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE_SCATTER, 6, 100, 1, &mp) == REDCOLL_ALGO_RECURSIVE_HALVING, "same for MPICH");
    /* the MPICH selector for reduce and allreduce (4.5) */
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE, 6, 2048, 1, &mp) == REDCOLL_ALGO_BINOMIAL, "reduce <= 2 KB");
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE, 6, 2049, 1, &mp) == REDCOLL_ALGO_HALVING_DOUBLING, "reduce long");
    CHECK(redcoll_select(REDCOLL_COLL_REDUCE, 6, 1 << 20, 0, &mp) == REDCOLL_ALGO_BINOMIAL, "reduce user op");
    CHECK(redcoll_select(REDCOLL_COLL_ALLREDUCE, 6, 2048, 1, &mp) == REDCOLL_ALGO_RECURSIVE_DOUBLING, "allreduce short");
    CHECK(redcoll_select(REDCOLL_COLL_ALLREDUCE, 6, 2049, 1, &mp) == REDCOLL_ALGO_HALVING_DOUBLING, "allreduce long");
    CHECK(redcoll_select(REDCOLL_COLL_ALLREDUCE, 6, 1 << 20, 0, &mp) == REDCOLL_ALGO_RECURSIVE_DOUBLING, "allreduce user op");
    /* the entry points follow the selector: non-commutative reduce_scatter works */
    {
        rc_spec s = rc_spec_make(REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_ALGO_AUTO, 11, 500);
        s.op = "matmul";
        tf_run_ok(&s);
        s.op = "sum";
        tf_run_ok(&s);
    }
}

/* The irregular distribution: adds up, is uneven, and leaves some ranks empty. */
static void test_irregular_counts(void) {
    int p;
    for (p = 1; p <= 40; ++p) {
        size_t c[40], sum = 0, total = (size_t)p * 7 + 3;
        int r, zeros = 0, differ = 0;
        rc_counts(p, total, c);
        for (r = 0; r < p; ++r) { sum += c[r]; zeros += c[r] == 0; differ |= r && c[r] != c[0]; }
        CHECK(sum == total, "p=%d: counts add up to %zu, not %zu", p, sum, total);
        if (p >= 2) CHECK(zeros > 0 && differ, "p=%d: uneven with zeros", p);
    }
}

static void suite_mpich(void) {
    tf_test("sweep/allgather ring, recursive_doubling, bruck", test_sweep_allgather);
    tf_test("sweep/allgatherv ring, recursive_doubling, bruck", test_sweep_allgatherv);
    tf_test("sweep/bcast scatter_recursive_doubling, scatter_ring", test_sweep_bcast_scatter);
    tf_test("sweep/alltoall bruck, scattered, pairwise", test_sweep_alltoall);
    tf_test("sweep/reduce_scatter recursive_halving, recursive_doubling, pairwise", test_sweep_reduce_scatter);
    tf_test("sweep/reduce_scatter_block recursive_halving, recursive_doubling, pairwise", test_sweep_reduce_scatter_block);
    tf_test("mpich/irregular counts", test_irregular_counts);
    tf_test("mpich/selection rules", test_select_mpich);
    tf_test("mpich/alltoall scattered without isend", test_alltoall_scattered_fallback);
    tf_test("counters/allgather ring", test_counters_allgather_ring);
    tf_test("counters/allgather recursive_doubling", test_counters_allgather_recursive_doubling);
    tf_test("counters/allgather bruck", test_counters_allgather_bruck);
    tf_test("counters/bcast binomial vs scatter+allgather", test_counters_bcast_scatter);
    tf_test("counters/alltoall bruck, pairwise, scattered", test_counters_alltoall);
    tf_test("counters/reduce_scatter recursive_halving", test_counters_reduce_scatter_recursive_halving);
    tf_test("counters/reduce_scatter recursive_doubling, pairwise", test_counters_reduce_scatter_doubling_pairwise);
}
