/* test_rabenseifner.c - Rabenseifner's allreduce / reduce family (issue 3):
   binary_tree, halving_doubling, binary_blocks and ring, and the paper
   selector for allreduce and reduce. The standard sweeps, then the counters
   and modeled times against Rabenseifner 2004 sections 3.3-3.7 (MPICH paper
   5.1-5.3), then the selector against section 4. */

static void test_sweep_rab_binary_tree(void) {
    tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_BINARY_TREE);
    tf_sweep(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_BINARY_TREE);
}
static void test_sweep_rab_allreduce_halving_doubling(void) {
    tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HALVING_DOUBLING);
}
static void test_sweep_rab_reduce_halving_doubling(void) {
    tf_sweep(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_HALVING_DOUBLING);
}
static void test_sweep_rab_allreduce_binary_blocks(void) {
    tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_BINARY_BLOCKS);
}
static void test_sweep_rab_reduce_binary_blocks(void) {
    tf_sweep(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_BINARY_BLOCKS);
}
static void test_sweep_rab_allreduce_ring(void) { tf_sweep(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RING); }
static void test_sweep_rab_reduce_ring(void) { tf_sweep(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_RING); }

/* Every root of a reduce for the p where the root's role matters most:
   removed ranks (odd below 2r) swap roles in halving_doubling, roots outside
   the largest block get rank 0's segment in binary_blocks. Non-commutative. */
static void test_sweep_rab_reduce_every_root(void) {
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_HALVING_DOUBLING,
                                           REDCOLL_ALGO_BINARY_BLOCKS, REDCOLL_ALGO_RING };
    static const int ps[4] = { 3, 13, 22, 27 };
    int a, i, root;
    for (a = 0; a < 3; ++a)
        for (i = 0; i < 4; ++i)
            for (root = 0; root < ps[i]; ++root) {
                rc_spec s = rc_spec_make(REDCOLL_COLL_REDUCE, algos[a], ps[i], (size_t)(2 * ps[i] + 3));
                s.op = "matmul";
                s.root = root;
                s.in_place = root % 2;
                tf_run_ok(&s);
            }
}

/* ---- counters ---------------------------------------------------------------- */

/* Specs come from test_foundation.c's tfo_spec: its cost model has distinct
   one-way factors, so a formula can tell one-way from exchange messages. */

static int trb_lg(int p) { int k = 0; while ((2 << k) <= p) ++k; return k; } /* floor */

static const int trb_pof2[] = { 2, 4, 8, 16, 32, 64 };
static const int trb_npof2[] = { 3, 5, 6, 7, 11, 12, 13, 17, 24, 31, 33, 48, 100 };
#define TRB_NPOF2 ((int)(sizeof trb_npof2 / sizeof trb_npof2[0]))

/* Section 3.5, p = 2^k, count divisible by p: each rank sends 2(p-1)/p n
   bytes in 2 lg p exchanges, reduces (p-1)/p count elements, and the
   modeled time is T_all,h&d = 2 lg p alpha + 2 n beta + n gamma
   - (1/p)(2 n beta + n gamma). */
static void test_counters_rab_allreduce_halving_doubling_pof2(void) {
    int i, r;
    for (i = 0; i < 6; ++i) {
        int p = trb_pof2[i], lg = trb_lg(p);
        size_t count = (size_t)p * 96;
        double n = (double)count * 8;
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HALVING_DOUBLING, p, count);
        const redcoll_cost_model *m = &s.sim.model;
        double want = 2 * lg * m->alpha + 2 * n * m->beta + n * m->gamma -
                      (2 * n * m->beta + n * m->gamma) / p;
        rc_outcome o;
        if (tf_measure(&s, &o)) {
            CHECK(tf_close(o.rep.time, want), "p=%d: time %.12g, T_all,h&d %.12g", p, o.rep.time, want);
            for (r = 0; r < p; ++r) {
                const redcoll_mock_stats *st = &o.rep.stats[r];
                CHECK(st->bytes_sent == (unsigned long long)(2 * (p - 1) * (n / p)) &&
                      st->bytes_recv == st->bytes_sent,
                      "p=%d rank %d: sent %llu bytes, want 2(p-1)/p n", p, r, st->bytes_sent);
                CHECK(st->msgs_sent == (unsigned long long)(2 * lg) && st->rounds == 2 * lg,
                      "p=%d rank %d: %llu messages in %ld rounds, want 2 lg p", p, r, st->msgs_sent,
                      st->rounds);
                CHECK(st->elems_reduced == (unsigned long long)((size_t)(p - 1) * count / (size_t)p),
                      "p=%d rank %d: reduced %llu elements, want (p-1)/p count", p, r, st->elems_reduced);
                CHECK(st->scratch_bytes <= (unsigned long long)(n / 2),
                      "p=%d rank %d: scratch %llu > half a vector", p, r, st->scratch_bytes);
            }
        }
        rc_outcome_free(&o);
    }
}

/* Section 3.5, p not a power of two (MPICH paper 5.1), count divisible by
   p': the simulator gives exactly
     T = (2 lg p' + 1 + 2 f_alpha) alpha + (2 + (1 + 3 f_beta)/2) n beta
         + 3/2 n gamma - (1/p')(2 n beta + n gamma),
   the MPICH paper's formula. Rabenseifner 2004 writes (2 lg p' + 2 + f_alpha)
   alpha + (3 + (1 + f_beta)/2) n beta for the same protocol: it charges the
   last step (the result sent to the removed ranks) as an exchange,
   alpha + n beta, where the protocol sends one way, f_alpha alpha +
   f_beta n beta; with f_alpha = f_beta = 1 the two agree, which the second
   run checks. A removed rank sends n bytes (half its input, its reduced
   half) in 2 messages and receives n/2 + n. */
static void test_counters_rab_allreduce_halving_doubling_npof2(void) {
    int i, r, pass;
    for (i = 0; i < TRB_NPOF2; ++i)
        for (pass = 0; pass < 2; ++pass) {
            int p = trb_npof2[i], lg = trb_lg(p), pof2 = 1 << lg, rem = p - pof2;
            size_t count = (size_t)pof2 * 40;
            double n = (double)count * 8, want;
            rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HALVING_DOUBLING, p, count);
            const redcoll_cost_model *m = &s.sim.model;
            rc_outcome o;
            if (pass) s.sim.model.f_alpha = s.sim.model.f_beta = 1.0;
            if (pass) /* Rabenseifner 2004 section 3.5 */
                want = (2 * lg + 2 + m->f_alpha) * m->alpha + (3 + (1 + m->f_beta) / 2) * n * m->beta +
                       1.5 * n * m->gamma - (2 * n * m->beta + n * m->gamma) / pof2;
            else      /* MPICH paper section 5.1 */
                want = (2 * lg + 1 + 2 * m->f_alpha) * m->alpha +
                       (2 + (1 + 3 * m->f_beta) / 2) * n * m->beta + 1.5 * n * m->gamma -
                       (2 * n * m->beta + n * m->gamma) / pof2;
            if (tf_measure(&s, &o)) {
                CHECK(tf_close(o.rep.time, want), "p=%d pass %d: time %.12g, formula %.12g", p, pass,
                      o.rep.time, want);
                for (r = 0; r < 2 * rem; r += 2) {
                    const redcoll_mock_stats *st = &o.rep.stats[r + 1]; /* odd: removed */
                    CHECK(st->msgs_sent == 2 && st->bytes_sent == (unsigned long long)n &&
                          st->msgs_recv == 2 && st->bytes_recv == (unsigned long long)(1.5 * n),
                          "p=%d removed rank %d: sent %llu msgs / %llu bytes", p, r + 1,
                          st->msgs_sent, st->bytes_sent);
                }
            }
            rc_outcome_free(&o);
        }
}

/* Section 3.5, reduce: T_red,h&d at the root, for every kind of root (a
   survivor, a removed rank swapping roles, a rank outside the first 2r):
   p = 2^k: lg p (1 + f_alpha) alpha + (1 + f_beta) n beta + n gamma
            - (1/p)((1 + f_beta) n beta + n gamma);
   else:    lg p' (1 + f_alpha) alpha + (1 + f_alpha) alpha
            + (1 + (1 + f_beta)/2 + f_beta) n beta + 3/2 n gamma
            - (1/p')((1 + f_beta) n beta + n gamma).
   (The paper's p = 2^k line has beta + beta_uni in the last term, the same.) */
static void test_counters_rab_reduce_halving_doubling(void) {
    int i, root;
    for (i = 0; i < 6 + TRB_NPOF2; ++i) {
        int p = i < 6 ? trb_pof2[i] : trb_npof2[i - 6], lg = trb_lg(p), pof2 = 1 << lg;
        for (root = 0; root < p; root += p < 8 ? 1 : 3) {
            size_t count = (size_t)pof2 * 40;
            double n = (double)count * 8, want;
            rc_spec s = tfo_spec(REDCOLL_COLL_REDUCE, REDCOLL_ALGO_HALVING_DOUBLING, p, count);
            const redcoll_cost_model *m = &s.sim.model;
            rc_outcome o;
            s.root = root;
            want = lg * (1 + m->f_alpha) * m->alpha + (1 + m->f_beta) * n * m->beta + n * m->gamma -
                   ((1 + m->f_beta) * n * m->beta + n * m->gamma) / pof2;
            if (p != pof2)
                want += (1 + m->f_alpha) * m->alpha + (1 + m->f_beta) / 2 * n * m->beta + 0.5 * n * m->gamma;
            if (tf_measure(&s, &o)) {
                CHECK(tf_close(o.rep.stats[root].time, want), "p=%d root=%d: root time %.12g, T_red,h&d %.12g",
                      p, root, o.rep.stats[root].time, want);
                CHECK(o.rep.stats[root].msgs_recv == (unsigned long long)(2 * lg + 2 * (root < 2 * (p - pof2))),
                      "p=%d root=%d: root receives %llu messages", p, root, o.rep.stats[root].msgs_recv);
            }
            rc_outcome_free(&o);
        }
    }
}

/* Section 3.7, any p, count divisible by p: each rank sends 2(p-1)/p n
   bytes in 2(p-1) exchanges; T_all,ring = 2(p-1) alpha + 2 n beta + n gamma
   - (1/p)(2 n beta + n gamma); the reduce's root finishes at T_red,ring =
   (p-1)(alpha + alpha_uni) + n(beta + beta_uni) + n gamma
   - (1/p)(n(beta + beta_uni) + n gamma). */
/* T_all,ring (Rabenseifner 2004 section 3.7). */
static double trb_t_all_ring(const redcoll_cost_model *m, int p, double n) {
    return 2 * (p - 1) * m->alpha + 2 * n * m->beta + n * m->gamma - (2 * n * m->beta + n * m->gamma) / p;
}

/* A non-commutative op keeps canonical order with two accumulators per
   segment (x_0..x_v and x_(v+1)..x_(p-1)) joined after the last step: the
   same p-1 reductions, but the join sits on the critical path, so the
   modeled time may exceed T_all,ring by one segment's reduction, n/p gamma,
   never more. */
static void test_counters_rab_ring_noncommutative(void) {
    int i;
    for (i = 0; i < 6 + TRB_NPOF2; ++i) {
        int p = i < 6 ? trb_pof2[i] : trb_npof2[i - 6];
        size_t count = (size_t)p * 6;
        double n = (double)count * 16;
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RING, p, count);
        const redcoll_cost_model *m = &s.sim.model;
        double want = trb_t_all_ring(m, p, n);
        rc_outcome o;
        s.op = "matmul";
        if (tf_measure(&s, &o)) {
            CHECK(o.rep.time >= want * (1 - 1e-9) && o.rep.time <= (want + n / p * m->gamma) * (1 + 1e-9),
                  "p=%d: time %.12g, T_all,ring %.12g (+ n/p gamma at most)", p, o.rep.time, want);
            CHECK(o.rep.stats[0].elems_reduced == (unsigned long long)(count - count / (size_t)p),
                  "p=%d: p-1 segments reduced", p);
        }
        rc_outcome_free(&o);
    }
}

static void test_counters_rab_ring(void) {
    int i, r;
    for (i = 0; i < 6 + TRB_NPOF2; ++i) {
        int p = i < 6 ? trb_pof2[i] : trb_npof2[i - 6];
        size_t count = (size_t)p * 24;
        double n = (double)count * 8;
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RING, p, count);
        const redcoll_cost_model *m = &s.sim.model;
        double want = trb_t_all_ring(m, p, n);
        double bu = m->f_beta * m->beta, au = m->f_alpha * m->alpha;
        rc_outcome o;
        if (tf_measure(&s, &o)) {
            CHECK(tf_close(o.rep.time, want), "p=%d: time %.12g, T_all,ring %.12g", p, o.rep.time, want);
            for (r = 0; r < p; ++r) {
                const redcoll_mock_stats *st = &o.rep.stats[r];
                CHECK(st->bytes_sent == (unsigned long long)(2 * (p - 1) * (n / p)) &&
                      st->msgs_sent == (unsigned long long)(2 * (p - 1)) && st->rounds == 2 * (p - 1),
                      "p=%d rank %d: %llu bytes in %llu messages, %ld rounds", p, r, st->bytes_sent,
                      st->msgs_sent, st->rounds);
                CHECK(st->elems_reduced == (unsigned long long)((size_t)(p - 1) * count / (size_t)p),
                      "p=%d rank %d: reduced %llu", p, r, st->elems_reduced);
            }
        }
        rc_outcome_free(&o);
        s.coll = REDCOLL_COLL_REDUCE;
        s.root = p / 3;
        want = (p - 1) * (m->alpha + au) + n * (m->beta + bu) + n * m->gamma -
               (n * (m->beta + bu) + n * m->gamma) / p;
        if (tf_measure(&s, &o)) {
            CHECK(tf_close(o.rep.stats[s.root].time, want), "reduce p=%d: root time %.12g, T_red,ring %.12g",
                  p, o.rep.stats[s.root].time, want);
            CHECK(o.rep.stats[s.root].msgs_recv == (unsigned long long)(2 * (p - 1)),
                  "reduce p=%d: root receives p-1 exchanges and p-1 segments", p);
        }
        rc_outcome_free(&o);
    }
}

/* Section 3.6: "for power-of-two number of processes, the binary block
   algorithms are identical to the halving and doubling algorithm" - every
   counter of every rank, allreduce and reduce, several roots and counts. */
static void test_counters_rab_binary_blocks_is_hd_for_pof2(void) {
    int i, c, root, r;
    for (i = 0; i < 6; ++i)
        for (c = 0; c < 2; ++c)
            for (root = 0; root < trb_pof2[i]; root += 3) {
                int p = trb_pof2[i], coll;
                for (coll = 0; coll < 2; ++coll) {
                    redcoll_coll cl = coll ? REDCOLL_COLL_REDUCE : REDCOLL_COLL_ALLREDUCE;
                    rc_spec hd = tfo_spec(cl, REDCOLL_ALGO_HALVING_DOUBLING, p, c ? 1000 : (size_t)p * 8);
                    rc_spec bb = hd;
                    rc_outcome a, b;
                    bb.opts.algo = REDCOLL_ALGO_BINARY_BLOCKS;
                    hd.root = bb.root = root;
                    if (tf_measure(&hd, &a) && tf_measure(&bb, &b))
                        for (r = 0; r < p; ++r) {
                            const redcoll_mock_stats *x = &a.rep.stats[r], *y = &b.rep.stats[r];
                            CHECK(x->msgs_sent == y->msgs_sent && x->msgs_recv == y->msgs_recv &&
                                  x->bytes_sent == y->bytes_sent && x->bytes_recv == y->bytes_recv &&
                                  x->elems_reduced == y->elems_reduced && x->rounds == y->rounds &&
                                  x->time == y->time && x->scratch_bytes == y->scratch_bytes,
                                  "%s p=%d root=%d rank %d: binary_blocks differs from halving_doubling",
                                  redcoll_coll_name(cl), p, root, r);
                        }
                    rc_outcome_free(&a);
                    rc_outcome_free(&b);
                }
            }
}

/* Section 3.6 on p = 13 = 8 + 4 + 1 (Fig. 3): the 2^0 block (P12) sends one
   message per member of the 2^2 block and gets one back from each; every
   member of the 2^2 block reduces its two segments of P12's vector (e.g.
   A-B on P8) on top of its own half-and-quarter reduce-scatter; the 2^3
   block reduces one more segment each. */
static void test_counters_rab_binary_blocks_fig3(void) {
    rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_BINARY_BLOCKS, 13, 800);
    rc_outcome o;
    int r;
    if (tf_measure(&s, &o)) {
        const redcoll_mock_stats *st = o.rep.stats;
        CHECK(st[12].msgs_sent == 4 && st[12].msgs_recv == 4 && st[12].elems_reduced == 0 &&
              st[12].bytes_sent == 6400 && st[12].bytes_recv == 6400,
              "P12: sends its 4 quarters, gets 4 quarters back");
        for (r = 8; r < 12; ++r)
            CHECK(st[r].elems_reduced == 400 + 200 + 200 && st[r].msgs_sent == 7 && st[r].msgs_recv == 7,
                  "P%d: reduce-scatter 400+200, P12's quarter 200; 2+2+1+2 messages", r);
        for (r = 0; r < 8; ++r)
            CHECK(st[r].elems_reduced == 700 + 100 && st[r].msgs_sent == 7 && st[r].msgs_recv == 7,
                  "P%d: reduce-scatter 7/8, the 4-block's segment 1/8; 3+1+3 messages", r);
    }
    rc_outcome_free(&o);
}

/* Every element is reduced exactly p-1 times over all ranks (no redundant
   work) by the reduce-scatter based schedules, for any p and any count
   (uneven and empty segments included); scratch stays within one vector for
   allreduce and 1.5 vectors for reduce (a working copy plus half). */
static void test_counters_rab_total_work(void) {
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_HALVING_DOUBLING,
                                           REDCOLL_ALGO_BINARY_BLOCKS, REDCOLL_ALGO_RING };
    static const size_t counts[4] = { 1, 5, 37, 1001 };
    int a, i, k, coll, r;
    for (a = 0; a < 3; ++a)
        for (i = 0; i < TRB_NPOF2; ++i)
            for (k = 0; k < 4; ++k)
                for (coll = 0; coll < 2; ++coll) {
                    int p = trb_npof2[i];
                    rc_spec s = tfo_spec(coll ? REDCOLL_COLL_REDUCE : REDCOLL_COLL_ALLREDUCE, algos[a], p,
                                         counts[k]);
                    rc_outcome o;
                    unsigned long long total = 0;
                    double vec = (double)counts[k] * 8;
                    s.root = p - 1;
                    if (tf_measure(&s, &o)) {
                        for (r = 0; r < p; ++r) {
                            total += o.rep.stats[r].elems_reduced;
                            CHECK((double)o.rep.stats[r].scratch_bytes <= (coll ? 1.5 * vec + 16 : vec + 16),
                                  "%s p=%d count=%zu rank %d: scratch %llu bytes", tf_describe(&s), p,
                                  counts[k], r, o.rep.stats[r].scratch_bytes);
                        }
                        CHECK(total == (unsigned long long)(p - 1) * counts[k],
                              "%s: %llu reductions in all, want (p-1) count", tf_describe(&s), total);
                    }
                    rc_outcome_free(&o);
                }
}

/* Section 3.3: the binary tree is the binomial tree; same counters. */
static void test_counters_rab_binary_tree(void) {
    int i;
    for (i = 0; i < TRB_NPOF2; ++i) {
        int p = trb_npof2[i], k = tf_ceil_lg(p);
        rc_spec s = tfo_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_BINARY_TREE, p, 100);
        const redcoll_cost_model *m = &s.sim.model;
        double n = 800, au = m->f_alpha * m->alpha, bu = m->f_beta * m->beta;
        rc_outcome o;
        /* T_all,tree = ceil(lg p)(2 alpha_uni + 2 n beta_uni + n gamma) */
        if (tf_measure(&s, &o))
            CHECK(tf_close(o.rep.time, k * (2 * au + 2 * n * bu + n * m->gamma)),
                  "p=%d: time %.12g, T_all,tree %.12g", p, o.rep.time,
                  k * (2 * au + 2 * n * bu + n * m->gamma));
        rc_outcome_free(&o);
    }
}

/* ---- selector ---------------------------------------------------------------- */

static void test_select_rab(void) {
    static const struct { redcoll_coll coll; int p; size_t bytes; redcoll_algo want; } cases[] = {
        { REDCOLL_COLL_ALLREDUCE, 13, 32, REDCOLL_ALGO_RECURSIVE_DOUBLING },
        { REDCOLL_COLL_REDUCE, 13, 32, REDCOLL_ALGO_BINARY_TREE },
        { REDCOLL_COLL_ALLREDUCE, 13, 1024, REDCOLL_ALGO_BINARY_TREE },
        { REDCOLL_COLL_ALLREDUCE, 16, 1024, REDCOLL_ALGO_RECURSIVE_DOUBLING },
        { REDCOLL_COLL_ALLREDUCE, 15, 65536, REDCOLL_ALGO_RING },        /* "15 processes: ring if >= 64 KB" */
        { REDCOLL_COLL_ALLREDUCE, 15, 32768, REDCOLL_ALGO_HALVING_DOUBLING },
        { REDCOLL_COLL_REDUCE, 7, 1 << 20, REDCOLL_ALGO_RING },
        { REDCOLL_COLL_ALLREDUCE, 16, 1 << 20, REDCOLL_ALGO_HALVING_DOUBLING },
        { REDCOLL_COLL_ALLREDUCE, 96, 16384, REDCOLL_ALGO_BINARY_BLOCKS }, /* delta 1 */
        { REDCOLL_COLL_ALLREDUCE, 96, 8192, REDCOLL_ALGO_HALVING_DOUBLING }, /* < 16 KB */
        { REDCOLL_COLL_ALLREDUCE, 100, 16384, REDCOLL_ALGO_BINARY_BLOCKS }, /* delta 3: > 2 KB */
        { REDCOLL_COLL_ALLREDUCE, 33, 32768, REDCOLL_ALGO_HALVING_DOUBLING }, /* delta 5: > 32 KB */
        { REDCOLL_COLL_ALLREDUCE, 33, 32769, REDCOLL_ALGO_BINARY_BLOCKS },
        { REDCOLL_COLL_ALLREDUCE, 31, 16384, REDCOLL_ALGO_HALVING_DOUBLING }, /* p <= 32 */
        { REDCOLL_COLL_REDUCE, 128, 1 << 20, REDCOLL_ALGO_HALVING_DOUBLING },
    };
    size_t i;
    int p, k;
    redcoll_options papers; /* the paper rules; the default is the model */
    memset(&papers, 0, sizeof papers);
    papers.selector = REDCOLL_SELECTOR_PAPERS;
    CHECK(redcoll__delta_expo_max(100) == 3 && redcoll__delta_expo_max(96) == 1 &&
          redcoll__delta_expo_max(13) == 2 && redcoll__delta_expo_max(64) == 0 &&
          redcoll__delta_expo_max(33) == 5, "delta_expo_max as in the paper's footnote 2");
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        redcoll_algo got = redcoll_select(cases[i].coll, cases[i].p, cases[i].bytes, 1, &papers);
        CHECK(got == cases[i].want, "%s p=%d %zu bytes: selected %s, want %s",
              redcoll_coll_name(cases[i].coll), cases[i].p, cases[i].bytes, redcoll_algo_name(got),
              redcoll_algo_name(cases[i].want));
    }
    for (p = 1; p <= 300; ++p) /* never order-breaking for a non-commutative op */
        for (k = 0; k < 26; ++k) {
            redcoll_algo a = redcoll_select(REDCOLL_COLL_ALLREDUCE, p, (size_t)1 << k, 0, &papers);
            redcoll_algo b = redcoll_select(REDCOLL_COLL_REDUCE, p, (size_t)1 << k, 0, &papers);
            CHECK(redcoll_algo_keeps_order(REDCOLL_COLL_ALLREDUCE, a) &&
                  redcoll_algo_keeps_order(REDCOLL_COLL_REDUCE, b),
                  "p=%d 2^%d bytes: %s / %s", p, k, redcoll_algo_name(a), redcoll_algo_name(b));
        }
}

static void suite_rabenseifner(void) {
    tf_test("sweep/binary_tree allreduce and reduce", test_sweep_rab_binary_tree);
    tf_test("sweep/allreduce halving_doubling", test_sweep_rab_allreduce_halving_doubling);
    tf_test("sweep/reduce halving_doubling", test_sweep_rab_reduce_halving_doubling);
    tf_test("sweep/allreduce binary_blocks", test_sweep_rab_allreduce_binary_blocks);
    tf_test("sweep/reduce binary_blocks", test_sweep_rab_reduce_binary_blocks);
    tf_test("sweep/allreduce ring", test_sweep_rab_allreduce_ring);
    tf_test("sweep/reduce ring", test_sweep_rab_reduce_ring);
    tf_test("sweep/reduce every root, matmul (h&d, blocks, ring)", test_sweep_rab_reduce_every_root);
    tf_test("counters/allreduce halving_doubling p=2^k", test_counters_rab_allreduce_halving_doubling_pof2);
    tf_test("counters/allreduce halving_doubling p!=2^k", test_counters_rab_allreduce_halving_doubling_npof2);
    tf_test("counters/reduce halving_doubling", test_counters_rab_reduce_halving_doubling);
    tf_test("counters/allreduce and reduce ring", test_counters_rab_ring);
    tf_test("counters/allreduce ring non-commutative", test_counters_rab_ring_noncommutative);
    tf_test("counters/binary_blocks == halving_doubling for p=2^k", test_counters_rab_binary_blocks_is_hd_for_pof2);
    tf_test("counters/binary_blocks p=13 (Fig. 3)", test_counters_rab_binary_blocks_fig3);
    tf_test("counters/no redundant reductions, scratch", test_counters_rab_total_work);
    tf_test("counters/allreduce binary_tree", test_counters_rab_binary_tree);
    tf_test("select/allreduce and reduce (Rabenseifner 2004 section 4)", test_select_rab);
}
