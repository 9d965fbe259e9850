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
       REDCOLL_MALLOC/FREE   default allocator (default: malloc / free)
       REDCOLL_MEMCPY        copy routine (default: memcpy)

   CONTENTS
       1. Results, data types and operations
       2. Transport vtable and group views
       3. Options, algorithms and selection
       4. Collectives
       --- implementation ---
       5. Context, transport calls, scratch
       6. Reduction kernels
       7. Argument checks and dispatch
       8. Schedules, one bannered section per collective
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

/* ==== 1. Results, data types and operations ============================ */

typedef enum redcoll_result {
    REDCOLL_OK                =  0,
    REDCOLL_ERR_INVALID_ARG   = -1, /* caller's mistake; nothing was touched */
    REDCOLL_ERR_OUT_OF_MEMORY = -2,
    REDCOLL_ERR_TRANSPORT     = -3, /* a send/recv failed on this rank */
    REDCOLL_ERR_UNSUPPORTED   = -4, /* e.g. forced algorithm needs a commutative op */
    REDCOLL_ERR_TIMEOUT       = -5,
    REDCOLL_ERR_ABORTED       = -6, /* a peer failed and released this rank */
    REDCOLL_ERR_DEADLOCK      = -7  /* the simulator found every rank blocked */
} redcoll_result;

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

/* Bytes of one element, 0 for an invalid type. */
REDCOLL_API size_t redcoll_dtype_size(redcoll_dtype dtype);
REDCOLL_API const char *redcoll_dtype_name(redcoll_dtype dtype);

typedef enum redcoll_op_kind {
    REDCOLL_OP_SUM, REDCOLL_OP_PROD, REDCOLL_OP_MIN, REDCOLL_OP_MAX,
    REDCOLL_OP_LAND, REDCOLL_OP_LOR, REDCOLL_OP_LXOR,
    REDCOLL_OP_BAND, REDCOLL_OP_BOR, REDCOLL_OP_BXOR,
    REDCOLL_OP_MINLOC, REDCOLL_OP_MAXLOC,
    REDCOLL_OP_USER,
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

REDCOLL_API const char *redcoll_op_name(redcoll_op_kind kind);
/* 1 if the predefined op `kind` is defined on `dtype` (user ops: any type). */
REDCOLL_API int redcoll_op_valid_for(redcoll_op_kind kind, redcoll_dtype dtype);

/* Apply op locally: inout[i] = in[i] op inout[i]. */
REDCOLL_API redcoll_result redcoll_reduce_local(const void *in, void *inout, size_t count,
                                                redcoll_dtype dtype, redcoll_op op);

/* As MPI_IN_PLACE: pass as the send buffer (as the receive buffer of scatter's root). */
#define REDCOLL_IN_PLACE ((void *)1)

/* ==== 2. Transport vtable ============================================== */

/* Handle of a non-blocking transfer, owned by the transport. */
typedef struct redcoll_request { void *ptr; long long id; } redcoll_request;

/* Transport flags. */
#define REDCOLL_TRANSPORT_NO_DATA 1u /* moves no payload: the library skips copies
                                        and reductions and only reports them */

/* What a transport provides, filled by the adapter's own init function.
   Every call takes the adapter's `user` first, blocks until its buffers may be
   reused, and must be allowed to be synchronous (rendezvous): schedules never
   rely on buffering, and exchanges use sendrecv.

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
                 scratch bytes allocated (+) or freed (-). NULL: not reported. */
typedef struct redcoll_transport {
    void *user;
    int   rank, size;
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
} redcoll_transport;

/* ---- Group views -----------------------------------------------------------
   A group view is a transport made of a subset of another transport's ranks,
   what MPI_Comm_split makes, but built locally without communication: every
   member builds the same view from the same rank list. View rank i is parent
   rank ranks[i]; the view has its own tag space (chosen by `id`), so its
   traffic never matches the parent's or that of a view with another id.
   Every optional entry of the parent is forwarded (abort, isend/irecv/waitall,
   node_of with rank translation, on_compute, on_scratch, flags), so any
   collective runs on a view exactly as on a whole transport, and the
   simulator still counts all of it. A view of a view works the same way.
   The hierarchical schedules build their groups with these views, at no cost
   per call beyond filling a struct. */
#define REDCOLL_GROUP_MAX_ID 31 /* ids 0..31 */

typedef struct redcoll_group {
    redcoll_transport        t;         /* the view: pass &g.t to any collective */
    /* private */
    const redcoll_transport *parent;    /* borrowed */
    const int               *ranks;     /* borrowed; NULL: parent ranks first, first + 1, ... */
    int                      first;
    int                      tag_shift;
} redcoll_group;

/* Makes g a view of the n parent ranks ranks[0..n-1].
   Parameters: parent - any valid transport (may itself be a view);
     ranks - n distinct ranks of parent, in the order that defines view ranks
     (ascending order keeps the canonical reduction order of the parent);
     the caller (parent->rank) must be one of them; id - 0..REDCOLL_GROUP_MAX_ID,
     the tag space: views over the same parent used at the same time by the
     same ranks need distinct ids.
   Returns REDCOLL_OK, or REDCOLL_ERR_INVALID_ARG with g untouched.
   Remarks: no communication and no allocation. g, parent and ranks are
   borrowed and must stay valid (and g at its address) while the view is used;
   nothing to release. Thread safety: as the parent transport. */
REDCOLL_API redcoll_result redcoll_group_init(redcoll_group *g, const redcoll_transport *parent,
                                              const int *ranks, int n, int id);
/* As redcoll_group_init for the consecutive parent ranks first .. first+n-1,
   without a rank list. */
REDCOLL_API redcoll_result redcoll_group_range(redcoll_group *g, const redcoll_transport *parent,
                                               int first, int n, int id);

/* ==== 3. Options, algorithms and selection ============================= */

typedef enum redcoll_coll {
    REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE,
    REDCOLL_COLL_REDUCE_SCATTER, REDCOLL_COLL_REDUCE_SCATTER_BLOCK,
    REDCOLL_COLL_ALLGATHER, REDCOLL_COLL_ALLGATHERV,
    REDCOLL_COLL_BCAST, REDCOLL_COLL_ALLTOALL,
    REDCOLL_COLL_GATHER, REDCOLL_COLL_SCATTER, REDCOLL_COLL_BARRIER,
    REDCOLL_COLL_COUNT
} redcoll_coll;

/* One enum for every schedule; each collective accepts a subset
   (redcoll_algo_supported). AUTO lets the selector choose. */
typedef enum redcoll_algo {
    REDCOLL_ALGO_AUTO = 0,
    /* Rabenseifner 2004, MPICH 2005 */
    REDCOLL_ALGO_BINOMIAL,
    REDCOLL_ALGO_REDUCE_BCAST,
    REDCOLL_ALGO_RECURSIVE_DOUBLING,
    REDCOLL_ALGO_BINARY_TREE,
    REDCOLL_ALGO_HALVING_DOUBLING,
    REDCOLL_ALGO_BINARY_BLOCKS,
    REDCOLL_ALGO_RING,
    /* Rabenseifner & Traeff 2005 */
    REDCOLL_ALGO_BUTTERFLY,
    REDCOLL_ALGO_ELIMINATION,
    REDCOLL_ALGO_ELIMINATION_NONOVERLAP,
    REDCOLL_ALGO_FACTOR_RING,
    /* MPICH 2005 */
    REDCOLL_ALGO_BRUCK,
    REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING,
    REDCOLL_ALGO_SCATTER_RING,
    REDCOLL_ALGO_SCATTERED,
    REDCOLL_ALGO_PAIRWISE,
    REDCOLL_ALGO_RECURSIVE_HALVING,
    /* Hasanov & Lastovetsky */
    REDCOLL_ALGO_FLAT,
    REDCOLL_ALGO_CHAIN,
    REDCOLL_ALGO_PIPELINE,
    REDCOLL_ALGO_BINARY,
    REDCOLL_ALGO_IN_ORDER_BINARY,
    REDCOLL_ALGO_HIERARCHICAL,
    /* barrier */
    REDCOLL_ALGO_DISSEMINATION,
    REDCOLL_ALGO_COUNT
} redcoll_algo;

REDCOLL_API const char *redcoll_coll_name(redcoll_coll coll);
REDCOLL_API int redcoll_coll_from_name(const char *name, redcoll_coll *out);   /* 1 if found */
REDCOLL_API const char *redcoll_algo_name(redcoll_algo algo);
REDCOLL_API int redcoll_algo_from_name(const char *name, redcoll_algo *out);   /* 1 if found */
/* 1 if `algo` is implemented for `coll` (AUTO always is). */
REDCOLL_API int redcoll_algo_supported(redcoll_coll coll, redcoll_algo algo);
/* 1 if `algo` keeps canonical order, so it accepts non-commutative ops. */
REDCOLL_API int redcoll_algo_keeps_order(redcoll_coll coll, redcoll_algo algo);

/* Which rules pick an algorithm when opts->algo is AUTO. */
typedef enum redcoll_selector {
    REDCOLL_SELECTOR_PAPERS = 0, /* Rabenseifner 2004 section 4 for (all)reduce, MPICH for the rest */
    REDCOLL_SELECTOR_MPICH  = 1  /* "what MPICH would do" (Thakur et al. 2005 section 4) */
} redcoll_selector;

/* The alpha-beta-gamma model of Rabenseifner 2004 section 3.1: seconds per
   message, per byte transferred, per byte reduced, and the factors of a
   one-way (uni-directional) message. All zero means the defaults. */
typedef struct redcoll_cost_model {
    double alpha, beta, gamma;
    double f_alpha, f_beta;
} redcoll_cost_model;

typedef struct redcoll_allocator {
    void *(*alloc_fn)(size_t bytes, void *user_data);
    void  (*free_fn)(void *ptr, void *user_data);
    void  *user_data;
} redcoll_allocator;

/* Threshold b of the Rabenseifner-Traeff butterfly (bytes). 0 means "choose
   from the cost model"; these two name the extremes. */
#define REDCOLL_THRESHOLD_ZERO     ((size_t)-2) /* b = 0: bandwidth-optimal */
#define REDCOLL_THRESHOLD_INFINITE ((size_t)-1) /* b = infinity: latency-optimal */

/* Options of every collective; zero-initialise, NULL means all defaults. */
typedef struct redcoll_options {
    redcoll_algo       algo;            /* AUTO = the selector chooses */
    redcoll_selector   selector;
    size_t             segment_bytes;   /* pipelined schedules; 0 = default */
    size_t             threshold_bytes; /* butterfly threshold b; see above */
    int                groups;          /* hierarchical: G groups; 0 = default */
    redcoll_algo       inner_algo;      /* hierarchical: inside groups; AUTO = default */
    redcoll_algo       outer_algo;      /* hierarchical: among group leaders */
    int                by_node;         /* hierarchical: group by transport node_of */
    redcoll_cost_model model;
    redcoll_allocator  allocator;
} redcoll_options;

#define REDCOLL_DEFAULT_ALPHA   2e-6    /* 2 us latency */
#define REDCOLL_DEFAULT_BETA    1e-10   /* 10 GB/s */
#define REDCOLL_DEFAULT_GAMMA   2.5e-11 /* 40 GB/s of reduction */
#define REDCOLL_DEFAULT_SEGMENT ((size_t)32768)

/* The options with every default filled in (opts may be NULL). */
REDCOLL_API redcoll_options redcoll_options_resolved(const redcoll_options *opts);

/* The algorithm AUTO picks for `coll` on p ranks with `bytes` per rank
   (the whole vector for (all)reduce, bcast; one block for allgather and
   alltoall; the total for reduce_scatter) and an op that is or is not
   commutative. */
REDCOLL_API redcoll_algo redcoll_select(redcoll_coll coll, int p, size_t bytes,
                                        int commutative, const redcoll_options *opts);

/* ==== 4. Collectives ==================================================== */
/* Every rank of the transport calls the same collective with the same
   count, dtype, op, root and algorithm. Return REDCOLL_OK or an error; on
   an argument error nothing is sent and no buffer is touched. Not thread
   safe on one transport; distinct transports may be used concurrently.
   `sbuf` may be REDCOLL_IN_PLACE where MPI allows MPI_IN_PLACE. */

/* rbuf on every rank = x0 op x1 op ... op x(p-1), count elements. */
REDCOLL_API redcoll_result redcoll_allreduce(const redcoll_transport *t, const void *sbuf,
                                             void *rbuf, size_t count, redcoll_dtype dtype,
                                             redcoll_op op, const redcoll_options *opts);
/* As allreduce, the result only at root (rbuf ignored elsewhere). */
REDCOLL_API redcoll_result redcoll_reduce(const redcoll_transport *t, const void *sbuf,
                                          void *rbuf, size_t count, redcoll_dtype dtype,
                                          redcoll_op op, int root, const redcoll_options *opts);
/* Reduce sum(recvcounts) elements; rank i keeps recvcounts[i] of the result
   (the block starting at recvcounts[0] + ... + recvcounts[i-1]). */
REDCOLL_API redcoll_result redcoll_reduce_scatter(const redcoll_transport *t, const void *sbuf,
                                                  void *rbuf, const size_t *recvcounts,
                                                  redcoll_dtype dtype, redcoll_op op,
                                                  const redcoll_options *opts);
/* As reduce_scatter with recvcount elements for every rank. */
REDCOLL_API redcoll_result redcoll_reduce_scatter_block(const redcoll_transport *t,
                                                        const void *sbuf, void *rbuf,
                                                        size_t recvcount, redcoll_dtype dtype,
                                                        redcoll_op op, const redcoll_options *opts);
/* rbuf = rank 0's count elements, then rank 1's, ... */
REDCOLL_API redcoll_result redcoll_allgather(const redcoll_transport *t, const void *sbuf,
                                             void *rbuf, size_t count, redcoll_dtype dtype,
                                             const redcoll_options *opts);
/* As allgather with counts[i] elements from rank i. */
REDCOLL_API redcoll_result redcoll_allgatherv(const redcoll_transport *t, const void *sbuf,
                                              void *rbuf, const size_t *counts,
                                              redcoll_dtype dtype, const redcoll_options *opts);
/* buf of root copied to every rank. */
REDCOLL_API redcoll_result redcoll_bcast(const redcoll_transport *t, void *buf, size_t count,
                                         redcoll_dtype dtype, int root,
                                         const redcoll_options *opts);
/* Block j of sbuf (count elements) goes to rank j, landing as block i of its rbuf. */
REDCOLL_API redcoll_result redcoll_alltoall(const redcoll_transport *t, const void *sbuf,
                                            void *rbuf, size_t count, redcoll_dtype dtype,
                                            const redcoll_options *opts);
/* Root's rbuf = every rank's count elements in rank order. */
REDCOLL_API redcoll_result redcoll_gather(const redcoll_transport *t, const void *sbuf,
                                          void *rbuf, size_t count, redcoll_dtype dtype,
                                          int root, const redcoll_options *opts);
/* Block i of root's sbuf (count elements) lands in rbuf of rank i. */
REDCOLL_API redcoll_result redcoll_scatter(const redcoll_transport *t, const void *sbuf,
                                           void *rbuf, size_t count, redcoll_dtype dtype,
                                           int root, const redcoll_options *opts);
REDCOLL_API redcoll_result redcoll_barrier(const redcoll_transport *t,
                                           const redcoll_options *opts);

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

#include <string.h>
#include <stdlib.h>

#ifndef REDCOLL_ASSERT
#include <assert.h>
#define REDCOLL_ASSERT(x) assert(x)
#endif
#ifndef REDCOLL_MALLOC
#define REDCOLL_MALLOC(bytes) malloc(bytes)
#define REDCOLL_FREE(ptr) free(ptr)
#endif
#ifndef REDCOLL_MEMCPY
#define REDCOLL_MEMCPY(dst, src, bytes) memcpy(dst, src, bytes)
#endif

#define redcoll__def(v, d) ((v) ? (v) : (d))

/* ==== 5. Context, transport calls, scratch ============================== */

typedef void (*redcoll__kernel)(const void *lo, const void *hi, void *out, size_t n);

/* Everything a schedule needs about one call. Transport failures are latched
   in `err`: later calls become no-ops, so a schedule reads as straight-line
   code and returns c->err (STYLE: record the error, release the peers). */
typedef struct redcoll__ctx {
    const redcoll_transport *t;
    int             rank, size;
    redcoll_dtype   dtype;
    size_t          esize;   /* bytes per element */
    redcoll_op      op;
    redcoll__kernel kernel;  /* predefined ops; NULL for user ops */
    redcoll_options o;       /* resolved */
    redcoll_algo    algo;    /* the schedule running */
    int             tag;
    int             dry;     /* transport moves no data */
    redcoll_result  err;
} redcoll__ctx;

/* Arguments of a schedule. `sbuf` is the resolved input: never
   REDCOLL_IN_PLACE (the entry points resolve it, and allreduce has already
   copied its input into rbuf, so sbuf == rbuf there). */
typedef struct redcoll__args {
    const void   *sbuf;
    void         *rbuf;
    size_t        count;   /* the vector, or one block (gather, scatter, allgather, alltoall) */
    const size_t *counts;  /* irregular collectives: per-rank element counts */
    int           root;
    int           in_place;
} redcoll__args;

typedef redcoll_result (*redcoll__schedule)(redcoll__ctx *c, const redcoll__args *a);

/* Every (collective, algorithm) pair that exists, and whether it keeps the
   canonical order x0 op x1 op ... op x(p-1) for non-commutative ops. */
typedef struct redcoll__entry {
    redcoll_coll      coll;
    redcoll_algo      algo;
    redcoll__schedule run;
    int               keeps_order;
} redcoll__entry;

static const redcoll__entry *redcoll__find(redcoll_coll coll, redcoll_algo algo);
static int redcoll__transport_ok(const redcoll_transport *t);

static char *redcoll__at(const redcoll__ctx *c, const void *buf, size_t elem) {
    return (char *)buf + elem * c->esize;
}

static void redcoll__fail(redcoll__ctx *c, redcoll_result r) {
    if (c->err != REDCOLL_OK || r == REDCOLL_OK) return;
    c->err = r;
    if (c->t->abort) c->t->abort(c->t->user, r);
}

static void redcoll__send(redcoll__ctx *c, int dst, const void *buf, size_t n) {
    if (c->err) return;
    redcoll__fail(c, c->t->send(c->t->user, dst, buf, n * c->esize, c->tag));
}

static void redcoll__recv(redcoll__ctx *c, int src, void *buf, size_t n) {
    if (c->err) return;
    redcoll__fail(c, c->t->recv(c->t->user, src, buf, n * c->esize, c->tag));
}

static void redcoll__sendrecv(redcoll__ctx *c, int dst, const void *sbuf, size_t sn,
                              int src, void *rbuf, size_t rn) {
    if (c->err) return;
    redcoll__fail(c, c->t->sendrecv(c->t->user, dst, sbuf, sn * c->esize,
                                    src, rbuf, rn * c->esize, c->tag));
}

static void redcoll__copy(const redcoll__ctx *c, void *dst, const void *src, size_t n) {
    if (c->dry || dst == src || n == 0) return;
    REDCOLL_MEMCPY(dst, src, n * c->esize);
}

/* Scratch bytes from the user's allocator; NULL latches out-of-memory. */
static void *redcoll__alloc_bytes(redcoll__ctx *c, size_t bytes) {
    const redcoll_allocator *a = &c->o.allocator;
    void *p;
    if (c->err) return NULL;
    if (bytes == 0) bytes = 1;
    p = a->alloc_fn ? a->alloc_fn(bytes, a->user_data) : REDCOLL_MALLOC(bytes);
    if (!p) { redcoll__fail(c, REDCOLL_ERR_OUT_OF_MEMORY); return NULL; }
    if (c->t->on_scratch) c->t->on_scratch(c->t->user, (long long)bytes);
    return p;
}

static void redcoll__free_bytes(redcoll__ctx *c, void *p, size_t bytes) {
    const redcoll_allocator *a = &c->o.allocator;
    if (!p) return;
    if (bytes == 0) bytes = 1;
    if (c->t->on_scratch) c->t->on_scratch(c->t->user, -(long long)bytes);
    if (a->free_fn) a->free_fn(p, a->user_data); else REDCOLL_FREE(p);
}

/* Scratch of n elements. */
static void *redcoll__alloc(redcoll__ctx *c, size_t n) { return redcoll__alloc_bytes(c, n * c->esize); }
static void redcoll__free(redcoll__ctx *c, void *p, size_t n) { redcoll__free_bytes(c, p, n * c->esize); }

static void redcoll__account(redcoll__ctx *c, size_t n) {
    if (c->t->on_compute) c->t->on_compute(c->t->user, n, n * c->esize);
}

/* higher = lower op higher: `lower` holds the operand of the lower ranks. */
static void redcoll__reduce(redcoll__ctx *c, const void *lower, void *higher, size_t n) {
    if (c->err || n == 0) return;
    redcoll__account(c, n);
    if (c->dry) return;
    if (c->kernel) c->kernel(lower, higher, higher, n);
    else c->op.fn(lower, higher, n, c->op.user);
}

/* lower = lower op higher; `higher` may be clobbered (a non-commutative user
   op computes into it and copies back). */
static void redcoll__reduce_lo(redcoll__ctx *c, void *lower, void *higher, size_t n) {
    if (c->err || n == 0) return;
    redcoll__account(c, n);
    if (c->dry) return;
    if (c->kernel) c->kernel(lower, higher, lower, n);
    else if (c->op.commutative) c->op.fn(higher, lower, n, c->op.user);
    else { c->op.fn(lower, higher, n, c->op.user); REDCOLL_MEMCPY(lower, higher, n * c->esize); }
}

/* Shared building blocks may be unused while a collective is being written. */
#if defined(__GNUC__) || defined(__clang__)
#define REDCOLL__SHARED __attribute__((unused))
#else
#define REDCOLL__SHARED
#endif

/* Small integer helpers shared by the schedules. */
static int redcoll__pof2_floor(int p) { int k = 1; while (k * 2 <= p) k *= 2; return k; }
REDCOLL__SHARED static int redcoll__ceil_lg(int p) { int k = 0; while ((1 << k) < p) ++k; return k; }

/* Split n elements into `parts` blocks, the first n % parts one larger:
   block i starts at element *off and has *len elements. */
REDCOLL__SHARED static void redcoll__block(size_t n, int parts, int i, size_t *off, size_t *len) {
    size_t q = n / (size_t)parts, r = n % (size_t)parts, ui = (size_t)i;
    *off = ui * q + (ui < r ? ui : r);
    *len = q + (ui < r ? 1 : 0);
}

/* ---- group views ------------------------------------------------------------
   Each entry translates view ranks to parent ranks, shifts the tag into the
   view's space and calls the parent. A rank outside the view fails the call
   as the simulator fails a rank outside the transport. */
#define REDCOLL__GROUP_TAG_STRIDE 16 /* > the number of collectives: one tag each */

static int redcoll__gparent(const redcoll_group *g, int r) {
    if (r < 0 || r >= g->t.size) return -1;
    return g->ranks ? g->ranks[r] : g->first + r;
}

static redcoll_result redcoll__gsend(void *u, int dst, const void *buf, size_t bytes, int tag) {
    const redcoll_group *g = (const redcoll_group *)u;
    int d = redcoll__gparent(g, dst);
    if (d < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->send(g->parent->user, d, buf, bytes, tag + g->tag_shift);
}

static redcoll_result redcoll__grecv(void *u, int src, void *buf, size_t bytes, int tag) {
    const redcoll_group *g = (const redcoll_group *)u;
    int s = redcoll__gparent(g, src);
    if (s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->recv(g->parent->user, s, buf, bytes, tag + g->tag_shift);
}

static redcoll_result redcoll__gsendrecv(void *u, int dst, const void *sbuf, size_t sbytes,
                                         int src, void *rbuf, size_t rbytes, int tag) {
    const redcoll_group *g = (const redcoll_group *)u;
    int d = redcoll__gparent(g, dst), s = redcoll__gparent(g, src);
    if (d < 0 || s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->sendrecv(g->parent->user, d, sbuf, sbytes, s, rbuf, rbytes,
                               tag + g->tag_shift);
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
    return g->parent->isend(g->parent->user, d, buf, bytes, tag + g->tag_shift, req);
}

static redcoll_result redcoll__girecv(void *u, int src, void *buf, size_t bytes, int tag,
                                      redcoll_request *req) {
    const redcoll_group *g = (const redcoll_group *)u;
    int s = redcoll__gparent(g, src);
    if (s < 0) return REDCOLL_ERR_TRANSPORT;
    return g->parent->irecv(g->parent->user, s, buf, bytes, tag + g->tag_shift, req);
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

/* Fills the view (arguments already checked); `me` is the caller's view rank. */
static void redcoll__group_make(redcoll_group *g, const redcoll_transport *parent,
                                const int *ranks, int first, int n, int id, int me) {
    const redcoll_transport *P = parent;
    redcoll_transport *t = &g->t;
    memset(g, 0, sizeof *g);
    g->parent = parent; g->ranks = ranks; g->first = first;
    g->tag_shift = (id + 1) * REDCOLL__GROUP_TAG_STRIDE;
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

/* ==== 6. Reduction kernels ============================================== */
/* One loop per (op, type): out[i] = lo[i] op hi[i], where out is lo or hi.
   Integer arithmetic goes through the unsigned type W, so overflow wraps
   instead of being undefined. */

#define REDCOLL__KERNEL(OP, SUF, T, WIDE, EXPR)                                     \
    static void redcoll__k_##OP##_##SUF(const void *lo_, const void *hi_, void *out_, \
                                        size_t n) {                                  \
        typedef WIDE W;                                                              \
        const T *lo = (const T *)lo_; const T *hi = (const T *)hi_;                  \
        T *out = (T *)out_; size_t i;                                                \
        for (i = 0; i < n; ++i) { T a = lo[i], b = hi[i]; out[i] = (T)(W)(EXPR); }   \
    }

#define REDCOLL__INT_TYPES(X, OP, EXPR)                                      \
    X(OP, i8, int8_t, unsigned, EXPR)    X(OP, u8, uint8_t, unsigned, EXPR)   \
    X(OP, i16, int16_t, unsigned, EXPR)  X(OP, u16, uint16_t, unsigned, EXPR) \
    X(OP, i32, int32_t, uint32_t, EXPR)  X(OP, u32, uint32_t, uint32_t, EXPR) \
    X(OP, i64, int64_t, uint64_t, EXPR)  X(OP, u64, uint64_t, uint64_t, EXPR)
#define REDCOLL__FLOAT_TYPES(X, OP, EXPR)                                    \
    X(OP, f32, float, float, EXPR) X(OP, f64, double, double, EXPR)         \
    X(OP, f80, long double, long double, EXPR)

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

/* MINLOC/MAXLOC: the better value wins; a tie keeps the smaller index. */
#define REDCOLL__LOC_KERNEL(OP, SUF, T, BETTER)                                     \
    static void redcoll__k_##OP##_##SUF(const void *lo_, const void *hi_, void *out_, \
                                        size_t n) {                                  \
        const T *lo = (const T *)lo_; const T *hi = (const T *)hi_;                  \
        T *out = (T *)out_; size_t i;                                                \
        for (i = 0; i < n; ++i) {                                                    \
            T a = lo[i], b = hi[i];                                                  \
            if (b.v BETTER a.v) a = b;                                               \
            else if (!(a.v BETTER b.v) && b.i < a.i) a.i = b.i;                      \
            out[i] = a;                                                              \
        }                                                                            \
    }
#define REDCOLL__PAIR_TYPES(X, OP, BETTER)                                         \
    X(OP, fi, redcoll_float_int, BETTER)  X(OP, di, redcoll_double_int, BETTER)   \
    X(OP, li, redcoll_long_int, BETTER)   X(OP, ii, redcoll_2int, BETTER)         \
    X(OP, si, redcoll_short_int, BETTER)  X(OP, ldi, redcoll_long_double_int, BETTER)
REDCOLL__PAIR_TYPES(REDCOLL__LOC_KERNEL, minloc, <)
REDCOLL__PAIR_TYPES(REDCOLL__LOC_KERNEL, maxloc, >)

#define REDCOLL__INT_CASES(OP)                                                        \
    case REDCOLL_INT8: return redcoll__k_##OP##_i8;   case REDCOLL_UINT8: return redcoll__k_##OP##_u8;   \
    case REDCOLL_INT16: return redcoll__k_##OP##_i16; case REDCOLL_UINT16: return redcoll__k_##OP##_u16; \
    case REDCOLL_INT32: return redcoll__k_##OP##_i32; case REDCOLL_UINT32: return redcoll__k_##OP##_u32; \
    case REDCOLL_INT64: return redcoll__k_##OP##_i64; case REDCOLL_UINT64: return redcoll__k_##OP##_u64;
#define REDCOLL__FLOAT_CASES(OP)                                                      \
    case REDCOLL_FLOAT: return redcoll__k_##OP##_f32; case REDCOLL_DOUBLE: return redcoll__k_##OP##_f64; \
    case REDCOLL_LONG_DOUBLE: return redcoll__k_##OP##_f80;
#define REDCOLL__PAIR_CASES(OP)                                                       \
    case REDCOLL_FLOAT_INT: return redcoll__k_##OP##_fi; case REDCOLL_DOUBLE_INT: return redcoll__k_##OP##_di; \
    case REDCOLL_LONG_INT: return redcoll__k_##OP##_li;  case REDCOLL_2INT: return redcoll__k_##OP##_ii;       \
    case REDCOLL_SHORT_INT: return redcoll__k_##OP##_si; case REDCOLL_LONG_DOUBLE_INT: return redcoll__k_##OP##_ldi;

/* The kernel of a predefined op on a type, or NULL where MPI leaves it undefined. */
static redcoll__kernel redcoll__kernel_for(redcoll_op_kind kind, redcoll_dtype d) {
    switch (kind) {
    case REDCOLL_OP_SUM:  switch (d) { REDCOLL__INT_CASES(sum)  REDCOLL__FLOAT_CASES(sum)  default: return NULL; }
    case REDCOLL_OP_PROD: switch (d) { REDCOLL__INT_CASES(prod) REDCOLL__FLOAT_CASES(prod) default: return NULL; }
    case REDCOLL_OP_MIN:  switch (d) { REDCOLL__INT_CASES(min)  REDCOLL__FLOAT_CASES(min)  default: return NULL; }
    case REDCOLL_OP_MAX:  switch (d) { REDCOLL__INT_CASES(max)  REDCOLL__FLOAT_CASES(max)  default: return NULL; }
    case REDCOLL_OP_LAND: switch (d) { REDCOLL__INT_CASES(land) default: return NULL; }
    case REDCOLL_OP_LOR:  switch (d) { REDCOLL__INT_CASES(lor)  default: return NULL; }
    case REDCOLL_OP_LXOR: switch (d) { REDCOLL__INT_CASES(lxor) default: return NULL; }
    case REDCOLL_OP_BAND: switch (d) { REDCOLL__INT_CASES(band) default: return NULL; }
    case REDCOLL_OP_BOR:  switch (d) { REDCOLL__INT_CASES(bor)  default: return NULL; }
    case REDCOLL_OP_BXOR: switch (d) { REDCOLL__INT_CASES(bxor) default: return NULL; }
    case REDCOLL_OP_MINLOC: switch (d) { REDCOLL__PAIR_CASES(minloc) default: return NULL; }
    case REDCOLL_OP_MAXLOC: switch (d) { REDCOLL__PAIR_CASES(maxloc) default: return NULL; }
    default: return NULL;
    }
}

/* ==== 8. Schedules ======================================================= */
/* Each schedule opens with its paper section, its cost in the model of
   Rabenseifner 2004 section 3.1 (n bytes per rank, one-way messages cost
   alpha_uni + n beta_uni), and how it treats a non-power-of-two p. */

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

/* Folds buf (n elements) into the odd partners; tmp receives. */
static void redcoll__fold_in(redcoll__ctx *c, const redcoll__fold *f, void *buf, void *tmp,
                             size_t n) {
    if (c->rank >= 2 * f->rem) return;
    if (f->newrank < 0) redcoll__send(c, c->rank + 1, buf, n);
    else { redcoll__recv(c, c->rank - 1, tmp, n); redcoll__reduce(c, tmp, buf, n); }
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
static void redcoll__binomial_reduce(redcoll__ctx *c, const void *in, void *acc, size_t n,
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
            tmp = redcoll__alloc(c, n);
            if (!acc) acc = own = redcoll__alloc(c, n);
            if (c->err) break;
            redcoll__copy(c, acc, in, n);
            started = 1;
        }
        redcoll__recv(c, redcoll__unvrank(v + mask, base, p), tmp, n);
        redcoll__reduce_lo(c, acc, tmp, n);
    }
    if (base != root) {
        if (c->rank == 0) redcoll__send(c, root, started ? acc : in, n);
        else if (c->rank == root) redcoll__recv(c, 0, acc, n);
    } else if (c->rank == root && !started) {
        redcoll__copy(c, acc, in, n); /* p == 1 */
    }
    redcoll__free(c, tmp, n);
    redcoll__free(c, own, n);
}

/* Broadcast of n elements from root over a binomial tree (MPICH paper 4.2). */
static void redcoll__binomial_bcast(redcoll__ctx *c, void *buf, size_t n, int root) {
    int p = c->size, v = redcoll__vrank(c->rank, root, p), mask = 1;
    while (mask < p) {
        if (v & mask) { redcoll__recv(c, redcoll__unvrank(v - mask, root, p), buf, n); break; }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < p) redcoll__send(c, redcoll__unvrank(v + mask, root, p), buf, n);
}

/* ---- reduce ---------------------------------------------------------------- */

/* Binomial tree (MPICH paper 4.5, the classical reduce).
   Cost: ceil(lg p)(alpha_uni + n beta_uni + n gamma) at the root.
   Any p: an incomplete tree. Non-commutative ops: tree rooted at rank 0,
   plus one message to root when root != 0. */
static redcoll_result redcoll__reduce_binomial(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__binomial_reduce(c, a->sbuf, c->rank == a->root ? a->rbuf : NULL, a->count,
                             a->root);
    return c->err;
}

/* ---- bcast ----------------------------------------------------------------- */

/* Binomial tree (MPICH paper 4.2). Cost: ceil(lg p)(alpha_uni + n beta_uni)
   on the deepest path. Any p: an incomplete tree. */
static redcoll_result redcoll__bcast_binomial(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__binomial_bcast(c, a->rbuf, a->count, a->root);
    return c->err;
}

/* ---- allreduce ------------------------------------------------------------- */
/* The entry point has copied the input into rbuf: every schedule works in place. */

/* Reduce to rank 0, then broadcast (Rabenseifner 2004 section 3.2, the classical
   allreduce). Cost: 2 ceil(lg p)(alpha_uni + n beta_uni) + ceil(lg p) n gamma.
   Any p: binomial trees. Keeps canonical order (tree rooted at rank 0). */
static redcoll_result redcoll__allreduce_reduce_bcast(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__binomial_reduce(c, a->rbuf, a->rbuf, a->count, 0);
    redcoll__binomial_bcast(c, a->rbuf, a->count, 0);
    return c->err;
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
    void *tmp = f.newrank >= 0 && c->size > 1 ? redcoll__alloc(c, n) : NULL;
    int mask;

    redcoll__fold_in(c, &f, a->rbuf, tmp, n);
    for (mask = 1; f.newrank >= 0 && mask < f.pof2; mask <<= 1) {
        int peer = f.newrank ^ mask;
        redcoll__sendrecv(c, redcoll__fold_oldrank(&f, peer), a->rbuf, n,
                          redcoll__fold_oldrank(&f, peer), tmp, n);
        if (peer < f.newrank) redcoll__reduce(c, tmp, a->rbuf, n);
        else redcoll__reduce_lo(c, a->rbuf, tmp, n);
    }
    redcoll__fold_out(c, &f, a->rbuf, n);
    redcoll__free(c, tmp, n);
    return c->err;
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

/* Binomial scatter, the inverse of the gather above (MPICH paper 4.2's first
   half). Cost: ceil(lg p) alpha_uni + (p-1)/p n beta_uni at the root. */
static redcoll_result redcoll__scatter_binomial(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, root = a->root, v = redcoll__vrank(c->rank, root, p);
    int low = redcoll__lowbit(v, p), mask;
    size_t n = a->count, have = redcoll__subtree(v, p);
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
    if (v != 0) redcoll__recv(c, redcoll__unvrank(v - low, root, p), have == 1 ? a->rbuf : tmp,
                              have * n);
    for (mask = low >> 1; mask > 0; mask >>= 1)
        if (v + mask < p)
            redcoll__send(c, redcoll__unvrank(v + mask, root, p), redcoll__at(c, src, mask * n),
                          (size_t)redcoll__subtree(v + mask, p) * n);
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

/* ---- Hasanov & Lastovetsky: reduce algorithms and the hierarchical transformation ----
   Hasanov & Lastovetsky, "Hierarchical optimization of MPI reduce algorithms"
   (PaCT 2015): the Open MPI reduce algorithms of section 2.1 and the two-level
   transformation of section 3 (Algorithm 1), generalised to allreduce and
   bcast as section 5 proposes. Costs use the paper's Hockney model: m bytes
   per rank, X segments of m/X bytes, one step = alpha + m/X beta + m/X gamma
   (the simulator's one-way message with f_alpha = f_beta = 1). */

/* Segment of pipelined schedules: opts.segment_bytes in whole elements, at
   least one, at most n (n > 0). */
static size_t redcoll__seg_elems(const redcoll__ctx *c, size_t n) {
    size_t s = c->o.segment_bytes / c->esize;
    if (s == 0) s = 1;
    return s < n ? s : n;
}

/* Length of the segment starting at element off. */
static size_t redcoll__seg_len(size_t n, size_t seg, size_t off) {
    return n - off < seg ? n - off : seg;
}

/* ---- building block: chain (linear array) reduce, optionally pipelined ----
   Virtual ranks v = (rank - base) mod p form the array p-1 -> p-2 -> ... -> 0;
   each segment of `seg` elements enters at v = p-1, every rank prepends its
   own operand (x_v op received) and passes it on while the next segment
   arrives (sendrecv), so X = ceil(n/seg) segments take p + X - 2 steps.
   Commutative ops rotate the array to end at root (base = root); otherwise
   the array is in rank order, ends at rank 0, which sends the whole result
   to root when root != 0. `out`: the result buffer on root (may equal `in`),
   NULL elsewhere. Scratch on receiving ranks: two segments (one vector when
   X <= 2, and at rank 0 when it forwards the whole result); none at a
   non-in-place tail root, which accumulates in `out`. */
static void redcoll__chain_reduce(redcoll__ctx *c, const void *in, void *out, size_t n,
                                  int root, size_t seg) {
    int p = c->size, base = c->op.commutative ? root : 0;
    int v = redcoll__vrank(c->rank, base, p);
    int up = v + 1 < p ? redcoll__unvrank(v + 1, base, p) : -1;
    int down = v > 0 ? redcoll__unvrank(v - 1, base, p) : -1;
    int tail_root = v == 0 && c->rank == root, forward = v == 0 && base != root;
    int full = forward || (tail_root && out != in) || n <= 2 * seg; /* segment k at offset k*seg */
    size_t off, len, plen = 0, cap = full ? n : 2 * seg;
    void *acc = (void *)in, *own = NULL, *prev = NULL, *cur;

    if (up >= 0) { /* receives: accumulate into out (tail root) or scratch */
        acc = tail_root && out != in ? out : (own = redcoll__alloc(c, cap));
        for (off = 0; off < n && !c->err; off += seg) {
            len = redcoll__seg_len(n, seg, off);
            cur = redcoll__at(c, acc, full ? off : (off / seg % 2) * seg);
            if (prev && down >= 0) /* pass segment k-1 on while segment k arrives */
                redcoll__sendrecv(c, down, prev, plen, up, cur, len);
            else
                redcoll__recv(c, up, cur, len);
            redcoll__reduce(c, redcoll__at(c, in, off), cur, len);
            if (tail_root && acc != out) redcoll__copy(c, redcoll__at(c, out, off), cur, len);
            prev = cur; plen = len;
        }
        if (down >= 0) redcoll__send(c, down, prev, plen);
    } else if (down >= 0) { /* head: its own segments */
        for (off = 0; off < n; off += seg)
            redcoll__send(c, down, redcoll__at(c, in, off), redcoll__seg_len(n, seg, off));
    } else if (out) {
        redcoll__copy(c, out, in, n); /* p == 1 */
    }
    if (forward) redcoll__send(c, root, acc, n); /* non-commutative op, root != 0 */
    else if (base != root && c->rank == root) redcoll__recv(c, 0, out, n);
    redcoll__free(c, own, cap);
}

/* ---- building block: chain (linear array) bcast, optionally pipelined -----
   The reverse of the chain reduce: vranks 0 (root) -> 1 -> ... -> p-1; every
   rank forwards segment k-1 while segment k arrives (sendrecv), so X
   segments take p + X - 2 steps of alpha + m/X beta. */
static void redcoll__chain_bcast(redcoll__ctx *c, void *buf, size_t n, int root, size_t seg) {
    int p = c->size, v = redcoll__vrank(c->rank, root, p);
    int up = v > 0 ? redcoll__unvrank(v - 1, root, p) : -1;
    int down = v + 1 < p ? redcoll__unvrank(v + 1, root, p) : -1;
    size_t off, prev = 0, plen = 0;
    if (p == 1) return;
    for (off = 0; off < n; off += seg) {
        size_t len = redcoll__seg_len(n, seg, off);
        if (up < 0) redcoll__send(c, down, redcoll__at(c, buf, off), len);
        else if (down >= 0 && off > 0)
            redcoll__sendrecv(c, down, redcoll__at(c, buf, prev), plen, up, redcoll__at(c, buf, off), len);
        else redcoll__recv(c, up, redcoll__at(c, buf, off), len);
        prev = off; plen = len;
    }
    if (up >= 0 && down >= 0) redcoll__send(c, down, redcoll__at(c, buf, prev), plen);
}

/* ---- building block: segmented binary-tree reduce ---------------------------
   Open MPI's generic tree reduce: per segment a node receives the partial
   result of its left child (lower ranks), then of its right child (higher
   ranks), and forms left op own op right; the first receive of segment k
   overlaps the send of segment k-1 to the parent (sendrecv), so a level
   costs two steps per segment, as in formula (5). `out`: the result on the
   tree root (may equal `in`). Scratch: two segments on inner nodes, one at
   the tree root. */
static void redcoll__tree_reduce(redcoll__ctx *c, const void *in, void *out, size_t n,
                                 size_t seg, int parent, int left, int right) {
    int first = left >= 0 ? left : right, second = left >= 0 ? right : -1;
    void *acc = NULL, *tmp = NULL, *a = NULL;
    size_t off, len = 0;

    if (first < 0) { /* leaf */
        if (parent < 0) redcoll__copy(c, out, in, n);
        else for (off = 0; off < n; off += seg)
            redcoll__send(c, parent, redcoll__at(c, in, off), redcoll__seg_len(n, seg, off));
        return;
    }
    tmp = redcoll__alloc(c, seg);
    if (parent >= 0) acc = redcoll__alloc(c, seg);
    for (off = 0; off < n && !c->err; off += seg) {
        if (parent >= 0 && off > 0) /* segment k-1 up while segment k comes in */
            redcoll__sendrecv(c, parent, acc, len, first, tmp, redcoll__seg_len(n, seg, off));
        len = redcoll__seg_len(n, seg, off);
        if (parent < 0 || off == 0) redcoll__recv(c, first, tmp, len);
        a = parent < 0 ? redcoll__at(c, out, off) : acc;
        redcoll__copy(c, a, redcoll__at(c, in, off), len);
        if (first == left) redcoll__reduce(c, tmp, a, len);   /* a = left op own */
        else redcoll__reduce_lo(c, a, tmp, len);              /* a = own op right */
        if (second >= 0) {
            redcoll__recv(c, second, tmp, len);
            redcoll__reduce_lo(c, a, tmp, len);               /* a = a op right */
        }
    }
    if (parent >= 0) redcoll__send(c, parent, acc, len);
    redcoll__free(c, acc, seg);
    redcoll__free(c, tmp, seg);
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
    tmp = p > 1 ? redcoll__alloc(c, n) : NULL;
    redcoll__copy(c, a->rbuf, a->sbuf, n);
    for (i = root + 1; i < p; ++i) {
        redcoll__recv(c, i, tmp, n);
        redcoll__reduce_lo(c, a->rbuf, tmp, n);
    }
    for (i = root - 1; i >= 0; --i) {
        redcoll__recv(c, i, tmp, n);
        redcoll__reduce(c, tmp, a->rbuf, n);
    }
    redcoll__free(c, tmp, n);
    return c->err;
}

/* Chain (section 2.1, formula (3); Open MPI "chain" with fanout 1): each rank
   receives and sends at most one message. Cost: (p-1)(alpha + m beta + m gamma).
   Any p. Non-commutative ops: array in rank order ending at rank 0, plus one
   message of m bytes to root when root != 0. */
static redcoll_result redcoll__reduce_chain(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__chain_reduce(c, a->sbuf, a->rbuf, a->count, a->root, a->count);
    return c->err;
}

/* Pipeline (section 2.1, formula (4)): the chain in X segments of
   opts.segment_bytes. Cost: (p + X - 2)(alpha + m/X beta + m/X gamma).
   Any p. Non-commutative ops: as chain (one extra m-byte message when root != 0). */
static redcoll_result redcoll__reduce_pipeline(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__chain_reduce(c, a->sbuf, a->rbuf, a->count, a->root, redcoll__seg_elems(c, a->count));
    return c->err;
}

/* Binary tree (section 2.1, formula (5)): a heap-shaped tree rotated to root
   (children of v: 2v+1, 2v+2), segmented. Cost: 2(lg(p+1) + X - 2) steps of
   alpha + m/X (beta + gamma) for a complete tree. Any p: an incomplete tree.
   Commutative ops only (the heap order mixes rank ranges). */
static redcoll_result redcoll__reduce_binary(redcoll__ctx *c, const redcoll__args *a) {
    int p = c->size, v = redcoll__vrank(c->rank, a->root, p);
    int parent = v > 0 ? redcoll__unvrank((v - 1) / 2, a->root, p) : -1;
    int left = 2 * v + 1 < p ? redcoll__unvrank(2 * v + 1, a->root, p) : -1;
    int right = 2 * v + 2 < p ? redcoll__unvrank(2 * v + 2, a->root, p) : -1;
    redcoll__tree_reduce(c, a->sbuf, a->rbuf, a->count, redcoll__seg_elems(c, a->count),
                         parent, left, right);
    return c->err;
}

/* In-order binary tree (section 2.1, Open MPI's choice for non-commutative
   ops): every subtree is a contiguous rank range, so left op own op right is
   canonical; the tree is rooted at root itself (no extra message), at most
   one level deeper than the balanced tree. Cost as binary. Any p, any op. */
static redcoll_result redcoll__reduce_in_order_binary(redcoll__ctx *c, const redcoll__args *a) {
    int parent, left, right;
    redcoll__inorder_links(c->rank, c->size, a->root, &parent, &left, &right);
    redcoll__tree_reduce(c, a->sbuf, a->rbuf, a->count, redcoll__seg_elems(c, a->count),
                         parent, left, right);
    return c->err;
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

/* Chain bcast (Open MPI "chain" with fanout 1): (p-1)(alpha + m beta). Any p. */
static redcoll_result redcoll__bcast_chain(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__chain_bcast(c, a->rbuf, a->count, a->root, a->count);
    return c->err;
}

/* Pipeline bcast (Open MPI "pipeline"; the inverse of formula (4)):
   (p + X - 2)(alpha + m/X beta), X segments of opts.segment_bytes. Any p. */
static redcoll_result redcoll__bcast_pipeline(redcoll__ctx *c, const redcoll__args *a) {
    redcoll__chain_bcast(c, a->rbuf, a->count, a->root, redcoll__seg_elems(c, a->count));
    return c->err;
}

/* ---- the hierarchical transformation ----------------------------------------
   Algorithm 1: G groups of consecutive ranks (sizes differ by at most one;
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
static int redcoll__linear_algo(redcoll_algo algo) {
    return algo == REDCOLL_ALGO_FLAT || algo == REDCOLL_ALGO_CHAIN || algo == REDCOLL_ALGO_PIPELINE;
}

/* The G minimising G + ceil(p/G), the step count of formulas (8) and (10):
   sqrt(p) when it divides p (first of equals). */
static int redcoll__sqrt_groups(int p) {
    int g, best = 1, cost = 1 + p;
    for (g = 2; g <= p && g * g <= 4 * p; ++g) {
        int k = g + (p + g - 1) / g;
        if (k < cost) { cost = k; best = g; }
    }
    return best;
}

/* The algorithm of one level: `want`, else `other` (the paper uses one
   algorithm at both levels) when `coll` has it, else the selector's choice
   (never hierarchical: binomial then). Returns AUTO when `want` is invalid. */
static redcoll_algo redcoll__level_algo(const redcoll__ctx *c, redcoll_coll coll, redcoll_algo want,
                                        redcoll_algo other, int p, size_t bytes) {
    if (want == REDCOLL_ALGO_AUTO && other != REDCOLL_ALGO_HIERARCHICAL && redcoll__find(coll, other))
        want = other;
    if (want == REDCOLL_ALGO_AUTO) {
        want = redcoll_select(coll, p, bytes, c->op.commutative, &c->o);
        if (want == REDCOLL_ALGO_HIERARCHICAL || !redcoll__find(coll, want)) want = REDCOLL_ALGO_BINOMIAL;
    }
    if (want == REDCOLL_ALGO_HIERARCHICAL || !redcoll__find(coll, want)) return REDCOLL_ALGO_AUTO;
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
    memset(h, 0, sizeof *h);
    if (c->o.by_node && t->node_of) {
        for (G = 1, r = 1; r < p; ++r) G += t->node_of(t->user, r) != t->node_of(t->user, r - 1);
    } else {
        G = c->o.groups ? c->o.groups : linear ? redcoll__sqrt_groups(p) : 1;
        if (G > p) G = p;
    }
    h->G = G;
    h->bytes = (size_t)(2 * G + 1) * sizeof(int);
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

/* Runs schedule `algo` of `coll` unchanged on the view `v` (same op, dtype,
   options); its failure is latched in c (the view's abort has released the peers). */
static void redcoll__run_on(redcoll__ctx *c, const redcoll_transport *v, redcoll_coll coll,
                            redcoll_algo algo, const redcoll__args *a) {
    redcoll__ctx sub;
    if (c->err) return;
    sub = *c;
    sub.t = v; sub.rank = v->rank; sub.size = v->size; sub.algo = algo;
    c->err = redcoll__find(coll, algo)->run(&sub, a);
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
    size_t n = a->count, bytes = n * c->esize;
    redcoll_algo inner = redcoll__level_algo(c, REDCOLL_COLL_REDUCE, c->o.inner_algo, c->o.outer_algo, c->size, bytes);
    redcoll_algo outer = redcoll__level_algo(c, REDCOLL_COLL_REDUCE, c->o.outer_algo, c->o.inner_algo, c->size, bytes);
    redcoll_result r = redcoll__level_ok(c, REDCOLL_COLL_REDUCE, inner);
    redcoll__hier h;
    redcoll_group gv;
    redcoll__args ia, oa;
    void *part = NULL;
    int lead, is_root = c->rank == a->root;

    if (r == REDCOLL_OK) r = redcoll__level_ok(c, REDCOLL_COLL_REDUCE, outer);
    if (r != REDCOLL_OK) return r;
    if (redcoll__hier_plan(c, &h, a->root, redcoll__linear_algo(inner) && redcoll__linear_algo(outer)))
        return c->err;
    lead = c->rank == h.leader[h.mine];
    ia = *a;
    ia.root = h.leader[h.mine] - h.start[h.mine];
    ia.rbuf = !lead ? NULL : is_root ? a->rbuf : (part = redcoll__alloc(c, n));
    redcoll__hier_inner(c, &h, &gv);
    redcoll__run_on(c, &gv.t, REDCOLL_COLL_REDUCE, inner, &ia);
    if (lead && h.G > 1) {
        oa = *a;
        oa.sbuf = ia.rbuf;
        oa.rbuf = is_root ? a->rbuf : NULL;
        oa.root = redcoll__hier_group_of(&h, a->root);
        oa.in_place = is_root;
        redcoll__hier_outer(c, &h, &gv);
        redcoll__run_on(c, &gv.t, REDCOLL_COLL_REDUCE, outer, &oa);
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
    size_t n = a->count, bytes = n * c->esize;
    redcoll_algo inner = redcoll__level_algo(c, REDCOLL_COLL_REDUCE, c->o.inner_algo, c->o.outer_algo, c->size, bytes);
    redcoll_algo outer = redcoll__level_algo(c, REDCOLL_COLL_ALLREDUCE, c->o.outer_algo, c->o.inner_algo, c->size, bytes);
    redcoll_algo down = redcoll__level_algo(c, REDCOLL_COLL_BCAST, inner, REDCOLL_ALGO_AUTO, c->size, bytes);
    redcoll_result r = redcoll__level_ok(c, REDCOLL_COLL_REDUCE, inner);
    redcoll__hier h;
    redcoll_group gv;
    redcoll__args ia;

    if (down == REDCOLL_ALGO_AUTO)
        down = redcoll__level_algo(c, REDCOLL_COLL_BCAST, REDCOLL_ALGO_AUTO, REDCOLL_ALGO_AUTO, c->size, bytes);
    if (r == REDCOLL_OK) r = redcoll__level_ok(c, REDCOLL_COLL_ALLREDUCE, outer);
    if (r != REDCOLL_OK) return r;
    if (redcoll__hier_plan(c, &h, 0, redcoll__linear_algo(inner) && redcoll__linear_algo(outer)))
        return c->err;
    ia = *a;
    ia.root = 0;
    ia.sbuf = a->rbuf;
    ia.rbuf = c->rank == h.leader[h.mine] ? a->rbuf : NULL;
    ia.in_place = 1;
    redcoll__hier_inner(c, &h, &gv);
    redcoll__run_on(c, &gv.t, REDCOLL_COLL_REDUCE, inner, &ia);
    if (c->rank == h.leader[h.mine] && h.G > 1) {
        redcoll_group ov;
        redcoll__hier_outer(c, &h, &ov);
        redcoll__run_on(c, &ov.t, REDCOLL_COLL_ALLREDUCE, outer, a);
    }
    ia.rbuf = a->rbuf;
    redcoll__run_on(c, &gv.t, REDCOLL_COLL_BCAST, down, &ia);
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
    size_t bytes = a->count * c->esize;
    redcoll_algo inner = redcoll__level_algo(c, REDCOLL_COLL_BCAST, c->o.inner_algo, c->o.outer_algo, c->size, bytes);
    redcoll_algo outer = redcoll__level_algo(c, REDCOLL_COLL_BCAST, c->o.outer_algo, c->o.inner_algo, c->size, bytes);
    redcoll__hier h;
    redcoll_group gv;
    redcoll__args la;

    if (inner == REDCOLL_ALGO_AUTO || outer == REDCOLL_ALGO_AUTO) return REDCOLL_ERR_INVALID_ARG;
    if (redcoll__hier_plan(c, &h, a->root, redcoll__linear_algo(inner) && redcoll__linear_algo(outer)))
        return c->err;
    la = *a;
    if (c->rank == h.leader[h.mine] && h.G > 1) {
        la.root = redcoll__hier_group_of(&h, a->root);
        redcoll__hier_outer(c, &h, &gv);
        redcoll__run_on(c, &gv.t, REDCOLL_COLL_BCAST, outer, &la);
    }
    la.root = h.leader[h.mine] - h.start[h.mine];
    redcoll__hier_inner(c, &h, &gv);
    redcoll__run_on(c, &gv.t, REDCOLL_COLL_BCAST, inner, &la);
    redcoll__hier_free(c, &h);
    return c->err;
}

/* ==== 7. Argument checks, registry and dispatch ========================== */

/* The schedule type and registry entry are declared in section 5, so that
   schedules that compose other schedules (hierarchical) can look them up. */

static const redcoll__entry redcoll__registry[] = {
    { REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_REDUCE_BCAST,       redcoll__allreduce_reduce_bcast,       1 },
    { REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RECURSIVE_DOUBLING, redcoll__allreduce_recursive_doubling, 1 },
    { REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HIERARCHICAL,       redcoll__allreduce_hierarchical,       1 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_BINOMIAL,           redcoll__reduce_binomial,              1 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_FLAT,               redcoll__reduce_flat,                  1 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_CHAIN,              redcoll__reduce_chain,                 1 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_PIPELINE,           redcoll__reduce_pipeline,              1 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_BINARY,             redcoll__reduce_binary,                0 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_IN_ORDER_BINARY,    redcoll__reduce_in_order_binary,       1 },
    { REDCOLL_COLL_REDUCE,    REDCOLL_ALGO_HIERARCHICAL,       redcoll__reduce_hierarchical,          1 },
    { REDCOLL_COLL_BCAST,     REDCOLL_ALGO_BINOMIAL,           redcoll__bcast_binomial,               1 },
    { REDCOLL_COLL_BCAST,     REDCOLL_ALGO_FLAT,               redcoll__bcast_flat,                   1 },
    { REDCOLL_COLL_BCAST,     REDCOLL_ALGO_CHAIN,              redcoll__bcast_chain,                  1 },
    { REDCOLL_COLL_BCAST,     REDCOLL_ALGO_PIPELINE,           redcoll__bcast_pipeline,               1 },
    { REDCOLL_COLL_BCAST,     REDCOLL_ALGO_HIERARCHICAL,       redcoll__bcast_hierarchical,           1 },
    { REDCOLL_COLL_GATHER,    REDCOLL_ALGO_BINOMIAL,           redcoll__gather_binomial,              1 },
    { REDCOLL_COLL_SCATTER,   REDCOLL_ALGO_BINOMIAL,           redcoll__scatter_binomial,             1 },
    { REDCOLL_COLL_BARRIER,   REDCOLL_ALGO_DISSEMINATION,      redcoll__barrier_dissemination,        1 },
};

static const redcoll__entry *redcoll__find(redcoll_coll coll, redcoll_algo algo) {
    size_t i;
    for (i = 0; i < sizeof redcoll__registry / sizeof redcoll__registry[0]; ++i)
        if (redcoll__registry[i].coll == coll && redcoll__registry[i].algo == algo)
            return &redcoll__registry[i];
    return NULL;
}

REDCOLL_API int redcoll_algo_supported(redcoll_coll coll, redcoll_algo algo) {
    return algo == REDCOLL_ALGO_AUTO ? (int)coll >= 0 && coll < REDCOLL_COLL_COUNT
                                     : redcoll__find(coll, algo) != NULL;
}

REDCOLL_API int redcoll_algo_keeps_order(redcoll_coll coll, redcoll_algo algo) {
    const redcoll__entry *e = redcoll__find(coll, algo);
    return e && e->keeps_order;
}

static const char *const redcoll__coll_names[REDCOLL_COLL_COUNT] = {
    "allreduce", "reduce", "reduce_scatter", "reduce_scatter_block", "allgather",
    "allgatherv", "bcast", "alltoall", "gather", "scatter", "barrier"
};

static const char *const redcoll__algo_names[REDCOLL_ALGO_COUNT] = {
    "auto", "binomial", "reduce_bcast", "recursive_doubling", "binary_tree",
    "halving_doubling", "binary_blocks", "ring", "butterfly", "elimination",
    "elimination_nonoverlap", "factor_ring", "bruck", "scatter_recursive_doubling",
    "scatter_ring", "scattered", "pairwise", "recursive_halving", "flat", "chain",
    "pipeline", "binary", "in_order_binary", "hierarchical", "dissemination"
};

REDCOLL_API const char *redcoll_coll_name(redcoll_coll coll) {
    return (int)coll >= 0 && coll < REDCOLL_COLL_COUNT ? redcoll__coll_names[coll] : "?";
}

REDCOLL_API const char *redcoll_algo_name(redcoll_algo algo) {
    return (int)algo >= 0 && algo < REDCOLL_ALGO_COUNT ? redcoll__algo_names[algo] : "?";
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
        "minloc", "maxloc", "user"
    };
    return (int)k >= 0 && k < REDCOLL_OP_KIND_COUNT ? names[k] : "?";
}

REDCOLL_API int redcoll_op_valid_for(redcoll_op_kind kind, redcoll_dtype dtype) {
    if (kind == REDCOLL_OP_USER) return redcoll_dtype_size(dtype) != 0;
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

REDCOLL_API redcoll_options redcoll_options_resolved(const redcoll_options *opts) {
    redcoll_options o;
    if (opts) o = *opts; else memset(&o, 0, sizeof o);
    o.segment_bytes = redcoll__def(o.segment_bytes, REDCOLL_DEFAULT_SEGMENT);
    o.model.alpha   = redcoll__def(o.model.alpha, REDCOLL_DEFAULT_ALPHA);
    o.model.beta    = redcoll__def(o.model.beta, REDCOLL_DEFAULT_BETA);
    o.model.gamma   = redcoll__def(o.model.gamma, REDCOLL_DEFAULT_GAMMA);
    o.model.f_alpha = redcoll__def(o.model.f_alpha, 1.0);
    o.model.f_beta  = redcoll__def(o.model.f_beta, 1.0);
    return o;
}

/* ---- selection --------------------------------------------------------------
   Short vectors favour few rounds; the rules per collective follow the papers'
   section 4 and are refined as schedules arrive. */
#define REDCOLL_SELECT_RD_MAX_BYTES ((size_t)2048) /* MPICH paper 4.5: recursive doubling up to 2 KB */

REDCOLL_API redcoll_algo redcoll_select(redcoll_coll coll, int p, size_t bytes,
                                        int commutative, const redcoll_options *opts) {
    (void)p; (void)commutative; (void)opts;
    switch (coll) {
    case REDCOLL_COLL_ALLREDUCE:
        return bytes <= REDCOLL_SELECT_RD_MAX_BYTES ? REDCOLL_ALGO_RECURSIVE_DOUBLING
                                                   : REDCOLL_ALGO_REDUCE_BCAST;
    case REDCOLL_COLL_REDUCE: case REDCOLL_COLL_BCAST:
    case REDCOLL_COLL_GATHER: case REDCOLL_COLL_SCATTER:
        return REDCOLL_ALGO_BINOMIAL;
    case REDCOLL_COLL_BARRIER: return REDCOLL_ALGO_DISSEMINATION;
    default: return REDCOLL_ALGO_AUTO;
    }
}

static int redcoll__transport_ok(const redcoll_transport *t) {
    if (!t || !t->send || !t->recv || !t->sendrecv) return 0;
    if (t->size < 1 || t->rank < 0 || t->rank >= t->size) return 0;
    return (t->isend && t->irecv && t->waitall) || (!t->isend && !t->irecv && !t->waitall);
}

static int redcoll__options_ok(const redcoll_options *o) {
    if (!o) return 1;
    if (!o->allocator.alloc_fn != !o->allocator.free_fn) return 0;
    if (o->groups < 0) return 0;
    if ((int)o->algo < 0 || o->algo >= REDCOLL_ALGO_COUNT) return 0;
    if ((int)o->inner_algo < 0 || o->inner_algo >= REDCOLL_ALGO_COUNT) return 0;
    if ((int)o->outer_algo < 0 || o->outer_algo >= REDCOLL_ALGO_COUNT) return 0;
    if (o->selector != REDCOLL_SELECTOR_PAPERS && o->selector != REDCOLL_SELECTOR_MPICH) return 0;
    return o->model.alpha >= 0 && o->model.beta >= 0 && o->model.gamma >= 0 &&
           o->model.f_alpha >= 0 && o->model.f_beta >= 0;
}

/* n * size without overflow. */
static int redcoll__mul_ok(size_t n, size_t size) { return size == 0 || n <= (size_t)-1 / size; }

/* Checks what every collective shares, resolves the options and picks the
   schedule. `op` is NULL for collectives that do not reduce; `sel_bytes` is
   what the selector sees. Touches no buffer. */
static redcoll_result redcoll__prepare(redcoll__ctx *c, const redcoll__entry **entry,
                                       redcoll_coll coll, const redcoll_transport *t,
                                       redcoll_dtype dtype, const redcoll_op *op,
                                       size_t sel_bytes, const redcoll_options *opts) {
    redcoll_algo algo;
    memset(c, 0, sizeof *c);
    if (!redcoll__transport_ok(t) || !redcoll__options_ok(opts)) return REDCOLL_ERR_INVALID_ARG;
    c->t = t; c->rank = t->rank; c->size = t->size;
    c->dtype = dtype;
    c->esize = redcoll_dtype_size(dtype);
    if (c->esize == 0) return REDCOLL_ERR_INVALID_ARG;
    if (op) {
        if (!redcoll__op_ok(op, dtype)) return REDCOLL_ERR_INVALID_ARG;
        c->op = *op;
        c->op.commutative = op->kind != REDCOLL_OP_USER || op->commutative;
        c->kernel = redcoll__kernel_for(op->kind, dtype);
    } else {
        c->op = redcoll_op_predefined(REDCOLL_OP_SUM);
    }
    c->o = redcoll_options_resolved(opts);
    c->dry = (t->flags & REDCOLL_TRANSPORT_NO_DATA) != 0;
    c->tag = 0x5ec0 + (int)coll;
    algo = c->o.algo;
    if (algo == REDCOLL_ALGO_AUTO) algo = redcoll_select(coll, c->size, sel_bytes, c->op.commutative, &c->o);
    *entry = redcoll__find(coll, algo);
    if (!*entry) return REDCOLL_ERR_INVALID_ARG;
    if (!c->op.commutative && !(*entry)->keeps_order) return REDCOLL_ERR_UNSUPPORTED;
    c->algo = algo;
    return REDCOLL_OK;
}

/* ==== Collectives: entry points ========================================== */

REDCOLL_API redcoll_result redcoll_allreduce(const redcoll_transport *t, const void *sbuf,
                                             void *rbuf, size_t count, redcoll_dtype dtype,
                                             redcoll_op op, const redcoll_options *opts) {
    redcoll__ctx c;
    const redcoll__entry *e;
    redcoll__args a;
    redcoll_result r = redcoll__prepare(&c, &e, REDCOLL_COLL_ALLREDUCE, t, dtype, &op,
                                        count * redcoll_dtype_size(dtype), opts);
    if (r) return r;
    if (!redcoll__mul_ok(count, c.esize)) return REDCOLL_ERR_INVALID_ARG;
    if (count && (!sbuf || !rbuf || rbuf == REDCOLL_IN_PLACE)) return REDCOLL_ERR_INVALID_ARG;
    if (count == 0) return REDCOLL_OK;
    memset(&a, 0, sizeof a);
    a.in_place = sbuf == REDCOLL_IN_PLACE;
    if (!a.in_place) redcoll__copy(&c, rbuf, sbuf, count);
    a.sbuf = rbuf; a.rbuf = rbuf; a.count = count;
    return e->run(&c, &a);
}

REDCOLL_API redcoll_result redcoll_reduce(const redcoll_transport *t, const void *sbuf,
                                          void *rbuf, size_t count, redcoll_dtype dtype,
                                          redcoll_op op, int root, const redcoll_options *opts) {
    redcoll__ctx c;
    const redcoll__entry *e;
    redcoll__args a;
    redcoll_result r = redcoll__prepare(&c, &e, REDCOLL_COLL_REDUCE, t, dtype, &op,
                                        count * redcoll_dtype_size(dtype), opts);
    if (r) return r;
    if (root < 0 || root >= c.size || !redcoll__mul_ok(count, c.esize)) return REDCOLL_ERR_INVALID_ARG;
    if (count && !sbuf) return REDCOLL_ERR_INVALID_ARG;
    if (count && c.rank == root && (!rbuf || rbuf == REDCOLL_IN_PLACE)) return REDCOLL_ERR_INVALID_ARG;
    if (sbuf == REDCOLL_IN_PLACE && c.rank != root) return REDCOLL_ERR_INVALID_ARG;
    if (count == 0) return REDCOLL_OK;
    memset(&a, 0, sizeof a);
    a.in_place = sbuf == REDCOLL_IN_PLACE;
    a.sbuf = a.in_place ? rbuf : sbuf;
    a.rbuf = c.rank == root ? rbuf : NULL;
    a.count = count; a.root = root;
    return e->run(&c, &a);
}

REDCOLL_API redcoll_result redcoll_bcast(const redcoll_transport *t, void *buf, size_t count,
                                         redcoll_dtype dtype, int root,
                                         const redcoll_options *opts) {
    redcoll__ctx c;
    const redcoll__entry *e;
    redcoll__args a;
    redcoll_result r = redcoll__prepare(&c, &e, REDCOLL_COLL_BCAST, t, dtype, NULL,
                                        count * redcoll_dtype_size(dtype), opts);
    if (r) return r;
    if (root < 0 || root >= c.size || !redcoll__mul_ok(count, c.esize)) return REDCOLL_ERR_INVALID_ARG;
    if (count && (!buf || buf == REDCOLL_IN_PLACE)) return REDCOLL_ERR_INVALID_ARG;
    if (count == 0) return REDCOLL_OK;
    memset(&a, 0, sizeof a);
    a.sbuf = buf; a.rbuf = buf; a.count = count; a.root = root;
    return e->run(&c, &a);
}

REDCOLL_API redcoll_result redcoll_gather(const redcoll_transport *t, const void *sbuf,
                                          void *rbuf, size_t count, redcoll_dtype dtype,
                                          int root, const redcoll_options *opts) {
    redcoll__ctx c;
    const redcoll__entry *e;
    redcoll__args a;
    redcoll_result r = redcoll__prepare(&c, &e, REDCOLL_COLL_GATHER, t, dtype, NULL,
                                        count * redcoll_dtype_size(dtype), opts);
    if (r) return r;
    if (root < 0 || root >= c.size) return REDCOLL_ERR_INVALID_ARG;
    if (!redcoll__mul_ok(count, c.esize * (size_t)c.size)) return REDCOLL_ERR_INVALID_ARG;
    if (count && !sbuf) return REDCOLL_ERR_INVALID_ARG;
    if (count && c.rank == root && (!rbuf || rbuf == REDCOLL_IN_PLACE)) return REDCOLL_ERR_INVALID_ARG;
    if (sbuf == REDCOLL_IN_PLACE && c.rank != root) return REDCOLL_ERR_INVALID_ARG;
    if (count == 0) return REDCOLL_OK;
    memset(&a, 0, sizeof a);
    a.in_place = sbuf == REDCOLL_IN_PLACE;
    a.sbuf = a.in_place ? redcoll__at(&c, rbuf, (size_t)root * count) : sbuf;
    a.rbuf = c.rank == root ? rbuf : NULL;
    a.count = count; a.root = root;
    return e->run(&c, &a);
}

REDCOLL_API redcoll_result redcoll_scatter(const redcoll_transport *t, const void *sbuf,
                                           void *rbuf, size_t count, redcoll_dtype dtype,
                                           int root, const redcoll_options *opts) {
    redcoll__ctx c;
    const redcoll__entry *e;
    redcoll__args a;
    redcoll_result r = redcoll__prepare(&c, &e, REDCOLL_COLL_SCATTER, t, dtype, NULL,
                                        count * redcoll_dtype_size(dtype), opts);
    if (r) return r;
    if (root < 0 || root >= c.size) return REDCOLL_ERR_INVALID_ARG;
    if (!redcoll__mul_ok(count, c.esize * (size_t)c.size)) return REDCOLL_ERR_INVALID_ARG;
    if (count && c.rank == root && (!sbuf || sbuf == REDCOLL_IN_PLACE)) return REDCOLL_ERR_INVALID_ARG;
    if (count && !rbuf) return REDCOLL_ERR_INVALID_ARG;
    if (rbuf == REDCOLL_IN_PLACE && c.rank != root) return REDCOLL_ERR_INVALID_ARG;
    if (count == 0) return REDCOLL_OK;
    memset(&a, 0, sizeof a);
    a.in_place = rbuf == REDCOLL_IN_PLACE;
    a.sbuf = c.rank == root ? sbuf : NULL;
    a.rbuf = a.in_place ? redcoll__at(&c, sbuf, (size_t)root * count) : rbuf;
    a.count = count; a.root = root;
    return e->run(&c, &a);
}

REDCOLL_API redcoll_result redcoll_barrier(const redcoll_transport *t,
                                           const redcoll_options *opts) {
    redcoll__ctx c;
    const redcoll__entry *e;
    redcoll__args a;
    redcoll_result r = redcoll__prepare(&c, &e, REDCOLL_COLL_BARRIER, t, REDCOLL_UINT8, NULL,
                                        0, opts);
    if (r) return r;
    memset(&a, 0, sizeof a);
    return e->run(&c, &a);
}

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
