/* test_elimination.c - Rabenseifner & Traeff 2005 (issue 4): the butterfly
   with threshold b, 3-2 / 2-1 elimination (overlapping and non-overlapping
   protocols), rings over odd factors. Sweeps with every threshold regime,
   then the paper's claims as counters: rounds, the large-m time bound, the
   comparison with halving-doubling, and Table 1 (printed as markdown with
   `build/test_runner -v elimination/table1`, the source of docs/table1.md). */

static const redcoll_algo te_algos[4] = {
    REDCOLL_ALGO_BUTTERFLY, REDCOLL_ALGO_ELIMINATION, REDCOLL_ALGO_ELIMINATION_NONOVERLAP,
    REDCOLL_ALGO_FACTOR_RING
};

/* The foundation sweep for every schedule, b from the cost model (whole
   chunks at the sweep's sizes, halving for its large count). */
static void te_sweep(redcoll_coll coll) {
    int i;
    for (i = 0; i < 4; ++i) tf_sweep(coll, te_algos[i]);
}
static void test_te_sweep_allreduce(void) { te_sweep(REDCOLL_COLL_ALLREDUCE); }
static void test_te_sweep_reduce(void) { te_sweep(REDCOLL_COLL_REDUCE); }

/* b = 0 (every level halves) and thresholds between the extremes (some
   levels halve, the rest exchange whole chunks): sums and the
   non-commutative matrix product, allreduce and reduce, uneven counts. */
static void test_te_thresholds(void) {
    static const int ps[] = { 2, 3, 4, 5, 6, 7, 9, 11, 12, 13, 15, 17, 23, 24, 25, 27, 31, 33,
                              40, 45, 63 };
    static const size_t bs[] = { REDCOLL_THRESHOLD_HALVE_ALL, 200 };
    int i, a, b, k;
    for (i = 0; i < (int)(sizeof ps / sizeof ps[0]); ++i)
        for (a = 0; a < 4; ++a)
            for (b = 0; b < 2; ++b)
                for (k = 0; k < 4; ++k) {
                    int p = ps[i];
                    rc_spec s = rc_spec_make(k < 2 ? REDCOLL_COLL_ALLREDUCE : REDCOLL_COLL_REDUCE,
                                        te_algos[a], p, k % 2 ? (size_t)p + 1 : 1000);
                    s.opts.threshold_bytes = bs[b];
                    s.op = k % 2 ? "matmul" : "sum";
                    s.dtype = REDCOLL_DOUBLE;
                    s.in_place = (b + k) % 2;
                    s.root = k == 2 ? p / 3 : p - 1;
                    tf_run_ok(&s);
                }
}

/* Reduce with b = 0 at every root. */
static void test_te_roots(void) {
    static const int ps[] = { 3, 5, 6, 7, 12, 13, 15 };
    int i, a;
    for (i = 0; i < 7; ++i)
        for (a = 0; a < 4; ++a) {
            rc_spec s = rc_spec_make(REDCOLL_COLL_REDUCE, te_algos[a], ps[i], 2 * (size_t)ps[i] + 1);
            s.opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_ALL;
            s.op = "matmul";
            for (s.root = 0; s.root < ps[i]; ++s.root) { s.in_place = s.root % 2; tf_run_ok(&s); }
        }
}

/* ---- counters ------------------------------------------------------------ */

static rc_spec te_spec(redcoll_algo algo, int p, size_t count, size_t threshold) {
    rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, algo, p, count);
    s.dtype = REDCOLL_DOUBLE;
    s.sim.no_data = 1;
    s.opts.threshold_bytes = threshold;
    return s;
}

static int te_pof2_floor(int p) { int k = 1; while (k * 2 <= p) k *= 2; return k; }

/* Section 3.3: for m <= b, ceil(lg p) + 1 rounds (lg p for powers of two),
   ceil(lg p) m gamma of reductions on the critical path; the butterfly with
   fold-in needs lg p' + 2; every rank's scratch is at most one vector. */
static void test_te_rounds_latency(void) {
    int i, a, r;
    for (i = 0; i < TF_NP; ++i)
        for (a = 0; a < 3; ++a) {
            int p = tf_sweep_p[i], lg = tf_ceil_lg(p), pof2 = tf_is_pof2(p);
            rc_spec s = te_spec(te_algos[a], p, 10, REDCOLL_THRESHOLD_HALVE_NONE);
            rc_outcome o;
            long want = pof2 ? lg : (a == 0 ? tf_ceil_lg(te_pof2_floor(p)) + 2 : lg + 1);
            unsigned long long red = 0;
            if (tf_measure(&s, &o)) {
                CHECK(o.rep.rounds == want, "%s: %ld rounds, want %ld", tf_describe(&s), o.rep.rounds, want);
                for (r = 0; r < p; ++r) {
                    if (o.rep.stats[r].elems_reduced > red) red = o.rep.stats[r].elems_reduced;
                    CHECK(o.rep.stats[r].scratch_bytes <= 80, "%s rank %d: scratch %llu", tf_describe(&s), r,
                          o.rep.stats[r].scratch_bytes);
                }
                if (a > 0) CHECK(red == 10ull * (unsigned long long)lg, "%s: %llu reduced, want %d", tf_describe(&s), red, 10 * lg);
            }
            rc_outcome_free(&o);
        }
}

/* Section 3.4: with ring steps for the factor 3, p = 3 2^n and 9 2^n need
   the optimal ceil(lg p) rounds (p = 12: 4, where elimination needs 5). */
static void test_te_rounds_ring(void) {
    static const int ps[] = { 3, 6, 12, 24, 48, 96, 192, 9, 18, 36, 72, 144 };
    int i;
    for (i = 0; i < (int)(sizeof ps / sizeof ps[0]); ++i) {
        rc_spec s = te_spec(REDCOLL_ALGO_FACTOR_RING, ps[i], 10, REDCOLL_THRESHOLD_HALVE_NONE);
        rc_outcome o;
        if (tf_measure(&s, &o))
            CHECK(o.rep.rounds == tf_ceil_lg(ps[i]), "%s: %ld rounds, want %d", tf_describe(&s),
                  o.rep.rounds, tf_ceil_lg(ps[i]));
        rc_outcome_free(&o);
    }
    {
        rc_spec s = te_spec(REDCOLL_ALGO_ELIMINATION, 12, 10, REDCOLL_THRESHOLD_HALVE_NONE);
        rc_outcome o;
        if (tf_measure(&s, &o)) CHECK(o.rep.rounds == 5, "p=12 elimination: %ld rounds", o.rep.rounds);
        rc_outcome_free(&o);
    }
}

/* Section 3.3: with b = 0, 2 ceil(lg p) rounds and a modeled time of at most
   2 ceil(lg p) alpha + 2m(1.5 - 1/p') beta + m(1.5 - 1/p') gamma, exactly
   that for odd p; scratch at most one vector. Both protocols. */
static void test_te_bandwidth_bound(void) {
    static const int ps[] = { 3, 5, 6, 7, 9, 11, 12, 13, 15, 17, 23, 24, 31, 33, 40, 63, 96, 100, 127, 129 };
    int i, a, r;
    for (i = 0; i < (int)(sizeof ps / sizeof ps[0]); ++i)
        for (a = 1; a < 3; ++a) {
            int p = ps[i], lg = tf_ceil_lg(p);
            size_t n = 1048576;
            double m = 8.0 * (double)n, pp = te_pof2_floor(p), bound;
            rc_spec s = te_spec(te_algos[a], p, n, REDCOLL_THRESHOLD_HALVE_ALL);
            rc_outcome o;
            const redcoll_cost_model *mo;
            s.use_model = 1;
            s.sim.model.alpha = 1e-6; s.sim.model.beta = 1e-9; s.sim.model.gamma = 1e-10;
            s.sim.model.f_alpha = s.sim.model.f_beta = 1;
            mo = &s.sim.model;
            bound = 2 * lg * mo->alpha + 2 * m * (1.5 - 1 / pp) * mo->beta + m * (1.5 - 1 / pp) * mo->gamma;
            if (tf_measure(&s, &o)) {
                CHECK(o.rep.time <= bound * (1 + 1e-9), "%s: time %.9g above %.9g", tf_describe(&s), o.rep.time, bound);
                if (p % 2) CHECK(tf_close(o.rep.time, bound), "%s: time %.9g, formula %.9g", tf_describe(&s), o.rep.time, bound);
                CHECK(o.rep.rounds == 2 * lg, "%s: %ld rounds, want %d", tf_describe(&s), o.rep.rounds, 2 * lg);
                for (r = 0; r < p; ++r)
                    CHECK(o.rep.stats[r].scratch_bytes <= 8 * n, "%s rank %d: scratch %llu", tf_describe(&s), r,
                          o.rep.stats[r].scratch_bytes);
            }
            rc_outcome_free(&o);
        }
}

/* Section 4: at p = 24 and 40, large m, elimination takes at most 0.6 of
   halving-doubling's time (the paper: up to 47% less). Until halving_doubling
   lands, the baseline is the butterfly with fold-in (the same schedule). */
static double te_time(redcoll_algo algo, int p) {
    rc_spec s = te_spec(algo, p, 1048576, 0);
    rc_outcome o;
    double t = -1;
    s.use_model = 1;
    s.sim.model.alpha = 0; s.sim.model.beta = 1e-9; s.sim.model.gamma = 1e-10;
    s.sim.model.f_alpha = s.sim.model.f_beta = 1;
    if (tf_measure(&s, &o)) t = o.rep.time;
    rc_outcome_free(&o);
    return t;
}

static void test_te_vs_halving_doubling(void) {
    static const int ps[] = { 24, 40 };
    redcoll_algo base = redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HALVING_DOUBLING)
                            ? REDCOLL_ALGO_HALVING_DOUBLING : REDCOLL_ALGO_BUTTERFLY;
    int i, a;
    for (i = 0; i < 2; ++i) {
        double tb = te_time(base, ps[i]);
        for (a = 1; a < 4; ++a) {
            double t = te_time(te_algos[a], ps[i]);
            CHECK(t > 0 && tb > 0 && t <= 0.6 * tb, "p=%d %s: %.6g vs %s %.6g (ratio %.3f)", ps[i],
                  redcoll_algo_name(te_algos[a]), t, redcoll_algo_name(base), tb, tb > 0 ? t / tb : 0.0);
            if (tf_verbose)
                printf("    p=%d %s %.6g s, %s %.6g s, ratio %.3f\n", ps[i], redcoll_algo_name(te_algos[a]),
                       t, redcoll_algo_name(base), tb, t / tb);
        }
    }
}

/* Reduce: the same reduction phase, a gather instead of the allgather; never
   slower than the allreduce, and the root's path sends each block once. */
static void test_te_reduce_cost(void) {
    static const int ps[] = { 5, 12, 13, 24, 40, 63 };
    int i, a;
    for (i = 0; i < 6; ++i)
        for (a = 0; a < 4; ++a) {
            rc_spec s = te_spec(te_algos[a], ps[i], 100000, REDCOLL_THRESHOLD_HALVE_ALL);
            rc_outcome o1, o2;
            if (tf_measure(&s, &o1)) {
                s.coll = REDCOLL_COLL_REDUCE;
                s.root = ps[i] / 2;
                if (tf_measure(&s, &o2)) {
                    CHECK(o2.rep.time <= o1.rep.time, "%s: reduce %.6g slower than allreduce %.6g",
                          tf_describe(&s), o2.rep.time, o1.rep.time);
                    CHECK(o2.rep.stats[s.root].bytes_recv <= o1.rep.stats[s.root].bytes_recv,
                          "%s: root receives more than in allreduce", tf_describe(&s));
                }
                rc_outcome_free(&o2);
            }
            rc_outcome_free(&o1);
        }
}

/* ---- Table 1 ------------------------------------------------------------- */

/* Runs a given plan on every rank (no data): the paper's four protocols are
   plans with one ring over all p, or elimination, with b = 0 or infinity. */
typedef struct te_plan_arg {
    redcoll__rt_plan pl;
    int              use_plan;
    size_t           count;
    redcoll_options  opts;
    char            *buf;
} te_plan_arg;

static redcoll_result te_plan_rank(const redcoll_transport *t, void *arg) {
    te_plan_arg *x = (te_plan_arg *)arg;
    redcoll_op op = REDCOLL_SUM;
    redcoll__desc d = redcoll__describe(REDCOLL_COLL_ALLREDUCE, t, x->buf, x->buf, x->count, NULL,
                                        REDCOLL_UINT8, &op, 0, &x->opts);
    redcoll__call call;
    redcoll_result r = redcoll__setup(&call, &d);
    if (r) return r;
    return x->use_plan ? redcoll__rt_execute(&call.c, &call.a, 0, &x->pl) : redcoll__execute(&call);
}

/* Modeled time in units of alpha of one Table 1 cell: protocol 0 ring
   latency-optimal, 1 elimination latency-optimal, 2 ring bandwidth-optimal,
   3 elimination bandwidth-optimal, 4 redcoll's own choice (factor_ring, b
   from the cost model). */
static double te_table_cell(int p, double bm, double gm, int proto, long *rounds) {
    te_plan_arg x;
    redcoll_mock_config cfg = redcoll_mock_defaults(p);
    redcoll_mock_report rep;
    double t = -1;
    memset(&x, 0, sizeof x);
    x.count = 3013920; /* 2^5 3^2 5 7 13 23: every split is even */
    cfg.no_data = 1;
    cfg.model.alpha = 1;
    cfg.model.beta = bm / (double)x.count; /* one-byte elements: scratch stays small */
    cfg.model.gamma = gm / (double)x.count;
    cfg.model.f_alpha = cfg.model.f_beta = 1;
    x.opts.model = cfg.model;
    x.opts.algo = proto == 4 ? REDCOLL_ALGO_FACTOR_RING : REDCOLL_ALGO_ELIMINATION;
    x.use_plan = proto != 4;
    if (proto == 0 || proto == 2) { x.pl.nf = 1; x.pl.f[0] = p; x.pl.E = 1; x.pl.levels = 1; }
    else { x.pl.E = p; x.pl.overlap = 1; x.pl.levels = tf_ceil_lg(p) - 1; }
    x.pl.halve = proto >= 2 ? x.pl.levels : 0;
    x.buf = (char *)calloc(x.count, 1);
    if (x.buf && redcoll_mock_run(&cfg, te_plan_rank, &x, &rep) == REDCOLL_OK) {
        if (redcoll_mock_first_error(&rep) == REDCOLL_OK) { t = rep.time; *rounds = rep.rounds; }
        redcoll_mock_report_free(&rep);
    }
    free(x.buf);
    return t;
}

/* The paper's Table 1 (totals), rows p x size, columns ring-lat, elim-lat,
   ring-bw, elim-bw. */
typedef struct te_row { int p; char size; double paper[4]; } te_row;
static const te_row te_table1[] = {
    { 3, 'S', { 2.22, 3.32, 4.14, 4.21 } },  { 3, 'M', { 4.20, 6.20, 5.40, 6.10 } },
    { 3, 'L', { 24.0, 35.0, 18.0, 25.0 } },  { 5, 'S', { 3.44, 4.43, 7.17, 6.26 } },
    { 5, 'M', { 7.40, 8.30, 8.68, 8.63 } },  { 5, 'L', { 47.0, 47.0, 23.8, 32.3 } },
    { 7, 'S', { 3.66, 4.43, 9.18, 6.26 } },  { 7, 'M', { 9.60, 8.30, 10.8, 8.63 } },
    { 7, 'L', { 69.0, 47.0, 27.0, 32.3 } },  { 13, 'S', { 5.32, 5.54, 16.2, 8.29 } },
    { 13, 'M', { 17.2, 10.4, 18.0, 10.9 } }, { 13, 'L', { 136., 59.0, 35.4, 36.9 } },
    { 15, 'S', { 5.54, 5.54, 18.2, 8.29 } }, { 15, 'M', { 19.4, 10.4, 20.0, 10.9 } },
    { 15, 'L', { 158., 59.0, 37.6, 36.9 } }, { 23, 'S', { 7.42, 6.65, 27.2, 10.3 } },
    { 23, 'M', { 29.2, 12.5, 29.0, 13.0 } }, { 23, 'L', { 247., 71.0, 47.1, 40.2 } },
    { 23, 'X', { 2425, 656., 228., 312. } }, { 63, 'S', { 12.8, 7.66, 68.2, 12.3 } },
    { 63, 'M', { 74.2, 13.6, 70.1, 15.1 } }, { 63, 'L', { 688., 73.0, 88.7, 42.9 } },
    { 63, 'X', { 6826, 667., 275., 321. } },
};

/* What factor_ring chooses for a Table 1 cell, e.g. "ring 3, ring 5, h 1/2"
   (h: levels that halve, of all levels). */
static const char *te_plan_name(int p, double bm) {
    static char buf[128];
    redcoll__ctx c;
    redcoll__rt_plan pl;
    redcoll_options o;
    int i, len = 0;
    memset(&c, 0, sizeof c);
    memset(&o, 0, sizeof o);
    o.model.alpha = 1;
    o.model.beta = bm / 3013920.0;
    o.model.gamma = bm / 10 / 3013920.0;
    c.size = p; c.esize = 1;
    c.o = redcoll_options_resolved(&o);
    redcoll__rt_make_plan(&pl, &c, 3013920, REDCOLL__VARIANT_FACTORS);
    buf[0] = 0;
    for (i = 0; i < pl.nf; ++i) len += snprintf(buf + len, sizeof buf - (size_t)len, "ring %d, ", pl.f[i]);
    if (pl.E > 1) len += snprintf(buf + len, sizeof buf - (size_t)len, "elim %d, ", pl.E);
    snprintf(buf + len, sizeof buf - (size_t)len, "h %d/%d", pl.halve, pl.levels);
    return buf;
}

/* Section 3.5's formulas (p' = 2^floor(lg p), as the table's numbers use). */
static double te_formula(int p, double bm, double gm, int proto) {
    double lg = tf_ceil_lg(p), pp = te_pof2_floor(p);
    switch (proto) {
    case 0: return lg + bm * (p - 1) + gm * (p - 1);
    case 1: return lg + 1 + bm * (lg + 1) + gm * lg;
    case 2: return lg + p - 1 + 2 * bm * (1 - 1.0 / p) + gm * (1 - 1.0 / p);
    default: return 2 * lg + 2 * bm * (1.5 - 1 / pp) + gm * (1.5 - 1 / pp);
    }
}

/* Cells where the paper's printed number is not its own formula (explained
   in docs/table1.md): p = 13 M ring bw-opt (16 + 1.85 + 0.09 printed as
   18.0) and p = 63 elimination lat-opt (beta term 6 m instead of 7 m). */
static int te_paper_slip(int p, char size, int proto) {
    return (p == 13 && size == 'M' && proto == 2) || (p == 63 && proto == 1);
}

/* The paper sums terms rounded to 3 digits: agree within 0.25%. */
static int te_agrees(double ours, double paper) { return fabs(ours - paper) <= 0.0025 * paper + 0.005; }

static void test_te_table1(void) {
    int i, k;
    if (tf_verbose)
        printf("\n| p | m | ring, lat-opt | elim., lat-opt | ring, bw-opt | elim., bw-opt | factor_ring, b from the model: its plan |\n"
               "|---|---|---|---|---|---|---|\n");
    for (i = 0; i < (int)(sizeof te_table1 / sizeof te_table1[0]); ++i) {
        const te_row *row = &te_table1[i];
        double bm = row->size == 'S' ? 0.1 : row->size == 'M' ? 1 : row->size == 'L' ? 10 : 100;
        double ours[5];
        long rounds[5];
        int best = 0;
        for (k = 0; k < 5; ++k) {
            ours[k] = te_table_cell(row->p, bm, bm / 10, k, &rounds[k]);
            CHECK(ours[k] > 0, "p=%d %c protocol %d did not run", row->p, row->size, k);
            if (k < 4 && ours[k] < ours[best]) best = k;
        }
        for (k = 0; k < 4; ++k) {
            double f = te_formula(row->p, bm, bm / 10, k);
            CHECK(fabs(ours[k] - f) <= 1e-9 * f, "p=%d %c protocol %d: ours %.6g, formula %.6g",
                  row->p, row->size, k, ours[k], f);
            CHECK(te_agrees(ours[k], row->paper[k]) != te_paper_slip(row->p, row->size, k),
                  "p=%d %c protocol %d: ours %.4g, paper %.4g", row->p, row->size, k, ours[k],
                  row->paper[k]);
        }
        CHECK(ours[4] <= ours[best] * (1 + 1e-9), "p=%d %c: factor_ring %.4g slower than %.4g",
              row->p, row->size, ours[4], ours[best]);
        if (tf_verbose) {
            printf("| %d | %s |", row->p, row->size == 'X' ? "XL" : row->size == 'S' ? "S" : row->size == 'M' ? "M" : "L");
            for (k = 0; k < 4; ++k)
                printf(" %s%.4g%s (%.4g%s) |", k == best ? "**" : "", ours[k], k == best ? "**" : "",
                       row->paper[k], te_paper_slip(row->p, row->size, k) ? "!" : "");
            printf(" %.4g %s |\n", ours[4], te_plan_name(row->p, bm));
        }
    }
}

static void suite_elimination(void) {
    tf_test("elimination/sweep allreduce", test_te_sweep_allreduce);
    tf_test("elimination/sweep reduce", test_te_sweep_reduce);
    tf_test("elimination/b = 0 and mixed thresholds", test_te_thresholds);
    tf_test("elimination/reduce b = 0, every root", test_te_roots);
    tf_test("elimination/rounds m <= b: ceil(lg p)+1", test_te_rounds_latency);
    tf_test("elimination/rounds with rings: ceil(lg p)", test_te_rounds_ring);
    tf_test("elimination/time bound for large m", test_te_bandwidth_bound);
    tf_test("elimination/vs halving_doubling p=24,40", test_te_vs_halving_doubling);
    tf_test("elimination/reduce costs", test_te_reduce_cost);
    tf_test("elimination/table1", test_te_table1);
}
