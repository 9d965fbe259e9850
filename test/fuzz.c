/* fuzz.c - random calls of the public API on the simulator, checked.

   Usage: fuzz [-t SECONDS] [-n CASES] [-s SEED] [-c CASE] [-v]
   Runs random cases for SECONDS (default 60) or CASES; SEED (default: from
   the clock, printed) and CASE replay one case: every case is a function of
   (SEED, its index) only. The last line is "1 passed, 0 failed" or
   "0 passed, 1 failed", as the suites print, so `make test` counts it.

   A case draws a collective, an algorithm (its own, AUTO, or now and then
   another collective's), p (mostly 1..33, then up to 600), a count (0, 1,
   below p, not divisible by p, large), dtype and op (predefined, a
   non-commutative matrix product, a user sum; sometimes invalid for the
   type), root (sometimes out of range), in place or not, options
   (segment, threshold, groups, level algorithms, selector, nodes), and
   maybe a fault on one rank or one rank disagreeing about the algorithm or
   the root. Whatever the case, these must hold:
     - a rank that returns OK holds the canonical-order sequential result
       (redcoll/harness.h checks it bytewise);
     - a rank that returns an argument error (invalid argument, unsupported)
       left every byte of its buffers as they were;
     - no rank's send buffer changes (when the input does not live in rbuf);
     - a case that is invalid by construction fails with an argument error
       on every rank; a well-formed one without fault or disagreement ends
       OK on every rank, or with the same argument error on every rank. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "fresh_memory.h"
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"

#include <stdint.h>
#include <time.h>

typedef enum fz_expect {
    FZ_OK_OR_UNIFORM_ARG_ERROR, /* well-formed, one view: all OK or the same argument error */
    FZ_ARG_ERROR,               /* invalid by construction */
    FZ_NO_WRONG_RESULT          /* fault or disagreement: errors allowed, wrong data not */
} fz_expect;

typedef struct fz_case {
    rc_spec   spec;
    fz_expect expect;
    int       odd_rank;   /* disagreement: this rank uses odd_opts / odd_root; -1 none */
    redcoll_options odd_opts;
    int       odd_root;
    char      what[256];  /* the case in words, for a failure report */
} fz_case;

/* ---- random numbers: splitmix64, one stream per case ------------------------- */

static uint64_t fz_next(uint64_t *s) {
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static int fz_below(uint64_t *s, int n) { return n > 0 ? (int)(fz_next(s) % (uint64_t)n) : 0; }
static int fz_chance(uint64_t *s, int one_in) { return fz_below(s, one_in) == 0; }

/* A random row of the algorithm list for coll (coll < 0: of any collective). */
static redcoll_algo fz_row(uint64_t *s, int coll) {
    const redcoll_algo_info *e;
    int i, n = 0, pick;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) n += coll < 0 || (int)e->coll == coll;
    pick = fz_below(s, n);
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        if ((coll < 0 || (int)e->coll == coll) && pick-- == 0) return e->algo;
    return REDCOLL_ALGO_AUTO;
}

/* Elements per rank, from the shapes the sweeps use, kept so that a case
   moves at most about a million elements in all. */
static size_t fz_count(uint64_t *s, redcoll_coll c, int p) {
    size_t n, blocks = rc_blocks(c) ? (size_t)p : 1;
    size_t cap = 1000000 / ((size_t)p * blocks);
    switch (fz_below(s, 6)) {
    case 0: n = 0; break;
    case 1: n = 1; break;
    case 2: n = (size_t)fz_below(s, p); break;
    case 3: n = (size_t)p * (size_t)(1 + fz_below(s, 8)) + (size_t)(1 + fz_below(s, p)); break;
    case 4: n = (size_t)fz_below(s, 4096); break;
    default: n = (size_t)fz_below(s, 70000); break;
    }
    return n < cap ? n : cap;
}

static const char *const fz_ops[] = { "sum", "prod", "min", "max", "land", "lor", "lxor",
                                      "band", "bor", "bxor", "minloc", "maxloc", "matmul",
                                      "user_sum" };

/* Case `index` of run `seed`. */
static void fz_make(uint64_t seed, long index, fz_case *fc) {
    uint64_t st = seed ^ ((uint64_t)index * 0xd1342543de82ef95ULL), *s = &st;
    rc_spec *sp = &fc->spec;
    redcoll_options *o = &sp->opts;
    int p, k, op_ok = 1, commutative = 1;
    redcoll_op_kind kind = REDCOLL_OP_SUM;
    memset(fc, 0, sizeof *fc);
    fz_next(s);
    sp->coll = (redcoll_coll)fz_below(s, REDCOLL_COLL_COUNT);
    k = fz_below(s, 100);
    p = k < 60 ? 1 + fz_below(s, 33) : k < 85 ? 34 + fz_below(s, 67)
      : k < 95 ? 127 + fz_below(s, 3) + 128 * fz_below(s, 2) : 2 + fz_below(s, 599);
    sp->p = p;
    sp->count = fz_count(s, sp->coll, p);
    sp->dtype = (redcoll_dtype)fz_below(s, REDCOLL_DTYPE_COUNT);
    sp->op = "sum";
    if (rc_reduces(sp->coll)) {
        int oi = fz_below(s, (int)(sizeof fz_ops / sizeof fz_ops[0]));
        sp->op = fz_ops[oi];
        if (strcmp(sp->op, "matmul") == 0) commutative = 0;
        else if (strcmp(sp->op, "user_sum") == 0) sp->dtype = REDCOLL_INT32;
        else {
            kind = (redcoll_op_kind)oi;
            if (!fz_chance(s, 8)) /* mostly a type the op is defined on */
                while (!redcoll_op_valid_for(kind, sp->dtype))
                    sp->dtype = (redcoll_dtype)fz_below(s, REDCOLL_DTYPE_COUNT);
            op_ok = redcoll_op_valid_for(kind, sp->dtype);
        }
    } else if (fz_chance(s, 6)) {
        static const int opaque[4] = { 1, 3, 16, 24 };
        sp->dtype = REDCOLL_OPAQUE(opaque[fz_below(s, 4)]);
    }
    sp->root = fz_below(s, p);
    sp->in_place = fz_below(s, 2);

    k = fz_below(s, 30);
    o->algo = k < 5 ? REDCOLL_ALGO_AUTO : fz_row(s, k == 5 ? -1 : (int)sp->coll);
    o->selector = (redcoll_selector)fz_below(s, 2);
    if (fz_chance(s, 3)) o->segment_bytes = (size_t)(1 + fz_below(s, 5000));
    if (fz_chance(s, 4)) {
        k = fz_below(s, 3);
        o->threshold_bytes = k == 0 ? REDCOLL_THRESHOLD_HALVE_ALL : k == 1 ? REDCOLL_THRESHOLD_HALVE_NONE
                                                                      : (size_t)(1 + fz_below(s, 100000));
    }
    if (o->algo == REDCOLL_ALGO_HIERARCHICAL || fz_chance(s, 10)) {
        o->groups = fz_chance(s, 3) ? 0 : 1 + fz_below(s, p + 3);
        if (fz_chance(s, 2)) o->inner_algo = fz_row(s, fz_chance(s, 3) ? -1 : REDCOLL_COLL_REDUCE);
        if (fz_chance(s, 2)) o->outer_algo = fz_row(s, fz_chance(s, 3) ? -1 : (int)sp->coll);
        if (fz_chance(s, 3)) { o->by_node = 1; sp->sim.node_size = 1 + fz_below(s, 8); }
    }

    /* what must happen */
    fc->odd_rank = -1;
    fc->expect = FZ_OK_OR_UNIFORM_ARG_ERROR;
    if (!op_ok || !redcoll_algo_supported(sp->coll, o->algo) ||
        (!commutative && o->algo != REDCOLL_ALGO_AUTO && !redcoll_algo_keeps_order(sp->coll, o->algo)))
        fc->expect = FZ_ARG_ERROR;
    else if (rc_rooted(sp->coll) && fz_chance(s, 30)) {
        sp->root = fz_chance(s, 2) ? -1 : p + fz_below(s, 3);
        fc->expect = FZ_ARG_ERROR;
    } else if (p > 1 && fz_chance(s, 12)) {
        sp->sim.fail_rank = fz_below(s, p);
        sp->sim.fail_call = 1 + fz_below(s, 30);
        fc->expect = FZ_NO_WRONG_RESULT;
    } else if (p > 1 && fz_chance(s, 12)) {
        fc->odd_rank = fz_below(s, p);
        fc->odd_opts = *o;
        fc->odd_root = sp->root;
        if (rc_rooted(sp->coll) && fz_chance(s, 2)) fc->odd_root = fz_below(s, p);
        else fc->odd_opts.algo = fz_row(s, (int)sp->coll);
        fc->expect = FZ_NO_WRONG_RESULT;
    }
    snprintf(fc->what, sizeof fc->what,
             "%s algo=%s p=%d count=%zu dtype=%s op=%s root=%d%s segment=%zu threshold=%zu "
             "groups=%d inner=%s outer=%s by_node=%d node_size=%d selector=%d fail=%d@%ld odd_rank=%d",
             redcoll_coll_name(sp->coll), redcoll_algo_name(o->algo), p, sp->count,
             redcoll_dtype_name(sp->dtype), sp->op, sp->root, sp->in_place ? " in_place" : "",
             o->segment_bytes, o->threshold_bytes, o->groups, redcoll_algo_name(o->inner_algo),
             redcoll_algo_name(o->outer_algo), o->by_node, sp->sim.node_size, (int)o->selector,
             sp->sim.fail_rank, sp->sim.fail_call, fc->odd_rank);
}

/* ---- running a case ------------------------------------------------------------ */

typedef struct fz_run {
    rc_state        st, odd_st; /* odd_st: the disagreeing rank's view of the call */
    rc_spec         odd_spec;
    const fz_case  *fc;
} fz_run;

static redcoll_result fz_rank(const redcoll_transport *t, void *arg) {
    fz_run *run = (fz_run *)arg;
    return rc_rank(t, t->rank == run->fc->odd_rank ? &run->odd_st : &run->st);
}

/* A copy of every rank's buffers, to compare with after the call. */
static char **fz_snapshot(const rc_state *st, int sbuf) {
    int r, p = st->spec->p;
    char **copy = (char **)calloc((size_t)p, sizeof(char *));
    for (r = 0; copy && r < p; ++r) {
        rc_layout l = rc_layout_of(st, r);
        size_t n = sbuf ? (l.input_in_rbuf ? 0 : l.sn) : l.rn;
        const char *b = sbuf ? st->sbuf[r] : st->rbuf[r];
        if (!b || !n) continue;
        copy[r] = (char *)malloc(n * st->esize);
        if (copy[r]) memcpy(copy[r], b, n * st->esize);
    }
    return copy;
}

static int fz_unchanged(const rc_state *st, char **copy, int sbuf, int r) {
    rc_layout l = rc_layout_of(st, r);
    size_t n = sbuf ? (l.input_in_rbuf ? 0 : l.sn) : l.rn;
    const char *b = sbuf ? st->sbuf[r] : st->rbuf[r];
    return !copy[r] || !b || !n || memcmp(copy[r], b, n * st->esize) == 0;
}

static void fz_free_snapshot(char **copy, int p) {
    int r;
    for (r = 0; copy && r < p; ++r) free(copy[r]);
    free(copy);
}

static int fz_arg_error(redcoll_result r) {
    return r == REDCOLL_ERR_INVALID_ARG || r == REDCOLL_ERR_UNSUPPORTED;
}

/* Runs one case; 1 if every property held, else 0 with the reason in why. */
static int fz_check(const fz_case *fc, char *why, size_t cap) {
    fz_run run;
    rc_outcome out;
    redcoll_mock_config cfg = fc->spec.sim;
    char **sb, **rb;
    int r, p = fc->spec.p, good = 1, uniform = 1;
    redcoll_result first;
    why[0] = 0;
    memset(&run, 0, sizeof run);
    run.fc = fc;
    if (rc_begin(&fc->spec, &run.st, &out) != REDCOLL_OK) {
        snprintf(why, cap, "harness could not set up the case");
        return 0;
    }
    run.odd_spec = fc->spec;
    run.odd_spec.opts = fc->odd_opts;
    run.odd_spec.root = fc->odd_root;
    run.odd_st = run.st;
    run.odd_st.spec = &run.odd_spec;
    sb = fz_snapshot(&run.st, 1);
    rb = fz_snapshot(&run.st, 0);
    cfg.model = redcoll_mock_defaults(p).model;
    cfg.size = p;
    if (redcoll_mock_run(&cfg, fz_rank, &run, &out.rep) != REDCOLL_OK) {
        snprintf(why, cap, "the simulator did not run");
        rc_teardown(&run.st);
        fz_free_snapshot(sb, p);
        fz_free_snapshot(rb, p);
        return 0;
    }
    first = out.rep.results[0];
    for (r = 0; r < p; ++r) {
        redcoll_result res = out.rep.results[r];
        uniform &= res == first;
        if (!fz_unchanged(&run.st, sb, 1, r) && good) {
            snprintf(why, cap, "rank %d: the send buffer changed (rank returned \"%s\")", r,
                     redcoll_result_string(res));
            good = 0;
        }
        if (fz_arg_error(res) && !fz_unchanged(&run.st, rb, 0, r) && good) {
            snprintf(why, cap, "rank %d returned \"%s\" after writing its receive buffer", r,
                     redcoll_result_string(res));
            good = 0;
        }
    }
    if (good && fc->expect == FZ_ARG_ERROR && !(uniform && fz_arg_error(first))) {
        snprintf(why, cap, "invalid by construction, but rank 0 returned \"%s\"%s",
                 redcoll_result_string(first), uniform ? "" : " and the ranks disagree");
        good = 0;
    }
    if (good && fc->expect == FZ_OK_OR_UNIFORM_ARG_ERROR &&
        !(uniform && (first == REDCOLL_OK || fz_arg_error(first)))) {
        for (r = 0; r < p && out.rep.results[r] == first; ++r) {}
        snprintf(why, cap, "well-formed, yet rank 0 returned \"%s\" and rank %d \"%s\"",
                 redcoll_result_string(first), r < p ? r : 0,
                 redcoll_result_string(out.rep.results[r < p ? r : 0]));
        good = 0;
    }
    rc_end(&run.st, &out); /* checks every rank that returned OK, frees the buffers */
    if (good && out.wrong) {
        snprintf(why, cap, "%d rank(s) returned OK with a wrong result: %s", out.wrong, out.why);
        good = 0;
    }
    fz_free_snapshot(sb, p);
    fz_free_snapshot(rb, p);
    rc_outcome_free(&out);
    return good;
}

int main(int argc, char **argv) {
    double seconds = 60, elapsed = 0;
    long cases = -1, only = -1, index, ran = 0, failed = 0, errors = 0;
    uint64_t seed = (uint64_t)time(NULL);
    int i, verbose = 0;
    struct timespec t0, t1;
    (void)rc_run; /* the harness's one-call form; cases run in two halves here */
    for (i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-v") == 0) { verbose = 1; continue; }
        if (!v || (strcmp(a, "-t") && strcmp(a, "-n") && strcmp(a, "-s") && strcmp(a, "-c"))) {
            fprintf(stderr, "usage: fuzz [-t SECONDS] [-n CASES] [-s SEED] [-c CASE] [-v]\n");
            return 2;
        }
        if (strcmp(a, "-t") == 0) seconds = atof(v);
        if (strcmp(a, "-n") == 0) cases = atol(v);
        if (strcmp(a, "-s") == 0) seed = strtoull(v, NULL, 10);
        if (strcmp(a, "-c") == 0) only = atol(v);
        ++i;
    }
    printf("fuzz: seed %llu (replay a case: fuzz -s %llu -c CASE -v)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (index = only >= 0 ? only : 0;; ++index) {
        fz_case fc;
        char why[768];
        fz_make(seed, index, &fc);
        if (verbose) printf("case %ld: %s\n", index, fc.what);
        if (!fz_check(&fc, why, sizeof why)) {
            ++failed;
            printf("FAIL  case %ld: %s\n      %s\n", index, fc.what, why);
            fflush(stdout);
        }
        errors += fc.expect == FZ_ARG_ERROR;
        ++ran;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        elapsed = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (only >= 0 || (cases >= 0 && ran >= cases) || (cases < 0 && elapsed >= seconds) ||
            failed >= 20)
            break;
    }
    printf("fuzz: %ld cases (%ld invalid by construction) in %.1f s, %ld failed\n", ran, errors,
           elapsed, failed);
    printf("%d passed, %d failed\n", failed ? 0 : 1, failed ? 1 : 0);
    return failed ? 1 : 0;
}
