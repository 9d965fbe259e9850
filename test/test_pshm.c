/* test_pshm.c - the process-shared-memory transport (transports/redcoll_pshm.h):
   every registered schedule on p = 1..8 processes, each rank checking its
   own result bitwise against the harness's canonical-order reference (so
   all ranks hold identical results); the transport's promises on every
   data path (inline, cells, single copy, the segment's arena), sizes, FIFO,
   the overflow queue, abort, timeout; and the robustness a system service
   owes: a rank killed (SIGKILL) mid-collective or while attaching, a
   /dev/shm too small, names taken or not this user's, and nothing of a job
   left in /dev/shm. Ranks are processes forked from the runner. Skipped
   under the thread sanitizer (it sees one thread per process). */
#include "transports/redcoll_pshm.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Largest vector per rank in the sweep: 4 MiB (as the threads suite). */
#define TPSHM_BIG_BYTES ((size_t)4 << 20)

/* A config every test starts from: a hang becomes a timeout, not a stuck run. */
static redcoll_pshm_config tpshm_cfg(void) {
    redcoll_pshm_config c;
    memset(&c, 0, sizeof c);
    c.timeout_seconds = 60;
    c.attach_seconds = 30;
    return c;
}

/* Runs fn on p forked ranks; every rank's result in res (p entries). */
static redcoll_result tpshm_run(const redcoll_pshm_config *cfg, int p, redcoll_pshm_rank_fn fn,
                                void *arg, redcoll_result *res) {
    return redcoll_pshm_run(cfg, p, fn, arg, res);
}

static long tpshm_sys(long nr, long a, long b, long c, long d, long e) {
    return redcoll__ho_syscall(nr, a, b, c, d, e, 0L);
}

static void tpshm_sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    tpshm_sys(SYS_nanosleep, (long)&ts, 0, 0, 0, 0);
}

/* Segments of this user whose name starts with `prefix` in /dev/shm. */
static int tpshm_leftovers(const char *prefix) {
    char want[256];
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    int n = 0;
    snprintf(want, sizeof want, "redcoll-%u-%s", (unsigned)geteuid(), prefix);
    if (!d) return 0;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, want, strlen(want)) == 0) ++n;
    closedir(d);
    return n;
}

/* A job name unique to this runner and call. */
static const char *tpshm_name(const char *what) {
    static char buf[96];
    static int seq;
    snprintf(buf, sizeof buf, "t%d-%s-%d", (int)getpid(), what, seq++);
    return buf;
}

/* ---- the sweep: every schedule on processes ------------------------------------- */

/* Case `idx` of the sweep at p ranks into *s; 0 past the last. Every rank
   and the parent enumerate the same list: every (collective, algorithm),
   counts 0, 1, p - 1 (< p), 2p + 1 (odd), 1000, 65537 and a 4 MiB vector
   at p = 4 and 7, in place and out, roots 0, p/2, p-1 (one for the large
   ones), int32 sum, doubles for the large ones, 2int MINLOC and the
   non-commutative matrix product where the schedule keeps order. */
static int tpshm_case(int p, int idx, rc_spec *s) {
    int coll, algo, n = 0;
    for (coll = 0; coll < REDCOLL_COLL_COUNT; ++coll) {
        if (!tshm_harness_has((redcoll_coll)coll)) continue;
        for (algo = 0; algo < REDCOLL_ALGO_COUNT; ++algo) {
            int div = tshm_block_coll((redcoll_coll)coll) ? p : 1, k, nc = 6, j;
            size_t counts[7];
            if (!redcoll_algo_supported((redcoll_coll)coll, (redcoll_algo)algo)) continue;
            counts[0] = 0; counts[1] = 1; counts[2] = (size_t)(p > 1 ? p - 1 : 0);
            counts[3] = 2 * (size_t)p + 1; counts[4] = 1000; counts[5] = 65537 / (size_t)div;
            if (p == 4 || p == 7) counts[nc++] = TPSHM_BIG_BYTES / 8 / (size_t)div + 3;
            for (k = 0; k < nc; ++k) {
                int roots[3], nroots = 1;
                roots[0] = 0;
                if (rc_rooted((redcoll_coll)coll) && p > 1 && k < 5) {
                    roots[1] = p / 2; roots[2] = p - 1; nroots = 3;
                }
                if (k >= 5) roots[0] = p / 2;
                for (j = 0; j < nroots; ++j, ++n) {
                    if (n != idx) continue;
                    *s = rc_spec_make((redcoll_coll)coll, (redcoll_algo)algo, p, counts[k]);
                    s->in_place = tf_has_in_place((redcoll_coll)coll) && (k % 2 == 1);
                    if (k >= 5) s->dtype = REDCOLL_DOUBLE;
                    s->root = roots[j];
                    return 1;
                }
            }
            if (rc_reduces((redcoll_coll)coll)) {
                if (n++ == idx) {
                    *s = rc_spec_make((redcoll_coll)coll, (redcoll_algo)algo, p, (size_t)p + 2);
                    s->op = "minloc";
                    s->dtype = REDCOLL_2INT;
                    s->root = p - 1;
                    return 1;
                }
                if (algo == REDCOLL_ALGO_AUTO || redcoll_algo_keeps_order((redcoll_coll)coll, (redcoll_algo)algo)) {
                    if (n++ == idx) {
                        *s = rc_spec_make((redcoll_coll)coll, (redcoll_algo)algo, p, 3 * (size_t)p + 5);
                        s->op = "matmul";
                        s->root = p / 2;
                        s->in_place = p % 2;
                        return 1;
                    }
                }
            }
        }
    }
    return 0;
}

/* What a rank reports about a case it failed (through a pipe to the parent). */
typedef struct tpshm_report {
    int  idx, rank;
    char why[240];
} tpshm_report;

typedef struct tpshm_sweep {
    int p, start, fd; /* fd: the pipe's write end */
    int nb;           /* 1: each case started and completed by polling, waiting or as a plan */
} tpshm_sweep;

/* One rank of the sweep: the cases from `start` on, each checked on this
   rank; stops at the first failure (an error aborts the transport). */
static redcoll_result tpshm_sweep_rank(const redcoll_transport *t, void *arg) {
    const tpshm_sweep *w = (const tpshm_sweep *)arg;
    redcoll_result *results = (redcoll_result *)calloc((size_t)w->p, sizeof *results);
    rc_spec s;
    int idx;
    if (!results) return REDCOLL_ERR_OUT_OF_MEMORY;
    for (idx = w->start; tpshm_case(w->p, idx, &s); ++idx) {
        rc_state st;
        rc_outcome o;
        redcoll_result r;
        s.local_rank1 = t->rank + 1;
        if (w->nb) s.nonblock = idx % 3 == 0 ? RC_NB_TEST : idx % 3 == 1 ? RC_NB_WAIT : RC_NB_PLAN;
        r = rc_begin(&s, &st, &o);
        if (r == REDCOLL_OK) {
            results[t->rank] = rc_rank(t, &st);
            o.rep.size = w->p;
            o.rep.results = results;
            rc_end(&st, &o);
            r = o.ok ? REDCOLL_OK : results[t->rank] ? results[t->rank] : REDCOLL_ERR_INVALID_ARG;
        }
        if (r != REDCOLL_OK) {
            tpshm_report rep;
            memset(&rep, 0, sizeof rep);
            rep.idx = idx;
            rep.rank = t->rank;
            snprintf(rep.why, sizeof rep.why, "%.120s: %.110s", tf_describe(&s),
                     o.why[0] ? o.why : redcoll_result_string(r));
            if (write(w->fd, &rep, sizeof rep) != (ssize_t)sizeof rep) {}
            t->abort(t->user, r); /* the peers stop now, not at their timeout */
            free(results);
            return r;
        }
    }
    free(results);
    return REDCOLL_OK;
}

/* Every case at p: the ranks run them in one go; after a failure (reported
   by the ranks) a fresh segment takes the cases after it. */
static void tpshm_sweep_p(int p, int nb) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result *res = (redcoll_result *)calloc((size_t)p, sizeof *res);
    rc_spec s;
    int ncases = 0, start = 0, i, fds[2];
    while (tpshm_case(p, ncases, &s)) ++ncases;
    if (!res || pipe(fds) != 0) { CHECK(0, "p=%d: no memory or pipe", p); free(res); return; }
    while (start < ncases) {
        tpshm_sweep w;
        tpshm_report rep;
        int failed = ncases, got = 0;
        redcoll_result r;
        w.p = p; w.start = start; w.fd = fds[1]; w.nb = nb;
        cfg.spin = start % 2 ? 300 : -1; /* spinning and sleeping waits both */
        r = tpshm_run(&cfg, p, tpshm_sweep_rank, &w, res);
        if (r != REDCOLL_OK) { /* the reports: the first failed case, and why on each rank */
            struct stat st;
            while (fstat(fds[0], &st) == 0 && got < p &&
                   read(fds[0], &rep, sizeof rep) == (ssize_t)sizeof rep) {
                if (rep.idx < failed) failed = rep.idx;
                CHECK(0, "pshm%s p=%d rank %d case %d: %s", nb ? " started" : "", p, rep.rank, rep.idx, rep.why);
                ++got;
                if (got == p) break;
                {
                    struct pollfd pf;
                    pf.fd = fds[0]; pf.events = POLLIN; pf.revents = 0;
                    if (poll(&pf, 1, 0) <= 0) break;
                }
            }
            if (!got) CHECK(0, "pshm p=%d from case %d: %s, no rank reported a case", p, start,
                            redcoll_result_string(r));
            if (failed == ncases) failed = start;
        }
        for (i = start; i < failed && i < ncases; ++i) CHECK(1, "case");
        start = failed + 1;
        if (r == REDCOLL_OK) break;
    }
    close(fds[0]);
    close(fds[1]);
    free(res);
}

static void test_pshm_sweep(void) {
    int p;
    for (p = 1; p <= 8; ++p) tpshm_sweep_p(p, 0);
}

/* The same cases started (redcoll_i<coll>), completed in turn by polling
   (redcoll_test), by redcoll_wait and as a started plan. */
static void test_pshm_nb_sweep(void) {
    static const int ps[6] = { 1, 2, 3, 4, 5, 8 };
    int i;
    for (i = 0; i < 6; ++i) tpshm_sweep_p(ps[i], 1);
}

/* Ten iallreduce of different sizes outstanding at once, completed in
   reverse order, odd ones by polling, even ones by waiting; a blocking
   allreduce between a start and its wait. Each rank checks its sums. */
static redcoll_result tpshm_many_rank(const redcoll_transport *t, void *arg) {
    enum { K = 10 };
    redcoll_coll_request *req[K];
    double *buf[K + 1], one = 1;
    redcoll_result r = REDCOLL_OK;
    int k, made = 0;
    size_t i;
    (void)arg;
    for (k = 0; k < K; ++k, ++made) {
        size_t n = (size_t)(k * 7919 % 50000) + 1;
        if (!(buf[k] = (double *)malloc(n * sizeof(double)))) break;
        for (i = 0; i < n; ++i) buf[k][i] = t->rank + (double)i;
        if ((r = redcoll_iallreduce(t, REDCOLL_IN_PLACE, buf[k], n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL,
                                    &req[k])) != REDCOLL_OK) { free(buf[k]); break; }
    }
    if (made < K) r = r ? r : REDCOLL_ERR_OUT_OF_MEMORY;
    else r = redcoll_allreduce(t, REDCOLL_IN_PLACE, &one, 1, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    if (r == REDCOLL_OK && one != t->size) r = REDCOLL_ERR_INVALID_ARG;
    for (k = made - 1; k >= 0; --k) {
        size_t n = (size_t)(k * 7919 % 50000) + 1;
        redcoll_result q;
        int done = 0;
        if (k % 2) do q = redcoll_test(req[k], &done); while (q == REDCOLL_OK && !done);
        else q = redcoll_wait(req[k]);
        redcoll_request_free(req[k]);
        for (i = 0; q == REDCOLL_OK && i < n; ++i)
            if (buf[k][i] != t->size * (t->size - 1) / 2.0 + t->size * (double)i) q = REDCOLL_ERR_INVALID_ARG;
        if (r == REDCOLL_OK) r = q;
        free(buf[k]);
    }
    return r;
}

static void test_pshm_nb_many(void) {
    redcoll_result res[5];
    int p;
    for (p = 1; p <= 5; ++p) {
        redcoll_pshm_config cfg = tpshm_cfg();
        cfg.spin = p % 2 ? 300 : -1;
        CHECK(tpshm_run(&cfg, p, tpshm_many_rank, NULL, res) == REDCOLL_OK,
              "p=%d: 10 outstanding, reverse order, a blocking call between: %s", p,
              redcoll_result_string(res[p - 1]));
    }
}

/* The 24 requests of seven shapes (test_nonblock.c) on processes: started
   in one order and completed in a different order per rank, and as plans
   started in a different order per rank, each bitwise the blocking call's. */
static void test_pshm_nb_queued(void) {
    redcoll_result res[5];
    int p, r, ok;
    for (p = 2; p <= 4; ++p) {
        redcoll_pshm_config cfg = tpshm_cfg();
        cfg.timeout_seconds = 20; /* a hang fails the test */
        cfg.spin = p % 2 ? 300 : -1;
        ok = tpshm_run(&cfg, p, tnq_rank, NULL, res) == REDCOLL_OK;
        for (r = 0; r < p; ++r) ok &= res[r] == REDCOLL_OK;
        CHECK(ok, "p=%d: %d outstanding, per-rank completion order: %s", p, TNQ_N, redcoll_result_string(res[0]));
        ok = tpshm_run(&cfg, p, tnq_plan_rank, NULL, res) == REDCOLL_OK;
        for (r = 0; r < p; ++r) ok &= res[r] == REDCOLL_OK;
        CHECK(ok, "p=%d: %d plans started in per-rank order: %s", p, TNQ_N, redcoll_result_string(res[0]));
    }
}

/* ---- the transport's own promises ---------------------------------------------------- */

/* FIFO per (source, tag), tags kept apart, every data path: rank 0 posts
   isends of 12 bytes (inline), 40 KiB (cells) and 1 MiB (single copy, or
   cells) on tag 5 and 4 bytes on tag 6; rank 1 takes tag 6 first, then
   tag 5 in order. */
static redcoll_result tpshm_fifo_rank(const redcoll_transport *t, void *arg) {
    static const size_t sz[3] = { 12, 40 << 10, 1 << 20 };
    unsigned char *buf = (unsigned char *)malloc(sz[2]);
    redcoll_request q[4];
    int32_t tag7 = 7, x = 0;
    size_t i;
    int k;
    redcoll_result r = REDCOLL_OK;
    (void)arg;
    if (!buf) return REDCOLL_ERR_OUT_OF_MEMORY;
    if (t->rank == 0) {
        unsigned char *src[3];
        for (k = 0; k < 3; ++k) {
            src[k] = (unsigned char *)malloc(sz[k]);
            if (!src[k]) return REDCOLL_ERR_OUT_OF_MEMORY;
            for (i = 0; i < sz[k]; ++i) src[k][i] = (unsigned char)(i * 7 + (size_t)k);
            if ((r = t->isend(t->user, 1, src[k], sz[k], 5, &q[k]))) return r;
        }
        if ((r = t->isend(t->user, 1, &tag7, 4, 6, &q[3]))) return r;
        r = t->waitall(t->user, 4, q);
        for (k = 0; k < 3; ++k) free(src[k]);
        free(buf);
        return r;
    }
    if (t->recv(t->user, 0, &x, 4, 6) || x != 7) r = REDCOLL_ERR_INVALID_ARG; /* other tag first */
    for (k = 0; k < 3 && r == REDCOLL_OK; ++k) {
        memset(buf, 0, sz[k]);
        if ((r = t->recv(t->user, 0, buf, sz[k], 5))) break;
        for (i = 0; i < sz[k]; ++i)
            if (buf[i] != (unsigned char)(i * 7 + (size_t)k)) { r = REDCOLL_ERR_INVALID_ARG; break; }
    }
    free(buf);
    return r;
}

/* Rank 0 sends m[0] bytes, rank 1 expects m[1]; m[2]: the sender's buffer
   comes from the segment's arena (the segment path). */
static redcoll_result tpshm_mismatch_rank(const redcoll_transport *t, void *arg) {
    const size_t *m = (const size_t *)arg;
    size_t n = m[0] > m[1] ? m[0] : m[1];
    char *buf = (char *)calloc(n + 1, 1);
    redcoll_result r;
    if (!buf) return REDCOLL_ERR_OUT_OF_MEMORY;
    if (t->rank == 0) {
        void *seg = m[2] ? t->scratch(t->user, m[0] + 1) : NULL;
        r = t->send(t->user, 1, seg ? seg : buf, m[0], 1);
    } else {
        r = t->recv(t->user, 0, buf, m[1], 1);
    }
    free(buf);
    return r;
}

/* Eager sends complete unreceived: rank 0 sends 8 bytes (inline) and 10 KiB
   (cells) on tags 1 and 2, then waits for rank 1's word; rank 1 sends the
   word first and receives tag 2 before tag 1. Rendezvous sends would leave
   rank 0 in its first send forever (the timeout fails the test). */
static redcoll_result tpshm_eager_rank(const redcoll_transport *t, void *arg) {
    char big[10 << 10], small[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    int32_t word = 42;
    redcoll_result r;
    size_t i;
    (void)arg;
    if (t->rank == 0) {
        for (i = 0; i < sizeof big; ++i) big[i] = (char)(i % 251);
        if ((r = t->send(t->user, 1, small, sizeof small, 1)) || (r = t->send(t->user, 1, big, sizeof big, 2)))
            return r;
        memset(big, 0, sizeof big); /* the send is complete: its buffer is free */
        if ((r = t->recv(t->user, 1, &word, 4, 3))) return r;
        return word == 43 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
    }
    word = 43;
    if ((r = t->send(t->user, 0, &word, 4, 3))) return r;
    if ((r = t->recv(t->user, 0, big, sizeof big, 2))) return r;
    for (i = 0; i < sizeof big; ++i)
        if (big[i] != (char)(i % 251)) return REDCOLL_ERR_INVALID_ARG;
    if ((r = t->recv(t->user, 0, small, sizeof small, 1))) return r;
    return small[7] == 8 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

static long long tpshm_now_ns(void) { return redcoll__ho_now(); }

/* A send read where it is (single copy, or from the segment) is
   rendezvous: it returns after its receive was posted. Rank 1 sleeps,
   notes the time, receives; rank 0 notes when its send returned; the
   times are compared on rank 1. arg: 1 = from the arena. */
static redcoll_result tpshm_rendezvous_rank(const redcoll_transport *t, void *arg) {
    size_t n = (size_t)1 << 20;
    char *buf = (char *)malloc(n);
    long long when;
    redcoll_result r;
    if (!buf) return REDCOLL_ERR_OUT_OF_MEMORY;
    if (t->rank == 0) {
        char *src = arg ? (char *)t->scratch(t->user, n) : buf;
        if (!src) return REDCOLL_ERR_OUT_OF_MEMORY;
        memset(src, 3, n);
        if ((r = t->send(t->user, 1, src, n, 1))) return r;
        when = tpshm_now_ns();
        r = t->send(t->user, 1, &when, sizeof when, 2);
    } else {
        long long posted, returned = 0;
        tpshm_sleep_ms(100);
        posted = tpshm_now_ns();
        if ((r = t->recv(t->user, 0, buf, n, 1)) || (r = t->recv(t->user, 0, &returned, sizeof returned, 2)))
            return r;
        r = returned >= posted && buf[n - 1] == 3 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
    }
    free(buf);
    return r;
}

/* A rank that leaves (destroys its view) after eager sends: its peer still
   receives them, and a receive nothing will match fails (MISMATCH) instead
   of waiting forever. */
static redcoll_result tpshm_left_rank(const redcoll_transport *t, void *arg) {
    static char big[20000];
    int64_t x = 5;
    redcoll_result r;
    (void)arg;
    if (t->rank == 1) {
        memset(big, 9, sizeof big);
        if ((r = t->send(t->user, 0, &x, sizeof x, 1))) return r;
        return t->send(t->user, 0, big, sizeof big, 2);
    }
    tpshm_sleep_ms(300); /* rank 1 has gone */
    x = 0;
    if ((r = t->recv(t->user, 1, big, sizeof big, 2)) || big[19999] != 9) return r ? r : REDCOLL_ERR_INVALID_ARG;
    if ((r = t->recv(t->user, 1, &x, sizeof x, 1)) || x != 5) return r ? r : REDCOLL_ERR_INVALID_ARG;
    return t->recv(t->user, 1, &x, sizeof x, 3) == REDCOLL_ERR_MISMATCH ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
}

/* ---- the host's progress: an MPI library the ranks also live in ---- */

static long tpshm_host_calls; /* per process: every rank is one */
static void tpshm_host(void *arg) { (void)arg; ++tpshm_host_calls; }

static long long tpshm_cpu_ns(void) {
    struct timespec ts = { 0, 0 };
    tpshm_sys(SYS_clock_gettime, 2 /* CLOCK_PROCESS_CPUTIME_ID */, (long)&ts, 0, 0, 0);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Rank 0 waits 200 ms for rank 1's message. The host's progress runs
   while it sleeps, at least every progress_seconds (2 ms: dozens of calls
   even without polls), and the rank sleeps between: polls only after a
   peer's kick (a poll calls it every 32 polls, so a rank that polled again
   after every timed sleep would make thousands of calls), under a quarter
   of a core. Then in a test loop, every test that finds its receive
   pending runs the host's progress too. */
static redcoll_result tpshm_host_rank(const redcoll_transport *t, void *arg) {
    long long t0, cpu0, waited, cpu, most;
    long calls, tests = 0;
    int64_t x = 0;
    redcoll_request q = { NULL, 0 };
    int done = 0;
    redcoll_result r;
    (void)arg;
    if (t->rank == 1) {
        tpshm_sleep_ms(200);
        x = 7;
        if ((r = t->send(t->user, 0, &x, sizeof x, 1))) return r;
        tpshm_sleep_ms(50);
        return t->send(t->user, 0, &x, sizeof x, 2);
    }
    calls = tpshm_host_calls;
    t0 = tpshm_now_ns();
    cpu0 = tpshm_cpu_ns();
    if ((r = t->recv(t->user, 1, &x, sizeof x, 1)) || x != 7) return r ? r : REDCOLL_ERR_INVALID_ARG;
    waited = tpshm_now_ns() - t0;
    cpu = tpshm_cpu_ns() - cpu0;
    calls = tpshm_host_calls - calls;
    most = 2 * waited / 2000000 + 200; /* every nap of 2 ms twice, and the first polls' */
    if (calls < 20 || calls > most || cpu * 4 > waited) {
        fprintf(stderr, "host progress while asleep: %ld calls (want 20 .. %lld), %.1f ms of CPU in %.1f ms\n",
                calls, most, (double)cpu / 1e6, (double)waited / 1e6);
        return REDCOLL_ERR_INVALID_ARG;
    }
    x = 0;
    if ((r = t->irecv(t->user, 1, &x, sizeof x, 2, &q))) return r;
    calls = tpshm_host_calls;
    while (!done) {
        if ((r = t->test(t->user, 1, &q, &done))) return r;
        tests += !done;
    }
    calls = tpshm_host_calls - calls;
    if (x != 7 || calls < tests) {
        fprintf(stderr, "host progress in a test loop: %ld calls for %ld tests pending\n", calls, tests);
        return REDCOLL_ERR_INVALID_ARG;
    }
    return REDCOLL_OK;
}

static void test_pshm_host_progress(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result res[2];
    int spin;
    cfg.progress = tpshm_host;
    cfg.progress_seconds = 0.002;
    for (spin = 0; spin < 2; ++spin) {
        cfg.spin = spin ? 2000 : -1;
        CHECK(tpshm_run(&cfg, 2, tpshm_host_rank, NULL, res) == REDCOLL_OK,
              "%s: the host's progress runs while a rank sleeps and tests, the rank asleep between: %s / %s",
              spin ? "2000 polls before sleeping" : "no polls", redcoll_result_string(res[0]),
              redcoll_result_string(res[1]));
    }
    cfg.progress_seconds = -1;
    CHECK(redcoll_pshm_run(&cfg, 2, tpshm_host_rank, NULL, NULL) == REDCOLL_ERR_INVALID_ARG,
          "a negative progress_seconds is refused");
}

static void test_pshm_transport(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result res[2];
    int i, cma;
    for (cma = 0; cma < 2; ++cma) {
        cfg.no_cma = !cma;
        CHECK(tpshm_run(&cfg, 2, tpshm_fifo_rank, NULL, res) == REDCOLL_OK,
              "%s: FIFO per (source, tag) on every path: %s / %s", cma ? "cma" : "cells",
              redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    }
    {   /* {sent, expected, from the arena, the sender fails too} */
        static const size_t mis[][4] = {
            { 8, 4, 0, 0 }, { 4, 8, 0, 0 }, { 0, 8, 0, 0 },      /* inline: eager */
            { 40, 36, 0, 0 }, { 33, 32, 0, 0 }, { 5000, 6000, 0, 0 }, /* cells: eager */
            { 1 << 20, (1 << 20) - 8, 0, 1 },                    /* more than the cells hold */
            { 5 << 20, (5 << 20) + 8, 0, 1 },                    /* single copy */
            { 100000, 100008, 1, 1 } };                          /* from the segment */
        cfg.no_cma = 0;
        cfg.arena_bytes = (size_t)2 << 20;
        for (i = 0; i < (int)(sizeof mis / sizeof mis[0]); ++i) {
            tpshm_run(&cfg, 2, tpshm_mismatch_rank, (void *)mis[i], res);
            CHECK(res[0] == (mis[i][3] ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK) && res[1] == REDCOLL_ERR_TRANSPORT,
                  "send %zu bytes%s to a recv of %zu: %s: %s / %s", mis[i][0], mis[i][2] ? " from the arena" : "",
                  mis[i][1], mis[i][3] ? "both fail" : "the receiver fails (the eager sender is done)",
                  redcoll_result_string(res[0]), redcoll_result_string(res[1]));
        }
    }
    cfg.timeout_seconds = 10;
    CHECK(tpshm_run(&cfg, 2, tpshm_eager_rank, NULL, res) == REDCOLL_OK,
          "inline and cell sends complete unreceived: %s / %s", redcoll_result_string(res[0]),
          redcoll_result_string(res[1]));
    cfg.timeout_seconds = 60;
    cfg.cma_min_bytes = cfg.cma_copy_min_bytes = 4096;
    for (i = 0; i < 2; ++i)
        CHECK(tpshm_run(&cfg, 2, tpshm_rendezvous_rank, i ? &cfg : NULL, res) == REDCOLL_OK,
              "a 1 MiB send %s is rendezvous: %s / %s", i ? "from the arena" : "by single copy",
              redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    CHECK(tpshm_run(&cfg, 2, tshm_progress_rank, NULL, res) == REDCOLL_OK,
          "pending irecv served while waiting elsewhere; exchange with oneself: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    CHECK(redcoll_pshm_run(NULL, 0, tshm_progress_rank, NULL, NULL) == REDCOLL_ERR_INVALID_ARG, "p = 0");
    cfg.no_cma = 1;
    CHECK(tpshm_run(&cfg, 2, tpshm_left_rank, NULL, res) == REDCOLL_OK,
          "a peer that left: its eager sends received, then a receive from it fails: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    {
        redcoll_pshm *h = NULL;
        redcoll_pshm_config bad = tpshm_cfg();
        bad.ncells = 65;
        CHECK(redcoll_pshm_create(&bad, 2, &h) == REDCOLL_ERR_INVALID_ARG && !h, "65 cells refused");
        bad = tpshm_cfg();
        bad.timeout_seconds = -1;
        CHECK(redcoll_pshm_create(&bad, 2, &h) == REDCOLL_ERR_INVALID_ARG && !h, "negative timeout refused");
        CHECK(redcoll_pshm_create(NULL, 3, &h) == REDCOLL_OK && h, "create");
        CHECK(!redcoll_pshm_transport(h), "no transport before attach");
        CHECK(redcoll_pshm_attach(h, 3) == REDCOLL_ERR_INVALID_ARG, "rank out of range");
        redcoll_pshm_destroy(h);
    }
}

/* ---- every data path, byte for byte ------------------------------------------------- */

/* The consumer of test_shm.c (tshm_sink: whole units, in order, added into
   acc) with unit 12 (split across cells) or 100 (above the carry kept in an
   end); the payload by words. */
static void tpshm_fill(int32_t *b, int r, size_t words) {
    size_t i;
    for (i = 0; i < words; ++i) b[i] = r * 100000 + (int32_t)i + 1;
}

typedef struct tpshm_paths { size_t unit; int arena; } tpshm_paths;

/* Rank 1's recv and recv_reduce match rank 0's sends; then sendrecv_reduce
   on both sides; sizes 0 .. 1 MiB of whole units (the inline edge, one
   cell and a bit, many cells). acc = own + partner's, checked word by word;
   the consumer saw one in-order cover of whole units. */
static redcoll_result tpshm_paths_rank(const redcoll_transport *t, void *arg) {
    const tpshm_paths *a = (const tpshm_paths *)arg;
    static const size_t units[] = { 0, 1, 2, 3, 5, 11, 333, 2731, 87381 };
    size_t u = a->unit, maxb = 87381 * 12 + 128;
    int me = t->rank, other = 1 - t->rank, ui;
    int32_t *mine = (int32_t *)malloc(maxb), *theirs = (int32_t *)malloc(maxb), *acc = (int32_t *)malloc(maxb);
    redcoll_result r = REDCOLL_OK;
    if (!mine || !theirs || !acc) return REDCOLL_ERR_OUT_OF_MEMORY;
    if (a->arena) { /* the send buffers in the segment: read where they are */
        free(mine);
        mine = (int32_t *)t->scratch(t->user, maxb);
        if (!mine) return REDCOLL_ERR_OUT_OF_MEMORY;
    }
    for (ui = 0; ui < (int)(sizeof units / sizeof units[0]) && r == REDCOLL_OK; ++ui) {
        size_t b = units[ui] * 12 / u * u, i;
        tshm_sink k;
        redcoll_consumer c;
        tpshm_fill(mine, me, b / 4);
        tpshm_fill(theirs, other, b / 4);
        memset(&k, 0, sizeof k);
        k.acc = acc; k.unit = u; k.cap = b;
        c.fn = tshm_sink_fn; c.arg = &k; c.unit = u;
        /* plain: rank 0 sends, rank 1 receives into acc */
        if (me == 0) r = t->send(t->user, 1, mine, b, 1);
        else {
            memset(acc, 0, b + 4);
            r = t->recv(t->user, 0, acc, b, 1);
            for (i = 0; r == REDCOLL_OK && i < b / 4; ++i)
                if (acc[i] != theirs[i]) r = REDCOLL_ERR_INVALID_ARG;
        }
        if (r) break;
        /* receive-and-reduce on rank 1 */
        memcpy(acc, mine, b);
        if (me == 0) r = t->send(t->user, 1, mine, b, 2);
        else r = t->recv_reduce(t->user, 0, b, 2, &c);
        if (r) break;
        if (me == 1) {
            if (k.bad || k.next != b || (b == 0) != (k.calls == 0)) r = REDCOLL_ERR_INVALID_ARG;
            for (i = 0; r == REDCOLL_OK && i < b / 4; ++i)
                if (acc[i] != mine[i] + theirs[i]) r = REDCOLL_ERR_INVALID_ARG;
        }
        if (r) break;
        /* a fused exchange on both sides */
        memcpy(acc, mine, b);
        k.next = 0; k.calls = 0;
        r = t->sendrecv_reduce(t->user, other, mine, b, other, b, 3, &c);
        if (r) break;
        if (k.bad || k.next != b) r = REDCOLL_ERR_INVALID_ARG;
        for (i = 0; r == REDCOLL_OK && i < b / 4; ++i)
            if (acc[i] != mine[i] + theirs[i]) r = REDCOLL_ERR_INVALID_ARG;
    }
    if (!a->arena) free(mine);
    free(theirs); free(acc);
    return r;
}

static void test_pshm_paths(void) {
    /* cells only, small cells (units split across them), single copy from
       4 KiB (reductions read a chunk at a time), single copy with chunks of
       a few units, single copy with reductions pumped through small cells
       (the chunk smaller than a unit), the arena */
    static const char *const names[] = { "cells", "cells of 192 B", "single copy", "single copy, chunks of 200 B",
                                         "single copy, reductions pumped through cells of 192 B", "arena" };
    static const size_t unitv[] = { 12, 100 };
    redcoll_result res[2];
    int v, ui;
    for (v = 0; v < 6; ++v)
        for (ui = 0; ui < 2; ++ui) {
            redcoll_pshm_config cfg = tpshm_cfg();
            tpshm_paths a;
            cfg.no_cma = v < 2;
            if (v == 1 || v == 4) { cfg.cell_bytes = 192; cfg.ncells = 5; }
            if (v >= 2) cfg.cma_min_bytes = cfg.cma_copy_min_bytes = 4096;
            if (v == 3) cfg.cma_chunk_bytes = 200;
            if (v == 4) cfg.cma_chunk_bytes = 8;
            if (v == 5) cfg.arena_bytes = (size_t)2 << 20;
            a.unit = unitv[ui];
            a.arena = v == 5;
            CHECK(tpshm_run(&cfg, 2, tpshm_paths_rank, &a, res) == REDCOLL_OK,
                  "%s, unit %zu: send/recv, recv_reduce, sendrecv_reduce, 0 .. 1 MiB: %s / %s",
                  names[v], unitv[ui], redcoll_result_string(res[0]), redcoll_result_string(res[1]));
        }
}

/* ---- the overflow queue, stress ---------------------------------------------------------- */

/* Rank 0 posts 9 isends to rank 1 with tags 0..8 (two in the slots, the
   rest queued in descriptors, or waiting to be posted); rank 1 receives
   them in reverse tag order (arg NULL) or in order. Sizes 4 B and 40 KiB
   alternate (inline and cells). */
static redcoll_result tpshm_overflow_rank(const redcoll_transport *t, void *arg) {
    static int32_t v[9][10240];
    int32_t w[10240];
    redcoll_request q[9];
    int i, j;
    redcoll_result r;
    for (i = 0; i < 9; ++i)
        for (j = 0; j < 10240; ++j) v[i][j] = 100 * i + j;
    if (t->rank == 0) {
        for (i = 0; i < 9; ++i)
            if ((r = t->isend(t->user, 1, v[i], i % 2 ? 4 : sizeof v[i], i, &q[i]))) return r;
        return t->waitall(t->user, 9, q);
    }
    for (j = 0; j < 9; ++j) {
        i = arg ? j : 8 - j;
        memset(w, 0, sizeof w);
        if ((r = t->recv(t->user, 0, w, i % 2 ? 4 : sizeof w, i))) return r;
        if (w[0] != 100 * i || (i % 2 == 0 && w[10239] != 100 * i + 10239)) return REDCOLL_ERR_INVALID_ARG;
    }
    return REDCOLL_OK;
}

/* Many small and medium exchanges in a ring and ping-pongs: a lost wake-up
   would hang (the timeout catches it). */
static redcoll_result tpshm_stress_rank(const redcoll_transport *t, void *arg) {
    int p = t->size, me = t->rank, right = (me + 1) % p, left = (me + p - 1) % p, it;
    int64_t x[600], y[600];
    redcoll_result r;
    (void)arg;
    for (it = 0; it < 2000; ++it) {
        size_t n = it % 5 == 4 ? sizeof x : 8;
        x[0] = (int64_t)me * 1000000 + it;
        x[599] = -x[0];
        if ((r = t->sendrecv(t->user, right, x, n, left, y, n, 1))) return r;
        if (y[0] != (int64_t)left * 1000000 + it || (n > 8 && y[599] != -y[0])) return REDCOLL_ERR_INVALID_ARG;
        if (me % 2 == 0 && me + 1 < p && (r = t->send(t->user, me + 1, x, n, 2))) return r;
        if (me % 2 == 1 && (r = t->recv(t->user, me - 1, y, n, 2))) return r;
    }
    return REDCOLL_OK;
}

static void test_pshm_overflow(void) {
    static const int ps[] = { 2, 3, 4, 6 };
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result res[6];
    int i;
    CHECK(tpshm_run(&cfg, 2, tpshm_overflow_rank, NULL, res) == REDCOLL_OK,
          "9 isends to one rank received in reverse tag order: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg.ndesc = 2; /* 2 slots, 2 descriptors, 5 waiting to be posted */
    CHECK(tpshm_run(&cfg, 2, tpshm_overflow_rank, &cfg, res) == REDCOLL_OK,
          "9 isends with 2 descriptors, received in order: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg = tpshm_cfg();
    for (i = 0; i < 4; ++i) {
        cfg.spin = i % 2 ? 0 : -1;
        CHECK(tpshm_run(&cfg, ps[i], tpshm_stress_rank, NULL, res) == REDCOLL_OK,
              "p=%d spin=%d: 2000 ring exchanges and ping-pongs of 8 B and 4.7 KiB", ps[i], cfg.spin);
    }
}

/* ---- abort, timeout, faults ------------------------------------------------------------------ */

/* Rank 0 aborts; ranks 1..p-1 are blocked in (or about to enter) a receive
   from rank 0 and are all released with ABORTED; later calls fail too. */
static redcoll_result tpshm_abort_rank(const redcoll_transport *t, void *arg) {
    int x = 0;
    (void)arg;
    if (t->rank == 0) {
        tpshm_sleep_ms(20);
        t->abort(t->user, REDCOLL_ERR_TRANSPORT);
        return t->send(t->user, 1, &x, sizeof x, 1) == REDCOLL_ERR_ABORTED ? REDCOLL_OK
                                                                          : REDCOLL_ERR_INVALID_ARG;
    }
    if (t->recv(t->user, 0, &x, sizeof x, 1) != REDCOLL_ERR_ABORTED) return REDCOLL_ERR_INVALID_ARG;
    return t->recv(t->user, 0, &x, sizeof x, 1);
}

static redcoll_result tpshm_timeout_rank(const redcoll_transport *t, void *arg) {
    int x = 0;
    char big[40000];
    (void)arg;
    if (t->rank == 1) { tpshm_sleep_ms(500); return REDCOLL_OK; } /* never sends */
    if (t->recv(t->user, 1, &x, sizeof x, 1) != REDCOLL_ERR_TIMEOUT) return REDCOLL_ERR_INVALID_ARG;
    return t->recv(t->user, 1, big, sizeof big, 2);
}

/* Requests nobody matches: waitall times out and withdraws them; then the
   ranks go on: rank 1 waits (its receive timing out and withdrawn, again
   and again) for rank 0's word, then sends. */
static redcoll_result tpshm_waitall_timeout_rank(const redcoll_transport *t, void *arg) {
    int a = 1, b = 0, c = 0;
    static char big[1 << 20];
    redcoll_request q[3];
    redcoll_result r;
    (void)arg;
    if (t->rank == 0) {
        if (t->irecv(t->user, 1, &b, sizeof b, 40, &q[0]) || t->isend(t->user, 1, &a, sizeof a, 41, &q[1]) ||
            t->isend(t->user, 1, big, sizeof big, 43, &q[2]))
            return REDCOLL_ERR_INVALID_ARG;
        r = t->waitall(t->user, 3, q);
        if (r != REDCOLL_ERR_TIMEOUT || q[0].ptr || q[1].ptr || q[2].ptr) return REDCOLL_ERR_INVALID_ARG;
        if ((r = t->send(t->user, 1, &a, sizeof a, 44))) return r;
        while ((r = t->recv(t->user, 1, &c, sizeof c, 42)) == REDCOLL_ERR_TIMEOUT) {}
        return r == REDCOLL_OK && c == 7 ? REDCOLL_OK : REDCOLL_ERR_INVALID_ARG;
    }
    c = 7;
    while ((r = t->recv(t->user, 0, &b, sizeof b, 44)) == REDCOLL_ERR_TIMEOUT) {}
    if (r) return r;
    return t->send(t->user, 0, &c, sizeof c, 42);
}

/* Rank p-1 skips the collective, staying a while (arg->stay) or leaving at
   once; the others must not hang: a timeout, or the peer that left. */
typedef struct tpshm_absent { redcoll_options o; int stay; } tpshm_absent;
static redcoll_result tpshm_absent_rank(const redcoll_transport *t, void *arg) {
    int32_t buf[4096] = { 0 };
    const tpshm_absent *a = (const tpshm_absent *)arg;
    if (t->rank == t->size - 1) {
        if (a->stay) tpshm_sleep_ms(1000);
        return REDCOLL_OK;
    }
    return redcoll_allreduce(t, REDCOLL_IN_PLACE, buf, 4096, REDCOLL_INT32, REDCOLL_SUM, &a->o);
}

/* The library's abort on a failed call, on real processes: call k of one
   rank fails (test_shm.c's faulty transport); that rank returns the
   transport error, every other rank OK or ABORTED, nobody hangs. */
static void tpshm_faults(void) {
    static const redcoll_coll colls[] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE_SCATTER_BLOCK,
                                          REDCOLL_COLL_BCAST };
    int ci, algo;
    for (ci = 0; ci < 3; ++ci)
        for (algo = 1; algo < REDCOLL_ALGO_COUNT; ++algo) {
            int fr;
            long k;
            if (!redcoll_algo_supported(colls[ci], (redcoll_algo)algo)) continue;
            for (fr = 0; fr < 5; fr += 2)
                for (k = 1; k <= 7; k += 3) {
                    rc_spec s = rc_spec_make(colls[ci], (redcoll_algo)algo, 5, 3000);
                    redcoll_pshm_config cfg = tpshm_cfg();
                    redcoll_result res[5];
                    rc_state st;
                    rc_outcome o;
                    tshm_case c;
                    int hit = 0, i, others = 1, all_ok = 1;
                    s.root = 1;
                    if (rc_begin(&s, &st, &o) != REDCOLL_OK) { CHECK(0, "no memory"); return; }
                    memset(&c, 0, sizeof c);
                    c.st = &st; c.fail_at = k; c.fail_rank = fr; c.hit = &hit;
                    cfg.timeout_seconds = 30;
                    redcoll_pshm_run(&cfg, 5, tshm_case_rank, &c, res);
                    rc_teardown(&st);
                    for (i = 0; i < 5; ++i) {
                        all_ok &= res[i] == REDCOLL_OK;
                        if (i != fr) others &= res[i] == REDCOLL_OK || res[i] == REDCOLL_ERR_ABORTED;
                    }
                    CHECK(all_ok || (res[fr] == REDCOLL_ERR_TRANSPORT && others),
                          "%s, call %ld of rank %d fails: %s %s %s %s %s", tf_describe(&s), k, fr,
                          redcoll_result_string(res[0]), redcoll_result_string(res[1]),
                          redcoll_result_string(res[2]), redcoll_result_string(res[3]),
                          redcoll_result_string(res[4]));
                }
        }
}

static void test_pshm_abort_timeout(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result res[6];
    int i, algo;
    tpshm_run(&cfg, 6, tpshm_abort_rank, NULL, res);
    CHECK(res[0] == REDCOLL_OK, "the aborting rank's later calls fail with ABORTED: %s", redcoll_result_string(res[0]));
    for (i = 1; i < 6; ++i)
        CHECK(res[i] == REDCOLL_ERR_ABORTED, "rank %d released with ABORTED, and again: %s", i,
              redcoll_result_string(res[i]));
    cfg.timeout_seconds = 0.05;
    tpshm_run(&cfg, 2, tpshm_timeout_rank, NULL, res);
    CHECK(res[0] == REDCOLL_ERR_TIMEOUT, "receives nobody serves time out, inline and cells: %s",
          redcoll_result_string(res[0]));
    cfg.timeout_seconds = 0.5;
    cfg.cma_min_bytes = cfg.cma_copy_min_bytes = 4096;
    tpshm_run(&cfg, 2, tpshm_waitall_timeout_rank, NULL, res);
    CHECK(res[0] == REDCOLL_OK && res[1] == REDCOLL_OK,
          "waitall times out, withdraws its requests (inline, single copy), the ranks go on: %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg.no_cma = 1;
    tpshm_run(&cfg, 2, tpshm_waitall_timeout_rank, NULL, res);
    CHECK(res[0] == REDCOLL_OK && res[1] == REDCOLL_OK,
          "the same with the cells (a pushed send withdrawn): %s / %s",
          redcoll_result_string(res[0]), redcoll_result_string(res[1]));
    cfg = tpshm_cfg();
    cfg.timeout_seconds = 0.2;
    for (algo = 1; algo < REDCOLL_ALGO_COUNT; ++algo) {
        tpshm_absent a;
        int stay;
        if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)algo)) continue;
        memset(&a, 0, sizeof a);
        a.o.algo = (redcoll_algo)algo;
        for (stay = 0; stay < 2; ++stay) {
            int want = 0, ok = 1;
            a.stay = stay;
            tpshm_run(&cfg, 5, tpshm_absent_rank, &a, res);
            for (i = 0; i < 4; ++i) {
                want += res[i] == (stay ? REDCOLL_ERR_TIMEOUT : REDCOLL_ERR_MISMATCH);
                ok &= res[i] == REDCOLL_ERR_TIMEOUT || res[i] == REDCOLL_ERR_ABORTED ||
                      res[i] == REDCOLL_ERR_MISMATCH;
            }
            CHECK(ok && want >= 1, "allreduce/%s with a rank %s: %s %s %s %s",
                  redcoll_algo_name((redcoll_algo)algo), stay ? "away (timeouts)" : "gone (it left: mismatch)",
                  redcoll_result_string(res[0]), redcoll_result_string(res[1]),
                  redcoll_result_string(res[2]), redcoll_result_string(res[3]));
        }
    }
    tpshm_faults();
}

/* ---- kill -9, /dev/shm ------------------------------------------------------------------------- */

/* Child of the kill test: rank `rank` of a named segment, allreduce in a
   loop until an error; exits with -result. delay_ms > 0: waits that long
   before attaching (a rank killed while the others attach). */
static void tpshm_kill_child(const char *name, int p, int rank, long delay_ms, size_t n) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_pshm *h = NULL;
    redcoll_result r;
    double *buf = (double *)calloc(n, sizeof *buf);
    long it;
    cfg.attach_seconds = 2;
    cfg.liveness_seconds = 0.05;
    cfg.timeout_seconds = 0; /* only the liveness check ends a wait */
    if (delay_ms) tpshm_sleep_ms(delay_ms);
    r = redcoll_pshm_open(&h, name, p, rank, &cfg);
    for (it = 0; r == REDCOLL_OK && buf; ++it) {
        buf[0] = 1;
        r = redcoll_allreduce(redcoll_pshm_transport(h), REDCOLL_IN_PLACE, buf, n, REDCOLL_DOUBLE,
                              REDCOLL_SUM, NULL);
    }
    redcoll_pshm_destroy(h);
    free(buf);
    _exit(-(int)r);
}

/* Forks p ranks of a named job; kills rank `victim` after kill_ms; the
   others must exit with an error within `bound_s`; then nothing of the job
   may be in /dev/shm. attach_delay: the victim waits that long before
   attaching. Returns 1 on success, with what happened in why. */
static int tpshm_kill_case(int p, int victim, long kill_ms, long attach_delay, size_t n, double bound_s,
                           char *why, size_t whyn) {
    const char *name = tpshm_name("kill");
    char keep[96];
    pid_t pid[8];
    int status[8], i, left = p, ok = 1;
    long long end;
    snprintf(keep, sizeof keep, "%s", name);
    fflush(NULL);
    for (i = 0; i < p; ++i) {
        pid[i] = fork();
        if (pid[i] == 0) tpshm_kill_child(keep, p, i, i == victim ? attach_delay : 0, n);
        status[i] = -1;
    }
    tpshm_sleep_ms(kill_ms);
    tpshm_sys(SYS_kill, pid[victim], SIGKILL, 0, 0, 0);
    end = tpshm_now_ns() + (long long)(bound_s * 1e9);
    while (left > 0 && tpshm_now_ns() < end) {
        for (i = 0; i < p; ++i) {
            int st;
            if (status[i] != -1) continue;
            if (waitpid(pid[i], &st, WNOHANG) == pid[i]) { status[i] = st; --left; }
        }
        if (left) tpshm_sleep_ms(5);
    }
    snprintf(why, whyn, "p=%d victim %d at %ld ms%s:", p, victim, kill_ms,
             attach_delay ? " while attaching" : "");
    for (i = 0; i < p; ++i) {
        char one[64];
        if (status[i] == -1) { /* hung: kill it, and fail */
            tpshm_sys(SYS_kill, pid[i], SIGKILL, 0, 0, 0);
            waitpid(pid[i], &status[i], 0);
            snprintf(one, sizeof one, " rank %d HUNG", i);
            ok = 0;
        } else if (i == victim) {
            snprintf(one, sizeof one, " rank %d killed", i);
            ok &= WIFSIGNALED(status[i]) || WIFEXITED(status[i]);
        } else {
            int code = WIFEXITED(status[i]) ? WEXITSTATUS(status[i]) : -1;
            snprintf(one, sizeof one, " rank %d %s", i, code >= 0 ? redcoll_result_string((redcoll_result)-code)
                                                                 : "died");
            ok &= code > 0; /* an error, not a crash and not success */
        }
        strncat(why, one, whyn - strlen(why) - 1);
    }
    if (tpshm_leftovers(keep) != 0) { strncat(why, "; LEFT IN /dev/shm", whyn - strlen(why) - 1); ok = 0; }
    return ok;
}

static void test_pshm_kill(void) {
    static const long at[] = { 0, 3, 10, 30, 60, 120, 250 };
    char why[512];
    int i;
    for (i = 0; i < (int)(sizeof at / sizeof at[0]); ++i) { /* mid-collective, any moment */
        int p = 2 + i % 3, victim = (i * 5) % p;
        CHECK(tpshm_kill_case(p, victim, at[i], 0, i % 2 ? 3 : 70000, 20, why, sizeof why), "%s", why);
    }
    /* a rank that never attaches: the others give up after attach_seconds */
    CHECK(tpshm_kill_case(3, 2, 500, 10000, 100, 20, why, sizeof why), "%s", why);
    CHECK(tpshm_kill_case(3, 0, 500, 10000, 100, 20, why, sizeof why), "%s (the creator)", why);
}

/* Opens a named segment in a mount namespace whose /dev/shm is a 1 MiB
   tmpfs (root only): rank 0's create must fail with OUT_OF_MEMORY and a
   message naming the size, and leave nothing. Exit 0 on success, 77 when
   the namespace cannot be made. */
static void tpshm_small_shm_child(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_pshm *h = NULL;
    redcoll_result r;
    const char *msg;
    if (tpshm_sys(SYS_unshare, 0x00020000 /* CLONE_NEWNS */, 0, 0, 0, 0) != 0 ||
        tpshm_sys(SYS_mount, (long)"none", (long)"/", 0, 16384 | 262144 /* MS_REC | MS_PRIVATE */, 0) != 0 ||
        tpshm_sys(SYS_mount, (long)"tmpfs", (long)"/dev/shm", (long)"tmpfs", 0, (long)"size=1m") != 0)
        _exit(77);
    r = redcoll_pshm_open(&h, "small", 8, 0, &cfg);
    msg = redcoll_pshm_last_error();
    fprintf(stderr, "      (1 MiB /dev/shm: %s: %s)\n", redcoll_result_string(r), msg);
    _exit(r == REDCOLL_ERR_OUT_OF_MEMORY && !h && strstr(msg, "needs") && strstr(msg, "MiB in /dev/shm") &&
          tpshm_leftovers("small") == 0 ? 0 : 1);
}

static void test_pshm_small_shm(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_pshm *h = NULL;
    pid_t pid;
    int st = 0;
    fflush(NULL);
    pid = fork();
    if (pid == 0) tpshm_small_shm_child();
    waitpid(pid, &st, 0);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        printf("      (a 1 MiB /dev/shm needs root for unshare + mount: skipped; max_segment_bytes checked)\n");
    else
        CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a 1 MiB /dev/shm: a clear OUT_OF_MEMORY, nothing left");
    cfg.max_segment_bytes = (size_t)1 << 20;
    CHECK(redcoll_pshm_open(&h, tpshm_name("limit"), 8, 0, &cfg) == REDCOLL_ERR_OUT_OF_MEMORY && !h &&
          strstr(redcoll_pshm_last_error(), "needs") != NULL,
          "max_segment_bytes 1 MiB refuses a larger segment: %s", redcoll_pshm_last_error());
    CHECK(redcoll_pshm_create(&cfg, 8, &h) == REDCOLL_ERR_OUT_OF_MEMORY && !h, "the same for create");
    CHECK(tpshm_leftovers("") == 0, "nothing of this runner in /dev/shm");
}

/* Named segments: a name taken (O_EXCL), a segment of another size or mode,
   a rank taken; nothing left in /dev/shm after any of them or a normal run. */
static redcoll_result tpshm_named_rank(const redcoll_transport *t, void *arg) {
    const char *name = (const char *)arg;
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_pshm *h = NULL;
    redcoll_result r;
    int32_t x = t->rank + 1;
    cfg.attach_seconds = 5;
    /* a second job of the same size on the same transport's ranks, by name */
    r = redcoll_pshm_open(&h, name, t->size, t->rank, &cfg);
    if (r == REDCOLL_OK) {
        if (tpshm_leftovers(name) != 0) r = REDCOLL_ERR_INVALID_ARG; /* unlinked once all attached */
        else r = redcoll_allreduce(redcoll_pshm_transport(h), REDCOLL_IN_PLACE, &x, 1, REDCOLL_INT32,
                                   REDCOLL_SUM, NULL);
        if (r == REDCOLL_OK && x != t->size * (t->size + 1) / 2) r = REDCOLL_ERR_INVALID_ARG;
    }
    redcoll_pshm_destroy(h);
    return r;
}

static void test_pshm_names(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result res[4];
    redcoll_pshm *h = NULL;
    char name[96], path[160];
    int fd;
    snprintf(name, sizeof name, "%s", tpshm_name("named"));
    CHECK(tpshm_run(&cfg, 4, tpshm_named_rank, name, res) == REDCOLL_OK,
          "4 ranks by name: attached, unlinked, allreduce: %s %s %s %s", redcoll_result_string(res[0]),
          redcoll_result_string(res[1]), redcoll_result_string(res[2]), redcoll_result_string(res[3]));
    CHECK(tpshm_leftovers(name) == 0, "nothing left after a normal run");
    /* a name another job (or user) holds: never created over, never attached to */
    snprintf(name, sizeof name, "%s", tpshm_name("taken"));
    snprintf(path, sizeof path, "/redcoll-%u-%s", (unsigned)geteuid(), name);
    fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
    CHECK(fd >= 0, "made %s", path);
    if (fd >= 0) {
        cfg.attach_seconds = 0.5;
        CHECK(redcoll_pshm_open(&h, name, 2, 0, &cfg) == REDCOLL_ERR_TRANSPORT && !h,
              "rank 0: the name is taken (O_EXCL): %s", redcoll_pshm_last_error());
        CHECK(redcoll_pshm_open(&h, name, 2, 1, &cfg) == REDCOLL_ERR_INVALID_ARG && !h,
              "rank 1: a segment not mode 0600 is refused: %s", redcoll_pshm_last_error());
        CHECK(tpshm_leftovers(name) == 1, "and neither removed someone else's segment");
        close(fd);
        shm_unlink(path);
    }
    cfg.attach_seconds = 0.3;
    snprintf(name, sizeof name, "%s", tpshm_name("alone"));
    CHECK(redcoll_pshm_open(&h, name, 2, 1, &cfg) == REDCOLL_ERR_TIMEOUT && !h,
          "rank 1 alone: rank 0 never creates it: %s", redcoll_pshm_last_error());
    CHECK(redcoll_pshm_open(&h, name, 2, 0, &cfg) == REDCOLL_ERR_TIMEOUT && !h,
          "rank 0 alone: rank 1 never attaches: %s", redcoll_pshm_last_error());
    CHECK(tpshm_leftovers(name) == 0, "nothing left after the timeouts");
    CHECK(redcoll_pshm_open(&h, "bad/name", 2, 0, &cfg) == REDCOLL_ERR_INVALID_ARG &&
          redcoll_pshm_open(&h, "", 2, 0, &cfg) == REDCOLL_ERR_INVALID_ARG &&
          redcoll_pshm_open(&h, "x", 2, 2, &cfg) == REDCOLL_ERR_INVALID_ARG, "bad names and ranks");
}

/* ---- the arena, scratch, steady state ------------------------------------------------------------ */

/* The alloc helper on one rank of a created segment (attached in a child). */
static void tpshm_arena_child(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_pshm *h = NULL;
    char *a, *b, *c, *d;
    int bad = 0;
    cfg.arena_bytes = (size_t)1 << 20;
    if (redcoll_pshm_create(&cfg, 1, &h) != REDCOLL_OK || redcoll_pshm_attach(h, 0) != REDCOLL_OK) _exit(1);
    a = (char *)redcoll_pshm_alloc(h, 1000);
    b = (char *)redcoll_pshm_alloc(h, 300000);
    c = (char *)redcoll_pshm_alloc(h, 800000); /* no room left */
    bad |= !a || !b || c || ((uintptr_t)a & 63) || ((uintptr_t)b & 63) || b < a + 1000;
    if (a) memset(a, 1, 1000);
    if (b) memset(b, 2, 300000);
    redcoll_pshm_free(h, a);
    redcoll_pshm_free(h, b);
    d = (char *)redcoll_pshm_alloc(h, (size_t)1 << 20); /* all of it again, merged */
    bad |= d != a;
    redcoll_pshm_free(h, d);
    bad |= redcoll_pshm_alloc(h, ((size_t)1 << 20) + 1) != NULL;
    {   /* the scratch entry lives in the arena while it fits */
        const redcoll_transport *t = redcoll_pshm_transport(h);
        char *s1 = (char *)t->scratch(t->user, 5000), *s2 = (char *)t->scratch(t->user, 100);
        char *s3 = (char *)t->scratch(t->user, (size_t)4 << 20);
        bad |= !s1 || s1 != s2 || s1 != a || !s3 || s3 == s1;
    }
    redcoll_pshm_destroy(h);
    _exit(bad);
}

/* No allocation in steady state: after warm-up calls, 50 allreduce and
   reduce_scatter_block calls of each path allocate nothing. */
static redcoll_result tpshm_steady_rank(const redcoll_transport *t, void *arg) {
    static double a[200000], b[200000];
    static const size_t ns[] = { 1, 4, 3000, 200000 };
    long before = 0;
    int it, k;
    (void)arg;
    for (it = 0; it < 53; ++it) {
        if (it == 3) before = rc_fresh_allocs;
        for (k = 0; k < 4; ++k) {
            redcoll_result r = redcoll_allreduce(t, a, b, ns[k], REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
            if (r == REDCOLL_OK && ns[k] % (size_t)t->size == 0)
                r = redcoll_reduce_scatter_block(t, a, b, ns[k] / (size_t)t->size, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
            if (r) return r;
        }
    }
    return rc_fresh_allocs == before ? REDCOLL_OK : REDCOLL_ERR_OUT_OF_MEMORY;
}

static void test_pshm_arena(void) {
    redcoll_pshm_config cfg = tpshm_cfg();
    redcoll_result res[4];
    pid_t pid;
    int st = 0, v;
    fflush(NULL);
    pid = fork();
    if (pid == 0) tpshm_arena_child();
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "alloc: 64-byte aligned blocks from the arena, refused past it, merged when freed; scratch in it");
    for (v = 0; v < 3; ++v) {
        cfg.no_cma = v == 0;
        cfg.arena_bytes = v == 2 ? (size_t)8 << 20 : 0;
        CHECK(tpshm_run(&cfg, v + 2, tpshm_steady_rank, NULL, res) == REDCOLL_OK,
              "p=%d %s: steady-state calls allocate nothing: %s", v + 2,
              v == 0 ? "cells" : v == 1 ? "single copy" : "scratch in the arena", redcoll_result_string(res[0]));
    }
}

static void test_pshm_repeat(void) {
    static const int ps[] = { 2, 3, 5, 8 };
    int i;
    for (i = 0; i < 4; ++i) {
        redcoll_pshm_config cfg = tpshm_cfg();
        cfg.spin = i % 2 ? 300 : -1;
        CHECK(redcoll_pshm_run(&cfg, ps[i], tshm_repeat_rank, NULL, NULL) == REDCOLL_OK,
              "p=%d: 300 allreduce+barrier rounds", ps[i]);
    }
}

/* ---- ranks that disagree (test_disagree.c's cases), the default configuration ---- */

/* A case and the account of the ranks' mistake, in memory the forked ranks share. */
typedef struct tpshm_disagree { td_case x; char report[4096]; } tpshm_disagree;

static void tpshm_keep_report(void *arg, const char *text) {
    tpshm_disagree *d = (tpshm_disagree *)arg;
    if (!d->report[0]) snprintf(d->report, sizeof d->report, "%s", text);
}

/* Runs d's case on p forked ranks (no timeout: the deadlock detector is
   on) under a supervisor process leading a process group of its own; 0 when
   it has not ended within `seconds` (the group is then killed). */
static int tpshm_run_bounded(tpshm_disagree *d, int p, double seconds, redcoll_pshm_rank_fn fn) {
    long long end = tpshm_now_ns() + (long long)(seconds * 1e9);
    int st = 0;
    pid_t sup;
    fflush(NULL);
    sup = fork();
    if (sup < 0) return 0;
    if (sup == 0) {
        redcoll_pshm_config cfg;
        setpgid(0, 0);
        memset(&cfg, 0, sizeof cfg);
        cfg.attach_seconds = 30;
        cfg.report = tpshm_keep_report;
        cfg.report_arg = d;
        redcoll_pshm_run(&cfg, p, fn, d, NULL);
        _exit(0);
    }
    setpgid(sup, sup); /* as the child does: whichever runs first */
    while (waitpid(sup, &st, WNOHANG) == 0) {
        if (tpshm_now_ns() > end) {
            tpshm_sys(SYS_kill, -sup, SIGKILL, 0, 0, 0);
            waitpid(sup, &st, 0);
            return 0;
        }
        tpshm_sleep_ms(1);
    }
    return 1;
}

static redcoll_result tpshm_td_rank(const redcoll_transport *t, void *arg) {
    return td_rank(t, &((tpshm_disagree *)arg)->x);
}

/* Transport-level mistakes: each rank waits to receive from the next
   (kind 0: a cycle, DEADLOCK), or rank 0 returns at once while the others
   wait for it (kind 1: MISMATCH, it has left). */
static redcoll_result tpshm_stuck_rank(const redcoll_transport *t, void *arg) {
    tpshm_disagree *d = (tpshm_disagree *)arg;
    int32_t v = 0;
    if (d->x.kind == 1 && t->rank == 0) d->x.res[0] = REDCOLL_OK;
    else d->x.res[t->rank] = t->recv(t->user, d->x.kind == 1 ? 0 : (t->rank + 1) % t->size, &v, sizeof v, 5);
    return REDCOLL_OK;
}

static void tpshm_stuck(tpshm_disagree *d, int p, int kind) {
    int r;
    memset(d, 0, sizeof *d);
    d->x.kind = (td_kind)kind;
    for (r = 0; r < p; ++r) d->x.res[r] = REDCOLL_ERR_ABORTED;
    if (!tpshm_run_bounded(d, p, 10, tpshm_stuck_rank)) {
        CHECK(0, "p=%d %s: no end after 10 s (a hang)", p, kind ? "a rank left" : "a cycle");
        return;
    }
    for (r = kind; r < p; ++r)
        CHECK(d->x.res[r] == (kind ? REDCOLL_ERR_MISMATCH : REDCOLL_ERR_DEADLOCK), "p=%d %s: rank %d: %s", p,
              kind ? "a rank left" : "a cycle", r, redcoll_result_string(d->x.res[r]));
    CHECK(kind ? strstr(d->report, "ranks disagree about the call: rank 0 has finished while rank ") != NULL
               : strstr(d->report, "deadlock: every rank is blocked or finished") &&
                 strstr(d->report, "rank 0 waits to receive 4 bytes from rank 1"),
          "p=%d: the account:\n%s", p, d->report);
}

static void test_pshm_disagree(void) {
    long fd = tpshm_sys(SYS_memfd_create, (long)"tpshm-disagree", 0, 0, 0, 0);
    tpshm_disagree *d = (tpshm_disagree *)MAP_FAILED;
    int p, c, k, runs = 0, mismatch = 0, deadlock = 0;
    if (fd >= 0 && tpshm_sys(SYS_ftruncate, fd, (long)sizeof *d, 0, 0, 0) == 0)
        d = (tpshm_disagree *)mmap(NULL, sizeof *d, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
    if (fd >= 0) close((int)fd);
    CHECK(d != MAP_FAILED, "shared memory for the cases");
    if (d == MAP_FAILED) return;
    for (p = 3; p >= 2; --p) {
        tpshm_stuck(d, p, 0);
        tpshm_stuck(d, p, 1);
    }
    for (p = 2; p <= 3; ++p)
        for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
            for (k = 0; k < TD_KINDS; ++k) {
                int r;
                memset(d, 0, sizeof *d);
                d->x.coll = (redcoll_coll)c; d->x.kind = (td_kind)k;
                if (!td_applies(d->x.coll, d->x.kind, d->x.algo)) continue;
                for (r = 0; r < p; ++r) d->x.res[r] = REDCOLL_ERR_ABORTED; /* a rank that never stored */
                if (!tpshm_run_bounded(d, p, 10, tpshm_td_rank)) {
                    CHECK(0, "processes p=%d %s, odd rank's %s: no end after 10 s (a hang)", p,
                          redcoll_coll_name(d->x.coll), td_kind_names[d->x.kind]);
                    continue;
                }
                td_check("processes", &d->x, p, d->report[0] ? d->report : NULL);
                for (r = 0; r < p; ++r) {
                    mismatch += d->x.res[r] == REDCOLL_ERR_MISMATCH;
                    deadlock += d->x.res[r] == REDCOLL_ERR_DEADLOCK;
                }
                if (d->x.coll == REDCOLL_COLL_ALLREDUCE && (d->x.kind == TD_COUNT || d->x.kind == TD_OTHER))
                    CHECK(strstr(d->report, "ranks disagree about the call: rank ") != NULL,
                          "p=%d allreduce, %s: the account names the ranks and the calls:\n%s", p,
                          td_kind_names[d->x.kind], d->report);
                if (d->x.coll == REDCOLL_COLL_REDUCE && d->x.kind == TD_ROOT)
                    CHECK(strstr(d->report, "ranks disagree about the call: rank ") ||
                          (strstr(d->report, "rank 0 waits to receive") && strstr(d->report, "rank 1 waits to receive")),
                          "p=%d reduce, two roots: the account names the ranks:\n%s", p, d->report);
                runs++;
            }
    CHECK(runs > 100, "%d cases", runs);
    CHECK(mismatch > 0, "no rank said MISMATCH");
    if (tf_verbose) printf("    %d cases: %d rank results MISMATCH, %d DEADLOCK\n", runs, mismatch, deadlock);
    munmap(d, sizeof *d);
}

static void suite_pshm(void) {
    if (TSHM_SANITIZED) return; /* one thread per process: nothing for the thread sanitizer */
    tf_test("pshm/transport semantics", test_pshm_transport);
    tf_test("pshm/every data path byte for byte", test_pshm_paths);
    tf_test("pshm/overflow queue and stress", test_pshm_overflow);
    tf_test("pshm/the host's progress while a rank waits", test_pshm_host_progress);
    tf_test("pshm/abort and timeout", test_pshm_abort_timeout);
    tf_test("pshm/kill -9 of a rank, nothing left in /dev/shm", test_pshm_kill);
    tf_test("pshm/a /dev/shm too small", test_pshm_small_shm);
    tf_test("pshm/named segments", test_pshm_names);
    tf_test("pshm/arena, scratch, steady state", test_pshm_arena);
    tf_test("pshm/repeated calls", test_pshm_repeat);
    tf_test("pshm/every schedule on processes", test_pshm_sweep);
    tf_test("pshm/non-blocking: every schedule started (poll, wait, plan), p = 1..5, 8", test_pshm_nb_sweep);
    tf_test("pshm/non-blocking: 10 outstanding, reverse order; blocking between", test_pshm_nb_many);
    tf_test("pshm/non-blocking: 24 outstanding and 24 plans, per-rank orders", test_pshm_nb_queued);
    tf_test("pshm/ranks that disagree: every collective and kind, p=2,3", test_pshm_disagree);
}
