/* test_plans.c - persistent plans, the scratch arena and receive-and-reduce
   (issue 10): every (collective, algorithm) row planned once and run many
   times with new data on the simulator, allocating nothing per run; one-shot
   calls served from a transport's scratch block; the fused receive-reduce
   entries and the library's chunked fallback giving the same results and
   the same accounting. */

/* ---- a transport wrapper: forwards to the simulator, and can add a
   receive-and-reduce built on its recv / sendrecv (so the library's fused
   path runs on the simulator), or a persistent scratch block ---- */

typedef struct tp_wrap {
    redcoll_transport        t;
    const redcoll_transport *in;
    void                    *block;  /* the scratch entry's block */
    size_t                   bytes;
    long                     scratch_calls;
    char                    *stage;  /* fused emulation: the message lands here first */
    size_t                   stage_bytes;
} tp_wrap;

static redcoll_result tp_w_send(void *u, int dst, const void *b, size_t n, int tag) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->send(w->in->user, dst, b, n, tag);
}
static redcoll_result tp_w_recv(void *u, int src, void *b, size_t n, int tag) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->recv(w->in->user, src, b, n, tag);
}
static redcoll_result tp_w_sendrecv(void *u, int dst, const void *sb, size_t sn, int src,
                                    void *rb, size_t rn, int tag) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->sendrecv(w->in->user, dst, sb, sn, src, rb, rn, tag);
}
static void tp_w_abort(void *u, redcoll_result why) {
    tp_wrap *w = (tp_wrap *)u;
    w->in->abort(w->in->user, why);
}
static redcoll_result tp_w_isend(void *u, int dst, const void *b, size_t n, int tag,
                                 redcoll_request *q) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->isend(w->in->user, dst, b, n, tag, q);
}
static redcoll_result tp_w_irecv(void *u, int src, void *b, size_t n, int tag, redcoll_request *q) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->irecv(w->in->user, src, b, n, tag, q);
}
static redcoll_result tp_w_waitall(void *u, int n, redcoll_request *q) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->waitall(w->in->user, n, q);
}
static int tp_w_node_of(void *u, int rank) {
    tp_wrap *w = (tp_wrap *)u;
    return w->in->node_of(w->in->user, rank);
}
static void tp_w_on_compute(void *u, size_t e, size_t b) {
    tp_wrap *w = (tp_wrap *)u;
    w->in->on_compute(w->in->user, e, b);
}
static void tp_w_on_scratch(void *u, long long d) {
    tp_wrap *w = (tp_wrap *)u;
    w->in->on_scratch(w->in->user, d);
}
static void *tp_w_scratch(void *u, size_t bytes) {
    tp_wrap *w = (tp_wrap *)u;
    w->scratch_calls++;
    if (bytes > w->bytes) {
        free(w->block);
        w->block = malloc(bytes);
        w->bytes = w->block ? bytes : 0;
    }
    return w->block;
}
/* Hands the staged message to the consumer in uneven pieces (3 units, then
   doubling), so consumers see piece boundaries everywhere. */
static void tp_w_deliver(tp_wrap *w, size_t bytes, const redcoll_consumer *into) {
    size_t off = 0, piece = 3 * into->unit;
    if (w->t.flags & REDCOLL_TRANSPORT_NO_DATA) return;
    while (off < bytes) {
        size_t len = bytes - off < piece ? bytes - off : piece;
        into->fn(into->arg, w->stage + off, off, len);
        off += len;
        piece *= 2;
    }
}
static int tp_w_stage(tp_wrap *w, size_t bytes) {
    if (bytes <= w->stage_bytes) return 1;
    free(w->stage);
    w->stage = (char *)malloc(bytes);
    w->stage_bytes = w->stage ? bytes : 0;
    return w->stage != NULL;
}
static redcoll_result tp_w_recv_reduce(void *u, int src, size_t bytes, int tag,
                                       const redcoll_consumer *into) {
    tp_wrap *w = (tp_wrap *)u;
    redcoll_result r;
    if (!tp_w_stage(w, bytes)) return REDCOLL_ERR_TRANSPORT;
    r = w->in->recv(w->in->user, src, w->stage, bytes, tag);
    if (r == REDCOLL_OK) tp_w_deliver(w, bytes, into);
    return r;
}
static redcoll_result tp_w_sendrecv_reduce(void *u, int dst, const void *sb, size_t sn, int src,
                                           size_t rn, int tag, const redcoll_consumer *into) {
    tp_wrap *w = (tp_wrap *)u;
    redcoll_result r;
    if (!tp_w_stage(w, rn)) return REDCOLL_ERR_TRANSPORT;
    r = w->in->sendrecv(w->in->user, dst, sb, sn, src, w->stage, rn, tag);
    if (r == REDCOLL_OK) tp_w_deliver(w, rn, into);
    return r;
}

#define TP_FUSED   1  /* add recv_reduce / sendrecv_reduce */
#define TP_SCRATCH 2  /* add a scratch entry */

static void tp_wrap_make(tp_wrap *w, const redcoll_transport *in, int how) {
    memset(w, 0, sizeof *w);
    w->in = in;
    w->t = *in;
    w->t.user = w;
    w->t.send = tp_w_send; w->t.recv = tp_w_recv; w->t.sendrecv = tp_w_sendrecv;
    w->t.abort = in->abort ? tp_w_abort : NULL;
    w->t.isend = in->isend ? tp_w_isend : NULL;
    w->t.irecv = in->irecv ? tp_w_irecv : NULL;
    w->t.waitall = in->waitall ? tp_w_waitall : NULL;
    w->t.node_of = in->node_of ? tp_w_node_of : NULL;
    w->t.on_compute = in->on_compute ? tp_w_on_compute : NULL;
    w->t.on_scratch = in->on_scratch ? tp_w_on_scratch : NULL;
    w->t.recv_reduce = (how & TP_FUSED) ? tp_w_recv_reduce : NULL;
    w->t.sendrecv_reduce = (how & TP_FUSED) ? tp_w_sendrecv_reduce : NULL;
    w->t.scratch = (how & TP_SCRATCH) ? tp_w_scratch : NULL;
    w->t.test = NULL; w->t.irecv_reduce = NULL; w->t.nb = NULL; /* blocking calls only */
}

static void tp_wrap_drop(tp_wrap *w) { free(w->block); free(w->stage); }

/* ---- a plan made and run on every rank ---- */

static redcoll_result tp_init(const redcoll_transport *t, const rc_state *st,
                              const redcoll_options *o, redcoll_plan **pl) {
    const rc_spec *s = st->spec;
    int r = t->rank, root = r == s->root;
    const void *sb = st->sbuf[r];
    void *rb = st->rbuf[r];
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE:
        return redcoll_allreduce_init(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count,
                                      st->dtype, st->op, o, pl);
    case REDCOLL_COLL_REDUCE:
        return redcoll_reduce_init(t, s->in_place && root ? REDCOLL_IN_PLACE : sb, rb, s->count,
                                   st->dtype, st->op, s->root, o, pl);
    case REDCOLL_COLL_BCAST:
        return redcoll_bcast_init(t, rb, s->count, st->dtype, s->root, o, pl);
    case REDCOLL_COLL_GATHER:
        return redcoll_gather_init(t, s->in_place && root ? REDCOLL_IN_PLACE : sb, rb, s->count,
                                   st->dtype, s->root, o, pl);
    case REDCOLL_COLL_SCATTER:
        return redcoll_scatter_init(t, sb, s->in_place && root ? REDCOLL_IN_PLACE : rb, s->count,
                                    st->dtype, s->root, o, pl);
    case REDCOLL_COLL_BARRIER:
        return redcoll_barrier_init(t, o, pl);
    case REDCOLL_COLL_ALLGATHER:
        return redcoll_allgather_init(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count,
                                      st->dtype, o, pl);
    case REDCOLL_COLL_ALLGATHERV:
        return redcoll_allgatherv_init(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, st->counts,
                                       st->dtype, o, pl);
    case REDCOLL_COLL_ALLTOALL:
        return redcoll_alltoall_init(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count,
                                     st->dtype, o, pl);
    case REDCOLL_COLL_REDUCE_SCATTER:
        return redcoll_reduce_scatter_init(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, st->counts,
                                           st->dtype, st->op, o, pl);
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return redcoll_reduce_scatter_block_init(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb,
                                                 s->count, st->dtype, st->op, o, pl);
    default:
        return REDCOLL_ERR_UNSUPPORTED;
    }
}

#define TP_RUNS 3

typedef struct tp_case {
    rc_state *st;
    tf_count *count;        /* per rank */
    long     *run_allocs;   /* per rank: allocations during redcoll_plan_run */
    long     *once_allocs;  /* per rank: allocations during the one-shot call */
    int      *differs;      /* per rank: plan result != one-shot result */
    int      *algo_wrong;   /* per rank: redcoll_plan_algo differs from the forced one */
    int       how;          /* TP_FUSED / TP_SCRATCH for the wrapper; -1: no wrapper */
} tp_case;

/* Makes the plan, runs it on other data first, then TP_RUNS times on the
   harness's data (restored before each run, so in-place forms start over),
   leaves the last result for the harness to verify, and checks that a
   one-shot call on the same data gives the same bytes. */
static redcoll_result tp_rank(const redcoll_transport *t0, void *arg) {
    tp_case *c = (tp_case *)arg;
    rc_state *st = c->st;
    const rc_spec *s = st->spec;
    int r = t0->rank, k;
    rc_layout l = rc_layout_of(st, r);
    size_t sbytes = (l.input_in_rbuf ? 0 : l.sn) * st->esize, rbytes = l.rn * st->esize;
    char *s0 = (char *)malloc(sbytes + 1), *r0 = (char *)malloc(rbytes + 1);
    char *res = (char *)malloc(rbytes + 1);
    redcoll_options o = s->opts;
    redcoll_plan *pl = NULL;
    tp_wrap w;
    const redcoll_transport *t = t0;
    redcoll_result e;
    if (c->how >= 0) { tp_wrap_make(&w, t0, c->how); t = &w.t; }
    o.allocator.alloc_fn = tf_count_alloc;
    o.allocator.free_fn = tf_count_free;
    o.allocator.user_data = &c->count[r];
    if (!s0 || !r0 || !res) { e = REDCOLL_ERR_OUT_OF_MEMORY; goto done; }
    if (sbytes) memcpy(s0, st->sbuf[r], sbytes);
    if (rbytes) memcpy(r0, st->rbuf[r], rbytes);
    e = tp_init(t, st, &o, &pl);
    if (e != REDCOLL_OK) goto done;
    if (s->opts.algo != REDCOLL_ALGO_AUTO && redcoll_plan_algo(pl) != s->opts.algo) c->algo_wrong[r] = 1;
    for (k = 0; k <= TP_RUNS && e == REDCOLL_OK; ++k) {
        long before = c->count[r].allocs;
        if (k == 0) { /* other data: a run must not depend on what the buffers held at init */
            if (sbytes) memset(st->sbuf[r], 0x11 + r, sbytes);
            if (rbytes) memset(st->rbuf[r], 0x22 + r, rbytes);
        } else {
            if (sbytes) memcpy(st->sbuf[r], s0, sbytes);
            if (rbytes) memcpy(st->rbuf[r], r0, rbytes);
        }
        e = redcoll_plan_run(pl);
        c->run_allocs[r] += c->count[r].allocs - before;
    }
    if (e != REDCOLL_OK) goto done;
    /* the one-shot call on the same data gives the same bytes */
    if (rbytes) memcpy(res, st->rbuf[r], rbytes);
    if (sbytes) memcpy(st->sbuf[r], s0, sbytes);
    if (rbytes) memcpy(st->rbuf[r], r0, rbytes);
    {   /* with the counting allocator too: through a scratch entry it is never called */
        rc_spec s2 = *s;
        rc_state st2 = *st;
        long before = c->count[r].allocs;
        s2.opts = o;
        st2.spec = &s2;
        e = rc_rank(t, &st2);
        c->once_allocs[r] += c->count[r].allocs - before;
    }
    if (e == REDCOLL_OK && rbytes && memcmp(res, st->rbuf[r], rbytes) != 0) c->differs[r] = 1;
done:
    redcoll_plan_free(pl);
    if (c->how >= 0) tp_wrap_drop(&w);
    free(s0); free(r0); free(res);
    return e;
}

/* Runs spec as a plan on every rank (through the wrapper `how`, -1: none)
   and checks everything: OK, the right result (the harness's reference),
   bitwise the one-shot result, no allocation in a run, nothing left. */
static void tp_check(const rc_spec *spec, int how) {
    rc_state st;
    rc_outcome o;
    tp_case c;
    redcoll_mock_config cfg = spec->sim;
    int p = spec->p, r, bad_runs = 0, bad_once = 0, bad_live = 0, differs = 0, algo_wrong = 0;
    redcoll_result e = rc_begin(spec, &st, &o);
    CHECK(e == REDCOLL_OK, "%s: begin: %s", tf_describe(spec), redcoll_result_string(e));
    if (e != REDCOLL_OK) return;
    memset(&c, 0, sizeof c);
    c.st = &st; c.how = how;
    c.count = (tf_count *)calloc((size_t)p, sizeof *c.count);
    c.run_allocs = (long *)calloc((size_t)p, sizeof *c.run_allocs);
    c.once_allocs = (long *)calloc((size_t)p, sizeof *c.once_allocs);
    c.differs = (int *)calloc((size_t)p, sizeof *c.differs);
    c.algo_wrong = (int *)calloc((size_t)p, sizeof *c.algo_wrong);
    cfg.model = redcoll_mock_defaults(p).model;
    cfg.size = p;
    if (c.count && c.run_allocs && c.once_allocs && c.differs && c.algo_wrong)
        e = redcoll_mock_run(&cfg, tp_rank, &c, &o.rep);
    else e = REDCOLL_ERR_OUT_OF_MEMORY;
    if (e == REDCOLL_OK) rc_end(&st, &o); else rc_teardown(&st);
    CHECK(e == REDCOLL_OK && o.ok, "%s (wrapper %d): %s%s%s", tf_describe(spec), how,
          e ? redcoll_result_string(e) : o.why, o.rep.log ? "\n" : "", o.rep.log ? o.rep.log : "");
    for (r = 0; e == REDCOLL_OK && r < p; ++r) {
        bad_runs += c.run_allocs[r] != 0;
        bad_once += c.once_allocs[r] != 0;
        bad_live += c.count[r].live != 0 || c.count[r].allocs != c.count[r].frees;
        differs += c.differs[r];
        algo_wrong += c.algo_wrong[r];
    }
    CHECK(bad_runs == 0, "%s: %d ranks allocated during redcoll_plan_run", tf_describe(spec), bad_runs);
    if (how >= 0 && (how & TP_SCRATCH))
        CHECK(bad_once == 0, "%s: %d ranks allocated in a one-shot call with a scratch entry",
              tf_describe(spec), bad_once);
    CHECK(bad_live == 0, "%s: %d ranks did not give back all memory", tf_describe(spec), bad_live);
    CHECK(differs == 0, "%s: %d ranks: plan and one-shot results differ", tf_describe(spec), differs);
    CHECK(algo_wrong == 0, "%s: redcoll_plan_algo is not the forced algorithm", tf_describe(spec));
    if (e == REDCOLL_OK) rc_outcome_free(&o);
    free(c.count); free(c.run_allocs); free(c.once_allocs); free(c.differs); free(c.algo_wrong);
}

/* Every row of the algorithm list, planned, over a p sweep. */
static void test_plans_every_row(void) {
    static const int ps[] = { 1, 2, 3, 4, 5, 7, 8, 12, 13, 17 };
    const redcoll_algo_info *e;
    int i, pi, k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < (int)(sizeof ps / sizeof ps[0]); ++pi) {
            int p = ps[pi];
            size_t counts[4];
            counts[0] = 0; counts[1] = 1; counts[2] = (size_t)p + 3; counts[3] = 301;
            for (k = 0; k < 4; ++k) {
                rc_spec s = rc_spec_make(e->coll, e->algo, p, counts[k]);
                s.in_place = tf_has_in_place(e->coll) && k % 2 == 0;
                s.root = rc_rooted(e->coll) ? (k * 5 + 1) % p : 0;
                if (rc_reduces(e->coll) && e->keeps_order && k == 2) s.op = "matmul";
                tp_check(&s, -1);
            }
        }
}

/* AUTO resolved at plan time; the plan reports what it runs and holds. */
static void test_plans_queries(void) {
    rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_AUTO, 6, 100000);
    redcoll_plan *pl = (redcoll_plan *)&s; /* not NULL: a failed init must clear it */
    tp_check(&s, -1);
    CHECK(redcoll_plan_algo(NULL) == REDCOLL_ALGO_AUTO && redcoll_plan_scratch_bytes(NULL) == 0,
          "NULL plan queries");
    CHECK(redcoll_plan_run(NULL) == REDCOLL_ERR_INVALID_ARG, "running NULL");
    redcoll_plan_free(NULL);
    CHECK(redcoll_allreduce_init(NULL, NULL, NULL, 1, REDCOLL_INT32, REDCOLL_SUM, NULL, &pl) ==
          REDCOLL_ERR_INVALID_ARG && pl == NULL, "a bad argument makes no plan and clears *out");
    CHECK(redcoll_barrier_init(NULL, NULL, NULL) == REDCOLL_ERR_INVALID_ARG, "out NULL");
}

/* The plan's scratch on one rank is what the schedule holds at its peak,
   as the simulator counts it (the arena rounds each block to 64 bytes). */
typedef struct tp_size_case { size_t *bytes; redcoll_algo *algo; size_t n; } tp_size_case;

static redcoll_result tp_size_rank(const redcoll_transport *t, void *arg) {
    tp_size_case *c = (tp_size_case *)arg;
    double *buf = (double *)calloc(c->n, sizeof *buf);
    redcoll_plan *pl = NULL;
    redcoll_options o;
    redcoll_result e;
    memset(&o, 0, sizeof o);
    o.algo = REDCOLL_ALGO_RING;
    e = buf ? redcoll_allreduce_init(t, REDCOLL_IN_PLACE, buf, c->n, REDCOLL_DOUBLE, REDCOLL_SUM, &o, &pl)
            : REDCOLL_ERR_OUT_OF_MEMORY;
    if (e == REDCOLL_OK) {
        c->bytes[t->rank] = redcoll_plan_scratch_bytes(pl);
        c->algo[t->rank] = redcoll_plan_algo(pl);
        e = redcoll_plan_run(pl);
    }
    redcoll_plan_free(pl);
    free(buf);
    return e;
}

static void test_plans_scratch_size(void) {
    redcoll_mock_config cfg = redcoll_mock_defaults(5);
    redcoll_mock_report rep;
    size_t bytes[5];
    redcoll_algo algo[5];
    tp_size_case c;
    int r;
    c.bytes = bytes; c.algo = algo; c.n = 10000;
    CHECK(redcoll_mock_run(&cfg, tp_size_rank, &c, &rep) == REDCOLL_OK, "run");
    CHECK(redcoll_mock_first_error(&rep) == REDCOLL_OK, "ring plan runs");
    for (r = 0; r < 5; ++r) {
        size_t peak = (size_t)rep.stats[r].scratch_bytes;
        CHECK(algo[r] == REDCOLL_ALGO_RING, "rank %d: algo %s", r, redcoll_algo_name(algo[r]));
        CHECK(bytes[r] >= peak && bytes[r] <= peak + 64 * 4,
              "rank %d: plan holds %zu bytes, the schedule peaks at %zu", r, bytes[r], peak);
    }
    redcoll_mock_report_free(&rep);
}

/* One-shot calls through a transport with a scratch entry: the scratch is
   the transport's block (or, for vectors up to 256 bytes, a block on the
   stack), and the allocator is not called at all (every row, so every
   allocation path goes through it). */
static void test_oneshot_transport_scratch(void) {
    static const int ps[] = { 2, 5, 8 };
    static const size_t counts[] = { 3, 77, 1000 };
    const redcoll_algo_info *e;
    int i, pi, k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        for (pi = 0; pi < 3; ++pi)
            for (k = 0; k < 3; ++k) {
                rc_spec s = rc_spec_make(e->coll, e->algo, ps[pi], counts[k]);
                s.root = ps[pi] - 1;
                tp_check(&s, TP_SCRATCH);
            }
}

/* ---- receive-and-reduce: the fused entries against the staged fallback ---- */

typedef struct tp_fused_case { rc_state *st; int how; } tp_fused_case;

static redcoll_result tp_fused_rank(const redcoll_transport *t, void *arg) {
    tp_fused_case *c = (tp_fused_case *)arg;
    tp_wrap w;
    redcoll_result e;
    tp_wrap_make(&w, t, c->how);
    e = rc_rank(&w.t, c->st);
    tp_wrap_drop(&w);
    return e;
}

/* rc_run through the wrapper `how`. */
static redcoll_result tp_run_wrapped(const rc_spec *spec, int how, rc_outcome *o) {
    rc_state st;
    tp_fused_case c;
    redcoll_mock_config cfg = spec->sim;
    redcoll_result e = rc_begin(spec, &st, o);
    if (e != REDCOLL_OK) return e;
    c.st = &st; c.how = how;
    cfg.model = redcoll_mock_defaults(spec->p).model;
    cfg.size = spec->p;
    e = redcoll_mock_run(&cfg, tp_fused_rank, &c, &o->rep);
    if (e == REDCOLL_OK) rc_end(&st, o); else rc_teardown(&st);
    return e;
}

/* Same messages, bytes, rounds, reductions, scratch and modeled time. */
static int tp_same_stats(const redcoll_mock_stats *a, const redcoll_mock_stats *b) {
    return a->msgs_sent == b->msgs_sent && a->msgs_recv == b->msgs_recv &&
           a->bytes_sent == b->bytes_sent && a->bytes_recv == b->bytes_recv &&
           a->elems_reduced == b->elems_reduced && a->scratch_bytes == b->scratch_bytes &&
           a->rounds == b->rounds && a->time == b->time;
}

/* Every reducing row, with the transport's receive-and-reduce (pieces of 3,
   6, 12, ... elements, so every boundary is crossed) and without it (the
   simulator alone): right results, and the simulator counts the same. */
static void test_fused_vs_staged(void) {
    static const int ps[] = { 2, 3, 4, 5, 8, 11 };
    static const char *const ops[] = { "sum", "matmul", "user_sum", "max" };
    const redcoll_algo_info *e;
    int i, pi, k;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
        if (!rc_reduces(e->coll)) continue;
        for (pi = 0; pi < (int)(sizeof ps / sizeof ps[0]); ++pi)
            for (k = 0; k < 4; ++k) {
                rc_spec s = rc_spec_make(e->coll, e->algo, ps[pi], k == 3 ? 1001 : (size_t)(37 + 13 * pi));
                rc_outcome f, g;
                redcoll_result ef, eg;
                int r, same = 1;
                if (k == 1 && !e->keeps_order) continue;
                s.op = ops[k];
                if (k == 3) s.dtype = REDCOLL_DOUBLE;
                s.in_place = (pi + k) % 2;
                s.root = ps[pi] / 2;
                ef = tp_run_wrapped(&s, TP_FUSED, &f);
                eg = rc_run(&s, &g);
                CHECK(ef == REDCOLL_OK && f.ok, "%s fused: %s", tf_describe(&s),
                      ef ? redcoll_result_string(ef) : f.why);
                CHECK(eg == REDCOLL_OK && g.ok, "%s staged: %s", tf_describe(&s),
                      eg ? redcoll_result_string(eg) : g.why);
                for (r = 0; ef == REDCOLL_OK && eg == REDCOLL_OK && r < ps[pi]; ++r)
                    same &= tp_same_stats(&f.rep.stats[r], &g.rep.stats[r]);
                CHECK(same, "%s: fused and staged runs count differently", tf_describe(&s));
                if (ef == REDCOLL_OK) rc_outcome_free(&f);
                if (eg == REDCOLL_OK) rc_outcome_free(&g);
            }
    }
}

/* tp_check of every reducing row at p = 2, 5, 8 through the wrapper `how`,
   with opts.chunk_bytes (0: the default). */
static void tp_check_reducing_rows(int how, size_t chunk_bytes) {
    static const int ps[] = { 2, 5, 8 };
    const redcoll_algo_info *e;
    int i, pi;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
        if (!rc_reduces(e->coll)) continue;
        for (pi = 0; pi < 3; ++pi) {
            rc_spec s = rc_spec_make(e->coll, e->algo, ps[pi], 53);
            s.root = ps[pi] - 1;
            s.in_place = pi == 1;
            s.opts.chunk_bytes = chunk_bytes;
            tp_check(&s, how);
        }
    }
}

/* Plans through the fused entries too: still no allocation per run. */
static void test_plans_fused(void) { tp_check_reducing_rows(TP_FUSED, 0); }

/* Exact sums planned: every algorithm of the four collectives (a small,
   direct vector and one with measured ranges), and with AUTO a vector of
   several rounds; runs allocate nothing (their inner collectives run on the
   plan's block), also one-shot through a scratch entry, results bitwise the
   one-shot's and the exact reference's. */
static void test_plans_exact(void) {
    static const redcoll_coll colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
                                           REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_COLL_REDUCE_SCATTER_BLOCK };
    static const int ps[] = { 2, 5, 8 };
    int c, a, pi, k;
    for (c = 0; c < 4; ++c)
        for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
            if (!redcoll_algo_supported(colls[c], (redcoll_algo)a) ||
                (colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK &&
                 !redcoll_algo_supported(REDCOLL_COLL_REDUCE_SCATTER, (redcoll_algo)a)))
                continue;
            for (pi = 0; pi < 3; ++pi)
                for (k = 0; k < (a == REDCOLL_ALGO_AUTO ? 3 : 2); ++k) {
                    static const size_t counts[3] = { 7, 2000, 70001 };
                    int p = ps[pi];
                    rc_spec s = rc_spec_make(colls[c], (redcoll_algo)a, p, counts[k]);
                    if (k == 2 && pi != 1) continue;
                    s.op = "sum_exact";
                    s.dtype = (k + pi) % 2 ? REDCOLL_FLOAT : REDCOLL_DOUBLE;
                    if (colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK) s.count = s.count / (size_t)p + 1;
                    s.root = p - 1;
                    s.in_place = pi == 1;
                    tp_check(&s, k % 2 ? TP_SCRATCH : -1);
                }
        }
}

static void suite_plans(void) {
    tf_test("plans: every row, p sweep, runs allocate nothing, = one-shot", test_plans_every_row);
    tf_test("plans: queries and argument errors", test_plans_queries);
    tf_test("plans: scratch is the schedule's peak", test_plans_scratch_size);
    tf_test("plans: one-shot scratch from the transport's block", test_oneshot_transport_scratch);
    tf_test("plans: fused receive-reduce = staged fallback (results, counts)", test_fused_vs_staged);
    tf_test("plans: plans over the fused entries", test_plans_fused);
    tf_test("plans: exact sums, runs allocate nothing", test_plans_exact);
}
