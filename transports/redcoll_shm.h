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
   - Rendezvous, single copy: a send waits until its receive is matched, and
     the RECEIVER copies straight from the sender's buffer into its own, so a
     message costs one memcpy (not two through a staging buffer), and in an
     exchange (sendrecv) both partners copy at the same time.
   - Eager inline sends: payloads of up to 32 bytes travel inside the
     hand-off cache line instead (copied in by the sender, out by the
     receiver), and such a send is complete as soon as it is posted in a
     slot: the sender does not wait for the receiver's answer, so a small
     exchange costs one line crossing each way, not a round trip. Each
     channel has two slots, so back-to-back small sends (an exchange loop)
     do not wait for each other; a third unreceived send on a channel waits
     in the queue (rendezvous). An eager send is not withdrawn by abort or
     timeout, and a size mismatch fails only its receive (the sender has
     returned OK; the library's abort then stops the team).
   - Receive-and-reduce (the optional entries recv_reduce, sendrecv_reduce):
     the receiver calls the library's consumer on the sender's buffer itself,
     in one piece (the whole message, a whole number of units), so the
     reduction is the only pass over the incoming data and nothing is
     staged. The transport says so (REDCOLL_TRANSPORT_PEER_REDUCE), and
     AUTO's cost model then prices such a message without its n beta: at
     p = 2 recursive doubling, one fused pass over both vectors, beats
     halving-doubling, whose allgather copies what the partner just wrote. They match ordinary sends and the other way round. While the
     consumer of a sendrecv_reduce runs, the partner may still be reading
     this rank's sbuf: what the consumer writes must not overlap sbuf (as
     MPI_Sendrecv's buffers must be disjoint). A consumer that is NULL, has
     no fn, unit 0, or a size that is not a whole number of units: the call
     returns REDCOLL_ERR_INVALID_ARG before posting anything.
   - Matching is FIFO per (source, destination, tag); sizes must match exactly
     (a mismatch fails both ends with REDCOLL_ERR_TRANSPORT; only the
     receive for an eager send).
   - sendrecv posts both halves and then waits, so exchanges and rings never
     deadlock; a send to oneself works inside sendrecv (not as a lone send).
   - No lock in the common case. Each ordered pair of ranks has a channel
     (made by the sender on its first send) whose first two cache lines,
     the slots, hold a posted send each: the sender fills one and publishes
     it with one store, the receiver claims it (with a compare-and-swap
     unless it is eager), copies, and stores "done". A send posted while
     both slots are taken (several isends to one rank) waits in the
     channel's queue under the receiver's mutex. Receives never leave their
     rank: each rank matches its own pending receives. So a matched send/recv
     or sendrecv pair at p = 2 touches one slot line each way and the payload.
   - Waiting polls, then sleeps on the rank's condition variable. A peer that
     completes something takes the mutex to wake a rank only when that rank
     has announced its sleep (sequentially consistent flags: no lost
     wake-up). Polling is off by default when the team has more threads than
     online CPUs (spin = 0: one look, then sleep), so an oversubscribed team
     still runs at sane speed.
   - abort (the library calls it when a call fails on some rank) is sticky:
     every call blocked in or later entering the team returns
     REDCOLL_ERR_ABORTED. Create a new team to continue.
   - Ranks that disagree about a call end in an error with the default
     configuration (no timeout): a receive whose sender's oldest send to it
     belongs to another call of the library's (REDCOLL_TAG_OTHER_CALL: a
     rank that skipped a call, or made another) fails with
     REDCOLL_ERR_MISMATCH, and a deadlock detector runs once, when the last
     rank goes to sleep: every rank asleep in a wait with no wake-up on the
     way, or finished (its redcoll_shm_run function returned, or
     redcoll_shm_team_done). It stops the team; each blocked call returns
     its verdict, REDCOLL_ERR_MISMATCH (a waiting rank's sender has another
     call's send for it, or has finished) or REDCOLL_ERR_DEADLOCK. Its
     account names every rank and what it waits for (redcoll_shm_team_report,
     cfg.report), for instance
         ranks disagree about the call: rank 1 is in allreduce (ring), rank 0
         in allreduce (recursive_doubling)
           rank 0 waits to receive 16 bytes from rank 1 (allreduce (...))
     It costs nothing while any rank works: a count updated on the way to
     sleep and by the wake-up. When every rank has finished, a message
     nobody received (an eager send, so its sender did not wait) makes
     redcoll_shm_run return REDCOLL_ERR_MISMATCH. With a timeout configured
     the detector is off and the timeout bounds every wait.
   - cfg.timeout_seconds > 0 bounds every blocking call and waitall: a hang
     becomes REDCOLL_ERR_TIMEOUT on the waiting rank (and the library's abort
     then releases the others). A timeout too long for a deadline (1e19 s,
     1e300 s, INFINITY) means none; NaN or a negative one: team_create
     returns REDCOLL_ERR_INVALID_ARG.
   - isend / irecv / waitall are provided. Every posted request must be
     completed by waitall or test (as in MPI). While a rank waits in any call
     it also serves the copies of its other pending irecvs (a progress
     guarantee). Requests reuse a per-rank list of freed records, so a rank
     that keeps posting allocates nothing once it has as many as it ever had
     pending at once.
   - Non-blocking collectives (test, irecv_reduce, nb): test serves the
     rank's pending receives once and reports whether the requests are
     complete; after an abort it withdraws the ones nobody has taken, and
     with cfg.timeout_seconds a request still incomplete that long after its
     first test fails with REDCOLL_ERR_TIMEOUT. When the team has more
     threads than CPUs (no spinning), a test that finds nothing complete
     yields the CPU once. irecv_reduce is recv_reduce posted: the receiver
     calls the consumer on the sender's buffer when it matches the send
     (inside a later test, waitall or blocking call), so the non-blocking
     forms keep the single pass.
   - scratch (the optional entry): one block per rank, kept by the team,
     64-byte aligned, grown (freed and allocated anew) when a request exceeds
     it and never shrunk, so in steady state a call gets the same block and
     faults in no pages. Memory bound: per rank, the largest single request
     so far (at least 64 bytes) + 63; all freed by redcoll_shm_team_destroy.
     A request that cannot be met returns NULL (the previous block is gone).
   - Memory: 8 p^2 bytes of channel pointers per team, about 320 bytes per
     ordered pair of ranks that ever sent to each other, the scratch.
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
    void (*report)(void *report_arg, const char *text); /* the deadlock detector's account,
                               once, on the thread that found it (NULL: kept only, see
                               redcoll_shm_team_report) */
    void  *report_arg;
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
/* Rank `rank` makes no more calls on the team (its thread may end): the
   deadlock detector counts it as finished, so ranks left waiting for it are
   released with an error. redcoll_shm_run calls it when a rank's function
   returns. Calling it twice is harmless. Thread safe. */
REDCOLL_API void redcoll_shm_team_done(redcoll_shm_team *team, int rank);
/* The deadlock detector's account (what each rank waited for), or NULL when
   it has not stopped the team. Valid until redcoll_shm_team_destroy. */
REDCOLL_API const char *redcoll_shm_team_report(const redcoll_shm_team *team);

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

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef REDCOLL_SHM_SPIN
#define REDCOLL_SHM_SPIN 2000
#endif
#define REDCOLL__SHM_PAUSES 64  /* polls with a pause instruction before sched_yield
                                   (longer pausing loses on a loaded machine) */
#define REDCOLL__SHM_INLINE 32  /* payloads up to this many bytes ride in the slot (eager) */

/* Atomics: GNU builtins (gcc, clang, also in C++), else C11 <stdatomic.h>.
   Hand-off words are sequentially consistent: a waiter's "I sleep" store
   and a poster's "posted" store are then seen by at least one of the two
   (the Dekker pattern that lets posters skip the mutex unless the peer
   sleeps). On x86 that costs an xchg per store and nothing per load. */
#if defined(__GNUC__) || defined(__clang__)
typedef int redcoll__shm_aint;
typedef unsigned redcoll__shm_auint;
typedef struct redcoll__shm_chan *redcoll__shm_achan;
#define redcoll__shm_load(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define redcoll__shm_store(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define redcoll__shm_peek(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define redcoll__shm_poke(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define redcoll__shm_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define redcoll__shm_own(p) __atomic_fetch_or((p), 0u, __ATOMIC_SEQ_CST)
#define redcoll__shm_add(p, v) ((void)__atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST))
#define redcoll__shm_add_fetch(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define redcoll__shm_cas(p, e, v) \
    __atomic_compare_exchange_n((p), (e), (v), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#if defined(__x86_64__) || defined(__i386__)
#define redcoll__shm_pause() __builtin_ia32_pause()
#else
#define redcoll__shm_pause() ((void)0)
#endif
#elif !defined(__cplusplus) && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
typedef atomic_int redcoll__shm_aint;
typedef atomic_uint redcoll__shm_auint;
typedef _Atomic(struct redcoll__shm_chan *) redcoll__shm_achan;
#define redcoll__shm_load(p) atomic_load(p)
#define redcoll__shm_store(p, v) atomic_store((p), (v))
#define redcoll__shm_peek(p) atomic_load_explicit((p), memory_order_relaxed)
#define redcoll__shm_poke(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define redcoll__shm_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define redcoll__shm_own(p) atomic_fetch_or((p), 0u)
#define redcoll__shm_add(p, v) ((void)atomic_fetch_add((p), (v)))
#define redcoll__shm_add_fetch(p, v) (atomic_fetch_add((p), (v)) + (v))
#define redcoll__shm_cas(p, e, v) atomic_compare_exchange_strong((p), (e), (v))
#define redcoll__shm_pause() ((void)0)
#else
#error "redcoll_shm.h needs GNU atomic builtins or C11 <stdatomic.h>"
#endif

/* ---- data structures ---------------------------------------------------------
   Every ordered pair (src, dst) has a channel, made by src on its first send
   to dst. Its first two cache lines are the slots: each holds one send src
   has posted to dst, with its tag, buffer, size and (for small payloads) a
   copy of the bytes. A send posted while both slots are taken waits in the
   channel's overflow queue, under dst's mutex. A receive is private to its
   rank: the rank's `pending` list holds its unmatched receives in posting
   order, and the rank itself matches them (slots first: their sends are
   older than anything in the queue) and copies or reduces straight from the
   sender's buffer. So a matched exchange touches the two slot lines, the
   payload and nothing else: no lock, no list shared between threads. */

/* Slot states: the low 3 bits of `state`; the bits above count posts, so a
   claim never takes a send that was withdrawn and posted again meanwhile.
   EAGER is a posted inline send that its sender has already completed: it
   is never withdrawn, so its receiver reads it without claiming it and
   nobody waits for its DONE (the sender's next post looks at it). */
enum { REDCOLL__SHM_FREE = 0, REDCOLL__SHM_POSTED, REDCOLL__SHM_CLAIMED, REDCOLL__SHM_DONE,
       REDCOLL__SHM_MISMATCH, REDCOLL__SHM_EAGER };
#define REDCOLL__SHM_ST(s) ((s) & 7u)
/* The slot is free for the sender's next post (nothing posted or claimed). */
#define REDCOLL__SHM_DRAINED(s) \
    (REDCOLL__SHM_ST(s) == REDCOLL__SHM_FREE || REDCOLL__SHM_ST(s) == REDCOLL__SHM_DONE || \
     REDCOLL__SHM_ST(s) == REDCOLL__SHM_MISMATCH)

/* Life of an end (one side of one transfer): WAIT (a receive in `pending`,
   a send in a slot or queue), TAKEN (a queued send a receiver unlinked and
   is copying from), DONE (res is final). */
enum { REDCOLL__SHM_WAIT = 0, REDCOLL__SHM_TAKEN, REDCOLL__SHM_END_DONE };

struct redcoll__shm_rank;

typedef struct redcoll__shm_end {
    struct redcoll__shm_end *next;     /* in `pending` (receives) or an overflow queue */
    int                      is_send, peer, tag;
    int                      in_slot;  /* send: posted in slot[in_slot - 1] (0: queued) */
    const void              *sbuf;
    void                    *rbuf;
    const redcoll_consumer  *into;     /* receive-and-reduce: the consumer, not rbuf */
    size_t                   bytes;
    struct redcoll__shm_chan *ch;      /* send: its channel */
    struct timespec          deadline; /* test: when it times out (timed: 1) */
    int                      timed;
    redcoll__shm_aint        state;
    redcoll_result           res;      /* written before state becomes DONE */
} redcoll__shm_end;

typedef struct redcoll__shm_queue { redcoll__shm_end *head, *tail; } redcoll__shm_queue;

/* One hand-off (64 bytes on LP64, one cache line): written by the sender
   to post, by the receiver to claim and to complete. */
typedef struct redcoll__shm_slot {
    redcoll__shm_auint  state;
    redcoll__shm_aint   tag;
    int                 unused[2];
    const void         *sbuf;
    size_t              bytes;
    unsigned char       data[REDCOLL__SHM_INLINE];
} redcoll__shm_slot;

/* Two slots, so an eager send can be posted while the previous one is
   still unread: in an exchange loop each side posts its next message
   before the partner has read the last (that slot drained a step ago). */
typedef struct redcoll__shm_chan {
    redcoll__shm_slot   slot[2];    /* lines 0 and 1 */
    /* line 2, written only when sends queue: `over` is under the receiver's mutex */
    redcoll__shm_aint   nover;      /* sends waiting in `over` */
    redcoll__shm_queue  over;
    char                pad[64 - sizeof(redcoll__shm_aint) - sizeof(redcoll__shm_queue)];
    /* line 3: the sender's bookkeeping */
    redcoll__shm_end   *occupant[2]; /* a rendezvous send in a slot until its sender sees it done */
    unsigned            posts;
    void               *mem;        /* the block malloc returned (the channel is aligned in it) */
} redcoll__shm_chan;

typedef struct redcoll__shm_rank {
    /* what peers touch: the wake-up (and, under mu, the overflow queues of
       sends to this rank) */
    redcoll__shm_aint        sleeping;
    int                      signal;   /* under mu */
    int                      counted;  /* under mu: asleep and counted in team->idle */
    pthread_mutex_t          mu;
    pthread_cond_t           cv;
    char                     pad0[64];
    /* the rank's own */
    struct redcoll_shm_team *team;
    redcoll_transport        t;
    redcoll__shm_queue       pending;  /* unmatched receives, in posting order */
    redcoll_scratch_block    scratch;  /* the scratch entry's block */
    redcoll__shm_end        *spare;    /* freed request records, for the next isend / irecv */
    redcoll_nbstate          nb;
    redcoll__shm_aint        finished; /* redcoll_shm_team_done: makes no more calls */
    char                     pad1[64];
} redcoll__shm_rank;

struct redcoll_shm_team {
    int                 size;
    redcoll_shm_config  cfg;
    int                 spin;
    redcoll__shm_rank  *ranks;
    redcoll__shm_achan *chans;      /* [dst * size + src] */
    redcoll__shm_aint   aborted;
    pthread_mutex_t     abort_mu;
    redcoll_result      abort_why;  /* under abort_mu */
    redcoll__shm_aint   idle;       /* ranks asleep with no wake-up on the way, plus
                                       ranks finished: p of p is a deadlock */
    redcoll__shm_aint   release;    /* DEADLOCK or MISMATCH when the detector stopped
                                       the team (what its blocked calls return), else 0 */
    char               *report;     /* the detector's account (under abort_mu), or NULL */
};

static void redcoll__shm_push(redcoll__shm_queue *q, redcoll__shm_end *e) {
    e->next = NULL;
    if (q->tail) q->tail->next = e; else q->head = e;
    q->tail = e;
}

/* Unlinks e (whose predecessor is prev, NULL for the head) from q. */
static void redcoll__shm_unlink(redcoll__shm_queue *q, redcoll__shm_end *prev, redcoll__shm_end *e) {
    if (prev) prev->next = e->next; else q->head = e->next;
    if (q->tail == e) q->tail = prev;
    e->next = NULL;
}

/* Unlinks and returns the first end in q with `tag`, or e itself when e is
   given; NULL when absent. */
static redcoll__shm_end *redcoll__shm_take(redcoll__shm_queue *q, redcoll__shm_end *e, int tag) {
    redcoll__shm_end *prev = NULL, *f;
    for (f = q->head; f && (e ? f != e : f->tag != tag); f = f->next) prev = f;
    if (f) redcoll__shm_unlink(q, prev, f);
    return f;
}

static int redcoll__shm_aborted(const redcoll_shm_team *team) {
    return redcoll__shm_load((redcoll__shm_aint *)&team->aborted) != 0;
}

/* Wakes d if it sleeps. Call after the sequentially consistent store that
   published what d waits for: d either sees that store or is seen asleep.
   A kicked rank leaves the idle count here, at once, so the count never
   holds a rank whose wake-up is on the way (redcoll__shm_sleep). */
static void redcoll__shm_kick(redcoll__shm_rank *d) {
    if (!redcoll__shm_load(&d->sleeping)) return;
    pthread_mutex_lock(&d->mu);
    d->signal = 1;
    if (d->counted) { d->counted = 0; redcoll__shm_add(&d->team->idle, -1); }
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

/* Keeps the first account of why the team stopped (redcoll_shm_team_report)
   and hands it to cfg.report. */
static void redcoll__shm_tell(redcoll_shm_team *team, const char *fmt, ...) {
    va_list ap;
    char *text;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(text = (char *)malloc((size_t)n + 1))) return;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&team->abort_mu);
    if (team->report) { free(text); text = NULL; }
    else team->report = text;
    pthread_mutex_unlock(&team->abort_mu);
    if (text && team->cfg.report) team->cfg.report(team->cfg.report_arg, text);
}

static void *redcoll__shm_align(void *mem) {
    return (void *)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
}

/* The channel src -> dst; the sender makes it on first use (make = 1). */
static redcoll__shm_chan *redcoll__shm_chan_of(redcoll_shm_team *team, int src, int dst, int make) {
    redcoll__shm_achan *at = &team->chans[(size_t)dst * (size_t)team->size + (size_t)src];
    redcoll__shm_chan *ch = redcoll__shm_load(at);
    void *mem;
    if (ch || !make) return ch;
    mem = malloc(sizeof *ch + 63);
    if (!mem) return NULL;
    ch = (redcoll__shm_chan *)redcoll__shm_align(mem);
    memset(ch, 0, sizeof *ch);
    ch->mem = mem;
    redcoll__shm_store(at, ch); /* only src makes it: no race */
    return ch;
}

static void redcoll__shm_end_init(redcoll__shm_end *e, int is_send, int peer, const void *sbuf,
                                  void *rbuf, const redcoll_consumer *into, size_t bytes, int tag) {
    memset(e, 0, sizeof *e);
    e->is_send = is_send; e->peer = peer; e->tag = tag;
    e->sbuf = sbuf; e->rbuf = rbuf; e->into = into; e->bytes = bytes;
    e->res = REDCOLL_OK;
    redcoll__shm_poke(&e->state, REDCOLL__SHM_WAIT);
}

static void redcoll__shm_finish(redcoll__shm_end *e, redcoll_result res) {
    e->res = res;
    redcoll__shm_store(&e->state, REDCOLL__SHM_END_DONE);
}

/* The same for a receive: only its own rank looks at it, so no fence (which
   would wait for the stores to the sender's slot line to drain). */
static void redcoll__shm_finish_own(redcoll__shm_end *e, redcoll_result res) {
    e->res = res;
    redcoll__shm_poke(&e->state, REDCOLL__SHM_END_DONE);
}

/* Slot i of ch if it is drained (collecting the rendezvous send that sat
   in it), else NULL. The receiver wrote the line last: one read for
   ownership fetches it for the sender's stores, where a load would fetch it
   twice. */
static redcoll__shm_slot *redcoll__shm_vacant(redcoll__shm_chan *ch, int i) {
    unsigned s = redcoll__shm_own(&ch->slot[i].state);
    if (!REDCOLL__SHM_DRAINED(s)) return NULL;
    if (ch->occupant[i]) { /* an earlier isend whose receiver is done */
        redcoll__shm_finish(ch->occupant[i], REDCOLL__SHM_ST(s) == REDCOLL__SHM_DONE
                                                 ? REDCOLL_OK : REDCOLL_ERR_TRANSPORT);
        ch->occupant[i] = NULL;
    }
    return &ch->slot[i];
}

/* Posts a send: into a drained slot when nothing is queued (FIFO: a slot's
   send is then older than every queued one), else into the overflow queue.
   An inline send in a slot is complete at once (EAGER: its bytes are in the
   slot); the others wait for their receiver's DONE. The slot posted to
   longest ago is tried first. */
static void redcoll__shm_post_send(redcoll__shm_rank *r, redcoll__shm_end *e) {
    redcoll_shm_team *team = r->team;
    redcoll__shm_rank *d = &team->ranks[e->peer];
    redcoll__shm_chan *ch;
    redcoll__shm_slot *sl = NULL;
    int i;
    if (redcoll__shm_aborted(team)) { redcoll__shm_finish(e, REDCOLL_ERR_ABORTED); return; }
    ch = redcoll__shm_chan_of(team, r->t.rank, e->peer, 1);
    if (!ch) { redcoll__shm_finish(e, REDCOLL_ERR_OUT_OF_MEMORY); return; }
    e->ch = ch;
    i = (int)(ch->posts & 1u); /* posts alternate while both slots drain in time */
    if (redcoll__shm_load(&ch->nover) == 0 && !(sl = redcoll__shm_vacant(ch, i)))
        sl = redcoll__shm_vacant(ch, i ^= 1);
    if (sl) {
        int eager = e->bytes <= REDCOLL__SHM_INLINE;
        ch->posts++;
        redcoll__shm_poke(&sl->tag, e->tag);
        sl->sbuf = e->sbuf;
        sl->bytes = e->bytes;
        if (eager && e->bytes) memcpy(sl->data, e->sbuf, e->bytes);
        if (eager) redcoll__shm_finish(e, REDCOLL_OK);
        else { ch->occupant[i] = e; e->in_slot = i + 1; }
        redcoll__shm_store(&sl->state, ch->posts << 3 | (eager ? REDCOLL__SHM_EAGER : REDCOLL__SHM_POSTED));
    } else {
        pthread_mutex_lock(&d->mu);
        redcoll__shm_push(&ch->over, e);
        redcoll__shm_add(&ch->nover, 1);
        pthread_mutex_unlock(&d->mu);
    }
    redcoll__shm_kick(d);
}

/* A slot send is done when its receiver has stored DONE (or MISMATCH);
   only the sender looks, and then frees the slot for its next send. */
static int redcoll__shm_done(redcoll__shm_end *e) {
    unsigned s;
    if (redcoll__shm_load(&e->state) == REDCOLL__SHM_END_DONE) return 1;
    if (!e->is_send || !e->in_slot) return 0;
    s = redcoll__shm_load(&e->ch->slot[e->in_slot - 1].state);
    if (REDCOLL__SHM_ST(s) != REDCOLL__SHM_DONE && REDCOLL__SHM_ST(s) != REDCOLL__SHM_MISMATCH) return 0;
    e->ch->occupant[e->in_slot - 1] = NULL;
    redcoll__shm_finish(e, REDCOLL__SHM_ST(s) == REDCOLL__SHM_DONE ? REDCOLL_OK : REDCOLL_ERR_TRANSPORT);
    return 1;
}

static int redcoll__shm_all_done(redcoll__shm_end **ends, int n) {
    int i;
    for (i = 0; i < n; ++i)
        if (!redcoll__shm_done(ends[i])) return 0;
    return 1;
}

/* The single pass: copies the payload into the receive's buffer, or hands it
   to its consumer in one piece (a whole number of units: the sizes match). */
static redcoll_result redcoll__shm_deliver(const redcoll__shm_end *e, const void *src, size_t bytes) {
    if (bytes != e->bytes) return REDCOLL_ERR_TRANSPORT;
    if (bytes == 0) return REDCOLL_OK;
    if (e->into) e->into->fn(e->into->arg, src, 0, bytes);
    else memcpy(e->rbuf, src, bytes);
    return REDCOLL_OK;
}

/* State a was posted before state b (post counts are 29 bits and wrap). */
#define REDCOLL__SHM_OLDER(a, b) ((((a) >> 3) - ((b) >> 3)) & 0x10000000u)

/* Claims the older of ch's slots that holds a posted send with `tag`
   (FIFO) and returns it with its state in *s; NULL when there is none. An
   EAGER send is taken without a compare-and-swap (its sender never
   withdraws it). The two states are read as one snapshot: slot 0 again
   after slot 1, else two posts landing between the reads (slot 0, then
   slot 1) would show the newer one alone. */
static redcoll__shm_slot *redcoll__shm_claim(redcoll__shm_chan *ch, unsigned *s, int tag, int *other) {
    redcoll__shm_slot *sl = NULL;
    unsigned t[2], oldest = 0;
    int i, at = -1;
    do {
        t[0] = redcoll__shm_load(&ch->slot[0].state);
        t[1] = redcoll__shm_load(&ch->slot[1].state);
    } while (redcoll__shm_load(&ch->slot[0].state) != t[0]);
    for (i = 0; i < 2; ++i) {
        if (REDCOLL__SHM_ST(t[i]) != REDCOLL__SHM_POSTED && REDCOLL__SHM_ST(t[i]) != REDCOLL__SHM_EAGER) continue;
        if (at < 0 || REDCOLL__SHM_OLDER(t[i], oldest)) { at = i; oldest = t[i]; }
        if (redcoll__shm_peek(&ch->slot[i].tag) == tag && (!sl || REDCOLL__SHM_OLDER(t[i], *s))) {
            sl = &ch->slot[i];
            *s = t[i];
        }
    }
    /* the stream rule (REDCOLL_TAG_MAX): the sender's oldest send belongs to another call */
    if (at >= 0 && REDCOLL_TAG_OTHER_CALL(tag, redcoll__shm_peek(&ch->slot[at].tag))) {
        *other = redcoll__shm_peek(&ch->slot[at].tag);
        return NULL;
    }
    if (!sl || REDCOLL__SHM_ST(*s) == REDCOLL__SHM_EAGER) return sl;
    return redcoll__shm_cas(&sl->state, s, (*s & ~7u) | REDCOLL__SHM_CLAIMED) ? sl : NULL;
}

/* Matches receive e of rank r with the oldest send from e->peer with its
   tag, copies (or reduces) and completes both ends. Returns 1 on a match. */
static int redcoll__shm_match(redcoll__shm_rank *r, redcoll__shm_end *e) {
    redcoll_shm_team *team = r->team;
    redcoll__shm_chan *ch = redcoll__shm_chan_of(team, e->peer, r->t.rank, 0);
    redcoll__shm_end *snd = NULL;
    redcoll__shm_slot *slot;
    redcoll_result res;
    unsigned s = 0;
    int other = -1;
    if (!ch) return 0;
    slot = redcoll__shm_claim(ch, &s, e->tag, &other);
    if (!slot && other < 0) {
        if (redcoll__shm_load(&ch->nover) == 0) return 0;
        pthread_mutex_lock(&r->mu);
        /* seen a queued send: look at the slots again, whose sends are older */
        slot = redcoll__shm_claim(ch, &s, e->tag, &other);
        if (!slot && other < 0 && ch->over.head && REDCOLL_TAG_OTHER_CALL(e->tag, ch->over.head->tag))
            other = ch->over.head->tag;
        if (!slot && other < 0 && (snd = redcoll__shm_take(&ch->over, NULL, e->tag)) != NULL) {
            redcoll__shm_add(&ch->nover, -1);
            redcoll__shm_store(&snd->state, REDCOLL__SHM_TAKEN);
        }
        pthread_mutex_unlock(&r->mu);
    }
    if (other >= 0) { /* the peer makes another call: this receive fails, the send stays */
        char a[32], b[32], pair[256];
        snprintf(a, sizeof a, "rank %d", e->peer);
        snprintf(b, sizeof b, "rank %d", r->t.rank);
        redcoll__shm_tell(team, "%s: %s\n", redcoll_result_string(REDCOLL_ERR_MISMATCH),
                          redcoll_tag_disagree(a, other, b, e->tag, pair, sizeof pair));
        redcoll__shm_finish_own(e, REDCOLL_ERR_MISMATCH);
        return 1;
    }
    if (!slot && !snd) return 0;
    if (slot && REDCOLL__SHM_ST(s) == REDCOLL__SHM_EAGER) {
        /* nobody waits for this DONE: no fence, no kick (a release store
           that orders the reads of the bytes before the sender's next post) */
        res = redcoll__shm_deliver(e, slot->data, slot->bytes);
        redcoll__shm_release(&slot->state, (s & ~7u) | (res == REDCOLL_OK ? REDCOLL__SHM_DONE
                                                                        : REDCOLL__SHM_MISMATCH));
        redcoll__shm_finish_own(e, res);
        return 1;
    }
    if (slot) {
        res = redcoll__shm_deliver(e, slot->sbuf, slot->bytes);
        redcoll__shm_store(&slot->state, (s & ~7u) | (res == REDCOLL_OK ? REDCOLL__SHM_DONE
                                                                      : REDCOLL__SHM_MISMATCH));
    } else {
        res = redcoll__shm_deliver(e, snd->sbuf, snd->bytes);
        redcoll__shm_finish(snd, res);
    }
    redcoll__shm_kick(&team->ranks[e->peer]);
    redcoll__shm_finish_own(e, res);
    return 1;
}

/* Serves r's pending receives in posting order (any call's: a progress
   guarantee for irecvs). A receive is skipped while an older pending one
   with the same source and tag is unmatched: FIFO per (source, tag). */
static void redcoll__shm_progress(redcoll__shm_rank *r) {
    redcoll__shm_end *e = r->pending.head, *prev = NULL;
    while (e) {
        redcoll__shm_end *next = e->next, *f;
        for (f = r->pending.head; f != e && (f->peer != e->peer || f->tag != e->tag); f = f->next) {}
        if (f == e && redcoll__shm_match(r, e)) redcoll__shm_unlink(&r->pending, prev, e);
        else prev = e;
        e = next;
    }
}

/* Withdraws every end of this call nobody has taken yet, failing it with
   `why`. Taken ones complete normally (their copy is under way). */
static void redcoll__shm_withdraw(redcoll__shm_rank *r, redcoll__shm_end **ends, int n,
                                  redcoll_result why) {
    int i;
    for (i = 0; i < n; ++i) {
        redcoll__shm_end *e = ends[i];
        if (redcoll__shm_done(e)) continue;
        if (!e->is_send) { /* still pending: only this thread matches it */
            redcoll__shm_take(&r->pending, e, 0);
            redcoll__shm_finish(e, why);
        } else if (e->in_slot) {
            redcoll__shm_slot *sl = &e->ch->slot[e->in_slot - 1];
            unsigned s = redcoll__shm_load(&sl->state);
            if (REDCOLL__SHM_ST(s) == REDCOLL__SHM_POSTED &&
                redcoll__shm_cas(&sl->state, &s, (s & ~7u) | REDCOLL__SHM_FREE)) {
                e->ch->occupant[e->in_slot - 1] = NULL;
                redcoll__shm_finish(e, why);
            }
        } else {
            redcoll__shm_rank *d = &r->team->ranks[e->peer];
            int gone = 0;
            pthread_mutex_lock(&d->mu);
            if (redcoll__shm_load(&e->state) == REDCOLL__SHM_WAIT) {
                gone = redcoll__shm_take(&e->ch->over, e, 0) != NULL;
                if (gone) redcoll__shm_add(&e->ch->nover, -1);
            }
            pthread_mutex_unlock(&d->mu);
            if (gone) redcoll__shm_finish(e, why);
        }
    }
}

/* Absolute deadline `seconds` from now on the condition variable's clock.
   Returns 0 when it lies beyond what a time_t holds (1e19, 1e300, infinity):
   such a timeout means none. */
static int redcoll__shm_deadline(double seconds, struct timespec *ts) {
    double room, whole;
    long ns;
    timespec_get(ts, TIME_UTC);
    room = (sizeof(time_t) >= 8 ? 9.0e18 : 2147483647.0) - (double)ts->tv_sec - 2.0;
    if (!(seconds < room)) return 0;
    whole = (double)(long long)seconds;
    ns = ts->tv_nsec + (long)((seconds - whole) * 1e9);
    ts->tv_sec += (time_t)whole + ns / 1000000000L;
    ts->tv_nsec = ns % 1000000000L;
    return 1;
}

static void redcoll__shm_detect(redcoll_shm_team *team);

/* Sleeps until a peer kicks r (or the deadline passes: returns 1). Announces
   the sleep first and then looks once more, so no kick is lost. A rank that
   goes to sleep with no kick pending joins the idle count; the one whose
   sleep makes it p (every rank asleep with nothing on the way, or
   finished) runs the deadlock detector before it sleeps: nobody else can
   run then, and it costs nothing while any rank works. */
static int redcoll__shm_sleep(redcoll__shm_rank *r, redcoll__shm_end **ends, int n,
                              int wake_on_abort, const struct timespec *deadline) {
    redcoll_shm_team *team = r->team;
    int timed_out = 0, last = 0;
    pthread_mutex_lock(&r->mu);
    r->signal = 0;
    pthread_mutex_unlock(&r->mu);
    redcoll__shm_store(&r->sleeping, 1);
    redcoll__shm_progress(r);
    if (!redcoll__shm_all_done(ends, n) && !(wake_on_abort && redcoll__shm_aborted(team))) {
        pthread_mutex_lock(&r->mu);
        if (!r->signal) {
            r->counted = 1;
            last = redcoll__shm_add_fetch(&team->idle, 1) == team->size;
        }
        if (last) { /* the detector looks at everyone's state: without r's lock */
            pthread_mutex_unlock(&r->mu);
            redcoll__shm_detect(team);
            pthread_mutex_lock(&r->mu);
        }
        while (!r->signal && !timed_out) {
            if (deadline) timed_out = pthread_cond_timedwait(&r->cv, &r->mu, deadline) == ETIMEDOUT;
            else pthread_cond_wait(&r->cv, &r->mu);
        }
        if (r->counted) { r->counted = 0; redcoll__shm_add(&team->idle, -1); } /* the deadline */
        pthread_mutex_unlock(&r->mu);
    }
    redcoll__shm_store(&r->sleeping, 0);
    return timed_out;
}

/* Waits until every end is DONE, serving r's pending receives meanwhile.
   Polls team->spin times (pause, then sched_yield), then sleeps until kicked.
   Abort and timeout withdraw what nobody has taken and wait for the rest
   (copies under way). Returns the first end's error. */
static redcoll_result redcoll__shm_wait(redcoll__shm_rank *r, redcoll__shm_end **ends, int n) {
    redcoll_shm_team *team = r->team;
    double timeout = team->cfg.timeout_seconds;
    struct timespec deadline;
    redcoll_result why = REDCOLL_OK, res = REDCOLL_OK;
    int i, polls = 0, have_deadline = 0; /* 0: not yet computed, 1: set, -1: none */

    for (;;) {
        redcoll__shm_progress(r);
        if (redcoll__shm_all_done(ends, n)) break;
        if (why == REDCOLL_OK && redcoll__shm_aborted(team)) { /* the detector's verdict, else a peer's failure */
            why = (redcoll_result)redcoll__shm_load(&team->release);
            if (why == REDCOLL_OK) why = REDCOLL_ERR_ABORTED;
        }
        if (why != REDCOLL_OK) {
            redcoll__shm_withdraw(r, ends, n, why);
            if (redcoll__shm_all_done(ends, n)) break;
        }
        if (polls < team->spin) {
            if (polls++ < REDCOLL__SHM_PAUSES) redcoll__shm_pause(); else sched_yield();
            continue;
        }
        if (timeout > 0 && have_deadline == 0)
            have_deadline = redcoll__shm_deadline(timeout, &deadline) ? 1 : -1;
        if (redcoll__shm_sleep(r, ends, n, why == REDCOLL_OK,
                               why == REDCOLL_OK && have_deadline == 1 ? &deadline : NULL) &&
            why == REDCOLL_OK)
            why = REDCOLL_ERR_TIMEOUT;
        polls = 0;
    }
    for (i = 0; i < n; ++i)
        if (ends[i]->res != REDCOLL_OK && res == REDCOLL_OK) res = ends[i]->res;
    return res;
}

static int redcoll__shm_peer_ok(const redcoll__shm_rank *r, int peer) {
    return peer >= 0 && peer < r->team->size;
}

static int redcoll__shm_consumer_ok(const redcoll_consumer *into, size_t bytes) {
    return into && into->fn && into->unit && bytes % into->unit == 0;
}

/* One blocking transfer: a send of sbytes to dst (dst >= 0) and/or a
   receive of rbytes from src (src >= 0) into rbuf or the consumer. */
static redcoll_result redcoll__shm_xfer(redcoll__shm_rank *r, int dst, const void *sbuf, size_t sbytes,
                                        int src, void *rbuf, const redcoll_consumer *into,
                                        size_t rbytes, int tag) {
    redcoll__shm_end s, v, *list[2];
    int n = 0;
    if ((dst >= 0 && !redcoll__shm_peer_ok(r, dst)) || (src >= 0 && !redcoll__shm_peer_ok(r, src)))
        return REDCOLL_ERR_TRANSPORT;
    if (dst >= 0) {
        redcoll__shm_end_init(&s, 1, dst, sbuf, NULL, NULL, sbytes, tag);
        redcoll__shm_post_send(r, &s);
        list[n++] = &s;
    }
    if (src >= 0) {
        redcoll__shm_end_init(&v, 0, src, NULL, rbuf, into, rbytes, tag);
        redcoll__shm_push(&r->pending, &v);
        list[n++] = &v;
    }
    return redcoll__shm_wait(r, list, n);
}

static redcoll_result redcoll__shm_send(void *user, int dst, const void *buf, size_t bytes,
                                        int tag) {
    if (dst < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__shm_xfer((redcoll__shm_rank *)user, dst, buf, bytes, -1, NULL, NULL, 0, tag);
}

static redcoll_result redcoll__shm_recv(void *user, int src, void *buf, size_t bytes, int tag) {
    if (src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__shm_xfer((redcoll__shm_rank *)user, -1, NULL, 0, src, buf, NULL, bytes, tag);
}

static redcoll_result redcoll__shm_sendrecv(void *user, int dst, const void *sbuf, size_t sbytes,
                                            int src, void *rbuf, size_t rbytes, int tag) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__shm_xfer((redcoll__shm_rank *)user, dst, sbuf, sbytes, src, rbuf, NULL, rbytes, tag);
}

static redcoll_result redcoll__shm_recv_reduce(void *user, int src, size_t bytes, int tag,
                                               const redcoll_consumer *into) {
    if (src < 0) return REDCOLL_ERR_TRANSPORT;
    if (!redcoll__shm_consumer_ok(into, bytes)) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__shm_xfer((redcoll__shm_rank *)user, -1, NULL, 0, src, NULL, into, bytes, tag);
}

static redcoll_result redcoll__shm_sendrecv_reduce(void *user, int dst, const void *sbuf,
                                                   size_t sbytes, int src, size_t rbytes, int tag,
                                                   const redcoll_consumer *into) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    if (!redcoll__shm_consumer_ok(into, rbytes)) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__shm_xfer((redcoll__shm_rank *)user, dst, sbuf, sbytes, src, NULL, into, rbytes, tag);
}

static redcoll_result redcoll__shm_ipost(redcoll__shm_rank *r, int is_send, int peer,
                                         const void *sbuf, void *rbuf,
                                         const redcoll_consumer *into, size_t bytes, int tag,
                                         redcoll_request *req) {
    redcoll__shm_end *e;
    req->ptr = NULL;
    if (!redcoll__shm_peer_ok(r, peer)) return REDCOLL_ERR_TRANSPORT;
    if ((e = r->spare) != NULL) r->spare = e->next;
    else if (!(e = (redcoll__shm_end *)malloc(sizeof *e))) return REDCOLL_ERR_OUT_OF_MEMORY;
    redcoll__shm_end_init(e, is_send, peer, sbuf, rbuf, into, bytes, tag);
    if (is_send) redcoll__shm_post_send(r, e); else redcoll__shm_push(&r->pending, e);
    req->ptr = e;
    return REDCOLL_OK;
}

static redcoll_result redcoll__shm_isend(void *user, int dst, const void *buf, size_t bytes,
                                         int tag, redcoll_request *req) {
    return redcoll__shm_ipost((redcoll__shm_rank *)user, 1, dst, buf, NULL, NULL, bytes, tag, req);
}

static redcoll_result redcoll__shm_irecv(void *user, int src, void *buf, size_t bytes, int tag,
                                         redcoll_request *req) {
    return redcoll__shm_ipost((redcoll__shm_rank *)user, 0, src, NULL, buf, NULL, bytes, tag, req);
}

static redcoll_result redcoll__shm_irecv_reduce(void *user, int src, size_t bytes, int tag,
                                                const redcoll_consumer *into, redcoll_request *req) {
    req->ptr = NULL;
    if (!redcoll__shm_consumer_ok(into, bytes)) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__shm_ipost((redcoll__shm_rank *)user, 0, src, NULL, NULL, into, bytes, tag, req);
}

/* Gives the records of completed requests back to the rank's free list. */
static void redcoll__shm_recycle(redcoll__shm_rank *r, redcoll__shm_end **ends, int n) {
    int i;
    for (i = 0; i < n; ++i) { ends[i]->next = r->spare; r->spare = ends[i]; }
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
    redcoll__shm_recycle(r, list, n);
    for (i = 0; i < count; ++i) reqs[i].ptr = NULL;
    if (list != few) free(list);
    return res;
}

/* An incomplete end of a test: withdrawn with `why` after an abort, or with
   TIMEOUT once the team's timeout has passed since its first test. */
static void redcoll__shm_test_late(redcoll__shm_rank *r, redcoll__shm_end *e) {
    redcoll_shm_team *team = r->team;
    redcoll_result why = redcoll__shm_aborted(team) ? REDCOLL_ERR_ABORTED : REDCOLL_OK;
    if (why == REDCOLL_OK && team->cfg.timeout_seconds > 0) {
        struct timespec now;
        if (!e->timed) e->timed = redcoll__shm_deadline(team->cfg.timeout_seconds, &e->deadline) ? 1 : -1;
        timespec_get(&now, TIME_UTC);
        if (e->timed == 1 && (now.tv_sec > e->deadline.tv_sec ||
                              (now.tv_sec == e->deadline.tv_sec && now.tv_nsec >= e->deadline.tv_nsec)))
            why = REDCOLL_ERR_TIMEOUT;
    }
    if (why != REDCOLL_OK) redcoll__shm_withdraw(r, &e, 1, why);
}

/* MPI_Testall over the requests: see the transport comment. */
static redcoll_result redcoll__shm_test(void *user, int count, redcoll_request *reqs, int *done) {
    redcoll__shm_rank *r = (redcoll__shm_rank *)user;
    redcoll_result res = REDCOLL_OK;
    int i;
    *done = 0;
    redcoll__shm_progress(r);
    for (i = 0; i < count; ++i) {
        redcoll__shm_end *e = (redcoll__shm_end *)reqs[i].ptr;
        if (!e || redcoll__shm_done(e)) continue;
        redcoll__shm_test_late(r, e);
        if (!redcoll__shm_done(e)) {
            if (r->team->spin == 0) sched_yield(); /* more threads than CPUs: let a peer run */
            return REDCOLL_OK;
        }
    }
    for (i = 0; i < count; ++i) {
        redcoll__shm_end *e = (redcoll__shm_end *)reqs[i].ptr;
        if (!e) continue;
        if (e->res != REDCOLL_OK && res == REDCOLL_OK) res = e->res;
        redcoll__shm_recycle(r, &e, 1);
        reqs[i].ptr = NULL;
    }
    *done = 1;
    return res;
}

static void redcoll__shm_abort_team(redcoll_shm_team *team, redcoll_result why) {
    int i;
    pthread_mutex_lock(&team->abort_mu);
    if (team->abort_why == REDCOLL_OK)
        team->abort_why = why != REDCOLL_OK ? why : REDCOLL_ERR_ABORTED;
    pthread_mutex_unlock(&team->abort_mu);
    redcoll__shm_store(&team->aborted, 1);
    for (i = 0; i < team->size; ++i) redcoll__shm_kick(&team->ranks[i]);
}

static void redcoll__shm_abort(void *user, redcoll_result why) {
    redcoll__shm_abort_team(((redcoll__shm_rank *)user)->team, why);
}

/* ---- the deadlock detector ---------------------------------------------------
   Runs once, on the thread whose sleep (or end, redcoll_shm_team_done) made
   every rank of the team idle: asleep in a wait with no wake-up on the way,
   or finished. Nobody else can run then, so it reads every rank's pending
   receives and every channel as they are, and says what each rank waits for.
   Its verdict: MISMATCH when a rank waits for a receive from P while P's
   oldest send to it nobody took belongs to another call of the library's
   (the stream rule at REDCOLL_TAG_MAX), or when it waits for a rank that
   has finished; DEADLOCK otherwise; and, when every rank has finished,
   MISMATCH if a message was never received (an eager send whose receive
   nobody made). It stops the team with that result, which every blocked
   call returns, keeps the account (redcoll_shm_team_report) and hands it
   to cfg.report. */

/* A growable text. */
typedef struct redcoll__shm_text { char *s; size_t len, cap; } redcoll__shm_text;

static void redcoll__shm_say(redcoll__shm_text *t, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (!t->s || t->len + (size_t)n + 1 > t->cap) {
        size_t cap = 2 * t->cap + (size_t)n + 256;
        char *more = (char *)realloc(t->s, cap);
        if (!more) return;
        t->s = more; t->cap = cap;
        va_start(ap, fmt);
        vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
    }
    t->len += (size_t)n;
}

/* The oldest send from rank src to rank dst that nobody has taken: its tag,
   size, and whether it is eager (its sender is done with it); 0 if none. */
static int redcoll__shm_oldest(redcoll_shm_team *team, int src, int dst, int *tag, size_t *bytes,
                               int *eager) {
    redcoll__shm_chan *ch = redcoll__shm_chan_of(team, src, dst, 0);
    redcoll__shm_end *q;
    unsigned st = 0;
    int k, at = -1;
    if (!ch) return 0;
    for (k = 0; k < 2; ++k) {
        unsigned s = redcoll__shm_load(&ch->slot[k].state);
        if ((REDCOLL__SHM_ST(s) == REDCOLL__SHM_POSTED || REDCOLL__SHM_ST(s) == REDCOLL__SHM_EAGER) &&
            (at < 0 || REDCOLL__SHM_OLDER(s, st))) { at = k; st = s; }
    }
    if (at >= 0) {
        *tag = redcoll__shm_peek(&ch->slot[at].tag);
        *bytes = ch->slot[at].bytes;
        *eager = REDCOLL__SHM_ST(st) == REDCOLL__SHM_EAGER;
        return 1;
    }
    pthread_mutex_lock(&team->ranks[dst].mu);
    q = ch->over.head;
    if (q) { *tag = q->tag; *bytes = q->bytes; *eager = 0; }
    pthread_mutex_unlock(&team->ranks[dst].mu);
    return q != NULL;
}

/* One line per send of rank i that nobody has taken (slots, then queues). */
static void redcoll__shm_say_sends(redcoll_shm_team *team, int i, redcoll__shm_text *t, int *unreceived) {
    char name[64];
    int d, k;
    for (d = 0; d < team->size; ++d) {
        redcoll__shm_chan *ch = redcoll__shm_chan_of(team, i, d, 0);
        redcoll__shm_end *q;
        if (!ch) continue;
        for (k = 0; k < 2; ++k) {
            unsigned s = redcoll__shm_load(&ch->slot[k].state);
            redcoll_tag_name(redcoll__shm_peek(&ch->slot[k].tag), name, sizeof name);
            if (REDCOLL__SHM_ST(s) == REDCOLL__SHM_POSTED)
                redcoll__shm_say(t, "  rank %d waits for rank %d to take its %zu bytes (%s)\n", i, d,
                                 ch->slot[k].bytes, name);
            if (REDCOLL__SHM_ST(s) == REDCOLL__SHM_EAGER) {
                redcoll__shm_say(t, "  rank %d's message of %zu bytes to rank %d (%s) is not received\n", i,
                                 ch->slot[k].bytes, d, name);
                *unreceived = 1;
            }
        }
        pthread_mutex_lock(&team->ranks[d].mu);
        for (q = ch->over.head; q; q = q->next)
            redcoll__shm_say(t, "  rank %d waits for rank %d to take its %zu bytes (%s)\n", i, d, q->bytes,
                             redcoll_tag_name(q->tag, name, sizeof name));
        pthread_mutex_unlock(&team->ranks[d].mu);
    }
}

static void redcoll__shm_detect(redcoll_shm_team *team) {
    redcoll__shm_text lines = { NULL, 0, 0 }, head = { NULL, 0, 0 };
    redcoll_result why = REDCOLL_OK;
    char name[64], a[32], b[32], pair[256];
    int i, blocked = 0, unreceived = 0;
    if (team->cfg.timeout_seconds > 0 || redcoll__shm_aborted(team)) return;
    for (i = 0; i < team->size; ++i) {
        redcoll__shm_rank *r = &team->ranks[i];
        redcoll__shm_end *e;
        if (redcoll__shm_load(&r->finished)) redcoll__shm_say(&lines, "  rank %d has finished\n", i);
        for (e = r->pending.head; e; e = e->next) {
            int tag = 0, eager = 0;
            size_t bytes = 0;
            blocked = 1;
            redcoll__shm_say(&lines, "  rank %d waits to %s %zu bytes from rank %d (%s)\n", i,
                             e->into ? "receive and reduce" : "receive", e->bytes, e->peer,
                             redcoll_tag_name(e->tag, name, sizeof name));
            if (why != REDCOLL_OK) continue;
            snprintf(a, sizeof a, "rank %d", e->peer);
            snprintf(b, sizeof b, "rank %d", i);
            if (redcoll__shm_oldest(team, e->peer, i, &tag, &bytes, &eager) &&
                REDCOLL_TAG_OTHER_CALL(e->tag, tag)) {
                why = REDCOLL_ERR_MISMATCH;
                redcoll__shm_say(&head, "%s: %s\n", redcoll_result_string(why),
                                 redcoll_tag_disagree(a, tag, b, e->tag, pair, sizeof pair));
            } else if (redcoll__shm_load(&team->ranks[e->peer].finished)) {
                why = REDCOLL_ERR_MISMATCH;
                redcoll__shm_say(&head, "%s: %s has finished while %s waits for it in %s\n",
                                 redcoll_result_string(why), a, b, name);
            }
        }
        redcoll__shm_say_sends(team, i, &lines, &unreceived);
        if (!redcoll__shm_load(&r->finished)) blocked = 1;
    }
    if (why == REDCOLL_OK && blocked) {
        why = REDCOLL_ERR_DEADLOCK;
        redcoll__shm_say(&head, "deadlock: every rank of the team is blocked or finished\n");
    } else if (why == REDCOLL_OK && unreceived) {
        why = REDCOLL_ERR_MISMATCH;
        redcoll__shm_say(&head, "%s: every rank has finished, and a message was never received\n",
                         redcoll_result_string(why));
    }
    if (why != REDCOLL_OK) {
        redcoll__shm_tell(team, "%s%s", head.s ? head.s : "", lines.s ? lines.s : "");
        redcoll__shm_store(&team->release, (int)why);
        redcoll__shm_abort_team(team, why);
    }
    free(lines.s);
    free(head.s);
}

REDCOLL_API void redcoll_shm_team_done(redcoll_shm_team *team, int rank) {
    redcoll__shm_rank *r;
    if (!team || rank < 0 || rank >= team->size) return;
    r = &team->ranks[rank];
    if (redcoll__shm_load(&r->finished)) return;
    redcoll__shm_store(&r->finished, 1);
    if (redcoll__shm_add_fetch(&team->idle, 1) == team->size) redcoll__shm_detect(team);
}

REDCOLL_API const char *redcoll_shm_team_report(const redcoll_shm_team *team) {
    const char *text;
    if (!team) return NULL;
    pthread_mutex_lock((pthread_mutex_t *)&team->abort_mu);
    text = team->report;
    pthread_mutex_unlock((pthread_mutex_t *)&team->abort_mu);
    return text;
}

static int redcoll__shm_node_of(void *user, int rank) {
    (void)user; (void)rank;
    return 0; /* one process: one node */
}

/* The rank's persistent scratch: grows to the largest request (64-byte
   aligned, at least 64 bytes), kept until the team is destroyed. */
static void *redcoll__shm_scratch(void *user, size_t bytes) {
    return redcoll_scratch_block_get(&((redcoll__shm_rank *)user)->scratch, bytes);
}

REDCOLL_API redcoll_result redcoll_shm_team_create(const redcoll_shm_config *cfg, int size,
                                                   redcoll_shm_team **out) {
    redcoll_shm_team *team;
    long cpus;
    int i;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    *out = NULL;
    /* NaN and negative timeouts are refused; huge and infinite ones mean none */
    if (size < 1 || (cfg && !(cfg->timeout_seconds >= 0))) return REDCOLL_ERR_INVALID_ARG;
    if ((size_t)size > (size_t)-1 / sizeof(redcoll__shm_achan) / (size_t)size)
        return REDCOLL_ERR_OUT_OF_MEMORY;
    team = (redcoll_shm_team *)calloc(1, sizeof *team);
    if (!team) return REDCOLL_ERR_OUT_OF_MEMORY;
    team->ranks = (redcoll__shm_rank *)calloc((size_t)size, sizeof *team->ranks);
    team->chans = (redcoll__shm_achan *)calloc((size_t)size * (size_t)size, sizeof *team->chans);
    if (!team->ranks || !team->chans) {
        free(team->ranks); free(team->chans); free(team);
        return REDCOLL_ERR_OUT_OF_MEMORY;
    }
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
        r->t.test = redcoll__shm_test;
        r->t.irecv_reduce = redcoll__shm_irecv_reduce;
        r->t.nb = &r->nb;
        r->t.node_of = redcoll__shm_node_of;
        r->t.recv_reduce = redcoll__shm_recv_reduce;
        r->t.sendrecv_reduce = redcoll__shm_sendrecv_reduce;
        r->t.flags = REDCOLL_TRANSPORT_PEER_REDUCE; /* AUTO's model drops their n beta */
        r->t.scratch = redcoll__shm_scratch;
    }
    *out = team;
    return REDCOLL_OK;
}

REDCOLL_API void redcoll_shm_team_destroy(redcoll_shm_team *team) {
    size_t i, nch;
    if (!team) return;
    nch = (size_t)team->size * (size_t)team->size;
    for (i = 0; i < nch; ++i) {
        redcoll__shm_chan *ch = redcoll__shm_load(&team->chans[i]);
        if (ch) free(ch->mem);
    }
    for (i = 0; i < (size_t)team->size; ++i) {
        while (team->ranks[i].spare) {
            redcoll__shm_end *e = team->ranks[i].spare;
            team->ranks[i].spare = e->next;
            free(e);
        }
        pthread_cond_destroy(&team->ranks[i].cv);
        pthread_mutex_destroy(&team->ranks[i].mu);
        redcoll_scratch_block_free(&team->ranks[i].scratch);
    }
    pthread_mutex_destroy(&team->abort_mu);
    free(team->report);
    free(team->chans);
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
    redcoll_shm_team_done(((redcoll__shm_rank *)j->t->user)->team, j->t->rank);
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
    if (res == REDCOLL_OK) /* the detector's verdict at the end: a message nobody received */
        res = (redcoll_result)redcoll__shm_load(&team->release);
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
