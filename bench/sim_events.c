/* sim_events.c - how fast the simulator runs: messages per second.

       make bench-sim        (or: build/sim_events [REPS [FILTER]])

   Workloads, each in no-data mode (the engine's own cost, no payload copies):
     exchange p     every rank does 2^20/p (at least 16) sendrecv steps with
                    its ring neighbours straight on the transport (no library
                    code)
     ring p         redcoll_allreduce, ring algorithm, 1 M doubles: 2(p-1)
                    rounds of p messages
     rec.doubling p redcoll_allreduce, recursive doubling, 1 M doubles
   Each workload (or those whose name contains FILTER) runs REPS times
   (default 5), interleaved with the others; the table shows the median wall
   time and the median CPU time of the process (on a shared machine the
   honest one), messages per CPU second and CPU nanoseconds per message, and
   the ratio of that to "exchange p=2", the engine's cost when everything
   stays in cache, measured in the same run. The last line is the process's
   peak resident memory (the largest run dominates it). */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"

#include <sys/resource.h>
#include <time.h>

#define SE_REPS_MAX 31

typedef struct se_work {
    const char  *name;
    int          p;
    redcoll_algo algo;   /* AUTO: the raw exchange */
    double       secs[SE_REPS_MAX], cpu[SE_REPS_MAX];
    double       msgs;
} se_work;

static double se_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static redcoll_result se_exchange(const redcoll_transport *t, void *arg) {
    double x = 0, y = 0;
    int i, p = t->size, r = t->rank, steps = (1 << 20) / p > 16 ? (1 << 20) / p : 16;
    redcoll_result res = REDCOLL_OK;
    (void)arg;
    for (i = 0; i < steps && res == REDCOLL_OK; ++i)
        res = t->sendrecv(t->user, (r + 1) % p, &x, sizeof x, (r + p - 1) % p, &y, sizeof y, 0);
    return res;
}

/* Run k of w: its wall and CPU seconds, and the messages it sent. */
static void se_run(se_work *w, int k) {
    double t0 = se_clock(CLOCK_MONOTONIC), c0 = se_clock(CLOCK_PROCESS_CPUTIME_ID), t1, c1, m = 0;
    int r, ok;
    if (w->algo == REDCOLL_ALGO_AUTO) {
        redcoll_mock_config cfg = redcoll_mock_defaults(w->p);
        redcoll_mock_report rep;
        cfg.no_data = 1;
        ok = redcoll_mock_run(&cfg, se_exchange, NULL, &rep) == REDCOLL_OK &&
             redcoll_mock_first_error(&rep) == REDCOLL_OK;
        t1 = se_clock(CLOCK_MONOTONIC);
        c1 = se_clock(CLOCK_PROCESS_CPUTIME_ID);
        for (r = 0; ok && r < w->p; ++r) m += (double)rep.stats[r].msgs_sent;
        redcoll_mock_report_free(&rep);
    } else {
        rc_spec s;
        rc_outcome o;
        memset(&s, 0, sizeof s);
        s.coll = REDCOLL_COLL_ALLREDUCE;
        s.p = w->p;
        s.count = (size_t)1 << 20;
        s.dtype = REDCOLL_DOUBLE;
        s.opts.algo = w->algo;
        s.sim.no_data = 1;
        ok = rc_run(&s, &o) == REDCOLL_OK && o.ok;
        t1 = se_clock(CLOCK_MONOTONIC);
        c1 = se_clock(CLOCK_PROCESS_CPUTIME_ID);
        for (r = 0; ok && r < w->p; ++r) m += (double)o.rep.stats[r].msgs_sent;
        rc_outcome_free(&o);
    }
    if (!ok) { fprintf(stderr, "sim_events: %s p=%d failed\n", w->name, w->p); exit(1); }
    w->msgs = m;
    w->secs[k] = t1 - t0;
    w->cpu[k] = c1 - c0;
}

static int se_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double se_median(const double *v, int n) {
    double s[SE_REPS_MAX];
    memcpy(s, v, sizeof *v * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, se_cmp);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv) {
    static const struct { const char *name; int p; redcoll_algo algo; } list[] = {
        { "exchange", 2, REDCOLL_ALGO_AUTO },       { "exchange", 64, REDCOLL_ALGO_AUTO },
        { "exchange", 4096, REDCOLL_ALGO_AUTO },    { "exchange", 65536, REDCOLL_ALGO_AUTO },
        { "ring", 64, REDCOLL_ALGO_RING },          { "ring", 1024, REDCOLL_ALGO_RING },
        { "rec.doubling", 4096, REDCOLL_ALGO_RECURSIVE_DOUBLING },
        { "rec.doubling", 65536, REDCOLL_ALGO_RECURSIVE_DOUBLING },
    };
    se_work w[sizeof list / sizeof list[0]];
    int nw = (int)(sizeof w / sizeof w[0]), reps = argc > 1 ? atoi(argv[1]) : 5, i, k;
    const char *filter = argc > 2 ? argv[2] : NULL;
    double ref;
    struct rusage ru;
    memset(w, 0, sizeof w);
    for (i = 0; i < nw; ++i) { w[i].name = list[i].name; w[i].p = list[i].p; w[i].algo = list[i].algo; }
    if (reps < 1 || reps > SE_REPS_MAX) { fprintf(stderr, "usage: sim_events [REPS 1..%d [FILTER]]\n", SE_REPS_MAX); return 2; }
    for (k = 0; k < reps; ++k)
        for (i = 0; i < nw; ++i)
            if (i == 0 || !filter || strstr(w[i].name, filter)) se_run(&w[i], k);
    ref = se_median(w[0].cpu, reps) / w[0].msgs;
    printf("%-14s %7s %12s %10s %10s %12s %8s %7s\n", "workload", "p", "messages", "wall s",
           "CPU s", "messages/s", "ns/msg", "vs p=2");
    for (i = 0; i < nw; ++i) {
        double t = se_median(w[i].secs, reps), c = se_median(w[i].cpu, reps);
        if (i > 0 && filter && !strstr(w[i].name, filter)) continue;
        printf("%-14s %7d %12.0f %10.4f %10.4f %12.3g %8.1f %7.2f\n", w[i].name, w[i].p, w[i].msgs, t,
               c, w[i].msgs / c, 1e9 * c / w[i].msgs, c / w[i].msgs / ref);
    }
    getrusage(RUSAGE_SELF, &ru);
    printf("peak resident memory: %.0f MiB (%d repetitions, medians)\n", (double)ru.ru_maxrss / 1024.0, reps);
    return 0;
}
