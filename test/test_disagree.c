/* test_disagree.c - ranks that disagree about a call end in an error on
   every rank, never in a hang or a silent wrong result: on the simulator and
   on threads with the default configuration (no timeout).

   Every case is one collective (all eleven) that the last rank ("odd") makes
   differently from the others, as one of the kinds below says, at p = 2..5;
   then, as a program goes on, every rank whose call returned OK makes two
   more calls on the same transport, a barrier (a bcast after a barrier, so
   that a rank that skipped the barrier is not simply one barrier behind)
   and another barrier, where a rank that could not see the mistake in its
   own call learns of it: the first error of a rank is in the call where it
   can see the mistake or in a later one. One later call is not always
   enough: a rank whose peer is done with the first one in time (an eager
   send) completes it before the peer finds the mistake. Each rank's first error is kept;
   the case passes when every rank has one (and, for the control kind
   `none`, when none has one and the results are right). On threads a
   watchdog fails the test when a case has not ended after 10 s. The MPI
   suites run the same cases (test/mpi/test_mpi.c, test/pmpi/disagree.c). */

typedef enum td_kind {
    TD_COUNT, TD_ROOT, TD_OP, TD_DTYPE, TD_ALGO, TD_INPLACE, TD_SKIP, TD_OTHER, TD_NONE, TD_KINDS
} td_kind;
static const char *const td_kind_names[TD_KINDS] = {
    "count", "root", "op", "dtype", "algorithm", "in place", "skip", "other collective", "none"
};

enum { TD_N = 5, TD_PMAX = 5, TD_BUF = TD_PMAX * (TD_N + 2) };

typedef struct td_case {
    redcoll_coll   coll;
    td_kind        kind;
    redcoll_algo   algo[2];            /* TD_ALGO: the others' and the odd rank's */
    redcoll_result res[TD_PMAX];       /* each rank's first error */
    int            in_call[TD_PMAX];   /* 1: in the call itself, 0: in a call after */
    int32_t        out[TD_PMAX][TD_BUF];
} td_case;

/* Whether kind k is a mistake collective c can make. */
static int td_applies(redcoll_coll c, td_kind k, redcoll_algo *algo) {
    int a, n = 0;
    switch (k) {
    case TD_ROOT:
        return c == REDCOLL_COLL_REDUCE || c == REDCOLL_COLL_BCAST || c == REDCOLL_COLL_GATHER ||
               c == REDCOLL_COLL_SCATTER;
    case TD_OP:
        return c == REDCOLL_COLL_ALLREDUCE || c == REDCOLL_COLL_REDUCE ||
               c == REDCOLL_COLL_REDUCE_SCATTER || c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    case TD_COUNT: case TD_DTYPE:
        return c != REDCOLL_COLL_BARRIER;
    case TD_INPLACE:
        return c == REDCOLL_COLL_ALLREDUCE || c == REDCOLL_COLL_REDUCE_SCATTER ||
               c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK || c == REDCOLL_COLL_ALLGATHER ||
               c == REDCOLL_COLL_ALLGATHERV || c == REDCOLL_COLL_ALLTOALL;
    case TD_ALGO: /* the first two algorithms the collective has */
        for (a = 1; a < REDCOLL_ALGO_COUNT && n < 2; ++a)
            if (redcoll_algo_supported(c, (redcoll_algo)a)) algo[n++] = (redcoll_algo)a;
        return n == 2;
    default:
        return 1;
    }
}

/* One collective as this rank makes it (odd: the rank that disagrees). */
static redcoll_result td_call(const redcoll_transport *t, td_case *x, redcoll_coll c, int odd) {
    int32_t *out = x->out[t->rank], in[TD_BUF];
    size_t n = TD_N + (odd && x->kind == TD_COUNT), counts[TD_PMAX];
    int i, root = odd && x->kind == TD_ROOT ? 1 : 0, in_place = odd && x->kind == TD_INPLACE;
    redcoll_dtype d = odd && x->kind == TD_DTYPE ? REDCOLL_FLOAT : REDCOLL_INT32;
    redcoll_op op = odd && x->kind == TD_OP ? REDCOLL_MAX : REDCOLL_SUM;
    redcoll_options o;
    const void *s = in_place ? REDCOLL_IN_PLACE : (const void *)in;
    memset(&o, 0, sizeof o);
    if (x->kind == TD_ALGO && c == x->coll) o.algo = x->algo[odd];
    for (i = 0; i < TD_BUF; ++i) in[i] = out[i] = t->rank * 100 + i;
    for (i = 0; i < t->size; ++i) counts[i] = TD_N;
    if (odd && x->kind == TD_COUNT) counts[t->size - 1] = TD_N + 1;
    switch (c) {
    case REDCOLL_COLL_ALLREDUCE: return redcoll_allreduce(t, s, out, n, d, op, &o);
    case REDCOLL_COLL_REDUCE: return redcoll_reduce(t, in, out, n, d, op, root, &o);
    case REDCOLL_COLL_REDUCE_SCATTER: return redcoll_reduce_scatter(t, s, out, counts, d, op, &o);
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK: return redcoll_reduce_scatter_block(t, s, out, n, d, op, &o);
    case REDCOLL_COLL_ALLGATHER: return redcoll_allgather(t, s, out, n, d, &o);
    case REDCOLL_COLL_ALLGATHERV: return redcoll_allgatherv(t, s, out, counts, d, &o);
    case REDCOLL_COLL_BCAST: return redcoll_bcast(t, out, n, d, root, &o);
    case REDCOLL_COLL_ALLTOALL: return redcoll_alltoall(t, s, out, n, d, &o);
    case REDCOLL_COLL_GATHER: return redcoll_gather(t, in, out, n, d, root, &o);
    case REDCOLL_COLL_SCATTER: return redcoll_scatter(t, in, out, n, d, root, &o);
    default: return redcoll_barrier(t, &o);
    }
}

static redcoll_result td_rank(const redcoll_transport *t, void *arg) {
    td_case *x = (td_case *)arg;
    int odd = t->rank == t->size - 1 && x->kind != TD_NONE;
    redcoll_coll c = x->coll;
    redcoll_result r;
    if (odd && x->kind == TD_OTHER) c = c == REDCOLL_COLL_BCAST ? REDCOLL_COLL_ALLREDUCE : REDCOLL_COLL_BCAST;
    x->in_call[t->rank] = 1;
    r = odd && x->kind == TD_SKIP ? REDCOLL_OK : td_call(t, x, c, odd);
    if (r == REDCOLL_OK) { /* the program goes on (after a barrier, with another call) */
        int32_t v = 1;
        x->in_call[t->rank] = 0;
        r = x->coll == REDCOLL_COLL_BARRIER ? redcoll_bcast(t, &v, 1, REDCOLL_INT32, 0, NULL)
                                            : redcoll_barrier(t, NULL);
    }
    if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
    x->res[t->rank] = r;
    return REDCOLL_OK;
}

/* Checks one finished case: every rank errs (none, for the control, and
   right results there). */
static void td_check(const char *where, td_case *x, int p, const char *report) {
    int r, ok = 0;
    for (r = 0; r < p; ++r) ok += x->res[r] == REDCOLL_OK;
    if (x->kind == TD_NONE) {
        CHECK(ok == p, "%s p=%d %s: agreeing ranks failed (%s)", where, p, redcoll_coll_name(x->coll),
              redcoll_result_string(x->res[ok == p ? 0 : p - 1]));
        if (x->coll == REDCOLL_COLL_ALLREDUCE) /* a result, to see the case ran */
            CHECK(x->out[0][1] == (int32_t)(100 * p * (p - 1) / 2 + p), "%s: allreduce result %d", where,
                  (int)x->out[0][1]);
        return;
    }
    CHECK(ok == 0, "%s p=%d %s, odd rank's %s: %d of %d ranks ended without an error%s%s", where, p,
          redcoll_coll_name(x->coll), td_kind_names[x->kind], ok, p, report ? ":\n" : "",
          report ? report : "");
}

/* ---- the simulator ---- */

static void test_disagree_sim(void) {
    int p, c, k, runs = 0, mismatch = 0;
    for (p = 2; p <= TD_PMAX; ++p)
        for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
            for (k = 0; k < TD_KINDS; ++k) {
                redcoll_mock_config cfg = redcoll_mock_defaults(p);
                redcoll_mock_report rep;
                td_case x;
                int r;
                memset(&x, 0, sizeof x);
                x.coll = (redcoll_coll)c; x.kind = (td_kind)k;
                if (!td_applies(x.coll, x.kind, x.algo)) continue;
                CHECK(redcoll_mock_run(&cfg, td_rank, &x, &rep) == REDCOLL_OK, "mock run");
                td_check("simulator", &x, p, rep.log);
                for (r = 0; r < p; ++r) mismatch += x.res[r] == REDCOLL_ERR_MISMATCH;
                redcoll_mock_report_free(&rep);
                runs++;
            }
    CHECK(runs > 250, "%d cases", runs);
    CHECK(mismatch > 0, "no rank said MISMATCH");
    if (tf_verbose) printf("    %d cases, %d rank results MISMATCH\n", runs, mismatch);
}

/* ---- threads, default configuration, under a watchdog ---- */

typedef struct td_watch {
    pthread_mutex_t mu;
    pthread_cond_t  cv;
    int             done;
    td_case        *x;
    int             p;
    redcoll_result  run;
    char           *report;
} td_watch;

static void td_keep_report(void *arg, const char *text) {
    td_watch *w = (td_watch *)arg;
    size_t n = text ? strlen(text) + 1 : 0;
    free(w->report);
    w->report = n ? (char *)malloc(n) : NULL;
    if (w->report) memcpy(w->report, text, n);
}

static void *td_watched(void *arg) {
    td_watch *w = (td_watch *)arg;
    redcoll_shm_config cfg;
    memset(&cfg, 0, sizeof cfg); /* no timeout: the default */
    cfg.report = td_keep_report;
    cfg.report_arg = w;
    w->run = redcoll_shm_run_config(&cfg, w->p, td_rank, w->x, NULL);
    pthread_mutex_lock(&w->mu);
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Runs x on p threads; 0 when it has not ended within `seconds` (the
   threads are then left behind: the caller stops the runner). */
static int td_run_threads(td_case *x, int p, double seconds, char **report) {
    td_watch w;
    pthread_t th;
    struct timespec ts;
    int ended;
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    w.x = x; w.p = p;
    if (pthread_create(&th, NULL, td_watched, &w) != 0) return 0;
    timespec_get(&ts, TIME_UTC);
    ts.tv_sec += (time_t)seconds;
    pthread_mutex_lock(&w.mu);
    while (!w.done && pthread_cond_timedwait(&w.cv, &w.mu, &ts) != ETIMEDOUT) {}
    ended = w.done;
    pthread_mutex_unlock(&w.mu);
    if (!ended) return 0;
    pthread_join(th, NULL);
    pthread_cond_destroy(&w.cv);
    pthread_mutex_destroy(&w.mu);
    *report = w.report;
    return 1;
}

static void test_disagree_threads(void) {
    int p, c, k, runs = 0, mismatch = 0, deadlock = 0;
    for (p = 2; p <= TD_PMAX; ++p)
        for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
            for (k = 0; k < TD_KINDS; ++k) {
                td_case x;
                char *report = NULL;
                int r;
                memset(&x, 0, sizeof x);
                x.coll = (redcoll_coll)c; x.kind = (td_kind)k;
                if (!td_applies(x.coll, x.kind, x.algo)) continue;
                if (!td_run_threads(&x, p, 10, &report)) {
                    fprintf(stderr, "    threads p=%d %s, odd rank's %s: no end after 10 s (a hang); "
                            "stopping the runner\n", p, redcoll_coll_name(x.coll), td_kind_names[x.kind]);
                    printf("%ld passed, %ld failed\n", tf_passed, tf_failed + 1);
                    exit(1);
                }
                td_check("threads", &x, p, report);
                for (r = 0; r < p; ++r) {
                    mismatch += x.res[r] == REDCOLL_ERR_MISMATCH;
                    deadlock += x.res[r] == REDCOLL_ERR_DEADLOCK;
                }
                if (k != TD_NONE && x.coll == REDCOLL_COLL_ALLREDUCE && x.kind == TD_COUNT && p == 2)
                    CHECK(report && strstr(report, "ranks disagree about the call: rank ") &&
                          strstr(report, "allreduce ("), "the report names the ranks and the calls:\n%s",
                          report ? report : "(none)");
                free(report);
                runs++;
            }
    CHECK(runs > 250, "%d cases", runs);
    CHECK(mismatch > 0, "no rank said MISMATCH");
    if (tf_verbose) printf("    %d cases: %d rank results MISMATCH, %d DEADLOCK\n", runs, mismatch, deadlock);
}

static void suite_disagree(void) {
    tf_test("sim/ranks that disagree: every collective and kind, p=2..5", test_disagree_sim);
    tf_test("shm/ranks that disagree: every collective and kind, p=2..5", test_disagree_threads);
}
