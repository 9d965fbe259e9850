/* redcoll_pshm.h - redcoll transport for processes of one node sharing memory - MIT licence (see redcoll.h)

   Ranks are separate processes (Linux) that share one segment: the
   threads transport's data path between processes, for MPI ranks of one
   node or any processes that agree on a name.

   Started by fork (the segment is made before, and nothing ever has a name):

       redcoll_pshm *h;
       redcoll_pshm_create(NULL, p, &h);                 in the parent
       for each r: if (fork() == 0) {
           redcoll_pshm_attach(h, r);                    in the child: it is rank r
           redcoll_allreduce(redcoll_pshm_transport(h), ...);
           redcoll_pshm_destroy(h); _exit(0);
       }
       redcoll_pshm_destroy(h);                          the parent drops its view

   or redcoll_pshm_run(NULL, p, fn, arg, results), which forks p ranks
   running fn and collects their results. Started by any launcher, processes
   that agree on a name, the size and their ranks:

       redcoll_pshm_open(&h, "job42", p, my_rank, NULL); rank 0 creates, the others attach

   From an MPI communicator whose ranks share a node (compiled where mpi.h
   is included before this header): redcoll_pshm_init_mpi(&h, comm, NULL),
   collective; the name is agreed through MPI.

   Data path (transports/redcoll_handoff.h)
   - Lock-free hand-offs through cache lines of the segment: each ordered
     pair of ranks has two slots; a send posted while both are taken goes to
     a queue of descriptors the receiver searches under a lock (rendezvous).
     With every descriptor of the sender taken too (cfg.ndesc unreceived
     queued sends), a further send waits in the sender until one frees: its
     receiver sees it only then, so a receiver must not wait for it before
     taking an earlier one (MPI allows that order; keep ndesc above the
     isends one rank leaves unreceived at a time).
   - Payloads up to 32 bytes ride in the slot (eager). A buffer inside the
     segment (redcoll_pshm_alloc, and the scratch entry when the arena
     holds it) is read by the receiver where it is: it copies or reduces
     straight from the sender's memory, nothing staged (rendezvous).
   - A buffer in a process's private memory, below cma_min_bytes (16 KiB):
     the sender copies it into its cells (cell_bytes each, ncells of them)
     and the receiver copies or reduces each one out while the sender fills
     the next, a pipeline on two cores. Such a send is eager: it returns
     when its last byte is in a cell. From cma_min_bytes, where the kernel
     allows process_vm_readv (probed between every pair at start-up:
     containers and Yama often forbid it), the receiver reads the sender's
     memory itself (rendezvous): a receive-and-reduce reads a chunk
     (cma_chunk_bytes, 128 KiB) into a private buffer and reduces it from
     there while it is in cache, chunk after chunk, so the sender's bytes
     are read once and the reduction makes one pass; a plain receive of
     cma_copy_min_bytes (4 MiB) or more is one copy straight into the
     receive buffer, a smaller one asks the sender for the pipeline through
     cells (each measured faster: docs/benchmarks.md). Without
     process_vm_readv everything goes through cells.
   - Nothing is allocated in steady state: request records and the carry
     of an element split between two cells are kept.

   Semantics: those of the threads transport (redcoll_shm.h): matching FIFO
   per (source, destination, tag); sizes compared when send and receive
   meet (a mismatch fails both ends with REDCOLL_ERR_TRANSPORT; only the
   receive for an eager send, whose sender has returned); ranks that
   disagree about a call are found as on threads: a receive whose sender's
   oldest unreceived message belongs to another call fails at once with
   REDCOLL_ERR_MISMATCH (the stream rule at REDCOLL_TAG_MAX), and without a
   timeout a deadlock detector runs when every rank is asleep in the
   transport or has left: the blocked calls return REDCOLL_ERR_MISMATCH
   (two ranks in different calls, or waiting for a rank that left) or
   REDCOLL_ERR_DEADLOCK, and redcoll_pshm_report (and cfg.report, in the
   process that found it) says what each rank waited for; sendrecv posts both
   halves, a send to oneself works inside sendrecv; abort is sticky (every
   call blocked in or later entering the transport, on every rank, returns
   REDCOLL_ERR_ABORTED); cfg.timeout_seconds bounds every blocking call;
   isend / irecv / waitall / test, recv_reduce / sendrecv_reduce /
   irecv_reduce (what the non-blocking collectives need; any call's progress
   serves every pending receive, and test fails a request older than the
   timeout), scratch; node_of answers 0 (one node).
   REDCOLL_TRANSPORT_PEER_REDUCE is not set: a message from private memory
   costs its copy, and AUTO prices it so.

   Robustness
   - Named segments are created with O_EXCL and mode 0600 as
     /dev/shm/redcoll-<uid>-<name> (an attacher checks owner and mode), and
     unlinked as soon as every rank has attached (init returns only then):
     nothing of the job stays in /dev/shm after a normal exit, an error, or
     kill -9 of any rank at any moment (while ranks attach, the survivors
     unlink it when they give up). redcoll_pshm_create uses a memfd: no name.
   - The segment's size is reserved up front (fallocate): a /dev/shm too
     small is REDCOLL_ERR_OUT_OF_MEMORY at start-up with a message naming the
     size needed (redcoll_pshm_last_error), never a SIGBUS later;
     cfg.max_segment_bytes refuses a larger segment the same way.
   - A rank whose process ends without redcoll_pshm_destroy is noticed by
     every waiting peer within cfg.liveness_seconds (pidfd, else kill 0):
     the transport is aborted and they return REDCOLL_ERR_ABORTED, as every
     later call does. Destroy before exiting: a rank that left that way is
     not a failure (its eager sends are still received), but a wait that
     needs it fails within the same interval with REDCOLL_ERR_MISMATCH
     (it made no such call).
   - Waits poll, then sleep on a futex in the segment: more processes than
     cores still run (polling is off by default then).
   - Ranks that are also ranks of another runtime (an MPI job) give its
     progress function as cfg.progress: every wait of the transport, and
     init's waits for the other ranks, call it while they poll and before
     and between sleeps, no sleep longer than cfg.progress_seconds. That
     runtime's traffic into a rank waiting here (a rendezvous send, a
     one-sided access, a request of its own in flight) then completes, as
     MPI promises while a rank is blocked in any MPI call. The function must
     not call into this transport.

   Thread safety: one thread per rank at a time. Do not fork a rank: its
   child is not a rank. Linux only (futex, memfd, process_vm_readv); other
   systems get REDCOLL_ERR_UNSUPPORTED from every init function.

   Configuration macro: REDCOLL_PSHM_SPIN, the default number of polls before
   sleeping when the ranks fit on the online CPUs (2000; the first 64 spin
   with a pause instruction, the rest call sched_yield). */
#ifndef REDCOLL_PSHM_H
#define REDCOLL_PSHM_H

#include "redcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialisable; NULL means all defaults. The segment's shape (cells,
   descriptors, arena) is the creator's: an attacher's own values are not used. */
typedef struct redcoll_pshm_config {
    double timeout_seconds;   /* > 0: a blocking call waiting longer fails with TIMEOUT */
    double attach_seconds;    /* how long init waits for the other ranks; 0 = 60 */
    double liveness_seconds;  /* how often a waiting rank checks its peers live; 0 = 0.1 */
    int    spin;              /* polls before sleeping; 0 = default (REDCOLL_PSHM_SPIN if the
                                 ranks fit on the online CPUs, else none); < 0 = never spin */
    size_t cell_bytes;        /* bounce cells, per rank: bytes each (0 = 32 KiB) ... */
    int    ncells;            /* ... and how many (0 = 16, at most 64) */
    int    ndesc;             /* queued-send descriptors per rank (0 = 64) */
    size_t arena_bytes;       /* per rank: segment memory for redcoll_pshm_alloc and the
                                 scratch entry (0 = none) */
    size_t cma_min_bytes;     /* a send from private memory of this many bytes or more is read
                                 by its receiver (process_vm_readv) where the kernel allows;
                                 0 = 16 KiB ... */
    size_t cma_copy_min_bytes;/* ... a plain receive of it is one copy from this size (below:
                                 the sender pushes cells); 0 = 4 MiB ... */
    size_t cma_chunk_bytes;   /* ... a receive-and-reduce reads it a chunk of this many bytes
                                 at a time into a private buffer and reduces it from there
                                 (0 = 128 KiB; smaller than an element: the sender pushes
                                 cells) */
    int    no_cma;            /* 1: never process_vm_readv (the cells only) */
    size_t max_segment_bytes; /* > 0: refuse a larger segment (OUT_OF_MEMORY, as a full /dev/shm) */
    void (*report)(void *report_arg, const char *text); /* the account of ranks that disagree or
                                 deadlock, once, in the process that found it (NULL: kept only,
                                 see redcoll_pshm_report) */
    void  *report_arg;
    void (*progress)(void *progress_arg); /* the host runtime's progress, called while a rank
                                 waits (NULL: none; see Robustness) ... */
    void  *progress_arg;
    double progress_seconds;  /* ... at least this often while asleep (0 = 0.001) */
} redcoll_pshm_config;

/* One process's view of a segment, and its rank once attached. */
typedef struct redcoll_pshm redcoll_pshm;

/* Runs on each rank's process. Same shape as the threads transport's rank function. */
typedef redcoll_result (*redcoll_pshm_rank_fn)(const redcoll_transport *t, void *arg);

/*
Makes an anonymous segment for `size` ranks, for processes forked from this
one: a memfd, reserved and mapped here, inherited by the children, never
named (nothing in /dev/shm at any time).

Parameters
    cfg    NULL: defaults. Its shape (cells, descriptors, arena) is the segment's.
    size   ranks, >= 1.
    out    the view: attach it as a rank (here or in a child), destroy it in
           every process that has it.

Return Value
    REDCOLL_OK; REDCOLL_ERR_INVALID_ARG (size, cfg); REDCOLL_ERR_OUT_OF_MEMORY
    (no memory for the segment, or above cfg.max_segment_bytes: the message
    names the size); REDCOLL_ERR_UNSUPPORTED (not Linux). On failure *out is
    NULL; redcoll_pshm_last_error says why.

Thread Safety
    Any thread; fork after it returns.
*/
REDCOLL_API redcoll_result redcoll_pshm_create(const redcoll_pshm_config *cfg, int size,
                                               redcoll_pshm **out);

/*
Makes this process rank `rank` of the segment h (in a child after fork; the
parent may be a rank too), then waits until every rank has attached.

Parameters
    h      a view from redcoll_pshm_create, inherited by fork.
    rank   0 .. size - 1, each taken by one process.

Return Value
    REDCOLL_OK; REDCOLL_ERR_INVALID_ARG (rank out of range or taken);
    REDCOLL_ERR_TIMEOUT (a rank did not attach within cfg.attach_seconds);
    REDCOLL_ERR_ABORTED (a rank died meanwhile). On failure h stays a view
    to destroy.

Thread Safety
    One thread per view.
*/
REDCOLL_API redcoll_result redcoll_pshm_attach(redcoll_pshm *h, int rank);

/*
Joins a job by name, as processes started by any launcher do: rank 0
creates /dev/shm/redcoll-<uid>-<name> (O_EXCL, mode 0600, its size
reserved), the others open it once it is ready (checking it is this user's,
mode 0600, of this size); every rank attaches, and the name is removed as
soon as all have, before any of them returns.

Parameters
    out    the view and rank, to destroy.
    name   letters, digits, '.', '_', '-'; at most 200. The same on every rank.
    size   ranks, the same on every rank.
    rank   this process's, 0 .. size - 1.
    cfg    NULL: defaults; rank 0's shape is the segment's.

Return Value
    REDCOLL_OK, or: REDCOLL_ERR_INVALID_ARG (bad arguments; a segment of that
    name not this user's, not mode 0600, or of another size: left alone);
    REDCOLL_ERR_TRANSPORT (the name is taken: another job, or a rank 0 still
    running; or rank 0 gave up); REDCOLL_ERR_OUT_OF_MEMORY (/dev/shm too
    small: the message names the size needed and what is free);
    REDCOLL_ERR_TIMEOUT (a rank did not come within cfg.attach_seconds);
    REDCOLL_ERR_ABORTED (a rank died meanwhile). On failure *out is NULL,
    redcoll_pshm_last_error says why, and the rank that gives up removes the
    name if it had mapped the segment: nothing of the job stays in /dev/shm.

Thread Safety
    Any thread.
*/
REDCOLL_API redcoll_result redcoll_pshm_open(redcoll_pshm **out, const char *name, int size,
                                             int rank, const redcoll_pshm_config *cfg);

/*
Leaves and frees this process's view. A rank that leaves this way is not a
failure for its peers; a peer still waiting for it fails with
REDCOLL_ERR_MISMATCH.

Parameters
    h   a view, or NULL (nothing happens).

Return Value
    None.

Thread Safety
    No call of this rank may be running.
*/
REDCOLL_API void redcoll_pshm_destroy(redcoll_pshm *h);

/*
The transport of this process's rank.

Parameters
    h   a view.

Return Value
    The transport, valid until destroy; NULL before attach.

Thread Safety
    Any thread.
*/
REDCOLL_API const redcoll_transport *redcoll_pshm_transport(redcoll_pshm *h);

/*
Whether the transport was aborted, and why.

Parameters
    h   a view.

Return Value
    REDCOLL_OK, or the first reason the transport was aborted.

Thread Safety
    Any thread.
*/
REDCOLL_API redcoll_result redcoll_pshm_status(const redcoll_pshm *h);

/*
The account of why the ranks stopped, when they disagreed about a call or
deadlocked: the verdict, the two calls or what every rank waited for, and
the sends nobody took. Any rank of the segment reads the same text.

Parameters
    h   an attached view.

Return Value
    The text (valid until destroy), or NULL when nothing was found.

Thread Safety
    Any thread.
*/
REDCOLL_API const char *redcoll_pshm_report(const redcoll_pshm *h);

/*
Why the last failed create, attach, open or init_mpi of this thread failed:
which size /dev/shm lacks, which rank never came, ...

Parameters
    None.

Return Value
    The text; "" if none.

Thread Safety
    Per thread.
*/
REDCOLL_API const char *redcoll_pshm_last_error(void);

/*
Memory inside the segment, from this rank's arena (cfg.arena_bytes): a send
from it is read by its receiver where it is, so a vector kept there is
copied or reduced by the peers straight from this rank's memory, as between
threads. The scratch entry takes its block from the arena too while it fits.

Parameters
    h       an attached view.
    bytes   > 0.

Return Value
    64-byte aligned memory, until redcoll_pshm_free or destroy; NULL when the
    arena has no room (first fit; freed blocks merge).

Thread Safety
    As the rank's transport.
*/
REDCOLL_API void *redcoll_pshm_alloc(redcoll_pshm *h, size_t bytes);
REDCOLL_API void redcoll_pshm_free(redcoll_pshm *h, void *p);

/*
Forks `size` processes, each rank r running fn(t, arg) on a fresh anonymous
segment, and waits for them. The calling process is not a rank; fn's process
exits after fn returns.

Parameters
    cfg     the configuration, or NULL.
    size    ranks, >= 1.
    fn      what every rank runs, with its transport.
    arg     passed to fn (each process has its own copy after the fork).
    results optional, `size` entries.

Return Value
    REDCOLL_OK if every rank returned OK, else the first error in rank order;
    results (optional, `size` entries) gets each rank's (REDCOLL_ERR_ABORTED for
    a process that died). As redcoll_pshm_create's errors when the segment
    cannot be made.

Thread Safety
    Fork rules: call it from a process whose other threads hold no locks the
    children need.
*/
REDCOLL_API redcoll_result redcoll_pshm_run(const redcoll_pshm_config *cfg, int size,
                                            redcoll_pshm_rank_fn fn, void *arg,
                                            redcoll_result *results);

#if defined(MPI_VERSION)
/*
The segment of an MPI communicator whose ranks all share a node (compiled
where mpi.h is included before this header). Collective over comm: rank 0
creates a segment under a random name it sends to the others, every rank
attaches as its rank in comm.

Parameters
    out     receives the view, attached.
    comm    an intracommunicator whose ranks share a node; used only here.
    cfg     the configuration, or NULL.

Return Value
    The same on every rank: REDCOLL_OK; REDCOLL_ERR_UNSUPPORTED (ranks on more
    than one node); or the first failure (REDCOLL_ERR_OUT_OF_MEMORY when
    /dev/shm is too small: redcoll_pshm_last_error has rank 0's message on
    every rank). On failure *out is NULL and nothing is left in /dev/shm.

Thread Safety
    As MPI collectives on comm.
*/
REDCOLL_API redcoll_result redcoll_pshm_init_mpi(redcoll_pshm **out, MPI_Comm comm,
                                                 const redcoll_pshm_config *cfg);
#endif

#ifdef __cplusplus
}
#endif
#endif /* REDCOLL_PSHM_H */

#ifdef REDCOLL_IMPLEMENTATION
#ifndef REDCOLL_PSHM_IMPLEMENTATION_DONE
#define REDCOLL_PSHM_IMPLEMENTATION_DONE

#include "redcoll_handoff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef REDCOLL_PSHM_SPIN
#define REDCOLL_PSHM_SPIN 2000
#endif

#if defined(__cplusplus)
#define REDCOLL__PSHM_TLS thread_local
#else
#define REDCOLL__PSHM_TLS _Thread_local
#endif

static REDCOLL__PSHM_TLS char redcoll__pshm_msg[320];

/* Sets the last error message; returns r. */
static redcoll_result redcoll__pshm_fail(redcoll_result r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(redcoll__pshm_msg, sizeof redcoll__pshm_msg, fmt, ap);
    va_end(ap);
    return r;
}

REDCOLL_API const char *redcoll_pshm_last_error(void) { return redcoll__pshm_msg; }

#if !defined(__linux__)

REDCOLL_API redcoll_result redcoll_pshm_create(const redcoll_pshm_config *cfg, int size,
                                               redcoll_pshm **out) {
    (void)cfg; (void)size;
    if (out) *out = NULL;
    return redcoll__pshm_fail(REDCOLL_ERR_UNSUPPORTED, "redcoll_pshm: Linux only");
}
REDCOLL_API redcoll_result redcoll_pshm_attach(redcoll_pshm *h, int rank) {
    (void)h; (void)rank;
    return REDCOLL_ERR_UNSUPPORTED;
}
REDCOLL_API redcoll_result redcoll_pshm_open(redcoll_pshm **out, const char *name, int size,
                                             int rank, const redcoll_pshm_config *cfg) {
    (void)name; (void)rank;
    return redcoll_pshm_create(cfg, size, out);
}
REDCOLL_API void redcoll_pshm_destroy(redcoll_pshm *h) { (void)h; }
REDCOLL_API const redcoll_transport *redcoll_pshm_transport(redcoll_pshm *h) { (void)h; return NULL; }
REDCOLL_API redcoll_result redcoll_pshm_status(const redcoll_pshm *h) { (void)h; return REDCOLL_ERR_UNSUPPORTED; }
REDCOLL_API const char *redcoll_pshm_report(const redcoll_pshm *h) { (void)h; return NULL; }
REDCOLL_API void *redcoll_pshm_alloc(redcoll_pshm *h, size_t bytes) { (void)h; (void)bytes; return NULL; }
REDCOLL_API void redcoll_pshm_free(redcoll_pshm *h, void *p) { (void)h; (void)p; }
REDCOLL_API redcoll_result redcoll_pshm_run(const redcoll_pshm_config *cfg, int size,
                                            redcoll_pshm_rank_fn fn, void *arg,
                                            redcoll_result *results) {
    (void)cfg; (void)size; (void)fn; (void)arg; (void)results;
    return REDCOLL_ERR_UNSUPPORTED;
}
#if defined(MPI_VERSION)
REDCOLL_API redcoll_result redcoll_pshm_init_mpi(redcoll_pshm **out, MPI_Comm comm,
                                                 const redcoll_pshm_config *cfg) {
    (void)comm; (void)cfg;
    if (out) *out = NULL;
    return REDCOLL_ERR_UNSUPPORTED;
}
#endif

#else /* Linux */

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define REDCOLL__PSHM_MAGIC 0x6873702d6c6c6f63ULL /* "coll-psh", set last by the creator */
#define REDCOLL__PSHM_VERSION 2u
#define REDCOLL__PSHM_NAME_MAX 200

/* O_CLOEXEC and O_NOFOLLOW: POSIX 2008, hidden by a strict -std=c11 build. */
#if defined(O_CLOEXEC)
#define REDCOLL__PSHM_O_CLOEXEC O_CLOEXEC
#else
#define REDCOLL__PSHM_O_CLOEXEC __O_CLOEXEC
#endif
#if defined(O_NOFOLLOW)
#define REDCOLL__PSHM_O_NOFOLLOW O_NOFOLLOW
#else
#define REDCOLL__PSHM_O_NOFOLLOW __O_NOFOLLOW
#endif

/* The segment: header, rank table, CMA matrix, the fabric, the arenas. */
typedef struct redcoll__pshm_hdr {
    uint64_t          magic;
    uint32_t          version, size;
    uint32_t          ndesc, ncells;
    uint64_t          cell_bytes, arena_bytes, total;
    uint64_t          off_ranks, off_cma, off_fabric, off_arena;
    char              pad0[128 - 10 * 8];
    redcoll__ho_aint  attached;  /* ranks that registered */
    redcoll__ho_aint  probed;    /* ranks that probed CMA */
    redcoll__ho_aint  unlinked;  /* the name is gone */
    char              pad1[64 - 3 * sizeof(int)];
} redcoll__pshm_hdr;

enum { REDCOLL__PSHM_ABSENT = 0, REDCOLL__PSHM_LIVE, REDCOLL__PSHM_LEFT };

typedef struct redcoll__pshm_rank {
    redcoll__ho_aint  state;       /* ABSENT, LIVE, LEFT (destroyed: not a failure) */
    redcoll__ho_aint  result;      /* redcoll_pshm_run: what the rank returned */
    int               pid;
    int               unused;
    uint64_t          pidns;       /* the pid namespace's inode: pids compare only within one */
    uint64_t          probe_addr;  /* a word of the rank's private memory ... */
    uint64_t          probe_token; /* ... that holds this, for peers' CMA probe */
    char              pad[64 - 4 * sizeof(int) - 3 * 8];
} redcoll__pshm_rank;

typedef struct redcoll__pshm_block { size_t off, bytes; int used; } redcoll__pshm_block;

struct redcoll_pshm {
    redcoll__ho_me       me;         /* first: the engine's entries take it as `user` */
    redcoll_transport    t;
    char                *base;
    size_t               total;
    redcoll__pshm_hdr   *hdr;
    redcoll__pshm_rank  *ranks;
    unsigned char       *cma;
    int                  rank, size; /* rank -1 until attached */
    redcoll_pshm_config  cfg;
    char                 path[REDCOLL__PSHM_NAME_MAX + 48]; /* a named segment: for unlink */
    int                 *pidfd;      /* per peer, -1: none (kill 0 instead, or no check) */
    unsigned char       *gone;       /* per peer: left normally, not checked again */
    uint64_t             probe;      /* the word peers read to probe CMA */
    redcoll__pshm_block *blocks;     /* the arena, as blocks in offset order */
    int                  nblocks, capblocks;
    void                *scratch_seg; /* the scratch entry's block in the arena */
    size_t               scratch_seg_bytes;
    redcoll_scratch_block scratch;   /* ... or in private memory */
    redcoll_nbstate      nb;         /* the library's, for non-blocking collectives */
};

static long redcoll__pshm_sys(long nr, long a, long b, long c, long d, long e) {
    if (nr < 0) { errno = ENOSYS; return -1; }
    return redcoll__ho_syscall(nr, a, b, c, d, e, 0L);
}

/* System calls newer than some C libraries' headers (-1: ENOSYS). */
#if defined(SYS_pidfd_open)
#define REDCOLL__PSHM_SYS_PIDFD SYS_pidfd_open
#else
#define REDCOLL__PSHM_SYS_PIDFD (-1)
#endif
#if defined(SYS_memfd_create)
#define REDCOLL__PSHM_SYS_MEMFD SYS_memfd_create
#else
#define REDCOLL__PSHM_SYS_MEMFD (-1)
#endif
#if defined(SYS_getrandom)
#define REDCOLL__PSHM_SYS_RANDOM SYS_getrandom
#else
#define REDCOLL__PSHM_SYS_RANDOM (-1)
#endif

static double redcoll__pshm_mib(size_t b) { return (double)b / (1024.0 * 1024.0); }

/* ---- the config and the layout ----------------------------------------------------- */

static int redcoll__pshm_cfg(const redcoll_pshm_config *in, redcoll_pshm_config *c) {
    if (in) *c = *in; else memset(c, 0, sizeof *c);
    if (!(c->timeout_seconds >= 0) || !(c->attach_seconds >= 0) || !(c->liveness_seconds >= 0) ||
        !(c->progress_seconds >= 0) || c->ncells < 0 || c->ncells > 64 || c->ndesc < 0)
        return 0;
    if (c->progress_seconds == 0) c->progress_seconds = 0.001;
    if (c->progress_seconds > 3600) c->progress_seconds = 3600;
    if (c->attach_seconds == 0) c->attach_seconds = 60;
    if (c->liveness_seconds == 0) c->liveness_seconds = 0.1;
    if (c->attach_seconds > 1e6) c->attach_seconds = 1e6;     /* "forever", in nanoseconds that fit */
    if (c->liveness_seconds > 3600) c->liveness_seconds = 3600;
    if (c->cell_bytes == 0) c->cell_bytes = (size_t)32 << 10;
    if (c->ncells == 0) c->ncells = 16;
    if (c->ndesc == 0) c->ndesc = 64;
    if (c->cma_min_bytes == 0) c->cma_min_bytes = (size_t)16 << 10;
    if (c->cma_copy_min_bytes == 0) c->cma_copy_min_bytes = (size_t)4 << 20;
    if (c->cma_chunk_bytes == 0) c->cma_chunk_bytes = (size_t)128 << 10;
    c->arena_bytes = (c->arena_bytes + 63) & ~(size_t)63;
    return 1;
}

/* Lays the segment out into hdr (every field but magic and the counters). */
static int redcoll__pshm_layout(const redcoll_pshm_config *c, int size, redcoll__pshm_hdr *h,
                                redcoll__ho_layout *lay) {
    size_t p = (size_t)size, at;
    memset(h, 0, sizeof *h);
    h->version = REDCOLL__PSHM_VERSION;
    h->size = (uint32_t)size;
    h->ndesc = (uint32_t)c->ndesc;
    h->ncells = (uint32_t)c->ncells;
    h->cell_bytes = c->cell_bytes;
    h->arena_bytes = c->arena_bytes;
    h->off_ranks = sizeof *h;
    h->off_cma = h->off_ranks + p * sizeof(redcoll__pshm_rank);
    at = (size_t)h->off_cma + p * p;
    if (!redcoll__ho_lay_out(lay, size, c->ndesc, c->ncells, c->cell_bytes, at)) return 0;
    h->off_fabric = lay->off_shared;
    h->off_arena = (lay->end + 4095) & ~(uint64_t)4095;
    if (c->arena_bytes && p > ((size_t)-1 / 4 - h->off_arena) / c->arena_bytes) return 0;
    h->total = (h->off_arena + p * c->arena_bytes + 4095) & ~(uint64_t)4095;
    return 1;
}

/* Reads the layout back from a header the creator wrote. */
static int redcoll__pshm_relayout(const redcoll__pshm_hdr *h, redcoll__ho_layout *lay) {
    return redcoll__ho_lay_out(lay, (int)h->size, (int)h->ndesc, (int)h->ncells, h->cell_bytes,
                               (size_t)h->off_cma + (size_t)h->size * h->size) &&
           lay->off_shared == h->off_fabric;
}

/* ---- memory: reserve, map ---------------------------------------------------------- */

/* Reserves fd's `total` bytes: pages a later touch could not get fail now. */
static redcoll_result redcoll__pshm_reserve(int fd, size_t total, const char *where) {
    long r = redcoll__pshm_sys(SYS_ftruncate, fd, (long)total, 0, 0, 0);
    if (r == 0) r = redcoll__pshm_sys(SYS_fallocate, fd, 0, 0, (long)total, 0);
    if (r != 0 && errno == EOPNOTSUPP) { /* a file system without fallocate: touch every page */
        size_t off;
        char zero = 0;
        for (r = 0, off = 0; off < total && r == 0; off += 4096)
            r = redcoll__pshm_sys(SYS_pwrite64, fd, (long)&zero, 1, (long)off, 0) == 1 ? 0 : -1;
    }
    if (r == 0) return REDCOLL_OK;
    if (errno == ENOSPC || errno == ENOMEM || errno == EFBIG) {
        struct statvfs v;
        if (where && statvfs("/dev/shm", &v) == 0)
            return redcoll__pshm_fail(REDCOLL_ERR_OUT_OF_MEMORY,
                "redcoll_pshm: the segment needs %.1f MiB in %s, which has %.1f MiB free "
                "(make it larger, e.g. docker run --shm-size, or lower cell_bytes, ncells, arena_bytes)",
                redcoll__pshm_mib(total), where, redcoll__pshm_mib((size_t)v.f_bavail * v.f_frsize));
        return redcoll__pshm_fail(REDCOLL_ERR_OUT_OF_MEMORY,
            "redcoll_pshm: no memory for the %.1f MiB segment", redcoll__pshm_mib(total));
    }
    return redcoll__pshm_fail(REDCOLL_ERR_TRANSPORT, "redcoll_pshm: cannot size the segment: %s",
                              strerror(errno));
}

static redcoll_result redcoll__pshm_map(redcoll_pshm *h, int fd, size_t total) {
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        return redcoll__pshm_fail(REDCOLL_ERR_OUT_OF_MEMORY, "redcoll_pshm: mmap of %.1f MiB: %s",
                                  redcoll__pshm_mib(total), strerror(errno));
    h->base = (char *)m;
    h->total = total;
    h->hdr = (redcoll__pshm_hdr *)m;
    return REDCOLL_OK;
}

/* A view of `size` ranks with the config, no segment yet. */
static redcoll_result redcoll__pshm_new(const redcoll_pshm_config *cfg, int size, redcoll_pshm **out) {
    redcoll_pshm *h;
    redcoll_pshm_config c;
    *out = NULL;
    redcoll__pshm_msg[0] = 0;
    if (size < 1 || size > REDCOLL_MAX_RANKS / 2 || !redcoll__pshm_cfg(cfg, &c))
        return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: bad size or config");
    h = (redcoll_pshm *)calloc(1, sizeof *h);
    if (!h) return REDCOLL_ERR_OUT_OF_MEMORY;
    h->cfg = c;
    h->size = size;
    h->rank = -1;
    *out = h;
    return REDCOLL_OK;
}

/* Lays out, checks the size limit, reserves and maps fd as a new segment. */
static redcoll_result redcoll__pshm_make(redcoll_pshm *h, int fd, const char *where) {
    redcoll__pshm_hdr lay_hdr;
    redcoll__ho_layout lay;
    redcoll_result r;
    size_t i;
    if (!redcoll__pshm_layout(&h->cfg, h->size, &lay_hdr, &lay))
        return redcoll__pshm_fail(REDCOLL_ERR_OUT_OF_MEMORY, "redcoll_pshm: the segment for %d ranks "
                                  "does not fit in memory", h->size);
    if (h->cfg.max_segment_bytes && lay_hdr.total > h->cfg.max_segment_bytes)
        return redcoll__pshm_fail(REDCOLL_ERR_OUT_OF_MEMORY,
            "redcoll_pshm: the segment for %d ranks needs %.1f MiB, above the limit of %.1f MiB "
            "(max_segment_bytes; lower cell_bytes, ncells, arena_bytes)", h->size,
            redcoll__pshm_mib((size_t)lay_hdr.total), redcoll__pshm_mib(h->cfg.max_segment_bytes));
    if ((r = redcoll__pshm_reserve(fd, (size_t)lay_hdr.total, where)) != REDCOLL_OK) return r;
    if ((r = redcoll__pshm_map(h, fd, (size_t)lay_hdr.total)) != REDCOLL_OK) return r;
    *h->hdr = lay_hdr; /* fresh pages are zero: counters, ranks, the CMA matrix, the fabric */
    redcoll__ho_fabric_init(h->base, &lay);
    for (i = 0; i < (size_t)h->size; ++i) {
        redcoll__pshm_rank *rk = (redcoll__pshm_rank *)(h->base + h->hdr->off_ranks) + i;
        rk->result = (int)REDCOLL_ERR_ABORTED;
    }
    redcoll__ho_release(&h->hdr->magic, REDCOLL__PSHM_MAGIC);
    return REDCOLL_OK;
}

/* ---- liveness, CMA -------------------------------------------------------------------- */

static uint64_t redcoll__pshm_pidns(void) {
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* The liveness hook: a peer whose process has ended without leaving aborts the transport. */
static redcoll_result redcoll__pshm_alive(redcoll__ho_me *me) {
    redcoll_pshm *h = (redcoll_pshm *)me->owner;
    struct pollfd few[64];
    int q, k;
    for (q = 0; q < h->size; q += 64) {
        int n = h->size - q < 64 ? h->size - q : 64, dead;
        for (k = 0; k < n; ++k) {
            few[k].fd = h->gone[q + k] ? -1 : h->pidfd[q + k];
            few[k].events = POLLIN;
            few[k].revents = 0;
        }
        poll(few, (nfds_t)n, 0);
        for (k = 0; k < n; ++k) {
            int peer = q + k;
            redcoll__pshm_rank *rk = &h->ranks[peer];
            if (peer == h->rank || h->gone[peer]) continue;
            if (h->pidfd[peer] >= 0) dead = (few[k].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
            else if (rk->pidns && rk->pidns == h->ranks[h->rank].pidns)
                dead = redcoll__pshm_sys(SYS_kill, rk->pid, 0, 0, 0, 0) != 0 && errno == ESRCH;
            else continue; /* another pid namespace: only a timeout notices it */
            if (!dead) continue;
            if (redcoll__ho_load(&rk->state) == REDCOLL__PSHM_LEFT) { h->gone[peer] = 1; continue; }
            return REDCOLL_ERR_ABORTED;
        }
    }
    return REDCOLL_OK;
}

/* The leaving hook: a destroyed rank posts nothing more. */
static int redcoll__pshm_left(redcoll__ho_me *me, int peer) {
    redcoll_pshm *h = (redcoll_pshm *)me->owner;
    return redcoll__ho_load(&h->ranks[peer].state) == REDCOLL__PSHM_LEFT;
}

/* The account hook: the config's report callback. */
static void redcoll__pshm_tell(redcoll__ho_me *me, const char *text) {
    redcoll_pshm *h = (redcoll_pshm *)me->owner;
    if (h->cfg.report) h->cfg.report(h->cfg.report_arg, text);
}

static void redcoll__pshm_host_progress(redcoll__ho_me *me) {
    redcoll_pshm *h = (redcoll_pshm *)me->owner;
    h->cfg.progress(h->cfg.progress_arg);
}

/* Init's waits for the other ranks: the host's progress, then a short sleep. */
static void redcoll__pshm_nap(const redcoll_pshm *h) {
    struct timespec ts = { 0, 1000L * 1000 }; /* 1 ms */
    if (h->cfg.progress) h->cfg.progress(h->cfg.progress_arg);
    redcoll__pshm_sys(SYS_nanosleep, (long)&ts, 0, 0, 0, 0);
}

/* The CMA hook: n bytes at `from` in rank src's memory to `to`. */
static int redcoll__pshm_pull(redcoll__ho_me *me, int src, void *to, uint64_t from, size_t n) {
    redcoll_pshm *h = (redcoll_pshm *)me->owner;
    int pid = h->ranks[src].pid;
    size_t done = 0;
    while (done < n) {
        struct iovec l, r;
        long k;
        l.iov_base = (char *)to + done;
        l.iov_len = n - done;
        r.iov_base = (void *)(uintptr_t)(from + done);
        r.iov_len = n - done;
        k = redcoll__pshm_sys(SYS_process_vm_readv, pid, (long)&l, 1, (long)&r, 1);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k < 0 ? errno : EFAULT;
        done += (size_t)k;
    }
    return 0;
}

/* ---- attaching ------------------------------------------------------------------------- */

/* Waits until *count reaches h->size, bounded by attach_seconds; while
   waiting, a peer that died aborts the segment. */
static redcoll_result redcoll__pshm_gather(redcoll_pshm *h, redcoll__ho_aint *count, const char *what) {
    long long end = redcoll__ho_now() + (long long)(h->cfg.attach_seconds * 1e9), next = 0;
    long spins = 0;
    while (redcoll__ho_load(count) < h->size) {
        long long now;
        if (redcoll__ho_aborted(&h->me))
            return redcoll__pshm_fail(REDCOLL_ERR_ABORTED, "redcoll_pshm: a rank failed while %s", what);
        if (++spins < 200) { sched_yield(); continue; }
        now = redcoll__ho_now();
        if (now >= end) {
            int i, missing = -1;
            for (i = 0; i < h->size && missing < 0; ++i)
                if (redcoll__ho_load(&h->ranks[i].state) == REDCOLL__PSHM_ABSENT) missing = i;
            redcoll__ho_abort(&h->me, REDCOLL_ERR_TIMEOUT);
            return redcoll__pshm_fail(REDCOLL_ERR_TIMEOUT, "redcoll_pshm: %s: after %.0f s, rank %d "
                                      "of %d had not attached", what, h->cfg.attach_seconds,
                                      missing < 0 ? h->size - 1 : missing, h->size);
        }
        if (now >= next) {
            int i;
            next = now + 50000000LL;
            for (i = 0; i < h->size; ++i) {
                redcoll__pshm_rank *rk = &h->ranks[i];
                if (i == h->rank || redcoll__ho_load(&rk->state) != REDCOLL__PSHM_LIVE) continue;
                if (rk->pidns == h->ranks[h->rank].pidns &&
                    redcoll__pshm_sys(SYS_kill, rk->pid, 0, 0, 0, 0) != 0 && errno == ESRCH) {
                    redcoll__ho_abort(&h->me, REDCOLL_ERR_ABORTED);
                    return redcoll__pshm_fail(REDCOLL_ERR_ABORTED, "redcoll_pshm: rank %d died "
                                              "while %s", i, what);
                }
            }
        }
        redcoll__pshm_nap(h);
    }
    return REDCOLL_OK;
}

static void redcoll__pshm_unlink(redcoll_pshm *h) {
    if (h->path[0]) shm_unlink(h->path);
    if (h->hdr) redcoll__ho_store(&h->hdr->unlinked, 1);
    h->path[0] = 0;
}

/* The engine's view of this rank and the transport's vtable. */
static int redcoll__pshm_fill(redcoll_pshm *h, const redcoll__ho_layout *lay) {
    redcoll__ho_me *me = &h->me;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int i;
    me->base = h->base;
    me->total = h->total;
    me->lay = *lay;
    me->cma = h->cfg.no_cma ? NULL : h->cma;
    me->cma_min = h->cfg.cma_min_bytes;
    me->pull_min = h->cfg.cma_copy_min_bytes;
    me->stage_bytes = h->cfg.no_cma ? 0 : h->cfg.cma_chunk_bytes;
    me->spin = h->cfg.spin > 0 ? h->cfg.spin
             : h->cfg.spin == 0 && (cpus <= 0 || h->size <= cpus) ? REDCOLL_PSHM_SPIN : 0;
    me->timeout = h->cfg.timeout_seconds;
    me->check_ns = (long long)(h->cfg.liveness_seconds * 1e9);
    if (me->check_ns < 1000000) me->check_ns = 1000000;
    me->hooks.pull = redcoll__pshm_pull;
    me->hooks.alive = redcoll__pshm_alive;
    me->hooks.left = redcoll__pshm_left;
    me->hooks.tell = redcoll__pshm_tell;
    if (h->cfg.progress) me->hooks.host_progress = redcoll__pshm_host_progress;
    me->host_ns = (long long)(h->cfg.progress_seconds * 1e9);
    me->detect = !(h->cfg.timeout_seconds > 0);
    me->owner = h;
    h->pidfd = (int *)malloc(sizeof(int) * (size_t)h->size);
    h->gone = (unsigned char *)calloc((size_t)h->size, 1);
    if (!h->pidfd || !h->gone || !redcoll__ho_me_init(me, h->rank)) return 0;
    for (i = 0; i < h->size; ++i) h->pidfd[i] = -1;
    return 1;
}

static int redcoll__pshm_node_of(void *user, int rank) {
    (void)user; (void)rank;
    return 0; /* the segment's ranks share a node */
}

static void *redcoll__pshm_scratch(void *user, size_t bytes) {
    redcoll_pshm *h = (redcoll_pshm *)user;
    if (h->cfg.arena_bytes) {
        if (h->scratch_seg && bytes <= h->scratch_seg_bytes) return h->scratch_seg;
        if (h->scratch_seg) redcoll_pshm_free(h, h->scratch_seg);
        h->scratch_seg = redcoll_pshm_alloc(h, bytes ? bytes : 64);
        h->scratch_seg_bytes = h->scratch_seg ? bytes : 0;
        if (h->scratch_seg) { redcoll_scratch_block_free(&h->scratch); return h->scratch_seg; }
    }
    return redcoll_scratch_block_get(&h->scratch, bytes);
}

static void redcoll__pshm_vtable(redcoll_pshm *h) {
    redcoll_transport *t = &h->t;
    memset(t, 0, sizeof *t);
    t->user = h; /* h starts with the engine's view */
    t->rank = h->rank;
    t->size = h->size;
    t->send = redcoll__ho_send;
    t->recv = redcoll__ho_recv;
    t->sendrecv = redcoll__ho_sendrecv;
    t->abort = redcoll__ho_abort_entry;
    t->isend = redcoll__ho_isend;
    t->irecv = redcoll__ho_irecv;
    t->waitall = redcoll__ho_waitall;
    t->node_of = redcoll__pshm_node_of;
    t->recv_reduce = redcoll__ho_recv_reduce;
    t->sendrecv_reduce = redcoll__ho_sendrecv_reduce;
    t->scratch = redcoll__pshm_scratch;
    t->test = redcoll__ho_test;
    t->irecv_reduce = redcoll__ho_irecv_reduce;
    memset(&h->nb, 0, sizeof h->nb);
    t->nb = &h->nb;
}

/* Registers this process as `rank`, waits for every rank (the last one
   unlinks a named segment), probes CMA towards every peer, waits again. */
static redcoll_result redcoll__pshm_join(redcoll_pshm *h, int rank) {
    redcoll__ho_layout lay;
    redcoll__pshm_rank *rk;
    redcoll_result r;
    int none = REDCOLL__PSHM_ABSENT, i;
    if (!h || rank < 0 || rank >= h->size || h->rank >= 0 || !h->hdr)
        return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: bad rank %d", rank);
    if (!redcoll__pshm_relayout(h->hdr, &lay))
        return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: a damaged segment");
    h->ranks = (redcoll__pshm_rank *)(h->base + h->hdr->off_ranks);
    h->cma = (unsigned char *)(h->base + h->hdr->off_cma);
    rk = &h->ranks[rank];
    h->rank = rank;
    if (!redcoll__pshm_fill(h, &lay)) { h->rank = -1; return REDCOLL_ERR_OUT_OF_MEMORY; }
    h->probe = ((uint64_t)(uintptr_t)h * 0x9e3779b97f4a7c15ULL) ^ (uint64_t)getpid() ^
               (uint64_t)redcoll__ho_now();
    rk->pid = (int)getpid();
    rk->pidns = redcoll__pshm_pidns();
    rk->probe_addr = (uint64_t)(uintptr_t)&h->probe;
    rk->probe_token = h->probe;
    if (!redcoll__ho_cas(&rk->state, &none, REDCOLL__PSHM_LIVE)) {
        h->rank = -1;
        return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: rank %d is taken", rank);
    }
    redcoll__ho_add(&h->hdr->attached, 1);
    if (redcoll__ho_load(&h->hdr->attached) == h->size) redcoll__pshm_unlink(h);
    r = redcoll__pshm_gather(h, &h->hdr->attached, "waiting for the ranks to attach");
    if (r != REDCOLL_OK) return r;
    if (h->path[0]) redcoll__pshm_unlink(h); /* idempotent: whoever sees everyone in */
    for (i = 0; i < h->size; ++i) {
        redcoll__pshm_rank *q = &h->ranks[i];
        uint64_t got = 0;
        if (i == rank) { h->cma[(size_t)rank * (size_t)h->size + (size_t)i] = 1; continue; }
        if (q->pidns && q->pidns == rk->pidns)
            h->pidfd[i] = (int)redcoll__pshm_sys(REDCOLL__PSHM_SYS_PIDFD, q->pid, 0, 0, 0, 0);
        if (h->pidfd[i] < 0) h->pidfd[i] = -1;
        if (!h->cfg.no_cma && redcoll__pshm_pull(&h->me, i, &got, q->probe_addr, sizeof got) == 0 &&
            got == q->probe_token)
            h->cma[(size_t)rank * (size_t)h->size + (size_t)i] = 1;
    }
    redcoll__ho_add(&h->hdr->probed, 1);
    r = redcoll__pshm_gather(h, &h->hdr->probed, "probing single copy");
    if (r != REDCOLL_OK) return r;
    redcoll__pshm_vtable(h);
    return REDCOLL_OK;
}

/* ---- public entry points ---------------------------------------------------------------- */

REDCOLL_API redcoll_result redcoll_pshm_create(const redcoll_pshm_config *cfg, int size,
                                               redcoll_pshm **out) {
    redcoll_pshm *h;
    redcoll_result r;
    int fd;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    if ((r = redcoll__pshm_new(cfg, size, &h)) != REDCOLL_OK) return r;
    fd = (int)redcoll__pshm_sys(REDCOLL__PSHM_SYS_MEMFD, (long)"redcoll-pshm", 1 /* MFD_CLOEXEC */, 0, 0, 0);
    if (fd < 0) { /* no memfd: a name unlinked at once (children inherit the mapping) */
        char path[64];
        unsigned long long k = (unsigned long long)redcoll__ho_now() ^ ((unsigned long long)getpid() << 32);
        snprintf(path, sizeof path, "/redcoll-%u-%llx", (unsigned)geteuid(), k);
        fd = shm_open(path, O_RDWR | O_CREAT | O_EXCL | REDCOLL__PSHM_O_NOFOLLOW | REDCOLL__PSHM_O_CLOEXEC, 0600);
        if (fd >= 0) shm_unlink(path);
    }
    if (fd < 0) {
        r = redcoll__pshm_fail(REDCOLL_ERR_TRANSPORT, "redcoll_pshm: no shared memory: %s", strerror(errno));
        free(h);
        return r;
    }
    r = redcoll__pshm_make(h, fd, NULL);
    close(fd);
    if (r != REDCOLL_OK) { redcoll_pshm_destroy(h); return r; }
    *out = h;
    return REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_pshm_attach(redcoll_pshm *h, int rank) {
    redcoll__pshm_msg[0] = 0;
    if (!h) return REDCOLL_ERR_INVALID_ARG;
    return redcoll__pshm_join(h, rank);
}

/* The path of `name` for this user; 0 for a bad name. */
static int redcoll__pshm_path(char *path, size_t n, const char *name) {
    size_t i, len = name ? strlen(name) : 0;
    if (len == 0 || len > REDCOLL__PSHM_NAME_MAX) return 0;
    for (i = 0; i < len; ++i) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    snprintf(path, n, "/redcoll-%u-%s", (unsigned)geteuid(), name);
    return 1;
}

/* Rank 0's half of a named open: the segment, created with O_EXCL. */
static redcoll_result redcoll__pshm_create_named(redcoll_pshm *h) {
    redcoll_result r;
    int fd = shm_open(h->path, O_RDWR | O_CREAT | O_EXCL | REDCOLL__PSHM_O_NOFOLLOW |
                      REDCOLL__PSHM_O_CLOEXEC, 0600);
    if (fd < 0) {
        r = redcoll__pshm_fail(errno == EEXIST ? REDCOLL_ERR_TRANSPORT : REDCOLL_ERR_OUT_OF_MEMORY,
                               "redcoll_pshm: cannot create /dev/shm%s: %s%s", h->path, strerror(errno),
                               errno == EEXIST ? " (the name is in use: another job, or a rank 0 "
                                                 "that is still running)" : "");
        h->path[0] = 0; /* not created here: never unlink it */
        return r;
    }
    redcoll__pshm_sys(SYS_fchmod, fd, 0600, 0, 0, 0); /* whatever the umask did */
    r = redcoll__pshm_make(h, fd, "/dev/shm");
    close(fd);
    if (r != REDCOLL_OK) redcoll__pshm_unlink(h);
    return r;
}

/* The others' half: open the segment when it is ready, check it is this
   user's and of this size, map it. */
static redcoll_result redcoll__pshm_open_named(redcoll_pshm *h) {
    long long end = redcoll__ho_now() + (long long)(h->cfg.attach_seconds * 1e9);
    redcoll__pshm_hdr head;
    redcoll_result r;
    for (;;) {
        struct stat st;
        int fd = shm_open(h->path, O_RDWR | REDCOLL__PSHM_O_NOFOLLOW | REDCOLL__PSHM_O_CLOEXEC, 0);
        int ready = 0;
        if (fd >= 0) {
            if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 0777) != 0600) {
                close(fd);
                h->path[0] = 0;
                return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: /dev/shm%s is not "
                                          "this user's with mode 0600: not attached", h->path);
            }
            if ((size_t)st.st_size >= sizeof head &&
                redcoll__pshm_sys(SYS_pread64, fd, (long)&head, sizeof head, 0, 0) == (long)sizeof head)
                ready = head.magic == REDCOLL__PSHM_MAGIC;
            if (ready) {
                if (head.version != REDCOLL__PSHM_VERSION || head.size != (uint32_t)h->size ||
                    (uint64_t)st.st_size < head.total) {
                    close(fd);
                    h->path[0] = 0;
                    return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: /dev/shm%s is "
                                              "a segment of %u ranks, not %d", h->path, head.size, h->size);
                }
                r = redcoll__pshm_map(h, fd, (size_t)head.total);
                close(fd);
                return r;
            }
            close(fd);
            if (st.st_nlink == 0 || (st.st_size > 0 && (size_t)st.st_size < sizeof head))
                return redcoll__pshm_fail(REDCOLL_ERR_TRANSPORT, "redcoll_pshm: rank 0 gave up on /dev/shm%s",
                                          h->path);
        } else if (errno != ENOENT) {
            return redcoll__pshm_fail(REDCOLL_ERR_TRANSPORT, "redcoll_pshm: cannot open /dev/shm%s: %s",
                                      h->path, strerror(errno));
        }
        if (redcoll__ho_now() >= end)
            return redcoll__pshm_fail(REDCOLL_ERR_TIMEOUT, "redcoll_pshm: /dev/shm%s did not appear "
                                      "within %.0f s (rank 0 not started?)", h->path, h->cfg.attach_seconds);
        redcoll__pshm_nap(h);
    }
}

REDCOLL_API redcoll_result redcoll_pshm_open(redcoll_pshm **out, const char *name, int size,
                                             int rank, const redcoll_pshm_config *cfg) {
    redcoll_pshm *h;
    redcoll_result r;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    *out = NULL;
    if ((r = redcoll__pshm_new(cfg, size, &h)) != REDCOLL_OK) return r;
    if (rank < 0 || rank >= size || !redcoll__pshm_path(h->path, sizeof h->path, name)) {
        free(h);
        return redcoll__pshm_fail(REDCOLL_ERR_INVALID_ARG, "redcoll_pshm: bad name or rank");
    }
    r = rank == 0 ? redcoll__pshm_create_named(h) : redcoll__pshm_open_named(h);
    if (r == REDCOLL_OK) r = redcoll__pshm_join(h, rank);
    if (r != REDCOLL_OK) {
        char keep[sizeof redcoll__pshm_msg];
        memcpy(keep, redcoll__pshm_msg, sizeof keep);
        if (!h->hdr) h->path[0] = 0; /* never mapped: it may not be this job's */
        redcoll_pshm_destroy(h); /* else whoever gives up removes the name */
        memcpy(redcoll__pshm_msg, keep, sizeof keep);
        return r;
    }
    *out = h;
    return REDCOLL_OK;
}

REDCOLL_API void redcoll_pshm_destroy(redcoll_pshm *h) {
    int i;
    if (!h) return;
    if (h->path[0]) redcoll__pshm_unlink(h);
    if (h->rank >= 0 && h->ranks) {
        /* a destroyed rank leaves: peers do not count it dead */
        redcoll__ho_store(&h->ranks[h->rank].state, REDCOLL__PSHM_LEFT);
        if (h->t.send) redcoll__ho_leave(&h->me); /* the deadlock detector counts it finished */
    }
    if (h->pidfd)
        for (i = 0; i < h->size; ++i)
            if (h->pidfd[i] >= 0) close(h->pidfd[i]);
    free(h->pidfd);
    free(h->gone);
    free(h->blocks);
    redcoll_scratch_block_free(&h->scratch);
    if (h->me.owner) redcoll__ho_me_free(&h->me);
    if (h->base) munmap(h->base, h->total);
    free(h);
}

REDCOLL_API const redcoll_transport *redcoll_pshm_transport(redcoll_pshm *h) {
    return h && h->rank >= 0 && h->t.send ? &h->t : NULL;
}

REDCOLL_API const char *redcoll_pshm_report(const redcoll_pshm *h) {
    return h && h->rank >= 0 && h->t.send ? redcoll__ho_account(&h->me) : NULL;
}

REDCOLL_API redcoll_result redcoll_pshm_status(const redcoll_pshm *h) {
    const redcoll__ho_shared *sh;
    if (!h || !h->hdr) return REDCOLL_ERR_INVALID_ARG;
    sh = (const redcoll__ho_shared *)(h->base + h->hdr->off_fabric);
    if (!redcoll__ho_load((redcoll__ho_aint *)&sh->aborted)) return REDCOLL_OK;
    return (redcoll_result)redcoll__ho_load((redcoll__ho_aint *)&sh->why);
}

/* ---- the arena --------------------------------------------------------------------------- */

REDCOLL_API void *redcoll_pshm_alloc(redcoll_pshm *h, size_t bytes) {
    size_t need = (bytes + 63) & ~(size_t)63;
    int i;
    if (!h || h->rank < 0 || !h->cfg.arena_bytes || bytes == 0 || need < bytes) return NULL;
    if (!h->blocks) { /* the whole arena, free */
        h->blocks = (redcoll__pshm_block *)malloc(sizeof *h->blocks * 8);
        if (!h->blocks) return NULL;
        h->capblocks = 8;
        h->nblocks = 1;
        h->blocks[0].off = (size_t)h->hdr->off_arena + (size_t)h->rank * (size_t)h->hdr->arena_bytes;
        h->blocks[0].bytes = (size_t)h->hdr->arena_bytes;
        h->blocks[0].used = 0;
    }
    for (i = 0; i < h->nblocks; ++i) {
        redcoll__pshm_block *b = &h->blocks[i];
        if (b->used || b->bytes < need) continue;
        if (b->bytes > need) { /* split: the rest stays free after it */
            if (h->nblocks == h->capblocks) {
                redcoll__pshm_block *more = (redcoll__pshm_block *)realloc(h->blocks,
                                               sizeof *more * (size_t)h->capblocks * 2);
                if (!more) return NULL;
                h->blocks = more;
                h->capblocks *= 2;
                b = &h->blocks[i];
            }
            memmove(b + 2, b + 1, sizeof *b * (size_t)(h->nblocks - i - 1));
            b[1].off = b->off + need;
            b[1].bytes = b->bytes - need;
            b[1].used = 0;
            b->bytes = need;
            ++h->nblocks;
        }
        b->used = 1;
        return h->base + b->off;
    }
    return NULL;
}

REDCOLL_API void redcoll_pshm_free(redcoll_pshm *h, void *p) {
    int i;
    if (!h || !p || !h->blocks) return;
    for (i = 0; i < h->nblocks; ++i) {
        redcoll__pshm_block *b = &h->blocks[i];
        if (h->base + b->off != (char *)p || !b->used) continue;
        b->used = 0;
        if (i + 1 < h->nblocks && !b[1].used) { /* merge with the next */
            b->bytes += b[1].bytes;
            memmove(b + 1, b + 2, sizeof *b * (size_t)(h->nblocks - i - 2));
            --h->nblocks;
        }
        if (i > 0 && !b[-1].used) { /* and the previous */
            b[-1].bytes += b->bytes;
            memmove(b, b + 1, sizeof *b * (size_t)(h->nblocks - i - 1));
            --h->nblocks;
        }
        return;
    }
}

/* ---- fork helper --------------------------------------------------------------------------- */

REDCOLL_API redcoll_result redcoll_pshm_run(const redcoll_pshm_config *cfg, int size,
                                            redcoll_pshm_rank_fn fn, void *arg,
                                            redcoll_result *results) {
    redcoll_pshm *h;
    redcoll_result r, first = REDCOLL_OK;
    pid_t *pids;
    int i, started = 0;
    if (!fn) return REDCOLL_ERR_INVALID_ARG;
    if ((r = redcoll_pshm_create(cfg, size, &h)) != REDCOLL_OK) return r;
    pids = (pid_t *)calloc((size_t)size, sizeof *pids);
    if (!pids) { redcoll_pshm_destroy(h); return REDCOLL_ERR_OUT_OF_MEMORY; }
    fflush(NULL); /* no buffered output is written twice */
    for (i = 0; i < size; ++i, ++started) {
        pids[i] = fork();
        if (pids[i] < 0) break;
        if (pids[i] == 0) {
            redcoll__pshm_rank *rk;
            r = redcoll_pshm_attach(h, i);
            if (r == REDCOLL_OK) r = fn(redcoll_pshm_transport(h), arg);
            rk = (redcoll__pshm_rank *)(h->base + h->hdr->off_ranks) + i;
            redcoll__ho_store(&rk->result, (int)r);
            redcoll_pshm_destroy(h);
            fflush(NULL);
            _exit(0);
        }
    }
    if (started < size) { /* release the ranks that started (they wait to attach) */
        redcoll__ho_shared *sh = (redcoll__ho_shared *)(h->base + h->hdr->off_fabric);
        int none = 0;
        redcoll__ho_cas(&sh->why, &none, (int)REDCOLL_ERR_OUT_OF_MEMORY);
        redcoll__ho_store(&sh->aborted, 1);
        first = REDCOLL_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < started; ++i) {
        int st = 0;
        while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {}
    }
    for (i = 0; i < size; ++i) {
        redcoll__pshm_rank *rk = (redcoll__pshm_rank *)(h->base + h->hdr->off_ranks) + i;
        redcoll_result ri = (redcoll_result)redcoll__ho_load(&rk->result);
        if (results) results[i] = ri;
        if (first == REDCOLL_OK && ri != REDCOLL_OK) first = ri;
    }
    free(pids);
    redcoll_pshm_destroy(h);
    return first;
}

/* ---- MPI ---------------------------------------------------------------------------------- */

#if defined(MPI_VERSION)
REDCOLL_API redcoll_result redcoll_pshm_init_mpi(redcoll_pshm **out, MPI_Comm comm,
                                                 const redcoll_pshm_config *cfg) {
    redcoll_pshm *h = NULL;
    MPI_Comm node;
    int rank = 0, size = 0, nsize = 0, one = 0, res;
    struct { int res; char path[sizeof h->path]; char msg[sizeof redcoll__pshm_msg]; } made;
    redcoll_result r;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    *out = NULL;
    redcoll__pshm_msg[0] = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return REDCOLL_ERR_INVALID_ARG;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return REDCOLL_ERR_TRANSPORT;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    one = nsize == size;
    MPI_Allreduce(MPI_IN_PLACE, &one, 1, MPI_INT, MPI_MIN, comm);
    if (!one)
        return redcoll__pshm_fail(REDCOLL_ERR_UNSUPPORTED, "redcoll_pshm: the communicator spans nodes");
    /* rank 0 names and creates the segment; every rank learns the outcome and its message */
    r = redcoll__pshm_new(cfg, size, &h);
    memset(&made, 0, sizeof made);
    made.res = (int)r;
    if (rank == 0 && r == REDCOLL_OK) {
        unsigned char rnd[12];
        char name[2 * sizeof rnd + 1];
        int k;
        if (redcoll__pshm_sys(REDCOLL__PSHM_SYS_RANDOM, (long)rnd, sizeof rnd, 0, 0, 0) != (long)sizeof rnd) {
            unsigned long long x = (unsigned long long)redcoll__ho_now() * 0x9e3779b97f4a7c15ULL ^
                                   (unsigned long long)getpid();
            for (k = 0; k < (int)sizeof rnd; ++k) rnd[k] = (unsigned char)((x >> (8 * (k % 8))) ^ (unsigned)k * 131u);
        }
        for (k = 0; k < (int)sizeof rnd; ++k) snprintf(name + 2 * k, 3, "%02x", rnd[k]);
        snprintf(h->path, sizeof h->path, "/redcoll-%u-mpi-%d-%s", (unsigned)geteuid(), (int)getpid(), name);
        made.res = (int)redcoll__pshm_create_named(h);
        memcpy(made.path, h->path, sizeof made.path);
        memcpy(made.msg, redcoll__pshm_msg, sizeof made.msg);
    }
    MPI_Bcast(&made, (int)sizeof made, MPI_BYTE, 0, comm);
    if (made.res != REDCOLL_OK) { /* nothing was created, or rank 0 removed it */
        redcoll_pshm_destroy(h);
        memcpy(redcoll__pshm_msg, made.msg, sizeof made.msg);
        redcoll__pshm_msg[sizeof redcoll__pshm_msg - 1] = 0;
        return (redcoll_result)made.res;
    }
    if (rank != 0 && r == REDCOLL_OK) {
        memcpy(h->path, made.path, sizeof h->path);
        r = redcoll__pshm_open_named(h);
    }
    res = -(int)r; /* errors are negative: the largest is an error if there is one */
    MPI_Allreduce(MPI_IN_PLACE, &res, 1, MPI_INT, MPI_MAX, comm);
    if (res == 0) {
        r = redcoll__pshm_join(h, rank);
        res = -(int)r;
        MPI_Allreduce(MPI_IN_PLACE, &res, 1, MPI_INT, MPI_MAX, comm);
    }
    if (res != 0) { /* every rank gives up; rank 0 (or whoever mapped it) removes the name */
        if (h && !h->hdr) h->path[0] = 0;
        redcoll_pshm_destroy(h);
        return r != REDCOLL_OK ? r : (redcoll_result)-res;
    }
    *out = h;
    return REDCOLL_OK;
}
#endif /* MPI_VERSION */

#endif /* Linux */

#endif /* REDCOLL_PSHM_IMPLEMENTATION_DONE */
#endif /* REDCOLL_IMPLEMENTATION */
