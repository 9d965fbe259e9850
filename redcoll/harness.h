/* harness.h - run one collective on the simulator with known inputs and check it.

   Shared by the `redcoll` tool and the test suites. Every rank's input is a
   deterministic function of (rank, element); the expected result is computed
   sequentially in canonical order x0 op x1 op ... op x(p-1) with
   redcoll_reduce_local, and every rank's output is compared with it bytewise,
   which also proves that all ranks hold bitwise-identical results.

   Include after redcoll.h and redcoll_mock.h (with REDCOLL_IMPLEMENTATION in
   the same file or elsewhere). Functions are static: one copy per program. */
#ifndef REDCOLL_HARNESS_H
#define REDCOLL_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Named ops of the harness: the predefined ones by their redcoll name, plus
   "matmul" (2x2 uint32 matrix product, non-commutative, opaque 16-byte
   elements) and "user_sum" (a commutative user op on the chosen dtype's
   int32 view; requires int32). */
typedef struct rc_spec {
    redcoll_coll        coll;
    int                 p;
    size_t              count;    /* elements per rank (per block for gather/scatter/allgather/alltoall
                                     and reduce_scatter_block); for allgatherv and
                                     reduce_scatter the total, spread by rc_counts */
    redcoll_dtype       dtype;
    const char         *op;       /* NULL = "sum" */
    int                 root;
    int                 in_place;
    redcoll_options     opts;     /* opts.algo selects the schedule */
    redcoll_mock_config sim;      /* size is set from p; zero model = defaults */
    int                 use_model;/* 1: sim.model as given, 0: defaults */
    int                 absent_rank1; /* 1 + a rank that never calls the collective; 0: none */
} rc_spec;

typedef struct rc_outcome {
    int                 ok;       /* every rank returned OK and (if verified) matched */
    int                 verified; /* results were compared (not in no-data mode) */
    int                 wrong;    /* ranks that returned OK with a wrong result */
    redcoll_result      error;    /* first rank error, or REDCOLL_OK */
    char                why[512]; /* first problem found */
    redcoll_mock_report rep;
} rc_outcome;

static redcoll_result rc_run(const rc_spec *spec, rc_outcome *out);
static void rc_outcome_free(rc_outcome *o);

/* ---- ops ------------------------------------------------------------------ */

static void rc_matmul_fn(const void *in, void *inout, size_t count, void *user) {
    const uint32_t *a = (const uint32_t *)in;
    uint32_t *b = (uint32_t *)inout;
    size_t i;
    (void)user;
    for (i = 0; i < count; ++i, a += 4, b += 4) { /* b = a * b */
        uint32_t r0 = a[0] * b[0] + a[1] * b[2], r1 = a[0] * b[1] + a[1] * b[3];
        uint32_t r2 = a[2] * b[0] + a[3] * b[2], r3 = a[2] * b[1] + a[3] * b[3];
        b[0] = r0; b[1] = r1; b[2] = r2; b[3] = r3;
    }
}

static void rc_user_sum_fn(const void *in, void *inout, size_t count, void *user) {
    const int32_t *a = (const int32_t *)in;
    int32_t *b = (int32_t *)inout;
    size_t i;
    (void)user;
    for (i = 0; i < count; ++i) b[i] = (int32_t)((uint32_t)a[i] + (uint32_t)b[i]);
}

/* Resolves an op name; for "matmul" also forces the opaque dtype. */
static int rc_op_from_name(const char *name, redcoll_dtype *dtype, redcoll_op *op) {
    int k;
    if (!name) name = "sum";
    if (strcmp(name, "matmul") == 0) {
        *dtype = REDCOLL_OPAQUE(16);
        *op = redcoll_op_user(rc_matmul_fn, NULL, 0);
        return 1;
    }
    if (strcmp(name, "user_sum") == 0) {
        *dtype = REDCOLL_INT32;
        *op = redcoll_op_user(rc_user_sum_fn, NULL, 1);
        return 1;
    }
    for (k = 0; k < REDCOLL_OP_USER; ++k)
        if (strcmp(name, redcoll_op_name((redcoll_op_kind)k)) == 0) {
            *op = redcoll_op_predefined((redcoll_op_kind)k);
            return 1;
        }
    return 0;
}

/* ---- inputs ----------------------------------------------------------------- */

static uint32_t rc_hash(uint32_t x) {
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    return x;
}

/* Element i of rank r's input, chosen so that every floating-point result is
   exact in any bracketing: small integers for sums, powers of two whose
   running products stay bounded for prod, ties for MINLOC/MAXLOC. */
static void rc_input_elem(redcoll_dtype d, redcoll_op_kind op, int r, size_t i, void *out) {
    uint32_t h = rc_hash((uint32_t)r * 2654435761U ^ (uint32_t)i * 40503U ^ 0x9e37U);
    long long v = (long long)(h % 9) - 4; /* -4..4 */
    double f = (double)v;
    if (op == REDCOLL_OP_PROD) { /* factors 1, -1, 2, 1/2 that cancel over every 4 ranks */
        static const double fac[4] = { 2.0, -1.0, 0.5, 1.0 };
        f = fac[(r + (int)(i % 4)) % 4];
        v = (h & 1) ? -1 : 1;
    }
    if (op == REDCOLL_OP_LAND || op == REDCOLL_OP_LOR || op == REDCOLL_OP_LXOR) v = (h % 5 != 0);
    if (op == REDCOLL_OP_BAND || op == REDCOLL_OP_BOR || op == REDCOLL_OP_BXOR) v = (long long)h;
    switch (d) {
    case REDCOLL_INT8: { int8_t x = (int8_t)v; memcpy(out, &x, 1); break; }
    case REDCOLL_UINT8: { uint8_t x = (uint8_t)v; memcpy(out, &x, 1); break; }
    case REDCOLL_INT16: { int16_t x = (int16_t)v; memcpy(out, &x, 2); break; }
    case REDCOLL_UINT16: { uint16_t x = (uint16_t)v; memcpy(out, &x, 2); break; }
    case REDCOLL_INT32: { int32_t x = (int32_t)v; memcpy(out, &x, 4); break; }
    case REDCOLL_UINT32: { uint32_t x = (uint32_t)v; memcpy(out, &x, 4); break; }
    case REDCOLL_INT64: { int64_t x = (int64_t)v * 1000003; memcpy(out, &x, 8); break; }
    case REDCOLL_UINT64: { uint64_t x = (uint64_t)v << 33 | h; memcpy(out, &x, 8); break; }
    case REDCOLL_FLOAT: ((float *)out)[0] = (float)f; break;
    case REDCOLL_DOUBLE: ((double *)out)[0] = f; break;
    case REDCOLL_LONG_DOUBLE: ((long double *)out)[0] = (long double)f; break;
    /* pairs: few distinct values so ties are common; index is a scrambled rank */
    case REDCOLL_FLOAT_INT: { redcoll_float_int *x = (redcoll_float_int *)out; x->v = (float)(h % 3); x->i = (r * 7) % 11 + r; break; }
    case REDCOLL_DOUBLE_INT: { redcoll_double_int *x = (redcoll_double_int *)out; x->v = (double)(h % 3); x->i = (r * 7) % 11 + r; break; }
    case REDCOLL_LONG_INT: { redcoll_long_int *x = (redcoll_long_int *)out; x->v = (long)(h % 3); x->i = (r * 7) % 11 + r; break; }
    case REDCOLL_2INT: { redcoll_2int *x = (redcoll_2int *)out; x->v = (int)(h % 3); x->i = (r * 7) % 11 + r; break; }
    case REDCOLL_SHORT_INT: { redcoll_short_int *x = (redcoll_short_int *)out; x->v = (short)(h % 3); x->i = (r * 7) % 11 + r; break; }
    case REDCOLL_LONG_DOUBLE_INT: { redcoll_long_double_int *x = (redcoll_long_double_int *)out; x->v = (long double)(h % 3); x->i = (r * 7) % 11 + r; break; }
    default: { /* opaque: matmul matrices with small entries, or bytes */
        size_t k, sz = redcoll_dtype_size(d);
        if (sz == 16) {
            uint32_t m[4];
            for (k = 0; k < 4; ++k) m[k] = rc_hash(h + (uint32_t)k) % 7;
            memcpy(out, m, 16);
        } else {
            for (k = 0; k < sz; ++k) ((unsigned char *)out)[k] = (unsigned char)rc_hash(h + (uint32_t)k);
        }
    }
    }
}

/* Fills count elements of rank r's input (buffer must be zeroed: padding stays 0). */
static void rc_fill(redcoll_dtype d, redcoll_op_kind op, int r, void *buf, size_t count) {
    size_t i, sz = redcoll_dtype_size(d);
    for (i = 0; i < count; ++i) rc_input_elem(d, op, r, i, (char *)buf + i * sz);
}

/* ---- irregular counts ---------------------------------------------------------- */

/* 1 if spec.count of `coll` is a total that rc_counts spreads over the ranks. */
static int rc_irregular(redcoll_coll coll) {
    return coll == REDCOLL_COLL_ALLGATHERV || coll == REDCOLL_COLL_REDUCE_SCATTER;
}

/* The per-rank counts of an irregular collective: `total` spread unevenly by
   weights 1..4, every third rank (1, 4, 7, ...) getting none; they add up to
   total exactly. `redcoll simulate --json` prints them as "counts". */
static void rc_counts(int p, size_t total, size_t *counts) {
    unsigned long long wsum = 0, acc = 0, prev = 0;
    int r;
    for (r = 0; r < p; ++r) wsum += r % 3 == 1 ? 0 : 1 + rc_hash((uint32_t)r) % 4;
    for (r = 0; r < p; ++r) {
        unsigned long long at;
        acc += r % 3 == 1 ? 0 : 1 + rc_hash((uint32_t)r) % 4;
        at = (unsigned long long)((long double)total * (long double)acc / (long double)wsum);
        if (r == p - 1) at = total;
        counts[r] = (size_t)(at - prev);
        prev = at;
    }
}

/* ---- running one case --------------------------------------------------------- */

typedef struct rc_state {
    const rc_spec *spec;
    redcoll_dtype  dtype;
    redcoll_op     op;
    size_t         esize;
    int            no_data;
    char         **sbuf, **rbuf; /* per rank; NULL where the rank passes none */
    size_t        *counts;       /* irregular collectives: rc_counts, and */
    size_t        *displs;       /* their p + 1 prefix sums */
    size_t        *slen, *rlen;  /* per rank: elements of sbuf[r], rbuf[r] (0: NULL) */
} rc_state;

static redcoll_result rc_rank(const redcoll_transport *t, void *arg) {
    rc_state *st = (rc_state *)arg;
    const rc_spec *s = st->spec;
    int r = t->rank;
    const void *sb = st->sbuf[r];
    void *rb = st->rbuf[r];
    if (r + 1 == s->absent_rank1) return REDCOLL_OK;
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE:
        return redcoll_allreduce(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count, st->dtype,
                                 st->op, &s->opts);
    case REDCOLL_COLL_REDUCE:
        return redcoll_reduce(t, s->in_place && r == s->root ? REDCOLL_IN_PLACE : sb, rb,
                              s->count, st->dtype, st->op, s->root, &s->opts);
    case REDCOLL_COLL_BCAST:
        return redcoll_bcast(t, rb, s->count, st->dtype, s->root, &s->opts);
    case REDCOLL_COLL_GATHER:
        return redcoll_gather(t, s->in_place && r == s->root ? REDCOLL_IN_PLACE : sb, rb,
                              s->count, st->dtype, s->root, &s->opts);
    case REDCOLL_COLL_SCATTER:
        return redcoll_scatter(t, sb, s->in_place && r == s->root ? REDCOLL_IN_PLACE : rb,
                               s->count, st->dtype, s->root, &s->opts);
    case REDCOLL_COLL_BARRIER:
        return redcoll_barrier(t, &s->opts);
    case REDCOLL_COLL_ALLGATHER:
        return redcoll_allgather(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count, st->dtype,
                                 &s->opts);
    case REDCOLL_COLL_ALLGATHERV:
        return redcoll_allgatherv(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, st->counts,
                                  st->dtype, &s->opts);
    case REDCOLL_COLL_ALLTOALL:
        return redcoll_alltoall(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count, st->dtype,
                                &s->opts);
    case REDCOLL_COLL_REDUCE_SCATTER:
        return redcoll_reduce_scatter(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, st->counts,
                                      st->dtype, st->op, &s->opts);
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return redcoll_reduce_scatter_block(t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count,
                                            st->dtype, st->op, &s->opts);
    default:
        return REDCOLL_ERR_UNSUPPORTED;
    }
}

static void rc_why(rc_outcome *o, const char *fmt, int a, long long b) {
    if (o->why[0]) return;
    snprintf(o->why, sizeof o->why, fmt, a, b);
}

/* Compares `got` with `want` (n elements) and notes the first difference. */
static int rc_same(rc_outcome *o, const rc_state *st, int rank, const void *got,
                   const void *want, size_t n) {
    size_t i;
    if (o->rep.results[rank] != REDCOLL_OK) return 1; /* failed ranks promise nothing */
    if (rank + 1 == st->spec->absent_rank1) return 1;
    if (n == 0 || memcmp(got, want, n * st->esize) == 0) return 1;
    o->wrong++;
    for (i = 0; i < n; ++i)
        if (memcmp((const char *)got + i * st->esize, (const char *)want + i * st->esize,
                   st->esize) != 0) break;
    rc_why(o, "rank %d: element %lld differs from the canonical-order reference", rank,
           (long long)i);
    return 0;
}

/* The canonical-order reduction of every rank's input. */
static void *rc_reference(const rc_state *st, size_t n) {
    int p = st->spec->p, r;
    char *acc = (char *)calloc(n ? n : 1, st->esize), *tmp = (char *)calloc(n ? n : 1, st->esize);
    if (!acc || !tmp) { free(acc); free(tmp); return NULL; }
    rc_fill(st->dtype, st->op.kind, 0, acc, n);
    for (r = 1; r < p; ++r) {
        memset(tmp, 0, n * st->esize);
        rc_fill(st->dtype, st->op.kind, r, tmp, n);
        redcoll_reduce_local(acc, tmp, n, st->dtype, st->op); /* tmp = acc op tmp */
        memcpy(acc, tmp, n * st->esize);
    }
    free(tmp);
    return acc;
}

static void rc_verify(const rc_state *st, rc_outcome *o) {
    const rc_spec *s = st->spec;
    int p = s->p, r;
    size_t n = s->count, es = st->esize;
    char *want = NULL;
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE:
    case REDCOLL_COLL_REDUCE:
        want = (char *)rc_reference(st, n);
        if (!want) { rc_why(o, "harness out of memory (rank %d, %lld)", 0, 0); o->ok = 0; return; }
        for (r = 0; r < p; ++r)
            if (s->coll == REDCOLL_COLL_ALLREDUCE || r == s->root)
                o->ok &= rc_same(o, st, r, st->rbuf[r], want, n);
        break;
    case REDCOLL_COLL_BCAST:
        want = (char *)calloc(n ? n : 1, es);
        if (!want) { o->ok = 0; return; }
        rc_fill(st->dtype, st->op.kind, s->root, want, n);
        for (r = 0; r < p; ++r) o->ok &= rc_same(o, st, r, st->rbuf[r], want, n);
        break;
    case REDCOLL_COLL_GATHER:
        want = (char *)calloc(n * (size_t)p + 1, es);
        if (!want) { o->ok = 0; return; }
        for (r = 0; r < p; ++r) rc_fill(st->dtype, st->op.kind, r, want + (size_t)r * n * es, n);
        o->ok &= rc_same(o, st, s->root, st->rbuf[s->root], want, n * (size_t)p);
        break;
    case REDCOLL_COLL_SCATTER:
        want = (char *)calloc(n * (size_t)p + 1, es);
        if (!want) { o->ok = 0; return; }
        rc_fill(st->dtype, st->op.kind, s->root, want, n * (size_t)p);
        for (r = 0; r < p; ++r) {
            const char *got = s->in_place && r == s->root ? st->sbuf[r] + (size_t)r * n * es : st->rbuf[r];
            o->ok &= rc_same(o, st, r, got, want + (size_t)r * n * es, n);
        }
        break;
    case REDCOLL_COLL_ALLGATHER: case REDCOLL_COLL_ALLGATHERV: {
        size_t total = st->displs ? st->displs[p] : n * (size_t)p;
        want = (char *)calloc(total + 1, es);
        if (!want) { o->ok = 0; return; }
        for (r = 0; r < p; ++r)
            rc_fill(st->dtype, st->op.kind, r, want + (st->displs ? st->displs[r] : (size_t)r * n) * es,
                    st->counts ? st->counts[r] : n);
        for (r = 0; r < p; ++r) o->ok &= rc_same(o, st, r, st->rbuf[r], want, total);
        break;
    }
    case REDCOLL_COLL_ALLTOALL: { /* block i of rank j = block j of rank i's input */
        int j;
        size_t k;
        want = (char *)calloc(n * (size_t)p + 1, es);
        if (!want) { o->ok = 0; return; }
        for (j = 0; j < p; ++j) {
            for (r = 0; r < p; ++r)
                for (k = 0; k < n; ++k)
                    rc_input_elem(st->dtype, st->op.kind, r, (size_t)j * n + k,
                                  want + ((size_t)r * n + k) * es);
            o->ok &= rc_same(o, st, j, st->rbuf[j], want, n * (size_t)p);
        }
        break;
    }
    case REDCOLL_COLL_REDUCE_SCATTER: case REDCOLL_COLL_REDUCE_SCATTER_BLOCK: {
        size_t total = st->displs ? st->displs[p] : n * (size_t)p;
        want = (char *)rc_reference(st, total);
        if (!want) { rc_why(o, "harness out of memory (rank %d, %lld)", 0, 0); o->ok = 0; return; }
        for (r = 0; r < p; ++r)
            o->ok &= rc_same(o, st, r, st->rbuf[r], want + (st->displs ? st->displs[r] : (size_t)r * n) * es,
                             st->counts ? st->counts[r] : n);
        break;
    }
    default:
        break;
    }
    free(want);
}

/* Allocates and fills the per-rank buffers of the collective. */
static int rc_setup(rc_state *st) {
    const rc_spec *s = st->spec;
    int p = s->p, r;
    size_t n = s->count, es = st->esize, pn = n * (size_t)p;
    st->sbuf = (char **)calloc((size_t)p, sizeof(char *));
    st->rbuf = (char **)calloc((size_t)p, sizeof(char *));
    st->slen = (size_t *)calloc((size_t)p, sizeof(size_t));
    st->rlen = (size_t *)calloc((size_t)p, sizeof(size_t));
    if (!st->sbuf || !st->rbuf || !st->slen || !st->rlen) return 0;
    if (rc_irregular(s->coll)) {
        st->counts = (size_t *)calloc((size_t)p, sizeof(size_t));
        st->displs = (size_t *)calloc((size_t)p + 1, sizeof(size_t));
        if (!st->counts || !st->displs) return 0;
        rc_counts(p, n, st->counts);
        for (r = 0; r < p; ++r) st->displs[r + 1] = st->displs[r] + st->counts[r];
    }
    if (st->no_data) { /* every rank shares one untouched buffer, as large as any rank's */
        int whole = s->coll == REDCOLL_COLL_ALLREDUCE || s->coll == REDCOLL_COLL_REDUCE ||
                    s->coll == REDCOLL_COLL_BCAST || s->coll == REDCOLL_COLL_BARRIER;
        char *dummy = (char *)calloc((whole ? n : pn) + 1, es);
        if (!dummy) return 0;
        for (r = 0; r < p; ++r) st->sbuf[r] = st->rbuf[r] = dummy;
        return 1;
    }
    for (r = 0; r < p; ++r) {
        size_t sn = n, rn = n;
        size_t in_off = 0;  /* in place: where in rbuf the input goes */
        int root = r == s->root;
        switch (s->coll) {
        case REDCOLL_COLL_REDUCE: rn = root ? n : 0; break;
        case REDCOLL_COLL_BCAST: sn = 0; break;
        case REDCOLL_COLL_GATHER: rn = root ? pn : 0; if (root && s->in_place) sn = 0; in_off = (size_t)r * n; break;
        case REDCOLL_COLL_SCATTER: sn = root ? pn : 0; break;
        case REDCOLL_COLL_BARRIER: sn = rn = 0; break;
        case REDCOLL_COLL_ALLGATHER: rn = pn; in_off = (size_t)r * n; break;
        case REDCOLL_COLL_ALLGATHERV: sn = st->counts[r]; in_off = st->displs[r]; break;
        case REDCOLL_COLL_ALLTOALL: sn = rn = pn; break;
        case REDCOLL_COLL_REDUCE_SCATTER: rn = s->in_place ? n : st->counts[r]; break;
        case REDCOLL_COLL_REDUCE_SCATTER_BLOCK: sn = pn; rn = s->in_place ? pn : n; break;
        default: break;
        }
        if (s->in_place && s->coll != REDCOLL_COLL_GATHER && s->coll != REDCOLL_COLL_SCATTER &&
            s->coll != REDCOLL_COLL_BCAST && (s->coll != REDCOLL_COLL_REDUCE || root)) {
            /* the input lives in rbuf */
            st->rbuf[r] = rn ? (char *)calloc(rn, es) : NULL;
            if (rn && !st->rbuf[r]) return 0;
            st->rlen[r] = rn;
            if (sn) rc_fill(st->dtype, st->op.kind, r, st->rbuf[r] + in_off * es, sn);
            sn = 0;
            rn = 0;
        }
        st->sbuf[r] = sn ? (char *)calloc(sn, es) : NULL;
        if (rn) st->rbuf[r] = (char *)calloc(rn, es);
        if ((sn && !st->sbuf[r]) || (rn && !st->rbuf[r])) return 0;
        st->slen[r] = sn;
        if (rn) st->rlen[r] = rn;
        if (st->sbuf[r]) rc_fill(st->dtype, st->op.kind, r, st->sbuf[r], sn);
        if (s->in_place && root && s->coll == REDCOLL_COLL_GATHER)
            rc_fill(st->dtype, st->op.kind, r, st->rbuf[r] + in_off * es, n);
        if (s->coll == REDCOLL_COLL_BCAST && root) rc_fill(st->dtype, st->op.kind, r, st->rbuf[r], n);
        else if (s->coll == REDCOLL_COLL_BCAST && n) memset(st->rbuf[r], 0xA5, n * es);
    }
    return 1;
}

static void rc_teardown(rc_state *st) {
    int r;
    if (st->no_data) { if (st->sbuf) free(st->sbuf[0]); }
    else for (r = 0; st->sbuf && r < st->spec->p; ++r) { free(st->sbuf[r]); free(st->rbuf[r]); }
    free(st->sbuf);
    free(st->rbuf);
    free(st->counts);
    free(st->displs);
    free(st->slen);
    free(st->rlen);
}

/* The first half of a run on any transport: resolves the op and fills every
   rank's buffers. Returns OK, or the error to give up with. */
static redcoll_result rc_begin(const rc_spec *spec, rc_state *st, rc_outcome *out) {
    memset(out, 0, sizeof *out);
    memset(st, 0, sizeof *st);
    st->spec = spec;
    st->dtype = spec->dtype;
    if (!rc_op_from_name(spec->op, &st->dtype, &st->op)) return REDCOLL_ERR_INVALID_ARG;
    st->esize = redcoll_dtype_size(st->dtype);
    if (st->esize == 0 || spec->p < 1) return REDCOLL_ERR_INVALID_ARG;
    st->no_data = spec->sim.no_data;
    if (!rc_setup(st)) { rc_teardown(st); return REDCOLL_ERR_OUT_OF_MEMORY; }
    return REDCOLL_OK;
}

/* The second half, once out->rep.results holds every rank's result: names
   the first failing rank, checks every rank that returned OK (even when
   others failed) and frees the buffers. */
static void rc_end(rc_state *st, rc_outcome *out) {
    const rc_spec *spec = st->spec;
    out->error = REDCOLL_OK;
    {
        int k;
        for (k = 0; k < spec->p && out->rep.results[k] == REDCOLL_OK; ++k) {}
        if (k < spec->p) {
            out->error = out->rep.results[k];
            snprintf(out->why, sizeof out->why, "rank %d returned \"%s\"", k,
                     redcoll_result_string(out->error));
        }
    }
    out->ok = out->error == REDCOLL_OK;
    if (!st->no_data) {
        int ok = out->ok;
        out->verified = 1;
        rc_verify(st, out);
        out->ok = ok && out->wrong == 0;
    }
    rc_teardown(st);
}

static redcoll_result rc_run(const rc_spec *spec, rc_outcome *out) {
    rc_state st;
    redcoll_mock_config cfg = spec->sim;
    redcoll_result r = rc_begin(spec, &st, out);
    if (r != REDCOLL_OK) return r;
    if (!spec->use_model) cfg.model = redcoll_mock_defaults(spec->p).model;
    cfg.size = spec->p;
    r = redcoll_mock_run(&cfg, rc_rank, &st, &out->rep);
    if (r == REDCOLL_OK) rc_end(&st, out);
    else rc_teardown(&st);
    return r;
}

static void rc_outcome_free(rc_outcome *o) { redcoll_mock_report_free(&o->rep); }

#endif /* REDCOLL_HARNESS_H */
