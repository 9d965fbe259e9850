/* redcoll_shm.h - redcoll transport for POSIX threads sharing memory - MIT licence (see redcoll.h)

   A team of p threads in one process, each holding its own redcoll_transport.
   The embedded default: no MPI, no sockets, just pthreads.

       static redcoll_result work(const redcoll_transport *t, void *arg) {
           ... redcoll_allreduce(t, sbuf, rbuf, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
       }
       redcoll_shm_run(8, work, &arg, NULL);        8 ranks on 8 threads, joined

   or, with threads you already have (a pool, OpenMP):

       redcoll_shm_team *team;
       redcoll_shm_team_create(NULL_or_&cfg, 8, &team);
       ... on thread r: redcoll_allreduce(redcoll_shm_transport(team, r), ...);
       redcoll_shm_team_destroy(team);

   Semantics
   - Rendezvous, single copy: a send waits until its receive is posted and the
     RECEIVER copies straight from the sender's buffer into its own, so a
     message costs one memcpy (not two through a staging buffer), and in an
     exchange (sendrecv) both partners copy at the same time.
   - Matching is FIFO per (source, destination, tag); sizes must match exactly
     (a mismatch fails both ends with REDCOLL_ERR_TRANSPORT).
   - sendrecv posts both halves and then waits, so exchanges and rings never
     deadlock; a send to oneself works inside sendrecv (not as a lone send).
   - Waiting spins briefly, then sleeps on a condition variable. Spinning is
     off by default when the team has more threads than online CPUs, so an
     oversubscribed team still runs at sane speed.
   - abort (the library calls it when a call fails on some rank) is sticky:
     every call blocked in or later entering the team returns
     REDCOLL_ERR_ABORTED. Create a new team to continue.
   - cfg.timeout_seconds > 0 bounds every blocking call and waitall: a hang
     becomes REDCOLL_ERR_TIMEOUT on the waiting rank (and the library's abort
     then releases the others).
   - isend / irecv / waitall are provided. Every posted request must be
     completed by waitall (as in MPI). While a rank waits in any call it also
     serves the copies of its other pending irecvs (a progress guarantee).
   - node_of answers 0 for every rank: the whole team is one node.
   - Thread safety: one thread per rank transport at a time; distinct ranks
     are meant to be used concurrently. Thread-sanitizer clean.

   Configuration macro: REDCOLL_SHM_SPIN, the default number of polls before
   sleeping when the team fits on the CPUs (2000). The first 64 polls spin
   with a pause instruction, the rest call sched_yield, so a waiting thread
   hands its core to a runnable peer at once. */
#ifndef REDCOLL_SHM_H
#define REDCOLL_SHM_H

#include "redcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialisable; NULL means all defaults. */
typedef struct redcoll_shm_config {
    double timeout_seconds; /* > 0: a blocking call waiting longer fails with TIMEOUT */
    int    spin;            /* polls before sleeping; 0 = default (REDCOLL_SHM_SPIN if the
                               team fits on the online CPUs, else none); < 0 = never spin */
    size_t stack_bytes;     /* threads redcoll_shm_run starts; 0 = the system default */
} redcoll_shm_config;

typedef struct redcoll_shm_team redcoll_shm_team;

/* Runs on each rank's thread. Same shape as the simulator's rank function. */
typedef redcoll_result (*redcoll_shm_rank_fn)(const redcoll_transport *t, void *arg);

/* Creates a team of `size` ranks (cfg may be NULL). Returns INVALID_ARG for
   size < 1 or a bad config, OUT_OF_MEMORY when allocation fails. */
REDCOLL_API redcoll_result redcoll_shm_team_create(const redcoll_shm_config *cfg, int size,
                                                   redcoll_shm_team **out);
/* Frees the team. No rank may be inside a call. */
REDCOLL_API void redcoll_shm_team_destroy(redcoll_shm_team *team);
/* The transport of `rank` (NULL if out of range). Valid until destroy. */
REDCOLL_API const redcoll_transport *redcoll_shm_transport(redcoll_shm_team *team, int rank);
/* REDCOLL_OK, or the reason the team was aborted (the result passed to abort). */
REDCOLL_API redcoll_result redcoll_shm_team_status(const redcoll_shm_team *team);

/* Runs fn(t, arg) for every rank of a new team of `size`: ranks 1..size-1
   on new threads, rank 0 on the calling thread; joins them and frees the
   team. results (optional, `size` entries) receives each rank's return
   value. Returns REDCOLL_OK if every rank returned OK, else the first
   rank's error in rank order; INVALID_ARG for size < 1 or no fn;
   OUT_OF_MEMORY when the team or a thread could not be created (the
   threads already started are released with ABORTED, and rank 0 does not
   run). */
REDCOLL_API redcoll_result redcoll_shm_run(int size, redcoll_shm_rank_fn fn, void *arg,
                                           redcoll_result *results);
/* As redcoll_shm_run with a configuration (cfg may be NULL). */
REDCOLL_API redcoll_result redcoll_shm_run_config(const redcoll_shm_config *cfg, int size,
                                                  redcoll_shm_rank_fn fn, void *arg,
                                                  redcoll_result *results);

#ifdef __cplusplus
}
#endif
#endif /* REDCOLL_SHM_H */

#ifdef REDCOLL_IMPLEMENTATION
#ifndef REDCOLL_SHM_IMPLEMENTATION_DONE
#define REDCOLL_SHM_IMPLEMENTATION_DONE

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef REDCOLL_SHM_SPIN
#define REDCOLL_SHM_SPIN 2000
#endif

/* Atomic int access: GNU builtins (gcc, clang, also in C++), else C11
   <stdatomic.h>, else no lock-free polling (waiting always sleeps). */
#if defined(__GNUC__) || defined(__clang__)
typedef int redcoll__shm_aint;
#define redcoll__shm_load(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define redcoll__shm_store(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define redcoll__shm_inc(p) ((void)__atomic_add_fetch((p), 1, __ATOMIC_ACQ_REL))
#define REDCOLL__SHM_CAN_SPIN 1
#if defined(__x86_64__) || defined(__i386__)
#define redcoll__shm_pause() __builtin_ia32_pause()
#else
#define redcoll__shm_pause() ((void)0)
#endif
#elif !defined(__cplusplus) && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
typedef atomic_int redcoll__shm_aint;
#define redcoll__shm_load(p) atomic_load_explicit((p), memory_order_acquire)
#define redcoll__shm_store(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define redcoll__shm_inc(p) ((void)atomic_fetch_add_explicit((p), 1, memory_order_acq_rel))
#define REDCOLL__SHM_CAN_SPIN 1
#define redcoll__shm_pause() ((void)0)
#else
#error "redcoll_shm.h needs GNU atomic builtins or C11 <stdatomic.h>"
#endif

/* Life of one end of a message. A send is queued in the destination's inbox
   until a receive claims it; a receive is queued at its own rank until a
   send matches it (then it is MATCHED: the receiver owes the copy). */
enum { REDCOLL__SHM_QUEUED = 0, REDCOLL__SHM_CLAIMED, REDCOLL__SHM_MATCHED, REDCOLL__SHM_DONE };

struct redcoll__shm_rank;

typedef struct redcoll__shm_end {
    struct redcoll__shm_end  *next;    /* in a queue (inbox, posted, matched) */
    struct redcoll__shm_rank *owner;
    int                       is_send, peer, tag;
    const void               *sbuf;
    void                     *rbuf;
    size_t                    bytes;
    struct redcoll__shm_end  *match;   /* MATCHED receive: the send to copy from */
    redcoll__shm_aint         state;
    redcoll_result            res;     /* written before state becomes DONE */
} redcoll__shm_end;

typedef struct redcoll__shm_queue { redcoll__shm_end *head, *tail; } redcoll__shm_queue;

/* Everything a rank's queues need is guarded by its own mutex; no code
   holds two ranks' mutexes at once. */
typedef struct redcoll__shm_rank {
    struct redcoll_shm_team *team;
    redcoll_transport        t;
    pthread_mutex_t          mu;
    pthread_cond_t           cv;
    redcoll__shm_queue       inbox;    /* sends to this rank, not yet claimed */
    redcoll__shm_queue       posted;   /* this rank's receives, not yet matched */
    redcoll__shm_queue       matched;  /* this rank's receives a sender matched: copy owed */
    redcoll__shm_aint        events;   /* bumped on every change this rank may wait for */
    int                      sleeping;
    char                     pad[64];  /* keep neighbours' hot fields apart */
} redcoll__shm_rank;

struct redcoll_shm_team {
    int                size;
    redcoll_shm_config cfg;
    int                spin;
    redcoll__shm_aint  aborted;
    pthread_mutex_t    abort_mu;
    redcoll_result     abort_why;   /* under abort_mu */
    redcoll__shm_rank *ranks;
};

static void redcoll__shm_push(redcoll__shm_queue *q, redcoll__shm_end *e) {
    e->next = NULL;
    if (q->tail) q->tail->next = e; else q->head = e;
    q->tail = e;
}

/* Unlinks e from q (e == NULL: the head); returns it, or NULL if absent. */
static redcoll__shm_end *redcoll__shm_take(redcoll__shm_queue *q, redcoll__shm_end *e) {
    redcoll__shm_end *prev = NULL, *f;
    for (f = q->head; f && (e && f != e); f = f->next) prev = f;
    if (!f) return NULL;
    if (prev) prev->next = f->next; else q->head = f->next;
    if (q->tail == f) q->tail = prev;
    f->next = NULL;
    return f;
}

/* First end in q from/to rank `peer_rank` with `tag`; unlinked. In the inbox
   the key is the sending rank, in `posted` the receive's source. */
static redcoll__shm_end *redcoll__shm_find(redcoll__shm_queue *q, int from_rank, int tag,
                                           int inbox) {
    redcoll__shm_end *e;
    for (e = q->head; e; e = e->next) {
        int from = inbox ? e->owner->t.rank : e->peer;
        if (from == from_rank && e->tag == tag) break;
    }
    return e ? redcoll__shm_take(q, e) : NULL;
}

/* Wakes r if it sleeps; call with r->mu held after changing what r waits for. */
static void redcoll__shm_kick_locked(redcoll__shm_rank *r) {
    redcoll__shm_inc(&r->events);
    if (r->sleeping) pthread_cond_broadcast(&r->cv);
}

/* Completes an end owned by another rank (the send a receiver copied from). */
static void redcoll__shm_finish_remote(redcoll__shm_end *e, redcoll_result res) {
    redcoll__shm_rank *o = e->owner;
    pthread_mutex_lock(&o->mu);
    e->res = res;
    redcoll__shm_store(&e->state, REDCOLL__SHM_DONE);
    redcoll__shm_kick_locked(o);
    pthread_mutex_unlock(&o->mu);
}

/* The single copy: receiver `rcv` takes the bytes of the claimed send `snd`. */
static void redcoll__shm_copy(redcoll__shm_end *rcv, redcoll__shm_end *snd) {
    redcoll_result res = REDCOLL_OK;
    if (rcv->bytes != snd->bytes) res = REDCOLL_ERR_TRANSPORT;
    else if (snd->bytes) memcpy(rcv->rbuf, snd->sbuf, snd->bytes);
    rcv->res = res;
    redcoll__shm_store(&rcv->state, REDCOLL__SHM_DONE);
    redcoll__shm_finish_remote(snd, res);
}

static int redcoll__shm_aborted(const redcoll_shm_team *team) {
    return redcoll__shm_load((redcoll__shm_aint *)&team->aborted) != 0;
}

static void redcoll__shm_end_init(redcoll__shm_end *e, redcoll__shm_rank *r, int is_send,
                                  int peer, const void *sbuf, void *rbuf, size_t bytes, int tag) {
    memset(e, 0, sizeof *e);
    e->owner = r; e->is_send = is_send; e->peer = peer;
    e->sbuf = sbuf; e->rbuf = rbuf; e->bytes = bytes; e->tag = tag;
    e->res = REDCOLL_OK;
    redcoll__shm_store(&e->state, REDCOLL__SHM_QUEUED);
}

static void redcoll__shm_fail_end(redcoll__shm_end *e, redcoll_result res) {
    e->res = res;
    redcoll__shm_store(&e->state, REDCOLL__SHM_DONE);
}

/* Posts a send: hands it to the oldest matching posted receive of dst, or
   queues it in dst's inbox. */
static void redcoll__shm_post_send(redcoll__shm_rank *r, redcoll__shm_end *e) {
    redcoll__shm_rank *d = &r->team->ranks[e->peer];
    redcoll__shm_end *rcv;
    pthread_mutex_lock(&d->mu);
    if (redcoll__shm_aborted(r->team)) {
        pthread_mutex_unlock(&d->mu);
        redcoll__shm_fail_end(e, REDCOLL_ERR_ABORTED);
        return;
    }
    rcv = redcoll__shm_find(&d->posted, r->t.rank, e->tag, 0);
    if (rcv) {
        redcoll__shm_store(&e->state, REDCOLL__SHM_CLAIMED);
        rcv->match = e;
        redcoll__shm_store(&rcv->state, REDCOLL__SHM_MATCHED);
        redcoll__shm_push(&d->matched, rcv);
        redcoll__shm_kick_locked(d);
    } else {
        redcoll__shm_push(&d->inbox, e);
    }
    pthread_mutex_unlock(&d->mu);
}

/* Posts a receive: copies at once from the oldest matching queued send, or
   queues the receive for a sender to match. */
static void redcoll__shm_post_recv(redcoll__shm_rank *r, redcoll__shm_end *e) {
    redcoll__shm_end *snd;
    pthread_mutex_lock(&r->mu);
    if (redcoll__shm_aborted(r->team)) {
        pthread_mutex_unlock(&r->mu);
        redcoll__shm_fail_end(e, REDCOLL_ERR_ABORTED);
        return;
    }
    snd = redcoll__shm_find(&r->inbox, e->peer, e->tag, 1);
    if (snd) redcoll__shm_store(&snd->state, REDCOLL__SHM_CLAIMED);
    else redcoll__shm_push(&r->posted, e);
    pthread_mutex_unlock(&r->mu);
    if (snd) redcoll__shm_copy(e, snd);
}

/* Serves every receive of r that a sender has matched (any call's). */
static void redcoll__shm_serve(redcoll__shm_rank *r) {
    for (;;) {
        redcoll__shm_end *e;
        pthread_mutex_lock(&r->mu);
        e = redcoll__shm_take(&r->matched, NULL);
        pthread_mutex_unlock(&r->mu);
        if (!e) return;
        redcoll__shm_copy(e, e->match);
    }
}

static int redcoll__shm_all_done(redcoll__shm_end **ends, int n) {
    int i;
    for (i = 0; i < n; ++i)
        if (redcoll__shm_load(&ends[i]->state) != REDCOLL__SHM_DONE) return 0;
    return 1;
}

/* Withdraws every end of this call still queued, failing it with `why`.
   Sends already claimed and receives already matched complete normally. */
static void redcoll__shm_withdraw(redcoll__shm_rank *r, redcoll__shm_end **ends, int n,
                                  redcoll_result why) {
    int i;
    for (i = 0; i < n; ++i) {
        redcoll__shm_end *e = ends[i];
        redcoll__shm_rank *q = e->is_send ? &r->team->ranks[e->peer] : r;
        int gone = 0;
        pthread_mutex_lock(&q->mu);
        if (redcoll__shm_load(&e->state) == REDCOLL__SHM_QUEUED)
            gone = redcoll__shm_take(e->is_send ? &q->inbox : &q->posted, e) != NULL;
        pthread_mutex_unlock(&q->mu);
        if (gone) redcoll__shm_fail_end(e, why);
    }
}

/* Absolute deadline `seconds` from now on the condition variable's clock. */
static struct timespec redcoll__shm_deadline(double seconds) {
    struct timespec ts;
    double whole;
    long ns;
    timespec_get(&ts, TIME_UTC);
    whole = (double)(long)seconds;
    ns = ts.tv_nsec + (long)((seconds - whole) * 1e9);
    ts.tv_sec += (time_t)whole + ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    return ts;
}

/* Waits until every end is DONE. Spins `team->spin` polls, then sleeps on the
   rank's condition variable; serves matched receives meanwhile. Abort and
   timeout withdraw what is still queued and wait for the rest (claimed
   copies are already under way). Returns the first end's error. */
static redcoll_result redcoll__shm_wait(redcoll__shm_rank *r, redcoll__shm_end **ends, int n) {
    redcoll_shm_team *team = r->team;
    double timeout = team->cfg.timeout_seconds;
    struct timespec deadline;
    redcoll_result why = REDCOLL_OK, res = REDCOLL_OK;
    int i, have_deadline = 0;

    for (;;) {
        int seen = redcoll__shm_load(&r->events), k, timed_out = 0;
        redcoll__shm_serve(r);
        if (redcoll__shm_all_done(ends, n)) break;
        if (why == REDCOLL_OK && redcoll__shm_aborted(team)) why = REDCOLL_ERR_ABORTED;
        if (why != REDCOLL_OK) redcoll__shm_withdraw(r, ends, n, why);
        if (redcoll__shm_all_done(ends, n)) break;
        for (k = 0; k < team->spin && why == REDCOLL_OK; ++k) {
            if (redcoll__shm_load(&r->events) != seen || redcoll__shm_aborted(team)) break;
            if (k < 64) redcoll__shm_pause(); else sched_yield();
        }
        if (timeout > 0 && !have_deadline && why == REDCOLL_OK) {
            deadline = redcoll__shm_deadline(timeout);
            have_deadline = 1;
        }
        pthread_mutex_lock(&r->mu);
        r->sleeping = 1;
        while (redcoll__shm_load(&r->events) == seen &&
               (why != REDCOLL_OK || !redcoll__shm_aborted(team))) {
            if (have_deadline && why == REDCOLL_OK) {
                if (pthread_cond_timedwait(&r->cv, &r->mu, &deadline) != 0 &&
                    redcoll__shm_load(&r->events) == seen) { timed_out = 1; break; }
            } else {
                pthread_cond_wait(&r->cv, &r->mu);
            }
        }
        r->sleeping = 0;
        pthread_mutex_unlock(&r->mu);
        if (timed_out && why == REDCOLL_OK) why = REDCOLL_ERR_TIMEOUT;
    }
    for (i = 0; i < n; ++i)
        if (ends[i]->res != REDCOLL_OK && res == REDCOLL_OK) res = ends[i]->res;
    return res;
}

static int redcoll__shm_peer_ok(const redcoll__shm_rank *r, int peer) {
    return peer >= 0 && peer < r->team->size;
}

static redcoll_result redcoll__shm_send(void *user, int dst, const void *buf, size_t bytes,
                                        int tag) {
    redcoll__shm_rank *r = (redcoll__shm_rank *)user;
    redcoll__shm_end e, *list[1];
    if (!redcoll__shm_peer_ok(r, dst)) return REDCOLL_ERR_TRANSPORT;
    redcoll__shm_end_init(&e, r, 1, dst, buf, NULL, bytes, tag);
    redcoll__shm_post_send(r, &e);
    list[0] = &e;
    return redcoll__shm_wait(r, list, 1);
}

static redcoll_result redcoll__shm_recv(void *user, int src, void *buf, size_t bytes, int tag) {
    redcoll__shm_rank *r = (redcoll__shm_rank *)user;
    redcoll__shm_end e, *list[1];
    if (!redcoll__shm_peer_ok(r, src)) return REDCOLL_ERR_TRANSPORT;
    redcoll__shm_end_init(&e, r, 0, src, NULL, buf, bytes, tag);
    redcoll__shm_post_recv(r, &e);
    list[0] = &e;
    return redcoll__shm_wait(r, list, 1);
}

static redcoll_result redcoll__shm_sendrecv(void *user, int dst, const void *sbuf, size_t sbytes,
                                            int src, void *rbuf, size_t rbytes, int tag) {
    redcoll__shm_rank *r = (redcoll__shm_rank *)user;
    redcoll__shm_end s, v, *list[2];
    if (!redcoll__shm_peer_ok(r, dst) || !redcoll__shm_peer_ok(r, src)) return REDCOLL_ERR_TRANSPORT;
    redcoll__shm_end_init(&s, r, 1, dst, sbuf, NULL, sbytes, tag);
    redcoll__shm_end_init(&v, r, 0, src, NULL, rbuf, rbytes, tag);
    redcoll__shm_post_send(r, &s);
    redcoll__shm_post_recv(r, &v);
    list[0] = &s; list[1] = &v;
    return redcoll__shm_wait(r, list, 2);
}

static redcoll_result redcoll__shm_ipost(redcoll__shm_rank *r, int is_send, int peer,
                                         const void *sbuf, void *rbuf, size_t bytes, int tag,
                                         redcoll_request *req) {
    redcoll__shm_end *e;
    req->ptr = NULL;
    if (!redcoll__shm_peer_ok(r, peer)) return REDCOLL_ERR_TRANSPORT;
    e = (redcoll__shm_end *)malloc(sizeof *e);
    if (!e) return REDCOLL_ERR_OUT_OF_MEMORY;
    redcoll__shm_end_init(e, r, is_send, peer, sbuf, rbuf, bytes, tag);
    if (is_send) redcoll__shm_post_send(r, e); else redcoll__shm_post_recv(r, e);
    req->ptr = e;
    return REDCOLL_OK;
}

static redcoll_result redcoll__shm_isend(void *user, int dst, const void *buf, size_t bytes,
                                         int tag, redcoll_request *req) {
    return redcoll__shm_ipost((redcoll__shm_rank *)user, 1, dst, buf, NULL, bytes, tag, req);
}

static redcoll_result redcoll__shm_irecv(void *user, int src, void *buf, size_t bytes, int tag,
                                         redcoll_request *req) {
    return redcoll__shm_ipost((redcoll__shm_rank *)user, 0, src, NULL, buf, bytes, tag, req);
}

/* Completes every request (NULL ones are skipped) and frees them. */
static redcoll_result redcoll__shm_waitall(void *user, int count, redcoll_request *reqs) {
    redcoll__shm_rank *r = (redcoll__shm_rank *)user;
    redcoll__shm_end *few[16], **list = few;
    redcoll_result res;
    int i, n = 0;
    if (count > 16) {
        list = (redcoll__shm_end **)malloc(sizeof *list * (size_t)count);
        if (!list) return REDCOLL_ERR_OUT_OF_MEMORY; /* requests stay valid: wait again */
    }
    for (i = 0; i < count; ++i)
        if (reqs[i].ptr) list[n++] = (redcoll__shm_end *)reqs[i].ptr;
    res = redcoll__shm_wait(r, list, n);
    for (i = 0; i < n; ++i) free(list[i]);
    for (i = 0; i < count; ++i) reqs[i].ptr = NULL;
    if (list != few) free(list);
    return res;
}

static void redcoll__shm_abort(void *user, redcoll_result why) {
    redcoll__shm_rank *r = (redcoll__shm_rank *)user;
    redcoll_shm_team *team = r->team;
    int i;
    pthread_mutex_lock(&team->abort_mu);
    if (team->abort_why == REDCOLL_OK)
        team->abort_why = why != REDCOLL_OK ? why : REDCOLL_ERR_ABORTED;
    pthread_mutex_unlock(&team->abort_mu);
    redcoll__shm_store(&team->aborted, 1);
    for (i = 0; i < team->size; ++i) {
        redcoll__shm_rank *q = &team->ranks[i];
        pthread_mutex_lock(&q->mu);
        redcoll__shm_kick_locked(q);
        pthread_mutex_unlock(&q->mu);
    }
}

static int redcoll__shm_node_of(void *user, int rank) {
    (void)user; (void)rank;
    return 0; /* one process: one node */
}

REDCOLL_API redcoll_result redcoll_shm_team_create(const redcoll_shm_config *cfg, int size,
                                                   redcoll_shm_team **out) {
    redcoll_shm_team *team;
    long cpus;
    int i;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    *out = NULL;
    if (size < 1 || (cfg && cfg->timeout_seconds < 0)) return REDCOLL_ERR_INVALID_ARG;
    team = (redcoll_shm_team *)calloc(1, sizeof *team);
    if (!team) return REDCOLL_ERR_OUT_OF_MEMORY;
    team->ranks = (redcoll__shm_rank *)calloc((size_t)size, sizeof *team->ranks);
    if (!team->ranks) { free(team); return REDCOLL_ERR_OUT_OF_MEMORY; }
    if (cfg) team->cfg = *cfg;
    team->size = size;
    cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (team->cfg.spin > 0) team->spin = team->cfg.spin;
    else if (team->cfg.spin == 0 && (cpus <= 0 || size <= cpus)) team->spin = REDCOLL_SHM_SPIN;
    else team->spin = 0;
    pthread_mutex_init(&team->abort_mu, NULL);
    for (i = 0; i < size; ++i) {
        redcoll__shm_rank *r = &team->ranks[i];
        r->team = team;
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->cv, NULL);
        r->t.user = r;
        r->t.rank = i;
        r->t.size = size;
        r->t.send = redcoll__shm_send;
        r->t.recv = redcoll__shm_recv;
        r->t.sendrecv = redcoll__shm_sendrecv;
        r->t.abort = redcoll__shm_abort;
        r->t.isend = redcoll__shm_isend;
        r->t.irecv = redcoll__shm_irecv;
        r->t.waitall = redcoll__shm_waitall;
        r->t.node_of = redcoll__shm_node_of;
    }
    *out = team;
    return REDCOLL_OK;
}

REDCOLL_API void redcoll_shm_team_destroy(redcoll_shm_team *team) {
    int i;
    if (!team) return;
    for (i = 0; i < team->size; ++i) {
        pthread_cond_destroy(&team->ranks[i].cv);
        pthread_mutex_destroy(&team->ranks[i].mu);
    }
    pthread_mutex_destroy(&team->abort_mu);
    free(team->ranks);
    free(team);
}

REDCOLL_API const redcoll_transport *redcoll_shm_transport(redcoll_shm_team *team, int rank) {
    if (!team || rank < 0 || rank >= team->size) return NULL;
    return &team->ranks[rank].t;
}

REDCOLL_API redcoll_result redcoll_shm_team_status(const redcoll_shm_team *team) {
    redcoll_result why;
    if (!team) return REDCOLL_ERR_INVALID_ARG;
    pthread_mutex_lock((pthread_mutex_t *)&team->abort_mu);
    why = team->abort_why;
    pthread_mutex_unlock((pthread_mutex_t *)&team->abort_mu);
    return why;
}

typedef struct redcoll__shm_job {
    const redcoll_transport *t;
    redcoll_shm_rank_fn      fn;
    void                    *arg;
    redcoll_result           res;
} redcoll__shm_job;

static void *redcoll__shm_thread(void *p) {
    redcoll__shm_job *j = (redcoll__shm_job *)p;
    j->res = j->fn(j->t, j->arg);
    return NULL;
}

REDCOLL_API redcoll_result redcoll_shm_run_config(const redcoll_shm_config *cfg, int size,
                                                  redcoll_shm_rank_fn fn, void *arg,
                                                  redcoll_result *results) {
    redcoll_shm_team *team;
    redcoll__shm_job *jobs;
    pthread_t *threads;
    pthread_attr_t attr;
    redcoll_result res;
    int i, started = 0;
    if (!fn) return REDCOLL_ERR_INVALID_ARG;
    res = redcoll_shm_team_create(cfg, size, &team);
    if (res != REDCOLL_OK) return res;
    jobs = (redcoll__shm_job *)calloc((size_t)size, sizeof *jobs);
    threads = (pthread_t *)calloc((size_t)size, sizeof *threads);
    if (!jobs || !threads) {
        free(jobs); free(threads);
        redcoll_shm_team_destroy(team);
        return REDCOLL_ERR_OUT_OF_MEMORY;
    }
    pthread_attr_init(&attr);
    if (cfg && cfg->stack_bytes) pthread_attr_setstacksize(&attr, cfg->stack_bytes);
    /* rank 0 runs on the calling thread: a team of 1 starts no thread */
    for (i = 0; i < size; ++i) {
        jobs[i].t = &team->ranks[i].t; jobs[i].fn = fn; jobs[i].arg = arg;
        jobs[i].res = REDCOLL_ERR_ABORTED;
    }
    for (i = 1; i < size; ++i, ++started)
        if (pthread_create(&threads[i], &attr, redcoll__shm_thread, &jobs[i]) != 0) break;
    pthread_attr_destroy(&attr);
    res = REDCOLL_OK;
    if (started < size - 1) { /* release the ranks that started */
        redcoll__shm_abort(&team->ranks[0], REDCOLL_ERR_OUT_OF_MEMORY);
        res = REDCOLL_ERR_OUT_OF_MEMORY;
    } else {
        redcoll__shm_thread(&jobs[0]);
    }
    for (i = 1; i <= started; ++i) pthread_join(threads[i], NULL);
    for (i = 0; i < size; ++i) {
        if (results) results[i] = jobs[i].res;
        if (res == REDCOLL_OK && jobs[i].res != REDCOLL_OK) res = jobs[i].res;
    }
    free(jobs); free(threads);
    redcoll_shm_team_destroy(team);
    return res;
}

REDCOLL_API redcoll_result redcoll_shm_run(int size, redcoll_shm_rank_fn fn, void *arg,
                                           redcoll_result *results) {
    return redcoll_shm_run_config(NULL, size, fn, arg, results);
}

#endif /* REDCOLL_SHM_IMPLEMENTATION_DONE */
#endif /* REDCOLL_IMPLEMENTATION */
