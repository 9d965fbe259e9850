/* cmd_schedule.c - `redcoll schedule`: draw an allreduce / reduce protocol
   round by round, as Fig. 2 and Fig. 3 of Rabenseifner 2004 do.

   Works for every allreduce and reduce schedule without knowing it: the
   collective runs on the simulator with a symbolic user op whose elements
   carry the set of ranks they are reduced over (a 64-bit mask), the element
   index and a validity flag. The op joins two sets only when they are
   disjoint and, for a non-commutative run, when the left operand's ranks
   come right before the right operand's (canonical order); anything else
   marks the element wrong. The tool wraps each rank's transport: before
   every send / recv / sendrecv and at the end it looks at everything the
   rank holds (its buffers and the scratch it got from the allocator, which
   the tool also supplies) and records, for the round the rank is in, the
   elements reduced over the most ranks. Rounds are counted as the simulator
   counts them (a message ends one round after the later of its two ends
   was posted), from a rendezvous bookkeeping of the wrapper. Included by
   main.c. */

#include <pthread.h>

#define SCH_MAX_P 64
#define SCH_MAX_ELEMS 52
#define SCH_MAX_BUFS 16

/* A symbolic element: the ranks it is reduced over. */
typedef struct sch_elem {
    uint64_t ranks;
    int32_t  idx;
    int32_t  state; /* 0 never written (scratch), 1 valid, 2 wrong */
} sch_elem;

static int sch_lowest(uint64_t m) { int b = 0; while (!(m & 1)) { m >>= 1; ++b; } return b; }
static int sch_highest(uint64_t m) { int b = 63; while (!(m >> b & 1)) --b; return b; }
static int sch_popcount(uint64_t m) { int k = 0; while (m) { m &= m - 1; ++k; } return k; }

/* inout[i] = in[i] op inout[i]. `user` points to an int: 1 if the run is commutative. */
static void sch_op(const void *in_, void *inout_, size_t count, void *user) {
    const sch_elem *in = (const sch_elem *)in_;
    sch_elem *io = (sch_elem *)inout_;
    int commutative = *(const int *)user;
    size_t i;
    for (i = 0; i < count; ++i) {
        int good = in[i].state == 1 && io[i].state == 1 && in[i].idx == io[i].idx &&
                   in[i].ranks && io[i].ranks && !(in[i].ranks & io[i].ranks);
        if (good && !commutative)
            good = sch_highest(in[i].ranks) + 1 == sch_lowest(io[i].ranks);
        if (good) io[i].ranks |= in[i].ranks;
        else io[i].state = 2;
    }
}

typedef struct sch_cell { long round; char *text; } sch_cell;

typedef struct sch_queue { long *v; size_t head, len, cap; } sch_queue;

struct sch_run;

typedef struct sch_rank {
    struct sch_run          *run;
    const redcoll_transport *inner;
    redcoll_transport        t;
    sch_elem                *sbuf, *rbuf;
    void                    *bufs[SCH_MAX_BUFS];     /* scratch the library holds */
    size_t                   buf_bytes[SCH_MAX_BUFS];
    int                      freed[SCH_MAX_BUFS];     /* returned, kept for the last look */
    int                      done;                    /* the collective has returned */
    long                     round;
    sch_cell                *cells;
    int                      ncells, cap;
    redcoll_result           result;
} sch_rank;

typedef struct sch_run {
    int             p, root, commutative;
    size_t          n;
    redcoll_coll    coll;
    redcoll_options opts;
    int             in_place;
    sch_rank       *ranks;
    sch_queue      *qs, *qr; /* [src * p + dst]: post rounds of senders / of receivers */
    pthread_mutex_t mu;
} sch_run;

static void sch_push(sch_run *s, sch_queue *q, long v) {
    pthread_mutex_lock(&s->mu);
    if (q->len == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 8;
        long *g = (long *)realloc(q->v, cap * sizeof *g);
        if (g) { q->v = g; q->cap = cap; }
    }
    if (q->len < q->cap) q->v[q->len++] = v;
    pthread_mutex_unlock(&s->mu);
}

static long sch_pop(sch_run *s, sch_queue *q) {
    long v = 0;
    pthread_mutex_lock(&s->mu);
    if (q->head < q->len) v = q->v[q->head++];
    pthread_mutex_unlock(&s->mu);
    return v;
}

static void sch_letters(char *out, int lo, int hi) {
    static const char L[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    if (lo == hi) sprintf(out, "%c", L[lo]);
    else sprintf(out, "%c-%c", L[lo], L[hi]);
}

/* "0-3" or "0-1+8-9" for a rank set. */
static void sch_ranks(char *out, uint64_t m) {
    int b = 0, first = 1;
    out[0] = 0;
    while (b < 64 && (m >> b)) {
        int e;
        if (!(m >> b & 1)) { ++b; continue; }
        for (e = b; e + 1 < 64 && (m >> (e + 1) & 1); ++e) {}
        out += sprintf(out, "%s%d", first ? "" : "+", b);
        if (e > b) out += sprintf(out, "-%d", e);
        first = 0;
        b = e + 1;
    }
}

/* What the rank holds now: per element the widest rank set over all its
   buffers; the cell lists the elements reduced over the most ranks. */
static void sch_snapshot(sch_rank *r) {
    sch_run *s = r->run;
    sch_elem best[SCH_MAX_ELEMS];
    int i, b, wrong = 0, width = 0;
    char text[1024], *o = text;
    size_t k;
    memset(best, 0, sizeof best);
    for (b = -2; b < SCH_MAX_BUFS; ++b) {
        const sch_elem *e = b == -2 ? r->sbuf : b == -1 ? r->rbuf : (const sch_elem *)r->bufs[b];
        size_t m = b >= 0 ? r->buf_bytes[b] / sizeof(sch_elem) : (e ? s->n : 0);
        if (!e || (b >= 0 && r->freed[b] && !r->done)) continue;
        for (k = 0; k < m; ++k) {
            int x = e[k].idx;
            if (e[k].state == 2) wrong = 1;
            if (e[k].state != 1 || x < 0 || (size_t)x >= s->n) continue;
            if (sch_popcount(e[k].ranks) > sch_popcount(best[x].ranks)) best[x] = e[k];
        }
    }
    for (k = 0; k < s->n; ++k)
        if (sch_popcount(best[k].ranks) > width) width = sch_popcount(best[k].ranks);
    *o = 0;
    for (i = 0; (size_t)i < s->n;) {
        int j = i;
        char l[8], rs[512];
        if (sch_popcount(best[i].ranks) != width || width == 0) { ++i; continue; }
        while ((size_t)(j + 1) < s->n && best[j + 1].ranks == best[i].ranks) ++j;
        sch_letters(l, i, j);
        sch_ranks(rs, best[i].ranks);
        if (o - text < (long)sizeof text - 600) o += sprintf(o, "%s%s:%s", o == text ? "" : " ", l, rs);
        i = j + 1;
    }
    if (wrong) sprintf(o, "%sWRONG", o == text ? "" : " ");
    if (r->ncells == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        sch_cell *g = (sch_cell *)realloc(r->cells, (size_t)cap * sizeof *g);
        if (!g) return;
        r->cells = g; r->cap = cap;
    }
    r->cells[r->ncells].round = r->round;
    r->cells[r->ncells].text = (char *)malloc(strlen(text) + 1);
    if (r->cells[r->ncells].text) strcpy(r->cells[r->ncells].text, text);
    r->ncells++;
}

/* One blocking call: note the round this rank posts in, pass the call on,
   and advance the round past the later end of every message. */
static redcoll_result sch_call(sch_rank *r, int dst, const void *sbuf, size_t sbytes, int src,
                               void *rbuf, size_t rbytes, int tag) {
    sch_run *s = r->run;
    const redcoll_transport *in = r->inner;
    redcoll_result res;
    long peer = r->round;
    int me = in->rank, p = s->p;
    sch_snapshot(r);
    if (dst >= 0) sch_push(s, &s->qs[me * p + dst], r->round);
    if (src >= 0) sch_push(s, &s->qr[src * p + me], r->round);
    if (dst >= 0 && src >= 0) res = in->sendrecv(in->user, dst, sbuf, sbytes, src, rbuf, rbytes, tag);
    else if (dst >= 0) res = in->send(in->user, dst, sbuf, sbytes, tag);
    else res = in->recv(in->user, src, rbuf, rbytes, tag);
    if (res == REDCOLL_OK) {
        if (dst >= 0) { long v = sch_pop(s, &s->qr[me * p + dst]); if (v > peer) peer = v; }
        if (src >= 0) { long v = sch_pop(s, &s->qs[src * p + me]); if (v > peer) peer = v; }
        r->round = peer + 1;
    }
    return res;
}

static redcoll_result sch_send(void *u, int dst, const void *buf, size_t bytes, int tag) {
    return sch_call((sch_rank *)u, dst, buf, bytes, -1, NULL, 0, tag);
}
static redcoll_result sch_recv(void *u, int src, void *buf, size_t bytes, int tag) {
    return sch_call((sch_rank *)u, -1, NULL, 0, src, buf, bytes, tag);
}
static redcoll_result sch_sendrecv(void *u, int dst, const void *sbuf, size_t sbytes, int src,
                                   void *rbuf, size_t rbytes, int tag) {
    return sch_call((sch_rank *)u, dst, sbuf, sbytes, src, rbuf, rbytes, tag);
}
static void sch_abort(void *u, redcoll_result why) {
    const redcoll_transport *in = ((sch_rank *)u)->inner;
    if (in->abort) in->abort(in->user, why);
}
static void sch_on_compute(void *u, size_t elems, size_t bytes) {
    const redcoll_transport *in = ((sch_rank *)u)->inner;
    if (in->on_compute) in->on_compute(in->user, elems, bytes);
}
static void sch_on_scratch(void *u, long long delta) {
    const redcoll_transport *in = ((sch_rank *)u)->inner;
    if (in->on_scratch) in->on_scratch(in->user, delta);
}

/* The allocator of each rank: zeroed memory (state 0 = never written),
   remembered; what the library returns is kept until the rank's last look
   (a non-root rank of a reduce holds its last state only in scratch). */
static void *sch_alloc(size_t bytes, void *user) {
    sch_rank *r = (sch_rank *)user;
    void *ptr = NULL;
    int i;
    for (i = 0; i < SCH_MAX_BUFS; ++i)
        if (!r->bufs[i]) {
            ptr = calloc(1, bytes);
            r->bufs[i] = ptr; r->buf_bytes[i] = bytes; r->freed[i] = 0;
            break;
        }
    return ptr;
}
static void sch_free(void *ptr, void *user) {
    sch_rank *r = (sch_rank *)user;
    int i;
    for (i = 0; i < SCH_MAX_BUFS; ++i) if (r->bufs[i] == ptr) r->freed[i] = 1;
}

static redcoll_result sch_rank_fn(const redcoll_transport *t, void *arg) {
    sch_run *s = (sch_run *)arg;
    sch_rank *r = &s->ranks[t->rank];
    redcoll_options o = s->opts;
    redcoll_op op = redcoll_op_user(sch_op, &s->commutative, s->commutative);
    redcoll_dtype d = REDCOLL_OPAQUE(sizeof(sch_elem));
    int root = t->rank == s->root, i;
    r->inner = t;
    r->t = *t;
    r->t.user = r;
    r->t.send = sch_send; r->t.recv = sch_recv; r->t.sendrecv = sch_sendrecv;
    r->t.abort = sch_abort; r->t.on_compute = sch_on_compute; r->t.on_scratch = sch_on_scratch;
    r->t.isend = NULL; r->t.irecv = NULL; r->t.waitall = NULL; r->t.node_of = NULL;
    r->t.recv_reduce = NULL; r->t.sendrecv_reduce = NULL; r->t.scratch = NULL; /* r is not their user */
    r->t.test = NULL; r->t.irecv_reduce = NULL; r->t.nb = NULL;
    o.allocator.alloc_fn = sch_alloc; o.allocator.free_fn = sch_free; o.allocator.user_data = r;
    if (s->coll == REDCOLL_COLL_ALLREDUCE)
        r->result = redcoll_allreduce(&r->t, s->in_place ? REDCOLL_IN_PLACE : r->sbuf, r->rbuf,
                                      s->n, d, op, &o);
    else
        r->result = redcoll_reduce(&r->t, s->in_place && root ? REDCOLL_IN_PLACE : r->sbuf,
                                   r->rbuf, s->n, d, op, s->root, &o);
    r->done = 1;
    sch_snapshot(r);
    for (i = 0; i < SCH_MAX_BUFS; ++i) { free(r->bufs[i]); r->bufs[i] = NULL; }
    return r->result;
}

/* The table: one row per rank, one column per round. "." before a rank's
   first message ends and after its last, "-" for a round it sits idle
   between messages; a "*" marks ranks idle for more than half of all
   rounds mid-protocol: the removed ranks of a non-power-of-two p. */
static const char *sch_at(const sch_rank *rk, long c) {
    int k;
    for (k = 0; k < rk->ncells; ++k) if (rk->cells[k].round == c) return rk->cells[k].text;
    return NULL;
}

static void sch_print(const sch_run *s, long rounds) {
    int *w = (int *)calloc((size_t)rounds + 1, sizeof(int)), r, k;
    long c;
    if (!w) return;
    for (c = 0; c <= rounds; ++c) w[c] = c ? (int)snprintf(NULL, 0, "round %ld", c) : 5;
    for (r = 0; r < s->p; ++r)
        for (k = 0; k < s->ranks[r].ncells; ++k) {
            const sch_cell *cl = &s->ranks[r].cells[k];
            int len = cl->text ? (int)strlen(cl->text) : 0;
            if (len > w[cl->round]) w[cl->round] = len;
        }
    printf("%-5s", "");
    for (c = 0; c <= rounds; ++c) {
        char h[32];
        if (c) snprintf(h, sizeof h, "round %ld", c); else strcpy(h, "input");
        printf("  %-*s", w[c], h);
    }
    printf("\n");
    for (r = 0; r < s->p; ++r) {
        const sch_rank *rk = &s->ranks[r];
        long first = rk->ncells > 1 ? rk->cells[1].round : 0;
        long last = rk->ncells ? rk->cells[rk->ncells - 1].round : 0;
        int idle = 0, gap = 0;
        char label[16];
        for (c = first; c <= last; ++c) {
            gap = sch_at(rk, c) ? 0 : gap + 1;
            if (2 * gap > rounds) idle = 1;
        }
        snprintf(label, sizeof label, "P%d%s", r, idle ? "*" : "");
        printf("%-5s", label);
        for (c = 0; c <= rounds; ++c) {
            const char *txt = sch_at(rk, c);
            if (!txt) txt = c > first && c < last ? "-" : ".";
            printf("  %-*s", w[c], txt);
        }
        printf("\n");
    }
    free(w);
}

static int cmd_schedule(cli *c) {
    sch_run s;
    redcoll_mock_config cfg;
    redcoll_mock_report rep;
    redcoll_result run;
    int r, i, ok = 1;
    long rounds = 0;
    memset(&s, 0, sizeof s);
    s.p = c->spec.p;
    s.coll = c->spec.coll;
    s.root = c->spec.root;
    s.opts = c->spec.opts;
    s.in_place = c->spec.in_place;
    s.n = c->given[F_COUNT] ? c->spec.count : (size_t)redcoll__pof2_floor(s.p);
    if (s.coll != REDCOLL_COLL_ALLREDUCE && s.coll != REDCOLL_COLL_REDUCE)
        return cli_bad("schedule draws allreduce and reduce (not %s)", redcoll_coll_name(s.coll));
    if (s.p > SCH_MAX_P) return cli_bad("schedule draws at most 64 ranks%s", "");
    if (s.n < 1 || s.n > SCH_MAX_ELEMS) return cli_bad("schedule draws 1 to 52 elements (--count)%s", "");
    /* the op's real commutativity picks and runs the schedule; a non-commutative
       op also has every reduction checked for canonical order */
    s.commutative = c->commutative;
    if (s.opts.algo == REDCOLL_ALGO_AUTO)
        s.opts.algo = redcoll_select(s.coll, s.p, s.n * sizeof(sch_elem), s.commutative, &s.opts);
    s.ranks = (sch_rank *)calloc((size_t)s.p, sizeof *s.ranks);
    s.qs = (sch_queue *)calloc((size_t)(s.p * s.p), sizeof *s.qs);
    s.qr = (sch_queue *)calloc((size_t)(s.p * s.p), sizeof *s.qr);
    if (!s.ranks || !s.qs || !s.qr) { fprintf(stderr, "redcoll: out of memory\n"); return 1; }
    pthread_mutex_init(&s.mu, NULL);
    for (r = 0; r < s.p; ++r) {
        sch_rank *rk = &s.ranks[r];
        size_t k;
        rk->run = &s;
        rk->sbuf = (sch_elem *)calloc(s.n, sizeof(sch_elem));
        if (s.coll == REDCOLL_COLL_ALLREDUCE || r == s.root) rk->rbuf = (sch_elem *)calloc(s.n, sizeof(sch_elem));
        for (k = 0; k < s.n; ++k) {
            rk->sbuf[k].ranks = (uint64_t)1 << r; rk->sbuf[k].idx = (int32_t)k; rk->sbuf[k].state = 1;
        }
        if (s.in_place && rk->rbuf) { memcpy(rk->rbuf, rk->sbuf, s.n * sizeof(sch_elem)); free(rk->sbuf); rk->sbuf = NULL; }
    }
    cfg = redcoll_mock_defaults(s.p);
    cfg.model = c->spec.sim.model;
    cfg.fail_rank = c->spec.sim.fail_rank;
    cfg.fail_call = c->spec.sim.fail_call;
    run = redcoll_mock_run(&cfg, sch_rank_fn, &s, &rep);

    {
        char l[8];
        sch_letters(l, 0, (int)s.n - 1);
        printf("%s / %s on p=%d, %zu elements %s", redcoll_coll_name(s.coll),
               redcoll_algo_name(s.opts.algo), s.p, s.n, l);
    }
    if (s.coll == REDCOLL_COLL_REDUCE) printf(", root %d", s.root);
    printf(", op %s (%s)\n", c->spec.op,
           s.commutative ? "commutative" : "not commutative: canonical order checked");
    printf("Each cell: what the rank holds after the round (and its reductions), the elements\n"
           "reduced over the most ranks: \"A-D:0-1\" = elements A..D reduced over ranks 0..1.\n"
           "\".\" not started / done, \"-\" idle between messages; \"*\" marks a rank idle for more\n"
           "than half of the rounds mid-protocol: removed from the protocol.\n\n");
    if (run == REDCOLL_OK) {
        for (r = 0; r < s.p; ++r)
            if (s.ranks[r].ncells && s.ranks[r].cells[s.ranks[r].ncells - 1].round > rounds)
                rounds = s.ranks[r].cells[s.ranks[r].ncells - 1].round;
        sch_print(&s, rounds);
        for (r = 0; r < s.p; ++r) {
            const sch_rank *rk = &s.ranks[r];
            if (rk->result != REDCOLL_OK) {
                printf("rank %d: %s\n", r, redcoll_result_string(rk->result));
                ok = 0;
            } else if (rk->rbuf) {
                size_t k;
                for (k = 0; k < s.n; ++k)
                    if (rk->rbuf[k].state != 1 || rk->rbuf[k].idx != (int32_t)k ||
                        rk->rbuf[k].ranks != (s.p == 64 ? ~(uint64_t)0 : ((uint64_t)1 << s.p) - 1)) ok = 0;
            }
        }
        printf("\n%ld rounds, modeled time %.6g s; result %s\n", rounds, rep.time,
               ok ? (s.commutative ? "complete on every rank that gets one"
                                   : "complete on every rank that gets one, in canonical order")
                  : "WRONG");
        if (rep.log) printf("%s", rep.log);
    } else {
        printf("simulation failed: %s\n", redcoll_result_string(run));
        ok = 0;
    }
    redcoll_mock_report_free(&rep);
    for (r = 0; r < s.p; ++r) {
        int k;
        for (k = 0; k < s.ranks[r].ncells; ++k) free(s.ranks[r].cells[k].text);
        free(s.ranks[r].cells); free(s.ranks[r].sbuf); free(s.ranks[r].rbuf);
    }
    for (i = 0; i < s.p * s.p; ++i) { free(s.qs[i].v); free(s.qr[i].v); }
    free(s.qs); free(s.qr); free(s.ranks);
    pthread_mutex_destroy(&s.mu);
    return ok ? 0 : 1;
}
