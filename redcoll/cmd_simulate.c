/* cmd_simulate.c - `redcoll simulate` and `redcoll select`: one collective on
   the simulator, verified; every candidate algorithm's modeled time. Included
   by main.c. */

/* Bytes of user buffers the harness would allocate. */
static double cli_footprint(const rc_spec *s) {
    double per = (double)s->count * (double)redcoll_dtype_size(s->dtype);
    return (double)s->p * 3.0 * per * (rc_blocks(s->coll) ? (double)s->p : 1.0);
}

static void cli_print_json(const cli *c, const rc_outcome *o, redcoll_result run) {
    const rc_spec *s = &c->spec;
    int r;
    printf("{\"coll\":\"%s\",\"algo\":\"%s\",\"selected\":\"%s\",\"p\":%d,\"count\":%zu,",
           redcoll_coll_name(s->coll), redcoll_algo_name(s->opts.algo),
           redcoll_algo_name(cli_selected(c, s)), s->p, s->count);
    printf("\"dtype\":\"%s\",\"op\":\"%s\",\"root\":%d,\"bytes\":%zu,", redcoll_dtype_name(s->dtype),
           s->op, s->root, s->count * redcoll_dtype_size(s->dtype));
    printf("\"ok\":%s,\"verified\":%s,\"error\":", o->ok && run == REDCOLL_OK ? "true" : "false",
           o->verified ? "true" : "false");
    if (run != REDCOLL_OK) cli_json_string(stdout, redcoll_result_string(run));
    else if (!o->ok) cli_json_string(stdout, o->why);
    else printf("null");
    printf(",\"time\":%.12g,\"rounds\":%ld,\"deadlocked\":%s,\"aborted\":%s,\"log\":", o->rep.time,
           o->rep.rounds, o->rep.deadlocked ? "true" : "false", o->rep.aborted ? "true" : "false");
    if (o->rep.log) cli_json_string(stdout, o->rep.log); else printf("null");
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

/* "ok" or the whole result string. */
static const char *cli_result_text(redcoll_result r) { return r == REDCOLL_OK ? "ok" : redcoll_result_string(r); }

static void cli_print_text(const cli *c, const rc_outcome *o, redcoll_result run) {
    const rc_spec *s = &c->spec;
    int r, shown = c->all_ranks || s->p <= 64 ? s->p : 64, w = 6;
    printf("%s / %s%s%s%s on p=%d, count=%zu %s (%zu bytes), op %s, root %d%s\n",
           redcoll_coll_name(s->coll), redcoll_algo_name(cli_selected(c, s)),
           c->env_var ? " (" : s->opts.algo == REDCOLL_ALGO_AUTO ? " (selected)" : "",
           c->env_var ? c->env_var : "", c->env_var ? ")" : "", s->p, s->count,
           redcoll_dtype_name(s->dtype), s->count * redcoll_dtype_size(s->dtype), s->op, s->root,
           s->in_place ? ", in place" : "");
    if (run != REDCOLL_OK) { printf("simulation failed: %s\n", redcoll_result_string(run)); return; }
    for (r = 0; r < shown; ++r) { /* the result column fits the longest result */
        int len = (int)strlen(cli_result_text(o->rep.results[r]));
        if (len > w) w = len;
    }
    printf("%5s %-*s %9s %9s %12s %12s %12s %6s %12s %10s\n", "rank", w, "result", "msgs_sent",
           "msgs_recv", "bytes_sent", "bytes_recv", "elems_red", "rounds", "time", "scratch");
    for (r = 0; r < shown; ++r) {
        const redcoll_mock_stats *st = &o->rep.stats[r];
        printf("%5d %-*s %9llu %9llu %12llu %12llu %12llu %6ld %12.6g %10llu\n", r, w,
               cli_result_text(o->rep.results[r]), st->msgs_sent, st->msgs_recv, st->bytes_sent,
               st->bytes_recv, st->elems_reduced, st->rounds, st->time, st->scratch_bytes);
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
    cli_work w;
    int bad;
    if (c->no_data < 0) c->no_data = cli_footprint(&c->spec) > 2.0 * (1u << 30);
    c->spec.sim.no_data = c->no_data;
    w = cli_estimate(&c->spec);
    if ((bad = cli_refuse(c, &w, "this run")) != 0) return bad;
    cli_progress_begin("simulate", w.calls, c->progress_after);
    run = cli_sim(&c->spec, &o);
    cli_progress_end();
    if (c->json) cli_print_json(c, &o, run); else cli_print_text(c, &o, run);
    rc_outcome_free(&o);
    return run == REDCOLL_OK && o.ok ? 0 : 1;
}

/* ---- select ------------------------------------------------------------------------ */

typedef struct cli_cand {
    redcoll_algo       algo;
    int                ran;       /* 1: time valid */
    double             time;
    long               rounds;
    unsigned long long max_sent;
    char               why[640];  /* not run: the reason */
    cli_work           work;
} cli_cand;

static int cli_cand_cmp(const void *a, const void *b) {
    const cli_cand *x = (const cli_cand *)a, *y = (const cli_cand *)b;
    if (x->ran != y->ran) return y->ran - x->ran;
    if (x->ran && x->time != y->time) return x->time < y->time ? -1 : 1;
    return (int)x->algo - (int)y->algo;
}

/* Every candidate of the collective on the simulator (no data), fastest first. */
static int cmd_select(cli *c) {
    rc_spec s = c->spec;
    redcoll_algo chosen = cli_selected(c, &c->spec);
    cli_cand cand[REDCOLL_ALGO_COUNT];
    int a, n = 0, k, ran = 0, best = -1;
    double total = 0;
    s.sim.no_data = 1;
    s.sim.fail_call = 0;
    for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
        cli_cand *cd = &cand[n];
        const char *why;
        if (!redcoll_algo_supported(s.coll, (redcoll_algo)a)) continue;
        memset(cd, 0, sizeof *cd);
        cd->algo = (redcoll_algo)a;
        ++n;
        if ((why = cli_algo_problem(s.coll, cd->algo, c->commutative || !rc_reduces(s.coll))) != NULL) {
            snprintf(cd->why, sizeof cd->why, "breaks rank order: needs a commutative op");
            continue;
        }
        if (s.p > REDCOLL_MAX_RANKS) {
            snprintf(cd->why, sizeof cd->why, "not served: p above REDCOLL_MAX_RANKS (%d)", REDCOLL_MAX_RANKS);
            continue;
        }
        s.opts.algo = cd->algo;
        cd->work = cli_estimate(&s);
        if (!c->force && !cd->work.unknown && cd->work.events > c->limit) {
            char text[200];
            cli_work_text(text, sizeof text, &cd->work, s.p);
            snprintf(cd->why, sizeof cd->why, "above the work limit: %s (--force)", text);
            continue;
        }
        total += cd->work.calls;
    }
    cli_progress_begin("select", total, c->progress_after);
    for (k = 0; k < n; ++k) {
        cli_cand *cd = &cand[k];
        rc_outcome o;
        redcoll_result r;
        int q;
        if (cd->why[0]) continue;
        s.opts.algo = cd->algo;
        r = cli_sim(&s, &o);
        if (r != REDCOLL_OK) snprintf(cd->why, sizeof cd->why, "failed: %s", redcoll_result_string(r));
        else if (!o.ok) snprintf(cd->why, sizeof cd->why, "failed: %.500s", o.why);
        else {
            cd->ran = 1;
            cd->time = o.rep.time;
            cd->rounds = o.rep.rounds;
            for (q = 0; q < s.p; ++q)
                if (o.rep.stats[q].bytes_sent > cd->max_sent) cd->max_sent = o.rep.stats[q].bytes_sent;
            ++ran;
        }
        if (r == REDCOLL_OK) rc_outcome_free(&o);
    }
    cli_progress_end();
    qsort(cand, (size_t)n, sizeof cand[0], cli_cand_cmp);
    if (ran) best = 0;
    if (c->json) {
        printf("{\"coll\":\"%s\",\"p\":%d,\"count\":%zu,\"dtype\":\"%s\",\"op\":\"%s\",\"bytes\":%zu,"
               "\"selected\":\"%s\",\"model_best\":", redcoll_coll_name(s.coll), s.p, s.count,
               redcoll_dtype_name(s.dtype), s.op, s.count * redcoll_dtype_size(s.dtype),
               redcoll_algo_name(chosen));
        if (best >= 0) printf("\"%s\"", redcoll_algo_name(cand[best].algo)); else printf("null");
        printf(",\"candidates\":[");
        for (k = 0; k < ran; ++k)
            printf("%s{\"algo\":\"%s\",\"ok\":true,\"time\":%.12g,\"time_us\":%.6f,\"rounds\":%ld,"
                   "\"max_bytes_sent\":%llu}", k ? "," : "", redcoll_algo_name(cand[k].algo),
                   cand[k].time, cand[k].time * 1e6, cand[k].rounds, cand[k].max_sent);
        printf("],\"not_run\":[");
        for (k = ran; k < n; ++k) {
            printf("%s{\"algo\":\"%s\",\"why\":", k > ran ? "," : "", redcoll_algo_name(cand[k].algo));
            cli_json_string(stdout, cand[k].why);
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("%s, p=%d, %zu x %s (%zu bytes), op %s: %s %s %s\nmodel: ", redcoll_coll_name(s.coll),
               s.p, s.count, redcoll_dtype_name(s.dtype), s.count * redcoll_dtype_size(s.dtype), s.op,
               c->env_var ? c->env_var : "the selector", c->env_var ? "forces" : "picks",
               redcoll_algo_name(chosen));
        cli_model_line(stdout, c);
        printf("\n\n%-26s %14s %8s %16s\n", "algorithm", "time (us)", "rounds", "bytes sent/rank");
        for (k = 0; k < ran; ++k) {
            const cli_cand *cd = &cand[k];
            printf("%-26s %14.3f %8ld %16llu", redcoll_algo_name(cd->algo), cd->time * 1e6, cd->rounds,
                   cd->max_sent);
            if (cd->algo == chosen && cd->time <= cand[best].time) printf("   <- selected, the model's best");
            else if (k == best) printf("   <- the model's best");
            else if (cd->algo == chosen)
                printf("   <- selected (%.2fx the model's best)", cand[best].time > 0 ? cd->time / cand[best].time : 1.0);
            printf("\n");
        }
        if (ran < n) printf("\nnot run:\n");
        for (k = ran; k < n; ++k)
            printf("  %-24s %s%s\n", redcoll_algo_name(cand[k].algo), cand[k].why,
                   cand[k].algo == chosen ? "   <- selected" : "");
    }
    if (!ran) fprintf(stderr, "redcoll: select: no candidate ran\n");
    return ran ? 0 : 1;
}
