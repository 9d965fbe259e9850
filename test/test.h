/* test.h - the redcoll test framework and the standard simulator sweep.

   The runner (test/main.c) is one translation unit that includes every
   suite file. A test is a function run by tf_test(); it passes when it made
   at least one check and none failed (a test that asserts nothing fails).
   The last line of a run is "N passed, N failed". */
#ifndef REDCOLL_TEST_H
#define REDCOLL_TEST_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long tf_checks, tf_failures, tf_passed, tf_failed;
static const char *tf_filter;
static int tf_verbose, tf_times; /* -t: each test's CPU seconds (to find the slow ones) */
/* -s K/N: of the tests the filter selects, the K-th, (K+N)-th, ... only, so N
   processes run the suite on N cores (make asan); the tests' order is fixed. */
static int tf_shard, tf_shards = 1, tf_selected;

static void tf_fail(const char *file, int line, const char *fmt, ...) {
    va_list ap;
    tf_failures++;
    if (tf_failures > 20 && !tf_verbose) return; /* per test; enough to diagnose */
    fprintf(stderr, "    %s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* CHECK(cond, "printf format", args...) */
#define CHECK(cond, ...)                                       \
    do {                                                       \
        tf_checks++;                                           \
        if (!(cond)) tf_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* Relative closeness for modeled times. */
static int tf_close(double got, double want) {
    double scale = fabs(want) > 1e-300 ? fabs(want) : 1.0;
    return fabs(got - want) <= 1e-9 * scale + 1e-18;
}

static void tf_test(const char *name, void (*fn)(void)) {
    clock_t t0 = clock();
    if (tf_filter && !strstr(name, tf_filter)) return;
    if (tf_selected++ % tf_shards != tf_shard) return;
    tf_checks = tf_failures = 0;
    fn();
    if (tf_failures == 0 && tf_checks > 0) {
        tf_passed++;
        printf("ok    %-52s %8ld checks", name, tf_checks);
        if (tf_times) printf(" %8.2f s", (double)(clock() - t0) / CLOCKS_PER_SEC);
        printf("\n");
    } else {
        tf_failed++;
        printf("FAIL  %-52s %ld of %ld checks failed%s\n", name, tf_failures, tf_checks,
               tf_checks == 0 ? " (a test without checks)" : "");
    }
    fflush(stdout);
}

/* ---- the standard sweep --------------------------------------------------- */

/* Process counts every schedule is checked on. */
static const int tf_sweep_p[] = { 1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                  15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                                  29, 30, 31, 32, 33, 48, 64, 96, 100, 127, 128, 129 };
#define TF_NP ((int)(sizeof tf_sweep_p / sizeof tf_sweep_p[0]))

static const char *tf_describe(const rc_spec *s) {
    static char buf[256];
    snprintf(buf, sizeof buf, "%s/%s p=%d count=%zu %s %s root=%d%s", redcoll_coll_name(s->coll),
             redcoll_algo_name(s->opts.algo), s->p, s->count, redcoll_dtype_name(s->dtype),
             s->op ? s->op : "sum", s->root, s->in_place ? " in-place" : "");
    return buf;
}

/* Runs one case and checks that every rank returned OK with the right,
   bitwise identical result. Returns 1 if it did. */
static int tf_run_ok(const rc_spec *s) {
    rc_outcome o;
    redcoll_result r = rc_run(s, &o);
    int ok = r == REDCOLL_OK && o.ok;
    CHECK(ok, "%s: %s%s%s", tf_describe(s), r ? redcoll_result_string(r) : o.why,
          o.rep.log ? "\n" : "", o.rep.log ? o.rep.log : "");
    rc_outcome_free(&o);
    return ok;
}

static int tf_has_in_place(redcoll_coll c) {
    return c != REDCOLL_COLL_BCAST && c != REDCOLL_COLL_BARRIER;
}

/* The sweep every schedule gets (DEVELOPERS' list): every p of tf_sweep_p with
   counts 0, 1, p-1, p+1 and 1000, alternating in place; every root for
   p <= 16 and roots 0, p/2, p-1 above; the non-commutative matrix product for
   every p (or the unsupported error when the schedule cannot keep order);
   every dtype x op at p = 5, 8 and 13; a large count at p = 7, 16 and 33
   (100003 elements per rank for the vector collectives, 10007 per block,
   10007 p per rank, for the block collectives: allgather, alltoall and
   reduce_scatter_block alike, so no rank holds more than 330 K elements).
   `opts` may carry knobs (groups, threshold, ...); its algo is overwritten. */
static void tf_sweep_opts(redcoll_coll coll, redcoll_algo algo, const redcoll_options *opts) {
    int pi, k, root;
    for (pi = 0; pi < TF_NP; ++pi) {
        int p = tf_sweep_p[pi];
        size_t counts[5];
        counts[0] = 0; counts[1] = 1; counts[2] = (size_t)(p - 1); counts[3] = (size_t)(p + 1);
        counts[4] = 1000;
        for (k = 0; k < 5; ++k) {
            rc_spec s = rc_spec_make(coll, algo, p, counts[k]);
            int roots[3], nroots = 1, j;
            if (opts) { s.opts = *opts; s.opts.algo = algo; }
            s.in_place = tf_has_in_place(coll) && (k % 2 == 1);
            roots[0] = 0;
            if (rc_rooted(coll) && p > 1) { roots[1] = p / 2; roots[2] = p - 1; nroots = 3; }
            if (rc_rooted(coll) && p <= 16 && k == 3) {
                for (root = 0; root < p; ++root) { s.root = root; tf_run_ok(&s); }
                continue;
            }
            for (j = 0; j < nroots; ++j) { s.root = roots[j]; tf_run_ok(&s); }
        }
        if (rc_reduces(coll)) { /* canonical order, or a clear refusal */
            rc_spec s = rc_spec_make(coll, algo, p, (size_t)p + 2);
            if (opts) { s.opts = *opts; s.opts.algo = algo; }
            s.op = "matmul";
            s.root = p > 1 ? p - 2 : 0;
            s.in_place = p % 2;
            if (algo == REDCOLL_ALGO_AUTO || redcoll_algo_keeps_order(coll, algo)) {
                tf_run_ok(&s);
            } else {
                rc_outcome o;
                rc_run(&s, &o);
                CHECK(o.error == REDCOLL_ERR_UNSUPPORTED, "%s: expected unsupported, got %s",
                      tf_describe(&s), redcoll_result_string(o.error));
                rc_outcome_free(&o);
            }
        }
    }
    if (rc_reduces(coll)) { /* every dtype x op */
        static const int ps[3] = { 5, 8, 13 };
        for (pi = 0; pi < 3; ++pi) {
            int d, op;
            for (d = 0; d < REDCOLL_DTYPE_COUNT; ++d)
                for (op = 0; op < REDCOLL_OP_USER; ++op) {
                    rc_spec s = rc_spec_make(coll, algo, ps[pi], 37);
                    if (!redcoll_op_valid_for((redcoll_op_kind)op, (redcoll_dtype)d)) continue;
                    if (opts) { s.opts = *opts; s.opts.algo = algo; }
                    s.dtype = (redcoll_dtype)d;
                    s.op = redcoll_op_name((redcoll_op_kind)op);
                    s.root = ps[pi] - 1;
                    tf_run_ok(&s);
                }
            {
                rc_spec s = rc_spec_make(coll, algo, ps[pi], 37);
                if (opts) { s.opts = *opts; s.opts.algo = algo; }
                s.op = "user_sum";
                tf_run_ok(&s);
            }
        }
    }
    {
        static const int ps[3] = { 7, 16, 33 };
        for (pi = 0; pi < 3; ++pi) {
            rc_spec s = rc_spec_make(coll, algo, ps[pi], rc_reduces(coll) && !rc_blocks(coll) ? 100003 : 10007);
            if (opts) { s.opts = *opts; s.opts.algo = algo; }
            s.dtype = REDCOLL_DOUBLE;
            s.root = ps[pi] / 3;
            tf_run_ok(&s);
        }
    }
}

static void tf_sweep(redcoll_coll coll, redcoll_algo algo) { tf_sweep_opts(coll, algo, NULL); }

/* One run of spec on the simulator with rank function fn (its arg: the
   case's rc_state), keeping a copy of every rank's rbuf (rank r: res[r] of
   bytes[r]) before the harness verifies and frees the buffers, so runs can
   be compared bitwise. Free with tf_capture_free. */
typedef struct tf_capture {
    rc_outcome o;
    char     **res;
    size_t    *bytes;
} tf_capture;

static redcoll_result tf_capture_run(const rc_spec *spec, redcoll_mock_rank_fn fn, tf_capture *out) {
    rc_state st;
    redcoll_mock_config cfg = spec->sim;
    redcoll_result e;
    int r, p = spec->p;
    out->res = (char **)calloc((size_t)p, sizeof *out->res);
    out->bytes = (size_t *)calloc((size_t)p, sizeof *out->bytes);
    if (!out->res || !out->bytes) return REDCOLL_ERR_OUT_OF_MEMORY;
    e = rc_begin(spec, &st, &out->o);
    if (e != REDCOLL_OK) return e;
    cfg.model = redcoll_mock_defaults(p).model;
    cfg.size = p;
    e = redcoll_mock_run(&cfg, fn, &st, &out->o.rep);
    if (e != REDCOLL_OK) { rc_teardown(&st); return e; }
    for (r = 0; r < p; ++r) {
        size_t b = rc_layout_of(&st, r).rn * st.esize;
        out->bytes[r] = b;
        out->res[r] = (char *)malloc(b + 1);
        if (out->res[r] && b) memcpy(out->res[r], st.rbuf[r], b);
    }
    rc_end(&st, &out->o);
    return REDCOLL_OK;
}

static void tf_capture_free(tf_capture *c, int p) {
    int r;
    for (r = 0; c->res && r < p; ++r) free(c->res[r]);
    free(c->res);
    free(c->bytes);
    rc_outcome_free(&c->o);
}

/* Stats of one case run without verification (counters tests). The caller
   frees o. Fails the test if the run did not succeed. */
static int tf_measure(rc_spec *s, rc_outcome *o) {
    redcoll_result r = rc_run(s, o);
    CHECK(r == REDCOLL_OK && o->ok, "%s: %s", tf_describe(s), r ? redcoll_result_string(r) : o->why);
    return r == REDCOLL_OK && o->ok;
}

static int tf_ceil_lg(int p) { int k = 0; while ((1 << k) < p) ++k; return k; }
static int tf_is_pof2(int p) { return p > 0 && (p & (p - 1)) == 0; }


/* A counting allocator (opts.allocator; user_data: one tf_count per rank or
   call): how often and how much the library takes, and what it never gave
   back. */
typedef struct tf_count {
    long      allocs, frees;
    long long live, peak; /* bytes handed out and not yet given back; their maximum */
} tf_count;

static void *tf_count_alloc(size_t bytes, void *user) {
    tf_count *k = (tf_count *)user;
    size_t *p = (size_t *)malloc(bytes + sizeof(max_align_t));
    if (!p) return NULL;
    *p = bytes;
    k->allocs++;
    k->live += (long long)bytes;
    if (k->live > k->peak) k->peak = k->live;
    return (char *)p + sizeof(max_align_t);
}

static void tf_count_free(void *ptr, void *user) {
    tf_count *k = (tf_count *)user;
    size_t *p = (size_t *)(void *)((char *)ptr - sizeof(max_align_t));
    k->frees++;
    k->live -= (long long)*p;
    free(p);
}

#endif /* REDCOLL_TEST_H */
