/* main.c - the `redcoll` command-line tool.

   redcoll simulate   run a collective on the simulator, verify, print counters
   redcoll select     what the selector picks, and every candidate's modeled time
   redcoll schedule   draw an allreduce / reduce protocol round by round

   One translation unit: the subcommands live in redcoll/cmd_*.c files
   included below, sharing the option parser of this file. */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- options shared by the subcommands ---------------------------------- */

typedef struct cli {
    const char *cmd;
    rc_spec     spec;
    const char *algo_name;
    int         json, list, help, all_ranks;
    int         no_data;   /* -1: automatic */
} cli;

static void cli_usage(FILE *f) {
    fputs(
        "usage: redcoll COMMAND [flags]\n"
        "\n"
        "commands:\n"
        "  simulate   run one collective on the simulator, verify every rank's result\n"
        "             against a sequential canonical-order reference, print per-rank\n"
        "             counters and the modeled time\n"
        "  select     show what the selector picks for p and count, and the modeled\n"
        "             time of every candidate algorithm\n"
        "  schedule   draw an allreduce or reduce protocol round by round, as the\n"
        "             papers' figures do: which elements (A, B, ...) each rank holds\n"
        "             and over which ranks they are reduced (p <= 64, count <= 52,\n"
        "             default count: the largest power of two <= p)\n"
        "\n"
        "flags:\n"
        "  --coll C          allreduce (default), reduce, bcast, gather, scatter, barrier, ...\n"
        "  --algo A          algorithm name, `auto` (default: the selector) or `list`\n"
        "  -p P              number of ranks (default 8)\n"
        "  --count N         elements per rank (per block for gather/scatter/allgather/\n"
        "                    alltoall/reduce_scatter_block; the total for allgatherv and\n"
        "                    reduce_scatter, spread unevenly, some ranks getting none:\n"
        "                    \"counts\" in --json; default 1024)\n"
        "  --dtype D         int8..uint64, float, double (default), long_double, float_int,\n"
        "                    double_int, long_int, 2int, short_int, long_double_int\n"
        "  --op O            sum (default), prod, min, max, land, lor, lxor, band, bor, bxor,\n"
        "                    minloc, maxloc, matmul (non-commutative 2x2 matrix product),\n"
        "                    user_sum (commutative user op on int32), sum_exact (float, double:\n"
        "                    the correctly rounded exact sum; wide-range inputs)\n"
        "  --root R          root of rooted collectives (default 0)\n"
        "  --in-place        pass REDCOLL_IN_PLACE where the collective allows it\n"
        "  --alpha A --beta B --gamma G --f-alpha FA --f-beta FB\n"
        "                    cost model: seconds per message, per byte sent, per byte\n"
        "                    reduced; one-way factors (defaults 2e-6 1e-10 2.5e-11 1 1)\n"
        "  --fail-rank R --fail-call K\n"
        "                    make call K (1-based) of rank R fail, to watch recovery\n"
        "  --threshold B     butterfly threshold b in bytes (`zero`, `inf`)\n"
        "  --segment BYTES   segment size of pipelined schedules\n"
        "  --groups G --inner A --outer A\n"
        "                    hierarchical transformation: groups and the inner / outer\n"
        "                    algorithms\n"
        "  --node-size N     the simulator's ranks per node (topology queries)\n"
        "  --selector S      papers (default) or mpich\n"
        "  --no-data         move no payload (counters and times only; automatic when the\n"
        "                    buffers would exceed 2 GiB)\n"
        "  --all-ranks       print every rank, not only the first 64\n"
        "  --json            one JSON object on stdout\n"
        "  --help            this text\n"
        "\n"
        "exit status: 0 ok, 1 the collective failed or gave a wrong result, 2 bad usage\n",
        f);
}

static int cli_bad(const char *fmt, const char *arg) {
    fprintf(stderr, "redcoll: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see redcoll --help)\n");
    return 2;
}

static int cli_number(const char *s, double *out) {
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return s[0] && !*end && errno == 0;
}

static int cli_size(const char *s, size_t *out) {
    char *end;
    unsigned long long v;
    if (!s[0] || s[0] == '-') return 0;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (*end || errno) return 0;
    *out = (size_t)v;
    return 1;
}

static int cli_int(const char *s, int *out, int lo) {
    size_t v;
    if (!cli_size(s, &v) || v > 1u << 30 || (int)v < lo) return 0;
    *out = (int)v;
    return 1;
}

static int cli_dtype(const char *s, redcoll_dtype *out) {
    int d;
    for (d = 0; d < REDCOLL_DTYPE_COUNT; ++d)
        if (strcmp(s, redcoll_dtype_name((redcoll_dtype)d)) == 0) { *out = (redcoll_dtype)d; return 1; }
    return 0;
}

static int cli_algo(const char *s, redcoll_algo *out) { return redcoll_algo_from_name(s, out); }

static int cli_takes_value(const char *f) {
    static const char *const flags[] = {
        "--coll", "--algo", "-p", "--count", "--dtype", "--op", "--root", "--alpha", "--beta",
        "--gamma", "--f-alpha", "--f-beta", "--fail-rank", "--fail-call", "--threshold",
        "--segment", "--groups", "--inner", "--outer", "--node-size", "--selector"
    };
    size_t i;
    for (i = 0; i < sizeof flags / sizeof flags[0]; ++i) if (strcmp(f, flags[i]) == 0) return 1;
    return 0;
}

/* Parses argv[2..]; returns 0 or the exit status of a usage error. */
static int cli_parse(cli *c, int argc, char **argv) {
    int i;
    rc_spec *s = &c->spec;
    memset(c, 0, sizeof *c);
    c->no_data = -1;
    s->coll = REDCOLL_COLL_ALLREDUCE;
    s->p = 8;
    s->count = 1024;
    s->dtype = REDCOLL_DOUBLE;
    s->op = "sum";
    s->use_model = 1;
    s->sim.model = redcoll_mock_defaults(1).model;
    for (i = 2; i < argc; ++i) {
        const char *f = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        int takes = 1;
        if (strcmp(f, "--help") == 0 || strcmp(f, "-h") == 0) { c->help = 1; takes = 0; }
        else if (strcmp(f, "--json") == 0) { c->json = 1; takes = 0; }
        else if (strcmp(f, "--in-place") == 0) { s->in_place = 1; takes = 0; }
        else if (strcmp(f, "--no-data") == 0) { c->no_data = 1; takes = 0; }
        else if (strcmp(f, "--all-ranks") == 0) { c->all_ranks = 1; takes = 0; }
        else if (!v) return cli_bad(cli_takes_value(f) ? "%s needs a value" : "unknown flag '%s'", f);
        else if (strcmp(f, "--coll") == 0) { if (!redcoll_coll_from_name(v, &s->coll)) return cli_bad("unknown collective '%s'", v); }
        else if (strcmp(f, "--algo") == 0) {
            if (strcmp(v, "list") == 0) c->list = 1;
            else if (!cli_algo(v, &s->opts.algo)) return cli_bad("unknown algorithm '%s' (try --algo list)", v);
            c->algo_name = v;
        }
        else if (strcmp(f, "-p") == 0) { if (!cli_int(v, &s->p, 1)) return cli_bad("-p wants a rank count >= 1, not '%s'", v); }
        else if (strcmp(f, "--count") == 0) { if (!cli_size(v, &s->count)) return cli_bad("--count wants a non-negative integer, not '%s'", v); }
        else if (strcmp(f, "--dtype") == 0) { if (!cli_dtype(v, &s->dtype)) return cli_bad("unknown dtype '%s'", v); }
        else if (strcmp(f, "--op") == 0) {
            redcoll_dtype dd = s->dtype;
            redcoll_op op;
            if (!rc_op_from_name(v, &dd, &op)) return cli_bad("unknown op '%s'", v);
            s->op = v;
        }
        else if (strcmp(f, "--root") == 0) { if (!cli_int(v, &s->root, 0)) return cli_bad("--root wants a rank, not '%s'", v); }
        else if (strcmp(f, "--alpha") == 0 && cli_number(v, &d) && d >= 0) s->sim.model.alpha = d;
        else if (strcmp(f, "--beta") == 0 && cli_number(v, &d) && d >= 0) s->sim.model.beta = d;
        else if (strcmp(f, "--gamma") == 0 && cli_number(v, &d) && d >= 0) s->sim.model.gamma = d;
        else if (strcmp(f, "--f-alpha") == 0 && cli_number(v, &d) && d >= 0) s->sim.model.f_alpha = d;
        else if (strcmp(f, "--f-beta") == 0 && cli_number(v, &d) && d >= 0) s->sim.model.f_beta = d;
        else if (strcmp(f, "--fail-rank") == 0) { if (!cli_int(v, &s->sim.fail_rank, 0)) return cli_bad("--fail-rank wants a rank, not '%s'", v); }
        else if (strcmp(f, "--fail-call") == 0) {
            int k;
            if (!cli_int(v, &k, 1)) return cli_bad("--fail-call wants a call number >= 1, not '%s'", v);
            s->sim.fail_call = k;
        }
        else if (strcmp(f, "--threshold") == 0) {
            if (strcmp(v, "zero") == 0) s->opts.threshold_bytes = REDCOLL_THRESHOLD_ZERO;
            else if (strcmp(v, "inf") == 0) s->opts.threshold_bytes = REDCOLL_THRESHOLD_INFINITE;
            else if (!cli_size(v, &s->opts.threshold_bytes)) return cli_bad("--threshold wants bytes, `zero` or `inf`, not '%s'", v);
        }
        else if (strcmp(f, "--segment") == 0) { if (!cli_size(v, &s->opts.segment_bytes)) return cli_bad("--segment wants bytes, not '%s'", v); }
        else if (strcmp(f, "--groups") == 0) { if (!cli_int(v, &s->opts.groups, 1)) return cli_bad("--groups wants G >= 1, not '%s'", v); }
        else if (strcmp(f, "--inner") == 0) { if (!cli_algo(v, &s->opts.inner_algo)) return cli_bad("unknown inner algorithm '%s'", v); }
        else if (strcmp(f, "--outer") == 0) { if (!cli_algo(v, &s->opts.outer_algo)) return cli_bad("unknown outer algorithm '%s'", v); }
        else if (strcmp(f, "--node-size") == 0) {
            if (!cli_int(v, &s->sim.node_size, 1)) return cli_bad("--node-size wants N >= 1, not '%s'", v);
            s->opts.by_node = 1;
        }
        else if (strcmp(f, "--selector") == 0) {
            if (strcmp(v, "papers") == 0) s->opts.selector = REDCOLL_SELECTOR_PAPERS;
            else if (strcmp(v, "mpich") == 0) s->opts.selector = REDCOLL_SELECTOR_MPICH;
            else return cli_bad("--selector is papers or mpich, not '%s'", v);
        }
        else if (f[0] == '-' && f[1] == '-' &&
                 (!strcmp(f, "--alpha") || !strcmp(f, "--beta") || !strcmp(f, "--gamma") ||
                  !strcmp(f, "--f-alpha") || !strcmp(f, "--f-beta")))
            return cli_bad("%s wants a non-negative number", f);
        else return cli_bad("unknown flag '%s'", f);
        i += takes;
    }
    if (s->root >= s->p) return cli_bad("--root must be below -p%s", "");
    if (s->sim.fail_call && s->sim.fail_rank >= s->p) return cli_bad("--fail-rank must be below -p%s", "");
    /* the op decides the dtype for user ops */
    { redcoll_op op; rc_op_from_name(s->op, &s->dtype, &op); }
    return 0;
}

/* Bytes of user buffers the harness would allocate. */
static double cli_footprint(const rc_spec *s) {
    double per = (double)s->count * (double)redcoll_dtype_size(s->dtype);
    int gathers = s->coll == REDCOLL_COLL_GATHER || s->coll == REDCOLL_COLL_SCATTER ||
                  s->coll == REDCOLL_COLL_ALLGATHER || s->coll == REDCOLL_COLL_ALLTOALL ||
                  s->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    return (double)s->p * 3.0 * per * (gathers ? (double)s->p : 1.0);
}

static void cli_list(void) {
    int c, a;
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c) {
        int any = 0;
        printf("%-22s", redcoll_coll_name((redcoll_coll)c));
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a)
            if (redcoll_algo_supported((redcoll_coll)c, (redcoll_algo)a)) {
                printf(" %s%s", redcoll_algo_name((redcoll_algo)a),
                       redcoll_algo_keeps_order((redcoll_coll)c, (redcoll_algo)a) ? "" : "(commutative)");
                any = 1;
            }
        printf("%s\n", any ? "" : " (none yet)");
    }
}

static redcoll_algo cli_selected(const rc_spec *s) {
    redcoll_dtype d = s->dtype;
    redcoll_op op;
    rc_op_from_name(s->op, &d, &op);
    if (s->opts.algo != REDCOLL_ALGO_AUTO) return s->opts.algo;
    return redcoll_select(s->coll, s->p, s->count * redcoll_dtype_size(d),
                          op.kind != REDCOLL_OP_USER || op.commutative, &s->opts);
}

static void cli_json_string(const char *s) {
    putchar('"');
    for (; s && *s; ++s) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if (*s == '\n') printf("\\n");
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

static void cli_print_json(const cli *c, const rc_outcome *o, redcoll_result run) {
    const rc_spec *s = &c->spec;
    int r;
    printf("{\"coll\":\"%s\",\"algo\":\"%s\",\"selected\":\"%s\",\"p\":%d,\"count\":%zu,",
           redcoll_coll_name(s->coll), redcoll_algo_name(s->opts.algo),
           redcoll_algo_name(cli_selected(s)), s->p, s->count);
    printf("\"dtype\":\"%s\",\"op\":\"%s\",\"root\":%d,\"bytes\":%zu,", redcoll_dtype_name(s->dtype),
           s->op, s->root, s->count * redcoll_dtype_size(s->dtype));
    printf("\"ok\":%s,\"verified\":%s,\"error\":", o->ok && run == REDCOLL_OK ? "true" : "false",
           o->verified ? "true" : "false");
    if (run != REDCOLL_OK) cli_json_string(redcoll_result_string(run));
    else if (!o->ok) cli_json_string(o->why);
    else printf("null");
    printf(",\"time\":%.12g,\"rounds\":%ld,\"deadlocked\":%s,\"aborted\":%s,\"log\":", o->rep.time,
           o->rep.rounds, o->rep.deadlocked ? "true" : "false", o->rep.aborted ? "true" : "false");
    if (o->rep.log) cli_json_string(o->rep.log); else printf("null");
    if (rc_irregular(s->coll)) { /* --count is the total; how the harness spread it */
        size_t *counts = (size_t *)calloc((size_t)s->p, sizeof *counts);
        printf(",\"counts\":[");
        if (counts) rc_counts(s->p, s->count, counts);
        for (r = 0; counts && r < s->p; ++r) printf("%s%zu", r ? "," : "", counts[r]);
        printf("]");
        free(counts);
    }
    printf(",\"ranks\":[");
    for (r = 0; o->rep.stats && r < s->p; ++r) {
        const redcoll_mock_stats *st = &o->rep.stats[r];
        printf("%s{\"rank\":%d,\"result\":\"%s\",\"msgs_sent\":%llu,\"msgs_recv\":%llu,"
               "\"bytes_sent\":%llu,\"bytes_recv\":%llu,\"elems_reduced\":%llu,\"rounds\":%ld,"
               "\"time\":%.12g,\"scratch_bytes\":%llu}",
               r ? "," : "", r, redcoll_result_string(o->rep.results[r]), st->msgs_sent,
               st->msgs_recv, st->bytes_sent, st->bytes_recv, st->elems_reduced, st->rounds,
               st->time, st->scratch_bytes);
    }
    printf("]}\n");
}

static void cli_print_text(const cli *c, const rc_outcome *o, redcoll_result run) {
    const rc_spec *s = &c->spec;
    int r, shown = c->all_ranks || s->p <= 64 ? s->p : 64;
    printf("%s / %s%s%s on p=%d, count=%zu %s (%zu bytes), op %s, root %d%s\n",
           redcoll_coll_name(s->coll), redcoll_algo_name(cli_selected(s)),
           s->opts.algo == REDCOLL_ALGO_AUTO ? " (selected)" : "", "", s->p, s->count,
           redcoll_dtype_name(s->dtype), s->count * redcoll_dtype_size(s->dtype), s->op, s->root,
           s->in_place ? ", in place" : "");
    if (run != REDCOLL_OK) { printf("simulation failed: %s\n", redcoll_result_string(run)); return; }
    printf("%5s %-10s %9s %9s %12s %12s %12s %6s %12s %10s\n", "rank", "result", "msgs_sent",
           "msgs_recv", "bytes_sent", "bytes_recv", "elems_red", "rounds", "time", "scratch");
    for (r = 0; r < shown; ++r) {
        const redcoll_mock_stats *st = &o->rep.stats[r];
        printf("%5d %-10.10s %9llu %9llu %12llu %12llu %12llu %6ld %12.6g %10llu\n", r,
               o->rep.results[r] == REDCOLL_OK ? "ok" : redcoll_result_string(o->rep.results[r]),
               st->msgs_sent, st->msgs_recv, st->bytes_sent, st->bytes_recv, st->elems_reduced,
               st->rounds, st->time, st->scratch_bytes);
    }
    if (shown < s->p) printf("  ... %d more ranks (--all-ranks or --json)\n", s->p - shown);
    if (o->rep.log) printf("\n%s", o->rep.log);
    printf("\nmodeled time %.6g s, %ld rounds; result %s\n", o->rep.time, o->rep.rounds,
           o->ok ? (o->verified ? "verified on every rank (bitwise identical)" : "not checked (no-data mode)")
                 : o->why);
}

static int cmd_simulate(cli *c) {
    rc_outcome o;
    redcoll_result run;
    if (c->no_data < 0) c->no_data = cli_footprint(&c->spec) > 2.0 * (1u << 30);
    c->spec.sim.no_data = c->no_data;
    run = rc_run(&c->spec, &o);
    if (c->json) cli_print_json(c, &o, run); else cli_print_text(c, &o, run);
    rc_outcome_free(&o);
    return run == REDCOLL_OK && o.ok ? 0 : 1;
}

/* Every candidate of the collective on the simulator (no data), in the order
   of the algorithm enum. */
static int cmd_select(cli *c) {
    rc_spec s = c->spec;
    redcoll_algo chosen = cli_selected(&c->spec);
    int a, printed = 0;
    s.sim.no_data = 1;
    if (!c->json)
        printf("%s, p=%d, %zu x %s = %zu bytes: the selector picks %s\n\n%-26s %14s %8s %14s\n",
               redcoll_coll_name(s.coll), s.p, s.count, redcoll_dtype_name(s.dtype),
               s.count * redcoll_dtype_size(s.dtype), redcoll_algo_name(chosen), "algorithm",
               "modeled time", "rounds", "bytes sent/rank");
    else
        printf("{\"coll\":\"%s\",\"p\":%d,\"count\":%zu,\"selected\":\"%s\",\"candidates\":[",
               redcoll_coll_name(s.coll), s.p, s.count, redcoll_algo_name(chosen));
    for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
        rc_outcome o;
        unsigned long long maxb = 0;
        int r;
        if (!redcoll_algo_supported(s.coll, (redcoll_algo)a)) continue;
        s.opts.algo = (redcoll_algo)a;
        if (rc_run(&s, &o) != REDCOLL_OK) continue;
        for (r = 0; r < s.p; ++r) if (o.rep.stats[r].bytes_sent > maxb) maxb = o.rep.stats[r].bytes_sent;
        if (c->json) {
            printf("%s{\"algo\":\"%s\",\"ok\":%s,\"time\":%.12g,\"rounds\":%ld,\"max_bytes_sent\":%llu}",
                   printed++ ? "," : "", redcoll_algo_name((redcoll_algo)a), o.ok ? "true" : "false",
                   o.rep.time, o.rep.rounds, maxb);
        } else if (o.ok) {
            printf("%-26s %14.6g %8ld %14llu%s\n", redcoll_algo_name((redcoll_algo)a), o.rep.time,
                   o.rep.rounds, maxb, a == (int)chosen ? "   <- selected" : "");
        } else {
            printf("%-26s %14s   (%s)\n", redcoll_algo_name((redcoll_algo)a), "-", o.why);
        }
        rc_outcome_free(&o);
    }
    if (c->json) printf("]}\n");
    return 0;
}

#include "cmd_schedule.c"

int main(int argc, char **argv) {
    cli c;
    int bad;
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        cli_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    bad = cli_parse(&c, argc, argv);
    if (bad) return bad;
    if (c.help) { cli_usage(stdout); return 0; }
    if (c.list) { cli_list(); return 0; }
    if (strcmp(argv[1], "simulate") == 0) return cmd_simulate(&c);
    if (strcmp(argv[1], "select") == 0) return cmd_select(&c);
    if (strcmp(argv[1], "schedule") == 0) return cmd_schedule(&c, argc, argv);
    fprintf(stderr, "redcoll: unknown command '%s'\n(see redcoll --help)\n", argv[1]);
    return 2;
}
