/* work.c - what a simulator run will cost, before it starts, and progress
   while it runs. Included by main.c.

   The unit is the simulator's: an event is one transport call of one
   simulated rank (a match, a wake-up of a rank); each rank adds
   CLI_RANK_EVENTS (its coroutine), and in data mode every
   CLI_BYTES_PER_EVENT bytes sent add one (the copy). The estimate replays
   the collective's control flow, without peers, on a few sampled ranks: the
   library's recording transport (redcoll__rec) answers every call at once
   and counts, moving no data, so no copies or reductions. A sampled rank
   stops after CLI_PROBE_CALLS calls; a collective whose message count grows
   with the vector (pipelines: one message per segment) is probed at growing
   counts (x16) and extrapolated linearly from the last two, so the probe
   itself stays under a second whatever is asked. The limit (--limit,
   default CLI_MAX_EVENTS) is in events, not seconds: the simulator runs
   some millions of events per second (`make bench-sim`). */

#include <pthread.h>
#include <stdatomic.h>

#define CLI_MAX_EVENTS      1e8
#define CLI_RANK_EVENTS     64.0
#define CLI_BYTES_PER_EVENT 65536.0
#define CLI_PROBE_CALLS     131072ull
#define CLI_PROBE_RANKS     8
#define CLI_PROGRESS_EVERY  5.0 /* seconds between progress lines */

/* The ranks sampled: 0, the root, p-1 and others spread evenly. */
static int cli_probe_ranks(int p, int root, int *ranks) {
    int n = 0, k, j;
    int want[CLI_PROBE_RANKS];
    want[0] = 0; want[1] = root; want[2] = p - 1;
    for (k = 3; k < CLI_PROBE_RANKS; ++k) want[k] = (int)((long long)p * (k - 2) / (CLI_PROBE_RANKS - 2));
    for (k = 0; k < CLI_PROBE_RANKS; ++k) {
        int r = want[k] < 0 ? 0 : want[k] >= p ? p - 1 : want[k];
        for (j = 0; j < n && ranks[j] != r; ++j) {}
        if (j == n) ranks[n++] = r;
    }
    return n;
}

/* Mean calls and bytes per rank of spec at `count`: 1, 0 when a sampled
   rank reached the cap, -1 when the buffers could not be had. */
static int cli_probe_level(const rc_spec *spec, size_t count, double *calls, double *bytes) {
    rc_spec s = *spec;
    rc_state st;
    rc_outcome o;
    int ranks[CLI_PROBE_RANKS], n, k, capped = 0;
    unsigned long long sc = 0, sb = 0;
    s.count = count;
    s.sim.no_data = 1;
    if (rc_begin(&s, &st, &o) != REDCOLL_OK) return -1;
    n = cli_probe_ranks(s.p, s.root, ranks);
    for (k = 0; k < n && !capped; ++k) { /* the library's recording transport, counting */
        redcoll__rec pr;
        redcoll__rec_init(&pr, ranks[k], s.p, NULL, NULL);
        pr.max_calls = CLI_PROBE_CALLS;
        if (s.sim.node_size > 0) { pr.node_size = s.sim.node_size; pr.t.node_of = redcoll__rec_node_of; }
        rc_rank(&pr.t, &st);
        sc += pr.calls;
        sb += pr.bytes;
        capped = pr.full;
    }
    rc_teardown(&st);
    *calls = (double)sc / k;
    *bytes = (double)sb / k;
    return !capped;
}

typedef struct cli_work {
    double calls, bytes;  /* all ranks */
    double events;
    int    at_least;      /* the estimate is a lower bound */
    int    unknown;       /* no estimate (no memory for the probe) */
} cli_work;

static cli_work cli_estimate(const rc_spec *spec) {
    cli_work w;
    double c[2] = { 0, 0 }, b[2] = { 0, 0 }, n[2] = { 0, 0 }, p = spec->p;
    size_t level = spec->count < 256 ? spec->count : 256;
    int have = 0;
    memset(&w, 0, sizeof w);
    w.events = p * CLI_RANK_EVENTS;
    if (w.events > CLI_MAX_EVENTS) { w.at_least = 1; return w; } /* too many ranks to sample */
    for (;;) {
        double cc, bb;
        int r;
        if (have >= 2) { /* skip a level the last two say would reach the cap */
            double slope = (c[1] - c[0]) / (n[1] - n[0]);
            if (c[1] + slope * ((double)level - n[1]) > 0.5 * (double)CLI_PROBE_CALLS) break;
        }
        r = cli_probe_level(spec, level, &cc, &bb);
        if (r < 0) { w.unknown = 1; return w; }
        if (r == 0) break;
        c[0] = c[1]; b[0] = b[1]; n[0] = n[1];
        c[1] = cc; b[1] = bb; n[1] = (double)level;
        ++have;
        if (level == spec->count) break;
        level = level > spec->count / 16 ? spec->count : level * 16;
    }
    if (have && n[1] == (double)spec->count) { w.calls = c[1]; w.bytes = b[1]; }
    else if (have >= 2) { /* linear in the count from the last two levels */
        double x = ((double)spec->count - n[1]) / (n[1] - n[0]);
        w.calls = c[1] + (c[1] - c[0]) * x;
        w.bytes = b[1] + (b[1] - b[0]) * x;
    } else if (have == 1 && n[1] > 0) { /* proportional: an upper estimate */
        w.calls = c[1] * (double)spec->count / n[1];
        w.bytes = b[1] * (double)spec->count / n[1];
    } else {
        w.calls = (double)CLI_PROBE_CALLS;
        w.at_least = 1;
    }
    w.calls *= p;
    w.bytes *= p;
    w.events += w.calls + (spec->sim.no_data ? 0 : w.bytes / CLI_BYTES_PER_EVENT);
    return w;
}

/* "about 3.4e+07 events (3.4e+07 transport calls on 4096 ranks, 8 GiB sent)" */
static void cli_work_text(char *buf, size_t cap, const cli_work *w, int p) {
    char h[32], sent[48] = "";
    if (w->unknown) { snprintf(buf, cap, "unknown work (no memory for a dry run)"); return; }
    if (w->bytes > 0) snprintf(sent, sizeof sent, ", %s sent", cli_human(h, sizeof h, w->bytes));
    snprintf(buf, cap, "%s %.3g events (%.3g transport calls on %d ranks%s)",
             w->at_least ? "at least" : "about", w->events, w->calls, p, sent);
}

/* 0 when the run may go ahead, else prints why not and returns 2. */
static int cli_refuse(const cli *c, const cli_work *w, const char *what) {
    char text[200];
    if (c->force || w->unknown || w->events <= c->limit) return 0;
    cli_work_text(text, sizeof text, w, c->spec.p);
    fprintf(stderr,
            "redcoll: %s would simulate %s, above the limit of %.3g events (--limit); "
            "--force runs it anyway\n", what, text, c->limit);
    return 2;
}

/* ---- progress on stderr ------------------------------------------------------------- */

static struct cli_progress {
    atomic_llong    done;         /* transport calls so far */
    double          total, t0, after;
    char            what[160];
    int             stop, started, lines;
    pthread_t       th;
    pthread_mutex_t mu;
    pthread_cond_t  cv;
} cli_prog = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

/* Under cli_prog.mu. A run that counts no calls (bench, tune) says what it
   is doing (cli_progress_set) and for how long. */
static void cli_progress_line(void) {
    double el = cli_now() - cli_prog.t0, done = (double)atomic_load(&cli_prog.done);
    cli_prog.lines++;
    if (cli_prog.total == 0 && done == 0)
        fprintf(stderr, "redcoll: %s, %.0f s so far\n", cli_prog.what, el);
    else if (cli_prog.total > 0)
        fprintf(stderr, "redcoll: %s: %.3g of ~%.3g transport calls (%.0f%%), %.0f s\n", cli_prog.what,
                done, cli_prog.total, done < cli_prog.total ? 100 * done / cli_prog.total : 99.0, el);
    else
        fprintf(stderr, "redcoll: %s: %.3g transport calls, %.0f s\n", cli_prog.what, done, el);
}

static void *cli_progress_main(void *arg) {
    double next = cli_prog.t0 + cli_prog.after;
    (void)arg;
    pthread_mutex_lock(&cli_prog.mu);
    while (!cli_prog.stop) {
        struct timespec ts;
        double wait = next - cli_now();
        if (wait <= 0) {
            cli_progress_line();
            next = cli_now() + CLI_PROGRESS_EVERY;
            continue;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += (time_t)wait;
        ts.tv_nsec += (long)((wait - floor(wait)) * 1e9);
        if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&cli_prog.cv, &cli_prog.mu, &ts);
    }
    pthread_mutex_unlock(&cli_prog.mu);
    return NULL;
}

/* Starts the reporter: lines from `after` seconds on, every CLI_PROGRESS_EVERY. */
static void cli_progress_begin(const char *what, double total_calls, double after) {
    pthread_mutex_lock(&cli_prog.mu);
    snprintf(cli_prog.what, sizeof cli_prog.what, "%s", what);
    pthread_mutex_unlock(&cli_prog.mu);
    atomic_store(&cli_prog.done, 0);
    cli_prog.total = total_calls;
    cli_prog.t0 = cli_now();
    cli_prog.after = after;
    cli_prog.stop = 0;
    cli_prog.lines = 0;
    cli_prog.started = pthread_create(&cli_prog.th, NULL, cli_progress_main, NULL) == 0;
}

/* What the run is doing now, for the next line: "bench: allreduce 1 GiB:
   timing, row 2 of 11 (ring)". */
static void cli_progress_set(const char *fmt, ...) {
    va_list ap;
    pthread_mutex_lock(&cli_prog.mu);
    va_start(ap, fmt);
    vsnprintf(cli_prog.what, sizeof cli_prog.what, fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&cli_prog.mu);
}

static void cli_progress_end(void) {
    if (!cli_prog.started) return;
    pthread_mutex_lock(&cli_prog.mu);
    cli_prog.stop = 1;
    pthread_cond_signal(&cli_prog.cv);
    pthread_mutex_unlock(&cli_prog.mu);
    pthread_join(cli_prog.th, NULL);
    /* a run faster than the reporter's first wake-up still gets the line asked for at 0 s */
    if (cli_prog.lines == 0 && cli_prog.after <= 0) cli_progress_line();
    if (cli_now() - cli_prog.t0 >= cli_prog.after + 1.0 && atomic_load(&cli_prog.done) > 0) {
        fprintf(stderr, "redcoll: %s: done, %.3g transport calls in %.0f s\n", cli_prog.what,
                (double)atomic_load(&cli_prog.done), cli_now() - cli_prog.t0);
    }
    cli_prog.started = 0;
}

/* ---- a simulator run that reports its calls --------------------------------------- */

/* Forwards every entry of a rank's transport, counting the calls. */
typedef struct cli_counted {
    redcoll_transport        t;
    const redcoll_transport *in;
} cli_counted;

#define CLI_IN(u) (((cli_counted *)(u))->in)
#define CLI_TICK() atomic_fetch_add_explicit(&cli_prog.done, 1, memory_order_relaxed)

static redcoll_result cli_c_send(void *u, int dst, const void *buf, size_t bytes, int tag) {
    CLI_TICK();
    return CLI_IN(u)->send(CLI_IN(u)->user, dst, buf, bytes, tag);
}
static redcoll_result cli_c_recv(void *u, int src, void *buf, size_t bytes, int tag) {
    CLI_TICK();
    return CLI_IN(u)->recv(CLI_IN(u)->user, src, buf, bytes, tag);
}
static redcoll_result cli_c_sendrecv(void *u, int dst, const void *sbuf, size_t sbytes, int src,
                                     void *rbuf, size_t rbytes, int tag) {
    CLI_TICK();
    return CLI_IN(u)->sendrecv(CLI_IN(u)->user, dst, sbuf, sbytes, src, rbuf, rbytes, tag);
}
static void cli_c_abort(void *u, redcoll_result why) { CLI_IN(u)->abort(CLI_IN(u)->user, why); }
static redcoll_result cli_c_isend(void *u, int dst, const void *buf, size_t bytes, int tag,
                                  redcoll_request *req) {
    CLI_TICK();
    return CLI_IN(u)->isend(CLI_IN(u)->user, dst, buf, bytes, tag, req);
}
static redcoll_result cli_c_irecv(void *u, int src, void *buf, size_t bytes, int tag,
                                  redcoll_request *req) {
    CLI_TICK();
    return CLI_IN(u)->irecv(CLI_IN(u)->user, src, buf, bytes, tag, req);
}
static redcoll_result cli_c_waitall(void *u, int count, redcoll_request *reqs) {
    return CLI_IN(u)->waitall(CLI_IN(u)->user, count, reqs);
}
static int cli_c_node_of(void *u, int rank) { return CLI_IN(u)->node_of(CLI_IN(u)->user, rank); }
static void cli_c_on_compute(void *u, size_t elems, size_t bytes) {
    CLI_IN(u)->on_compute(CLI_IN(u)->user, elems, bytes);
}
static void cli_c_on_scratch(void *u, long long delta) { CLI_IN(u)->on_scratch(CLI_IN(u)->user, delta); }
static redcoll_result cli_c_recv_reduce(void *u, int src, size_t bytes, int tag,
                                        const redcoll_consumer *into) {
    CLI_TICK();
    return CLI_IN(u)->recv_reduce(CLI_IN(u)->user, src, bytes, tag, into);
}
static redcoll_result cli_c_sendrecv_reduce(void *u, int dst, const void *sbuf, size_t sbytes,
                                            int src, size_t rbytes, int tag,
                                            const redcoll_consumer *into) {
    CLI_TICK();
    return CLI_IN(u)->sendrecv_reduce(CLI_IN(u)->user, dst, sbuf, sbytes, src, rbytes, tag, into);
}
static void *cli_c_scratch(void *u, size_t bytes) { return CLI_IN(u)->scratch(CLI_IN(u)->user, bytes); }
static redcoll_result cli_c_test(void *u, int count, redcoll_request *reqs, int *done) {
    return CLI_IN(u)->test(CLI_IN(u)->user, count, reqs, done);
}
static redcoll_result cli_c_irecv_reduce(void *u, int src, size_t bytes, int tag,
                                         const redcoll_consumer *into, redcoll_request *req) {
    CLI_TICK();
    return CLI_IN(u)->irecv_reduce(CLI_IN(u)->user, src, bytes, tag, into, req);
}

static void cli_counted_init(cli_counted *w, const redcoll_transport *in) {
    const redcoll_transport *i = in;
    redcoll_transport *t = &w->t;
    *t = *in;
    w->in = in;
    t->user = w;
    t->send = cli_c_send; t->recv = cli_c_recv; t->sendrecv = cli_c_sendrecv;
    t->abort = i->abort ? cli_c_abort : NULL;
    t->isend = i->isend ? cli_c_isend : NULL;
    t->irecv = i->irecv ? cli_c_irecv : NULL;
    t->waitall = i->waitall ? cli_c_waitall : NULL;
    t->node_of = i->node_of ? cli_c_node_of : NULL;
    t->on_compute = i->on_compute ? cli_c_on_compute : NULL;
    t->on_scratch = i->on_scratch ? cli_c_on_scratch : NULL;
    t->recv_reduce = i->recv_reduce ? cli_c_recv_reduce : NULL;
    t->sendrecv_reduce = i->sendrecv_reduce ? cli_c_sendrecv_reduce : NULL;
    t->scratch = i->scratch ? cli_c_scratch : NULL;
    t->test = i->test ? cli_c_test : NULL;
    t->irecv_reduce = i->irecv_reduce ? cli_c_irecv_reduce : NULL;
    t->nb = i->nb; /* one count of starts per rank, whichever view it is made through */
}

typedef struct cli_simrun {
    rc_state    *st;
    cli_counted *w;
} cli_simrun;

static redcoll_result cli_sim_rank(const redcoll_transport *t, void *arg) {
    cli_simrun *run = (cli_simrun *)arg;
    cli_counted *w = &run->w[t->rank];
    cli_counted_init(w, t);
    return rc_rank(&w->t, run->st);
}

/* rc_run, with every transport call counted for the progress lines. */
static redcoll_result cli_sim(const rc_spec *spec, rc_outcome *out) {
    rc_state st;
    cli_simrun run;
    redcoll_mock_config cfg = spec->sim;
    redcoll_result r = rc_begin(spec, &st, out);
    if (r != REDCOLL_OK) return r;
    run.st = &st;
    run.w = (cli_counted *)calloc((size_t)spec->p, sizeof *run.w);
    if (!run.w) { rc_teardown(&st); return REDCOLL_ERR_OUT_OF_MEMORY; }
    cfg.size = spec->p;
    r = redcoll_mock_run(&cfg, cli_sim_rank, &run, &out->rep);
    if (r == REDCOLL_OK) rc_end(&st, out);
    else rc_teardown(&st);
    free(run.w);
    return r;
}
