/* test_exact.c - reproducible sums (REDCOLL_SUM_EXACT): every element is the
   correctly rounded exact sum of its p inputs, checked bitwise against an
   exact reference the tests compute independently (the harness's long
   accumulator, rc_xacc), on every rank, for every reduction algorithm of
   allreduce / reduce / reduce_scatter / reduce_scatter_block, on the
   simulator and on threads, in place and not; and equal across p for the
   same multiset of inputs. Hand-made cases pin the special values. */
#include "transports/redcoll_shm.h"

#include <fenv.h>
#include <float.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h> /* MXCSR: flush-to-zero and denormals-are-zero */
#endif

/* ---- a driver for hand-made inputs ---------------------------------------------- */

/* One collective over p ranks with inputs in[r * total + i] (doubles; for
   REDCOLL_FLOAT they must be floats). out[r] receives rank r's result. */
typedef struct tx_job {
    int            fpenv;   /* 0: default; 1-3: rounding up, down, toward zero; 4: FTZ and DAZ */
    redcoll_coll   coll;
    redcoll_algo   algo;
    redcoll_dtype  dtype;
    int            p, root, in_place, shm;
    size_t         count;   /* allreduce / reduce: the vector; reduce_scatter_block: one block */
    const size_t  *counts;  /* reduce_scatter: per rank */
    const double  *in;
    char         **out;
    redcoll_result *res;
    int           *kept;    /* optional, per rank: the caller's rounding mode, FTZ and DAZ survived the call */
    int            peer;    /* the simulator reduces from the sender's memory (peer_reduce, as threads) */
    unsigned long long *msgs; /* optional, per rank: messages sent (the simulator) */
} tx_job;

static size_t tx_total(const tx_job *j) {
    size_t t = 0;
    int r;
    if (j->coll == REDCOLL_COLL_REDUCE_SCATTER) { for (r = 0; r < j->p; ++r) t += j->counts[r]; return t; }
    return j->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK ? j->count * (size_t)j->p : j->count;
}

/* Elements rank r gets, and where they start in the vector. */
static size_t tx_mine(const tx_job *j, int r, size_t *first) {
    size_t off = 0;
    int k;
    *first = 0;
    switch (j->coll) {
    case REDCOLL_COLL_ALLREDUCE: return j->count;
    case REDCOLL_COLL_REDUCE: return r == j->root ? j->count : 0;
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK: *first = (size_t)r * j->count; return j->count;
    default:
        for (k = 0; k < r; ++k) off += j->counts[k];
        *first = off;
        return j->counts[r];
    }
}

static void tx_put(redcoll_dtype d, void *dst, double v) {
    if (d == REDCOLL_DOUBLE) memcpy(dst, &v, 8);
    else { float f = (float)v; memcpy(dst, &f, 4); }
}

static redcoll_result tx_rank(const redcoll_transport *t, void *arg) {
    tx_job *j = (tx_job *)arg;
    int r = t->rank, ip = j->in_place && (j->coll != REDCOLL_COLL_REDUCE || r == j->root);
    size_t es = redcoll_dtype_size(j->dtype), total = tx_total(j), first, mine = tx_mine(j, r, &first), i;
    size_t rn = ip ? total : (j->coll == REDCOLL_COLL_ALLREDUCE || (j->coll == REDCOLL_COLL_REDUCE && r == j->root) ? total : mine);
    char *sb = (char *)malloc(total * es + 1), *rb = (char *)malloc(rn * es + 1);
    const void *s;
    redcoll_options o;
    redcoll_result res;
    fenv_t env;
#if defined(__x86_64__) || defined(__i386__)
    unsigned csr = _mm_getcsr();
#endif
    if (!sb || !rb) { free(sb); free(rb); return REDCOLL_ERR_OUT_OF_MEMORY; }
    memset(&o, 0, sizeof o);
    o.algo = j->algo;
    memset(rb, 0x5a, rn * es);
    for (i = 0; i < total; ++i) tx_put(j->dtype, (ip ? rb : sb) + i * es, j->in[(size_t)r * total + i]);
    fegetenv(&env); /* restored below: rank 0 may run on the caller's thread */
    if (j->fpenv >= 1 && j->fpenv <= 3)
        fesetround(j->fpenv == 1 ? FE_UPWARD : j->fpenv == 2 ? FE_DOWNWARD : FE_TOWARDZERO);
#if defined(__x86_64__) || defined(__i386__)
    if (j->fpenv == 4) _mm_setcsr(_mm_getcsr() | 0x8040);
#endif
    s = ip ? REDCOLL_IN_PLACE : sb;
    switch (j->coll) {
    case REDCOLL_COLL_ALLREDUCE:
        res = redcoll_allreduce(t, s, rb, j->count, j->dtype, REDCOLL_SUM_EXACT, &o); break;
    case REDCOLL_COLL_REDUCE:
        res = redcoll_reduce(t, s, rb, j->count, j->dtype, REDCOLL_SUM_EXACT, j->root, &o); break;
    case REDCOLL_COLL_REDUCE_SCATTER:
        res = redcoll_reduce_scatter(t, s, rb, j->counts, j->dtype, REDCOLL_SUM_EXACT, &o); break;
    default:
        res = redcoll_reduce_scatter_block(t, s, rb, j->count, j->dtype, REDCOLL_SUM_EXACT, &o); break;
    }
    if (j->kept) {
        j->kept[r] = fegetround() == (j->fpenv == 1 ? FE_UPWARD : j->fpenv == 2 ? FE_DOWNWARD
                                      : j->fpenv == 3 ? FE_TOWARDZERO : FE_TONEAREST);
#if defined(__x86_64__) || defined(__i386__)
        j->kept[r] &= (_mm_getcsr() & 0x8040) == (j->fpenv == 4 ? 0x8040u : (csr & 0x8040));
#endif
    }
    fesetenv(&env);
#if defined(__x86_64__) || defined(__i386__)
    _mm_setcsr(csr);
#endif
    memcpy(j->out[r], rb, mine * es);
    free(sb);
    free(rb);
    return res;
}

/* The correctly rounded exact sum of element i over the p ranks, as bits. */
static uint64_t tx_want(const tx_job *j, size_t i) {
    rc_xacc a;
    size_t total = tx_total(j);
    uint64_t w = 0;
    int r;
    memset(&a, 0, sizeof a);
    for (r = 0; r < j->p; ++r) rc_xadd(&a, j->in[(size_t)r * total + i]);
    rc_xresult(&a, j->dtype == REDCOLL_DOUBLE, &w);
    return w;
}

static uint64_t tx_bits(redcoll_dtype d, const char *p) {
    uint64_t w = 0;
    memcpy(&w, p, redcoll_dtype_size(d));
    return w;
}

static const char *tx_describe(const tx_job *j) {
    static char buf[200];
    snprintf(buf, sizeof buf, "%s %s/%s p=%d count=%zu %s root=%d%s", j->shm ? "shm" : "sim",
             redcoll_coll_name(j->coll), redcoll_algo_name(j->algo), j->p, j->count,
             redcoll_dtype_name(j->dtype), j->root, j->in_place ? " in-place" : "");
    return buf;
}

/* Runs the job and checks every rank's result bitwise against the exact
   reference. want (optional, total entries) are bits the results must also
   equal: a hand-computed value, or another run's. Returns 1 if all matched. */
static int tx_check(tx_job *j, const uint64_t *want) {
    size_t es = redcoll_dtype_size(j->dtype), total = tx_total(j), i;
    int r, ok = 1, bad = 0;
    redcoll_result run;
    j->out = (char **)calloc((size_t)j->p, sizeof(char *));
    j->res = (redcoll_result *)calloc((size_t)j->p, sizeof(redcoll_result));
    for (r = 0; j->out && r < j->p; ++r) j->out[r] = (char *)malloc(total * es + 1);
    if (!j->out || !j->res) { CHECK(0, "out of memory"); return 0; }
    if (j->shm) {
        redcoll_shm_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.timeout_seconds = 120;
        run = redcoll_shm_run_config(&cfg, j->p, tx_rank, j, j->res);
    } else {
        redcoll_mock_config cfg = redcoll_mock_defaults(j->p);
        redcoll_mock_report rep;
        cfg.peer_reduce = j->peer;
        run = redcoll_mock_run(&cfg, tx_rank, j, &rep);
        if (run == REDCOLL_OK) memcpy(j->res, rep.results, (size_t)j->p * sizeof *j->res);
        for (r = 0; run == REDCOLL_OK && j->msgs && r < j->p; ++r) j->msgs[r] = rep.stats[r].msgs_sent;
        redcoll_mock_report_free(&rep);
    }
    for (r = 0; r < j->p; ++r) {
        size_t first, mine = tx_mine(j, r, &first);
        if (j->res[r] != REDCOLL_OK) { ok = 0; CHECK(0, "%s: rank %d: %s", tx_describe(j), r, redcoll_result_string(j->res[r])); continue; }
        for (i = 0; i < mine && bad < 5; ++i) {
            uint64_t got = tx_bits(j->dtype, j->out[r] + i * es), w = tx_want(j, first + i);
            int good = got == w && (!want || got == want[first + i]);
            if (!good) {
                ++bad;
                ok = 0;
                CHECK(0, "%s: rank %d element %zu: got %016llx, exact %016llx%s%016llx", tx_describe(j), r,
                      first + i, (unsigned long long)got, (unsigned long long)w, want ? ", wanted " : "",
                      (unsigned long long)(want ? want[first + i] : 0));
            }
        }
    }
    CHECK(run == REDCOLL_OK && ok, "%s", tx_describe(j));
    for (r = 0; r < j->p; ++r) free(j->out[r]);
    free(j->out);
    free(j->res);
    return ok;
}

/* ---- the op itself ------------------------------------------------------------- */

static uint64_t tx_dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static uint32_t tx_fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static double tx_dfrom(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }
static float tx_ffrom(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }

#define TX_QNAN  0x7ff8000000000000ULL
#define TX_QNANF 0x7fc00000U

static uint64_t tx_local2(double a, double b) {
    redcoll_reduce_local(&a, &b, 1, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT);
    return tx_dbits(b);
}

static uint32_t tx_local2f(float a, float b) {
    redcoll_reduce_local(&a, &b, 1, REDCOLL_FLOAT, REDCOLL_SUM_EXACT);
    return tx_fbits(b);
}

static void test_exact_op(void) {
    int d;
    double x = 1, y = 2;
    int32_t i1 = 1, i2 = 2;
    CHECK(strcmp(redcoll_op_name(REDCOLL_OP_SUM_EXACT), "sum_exact") == 0, "name %s",
          redcoll_op_name(REDCOLL_OP_SUM_EXACT));
    CHECK(REDCOLL_OP_SUM_EXACT > REDCOLL_OP_USER && REDCOLL_OP_SUM_EXACT < REDCOLL_OP_KIND_COUNT,
          "appended after USER (enum values are ABI)");
    CHECK(REDCOLL_SUM_EXACT.kind == REDCOLL_OP_SUM_EXACT && REDCOLL_SUM_EXACT.commutative, "macro");
    for (d = 0; d < REDCOLL_DTYPE_COUNT; ++d)
        CHECK(redcoll_op_valid_for(REDCOLL_OP_SUM_EXACT, (redcoll_dtype)d) ==
                  (d == REDCOLL_FLOAT || d == REDCOLL_DOUBLE), "valid_for %s", redcoll_dtype_name((redcoll_dtype)d));
    CHECK(!redcoll_op_valid_for(REDCOLL_OP_SUM_EXACT, REDCOLL_OPAQUE(8)), "not on opaque");
    CHECK(redcoll_reduce_local(&x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT) == REDCOLL_OK && y == 3, "1 + 2");
    CHECK(redcoll_reduce_local(&i1, &i2, 1, REDCOLL_INT32, REDCOLL_SUM_EXACT) == REDCOLL_ERR_INVALID_ARG && i2 == 2,
          "int32 refused, untouched");
    /* two operands: the IEEE sum, NaN canonical */
    CHECK(tx_local2(tx_dfrom(0xfff4000000000001ULL), 1) == TX_QNAN, "NaN with payload and sign");
    CHECK(tx_local2(INFINITY, -INFINITY) == TX_QNAN, "inf - inf");
    CHECK(tx_local2(INFINITY, 1) == tx_dbits(INFINITY), "inf + 1");
    CHECK(tx_local2(-0.0, -0.0) == tx_dbits(-0.0), "-0 + -0");
    CHECK(tx_local2(-0.0, 0.0) == 0, "-0 + +0");
    CHECK(tx_local2(1.5, -1.5) == 0, "x - x = +0");
    CHECK(tx_local2(DBL_MAX, DBL_MAX) == tx_dbits(INFINITY), "overflow");
    CHECK(tx_local2(tx_dfrom(1), tx_dfrom(3)) == 4, "subnormals exact");
    CHECK(tx_local2f(tx_ffrom(0xffc00001U), 1) == TX_QNANF, "float NaN");
    CHECK(tx_local2f(-0.0f, -0.0f) == tx_fbits(-0.0f), "float -0");
    CHECK(tx_local2f(FLT_MAX, FLT_MAX) == tx_fbits(INFINITY), "float overflow");
}

/* ---- argument errors: the ordinary call's error, nothing touched ---------------- */

typedef struct tx_args { int bad; } tx_args;

static void tx_free_fn(void *p, void *user) { (void)user; free(p); }

/* Every failing form of every collective, once with SUM (double) and once with
   SUM_EXACT: the same error, no byte of rbuf changed, nothing sent. */
static redcoll_result tx_args_rank(const redcoll_transport *t, void *arg) {
    tx_args *a = (tx_args *)arg;
    double sb[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, rb[8];
    unsigned char ref[sizeof rb];
    size_t counts[4] = { 1, 2, 0, 1 }, huge[4] = { (size_t)-1, 2, 0, 1 };
    redcoll_options bad_alloc, wrong_algo;
    int k, e;
    memset(&bad_alloc, 0, sizeof bad_alloc);
    bad_alloc.allocator.alloc_fn = NULL;
    bad_alloc.allocator.free_fn = tx_free_fn;
    memset(&wrong_algo, 0, sizeof wrong_algo);
    wrong_algo.algo = REDCOLL_ALGO_DISSEMINATION;
    for (k = 0; k < 13; ++k)
        for (e = 0; e < 2; ++e) {
            redcoll_op op = e ? REDCOLL_SUM_EXACT : REDCOLL_SUM;
            redcoll_result r = REDCOLL_OK;
            memset(rb, 0x77, sizeof rb);
            memcpy(ref, rb, sizeof rb);
            switch (k) {
            case 0: r = redcoll_allreduce(t, sb, NULL, 4, REDCOLL_DOUBLE, op, NULL); break;
            case 1: r = redcoll_allreduce(t, sb, REDCOLL_IN_PLACE, 4, REDCOLL_DOUBLE, op, NULL); break;
            case 2: r = redcoll_allreduce(t, sb, rb, 4, REDCOLL_DOUBLE, op, &bad_alloc); break;
            case 3: r = redcoll_allreduce(t, sb, rb, 4, REDCOLL_DOUBLE, op, &wrong_algo); break;
            case 4: r = redcoll_reduce(t, sb, rb, 4, REDCOLL_DOUBLE, op, t->size, NULL); break;
            case 5: r = redcoll_reduce(t, REDCOLL_IN_PLACE, rb, 4, REDCOLL_DOUBLE, op, (t->rank + 1) % t->size, NULL); break;
            case 6: r = redcoll_reduce(t, NULL, rb, 4, REDCOLL_DOUBLE, op, 0, NULL); break;
            case 7: r = redcoll_reduce_scatter(t, sb, rb, NULL, REDCOLL_DOUBLE, op, NULL); break;
            case 8: r = redcoll_reduce_scatter(t, sb, rb, huge, REDCOLL_DOUBLE, op, NULL); break;
            case 9: r = redcoll_reduce_scatter(t, NULL, rb, counts, REDCOLL_DOUBLE, op, NULL); break;
            case 10: r = redcoll_reduce_scatter_block(t, sb, REDCOLL_IN_PLACE, 1, REDCOLL_DOUBLE, op, NULL); break;
            case 11: r = redcoll_reduce_scatter_block(t, sb, rb, 1, REDCOLL_DOUBLE, op, &wrong_algo); break;
            case 12: r = redcoll_allreduce(NULL, sb, rb, 4, REDCOLL_DOUBLE, op, NULL); break;
            }
            if (r != REDCOLL_ERR_INVALID_ARG || memcmp(rb, ref, sizeof rb) != 0) a[t->rank].bad = 100 + k;
        }
    /* types other than float and double */
    for (k = 0; k < REDCOLL_DTYPE_COUNT; ++k) {
        redcoll_dtype d = (redcoll_dtype)k;
        if (d == REDCOLL_FLOAT || d == REDCOLL_DOUBLE) continue;
        memset(rb, 0x77, sizeof rb);
        memcpy(ref, rb, sizeof rb);
        if (redcoll_allreduce(t, sb, rb, 1, d, REDCOLL_SUM_EXACT, NULL) != REDCOLL_ERR_INVALID_ARG ||
            redcoll_reduce(t, sb, rb, 1, d, REDCOLL_SUM_EXACT, 0, NULL) != REDCOLL_ERR_INVALID_ARG ||
            redcoll_reduce_scatter(t, sb, rb, counts, d, REDCOLL_SUM_EXACT, NULL) != REDCOLL_ERR_INVALID_ARG ||
            redcoll_reduce_scatter_block(t, sb, rb, 1, d, REDCOLL_SUM_EXACT, NULL) != REDCOLL_ERR_INVALID_ARG ||
            memcmp(rb, ref, sizeof rb) != 0)
            a[t->rank].bad = 200 + k;
    }
    /* count 0: OK, nothing sent */
    if (redcoll_allreduce(t, NULL, NULL, 0, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT, NULL) != REDCOLL_OK ||
        redcoll_reduce_scatter_block(t, NULL, NULL, 0, REDCOLL_FLOAT, REDCOLL_SUM_EXACT, NULL) != REDCOLL_OK)
        a[t->rank].bad = 300;
    return REDCOLL_OK;
}

/* A transport too large for the count fields: must refuse before sending. */
static redcoll_result tx_never_send(void *u, int dst, const void *b, size_t n, int tag) {
    (void)u; (void)dst; (void)b; (void)n; (void)tag;
    return REDCOLL_ERR_TRANSPORT;
}
static redcoll_result tx_never_recv(void *u, int src, void *b, size_t n, int tag) {
    (void)u; (void)src; (void)b; (void)n; (void)tag;
    return REDCOLL_ERR_TRANSPORT;
}
static redcoll_result tx_never_sendrecv(void *u, int dst, const void *sb, size_t sn, int src, void *rb,
                                        size_t rn, int tag) {
    (void)u; (void)dst; (void)sb; (void)sn; (void)src; (void)rb; (void)rn; (void)tag;
    return REDCOLL_ERR_TRANSPORT;
}

static void test_exact_args(void) {
    tx_args a[4];
    redcoll_mock_config cfg = redcoll_mock_defaults(4);
    redcoll_mock_report rep;
    redcoll_transport big;
    double x[2] = { 1, 2 }, y[2] = { 0, 0 };
    int r;
    memset(a, 0, sizeof a);
    CHECK(redcoll_mock_run(&cfg, tx_args_rank, a, &rep) == REDCOLL_OK, "run");
    for (r = 0; r < 4; ++r) {
        CHECK(rep.results[r] == REDCOLL_OK && a[r].bad == 0, "rank %d: failing case %d", r, a[r].bad);
        CHECK(rep.stats[r].msgs_sent == 0 && rep.stats[r].msgs_recv == 0, "rank %d sent %llu", r,
              rep.stats[r].msgs_sent);
    }
    redcoll_mock_report_free(&rep);
    memset(&big, 0, sizeof big);
    big.size = 1 << 21;
    big.send = tx_never_send; big.recv = tx_never_recv; big.sendrecv = tx_never_sendrecv;
    CHECK(redcoll_allreduce(&big, x, y, 2, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT, NULL) == REDCOLL_ERR_UNSUPPORTED &&
          y[0] == 0 && y[1] == 0, "p = 2^21: unsupported, nothing touched");
    big.size = (1 << 21) - 1;
    big.rank = big.size - 1;
    CHECK(redcoll_allreduce(&big, x, y, 2, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT, NULL) == REDCOLL_ERR_TRANSPORT,
          "p = 2^21 - 1 is accepted (and fails in the transport)");
}

/* ---- hand-made cases ---------------------------------------------------------- */

/* One element's multiset and the bits its exact sum must have. */
typedef struct tx_case { const char *what; int n; double v[6]; uint64_t want; } tx_case;

#define TX_P2(e) ldexp(1.0, e)

/* Runs every case as one element of a vector over p = the case's size (the
   element placed on rotating ranks across three copies), with every
   algorithm of every collective on transport `shm`. */
static void tx_cases(const tx_case *cs, int ncase, redcoll_dtype dtype, int shm) {
    int c, coll;
    for (c = 0; c < ncase; ++c) {
        const tx_case *k = &cs[c];
        int p = k->n, r, a;
        size_t count = 3, i;
        double *in = (double *)calloc((size_t)p * count * (size_t)p, sizeof(double));
        uint64_t *want = (uint64_t *)malloc(count * (size_t)p * sizeof(uint64_t));
        size_t *counts = (size_t *)calloc((size_t)p, sizeof(size_t));
        if (!in || !want || !counts) { CHECK(0, "out of memory"); free(in); free(want); free(counts); return; }
        for (coll = 0; coll < 4; ++coll) {
            static const redcoll_coll colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
                                                   REDCOLL_COLL_REDUCE_SCATTER,
                                                   REDCOLL_COLL_REDUCE_SCATTER_BLOCK };
            tx_job j;
            size_t total;
            memset(&j, 0, sizeof j);
            j.coll = colls[coll];
            j.dtype = dtype;
            j.p = p;
            j.shm = shm;
            j.count = count;
            j.counts = counts;
            for (r = 0; r < p; ++r) counts[r] = r == p - 1 ? count : 0; /* the last rank gets it all */
            total = tx_total(&j);
            for (i = 0; i < total; ++i) {
                for (r = 0; r < p; ++r) in[(size_t)r * total + i] = k->v[(r + (int)i) % p];
                want[i] = k->want;
            }
            j.in = in;
            for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
                if (!redcoll_algo_supported(j.coll, (redcoll_algo)a)) continue;
                j.algo = (redcoll_algo)a;
                j.root = (a + c) % p;
                j.in_place = (a + c) % 2;
                if (!tx_check(&j, want)) printf("      case: %s\n", k->what);
            }
        }
        free(in);
        free(want);
        free(counts);
    }
}

static const tx_case tx_dcases[] = {
    { "1e300 + 1 - 1e300", 3, { 1e300, 1, -1e300 }, 0x3ff0000000000000ULL },
    { "1e300 + 1 - 1e300 + 1e-300", 4, { 1e300, 1, -1e300, 1e-300 }, 0x3ff0000000000000ULL },
    { "1e16 + 1 - 1e16 + 1", 4, { 1e16, 1, -1e16, 1 }, 0x4000000000000000ULL },
    { "subnormals", 2, { 4.9406564584124654e-324, 4.9406564584124654e-324 }, 2 },
    { "subnormals to the smallest normal", 2, { 1.1125369292536007e-308, 1.1125369292536007e-308 }, 0x0010000000000000ULL },
    { "subnormal result of normals", 3, { 2.2250738585072014e-308, -2.2250738585072009e-308, 4.9406564584124654e-324 }, 2 },
    { "subnormal result of normals only", 2, { 3.3376107877608021e-308, -2.2250738585072014e-308 }, 0x0008000000000000ULL },
    { "all -0", 3, { -0.0, -0.0, -0.0 }, 0x8000000000000000ULL },
    { "one -0", 1, { -0.0 }, 0x8000000000000000ULL },
    { "-0 and +0", 2, { -0.0, 0.0 }, 0 },
    { "cancel to +0 with -0 around", 3, { -1.0, 1.0, -0.0 }, 0 },
    { "+inf", 3, { 1, INFINITY, -1e308 }, 0x7ff0000000000000ULL },
    { "-inf and +inf", 3, { -INFINITY, 2, INFINITY }, TX_QNAN },
    { "-inf twice", 2, { -INFINITY, -INFINITY }, 0xfff0000000000000ULL },
    { "signed NaN with payload", 3, { 1, -NAN, 2 }, TX_QNAN },
    { "NaN and inf", 2, { INFINITY, NAN }, TX_QNAN },
    { "overflow", 2, { DBL_MAX, DBL_MAX }, 0x7ff0000000000000ULL },
    { "no intermediate overflow", 3, { DBL_MAX, DBL_MAX, -DBL_MAX }, 0x7fefffffffffffffULL },
    { "negative overflow", 2, { -DBL_MAX, -DBL_MAX }, 0xfff0000000000000ULL },
    { "DBL_MAX + half an ulp: ties to even is up", 2, { DBL_MAX, 9.9792015476736e+291 }, 0x7ff0000000000000ULL },
    { "DBL_MAX + a quarter ulp", 2, { DBL_MAX, 4.9896007738368e+291 }, 0x7fefffffffffffffULL },
    { "tie to even (down)", 2, { 1, 1.1102230246251565e-16 }, 0x3ff0000000000000ULL },
    { "tie to even (up)", 2, { 1.0000000000000002, 1.1102230246251565e-16 }, 0x3ff0000000000002ULL },
    { "tie broken by a subnormal", 3, { 1, 1.1102230246251565e-16, 4.9406564584124654e-324 }, 0x3ff0000000000001ULL },
    { "tie broken downwards", 3, { 1, 1.1102230246251565e-16, -4.9406564584124654e-324 }, 0x3ff0000000000000ULL },
    { "0.1 + 0.2 + 0.3", 3, { 0.1, 0.2, 0.3 }, 0x3fe3333333333333ULL }, /* left to right: ...334 */
    { "sum of six, both signs", 6, { 3e200, -1e-200, 7.5, -3e200, 1e-200, -7.5 }, 0 },
};

static const tx_case tx_fcases[] = {
    { "1e30 + 1 - 1e30", 3, { 1e30f, 1, -1e30f }, 0x3f800000U },
    { "float subnormals", 2, { 1.4012984643e-45, 1.4012984643e-45 }, 2 },
    { "float all -0", 2, { -0.0, -0.0 }, 0x80000000U },
    { "float no intermediate overflow", 3, { FLT_MAX, FLT_MAX, -FLT_MAX }, 0x7f7fffffU },
    { "float overflow", 2, { FLT_MAX, FLT_MAX }, 0x7f800000U },
    { "float inf - inf", 2, { INFINITY, -INFINITY }, TX_QNANF },
    { "float tie to even", 2, { 1, 5.9604644775390625e-08 }, 0x3f800000U },
    { "float tie broken", 3, { 1, 5.9604644775390625e-08, 1.4012984643e-45 }, 0x3f800001U },
};

static void test_exact_cases(void) {
    tx_cases(tx_dcases, (int)(sizeof tx_dcases / sizeof tx_dcases[0]), REDCOLL_DOUBLE, 0);
    tx_cases(tx_fcases, (int)(sizeof tx_fcases / sizeof tx_fcases[0]), REDCOLL_FLOAT, 0);
}

static void test_exact_cases_shm(void) {
    tx_cases(tx_dcases, (int)(sizeof tx_dcases / sizeof tx_dcases[0]), REDCOLL_DOUBLE, 1);
    tx_cases(tx_fcases, (int)(sizeof tx_fcases / sizeof tx_fcases[0]), REDCOLL_FLOAT, 1);
}

/* ---- the same multiset on every p ---------------------------------------------- */

/* Value k of element i: magnitude 1e-300 .. 1e300 (float: 1e-37 .. 1e37),
   uniform in the exponent, random sign; every fifth element is A, -A, 1,
   B, -B, 1, ... (cancellation). */
static double tx_wide(int k, size_t i, int is_float) {
    uint32_t h = rc_hash(0x1234567U ^ (uint32_t)k * 2654435761U ^ (uint32_t)i * 40503U);
    int emax = is_float ? 123 : 996;
    double mant = 1.0 + (double)(rc_hash(h) & 0xfffff) / 1048576.0;
    if (i % 5 == 0) {
        uint32_t g = rc_hash((uint32_t)(i * 7 + (size_t)k / 3));
        double A = ldexp(1.0 + (double)(g & 0xffff) / 65536.0, (int)(g % (uint32_t)(2 * emax)) - emax);
        return k % 3 == 0 ? A : k % 3 == 1 ? -A : 1.0;
    }
    return ldexp(h & 1 ? -mant : mant, (int)(h % (uint32_t)(2 * emax)) - emax);
}

/* M values per element, placed on M of p ranks by a p-dependent permutation,
   -0 on the others (an extra -0 never changes an exact sum): every p and
   every allreduce algorithm must give the same bits, the exact sum's. */
static void test_exact_p_independent(void) {
    enum { M = 20, N = 200 };
    static const int ps[] = { 20, 21, 23, 24, 31, 32, 33, 48, 64, 100, 129, 257 };
    uint64_t *want = (uint64_t *)malloc(N * sizeof(uint64_t));
    int pi, a, dt;
    size_t i;
    if (!want) { CHECK(0, "out of memory"); return; }
    for (dt = 0; dt < 2; ++dt) {
        redcoll_dtype d = dt ? REDCOLL_FLOAT : REDCOLL_DOUBLE;
        for (i = 0; i < N; ++i) { /* the exact sums of the multisets */
            rc_xacc acc;
            int k;
            memset(&acc, 0, sizeof acc);
            for (k = 0; k < M; ++k) rc_xadd(&acc, tx_wide(k, i, dt));
            want[i] = 0;
            rc_xresult(&acc, !dt, &want[i]);
        }
        for (pi = 0; pi < (int)(sizeof ps / sizeof ps[0]); ++pi) {
            int p = ps[pi], r, k;
            double *in = (double *)malloc((size_t)p * N * sizeof(double));
            if (!in) { CHECK(0, "out of memory"); break; }
            for (i = 0; i < N; ++i) {
                int *slot = (int *)calloc((size_t)p, sizeof(int)); /* which value rank r holds, or -1 */
                for (r = 0; r < p; ++r) slot[r] = -1;
                for (k = 0; k < M; ++k) { /* the k-th value goes to a free rank chosen by (p, i, k) */
                    int at = (int)(rc_hash((uint32_t)(p * 1000003 + (int)i * 31 + k)) % (uint32_t)p);
                    while (slot[at] >= 0) at = (at + 1) % p;
                    slot[at] = k;
                }
                for (r = 0; r < p; ++r) {
                    in[(size_t)r * N + i] = slot[r] < 0 ? -0.0 : tx_wide(slot[r], i, dt);
                }
                free(slot);
            }
            for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
                tx_job j;
                if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)a)) continue;
                if (p > 64 && a % 3 != 0 && a != REDCOLL_ALGO_AUTO) continue; /* fewer on the largest p */
                memset(&j, 0, sizeof j);
                j.coll = REDCOLL_COLL_ALLREDUCE;
                j.algo = (redcoll_algo)a;
                j.dtype = d;
                j.p = p;
                j.count = N;
                j.in = in;
                j.in_place = (a + pi) % 2;
                tx_check(&j, want);
            }
            { /* and the rooted and scattered forms, AUTO */
                tx_job j;
                memset(&j, 0, sizeof j);
                j.dtype = d; j.p = p; j.in = in; j.count = N; j.root = p - 1;
                j.coll = REDCOLL_COLL_REDUCE;
                tx_check(&j, want);
                if (N % p == 0) {
                    j.coll = REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
                    j.count = N / (size_t)p;
                    tx_check(&j, want);
                }
            }
            free(in);
        }
    }
    free(want);
}

/* The results do not depend on the FP environment of the calling threads:
   every rounding mode, and flush-to-zero with denormals-are-zero (x86), give
   the bits of the default environment (the reference is computed there), and
   the caller finds its environment as it was (the rounding pass on x86 sets
   MXCSR to the default and back). */
static void test_exact_fpenv(void) {
    enum { PMAX = 5, N = 400 };
    static const int ps[2] = { 2, PMAX }; /* p = 2: the exact sum of two (one addition) */
    static double in[PMAX * N];
    int env, r, dt, P, pi, nenv = 4, kept[PMAX];
    size_t i;
#if defined(__x86_64__) || defined(__i386__)
    nenv = 5;
#endif
    for (pi = 0; pi < 2; ++pi)
    for (dt = 0; dt < 2; ++dt)
        for (env = 1; env < nenv; ++env) {
            tx_job j;
            P = ps[pi];
            for (r = 0; r < P; ++r)
                for (i = 0; i < N; ++i) {
                    double v = tx_wide(r, i, dt);
                    if ((i / REDCOLL__XBLOCK) % 2 == 0) /* blocks of 64 binades: the floating-point encoder */
                        v = ldexp(1.0 + (double)(rc_hash((uint32_t)(r * 7919 + (int)i)) & 0xffff) / 65536.0,
                                  (int)(rc_hash((uint32_t)(r * 31 + (int)i)) % 64) - 32) * (r % 2 ? -1 : 1);
                    else if (i % 7 == 3) v = ldexp(v, dt ? -120 : -1000); /* subnormals, near-subnormals */
                    else if (i % 11 == 5) v = r == 0 ? (dt ? FLT_MAX : DBL_MAX) : v;
                    in[(size_t)r * N + i] = dt ? (double)(float)v : v;
                }
            memset(&j, 0, sizeof j);
            j.fpenv = env;
            j.kept = kept;
            j.dtype = dt ? REDCOLL_FLOAT : REDCOLL_DOUBLE;
            j.p = P;
            j.in = in;
            j.count = N;
            j.coll = REDCOLL_COLL_ALLREDUCE;
            for (r = 0; r < P; ++r) kept[r] = 0;
            if (!tx_check(&j, NULL)) printf("      FP environment %d, p = %d\n", env, P);
            for (r = 0; r < P; ++r) CHECK(kept[r], "FP environment %d, p = %d: rank %d's changed (allreduce)", env, P, r);
            j.coll = REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
            j.count = N / P;
            for (r = 0; r < P; ++r) kept[r] = 0;
            if (!tx_check(&j, NULL)) printf("      FP environment %d, p = %d\n", env, P);
            for (r = 0; r < P; ++r)
                CHECK(kept[r], "FP environment %d, p = %d: rank %d's changed (reduce_scatter_block)", env, P, r);
        }
}

/* ---- the standard sweep with the harness's wide-range inputs ------------------- */

static const redcoll_coll tx_colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
                                          REDCOLL_COLL_REDUCE_SCATTER,
                                          REDCOLL_COLL_REDUCE_SCATTER_BLOCK };

/* Every algorithm of the four collectives (AUTO too) on every p of the
   standard sweep: a small count (0, 1, p-1, p+1 in turn) in double and
   100 + p elements in float, in place every other p, roots p/2 and p-1;
   100003 doubles (several rounds of limbs) at p = 3 and 16; p = 200 and 300
   for AUTO. Inputs and reference: the harness (rc_xinput, rc_xreference). */
static void test_exact_sweep(void) {
    int c, a, pi;
    for (c = 0; c < 4; ++c)
        for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
            if (!redcoll_algo_supported(tx_colls[c], (redcoll_algo)a)) continue;
            for (pi = 0; pi < TF_NP; ++pi) {
                int p = tf_sweep_p[pi];
                size_t small[4], div = tx_colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK ? (size_t)p : 1;
                rc_spec s = rc_spec_make(tx_colls[c], (redcoll_algo)a, p, 0);
                small[0] = 0; small[1] = 1; small[2] = (size_t)p - 1; small[3] = (size_t)p + 1;
                s.op = "sum_exact";
                s.dtype = REDCOLL_DOUBLE;
                s.count = small[pi % 4] / div + (div > 1 && pi % 4 > 1);
                s.in_place = p % 2 && s.count > 0;
                s.root = p / 2;
                tf_run_ok(&s);
                s.dtype = REDCOLL_FLOAT;
                s.count = (100 + (size_t)p) / div + 1;
                s.in_place = !(p % 2);
                s.root = p - 1;
                tf_run_ok(&s);
            }
        }
    for (c = 0; c < 4; ++c) {
        static const int big[2] = { 3, 16 }, many[2] = { 200, 300 };
        for (pi = 0; pi < 2; ++pi) {
            rc_spec s = rc_spec_make(tx_colls[c], REDCOLL_ALGO_AUTO, big[pi], 100003);
            s.op = "sum_exact";
            s.dtype = REDCOLL_DOUBLE;
            s.root = 1;
            s.in_place = pi;
            if (tx_colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK) s.count /= (size_t)big[pi];
            tf_run_ok(&s);
            s = rc_spec_make(tx_colls[c], REDCOLL_ALGO_AUTO, many[pi], 50);
            s.op = "sum_exact";
            s.dtype = pi ? REDCOLL_FLOAT : REDCOLL_DOUBLE;
            s.root = many[pi] - 3;
            tf_run_ok(&s);
        }
    }
}

/* The threads transport: every algorithm of the four collectives on p = 1..5,
   7, 8 and 16 threads, counts 0, 1, p+1, 300, and 65537 at p = 4 and 7
   (divided by p for reduce_scatter_block), in place and not, double and
   float (the harness's inputs are wide: about 36 int64 words per element). */
static void test_exact_shm(void) {
    static const int ps[] = { 1, 2, 3, 4, 5, 7, 8, 16 };
    int c, a, pi, k;
    for (c = 0; c < 4; ++c)
        for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
            if (!redcoll_algo_supported(tx_colls[c], (redcoll_algo)a)) continue;
            for (pi = 0; pi < (int)(sizeof ps / sizeof ps[0]); ++pi) {
                int p = ps[pi];
                size_t div = tx_colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK ? (size_t)p : 1;
                size_t counts[5];
                counts[0] = 0; counts[1] = 1; counts[2] = (size_t)p + 1; counts[3] = 300;
                counts[4] = 65537 / div;
                for (k = p == 16 ? 2 : 0; k < (p == 4 || p == 7 ? 5 : 4); ++k) {
                    rc_spec s = rc_spec_make(tx_colls[c], (redcoll_algo)a, p, counts[k]);
                    redcoll_shm_config cfg;
                    memset(&cfg, 0, sizeof cfg);
                    cfg.spin = k % 2 ? 300 : -1;
                    cfg.timeout_seconds = 120;
                    s.op = "sum_exact";
                    s.dtype = (k + pi) % 3 ? REDCOLL_DOUBLE : REDCOLL_FLOAT;
                    s.in_place = k % 2;
                    s.root = (p - 1) * (k % 2);
                    tshm_ok(&s, &cfg);
                }
            }
        }
}

/* ---- the local passes at every instruction-set level ------------------------------ */

/* A call object around caller-owned buffers for driving the passes directly:
   one segment of n elements, limb width L, nothing measured. */
static void tx_xsum(redcoll__xsum *x, redcoll__ctx *c, redcoll_transport *t, int dbl, int L, const void *in,
                    void *out, size_t n, uint16_t *info, int64_t *limb, size_t cap) {
    memset(x, 0, sizeof *x);
    memset(c, 0, sizeof *c);
    memset(t, 0, sizeof *t);
    c->t = t;
    c->size = 1;
    x->c = c;
    x->f = dbl ? &redcoll__xf64 : &redcoll__xf32;
    x->in = (const char *)in;
    x->out = (char *)out;
    x->total = x->each = n;
    x->segs = 1;
    redcoll__xwidth(x, L);
    x->nblocks = (n + REDCOLL__XBLOCK - 1) / REDCOLL__XBLOCK;
    x->cap = cap;
    x->info = info;
    x->limb = limb;
}

/* The correctly rounded value of (w0 + w1 2^L) 2^lo units, from the
   harness's long accumulator fed exact 32-bit pieces. */
static uint64_t tx_limbs_ref(int64_t w0, int64_t w1, int L, int lo, int dbl) {
    rc_xacc acc;
    uint64_t bits = 0;
    int unit = lo - (dbl ? 1074 : 149), j;
    int64_t w[2];
    w[0] = w0; w[1] = w1;
    memset(&acc, 0, sizeof acc);
    for (j = 0; j < 2; ++j) {
        int64_t hi = w[j] >> 32; /* arithmetic on GCC, Clang */
        double lo32 = (double)(uint32_t)(uint64_t)w[j];
        rc_xadd(&acc, ldexp(lo32, unit + j * L));
        rc_xadd(&acc, ldexp((double)hi, unit + j * L + 32));
    }
    rc_xresult(&acc, dbl, &bits);
    return bits;
}

/* A block's limb count comes from a multiply by x->Linv, not a division:
   equal to ceil((hi + 1 - lo) / L) for every range the words can hold
   (hi + 1 up to 2098 above lo = 0, every lo) at every limb width (p = 1 ..
   2^21 - 1: L = 62 .. 41). */
static void test_exact_block_k(void) {
    redcoll__xsum x;
    redcoll__ctx c;
    redcoll_transport t;
    uint16_t info[3];
    size_t bad = 0;
    int L, lo, span;
    for (L = 41; L <= 62; ++L) {
        tx_xsum(&x, &c, &t, 1, L, NULL, NULL, 1, info, NULL, 0);
        for (lo = 0; lo <= 2097; lo += 97)
            for (span = 1; lo + span <= 2098; ++span) {
                redcoll__xblk k;
                info[0] = (uint16_t)(lo + span);
                info[1] = (uint16_t)(0xffff - lo);
                info[2] = 0;
                k = redcoll__xblock(&x, 0);
                if ((k.K != (span + L - 1) / L || k.lo != lo) && bad++ < 3)
                    CHECK(0, "L=%d lo=%d span=%d: K %d, want %d", L, lo, span, k.K, (span + L - 1) / L);
            }
    }
    CHECK(bad == 0, "%zu limb counts wrong", bad);
}

/* The vectorised passes (range scan, encoding, rounding of the common
   blocks) at every level this build and CPU run, doubles and floats, limb
   widths of p = 2, 3, 9, 2^20:
   - rounding of random limb sums (K = 1 and 2, any sign, carries between
     limbs, ties, subnormal and, for floats, overflowing results) is bitwise
     the reference's;
   - ranges and limbs of one input per element equal the portable level's,
     and rounding them gives the input back (full blocks and a short tail;
     blocks of 60 binades, of zeros of both signs, with subnormals, with
     infinities). */
static void test_exact_loops(void) {
    enum { NB = 40, N = NB * REDCOLL__XBLOCK + 13, CAP = N * 64 };
    static const int Ls[] = { 61, 60, 58, 41 };
    static uint16_t info[3 * (NB + 1)], info0[3 * (NB + 1)];
    static int64_t limb[CAP], limb0[CAP];
    static uint64_t in[N], out[N];
    int dbl, li, lv, levels = 0;
    for (dbl = 0; dbl < 2; ++dbl)
        for (li = 0; li < 4; ++li)
            for (lv = 0; lv < REDCOLL__XLEVELS; ++lv) {
                const redcoll__xfmt *f = dbl ? &redcoll__xf64 : &redcoll__xf32;
                const redcoll__xloops *loops = redcoll__xloops_at(lv, f);
                const int L = Ls[li], es = dbl ? 8 : 4, span = 2 * L - f->frac - 2; /* binades K = 2 holds */
                redcoll__xsum x;
                redcoll__ctx c;
                redcoll_transport t;
                redcoll__xcur cur = { 0, 0, 0, 0 }, end;
                size_t i, b, bad = 0, words;
                if (!loops) continue;
                levels += dbl && li == 0;
                /* rounding of sums: block b has lo = lo_b, K = 1 + b % 2 */
                tx_xsum(&x, &c, &t, dbl, L, in, out, N, info, limb, CAP);
                for (b = 0; b < x.nblocks; ++b) {
                    uint32_t h = rc_hash((uint32_t)(b * 977 + (size_t)L * 31 + (size_t)dbl));
                    int K = 1 + (int)(b % 2), lo = dbl ? (int)(h % 1900) : (int)(h % 160);
                    info[3 * b] = (uint16_t)(lo + K * L);
                    info[3 * b + 1] = (uint16_t)(0xffff - lo);
                    info[3 * b + 2] = 0;
                    for (i = b * REDCOLL__XBLOCK; i < N && i < (b + 1) * REDCOLL__XBLOCK; ++i) {
                        uint32_t g = rc_hash((uint32_t)i ^ h), g2 = rc_hash(g);
                        int64_t big = (int64_t)1 << (62 - (int)(g2 % 8) * 5), w0, w1;
                        w0 = (int64_t)(((uint64_t)rc_hash(g2) << 32 | rc_hash(g2 + 1)) % (uint64_t)big);
                        w1 = (int64_t)(((uint64_t)rc_hash(g2 + 2) << 32 | rc_hash(g2 + 3)) % (uint64_t)big);
                        if (g & 1) w0 = -w0;
                        if (g & 2) w1 = -w1;
                        if (g % 7 == 3) w1 = 0;
                        if (g % 11 == 5) w0 = (int64_t)1 << (g % 60);          /* a tie or near one */
                        if (g % 13 == 6) { w0 = -((int64_t)1 << L); w1 = 1; }  /* carries cancel */
                        if (g % 17 == 8) { /* a tie in w1, broken (or not) by w0's bit 0 */
                            w1 = (((int64_t)1 << 53) + 1) << (g >> 8) % 8;
                            w0 = (int64_t)((g >> 12) % 3) - 1;
                            if (g & 4) { w1 = -w1; w0 = -w0; }
                        }
                        if (K == 1) limb[i] = w0;
                        else { limb[2 * i] = w0; limb[2 * i + 1] = w1; }
                    }
                }
                /* the limbs of block b start at b * 32 * K_avg: lay them out as the passes do
                   (a block's low limbs, then its high limbs) */
                {
                    size_t at = 0;
                    static int64_t packed[CAP];
                    for (b = 0; b < x.nblocks; ++b) {
                        size_t n0 = b * REDCOLL__XBLOCK, n = N - n0 < REDCOLL__XBLOCK ? N - n0 : REDCOLL__XBLOCK;
                        size_t K = 1 + b % 2;
                        for (i = 0; i < n * K; ++i) packed[at + i] = K == 1 ? limb[n0 + i] : limb[2 * n0 + 2 * (i % n) + i / n];
                        at += n * K;
                    }
                    memcpy(limb, packed, at * sizeof(int64_t));
                    end.b = x.nblocks;
                    loops->decode(&x, cur, end);
                    at = 0;
                    for (b = 0; b < x.nblocks; ++b) {
                        size_t n0 = b * REDCOLL__XBLOCK, n = N - n0 < REDCOLL__XBLOCK ? N - n0 : REDCOLL__XBLOCK;
                        int K = 1 + (int)(b % 2), lo = 0xffff - info[3 * b + 1];
                        for (i = 0; i < n; ++i) {
                            uint64_t want = tx_limbs_ref(packed[at + i], K == 2 ? packed[at + n + i] : 0, L, lo, dbl), got = 0;
                            memcpy(&got, (char *)out + (n0 + i) * (size_t)es, (size_t)es);
                            if (got != want && bad++ < 3)
                                CHECK(0, "level %d %s L=%d block %zu (K=%d lo=%d) element %zu: %llx, want %llx", lv,
                                      dbl ? "double" : "float", L, b, K, lo, i, (unsigned long long)got,
                                      (unsigned long long)want);
                        }
                        at += n * (size_t)K;
                    }
                }
                CHECK(bad == 0, "level %d %s L=%d: %zu roundings differ", lv, dbl ? "double" : "float", L, bad);
                /* one input per element: ranges, limbs, and back */
                for (i = 0; i < N; ++i) {
                    size_t blk = i / REDCOLL__XBLOCK;
                    uint32_t g = rc_hash((uint32_t)(i * 3 + 1)), g2 = rc_hash(g);
                    double v = ldexp(1.0 + (double)(g2 & 0xfffff) / 1048576.0,
                                     (int)(g % (uint32_t)span) - span / 2 + (int)(blk % 5) * 7);
                    if (g & 1) v = -v;
                    if (blk == 3) v = (g & 2) ? 0.0 : -0.0;
                    if (blk == 5 && i % 4 == 0) v = ldexp(v, dbl ? -1060 : -140);
                    if (blk == 7 && i % 9 == 0) v = (g & 2) ? INFINITY : 1e30;
                    if (dbl) memcpy(&in[i], &v, 8);
                    else { float fv = (float)v; memcpy((char *)in + 4 * i, &fv, 4); }
                }
                tx_xsum(&x, &c, &t, dbl, L, in, out, N, info, limb, CAP);
                loops->ranges(&x);
                words = loops->encode(&x, cur, &end);
                CHECK(end.b == x.nblocks, "level %d: one round expected", lv);
                if (lv == 0) { memcpy(info0, info, sizeof info); memcpy(limb0, limb, words * sizeof(int64_t)); }
                else {
                    CHECK(memcmp(info0, info, sizeof info) == 0, "level %d %s L=%d: range words differ", lv,
                          dbl ? "double" : "float", L);
                    CHECK(memcmp(limb0, limb, words * sizeof(int64_t)) == 0, "level %d %s L=%d: limbs differ", lv,
                          dbl ? "double" : "float", L);
                }
                memset(out, 0x5a, sizeof out);
                loops->decode(&x, cur, end);
                CHECK(memcmp(in, out, N * (size_t)es) == 0, "level %d %s L=%d: one input does not round to itself",
                      lv, dbl ? "double" : "float", L);
            }
    CHECK(levels >= 1, "no level ran");
    if (tf_verbose) printf("      %d instruction-set levels of the passes run here\n", levels);
}

/* ---- failures, no-data mode, scratch ---------------------------------------------- */

/* A transport failure at any call of any rank: that rank reports it, every
   other rank returns (released, never hung), nothing is left allocated
   (the sanitizer builds check the latter). c = 4: an allreduce long enough
   for reduce_scatter + allgatherv rounds. */
static void test_exact_faults(void) {
    int c, call;
    for (c = 0; c < 5; ++c)
        for (call = 1; call <= 12; ++call) {
            rc_spec s = rc_spec_make(tx_colls[c % 4], REDCOLL_ALGO_AUTO, 5, c == 4 ? 20000 : 300);
            rc_outcome o;
            redcoll_result r;
            s.op = "sum_exact";
            s.dtype = REDCOLL_DOUBLE;
            s.root = 2;
            s.sim.fail_rank = call % 5;
            s.sim.fail_call = call;
            r = rc_run(&s, &o);
            CHECK(r == REDCOLL_OK && !o.rep.deadlocked, "%s fail call %d: run %s, deadlock %d", tf_describe(&s),
                  call, redcoll_result_string(r), o.rep.deadlocked);
            CHECK(o.wrong == 0, "%s fail call %d: a rank that returned OK is wrong", tf_describe(&s), call);
            rc_outcome_free(&o);
        }
}

/* No-data mode (the simulator at scale): runs, reports messages, models
   blocks of 64 binades, and allocates no vectors (its round buffer and the
   inner collectives' are never-touched addresses): what the allocator holds
   at once, per rank, stays far below one round (1 MiB): index arrays. */
static void test_exact_nodata(void) {
    int c;
    for (c = 0; c < 4; ++c) {
        rc_spec s = rc_spec_make(tx_colls[c], REDCOLL_ALGO_AUTO, 300, 1 << 16);
        rc_outcome o;
        tf_count k = { 0, 0, 0, 0 };
        s.op = "sum_exact";
        s.dtype = REDCOLL_DOUBLE;
        s.sim.no_data = 1;
        s.opts.allocator.alloc_fn = tf_count_alloc;
        s.opts.allocator.free_fn = tf_count_free;
        s.opts.allocator.user_data = &k;
        if (tx_colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK) s.count = 1 << 8;
        if (tf_measure(&s, &o)) {
            CHECK(o.rep.stats[0].msgs_sent > 0 && o.rep.stats[0].bytes_sent > 0, "%s: no traffic", tf_describe(&s));
            CHECK(k.peak / 300 <= 16 * 1024, "%s: the allocator held %lld bytes per rank at once",
                  tf_describe(&s), k.peak / 300);
        }
        rc_outcome_free(&o);
    }
}

/* Scratch does not grow with the inputs' range nor with p: 1 M doubles whose
   blocks span the whole exponent range (35 limbs each) hold at most 6 bytes
   per block of range words, a 1 MiB round buffer and what the inner
   allreduce needs for that round (at most about one more). (p = 2 adds in
   the ordinary schedules: exact/pair.) */
static void test_exact_scratch(void) {
    static const int ps[] = { 3, 5, 64 };
    int pi;
    for (pi = 0; pi < 3; ++pi) {
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_AUTO, ps[pi], (size_t)1 << 20);
        rc_outcome o;
        unsigned long long bound = ((size_t)1 << 20) / 32 * 6 + 3 * ((size_t)1 << 20);
        s.op = "sum_exact";
        s.dtype = REDCOLL_DOUBLE;
        if (ps[pi] == 64) { s.sim.no_data = 1; s.count = (size_t)1 << 22; bound = ((size_t)1 << 22) / 32 * 6 + 3 * ((size_t)1 << 20); }
        if (tf_measure(&s, &o)) {
            int r;
            for (r = 0; r < ps[pi]; ++r)
                CHECK(o.rep.stats[r].scratch_bytes <= bound, "p=%d rank %d: %llu bytes of scratch > %llu", ps[pi], r,
                      o.rep.stats[r].scratch_bytes, bound);
        }
        rc_outcome_free(&o);
    }
}

/* A long AUTO allreduce splits its rounds (reduce_scatter + allgatherv)
   only where the model says it pays (redcoll__xsplit_pays): at p = 64 the
   pairwise and ring steps cost 5.8x the ordinary sum's modeled time, the
   allreduce of the limbs 3.6x; at p = 4 the split is the cheaper one. */
static void test_exact_split_pays(void) {
    static const int ps[] = { 4, 64 };
    static const double bound[] = { 2.2, 3.7 };
    int k;
    for (k = 0; k < 2; ++k) {
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_AUTO, ps[k], (size_t)1 << 20);
        rc_outcome ex, ord;
        s.dtype = REDCOLL_DOUBLE;
        s.sim.no_data = 1;
        s.op = "sum";
        if (!tf_measure(&s, &ord)) { rc_outcome_free(&ord); continue; }
        s.op = "sum_exact";
        if (tf_measure(&s, &ex))
            CHECK(ex.rep.time <= bound[k] * ord.rep.time, "p=%d: exact %g s, ordinary %g s (%.2fx > %.1fx)", ps[k],
                  ex.rep.time, ord.rep.time, ex.rep.time / ord.rep.time, bound[k]);
        rc_outcome_free(&ex);
        rc_outcome_free(&ord);
    }
}

/* p = 2 on x86-64: the exact sum of two is one IEEE addition, run inside
   the ordinary schedules (redcoll__xpair), so every collective and
   algorithm costs what the ordinary SUM costs: the same messages, bytes,
   reduced elements, rounds, scratch and modeled time, with no range step
   and no limbs. Results are checked by rc_run (the sweep and the
   FP-environment test check the bits against the exact reference). */
static void test_exact_pair(void) {
    int c, a, k;
    static const size_t counts[] = { 1, 7, 1000, 100003 };
    for (c = 0; c < 4; ++c)
        for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
            if (!redcoll_algo_supported(tx_colls[c], (redcoll_algo)a)) continue;
            if (tx_colls[c] == REDCOLL_COLL_REDUCE_SCATTER_BLOCK &&
                !redcoll_algo_supported(REDCOLL_COLL_REDUCE_SCATTER, (redcoll_algo)a)) continue;
            for (k = 0; k < 4; ++k) {
                rc_spec s = rc_spec_make(tx_colls[c], (redcoll_algo)a, 2, counts[k]);
                rc_outcome ex, ord;
                int r;
                s.dtype = k % 2 ? REDCOLL_FLOAT : REDCOLL_DOUBLE;
                s.in_place = k == 2;
                s.root = 1;
                s.op = "sum";
                if (!tf_measure(&s, &ord)) { rc_outcome_free(&ord); continue; }
                s.op = "sum_exact";
                if (tf_measure(&s, &ex))
                    for (r = 0; r < 2; ++r) {
                        const redcoll_mock_stats *x = &ex.rep.stats[r], *o = &ord.rep.stats[r];
                        if (!REDCOLL__XPAIR_ON) break; /* the general method: its own path, counts of its own */
                        CHECK(x->msgs_sent == o->msgs_sent && x->bytes_sent == o->bytes_sent &&
                                  x->elems_reduced == o->elems_reduced && x->rounds == o->rounds &&
                                  x->scratch_bytes == o->scratch_bytes && x->time == o->time,
                              "%s rank %d: exact %llu msgs %llu B %llu el %ld rounds %llu scratch %g s, "
                              "ordinary %llu %llu %llu %ld %llu %g", tf_describe(&s), r, x->msgs_sent,
                              x->bytes_sent, x->elems_reduced, x->rounds, x->scratch_bytes, x->time,
                              o->msgs_sent, o->bytes_sent, o->elems_reduced, o->rounds, o->scratch_bytes,
                              o->time);
                    }
                rc_outcome_free(&ex);
                rc_outcome_free(&ord);
            }
        }
}

/* The pair kernel (redcoll_reduce_local and p = 2) under a caller's FP
   environment that would change an addition: rounding upward, and FTZ/DAZ
   (x86); the caller's environment is back afterwards. */
#if REDCOLL__FENV_CONTROL
static void test_exact_pair_fpenv(void) {
    double one = 1, tiny = 0x1p-60, sub = 0x1p-1070, s2 = 0x1p-1070;
    float fsub = 0x1p-140f, fs2 = 0x1p-140f;
    unsigned csr = _mm_getcsr();
    fesetround(FE_UPWARD);
    CHECK(tx_local2(tiny, one) == tx_dbits(1.0), "1 + 2^-60 rounds to nearest, not upward");
    CHECK(fegetround() == FE_UPWARD, "the caller's rounding mode is back");
    fesetround(FE_TONEAREST);
    _mm_setcsr(csr | 0x8040); /* FTZ, DAZ */
    redcoll_reduce_local(&sub, &s2, 1, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT);
    redcoll_reduce_local(&fsub, &fs2, 1, REDCOLL_FLOAT, REDCOLL_SUM_EXACT);
    CHECK((_mm_getcsr() & 0x8040) == 0x8040, "FTZ and DAZ are back");
    _mm_setcsr(csr);
    CHECK(s2 == 0x1p-1069 && fs2 == 0x1p-139f, "subnormal sums exact under FTZ/DAZ: %a %a", s2, (double)fs2);
}
#endif

/* ---- the local sums' fast way and its fallback ---------------------------------- */

/* Value of rank r for element i of the fold test: each element one pattern
   the certified fast way (redcoll__xfast) must either get right or hand to
   the exact way: sums near and at midpoints (exact ties, ties missed by a
   tiny remainder either side, or by an error whose sum rounds, just below
   a power of two), cancellation,
   dense full-precision sums whose errors round again, subnormal, overflowing
   and special values, signed zeros, integers; in blocks of one pattern,
   and one block in twelve of all of them. */
static double tx_fold_value(int r, size_t i, int p) {
    uint32_t h = rc_hash((uint32_t)i * 2654435761U ^ 0x9e3779b9U), g = rc_hash(h ^ (uint32_t)r * 40503U);
    uint32_t b = (uint32_t)(i / REDCOLL__XBLOCK) % 12; /* a block of one pattern (one hard value sends a block the exact way) */
    h = b == 11 ? h : (h / 11) * 11 + b;
    double m = 1.0 + (double)(((uint64_t)rc_hash(g) << 20 ^ rc_hash(g + 1)) & 0xfffffffffffffULL) / 4503599627370496.0;
    double half = ldexp(1.0, -53 - (int)(h >> 8 & 7)), sgn = (h >> 3 & 1) ? -1.0 : 1.0;
    int last = r == p - 1;
    switch (h % 11) {
    case 10: /* a tie decided by an error the second level sums inexactly (p >= 5) */
        return sgn * (r == 0 ? 1.0 + (double)(h >> 12 & 0xfe) * 0x1p-52 : r == 1 ? 0x1p-53 : r == 2 ? 0x1p-120
                      : r == 3 ? 0x1p-200 : r == 4 ? -0x1p-120 : 0.0);
    case 0: return ldexp(g & 1 ? -m : m, (int)(g >> 1 & 15) - 8);                /* dense */
    case 1: return r == 0 ? sgn * (1.0 + (double)(h >> 12 & 0xff) * 0x1p-52)       /* a tie missed */
                 : r == 1 ? sgn * half : ldexp(g & 1 ? -1.0 : 1.0, -106 - (int)(g >> 1 & 63) - r);
    case 2: return r == 0 ? 1.0 + (double)(h >> 12 & 0xff) * 0x1p-52 : r == 1 ? 0x1p-53 : (r % 2 ? -0.0 : 0.0);
    case 3: return r == 0 ? ldexp(m, 40) : r == 1 ? -ldexp(m, 40) : ldexp(g & 1 ? -m : m, -(int)(g >> 1 & 31));
    case 4: return r == 0 ? 0x1p10 : r == 1 ? -0x1p-44 : last ? -ldexp(1.0, -100 - (int)(g & 7)) * sgn : 0.0;
    case 5: return ldexp(g & 1 ? -m : m, -1074 + 52 - (int)(g >> 1 & 7) + (int)(h >> 9 & 63));
    case 6: return r == 0 ? DBL_MAX : r == 1 ? (h & 16 ? DBL_MAX : -DBL_MAX) : r == 2 ? -DBL_MAX : m;
    case 7: return r == 0 ? (h & 16 ? INFINITY : -0.0) : r == 1 ? (h & 32 ? -INFINITY : NAN) : m;
    case 8: return (g & 3) ? -0.0 : 0.0;
    default: return (double)((int32_t)g >> 8);                                   /* integers */
    }
}

/* Job j (all but its inputs set) on j->p ranks' j->count elements of
   tx_fold_value, checked bitwise against the exact reference on every
   rank; whether it passed. */
static int tx_fold_check(tx_job *j) {
    const int p = j->p;
    const size_t n = j->count;
    double *in = (double *)malloc((size_t)p * n * sizeof(double));
    size_t i;
    int r, ok;
    if (!in) { CHECK(0, "out of memory"); return 0; }
    for (r = 0; r < p; ++r)
        for (i = 0; i < n; ++i) { /* floats: the value rounded to float */
            double v = tx_fold_value(r, i, p);
            in[(size_t)r * n + i] = j->dtype == REDCOLL_FLOAT ? (double)(float)v : v;
        }
    j->in = in;
    ok = tx_check(j, NULL);
    j->in = NULL;
    free(in);
    return ok;
}

/* One run of the fold test: p ranks, n elements, root p / 2. */
static void tx_fold_run(int p, size_t n, int shm, redcoll_coll coll, redcoll_dtype dtype, int in_place) {
    tx_job j;
    memset(&j, 0, sizeof j);
    j.coll = coll;
    j.dtype = dtype;
    j.p = p;
    j.count = n;
    j.root = p / 2;
    j.shm = shm;
    j.in_place = in_place;
    tx_fold_check(&j);
}

/* The gathered and exchanged paths run the local sums (steps 1 to 3 on a
   rank alone): on the simulator at p = 3 .. 32 and on threads, allreduce
   and reduce, AUTO, the patterns above, checked bitwise against the exact
   reference on every rank; several exchanged rounds (the last one short)
   at p = 3 and 33; and every p from 1 to 33 at a length no rank count
   gathers (exchanged from p = 3 on the simulator's model), doubles and
   floats, and for doubles at 4096 p + 17 elements, where the exchange is
   pairwise and adds each rank's inputs as they arrive (redcoll__xacc).
   p = 2 on threads and the simulator: the pair path, or with
   REDCOLL_NO_EXACT_PAIR (suite exact-general) the general method. */
static void test_exact_fold(void) {
    static const struct { int p; size_t n; int shm; redcoll_coll coll; } runs[] = {
        { 3, 1000, 0, REDCOLL_COLL_ALLREDUCE }, { 4, 997, 0, REDCOLL_COLL_ALLREDUCE },
        { 5, 1000, 0, REDCOLL_COLL_REDUCE }, { 7, 700, 0, REDCOLL_COLL_ALLREDUCE },
        { 8, 1000, 0, REDCOLL_COLL_ALLREDUCE }, { 16, 300, 0, REDCOLL_COLL_ALLREDUCE },
        { 32, 250, 0, REDCOLL_COLL_ALLREDUCE }, { 3, 40001, 0, REDCOLL_COLL_ALLREDUCE },
        { 4, 40000, 0, REDCOLL_COLL_ALLREDUCE }, { 16, 65536, 0, REDCOLL_COLL_ALLREDUCE },
        { 3, 300001, 0, REDCOLL_COLL_ALLREDUCE }, { 33, 300001, 0, REDCOLL_COLL_ALLREDUCE },
        { 3, 5000, 1, REDCOLL_COLL_ALLREDUCE }, { 4, 40003, 1, REDCOLL_COLL_ALLREDUCE },
        { 2, 3000, 1, REDCOLL_COLL_ALLREDUCE }, { 2, 40001, 1, REDCOLL_COLL_ALLREDUCE },
        { 2, 300001, 0, REDCOLL_COLL_ALLREDUCE }
    };
    int k;
    for (k = 0; k < (int)(sizeof runs / sizeof runs[0]); ++k)
        tx_fold_run(runs[k].p, runs[k].n, runs[k].shm, runs[k].coll, REDCOLL_DOUBLE, k % 2);
    for (k = 1; k <= 33; ++k) {
        tx_fold_run(k, 9001, 0, REDCOLL_COLL_ALLREDUCE, REDCOLL_DOUBLE, k % 2);
        tx_fold_run(k, 17001, 0, REDCOLL_COLL_ALLREDUCE, REDCOLL_FLOAT, !(k % 2));
        tx_fold_run(k, 4096 * (size_t)k + 17, 0, REDCOLL_COLL_ALLREDUCE, REDCOLL_DOUBLE, !(k % 2));
    }
}

/* Where the arriving path takes over from the exchanged one
   (redcoll__xarrive_beats): an allreduce of doubles with 64 to 256 KiB of
   inputs over all ranks, on a transport that reduces from the sender's
   memory (the simulator with peer_reduce, as threads), at p = 2 and 3:
   each rank sends its whole vector to each peer, p - 1 messages; without
   peer_reduce, beyond 256 KiB, and at p = 4 (whose three steps cost more
   than an allgather), the exchanged path (an alltoall and an allgatherv:
   more). Results bitwise against the exact reference on every
   rank, in place and not, with the fold test's patterns (ties, -0, inf,
   NaN, overflow, blocks the exact way redoes); and the same lengths on
   threads. p = 2 counts only for the general method (exact-general): else
   the pair path runs. */
static void test_exact_arrive(void) {
    static const struct { int p; size_t n; int peer, arrive; } runs[] = {
        { 2, 12000, 1, 1 }, { 2, 16384, 1, 1 }, { 3, 9000, 1, 1 }, { 4, 6000, 1, 0 },
        { 2, 12000, 0, 0 }, { 3, 9000, 0, 0 }, { 2, 16385, 1, 0 }, { 3, 11000, 1, 0 }
    };
    unsigned long long msgs[4];
    int k, r, ip;
    for (k = 0; k < (int)(sizeof runs / sizeof runs[0]); ++k)
        for (ip = 0; ip < 2; ++ip) {
            const int p = runs[k].p;
            tx_job j;
            memset(&j, 0, sizeof j);
            j.coll = REDCOLL_COLL_ALLREDUCE;
            j.dtype = REDCOLL_DOUBLE;
            j.p = p;
            j.count = runs[k].n;
            j.in_place = ip;
            j.peer = runs[k].peer;
            j.msgs = msgs;
            for (r = 0; r < p; ++r) msgs[r] = 0;
            if (tx_fold_check(&j) && !(p == 2 && REDCOLL__XPAIR_ON))
                for (r = 0; r < p; ++r)
                    CHECK(runs[k].arrive ? msgs[r] == (unsigned long long)p - 1 : msgs[r] > (unsigned long long)p - 1,
                          "%s, peer_reduce %d: rank %d sent %llu messages, %s", tx_describe(&j), j.peer, r, msgs[r],
                          runs[k].arrive ? "want p - 1 (added as they arrive)" : "want more (exchanged)");
            if (runs[k].peer && runs[k].arrive) { /* threads */
                j.shm = 1;
                j.msgs = NULL;
                tx_fold_check(&j);
            }
        }
}

static void suite_exact(void) {
    tf_test("exact/op", test_exact_op);
    tf_test("exact/args", test_exact_args);
    tf_test("exact/cases", test_exact_cases);
    tf_test("exact/p_independent", test_exact_p_independent);
    tf_test("exact/fpenv", test_exact_fpenv);
    tf_test("exact/sweep", test_exact_sweep);
    tf_test("exact/loops", test_exact_loops);
    tf_test("exact/block_k", test_exact_block_k);
    tf_test("exact/faults", test_exact_faults);
    tf_test("exact/nodata", test_exact_nodata);
    tf_test("exact/scratch", test_exact_scratch);
    tf_test("exact/split where the model says it pays", test_exact_split_pays);
    tf_test("exact/pair", test_exact_pair);
    tf_test("exact/fold: the local sums, certified or exact", test_exact_fold);
    tf_test("exact/arrive: whole vectors added as they arrive where the model says so", test_exact_arrive);
#if REDCOLL__FENV_CONTROL
    tf_test("exact/pair/fpenv", test_exact_pair_fpenv);
#endif
    tf_test("exact/shm/cases", test_exact_cases_shm);
    tf_test("exact/shm/sweep", test_exact_shm);
}
