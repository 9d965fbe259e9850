/* redcoll_mock.h - the redcoll simulator transport - MIT licence (see redcoll.h)

   Runs all p ranks of a collective inside one process, one thread per rank,
   and reports what the collective cost each rank:

       redcoll_mock_config cfg = redcoll_mock_defaults(13);
       redcoll_mock_report rep;
       redcoll_mock_run(&cfg, my_rank_fn, &my_arg, &rep);   (my_rank_fn calls
       ...rep.results[r], rep.stats[r], rep.time, rep.log... redcoll_* on its t)
       redcoll_mock_report_free(&rep);

   Semantics
   - Sends are rendezvous: a send completes only when its receive is posted,
     so a schedule that relies on buffering deadlocks here.
   - Matching is FIFO per (source, destination, tag); sizes must match
     exactly (a mismatch fails both ends with REDCOLL_ERR_TRANSPORT).
   - Deadlock (every live rank blocked) fails each blocked call with
     REDCOLL_ERR_DEADLOCK and writes who waits for whom into report.log.
   - abort (called by the library when a call fails) releases every blocked
     and later call with REDCOLL_ERR_ABORTED.
   - Fault injection: call number fail_call (1-based, counting send, recv,
     sendrecv, isend, irecv) of rank fail_rank returns REDCOLL_ERR_TRANSPORT.
   - no_data: no payload is copied and the library skips its copies and
     reductions, so p = 4096 with megabyte vectors costs no memory.
   Results are deterministic: they depend only on each rank's sequence of
   calls, never on how the threads interleave.

   Cost model (Rabenseifner 2004 section 3.1, single-ported): a message starts
   when both ends have posted it and ends after alpha + n beta when both ends
   are sendrecv (bi-directional), after f_alpha alpha + n f_beta beta
   otherwise (one-way). A call ends when all its messages have; a sendrecv
   therefore lasts alpha + n beta for the larger of its two directions. A
   local reduction of n bytes adds n gamma. Rounds count the longest chain of
   dependent messages ending at the rank (a sendrecv is one round).
   Non-blocking transfers of one waitall are serialised on the rank's port:
   the wait ends no earlier than post time plus the summed durations of its
   sends, or of its receives. */
#ifndef REDCOLL_MOCK_H
#define REDCOLL_MOCK_H

#include "redcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct redcoll_mock_config {
    int                size;        /* p >= 1 */
    redcoll_cost_model model;       /* used as given: zero alpha is a zero alpha */
    int                no_data;
    int                fail_rank;   /* with fail_call > 0 */
    long               fail_call;   /* 0: no fault */
    int                node_size;   /* > 0: node_of(rank) = rank / node_size */
    size_t             stack_bytes; /* per rank thread; 0 = 512 KiB (threads are pooled
                                       across runs and reused when large enough) */
} redcoll_mock_config;

typedef struct redcoll_mock_stats {
    unsigned long long msgs_sent, msgs_recv, bytes_sent, bytes_recv;
    unsigned long long elems_reduced;
    unsigned long long scratch_bytes; /* peak scratch the library held */
    long               rounds;
    long               calls;         /* transport calls made */
    double             time;          /* modeled completion time */
} redcoll_mock_stats;

typedef struct redcoll_mock_report {
    int                 size;
    redcoll_result     *results;    /* what each rank's function returned */
    redcoll_mock_stats *stats;
    double              time;       /* max over ranks */
    long                rounds;     /* max over ranks */
    int                 deadlocked, aborted;
    char               *log;        /* readable account of deadlocks, faults, mismatches */
} redcoll_mock_report;

/* Runs on each simulated rank's own thread. */
typedef redcoll_result (*redcoll_mock_rank_fn)(const redcoll_transport *t, void *arg);

/* The default configuration for p ranks: alpha, beta, gamma of redcoll.h's
   defaults and f_alpha = f_beta = 1. */
REDCOLL_API redcoll_mock_config redcoll_mock_defaults(int size);

/* Runs fn on every rank and fills *report (free it with
   redcoll_mock_report_free). Returns REDCOLL_OK when the run itself worked,
   whatever the ranks returned; an error for a bad config or no threads. */
REDCOLL_API redcoll_result redcoll_mock_run(const redcoll_mock_config *cfg,
                                            redcoll_mock_rank_fn fn, void *arg,
                                            redcoll_mock_report *report);
REDCOLL_API void redcoll_mock_report_free(redcoll_mock_report *report);

/* The first non-OK rank result, or REDCOLL_OK. */
REDCOLL_API redcoll_result redcoll_mock_first_error(const redcoll_mock_report *report);

#ifdef __cplusplus
}
#endif
#endif /* REDCOLL_MOCK_H */

#ifdef REDCOLL_IMPLEMENTATION
#ifndef REDCOLL_MOCK_IMPLEMENTATION_DONE
#define REDCOLL_MOCK_IMPLEMENTATION_DONE

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct redcoll__msim;
struct redcoll__mrank;

/* One end of a message: a posted send or receive. */
typedef struct redcoll__mend {
    struct redcoll__mrank *owner;
    int                    is_send, peer, tag;
    const void            *sbuf;
    void                  *rbuf;
    size_t                 bytes;
    int                    duplex;    /* half of a sendrecv */
    int                    in_wait;   /* the owner is waiting for it */
    double                 post_time, end_time, duration;
    long                   post_round, end_round;
    int                    done;
    redcoll_result         res;
    struct redcoll__mend  *next;      /* owner's list of unmatched ends */
} redcoll__mend;

typedef struct redcoll__mrank {
    struct redcoll__msim *sim;
    int                   rank;
    redcoll_transport     t;
    pthread_t             thread;
    pthread_cond_t        cv;
    double                clock;
    long                  round;
    long long             scratch_now;
    redcoll_mock_stats    st;
    redcoll__mend        *pending;    /* unmatched ends, in post order */
    int                   waiting, incomplete;
    redcoll_result        result;
} redcoll__mrank;

typedef struct redcoll__msim {
    pthread_mutex_t       mu;
    pthread_cond_t        start_cv, done_cv;
    int                   started, finished;
    redcoll_mock_config   cfg;
    redcoll__mrank       *ranks;
    int                   live, blocked;
    int                   deadlocked, aborted;
    char                 *log;
    size_t                log_len, log_cap;
    redcoll_mock_rank_fn  fn;
    void                 *arg;
} redcoll__msim;

static void redcoll__mlog(redcoll__msim *s, const char *fmt, ...) {
    va_list ap;
    int n;
    if (s->log_len > (1u << 20)) return; /* enough to read */
    for (;;) {
        size_t room = s->log_cap - s->log_len;
        va_start(ap, fmt);
        n = vsnprintf(s->log ? s->log + s->log_len : NULL, s->log ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (s->log && (size_t)n < room) { s->log_len += (size_t)n; return; }
        {
            size_t cap = (s->log_cap + (size_t)n + 256) * 2;
            char *grown = (char *)realloc(s->log, cap);
            if (!grown) return;
            s->log = grown; s->log_cap = cap;
        }
    }
}

static void redcoll__mend_finish(redcoll__msim *s, redcoll__mend *e, redcoll_result res) {
    redcoll__mrank *o = e->owner;
    e->done = 1;
    e->res = res;
    if (e->in_wait && o->waiting && --o->incomplete == 0) {
        o->waiting = 0;
        s->blocked--;
        pthread_cond_signal(&o->cv);
    }
}

static void redcoll__munlink(redcoll__mrank *r, redcoll__mend *e) {
    redcoll__mend **pp = &r->pending;
    while (*pp && *pp != e) pp = &(*pp)->next;
    if (*pp) *pp = e->next;
    e->next = NULL;
}

/* Fails every unmatched end of every rank (deadlock or abort). */
static void redcoll__mfail_all(redcoll__msim *s, redcoll_result res) {
    int i;
    for (i = 0; i < s->cfg.size; ++i) {
        redcoll__mrank *r = &s->ranks[i];
        while (r->pending) {
            redcoll__mend *e = r->pending;
            r->pending = e->next;
            e->next = NULL;
            redcoll__mend_finish(s, e, res);
        }
    }
}

static void redcoll__mdeadlock(redcoll__msim *s) {
    int i;
    s->deadlocked = 1;
    redcoll__mlog(s, "deadlock: every live rank is blocked\n");
    for (i = 0; i < s->cfg.size; ++i) {
        redcoll__mend *e;
        for (e = s->ranks[i].pending; e; e = e->next)
            redcoll__mlog(s, "  rank %d waits to %s %zu bytes %s rank %d (tag %d)\n", i,
                          e->is_send ? "send" : "receive", e->bytes,
                          e->is_send ? "to" : "from", e->peer, e->tag);
    }
    redcoll__mfail_all(s, REDCOLL_ERR_DEADLOCK);
}

/* A matched pair: move the bytes and time the message. */
static void redcoll__mmatch(redcoll__msim *s, redcoll__mend *snd, redcoll__mend *rcv) {
    const redcoll_cost_model *m = &s->cfg.model;
    redcoll_result res = REDCOLL_OK;
    double n = (double)snd->bytes, start, dur;
    long round;
    if (snd->bytes != rcv->bytes) {
        redcoll__mlog(s, "size mismatch: rank %d sends %zu bytes to rank %d, which expects %zu (tag %d)\n",
                      snd->owner->rank, snd->bytes, rcv->owner->rank, rcv->bytes, snd->tag);
        res = REDCOLL_ERR_TRANSPORT;
    } else if (!s->cfg.no_data && snd->bytes) {
        memcpy(rcv->rbuf, snd->sbuf, snd->bytes);
    }
    start = snd->post_time > rcv->post_time ? snd->post_time : rcv->post_time;
    dur = (snd->duplex && rcv->duplex) ? m->alpha + n * m->beta
                                       : m->f_alpha * m->alpha + n * m->f_beta * m->beta;
    round = (snd->post_round > rcv->post_round ? snd->post_round : rcv->post_round) + 1;
    snd->end_time = rcv->end_time = start + dur;
    snd->duration = rcv->duration = dur;
    snd->end_round = rcv->end_round = round;
    snd->owner->st.msgs_sent++;
    snd->owner->st.bytes_sent += snd->bytes;
    rcv->owner->st.msgs_recv++;
    rcv->owner->st.bytes_recv += snd->bytes;
    redcoll__mend_finish(s, snd, res);
    redcoll__mend_finish(s, rcv, res);
}

/* Posts an end: matches it with the peer's oldest fitting end or queues it. */
static void redcoll__mpost(redcoll__msim *s, redcoll__mrank *r, redcoll__mend *e) {
    redcoll__mend *f;
    e->owner = r;
    e->post_time = r->clock;
    e->post_round = r->round;
    e->done = 0;
    e->next = NULL;
    if (s->aborted) { redcoll__mend_finish(s, e, REDCOLL_ERR_ABORTED); return; }
    for (f = s->ranks[e->peer].pending; f; f = f->next)
        if (f->is_send != e->is_send && f->peer == r->rank && f->tag == e->tag) break;
    if (f) {
        redcoll__munlink(&s->ranks[e->peer], f);
        if (e->is_send) redcoll__mmatch(s, e, f); else redcoll__mmatch(s, f, e);
    } else {
        redcoll__mend **pp = &r->pending;
        while (*pp) pp = &(*pp)->next;
        *pp = e;
    }
}

/* Blocks until every end in ends[] is done; returns the first failure. The
   clock moves to the last end, and no earlier than post time plus the
   summed durations of the sends, or of the receives (one port each way). */
static redcoll_result redcoll__mwait(redcoll__msim *s, redcoll__mrank *r, redcoll__mend **ends,
                                     int n) {
    redcoll_result res = REDCOLL_OK;
    double start = r->clock, sends = 0, recvs = 0, end = r->clock;
    int i;
    r->incomplete = 0;
    for (i = 0; i < n; ++i) {
        ends[i]->in_wait = 1;
        if (!ends[i]->done) r->incomplete++;
        if (ends[i]->post_time < start) start = ends[i]->post_time;
    }
    if (r->incomplete) {
        r->waiting = 1;
        s->blocked++;
        while (r->waiting) {
            if (s->blocked == s->live) redcoll__mdeadlock(s);
            else pthread_cond_wait(&r->cv, &s->mu);
        }
    }
    for (i = 0; i < n; ++i) {
        redcoll__mend *e = ends[i];
        if (e->res != REDCOLL_OK) { if (res == REDCOLL_OK) res = e->res; continue; }
        if (e->end_time > end) end = e->end_time;
        if (e->end_round > r->round) r->round = e->end_round;
        if (e->is_send) sends += e->duration; else recvs += e->duration;
    }
    if (start + sends > end) end = start + sends;
    if (start + recvs > end) end = start + recvs;
    r->clock = end;
    return res;
}

/* Counts a call; 1 if it is the injected fault. */
static int redcoll__mcall(redcoll__msim *s, redcoll__mrank *r, const char *what, int peer) {
    r->st.calls++;
    if (s->cfg.fail_call > 0 && r->rank == s->cfg.fail_rank && r->st.calls == s->cfg.fail_call) {
        redcoll__mlog(s, "injected fault: rank %d, call %ld (%s, peer %d)\n", r->rank,
                      r->st.calls, what, peer);
        return 1;
    }
    return 0;
}

static int redcoll__mpeer_ok(redcoll__msim *s, redcoll__mrank *r, int peer) {
    if (peer >= 0 && peer < s->cfg.size) return 1;
    redcoll__mlog(s, "rank %d addressed rank %d, outside 0..%d\n", r->rank, peer, s->cfg.size - 1);
    return 0;
}

static void redcoll__mend_init(redcoll__mend *e, int is_send, int peer, const void *sbuf,
                               void *rbuf, size_t bytes, int tag, int duplex) {
    memset(e, 0, sizeof *e);
    e->is_send = is_send; e->peer = peer; e->sbuf = sbuf; e->rbuf = rbuf;
    e->bytes = bytes; e->tag = tag; e->duplex = duplex;
}

/* The blocking calls: post one or two ends, then wait for them. */
static redcoll_result redcoll__mblocking(redcoll__mrank *r, const char *what, int dst,
                                         const void *sbuf, size_t sbytes, int src, void *rbuf,
                                         size_t rbytes, int tag) {
    redcoll__msim *s = r->sim;
    redcoll__mend ends[2], *list[2];
    int n = 0, duplex = dst >= 0 && src >= 0;
    redcoll_result res;
    pthread_mutex_lock(&s->mu);
    if (redcoll__mcall(s, r, what, dst >= 0 ? dst : src)) { pthread_mutex_unlock(&s->mu); return REDCOLL_ERR_TRANSPORT; }
    if ((dst >= 0 && !redcoll__mpeer_ok(s, r, dst)) || (src >= 0 && !redcoll__mpeer_ok(s, r, src))) {
        pthread_mutex_unlock(&s->mu);
        return REDCOLL_ERR_TRANSPORT;
    }
    if (dst >= 0) { redcoll__mend_init(&ends[n], 1, dst, sbuf, NULL, sbytes, tag, duplex); list[n] = &ends[n]; ++n; }
    if (src >= 0) { redcoll__mend_init(&ends[n], 0, src, NULL, rbuf, rbytes, tag, duplex); list[n] = &ends[n]; ++n; }
    for (int i = 0; i < n; ++i) redcoll__mpost(s, r, list[i]);
    res = redcoll__mwait(s, r, list, n);
    pthread_mutex_unlock(&s->mu);
    return res;
}

static redcoll_result redcoll__msend(void *user, int dst, const void *buf, size_t bytes, int tag) {
    return redcoll__mblocking((redcoll__mrank *)user, "send", dst, buf, bytes, -1, NULL, 0, tag);
}

static redcoll_result redcoll__mrecv(void *user, int src, void *buf, size_t bytes, int tag) {
    return redcoll__mblocking((redcoll__mrank *)user, "recv", -1, NULL, 0, src, buf, bytes, tag);
}

static redcoll_result redcoll__msendrecv(void *user, int dst, const void *sbuf, size_t sbytes,
                                         int src, void *rbuf, size_t rbytes, int tag) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__mblocking((redcoll__mrank *)user, "sendrecv", dst, sbuf, sbytes, src, rbuf,
                              rbytes, tag);
}

static redcoll_result redcoll__mipost(redcoll__mrank *r, int is_send, int peer, const void *sbuf,
                                      void *rbuf, size_t bytes, int tag, redcoll_request *req) {
    redcoll__msim *s = r->sim;
    redcoll__mend *e;
    pthread_mutex_lock(&s->mu);
    if (redcoll__mcall(s, r, is_send ? "isend" : "irecv", peer) || !redcoll__mpeer_ok(s, r, peer)) {
        pthread_mutex_unlock(&s->mu);
        return REDCOLL_ERR_TRANSPORT;
    }
    e = (redcoll__mend *)malloc(sizeof *e);
    if (!e) { pthread_mutex_unlock(&s->mu); return REDCOLL_ERR_OUT_OF_MEMORY; }
    redcoll__mend_init(e, is_send, peer, sbuf, rbuf, bytes, tag, 0);
    redcoll__mpost(s, r, e);
    req->ptr = e;
    pthread_mutex_unlock(&s->mu);
    return REDCOLL_OK;
}

static redcoll_result redcoll__misend(void *user, int dst, const void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    return redcoll__mipost((redcoll__mrank *)user, 1, dst, buf, NULL, bytes, tag, req);
}

static redcoll_result redcoll__mirecv(void *user, int src, void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    return redcoll__mipost((redcoll__mrank *)user, 0, src, NULL, buf, bytes, tag, req);
}

static redcoll_result redcoll__mwaitall(void *user, int count, redcoll_request *reqs) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    redcoll__msim *s = r->sim;
    redcoll__mend **list = (redcoll__mend **)malloc(sizeof *list * (size_t)(count > 0 ? count : 1));
    redcoll_result res;
    int i, n = 0;
    if (!list) return REDCOLL_ERR_OUT_OF_MEMORY;
    for (i = 0; i < count; ++i) if (reqs[i].ptr) list[n++] = (redcoll__mend *)reqs[i].ptr;
    pthread_mutex_lock(&s->mu);
    res = redcoll__mwait(s, r, list, n);
    pthread_mutex_unlock(&s->mu);
    for (i = 0; i < n; ++i) free(list[i]);
    for (i = 0; i < count; ++i) reqs[i].ptr = NULL;
    free(list);
    return res;
}

static void redcoll__mabort(void *user, redcoll_result why) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    redcoll__msim *s = r->sim;
    pthread_mutex_lock(&s->mu);
    if (!s->aborted) {
        s->aborted = 1;
        redcoll__mlog(s, "abort: rank %d failed (%s); releasing every blocked rank\n", r->rank,
                      redcoll_result_string(why));
        redcoll__mfail_all(s, REDCOLL_ERR_ABORTED);
    }
    pthread_mutex_unlock(&s->mu);
}

static int redcoll__mnode_of(void *user, int rank) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    return rank / r->sim->cfg.node_size;
}

static void redcoll__mon_compute(void *user, size_t elems, size_t bytes) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    pthread_mutex_lock(&r->sim->mu);
    r->st.elems_reduced += elems;
    r->clock += (double)bytes * r->sim->cfg.model.gamma;
    pthread_mutex_unlock(&r->sim->mu);
}

static void redcoll__mon_scratch(void *user, long long delta) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    r->scratch_now += delta; /* only this rank's thread touches it */
    if (r->scratch_now > (long long)r->st.scratch_bytes)
        r->st.scratch_bytes = (unsigned long long)r->scratch_now;
}

/* One simulated rank, run by a pool worker. */
static void redcoll__mrank_main(redcoll__mrank *r) {
    redcoll__msim *s = r->sim;
    redcoll_result res = REDCOLL_ERR_ABORTED;
    int go;
    pthread_mutex_lock(&s->mu);
    while (!s->started) pthread_cond_wait(&s->start_cv, &s->mu);
    go = !s->aborted;
    pthread_mutex_unlock(&s->mu);
    if (go) res = s->fn(&r->t, s->arg);
    pthread_mutex_lock(&s->mu);
    r->result = res;
    s->live--;
    s->finished++;
    if (s->live > 0 && s->blocked == s->live) redcoll__mdeadlock(s);
    pthread_cond_signal(&s->done_cv);
    pthread_mutex_unlock(&s->mu); /* the last touch of the run: it may end now */
}

/* Worker threads persist across runs: starting p threads per run costs far
   more than most simulated collectives. A run takes p idle workers whose
   stacks are large enough, creating more when there are too few. */
typedef struct redcoll__mworker {
    pthread_cond_t           cv;
    redcoll__mrank          *job;
    size_t                   stack;
    struct redcoll__mworker *next_idle;
} redcoll__mworker;

static pthread_mutex_t redcoll__mpool_mu = PTHREAD_MUTEX_INITIALIZER;
static redcoll__mworker *redcoll__mpool_idle;

static void *redcoll__mworker_main(void *arg) {
    redcoll__mworker *w = (redcoll__mworker *)arg;
    pthread_mutex_lock(&redcoll__mpool_mu);
    for (;;) {
        redcoll__mrank *job;
        while (!w->job) pthread_cond_wait(&w->cv, &redcoll__mpool_mu);
        job = w->job;
        pthread_mutex_unlock(&redcoll__mpool_mu);
        redcoll__mrank_main(job);
        pthread_mutex_lock(&redcoll__mpool_mu);
        w->job = NULL;
        w->next_idle = redcoll__mpool_idle;
        redcoll__mpool_idle = w;
    }
    return NULL;
}

/* Hands rank r to a pooled worker; 0 if no thread could be had. */
static int redcoll__mpool_start(redcoll__mrank *r, size_t stack) {
    redcoll__mworker **pp, *w = NULL;
    pthread_mutex_lock(&redcoll__mpool_mu);
    for (pp = &redcoll__mpool_idle; *pp; pp = &(*pp)->next_idle)
        if ((*pp)->stack >= stack) { w = *pp; *pp = w->next_idle; break; }
    if (!w) {
        pthread_attr_t attr;
        pthread_t thread;
        int ok;
        w = (redcoll__mworker *)calloc(1, sizeof *w);
        if (!w) { pthread_mutex_unlock(&redcoll__mpool_mu); return 0; }
        pthread_cond_init(&w->cv, NULL);
        w->stack = stack;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, stack);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        ok = pthread_create(&thread, &attr, redcoll__mworker_main, w) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) {
            pthread_cond_destroy(&w->cv);
            free(w);
            pthread_mutex_unlock(&redcoll__mpool_mu);
            return 0;
        }
    }
    w->job = r;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&redcoll__mpool_mu);
    return 1;
}

REDCOLL_API redcoll_mock_config redcoll_mock_defaults(int size) {
    redcoll_mock_config c;
    memset(&c, 0, sizeof c);
    c.size = size;
    c.model = redcoll_options_resolved(NULL).model;
    return c;
}

REDCOLL_API redcoll_result redcoll_mock_run(const redcoll_mock_config *cfg,
                                            redcoll_mock_rank_fn fn, void *arg,
                                            redcoll_mock_report *report) {
    redcoll__msim s;
    int i, created = 0;
    if (report) memset(report, 0, sizeof *report);
    if (!cfg || !fn || !report || cfg->size < 1) return REDCOLL_ERR_INVALID_ARG;
    memset(&s, 0, sizeof s);
    s.cfg = *cfg;
    s.fn = fn; s.arg = arg;
    s.ranks = (redcoll__mrank *)calloc((size_t)cfg->size, sizeof *s.ranks);
    report->results = (redcoll_result *)calloc((size_t)cfg->size, sizeof *report->results);
    report->stats = (redcoll_mock_stats *)calloc((size_t)cfg->size, sizeof *report->stats);
    if (!s.ranks || !report->results || !report->stats) {
        free(s.ranks);
        redcoll_mock_report_free(report);
        return REDCOLL_ERR_OUT_OF_MEMORY;
    }
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.start_cv, NULL);
    pthread_cond_init(&s.done_cv, NULL);
    s.live = cfg->size;
    for (i = 0; i < cfg->size; ++i) {
        redcoll__mrank *r = &s.ranks[i];
        r->sim = &s;
        r->rank = i;
        pthread_cond_init(&r->cv, NULL);
        r->t.user = r;
        r->t.rank = i;
        r->t.size = cfg->size;
        r->t.send = redcoll__msend;
        r->t.recv = redcoll__mrecv;
        r->t.sendrecv = redcoll__msendrecv;
        r->t.abort = redcoll__mabort;
        r->t.isend = redcoll__misend;
        r->t.irecv = redcoll__mirecv;
        r->t.waitall = redcoll__mwaitall;
        r->t.node_of = cfg->node_size > 0 ? redcoll__mnode_of : NULL;
        r->t.on_compute = redcoll__mon_compute;
        r->t.on_scratch = redcoll__mon_scratch;
        r->t.flags = cfg->no_data ? REDCOLL_TRANSPORT_NO_DATA : 0u;
    }
    for (i = 0; i < cfg->size; ++i, ++created)
        if (!redcoll__mpool_start(&s.ranks[i], cfg->stack_bytes ? cfg->stack_bytes : (size_t)512 << 10))
            break;
    pthread_mutex_lock(&s.mu);
    if (created < cfg->size) {
        s.aborted = 1;
        s.live = created;
        redcoll__mlog(&s, "could not start thread %d of %d\n", created, cfg->size);
    }
    s.started = 1;
    pthread_cond_broadcast(&s.start_cv);
    while (s.finished < created) pthread_cond_wait(&s.done_cv, &s.mu);
    pthread_mutex_unlock(&s.mu);

    report->size = cfg->size;
    for (i = 0; i < cfg->size; ++i) {
        redcoll__mrank *r = &s.ranks[i];
        report->results[i] = i < created ? r->result : REDCOLL_ERR_ABORTED;
        report->stats[i] = r->st;
        report->stats[i].rounds = r->round;
        report->stats[i].time = r->clock;
        if (r->clock > report->time) report->time = r->clock;
        if (r->round > report->rounds) report->rounds = r->round;
        pthread_cond_destroy(&r->cv);
    }
    report->deadlocked = s.deadlocked;
    report->aborted = s.aborted;
    report->log = s.log;
    pthread_cond_destroy(&s.start_cv);
    pthread_cond_destroy(&s.done_cv);
    pthread_mutex_destroy(&s.mu);
    free(s.ranks);
    return created == cfg->size ? REDCOLL_OK : REDCOLL_ERR_OUT_OF_MEMORY;
}

REDCOLL_API void redcoll_mock_report_free(redcoll_mock_report *report) {
    if (!report) return;
    free(report->results);
    free(report->stats);
    free(report->log);
    memset(report, 0, sizeof *report);
}

REDCOLL_API redcoll_result redcoll_mock_first_error(const redcoll_mock_report *report) {
    int i;
    for (i = 0; i < report->size; ++i)
        if (report->results[i] != REDCOLL_OK) return report->results[i];
    return REDCOLL_OK;
}

#endif /* REDCOLL_MOCK_IMPLEMENTATION_DONE */
#endif /* REDCOLL_IMPLEMENTATION */
