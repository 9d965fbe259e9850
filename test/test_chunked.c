/* test_chunked.c - the chunked receive-and-reduce (issue 10): on a transport
   without recv_reduce / sendrecv_reduce the library cuts every message
   longer than opts.chunk_bytes into chunks on both ends and reduces each
   chunk as it lands. Run on the simulator with its fused entries taken away
   and chunks of a few elements, every reducing row gives the right result,
   bitwise the one of the simulator's own (uncut) run, with the same bytes
   and reductions, more messages, and no more scratch. */

/* The simulator's transport without its receive-and-reduce entries. */
static redcoll_result tc_unfused_rank(const redcoll_transport *t, void *arg) {
    redcoll_transport u = *t;
    u.recv_reduce = NULL;
    u.sendrecv_reduce = NULL;
    return rc_rank(&u, (rc_state *)arg);
}

/* Runs spec uncut and cut (chunk_bytes as spec gives it) and checks both
   right, bitwise equal where a result is defined, same bytes and
   reductions per rank, no fewer messages, no more scratch. Returns the
   messages the cut run sent beyond the uncut one (-1 on failure). */
static long tc_compare(const rc_spec *spec) {
    tf_capture a, b;
    int p = spec->p, r, same = 1, bytes = 1, fewer = 0, scratch = 0;
    long extra = 0;
    redcoll_result ea, eb;
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
    ea = tf_capture_run(spec, rc_rank, &a);
    eb = tf_capture_run(spec, tc_unfused_rank, &b);
    CHECK(ea == REDCOLL_OK && a.o.ok, "%s uncut: %s", tf_describe(spec), ea ? redcoll_result_string(ea) : a.o.why);
    CHECK(eb == REDCOLL_OK && b.o.ok, "%s chunk_bytes=%zu: %s%s%s", tf_describe(spec), spec->opts.chunk_bytes,
          eb ? redcoll_result_string(eb) : b.o.why, eb == REDCOLL_OK && b.o.rep.log ? "\n" : "",
          eb == REDCOLL_OK && b.o.rep.log ? b.o.rep.log : "");
    if (ea != REDCOLL_OK || eb != REDCOLL_OK || !a.o.ok || !b.o.ok) {
        if (ea == REDCOLL_OK) tf_capture_free(&a, p);
        if (eb == REDCOLL_OK) tf_capture_free(&b, p);
        return -1;
    }
    for (r = 0; r < p; ++r) {
        const redcoll_mock_stats *x = &a.o.rep.stats[r], *y = &b.o.rep.stats[r];
        int defined = (spec->coll != REDCOLL_COLL_REDUCE && spec->coll != REDCOLL_COLL_GATHER) || r == spec->root;
        if (defined && (a.bytes[r] != b.bytes[r] || !a.res[r] || !b.res[r] ||
                        memcmp(a.res[r], b.res[r], a.bytes[r]) != 0))
            same = 0;
        bytes &= x->bytes_sent == y->bytes_sent && x->bytes_recv == y->bytes_recv &&
                 x->elems_reduced == y->elems_reduced;
        fewer += y->msgs_sent < x->msgs_sent || y->msgs_recv < x->msgs_recv;
        scratch += y->scratch_bytes > x->scratch_bytes;
        extra += (long)(y->msgs_sent - x->msgs_sent);
    }
    CHECK(same, "%s chunk_bytes=%zu: results differ from the uncut run", tf_describe(spec), spec->opts.chunk_bytes);
    CHECK(bytes, "%s chunk_bytes=%zu: bytes or reductions differ from the uncut run", tf_describe(spec),
          spec->opts.chunk_bytes);
    CHECK(fewer == 0, "%s: %d ranks moved fewer messages cut", tf_describe(spec), fewer);
    CHECK(scratch == 0, "%s: %d ranks held more scratch cut", tf_describe(spec), scratch);
    tf_capture_free(&a, p);
    tf_capture_free(&b, p);
    return extra;
}

/* Every row (the cut applies to every message, so the collectives that do
   not reduce must survive it too: same peers, rendezvous, no deadlock),
   p = 1..33, chunks of 3 elements, counts at and around the chunk
   boundaries (per rank and per block), the non-commutative matrix product
   on the reducing rows that keep order, doubles with max elsewhere, in
   place and not, roots spread. */
static void test_chunked_every_row(void) {
    const redcoll_algo_info *e;
    int i, p, k;
    long cut_somewhere = 0;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
        for (p = 1; p <= 33; ++p) {
            size_t counts[6];
            counts[0] = 0; counts[1] = 2; counts[2] = 3; counts[3] = 4;
            counts[4] = 3 * (size_t)p + 1; counts[5] = 7 * (size_t)p - 1;
            for (k = 0; k < 6; ++k) {
                rc_spec s = rc_spec_make(e->coll, e->algo, p, counts[k]);
                long extra;
                if (p > 12 && k < 4 && k != 2) continue; /* keep the sweep short */
                if (k % 3 == 1 && e->keeps_order && rc_reduces(e->coll)) s.op = "matmul";
                else if (k % 3 == 2) { s.op = "max"; s.dtype = REDCOLL_DOUBLE; }
                s.in_place = (k + p) % 2;
                s.root = (k * 7 + p / 2) % p;
                s.opts.chunk_bytes = 3 * (strcmp(s.op, "matmul") == 0 ? 16 : redcoll_dtype_size(s.dtype));
                extra = tc_compare(&s);
                if (extra > 0) cut_somewhere += extra;
            }
        }
    }
    CHECK(cut_somewhere > 0, "no message was cut anywhere");
}

/* chunk_bytes that is no multiple of the element (floored to whole
   elements), below one element (1 element per message), and the default
   (1 MiB) on vectors that cross it. */
static void test_chunked_sizes(void) {
    static const redcoll_algo algos[] = { REDCOLL_ALGO_RING, REDCOLL_ALGO_RECURSIVE_DOUBLING,
                                          REDCOLL_ALGO_BUTTERFLY };
    int i, p;
    for (i = 0; i < 3; ++i)
        for (p = 2; p <= 5; ++p) {
            rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, algos[i], p, 29);
            s.opts.chunk_bytes = 4 * 4 + 3; /* 4 int32 elements */
            CHECK(tc_compare(&s) > 0, "%s chunk_bytes=19: nothing cut", tf_describe(&s));
            s.opts.chunk_bytes = 1; /* one element per message */
            s.count = 11;
            CHECK(tc_compare(&s) > 0, "%s chunk_bytes=1: nothing cut", tf_describe(&s));
        }
    {   /* the default: 300000 doubles = 2.4 MB, cut into three */
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, 2, 300000);
        s.dtype = REDCOLL_DOUBLE;
        CHECK(tc_compare(&s) == 2 * 2, "%s default chunk: 2 more messages per rank", tf_describe(&s));
        s.opts.chunk_bytes = (size_t)-1; /* never cut */
        CHECK(tc_compare(&s) == 0, "%s chunk_bytes=SIZE_MAX: nothing cut", tf_describe(&s));
    }
}

/* The staging scratch shrinks to a chunk: recursive doubling at p = 4 over
   10000 doubles holds 80000 bytes uncut and one chunk cut. */
static void test_chunked_scratch(void) {
    rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, 4, 10000);
    tf_capture a, b;
    int r;
    s.dtype = REDCOLL_DOUBLE;
    s.opts.chunk_bytes = 4096;
    memset(&a, 0, sizeof a); memset(&b, 0, sizeof b);
    CHECK(tf_capture_run(&s, rc_rank, &a) == REDCOLL_OK && a.o.ok, "uncut run");
    CHECK(tf_capture_run(&s, tc_unfused_rank, &b) == REDCOLL_OK && b.o.ok, "cut run");
    for (r = 0; r < 4 && a.o.rep.stats && b.o.rep.stats; ++r) {
        CHECK(a.o.rep.stats[r].scratch_bytes >= 80000, "rank %d uncut: %llu bytes of scratch", r,
              a.o.rep.stats[r].scratch_bytes);
        CHECK(b.o.rep.stats[r].scratch_bytes <= 4096, "rank %d cut: %llu bytes of scratch", r,
              b.o.rep.stats[r].scratch_bytes);
    }
    tf_capture_free(&a, 4);
    tf_capture_free(&b, 4);
}

/* Plans over the cut path (test_plans.c's wrapper without the fused
   entries): every reducing row, runs allocate nothing, = one-shot. */
static void test_chunked_plans(void) { tp_check_reducing_rows(0, 3 * 4); }

/* ---- no wasted passes: the input is read where it is (issue 10) ----
   A wrapper over the simulator (test_plans.c's tp_wrap, forwarding) looks at
   this rank's rbuf when the schedule first talks to the transport: a
   schedule that reads sbuf in its first step has not written rbuf by then,
   one that copies sbuf to rbuf up front has. */
#define TC_BLOCKS 16
typedef struct tc_touch {
    tp_wrap     w;       /* first: the forwarding entries take the struct as their user */
    const char *rbuf;
    char       *before;  /* rbuf as the call found it */
    size_t      bytes;
    int         seen, touched;
    char       *blk[TC_BLOCKS]; /* the call's live scratch (its allocator, below) */
    size_t      blkn[TC_BLOCKS];
    int         scratch_touched; /* a scratch byte written before the first message */
} tc_touch;

/* The call's allocator: fresh scratch filled with 0xA5, remembered while
   live, so tc_look sees whether the schedule wrote it (a copy of the input
   into scratch) before its first message. */
static void *tc_alloc(size_t bytes, void *user) {
    tc_touch *k = (tc_touch *)user;
    char *p = (char *)malloc(bytes);
    int i;
    if (!p) return NULL;
    memset(p, 0xA5, bytes);
    for (i = 0; i < TC_BLOCKS; ++i)
        if (!k->blk[i]) { k->blk[i] = p; k->blkn[i] = bytes; break; }
    return p;
}
static void tc_free(void *ptr, void *user) {
    tc_touch *k = (tc_touch *)user;
    int i;
    for (i = 0; i < TC_BLOCKS; ++i)
        if (k->blk[i] == ptr) k->blk[i] = NULL;
    free(ptr);
}

static void tc_look(void *u) {
    tc_touch *k = (tc_touch *)u;
    size_t i;
    int b;
    if (k->seen) return;
    k->seen = 1;
    k->touched = k->bytes && memcmp(k->rbuf, k->before, k->bytes) != 0;
    for (b = 0; b < TC_BLOCKS; ++b)
        for (i = 0; k->blk[b] && i < k->blkn[b]; ++i)
            if ((unsigned char)k->blk[b][i] != 0xA5) { k->scratch_touched = 1; break; }
}
static redcoll_result tc_t_send(void *u, int dst, const void *b, size_t n, int tag) {
    tc_look(u);
    return tp_w_send(u, dst, b, n, tag);
}
static redcoll_result tc_t_recv(void *u, int src, void *b, size_t n, int tag) {
    tc_look(u);
    return tp_w_recv(u, src, b, n, tag);
}
static redcoll_result tc_t_sendrecv(void *u, int dst, const void *sb, size_t sn, int src, void *rb,
                                    size_t rn, int tag) {
    tc_look(u);
    return tp_w_sendrecv(u, dst, sb, sn, src, rb, rn, tag);
}
static redcoll_result tc_t_recv_reduce(void *u, int src, size_t n, int tag, const redcoll_consumer *k) {
    const redcoll_transport *in = ((tp_wrap *)u)->in;
    tc_look(u);
    return in->recv_reduce(in->user, src, n, tag, k);
}
static redcoll_result tc_t_sendrecv_reduce(void *u, int dst, const void *sb, size_t sn, int src, size_t rn,
                                           int tag, const redcoll_consumer *k) {
    const redcoll_transport *in = ((tp_wrap *)u)->in;
    tc_look(u);
    return in->sendrecv_reduce(in->user, dst, sb, sn, src, rn, tag, k);
}

typedef struct tc_touch_run {
    rc_state *st;
    int       fused;    /* keep the simulator's receive-and-reduce entries */
    int       scratch;  /* count scratch written before the first message, not rbuf */
    int      *touched;  /* per rank: rbuf (scratch) written before the first message */
} tc_touch_run;

static redcoll_result tc_touch_rank(const redcoll_transport *t, void *arg) {
    tc_touch_run *x = (tc_touch_run *)arg;
    tc_touch k;
    redcoll_result e;
    int r = t->rank;
    rc_spec s2 = *x->st->spec;
    rc_state st2 = *x->st;
    memset(&k, 0, sizeof k);
    s2.opts.allocator.alloc_fn = tc_alloc;
    s2.opts.allocator.free_fn = tc_free;
    s2.opts.allocator.user_data = &k;
    st2.spec = &s2;
    tp_wrap_make(&k.w, t, 0);
    k.w.t.send = tc_t_send; k.w.t.recv = tc_t_recv; k.w.t.sendrecv = tc_t_sendrecv;
    k.w.t.isend = NULL; k.w.t.irecv = NULL; k.w.t.waitall = NULL; /* every message passes tc_look */
    k.w.t.recv_reduce = x->fused && t->recv_reduce ? tc_t_recv_reduce : NULL;
    k.w.t.sendrecv_reduce = x->fused && t->sendrecv_reduce ? tc_t_sendrecv_reduce : NULL;
    k.rbuf = x->st->rbuf[r];
    k.bytes = k.rbuf ? rc_layout_of(x->st, r).rn * x->st->esize : 0;
    k.before = (char *)malloc(k.bytes + 1);
    k.seen = k.touched = 0;
    if (!k.before) return REDCOLL_ERR_OUT_OF_MEMORY;
    if (k.bytes) memcpy(k.before, k.rbuf, k.bytes);
    e = rc_rank(&k.w.t, &st2);
    x->touched[r] = x->scratch ? k.scratch_touched : k.touched;
    free(k.before);
    tp_wrap_drop(&k.w);
    return e;
}

/* Runs spec through the wrapper; returns the ranks whose rbuf (scratch)
   was written before their first message (-1 when the run failed or was
   wrong). */
static int tc_touched_how(const rc_spec *spec, int fused, int scratch) {
    rc_state st;
    rc_outcome o;
    tc_touch_run x;
    redcoll_mock_config cfg = spec->sim;
    int r, n = 0, touched[64];
    if (spec->p > 64 || rc_begin(spec, &st, &o) != REDCOLL_OK) return -1;
    memset(touched, 0, sizeof touched);
    x.st = &st; x.fused = fused; x.scratch = scratch; x.touched = touched;
    cfg.model = redcoll_mock_defaults(spec->p).model;
    cfg.size = spec->p;
    if (redcoll_mock_run(&cfg, tc_touch_rank, &x, &o.rep) != REDCOLL_OK) { rc_teardown(&st); return -1; }
    rc_end(&st, &o);
    for (r = 0; r < spec->p; ++r) n += touched[r];
    CHECK(o.ok, "%s (%s): %s", tf_describe(spec), fused ? "fused" : "cut", o.why);
    r = o.ok ? n : -1;
    rc_outcome_free(&o);
    return r;
}

static int tc_touched(const rc_spec *spec, int fused) { return tc_touched_how(spec, fused, 0); }

/* The butterfly family (threshold b: all halving, all whole chunks, the
   model's choice) and hierarchical allreduce (groups of one, of several,
   one group; linear and tree levels) read sbuf in their first step: no
   rank's rbuf is written before its first message, fused or cut, p = 2..17;
   reduce likewise at the root, there also halving_doubling and
   binary_blocks; allreduce binary_blocks too (its block of one, odd p,
   sends its input as it is). The check itself sees a write before the first message:
   allgather ring puts every rank's own block into rbuf first, by design. */
static void test_chunked_input_read_in_place(void) {
    static const redcoll_algo rt[] = { REDCOLL_ALGO_BUTTERFLY, REDCOLL_ALGO_ELIMINATION,
                                       REDCOLL_ALGO_ELIMINATION_NONOVERLAP, REDCOLL_ALGO_FACTOR_RING };
    static const size_t thr[] = { 0, REDCOLL_THRESHOLD_HALVE_ALL, REDCOLL_THRESHOLD_HALVE_NONE };
    int i, j, p, fused, seen = 0;
    for (p = 2; p <= 17; ++p)
        for (fused = 0; fused < 2; ++fused) {
            for (i = 0; i < 4; ++i)
                for (j = 0; j < 3; ++j) {
                    rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, rt[i], p, 5 * (size_t)p + 3);
                    s.opts.threshold_bytes = thr[j];
                    s.opts.chunk_bytes = 3 * 4;
                    if ((p + j) % 3 == 0 && rc_reduces(s.coll)) s.op = "matmul", s.opts.chunk_bytes = 3 * 16;
                    CHECK(tc_touched(&s, fused) == 0, "%s thr=%zu %s: rbuf written before the first message",
                          tf_describe(&s), thr[j], fused ? "fused" : "cut");
                    s.coll = REDCOLL_COLL_REDUCE;
                    s.root = (p * 5 + j) % p;
                    CHECK(tc_touched(&s, fused) == 0, "%s thr=%zu %s: the root's rbuf written before its first message",
                          tf_describe(&s), thr[j], fused ? "fused" : "cut");
                }
            for (j = 0; j < 4; ++j) {
                static const redcoll_algo lv[] = { REDCOLL_ALGO_AUTO, REDCOLL_ALGO_FLAT, REDCOLL_ALGO_CHAIN,
                                                   REDCOLL_ALGO_BINOMIAL };
                rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HIERARCHICAL, p, 4 * (size_t)p + 1);
                s.opts.groups = j == 0 ? p : j == 1 ? 1 : (p + 1) / 2; /* groups of one; one group; pairs */
                s.opts.inner_algo = lv[j];
                s.opts.outer_algo = lv[(j + 1) % 4] == REDCOLL_ALGO_FLAT ? REDCOLL_ALGO_RING : REDCOLL_ALGO_AUTO;
                s.opts.chunk_bytes = 3 * 4;
                CHECK(tc_touched(&s, fused) == 0, "%s G=%d %s: rbuf written before the first message",
                      tf_describe(&s), s.opts.groups, fused ? "fused" : "cut");
            }
            for (j = 0; j < 3; ++j) { /* reduce's root: the Rabenseifner 2004 schedules; allreduce binary_blocks */
                rc_spec s = rc_spec_make(j == 2 ? REDCOLL_COLL_ALLREDUCE : REDCOLL_COLL_REDUCE,
                                         j ? REDCOLL_ALGO_BINARY_BLOCKS : REDCOLL_ALGO_HALVING_DOUBLING, p,
                                         3 * (size_t)p + 2);
                s.root = j == 2 ? 0 : (p * 3 + j) % p;
                s.opts.chunk_bytes = 3 * 4;
                CHECK(tc_touched(&s, fused) == 0, "%s %s: the root's rbuf written before its first message",
                      tf_describe(&s), fused ? "fused" : "cut");
            }
            {   /* the check sees a write before the first message */
                rc_spec s = rc_spec_make(REDCOLL_COLL_ALLGATHER, REDCOLL_ALGO_RING, p, 3);
                seen += tc_touched(&s, fused) == p;
            }
        }
    CHECK(seen == 2 * 16, "the check missed allgather ring's own block in rbuf (%d of 32)", seen);
}

/* Off the root, a reduce's first step reads sbuf and writes its scratch:
   no rank writes scratch (fresh, from the call's allocator) before its
   first message, for every reduce row and reduce_scatter_block
   recursive_halving (its fold or first halving reads sbuf too), fused or
   cut, p = 2..13, every 3rd root, sum, a non-commutative op, max of
   doubles, in place or not. Not checked: hierarchical (its group tables are scratch written
   first; its levels are the rows checked here) and factor_ring's whole-chunk
   rings of r > 3 (Bruck's allgather starts with the own chunk in scratch:
   m' <= b elements, for ceil(lg r) rounds instead of r-1), so factor_ring
   runs all halving. The check itself sees a copy into scratch:
   reduce_scatter recursive_doubling rotates the input into its accumulator
   first, by design. */
static void test_chunked_scratch_read_in_place(void) {
    const redcoll_algo_info *e;
    int i, p, fused, k, seen = 0, runs = 0;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
        if (!(e->coll == REDCOLL_COLL_REDUCE && e->algo != REDCOLL_ALGO_HIERARCHICAL) &&
            !(e->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK && e->algo == REDCOLL_ALGO_RECURSIVE_HALVING))
            continue;
        for (p = 2; p <= 13; ++p)
            for (fused = 0; fused < 2; ++fused)
                for (k = 0; k < 3; ++k) {
                    rc_spec s = rc_spec_make(e->coll, e->algo, p, 70 + 3 * (size_t)p);
                    if (k == 1 && e->keeps_order) s.op = "matmul";
                    else if (k == 2) { s.op = "max"; s.dtype = REDCOLL_DOUBLE; }
                    s.root = (p + 3 * k) % p;
                    s.in_place = (p + k) % 2;
                    if (e->algo == REDCOLL_ALGO_FACTOR_RING) s.opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_ALL;
                    s.opts.chunk_bytes = 3 * (strcmp(s.op, "matmul") == 0 ? 16 : redcoll_dtype_size(s.dtype));
                    CHECK(tc_touched_how(&s, fused, 1) == 0, "%s %s: scratch written before the first message",
                          tf_describe(&s), fused ? "fused" : "cut");
                    ++runs;
                }
    }
    CHECK(runs > 0, "no reduce row");
    for (p = 2; p <= 13; ++p) { /* the check sees a copy into scratch */
        rc_spec s = rc_spec_make(REDCOLL_COLL_REDUCE_SCATTER_BLOCK, REDCOLL_ALGO_RECURSIVE_DOUBLING, p, 70);
        seen += tc_touched_how(&s, 1, 1) == p;
    }
    CHECK(seen == 12, "the check missed reduce_scatter recursive_doubling's copy (%d of 12)", seen);
}

/* Without the fused entries every receive-then-reduce of the butterfly
   family and of the pipelined trees stages one chunk, not a vector: a
   rank's peak scratch is at most one chunk (allreduce) beside what the
   schedule keeps by design (the reduce's working vector off the root, a
   tree's accumulator of one pipeline segment). 3000 doubles, chunks of
   4 KiB; the model's threshold and all halving. */
static void test_chunked_scratch_schedules(void) {
    static const redcoll_algo rt[] = { REDCOLL_ALGO_BUTTERFLY, REDCOLL_ALGO_ELIMINATION,
                                       REDCOLL_ALGO_ELIMINATION_NONOVERLAP };
    const size_t n = 3000, chunk = 4096;
    int i, p, r, t;
    for (p = 2; p <= 13; ++p)
        for (i = 0; i < 3; ++i)
            for (t = 0; t < 2; ++t) {
                rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, rt[i], p, n);
                tf_capture b;
                s.dtype = REDCOLL_DOUBLE;
                s.opts.chunk_bytes = chunk;
                s.opts.threshold_bytes = t ? REDCOLL_THRESHOLD_HALVE_ALL : REDCOLL_THRESHOLD_HALVE_NONE;
                memset(&b, 0, sizeof b);
                if (tf_capture_run(&s, tc_unfused_rank, &b) != REDCOLL_OK || !b.o.ok) {
                    CHECK(0, "%s cut: %s", tf_describe(&s), b.o.why);
                    continue;
                }
                for (r = 0; r < p; ++r)
                    CHECK(b.o.rep.stats[r].scratch_bytes <= chunk, "%s thr=%s rank %d: %llu bytes of scratch > one chunk",
                          tf_describe(&s), t ? "0" : "inf", r, b.o.rep.stats[r].scratch_bytes);
                tf_capture_free(&b, p);
            }
    for (p = 2; p <= 13; ++p) { /* in-order and plain binary trees, one pipeline segment = the vector */
        for (i = 0; i < 2; ++i) {
            rc_spec s = rc_spec_make(REDCOLL_COLL_REDUCE, i ? REDCOLL_ALGO_IN_ORDER_BINARY : REDCOLL_ALGO_BINARY, p, n);
            tf_capture b;
            s.dtype = REDCOLL_DOUBLE;
            s.opts.chunk_bytes = chunk;
            s.opts.segment_bytes = n * 8;
            s.root = p / 2;
            memset(&b, 0, sizeof b);
            if (tf_capture_run(&s, tc_unfused_rank, &b) != REDCOLL_OK || !b.o.ok) {
                CHECK(0, "%s cut: %s", tf_describe(&s), b.o.why);
                continue;
            }
            for (r = 0; r < p; ++r)
                CHECK(b.o.rep.stats[r].scratch_bytes <= chunk + (r == s.root ? 0 : n * 8),
                      "%s rank %d: %llu bytes of scratch (segment %zu + chunk %zu)", tf_describe(&s), r,
                      b.o.rep.stats[r].scratch_bytes, n * 8, chunk);
            tf_capture_free(&b, p);
        }
    }
}

/* factor_ring's rings of three route back by the ring allgather in place
   (the reduction's pairwise rounds reversed): a rank's peak scratch is the
   reduction step's (r-1)m'/r, no m' block for Bruck's rotation. p = 3 and
   9 (rings only: a butterfly step stages m'/2 for its unfused fallback),
   all halving, 3000 doubles, the simulator's fused entries. */
static void test_chunked_factor_ring_scratch(void) {
    static const int ps[] = { 3, 9 };
    const size_t n = 3000;
    int i, r;
    for (i = 0; i < 2; ++i) {
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_FACTOR_RING, ps[i], n);
        size_t m = n; /* m' at the first ring step */
        tf_capture b;
        s.dtype = REDCOLL_DOUBLE;
        s.opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_ALL;
        memset(&b, 0, sizeof b);
        if (tf_capture_run(&s, rc_rank, &b) != REDCOLL_OK || !b.o.ok) {
            CHECK(0, "%s: %s", tf_describe(&s), b.o.why);
            continue;
        }
        for (r = 0; r < ps[i]; ++r)
            CHECK(b.o.rep.stats[r].scratch_bytes <= 2 * ((m + 2) / 3) * 8,
                  "%s rank %d: %llu bytes of scratch > (r-1)m'/r = %zu", tf_describe(&s), r,
                  b.o.rep.stats[r].scratch_bytes, 2 * ((m + 2) / 3) * 8);
        tf_capture_free(&b, ps[i]);
    }
}

static void suite_chunked(void) {
    tf_test("chunked: every row, p 1..33, chunks of 3 = uncut, bitwise", test_chunked_every_row);
    tf_test("chunked: odd chunk sizes, one element, the default, SIZE_MAX", test_chunked_sizes);
    tf_test("chunked: staging scratch is one chunk", test_chunked_scratch);
    tf_test("chunked: plans over the cut path allocate nothing per run", test_chunked_plans);
    tf_test("chunked: butterfly family, hierarchical read sbuf first (no copy up front)",
            test_chunked_input_read_in_place);
    tf_test("chunked: reduce off the root, reduce_scatter halving: no scratch written before the first message",
            test_chunked_scratch_read_in_place);
    tf_test("chunked: butterfly family, trees stage one chunk", test_chunked_scratch_schedules);
    tf_test("chunked: factor_ring r = 3 routes back in place ((r-1)m'/r of scratch)",
            test_chunked_factor_ring_scratch);
}
