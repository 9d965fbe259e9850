/* redcoll_mpi.h - redcoll transport over an MPI communicator - MIT licence (see redcoll.h)

   Runs redcoll's schedules between the processes of an MPI communicator.
   MPICH is the reference implementation; any MPI-3 library works.

       redcoll_mpi m;
       redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL);      collective over the comm
       redcoll_allreduce(&m.t, sbuf, rbuf, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
       redcoll_mpi_finalize(&m);                        collective, before MPI_Finalize

   Build with mpicc (mpicc.mpich), run with mpiexec (mpiexec.mpich -n 4 ./prog).

   Semantics
   - init duplicates the communicator: redcoll's tags never meet the
     application's messages, and the duplicate returns MPI errors instead of
     aborting (MPI_ERRORS_RETURN), so they become redcoll results: a
     message of another size -> REDCOLL_ERR_TRANSPORT, no memory ->
     REDCOLL_ERR_OUT_OF_MEMORY, a failed process (ULFM, when the MPI has it)
     -> REDCOLL_ERR_ABORTED, anything else -> REDCOLL_ERR_TRANSPORT. The MPI
     error code of the last failure is kept in m.last_mpi_error, the first
     failure's cause in m.failure (redcoll_mpi_failure_string says it).
   - A message larger than INT_MAX bytes (MPI counts are int) is sent as
     consecutive chunks of at most cfg.max_chunk_bytes (default INT_MAX); MPI's
     non-overtaking rule keeps the chunks, and consecutive messages, in order.
     Sizes must match exactly on both ends, as for every redcoll transport.
   - Transfers: sends are MPI_Isend, tested (a blocking call's sends of at
     most 256 bytes to another rank: MPI_Send, which MPI completes at once
     by sending such messages eagerly). Every message of a library call
     carries a message counter (REDCOLL_TAG_SEQ_MASK: how many messages of
     its stream the sender sent this receiver before, modulo 8, XORed into
     the tag), so a blocking call's receive is posted (MPI_Irecv, before
     its send) for exactly its message: a message the peer sent after a
     skipped or different call cannot match it. Its size is compared on
     arrival (a shorter message: REDCOLL_ERR_TRANSPORT; a longer one with
     the very same tag, which only a hash collision of ranks that disagree
     gives, 1 in 4096, is MPI's MPI_ERR_TRUNCATE, which MPICH raises through
     MPI_COMM_WORLD's handler, as its own collectives do). The receives of
     isend/irecv/waitall are not posted ahead but taken (MPI_Recv) once
     MPI_Iprobe shows their sender's oldest message to this rank: its size
     is compared first (a message of another size stays where it is and the
     receive fails), and a message of another call of the library's there
     (REDCOLL_TAG_OTHER_CALL) fails the receive with REDCOLL_ERR_MISMATCH at
     once, even when this receive's own message lies behind it; they are
     taken in posting order per peer. Over an MPI whose tags lack bits 25-27
     there are no counters and every receive is taken so.
   - Ranks that disagree about a call end in an error without a timeout
     wherever a waiting rank is shown a message of the other call by the
     peer it waits for, or a peer's notice (below): after 1024 polls a wait
     also looks, every 128 polls, for notices from any rank and, for a send,
     at the receiver's oldest message, for a posted receive at the
     sender's (a message of another call there is the one the receive
     passed over). Where no rank is shown anything --
     every rank waits to receive from ranks that wait to receive (two ranks
     that each think they are the root of a reduce, a bcast among
     reductions) -- it waits, as MPICH's own collectives do then; the
     threads transport and the simulator end those too (test/mpi/test_mpi.c
     lists the cases).
   - test (for redcoll's non-blocking collectives; nb is provided, and no
     irecv_reduce, as there is no recv_reduce) makes one pass of what waitall
     does and never waits: sends tested, receives taken when their message
     has come. MPI moves its own transfers inside any MPI call, so a started
     collective advances whenever the application calls redcoll_test (or,
     through the drop-in, MPI_Test and the like).
   - abort does NOT call MPI_Abort: an error inside a collective is returned
     to the caller. abort marks this rank's transport failed (m.failed): every
     later call on it returns REDCOLL_ERR_ABORTED at once, because the
     duplicate communicator may hold half a collective's messages and cannot
     be trusted again. It also sends every other rank a notice (a few ints,
     REDCOLL_TAG_NOTICE; not when a notice released this rank): a rank
     waiting in this transport, now or in a later call, finds it and fails
     with REDCOLL_ERR_ABORTED, so no rank stays blocked in MPI for a peer
     that left the collective. redcoll_mpi_finalize receives and drops what
     failed calls left behind. To end the whole job on an error instead, set
     cfg.abort_job_on_error (abort then calls MPI_Abort on the duplicate).
   - recv_reduce / sendrecv_reduce are not provided: redcoll.h cuts every
     message above opts.chunk_bytes (default 1 MiB) into messages of that
     size and reduces each as it lands, so a reduction stages one chunk,
     never a whole vector.
   - scratch (the optional entry): one block per redcoll_mpi, 64-byte
     aligned, grown (freed and allocated anew) when a call needs more and
     never shrunk, so in steady state a one-shot collective gets the same
     block and faults in no pages. Memory bound: the largest single call's
     scratch so far (at least 64 bytes) + 63; freed by redcoll_mpi_finalize.
   - node_of: processes that share memory (MPI_Comm_split_type with
     MPI_COMM_TYPE_SHARED) have the same node id; ids are 0, 1, ... in the
     order of each node's lowest rank. Computed once by init (an allgather).
     cfg.ranks_per_node = k > 0, or without it the environment variable
     REDCOLL_RANKS_PER_NODE=k (rank 0's value, so every rank agrees), makes
     every k consecutive ranks one node instead: the node-aware schedules
     and the two-level model can be exercised on one machine.
   - node: for a communicator that spans nodes, redcoll_mpi_split_node gives
     the communicator of this rank's node; a transport made on it (shared
     memory, or another redcoll_mpi) handed to redcoll_mpi_set_node carries
     the node-aware rows' levels inside the node, MPI the rest. abort
     aborts that transport too.
   - Helpers map MPI's predefined datatypes and ops and MPI_IN_PLACE to
     redcoll's, so an MPI call translates one to one:
         redcoll_dtype d; redcoll_op o;
         if (redcoll_mpi_dtype(MPI_INT, &d) && redcoll_mpi_op(MPI_SUM, &o))
             redcoll_allreduce(&m.t, redcoll_mpi_buf(sbuf), rbuf, n, d, o, NULL);
   - Tags: redcoll's tags have 28 bits (REDCOLL_TAG_MAX); MPI guarantees
     tags up to 32767 only (MPICH allows 2^28 - 1). init reads MPI_TAG_UB and
     every call keeps the low bits it allows (m.tag_mask): the group view and
     the algorithm always fit, a narrower MPI only detects ranks that pass
     mismatched parameters less often (and keeps fewer slots).
   - Thread safety: as the MPI library's thread level allows; one thread per
     redcoll_mpi at a time. */
#ifndef REDCOLL_MPI_H
#define REDCOLL_MPI_H

#include <mpi.h>
#include "redcoll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Zero-initialisable; NULL means all defaults. */
typedef struct redcoll_mpi_config {
    size_t max_chunk_bytes;    /* largest single MPI message; 0 = INT_MAX. Tests
                                  lower it to drive the chunking path. */
    int    abort_job_on_error; /* 1: abort calls MPI_Abort(comm, 1) */
    int    ranks_per_node;     /* > 0: nodes of this many consecutive ranks; 0: the
                                  environment's REDCOLL_RANKS_PER_NODE, else the
                                  processes that share memory. (Appended.) */
} redcoll_mpi_config;

/* What made this transport fail: its first failure (later calls return
   ABORTED at once). redcoll_mpi_failure_string says it in words. */
typedef struct redcoll_mpi_failure {
    redcoll_result why;      /* REDCOLL_OK: none yet */
    int            peer;     /* the rank it came from (-1: none): the one making
                                another call (MISMATCH), whose message had the wrong
                                size or whose transfer failed (TRANSPORT), whose
                                notice released this rank (ABORTED) */
    int            tag;      /* this rank's tag then (-1: none) */
    int            peer_tag; /* MISMATCH: the tag of the peer's message */
    size_t         want, got;/* a message of the wrong size: bytes expected and
                                received ((size_t)-1: more than want) */
    redcoll_result origin_why;  /* ABORTED: why `peer` failed, and when that was */
    int            origin_tag;  /* a MISMATCH, the pair it found: its tag, the rank */
    int            origin_peer; /* in another call (-1: none) and that rank's tag */
    int            origin_peer_tag;
} redcoll_mpi_failure;

typedef struct redcoll_mpi {
    redcoll_transport t;       /* pass &m.t to the collectives */
    MPI_Comm          comm;    /* redcoll's duplicate of the user's communicator */
    size_t            max_chunk;
    int               abort_job;
    int               failed;  /* set by abort: later calls return ABORTED */
    int               released;/* a notice from a failed rank released this one */
    int               last_mpi_error; /* MPI error code of the last failed call */
    redcoll_mpi_failure failure;      /* the first failure, for messages */
    int               notice[6];      /* the notice abort sends (MPI reads it later) */
    int              *mark;           /* one int per rank: waitall's scratch */
    int              *node_ids;       /* node_of table, one per rank */
    int               nodes;          /* distinct node ids */
    int               tag_mask;       /* redcoll's tags keep these bits: the largest
                                         2^k - 1 <= MPI_TAG_UB (MPI: >= 32767) */
    redcoll_scratch_block scratch;    /* the scratch entry's block */
    redcoll_nbstate   nb;             /* the library's, for non-blocking collectives */
    void             *spare;          /* freed one-chunk request records, for the next isend/irecv */
    int               test_pass;      /* test's stamp in mark */
    long              test_idle;      /* tests in vain in a row: when to look */
    const redcoll_transport *inside;  /* the node's transport (redcoll_mpi_set_node); NULL: none */
    unsigned char    *seq;            /* message counters per (rank, stream), sent and taken
                                         (REDCOLL_TAG_SEQ_MASK); NULL: the tags lack the bits */
} redcoll_mpi;

/*
Makes m a transport over a duplicate of comm; &m->t is then the transport.

Parameters
    m       the transport to fill.
    comm    an intracommunicator (MPI must be initialised).
    cfg     the configuration, or NULL for the defaults.

Return Value
    REDCOLL_OK; REDCOLL_ERR_INVALID_ARG, REDCOLL_ERR_OUT_OF_MEMORY or the
    mapped MPI error, and then m holds nothing to free.

Thread Safety
    Collective over comm, as MPI_Comm_dup.
*/
REDCOLL_API redcoll_result redcoll_mpi_init(redcoll_mpi *m, MPI_Comm comm,
                                            const redcoll_mpi_config *cfg);

/*
Frees the duplicate communicator and the tables of m; call it before
MPI_Finalize.

Parameters
    m       a transport made by redcoll_mpi_init.

Return Value
    None.

Thread Safety
    Collective over the communicator, as MPI_Comm_free.
*/
REDCOLL_API void redcoll_mpi_finalize(redcoll_mpi *m);

/*
Translates an MPI call's arguments to redcoll's: redcoll_mpi_dtype a
predefined datatype, redcoll_mpi_op a predefined op (not MPI_REPLACE or
MPI_NO_OP), redcoll_mpi_buf MPI_IN_PLACE, redcoll_mpi_result an MPI error
code.

Parameters
    type, op    the MPI datatype or op; out receives redcoll's.
    buf         a send buffer (or scatter's receive buffer at the root).
    mpi_error   an MPI error code.

Return Value
    redcoll_mpi_dtype, redcoll_mpi_op: 1 if there is a counterpart, else 0.
    redcoll_mpi_buf: REDCOLL_IN_PLACE for MPI_IN_PLACE, otherwise buf.
    redcoll_mpi_result: the redcoll result (MPI_SUCCESS is REDCOLL_OK).

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_mpi_dtype(MPI_Datatype type, redcoll_dtype *out);
REDCOLL_API int redcoll_mpi_op(MPI_Op op, redcoll_op *out);
REDCOLL_API void *redcoll_mpi_buf(const void *buf);
REDCOLL_API redcoll_result redcoll_mpi_result(int mpi_error);

/*
The communicator of this rank's node: the ranks of m with this rank's
node_of id, in rank order, for a transport inside the node.

Parameters
    m       an initialised transport.
    node    receives the communicator (MPI_COMM_NULL on failure); the caller
            frees it with MPI_Comm_free.

Return Value
    REDCOLL_OK, or the mapped MPI error.

Thread Safety
    Collective over m's communicator, as MPI_Comm_split.
*/
REDCOLL_API redcoll_result redcoll_mpi_split_node(redcoll_mpi *m, MPI_Comm *node);

/*
Makes `inside` m's `node` entry: the node-aware rows (node_split,
node_leader) run their levels inside a node on it, and only the network
part over MPI; m's abort aborts it too.

Parameters
    m       an initialised transport.
    inside  a transport over the ranks of this rank's node in rank order
            (e.g. shared memory, or another redcoll_mpi, made on
            redcoll_mpi_split_node's communicator); it must outlive m's use
            of it. NULL: none (the levels run over MPI).

Return Value
    None.

Thread Safety
    Not while a collective runs on m. Every rank of a node sets one alike
    (all or none of them).
*/
REDCOLL_API void redcoll_mpi_set_node(redcoll_mpi *m, const redcoll_transport *inside);

/*
m's first failure in words: what happened, who and which calls were
involved, e.g. "ranks disagree about the call: rank 1 is in allreduce
(ring), this rank in allreduce (recursive_doubling)".

Parameters
    m       the transport.
    buf, n  where the words go (n bytes, always terminated when n > 0).

Return Value
    buf; "no failure" when there is none.

Thread Safety
    Not while a call runs on m.
*/
REDCOLL_API const char *redcoll_mpi_failure_string(const redcoll_mpi *m, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* REDCOLL_MPI_H */

#ifdef REDCOLL_IMPLEMENTATION
#ifndef REDCOLL_MPI_IMPLEMENTATION_DONE
#define REDCOLL_MPI_IMPLEMENTATION_DONE

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
#define REDCOLL__MPI_BOOL_SIZE sizeof(bool)
#else
#define REDCOLL__MPI_BOOL_SIZE sizeof(_Bool)
#endif

REDCOLL_API redcoll_result redcoll_mpi_result(int mpi_error) {
    int cls = MPI_ERR_OTHER;
    if (mpi_error == MPI_SUCCESS) return REDCOLL_OK;
    MPI_Error_class(mpi_error, &cls);
    if (cls == MPI_ERR_NO_MEM) return REDCOLL_ERR_OUT_OF_MEMORY;
#ifdef MPIX_ERR_PROC_FAILED
    if (cls == MPIX_ERR_PROC_FAILED) return REDCOLL_ERR_ABORTED;
#endif
#ifdef MPIX_ERR_REVOKED
    if (cls == MPIX_ERR_REVOKED) return REDCOLL_ERR_ABORTED;
#endif
    return REDCOLL_ERR_TRANSPORT;
}

/* Latches the MPI error code; returns the redcoll result. */
static redcoll_result redcoll__mpi_check(redcoll_mpi *m, int err) {
    if (err == MPI_SUCCESS) return REDCOLL_OK;
    m->last_mpi_error = err;
    return redcoll_mpi_result(err);
}

/* Bytes of chunk i of a `bytes` message (0 past the end; a 0-byte message
   is one empty chunk). */
static int redcoll__mpi_chunk(const redcoll_mpi *m, size_t bytes, size_t i) {
    size_t off = i * m->max_chunk;
    if (i == 0) return (int)(bytes < m->max_chunk ? bytes : m->max_chunk);
    if (off >= bytes) return 0;
    return (int)(bytes - off < m->max_chunk ? bytes - off : m->max_chunk);
}

static size_t redcoll__mpi_nchunks(const redcoll_mpi *m, size_t bytes) {
    return bytes <= m->max_chunk ? 1 : (bytes + m->max_chunk - 1) / m->max_chunk; /* no divide for one */
}

/* Polls of a wait before it first looks (redcoll__mpi_look) for a reason
   it could never end that its own probes do not show -- a notice from a
   rank it does not wait for, a message of another call from the peer of a
   send -- and between looks: a look is one or two MPI_Iprobe calls, so a
   transfer done within the first polls pays none. */
#ifndef REDCOLL__MPI_LOOK_AFTER /* tests lower them to look at every poll */
#define REDCOLL__MPI_LOOK_AFTER 1024
#define REDCOLL__MPI_LOOK_EVERY 128
#endif
/* Looks in a row that must find the receiver of a send in another call
   before the send fails with MISMATCH. A receiver that took the message and
   went on to its next call shows the same head as one that skipped this
   call, until MPI reports the send complete, which can come after the
   receiver's next message: a real mismatch stays, the race passes. */
#ifndef REDCOLL__MPI_SUSPECT_LOOKS
#define REDCOLL__MPI_SUSPECT_LOOKS 64
#endif

/* A blocking transfer's send of at most this many bytes to another rank is
   MPI_Send: MPI libraries send such short messages eagerly (MPICH's eager
   limits are kilobytes), so it returns at once whether or not the receiver
   is in this call, and costs no request to create and test, which a small
   message's latency feels (docs/benchmarks.md). Longer ones, and a send to
   this rank itself (which MPICH does not buffer: MPI_Send waits for the
   receive), are MPI_Isend and tested, so a send whose receiver is in
   another call is found (redcoll__mpi_look) instead of blocking. */
#define REDCOLL__MPI_EAGER 256

/* A notice (REDCOLL_TAG_NOTICE): the first int says what it is. */
#define REDCOLL__MPI_NOTICE_FAILED 1 /* the sender failed: [1] why, [2] its tag,
                                        [3] the peer it found in another call (or -1),
                                        [4] that peer's tag */

static void redcoll__mpi_no_failure(redcoll_mpi_failure *f) {
    memset(f, 0, sizeof *f);
    f->peer = f->tag = f->peer_tag = f->origin_tag = f->origin_peer = f->origin_peer_tag = -1;
}

/* Records the first failure of this transport; returns `why`. */
static redcoll_result redcoll__mpi_failed(redcoll_mpi *m, redcoll_result why, int peer, int tag,
                                          int peer_tag) {
    redcoll_mpi_failure *f = &m->failure;
    if (f->why != REDCOLL_OK) return why;
    f->why = why; f->peer = peer; f->tag = tag; f->peer_tag = peer_tag;
    return why;
}

/* One end of a transfer: a send (its request) or a receive of `len` bytes
   into buf, which is not posted but taken when its message is seen
   (redcoll__mpi_take). */
typedef struct redcoll__mpi_end {
    int          peer, tag, is_recv, len, done;
    int          posted;  /* a receive posted (MPI_Irecv) rather than taken */
    int          suspect; /* looks in a row that found the receiver in another call */
    void        *buf;
    MPI_Request  q;
} redcoll__mpi_end;

static void redcoll__mpi_end_set(redcoll__mpi_end *e, int is_recv, int peer, void *buf, int len,
                                 int tag) {
    e->peer = peer; e->tag = tag; e->is_recv = is_recv; e->len = len; e->done = 0;
    e->posted = 0; e->suspect = 0; e->buf = buf; e->q = MPI_REQUEST_NULL;
}

/* Whether messages with tag carry a counter: library tags where MPI's tags
   have the bits. */
static int redcoll__mpi_counted(const redcoll_mpi *m, int tag) { return m->seq && REDCOLL_TAG_ROW(tag) >= 0; }

/* tag with the message counter XORed into REDCOLL_TAG_SEQ_MASK for the
   next message of its stream (REDCOLL_TAG_STREAM_INDEX: its slot, and a
   persistent request's id) sent to (dir 0) or taken from (dir 1) peer, and
   that counter advanced. A peer's messages of one stream are taken in the
   order it sent them (the stream rule at REDCOLL_TAG_MAX), so the two ends
   count alike in a correct program. Raw tags and notices carry none. */
static int redcoll__mpi_seq(redcoll_mpi *m, int peer, int tag, int dir) {
    unsigned char *c;
    if (!redcoll__mpi_counted(m, tag)) return tag;
    c = &m->seq[((size_t)peer * REDCOLL_TAG_STREAMS + (size_t)REDCOLL_TAG_STREAM_INDEX(tag)) * 2 + (size_t)dir];
    return tag ^ (int)((*c)++ & 7u) << REDCOLL_TAG_SEQ_SHIFT;
}

/* Takes the notice the probe found: this rank is released (ABORTED) by the
   sender's failure, which it records. */
static redcoll_result redcoll__mpi_notice(redcoll_mpi *m, const MPI_Status *st, int tag) {
    int v[6] = { 0, 0, -1, -1, -1, 0 };
    MPI_Recv(v, 6, MPI_INT, st->MPI_SOURCE, st->MPI_TAG, m->comm, MPI_STATUS_IGNORE);
    m->released = 1;
    if (m->failure.why == REDCOLL_OK) {
        m->failure.origin_why = (redcoll_result)v[1];
        m->failure.origin_tag = v[2];
        m->failure.origin_peer = v[3];
        m->failure.origin_peer_tag = v[4];
    }
    return redcoll__mpi_failed(m, REDCOLL_ERR_ABORTED, st->MPI_SOURCE, tag, -1);
}

/* e's message had got bytes (-1: more than e's). */
static redcoll_result redcoll__mpi_size_failed(redcoll_mpi *m, const redcoll__mpi_end *e, int got) {
    m->last_mpi_error = MPI_ERR_TRUNCATE;
    if (m->failure.why == REDCOLL_OK) {
        m->failure.want = (size_t)e->len;
        m->failure.got = got < 0 ? (size_t)-1 : (size_t)got;
    }
    return redcoll__mpi_failed(m, REDCOLL_ERR_TRANSPORT, e->peer, e->tag, -1);
}

/* Completes the posted receive e if its message has come, its size
   checked (a shorter message of the same tag; a longer one is MPI's
   MPI_ERR_TRUNCATE). */
static redcoll_result redcoll__mpi_posted(redcoll_mpi *m, redcoll__mpi_end *e) {
    MPI_Status st;
    int flag = 0, got = -1;
    redcoll_result r = redcoll__mpi_check(m, MPI_Test(&e->q, &flag, &st));
    if (r != REDCOLL_OK) return redcoll__mpi_failed(m, r, e->peer, e->tag, -1);
    if (!flag) return REDCOLL_OK;
    e->done = 1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    return got == e->len ? REDCOLL_OK : redcoll__mpi_size_failed(m, e, got);
}

/* Receives e if its message has come. The peer's oldest message to this
   rank decides: e's own (its size checked before anything is received, so
   a message of the wrong size is an error here and never MPI's
   MPI_ERR_TRUNCATE, which MPI raises through MPI_COMM_WORLD's handler), a
   notice (a failed rank released this one), or one of another call of the
   library's in the same slot (the stream rule at REDCOLL_TAG_MAX: the peer
   makes a different call, REDCOLL_ERR_MISMATCH -- also when e's message is
   there behind it, as when a rank skipped a call). Any other message (raw
   tags, another slot) is passed over. */
static redcoll_result redcoll__mpi_take(redcoll_mpi *m, redcoll__mpi_end *e) {
    MPI_Status st;
    int flag = 0, got = -1;
    if (MPI_Iprobe(e->peer, MPI_ANY_TAG, m->comm, &flag, &st) != MPI_SUCCESS || !flag) return REDCOLL_OK;
    if (st.MPI_TAG != e->tag) {
        if (st.MPI_TAG == (REDCOLL_TAG_NOTICE & m->tag_mask)) return redcoll__mpi_notice(m, &st, e->tag);
        if (REDCOLL_TAG_OTHER_CALL(e->tag, st.MPI_TAG))
            return redcoll__mpi_failed(m, REDCOLL_ERR_MISMATCH, e->peer, e->tag, st.MPI_TAG);
        flag = 0;
        if (MPI_Iprobe(e->peer, e->tag, m->comm, &flag, &st) != MPI_SUCCESS || !flag) return REDCOLL_OK;
    }
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != e->len) return redcoll__mpi_size_failed(m, e, got);
    e->done = 1;
    return redcoll__mpi_failed(m, redcoll__mpi_check(m, MPI_Recv(e->buf, e->len, MPI_BYTE, e->peer,
                                                                 e->tag, m->comm, MPI_STATUS_IGNORE)),
                               e->peer, e->tag, -1);
}

/* One look for what e's own polling does not show: a notice from a rank
   that failed (any source) and, for a send or a posted receive, a message
   of another call at the head of the peer's messages to this rank (the
   stream rule) while e is not complete, REDCOLL__MPI_SUSPECT_LOOKS looks in
   a row. For a receive, a message that differs from e's own only in the
   counter is a later one of this call, not suspect (e's own matched and is
   on its way); one of another call is e's, passed over by the posted
   receive. */
static redcoll_result redcoll__mpi_look(redcoll_mpi *m, redcoll__mpi_end *e) {
    MPI_Status st;
    int flag = 0, other;
    if (MPI_Iprobe(MPI_ANY_SOURCE, REDCOLL_TAG_NOTICE & m->tag_mask, m->comm, &flag, &st) ==
            MPI_SUCCESS && flag)
        return redcoll__mpi_notice(m, &st, e->tag);
    if (e->is_recv && !e->posted) return REDCOLL_OK; /* the take sees the head itself */
    flag = 0;
    other = MPI_Iprobe(e->peer, MPI_ANY_TAG, m->comm, &flag, &st) == MPI_SUCCESS && flag &&
            REDCOLL_TAG_OTHER_CALL(e->tag, st.MPI_TAG) &&
            (!e->is_recv || ((st.MPI_TAG ^ e->tag) & ~REDCOLL_TAG_SEQ_MASK) != 0);
    flag = 0; /* a transfer the probe's progress completed is not suspect (the next poll ends it) */
    if (other && MPI_Request_get_status(e->q, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS && !flag) {
        if (++e->suspect >= REDCOLL__MPI_SUSPECT_LOOKS)
            return redcoll__mpi_failed(m, REDCOLL_ERR_MISMATCH, e->peer, e->tag, st.MPI_TAG);
    } else {
        e->suspect = 0;
    }
    return REDCOLL_OK;
}

/* Ends the transfers a failed wait leaves: MPI cannot always cancel a send,
   so one not done at once is freed (MPI finishes it if its receiver ever
   takes it). A posted receive is cancelled, or completed if its message
   matched it already, so nothing lands in its buffer later; taken ones
   were never posted. */
static void redcoll__mpi_cancel(int n, redcoll__mpi_end *e) {
    int i, flag;
    for (i = 0; i < n; ++i) {
        if (e[i].q == MPI_REQUEST_NULL) continue;
        MPI_Cancel(&e[i].q);
        if (e[i].is_recv) { MPI_Wait(&e[i].q, MPI_STATUS_IGNORE); continue; }
        flag = 0;
        MPI_Test(&e[i].q, &flag, MPI_STATUS_IGNORE);
        if (!flag) MPI_Request_free(&e[i].q);
    }
}

/* Polls the n ends until all are done: a receive is taken when its message
   is seen (redcoll__mpi_take: its peer's oldest message decides, so a peer
   in another call or a failed one ends the wait with an error at once),
   one receive per peer at a time, in order; a send is tested. After
   REDCOLL__MPI_LOOK_AFTER polls it also looks every
   REDCOLL__MPI_LOOK_EVERY polls (redcoll__mpi_look, one end in turn). On
   failure the sends left are freed. `mark` (NULL for at most two ends, all
   to different peers or one to each) is one int per rank of scratch. */
static redcoll_result redcoll__mpi_wait(redcoll_mpi *m, int n, redcoll__mpi_end *e, int *mark) {
    long polls = 0;
    int left = n, at = 0, i;
    redcoll_result r = REDCOLL_OK;
    for (i = 0; i < n; ++i)
        if (e[i].done) --left;
    if (mark) for (i = 0; i < n; ++i) mark[e[i].peer] = -1;
    while (left > 0) {
        for (i = 0; i < n && r == REDCOLL_OK; ++i) {
            int flag = 0;
            if (e[i].done) continue;
            if (e[i].posted) {
                r = redcoll__mpi_posted(m, &e[i]);
            } else if (e[i].is_recv) {
                if (mark && mark[e[i].peer] == (int)polls) continue; /* an older receive from it waits */
                if (mark) mark[e[i].peer] = (int)polls;
                r = redcoll__mpi_take(m, &e[i]);
            } else {
                r = redcoll__mpi_check(m, MPI_Test(&e[i].q, &flag, MPI_STATUS_IGNORE));
                if (r != REDCOLL_OK) redcoll__mpi_failed(m, r, e[i].peer, e[i].tag, -1);
                e[i].done = flag;
            }
            if (e[i].done) --left;
        }
        if (r == REDCOLL_OK && left > 0 && ++polls >= REDCOLL__MPI_LOOK_AFTER &&
            polls % REDCOLL__MPI_LOOK_EVERY == 0) {
            while (e[at % n].done) ++at;
            r = redcoll__mpi_look(m, &e[at++ % n]);
        }
        if (r != REDCOLL_OK) { redcoll__mpi_cancel(n, e); return r; }
    }
    return REDCOLL_OK;
}

/* One blocking transfer: a send of sbytes to dst (dst >= 0) and/or a
   receive of rbytes from src (src >= 0). Chunk i of both directions moves
   in step i: every rank's step i depends only on its peers' step i, so
   rings and exchanges of unequal sizes cannot deadlock. With message
   counters (m->seq) a library tag's receive is posted before the send, for
   exactly its message of the stream: no probe before it. */
static redcoll_result redcoll__mpi_xfer(redcoll_mpi *m, int dst, const void *sbuf, size_t sbytes,
                                        int src, void *rbuf, size_t rbytes, int tag) {
    size_t i, ns = dst >= 0 ? redcoll__mpi_nchunks(m, sbytes) : 0;
    size_t nr = src >= 0 ? redcoll__mpi_nchunks(m, rbytes) : 0;
    if (m->failed) return REDCOLL_ERR_ABORTED;
    tag &= m->tag_mask;
    for (i = 0; i < ns || i < nr; ++i) {
        redcoll__mpi_end e[2];
        int n = 0;
        redcoll_result r;
        if (i < nr) {
            redcoll__mpi_end *x = &e[n++];
            redcoll__mpi_end_set(x, 1, src, (char *)rbuf + i * m->max_chunk,
                                 redcoll__mpi_chunk(m, rbytes, i), redcoll__mpi_seq(m, src, tag, 1));
            x->posted = redcoll__mpi_counted(m, tag);
            r = x->posted ? redcoll__mpi_check(m, MPI_Irecv(x->buf, x->len, MPI_BYTE, src, x->tag,
                                                            m->comm, &x->q)) : REDCOLL_OK;
            if (r != REDCOLL_OK) return redcoll__mpi_failed(m, r, src, x->tag, -1);
        }
        if (i < ns) {
            const char *sp = (const char *)sbuf + i * m->max_chunk;
            redcoll__mpi_end *x = &e[n];
            int eager;
            redcoll__mpi_end_set(x, 0, dst, NULL, redcoll__mpi_chunk(m, sbytes, i),
                                 redcoll__mpi_seq(m, dst, tag, 0));
            eager = x->len <= REDCOLL__MPI_EAGER && dst != m->t.rank;
            r = redcoll__mpi_check(m, eager ? MPI_Send(sp, x->len, MPI_BYTE, dst, x->tag, m->comm)
                                            : MPI_Isend(sp, x->len, MPI_BYTE, dst, x->tag, m->comm, &x->q));
            if (r != REDCOLL_OK) {
                redcoll__mpi_cancel(n, e);
                return redcoll__mpi_failed(m, r, dst, x->tag, -1);
            }
            if (!eager) ++n;
        }
        r = redcoll__mpi_wait(m, n, e, NULL);
        if (r != REDCOLL_OK) return r;
    }
    return REDCOLL_OK;
}

static redcoll_result redcoll__mpi_send(void *user, int dst, const void *buf, size_t bytes,
                                        int tag) {
    redcoll_mpi *m = (redcoll_mpi *)user;
    if (dst < 0) return redcoll__mpi_check(m, MPI_ERR_RANK);
    return redcoll__mpi_xfer(m, dst, buf, bytes, -1, NULL, 0, tag);
}

static redcoll_result redcoll__mpi_recv(void *user, int src, void *buf, size_t bytes, int tag) {
    redcoll_mpi *m = (redcoll_mpi *)user;
    if (src < 0) return redcoll__mpi_check(m, MPI_ERR_RANK);
    return redcoll__mpi_xfer(m, -1, NULL, 0, src, buf, bytes, tag);
}

static redcoll_result redcoll__mpi_sendrecv(void *user, int dst, const void *sbuf,
                                            size_t sbytes, int src, void *rbuf, size_t rbytes,
                                            int tag) {
    redcoll_mpi *m = (redcoll_mpi *)user;
    if (dst < 0 || src < 0) return redcoll__mpi_check(m, MPI_ERR_RANK);
    return redcoll__mpi_xfer(m, dst, sbuf, sbytes, src, rbuf, rbytes, tag);
}

/* A non-blocking transfer: one end per chunk (the sends posted at once, the
   receives taken in waitall). */
typedef struct redcoll__mpi_req {
    int                      n;
    struct redcoll__mpi_req *next; /* in m->spare */
    redcoll__mpi_end         e[1]; /* n of them */
} redcoll__mpi_req;

/* A record for n chunks: a one-chunk one from the free list when there is
   one (so a rank that keeps posting, as a started plan does, stops
   allocating), else malloc. */
static redcoll__mpi_req *redcoll__mpi_req_new(redcoll_mpi *m, size_t n) {
    redcoll__mpi_req *q = (redcoll__mpi_req *)m->spare;
    if (n == 1 && q) { m->spare = q->next; return q; }
    return (redcoll__mpi_req *)malloc(sizeof *q + (n - 1) * sizeof(redcoll__mpi_end));
}

static void redcoll__mpi_req_give(redcoll_mpi *m, redcoll__mpi_req *q) {
    if (q->n != 1) { free(q); return; }
    q->next = (redcoll__mpi_req *)m->spare;
    m->spare = q;
}

static redcoll_result redcoll__mpi_ipost(redcoll_mpi *m, int is_recv, int peer, void *buf,
                                         size_t bytes, int tag, redcoll_request *req) {
    size_t i, n = redcoll__mpi_nchunks(m, bytes);
    redcoll__mpi_req *q;
    req->ptr = NULL;
    if (m->failed) return REDCOLL_ERR_ABORTED;
    if (peer < 0 || peer >= m->t.size) return redcoll__mpi_check(m, MPI_ERR_RANK);
    tag &= m->tag_mask;
    if (n > (size_t)INT_MAX / 2) return REDCOLL_ERR_INVALID_ARG;
    q = redcoll__mpi_req_new(m, n);
    if (!q) return REDCOLL_ERR_OUT_OF_MEMORY;
    q->n = (int)n;
    for (i = 0; i < n; ++i) {
        redcoll__mpi_end *e = &q->e[i];
        redcoll__mpi_end_set(e, is_recv, peer, (char *)buf + i * m->max_chunk,
                             redcoll__mpi_chunk(m, bytes, i), redcoll__mpi_seq(m, peer, tag, is_recv));
        if (!is_recv) {
            redcoll_result r = redcoll__mpi_check(m, MPI_Isend(e->buf, e->len, MPI_BYTE, peer, e->tag,
                                                               m->comm, &e->q));
            if (r != REDCOLL_OK) { /* free what was posted, report the error */
                redcoll__mpi_cancel((int)i, q->e);
                redcoll__mpi_req_give(m, q);
                return redcoll__mpi_failed(m, r, peer, tag, -1);
            }
        }
    }
    req->ptr = q;
    return REDCOLL_OK;
}

static redcoll_result redcoll__mpi_isend(void *user, int dst, const void *buf, size_t bytes,
                                         int tag, redcoll_request *req) {
    return redcoll__mpi_ipost((redcoll_mpi *)user, 0, dst, (void *)buf, bytes, tag, req);
}

static redcoll_result redcoll__mpi_irecv(void *user, int src, void *buf, size_t bytes, int tag,
                                         redcoll_request *req) {
    return redcoll__mpi_ipost((redcoll_mpi *)user, 1, src, buf, bytes, tag, req);
}

/* Completes every chunk of every request as one wait (redcoll__mpi_wait:
   receives taken in posting order per peer, sizes checked, peers in
   another call or failed ranks noticed). Frees the requests (NULL ones are
   skipped). A few ends (a schedule's step) need no allocation. */
static redcoll_result redcoll__mpi_waitall(void *user, int count, redcoll_request *reqs) {
    redcoll_mpi *m = (redcoll_mpi *)user;
    size_t total = 0, k;
    redcoll__mpi_end few[4], *e = few;
    redcoll_result res;
    int i;
    for (i = 0; i < count; ++i)
        if (reqs[i].ptr) total += (size_t)((redcoll__mpi_req *)reqs[i].ptr)->n;
    if (total == 0) return m->failed ? REDCOLL_ERR_ABORTED : REDCOLL_OK;
    if (total > (size_t)INT_MAX) return REDCOLL_ERR_INVALID_ARG;
    if (total > 4) e = (redcoll__mpi_end *)malloc(total * sizeof *e);
    if (!e) return REDCOLL_ERR_OUT_OF_MEMORY; /* requests stay valid: wait again */
    for (i = 0, k = 0; i < count; ++i) {
        redcoll__mpi_req *q = (redcoll__mpi_req *)reqs[i].ptr;
        if (!q) continue;
        memcpy(e + k, q->e, (size_t)q->n * sizeof *e);
        k += (size_t)q->n;
        redcoll__mpi_req_give(m, q);
        reqs[i].ptr = NULL;
    }
    res = m->failed ? REDCOLL_ERR_ABORTED : redcoll__mpi_wait(m, (int)total, e, m->mark);
    if (res != REDCOLL_OK) redcoll__mpi_cancel((int)total, e);
    if (e != few) free(e);
    return res;
}

/* Tells every other rank this one failed (a notice each, sent and left to
   MPI), unless a notice released it: the rank that failed first told
   everyone already. */
static void redcoll__mpi_tell(redcoll_mpi *m, redcoll_result why);

/* The transport's test (MPI_Testall's meaning): one pass over the ends of
   the requests, as redcoll__mpi_wait makes them -- a send tested, a receive
   taken if its message has come, the receives from one peer in posting
   order -- never waiting. When all are done the requests are freed (done 1);
   an error ends them all at once (their sends freed). After
   REDCOLL__MPI_LOOK_AFTER calls in vain it looks, every
   REDCOLL__MPI_LOOK_EVERY calls, for a notice or a peer in another call
   (redcoll__mpi_look), as a blocking wait does. */
static redcoll_result redcoll__mpi_test(void *user, int count, redcoll_request *reqs, int *done) {
    redcoll_mpi *m = (redcoll_mpi *)user;
    redcoll_result r = m->failed ? REDCOLL_ERR_ABORTED : REDCOLL_OK;
    redcoll__mpi_end *first = NULL;
    int i, c, left = 0, pass = m->test_pass = (m->test_pass + 1) & 0x3fffffff;
    *done = 0;
    for (i = 0; i < count && r == REDCOLL_OK; ++i) { /* receives from one peer: in order */
        redcoll__mpi_req *q = (redcoll__mpi_req *)reqs[i].ptr;
        for (c = 0; q && c < q->n; ++c) if (q->e[c].is_recv && !q->e[c].done) m->mark[q->e[c].peer] = -1;
    }
    for (i = 0; i < count && r == REDCOLL_OK; ++i) {
        redcoll__mpi_req *q = (redcoll__mpi_req *)reqs[i].ptr;
        for (c = 0; q && c < q->n && r == REDCOLL_OK; ++c) {
            redcoll__mpi_end *e = &q->e[c];
            int flag = 0;
            if (e->done) continue;
            if (e->is_recv && m->mark[e->peer] != pass) {
                m->mark[e->peer] = pass;
                r = redcoll__mpi_take(m, e);
            } else if (!e->is_recv) {
                r = redcoll__mpi_check(m, MPI_Test(&e->q, &flag, MPI_STATUS_IGNORE));
                if (r != REDCOLL_OK) redcoll__mpi_failed(m, r, e->peer, e->tag, -1);
                e->done = flag;
            }
            if (!e->done) { ++left; if (!first) first = e; }
        }
    }
    if (r == REDCOLL_OK && left && ++m->test_idle >= REDCOLL__MPI_LOOK_AFTER &&
        m->test_idle % REDCOLL__MPI_LOOK_EVERY == 0)
        r = redcoll__mpi_look(m, first);
    if (r == REDCOLL_OK && left) return REDCOLL_OK;
    m->test_idle = 0;
    for (i = 0; i < count; ++i) {
        redcoll__mpi_req *q = (redcoll__mpi_req *)reqs[i].ptr;
        if (!q) continue;
        if (r != REDCOLL_OK) redcoll__mpi_cancel(q->n, q->e);
        redcoll__mpi_req_give(m, q);
        reqs[i].ptr = NULL;
    }
    *done = 1;
    return r;
}

static void redcoll__mpi_tell(redcoll_mpi *m, redcoll_result why) {
    const redcoll_mpi_failure *f = &m->failure;
    int i;
    m->notice[0] = REDCOLL__MPI_NOTICE_FAILED;
    m->notice[1] = f->why != REDCOLL_OK ? (int)f->why : (int)why;
    m->notice[2] = f->tag;
    m->notice[3] = f->why == REDCOLL_ERR_MISMATCH ? f->peer : -1;
    m->notice[4] = f->why == REDCOLL_ERR_MISMATCH ? f->peer_tag : -1;
    m->notice[5] = 0;
    for (i = 0; i < m->t.size; ++i) {
        MPI_Request q;
        if (i != m->t.rank &&
            MPI_Isend(m->notice, 6, MPI_INT, i, REDCOLL_TAG_NOTICE & m->tag_mask, m->comm, &q) == MPI_SUCCESS)
            MPI_Request_free(&q);
    }
}

static void redcoll__mpi_abort(void *user, redcoll_result why) {
    redcoll_mpi *m = (redcoll_mpi *)user;
    int first = !m->failed;
    m->failed = 1;
    if (m->failure.why == REDCOLL_OK) redcoll__mpi_failed(m, why, -1, -1, -1);
    if (first && !m->released) redcoll__mpi_tell(m, why);
    if (m->inside && m->inside->abort) m->inside->abort(m->inside->user, why);
    if (m->abort_job) MPI_Abort(m->comm, 1);
}

static const redcoll_transport *redcoll__mpi_node(void *user) { return ((const redcoll_mpi *)user)->inside; }

static int redcoll__mpi_node_of(void *user, int rank) {
    const redcoll_mpi *m = (const redcoll_mpi *)user;
    return rank >= 0 && rank < m->t.size ? m->node_ids[rank] : -1;
}

/* The persistent scratch: grows to the largest request, kept until finalize. */
static void *redcoll__mpi_scratch(void *user, size_t bytes) {
    return redcoll_scratch_block_get(&((redcoll_mpi *)user)->scratch, bytes);
}

/* Node ids: each rank learns its node's lowest rank (MPI_COMM_TYPE_SHARED),
   an allgather spreads them, and they are renumbered 0, 1, ... in order of
   first appearance. */
static redcoll_result redcoll__mpi_nodes(redcoll_mpi *m, int ranks_per_node) {
    MPI_Comm node;
    int leader = m->t.rank, p = m->t.size, i;
    redcoll_result r;
    m->node_ids = (int *)malloc(sizeof(int) * 2 * (size_t)p); /* and the marks */
    if (!m->node_ids) return REDCOLL_ERR_OUT_OF_MEMORY;
    m->mark = m->node_ids + p;
    if (ranks_per_node <= 0) { /* rank 0's environment decides for all */
        const char *env = m->t.rank == 0 ? getenv("REDCOLL_RANKS_PER_NODE") : NULL;
        ranks_per_node = env ? atoi(env) : 0;
        r = redcoll__mpi_check(m, MPI_Bcast(&ranks_per_node, 1, MPI_INT, 0, m->comm));
        if (r != REDCOLL_OK) { free(m->node_ids); m->node_ids = m->mark = NULL; return r; }
    }
    if (ranks_per_node > 0) {
        for (i = 0; i < p; ++i) m->node_ids[i] = i / ranks_per_node;
        m->nodes = (p - 1) / ranks_per_node + 1;
        return REDCOLL_OK;
    }
    r = redcoll__mpi_check(m, MPI_Comm_split_type(m->comm, MPI_COMM_TYPE_SHARED, m->t.rank,
                                                  MPI_INFO_NULL, &node));
    if (r == REDCOLL_OK) {
        r = redcoll__mpi_check(m, MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, node));
        MPI_Comm_free(&node);
    }
    if (r == REDCOLL_OK)
        r = redcoll__mpi_check(m, MPI_Allgather(&leader, 1, MPI_INT, m->node_ids, 1, MPI_INT,
                                                m->comm));
    if (r != REDCOLL_OK) { free(m->node_ids); m->node_ids = NULL; return r; }
    m->nodes = 0;
    for (i = 0; i < p; ++i) { /* leaders are ranks, and a leader is its node's lowest */
        if (m->node_ids[i] == i) { m->node_ids[i] = m->nodes++; continue; }
        m->node_ids[i] = m->node_ids[m->node_ids[i]]; /* the leader's, renumbered */
    }
    return REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_mpi_init(redcoll_mpi *m, MPI_Comm comm,
                                            const redcoll_mpi_config *cfg) {
    int rank, size, inited = 0;
    redcoll_result r;
    if (!m) return REDCOLL_ERR_INVALID_ARG;
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
    redcoll__mpi_no_failure(&m->failure);
    MPI_Initialized(&inited);
    if (!inited || comm == MPI_COMM_NULL) return REDCOLL_ERR_INVALID_ARG;
    m->max_chunk = cfg && cfg->max_chunk_bytes ? cfg->max_chunk_bytes : (size_t)INT_MAX;
    if (m->max_chunk > (size_t)INT_MAX) m->max_chunk = (size_t)INT_MAX;
    m->abort_job = cfg ? cfg->abort_job_on_error : 0;
    r = redcoll__mpi_check(m, MPI_Comm_dup(comm, &m->comm));
    if (r != REDCOLL_OK) { m->comm = MPI_COMM_NULL; return r; }
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    {   /* MPI_TAG_UB is an attribute of MPI_COMM_WORLD */
        int *ub = NULL, flag = 0;
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
        m->tag_mask = REDCOLL_TAG_MAX;
        while (m->tag_mask > 32767 && (!flag || !ub || m->tag_mask > *ub)) m->tag_mask >>= 1;
    }
    MPI_Comm_rank(m->comm, &rank);
    MPI_Comm_size(m->comm, &size);
    m->t.user = m;
    m->t.rank = rank;
    m->t.size = size;
    r = redcoll__mpi_nodes(m, cfg ? cfg->ranks_per_node : 0);
    if (r != REDCOLL_OK) { MPI_Comm_free(&m->comm); memset(m, 0, sizeof *m); return r; }
    m->t.send = redcoll__mpi_send;
    m->t.recv = redcoll__mpi_recv;
    m->t.sendrecv = redcoll__mpi_sendrecv;
    m->t.abort = redcoll__mpi_abort;
    m->t.isend = redcoll__mpi_isend;
    m->t.irecv = redcoll__mpi_irecv;
    m->t.waitall = redcoll__mpi_waitall;
    m->t.test = redcoll__mpi_test;
    m->t.nb = &m->nb;
    {   /* the tag bits that survive, for the request slots */
        int bits = 0;
        while (bits < 28 && (1 << bits) - 1 < m->tag_mask) ++bits;
        m->nb.tag_bits = bits;
    }
    if ((m->tag_mask & REDCOLL_TAG_SEQ_MASK) == REDCOLL_TAG_SEQ_MASK) {
        m->seq = (unsigned char *)calloc((size_t)size * REDCOLL_TAG_STREAMS * 2, 1); /* 2 directions */
        if (!m->seq) { redcoll_mpi_finalize(m); return REDCOLL_ERR_OUT_OF_MEMORY; }
    }
    m->t.node_of = redcoll__mpi_node_of;
    m->t.scratch = redcoll__mpi_scratch;
    m->t.node = redcoll__mpi_node;
    return REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_mpi_split_node(redcoll_mpi *m, MPI_Comm *node) {
    *node = MPI_COMM_NULL;
    return redcoll__mpi_check(m, MPI_Comm_split(m->comm, m->node_ids[m->t.rank], m->t.rank, node));
}

REDCOLL_API void redcoll_mpi_set_node(redcoll_mpi *m, const redcoll_transport *inside) { m->inside = inside; }

REDCOLL_API void redcoll_mpi_finalize(redcoll_mpi *m) {
    if (!m) return;
    if (m->comm != MPI_COMM_NULL) {
        /* What failed calls left (messages of another call, notices) and has
           arrived is received and dropped: MPI may give the communicator's
           context to a later one, which would meet them. A correct program
           leaves nothing: one probe. */
        MPI_Status st;
        int flag = 1, n = 0;
        while (flag) {
            void *junk;
            flag = 0;
            if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m->comm, &flag, &st) != MPI_SUCCESS || !flag) break;
            MPI_Get_count(&st, MPI_BYTE, &n);
            junk = malloc(n > 0 ? (size_t)n : 1);
            if (!junk) break;
            MPI_Recv(junk, n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, m->comm, MPI_STATUS_IGNORE);
            free(junk);
        }
        MPI_Comm_free(&m->comm);
    }
    free(m->node_ids);
    free(m->seq);
    while (m->spare) {
        redcoll__mpi_req *q = (redcoll__mpi_req *)m->spare;
        m->spare = q->next;
        free(q);
    }
    redcoll_scratch_block_free(&m->scratch);
    memset(m, 0, sizeof *m);
    m->comm = MPI_COMM_NULL;
}

/* Integer types by size: MPI's C types have the platform's widths. */
static redcoll_dtype redcoll__mpi_int(size_t size, int is_signed) {
    switch (size) {
    case 1: return is_signed ? REDCOLL_INT8 : REDCOLL_UINT8;
    case 2: return is_signed ? REDCOLL_INT16 : REDCOLL_UINT16;
    case 4: return is_signed ? REDCOLL_INT32 : REDCOLL_UINT32;
    case 8: return is_signed ? REDCOLL_INT64 : REDCOLL_UINT64;
    default: return REDCOLL_DTYPE_MAX_;
    }
}

REDCOLL_API int redcoll_mpi_dtype(MPI_Datatype type, redcoll_dtype *out) {
    /* MPI handles are not integer constants in every MPI: compare, not switch */
    struct { MPI_Datatype mpi; redcoll_dtype rc; } const table[] = {
        { MPI_INT8_T, REDCOLL_INT8 },     { MPI_UINT8_T, REDCOLL_UINT8 },
        { MPI_INT16_T, REDCOLL_INT16 },   { MPI_UINT16_T, REDCOLL_UINT16 },
        { MPI_INT32_T, REDCOLL_INT32 },   { MPI_UINT32_T, REDCOLL_UINT32 },
        { MPI_INT64_T, REDCOLL_INT64 },   { MPI_UINT64_T, REDCOLL_UINT64 },
        { MPI_SIGNED_CHAR, REDCOLL_INT8 }, { MPI_UNSIGNED_CHAR, REDCOLL_UINT8 },
        { MPI_CHAR, (char)-1 < 0 ? REDCOLL_INT8 : REDCOLL_UINT8 },
        { MPI_BYTE, REDCOLL_UINT8 },
        { MPI_SHORT, redcoll__mpi_int(sizeof(short), 1) },
        { MPI_UNSIGNED_SHORT, redcoll__mpi_int(sizeof(unsigned short), 0) },
        { MPI_INT, redcoll__mpi_int(sizeof(int), 1) },
        { MPI_UNSIGNED, redcoll__mpi_int(sizeof(unsigned), 0) },
        { MPI_LONG, redcoll__mpi_int(sizeof(long), 1) },
        { MPI_UNSIGNED_LONG, redcoll__mpi_int(sizeof(unsigned long), 0) },
        { MPI_LONG_LONG_INT, redcoll__mpi_int(sizeof(long long), 1) },
        { MPI_LONG_LONG, redcoll__mpi_int(sizeof(long long), 1) },
        { MPI_UNSIGNED_LONG_LONG, redcoll__mpi_int(sizeof(unsigned long long), 0) },
        { MPI_C_BOOL, redcoll__mpi_int(REDCOLL__MPI_BOOL_SIZE, 0) },
        { MPI_AINT, redcoll__mpi_int(sizeof(MPI_Aint), 1) },
        { MPI_OFFSET, redcoll__mpi_int(sizeof(MPI_Offset), 1) },
        { MPI_COUNT, redcoll__mpi_int(sizeof(MPI_Count), 1) },
        { MPI_FLOAT, REDCOLL_FLOAT },     { MPI_DOUBLE, REDCOLL_DOUBLE },
        { MPI_LONG_DOUBLE, REDCOLL_LONG_DOUBLE },
        { MPI_FLOAT_INT, REDCOLL_FLOAT_INT },   { MPI_DOUBLE_INT, REDCOLL_DOUBLE_INT },
        { MPI_LONG_INT, REDCOLL_LONG_INT },     { MPI_2INT, REDCOLL_2INT },
        { MPI_SHORT_INT, REDCOLL_SHORT_INT },   { MPI_LONG_DOUBLE_INT, REDCOLL_LONG_DOUBLE_INT }
    };
    size_t i;
    if (!out || type == MPI_DATATYPE_NULL) return 0;
    for (i = 0; i < sizeof table / sizeof table[0]; ++i)
        if (table[i].mpi == type && table[i].rc != REDCOLL_DTYPE_MAX_) {
            *out = table[i].rc;
            return 1;
        }
    return 0;
}

REDCOLL_API int redcoll_mpi_op(MPI_Op op, redcoll_op *out) {
    struct { MPI_Op mpi; redcoll_op_kind rc; } const table[] = {
        { MPI_SUM, REDCOLL_OP_SUM },   { MPI_PROD, REDCOLL_OP_PROD },
        { MPI_MIN, REDCOLL_OP_MIN },   { MPI_MAX, REDCOLL_OP_MAX },
        { MPI_LAND, REDCOLL_OP_LAND }, { MPI_LOR, REDCOLL_OP_LOR },   { MPI_LXOR, REDCOLL_OP_LXOR },
        { MPI_BAND, REDCOLL_OP_BAND }, { MPI_BOR, REDCOLL_OP_BOR },   { MPI_BXOR, REDCOLL_OP_BXOR },
        { MPI_MINLOC, REDCOLL_OP_MINLOC }, { MPI_MAXLOC, REDCOLL_OP_MAXLOC }
    };
    size_t i;
    if (!out || op == MPI_OP_NULL) return 0;
    for (i = 0; i < sizeof table / sizeof table[0]; ++i)
        if (table[i].mpi == op) { *out = redcoll_op_predefined(table[i].rc); return 1; }
    return 0;
}

REDCOLL_API void *redcoll_mpi_buf(const void *buf) {
    return buf == MPI_IN_PLACE ? REDCOLL_IN_PLACE : (void *)buf;
}

/* snprintf into buf, whose text may be cut short. */
static void redcoll__mpi_say(char *buf, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}

REDCOLL_API const char *redcoll_mpi_failure_string(const redcoll_mpi *m, char *buf, size_t n) {
    const redcoll_mpi_failure *f = &m->failure;
    char a[32], b[32], pair[320], mpi[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (!buf || n == 0) return buf;
    redcoll__mpi_say(a, sizeof a, "rank %d", f->peer);
    switch (f->why) {
    case REDCOLL_OK:
        redcoll__mpi_say(buf, n, "no failure");
        break;
    case REDCOLL_ERR_MISMATCH:
        redcoll_tag_disagree(a, f->peer_tag, "this rank", f->tag, pair, sizeof pair);
        redcoll__mpi_say(buf, n, "%s: %s", redcoll_result_string(f->why), pair);
        break;
    case REDCOLL_ERR_ABORTED:
        if (f->peer < 0) { redcoll__mpi_say(buf, n, "%s", redcoll_result_string(f->why)); break; }
        if (f->origin_why == REDCOLL_ERR_MISMATCH && f->origin_peer >= 0) {
            redcoll__mpi_say(b, sizeof b, "rank %d", f->origin_peer);
            redcoll_tag_disagree(b, f->origin_peer_tag, a, f->origin_tag, pair, sizeof pair);
            redcoll__mpi_say(buf, n, "%s: %s found that %s: %s", redcoll_result_string(f->why), a,
                     redcoll_result_string(f->origin_why), pair);
        } else {
            redcoll__mpi_say(buf, n, "%s: %s failed (%s)", redcoll_result_string(f->why), a,
                     redcoll_result_string(f->origin_why));
        }
        break;
    default:
        if (f->peer >= 0 && f->got != f->want && f->got != (size_t)-1)
            redcoll__mpi_say(buf, n, "%s: %s sent %zu bytes where this rank expected %zu: the ranks disagree "
                     "about the count or the data type", redcoll_result_string(f->why), a, f->got, f->want);
        else if (f->peer >= 0 && f->got != f->want)
            redcoll__mpi_say(buf, n, "%s: %s sent more than the %zu bytes this rank expected: the ranks "
                     "disagree about the count or the data type", redcoll_result_string(f->why), a, f->want);
        else if (m->last_mpi_error != MPI_SUCCESS &&
                 MPI_Error_string(m->last_mpi_error, mpi, &len) == MPI_SUCCESS)
            redcoll__mpi_say(buf, n, "%s: MPI error%s%s: %s", redcoll_result_string(f->why), f->peer >= 0 ? " with " : "",
                     f->peer >= 0 ? a : "", mpi);
        else
            redcoll__mpi_say(buf, n, "%s", redcoll_result_string(f->why));
        break;
    }
    return buf;
}

#endif /* REDCOLL_MPI_IMPLEMENTATION_DONE */
#endif /* REDCOLL_IMPLEMENTATION */
