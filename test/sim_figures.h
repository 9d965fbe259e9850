/* sim_figures.h - the simulator's figures on a grid, recorded and compared.

   Every registered (collective, algorithm) pair runs on a grid of process
   counts, counts, roots, in-place forms, dtypes and ops, option knobs, no-data
   mode, injected faults and a missing rank. Each case's figures (every rank's
   result and counters, rounds, scratch peak, transport calls and modeled time,
   the report's flags and log) are written as text and hashed; the hashes per
   (collective, algorithm, part of the grid) are kept in test/sim_figures.txt.

   The file was first written by the thread-per-rank simulator, so the
   coroutine engine is held to its figures bit for bit. When redcoll.h changes
   a schedule on purpose, regenerate it (`make sim-figures`) and commit it
   with the change; a difference with no library change is a simulator bug.

   Under the thread engine some figures of a faulty run depended on how the
   threads interleaved (how far the peers got before the abort released
   them); those cases record what was deterministic there: the failing rank's
   result, transport calls, scratch peak and (but for alltoall, whose
   non-blocking transfers were in flight at the fault) its counters and
   time, the flags, the log, and whether a rank that returned OK held a
   wrong result.

   Used by test/test_sim.c (the comparison) and test/sim_figures.c (the
   writer). Include after redcoll.h, redcoll_mock.h and redcoll/harness.h. */
#ifndef REDCOLL_SIM_FIGURES_H
#define REDCOLL_SIM_FIGURES_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SF_PARTS 10
static const char *const sf_part_names[SF_PARTS] = {
    "p1-8", "p9-16", "p17-24", "p25-33", "large", "knobs", "types", "nodata", "faults", "deadlock"
};
enum { SF_LARGE = 4, SF_KNOBS, SF_TYPES, SF_NODATA, SF_FAULTS, SF_DEADLOCK };

typedef struct sf_case {
    rc_spec spec;
    int     part;
} sf_case;

/* Text of one case's figures, grown as needed. */
typedef struct sf_text {
    char  *s;
    size_t len, cap;
} sf_text;

static void sf_printf(sf_text *t, const char *fmt, ...) {
    va_list ap;
    int n;
    for (;;) {
        size_t room = t->cap - t->len;
        va_start(ap, fmt);
        n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (t->s && (size_t)n < room) { t->len += (size_t)n; return; }
        {
            size_t cap = (t->cap + (size_t)n + 256) * 2;
            char *g = (char *)realloc(t->s, cap);
            if (!g) return;
            t->s = g; t->cap = cap;
        }
    }
}

static uint64_t sf_hash(uint64_t h, const char *s, size_t n) { /* FNV-1a */
    size_t i;
    for (i = 0; i < n; ++i) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h;
}
#define SF_HASH0 14695981039346656037ULL

static const char *sf_describe(const rc_spec *s, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s p=%d count=%zu %s %s root=%d%s%s seg=%zu thr=%zu G=%d in=%s out=%s node=%d%s",
             redcoll_coll_name(s->coll), redcoll_algo_name(s->opts.algo), s->p, s->count,
             redcoll_dtype_name(s->dtype), s->op ? s->op : "sum", s->root,
             s->in_place ? " in-place" : "", s->sim.no_data ? " no-data" : "",
             s->opts.segment_bytes, s->opts.threshold_bytes, s->opts.groups,
             redcoll_algo_name(s->opts.inner_algo), redcoll_algo_name(s->opts.outer_algo),
             s->sim.node_size, s->opts.selector ? " mpich" : "");
    if (s->sim.fail_call) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, " fail=%d@%ld", s->sim.fail_rank, s->sim.fail_call);
    }
    if (s->absent_rank1) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, " absent=%d", s->absent_rank1 - 1);
    }
    return buf;
}

/* The figures of one rank; `brief`: only its result, scratch and calls. */
static void sf_rank(sf_text *t, const redcoll_mock_report *rep, int r, int brief) {
    const redcoll_mock_stats *st = &rep->stats[r];
    if (brief)
        sf_printf(t, " [%d %d %llu %ld]", r, (int)rep->results[r], st->scratch_bytes, st->calls);
    else
        sf_printf(t, " [%d %d %llu %llu %llu %llu %llu %llu %ld %ld %a]", r, (int)rep->results[r],
                  st->msgs_sent, st->msgs_recv, st->bytes_sent, st->bytes_recv, st->elems_reduced,
                  st->scratch_bytes, st->rounds, st->calls, st->time);
}

/* n bytes of a log line with every "(tag N)" written "(tag *)": tag values
   are the library's numbering of its messages, not figures, and change when
   a schedule's tags are renumbered (core's per-algorithm tags did). */
static void sf_untagged(sf_text *t, const char *l, size_t n) {
    size_t i = 0, from = 0;
    while (i + 5 <= n) {
        if (memcmp(l + i, "(tag ", 5) == 0) {
            size_t j = i + 5;
            if (j < n && l[j] == '-') ++j;
            while (j < n && l[j] >= '0' && l[j] <= '9') ++j;
            sf_printf(t, "%.*s(tag *", (int)(i - from), l + from);
            from = i = j;
        } else {
            ++i;
        }
    }
    sf_printf(t, "%.*s", (int)(n - from), l + from);
}

/* The log on one line (newlines as \n), less the rank that calls abort
   after a deadlock: every stranded rank fails at once, and which one
   aborted first was the threads' race. */
static void sf_log(sf_text *t, const redcoll_mock_report *rep) {
    const char *l = rep->log ? rep->log : "";
    sf_printf(t, " log:");
    while (*l) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l) : strlen(l);
        if (rep->deadlocked && strncmp(l, "abort: rank ", 12) == 0) {
            const char *rest = l + 12;
            while (*rest >= '0' && *rest <= '9') ++rest;
            sf_printf(t, "abort: rank *%.*s", (int)(n - (size_t)(rest - l)), rest);
        } else {
            sf_untagged(t, l, n);
        }
        if (e) sf_printf(t, "\\n");
        l += n + (e ? 1 : 0);
    }
}

/* Runs one case and writes its figures into t (emptied first). `full`
   records every rank even of a faulty run (to look at, not to compare). */
static void sf_figures(const sf_case *c, sf_text *t, int full) {
    rc_outcome o;
    redcoll_result run = rc_run(&c->spec, &o);
    int r, p = c->spec.p, faulty = c->spec.sim.fail_call > 0;
    t->len = 0;
    sf_printf(t, "run %d", (int)run);
    if (run == REDCOLL_OK) {
        sf_printf(t, " ok %d verified %d wrong %d", faulty ? -1 : o.ok, o.verified, o.wrong);
        sf_printf(t, " deadlocked %d aborted %d", o.rep.deadlocked, o.rep.aborted);
        if (!faulty || full) {
            sf_printf(t, " error %d time %a rounds %ld", (int)o.error, o.rep.time, o.rep.rounds);
            for (r = 0; r < p; ++r) sf_rank(t, &o.rep, r, 0);
        } else {
            sf_rank(t, &o.rep, c->spec.sim.fail_rank, c->spec.coll == REDCOLL_COLL_ALLTOALL);
        }
        sf_log(t, &o.rep);
    }
    rc_outcome_free(&o);
}

/* ---- the grid --------------------------------------------------------------- */

typedef void (*sf_visit)(void *ctx, const sf_case *c);

/* Every rank holds p blocks of `count`: the harness's memory and work grow as p^2. */
static int sf_quadratic(redcoll_coll c) {
    return c == REDCOLL_COLL_ALLGATHER || c == REDCOLL_COLL_ALLTOALL ||
           c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
}

static void sf_emit(sf_visit visit, void *ctx, const rc_spec *s, int part) {
    sf_case c;
    c.spec = *s;
    c.part = part;
    visit(ctx, &c);
}

/* Counts 0, 1, p - 1, p + 1, 1000 (alternately in place) with roots 0, p/2,
   p - 1, and the non-commutative matrix product. */
static void sf_small(redcoll_coll coll, redcoll_algo algo, int p, int part, sf_visit visit, void *ctx) {
    size_t counts[5];
    int k, j;
    counts[0] = 0; counts[1] = 1; counts[2] = (size_t)(p - 1); counts[3] = (size_t)(p + 1);
    counts[4] = 1000;
    for (k = 0; k < 5; ++k) {
        rc_spec s = rc_spec_make(coll, algo, p, counts[k]);
        int roots[3] = { 0, p / 2, p - 1 }, nroots = rc_rooted(coll) && p > 1 ? 3 : 1;
        s.in_place = coll != REDCOLL_COLL_BCAST && coll != REDCOLL_COLL_BARRIER && k % 2 == 1;
        for (j = 0; j < nroots; ++j) { s.root = roots[j]; sf_emit(visit, ctx, &s, part); }
    }
    if (rc_reduces(coll)) {
        rc_spec s = rc_spec_make(coll, algo, p, (size_t)p + 2);
        s.op = "matmul";
        s.root = p > 1 ? p - 2 : 0;
        s.in_place = p % 2;
        sf_emit(visit, ctx, &s, part);
    }
}

/* Every case of one (collective, algorithm) pair, in a fixed order. */
static void sf_grid(redcoll_coll coll, redcoll_algo algo, sf_visit visit, void *ctx) {
    static const int large[] = { 48, 64, 96, 100, 127, 128, 129, 255, 256, 257 };
    static const int mid[] = { 5, 8, 13, 16 };
    int p, i, k;
    for (p = 1; p <= 33; ++p) sf_small(coll, algo, p, p <= 8 ? 0 : p <= 16 ? 1 : p <= 24 ? 2 : 3, visit, ctx);
    for (i = 0; i < (int)(sizeof large / sizeof large[0]); ++i) {
        rc_spec s = rc_spec_make(coll, algo, large[i], sf_quadratic(coll) ? 3 : (size_t)large[i] + 1);
        s.root = large[i] / 3;
        s.in_place = i % 2;
        sf_emit(visit, ctx, &s, SF_LARGE);
        s.count = sf_quadratic(coll) ? 17 : 1000;
        s.root = large[i] - 1;
        sf_emit(visit, ctx, &s, SF_LARGE);
    }
    { /* p = 1000 and 1024 without data */
        static const int big[2] = { 1000, 1024 };
        for (i = 0; i < 2; ++i) {
            rc_spec s = rc_spec_make(coll, algo, big[i], 4099);
            s.dtype = REDCOLL_DOUBLE;
            s.root = 7;
            s.sim.no_data = 1;
            sf_emit(visit, ctx, &s, SF_LARGE);
        }
    }
    /* option knobs: segments, butterfly thresholds, groups and level
       algorithms, nodes, the MPICH selector (a knob a schedule ignores
       simply repeats its figures) */
    for (i = 0; i < (int)(sizeof mid / sizeof mid[0]); ++i)
        for (k = 0; k < 12; ++k) {
            rc_spec s = rc_spec_make(coll, algo, mid[i], k % 2 ? 1000 : (size_t)mid[i] + 1);
            s.root = mid[i] - 1 - k % 3;
            s.in_place = k % 3 == 1;
            switch (k) {
            case 0: s.opts.segment_bytes = 64; break;
            case 1: s.opts.segment_bytes = 1000; break;
            case 2: s.opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_ALL; break;
            case 3: s.opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_NONE; break;
            case 4: s.opts.threshold_bytes = 256; break;
            case 5: s.opts.groups = 2; break;
            case 6: s.opts.groups = 3; s.opts.inner_algo = REDCOLL_ALGO_BINOMIAL; break;
            case 7: s.opts.groups = 4; s.opts.outer_algo = REDCOLL_ALGO_RING; break;
            case 8: s.sim.node_size = 2; s.opts.by_node = 1; break;
            case 9: s.sim.node_size = 3; s.opts.by_node = 1; break;
            case 10: s.sim.node_size = 4; break;
            default: s.opts.selector = REDCOLL_SELECTOR_MPICH; break;
            }
            sf_emit(visit, ctx, &s, SF_KNOBS);
        }
    if (rc_reduces(coll)) { /* element sizes and op paths */
        static const char *const ops[8] = { "sum", "bxor", "max", "prod", "minloc", "maxloc", "matmul", "user_sum" };
        static const redcoll_dtype dts[8] = { REDCOLL_INT8, REDCOLL_UINT64, REDCOLL_FLOAT,
                                              REDCOLL_LONG_DOUBLE, REDCOLL_DOUBLE_INT,
                                              REDCOLL_SHORT_INT, REDCOLL_INT32, REDCOLL_INT32 };
        for (i = 0; i < 3; ++i)
            for (k = 0; k < 8; ++k) {
                rc_spec s = rc_spec_make(coll, algo, mid[i], 37);
                s.dtype = dts[k];
                s.op = ops[k];
                s.root = mid[i] - 1;
                sf_emit(visit, ctx, &s, SF_TYPES);
            }
    }
    { /* large counts, with data and without (the figures must agree) */
        static const int ps[3] = { 7, 16, 33 };
        for (i = 0; i < 3; ++i)
            for (k = 0; k < 4; ++k) {
                size_t big = sf_quadratic(coll) ? 1003 : rc_reduces(coll) ? 100003 : 10007;
                rc_spec s = rc_spec_make(coll, algo, ps[i], k < 2 ? big : (size_t)ps[i] + 1);
                s.dtype = REDCOLL_DOUBLE;
                s.root = ps[i] / 3;
                s.sim.no_data = k % 2;
                sf_emit(visit, ctx, &s, SF_NODATA);
            }
    }
    { /* a fault on calls 1..6 of the first and the last rank */
        static const int ps[3] = { 2, 5, 8 };
        for (i = 0; i < 3; ++i) {
            int victim, q = ps[i];
            for (victim = 0; victim < q; victim += q - 1)
                for (k = 1; k <= 6; ++k) {
                    rc_spec s = rc_spec_make(coll, algo, q, (size_t)q + 3);
                    s.root = 1 % q;
                    s.sim.fail_rank = victim;
                    s.sim.fail_call = k;
                    sf_emit(visit, ctx, &s, SF_FAULTS);
                }
        }
    }
    { /* a rank that never joins */
        static const int ps[3] = { 6, 9, 2 }, absent[3] = { 5, 0, 1 };
        for (i = 0; i < 3; ++i) {
            rc_spec s = rc_spec_make(coll, algo, ps[i], 9);
            s.root = 2 % ps[i];
            s.absent_rank1 = absent[i] + 1;
            sf_emit(visit, ctx, &s, SF_DEADLOCK);
        }
    }
}

/* Every registered pair, AUTO included (the selector's choice is a figure too). */
static int sf_pairs(redcoll_coll *colls, redcoll_algo *algos, int max) {
    int c, a, n = 0;
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
        for (a = 0; a < REDCOLL_ALGO_COUNT; ++a)
            if (redcoll_algo_supported((redcoll_coll)c, (redcoll_algo)a) && n < max) {
                colls[n] = (redcoll_coll)c; algos[n] = (redcoll_algo)a; ++n;
            }
    return n;
}

/* ---- writing and checking ---------------------------------------------------- */

/* Hashes of one pair's grid, per part. */
typedef struct sf_hashes {
    unsigned parts;            /* bit k: run part k; 0: every part */
    sf_text  text;
    uint64_t hash[SF_PARTS];
    long     cases[SF_PARTS];
    int      dump, full;       /* print every case (sim_figures --dump / --full) */
} sf_hashes;

static void sf_hash_case(void *ctx, const sf_case *c) {
    sf_hashes *h = (sf_hashes *)ctx;
    char d[512];
    if (h->parts && !(h->parts >> c->part & 1u)) return;
    sf_figures(c, &h->text, h->full);
    h->hash[c->part] = sf_hash(h->hash[c->part], h->text.s, h->text.len);
    h->cases[c->part]++;
    if (h->dump)
        printf("%s %s | %.*s\n", sf_part_names[c->part], sf_describe(&c->spec, d, sizeof d),
               (int)h->text.len, h->text.s);
}

static void sf_hash_pair(sf_hashes *h, redcoll_coll coll, redcoll_algo algo) {
    int k;
    for (k = 0; k < SF_PARTS; ++k) { h->hash[k] = SF_HASH0; h->cases[k] = 0; }
    sf_grid(coll, algo, sf_hash_case, h);
}

/* The recorded line of (coll, algo, part) in the text of sim_figures.txt:
   its case count and hash; 0 if there is none. */
static int sf_recorded(const char *file, redcoll_coll coll, redcoll_algo algo, int part,
                       long *cases, uint64_t *hash) {
    char key[128];
    const char *at = file;
    size_t n;
    snprintf(key, sizeof key, "%s %s %s ", redcoll_coll_name(coll), redcoll_algo_name(algo),
             sf_part_names[part]);
    n = strlen(key);
    while (at && *at) {
        if (strncmp(at, key, n) == 0) {
            unsigned long long h;
            if (sscanf(at + n, "%ld %llx", cases, &h) != 2) return 0;
            *hash = (uint64_t)h;
            return 1;
        }
        at = strchr(at, '\n');
        if (at) ++at;
    }
    return 0;
}

#endif /* REDCOLL_SIM_FIGURES_H */
