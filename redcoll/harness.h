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

#include <errno.h>
#include <math.h>
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
    int                 local_rank1;  /* 1 + the only rank whose buffers this process holds
                                         and checks (MPI: one rank per process); 0: all */
    int                 nonblock;     /* how ranks call it: RC_BLOCKING, RC_NB_* */
    unsigned            seed;         /* 0: the usual inputs; else others of the same kind */
} rc_spec;

/* rc_spec.nonblock: the blocking call; the non-blocking one completed by
   redcoll_wait, or by redcoll_test in a loop; a plan started and waited for. */
enum { RC_BLOCKING = 0, RC_NB_WAIT, RC_NB_TEST, RC_NB_PLAN };

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
    if (strcmp(name, redcoll_op_name(REDCOLL_OP_SUM_EXACT)) == 0) {
        *op = REDCOLL_SUM_EXACT;
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

/* ---- exact sums (op "sum_exact") ---------------------------------------------
   Inputs of wide dynamic range, and an exact reference computed independently
   of the library: a long accumulator of signed 32-bit digits at fixed places
   (bit 0 = 2^-1074) over the whole double range, normalised once and rounded
   by the hardware's int64 -> double / float conversion after a round-to-odd
   cut to 63 bits. Floats go through it as doubles (exactly). */

#define RC_XDIGITS 70 /* 2240 bits: the 2098 of double and headroom for 2^31 inputs */

typedef struct rc_xacc {
    long long d[RC_XDIGITS];
    int nan, pinf, ninf, not_negzero;
} rc_xacc;

static void rc_xadd(rc_xacc *a, double x) {
    uint64_t u, m, lo, hi;
    int e, neg, pos, j, o;
    long long s;
    memcpy(&u, &x, 8);
    neg = (int)(u >> 63);
    e = (int)(u >> 52) & 0x7ff;
    m = u & 0xfffffffffffffULL;
    if (e == 0x7ff) { *(m ? &a->nan : neg ? &a->ninf : &a->pinf) = 1; a->not_negzero = 1; return; }
    if (!neg || e || m) a->not_negzero = 1;
    if (e == 0 && m == 0) return;
    if (e) m |= 1ULL << 52;
    pos = e ? e - 1 : 0;
    j = pos / 32; o = pos % 32;
    lo = m << o; hi = o ? m >> (64 - o) : 0;
    s = neg ? -1 : 1;
    a->d[j] += s * (long long)(lo & 0xffffffffU);
    a->d[j + 1] += s * (long long)(lo >> 32);
    a->d[j + 2] += s * (long long)hi;
}

/* The correctly rounded sum, written as a float or double into out. */
static void rc_xresult(rc_xacc *a, int is_double, void *out) {
    uint64_t X = 0;
    long long c = 0;
    int j, top = -1, b, neg, sticky = 0;
    double r;
    if (a->nan || (a->pinf && a->ninf)) r = NAN;
    else if (a->pinf || a->ninf) r = a->pinf ? INFINITY : -INFINITY;
    else {
        for (j = 0; j < RC_XDIGITS; ++j) { /* digits into [0, 2^32) */
            long long t = a->d[j] + c, dig = t & 0xffffffffLL;
            c = (t - dig) / 4294967296LL;
            a->d[j] = dig;
        }
        neg = c < 0;
        if (neg) { /* magnitude: 2^2240 - value */
            long long borrow = 0;
            for (j = 0; j < RC_XDIGITS; ++j) {
                long long t = -a->d[j] - borrow;
                borrow = t < 0;
                a->d[j] = t < 0 ? t + 4294967296LL : t;
            }
        }
        for (j = RC_XDIGITS - 1; j >= 0 && top < 0; --j)
            if (a->d[j]) { int k = 31; while (!((a->d[j] >> k) & 1)) --k; top = 32 * j + k; }
        if (top < 0) r = a->not_negzero ? 0.0 : -0.0;
        else {
            b = top - 62; /* X = bits b .. top; below b only a sticky bit */
            for (j = 0; j < RC_XDIGITS; ++j) {
                int s = 32 * j - b;
                uint64_t dig = (uint64_t)a->d[j];
                if (!dig) continue;
                if (s >= 0) X |= dig << s;
                else if (s > -32) { X |= dig >> -s; sticky |= (dig & ((1ULL << -s) - 1)) != 0; }
                else sticky = 1;
            }
            X |= (uint64_t)sticky;
            if (is_double) r = ldexp((double)(long long)X, b - 1074);
            else r = (double)ldexpf((float)(long long)X, b - 1074);
            if (neg) r = -r;
        }
    }
    if (is_double) {
        if (r != r) { uint64_t q = 0x7ff8000000000000ULL; memcpy(out, &q, 8); }
        else memcpy(out, &r, 8);
    } else {
        float f = (float)r;
        if (r != r) { uint32_t q = 0x7fc00000U; memcpy(out, &q, 4); }
        else memcpy(out, &f, 4);
    }
}

/* Element i of rank r for sum_exact (float and double): each element has a
   class, the same on every rank: wide random exponents, a 64-binade field,
   cancellation (1e300, 1, -1e300 over ranks 3k, 3k+1, 3k+2), subnormals,
   all -0, mixed zeros, infinities and NaNs, near-overflow, rounding ties,
   small integers. Returns 0 for other types. */
static int rc_xinput(redcoll_dtype d, int r, size_t i, void *out) {
    uint32_t hc = rc_hash((uint32_t)i * 2246822519U ^ 0x51edU);
    uint32_t h = rc_hash((uint32_t)r * 2654435761U ^ (uint32_t)i * 40503U ^ 0x3c6e1U);
    uint32_t h2 = rc_hash(h ^ 0x85ebca6bU);
    int dbl = d == REDCOLL_DOUBLE, F = dbl ? 52 : 23, EM = dbl ? 2047 : 255, bias = EM / 2;
    uint64_t m = ((uint64_t)h2 << 32 | h) & ((1ULL << F) - 1), neg = h >> 31, u;
    int e;
    if (d != REDCOLL_DOUBLE && d != REDCOLL_FLOAT) return 0;
    switch (hc % 32) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: /* any normal */
        e = 1 + (int)(h2 % (uint32_t)(EM - 1)); break;
    case 8: case 9: case 10: case 11: case 12: case 13: /* a field spanning 64 binades */
        e = bias - 20 + (int)(hc >> 8) % 40 + (int)(h2 % 64) - 32; break;
    case 14: case 15: /* +A, 1, -A on ranks 3k, 3k+1, 3k+2 */
        if (r % 3 == 1) { e = bias; m = 0; neg = 0; break; }
        e = dbl ? 997 + bias : 100 + bias;
        m = ((uint64_t)rc_hash(hc) << 32 | rc_hash(hc + 1)) & ((1ULL << F) - 1);
        neg = r % 3 == 2;
        break;
    case 16: e = 0; break; /* subnormal (or a zero) */
    case 17: e = 0; m = 0; neg = 1; break; /* -0 everywhere */
    case 18: e = 0; m = 0; neg = (uint64_t)((r + (int)(hc >> 8)) % 2); break; /* +0 and -0 */
    case 19: /* now and then an infinity or a NaN */
        e = bias - 8 + (int)(h2 % 16);
        if (h % 13 == 0 || h % 13 == 1) { e = EM; m = 0; neg = h % 13; }
        else if (h % 29 == 2) { e = EM; m |= 1; }
        break;
    case 20: e = r % 5 == 1 ? EM : bias + (int)(h2 % 8); if (e == EM) { m = 0; neg = 0; } break;
    case 21: e = EM - 1; neg = (hc >> 9) & 1 ? (uint64_t)(r % 2) : (hc >> 10) & 1; break;
    case 22: /* ties: 1 (or 1 + ulp), half an ulp, and a sticky bit or not */
        neg = 0;
        if (r == 0) { e = bias; m = (hc >> 8) & 1; }
        else if (r == 1) { e = bias - F - 1; m = 0; }
        else if (r == 2 && (hc >> 9) & 1) { e = bias - F - 40; m = 0; }
        else { e = 0; m = 0; }
        break;
    default: { /* small integers */
        double v = (double)((int)(h % 9) - 4);
        if (dbl) memcpy(out, &v, 8); else { float f = (float)v; memcpy(out, &f, 4); }
        return 1;
    }
    }
    if (e < 0) e = 0;
    u = neg << (dbl ? 63 : 31) | (uint64_t)e << F | m;
    if (dbl) memcpy(out, &u, 8); else { uint32_t v = (uint32_t)u; memcpy(out, &v, 4); }
    return 1;
}

/* Element i of rank r's input, chosen so that every floating-point result is
   exact in any bracketing: small integers for sums, powers of two whose
   running products stay bounded for prod, ties for MINLOC/MAXLOC. Another
   seed gives other inputs of the same kind (element i + seed * 2^32/phi). */
static void rc_input_elem(redcoll_dtype d, redcoll_op_kind op, unsigned seed, int r, size_t i,
                          void *out) {
    uint32_t h;
    i += (size_t)seed * 0x9E3779B9u;
    h = rc_hash((uint32_t)r * 2654435761U ^ (uint32_t)i * 40503U ^ 0x9e37U);
    long long v = (long long)(h % 9) - 4; /* -4..4 */
    double f = (double)v;
    if (op == REDCOLL_OP_SUM_EXACT && rc_xinput(d, r, i, out)) return;
    if (op == REDCOLL_OP_PROD) {
        /* factors 1, -1, 2, 1/2 that cancel over every 4 ranks, so products of
           consecutive ranks stay small; 2 and 1/2 only on the first 100 ranks,
           so that products of any subset (a commutative schedule's partial
           results) stay within 2^+-50 and exact in float at every p (p = 577
           overflowed float through 128 ranks of factor 2) */
        static const double fac[4] = { 2.0, -1.0, 0.5, 1.0 };
        f = fac[(r + (int)(i % 4)) % 4];
        if (r >= 100 && (f == 2.0 || f == 0.5)) f = 1.0;
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
static void rc_fill(redcoll_dtype d, redcoll_op_kind op, unsigned seed, int r, void *buf, size_t count) {
    size_t i, sz = redcoll_dtype_size(d);
    for (i = 0; i < count; ++i) rc_input_elem(d, op, seed, r, i, (char *)buf + i * sz);
}

/* ---- irregular counts ---------------------------------------------------------- */

/* 1 if `coll` takes an op. (inline: programs that include the harness
   without using these predicates, bench/sim_events.c, still compile -Werror) */
static inline int rc_reduces(redcoll_coll coll) {
    return coll == REDCOLL_COLL_ALLREDUCE || coll == REDCOLL_COLL_REDUCE ||
           coll == REDCOLL_COLL_REDUCE_SCATTER || coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
}

/* A spec of `coll` with `algo` at p ranks and count elements of int32 sum;
   everything else zero (defaults). */
static inline rc_spec rc_spec_make(redcoll_coll coll, redcoll_algo algo, int p, size_t count) {
    rc_spec s;
    memset(&s, 0, sizeof s);
    s.coll = coll;
    s.opts.algo = algo;
    s.p = p;
    s.count = count;
    s.dtype = REDCOLL_INT32;
    s.op = "sum";
    return s;
}

/* Reads a whole file (NUL-terminated; the caller frees it); NULL with errno
   set on failure. */
static inline char *rc_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0, got;
    if (!f) return NULL;
    do {
        if (len + 4096 + 1 > cap) {
            char *g = (char *)realloc(buf, cap = 2 * cap + 8192);
            if (!g) { free(buf); fclose(f); errno = ENOMEM; return NULL; }
            buf = g;
        }
        got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) { free(buf); fclose(f); errno = EIO; return NULL; }
    fclose(f);
    buf[len] = 0;
    return buf;
}

/* 1 if `coll` has a root (spec.root matters). */
static inline int rc_rooted(redcoll_coll coll) {
    return coll == REDCOLL_COLL_REDUCE || coll == REDCOLL_COLL_BCAST ||
           coll == REDCOLL_COLL_GATHER || coll == REDCOLL_COLL_SCATTER;
}

/* 1 if spec.count of `coll` is one block of p (the library's convention too). */
static inline int rc_blocks(redcoll_coll coll) {
    return coll == REDCOLL_COLL_GATHER || coll == REDCOLL_COLL_SCATTER ||
           coll == REDCOLL_COLL_ALLGATHER || coll == REDCOLL_COLL_ALLTOALL ||
           coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
}

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
} rc_state;

/* Calls the spec's collective on rank t->rank: with plan, makes its plan
   (redcoll_<coll>_init); else with req, starts its non-blocking form
   (redcoll_i<coll>); else calls it. The same arguments in every form. */
#define RC_CALL(f, ...) \
    (plan ? redcoll_##f##_init(__VA_ARGS__, plan) : req ? redcoll_i##f(__VA_ARGS__, req) \
                                                        : redcoll_##f(__VA_ARGS__))
static redcoll_result rc_call(const redcoll_transport *t, rc_state *st, redcoll_coll_request **req,
                              redcoll_plan **plan) {
    const rc_spec *s = st->spec;
    int r = t->rank;
    const void *sb = st->sbuf[r];
    void *rb = st->rbuf[r];
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE:
        return RC_CALL(allreduce, t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count, st->dtype,
                       st->op, &s->opts);
    case REDCOLL_COLL_REDUCE:
        return RC_CALL(reduce, t, s->in_place && r == s->root ? REDCOLL_IN_PLACE : sb, rb,
                       s->count, st->dtype, st->op, s->root, &s->opts);
    case REDCOLL_COLL_BCAST:
        return RC_CALL(bcast, t, rb, s->count, st->dtype, s->root, &s->opts);
    case REDCOLL_COLL_GATHER:
        return RC_CALL(gather, t, s->in_place && r == s->root ? REDCOLL_IN_PLACE : sb, rb,
                       s->count, st->dtype, s->root, &s->opts);
    case REDCOLL_COLL_SCATTER:
        return RC_CALL(scatter, t, sb, s->in_place && r == s->root ? REDCOLL_IN_PLACE : rb,
                       s->count, st->dtype, s->root, &s->opts);
    case REDCOLL_COLL_BARRIER:
        return RC_CALL(barrier, t, &s->opts);
    case REDCOLL_COLL_ALLGATHER:
        return RC_CALL(allgather, t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count, st->dtype,
                       &s->opts);
    case REDCOLL_COLL_ALLGATHERV:
        return RC_CALL(allgatherv, t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, st->counts,
                       st->dtype, &s->opts);
    case REDCOLL_COLL_ALLTOALL:
        return RC_CALL(alltoall, t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count, st->dtype,
                       &s->opts);
    case REDCOLL_COLL_REDUCE_SCATTER:
        return RC_CALL(reduce_scatter, t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, st->counts,
                       st->dtype, st->op, &s->opts);
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        return RC_CALL(reduce_scatter_block, t, s->in_place ? REDCOLL_IN_PLACE : sb, rb, s->count,
                       st->dtype, st->op, &s->opts);
    default:
        return REDCOLL_ERR_UNSUPPORTED;
    }
}
#undef RC_CALL

/* Completes a started request: redcoll_test in a loop (poll) or redcoll_wait;
   frees it. */
static redcoll_result rc_complete(redcoll_coll_request *req, int poll) {
    redcoll_result r;
    int done = 0;
    if (poll) do r = redcoll_test(req, &done); while (!done);
    else r = redcoll_wait(req);
    redcoll_request_free(req);
    return r;
}

static redcoll_result rc_rank(const redcoll_transport *t, void *arg) {
    rc_state *st = (rc_state *)arg;
    const rc_spec *s = st->spec;
    redcoll_coll_request *req = NULL;
    redcoll_plan *plan = NULL;
    redcoll_result r;
    if (t->rank + 1 == s->absent_rank1) return REDCOLL_OK;
    switch (s->nonblock) {
    case RC_NB_WAIT: case RC_NB_TEST:
        r = rc_call(t, st, &req, NULL);
        return r != REDCOLL_OK ? r : rc_complete(req, s->nonblock == RC_NB_TEST);
    case RC_NB_PLAN:
        r = rc_call(t, st, NULL, &plan);
        if (r == REDCOLL_OK) r = redcoll_plan_start(plan);
        if (r == REDCOLL_OK) r = redcoll_plan_wait(plan);
        redcoll_plan_free(plan);
        return r;
    default:
        return rc_call(t, st, NULL, NULL);
    }
}

static void rc_why(rc_outcome *o, const char *fmt, int a, long long b) {
    if (o->why[0]) return;
    snprintf(o->why, sizeof o->why, fmt, a, b);
}

/* The exact reference of sum_exact, element by element over the ranks. */
static void *rc_xreference(const rc_state *st, size_t n) {
    int p = st->spec->p, r, dbl = st->dtype == REDCOLL_DOUBLE;
    size_t i;
    char *want = (char *)calloc(n ? n : 1, st->esize);
    rc_xacc *a = (rc_xacc *)malloc(sizeof *a);
    if (!want || !a) { free(want); free(a); return NULL; }
    for (i = 0; i < n; ++i) {
        memset(a, 0, sizeof *a);
        for (r = 0; r < p; ++r) {
            char v[8];
            rc_input_elem(st->dtype, st->op.kind, st->spec->seed, r, i, v);
            if (dbl) { double x; memcpy(&x, v, 8); rc_xadd(a, x); }
            else { float x; memcpy(&x, v, 4); rc_xadd(a, (double)x); }
        }
        rc_xresult(a, dbl, want + i * st->esize);
    }
    free(a);
    return want;
}

/* The canonical-order reduction of every rank's input. */
static void *rc_reference(const rc_state *st, size_t n) {
    int p = st->spec->p, r;
    if (st->op.kind == REDCOLL_OP_SUM_EXACT) return rc_xreference(st, n);
    char *acc = (char *)calloc(n ? n : 1, st->esize), *tmp = (char *)calloc(n ? n : 1, st->esize);
    if (!acc || !tmp) { free(acc); free(tmp); return NULL; }
    rc_fill(st->dtype, st->op.kind, st->spec->seed, 0, acc, n);
    for (r = 1; r < p; ++r) {
        memset(tmp, 0, n * st->esize);
        rc_fill(st->dtype, st->op.kind, st->spec->seed, r, tmp, n);
        redcoll_reduce_local(acc, tmp, n, st->dtype, st->op); /* tmp = acc op tmp */
        memcpy(acc, tmp, n * st->esize);
    }
    free(tmp);
    return acc;
}

/* ---- the exact result, rank by rank --------------------------------------------
   rc_expect_init computes once what the ranks must hold (the canonical-order
   reduction, the root's vector, the gathered blocks); rc_expect_rank then says
   for one rank where its result is, what it must equal and how many elements,
   so a process that holds a single rank (MPI) checks it without the others'
   buffers, and `redcoll bench` counts wrong elements on every rank. */

typedef struct rc_expect {
    char *want;  /* shared by the ranks; alltoall: NULL (every rank differs) */
    char *mine;  /* alltoall: one rank's expected blocks, rebuilt per rank */
} rc_expect;

/* 0 when out of memory (nothing to free then). */
static int rc_expect_init(const rc_state *st, rc_expect *e) {
    const rc_spec *s = st->spec;
    int p = s->p, r;
    size_t n = s->count, es = st->esize, total = st->displs ? st->displs[p] : n * (size_t)p;
    e->want = e->mine = NULL;
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE: case REDCOLL_COLL_REDUCE:
        e->want = (char *)rc_reference(st, n);
        break;
    case REDCOLL_COLL_REDUCE_SCATTER: case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        e->want = (char *)rc_reference(st, total);
        break;
    case REDCOLL_COLL_BCAST:
        e->want = (char *)calloc(n ? n : 1, es);
        if (e->want) rc_fill(st->dtype, st->op.kind, st->spec->seed, s->root, e->want, n);
        break;
    case REDCOLL_COLL_SCATTER:
        e->want = (char *)calloc(n * (size_t)p + 1, es);
        if (e->want) rc_fill(st->dtype, st->op.kind, st->spec->seed, s->root, e->want, n * (size_t)p);
        break;
    case REDCOLL_COLL_GATHER: case REDCOLL_COLL_ALLGATHER: case REDCOLL_COLL_ALLGATHERV:
        e->want = (char *)calloc(total + 1, es);
        for (r = 0; e->want && r < p; ++r)
            rc_fill(st->dtype, st->op.kind, st->spec->seed, r, e->want + (st->displs ? st->displs[r] : (size_t)r * n) * es,
                    st->counts ? st->counts[r] : n);
        break;
    case REDCOLL_COLL_ALLTOALL:
        e->mine = (char *)calloc(n * (size_t)p + 1, es);
        return e->mine != NULL;
    default:
        return 1;
    }
    return e->want != NULL;
}

static void rc_expect_free(rc_expect *e) { free(e->want); free(e->mine); e->want = e->mine = NULL; }

/* Rank r's result (*got) and what it must be (*want); returns the element
   count, 0 when r receives nothing to check. */
static size_t rc_expect_rank(const rc_state *st, rc_expect *e, int r, const char **got,
                             const char **want) {
    const rc_spec *s = st->spec;
    int p = s->p, j;
    size_t n = s->count, es = st->esize, k;
    *got = st->rbuf[r];
    *want = e->want;
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE: case REDCOLL_COLL_BCAST: return n;
    case REDCOLL_COLL_REDUCE: return r == s->root ? n : 0;
    case REDCOLL_COLL_GATHER: return r == s->root ? n * (size_t)p : 0;
    case REDCOLL_COLL_SCATTER:
        if (s->in_place && r == s->root) *got = st->sbuf[r] + (size_t)r * n * es;
        *want = e->want + (size_t)r * n * es;
        return n;
    case REDCOLL_COLL_ALLGATHER: case REDCOLL_COLL_ALLGATHERV:
        return st->displs ? st->displs[p] : n * (size_t)p;
    case REDCOLL_COLL_ALLTOALL: /* block j of rank r = block r of rank j's input */
        for (j = 0; j < p; ++j)
            for (k = 0; k < n; ++k)
                rc_input_elem(st->dtype, st->op.kind, st->spec->seed, j, (size_t)r * n + k,
                              e->mine + ((size_t)j * n + k) * es);
        *want = e->mine;
        return n * (size_t)p;
    case REDCOLL_COLL_REDUCE_SCATTER: case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        *want = e->want + (st->displs ? st->displs[r] : (size_t)r * n) * es;
        return st->counts ? st->counts[r] : n;
    default:
        return 0;
    }
}

/* Elements of rank r's result that differ from the exact result (bytewise);
   *first (optional) gets the index of the first. */
static size_t rc_wrong_elems(const rc_state *st, rc_expect *e, int r, size_t *first) {
    const char *got, *want;
    size_t n = rc_expect_rank(st, e, r, &got, &want), i, bad = 0, es = st->esize;
    if (n == 0 || memcmp(got, want, n * es) == 0) return 0;
    for (i = 0; i < n; ++i)
        if (memcmp(got + i * es, want + i * es, es) != 0) {
            if (!bad++ && first) *first = i;
        }
    return bad;
}

/* Checks every rank this process holds (spec.local_rank1) that returned OK. */
static void rc_verify(const rc_state *st, rc_outcome *o) {
    rc_expect e;
    int r;
    if (!rc_expect_init(st, &e)) {
        rc_why(o, "harness out of memory (rank %d, %lld)", 0, 0);
        o->ok = 0;
        return;
    }
    for (r = 0; r < st->spec->p; ++r) {
        size_t first = 0;
        if (st->spec->local_rank1 && r + 1 != st->spec->local_rank1) continue;
        if (o->rep.results[r] != REDCOLL_OK) continue; /* failed ranks promise nothing */
        if (r + 1 == st->spec->absent_rank1) continue;
        if (rc_wrong_elems(st, &e, r, &first) == 0) continue;
        o->wrong++;
        o->ok = 0;
        rc_why(o, "rank %d: element %lld differs from the canonical-order reference", r,
               (long long)first);
    }
    rc_expect_free(&e);
}

/* Rank r's buffers in elements: sbuf (sn), rbuf (rn; 0 = the rank passes
   none) and, when the input lives in rbuf (in place), where in rbuf it sits. */
typedef struct rc_layout {
    size_t sn, rn, in_off;
    int    input_in_rbuf; /* then sbuf is none and rbuf holds rn elements */
} rc_layout;

static rc_layout rc_layout_of(const rc_state *st, int r) {
    const rc_spec *s = st->spec;
    size_t n = s->count, pn = n * (size_t)s->p;
    int root = r == s->root;
    rc_layout l;
    l.sn = l.rn = n;
    l.in_off = 0;
    switch (s->coll) {
    case REDCOLL_COLL_REDUCE: l.rn = root ? n : 0; break;
    case REDCOLL_COLL_BCAST: l.sn = 0; break;
    case REDCOLL_COLL_GATHER: l.rn = root ? pn : 0; if (root && s->in_place) l.sn = 0; l.in_off = (size_t)r * n; break;
    case REDCOLL_COLL_SCATTER: l.sn = root ? pn : 0; break;
    case REDCOLL_COLL_BARRIER: l.sn = l.rn = 0; break;
    case REDCOLL_COLL_ALLGATHER: l.rn = pn; l.in_off = (size_t)r * n; break;
    case REDCOLL_COLL_ALLGATHERV: l.sn = st->counts[r]; l.in_off = st->displs[r]; break;
    case REDCOLL_COLL_ALLTOALL: l.sn = l.rn = pn; break;
    case REDCOLL_COLL_REDUCE_SCATTER: l.rn = s->in_place ? n : st->counts[r]; break;
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK: l.sn = pn; l.rn = s->in_place ? pn : n; break;
    default: break;
    }
    l.input_in_rbuf = s->in_place && s->coll != REDCOLL_COLL_GATHER &&
                      s->coll != REDCOLL_COLL_SCATTER && s->coll != REDCOLL_COLL_BCAST &&
                      (s->coll != REDCOLL_COLL_REDUCE || root);
    return l;
}

/* Allocates and fills the per-rank buffers of the collective. */
static int rc_setup(rc_state *st) {
    const rc_spec *s = st->spec;
    int p = s->p, r;
    size_t n = s->count, es = st->esize, pn = n * (size_t)p;
    st->sbuf = (char **)calloc((size_t)p, sizeof(char *));
    st->rbuf = (char **)calloc((size_t)p, sizeof(char *));
    if (!st->sbuf || !st->rbuf) return 0;
    if (rc_irregular(s->coll)) {
        st->counts = (size_t *)calloc((size_t)p, sizeof(size_t));
        st->displs = (size_t *)calloc((size_t)p + 1, sizeof(size_t));
        if (!st->counts || !st->displs) return 0;
        rc_counts(p, n, st->counts);
        for (r = 0; r < p; ++r) st->displs[r + 1] = st->displs[r] + st->counts[r];
    }
    if (st->no_data) { /* every rank shares one untouched buffer, as large as any rank's */
        int whole = !rc_blocks(s->coll) && !rc_irregular(s->coll);
        char *dummy = (char *)calloc((whole ? n : pn) + 1, es);
        if (!dummy) return 0;
        for (r = 0; r < p; ++r) st->sbuf[r] = st->rbuf[r] = dummy;
        return 1;
    }
    for (r = 0; r < p; ++r) {
        rc_layout l = rc_layout_of(st, r);
        size_t sn = l.sn, rn = l.rn;
        int root = r == s->root;
        if (s->local_rank1 && r + 1 != s->local_rank1) continue;
        if (l.input_in_rbuf) {
            st->rbuf[r] = rn ? (char *)calloc(rn, es) : NULL;
            if (rn && !st->rbuf[r]) return 0;
            if (sn) rc_fill(st->dtype, st->op.kind, st->spec->seed, r, st->rbuf[r] + l.in_off * es, sn);
            sn = 0;
            rn = 0;
        }
        st->sbuf[r] = sn ? (char *)calloc(sn, es) : NULL;
        if (rn) st->rbuf[r] = (char *)calloc(rn, es);
        if ((sn && !st->sbuf[r]) || (rn && !st->rbuf[r])) return 0;
        if (st->sbuf[r]) rc_fill(st->dtype, st->op.kind, st->spec->seed, r, st->sbuf[r], sn);
        if (s->in_place && root && s->coll == REDCOLL_COLL_GATHER)
            rc_fill(st->dtype, st->op.kind, st->spec->seed, r, st->rbuf[r] + l.in_off * es, n);
        if (s->coll == REDCOLL_COLL_BCAST && root) rc_fill(st->dtype, st->op.kind, st->spec->seed, r, st->rbuf[r], n);
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
