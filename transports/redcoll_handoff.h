/* redcoll_handoff.h - hand-offs between ranks that share memory - MIT licence (see redcoll.h)

   The engine of the shared-memory transports (transports/redcoll_pshm.h:
   processes sharing a segment). Not a transport and not a public API: it
   defines only static redcoll__ho_* functions and types, in the
   implementation section (REDCOLL_IMPLEMENTATION), once per translation unit.

   The fabric is memory every rank maps, each at its own address, so
   everything in it is found by offsets:
     - per rank a line its peers write: the wake word the rank sleeps on (a
       futex) and the free mask of the rank's cells;
     - per ordered pair (src, dst) a channel: two hand-off lines (the slots)
       and the head of an overflow queue of descriptors, under a lock in the
       channel's third line;
     - per rank a pool of descriptors (hand-off lines for sends posted while
       both slots of their channel are taken) and a pool of cells (bounce
       buffers for payloads whose sender's memory the receiver cannot read).
   A hand-off line (one cache line) is written by the sender to post and by
   the receiver to claim and complete, and says how the payload travels:
     INLINE  up to REDCOLL__HO_INLINE bytes inside the line;
     PTR     the sender's address, valid in the receiver (one process);
     SEG     an offset into the fabric (the sender's buffer lies in it);
     CMA     the sender's address, read by the receiver through the fabric's
             pull hook (single copy: process_vm_readv);
     CELLS   the sender copies chunks into its cells and the receiver copies
             or reduces them out, pipelined through produced / consumed
             counters and a ring of cell numbers in the line.
   So the receiver copies or reduces straight from where the bytes are:
   the sender's buffer when it can read it, the sender's cells otherwise. A
   receive-and-reduce of a CMA message pulls it a chunk at a time into the
   rank's stage (a private buffer that stays in cache) and reduces each
   chunk from there at once: one pass over the sender's bytes. Without a
   stage, and for a plain receive below pull_min, the receiver asks the
   sender to push cells instead (PUMP): the copy and the reduction then
   run on two cores at once.

   Matching is the receiver's: each rank keeps its unmatched receives
   (`pending`, in posting order), looks for the oldest posted send with the
   tag in the two slots (lock free; the older of two by post count), then in
   the overflow queue (under the channel's lock), and completes both ends.
   FIFO per (source, tag). Sizes are compared when the two meet: a mismatch
   fails the receive and the send (an eager send has returned: only the
   receive). A receive whose sender's oldest send not yet taken carries
   another call's tag fails with REDCOLL_ERR_MISMATCH (the stream rule at
   REDCOLL_TAG_MAX in redcoll.h); a rank asleep with every other one asleep
   or gone runs the deadlock detector (below, at redcoll__ho_judge).

   Eager sends: a payload up to REDCOLL__HO_INLINE bytes rides in a slot,
   and a payload the sender copies into cells is pushed without waiting for
   the receiver: such a send completes when its last byte is in a line or a
   cell (its slot drains when the receiver is done). Every other send is
   rendezvous: it completes when its receiver is done with it.

   Waiting polls (`spin` times: pause, then sched_yield), then sleeps on the
   rank's wake word until a peer kicks it, the deadline passes, or the
   fabric's liveness hook is due (every `check_ns`): that hook says whether
   every peer is still there, and a dead one aborts the fabric. Sequentially
   consistent hand-off words: a waiter's "I sleep" store and a poster's
   "posted" store are seen by at least one of the two, so posters skip the
   wake-up unless the peer sleeps.

   abort is sticky: every call blocked in or entering the fabric returns
   REDCOLL_ERR_ABORTED. A timeout fails the call that waited too long
   (REDCOLL_ERR_TIMEOUT) and withdraws what nobody has taken. */
#ifdef REDCOLL_IMPLEMENTATION
#ifndef REDCOLL_HANDOFF_IMPLEMENTATION_DONE
#define REDCOLL_HANDOFF_IMPLEMENTATION_DONE

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Atomics: GNU builtins (gcc, clang, also in C++), else C11 <stdatomic.h>. */
#if defined(__GNUC__) || defined(__clang__)
typedef int redcoll__ho_aint;
typedef unsigned redcoll__ho_auint;
typedef unsigned long long redcoll__ho_au64;
#define redcoll__ho_load(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define redcoll__ho_store(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define redcoll__ho_peek(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define redcoll__ho_poke(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define redcoll__ho_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define redcoll__ho_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define redcoll__ho_own(p) __atomic_fetch_or((p), 0u, __ATOMIC_SEQ_CST)
#define redcoll__ho_add(p, v) ((void)__atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST))
#define redcoll__ho_add_fetch(p, v) __atomic_add_fetch((p), (v), __ATOMIC_SEQ_CST)
#define redcoll__ho_xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)
#define redcoll__ho_or(p, v) ((void)__atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST))
#define redcoll__ho_and(p, v) ((void)__atomic_fetch_and((p), (v), __ATOMIC_SEQ_CST))
#define redcoll__ho_cas(p, e, v) \
    __atomic_compare_exchange_n((p), (e), (v), 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)
#if defined(__x86_64__) || defined(__i386__)
#define redcoll__ho_pause() __builtin_ia32_pause()
#else
#define redcoll__ho_pause() ((void)0)
#endif
#elif !defined(__cplusplus) && !defined(__STDC_NO_ATOMICS__)
#include <stdatomic.h>
typedef atomic_int redcoll__ho_aint;
typedef atomic_uint redcoll__ho_auint;
typedef atomic_ullong redcoll__ho_au64;
#define redcoll__ho_load(p) atomic_load(p)
#define redcoll__ho_store(p, v) atomic_store((p), (v))
#define redcoll__ho_peek(p) atomic_load_explicit((p), memory_order_relaxed)
#define redcoll__ho_poke(p, v) atomic_store_explicit((p), (v), memory_order_relaxed)
#define redcoll__ho_acquire(p) atomic_load_explicit((p), memory_order_acquire)
#define redcoll__ho_release(p, v) atomic_store_explicit((p), (v), memory_order_release)
#define redcoll__ho_own(p) atomic_fetch_or((p), 0u)
#define redcoll__ho_add(p, v) ((void)atomic_fetch_add((p), (v)))
#define redcoll__ho_add_fetch(p, v) (atomic_fetch_add((p), (v)) + (v))
#define redcoll__ho_xchg(p, v) atomic_exchange_explicit((p), (v), memory_order_acquire)
#define redcoll__ho_or(p, v) ((void)atomic_fetch_or((p), (v)))
#define redcoll__ho_and(p, v) ((void)atomic_fetch_and((p), (v)))
#define redcoll__ho_cas(p, e, v) atomic_compare_exchange_strong((p), (e), (v))
#define redcoll__ho_pause() ((void)0)
#else
#error "redcoll_handoff.h needs GNU atomic builtins or C11 <stdatomic.h>"
#endif

#define REDCOLL__HO_PAUSES 64   /* polls with a pause instruction before sched_yield */
#define REDCOLL__HO_INLINE 32   /* payloads up to this many bytes ride in the line */
#define REDCOLL__HO_RING   24   /* cells in flight per transfer (the ring in the line) */
#define REDCOLL__HO_WAITS  8    /* receives a sleeping rank publishes for the deadlock detector */
#define REDCOLL__HO_REPORT 4096 /* bytes of the detector's account in the fabric */
#define REDCOLL__HO_HOST   32   /* polls between two calls of the host's progress hook */
#define REDCOLL__HO_CARRY  64   /* a consumer's unit split across two cells is joined in
                                   the end up to this size (larger: one buffer per rank) */

/* Line states: the low 3 bits of `state`; the bits above count posts, so a
   claim never takes a send that was withdrawn and posted again meanwhile.
   EAGER: posted by a sender that does not wait for the receiver. Inline,
   it is never withdrawn and is read without a claim; pushing cells, its
   receiver takes it with a compare-and-swap (to CLAIMED) and its sender may
   withdraw it until then (to CANCEL). PUMP: claimed by a receiver that asks
   the sender to push cells. CANCEL: a transfer through cells given up by its
   receiver (the sender stops pushing) or withdrawn by its sender. */
enum { REDCOLL__HO_FREE = 0, REDCOLL__HO_POSTED, REDCOLL__HO_CLAIMED, REDCOLL__HO_DONE,
       REDCOLL__HO_MISMATCH, REDCOLL__HO_EAGER, REDCOLL__HO_PUMP, REDCOLL__HO_CANCEL };
#define REDCOLL__HO_ST(s) ((s) & 7u)
/* The line is free for its sender's next post (nothing posted or under way). */
#define REDCOLL__HO_DRAINED(s) \
    (REDCOLL__HO_ST(s) == REDCOLL__HO_FREE || REDCOLL__HO_ST(s) == REDCOLL__HO_DONE || \
     REDCOLL__HO_ST(s) == REDCOLL__HO_MISMATCH || REDCOLL__HO_ST(s) == REDCOLL__HO_CANCEL)
/* State a was posted before state b (post counts are 29 bits and wrap). */
#define REDCOLL__HO_OLDER(a, b) ((((a) >> 3) - ((b) >> 3)) & 0x10000000u)

enum { REDCOLL__HO_INLINE_MODE = 0, REDCOLL__HO_PTR, REDCOLL__HO_SEG, REDCOLL__HO_CMA,
       REDCOLL__HO_CELLS };

/* One hand-off, one cache line. */
typedef struct redcoll__ho_line {
    redcoll__ho_auint state;
    redcoll__ho_aint  tag;
    unsigned          mode;
    int               next;     /* overflow queue: the next descriptor of the sender, -1 */
    uint64_t          bytes;
    uint64_t          where;    /* PTR, CMA: the sender's address; SEG: offset in the fabric */
    union {
        unsigned char data[REDCOLL__HO_INLINE];
        struct {
            redcoll__ho_auint produced, consumed; /* chunks, written by sender / receiver */
            unsigned char     cell[REDCOLL__HO_RING]; /* chunk k sits in cell[k % RING] */
        } pipe;
    } u;
} redcoll__ho_line;

typedef char redcoll__ho_line_is_a_cache_line[sizeof(redcoll__ho_line) == 64 ? 1 : -1];

/* The channel src -> dst. Line 2 is touched only when sends queue. */
typedef struct redcoll__ho_chan {
    redcoll__ho_line  slot[2];
    redcoll__ho_aint  lock;       /* the overflow queue's spin lock */
    redcoll__ho_aint  nover;      /* descriptors in the queue */
    int               head, tail; /* descriptor numbers of the sender, -1: empty (under lock) */
    char              pad[64 - 4 * sizeof(int)];
} redcoll__ho_chan;

/* What peers write for a rank. */
typedef struct redcoll__ho_peer {
    redcoll__ho_auint wake;       /* futex word: a kick bumps it */
    redcoll__ho_aint  sleeping;   /* the rank sleeps (or is about to) on wake */
    redcoll__ho_au64  freecells;  /* bit k: cell k of this rank is free (receivers set it) */
    char              pad[64 - 2 * sizeof(int) - sizeof(unsigned long long)];
} redcoll__ho_peer;

/* The shared words of the whole fabric. */
typedef struct redcoll__ho_shared {
    redcoll__ho_aint  aborted;
    redcoll__ho_aint  why;        /* the result abort was given (the first) */
    redcoll__ho_aint  idle;       /* ranks asleep and counted, plus ranks finished */
    redcoll__ho_aint  release;    /* DEADLOCK or MISMATCH: the detector's verdict, else 0 */
    redcoll__ho_aint  detecting;  /* a rank runs the detector */
    redcoll__ho_aint  told;       /* 0: no account yet, 1: being written, 2: written */
    char              pad[64 - 6 * sizeof(int)];
} redcoll__ho_shared;

/* What a rank publishes for the deadlock detector (written by the rank on
   its way to sleep, read by the detector while every rank sleeps). */
typedef struct redcoll__ho_waits {
    redcoll__ho_aint  counted;    /* asleep and counted in idle (a kick clears it) */
    redcoll__ho_aint  finished;   /* makes no more calls (counted in idle, once) */
    redcoll__ho_auint seen;       /* its wake word when it went to sleep */
    int               n, more;    /* receives below, and how many more it waits for */
    int               unused;
    struct { int peer, tag, reduce, unused; uint64_t bytes; } recv[REDCOLL__HO_WAITS];
    char              pad[256 - 6 * sizeof(int) - REDCOLL__HO_WAITS * 24];
} redcoll__ho_waits;

typedef char redcoll__ho_waits_are_four_lines[sizeof(redcoll__ho_waits) == 256 ? 1 : -1];

/* Sizes of the fabric's parts, the same on every rank. */
typedef struct redcoll__ho_layout {
    int    size;           /* ranks */
    int    ndesc;          /* descriptors per rank */
    int    ncells;         /* cells per rank, <= 64 */
    size_t cell_bytes;     /* a multiple of 64 */
    size_t off_shared, off_peers, off_waits, off_report, off_chans, off_descs, off_cells, end;
} redcoll__ho_layout;

/* Lays out a fabric of `size` ranks from offset `at` (64-byte aligned);
   returns 0 when it does not fit a size_t. */
static int redcoll__ho_lay_out(redcoll__ho_layout *l, int size, int ndesc, int ncells,
                               size_t cell_bytes, size_t at) {
    size_t p = (size_t)size, lim = (size_t)-1 / 4, chans;
    l->size = size; l->ndesc = ndesc; l->ncells = ncells;
    l->cell_bytes = (cell_bytes + 63) & ~(size_t)63;
    if (p == 0 || p > lim / p / sizeof(redcoll__ho_chan) || ncells < 0 || ncells > 64 ||
        ndesc < 0 || l->cell_bytes > lim / 64 / p)
        return 0;
    chans = p * p * sizeof(redcoll__ho_chan);
    l->off_shared = (at + 63) & ~(size_t)63;
    l->off_peers = l->off_shared + sizeof(redcoll__ho_shared);
    l->off_waits = l->off_peers + p * sizeof(redcoll__ho_peer);
    l->off_report = l->off_waits + p * sizeof(redcoll__ho_waits);
    l->off_chans = l->off_report + REDCOLL__HO_REPORT;
    l->off_descs = l->off_chans + chans;
    l->off_cells = l->off_descs + p * (size_t)ndesc * sizeof(redcoll__ho_line);
    l->end = l->off_cells + p * (size_t)ncells * l->cell_bytes;
    return 1;
}

/* Life of an end (one side of one transfer): WAIT (a receive in
   `pending`, a send posted or waiting to be), ACTIVE (a receive consuming
   cells), DONE (res is final). */
enum { REDCOLL__HO_WAIT = 0, REDCOLL__HO_ACTIVE, REDCOLL__HO_END_DONE };

typedef struct redcoll__ho_end {
    struct redcoll__ho_end  *next;    /* in pending, watch or unposted */
    int                      is_send, peer, tag;
    int                      slot;    /* send: posted in slot[slot - 1] (0: not in a slot) */
    int                      desc;    /* send: its descriptor, -1 */
    int                      watched; /* send: in `watch` (its line is looked at in progress) */
    int                      eager;   /* send: pushed into cells unasked (done with its last chunk) */
    int                      state;
    const void              *sbuf;
    void                    *rbuf;
    const redcoll_consumer  *into;    /* receive-and-reduce: the consumer, not rbuf */
    size_t                   bytes;
    size_t                   moved;   /* cells: bytes produced (send) / consumed (receive) */
    size_t                   fed;     /* consumer: bytes handed to it */
    size_t                   carried; /* consumer: bytes of a split unit held in carry */
    unsigned char           *carry;   /* where they are: in `small` or the rank's big buffer */
    redcoll__ho_line        *line;    /* the line it is posted in (send) or consumes (receive) */
    long long                posted;  /* a request under a timeout: when it was posted (ns) */
    redcoll_result           res;
    unsigned char            small[REDCOLL__HO_CARRY];
} redcoll__ho_end;

typedef struct redcoll__ho_queue { redcoll__ho_end *head, *tail; } redcoll__ho_queue;

struct redcoll__ho_me;

/* What the fabric's owner provides. */
typedef struct redcoll__ho_hooks {
    /* CMA: copy n bytes at the sender's address `from` to `to`; 0 or an errno */
    int  (*pull)(struct redcoll__ho_me *me, int src, void *to, uint64_t from, size_t n);
    /* every check_ns while waiting: REDCOLL_OK, or the error that aborts the fabric
       (a peer is gone) */
    redcoll_result (*alive)(struct redcoll__ho_me *me);
    /* whether a peer has left the fabric for good (it posts nothing more) */
    int  (*left)(struct redcoll__ho_me *me, int peer);
    /* the first account of ranks that disagree or deadlock, in the process that found it
       (NULL: kept in the fabric only) */
    void (*tell)(struct redcoll__ho_me *me, const char *text);
    /* the host runtime's progress (the MPI library the ranks also run in): called while
       this rank waits, so traffic of the host that needs this rank moves meanwhile
       (redcoll__ho_wait says when); NULL: the rank waits for the fabric alone */
    void (*host_progress)(struct redcoll__ho_me *me);
} redcoll__ho_hooks;

/* A rank's view of the fabric, private to its process (thread). */
typedef struct redcoll__ho_me {
    char               *base;        /* the fabric as mapped here */
    size_t              total;       /* its bytes (SEG: buffers inside [base, base + total)) */
    redcoll__ho_layout  lay;
    redcoll__ho_shared *sh;
    redcoll__ho_peer   *peers;
    redcoll__ho_waits  *waits;       /* [rank] */
    char               *report;      /* the detector's account (REDCOLL__HO_REPORT bytes) */
    int                 detect;      /* the deadlock detector runs (no timeout configured) */
    redcoll__ho_chan   *chans;       /* [dst * size + src] */
    redcoll__ho_line   *descs;       /* [rank * ndesc + k] */
    char               *cells;       /* [(rank * ncells + k) * cell_bytes] */
    const unsigned char *cma;        /* [dst * size + src]: dst may read src's memory; NULL: none */
    size_t              cma_min;     /* CMA from this many bytes */
    size_t              pull_min;    /* a plain receive of a CMA send pulls from this many
                                        bytes (below: it asks for cells) */
    unsigned char      *stage;       /* the rank's chunk for a pull fused with a reduction */
    size_t              stage_bytes; /* its size (0: a reduction of a CMA send asks for cells) */
    int                 one_process; /* every rank's address is valid here (PTR) */
    int                 futex_private;
    int                 rank, size;
    int                 spin;
    double              timeout;     /* > 0: a blocking call fails after this long */
    long long           check_ns;    /* the liveness hook's period, 0: never */
    long long           next_check;
    long long           host_ns;     /* with host_progress: the longest sleep between two calls */
    redcoll__ho_hooks   hooks;
    void               *owner;       /* the transport this view belongs to */
    /* the rank's own bookkeeping */
    redcoll__ho_queue   pending;     /* receives not yet done, in posting order */
    redcoll__ho_queue   watch;       /* sends through cells or CMA: served in progress */
    redcoll__ho_queue  *unposted;    /* [dst]: sends waiting for a slot or a descriptor */
    int                 nunposted;
    redcoll__ho_end   **occupant;    /* [dst * 2 + i]: the rendezvous send in slot i */
    unsigned           *posts;       /* [dst]: posts on my channel to dst */
    int                *descfree;    /* free descriptors (a stack) */
    int                 ndescfree;
    unsigned char      *big;         /* carry for units above REDCOLL__HO_CARRY */
    size_t              big_bytes;
    redcoll__ho_end    *big_user;
    redcoll__ho_end    *spare;       /* request records for reuse */
} redcoll__ho_me;

static redcoll__ho_chan *redcoll__ho_chan_of(const redcoll__ho_me *me, int src, int dst) {
    return &me->chans[(size_t)dst * (size_t)me->size + (size_t)src];
}
static redcoll__ho_line *redcoll__ho_desc(const redcoll__ho_me *me, int rank, int k) {
    return &me->descs[(size_t)rank * (size_t)me->lay.ndesc + (size_t)k];
}
static char *redcoll__ho_cell(const redcoll__ho_me *me, int rank, int k) {
    return me->cells + ((size_t)rank * (size_t)me->lay.ncells + (size_t)k) * me->lay.cell_bytes;
}

/* ---- time, futex ------------------------------------------------------------- */

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
/* syscall() and clock_gettime() without _DEFAULT_SOURCE / _POSIX_C_SOURCE:
   the same symbols under names of our own (a strict -std=c11 build does not
   declare them). */
#ifdef __cplusplus
extern "C" {
#endif
extern long redcoll__ho_syscall(long number, ...) __asm__("syscall");
extern int redcoll__ho_clock_gettime(int clock, struct timespec *ts) __asm__("clock_gettime");
#ifdef __cplusplus
}
#endif
#define REDCOLL__HO_FUTEX_WAIT 0
#define REDCOLL__HO_FUTEX_WAKE 1
#define REDCOLL__HO_FUTEX_PRIVATE 128
#endif

/* Nanoseconds on a monotonic clock (the C library's, without a system call). */
static long long redcoll__ho_now(void) {
    struct timespec ts;
#if defined(__linux__)
    if (redcoll__ho_clock_gettime(1 /* CLOCK_MONOTONIC */, &ts) != 0)
#endif
        timespec_get(&ts, TIME_UTC);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Sleeps while *word == seen, at most ns nanoseconds (< 0: no limit). */
static void redcoll__ho_futex_wait(const redcoll__ho_me *me, redcoll__ho_auint *word, unsigned seen,
                                   long long ns) {
#if defined(__linux__)
    struct timespec ts, *tp = NULL;
    if (ns >= 0) {
        ts.tv_sec = (time_t)(ns / 1000000000LL);
        ts.tv_nsec = (long)(ns % 1000000000LL);
        tp = &ts;
    }
    redcoll__ho_syscall(SYS_futex, word, REDCOLL__HO_FUTEX_WAIT |
                        (me->futex_private ? REDCOLL__HO_FUTEX_PRIVATE : 0), seen, tp, NULL, 0);
#else
    (void)me; (void)word; (void)seen; (void)ns;
    sched_yield();
#endif
}

static void redcoll__ho_futex_wake(const redcoll__ho_me *me, redcoll__ho_auint *word) {
#if defined(__linux__)
    redcoll__ho_syscall(SYS_futex, word, REDCOLL__HO_FUTEX_WAKE |
                        (me->futex_private ? REDCOLL__HO_FUTEX_PRIVATE : 0), INT_MAX, NULL, NULL, 0);
#else
    (void)me; (void)word;
#endif
}

/* ---- lists of ends -------------------------------------------------------------- */

static void redcoll__ho_push(redcoll__ho_queue *q, redcoll__ho_end *e) {
    e->next = NULL;
    if (q->tail) q->tail->next = e; else q->head = e;
    q->tail = e;
}

/* Unlinks e (whose predecessor is prev, NULL for the head) from q. */
static void redcoll__ho_unlink(redcoll__ho_queue *q, redcoll__ho_end *prev, redcoll__ho_end *e) {
    if (prev) prev->next = e->next; else q->head = e->next;
    if (q->tail == e) q->tail = prev;
    e->next = NULL;
}

/* Unlinks e from q if it is there; 1 if it was. */
static int redcoll__ho_remove(redcoll__ho_queue *q, redcoll__ho_end *e) {
    redcoll__ho_end *prev = NULL, *f;
    for (f = q->head; f && f != e; f = f->next) prev = f;
    if (f) redcoll__ho_unlink(q, prev, f);
    return f != NULL;
}

static void redcoll__ho_end_init(redcoll__ho_end *e, int is_send, int peer, const void *sbuf,
                                 void *rbuf, const redcoll_consumer *into, size_t bytes, int tag) {
    e->next = NULL;
    e->is_send = is_send; e->peer = peer; e->tag = tag;
    e->slot = 0; e->desc = -1; e->watched = 0; e->eager = 0;
    e->state = REDCOLL__HO_WAIT;
    e->sbuf = sbuf; e->rbuf = rbuf; e->into = into; e->bytes = bytes;
    e->moved = e->fed = e->carried = 0;
    e->carry = e->small;
    e->line = NULL;
    e->posted = 0;
    e->res = REDCOLL_OK;
}

/* Ends are private to their rank: plain stores. */
static void redcoll__ho_finish(redcoll__ho_end *e, redcoll_result res) {
    e->res = res;
    e->state = REDCOLL__HO_END_DONE;
}

/* ---- abort and wake-ups ------------------------------------------------------------ */

static int redcoll__ho_aborted(const redcoll__ho_me *me) {
    return redcoll__ho_load(&me->sh->aborted) != 0;
}

/* Wakes rank d if it sleeps. Call after the sequentially consistent store
   that published what d waits for: d either sees that store or is seen
   asleep. */
static void redcoll__ho_kick(const redcoll__ho_me *me, int d) {
    redcoll__ho_peer *pd = &me->peers[d];
    int one = 1;
    if (!redcoll__ho_load(&pd->sleeping)) return;
    redcoll__ho_add(&pd->wake, 1u);
    /* a kicked rank leaves the idle count at once: it never holds a rank whose wake-up is on the way */
    if (redcoll__ho_cas(&me->waits[d].counted, &one, 0)) redcoll__ho_add(&me->sh->idle, -1);
    redcoll__ho_futex_wake(me, &pd->wake);
}

/* What a blocked call returns once the fabric is aborted: the deadlock
   detector's verdict, else ABORTED. */
static redcoll_result redcoll__ho_verdict(const redcoll__ho_me *me) {
    int r = redcoll__ho_load(&me->sh->release);
    return r ? (redcoll_result)r : REDCOLL_ERR_ABORTED;
}

/* Keeps the first account of ranks that disagree or deadlock in the fabric
   (every rank can read it) and hands it to the tell hook. */
static void redcoll__ho_tell(redcoll__ho_me *me, const char *text) {
    int none = 0;
    if (!redcoll__ho_cas(&me->sh->told, &none, 1)) return;
    snprintf(me->report, REDCOLL__HO_REPORT, "%s", text);
    redcoll__ho_store(&me->sh->told, 2);
    if (me->hooks.tell) me->hooks.tell(me, text);
}

/* The account, or NULL when nobody has written one. */
static const char *redcoll__ho_account(const redcoll__ho_me *me) {
    return redcoll__ho_load(&me->sh->told) == 2 ? me->report : NULL;
}

/* Marks the fabric aborted (the first reason stays) and wakes every rank. */
static void redcoll__ho_abort(redcoll__ho_me *me, redcoll_result why) {
    int i, none = 0;
    if (why == REDCOLL_OK) why = REDCOLL_ERR_ABORTED;
    redcoll__ho_cas(&me->sh->why, &none, (int)why);
    redcoll__ho_store(&me->sh->aborted, 1);
    for (i = 0; i < me->size; ++i) redcoll__ho_kick(me, i);
}

/* ---- cells ------------------------------------------------------------------------- */

/* A free cell of this rank, taken; -1 if none. Only the owner clears bits. */
static int redcoll__ho_take_cell(redcoll__ho_me *me) {
    redcoll__ho_au64 *mask = &me->peers[me->rank].freecells;
    unsigned long long m = redcoll__ho_load(mask);
    int k = 0;
    if (!m) return -1;
    while (!((m >> k) & 1ull)) ++k;
    redcoll__ho_and(mask, ~(1ull << k));
    return k;
}

static void redcoll__ho_free_cell(redcoll__ho_me *me, int owner, int k) {
    redcoll__ho_or(&me->peers[owner].freecells, 1ull << k);
}

/* The sender frees the cells of chunks produced but never consumed (a
   transfer its receiver refused or gave up); the receiver no longer
   touches them. */
static void redcoll__ho_reclaim(redcoll__ho_me *me, redcoll__ho_line *l) {
    unsigned k, prod = redcoll__ho_peek(&l->u.pipe.produced);
    for (k = redcoll__ho_load(&l->u.pipe.consumed); k != prod; ++k)
        redcoll__ho_free_cell(me, me->rank, l->u.pipe.cell[k % REDCOLL__HO_RING]);
    redcoll__ho_store(&l->u.pipe.consumed, prod);
}

/* ---- posting sends ------------------------------------------------------------------ */

/* Whether [p, p + n) lies in the fabric. */
static int redcoll__ho_inside(const redcoll__ho_me *me, const void *p, size_t n) {
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)me->base;
    return a >= b && a - b <= me->total && n <= me->total - (a - b);
}

/* How a send of e->bytes from e->sbuf reaches rank dst. */
static unsigned redcoll__ho_mode(const redcoll__ho_me *me, const redcoll__ho_end *e, int in_slot) {
    if (e->bytes <= REDCOLL__HO_INLINE && (in_slot || !me->one_process)) return REDCOLL__HO_INLINE_MODE;
    if (me->one_process || e->peer == me->rank) return REDCOLL__HO_PTR;
    if (redcoll__ho_inside(me, e->sbuf, e->bytes)) return REDCOLL__HO_SEG;
    if (me->cma && me->cma[(size_t)e->peer * (size_t)me->size + (size_t)me->rank] &&
        e->bytes >= me->cma_min)
        return REDCOLL__HO_CMA;
    return me->lay.ncells > 0 ? REDCOLL__HO_CELLS : REDCOLL__HO_CMA;
}

/* Fills line l for send e in mode m (everything but the state). */
static void redcoll__ho_fill(const redcoll__ho_me *me, redcoll__ho_line *l, const redcoll__ho_end *e,
                             unsigned m) {
    redcoll__ho_poke(&l->tag, e->tag);
    l->mode = m;
    l->bytes = (uint64_t)e->bytes;
    l->where = m == REDCOLL__HO_SEG ? (uint64_t)((uintptr_t)e->sbuf - (uintptr_t)me->base)
                                    : (uint64_t)(uintptr_t)e->sbuf;
    if (m == REDCOLL__HO_INLINE_MODE) {
        if (e->bytes) memcpy(l->u.data, e->sbuf, e->bytes);
    } else if (m == REDCOLL__HO_CELLS || m == REDCOLL__HO_CMA) { /* CMA: its receiver may pump */
        redcoll__ho_poke(&l->u.pipe.produced, 0u);
        redcoll__ho_poke(&l->u.pipe.consumed, 0u);
    }
}

/* Starts looking after send e in progress (sends through cells or CMA). */
static void redcoll__ho_watch(redcoll__ho_me *me, redcoll__ho_end *e) {
    e->watched = 1;
    redcoll__ho_push(&me->watch, e);
}

static void redcoll__ho_unwatch(redcoll__ho_me *me, redcoll__ho_end *e) {
    if (!e->watched) return;
    redcoll__ho_remove(&me->watch, e);
    e->watched = 0;
}

/* The sender's slot i of ch if it is drained (settling what sat in it),
   else NULL. The receiver wrote the line last: one read for ownership. */
static redcoll__ho_line *redcoll__ho_vacant(redcoll__ho_me *me, redcoll__ho_chan *ch, int dst, int i) {
    redcoll__ho_line *l = &ch->slot[i];
    unsigned s = redcoll__ho_own(&l->state);
    redcoll__ho_end **occ = &me->occupant[(size_t)dst * 2 + (size_t)i];
    if (!REDCOLL__HO_DRAINED(s)) return NULL;
    if (*occ) { /* an earlier send whose receiver is done (a CMA one is watched: unwatched
                   here, or its record, reused once finished, would stay in `watch`) */
        redcoll__ho_unwatch(me, *occ);
        redcoll__ho_finish(*occ, REDCOLL__HO_ST(s) == REDCOLL__HO_DONE ? REDCOLL_OK
                                                                   : REDCOLL_ERR_TRANSPORT);
        *occ = NULL;
    }
    if (l->mode == REDCOLL__HO_CELLS && REDCOLL__HO_ST(s) != REDCOLL__HO_DONE &&
        REDCOLL__HO_ST(s) != REDCOLL__HO_FREE)
        redcoll__ho_reclaim(me, l);
    return l;
}

/* Acquires a channel's queue lock; 0 if the fabric was aborted meanwhile
   (a holder that died is noticed by the liveness hook of some rank). */
static int redcoll__ho_lock(redcoll__ho_me *me, redcoll__ho_chan *ch) {
    long spins = 0;
    while (redcoll__ho_xchg(&ch->lock, 1)) {
        if (++spins % 1024 == 0) {
            if (redcoll__ho_aborted(me)) return 0;
            if (me->hooks.alive && me->hooks.alive(me) != REDCOLL_OK) {
                redcoll__ho_abort(me, REDCOLL_ERR_ABORTED);
                return 0;
            }
            sched_yield();
        } else {
            redcoll__ho_pause();
        }
    }
    return 1;
}

static void redcoll__ho_unlock(redcoll__ho_chan *ch) {
    redcoll__ho_release(&ch->lock, 0);
}

/* Returns a finished send's slot or descriptor to the sender's bookkeeping. */
static void redcoll__ho_settle(redcoll__ho_me *me, redcoll__ho_end *e) {
    redcoll__ho_end **occ;
    redcoll__ho_unwatch(me, e);
    if (e->slot) {
        occ = &me->occupant[(size_t)e->peer * 2 + (size_t)(e->slot - 1)];
        if (*occ == e) *occ = NULL;
    } else if (e->desc >= 0) {
        me->descfree[me->ndescfree++] = e->desc;
        e->desc = -1;
    }
}

static void redcoll__ho_serve_send(redcoll__ho_me *me, redcoll__ho_end *e);

/* Posts send e into a slot (when nothing is queued on the channel: FIFO)
   or a descriptor of the overflow queue; 0 when both are taken. An inline
   send in a slot is complete at once; a send through cells in a slot is
   pushed at once (published first, filled as it goes, complete with its
   last chunk); the others wait for their receiver. */
static int redcoll__ho_try_post(redcoll__ho_me *me, redcoll__ho_end *e) {
    int dst = e->peer, i = 0;
    redcoll__ho_chan *ch = redcoll__ho_chan_of(me, me->rank, dst);
    redcoll__ho_line *l = NULL;
    unsigned m, *posts = &me->posts[dst];
    if (redcoll__ho_load(&ch->nover) == 0) {
        i = (int)(*posts & 1u); /* posts alternate while both slots drain in time */
        if (!(l = redcoll__ho_vacant(me, ch, dst, i))) l = redcoll__ho_vacant(me, ch, dst, i ^= 1);
    }
    if (l) {
        m = redcoll__ho_mode(me, e, 1);
        ++*posts;
        redcoll__ho_fill(me, l, e, m);
        e->line = l;
        e->slot = i + 1;
        if (m == REDCOLL__HO_INLINE_MODE) {
            redcoll__ho_finish(e, REDCOLL_OK);
            redcoll__ho_store(&l->state, *posts << 3 | REDCOLL__HO_EAGER);
        } else if (m == REDCOLL__HO_CELLS) {
            e->eager = 1;
            redcoll__ho_watch(me, e);
            redcoll__ho_store(&l->state, *posts << 3 | REDCOLL__HO_EAGER);
            redcoll__ho_serve_send(me, e);
        } else {
            me->occupant[(size_t)dst * 2 + (size_t)i] = e;
            if (m == REDCOLL__HO_CMA) redcoll__ho_watch(me, e); /* its receiver may ask for cells */
            redcoll__ho_store(&l->state, *posts << 3 | REDCOLL__HO_POSTED);
        }
        redcoll__ho_kick(me, dst);
        return 1;
    }
    if (me->ndescfree == 0) return 0;
    if (!redcoll__ho_lock(me, ch)) { redcoll__ho_finish(e, REDCOLL_ERR_ABORTED); return 1; }
    e->desc = me->descfree[--me->ndescfree];
    l = redcoll__ho_desc(me, me->rank, e->desc);
    m = redcoll__ho_mode(me, e, 0);
    redcoll__ho_fill(me, l, e, m);
    l->next = -1;
    e->line = l;
    redcoll__ho_store(&l->state, REDCOLL__HO_POSTED);
    if (ch->tail >= 0) redcoll__ho_desc(me, me->rank, ch->tail)->next = e->desc;
    else ch->head = e->desc;
    ch->tail = e->desc;
    redcoll__ho_add(&ch->nover, 1);
    redcoll__ho_unlock(ch);
    if (m == REDCOLL__HO_CELLS || m == REDCOLL__HO_CMA) redcoll__ho_watch(me, e);
    redcoll__ho_kick(me, dst);
    return 1;
}

/* Posts send e, behind the sends to the same rank still waiting to be. */
static void redcoll__ho_post(redcoll__ho_me *me, redcoll__ho_end *e) {
    redcoll__ho_queue *q = &me->unposted[e->peer];
    if (redcoll__ho_aborted(me)) { redcoll__ho_finish(e, REDCOLL_ERR_ABORTED); return; }
    if (q->head || !redcoll__ho_try_post(me, e)) {
        redcoll__ho_push(q, e);
        ++me->nunposted;
    }
}

/* Sends waiting to be posted, in order, as slots and descriptors free up. */
static void redcoll__ho_post_waiting(redcoll__ho_me *me) {
    int d;
    for (d = 0; d < me->size && me->nunposted; ++d) {
        redcoll__ho_queue *q = &me->unposted[d];
        while (q->head) {
            redcoll__ho_end *e = q->head;
            redcoll__ho_unlink(q, NULL, e); /* first: posting may link it elsewhere */
            --me->nunposted;
            if (!redcoll__ho_try_post(me, e)) { /* back at the head */
                e->next = q->head;
                q->head = e;
                if (!q->tail) q->tail = e;
                ++me->nunposted;
                break;
            }
        }
    }
}

/* Serves a send through cells or CMA: settles it when its receiver is done
   (or refused it, or gave up), and pushes chunks while its line asks for
   them (an eager slot send, or a receiver that claimed with PUMP), as many
   as the ring and the free cells allow. An eager send completes with its
   last chunk. */
static void redcoll__ho_serve_send(redcoll__ho_me *me, redcoll__ho_end *e) {
    redcoll__ho_line *l = e->line;
    unsigned s = redcoll__ho_load(&l->state), st = REDCOLL__HO_ST(s), prod, cons;
    size_t cb = me->lay.cell_bytes;
    int depth = me->lay.ncells < REDCOLL__HO_RING ? me->lay.ncells : REDCOLL__HO_RING, k, made = 0;
    if (st == REDCOLL__HO_DONE || st == REDCOLL__HO_MISMATCH || st == REDCOLL__HO_CANCEL) {
        if (l->mode == REDCOLL__HO_CELLS && st != REDCOLL__HO_DONE) redcoll__ho_reclaim(me, l);
        redcoll__ho_settle(me, e);
        redcoll__ho_finish(e, st == REDCOLL__HO_DONE ? REDCOLL_OK : st == REDCOLL__HO_MISMATCH
                                                                 ? REDCOLL_ERR_TRANSPORT : REDCOLL_ERR_ABORTED);
        return;
    }
    if (st == REDCOLL__HO_PUMP) l->mode = REDCOLL__HO_CELLS; /* its cells are reclaimed as such */
    if (!(st == REDCOLL__HO_PUMP || (e->eager && e->moved < e->bytes))) return;
    prod = redcoll__ho_peek(&l->u.pipe.produced);
    cons = redcoll__ho_load(&l->u.pipe.consumed);
    while (e->moved < e->bytes && (int)(prod - cons) < depth && (k = redcoll__ho_take_cell(me)) >= 0) {
        size_t n = e->bytes - e->moved < cb ? e->bytes - e->moved : cb;
        memcpy(redcoll__ho_cell(me, me->rank, k), (const char *)e->sbuf + e->moved, n);
        l->u.pipe.cell[prod % REDCOLL__HO_RING] = (unsigned char)k;
        e->moved += n;
        redcoll__ho_store(&l->u.pipe.produced, ++prod);
        made = 1;
        if ((int)(prod - cons) >= depth) cons = redcoll__ho_load(&l->u.pipe.consumed);
    }
    if (made) redcoll__ho_kick(me, e->peer);
    if (e->eager && e->moved == e->bytes) { /* the receiver has all it needs */
        redcoll__ho_unwatch(me, e);
        redcoll__ho_finish(e, REDCOLL_OK);
    }
}

/* ---- receiving ---------------------------------------------------------------------- */

/* How receive e claims a posted send in `mode`: PUMP (the sender pushes
   cells) where the bytes are not readable here, where a plain copy is
   below pull_min, or where a reduction has no stage (or a unit larger than
   it), else CLAIMED (read where they are: a CMA reduction pulls a chunk
   into the stage and reduces it from there while it is in cache, chunk
   after chunk, one pass over the sender's bytes on one core). */
static unsigned redcoll__ho_want(const redcoll__ho_me *me, const redcoll__ho_end *e, unsigned mode) {
    if (mode == REDCOLL__HO_CELLS) return REDCOLL__HO_PUMP;
    if (mode != REDCOLL__HO_CMA) return REDCOLL__HO_CLAIMED;
    if (e->into) return me->stage_bytes >= e->into->unit ? REDCOLL__HO_CLAIMED : REDCOLL__HO_PUMP;
    return e->bytes >= me->pull_min || me->lay.ncells == 0 ? REDCOLL__HO_CLAIMED : REDCOLL__HO_PUMP;
}

/* Claims the older of ch's slots that holds a posted send with `tag` (FIFO)
   and returns it with its state in *s; NULL when there is none. An EAGER
   send is taken without a compare-and-swap (its sender never withdraws
   it); a POSTED one is claimed as `want(mode)`. The two states are read as
   one snapshot: slot 0 again after slot 1, else two posts landing between
   the reads (slot 0, then slot 1) would show the newer one alone.
   *posted says whether a slot holds a send nobody took (then it is older
   than every queued one). The stream rule (REDCOLL_TAG_MAX in redcoll.h):
   when the oldest of them carries another call's tag, NULL with that tag in
   *other (the sender makes another call). */
static redcoll__ho_line *redcoll__ho_claim(const redcoll__ho_me *me, redcoll__ho_chan *ch, unsigned *s, int tag,
                                           const redcoll__ho_end *e, int *posted, int *other) {
    redcoll__ho_line *sl = NULL;
    unsigned t[2], oldest = 0;
    int i, at = -1;
    do {
        t[0] = redcoll__ho_load(&ch->slot[0].state);
        t[1] = redcoll__ho_load(&ch->slot[1].state);
    } while (redcoll__ho_load(&ch->slot[0].state) != t[0]);
    for (i = 0; i < 2; ++i) {
        if (REDCOLL__HO_ST(t[i]) != REDCOLL__HO_POSTED && REDCOLL__HO_ST(t[i]) != REDCOLL__HO_EAGER) continue;
        if (at < 0 || REDCOLL__HO_OLDER(t[i], oldest)) { at = i; oldest = t[i]; }
        if (redcoll__ho_peek(&ch->slot[i].tag) == tag && (!sl || REDCOLL__HO_OLDER(t[i], *s))) {
            sl = &ch->slot[i];
            *s = t[i];
        }
    }
    *posted = at >= 0;
    if (at >= 0 && REDCOLL_TAG_OTHER_CALL(tag, redcoll__ho_peek(&ch->slot[at].tag))) {
        *other = redcoll__ho_peek(&ch->slot[at].tag);
        return NULL;
    }
    if (!sl || REDCOLL__HO_ST(*s) == REDCOLL__HO_EAGER) return sl;
    {
        unsigned want = redcoll__ho_want(me, e, sl->mode);
        if (!redcoll__ho_cas(&sl->state, s, (*s & ~7u) | want)) return NULL;
        *s = (*s & ~7u) | want;
    }
    return sl;
}

/* Takes the oldest queued descriptor with `tag` off ch (under its lock). */
static redcoll__ho_line *redcoll__ho_dequeue(const redcoll__ho_me *me, redcoll__ho_chan *ch, int src,
                                             int tag) {
    int k = ch->head, prev = -1;
    redcoll__ho_line *l = NULL;
    while (k >= 0) {
        l = redcoll__ho_desc(me, src, k);
        if (redcoll__ho_peek(&l->tag) == tag) break;
        prev = k;
        k = l->next;
    }
    if (k < 0) return NULL;
    if (prev >= 0) redcoll__ho_desc(me, src, prev)->next = l->next; else ch->head = l->next;
    if (ch->tail == k) ch->tail = prev;
    redcoll__ho_add(&ch->nover, -1);
    return l;
}

/* The consumer's carry for end e: its own bytes, or the rank's big buffer
   for a unit above REDCOLL__HO_CARRY (a second such receive at the same
   time gets a buffer of its own). 0 when out of memory. */
static int redcoll__ho_carry_for(redcoll__ho_me *me, redcoll__ho_end *e) {
    size_t u = e->into->unit;
    if (u <= REDCOLL__HO_CARRY) { e->carry = e->small; return 1; }
    if (!me->big_user) {
        if (me->big_bytes < u) {
            unsigned char *b = (unsigned char *)REDCOLL_MALLOC(u);
            if (!b) return 0;
            if (me->big) REDCOLL_FREE(me->big);
            me->big = b;
            me->big_bytes = u;
        }
        me->big_user = e;
        e->carry = me->big;
        return 1;
    }
    e->carry = (unsigned char *)REDCOLL_MALLOC(u);
    return e->carry != NULL;
}

static void redcoll__ho_carry_done(redcoll__ho_me *me, redcoll__ho_end *e) {
    if (e->carry == e->small || !e->carry) return;
    if (e->carry == me->big) me->big_user = NULL;
    else REDCOLL_FREE(e->carry);
    e->carry = e->small;
}

/* Hands the next n bytes of the message (at offset e->moved) to receive e:
   copied into rbuf, or given to the consumer in whole units, a unit split
   between two pieces joined in the carry first. */
static void redcoll__ho_piece(redcoll__ho_end *e, const unsigned char *src, size_t n) {
    const redcoll_consumer *c = e->into;
    size_t u, whole;
    if (!c) { memcpy((char *)e->rbuf + e->moved, src, n); return; }
    u = c->unit;
    if (e->carried) {
        size_t m = u - e->carried < n ? u - e->carried : n;
        memcpy(e->carry + e->carried, src, m);
        e->carried += m; src += m; n -= m;
        if (e->carried < u) return;
        c->fn(c->arg, e->carry, e->fed, u);
        e->fed += u;
        e->carried = 0;
    }
    whole = n / u * u;
    if (whole) { c->fn(c->arg, src, e->fed, whole); e->fed += whole; }
    if (n > whole) { memcpy(e->carry, src + whole, n - whole); e->carried = n - whole; }
}

/* The whole message at once (it is readable where it is). */
static void redcoll__ho_whole(redcoll__ho_end *e, const void *src) {
    if (e->bytes == 0) return;
    if (e->into) e->into->fn(e->into->arg, src, 0, e->bytes);
    else memcpy(e->rbuf, src, e->bytes);
}

/* A CMA payload: a copy straight into rbuf, or a reduction through the
   stage, a chunk (whole units) at a time. */
static redcoll_result redcoll__ho_pull(redcoll__ho_me *me, redcoll__ho_end *e, uint64_t from) {
    int err = 0;
    if (e->bytes == 0) return REDCOLL_OK;
    if (!me->hooks.pull) return REDCOLL_ERR_TRANSPORT;
    if (!e->into) {
        err = me->hooks.pull(me, e->peer, e->rbuf, from, e->bytes);
    } else {
        size_t chunk = me->stage_bytes / e->into->unit * e->into->unit, at, n;
        if (chunk == 0) return REDCOLL_ERR_TRANSPORT;
        for (at = 0; at < e->bytes && err == 0; at += n) {
            n = e->bytes - at < chunk ? e->bytes - at : chunk;
            err = me->hooks.pull(me, e->peer, me->stage, from + at, n);
            if (err == 0) e->into->fn(e->into->arg, me->stage, at, n);
        }
    }
    return err == 0 ? REDCOLL_OK : err == ESRCH ? REDCOLL_ERR_ABORTED : REDCOLL_ERR_TRANSPORT;
}

/* Copies or reduces the chunks of active receive e that have arrived.
   Returns 1 when the message is complete. */
static int redcoll__ho_consume(redcoll__ho_me *me, redcoll__ho_end *e) {
    redcoll__ho_line *l = e->line;
    unsigned prod = redcoll__ho_load(&l->u.pipe.produced), cons = redcoll__ho_peek(&l->u.pipe.consumed);
    size_t cb = me->lay.cell_bytes;
    int got = 0;
    while (cons != prod) {
        int k = l->u.pipe.cell[cons % REDCOLL__HO_RING];
        size_t n = e->bytes - e->moved < cb ? e->bytes - e->moved : cb;
        redcoll__ho_piece(e, (const unsigned char *)redcoll__ho_cell(me, e->peer, k), n);
        e->moved += n;
        redcoll__ho_free_cell(me, e->peer, k);
        redcoll__ho_store(&l->u.pipe.consumed, ++cons);
        got = 1;
    }
    if (e->moved < e->bytes) {
        if (got) redcoll__ho_kick(me, e->peer); /* room for the sender's next chunks */
        return 0;
    }
    redcoll__ho_carry_done(me, e);
    redcoll__ho_store(&l->state, (redcoll__ho_peek(&l->state) & ~7u) | REDCOLL__HO_DONE);
    redcoll__ho_kick(me, e->peer);
    redcoll__ho_finish(e, REDCOLL_OK);
    return 1;
}

/* Matches receive e with the oldest send from e->peer with its tag, and
   copies, reduces, or starts consuming cells. Returns 1 on a match. */
static int redcoll__ho_match(redcoll__ho_me *me, redcoll__ho_end *e) {
    redcoll__ho_chan *ch = redcoll__ho_chan_of(me, e->peer, me->rank);
    redcoll__ho_line *l;
    redcoll_result res = REDCOLL_OK;
    unsigned s = 0, st, done;
    int posted, other = -1;
    l = redcoll__ho_claim(me, ch, &s, e->tag, e, &posted, &other);
    if (!l && other < 0) {
        if (redcoll__ho_load(&ch->nover) == 0) return 0;
        if (!redcoll__ho_lock(me, ch)) return 0;
        /* seen a queued send: look at the slots again, whose sends are older */
        l = redcoll__ho_claim(me, ch, &s, e->tag, e, &posted, &other);
        if (!l && other < 0 && !posted && ch->head >= 0) { /* the queue's head is the oldest */
            int first = redcoll__ho_peek(&redcoll__ho_desc(me, e->peer, ch->head)->tag);
            if (REDCOLL_TAG_OTHER_CALL(e->tag, first)) other = first;
        }
        if (!l && other < 0 && (l = redcoll__ho_dequeue(me, ch, e->peer, e->tag)) != NULL) {
            s = redcoll__ho_want(me, e, l->mode);
            redcoll__ho_store(&l->state, s);
        }
        redcoll__ho_unlock(ch);
        if (!l && other < 0) return 0;
    }
    if (other >= 0) { /* the peer makes another call: this receive fails, the send stays */
        char a[32], b[32], pair[256], text[320];
        snprintf(a, sizeof a, "rank %d", e->peer);
        snprintf(b, sizeof b, "rank %d", me->rank);
        snprintf(text, sizeof text, "%s: %s\n", redcoll_result_string(REDCOLL_ERR_MISMATCH),
                 redcoll_tag_disagree(a, other, b, e->tag, pair, sizeof pair));
        redcoll__ho_tell(me, text);
        redcoll__ho_finish(e, REDCOLL_ERR_MISMATCH);
        return 1;
    }
    st = REDCOLL__HO_ST(s);
    if (st == REDCOLL__HO_EAGER && l->mode == REDCOLL__HO_CELLS) {
        /* taken (its sender may withdraw it until then): no later receive matches it */
        unsigned want = (s & ~7u) | REDCOLL__HO_CLAIMED;
        if (!redcoll__ho_cas(&l->state, &s, want)) return 0;
        s = want;
        st = REDCOLL__HO_CLAIMED;
    }
    if (l->bytes != (uint64_t)e->bytes) { /* both ends fail (an eager sender has returned) */
        if (st == REDCOLL__HO_EAGER) {
            redcoll__ho_release(&l->state, (s & ~7u) | REDCOLL__HO_MISMATCH);
        } else {
            redcoll__ho_store(&l->state, (s & ~7u) | REDCOLL__HO_MISMATCH);
            redcoll__ho_kick(me, e->peer);
        }
        redcoll__ho_finish(e, REDCOLL_ERR_TRANSPORT);
        return 1;
    }
    if (l->mode == REDCOLL__HO_CELLS || st == REDCOLL__HO_PUMP) {
        if (st == REDCOLL__HO_PUMP) redcoll__ho_kick(me, e->peer); /* the sender starts pushing */
        if (e->into && !redcoll__ho_carry_for(me, e)) {
            redcoll__ho_store(&l->state, (s & ~7u) | REDCOLL__HO_CANCEL);
            redcoll__ho_kick(me, e->peer);
            redcoll__ho_finish(e, REDCOLL_ERR_OUT_OF_MEMORY);
            return 1;
        }
        e->line = l;
        e->state = REDCOLL__HO_ACTIVE;
        redcoll__ho_consume(me, e);
        return 1;
    }
    switch (l->mode) {
    case REDCOLL__HO_INLINE_MODE: redcoll__ho_whole(e, l->u.data); break;
    case REDCOLL__HO_PTR: redcoll__ho_whole(e, (const void *)(uintptr_t)l->where); break;
    case REDCOLL__HO_SEG: redcoll__ho_whole(e, me->base + l->where); break;
    default: res = redcoll__ho_pull(me, e, l->where); break;
    }
    done = (s & ~7u) | (res == REDCOLL_OK ? REDCOLL__HO_DONE : REDCOLL__HO_MISMATCH);
    if (st == REDCOLL__HO_EAGER) { /* nobody waits for this DONE: no fence, no kick */
        redcoll__ho_release(&l->state, done);
    } else {
        redcoll__ho_store(&l->state, done);
        redcoll__ho_kick(me, e->peer);
    }
    redcoll__ho_finish(e, res);
    return 1;
}

/* Posts what waits to be posted, serves the sends through cells or CMA,
   and serves the rank's pending receives in posting order (any call's: a
   progress guarantee for irecvs). A receive is skipped while an older
   pending one with the same source and tag is unmatched: FIFO per
   (source, tag). */
static void redcoll__ho_progress(redcoll__ho_me *me) {
    redcoll__ho_end *e, *prev = NULL;
    if (me->nunposted) redcoll__ho_post_waiting(me);
    for (e = me->watch.head; e;) {
        redcoll__ho_end *next = e->next;
        redcoll__ho_serve_send(me, e);
        e = next;
    }
    e = me->pending.head;
    while (e) {
        redcoll__ho_end *next = e->next, *f;
        int gone = 0;
        if (e->state == REDCOLL__HO_ACTIVE) {
            gone = redcoll__ho_consume(me, e);
        } else {
            for (f = me->pending.head;
                 f != e && (f->state == REDCOLL__HO_ACTIVE || f->peer != e->peer || f->tag != e->tag);
                 f = f->next) {}
            gone = f == e && redcoll__ho_match(me, e) && e->state == REDCOLL__HO_END_DONE;
        }
        if (gone) redcoll__ho_unlink(&me->pending, prev, e);
        else prev = e;
        e = next;
    }
}

/* A send is done when its receiver has stored DONE (or refused it); only
   the sender looks, and its slot or descriptor then takes its next send.
   Watched sends are settled by redcoll__ho_serve_send. */
static int redcoll__ho_done(redcoll__ho_me *me, redcoll__ho_end *e) {
    unsigned s;
    if (e->state == REDCOLL__HO_END_DONE) return 1;
    if (!e->is_send || !e->line || e->watched) return 0;
    s = redcoll__ho_load(&e->line->state);
    if (REDCOLL__HO_ST(s) != REDCOLL__HO_DONE && REDCOLL__HO_ST(s) != REDCOLL__HO_MISMATCH) return 0;
    redcoll__ho_settle(me, e);
    redcoll__ho_finish(e, REDCOLL__HO_ST(s) == REDCOLL__HO_DONE ? REDCOLL_OK : REDCOLL_ERR_TRANSPORT);
    return 1;
}

static int redcoll__ho_all_done(redcoll__ho_me *me, redcoll__ho_end **ends, int n) {
    int i;
    for (i = 0; i < n; ++i)
        if (!redcoll__ho_done(me, ends[i])) return 0;
    return 1;
}

/* Takes send e's descriptor out of the overflow queue if no receiver has
   taken it; 1 if it did. */
static int redcoll__ho_unqueue(redcoll__ho_me *me, redcoll__ho_end *e) {
    redcoll__ho_chan *ch = redcoll__ho_chan_of(me, me->rank, e->peer);
    int k, prev = -1, gone = 0;
    if (!redcoll__ho_lock(me, ch)) return 0;
    for (k = ch->head; k >= 0 && k != e->desc; k = redcoll__ho_desc(me, me->rank, k)->next) prev = k;
    if (k >= 0) {
        if (prev >= 0) redcoll__ho_desc(me, me->rank, prev)->next = e->line->next;
        else ch->head = e->line->next;
        if (ch->tail == k) ch->tail = prev;
        redcoll__ho_add(&ch->nover, -1);
        redcoll__ho_store(&e->line->state, REDCOLL__HO_FREE);
        gone = 1;
    }
    redcoll__ho_unlock(ch);
    return gone;
}

/* Withdraws every end of this call nobody has taken yet, failing it with
   `why`. Taken ones go on (a copy under way) unless the fabric is aborted:
   then a transfer with another process is dropped (its peer stops too).
   A receive consuming cells is given up: its sender stops pushing. */
static void redcoll__ho_withdraw(redcoll__ho_me *me, redcoll__ho_end **ends, int n, redcoll_result why) {
    int i, aborted = redcoll__ho_aborted(me);
    for (i = 0; i < n; ++i) {
        redcoll__ho_end *e = ends[i];
        redcoll__ho_line *l = e->line;
        unsigned s;
        int gone = 0;
        if (redcoll__ho_done(me, e)) continue;
        if (!e->is_send) {
            redcoll__ho_remove(&me->pending, e);
            if (e->state == REDCOLL__HO_ACTIVE) {
                redcoll__ho_store(&l->state, (redcoll__ho_peek(&l->state) & ~7u) | REDCOLL__HO_CANCEL);
                redcoll__ho_kick(me, e->peer);
                redcoll__ho_carry_done(me, e);
            }
            redcoll__ho_finish(e, why);
            continue;
        }
        if (!l) { /* not posted yet */
            if (redcoll__ho_remove(&me->unposted[e->peer], e)) --me->nunposted;
            redcoll__ho_finish(e, why);
            continue;
        }
        s = redcoll__ho_load(&l->state);
        if (e->slot && REDCOLL__HO_ST(s) == REDCOLL__HO_POSTED)
            gone = redcoll__ho_cas(&l->state, &s, (s & ~7u) | REDCOLL__HO_FREE);
        else if (e->slot && REDCOLL__HO_ST(s) == REDCOLL__HO_EAGER) /* pushed, not taken */
            gone = redcoll__ho_cas(&l->state, &s, (s & ~7u) | REDCOLL__HO_CANCEL);
        else if (!e->slot && REDCOLL__HO_ST(s) == REDCOLL__HO_POSTED)
            gone = redcoll__ho_unqueue(me, e);
        if (gone) {
            if (l->mode == REDCOLL__HO_CELLS) redcoll__ho_reclaim(me, l);
            redcoll__ho_settle(me, e);
            redcoll__ho_finish(e, why);
        } else if (aborted && l->mode != REDCOLL__HO_PTR) {
            /* the line stays taken: the fabric is done with */
            if (l->mode == REDCOLL__HO_CELLS)
                redcoll__ho_store(&l->state, (redcoll__ho_peek(&l->state) & ~7u) | REDCOLL__HO_CANCEL);
            redcoll__ho_unwatch(me, e);
            if (e->slot) me->occupant[(size_t)e->peer * 2 + (size_t)(e->slot - 1)] = NULL;
            redcoll__ho_finish(e, why);
        }
    }
}

/* ---- waiting -------------------------------------------------------------------------- */

static void redcoll__ho_detect(redcoll__ho_me *me);

/* Writes what this rank waits for into its record, for the detector. */
static void redcoll__ho_publish(redcoll__ho_me *me) {
    redcoll__ho_waits *w = &me->waits[me->rank];
    redcoll__ho_end *e;
    int n = 0, more = 0;
    for (e = me->pending.head; e; e = e->next) {
        if (n == REDCOLL__HO_WAITS) { ++more; continue; }
        w->recv[n].peer = e->peer;
        w->recv[n].tag = e->tag;
        w->recv[n].reduce = (e->into != NULL) | (e->state == REDCOLL__HO_ACTIVE) << 1;
        w->recv[n].bytes = e->bytes;
        ++n;
    }
    w->n = n;
    w->more = more;
}

/* Sleeps until a peer kicks this rank, or ns nanoseconds (< 0: no limit).
   Announces the sleep first and then looks once more, so no kick is lost.
   With the detector on, a rank about to sleep publishes what it waits for
   and joins the idle count (a kick takes it out again); the one whose
   joining makes the count p runs the detector: every rank is then asleep
   or finished, and it costs nothing while any rank works. Returns 1 when
   a peer kicked the rank (its wake word moved), 0 when the time ran out. */
static int redcoll__ho_sleep(redcoll__ho_me *me, redcoll__ho_end **ends, int n, int wake_on_abort,
                             long long ns) {
    redcoll__ho_peer *pm = &me->peers[me->rank];
    redcoll__ho_waits *w = &me->waits[me->rank];
    unsigned seen = redcoll__ho_load(&pm->wake);
    int one = 1;
    redcoll__ho_store(&pm->sleeping, 1);
    redcoll__ho_progress(me);
    if (!redcoll__ho_all_done(me, ends, n) && !(wake_on_abort && redcoll__ho_aborted(me))) {
        if (me->detect) {
            redcoll__ho_publish(me);
            redcoll__ho_store(&w->seen, seen);
            redcoll__ho_store(&w->counted, 1);
            if (redcoll__ho_add_fetch(&me->sh->idle, 1) == me->size) redcoll__ho_detect(me);
        }
        redcoll__ho_futex_wait(me, &pm->wake, seen, ns);
        if (me->detect && redcoll__ho_cas(&w->counted, &one, 0)) redcoll__ho_add(&me->sh->idle, -1);
    }
    redcoll__ho_store(&pm->sleeping, 0);
    return redcoll__ho_load(&pm->wake) != seen;
}

/* The end of this call that waits for a peer that has left (it never
   completes), or NULL. What the peer posted before it left is matched first. */
static redcoll__ho_end *redcoll__ho_stranded(redcoll__ho_me *me, redcoll__ho_end **ends, int n) {
    redcoll__ho_end *any = NULL;
    int i, pass;
    if (!me->hooks.left) return NULL;
    for (pass = 0; pass < 2; ++pass) {
        for (i = 0, any = NULL; i < n && !any; ++i)
            if (!redcoll__ho_done(me, ends[i]) && me->hooks.left(me, ends[i]->peer)) any = ends[i];
        if (!any) return NULL;
        if (pass == 0) redcoll__ho_progress(me); /* its posts are older than its leaving */
    }
    return any;
}

/* The liveness checks, if due: REDCOLL_OK, or why this call fails: the
   fabric was just aborted (a peer died: ABORTED), or a peer it waits for
   left (MISMATCH: the peer made no such call, said in the account). */
static redcoll_result redcoll__ho_check(redcoll__ho_me *me, redcoll__ho_end **ends, int n, long long now) {
    redcoll__ho_end *e;
    redcoll_result r;
    if (!me->hooks.alive || !me->check_ns || now < me->next_check) return REDCOLL_OK;
    me->next_check = now + me->check_ns;
    r = me->hooks.alive(me);
    if (r != REDCOLL_OK) redcoll__ho_abort(me, r);
    else if ((e = redcoll__ho_stranded(me, ends, n)) != NULL && redcoll__ho_aborted(me)) {
        r = redcoll__ho_verdict(me); /* it aborted before it left */
    } else if (e) {
        char name[64], text[256];
        r = REDCOLL_ERR_MISMATCH;
        snprintf(text, sizeof text, "%s: rank %d has finished while rank %d waits for it in %s\n",
                 redcoll_result_string(r), e->peer, me->rank, redcoll_tag_name(e->tag, name, sizeof name));
        redcoll__ho_tell(me, text);
    }
    return r;
}

/* Waits until every end is done, serving the rank's pending receives and
   pushes meanwhile. Polls me->spin times (pause, then sched_yield), then
   sleeps until kicked, the deadline, or the next liveness check; a kick
   starts the polls again. Abort and timeout withdraw what nobody has taken.
   Returns the first end's error.
   The host's progress (hooks.host_progress) runs every REDCOLL__HO_HOST
   polls and before every sleep, and no sleep is longer than host_ns: a
   peer's MPI traffic into this rank (a rendezvous send, a one-sided
   access) needs this rank's MPI library to move while it waits here, as it
   would inside MPI's own collective. The first sleeps are short (host_ns /
   8, doubling to host_ns) so a burst of such traffic is served quickly,
   and a rank that waits long wakes only every host_ns. */
static redcoll_result redcoll__ho_wait(redcoll__ho_me *me, redcoll__ho_end **ends, int n) {
    redcoll_result why = REDCOLL_OK, res = REDCOLL_OK;
    long long deadline = -1, now, nap = me->host_ns / 8;
    int i, polls = 0;
    for (;;) {
        redcoll__ho_progress(me);
        if (redcoll__ho_all_done(me, ends, n)) break;
        if (why == REDCOLL_OK && redcoll__ho_aborted(me)) why = redcoll__ho_verdict(me);
        if (why != REDCOLL_OK) {
            redcoll__ho_withdraw(me, ends, n, why);
            if (redcoll__ho_all_done(me, ends, n)) break;
        }
        if (polls < me->spin) {
            if (polls++ < REDCOLL__HO_PAUSES) redcoll__ho_pause(); else sched_yield();
            if (me->hooks.host_progress && polls % REDCOLL__HO_HOST == 0) me->hooks.host_progress(me);
            continue;
        }
        now = redcoll__ho_now();
        if (me->timeout > 0 && deadline < 0 && me->timeout < 9e9)
            deadline = now + (long long)(me->timeout * 1e9);
        if (why == REDCOLL_OK && deadline >= 0 && now >= deadline) { why = REDCOLL_ERR_TIMEOUT; continue; }
        {
            redcoll_result c = redcoll__ho_check(me, ends, n, now);
            if (c != REDCOLL_OK && why == REDCOLL_OK) { why = c; continue; }
        }
        {
            long long ns = deadline >= 0 && why == REDCOLL_OK ? deadline - now : -1;
            if (me->hooks.alive && me->check_ns && (ns < 0 || ns > me->next_check - now))
                ns = me->next_check - now;
            if (me->hooks.host_progress) {
                me->hooks.host_progress(me);
                if (nap > 0 && (ns < 0 || ns > nap)) ns = nap;
                if (nap < me->host_ns) nap = nap * 2 < me->host_ns ? nap * 2 : me->host_ns;
            }
            if (redcoll__ho_sleep(me, ends, n, why == REDCOLL_OK, ns)) {
                polls = 0;
                nap = me->host_ns / 8;
            }
        }
    }
    for (i = 0; i < n; ++i)
        if (ends[i]->res != REDCOLL_OK && res == REDCOLL_OK) res = ends[i]->res;
    return res;
}

/* ---- the deadlock detector ------------------------------------------------------------
   Runs in the rank whose sleep (or leaving, redcoll__ho_leave) made the
   idle count p, once it has checked that every rank is indeed asleep with
   no wake-up on the way (counted, its wake word as it saw it) or finished:
   nobody can post anything then, so it reads the ranks' published receives
   and every channel as they are. Its verdict: MISMATCH when a rank waits
   for a message from P while P's oldest send to it that nobody took
   carries another call's tag (the stream rule), or when it waits for a
   rank that has finished; DEADLOCK otherwise. It keeps the account in the
   fabric (redcoll__ho_tell), stores the verdict and aborts the fabric:
   every blocked call returns the verdict. Off under a timeout (which
   bounds the waits then). */

typedef struct redcoll__ho_text { char s[REDCOLL__HO_REPORT]; size_t len; } redcoll__ho_text;

static void redcoll__ho_say(redcoll__ho_text *t, const char *fmt, ...) {
    va_list ap;
    int n;
    if (t->len >= sizeof t->s - 1) return;
    va_start(ap, fmt);
    n = vsnprintf(t->s + t->len, sizeof t->s - t->len, fmt, ap);
    va_end(ap);
    if (n > 0) t->len = t->len + (size_t)n < sizeof t->s ? t->len + (size_t)n : sizeof t->s - 1;
}

/* The tag of the oldest send from src to dst that nobody has taken; 0 if none. */
static int redcoll__ho_oldest(const redcoll__ho_me *me, int src, int dst, int *tag) {
    redcoll__ho_chan *ch = redcoll__ho_chan_of(me, src, dst);
    unsigned st = 0;
    int k, at = -1;
    for (k = 0; k < 2; ++k) {
        unsigned s = redcoll__ho_load(&ch->slot[k].state);
        if ((REDCOLL__HO_ST(s) == REDCOLL__HO_POSTED || REDCOLL__HO_ST(s) == REDCOLL__HO_EAGER) &&
            (at < 0 || REDCOLL__HO_OLDER(s, st))) { at = k; st = s; }
    }
    if (at >= 0) { *tag = redcoll__ho_peek(&ch->slot[at].tag); return 1; }
    if (ch->head < 0) return 0; /* every rank sleeps: nobody holds the queue's lock */
    *tag = redcoll__ho_peek(&redcoll__ho_desc(me, src, ch->head)->tag);
    return 1;
}

/* One line per send of rank i that nobody has taken (slots, then queues). */
static void redcoll__ho_say_sends(const redcoll__ho_me *me, int i, redcoll__ho_text *t) {
    char name[64];
    int d, k;
    for (d = 0; d < me->size; ++d) {
        redcoll__ho_chan *ch = redcoll__ho_chan_of(me, i, d);
        for (k = 0; k < 2; ++k) {
            unsigned s = REDCOLL__HO_ST(redcoll__ho_load(&ch->slot[k].state));
            if (s != REDCOLL__HO_POSTED && s != REDCOLL__HO_EAGER) continue;
            redcoll_tag_name(redcoll__ho_peek(&ch->slot[k].tag), name, sizeof name);
            if (s == REDCOLL__HO_POSTED)
                redcoll__ho_say(t, "  rank %d waits for rank %d to take its %llu bytes (%s)\n", i, d,
                                (unsigned long long)ch->slot[k].bytes, name);
            else
                redcoll__ho_say(t, "  rank %d's message of %llu bytes to rank %d (%s) is not received\n",
                                i, (unsigned long long)ch->slot[k].bytes, d, name);
        }
        for (k = ch->head; k >= 0; k = redcoll__ho_desc(me, i, k)->next) {
            const redcoll__ho_line *l = redcoll__ho_desc(me, i, k);
            redcoll__ho_say(t, "  rank %d waits for rank %d to take its %llu bytes (%s)\n", i, d,
                            (unsigned long long)l->bytes,
                            redcoll_tag_name(redcoll__ho_peek(&((redcoll__ho_line *)l)->tag), name, sizeof name));
        }
    }
}

/* The verdict over a fabric where every rank sleeps or has finished. */
static void redcoll__ho_judge(redcoll__ho_me *me) {
    redcoll__ho_text head, lines;
    redcoll_result why = REDCOLL_OK;
    char name[64], a[32], b[32], pair[256];
    int i, k, blocked = 0;
    head.len = lines.len = 0;
    head.s[0] = lines.s[0] = 0;
    for (i = 0; i < me->size; ++i) {
        const redcoll__ho_waits *w = &me->waits[i];
        if (redcoll__ho_load((redcoll__ho_aint *)&w->finished)) {
            redcoll__ho_say(&lines, "  rank %d has finished\n", i);
            continue;
        }
        blocked = 1;
        for (k = 0; k < w->n; ++k) {
            int peer = w->recv[k].peer, tag = w->recv[k].tag, got = 0;
            redcoll_tag_name(tag, name, sizeof name);
            redcoll__ho_say(&lines, "  rank %d waits to %s %llu bytes from rank %d (%s)\n", i,
                            w->recv[k].reduce & 1 ? "receive and reduce" : "receive",
                            (unsigned long long)w->recv[k].bytes, peer, name);
            if (why != REDCOLL_OK) continue;
            snprintf(a, sizeof a, "rank %d", peer);
            snprintf(b, sizeof b, "rank %d", i);
            if (!(w->recv[k].reduce & 2) && redcoll__ho_oldest(me, peer, i, &got) &&
                REDCOLL_TAG_OTHER_CALL(tag, got)) {
                why = REDCOLL_ERR_MISMATCH;
                redcoll__ho_say(&head, "%s: %s\n", redcoll_result_string(why),
                                redcoll_tag_disagree(a, got, b, tag, pair, sizeof pair));
            } else if (redcoll__ho_load(&me->waits[peer].finished)) {
                why = REDCOLL_ERR_MISMATCH;
                redcoll__ho_say(&head, "%s: %s has finished while %s waits for it in %s\n",
                                redcoll_result_string(why), a, b, name);
            }
        }
        for (k = 0; k < me->size && why == REDCOLL_OK && w->n > 0; ++k) {
            /* a message to it of another call, from a rank it does not wait for */
            int got = 0;
            if (!redcoll__ho_oldest(me, k, i, &got) || !REDCOLL_TAG_OTHER_CALL(w->recv[0].tag, got)) continue;
            why = REDCOLL_ERR_MISMATCH;
            snprintf(a, sizeof a, "rank %d", k);
            snprintf(b, sizeof b, "rank %d", i);
            redcoll__ho_say(&head, "%s: %s\n", redcoll_result_string(why),
                            redcoll_tag_disagree(a, got, b, w->recv[0].tag, pair, sizeof pair));
        }
        if (w->more) redcoll__ho_say(&lines, "  rank %d waits for %d more receives\n", i, w->more);
        redcoll__ho_say_sends(me, i, &lines);
    }
    if (!blocked) return;
    for (i = 0; i < me->size && why == REDCOLL_OK; ++i) /* two ranks asleep in different calls */
        for (k = i + 1; k < me->size && why == REDCOLL_OK; ++k) {
            const redcoll__ho_waits *u = &me->waits[i], *v = &me->waits[k];
            if (u->n == 0 || v->n == 0 || redcoll__ho_load((redcoll__ho_aint *)&u->finished) ||
                redcoll__ho_load((redcoll__ho_aint *)&v->finished) ||
                !REDCOLL_TAG_OTHER_CALL(u->recv[0].tag, v->recv[0].tag))
                continue;
            why = REDCOLL_ERR_MISMATCH;
            snprintf(a, sizeof a, "rank %d", i);
            snprintf(b, sizeof b, "rank %d", k);
            redcoll__ho_say(&head, "%s: %s\n", redcoll_result_string(why),
                            redcoll_tag_disagree(a, u->recv[0].tag, b, v->recv[0].tag, pair, sizeof pair));
        }
    if (why == REDCOLL_OK) {
        why = REDCOLL_ERR_DEADLOCK;
        redcoll__ho_say(&head, "deadlock: every rank is blocked or finished\n");
    }
    redcoll__ho_say(&head, "%s", lines.s);
    redcoll__ho_tell(me, head.s);
    redcoll__ho_store(&me->sh->release, (int)why);
    redcoll__ho_abort(me, why);
}

static void redcoll__ho_detect(redcoll__ho_me *me) {
    int none = 0, i;
    if (redcoll__ho_aborted(me) || !redcoll__ho_cas(&me->sh->detecting, &none, 1)) return;
    for (i = 0; i < me->size; ++i) {
        redcoll__ho_waits *w = &me->waits[i];
        if (redcoll__ho_load(&w->finished)) continue;
        if (!redcoll__ho_load(&w->counted) ||
            redcoll__ho_load(&me->peers[i].wake) != redcoll__ho_load(&w->seen))
            break; /* a wake-up on its way: the count was passing (the next sleep counts again) */
    }
    if (i == me->size) redcoll__ho_judge(me);
    redcoll__ho_store(&me->sh->detecting, 0);
}

/* This rank makes no more calls: the detector counts it as finished, so
   ranks left waiting for it are released with an error. Once. */
static void redcoll__ho_leave(redcoll__ho_me *me) {
    redcoll__ho_waits *w = &me->waits[me->rank];
    int none = 0;
    if (!me->detect || redcoll__ho_load(&w->finished)) return;
    w->n = w->more = 0;
    if (!redcoll__ho_cas(&w->finished, &none, 1)) return;
    if (redcoll__ho_add_fetch(&me->sh->idle, 1) == me->size) redcoll__ho_detect(me);
}

/* ---- the transport entries --------------------------------------------------------------- */

static int redcoll__ho_consumer_ok(const redcoll_consumer *into, size_t bytes) {
    return into && into->fn && into->unit && bytes % into->unit == 0;
}

/* One blocking transfer: a send of sbytes to dst (dst >= 0) and/or a
   receive of rbytes from src (src >= 0) into rbuf or the consumer. */
static redcoll_result redcoll__ho_xfer(redcoll__ho_me *me, int dst, const void *sbuf, size_t sbytes,
                                       int src, void *rbuf, const redcoll_consumer *into,
                                       size_t rbytes, int tag) {
    redcoll__ho_end s, v, *list[2];
    int n = 0;
    if (dst >= me->size || src >= me->size) return REDCOLL_ERR_TRANSPORT;
    if (src >= 0) { /* posted first: a send to oneself finds it */
        redcoll__ho_end_init(&v, 0, src, NULL, rbuf, into, rbytes, tag);
        redcoll__ho_push(&me->pending, &v);
        list[n++] = &v;
    }
    if (dst >= 0) {
        redcoll__ho_end_init(&s, 1, dst, sbuf, NULL, NULL, sbytes, tag);
        redcoll__ho_post(me, &s);
        list[n++] = &s;
    }
    return redcoll__ho_wait(me, list, n);
}

static redcoll_result redcoll__ho_send(void *user, int dst, const void *buf, size_t bytes, int tag) {
    if (dst < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__ho_xfer((redcoll__ho_me *)user, dst, buf, bytes, -1, NULL, NULL, 0, tag);
}

static redcoll_result redcoll__ho_recv(void *user, int src, void *buf, size_t bytes, int tag) {
    if (src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__ho_xfer((redcoll__ho_me *)user, -1, NULL, 0, src, buf, NULL, bytes, tag);
}

static redcoll_result redcoll__ho_sendrecv(void *user, int dst, const void *sbuf, size_t sbytes,
                                           int src, void *rbuf, size_t rbytes, int tag) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__ho_xfer((redcoll__ho_me *)user, dst, sbuf, sbytes, src, rbuf, NULL, rbytes, tag);
}

static redcoll_result redcoll__ho_recv_reduce(void *user, int src, size_t bytes, int tag,
                                              const redcoll_consumer *into) {
    if (src < 0) return REDCOLL_ERR_TRANSPORT;
    if (!redcoll__ho_consumer_ok(into, bytes)) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__ho_xfer((redcoll__ho_me *)user, -1, NULL, 0, src, NULL, into, bytes, tag);
}

static redcoll_result redcoll__ho_sendrecv_reduce(void *user, int dst, const void *sbuf,
                                                  size_t sbytes, int src, size_t rbytes, int tag,
                                                  const redcoll_consumer *into) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    if (!redcoll__ho_consumer_ok(into, rbytes)) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__ho_xfer((redcoll__ho_me *)user, dst, sbuf, sbytes, src, NULL, into, rbytes, tag);
}

/* A request record: reused from the rank's spares (no allocation in steady state). */
static redcoll__ho_end *redcoll__ho_request(redcoll__ho_me *me) {
    redcoll__ho_end *e = me->spare;
    if (e) { me->spare = e->next; return e; }
    return (redcoll__ho_end *)REDCOLL_MALLOC(sizeof *e);
}

static redcoll_result redcoll__ho_ipost(redcoll__ho_me *me, int is_send, int peer, const void *sbuf,
                                        void *rbuf, const redcoll_consumer *into, size_t bytes, int tag,
                                        redcoll_request *req) {
    redcoll__ho_end *e;
    req->ptr = NULL;
    if (peer < 0 || peer >= me->size) return REDCOLL_ERR_TRANSPORT;
    if (!(e = redcoll__ho_request(me))) return REDCOLL_ERR_OUT_OF_MEMORY;
    redcoll__ho_end_init(e, is_send, peer, sbuf, rbuf, into, bytes, tag);
    if (me->timeout > 0) e->posted = redcoll__ho_now();
    if (is_send) redcoll__ho_post(me, e); else redcoll__ho_push(&me->pending, e);
    req->ptr = e;
    return REDCOLL_OK;
}

static redcoll_result redcoll__ho_isend(void *user, int dst, const void *buf, size_t bytes, int tag,
                                        redcoll_request *req) {
    return redcoll__ho_ipost((redcoll__ho_me *)user, 1, dst, buf, NULL, NULL, bytes, tag, req);
}

static redcoll_result redcoll__ho_irecv(void *user, int src, void *buf, size_t bytes, int tag,
                                        redcoll_request *req) {
    return redcoll__ho_ipost((redcoll__ho_me *)user, 0, src, NULL, buf, NULL, bytes, tag, req);
}

/* As recv_reduce, returning at once: the consumer is called from inside a
   later call of this rank (any call's progress serves pending receives). */
static redcoll_result redcoll__ho_irecv_reduce(void *user, int src, size_t bytes, int tag,
                                               const redcoll_consumer *into, redcoll_request *req) {
    req->ptr = NULL;
    if (!redcoll__ho_consumer_ok(into, bytes)) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__ho_ipost((redcoll__ho_me *)user, 0, src, NULL, NULL, into, bytes, tag, req);
}

/* The non-NULL requests of reqs as ends: in few (16) or allocated; NULL when out of memory. */
static redcoll__ho_end **redcoll__ho_ends(redcoll__ho_end **few, int count, const redcoll_request *reqs,
                                          int *n) {
    redcoll__ho_end **list = few;
    int i;
    *n = 0;
    if (count > 16 && !(list = (redcoll__ho_end **)REDCOLL_MALLOC(sizeof *list * (size_t)count))) return NULL;
    for (i = 0; i < count; ++i)
        if (reqs[i].ptr) list[(*n)++] = (redcoll__ho_end *)reqs[i].ptr;
    return list;
}

/* Releases completed requests (their records kept for reuse); the first error. */
static redcoll_result redcoll__ho_free_requests(redcoll__ho_me *me, redcoll__ho_end **list, int n,
                                                int count, redcoll_request *reqs) {
    redcoll_result res = REDCOLL_OK;
    int i;
    for (i = 0; i < n; ++i) {
        if (list[i]->res != REDCOLL_OK && res == REDCOLL_OK) res = list[i]->res;
        list[i]->next = me->spare;
        me->spare = list[i];
    }
    for (i = 0; i < count; ++i) reqs[i].ptr = NULL;
    return res;
}

/* Completes every request (NULL ones are skipped) and keeps their records. */
static redcoll_result redcoll__ho_waitall(void *user, int count, redcoll_request *reqs) {
    redcoll__ho_me *me = (redcoll__ho_me *)user;
    redcoll__ho_end *few[16], **list;
    redcoll_result res;
    int n;
    if (!(list = redcoll__ho_ends(few, count, reqs, &n)))
        return REDCOLL_ERR_OUT_OF_MEMORY; /* requests stay valid: wait again */
    redcoll__ho_wait(me, list, n);
    res = redcoll__ho_free_requests(me, list, n, count, reqs);
    if (list != few) REDCOLL_FREE(list);
    return res;
}

/* MPI_Testall: one pass of progress (every pending transfer of the rank);
   then abort, a peer gone or left, or a request older than the timeout
   withdraws what it can. All done: released, *done = 1, the first error;
   else *done = 0 and nothing released. */
static redcoll_result redcoll__ho_test(void *user, int count, redcoll_request *reqs, int *done) {
    redcoll__ho_me *me = (redcoll__ho_me *)user;
    redcoll__ho_end *few[16], **list;
    redcoll_result res = REDCOLL_OK;
    int n, i;
    *done = 0;
    if (!(list = redcoll__ho_ends(few, count, reqs, &n))) return REDCOLL_ERR_OUT_OF_MEMORY;
    redcoll__ho_progress(me);
    if (!redcoll__ho_all_done(me, list, n)) {
        long long now = me->timeout > 0 || me->check_ns ? redcoll__ho_now() : 0;
        redcoll_result why = redcoll__ho_aborted(me) ? redcoll__ho_verdict(me) : redcoll__ho_check(me, list, n, now);
        if (why != REDCOLL_OK) redcoll__ho_withdraw(me, list, n, why);
        for (i = 0; me->timeout > 0 && i < n; ++i)
            if (list[i]->posted && (double)(now - list[i]->posted) > me->timeout * 1e9)
                redcoll__ho_withdraw(me, &list[i], 1, REDCOLL_ERR_TIMEOUT);
    }
    if (redcoll__ho_all_done(me, list, n)) {
        *done = 1;
        res = redcoll__ho_free_requests(me, list, n, count, reqs);
    } else {
        if (me->hooks.host_progress) me->hooks.host_progress(me); /* a test loop moves the host too */
        if (me->spin == 0) sched_yield(); /* more ranks than CPUs: let a peer run */
    }
    if (list != few) REDCOLL_FREE(list);
    return res;
}

static void redcoll__ho_abort_entry(void *user, redcoll_result why) {
    redcoll__ho_abort((redcoll__ho_me *)user, why);
}

/* ---- a rank's view: made and freed ------------------------------------------------------ */

/* Fills the private parts of me for `rank` (me->base, lay, total and the
   options already set); 0 when out of memory. */
static int redcoll__ho_me_init(redcoll__ho_me *me, int rank) {
    int p = me->lay.size, k;
    me->rank = rank;
    me->size = p;
    me->sh = (redcoll__ho_shared *)(me->base + me->lay.off_shared);
    me->peers = (redcoll__ho_peer *)(me->base + me->lay.off_peers);
    me->waits = (redcoll__ho_waits *)(me->base + me->lay.off_waits);
    me->report = me->base + me->lay.off_report;
    me->chans = (redcoll__ho_chan *)(me->base + me->lay.off_chans);
    me->descs = (redcoll__ho_line *)(me->base + me->lay.off_descs);
    me->cells = me->base + me->lay.off_cells;
    me->unposted = (redcoll__ho_queue *)calloc((size_t)p, sizeof *me->unposted);
    me->occupant = (redcoll__ho_end **)calloc((size_t)p * 2, sizeof *me->occupant);
    me->posts = (unsigned *)calloc((size_t)p, sizeof *me->posts);
    me->descfree = (int *)calloc((size_t)me->lay.ndesc + 1, sizeof *me->descfree);
    me->stage = me->stage_bytes ? (unsigned char *)malloc(me->stage_bytes) : NULL;
    if (!me->unposted || !me->occupant || !me->posts || !me->descfree ||
        (me->stage_bytes && !me->stage))
        return 0;
    for (k = me->lay.ndesc - 1; k >= 0; --k) me->descfree[me->ndescfree++] = k;
    return 1;
}

static void redcoll__ho_me_free(redcoll__ho_me *me) {
    while (me->spare) {
        redcoll__ho_end *e = me->spare;
        me->spare = e->next;
        REDCOLL_FREE(e);
    }
    free(me->unposted); free(me->occupant); free(me->posts); free(me->descfree);
    if (me->big) REDCOLL_FREE(me->big);
    free(me->stage);
    me->stage = NULL;
    me->unposted = NULL; me->occupant = NULL; me->posts = NULL; me->descfree = NULL;
    me->big = NULL;
}

/* Initialises the shared parts of a fresh (zeroed) fabric: empty queues,
   every cell free. */
static void redcoll__ho_fabric_init(char *base, const redcoll__ho_layout *lay) {
    size_t i, p = (size_t)lay->size;
    redcoll__ho_chan *chans = (redcoll__ho_chan *)(base + lay->off_chans);
    redcoll__ho_peer *peers = (redcoll__ho_peer *)(base + lay->off_peers);
    for (i = 0; i < p * p; ++i) chans[i].head = chans[i].tail = -1;
    for (i = 0; i < p; ++i)
        peers[i].freecells = lay->ncells >= 64 ? ~0ull : (1ull << lay->ncells) - 1;
}

#endif /* REDCOLL_HANDOFF_IMPLEMENTATION_DONE */
#endif /* REDCOLL_IMPLEMENTATION */
