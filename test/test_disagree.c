/* test_disagree.c - ranks that disagree about a call end in an error on
   every rank, never in a hang or a silent wrong result: on the simulator and
   on threads with the default configuration (no timeout).

   The cases (test/disagree_cases.h), at p = 2..5. Each rank's first error is kept;
   the case passes when every rank has one (and, for the control kind
   `none`, when none has one and the results are right). On threads a
   watchdog fails the test when a case has not ended after 10 s. The MPI
   suites run the same cases (test/mpi/test_mpi.c, test/pmpi/disagree.c). */

#include "disagree_cases.h"

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
