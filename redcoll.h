/* redcoll.h - v0.1.0 - MIT licence (see end of file) - collective reduction schedules

   A header-only C11 library of the allreduce / reduce / reduce_scatter /
   allgather / bcast / alltoall algorithms of Rabenseifner (2004),
   Rabenseifner & Traeff (2005), Thakur, Rabenseifner & Gropp (2005, MPICH)
   and Hasanov & Lastovetsky, each written once over a transport vtable.

   USAGE
       #define REDCOLL_IMPLEMENTATION      in *one* C or C++ file
       #include "redcoll.h"

   and a transport: transports/redcoll_shm.h (threads), redcoll_mpi.h (an MPI
   communicator) or redcoll_mock.h (the simulator), or your own vtable.

       redcoll_allreduce(&t, sbuf, rbuf, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);

   CONFIGURATION (define before the implementation include)
       REDCOLL_STATIC        every function static to the including file
       REDCOLL_ASSERT(x)     internal invariant check (default: assert)
       REDCOLL_MALLOC/FREE   default allocator, both or neither (default: malloc / free)
       REDCOLL_MEMCPY, REDCOLL_MEMMOVE, REDCOLL_MEMSET
                             memory routines (default: memcpy, memmove, memset)
       REDCOLL_NO_SIMD       scalar reduction kernels only (default: vector
                             kernels where the compiler and the CPU have them)
       REDCOLL_NO_EXACT_PAIR REDCOLL_SUM_EXACT runs its general method at p = 2
                             too (default: one IEEE addition there, x86-64;
                             for measuring the general method)

   CONTENTS (grep for the tag to jump to a section)
       1. Results, data types and operations           [SECTION:types]
       2. Transport vtable and group views              [SECTION:transport]
       3. Options, the algorithm list and selection     [SECTION:options]
       4. Collectives                                   [SECTION:collectives]
       --- implementation ---
       5. Context: transport calls, scratch, group
          views, cost terms                             [SECTION:context]
       6. Reduction kernels                             [SECTION:kernels]
       7. Building blocks                               [SECTION:blocks]
       8. Schedules, one section per collective and per
          paper, each with its cost function            [SECTION:schedules]
       9. Reproducible sums (REDCOLL_SUM_EXACT)         [SECTION:exact]
      10. Registry and names                            [SECTION:registry]
      11. Cost model                                    [SECTION:cost]
      12. Selection                                     [SECTION:select]
      13. Setup and execute                             [SECTION:setup]
      14. Non-blocking collectives: coroutines, the
          engine, requests                              [SECTION:nonblock]
      15. Entry points                                  [SECTION:entry]
*/
#ifndef REDCOLL_H
#define REDCOLL_H

#include <stddef.h>
#include <stdint.h>

#define REDCOLL_VERSION_MAJOR 0
#define REDCOLL_VERSION_MINOR 1
#define REDCOLL_VERSION_PATCH 0
#define REDCOLL_VERSION_STRING "0.1.0"

#ifdef REDCOLL_STATIC
#if defined(__GNUC__) || defined(__clang__)
#define REDCOLL_API static __attribute__((unused)) /* a program uses only some */
#else
#define REDCOLL_API static
#endif
#else
#define REDCOLL_API extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 1. Results, data types and operations [SECTION:types] ============== */

typedef enum redcoll_result {
    REDCOLL_OK                =  0,
    REDCOLL_ERR_INVALID_ARG   = -1, /* caller's mistake; nothing was touched */
    REDCOLL_ERR_OUT_OF_MEMORY = -2,
    REDCOLL_ERR_TRANSPORT     = -3, /* a send/recv failed on this rank */
    REDCOLL_ERR_UNSUPPORTED   = -4, /* e.g. forced algorithm needs a commutative op */
    REDCOLL_ERR_TIMEOUT       = -5,
    REDCOLL_ERR_ABORTED       = -6, /* a peer failed and released this rank */
    REDCOLL_ERR_DEADLOCK      = -7, /* every rank of the team is blocked (simulator, threads) */
    REDCOLL_ERR_MISMATCH      = -8  /* ranks disagree about the call (another collective,
                                       algorithm, count, type, op, root or in place) */
} redcoll_result;

/*
A short English description of a result.

Parameters
    r       any value.

Return Value
    "ok", "invalid argument", ...; "unknown result" for a value not in the
    enum. Never NULL; a static string.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_result_string(redcoll_result r);

/* Element types: the MPI predefined numeric types, the MINLOC/MAXLOC pair
   types, and opaque fixed-size elements for user ops (REDCOLL_OPAQUE(n)). */
typedef enum redcoll_dtype {
    REDCOLL_INT8, REDCOLL_UINT8, REDCOLL_INT16, REDCOLL_UINT16,
    REDCOLL_INT32, REDCOLL_UINT32, REDCOLL_INT64, REDCOLL_UINT64,
    REDCOLL_FLOAT, REDCOLL_DOUBLE, REDCOLL_LONG_DOUBLE,
    REDCOLL_FLOAT_INT, REDCOLL_DOUBLE_INT, REDCOLL_LONG_INT, REDCOLL_2INT,
    REDCOLL_SHORT_INT, REDCOLL_LONG_DOUBLE_INT,
    REDCOLL_DTYPE_COUNT,
    REDCOLL_OPAQUE_BASE = 0x10000, /* REDCOLL_OPAQUE_BASE + n: n-byte opaque element */
    REDCOLL_DTYPE_MAX_ = 0x7fffffff
} redcoll_dtype;
#define REDCOLL_OPAQUE(bytes) ((redcoll_dtype)(REDCOLL_OPAQUE_BASE + (int)(bytes)))

/* The pair types, laid out as MPI lays them out. */
typedef struct redcoll_float_int       { float v;       int i; } redcoll_float_int;
typedef struct redcoll_double_int      { double v;      int i; } redcoll_double_int;
typedef struct redcoll_long_int        { long v;        int i; } redcoll_long_int;
typedef struct redcoll_2int            { int v;         int i; } redcoll_2int;
typedef struct redcoll_short_int       { short v;       int i; } redcoll_short_int;
typedef struct redcoll_long_double_int { long double v; int i; } redcoll_long_double_int;

/*
The size of one element.

Parameters
    dtype   a type of the enum, or REDCOLL_OPAQUE(n).

Return Value
    Bytes per element (n for REDCOLL_OPAQUE(n)); 0 for an invalid type.

Thread Safety
    Thread safe.
*/
REDCOLL_API size_t redcoll_dtype_size(redcoll_dtype dtype);

/*
The type's name as the tools spell it.

Parameters
    dtype   any value.

Return Value
    "int32", "double_int", ...; "opaque" for REDCOLL_OPAQUE(n); "?" for an
    invalid type. A static string.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_dtype_name(redcoll_dtype dtype);

typedef enum redcoll_op_kind {
    REDCOLL_OP_SUM, REDCOLL_OP_PROD, REDCOLL_OP_MIN, REDCOLL_OP_MAX,
    REDCOLL_OP_LAND, REDCOLL_OP_LOR, REDCOLL_OP_LXOR,
    REDCOLL_OP_BAND, REDCOLL_OP_BOR, REDCOLL_OP_BXOR,
    REDCOLL_OP_MINLOC, REDCOLL_OP_MAXLOC,
    REDCOLL_OP_USER,
    REDCOLL_OP_SUM_EXACT, /* reproducible float/double sum: see REDCOLL_SUM_EXACT */
    REDCOLL_OP_KIND_COUNT
} redcoll_op_kind;

/* User reduction: inout[i] = in[i] op inout[i] for i < count, where `in`
   is the operand from the lower ranks (as in MPI). */
typedef void (*redcoll_user_fn)(const void *in, void *inout, size_t count, void *user);

/* An operation, passed by value. Build one with the macros below or with
   redcoll_op_user(). Predefined ops are all commutative. */
typedef struct redcoll_op {
    redcoll_op_kind kind;
    redcoll_user_fn fn;      /* REDCOLL_OP_USER only */
    void           *user;    /* passed to fn */
    int             commutative;
} redcoll_op;

static inline redcoll_op redcoll_op_predefined(redcoll_op_kind kind) {
    redcoll_op op;
    op.kind = kind; op.fn = NULL; op.user = NULL; op.commutative = 1;
    return op;
}
static inline redcoll_op redcoll_op_user(redcoll_user_fn fn, void *user, int commutative) {
    redcoll_op op;
    op.kind = REDCOLL_OP_USER; op.fn = fn; op.user = user; op.commutative = commutative;
    return op;
}
#define REDCOLL_SUM    redcoll_op_predefined(REDCOLL_OP_SUM)
#define REDCOLL_PROD   redcoll_op_predefined(REDCOLL_OP_PROD)
#define REDCOLL_MIN    redcoll_op_predefined(REDCOLL_OP_MIN)
#define REDCOLL_MAX    redcoll_op_predefined(REDCOLL_OP_MAX)
#define REDCOLL_LAND   redcoll_op_predefined(REDCOLL_OP_LAND)
#define REDCOLL_LOR    redcoll_op_predefined(REDCOLL_OP_LOR)
#define REDCOLL_LXOR   redcoll_op_predefined(REDCOLL_OP_LXOR)
#define REDCOLL_BAND   redcoll_op_predefined(REDCOLL_OP_BAND)
#define REDCOLL_BOR    redcoll_op_predefined(REDCOLL_OP_BOR)
#define REDCOLL_BXOR   redcoll_op_predefined(REDCOLL_OP_BXOR)
#define REDCOLL_MINLOC redcoll_op_predefined(REDCOLL_OP_MINLOC)
#define REDCOLL_MAXLOC redcoll_op_predefined(REDCOLL_OP_MAXLOC)
/* Reproducible sum of REDCOLL_FLOAT / REDCOLL_DOUBLE in allreduce, reduce,
   reduce_scatter and reduce_scatter_block: each element is the correctly
   rounded (to nearest, ties to even) exact sum of all p inputs, so its bits do
   not depend on p, algorithm, transport or in place. Any NaN, or +inf with
   -inf, gives the quiet NaN 0x7ff8000000000000, float 0x7fc00000; one kind
   of infinity gives it; an exact zero is -0 only when every input is -0;
   overflow gives the signed infinity. p < 2^21 (else REDCOLL_ERR_UNSUPPORTED);
   other types: REDCOLL_ERR_INVALID_ARG. Cost and method: [SECTION:exact] and
   the README's "Reproducible sums". */
#define REDCOLL_SUM_EXACT redcoll_op_predefined(REDCOLL_OP_SUM_EXACT)

/*
The op's name as the tools spell it.

Parameters
    kind    any value.

Return Value
    "sum", ..., "user", "sum_exact"; "?" outside the enum. A static string.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_op_name(redcoll_op_kind kind);

/*
Whether an op is defined on a type, as in MPI.

Parameters
    kind    a predefined op, or REDCOLL_OP_USER.
    dtype   any value.

Return Value
    1 for arithmetic ops on numbers, logical and bitwise ops on integers,
    MINLOC/MAXLOC on the pair types, SUM_EXACT on float and double, and
    REDCOLL_OP_USER on any valid type; else 0.

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_op_valid_for(redcoll_op_kind kind, redcoll_dtype dtype);

/*
Applies op locally, as MPI_Reduce_local: inout[i] = in[i] op inout[i] for
i < count.

Parameters
    in      count elements: the left operand (the lower ranks').
    inout   count elements: the right operand, replaced by the result.
    count   elements; 0 does nothing.
    dtype   element type; op must be valid for it.
    op      a predefined op or a user op (REDCOLL_SUM_EXACT: the correctly
            rounded sum of the two, in the default FP environment).

Return Value
    REDCOLL_OK; REDCOLL_ERR_INVALID_ARG for an op invalid on dtype, a user op
    without fn, or NULL buffers with count > 0 (inout untouched then).

Thread Safety
    Thread safe (a user op's own state aside).
*/
REDCOLL_API redcoll_result redcoll_reduce_local(const void *in, void *inout, size_t count,
                                                redcoll_dtype dtype, redcoll_op op);

/* As MPI_IN_PLACE: pass as the send buffer (as the receive buffer of scatter's root). */
#define REDCOLL_IN_PLACE ((void *)1)

/* ==== 2. Transport vtable and group views [SECTION:transport] ============ */

/* Handle of a non-blocking transfer, owned by the transport. */
typedef struct redcoll_request { void *ptr; long long id; } redcoll_request;

/* Transport flags. */
#define REDCOLL_TRANSPORT_NO_DATA 1u /* moves no payload: the library skips copies
                                        and reductions and only reports them */
#define REDCOLL_TRANSPORT_PEER_REDUCE 2u /* recv_reduce / sendrecv_reduce reduce straight
                                        from the sender's memory (shared address space),
                                        so the reduction's read is the transfer: the
                                        cost model prices a message reduced on arrival
                                        at alpha + n gamma, without its n beta
                                        (redcoll_options.transport_flags) */

/* What a transport provides, filled by the adapter's own init function.
   Every call takes the adapter's `user` first, blocks until its buffers may be
   reused, and must be allowed to be synchronous (rendezvous): schedules never
   rely on buffering, and exchanges use sendrecv. A wrapper that copies a
   transport and replaces its `user` must replace or clear every entry taking
   user, the ones appended later (test, irecv_reduce) included.

   The host's progress: a transport whose ranks also live in another runtime
   (the MPI library of the job, when a shared-memory transport serves an MPI
   program) and that waits outside it - polling its own memory, sleeping on
   a futex - must keep that runtime's progress engine moving while it waits
   (for MPI, a probe or a test on a communicator of its own): every so many
   polls, before each sleep, and with every sleep bounded, including the
   waits of its set-up and test. MPI promises that an operation matched on
   both sides completes while a rank is blocked in any MPI call, and its own
   collectives keep polling; a wait that does not breaks programs that put
   one-sided or rendezvous traffic beside collectives. The pshm transport
   takes such a function in its config (redcoll_pshm_config.progress); a
   transport over MPI itself waits in MPI and needs none.

   Required: send, recv, sendrecv.
   Optional (NULL is fine):
     abort       releases every peer blocked in or entering this transport with
                 an error. The library calls it once when a call on this rank
                 fails mid-schedule. NULL: peers are not told (they may hang on
                 a transport that has no timeout).
     isend, irecv, waitall
                 non-blocking transfers for the `scattered` alltoall. All three
                 or none; when NULL that schedule posts its p-1 transfers as
                 sendrecv steps with the same peers and order (pairwise).
     node_of     a node id for any rank of this transport, for topology-aware
                 hierarchical schedules. NULL: every rank is its own node.
     on_compute, on_scratch
                 accounting hooks for the simulator: elements reduced locally,
                 scratch bytes allocated (+) or freed (-). NULL: not reported.
     recv_reduce, sendrecv_reduce
                 receive-and-reduce: as recv / sendrecv, but instead of copying
                 the incoming payload into a buffer the transport hands it to
                 the library's consumer (redcoll_consumer below), which reduces
                 it into its destination in one pass. A shared-memory transport
                 calls the consumer straight on the sender's buffer, so the
                 message is never staged. They match ordinary sends (the sender
                 cannot tell). Both or none. NULL: the library cuts every
                 message longer than opts.chunk_bytes into messages of that
                 size on both ends, receives each into one chunk of scratch
                 and reduces it there (receive-and-reduce block, [SECTION:context]).
     test, irecv_reduce, nb
                 non-blocking progress, for redcoll_i<coll> and redcoll_plan_start
                 (redcoll_coll_request below): a transport serves them when it
                 has isend, irecv, waitall, test and nb, and irecv_reduce too if
                 it has recv_reduce; otherwise those calls run the collective to
                 completion before they return (same results and errors).
                 test(count, reqs, &done) is MPI_Testall: it never blocks for
                 long, and progresses every pending transfer of this rank on
                 this transport (receives matched, irecv_reduce consumers
                 called), not only reqs. NULL requests count as complete. When
                 all of reqs are complete it releases them (ptr = NULL), sets
                 done = 1 and returns the first error among them; otherwise done
                 = 0, nothing is released, REDCOLL_OK. abort completes every
                 pending request with an error, and a transport with a timeout
                 fails a request incomplete that long, so a caller polling with
                 test ends too. irecv_reduce is recv_reduce returning at once
                 with a request: the consumer (and what it points to) stays
                 valid until the request completes, and is called on this
                 rank's thread from inside a later test, waitall or blocking
                 call of this rank. waitall, while it blocks, serves the rank's
                 other pending receives, which other collectives started on the
                 transport may be waiting for. nb points at a redcoll_nbstate
                 the adapter keeps for the library (one per rank transport,
                 zeroed once, then left alone), where outstanding requests and
                 the count of starts live.
     scratch     persistent scratch owned by the transport: a block of at least
                 `bytes`, valid until the next scratch call on this transport or
                 its destruction, or NULL when it cannot (the library then uses
                 its allocator). The library asks at most once per collective
                 call, for the scratch that call needs, so the block grows to the
                 largest single call's need and then stays: in steady state
                 one-shot collectives allocate nothing and fault in no pages.
                 NULL: one-shot calls allocate and free their scratch.
     node        the transport of this rank's node: its ranks are this
                 transport's ranks with this rank's node_of id, in rank order
                 (e.g. shared memory inside a node, this transport, MPI,
                 between nodes). The node-aware rows (node_split,
                 node_leader) run their levels inside a node on it. NULL, or
                 a NULL result: on this transport. A transport with `node`
                 releases that transport too in abort (so aborting twice
                 must be harmless). */

/* Where a receive-and-reduce delivers the payload: fn(arg, piece, offset,
   bytes) is called on the receiving rank's thread, before recv_reduce /
   sendrecv_reduce returns, for consecutive pieces that together cover the
   message exactly once and in order. `offset` and `bytes` are multiples of
   `unit` (whole elements); `piece` is valid only during the call and must not
   be written. A transport that moves no data (REDCOLL_TRANSPORT_NO_DATA) need
   not call fn: the library accounts for the reduction itself. */
typedef struct redcoll_consumer {
    void  (*fn)(void *arg, const void *piece, size_t offset, size_t bytes);
    void   *arg;
    size_t  unit;
} redcoll_consumer;

/* The largest transport the collectives serve: 2^30 ranks (their rank
   arithmetic stays within int); a larger one is REDCOLL_ERR_INVALID_ARG.
   redcoll_select answers for any p up to INT_MAX. */
#define REDCOLL_MAX_RANKS (1 << 30)

/* The library's tags are 0 .. REDCOLL_TAG_MAX (28 bits). A transport matches
   them exactly and keeps them apart from its other traffic. They tell calls
   apart, so ranks that make different calls never match each other's
   messages:
     bits 0-5    the group view (its tag space; 0: the transport itself)
     bits 6-12   1 + the (collective, algorithm) row of the algorithm list
                 (REDCOLL_TAG_ROW; 0 in no tag of the library's, 127 in
                 REDCOLL_TAG_NOTICE only)
     bits 13-15  the slot: 0 for blocking calls and plan runs; 1-6 for
                 non-blocking calls, numbered by their start; 7 for started
                 plans and persistent requests (REDCOLL_TAG_SLOT_PERSISTENT),
                 numbered by their init. Collectives in flight at the same
                 time on one transport have distinct streams (below).
     bits 16-27  a hash of the call's parameters: counts, data type, op,
                 root, in place, and the options that shape the messages;
                 in slot 7, bits 16-21 carry instead the persistent
                 request's id (its init number on the transport modulo 64,
                 REDCOLL_TAG_PID_MASK) and the hash keeps bits 22-27.
                 A transport may XOR into its top three bits
                 (REDCOLL_TAG_SEQ_*) how many messages of this stream
                 (below) the sender sent the receiver before (modulo 8),
                 counting per REDCOLL_TAG_STREAM_INDEX: a receive it
                 posts for one message of the stream below then cannot
                 match a later one, and two calls' tags still differ
                 wherever their hashes do.
   A transport with fewer tag bits may drop the high ones (redcoll_mpi.h
   keeps what MPI_TAG_UB allows, at least the 15 bits every MPI has): calls
   stay apart by view and algorithm, and mismatched parameters are caught
   less often. Below 22 bits there are no persistent ids: started plans
   then take one-shot slots, numbered by their start.
   Matching rule: blocking calls and one-shot starts are matched by their
   order on the transport (the same on every rank, as MPI requires);
   persistent requests by the order of their inits (MPI-4 section 6.13),
   whatever order ranks start them in: their id, fixed at init, is on the
   wire. The stream of a tag is its slot, and in slot 7 its id too
   (REDCOLL_TAG_STREAM).
   The stream rule, for transports that detect ranks that disagree: the
   library receives a peer's messages of one stream in the order that peer
   sent them (every schedule completes under rendezvous, and a transport
   runs one call per stream at a time). So when a rank waits for a message
   from P with tag T (or for P to take its send), and P's oldest message to
   it not yet received has another tag of the library's (row field not 0)
   in the same stream, the two ranks are making different calls:
   REDCOLL_ERR_MISMATCH (REDCOLL_TAG_OTHER_CALL tests it). */
#define REDCOLL_TAG_MAX 0x0fffffff
#define REDCOLL_TAG_ROW_SHIFT  6
#define REDCOLL_TAG_ROW_MASK   0x1fc0
#define REDCOLL_TAG_SLOT_SHIFT 13
#define REDCOLL_TAG_SLOT_MASK  0xe000
#define REDCOLL_TAG_SEQ_SHIFT  25
#define REDCOLL_TAG_SEQ_MASK   0x0e000000
/* Slot 7: persistent requests, their id in bits 16-21. */
#define REDCOLL_TAG_SLOT_PERSISTENT 0xe000
#define REDCOLL_TAG_PID_SHIFT  16
#define REDCOLL_TAG_PID_MASK   0x3f0000
/* The stream a library tag belongs to: its slot bits, and in slot 7 its id
   bits too. */
#define REDCOLL_TAG_STREAM(tag)                                                    \
    (((tag) & REDCOLL_TAG_SLOT_MASK) == REDCOLL_TAG_SLOT_PERSISTENT                \
         ? (tag) & (REDCOLL_TAG_SLOT_MASK | REDCOLL_TAG_PID_MASK) : (tag) & REDCOLL_TAG_SLOT_MASK)
/* The stream as a number 0 .. REDCOLL_TAG_STREAMS - 1 (slots 0-6, then
   7 + id), for transports that count messages per stream. */
#define REDCOLL_TAG_STREAMS 71
#define REDCOLL_TAG_STREAM_INDEX(tag)                                              \
    (((tag) & REDCOLL_TAG_SLOT_MASK) == REDCOLL_TAG_SLOT_PERSISTENT                \
         ? 7 + (((tag) & REDCOLL_TAG_PID_MASK) >> REDCOLL_TAG_PID_SHIFT)            \
         : ((tag) & REDCOLL_TAG_SLOT_MASK) >> REDCOLL_TAG_SLOT_SHIFT)
/* A tag no call uses (row field 127), for a transport's own notices. */
#define REDCOLL_TAG_NOTICE     0x1fc0
/* The row of the algorithm list a library tag names (redcoll_algo_at's
   index), -1 for a tag that is not a call's. */
#define REDCOLL_TAG_ROW(tag)                                                       \
    (((tag) & REDCOLL_TAG_ROW_MASK) != 0 && ((tag) & REDCOLL_TAG_ROW_MASK) != REDCOLL_TAG_NOTICE \
         ? (((tag) & REDCOLL_TAG_ROW_MASK) >> REDCOLL_TAG_ROW_SHIFT) - 1 : -1)
/* 1 when a rank waiting for tag `want` finds the peer's oldest message
   carries tag `got` (the stream rule above): both the library's, the same
   stream, not the same tag. */
#define REDCOLL_TAG_OTHER_CALL(want, got)                                          \
    ((want) != (got) && REDCOLL_TAG_ROW(want) >= 0 && REDCOLL_TAG_ROW(got) >= 0 &&  \
     REDCOLL_TAG_STREAM(want) == REDCOLL_TAG_STREAM(got))

/*
The call a library tag belongs to, in words, for transports' error
messages: "allreduce (ring)" (its row of the algorithm list), or "tag N"
for a tag that is not a call's.

Parameters
    tag     a tag as a transport received it.
    buf, n  where the words go (n bytes, always terminated when n > 0).

Return Value
    buf.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_tag_name(int tag, char *buf, size_t n);

/*
Two ranks that disagree, in words: "A is in X, B in Y" where X and Y name
the calls of tags ta and tb (redcoll_tag_name), or, for the same row, "A is
in X with other parameters (count, data type, op, root, in place or
options) than B".

Parameters
    a, ta   the first rank's words ("rank 1") and the tag of its call.
    b, tb   the second's ("this rank").
    buf, n  where the words go (n bytes, always terminated when n > 0).

Return Value
    buf.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_tag_disagree(const char *a, int ta, const char *b, int tb, char *buf,
                                             size_t n);

/* What the library keeps on a transport for its non-blocking collectives
   (redcoll_transport.nb). An adapter embeds one per rank transport and zeroes
   it when it fills the vtable; afterwards only the library touches it, except
   tag_bits, which an adapter that keeps fewer than the 28 tag bits sets to
   the number of low bits it keeps (requests are told apart by bits 13-15,
   REDCOLL_TAG_MAX above: with fewer than 14 bits kept, non-blocking calls
   run to completion at start; persistent ids need 22). Private fields may change between versions. */
typedef struct redcoll_nbstate {
    void              *head, *tail; /* private: outstanding requests, oldest first */
    unsigned long long starts;      /* private: requests started on this transport */
    int                tag_bits;    /* 0: all 28 */
    long long          persistent;  /* private: persistent ids handed out (plans, redcoll_persistent_id) */
} redcoll_nbstate;

typedef struct redcoll_transport {
    void *user;
    int   rank, size;   /* 0 <= rank < size <= REDCOLL_MAX_RANKS */
    redcoll_result (*send)(void *user, int dst, const void *buf, size_t bytes, int tag);
    redcoll_result (*recv)(void *user, int src, void *buf, size_t bytes, int tag);
    redcoll_result (*sendrecv)(void *user, int dst, const void *sbuf, size_t sbytes,
                               int src, void *rbuf, size_t rbytes, int tag);
    void           (*abort)(void *user, redcoll_result why);
    redcoll_result (*isend)(void *user, int dst, const void *buf, size_t bytes, int tag,
                            redcoll_request *req);
    redcoll_result (*irecv)(void *user, int src, void *buf, size_t bytes, int tag,
                            redcoll_request *req);
    redcoll_result (*waitall)(void *user, int count, redcoll_request *reqs);
    int            (*node_of)(void *user, int rank);
    void           (*on_compute)(void *user, size_t elems, size_t bytes);
    void           (*on_scratch)(void *user, long long delta_bytes);
    unsigned        flags;
    redcoll_result (*recv_reduce)(void *user, int src, size_t bytes, int tag,
                                  const redcoll_consumer *into);
    redcoll_result (*sendrecv_reduce)(void *user, int dst, const void *sbuf, size_t sbytes,
                                      int src, size_t rbytes, int tag,
                                      const redcoll_consumer *into);
    void          *(*scratch)(void *user, size_t bytes);
    redcoll_result (*test)(void *user, int count, redcoll_request *reqs, int *done);
    redcoll_result (*irecv_reduce)(void *user, int src, size_t bytes, int tag,
                                   const redcoll_consumer *into, redcoll_request *req);
    redcoll_nbstate *nb;
    const struct redcoll_transport *(*node)(void *user);
} redcoll_transport;

/* A growing block of memory: what an adapter's `scratch` entry keeps. Start
   from a zeroed struct. */
typedef struct redcoll_scratch_block {
    void  *ptr;   /* the aligned block */
    void  *mem;   /* as allocated */
    size_t bytes; /* usable at ptr */
} redcoll_scratch_block;

/*
A transport's `scratch` entry in one call: a block of at least `bytes`.

Parameters
    b       the block (zeroed before its first use).
    bytes   wanted.

Return Value
    b->ptr, 64-byte aligned, of at least max(bytes, 64) bytes; the block grows
    to the largest request and its old contents are not kept. NULL when
    REDCOLL_MALLOC fails (b keeps its old block).

Thread Safety
    One thread at a time per block.
*/
REDCOLL_API void *redcoll_scratch_block_get(redcoll_scratch_block *b, size_t bytes);

/*
Releases the block and zeroes b, for reuse or destruction.

Parameters
    b       a block; one never grown is fine.

Return Value
    None.

Thread Safety
    One thread at a time per block.
*/
REDCOLL_API void redcoll_scratch_block_free(redcoll_scratch_block *b);

/* ---- Group views -----------------------------------------------------------
   A group view is a transport made of a subset of another transport's ranks,
   what MPI_Comm_split makes, but built locally without communication: every
   member builds the same view from the same rank list. View rank i is parent
   rank ranks[i]; the view has its own tag space (chosen by `id`), so its
   traffic never matches the parent's or that of a view with another id.
   Every optional entry of the parent is forwarded (abort, isend/irecv/waitall,
   node_of with rank translation, on_compute, on_scratch, flags, recv_reduce,
   sendrecv_reduce, scratch, test, irecv_reduce), so any
   collective runs on a view exactly as on a whole transport, and the
   simulator still counts all of it. A view of a view works the same way;
   its tag space, one of 63, depends on both ids and is never its parent's
   nor the transport's own, but may be another view's: use nested views one
   at a time, as the hierarchical schedules do. The hierarchical schedules
   build their groups with these views, at no cost per call beyond filling a
   struct. Non-blocking collectives on a view are numbered in the view (as
   MPI numbers them per communicator): keep using one view struct for them,
   and do not remake it while any is outstanding. */
#define REDCOLL_GROUP_MAX_ID 31 /* ids 0..31 */

typedef struct redcoll_group {
    redcoll_transport        t;         /* the view: pass &g.t to any collective */
    /* private */
    const redcoll_transport *parent;    /* borrowed */
    const int               *ranks;     /* borrowed; NULL: parent ranks first, first + 1, ... */
    int                      first;
    int                      id;        /* its tag space: see redcoll__view_tag */
    redcoll_nbstate          nb;        /* its non-blocking collectives */
} redcoll_group;

/*
Makes g a view of the n parent ranks ranks[0..n-1].

Parameters
    g       receives the view; pass &g->t to any collective.
    parent  any valid transport (may itself be a view).
    ranks   n distinct ranks of parent, in the order that defines view ranks
            (ascending order keeps the parent's canonical reduction order);
            the caller (parent->rank) must be one of them.
    n       1 .. parent->size.
    id      0 .. REDCOLL_GROUP_MAX_ID: the tag space. Views over the same
            parent used at the same time by the same ranks need distinct ids.

Return Value
    REDCOLL_OK, or REDCOLL_ERR_INVALID_ARG with g untouched.

Thread Safety
    As the parent transport.

Remarks
    No communication and no allocation. g, parent and ranks are borrowed and
    must stay valid (g at its address) while the view is used; nothing to
    release.
*/
REDCOLL_API redcoll_result redcoll_group_init(redcoll_group *g, const redcoll_transport *parent,
                                              const int *ranks, int n, int id);

/*
As redcoll_group_init for the consecutive parent ranks first .. first+n-1,
without a rank list.

Parameters
    first   the parent rank that becomes view rank 0; the others as
            redcoll_group_init.

Return Value
    REDCOLL_OK, or REDCOLL_ERR_INVALID_ARG with g untouched.

Thread Safety
    As the parent transport.
*/
REDCOLL_API redcoll_result redcoll_group_range(redcoll_group *g, const redcoll_transport *parent,
                                               int first, int n, int id);

/* ==== 3. Options, the algorithm list and selection [SECTION:options] ===== */

typedef enum redcoll_coll {
    REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
    REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_COLL_REDUCE_SCATTER_BLOCK,
    REDCOLL_COLL_ALLGATHER, REDCOLL_COLL_ALLGATHERV,
    REDCOLL_COLL_BCAST, REDCOLL_COLL_ALLTOALL,
    REDCOLL_COLL_GATHER, REDCOLL_COLL_SCATTER, REDCOLL_COLL_BARRIER,
    REDCOLL_COLL_COUNT
} redcoll_coll;

/* ---- The algorithm list -----------------------------------------------------
   Every (collective, algorithm) pair is one row; the enum redcoll_algo, the
   names, the registry of schedules, redcoll_algo_supported / _keeps_order,
   redcoll_algo_at() (and through it `redcoll --algo list` and the README's
   algorithm table, which a test holds to it) all derive from this list.
     first     NEW on the first row of an algorithm name: it declares
               REDCOLL_ALGO_<ALGO> with the next value. The values are ABI:
               new names are appended at the end, never inserted or reordered.
               AND: one more collective for a name declared above.
     ALGO name the enum suffix, and the name tools and options files use.
     COLL      the collective, REDCOLL_COLL_<COLL>.
     schedule  the function redcoll__<schedule> ([SECTION:schedules]) and
     variant   the variant it is passed (the member of a family it runs).
     order     ORDERED: canonical order x0 op x1 op ... op x(p-1), any op.
               COMMUTATIVE: commutative ops only (never selected for others;
               forced, the call returns REDCOLL_ERR_UNSUPPORTED).
     knobs     the options that shape its messages besides count and root:
               SEGMENT (segment_bytes), THRESHOLD (threshold_bytes and the cost
               model), LEVELS (groups, by_node, inner_algo, outer_algo), NODES
               (the nodes and the cost model, which picks each level's row).
     paper     R04 Rabenseifner 2004, RT05 Rabenseifner & Traeff 2005, MPICH
               Thakur, Rabenseifner & Gropp 2005, HL Hasanov & Lastovetsky,
               BHK97 Bruck, Ho, Kipnis, Upfal & Weathersby 1997 (k-port).
   Note the two binary trees: `binary_tree` is the binomial tree of R04 section
   3.3 (recursive distance doubling with whole vectors, as `binomial`), while
   `binary` is HL's heap-shaped binary tree (children 2v+1, 2v+2).
   Adding an algorithm: a NEW row at the end (AND rows for its other
   collectives) and its schedule function in [SECTION:schedules]. */
#define REDCOLL_ALGORITHM_LIST(X) \
 /* first ALGO                    name                        COLL                  schedule                           cost                               variant     order        knobs      paper */ \
  X(NEW, BINOMIAL,               "binomial",                  REDUCE,               reduce_binomial,                   reduce_binomial,                   PLAIN,      ORDERED,     NONE,      "MPICH 4.5") \
  X(AND, BINOMIAL,               "binomial",                  BCAST,                bcast_binomial,                    bcast_binomial,                    PLAIN,      ORDERED,     NONE,      "MPICH 4.2") \
  X(AND, BINOMIAL,               "binomial",                  GATHER,               gather_binomial,                   gather_binomial,                   PLAIN,      ORDERED,     NONE,      "MPICH 4.1") \
  X(AND, BINOMIAL,               "binomial",                  SCATTER,              scatter_binomial,                  gather_binomial,                   PLAIN,      ORDERED,     NONE,      "MPICH 4.1") \
  X(NEW, REDUCE_BCAST,           "reduce_bcast",              ALLREDUCE,            allreduce_reduce_bcast,            allreduce_reduce_bcast,            PLAIN,      ORDERED,     NONE,      "R04 3.2") \
  X(NEW, RECURSIVE_DOUBLING,     "recursive_doubling",        ALLREDUCE,            allreduce_recursive_doubling,      allreduce_recursive_doubling,      PLAIN,      ORDERED,     NONE,      "R04 3.4, MPICH 4.5") \
  X(AND, RECURSIVE_DOUBLING,     "recursive_doubling",        ALLGATHER,            allgather_recursive_doubling,      allgather_recursive_doubling,      PLAIN,      ORDERED,     NONE,      "MPICH 4.1.1") \
  X(AND, RECURSIVE_DOUBLING,     "recursive_doubling",        ALLGATHERV,           allgather_recursive_doubling,      allgather_recursive_doubling,      PLAIN,      ORDERED,     NONE,      "MPICH 4.1.1") \
  X(AND, RECURSIVE_DOUBLING,     "recursive_doubling",        REDUCE_SCATTER,       reduce_scatter_recursive_doubling, reduce_scatter_recursive_doubling, PLAIN,      ORDERED,     NONE,      "MPICH 4.4") \
  X(AND, RECURSIVE_DOUBLING,     "recursive_doubling",        REDUCE_SCATTER_BLOCK, reduce_scatter_recursive_doubling, reduce_scatter_recursive_doubling, PLAIN,      ORDERED,     NONE,      "MPICH 4.4") \
  X(NEW, BINARY_TREE,            "binary_tree",               ALLREDUCE,            allreduce_reduce_bcast,            allreduce_reduce_bcast,            PLAIN,      ORDERED,     NONE,      "R04 3.3") \
  X(AND, BINARY_TREE,            "binary_tree",               REDUCE,               reduce_binomial,                   reduce_binomial,                   PLAIN,      ORDERED,     NONE,      "R04 3.3") \
  X(NEW, HALVING_DOUBLING,       "halving_doubling",          ALLREDUCE,            allreduce_halving_doubling,        allreduce_halving_doubling,        PLAIN,      ORDERED,     NONE,      "R04 3.5, MPICH 5.1") \
  X(AND, HALVING_DOUBLING,       "halving_doubling",          REDUCE,               reduce_halving_doubling,           reduce_halving_doubling,           PLAIN,      ORDERED,     NONE,      "R04 3.5, MPICH 5.1") \
  X(NEW, BINARY_BLOCKS,          "binary_blocks",             ALLREDUCE,            allreduce_binary_blocks,           allreduce_binary_blocks,           PLAIN,      ORDERED,     NONE,      "R04 3.6, MPICH 5.2") \
  X(AND, BINARY_BLOCKS,          "binary_blocks",             REDUCE,               reduce_binary_blocks,              reduce_binary_blocks,              PLAIN,      ORDERED,     NONE,      "R04 3.6") \
  X(NEW, RING,                   "ring",                      ALLREDUCE,            allreduce_ring,                    allreduce_ring,                    PLAIN,      ORDERED,     NONE,      "R04 3.7, MPICH 5.3") \
  X(AND, RING,                   "ring",                      REDUCE,               reduce_ring,                       reduce_ring,                       PLAIN,      ORDERED,     NONE,      "R04 3.7") \
  X(AND, RING,                   "ring",                      ALLGATHER,            allgather_ring,                    allgather_ring,                    PLAIN,      ORDERED,     NONE,      "MPICH 4.1") \
  X(AND, RING,                   "ring",                      ALLGATHERV,           allgather_ring,                    allgather_ring,                    PLAIN,      ORDERED,     NONE,      "MPICH 4.1") \
  X(NEW, BUTTERFLY,              "butterfly",                 ALLREDUCE,            rabenseifner_traeff,               rabenseifner_traeff,               BUTTERFLY,  ORDERED,     THRESHOLD, "RT05 Fig. 1") \
  X(AND, BUTTERFLY,              "butterfly",                 REDUCE,               rabenseifner_traeff,               rabenseifner_traeff,               BUTTERFLY,  ORDERED,     THRESHOLD, "RT05 Fig. 1") \
  X(NEW, ELIMINATION,            "elimination",               ALLREDUCE,            rabenseifner_traeff,               rabenseifner_traeff,               OVERLAP,    ORDERED,     THRESHOLD, "RT05 3.2 (Fig. 4)") \
  X(AND, ELIMINATION,            "elimination",               REDUCE,               rabenseifner_traeff,               rabenseifner_traeff,               OVERLAP,    ORDERED,     THRESHOLD, "RT05 3.2 (Fig. 4)") \
  X(NEW, ELIMINATION_NONOVERLAP, "elimination_nonoverlap",    ALLREDUCE,            rabenseifner_traeff,               rabenseifner_traeff,               NONOVERLAP, ORDERED,     THRESHOLD, "RT05 3.3 (Fig. 5)") \
  X(AND, ELIMINATION_NONOVERLAP, "elimination_nonoverlap",    REDUCE,               rabenseifner_traeff,               rabenseifner_traeff,               NONOVERLAP, ORDERED,     THRESHOLD, "RT05 3.3 (Fig. 5)") \
  X(NEW, FACTOR_RING,            "factor_ring",               ALLREDUCE,            rabenseifner_traeff,               rabenseifner_traeff,               FACTORS,    ORDERED,     THRESHOLD, "RT05 3.4-3.6") \
  X(AND, FACTOR_RING,            "factor_ring",               REDUCE,               rabenseifner_traeff,               rabenseifner_traeff,               FACTORS,    ORDERED,     THRESHOLD, "RT05 3.4-3.6") \
  X(NEW, BRUCK,                  "bruck",                     ALLGATHER,            allgather_bruck,                   allgather_bruck,                   PLAIN,      ORDERED,     NONE,      "MPICH 4.1.2") \
  X(AND, BRUCK,                  "bruck",                     ALLGATHERV,           allgather_bruck,                   allgather_bruck,                   PLAIN,      ORDERED,     NONE,      "MPICH 4.1.2") \
  X(AND, BRUCK,                  "bruck",                     ALLTOALL,             alltoall_bruck,                    alltoall_bruck,                    PLAIN,      ORDERED,     NONE,      "MPICH 4.3") \
  X(NEW, SCATTER_RECURSIVE_DOUBLING, "scatter_recursive_doubling", BCAST,           bcast_scatter_allgather,           bcast_scatter_allgather,           DOUBLING,   ORDERED,     NONE,      "MPICH 4.2 (van de Geijn)") \
  X(NEW, SCATTER_RING,           "scatter_ring",              BCAST,                bcast_scatter_allgather,           bcast_scatter_allgather,           RING,       ORDERED,     NONE,      "MPICH 4.2 (van de Geijn)") \
  X(NEW, SCATTERED,              "scattered",                 ALLTOALL,             alltoall_scattered,                alltoall_scattered,                PLAIN,      ORDERED,     NONE,      "MPICH 4.3") \
  X(NEW, PAIRWISE,               "pairwise",                  ALLTOALL,             alltoall_pairwise,                 alltoall_pairwise,                 PLAIN,      ORDERED,     NONE,      "MPICH 4.3") \
  X(AND, PAIRWISE,               "pairwise",                  REDUCE_SCATTER,       reduce_scatter_pairwise,           reduce_scatter_pairwise,           PLAIN,      ORDERED,     NONE,      "MPICH 4.4") \
  X(AND, PAIRWISE,               "pairwise",                  REDUCE_SCATTER_BLOCK, reduce_scatter_pairwise,           reduce_scatter_pairwise,           PLAIN,      ORDERED,     NONE,      "MPICH 4.4") \
  X(NEW, RECURSIVE_HALVING,      "recursive_halving",         REDUCE_SCATTER,       reduce_scatter_recursive_halving,  reduce_scatter_recursive_halving,  PLAIN,      COMMUTATIVE, NONE,      "MPICH 4.4") \
  X(AND, RECURSIVE_HALVING,      "recursive_halving",         REDUCE_SCATTER_BLOCK, reduce_scatter_recursive_halving,  reduce_scatter_recursive_halving,  PLAIN,      COMMUTATIVE, NONE,      "MPICH 4.4") \
  X(NEW, FLAT,                   "flat",                      REDUCE,               reduce_flat,                       reduce_flat,                       PLAIN,      ORDERED,     NONE,      "HL 2.1") \
  X(AND, FLAT,                   "flat",                      BCAST,                bcast_flat,                        bcast_flat,                        PLAIN,      ORDERED,     NONE,      "HL") \
  X(NEW, CHAIN,                  "chain",                     REDUCE,               reduce_chain,                      reduce_chain,                      WHOLE,      ORDERED,     NONE,      "HL 2.1") \
  X(AND, CHAIN,                  "chain",                     BCAST,                bcast_chain,                       bcast_chain,                       WHOLE,      ORDERED,     NONE,      "HL") \
  X(NEW, PIPELINE,               "pipeline",                  REDUCE,               reduce_chain,                      reduce_chain,                      PIPELINED,  ORDERED,     SEGMENT,   "HL 2.1") \
  X(AND, PIPELINE,               "pipeline",                  BCAST,                bcast_chain,                       bcast_chain,                       PIPELINED,  ORDERED,     SEGMENT,   "HL") \
  X(NEW, BINARY,                 "binary",                    REDUCE,               reduce_binary,                     reduce_binary,                     HEAP,       COMMUTATIVE, SEGMENT,   "HL 2.1") \
  X(NEW, IN_ORDER_BINARY,        "in_order_binary",           REDUCE,               reduce_binary,                     reduce_binary,                     IN_ORDER,   ORDERED,     SEGMENT,   "HL 2.1") \
  X(NEW, HIERARCHICAL,           "hierarchical",              ALLREDUCE,            allreduce_hierarchical,            hierarchical,                      PLAIN,      ORDERED,     LEVELS,    "HL Alg. 1") \
  X(AND, HIERARCHICAL,           "hierarchical",              REDUCE,               reduce_hierarchical,               hierarchical,                      PLAIN,      ORDERED,     LEVELS,    "HL Alg. 1") \
  X(AND, HIERARCHICAL,           "hierarchical",              BCAST,                bcast_hierarchical,                hierarchical,                      PLAIN,      ORDERED,     LEVELS,    "HL Alg. 1") \
  X(NEW, DISSEMINATION,          "dissemination",             BARRIER,              barrier_dissemination,             barrier_dissemination,             PLAIN,      ORDERED,     NONE,      "Hensgen et al.") \
  X(NEW, NODE_SPLIT,             "node_split",                ALLREDUCE,            allreduce_node_split,              node_split,                        PLAIN,      ORDERED,     NODES,     "R04 3.2 by node") \
  X(AND, NODE_SPLIT,             "node_split",                REDUCE,               reduce_node_split,                 node_split,                        PLAIN,      ORDERED,     NODES,     "R04 3.5 by node") \
  X(AND, NODE_SPLIT,             "node_split",                BCAST,                bcast_node_split,                  node_split,                        PLAIN,      ORDERED,     NODES,     "MPICH 4.2 by node") \
  X(AND, NODE_SPLIT,             "node_split",                ALLGATHER,            allgather_node_split,              node_split,                        PLAIN,      ORDERED,     NODES,     "by node") \
  X(NEW, NODE_LEADER,            "node_leader",               ALLREDUCE,            allreduce_node_leader,             node_leader,                       PLAIN,      ORDERED,     NODES,     "HL Alg. 1 by node") \
  X(AND, NODE_LEADER,            "node_leader",               REDUCE,               reduce_node_leader,                node_leader,                       PLAIN,      ORDERED,     NODES,     "HL Alg. 1 by node") \
  X(AND, NODE_LEADER,            "node_leader",               BCAST,                bcast_node_leader,                 node_leader,                       PLAIN,      ORDERED,     NODES,     "HL Alg. 1 by node") \
  X(AND, NODE_LEADER,            "node_leader",               ALLGATHER,            allgather_node_leader,             node_leader,                       PLAIN,      ORDERED,     NODES,     "HL Alg. 1 by node") \
  X(NEW, NODE_LANES,             "node_lanes",                ALLREDUCE,            allreduce_node_lanes,              node_lanes,                        PLAIN,      COMMUTATIVE, NODES,     "BHK97 k-port by node")

#define REDCOLL__ALGO_ENUM_NEW(A) REDCOLL_ALGO_##A,
#define REDCOLL__ALGO_ENUM_AND(A)
#define REDCOLL__ALGO_ENUM(first, A, name, C, fn, cost, var, ord, knobs, paper) REDCOLL__ALGO_ENUM_##first(A)

/* Every algorithm name; each collective accepts the subset its rows of the
   list give (redcoll_algo_supported). AUTO lets the selector choose. The
   values are ABI: REDCOLL_ALGO_BINOMIAL = 1, ... in the list's order. */
typedef enum redcoll_algo {
    REDCOLL_ALGO_AUTO = 0,
    REDCOLL_ALGORITHM_LIST(REDCOLL__ALGO_ENUM)
    REDCOLL_ALGO_COUNT
} redcoll_algo;

/* One row of the algorithm list, for tools that enumerate the pairs. */
typedef struct redcoll_algo_info {
    redcoll_coll coll;
    redcoll_algo algo;
    int          keeps_order; /* 1: canonical order, any op; 0: commutative ops only */
    const char  *paper;       /* paper and section, e.g. "R04 3.5, MPICH 5.1" */
} redcoll_algo_info;

/*
The collective's name as the tools and the README spell it ("allreduce").

Parameters
    coll    any value.

Return Value
    A static string; "?" outside the enum.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_coll_name(redcoll_coll coll);

/*
The collective of a name, the inverse of redcoll_coll_name.

Parameters
    name    exact, lower case ("reduce_scatter_block").
    out     receives the collective; untouched when name is none.

Return Value
    1 when name is a collective's, else 0.

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_coll_from_name(const char *name, redcoll_coll *out);

/*
The algorithm's name as the tools, the options files and the README spell it
("ring"; "auto" for REDCOLL_ALGO_AUTO).

Parameters
    algo    any value.

Return Value
    A static string; "?" outside the enum.

Thread Safety
    Thread safe.
*/
REDCOLL_API const char *redcoll_algo_name(redcoll_algo algo);

/*
The algorithm of a name, the inverse of redcoll_algo_name.

Parameters
    name    exact, lower case ("halving_doubling", "auto").
    out     receives the algorithm; untouched when name is none.

Return Value
    1 when name is an algorithm's, else 0.

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_algo_from_name(const char *name, redcoll_algo *out);

/*
Whether a collective has an algorithm.

Parameters
    coll, algo  any values.

Return Value
    1 if (coll, algo) is a row of the algorithm list, or algo is AUTO and
    coll a collective; else 0.

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_algo_supported(redcoll_coll coll, redcoll_algo algo);

/*
Whether a row keeps canonical order, and so accepts non-commutative ops.

Parameters
    coll, algo  any values.

Return Value
    1 for a row that keeps canonical order; 0 for commutative-only rows and
    pairs not in the list.

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_algo_keeps_order(redcoll_coll coll, redcoll_algo algo);

/*
Row i of the algorithm list, for tools that enumerate the pairs (`redcoll
--algo list`; the README's table is checked against it).

Parameters
    i       0, 1, ... in the list's order.

Return Value
    The row (static); NULL for i outside the list.

Thread Safety
    Thread safe.

Example
    const redcoll_algo_info *e;
    int i;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        printf("%s %s%s (%s)\n", redcoll_coll_name(e->coll), redcoll_algo_name(e->algo),
               e->keeps_order ? "" : " commutative only", e->paper);
*/
REDCOLL_API const redcoll_algo_info *redcoll_algo_at(int i);

/* Which rules pick an algorithm when opts->algo is AUTO. Zero-initialised
   options get REDCOLL_SELECTOR_DEFAULT, which is the model. The values are
   ABI; 0 has always meant "the library's default" (it was the paper rules
   before the model existed). */
typedef enum redcoll_selector {
    REDCOLL_SELECTOR_DEFAULT = 0, /* REDCOLL_SELECTOR_MODEL */
    REDCOLL_SELECTOR_MPICH   = 1, /* "what MPICH would do" (Thakur et al. 2005 section 4) */
    REDCOLL_SELECTOR_MODEL   = 2, /* least modeled time under opts->model (redcoll_algo_cost) */
    REDCOLL_SELECTOR_PAPERS  = 3  /* Rabenseifner 2004 section 4 for (all)reduce, MPICH for the rest */
} redcoll_selector;

/* The alpha-beta-gamma model of Rabenseifner 2004 section 3.1: seconds per
   message, per byte transferred, per byte reduced, and the factors of a
   one-way (uni-directional) message. Each zero field means its default
   (REDCOLL_DEFAULT_*, factors 1). AUTO picks by it (REDCOLL_SELECTOR_MODEL);
   `redcoll tune` measures it into a profile (redcoll_cost_model_parse).

   Two levels: alpha and beta are the links inside a node; inter_alpha and
   inter_beta the network between nodes, whose link each node shares among
   the messages that leave it (and those that enter it) at the same time: a
   message between nodes that shares its node's link with k - 1 others moves
   at 1 / (k inter_beta) bytes per second (the one-way factors apply to both
   levels). Zero inter fields mean the intra values; when both equal them,
   or every rank is on one node, the model is the single-level one. */
typedef struct redcoll_cost_model {
    double alpha, beta, gamma;
    double f_alpha, f_beta;
    double inter_alpha, inter_beta; /* between nodes; 0: = alpha, beta (appended) */
} redcoll_cost_model;

/*
The cost profile: text <-> redcoll_cost_model, so a program can use what
`redcoll tune` measured (the core does no file I/O: read the file yourself).

    # comments start with '#', anywhere on a line
    redcoll_profile 1          first line that is not blank or a comment
    alpha 2.1e-06              seconds per message (a two-way exchange)
    beta 1.3e-10               seconds per byte sent
    gamma 4.2e-11              seconds per byte reduced
    f_alpha 0.62               one-way message: f_alpha * alpha ...
    f_beta 0.97                ... + n * f_beta * beta (Rabenseifner 2004, 3.1)
    inter_alpha 4.0e-06        optional, two levels: alpha and beta then are
    inter_beta 2.5e-10         the links inside a node, these between nodes
    transport threads          anything else: "key value" lines a reader
    p 2                        ignores (what was measured, where, how)

One "key value" per line, separated by spaces or tabs. The five numbers
alpha .. f_beta are required, inter_alpha and inter_beta optional (absent:
0, one level, as profiles written before them), each once, finite and > 0
(zero would mean "the default" in redcoll_options). Unknown keys are
ignored, so later versions can add information; a newer format version is
refused.

*/
#define REDCOLL_PROFILE_VERSION 1

/*
Reads a cost profile (the format above).

Parameters
    text    the whole profile, NUL-terminated.
    model   receives the parameters (inter_alpha, inter_beta 0 when absent);
            untouched on failure.
    err     optional (NULL): receives the reason of a refusal, naming the line.
    cap     bytes at err.

Return Value
    REDCOLL_OK, or REDCOLL_ERR_INVALID_ARG for a text that is not a profile
    of this or an older format version.

Thread Safety
    Thread safe (no state; numbers are read with strtod, in the C locale's
    notation).
*/
REDCOLL_API redcoll_result redcoll_cost_model_parse(const char *text, redcoll_cost_model *model,
                                                    char *err, size_t cap);

/*
Writes a model as profile text: a comment header, the version line, the
five numbers and the inter ones that are > 0, with 17 significant digits,
so parsing gives the same doubles back. A writer may append more
"key value" lines.

Parameters
    model   the parameters.
    buf     receives the text, NUL-terminated (truncated to cap - 1 bytes).
    cap     bytes at buf; 0 to ask for the length.

Return Value
    The length of the whole text, as snprintf: call with cap 0 to size buf.

Thread Safety
    Thread safe.
*/
REDCOLL_API int redcoll_cost_model_format(const redcoll_cost_model *model, char *buf, size_t cap);

typedef struct redcoll_allocator {
    void *(*alloc_fn)(size_t bytes, void *user_data);
    void  (*free_fn)(void *ptr, void *user_data);
    void  *user_data;
} redcoll_allocator;

/* Threshold b of the Rabenseifner-Traeff butterfly (bytes): levels whose
   vector is longer than b halve it. opts.threshold_bytes holds b, or one of: */
#define REDCOLL_THRESHOLD_AUTO       ((size_t)0)  /* the cost model picks the halving levels */
#define REDCOLL_THRESHOLD_HALVE_ALL  ((size_t)-2) /* b = 0: every level halves (bandwidth-optimal) */
#define REDCOLL_THRESHOLD_HALVE_NONE ((size_t)-1) /* b = infinity: none halves (latency-optimal) */

/* Options of every collective; zero-initialise, NULL means all defaults. New
   fields are only ever appended, so the struct grows at its end. */
typedef struct redcoll_options {
    redcoll_algo       algo;            /* AUTO = the selector chooses */
    redcoll_selector   selector;        /* DEFAULT (= MODEL): least modeled time under
                                           `model`; PAPERS, MPICH: the papers' rules */
    size_t             segment_bytes;   /* pipelined schedules; 0 = default */
    size_t             threshold_bytes; /* butterfly threshold b, or REDCOLL_THRESHOLD_* */
    int                groups;          /* hierarchical: G groups; 0 = default; above p: p
                                           (every rank its own group), so one value can
                                           serve transports of any size */
    redcoll_algo       inner_algo;      /* hierarchical: inside groups; AUTO = default */
    redcoll_algo       outer_algo;      /* hierarchical: among group leaders */
    int                by_node;         /* hierarchical: group by transport node_of */
    redcoll_cost_model model;
    redcoll_allocator  allocator;
    size_t             chunk_bytes;     /* transports without recv_reduce: messages
                                           longer than this are cut into messages of
                                           this size (whole elements), each reduced as
                                           it lands, so staging needs one chunk, not a
                                           vector; 0 = default; SIZE_MAX: never cut.
                                           Every rank must pass the same value. */
    unsigned           transport_flags; /* the model prices the call as on a transport
                                           with these flags (REDCOLL_TRANSPORT_PEER_REDUCE;
                                           others are ignored); a collective adds its own
                                           transport's, so this is for redcoll_select and
                                           redcoll_algo_cost, which see no transport.
                                           0: none. */
    int                ranks_per_node;  /* nodes of this many consecutive ranks (the last
                                           may have fewer): for redcoll_select and
                                           redcoll_algo_cost, and for a collective on a
                                           transport without node_of (a transport's
                                           node_of wins). With model.inter_alpha or
                                           inter_beta other than alpha, beta and more
                                           than one node, the model has two levels and
                                           AUTO prices the node-aware rows too. 0: no
                                           nodes (one level). (Appended.) */
    long long          persistent_id;   /* starts (redcoll_i<coll>) only: 0, or an id from
                                           redcoll_persistent_id on the call's transport,
                                           taken when the persistent request was made:
                                           the request is then matched with the other
                                           ranks' by that id (the order in which they
                                           made their persistent requests, MPI-4's rule)
                                           and not by the order of starts; every rank
                                           passes the id it took for the same request.
                                           (Appended.) */
} redcoll_options;

#define REDCOLL_DEFAULT_ALPHA   2e-6    /* 2 us latency */
#define REDCOLL_DEFAULT_BETA    1e-10   /* 10 GB/s */
#define REDCOLL_DEFAULT_GAMMA   2.5e-11 /* 40 GB/s of reduction */
#define REDCOLL_DEFAULT_SEGMENT ((size_t)32768)
#define REDCOLL_DEFAULT_CHUNK   ((size_t)1 << 20) /* 1 MiB: in cache (L2 of current cores, L3 of all), few messages */

/*
The options with every default filled in: what a collective uses.

Parameters
    opts    NULL means all defaults.

Return Value
    A copy of *opts whose zero fields hold their defaults. Not validated (a
    collective does that).

Thread Safety
    Thread safe.
*/
REDCOLL_API redcoll_options redcoll_options_resolved(const redcoll_options *opts);

/*
The algorithm AUTO picks, as the collectives call it.

Parameters
    coll         the collective.
    p            ranks: any int up to INT_MAX gives an answer (collectives
                 themselves serve up to REDCOLL_MAX_RANKS).
    bytes        per rank: the whole vector for (all)reduce and bcast; one
                 block for allgather, alltoall, gather and scatter; the total
                 for allgatherv, reduce_scatter and reduce_scatter_block.
    commutative  0: never an algorithm that cannot keep canonical order.
    opts         opts->selector, and for the model opts->model, the knobs and
                 opts->transport_flags (a collective adds its transport's
                 REDCOLL_TRANSPORT_PEER_REDUCE; pass it here to ask what AUTO
                 picks on such a transport, e.g. threads)
                 (NULL: REDCOLL_SELECTOR_DEFAULT with the default model).

Return Value
    An algorithm of coll's rows (REDCOLL_ALGO_AUTO only for an invalid coll,
    or p < 1 under the model). Under REDCOLL_SELECTOR_MODEL (the default) it
    is the row with the least redcoll_algo_cost among those that can serve
    the call (commutative-only rows only for commutative ops; hierarchical
    only when asked for), ties to the row listed first; bytes are priced as
    bytes (esize 1), while a collective prices whole elements of its type, so
    for counts not divisible by p the two may differ by a rounding. For
    allgatherv and reduce_scatter the total is priced as even counts; the
    collectives themselves price their counts (up to p = 512).
    REDCOLL_SELECTOR_PAPERS: Rabenseifner 2004 section 4 (rules measured on
    a Cray T3E) for (all)reduce and MPICH's for the rest;
    REDCOLL_SELECTOR_MPICH: MPICH's for every collective.

Thread Safety
    Thread safe. The model's decisions are cached in a table shared by all
    threads (atomic words, no lock): a hit is a few loads; a miss prices
    every candidate row, which for reduce at 8 < p <= 128 means replaying
    five schedules (what each costs: README, "Choosing the algorithm").
*/
REDCOLL_API redcoll_algo redcoll_select(redcoll_coll coll, int p, size_t bytes,
                                        int commutative, const redcoll_options *opts);

/*
The modeled time of one row of the algorithm list under opts->model (and
its knobs: threshold, segment size, groups): the closed form of the
paper's cost in Rabenseifner 2004 section 3.1's model, as the simulator
(transports/redcoll_mock.h) applies it, or for reduce's rows without one
(up to p = 128) the replay of the schedule's calls under the simulator's
rules, or a walk of the calls (pipelines up to p = 512, binary trees up to
p = 128). REDCOLL_SELECTOR_MODEL picks the least of these among the rows that
can serve the call.

Parameters
    coll, algo   a row (redcoll_algo_supported); AUTO is not a row.
    p            ranks, >= 1.
    bytes        as for redcoll_select (per rank; one block for the block
                 collectives; the total for reduce_scatter(_block) and allgatherv).
    esize        bytes per element (schedules split in whole elements); 0: 1.
    opts         NULL: defaults.

Return Value
    Seconds; -1 when (coll, algo) is not a row or p < 1. Exact (equal to the
    simulator's modeled time) for most rows; the exceptions and their bounds
    are listed in the README ("Choosing the algorithm").

Thread Safety
    Thread safe. A replayed row takes its memory from REDCOLL_MALLOC (not
    opts' allocator: it is the library's, as the decision cache); one block
    (at most 4 MiB) stays for the next replay, handed over by an atomic
    exchange.
*/
REDCOLL_API double redcoll_algo_cost(redcoll_coll coll, redcoll_algo algo, int p, size_t bytes,
                                     size_t esize, const redcoll_options *opts);

/* ==== 4. Collectives [SECTION:collectives] =============================== */
/*
What every collective shares
----------------------------
Every rank of the transport calls the same collective with the same count,
dtype, op, root and algorithm (and the same options the algorithm reads).
Counts are in elements of `dtype`. `opts` may be NULL (all defaults).

Return Value
    REDCOLL_OK, or:
    REDCOLL_ERR_INVALID_ARG   the caller's mistake, found before anything
                              happens: nothing was sent, no buffer written,
                              nothing allocated. An invalid transport (NULL,
                              no send/recv/sendrecv, rank not in 0..size-1,
                              size above REDCOLL_MAX_RANKS, isend/irecv/waitall
                              not all or none), dtype, op (REDCOLL_OP_USER
                              without fn, a predefined op MPI leaves undefined
                              for the type), options (half an allocator,
                              negative groups or model, unknown enum values),
                              root, count * element size overflowing size_t,
                              an algorithm the collective does not have, an
                              invalid hierarchical level, or a buffer the call
                              needs that is NULL (or REDCOLL_IN_PLACE where it
                              may not be).
    REDCOLL_ERR_UNSUPPORTED   a forced algorithm (or hierarchical level) that
                              cannot keep canonical order, with an op that is
                              not commutative. Nothing touched, as above.
    REDCOLL_ERR_OUT_OF_MEMORY scratch could not be allocated.
    REDCOLL_ERR_TRANSPORT, REDCOLL_ERR_TIMEOUT, REDCOLL_ERR_ABORTED,
    REDCOLL_ERR_DEADLOCK, REDCOLL_ERR_MISMATCH
                              from the transport: a call on this rank failed
                              (the library then calls t->abort once, which
                              releases the peers with an error), or a peer's
                              failure released this rank. Buffers hold
                              unspecified values.
    A count of 0 returns REDCOLL_OK at once, sending nothing; buffers may then
    be NULL (argument errors are still reported).

Thread Safety
    Not thread safe on one transport: one call at a time per transport (and
    per group view's parent). Distinct transports may be used concurrently.

Remarks
    In-place forms follow MPI's MPI_IN_PLACE; each function lists its own.
    Non-commutative ops are applied in canonical order x0 op x1 op ... op
    x(p-1) and every rank that gets a result gets it bitwise identical.
    Scratch: each algorithm needs a few vectors at most. With a transport
    that has a `scratch` entry (redcoll_shm.h) a call measures its exact need
    first (the schedule's control flow, no data) and takes it from the
    transport's block, which grows to the largest single call's need and
    then stays: steady-state calls allocate nothing and fault in no pages,
    and the block never holds more than the biggest call needed. Otherwise
    scratch comes from opts.allocator for the call. Persistent plans
    (redcoll_allreduce_init ...) hold their own; redcoll_plan_scratch_bytes
    reports it. Transfers may be synchronous: nothing relies on buffering.

    Ranks that disagree (an erroneous program): the collective, the algorithm
    as resolved, the count (every count of an irregular collective), the
    data type, the op (a user op: its commutative flag), the root, in place
    (allreduce, reduce_scatter(_block), allgather(v), alltoall: every rank
    or none) and the options the algorithm reads (segment size, threshold
    and cost model, hierarchical levels and groups) go into the message tag,
    and message sizes must match exactly, so the ranks' messages never
    match and a disagreement ends in an error, not in OK with a wrong
    result: REDCOLL_ERR_MISMATCH where a rank is shown a message of another
    call (the stream rule at REDCOLL_TAG_MAX), REDCOLL_ERR_TRANSPORT for a
    message of another size, REDCOLL_ERR_ABORTED where a peer's failure
    released the rank, REDCOLL_ERR_DEADLOCK where every rank waits with no
    message of another call in sight. The transports of this library catch
    it without a timeout: the simulator and the threads transport always
    (their deadlock detectors see every rank), redcoll_mpi.h wherever a
    waiting rank is shown such a message (see there). A rank whose own call
    could not show the mistake (it only sent, say) learns of it in a later
    call on that transport. The parameters are a 12-bit hash, so 1
    disagreement in 4096 still matches by tag (then usually by size too);
    over an MPI whose tags are narrower than 28 bits (redcoll_mpi.h) more.
*/

/*
Persistent collectives (MPI-4's MPI_Allreduce_init, Gloo's algorithm objects)
-----------------------------------------------------------------------------
redcoll_<coll>_init (declared after each one-shot call below) takes the
arguments of the one-shot call plus `out` and
settles everything once: the checks, the algorithm (AUTO's choice included),
the tag, every schedule parameter and all scratch. redcoll_plan_run then runs
the collective on the buffers given at init -- as many times as wanted, with
whatever data they hold by then -- allocating nothing and costing only its
messages and reductions. Every rank makes the same plan and runs it the
same number of times, in the same order as its other collectives.

    redcoll_plan *pl;
    if (redcoll_allreduce_init(t, x, sum, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL, &pl) == REDCOLL_OK) {
        for (step = 0; step < steps; ++step) { fill(x); redcoll_plan_run(pl); use(sum); }
        redcoll_plan_free(pl);
    }

Return Value
    init: as the one-shot call's argument checks (INVALID_ARG, UNSUPPORTED,
    nothing touched, *out = NULL), or OUT_OF_MEMORY; it sends nothing.
    redcoll_plan_run: as the one-shot call (INVALID_ARG for a NULL plan).

Remarks
    The transport, the buffers, and for the irregular collectives nothing else
    (the counts are copied) are borrowed: they must stay valid (the transport
    at its address) while the plan lives. opts is copied, its allocator kept:
    the plan, its copy of the counts and one block of scratch come from it at
    init and go back to it in redcoll_plan_free; redcoll_plan_run calls it
    never. The scratch is the exact high-water mark of the schedule's needs,
    measured at init by running the schedule's control flow once without
    moving data (at most a few vectors of the message size per rank, see
    redcoll_plan_scratch_bytes). A count of 0 makes a plan that returns OK.
    Thread safety: a plan runs on one thread at a time, and counts as a call
    on its transport (one call at a time per transport).
*/
typedef struct redcoll_plan redcoll_plan;

/*
Reduces the count elements of every rank's sbuf with op and leaves the
result in every rank's rbuf: rbuf = x0 op x1 op ... op x(p-1).

Parameters
    t       this rank's transport.
    sbuf    count elements of this rank's input, or REDCOLL_IN_PLACE: the
            input is in rbuf and is replaced by the result. sbuf == rbuf is
            allowed too.
    rbuf    count elements for the result (all ranks).
    count   elements per rank.
    dtype   element type; op must be valid for it (redcoll_op_valid_for).
    op      REDCOLL_SUM ... or redcoll_op_user(fn, user, commutative).
    opts    opts->algo: AUTO (redcoll_select) or an allreduce algorithm of
            the list; segment_bytes, threshold_bytes, groups, inner_algo /
            outer_algo (hierarchical: a reduce inside the groups, an
            allreduce among the leaders), model and allocator as they apply.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").

Example
    double x[4] = { 1, 2, 3, 4 }, sum[4];
    redcoll_result r = redcoll_allreduce(t, x, sum, 4, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    r = redcoll_allreduce(t, REDCOLL_IN_PLACE, x, 4, REDCOLL_DOUBLE, REDCOLL_MAX, NULL);
*/
REDCOLL_API redcoll_result redcoll_allreduce(const redcoll_transport *t, const void *sbuf,
                                             void *rbuf, size_t count, redcoll_dtype dtype,
                                             redcoll_op op, const redcoll_options *opts);

/*
As redcoll_allreduce, with the result only at rank `root`.

Parameters
    sbuf    count elements of input on every rank; at the root also
            REDCOLL_IN_PLACE (its input is in rbuf). Elsewhere IN_PLACE is
            INVALID_ARG.
    rbuf    the root's count elements for the result; ignored (may be NULL)
            on the other ranks.
    root    0 .. size-1, the same on every rank.
    opts    a reduce algorithm; hierarchical: reduce algorithms at both levels.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").

Example
    double part[8], total[8];
    redcoll_reduce(t, part, t->rank == 0 ? total : NULL, 8, REDCOLL_DOUBLE, REDCOLL_SUM, 0, NULL);
*/
REDCOLL_API redcoll_result redcoll_reduce(const redcoll_transport *t, const void *sbuf,
                                          void *rbuf, size_t count, redcoll_dtype dtype,
                                          redcoll_op op, int root, const redcoll_options *opts);

/*
Reduces recvcounts[0] + ... + recvcounts[p-1] elements like allreduce and
scatters the result: rank i keeps recvcounts[i] elements, the block that
starts at recvcounts[0] + ... + recvcounts[i-1].

Parameters
    sbuf        the whole input (the sum of the counts), or REDCOLL_IN_PLACE:
                the input is in rbuf, which then receives this rank's block
                at its front.
    rbuf        recvcounts[rank] elements (may be NULL when that is 0 and
                the call is not in place); in place, room for the whole input.
    recvcounts  p counts, the same on every rank.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_reduce_scatter(const redcoll_transport *t, const void *sbuf,
                                                  void *rbuf, const size_t *recvcounts,
                                                  redcoll_dtype dtype, redcoll_op op,
                                                  const redcoll_options *opts);

/*
As redcoll_reduce_scatter with recvcount elements for every rank: sbuf (or
rbuf in place) holds p * recvcount elements, rank i keeps block i.

Parameters
    recvcount   elements each rank keeps; the others as redcoll_reduce_scatter.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_reduce_scatter_block(const redcoll_transport *t,
                                                        const void *sbuf, void *rbuf,
                                                        size_t recvcount, redcoll_dtype dtype,
                                                        redcoll_op op, const redcoll_options *opts);

/*
Gathers count elements from every rank into every rank's rbuf: rank 0's
block first, then rank 1's, ...

Parameters
    sbuf    count elements, or REDCOLL_IN_PLACE: this rank's block is already
            at rbuf + rank * count.
    rbuf    p * count elements.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_allgather(const redcoll_transport *t, const void *sbuf,
                                             void *rbuf, size_t count, redcoll_dtype dtype,
                                             const redcoll_options *opts);

/*
As redcoll_allgather with counts[i] elements from rank i; rank i's block
lands at counts[0] + ... + counts[i-1].

Parameters
    sbuf    counts[rank] elements (may be NULL when that is 0), or
            REDCOLL_IN_PLACE: the block is already in place in rbuf.
    rbuf    the sum of the counts.
    counts  p entries, the same on every rank.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_allgatherv(const redcoll_transport *t, const void *sbuf,
                                              void *rbuf, const size_t *counts,
                                              redcoll_dtype dtype, const redcoll_options *opts);

/*
Copies the root's count elements of buf into buf on every rank.

Parameters
    buf     count elements: the data at the root, the destination elsewhere.
    root    0 .. size-1, the same on every rank.
    opts    a bcast algorithm; hierarchical: bcast algorithms at both levels.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").

Example
    int params[16];
    if (t->rank == 0) load_params(params);
    redcoll_bcast(t, params, 16, REDCOLL_INT32, 0, NULL);
*/
REDCOLL_API redcoll_result redcoll_bcast(const redcoll_transport *t, void *buf, size_t count,
                                         redcoll_dtype dtype, int root,
                                         const redcoll_options *opts);

/*
Exchanges blocks: block j of this rank's sbuf (count elements at j * count)
goes to rank j and lands there as block `rank` of rbuf.

Parameters
    sbuf    p * count elements, or REDCOLL_IN_PLACE: rbuf holds the blocks to
            send and is replaced by the ones received.
    rbuf    p * count elements.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_alltoall(const redcoll_transport *t, const void *sbuf,
                                            void *rbuf, size_t count, redcoll_dtype dtype,
                                            const redcoll_options *opts);

/*
Gathers count elements from every rank at the root, in rank order.

Parameters
    sbuf    count elements; at the root also REDCOLL_IN_PLACE (its block is
            already at rbuf + root * count). Elsewhere IN_PLACE is INVALID_ARG.
    rbuf    the root's p * count elements; ignored (may be NULL) elsewhere.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_gather(const redcoll_transport *t, const void *sbuf,
                                          void *rbuf, size_t count, redcoll_dtype dtype,
                                          int root, const redcoll_options *opts);

/*
Scatters the root's sbuf: block i (count elements at i * count) lands in
rank i's rbuf.

Parameters
    sbuf    the root's p * count elements; ignored (may be NULL) elsewhere.
    rbuf    count elements; at the root also REDCOLL_IN_PLACE (its block stays
            in sbuf). Elsewhere IN_PLACE is INVALID_ARG.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_scatter(const redcoll_transport *t, const void *sbuf,
                                           void *rbuf, size_t count, redcoll_dtype dtype,
                                           int root, const redcoll_options *opts);

/*
Returns on every rank once every rank has entered it (dissemination: ceil(lg
p) rounds of empty messages).

Parameters
    t       this rank's transport.
    opts    NULL, or the dissemination algorithm.

Return Value
    REDCOLL_OK, or an error as "What every collective shares" lists.

Thread Safety
    One call at a time per transport (see "What every collective shares").
*/
REDCOLL_API redcoll_result redcoll_barrier(const redcoll_transport *t,
                                           const redcoll_options *opts);

/*
Plans a collective (see "Persistent collectives"): redcoll_<coll>_init takes
the arguments of redcoll_<coll> plus `out`, checks them and settles the
algorithm and the scratch; redcoll_plan_run then runs the collective on what
the buffers hold at that moment, as often as wanted.

Parameters
    out     receives the plan, for redcoll_plan_run (or redcoll_plan_start)
            and redcoll_plan_free.
    others  as redcoll_<coll>. The buffers are borrowed for the plan's life
            and each run reads what they hold then (in place: what rbuf
            holds). The count arrays (reduce_scatter's recvcounts,
            allgatherv's counts) are copied at init: later changes to them
            do not reach the plan.

Return Value
    REDCOLL_OK with *out set; otherwise *out = NULL and, as the one-shot
    call's argument checks, REDCOLL_ERR_INVALID_ARG or _UNSUPPORTED with
    nothing touched, or REDCOLL_ERR_OUT_OF_MEMORY. Nothing is sent.

Thread Safety
    As a collective call on t; the plan then runs on one thread at a time.
*/
REDCOLL_API redcoll_result redcoll_allreduce_init(const redcoll_transport *t, const void *sbuf,
                                                  void *rbuf, size_t count, redcoll_dtype dtype,
                                                  redcoll_op op, const redcoll_options *opts,
                                                  redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_reduce_init(const redcoll_transport *t, const void *sbuf,
                                               void *rbuf, size_t count, redcoll_dtype dtype,
                                               redcoll_op op, int root, const redcoll_options *opts,
                                               redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_reduce_scatter_init(const redcoll_transport *t, const void *sbuf,
                                                       void *rbuf, const size_t *recvcounts,
                                                       redcoll_dtype dtype, redcoll_op op,
                                                       const redcoll_options *opts,
                                                       redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_reduce_scatter_block_init(const redcoll_transport *t,
                                                             const void *sbuf, void *rbuf,
                                                             size_t recvcount, redcoll_dtype dtype,
                                                             redcoll_op op,
                                                             const redcoll_options *opts,
                                                             redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_allgather_init(const redcoll_transport *t, const void *sbuf,
                                                  void *rbuf, size_t count, redcoll_dtype dtype,
                                                  const redcoll_options *opts, redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_allgatherv_init(const redcoll_transport *t, const void *sbuf,
                                                   void *rbuf, const size_t *counts,
                                                   redcoll_dtype dtype, const redcoll_options *opts,
                                                   redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_bcast_init(const redcoll_transport *t, void *buf, size_t count,
                                              redcoll_dtype dtype, int root,
                                              const redcoll_options *opts, redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_alltoall_init(const redcoll_transport *t, const void *sbuf,
                                                 void *rbuf, size_t count, redcoll_dtype dtype,
                                                 const redcoll_options *opts, redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_gather_init(const redcoll_transport *t, const void *sbuf,
                                               void *rbuf, size_t count, redcoll_dtype dtype,
                                               int root, const redcoll_options *opts,
                                               redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_scatter_init(const redcoll_transport *t, const void *sbuf,
                                                void *rbuf, size_t count, redcoll_dtype dtype,
                                                int root, const redcoll_options *opts,
                                                redcoll_plan **out);
REDCOLL_API redcoll_result redcoll_barrier_init(const redcoll_transport *t,
                                                const redcoll_options *opts, redcoll_plan **out);

/*
Runs the plan once (see "Persistent collectives"): the collective on what its
buffers hold now. Allocates nothing.

Parameters
    plan    a plan from redcoll_<coll>_init.

Return Value
    As the one-shot call; REDCOLL_ERR_INVALID_ARG for a NULL plan or one
    started (redcoll_plan_start) and not completed since.

Thread Safety
    One thread at a time per plan, and it counts as a call on its transport.
*/
REDCOLL_API redcoll_result redcoll_plan_run(redcoll_plan *plan);

/*
Releases the plan and its scratch, to the allocator it was made with; a
plan started and not completed is completed first.

Parameters
    plan    a plan, or NULL (nothing happens).

Return Value
    None.

Thread Safety
    Not while the plan runs on another thread.
*/
REDCOLL_API void redcoll_plan_free(redcoll_plan *plan);

/*
The algorithm the plan runs, AUTO resolved.

Parameters
    plan    a plan, or NULL.

Return Value
    The algorithm; REDCOLL_ALGO_AUTO for NULL.

Thread Safety
    Thread safe (the plan is not changed).
*/
REDCOLL_API redcoll_algo redcoll_plan_algo(const redcoll_plan *plan);

/*
The scratch the plan holds for its runs.

Parameters
    plan    a plan, or NULL.

Return Value
    Bytes; 0 for NULL or a plan that needs none.

Thread Safety
    Thread safe (the plan is not changed).
*/
REDCOLL_API size_t redcoll_plan_scratch_bytes(const redcoll_plan *plan);

/*
Non-blocking collectives (MPI's MPI_Iallreduce, ..., and MPI-4's MPI_Start)
---------------------------------------------------------------------------
redcoll_i<coll> takes the arguments of redcoll_<coll> plus `req`, checks
them, starts the collective and returns; the application computes, then
completes the request with redcoll_wait (or polls it with redcoll_test) and
releases it with redcoll_request_free. A plan starts with redcoll_plan_start
and completes with redcoll_plan_wait / redcoll_plan_test, as often as
wanted. The results are the blocking call's, bit for bit: each schedule runs
unchanged, as a coroutine that waits where the blocking call would block.

    redcoll_coll_request *req;
    if (redcoll_iallreduce(t, x, sum, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL, &req) == REDCOLL_OK) {
        while (work_left()) { work_a_little(); redcoll_test(req, &done); }
        r = redcoll_wait(req);
        redcoll_request_free(req);
    }

Progress happens inside redcoll_test, redcoll_wait and the starts (and the
plan forms): each moves every request outstanding on the same transport (a
group view's requests count as its parent's) as far as its transfers have
completed. Between those calls nothing advances, so an application that
computes for long should call redcoll_test now and then (every 50 us keeps
a 1 MB allreduce moving). redcoll_wait on the only outstanding request of its
transport finishes it with the transport's blocking calls, as the blocking
collective would (its cost when waited on at once).

Every rank starts the same collectives on a transport in the same order
(blocking and non-blocking calls count in one order, as in MPI; a
non-blocking call never matches a blocking one). Any number of requests may be
outstanding per transport at once, completed in any order. The 3 slot bits
of the tag keep 6 running one-shot requests apart: a start whose slot is
still held by the rank's request six starts before queues the new request,
which a later test, wait or start on the transport begins once the older one
has ended; a start never waits for peers. Started plans (and starts with
redcoll_options.persistent_id) are matched by the order of their inits, not
of their starts (MPI-4's persistent collectives): ranks may start them in
any order (see redcoll_persistent_id for the one limit). The buffers, and the count arrays of the irregular
collectives, belong to the request until it completes: do not read the
output or write the input before. A transport without non-blocking progress
(see redcoll_transport: isend, irecv, waitall, test, nb), or a platform
without coroutines, runs the collective to completion inside the start: the
request is complete when returned. Memory: each running request has a
coroutine stack (REDCOLL_NB_STACK, 64 KiB, of which the schedules touch at
most a few KiB) and its scratch, measured like the blocking call's;
released requests are kept for the next start (up to 16, default allocator
only), so in steady state a start allocates nothing. Plans hold theirs from
init: a plan start never allocates. Details: docs/nonblocking.md.
*/
typedef struct redcoll_coll_request redcoll_coll_request;

/*
Starts a collective (see "Non-blocking collectives"): redcoll_i<coll> takes
the arguments of redcoll_<coll> plus `req`.

Parameters
    req     receives the request, for redcoll_test, redcoll_wait and
            redcoll_request_free.
    others  as redcoll_<coll>; they belong to the request until it completes.

Return Value
    REDCOLL_OK with *req set (a request that may already be complete); else
    *req = NULL and, as the blocking call's argument checks,
    REDCOLL_ERR_INVALID_ARG or _UNSUPPORTED with nothing sent, touched or
    allocated, or REDCOLL_ERR_OUT_OF_MEMORY. The collective's own result
    comes from redcoll_wait or redcoll_test.

Thread Safety
    As a call on t; the request then belongs to t's thread.
*/
REDCOLL_API redcoll_result redcoll_iallreduce(const redcoll_transport *t, const void *sbuf,
                                              void *rbuf, size_t count, redcoll_dtype dtype,
                                              redcoll_op op, const redcoll_options *opts,
                                              redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_ireduce(const redcoll_transport *t, const void *sbuf,
                                           void *rbuf, size_t count, redcoll_dtype dtype,
                                           redcoll_op op, int root, const redcoll_options *opts,
                                           redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_ireduce_scatter(const redcoll_transport *t, const void *sbuf,
                                                   void *rbuf, const size_t *recvcounts,
                                                   redcoll_dtype dtype, redcoll_op op,
                                                   const redcoll_options *opts,
                                                   redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_ireduce_scatter_block(const redcoll_transport *t,
                                                         const void *sbuf, void *rbuf,
                                                         size_t recvcount, redcoll_dtype dtype,
                                                         redcoll_op op, const redcoll_options *opts,
                                                         redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_iallgather(const redcoll_transport *t, const void *sbuf,
                                              void *rbuf, size_t count, redcoll_dtype dtype,
                                              const redcoll_options *opts,
                                              redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_iallgatherv(const redcoll_transport *t, const void *sbuf,
                                               void *rbuf, const size_t *counts,
                                               redcoll_dtype dtype, const redcoll_options *opts,
                                               redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_ibcast(const redcoll_transport *t, void *buf, size_t count,
                                          redcoll_dtype dtype, int root,
                                          const redcoll_options *opts, redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_ialltoall(const redcoll_transport *t, const void *sbuf,
                                             void *rbuf, size_t count, redcoll_dtype dtype,
                                             const redcoll_options *opts,
                                             redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_igather(const redcoll_transport *t, const void *sbuf,
                                           void *rbuf, size_t count, redcoll_dtype dtype,
                                           int root, const redcoll_options *opts,
                                           redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_iscatter(const redcoll_transport *t, const void *sbuf,
                                            void *rbuf, size_t count, redcoll_dtype dtype,
                                            int root, const redcoll_options *opts,
                                            redcoll_coll_request **req);
REDCOLL_API redcoll_result redcoll_ibarrier(const redcoll_transport *t,
                                            const redcoll_options *opts,
                                            redcoll_coll_request **req);

/*
Moves the requests outstanding on req's transport along (see "Non-blocking
collectives") and says whether req has completed.

Parameters
    req     a request from redcoll_i<coll>.
    done    receives 1 once req has completed, else 0.

Return Value
    With *done 1: the collective's result, as the blocking call would return
    it (again on every later call). With *done 0: REDCOLL_OK.
    REDCOLL_ERR_INVALID_ARG for a NULL req or done.

Thread Safety
    As a call on req's transport.
*/
REDCOLL_API redcoll_result redcoll_test(redcoll_coll_request *req, int *done);

/*
Completes req, moving the other requests of its transport along while it
waits.

Parameters
    req     a request from redcoll_i<coll>.

Return Value
    The collective's result, as the blocking call would return it (again for
    a request already complete); REDCOLL_ERR_INVALID_ARG for NULL.

Thread Safety
    As a call on req's transport.
*/
REDCOLL_API redcoll_result redcoll_wait(redcoll_coll_request *req);

/*
Releases req; a request still running is completed first (its peers rely on
it).

Parameters
    req     a request, or NULL (nothing happens).

Return Value
    None.

Thread Safety
    As a call on req's transport.
*/
REDCOLL_API void redcoll_request_free(redcoll_coll_request *req);

/*
Starts the plan (MPI_Start): as redcoll_plan_run, but returns once the
collective is under way.

Parameters
    plan    a plan from redcoll_<coll>_init, not started or completed since.

Return Value
    REDCOLL_OK; REDCOLL_ERR_INVALID_ARG for NULL or a plan still running.
    The collective's result comes from redcoll_plan_wait or redcoll_plan_test.

Thread Safety
    As a call on the plan's transport.

Remarks
    Allocates nothing. On a transport without non-blocking progress the run
    happens here.
*/
REDCOLL_API redcoll_result redcoll_plan_start(redcoll_plan *plan);

/*
Takes the next persistent id of a transport, for a persistent request made
outside redcoll's plans (an MPI drop-in's MPI_<coll>_init): each start of
that request passes it in redcoll_options.persistent_id, so the ranks' starts
match by the order in which they took their ids, whatever order they start
them in. Plans take theirs in redcoll_<coll>_init.

Parameters
    t       the transport the request's collectives run on.

Return Value
    The id (1, 2, ...), or 0 for NULL or a transport without non-blocking
    progress (redcoll_transport.nb NULL).

Thread Safety
    As a call on t.

Remarks
    Every rank takes ids for the same requests in the same order. Ids are
    carried modulo 64 (the tag's bits 16-21): two persistent requests whose
    ids differ by a multiple of 64 and that are active at once run one after
    the other on each rank (the second start queues), so they must be
    started in the same order on every rank; any other pair may be started
    in any order.
*/
REDCOLL_API long long redcoll_persistent_id(const redcoll_transport *t);

/*
As redcoll_test, for a started plan.

Parameters
    plan    a plan.
    done    receives 1 once the start has completed (a plan not started: 1).

Return Value
    With *done 1: the last run's or start's result (REDCOLL_OK if none).
    With *done 0: REDCOLL_OK. REDCOLL_ERR_INVALID_ARG for NULL arguments.

Thread Safety
    As a call on the plan's transport.
*/
REDCOLL_API redcoll_result redcoll_plan_test(redcoll_plan *plan, int *done);

/*
As redcoll_wait, for a started plan.

Parameters
    plan    a plan.

Return Value
    The start's result (a plan not started: the last run's, or REDCOLL_OK);
    REDCOLL_ERR_INVALID_ARG for NULL.

Thread Safety
    As a call on the plan's transport.
*/
REDCOLL_API redcoll_result redcoll_plan_wait(redcoll_plan *plan);

#ifdef __cplusplus
}
#endif
#endif /* REDCOLL_H */

/* ======================================================================== */
/*                              IMPLEMENTATION                              */
/* ======================================================================== */
#ifdef REDCOLL_IMPLEMENTATION
#ifndef REDCOLL_IMPLEMENTATION_DONE
#define REDCOLL_IMPLEMENTATION_DONE

#include <float.h>
#include <string.h>
#include <stdlib.h>

#ifndef REDCOLL_ASSERT
#include <assert.h>
#define REDCOLL_ASSERT(x) assert(x)
#endif
#if defined(REDCOLL_MALLOC) && !defined(REDCOLL_FREE)
#error "redcoll.h: REDCOLL_MALLOC is defined without REDCOLL_FREE: define both or neither"
#endif
#if defined(REDCOLL_FREE) && !defined(REDCOLL_MALLOC)
#error "redcoll.h: REDCOLL_FREE is defined without REDCOLL_MALLOC: define both or neither"
#endif
#ifndef REDCOLL_MALLOC
#define REDCOLL_MALLOC(bytes) malloc(bytes)
#define REDCOLL_FREE(ptr) free(ptr)
#endif
#ifndef REDCOLL_MEMCPY
#define REDCOLL_MEMCPY(dst, src, bytes) memcpy(dst, src, bytes)
#endif
#ifndef REDCOLL_MEMMOVE
#define REDCOLL_MEMMOVE(dst, src, bytes) memmove(dst, src, bytes)
#endif
#ifndef REDCOLL_MEMSET
#define REDCOLL_MEMSET(dst, byte, bytes) memset(dst, byte, bytes)
#endif

#define redcoll__def(v, d) ((v) ? (v) : (d))

/* ==== 5. Context [SECTION:context] ========================================= */

typedef void (*redcoll__kernel)(const void *lo, const void *hi, void *out, size_t n);

/* The scratch of one call, carved from one block (a plan's, or the
   transport's `scratch`) by a bump pointer that a free of the top block
   moves back. A schedule's allocations depend only on (p, rank, counts,
   options), so a pass that only measures (`measure`: vectors get addresses
   that are never touched, control data -- index arrays, requests -- real
   memory from the allocator) replays the exact sequence and its high-water
   mark `peak` is exactly what a run needs. An allocation that would not fit
   (never, after a measuring pass) falls back to the allocator. Control data
   of a measuring pass comes from `ctl` (a block on the measurer's stack)
   while it lasts, so measuring allocates nothing either for p up to a few
   hundred. */
typedef struct redcoll__arena {
    char  *base;
    size_t cap, top, peak;
    int    measure;
    char  *ctl;
    size_t ctl_cap, ctl_top;
} redcoll__arena;

#define REDCOLL__ARENA_ALIGN ((size_t)64) /* a cache line: vectors never share one */

/* An empty measuring arena whose control data comes from ctl (cap bytes). */
static void redcoll__arena_measuring(redcoll__arena *a, char *ctl, size_t cap) {
    a->base = NULL;
    a->cap = a->top = a->peak = 0;
    a->measure = 1;
    a->ctl = ctl; a->ctl_cap = cap; a->ctl_top = 0;
}

/* Two levels: how the ranks sit on nodes, as the cost model sees them. */
typedef struct redcoll__shape {
    int nodes;      /* <= 1: one node, one level */
    int kmax, kmin; /* ranks on the largest and on the smallest node */
} redcoll__shape;

/* Everything a schedule needs about one call. Transport failures are latched
   in `err`: later calls become no-ops, so a schedule reads as straight-line
   code and returns c->err (STYLE: record the error, release the peers). */
typedef struct redcoll__ctx {
    const redcoll_transport *t;
    int             rank, size;
    redcoll_coll    coll;    /* the collective running */
    redcoll_dtype   dtype;
    size_t          esize;   /* bytes per element */
    redcoll_op      op;
    redcoll__kernel kernel;  /* predefined ops; NULL for user ops */
    const struct redcoll__row *inner, *outer, *down; /* hierarchical: the levels' rows, from setup */
    redcoll__shape  shape;   /* the nodes as AUTO prices them; nodes <= 1: one level */
    int             tag;
    int             dry;     /* transport moves no data */
    redcoll__arena *arena;   /* NULL: scratch straight from the allocator */
    redcoll_result  err;
    redcoll_options o;       /* resolved; last: setup writes it whole and zeroes the rest */
} redcoll__ctx;

/* Arguments of a schedule, as redcoll__setup resolved them ([SECTION:setup]).
   `sbuf` is the resolved input: never REDCOLL_IN_PLACE (rbuf itself for an
   in-place allreduce). */
typedef struct redcoll__args {
    const void   *sbuf;
    void         *rbuf;
    size_t        count;   /* the vector, or one block (gather, scatter, allgather, alltoall) */
    const size_t *counts;  /* irregular collectives: per-rank element counts */
    const size_t *displs;  /* irregular collectives: their p + 1 prefix sums */
    int           root;
    int           in_place;
    int           variant; /* the row's variant: which member of a family runs */
} redcoll__args;

typedef redcoll_result (*redcoll__schedule)(redcoll__ctx *c, const redcoll__args *a);
typedef struct redcoll__cost_in redcoll__cost_in; /* [SECTION:context], cost terms */
typedef double (*redcoll__pricer)(const redcoll__cost_in *in);

/* A row of the algorithm list ([SECTION:options]), as the registry holds it. */
typedef struct redcoll__row {
    redcoll_algo_info info;   /* coll, algo, keeps_order, paper */
    redcoll__schedule run;
    redcoll__pricer   cost;   /* its modeled time (the cost column; [SECTION:cost]) */
    int               variant;
    unsigned          knobs;  /* REDCOLL__KNOB_* */
} redcoll__row;

/* The list's variant column: which member of a family a row runs. */
enum {
    REDCOLL__VARIANT_PLAIN = 0,
    REDCOLL__VARIANT_WHOLE = 0, REDCOLL__VARIANT_PIPELINED = 1,   /* chain: one piece, in chunks */
    REDCOLL__VARIANT_HEAP = 0, REDCOLL__VARIANT_IN_ORDER = 1,     /* pipelined binary trees */
    REDCOLL__VARIANT_DOUBLING = 0, REDCOLL__VARIANT_RING = 1,     /* bcast: allgather after the scatter */
    REDCOLL__VARIANT_BUTTERFLY = 0, REDCOLL__VARIANT_OVERLAP = 1, /* Rabenseifner & Traeff plans */
    REDCOLL__VARIANT_NONOVERLAP = 2, REDCOLL__VARIANT_FACTORS = 3
};

/* The tag of a call (REDCOLL_TAG_MAX above): bits 0-5 the group view's tag
   space (0: the transport itself), bits 6-12 1 + the row of the algorithm
   list, bits 13-15 the slot, bits 16-27 a hash of the call's parameters
   (redcoll__call_tag). */
#define REDCOLL__TAG_VIEW_MASK  63
#define REDCOLL__TAG_HASH_SHIFT 16
#define REDCOLL__TAG_HASH_MASK  0xfff

/* The list's order and knobs columns. */
#define REDCOLL__ORDER_ORDERED     1
#define REDCOLL__ORDER_COMMUTATIVE 0
#define REDCOLL__KNOB_NONE         0u
#define REDCOLL__KNOB_SEGMENT      1u /* opts.segment_bytes */
#define REDCOLL__KNOB_THRESHOLD    2u /* opts.threshold_bytes and opts.model */
#define REDCOLL__KNOB_LEVELS       4u /* opts.groups, by_node, inner_algo, outer_algo */
#define REDCOLL__KNOB_NODES        8u /* the nodes and the model (each level's row is AUTO's for it) */

static const redcoll__row *redcoll__find(redcoll_coll coll, redcoll_algo algo);
static int redcoll__transport_ok(const redcoll_transport *t);

static char *redcoll__at(const redcoll__ctx *c, const void *buf, size_t elem) {
    return (char *)buf + elem * c->esize;
}

static void redcoll__fail(redcoll__ctx *c, redcoll_result r) {
    if (c->err != REDCOLL_OK || r == REDCOLL_OK) return;
    c->err = r;
    if (c->t->abort) c->t->abort(c->t->user, r);
}

/* Every point-to-point message of a schedule goes through redcoll__transfer
   (receive-and-reduce block below), which cuts it into chunks on transports
   without recv_reduce. */
static void redcoll__transfer(redcoll__ctx *c, int dst, const void *sbuf, size_t sn, int src,
                              void *rbuf, size_t rn, const void *own, void *out, int msg_lower);

static void redcoll__send(redcoll__ctx *c, int dst, const void *buf, size_t n) {
    redcoll__transfer(c, dst, buf, n, -1, NULL, 0, NULL, NULL, 0);
}

static void redcoll__recv(redcoll__ctx *c, int src, void *buf, size_t n) {
    redcoll__transfer(c, -1, NULL, 0, src, buf, n, NULL, NULL, 0);
}

static void redcoll__sendrecv(redcoll__ctx *c, int dst, const void *sbuf, size_t sn,
                              int src, void *rbuf, size_t rn) {
    redcoll__transfer(c, dst, sbuf, sn, src, rbuf, rn, NULL, NULL, 0);
}

static void redcoll__copy(const redcoll__ctx *c, void *dst, const void *src, size_t n) {
    if (c->dry || dst == src || n == 0) return;
    REDCOLL_MEMCPY(dst, src, n * c->esize);
}

/* As redcoll__copy, for ranges that may overlap. */
static void redcoll__move(const redcoll__ctx *c, void *dst, const void *src, size_t n) {
    if (c->dry || dst == src || n == 0) return;
    REDCOLL_MEMMOVE(dst, src, n * c->esize);
}

/* Exchanges len bytes of a and b (disjoint) through a small stack buffer:
   memcpy speed, where a byte loop ran several times slower. */
static void redcoll__swap_bytes(unsigned char *a, unsigned char *b, size_t len) {
    unsigned char t[256];
    while (len) {
        size_t m = len < sizeof t ? len : sizeof t;
        REDCOLL_MEMCPY(t, a, m);
        REDCOLL_MEMCPY(a, b, m);
        REDCOLL_MEMCPY(b, t, m);
        a += m, b += m, len -= m;
    }
}

/* Rotates n elements left by k in place, no scratch: element k moves to the
   front. Block swaps (Gries and Mills): each swap puts the shorter side in
   its final place, so every byte moves about once, at memcpy speed. */
static void redcoll__rotate(const redcoll__ctx *c, void *buf, size_t n, size_t k) {
    unsigned char *b = (unsigned char *)buf;
    size_t left, right;
    if (c->dry || n == 0 || k % n == 0) return;
    left = k % n * c->esize, right = (n - k % n) * c->esize;
    while (left && right) {
        if (left <= right) { /* [A B1 B2], |B1| = |A|: B1 is final */
            redcoll__swap_bytes(b, b + left, left);
            b += left, right -= left;
        } else { /* [A1 A2 B], |A2| = |B|: A2 is final */
            redcoll__swap_bytes(b + left - right, b + left, right);
            left -= right;
        }
    }
}

/* Exchanges n elements of x and y (disjoint) in place. */
static void redcoll__swap(const redcoll__ctx *c, void *x, void *y, size_t n) {
    if (c->dry) return;
    redcoll__swap_bytes((unsigned char *)x, (unsigned char *)y, n * c->esize);
}

/* Raw memory from an allocator (all NULL: REDCOLL_MALLOC / REDCOLL_FREE). */
static void *redcoll__mem_alloc(const redcoll_allocator *a, size_t bytes) {
    return a->alloc_fn ? a->alloc_fn(bytes, a->user_data) : REDCOLL_MALLOC(bytes);
}

static void redcoll__mem_free(const redcoll_allocator *a, void *p) {
    if (a->alloc_fn) a->free_fn(p, a->user_data); else REDCOLL_FREE(p);
}

static size_t redcoll__align_up(size_t x) {
    return (x + REDCOLL__ARENA_ALIGN - 1) & ~(REDCOLL__ARENA_ALIGN - 1);
}

/* A measuring pass hands out addresses past this byte for vectors: distinct
   per allocation, never dereferenced (the pass moves no data). */
static char redcoll__measure_base[1];

/* Takes `bytes` from the arena; `data`: a vector (1) or control data (0).
   NULL when it does not fit. While measuring, control data is real memory
   with its arena offset stored in front, so it can be freed in order. */
static void *redcoll__arena_take(redcoll__ctx *c, size_t bytes, int data) {
    redcoll__arena *A = c->arena;
    size_t off = A->top;
    if (A->measure) {
        A->top = redcoll__align_up(off + bytes);
        if (A->top > A->peak) A->peak = A->top;
        if (data) return redcoll__measure_base + off;
        {
            size_t whole = redcoll__align_up(bytes) + REDCOLL__ARENA_ALIGN;
            char *p;
            if (A->ctl && whole <= A->ctl_cap - A->ctl_top) { p = A->ctl + A->ctl_top; A->ctl_top += whole; }
            else p = (char *)redcoll__mem_alloc(&c->o.allocator, whole);
            if (!p) { A->top = off; return NULL; }
            REDCOLL_MEMCPY(p, &off, sizeof off);
            return p + REDCOLL__ARENA_ALIGN;
        }
    }
    if (off > A->cap || bytes > A->cap - off) return NULL;
    A->top = redcoll__align_up(off + bytes);
    return A->base + off;
}

/* Gives back an allocation of the arena; returns 0 when p is not one. */
static int redcoll__arena_give(redcoll__ctx *c, void *p, size_t bytes, int data) {
    redcoll__arena *A = c->arena;
    size_t off;
    if (A->measure) {
        if (data) off = (size_t)((char *)p - redcoll__measure_base);
        else {
            char *q = (char *)p - REDCOLL__ARENA_ALIGN; /* ctl blocks go with the pass */
            REDCOLL_MEMCPY(&off, q, sizeof off);
            if (!A->ctl || q < A->ctl || q >= A->ctl + A->ctl_cap) redcoll__mem_free(&c->o.allocator, q);
        }
    } else {
        if (!A->base || (char *)p < A->base || (char *)p >= A->base + A->cap) return 0;
        off = (size_t)((char *)p - A->base);
    }
    if (redcoll__align_up(off + bytes) == A->top) A->top = off; /* the top block: reuse it */
    return 1;
}

/* Scratch of `bytes`: from the call's arena when it has one, else (or when
   the arena is full) from the user's allocator; NULL latches out-of-memory.
   Index arrays and request lists use it directly (`data` 0), vectors via
   redcoll__alloc. */
static void *redcoll__scratch(redcoll__ctx *c, size_t bytes, int data) {
    void *p = NULL;
    if (c->err) return NULL;
    if (bytes == 0) bytes = 1;
    if (c->arena) p = redcoll__arena_take(c, bytes, data);
    if (!p && (!c->arena || !c->arena->measure)) p = redcoll__mem_alloc(&c->o.allocator, bytes);
    if (!p) { redcoll__fail(c, REDCOLL_ERR_OUT_OF_MEMORY); return NULL; }
    if (c->t->on_scratch) c->t->on_scratch(c->t->user, (long long)bytes);
    return p;
}

static void redcoll__unscratch(redcoll__ctx *c, void *p, size_t bytes, int data) {
    if (!p) return;
    if (bytes == 0) bytes = 1;
    if (c->t->on_scratch) c->t->on_scratch(c->t->user, -(long long)bytes);
    if (!c->arena || !redcoll__arena_give(c, p, bytes, data)) redcoll__mem_free(&c->o.allocator, p);
}

static void *redcoll__alloc_bytes(redcoll__ctx *c, size_t bytes) { return redcoll__scratch(c, bytes, 0); }
static void redcoll__free_bytes(redcoll__ctx *c, void *p, size_t bytes) { redcoll__unscratch(c, p, bytes, 0); }

/* Scratch of n elements. */
static void *redcoll__alloc(redcoll__ctx *c, size_t n) { return redcoll__scratch(c, n * c->esize, 1); }
static void redcoll__free(redcoll__ctx *c, void *p, size_t n) { redcoll__unscratch(c, p, n * c->esize, 1); }

/* Non-blocking transfers (optional vtable entries; callers check t->isend).
   A request is kept only when posting worked; redcoll__waitall waits for
   the posted ones even after an error, so the transport can release them. */
static void redcoll__ipost(redcoll__ctx *c, int is_send, int peer, void *buf, size_t n,
                           redcoll_request *reqs, int *nreq) {
    redcoll_result r;
    if (c->err) return;
    r = is_send ? c->t->isend(c->t->user, peer, buf, n * c->esize, c->tag, &reqs[*nreq])
                : c->t->irecv(c->t->user, peer, buf, n * c->esize, c->tag, &reqs[*nreq]);
    if (r == REDCOLL_OK) ++*nreq; else redcoll__fail(c, r);
}

static void redcoll__waitall(redcoll__ctx *c, redcoll_request *reqs, int nreq) {
    if (nreq > 0) redcoll__fail(c, c->t->waitall(c->t->user, nreq, reqs));
}

static void redcoll__account(redcoll__ctx *c, size_t n) {
    if (c->t->on_compute) c->t->on_compute(c->t->user, n, n * c->esize);
}

/* out = lo op hi over n elements, lo being the lower ranks' operand; out
   may be lo or hi (or neither, disjoint from both). No accounting. With
   `hi_scratch` hi may be clobbered, which a non-commutative user op that
   writes into lo needs; without it that one case returns 0 (nothing done). */
static int redcoll__combine(const redcoll__ctx *c, const void *lo, const void *hi, void *out,
                            size_t n, int hi_scratch) {
    if (c->kernel) { c->kernel(lo, hi, out, n); return 1; }
    if (out == hi) { c->op.fn(lo, out, n, c->op.user); return 1; }
    if (out == lo) {
        if (c->op.commutative) { c->op.fn(hi, out, n, c->op.user); return 1; }
        if (!hi_scratch) return 0;
        c->op.fn(lo, (void *)(size_t)hi, n, c->op.user); /* hi is the caller's scratch */
        REDCOLL_MEMCPY(out, hi, n * c->esize);
        return 1;
    }
    REDCOLL_MEMCPY(out, hi, n * c->esize);
    c->op.fn(lo, out, n, c->op.user);
    return 1;
}

/* The local reductions: out = lo op hi, counted for the simulator. */
static void redcoll__reduce3(redcoll__ctx *c, const void *lo, const void *hi, void *out, size_t n,
                             int hi_scratch) {
    if (c->err || n == 0) return;
    redcoll__account(c, n);
    if (c->dry) return;
    redcoll__combine(c, lo, hi, out, n, hi_scratch);
}

/* Named by where the result goes; both take the operand of the lower ranks
   first. reduce_hi: higher = lower op higher. */
static void redcoll__reduce_hi(redcoll__ctx *c, const void *lower, void *higher, size_t n) {
    redcoll__reduce3(c, lower, higher, higher, n, 0);
}

/* reduce_lo: lower = lower op higher; `higher` may be clobbered (a
   non-commutative user op computes into it and copies back). */
static void redcoll__reduce_lo(redcoll__ctx *c, void *lower, void *higher, size_t n) {
    redcoll__reduce3(c, lower, higher, lower, n, 1);
}

/* ---- receive-and-reduce -------------------------------------------------------
   "Receive a message, reduce it with `own` into `out`" in one building block.
   With the transport's recv_reduce / sendrecv_reduce the message is reduced
   where it is (the threads transport: straight from the sender's buffer,
   one pass, nothing staged); where the fused form may not run (out
   overlapping what this rank sends while the partner may still read it, or
   a non-commutative user op that would have to write into own in place from
   a read-only message) it lands whole in `tmp` and is reduced from there.

   Without the fused entries (MPI, user transports) the library cuts every
   point-to-point message longer than opts.chunk_bytes into messages of that
   size (whole elements; the last one shorter), in send, recv and sendrecv
   alike, so both ends agree on the cut from the message size alone. A
   receive-and-reduce then lands chunk i in `tmp` and reduces it while it is
   in cache, before chunk i + 1 moves: the staging scratch is one chunk
   (redcoll__stage_len), not a vector. A transfer of sn and rn elements runs
   max(chunks) steps; step i moves chunk i of each direction that has one
   (a sendrecv while both have, then the sends or receives of the longer
   one). Step i of a rank depends only on its peers' step i of the matching
   transfer, whose chunk counts are equal, so what completed under
   rendezvous sends whole (exchanges, rings, trees) completes chunked, with
   the same tag. A 0-element message stays one empty message. The simulator
   has recv_reduce, so its counts, formula tests and figures never see a
   cut; schedules see the same messages either way, only more of them.
   Chunk i of `out` is written after chunk i of sbuf has gone, so out may
   be sbuf itself (never a shifted overlap: the schedules have none). own and
   out are equal or disjoint. */
typedef struct redcoll__into {
    const redcoll__ctx *c;
    const char         *own;
    char               *out;
    int                 msg_lower; /* the message is the lower ranks' operand */
} redcoll__into;

static void redcoll__into_piece(void *arg, const void *piece, size_t off, size_t bytes) {
    const redcoll__into *x = (const redcoll__into *)arg;
    size_t n = bytes / x->c->esize;
    if (x->msg_lower) redcoll__combine(x->c, piece, x->own + off, x->out + off, n, 0);
    else redcoll__combine(x->c, x->own + off, piece, x->out + off, n, 0);
}

static int redcoll__overlap(const void *a, size_t an, const void *b, size_t bn) {
    size_t x = (size_t)a, y = (size_t)b;
    return an && bn && x < y + bn && y < x + an;
}

/* Elements per message chunk: opts.chunk_bytes in whole elements on a
   transport without receive-and-reduce, 0 (never cut) with it. */
static size_t redcoll__cut(const redcoll__ctx *c) {
    size_t k;
    if (c->t->recv_reduce) return 0;
    k = c->o.chunk_bytes / c->esize;
    return k ? k : 1;
}

/* Scratch elements that stage a received message of n elements for
   redcoll__sendrecv_reduce: one chunk when messages are cut, else n. */
static size_t redcoll__stage_len(const redcoll__ctx *c, size_t n) {
    size_t k = redcoll__cut(c);
    return k && k < n ? k : n;
}

static size_t redcoll__chunks(size_t n, size_t k) { return n <= k ? 1 : (n + k - 1) / k; }

/* Sends sn elements of sbuf to dst (dst >= 0) while receiving rn elements
   from src (src >= 0), chunk by chunk (see above). With `out`, rbuf is one
   chunk of staging scratch and each received chunk is reduced into out
   (msg_lower: out = msg op own, else own op msg); without, chunks land in
   rbuf at their offsets. */
static void redcoll__transfer(redcoll__ctx *c, int dst, const void *sbuf, size_t sn, int src,
                              void *rbuf, size_t rn, const void *own, void *out, int msg_lower) {
    const redcoll_transport *t = c->t;
    size_t k = redcoll__cut(c), ns, nr, i, es = c->esize;
    if (!k) k = (size_t)-1;
    ns = dst >= 0 ? redcoll__chunks(sn, k) : 0;
    nr = src >= 0 ? redcoll__chunks(rn, k) : 0;
    for (i = 0; (i < ns || i < nr) && !c->err; ++i) {
        size_t off = i * k, sl = i < ns ? (sn - off < k ? sn - off : k) : 0;
        size_t rl = i < nr ? (rn - off < k ? rn - off : k) : 0;
        const char *sp = i < ns ? redcoll__at(c, sbuf, off) : NULL;
        char *rp = i >= nr ? NULL : out ? (char *)rbuf : redcoll__at(c, rbuf, off);
        if (i < ns && i < nr) redcoll__fail(c, t->sendrecv(t->user, dst, sp, sl * es, src, rp, rl * es, c->tag));
        else if (i < ns) redcoll__fail(c, t->send(t->user, dst, sp, sl * es, c->tag));
        else redcoll__fail(c, t->recv(t->user, src, rp, rl * es, c->tag));
        if (!out || i >= nr) continue;
        if (msg_lower) redcoll__reduce3(c, rp, redcoll__at(c, own, off), redcoll__at(c, out, off), rl, 0);
        else redcoll__reduce3(c, redcoll__at(c, own, off), rp, redcoll__at(c, out, off), rl, 1);
    }
}

/* Receives rn elements from src, sending sn elements of sbuf to dst at the
   same time when dst >= 0 (an exchange): out = msg op own (msg_lower) or
   own op msg. tmp: redcoll__stage_len(c, rn) elements. */
static void redcoll__sendrecv_reduce(redcoll__ctx *c, int dst, const void *sbuf, size_t sn, int src,
                                     const void *own, void *out, size_t rn, int msg_lower, void *tmp) {
    const redcoll_transport *t = c->t;
    int fused = dst >= 0 ? t->sendrecv_reduce != NULL : t->recv_reduce != NULL;
    if (c->err) return;
    if (!c->kernel && !c->op.commutative && !msg_lower && own == out) fused = 0;
    if (fused && rn && !redcoll__overlap(out, rn * c->esize, sbuf, sn * c->esize)) {
        redcoll__into x;
        redcoll_consumer k;
        x.c = c; x.own = (const char *)own; x.out = (char *)out; x.msg_lower = msg_lower;
        k.fn = redcoll__into_piece; k.arg = &x; k.unit = c->esize;
        redcoll__fail(c, dst >= 0 ? t->sendrecv_reduce(t->user, dst, sbuf, sn * c->esize, src,
                                                       rn * c->esize, c->tag, &k)
                                  : t->recv_reduce(t->user, src, rn * c->esize, c->tag, &k));
        if (!c->err) redcoll__account(c, rn);
        return;
    }
    redcoll__transfer(c, dst, sbuf, sn, src, tmp, rn, own, out, msg_lower);
}

static void redcoll__recv_reduce(redcoll__ctx *c, int src, const void *own, void *out, size_t rn,
                                 int msg_lower, void *tmp) {
    redcoll__sendrecv_reduce(c, -1, NULL, 0, src, own, out, rn, msg_lower, tmp);
}

/* Small integer helpers shared by the schedules; defined for every int p
   (the selector answers up to INT_MAX, collectives serve up to 2^30). */
static int redcoll__pof2_floor(int p) { int k = 1; while (k <= p / 2) k *= 2; return k; }
static int redcoll__ceil_lg(int p) { int k = 0; while (k < 31 && (1 << k) < p) ++k; return k; }
static int redcoll__floor_lg(int x) { int k = 0; while (x >> (k + 1)) ++k; return k; }

/* Split n elements into `parts` blocks, the first n % parts one larger:
   block i starts at element *off and has *len elements. */
static void redcoll__block(size_t n, int parts, int i, size_t *off, size_t *len) {
    size_t q = n / (size_t)parts, r = n % (size_t)parts, ui = (size_t)i;
    *off = ui * q + (ui < r ? ui : r);
    *len = q + (ui < r ? 1 : 0);
}

/* ---- group views ------------------------------------------------------------
   Each entry translates view ranks to parent ranks, moves the tag into the
   view's space and calls the parent. A rank outside the view fails the call
   as the simulator fails a rank outside the transport. */

/* The tag a view passes to its parent: the low REDCOLL__TAG_VIEW_BITS bits
   name a tag space, the rest pass unchanged. The transport's own traffic is
   space 0; a view of it takes space id + 1 (1..32: distinct ids, distinct
   spaces); a view of a view one of the spaces 1..63 that both ids decide
   (never 0, so never the transport's own; distinct for a view of a and a
   view of b, but it may meet another view's space -- nested views are used
   one at a time, as the hierarchical schedules do). */
static int redcoll__view_tag(const redcoll_group *g, int tag) {
    int s = tag & REDCOLL__TAG_VIEW_MASK;
    s = s == 0 ? g->id + 1 : 1 + (2 * s + g->id) % REDCOLL__TAG_VIEW_MASK;
    return (tag & ~REDCOLL__TAG_VIEW_MASK) | s;
}

static int redcoll__gparent(const redcoll_group *g, int r) {
    if (r < 0 || r >= g->t.size) return -1;
    return g->ranks ? g->ranks[r] : g->first + r;
}

static redcoll_result redcoll__gsend(void *u, int dst, const void *buf, size_t bytes, int tag) {
    const redcoll_group *g = (const redcoll_group *)u;
    int d = redcoll__gparent(g, dst);
    if (d < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->send(g->parent->user, d, buf, bytes, redcoll__view_tag(g, tag));
}

static redcoll_result redcoll__grecv(void *u, int src, void *buf, size_t bytes, int tag) {
    const redcoll_group *g = (const redcoll_group *)u;
    int s = redcoll__gparent(g, src);
    if (s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->recv(g->parent->user, s, buf, bytes, redcoll__view_tag(g, tag));
}

static redcoll_result redcoll__gsendrecv(void *u, int dst, const void *sbuf, size_t sbytes,
                                         int src, void *rbuf, size_t rbytes, int tag) {
    const redcoll_group *g = (const redcoll_group *)u;
    int d = redcoll__gparent(g, dst), s = redcoll__gparent(g, src);
    if (d < 0 || s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->sendrecv(g->parent->user, d, sbuf, sbytes, s, rbuf, rbytes,
                               redcoll__view_tag(g, tag));
}

static void redcoll__gabort(void *u, redcoll_result why) {
    const redcoll_group *g = (const redcoll_group *)u;
    g->parent->abort(g->parent->user, why);
}

static redcoll_result redcoll__gisend(void *u, int dst, const void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    const redcoll_group *g = (const redcoll_group *)u;
    int d = redcoll__gparent(g, dst);
    if (d < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->isend(g->parent->user, d, buf, bytes, redcoll__view_tag(g, tag), req);
}

static redcoll_result redcoll__girecv(void *u, int src, void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    const redcoll_group *g = (const redcoll_group *)u;
    int s = redcoll__gparent(g, src);
    if (s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->irecv(g->parent->user, s, buf, bytes, redcoll__view_tag(g, tag), req);
}

static redcoll_result redcoll__gwaitall(void *u, int count, redcoll_request *reqs) {
    const redcoll_group *g = (const redcoll_group *)u;
    return g->parent->waitall(g->parent->user, count, reqs);
}

static int redcoll__gnode_of(void *u, int rank) {
    const redcoll_group *g = (const redcoll_group *)u;
    int r = redcoll__gparent(g, rank);
    return r < 0 ? -1 : g->parent->node_of(g->parent->user, r);
}

static void redcoll__gon_compute(void *u, size_t elems, size_t bytes) {
    const redcoll_group *g = (const redcoll_group *)u;
    g->parent->on_compute(g->parent->user, elems, bytes);
}

static void redcoll__gon_scratch(void *u, long long delta) {
    const redcoll_group *g = (const redcoll_group *)u;
    g->parent->on_scratch(g->parent->user, delta);
}

static redcoll_result redcoll__grecv_reduce(void *u, int src, size_t bytes, int tag,
                                            const redcoll_consumer *into) {
    const redcoll_group *g = (const redcoll_group *)u;
    int s = redcoll__gparent(g, src);
    if (s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->recv_reduce(g->parent->user, s, bytes, redcoll__view_tag(g, tag), into);
}

static redcoll_result redcoll__gsendrecv_reduce(void *u, int dst, const void *sbuf, size_t sbytes,
                                                int src, size_t rbytes, int tag,
                                                const redcoll_consumer *into) {
    const redcoll_group *g = (const redcoll_group *)u;
    int d = redcoll__gparent(g, dst), s = redcoll__gparent(g, src);
    if (d < 0 || s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->sendrecv_reduce(g->parent->user, d, sbuf, sbytes, s, rbytes,
                                      redcoll__view_tag(g, tag), into);
}

static void *redcoll__gscratch(void *u, size_t bytes) {
    const redcoll_group *g = (const redcoll_group *)u;
    return g->parent->scratch(g->parent->user, bytes);
}

static redcoll_result redcoll__gtest(void *u, int count, redcoll_request *reqs, int *done) {
    const redcoll_group *g = (const redcoll_group *)u;
    return g->parent->test(g->parent->user, count, reqs, done);
}

static redcoll_result redcoll__girecv_reduce(void *u, int src, size_t bytes, int tag,
                                             const redcoll_consumer *into, redcoll_request *req) {
    const redcoll_group *g = (const redcoll_group *)u;
    int s = redcoll__gparent(g, src);
    if (s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->irecv_reduce(g->parent->user, s, bytes, redcoll__view_tag(g, tag), into, req);
}

/* Fills the view (arguments already checked); `me` is the caller's view rank. */
static void redcoll__group_make(redcoll_group *g, const redcoll_transport *parent,
                                const int *ranks, int first, int n, int id, int me) {
    const redcoll_transport *P = parent;
    redcoll_transport *t = &g->t;
    REDCOLL_MEMSET(g, 0, sizeof *g);
    g->parent = parent; g->ranks = ranks; g->first = first;
    g->id = id;
    t->user = g; t->rank = me; t->size = n;
    t->send = redcoll__gsend; t->recv = redcoll__grecv; t->sendrecv = redcoll__gsendrecv;
    t->abort = P->abort ? redcoll__gabort : NULL;
    t->isend = P->isend ? redcoll__gisend : NULL;
    t->irecv = P->irecv ? redcoll__girecv : NULL;
    t->waitall = P->waitall ? redcoll__gwaitall : NULL;
    t->node_of = P->node_of ? redcoll__gnode_of : NULL;
    t->on_compute = P->on_compute ? redcoll__gon_compute : NULL;
    t->on_scratch = P->on_scratch ? redcoll__gon_scratch : NULL;
    t->flags = P->flags;
    t->recv_reduce = P->recv_reduce ? redcoll__grecv_reduce : NULL;
    t->sendrecv_reduce = P->sendrecv_reduce ? redcoll__gsendrecv_reduce : NULL;
    t->scratch = P->scratch ? redcoll__gscratch : NULL;
    t->test = P->test ? redcoll__gtest : NULL;
    t->irecv_reduce = P->irecv_reduce ? redcoll__girecv_reduce : NULL;
    if (P->nb) { g->nb.tag_bits = P->nb->tag_bits; t->nb = &g->nb; }
}

REDCOLL_API void *redcoll_scratch_block_get(redcoll_scratch_block *b, size_t bytes) {
    if (b->ptr && bytes <= b->bytes) return b->ptr;
    redcoll_scratch_block_free(b);
    if (bytes < 64) bytes = 64;
    if (bytes > (size_t)-1 - 63 || !(b->mem = REDCOLL_MALLOC(bytes + 63))) return NULL;
    b->ptr = (void *)(((size_t)b->mem + 63) & ~(size_t)63);
    b->bytes = bytes;
    return b->ptr;
}

REDCOLL_API void redcoll_scratch_block_free(redcoll_scratch_block *b) {
    if (b->mem) REDCOLL_FREE(b->mem);
    b->ptr = b->mem = NULL;
    b->bytes = 0;
}

REDCOLL_API redcoll_result redcoll_group_init(redcoll_group *g, const redcoll_transport *parent,
                                              const int *ranks, int n, int id) {
    int i, j, me = -1;
    if (!g || !redcoll__transport_ok(parent) || !ranks || n < 1 || n > parent->size) return REDCOLL_ERR_INVALID_ARG;
    if (id < 0 || id > REDCOLL_GROUP_MAX_ID) return REDCOLL_ERR_INVALID_ARG;
    for (i = 0; i < n; ++i) {
        if (ranks[i] < 0 || ranks[i] >= parent->size) return REDCOLL_ERR_INVALID_ARG;
        if (ranks[i] == parent->rank) me = i;
        for (j = 0; j < i; ++j)
            if (ranks[j] == ranks[i]) return REDCOLL_ERR_INVALID_ARG;
    }
    if (me < 0) return REDCOLL_ERR_INVALID_ARG;
    redcoll__group_make(g, parent, ranks, 0, n, id, me);
    return REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_group_range(redcoll_group *g, const redcoll_transport *parent,
                                               int first, int n, int id) {
    if (!g || !redcoll__transport_ok(parent) || n < 1 || first < 0 || first > parent->size - n)
        return REDCOLL_ERR_INVALID_ARG;
    if (id < 0 || id > REDCOLL_GROUP_MAX_ID) return REDCOLL_ERR_INVALID_ARG;
    if (parent->rank < first || parent->rank >= first + n) return REDCOLL_ERR_INVALID_ARG;
    redcoll__group_make(g, parent, NULL, first, n, id, parent->rank - first);
    return REDCOLL_OK;
}

/* ---- cost terms ----------------------------------------------------------------
   Every row of the algorithm list has a cost function beside its schedule
   (the list's cost column): the modeled time of one call in the model of
   Rabenseifner 2004 section 3.1 as the simulator (transports/redcoll_mock.h)
   applies it. An exchange (sendrecv) costs alpha + m beta, a one-way message
   f_alpha alpha + m f_beta beta (ua + m ub), a reduction of m bytes m gamma;
   schedules split vectors in whole elements, so the forms count the largest
   piece that lies on the critical path. Where the simulated time has no
   closed form (pipelines filling, recursive doubling off powers of two,
   irregular counts) a walk of the schedule's calls beside its building
   block computes it, up to REDCOLL__WALK_MAX_P ranks; above, and for the
   elimination corner cases, the paper's form stands, and the test
   test_cost_matches_simulator states how far it may be off. The cost model
   section ([SECTION:cost]) fills the terms below and prices rows by replay
   where neither suffices. */
struct redcoll__cost_in {
    int                       p;
    size_t                    n;     /* elements: the vector, or one block (as the selector's bytes) */
    size_t                    esize;
    const redcoll_options    *o;     /* resolved */
    const redcoll_cost_model *m;
    const size_t             *displs; /* allgatherv, reduce_scatter: p + 1 block offsets; NULL: even */
    double                    bound;  /* > 0: a selection, which only wants the rows below it */
    redcoll__shape            shape;  /* the nodes (two levels when nodes > 1 and the
                                         model's inter links differ: redcoll__two_level) */
    int                       noncomm; /* the op is not commutative (rows that run
                                          otherwise for one price it) */
    /* set by redcoll__row_cost before the row's cost function runs */
    const struct redcoll__row *row;
    double a, b, g, ua, ub;  /* alpha, beta, gamma; one-way alpha and beta */
    double ia, ib;           /* between nodes: inter_alpha, inter_beta (the intra ones when 0) */
    int    two;              /* the two-level model applies */
    double br, ubr;          /* beta, one-way beta of a message reduced on arrival: 0 on a
                                transport that reduces from the sender's memory */
    double E, V, seg;        /* bytes: of an element, of the vector, of the largest of p segments */
    int    lg, pof2, k, odd; /* ceil(lg p), 2^floor(lg p), floor(lg p), p != pof2 */
};

static double redcoll__cdiv(size_t n, size_t d) { return (double)((n + d - 1) / d); }

/* Nodes of k consecutive ranks (the last with fewer) among p; k <= 0: none. */
static redcoll__shape redcoll__shape_of(int p, int k) {
    redcoll__shape sh;
    sh.nodes = k > 0 && p > 0 ? (p - 1) / k + 1 : 1;
    sh.kmax = k > 0 && k < p ? k : p;
    sh.kmin = sh.nodes > 1 ? p - (sh.nodes - 1) * k : sh.kmax;
    return sh;
}

/* The links between nodes: inter_alpha, inter_beta, or the intra ones when 0. */
static double redcoll__inter_alpha(const redcoll_cost_model *m) { return m->inter_alpha > 0 ? m->inter_alpha : m->alpha; }
static double redcoll__inter_beta(const redcoll_cost_model *m) { return m->inter_beta > 0 ? m->inter_beta : m->beta; }

/* The model has two levels on these nodes: more than one, and links between
   them that differ from those inside (else it is the one-level model). */
static int redcoll__two_level(const redcoll_cost_model *m, const redcoll__shape *sh) {
    return sh->nodes > 1 && (redcoll__inter_alpha(m) != m->alpha || redcoll__inter_beta(m) != m->beta);
}

/* One level of a two-level model as a one-level model: inside a node, or
   across nodes with `share` messages on each node's link at once (each
   moving at 1 / (share inter_beta)). */
static redcoll_cost_model redcoll__level_model(const redcoll_cost_model *m, int across, int share) {
    redcoll_cost_model l = *m;
    if (across) {
        l.alpha = redcoll__inter_alpha(m);
        l.beta = redcoll__inter_beta(m) * (share > 1 ? share : 1);
    }
    l.inter_alpha = l.inter_beta = 0;
    return l;
}

/* sum_{i=1..k} ceil(n / 2^i) elements: the pieces of a vector halved k times. */
static double redcoll__halves(size_t n, int k) {
    double s = 0;
    int i;
    for (i = 1; i <= k; ++i) s += (double)((n + ((size_t)1 << i) - 1) >> i);
    return s;
}

/* A matched message of n bytes as the simulator times it: an exchange
   (both ends duplex) alpha + n beta, else one way. */
static double redcoll__msg_time(const redcoll_cost_model *m, double n, int exchange) {
    return exchange ? m->alpha + n * m->beta : m->f_alpha * m->alpha + n * m->f_beta * m->beta;
}

/* A pipeline of `hops` links carrying ceil(n / chunk) chunks, each chunk
   costing `per` seconds per byte plus `lat`: the first chunk fills the
   pipe, the others follow one step behind (HL 2.1); the short last chunk
   leaves last. */
static double redcoll__pipe(double hops, size_t n, size_t chunk, double E, double lat, double per) {
    size_t nseg = (n + chunk - 1) / chunk, last = n - (nseg - 1) * chunk;
    return (hops - 2 + (double)nseg) * (lat + (double)chunk * E * per) + lat + (double)last * E * per;
}

/* The exact walks beside the building blocks cost O(p lg p) (recursive
   doubling) or O(p) per chunk until a pipeline is steady: tens of
   microseconds at p = 1024, so above this p the rows keep their closed-form
   estimates (a decision is cached either way). */
#define REDCOLL__WALK_MAX_P 512
#define REDCOLL__WALK2_MAX_P 128 /* the O(p^2) walks: ring allgatherv, pairwise reduce_scatter */

static double redcoll__best_cost(redcoll_coll coll, int p, const redcoll__cost_in *in, int *row_out);

/* ==== 6. Reduction kernels [SECTION:kernels] ============================= */
/* A kernel computes out[i] = lo[i] op hi[i] for i < n, where out is lo, or
   hi, or a third buffer that overlaps neither; any alignment, any n.
   Every (op, type) has a scalar loop: the portable path, the reference and
   the tail of the vector paths. Integer arithmetic goes through the unsigned
   type W, so overflow wraps instead of being undefined. Integer, float and
   double kernels need no alignment (elements move through memcpy, which
   compiles to plain loads); long double and the pairs need their type's. */

#define REDCOLL__KERNEL(OP, SUF, T, WIDE, EXPR)                                     \
    static void redcoll__k_##OP##_##SUF(const void *lo_, const void *hi_, void *out_, \
                                        size_t n) {                                  \
        typedef WIDE W;                                                              \
        const char *lo = (const char *)lo_; const char *hi = (const char *)hi_;      \
        char *out = (char *)out_; size_t i;                                          \
        for (i = 0; i < n * sizeof(T); i += sizeof(T)) {                             \
            T a, b, r;                                                               \
            memcpy(&a, lo + i, sizeof a); memcpy(&b, hi + i, sizeof b);              \
            r = (T)(W)(EXPR);                                                        \
            memcpy(out + i, &r, sizeof r);                                           \
        }                                                                            \
    }
/* x87's long double holds 10 value bytes in 12 or 16; a typed store leaves
   the rest as it was, so the kernel zeroes them: a result never carries the
   stale bytes of the buffer it lands in (fresh scratch, say) to another rank. */
#if LDBL_MANT_DIG == 64
#define REDCOLL__LDBL_VALUE_BYTES 10
#else
#define REDCOLL__LDBL_VALUE_BYTES sizeof(long double)
#endif
#define REDCOLL__KERNEL_F80(OP, EXPR)                                                \
    static void redcoll__k_##OP##_f80(const void *lo_, const void *hi_, void *out_,  \
                                      size_t n) {                                    \
        const long double *lo = (const long double *)lo_;                           \
        const long double *hi = (const long double *)hi_;                           \
        long double *out = (long double *)out_; size_t i;                            \
        for (i = 0; i < n; ++i) {                                                    \
            long double a = lo[i], b = hi[i];                                        \
            out[i] = EXPR;                                                           \
            REDCOLL_MEMSET((char *)(out + i) + REDCOLL__LDBL_VALUE_BYTES, 0,         \
                           sizeof(long double) - REDCOLL__LDBL_VALUE_BYTES);         \
        }                                                                            \
    }

#define REDCOLL__INT_TYPES(X, OP, EXPR)                                      \
    X(OP, i8, int8_t, unsigned, EXPR)    X(OP, u8, uint8_t, unsigned, EXPR)   \
    X(OP, i16, int16_t, unsigned, EXPR)  X(OP, u16, uint16_t, unsigned, EXPR) \
    X(OP, i32, int32_t, uint32_t, EXPR)  X(OP, u32, uint32_t, uint32_t, EXPR) \
    X(OP, i64, int64_t, uint64_t, EXPR)  X(OP, u64, uint64_t, uint64_t, EXPR)
#define REDCOLL__FLOAT_TYPES(X, OP, EXPR)                                    \
    X(OP, f32, float, float, EXPR) X(OP, f64, double, double, EXPR)         \
    REDCOLL__KERNEL_F80(OP, EXPR)

REDCOLL__INT_TYPES(REDCOLL__KERNEL, sum, (W)a + (W)b)
REDCOLL__FLOAT_TYPES(REDCOLL__KERNEL, sum, a + b)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, prod, (W)((W)a * (W)b))
REDCOLL__FLOAT_TYPES(REDCOLL__KERNEL, prod, a * b)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, min, b < a ? b : a)
REDCOLL__FLOAT_TYPES(REDCOLL__KERNEL, min, b < a ? b : a)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, max, b > a ? b : a)
REDCOLL__FLOAT_TYPES(REDCOLL__KERNEL, max, b > a ? b : a)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, land, a != 0 && b != 0)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, lor, a != 0 || b != 0)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, lxor, (a != 0) != (b != 0))
REDCOLL__INT_TYPES(REDCOLL__KERNEL, band, (W)a & (W)b)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, bor, (W)a | (W)b)
REDCOLL__INT_TYPES(REDCOLL__KERNEL, bxor, (W)a ^ (W)b)

/* The exact sum of two ([SECTION:exact]): the correctly rounded sum of two
   floats or doubles is their IEEE sum when it rounds to nearest and neither
   flushes nor reads subnormals as zero; a NaN is made the canonical quiet
   one (bits that, shifted past the sign, exceed infinity's). On x86-64 the
   kernels run with the SSE environment at its default (MXCSR 0x1f80: to
   nearest, no FTZ or DAZ, exceptions masked) and give the caller's back, so
   the caller's FP environment cannot change a bit; there SUM_EXACT at p = 2
   is this kernel inside the ordinary schedules. Elsewhere (no such control
   here) the general method runs at every p, and redcoll_reduce_local adds in
   the caller's environment. FLT_EVAL_METHOD 0: no double rounding through
   a wider type. */
#if (defined(__x86_64__) || defined(_M_X64)) && FLT_EVAL_METHOD == 0
#include <xmmintrin.h>
#define REDCOLL__FENV_CONTROL 1
#define REDCOLL__MXCSR_DEFAULT 0x1f80u
#define REDCOLL__MXCSR_FLAGS   0x3fu /* sticky exception flags: left as they are */
/* GCC and Clang get asm with a memory clobber: no load or store of the
   guarded loop moves across it (the intrinsics promise less). */
static unsigned redcoll__mxcsr_get(void) {
    unsigned v;
#if defined(__GNUC__) || defined(__clang__)
    __asm__ __volatile__("stmxcsr %0" : "=m"(v) : : "memory");
#else
    v = _mm_getcsr();
#endif
    return v;
}
static void redcoll__mxcsr_set(unsigned v) {
#if defined(__GNUC__) || defined(__clang__)
    __asm__ __volatile__("ldmxcsr %0" : : "m"(v) : "memory");
#else
    _mm_setcsr(v);
#endif
}
/* Sets the default environment; returns the caller's, for
   redcoll__fenv_restore. */
static unsigned redcoll__fenv_default(void) {
    unsigned old = redcoll__mxcsr_get();
    if ((old & ~REDCOLL__MXCSR_FLAGS) != REDCOLL__MXCSR_DEFAULT)
        redcoll__mxcsr_set(REDCOLL__MXCSR_DEFAULT | (old & REDCOLL__MXCSR_FLAGS));
    return old;
}
static void redcoll__fenv_restore(unsigned old) {
    if ((old & ~REDCOLL__MXCSR_FLAGS) != REDCOLL__MXCSR_DEFAULT) redcoll__mxcsr_set(old);
}
#else
#define REDCOLL__FENV_CONTROL 0
static unsigned redcoll__fenv_default(void) { return 0; }
static void redcoll__fenv_restore(unsigned old) { (void)old; }
#endif
#define REDCOLL__XINF2_f32 0xff000000u             /* infinity's bits << 1 */
#define REDCOLL__XINF2_f64 0xffe0000000000000ull
#define REDCOLL__XQNAN_f32 0x7fc00000u             /* the canonical quiet NaN */
#define REDCOLL__XQNAN_f64 0x7ff8000000000000ull
/* The bits u of a value of format SUF (unsigned type U), a NaN's made the
   canonical quiet NaN's. */
#define REDCOLL__XCANON(SUF, U, u) ((U)((u) << 1) > REDCOLL__XINF2_##SUF ? (U)REDCOLL__XQNAN_##SUF : (u))
#define REDCOLL__XADD(SUF, T, U)                                                          \
    static T redcoll__xadd_##SUF(T a, T b) {                                              \
        T s = a + b;                                                                      \
        U u;                                                                              \
        memcpy(&u, &s, sizeof u);                                                         \
        u = REDCOLL__XCANON(SUF, U, u);                                                   \
        memcpy(&s, &u, sizeof u);                                                         \
        return s;                                                                         \
    }
REDCOLL__XADD(f32, float, uint32_t)
REDCOLL__XADD(f64, double, uint64_t)
REDCOLL__KERNEL(xsum, f32, float, float, redcoll__xadd_f32(a, b))
REDCOLL__KERNEL(xsum, f64, double, double, redcoll__xadd_f64(a, b))
/* Kernel P##xsum_SUF inside the default environment: redcoll__kxP##xsum_SUF. */
#define REDCOLL__XSUM_GUARD(P, SUF)                                                      \
    static void redcoll__kx##P##xsum_##SUF(const void *lo, const void *hi, void *out,      \
                                           size_t n) {                                   \
        unsigned env_ = redcoll__fenv_default();                                         \
        redcoll__k##P##xsum_##SUF(lo, hi, out, n);                                       \
        redcoll__fenv_restore(env_);                                                     \
    }
REDCOLL__XSUM_GUARD(_, f32)
REDCOLL__XSUM_GUARD(_, f64)

/* MINLOC/MAXLOC: the better value wins; a tie keeps the smaller index. The
   winner is copied whole, padding included (a struct assignment may copy
   only the members), and only the index is stored after it. */
#define REDCOLL__LOC_KERNEL(OP, SUF, T, BETTER)                                     \
    static void redcoll__k_##OP##_##SUF(const void *lo_, const void *hi_, void *out_, \
                                        size_t n) {                                  \
        const T *lo = (const T *)lo_; const T *hi = (const T *)hi_;                  \
        T *out = (T *)out_; size_t i;                                                \
        for (i = 0; i < n; ++i) {                                                    \
            const T *win = hi[i].v BETTER lo[i].v ? hi + i : lo + i;                 \
            int index = win->i;                                                      \
            if (win == lo + i && !(lo[i].v BETTER hi[i].v) && hi[i].i < index)       \
                index = hi[i].i;                                                     \
            if (win != out + i) REDCOLL_MEMCPY(out + i, win, sizeof(T));             \
            out[i].i = index;                                                        \
        }                                                                            \
    }
#define REDCOLL__PAIR_TYPES(X, OP, BETTER)                                         \
    X(OP, fi, redcoll_float_int, BETTER)  X(OP, di, redcoll_double_int, BETTER)   \
    X(OP, li, redcoll_long_int, BETTER)   X(OP, ii, redcoll_2int, BETTER)         \
    X(OP, si, redcoll_short_int, BETTER)  X(OP, ldi, redcoll_long_double_int, BETTER)
REDCOLL__PAIR_TYPES(REDCOLL__LOC_KERNEL, minloc, <)
REDCOLL__PAIR_TYPES(REDCOLL__LOC_KERNEL, maxloc, >)

/* Case lists of a lookup switch; P is the kernel name prefix (redcoll__k_
   for the scalar loops, redcoll__kN_ for vector level N). */
#define REDCOLL__INT_CASES(P, OP)                                                     \
    case REDCOLL_INT8: return P##OP##_i8;   case REDCOLL_UINT8: return P##OP##_u8;   \
    case REDCOLL_INT16: return P##OP##_i16; case REDCOLL_UINT16: return P##OP##_u16; \
    case REDCOLL_INT32: return P##OP##_i32; case REDCOLL_UINT32: return P##OP##_u32; \
    case REDCOLL_INT64: return P##OP##_i64; case REDCOLL_UINT64: return P##OP##_u64;
#define REDCOLL__F32_F64_CASES(P, OP)                                                 \
    case REDCOLL_FLOAT: return P##OP##_f32; case REDCOLL_DOUBLE: return P##OP##_f64;
#define REDCOLL__PAIR_CASES(OP)                                                       \
    case REDCOLL_FLOAT_INT: return redcoll__k_##OP##_fi; case REDCOLL_DOUBLE_INT: return redcoll__k_##OP##_di; \
    case REDCOLL_LONG_INT: return redcoll__k_##OP##_li;  case REDCOLL_2INT: return redcoll__k_##OP##_ii;       \
    case REDCOLL_SHORT_INT: return redcoll__k_##OP##_si; case REDCOLL_LONG_DOUBLE_INT: return redcoll__k_##OP##_ldi;

/* The scalar kernel of a predefined op on a type, or NULL where MPI leaves
   it undefined. */
static redcoll__kernel redcoll__kernel_scalar(redcoll_op_kind kind, redcoll_dtype d) {
    switch (kind) {
#define REDCOLL__SCALAR_ARITH(OP)                                                     \
    switch (d) {                                                                      \
    REDCOLL__INT_CASES(redcoll__k_, OP) REDCOLL__F32_F64_CASES(redcoll__k_, OP)       \
    case REDCOLL_LONG_DOUBLE: return redcoll__k_##OP##_f80;                           \
    default: return NULL;                                                             \
    }
    case REDCOLL_OP_SUM:  REDCOLL__SCALAR_ARITH(sum)
    case REDCOLL_OP_PROD: REDCOLL__SCALAR_ARITH(prod)
    case REDCOLL_OP_MIN:  REDCOLL__SCALAR_ARITH(min)
    case REDCOLL_OP_MAX:  REDCOLL__SCALAR_ARITH(max)
#undef REDCOLL__SCALAR_ARITH
    case REDCOLL_OP_LAND: switch (d) { REDCOLL__INT_CASES(redcoll__k_, land) default: return NULL; }
    case REDCOLL_OP_LOR:  switch (d) { REDCOLL__INT_CASES(redcoll__k_, lor)  default: return NULL; }
    case REDCOLL_OP_LXOR: switch (d) { REDCOLL__INT_CASES(redcoll__k_, lxor) default: return NULL; }
    case REDCOLL_OP_BAND: switch (d) { REDCOLL__INT_CASES(redcoll__k_, band) default: return NULL; }
    case REDCOLL_OP_BOR:  switch (d) { REDCOLL__INT_CASES(redcoll__k_, bor)  default: return NULL; }
    case REDCOLL_OP_BXOR: switch (d) { REDCOLL__INT_CASES(redcoll__k_, bxor) default: return NULL; }
    case REDCOLL_OP_MINLOC: switch (d) { REDCOLL__PAIR_CASES(minloc) default: return NULL; }
    case REDCOLL_OP_MAXLOC: switch (d) { REDCOLL__PAIR_CASES(maxloc) default: return NULL; }
    case REDCOLL_OP_SUM_EXACT: switch (d) { REDCOLL__F32_F64_CASES(redcoll__kx_, xsum) default: return NULL; }
    default: return NULL;
    }
}

/* ---- vector kernels ---------------------------------------------------------
   GCC/clang vector extensions: one source for every width, unaligned loads and
   stores through __builtin_memcpy (no aliasing or alignment assumptions), and
   integer lanes computed as unsigned so they wrap. The ops are elementwise, so
   a vector lane computes exactly what the scalar loop computes: min/max blend
   with the mask of the same comparison (b < a ? b : a keeps NaN, -0 and ties
   as the scalar loop does), float sum/prod are single IEEE operations. Each
   step loads lo and hi before it stores out, so out == lo and out == hi are
   exact, and a third buffer overlaps neither by contract.
   Levels: 0 scalar; 1 16-byte vectors (x86-64 SSE2 or AArch64 Advanced SIMD,
   both IEEE in every lane; not 32-bit x87 or ARMv7 NEON, whose float results
   differ from the scalar path); 2 AVX2 and 3 AVX-512 (F, BW, DQ, VL) on x86-64,
   compiled with target attributes and chosen at run time when the CPU has them.
   REDCOLL_NO_SIMD keeps level 0 only. */
enum { REDCOLL__ISA_SCALAR, REDCOLL__ISA_VEC, REDCOLL__ISA_AVX2, REDCOLL__ISA_AVX512,
       REDCOLL__ISA_COUNT };

#if !defined(REDCOLL_NO_SIMD) && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__aarch64__))
#define REDCOLL__SIMD 1
#if defined(__x86_64__) && (defined(__clang__) ? __clang_major__ >= 7 : __GNUC__ >= 7)
#define REDCOLL__SIMD_X86 1
#endif
#endif

#ifdef REDCOLL__SIMD
#ifdef REDCOLL__SIMD_X86
#include <immintrin.h>
#endif
/* Lane types: redcoll__v<bytes><suffix>. */
#define REDCOLL__VTYPES(B)                                                                  \
    typedef int8_t redcoll__v##B##i8 __attribute__((vector_size(B)));                       \
    typedef uint8_t redcoll__v##B##u8 __attribute__((vector_size(B)));                      \
    typedef int16_t redcoll__v##B##i16 __attribute__((vector_size(B)));                     \
    typedef uint16_t redcoll__v##B##u16 __attribute__((vector_size(B)));                    \
    typedef int32_t redcoll__v##B##i32 __attribute__((vector_size(B)));                     \
    typedef uint32_t redcoll__v##B##u32 __attribute__((vector_size(B)));                    \
    typedef int64_t redcoll__v##B##i64 __attribute__((vector_size(B)));                     \
    typedef uint64_t redcoll__v##B##u64 __attribute__((vector_size(B)));                    \
    typedef float redcoll__v##B##f32 __attribute__((vector_size(B)));                       \
    typedef double redcoll__v##B##f64 __attribute__((vector_size(B)));
REDCOLL__VTYPES(16)
#ifdef REDCOLL__SIMD_X86
REDCOLL__VTYPES(32)
REDCOLL__VTYPES(64)
#endif

/* The ops on B-byte lanes a, b (type VT, suffix SUF), result r (VU, the
   unsigned lanes); VS is the signed lane type that comparisons return. */
#define REDCOLL__V_isum(B, SUF, VS, VU, a, b, r) r = (VU)a + (VU)b
#define REDCOLL__V_fsum(B, SUF, VS, VU, a, b, r) r = (VU)(a + b)
#define REDCOLL__V_iprod(B, SUF, VS, VU, a, b, r) r = (VU)a * (VU)b
#define REDCOLL__V_fprod(B, SUF, VS, VU, a, b, r) r = (VU)(a * b)
/* Bytes have no multiply: in each 16-bit lane, x * y keeps the product of
   the low bytes in its low byte, and (x >> 8) * (y & 0xFF00) the product of
   the high bytes in its high byte. */
#define REDCOLL__V_bprod(B, SUF, VS, VU, a, b, r)                                              \
    {                                                                                         \
        redcoll__v##B##u16 x_ = (redcoll__v##B##u16)a, y_ = (redcoll__v##B##u16)b;            \
        r = (VU)(((x_ * y_) & 0xFF) | ((x_ >> 8) * (y_ & 0xFF00)));                           \
    }
#define REDCOLL__V_min(B, SUF, VS, VU, a, b, r) { VS m_ = (VS)(b < a); r = (VU)(((VS)b & m_) | ((VS)a & ~m_)); }
#define REDCOLL__V_max(B, SUF, VS, VU, a, b, r) { VS m_ = (VS)(b > a); r = (VU)(((VS)b & m_) | ((VS)a & ~m_)); }
#define REDCOLL__PASTE_(a, b) a##b
#define REDCOLL__PASTE(a, b) REDCOLL__PASTE_(a, b)
/* Logical ops: the truth of each operand, combined by OPER (& ^), as 1 or
   0 (REDCOLL__VLOG_<B>; 64-byte lanes below); a || b is the truth of a | b,
   one test (REDCOLL__VTRUE_<B>). */
#define REDCOLL__V_land(B, SUF, VS, VU, a, b, r) REDCOLL__PASTE(REDCOLL__VLOG_, B)(SUF, VU, a, b, r, &)
#define REDCOLL__V_lor(B, SUF, VS, VU, a, b, r) \
    { VU o_ = (VU)a | (VU)b; REDCOLL__PASTE(REDCOLL__VTRUE_, B)(SUF, VU, o_, r); }
#define REDCOLL__V_lxor(B, SUF, VS, VU, a, b, r) REDCOLL__PASTE(REDCOLL__VLOG_, B)(SUF, VU, a, b, r, ^)
#define REDCOLL__VLOG_16(SUF, VU, a, b, r, OPER) r = (VU)((a != 0) OPER (b != 0)) & 1
#define REDCOLL__VLOG_32 REDCOLL__VLOG_16
#define REDCOLL__VTRUE_16(SUF, VU, x, r) r = (VU)(x != 0) & 1
#define REDCOLL__VTRUE_32 REDCOLL__VTRUE_16
#define REDCOLL__V_band(B, SUF, VS, VU, a, b, r) r = (VU)a & (VU)b
#define REDCOLL__V_bor(B, SUF, VS, VU, a, b, r) r = (VU)a | (VU)b
#define REDCOLL__V_bxor(B, SUF, VS, VU, a, b, r) r = (VU)a ^ (VU)b
/* The exact sum of two (redcoll__xadd_f64): the sum, NaN lanes replaced. */
#define REDCOLL__V_xsum(B, SUF, VS, VU, a, b, r)                                          \
    {                                                                                     \
        VU s_ = (VU)(a + b), m_ = (VU)((s_ << 1) > REDCOLL__XINF2_##SUF);                 \
        r = (s_ & ~m_) | (m_ & REDCOLL__XQNAN_##SUF);                                     \
    }
#ifdef REDCOLL__SIMD_X86
/* x86's MINPS(x, y) is x < y ? x : y, its second operand on NaN and on
   equal values: MINPS(b, a) is the scalar loop's b < a ? b : a exactly, in
   one instruction where GCC would compare and blend. The 512-bit form is
   the all-lanes masked one: GCC 12's plain _mm512_min_ps warns in C++. */
#define REDCOLL__X86_MIN_16(SUF, x, y) REDCOLL__PASTE(_mm_min_, REDCOLL__X86_##SUF)(x, y)
#define REDCOLL__X86_MIN_32(SUF, x, y) REDCOLL__PASTE(_mm256_min_, REDCOLL__X86_##SUF)(x, y)
#define REDCOLL__X86_MIN_64(SUF, x, y) \
    REDCOLL__PASTE(_mm512_mask_min_, REDCOLL__X86_##SUF)(y, REDCOLL__X86_ALL_##SUF, x, y)
#define REDCOLL__X86_MAX_16(SUF, x, y) REDCOLL__PASTE(_mm_max_, REDCOLL__X86_##SUF)(x, y)
#define REDCOLL__X86_MAX_32(SUF, x, y) REDCOLL__PASTE(_mm256_max_, REDCOLL__X86_##SUF)(x, y)
#define REDCOLL__X86_MAX_64(SUF, x, y) \
    REDCOLL__PASTE(_mm512_mask_max_, REDCOLL__X86_##SUF)(y, REDCOLL__X86_ALL_##SUF, x, y)
#define REDCOLL__X86_f32 ps
#define REDCOLL__X86_f64 pd
#define REDCOLL__X86_ALL_f32 ((__mmask16)0xFFFF)
#define REDCOLL__X86_ALL_f64 ((__mmask8)0xFF)
#define REDCOLL__V_fmin(B, SUF, VS, VU, a, b, r) r = (VU)REDCOLL__X86_MIN_##B(SUF, b, a)
#define REDCOLL__V_fmax(B, SUF, VS, VU, a, b, r) r = (VU)REDCOLL__X86_MAX_##B(SUF, b, a)
/* Integer min/max: one PMIN/PMAX where the level has it (SSE2: int16 and
   uint8; AVX2: 8 to 32 bits; AVX-512: every width), where GCC may build the
   compare-and-blend above from three or four instructions (for the unsigned
   AVX-512 lanes a mask-to-vector move and a VPTERNLOG). A compare into a
   mask and a masked blend (VPCMP + VPBLENDM) is two instructions on the
   critical path where VPMAX is one, and GCC loads lo twice for it (once
   for each). The 512-bit form is the all-lanes masked one, as for floats.
   Equal integers are the same bits, so min(b, a) is the scalar
   loop's b < a ? b : a.
   REDCOLL__X86HAS_<B>_<SUF>: X the intrinsics (REDCOLL__VIMM_<B>), G the
   generic blend. */
#define REDCOLL__X86I_i8 epi8
#define REDCOLL__X86I_u8 epu8
#define REDCOLL__X86I_i16 epi16
#define REDCOLL__X86I_u16 epu16
#define REDCOLL__X86I_i32 epi32
#define REDCOLL__X86I_u32 epu32
#define REDCOLL__X86I_i64 epi64
#define REDCOLL__X86I_u64 epu64
#define REDCOLL__X86W_i8 epi8 /* the lane width alone, for the sign-blind ones */
#define REDCOLL__X86W_u8 epi8
#define REDCOLL__X86W_i16 epi16
#define REDCOLL__X86W_u16 epi16
#define REDCOLL__X86W_i32 epi32
#define REDCOLL__X86W_u32 epi32
#define REDCOLL__X86W_i64 epi64
#define REDCOLL__X86W_u64 epi64
#define REDCOLL__X86K_i8 __mmask64 /* an AVX-512 mask of the lanes */
#define REDCOLL__X86K_u8 __mmask64
#define REDCOLL__X86K_i16 __mmask32
#define REDCOLL__X86K_u16 __mmask32
#define REDCOLL__X86K_i32 __mmask16
#define REDCOLL__X86K_u32 __mmask16
#define REDCOLL__X86K_i64 __mmask8
#define REDCOLL__X86K_u64 __mmask8
#define REDCOLL__X86HAS_16_i8 G
#define REDCOLL__X86HAS_16_u8 X
#define REDCOLL__X86HAS_16_i16 X
#define REDCOLL__X86HAS_16_u16 G
#define REDCOLL__X86HAS_16_i32 G
#define REDCOLL__X86HAS_16_u32 G
#define REDCOLL__X86HAS_16_i64 G
#define REDCOLL__X86HAS_16_u64 G
#define REDCOLL__X86HAS_32_i8 X
#define REDCOLL__X86HAS_32_u8 X
#define REDCOLL__X86HAS_32_i16 X
#define REDCOLL__X86HAS_32_u16 X
#define REDCOLL__X86HAS_32_i32 X
#define REDCOLL__X86HAS_32_u32 X
#define REDCOLL__X86HAS_32_i64 G
#define REDCOLL__X86HAS_32_u64 G
#define REDCOLL__X86HAS_64_i8 X
#define REDCOLL__X86HAS_64_u8 X
#define REDCOLL__X86HAS_64_i16 X
#define REDCOLL__X86HAS_64_u16 X
#define REDCOLL__X86HAS_64_i32 X
#define REDCOLL__X86HAS_64_u32 X
#define REDCOLL__X86HAS_64_i64 X
#define REDCOLL__X86HAS_64_u64 X
#define REDCOLL__V_imin(B, SUF, VS, VU, a, b, r) \
    REDCOLL__PASTE(REDCOLL__VIMM_, REDCOLL__X86HAS_##B##_##SUF)(B, min, SUF, VS, VU, a, b, r)
#define REDCOLL__V_imax(B, SUF, VS, VU, a, b, r) \
    REDCOLL__PASTE(REDCOLL__VIMM_, REDCOLL__X86HAS_##B##_##SUF)(B, max, SUF, VS, VU, a, b, r)
#define REDCOLL__VIMM_G(B, OPN, SUF, VS, VU, a, b, r) REDCOLL__V_##OPN(B, SUF, VS, VU, a, b, r)
#define REDCOLL__VIMM_X(B, OPN, SUF, VS, VU, a, b, r) REDCOLL__VIMM_##B(OPN, SUF, VU, a, b, r)
#define REDCOLL__VIMM_16(OPN, SUF, VU, a, b, r) \
    r = (VU)REDCOLL__PASTE(_mm_##OPN##_, REDCOLL__X86I_##SUF)((__m128i)b, (__m128i)a)
#define REDCOLL__VIMM_32(OPN, SUF, VU, a, b, r) \
    r = (VU)REDCOLL__PASTE(_mm256_##OPN##_, REDCOLL__X86I_##SUF)((__m256i)b, (__m256i)a)
#define REDCOLL__VIMM_64(OPN, SUF, VU, a, b, r)                                            \
    r = (VU)REDCOLL__PASTE(_mm512_mask_##OPN##_, REDCOLL__X86I_##SUF)(                    \
        (__m512i)b, (REDCOLL__X86K_##SUF)-1, (__m512i)b, (__m512i)a)
/* Logical ops on 64-byte lanes: the truths as AVX-512 masks (VPTESTM),
   combined there, and 1 written where the mask is set: what the -O3 loop
   does, where the generic form turns each mask into a vector first. */
#define REDCOLL__X86TEST(SUF, x) \
    REDCOLL__PASTE(REDCOLL__PASTE(_mm512_test_, REDCOLL__X86W_##SUF), _mask)((__m512i)x, (__m512i)x)
#define REDCOLL__VLOG_64(SUF, VU, a, b, r, OPER)                                        \
    r = (VU)REDCOLL__PASTE(_mm512_maskz_set1_, REDCOLL__X86W_##SUF)(                  \
        (REDCOLL__X86K_##SUF)(REDCOLL__X86TEST(SUF, a) OPER REDCOLL__X86TEST(SUF, b)), 1)
#define REDCOLL__VTRUE_64(SUF, VU, x, r) \
    r = (VU)REDCOLL__PASTE(_mm512_maskz_set1_, REDCOLL__X86W_##SUF)(REDCOLL__X86TEST(SUF, x), 1)
#else
#define REDCOLL__V_fmin REDCOLL__V_min
#define REDCOLL__V_fmax REDCOLL__V_max
#define REDCOLL__V_imin REDCOLL__V_min
#define REDCOLL__V_imax REDCOLL__V_max
#endif

/* One B-byte step at byte offset `off` of lo, hi, out. */
#define REDCOLL__VSTEP(B, VOP, SUF, SSUF, USUF, off)                                         \
    {                                                                                         \
        redcoll__v##B##SUF a_, b_; redcoll__v##B##USUF r_;                                   \
        __builtin_memcpy(&a_, lo + (off), B); __builtin_memcpy(&b_, hi + (off), B);          \
        REDCOLL__V_##VOP(B, SUF, redcoll__v##B##SSUF, redcoll__v##B##USUF, a_, b_, r_);      \
        __builtin_memcpy(out + (off), &r_, B);                                                \
    }
/* Four B-byte steps at `off`: every load before any store, as a restrict
   loop would schedule them (each out byte is stored after every load of the
   block, so out == lo and out == hi stay exact). */
#define REDCOLL__VSTEP4(B, VOP, SUF, SSUF, USUF, off)                                        \
    {                                                                                         \
        redcoll__v##B##SUF a0_, a1_, a2_, a3_, b0_, b1_, b2_, b3_;                           \
        redcoll__v##B##USUF r0_, r1_, r2_, r3_;                                              \
        __builtin_memcpy(&a0_, lo + (off), B); __builtin_memcpy(&b0_, hi + (off), B);        \
        __builtin_memcpy(&a1_, lo + (off) + B, B); __builtin_memcpy(&b1_, hi + (off) + B, B); \
        __builtin_memcpy(&a2_, lo + (off) + 2 * B, B);                                        \
        __builtin_memcpy(&b2_, hi + (off) + 2 * B, B);                                        \
        __builtin_memcpy(&a3_, lo + (off) + 3 * B, B);                                        \
        __builtin_memcpy(&b3_, hi + (off) + 3 * B, B);                                        \
        REDCOLL__V_##VOP(B, SUF, redcoll__v##B##SSUF, redcoll__v##B##USUF, a0_, b0_, r0_);   \
        REDCOLL__V_##VOP(B, SUF, redcoll__v##B##SSUF, redcoll__v##B##USUF, a1_, b1_, r1_);   \
        REDCOLL__V_##VOP(B, SUF, redcoll__v##B##SSUF, redcoll__v##B##USUF, a2_, b2_, r2_);   \
        REDCOLL__V_##VOP(B, SUF, redcoll__v##B##SSUF, redcoll__v##B##USUF, a3_, b3_, r3_);   \
        __builtin_memcpy(out + (off), &r0_, B); __builtin_memcpy(out + (off) + B, &r1_, B);  \
        __builtin_memcpy(out + (off) + 2 * B, &r2_, B);                                       \
        __builtin_memcpy(out + (off) + 3 * B, &r3_, B);                                       \
    }
/* What is left after the widest steps: one step of each narrower width, then
   fewer than 16 bytes in the scalar loop. */
#define REDCOLL__VTAIL_16(VOP, SUF, SSUF, USUF)
#define REDCOLL__VTAIL_32(VOP, SUF, SSUF, USUF) \
    if (nb - i >= 16) { REDCOLL__VSTEP(16, VOP, SUF, SSUF, USUF, i) i += 16; }
#define REDCOLL__VTAIL_64(VOP, SUF, SSUF, USUF) \
    if (nb - i >= 32) { REDCOLL__VSTEP(32, VOP, SUF, SSUF, USUF, i) i += 32; } \
    REDCOLL__VTAIL_32(VOP, SUF, SSUF, USUF)

/* The kernel of level L with B-byte lanes: four steps per iteration. */
#define REDCOLL__VKERNEL(L, ATTR, B, OP, VOP, SUF, SSUF, USUF, T)                            \
    static ATTR void redcoll__k##L##_##OP##_##SUF(const void *lo_, const void *hi_,         \
                                                  void *out_, size_t n) {                   \
        const char *lo = (const char *)lo_; const char *hi = (const char *)hi_;             \
        char *out = (char *)out_;                                                           \
        size_t nb = n * sizeof(T), i = 0;                                                   \
        for (; nb - i >= 4 * B; i += 4 * B) REDCOLL__VSTEP4(B, VOP, SUF, SSUF, USUF, i)     \
        for (; nb - i >= B; i += B) REDCOLL__VSTEP(B, VOP, SUF, SSUF, USUF, i)              \
        REDCOLL__VTAIL_##B(VOP, SUF, SSUF, USUF)                                            \
        if (i < nb) redcoll__k_##OP##_##SUF(lo + i, hi + i, out + i, (nb - i) / sizeof(T)); \
    }

/* Every vectorised (op, type) of one level; K(OP, VOP, SUF, SSUF, USUF, T). */
#define REDCOLL__VINT(K, OP, VOP)                                                            \
    K(OP, VOP, i8, i8, u8, int8_t)     K(OP, VOP, u8, u8, u8, uint8_t)                        \
    K(OP, VOP, i16, i16, u16, int16_t) K(OP, VOP, u16, u16, u16, uint16_t)                    \
    K(OP, VOP, i32, i32, u32, int32_t) K(OP, VOP, u32, u32, u32, uint32_t)                    \
    K(OP, VOP, i64, i64, u64, int64_t) K(OP, VOP, u64, u64, u64, uint64_t)
#define REDCOLL__VFLT(K, OP, VOP)                                                            \
    K(OP, VOP, f32, i32, u32, float)   K(OP, VOP, f64, i64, u64, double)
#define REDCOLL__VALL(K)                                                                      \
    REDCOLL__VINT(K, sum, isum) REDCOLL__VFLT(K, sum, fsum)                                   \
    K(prod, bprod, i8, i8, u8, int8_t) K(prod, bprod, u8, u8, u8, uint8_t)                    \
    K(prod, iprod, i16, i16, u16, int16_t) K(prod, iprod, u16, u16, u16, uint16_t)            \
    K(prod, iprod, i32, i32, u32, int32_t) K(prod, iprod, u32, u32, u32, uint32_t)            \
    K(prod, iprod, i64, i64, u64, int64_t) K(prod, iprod, u64, u64, u64, uint64_t)            \
    REDCOLL__VFLT(K, prod, fprod)                                                             \
    REDCOLL__VINT(K, min, imin) REDCOLL__VFLT(K, min, fmin)                                   \
    REDCOLL__VINT(K, max, imax) REDCOLL__VFLT(K, max, fmax)                                   \
    REDCOLL__VINT(K, land, land) REDCOLL__VINT(K, lor, lor) REDCOLL__VINT(K, lxor, lxor)      \
    REDCOLL__VINT(K, band, band) REDCOLL__VINT(K, bor, bor) REDCOLL__VINT(K, bxor, bxor)      \
    REDCOLL__VFLT(K, xsum, xsum)

/* Level L's lookup: its vector kernel where it has one, else the scalar one. */
#define REDCOLL__VLOOKUP(L)                                                                   \
    static redcoll__kernel redcoll__kernel_v##L(redcoll_op_kind kind, redcoll_dtype d) {     \
        switch (kind) {                                                                       \
        case REDCOLL_OP_SUM:  switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, sum)          \
                                           REDCOLL__F32_F64_CASES(redcoll__k##L##_, sum) default: break; } break; \
        case REDCOLL_OP_PROD: switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, prod)         \
                                           REDCOLL__F32_F64_CASES(redcoll__k##L##_, prod) default: break; } break; \
        case REDCOLL_OP_MIN:  switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, min)          \
                                           REDCOLL__F32_F64_CASES(redcoll__k##L##_, min) default: break; } break; \
        case REDCOLL_OP_MAX:  switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, max)          \
                                           REDCOLL__F32_F64_CASES(redcoll__k##L##_, max) default: break; } break; \
        case REDCOLL_OP_LAND: switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, land) default: break; } break; \
        case REDCOLL_OP_LOR:  switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, lor)  default: break; } break; \
        case REDCOLL_OP_LXOR: switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, lxor) default: break; } break; \
        case REDCOLL_OP_BAND: switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, band) default: break; } break; \
        case REDCOLL_OP_BOR:  switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, bor)  default: break; } break; \
        case REDCOLL_OP_BXOR: switch (d) { REDCOLL__INT_CASES(redcoll__k##L##_, bxor) default: break; } break; \
        case REDCOLL_OP_SUM_EXACT: switch (d) { REDCOLL__F32_F64_CASES(redcoll__kx##L##_, xsum) default: break; } break; \
        default: break;                                                                       \
        }                                                                                     \
        return redcoll__kernel_scalar(kind, d);                                               \
    }

#define REDCOLL__K1(OP, VOP, SUF, SSUF, USUF, T) REDCOLL__VKERNEL(1, , 16, OP, VOP, SUF, SSUF, USUF, T)
REDCOLL__VALL(REDCOLL__K1)
REDCOLL__XSUM_GUARD(1_, f32) REDCOLL__XSUM_GUARD(1_, f64)
REDCOLL__VLOOKUP(1)

#ifdef REDCOLL__SIMD_X86
#define REDCOLL__AVX2 __attribute__((target("avx2")))
#define REDCOLL__AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define REDCOLL__K2(OP, VOP, SUF, SSUF, USUF, T) \
    REDCOLL__VKERNEL(2, REDCOLL__AVX2, 32, OP, VOP, SUF, SSUF, USUF, T)
#define REDCOLL__K3(OP, VOP, SUF, SSUF, USUF, T) \
    REDCOLL__VKERNEL(3, REDCOLL__AVX512, 64, OP, VOP, SUF, SSUF, USUF, T)
REDCOLL__VALL(REDCOLL__K2)
REDCOLL__VALL(REDCOLL__K3)
REDCOLL__XSUM_GUARD(2_, f32) REDCOLL__XSUM_GUARD(2_, f64)
REDCOLL__XSUM_GUARD(3_, f32) REDCOLL__XSUM_GUARD(3_, f64)
REDCOLL__VLOOKUP(2)
REDCOLL__VLOOKUP(3)
#endif
#endif /* REDCOLL__SIMD */

/* 1 if level `isa` is compiled in and this CPU runs it. */
static int redcoll__isa_ok(int isa) {
    switch (isa) {
    case REDCOLL__ISA_SCALAR: return 1;
#ifdef REDCOLL__SIMD
    case REDCOLL__ISA_VEC: return 1;
#endif
#ifdef REDCOLL__SIMD_X86
    case REDCOLL__ISA_AVX2:
        __builtin_cpu_init(); /* a no-op once constructors ran */
        return __builtin_cpu_supports("avx2");
    case REDCOLL__ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#endif
    default: return 0;
    }
}

/* The kernel of level `isa` (which the caller checked with redcoll__isa_ok);
   NULL where MPI leaves the op undefined on the type. */
static redcoll__kernel redcoll__kernel_isa(redcoll_op_kind kind, redcoll_dtype d, int isa) {
    switch (isa) {
#ifdef REDCOLL__SIMD
    case REDCOLL__ISA_VEC: return redcoll__kernel_v1(kind, d);
#endif
#ifdef REDCOLL__SIMD_X86
    case REDCOLL__ISA_AVX2: return redcoll__kernel_v2(kind, d);
    case REDCOLL__ISA_AVX512: return redcoll__kernel_v3(kind, d);
#endif
    default: return redcoll__kernel_scalar(kind, d);
    }
}

/* The fastest kernel this CPU runs, looked up once per call (setup), so a
   kernel call pays no dispatch. */
static redcoll__kernel redcoll__kernel_for(redcoll_op_kind kind, redcoll_dtype d) {
    int isa = REDCOLL__ISA_COUNT - 1;
    while (!redcoll__isa_ok(isa)) --isa;
    return redcoll__kernel_isa(kind, d, isa);
}

/* ==== 7. Building blocks [SECTION:blocks] ==================================
   The pieces the papers compose their algorithms from (the fold-in of
   excess ranks, binomial trees, segment layouts, recursive doubling,
   vector halving and doubling, ring steps, binary blocks, chains and
   pipelined trees), each with the walk that times its calls in the cost
   model where no closed form does. */

/* ---- building block: fold-in of excess ranks ------------------------------
   Rabenseifner 2004 section 3.4/3.5, MPICH paper section 4.5: with
   p' = 2^floor(lg p) and r = p - p', the first 2r ranks pair up (2i, 2i+1);
   even ones hand their vector to the odd partner and sit out. The survivors
   get new ranks 0..p'-1 in the old order, so canonical order is kept. */
typedef struct redcoll__fold {
    int pof2, rem;
    int newrank;  /* -1: this rank sits out */
} redcoll__fold;

static redcoll__fold redcoll__fold_plan(int rank, int p) {
    redcoll__fold f;
    f.pof2 = redcoll__pof2_floor(p);
    f.rem = p - f.pof2;
    if (rank < 2 * f.rem) f.newrank = (rank % 2) ? rank / 2 : -1;
    else f.newrank = rank - f.rem;
    return f;
}

/* Old rank of a survivor's new rank. */
static int redcoll__fold_oldrank(const redcoll__fold *f, int newrank) {
    return newrank < f->rem ? 2 * newrank + 1 : newrank + f->rem;
}

/* Folds the even ranks' input `in` (n elements) into the odd partners' buf
   (buf = partner's in op own in; in may be buf); tmp: redcoll__stage_len(c, n)
   elements for a transport without receive-and-reduce. Returns 1 when this rank's data
   is now in buf. */
static int redcoll__fold_in(redcoll__ctx *c, const redcoll__fold *f, const void *in, void *buf,
                            void *tmp, size_t n) {
    if (c->rank >= 2 * f->rem) return 0;
    if (f->newrank < 0) redcoll__send(c, c->rank + 1, in, n);
    else redcoll__recv_reduce(c, c->rank - 1, in, buf, n, 1, tmp);
    return f->newrank >= 0;
}

/* Serves the result back to the ranks that sat out. */
static void redcoll__fold_out(redcoll__ctx *c, const redcoll__fold *f, void *buf, size_t n) {
    if (c->rank >= 2 * f->rem) return;
    if (f->newrank < 0) redcoll__recv(c, c->rank + 1, buf, n);
    else redcoll__send(c, c->rank - 1, buf, n);
}

/* ---- building block: binomial trees ----------------------------------------
   Virtual rank v = (rank - base) mod p; v's parent is v minus its lowest set
   bit, its children are v + 2^k below that bit. Subtree of v covers the
   contiguous vranks [v, v + lowbit(v)) clipped to p. */
static int redcoll__vrank(int rank, int base, int p) { return (rank - base + p) % p; }
static int redcoll__unvrank(int v, int base, int p) { return (v + base) % p; }
static int redcoll__lowbit(int v, int p) { /* p rounded up to a power of two for v == 0 */
    int mask = 1;
    while (mask < p && !(v & mask)) mask <<= 1;
    return mask;
}
static int redcoll__subtree(int v, int p) {
    int low = redcoll__lowbit(v, p);
    return low < p - v ? low : p - v;
}

/* Reduce of n elements to `root` over a binomial tree.
   `in`: this rank's operand. `acc`: a writable n-element buffer that ends up
   holding the result on root (may equal `in`), or NULL on ranks that have
   none (scratch is allocated there when the rank has children).
   Commutative ops rotate the tree to `root`; otherwise the tree is rooted at
   rank 0, so every subtree is a contiguous rank range reduced in rank order,
   and rank 0 forwards the result to root. */
static void redcoll__binomial_fan_in(redcoll__ctx *c, const void *in, void *acc, size_t n,
                                     int root) {
    int p = c->size, base = c->op.commutative ? root : 0;
    int v = redcoll__vrank(c->rank, base, p), mask, started = 0;
    void *tmp = NULL, *own = NULL;

    for (mask = 1; mask < p; mask <<= 1) {
        if (v & mask) {
            redcoll__send(c, redcoll__unvrank(v - mask, base, p), started ? acc : in, n);
            break;
        }
        if (v + mask >= p) continue;
        if (!started) {
            tmp = redcoll__alloc(c, redcoll__stage_len(c, n));
            if (!acc) acc = own = redcoll__alloc(c, n);
            if (c->err) break;
        }
        /* the first child's data meets `in` straight into acc: no copy */
        redcoll__recv_reduce(c, redcoll__unvrank(v + mask, base, p), started ? acc : in, acc, n, 0, tmp);
        started = 1;
    }
    if (base != root) {
        if (c->rank == 0) redcoll__send(c, root, started ? acc : in, n);
        else if (c->rank == root) redcoll__recv(c, 0, acc, n);
    } else if (c->rank == root && !started) {
        redcoll__copy(c, acc, in, n); /* p == 1 */
    }
    redcoll__free(c, tmp, redcoll__stage_len(c, n));
    redcoll__free(c, own, n);
}

/* Broadcast of n elements from root over a binomial tree (MPICH paper 4.2). */
static void redcoll__binomial_fan_out(redcoll__ctx *c, void *buf, size_t n, int root) {
    int p = c->size, v = redcoll__vrank(c->rank, root, p), mask = 1;
    while (mask < p) {
        if (v & mask) { redcoll__recv(c, redcoll__unvrank(v - mask, root, p), buf, n); break; }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < p) redcoll__send(c, redcoll__unvrank(v + mask, root, p), buf, n);
}

/* ---- building block: segment layouts ------------------------------------------
   A vector of n elements cut into `parts` consecutive segments; segment j is
   elements [off(j), off(j+1)). Irregular collectives give the parts + 1
   prefix sums (displs); otherwise it is the standard uneven split of n
   (redcoll__block), which for n = parts * count is count each, or the
   bit-reversed balanced split for recursive halving. The allgather, scatter
   and reduce-scatter building blocks take one, so a schedule for a regular
   collective also serves its "v" variant. */
typedef struct redcoll__segs {
    size_t        n;      /* elements of the whole vector */
    int           parts;
    const size_t *displs; /* parts + 1 element offsets, or NULL: ... */
    int           bitrev; /* 0: redcoll__block(n, parts, .); 1 (parts = 2^k): the n % parts
                             longer segments are those whose bit-reversed index is
                             below n % parts, so every halving splits within one element */
    int           pairs;  /* > 0: the layout of parts + pairs ranks seen by the survivors of
                             a fold (redcoll__segs_folded) */
} redcoll__segs;

static redcoll__segs redcoll__segs_make(size_t n, int parts, const size_t *displs) {
    redcoll__segs s;
    s.n = n; s.parts = parts; s.displs = displs; s.bitrev = 0; s.pairs = 0;
    return s;
}

/* L (one segment per rank) as the survivors of a fold of `pairs` pairs see
   it: segment j < pairs is L's segments 2j and 2j+1 (the pair survivor j
   stands for), segment j >= pairs is L's segment j + pairs. */
static redcoll__segs redcoll__segs_folded(const redcoll__segs *L, int pairs) {
    redcoll__segs s = *L;
    s.parts = L->parts - pairs;
    s.pairs = pairs;
    return s;
}

/* The layout for recursive halving over parts = 2^k segments: balanced halves. */
static redcoll__segs redcoll__segs_halving(size_t n, int parts) {
    redcoll__segs s = redcoll__segs_make(n, parts, NULL);
    s.bitrev = 1;
    return s;
}

/* Of the segments start .. start + 2^m - 1 (start a multiple of 2^m) of
   the bit-reversed layout over 2^k parts, how many are longer: i = start + t
   reverses to rev_m(t) 2^(k-m) + rev_(k-m)(start >> m), and rev_m(t) takes
   every value below 2^m once. */
static size_t redcoll__bitrev_longer(int start, int m, int k, size_t rem) {
    size_t low = 0, step = (size_t)1 << (k - m), need;
    int b, x = start >> m;
    for (b = 0; b < k - m; ++b) low = low << 1 | (size_t)(x >> b & 1);
    if (rem <= low) return 0;
    need = (rem - low + step - 1) / step;
    return need < ((size_t)1 << m) ? need : (size_t)1 << m;
}

/* Element offset of segment j (j == parts: the end of the vector). */
static size_t redcoll__seg_off(const redcoll__segs *s, int j) {
    int parts = s->parts + s->pairs; /* of the layout under a fold */
    size_t off, len;
    if (s->pairs) j = j < s->pairs ? 2 * j : j + s->pairs;
    if (s->displs) return s->displs[j];
    if (j >= parts) return s->n;
    if (s->bitrev) { /* [0, j) as aligned blocks, one per set bit of j */
        int k = 0, m, start = 0;
        size_t q = s->n / (size_t)s->parts, longer = 0;
        while ((1 << k) < s->parts) ++k;
        for (m = k - 1; m >= 0; --m)
            if (j >> m & 1) {
                longer += redcoll__bitrev_longer(start, m, k, s->n % (size_t)s->parts);
                start += 1 << m;
            }
        return (size_t)j * q + longer;
    }
    redcoll__block(s->n, parts, j, &off, &len);
    return off;
}

/* Elements of the segments lo..hi-1. */
static size_t redcoll__seg_len(const redcoll__segs *s, int lo, int hi) {
    return redcoll__seg_off(s, hi) - redcoll__seg_off(s, lo);
}

/* The segments of a schedule's blocks: the irregular counts, else p blocks of count. */
static redcoll__segs redcoll__segs_of(const redcoll__ctx *c, const redcoll__args *a) {
    if (a->displs) return redcoll__segs_make(a->displs[c->size], c->size, a->displs);
    return redcoll__segs_make(a->count * (size_t)c->size, c->size, NULL);
}

/* Elements of the m segments first, first+1, ... taken cyclically (m <= parts). */
static size_t redcoll__seg_span(const redcoll__segs *s, int first, int m) {
    int end = first + m;
    if (end <= s->parts) return redcoll__seg_len(s, first, end);
    return redcoll__seg_len(s, first, s->parts) + redcoll__seg_len(s, 0, end - s->parts);
}

/* ---- building block: binomial scatter of blocks ------------------------------
   MPICH paper 4.2's first half: virtual rank v = (rank - root) mod p receives
   the blocks [v, v + subtree(v)) of segments L from its parent and hands each
   child w its blocks [w, w + subtree(w)). `sub` holds v's subtree, starting
   with block v (on the root: the whole vector). Root: ceil(lg p) alpha_uni +
   (p-1)/p n beta_uni. */
static void redcoll__scatter_blocks(redcoll__ctx *c, void *sub, const redcoll__segs *L,
                                    int root) {
    int p = c->size, v = redcoll__vrank(c->rank, root, p), low = redcoll__lowbit(v, p), mask;
    size_t base = redcoll__seg_off(L, v);
    if (v != 0)
        redcoll__recv(c, redcoll__unvrank(v - low, root, p), sub,
                      redcoll__seg_len(L, v, v + redcoll__subtree(v, p)));
    for (mask = low >> 1; mask > 0; mask >>= 1) {
        int w = v + mask;
        if (w < p)
            redcoll__send(c, redcoll__unvrank(w, root, p),
                          redcoll__at(c, sub, redcoll__seg_off(L, w) - base),
                          redcoll__seg_len(L, w, w + redcoll__subtree(w, p)));
    }
}

/* redcoll__scatter_blocks from vrank 0: a parent hands its children their
   subtrees, largest first; a child posts its receive at time 0. */
static void redcoll__scatter_walk(int p, const redcoll__segs *L, double E, const redcoll_cost_model *m,
                                  double *clk) {
    double ua = m->f_alpha * m->alpha, ub = m->f_beta * m->beta;
    int v, mask;
    for (v = 0; v < p; ++v) clk[v] = 0;
    for (v = 0; v < p; ++v)
        for (mask = redcoll__lowbit(v, p) >> 1; mask > 0; mask >>= 1)
            if (v + mask < p) {
                int w = v + mask;
                clk[v] += ua + (double)redcoll__seg_len(L, w, w + redcoll__subtree(w, p)) * E * ub;
                clk[w] = clk[v];
            }
}

/* ---- building block: recursive-doubling subtree exchange ---------------------
   Both recursive-doubling schedules of MPICH paper 4.1.1/4.4 pair v with
   v ^ 2^k in step k; the subtrees are the aligned ranges of 2^k vranks. When
   p cuts the partner subtree short, only the first `have` = p - theirs ranks
   of this subtree had a partner. MPICH's non-power-of-two step: they pass
   what they received on to the others of the subtree by distance halving
   (within every aligned half, the first `have` ranks hold it), which keeps
   the total at most 2 ceil(lg p) rounds. Returns 1 if this rank receives. */
typedef struct redcoll__rdstep {
    int mask, dst;      /* distance 2^k and partner vrank (may be >= p) */
    int mine, theirs;   /* first vranks of both subtrees */
    int mine_end, theirs_end; /* clipped to p */
} redcoll__rdstep;

static redcoll__rdstep redcoll__rd_step(int v, int mask, int p) {
    redcoll__rdstep s;
    s.mask = mask; s.dst = v ^ mask;
    s.mine = v & ~(mask - 1); s.theirs = s.dst & ~(mask - 1);
    s.mine_end = s.mine + mask < p ? s.mine + mask : p;
    s.theirs_end = s.theirs + mask < p ? s.theirs + mask : p;
    if (s.theirs_end < s.theirs) s.theirs_end = s.theirs;
    return s;
}

/* The non-power-of-two fix-up after the exchange of step s: forwards the n
   elements at buf (what the partner subtree sent) inside this subtree. */
static int redcoll__rd_fixup(redcoll__ctx *c, const redcoll__rdstep *s, int v, int base,
                             void *buf, size_t n) {
    int p = c->size, have = p - s->theirs, got = 0, m;
    if (s->theirs + s->mask <= p || have <= 0) return 0;
    for (m = s->mask >> 1; m > 0; m >>= 1) {
        int peer = v ^ m, root = v & ~(2 * m - 1);
        if (peer > v && v < root + have && peer >= root + have)
            redcoll__send(c, redcoll__unvrank(peer, base, p), buf, n);
        else if (peer < v && peer < root + have && v >= root + have) {
            redcoll__recv(c, redcoll__unvrank(peer, base, p), buf, n);
            got = 1;
        }
    }
    return got;
}

/* ---- building block: recursive-doubling allgather ------------------------------
   MPICH paper 4.1.1: in step k, v exchanges all blocks of its subtree for
   those of the partner's (segments L in buf, block v being v's own on entry).
   Cost: lg p alpha + (p-1)/p n beta for power-of-two p; otherwise at most
   2 ceil(lg p) rounds (redcoll__rd_fixup). Vranks relative to `base`. */
static void redcoll__rd_allgather(redcoll__ctx *c, void *buf, const redcoll__segs *L, int base) {
    int p = c->size, v = redcoll__vrank(c->rank, base, p), mask;
    for (mask = 1; mask < p; mask <<= 1) {
        redcoll__rdstep s = redcoll__rd_step(v, mask, p);
        void *theirs;
        size_t tn;
        if (s.theirs >= p) continue; /* nothing beyond p to fetch */
        theirs = redcoll__at(c, buf, redcoll__seg_off(L, s.theirs));
        tn = redcoll__seg_len(L, s.theirs, s.theirs_end);
        if (s.dst < p)
            redcoll__sendrecv(c, redcoll__unvrank(s.dst, base, p),
                              redcoll__at(c, buf, redcoll__seg_off(L, s.mine)),
                              redcoll__seg_len(L, s.mine, s.mine_end),
                              redcoll__unvrank(s.dst, base, p), theirs, tn);
        redcoll__rd_fixup(c, &s, v, base, theirs, tn);
    }
}

/* Exact walks of the recursive-doubling family off powers of two: per-rank
   clocks (vranks), advanced call by call in the order every rank makes its
   calls, as the simulator times them (no message is passed). */

/* redcoll__rd_allgather from the clocks clk (vranks): per distance, the
   exchanges, then the fix-up forwards of the one incomplete subtree
   (distance halving, pairs disjoint per level). rs: the reduce-scatter of
   redcoll__reduce_scatter_recursive_doubling instead, which moves all but a
   subtree's blocks and reduces what it got. Returns the last clock. */
static double redcoll__rd_walk(int p, const redcoll__segs *L, int rs, double E,
                               const redcoll_cost_model *m, double *clk) {
    double a = m->alpha, b = m->beta, ua = m->f_alpha * a, ub = m->f_beta * b, t = 0;
    double N = rs ? (double)L->n : 0, sg = rs ? -1 : 1;
    int v, mask, k, R;
    for (mask = 1; mask < p; mask <<= 1) {
        int last = (p - 1) & ~(2 * mask - 1); /* the only block of 2 mask ranks p may cut */
        for (R = 0; R + mask < p; R += 2 * mask) { /* blocks [R, R + 2 mask): halves exchange */
            int hi = R + 2 * mask < p ? R + 2 * mask : p;
            double x = N + sg * (double)redcoll__seg_len(L, R, R + mask);  /* the lower half's */
            double y = N + sg * (double)redcoll__seg_len(L, R + mask, hi); /* the upper half's */
            double d = a + (x > y ? x : y) * E * b;
            for (v = R; v + mask < hi; ++v) {
                double end = (clk[v] > clk[v + mask] ? clk[v] : clk[v + mask]) + d;
                clk[v] = clk[v + mask] = end;
            }
        }
        /* only the lower half of the last block, when p cuts its upper half */
        if (last + mask < p && last + 2 * mask > p) {
            int have = p - (last + mask);
            double d = ua + (N + sg * (double)redcoll__seg_len(L, last + mask, p)) * E * ub;
            for (k = mask >> 1; k > 0; k >>= 1)
                for (R = last; R < last + mask; R += 2 * k) { /* senders: v < R + have <= v + k */
                    int lo = R + have - k > R ? R + have - k : R, hi = R + have < R + k ? R + have : R + k;
                    for (v = lo; v < hi && v + k < p; ++v) {
                        double end = (clk[v] > clk[v + k] ? clk[v] : clk[v + k]) + d;
                        clk[v] = clk[v + k] = end;
                    }
                }
        }
        for (R = 0; rs && R + mask < p; R += 2 * mask) { /* every rank with a partner subtree reduces */
            int hi = R + 2 * mask < p ? R + 2 * mask : p;
            double lo_g = (N - (double)redcoll__seg_len(L, R + mask, hi)) * E * m->gamma;
            double up_g = (N - (double)redcoll__seg_len(L, R, R + mask)) * E * m->gamma;
            for (v = R; v < R + mask; ++v) clk[v] += lo_g;
            for (v = R + mask; v < hi; ++v) clk[v] += up_g;
        }
    }
    for (v = 0; v < p; ++v) if (clk[v] > t) t = clk[v];
    return t;
}

/* Scatter (bcast only) and recursive-doubling allgather of segments L; -1
   above the walks' limit. */
static double redcoll__rd_gather_cost(int p, const redcoll__segs *L, int scatter, double E,
                                      const redcoll_cost_model *m) {
    double clk[REDCOLL__WALK_MAX_P];
    int v;
    if (p > REDCOLL__WALK_MAX_P) return -1;
    if (scatter) redcoll__scatter_walk(p, L, E, m, clk);
    else for (v = 0; v < p; ++v) clk[v] = 0;
    return redcoll__rd_walk(p, L, 0, E, m, clk);
}

/* Recursive-doubling allgather of p blocks of blk bytes off powers of two,
   above the walks' limit: MPICH's fix-up (an estimate). */
static double redcoll__rd_allgather_guess(const redcoll__cost_in *in, double blk) {
    return in->lg * in->a + ((double)(1u << in->lg) - 1) * blk * in->b +
           (in->lg - 1) * (in->ua + (in->p - in->pof2) * blk * in->ub);
}

/* ---- building blocks: vector halving / doubling, ring steps -----------------
   Rabenseifner 2004 sections 3.2 and 3.5-3.7 (MPICH paper 4.4, 5.1-5.3).
   Two small descriptions make them reusable by every family:

   redcoll__vmap  maps virtual ranks 0..size-1 of a subset onto real ranks:
                   a contiguous block (base, size), or a folded set where the
                   first `pairs` virtual ranks each stand for a pair of real
                   ranks (Rabenseifner's even survivor: odd = 0; MPICH's odd
                   survivor: odd = 1), every step-th of them from `from` (the
                   members of one Rabenseifner-Traeff ring step), plus one alias
                   (a virtual rank played by another real rank: the reduce root
                   swapping roles).
   redcoll__segs   cuts the n-element vector into `parts` contiguous segments:
                   explicit offsets (irregular counts) or the standard split.

   Vector halving with distance doubling (doubling = 1) starts with the
   partner at distance 1 and the segment range [0, parts); in each step the
   member whose distance bit is 0 keeps the lower half of its range. After
   lg size steps member v holds the segments of the leaf of v's bits read
   from the lowest: canonical order is kept (the partner holds the lower or
   the higher contiguous rank range, and the operand order follows), and the
   ranges of a smaller block are unions of those of a larger one (binary
   blocks). Distance halving (doubling = 0; MPICH paper 4.4, Fig. 9) leaves
   member v with segment v (rank-ordered, as MPICH's reduce_scatter needs)
   but combines non-contiguous rank sets: commutative ops only. */
typedef struct redcoll__vmap {
    int size;       /* members: virtual ranks 0..size-1 */
    int base;       /* real rank of virtual rank 0 */
    int pairs;      /* u < pairs stands for (base + 2u, base + 2u + 1); u >= pairs is base + pairs + u */
    int odd;        /* which member of a pair plays it: 0 the even one, 1 the odd one */
    int from, step; /* virtual rank v is u = from + v step of the above (0, 1: v itself) */
    int alias_v;    /* virtual rank played by real rank alias_rank instead (-1: none) */
    int alias_rank;
    int me;         /* this rank's virtual rank, -1 outside the group */
    int wrap;       /* > 0: real ranks counted modulo wrap (all p ranks from base, wrapping around) */
} redcoll__vmap;

static int redcoll__vmap_rank(const redcoll__vmap *g, int v) {
    int rank, u = g->from + v * g->step;
    if (v == g->alias_v) return g->alias_rank;
    rank = u < g->pairs ? g->base + 2 * u + g->odd : g->base + g->pairs + u;
    return g->wrap > 0 ? rank % g->wrap : rank;
}

static int redcoll__vmap_vrank(const redcoll__vmap *g, int rank) {
    int off = rank - g->base, u, v;
    if (g->alias_v >= 0 && rank == g->alias_rank) return g->alias_v;
    if (g->wrap > 0 && off < 0) off += g->wrap;
    if (off < 0) return -1;
    if (off < 2 * g->pairs) u = off % 2 == g->odd ? off / 2 : -1;
    else u = off - g->pairs;
    if (u < g->from || (u - g->from) % g->step != 0) return -1;
    v = (u - g->from) / g->step;
    return v >= g->size || v == g->alias_v ? -1 : v;
}

static redcoll__vmap redcoll__vmap_make(int rank, int base, int size, int pairs, int odd,
                                          int alias_v, int alias_rank) {
    redcoll__vmap g;
    g.size = size; g.base = base; g.pairs = pairs; g.odd = odd;
    g.from = 0; g.step = 1;
    g.alias_v = alias_v; g.alias_rank = alias_rank; g.wrap = 0;
    g.me = redcoll__vmap_vrank(&g, rank);
    return g;
}

/* All p ranks counted from base, wrapping around: virtual rank v is real rank
   (base + v) mod p (a tree or ring rooted at base). */
static redcoll__vmap redcoll__vmap_rotated(int rank, int base, int p) {
    redcoll__vmap g = redcoll__vmap_make(rank, base, p, 0, 0, -1, -1);
    g.wrap = p;
    g.me = redcoll__vmap_vrank(&g, rank);
    return g;
}

/* The segment ranges member v holds while halving [0, parts) over `size`
   members: [lo[k], hi[k]) before step k, [lo[steps], hi[steps]) at the end;
   step k's partner is v ^ mask[k]. */
typedef struct redcoll__halving {
    int steps;
    int mask[31];
    int lo[32], hi[32];
} redcoll__halving;

static void redcoll__halving_plan(redcoll__halving *h, int size, int v, int parts, int doubling) {
    int k = 0, m = doubling ? 1 : size / 2;
    h->lo[0] = 0; h->hi[0] = parts;
    for (; m >= 1 && m < size; m = doubling ? m * 2 : m / 2, ++k) {
        int mid = h->lo[k] + (h->hi[k] - h->lo[k]) / 2;
        h->mask[k] = m;
        h->lo[k + 1] = (v & m) ? mid : h->lo[k];
        h->hi[k + 1] = (v & m) ? h->hi[k] : mid;
    }
    h->steps = k;
}

/* Reduce-scatter by recursive vector halving, the one of every family
   (Rabenseifner 2004 3.2/3.5 with distance doubling; MPICH paper 4.4 with
   distance halving): every member of g starts with the whole vector in buf
   and ends with its final range (redcoll__halving_plan) reduced over the
   group, the partner's data of the lower ranks as the left operand; the
   rest of buf is scratch. tmp: redcoll__stage_len of the larger half,
   seg_len(s, 0, parts / 2). Cost: lg size (alpha) + (1 - 1/size)(n beta + n gamma). */
static void redcoll__rs_halving(redcoll__ctx *c, const redcoll__vmap *g, const redcoll__segs *s,
                                const void *in, void *buf, void *tmp, int doubling) {
    redcoll__halving h;
    int k;
    if (g->me < 0) return;
    redcoll__halving_plan(&h, g->size, g->me, s->parts, doubling);
    for (k = 0; k < h.steps; ++k) { /* step 0 reads the input where it is (in; may be buf) */
        int vpeer = g->me ^ h.mask[k], peer = redcoll__vmap_rank(g, vpeer);
        int upper = (g->me & h.mask[k]) != 0;
        int keep = h.lo[k + 1], give = upper ? h.lo[k] : h.hi[k + 1];
        size_t kn = redcoll__seg_len(s, keep, h.hi[k + 1]);
        size_t gn = redcoll__seg_len(s, give, upper ? h.lo[k + 1] : h.hi[k]);
        const void *from = k == 0 ? in : buf;
        redcoll__sendrecv_reduce(c, peer, redcoll__at(c, from, redcoll__seg_off(s, give)), gn, peer,
                                 redcoll__at(c, from, redcoll__seg_off(s, keep)),
                                 redcoll__at(c, buf, redcoll__seg_off(s, keep)), kn, vpeer < g->me, tmp);
    }
    if (h.steps == 0) redcoll__copy(c, buf, in, s->n); /* a group of one */
}

/* Recursive vector doubling, the inverse of redcoll__rs_halving with
   distance doubling (same group and segments): each member starts with its final range
   in buf. vroot < 0: allgather, every member ends with the whole vector
   (exchanges; cost lg size alpha + (1 - 1/size) n beta). vroot >= 0: gather
   to member vroot along the same tree, one-way (Rabenseifner 2004 3.5,
   reduce): in the step of bit m the member whose bit m differs from vroot's
   sends all it holds and leaves; cost at the root lg size alpha_uni +
   (1 - 1/size) n beta_uni. */
static void redcoll__ag_doubling(redcoll__ctx *c, const redcoll__vmap *g, const redcoll__segs *s,
                                 void *buf, int vroot) {
    redcoll__halving h;
    int k;
    if (g->me < 0) return;
    redcoll__halving_plan(&h, g->size, g->me, s->parts, 1);
    for (k = h.steps - 1; k >= 0; --k) {
        int peer = redcoll__vmap_rank(g, g->me ^ h.mask[k]), upper = (g->me & h.mask[k]) != 0;
        int olo = upper ? h.lo[k] : h.hi[k + 1], ohi = upper ? h.lo[k + 1] : h.hi[k];
        char *mine = redcoll__at(c, buf, redcoll__seg_off(s, h.lo[k + 1]));
        char *other = redcoll__at(c, buf, redcoll__seg_off(s, olo));
        size_t mn = redcoll__seg_len(s, h.lo[k + 1], h.hi[k + 1]), on = redcoll__seg_len(s, olo, ohi);
        if (vroot < 0) {
            redcoll__sendrecv(c, peer, mine, mn, peer, other, on);
        } else if ((g->me ^ vroot) & h.mask[k]) {
            redcoll__send(c, peer, mine, mn);
            return;
        } else {
            redcoll__recv(c, peer, other, on);
        }
    }
}

/* Rabenseifner's removal of excess ranks (2004 section 3.5): the pairs of g
   (2i, 2i+1 above g->base) exchange halves, the even member reducing the
   first half of the segments, the odd one the second; then the member that
   leaves hands its reduced half to the one that plays virtual rank i.
   Cost: (1 + f_alpha) alpha + (1 + f_beta)/2 n beta + n/2 gamma.
   The exchange reads the input where it is (`in`, may be buf): the member
   that stays ends with its whole vector in buf (returns 1); every other
   rank keeps reading `in`. tmp: redcoll__stage_len(c, seg_len(s, 0,
   parts / 2)) elements. */
static int redcoll__fold_halves(redcoll__ctx *c, const redcoll__vmap *g, const redcoll__segs *s,
                                const void *in, void *buf, void *tmp) {
    int off = c->rank - g->base, even = off % 2 == 0, partner = c->rank + (even ? 1 : -1);
    int mid = s->parts / 2, klo = even ? 0 : mid, khi = even ? mid : s->parts;
    int glo = even ? mid : 0, ghi = even ? s->parts : mid;
    size_t kn = redcoll__seg_len(s, klo, khi), gn = redcoll__seg_len(s, glo, ghi);
    char *keep = redcoll__at(c, buf, redcoll__seg_off(s, klo));
    char *give = redcoll__at(c, buf, redcoll__seg_off(s, glo));
    if (off < 0 || off >= 2 * g->pairs) return 0;
    redcoll__sendrecv_reduce(c, partner, redcoll__at(c, in, redcoll__seg_off(s, glo)), gn, partner,
                             redcoll__at(c, in, redcoll__seg_off(s, klo)), keep, kn, !even, tmp);
    if (redcoll__vmap_rank(g, off / 2) != c->rank) { redcoll__send(c, partner, keep, kn); return 0; }
    redcoll__recv(c, partner, give, gn);
    return 1;
}

/* After redcoll__fold_halves: the member that stayed sends the whole result
   (n elements) to its partner. Cost: alpha_uni + n beta_uni. */
static void redcoll__unfold_halves(redcoll__ctx *c, const redcoll__vmap *g, void *buf, size_t n) {
    int off = c->rank - g->base, partner = c->rank + (off % 2 == 0 ? 1 : -1);
    if (off < 0 || off >= 2 * g->pairs) return;
    if (redcoll__vmap_rank(g, off / 2) == c->rank) redcoll__send(c, partner, buf, n);
    else redcoll__recv(c, partner, buf, n);
}

/* Pairwise-exchange reduce-scatter (Rabenseifner 2004 3.2/3.7, MPICH paper
   4.4): segment j belongs to member j (s->parts == g->size); in step
   i = 1..size-1 member v sends its input segment v+i to v+i and receives
   segment v of member v-i's input. Canonical order with two accumulators:
   `mine` = x_0..x_v grows to the left as v-1, ..., 0 arrive, a second one
   x_(v+1)..x_(size-1) likewise as size-1, ..., v+1 arrive; one reduction
   joins them. Commutative ops use one accumulator unless `two_always`
   (MPICH's pairwise reduce_scatter keeps two: the join sits on the critical
   path, n/size gamma more). `in`: the whole input; `mine`: where segment v's
   result goes (may be in's own segment; x_v is read from in by the first
   reduction, no copy first); tmp: redcoll__ring_tmp elements
   (the message's staging, then the second accumulator). Cost: (size-1)(alpha
   + n/size beta + n/size gamma). */
static size_t redcoll__ring_tmp(const redcoll__ctx *c, size_t len, int second) {
    return redcoll__stage_len(c, len) + (second ? len : 0);
}

static void redcoll__ring_reduce_scatter_phase(redcoll__ctx *c, const redcoll__vmap *g,
                                               const redcoll__segs *s, const void *in, void *mine,
                                               void *tmp, int two_always) {
    int v = g->me, p = g->size, i;
    size_t len = v >= 0 ? redcoll__seg_len(s, v, v + 1) : 0;
    char *rcv = (char *)tmp, *hi = redcoll__at(c, tmp, redcoll__stage_len(c, len));
    int two = two_always || !c->op.commutative; /* two accumulators keep canonical order */
    const char *own; /* x_v: read from in until the first reduction puts it in mine */
    if (v < 0) return;
    own = redcoll__at(c, in, redcoll__seg_off(s, v));
    for (i = 1; i < p; ++i) {
        int to = (v + i) % p, from = (v - i + p) % p;
        int dst = redcoll__vmap_rank(g, to), src = redcoll__vmap_rank(g, from);
        const char *out = redcoll__at(c, in, redcoll__seg_off(s, to));
        size_t on = redcoll__seg_len(s, to, to + 1);
        if (two && from == p - 1) redcoll__sendrecv(c, dst, out, on, src, hi, len);
        else if (from < v || !two) { /* mine = msg op mine, or mine op msg (commutative) */
            redcoll__sendrecv_reduce(c, dst, out, on, src, own, mine, len, from < v, rcv);
            own = (const char *)mine;
        } else redcoll__sendrecv_reduce(c, dst, out, on, src, hi, hi, len, 1, rcv);
    }
    if (two && v < p - 1) redcoll__reduce3(c, own, hi, mine, len, 1); /* hi may be clobbered */
    else redcoll__copy(c, mine, own, len); /* p = 1: nothing reduced */
}

/* Ring allgather (Rabenseifner 2004 3.2, MPICH paper 4.1): member v holds
   segment v of buf; in step i = 0..size-2 it sends segment v - i to v + 1
   and receives segment v - i - 1 from v - 1; on return every member holds
   every segment. Cost: (size-1)(alpha + n/size beta). Any size; a ring
   rooted at r: redcoll__vmap_rotated. */
static void redcoll__ring_allgather_phase(redcoll__ctx *c, const redcoll__vmap *g,
                                          const redcoll__segs *s, void *buf) {
    int v = g->me, p = g->size, i;
    if (v < 0) return;
    for (i = 0; i < p - 1; ++i) {
        int sj = (v - i + p) % p, rj = (v - i - 1 + p) % p;
        redcoll__sendrecv(c, redcoll__vmap_rank(g, (v + 1) % p),
                          redcoll__at(c, buf, redcoll__seg_off(s, sj)), redcoll__seg_len(s, sj, sj + 1),
                          redcoll__vmap_rank(g, (v - 1 + p) % p),
                          redcoll__at(c, buf, redcoll__seg_off(s, rj)), redcoll__seg_len(s, rj, rj + 1));
    }
}

/* Bruck allgather ("concatenation": MPICH paper 4.1.2; Rabenseifner &
   Traeff's [6] inside a ring step): member v's buf starts with segment v and
   ends with segments v, v+1, ... (cyclically) in that order. In round k it
   sends the first min(2^k, size - 2^k) of the segments it holds to v - 2^k
   and receives as many from v + 2^k behind them. Cost: ceil(lg size) alpha
   + (size-1)/size n beta; any size (the last round is the short one). */
static void redcoll__bruck_allgather_phase(redcoll__ctx *c, const redcoll__vmap *g,
                                           const redcoll__segs *s, void *buf) {
    int p = g->size, v = g->me, d;
    for (d = 1; d < p; d <<= 1) {
        int m = d < p - d ? d : p - d;
        redcoll__sendrecv(c, redcoll__vmap_rank(g, (v - d + p) % p), buf, redcoll__seg_span(s, v, m),
                          redcoll__vmap_rank(g, (v + d) % p),
                          redcoll__at(c, buf, redcoll__seg_span(s, v, d)), redcoll__seg_span(s, (v + d) % p, m));
    }
}

/* redcoll__ring_allgather_phase (p - 1 exchanges with both neighbours, segment
   v - i out, v - i - 1 in) and redcoll__bruck_allgather_phase (round d: the first
   min(d, p - d) segments held to v - d, as many from v + d), from time 0,
   on segments L; -1 above the walks' limit. */
static double redcoll__ring_walk(int p, const redcoll__segs *L, double E, const redcoll_cost_model *m) {
    double clk[REDCOLL__WALK2_MAX_P], t = 0;
    int v, i;
    if (p > REDCOLL__WALK2_MAX_P) return -1;
    for (v = 0; v < p; ++v) clk[v] = 0;
    for (i = 0; i < p - 1; ++i) {
        double first = clk[0], prev = clk[p - 1]; /* rank v-1's clock before this step */
        for (v = 0; v < p; ++v) {
            int sj = (v - i + p) % p, rj = (v - i - 1 + p) % p;
            double mine = clk[v], right = v + 1 < p ? clk[v + 1] : first;
            double out = (mine > right ? mine : right) + m->alpha + (double)redcoll__seg_len(L, sj, sj + 1) * E * m->beta;
            double in = (prev > mine ? prev : mine) + m->alpha + (double)redcoll__seg_len(L, rj, rj + 1) * E * m->beta;
            prev = mine;
            clk[v] = out > in ? out : in;
        }
    }
    for (v = 0; v < p; ++v) if (clk[v] > t) t = clk[v];
    return t;
}

static double redcoll__bruck_walk(int p, const redcoll__segs *L, double E, const redcoll_cost_model *m) {
    double clk[REDCOLL__WALK_MAX_P], nx[REDCOLL__WALK_MAX_P], t = 0;
    int v, d;
    if (p > REDCOLL__WALK_MAX_P) return -1;
    for (v = 0; v < p; ++v) clk[v] = 0;
    for (d = 1; d < p; d <<= 1) {
        int k = d < p - d ? d : p - d;
        for (v = 0; v < p; ++v) {
            double to = clk[(v - d + p) % p], from = clk[(v + d) % p];
            double out = (clk[v] > to ? clk[v] : to) + m->alpha + (double)redcoll__seg_span(L, v, k) * E * m->beta;
            double in = (clk[v] > from ? clk[v] : from) + m->alpha +
                        (double)redcoll__seg_span(L, (v + d) % p, k) * E * m->beta;
            nx[v] = out > in ? out : in;
        }
        for (v = 0; v < p; ++v) clk[v] = nx[v];
    }
    for (v = 0; v < p; ++v) if (clk[v] > t) t = clk[v];
    return t;
}

/* Binary blocks (Rabenseifner 2004 section 3.6): p = 2^e0 + 2^e1 + ...,
   e0 > e1 > ..., block k holds ranks start[k] .. start[k] + size[k] - 1,
   the largest block first, so every block holds lower ranks than the next
   ones and canonical order is kept. Segments: parts = size[0]; block k's
   member v holds the halving range of v over size[k] members, a union of
   block k-1's ranges (the members u of block k-1 with u mod size[k] == v). */
typedef struct redcoll__blocks {
    int count, start[32], size[32];
    int mine;                 /* this rank's block */
    redcoll__vmap g;         /* this rank's block as a group */
} redcoll__blocks;

/* A block of one after block 0 (odd p): it reduces nothing and only sends its input. */
static int redcoll__blocks_alone(const redcoll__blocks *b) {
    return b->mine > 0 && b->size[b->mine] == 1;
}

static void redcoll__blocks_plan(redcoll__blocks *b, int rank, int p) {
    int bit, k = 0, start = 0;
    for (bit = 30; bit >= 0; --bit)
        if (p & (1 << bit)) {
            b->start[k] = start; b->size[k] = 1 << bit;
            if (rank >= start && rank < start + b->size[k]) b->mine = k;
            start += b->size[k++];
        }
    b->count = k;
    b->g = redcoll__vmap_make(rank, b->start[b->mine], b->size[b->mine], 0, 0, -1, -1);
}

/* Member v's final segment range in block k. */
static void redcoll__blocks_range(const redcoll__blocks *b, const redcoll__segs *s, int k, int v,
                                  size_t *off, size_t *len) {
    redcoll__halving h;
    redcoll__halving_plan(&h, b->size[k], v, s->parts, 1);
    *off = redcoll__seg_off(s, h.lo[h.steps]);
    *len = redcoll__seg_len(s, h.lo[h.steps], h.hi[h.steps]);
}

/* Part 1: the reduce-scatter in every block, reading the input `in` (may
   be buf) in its first step, then, from the smallest block up, block k
   splits its ranges into block k-1's and sends the pieces there, where they
   are reduced as the higher operand. Block 0 ends with the whole reduction,
   scattered. A block of one after block 0 (odd p) reduces nothing and
   sends straight from `in`: no copy into buf. tmp: redcoll__stage_len of
   one range of block 0 or 1 (half a vector). */
static void redcoll__blocks_reduce(redcoll__ctx *c, const redcoll__blocks *b, const redcoll__segs *s,
                                   const void *in, void *buf, void *tmp) {
    int k, u, me = b->g.me, alone = redcoll__blocks_alone(b);
    size_t off, len;
    if (!alone) redcoll__rs_halving(c, &b->g, s, in, buf, tmp, 1);
    for (k = b->count - 1; k > 0; --k) {
        if (b->mine == k) {
            for (u = me; u < b->size[k - 1]; u += b->size[k]) {
                redcoll__blocks_range(b, s, k - 1, u, &off, &len);
                redcoll__send(c, b->start[k - 1] + u, redcoll__at(c, alone ? in : buf, off), len);
            }
        } else if (b->mine == k - 1) {
            redcoll__blocks_range(b, s, k - 1, me, &off, &len);
            redcoll__recv_reduce(c, b->start[k] + me % b->size[k], redcoll__at(c, buf, off),
                                 redcoll__at(c, buf, off), len, 0, tmp);
        }
    }
}

/* Part 2 of the allreduce: block k's final ranges go down to block k+1 (one
   message per member of block k, size[k]/size[k+1] arriving at each member
   of block k+1), then every block runs its own allgather. */
static void redcoll__blocks_allgather(redcoll__ctx *c, const redcoll__blocks *b,
                                      const redcoll__segs *s, void *buf) {
    int k = b->mine, u, me = b->g.me;
    size_t off, len;
    if (k > 0)
        for (u = me; u < b->size[k - 1]; u += b->size[k]) {
            redcoll__blocks_range(b, s, k - 1, u, &off, &len);
            redcoll__recv(c, b->start[k - 1] + u, redcoll__at(c, buf, off), len);
        }
    if (k + 1 < b->count) {
        redcoll__blocks_range(b, s, k, me, &off, &len);
        redcoll__send(c, b->start[k + 1] + me % b->size[k + 1], redcoll__at(c, buf, off), len);
    }
    redcoll__ag_doubling(c, &b->g, s, buf, -1);
}

/* The binary blocks schedules' cost (all: allreduce): the largest block's
   reduce-scatter, the combination chain from the smallest block up
   (size[k-1]/size[k] one-way pieces per member, reduced on arrival), then
   the gather (or, for allreduce, the chain back down and each block's
   allgather). */
static double redcoll__blocks_cost(const redcoll__cost_in *in, int all) {
    double rb = all ? in->br : in->b, rub = all ? in->ubr : in->ub; /* reduced on arrival */
    double t = in->k * in->a + redcoll__halves(in->n, in->k) * in->E * (rb + in->g);
    int bit, prev = 0;
    for (bit = in->k; bit >= 0; --bit)
        if (in->p & (1 << bit)) {
            if (prev) {
                double piece = redcoll__cdiv(in->n, (size_t)prev) * in->E, hops = prev >> bit;
                t += hops * (in->ua + piece * rub) + piece * in->g;
                if (all) t += hops * (in->ua + piece * in->ub);
            }
            prev = 1 << bit;
        }
    return t + (all ? in->k * in->a + redcoll__halves(in->n, in->k) * in->E * in->b
                    : in->k * in->ua + redcoll__halves(in->n, in->k) * in->E * in->ub);
}

/* ---- building blocks: chains and pipelined binary trees ---------------------
   Hasanov & Lastovetsky (PaCT 2015) section 2.1, the Open MPI reduce
   algorithms. Their costs use the paper's Hockney model: m bytes per rank,
   X chunks (the paper's segments) of m/X bytes, one step = alpha + m/X beta
   + m/X gamma (the simulator's one-way message with f_alpha = f_beta = 1).
   "Chunk" here is the pipeline's piece; a "segment" elsewhere in this file
   is a part of a layout (redcoll__segs). */

/* Chunk of pipelined schedules: opts.segment_bytes in whole elements, at
   least one, at most n (n > 0). */
static size_t redcoll__chunk_elems(const redcoll__ctx *c, size_t n) {
    size_t s = c->o.segment_bytes / c->esize;
    if (s == 0) s = 1;
    return s < n ? s : n;
}

/* Length of the chunk starting at element off. */
static size_t redcoll__chunk_len(size_t n, size_t chunk, size_t off) {
    return n - off < chunk ? n - off : chunk;
}

/* ---- building block: chain (linear array) reduce, optionally pipelined ----
   Virtual ranks v = (rank - base) mod p form the array p-1 -> p-2 -> ... -> 0;
   each chunk of `chunk` elements enters at v = p-1, every rank prepends its
   own operand (x_v op received) and passes it on while the next chunk
   arrives (sendrecv), so X = ceil(n/chunk) chunks take p + X - 2 steps.
   Commutative ops rotate the array to end at root (base = root); otherwise
   the array is in rank order, ends at rank 0, which sends the whole result
   to root when root != 0. `out`: the result buffer on root (may equal `in`),
   NULL elsewhere. Scratch on receiving ranks: two chunks (one vector when
   X <= 2, and at rank 0 when it forwards the whole result); none at a
   non-in-place tail root, which accumulates in `out`. */
static void redcoll__chain_fan_in(redcoll__ctx *c, const void *in, void *out, size_t n,
                                  int root, size_t chunk) {
    int p = c->size, base = c->op.commutative ? root : 0;
    int v = redcoll__vrank(c->rank, base, p);
    int up = v + 1 < p ? redcoll__unvrank(v + 1, base, p) : -1;
    int down = v > 0 ? redcoll__unvrank(v - 1, base, p) : -1;
    int tail_root = v == 0 && c->rank == root, forward = v == 0 && base != root;
    int full = forward || (tail_root && out != in) || n <= 2 * chunk; /* chunk k at offset k*chunk */
    size_t off, len, plen = 0, cap = full ? n : 2 * chunk;
    void *acc = (void *)in, *own = NULL, *prev = NULL, *cur;

    if (up >= 0) { /* receives: accumulate into out (tail root) or scratch */
        acc = tail_root && out != in ? out : (own = redcoll__alloc(c, cap));
        for (off = 0; off < n && !c->err; off += chunk) {
            len = redcoll__chunk_len(n, chunk, off);
            cur = redcoll__at(c, acc, full ? off : (off / chunk % 2) * chunk);
            if (prev && down >= 0) /* pass chunk k-1 on while chunk k arrives */
                redcoll__sendrecv(c, down, prev, plen, up, cur, len);
            else
                redcoll__recv(c, up, cur, len);
            redcoll__reduce_hi(c, redcoll__at(c, in, off), cur, len);
            if (tail_root && acc != out) redcoll__copy(c, redcoll__at(c, out, off), cur, len);
            prev = cur; plen = len;
        }
        if (down >= 0) redcoll__send(c, down, prev, plen);
    } else if (down >= 0) { /* head: its own chunks */
        for (off = 0; off < n; off += chunk)
            redcoll__send(c, down, redcoll__at(c, in, off), redcoll__chunk_len(n, chunk, off));
    } else if (out) {
        redcoll__copy(c, out, in, n); /* p == 1 */
    }
    if (forward) redcoll__send(c, root, acc, n); /* non-commutative op, root != 0 */
    else if (base != root && c->rank == root) redcoll__recv(c, 0, out, n);
    redcoll__free(c, own, cap);
}

/* ---- building block: chain (linear array) bcast, optionally pipelined -----
   The reverse of the chain reduce: vranks 0 (root) -> 1 -> ... -> p-1; every
   rank forwards chunk k-1 while chunk k arrives (sendrecv), so X
   chunks take p + X - 2 steps of alpha + m/X beta. */
static void redcoll__chain_fan_out(redcoll__ctx *c, void *buf, size_t n, int root, size_t chunk) {
    int p = c->size, v = redcoll__vrank(c->rank, root, p);
    int up = v > 0 ? redcoll__unvrank(v - 1, root, p) : -1;
    int down = v + 1 < p ? redcoll__unvrank(v + 1, root, p) : -1;
    size_t off, prev = 0, plen = 0;
    if (p == 1) return;
    for (off = 0; off < n; off += chunk) {
        size_t len = redcoll__chunk_len(n, chunk, off);
        if (up < 0) redcoll__send(c, down, redcoll__at(c, buf, off), len);
        else if (down >= 0 && off > 0)
            redcoll__sendrecv(c, down, redcoll__at(c, buf, prev), plen, up, redcoll__at(c, buf, off), len);
        else redcoll__recv(c, up, redcoll__at(c, buf, off), len);
        prev = off; plen = len;
    }
    if (up >= 0 && down >= 0) redcoll__send(c, down, redcoll__at(c, buf, prev), plen);
}

/* The chain of redcoll__chain_fan_out / redcoll__chain_fan_in (pipeline rows),
   walked chunk by chunk as the simulator times it: node 0 (the head) only
   sends, node p-1 (the tail) only receives, a middle node receives chunk 0,
   then exchanges (sends k-1, receives k) and sends the last chunk; a hop is
   an exchange-priced message only when both ends are in an exchange; each
   received chunk costs `g` per byte (reduce). The clocks after chunk k are a
   max-plus linear function of those after k-1, so once every node advances
   by the same step twice the middle chunks are added in one go. Returns -1
   above the walks' limit. */
static double redcoll__chain_walk(int p, size_t n, size_t chunk, double E, double g,
                                  const redcoll_cost_model *m) {
    double mem[3 * REDCOLL__WALK_MAX_P], *pp, *pv, *cu, t = 0;
    double a = m->alpha, b = m->beta, ua = m->f_alpha * a, ub = m->f_beta * b;
    size_t X = (n + chunk - 1) / chunk, k;
    int i, last = p - 1;
    if (p < 2 || n == 0) return 0;
    if (p > REDCOLL__WALK_MAX_P) return -1;
    pp = mem;
    pv = pp + p; cu = pv + p;
    for (i = 0; i < p; ++i) pp[i] = pv[i] = 0;
    for (k = 0; k < X; ++k) {
        double len = (double)(k + 1 < X ? chunk : n - (X - 1) * chunk) * E;
        double plen = k ? (double)chunk * E : 0, *sw;
        int same = 1;
        for (i = 0; i < p; ++i) {
            double in = 0, out = 0;
            if (i > 0) { /* chunk k from i-1: posted at its op k (head) or k+1 (middle) */
                double ps = i - 1 == 0 ? pv[0] : cu[i - 1];
                int dup = i - 1 > 0 && k + 2 <= X && i < last && k >= 1;
                in = (ps > pv[i] ? ps : pv[i]) + (dup ? a + len * b : ua + len * ub);
            }
            if (i == 0) /* the head's op k: chunk k to node 1 */
                out = (pv[0] > pv[1] ? pv[0] : pv[1]) + ua + len * ub;
            else if (i < last && k >= 1) { /* chunk k-1 to i+1, received in its op k-1 */
                int dup = k - 1 >= 1 && i + 1 < last;
                out = (pv[i] > pp[i + 1] ? pv[i] : pp[i + 1]) + (dup ? a + plen * b : ua + plen * ub);
            }
            cu[i] = (in > out ? in : out) + (i > 0 ? len * g : 0);
            if (same && k >= 2 && k + 2 < X) { /* both steps equal node 0's last (rounding aside) */
                double d0 = pv[0] - pp[0], e1 = cu[i] - pv[i] - d0, e2 = pv[i] - pp[i] - d0;
                same = (e1 < 0 ? -e1 : e1) <= 1e-12 * cu[i] && (e2 < 0 ? -e2 : e2) <= 1e-12 * cu[i];
            }
        }
        if (k >= 2 && k + 2 < X && same) { /* steady: jump to chunk X-2 */
            double jump = (double)(X - 3 - k) * (cu[0] - pv[0]);
            for (i = 0; i < p; ++i) { pv[i] += jump; cu[i] += jump; }
            k = X - 3;
        }
        sw = pp; pp = pv; pv = cu; cu = sw;
    }
    /* the middle nodes' last op: chunk X-1 on to i+1 */
    for (i = 0; i < p; ++i) {
        double end = pv[i];
        if (i > 0 && i < last) {
            double len = (double)(n - (X - 1) * chunk) * E;
            double pr = X >= 2 ? pp[i + 1] : 0;
            end = (pv[i] > pr ? pv[i] : pr) + ua + len * ub;
        }
        if (end > t) t = end;
    }
    return t;
}

/* The pipeline rows (reduce: reduced chunks): walked, or above the walks'
   limit the pipe of HL 2.1. */
static double redcoll__chain_cost(const redcoll__cost_in *in, int reduce) {
    size_t chunk = in->o->segment_bytes / in->esize ? in->o->segment_bytes / in->esize : 1;
    double g = reduce ? in->g : 0, t;
    if (chunk > in->n) chunk = in->n;
    t = redcoll__chain_walk(in->p, in->n, chunk, in->E, g, in->m);
    return t >= 0 ? t : redcoll__pipe(in->p - 1, in->n, chunk, in->E, in->ua, in->ub + g);
}

/* ---- building block: pipelined binary-tree reduce ---------------------------
   Open MPI's generic tree reduce: per chunk a node receives the partial
   result of its left child (lower ranks), then of its right child (higher
   ranks), and forms left op own op right; the first receive of chunk k
   overlaps the send of chunk k-1 to the parent (sendrecv), so a level
   costs two steps per chunk, as in formula (5). `out`: the result on the
   tree root (may equal `in`). Every message is reduced as it lands
   (redcoll__sendrecv_reduce), own chunk read from `in`: scratch is the
   accumulator (one pipeline chunk) on inner nodes and the staging, nothing
   with the transport's fused entry when the exchange's send is elsewhere,
   else one chunk (opts.chunk_bytes) cut, one pipeline chunk uncut. */
static void redcoll__tree_reduce(redcoll__ctx *c, const void *in, void *out, size_t n,
                                 size_t chunk, int parent, int left, int right) {
    int first = left >= 0 ? left : right, second = left >= 0 ? right : -1;
    void *acc = NULL, *tmp = NULL, *a = NULL;
    size_t off, len = 0;

    if (first < 0) { /* leaf */
        if (parent < 0) redcoll__copy(c, out, in, n);
        else for (off = 0; off < n; off += chunk)
            redcoll__send(c, parent, redcoll__at(c, in, off), redcoll__chunk_len(n, chunk, off));
        return;
    }
    tmp = redcoll__alloc(c, redcoll__stage_len(c, chunk));
    if (parent >= 0) acc = redcoll__alloc(c, chunk);
    for (off = 0; off < n && !c->err; off += chunk) {
        size_t prev = len;
        len = redcoll__chunk_len(n, chunk, off);
        a = parent < 0 ? redcoll__at(c, out, off) : acc;
        /* a = left op own, or own op right, own read from in: no copy first;
           chunk k-1 goes up while chunk k comes in (a is acc: chunk i of the
           message is reduced into it after chunk i of chunk k-1 has gone) */
        redcoll__sendrecv_reduce(c, parent >= 0 && off > 0 ? parent : -1, acc, prev, first,
                                 redcoll__at(c, in, off), a, len, first == left, tmp);
        if (second >= 0) redcoll__recv_reduce(c, second, a, a, len, 0, tmp); /* a = a op right */
    }
    if (parent >= 0) redcoll__send(c, parent, acc, len);
    redcoll__free(c, acc, chunk);
    redcoll__free(c, tmp, redcoll__stage_len(c, chunk));
}

/* In-order binary tree over ranks 0..p-1 rooted at `root`: every subtree is
   a contiguous rank range [lo, hi) whose node is its middle rank (the top
   node is `root`), the left subtree holding the lower ranks. Height at most
   ceil(lg(p+1)) + 1. Found by descending from the top: O(lg p). */
static void redcoll__inorder_links(int rank, int p, int root, int *parent, int *left, int *right) {
    int lo = 0, hi = p, node = root, par = -1;
    while (node != rank) {
        par = node;
        if (rank < node) hi = node; else lo = node + 1;
        node = lo + (hi - lo) / 2;
    }
    *parent = par;
    *left = node > lo ? lo + (node - lo) / 2 : -1;
    *right = hi > node + 1 ? node + 1 + (hi - node - 1) / 2 : -1;
}

/* The heap-ordered (HEAP) and in-order (IN_ORDER) binary trees of
   redcoll__reduce_binary (redcoll__tree_reduce, root 0), walked chunk by
   chunk as the replay times them (bit for bit until the jump below): a leaf
   sends chunk k to its parent one way; an inner node's op k receives chunk
   k from its first child while sending chunk k-1 up (an exchange when it
   has a parent and k > 0), then receives chunk k from its second child
   (one way), reducing each; its last chunk goes up one way. A hop is
   exchange-priced only when both ends are halves of exchanges: the child's
   send of chunk k is one when it is an inner node and k + 1 < X. Within a
   chunk, children go before parents (reverse breadth-first order); the
   parent times each child's message (sent[c]) when it receives it. As in
   redcoll__chain_walk, once every clock advances by the same step the
   middle chunks are added in one go (rounding then differs from the
   simulator's sums by ~1e-15 relative). -1 above the walks' limit. The
   rows use it up to REDCOLL__TREE_WALK_MAX_P ranks: a few microseconds at
   p = 128, but 20-25 us per tree at p = 500, where the estimates cost
   nothing (the decision's budget). */
#define REDCOLL__TREE_WALK_MAX_P 128
static double redcoll__tree_walk(int variant, int p, size_t n, size_t chunk, double E, double g,
                                 const redcoll_cost_model *m) {
    int par[REDCOLL__WALK_MAX_P], fst[REDCOLL__WALK_MAX_P], snd[REDCOLL__WALK_MAX_P], ord[REDCOLL__WALK_MAX_P];
    double clk[REDCOLL__WALK_MAX_P], sent[REDCOLL__WALK_MAX_P], pclk[REDCOLL__WALK_MAX_P], psent[REDCOLL__WALK_MAX_P];
    double t = 0;
    size_t X = (n + chunk - 1) / chunk, k;
    int v, i, head, tail;
    if (p < 2 || n == 0) return 0;
    if (p > REDCOLL__WALK_MAX_P) return -1;
    for (v = 0; v < p; ++v) {
        int l, r;
        if (variant == REDCOLL__VARIANT_IN_ORDER) {
            redcoll__inorder_links(v, p, 0, &par[v], &l, &r);
        } else {
            par[v] = v > 0 ? (v - 1) / 2 : -1;
            l = v < p / 2 ? 2 * v + 1 : -1;
            r = v < (p - 1) / 2 ? 2 * v + 2 : -1;
        }
        fst[v] = l >= 0 ? l : r;
        snd[v] = l >= 0 ? r : -1;
        clk[v] = sent[v] = 0;
    }
    for (ord[0] = 0, head = 0, tail = 1; head < tail; ++head) { /* breadth first from the root */
        if (fst[ord[head]] >= 0) ord[tail++] = fst[ord[head]];
        if (snd[ord[head]] >= 0) ord[tail++] = snd[ord[head]];
    }
    for (k = 0; k < X; ++k) {
        double len = (double)(k + 1 < X ? chunk : n - (X - 1) * chunk) * E;
        int same = k >= 2 && k + 2 < X;
        for (i = p - 1; i >= 0; --i) { /* children first */
            int f, s;
            double end;
            v = ord[i];
            f = fst[v]; s = snd[v];
            pclk[v] = clk[v]; psent[v] = sent[v];
            if (f < 0) continue; /* a leaf: posts chunk k at clk[v], timed by its parent */
            { /* op k: chunk k from f (and chunk k-1 up, timed by the parent in step k-1) */
                int up = par[v] >= 0 && k > 0, fx = fst[f] >= 0 && k + 1 < X;
                double st = clk[v] > clk[f] ? clk[v] : clk[f];
                end = st + redcoll__msg_time(m, len, up && fx);
                sent[f] = end;
                if (up && sent[v] > end) end = sent[v];
                clk[v] = end + len * g;
            }
            if (s >= 0) { /* then chunk k from s, one way */
                double st = clk[v] > clk[s] ? clk[v] : clk[s];
                sent[s] = st + redcoll__msg_time(m, len, 0);
                clk[v] = sent[s] + len * g;
            }
            if (fst[f] < 0) clk[f] = sent[f]; /* a leaf's next post: when its send ended */
            if (s >= 0 && fst[s] < 0) clk[s] = sent[s];
        }
        for (i = 0; same && i < p; ++i) { /* every clock and message end one step on, as node 0's */
            double d0 = clk[0] - pclk[0], e1 = clk[i] - pclk[i] - d0, e2 = par[i] < 0 ? 0 : sent[i] - psent[i] - d0;
            same = (e1 < 0 ? -e1 : e1) <= 1e-12 * clk[i] && (e2 < 0 ? -e2 : e2) <= 1e-12 * clk[i];
        }
        if (same) { /* steady: jump to chunk X-2 */
            double jump = (double)(X - 3 - k) * (clk[0] - pclk[0]);
            for (v = 0; v < p; ++v) { clk[v] += jump; sent[v] += jump; }
            k = X - 3;
        }
    }
    for (v = 0; v < p; ++v) { /* an inner node's last op: chunk X-1 up, timed by its parent */
        double end = par[v] >= 0 && fst[v] >= 0 ? sent[v] : clk[v];
        if (end > t) t = end;
    }
    return t;
}

/* ==== 8. Schedules [SECTION:schedules] =====================================
   One bannered section per collective, then per paper (Hasanov &
   Lastovetsky, the hierarchical transformation, Rabenseifner & Traeff).
   Each schedule opens with its paper section, its cost in the model of
   Rabenseifner 2004 section 3.1 (n bytes per rank, one-way messages cost
   alpha_uni + n beta_uni), and how it treats a non-power-of-two p; its
   cost function (the algorithm list's cost column) follows it. */

/* ---- reduce ---------------------------------------------------------------- */

/* Binomial tree (MPICH paper 4.5, the classical reduce).
   Cost: ceil(lg p)(alpha_uni + n beta_uni + n gamma) at the root.
   Any p: an incomplete tree. Non-commutative ops: tree rooted at rank 0,
   plus one message to root when root != 0. */
static redcoll_result redcoll__reduce_binomial(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__binomial_fan_in(c, a->sbuf, c->rank == a->root ? a->rbuf : NULL, a->count,
                             a->root);
    return c->err;
}

/* The root's ceil(lg p) receives, each reduced. */
static double redcoll__reduce_binomial_cost(const redcoll__cost_in *in) {
    return in->lg * (in->ua + in->V * (in->ub + in->g));
}

/* The binary tree of Rabenseifner 2004 section 3.3 is the binomial tree
   above (recursive distance doubling, full vectors); it is registered under
   both names, so the selector and the tools speak the paper's vocabulary. */

/* The buffer a reduce works in: root's rbuf, elsewhere n elements of
   scratch. Either way the first step reads the input where it is (a->sbuf)
   and writes its result here, no copy first: every kernel writes whole
   elements, padding included (MINLOC/MAXLOC copy the winner, long double
   zeroes its padding), and a user op's 3-operand form starts from a copy
   of one operand (redcoll__combine), so what a rank sends from fresh
   scratch holds no stale bytes. NULL after an allocation failure. */
static void *redcoll__reduce_workbuf(redcoll__ctx *c, const redcoll__args *a) {
    return c->rank == a->root ? a->rbuf : redcoll__alloc(c, a->count);
}

static void redcoll__reduce_freebuf(redcoll__ctx *c, const redcoll__args *a, void *buf) {
    if (c->rank != a->root) redcoll__free(c, buf, a->count);
}

/* Recursive halving and doubling (Rabenseifner 2004 section 3.5, MPICH paper
   5.1): reduce-scatter by vector halving and distance doubling, then a
   binomial gather of the segments to root.
   Cost (p = 2^k): lg p (1 + f_alpha) alpha + (1 + f_beta)(1 - 1/p) n beta
   + (1 - 1/p) n gamma. Non-power-of-two: the first 2r ranks fold halves
   (+ (1 + f_alpha) alpha + (1 + f_beta)/2 n beta + n/2 gamma); a removed
   root swaps roles with its partner, at no cost. Canonical order kept. */
static redcoll_result redcoll__reduce_halving_doubling(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, pof2 = redcoll__pof2_floor(p), r = p - pof2, root = a->root;
    int swap = root < 2 * r && root % 2 == 1;
    redcoll__segs s = redcoll__segs_halving(a->count, pof2);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, pof2, r, 0, swap ? root / 2 : -1,
                                           swap ? root : -1);
    void *buf = redcoll__reduce_workbuf(c, a);
    size_t tn = redcoll__stage_len(c, redcoll__seg_len(&s, 0, pof2 / 2));
    void *tmp = p > 1 ? redcoll__alloc(c, tn) : NULL;
    if (!c->err) { /* the first step (fold or halving) reads the input */
        const void *in = redcoll__fold_halves(c, &g, &s, a->sbuf, buf, tmp) ? buf : a->sbuf;
        redcoll__rs_halving(c, &g, &s, in, buf, tmp, 1);
        redcoll__ag_doubling(c, &g, &s, buf, redcoll__vmap_vrank(&g, root));
    }
    redcoll__free(c, tmp, tn);
    redcoll__reduce_freebuf(c, a, buf);
    return c->err;
}

static double redcoll__reduce_halving_doubling_cost(const redcoll__cost_in *in) {
    double h = redcoll__halves(in->n, in->k) * in->E;
    double C = redcoll__cdiv(in->n, 2) * in->E, F = (double)(in->n / 2) * in->E; /* the halves folded in */
    double own = redcoll__cdiv(in->n, (size_t)in->pof2) * in->E; /* root 0's segment: the gather brings the rest */
    return (in->odd ? in->a + in->ua + C * (in->b + in->g) + F * in->ub : 0) + in->k * (in->a + in->ua) +
           h * (in->b + in->g) + (in->V - own) * in->ub;
}

/* Binary blocks (Rabenseifner 2004 section 3.6, MPICH paper 5.2): reduce-
   scatter in every power-of-two block, combination from the smallest block
   up, binomial gather in the largest block; a root outside it gets rank 0's
   segment first and plays rank 0. For p = 2^k identical to halving_doubling.
   Cost: as halving_doubling per block, plus per block boundary
   (size[k-1]/size[k]) messages of n/size[k-1] from the smaller block, and
   alpha_uni + n/2^e0 beta_uni when the root is outside the largest block.
   Canonical order kept (larger blocks hold lower ranks). */
static redcoll_result redcoll__reduce_binary_blocks(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__blocks b;
    redcoll__segs s;
    redcoll__vmap top;
    int root = a->root, outside;
    void *buf, *tmp;
    size_t off, len, tn;
    redcoll__blocks_plan(&b, c->rank, c->size);
    s = redcoll__segs_halving(a->count, b.size[0]);
    outside = root >= b.size[0];
    top = redcoll__vmap_make(c->rank, 0, b.size[0], 0, 0, outside ? 0 : -1, outside ? root : -1);
    /* a block of one (odd p) only sends its input: no working vector */
    buf = redcoll__blocks_alone(&b) && c->rank != root ? NULL : redcoll__reduce_workbuf(c, a);
    tn = redcoll__stage_len(c, redcoll__seg_len(&s, 0, b.size[0] / 2));
    tmp = c->size > 1 ? redcoll__alloc(c, tn) : NULL;
    if (!c->err) {
        redcoll__blocks_reduce(c, &b, &s, a->sbuf, buf, tmp);
        redcoll__blocks_range(&b, &s, 0, 0, &off, &len);
        if (outside && c->rank == 0) redcoll__send(c, root, redcoll__at(c, buf, off), len);
        if (outside && c->rank == root) redcoll__recv(c, 0, redcoll__at(c, buf, off), len);
        redcoll__ag_doubling(c, &top, &s, buf, outside ? 0 : root);
    }
    redcoll__free(c, tmp, tn);
    redcoll__reduce_freebuf(c, a, buf);
    return c->err;
}

static double redcoll__reduce_binary_blocks_cost(const redcoll__cost_in *in) {
    return redcoll__blocks_cost(in, 0);
}

/* Ring (Rabenseifner 2004 section 3.7, MPICH paper 5.3): pairwise-exchange
   reduce-scatter, then every rank sends its segment straight to root.
   Cost: (p-1)(alpha + alpha_uni) + (1 - 1/p) n (beta + beta_uni)
   + (1 - 1/p) n gamma, for any p. Canonical order kept (two accumulators).
   Scratch: three segments off the root. */
static redcoll_result redcoll__reduce_ring(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, j;
    redcoll__segs s = redcoll__segs_make(a->count, p, NULL);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, p, 0, 0, -1, -1);
    size_t big = redcoll__seg_len(&s, 0, 1), len = redcoll__seg_len(&s, c->rank, c->rank + 1);
    void *tmp = redcoll__alloc(c, redcoll__ring_tmp(c, big, 1));
    void *mine = c->rank == a->root ? redcoll__at(c, a->rbuf, redcoll__seg_off(&s, c->rank))
                                    : redcoll__alloc(c, len);
    if (!c->err) {
        redcoll__ring_reduce_scatter_phase(c, &g, &s, a->sbuf, mine, tmp, 0);
        if (c->rank != a->root) redcoll__send(c, a->root, mine, len);
        else for (j = 0; j < p; ++j)
            if (j != a->root)
                redcoll__recv(c, j, redcoll__at(c, a->rbuf, redcoll__seg_off(&s, j)),
                              redcoll__seg_len(&s, j, j + 1));
    }
    redcoll__free(c, tmp, redcoll__ring_tmp(c, big, 1));
    if (c->rank != a->root) redcoll__free(c, mine, len);
    return c->err;
}

static double redcoll__reduce_ring_cost(const redcoll__cost_in *in) { /* root 0 receives p-1 segments */
    return (in->p - 1) * (in->a + in->seg * (in->b + in->g) + in->ua) + (in->V - in->seg) * in->ub;
}

/* ---- bcast ----------------------------------------------------------------- */

/* Binomial tree (MPICH paper 4.2). Cost: ceil(lg p)(alpha_uni + n beta_uni)
   on the deepest path. Any p: an incomplete tree. */
static redcoll_result redcoll__bcast_binomial(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__binomial_fan_out(c, a->rbuf, a->count, a->root);
    return c->err;
}

static double redcoll__bcast_binomial_cost(const redcoll__cost_in *in) {
    return in->lg * (in->ua + in->V * in->ub);
}

/* Scatter + allgather (van de Geijn; MPICH paper 4.2). The vector is split
   into p blocks (the first n mod p one element longer), scattered over a
   binomial tree in root-relative order and gathered back, in variant
   DOUBLING (`scatter_recursive_doubling`, medium messages) by recursive
   doubling: 2 lg p alpha + 2 (p-1)/p n beta for power-of-two p, otherwise at
   most 2 ceil(lg p) allgather rounds; in variant RING (`scatter_ring`, long
   messages) by the ring: (lg p + p - 1) alpha + 2 (p-1)/p n beta. Any p
   (ceil(lg p) scatter steps). No scratch. */
static redcoll_result redcoll__bcast_scatter_allgather(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_make(a->count, c->size, NULL);
    redcoll__vmap g = redcoll__vmap_rotated(c->rank, a->root, c->size);
    redcoll__scatter_blocks(c, redcoll__at(c, a->rbuf, redcoll__seg_off(&L, g.me)), &L, a->root);
    if (a->variant == REDCOLL__VARIANT_RING) redcoll__ring_allgather_phase(c, &g, &L, a->rbuf);
    else redcoll__rd_allgather(c, a->rbuf, &L, a->root);
    return c->err;
}

/* The scatter, then the allgather: walked (recursive doubling), or closed. */
static double redcoll__bcast_scatter_allgather_cost(const redcoll__cost_in *in) {
    double scatter = in->lg * in->ua + (in->V - in->seg) * in->ub, t;
    redcoll__segs L = redcoll__segs_make(in->n, in->p, NULL);
    if (in->row->variant == REDCOLL__VARIANT_RING) /* the root sends all but its own block */
        return scatter + (in->p - 1) * (in->a + in->seg * in->b);
    t = redcoll__rd_gather_cost(in->p, &L, 1, in->E, in->m);
    if (t >= 0) return t;
    return scatter + (in->odd ? redcoll__rd_allgather_guess(in, in->seg)
                              : in->k * in->a + (in->p - 1) * in->seg * in->b);
}

/* ---- allreduce ------------------------------------------------------------- */
/* The input is where the caller put it (a->sbuf; a->rbuf itself in place).
   Schedules read it in their first step; those that work in rbuf from the
   start copy it there first (redcoll__input_to_rbuf). */
static void redcoll__input_to_rbuf(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__copy(c, a->rbuf, a->sbuf, a->count);
}

/* Reduce to rank 0, then broadcast (Rabenseifner 2004 section 3.2, the classical
   allreduce). Cost: 2 ceil(lg p)(alpha_uni + n beta_uni) + ceil(lg p) n gamma.
   Any p: binomial trees. Keeps canonical order (tree rooted at rank 0). */
static redcoll_result redcoll__allreduce_reduce_bcast(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__binomial_fan_in(c, a->sbuf, a->rbuf, a->count, 0);
    redcoll__binomial_fan_out(c, a->rbuf, a->count, 0);
    return c->err;
}

static double redcoll__allreduce_reduce_bcast_cost(const redcoll__cost_in *in) {
    return in->lg * (2 * in->ua + in->V * (in->ubr + in->ub + in->g));
}

/* Recursive doubling (Rabenseifner 2004 section 3.4, MPICH paper 4.5): lg p'
   exchanges of the whole vector, both partners reducing.
   Cost: lg p'(alpha + n beta + n gamma), plus for non-power-of-two p the
   fold-in and fold-out: 2(alpha_uni + n beta_uni) + n gamma.
   Canonical order: the partner with the lower ranks is the left operand. */
static redcoll_result redcoll__allreduce_recursive_doubling(redcoll__ctx *c,
                                                            const redcoll__args *a) {
    size_t n = a->count;
    redcoll__fold f = redcoll__fold_plan(c->rank, c->size);
    size_t tn = redcoll__stage_len(c, n);
    void *tmp = f.newrank >= 0 && c->size > 1 ? redcoll__alloc(c, tn) : NULL;
    const void *cur = a->sbuf; /* where this rank's partial result is */
    int mask;

    if (redcoll__fold_in(c, &f, a->sbuf, a->rbuf, tmp, n)) cur = a->rbuf;
    for (mask = 1; f.newrank >= 0 && mask < f.pof2; mask <<= 1) {
        int peer = f.newrank ^ mask, old = redcoll__fold_oldrank(&f, peer);
        redcoll__sendrecv_reduce(c, old, cur, n, old, cur, a->rbuf, n, peer < f.newrank, tmp);
        cur = a->rbuf;
    }
    if (f.newrank >= 0 && cur != a->rbuf) redcoll__input_to_rbuf(c, a); /* p = 1 */
    redcoll__fold_out(c, &f, a->rbuf, n);
    redcoll__free(c, tmp, tn);
    return c->err;
}

/* The first reducing step reads sbuf (fused: the fold-in, else the first
   exchange); later exchanges reduce rbuf into itself while the partner
   reads it, so they are staged. */
static double redcoll__allreduce_recursive_doubling_cost(const redcoll__cost_in *in) {
    return in->k * (in->a + in->V * (in->b + in->g)) - (in->odd ? 0 : in->V * (in->b - in->br)) +
           (in->odd ? 2 * in->ua + in->V * (in->ubr + in->ub) + in->V * in->g : 0);
}

/* Recursive halving and doubling (Rabenseifner 2004 section 3.5, MPICH paper
   5.1): reduce-scatter by vector halving and distance doubling, allgather by
   vector doubling and distance halving.
   Cost (p = 2^k): 2 lg p alpha + 2(1 - 1/p) n beta + (1 - 1/p) n gamma.
   Non-power-of-two: the first 2r ranks fold halves before (+ (1 + f_alpha)
   alpha + (1 + f_beta)/2 n beta + n/2 gamma) and the removed ranks get the
   result after (+ alpha_uni + n beta_uni). Canonical order kept. */
static redcoll_result redcoll__allreduce_halving_doubling(redcoll__ctx *c,
                                                          const redcoll__args *a) {
    int p = c->size, pof2 = redcoll__pof2_floor(p);
    redcoll__segs s = redcoll__segs_halving(a->count, pof2);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, pof2, p - pof2, 0, -1, -1);
    size_t half = redcoll__seg_len(&s, 0, pof2 / 2);
    void *tmp;
    if (p == 1) { redcoll__input_to_rbuf(c, a); return REDCOLL_OK; }
    half = redcoll__stage_len(c, half);
    tmp = redcoll__alloc(c, half);
    if (!c->err) { /* the first step (fold or halving) reads the input */
        const void *in = redcoll__fold_halves(c, &g, &s, a->sbuf, a->rbuf, tmp) ? a->rbuf : a->sbuf;
        redcoll__rs_halving(c, &g, &s, in, a->rbuf, tmp, 1);
        redcoll__ag_doubling(c, &g, &s, a->rbuf, -1);
        redcoll__unfold_halves(c, &g, a->rbuf, a->count);
    }
    redcoll__free(c, tmp, half);
    return c->err;
}

static double redcoll__allreduce_halving_doubling_cost(const redcoll__cost_in *in) {
    double h = redcoll__halves(in->n, in->k) * in->E;
    double C = redcoll__cdiv(in->n, 2) * in->E, F = (double)(in->n / 2) * in->E; /* the halves folded in */
    return (in->odd ? in->a + in->ua + C * (in->br + in->g) + F * in->ub + in->ua + in->V * in->ub : 0) +
           2 * in->k * in->a + h * (in->br + in->b + in->g);
}

/* Binary blocks (Rabenseifner 2004 section 3.6, MPICH paper 5.2): reduce-
   scatter in every power-of-two block, combination from the smallest block
   up, then the blocks' ranges are fed back down (size[k]/size[k+1] messages
   per member of block k+1) and every block runs its own allgather.
   Cost: that of halving_doubling on the largest block, plus the imbalance
   of the block boundaries (grows with delta_expo_max). Identical to
   halving_doubling for p = 2^k. Canonical order kept. */
static redcoll_result redcoll__allreduce_binary_blocks(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__blocks b;
    redcoll__segs s;
    size_t half;
    void *tmp;
    if (c->size == 1) { redcoll__input_to_rbuf(c, a); return REDCOLL_OK; }
    redcoll__blocks_plan(&b, c->rank, c->size);
    s = redcoll__segs_halving(a->count, b.size[0]);
    half = redcoll__stage_len(c, redcoll__seg_len(&s, 0, b.size[0] / 2));
    tmp = redcoll__alloc(c, half);
    if (!c->err) {
        redcoll__blocks_reduce(c, &b, &s, a->sbuf, a->rbuf, tmp);
        redcoll__blocks_allgather(c, &b, &s, a->rbuf);
    }
    redcoll__free(c, tmp, half);
    return c->err;
}

static double redcoll__allreduce_binary_blocks_cost(const redcoll__cost_in *in) {
    return redcoll__blocks_cost(in, 1);
}

/* Ring (Rabenseifner 2004 section 3.7, MPICH paper 5.3): pairwise-exchange
   reduce-scatter, then ring allgather.
   Cost: 2(p-1) alpha + 2(1 - 1/p) n beta + (1 - 1/p) n gamma, for any p.
   Canonical order kept (two accumulators); scratch: two segments. */
static redcoll_result redcoll__allreduce_ring(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__segs s = redcoll__segs_make(a->count, c->size, NULL);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, c->size, 0, 0, -1, -1);
    size_t big = redcoll__seg_len(&s, 0, 1);
    void *tmp = redcoll__alloc(c, redcoll__ring_tmp(c, big, 1));
    if (!c->err) {
        redcoll__ring_reduce_scatter_phase(c, &g, &s, a->sbuf,
                                           redcoll__at(c, a->rbuf, redcoll__seg_off(&s, c->rank)), tmp, 0);
        redcoll__ring_allgather_phase(c, &g, &s, a->rbuf);
    }
    redcoll__free(c, tmp, redcoll__ring_tmp(c, big, 1));
    return c->err;
}

static double redcoll__allreduce_ring_cost(const redcoll__cost_in *in) {
    return (in->p - 1) * (2 * in->a + in->seg * (in->br + in->b + in->g));
}

/* ---- gather / scatter ------------------------------------------------------ */

/* Binomial gather (MPICH paper 4.1's tree, used by Rabenseifner's reduce).
   Cost: ceil(lg p) alpha_uni + (p-1)/p n beta_uni at the root (n = p blocks).
   Any p: incomplete tree; blocks travel in vrank order and the root rotates
   them into rank order (no copy when root == 0). */
static redcoll_result redcoll__gather_binomial(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, root = a->root, v = redcoll__vrank(c->rank, root, p), mask;
    size_t n = a->count, have = redcoll__subtree(v, p);
    int direct = (v == 0 && root == 0);
    void *tmp = NULL;

    if (have == 1 && v != 0) {
        redcoll__send(c, redcoll__unvrank(v - redcoll__lowbit(v, p), root, p), a->sbuf, n);
        return c->err;
    }
    tmp = direct ? a->rbuf : redcoll__alloc(c, have * n);
    if (c->err) return c->err;
    redcoll__copy(c, tmp, a->sbuf, n);
    for (mask = 1; mask < p; mask <<= 1) {
        if (v & mask) {
            redcoll__send(c, redcoll__unvrank(v - mask, root, p), tmp, have * n);
            break;
        }
        if (v + mask < p)
            redcoll__recv(c, redcoll__unvrank(v + mask, root, p), redcoll__at(c, tmp, mask * n),
                          (size_t)redcoll__subtree(v + mask, p) * n);
    }
    if (v == 0 && !direct) { /* rotate vrank order into rank order */
        redcoll__copy(c, redcoll__at(c, a->rbuf, (size_t)root * n), tmp, (size_t)(p - root) * n);
        redcoll__copy(c, a->rbuf, redcoll__at(c, tmp, (size_t)(p - root) * n), (size_t)root * n);
    }
    if (!direct) redcoll__free(c, tmp, have * n);
    return c->err;
}

/* Also the scatter's: the same messages, the other way. */
static double redcoll__gather_binomial_cost(const redcoll__cost_in *in) {
    return in->lg * in->ua + (in->p - 1) * in->V * in->ub;
}

/* Binomial scatter, the inverse of the gather above (MPICH paper 4.2's first
   half). Cost: ceil(lg p) alpha_uni + (p-1)/p n beta_uni at the root. */
static redcoll_result redcoll__scatter_binomial(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, root = a->root, v = redcoll__vrank(c->rank, root, p);
    size_t n = a->count, have = redcoll__subtree(v, p);
    redcoll__segs L = redcoll__segs_make(n * (size_t)p, p, NULL);
    char *tmp = NULL;
    const void *src;

    if (v == 0 && root == 0) src = a->sbuf;
    else if (have == 1) src = a->rbuf;
    else src = tmp = (char *)redcoll__alloc(c, have * n);
    if (c->err) return c->err;
    if (v == 0 && root != 0) { /* rotate rank order into vrank order */
        redcoll__copy(c, tmp, redcoll__at(c, a->sbuf, (size_t)root * n), (size_t)(p - root) * n);
        redcoll__copy(c, redcoll__at(c, tmp, (size_t)(p - root) * n), a->sbuf, (size_t)root * n);
    }
    redcoll__scatter_blocks(c, (void *)src, &L, root); /* only the root's src is const, never written */
    if (!a->in_place) redcoll__copy(c, a->rbuf, src, n);
    redcoll__free(c, tmp, have * n);
    return c->err;
}

/* ---- barrier --------------------------------------------------------------- */

/* Dissemination barrier (Hensgen, Finkel & Manber; MPICH's barrier):
   ceil(lg p) rounds, in round k a zero-byte exchange with rank +- 2^k.
   Any p. */
static redcoll_result redcoll__barrier_dissemination(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, d;
    char token = 0;
    (void)a;
    for (d = 1; d < p; d <<= 1)
        redcoll__sendrecv(c, (c->rank + d) % p, &token, 0, (c->rank - d + p) % p, &token, 0);
    return c->err;
}

static double redcoll__barrier_dissemination_cost(const redcoll__cost_in *in) {
    return in->lg * in->a;
}

/* ---- allgather ------------------------------------------------------------- */
/* Allgather and allgatherv share these schedules: the segments carry the
   counts. The entry point has put this rank's block in place in rbuf. */

/* Ring (MPICH paper 4.1, long messages): (p-1) alpha + (p-1)/p n beta, n the
   gathered total. Any p. */
static redcoll_result redcoll__allgather_ring(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_of(c, a);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, c->size, 0, 0, -1, -1);
    redcoll__ring_allgather_phase(c, &g, &L, a->rbuf);
    return c->err;
}

/* allgatherv with counts: walked on them. */
static double redcoll__allgather_ring_cost(const redcoll__cost_in *in) {
    redcoll__segs L;
    double t;
    if (in->row->info.coll == REDCOLL_COLL_ALLGATHER) return (in->p - 1) * (in->a + in->V * in->b);
    L = redcoll__segs_make(in->n, in->p, in->displs);
    t = in->displs ? redcoll__ring_walk(in->p, &L, in->E, in->m) : -1;
    return t >= 0 ? t : (in->p - 1) * (in->a + in->seg * in->b);
}

/* Recursive doubling (MPICH paper 4.1.1, short and medium messages,
   power-of-two p): lg p alpha + (p-1)/p n beta. Other p: MPICH's extra
   exchanges inside cut subtrees, at most 2 ceil(lg p) rounds. */
static redcoll_result redcoll__allgather_recursive_doubling(redcoll__ctx *c,
                                                            const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_of(c, a);
    redcoll__rd_allgather(c, a->rbuf, &L, 0);
    return c->err;
}

/* p = 2^k, even blocks: closed form. Otherwise MPICH 4.1.1's fix-up (and
   uneven blocks), walked. */
static double redcoll__allgather_recursive_doubling_cost(const redcoll__cost_in *in) {
    int all = in->row->info.coll == REDCOLL_COLL_ALLGATHER;
    double blk = all ? in->V : in->seg, t;
    redcoll__segs L = redcoll__segs_make(all ? in->n * (size_t)in->p : in->n, in->p, all ? NULL : in->displs);
    if (!in->odd && !L.displs) return in->k * in->a + (in->p - 1) * blk * in->b;
    t = redcoll__rd_gather_cost(in->p, &L, 0, in->E, in->m);
    return t >= 0 ? t : redcoll__rd_allgather_guess(in, blk);
}

/* Bruck, "concatenation" (MPICH paper 4.1.2, short messages): the own
   block moves to the top of rbuf, redcoll__bruck_allgather_phase collects blocks
   rank, rank+1, ... behind it, and a final rotation by the own block's
   offset puts them in place. Cost: ceil(lg p) alpha + (p-1)/p n beta, plus
   moving n elements locally. Any p. No scratch (in-place rotation). */
static redcoll_result redcoll__allgather_bruck(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_of(c, a);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, c->size, 0, 0, -1, -1);
    size_t mine = redcoll__seg_off(&L, c->rank);
    redcoll__move(c, a->rbuf, redcoll__at(c, a->rbuf, mine), redcoll__seg_len(&L, c->rank, c->rank + 1));
    redcoll__bruck_allgather_phase(c, &g, &L, a->rbuf);
    if (!c->err) redcoll__rotate(c, a->rbuf, L.n, L.n - mine);
    return c->err;
}

static double redcoll__allgather_bruck_cost(const redcoll__cost_in *in) {
    redcoll__segs L;
    double t;
    if (in->row->info.coll == REDCOLL_COLL_ALLGATHER) return in->lg * in->a + (in->p - 1) * in->V * in->b;
    L = redcoll__segs_make(in->n, in->p, in->displs);
    t = in->displs ? redcoll__bruck_walk(in->p, &L, in->E, in->m) : -1;
    return t >= 0 ? t : in->lg * in->a + (double)(in->p - 1) / in->p * in->V * in->b;
}

/* ---- alltoall -------------------------------------------------------------- */
/* sbuf is the resolved input (for REDCOLL_IN_PLACE, rbuf itself); block j of
   count elements is for rank j. n below is p blocks, what each rank sends. */

/* p-1 exchanges with the block for the peer going straight to it: rank ^ k
   for power-of-two p when `by_xor`, else to rank + k, from rank - k.
   `src` must not be rbuf. */
static void redcoll__alltoall_direct(redcoll__ctx *c, const void *src, void *rbuf, size_t count,
                                     int by_xor) {
    int p = c->size, r = c->rank, k;
    redcoll__copy(c, redcoll__at(c, rbuf, (size_t)r * count), redcoll__at(c, src, (size_t)r * count), count);
    for (k = 1; k < p; ++k) {
        int dst = by_xor ? r ^ k : (r + k) % p, from = by_xor ? dst : (r - k + p) % p;
        redcoll__sendrecv(c, dst, redcoll__at(c, src, (size_t)dst * count), count, from,
                          redcoll__at(c, rbuf, (size_t)from * count), count);
    }
}

/* In place, the input is copied aside first (one vector of scratch). */
static const void *redcoll__alltoall_source(redcoll__ctx *c, const redcoll__args *a, void **copy) {
    size_t n = a->count * (size_t)c->size;
    *copy = NULL;
    if (!a->in_place) return a->sbuf;
    *copy = redcoll__alloc(c, n);
    if (*copy) redcoll__copy(c, *copy, a->rbuf, n);
    return *copy;
}

/* Pairwise exchange (MPICH paper 4.3, long messages): p-1 steps, partner
   rank ^ k for power-of-two p, else send to rank + k and receive from
   rank - k. Cost: (p-1) alpha + (p-1)/p n beta. */
static redcoll_result redcoll__alltoall_pairwise(redcoll__ctx *c, const redcoll__args *a) {
    void *copy;
    const void *src = redcoll__alltoall_source(c, a, &copy);
    redcoll__alltoall_direct(c, src, a->rbuf, a->count, redcoll__pof2_floor(c->size) == c->size);
    redcoll__free(c, copy, a->count * (size_t)c->size);
    return c->err;
}

static double redcoll__alltoall_pairwise_cost(const redcoll__cost_in *in) {
    return (in->p - 1) * (in->a + in->V * in->b);
}

/* Scattered isend/irecv (MPICH paper 4.3, medium messages): all p-1 receives
   (from rank + i) and sends (to rank - i) posted at once, then one wait.
   Cost: (p-1) alpha + (p-1)/p n beta with every transfer in flight together.
   A transport without isend/irecv/waitall gets the same peers as p-1
   sendrecv steps (the non-power-of-two pairwise schedule). */
static redcoll_result redcoll__alltoall_scattered(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, r = c->rank, i, nreq = 0;
    size_t count = a->count;
    void *copy;
    const void *src = redcoll__alltoall_source(c, a, &copy);
    redcoll_request *reqs;
    if (!c->t->isend) {
        redcoll__alltoall_direct(c, src, a->rbuf, count, 0);
        redcoll__free(c, copy, count * (size_t)p);
        return c->err;
    }
    reqs = (redcoll_request *)redcoll__alloc_bytes(c, sizeof *reqs * 2 * (size_t)p);
    if (reqs) REDCOLL_MEMSET(reqs, 0, sizeof *reqs * 2 * (size_t)p);
    redcoll__copy(c, redcoll__at(c, a->rbuf, (size_t)r * count), redcoll__at(c, src, (size_t)r * count), count);
    for (i = 1; i < p; ++i) {
        int from = (r + i) % p;
        redcoll__ipost(c, 0, from, redcoll__at(c, a->rbuf, (size_t)from * count), count, reqs, &nreq);
    }
    for (i = 1; i < p; ++i) {
        int dst = (r - i + p) % p;
        redcoll__ipost(c, 1, dst, redcoll__at(c, src, (size_t)dst * count), count, reqs, &nreq);
    }
    redcoll__waitall(c, reqs, nreq);
    redcoll__free_bytes(c, reqs, sizeof *reqs * 2 * (size_t)p);
    redcoll__free(c, copy, count * (size_t)p);
    return c->err;
}

static double redcoll__alltoall_scattered_cost(const redcoll__cost_in *in) {
    return (in->p - 1) * (in->ua + in->V * in->ub);
}

/* Bruck's index algorithm (MPICH paper 4.3, short messages, Fig. 7): rotate
   the blocks up by rank (block j is for rank + j); in step k send the blocks
   whose index has bit k set to rank + 2^k and receive the same blocks from
   rank - 2^k; then block j came from rank - j, and swapping j with
   (rank - j) mod p puts everything in place. Cost: ceil(lg p) alpha +
   (n/2) lg p beta for power-of-two p, plus (n/p)(p - 2^floor(lg p)) beta
   otherwise. Scratch: two packs of floor(p/2) blocks (at most n). */
static redcoll_result redcoll__alltoall_bruck(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, r = c->rank, d, j;
    size_t count = a->count, n = count * (size_t)p, half = count * (size_t)(p / 2);
    char *out = (char *)a->rbuf, *spack = NULL, *rpack = NULL;
    if (a->in_place) redcoll__rotate(c, out, n, (size_t)r * count);
    else {
        redcoll__copy(c, out, redcoll__at(c, a->sbuf, (size_t)r * count), (size_t)(p - r) * count);
        redcoll__copy(c, redcoll__at(c, out, (size_t)(p - r) * count), a->sbuf, (size_t)r * count);
    }
    if (p > 1) { spack = (char *)redcoll__alloc(c, half); rpack = (char *)redcoll__alloc(c, half); }
    for (d = 1; d < p && !c->err; d <<= 1) {
        size_t m = 0;
        for (j = d; j < p; ++j)
            if (j & d) redcoll__copy(c, redcoll__at(c, spack, count * m++), redcoll__at(c, out, (size_t)j * count), count);
        redcoll__sendrecv(c, (r + d) % p, spack, m * count, (r - d + p) % p, rpack, m * count);
        for (j = d, m = 0; j < p; ++j)
            if (j & d) redcoll__copy(c, redcoll__at(c, out, (size_t)j * count), redcoll__at(c, rpack, count * m++), count);
    }
    for (j = 0; j < p && !c->err; ++j) {
        int s = (r - j + p) % p;
        if (j < s) redcoll__swap(c, redcoll__at(c, out, (size_t)j * count), redcoll__at(c, out, (size_t)s * count), count);
    }
    redcoll__free(c, spack, half);
    redcoll__free(c, rpack, half);
    return c->err;
}

/* Blocks of Bruck's alltoall: sum over k of #{ j < p : bit k of j set }. */
static double redcoll__bruck_blocks(int p) {
    double s = 0;
    long long d;
    for (d = 1; d < p; d <<= 1) { /* whole periods of 2d, then the tail's upper part */
        long long tail = p % (2 * d) - d;
        s += (double)(p / (2 * d)) * (double)d + (double)(tail > 0 ? tail : 0);
    }
    return s;
}

static double redcoll__alltoall_bruck_cost(const redcoll__cost_in *in) {
    return in->lg * in->a + redcoll__bruck_blocks(in->p) * in->V * in->b;
}

/* ---- reduce_scatter -------------------------------------------------------- */
/* reduce_scatter and reduce_scatter_block share these schedules (the segments
   carry the counts). sbuf is the whole input (for REDCOLL_IN_PLACE, rbuf
   itself, which then receives the result at its front). */

enum { REDCOLL__RS_RECURSIVE_DOUBLING, REDCOLL__RS_PAIRWISE, REDCOLL__RS_RECURSIVE_HALVING };

/* The reduce_scatter schedules' walks on segments L (kind: which one):
   recursive doubling, pairwise (two accumulators: rank p-1's block is not
   reduced on arrival, every other rank reduces its two at the end), and
   recursive halving (MPICH's fold of the first 2 rem ranks, distance
   halving over the survivors' folded segments, the even ranks' blocks sent
   back); -1 above the walks' limits. */
static double redcoll__rs_walk(int kind, int p, const redcoll__segs *L, double E, const redcoll_cost_model *m) {
    double a = m->alpha, b = m->beta, g = m->gamma, ua = m->f_alpha * a, ub = m->f_beta * b;
    double clk[REDCOLL__WALK_MAX_P], old[REDCOLL__WALK_MAX_P], t = 0;
    int v, i;
    if (p > REDCOLL__WALK_MAX_P || (kind == REDCOLL__RS_PAIRWISE && p > REDCOLL__WALK2_MAX_P))
        return -1;
    for (v = 0; v < p; ++v) clk[v] = 0;
    if (kind == REDCOLL__RS_RECURSIVE_DOUBLING) {
        redcoll__rd_walk(p, L, 1, E, m, clk);
    } else if (kind == REDCOLL__RS_PAIRWISE) {
        for (i = 1; i < p; ++i) {
            for (v = 0; v < p; ++v) old[v] = clk[v];
            for (v = 0; v < p; ++v) {
                int to = (v + i) % p, from = (v - i + p) % p;
                double len = (double)redcoll__seg_len(L, v, v + 1) * E;
                double out = (old[v] > old[to] ? old[v] : old[to]) + a + (double)redcoll__seg_len(L, to, to + 1) * E * b;
                double in = (old[from] > old[v] ? old[from] : old[v]) + a + len * b;
                clk[v] = (out > in ? out : in) + (from == p - 1 ? 0 : len * g);
            }
        }
        for (v = 0; v < p - 1; ++v) clk[v] += (double)redcoll__seg_len(L, v, v + 1) * E * g;
    } else { /* recursive halving */
        redcoll__fold f = redcoll__fold_plan(0, p);
        redcoll__segs F = redcoll__segs_folded(L, f.rem);
        double n = (double)L->n * E;
        int k, steps = redcoll__floor_lg(f.pof2);
        for (v = 1; v < 2 * f.rem; v += 2) clk[v] = clk[v - 1] = ua + n * ub, clk[v] += n * g;
        for (k = 0; k < steps; ++k)
            for (v = 0; v < f.pof2; ++v) {
                redcoll__halving h;
                int u, ru, rp, upper, keep, give;
                double kn, gn, end;
                redcoll__halving_plan(&h, f.pof2, v, F.parts, 0);
                u = v ^ h.mask[k];
                if (u < v) continue;
                upper = (v & h.mask[k]) != 0;
                keep = h.lo[k + 1]; give = upper ? h.lo[k] : h.hi[k + 1];
                kn = (double)redcoll__seg_len(&F, keep, h.hi[k + 1]) * E;
                gn = (double)redcoll__seg_len(&F, give, upper ? h.lo[k + 1] : h.hi[k]) * E;
                ru = redcoll__fold_oldrank(&f, v); rp = redcoll__fold_oldrank(&f, u);
                end = (clk[ru] > clk[rp] ? clk[ru] : clk[rp]) + a + (kn > gn ? kn : gn) * b;
                clk[ru] = end + kn * g;
                clk[rp] = end + gn * g;
            }
        for (v = 1; v < 2 * f.rem; v += 2) {
            double end = (clk[v] > clk[v - 1] ? clk[v] : clk[v - 1]) + ua +
                         (double)redcoll__seg_len(L, v - 1, v) * E * ub;
            clk[v] = clk[v - 1] = end;
        }
    }
    for (v = 0; v < p; ++v) if (clk[v] > t) t = clk[v];
    return t;
}

/* The walk of kind `kind` on the call's counts (reduce_scatter with counts),
   or -1: no walk applies or p is above its limit. */
static double redcoll__rs_walked(const redcoll__cost_in *in, int kind) {
    redcoll__segs L;
    if (!in->displs) return -1;
    L = redcoll__segs_make(in->n, in->p, in->displs); /* the counts as laid out */
    return redcoll__rs_walk(kind, in->p, &L, in->E, in->m);
}

/* Recursive halving (MPICH paper 4.4, Fig. 9; commutative ops): lg p steps
   with partners p/2, p/4, ..., 1, each sending the half the other side
   keeps. Cost: lg p alpha + (p-1)/p n (beta + gamma) for power-of-two p.
   Other p: the first 2r ranks fold in pairwise (even hands its vector to
   the odd one, which computes both results and sends the even one its block
   at the end): (floor(lg p) + 2) alpha + 2n beta + n (1 + (p-1)/p) gamma.
   Scratch: one vector, two out of place. */
static redcoll_result redcoll__reduce_scatter_recursive_halving(redcoll__ctx *c,
                                                                const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_of(c, a);
    int r = c->rank;
    size_t n = L.n, mine = redcoll__seg_off(&L, r), cnt = redcoll__seg_len(&L, r, r + 1);
    redcoll__fold f = redcoll__fold_plan(r, c->size);
    size_t tn = redcoll__stage_len(c, n);
    void *acc = a->in_place ? a->rbuf : redcoll__alloc(c, n), *tmp = redcoll__alloc(c, tn);
    if (c->err) { redcoll__free(c, tmp, tn); if (!a->in_place) redcoll__free(c, acc, n); return c->err; }
    if (f.newrank < 0) {
        redcoll__fold_in(c, &f, a->sbuf, acc, tmp, n);
        redcoll__recv(c, r + 1, a->rbuf, cnt);
    } else { /* the first step (fold or halving) reads the input: no copy into acc first */
        redcoll__vmap g = redcoll__vmap_make(r, 0, f.pof2, f.rem, 1, -1, -1); /* the survivors */
        redcoll__segs F = redcoll__segs_folded(&L, f.rem);
        const void *in = redcoll__fold_in(c, &f, a->sbuf, acc, tmp, n) ? acc : a->sbuf;
        redcoll__rs_halving(c, &g, &F, in, acc, tmp, 0);
        if (r < 2 * f.rem) /* serve the even partner its block */
            redcoll__send(c, r - 1, redcoll__at(c, acc, redcoll__seg_off(&L, r - 1)),
                          redcoll__seg_len(&L, r - 1, r));
        redcoll__move(c, a->rbuf, redcoll__at(c, acc, mine), cnt);
    }
    redcoll__free(c, tmp, tn);
    if (!a->in_place) redcoll__free(c, acc, n);
    return c->err;
}

/* The first 2r ranks fold in pairs (one-way vector, block back at the end);
   halving step i exchanges the first pof2/2^i survivors' segments, two per
   folded pair (segments are whole: the first n mod p larger). With counts:
   walked. */
static double redcoll__reduce_scatter_recursive_halving_cost(const redcoll__cost_in *in) {
    size_t N = in->row->info.coll == REDCOLL_COLL_REDUCE_SCATTER ? in->n : in->n * (size_t)in->p;
    double T = (double)N * in->E, blk = redcoll__cdiv(N, (size_t)in->p) * in->E, t = in->k * in->a;
    double w = redcoll__rs_walked(in, REDCOLL__RS_RECURSIVE_HALVING);
    int i, rem = in->p - in->pof2;
    if (w >= 0) return w;
    for (i = 1; i <= in->k; ++i) {
        size_t sv = (size_t)(in->pof2 >> i), cnt = sv + ((size_t)rem < sv ? (size_t)rem : sv);
        t += (double)(cnt * (N / (size_t)in->p) + (cnt < N % (size_t)in->p ? cnt : N % (size_t)in->p)) *
             in->E * (in->b + in->g);
    }
    return t + (in->odd ? 2 * in->ua + (T + blk) * in->ub + T * in->g : 0);
}

/* len elements: acc op= the data received in recv, which holds the cyclic
   range of the n-element vector that starts at element `first`; acc holds
   the vector rotated so that element `rot` comes first. */
static void redcoll__reduce_cyclic(redcoll__ctx *c, void *recv, void *acc, size_t n, size_t first,
                                   size_t len, size_t rot, int recv_is_lower) {
    size_t off = (first + n - rot) % n, done = 0;
    while (done < len) {
        size_t seg = len - done < n - off ? len - done : n - off;
        char *x = redcoll__at(c, recv, done), *y = redcoll__at(c, acc, off);
        if (recv_is_lower) redcoll__reduce_hi(c, x, y, seg); else redcoll__reduce_lo(c, y, x, seg);
        done += seg;
        off = 0;
    }
}

/* Recursive doubling (MPICH paper 4.4, short messages, any op): in step k,
   v exchanges with v ^ 2^k everything but the blocks of its own subtree of
   2^k ranks and reduces what it receives, the lower subtree's data as left
   operand, so canonical order is kept. Cost for power-of-two p:
   lg p alpha + n (lg p - (p-1)/p)(beta + gamma). Other p: the subtree
   fix-up of the allgather (redcoll__rd_fixup) forwards the partner
   subtree's data before it is reduced. The vector is held rotated so that
   this rank's block comes first, which makes "all but my subtree" one
   contiguous message. Scratch: one vector, two out of place. */
static redcoll_result redcoll__reduce_scatter_recursive_doubling(redcoll__ctx *c,
                                                                 const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_of(c, a);
    int p = c->size, r = c->rank, mask;
    size_t n = L.n, rot = redcoll__seg_off(&L, r), cnt = redcoll__seg_len(&L, r, r + 1);
    char *acc = (char *)(a->in_place ? a->rbuf : redcoll__alloc(c, n));
    char *recv = (char *)redcoll__alloc(c, n);
    if (c->err) { redcoll__free(c, recv, n); if (!a->in_place) redcoll__free(c, acc, n); return c->err; }
    if (a->in_place) redcoll__rotate(c, acc, n, rot);
    else {
        redcoll__copy(c, acc, redcoll__at(c, a->sbuf, rot), n - rot);
        redcoll__copy(c, redcoll__at(c, acc, n - rot), a->sbuf, rot);
    }
    for (mask = 1; mask < p; mask <<= 1) {
        redcoll__rdstep s = redcoll__rd_step(r, mask, p);
        size_t from, rn, sfrom = redcoll__seg_off(&L, s.mine_end);
        size_t sn = n - redcoll__seg_len(&L, s.mine, s.mine_end);
        int got = 0;
        if (s.theirs >= p) continue;
        from = redcoll__seg_off(&L, s.theirs_end);
        rn = n - redcoll__seg_len(&L, s.theirs, s.theirs_end);
        if (s.dst < p) {
            redcoll__sendrecv(c, s.dst, redcoll__at(c, acc, sfrom - rot), sn, s.dst, recv, rn);
            got = 1;
        }
        got |= redcoll__rd_fixup(c, &s, r, 0, recv, rn);
        if (got) redcoll__reduce_cyclic(c, recv, acc, n, from, rn, rot, s.theirs < s.mine);
    }
    if (!a->in_place) redcoll__copy(c, a->rbuf, acc, cnt);
    redcoll__free(c, recv, n);
    if (!a->in_place) redcoll__free(c, acc, n);
    return c->err;
}

/* Step `mask`: partners exchange all blocks but their own subtree's, the
   longer message set by the smallest subtree that has a partner (the
   truncated last one when its partner exists). Off powers of two the
   fix-up forwards what arrived lg p - 1 times (MPICH 4.4): walked, as
   uneven counts are, up to the walks' limit, an estimate above it. */
static double redcoll__reduce_scatter_recursive_doubling_cost(const redcoll__cost_in *in) {
    int block = in->row->info.coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    double blk = block ? in->V : in->seg, t = 0, w = redcoll__rs_walked(in, REDCOLL__RS_RECURSIVE_DOUBLING);
    long long mask;
    if (block && in->odd) {
        redcoll__segs L = redcoll__segs_make(in->n * (size_t)in->p, in->p, NULL);
        w = redcoll__rs_walk(REDCOLL__RS_RECURSIVE_DOUBLING, in->p, &L, in->E, in->m);
    }
    if (w >= 0) return w;
    for (mask = 1; mask < in->p; mask <<= 1) {
        long long j0 = in->p / mask * mask, smin = in->p % mask && (j0 & mask) ? in->p - j0 : mask;
        t += in->a + (double)(in->p - smin) * blk * (in->b + in->g);
    }
    return t + (in->odd ? (in->lg - 1) * (in->ua + (in->p - 1) * blk * in->ub) + (in->p - 1) * blk * in->g : 0);
}

/* Pairwise exchange (MPICH paper 4.4, long messages): p-1 steps, in step i
   send block rank+i to its owner, receive rank-i's contribution and reduce
   (redcoll__ring_reduce_scatter_phase with two accumulators: canonical order for
   any op). Cost: (p-1) alpha + (p-1)/p n (beta + gamma). Any p. Scratch:
   two blocks (one on rank p-1). */
static redcoll_result redcoll__reduce_scatter_pairwise(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__segs L = redcoll__segs_of(c, a);
    redcoll__vmap g = redcoll__vmap_make(c->rank, 0, c->size, 0, 0, -1, -1);
    int p = c->size, r = c->rank;
    size_t cnt = redcoll__seg_len(&L, r, r + 1), tn = p > 1 ? redcoll__ring_tmp(c, cnt, r < p - 1) : 0;
    void *acc = a->in_place ? redcoll__at(c, a->rbuf, redcoll__seg_off(&L, r)) : a->rbuf;
    void *tmp = p > 1 ? redcoll__alloc(c, tn) : NULL;
    redcoll__ring_reduce_scatter_phase(c, &g, &L, a->sbuf, acc, tmp, 1);
    redcoll__free(c, tmp, tn);
    redcoll__move(c, a->rbuf, acc, cnt);
    return c->err;
}

/* p - 1 exchanges, then the two accumulators meet. With counts: walked. */
static double redcoll__reduce_scatter_pairwise_cost(const redcoll__cost_in *in) {
    int block = in->row->info.coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    double blk = block ? in->V : in->seg, w = redcoll__rs_walked(in, REDCOLL__RS_PAIRWISE);
    if (w >= 0) return w;
    return (in->p - 1) * (in->a + blk * (in->b + in->g)) + (in->p > 2 ? blk * in->g : 0);
}

/* ---- Hasanov & Lastovetsky: reduce and bcast algorithms ----------------------
   "Hierarchical optimization of MPI reduce algorithms" (PaCT 2015) section
   2.1: the Open MPI reduce algorithms the transformation below is applied
   to, and their bcast inverses (section 5). Model and chunks: see the
   building blocks above. */

/* Flat tree (section 2.1, formula (1); Open MPI "linear"): the root receives
   every vector and reduces it. Cost: (p-1)(alpha + m beta + m gamma) at the
   root; unsegmented (formula (2) only adds (X-1)(p-1) alpha). Any p, any root.
   Canonical order: the root starts from its own vector, appends ranks
   root+1 .. p-1, then prepends root-1 .. 0. Scratch: one vector at the root. */
static redcoll_result redcoll__reduce_flat(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, root = a->root, i;
    size_t n = a->count;
    void *tmp;
    if (c->rank != root) {
        redcoll__send(c, root, a->sbuf, n);
        return c->err;
    }
    tmp = p > 1 ? redcoll__alloc(c, redcoll__stage_len(c, n)) : NULL;
    if (p == 1) redcoll__copy(c, a->rbuf, a->sbuf, n);
    for (i = root + 1; i < p; ++i) /* the first message meets sbuf: no copy first */
        redcoll__recv_reduce(c, i, i == root + 1 ? a->sbuf : a->rbuf, a->rbuf, n, 0, tmp);
    for (i = root - 1; i >= 0; --i)
        redcoll__recv_reduce(c, i, root == p - 1 && i == root - 1 ? a->sbuf : a->rbuf, a->rbuf, n, 1, tmp);
    redcoll__free(c, tmp, redcoll__stage_len(c, n));
    return c->err;
}

static double redcoll__reduce_flat_cost(const redcoll__cost_in *in) {
    return (in->p - 1) * (in->ua + in->V * (in->ub + in->g));
}

/* Chain (variant WHOLE: section 2.1, formula (3); Open MPI "chain" with
   fanout 1): each rank receives and sends at most one message. Cost:
   (p-1)(alpha + m beta + m gamma). Pipeline (variant PIPELINED: formula (4)):
   the chain in X chunks of opts.segment_bytes. Cost: (p + X - 2)(alpha +
   m/X beta + m/X gamma). Any p. Non-commutative ops: array in rank order
   ending at rank 0, plus one message of m bytes to root when root != 0. */
static redcoll_result redcoll__reduce_chain(redcoll__ctx *c, const redcoll__args *a) {
    size_t chunk = a->variant == REDCOLL__VARIANT_PIPELINED ? redcoll__chunk_elems(c, a->count) : a->count;
    redcoll__chain_fan_in(c, a->sbuf, a->rbuf, a->count, a->root, chunk);
    return c->err;
}

/* WHOLE: p - 1 hops in a row, priced as flat's p - 1 receives. */
static double redcoll__reduce_chain_cost(const redcoll__cost_in *in) {
    if (in->row->variant == REDCOLL__VARIANT_WHOLE) return redcoll__reduce_flat_cost(in);
    return redcoll__chain_cost(in, 1);
}

/* Segmented binary trees (section 2.1, formula (5)). Variant HEAP (`binary`):
   a heap-shaped tree rotated to root (children of v: 2v+1, 2v+2); cost
   2(lg(p+1) + X - 2) steps of alpha + m/X (beta + gamma) for a complete
   tree; any p (an incomplete tree); commutative ops only (the heap order
   mixes rank ranges). Variant IN_ORDER (`in_order_binary`, Open MPI's choice
   for non-commutative ops): every subtree is a contiguous rank range, so
   left op own op right is canonical; rooted at root itself (no extra
   message), at most one level deeper than the balanced tree; cost as HEAP;
   any p, any op. */
static redcoll_result redcoll__reduce_binary(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, v = redcoll__vrank(c->rank, a->root, p), parent, left, right;
    if (a->variant == REDCOLL__VARIANT_IN_ORDER) {
        redcoll__inorder_links(c->rank, p, a->root, &parent, &left, &right);
    } else {
        parent = v > 0 ? redcoll__unvrank((v - 1) / 2, a->root, p) : -1;
        left = v < p / 2 ? redcoll__unvrank(2 * v + 1, a->root, p) : -1;        /* 2v+1 < p */
        right = v < (p - 1) / 2 ? redcoll__unvrank(2 * v + 2, a->root, p) : -1; /* 2v+2 < p */
    }
    redcoll__tree_reduce(c, a->sbuf, a->rbuf, a->count, redcoll__chunk_elems(c, a->count),
                         parent, left, right);
    return c->err;
}

/* Walked (exact); above the walks' limit an estimate: two children per step,
   the pipe advances one chunk per two receives. */
static double redcoll__reduce_binary_cost(const redcoll__cost_in *in) {
    size_t chunk = in->o->segment_bytes / in->esize ? in->o->segment_bytes / in->esize : 1;
    double t, step;
    if (chunk > in->n) chunk = in->n;
    t = in->p <= REDCOLL__TREE_WALK_MAX_P ? redcoll__tree_walk(in->row->variant, in->p, in->n, chunk, in->E, in->g, in->m)
                                         : -1;
    if (t >= 0) return t;
    step = in->ua + (double)chunk * in->E * (in->ub + in->g);
    return redcoll__pipe(redcoll__floor_lg(in->p) + 1, in->n, chunk, in->E, in->ua, in->ub + in->g) +
           redcoll__pipe(2, in->n, chunk, in->E, in->ua, in->ub + in->g) - step;
}

/* Flat bcast (the inverse of formula (1); Open MPI "linear"): the root sends
   the vector to every rank in turn. Cost: (p-1)(alpha + m beta) at the root. Any p. */
static redcoll_result redcoll__bcast_flat(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, i;
    if (c->rank != a->root) {
        redcoll__recv(c, a->root, a->rbuf, a->count);
        return c->err;
    }
    for (i = 1; i < p; ++i) redcoll__send(c, (a->root + i) % p, a->rbuf, a->count);
    return c->err;
}

static double redcoll__bcast_flat_cost(const redcoll__cost_in *in) {
    return (in->p - 1) * (in->ua + in->V * in->ub);
}

/* Chain bcast (variant WHOLE; Open MPI "chain" with fanout 1): (p-1)(alpha +
   m beta). Pipeline bcast (variant PIPELINED; Open MPI "pipeline", the
   inverse of formula (4)): (p + X - 2)(alpha + m/X beta), X chunks of
   opts.segment_bytes. Any p. */
static redcoll_result redcoll__bcast_chain(redcoll__ctx *c, const redcoll__args *a) {
    size_t chunk = a->variant == REDCOLL__VARIANT_PIPELINED ? redcoll__chunk_elems(c, a->count) : a->count;
    redcoll__chain_fan_out(c, a->rbuf, a->count, a->root, chunk);
    return c->err;
}

/* WHOLE: p - 1 hops in a row, priced as flat's p - 1 sends. */
static double redcoll__bcast_chain_cost(const redcoll__cost_in *in) {
    if (in->row->variant == REDCOLL__VARIANT_WHOLE) return redcoll__bcast_flat_cost(in);
    return redcoll__chain_cost(in, 0);
}

/* ---- the hierarchical transformation ----------------------------------------
   Hasanov & Lastovetsky section 3, Algorithm 1, generalised to allreduce
   and bcast as their section 5 proposes: G groups of consecutive ranks (sizes differ by at most one;
   G = opts.groups, where more groups than ranks means p groups of one rank;
   with opts.by_node, the runs of consecutive ranks on one node), a collective
   inside every group and one among the group leaders, each run unchanged on a
   group view (redcoll_group). The requested root leads its own group, the
   other groups are led by their first rank, and the leaders' view is in group
   order, so contiguous groups with order-keeping algorithms keep canonical order. */
#define REDCOLL__GROUP_ID_INNER 0
#define REDCOLL__GROUP_ID_OUTER 1

typedef struct redcoll__hier {
    int  G, mine;    /* groups; this rank's group */
    int *start;      /* G + 1 entries: group g is ranks start[g] .. start[g+1]-1 */
    int *leader;     /* G entries: the parent rank leading each group */
    size_t bytes;    /* of the two arrays */
} redcoll__hier;

/* Flat-shaped reduce algorithms: the ones sections 3.1-3.2 show to gain. */
static int redcoll__linear_algo(const redcoll__row *row) {
    redcoll_algo algo = row->info.algo;
    return algo == REDCOLL_ALGO_FLAT || algo == REDCOLL_ALGO_CHAIN || algo == REDCOLL_ALGO_PIPELINE;
}

/* The G minimising G + ceil(p/G), the step count of formulas (8) and (10):
   sqrt(p) when it divides p (first of equals). */
static int redcoll__sqrt_groups(int p) {
    int g, best = 1;
    long long cost = 1 + (long long)p;
    for (g = 2; g <= p && (long long)g * g <= 4 * (long long)p; ++g) {
        long long k = g + (p - 1) / g + 1; /* g + ceil(p / g) */
        if (k < cost) { cost = k; best = g; }
    }
    return best;
}

static redcoll_algo redcoll__select_for(const redcoll__ctx *c, redcoll_coll coll, int p, size_t bytes,
                                        const size_t *counts);

/* The rows made of levels, which are never a level themselves. */
static int redcoll__composite(redcoll_algo algo) {
    return algo == REDCOLL_ALGO_HIERARCHICAL || algo == REDCOLL_ALGO_NODE_SPLIT || algo == REDCOLL_ALGO_NODE_LEADER;
}

/* The algorithm of one level: `want`, else `other` (the paper uses one
   algorithm at both levels) when `coll` has it, else the selector's choice
   (never hierarchical: binomial then). Returns AUTO when `want` is invalid. */
static redcoll_algo redcoll__level_algo(const redcoll__ctx *c, redcoll_coll coll, redcoll_algo want,
                                        redcoll_algo other, int p, size_t bytes) {
    if (want == REDCOLL_ALGO_AUTO && !redcoll__composite(other) && redcoll__find(coll, other))
        want = other;
    if (want == REDCOLL_ALGO_AUTO) {
        redcoll__ctx lc = *c; /* a level is one level */
        lc.shape.nodes = 1;
        want = redcoll__select_for(&lc, coll, p, bytes, NULL);
        if (redcoll__composite(want) || !redcoll__find(coll, want)) want = REDCOLL_ALGO_BINOMIAL;
    }
    if (redcoll__composite(want) || !redcoll__find(coll, want)) return REDCOLL_ALGO_AUTO;
    return want;
}

/* Checks a level's algorithm: invalid, or refuses a non-commutative op it cannot order. */
static redcoll_result redcoll__level_ok(const redcoll__ctx *c, redcoll_coll coll, redcoll_algo algo) {
    if (algo == REDCOLL_ALGO_AUTO) return REDCOLL_ERR_INVALID_ARG;
    if (!c->op.commutative && !redcoll_algo_keeps_order(coll, algo)) return REDCOLL_ERR_UNSUPPORTED;
    return REDCOLL_OK;
}

/* Plans the groups; G defaults to sqrt(p) when `linear` (both levels flat-shaped),
   else 1. The leader of root's group is root. Arrays from the user's allocator. */
static redcoll_result redcoll__hier_plan(redcoll__ctx *c, redcoll__hier *h, int root, int linear) {
    const redcoll_transport *t = c->t;
    int p = c->size, G, g, r;
    REDCOLL_MEMSET(h, 0, sizeof *h);
    if (c->o.by_node && t->node_of) {
        for (G = 1, r = 1; r < p; ++r) G += t->node_of(t->user, r) != t->node_of(t->user, r - 1);
    } else {
        G = c->o.groups ? c->o.groups : linear ? redcoll__sqrt_groups(p) : 1;
        if (G > p) G = p; /* documented: more groups than ranks is every rank its own group */
    }
    h->G = G;
    h->bytes = ((size_t)G * 2 + 1) * sizeof(int);
    h->start = (int *)redcoll__alloc_bytes(c, h->bytes);
    if (!h->start) return c->err;
    h->leader = h->start + G + 1;
    if (c->o.by_node && t->node_of) {
        for (g = 0, r = 0; r < p; ++r)
            if (r == 0 || t->node_of(t->user, r) != t->node_of(t->user, r - 1)) h->start[g++] = r;
    } else {
        for (g = 0; g < G; ++g) h->start[g] = g * (p / G) + (g < p % G ? g : p % G);
    }
    h->start[G] = p;
    for (g = 0; g < G; ++g) {
        h->leader[g] = h->start[g] <= root && root < h->start[g + 1] ? root : h->start[g];
        if (h->start[g] <= c->rank && c->rank < h->start[g + 1]) h->mine = g;
    }
    return REDCOLL_OK;
}

static void redcoll__hier_free(redcoll__ctx *c, redcoll__hier *h) {
    redcoll__free_bytes(c, h->start, h->bytes);
}

/* Index of the group holding `rank`. */
static int redcoll__hier_group_of(const redcoll__hier *h, int rank) {
    int g = 0;
    while (rank >= h->start[g + 1]) ++g;
    return g;
}

/* Runs the schedule of `row` unchanged on the view `v` (same op, dtype,
   options); its failure is latched in c (the view's abort has released the peers). */
static void redcoll__run_on(redcoll__ctx *c, const redcoll_transport *v, const redcoll__row *row,
                            const redcoll__args *a) {
    redcoll__ctx sub;
    redcoll__args la;
    if (c->err) return;
    sub = *c;
    sub.t = v; sub.rank = v->rank; sub.size = v->size; sub.coll = row->info.coll;
    la = *a;
    la.variant = row->variant;
    c->err = row->run(&sub, &la);
}

/* This rank's group view. */
static void redcoll__hier_inner(const redcoll__ctx *c, const redcoll__hier *h, redcoll_group *g) {
    int lo = h->start[h->mine];
    redcoll__group_make(g, c->t, NULL, lo, h->start[h->mine + 1] - lo, REDCOLL__GROUP_ID_INNER,
                        c->rank - lo);
}

/* The leaders' view (call on leaders only). */
static void redcoll__hier_outer(const redcoll__ctx *c, const redcoll__hier *h, redcoll_group *g) {
    redcoll__group_make(g, c->t, h->leader, 0, h->G, REDCOLL__GROUP_ID_OUTER, h->mine);
}

/* Hierarchical reduce (Algorithm 1): reduce inside the groups to their
   leaders with opts.inner_algo, then among the leaders to root with
   opts.outer_algo. Cost: inner(p/G) + outer(G); flat and chain:
   (G + p/G - 2)(alpha + m beta + m gamma), formula (8), least at G = sqrt(p),
   formula (9); pipeline: (2X + G + p/G - 4) steps, formula (10); binary,
   binomial and Rabenseifner gain nothing (sections 3.3-3.5), so G defaults
   to 1 for them. Any p: groups differ by at most one rank. Scratch: one
   vector on the leaders besides what the level algorithms use. */
static redcoll_result redcoll__reduce_hierarchical(redcoll__ctx *c, const redcoll__args *a) {
    size_t n = a->count;
    redcoll__hier h;
    redcoll_group gv;
    redcoll__args ia, oa;
    void *part = NULL;
    int lead, is_root = c->rank == a->root;

    if (redcoll__hier_plan(c, &h, a->root, redcoll__linear_algo(c->inner) && redcoll__linear_algo(c->outer)))
        return c->err;
    lead = c->rank == h.leader[h.mine];
    ia = *a;
    ia.root = h.leader[h.mine] - h.start[h.mine];
    ia.rbuf = !lead ? NULL : is_root ? a->rbuf : (part = redcoll__alloc(c, n));
    redcoll__hier_inner(c, &h, &gv);
    redcoll__run_on(c, &gv.t, c->inner, &ia);
    if (lead && h.G > 1) {
        oa = *a;
        oa.sbuf = ia.rbuf;
        oa.rbuf = is_root ? a->rbuf : NULL;
        oa.root = redcoll__hier_group_of(&h, a->root);
        oa.in_place = is_root;
        redcoll__hier_outer(c, &h, &gv);
        redcoll__run_on(c, &gv.t, c->outer, &oa);
    }
    redcoll__free(c, part, n);
    redcoll__hier_free(c, &h);
    return c->err;
}

/* Hierarchical allreduce (section 5's generalisation): reduce inside the
   groups to their first rank (opts.inner_algo, a reduce algorithm), allreduce
   among the leaders (opts.outer_algo, an allreduce algorithm), bcast inside
   the groups (the inner algorithm's bcast when there is one, else the
   selector's). Cost: reduce(p/G) + allreduce(G) + bcast(p/G). Any p. Every
   rank gets the leaders' bitwise-identical result; canonical order when both
   levels keep it. */
static redcoll_result redcoll__allreduce_hierarchical(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__hier h;
    redcoll_group gv;
    redcoll__args ia;
    int alone;

    if (redcoll__hier_plan(c, &h, 0, redcoll__linear_algo(c->inner) && redcoll__linear_algo(c->outer)))
        return c->err;
    alone = h.G > 1 && h.start[h.mine + 1] - h.start[h.mine] == 1; /* the outer level reads the input */
    ia = *a; /* the inner reduce reads the input where it is: no copy to rbuf first */
    ia.root = 0;
    ia.rbuf = c->rank == h.leader[h.mine] ? a->rbuf : NULL;
    redcoll__hier_inner(c, &h, &gv);
    if (!alone) redcoll__run_on(c, &gv.t, c->inner, &ia);
    if (c->rank == h.leader[h.mine] && h.G > 1) {
        redcoll_group ov;
        redcoll__hier_outer(c, &h, &ov);
        redcoll__args oa = *a;
        if (!alone) {
            oa.sbuf = a->rbuf; /* the group's result, in place */
            oa.in_place = 1;
        }
        redcoll__run_on(c, &ov.t, c->outer, &oa);
    }
    ia.rbuf = a->rbuf;
    redcoll__run_on(c, &gv.t, c->down, &ia);
    redcoll__hier_free(c, &h);
    return c->err;
}

/* Hierarchical bcast (Hasanov, Quintin & Lastovetsky, Euro-Par 2014, the
   transformation this paper applies to reduce): bcast among the leaders
   from root (opts.outer_algo), then inside every group from its leader
   (opts.inner_algo). Cost: bcast(G) + bcast(p/G): flat and chain
   (G + p/G - 2)(alpha + m beta), pipeline (2X + G + p/G - 4) steps, so G
   defaults to sqrt(p) for them, to 1 for trees. Any p, any root. */
static redcoll_result redcoll__bcast_hierarchical(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__hier h;
    redcoll_group gv;
    redcoll__args la;

    if (redcoll__hier_plan(c, &h, a->root, redcoll__linear_algo(c->inner) && redcoll__linear_algo(c->outer)))
        return c->err;
    la = *a;
    if (c->rank == h.leader[h.mine] && h.G > 1) {
        la.root = redcoll__hier_group_of(&h, a->root);
        redcoll__hier_outer(c, &h, &gv);
        redcoll__run_on(c, &gv.t, c->outer, &la);
    }
    la.root = h.leader[h.mine] - h.start[h.mine];
    redcoll__hier_inner(c, &h, &gv);
    redcoll__run_on(c, &gv.t, c->inner, &la);
    redcoll__hier_free(c, &h);
    return c->err;
}

/* The three hierarchical rows: G groups of about p/G ranks, the best flat
   row inside, the best among the leaders, and for allreduce the bcast back
   down (the levels as the selector would pick them). */
static double redcoll__hierarchical_cost(const redcoll__cost_in *in) {
    int p = in->p, G = in->o->groups ? (in->o->groups < p ? in->o->groups : p) : redcoll__sqrt_groups(p);
    int q = (p + G - 1) / G;
    redcoll_coll coll = in->row->info.coll, low = coll == REDCOLL_COLL_BCAST ? coll : REDCOLL_COLL_REDUCE;
    double t = redcoll__best_cost(low, q, in, NULL) + redcoll__best_cost(coll, G, in, NULL);
    if (coll == REDCOLL_COLL_ALLREDUCE) t += redcoll__best_cost(REDCOLL_COLL_BCAST, q, in, NULL);
    return t;
}

/* ---- two levels: node-aware schedules ------------------------------------------
   Ranks live on nodes (the transport's node_of; without it, blocks of
   opts.ranks_per_node; without either, one node). Inside
   a node messages are cheap; between nodes they cross the node's network
   link, which the node's ranks share (the two-level model, [SECTION:cost]).
   Two families, each built from the one-level schedules run unchanged on
   group views (redcoll_group), each level's algorithm chosen as AUTO would
   choose it for that level alone: inside a node under the intra links,
   across nodes under the inter links with beta times the messages that
   share a node's link:
     node_leader  the node's leader (its first rank; the root on the root's
                  node) does the network part: reduce inside, the collective
                  among the leaders, bcast inside (Hasanov & Lastovetsky's
                  transformation with the nodes as groups). Short vectors:
                  one message per node crosses the network at a time.
     node_split   the vector is cut into B blocks, B the smallest node's rank
                  count, and the ranks at position i < B of every node carry
                  block i across, B at once (reduce-scatter inside, allreduce
                  among the ranks of one position, allgather inside: the
                  node-aware form of Rabenseifner 2004 section 3.2's
                  allreduce). Long vectors: every node's link carries
                  2 (N-1)/N n bytes each way for allreduce, the least any
                  schedule can (N nodes, n bytes), in B parallel streams;
                  for the longest, allreduce runs in chunks whose network
                  steps overlap the node's steps of the next and the last
                  (node_split's pipeline, below).
   Nodes of any sizes (ranks beyond the smallest node's count rest in the
   network part of node_split). Canonical order: a node's ranks are reduced
   in rank order and the nodes in the order of their lowest rank, so when
   every node is a run of consecutive ranks the levels keep canonical order;
   for a non-commutative op the schedules group by runs of consecutive ranks
   on one node (a node split in several runs counts as several). */

typedef struct redcoll__nodes {
    int    N, kmin, kmax;  /* nodes; ranks on the smallest and on the largest */
    int    mine, pos;      /* this rank's node, its place there */
    int   *first;          /* N + 1: node g is ranks at places first[g] .. first[g+1] - 1 */
    int   *rank;           /* the p ranks node by node, nodes in order of their lowest rank, each
                              node's ascending; NULL when the nodes are runs (place = rank) */
    size_t bytes;
} redcoll__nodes;

#define REDCOLL__GROUP_ID_NODE  2 /* a node's ranks */
#define REDCOLL__GROUP_ID_CROSS 3 /* one rank of every node */

/* The node of `rank` (see above). */
static int redcoll__node_id(const redcoll__ctx *c, int rank) {
    if (c->t->node_of) return c->t->node_of(c->t->user, rank);
    return c->o.ranks_per_node > 0 ? rank / c->o.ranks_per_node : 0;
}

/* The rank at place i of the plan. */
static int redcoll__nodes_rank(const redcoll__nodes *nd, int i) { return nd->rank ? nd->rank[i] : i; }

/* Stable merge sort of the n ints of v by key[v[i]] (tmp: n ints). */
static void redcoll__sort_by(int *v, int *tmp, int n, const int *key) {
    int w, i;
    for (w = 1; w < n; w *= 2) {
        for (i = 0; i < n; i += 2 * w) {
            int lo = i, mid = i + w < n ? i + w : n, hi = i + 2 * w < n ? i + 2 * w : n, a = lo, b = mid, o = lo;
            while (a < mid && b < hi) tmp[o++] = key[v[b]] < key[v[a]] ? v[b++] : v[a++];
            while (a < mid) tmp[o++] = v[a++];
            while (b < hi) tmp[o++] = v[b++];
        }
        REDCOLL_MEMCPY(v, tmp, sizeof *v * (size_t)n);
    }
}

/* The nodes of a map that is not runs of distinct ids: by node id, then
   each node's lowest rank orders the nodes (O(p) memory, O(p log p)). */
static redcoll_result redcoll__nodes_sorted(redcoll__ctx *c, redcoll__nodes *nd) {
    int p = c->size, r, g, i, n = 0, *id, *order, *lead, *out;
    nd->bytes = sizeof(int) * (6 * (size_t)p + 1);
    nd->first = (int *)redcoll__alloc_bytes(c, nd->bytes);
    if (!nd->first) return c->err;
    nd->rank = nd->first + p + 1;
    id = nd->rank + p;
    order = id + p; lead = order + p; out = lead + p;
    for (r = 0; r < p; ++r) { id[r] = redcoll__node_id(c, r); nd->rank[r] = r; }
    redcoll__sort_by(nd->rank, order, p, id);
    for (i = 0; i < p; ++i)
        if (i == 0 || id[nd->rank[i]] != id[nd->rank[i - 1]]) lead[n++] = i;
    for (g = 0; g < n; ++g) { order[g] = g; id[g] = nd->rank[lead[g]]; } /* id: each node's lowest rank */
    redcoll__sort_by(order, out, n, id);
    for (g = 0, i = 0; g < n; ++g) {
        int from = lead[order[g]], to = order[g] + 1 < n ? lead[order[g] + 1] : p;
        nd->first[g] = i;
        for (r = from; r < to; ++r) out[i++] = nd->rank[r];
    }
    nd->N = n;
    REDCOLL_MEMCPY(nd->rank, out, sizeof(int) * (size_t)p);
    return REDCOLL_OK;
}

/* Groups the ranks by node (runs: by runs of consecutive ranks on one
   node). When the nodes are runs with distinct ids (ids that never
   decrease with the rank, or runs asked for) the plan holds only the runs'
   starts. Control data from the scratch; redcoll__nodes_free releases it. */
static redcoll_result redcoll__nodes_plan(redcoll__ctx *c, redcoll__nodes *nd, int runs) {
    int p = c->size, r, g, i, sorted = 1, prev = 0, n = 0;
    REDCOLL_MEMSET(nd, 0, sizeof *nd);
    for (r = 0; r < p; ++r) { /* count the runs */
        int id = redcoll__node_id(c, r);
        if (r > 0 && id < prev) sorted = 0;
        n += r == 0 || id != prev;
        prev = id;
    }
    if (runs || sorted) {
        nd->bytes = sizeof(int) * ((size_t)n + 1);
        nd->first = (int *)redcoll__alloc_bytes(c, nd->bytes);
        if (!nd->first) return c->err;
        for (r = 0; r < p; ++r) {
            int id = redcoll__node_id(c, r);
            if (r == 0 || id != prev) nd->first[nd->N++] = r;
            prev = id;
        }
    } else if (redcoll__nodes_sorted(c, nd)) {
        return c->err;
    }
    nd->first[nd->N] = p;
    nd->kmin = p; nd->kmax = 0;
    for (g = 0; g < nd->N; ++g) {
        int k = nd->first[g + 1] - nd->first[g];
        if (k < nd->kmin) nd->kmin = k;
        if (k > nd->kmax) nd->kmax = k;
        for (i = nd->first[g]; i < nd->first[g + 1]; ++i)
            if (redcoll__nodes_rank(nd, i) == c->rank) { nd->mine = g; nd->pos = i - nd->first[g]; }
    }
    return REDCOLL_OK;
}

static void redcoll__nodes_free(redcoll__ctx *c, redcoll__nodes *nd) {
    redcoll__free_bytes(c, nd->first, nd->bytes);
}

static int redcoll__node_size(const redcoll__nodes *nd, int g) { return nd->first[g + 1] - nd->first[g]; }

/* The view of this rank's node (view rank = position): over the node's own
   transport (the `node` entry) when it holds exactly this node's ranks, as
   it does unless the plan groups by runs that split a node; else over c->t.
   Every rank of a node decides alike (same size, ranks in the same order). */
static void redcoll__node_view(const redcoll__ctx *c, const redcoll__nodes *nd, redcoll_group *v) {
    int at = nd->first[nd->mine], k = redcoll__node_size(nd, nd->mine);
    const redcoll_transport *in = c->t->node ? c->t->node(c->t->user) : NULL;
    if (in && in->size == k && in->rank == nd->pos)
        redcoll__group_make(v, in, NULL, 0, k, REDCOLL__GROUP_ID_NODE, nd->pos);
    else
        redcoll__group_make(v, c->t, nd->rank ? &nd->rank[at] : NULL, nd->rank ? 0 : at, k,
                            REDCOLL__GROUP_ID_NODE, nd->pos);
}

/* 1 when view v runs on another transport than c's (the node's own). */
static int redcoll__level_elsewhere(const redcoll__ctx *c, const redcoll_transport *v) {
    return v->send == redcoll__gsend && ((const redcoll_group *)v->user)->parent != c->t;
}

/* lc: c as a rank of view v, for a schedule's own messages inside a node
   (redcoll__send / redcoll__recv with view ranks); redcoll__in_view_done
   passes a failure back to c. */
static void redcoll__in_view(const redcoll__ctx *c, const redcoll_transport *v, redcoll__ctx *lc) {
    *lc = *c;
    lc->t = v; lc->rank = v->rank; lc->size = v->size;
}
static void redcoll__in_view_done(redcoll__ctx *c, const redcoll__ctx *lc) {
    if (!lc->err || c->err) return;
    c->err = lc->err;
    if (redcoll__level_elsewhere(c, lc->t) && c->t->abort) c->t->abort(c->t->user, c->err); /* the other nodes wait on c->t */
}

/* The view of the ranks at position `pos` of every node that has one (view
   rank = the node's place among them); `ranks`: room for N ints, kept
   while the view is used. Returns the view size. */
static int redcoll__cross_view(const redcoll__ctx *c, const redcoll__nodes *nd, int pos, int *ranks,
                               redcoll_group *v) {
    int g, n = 0, me = 0;
    for (g = 0; g < nd->N; ++g) {
        if (redcoll__node_size(nd, g) <= pos) continue;
        if (g == nd->mine) me = n;
        ranks[n++] = redcoll__nodes_rank(nd, nd->first[g] + pos);
    }
    redcoll__group_make(v, c->t, ranks, 0, n, REDCOLL__GROUP_ID_CROSS, me);
    return n;
}

/* Runs collective `coll` on view v with AUTO's row for that level alone:
   inside a node (share 0) under the intra links, across nodes under the
   inter links with `share` messages on each node's link at once. bytes and
   counts: what AUTO sees (redcoll_select's bytes; counts for allgatherv and
   reduce_scatter). The level's schedule sees the level's model too. */
static void redcoll__run_level(redcoll__ctx *c, const redcoll_transport *v, redcoll_coll coll, size_t bytes,
                               const size_t *counts, const redcoll__args *a, int share) {
    redcoll__ctx lc;
    redcoll__args la = *a;
    const redcoll__row *row;
    int elsewhere = redcoll__level_elsewhere(c, v);
    if (c->err) return;
    lc = *c;
    lc.t = v; lc.rank = v->rank; lc.size = v->size; lc.coll = coll;
    lc.o.model = redcoll__level_model(&c->o.model, share > 0, share);
    if (share > 0 || elsewhere) /* bytes cross the network, or move as the node's transport moves them */
        lc.o.transport_flags &= ~(unsigned)REDCOLL_TRANSPORT_PEER_REDUCE;
    if (share == 0 && elsewhere && v->recv_reduce) lc.o.transport_flags |= v->flags & REDCOLL_TRANSPORT_PEER_REDUCE;
    lc.o.ranks_per_node = 0;
    lc.shape.nodes = 1; lc.shape.kmax = lc.shape.kmin = v->size;
    row = redcoll__find(coll, redcoll__select_for(&lc, coll, v->size, bytes, counts));
    if (!row) { redcoll__fail(c, REDCOLL_ERR_INVALID_ARG); return; }
    la.variant = row->variant;
    c->err = row->run(&lc, &la);
    if (c->err && elsewhere && c->t->abort) c->t->abort(c->t->user, c->err); /* the other nodes wait on c->t */
}

/* The block layout of node_split: counts (k) and displs (k + 1) of the
   node's k positions, B blocks of L then zeros. From the scratch (2k + 1). */
static size_t *redcoll__node_blocks(redcoll__ctx *c, const redcoll__segs *L, int B, int k) {
    size_t *cnt = (size_t *)redcoll__alloc_bytes(c, sizeof(size_t) * (2 * (size_t)k + 1)), *dsp;
    int j;
    if (!cnt) return NULL;
    dsp = cnt + k;
    dsp[0] = 0;
    for (j = 0; j < k; ++j) {
        cnt[j] = j < B ? redcoll__seg_len(L, j, j + 1) : 0;
        dsp[j + 1] = dsp[j] + cnt[j];
    }
    return cnt;
}

static void redcoll__node_blocks_free(redcoll__ctx *c, size_t *cnt, int k) {
    redcoll__free_bytes(c, cnt, sizeof(size_t) * (2 * (size_t)k + 1));
}

/* node_split's last step on node view v (k ranks): this rank's block, at
   `mine` in `whole`, to every rank of the node, so each has all n
   elements in `whole` (an allgatherv of the node_blocks layout cnt). */
static void redcoll__node_blocks_share(redcoll__ctx *c, const redcoll_transport *v, const redcoll__args *a,
                                       const size_t *cnt, int k, const void *mine, void *whole, size_t n) {
    redcoll__args la = *a;
    la.count = 0; la.counts = cnt; la.displs = cnt + k;
    la.sbuf = mine;
    la.rbuf = whole;
    la.in_place = 0;
    redcoll__run_level(c, v, REDCOLL_COLL_ALLGATHERV, n * c->esize, cnt, &la, 0);
}

/* What node_split's schedules share: the node plan, this rank's node (k
   ranks), the B blocks of n (B the smallest node's rank count) and this
   rank's block (off, len: 0 beyond position B - 1), the block layout cnt
   (redcoll__node_blocks) and room for a cross view's N ranks. NULL cnt or
   cross: out of memory (c->err); redcoll__split_close releases what was
   taken either way. */
typedef struct redcoll__split {
    redcoll__nodes nd;
    int            k, B, *cross;
    redcoll__segs  L;
    size_t         off, len, *cnt;
} redcoll__split;

static redcoll_result redcoll__split_open(redcoll__ctx *c, redcoll__split *sp, size_t n, int runs) {
    REDCOLL_MEMSET(sp, 0, sizeof *sp);
    if (redcoll__nodes_plan(c, &sp->nd, runs)) return c->err;
    sp->k = redcoll__node_size(&sp->nd, sp->nd.mine);
    sp->B = sp->nd.kmin;
    sp->L = redcoll__segs_make(n, sp->B, NULL);
    if (sp->nd.pos < sp->B) {
        sp->off = redcoll__seg_off(&sp->L, sp->nd.pos);
        sp->len = redcoll__seg_len(&sp->L, sp->nd.pos, sp->nd.pos + 1);
    }
    sp->cnt = redcoll__node_blocks(c, &sp->L, sp->B, sp->k);
    sp->cross = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)sp->nd.N);
    return c->err;
}

static void redcoll__split_close(redcoll__ctx *c, redcoll__split *sp) {
    if (sp->cross) redcoll__free_bytes(c, sp->cross, sizeof(int) * (size_t)sp->nd.N);
    if (sp->cnt) redcoll__node_blocks_free(c, sp->cnt, sp->k);
    if (sp->nd.first) redcoll__nodes_free(c, &sp->nd);
}

/* ---- node_split's pipeline (long vectors) ----
   Each rank moves its node's share of the network bytes while the node's
   links sit idle in the plain schedule's first and last levels. The vector
   is cut into C chunks, and chunk j's network allreduce runs while the
   node reduce-scatters chunk j + 1 and allgathers chunk j - 1: a network
   step is posted with isend / irecv (a transfer the network card moves),
   then the ring steps inside the node due by its end (as many as fit in
   its modeled time, redcoll__pipe_due), then it is waited for. Inside a
   node: ring reduce-scatter and ring allgather over the node's k ranks
   (block i of a chunk to position i < B, as node_split's layout); across:
   recursive halving and doubling among the N nodes (N a power of two).
   Commutative ops only (the ring reduces out of rank order), transports
   with non-blocking transfers; C = 1 is node_split's plain schedule.
   The modeled time follows the schedule step by step: each network step
   lasts max(its own time with B streams sharing the link, the ring steps
   done meanwhile). */

#define REDCOLL__PIPE_MAX_CHUNKS 64

/* The modeled times of one chunk's 2 lg N network steps (x, room for 64)
   on blocks of b elements, and of one ring step inside (rs: reduce-scatter,
   ag: allgather) on blocks of b. */
static int redcoll__pipe_steps(const redcoll_cost_model *m, int peer, double b, double E, int N, int B, double *x,
                               double *rs, double *ag) {
    double ia = m->f_alpha * redcoll__inter_alpha(m), ib = m->f_beta * redcoll__inter_beta(m);
    int L = redcoll__ceil_lg(N), s;
    for (s = 0; s < 2 * L; ++s) {
        double h = b * E / (double)((size_t)2 << (s < L ? s : 2 * L - 1 - s)); /* bytes each way */
        x[s] = ia + (double)B * h * ib + (s < L ? h * m->gamma : 0);
    }
    *rs = m->alpha + b * E * ((peer ? 0 : m->beta) + m->gamma);
    *ag = m->alpha + b * E * m->beta;
    return 2 * L;
}

/* The ring steps (of ns) due by the end of network step s (of S with times
   x): ns in proportion to the steps' times. */
static int redcoll__pipe_due(const double *x, int S, int s, int ns) {
    double tot = 0, cum = 0;
    int u;
    for (u = 0; u < S; ++u) { tot += x[u]; if (u <= s) cum += x[u]; }
    return (int)((double)ns * cum / tot + 0.5);
}

/* The pipeline's modeled time for n elements in C chunks on N nodes of k
   ranks (B blocks), or -1 when a chunk's blocks have fewer than N
   elements. */
static double redcoll__pipe_time(const redcoll_cost_model *m, int peer, size_t n, double E, int N, int k, int B,
                                 int C) {
    double x[64], rs, ag, t = 0;
    size_t b = (n / (size_t)C) / (size_t)B;
    int S, it, s;
    if (b < (size_t)N) return -1;
    S = redcoll__pipe_steps(m, peer, redcoll__cdiv((n + (size_t)C - 1) / (size_t)C, (size_t)B), E, N, B, x, &rs, &ag);
    for (it = -1; it <= C; ++it) {
        int nrs = it + 1 < C ? k - 1 : 0, ns = nrs + (it >= 1 ? k - 1 : 0), done = 0, due;
        double in;
        for (s = 0; it >= 0 && it < C && s < S; ++s, done = due) {
            due = redcoll__pipe_due(x, S, s, ns);
            in = (double)(due < nrs ? due : nrs) - (done < nrs ? done : nrs);
            in = in * rs + ((double)(due - done) - in) * ag;
            t += in > x[s] ? in : x[s];
        }
        in = (double)(nrs - (done < nrs ? done : nrs));
        t += in * rs + ((double)(ns - done) - in) * ag;
    }
    return t;
}

/* The chunks node_split's allreduce runs in (1: the plain schedule) and
   their modeled time: the fastest C of 2, 4, .. 64 when it beats the plain
   schedule with halving levels (lg k and 2 lg N steps, the bytes of
   Rabenseifner's allreduce at each level: what AUTO's levels come to for
   such vectors). Every rank gets the same answer (the model and the node
   shape alike). */
static int redcoll__pipe_chunks(const redcoll_cost_model *m, int peer, size_t n, double E, int N, int k, int B,
                                double *time) {
    double ia = redcoll__inter_alpha(m), ib = redcoll__inter_beta(m), V = (double)n * E, f = (k - 1.0) / k;
    double plain = 2 * redcoll__ceil_lg(k) * m->alpha + f * V * ((peer ? 0 : m->beta) + m->gamma + m->beta) +
                   2 * redcoll__ceil_lg(N) * ia + (N - 1.0) / N * (V / B) * (2 * B * ib + m->gamma);
    double tb = -1;
    int C, best = 1;
    if (N < 2 || (N & (N - 1)) || B < 2 || 2 * redcoll__ceil_lg(N) > 64) return 1;
    for (C = 2; C <= REDCOLL__PIPE_MAX_CHUNKS; C *= 2) {
        double t = redcoll__pipe_time(m, peer, n, E, N, k, B, C);
        if (t < 0) break;
        if (t < plain && (tb < 0 || t < tb)) { tb = t; best = C; }
    }
    if (time) *time = tb;
    return best;
}

/* One ring step inside the node (j: step of the reduce-scatter, or with
   ag of the allgather) on chunk `ch` of n in C (blocks of position i < B:
   segment i of the chunk; positions from B on: empty). */
static void redcoll__pipe_ring(redcoll__ctx *lc, char *buf, size_t n, int C, int ch, int B, int j, int ag,
                               void *tmp) {
    redcoll__segs CH = redcoll__segs_make(n, C, NULL);
    redcoll__segs K = redcoll__segs_make(redcoll__seg_len(&CH, ch, ch + 1), B, NULL);
    int k = lc->size, q = lc->rank, si = ((q - j - 1 + ag) % k + k) % k, ri = ((q - j - 2 + ag) % k + k) % k;
    size_t so = si < B ? redcoll__seg_off(&K, si) : K.n, sl = si < B ? redcoll__seg_len(&K, si, si + 1) : 0;
    size_t ro = ri < B ? redcoll__seg_off(&K, ri) : K.n, rl = ri < B ? redcoll__seg_len(&K, ri, ri + 1) : 0;
    char *at = redcoll__at(lc, buf, redcoll__seg_off(&CH, ch));
    if (ag) redcoll__sendrecv(lc, (q + 1) % k, redcoll__at(lc, at, so), sl, (q - 1 + k) % k, redcoll__at(lc, at, ro), rl);
    else redcoll__sendrecv_reduce(lc, (q + 1) % k, redcoll__at(lc, at, so), sl, (q - 1 + k) % k, redcoll__at(lc, at, ro),
                                  redcoll__at(lc, at, ro), rl, 1, tmp);
}

/* Ring step `done` of the node's steps while chunk `it` crosses the
   network: the first nrs are chunk it + 1's reduce-scatter, the rest
   chunk it - 1's allgather. */
static void redcoll__pipe_ring_next(redcoll__ctx *lc, char *buf, size_t n, int C, int B, int it, int nrs, int done,
                                    void *tmp) {
    int ag = done >= nrs;
    redcoll__pipe_ring(lc, buf, n, C, ag ? it - 1 : it + 1, B, ag ? done - nrs : done, ag, tmp);
}

/* node_split's pipeline (see above) in rbuf: C chunks, the node's ring
   steps between the network steps. */
static void redcoll__allreduce_node_piped(redcoll__ctx *c, const redcoll__args *a, redcoll__split *sp, int C) {
    redcoll_group v, x;
    redcoll__ctx lc, xc;
    redcoll__segs CH;
    size_t n = a->count, cmax = (n + (size_t)C - 1) / (size_t)C, bmax = (cmax + (size_t)sp->B - 1) / (size_t)sp->B;
    size_t tl = 0, xl = bmax / 2 + (size_t)sp->nd.N;
    double xt[64], rs, ag;
    int k = sp->k, B = sp->B, N = sp->nd.N, me = sp->nd.mine, cross = sp->nd.pos < B, it, S;
    char *buf = (char *)a->rbuf, *tmp = NULL, *xtmp = NULL;
    redcoll__node_view(c, &sp->nd, &v);
    redcoll__in_view(c, &v.t, &lc);
    tl = redcoll__stage_len(&lc, bmax);
    tmp = (char *)redcoll__alloc(c, tl);
    if (cross) xtmp = (char *)redcoll__alloc(c, xl);
    if (c->err) goto done;
    if (!a->in_place) redcoll__copy(c, buf, a->sbuf, n);
    if (cross) {
        redcoll__cross_view(c, &sp->nd, sp->nd.pos, sp->cross, &x);
        redcoll__in_view(c, &x.t, &xc);
    }
    S = redcoll__pipe_steps(&c->o.model, (c->o.transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE) != 0,
                            (double)bmax, (double)c->esize, N, B, xt, &rs, &ag);
    CH = redcoll__segs_make(n, C, NULL);
    for (it = -1; it <= C; ++it) {
        int nrs = it + 1 < C ? k - 1 : 0, ns = nrs + (it >= 1 ? k - 1 : 0), done = 0, s, lo = 0, hi = N;
        redcoll__segs X;
        char *blk = NULL;
        if (cross && it >= 0 && it < C) {
            redcoll__segs K = redcoll__segs_make(redcoll__seg_len(&CH, it, it + 1), B, NULL);
            blk = redcoll__at(c, buf, redcoll__seg_off(&CH, it) + redcoll__seg_off(&K, sp->nd.pos));
            X = redcoll__segs_make(redcoll__seg_len(&K, sp->nd.pos, sp->nd.pos + 1), N, NULL);
        }
        for (s = 0; blk && s < S; ++s) { /* network step s of chunk it: halving, then doubling */
            redcoll_request rq[2];
            int nreq = 0, L = S / 2, d = s < L ? N >> (s + 1) : 1 << (s - L), peer = me ^ d, due;
            int slo, shi, rlo, rhi; /* what goes, what comes (segments of X) */
            if (s < L) { /* keep the half on my side of d */
                int mid = lo + d;
                if (me & d) { slo = lo; shi = mid; rlo = mid; rhi = hi; }
                else { slo = mid; shi = hi; rlo = lo; rhi = mid; }
            } else {
                slo = lo; shi = hi;
                rlo = me & d ? lo - d : hi; rhi = rlo + d;
            }
            redcoll__ipost(&xc, 1, peer, redcoll__at(c, blk, redcoll__seg_off(&X, slo)), redcoll__seg_len(&X, slo, shi), rq, &nreq);
            redcoll__ipost(&xc, 0, peer, s < L ? xtmp : redcoll__at(c, blk, redcoll__seg_off(&X, rlo)),
                           redcoll__seg_len(&X, rlo, rhi), rq, &nreq);
            for (due = redcoll__pipe_due(xt, S, s, ns); done < due; ++done)
                redcoll__pipe_ring_next(&lc, buf, n, C, B, it, nrs, done, tmp);
            redcoll__waitall(&xc, rq, nreq);
            if (s < L) redcoll__reduce3(&xc, xtmp, redcoll__at(c, blk, redcoll__seg_off(&X, rlo)),
                                        redcoll__at(c, blk, redcoll__seg_off(&X, rlo)), redcoll__seg_len(&X, rlo, rhi), 0);
            if (s < L) { lo = rlo; hi = rhi; }
            else { lo = lo < rlo ? lo : rlo; hi = hi > rhi ? hi : rhi; }
        }
        for (; done < ns; ++done) /* the node's steps left (all of them beyond position B - 1) */
            redcoll__pipe_ring_next(&lc, buf, n, C, B, it, nrs, done, tmp);
    }
    if (cross) redcoll__in_view_done(c, &xc);
    redcoll__in_view_done(c, &lc);
done:
    redcoll__free(c, xtmp, xl);
    redcoll__free(c, tmp, tl);
}

/* Allreduce, node_split: reduce-scatter of the B blocks inside every node
   (block i to position i), allreduce of block i among the ranks at
   position i (N nodes, B such allreduces sharing each node's link), then
   allgather inside. Cost: RS(k, n) + AR(N, n/B; inter_beta B) + AG(k, n),
   each level's best row; the network part moves 2 (N-1)/N n bytes each way
   per node, the least possible. Where the model prices it faster (long
   vectors, commutative ops, non-blocking transfers, N a power of two), the
   pipeline above instead. Scratch: the levels'; the pipeline's two blocks. */
static redcoll_result redcoll__allreduce_node_split(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__split sp;
    redcoll_group v;
    redcoll__args la;
    size_t n = a->count, off, len;
    int k;
    char *rbuf = (char *)a->rbuf;
    if (redcoll__split_open(c, &sp, n, !c->op.commutative)) goto done;
    k = sp.k; off = sp.off; len = sp.len;
    if (c->op.commutative && c->t->isend && c->t->irecv && c->t->waitall) {
        int C = redcoll__pipe_chunks(&c->o.model, (c->o.transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE) != 0, n,
                                     (double)c->esize, sp.nd.N, sp.nd.kmax, sp.B, NULL);
        if (C > 1) { redcoll__allreduce_node_piped(c, a, &sp, C); goto done; }
    }
    redcoll__node_view(c, &sp.nd, &v);
    la = *a;
    la.count = 0; la.counts = sp.cnt; la.displs = sp.cnt + k;
    if (k > 1) { /* 1: block pos of the node's partial result */
        la.sbuf = a->in_place ? a->rbuf : a->sbuf;
        la.rbuf = a->in_place ? a->rbuf : redcoll__at(c, rbuf, off);
        redcoll__run_level(c, &v.t, REDCOLL_COLL_REDUCE_SCATTER, n * c->esize, sp.cnt, &la, 0);
        if (a->in_place) redcoll__move(c, redcoll__at(c, rbuf, off), rbuf, len); /* from the front */
    }
    if (sp.nd.pos < sp.B && len > 0) { /* 2: block pos over the nodes */
        redcoll_group x;
        la = *a;
        la.count = len; la.counts = la.displs = NULL;
        la.rbuf = redcoll__at(c, rbuf, off);
        la.in_place = k > 1 || a->in_place; /* a node of one: the input is read where it is */
        la.sbuf = la.in_place ? la.rbuf : a->sbuf;
        if (sp.nd.N > 1) {
            redcoll__cross_view(c, &sp.nd, sp.nd.pos, sp.cross, &x);
            redcoll__run_level(c, &x.t, REDCOLL_COLL_ALLREDUCE, len * c->esize, NULL, &la, sp.B);
        } else if (!la.in_place) {
            redcoll__copy(c, la.rbuf, la.sbuf, len);
        }
    }
    if (k > 1) /* 3: the blocks to every rank of the node */
        redcoll__node_blocks_share(c, &v.t, a, sp.cnt, k, redcoll__at(c, rbuf, off), a->rbuf, n);
done:
    redcoll__split_close(c, &sp);
    return c->err;
}

/* Allreduce, node_leader: reduce inside every node to its first rank,
   allreduce among those leaders (one message per node on the network at a
   time), bcast inside. Cost: reduce(k, n) + AR(N, n; inter) + bcast(k, n),
   each level's best row. Scratch: the levels'. */
static redcoll_result redcoll__allreduce_node_leader(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__nodes nd;
    redcoll_group v, x;
    redcoll__args la;
    size_t bytes = a->count * c->esize;
    int k, *cross;
    if (redcoll__nodes_plan(c, &nd, !c->op.commutative)) return c->err;
    k = redcoll__node_size(&nd, nd.mine);
    cross = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)nd.N);
    if (!cross) { redcoll__nodes_free(c, &nd); return c->err; }
    redcoll__node_view(c, &nd, &v);
    if (k > 1) { /* the node's partial result to its leader, in its rbuf */
        la = *a;
        la.root = 0;
        la.rbuf = nd.pos == 0 ? a->rbuf : NULL;
        la.in_place = nd.pos == 0 && a->in_place;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_REDUCE, bytes, NULL, &la, 0);
    }
    if (nd.pos == 0) {
        la = *a;
        la.in_place = k > 1 || a->in_place;
        la.sbuf = la.in_place ? a->rbuf : a->sbuf;
        if (nd.N > 1) {
            redcoll__cross_view(c, &nd, 0, cross, &x);
            redcoll__run_level(c, &x.t, REDCOLL_COLL_ALLREDUCE, bytes, NULL, &la, 1);
        } else if (!la.in_place) {
            redcoll__copy(c, a->rbuf, a->sbuf, a->count);
        }
    }
    if (k > 1) {
        la = *a;
        la.sbuf = a->rbuf; la.root = 0; la.in_place = 0;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_BCAST, bytes, NULL, &la, 0);
    }
    redcoll__free_bytes(c, cross, sizeof(int) * (size_t)nd.N);
    redcoll__nodes_free(c, &nd);
    return c->err;
}

/* The node holding `root` and root's place there. */
static void redcoll__node_of_root(const redcoll__nodes *nd, int root, int *g_out, int *pos_out) {
    int g, i;
    for (g = 0; g < nd->N; ++g)
        for (i = nd->first[g]; i < nd->first[g + 1]; ++i)
            if (redcoll__nodes_rank(nd, i) == root) { *g_out = g; *pos_out = i - nd->first[g]; return; }
}

/* The view of one leader per node: position lead_pos on node lead_g, the
   first rank elsewhere (ranks: room for N ints). */
static void redcoll__leaders_view(const redcoll__ctx *c, const redcoll__nodes *nd, int lead_g, int lead_pos,
                                  int *ranks, redcoll_group *v) {
    int g;
    for (g = 0; g < nd->N; ++g) ranks[g] = redcoll__nodes_rank(nd, nd->first[g] + (g == lead_g ? lead_pos : 0));
    redcoll__group_make(v, c->t, ranks, 0, nd->N, REDCOLL__GROUP_ID_CROSS, nd->mine);
}

/* Reduce, node_leader: reduce inside every node to its leader (the root on
   the root's node), then among the leaders to the root (Hasanov &
   Lastovetsky's Algorithm 1 with the nodes as groups). Cost: reduce(k, n)
   + reduce(N, n; inter). Scratch: one vector on the other leaders. */
static redcoll_result redcoll__reduce_node_leader(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__nodes nd;
    redcoll_group v;
    redcoll__args la;
    size_t n = a->count, bytes = n * c->esize;
    int k, R = 0, pr = 0, lead, is_root = c->rank == a->root, *ranks;
    void *part = NULL;
    if (redcoll__nodes_plan(c, &nd, !c->op.commutative)) return c->err;
    redcoll__node_of_root(&nd, a->root, &R, &pr);
    k = redcoll__node_size(&nd, nd.mine);
    lead = nd.pos == (nd.mine == R ? pr : 0);
    ranks = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)nd.N);
    if (lead && !is_root && k > 1 && nd.N > 1) part = redcoll__alloc(c, n);
    if (c->err) goto done;
    if (k > 1) {
        redcoll__node_view(c, &nd, &v);
        la = *a;
        la.root = nd.mine == R ? pr : 0;
        la.rbuf = is_root ? a->rbuf : part;
        la.in_place = is_root && a->in_place;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_REDUCE, bytes, NULL, &la, 0);
    }
    if (lead && nd.N > 1) {
        redcoll__leaders_view(c, &nd, R, pr, ranks, &v);
        la = *a;
        la.root = R;
        la.sbuf = k == 1 ? a->sbuf : is_root ? a->rbuf : part;
        la.rbuf = is_root ? a->rbuf : NULL;
        la.in_place = is_root && (k > 1 || a->in_place);
        redcoll__run_level(c, &v.t, REDCOLL_COLL_REDUCE, bytes, NULL, &la, 1);
    } else if (is_root && k == 1 && !a->in_place) {
        redcoll__copy(c, a->rbuf, a->sbuf, n); /* p = 1 */
    }
done:
    redcoll__free(c, part, n);
    if (ranks) redcoll__free_bytes(c, ranks, sizeof(int) * (size_t)nd.N);
    redcoll__nodes_free(c, &nd);
    return c->err;
}

/* Reduce, node_split: reduce-scatter of B blocks inside every node,
   reduce of block i among the ranks at position i to the root's node, and
   the blocks to the root there. Cost: RS(k, n) + reduce(N, n/B; inter_beta
   B) + (B - 1) one-way messages of n/B to the root. Scratch: one block. */
static redcoll_result redcoll__reduce_node_split(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__split sp;
    redcoll_group v;
    redcoll__args la;
    size_t n = a->count, len = 0;
    int k = 0, B, R = 0, pr = 0, i, is_root = c->rank == a->root;
    char *blk = NULL;
    if (redcoll__split_open(c, &sp, n, !c->op.commutative)) goto done;
    redcoll__node_of_root(&sp.nd, a->root, &R, &pr);
    k = sp.k; B = sp.B; len = sp.len;
    if (k > 1 && len > 0) blk = (char *)redcoll__alloc(c, len);
    if (c->err) goto done;
    if (k > 1) { /* 1: block pos of the node's partial result */
        redcoll__node_view(c, &sp.nd, &v);
        la = *a;
        la.count = 0; la.counts = sp.cnt; la.displs = sp.cnt + k;
        la.rbuf = blk; la.in_place = 0;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_REDUCE_SCATTER, n * c->esize, sp.cnt, &la, 0);
    }
    if (sp.nd.pos < B && len > 0 && sp.nd.N > 1) { /* 2: block pos over the nodes, to the root's node */
        redcoll_group x;
        la = *a;
        la.count = len; la.counts = la.displs = NULL;
        la.root = R;
        if (k == 1) { /* the whole vector (B = 1), from the input */
            la.rbuf = is_root ? a->rbuf : NULL;
            la.in_place = is_root && a->in_place;
        } else {
            la.sbuf = blk;
            la.rbuf = sp.nd.mine == R ? blk : NULL;
            la.in_place = sp.nd.mine == R;
        }
        redcoll__cross_view(c, &sp.nd, sp.nd.pos, sp.cross, &x);
        redcoll__run_level(c, &x.t, REDCOLL_COLL_REDUCE, len * c->esize, NULL, &la, B);
    }
    if (sp.nd.mine == R && k > 1 && !c->err) { /* 3: the blocks to the root (view rank pr) */
        redcoll__ctx lc;
        redcoll__in_view(c, &v.t, &lc);
        if (is_root) {
            for (i = 0; i < B; ++i) {
                char *to = redcoll__at(c, a->rbuf, redcoll__seg_off(&sp.L, i));
                size_t m = redcoll__seg_len(&sp.L, i, i + 1);
                if (i == pr) redcoll__copy(c, to, blk, m);
                else if (m > 0) redcoll__recv(&lc, i, to, m);
            }
        } else if (sp.nd.pos < B && len > 0) {
            redcoll__send(&lc, pr, blk, len);
        }
        redcoll__in_view_done(c, &lc);
    } else if (is_root && sp.nd.N == 1 && !a->in_place) {
        redcoll__copy(c, a->rbuf, a->sbuf, n); /* p = 1 */
    }
done:
    redcoll__free(c, blk, len);
    redcoll__split_close(c, &sp);
    return c->err;
}

/* Bcast, node_leader: bcast among the leaders from the root (the root leads
   its node), then inside every node from its leader. Cost: bcast(N, n;
   inter) + bcast(k, n). */
static redcoll_result redcoll__bcast_node_leader(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__nodes nd;
    redcoll_group v;
    redcoll__args la;
    size_t bytes = a->count * c->esize;
    int R = 0, pr = 0, lpos, *ranks;
    if (redcoll__nodes_plan(c, &nd, 0)) return c->err;
    redcoll__node_of_root(&nd, a->root, &R, &pr);
    lpos = nd.mine == R ? pr : 0;
    ranks = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)nd.N);
    if (!ranks) { redcoll__nodes_free(c, &nd); return c->err; }
    la = *a;
    if (nd.pos == lpos && nd.N > 1) {
        redcoll__leaders_view(c, &nd, R, pr, ranks, &v);
        la.root = R;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_BCAST, bytes, NULL, &la, 1);
    }
    if (redcoll__node_size(&nd, nd.mine) > 1) {
        redcoll__node_view(c, &nd, &v);
        la.root = lpos;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_BCAST, bytes, NULL, &la, 0);
    }
    redcoll__free_bytes(c, ranks, sizeof(int) * (size_t)nd.N);
    redcoll__nodes_free(c, &nd);
    return c->err;
}

/* Bcast, node_split: the root hands block i of B to position i of its node
   (B - 1 one-way messages), block i goes over the nodes among the ranks at
   position i, B bcasts sharing each link, and an allgather inside every
   node completes the vector (van de Geijn's scatter-allgather, by node).
   Cost: (B - 1)(alpha_uni + n/B beta_uni) + bcast(N, n/B; inter_beta B)
   + AG(k, n). */
static redcoll_result redcoll__bcast_node_split(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__split sp;
    redcoll_group v;
    redcoll__args la;
    size_t off, len;
    int k, R = 0, pr = 0, i;
    char *buf = (char *)a->rbuf;
    if (redcoll__split_open(c, &sp, a->count, 0)) goto done;
    redcoll__node_of_root(&sp.nd, a->root, &R, &pr);
    k = sp.k; off = sp.off; len = sp.len;
    if (k > 1) redcoll__node_view(c, &sp.nd, &v);
    if (sp.nd.mine == R && k > 1) { /* 1: the blocks to positions 0 .. B-1 of the root's node (view rank pr) */
        redcoll__ctx lc;
        redcoll__in_view(c, &v.t, &lc);
        if (c->rank == a->root) {
            for (i = 0; i < sp.B; ++i)
                if (i != pr && redcoll__seg_len(&sp.L, i, i + 1) > 0)
                    redcoll__send(&lc, i, redcoll__at(c, buf, redcoll__seg_off(&sp.L, i)), redcoll__seg_len(&sp.L, i, i + 1));
        } else if (sp.nd.pos < sp.B && len > 0) {
            redcoll__recv(&lc, pr, redcoll__at(c, buf, off), len);
        }
        redcoll__in_view_done(c, &lc);
    }
    if (sp.nd.pos < sp.B && len > 0 && sp.nd.N > 1) { /* 2: block pos over the nodes */
        redcoll_group x;
        la = *a;
        la.count = len;
        la.sbuf = la.rbuf = redcoll__at(c, buf, off);
        la.root = R;
        redcoll__cross_view(c, &sp.nd, sp.nd.pos, sp.cross, &x);
        redcoll__run_level(c, &x.t, REDCOLL_COLL_BCAST, len * c->esize, NULL, &la, sp.B);
    }
    if (k > 1) /* 3: the blocks to every rank of the node */
        redcoll__node_blocks_share(c, &v.t, a, sp.cnt, k, redcoll__at(c, buf, off), buf, a->count);
done:
    redcoll__split_close(c, &sp);
    return c->err;
}

/* Allgather, node_leader (nodes: runs of consecutive ranks, so a node's
   blocks are one range of rbuf): gather inside every node to its first
   rank, allgatherv of the nodes' ranges among the leaders, bcast of the
   whole inside. Cost: gather(k, b) + AGv(N, k b; inter) + bcast(k, p b). */
static redcoll_result redcoll__allgather_node_leader(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__nodes nd;
    redcoll_group v;
    redcoll__args la;
    size_t b = a->count, total = b * (size_t)c->size, *cnt = NULL;
    int k, g, *cross = NULL;
    char *rbuf = (char *)a->rbuf, *mine_at;
    if (redcoll__nodes_plan(c, &nd, 1)) return c->err;
    k = redcoll__node_size(&nd, nd.mine);
    mine_at = redcoll__at(c, rbuf, (size_t)redcoll__nodes_rank(&nd, nd.first[nd.mine]) * b);
    cross = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)nd.N);
    cnt = (size_t *)redcoll__alloc_bytes(c, sizeof(size_t) * (2 * (size_t)nd.N + 1));
    if (!cross || !cnt) goto done;
    redcoll__node_view(c, &nd, &v);
    if (k > 1) {
        la = *a;
        la.rbuf = nd.pos == 0 ? mine_at : NULL;
        la.root = 0;
        la.in_place = nd.pos == 0;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_GATHER, b * c->esize, NULL, &la, 0);
    }
    if (nd.pos == 0 && nd.N > 1) {
        redcoll_group x;
        size_t *dsp = cnt + nd.N;
        dsp[0] = 0;
        for (g = 0; g < nd.N; ++g) {
            cnt[g] = (size_t)redcoll__node_size(&nd, g) * b;
            dsp[g + 1] = dsp[g] + cnt[g];
        }
        la = *a;
        la.count = 0; la.counts = cnt; la.displs = dsp;
        la.sbuf = mine_at; la.rbuf = rbuf; la.in_place = 0;
        redcoll__cross_view(c, &nd, 0, cross, &x);
        redcoll__run_level(c, &x.t, REDCOLL_COLL_ALLGATHERV, total * c->esize, cnt, &la, 1);
    }
    if (k > 1) {
        la = *a;
        la.count = total; la.sbuf = la.rbuf = rbuf; la.root = 0; la.in_place = 0;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_BCAST, total * c->esize, NULL, &la, 0);
    }
done:
    if (cnt) redcoll__free_bytes(c, cnt, sizeof(size_t) * (2 * (size_t)nd.N + 1));
    if (cross) redcoll__free_bytes(c, cross, sizeof(int) * (size_t)nd.N);
    redcoll__nodes_free(c, &nd);
    return c->err;
}

/* Allgather, node_split (nodes: runs of consecutive ranks): allgather
   inside every node (its range D_g of rbuf), then D_g cut into B pieces
   and piece i of every node gathered among the ranks at position i (B
   allgathers sharing each link), then those gathered pieces exchanged
   inside the node. Cost: AG(k, b) + AGv(N, k b / B; inter_beta B) +
   AGv(k, (p - k) b). Scratch: one vector (the pieces, by position). */
static redcoll_result redcoll__allgather_node_split(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__nodes nd;
    redcoll_group v;
    redcoll__args la;
    size_t b = a->count, total = b * (size_t)c->size, *cnt = NULL, *pc = NULL, *pd, *bc, *xd = NULL;
    int k, B, g, i, *cross = NULL;
    char *rbuf = (char *)a->rbuf, *U = NULL;
    if (redcoll__nodes_plan(c, &nd, 1)) return c->err;
    k = redcoll__node_size(&nd, nd.mine);
    B = nd.kmin;
    if (k > 1) { /* 1: the node's blocks, in place in its range */
        redcoll__node_view(c, &nd, &v);
        la = *a;
        la.rbuf = redcoll__at(c, rbuf, (size_t)redcoll__nodes_rank(&nd, nd.first[nd.mine]) * b);
        redcoll__run_level(c, &v.t, REDCOLL_COLL_ALLGATHER, b * c->esize, NULL, &la, 0);
    }
    if (nd.N == 1) goto done;
    /* pc[i * N + g], pd: piece i of node g and its place in U (by position, then node);
       bc: per position of this node, the pieces it carries (2 k + 1 for counts, displs) */
    pc = (size_t *)redcoll__alloc_bytes(c, sizeof(size_t) * (2 * (size_t)B * (size_t)nd.N + 1));
    bc = cnt = (size_t *)redcoll__alloc_bytes(c, sizeof(size_t) * (2 * (size_t)k + 1));
    cross = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)nd.N);
    xd = (size_t *)redcoll__alloc_bytes(c, sizeof(size_t) * ((size_t)nd.N + 1));
    if (!pc || !cnt || !cross || !xd) goto done;
    pd = pc + (size_t)B * (size_t)nd.N;
    pd[0] = 0;
    for (i = 0; i < B; ++i)
        for (g = 0; g < nd.N; ++g) {
            redcoll__segs D = redcoll__segs_make((size_t)redcoll__node_size(&nd, g) * b, B, NULL);
            size_t j = (size_t)i * (size_t)nd.N + (size_t)g;
            pc[j] = redcoll__seg_len(&D, i, i + 1);
            pd[j + 1] = pd[j] + pc[j];
        }
    U = B == 1 ? rbuf : (char *)redcoll__alloc(c, total); /* one piece per node: U is rbuf itself */
    if (c->err) goto done;
    if (nd.pos < B) { /* 2: piece pos of every node, among the ranks at position pos */
        redcoll_group x;
        size_t j = (size_t)nd.pos * (size_t)nd.N, mine = j + (size_t)nd.mine;
        redcoll__segs D = redcoll__segs_make((size_t)k * b, B, NULL);
        char *at = redcoll__at(c, U, pd[j]);
        for (g = 0; g <= nd.N; ++g) xd[g] = pd[j + (size_t)g] - pd[j];
        if (B > 1)
            redcoll__copy(c, redcoll__at(c, U, pd[mine]),
                          redcoll__at(c, rbuf, (size_t)redcoll__nodes_rank(&nd, nd.first[nd.mine]) * b + redcoll__seg_off(&D, nd.pos)),
                          pc[mine]);
        la = *a;
        la.count = 0; la.counts = pc + j; la.displs = xd;
        la.sbuf = redcoll__at(c, U, pd[mine]); la.rbuf = at; la.in_place = 0;
        redcoll__cross_view(c, &nd, nd.pos, cross, &x);
        redcoll__run_level(c, &x.t, REDCOLL_COLL_ALLGATHERV, (pd[j + nd.N] - pd[j]) * c->esize, pc + j, &la, B);
    }
    if (k > 1 && !c->err) {
        /* 3: the pieces carried by the node's positions, to all of them; then into place */
        bc[k] = 0;
        for (i = 0; i < k; ++i) {
            bc[i] = i < B ? pd[(size_t)(i + 1) * (size_t)nd.N] - pd[(size_t)i * (size_t)nd.N] : 0;
            bc[k + i + 1] = bc[k + i] + bc[i];
        }
        la = *a;
        la.count = 0; la.counts = bc; la.displs = bc + k;
        la.sbuf = redcoll__at(c, U, bc[k + (nd.pos < B ? nd.pos : 0)]); la.rbuf = U; la.in_place = 0;
        redcoll__run_level(c, &v.t, REDCOLL_COLL_ALLGATHERV, total * c->esize, bc, &la, 0);
        for (i = 0; i < B; ++i)
            for (g = 0; g < nd.N; ++g) {
                redcoll__segs D = redcoll__segs_make((size_t)redcoll__node_size(&nd, g) * b, B, NULL);
                size_t j = (size_t)i * (size_t)nd.N + (size_t)g;
                if (g != nd.mine)
                    redcoll__copy(c, redcoll__at(c, rbuf, (size_t)redcoll__nodes_rank(&nd, nd.first[g]) * b + redcoll__seg_off(&D, i)),
                                  redcoll__at(c, U, pd[j]), pc[j]);
            }
    }
done:
    if (U && U != rbuf) redcoll__free(c, U, total);
    if (xd) redcoll__free_bytes(c, xd, sizeof(size_t) * ((size_t)nd.N + 1));
    if (cross) redcoll__free_bytes(c, cross, sizeof(int) * (size_t)nd.N);
    if (cnt) redcoll__free_bytes(c, cnt, sizeof(size_t) * (2 * (size_t)k + 1));
    if (pc) redcoll__free_bytes(c, pc, sizeof(size_t) * (2 * (size_t)B * (size_t)nd.N + 1));
    redcoll__nodes_free(c, &nd);
    return c->err;
}

/* ---- the node-aware rows' costs ----
   The levels as the schedules pick them (each level's best row under its
   model, priced as AUTO prices it), on the model's nodes: N nodes, k ranks
   on the largest, B on the smallest. Without two levels (no nodes, or the
   links between them as those inside) the rows run on one node. Estimates:
   the levels are added as if each started when the last ended everywhere,
   and irregular nodes are priced as the largest (test
   model/two levels: costs against the simulator states how far off). */

/* The call of one level (share: see redcoll__run_level) on p ranks, n
   elements (displs: p + 1 offsets, or NULL), as a one-level call: *at, its
   options in *lo. */
static void redcoll__level_in(const redcoll__cost_in *in, redcoll_options *lo, redcoll__cost_in *at, int p,
                              size_t n, const size_t *displs, int share) {
    *lo = *in->o;
    *at = *in;
    lo->model = redcoll__level_model(in->m, share > 0, share);
    lo->ranks_per_node = 0;
    if (share > 0) lo->transport_flags &= ~(unsigned)REDCOLL_TRANSPORT_PEER_REDUCE;
    at->o = lo; at->m = &lo->model;
    at->p = p; at->n = n; at->displs = displs; at->bound = -1;
    at->shape = redcoll__shape_of(p, 0);
}

/* The best row of coll for one level (redcoll__level_in's arguments). */
static double redcoll__level_cost(const redcoll__cost_in *in, redcoll_coll coll, int p, size_t n,
                                  const size_t *displs, int share) {
    redcoll_options lo;
    redcoll__cost_in at;
    if (p <= 1 || n == 0) return 0;
    redcoll__level_in(in, &lo, &at, p, n, displs, share);
    return redcoll__best_cost(coll, p, &at, NULL);
}

/* The nodes the rows are priced on: N, k (largest), B (smallest). */
static void redcoll__node_terms(const redcoll__cost_in *in, int *N, int *k, int *B) {
    if (in->two) { *N = in->shape.nodes; *k = in->shape.kmax; *B = in->shape.kmin; }
    else { *N = 1; *k = *B = in->p; }
}

/* node_split's B blocks of n among k positions, as offsets (k + 1; NULL
   when k is above the walks' limit: priced as even counts then). */
static const size_t *redcoll__node_displs(size_t *d, size_t n, int B, int k) {
    redcoll__segs L = redcoll__segs_make(n, B, NULL);
    int j;
    if (k > REDCOLL__WALK_MAX_P) return NULL;
    for (d[0] = 0, j = 0; j < k; ++j) d[j + 1] = d[j] + (j < B ? redcoll__seg_len(&L, j, j + 1) : 0);
    return d;
}

/* The root's one-way messages with the B blocks but its own (root 0): the
   gather of reduce's node_split, the scatter of its bcast. */
static double redcoll__node_fan(const redcoll__cost_in *in, int B) {
    redcoll__segs L = redcoll__segs_make(in->n, B, NULL);
    double t = 0;
    int i;
    for (i = 1; i < B; ++i) {
        size_t m = redcoll__seg_len(&L, i, i + 1);
        if (m) t += in->ua + (double)m * in->E * in->ub;
    }
    return t;
}

static double redcoll__node_split_cost(const redcoll__cost_in *in) {
    size_t d[REDCOLL__WALK_MAX_P + 1], blk;
    const size_t *dp;
    int N, k, B;
    redcoll_coll coll = in->row->info.coll;
    redcoll__node_terms(in, &N, &k, &B);
    if (coll == REDCOLL_COLL_ALLGATHER) { /* n: one block */
        size_t node = in->n * (size_t)k;
        if (N == 1) return redcoll__level_cost(in, REDCOLL_COLL_ALLGATHER, k, in->n, NULL, 0);
        return redcoll__level_cost(in, REDCOLL_COLL_ALLGATHER, k, in->n, NULL, 0) +
               redcoll__level_cost(in, REDCOLL_COLL_ALLGATHERV, N, (node + (size_t)B - 1) / (size_t)B * (size_t)N,
                                   NULL, B) +
               redcoll__level_cost(in, REDCOLL_COLL_ALLGATHERV, k, in->n * (size_t)in->p,
                                   redcoll__node_displs(d, in->n * (size_t)in->p, B, k), 0);
    }
    dp = redcoll__node_displs(d, in->n, B, k);
    blk = (in->n + (size_t)B - 1) / (size_t)B;
    switch (coll) {
    case REDCOLL_COLL_ALLREDUCE: { /* pipelined when that is faster (commutative ops;
                                      non-blocking transfers assumed) */
        double piped;
        if (!in->noncomm && redcoll__pipe_chunks(in->m, in->br == 0, in->n, in->E, N, k, B, &piped) > 1)
            return piped;
        return redcoll__level_cost(in, REDCOLL_COLL_REDUCE_SCATTER, k, in->n, dp, 0) +
               redcoll__level_cost(in, REDCOLL_COLL_ALLREDUCE, N, blk, NULL, B) +
               redcoll__level_cost(in, REDCOLL_COLL_ALLGATHERV, k, in->n, dp, 0);
    }
    case REDCOLL_COLL_REDUCE:
        return redcoll__level_cost(in, REDCOLL_COLL_REDUCE_SCATTER, k, in->n, dp, 0) +
               redcoll__level_cost(in, REDCOLL_COLL_REDUCE, N, blk, NULL, B) + redcoll__node_fan(in, B);
    default: { /* bcast: position i starts across when its block arrives, so the
                  bcasts overlap the root's sends and share the links less */
        double fan = redcoll__node_fan(in, B), first = in->ua + (double)blk * in->E * in->ub;
        double alone = fan + redcoll__level_cost(in, REDCOLL_COLL_BCAST, N, blk, NULL, 1);
        double shared = (fan > 0 ? first : 0) + redcoll__level_cost(in, REDCOLL_COLL_BCAST, N, blk, NULL, B);
        if (N == 1) shared = 0; /* one node: the root's sends only */
        return (alone > shared ? alone : shared) + redcoll__level_cost(in, REDCOLL_COLL_ALLGATHERV, k, in->n, dp, 0);
    }
    }
}

static double redcoll__node_leader_cost(const redcoll__cost_in *in) {
    int N, k, B;
    redcoll__node_terms(in, &N, &k, &B);
    switch (in->row->info.coll) {
    case REDCOLL_COLL_ALLREDUCE:
        return redcoll__level_cost(in, REDCOLL_COLL_REDUCE, k, in->n, NULL, 0) +
               redcoll__level_cost(in, REDCOLL_COLL_ALLREDUCE, N, in->n, NULL, 1) +
               redcoll__level_cost(in, REDCOLL_COLL_BCAST, k, in->n, NULL, 0);
    case REDCOLL_COLL_REDUCE:
        return redcoll__level_cost(in, REDCOLL_COLL_REDUCE, k, in->n, NULL, 0) +
               redcoll__level_cost(in, REDCOLL_COLL_REDUCE, N, in->n, NULL, 1);
    case REDCOLL_COLL_BCAST:
        return redcoll__level_cost(in, REDCOLL_COLL_BCAST, N, in->n, NULL, 1) +
               redcoll__level_cost(in, REDCOLL_COLL_BCAST, k, in->n, NULL, 0);
    default: /* allgather: n is one block */
        return redcoll__level_cost(in, REDCOLL_COLL_GATHER, k, in->n, NULL, 0) +
               redcoll__level_cost(in, REDCOLL_COLL_ALLGATHERV, N, in->n * (size_t)in->p, NULL, 1) +
               redcoll__level_cost(in, REDCOLL_COLL_BCAST, k, in->n * (size_t)in->p, NULL, 0);
    }
}

/* ---- node_lanes: several ranks of a node across at once (short vectors) ----
   Bruck et al. 1997's k-port exchange with a node's ranks as its ports:
   node_split crosses the network lg N times, each crossing an inter_alpha;
   here the ranks of a node that hold the same block reach r - 1 other
   nodes in one crossing (radix r), so lg N crossings become R with
   r_1 ... r_R >= N. Steps: the node's ranks beyond P (the largest power of
   two <= the smallest node) fold their vectors into position q - P, ...;
   the P ranks reduce-scatter the vector into B blocks (recursive halving)
   and allreduce block b among the g = P / B ranks holding it (recursive
   doubling), so each holds its node's block b; then per round j the
   rank of lane t < r_j - 1 sends it to the node t + 1 further along digit
   j of the node's index (radix r_j) and receives from the one t + 1
   before, and the g lanes combine what came (plus the node's own once)
   by recursive doubling; an allgather of the B blocks and the unfold end
   it. A round's link carries B (r_j - 1) blocks of n / B: fewer crossings
   cost more bytes, so B, g and the radices are the model's choice
   (redcoll__lanes_plan). The radices multiply to N, or to M, the largest
   power of two below N, and node M + i folds its blocks into node i
   first and gets the vector back last (any N). Commutative ops (the lanes
   combine in arrival order).
   Transposed plans (G > 1, G a power of two dividing P and M): the P ranks
   reduce-scatter into B = P blocks; in a group of G consecutive nodes,
   block q of node x goes to node x - x % G + q % G, rank q - q % G + x % G
   (rank q of node x and its peer swap: one message out and one in per
   rank, the own block stays), so node o of the group holds block
   o % G + G m of all G nodes on its G ranks G m .. G m + G - 1 (the lanes
   of slot m), which allreduce it; the rounds then run among the M / G
   groups on G lanes, the same swap brings the sums back, and the allgather
   of the P blocks ends it. The node's link carries (P - P / G) blocks of
   n / P per swap where an untransposed plan carries B (r - 1) blocks of
   n / B per round: a swap trades the lanes' copies for intra steps. */

typedef struct redcoll__lanes {
    int    P, B, g, R, r[32];
    int    G;              /* transposed in groups of G nodes (B = P, g = G); 1: not */
    int    S;              /* slots: the blocks the lanes of a round hold (P / g) */
    int    M;              /* nodes in the rounds (r_1 ... r_R = M); nodes M + i, i < N - M, fold into node i */
    double t;              /* modeled time */
} redcoll__lanes;

/* The position of lane u of the slot of the rank at position q. */
static int redcoll__lane_rank(const redcoll__lanes *pl, int q, int u) {
    return pl->G > 1 ? q - q % pl->G + u : u * pl->B + q % pl->B;
}

/* The modeled time of plan pl for n elements on nodes of up to k ranks. */
static double redcoll__lanes_time(const redcoll__lanes *pl, const redcoll_cost_model *m, int peer, size_t n,
                                  double E, int N, int k) {
    double br = peer ? 0 : m->beta, ia = redcoll__inter_alpha(m), ib = redcoll__inter_beta(m);
    double blk = redcoll__cdiv(n, (size_t)pl->B) * E, t = 0, h = (double)n * E;
    int folds = k > pl->P ? (k - pl->P + pl->P - 1) / pl->P : 0, d, j, lgg = redcoll__ceil_lg(pl->g);
    t += 2 * folds * m->f_alpha * m->alpha + folds * h * (m->f_beta * (br + m->beta) + m->gamma);
    for (d = pl->B / 2; d >= 1; d /= 2) { h /= 2; t += 2 * m->alpha + h * (br + m->gamma + m->beta); }
    t += lgg * (m->alpha + blk * (br + m->gamma)); /* the lanes' allreduce */
    if (pl->G > 1) t += 2 * (ia + (double)(pl->P - pl->S) * blk * ib); /* the swaps there and back */
    for (j = 0; j < pl->R; ++j)
        t += ia + (double)pl->S * (pl->r[j] - 1) * blk * ib + lgg * (m->alpha + blk * (br + m->gamma));
    if (pl->M < N) /* the folded nodes' blocks in, the vector back out */
        t += 2 * ia + (double)pl->P * (blk + (double)n * E) * ib + blk * m->gamma;
    return t;
}

/* Radices r_1 .. r_R of pl for M nodes (their product exactly M), each at
   most g + 1, as even as the divisors allow; 0 when there are none. */
static int redcoll__lanes_radices(redcoll__lanes *pl, int M, int R) {
    int rem = M, j;
    for (j = 0; j < R; ++j) {
        int want = 2, r = 0, d;
        for (;; ++want) { /* the least want with want^(R - j) >= rem */
            double pw = 1;
            int e;
            for (e = 0; e < R - j && pw < rem; ++e) pw *= want;
            if (pw >= rem) break;
        }
        for (d = want; d <= rem && d <= pl->g + 1 && !r; ++d) if (rem % d == 0) r = d;
        for (d = want - 1; d >= 2 && !r; --d) if (d <= pl->g + 1 && rem % d == 0) r = d;
        if (!r) return 0;
        pl->r[j] = r;
        rem /= r;
    }
    return rem == 1;
}

/* The fastest plan (B, g, the nodes in the rounds, radices) for n elements
   on N nodes of kmin .. kmax ranks; every rank gets the same. */
static void redcoll__lanes_plan(const redcoll_cost_model *m, int peer, size_t n, double E, int N, int kmin,
                                int kmax, redcoll__lanes *best) {
    redcoll__lanes pl;
    int P = redcoll__pof2_floor(kmin > 0 ? kmin : 1), B, G, R, mi, Ms[2];
    Ms[0] = N; Ms[1] = redcoll__pof2_floor(N);
    best->t = -1;
    for (B = 1; B <= P; B *= 2)
        for (mi = 0; mi < (Ms[1] < N ? 2 : 1); ++mi)
            for (R = Ms[mi] > 1 ? 1 : 0; R <= 31; ++R) {
                pl.P = P; pl.B = pl.S = B; pl.g = P / B; pl.G = 1; pl.R = R; pl.M = Ms[mi];
                if (!redcoll__lanes_radices(&pl, pl.M, R)) continue;
                pl.t = redcoll__lanes_time(&pl, m, peer, n, E, N, kmax);
                if (best->t < 0 || pl.t < best->t) *best = pl;
                if (R == 0 || 1 << R >= pl.M) break;
            }
    for (G = 2; G <= P && G <= Ms[1]; G *= 2) /* transposed: rounds among the M / G groups */
        for (R = 0; R <= 31; ++R) {
            pl.P = pl.B = P; pl.g = pl.G = G; pl.S = P / G; pl.R = R; pl.M = Ms[1];
            if (!redcoll__lanes_radices(&pl, pl.M / G, R)) continue;
            pl.t = redcoll__lanes_time(&pl, m, peer, n, E, N, kmax);
            if (pl.t < best->t) *best = pl;
            if (1 << R >= pl.M / G) break;
        }
}

/* Allreduce, node_lanes (see above). Scratch: a vector (the fold's staging),
   one block, the lanes' flags. */
static redcoll_result redcoll__allreduce_node_lanes(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__nodes nd;
    redcoll__lanes pl;
    redcoll_group v, xv;
    redcoll__ctx lc, xc;
    redcoll__segs Lb;
    size_t n = a->count, tl = 0, bl, off, len;
    int k, q, P, B, g, e, d, j, lo, hi, b, t, w, x, peer = -1, *have = NULL, *cross = NULL;
    char *buf = (char *)a->rbuf, *tmp = NULL, *rcv = NULL;
    if (!a->in_place) redcoll__copy(c, buf, a->sbuf, n);
    if (n == 0 || redcoll__nodes_plan(c, &nd, 0)) return c->err;
    k = redcoll__node_size(&nd, nd.mine);
    q = nd.pos; x = nd.mine;
    redcoll__lanes_plan(&c->o.model, (c->o.transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE) != 0, n,
                        (double)c->esize, nd.N, nd.kmin, nd.kmax, &pl);
    P = pl.P; B = pl.B; g = pl.g;
    Lb = redcoll__segs_make(n, B, NULL);
    bl = (n + (size_t)B - 1) / (size_t)B;
    redcoll__node_view(c, &nd, &v);
    redcoll__in_view(c, &v.t, &lc);
    tl = redcoll__stage_len(&lc, n);
    tmp = (char *)redcoll__alloc(c, tl);
    rcv = (char *)redcoll__alloc(c, bl);
    have = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)g);
    cross = (int *)redcoll__alloc_bytes(c, sizeof(int) * (size_t)nd.N);
    if (c->err) goto done;
    if (q >= P) { /* fold into position q mod P, and back at the end */
        redcoll__send(&lc, q % P, buf, n);
        redcoll__recv(&lc, q % P, buf, n);
        redcoll__in_view_done(c, &lc);
        goto done;
    }
    for (e = q + P; e < k; e += P) redcoll__recv_reduce(&lc, e, buf, buf, n, 1, tmp);
    b = q % B; t = q / B;
    for (lo = 0, hi = B, d = B / 2; d >= 1; d /= 2) { /* reduce-scatter: block b */
        int mid = lo + d, up = q & d;
        int slo = up ? lo : mid, rlo = up ? mid : lo;
        redcoll__sendrecv_reduce(&lc, q ^ d, redcoll__at(c, buf, redcoll__seg_off(&Lb, slo)), redcoll__seg_len(&Lb, slo, slo + d),
                                 q ^ d, redcoll__at(c, buf, redcoll__seg_off(&Lb, rlo)),
                                 redcoll__at(c, buf, redcoll__seg_off(&Lb, rlo)), redcoll__seg_len(&Lb, rlo, rlo + d), 1, tmp);
        lo = rlo; hi = rlo + d;
    }
    off = redcoll__seg_off(&Lb, b); len = redcoll__seg_len(&Lb, b, b + 1);
    if (nd.N > 1) {
        redcoll__cross_view(c, &nd, q, cross, &xv);
        redcoll__in_view(c, &xv.t, &xc);
    }
    if (x >= pl.M) { /* a folded node: its lanes' blocks to node x - M, the vector back from it */
        redcoll__send(&xc, x - pl.M, redcoll__at(c, buf, off), len);
        redcoll__recv(&xc, x - pl.M, buf, n);
        redcoll__in_view_done(c, &xc);
        goto unfold;
    }
    if (x + pl.M < nd.N) redcoll__recv_reduce(&xc, x + pl.M, redcoll__at(c, buf, off), redcoll__at(c, buf, off), len, 1, tmp);
    if (pl.G > 1) { /* the swap: block q for block b = q - q % G + x % G of node y's */
        int y = x - x % pl.G + q % pl.G;
        t = q % pl.G; b = q - t + x % pl.G;
        if (y != x) {
            peer = redcoll__nodes_rank(&nd, nd.first[y] + b);
            redcoll__sendrecv(c, peer, redcoll__at(c, buf, off), len, peer,
                              redcoll__at(c, buf, redcoll__seg_off(&Lb, b)), redcoll__seg_len(&Lb, b, b + 1));
        }
        off = redcoll__seg_off(&Lb, b); len = redcoll__seg_len(&Lb, b, b + 1);
    }
    for (d = 1; d < g; d *= 2) { /* the node's block b on all g lanes (transposed: the group's sum) */
        int pq = redcoll__lane_rank(&pl, q, t ^ d);
        redcoll__sendrecv_reduce(&lc, pq, redcoll__at(c, buf, off), len, pq, redcoll__at(c, buf, off),
                                 redcoll__at(c, buf, off), len, 1, tmp);
    }
    for (j = 0, w = pl.G; j < pl.R && !c->err && !lc.err && !xc.err; w *= pl.r[j], ++j) { /* round j: digit j */
        int r = pl.r[j], dj = x / w % r, u, to = x + ((dj + t + 1) % r - dj) * w, from = x + ((dj - t - 1 + r) % r - dj) * w;
        char *con = t == 0 ? redcoll__at(c, buf, off) : rcv;
        for (u = 0; u < g; ++u) have[u] = u < r; /* lane 0: the node's own and what came */
        if (t < r - 1) redcoll__sendrecv(&xc, to, redcoll__at(c, buf, off), len, from, rcv, len);
        if (t == 0 && r > 1) redcoll__reduce3(c, rcv, con, con, len, 0);
        if (r - 1 < g) have[r - 1] = 0;
        for (d = 1; d < g; d *= 2) { /* the lanes' sum on every lane */
            int pq = redcoll__lane_rank(&pl, q, t ^ d), mine = have[t], theirs = have[t ^ d];
            if (mine && theirs) redcoll__sendrecv_reduce(&lc, pq, con, len, pq, con, con, len, 1, tmp);
            else if (mine) redcoll__send(&lc, pq, con, len);
            else if (theirs) redcoll__recv(&lc, pq, con, len);
            for (u = 0; u < g; ++u) have[u] = have[u] || have[u ^ d];
        }
        if (con != redcoll__at(c, buf, off)) redcoll__copy(c, redcoll__at(c, buf, off), con, len);
    }
    if (pl.G > 1) { /* the sums back: block q */
        if (peer >= 0)
            redcoll__sendrecv(c, peer, redcoll__at(c, buf, off), len, peer,
                              redcoll__at(c, buf, redcoll__seg_off(&Lb, q)), redcoll__seg_len(&Lb, q, q + 1));
        b = q;
    }
    for (lo = b, hi = b + 1, d = 1; d < B; d *= 2) { /* allgather of the blocks */
        int plo = q & d ? lo - d : hi;
        redcoll__sendrecv(&lc, q ^ d, redcoll__at(c, buf, redcoll__seg_off(&Lb, lo)), redcoll__seg_len(&Lb, lo, hi), q ^ d,
                          redcoll__at(c, buf, redcoll__seg_off(&Lb, plo)), redcoll__seg_len(&Lb, plo, plo + d));
        lo = lo < plo ? lo : plo; hi = lo + 2 * d;
    }
    if (nd.N > 1) {
        if (x + pl.M < nd.N) redcoll__send(&xc, x + pl.M, buf, n);
        redcoll__in_view_done(c, &xc);
    }
unfold:
    for (e = q + P; e < k; e += P) redcoll__send(&lc, e, buf, n);
    redcoll__in_view_done(c, &lc);
done:
    if (cross) redcoll__free_bytes(c, cross, sizeof(int) * (size_t)nd.N);
    if (have) redcoll__free_bytes(c, have, sizeof(int) * (size_t)g);
    redcoll__free(c, rcv, bl);
    redcoll__free(c, tmp, tl);
    redcoll__nodes_free(c, &nd);
    return c->err;
}

static double redcoll__node_lanes_cost(const redcoll__cost_in *in) {
    redcoll__lanes pl;
    int N, k, B;
    redcoll__node_terms(in, &N, &k, &B);
    redcoll__lanes_plan(in->m, in->br == 0, in->n, in->E, N, B, k, &pl);
    return pl.t;
}

/* ---- Rabenseifner & Traeff 2005: reductions for non-power-of-two p ----------
   The generic reduction of Fig. 1. A *plan* factorises p = 2^n q1 ... qk E:
   butterfly steps (r = 2) for 2^n, ring steps (section 3.4) for the odd
   factors qi, and one elimination stage (3-2 and 2-1 steps, sections
   3.1-3.3) for the odd rest E. Ranks are digits of a mixed radix: step j
   combines r units of w_j consecutive ranks into one, so every partial result
   covers a contiguous rank range and every element is reduced in canonical
   order with the same bracketing (requirements 1-3 of section 1).
   Reduction phase: level i halves the chunk (m' -> m'/r) while the nominal
   m' > b, exchanges whole chunks once m' <= b; each exchange is pushed on a
   stack. Routing phase: the stack is popped and every step reversed, as an
   allgather (allreduce) or as a gather toward the root (reduce). */

#define REDCOLL__RT_MAXF     40 /* mixed-radix factors (each >= 2) */
#define REDCOLL__RT_MAXSTEPS 80 /* factors + elimination levels + the 2-1 step */

enum { REDCOLL__RT_RING, REDCOLL__RT_E32, REDCOLL__RT_E21 };

/* The protocol every rank derives identically from (p, n, options). */
typedef struct redcoll__rt_plan {
    int nf, f[REDCOLL__RT_MAXF]; /* radices: the 2s first, then ring factors */
    int E;                       /* odd rest for the elimination stage (1: none) */
    int overlap;                 /* 1: section 3.2 (Fig. 4), 0: section 3.3 (Fig. 5) */
    int fold;                    /* 1: the butterfly, on p' = 2^floor(lg p), excess ranks folded in */
    int levels;                  /* nf + floor(lg E): the halving candidates */
    int halve;                   /* levels 0 .. halve-1 halve (m' > b) */
} redcoll__rt_plan;


/* Alpha-beta-gamma time of a plan whose first h levels halve (section 3.5's
   formulas per step): ring/butterfly halving = pairwise reduce-scatter plus a
   Bruck allgather, whole-chunk ring = Bruck allgather plus the postponed
   reductions, elimination stage as t_elim of section 3.3. */
static double redcoll__rt_cost(const redcoll__rt_plan *pl, double m, const redcoll_cost_model *mo,
                               int h) {
    double a = mo->alpha, b = mo->beta, g = mo->gamma, t = 0, m0;
    int i, lv = 0, N, k;
    for (i = 0; i < pl->nf; ++i, ++lv) {
        double r = pl->f[i];
        int lg = redcoll__ceil_lg(pl->f[i]);
        if (lv < h) {
            t += (r - 1) * (a + m / r * b) + (r - 1) / r * m * g + lg * a + (r - 1) / r * m * b;
            m /= r;
        } else {
            t += lg * a + (r - 1) * m * (b + g);
        }
    }
    if (pl->E <= 1) return t;
    N = redcoll__floor_lg(pl->E);
    k = h - pl->nf < 0 ? 0 : (h - pl->nf > N ? N : h - pl->nf);
    for (m0 = m, i = 0; i < N; ++i) {
        if (i < k) { t += 2 * a + m * b + m / 2 * g; m /= 2; }
        else t += a + m * (b + g);
    }
    return t + (k ? 2 * a + m0 * b + m0 / 2 * g : 2 * a + 2 * m0 * b + m0 * g);
}

/* Radix of level lv (elimination levels halve by 2). */
static int redcoll__rt_radix(const redcoll__rt_plan *pl, int lv) {
    return lv < pl->nf ? pl->f[lv] : 2;
}

/* Threshold b -> number of halving levels: level i halves while the nominal
   (largest) chunk m' exceeds b bytes; b = 0 asks the cost model for the best
   number of halving levels. */
static void redcoll__rt_threshold(redcoll__rt_plan *pl, const redcoll__ctx *c, size_t n) {
    size_t b = c->o.threshold_bytes, m = n;
    int h, best = 0;
    double bt = 0;
    pl->levels = pl->nf + (pl->E > 1 ? redcoll__floor_lg(pl->E) : 0);
    if (b == 0) {
        for (h = 0; h <= pl->levels; ++h) {
            double t = redcoll__rt_cost(pl, (double)(n * c->esize), &c->o.model, h);
            if (h == 0 || t < bt) { bt = t; best = h; }
        }
        pl->halve = best;
        return;
    }
    if (b == REDCOLL_THRESHOLD_HALVE_ALL) b = 0;
    for (h = 0; h < pl->levels && m * c->esize > b; ++h) {
        size_t r = (size_t)redcoll__rt_radix(pl, h);
        m = (m + r - 1) / r;
    }
    pl->halve = h;
}

/* The plan of one variant (the list's rows): OVERLAP and NONOVERLAP
   (`elimination`, `elimination_nonoverlap`) take every odd factor into the
   elimination stage; FACTORS (`factor_ring`) tries the k smallest odd prime
   factors as rings and the rest as elimination, and keeps the k the cost
   model likes best (section 3.6 with Table 1's formulas); BUTTERFLY runs on
   p' = 2^floor(lg p) and folds the excess ranks in. */
static void redcoll__rt_make_plan(redcoll__rt_plan *pl, const redcoll__ctx *c, size_t n,
                                  int variant) {
    int p = c->size, q, odd[REDCOLL__RT_MAXF], nodd = 0, n2 = 0, k, best = 0;
    double bt = 0;
    REDCOLL_MEMSET(pl, 0, sizeof *pl);
    pl->overlap = variant != REDCOLL__VARIANT_NONOVERLAP;
    pl->fold = variant == REDCOLL__VARIANT_BUTTERFLY;
    if (pl->fold) p = redcoll__pof2_floor(p);
    while (p % 2 == 0) { p /= 2; pl->f[n2++] = 2; }
    pl->nf = n2;
    pl->E = p;
    if (variant != REDCOLL__VARIANT_FACTORS) { redcoll__rt_threshold(pl, c, n); return; }
    for (q = 3; p > 1; q += 2) {
        if ((long)q * q > p) q = p; /* what is left is prime */
        while (p % q == 0) { p /= q; odd[nodd++] = q; }
        if (p == 1) break; /* before q += 2, which overflows for q = INT_MAX */
    }
    for (k = 0; k <= nodd; ++k) { /* k smallest primes as rings */
        int i;
        pl->nf = n2 + k; pl->E = 1;
        for (i = 0; i < nodd; ++i) {
            if (i < k) pl->f[n2 + i] = odd[i];
            else pl->E *= odd[i];
        }
        redcoll__rt_threshold(pl, c, n);
        {
            double t = redcoll__rt_cost(pl, (double)(n * c->esize), &c->o.model, pl->halve);
            if (k == 0 || t < bt) { bt = t; best = k; }
        }
    }
    pl->nf = n2 + best; pl->E = 1;
    for (k = best; k < nodd; ++k) pl->E *= odd[k];
    redcoll__rt_threshold(pl, c, n);
}

/* One exchange step, as pushed on the stack of Fig. 1. */
typedef struct redcoll__rt_step {
    int    kind;
    int    r, d;          /* members and this rank's member index (E32: role 0-2, E21: 0 A, 1 B) */
    int    base, stride;  /* RING: member k is virtual rank base + k stride */
    int    peer[3];       /* E32/E21: ranks of the roles */
    int    halved;
    int    tgt;           /* reduce: member toward the root (-2: root elsewhere); allreduce: -1 */
    size_t off, len;      /* this rank's chunk before the step */
} redcoll__rt_step;

/* The state of one rank running a plan. */
typedef struct redcoll__rt {
    redcoll__ctx        *c;
    char                *buf;           /* the working vector (n elements) */
    const char          *in;            /* this rank's input until its first step wrote buf, then buf */
    char                *tmp;           /* scratch, grown on demand */
    size_t               tmpn, off, len;/* scratch size; this rank's current chunk */
    const redcoll__fold *fold;          /* virtual ranks of the butterfly; NULL: identity */
    int                  root_v;        /* reduce: the root's virtual rank; -1: allreduce */
    int                  level, alive, nst;
    int                  size_w;        /* ranks per elimination unit: the product of pl.f */
    redcoll__rt_plan     pl;
    redcoll__rt_step     st[REDCOLL__RT_MAXSTEPS];
} redcoll__rt;

static int redcoll__rt_rank(const redcoll__rt *rt, int v) {
    return rt->fold ? redcoll__fold_oldrank(rt->fold, v) : v;
}

static char *redcoll__rt_need(redcoll__rt *rt, size_t n) {
    if (!rt->tmp || n > rt->tmpn) {
        redcoll__free(rt->c, rt->tmp, rt->tmpn);
        rt->tmp = (char *)redcoll__alloc(rt->c, n);
        rt->tmpn = rt->tmp ? n : 0;
    }
    return rt->tmp;
}

static char *redcoll__rt_at(const redcoll__rt *rt, size_t off) { return redcoll__at(rt->c, rt->buf, off); }
static const char *redcoll__rt_in(const redcoll__rt *rt, size_t off) { return redcoll__at(rt->c, rt->in, off); }

/* The members of a ring step on the shared rank map: member k is virtual
   rank base + k stride, a survivor of the fold when the plan folds. */
static redcoll__vmap redcoll__rt_members(const redcoll__rt *rt, const redcoll__rt_step *s) {
    redcoll__vmap g = redcoll__vmap_make(-1, 0, s->r, rt->fold ? rt->fold->rem : 0, 1, -1, -1);
    g.from = s->base; g.step = s->stride; g.me = s->d;
    return g;
}

static int redcoll__rt_member(const redcoll__rt *rt, const redcoll__rt_step *s, int k) {
    redcoll__vmap g = redcoll__rt_members(rt, s);
    return redcoll__vmap_rank(&g, k);
}

/* Bruck allgather of the r blocks of a ring step (the paper's [6],
   redcoll__bruck_allgather_phase): `rot` holds this member's block first and ends
   with block (d + i) mod r at position i; blocks are redcoll__block(total, r, .). */
static void redcoll__rt_bruck(redcoll__rt *rt, const redcoll__rt_step *s, char *rot, size_t total) {
    redcoll__vmap g = redcoll__rt_members(rt, s);
    redcoll__segs L = redcoll__segs_make(total, s->r, NULL);
    redcoll__bruck_allgather_phase(rt->c, &g, &L, rot);
}

/* Operand k of a ring step in scratch: pairwise order (slots skip d) or
   Bruck's rotated order (position (k - d) mod r). */
static char *redcoll__rt_slot(const redcoll__ctx *c, char *base, int rotated, int r, int d, int k,
                              size_t len) {
    int i = rotated ? (k - d + r) % r : (k < d ? k : k - 1);
    return redcoll__at(c, base, (size_t)i * len);
}

/* Canonical combination of the r operands of a ring step, x_d read from `x`
   (the input, or own itself), into `own`, which ends with ((x_0 op x_1) op
   ...) op x_(r-1): the same bracketing on every member and for every block. */
static void redcoll__rt_combine(redcoll__rt *rt, char *base, int rotated, int r, int d,
                                const char *x, char *own, size_t len) {
    redcoll__ctx *c = rt->c;
    int k;
    for (k = 1; k < d; ++k)
        redcoll__reduce_hi(c, redcoll__rt_slot(c, base, rotated, r, d, k - 1, len),
                        redcoll__rt_slot(c, base, rotated, r, d, k, len), len);
    if (d > 0) { redcoll__reduce3(c, redcoll__rt_slot(c, base, rotated, r, d, d - 1, len), x, own, len, 0); x = own; }
    for (k = d + 1; k < r; ++k, x = own)
        redcoll__reduce3(c, x, redcoll__rt_slot(c, base, rotated, r, d, k, len), own, len, 1);
}

/* ---- exchange step: ring over r members (r = 2: the butterfly) ------------
   Section 3.4 with the local reductions postponed until all r operands are
   present. Halving: r-1 pairwise rounds (round s: to d+s, from d-s) of m'/r,
   member d keeps block d. Whole chunks: a Bruck allgather of the r chunks
   (r-1 pairwise rounds for r <= 3, same count, no copy). Scratch (r-1)m'/r,
   resp. (r-1)m' (r m' for Bruck). r = 2 is one exchange whose message is
   reduced as it lands (redcoll__sendrecv_reduce): no scratch with the
   transport's fused entry, one chunk without. Every step reads this rank's
   operand where it is (rt->in: the input before the first step). */
static void redcoll__rt_ring(redcoll__rt *rt, redcoll__rt_step *s) {
    redcoll__ctx *c = rt->c;
    int r = s->r, d = s->d, sh;
    char *own;
    const char *x;
    size_t lend, offd, po, pl;
    if (s->halved) redcoll__block(s->len, r, d, &offd, &lend);
    else { offd = 0; lend = s->len; }
    own = redcoll__rt_at(rt, s->off + offd);
    x = redcoll__rt_in(rt, s->off + offd);
    if (r == 2) {
        int o = 1 - d;
        if (s->halved) redcoll__block(s->len, 2, o, &po, &pl);
        else { po = 0; pl = s->len; }
        redcoll__rt_need(rt, redcoll__stage_len(c, lend));
        redcoll__sendrecv_reduce(c, redcoll__rt_member(rt, s, o), redcoll__rt_in(rt, s->off + po), pl,
                                 redcoll__rt_member(rt, s, o), x, own, lend, o < d, rt->tmp);
    } else if (!s->halved && r > 3) {
        char *rot = redcoll__rt_need(rt, (size_t)r * lend);
        if (c->err) return;
        redcoll__copy(c, rot, x, lend);
        redcoll__rt_bruck(rt, s, rot, (size_t)r * lend);
        redcoll__rt_combine(rt, rot, 1, r, d, x, own, lend);
    } else {
        char *tmp = redcoll__rt_need(rt, (size_t)(r - 1) * lend);
        if (c->err) return;
        for (sh = 1; sh < r; ++sh) {
            int to = (d + sh) % r, from = (d - sh + r) % r;
            if (s->halved) redcoll__block(s->len, r, to, &po, &pl);
            else { po = 0; pl = s->len; }
            redcoll__sendrecv(c, redcoll__rt_member(rt, s, to), redcoll__rt_in(rt, s->off + po), pl,
                              redcoll__rt_member(rt, s, from),
                              redcoll__rt_slot(c, tmp, 0, r, d, from, lend), lend);
        }
        redcoll__rt_combine(rt, tmp, 0, r, d, x, own, lend);
    }
    rt->off = s->off + offd;
    rt->len = lend;
}

/* Reverse of a halving ring step: allgather of the r blocks, (r-1)m'/r in
   and out as in the reduction (r = 2: one exchange in place; r = 3: the
   ring allgather in place, the paper's reversed ring, as many rounds as
   Bruck's and no copy; r > 3: Bruck through scratch, ceil(lg r) rounds for
   r-1 at the price of m' of local copies). Reduce: r <= 3 send their blocks
   to the member toward the root; larger rings allgather too (Bruck's
   ceil(lg r) rounds beat r-1 receives at the target). */
static void redcoll__rt_ring_back(redcoll__rt *rt, const redcoll__rt_step *s, int *done) {
    redcoll__ctx *c = rt->c;
    int r = s->r, d = s->d, k;
    size_t po, pl, offd, lend;
    if (!s->halved) { if (s->tgt >= 0 && s->tgt != d) *done = 1; return; }
    redcoll__block(s->len, r, d, &offd, &lend);
    if (s->tgt >= 0 && r <= 3) { /* gather toward the root (larger r: Bruck is faster) */
        if (s->tgt != d) {
            redcoll__send(c, redcoll__rt_member(rt, s, s->tgt), redcoll__rt_at(rt, s->off + offd), lend);
            *done = 1;
            return;
        }
        for (k = 0; k < r; ++k) {
            if (k == d) continue;
            redcoll__block(s->len, r, k, &po, &pl);
            redcoll__recv(c, redcoll__rt_member(rt, s, k), redcoll__rt_at(rt, s->off + po), pl);
        }
    } else if (r == 2) {
        redcoll__block(s->len, 2, 1 - d, &po, &pl);
        redcoll__sendrecv(c, redcoll__rt_member(rt, s, 1 - d), redcoll__rt_at(rt, s->off + offd), lend,
                          redcoll__rt_member(rt, s, 1 - d), redcoll__rt_at(rt, s->off + po), pl);
    } else if (r == 3) {
        redcoll__vmap g = redcoll__rt_members(rt, s);
        redcoll__segs L = redcoll__segs_make(s->len, r, NULL);
        redcoll__ring_allgather_phase(c, &g, &L, redcoll__rt_at(rt, s->off));
        if (s->tgt >= 0 && s->tgt != d) *done = 1;
    } else {
        redcoll__segs L = redcoll__segs_make(s->len, r, NULL); /* the blocks of redcoll__block */
        char *rot = redcoll__rt_need(rt, s->len);
        if (c->err) return;
        redcoll__copy(c, rot, redcoll__rt_at(rt, s->off + offd), lend);
        redcoll__rt_bruck(rt, s, rot, s->len);
        for (k = 1; k < r; ++k) { /* block (d + k) mod r sits at span(d, k) of rot */
            int b = (d + k) % r;
            redcoll__copy(c, redcoll__rt_at(rt, s->off + redcoll__seg_off(&L, b)),
                          redcoll__at(c, rot, redcoll__seg_span(&L, d, k)), redcoll__seg_len(&L, b, b + 1));
        }
        if (s->tgt >= 0 && s->tgt != d) *done = 1;
    }
    rt->off = s->off;
    rt->len = s->len;
}

/* ---- exchange step: 3-2 elimination (section 3.1) -------------------------
   Round 1: p1 and p2 swap halves (p1 keeps the upper, p2 the lower) and
   reduce m1 + m2; round 2: p2 sends its half to p0, p0 sends its upper half
   to p1, and both survivors hold half of m0 + (m1 + m2). Whole chunks when
   m' <= b: the same two rounds with the full chunk. p0/p1: 2 alpha + m' beta
   + m' gamma (halving). p2 is eliminated. Every receive is reduced as it
   lands (scratch: none fused, one chunk cut). */
static void redcoll__rt_e32(redcoll__rt *rt, redcoll__rt_step *s) {
    redcoll__ctx *c = rt->c;
    size_t lo, lol, hio, hil;
    char *tmp;
    if (s->halved) { redcoll__block(s->len, 2, 0, &lo, &lol); redcoll__block(s->len, 2, 1, &hio, &hil); }
    else { lo = hio = 0; lol = hil = s->len; }
    tmp = redcoll__rt_need(rt, redcoll__stage_len(c, lol > hil ? lol : hil));
    if (c->err) return;
    if (s->d == 1) {
        char *mine = redcoll__rt_at(rt, s->off + hio);
        redcoll__sendrecv_reduce(c, s->peer[2], redcoll__rt_in(rt, s->off + lo), lol, s->peer[2],
                                 redcoll__rt_in(rt, s->off + hio), mine, hil, 0, tmp); /* m1 + m2 */
        redcoll__recv_reduce(c, s->peer[0], mine, mine, hil, 1, tmp);                  /* m0 + (m1 + m2) */
        rt->off = s->off + hio; rt->len = hil;
    } else if (s->d == 2) {
        char *mine = redcoll__rt_at(rt, s->off + lo);
        redcoll__sendrecv_reduce(c, s->peer[1], redcoll__rt_in(rt, s->off + hio), hil, s->peer[1],
                                 redcoll__rt_in(rt, s->off + lo), mine, lol, 1, tmp);  /* m1 + m2 */
        redcoll__send(c, s->peer[0], mine, lol);
        rt->alive = 0;
    } else {
        char *mine = redcoll__rt_at(rt, s->off + lo);
        redcoll__sendrecv_reduce(c, s->peer[1], redcoll__rt_in(rt, s->off + hio), hil, s->peer[2],
                                 redcoll__rt_in(rt, s->off + lo), mine, lol, 0, tmp);  /* m0 + (m1 + m2) */
        rt->off = s->off + lo; rt->len = lol;
    }
}

/* Reverse: halving: p1 -> p0 upper while p0 -> p2 lower, then p1 and p2 swap
   (2 rounds of m'/2); whole chunks: p1 sends the result to p2 (the extra
   round of section 3.3). Gather: the halves go to the role toward the root. */
static void redcoll__rt_e32_back(redcoll__rt *rt, const redcoll__rt_step *s, int *done) {
    redcoll__ctx *c = rt->c;
    int d = s->d, t = s->tgt;
    size_t lo, lol, hio, hil;
    char *blo, *bhi;
    if (s->halved) { redcoll__block(s->len, 2, 0, &lo, &lol); redcoll__block(s->len, 2, 1, &hio, &hil); }
    else { lo = hio = 0; lol = hil = s->len; }
    blo = redcoll__rt_at(rt, s->off + lo);
    bhi = redcoll__rt_at(rt, s->off + hio);
    rt->off = s->off; rt->len = s->len;
    if (!s->halved) {
        if (t < 0 || t == 2) {
            if (d == 1) redcoll__send(c, s->peer[2], bhi, hil);
            if (d == 2) redcoll__recv(c, s->peer[1], blo, lol);
        }
        if (t >= 0 && t != d) *done = 1;
        return;
    }
    if (t < 0) {
        if (d == 0) redcoll__sendrecv(c, s->peer[2], blo, lol, s->peer[1], bhi, hil);
        if (d == 1) {
            redcoll__send(c, s->peer[0], bhi, hil);
            redcoll__sendrecv(c, s->peer[2], bhi, hil, s->peer[2], blo, lol);
        }
        if (d == 2) {
            redcoll__recv(c, s->peer[0], blo, lol);
            redcoll__sendrecv(c, s->peer[1], blo, lol, s->peer[1], bhi, hil);
        }
        return;
    }
    if (d == t) {
        if (d != 0) redcoll__recv(c, s->peer[0], blo, lol);
        if (d != 1) redcoll__recv(c, s->peer[1], bhi, hil);
        return;
    }
    if (d == 0) redcoll__send(c, s->peer[t], blo, lol);
    if (d == 1) redcoll__send(c, s->peer[t], bhi, hil);
    *done = 1;
}

/* ---- exchange step: 2-1 elimination (section 3.3) -------------------------
   B (the higher unit) sends its chunk to A, which reduces A + B; B is
   eliminated. Reverse: A sends the result chunk back. */
static void redcoll__rt_e21(redcoll__rt *rt, redcoll__rt_step *s) {
    redcoll__ctx *c = rt->c;
    if (s->d == 1) { redcoll__send(c, s->peer[0], redcoll__rt_in(rt, s->off), s->len); rt->alive = 0; return; }
    if (!redcoll__rt_need(rt, redcoll__stage_len(c, s->len))) return;
    redcoll__recv_reduce(c, s->peer[1], redcoll__rt_in(rt, s->off), redcoll__rt_at(rt, s->off), s->len, 0,
                         rt->tmp);
}

static void redcoll__rt_e21_back(redcoll__rt *rt, const redcoll__rt_step *s, int *done) {
    char *mine = redcoll__rt_at(rt, s->off);
    if (s->tgt < 0 || s->tgt == 1) {
        if (s->d == 0) redcoll__send(rt->c, s->peer[1], mine, s->len);
        else redcoll__recv(rt->c, s->peer[0], mine, s->len);
    }
    if (s->tgt >= 0 && s->tgt != s->d) *done = 1;
}

/* Pushes and runs one step. */
static redcoll__rt_step *redcoll__rt_push(redcoll__rt *rt, int kind, int d, int tgt) {
    redcoll__rt_step *s = &rt->st[rt->nst++];
    REDCOLL_ASSERT(rt->nst <= REDCOLL__RT_MAXSTEPS);
    REDCOLL_MEMSET(s, 0, sizeof *s);
    s->kind = kind; s->d = d; s->r = 2;
    s->tgt = rt->root_v < 0 ? -1 : tgt;
    s->off = rt->off; s->len = rt->len;
    s->halved = kind != REDCOLL__RT_E21 && rt->level < rt->pl.halve;
    return s;
}

static void redcoll__rt_run_step(redcoll__rt *rt, redcoll__rt_step *s) {
    if (s->kind == REDCOLL__RT_RING) redcoll__rt_ring(rt, s);
    else if (s->kind == REDCOLL__RT_E32) redcoll__rt_e32(rt, s);
    else redcoll__rt_e21(rt, s);
    rt->in = rt->buf; /* this rank's chunk is in buf now */
}

/* A butterfly step between two units whose members are ranks lo and hi. */
static void redcoll__rt_pair(redcoll__rt *rt, int d, int lo, int hi, int tgt) {
    redcoll__rt_step *s = redcoll__rt_push(rt, REDCOLL__RT_RING, d, tgt);
    s->base = lo; s->stride = hi - lo;
    redcoll__rt_run_step(rt, s);
}

/* Original elimination unit of the overlapping protocol's unit j at level z,
   slot t (section 3.2): units j >= 1 are plain butterfly units starting at
   j 2^z + (E mod 2^z); unit 0 absorbed the 3-2 steps, its slot t (highest
   bit h) comes from unit (E mod 2^h) + t. O(1) but the lg of t. */
static int redcoll__rt_ounit(int E, int z, int j, int t) {
    if (j >= 1) return (j << z) + (E & ((1 << z) - 1)) + t;
    if (t == 0) return 0;
    return (E & ((1 << redcoll__floor_lg(t)) - 1)) + t;
}

/* Section 3.2, Fig. 4: in level z (U = E >> z units of 2^z W ranks) a 3-2
   step on units 0, 1, 2 when bit z of E is set, butterflies on the other
   pairs. Unit 0 (late by one round after a 3-2 step) is only needed in the
   3-2 step's second round, so the delays never add up: floor(lg E) + 1
   rounds. Each rank tracks its unit j and slot t (the halves it kept). */
static void redcoll__rt_overlap(redcoll__rt *rt, int v) {
    int E = rt->pl.E, W = rt->size_w, u = v / W, pos = v % W, z, j = u, t = 0;
    int jr = rt->root_v >= 0 ? rt->root_v / W : 0;
    for (z = 0; (E >> z) > 1 && rt->alive; ++z, ++rt->level) {
        int e = (E >> z) & 1, bit, k;
        if (e && j < 3) {
            redcoll__rt_step *s = redcoll__rt_push(rt, REDCOLL__RT_E32, j, jr < 3 ? jr : -2);
            for (k = 0; k < 3; ++k) s->peer[k] = redcoll__rt_rank(rt, redcoll__rt_ounit(E, z, k, t) * W + pos);
            redcoll__rt_run_step(rt, s);
            bit = j == 1;
            j = 0;
        } else {
            int jl = e ? j - ((j - 3) & 1) : j & ~1;
            bit = j - jl;
            redcoll__rt_pair(rt, bit, redcoll__rt_rank(rt, redcoll__rt_ounit(E, z, jl, t) * W + pos),
                             redcoll__rt_rank(rt, redcoll__rt_ounit(E, z, jl + 1, t) * W + pos),
                             jr == jl || jr == jl + 1 ? jr - jl : -2);
            j = (j - e) >> 1;
        }
        t |= bit << z;
        jr = e && jr < 3 ? 0 : (jr - e) >> 1;
    }
}

/* Section 3.3, Fig. 5: level 0 runs one 3-2 step (units 0-2) and butterflies
   on the pairs (3,4), (5,6), ...; in its second round (Q-1)/2 pairs of
   pair-units do 2-1 steps (m'/2 each when halving), leaving 2^(N-1) units of
   2W ranks for N-1 plain butterfly levels. */
static int redcoll__rt_nounit(int k2, int jj, int bit0) {
    if (jj == 0) return bit0;
    return jj <= k2 ? 4 * jj - 1 + bit0 : 2 * (jj + k2) + 1 + bit0;
}

static void redcoll__rt_nonoverlap(redcoll__rt *rt, int v) {
    int E = rt->pl.E, W = rt->size_w, u = v / W, pos = v % W, N = redcoll__floor_lg(E);
    int k2 = (E - (1 << N) - 1) / 2, ur = rt->root_v >= 0 ? rt->root_v / W : 0;
    int bit0, j1, j1r, jj, jjr, i, k;
    if (u < 3) {
        redcoll__rt_step *s = redcoll__rt_push(rt, REDCOLL__RT_E32, u, ur < 3 ? ur : -2);
        for (k = 0; k < 3; ++k) s->peer[k] = redcoll__rt_rank(rt, k * W + pos);
        redcoll__rt_run_step(rt, s);
        bit0 = u == 1;
    } else {
        int ul = u - ((u - 3) & 1);
        bit0 = u - ul;
        redcoll__rt_pair(rt, bit0, redcoll__rt_rank(rt, ul * W + pos),
                         redcoll__rt_rank(rt, (ul + 1) * W + pos),
                         ur == ul || ur == ul + 1 ? ur - ul : -2);
    }
    rt->level++;
    if (!rt->alive) return;
    j1 = u < 3 ? 0 : (u - 1) >> 1;
    j1r = ur < 3 ? 0 : (ur - 1) >> 1;
    if (j1 >= 1 && j1 <= 2 * k2) { /* 2-1 elimination of unit 2i into unit 2i-1 */
        int a = j1 - !(j1 & 1);
        redcoll__rt_step *s = redcoll__rt_push(rt, REDCOLL__RT_E21, j1 - a,
                                               j1r == a || j1r == a + 1 ? j1r - a : -2);
        s->peer[0] = redcoll__rt_rank(rt, (2 * a + 1 + bit0) * W + pos);
        s->peer[1] = redcoll__rt_rank(rt, (2 * a + 3 + bit0) * W + pos);
        redcoll__rt_run_step(rt, s);
        if (!rt->alive) return;
    }
    jj = j1 == 0 ? 0 : (j1 <= 2 * k2 ? (j1 + 1) / 2 : j1 - k2);
    jjr = j1r == 0 ? 0 : (j1r <= 2 * k2 ? (j1r + 1) / 2 : j1r - k2);
    for (i = 0; i < N - 1; ++i, ++rt->level) {
        int lo = jj & ~(1 << i), d = (jj >> i) & 1;
        redcoll__rt_pair(rt, d, redcoll__rt_rank(rt, redcoll__rt_nounit(k2, lo, bit0) * W + pos),
                         redcoll__rt_rank(rt, redcoll__rt_nounit(k2, lo | (1 << i), bit0) * W + pos),
                         (jjr >> (i + 1)) == (jj >> (i + 1)) ? (jjr >> i) & 1 : -2);
    }
}

/* The whole of Fig. 1 on virtual rank v: reduction phase (mixed-radix rings
   and butterflies, then the elimination stage), routing phase (the stack
   popped). `buf` holds this rank's vector and ends with the result
   (allreduce: everywhere; reduce: at the root). */
static void redcoll__rt_reduce_all(redcoll__rt *rt, int v, size_t n) {
    int j, w = 1, done = 0;
    rt->off = 0; rt->len = n; rt->alive = 1;
    for (j = 0; j < rt->pl.nf; ++j, ++rt->level) {
        int r = rt->pl.f[j], digit = (v / w) % r, R = rt->root_v;
        redcoll__rt_step *s = redcoll__rt_push(rt, REDCOLL__RT_RING, digit,
                                               R >= 0 && R / (w * r) == v / (w * r) ? (R / w) % r : -2);
        s->r = r; s->base = v - digit * w; s->stride = w;
        redcoll__rt_run_step(rt, s);
        w *= r;
    }
    rt->size_w = w;
    if (rt->pl.E > 1) {
        if (rt->pl.overlap) redcoll__rt_overlap(rt, v);
        else redcoll__rt_nonoverlap(rt, v);
    }
    while (rt->nst > 0 && !done) { /* routing phase */
        redcoll__rt_step *s = &rt->st[--rt->nst];
        if (s->tgt == -2) break;
        if (s->kind == REDCOLL__RT_RING) redcoll__rt_ring_back(rt, s, &done);
        else if (s->kind == REDCOLL__RT_E32) redcoll__rt_e32_back(rt, s, &done);
        else redcoll__rt_e21_back(rt, s, &done);
    }
}

/* Runs a plan (the schedules below make it from the cost model; tests may
   pass their own, e.g. one ring over all p for Table 1). The butterfly folds
   the excess ranks in first (2-1 elimination of whole vectors before round
   0, Rabenseifner 2004 section 3.5). The first step (fold or exchange) reads
   the input where it is, no copy first, also into a reduce's scratch off
   the root (redcoll__reduce_workbuf). */
static redcoll_result redcoll__rt_execute(redcoll__ctx *c, const redcoll__args *a, int reduce,
                                          const redcoll__rt_plan *pl) {
    size_t n = a->count;
    int is_root = reduce && c->rank == a->root, v = c->rank;
    redcoll__fold f;
    redcoll__rt state, *rt = &state;
    if (c->size == 1) {
        redcoll__copy(c, a->rbuf, a->sbuf, n);
        return c->err;
    }
    REDCOLL_MEMSET(rt, 0, sizeof *rt);
    rt->c = c;
    rt->root_v = reduce ? a->root : -1;
    rt->pl = *pl;
    rt->buf = (char *)(reduce ? redcoll__reduce_workbuf(c, a) : a->rbuf);
    rt->in = (const char *)a->sbuf;
    if (pl->fold) {
        f = redcoll__fold_plan(c->rank, c->size);
        rt->fold = &f;
        v = f.newrank;
        if (reduce) rt->root_v = redcoll__fold_plan(a->root + (a->root < 2 * f.rem && a->root % 2 == 0),
                                                    c->size).newrank;
        if (rt->buf && redcoll__rt_need(rt, redcoll__stage_len(c, n)) &&
            redcoll__fold_in(c, &f, rt->in, rt->buf, rt->tmp, n))
            rt->in = rt->buf;
    }
    if (rt->buf && v >= 0 && !c->err) redcoll__rt_reduce_all(rt, v, n);
    if (pl->fold && rt->buf) {
        if (!reduce) redcoll__fold_out(c, &f, rt->buf, n);
        else if (a->root < 2 * f.rem && a->root % 2 == 0) { /* the root sat out */
            if (c->rank == a->root + 1) redcoll__send(c, a->root, rt->buf, n);
            if (is_root) redcoll__recv(c, a->root + 1, rt->buf, n);
        }
    }
    redcoll__free(c, rt->tmp, rt->tmpn);
    if (reduce) redcoll__reduce_freebuf(c, a, rt->buf);
    return c->err;
}

/* The rows `butterfly`, `elimination`, `elimination_nonoverlap` and
   `factor_ring` of allreduce and reduce (their variant picks the plan):

   butterfly: threshold b (section 2, Fig. 2/3) on p' = 2^floor(lg p), the
   excess ranks folded in and out (2-1 elimination of whole vectors). Cost,
   all halving: 2 lg p' alpha + 2(1 - 1/p') n beta + (1 - 1/p') n gamma,
   + 2(alpha + n beta) + n gamma for non-power-of-two p.
   elimination: overlapping 3-2 elimination (section 3.2, Fig. 4) after the
   butterfly steps of p's factor 2^k. Cost, all halving: 2 ceil(lg p) alpha
   + 2(1.5 - 1/p') n beta + (1.5 - 1/p') n gamma; whole buffers:
   (ceil(lg p) + 1)(alpha + n beta) + ceil(lg p) n gamma.
   elimination_nonoverlap: section 3.3, Fig. 5: one 3-2 step and (Q-1)/2
   pairs of 2-1 steps in rounds 0-1, then butterflies. Same cost.
   factor_ring: sections 3.4 and 3.6: butterfly for 2^k, rings for the small
   odd factors, elimination for the rest, the split chosen by the cost model
   (Table 1's formulas). p = 3 2^k, 9 2^k with m <= b: ceil(lg p) rounds.
   Reduce: the same reduction phase; the routing phase gathers the chunks
   toward the root instead of allgathering them (section 2: "only a different
   routing phase"), halving the routing phase's beta term on the root's path.
   Any p; canonical order. */
static redcoll_result redcoll__rabenseifner_traeff(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__rt_plan pl;
    redcoll__rt_make_plan(&pl, c, a->count, a->variant);
    return redcoll__rt_execute(c, a, c->coll == REDCOLL_COLL_REDUCE, &pl);
}

/* min over h of redcoll__rt_cost(pl, m, mo, h) in one pass (the plan's cost
   when the cost model picks the halving levels, threshold_bytes = 0): for
   h <= nf the ring levels from h on and the elimination stage see the same
   chunk m_h, so their cost is a suffix sum plus m_h times another. */
static double redcoll__rt_min_cost(const redcoll__rt_plan *pl, double m, const redcoll_cost_model *mo) {
    double a = mo->alpha, b = mo->beta, g = mo->gamma, sa[REDCOLL__RT_MAXF + 1], sb[REDCOLL__RT_MAXF + 1];
    double pre = 0, best = -1, A0 = 0, B0 = 0, t, half = 0, mk;
    int i, k, N = pl->E > 1 ? redcoll__floor_lg(pl->E) : 0;
    sa[pl->nf] = sb[pl->nf] = 0;
    for (i = pl->nf - 1; i >= 0; --i) {
        sa[i] = sa[i + 1] + redcoll__ceil_lg(pl->f[i]) * a;
        sb[i] = sb[i + 1] + (pl->f[i] - 1) * (b + g);
    }
    if (pl->E > 1) { A0 = (N + 2) * a; B0 = N * (b + g) + 2 * b + g; }
    for (i = 0; i <= pl->nf; ++i) { /* h = i: levels below i halve */
        t = pre + sa[i] + m * (sb[i] + B0) + A0;
        if (best < 0 || t < best) best = t;
        if (i < pl->nf) {
            double r = pl->f[i];
            pre += (r - 1) * (a + m / r * b) + (r - 1) / r * m * g + redcoll__ceil_lg(pl->f[i]) * a +
                   (r - 1) / r * m * b;
            m /= r;
        }
    }
    for (mk = m, k = 1; k <= N; ++k) { /* h = nf + k: k elimination levels halve */
        half += 2 * a + mk * b + mk / 2 * g;
        mk /= 2;
        t = pre + half + (N - k) * (a + mk * (b + g)) + 2 * a + m * b + m / 2 * g;
        if (t < best) best = t;
    }
    return best;
}

/* The Rabenseifner-Traeff rows' cost without making their plan (which tries
   every split and threshold through redcoll__rt_cost): the factorisation
   of redcoll__rt_make_plan, each candidate priced by redcoll__rt_min_cost. */
static double redcoll__rt_price(int p, double V, int variant, const redcoll_cost_model *mo) {
    redcoll__rt_plan pl;
    int q, odd[REDCOLL__RT_MAXF], nodd = 0, n2 = 0, k, i;
    double best = -1;
    REDCOLL_MEMSET(&pl, 0, sizeof pl);
    if (variant == REDCOLL__VARIANT_BUTTERFLY) p = redcoll__pof2_floor(p);
    while (p % 2 == 0) { p /= 2; pl.f[n2++] = 2; }
    if (variant != REDCOLL__VARIANT_FACTORS) {
        pl.nf = n2; pl.E = p;
        return redcoll__rt_min_cost(&pl, V, mo);
    }
    for (q = 3; p > 1; q += 2) { /* as redcoll__rt_make_plan */
        if ((long)q * q > p) q = p;
        while (p % q == 0) { p /= q; odd[nodd++] = q; }
        if (p == 1) break;
    }
    for (k = 0; k <= nodd; ++k) {
        double t;
        pl.nf = n2 + k; pl.E = 1;
        for (i = 0; i < nodd; ++i) {
            if (i < k) pl.f[n2 + i] = odd[i];
            else pl.E *= odd[i];
        }
        t = redcoll__rt_min_cost(&pl, V, mo);
        if (best < 0 || t < best) best = t;
    }
    return best;
}

/* The plan the schedule will make, priced by section 3.5's formulas;
   excess ranks of the butterfly fold in (and out). */
static double redcoll__rabenseifner_traeff_cost(const redcoll__cost_in *in) {
    const redcoll__row *e = in->row;
    double t;
    if (in->o->threshold_bytes == 0) { /* the model's halving levels: no plan needed */
        t = redcoll__rt_price(in->p, in->V, e->variant, in->m);
    } else {
        redcoll__ctx c;
        redcoll__rt_plan pl;
        REDCOLL_MEMSET(&c, 0, sizeof c);
        c.size = in->p; c.esize = in->esize; c.o = *in->o;
        redcoll__rt_make_plan(&pl, &c, in->n, e->variant);
        t = redcoll__rt_cost(&pl, in->V, in->m, pl.halve);
    }
    if (e->variant == REDCOLL__VARIANT_BUTTERFLY && in->odd)
        t += e->info.coll == REDCOLL_COLL_REDUCE ? in->ua + in->V * (in->ub + in->g)
                                                 : 2 * (in->ua + in->V * in->ub) + in->V * in->g;
    return t;
}

/* ==== 9. Reproducible sums (REDCOLL_SUM_EXACT) [SECTION:exact] ==============
   Each element's result is the correctly rounded exact sum of its p inputs,
   so its bits depend on the multiset of inputs alone: not on p, algorithm,
   transport, in place, or the FP environment. Every finite float or double
   is an integer multiple of the smallest subnormal (2^-149, 2^-1074), so the
   exact sum is an integer in those units: it is accumulated in fixed point by
   the ordinary int64 SUM collectives, exactly and in any order, and rounded
   once. Bit positions count from that unit: 0 is the smallest subnormal,
   276 / 2097 the top bit of FLT_MAX / DBL_MAX.

   1. Ranges. The vector is cut into blocks of 64 elements (never across a
      reduce_scatter segment). Per block each rank finds bits hi..lo that hold
      its finite nonzero inputs (from exponent fields; a block with a
      subnormal, inf, NaN or -0 is rescanned exactly) and whether it holds an
      inf, a NaN or a -0; one allreduce (UINT16 MAX, 3 words per block) makes
      that global.
   2. Limbs. With L = 62 - ceil(lg p) bits per limb a block needs
      K = ceil((hi - lo + 1) / L) int64 limbs per element (for exponents b
      binades apart: K = ceil((b + 53) / L), float b + 24): each input becomes
      the signed base-2^L digits of x / 2^lo, and p of them add up without
      overflow (lg p + 1 bits of headroom), so the vectorised int64 SUM kernel
      of whatever schedule runs does the exact arithmetic. A block with inf,
      NaN or -0 adds a word per element counting them in three 21-bit fields
      (+inf or NaN, -inf or NaN, inputs that are not -0); a block of zeros
      has no words. A block's words go limb by limb (every element's limb 0,
      then every element's limb 1, ..., the count words last), so the loops
      load and store whole vectors. The common block (K <= 2, no subnormal)
      is encoded in floating point: x 2^(1074 - lo) and its truncating
      division by 2^L are exact, so no rounding mode or flush-to-zero can
      change them. Limbs go in rounds of at most 1 MiB (consecutive blocks),
      one collective each.
   3. Rounding. Carries are propagated and the integer rounded to nearest,
      ties to even, in integer arithmetic: K <= 2 as a 128-bit value whose top
      64 bits hold mantissa and round bit at fixed places; subnormal results
      (exact), overflow (signed infinity) and wider blocks the general way.
      On x86 the common block's normal results come from one int64
      conversion of a window of 60+ bits rounded to odd (redcoll__xround_cvt),
      with MXCSR at its default (nearest, no FTZ/DAZ, exceptions masked) for
      the pass and the caller's restored after it.
      Any NaN, or +inf with -inf, gives the quiet NaN 0x7ff8.. / 0x7fc0..; an
      exact zero is -0 only when every input was -0.
   Vectors whose whole-range encoding fits in 8 KiB skip step 1: every
   element gets the limbs of the whole range (K = ceil(2098 / L), 35 at
   p = 2) and the count word: one collective in all.
   Local folds (redcoll__xfold): steps 1 to 3 on one rank for p vectors,
   block by block in cache: the block's range over the p vectors, their
   limbs summed (int64, exact), the rounding. Doubles where the FP
   environment is the library's to set (x86-64, no -ffast-math) try a fast
   way first: the p inputs added by TwoSum, the errors by TwoSum again, the
   second-level errors in floating point, and the result certified
   correctly rounded by a bound on what that leaves out (exactly at p <= 3
   or with no second-level error); a block with an element not certified,
   a special value or an overflow goes the limbs' way.
   Gathered: an AUTO allreduce (reduce) whose p inputs hold at most 64 KiB
   together (REDCOLL__XGATHER_BYTES) at p <= 32 allgathers the inputs (to
   the root) instead and folds them on every rank (the root): one
   collective, no wider than the inputs, where the two collectives' latency
   (or the direct path's 36 words per element) outweighs p scans and
   encodings. For doubles where the fast way runs, where the model prices
   p - 1 pairwise exchanges of the whole vector at most the allgather and
   the fold's second read of the gathered inputs (redcoll__xarrive_pays:
   p <= 3 in the default model), each peer's vector is added as it arrives
   instead (redcoll__xacc, as the exchanged path below, with the whole
   vector as the block): no allgather, no inner collective. So is an
   allreduce of doubles of up to 256 KiB of inputs over all ranks
   (REDCOLL__XARRIVE_BYTES) that would run exchanged, where the model
   prices that below the exchange (redcoll__xarrive_beats: on a transport
   that reduces from the sender's memory, p <= 3 in the default model):
   the exchange's allgatherv copies results the peer has just written, and
   on threads their lines then cross between cores twice per call. p = 1:
   the input, a NaN made canonical.
   Exchanged: an AUTO allreduce where the model prices it below the limbs'
   rounds (redcoll__xexchange_pays; the default model, doubles within 64
   binades: from 32 KiB at p = 4, 128 KiB at p = 16, 512 KiB at p = 64)
   runs in rounds of at most 1 MiB of inputs over
   all ranks (REDCOLL__XXCHG_BYTES): an alltoall of the raw inputs gives
   rank r block r of every rank's round, r folds it, an allgatherv shares
   the results. The wire carries the ordinary sum's bytes (an alltoall and
   an allgather of the vector) and there is no range collective. For
   doubles where the fast way runs, a pairwise alltoall folds on arrival
   (redcoll__xacc): each peer's block is added into the TwoSum state as
   the transport hands it over (on threads straight from the peer's
   buffer, like the ordinary sum's receive-and-reduce) and copied into the
   stage on the way, which the exact way reads for a block that does not
   certify; no separate fold pass, and this rank's own block is read where
   it is (copied first only in place). The last input, handed over whole,
   is not copied: its blocks are judged as it is added, and only a block
   that does not certify is staged.
   Two ranks (x86-64, redcoll__xpair): the correctly rounded sum of two
   inputs is their IEEE sum in the default FP environment, so p = 2 runs the
   caller's ordinary schedule with the pair kernel (redcoll__k_xsum_f64 in
   [SECTION:kernels]: NaN made canonical, MXCSR held at its default while it
   runs): exactly the ordinary sum's messages, bytes and time.
   REDCOLL_NO_EXACT_PAIR keeps the general method there (benchmarks). So
   the two ranks of a job must agree on it: both x86-64 builds, both with
   or both without the macro (a job mixing them fails or hangs).

   Collectives: allreduce runs step 1 and every round as allreduces with the
   caller's options (its algorithm, or AUTO's choice for the largest round);
   with AUTO from REDCOLL__XSPLIT_BYTES of input, where the model says it
   pays (redcoll__xsplit_pays: up to p = 16 or so), every round as a
   reduce_scatter (pairwise) of the limbs in p groups of blocks, each rank
   rounding its group, and an allgatherv (ring) of the values: at p = 2
   half the rounding per rank, and the way back carries 8 (float 4) bytes
   per element instead of 8K; reduce: step 1 an allreduce (AUTO),
   rounds reduces to the root, which alone rounds; reduce_scatter(_block):
   step 1 an allreduce over the whole vector (every rank encodes all of it),
   rounds irregular reduce_scatters with the caller's algorithm; gathered:
   one allgather (gather) of the inputs, AUTO's choice.

   Cost per rank, n elements (gathered: an allgather, or gather, of n
   elements, and p scans, p encodings, p - 1 int64 sums of n K words, one
   rounding): one collective of 6n/64 bytes (none when
   direct), then the collective's cost on n (K + s) 8-byte words (s = 1 in
   blocks with inf, NaN or -0) in R = ceil(8 n (K + s) / 1 MiB) rounds: the
   messages of 1 + R collectives (R when direct; 1 + 2R split) instead of 1; local
   work: a range scan, an encoding and a rounding pass over the n inputs
   beside the int64 sums. Their full blocks of the common case (K <= 2, no
   special value) run branch-free loops of constant length, compiled per
   instruction set and picked at setup (redcoll__xloops_for): with AVX-512
   (F, DQ, VL, CD) all three vectorise, with AVX2 the scan (measured: README,
   "Reproducible sums"). Bytes a rank sends at
   p = 2 (ordinary sum: 8): 16 per element (+ 0.09; split: 12) for doubles
   within 69 binades at p = 2, within 53 at p <= 512; 24 up to 70 binades at
   any p < 2^21. K grows with the range: 35 limbs for a block holding both
   1e-300 and 1e300 at p = 2. Limit: p < 2^21, else REDCOLL_ERR_UNSUPPORTED.

   Scratch: 6 bytes per block and a round buffer of min(1 MiB, what the call
   could need at most), p counts (reduce_scatter; 2p split); gathered: the
   fold's 57 KiB (REDCOLL__XFOLD_WORDS) and the p n inputs; exchanged: the
   fold's and one round's inputs of every rank (at most 1 MiB), p counts,
   and, folding on arrival, 8 bytes per block of this rank's part of a
   round (at p > 2 and 32 bytes per element more: the TwoSum rows;
   gathered on arrival the same for the whole vector);
   p = 1: none; all known from (collective,
   p, counts, dtype) before the data is seen; the inner collectives run
   nested on the call's arena (redcoll__nested) with their scratch for one
   round's vector, at most redcoll__xcap() words. An AUTO algorithm of the
   rounds is fixed at setup for that largest round, and a measuring pass
   runs the inner collective at that size (redcoll__xsize_rounds), so a
   plan's block holds every run: a plan run allocates nothing. A transport
   that moves no data (REDCOLL_TRANSPORT_NO_DATA) models every block as 64
   binades wide, and its vectors are never-touched addresses. */

/* ---- constants, the two formats, bit tools -------------------------------- */

#define REDCOLL__XBLOCK        64                  /* elements per range block */
#define REDCOLL__XROUND_BYTES  ((size_t)1 << 20)  /* limbs per round */
#define REDCOLL__XDIRECT_BYTES ((size_t)8192)     /* full-range encoding up to this */
#define REDCOLL__XFIELD        21                  /* bits of one count field */
#define REDCOLL__XMAX_P        ((1 << REDCOLL__XFIELD) - 1)
#define REDCOLL__XKMAX         56                  /* > ceil(2098 / 41): limbs at the smallest L */
#define REDCOLL__XTYPICAL      64                  /* binades a no-data run assumes */
#define REDCOLL__XSPLIT_BYTES  ((size_t)65536)    /* allreduce inputs from here: reduce_scatter + allgatherv */
#define REDCOLL__XGATHER_BYTES ((size_t)65536)    /* allreduce: every rank's inputs, up to this, gathered */
#define REDCOLL__XGATHER_P     32                  /* ... at up to this many ranks */
#define REDCOLL__XARRIVE_BYTES ((size_t)262144)   /* allreduce of doubles: every rank's inputs, up to this,
                                                      added as they arrive where the model says so */
#define REDCOLL__XFOLD_WORDS   (2 * (REDCOLL__XKMAX + 1) * REDCOLL__XBLOCK) /* redcoll__xfold's scratch */
#define REDCOLL__XXCHG_BYTES   ((size_t)1 << 20)  /* exchanged: inputs per round, all ranks' blocks */

/* The per-element helpers of the hot loops: inlined into them. */
#if defined(__GNUC__) || defined(__clang__)
#define REDCOLL__XHOT static inline __attribute__((always_inline))
#else
#define REDCOLL__XHOT static inline
#endif

/* The hot loops are branch-free over fixed-width blocks with unaliased
   pointers, so that GCC and Clang vectorise them at -O2 where the target has
   the lane operations (redcoll__xloops_for below). */
#if defined(__GNUC__) || defined(__clang__)
#define REDCOLL__XRESTRICT __restrict
#else
#define REDCOLL__XRESTRICT
#endif
#define REDCOLL__XNZ(v) ((v) != 0 ? (uint64_t)1 : (uint64_t)0) /* a select: vectorises */

/* An IEEE binary format: float or double. */
typedef struct redcoll__xfmt {
    int      frac;     /* fraction bits */
    unsigned emax;     /* the all-ones exponent field */
    int      top;      /* highest bit position of a finite value */
    int      bits;     /* width */
    uint64_t nan;      /* the canonical quiet NaN */
} redcoll__xfmt;

static const redcoll__xfmt redcoll__xf64 = { 52, 2047, 2097, 64, 0x7ff8000000000000ull };
static const redcoll__xfmt redcoll__xf32 = { 23, 255, 276, 32, 0x7fc00000ull };

REDCOLL__XHOT uint64_t redcoll__xload(const redcoll__xfmt *f, const void *p) {
    if (f->bits == 64) { uint64_t u; memcpy(&u, p, 8); return u; }
    else { uint32_t u; memcpy(&u, p, 4); return u; }
}

REDCOLL__XHOT void redcoll__xstore(const redcoll__xfmt *f, void *p, uint64_t u) {
    if (f->bits == 64) memcpy(p, &u, 8);
    else { uint32_t v = (uint32_t)u; memcpy(p, &v, 4); }
}

/* Leading zeros of x (64 for 0), branch-free where the compiler can (lzcnt,
   vplzcntq), so loops around it still vectorise. */
REDCOLL__XHOT int redcoll__xclz(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return x ? __builtin_clzll(x) : 64;
#else
    int n = 64;
    while (x) { --n; x >>= 1; }
    return n;
#endif
}

/* Leading zeros of x != 0 as a 64-bit lane: the rounding loop's shifts take
   it as is (an int result is narrowed and widened again, 10% of that loop). */
REDCOLL__XHOT uint64_t redcoll__xclz64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (uint64_t)__builtin_clzll(x);
#else
    return (uint64_t)redcoll__xclz(x);
#endif
}

/* Bit length of x (0 for 0). */
static int redcoll__xbitlen(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return x ? 64 - __builtin_clzll(x) : 0;
#else
    int n = 0;
    while (x) { ++n; x >>= 1; }
    return n;
#endif
}

/* floor(v / 2^s), 0 < s < 64. >> of a negative value is implementation-
   defined in C: GCC and Clang define it as this arithmetic shift; elsewhere
   the sign bits are put in by hand (no branch). */
REDCOLL__XHOT int64_t redcoll__xasr(int64_t v, int s) {
#if defined(__GNUC__) || defined(__clang__)
    return v >> s;
#else
    uint64_t u = (uint64_t)v, neg = (uint64_t)0 - (u >> 63);
    return (int64_t)((u >> s) | (neg << (63 - s) << 1));
#endif
}

/* ---- two ranks: the pair path --------------------------------------------- */

/* 1 when a SUM_EXACT call runs as one IEEE addition per element inside the
   ordinary schedules (redcoll__k_xsum_f64): two ranks, and kernels that
   hold the FP environment at its default. The general method's refusals
   stay refusals at p = 2. */
#if REDCOLL__FENV_CONTROL && !defined(REDCOLL_NO_EXACT_PAIR)
#define REDCOLL__XPAIR_ON 1
#else
#define REDCOLL__XPAIR_ON 0
#endif
static int redcoll__xpair(const redcoll__ctx *c) {
#if REDCOLL__XPAIR_ON
    return c->op.kind == REDCOLL_OP_SUM_EXACT && c->size == 2 &&
           (c->coll != REDCOLL_COLL_REDUCE_SCATTER_BLOCK ||
            redcoll_algo_supported(REDCOLL_COLL_REDUCE_SCATTER, c->o.algo));
#else
    (void)c;
    return 0;
#endif
}

/* ---- one call: its state, and its blocks in vector order ---------------------- */

/* A block's global range: limbs from bit lo, K limbs, sp = a count word. */
typedef struct redcoll__xblk { int lo, K, sp; } redcoll__xblk;

typedef struct redcoll__xsum {
    redcoll__ctx        *c;       /* the checked call: transport, dtype, options */
    const redcoll__xfmt *f;
    const struct redcoll__xloops *loops; /* this CPU's passes for f */
    redcoll_coll         coll;
    const char          *in;      /* every input element (IN_PLACE resolved) */
    char                *out;     /* whole vector; this rank's segment for the scatters */
    size_t               total;   /* elements */
    const size_t        *counts;  /* reduce_scatter: per rank */
    size_t               each;    /* reduce_scatter_block: per rank */
    int                  segs;    /* 1, or p for the scatters */
    int                  scatter; /* reduce_scatter(_block) */
    int                  root;
    int                  L, kfull;
    uint64_t             Linv;    /* 2^32 / L + 1: r / L = r Linv >> 32 for r < 2^17 */
    int                  direct;  /* the full range for every block, no step 1 */
    int                  assumed; /* blocks not measured: direct, or no data moves */
    int                  sizing;  /* a measuring pass: the largest round's shapes, not the rounds */
    int                  split;   /* allreduce rounds as reduce_scatter + allgatherv */
    int                  gathered; /* allreduce, reduce: one allgather (gather) of the inputs, sums local */
    int                  exchanged; /* allreduce: alltoall, local sums, allgatherv per round */
    int                  arrive;  /* gathered allreduce: each rank's whole vector added as it arrives */
    size_t               m;       /* exchanged: elements per rank in a full round */
    redcoll_algo         algo;    /* the rounds' algorithm, fixed at setup (exchanged: the alltoall's) */
    redcoll_algo         algo2;   /* split, exchanged: the allgatherv's */
    size_t               nblocks, cap;  /* cap: words of one round */
    uint16_t            *info;    /* 3 words per block: hi + 1, 0xffff - lo, special */
    size_t               info_bytes;
    int64_t             *limb;    /* one round */
    size_t              *rcounts; /* reduce_scatter, split: words per rank in a round */
    size_t              *ecounts; /* split: elements per rank in a round */
    char                *all;     /* gathered: every rank's inputs, rank after rank */
    char                *stage;   /* exchanged: this rank's block of every rank's round */
    int64_t             *fold;    /* gathered, exchanged: redcoll__xfold's scratch */
    void                *mem;     /* info and limb (gathered: twice, and all) */
    size_t               mem_bytes;
} redcoll__xsum;

/* Walks blocks in vector order: segment seg, `off` into it, element `at`. */
typedef struct redcoll__xcur { int seg; size_t off, at, b; } redcoll__xcur;

REDCOLL__XHOT size_t redcoll__xseg_len(const redcoll__xsum *x, int s) {
    return x->counts ? x->counts[s] : x->scatter ? x->each : x->total;
}

/* Elements of the block at k (0 at the end), skipping empty segments. */
REDCOLL__XHOT size_t redcoll__xblock_len(const redcoll__xsum *x, redcoll__xcur *k) {
    size_t len;
    while (k->seg < x->segs && k->off == redcoll__xseg_len(x, k->seg)) { ++k->seg; k->off = 0; }
    if (k->seg == x->segs) return 0;
    len = redcoll__xseg_len(x, k->seg) - k->off;
    return len < REDCOLL__XBLOCK ? len : REDCOLL__XBLOCK;
}

REDCOLL__XHOT void redcoll__xadvance(redcoll__xcur *k, size_t n) { k->off += n; k->at += n; ++k->b; }

/* The block's range from its words; without measured ranges the whole range
   with a count word (direct), or REDCOLL__XTYPICAL binades (no data). */
REDCOLL__XHOT redcoll__xblk redcoll__xblock(const redcoll__xsum *x, size_t b) {
    const uint16_t *w = x->info + 3 * b;
    redcoll__xblk k;
    if (x->assumed) {
        int span = x->direct ? x->f->top + 1 : REDCOLL__XTYPICAL + x->f->frac + 1;
        k.lo = 0;
        k.K = (span + x->L - 1) / x->L;
        k.sp = x->direct;
        return k;
    }
    k.sp = w[2] != 0;
    k.lo = 0xffff - w[1];
    /* (hi + 1 - lo) / L rounded up, as r inv >> 32 (r < 2^17, L >= 41: exact) instead of a
       division per block */
    k.K = w[0] ? (int)(((uint64_t)(w[0] - k.lo + x->L - 1) * x->Linv) >> 32) : 0;
    return k;
}

/* ---- step 1: ranges ------------------------------------------------------- */

/* Step 1's fast scan of n inputs: the smallest exponent field (+0 left out)
   and the largest, and whether any input is an inf, a NaN, a subnormal or
   a -0 (nonzero return). Per element only a shift, a subtraction, a min and
   a max of the bits without the sign (whose order is the magnitudes'), the
   fields taken once: the largest is the all-ones field for an inf or a NaN,
   the smallest 0 for a subnormal or a -0 (its key is 0, +0's the largest). */
REDCOLL__XHOT uint64_t redcoll__xscan(redcoll__xfmt f, const char *REDCOLL__XRESTRICT in, size_t n,
                                      uint64_t *emin_, uint64_t *emx_) {
    const int F = f.frac, es = f.bits / 8;
    const uint64_t ones = ((uint64_t)2 << (f.bits - 1)) - 1; /* the format's bits */
    uint64_t kmin = ones, kmax = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        uint64_t u = redcoll__xload(&f, in + i * (size_t)es), a = (u << 1) & ones;
        kmax = a > kmax ? a : kmax;
        a = (a - (uint64_t)(u == 0)) & ones;            /* +0 has no bits: the largest key */
        kmin = a < kmin ? a : kmin;
    }
    *emin_ = kmin >> (F + 1);
    *emx_ = kmax >> (F + 1);
    return (*emx_ == f.emax) | (*emin_ == 0);
}

/* Step 1 for one block of n inputs: bits hi down to lo hold every finite
   nonzero value (hi = -1: none), and whether it has an inf, a NaN or a -0.
   The fast scan (`odd` its result) reads exponent fields only: lo is then the
   place of the mantissa's bit 0; a block with a subnormal, inf, NaN or -0 is
   scanned again exactly. */
static void redcoll__xrange(const redcoll__xfmt *f, const char *in, size_t n, uint64_t odd,
                            uint64_t emin, uint64_t emx, int *hi_, int *lo_, int *sp_) {
    const int F = f->frac, es = f->bits / 8;
    const uint64_t fm = ((uint64_t)1 << F) - 1, sign = (uint64_t)1 << (f->bits - 1);
    int hi = -1, lo = 0xffff, sp = 0;
    size_t i;
    if (!odd) {
        *hi_ = emx ? (int)emx - 1 + F : -1;
        *lo_ = emx ? (int)emin - 1 : 0xffff;
        *sp_ = 0;
        return;
    }
    for (i = 0; i < n; ++i) {
        uint64_t u = redcoll__xload(f, in + i * (size_t)es), m = u & fm;
        int e = (int)(u >> F) & (int)f->emax, a = e ? e - 1 : 0, t;
        if (e == (int)f->emax || (e == 0 && m == 0)) { sp |= e == (int)f->emax || u == sign; continue; }
        if (e) m |= fm + 1;
        t = a + 63 - redcoll__xclz(m);
        hi = t > hi ? t : hi;
        t = a + 63 - redcoll__xclz(m & ((uint64_t)0 - m));
        lo = t < lo ? t : lo;
    }
    *hi_ = hi; *lo_ = lo; *sp_ = sp;
}

/* Step 1 on this rank: the range words of every block (f is *x->f). */
REDCOLL__XHOT void redcoll__xranges(redcoll__xsum *x, redcoll__xfmt f) {
    const size_t es = (size_t)f.bits / 8;
    redcoll__xcur k = { 0, 0, 0, 0 };
    size_t n;
    while ((n = redcoll__xblock_len(x, &k)) != 0) {
        const char *in = x->in + k.at * es;
        uint64_t emin, emx, odd;
        int hi, lo, sp;
        if (n == REDCOLL__XBLOCK) odd = redcoll__xscan(f, in, REDCOLL__XBLOCK, &emin, &emx);
        else odd = redcoll__xscan(f, in, n, &emin, &emx);
        redcoll__xrange(x->f, in, n, odd, emin, emx, &hi, &lo, &sp);
        x->info[3 * k.b] = (uint16_t)(hi + 1);
        x->info[3 * k.b + 1] = (uint16_t)(hi < 0 ? 0 : 0xffff - lo);
        x->info[3 * k.b + 2] = (uint16_t)sp;
        redcoll__xadvance(&k, n);
    }
}

/* ---- step 2: limbs -------------------------------------------------------- */

/* Step 2 in floating point for the common block: y = x 2^(bias - lo) is an
   integer below 2^(KL) (bias: 1074, 149), and its digits come from a
   truncating division by 2^L; every operation is exact, so the FP
   environment (rounding mode, flush to zero) cannot change the result.
   Needs lo >= F (no subnormal input) and a normal scale factor. Limb j of
   element i goes to w[j n + i] (a block's limbs limb by limb: plain vector
   stores, and the same layout the rounding reads); `add`: added to what w
   holds (the local sums of redcoll__xfold). */
REDCOLL__XHOT void redcoll__xencode_fp(redcoll__xfmt f, int L, const char *REDCOLL__XRESTRICT in,
                                       size_t n, int K, int lo, int64_t *REDCOLL__XRESTRICT w, int add) {
    const int bias = f.bits == 64 ? 1074 : 149;
    const uint64_t sb = (uint64_t)(bias - lo + 1023) << 52, rb = (uint64_t)(1023 - L) << 52,
                   bb = (uint64_t)(1023 + L) << 52;
    double S, R, B;
    size_t i;
    memcpy(&S, &sb, 8); memcpy(&R, &rb, 8); memcpy(&B, &bb, 8);  /* 2^(bias-lo), 2^-L, 2^L */
    for (i = 0; i < n; ++i) {
        double y;
        if (f.bits == 64) memcpy(&y, in + 8 * i, 8);
        else { float v; memcpy(&v, in + 4 * i, 4); y = v; }
        y *= S;
        if (K == 1) { w[i] = (add ? w[i] : 0) + (int64_t)y; continue; }
        {
            int64_t h = (int64_t)(y * R);
            w[n + i] = (add ? w[n + i] : 0) + h;
            w[i] = (add ? w[i] : 0) + (int64_t)(y - (double)h * B);
        }
    }
}

/* Step 2 the general way: the signed base-2^L digits of n inputs x / 2^lo,
   K limbs per element and the count word when k->sp; word j of element i at
   w[j n + i], as every block's. */
static void redcoll__xencode_gen(const redcoll__xsum *x, const char *in, size_t n,
                                 const redcoll__xblk *k, int64_t *w) {
    const redcoll__xfmt *f = x->f;
    const int F = f->frac, L = x->L, K = k->K, kw = k->K + k->sp, es = f->bits / 8;
    const uint64_t fm = ((uint64_t)1 << F) - 1, mask = ((uint64_t)1 << L) - 1;
    const int64_t z1 = (int64_t)1 << (2 * REDCOLL__XFIELD);     /* one input that is not -0 */
    size_t i;
    for (i = 0; i < n; ++i) {
        int64_t *wi = w + i;
        uint64_t u = redcoll__xload(f, in + i * (size_t)es), m = u & fm, d[3];
        unsigned e = (unsigned)(u >> F) & f->emax;
        int neg = (int)(u >> (f->bits - 1)), a, r, q, o, j;
        for (j = 0; j < kw; ++j) wi[j * n] = 0;
        if (e == f->emax) { /* NaN counts as both infinities */
            if (k->sp) wi[K * n] = z1 + (m ? 1 + ((int64_t)1 << REDCOLL__XFIELD)
                                           : (int64_t)1 << (neg ? REDCOLL__XFIELD : 0));
            continue;
        }
        if (k->sp && (m || e || !neg)) wi[K * n] = z1;
        if (e == 0 && m == 0) continue;
        if (e) m |= fm + 1;
        a = e ? (int)e - 1 : 0;            /* position of m's bit 0 */
        r = a - k->lo;
        if (r < 0) { m >>= -r; r = 0; }   /* only zeros below lo */
        q = (int)(((uint64_t)r * x->Linv) >> 32);
        o = r - q * L;
        d[0] = (m << o) & mask;
        d[1] = (m >> (L - o)) & mask;
        d[2] = 2 * L - o < 64 ? m >> (2 * L - o) : 0;
        for (j = 0; j < 3 && q + j < K; ++j) wi[(q + j) * n] = neg ? -(int64_t)d[j] : (int64_t)d[j];
    }
}

/* ---- step 3: rounding ----------------------------------------------------- */

/* Bits [b, b + 64) of sum_j g[j] 2^(jL), b may be negative; and whether any
   bit below b is set. g[K-1] may be wider than L bits. */
static uint64_t redcoll__xbits(const uint64_t *g, int K, int L, int b, int *sticky) {
    uint64_t v = 0;
    int j;
    *sticky = 0;
    for (j = 0; j < K; ++j) {
        int s = j * L - b; /* where digit j's bit 0 lands */
        if (!g[j]) continue;
        if (s >= 64) break;
        if (s >= 0) v |= g[j] << s;
        else if (s > -64) { v |= g[j] >> -s; *sticky |= (g[j] & (((uint64_t)1 << -s) - 1)) != 0; }
        else *sticky = 1;
    }
    return v;
}

/* The bits of the value (-1)^neg (v >> 1) 2^(u - lo) rounded to nearest, ties
   to even: v holds bits u-1 .. u+62 of the magnitude (bit 0 the round bit),
   sticky whether any lower bit is set; u is the index of the result's ulp. */
REDCOLL__XHOT uint64_t redcoll__xpack(const redcoll__xfmt *f, int lo, int u, uint64_t v, int sticky,
                                      int neg) {
    const int F = f->frac;
    const uint64_t sign = neg ? (uint64_t)1 << (f->bits - 1) : 0;
    uint64_t mant = v >> 1 & (((uint64_t)2 << F) - 1);
    long field;
    if ((v & 1) && (sticky || (mant & 1))) { /* round half to even */
        if (++mant >> (F + 1)) { mant >>= 1; ++u; }
    }
    field = mant >> F ? (long)lo + u + 1 : 0;
    if (field >= (long)f->emax) return sign | (uint64_t)f->emax << F;
    return sign | (uint64_t)field << F | (mant & (((uint64_t)1 << F) - 1));
}

/* The result's ulp index for a magnitude whose top bit has index P: F bits
   below it, but not below the smallest subnormal (index -lo). */
REDCOLL__XHOT int redcoll__xulp(const redcoll__xfmt *f, int P, int lo) {
    return P - f->frac < -lo ? -lo : P - f->frac;
}

/* Step 3 for the common block (K <= 2, no count word), one element
   w0 + w1 2^L (w1 = 0 for K = 1): the magnitude as 128 bits h:l; its top 64
   bits x (top bit set) hold mantissa and round bit at fixed places, the rest
   is sticky, and adding the mantissa onto the exponent lets a rounding carry
   bump it. Without a branch (both shifts computed, masks choose), so the
   block loops vectorise. Returns 0 for a zero sum; sets the top bit of *slow
   when a nonzero result is subnormal or overflows (the caller redoes those,
   and zeros, the general way). */
REDCOLL__XHOT uint64_t redcoll__xround_fast(redcoll__xfmt f, int L, int lo, int64_t w0, int64_t w1,
                                            uint64_t *slow) {
    const int F = f.frac;
    const uint64_t mask = ((uint64_t)1 << L) - 1;
    int64_t t = w1 + redcoll__xasr(w0, L);
    uint64_t l = (uint64_t)t << L | ((uint64_t)w0 & mask), h = (uint64_t)redcoll__xasr(t, 64 - L);
    uint64_t sm = (uint64_t)0 - (h >> 63), hz, any, hi, lw, s, x, top, mant, rest, field, bits;
    h = (h ^ sm) + (sm & (1 - REDCOLL__XNZ(l)));        /* the magnitude */
    l = (l ^ sm) - sm;
    hz = (uint64_t)0 - REDCOLL__XNZ(h);                 /* all ones when h != 0 */
    any = (uint64_t)0 - REDCOLL__XNZ(h | l);
    hi = (hz & h) | (~hz & l);                          /* h:l, or l:0 when h is 0 */
    lw = hz & l;
    s = redcoll__xclz64(hi | 1);
    x = hi << s | (lw >> 1 >> (63 - s));                /* top bit set */
    top = (hz & 64) + 63 - s;                           /* its index in h:l */
    mant = x >> (63 - F);                               /* F + 1 bits */
    rest = x << (F + 1);                                /* round bit on top, then sticky */
    mant += (rest >> 63) & (REDCOLL__XNZ((rest << 1) | (lw << s)) | (mant & 1)); /* ties to even */
    field = (uint64_t)(int64_t)lo + top - (uint64_t)F + 1;
    bits = ((field - 1) << F) + mant;                   /* a carry bumps the exponent */
    *slow |= any & ((field - 1) | ((((uint64_t)f.emax << F) - 1) - bits)); /* field < 1, or inf */
    return (bits | (sm & ((uint64_t)1 << (f.bits - 1)))) & any;
}

/* redcoll__xround_fast by conversion, for x86 with MXCSR at its default
   (round to nearest, no flush to zero; redcoll__xdecode_round sets it):
   a third fewer instructions. t = w1 + floor(w0 / 2^L) and the value
   V = t 2^L + r, 0 <= r < 2^L; |t| < 2^62 + 2^(62 - L) (p high limbs below
   2^L each, L = 62 - ceil(lg p)), so |(double)t| < 2^63 and c >= 0 below.
   The exponent of (double)t gives log2|t| within one, so
   X = floor(V / 2^(L - c)) with its lowest bit set when bits were dropped
   (rounding to odd) has at least 60 significant bits and fits in int64
   (c = L: X = V exactly); one conversion of X to the format rounds it as V
   would round (round to odd at 2 or more extra bits, then to nearest, is
   rounding to nearest), and the scale 2^(L - c + lo - bias) goes onto the
   exponent field. Returns 0 for a zero sum; sets the top bit of *slow
   when a nonzero result is subnormal or overflows. */
REDCOLL__XHOT uint64_t redcoll__xround_cvt(redcoll__xfmt f, int L, int lo, int64_t w0, int64_t w1,
                                           uint64_t *slow) {
    const int F = f.frac;
    const int64_t bias = f.bits == 64 ? 1074 : 149;
    const uint64_t mask = ((uint64_t)1 << L) - 1;
    int64_t t = w1 + redcoll__xasr(w0, L), c, k;
    uint64_t r = (uint64_t)w0 & mask, e, X, bits, field, any;
    double a = (double)t;
    memcpy(&e, &a, 8);
    c = 1085 - (int64_t)(e >> 52 & 2047);              /* 62 - log2|t| or one less, >= 0 */
    c = c > L ? L : c;
    X = (uint64_t)t << c | r >> (L - c) | REDCOLL__XNZ(r << (64 - L) << c);
    any = (uint64_t)0 - REDCOLL__XNZ(X);
    if (f.bits == 64) { double d = (double)(int64_t)X; memcpy(&bits, &d, 8); }
    else { float d = (float)(int64_t)X; uint32_t b32; memcpy(&b32, &d, 4); bits = b32; }
    k = L - c + lo - bias;
    field = (bits >> F & f.emax) + (uint64_t)k;
    *slow |= any & ((field - 1) | ((f.emax - 1) - field)); /* field < 1, or inf */
    return (bits + ((uint64_t)k << F)) & any;
}

/* Step 3 for one element: its K summed limbs (and count word), st words
   apart, to the correctly rounded value's bits. */
static uint64_t redcoll__xround(const redcoll__xsum *x, const int64_t *w, size_t st, const redcoll__xblk *k) {
    const redcoll__xfmt *f = x->f;
    const int L = x->L, K = k->K;
    const uint64_t mask = ((uint64_t)1 << L) - 1, fmask = ((uint64_t)1 << REDCOLL__XFIELD) - 1;
    uint64_t g[REDCOLL__XKMAX], v;
    int64_t c = 0, top;
    int j, h, neg, sticky;
    if (k->sp) {
        uint64_t s = (uint64_t)w[K * st];
        int pinf = (s & fmask) != 0, ninf = ((s >> REDCOLL__XFIELD) & fmask) != 0;
        if (pinf && ninf) return f->nan;
        if (pinf || ninf) return (uint64_t)f->emax << f->frac | (uint64_t)ninf << (f->bits - 1);
    }
    if (K >= 1 && K <= 2) { /* normal results the short way; the rest below */
        uint64_t slow = 0;
        v = redcoll__xround_fast(*f, L, k->lo, w[0], K == 2 ? w[st] : 0, &slow);
        if (v && !(slow >> 63)) return v;
    }
    for (j = 0; j + 1 < K; ++j) { /* digits in [0, 2^L), carries up */
        int64_t t = w[j * st] + c;
        g[j] = (uint64_t)t & mask;
        c = redcoll__xasr(t, L);
    }
    top = K ? w[(K - 1) * st] + c : 0;
    neg = top < 0;
    if (neg) { /* the magnitude: negate the digits */
        int borrow = 0;
        for (j = 0; j + 1 < K; ++j) {
            uint64_t d = g[j] + (uint64_t)borrow;
            g[j] = d ? (((uint64_t)1 << L) - d) & mask : 0;
            borrow = d != 0;
        }
        top = -top - borrow;
    }
    if (K) g[K - 1] = (uint64_t)top;
    for (h = K - 1; h >= 0 && g[h] == 0; --h) {}
    if (h >= 0) {
        int u = redcoll__xulp(f, h * L + redcoll__xbitlen(g[h]) - 1, k->lo);
        v = redcoll__xbits(g, K, L, u - 1, &sticky);
        return redcoll__xpack(f, k->lo, u, v, sticky, neg);
    }
    /* exact zero: -0 only if no input was anything else */
    return k->sp && ((uint64_t)w[K * st] >> (2 * REDCOLL__XFIELD)) == 0 ? (uint64_t)1 << (f->bits - 1) : 0;
}

/* The common block's loop, for one format and K (constants once inlined);
   cvt: by conversion (redcoll__xround_cvt). f by value: the stores to out
   may alias anything behind a pointer. Returns 1 if some element must be
   redone the general way. */
REDCOLL__XHOT int redcoll__xdecode_fast(redcoll__xfmt f, int L, const int64_t *REDCOLL__XRESTRICT w,
                                        size_t n, int K, int lo, char *REDCOLL__XRESTRICT out, int cvt) {
    size_t i, es = (size_t)(f.bits / 8);
    uint64_t slow = 0;
    if (cvt && K == 1)
        for (i = 0; i < n; ++i) redcoll__xstore(&f, out + i * es, redcoll__xround_cvt(f, L, lo, w[i], 0, &slow));
    else if (cvt)
        for (i = 0; i < n; ++i)
            redcoll__xstore(&f, out + i * es, redcoll__xround_cvt(f, L, lo, w[i], w[n + i], &slow));
    else if (K == 1)
        for (i = 0; i < n; ++i) redcoll__xstore(&f, out + i * es, redcoll__xround_fast(f, L, lo, w[i], 0, &slow));
    else
        for (i = 0; i < n; ++i)
            redcoll__xstore(&f, out + i * es, redcoll__xround_fast(f, L, lo, w[i], w[n + i], &slow));
    return (int)(slow >> 63);
}

/* Round n elements of one block from the summed words w into out, the
   general way. */
static void redcoll__xdecode_gen(const redcoll__xsum *x, const int64_t *w, size_t n,
                                 const redcoll__xblk *k, char *out) {
    size_t i, es = (size_t)(x->f->bits / 8);
    for (i = 0; i < n; ++i) redcoll__xstore(x->f, out + i * es, redcoll__xround(x, w + i, n, k));
}

/* ---- the passes over a round, compiled per instruction set ---------------- */

/* Step 2 for the blocks of a round, from cur on while they fit in x->cap (at
   least one): encodes them into x->limb and returns the words; *end is the
   first block after them. The common block takes the floating-point
   encoder, a full one at a constant length (so its loop vectorises). */
REDCOLL__XHOT size_t redcoll__xencode_round(redcoll__xsum *x, redcoll__xfmt f, redcoll__xcur cur,
                                            redcoll__xcur *end) {
    const size_t es = (size_t)f.bits / 8;
    const int L = x->L, dry = x->c->dry;
    redcoll__xcur k = cur;
    size_t n, words = 0;
    while ((n = redcoll__xblock_len(x, &k)) != 0) {
        redcoll__xblk b = redcoll__xblock(x, k.b);
        size_t bw = n * (size_t)(b.K + b.sp);
        const char *in = x->in + k.at * es;
        int64_t *w = x->limb + words;
        /* at most cap words, and cap elements (blocks of zeros have no words) */
        if (k.b != cur.b && (words + bw > x->cap || k.at + n - cur.at > x->cap)) break;
        if (dry) {
        } else if (b.sp || b.K < 1 || b.K > 2 || b.lo < f.frac || (f.bits == 64 && b.lo > 2096)) {
            redcoll__xencode_gen(x, in, n, &b, w);
        } else if (n != REDCOLL__XBLOCK) {
            redcoll__xencode_fp(f, L, in, n, b.K, b.lo, w, 0);
        } else if (b.K == 1) {
            redcoll__xencode_fp(f, L, in, REDCOLL__XBLOCK, 1, b.lo, w, 0);
        } else {
            redcoll__xencode_fp(f, L, in, REDCOLL__XBLOCK, 2, b.lo, w, 0);
        }
        redcoll__account(x->c, n);
        if (x->scatter) x->rcounts[k.seg] += bw;
        words += bw;
        redcoll__xadvance(&k, n);
    }
    *end = k;
    return words;
}

/* Step 3 for the blocks cur .. end of a round: this rank's results (after a
   reduce_scatter rank me's blocks lead the buffer). cvt (x86 only): the
   common blocks by conversion, with MXCSR at its default for the pass and
   the caller's (modes and flags) restored after it. */
REDCOLL__XHOT void redcoll__xdecode_round(redcoll__xsum *x, redcoll__xfmt f, redcoll__xcur cur,
                                          redcoll__xcur end, int cvt) {
    const size_t es = (size_t)f.bits / 8;
    const int me = x->c->rank, scatter = x->scatter, dry = x->c->dry;
    size_t words = 0, mine = 0;
    unsigned env = cvt ? redcoll__fenv_default() : 0;
    cvt &= REDCOLL__FENV_CONTROL;
    while (cur.b != end.b) {
        size_t n = redcoll__xblock_len(x, &cur);
        redcoll__xblk b = redcoll__xblock(x, cur.b);
        size_t bw = n * (size_t)(b.K + b.sp);
        if (!scatter || cur.seg == me) {
            const int64_t *w = x->limb + (scatter ? mine : words);
            char *out = x->out + (scatter ? cur.off : cur.at) * es;
            int slow = 1;
            if (dry || b.sp || b.K < 1 || b.K > 2) {
            } else if (n == REDCOLL__XBLOCK) {
                slow = redcoll__xdecode_fast(f, x->L, w, REDCOLL__XBLOCK, b.K, b.lo, out, cvt);
            } else {
                slow = redcoll__xdecode_fast(f, x->L, w, n, b.K, b.lo, out, cvt);
            }
            if (slow && !dry) redcoll__xdecode_gen(x, w, n, &b, out);
            redcoll__account(x->c, n);
            mine += bw;
        }
        words += bw;
        redcoll__xadvance(&cur, n);
    }
    if (cvt) redcoll__fenv_restore(env);
}

/* The fold's fast way for doubles, where the FP environment is ours to set
   (x86-64, MXCSR at its default for the pass) and the compiler keeps IEEE
   semantics (no -ffast-math). Each element's p inputs are added in turn by
   error-free transformations (TwoSum: a + b = s + t exactly, s = RN(a + b)),
   and so are the errors t, into e; the second-level errors u are summed in
   floating point into g. So the exact sum is S = s + e + G, G the sum of
   the u, |G - g| <= (p - 2) 2^-52 sum |u| (recursive summation: exact
   under underflow for additions), and G = g at p <= 3 or when no u is
   nonzero. With e + g = z + ze and s + z = r + d (TwoSum), S - r = d + ze +
   (G - g): r = RN(s + z) is RN(S) when the last two are zero (then
   s + z = S), or when |d| + |ze| + that bound (rounded up) stays below half
   the spacing of the doubles around r (a quarter of r's ulp at a power of
   two, either side): certified; else the block goes the exact way (limbs).
   A zero result is -0 only when s is, that is when every input is -0.
   Results below 2^-959 that are not certified exact, infinities, NaNs and
   overflow also go the exact way. */
#if REDCOLL__FENV_CONTROL && !defined(__FAST_MATH__)
#define REDCOLL__XFAST 1
#else
#define REDCOLL__XFAST 0
#endif

/* The fast way's flags over a block, ORed lane by lane (redcoll__xfast_add
   keeps one accumulator per lane, so its loops vectorise): the bits of a
   (nonzero where some u is), of g (where a second-level error is left) and
   of r - r (a NaN where r is not finite, else +0). */
typedef struct redcoll__xflags {
    uint64_t a[8], g[8], inf[8];
} redcoll__xflags;

/* A block's flags as one word: some u nonzero (bit 0), some g nonzero
   (bit 1), some r not finite (bit 2). a and g are never -0, but their sign
   bits are dropped all the same. */
REDCOLL__XHOT uint64_t redcoll__xflags_any(const redcoll__xflags *fl) {
    uint64_t any = 0;
    int j;
    for (j = 0; j < 8; ++j) /* lane-wise first: one reduction across lanes */
        any |= REDCOLL__XNZ(fl->a[j] << 1) | REDCOLL__XNZ(fl->g[j] << 1) << 1 | REDCOLL__XNZ(fl->inf[j]) << 2;
    return any;
}

/* One input's step of the fast way for V (8 or 1) lanes of w's four rows
   (s, e, g, sum |u|; row stride REDCOLL__XBLOCK): `first` starts s and e
   from inputs x0 and x1 (the first error starts e: no second level yet),
   else x1 is added to the rows; `last` then gives r = RN(s + (e + g)) into
   out (right where certified) and ORs the flags (redcoll__xflags). A zero
   r takes s's sign when s is -0: s is -0 only when every input is (RN
   gives -0 only for -0 + -0), and then the exact sum is -0. The rows are
   written only where a later step or the check reads them (not at all when
   the first step is the last: p = 2, where no check runs). Branch-free over
   the lanes with no reduction across them, and with the lanes' values in
   registers between the rows' load and store: they vectorise. */
REDCOLL__XHOT void redcoll__xfast_add(const char *REDCOLL__XRESTRICT x0, const char *REDCOLL__XRESTRICT x1,
                                      double *REDCOLL__XRESTRICT w, char *REDCOLL__XRESTRICT out,
                                      const int V, const int first, const int last, redcoll__xflags *fl) {
    int j;
    for (j = 0; j < V; ++j) {
        double s, e, g, a, b, s1, bb, t;
        memcpy(&b, x1 + 8 * (size_t)j, 8);
        if (first) {
            memcpy(&s, x0 + 8 * (size_t)j, 8);
            s1 = s + b;
            bb = s1 - s;
            e = (s - (s1 - bb)) + (b - bb);
            s = s1;
            g = a = 0;
        } else {
            double e1, eb, u;
            s = w[j];
            e = w[j + REDCOLL__XBLOCK];
            g = w[j + 2 * REDCOLL__XBLOCK];
            a = w[j + 3 * REDCOLL__XBLOCK];
            s1 = s + b;
            bb = s1 - s;
            t = (s - (s1 - bb)) + (b - bb);
            e1 = e + t;
            eb = e1 - e;
            u = (e - (e1 - eb)) + (t - eb);
            s = s1;
            e = e1;
            g += u;
            a += u < 0 ? -u : u;
        }
        if (!(first && last)) {
            w[j] = s;
            w[j + REDCOLL__XBLOCK] = e;
            w[j + 2 * REDCOLL__XBLOCK] = g;
            w[j + 3 * REDCOLL__XBLOCK] = a;
        }
        if (last) {
            const uint64_t sign = (uint64_t)1 << 63;
            double r = s + (first ? e : e + g), nf = r - r;
            uint64_t rb, sb, nfb, m;
            memcpy(&rb, &r, 8);
            memcpy(&sb, &s, 8);
            memcpy(&nfb, &nf, 8);
            m = (uint64_t)0 - REDCOLL__XNZ(sb == sign); /* a mask, not a branch: it vectorises */
            rb = (rb & ~m) | (sign & m);
            memcpy(out + 8 * (size_t)j, &rb, 8);
            fl->inf[j] |= nfb;
            if (!first) {
                uint64_t ab, gb;
                memcpy(&ab, &a, 8);
                memcpy(&gb, &g, 8);
                fl->a[j] |= ab;
                fl->g[j] |= gb;
            }
        }
    }
}

/* One step over the n lanes of a block (see redcoll__xfast_add), 8 at a
   time. */
REDCOLL__XHOT void redcoll__xfast_pass(const char *REDCOLL__XRESTRICT x0, const char *REDCOLL__XRESTRICT x1,
                                       size_t n, double *REDCOLL__XRESTRICT w, char *REDCOLL__XRESTRICT out,
                                       const int first, const int last, redcoll__xflags *fl) {
    size_t i;
    for (i = 0; i + 8 <= n; i += 8)
        redcoll__xfast_add(x0 + 8 * i, x1 + 8 * i, w + i, out + 8 * i, 8, first, last, fl);
    for (; i < n; ++i) redcoll__xfast_add(x0 + 8 * i, x1 + 8 * i, w + i, out + 8 * i, 1, first, last, fl);
}

/* The check of V results r from w's rows where s + z = S is not certified
   for the whole block: bad[] lane-wise, must be done the exact way. */
REDCOLL__XHOT void redcoll__xfast_check(const double *REDCOLL__XRESTRICT w, int p, const int V, uint64_t *bad) {
    /* 2^-52; 2^-1000 (above any rounding error of a c, subnormal or not, and
       normal: no subnormal operand slows the loop); 1 - 2^-51 */
    const uint64_t cb = (uint64_t)(1023 - 52) << 52, tb = (uint64_t)(1023 - 1000) << 52,
                   hmb = 0x3feffffffffffffcull, fm = ((uint64_t)1 << 52) - 1;
    const uint64_t few = p <= 3;
    const double *s = w, *e = w + REDCOLL__XBLOCK, *g = w + 2 * REDCOLL__XBLOCK, *a = w + 3 * REDCOLL__XBLOCK;
    double c, tiny, hm;
    int j;
    memcpy(&c, &cb, 8);
    memcpy(&tiny, &tb, 8);
    memcpy(&hm, &hmb, 8);
    c *= (double)p; /* at least (p - 2) 2^-52 after rounding */
    for (j = 0; j < V; ++j) { /* |d| + |ze| + the bound below half the spacing around r */
        double z = e[j] + g[j], r = s[j] + z, zb = z - e[j], ze = (e[j] - (z - zb)) + (g[j] - zb);
        double rb = r - s[j], d = (s[j] - (r - rb)) + (z - rb), h, m;
        uint64_t rbits, zeb, ex, hb, ok;
        memcpy(&rbits, &r, 8);
        memcpy(&zeb, &ze, 8);
        ex = rbits >> 52 & 2047;
        hb = (ex - 53 - REDCOLL__XNZ((rbits & fm) == 0)) << 52; /* valid for ex >= 64 */
        memcpy(&h, &hb, 8);
        m = ((d < 0 ? -d : d) + (ze < 0 ? -ze : ze)) + (a[j] * c + tiny);
        ok = ((few | REDCOLL__XNZ(a[j] == 0)) & REDCOLL__XNZ((zeb << 1) == 0)) | /* s + z = S */
             (REDCOLL__XNZ(ex >= 64) & REDCOLL__XNZ(m <= h * hm));
        bad[j] |= ok ^ 1;
    }
}

/* Whether n results of the fast way, with w's rows and the lanes' flags
   ORed into any (redcoll__xflags_any), need the exact way: 1 for an
   infinity, NaN or overflow, or where the check finds s + z = S not
   certified; 0 when every result is right. */
REDCOLL__XHOT int redcoll__xfast_certify(const double *REDCOLL__XRESTRICT w, int p, size_t n, uint64_t any) {
    uint64_t bad[8] = { 0, 0, 0, 0, 0, 0, 0, 0 }, worse = 0;
    size_t i;
    int j;
    if (any >> 2) return 1;                                  /* infinities, NaNs, overflow */
    if (!(any >> 1 & 1) && (p <= 3 || !(any & 1))) return 0; /* s + z = S everywhere */
    for (i = 0; i + 8 <= n; i += 8) redcoll__xfast_check(w + i, p, 8, bad);
    for (; i < n; ++i) redcoll__xfast_check(w + i, p, 1, bad);
    for (j = 0; j < 8; ++j) worse |= bad[j];
    return worse != 0;
}

/* The fast way for a block of n <= REDCOLL__XBLOCK elements; w: 4
   REDCOLL__XBLOCK doubles. Returns 1 if some element must be done the
   exact way (the block's out is then partly written). */
REDCOLL__XHOT int redcoll__xfast(const char *REDCOLL__XRESTRICT in, size_t stride, int p, size_t n,
                                 char *REDCOLL__XRESTRICT out, double *REDCOLL__XRESTRICT w) {
    redcoll__xflags fl = { { 0 }, { 0 }, { 0 } };
    int q;
    if (p == 2) { /* the first step is the last */
        redcoll__xfast_pass(in, in + stride, n, w, out, 1, 1, &fl);
    } else {
        redcoll__xfast_pass(in, in + stride, n, w, out, 1, 0, &fl);
        for (q = 2; q < p - 1; ++q) redcoll__xfast_pass(in, in + (size_t)q * stride, n, w, out, 0, 0, &fl);
        redcoll__xfast_pass(in, in + (size_t)(p - 1) * stride, n, w, out, 0, 1, &fl);
    }
    return redcoll__xfast_certify(w, p, n, redcoll__xflags_any(&fl));
}

/* One input vector's limbs of a common block added into acc (the first
   vector's stored), at a constant length when the block is full. */
REDCOLL__XHOT void redcoll__xfold_add(redcoll__xfmt f, int L, const char *REDCOLL__XRESTRICT in, size_t n,
                                      int K, int lo, int64_t *REDCOLL__XRESTRICT acc, int add) {
    if (n != REDCOLL__XBLOCK) redcoll__xencode_fp(f, L, in, n, K, lo, acc, add);
    else if (K == 1 && add) redcoll__xencode_fp(f, L, in, REDCOLL__XBLOCK, 1, lo, acc, 1);
    else if (K == 1) redcoll__xencode_fp(f, L, in, REDCOLL__XBLOCK, 1, lo, acc, 0);
    else if (add) redcoll__xencode_fp(f, L, in, REDCOLL__XBLOCK, 2, lo, acc, 1);
    else redcoll__xencode_fp(f, L, in, REDCOLL__XBLOCK, 2, lo, acc, 0);
}

/* The exact way for one block of nb <= REDCOLL__XBLOCK elements of p
   vectors (vector q at in + q stride bytes) into out: the block's range
   over the p vectors (step 1 for all of them, no collective), their limbs
   added into one sum (int64: exact, as in a collective, for p < 2^(62 -
   L)), and the rounding. acc, tmp: (REDCOLL__XKMAX + 1) REDCOLL__XBLOCK
   words each. */
REDCOLL__XHOT void redcoll__xfold_exact(const redcoll__xsum *x, redcoll__xfmt f, const char *in, size_t stride,
                                        int p, size_t nb, char *o, int64_t *acc, int64_t *tmp, int cvt) {
    const size_t bw = REDCOLL__XBLOCK;
    const int L = x->L;
    uint64_t emin = ~(uint64_t)0, emx = 0, odd = 0;
    redcoll__xblk k;
    size_t j;
    int q, hi, lo, sp;
    for (q = 0; q < p; ++q) {
        uint64_t a, b;
        odd |= nb == bw ? redcoll__xscan(f, in + (size_t)q * stride, bw, &a, &b)
                        : redcoll__xscan(f, in + (size_t)q * stride, nb, &a, &b);
        emin = a < emin ? a : emin;
        emx = b > emx ? b : emx;
    }
    redcoll__xrange(&f, in, nb, 0, emin, emx, &hi, &lo, &sp);
    for (q = 0; odd && q < p; ++q) { /* a subnormal, inf, NaN or -0: exactly, vector by vector */
        int h, l, s2;
        redcoll__xrange(&f, in + (size_t)q * stride, nb, 1, 0, 0, &h, &l, &s2);
        if (q == 0 || h > hi) hi = h;
        if (q == 0 || l < lo) lo = l;
        sp = (q ? sp : 0) | s2;
    }
    k.lo = lo;
    k.sp = sp;
    k.K = hi < 0 ? 0 : (hi - lo + L) / L; /* ceil((hi + 1 - lo) / L) */
    if (!sp && k.K >= 1 && k.K <= 2 && lo >= f.frac && !(f.bits == 64 && lo > 2096)) {
        for (q = 0; q < p; ++q) redcoll__xfold_add(f, L, in + (size_t)q * stride, nb, k.K, lo, acc, q > 0);
        if (!(nb == bw ? redcoll__xdecode_fast(f, L, acc, bw, k.K, lo, o, cvt)
                       : redcoll__xdecode_fast(f, L, acc, nb, k.K, lo, o, cvt)))
            return;
    } else {
        const size_t words = nb * (size_t)(k.K + k.sp);
        for (q = 0; q < p; ++q) {
            redcoll__xencode_gen(x, in + (size_t)q * stride, nb, &k, q ? tmp : acc);
            for (j = 0; q && j < words; ++j) acc[j] += tmp[j];
        }
    }
    redcoll__xdecode_gen(x, acc, nb, &k, o);
}

/* Steps 1 to 3 on this rank alone: out[i] is the correctly rounded sum of
   element i of p vectors (vector q at base + q stride bytes), i < n. Block
   by block (REDCOLL__XBLOCK elements, in cache): the fast way for doubles,
   else or where it does not certify the exact way (redcoll__xfold_exact).
   scratch: REDCOLL__XFOLD_WORDS words. cvt: as for
   redcoll__xdecode_round. The gathered path folds every rank's whole
   vector; the exchanged path without a pairwise exchange this rank's block
   of every rank's round. */
REDCOLL__XHOT void redcoll__xfold(const redcoll__xsum *x, redcoll__xfmt f, const char *base, size_t stride,
                                  int p, size_t n, char *out, int64_t *scratch, int cvt) {
    const size_t es = (size_t)f.bits / 8, bw = REDCOLL__XBLOCK;
    int64_t *acc = scratch, *tmp = scratch + (size_t)(REDCOLL__XKMAX + 1) * bw;
    unsigned env = cvt || REDCOLL__XFAST ? redcoll__fenv_default() : 0;
    size_t i;
    cvt &= REDCOLL__FENV_CONTROL;
    for (i = 0; i < n; i += bw) {
        const size_t nb = n - i < bw ? n - i : bw;
        const char *in = base + i * es;
        char *o = out + i * es;
        if (REDCOLL__XFAST && f.bits == 64 &&
            !(nb == bw ? redcoll__xfast(in, stride, p, bw, o, (double *)(void *)acc)
                       : redcoll__xfast(in, stride, p, nb, o, (double *)(void *)acc)))
            continue;
        redcoll__xfold_exact(x, f, in, stride, p, nb, o, acc, tmp, cvt);
    }
    if (cvt || REDCOLL__XFAST) redcoll__fenv_restore(env);
}

/* The fold of a pairwise exchange, one input at a time as it arrives
   (doubles, the fast way): this rank's block of a round, m elements, its
   own inputs first, then each peer's where the transport hands them over
   (straight from the peer's buffer on threads). Each arriving piece is
   copied into the peer's slot of the stage (the exact way's inputs, should
   a block not certify) and added into the state: four rows per block of
   REDCOLL__XBLOCK (redcoll__xfast_add; none at p = 2, where the first step
   is the last and no check runs) and the block's flags. The last input
   writes the results. */
typedef struct redcoll__xacc {
    const redcoll__xsum *x;
    const char          *own;   /* this rank's inputs of the block */
    char                *out;   /* the block's results */
    char                *stage; /* slot q at stage + q m 8 bytes */
    size_t               m;
    size_t               n;     /* elements of this rank's block */
    int                  p;
    double              *rows;  /* 4 REDCOLL__XBLOCK doubles per block (p > 2) */
    uint64_t            *nzb;   /* per block: the lanes' flags, ORed */
    int                  q;     /* the arriving input's rank */
    int                  first, last;
    int                  judged; /* the last input's blocks were judged as it was added ... */
    size_t               redo;   /* ... and this many go the exact way */
} redcoll__xacc;

/* Whether the exchanged path's pairwise steps add inputs as they arrive
   (redcoll__xacc): where the fast way runs. */
static int redcoll__xacc_on(const redcoll__xsum *x) { return REDCOLL__XFAST && x->f->bits == 64; }

#define REDCOLL__XACC_CHUNK 2048 /* elements copied, then added, while in L1 */

/* Adds n elements of input a->q, from element `at` of the block, held at
   piece, copied into the stage's slot on the way if `copy` (unless they
   are there). */
REDCOLL__XHOT void redcoll__xacc_add(redcoll__xacc *a, const char *piece, size_t at, size_t n, int copy) {
    const size_t bw = REDCOLL__XBLOCK;
    char *slot = a->stage + ((size_t)a->q * a->m + at) * 8;
    size_t c, i;
    for (c = 0; c < n; c += REDCOLL__XACC_CHUNK) {
        const size_t cn = n - c < REDCOLL__XACC_CHUNK ? n - c : REDCOLL__XACC_CHUNK;
        if (copy && slot != piece) REDCOLL_MEMCPY(slot + c * 8, piece + c * 8, cn * 8);
        for (i = at + c; i < at + c + cn;) { /* runs within a block */
            const size_t b = i / bw, l = i % bw, len = (bw - l < at + c + cn - i ? bw - l : at + c + cn - i);
            const char *x1 = piece + (i - at) * 8, *x0 = a->own + i * 8;
            double *w = a->rows + b * 4 * bw + l;
            char *o = a->out + i * 8;
            redcoll__xflags fl = { { 0 }, { 0 }, { 0 } };
            if (a->first && a->last) redcoll__xfast_pass(x0, x1, len, w, o, 1, 1, &fl);
            else if (a->first) redcoll__xfast_pass(x0, x1, len, w, o, 1, 0, &fl);
            else if (a->last) redcoll__xfast_pass(x0, x1, len, w, o, 0, 1, &fl);
            else redcoll__xfast_pass(x0, x1, len, w, o, 0, 0, &fl);
            a->nzb[b] |= redcoll__xflags_any(&fl);
            i += len;
        }
    }
}

/* The consumer of an arriving input: the fast way's steps with MXCSR at
   its default (the transport may call it from a caller's test or wait).
   The last input, handed over whole (threads: the sender's buffer), is
   not staged: once it is added every block's state is complete, so each
   block is judged here, and only the inputs of a block the exact way must
   redo are copied (its flags then say so, and nothing else, to
   redcoll__xacc_finish). */
REDCOLL__XHOT void redcoll__xacc_piece(redcoll__xacc *a, const char *piece, size_t off, size_t bytes) {
    const size_t bw = REDCOLL__XBLOCK;
    char *slot = a->stage + (size_t)a->q * a->m * 8;
    const int judge = a->last && off == 0 && bytes == a->n * 8 && piece != slot;
    unsigned env = redcoll__fenv_default();
    size_t i;
    redcoll__xacc_add(a, piece, off / 8, bytes / 8, !judge);
    for (i = 0; judge && i < a->n; i += bw) {
        const size_t nb = a->n - i < bw ? a->n - i : bw, b = i / bw;
        int redo = redcoll__xfast_certify(a->rows + b * 4 * bw, a->p, nb, a->nzb[b]);
        a->nzb[b] = redo ? 4 : 0; /* "not finite": the exact way; 0: certified */
        if (redo) REDCOLL_MEMCPY(slot + i * 8, piece + i * 8, nb * 8);
        a->redo += (size_t)redo;
    }
    a->judged |= judge;
    redcoll__fenv_restore(env);
}

/* After the last input: each block of the n results certified from its
   flags and rows (as redcoll__xfast does), else done the exact way from
   the stage, where this rank's own inputs go first unless they are there
   (me: its slot). scratch: REDCOLL__XFOLD_WORDS words. */
REDCOLL__XHOT void redcoll__xacc_finish(redcoll__xacc *a, int p, int me, size_t n, int64_t *scratch, int cvt) {
    const size_t bw = REDCOLL__XBLOCK;
    char *mine = a->stage + (size_t)me * a->m * 8;
    int64_t *acc = scratch, *tmp = scratch + (size_t)(REDCOLL__XKMAX + 1) * bw;
    unsigned env;
    size_t i;
    if (a->judged && !a->redo) return; /* every block certified as the last input was added */
    env = redcoll__fenv_default();
    cvt &= REDCOLL__FENV_CONTROL;
    for (i = 0; i < n; i += bw) {
        const size_t nb = n - i < bw ? n - i : bw, b = i / bw;
        if (!redcoll__xfast_certify(a->rows + b * 4 * bw, p, nb, a->nzb[b])) continue;
        if (a->own != mine) REDCOLL_MEMCPY(mine + i * 8, a->own + i * 8, nb * 8);
        redcoll__xfold_exact(a->x, redcoll__xf64, a->stage + i * 8, a->m * 8, p, nb, a->out + i * 8, acc, tmp, cvt);
    }
    redcoll__fenv_restore(env);
}

/* Passes over the elements a rank folds (redcoll__xfold), m of each of p
   ranks' inputs: one over the inputs and one over the results where the
   fast way runs (doubles), else the exact way's scan, encoding and
   rounding. */
static size_t redcoll__xfold_passes(const redcoll__xsum *x, int p, size_t m) {
    return (REDCOLL__XFAST && x->f->bits == 64 ? (size_t)p + 1 : 2 * (size_t)p + 1) * m;
}

/* The passes over the call for one format, compiled once per instruction
   set: their block loops, of known length and with unaliased pointers,
   vectorise at -O2 where the lanes exist. */
typedef struct redcoll__xloops {
    void (*ranges)(redcoll__xsum *x);                                       /* redcoll__xranges */
    size_t (*encode)(redcoll__xsum *x, redcoll__xcur cur, redcoll__xcur *end); /* redcoll__xencode_round */
    void (*decode)(redcoll__xsum *x, redcoll__xcur cur, redcoll__xcur end);   /* redcoll__xdecode_round */
    void (*fold)(const redcoll__xsum *x, const char *base, size_t stride, int p, size_t n, char *out,
                 int64_t *scratch);                                           /* redcoll__xfold */
    void (*piece)(void *a, const void *piece, size_t off, size_t bytes);     /* redcoll__xacc_piece */
    void (*finish)(redcoll__xacc *a, int p, int me, size_t n, int64_t *scratch); /* redcoll__xacc_finish */
} redcoll__xloops;

#define REDCOLL__XLOOPS(SUF, ATTR, FMT, CVT)                                                       \
    static ATTR void redcoll__xranges_##SUF(redcoll__xsum *x) { redcoll__xranges(x, FMT); }       \
    static ATTR size_t redcoll__xencode_##SUF(redcoll__xsum *x, redcoll__xcur cur, redcoll__xcur *end) { \
        return redcoll__xencode_round(x, FMT, cur, end);                                           \
    }                                                                                              \
    static ATTR void redcoll__xdecode_##SUF(redcoll__xsum *x, redcoll__xcur cur, redcoll__xcur end) { \
        redcoll__xdecode_round(x, FMT, cur, end, CVT);                                             \
    }                                                                                              \
    static ATTR void redcoll__xfold_##SUF(const redcoll__xsum *x, const char *base, size_t stride, int p, \
                                          size_t n, char *out, int64_t *scratch) {                 \
        redcoll__xfold(x, FMT, base, stride, p, n, out, scratch, CVT);                             \
    }                                                                                              \
    static ATTR void redcoll__xpiece_##SUF(void *a, const void *piece, size_t off, size_t bytes) { \
        redcoll__xacc_piece((redcoll__xacc *)a, (const char *)piece, off, bytes);                  \
    }                                                                                              \
    static ATTR void redcoll__xfinish_##SUF(redcoll__xacc *a, int p, int me, size_t n, int64_t *scratch) { \
        redcoll__xacc_finish(a, p, me, n, scratch, CVT);                                           \
    }                                                                                              \
    static const redcoll__xloops redcoll__xloops_##SUF = { redcoll__xranges_##SUF,                 \
                                                           redcoll__xencode_##SUF, redcoll__xdecode_##SUF, \
                                                           redcoll__xfold_##SUF, redcoll__xpiece_##SUF, \
                                                           redcoll__xfinish_##SUF };

REDCOLL__XLOOPS(f64, , redcoll__xf64, 0)
REDCOLL__XLOOPS(f32, , redcoll__xf32, 0)
#ifdef REDCOLL__SIMD_X86
/* AVX-512 has the lanes all three need (double <-> int64, 64-bit leading
   zeros: CD); AVX2 vectorises the range scan. */
#define REDCOLL__XAVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512cd")))
REDCOLL__XLOOPS(f64_avx2, REDCOLL__AVX2, redcoll__xf64, 1)
REDCOLL__XLOOPS(f32_avx2, REDCOLL__AVX2, redcoll__xf32, 1)
REDCOLL__XLOOPS(f64_avx512, REDCOLL__XAVX512, redcoll__xf64, 1)
REDCOLL__XLOOPS(f32_avx512, REDCOLL__XAVX512, redcoll__xf32, 1)
#endif

/* The passes of level lv for a format (0 portable C, 1 AVX2, 2 AVX-512 with
   CD), or NULL where this build or this CPU has no such level. */
#define REDCOLL__XLEVELS 3
static const redcoll__xloops *redcoll__xloops_at(int lv, const redcoll__xfmt *f) {
    int dbl = f->bits == 64;
    switch (lv) {
    case 0: return dbl ? &redcoll__xloops_f64 : &redcoll__xloops_f32;
#ifdef REDCOLL__SIMD_X86
    case 1:
        if (!redcoll__isa_ok(REDCOLL__ISA_AVX2)) return NULL;
        return dbl ? &redcoll__xloops_f64_avx2 : &redcoll__xloops_f32_avx2;
    case 2:
        if (!redcoll__isa_ok(REDCOLL__ISA_AVX512) || !__builtin_cpu_supports("avx512cd")) return NULL;
        return dbl ? &redcoll__xloops_f64_avx512 : &redcoll__xloops_f32_avx512;
#endif
    default: return NULL;
    }
}

/* The fastest passes this CPU runs for a format. */
static const redcoll__xloops *redcoll__xloops_for(const redcoll__xfmt *f) {
    int lv = REDCOLL__XLEVELS - 1;
    while (!redcoll__xloops_at(lv, f)) --lv;
    return redcoll__xloops_at(lv, f);
}

/* ---- rounds: the inner collectives ---------------------------------------- */

/* Words of one round's limb buffer: up to `bytes`, never more than the call
   could need, never less than one block at its widest. */
static size_t redcoll__xcap(size_t total, int kfull, size_t bytes) {
    size_t per = (size_t)(kfull + 1), cap = bytes / 8;
    size_t block = (size_t)REDCOLL__XBLOCK * per;
    if (total <= cap / per) return total * per;
    return cap > block ? cap : block;
}

static redcoll_result redcoll__nested(redcoll__ctx *c, redcoll_coll coll, void *buf, size_t count,
                                      const size_t *counts, redcoll_dtype dtype, redcoll_op op,
                                      int root, redcoll_algo algo);
static redcoll_result redcoll__nested_from(redcoll__ctx *c, redcoll_coll coll, const void *sbuf, void *buf,
                                           size_t count, const size_t *counts, redcoll_dtype dtype,
                                           redcoll_op op, int root, redcoll_algo algo);

/* The inner collective of one round: `words` int64 limbs, SUM, in place. */
static redcoll_result redcoll__xcollect(redcoll__xsum *x, size_t words) {
    int rs = x->scatter || x->split;
    return redcoll__nested(x->c, rs ? REDCOLL_COLL_REDUCE_SCATTER : x->coll, x->limb, rs ? 0 : words,
                           rs ? x->rcounts : NULL, REDCOLL_INT64, REDCOLL_SUM, x->root, x->algo);
}

/* The allgatherv of a split round: the rounded values of the round that
   starts at element `first`, x->ecounts per rank, in place in x->out. */
static redcoll_result redcoll__xgather(redcoll__xsum *x, size_t first) {
    return redcoll__nested(x->c, REDCOLL_COLL_ALLGATHERV, x->out + first * (size_t)(x->f->bits / 8), 0,
                           x->ecounts, x->c->dtype, REDCOLL_SUM, 0, x->algo2);
}

/* A split allreduce round, blocks cur .. end of `words` limbs: p consecutive
   groups of about equal words + elements; the reduce_scatter leaves group
   r's sums on rank r, which rounds them, and an allgatherv shares the
   values. At p = 2 each rank rounds half the round, and the way back moves
   one value instead of K limbs per element. */
static redcoll_result redcoll__xsplit_round(redcoll__xsum *x, redcoll__xcur cur, redcoll__xcur end,
                                            size_t words) {
    const int p = x->c->size, me = x->c->rank;
    size_t total = words + (end.at - cur.at), at = 0;
    redcoll__xcur k = cur, lo = cur, hi = cur;
    redcoll_result r;
    int s, seen = 0;
    for (s = 0; s < p; ++s) x->rcounts[s] = x->ecounts[s] = 0;
    while (k.b != end.b) {
        size_t n = redcoll__xblock_len(x, &k);
        redcoll__xblk b = redcoll__xblock(x, k.b);
        size_t bw = n * (size_t)(b.K + b.sp);
        int g = (int)(at * (size_t)p / total);
        if (g == me && !seen) { lo = k; seen = 1; }
        x->rcounts[g] += bw;
        x->ecounts[g] += n;
        at += bw + n;
        redcoll__xadvance(&k, n);
        if (g == me) hi = k;
    }
    r = redcoll__xcollect(x, words);
    if (r != REDCOLL_OK) return r;
    x->loops->decode(x, lo, hi); /* this rank's sums lead the buffer */
    return redcoll__xgather(x, cur.at);
}

/* Counts of m words or elements over p ranks, shape k: 0 even, 1 all on
   rank me, 2 all on the next. */
static void redcoll__xshape(size_t *cnt, int p, int me, int k, size_t m) {
    int s;
    for (s = 0; s < p; ++s) cnt[s] = k ? 0 : m / (size_t)p + ((size_t)s < m % (size_t)p);
    if (k) cnt[(me + k - 1) % p] = m;
}

/* A measuring pass's stand-in for the rounds: the inner collectives at the
   largest round (x->cap words, x->cap elements; reduce_scatter and
   allgatherv in each shape of redcoll__xshape), so the measured scratch
   holds every round. The pass moves nothing: the ranks' shapes need not
   agree. */
static redcoll_result redcoll__xsize_rounds(redcoll__xsum *x) {
    redcoll_result r = REDCOLL_OK;
    const int p = x->c->size, me = x->c->rank;
    int k;
    if (!x->scatter && !x->split) return redcoll__xcollect(x, x->cap);
    for (k = 0; k < 3 && r == REDCOLL_OK; ++k) {
        redcoll__xshape(x->rcounts, p, me, k, x->cap);
        r = redcoll__xcollect(x, x->cap);
        if (r != REDCOLL_OK || !x->split) continue;
        redcoll__xshape(x->ecounts, p, me, k, x->total < x->cap ? x->total : x->cap);
        r = redcoll__xgather(x, 0);
    }
    return r;
}

/* Steps 2 and 3, round by round: a round is the longest run of consecutive
   blocks whose words fit in x->cap (at least one block). */
static redcoll_result redcoll__xrounds(redcoll__xsum *x) {
    const int me = x->c->rank, scatter = x->scatter;
    redcoll__xcur cur = { 0, 0, 0, 0 };
    while (redcoll__xblock_len(x, &cur) != 0) {
        redcoll__xcur k = cur;
        size_t words;
        int s;
        redcoll_result r;
        if (scatter) for (s = 0; s < x->segs; ++s) x->rcounts[s] = 0;
        words = x->loops->encode(x, cur, &k);
        if (x->split) {
            r = redcoll__xsplit_round(x, cur, k, words);
            if (r != REDCOLL_OK) return r;
            cur = k;
            continue;
        }
        r = redcoll__xcollect(x, words);
        if (r != REDCOLL_OK) return r;
        if (x->coll != REDCOLL_COLL_REDUCE || me == x->root) x->loops->decode(x, cur, k);
        cur = k;
    }
    return REDCOLL_OK;
}

/* ---- the gathered path, p = 1 --------------------------------------------- */

static redcoll_result redcoll__xexchange_add(redcoll__xsum *x, size_t off, size_t m);

/* A gathered allreduce (reduce): one allgather (gather to the root) of the
   inputs into x->all (rank after rank), then every rank (the root) folds
   the p vectors alone (redcoll__xfold). A measuring pass stops after the
   allgather (the rest allocates nothing). On arrival (x->arrive): the
   pairwise steps of redcoll__xexchange_add over the whole vector. */
static redcoll_result redcoll__xlocal(redcoll__xsum *x) {
    const int p = x->c->size, dry = x->c->dry;
    const size_t vec = x->total * (size_t)(x->f->bits / 8);
    int away = x->coll == REDCOLL_COLL_REDUCE && x->c->rank != x->root;
    redcoll_result r;
    if (x->arrive) {
        if (x->sizing) return REDCOLL_OK; /* no inner collective */
        r = redcoll__xexchange_add(x, 0, x->total);
        redcoll__account(x->c, redcoll__xfold_passes(x, p, x->total));
        return r;
    }
    if (!dry && !away) REDCOLL_MEMCPY(x->all + (size_t)x->c->rank * vec, x->in, vec);
    r = redcoll__nested(x->c, x->coll == REDCOLL_COLL_REDUCE ? REDCOLL_COLL_GATHER : REDCOLL_COLL_ALLGATHER,
                        away ? (void *)x->in : x->all, x->total, NULL, x->c->dtype, REDCOLL_SUM,
                        x->root, REDCOLL_ALGO_AUTO);
    if (r != REDCOLL_OK || x->sizing || away) return r;
    if (!dry) x->loops->fold(x, x->all, vec, p, x->total, x->out, x->fold);
    redcoll__account(x->c, redcoll__xfold_passes(x, p, x->total));
    return REDCOLL_OK;
}

/* ---- the exchanged path --------------------------------------------------- */

/* The alltoall of an exchanged round (m elements per rank's block,
   x->ecounts filled) as pairwise exchanges whose arriving inputs are
   added as they come (redcoll__xacc): step j sends this rank's block for
   rank me + j and takes rank me - j's block for this rank, reduced on
   arrival where the transport can (straight from the sender's buffer on
   threads: no staging copy, no second read), else received into its stage
   slot and added there. Then each block of this rank's results is
   certified or done the exact way from the stage. x->arrive: every rank
   sends its whole vector (m elements from off; in place its stage copy,
   as its results overwrite its inputs while peers still read them) and
   adds every peer's. */
static redcoll_result redcoll__xexchange_add(redcoll__xsum *x, size_t off, size_t m) {
    redcoll__ctx *c = x->c;
    const redcoll_transport *t = c->t;
    const int p = c->size, me = c->rank, dry = c->dry, whole = x->arrive;
    const size_t mine = whole ? m : x->ecounts[me], blocks = (m + REDCOLL__XBLOCK - 1) / REDCOLL__XBLOCK,
                 at = whole ? 0 : (size_t)me * m;
    char *stage = x->stage;
    redcoll__xacc a;
    redcoll_consumer k;
    int j;
    a.x = x;
    a.own = x->in + (off + at) * 8;
    a.out = x->out + (off + at) * 8;
    a.stage = stage;
    a.m = m;
    a.n = mine;
    a.p = p;
    a.judged = 0;
    a.redo = 0;
    a.rows = (double *)(void *)(stage + (((size_t)p * x->m * 8 + 7) & ~(size_t)7));
    a.nzb = (uint64_t *)(void *)((char *)a.rows + (p > 2 ? blocks * 4 * REDCOLL__XBLOCK * 8 : 0));
    k.fn = x->loops->piece;
    k.arg = &a;
    k.unit = 8;
    if (!dry) {
        if (a.own == a.out) { /* in place: the results overwrite the inputs the exact way may need */
            REDCOLL_MEMCPY(stage + (size_t)me * m * 8, a.own, mine * 8);
            a.own = stage + (size_t)me * m * 8;
        }
        REDCOLL_MEMSET(a.nzb, 0, blocks * 8);
    }
    for (j = 1; j < p && !c->err; ++j) {
        const int dst = (me + j) % p, src = (me - j + p) % p;
        const char *sbuf = whole ? a.own : x->in + (off + (size_t)dst * m) * 8; /* whole, in place: the copy */
        const size_t sn = whole ? m : x->ecounts[dst];
        a.q = src;
        a.first = j == 1;
        a.last = j == p - 1;
        if (!dry && mine && t->sendrecv_reduce) {
            redcoll__fail(c, t->sendrecv_reduce(t->user, dst, sbuf, sn * 8, src, mine * 8, c->tag, &k));
        } else {
            char *slot = stage + (size_t)src * m * 8;
            redcoll__transfer(c, dst, sbuf, sn, src, slot, mine, NULL, NULL, 0);
            if (!dry && mine && !c->err) k.fn(&a, slot, 0, mine * 8);
        }
    }
    if (!dry && mine && !c->err) x->loops->finish(&a, p, me, mine, x->fold);
    return c->err;
}

/* An exchanged allreduce, in rounds of p blocks of x->m elements (the last
   round's blocks shorter, padded with zeros): an alltoall gives rank r
   block r of every rank's round, as raw inputs (the ordinary sum's bytes:
   no limbs and no range collective on the wire), rank r folds them
   (redcoll__xfold) into its block's results, and an allgatherv shares
   them. A measuring pass runs the first and the last round's collectives,
   the largest and the odd shapes. */
static redcoll_result redcoll__xexchange(redcoll__xsum *x) {
    redcoll__ctx *c = x->c;
    const int p = c->size, me = c->rank, dry = c->dry;
    const size_t es = c->esize, full = x->m * (size_t)p;
    const int fused = redcoll__xacc_on(x) && x->algo == REDCOLL_ALGO_PAIRWISE;
    size_t off;
    for (off = 0; off < x->total; off += full) {
        const size_t nr = x->total - off < full ? x->total - off : full, m = (nr + (size_t)p - 1) / (size_t)p;
        redcoll_result r = REDCOLL_OK;
        int q;
        if (x->sizing && off != 0 && x->total - off > full) continue; /* a middle round: the first's shapes */
        for (q = 0; q < p; ++q) {
            size_t at = (size_t)q * m;
            x->ecounts[q] = nr > at ? (nr - at < m ? nr - at : m) : 0;
        }
        if (fused) {
            if (!x->sizing) r = redcoll__xexchange_add(x, off, m);
        } else if (nr == full) {
            r = redcoll__nested_from(c, REDCOLL_COLL_ALLTOALL, x->in + off * es, x->stage, m, NULL, c->dtype,
                                     REDCOLL_SUM, 0, x->algo);
        } else { /* the blocks of an alltoall are equal: the short round from a padded copy */
            if (!dry) {
                REDCOLL_MEMCPY(x->stage, x->in + off * es, nr * es);
                REDCOLL_MEMSET(x->stage + nr * es, 0, ((size_t)p * m - nr) * es);
            }
            r = redcoll__nested(c, REDCOLL_COLL_ALLTOALL, x->stage, m, NULL, c->dtype, REDCOLL_SUM, 0, x->algo);
        }
        if (r != REDCOLL_OK) return r;
        if (!fused && !dry && !x->sizing && x->ecounts[me])
            x->loops->fold(x, x->stage, m * es, p, x->ecounts[me], x->out + (off + (size_t)me * m) * es, x->fold);
        redcoll__account(c, redcoll__xfold_passes(x, p, x->ecounts[me]));
        r = redcoll__nested(c, REDCOLL_COLL_ALLGATHERV, x->out + off * es, 0, x->ecounts, c->dtype,
                            REDCOLL_SUM, 0, x->algo2);
        if (r != REDCOLL_OK) return r;
    }
    return REDCOLL_OK;
}

/* NaNs among n values at p made canonical, in place: by their bits, as the
   pair kernel does (REDCOLL__XCANON), which no FP environment or fast-math
   flag changes. */
REDCOLL__XHOT void redcoll__xcanon(int dbl, char *REDCOLL__XRESTRICT p, size_t n) {
    size_t i;
    if (dbl) {
        for (i = 0; i < n; ++i) {
            uint64_t u;
            memcpy(&u, p + 8 * i, 8);
            u = REDCOLL__XCANON(f64, uint64_t, u);
            memcpy(p + 8 * i, &u, 8);
        }
    } else {
        for (i = 0; i < n; ++i) {
            uint32_t u;
            memcpy(&u, p + 4 * i, 4);
            u = REDCOLL__XCANON(f32, uint32_t, u);
            memcpy(p + 4 * i, &u, 4);
        }
    }
}

/* p = 1: the exact sum of one input is that input, a NaN made canonical. */
static void redcoll__xalone(const redcoll__xsum *x) {
    const int dbl = x->f->bits == 64;
    const size_t es = dbl ? 8 : 4, n = x->total;
    size_t i;
    if (x->out != x->in) REDCOLL_MEMMOVE(x->out, x->in, n * es);
    for (i = 0; i + REDCOLL__XBLOCK <= n; i += REDCOLL__XBLOCK)
        redcoll__xcanon(dbl, x->out + i * es, REDCOLL__XBLOCK);
    redcoll__xcanon(dbl, x->out + i * es, n - i);
}

/* ---- the call's sizes ----------------------------------------------------- */

/* Limbs of L bits, and what follows from L: the limbs of the whole range
   and the multiplier that divides by L. */
static void redcoll__xwidth(redcoll__xsum *x, int L) {
    x->L = L;
    x->kfull = (x->f->top + L) / L; /* ceil((top + 1) / L) */
    x->Linv = ((uint64_t)1 << 32) / (uint64_t)L + 1;
}

/* Bytes of that state: per block of this rank's x->m elements, the rows at
   p > 2 and the flags; none where the fast way does not run. */
static size_t redcoll__xacc_bytes(const redcoll__xsum *x) {
    const size_t blocks = (x->m + REDCOLL__XBLOCK - 1) / REDCOLL__XBLOCK;
    if (!redcoll__xacc_on(x)) return 0;
    return blocks * 8 * (x->c->size > 2 ? 4 * REDCOLL__XBLOCK + 1 : 1);
}

/* The call's limb width, mode, round size and blocks, and the bytes of its
   one scratch allocation: a function of (collective, p, counts, dtype) only,
   so a persistent plan can size it before any data is seen. The inner
   collectives need, on top, their own scratch for one round's vector of at
   most x->cap int64 words (for reduce_scatter: any split of them), with the
   algorithm x->algo picks for that largest round; gathered and exchanged:
   redcoll__xfold's scratch and the inputs it folds (all of them; one
   round's), their collectives' own scratch on top. */
static size_t redcoll__xsizes(redcoll__xsum *x) {
    const int p = x->c->size;
    const size_t es = (size_t)(x->f->bits / 8), fold = REDCOLL__XFOLD_WORDS * sizeof(int64_t);
    size_t blocks = 0;
    int s;
    redcoll__xwidth(x, 62 - redcoll__ceil_lg(p));
    if (x->gathered) {
        x->m = x->total; /* arrive: the stage's slots */
        return fold + ((x->total * es * (size_t)p + 7) & ~(size_t)7) + (x->arrive ? redcoll__xacc_bytes(x) : 0);
    }
    if (x->exchanged) { /* whole range blocks per rank, all ranks' blocks of a round within the bound */
        size_t m = REDCOLL__XXCHG_BYTES / es / (size_t)p / REDCOLL__XBLOCK * REDCOLL__XBLOCK,
               need = (x->total + (size_t)p - 1) / (size_t)p;
        m = m > REDCOLL__XBLOCK ? m : REDCOLL__XBLOCK;
        x->m = m < need ? m : need;
        return fold + ((x->m * (size_t)p * es + 7) & ~(size_t)7) + redcoll__xacc_bytes(x);
    }
    x->direct = x->total <= REDCOLL__XDIRECT_BYTES / 8 / (size_t)(x->kfull + 1);
    x->assumed |= x->direct;
    x->cap = redcoll__xcap(x->total, x->kfull, REDCOLL__XROUND_BYTES);
    for (s = 0; s < x->segs; ++s)
        blocks += (redcoll__xseg_len(x, s) + REDCOLL__XBLOCK - 1) / REDCOLL__XBLOCK;
    x->nblocks = blocks;
    /* range words (none when direct), round buffer; the per-rank counts apart */
    x->info_bytes = x->direct ? 0 : (3 * blocks * sizeof(uint16_t) + 7) & ~(size_t)7;
    return x->info_bytes + x->cap * 8;
}

/* ---- the hook: setup and execute (called from [SECTION:setup]) -------------- */

/* The modeled time of a round of `words` limbs for `elems` elements as a
   reduce_scatter (pairwise) + allgatherv (ring) of the values, each rank
   rounding 1/p of it (*split), and as an allreduce (`whole`, AUTO's choice)
   with every rank rounding all (*all); the passes priced at gamma per input
   byte. */
static void redcoll__xround_costs(const redcoll__ctx *c, redcoll_algo whole, size_t words, size_t elems,
                                  double *split, double *all) {
    const int p = c->size;
    const size_t eb = elems * c->esize;
    double round = c->o.model.gamma * (double)eb;
    *split = redcoll_algo_cost(REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_ALGO_PAIRWISE, p, words * 8, 8, &c->o) +
             redcoll_algo_cost(REDCOLL_COLL_ALLGATHERV, REDCOLL_ALGO_RING, p, eb, c->esize, &c->o) + round / p;
    *all = redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, whole, p, words * 8, 8, &c->o) + round;
}

/* Whether the split round costs less than the allreduce one: at p <= 8
   from 64 KiB; at p = 64 the pairwise and ring steps' p - 1 latencies per
   round would cost 2.5x. */
static int redcoll__xsplit_pays(const redcoll__ctx *c, redcoll_algo whole, size_t words, size_t elems) {
    double split, all;
    redcoll__xround_costs(c, whole, words, elems, &split, &all);
    return split < all;
}

/* Whether Bruck's alltoall of blocks of `block` bytes still costs less than
   pairwise exchanges once its local copies are priced (gamma per byte; the
   cost function leaves them out): the first rotation and the last swaps
   move every block once, each step packs and unpacks the blocks it sends. */
static int redcoll__xbruck_pays(const redcoll__ctx *c, size_t block) {
    const int p = c->size;
    double copies = (2.0 * p + 2.0 * redcoll__bruck_blocks(p)) * (double)block * c->o.model.gamma;
    return redcoll_algo_cost(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_BRUCK, p, block, c->esize, &c->o) + copies <
           redcoll_algo_cost(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_PAIRWISE, p, block, c->esize, &c->o);
}

/* Whether an AUTO allreduce costs less in the model exchanged (x->m
   elements per rank and round: an alltoall `a2a` and an allgatherv `ag` of
   the inputs, and their fold) than as the limbs' rounds (`words` limbs for
   `elems` elements each, split or not, and step 1's range allreduce and
   scan). Both priced with every message's bytes at beta: on a transport
   that reduces on arrival the limbs' reduction still reads their bytes
   (16 per element against the inputs' 8), which its model prices at the
   reduction's gamma alone. */
static int redcoll__xexchange_pays(const redcoll__xsum *x, const redcoll__ctx *c, redcoll_algo whole,
                                   size_t words, size_t elems, redcoll_algo a2a, redcoll_algo ag) {
    const int p = c->size;
    const double n = (double)x->total, es = (double)c->esize, g = c->o.model.gamma;
    const size_t m = x->m, blocks = (x->total + REDCOLL__XBLOCK - 1) / REDCOLL__XBLOCK;
    redcoll__ctx flat = *c;
    double split, all, limbs, xchg;
    flat.o.transport_flags &= ~REDCOLL_TRANSPORT_PEER_REDUCE;
    redcoll__xround_costs(&flat, whole, words, elems, &split, &all);
    limbs = n / (double)elems * (split < all ? split : all) + g * n * es +
            redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, p, 6 * blocks, 2, &flat.o);
    xchg = (double)((x->total + m * (size_t)p - 1) / (m * (size_t)p)) *
           (redcoll_algo_cost(REDCOLL_COLL_ALLTOALL, a2a, p, m * c->esize, c->esize, &flat.o) +
            redcoll_algo_cost(REDCOLL_COLL_ALLGATHERV, ag, p, m * (size_t)p * c->esize, c->esize, &flat.o) +
            g * es * (double)redcoll__xfold_passes(x, p, m));
    return xchg < limbs;
}

/* Whether a gathered allreduce of n doubles per rank costs less in the
   model with the inputs added as they arrive (p - 1 pairwise exchanges of
   the whole vector, each rank adding its peer's while it reads it: on
   threads straight from the peer's buffer) than as an allgather (AUTO's
   choice: fewer steps at larger p) and a fold that reads the gathered
   inputs again (gamma per byte). At p = 2 both are one exchange. */
static int redcoll__xarrive_pays(const redcoll__ctx *c, size_t n) {
    const int p = c->size;
    const size_t bytes = n * c->esize;
    const redcoll_algo ag = redcoll__select_for(c, REDCOLL_COLL_ALLGATHER, p, bytes, NULL);
    return redcoll_algo_cost(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_PAIRWISE, p, bytes, c->esize, &c->o) <=
           redcoll_algo_cost(REDCOLL_COLL_ALLGATHER, ag, p, bytes, c->esize, &c->o) +
               c->o.model.gamma * (double)(bytes * (size_t)p);
}

/* Whether an exchanged allreduce (e: one round of blocks of e->m doubles,
   its alltoall pairwise and adding on arrival, its allgatherv `ag`) costs
   more in the model than every rank adding each peer's whole vector as it
   arrives, where that fits (REDCOLL__XARRIVE_BYTES of inputs over all
   ranks) and the gathered path adds as they arrive at its own bound
   (redcoll__xarrive_pays there: p <= 3 in the default model), so that the
   arriving path's range only extends: it folds p times the elements and
   has no allgatherv. On a transport that reduces from the sender's memory
   a message added on arrival costs no n beta (the fold's read is the
   transfer, as the ordinary sum's model prices it) while the allgatherv
   copies results the peer has just written, so there the arriving path
   wins within the bound; elsewhere it pays the larger messages' beta too. */
static int redcoll__xarrive_beats(const redcoll__xsum *e, const redcoll__ctx *c, redcoll_algo ag) {
    const int p = c->size, peer = (c->o.transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE) != 0;
    const size_t es = c->esize, whole = e->total * es;
    double steps;
    if (!redcoll__xacc_on(e) || p > REDCOLL__XGATHER_P || whole * (size_t)p > REDCOLL__XARRIVE_BYTES ||
        e->m * (size_t)p < e->total || !redcoll__xarrive_pays(c, REDCOLL__XGATHER_BYTES / es / (size_t)p))
        return 0;
    steps = peer ? 0
                 : redcoll_algo_cost(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_PAIRWISE, p, whole, es, &c->o) -
                       redcoll_algo_cost(REDCOLL_COLL_ALLTOALL, REDCOLL_ALGO_PAIRWISE, p, e->m * es, es, &c->o);
    return steps + c->o.model.gamma * (double)es *
                       (double)(redcoll__xfold_passes(e, p, e->total) - redcoll__xfold_passes(e, p, e->m)) <
           redcoll_algo_cost(REDCOLL_COLL_ALLGATHERV, ag, p, e->m * (size_t)p * es, es, &c->o);
}

/* Resolves a SUM_EXACT call that redcoll__setup has checked as any other
   (transport, type, op, options, counts, root, buffers): the reduce_scatter
   twin of a reduce_scatter_block algorithm, the rank limit, the input and
   output and the shape of the rounds. n: the vector (allreduce, reduce), the
   total (reduce_scatter) or one block (reduce_scatter_block). Touches
   nothing, allocates nothing. */
static redcoll_result redcoll__xsetup(redcoll__xsum *x, redcoll__ctx *c, const void *sbuf,
                                      void *rbuf, size_t n, const size_t *counts, int root) {
    int in_place = sbuf == REDCOLL_IN_PLACE;
    REDCOLL_MEMSET(x, 0, sizeof *x);
    /* the rounds run as irregular reduce_scatters with the caller's algorithm */
    if (c->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK &&
        !redcoll_algo_supported(REDCOLL_COLL_REDUCE_SCATTER, c->o.algo))
        return REDCOLL_ERR_UNSUPPORTED;
    if (c->size > REDCOLL__XMAX_P) return REDCOLL_ERR_UNSUPPORTED;
    x->c = c;
    x->f = c->dtype == REDCOLL_DOUBLE ? &redcoll__xf64 : &redcoll__xf32;
    x->loops = redcoll__xloops_for(x->f);
    x->coll = c->coll;
    x->in = (const char *)(in_place ? rbuf : sbuf);
    x->out = (char *)rbuf;
    x->scatter = c->coll == REDCOLL_COLL_REDUCE_SCATTER || c->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    x->total = c->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK ? n * (size_t)c->size : n;
    x->counts = counts;
    x->each = n;
    x->segs = x->scatter ? c->size : 1;
    x->root = root;
    x->assumed = c->dry;
    x->gathered = (c->coll == REDCOLL_COLL_ALLREDUCE || c->coll == REDCOLL_COLL_REDUCE) &&
                  c->o.algo == REDCOLL_ALGO_AUTO && c->size > 1 &&
                  c->size <= REDCOLL__XGATHER_P && n <= REDCOLL__XGATHER_BYTES / c->esize / (size_t)c->size;
    x->arrive = x->gathered && c->coll == REDCOLL_COLL_ALLREDUCE && redcoll__xacc_on(x) &&
                redcoll__xarrive_pays(c, n);
    x->mem_bytes = redcoll__xsizes(x);
    x->algo = x->algo2 = c->o.algo;
    if (x->algo == REDCOLL_ALGO_AUTO && !x->gathered) { /* gathered: the allgather's own */
        /* one choice for every round, made for the round of typical data (the
           whole vector when direct); the measuring pass sizes it at x->cap */
        int kt = (REDCOLL__XTYPICAL + x->f->frac + x->L) / x->L;
        size_t words = x->direct || x->total > x->cap / (size_t)kt ? x->cap : x->total * (size_t)kt;
        redcoll__ctx ic = *c;
        ic.coll = x->scatter ? REDCOLL_COLL_REDUCE_SCATTER : c->coll;
        ic.dtype = REDCOLL_INT64;
        ic.esize = 8;
        ic.op = redcoll_op_predefined(REDCOLL_OP_SUM);
        x->algo = redcoll__select_for(&ic, ic.coll, c->size, words * 8, NULL);
        if (c->coll == REDCOLL_COLL_ALLREDUCE && c->size > 1 && !x->direct) {
            /* the exchanged rounds where the model prices them below the limbs' */
            redcoll__xsum e = *x;
            size_t bytes;
            redcoll_algo a2a, ag;
            e.exchanged = 1;
            bytes = redcoll__xsizes(&e);
            ic.dtype = c->dtype;
            ic.esize = c->esize;
            a2a = redcoll__select_for(&ic, REDCOLL_COLL_ALLTOALL, c->size, e.m * c->esize, NULL);
            if (a2a == REDCOLL_ALGO_BRUCK && !redcoll__xbruck_pays(c, e.m * c->esize)) a2a = REDCOLL_ALGO_PAIRWISE;
            if (a2a == REDCOLL_ALGO_SCATTERED && redcoll__xacc_on(&e)) /* its steps, adding on arrival */
                a2a = REDCOLL_ALGO_PAIRWISE;
            ag = redcoll__select_for(&ic, REDCOLL_COLL_ALLGATHERV, c->size, e.m * (size_t)c->size * c->esize,
                                     NULL);
            if (redcoll__xexchange_pays(&e, c, x->algo, words, words / (size_t)kt, a2a, ag)) {
                if (a2a == REDCOLL_ALGO_PAIRWISE && redcoll__xarrive_beats(&e, c, ag)) {
                    e.exchanged = 0; /* the gathered path's, adding as they arrive */
                    e.gathered = e.arrive = 1;
                    bytes = redcoll__xsizes(&e);
                    a2a = ag = c->o.algo;
                }
                *x = e;
                x->mem_bytes = bytes;
                x->algo = a2a;
                x->algo2 = ag;
                return REDCOLL_OK;
            }
        }
        x->split = c->coll == REDCOLL_COLL_ALLREDUCE && c->size > 1 && !x->direct &&
                   x->total * c->esize >= REDCOLL__XSPLIT_BYTES &&
                   redcoll__xsplit_pays(c, x->algo, words, words / (size_t)kt);
        if (x->split) { /* long vectors: MPICH's long-message schedules, neither rotates in place */
            x->algo = REDCOLL_ALGO_PAIRWISE;
            x->algo2 = REDCOLL_ALGO_RING;
        }
    }
    return REDCOLL_OK;
}

/* Runs a call redcoll__xsetup resolved (again, for a plan): step 1, then
   the rounds (a measuring pass: their largest shapes). Scratch and the inner
   collectives' scratch come from the call's arena (redcoll__nested). */
static redcoll_result redcoll__xexecute(redcoll__xsum *x, redcoll__ctx *c) {
    redcoll_result r = REDCOLL_OK;
    size_t rc_bytes = (x->scatter ? (size_t)x->segs : x->split ? 2 * (size_t)c->size : x->exchanged ? (size_t)c->size : 0) *
                      sizeof(size_t);
    x->c = c; /* the call may have moved since setup */
    if (c->size == 1) { /* nothing to sum: no scratch, no passes */
        if (!c->dry) redcoll__xalone(x);
        redcoll__account(c, x->total);
        return REDCOLL_OK;
    }
    x->mem = redcoll__scratch(c, x->mem_bytes, 1); /* vectors: never touched without data */
    x->rcounts = rc_bytes ? (size_t *)redcoll__alloc_bytes(c, rc_bytes) : NULL;
    x->ecounts = x->split && x->rcounts ? x->rcounts + c->size : x->exchanged ? x->rcounts : NULL;
    if (!c->err) {
        x->info = (uint16_t *)x->mem;
        x->limb = (int64_t *)(void *)((char *)x->mem + x->info_bytes);
        x->fold = (int64_t *)x->mem;
        x->all = x->stage = (char *)x->mem + REDCOLL__XFOLD_WORDS * sizeof(int64_t);
        if (x->gathered) {
            r = redcoll__xlocal(x);
        } else if (x->exchanged) {
            r = redcoll__xexchange(x);
        } else if (!x->direct) {
            /* AUTO: the caller's algorithm is not an allreduce, and the length is fixed */
            redcoll_algo a1 = x->coll == REDCOLL_COLL_ALLREDUCE ? c->o.algo : REDCOLL_ALGO_AUTO;
            if (!c->dry) x->loops->ranges(x);
            redcoll__account(c, x->total);
            r = redcoll__nested(c, REDCOLL_COLL_ALLREDUCE, x->info, 3 * x->nblocks, NULL, REDCOLL_UINT16,
                                REDCOLL_MAX, 0, a1);
        }
        if (r == REDCOLL_OK && !x->gathered && !x->exchanged)
            r = x->sizing ? redcoll__xsize_rounds(x) : redcoll__xrounds(x);
    }
    redcoll__free_bytes(c, x->rcounts, rc_bytes);
    redcoll__unscratch(c, x->mem, x->mem_bytes, 1);
    return c->err ? c->err : r;
}

/* ==== 10. Registry and names [SECTION:registry] ============================
   The algorithm list as rows, the names of everything, and the cost
   profile's text format. */

/* The registry: the algorithm list ([SECTION:options]) as rows of
   schedules, and an O(1) lookup by (collective, algorithm) through a switch
   over the rows' indices. The row types are declared in [SECTION:context],
   so that schedules that compose other schedules (hierarchical) can look
   them up. */
#define REDCOLL__ROW(first, A, name, C, fn, cost, var, ord, kn, paper)                  \
    { { REDCOLL_COLL_##C, REDCOLL_ALGO_##A, REDCOLL__ORDER_##ord, paper }, redcoll__##fn, \
      redcoll__##cost##_cost, REDCOLL__VARIANT_##var, REDCOLL__KNOB_##kn },
static const redcoll__row redcoll__rows[] = { REDCOLL_ALGORITHM_LIST(REDCOLL__ROW) };
#undef REDCOLL__ROW

/* Row indices: REDCOLL__ROW_<COLL>_<ALGO>. */
#define REDCOLL__ROW_INDEX(first, A, name, C, fn, cost, var, ord, kn, paper) REDCOLL__ROW_##C##_##A,
enum { REDCOLL_ALGORITHM_LIST(REDCOLL__ROW_INDEX) REDCOLL__ROW_COUNT };
#undef REDCOLL__ROW_INDEX

/* 1 + the row index is part of the tag (bits 6-12, 127 is REDCOLL_TAG_NOTICE):
   at most 126 rows. */
typedef char redcoll__rows_fit_the_tag[REDCOLL__ROW_COUNT <= 126 ? 1 : -1];
/* The decision cache keeps an algorithm in one byte. */
typedef char redcoll__algos_fit_a_byte[REDCOLL_ALGO_COUNT <= 256 ? 1 : -1];

#define REDCOLL__ROW_KEY(coll, algo) ((int)(coll) * REDCOLL_ALGO_COUNT + (int)(algo))

static const redcoll__row *redcoll__find(redcoll_coll coll, redcoll_algo algo) {
#define REDCOLL__ROW_CASE(first, A, name, C, fn, cost, var, ord, kn, paper) \
    case REDCOLL__ROW_KEY(REDCOLL_COLL_##C, REDCOLL_ALGO_##A):           \
        return &redcoll__rows[REDCOLL__ROW_##C##_##A];
    if ((int)coll < 0 || coll >= REDCOLL_COLL_COUNT || (int)algo < 0 || algo >= REDCOLL_ALGO_COUNT)
        return NULL;
    switch (REDCOLL__ROW_KEY(coll, algo)) {
    REDCOLL_ALGORITHM_LIST(REDCOLL__ROW_CASE)
    default: return NULL;
    }
#undef REDCOLL__ROW_CASE
}

REDCOLL_API int redcoll_algo_supported(redcoll_coll coll, redcoll_algo algo) {
    return algo == REDCOLL_ALGO_AUTO ? (int)coll >= 0 && coll < REDCOLL_COLL_COUNT
                                     : redcoll__find(coll, algo) != NULL;
}

REDCOLL_API int redcoll_algo_keeps_order(redcoll_coll coll, redcoll_algo algo) {
    const redcoll__row *e = redcoll__find(coll, algo);
    return e && e->info.keeps_order;
}

REDCOLL_API const redcoll_algo_info *redcoll_algo_at(int i) {
    return i >= 0 && i < REDCOLL__ROW_COUNT ? &redcoll__rows[i].info : NULL;
}

#include <stdio.h> /* snprintf: redcoll_tag_name, the profile below */

static const char *const redcoll__coll_names[REDCOLL_COLL_COUNT] = {
    "allreduce", "reduce", "reduce_scatter", "reduce_scatter_block", "allgather",
    "allgatherv", "bcast", "alltoall", "gather", "scatter", "barrier"
};

#define REDCOLL__NAME_NEW(name) name,
#define REDCOLL__NAME_AND(name)
#define REDCOLL__NAME(first, A, name, C, fn, cost, var, ord, kn, paper) REDCOLL__NAME_##first(name)
static const char *const redcoll__algo_names[REDCOLL_ALGO_COUNT] = {
    "auto", REDCOLL_ALGORITHM_LIST(REDCOLL__NAME)
};
#undef REDCOLL__NAME

REDCOLL_API const char *redcoll_coll_name(redcoll_coll coll) {
    return (int)coll >= 0 && coll < REDCOLL_COLL_COUNT ? redcoll__coll_names[coll] : "?";
}

REDCOLL_API const char *redcoll_algo_name(redcoll_algo algo) {
    return (int)algo >= 0 && algo < REDCOLL_ALGO_COUNT ? redcoll__algo_names[algo] : "?";
}

REDCOLL_API const char *redcoll_tag_name(int tag, char *buf, size_t n) {
    const redcoll_algo_info *e = redcoll_algo_at(REDCOLL_TAG_ROW(tag));
    if (!buf || n == 0) return buf;
    if (e) snprintf(buf, n, "%s (%s)", redcoll_coll_name(e->coll), redcoll_algo_name(e->algo));
    else snprintf(buf, n, "tag %d", tag);
    return buf;
}

REDCOLL_API const char *redcoll_tag_disagree(const char *a, int ta, const char *b, int tb, char *buf,
                                             size_t n) {
    char x[64], y[64];
    if (!buf || n == 0) return buf;
    redcoll_tag_name(ta, x, sizeof x);
    redcoll_tag_name(tb, y, sizeof y);
    if ((ta & REDCOLL_TAG_ROW_MASK) != (tb & REDCOLL_TAG_ROW_MASK))
        snprintf(buf, n, "%s is in %s, %s in %s", a, x, b, y);
    else
        snprintf(buf, n, "%s is in %s with other parameters (count, data type, op, root, in place "
                         "or options) than %s", a, x, b);
    return buf;
}

REDCOLL_API int redcoll_coll_from_name(const char *name, redcoll_coll *out) {
    int i;
    for (i = 0; name && i < REDCOLL_COLL_COUNT; ++i)
        if (strcmp(name, redcoll__coll_names[i]) == 0) { *out = (redcoll_coll)i; return 1; }
    return 0;
}

REDCOLL_API int redcoll_algo_from_name(const char *name, redcoll_algo *out) {
    int i;
    for (i = 0; name && i < REDCOLL_ALGO_COUNT; ++i)
        if (strcmp(name, redcoll__algo_names[i]) == 0) { *out = (redcoll_algo)i; return 1; }
    return 0;
}

REDCOLL_API const char *redcoll_result_string(redcoll_result r) {
    switch (r) {
    case REDCOLL_OK: return "ok";
    case REDCOLL_ERR_INVALID_ARG: return "invalid argument";
    case REDCOLL_ERR_OUT_OF_MEMORY: return "out of memory";
    case REDCOLL_ERR_TRANSPORT: return "transport failure";
    case REDCOLL_ERR_UNSUPPORTED: return "unsupported combination";
    case REDCOLL_ERR_TIMEOUT: return "timeout";
    case REDCOLL_ERR_ABORTED: return "aborted by a failed peer";
    case REDCOLL_ERR_DEADLOCK: return "deadlock";
    case REDCOLL_ERR_MISMATCH: return "ranks disagree about the call";
    }
    return "unknown result";
}

REDCOLL_API size_t redcoll_dtype_size(redcoll_dtype d) {
    switch (d) {
    case REDCOLL_INT8: case REDCOLL_UINT8: return 1;
    case REDCOLL_INT16: case REDCOLL_UINT16: return 2;
    case REDCOLL_INT32: case REDCOLL_UINT32: return 4;
    case REDCOLL_INT64: case REDCOLL_UINT64: return 8;
    case REDCOLL_FLOAT: return sizeof(float);
    case REDCOLL_DOUBLE: return sizeof(double);
    case REDCOLL_LONG_DOUBLE: return sizeof(long double);
    case REDCOLL_FLOAT_INT: return sizeof(redcoll_float_int);
    case REDCOLL_DOUBLE_INT: return sizeof(redcoll_double_int);
    case REDCOLL_LONG_INT: return sizeof(redcoll_long_int);
    case REDCOLL_2INT: return sizeof(redcoll_2int);
    case REDCOLL_SHORT_INT: return sizeof(redcoll_short_int);
    case REDCOLL_LONG_DOUBLE_INT: return sizeof(redcoll_long_double_int);
    default:
        return d > REDCOLL_OPAQUE_BASE ? (size_t)(d - REDCOLL_OPAQUE_BASE) : 0;
    }
}

REDCOLL_API const char *redcoll_dtype_name(redcoll_dtype d) {
    static const char *const names[REDCOLL_DTYPE_COUNT] = {
        "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
        "float", "double", "long_double", "float_int", "double_int", "long_int", "2int",
        "short_int", "long_double_int"
    };
    if ((int)d >= 0 && d < REDCOLL_DTYPE_COUNT) return names[d];
    return redcoll_dtype_size(d) ? "opaque" : "?";
}

REDCOLL_API const char *redcoll_op_name(redcoll_op_kind k) {
    static const char *const names[REDCOLL_OP_KIND_COUNT] = {
        "sum", "prod", "min", "max", "land", "lor", "lxor", "band", "bor", "bxor",
        "minloc", "maxloc", "user", "sum_exact"
    };
    return (int)k >= 0 && k < REDCOLL_OP_KIND_COUNT ? names[k] : "?";
}

REDCOLL_API int redcoll_op_valid_for(redcoll_op_kind kind, redcoll_dtype dtype) {
    if (kind == REDCOLL_OP_USER) return redcoll_dtype_size(dtype) != 0;
    if (kind == REDCOLL_OP_SUM_EXACT) return dtype == REDCOLL_FLOAT || dtype == REDCOLL_DOUBLE;
    return redcoll__kernel_for(kind, dtype) != NULL;
}

static int redcoll__op_ok(const redcoll_op *op, redcoll_dtype dtype) {
    if (op->kind == REDCOLL_OP_USER && !op->fn) return 0;
    return redcoll_op_valid_for(op->kind, dtype);
}

REDCOLL_API redcoll_result redcoll_reduce_local(const void *in, void *inout, size_t count,
                                                redcoll_dtype dtype, redcoll_op op) {
    redcoll__kernel k;
    if (!redcoll__op_ok(&op, dtype)) return REDCOLL_ERR_INVALID_ARG;
    if (count && (!in || !inout)) return REDCOLL_ERR_INVALID_ARG;
    if (count == 0) return REDCOLL_OK;
    k = redcoll__kernel_for(op.kind, dtype);
    if (k) k(in, inout, inout, count); else op.fn(in, inout, count, op.user);
    return REDCOLL_OK;
}

static redcoll_options redcoll__no_options; /* zero, never written: a copy, not a memset */

/* redcoll_options_resolved into *o, which a call's setup fills in place
   (no copy of the struct through a return value). */
static void redcoll__options_resolve(redcoll_options *o, const redcoll_options *opts) {
    *o = opts ? *opts : redcoll__no_options;
    o->segment_bytes = redcoll__def(o->segment_bytes, REDCOLL_DEFAULT_SEGMENT);
    o->chunk_bytes   = redcoll__def(o->chunk_bytes, REDCOLL_DEFAULT_CHUNK);
    o->model.alpha   = redcoll__def(o->model.alpha, REDCOLL_DEFAULT_ALPHA);
    o->model.beta    = redcoll__def(o->model.beta, REDCOLL_DEFAULT_BETA);
    o->model.gamma   = redcoll__def(o->model.gamma, REDCOLL_DEFAULT_GAMMA);
    o->model.f_alpha = redcoll__def(o->model.f_alpha, 1.0);
    o->model.f_beta  = redcoll__def(o->model.f_beta, 1.0);
}

REDCOLL_API redcoll_options redcoll_options_resolved(const redcoll_options *opts) {
    redcoll_options o;
    redcoll__options_resolve(&o, opts);
    return o;
}

/* ---- the cost profile (redcoll_cost_model_parse / _format) -------------------
   Text only: the caller reads and writes files. */
#include <stdio.h>

/* The first five are required; the two levels' inter keys are optional
   (absent: 0, one level), so older profiles parse unchanged. */
#define REDCOLL__PROFILE_KEYS     7
#define REDCOLL__PROFILE_REQUIRED 5
static const char *const redcoll__profile_keys[REDCOLL__PROFILE_KEYS] = {
    "alpha", "beta", "gamma", "f_alpha", "f_beta", "inter_alpha", "inter_beta"
};

static double *redcoll__profile_field(redcoll_cost_model *m, int k) {
    switch (k) {
    case 0: return &m->alpha;
    case 1: return &m->beta;
    case 2: return &m->gamma;
    case 3: return &m->f_alpha;
    case 4: return &m->f_beta;
    case 5: return &m->inter_alpha;
    default: return &m->inter_beta;
    }
}

static redcoll_result redcoll__profile_error(char *err, size_t cap, int line, const char *what,
                                             const char *key) {
    if (err && cap) {
        if (line > 0) snprintf(err, cap, "line %d: %s%s%s", line, what, key ? " " : "", key ? key : "");
        else snprintf(err, cap, "%s%s%s", what, key ? " " : "", key ? key : "");
    }
    return REDCOLL_ERR_INVALID_ARG;
}

REDCOLL_API redcoll_result redcoll_cost_model_parse(const char *text, redcoll_cost_model *model,
                                                    char *err, size_t cap) {
    redcoll_cost_model m;
    int seen[REDCOLL__PROFILE_KEYS] = { 0 }, line = 0, version = 0, k;
    const char *s = text;
    if (!text || !model) return redcoll__profile_error(err, cap, 0, "no text", NULL);
    REDCOLL_MEMSET(&m, 0, sizeof m);
    while (*s) {
        char key[32], val[64];
        size_t kl = 0, vl = 0;
        int extra;
        const char *e = s;
        ++line;
        while (*e && *e != '\n' && *e != '#') ++e;       /* the line without its comment */
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '\r' && kl + 1 < sizeof key) key[kl++] = *s++;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '\r' && vl + 1 < sizeof val) val[vl++] = *s++;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        key[kl] = 0;
        val[vl] = 0;
        extra = s < e;
        while (*e && *e != '\n') ++e;
        s = *e ? e + 1 : e;
        if (!kl) continue;                              /* blank or comment */
        if (!version) {
            char *end;
            long v;
            if (strcmp(key, "redcoll_profile") != 0)
                return redcoll__profile_error(err, cap, line, "expected \"redcoll_profile 1\", found", key);
            v = strtol(val, &end, 10);
            if (!vl || *end || v < 1 || extra) return redcoll__profile_error(err, cap, line, "bad version", val);
            if (v > REDCOLL_PROFILE_VERSION)
                return redcoll__profile_error(err, cap, line, "a newer profile version than this reader's:", val);
            version = (int)v;
            continue;
        }
        for (k = 0; k < REDCOLL__PROFILE_KEYS && strcmp(key, redcoll__profile_keys[k]) != 0; ++k) {}
        if (k == REDCOLL__PROFILE_KEYS) continue;      /* information for people */
        {
            char *end;
            double d;
            if (seen[k]) return redcoll__profile_error(err, cap, line, "repeated key", key);
            if (!vl || val[0] == '+' || val[0] == '-' || extra)
                return redcoll__profile_error(err, cap, line, "wants one number > 0:", key);
            d = strtod(val, &end);
            if (*end || !(d > 0) || d > 1e300)
                return redcoll__profile_error(err, cap, line, "wants a finite number > 0:", key);
            *redcoll__profile_field(&m, k) = d;
            seen[k] = 1;
        }
    }
    if (!version) return redcoll__profile_error(err, cap, 0, "not a profile (no \"redcoll_profile 1\" line)", NULL);
    for (k = 0; k < REDCOLL__PROFILE_REQUIRED; ++k)
        if (!seen[k]) return redcoll__profile_error(err, cap, 0, "missing key", redcoll__profile_keys[k]);
    *model = m;
    return REDCOLL_OK;
}

REDCOLL_API int redcoll_cost_model_format(const redcoll_cost_model *model, char *buf, size_t cap) {
    redcoll_cost_model m = *model;
    int k, n = snprintf(buf, cap,
                     "# redcoll cost profile (redcoll tune writes it; --profile FILE reads it)\n"
                     "# Rabenseifner 2004, 3.1: a message of n bytes exchanged both ways costs\n"
                     "# alpha + n beta seconds, one way f_alpha alpha + n f_beta beta; reducing\n"
                     "# n bytes costs n gamma. \"key value\" lines; unknown keys are ignored.\n"
                     "%sredcoll_profile %d\n"
                     "alpha %.17g\nbeta %.17g\ngamma %.17g\nf_alpha %.17g\nf_beta %.17g\n",
                     model->inter_alpha > 0 || model->inter_beta > 0
                         ? "# Two levels: alpha, beta inside a node; inter_alpha, inter_beta between\n"
                           "# nodes, whose link the node's messages share.\n"
                         : "",
                     REDCOLL_PROFILE_VERSION, model->alpha, model->beta, model->gamma,
                     model->f_alpha, model->f_beta);
    for (k = REDCOLL__PROFILE_REQUIRED; k < REDCOLL__PROFILE_KEYS && n >= 0; ++k) {
        double v = *redcoll__profile_field(&m, k);
        int w;
        if (!(v > 0)) continue;
        w = snprintf(buf && (size_t)n < cap ? buf + n : NULL, buf && (size_t)n < cap ? cap - (size_t)n : 0,
                     "%s %.17g\n", redcoll__profile_keys[k], v);
        n = w < 0 ? w : n + w;
    }
    return n;
}

/* ==== 11. Cost model [SECTION:cost] ========================================
   What a row costs under opts->model (redcoll_algo_cost; REDCOLL_SELECTOR_MODEL
   picks the least): the row's cost function ([SECTION:schedules]) on the
   terms redcoll__row_cost sets, or for the rows without a closed form or a
   walk, a replay of the schedule's calls. */

/* ---- two levels: the nodes' shared links --------------------------------------
   The rule of the two-level model that needs time order, run by the
   simulator (transports/redcoll_mock.h) and by the replay below alike: a
   message between nodes puts its n bytes on its sending node's outgoing
   link and its receiving node's incoming link; while k = max(messages on
   that outgoing link, messages on that incoming link), it moves at
   1 / (k per) bytes per second (per: inter_beta, or f_beta inter_beta one
   way), and it ends lat after its last byte (lat: inter_alpha, or f_alpha
   inter_alpha). Shares change only when a message joins or leaves a link,
   so between two such events every rate is constant: a message keeps the
   bytes it still had at t0 and the time its last byte passes at its
   current rate, and a heap orders those times (ties by id). A message whose
   share never changes ends at start + n (per k) + lat exactly. The caller
   runs its events in time order and ends each message when it leaves the
   heap (redcoll__links_end), before anything it runs at that time. */
typedef struct redcoll__flow {
    void  *snd, *rcv;               /* the caller's two ends */
    double start, lat, per, rem, t0, done_at;
    int    k, src, dst;             /* share; sending and receiving node */
    int    at_out, at_in, hpos, next_free;
} redcoll__flow;

typedef struct redcoll__link { int *ids, n, cap; } redcoll__link; /* the flows on one direction */

typedef struct redcoll__links {
    const redcoll_allocator *al;
    int            nodes;
    redcoll__link *link;            /* node g: 2 g outgoing, 2 g + 1 incoming */
    redcoll__flow *flow;
    int            nflow, cap, free_id;
    int           *heap, nheap;     /* flow ids, earliest done_at first */
} redcoll__links;

/* old (old_bytes) grown to bytes, contents kept; NULL (old kept) when memory ran out. */
static void *redcoll__regrow(const redcoll_allocator *al, void *old, size_t old_bytes, size_t bytes) {
    void *p = redcoll__mem_alloc(al, bytes);
    if (!p) return NULL;
    if (old) { REDCOLL_MEMCPY(p, old, old_bytes); redcoll__mem_free(al, old); }
    return p;
}

static int redcoll__links_init(redcoll__links *L, int nodes, const redcoll_allocator *al) {
    REDCOLL_MEMSET(L, 0, sizeof *L);
    L->al = al;
    L->nodes = nodes;
    L->free_id = -1;
    L->link = (redcoll__link *)redcoll__mem_alloc(al, sizeof *L->link * 2 * (size_t)nodes);
    if (L->link) REDCOLL_MEMSET(L->link, 0, sizeof *L->link * 2 * (size_t)nodes);
    return L->link != NULL;
}

static void redcoll__links_free(redcoll__links *L) {
    int i;
    for (i = 0; L->link && i < 2 * L->nodes; ++i)
        if (L->link[i].ids) redcoll__mem_free(L->al, L->link[i].ids);
    if (L->link) redcoll__mem_free(L->al, L->link);
    if (L->flow) redcoll__mem_free(L->al, L->flow);
    if (L->heap) redcoll__mem_free(L->al, L->heap);
    REDCOLL_MEMSET(L, 0, sizeof *L);
}

static int redcoll__flow_less(const redcoll__links *L, int a, int b) {
    double x = L->flow[a].done_at, y = L->flow[b].done_at;
    return x < y || (x == y && a < b);
}

static void redcoll__flow_place(redcoll__links *L, int i, int id) {
    L->heap[i] = id;
    L->flow[id].hpos = i;
}

/* Moves flow id to its place in the heap after its done_at changed. */
static void redcoll__flow_sift(redcoll__links *L, int id) {
    int i = L->flow[id].hpos;
    while (i > 0 && redcoll__flow_less(L, id, L->heap[(i - 1) / 2])) {
        redcoll__flow_place(L, i, L->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        int c = 2 * i + 1;
        if (c >= L->nheap) break;
        if (c + 1 < L->nheap && redcoll__flow_less(L, L->heap[c + 1], L->heap[c])) ++c;
        if (!redcoll__flow_less(L, L->heap[c], id)) break;
        redcoll__flow_place(L, i, L->heap[c]);
        i = c;
    }
    redcoll__flow_place(L, i, id);
}

/* After a flow joined or left link l at `now`: each flow on it whose share
   changed moves on from now at its new rate. */
static void redcoll__link_share(redcoll__links *L, const redcoll__link *l, double now) {
    int i;
    for (i = 0; i < l->n; ++i) {
        redcoll__flow *f = &L->flow[l->ids[i]];
        int out = L->link[2 * f->src].n, in = L->link[2 * f->dst + 1].n, k = out > in ? out : in;
        if (k == f->k) continue;
        if (now > f->t0) {
            f->rem -= (now - f->t0) / (f->per * f->k);
            if (f->rem < 0) f->rem = 0;
            f->t0 = now;
        }
        f->k = k;
        f->done_at = f->t0 + f->rem * (f->per * k);
        redcoll__flow_sift(L, l->ids[i]);
    }
}

/* Appends flow id to link l; 0 when memory ran out. */
static int redcoll__link_add(redcoll__links *L, redcoll__link *l, int id, int *at) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        int *ids = (int *)redcoll__regrow(L->al, l->ids, sizeof *ids * (size_t)l->n, sizeof *ids * (size_t)cap);
        if (!ids) return 0;
        l->ids = ids; l->cap = cap;
    }
    *at = l->n;
    l->ids[l->n++] = id;
    return 1;
}

/* Takes the flow at place `at` off link l (the last one moves there). */
static void redcoll__link_del(redcoll__links *L, redcoll__link *l, int at, int out) {
    int moved = l->ids[--l->n];
    if (at == l->n) return;
    l->ids[at] = moved;
    if (out) L->flow[moved].at_out = at; else L->flow[moved].at_in = at;
}

/* A message of n > 0 bytes from node src to node dst starts at now (the
   caller's current time); 0 when memory ran out (the caller may time it
   alone: now + n per + lat). */
static int redcoll__links_start(redcoll__links *L, int src, int dst, double now, double n, double per,
                                double lat, void *snd, void *rcv) {
    redcoll__flow *f;
    int id;
    if (L->free_id < 0 && L->nflow == L->cap) {
        int cap = L->cap ? 2 * L->cap : 64;
        redcoll__flow *fl = (redcoll__flow *)redcoll__regrow(L->al, L->flow, sizeof *fl * (size_t)L->cap,
                                                             sizeof *fl * (size_t)cap);
        int *heap;
        if (!fl) return 0;
        L->flow = fl;
        heap = (int *)redcoll__regrow(L->al, L->heap, sizeof *heap * (size_t)L->cap, sizeof *heap * (size_t)cap);
        if (!heap) return 0;
        L->heap = heap;
        L->cap = cap;
    }
    id = L->free_id >= 0 ? L->free_id : L->nflow;
    f = &L->flow[id];
    if (!redcoll__link_add(L, &L->link[2 * src], id, &f->at_out)) return 0;
    if (!redcoll__link_add(L, &L->link[2 * dst + 1], id, &f->at_in)) { L->link[2 * src].n--; return 0; }
    if (id == L->free_id) L->free_id = f->next_free; else L->nflow++;
    f->snd = snd; f->rcv = rcv;
    f->start = f->t0 = now; f->lat = lat; f->per = per; f->rem = n;
    f->k = 0; f->src = src; f->dst = dst;
    f->done_at = now;
    redcoll__flow_place(L, L->nheap++, id);
    redcoll__link_share(L, &L->link[2 * src], now);
    redcoll__link_share(L, &L->link[2 * dst + 1], now);
    return 1;
}

/* When the next message's last byte passes; -1: none on the links. */
static double redcoll__links_next(const redcoll__links *L) {
    return L->nheap ? L->flow[L->heap[0]].done_at : -1;
}

/* Ends the next message (at redcoll__links_next): its ends, its start and
   its end (lat after its last byte); the others move on at their new shares. */
static void redcoll__links_end(redcoll__links *L, void **snd, void **rcv, double *start, double *end) {
    int id = L->heap[0];
    redcoll__flow *f = &L->flow[id];
    double now = f->done_at;
    int src = f->src, dst = f->dst;
    *snd = f->snd; *rcv = f->rcv; *start = f->start; *end = now + f->lat;
    if (--L->nheap > 0) {
        int last = L->heap[L->nheap];
        redcoll__flow_place(L, 0, last);
        redcoll__flow_sift(L, last);
    }
    redcoll__link_del(L, &L->link[2 * src], f->at_out, 1);
    redcoll__link_del(L, &L->link[2 * dst + 1], f->at_in, 0);
    f->next_free = L->free_id;
    L->free_id = id;
    redcoll__link_share(L, &L->link[2 * src], now);
    redcoll__link_share(L, &L->link[2 * dst + 1], now);
}

/* ---- pricing by replay ------------------------------------------------------
   Rows whose simulated time has no closed form or walk here (reduce's
   Rabenseifner-Traeff routing and binary blocks; its binary trees are
   walked, redcoll__tree_walk) are
   priced exactly: their schedule runs once per rank against a transport
   that moves nothing and records the calls, and the p call lists are
   replayed under the simulator's rules (transports/redcoll_mock.h): a
   message starts when both ends are posted and lasts alpha + n beta when
   both ends are halves of exchanges, f_alpha alpha + n f_beta beta
   otherwise; a wait ends at its last end and no earlier than its first post
   plus the summed durations of its sends, or of its receives; reducing n
   bytes adds n gamma. One call's messages carry one tag, so ends match in
   post order per (sender, receiver). Cost: p runs of the schedule plus the
   messages (tens of microseconds at p = 100), memory from REDCOLL_MALLOC
   (redcoll__replay_take). The root goes first: its calls
   alone, back to back, are a lower bound of the time, so a row that cannot
   beat the selection's best so far stops there. Above REDCOLL__REPLAY_MAX_P
   ranks or REDCOLL__REPLAY_MAX_EV events (the root's times p) the rows keep
   their estimates (-1 here). */
#define REDCOLL__REPLAY_MAX_P  128
#define REDCOLL__REPLAY_MAX_EV ((size_t)1 << 18)

/* Events: a posted end (SEND, RECV: x the peer); a blocking call's wait for
   the x ends it just posted (WAIT); a waitall for x ends, each named by the
   REF event (x: the rank's end number) that follows (WAITALL); a reduction
   of `bytes` (COMPUTE). */
enum { REDCOLL__EV_SEND, REDCOLL__EV_RECV, REDCOLL__EV_WAIT, REDCOLL__EV_WAITALL, REDCOLL__EV_REF,
       REDCOLL__EV_COMPUTE };

typedef struct redcoll__ev {
    unsigned char kind, duplex;
    int           x;
    size_t        bytes;
} redcoll__ev;

/* A posted end in the replay. */
typedef struct redcoll__rend {
    double post, end, dur;
    size_t bytes;
    int    peer, next;                   /* next: the owner's next unmatched end (-1: none) */
    int    owner;                        /* the rank that posted it */
    unsigned char is_send, duplex, done;
} redcoll__rend;

/* The replay's memory: a block of cap events and then cap ends (a rank
   posts fewer ends than it records events), a header before it holding its
   size. With the default allocator the last block (up to 4 MiB) is kept for
   the next replay, taken and given back by one atomic exchange each: fresh
   pages for every decision cost more than the replay itself. */
#define REDCOLL__REPLAY_HEAD ((size_t)64)
#define REDCOLL__REPLAY_UNIT (sizeof(redcoll__ev) + sizeof(redcoll__rend))
#define REDCOLL__REPLAY_KEEP ((size_t)4 << 20)
#if defined(__GNUC__) || defined(__clang__)
static void *redcoll__replay_kept;
#endif
/* REDCOLL_MALLOC / REDCOLL_FREE, not the call's allocator: like the decision
   cache this is the library's state, shared by calls of every allocator. */
static const redcoll_allocator redcoll__replay_alloc = { 0, 0, 0 };

static size_t redcoll__replay_cap(const redcoll__ev *ev) {
    size_t bytes;
    REDCOLL_MEMCPY(&bytes, (const char *)ev - REDCOLL__REPLAY_HEAD, sizeof bytes);
    return (bytes - REDCOLL__REPLAY_HEAD) / REDCOLL__REPLAY_UNIT;
}

static redcoll__ev *redcoll__replay_take(const redcoll_allocator *al, size_t cap) {
    size_t bytes = REDCOLL__REPLAY_HEAD + cap * REDCOLL__REPLAY_UNIT;
    char *b;
#if defined(__GNUC__) || defined(__clang__)
    if (!al->alloc_fn && (b = (char *)__atomic_exchange_n(&redcoll__replay_kept, NULL, __ATOMIC_ACQ_REL))) {
        if (redcoll__replay_cap((redcoll__ev *)(void *)(b + REDCOLL__REPLAY_HEAD)) >= cap)
            return (redcoll__ev *)(void *)(b + REDCOLL__REPLAY_HEAD);
        redcoll__mem_free(al, b);
    }
#endif
    if (cap > REDCOLL__REPLAY_MAX_EV || !(b = (char *)redcoll__mem_alloc(al, bytes))) return NULL;
    REDCOLL_MEMCPY(b, &bytes, sizeof bytes);
    return (redcoll__ev *)(void *)(b + REDCOLL__REPLAY_HEAD);
}

static void redcoll__replay_give(const redcoll_allocator *al, redcoll__ev *ev) {
    char *b = ev ? (char *)ev - REDCOLL__REPLAY_HEAD : NULL;
#if defined(__GNUC__) || defined(__clang__)
    if (b && !al->alloc_fn && redcoll__replay_cap(ev) * REDCOLL__REPLAY_UNIT <= REDCOLL__REPLAY_KEEP)
        b = (char *)__atomic_exchange_n(&redcoll__replay_kept, b, __ATOMIC_ACQ_REL);
#endif
    if (b) redcoll__mem_free(al, b);
}

/* ---- the recording transport ------------------------------------------------------
   A transport that moves nothing (REDCOLL_TRANSPORT_NO_DATA) and answers
   every call at once, so one rank runs a collective without its peers. It
   stands in for a transport `like`: the same flags and optional entries,
   node_of forwarded, and like's node transport stood in for the same way
   (R->inside, recording into R), so a schedule takes the branches and makes
   the allocations it would make there. Three users: the measuring pass
   ([SECTION:setup]) only runs on it, to learn the scratch; the replay below
   records every rank's calls as events; the tool (redcoll/work.c) counts a
   sample of ranks' calls and bytes, up to a cap, to estimate what a
   simulation will cost. */
typedef struct redcoll__rec {
    redcoll_transport        t;       /* the collective runs on &R->t */
    redcoll_transport        inside;  /* like's node transport (its `node`), recorded alike */
    const redcoll_transport *like;    /* NULL: every optional entry (the replay's) */
    int                      node_size; /* > 0: node_of(r) = r / node_size, not like's */
    const redcoll_allocator *al;      /* the events' memory; NULL: no events kept */
    redcoll__ev             *ev;      /* cap events, then room for cap ends (redcoll__replay_take) */
    size_t                   n, cap;
    int                      ends;    /* this rank's ends so far */
    int                      full;    /* stopped: out of room for events, or at max_calls */
    unsigned long long       calls, bytes, max_calls; /* calls made, bytes sent; 0: no cap */
} redcoll__rec;

/* Room for cap events (one copy of those recorded); 0: none. */
static int redcoll__rec_room(redcoll__rec *R, size_t cap) {
    redcoll__ev *ev = redcoll__replay_take(R->al, cap);
    if (!ev) return 0;
    if (R->n) REDCOLL_MEMCPY(ev, R->ev, R->n * sizeof *ev);
    redcoll__replay_give(R->al, R->ev);
    R->ev = ev; R->cap = redcoll__replay_cap(ev);
    return 1;
}

static void redcoll__rec_push(redcoll__rec *R, int kind, int duplex, int x, size_t bytes) {
    redcoll__ev *e;
    if (!R->al || R->full) return;
    if (R->n == R->cap && !redcoll__rec_room(R, 2 * R->cap)) { R->full = 1; return; }
    e = &R->ev[R->n++];
    e->kind = (unsigned char)kind; e->duplex = (unsigned char)duplex; e->x = x; e->bytes = bytes;
}

/* One more call sending `sent` bytes; 0 past the cap. */
static int redcoll__rec_count(redcoll__rec *R, size_t sent) {
    if (R->max_calls && R->calls >= R->max_calls) R->full = 1;
    if (R->full) return 0;
    R->calls++;
    R->bytes += sent;
    return 1;
}

/* A blocking call, as the simulator makes it: its ends (send first), then
   the wait for them. */
static redcoll_result redcoll__rec_call(void *u, int dst, size_t sbytes, int src, size_t rbytes) {
    redcoll__rec *R = (redcoll__rec *)u;
    int duplex = dst >= 0 && src >= 0, k = (dst >= 0) + (src >= 0);
    if (!redcoll__rec_count(R, dst >= 0 ? sbytes : 0)) return REDCOLL_ERR_TRANSPORT;
    if (dst >= 0) redcoll__rec_push(R, REDCOLL__EV_SEND, duplex, dst, sbytes);
    if (src >= 0) redcoll__rec_push(R, REDCOLL__EV_RECV, duplex, src, rbytes);
    redcoll__rec_push(R, REDCOLL__EV_WAIT, 0, k, 0);
    R->ends += k;
    return R->full ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK;
}

static redcoll_result redcoll__rec_send(void *u, int dst, const void *buf, size_t bytes, int tag) {
    (void)buf; (void)tag;
    return redcoll__rec_call(u, dst, bytes, -1, 0);
}
static redcoll_result redcoll__rec_recv(void *u, int src, void *buf, size_t bytes, int tag) {
    (void)buf; (void)tag;
    return redcoll__rec_call(u, -1, 0, src, bytes);
}
static redcoll_result redcoll__rec_sendrecv(void *u, int dst, const void *sbuf, size_t sbytes,
                                            int src, void *rbuf, size_t rbytes, int tag) {
    (void)sbuf; (void)rbuf; (void)tag;
    return redcoll__rec_call(u, dst, sbytes, src, rbytes);
}
static redcoll_result redcoll__rec_recv_reduce(void *u, int src, size_t bytes, int tag,
                                               const redcoll_consumer *into) {
    (void)tag; (void)into;
    return redcoll__rec_call(u, -1, 0, src, bytes);
}
static redcoll_result redcoll__rec_sendrecv_reduce(void *u, int dst, const void *sbuf, size_t sbytes,
                                                   int src, size_t rbytes, int tag,
                                                   const redcoll_consumer *into) {
    (void)sbuf; (void)tag; (void)into;
    return redcoll__rec_call(u, dst, sbytes, src, rbytes);
}
static redcoll_result redcoll__rec_ipost(redcoll__rec *R, int is_send, int peer, size_t bytes,
                                         redcoll_request *req) {
    if (!redcoll__rec_count(R, is_send ? bytes : 0)) return REDCOLL_ERR_TRANSPORT;
    redcoll__rec_push(R, is_send ? REDCOLL__EV_SEND : REDCOLL__EV_RECV, 0, peer, bytes);
    req->ptr = R; req->id = R->ends++;
    return R->full ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK;
}
static redcoll_result redcoll__rec_isend(void *u, int dst, const void *buf, size_t bytes, int tag,
                                         redcoll_request *req) {
    (void)buf; (void)tag;
    return redcoll__rec_ipost((redcoll__rec *)u, 1, dst, bytes, req);
}
static redcoll_result redcoll__rec_irecv(void *u, int src, void *buf, size_t bytes, int tag,
                                         redcoll_request *req) {
    (void)buf; (void)tag;
    return redcoll__rec_ipost((redcoll__rec *)u, 0, src, bytes, req);
}
static redcoll_result redcoll__rec_waitall(void *u, int count, redcoll_request *reqs) {
    redcoll__rec *R = (redcoll__rec *)u;
    int i, k = 0;
    for (i = 0; i < count; ++i) k += reqs[i].ptr != NULL;
    redcoll__rec_push(R, REDCOLL__EV_WAITALL, 0, k, 0);
    for (i = 0; i < count; ++i)
        if (reqs[i].ptr) { redcoll__rec_push(R, REDCOLL__EV_REF, 0, (int)reqs[i].id, 0); reqs[i].ptr = NULL; }
    return R->full ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK;
}
static void redcoll__rec_abort(void *u, redcoll_result why) { (void)u; (void)why; }
static void redcoll__rec_compute(void *u, size_t elems, size_t bytes) {
    (void)elems;
    redcoll__rec_push((redcoll__rec *)u, REDCOLL__EV_COMPUTE, 0, 0, bytes);
}
static int redcoll__rec_node_of(void *u, int rank) {
    const redcoll__rec *R = (const redcoll__rec *)u;
    return R->node_size > 0 ? rank / R->node_size : R->like->node_of(R->like->user, rank);
}

static const redcoll_transport *redcoll__rec_node(void *u) {
    const redcoll__rec *R = (const redcoll__rec *)u;
    return R->inside.send ? &R->inside : NULL;
}

/* t as a recorder of R standing in for `like` (NULL: with every optional
   entry), as rank `rank` of `size`. */
static void redcoll__rec_entries(redcoll__rec *R, redcoll_transport *t, int rank, int size,
                                 const redcoll_transport *like) {
    int nb = !like || like->isend, fused = !like || like->recv_reduce;
    t->user = R; t->rank = rank; t->size = size;
    t->send = redcoll__rec_send; t->recv = redcoll__rec_recv; t->sendrecv = redcoll__rec_sendrecv;
    t->abort = redcoll__rec_abort;
    t->isend = nb ? redcoll__rec_isend : NULL;
    t->irecv = nb ? redcoll__rec_irecv : NULL;
    t->waitall = nb ? redcoll__rec_waitall : NULL;
    t->on_compute = R->al ? redcoll__rec_compute : NULL;
    t->flags = (like ? like->flags : 0) | REDCOLL_TRANSPORT_NO_DATA;
    t->recv_reduce = fused ? redcoll__rec_recv_reduce : NULL;
    t->sendrecv_reduce = fused ? redcoll__rec_sendrecv_reduce : NULL;
}

/* R as rank `rank` of `size` standing in for `like` (NULL: with every
   optional entry), keeping events in memory from `al` (NULL: none). */
static void redcoll__rec_init(redcoll__rec *R, int rank, int size, const redcoll_transport *like,
                              const redcoll_allocator *al) {
    const redcoll_transport *in = like && like->node ? like->node(like->user) : NULL;
    REDCOLL_MEMSET(R, 0, sizeof *R);
    R->like = like;
    R->al = al;
    redcoll__rec_entries(R, &R->t, rank, size, like);
    R->t.node_of = like && like->node_of ? redcoll__rec_node_of : NULL;
    if (in) {
        redcoll__rec_entries(R, &R->inside, in->rank, in->size, in);
        R->t.node = redcoll__rec_node;
    }
}

/* A rank in the replay. */
typedef struct redcoll__rrank {
    double clock, key; /* key: its time in the ready heap (two levels) */
    size_t pc, stop;  /* its events: [pc, stop) still to run */
    int    end0, ends;/* its first end's index, ends posted */
    int    head, tail;/* its unmatched ends, in post order */
    int    waiting;
} redcoll__rrank;

/* The oldest unmatched end of rank u toward v in direction is_send, taken
   off u's list; -1: none. */
static int redcoll__rtake(redcoll__rrank *u, redcoll__rend *en, int v, int is_send) {
    int id, prev = -1;
    for (id = u->head; id >= 0; prev = id, id = en[id].next)
        if (en[id].peer == v && en[id].is_send == is_send) {
            if (prev < 0) u->head = en[id].next; else en[prev].next = en[id].next;
            if (u->tail == id) u->tail = prev;
            return id;
        }
    return -1;
}

/* End number i of a wait (event at pc): a blocking call's last k ends, or
   a waitall's REF events. */
static int redcoll__rwaited(const redcoll__ev *ev, const redcoll__rrank *r, int i) {
    const redcoll__ev *w = &ev[r->pc];
    return r->end0 + (w->kind == REDCOLL__EV_WAIT ? r->ends - w->x + i : w[1 + i].x);
}

/* The replay's ready ranks: a stack under one level (the order does not
   change the times there), under two levels a heap by time, earliest first
   (ties by rank). */
static void redcoll__rpush(int *ready, int *top, redcoll__rrank *rk, int v, double key, int two) {
    int i = (*top)++;
    rk[v].key = key;
    if (two)
        for (; i > 0; i = (i - 1) / 2) {
            int up = ready[(i - 1) / 2];
            if (rk[up].key < key || (rk[up].key == key && up < v)) break;
            ready[i] = up;
        }
    ready[i] = v;
}

static int redcoll__rpop(int *ready, int *top, const redcoll__rrank *rk, int two) {
    int v = ready[0], last, i = 0;
    if (!two) return ready[--*top];
    last = ready[--*top];
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *top) break;
        if (c + 1 < *top && (rk[ready[c + 1]].key < rk[ready[c]].key ||
                             (rk[ready[c + 1]].key == rk[ready[c]].key && ready[c + 1] < ready[c]))) ++c;
        if (rk[last].key < rk[ready[c]].key || (rk[last].key == rk[ready[c]].key && last < ready[c])) break;
        ready[i] = ready[c];
        i = c;
    }
    ready[i] = last;
    return v;
}

/* Replays the ranks' events from time 0; the last rank's end, -1 on a
   deadlock (a schedule that would hang on the simulator too). bound > 0:
   stops at the first clock that reaches it (clocks only grow, so the time
   does too) and returns that clock, a lower bound. sh: two levels on nodes
   of sh->kmax consecutive ranks (NULL: one level), run as the simulator runs
   them: the ranks in time order, a rank's post waiting for every earlier
   event, messages between nodes on the shared links (redcoll__links). */
static double redcoll__replay(const redcoll__ev *ev, redcoll__rrank *rk, redcoll__rend *en, int *ready,
                              int p, const redcoll_cost_model *m, const redcoll__shape *sh, double bound) {
    int top = 0, v, finished = 0, two = sh != NULL;
    double t = 0, now = 0, ia = redcoll__inter_alpha(m), ib = redcoll__inter_beta(m);
    redcoll__links L;
    if (two && !redcoll__links_init(&L, sh->nodes, &redcoll__replay_alloc)) return -1;
    for (v = p - 1; v >= 0; --v) redcoll__rpush(ready, &top, rk, two ? p - 1 - v : v, 0, two);
    for (;;) {
        redcoll__rrank *r;
        if (two) { /* the earliest event: a message between nodes ends here */
            double tf = redcoll__links_next(&L);
            if (tf >= 0 && (top == 0 || tf <= rk[ready[0]].key)) {
                void *a, *b;
                double st, end;
                redcoll__rend *x, *y;
                redcoll__links_end(&L, &a, &b, &st, &end);
                if (tf > now) now = tf;
                x = (redcoll__rend *)a; y = (redcoll__rend *)b;
                x->end = y->end = end;
                x->dur = y->dur = end - st;
                x->done = y->done = 1;
                if (rk[x->owner].waiting) { rk[x->owner].waiting = 0; redcoll__rpush(ready, &top, rk, x->owner, now, 1); }
                if (rk[y->owner].waiting) { rk[y->owner].waiting = 0; redcoll__rpush(ready, &top, rk, y->owner, now, 1); }
                continue;
            }
        }
        if (top == 0) break;
        r = &rk[v = redcoll__rpop(ready, &top, rk, two)];
        if (two && r->key > now) now = r->key;
        r->waiting = 0;
        while (r->pc < r->stop) {
            const redcoll__ev *e = &ev[r->pc];
            if (e->kind == REDCOLL__EV_SEND || e->kind == REDCOLL__EV_RECV) {
                int id, f;
                redcoll__rend *x;
                if (two) { /* posts in time order: first every earlier event */
                    double tf = redcoll__links_next(&L);
                    if ((tf >= 0 && tf <= r->clock) || (top > 0 && rk[ready[0]].key < r->clock)) {
                        redcoll__rpush(ready, &top, rk, v, r->clock, 1);
                        break;
                    }
                    if (r->clock > now) now = r->clock;
                }
                id = r->end0 + r->ends++;
                x = &en[id];
                x->post = r->clock; x->bytes = e->bytes; x->peer = e->x; x->owner = v;
                x->is_send = e->kind == REDCOLL__EV_SEND; x->duplex = e->duplex; x->done = 0; x->next = -1;
                f = redcoll__rtake(&rk[e->x], en, v, !x->is_send);
                if (f >= 0) { /* matched: timed as redcoll__mmatch times it */
                    redcoll__rend *s = x->is_send ? x : &en[f], *q = x->is_send ? &en[f] : x;
                    double n = (double)s->bytes, start = s->post > q->post ? s->post : q->post, dur;
                    int dx = s->duplex && q->duplex;
                    if (two && s->owner / sh->kmax != q->owner / sh->kmax) { /* between nodes */
                        double lat = dx ? ia : m->f_alpha * ia, per = dx ? ib : m->f_beta * ib;
                        if (n > 0 && per > 0 &&
                            redcoll__links_start(&L, s->owner / sh->kmax, q->owner / sh->kmax, start, n, per, lat, s, q)) {
                            r->pc++;
                            continue; /* ends when the links say (above) */
                        }
                        s->end = q->end = start + n * per + lat;
                        s->dur = q->dur = s->end - start;
                    } else {
                        dur = redcoll__msg_time(m, n, dx);
                        s->end = q->end = start + dur;
                        s->dur = q->dur = dur;
                    }
                    s->done = q->done = 1;
                    if (rk[e->x].waiting) { rk[e->x].waiting = 0; redcoll__rpush(ready, &top, rk, e->x, now, two); }
                } else { /* queued */
                    if (r->tail >= 0) en[r->tail].next = id; else r->head = id;
                    r->tail = id;
                }
                r->pc++;
            } else if (e->kind == REDCOLL__EV_COMPUTE) {
                r->clock += (double)e->bytes * m->gamma;
                r->pc++;
            } else { /* a wait, ended as redcoll__mwait ends it */
                double start = r->clock, sends = 0, recvs = 0, end = r->clock;
                int k = e->x, i;
                for (i = 0; i < k && en[redcoll__rwaited(ev, r, i)].done; ++i) {}
                if (i < k) { r->waiting = 1; break; }
                for (i = 0; i < k; ++i) {
                    const redcoll__rend *x = &en[redcoll__rwaited(ev, r, i)];
                    if (x->post < start) start = x->post;
                }
                for (i = 0; i < k; ++i) {
                    const redcoll__rend *x = &en[redcoll__rwaited(ev, r, i)];
                    if (x->end > end) end = x->end;
                    if (x->is_send) sends += x->dur; else recvs += x->dur;
                }
                if (start + sends > end) end = start + sends;
                if (start + recvs > end) end = start + recvs;
                r->clock = end;
                if (bound > 0 && end >= bound) { /* cannot win */
                    if (two) redcoll__links_free(&L);
                    return end;
                }
                r->pc += 1 + (e->kind == REDCOLL__EV_WAITALL ? (size_t)k : 0);
            }
        }
        if (r->pc == r->stop) {
            ++finished;
            if (r->clock > t) t = r->clock;
        }
    }
    if (two) redcoll__links_free(&L);
    return finished == p ? t : -1;
}

/* One rank's events [0, stop) alone, every blocking call as short as it
   can be (a peer that is never late, an exchange where its end is half of
   one; a waitall taken as free): a lower bound of that rank's end in the
   replay, hence of the time. */
static double redcoll__replay_alone(const redcoll__ev *ev, size_t stop, const redcoll_cost_model *m) {
    double clock = 0;
    size_t i, j;
    for (i = 0; i < stop; ++i) {
        const redcoll__ev *e = &ev[i];
        if (e->kind == REDCOLL__EV_COMPUTE) clock += (double)e->bytes * m->gamma;
        if (e->kind != REDCOLL__EV_WAIT) continue;
        { /* its ends are the x events before it */
            double sends = 0, recvs = 0;
            for (j = i - (size_t)e->x; j < i; ++j) {
                double n = (double)ev[j].bytes, d = redcoll__msg_time(m, n, 0);
                double two = redcoll__msg_time(m, n, 1);
                if (ev[j].duplex && two < d) d = two;
                if (ev[j].kind == REDCOLL__EV_SEND) sends += d; else recvs += d;
            }
            clock += sends > recvs ? sends : recvs;
        }
    }
    return clock;
}

/* Records rank v's calls of row e (one vector of n elements, root 0, out of
   place, a commutative predefined op; the buffers as the entry points lay
   them out, the irregular collectives' counts in->displs or even) on R; 0
   when it failed or ran out of room. pl: the Rabenseifner-Traeff rows'
   plan, made once for all ranks (it does not depend on the rank), run as
   redcoll__rabenseifner_traeff runs it. */
static int redcoll__replay_record(redcoll__rec *R, const redcoll__row *e, int v, int p,
                                  const redcoll__cost_in *in, size_t span, const redcoll__rt_plan *pl) {
    redcoll__ctx c;
    redcoll__args a;
    redcoll__arena ar;
    redcoll_coll coll = e->info.coll;
    size_t cnt[REDCOLL__REPLAY_MAX_P], dsp[REDCOLL__REPLAY_MAX_P + 1];
    union { char b[1024]; double align_d; void *align_p; long long align_l; } ctl;
    R->t.rank = v;
    REDCOLL_MEMSET(&c, 0, sizeof c);
    REDCOLL_MEMSET(&a, 0, sizeof a);
    c.t = &R->t; c.rank = v; c.size = p; c.coll = coll; c.dtype = REDCOLL_INT32;
    c.esize = in->esize; c.op = redcoll_op_predefined(REDCOLL_OP_SUM);
    c.o = *in->o; c.dry = 1; c.arena = &ar;
    redcoll__arena_measuring(&ar, ctl.b, sizeof ctl.b);
    a.sbuf = redcoll__measure_base + span; /* the caller's buffers lie past any scratch */
    a.rbuf = v == 0 || (coll != REDCOLL_COLL_REDUCE && coll != REDCOLL_COLL_GATHER)
                 ? redcoll__measure_base + 2 * span : NULL;
    a.count = in->n; a.root = 0; a.variant = e->variant;
    if (coll == REDCOLL_COLL_BCAST) a.sbuf = a.rbuf;
    if (coll == REDCOLL_COLL_ALLGATHER) a.sbuf = redcoll__at(&c, a.rbuf, (size_t)v * in->n);
    if (coll == REDCOLL_COLL_ALLGATHERV || coll == REDCOLL_COLL_REDUCE_SCATTER) {
        redcoll__segs L = redcoll__segs_make(in->n, p, in->displs);
        int i;
        for (dsp[0] = 0, i = 0; i < p; ++i) {
            cnt[i] = redcoll__seg_len(&L, i, i + 1);
            dsp[i + 1] = dsp[i] + cnt[i];
        }
        a.count = 0; a.counts = cnt; a.displs = dsp;
        if (coll == REDCOLL_COLL_ALLGATHERV) a.sbuf = redcoll__at(&c, a.rbuf, dsp[v]);
    }
    R->ends = 0;
    if (pl) redcoll__rt_execute(&c, &a, c.coll == REDCOLL_COLL_REDUCE, pl);
    else e->run(&c, &a);
    return !c.err && !R->full;
}

/* The simulated time of row `row` by replay; -1 above the limits; a lower
   bound >= in->bound when the root alone shows that the row cannot come
   in under in->bound. */
static double redcoll__replay_price(int row, const redcoll__cost_in *in) {
    const redcoll__row *e = &redcoll__rows[row];
    redcoll__rrank rk[REDCOLL__REPLAY_MAX_P];
    int ready[REDCOLL__REPLAY_MAX_P];
    int p = in->p, v, ends = 0;
    size_t span;
    redcoll__rec R;
    redcoll__rt_plan pl, *plan = NULL; /* the Rabenseifner-Traeff rows' plan */
    redcoll_cost_model lower = *in->m;
    double time = -1;
    if (p > REDCOLL__REPLAY_MAX_P || in->n > ((size_t)-1 >> 8) / in->esize / (size_t)(p + 4)) return -1;
    span = redcoll__align_up(in->n * in->esize) * (size_t)(p + 4) + REDCOLL__ARENA_ALIGN;
    redcoll__rec_init(&R, 0, p, NULL, &redcoll__replay_alloc);
    if (e->run == redcoll__rabenseifner_traeff) {
        redcoll__ctx c;
        REDCOLL_MEMSET(&c, 0, sizeof c);
        c.size = p; c.esize = in->esize; c.o = *in->o;
        redcoll__rt_make_plan(&pl, &c, in->n, e->variant);
        plan = &pl;
    }
    if (in->two) { /* the node-aware rows see the priced nodes (blocks of the largest) */
        R.node_size = in->shape.kmax;
        R.t.node_of = redcoll__rec_node_of;
        lower.alpha = in->ia < lower.alpha ? in->ia : lower.alpha; /* the cheaper link bounds below */
        lower.beta = in->ib < lower.beta ? in->ib : lower.beta;
    }
    if (!redcoll__rec_room(&R, 1024)) return -1;
    for (v = 0; v < p; ++v) {
        rk[v].pc = R.n; rk[v].end0 = ends;
        if (!redcoll__replay_record(&R, e, v, p, in, span, plan)) break;
        rk[v].stop = R.n; rk[v].ends = 0; rk[v].clock = 0;
        rk[v].head = rk[v].tail = -1; rk[v].waiting = 0;
        ends += R.ends;
        if (v == 0) { /* the root: a bound, and the size of the whole (one block) */
            size_t want = (R.n + R.n / 4 + 16) * (size_t)p;
            if (R.n > REDCOLL__REPLAY_MAX_EV / (size_t)p) break;
            time = in->bound > 0 ? redcoll__replay_alone(R.ev, R.n, &lower) : -1;
            if (in->bound > 0 && time * (1 - 1e-9) >= in->bound) break; /* (rounding aside) */
            time = -1;
            if (want > R.cap && !redcoll__rec_room(&R, want)) break;
        }
    }
    if (v == p)
        time = redcoll__replay(R.ev, rk, (redcoll__rend *)(void *)(R.ev + R.cap), ready, p, in->m,
                               in->two ? &in->shape : NULL, in->bound);
    redcoll__replay_give(R.al, R.ev);
    return time;
}

/* The rows priced by replay: reduce's Rabenseifner-Traeff routing and its
   binary blocks. */
static int redcoll__replayed(int row) {
    const redcoll__row *e = &redcoll__rows[row];
    return e->info.coll == REDCOLL_COLL_REDUCE &&
           (e->run == redcoll__rabenseifner_traeff || e->run == redcoll__reduce_binary_blocks);
}

static double redcoll__row_cost(int row, const redcoll__cost_in *call);

/* ---- two levels above the replay's limit -----------------------------------------
   A one-level row on N nodes of k consecutive ranks, priced by how its
   messages meet the nodes (its own cost function on each part, so an
   estimate; test model/two levels: costs against the simulator states how
   far off):
     RING      neighbours or one root: every step waits for a message that
               crosses a node's link, alone there: the row with the inter
               links (ring, pairwise reduce_scatter, the HL rows, scatter
               bcasts, the barrier).
     TREE      a binomial tree by distance doubling: lg k steps inside the
               nodes, lg N steps across with one message per node: the row
               on k ranks inside plus on N ranks across (whole vectors).
     EXCHANGE  every rank exchanges with distance doubling: the steps across
               carry k messages per node link: on k inside, on N across
               with inter_beta k (the vector, or for allgather a node's k
               blocks).
     HALVING   vector halving with distance doubling: the steps across see
               n/k, k at a time: on k inside, on N across with n / k and
               inter_beta k (the node-aware allreduce by another name).
     SHARED    all-to-all: most bytes cross, k at a time: the row with
               inter_alpha and k inter_beta (pairwise reduce_scatter, and the
               rows whose steps across carry k messages per node but not in
               a pattern above: Bruck's allgather, the scatter bcast's
               recursive-doubling allgather, HL's binary trees).
     FLOOD     every message in flight at once (scattered alltoall): each
               shares its node's link with the k (p - k) others.
     RING_RS   ring allreduce and reduce: a pairwise reduce-scatter (SHARED)
               and a ring half: the mean of the two estimates.
     ROUTED    Rabenseifner-Traeff rows: the plan the schedule makes halves
               the first levels while pieces exceed its threshold: HALVING
               when it halves them all, else EXCHANGE with what is left of
               the vector when the network levels begin. */
enum { REDCOLL__SHAPE_RING, REDCOLL__SHAPE_TREE, REDCOLL__SHAPE_EXCHANGE, REDCOLL__SHAPE_HALVING,
       REDCOLL__SHAPE_SHARED, REDCOLL__SHAPE_RING_RS, REDCOLL__SHAPE_ROUTED, REDCOLL__SHAPE_FLOOD };

static int redcoll__two_level_kind(const redcoll__row *e) {
    redcoll_coll coll = e->info.coll;
    switch (e->info.algo) {
    case REDCOLL_ALGO_BINOMIAL: case REDCOLL_ALGO_BINARY_TREE: case REDCOLL_ALGO_REDUCE_BCAST:
        return REDCOLL__SHAPE_TREE;
    case REDCOLL_ALGO_RECURSIVE_DOUBLING: return REDCOLL__SHAPE_EXCHANGE;
    case REDCOLL_ALGO_BRUCK: case REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING: case REDCOLL_ALGO_BINARY:
    case REDCOLL_ALGO_IN_ORDER_BINARY:
        return REDCOLL__SHAPE_SHARED;
    case REDCOLL_ALGO_HALVING_DOUBLING: case REDCOLL_ALGO_BINARY_BLOCKS: case REDCOLL_ALGO_RECURSIVE_HALVING:
        return REDCOLL__SHAPE_HALVING;
    case REDCOLL_ALGO_BUTTERFLY: case REDCOLL_ALGO_ELIMINATION: case REDCOLL_ALGO_ELIMINATION_NONOVERLAP:
    case REDCOLL_ALGO_FACTOR_RING:
        return REDCOLL__SHAPE_ROUTED;
    case REDCOLL_ALGO_SCATTERED: return REDCOLL__SHAPE_FLOOD;
    case REDCOLL_ALGO_PAIRWISE: return REDCOLL__SHAPE_SHARED;
    case REDCOLL_ALGO_RING:
        return coll == REDCOLL_COLL_ALLREDUCE || coll == REDCOLL_COLL_REDUCE ? REDCOLL__SHAPE_RING_RS
                                                                             : REDCOLL__SHAPE_RING;
    default: return REDCOLL__SHAPE_RING;
    }
}

/* Row `row`'s own cost on one level (redcoll__level_in's arguments). */
static double redcoll__row_cost_on(const redcoll__cost_in *in, int p, size_t n, int share) {
    redcoll_options lo;
    redcoll__cost_in at;
    if (p <= 1 || n == 0) return 0;
    redcoll__level_in(in, &lo, &at, p, n, NULL, share);
    return redcoll__row_cost((int)(in->row - redcoll__rows), &at);
}

static double redcoll__two_level_estimate(const redcoll__cost_in *in) {
    int N = in->shape.nodes, k = in->shape.kmax;
    size_t n = in->n;
    redcoll_coll coll = in->row->info.coll;
    int blocks = coll == REDCOLL_COLL_ALLGATHER || coll == REDCOLL_COLL_GATHER || coll == REDCOLL_COLL_SCATTER ||
                 coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    int totals = coll == REDCOLL_COLL_ALLGATHERV || coll == REDCOLL_COLL_REDUCE_SCATTER;
    size_t inside = totals ? n / (size_t)N : n, across = blocks ? n * (size_t)k : n;
    double x, h;
    switch (redcoll__two_level_kind(in->row)) {
    case REDCOLL__SHAPE_TREE:
        return redcoll__row_cost_on(in, k, inside, 0) + redcoll__row_cost_on(in, N, across, 1);
    case REDCOLL__SHAPE_EXCHANGE: /* reduce_scatter: every step carries about the whole vector */
        return redcoll__row_cost_on(in, k, coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK ? n * (size_t)N : inside, 0) +
               redcoll__row_cost_on(in, N, across, k);
    case REDCOLL__SHAPE_HALVING: /* reduce_scatter halves by distance halving: across first, whole */
        return redcoll__row_cost_on(in, k, inside, 0) +
               redcoll__row_cost_on(in, N, totals || blocks ? across : (n + (size_t)k - 1) / (size_t)k, k);
    case REDCOLL__SHAPE_ROUTED: { /* level j at distance 2^j: across from 2^j >= k on, k at a time */
        redcoll__rt_plan pl;
        redcoll__ctx c;
        int j, L = redcoll__ceil_lg(in->p);
        double whole, t = 0;
        REDCOLL_MEMSET(&c, 0, sizeof c);
        c.size = in->p; c.esize = in->esize; c.o = *in->o;
        redcoll__rt_make_plan(&pl, &c, n, in->row->variant);
        whole = (double)n * in->E / (double)((size_t)1 << (pl.halve < L ? pl.halve : L));
        for (j = 0; j < L; ++j) {
            int across = ((size_t)1 << j) >= (size_t)k;
            double a = across ? in->ia : in->a, b = across ? in->ib * k : in->b;
            if (j < pl.halve) {
                h = (double)n * in->E / (double)((size_t)2 << j);
                t += 2 * (a + h * b) + h * in->g; /* a halving step and its allgather step */
            } else {
                t += a + whole * (b + in->g);     /* the rest exchanged whole */
            }
        }
        (void)x;
        return t;
    }
    case REDCOLL__SHAPE_SHARED:
        return redcoll__row_cost_on(in, in->p, n, k);
    case REDCOLL__SHAPE_FLOOD:
        return redcoll__row_cost_on(in, in->p, n, k * (in->p - k > 1 ? in->p - k : 1));
    case REDCOLL__SHAPE_RING_RS:
        return (redcoll__row_cost_on(in, in->p, n, k) + redcoll__row_cost_on(in, in->p, n, 1)) / 2;
    default:
        return redcoll__row_cost_on(in, in->p, n, 1);
    }
}

/* The modeled time of row `row`: its cost function ([SECTION:schedules],
   the list's cost column) on the terms of in, or where the row is replayed
   and the replay is within its limits, the replay. */
static double redcoll__row_cost(int row, const redcoll__cost_in *call) {
    const redcoll_cost_model *m = call->m;
    redcoll__cost_in in = *call;
    int peer = (call->o->transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE) != 0;
    double w;
    in.row = &redcoll__rows[row];
    in.a = m->alpha; in.b = m->beta; in.g = m->gamma;
    in.ua = m->f_alpha * m->alpha; in.ub = m->f_beta * m->beta;
    in.ia = redcoll__inter_alpha(m); in.ib = redcoll__inter_beta(m);
    in.two = redcoll__two_level(m, &in.shape);
    /* allreduce's messages reduced on arrival: on a transport that reduces
       from the sender's memory the reduction's read is the transfer (no n
       beta). Not in reduce's rows, whose replay prices by the simulator's
       rules, nor in the Rabenseifner-Traeff plans. */
    in.br = peer ? 0 : in.b; in.ubr = peer ? 0 : in.ub;
    in.E = (double)in.esize;
    in.V = (double)in.n * in.E;
    in.seg = redcoll__cdiv(in.n, (size_t)in.p) * in.E;
    in.lg = redcoll__ceil_lg(in.p); in.pof2 = redcoll__pof2_floor(in.p);
    in.k = redcoll__floor_lg(in.pof2); in.odd = in.p != in.pof2;
    if (in.p == 1) return 0;
    if (in.n == 0 && in.row->info.coll != REDCOLL_COLL_BARRIER) return 0; /* a barrier's messages are empty */
    if ((in.two || redcoll__replayed(row)) && (w = redcoll__replay_price(row, &in)) >= 0) return w; /* exact */
    return in.two && !(in.row->knobs & REDCOLL__KNOB_NODES) ? redcoll__two_level_estimate(&in) : in.row->cost(&in);
}


/* The rows AUTO chooses among under the model: every row of the collective
   that can serve the op, except hierarchical (its levels are themselves
   chosen by the selector; on one flat cost model it never beats the best
   flat row, and it is meant to be asked for with groups or by_node), and
   the node-aware rows only under the two-level model (`two`). */
static int redcoll__model_candidate(const redcoll__row *e, redcoll_coll coll, int commutative, int two) {
    return e->info.coll == coll && e->info.algo != REDCOLL_ALGO_HIERARCHICAL &&
           (two || !(e->knobs & REDCOLL__KNOB_NODES)) && (commutative || e->info.keeps_order);
}

/* The least cost among the candidates of coll; ties (within 1e-12 relative)
   go to the row listed first. row_out: that row, or -1. */
static double redcoll__best_cost_for(redcoll_coll coll, int p, const redcoll__cost_in *in,
                                     int commutative, int *row_out) {
    redcoll__cost_in at = *in;
    double best = -1;
    int i, pick = -1, two = redcoll__two_level(in->m, &in->shape);
    at.p = p;
    at.noncomm = !commutative;
    for (i = 0; i < REDCOLL__ROW_COUNT; ++i)
        if (redcoll__model_candidate(&redcoll__rows[i], coll, commutative, two)) {
            double t;
            at.bound = pick >= 0 ? best * (1 - 1e-12) : -1; /* what row i must beat */
            t = redcoll__row_cost(i, &at);
            if (t >= 0 && (pick < 0 || t < best * (1 - 1e-12))) { best = t; pick = i; }
        }
    if (row_out) *row_out = pick;
    return best;
}

static double redcoll__best_cost(redcoll_coll coll, int p, const redcoll__cost_in *in, int *row_out) {
    return redcoll__best_cost_for(coll, p, in, 1, row_out);
}

/* n elements of esize bytes from the bytes the selector sees. */
static redcoll__cost_in redcoll__cost_input(redcoll_coll coll, int p, size_t bytes, size_t esize,
                                            const redcoll_options *resolved) {
    redcoll__cost_in in;
    in.p = p;
    in.esize = esize ? esize : 1;
    in.n = bytes / in.esize;
    if (coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK && p > 0) in.n /= (size_t)p;
    in.o = resolved;
    in.m = &resolved->model;
    in.displs = NULL;
    in.bound = -1;
    in.shape = redcoll__shape_of(p, resolved->ranks_per_node);
    in.noncomm = 0;
    return in;
}

REDCOLL_API double redcoll_algo_cost(redcoll_coll coll, redcoll_algo algo, int p, size_t bytes,
                                     size_t esize, const redcoll_options *opts) {
    const redcoll__row *e = redcoll__find(coll, algo);
    redcoll_options o = redcoll_options_resolved(opts);
    redcoll__cost_in in = redcoll__cost_input(coll, p, bytes, esize, &o);
    if (!e || p < 1) return -1;
    return redcoll__row_cost((int)(e - redcoll__rows), &in);
}

/* ==== 12. Selection [SECTION:select] =======================================
   AUTO: the least modeled time (the default), or the papers' rules; the
   model's decisions are cached. */

/* The decision cache: the argmin over the rows costs a few microseconds at
   p = 1024 (the Rabenseifner-Traeff plans) and up to a millisecond for
   reduce at 8 < p <= 128 (its rows replayed), a hit some tens of
   nanoseconds. 4-way set-associative, 1024 sets (32 KiB), the newest entry
   of a set first, so a program's shapes stay in it; one 64-bit word per
   entry (the key's hash above, the algorithm in the low byte), read and
   written atomically, so threads share it without a lock; a race only costs
   a recomputation or a repeated entry. A hit is checked to be a row that
   can serve the call. Without GNU atomics there is no cache. */
#if defined(__GNUC__) || defined(__clang__)
#define REDCOLL__SELECT_CACHE 1024 /* sets */
#define REDCOLL__SELECT_WAYS 4
static unsigned long long redcoll__select_cache[REDCOLL__SELECT_CACHE * REDCOLL__SELECT_WAYS];

static unsigned long long redcoll__cmix(unsigned long long h, unsigned long long x) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xbf58476d1ce4e5b9ull;
}

static unsigned long long redcoll__dbits(double d) {
    unsigned long long u;
    REDCOLL_MEMCPY(&u, &d, sizeof u);
    return u;
}

static unsigned long long redcoll__select_key(redcoll_coll coll, int p, size_t bytes, size_t esize,
                                              int commutative, const redcoll_options *o,
                                              const redcoll__shape *sh) {
    const redcoll_cost_model *m = &o->model;
    /* four independent chains, joined at the end: the processor runs them
       side by side (a hit is on every one-shot call's path) */
    unsigned long long h = 0x243f6a8885a308d3ull, h2 = 0x13198a2e03707344ull, h3 = 0xa4093822299f31d0ull,
                       h4 = 0x082efa98ec4e6c89ull;
    h = redcoll__cmix(h, ((unsigned long long)(unsigned)coll << 33) ^ ((unsigned long long)(unsigned)p << 1) ^
                        (unsigned long long)(commutative != 0));
    h = redcoll__cmix(h, bytes);
    h = redcoll__cmix(h, esize);
    h2 = redcoll__cmix(h2, redcoll__dbits(m->alpha));
    h2 = redcoll__cmix(h2, redcoll__dbits(m->beta));
    h2 = redcoll__cmix(h2, redcoll__dbits(m->gamma));
    h3 = redcoll__cmix(h3, redcoll__dbits(m->f_alpha));
    h3 = redcoll__cmix(h3, redcoll__dbits(m->f_beta));
    h3 = redcoll__cmix(h3, o->threshold_bytes);
    h4 = redcoll__cmix(h4, o->segment_bytes);
    h4 = redcoll__cmix(h4, (unsigned long long)(unsigned)o->groups);
    h4 = redcoll__cmix(h4, o->transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE);
    if (redcoll__two_level(m, sh)) {
        h2 = redcoll__cmix(h2, redcoll__dbits(redcoll__inter_alpha(m)));
        h3 = redcoll__cmix(h3, redcoll__dbits(redcoll__inter_beta(m)));
        h4 = redcoll__cmix(h4, ((unsigned long long)(unsigned)sh->nodes << 32) ^ (unsigned long long)(unsigned)sh->kmax);
        h = redcoll__cmix(h, (unsigned long long)(unsigned)sh->kmin);
    }
    h = redcoll__cmix(redcoll__cmix(redcoll__cmix(h, h2), h3), h4);
    return h | 1; /* never 0, the empty entry */
}
#endif

/* displs: allgatherv's block offsets (p + 1), priced as laid out and part
   of the cache key; NULL for the others. */
static redcoll_algo redcoll__select_model_at(redcoll_coll coll, int p, size_t bytes, size_t esize,
                                             int commutative, const redcoll_options *resolved,
                                             const size_t *displs, const redcoll__shape *shape) {
    redcoll__shape sh = shape ? *shape : redcoll__shape_of(p, resolved->ranks_per_node);
    redcoll__cost_in in;
    redcoll_algo algo;
    int row;
#ifdef REDCOLL__SELECT_CACHE
    unsigned long long key;
    unsigned long long *slot;
    int i;
    key = redcoll__select_key(coll, p, bytes, esize, commutative, resolved, &sh);
    for (i = 0; displs && i <= p; ++i) key = redcoll__cmix(key, displs[i]) | 1;
    slot = &redcoll__select_cache[(key >> 40) % REDCOLL__SELECT_CACHE * REDCOLL__SELECT_WAYS];
    for (i = 0; i < REDCOLL__SELECT_WAYS; ++i) {
        unsigned long long hit = __atomic_load_n(&slot[i], __ATOMIC_RELAXED);
        if (hit && (hit >> 8) == (key >> 8)) {
            const redcoll__row *e = redcoll__find(coll, (redcoll_algo)(hit & 0xff));
            if (e && redcoll__model_candidate(e, coll, commutative, redcoll__two_level(&resolved->model, &sh)))
                return e->info.algo;
        }
    }
#endif
    in = redcoll__cost_input(coll, p, bytes, esize, resolved); /* a miss: price the rows */
    in.shape = sh;
    in.displs = displs;
    redcoll__best_cost_for(coll, p, &in, commutative, &row);
    algo = row >= 0 ? redcoll__rows[row].info.algo : REDCOLL_ALGO_AUTO;
#ifdef REDCOLL__SELECT_CACHE
    for (i = REDCOLL__SELECT_WAYS - 1; i > 0; --i) /* the oldest leaves the set */
        __atomic_store_n(&slot[i], __atomic_load_n(&slot[i - 1], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(slot, (key & ~0xffull) | (unsigned long long)algo, __ATOMIC_RELAXED);
#endif
    return algo;
}

static redcoll_algo redcoll__select_model(redcoll_coll coll, int p, size_t bytes, size_t esize,
                                          int commutative, const redcoll_options *resolved) {
    return redcoll__select_model_at(coll, p, bytes, esize, commutative, resolved, NULL, NULL);
}

/* AUTO as a call (or one level of a hierarchical call) asks for it: the
   papers' selectors as redcoll_select; the model prices the call's elements
   (not bytes) and, for allgatherv and reduce_scatter, their counts (the same
   on every rank, so every rank picks the same row; p above the walks' limit:
   as even counts). */
static redcoll_algo redcoll__select_for(const redcoll__ctx *c, redcoll_coll coll, int p, size_t bytes,
                                        const size_t *counts) {
    size_t displs[REDCOLL__WALK_MAX_P + 1];
    int i;
    if (c->o.selector != REDCOLL_SELECTOR_DEFAULT && c->o.selector != REDCOLL_SELECTOR_MODEL)
        return redcoll_select(coll, p, bytes, c->op.commutative, &c->o);
    if ((coll != REDCOLL_COLL_ALLGATHERV && coll != REDCOLL_COLL_REDUCE_SCATTER) || !counts ||
        p > REDCOLL__WALK_MAX_P)
        return redcoll__select_model_at(coll, p, bytes, c->esize, c->op.commutative, &c->o, NULL, &c->shape);
    for (displs[0] = 0, i = 0; i < p; ++i) displs[i + 1] = displs[i] + counts[i];
    return redcoll__select_model_at(coll, p, bytes, c->esize, c->op.commutative, &c->o, displs, &c->shape);
}

/* ---- the papers' rules ----------------------------------------------------------
   Short vectors favour few rounds; the rules per collective follow the papers'
   section 4. */

/* MPICH's cutoffs (Thakur, Rabenseifner & Gropp 2005, section 4; the same
   values as MPICH's MPIR_CVAR_*_MSG_SIZE defaults). */
#define REDCOLL__MPICH_ALLGATHER_SHORT   ((size_t)81920)  /* 4.1: Bruck below 80 KB total, p not 2^k */
#define REDCOLL__MPICH_ALLGATHER_LONG    ((size_t)524288) /* 4.1: recursive doubling below 512 KB, p = 2^k */
#define REDCOLL__MPICH_BCAST_SHORT       ((size_t)12288)  /* 4.2: binomial below 12 KB ... */
#define REDCOLL__MPICH_BCAST_MIN_PROCS   8                /* ... or below 8 ranks */
#define REDCOLL__MPICH_BCAST_LONG        ((size_t)524288) /* 4.2: scatter + ring allgather from 512 KB */
#define REDCOLL__MPICH_ALLTOALL_SHORT    ((size_t)256)    /* 4.3: Bruck up to 256 B per block */
#define REDCOLL__MPICH_ALLTOALL_MEDIUM   ((size_t)32768)  /* 4.3: scattered up to 32 KB per block */
#define REDCOLL__MPICH_REDSCAT_COMM_LONG ((size_t)524288) /* 4.4: recursive halving below 512 KB */
#define REDCOLL__MPICH_REDSCAT_NONCOMM_SHORT ((size_t)512) /* 4.4: recursive doubling below 512 B */
#define REDCOLL__MPICH_REDUCE_SHORT      ((size_t)2048)   /* 4.5: binomial reduce up to 2 KB */
#define REDCOLL__MPICH_ALLREDUCE_SHORT   ((size_t)2048)   /* 4.5: recursive doubling up to 2 KB */

/* MPICH paper 4.5, for REDCOLL_SELECTOR_MPICH: reduce is binomial up to 2 KB
   and for user ops, Rabenseifner's reduce-scatter + gather above; allreduce
   is recursive doubling up to 2 KB and for user ops, Rabenseifner's
   reduce-scatter + allgather above. The selector sees only commutativity,
   so it takes non-commutative ops for the user ops (every predefined op is
   commutative) and treats commutative user ops as predefined. */
static redcoll_algo redcoll__select_mpich_reductions(redcoll_coll coll, size_t bytes,
                                                     int commutative) {
    if (coll == REDCOLL_COLL_REDUCE)
        return bytes > REDCOLL__MPICH_REDUCE_SHORT && commutative ? REDCOLL_ALGO_HALVING_DOUBLING
                                                                : REDCOLL_ALGO_BINOMIAL;
    return bytes > REDCOLL__MPICH_ALLREDUCE_SHORT && commutative ? REDCOLL_ALGO_HALVING_DOUBLING
                                                               : REDCOLL_ALGO_RECURSIVE_DOUBLING;
}

/* Allreduce / reduce, Rabenseifner 2004 section 4 (Cray T3E, Fig. 4 and 5),
   MPICH paper 5.4. */
#define REDCOLL__SELECT_TINY_BYTES     ((size_t)32)    /* <= : recursive doubling (allreduce) */
#define REDCOLL__SELECT_SHORT_BYTES    ((size_t)1024)  /* <= : binary tree off powers of two */
#define REDCOLL__SELECT_RING_MAX_P     32              /* <  : ring for long vectors, p not 2^k */
#define REDCOLL__SELECT_RING_MIN_BYTES ((size_t)65536) /* >= : "for 15 processes, ring if >= 64 KB" */
#define REDCOLL__SELECT_BB_MIN_P       32              /* >  : binary blocks may pay off */
#define REDCOLL__SELECT_BB_MIN_BYTES   ((size_t)16384) /* >= : binary blocks may pay off */

/* delta_expo_max: the largest gap between consecutive exponents of p's
   binary representation (Rabenseifner 2004 footnote 2; 100 = 2^6+2^5+2^2: 3). */
static int redcoll__delta_expo_max(int p) {
    int bit, last = -1, d = 0;
    for (bit = 30; bit >= 0; --bit)
        if (p & (1 << bit)) {
            if (last >= 0 && last - bit > d) d = last - bit;
            last = bit;
        }
    return d;
}

/* The paper's rule for binary blocks: delta_expo_max < lg(bytes)/2 - 2.5,
   i.e. bytes > 2^(2 delta + 5), with >= 16 KB and more than 32 ranks. */
static int redcoll__binary_blocks_pay(int p, size_t bytes) {
    int shift = 2 * redcoll__delta_expo_max(p) + 5;
    if (p <= REDCOLL__SELECT_BB_MIN_P || bytes < REDCOLL__SELECT_BB_MIN_BYTES) return 0;
    return shift < (int)(8 * sizeof(size_t)) - 1 && bytes > ((size_t)1 << shift);
}

/* Allreduce and reduce on the paper path: recursive doubling for the
   shortest vectors, binary tree for short ones off powers of two, ring for
   long vectors on small non-power-of-two p, binary blocks where its block
   imbalance is small enough, else halving_doubling (the paper's long-vector
   algorithm; for p = 2^k it is what binary blocks would do). */
static redcoll_algo redcoll__select_rabenseifner(redcoll_coll coll, int p, size_t bytes) {
    int pof2 = (p & (p - 1)) == 0;
    if (bytes <= REDCOLL__SELECT_TINY_BYTES)
        return coll == REDCOLL_COLL_ALLREDUCE ? REDCOLL_ALGO_RECURSIVE_DOUBLING
                                              : REDCOLL_ALGO_BINARY_TREE;
    if (bytes <= REDCOLL__SELECT_SHORT_BYTES) {
        if (!pof2) return REDCOLL_ALGO_BINARY_TREE;
        return coll == REDCOLL_COLL_ALLREDUCE ? REDCOLL_ALGO_RECURSIVE_DOUBLING
                                              : REDCOLL_ALGO_BINARY_TREE;
    }
    if (!pof2 && p < REDCOLL__SELECT_RING_MAX_P && bytes >= REDCOLL__SELECT_RING_MIN_BYTES)
        return REDCOLL_ALGO_RING;
    if (!pof2 && redcoll__binary_blocks_pay(p, bytes)) return REDCOLL_ALGO_BINARY_BLOCKS;
    return REDCOLL_ALGO_HALVING_DOUBLING;
}

REDCOLL_API redcoll_algo redcoll_select(redcoll_coll coll, int p, size_t bytes,
                                        int commutative, const redcoll_options *opts) {
    int pof2 = p >= 1 && redcoll__pof2_floor(p) == p;
    redcoll_algo algo;
    if (!opts || opts->selector == REDCOLL_SELECTOR_DEFAULT || opts->selector == REDCOLL_SELECTOR_MODEL) {
        redcoll_options o = redcoll_options_resolved(opts);
        if ((int)coll < 0 || coll >= REDCOLL_COLL_COUNT || p < 1) return REDCOLL_ALGO_AUTO;
        return redcoll__select_model(coll, p, bytes, 1, commutative, &o);
    }
    if (opts->selector == REDCOLL_SELECTOR_MPICH &&
        (coll == REDCOLL_COLL_ALLREDUCE || coll == REDCOLL_COLL_REDUCE))
        return redcoll__select_mpich_reductions(coll, bytes, commutative);
    switch (coll) {
    case REDCOLL_COLL_ALLREDUCE: case REDCOLL_COLL_REDUCE:
        algo = redcoll__select_rabenseifner(coll, p, bytes);
        /* never an order-breaking schedule for a non-commutative op */
        if (!commutative && !redcoll_algo_keeps_order(coll, algo)) algo = REDCOLL_ALGO_BINARY_TREE;
        return algo;
    case REDCOLL_COLL_GATHER: case REDCOLL_COLL_SCATTER:
        return REDCOLL_ALGO_BINOMIAL;
    case REDCOLL_COLL_ALLGATHER: case REDCOLL_COLL_ALLGATHERV: {
        size_t total = coll == REDCOLL_COLL_ALLGATHER ? bytes * (size_t)(p > 0 ? p : 1) : bytes;
        if (pof2 && total < REDCOLL__MPICH_ALLGATHER_LONG) return REDCOLL_ALGO_RECURSIVE_DOUBLING;
        if (!pof2 && total < REDCOLL__MPICH_ALLGATHER_SHORT) return REDCOLL_ALGO_BRUCK;
        return REDCOLL_ALGO_RING;
    }
    case REDCOLL_COLL_BCAST: /* MPICH also asks for p = 2^k before recursive doubling */
        if (bytes < REDCOLL__MPICH_BCAST_SHORT || p < REDCOLL__MPICH_BCAST_MIN_PROCS)
            return REDCOLL_ALGO_BINOMIAL;
        return pof2 && bytes < REDCOLL__MPICH_BCAST_LONG ? REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING
                                                        : REDCOLL_ALGO_SCATTER_RING;
    case REDCOLL_COLL_ALLTOALL:
        if (bytes <= REDCOLL__MPICH_ALLTOALL_SHORT) return REDCOLL_ALGO_BRUCK;
        return bytes <= REDCOLL__MPICH_ALLTOALL_MEDIUM ? REDCOLL_ALGO_SCATTERED
                                                      : REDCOLL_ALGO_PAIRWISE;
    case REDCOLL_COLL_REDUCE_SCATTER: case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        if (commutative)
            return bytes < REDCOLL__MPICH_REDSCAT_COMM_LONG ? REDCOLL_ALGO_RECURSIVE_HALVING
                                                           : REDCOLL_ALGO_PAIRWISE;
        return bytes < REDCOLL__MPICH_REDSCAT_NONCOMM_SHORT ? REDCOLL_ALGO_RECURSIVE_DOUBLING
                                                           : REDCOLL_ALGO_PAIRWISE;
    case REDCOLL_COLL_BARRIER: return REDCOLL_ALGO_DISSEMINATION;
    default: return REDCOLL_ALGO_AUTO;
    }
}

/* ==== 13. Setup and execute [SECTION:setup] ================================
   A call checked and resolved once (redcoll__setup), run (redcoll__execute)
   once or many times (plans); its scratch measured by a dry run. */

static int redcoll__transport_ok(const redcoll_transport *t) {
    if (!t || !t->send || !t->recv || !t->sendrecv) return 0;
    if (t->size < 1 || t->size > REDCOLL_MAX_RANKS || t->rank < 0 || t->rank >= t->size) return 0;
    return (t->isend && t->irecv && t->waitall) || (!t->isend && !t->irecv && !t->waitall);
}

static int redcoll__options_ok(const redcoll_options *o) {
    if (!o) return 1;
    if (!o->allocator.alloc_fn != !o->allocator.free_fn) return 0;
    if (o->groups < 0 || o->ranks_per_node < 0) return 0;
    if ((int)o->algo < 0 || o->algo >= REDCOLL_ALGO_COUNT) return 0;
    if ((int)o->inner_algo < 0 || o->inner_algo >= REDCOLL_ALGO_COUNT) return 0;
    if ((int)o->outer_algo < 0 || o->outer_algo >= REDCOLL_ALGO_COUNT) return 0;
    if ((int)o->selector < 0 || o->selector > REDCOLL_SELECTOR_PAPERS) return 0;
    return o->model.alpha >= 0 && o->model.beta >= 0 && o->model.gamma >= 0 &&
           o->model.f_alpha >= 0 && o->model.f_beta >= 0 && o->model.inter_alpha >= 0 &&
           o->model.inter_beta >= 0;
}

/* n * size without overflow; two factors below 2^(half the bits) never
   overflow, so the usual call needs no division. */
static int redcoll__mul_ok(size_t n, size_t size) {
    if ((n | size) <= (size_t)-1 >> (4 * sizeof(size_t))) return 1;
    return size == 0 || n <= (size_t)-1 / size;
}

/* Sum of the p counts of an irregular collective and of those before rank
   `me`; 0 on overflow. */
static int redcoll__sum_counts(const size_t *counts, int p, int me, size_t *total, size_t *before) {
    int i;
    *total = 0;
    for (i = 0; i < p; ++i) {
        if (i == me) *before = *total;
        if (counts[i] > (size_t)-1 - *total) return 0;
        *total += counts[i];
    }
    return 1;
}

/* ---- one setup step, one execute step ----------------------------------------
   Every entry point describes its call (redcoll__desc) and hands it to
   redcoll__setup, which checks everything and resolves everything into a
   redcoll__call -- the transport, type, op, options, counts and their
   overflow, root, buffers and every IN_PLACE form, the algorithm (the
   hierarchical levels included) and the tag -- without writing a buffer,
   allocating or sending. redcoll__execute then makes the call's one
   pre-copy and runs the schedule. So an argument error can never leave a
   buffer half written, and a persistent plan is a redcoll__call kept with
   its scratch: setup once, execute many times. */

/* One collective call as its entry point received it. */
typedef struct redcoll__desc {
    redcoll_coll             coll;
    const redcoll_transport *t;
    const void              *sbuf;   /* may be REDCOLL_IN_PLACE */
    void                    *rbuf;   /* bcast: the buffer; scatter: may be REDCOLL_IN_PLACE */
    size_t                   count;  /* elements: the vector, or one block */
    const size_t            *counts; /* irregular collectives: one count per rank */
    redcoll_dtype            dtype;
    const redcoll_op        *op;     /* NULL: the collective does not reduce */
    int                      root;
    const redcoll_options   *opts;
} redcoll__desc;

/* One call, checked and resolved: what execute needs and nothing more. */
typedef struct redcoll__call {
    redcoll__ctx        c;
    redcoll__args       a;
    const redcoll__row *row;
    const void         *pre_src; /* execute first copies pre_n elements pre_src -> pre_dst */
    void               *pre_dst;
    size_t              pre_n;
    size_t              bytes;   /* the largest vector: the whole input of block collectives */
    int                 empty;   /* nothing to move: execute returns OK at once */
    redcoll__xsum       exact;   /* REDCOLL_OP_SUM_EXACT only ([SECTION:exact]); last: setup
                                    zeroes it only for that op */
} redcoll__call;

static redcoll__desc redcoll__describe(redcoll_coll coll, const redcoll_transport *t,
                                       const void *sbuf, void *rbuf, size_t count,
                                       const size_t *counts, redcoll_dtype dtype,
                                       const redcoll_op *op, int root, const redcoll_options *opts) {
    redcoll__desc d;
    d.coll = coll; d.t = t; d.sbuf = sbuf; d.rbuf = rbuf; d.count = count; d.counts = counts;
    d.dtype = dtype; d.op = op; d.root = root; d.opts = opts;
    return d;
}

static int redcoll__writable(const void *buf) { return buf && buf != REDCOLL_IN_PLACE; }

/* The nodes AUTO prices a call on: with a model whose links between nodes
   differ, the transport's node_of (blocks of opts.ranks_per_node without
   it), grouped as the node-aware schedules group them where one pass
   tells (node ids that never decrease with the rank, or runs for a
   non-commutative op: exact); other maps are priced as nodes of rank 0's
   size. Otherwise, or without node information, one node (node_of is not
   called). */
static redcoll__shape redcoll__shape_of_call(const redcoll__ctx *c) {
    const redcoll_cost_model *m = &c->o.model;
    redcoll__shape sh;
    int p = c->size, r, prev = 0, id, first_id = 0, k0 = 0, run = 0, sorted = 1;
    sh = redcoll__shape_of(p, c->t->node_of ? 0 : c->o.ranks_per_node);
    if (!c->t->node_of || (redcoll__inter_alpha(m) == m->alpha && redcoll__inter_beta(m) == m->beta)) return sh;
    sh.nodes = 0; sh.kmax = 0; sh.kmin = p;
    for (r = 0; r < p; ++r) {
        id = c->t->node_of(c->t->user, r);
        if (r == 0) first_id = id;
        k0 += id == first_id;
        if (r > 0 && id < prev) sorted = 0;
        if (r > 0 && id != prev) { /* a run ends */
            sh.nodes++;
            if (run > sh.kmax) sh.kmax = run;
            if (run < sh.kmin) sh.kmin = run;
            run = 0;
        }
        prev = id;
        run++;
    }
    sh.nodes++;
    if (run > sh.kmax) sh.kmax = run;
    if (run < sh.kmin) sh.kmin = run;
    if (!sorted && c->op.commutative) sh = redcoll__shape_of(p, k0);
    return sh;
}

/* The levels of a hierarchical row: the reduce (bcast) inside the groups,
   the collective among the leaders and, for allreduce, the bcast back down;
   each valid for its level and for the op. */
static redcoll_result redcoll__setup_levels(redcoll__ctx *c, size_t bytes) {
    redcoll_coll coll = c->coll, in = coll == REDCOLL_COLL_BCAST ? coll : REDCOLL_COLL_REDUCE;
    redcoll_algo inner = redcoll__level_algo(c, in, c->o.inner_algo, c->o.outer_algo, c->size, bytes);
    redcoll_algo outer = redcoll__level_algo(c, coll, c->o.outer_algo, c->o.inner_algo, c->size, bytes);
    redcoll_result r = redcoll__level_ok(c, in, inner);
    if (r == REDCOLL_OK) r = redcoll__level_ok(c, coll, outer);
    if (r != REDCOLL_OK) return r;
    c->inner = redcoll__find(in, inner);
    c->outer = redcoll__find(coll, outer);
    if (coll == REDCOLL_COLL_ALLREDUCE) {
        redcoll_algo down = redcoll__level_algo(c, REDCOLL_COLL_BCAST, inner, REDCOLL_ALGO_AUTO, c->size, bytes);
        if (down == REDCOLL_ALGO_AUTO)
            down = redcoll__level_algo(c, REDCOLL_COLL_BCAST, REDCOLL_ALGO_AUTO, REDCOLL_ALGO_AUTO, c->size, bytes);
        c->down = redcoll__find(REDCOLL_COLL_BCAST, down);
    }
    return REDCOLL_OK;
}

/* The algorithm: opts.algo or the selector's, valid for the collective and
   the op; `bytes` is what the selector sees. */
static redcoll_result redcoll__setup_algo(redcoll__call *call, size_t bytes, const size_t *counts) {
    redcoll__ctx *c = &call->c;
    redcoll_algo algo = c->o.algo;
    if (algo == REDCOLL_ALGO_AUTO) algo = redcoll__select_for(c, c->coll, c->size, bytes, counts);
    call->row = redcoll__find(c->coll, algo);
    if (!call->row) return REDCOLL_ERR_INVALID_ARG;
    if (!c->op.commutative && !call->row->info.keeps_order) return REDCOLL_ERR_UNSUPPORTED;
    call->a.variant = call->row->variant;
    return call->row->knobs & REDCOLL__KNOB_LEVELS ? redcoll__setup_levels(c, bytes) : REDCOLL_OK;
}

/* The buffer rules of each collective and its IN_PLACE forms, resolved into
   the schedule's arguments and the pre-copy. n: elements of the vector (the
   total for irregular collectives; one block for the block collectives);
   mine, before: this rank's count of an irregular collective and the sum of
   those before it. */
static redcoll_result redcoll__setup_buffers(redcoll__call *call, const redcoll__desc *d, size_t n,
                                             size_t mine, size_t before) {
    redcoll__ctx *c = &call->c;
    redcoll__args *a = &call->a;
    const void *sbuf = d->sbuf;
    void *rbuf = d->rbuf;
    int root = c->rank == d->root, in_place = sbuf == REDCOLL_IN_PLACE;
    switch (d->coll) { /* the checks */
    case REDCOLL_COLL_ALLREDUCE: case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
    case REDCOLL_COLL_ALLGATHER: case REDCOLL_COLL_ALLTOALL:
        if (n && (!sbuf || !redcoll__writable(rbuf))) return REDCOLL_ERR_INVALID_ARG;
        break;
    case REDCOLL_COLL_REDUCE: case REDCOLL_COLL_GATHER:
        if (n && (!sbuf || (root && !redcoll__writable(rbuf)))) return REDCOLL_ERR_INVALID_ARG;
        if (in_place && !root) return REDCOLL_ERR_INVALID_ARG;
        break;
    case REDCOLL_COLL_REDUCE_SCATTER: /* in place, rbuf holds all n inputs */
        if (n && !sbuf) return REDCOLL_ERR_INVALID_ARG;
        if ((mine || (in_place && n)) && !redcoll__writable(rbuf)) return REDCOLL_ERR_INVALID_ARG;
        break;
    case REDCOLL_COLL_ALLGATHERV:
        if ((n && !redcoll__writable(rbuf)) || (mine && !sbuf)) return REDCOLL_ERR_INVALID_ARG;
        break;
    case REDCOLL_COLL_BCAST:
        if (n && !redcoll__writable(rbuf)) return REDCOLL_ERR_INVALID_ARG;
        break;
    case REDCOLL_COLL_SCATTER:
        if (n && ((root && !redcoll__writable(sbuf)) || !rbuf)) return REDCOLL_ERR_INVALID_ARG;
        if (rbuf == REDCOLL_IN_PLACE && !root) return REDCOLL_ERR_INVALID_ARG;
        break;
    default:
        break;
    }
    call->empty = n == 0 && d->coll != REDCOLL_COLL_BARRIER;
    if (call->empty) return REDCOLL_OK;
    a->in_place = in_place;
    a->sbuf = in_place ? rbuf : sbuf;
    a->rbuf = rbuf;
    a->count = d->counts ? 0 : n;
    a->counts = d->counts;
    a->root = d->root;
    switch (d->coll) { /* where the input is, what is copied first */
    case REDCOLL_COLL_ALLREDUCE: /* the schedules read sbuf (rbuf in place) in their first step */
        break;
    case REDCOLL_COLL_REDUCE:
        a->rbuf = root ? rbuf : NULL;
        break;
    case REDCOLL_COLL_ALLGATHER: case REDCOLL_COLL_ALLGATHERV: /* own block in place in rbuf */
        if (d->coll == REDCOLL_COLL_ALLGATHER) { before = (size_t)c->rank * n; mine = n; }
        a->sbuf = redcoll__at(c, rbuf, before);
        call->pre_n = in_place ? 0 : mine;
        call->pre_dst = (void *)a->sbuf; call->pre_src = sbuf;
        break;
    case REDCOLL_COLL_GATHER:
        if (in_place) a->sbuf = redcoll__at(c, rbuf, (size_t)d->root * n);
        a->rbuf = root ? rbuf : NULL;
        break;
    case REDCOLL_COLL_SCATTER:
        a->in_place = rbuf == REDCOLL_IN_PLACE;
        a->sbuf = root ? sbuf : NULL;
        if (a->in_place) a->rbuf = redcoll__at(c, sbuf, (size_t)d->root * n);
        break;
    case REDCOLL_COLL_BCAST:
        a->sbuf = rbuf;
        break;
    default:
        break;
    }
    return REDCOLL_OK;
}

/* One step of the parameter hash (boost's hash_combine on both halves). */
static uint32_t redcoll__mix(uint32_t h, uint64_t v) {
    h ^= (uint32_t)v + 0x9e3779b9u + (h << 6) + (h >> 2);
    h ^= (uint32_t)(v >> 32) + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h;
}

static uint32_t redcoll__mix_double(uint32_t h, double v) {
    uint64_t bits;
    REDCOLL_MEMCPY(&bits, &v, sizeof bits);
    return redcoll__mix(h, bits);
}

/* The call's tag: ranks that disagree about the collective, the algorithm,
   the count, the data type, the op, the root, in place (where MPI wants it
   on every rank or none) or an option that shapes the messages use
   different tags, so their messages never match, and the transport's
   detector (the stream rule at REDCOLL_TAG_MAX) turns the wait into
   REDCOLL_ERR_MISMATCH instead of a wrong result. The row is exact; the
   rest is a 12-bit hash of the parameters the row reads. A user op hashes
   its commutative flag, not its function, whose address differs between
   processes. */
static int redcoll__call_tag(const redcoll__call *call, const redcoll__desc *d, size_t n) {
    const redcoll__ctx *c = &call->c;
    const redcoll_options *o = &c->o;
    unsigned knobs = call->row->knobs;
    uint32_t h = redcoll__mix(0, c->esize);
    int i, all_or_none = d->coll == REDCOLL_COLL_ALLREDUCE || d->coll == REDCOLL_COLL_REDUCE_SCATTER ||
                         d->coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK || d->coll == REDCOLL_COLL_ALLGATHER ||
                         d->coll == REDCOLL_COLL_ALLGATHERV || d->coll == REDCOLL_COLL_ALLTOALL;
    if (d->counts) for (i = 0; i < c->size; ++i) h = redcoll__mix(h, d->counts[i]);
    else h = redcoll__mix(h, n);
    h = redcoll__mix(h, (uint64_t)d->root);
    h = redcoll__mix(h, (uint64_t)d->dtype);
    h = redcoll__mix(h, d->op ? (uint64_t)d->op->kind << 1 | (uint64_t)(c->op.commutative != 0)
                              : (uint64_t)REDCOLL_OP_KIND_COUNT << 1);
    if (all_or_none) h = redcoll__mix(h, (uint64_t)(d->sbuf == REDCOLL_IN_PLACE));
    if (knobs & REDCOLL__KNOB_LEVELS) {
        const redcoll__row *lv[3];
        lv[0] = c->inner; lv[1] = c->outer; lv[2] = c->down;
        for (i = 0; i < 3; ++i) {
            h = redcoll__mix(h, lv[i] ? (uint64_t)(lv[i] - redcoll__rows) + 1 : 0);
            if (lv[i]) knobs |= lv[i]->knobs;
        }
        h = redcoll__mix(h, (uint64_t)o->by_node);
        h = redcoll__mix(h, (uint64_t)(o->groups < c->size ? o->groups : c->size));
    }
    if (knobs & REDCOLL__KNOB_NODES) { /* every level's row follows from the model */
        h = redcoll__mix_double(redcoll__mix_double(redcoll__mix_double(h, o->model.alpha), o->model.beta),
                                o->model.gamma);
        h = redcoll__mix_double(redcoll__mix_double(h, o->model.f_alpha), o->model.f_beta);
        h = redcoll__mix_double(redcoll__mix_double(h, redcoll__inter_alpha(&o->model)),
                                redcoll__inter_beta(&o->model));
        h = redcoll__mix(h, (uint64_t)o->ranks_per_node);
        h = redcoll__mix(h, o->transport_flags & REDCOLL_TRANSPORT_PEER_REDUCE);
    }
    if (knobs & REDCOLL__KNOB_SEGMENT) h = redcoll__mix(h, o->segment_bytes);
    if (!c->t->recv_reduce) h = redcoll__mix(h, redcoll__cut(c)); /* messages are cut */
    if (knobs & REDCOLL__KNOB_THRESHOLD) {
        h = redcoll__mix(h, o->threshold_bytes);
        h = redcoll__mix_double(redcoll__mix_double(redcoll__mix_double(h, o->model.alpha),
                                                    o->model.beta), o->model.gamma);
    }
    h ^= h >> 16; h *= 0x7feb352du; h ^= h >> 15; h *= 0x846ca68bu; h ^= h >> 16;
    return (int)(call->row - redcoll__rows + 1) << REDCOLL_TAG_ROW_SHIFT |
           (int)(h & REDCOLL__TAG_HASH_MASK) << REDCOLL__TAG_HASH_SHIFT;
}

static redcoll__call redcoll__no_call; /* zero, never written */

/* redcoll__setup clears a call up to these fields, so they must stay last:
   a field declared after one of them would go uncleared (a negative array
   size here, a compile error, says so). */
typedef char redcoll__ctx_options_last[offsetof(redcoll__ctx, o) + sizeof(redcoll_options) == sizeof(redcoll__ctx) ? 1 : -1];
typedef char redcoll__call_exact_last[offsetof(redcoll__call, exact) + sizeof(redcoll__xsum) == sizeof(redcoll__call) ? 1 : -1];

/* Checks and resolves the call d into *call (see above); touches nothing. */
static redcoll_result redcoll__setup(redcoll__call *call, const redcoll__desc *d) {
    redcoll__ctx *c = &call->c;
    const redcoll_transport *t = d->t;
    redcoll_coll coll = d->coll;
    size_t n = d->count, mine = 0, before = 0, bytes;
    int blocks = coll == REDCOLL_COLL_ALLGATHER || coll == REDCOLL_COLL_ALLTOALL ||
                 coll == REDCOLL_COLL_GATHER || coll == REDCOLL_COLL_SCATTER ||
                 coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    int rooted = coll == REDCOLL_COLL_REDUCE || coll == REDCOLL_COLL_BCAST ||
                 coll == REDCOLL_COLL_GATHER || coll == REDCOLL_COLL_SCATTER;
    redcoll_result r;
    /* zero all but the options (resolved below) and the exact sum's state
       (zeroed for that op); copies of zeros, which compilers keep as a few
       vector moves where a memset of this size becomes a slow string op */
    REDCOLL_MEMCPY(c, &redcoll__no_call.c, offsetof(redcoll__ctx, o));
    REDCOLL_MEMCPY(&call->a, &redcoll__no_call.a, offsetof(redcoll__call, exact) - offsetof(redcoll__call, a));
    /* the transport, the options, the type and the op */
    if (!redcoll__transport_ok(t) || !redcoll__options_ok(d->opts)) return REDCOLL_ERR_INVALID_ARG;
    c->t = t; c->rank = t->rank; c->size = t->size; c->coll = coll;
    c->dtype = d->dtype;
    c->esize = redcoll_dtype_size(d->dtype);
    if (c->esize == 0) return REDCOLL_ERR_INVALID_ARG;
    if (d->op) { /* a kernel found is a valid op (user ops have none): one look-up */
        c->kernel = redcoll__kernel_for(d->op->kind, d->dtype);
        if (!c->kernel && !redcoll__op_ok(d->op, d->dtype)) return REDCOLL_ERR_INVALID_ARG;
        c->op = *d->op;
        c->op.commutative = d->op->kind != REDCOLL_OP_USER || d->op->commutative;
    } else {
        c->op = redcoll_op_predefined(REDCOLL_OP_SUM);
    }
    redcoll__options_resolve(&c->o, d->opts);
    if (redcoll__xpair(c)) c->op.kind = REDCOLL_OP_SUM; /* c->kernel: the exact sum of two */
    if (t->recv_reduce) c->o.transport_flags |= t->flags & REDCOLL_TRANSPORT_PEER_REDUCE; /* the model reads it */
    c->shape = redcoll__shape_of_call(c);
    c->dry = (t->flags & REDCOLL_TRANSPORT_NO_DATA) != 0;
    /* the counts, without overflow */
    if (coll == REDCOLL_COLL_ALLGATHERV || coll == REDCOLL_COLL_REDUCE_SCATTER) {
        if (!d->counts || !redcoll__sum_counts(d->counts, c->size, c->rank, &n, &before))
            return REDCOLL_ERR_INVALID_ARG;
        mine = d->counts[c->rank];
    }
    if (blocks && !redcoll__mul_ok(c->esize, (size_t)c->size)) return REDCOLL_ERR_INVALID_ARG;
    if (!redcoll__mul_ok(n, c->esize * (blocks ? (size_t)c->size : 1))) return REDCOLL_ERR_INVALID_ARG;
    bytes = n * c->esize * (coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK ? (size_t)c->size : 1);
    call->bytes = n * c->esize * (blocks ? (size_t)c->size : 1);
    if (rooted && (d->root < 0 || d->root >= c->size)) return REDCOLL_ERR_INVALID_ARG;
    /* the algorithm, then the buffers */
    r = redcoll__setup_algo(call, bytes, d->counts);
    if (r != REDCOLL_OK) return r;
    c->tag = redcoll__call_tag(call, d, n);
    r = redcoll__setup_buffers(call, d, n, mine, before);
    if (r == REDCOLL_OK && !call->empty && c->op.kind == REDCOLL_OP_SUM_EXACT) {
        REDCOLL_MEMSET(&call->exact, 0, sizeof call->exact);
        r = redcoll__xsetup(&call->exact, c, d->sbuf, d->rbuf, n, d->counts, d->root);
    }
    return r;
}

/* Runs a call that setup accepted: the pre-copy, then the schedule (an
   irregular collective's prefix sums held as scratch around it). Can run
   again on the same call (a plan). */
static redcoll_result redcoll__execute(redcoll__call *call) {
    redcoll__ctx *c = &call->c;
    redcoll__args a = call->a;
    size_t bytes = sizeof(size_t) * ((size_t)c->size + 1), *d;
    redcoll_result r;
    int i;
    if (call->empty) return REDCOLL_OK;
    c->err = REDCOLL_OK;
    if (c->op.kind == REDCOLL_OP_SUM_EXACT) return redcoll__xexecute(&call->exact, c);
    redcoll__copy(c, call->pre_dst, call->pre_src, call->pre_n);
    if (!a.counts) return call->row->run(c, &a);
    d = (size_t *)redcoll__alloc_bytes(c, bytes);
    if (!d) return c->err;
    d[0] = 0;
    for (i = 0; i < c->size; ++i) d[i + 1] = d[i] + a.counts[i];
    a.displs = d;
    r = call->row->run(c, &a);
    redcoll__free_bytes(c, d, bytes);
    return r;
}

/* A collective inside a call (the exact sum's, [SECTION:exact]): from sbuf
   into buf, or in place on buf when sbuf is NULL (reduce, gather: the
   root's, the other ranks' buf is their input; count, or counts for
   reduce_scatter), with the call's options but algorithm `algo`, set up as
   a call of its own and run on the outer call's arena (a plan's block, the
   transport's, a measuring pass's), on top of what the outer call holds
   there; without one, the allocator. */
static redcoll_result redcoll__nested_from(redcoll__ctx *c, redcoll_coll coll, const void *sbuf, void *buf,
                                           size_t count, const size_t *counts, redcoll_dtype dtype,
                                           redcoll_op op, int root, redcoll_algo algo) {
    redcoll_options o = c->o;
    int rooted_away = (coll == REDCOLL_COLL_REDUCE || coll == REDCOLL_COLL_GATHER) && c->rank != root;
    redcoll__desc d;
    redcoll__call call;
    redcoll_result r;
    o.algo = algo;
    d = redcoll__describe(coll, c->t, rooted_away ? buf : sbuf ? sbuf : REDCOLL_IN_PLACE,
                          rooted_away ? NULL : buf, count, counts, dtype, &op, root, &o);
    r = redcoll__setup(&call, &d);
    if (r != REDCOLL_OK || call.empty) return r;
    call.c.arena = c->arena;
    return redcoll__execute(&call);
}

static redcoll_result redcoll__nested(redcoll__ctx *c, redcoll_coll coll, void *buf, size_t count,
                                      const size_t *counts, redcoll_dtype dtype, redcoll_op op,
                                      int root, redcoll_algo algo) {
    return redcoll__nested_from(c, coll, NULL, buf, count, counts, dtype, op, root, algo);
}

/* ---- measuring scratch, plans, the one-shot call -------------------------------
   The measuring pass runs execute on the recording transport ([SECTION:cost])
   standing in for the real one, so the schedule takes the same branches and
   makes the same allocations as a real run; the arena records their
   high-water mark. */
#define REDCOLL__MEASURE_CTL 4096 /* stack bytes for a measuring pass's control data */

/* Executes the call on transport t (which moves no data) with a measuring
   arena: vectors are never-touched addresses, control data real memory.
   *need gets the arena's high-water mark. */
static redcoll_result redcoll__execute_measuring(redcoll__call *call, const redcoll_transport *t,
                                                 size_t *need) {
    const redcoll_transport *was_t = call->c.t;
    redcoll__arena arena, *was_arena = call->c.arena;
    int was_dry = call->c.dry;
    redcoll_result r;
    union { char b[REDCOLL__MEASURE_CTL]; double align_d; void *align_p; long long align_l; } ctl;
    redcoll__arena_measuring(&arena, ctl.b, sizeof ctl.b);
    call->c.t = t; call->c.dry = 1; call->c.arena = &arena; /* the call itself, put back below */
    r = redcoll__execute(call);
    call->c.t = was_t; call->c.dry = was_dry; call->c.arena = was_arena;
    *need = arena.peak;
    return r;
}

/* The call's scratch need in bytes (the arena's high-water mark), or 0 with
   an error latched when control data could not be allocated. */
static redcoll_result redcoll__measure_pass(redcoll__call *call, size_t *need) {
    redcoll__rec dry;
    redcoll__rec_init(&dry, call->c.t->rank, call->c.t->size, call->c.t, NULL);
    return redcoll__execute_measuring(call, &dry.t, need);
}

/* The call's scratch need. The exact sum's pass runs its inner collectives
   at the largest round's shapes instead of its rounds (whose sizes depend
   on the data), so the need holds any run. */
static redcoll_result redcoll__measure(redcoll__call *call, size_t *need) {
    redcoll_result r;
    call->exact.sizing = call->c.op.kind == REDCOLL_OP_SUM_EXACT;
    r = redcoll__measure_pass(call, need);
    call->exact.sizing = 0;
    return r;
}

struct redcoll_plan {
    redcoll__call  call;
    redcoll__arena arena;
    void          *block;  /* the arena's memory, as allocated */
    struct redcoll_coll_request *nb; /* for redcoll_plan_start ([SECTION:nonblock]); NULL:
                                        its transport has no non-blocking progress */
    redcoll_result last;   /* the last run's result (redcoll_plan_wait) */
};

static redcoll_result redcoll__nb_plan_attach(redcoll__call *call, struct redcoll_coll_request **out);
static void redcoll__nb_plan_detach(struct redcoll_coll_request *q);
static int redcoll__nb_running(const struct redcoll_coll_request *q);

static redcoll_result redcoll__plan_make(const redcoll__desc *d, redcoll_plan **out) {
    redcoll__call call;
    redcoll_plan *pl;
    size_t need = 0, counts = 0;
    redcoll_result r;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    *out = NULL;
    r = redcoll__setup(&call, d);
    if (r == REDCOLL_OK && !call.empty) r = redcoll__measure(&call, &need);
    if (r != REDCOLL_OK) return r;
    if (call.a.counts) counts = sizeof(size_t) * (size_t)call.c.size;
    pl = (redcoll_plan *)redcoll__mem_alloc(&call.c.o.allocator, sizeof *pl + counts);
    if (!pl) return REDCOLL_ERR_OUT_OF_MEMORY;
    REDCOLL_MEMSET(pl, 0, sizeof *pl);
    pl->call = call;
    if (counts) { /* the plan's own copy, right after it */
        size_t *cp = (size_t *)(void *)(pl + 1);
        REDCOLL_MEMCPY(cp, call.a.counts, counts);
        pl->call.a.counts = cp;
    }
    if (need) {
        pl->block = redcoll__mem_alloc(&call.c.o.allocator, need + REDCOLL__ARENA_ALIGN - 1);
        if (!pl->block) { redcoll__mem_free(&call.c.o.allocator, pl); return REDCOLL_ERR_OUT_OF_MEMORY; }
        pl->arena.base = (char *)pl->block +
                         (REDCOLL__ARENA_ALIGN - (size_t)pl->block % REDCOLL__ARENA_ALIGN) % REDCOLL__ARENA_ALIGN;
        pl->arena.cap = need;
    }
    r = redcoll__nb_plan_attach(&pl->call, &pl->nb);
    if (r != REDCOLL_OK) { redcoll_plan_free(pl); return r; }
    *out = pl;
    return REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_plan_run(redcoll_plan *plan) {
    if (!plan || redcoll__nb_running(plan->nb)) return REDCOLL_ERR_INVALID_ARG;
    plan->arena.top = 0;
    plan->call.c.arena = &plan->arena;
    return plan->last = redcoll__execute(&plan->call);
}

REDCOLL_API void redcoll_plan_free(redcoll_plan *plan) {
    redcoll_allocator a;
    if (!plan) return;
    if (plan->nb) redcoll__nb_plan_detach(plan->nb);
    a = plan->call.c.o.allocator;
    if (plan->block) redcoll__mem_free(&a, plan->block);
    redcoll__mem_free(&a, plan);
}

REDCOLL_API redcoll_algo redcoll_plan_algo(const redcoll_plan *plan) {
    return plan ? plan->call.row->info.algo : REDCOLL_ALGO_AUTO;
}

REDCOLL_API size_t redcoll_plan_scratch_bytes(const redcoll_plan *plan) {
    return plan ? plan->arena.cap : 0;
}

/* A one-shot call whose vector is at most REDCOLL__SMALL_BYTES takes its
   scratch from REDCOLL__SMALL_ARENA bytes on the stack (what does not fit
   there comes from the allocator) and skips the measuring pass. */
#define REDCOLL__SMALL_BYTES ((size_t)256)
#define REDCOLL__SMALL_ARENA 2048

/* The one-shot call: setup, then execute. Small vectors use the stack arena;
   otherwise, with a transport `scratch` entry, the scratch is measured first
   and taken from the transport's block (a need of 0 asks for nothing);
   without one it comes from the allocator. On a transport that moves no
   data (the simulator at scale) the call runs as a measuring pass on that
   transport: it never touches a vector, so its vectors take no memory (p =
   65536 ranks of 8 MiB scratch would be 65536 untouched mallocs), while
   index arrays stay real and on_scratch reports the same bytes. The exact
   sum skips the stack arena (its round buffer does not fit there). */
static redcoll_result redcoll__once_run(redcoll__call *call);

static redcoll_result redcoll__once(redcoll_coll coll, const redcoll_transport *t, const void *sbuf,
                                    void *rbuf, size_t count, const size_t *counts,
                                    redcoll_dtype dtype, const redcoll_op *op, int root,
                                    const redcoll_options *opts) {
    redcoll__desc d = redcoll__describe(coll, t, sbuf, rbuf, count, counts, dtype, op, root, opts);
    redcoll__call call;
    redcoll_result r = redcoll__setup(&call, &d);
    if (r != REDCOLL_OK || call.empty) return r;
    return redcoll__once_run(&call);
}

/* The one-shot call's run, once setup accepted it (not empty). */
static redcoll_result redcoll__once_run(redcoll__call *call) {
    const redcoll_transport *t = call->c.t;
    redcoll__arena arena;
    size_t need = 0;
    redcoll_result r;
    REDCOLL_MEMSET(&arena, 0, sizeof arena);
    if (call->c.dry) return redcoll__execute_measuring(call, t, &need);
    if (call->bytes <= REDCOLL__SMALL_BYTES && call->c.op.kind != REDCOLL_OP_SUM_EXACT) {
        union { char b[REDCOLL__SMALL_ARENA]; double align_d; void *align_p; long long align_l; } small;
        arena.base = small.b; arena.cap = sizeof small.b;
        call->c.arena = &arena;
        return redcoll__execute(call);
    }
    if (!t->scratch) return redcoll__execute(call);
    r = redcoll__measure(call, &need);
    if (r != REDCOLL_OK) return r;
    if (need && need <= (size_t)-1 - REDCOLL__ARENA_ALIGN) {
        char *b = (char *)t->scratch(t->user, need + REDCOLL__ARENA_ALIGN - 1);
        if (b) {
            arena.base = b + (REDCOLL__ARENA_ALIGN - (size_t)b % REDCOLL__ARENA_ALIGN) % REDCOLL__ARENA_ALIGN;
            arena.cap = need;
        }
    }
    call->c.arena = &arena;
    return redcoll__execute(call);
}

/* ==== 14. Non-blocking collectives [SECTION:nonblock] ====================== */

/* ---- coroutines -------------------------------------------------------------
   A coroutine is a function running on a stack of its own, which it leaves
   and re-enters at the point where it left: the simulator runs each rank as
   one, and a non-blocking collective runs its schedule as one (below).
   redcoll__coro_switch(from, to) saves the callee-saved registers and the
   floating-point control words on the current stack, stores the stack
   pointer in `from` and resumes `to`; a new stack starts in
   redcoll__coro_tramp, which calls redcoll__coro_entry(coro). On x86-64
   (System V, so not Windows; GCC 8+ or Clang) that is a few instructions;
   elsewhere ucontext (glibc, FreeBSD, or REDCOLL_CORO_UCONTEXT defined),
   whose swapcontext also saves the signal mask: a system call per switch.
   Without either REDCOLL__CORO is 0: non-blocking collectives then run to
   completion when started, and the simulator does not compile. Naked
   static functions (not top-level asm) keep each translation unit's copy
   its own, with LTO too. AddressSanitizer and ThreadSanitizer are told of
   every switch. The coroutine running on this thread is redcoll__coro_now
   (NULL: the thread's own stack, whose context is redcoll__coro_base). */
#if defined(REDCOLL_CORO_UCONTEXT)
#define REDCOLL__CORO 2
#elif defined(__x86_64__) && !defined(_WIN32) && \
    (defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8))
#define REDCOLL__CORO 1
#elif defined(__GLIBC__) || defined(__FreeBSD__)
#define REDCOLL__CORO 2
#else
#define REDCOLL__CORO 0
#endif
#if REDCOLL__CORO == 2
#include <ucontext.h>
#endif

#if defined(__cplusplus)
#define REDCOLL__TLS thread_local
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__STDC_NO_THREADS__)
#define REDCOLL__TLS _Thread_local
#else
#define REDCOLL__TLS __thread
#endif

#if defined(__SANITIZE_ADDRESS__)
#define REDCOLL__CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDCOLL__CORO_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define REDCOLL__CORO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define REDCOLL__CORO_TSAN 1
#endif
#endif
#ifdef __cplusplus
extern "C" {
#endif
#ifdef REDCOLL__CORO_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
void __asan_poison_memory_region(void const volatile *addr, size_t size);
void __asan_unpoison_memory_region(void const volatile *addr, size_t size);
#endif
#ifdef REDCOLL__CORO_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif
#ifdef __cplusplus
}
#endif

/* Where a coroutine (or a thread's own stack) left off. */
typedef struct redcoll__coro {
#if REDCOLL__CORO == 1
    void                 *sp;
#elif REDCOLL__CORO == 2
    ucontext_t            uc;
#endif
    const void           *lo;         /* its stack (NULL for a thread's own until it is left) */
    size_t                size;
    void                (*fn)(void *); /* runs on it; never returns (it switches away last) */
    void                 *arg;
    struct redcoll__coro *from;       /* the context that switched to it last */
    void                 *asan_fake;
    void                 *tsan_fiber;
    int                   tsan_own;   /* tsan_fiber was made for it */
} redcoll__coro;

static REDCOLL__TLS redcoll__coro *redcoll__coro_now;
static REDCOLL__TLS redcoll__coro redcoll__coro_base;

/* The context running now: a coroutine, or this thread's own stack. */
static redcoll__coro *redcoll__coro_self(void) {
    return redcoll__coro_now ? redcoll__coro_now : &redcoll__coro_base;
}

#if REDCOLL__CORO == 1
__attribute__((naked, noinline)) static void redcoll__coro_jump(void **save __attribute__((unused)),
                                                               void *to __attribute__((unused))) {
    __asm__("pushq %rbp\n\t"
            "pushq %rbx\n\t"
            "pushq %r12\n\t"
            "pushq %r13\n\t"
            "pushq %r14\n\t"
            "pushq %r15\n\t"
            "subq $8, %rsp\n\t"
            "stmxcsr (%rsp)\n\t"
            "fnstcw 4(%rsp)\n\t"
            "movq %rsp, (%rdi)\n\t"
            "movq %rsi, %rsp\n\t"
            "ldmxcsr (%rsp)\n\t"
            "fldcw 4(%rsp)\n\t"
            "addq $8, %rsp\n\t"
            "popq %r15\n\t"
            "popq %r14\n\t"
            "popq %r13\n\t"
            "popq %r12\n\t"
            "popq %rbx\n\t"
            "popq %rbp\n\t"
            "ret\n\t");
}

__attribute__((naked, noinline)) static void redcoll__coro_tramp(void) {
    __asm__("movq %r12, %rdi\n\t"
            "callq *%r13\n\t"
            "ud2\n\t");
}
#endif

/* Runs in a context that has just been resumed: tells AddressSanitizer, and
   learns the bounds of a thread's stack the first time it is left. */
static void redcoll__coro_arrived(redcoll__coro *self) {
#ifdef REDCOLL__CORO_ASAN
    const void *lo;
    size_t size;
    __sanitizer_finish_switch_fiber(self->asan_fake, &lo, &size);
    if (self->from && !self->from->lo) { self->from->lo = lo; self->from->size = size; }
#else
    (void)self;
#endif
}

/* Leaves `from` (the running context) for `to`; `last` when from has ended
   for good (its stack may be reused). Returns when something switches back
   to from. */
static void redcoll__coro_switch(redcoll__coro *from, redcoll__coro *to, int last) {
    to->from = from;
    redcoll__coro_now = to == &redcoll__coro_base ? NULL : to;
#ifdef REDCOLL__CORO_ASAN
    __sanitizer_start_switch_fiber(last ? NULL : &from->asan_fake, to->lo, to->size);
#endif
#ifdef REDCOLL__CORO_TSAN
    if (!from->tsan_fiber) from->tsan_fiber = __tsan_get_current_fiber();
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    (void)last;
#if REDCOLL__CORO == 1
    redcoll__coro_jump(&from->sp, to->sp);
#elif REDCOLL__CORO == 2
    swapcontext(&from->uc, &to->uc);
#endif
    redcoll__coro_arrived(from);
}

static void redcoll__coro_entry(void *arg) {
    redcoll__coro *c = (redcoll__coro *)arg;
    redcoll__coro_arrived(c);
    c->fn(c->arg);
}

#if REDCOLL__CORO == 2
static void redcoll__coro_entry_uc(int hi, int lo) { /* makecontext passes ints */
    uintptr_t a = ((uintptr_t)(unsigned)hi << 16 << 16) | (uintptr_t)(unsigned)lo;
    redcoll__coro_entry((void *)a);
}
#endif

/* Prepares c to run fn(arg) on the `size` bytes of stack at lo when first
   switched to. fn must never return: it ends by switching away with last. */
static void redcoll__coro_make(redcoll__coro *c, char *lo, size_t size, void (*fn)(void *), void *arg) {
    char *top = lo + size;
    c->lo = lo; c->size = size; c->fn = fn; c->arg = arg; c->from = NULL;
    c->asan_fake = NULL;
#ifdef REDCOLL__CORO_ASAN
    __asan_unpoison_memory_region(lo, size); /* frames an earlier run left */
#endif
#ifdef REDCOLL__CORO_TSAN
    if (!c->tsan_own) { c->tsan_fiber = __tsan_create_fiber(0); c->tsan_own = 1; }
#endif
#if REDCOLL__CORO == 1
    { /* what redcoll__coro_jump pops: control words, r15, r14, r13, r12, rbx, rbp, return */
        uintptr_t *f = (uintptr_t *)(void *)((uintptr_t)(top - 80) & ~(uintptr_t)15);
        REDCOLL_MEMSET(f, 0, 80);
        f[0] = 0x1F80u | ((uintptr_t)0x037Fu << 32); /* default MXCSR and x87 control word */
        f[3] = (uintptr_t)redcoll__coro_entry;
        f[4] = (uintptr_t)c;
        f[7] = (uintptr_t)redcoll__coro_tramp;
        c->sp = f;
    }
#elif REDCOLL__CORO == 2
    {
        uintptr_t a = (uintptr_t)c;
        getcontext(&c->uc);
        c->uc.uc_stack.ss_sp = lo;
        c->uc.uc_stack.ss_size = (size_t)(top - lo);
        c->uc.uc_link = NULL;
        makecontext(&c->uc, (void (*)(void))redcoll__coro_entry_uc, 2, (int)(unsigned)(a >> 16 >> 16),
                    (int)(unsigned)(a & 0xFFFFFFFFu));
    }
#else
    (void)top;
#endif
}

/* Releases what redcoll__coro_make took besides the stack (ThreadSanitizer's
   fiber); call once the coroutine will not run again. */
static void redcoll__coro_unmake(redcoll__coro *c) {
#ifdef REDCOLL__CORO_TSAN
    if (c->tsan_own) __tsan_destroy_fiber(c->tsan_fiber);
#endif
    c->tsan_fiber = NULL;
    c->tsan_own = 0;
}

/* ---- the engine ---------------------------------------------------------------
   How a schedule written as one blocking function becomes a request: it runs
   as a coroutine on a stack of its own, over a transport made for the
   request (redcoll__nw_*). Where the blocking call would block, that
   transport posts the transfers with the real transport's isend / irecv /
   irecv_reduce and switches back to whoever resumed the schedule; a later
   test finds them complete (the transport's `test`) and switches back in,
   so the schedule continues exactly where it stopped, with the same
   arguments, the same messages in the same order and the same reductions:
   the results are the blocking call's bit for bit, and every schedule,
   present and future, is non-blocking without a line of its own.

   Why coroutines, not the alternatives. A schedule recorded as a list of
   transfers and replayed as they complete (libNBC) would need every
   schedule's control flow to be data: the pipelined, hierarchical and
   exact-sum schedules decide as they go (chunk counts, nested calls), so
   each would need a second form, which STYLE forbids. A progress thread
   per request (or per transport) costs a thread and a hand-off per step,
   and on a machine with no spare core it competes with the computation it
   should hide behind. A coroutine keeps the schedule as it is; a switch
   costs a few nanoseconds (ucontext: a system call), a start no more than a
   blocking call's setup plus one switch in and out, and a step of the
   schedule one post and a switch each way.

   Memory: a request holds its call (a few hundred bytes), its scratch
   (what the blocking call would take, measured the same way) and a stack of
   REDCOLL_NB_STACK bytes (64 KiB; a schedule touches a few KiB, the exact
   sum's nested calls most). Released one-shot requests keep their block for
   the next start (REDCOLL__NB_KEEP of them, default allocator only), so a
   program that repeats a call allocates nothing in steady state; a plan
   allocates its request at init, and a start only resets it. The lowest
   bytes of each stack hold a canary checked whenever the schedule switches
   out: a schedule that outgrew its stack stops the program (REDCOLL_ASSERT)
   instead of corrupting memory silently.

   Where progress happens: in redcoll_test, redcoll_wait, the starts and
   their plan forms, on the caller's thread; each moves every request
   outstanding on the same transport (views count as their parent), since a
   peer may be waiting in one request for this rank's step in another. A
   request waited for while it is the only one outstanding finishes with
   the transport's blocking calls (waitall on what it had posted, then
   send / recv / sendrecv / *_reduce directly): waited on at once, it costs
   what the blocking call costs. On the threads transport irecv_reduce
   reduces straight from the sender's buffer, as recv_reduce does, so the
   non-blocking form keeps the single pass over the incoming data.

   Requests apart: one-shot request n started on a transport (counted in
   the transport's redcoll_nbstate, the same on every rank since every rank
   starts them in the same order) tags every message with slot 1 + n % 6
   (bits 13-15; blocking calls use 0). Persistent requests (started plans,
   and starts that pass redcoll_options.persistent_id) are numbered apart,
   at init, in an id space of their own: MPI-4 matches persistent
   collectives by the order of their inits, and ranks may start them in any
   order, so a number taken at start would differ between ranks. They use
   slot 7 with their id modulo 64 in bits 16-21 (over a transport that keeps
   fewer than 22 tag bits they take one-shot slots at start, and are
   matched by start order). The stream (slot, and id) is the request's
   identity on the wire, its start or init number its identity here. A rank
   never has two requests of one stream running: one-shot request n begins
   only once its own request n - 6 has ended, a persistent one once the
   rank's older request of the same id has, so both ends of any pair of
   ranks finish all of the old request's transfers between them before
   posting the new one's, and FIFO matching per (source, tag) never mixes
   them, without asking any other rank. A start that finds its stream still
   held does not wait for it (that wait would be on peers, inside a start,
   and a peer may be waiting elsewhere for something this rank sends only
   later): it queues the request, which stays outstanding, and the progress
   passes (any test, wait or start on the transport) begin it once the
   holder has ended. The oldest outstanding request of all ranks is running
   on every rank that has not finished it, so queued requests never
   deadlock, and any number may be outstanding. (Persistent requests
   started out of order are safe as long as no two active at once share an
   id modulo 64: those two queue one behind the other on each rank, so they
   must be started in the same order everywhere.) */

#ifndef REDCOLL_NB_STACK
#define REDCOLL_NB_STACK ((size_t)64 << 10)
#endif
#define REDCOLL__NB_KEEP 16                       /* released blocks kept */
#define REDCOLL__NB_SLOT_BITS 3                   /* REDCOLL_TAG_SLOT_MASK's */
#define REDCOLL__NB_KEEP_BYTES ((size_t)64 << 20) /* larger blocks are freed */
#define REDCOLL__NB_CANARY 64

enum { REDCOLL__NB_IDLE = 0, REDCOLL__NB_RUNNING, REDCOLL__NB_DONE };

struct redcoll_coll_request {
    redcoll__call           *call;     /* &own, or the plan's call */
    redcoll__arena           arena;    /* one-shot: its scratch, in the block */
    const redcoll_transport *t;        /* the caller's transport */
    redcoll_nbstate         *home;     /* lists it while outstanding (the root transport's) */
    redcoll_coll_request    *prev, *next;
    unsigned long long       seq;      /* its start on t */
    int                      slot;     /* tag bits: slot, and a persistent request's id */
    int                      idmask;   /* the tag bits slot replaces */
    long long                pid;      /* persistent: its id (redcoll_persistent_id); 0: none */
    int                      state;    /* REDCOLL__NB_* */
    int                      queued;   /* running, but waiting for its slot: not begun */
    int                      blocking; /* the request's transport blocks (finishing alone) */
    redcoll_result           result;
    redcoll__coro            co;       /* the schedule */
    redcoll__coro           *caller;   /* who resumed it */
    char                    *stack;
    size_t                   stack_bytes;
    redcoll_request          pend[2];  /* the transfers of one blocking call */
    redcoll_request         *pendv;    /* what the schedule waits for: pend or a waitall's */
    int                      npend;
    redcoll_result           pend_res;
    redcoll_allocator        alloc;    /* the block's */
    void                    *block;    /* as allocated */
    size_t                   bytes;    /* usable from the request's address */
    /* not zeroed when the block is taken (filled before use): */
    redcoll_transport        w;        /* the request's: what the schedule calls */
    redcoll__call            own;      /* a one-shot request's call */
};

/* Released blocks of the default allocator, each taken and given back by one
   atomic exchange, a cache line each. A transport tries its own slot first
   (a hash of its state's address), so the ranks of a team on threads reuse
   their own blocks, still in their core's cache, and never contend for the
   slots. */
#if defined(__GNUC__) || defined(__clang__)
static struct { void *b; char pad[64 - sizeof(void *)]; } redcoll__nb_kept[REDCOLL__NB_KEEP];

static int redcoll__nb_kept_slot(const void *home) {
    return (int)((((uintptr_t)home >> 6) * (uintptr_t)0x9E3779B97F4A7C15ull) >> (sizeof(uintptr_t) * 8 - 4));
}
#endif

/* Slots a transport's tags keep apart (0: no non-blocking progress). */
static int redcoll__nb_slots(const redcoll_transport *t) {
    int bits = t->nb->tag_bits > 0 ? t->nb->tag_bits : 28, s = bits - REDCOLL_TAG_SLOT_SHIFT;
    if (s > REDCOLL__NB_SLOT_BITS) s = REDCOLL__NB_SLOT_BITS;
    return s > 0 ? (1 << s) - 1 : 0;
}

/* Persistent ids a transport's tags keep apart: 64 where the tags keep the
   id bits (slot 7 is theirs), else 0 (persistent requests are numbered by
   their start, as one-shot ones). */
static int redcoll__nb_ids(const redcoll_transport *t) {
    int bits = t->nb->tag_bits > 0 ? t->nb->tag_bits : 28;
    return bits >= 22 && redcoll__nb_slots(t) == 7 ? (REDCOLL_TAG_PID_MASK >> REDCOLL_TAG_PID_SHIFT) + 1 : 0;
}

static int redcoll__nb_capable(const redcoll_transport *t) {
    return REDCOLL__CORO && t->isend && t->irecv && t->waitall && t->test && t->nb &&
           (!t->recv_reduce || t->irecv_reduce) && redcoll__nb_slots(t) > 0;
}

/* The state that lists t's outstanding requests: its root transport's. */
static redcoll_nbstate *redcoll__nb_home(const redcoll_transport *t) {
    while (t->send == redcoll__gsend) t = ((const redcoll_group *)t->user)->parent;
    return t->nb;
}

/* ---- the request's transport: blocks by switching out ---- */

/* Waits for n posted transfers: blocking, with the transport's waitall;
   else back to the resumer until test finds them complete. */
static redcoll_result redcoll__nw_wait(redcoll_coll_request *q, redcoll_request *reqs, int n) {
    if (n == 0) return REDCOLL_OK;
    if (q->blocking) return q->t->waitall(q->t->user, n, reqs);
    q->pendv = reqs;
    q->npend = n;
    q->pend_res = REDCOLL_OK;
    redcoll__coro_switch(&q->co, q->caller, 0);
    return q->pend_res;
}

/* One blocking transfer of the schedule: a send to dst (>= 0) and/or a
   receive from src (>= 0) into rbuf or the consumer, in the request's slot. */
static redcoll_result redcoll__nw_xfer(redcoll_coll_request *q, int dst, const void *sbuf,
                                       size_t sbytes, int src, void *rbuf, size_t rbytes,
                                       const redcoll_consumer *into, int tag) {
    const redcoll_transport *t = q->t;
    redcoll_result r = REDCOLL_OK, w;
    int n = 0;
    tag = (tag & ~q->idmask) | q->slot;
    if (q->blocking) {
        if (into) return dst >= 0 ? t->sendrecv_reduce(t->user, dst, sbuf, sbytes, src, rbytes, tag, into)
                                  : t->recv_reduce(t->user, src, rbytes, tag, into);
        if (dst >= 0 && src >= 0) return t->sendrecv(t->user, dst, sbuf, sbytes, src, rbuf, rbytes, tag);
        return dst >= 0 ? t->send(t->user, dst, sbuf, sbytes, tag) : t->recv(t->user, src, rbuf, rbytes, tag);
    }
    if (dst >= 0 && (r = t->isend(t->user, dst, sbuf, sbytes, tag, &q->pend[n])) == REDCOLL_OK) ++n;
    if (src >= 0 && r == REDCOLL_OK) {
        r = into ? t->irecv_reduce(t->user, src, rbytes, tag, into, &q->pend[n])
                 : t->irecv(t->user, src, rbuf, rbytes, tag, &q->pend[n]);
        if (r == REDCOLL_OK) ++n;
    }
    if (r != REDCOLL_OK && n && t->abort) t->abort(t->user, r); /* what was posted ends too */
    w = redcoll__nw_wait(q, q->pend, n);
    return r != REDCOLL_OK ? r : w;
}

static redcoll_result redcoll__nw_send(void *u, int dst, const void *buf, size_t bytes, int tag) {
    if (dst < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__nw_xfer((redcoll_coll_request *)u, dst, buf, bytes, -1, NULL, 0, NULL, tag);
}

static redcoll_result redcoll__nw_recv(void *u, int src, void *buf, size_t bytes, int tag) {
    if (src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__nw_xfer((redcoll_coll_request *)u, -1, NULL, 0, src, buf, bytes, NULL, tag);
}

static redcoll_result redcoll__nw_sendrecv(void *u, int dst, const void *sbuf, size_t sbytes,
                                           int src, void *rbuf, size_t rbytes, int tag) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__nw_xfer((redcoll_coll_request *)u, dst, sbuf, sbytes, src, rbuf, rbytes, NULL, tag);
}

static redcoll_result redcoll__nw_recv_reduce(void *u, int src, size_t bytes, int tag,
                                              const redcoll_consumer *into) {
    if (src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__nw_xfer((redcoll_coll_request *)u, -1, NULL, 0, src, NULL, bytes, into, tag);
}

static redcoll_result redcoll__nw_sendrecv_reduce(void *u, int dst, const void *sbuf, size_t sbytes,
                                                  int src, size_t rbytes, int tag,
                                                  const redcoll_consumer *into) {
    if (dst < 0 || src < 0) return REDCOLL_ERR_TRANSPORT;
    return redcoll__nw_xfer((redcoll_coll_request *)u, dst, sbuf, sbytes, src, NULL, rbytes, into, tag);
}

static redcoll_result redcoll__nw_isend(void *u, int dst, const void *buf, size_t bytes, int tag,
                                        redcoll_request *req) {
    const redcoll_coll_request *q = (const redcoll_coll_request *)u;
    return q->t->isend(q->t->user, dst, buf, bytes, (tag & ~q->idmask) | q->slot, req);
}

static redcoll_result redcoll__nw_irecv(void *u, int src, void *buf, size_t bytes, int tag,
                                        redcoll_request *req) {
    const redcoll_coll_request *q = (const redcoll_coll_request *)u;
    return q->t->irecv(q->t->user, src, buf, bytes, (tag & ~q->idmask) | q->slot, req);
}

static redcoll_result redcoll__nw_waitall(void *u, int count, redcoll_request *reqs) {
    return redcoll__nw_wait((redcoll_coll_request *)u, reqs, count);
}

static void redcoll__nw_abort(void *u, redcoll_result why) {
    const redcoll_coll_request *q = (const redcoll_coll_request *)u;
    q->t->abort(q->t->user, why);
}

static int redcoll__nw_node_of(void *u, int rank) {
    const redcoll_coll_request *q = (const redcoll_coll_request *)u;
    return q->t->node_of(q->t->user, rank);
}

static void redcoll__nw_on_compute(void *u, size_t elems, size_t bytes) {
    const redcoll_coll_request *q = (const redcoll_coll_request *)u;
    q->t->on_compute(q->t->user, elems, bytes);
}

static void redcoll__nw_on_scratch(void *u, long long delta) {
    const redcoll_coll_request *q = (const redcoll_coll_request *)u;
    q->t->on_scratch(q->t->user, delta);
}

/* The request's transport: the caller's entries, each blocking one made to
   switch out; no scratch entry (the request brings its own). */
static void redcoll__nb_wrap(redcoll_coll_request *q) {
    const redcoll_transport *t = q->t;
    redcoll_transport *w = &q->w;
    REDCOLL_MEMSET(w, 0, sizeof *w);
    w->user = q; w->rank = t->rank; w->size = t->size;
    w->send = redcoll__nw_send; w->recv = redcoll__nw_recv; w->sendrecv = redcoll__nw_sendrecv;
    w->abort = t->abort ? redcoll__nw_abort : NULL;
    w->isend = redcoll__nw_isend; w->irecv = redcoll__nw_irecv; w->waitall = redcoll__nw_waitall;
    w->node_of = t->node_of ? redcoll__nw_node_of : NULL;
    w->on_compute = t->on_compute ? redcoll__nw_on_compute : NULL;
    w->on_scratch = t->on_scratch ? redcoll__nw_on_scratch : NULL;
    w->flags = t->flags;
    w->recv_reduce = t->recv_reduce ? redcoll__nw_recv_reduce : NULL;
    w->sendrecv_reduce = t->sendrecv_reduce ? redcoll__nw_sendrecv_reduce : NULL;
}

/* ---- running requests ---- */

static void redcoll__nb_link(redcoll_coll_request *q) {
    redcoll_nbstate *h = q->home;
    q->next = NULL;
    q->prev = (redcoll_coll_request *)h->tail;
    if (q->prev) q->prev->next = q; else h->head = q;
    h->tail = q;
}

static void redcoll__nb_unlink(redcoll_coll_request *q) {
    redcoll_nbstate *h = q->home;
    if (q->prev) q->prev->next = q->next; else h->head = q->next;
    if (q->next) q->next->prev = q->prev; else h->tail = q->prev;
    q->prev = q->next = NULL;
}

/* The pattern at the bottom of every request's stack. */
static const unsigned char redcoll__nb_canary[REDCOLL__NB_CANARY] = {
    0xA5, 0x5A, 0xC3, 0x3C, 0x96, 0x69, 0x0F, 0xF0, 0xA5, 0x5A, 0xC3, 0x3C, 0x96, 0x69, 0x0F, 0xF0,
    0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF1, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF1,
    0xA5, 0x5A, 0xC3, 0x3C, 0x96, 0x69, 0x0F, 0xF0, 0xA5, 0x5A, 0xC3, 0x3C, 0x96, 0x69, 0x0F, 0xF0,
    0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF1, 0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF1 };

static int redcoll__nb_canary_ok(const redcoll_coll_request *q) {
    return memcmp(q->stack, redcoll__nb_canary, REDCOLL__NB_CANARY) == 0;
}

static void redcoll__nb_body(void *arg) {
    redcoll_coll_request *q = (redcoll_coll_request *)arg;
    q->result = redcoll__execute(q->call);
    q->call->c.t = q->t; /* a plan runs on the caller's transport again */
    q->state = REDCOLL__NB_DONE;
    redcoll__coro_switch(&q->co, q->caller, 1);
}

/* Runs q's schedule from where it waits until it waits again or ends. */
static void redcoll__nb_resume(redcoll_coll_request *q) {
    redcoll__coro *here = redcoll__coro_self();
    q->caller = here;
    redcoll__coro_switch(here, &q->co, 0);
    REDCOLL_ASSERT(redcoll__nb_canary_ok(q)); /* else the schedule outgrew REDCOLL_NB_STACK */
    if (q->state == REDCOLL__NB_DONE) redcoll__nb_unlink(q);
}

/* Whether an older request of q's transport still holds q's slot (running,
   or queued itself: a slot's requests begin in start order). */
static int redcoll__nb_held(const redcoll_coll_request *q) {
    const redcoll_coll_request *o;
    for (o = q->prev; o; o = o->prev)
        if (o->t->nb == q->t->nb && o->slot == q->slot) return 1;
    return 0;
}

/* Begins q's schedule: runs it until it first waits. */
static void redcoll__nb_begin(redcoll_coll_request *q) {
    q->queued = 0;
    REDCOLL_MEMCPY(q->stack, redcoll__nb_canary, REDCOLL__NB_CANARY);
    redcoll__coro_make(&q->co, q->stack, q->stack_bytes, redcoll__nb_body, q);
    redcoll__nb_resume(q);
}

/* One pass over the requests outstanding at home: each whose transfers have
   completed runs on, each queued one whose slot came free begins. Returns 1
   if any did. */
static int redcoll__nb_pass(redcoll_nbstate *home) {
    redcoll_coll_request *q = (redcoll_coll_request *)home->head, *next;
    int moved = 0;
    for (; q; q = next) {
        next = q->next; /* only q itself can leave the list while it runs */
        if (q->queued) {
            if (redcoll__nb_held(q)) continue;
            redcoll__nb_begin(q);
            moved = 1;
            continue;
        }
        if (q->npend) {
            int done = 0;
            redcoll_result r = q->t->test(q->t->user, q->npend, q->pendv, &done);
            if (!done) continue;
            q->pend_res = r;
            q->npend = 0;
        }
        redcoll__nb_resume(q);
        moved = 1;
    }
    return moved;
}

/* Completes q: alone at home, with the blocking calls; else passing over
   every outstanding request until q has ended. */
static void redcoll__nb_finish(redcoll_coll_request *q) {
    while (q->state == REDCOLL__NB_RUNNING) {
        if (q->home->head == q && !q->next) {
            if (q->queued) redcoll__nb_begin(q); /* alone: its slot is free */
            if (q->state != REDCOLL__NB_RUNNING) break;
            q->blocking = 1;
            if (q->npend) {
                q->pend_res = q->t->waitall(q->t->user, q->npend, q->pendv);
                q->npend = 0;
            }
            redcoll__nb_resume(q); /* to its end: nothing switches out now */
            q->blocking = 0;
        } else {
            redcoll__nb_pass(q->home);
        }
    }
}

/* Starts q (its call set up, its transport wrapped): takes its stream (a
   persistent request: slot 7 and its id; else the next one-shot slot of its
   transport) and runs the schedule until it first waits; while an older
   request of this rank still holds that stream, q is queued instead, and
   the pass that finds it free begins it. A start never waits for peers. */
static void redcoll__nb_start(redcoll_coll_request *q) {
    redcoll_nbstate *mine = q->t->nb;
    int ids = redcoll__nb_ids(q->t);
    q->home = redcoll__nb_home(q->t);
    if (q->pid > 0 && ids) {
        q->seq = 0;
        q->slot = REDCOLL_TAG_SLOT_PERSISTENT | (int)((q->pid - 1) % ids) << REDCOLL_TAG_PID_SHIFT;
        q->idmask = REDCOLL_TAG_SLOT_MASK | REDCOLL_TAG_PID_MASK;
    } else {
        unsigned long long k = (unsigned long long)(redcoll__nb_slots(q->t) - (ids ? 1 : 0));
        q->seq = mine->starts++;
        q->slot = (int)(1 + q->seq % k) << REDCOLL_TAG_SLOT_SHIFT;
        q->idmask = REDCOLL_TAG_SLOT_MASK;
    }
    q->state = REDCOLL__NB_RUNNING;
    q->blocking = 0;
    q->npend = 0;
    q->result = REDCOLL_OK;
    q->call->c.t = &q->w;
    redcoll__nb_link(q);
    q->queued = redcoll__nb_held(q);
    if (!q->queued) redcoll__nb_begin(q);
}

/* ---- request memory ---- */

/* A request with `arena` bytes of scratch after it and, with `stack`, a
   coroutine stack of at least REDCOLL_NB_STACK bytes at the block's end;
   the default allocator's come from the kept blocks when one is large
   enough. NULL when memory ran out. */
static redcoll_coll_request *redcoll__nb_alloc(const redcoll_allocator *al, size_t arena, int stack,
                                               const void *home) {
    size_t head = redcoll__align_up(sizeof(redcoll_coll_request)), room = stack ? REDCOLL_NB_STACK : 0;
    size_t bytes, got = 0;
    redcoll_coll_request *q;
    char *mem = NULL;
    if (arena > (size_t)-1 / 2 - head - room) return NULL;
    bytes = head + redcoll__align_up(arena) + room;
#if defined(__GNUC__) || defined(__clang__)
    if (!al->alloc_fn) {
        int i, at = redcoll__nb_kept_slot(home);
        for (i = 0; i < REDCOLL__NB_KEEP && !mem; ++i) {
            char *b = (char *)__atomic_exchange_n(&redcoll__nb_kept[(at + i) % REDCOLL__NB_KEEP].b, NULL,
                                                  __ATOMIC_ACQ_REL);
            if (!b) continue;
            q = (redcoll_coll_request *)(void *)redcoll__align_up((size_t)b) ;
            if (q->bytes >= bytes) { mem = b; got = q->bytes; }
            else REDCOLL_FREE(b);
        }
    }
#endif
    if (!mem) {
        mem = (char *)redcoll__mem_alloc(al, bytes + REDCOLL__ARENA_ALIGN - 1);
        if (!mem) return NULL;
        got = bytes;
    }
    q = (redcoll_coll_request *)(void *)redcoll__align_up((size_t)mem);
    REDCOLL_MEMSET(q, 0, offsetof(redcoll_coll_request, w));
    q->alloc = *al;
    q->block = mem;
    q->bytes = got;
    q->arena.base = (char *)q + head;
    q->arena.cap = got - head - room;
    if (stack) {
        q->stack = (char *)q + got - room;
        q->stack_bytes = room;
    }
    return q;
}

/* Gives q's block back: kept for the next start (default allocator), else freed. */
static void redcoll__nb_release(redcoll_coll_request *q) {
    void *b = q->block;
    redcoll__coro_unmake(&q->co);
#if defined(__GNUC__) || defined(__clang__)
    if (!q->alloc.alloc_fn && q->stack && q->bytes <= REDCOLL__NB_KEEP_BYTES) {
        int i, at = redcoll__nb_kept_slot(q->home);
        for (i = 0; i < REDCOLL__NB_KEEP && b; ++i) /* a block pushed out tries the next slot */
            b = __atomic_exchange_n(&redcoll__nb_kept[(at + i) % REDCOLL__NB_KEEP].b, b, __ATOMIC_ACQ_REL);
        if (b) REDCOLL_FREE(b);
        return;
    }
#endif
    {
        redcoll_allocator a = q->alloc;
        redcoll__mem_free(&a, b);
    }
}

/* ---- one-shot requests, plans ---- */

/* redcoll_i<coll>: set up as the blocking call, measure its scratch as the
   blocking call would, then start it; a transport without non-blocking
   progress runs it here, as the blocking call. */
static redcoll_result redcoll__istart(const redcoll__desc *d, redcoll_coll_request **out) {
    redcoll__call call;
    redcoll_coll_request *q;
    size_t need = 0;
    int nb;
    redcoll_result r;
    if (!out) return REDCOLL_ERR_INVALID_ARG;
    *out = NULL;
    r = redcoll__setup(&call, d);
    if (r != REDCOLL_OK) return r;
    nb = !call.empty && redcoll__nb_capable(d->t);
    if (nb && !call.c.dry) {
        if (call.bytes <= REDCOLL__SMALL_BYTES && call.c.op.kind != REDCOLL_OP_SUM_EXACT) need = REDCOLL__SMALL_ARENA;
        else if ((r = redcoll__measure(&call, &need)) != REDCOLL_OK) return r;
    }
    q = redcoll__nb_alloc(&call.c.o.allocator, need, nb, nb ? redcoll__nb_home(d->t) : NULL);
    if (!q) return REDCOLL_ERR_OUT_OF_MEMORY;
    q->own = call;
    q->call = &q->own;
    q->t = d->t;
    q->pid = d->opts ? d->opts->persistent_id : 0;
    *out = q;
    if (!nb) {
        q->result = call.empty ? REDCOLL_OK : redcoll__once_run(q->call);
        q->state = REDCOLL__NB_DONE;
        return REDCOLL_OK;
    }
    if (call.c.dry) redcoll__arena_measuring(&q->arena, NULL, 0); /* vectors untouched, as blocking */
    q->call->c.arena = &q->arena;
    redcoll__nb_wrap(q);
    redcoll__nb_start(q);
    return REDCOLL_OK;
}

REDCOLL_API long long redcoll_persistent_id(const redcoll_transport *t) {
    return t && t->nb ? ++t->nb->persistent : 0;
}

REDCOLL_API redcoll_result redcoll_test(redcoll_coll_request *req, int *done) {
    if (!req || !done) return REDCOLL_ERR_INVALID_ARG;
    while (req->state == REDCOLL__NB_RUNNING && redcoll__nb_pass(req->home)) {}
    *done = req->state != REDCOLL__NB_RUNNING;
    return *done ? req->result : REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_wait(redcoll_coll_request *req) {
    if (!req) return REDCOLL_ERR_INVALID_ARG;
    redcoll__nb_finish(req);
    return req->result;
}

REDCOLL_API void redcoll_request_free(redcoll_coll_request *req) {
    if (!req) return;
    redcoll__nb_finish(req);
    redcoll__nb_release(req);
}

/* A plan's request (at init, when its transport has non-blocking progress):
   the plan's call and arena, a stack of its own. */
static redcoll_result redcoll__nb_plan_attach(redcoll__call *call, redcoll_coll_request **out) {
    redcoll_coll_request *q;
    *out = NULL;
    if (call->empty || !redcoll__nb_capable(call->c.t)) return REDCOLL_OK;
    q = redcoll__nb_alloc(&call->c.o.allocator, 0, 1, redcoll__nb_home(call->c.t));
    if (!q) return REDCOLL_ERR_OUT_OF_MEMORY;
    q->call = call;
    q->t = call->c.t;
    q->pid = redcoll_persistent_id(q->t); /* matched by init order, as MPI's persistent collectives */
    redcoll__nb_wrap(q);
    *out = q;
    return REDCOLL_OK;
}

static int redcoll__nb_running(const redcoll_coll_request *q) {
    return q && q->state == REDCOLL__NB_RUNNING;
}

/* Frees a plan's request (completing it first if it runs). */
static void redcoll__nb_plan_detach(redcoll_coll_request *q) {
    redcoll__nb_finish(q);
    redcoll__nb_release(q);
}

REDCOLL_API redcoll_result redcoll_plan_start(redcoll_plan *plan) {
    redcoll_coll_request *q;
    if (!plan) return REDCOLL_ERR_INVALID_ARG;
    q = plan->nb;
    if (!q) { /* no non-blocking progress: the run is the start */
        plan->last = redcoll_plan_run(plan);
        return REDCOLL_OK;
    }
    if (q->state == REDCOLL__NB_RUNNING) return REDCOLL_ERR_INVALID_ARG;
    plan->arena.top = 0;
    plan->call.c.arena = &plan->arena;
    redcoll__nb_start(q);
    return REDCOLL_OK;
}

REDCOLL_API redcoll_result redcoll_plan_test(redcoll_plan *plan, int *done) {
    redcoll_result r;
    if (!plan || !done) return REDCOLL_ERR_INVALID_ARG;
    if (!plan->nb || plan->nb->state != REDCOLL__NB_RUNNING) { *done = 1; return plan->last; }
    r = redcoll_test(plan->nb, done);
    if (*done) plan->last = r;
    return r;
}

REDCOLL_API redcoll_result redcoll_plan_wait(redcoll_plan *plan) {
    if (!plan) return REDCOLL_ERR_INVALID_ARG;
    if (plan->nb && plan->nb->state == REDCOLL__NB_RUNNING) plan->last = redcoll_wait(plan->nb);
    return plan->last;
}

/* ==== 15. Entry points [SECTION:entry] =================================== */

/* Every collective enters three ways, each from the same description: at
   once (redcoll__once), as a plan (redcoll__plan_make) or started
   (redcoll__istart). One list gives each collective's parameters and the
   description they make, so the 33 entry points cannot drift apart: the
   plan form appends `out`, the started form `req`. */
#define REDCOLL__UNPAREN(...) __VA_ARGS__
#define REDCOLL__T const redcoll_transport *t
#define REDCOLL__O const redcoll_options *opts
#define REDCOLL__ENTRY_LIST(X)                                                                     \
    X(allreduce, ALLREDUCE,                                                                        \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t count, redcoll_dtype dtype, redcoll_op op, \
       REDCOLL__O),                                                                                \
      (sbuf, rbuf, count, NULL, dtype, &op, 0, opts))                                              \
    X(reduce, REDUCE,                                                                              \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t count, redcoll_dtype dtype, redcoll_op op, \
       int root, REDCOLL__O),                                                                      \
      (sbuf, rbuf, count, NULL, dtype, &op, root, opts))                                           \
    X(reduce_scatter, REDUCE_SCATTER,                                                              \
      (REDCOLL__T, const void *sbuf, void *rbuf, const size_t *recvcounts, redcoll_dtype dtype,    \
       redcoll_op op, REDCOLL__O),                                                                 \
      (sbuf, rbuf, 0, recvcounts, dtype, &op, 0, opts))                                            \
    X(reduce_scatter_block, REDUCE_SCATTER_BLOCK,                                                  \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t recvcount, redcoll_dtype dtype,            \
       redcoll_op op, REDCOLL__O),                                                                 \
      (sbuf, rbuf, recvcount, NULL, dtype, &op, 0, opts))                                          \
    X(allgather, ALLGATHER,                                                                        \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t count, redcoll_dtype dtype, REDCOLL__O),   \
      (sbuf, rbuf, count, NULL, dtype, NULL, 0, opts))                                             \
    X(allgatherv, ALLGATHERV,                                                                      \
      (REDCOLL__T, const void *sbuf, void *rbuf, const size_t *counts, redcoll_dtype dtype,        \
       REDCOLL__O),                                                                                \
      (sbuf, rbuf, 0, counts, dtype, NULL, 0, opts))                                               \
    X(bcast, BCAST,                                                                                \
      (REDCOLL__T, void *buf, size_t count, redcoll_dtype dtype, int root, REDCOLL__O),            \
      (NULL, buf, count, NULL, dtype, NULL, root, opts))                                           \
    X(alltoall, ALLTOALL,                                                                          \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t count, redcoll_dtype dtype, REDCOLL__O),   \
      (sbuf, rbuf, count, NULL, dtype, NULL, 0, opts))                                             \
    X(gather, GATHER,                                                                              \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t count, redcoll_dtype dtype, int root,      \
       REDCOLL__O),                                                                                \
      (sbuf, rbuf, count, NULL, dtype, NULL, root, opts))                                          \
    X(scatter, SCATTER,                                                                            \
      (REDCOLL__T, const void *sbuf, void *rbuf, size_t count, redcoll_dtype dtype, int root,      \
       REDCOLL__O),                                                                                \
      (sbuf, rbuf, count, NULL, dtype, NULL, root, opts))                                          \
    X(barrier, BARRIER,                                                                            \
      (REDCOLL__T, REDCOLL__O),                                                                    \
      (NULL, NULL, 0, NULL, REDCOLL_UINT8, NULL, 0, opts))

#define REDCOLL__ENTRY_ONCE(name, COLL, params, desc)                                       \
    REDCOLL_API redcoll_result redcoll_##name params {                                      \
        return redcoll__once(REDCOLL_COLL_##COLL, t, REDCOLL__UNPAREN desc);                \
    }
#define REDCOLL__ENTRY_INIT(name, COLL, params, desc)                                       \
    REDCOLL_API redcoll_result redcoll_##name##_init(REDCOLL__UNPAREN params,               \
                                                     redcoll_plan **out) {                  \
        redcoll__desc d = redcoll__describe(REDCOLL_COLL_##COLL, t, REDCOLL__UNPAREN desc); \
        return redcoll__plan_make(&d, out);                                                 \
    }
#define REDCOLL__ENTRY_START(name, COLL, params, desc)                                      \
    REDCOLL_API redcoll_result redcoll_i##name(REDCOLL__UNPAREN params,                     \
                                               redcoll_coll_request **req) {                \
        redcoll__desc d = redcoll__describe(REDCOLL_COLL_##COLL, t, REDCOLL__UNPAREN desc); \
        return redcoll__istart(&d, req);                                                    \
    }

REDCOLL__ENTRY_LIST(REDCOLL__ENTRY_ONCE)
REDCOLL__ENTRY_LIST(REDCOLL__ENTRY_INIT)
REDCOLL__ENTRY_LIST(REDCOLL__ENTRY_START)

#endif /* REDCOLL_IMPLEMENTATION_DONE */
#endif /* REDCOLL_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 the redcoll authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
