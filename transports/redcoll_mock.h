/* redcoll_mock.h - the redcoll simulator transport - MIT licence (see redcoll.h)

   Runs all p ranks of a collective inside one process and reports what the
   collective cost each rank:

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
   - Deadlock (every live rank blocked, or polling with test in vain since
     the last message was posted) fails each blocked call and unmatched
     transfer with REDCOLL_ERR_DEADLOCK and writes who waits for whom into
     report.log; with REDCOLL_ERR_MISMATCH when the ranks disagree about the
     call: a rank waits to receive from P while P's oldest unmatched send to
     it has another tag of the library's (the stream rule at
     REDCOLL_TAG_MAX), or waits for a rank that has finished.
   - abort (called by the library when a call fails) releases every blocked
     and later call with REDCOLL_ERR_ABORTED.
   - Fault injection: call number fail_call (1-based, counting send, recv,
     sendrecv, isend, irecv, irecv_reduce, recv_reduce, sendrecv_reduce) of
     rank fail_rank returns REDCOLL_ERR_TRANSPORT.
   - Non-blocking collectives: isend, irecv, irecv_reduce, waitall and test
     are provided (and nb). test is a scheduling point: when the requests
     are incomplete the other ranks run before it returns, so a rank polling
     in a loop lets the simulation go on. A transfer completed by test
     advances the rank's clock as a waitall of the same transfers would.
   - no_data: no payload is copied and the library skips its copies and
     reductions, so p = 4096 with megabyte vectors costs no memory.
   - recv_reduce / sendrecv_reduce match ordinary sends and count exactly as
     recv / sendrecv. The consumer is called once per message, on the
     sender's buffer, when the message is matched (while both ranks are in
     their calls), never for an empty message or in no_data mode.
   Results are deterministic: they depend only on each rank's sequence of
   calls, never on the order in which the engine runs the ranks.

   Cost model (Rabenseifner 2004 section 3.1, single-ported): a message starts
   when both ends have posted it and ends after alpha + n beta when both ends
   are sendrecv (bi-directional), after f_alpha alpha + n f_beta beta
   otherwise (one-way). A call ends when all its messages have; a sendrecv
   therefore lasts alpha + n beta for the larger of its two directions. A
   local reduction of n bytes adds n gamma. With peer_reduce, a message the
   receiver reduces on arrival (recv_reduce, sendrecv_reduce) costs its alpha
   part only: the reduction reads it where it lies. Rounds count the longest chain of
   dependent messages ending at the rank (a sendrecv is one round).
   Non-blocking transfers of one waitall are serialised on the rank's port:
   the wait ends no earlier than post time plus the summed durations of its
   sends, or of its receives.

   Engine: every rank is a coroutine on the calling thread, switched only
   when it blocks. Each rank keeps its own modeled clock, and a message is
   timed when its second end is posted from the two post times (a discrete-
   event model whose events are timed by their causes), so the engine may
   run ready ranks in any order: it runs them first come, first served,
   with no priority queue. Unmatched ends are found by a hash of (owner,
   peer, tag, direction), so a rank with thousands of pending transfers
   costs no scan. The coroutines are redcoll.h's ([SECTION:nonblock]): a
   switch is a few instructions on x86-64, ucontext elsewhere or with
   REDCOLL_CORO_UCONTEXT (or REDCOLL_MOCK_UCONTEXT) defined, announced to
   AddressSanitizer and ThreadSanitizer. Rank functions share the thread:
   they may wait for each other only through the transport, never through
   locks or condition variables.

   Stacks: each rank runs on a stack of stack_bytes (default 256 KiB) of
   address space, of which only the pages it touches take memory (a few
   KiB for a collective: p = 65536 fits in well under 1 GiB). Stacks are
   pooled across runs and across threads. The first 8192 stacks of the
   process (all of them under AddressSanitizer) get a guard page below them,
   so an overflow faults there; the kernel's limit on mappings rules out
   more, so on later ones the stack pointer is checked whenever the rank
   blocks or ends, and the program stops with a message when it went past
   the stack. Simulations may run at the same time on different threads;
   each runs on the thread that called it. */
#ifndef REDCOLL_MOCK_H
#define REDCOLL_MOCK_H

#if defined(REDCOLL_MOCK_UCONTEXT) && !defined(REDCOLL_CORO_UCONTEXT)
#define REDCOLL_CORO_UCONTEXT
#endif
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
    size_t             stack_bytes; /* per rank; 0 = 256 KiB (address space: only
                                       touched pages cost memory; at least 16 KiB) */
    int                peer_reduce; /* model a transport that reduces from the
                                       sender's memory (the threads transport): it
                                       advertises REDCOLL_TRANSPORT_PEER_REDUCE and a
                                       message reduced on arrival costs no n beta */
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

/* Runs as each simulated rank (a coroutine on the thread of redcoll_mock_run). */
typedef redcoll_result (*redcoll_mock_rank_fn)(const redcoll_transport *t, void *arg);

/* The default configuration for p ranks: alpha, beta, gamma of redcoll.h's
   defaults and f_alpha = f_beta = 1. */
REDCOLL_API redcoll_mock_config redcoll_mock_defaults(int size);

/* Runs fn on every rank and fills *report (free it with
   redcoll_mock_report_free). Returns REDCOLL_OK when the run itself worked,
   whatever the ranks returned; an error for a bad config or no memory for
   the ranks' stacks. Thread safety: concurrent runs on different threads
   are fine. */
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

#if !REDCOLL__CORO
#error "redcoll_mock.h needs coroutines: x86-64 with GCC 8+ or Clang, or ucontext (define REDCOLL_CORO_UCONTEXT)"
#endif

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* A guard page: inaccessible, or under AddressSanitizer poisoned (its leak
   checker reads all heap memory, so a protected page would crash it; a
   poisoned one makes an overflow an ASan report). 0 if that failed. */
static int redcoll__mguard(void *page, size_t bytes, int on) {
#ifdef REDCOLL__CORO_ASAN
    if (on) __asan_poison_memory_region(page, bytes); else __asan_unpoison_memory_region(page, bytes);
    return 1;
#else
    return mprotect(page, bytes, on ? PROT_NONE : PROT_READ | PROT_WRITE) == 0;
#endif
}

/* ---- stack pool ------------------------------------------------------------------
   Stacks come in slabs from malloc (only touched pages become memory), each
   stack above a page that is made inaccessible while the process has fewer
   than REDCOLL__MGUARDS guarded stacks (every guard splits a mapping, and
   the kernel limits mappings to about 65530; ASan's poisoned guards cost
   no mapping). Free stacks are kept for later runs, up to REDCOLL__MKEEP. */
#ifdef REDCOLL__CORO_ASAN
#define REDCOLL__MGUARDS 0x7FFFFFFFL
#else
#define REDCOLL__MGUARDS 8192L
#endif
#define REDCOLL__MKEEP   4096
#define REDCOLL__MSLAB   64    /* stacks per slab, at most */

struct redcoll__mslab;

typedef struct redcoll__mstack {
    char                   *lo;     /* lowest usable byte */
    size_t                  size;
    struct redcoll__mslab  *slab;
    struct redcoll__mstack *next;   /* in the free list */
} redcoll__mstack;

typedef struct redcoll__mslab {
    struct redcoll__mslab *next;
    void                  *mem;
    size_t                 page;
    int                    n, nfree, guarded;
    redcoll__mstack       *stacks;  /* n of them */
} redcoll__mslab;

static pthread_mutex_t redcoll__mpool_mu = PTHREAD_MUTEX_INITIALIZER;
static redcoll__mslab  *redcoll__mslabs;
static redcoll__mstack *redcoll__mfree;
static long             redcoll__mnfree, redcoll__mnguarded;


static void redcoll__mslab_free(redcoll__mslab *b) {
    int i;
    if (b->guarded) {
        for (i = 0; i < b->n; ++i)
            redcoll__mguard(b->stacks[i].lo - b->page, b->page, 0);
        redcoll__mnguarded -= b->n;
    }
    free(b->stacks);
    free(b->mem);
    free(b);
}

/* A new slab of n stacks of `size` bytes (a multiple of the page), all in
   use; NULL if memory ran out. Pool lock held. */
static redcoll__mslab *redcoll__mslab_new(int n, size_t size, size_t page) {
    redcoll__mslab *b = (redcoll__mslab *)calloc(1, sizeof *b);
    size_t stride = size + page;
    char *base;
    int i;
    if (!b) return NULL;
    b->stacks = (redcoll__mstack *)calloc((size_t)n, sizeof *b->stacks);
    b->mem = malloc(stride * (size_t)n + page);
    if (!b->stacks || !b->mem) { free(b->stacks); free(b->mem); free(b); return NULL; }
    b->n = n;
    b->page = page;
    b->guarded = redcoll__mnguarded + n <= REDCOLL__MGUARDS;
    base = (char *)b->mem + (page - (size_t)((uintptr_t)b->mem % page)) % page;
    for (i = 0; i < n; ++i) {
        redcoll__mstack *k = &b->stacks[i];
        k->lo = base + (size_t)i * stride + page;
        k->size = size;
        k->slab = b;
        if (b->guarded && !redcoll__mguard(k->lo - page, page, 1)) {
            while (i-- > 0) redcoll__mguard(b->stacks[i].lo - page, page, 0);
            b->guarded = 0;
            break;
        }
    }
    if (b->guarded) redcoll__mnguarded += n;
    b->next = redcoll__mslabs;
    redcoll__mslabs = b;
    return b;
}

/* Takes n stacks of `size` bytes into out[]; 0 if memory ran out (the
   stacks taken so far stay in out[] and must be returned). */
static int redcoll__mstacks_get(redcoll__mstack **out, int n, size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    redcoll__mstack **pp;
    int got = 0;
    if (page < 4096 || (page & (page - 1))) page = 4096;
    size = (size + page - 1) / page * page;
    pthread_mutex_lock(&redcoll__mpool_mu);
    for (pp = &redcoll__mfree; *pp && got < n;) {
        redcoll__mstack *k = *pp;
        if (k->size != size) { pp = &k->next; continue; }
        *pp = k->next;
        k->next = NULL;
        k->slab->nfree--;
        redcoll__mnfree--;
        out[got++] = k;
    }
    while (got < n) {
        int m = n - got < REDCOLL__MSLAB ? n - got : REDCOLL__MSLAB, i;
        redcoll__mslab *b = redcoll__mslab_new(m, size, page);
        if (!b) break;
        for (i = 0; i < m; ++i) out[got++] = &b->stacks[i];
    }
    pthread_mutex_unlock(&redcoll__mpool_mu);
    return got == n;
}

/* Returns n stacks to the pool, then frees whole slabs while more than
   REDCOLL__MKEEP stacks are free. */
static void redcoll__mstacks_put(redcoll__mstack **ks, int n) {
    redcoll__mslab **bp;
    redcoll__mstack **pp;
    long drop = 0;
    int i;
    pthread_mutex_lock(&redcoll__mpool_mu);
    for (i = 0; i < n; ++i) {
        if (!ks[i]) continue;
        ks[i]->next = redcoll__mfree;
        redcoll__mfree = ks[i];
        ks[i]->slab->nfree++;
        redcoll__mnfree++;
    }
    for (bp = &redcoll__mslabs; *bp; bp = &(*bp)->next) /* mark: nfree = -1 */
        if ((*bp)->nfree == (*bp)->n && redcoll__mnfree - drop > REDCOLL__MKEEP) {
            drop += (*bp)->n;
            (*bp)->nfree = -1;
        }
    if (drop) {
        for (pp = &redcoll__mfree; *pp;)
            if ((*pp)->slab->nfree < 0) *pp = (*pp)->next; else pp = &(*pp)->next;
        for (bp = &redcoll__mslabs; *bp;) {
            redcoll__mslab *b = *bp;
            if (b->nfree >= 0) { bp = &b->next; continue; }
            *bp = b->next;
            redcoll__mslab_free(b);
        }
        redcoll__mnfree -= drop;
    }
    pthread_mutex_unlock(&redcoll__mpool_mu);
}

/* ---- the simulation --------------------------------------------------------------- */

struct redcoll__msim;
struct redcoll__mrank;

/* One end of a message: a posted send or receive. */
typedef struct redcoll__mend {
    struct redcoll__mrank  *owner;
    int                     is_send, peer, tag;
    const void             *sbuf;
    void                   *rbuf;
    const redcoll_consumer *into;     /* receive-and-reduce: the consumer takes the payload */
    size_t                  bytes;
    int                     duplex;   /* half of a sendrecv */
    int                     in_wait;  /* the owner is waiting for it */
    int                     heap;     /* isend / irecv: freed by waitall */
    double                  post_time, end_time, duration;
    long                    post_round, end_round;
    int                     done;
    redcoll_result          res;
    struct redcoll__mend   *prev, *next; /* owner's unmatched ends, in post order */
    struct redcoll__mend   *qnext;       /* next unmatched end of the same key */
} redcoll__mend;

typedef struct redcoll__mrank {
    struct redcoll__msim  *sim;
    int                    rank;
    redcoll_transport      t;
    double                 clock;
    long                   round;
    long long              scratch_now;
    redcoll_mock_stats     st;
    redcoll__mend         *pending, *pending_tail; /* unmatched ends, in post order */
    int                    waiting, incomplete;
    redcoll_nbstate        nb;
    int                    started, finished;
    redcoll_result         result;
    struct redcoll__mrank *next_ready;
    redcoll__mstack       *stack;
    const char            *unguarded;  /* the lowest byte of a stack without guard page */
    redcoll__coro          ctx;        /* the rank's own coroutine */
    redcoll__coro         *at;         /* where it left off: ctx, or a coroutine it ran
                                          (a non-blocking collective's) that blocked */
} redcoll__mrank;

/* Unmatched ends by (owner, peer, tag, direction): a slot holds the FIFO of
   one key (linear probing; empty when head is NULL). The key is kept in the
   slot so that a probe reads no end. */
typedef struct redcoll__mslot {
    int            owner, peer, tag, is_send;
    redcoll__mend *head, *tail;
} redcoll__mslot;

typedef struct redcoll__msim {
    redcoll_mock_config   cfg;
    redcoll__mrank       *ranks;
    int                   live;
    int                   deadlocked, aborted;
    char                 *log;
    size_t                log_len, log_cap;
    redcoll_mock_rank_fn  fn;
    void                 *arg;
    redcoll__mrank       *ready, *ready_tail;
    redcoll__mslot       *slots;
    size_t                nslots, nkeys;
    redcoll__coro        *main;     /* the engine: the caller's context */
    int                   idle;     /* tests in vain since the last post */
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

/* ---- running the coroutines ---- */

static void redcoll__mready(redcoll__msim *s, redcoll__mrank *r) {
    r->next_ready = NULL;
    if (s->ready_tail) s->ready_tail->next_ready = r; else s->ready = r;
    s->ready_tail = r;
}

/* On a stack without a guard page: stops the program if this call runs
   below the stack (a guard page would have faulted). */
static void redcoll__mstack_check(const redcoll__mrank *r) {
    char here = 0;
    if (!r->unguarded || (uintptr_t)&here >= (uintptr_t)r->unguarded + 256) return;
    fprintf(stderr, "redcoll_mock: rank %d overflowed its stack of %zu bytes "
                    "(raise redcoll_mock_config.stack_bytes)\n", r->rank, r->stack->size);
    abort();
}

static void redcoll__mrank_main(void *arg);

/* Prepares rank r's coroutine to start in redcoll__mrank_main. */
static void redcoll__mprepare(redcoll__mrank *r) {
    r->started = 1;
    redcoll__coro_make(&r->ctx, r->stack->lo, r->stack->size, redcoll__mrank_main, r);
    r->at = &r->ctx;
}

/* The context to run next: the first ready rank, or the engine when no rank
   is ready (all done, or a deadlock). */
static redcoll__coro *redcoll__mnext(redcoll__msim *s) {
    redcoll__mrank *r = s->ready;
    if (!r) return s->main;
    s->ready = r->next_ready;
    if (!s->ready) s->ready_tail = NULL;
    if (!r->started) redcoll__mprepare(r);
#if REDCOLL__CORO == 1
    if (s->ready && s->ready->started) { /* the frames of the rank after r, while r runs */
        const char *sp = (const char *)s->ready->at->sp;
        int k;
        for (k = 0; k < 1024; k += 64) __builtin_prefetch(sp + k);
    }
#endif
    return r->at;
}

/* Rank r waits: the next ready rank runs until r is ready again. It may
   be on a coroutine of its own (a non-blocking collective's schedule), which
   is where it resumes. */
static void redcoll__mblock(redcoll__msim *s, redcoll__mrank *r) {
    redcoll__coro *here = redcoll__coro_self();
    redcoll__mstack_check(r);
    r->at = here;
    redcoll__coro_switch(here, redcoll__mnext(s), 0);
}

static void redcoll__mrank_main(void *arg) {
    redcoll__mrank *r = (redcoll__mrank *)arg;
    redcoll__msim *s = r->sim;
    r->result = s->fn(&r->t, s->arg);
    r->finished = 1;
    s->live--;
    s->idle = 0;
    redcoll__mstack_check(r);
    redcoll__coro_switch(&r->ctx, redcoll__mnext(s), 1); /* never resumed */
}

/* ---- unmatched ends ---- */

static size_t redcoll__mhash(const redcoll__msim *s, int owner, int peer, int tag, int is_send) {
    uint64_t h = (uint64_t)(uint32_t)owner * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)peer * 0xC2B2AE3D27D4EB4Full;
    h ^= ((uint64_t)(uint32_t)tag << 1 | (uint64_t)(is_send != 0)) * 0x165667B19E3779F9ull;
    h ^= h >> 29;
    return (size_t)h & (s->nslots - 1);
}

/* The slot of the key: its own, or the empty one where it would go. */
static redcoll__mslot *redcoll__mslot_of(redcoll__msim *s, int owner, int peer, int tag, int is_send) {
    size_t i = redcoll__mhash(s, owner, peer, tag, is_send);
    for (;; i = (i + 1) & (s->nslots - 1)) {
        redcoll__mslot *x = &s->slots[i];
        if (!x->head || (x->owner == owner && x->peer == peer && x->tag == tag && x->is_send == is_send))
            return x;
    }
}

static int redcoll__mslots_grow(redcoll__msim *s) {
    redcoll__mslot *old = s->slots;
    size_t n = s->nslots, i;
    s->slots = (redcoll__mslot *)calloc(n * 2, sizeof *s->slots);
    if (!s->slots) { s->slots = old; return 0; }
    s->nslots = n * 2;
    for (i = 0; i < n; ++i)
        if (old[i].head) *redcoll__mslot_of(s, old[i].owner, old[i].peer, old[i].tag, old[i].is_send) = old[i];
    free(old);
    return 1;
}

/* Empties slot x, shifting back the entries that probed past it. */
static void redcoll__mslot_remove(redcoll__msim *s, redcoll__mslot *x) {
    size_t mask = s->nslots - 1, i = (size_t)(x - s->slots), j = i;
    for (;;) {
        const redcoll__mslot *y;
        size_t k;
        j = (j + 1) & mask;
        y = &s->slots[j];
        if (!y->head) break;
        k = redcoll__mhash(s, y->owner, y->peer, y->tag, y->is_send);
        if (j > i ? (k <= i || k > j) : (k <= i && k > j)) { s->slots[i] = s->slots[j]; i = j; }
    }
    s->slots[i].head = s->slots[i].tail = NULL;
    s->nkeys--;
}

/* Queues an unmatched end: under its key and on its owner's list. 0 if no memory. */
static int redcoll__mqueue(redcoll__msim *s, redcoll__mend *e) {
    redcoll__mrank *r = e->owner;
    redcoll__mslot *x;
    if ((s->nkeys + 1) * 2 > s->nslots && !redcoll__mslots_grow(s)) return 0;
    x = redcoll__mslot_of(s, r->rank, e->peer, e->tag, e->is_send);
    e->qnext = NULL;
    if (x->head) x->tail->qnext = e;
    else {
        x->owner = r->rank; x->peer = e->peer; x->tag = e->tag; x->is_send = e->is_send;
        x->head = e;
        s->nkeys++;
    }
    x->tail = e;
    e->next = NULL;
    e->prev = r->pending_tail;
    if (r->pending_tail) r->pending_tail->next = e; else r->pending = e;
    r->pending_tail = e;
    return 1;
}

static void redcoll__munlink(redcoll__mrank *r, redcoll__mend *e) {
    if (e->prev) e->prev->next = e->next; else r->pending = e->next;
    if (e->next) e->next->prev = e->prev; else r->pending_tail = e->prev;
    e->prev = e->next = NULL;
}

/* The oldest unmatched end of rank owner toward peer with this tag and
   direction, taken out of the queues; NULL if none. */
static redcoll__mend *redcoll__mtake(redcoll__msim *s, int owner, int peer, int tag, int is_send) {
    redcoll__mslot *x = redcoll__mslot_of(s, owner, peer, tag, is_send);
    redcoll__mend *e = x->head;
    if (!e) return NULL;
    x->head = e->qnext;
    if (!x->head) redcoll__mslot_remove(s, x);
    redcoll__munlink(e->owner, e);
    return e;
}

/* ---- messages ---- */

static void redcoll__mend_finish(redcoll__msim *s, redcoll__mend *e, redcoll_result res) {
    redcoll__mrank *o = e->owner;
    e->done = 1;
    e->res = res;
    if (e->in_wait && o->waiting && --o->incomplete == 0) {
        o->waiting = 0;
        redcoll__mready(s, o);
    }
}

/* Fails every unmatched end of every rank (deadlock or abort). */
static void redcoll__mfail_all(redcoll__msim *s, redcoll_result res) {
    int i;
    for (i = 0; i < s->cfg.size; ++i) {
        redcoll__mrank *r = &s->ranks[i];
        while (r->pending) {
            redcoll__mend *e = r->pending;
            redcoll__munlink(r, e);
            redcoll__mend_finish(s, e, res);
        }
    }
    memset(s->slots, 0, s->nslots * sizeof *s->slots);
    s->nkeys = 0;
}

/* The deadlock report: who waits for what, and the verdict every blocked
   call returns: REDCOLL_ERR_MISMATCH when a rank waits to receive from P
   while P's oldest unmatched send to it belongs to another call of the
   library's (the stream rule at REDCOLL_TAG_MAX), or waits for a rank
   that has finished; REDCOLL_ERR_DEADLOCK otherwise. */
static void redcoll__mdeadlock(redcoll__msim *s) {
    redcoll_result why = REDCOLL_ERR_DEADLOCK;
    char name[64], a[32], b[32], pair[256];
    int i;
    s->deadlocked = 1;
    for (i = 0; i < s->cfg.size && why == REDCOLL_ERR_DEADLOCK; ++i) {
        const redcoll__mend *e, *f;
        for (e = s->ranks[i].pending; e && why == REDCOLL_ERR_DEADLOCK; e = e->next) {
            if (e->is_send) continue;
            for (f = s->ranks[e->peer].pending; f && !(f->is_send && f->peer == i); f = f->next) {}
            snprintf(a, sizeof a, "rank %d", e->peer);
            snprintf(b, sizeof b, "rank %d", i);
            if (f && REDCOLL_TAG_OTHER_CALL(e->tag, f->tag)) {
                why = REDCOLL_ERR_MISMATCH;
                redcoll__mlog(s, "%s: %s\n", redcoll_result_string(why),
                              redcoll_tag_disagree(a, f->tag, b, e->tag, pair, sizeof pair));
            } else if (!f && s->ranks[e->peer].finished) {
                why = REDCOLL_ERR_MISMATCH;
                redcoll__mlog(s, "%s: %s has finished while %s waits for it in %s\n",
                              redcoll_result_string(why), a, b, redcoll_tag_name(e->tag, name, sizeof name));
            }
        }
    }
    redcoll__mlog(s, "deadlock: every live rank is blocked\n");
    for (i = 0; i < s->cfg.size; ++i) {
        redcoll__mend *e;
        if (s->ranks[i].finished) redcoll__mlog(s, "  rank %d has finished\n", i);
        for (e = s->ranks[i].pending; e; e = e->next)
            redcoll__mlog(s, "  rank %d waits to %s %zu bytes %s rank %d (%s)\n", i,
                          e->is_send ? "send" : e->into ? "receive-and-reduce" : "receive",
                          e->bytes, e->is_send ? "to" : "from", e->peer,
                          redcoll_tag_name(e->tag, name, sizeof name));
    }
    redcoll__mfail_all(s, why);
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
        if (rcv->into) rcv->into->fn(rcv->into->arg, snd->sbuf, 0, snd->bytes);
        else memcpy(rcv->rbuf, snd->sbuf, snd->bytes);
    }
    start = snd->post_time > rcv->post_time ? snd->post_time : rcv->post_time;
    if (rcv->into && s->cfg.peer_reduce) n = 0; /* the reduction's read is the transfer */
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
    s->idle = 0;
    e->owner = r;
    e->post_time = r->clock;
    e->post_round = r->round;
    e->done = 0;
    if (s->aborted) { redcoll__mend_finish(s, e, REDCOLL_ERR_ABORTED); return; }
    f = redcoll__mtake(s, e->peer, r->rank, e->tag, !e->is_send);
    if (f) {
        if (e->is_send) redcoll__mmatch(s, e, f); else redcoll__mmatch(s, f, e);
    } else if (!redcoll__mqueue(s, e)) {
        redcoll__mlog(s, "rank %d: out of memory for the table of unmatched messages\n", r->rank);
        redcoll__mend_finish(s, e, REDCOLL_ERR_OUT_OF_MEMORY);
    }
}

/* Ends ends[], all done: the clock moves to the last end, and no earlier
   than post time plus the summed durations of the sends, or of the
   receives (one port each way). Returns the first failure. */
static redcoll_result redcoll__mdone(redcoll__mrank *r, redcoll__mend **ends, int n) {
    redcoll_result res = REDCOLL_OK;
    double start = r->clock, sends = 0, recvs = 0, end = r->clock;
    int i;
    for (i = 0; i < n; ++i)
        if (ends[i]->post_time < start) start = ends[i]->post_time;
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

/* Blocks until every end in ends[] is done; returns the first failure. */
static redcoll_result redcoll__mwait(redcoll__msim *s, redcoll__mrank *r, redcoll__mend **ends,
                                     int n) {
    int i;
    r->incomplete = 0;
    for (i = 0; i < n; ++i) {
        ends[i]->in_wait = 1;
        if (!ends[i]->done) r->incomplete++;
    }
    if (r->incomplete) {
        r->waiting = 1;
        redcoll__mblock(s, r); /* resumed once the last end is done */
    }
    return redcoll__mdone(r, ends, n);
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

/* The blocking calls: post one or two ends, then wait for them. A receive
   goes into rbuf, or to `into` when that is set. */
static redcoll_result redcoll__mblocking(redcoll__mrank *r, const char *what, int dst,
                                         const void *sbuf, size_t sbytes, int src, void *rbuf,
                                         size_t rbytes, const redcoll_consumer *into, int tag) {
    redcoll__msim *s = r->sim;
    redcoll__mend ends[2], *list[2];
    int n = 0, i, duplex = dst >= 0 && src >= 0;
    if (redcoll__mcall(s, r, what, dst >= 0 ? dst : src)) return REDCOLL_ERR_TRANSPORT;
    if ((dst >= 0 && !redcoll__mpeer_ok(s, r, dst)) || (src >= 0 && !redcoll__mpeer_ok(s, r, src)))
        return REDCOLL_ERR_TRANSPORT;
    if (dst >= 0) { redcoll__mend_init(&ends[n], 1, dst, sbuf, NULL, sbytes, tag, duplex); list[n] = &ends[n]; ++n; }
    if (src >= 0) {
        redcoll__mend_init(&ends[n], 0, src, NULL, rbuf, rbytes, tag, duplex);
        ends[n].into = into;
        list[n] = &ends[n];
        ++n;
    }
    for (i = 0; i < n; ++i) redcoll__mpost(s, r, list[i]);
    return redcoll__mwait(s, r, list, n);
}

static redcoll_result redcoll__msend(void *user, int dst, const void *buf, size_t bytes, int tag) {
    return redcoll__mblocking((redcoll__mrank *)user, "send", dst, buf, bytes, -1, NULL, 0, NULL, tag);
}

static redcoll_result redcoll__mrecv(void *user, int src, void *buf, size_t bytes, int tag) {
    return redcoll__mblocking((redcoll__mrank *)user, "recv", -1, NULL, 0, src, buf, bytes, NULL, tag);
}

static redcoll_result redcoll__msendrecv(void *user, int dst, const void *sbuf, size_t sbytes,
                                         int src, void *rbuf, size_t rbytes, int tag) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__mblocking((redcoll__mrank *)user, "sendrecv", dst, sbuf, sbytes, src, rbuf,
                              rbytes, NULL, tag);
}

/* A receive-and-reduce needs a consumer, even when no data moves. */
static int redcoll__minto_ok(redcoll__mrank *r, const char *what, const redcoll_consumer *into) {
    if (into && into->fn) return 1;
    redcoll__mlog(r->sim, "rank %d: %s without a consumer\n", r->rank, what);
    return 0;
}

static redcoll_result redcoll__mrecv_reduce(void *user, int src, size_t bytes, int tag,
                                            const redcoll_consumer *into) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    if (!redcoll__minto_ok(r, "recv_reduce", into)) return REDCOLL_ERR_TRANSPORT;
    return redcoll__mblocking(r, "recv_reduce", -1, NULL, 0, src, NULL, bytes, into, tag);
}

static redcoll_result redcoll__msendrecv_reduce(void *user, int dst, const void *sbuf, size_t sbytes,
                                                int src, size_t rbytes, int tag,
                                                const redcoll_consumer *into) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    if (dst < 0 || src < 0 || !redcoll__minto_ok(r, "sendrecv_reduce", into)) return REDCOLL_ERR_TRANSPORT;
    return redcoll__mblocking(r, "sendrecv_reduce", dst, sbuf, sbytes, src, NULL, rbytes, into, tag);
}

static redcoll_result redcoll__mipost(redcoll__mrank *r, int is_send, int peer, const void *sbuf,
                                      void *rbuf, size_t bytes, int tag, redcoll_request *req,
                                      const redcoll_consumer *into) {
    redcoll__msim *s = r->sim;
    redcoll__mend *e;
    if (redcoll__mcall(s, r, is_send ? "isend" : into ? "irecv_reduce" : "irecv", peer) ||
        !redcoll__mpeer_ok(s, r, peer))
        return REDCOLL_ERR_TRANSPORT;
    e = (redcoll__mend *)malloc(sizeof *e);
    if (!e) return REDCOLL_ERR_OUT_OF_MEMORY;
    redcoll__mend_init(e, is_send, peer, sbuf, rbuf, bytes, tag, 0);
    e->into = into;
    e->heap = 1;
    redcoll__mpost(s, r, e);
    req->ptr = e;
    return REDCOLL_OK;
}

static redcoll_result redcoll__misend(void *user, int dst, const void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    return redcoll__mipost((redcoll__mrank *)user, 1, dst, buf, NULL, bytes, tag, req, NULL);
}

static redcoll_result redcoll__mirecv(void *user, int src, void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    return redcoll__mipost((redcoll__mrank *)user, 0, src, NULL, buf, bytes, tag, req, NULL);
}

static redcoll_result redcoll__mirecv_reduce(void *user, int src, size_t bytes, int tag,
                                             const redcoll_consumer *into, redcoll_request *req) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    if (!redcoll__minto_ok(r, "irecv_reduce", into)) return REDCOLL_ERR_TRANSPORT;
    return redcoll__mipost(r, 0, src, NULL, NULL, bytes, tag, req, into);
}

static redcoll_result redcoll__mwaitall(void *user, int count, redcoll_request *reqs) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    redcoll__mend **list = (redcoll__mend **)malloc(sizeof *list * (size_t)(count > 0 ? count : 1));
    redcoll_result res;
    int i, n = 0;
    if (!list) return REDCOLL_ERR_OUT_OF_MEMORY;
    for (i = 0; i < count; ++i) if (reqs[i].ptr) list[n++] = (redcoll__mend *)reqs[i].ptr;
    res = redcoll__mwait(r->sim, r, list, n);
    for (i = 0; i < n; ++i) free(list[i]);
    for (i = 0; i < count; ++i) reqs[i].ptr = NULL;
    free(list);
    return res;
}

/* A rank whose test found nothing done lets the other ready ranks run
   first. Once every live rank has tested in vain (or blocks) since the
   last transfer was posted, nothing can change any more: a deadlock. */
static void redcoll__midle(redcoll__msim *s, redcoll__mrank *r) {
    if (++s->idle > s->live) {
        s->idle = 0;
        redcoll__mdeadlock(s);
        return;
    }
    if (!s->ready) return; /* every other rank blocks or has ended */
    redcoll__mready(s, r);
    redcoll__mblock(s, r);
}

static int redcoll__mall_done(const redcoll_request *reqs, int count) {
    int i;
    for (i = 0; i < count; ++i)
        if (reqs[i].ptr && !((const redcoll__mend *)reqs[i].ptr)->done) return 0;
    return 1;
}

static redcoll_result redcoll__mtest(void *user, int count, redcoll_request *reqs, int *done) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    *done = 0;
    if (!redcoll__mall_done(reqs, count)) {
        redcoll__midle(r->sim, r);
        if (!redcoll__mall_done(reqs, count)) return REDCOLL_OK;
    }
    *done = 1;
    return redcoll__mwaitall(user, count, reqs); /* all done: no wait, the clock and the frees */
}

static void redcoll__mabort(void *user, redcoll_result why) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    redcoll__msim *s = r->sim;
    if (s->aborted) return;
    s->aborted = 1;
    redcoll__mlog(s, "abort: rank %d failed (%s); releasing every blocked rank\n", r->rank,
                  redcoll_result_string(why));
    redcoll__mfail_all(s, REDCOLL_ERR_ABORTED);
}

static int redcoll__mnode_of(void *user, int rank) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    return rank / r->sim->cfg.node_size;
}

static void redcoll__mon_compute(void *user, size_t elems, size_t bytes) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    r->st.elems_reduced += elems;
    r->clock += (double)bytes * r->sim->cfg.model.gamma;
}

static void redcoll__mon_scratch(void *user, long long delta) {
    redcoll__mrank *r = (redcoll__mrank *)user;
    r->scratch_now += delta;
    if (r->scratch_now > (long long)r->st.scratch_bytes)
        r->st.scratch_bytes = (unsigned long long)r->scratch_now;
}

/* Runs every rank to its end. Ranks hand over to each other; the engine
   runs only when no rank is ready: then all are done, or the deadlock
   report releases the blocked ones. */
static void redcoll__mschedule(redcoll__msim *s) {
    int i;
    s->main = redcoll__coro_self();
    while (s->live > 0) {
        redcoll__coro *next = redcoll__mnext(s);
        if (next != s->main) { redcoll__coro_switch(s->main, next, 0); continue; }
        redcoll__mdeadlock(s);
        if (!s->ready) break; /* cannot happen: every blocked rank waits for an unmatched end */
    }
    for (i = 0; i < s->cfg.size; ++i)
        if (s->ranks[i].started) redcoll__coro_unmake(&s->ranks[i].ctx);
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
    redcoll__mstack **stacks;
    size_t stack = cfg && cfg->stack_bytes ? cfg->stack_bytes : (size_t)256 << 10;
    int i, have_stacks;
    if (report) memset(report, 0, sizeof *report);
    if (!cfg || !fn || !report || cfg->size < 1) return REDCOLL_ERR_INVALID_ARG;
    if (stack < ((size_t)16 << 10)) stack = (size_t)16 << 10;
    memset(&s, 0, sizeof s);
    s.cfg = *cfg;
    s.fn = fn; s.arg = arg;
    for (s.nslots = 64; s.nslots < (size_t)cfg->size * 2; s.nslots *= 2) {}
    s.ranks = (redcoll__mrank *)calloc((size_t)cfg->size, sizeof *s.ranks);
    s.slots = (redcoll__mslot *)calloc(s.nslots, sizeof *s.slots);
    stacks = (redcoll__mstack **)calloc((size_t)cfg->size, sizeof *stacks);
    report->results = (redcoll_result *)calloc((size_t)cfg->size, sizeof *report->results);
    report->stats = (redcoll_mock_stats *)calloc((size_t)cfg->size, sizeof *report->stats);
    if (!s.ranks || !s.slots || !stacks || !report->results || !report->stats) {
        free(s.ranks); free(s.slots); free(stacks);
        redcoll_mock_report_free(report);
        return REDCOLL_ERR_OUT_OF_MEMORY;
    }
    have_stacks = redcoll__mstacks_get(stacks, cfg->size, stack);
    for (i = 0; i < cfg->size; ++i) {
        redcoll__mrank *r = &s.ranks[i];
        r->sim = &s;
        r->rank = i;
        r->stack = stacks[i];
        r->unguarded = stacks[i] && !stacks[i]->slab->guarded ? stacks[i]->lo : NULL;
        r->result = REDCOLL_ERR_ABORTED;
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
        r->t.test = redcoll__mtest;
        r->t.irecv_reduce = redcoll__mirecv_reduce;
        r->t.nb = &r->nb;
        r->t.node_of = cfg->node_size > 0 ? redcoll__mnode_of : NULL;
        r->t.on_compute = redcoll__mon_compute;
        r->t.on_scratch = redcoll__mon_scratch;
        r->t.flags = (cfg->no_data ? REDCOLL_TRANSPORT_NO_DATA : 0u) |
                     (cfg->peer_reduce ? REDCOLL_TRANSPORT_PEER_REDUCE : 0u);
        r->t.recv_reduce = redcoll__mrecv_reduce;
        r->t.sendrecv_reduce = redcoll__msendrecv_reduce;
        r->t.scratch = NULL; /* scratch is accounted through on_scratch */
        if (have_stacks) redcoll__mready(&s, r);
    }
    if (have_stacks) {
        s.live = cfg->size;
        redcoll__mschedule(&s);
    } else {
        s.aborted = 1;
        redcoll__mlog(&s, "no memory for the stacks of %d ranks of %zu bytes\n", cfg->size, stack);
    }
    redcoll__mstacks_put(stacks, cfg->size);

    report->size = cfg->size;
    for (i = 0; i < cfg->size; ++i) {
        redcoll__mrank *r = &s.ranks[i];
        while (r->pending) { /* isend / irecv never waited for */
            redcoll__mend *e = r->pending;
            redcoll__munlink(r, e);
            if (e->heap) free(e);
        }
        report->results[i] = r->result;
        report->stats[i] = r->st;
        report->stats[i].rounds = r->round;
        report->stats[i].time = r->clock;
        if (r->clock > report->time) report->time = r->clock;
        if (r->round > report->rounds) report->rounds = r->round;
    }
    report->deadlocked = s.deadlocked;
    report->aborted = s.aborted;
    report->log = s.log;
    free(s.ranks);
    free(s.slots);
    free(stacks);
    return have_stacks ? REDCOLL_OK : REDCOLL_ERR_OUT_OF_MEMORY;
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
