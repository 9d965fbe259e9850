/* redcoll_pmpi.c - MPI drop-in: unmodified MPI programs run their collectives
   on redcoll - MIT licence (see redcoll.h)

   Built as build/libredcoll_pmpi.so by `make shim` (with mpicc.mpich), used as
       LD_PRELOAD=build/libredcoll_pmpi.so mpiexec.mpich -n 4 ./app
   Through MPI's profiling interface (every MPI_X is also callable as PMPI_X)
   it defines MPI_Allreduce, MPI_Reduce, MPI_Reduce_scatter(_block),
   MPI_Allgather(v), MPI_Bcast, MPI_Alltoall, MPI_Gather, MPI_Scatter,
   MPI_Barrier and their large-count _c forms (MPI 4), each running redcoll's
   schedule over transports/redcoll_mpi.h; whatever it cannot serve goes to
   PMPI_X unchanged. It also watches MPI_Op_create(_c) / MPI_Op_free (MPI has
   no call that returns a user op's function), MPI_Init(_thread) (where
   MPI_COMM_WORLD is set up) and MPI_Finalize.

   Design
   - A communicator whose ranks all share a node runs the schedules over
     shared memory (transports/redcoll_pshm.h: a segment made at first use,
     its name agreed through MPI); any other over MPI point-to-point
     (transports/redcoll_mpi.h). If the segment cannot be made (a /dev/shm
     too small) the communicator uses MPI and says so once.
   - One redcoll_mpi transport per communicator, created on first use inside
     a collective (it duplicates the communicator: redcoll's messages never
     meet the application's) and cached as a communicator attribute whose
     delete callback frees it on MPI_Comm_free; MPI_Finalize deletes the rest.
   - The transport is compiled here with its MPI_ calls renamed to PMPI_
     (below), so nothing the shim does re-enters the shim or a tool stacked
     on it; test/pmpi/run.sh checks the library references no MPI_ symbol.
   - Served or passed through is decided only from what MPI requires to be
     the same on every rank: the communicator, the op, and a reduction's
     datatype. A local choice could strand the other ranks in redcoll while
     one rank is in MPI. The data-movement collectives (bcast, gather,
     scatter, allgather(v), alltoall) allow different datatypes and
     displacements per rank, so they serve every layout: contiguous ones in
     place, the others packed to a staging buffer (MPI_Pack: the native
     bytes on a homogeneous machine) and unpacked after. Reductions need the
     elements in place, so their datatype must be contiguous, or they pass.
   - Errors: a redcoll result becomes an MPI error code (the MPI error the
     transport saw, or the matching class) raised through the communicator's
     error handler, and returned. Invalid arguments pass through, so MPI
     reports them exactly as it would.
   - Threads: per-communicator state is touched only by the thread running a
     collective on that communicator (MPI's rule). The shared tables (live
     states, user ops) are guarded by a mutex never held across an MPI call;
     the datatype cache's mutex is held across MPI calls but never taken by
     an MPI callback, so neither can deadlock with MPI's own lock.

   Environment (read once, at the first call)
     REDCOLL_DISABLE=1              every call goes to PMPI_ unchanged
     REDCOLL_SHM=0                  no shared-memory transport: MPI point-to-point
                                    for every communicator
     REDCOLL_SHM_CELLS=n, REDCOLL_SHM_CELL_BYTES=b
                                    the segment's bounce cells per rank (default
                                    16 of 32 KiB; see redcoll_pshm_config)
     REDCOLL_<COLL>_ALGORITHM=name  force a schedule (COLL: ALLREDUCE, REDUCE,
                                    REDUCE_SCATTER, REDUCE_SCATTER_BLOCK,
                                    ALLGATHER, ALLGATHERV, BCAST, ALLTOALL,
                                    GATHER, SCATTER, BARRIER); unknown or
                                    unsupported names are reported once and
                                    auto is used
     REDCOLL_VERBOSE=1              rank 0 of each communicator (of each group
                                    of an intercommunicator) prints, once per
                                    (communicator, collective, size class,
                                    algorithm), the algorithm chosen, and once
                                    per reason what passed through, and once per
                                    communicator the transport (shared memory,
                                    or MPI and why)
     REDCOLL_PROFILE=file           the cost model auto chooses by (a profile
                                    as `redcoll tune` writes it); a file that
                                    cannot be read or parsed is reported once
                                    and the default model is used
     REDCOLL_SUM_EXACT=1            reproducible sums: MPI_SUM on float and
                                    double types (C, Fortran, complex parts) is
                                    the correctly rounded exact sum; every rank
                                    must set it alike (an error otherwise)

   Fortran: MPI's Fortran bindings call the C entry points, so Fortran
   programs are served as C ones, their predefined datatypes mapped by the
   table in "Predefined datatypes beyond C's" below. */
#include <mpi.h>

/* The transport's MPI calls become PMPI_ calls in this file only (a call
   missing here shows as an MPI_ symbol, which test/pmpi/run.sh rejects). */
#define MPI_Abort PMPI_Abort
#define MPI_Allgather PMPI_Allgather
#define MPI_Allgatherv PMPI_Allgatherv
#define MPI_Allreduce PMPI_Allreduce
#define MPI_Alltoall PMPI_Alltoall
#define MPI_Barrier PMPI_Barrier
#define MPI_Bcast PMPI_Bcast
#define MPI_Cancel PMPI_Cancel
#define MPI_Comm_dup PMPI_Comm_dup
#define MPI_Comm_free PMPI_Comm_free
#define MPI_Comm_get_attr PMPI_Comm_get_attr
#define MPI_Comm_rank PMPI_Comm_rank
#define MPI_Comm_set_errhandler PMPI_Comm_set_errhandler
#define MPI_Comm_size PMPI_Comm_size
#define MPI_Comm_split PMPI_Comm_split
#define MPI_Comm_split_type PMPI_Comm_split_type
#define MPI_Error_class PMPI_Error_class
#define MPI_Error_string PMPI_Error_string
#define MPI_Finalize PMPI_Finalize
#define MPI_Gather PMPI_Gather
#define MPI_Get_count PMPI_Get_count
#define MPI_Initialized PMPI_Initialized
#define MPI_Iprobe PMPI_Iprobe
#define MPI_Irecv PMPI_Irecv
#define MPI_Isend PMPI_Isend
#define MPI_Op_create PMPI_Op_create
#define MPI_Op_free PMPI_Op_free
#define MPI_Recv PMPI_Recv
#define MPI_Reduce PMPI_Reduce
#define MPI_Reduce_scatter PMPI_Reduce_scatter
#define MPI_Reduce_scatter_block PMPI_Reduce_scatter_block
#define MPI_Request_free PMPI_Request_free
#define MPI_Scatter PMPI_Scatter
#define MPI_Send PMPI_Send
#define MPI_Test PMPI_Test
#define MPI_Testall PMPI_Testall
#define MPI_Wait PMPI_Wait

#define REDCOLL_STATIC /* nothing of redcoll is exported: the application may embed its own */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mpi.h"
#include "transports/redcoll_pshm.h"

#undef MPI_Abort
#undef MPI_Allgather
#undef MPI_Allgatherv
#undef MPI_Allreduce
#undef MPI_Alltoall
#undef MPI_Barrier
#undef MPI_Bcast
#undef MPI_Cancel
#undef MPI_Comm_dup
#undef MPI_Comm_free
#undef MPI_Comm_get_attr
#undef MPI_Comm_rank
#undef MPI_Comm_set_errhandler
#undef MPI_Comm_size
#undef MPI_Comm_split
#undef MPI_Comm_split_type
#undef MPI_Error_class
#undef MPI_Error_string
#undef MPI_Finalize
#undef MPI_Gather
#undef MPI_Get_count
#undef MPI_Initialized
#undef MPI_Iprobe
#undef MPI_Irecv
#undef MPI_Isend
#undef MPI_Op_create
#undef MPI_Op_free
#undef MPI_Recv
#undef MPI_Reduce
#undef MPI_Reduce_scatter
#undef MPI_Reduce_scatter_block
#undef MPI_Request_free
#undef MPI_Scatter
#undef MPI_Send
#undef MPI_Test
#undef MPI_Testall
#undef MPI_Wait

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
#define SHIM_LARGE_COUNT 1 /* the _c entry points exist */
#else
#define SHIM_LARGE_COUNT 0
#endif

/* ==== Global state ========================================================= */

/* Why a call went to MPI (printed once per communicator, collective, reason). */
typedef enum shim_reason {
    SHIM_PASS_INTERCOMM, SHIM_PASS_NO_TRANSPORT, SHIM_PASS_ARGS, SHIM_PASS_TYPE, SHIM_PASS_OP,
    SHIM_PASS_DERIVED_OP, SHIM_PASS_MODES,
    SHIM_PASS_COUNT
} shim_reason;

static const char *const shim_reason_text[SHIM_PASS_COUNT] = {
    "intercommunicator", "no redcoll transport on this communicator",
    "invalid or erroneous arguments (MPI reports them)",
    "datatype is not contiguous (holes, gaps or reordering)",
    "op not mapped (unknown, or predefined op on this datatype)",
    "predefined op on a derived datatype (MPI reduces it; REDCOLL_SUM_EXACT does not apply)",
    "the ranks disagree on REDCOLL_SUM_EXACT"
};

#define SHIM_CLASSES 65 /* size classes: 0 bytes, then [2^k, 2^(k+1)) for k < 64 */
#define SHIM_ALGO_BYTES ((REDCOLL_ALGO_COUNT + 7) / 8)

/* One per communicator the shim has seen, the value of its attribute.
   Reference counted: the attribute holds one reference, and each request
   that runs on it holds one (shim_comm_hold), because MPI lets the
   application free a communicator while collectives on it are pending
   (they complete normally). The last reference to go frees it. */
typedef struct shim_comm {
    redcoll_mpi       m;         /* the MPI transport, when ok */
    redcoll_pshm     *pshm;      /* shared memory: of the communicator on one node, or of
                                    this rank's node when it spans nodes */
    const redcoll_transport *t;  /* what the collectives run on: pshm's or &m.t */
    redcoll_mpi       inside;    /* this rank's node's MPI transport, when has_inside */
    int               has_inside;/* m spans nodes and its node entry is &inside.t */
    int               ok;        /* 1: served; 0: passes through (why: `why`) */
    shim_reason       why;
    int               id;        /* order of creation, names unnamed comms in verbose lines */
    int               rank, size;
    int               ranks_per_node; /* the transport's nodes as blocks of this many
                                         ranks (what redcoll_select can price); 0: one */
    MPI_Comm          user;      /* the application's communicator */
    size_t           *counts;    /* p entries: irregular counts of the call running */
    MPI_Datatype      last_type; /* the last predefined (datatype, op) of a reduction */
    MPI_Op            last_op;   /* and how redcoll sees it: mapping them costs more */
    redcoll_dtype     last_dtype;/* than a small call (MPI handles are no integer */
    redcoll_op        last_rop;  /* constants, so the helpers search) */
    MPI_Count         last_extent;
    MPI_Count         last_mult;
    MPI_Datatype      last_named;       /* the last predefined datatype a side had */
    MPI_Count         last_named_size;  /* and its size and extent (four MPI calls) */
    MPI_Count         last_named_extent;
    unsigned char    *printed;   /* verbose: [coll][class][algo bit], lazily allocated */
    unsigned          passed[REDCOLL_COLL_COUNT]; /* verbose: reason bits printed */
    unsigned          forced_differ; /* bit c: the ranks force different algorithms for
                                        collective c (REDCOLL_<COLL>_ALGORITHM) */
    int               exact_said; /* verbose: the reproducible mode was said */
    int               refs;      /* the attribute's and the requests' (shim_g.lock) */
    _Atomic int       freed;     /* the attribute is gone: `user` names no communicator
                                    (or, once MPI reuses the handle, another one) */
    struct shim_comm *next, *prev;
} shim_comm;

/* A derived datatype's layout, cached as a datatype attribute. */
typedef struct shim_type {
    MPI_Count         size, extent, true_lb, true_extent;
    int               packed;    /* one element is its size bytes from true_lb, in order */
    MPI_Datatype      type;
    struct shim_type *next, *prev;
} shim_type;

/* A user op seen by MPI_Op_create(_c). */
typedef struct shim_uop {
    MPI_Op               op;
    MPI_User_function   *fn;
#if SHIM_LARGE_COUNT
    MPI_User_function_c *fn_c;
#endif
    int                  commute;
} shim_uop;

static struct {
    pthread_once_t  once;
    pthread_mutex_t lock;       /* comms, types, uops lists, comm refs; never held across MPI calls */
    pthread_mutex_t type_lock;  /* computing a datatype's layout once; no MPI callback takes it */
    int             ready;      /* keyvals exist */
    int             disabled, verbose;
    redcoll_algo    forced[REDCOLL_COLL_COUNT];
    int             comm_key, type_key;
    int             next_id;
    shim_comm      *comms;
    shim_type      *types;
    shim_uop       *uops;
    size_t          nuops, cap_uops;
    int             have_model; /* REDCOLL_PROFILE was read */
    redcoll_cost_model model;
    int             shm_off;    /* REDCOLL_SHM=0 */
    int             shm_said;   /* the fallback to MPI was reported */
    pthread_mutex_t err_lock;   /* err_code's string, set and raised (shim_raise_told) */
    int             err_code;   /* redcoll's own MPI error code; 0: not made yet, -1: cannot */
} shim_g = { PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0,
             { REDCOLL_ALGO_AUTO }, MPI_KEYVAL_INVALID, MPI_KEYVAL_INVALID, 0, NULL, NULL, NULL,
             0, 0, 0, { 0, 0, 0, 0, 0, 0, 0 }, 0, 0, PTHREAD_MUTEX_INITIALIZER, 0 };

/* The shared-memory segments' shape: REDCOLL_SHM_CELLS, REDCOLL_SHM_CELL_BYTES. */
static redcoll_pshm_config shim_shm_cfg;

/* MPI_COMM_WORLD's state, found without the attribute lookup (the common
   case of a small call, where that lookup is a third of the shim's cost). */
static shim_comm *_Atomic shim_world;

/* Doubly linked lists of the live states, for MPI_Finalize. */
#define SHIM_LINK(head, x)                                                      \
    do {                                                                        \
        pthread_mutex_lock(&shim_g.lock);                                       \
        (x)->prev = NULL; (x)->next = (head);                                   \
        if (head) (head)->prev = (x);                                           \
        (head) = (x);                                                           \
        pthread_mutex_unlock(&shim_g.lock);                                     \
    } while (0)
#define SHIM_UNLINK(head, x)                                                    \
    do {                                                                        \
        pthread_mutex_lock(&shim_g.lock);                                       \
        if ((x)->prev) (x)->prev->next = (x)->next; else (head) = (x)->next;    \
        if ((x)->next) (x)->next->prev = (x)->prev;                             \
        pthread_mutex_unlock(&shim_g.lock);                                     \
    } while (0)

static int shim_world_rank(void) {
    int r = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Frees a communicator's state: its transports and memory. Nothing in it
   waits for the peers (MPICH's and Open MPI's MPI_Comm_free of the
   duplicates are local; the shared-memory view is left), so it may run on
   each rank in a different call, wherever the last reference goes. */
static void shim_comm_free(shim_comm *s) {
    if (s->has_inside) redcoll_mpi_finalize(&s->inside);
    redcoll_pshm_destroy(s->pshm);
    if (s->ok) redcoll_mpi_finalize(&s->m);
    free(s->counts);
    free(s->printed);
    free(s);
}

/* A reference for a request that runs on s, from its start (or
   persistent init) to its end. */
static void shim_comm_hold(shim_comm *s) {
    pthread_mutex_lock(&shim_g.lock);
    s->refs++;
    pthread_mutex_unlock(&shim_g.lock);
}

/* Drops a reference; the last one frees s, on whichever thread and in
   whichever call drops it (the lock is not held across the MPI calls of
   shim_comm_free). */
static void shim_comm_release(shim_comm *s) {
    int last;
    if (!s) return;
    pthread_mutex_lock(&shim_g.lock);
    last = --s->refs == 0;
    pthread_mutex_unlock(&shim_g.lock);
    if (last) shim_comm_free(s);
}

/* The application's communicator goes (MPI_Comm_free, MPI_Finalize): its
   attribute's reference with it. Requests still running on s keep it and
   its transports; from now on nothing may name the communicator by its
   handle. No MPI call on `comm` here: MPI may run this while it
   deallocates the object, when calls on the handle fail. */
static int shim_comm_delete(MPI_Comm comm, int key, void *attr, void *extra) {
    shim_comm *s = (shim_comm *)attr;
    (void)comm; (void)key; (void)extra;
    if (atomic_load(&shim_world) == s) atomic_store(&shim_world, NULL);
    SHIM_UNLINK(shim_g.comms, s);
    atomic_store(&s->freed, 1);
    shim_comm_release(s);
    return MPI_SUCCESS;
}

static int shim_type_delete(MPI_Datatype type, int key, void *attr, void *extra) {
    shim_type *ti = (shim_type *)attr;
    (void)type; (void)key; (void)extra;
    SHIM_UNLINK(shim_g.types, ti);
    free(ti);
    return MPI_SUCCESS;
}

/* REDCOLL_<COLL>_ALGORITHM for one collective; complaints from world rank 0 only. */
static void shim_read_algorithm(redcoll_coll coll, int loud) {
    char var[64];
    const char *name = redcoll_coll_name(coll), *val;
    redcoll_algo a;
    size_t i, n = strlen("REDCOLL_");
    memcpy(var, "REDCOLL_", n);
    for (i = 0; name[i] && n < sizeof var - 16; ++i)
        var[n++] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
    memcpy(var + n, "_ALGORITHM", sizeof "_ALGORITHM");
    val = getenv(var);
    if (!val || !*val) return;
    if (redcoll_algo_from_name(val, &a) && redcoll_algo_supported(coll, a)) {
        shim_g.forced[coll] = a;
        return;
    }
    if (loud) {
        fprintf(stderr, "redcoll: %s=%s: no such %s algorithm; using auto. Known:", var, val, name);
        for (i = 1; i < REDCOLL_ALGO_COUNT; ++i)
            if (redcoll_algo_supported(coll, (redcoll_algo)i))
                fprintf(stderr, " %s", redcoll_algo_name((redcoll_algo)i));
        fputc('\n', stderr);
    }
}

/* REDCOLL_PROFILE: the cost model auto chooses by. Every rank reads the
   file, so every rank chooses alike; only `loud` (world rank 0) reports. */
static void shim_read_profile(const char *path, int loud) {
    char err[160] = "", *text = NULL;
    long len = -1;
    FILE *f = fopen(path, "rb");
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = (char *)malloc((size_t)len + 1)) != NULL && fread(text, 1, (size_t)len, f) == (size_t)len) {
        text[len] = 0;
        if (redcoll_cost_model_parse(text, &shim_g.model, err, sizeof err) == REDCOLL_OK)
            shim_g.have_model = 1;
    } else {
        snprintf(err, sizeof err, "%s", f ? "cannot read it" : strerror(errno));
    }
    if (f) fclose(f);
    free(text);
    if (loud && !shim_g.have_model)
        fprintf(stderr, "redcoll: REDCOLL_PROFILE=%s ignored (%s); auto uses the default cost model\n",
                path, err);
    else if (loud && shim_g.verbose)
        fprintf(stderr, "redcoll: REDCOLL_PROFILE=%s: auto chooses by its cost model\n", path);
}

static void shim_named_init(void); /* Fortran and complex types, REDCOLL_SUM_EXACT (below) */

/* Once per process, at the first intercepted call (MPI is initialised). */
static void shim_init(void) {
    const char *v = getenv("REDCOLL_DISABLE");
    int loud = shim_world_rank() == 0, c;
    shim_g.disabled = v && *v && strcmp(v, "0") != 0;
    v = getenv("REDCOLL_VERBOSE");
    shim_g.verbose = v && *v && strcmp(v, "0") != 0;
    v = getenv("REDCOLL_SHM");
    shim_g.shm_off = v && strcmp(v, "0") == 0;
    if ((v = getenv("REDCOLL_SHM_CELLS")) && *v) shim_shm_cfg.ncells = atoi(v);
    if ((v = getenv("REDCOLL_SHM_CELL_BYTES")) && *v) shim_shm_cfg.cell_bytes = (size_t)strtoull(v, NULL, 10);
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c) shim_read_algorithm((redcoll_coll)c, loud);
    shim_named_init();
    v = getenv("REDCOLL_PROFILE");
    if (v && *v) shim_read_profile(v, loud);
    if (shim_g.disabled) {
        if (shim_g.verbose && loud)
            fprintf(stderr, "redcoll: REDCOLL_DISABLE=%s: every collective goes to MPI\n",
                    getenv("REDCOLL_DISABLE"));
        return;
    }
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, shim_comm_delete, &shim_g.comm_key, NULL) !=
            MPI_SUCCESS ||
        PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, shim_type_delete, &shim_g.type_key, NULL) !=
            MPI_SUCCESS) {
        if (loud) fprintf(stderr, "redcoll: no attribute keyval; every collective goes to MPI\n");
        shim_g.disabled = 1;
        return;
    }
    shim_g.ready = 1;
}

static int shim_start(void) {
    pthread_once(&shim_g.once, shim_init);
    return !shim_g.disabled;
}

/* ==== Communicators ======================================================== */

/* The transport's nodes as redcoll_select sees them: blocks of k
   consecutive ranks when they are (the last may have fewer), else nodes of
   rank 0's size; 0 for one node. */
static int shim_blocks(const redcoll_mpi *m) {
    int p = m->t.size, k = 0, r;
    if (m->nodes <= 1) return 0;
    while (k < p && m->node_ids[k] == m->node_ids[0]) ++k;
    for (r = 0; r < p; ++r)
        if (m->node_ids[r] != r / k) break;
    if (r < p) /* not blocks: nodes of rank 0's size */
        for (k = 0, r = 0; r < p; ++r) k += m->node_ids[r] == m->node_ids[0];
    return k;
}

static void shim_comm_label(const shim_comm *s, char *out, size_t n);

/* MPI's progress engine, driven while a rank waits on shared memory: MPI
   promises that traffic matched on both sides (a peer's rendezvous send or
   one-sided access into this rank, this rank's own requests in flight)
   completes while the rank is blocked in any MPI call, and MPI's own
   collectives keep polling it. A probe that finds nothing moves MPI's
   engine (MPICH and Open MPI both progress in MPI_Iprobe) and takes no
   message: nothing is sent on the transport's duplicate while its
   collectives run on shared memory. */
static void shim_mpi_progress(void *arg) {
    const shim_comm *s = (const shim_comm *)arg;
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s->m.comm, &flag, MPI_STATUS_IGNORE);
}

/* The segment's configuration for communicator s: the environment's shape
   and MPI's progress while a rank waits. */
static redcoll_pshm_config shim_shm_of(shim_comm *s) {
    redcoll_pshm_config c = shim_shm_cfg;
    c.progress = shim_mpi_progress;
    c.progress_arg = s;
    return c;
}

/* A communicator whose ranks span nodes (the MPI transport's node_of, or
   REDCOLL_RANKS_PER_NODE): a transport inside every node of two or more
   ranks, on its ranks' communicator, becomes the MPI transport's node
   entry, so the node-aware rows run their levels inside a node on it and
   only their network part over the communicator. Inside: shared memory
   (unless REDCOLL_SHM=0), else MPI point-to-point on the node's
   communicator. Collective over s->m.comm; the ranks of a node decide
   alike (redcoll_pshm_init_mpi and a failed MPI_Comm_dup fail on all of
   them), and a node whose transport cannot be made runs its levels over
   the communicator. Returns what the node runs on, in words. */
static const char *shim_node_open(shim_comm *s) {
    MPI_Comm node;
    redcoll_mpi_config cfg;
    redcoll_pshm_config shm = shim_shm_of(s);
    if (redcoll_mpi_split_node(&s->m, &node) != REDCOLL_OK) return "the communicator";
    if (!shim_g.shm_off && redcoll_pshm_init_mpi(&s->pshm, node, &shm) == REDCOLL_OK) {
        redcoll_mpi_set_node(&s->m, redcoll_pshm_transport(s->pshm));
    } else {
        memset(&cfg, 0, sizeof cfg);
        cfg.ranks_per_node = s->size; /* all of them one node */
        if (redcoll_mpi_init(&s->inside, node, &cfg) == REDCOLL_OK) {
            s->has_inside = 1;
            redcoll_mpi_set_node(&s->m, &s->inside.t);
        }
    }
    PMPI_Comm_free(&node);
    return s->pshm ? "shared memory" : s->has_inside ? "MPI point-to-point on the node's communicator"
                                                     : "the communicator";
}

/* The transport of a served communicator: shared memory when its ranks all
   share a node (and REDCOLL_SHM is not 0), else MPI point-to-point, with a
   transport inside every node when they span nodes (shim_node_open). Every
   rank decides alike: the node ids are redcoll_mpi_init's, and
   redcoll_pshm_init_mpi returns the same result on every rank. A segment
   that cannot be made (a /dev/shm too small) is reported once per process;
   REDCOLL_VERBOSE=1 names the transport of every communicator. */
static void shim_shm_open(shim_comm *s) {
    char label[MPI_MAX_OBJECT_NAME + 16];
    const char *why = NULL, *inside = NULL;
    redcoll_pshm_config shm = shim_shm_of(s);
    s->t = &s->m.t;
    if (s->size < 2) return; /* nothing moves */
    if (s->m.nodes > 1) {
        if (s->m.nodes == s->size) return; /* nodes of one rank: nothing inside */
        inside = shim_node_open(s);
    } else if (shim_g.shm_off) why = "REDCOLL_SHM=0";
    else if (redcoll_pshm_init_mpi(&s->pshm, s->m.comm, &shm) == REDCOLL_OK)
        s->t = redcoll_pshm_transport(s->pshm);
    else {
        why = "no shared-memory segment";
        if (s->rank == 0 && !shim_g.shm_said) {
            shim_g.shm_said = 1;
            fprintf(stderr, "redcoll: shared memory unavailable, collectives use MPI point-to-point: %s; "
                    "REDCOLL_SHM_CELLS and REDCOLL_SHM_CELL_BYTES make the segment smaller\n",
                    redcoll_pshm_last_error());
        }
    }
    if (!shim_g.verbose || s->rank != 0) return;
    shim_comm_label(s, label, sizeof label);
    if (inside) fprintf(stderr, "redcoll: %s (p=%d): %d nodes; inside this node: %s\n", label, s->size, s->m.nodes, inside);
    else if (why) fprintf(stderr, "redcoll: %s (p=%d): transport MPI point-to-point (%s)\n", label, s->size, why);
    else fprintf(stderr, "redcoll: %s (p=%d): transport shared memory (processes of one node)\n", label, s->size);
}

static int shim_modes_agree(shim_comm *s); /* below, with REDCOLL_SUM_EXACT; also forced algorithms */

static shim_comm *shim_comm_create(MPI_Comm comm) {
    shim_comm *s = (shim_comm *)calloc(1, sizeof *s);
    int inter = 0;
    if (!s) return NULL;
    s->user = comm;
    s->refs = 1; /* the attribute's */
    s->last_type = MPI_DATATYPE_NULL;
    s->last_op = MPI_OP_NULL;
    s->last_named = MPI_DATATYPE_NULL;
    pthread_mutex_lock(&shim_g.lock);
    s->id = shim_g.next_id++;
    pthread_mutex_unlock(&shim_g.lock);
    PMPI_Comm_rank(comm, &s->rank);
    PMPI_Comm_size(comm, &s->size);
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) {
        s->why = SHIM_PASS_INTERCOMM;
    } else if (redcoll_mpi_init(&s->m, comm, NULL) != REDCOLL_OK) { /* collective: first */
        s->why = SHIM_PASS_NO_TRANSPORT; /* a failed MPI_Comm_dup fails on every rank */
    } else if (!(s->counts = (size_t *)malloc(sizeof(size_t) * (size_t)s->size))) {
        redcoll_mpi_finalize(&s->m);
        s->why = SHIM_PASS_NO_TRANSPORT;
    } else if (!shim_modes_agree(s)) {
        redcoll_mpi_finalize(&s->m);
        s->why = SHIM_PASS_MODES;
    } else {
        s->ok = 1;
        s->ranks_per_node = shim_blocks(&s->m);
        shim_shm_open(s); /* collective, after the MPI transport (it uses its duplicate) */
    }
    if (PMPI_Comm_set_attr(comm, shim_g.comm_key, s) != MPI_SUCCESS) {
        shim_comm_free(s);
        return NULL;
    }
    SHIM_LINK(shim_g.comms, s);
    if (comm == MPI_COMM_WORLD) atomic_store(&shim_world, s);
    if (s->why == SHIM_PASS_MODES) PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
    return s;
}

/* The state of `comm`, created on first use when `make` (collective: call
   it on every rank of the collective, before any decision that could
   differ). NULL: pass through (disabled, MPI_COMM_NULL, no state could be
   made, or none yet and not `make`). */
static inline shim_comm *shim_comm_find(MPI_Comm comm, int make) {
    void *v = NULL;
    int flag = 0;
    if (comm == MPI_COMM_WORLD && (v = atomic_load_explicit(&shim_world, memory_order_acquire)))
        return (shim_comm *)v; /* exists only while the shim is enabled */
    if (!shim_start() || comm == MPI_COMM_NULL) return NULL;
    if (PMPI_Comm_get_attr(comm, shim_g.comm_key, &v, &flag) != MPI_SUCCESS) return NULL;
    return flag ? (shim_comm *)v : make ? shim_comm_create(comm) : NULL;
}

static inline shim_comm *shim_comm_of(MPI_Comm comm) { return shim_comm_find(comm, 1); }

/* ==== Verbose lines ======================================================== */

static void shim_comm_label(const shim_comm *s, char *out, size_t n) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0;
    name[0] = 0;
    if (atomic_load(&s->freed)) { snprintf(out, n, "comm %d (freed)", s->id); return; }
    PMPI_Comm_get_name(s->user, name, &len);
    if (len > 0) snprintf(out, n, "%s", name);
    else snprintf(out, n, "comm %d", s->id);
}

static int shim_size_class(size_t bytes) {
    int k = 0;
    while (bytes) { ++k; bytes >>= 1; }
    return k; /* 0 for 0 bytes; k for [2^(k-1), 2^k) */
}

static void shim_print_choice(shim_comm *s, redcoll_coll coll, size_t bytes, redcoll_algo algo,
                              const char *how) {
    int cls = shim_size_class(bytes);
    size_t at = ((size_t)coll * SHIM_CLASSES + (size_t)cls) * SHIM_ALGO_BYTES + (size_t)algo / 8;
    unsigned char bit = (unsigned char)(1u << (algo % 8));
    char label[MPI_MAX_OBJECT_NAME + 16];
    if (s->rank != 0) return;
    if (!s->printed) {
        s->printed = (unsigned char *)calloc((size_t)REDCOLL_COLL_COUNT * SHIM_CLASSES,
                                             SHIM_ALGO_BYTES);
        if (!s->printed) return;
    }
    if (s->printed[at] & bit) return;
    s->printed[at] |= bit;
    shim_comm_label(s, label, sizeof label);
    if (cls == 0)
        fprintf(stderr, "redcoll: %s on %s (p=%d), 0 B: %s (%s)\n", redcoll_coll_name(coll),
                label, s->size, redcoll_algo_name(algo), how);
    else
        fprintf(stderr, "redcoll: %s on %s (p=%d), %zu..%zu B: %s (%s)\n", redcoll_coll_name(coll),
                label, s->size, (size_t)1 << (cls - 1), ((size_t)1 << (cls - 1)) * 2 - 1,
                redcoll_algo_name(algo), how);
}

/* Returns 0 (the call passes through), printing why once when verbose. */
static int shim_pass(shim_comm *s, redcoll_coll coll, shim_reason why) {
    char label[MPI_MAX_OBJECT_NAME + 16];
    if (!shim_g.verbose || !s || s->rank != 0 || (s->passed[coll] & (1u << why))) return 0;
    s->passed[coll] |= 1u << why;
    shim_comm_label(s, label, sizeof label);
    fprintf(stderr, "redcoll: %s on %s (p=%d): passed to MPI: %s\n", redcoll_coll_name(coll), label,
            s->size, shim_reason_text[why]);
    return 0;
}

/* ==== The call being served ================================================ */

struct shim_req;

typedef struct shim_call {
    shim_comm             *s;
    MPI_Comm               comm;
    redcoll_coll           coll;
    int                    was_failed; /* the transport failed in an earlier call */
    int                    refused;    /* the ranks force different algorithms: not run */
    const redcoll_options *opts; /* NULL (auto) or &o */
    redcoll_options        o;
    struct shim_req       *nb;   /* a start (MPI_I<coll>, MPI_Start) or a persistent
                                    init fills this request; NULL: a blocking call */
} shim_call;

/* The request the call being made on this thread fills (section
   "Non-blocking and persistent collectives"); NULL for blocking calls. */
static _Thread_local struct shim_req *shim_nb_into;

static shim_comm *shim_nb_comm(const struct shim_req *q);

/* The state of comm if it is served; 0 (pass through) otherwise. A start
   runs on the state its request holds: a persistent one's communicator
   may have been freed since the init (its handle then names nothing, or
   another communicator). */
static inline int shim_begin(shim_call *c, MPI_Comm comm, redcoll_coll coll) {
    c->nb = shim_nb_into;
    shim_nb_into = NULL; /* this call's only */
    c->s = c->nb && shim_nb_comm(c->nb) ? shim_nb_comm(c->nb) : shim_comm_of(comm);
    c->comm = comm;
    c->coll = coll;
    c->opts = NULL;
    if (!c->s) return 0;
    if (!c->s->ok) return shim_pass(c->s, coll, c->s->why);
    c->s->m.last_mpi_error = MPI_SUCCESS; /* the error of this call only */
    c->was_failed = c->s->m.failed;
    c->refused = 0;
    return 1;
}

static long long shim_nb_pid(const struct shim_req *q);

/* A start of a persistent collective carries the id its init took, so the
   ranks' starts match by init order whatever order they come in (MPI-4
   section 6.13). The end of shim_choose. */
static inline void shim_persistent(shim_call *c) {
    long long id = c->nb ? shim_nb_pid(c->nb) : 0;
    if (id <= 0) return;
    if (!c->opts) {
        memset(&c->o, 0, sizeof c->o);
        c->opts = &c->o;
    }
    c->o.persistent_id = id;
}

/* The algorithm: forced by the environment unless it breaks the order of a
   non-commutative op. Verbose runs resolve auto here with redcoll_select, so
   the line printed names exactly the schedule that runs. `bytes` is what
   redcoll_select takes for this collective. */
static inline void shim_choose(shim_call *c, size_t bytes, int commutative) {
    redcoll_algo a = shim_g.forced[c->coll];
    const char *how = "forced by the environment";
    if (c->s->forced_differ >> c->coll & 1u) { /* an algorithm no rank has: fails at once, sends nothing */
        memset(&c->o, 0, sizeof c->o);
        c->o.algo = REDCOLL_ALGO_COUNT;
        c->opts = &c->o;
        c->refused = 1;
        return;
    }
    if (a != REDCOLL_ALGO_AUTO && !commutative && !redcoll_algo_keeps_order(c->coll, a)) {
        a = REDCOLL_ALGO_AUTO;
        how = "auto: the forced algorithm needs a commutative op";
    } else if (a == REDCOLL_ALGO_AUTO) {
        how = "auto";
    }
    if (a == REDCOLL_ALGO_AUTO && !shim_g.verbose && !shim_g.have_model) {
        shim_persistent(c);
        return; /* else opts NULL: as a direct call */
    }
    memset(&c->o, 0, sizeof c->o);
    c->o.model = shim_g.model; /* all zero without a profile: the defaults */
    c->o.ranks_per_node = c->s->ranks_per_node; /* for redcoll_select; the call has node_of */
    if (a == REDCOLL_ALGO_AUTO && shim_g.verbose)
        a = redcoll_select(c->coll, c->s->size, bytes, commutative, &c->o);
    c->o.algo = a;
    c->opts = &c->o;
    if (shim_g.verbose) shim_print_choice(c->s, c->coll, bytes, a, how);
    shim_persistent(c);
}


/* The MPI error for a redcoll result: the MPI error the transport saw where
   there is one, else the class that names the failure. */
static int shim_error_code(redcoll_result r, int mpi_error) {
    switch (r) {
    case REDCOLL_OK: return MPI_SUCCESS;
    case REDCOLL_ERR_INVALID_ARG: return MPI_ERR_ARG;
    case REDCOLL_ERR_OUT_OF_MEMORY: return MPI_ERR_NO_MEM;
    case REDCOLL_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case REDCOLL_ERR_TRANSPORT: case REDCOLL_ERR_ABORTED:
        return mpi_error != MPI_SUCCESS ? mpi_error : MPI_ERR_OTHER;
    default: return MPI_ERR_OTHER; /* timeout, deadlock: not from this transport */
    }
}

static const char *const shim_mpi_name[REDCOLL_COLL_COUNT] = {
    "MPI_Allreduce", "MPI_Reduce", "MPI_Reduce_scatter", "MPI_Reduce_scatter_block",
    "MPI_Allgather", "MPI_Allgatherv", "MPI_Bcast", "MPI_Alltoall", "MPI_Gather", "MPI_Scatter",
    "MPI_Barrier"
};

/* A failure the transport can tell in words: ranks that disagree about the
   call (another call's message, a message of another size), or a peer's
   failure that released this rank. MPI has no error class for those. */
static int shim_told(const redcoll_mpi_failure *f) {
    return f->why == REDCOLL_ERR_MISMATCH || (f->why == REDCOLL_ERR_ABORTED && f->peer >= 0) ||
           (f->why == REDCOLL_ERR_TRANSPORT && f->peer >= 0 && f->want != f->got);
}

/* The same over shared memory: ranks that disagree or deadlock, or a peer's
   failure the transport's account explains. */
static int shim_shm_told(const shim_call *c, redcoll_result r) {
    return c->s->t != &c->s->m.t &&
           (r == REDCOLL_ERR_MISMATCH || r == REDCOLL_ERR_DEADLOCK ||
            (r == REDCOLL_ERR_ABORTED && redcoll_pshm_report(c->s->pshm) != NULL));
}

/* Raises `code` through the error handler of the call's communicator. A
   request may complete after the application freed that communicator
   (pending operations complete normally, MPI 4.1 section 7.4.3); MPI keeps
   the object and its handler for them, but the shim cannot reach it: the
   handle names nothing now, or already another communicator. The error is
   raised on MPI_COMM_WORLD's handler then, rather than only returned: it
   is the handler a communicator inherits by MPI_Comm_dup and
   MPI_Comm_split in most programs (MPI_ERRORS_ARE_FATAL unless the program
   set another), so an error is not lost where the program would have
   stopped on it. (MPI-4 raises errors tied to no object on MPI_COMM_SELF,
   whose handler programs rarely set.) */
static void shim_raise(const shim_call *c, int code) {
    PMPI_Comm_call_errhandler(c->s && atomic_load(&c->s->freed) ? MPI_COMM_WORLD : c->comm, code);
}

/* Raises a told failure through the communicator's error handler with
   redcoll's own error code (an error class of its own, made once), whose
   string says it: "redcoll: MPI_Allreduce on MPI_COMM_WORLD (rank 2 of 3):
   ranks disagree about the call: rank 0 is in ..." -- MPI_ERRORS_ARE_FATAL
   prints it as it ends the job. The code's string is set for each error, so
   the lock is held while the handler runs; 0 when the code cannot be made
   or another thread holds it (the caller raises MPI's class instead). */
static int shim_raise_told(const shim_call *c, redcoll_result r) {
    char text[MPI_MAX_ERROR_STRING], why[MPI_MAX_ERROR_STRING - 160], label[MPI_MAX_OBJECT_NAME + 16];
    char var[64];
    int code, cls;
    size_t i;
    if (pthread_mutex_trylock(&shim_g.err_lock) != 0) return 0;
    if (shim_g.err_code == 0) {
        shim_g.err_code = -1;
        if (PMPI_Add_error_class(&cls) == MPI_SUCCESS &&
            PMPI_Add_error_string(cls, "redcoll: a collective failed (ranks disagree about the call, "
                                       "or a peer failed)") == MPI_SUCCESS &&
            PMPI_Add_error_code(cls, &code) == MPI_SUCCESS)
            shim_g.err_code = code;
    }
    code = shim_g.err_code;
    if (code > 0) {
        shim_comm_label(c->s, label, sizeof label);
        if (c->refused) {
            const char *name = redcoll_coll_name(c->coll);
            for (i = 0; name[i] && i < sizeof var - 1; ++i)
                var[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 'a' + 'A' : name[i]);
            var[i] = 0;
            redcoll__mpi_say(why, sizeof why, "%s: the ranks force different algorithms "
                             "(REDCOLL_%s_ALGORITHM; this rank: %s)", redcoll_result_string(REDCOLL_ERR_MISMATCH),
                             var, shim_g.forced[c->coll] ? redcoll_algo_name(shim_g.forced[c->coll]) : "not set");
        } else if (c->s->t != &c->s->m.t) { /* shared memory: the first line of its account */
            const char *a = redcoll_pshm_report(c->s->pshm);
            size_t n = 0;
            if (!a) a = redcoll_result_string(r);
            while (a[n] && a[n] != '\n' && n < sizeof why - 1) ++n;
            memcpy(why, a, n);
            why[n] = 0;
        } else {
            redcoll_mpi_failure_string(&c->s->m, why, sizeof why);
        }
        redcoll__mpi_say(text, sizeof text, "redcoll: %s on %s (rank %d of %d): %s%s", shim_mpi_name[c->coll],
                 label, c->s->rank, c->s->size,
                 c->was_failed ? "redcoll's transport for this communicator failed in an earlier call: " : "",
                 why);
        if (PMPI_Add_error_string(code, text) == MPI_SUCCESS) shim_raise(c, code);
        else code = 0;
    }
    pthread_mutex_unlock(&shim_g.err_lock);
    return code > 0 ? code : 0;
}

/* Ends a served call: MPI_SUCCESS, or the error raised through the
   communicator's error handler (which may abort, as the native call would)
   and returned: redcoll's own code with the cause in words (shim_told),
   else the MPI error the transport saw or the class that names it. */
static inline int shim_end(const shim_call *c, redcoll_result r) {
    int code;
    if (r == REDCOLL_OK) return MPI_SUCCESS;
    if ((c->refused || shim_told(&c->s->m.failure) || shim_shm_told(c, r)) && (code = shim_raise_told(c, r)) != 0)
        return code;
    code = shim_error_code(r, c->s->m.last_mpi_error);
    shim_raise(c, code);
    return code;
}

/* ==== Datatypes ============================================================== */

/* `count` elements of `type` at `buf`, as the packed bytes redcoll moves:
   in place (`direct`, at `base`) when they are already those bytes, else
   through a staging buffer with MPI_Pack / MPI_Unpack. */
typedef struct shim_side {
    const void  *buf;
    MPI_Count    count;
    MPI_Datatype type;
    MPI_Count    extent, size;
    size_t       bytes;
    int          direct;
    char        *base;
} shim_side;

/* One of the two forms of an MPI count or displacement array. */
typedef struct shim_array {
    const int       *i;
    const MPI_Count *c;
    const MPI_Aint  *a;
} shim_array;

/* What a call does after its collective: unpack the received bytes from
   the staging buffer into the user's layout (whole, or block by block for
   allgather(v)), free the staging buffers, report the result. A started
   call keeps it in its request until the collective completes. */
typedef struct shim_post {
    char         *ts, *tr;    /* staging of the send side and of the receive side */
    int           unstage;    /* 0: none; 1: tr into rd; 2: tr into rd block by block */
    shim_side     rd;
    shim_array    rcounts, displs; /* 2: the blocks, as the call gave them */
    MPI_Count     rcount;
    const size_t *counts;     /* 2: bytes per block */
    int           size;
} shim_post;

static const shim_post shim_no_post; /* nothing staged */

static int shim_finish(const shim_call *c, shim_post *post, int err, redcoll_result r);
static int shim_nb_started(shim_call *c, shim_post *post, redcoll_result r);
static int shim_nb_checking(const struct shim_req *q);
static redcoll_coll_request **shim_nb_slot(struct shim_req *q);
static size_t *shim_nb_counts(struct shim_req *q);
static void shim_nb_keep_op(struct shim_req *q, redcoll_op *op);
static const shim_uop *shim_nb_kept_op(const struct shim_req *q);

/* Where a call's irregular counts live: the communicator's array for a
   blocking call, the request's for a started one (several may be under way). */
static size_t *shim_counts_buf(const shim_call *c) {
    return c->nb ? shim_nb_counts(c->nb) : c->s->counts;
}

/* The call's collective, with the blocking call's arguments: run here and
   finished (blocking); or started into c->nb (redcoll_i<f>) and finished
   when it completes; or, for a persistent init, only checked. An MPI error
   found before (err) ends the call at once. */
#define SHIM_RUN(c, post, err, f, ...)                                                           \
    ((err) != MPI_SUCCESS ? shim_finish(c, post, err, REDCOLL_OK)                                \
     : (c)->nb ? shim_nb_started(c, post, shim_nb_checking((c)->nb) ? REDCOLL_OK                 \
                                          : redcoll_i##f(__VA_ARGS__, shim_nb_slot((c)->nb)))    \
     : shim_finish(c, post, MPI_SUCCESS, redcoll_##f(__VA_ARGS__)))

/* Whether one element of a derived type is its `size` bytes from true_lb in
   type-map order: pack one element of a patterned buffer and compare. Four
   patterns (byte k of each offset) tell every offset below 2^32 apart. */
static int shim_packed_in_order(MPI_Datatype type, MPI_Count size, MPI_Count true_lb) {
    unsigned char *raw, *out;
    int k, pos, ok = 1;
    MPI_Count i;
    if (size <= 0) return 1;
    if (size > (1 << 20)) return 0; /* big elements: stage them instead */
    raw = (unsigned char *)malloc((size_t)size);
    out = (unsigned char *)malloc((size_t)size);
    if (!raw || !out) { free(raw); free(out); return 0; }
    for (k = 0; ok && k < 4 && (k == 0 || (size - 1) >> (8 * k)); ++k) {
        for (i = 0; i < size; ++i) raw[i] = (unsigned char)(i >> (8 * k));
        pos = 0;
        ok = PMPI_Pack((char *)((uintptr_t)raw - (uintptr_t)true_lb), 1, type, out, (int)size, &pos,
                       MPI_COMM_SELF) == MPI_SUCCESS &&
             pos == (int)size && memcmp(raw, out, (size_t)size) == 0;
    }
    free(raw);
    free(out);
    return ok;
}

/* The layout of any datatype: predefined ones directly (*named = 1),
   derived ones measured once and cached as an attribute. 0 if MPI rejects
   the type. */
static int shim_type_info(MPI_Datatype type, shim_type *ti, int *named) {
    MPI_Count lb;
    void *v;
    int ni, na, nd, comb, flag = 0;
    if (type == MPI_DATATYPE_NULL) return 0;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
    *named = comb == MPI_COMBINER_NAMED;
    if (comb != MPI_COMBINER_NAMED) {
        if (PMPI_Type_get_attr(type, shim_g.type_key, &v, &flag) != MPI_SUCCESS) return 0;
        if (flag) { *ti = *(const shim_type *)v; return 1; }
    }
    if (PMPI_Type_size_x(type, &ti->size) != MPI_SUCCESS ||
        PMPI_Type_get_extent_x(type, &lb, &ti->extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent_x(type, &ti->true_lb, &ti->true_extent) != MPI_SUCCESS)
        return 0;
    ti->type = type;
    if (comb == MPI_COMBINER_NAMED) { /* one element has no holes; pair types pad after it */
        ti->packed = 1;
        ti->true_lb = 0;
        return 1;
    }
    pthread_mutex_lock(&shim_g.type_lock); /* measure and attach once (threads may race here) */
    if (PMPI_Type_get_attr(type, shim_g.type_key, &v, &flag) == MPI_SUCCESS && flag) {
        *ti = *(const shim_type *)v;
    } else {
        shim_type *keep = (shim_type *)malloc(sizeof *keep);
        ti->packed = ti->size == ti->true_extent &&
                     shim_packed_in_order(type, ti->size, ti->true_lb);
        if (keep) {
            *keep = *ti;
            if (PMPI_Type_set_attr(type, shim_g.type_key, keep) == MPI_SUCCESS)
                SHIM_LINK(shim_g.types, keep);
            else
                free(keep);
        }
    }
    pthread_mutex_unlock(&shim_g.type_lock);
    return 1;
}

/* A reference of the shim's own to a derived datatype, for a request that
   outlives the call: MPI lets the application free its handle while the
   collective is pending (MPI may then give the handle to a new type), and
   the request still stages through the type at completion, passes it to a
   user op, and replays it at each MPI_Start. An MPI_Type_dup (the same type
   map; the application's attributes copied as their copy callbacks say),
   with the layout the shim measured for `type` cached on it. `type` itself
   for a predefined type (never freed), and where MPI rejects it or the dup
   fails (the call then goes on as before, with the application's handle). */
static MPI_Datatype shim_type_hold(MPI_Datatype type) {
    shim_type ti, *keep;
    MPI_Datatype dup;
    int ni, na, nd, comb, named;
    if (type == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED) /* one call: the common case costs no more */
        return type;
    if (!shim_type_info(type, &ti, &named) || PMPI_Type_dup(type, &dup) != MPI_SUCCESS) return type;
    keep = (shim_type *)malloc(sizeof *keep);
    if (keep) {
        *keep = ti;
        keep->type = dup;
        if (PMPI_Type_set_attr(dup, shim_g.type_key, keep) == MPI_SUCCESS)
            SHIM_LINK(shim_g.types, keep);
        else
            free(keep);
    }
    return dup;
}

/* buf + offset (the datatype's true lower bound), MPI_IN_PLACE left alone.
   Integer arithmetic: buf may be MPI_BOTTOM (NULL) with an absolute offset. */
static void *shim_at(const void *buf, MPI_Count offset) {
    if (buf == MPI_IN_PLACE) return (void *)buf;
    return (void *)((uintptr_t)buf + (uintptr_t)(intptr_t)offset);
}

/* ==== Predefined datatypes beyond C's, and the reproducible sum ============= */

/* redcoll_mpi_dtype maps MPI's C datatypes; this table adds the others MPI
   predefines that redcoll can reduce: Fortran's (INTEGER, REAL, DOUBLE
   PRECISION, their sized forms, LOGICAL, the pair types), the complex types
   of C, C++ and Fortran, and C++'s bool. Each is mapped by the size MPI
   gives it (an MPI built with 8-byte INTEGER maps it to int64) and served
   with the ops MPI defines on its class (MPI 4.0, 6.9.2); another
   predefined op passes, so MPI answers it as it would.
   - Complex: MPI_SUM adds real and imaginary parts apart, so it is served
     as 2n float or double sums. MPI_PROD passes (its rounding is MPI's
     formula), and so do complexes of 16-byte parts (COMPLEX32 has
     gfortran's binary128 parts, C's long double complex padding bytes).
   - LOGICAL: the compiler chooses .TRUE. and .FALSE.; LOGICAL is served as
     an integer of its size only where MPI's LAND, LOR and LXOR agree with
     redcoll's integer ones on a probe of values (0, 1, 2, -1).
   - MPI_2INTEGER is redcoll's 2int where INTEGER is an int. MPI_2REAL and
     MPI_2DOUBLE_PRECISION hold value and index both as reals (redcoll's
     float_int has an int index), so their MINLOC and MAXLOC run the
     kernels below.
   - MPI_CHARACTER, MPI_REAL16, MPI_INTEGER16 and the like have no
     predefined op here; user ops serve them as opaque elements.
   The data-movement collectives serve every datatype (Data movement).

   REDCOLL_SUM_EXACT=1 (the reproducible mode): MPI_SUM on a float or
   double type (MPI_FLOAT, MPI_DOUBLE, MPI_REAL, MPI_DOUBLE_PRECISION,
   MPI_REAL4, MPI_REAL8, and the parts of the complex types) in a served
   reduction becomes REDCOLL_SUM_EXACT, the correctly rounded exact sum:
   its bits depend on the inputs alone, not on the process count, the
   algorithm or the transport. Derived datatypes and user ops stay MPI's
   and the user's. The mode is applied where (datatype, op) is mapped
   (shim_red_setup), so every reduction entry point that maps through it
   has it. Ranks of a communicator must agree on it (a collective of two
   different sums would mismatch): checked when the shim first meets the
   communicator, an error through its error handler otherwise. */

/* How redcoll reduces a predefined datatype. */
typedef struct shim_named {
    MPI_Datatype  type;
    redcoll_dtype dtype;   /* the element redcoll reduces */
    int           mult;    /* of them per MPI element (complex: 2) */
    unsigned      ops;     /* predefined ops served: bits 1 << redcoll_op_kind */
    int           pairloc; /* 2REAL, 2DOUBLE_PRECISION: MINLOC/MAXLOC by the kernels below */
} shim_named;

#define SHIM_OP(k) (1u << REDCOLL_OP_##k)
#define SHIM_OPS_REAL (SHIM_OP(SUM) | SHIM_OP(PROD) | SHIM_OP(MIN) | SHIM_OP(MAX))
#define SHIM_OPS_INT (SHIM_OPS_REAL | SHIM_OP(BAND) | SHIM_OP(BOR) | SHIM_OP(BXOR))
#define SHIM_OPS_LOGICAL (SHIM_OP(LAND) | SHIM_OP(LOR) | SHIM_OP(LXOR))
#define SHIM_OPS_LOC (SHIM_OP(MINLOC) | SHIM_OP(MAXLOC))

typedef enum shim_class { /* MPI's classes of predefined datatypes */
    SHIM_INTEGER, SHIM_REAL, SHIM_LOGICAL, SHIM_BOOL, SHIM_COMPLEX, SHIM_2INTEGER, SHIM_2REAL
} shim_class;

static struct {
    int        exact;  /* REDCOLL_SUM_EXACT=1 */
    shim_named t[24];  /* the types below that map, from their sizes */
    int        n;
} shim_x;

/* An IEEE float or double of `bytes` bytes, REDCOLL_DTYPE_MAX_ otherwise. */
static redcoll_dtype shim_real_of(MPI_Count bytes) {
    return bytes == 4 ? REDCOLL_FLOAT : bytes == 8 ? REDCOLL_DOUBLE : REDCOLL_DTYPE_MAX_;
}

/* v as the signed integer of `size` bytes at p. */
static void shim_int_store(void *p, size_t size, int v) {
    int8_t c = (int8_t)v;
    int16_t h = (int16_t)v;
    int32_t w = v;
    int64_t l = v;
    memcpy(p, size == 1 ? (void *)&c : size == 2 ? (void *)&h : size == 4 ? (void *)&w : (void *)&l,
           size);
}

/* Whether MPI's LAND, LOR and LXOR on `type` give redcoll's on dtype for
   every pair of 0, 1, 2, -1 (MPI_Reduce_local: nothing is sent). */
static int shim_logical_agrees(MPI_Datatype type, redcoll_dtype dtype) {
    const MPI_Op mop[3] = { MPI_LAND, MPI_LOR, MPI_LXOR };
    const redcoll_op_kind rop[3] = { REDCOLL_OP_LAND, REDCOLL_OP_LOR, REDCOLL_OP_LXOR };
    const int v[4] = { 0, 1, 2, -1 };
    unsigned char in[16 * 8], mine[16 * 8], theirs[16 * 8];
    size_t size = redcoll_dtype_size(dtype), i;
    int k, ok = size > 0 && size <= 8;
    for (k = 0; ok && k < 3; ++k) {
        for (i = 0; i < 16; ++i) {
            shim_int_store(in + i * size, size, v[i / 4]);
            shim_int_store(mine + i * size, size, v[i % 4]);
        }
        memcpy(theirs, mine, 16 * size);
        ok = PMPI_Reduce_local(in, theirs, 16, type, mop[k]) == MPI_SUCCESS &&
             redcoll_reduce_local(in, mine, 16, dtype, redcoll_op_predefined(rop[k])) == REDCOLL_OK &&
             memcmp(mine, theirs, 16 * size) == 0;
    }
    return ok;
}

/* Reads REDCOLL_SUM_EXACT and maps the types of the list by their sizes
   (once per process, from shim_init). */
static void shim_named_init(void) {
    const struct { MPI_Datatype type; shim_class cls; } list[] = {
        { MPI_INTEGER, SHIM_INTEGER }, { MPI_REAL, SHIM_REAL },
        { MPI_DOUBLE_PRECISION, SHIM_REAL }, { MPI_LOGICAL, SHIM_LOGICAL },
        { MPI_COMPLEX, SHIM_COMPLEX }, { MPI_DOUBLE_COMPLEX, SHIM_COMPLEX },
        { MPI_2INTEGER, SHIM_2INTEGER }, { MPI_2REAL, SHIM_2REAL },
        { MPI_2DOUBLE_PRECISION, SHIM_2REAL },
        { MPI_C_FLOAT_COMPLEX, SHIM_COMPLEX }, { MPI_C_DOUBLE_COMPLEX, SHIM_COMPLEX },
        { MPI_CXX_BOOL, SHIM_BOOL },
        { MPI_CXX_FLOAT_COMPLEX, SHIM_COMPLEX }, { MPI_CXX_DOUBLE_COMPLEX, SHIM_COMPLEX },
        /* MPI's optional datatypes, where this MPI has them */
#ifdef MPI_INTEGER1
        { MPI_INTEGER1, SHIM_INTEGER },
#endif
#ifdef MPI_INTEGER2
        { MPI_INTEGER2, SHIM_INTEGER },
#endif
#ifdef MPI_INTEGER4
        { MPI_INTEGER4, SHIM_INTEGER },
#endif
#ifdef MPI_INTEGER8
        { MPI_INTEGER8, SHIM_INTEGER },
#endif
#ifdef MPI_REAL4
        { MPI_REAL4, SHIM_REAL },
#endif
#ifdef MPI_REAL8
        { MPI_REAL8, SHIM_REAL },
#endif
#ifdef MPI_COMPLEX8
        { MPI_COMPLEX8, SHIM_COMPLEX },
#endif
#ifdef MPI_COMPLEX16
        { MPI_COMPLEX16, SHIM_COMPLEX },
#endif
        { MPI_DATATYPE_NULL, SHIM_INTEGER }
    };
    const char *v = getenv("REDCOLL_SUM_EXACT");
    size_t i;
    shim_x.exact = v && *v && strcmp(v, "0") != 0;
    for (i = 0; list[i].type != MPI_DATATYPE_NULL; ++i) {
        shim_named n;
        MPI_Count size = 0;
        if (PMPI_Type_size_x(list[i].type, &size) != MPI_SUCCESS || size <= 0) continue;
        memset(&n, 0, sizeof n);
        n.type = list[i].type;
        n.mult = 1;
        switch (list[i].cls) {
        case SHIM_INTEGER: n.dtype = redcoll__mpi_int((size_t)size, 1); n.ops = SHIM_OPS_INT; break;
        case SHIM_REAL: n.dtype = shim_real_of(size); n.ops = SHIM_OPS_REAL; break;
        case SHIM_LOGICAL: case SHIM_BOOL:
            n.dtype = redcoll__mpi_int((size_t)size, list[i].cls == SHIM_LOGICAL);
            n.ops = n.dtype != REDCOLL_DTYPE_MAX_ && shim_logical_agrees(n.type, n.dtype)
                        ? SHIM_OPS_LOGICAL : 0;
            break;
        case SHIM_COMPLEX: n.dtype = shim_real_of(size / 2); n.mult = 2; n.ops = SHIM_OP(SUM); break;
        case SHIM_2INTEGER:
            n.dtype = size == 2 * (MPI_Count)sizeof(int) ? REDCOLL_2INT : REDCOLL_DTYPE_MAX_;
            n.ops = SHIM_OPS_LOC;
            break;
        case SHIM_2REAL: n.dtype = shim_real_of(size / 2); n.pairloc = 1; n.ops = SHIM_OPS_LOC; break;
        }
        if (n.dtype != REDCOLL_DTYPE_MAX_ && n.ops && shim_x.n < (int)(sizeof shim_x.t / sizeof *shim_x.t))
            shim_x.t[shim_x.n++] = n;
    }
}

/* MINLOC and MAXLOC on (value, index) pairs of one real type as MPI
   defines them: the smaller (larger) value with its index; on a tie, the
   smaller index. Buffers may hold the pairs at any alignment. */
#define SHIM_PAIRLOC(name, T, better)                                           \
    static void name(const void *in, void *inout, size_t count, void *arg) {   \
        const char *a = (const char *)in;                                       \
        char *b = (char *)inout;                                                \
        size_t i;                                                               \
        (void)arg;                                                              \
        for (i = 0; i < count; ++i, a += 2 * sizeof(T), b += 2 * sizeof(T)) {   \
            T x[2], y[2];                                                       \
            memcpy(x, a, sizeof x);                                             \
            memcpy(y, b, sizeof y);                                             \
            if (x[0] better y[0]) memcpy(b, x, sizeof x);                       \
            else if (x[0] == y[0] && x[1] < y[1]) memcpy(b + sizeof(T), &x[1], sizeof(T)); \
        }                                                                       \
    }
SHIM_PAIRLOC(shim_minloc_2float, float, <)
SHIM_PAIRLOC(shim_maxloc_2float, float, >)
SHIM_PAIRLOC(shim_minloc_2double, double, <)
SHIM_PAIRLOC(shim_maxloc_2double, double, >)

/* A predefined datatype as redcoll reduces it: 1 and *n filled, or 0. */
static int shim_named_of(MPI_Datatype type, shim_named *n) {
    int i;
    memset(n, 0, sizeof *n);
    n->type = type;
    n->mult = 1;
    if (redcoll_mpi_dtype(type, &n->dtype)) { /* C's: every op redcoll defines on it */
        n->ops = ~0u;
        return 1;
    }
    for (i = 0; i < shim_x.n; ++i)
        if (shim_x.t[i].type == type) { *n = shim_x.t[i]; return 1; }
    return 0;
}

/* The redcoll (dtype, count multiplier, op) for predefined op `kind` on n,
   with the reproducible sum in place of MPI_SUM where the mode asks; 0 if
   it is not served. */
static int shim_named_op(const shim_named *n, redcoll_op_kind kind, redcoll_dtype *dtype,
                         MPI_Count *mult, redcoll_op *op) {
    if (!(n->ops & (1u << kind))) return 0;
    *dtype = n->dtype;
    *mult = n->mult;
    *op = redcoll_op_predefined(kind);
    if (n->pairloc) {
        int dbl = n->dtype == REDCOLL_DOUBLE, min = kind == REDCOLL_OP_MINLOC;
        *dtype = REDCOLL_OPAQUE(2 * redcoll_dtype_size(n->dtype));
        *op = redcoll_op_user(dbl ? (min ? shim_minloc_2double : shim_maxloc_2double)
                                  : (min ? shim_minloc_2float : shim_maxloc_2float), NULL, 1);
        return 1;
    }
    if (!redcoll_op_valid_for(kind, n->dtype)) return 0;
    if (kind == REDCOLL_OP_SUM && shim_x.exact && (n->dtype == REDCOLL_FLOAT || n->dtype == REDCOLL_DOUBLE))
        *op = REDCOLL_SUM_EXACT;
    return 1;
}

/* REDCOLL_VERBOSE: the mode, once per communicator, at its first exact sum. */
static void shim_exact_say(shim_comm *s) {
    char label[MPI_MAX_OBJECT_NAME + 16];
    if (!shim_g.verbose || s->rank != 0 || s->exact_said) return;
    s->exact_said = 1;
    shim_comm_label(s, label, sizeof label);
    fprintf(stderr, "redcoll: %s (p=%d): MPI_SUM on float and double types is the correctly "
                    "rounded exact sum (REDCOLL_SUM_EXACT)\n", label, s->size);
}

/* Whether every rank of s's communicator runs the same mode (collective,
   on redcoll's duplicate). If not, the lowest rank with the mode and the
   lowest without say so, and the error goes through the communicator's
   error handler once every rank has printed; the communicator then passes
   every call to MPI. The same reduction notes the collectives whose forced
   algorithm (REDCOLL_<COLL>_ALGORITHM) differs between ranks: a rank running
   another schedule would wait forever, so those collectives fail on every
   rank with a message saying so (s->forced_differ). */
static int shim_modes_agree(shim_comm *s) {
    int low[2 + 2 * REDCOLL_COLL_COUNT], c;
    char label[MPI_MAX_OBJECT_NAME + 16];
    low[0] = shim_x.exact ? s->rank : s->size; /* the lowest rank with the mode */
    low[1] = shim_x.exact ? s->size : s->rank; /* and without */
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c) { /* each forced algorithm, and its negation */
        low[2 + c] = (int)shim_g.forced[c];
        low[2 + REDCOLL_COLL_COUNT + c] = -(int)shim_g.forced[c];
    }
    if (PMPI_Allreduce(MPI_IN_PLACE, low, 2 + 2 * REDCOLL_COLL_COUNT, MPI_INT, MPI_MIN, s->m.comm) !=
        MPI_SUCCESS)
        return 0;
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
        if (low[2 + c] != -low[2 + REDCOLL_COLL_COUNT + c]) s->forced_differ |= 1u << c;
    if (low[0] == s->size || low[1] == s->size) return 1;
    if (low[0] == s->rank || low[1] == s->rank) {
        shim_comm_label(s, label, sizeof label);
        fprintf(stderr, "redcoll: %s (p=%d): REDCOLL_SUM_EXACT is %s on rank %d and %s on rank %d; "
                        "every rank must set it alike (its collectives go to MPI)\n", label, s->size,
                shim_x.exact ? "on" : "off", s->rank, shim_x.exact ? "off" : "on",
                shim_x.exact ? low[1] : low[0]);
    }
    PMPI_Barrier(s->m.comm);
    return 0;
}

/* ==== Reductions ============================================================ */

/* A user op as redcoll calls it: fn(in, inout, count, user), `in` from the
   lower ranks, as MPI's invec. redcoll points at the data; MPI's function
   takes buffer addresses with the data at true_lb from them. */
typedef struct shim_user {
    shim_uop     u;
    MPI_Datatype type;
    MPI_Count    extent, lb;
} shim_user;

static void shim_user_call(const void *in, void *inout, size_t count, void *arg) {
    const shim_user *x = (const shim_user *)arg;
    MPI_Datatype type = x->type;
    char *a = (char *)shim_at(in, -x->lb), *b = (char *)shim_at(inout, -x->lb);
#if SHIM_LARGE_COUNT
    if (x->u.fn_c) {
        MPI_Count n = (MPI_Count)count;
        x->u.fn_c(a, b, &n, &type);
        return;
    }
#endif
    while (count > 0) { /* MPI_User_function takes an int count */
        int n = count > (size_t)INT_MAX ? INT_MAX : (int)count;
        x->u.fn(a, b, &n, &type);
        a += (MPI_Count)n * x->extent;
        b += (MPI_Count)n * x->extent;
        count -= (size_t)n;
    }
}

static int shim_uop_find(MPI_Op op, shim_uop *out) {
    size_t i;
    int found = 0;
    pthread_mutex_lock(&shim_g.lock);
    for (i = 0; i < shim_g.nuops && !found; ++i)
        if (shim_g.uops[i].op == op) { *out = shim_g.uops[i]; found = 1; }
    pthread_mutex_unlock(&shim_g.lock);
    return found;
}

/* How redcoll sees a reduction's (datatype, op). */
typedef struct shim_red {
    redcoll_dtype dtype;
    redcoll_op    op;
    MPI_Count     lb;     /* buffers start this far into the user's pointer */
    MPI_Count     extent; /* bytes per element, = mult * redcoll_dtype_size(dtype) */
    MPI_Count     mult;   /* redcoll elements per MPI element (complex: 2) */
    shim_user     user;   /* the user op's call, when op.kind is USER */
} shim_red;

/* Fills r (which must stay put: op.user points into it); 0 with a reason
   when the pair cannot be served. The decision depends only on datatype
   and op, which MPI requires to be the same on every rank. `kept`: the
   user op as a persistent request kept it at init (the application may
   have freed `op` since, and MPI may have given its handle to another op),
   else NULL: op is looked up. */
static int shim_red_setup(shim_red *r, MPI_Datatype type, MPI_Op op, const shim_uop *kept,
                          shim_reason *why) {
    shim_type ti;
    shim_named n;
    int predefined = shim_named_of(type, &n), named;
    *why = SHIM_PASS_TYPE;
    if (!shim_type_info(type, &ti, &named)) { *why = SHIM_PASS_ARGS; return 0; }
    r->lb = ti.true_lb;
    r->extent = ti.extent;
    r->dtype = n.dtype;
    r->mult = 1;
    if (!kept && redcoll_mpi_op(op, &r->op)) {
        *why = named ? SHIM_PASS_OP : SHIM_PASS_DERIVED_OP;
        return predefined && shim_named_op(&n, r->op.kind, &r->dtype, &r->mult, &r->op) &&
               r->mult * (MPI_Count)redcoll_dtype_size(r->dtype) == ti.extent;
    }
    if (kept) r->user.u = *kept;
    else if (!shim_uop_find(op, &r->user.u)) { *why = SHIM_PASS_OP; return 0; }
    /* a user op: the element in place, opaque unless it is a predefined type */
    if (!ti.packed || ti.size != ti.extent || ti.size <= 0 || ti.size > (1 << 30)) return 0;
    if (!predefined || n.mult != 1 || (MPI_Count)redcoll_dtype_size(r->dtype) != ti.size)
        r->dtype = REDCOLL_OPAQUE((size_t)ti.size);
    r->user.type = type;
    r->user.extent = ti.extent;
    r->user.lb = ti.true_lb;
    r->op = redcoll_op_user(shim_user_call, &r->user, r->user.u.commute);
    return 1;
}

/* Arguments every reduction entry point shares; 0 (pass through) with a
   verbose reason. Invalid ones go to MPI, which reports them natively. */
static inline int shim_red_begin(shim_call *c, shim_red *r, MPI_Comm comm, redcoll_coll coll,
                          MPI_Datatype type, MPI_Op op) {
    shim_comm *s;
    shim_reason why;
    if (!shim_begin(c, comm, coll)) return 0;
    s = c->s;
    if (type == s->last_type && op == s->last_op && type != MPI_DATATYPE_NULL) {
        r->dtype = s->last_dtype; /* predefined handles never change meaning */
        r->op = s->last_rop;
        r->lb = 0;
        r->extent = s->last_extent;
        r->mult = s->last_mult;
        return 1;
    }
    if (!shim_red_setup(r, type, op, c->nb ? shim_nb_kept_op(c->nb) : NULL, &why))
        return shim_pass(s, coll, why);
    if (r->op.kind == REDCOLL_OP_USER && c->nb) shim_nb_keep_op(c->nb, &r->op); /* outlives r */
    if (r->op.kind == REDCOLL_OP_SUM_EXACT) shim_exact_say(s);
    if (r->op.kind != REDCOLL_OP_USER && r->dtype < REDCOLL_DTYPE_COUNT) { /* both predefined */
        s->last_type = type;
        s->last_op = op;
        s->last_dtype = r->dtype;
        s->last_rop = r->op;
        s->last_extent = r->extent;
        s->last_mult = r->mult;
    }
    return 1;
}

static int shim_try_allreduce(int *rc, const void *sbuf, void *rbuf, MPI_Count count,
                              MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    shim_call c;
    shim_red r;
    shim_post post = shim_no_post;
    if (!shim_red_begin(&c, &r, comm, REDCOLL_COLL_ALLREDUCE, type, op)) return 0;
    if (count < 0 || rbuf == MPI_IN_PLACE ||
        (count > 0 && (sbuf == rbuf || !shim_at(sbuf, r.lb) || !shim_at(rbuf, r.lb))))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    shim_choose(&c, (size_t)count * (size_t)r.extent, r.op.commutative);
    *rc = SHIM_RUN(&c, &post, MPI_SUCCESS, allreduce, c.s->t, redcoll_mpi_buf(shim_at(sbuf, r.lb)),
                   shim_at(rbuf, r.lb), (size_t)(count * r.mult), r.dtype, r.op, c.opts);
    return 1;
}

static int shim_try_reduce(int *rc, const void *sbuf, void *rbuf, MPI_Count count,
                           MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    shim_call c;
    shim_red r;
    shim_post post = shim_no_post;
    int at_root;
    if (!shim_red_begin(&c, &r, comm, REDCOLL_COLL_REDUCE, type, op)) return 0;
    at_root = c.s->rank == root;
    if (count < 0 || root < 0 || root >= c.s->size || (!at_root && sbuf == MPI_IN_PLACE) ||
        (count > 0 && !shim_at(sbuf, r.lb)) ||
        (at_root && (rbuf == MPI_IN_PLACE || (count > 0 && (sbuf == rbuf || !shim_at(rbuf, r.lb))))))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    shim_choose(&c, (size_t)count * (size_t)r.extent, r.op.commutative);
    *rc = SHIM_RUN(&c, &post, MPI_SUCCESS, reduce, c.s->t, redcoll_mpi_buf(shim_at(sbuf, r.lb)),
                   at_root ? shim_at(rbuf, r.lb) : NULL, (size_t)(count * r.mult), r.dtype, r.op, root,
                   c.opts);
    return 1;
}

static MPI_Count shim_array_at(shim_array v, int k) {
    return v.i ? (MPI_Count)v.i[k] : v.c ? v.c[k] : (MPI_Count)v.a[k];
}

/* counts[i] = recvcounts[i] * unit for the p ranks of s; 0 if one is
   negative or the pointer is NULL. Their sum in *total. */
static int shim_counts(const shim_comm *s, size_t *counts, shim_array v, MPI_Count unit, size_t *total) {
    int i;
    *total = 0;
    if (!v.i && !v.c) return 0;
    for (i = 0; i < s->size; ++i) {
        MPI_Count n = shim_array_at(v, i);
        if (n < 0) return 0;
        counts[i] = (size_t)(n * unit);
        *total += counts[i];
    }
    return 1;
}

static int shim_try_reduce_scatter(int *rc, const void *sbuf, void *rbuf, shim_array recvcounts,
                                   MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    shim_call c;
    shim_red r;
    shim_post post = shim_no_post;
    size_t total, *counts;
    if (!shim_red_begin(&c, &r, comm, REDCOLL_COLL_REDUCE_SCATTER, type, op)) return 0;
    counts = shim_counts_buf(&c);
    if (!shim_counts(c.s, counts, recvcounts, r.mult, &total) || rbuf == MPI_IN_PLACE ||
        (total > 0 && (sbuf == rbuf || !shim_at(sbuf, r.lb))) ||
        ((counts[c.s->rank] > 0 || sbuf == MPI_IN_PLACE) && !shim_at(rbuf, r.lb)))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    shim_choose(&c, total / (size_t)r.mult * (size_t)r.extent, r.op.commutative);
    *rc = SHIM_RUN(&c, &post, MPI_SUCCESS, reduce_scatter, c.s->t,
                   redcoll_mpi_buf(shim_at(sbuf, r.lb)), shim_at(rbuf, r.lb), counts, r.dtype, r.op,
                   c.opts);
    return 1;
}

static int shim_try_reduce_scatter_block(int *rc, const void *sbuf, void *rbuf, MPI_Count count,
                                         MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    shim_call c;
    shim_red r;
    shim_post post = shim_no_post;
    if (!shim_red_begin(&c, &r, comm, REDCOLL_COLL_REDUCE_SCATTER_BLOCK, type, op)) return 0;
    if (count < 0 || rbuf == MPI_IN_PLACE ||
        (count > 0 && (sbuf == rbuf || !shim_at(sbuf, r.lb) || !shim_at(rbuf, r.lb))))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    shim_choose(&c, (size_t)count * (size_t)c.s->size * (size_t)r.extent, r.op.commutative);
    *rc = SHIM_RUN(&c, &post, MPI_SUCCESS, reduce_scatter_block, c.s->t,
                   redcoll_mpi_buf(shim_at(sbuf, r.lb)), shim_at(rbuf, r.lb), (size_t)(count * r.mult),
                   r.dtype, r.op, c.opts);
    return 1;
}

/* ==== Data movement ========================================================= */

static int shim_side_init(shim_comm *s, shim_side *d, const void *buf, MPI_Count count,
                          MPI_Datatype type) {
    shim_type ti;
    if (count < 0) return 0;
    if (type == s->last_named && type != MPI_DATATYPE_NULL) { /* predefined: never changes */
        ti.size = s->last_named_size;
        ti.extent = s->last_named_extent;
        ti.true_lb = 0;
        ti.packed = 1;
    } else {
        int named;
        if (!shim_type_info(type, &ti, &named) || ti.size < 0) return 0;
        if (named) {
            s->last_named = type;
            s->last_named_size = ti.size;
            s->last_named_extent = ti.extent;
        }
    }
    d->buf = buf; d->count = count; d->type = type;
    d->extent = ti.extent; d->size = ti.size;
    d->bytes = (size_t)(count * ti.size);
    d->direct = count == 0 || ti.size == 0 || (ti.packed && (count == 1 || ti.extent == ti.size));
    d->base = (char *)shim_at(buf, ti.true_lb);
    return d->bytes == 0 || d->base; /* a NULL buffer: MPI reports it */
}

/* The side's elements first .. first+n-1 (elements of its type). */
static shim_side shim_side_part(const shim_side *d, MPI_Count first, MPI_Count n) {
    shim_side p = *d;
    p.buf = (const char *)d->buf + first * d->extent;
    p.base = d->base + first * d->extent;
    p.count = n;
    p.bytes = (size_t)(n * d->size);
    p.direct = d->direct || n == 0;
    return p;
}

/* Packs (or unpacks, to_user) the side in pieces that fit MPI's int counts. */
static int shim_stage(const shim_side *d, char *bytes, int to_user) {
    MPI_Count done = 0, per;
    if (d->bytes == 0) return MPI_SUCCESS;
    if (d->direct) {
        if (to_user) memcpy(d->base, bytes, d->bytes);
        else memcpy(bytes, d->base, d->bytes);
        return MPI_SUCCESS;
    }
    per = d->size > INT_MAX ? 0 : INT_MAX / d->size;
    if (per == 0) return MPI_ERR_COUNT;
    while (done < d->count) {
        MPI_Count n = d->count - done < per ? d->count - done : per;
        char *user = (char *)d->buf + done * d->extent, *packed = bytes + done * d->size;
        int pos = 0, err = to_user ? PMPI_Unpack(packed, (int)(n * d->size), &pos, user, (int)n,
                                                 d->type, MPI_COMM_SELF)
                                   : PMPI_Pack(user, (int)n, d->type, packed, (int)(n * d->size),
                                               &pos, MPI_COMM_SELF);
        if (err != MPI_SUCCESS) return err;
        done += n;
    }
    return MPI_SUCCESS;
}

/* The bytes redcoll reads or writes for side d: its own buffer when direct,
   else *tmp (allocated here, `bytes` long, filled from d when `fill`). */
static char *shim_bytes(const shim_side *d, size_t bytes, int fill, char **tmp, int *err) {
    if (d->direct && d->bytes == bytes) return d->base;
    *tmp = (char *)malloc(bytes ? bytes : 1);
    if (!*tmp) { *err = MPI_ERR_NO_MEM; return NULL; }
    if (fill) *err = shim_stage(d, *tmp, 0);
    return *tmp;
}

/* Ends a data-movement call: an MPI error from staging or the redcoll
   result, raised through the error handler; tmp buffers freed. */
static int shim_end_move(const shim_call *c, int err, redcoll_result r, char *t1, char *t2) {
    free(t1);
    free(t2);
    if (err != MPI_SUCCESS) {
        shim_raise(c, err);
        return err;
    }
    return shim_end(c, r);
}

static MPI_Count shim_block_n(shim_array rcounts, MPI_Count rcount, int i);
static MPI_Count shim_block_at(shim_array rcounts, shim_array displs, MPI_Count rcount, int i);

/* Ends a call (see shim_post): when the collective went well, the staged
   result unpacked into the user's layout; then shim_end_move. */
static int shim_finish(const shim_call *c, shim_post *post, int err, redcoll_result r) {
    if (err == MPI_SUCCESS && r == REDCOLL_OK && post->tr && post->unstage == 1)
        err = shim_stage(&post->rd, post->tr, 1);
    if (err == MPI_SUCCESS && r == REDCOLL_OK && post->tr && post->unstage == 2) {
        size_t before = 0;
        int i;
        for (i = 0; err == MPI_SUCCESS && i < post->size; ++i) {
            shim_side blk = shim_side_part(&post->rd, shim_block_at(post->rcounts, post->displs, post->rcount, i),
                                           shim_block_n(post->rcounts, post->rcount, i));
            err = shim_stage(&blk, post->tr + before, 1);
            before += post->counts[i];
        }
    }
    return shim_end_move(c, err, r, post->ts, post->tr);
}

static int shim_try_bcast(int *rc, void *buf, MPI_Count count, MPI_Datatype type, int root,
                          MPI_Comm comm) {
    shim_call c;
    shim_side d;
    shim_post post = shim_no_post;
    char *bytes;
    int err = MPI_SUCCESS;
    if (!shim_begin(&c, comm, REDCOLL_COLL_BCAST)) return 0;
    if (root < 0 || root >= c.s->size || !shim_side_init(c.s, &d, buf, count, type))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    shim_choose(&c, d.bytes, 1);
    bytes = shim_bytes(&d, d.bytes, c.s->rank == root, &post.tr, &err);
    post.rd = d;
    post.unstage = c.s->rank != root;
    *rc = SHIM_RUN(&c, &post, err, bcast, c.s->t, bytes, d.bytes, REDCOLL_UINT8, root, c.opts);
    return 1;
}

static int shim_try_gather(int *rc, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                           void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                           MPI_Comm comm) {
    shim_call c;
    shim_side sd, rd;
    shim_post post = shim_no_post;
    char *ts = NULL, *tr = NULL, *sb = NULL, *rb = NULL;
    int err = MPI_SUCCESS, at_root, in_place = sbuf == MPI_IN_PLACE;
    size_t block, p;
    memset(&sd, 0, sizeof sd);
    memset(&rd, 0, sizeof rd);
    if (!shim_begin(&c, comm, REDCOLL_COLL_GATHER)) return 0;
    at_root = c.s->rank == root;
    p = (size_t)c.s->size;
    if (root < 0 || root >= c.s->size || (in_place && !at_root) ||
        (!in_place && !shim_side_init(c.s, &sd, sbuf, scount, stype)) ||
        (at_root && (rcount < 0 || !shim_side_init(c.s, &rd, rbuf, rcount * (MPI_Count)p, rtype))))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    block = at_root ? rd.bytes / p : sd.bytes;
    if (at_root && !in_place && sd.bytes != block) { /* this rank's own send and receive differ */
        *rc = shim_end_move(&c, MPI_ERR_TRUNCATE, REDCOLL_OK, NULL, NULL);
        return 1;
    }
    shim_choose(&c, block, 1);
    if (!in_place) sb = shim_bytes(&sd, block, 1, &ts, &err);
    if (at_root && err == MPI_SUCCESS) {
        rb = shim_bytes(&rd, block * p, 0, &tr, &err);
        if (tr && in_place && err == MPI_SUCCESS) { /* root's block, already in rbuf, staged */
            shim_side own = shim_side_part(&rd, (MPI_Count)root * rcount, rcount);
            err = shim_stage(&own, tr + (size_t)root * block, 0);
        }
    }
    post.ts = ts; post.tr = tr; post.rd = rd; post.unstage = 1;
    *rc = SHIM_RUN(&c, &post, err, gather, c.s->t, in_place ? REDCOLL_IN_PLACE : sb, rb, block,
                   REDCOLL_UINT8, root, c.opts);
    return 1;
}

static int shim_try_scatter(int *rc, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                            void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                            MPI_Comm comm) {
    shim_call c;
    shim_side sd, rd;
    shim_post post = shim_no_post;
    char *ts = NULL, *tr = NULL, *sb = NULL, *rb = NULL;
    int err = MPI_SUCCESS, at_root, in_place = rbuf == MPI_IN_PLACE;
    size_t block, p;
    memset(&sd, 0, sizeof sd);
    memset(&rd, 0, sizeof rd);
    if (!shim_begin(&c, comm, REDCOLL_COLL_SCATTER)) return 0;
    at_root = c.s->rank == root;
    p = (size_t)c.s->size;
    if (root < 0 || root >= c.s->size || (in_place && !at_root) ||
        (!in_place && !shim_side_init(c.s, &rd, rbuf, rcount, rtype)) ||
        (at_root && (scount < 0 || !shim_side_init(c.s, &sd, sbuf, scount * (MPI_Count)p, stype))))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    block = at_root ? sd.bytes / p : rd.bytes;
    if (at_root && !in_place && rd.bytes != block) {
        *rc = shim_end_move(&c, MPI_ERR_TRUNCATE, REDCOLL_OK, NULL, NULL);
        return 1;
    }
    shim_choose(&c, block, 1);
    if (at_root) sb = shim_bytes(&sd, block * p, 1, &ts, &err);
    if (!in_place && err == MPI_SUCCESS) rb = shim_bytes(&rd, block, 0, &tr, &err);
    post.ts = ts; post.tr = tr; post.rd = rd; post.unstage = 1;
    *rc = SHIM_RUN(&c, &post, err, scatter, c.s->t, sb, in_place ? REDCOLL_IN_PLACE : rb, block,
                   REDCOLL_UINT8, root, c.opts);
    return 1;
}

/* Elements of block i of an allgather(v) and where it starts in rbuf (elements of rtype). */
static MPI_Count shim_block_n(shim_array rcounts, MPI_Count rcount, int i) {
    return rcounts.i || rcounts.c ? shim_array_at(rcounts, i) : rcount;
}
static MPI_Count shim_block_at(shim_array rcounts, shim_array displs, MPI_Count rcount, int i) {
    return rcounts.i || rcounts.c ? shim_array_at(displs, i) : (MPI_Count)i * rcount;
}

/* Allgather and allgatherv: block i (s->counts[i] bytes) of every rank lands
   in rbuf at its displacement (the prefix sums for allgather). redcoll's
   allgatherv has no displacements: when they are the prefix sums and rtype
   is packed it runs on rbuf, otherwise on a staging buffer that holds the
   blocks back to back, unpacked block by block after. */
static int shim_gather_all(int *rc, shim_call *c, const void *sbuf, MPI_Count scount,
                           MPI_Datatype stype, void *rbuf, shim_array rcounts,
                           shim_array displs, MPI_Count rcount, MPI_Datatype rtype) {
    shim_comm *s = c->s;
    shim_side sd, rd;
    shim_post post = shim_no_post;
    char *ts = NULL, *tr = NULL, *sb = NULL, *rb;
    int err = MPI_SUCCESS, in_place = sbuf == MPI_IN_PLACE, v = rcounts.i || rcounts.c, i, direct = 1;
    size_t total = 0, before = 0, mine, *counts = shim_counts_buf(c);
    MPI_Count elems = 0;
    memset(&sd, 0, sizeof sd);
    if (!shim_side_init(s, &rd, rbuf, 0, rtype) ||
        (!in_place && !shim_side_init(s, &sd, sbuf, scount, stype)) ||
        (v && (!displs.i && !displs.a)) || (!v && rcount < 0))
        return shim_pass(s, c->coll, SHIM_PASS_ARGS);
    for (i = 0; i < s->size; ++i) {
        MPI_Count n = shim_block_n(rcounts, rcount, i);
        if (n < 0) return shim_pass(s, c->coll, SHIM_PASS_ARGS);
        if (shim_block_at(rcounts, displs, rcount, i) != elems) direct = 0;
        counts[i] = (size_t)(n * rd.size);
        if (i < s->rank) before += counts[i];
        total += counts[i];
        elems += n;
    }
    if (!shim_side_init(s, &rd, rbuf, elems, rtype)) return shim_pass(s, c->coll, SHIM_PASS_ARGS);
    direct = direct && rd.direct;
    mine = counts[s->rank];
    if (!in_place && sd.bytes != mine) { /* this rank's send and receive sizes differ */
        *rc = shim_end_move(c, MPI_ERR_TRUNCATE, REDCOLL_OK, NULL, NULL);
        return 1;
    }
    shim_choose(c, v ? total : mine, 1);
    if (direct) {
        rb = rd.base;
        if (!in_place) sb = shim_bytes(&sd, mine, 1, &ts, &err);
    } else {
        rb = tr = (char *)malloc(total ? total : 1);
        if (!tr) {
            err = MPI_ERR_NO_MEM;
        } else { /* this rank's block into its place among the packed blocks */
            shim_side own = in_place ? shim_side_part(&rd, shim_block_at(rcounts, displs, rcount,
                                                                         s->rank),
                                                      shim_block_n(rcounts, rcount, s->rank))
                                     : sd;
            err = shim_stage(&own, tr + before, 0);
        }
    }
    post.ts = ts; post.tr = tr; post.rd = rd; post.unstage = 2;
    post.rcounts = rcounts; post.displs = displs; post.rcount = rcount;
    post.counts = counts; post.size = s->size;
    { /* in place as the caller said: ranks whose layouts differ agree */
        const void *in = in_place ? REDCOLL_IN_PLACE : direct ? (const void *)sb : tr + before;
        if (v) *rc = SHIM_RUN(c, &post, err, allgatherv, s->t, in, rb, counts, REDCOLL_UINT8, c->opts);
        else *rc = SHIM_RUN(c, &post, err, allgather, s->t, in, rb, mine, REDCOLL_UINT8, c->opts);
    }
    return 1;
}

static int shim_try_allgather(int *rc, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                              void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm) {
    shim_call c;
    shim_array none = { NULL, NULL, NULL };
    if (!shim_begin(&c, comm, REDCOLL_COLL_ALLGATHER)) return 0;
    return shim_gather_all(rc, &c, sbuf, scount, stype, rbuf, none, none, rcount, rtype);
}

static int shim_try_allgatherv(int *rc, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                               void *rbuf, shim_array rcounts, shim_array displs,
                               MPI_Datatype rtype, MPI_Comm comm) {
    shim_call c;
    if (!shim_begin(&c, comm, REDCOLL_COLL_ALLGATHERV)) return 0;
    return shim_gather_all(rc, &c, sbuf, scount, stype, rbuf, rcounts, displs, 0, rtype);
}

static int shim_try_alltoall(int *rc, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                             void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm) {
    shim_call c;
    shim_side sd, rd;
    shim_post post = shim_no_post;
    char *ts = NULL, *tr = NULL, *sb = NULL, *rb;
    int err = MPI_SUCCESS, in_place = sbuf == MPI_IN_PLACE;
    size_t p;
    memset(&sd, 0, sizeof sd);
    memset(&rd, 0, sizeof rd);
    if (!shim_begin(&c, comm, REDCOLL_COLL_ALLTOALL)) return 0;
    p = (size_t)c.s->size;
    if (rcount < 0 || (!in_place && scount < 0) ||
        !shim_side_init(c.s, &rd, rbuf, rcount * (MPI_Count)p, rtype) ||
        (!in_place && !shim_side_init(c.s, &sd, sbuf, scount * (MPI_Count)p, stype)) ||
        (!in_place && rd.bytes > 0 && sbuf == rbuf))
        return shim_pass(c.s, c.coll, SHIM_PASS_ARGS);
    if (!in_place && sd.bytes != rd.bytes) {
        *rc = shim_end_move(&c, MPI_ERR_TRUNCATE, REDCOLL_OK, NULL, NULL);
        return 1;
    }
    shim_choose(&c, rd.bytes / p, 1);
    if (!in_place) sb = shim_bytes(&sd, rd.bytes, 1, &ts, &err);
    rb = err == MPI_SUCCESS ? shim_bytes(&rd, rd.bytes, in_place, &tr, &err) : NULL;
    post.ts = ts; post.tr = tr; post.rd = rd; post.unstage = 1;
    *rc = SHIM_RUN(&c, &post, err, alltoall, c.s->t, in_place ? REDCOLL_IN_PLACE : sb, rb, rd.bytes / p,
                   REDCOLL_UINT8, c.opts);
    return 1;
}

static int shim_try_barrier(int *rc, MPI_Comm comm) {
    shim_call c;
    shim_post post = shim_no_post;
    if (!shim_begin(&c, comm, REDCOLL_COLL_BARRIER)) return 0;
    shim_choose(&c, 0, 1);
    *rc = SHIM_RUN(&c, &post, MPI_SUCCESS, barrier, c.s->t, c.opts);
    return 1;
}

/* ==== The MPI entry points ================================================== */

static const shim_array shim_none = { NULL, NULL, NULL };

static shim_array shim_ints(const int *v) {
    shim_array a = shim_none;
    a.i = v;
    return a;
}

/* Each entry point: served by redcoll, or the same arguments to PMPI_ (the
   name pasted: P ## MPI_Allreduce). */
#define SHIM_ENTRY(name, params, serve, args)                                   \
    int name params {                                                           \
        int rc;                                                                 \
        if (serve) return rc;                                                   \
        return P##name args;                                                    \
    }

SHIM_ENTRY(MPI_Allreduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm),
           shim_try_allreduce(&rc, sendbuf, recvbuf, count, datatype, op, comm),
           (sendbuf, recvbuf, count, datatype, op, comm))

SHIM_ENTRY(MPI_Reduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
            int root, MPI_Comm comm),
           shim_try_reduce(&rc, sendbuf, recvbuf, count, datatype, op, root, comm),
           (sendbuf, recvbuf, count, datatype, op, root, comm))

SHIM_ENTRY(MPI_Reduce_scatter,
           (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
            MPI_Op op, MPI_Comm comm),
           shim_try_reduce_scatter(&rc, sendbuf, recvbuf, shim_ints(recvcounts), datatype, op,
            comm),
           (sendbuf, recvbuf, recvcounts, datatype, op, comm))

SHIM_ENTRY(MPI_Reduce_scatter_block,
           (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm),
           shim_try_reduce_scatter_block(&rc, sendbuf, recvbuf, recvcount, datatype, op, comm),
           (sendbuf, recvbuf, recvcount, datatype, op, comm))

SHIM_ENTRY(MPI_Allgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
           shim_try_allgather(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

SHIM_ENTRY(MPI_Allgatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
           shim_try_allgatherv(&rc, sendbuf, sendcount, sendtype, recvbuf, shim_ints(recvcounts),
            shim_ints(displs), recvtype, comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))

SHIM_ENTRY(MPI_Bcast,
           (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm),
           shim_try_bcast(&rc, buffer, count, datatype, root, comm),
           (buffer, count, datatype, root, comm))

SHIM_ENTRY(MPI_Alltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, MPI_Comm comm),
           shim_try_alltoall(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

SHIM_ENTRY(MPI_Gather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           shim_try_gather(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))

SHIM_ENTRY(MPI_Scatter,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           shim_try_scatter(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))

SHIM_ENTRY(MPI_Barrier,
           (MPI_Comm comm),
           shim_try_barrier(&rc, comm),
           (comm))

#if SHIM_LARGE_COUNT
static shim_array shim_counts_c(const MPI_Count *v) {
    shim_array a = shim_none;
    a.c = v;
    return a;
}

static shim_array shim_aints(const MPI_Aint *v) {
    shim_array a = shim_none;
    a.a = v;
    return a;
}

SHIM_ENTRY(MPI_Allreduce_c,
           (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
            MPI_Comm comm),
           shim_try_allreduce(&rc, sendbuf, recvbuf, count, datatype, op, comm),
           (sendbuf, recvbuf, count, datatype, op, comm))

SHIM_ENTRY(MPI_Reduce_c,
           (const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op,
            int root, MPI_Comm comm),
           shim_try_reduce(&rc, sendbuf, recvbuf, count, datatype, op, root, comm),
           (sendbuf, recvbuf, count, datatype, op, root, comm))

SHIM_ENTRY(MPI_Reduce_scatter_c,
           (const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm),
           shim_try_reduce_scatter(&rc, sendbuf, recvbuf, shim_counts_c(recvcounts), datatype, op,
            comm),
           (sendbuf, recvbuf, recvcounts, datatype, op, comm))

SHIM_ENTRY(MPI_Reduce_scatter_block_c,
           (const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype,
            MPI_Op op, MPI_Comm comm),
           shim_try_reduce_scatter_block(&rc, sendbuf, recvbuf, recvcount, datatype, op, comm),
           (sendbuf, recvbuf, recvcount, datatype, op, comm))

SHIM_ENTRY(MPI_Allgather_c,
           (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
           shim_try_allgather(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

SHIM_ENTRY(MPI_Allgatherv_c,
           (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
            const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
            MPI_Comm comm),
           shim_try_allgatherv(&rc, sendbuf, sendcount, sendtype, recvbuf,
            shim_counts_c(recvcounts), shim_aints(displs), recvtype, comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm))

SHIM_ENTRY(MPI_Bcast_c,
           (void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm),
           shim_try_bcast(&rc, buffer, count, datatype, root, comm),
           (buffer, count, datatype, root, comm))

SHIM_ENTRY(MPI_Alltoall_c,
           (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm),
           shim_try_alltoall(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm))

SHIM_ENTRY(MPI_Gather_c,
           (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           shim_try_gather(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))

SHIM_ENTRY(MPI_Scatter_c,
           (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
            MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           shim_try_scatter(&rc, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
            comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm))
#endif /* SHIM_LARGE_COUNT */

/* ==== Non-blocking and persistent collectives ================================
   MPI_I<coll> and MPI-4's MPI_<coll>_init are served by redcoll's
   non-blocking collectives (redcoll_i<coll>), with the same decisions and
   the same code as the blocking entry points: the entry point marks the
   call as a start (shim_nb_into) and the shared shim_try_<coll> starts it
   (SHIM_RUN) instead of running it; staged buffers are unpacked when the
   collective completes.

   The application's handle: a one-shot collective is an MPI generalized
   request (MPI_Grequest_start), completed (MPI_Grequest_complete) once
   redcoll reports the collective done; a persistent one is an MPI request
   of its own that never carries data (a persistent receive from
   MPI_PROC_NULL, so MPI knows the handle), and each MPI_Start makes a
   generalized request for that start, which the completion calls use in
   its place. The application completes them with MPI_Wait, MPI_Test and
   the rest of the family, mixed with its own requests: those calls are
   intercepted here, move redcoll's outstanding collectives along (progress
   happens in them and in the starts, not inside other MPI calls), put the
   current generalized request where a persistent handle stands, and pass
   to PMPI; a completed collective's error comes back as MPI's would (the
   return code, or MPI_ERR_IN_STATUS with the status's MPI_ERROR), after
   the communicator's error handler saw it. A blocking completion call
   that has to wait polls (PMPI_Test*) while any redcoll collective is
   outstanding; a wait on the only outstanding one finishes it with the
   transport's blocking calls. Persistent collectives run as one start of
   the same call each (the arguments are kept at init), so a start costs
   what MPI_I<coll> costs; each start carries the persistent id its init
   took (redcoll_persistent_id), so ranks' starts match by the order of
   their inits, whatever order they start them in (MPI-4.1 section 6.13).
   A request holds its own references to what its
   call uses, from the start (or init) to its end: derived datatypes as
   MPI_Type_dup's (shim_nb_hold), a user op's function and commutativity
   (shim_nb_keep_op), the communicator's state with its transports
   (shim_comm_hold; a persistent start runs on it, not on the handle); the
   application may free its handles as soon as the call returns, as MPI
   allows. Threads: a mutex keeps the lists; progress runs under it (its MPI
   calls make no callbacks into the shim), except the blocking finish of the
   only running collective, which may sleep (other threads leave that
   communicator's requests alone meanwhile); completion
   calls on the application's arrays run outside it. */

enum { SHIM_NB_START = 1, SHIM_NB_INIT };

/* A persistent collective's call, replayed by MPI_Start. */
typedef struct shim_args {
    const void   *sbuf;
    void         *rbuf;
    MPI_Count     scount, rcount;
    MPI_Datatype  stype, rtype;
    MPI_Op        op;
    int           root;
    MPI_Comm      comm;
    shim_array    rcounts, displs;
} shim_args;

typedef struct shim_req {
    int                   mode;       /* SHIM_NB_START, SHIM_NB_INIT (persistent at init) */
    int                   started;    /* a start is under way or done but not completed by MPI */
    int                   persistent;
    MPI_Request           greq;       /* this start's generalized request */
    MPI_Request           handle;     /* persistent: the application's handle */
    redcoll_coll_request *rq;         /* the collective, while it runs */
    shim_call             c;          /* the call: communicator, state */
    shim_post             post;
    int                   code;       /* MPI error code once complete */
    int                   done;       /* the collective completed (greq completed) */
    int                   finishing;  /* a thread finishes it outside the lock */
    long long             pid;        /* persistent: its id (redcoll_persistent_id, at init) */
    size_t               *counts;     /* the call's irregular counts */
    shim_user             user;       /* a user op's call, for as long as the request runs */
    int                   kept_op;    /* user.u is the op as the first start or init found it */
    MPI_Datatype          held[2];    /* the request's own references (shim_type_hold), */
    int                   nheld;      /* freed when it is dropped */
    shim_comm            *s;          /* the communicator's state, held (shim_comm_hold)
                                         until the request is dropped */
    int                 (*redo)(int *rc, const shim_args *a);
    shim_args             args;
    struct shim_req      *next, *prev; /* live: started, or persistent */
} shim_req;

static struct {
    pthread_mutex_t mu;
    shim_req       *live;       /* every started or persistent request */
    int             running;    /* collectives started and not yet done */
    int             nlive;
    int             finishing;  /* requests some thread finishes outside the lock */
} shim_nb = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0 };

static int shim_nb_checking(const shim_req *q) { return q->mode == SHIM_NB_INIT; }
static redcoll_coll_request **shim_nb_slot(shim_req *q) { return &q->rq; }
static size_t *shim_nb_counts(shim_req *q) { return q->counts; }
static long long shim_nb_pid(const shim_req *q) { return q->mode == SHIM_NB_START ? q->pid : 0; }

/* A user op's function and commutativity live in the request from its
   first start or init to its end, so the application's MPI_Op_free (which
   drops the op from the shim's table at once) cannot reach it. */
static void shim_nb_keep_op(shim_req *q, redcoll_op *op) {
    q->user = *(const shim_user *)op->user;
    op->user = &q->user;
    q->kept_op = 1;
}
static const shim_uop *shim_nb_kept_op(const shim_req *q) { return q->kept_op ? &q->user.u : NULL; }
static shim_comm *shim_nb_comm(const shim_req *q) { return q->s; }

static void shim_nb_link(shim_req *q) { /* lock held */
    q->prev = NULL;
    q->next = shim_nb.live;
    if (q->next) q->next->prev = q;
    shim_nb.live = q;
    shim_nb.nlive++;
}

static void shim_nb_unlink(shim_req *q) { /* lock held */
    if (q->prev) q->prev->next = q->next; else shim_nb.live = q->next;
    if (q->next) q->next->prev = q->prev;
    q->next = q->prev = NULL;
    shim_nb.nlive--;
}

/* The generalized request's callbacks: an empty status (a collective's),
   the error kept for the completion call (which returns it itself, so that
   MPI's own handling of a grequest error does not run), no cancel. */
static int shim_nb_query(void *extra, MPI_Status *st) {
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int shim_nb_free_fn(void *extra) { (void)extra; return MPI_SUCCESS; }
static int shim_nb_cancel(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

/* A started call, from SHIM_RUN: keeps what finishes it and gives the
   application its generalized request; a start that failed ends the call
   now. A persistent init (checking) only frees what the call staged. */
static int shim_nb_started(shim_call *c, shim_post *post, redcoll_result r) {
    shim_req *q = c->nb;
    int err;
    if (q->mode == SHIM_NB_INIT) {
        free(post->ts);
        free(post->tr);
        q->pid = redcoll_persistent_id(c->s->t); /* every rank inits in the same order */
        return MPI_SUCCESS;
    }
    if (r != REDCOLL_OK) return shim_finish(c, post, MPI_SUCCESS, r);
    err = PMPI_Grequest_start(shim_nb_query, shim_nb_free_fn, shim_nb_cancel, q, &q->greq);
    if (err != MPI_SUCCESS) { /* no handle to give: finish it here */
        redcoll_wait(q->rq);
        redcoll_request_free(q->rq);
        q->rq = NULL;
        return shim_finish(c, post, err, REDCOLL_OK);
    }
    q->c = *c;
    q->post = *post;
    q->done = 0;
    q->code = MPI_SUCCESS;
    q->started = 1;
    pthread_mutex_lock(&shim_nb.mu);
    if (!q->persistent) shim_nb_link(q);
    shim_nb.running++;
    pthread_mutex_unlock(&shim_nb.mu);
    return MPI_SUCCESS;
}

/* Ends q's collective once redcoll says it completed (done): unpack, the
   error handler, the generalized request completed. Lock held. */
static void shim_nb_complete(shim_req *q, redcoll_result r) {
    redcoll_request_free(q->rq);
    q->rq = NULL;
    q->c.opts = NULL;
    q->code = shim_finish(&q->c, &q->post, MPI_SUCCESS, r);
    q->done = 1;
    shim_nb.running--;
    PMPI_Grequest_complete(q->greq);
}

/* Whether a request of q's communicator (its state, which outlives a freed
   handle) is being finished by some thread outside the lock: redcoll's
   requests of one transport move together, so q waits until that thread is
   done. Lock held. */
static int shim_nb_busy(const shim_req *q) {
    const shim_req *o;
    if (!shim_nb.finishing) return 0;
    for (o = shim_nb.live; o; o = o->next)
        if (o->finishing && o->c.s == q->c.s) return 1;
    return 0;
}

/* Moves every outstanding collective along; completes those that ended.
   `wait`: a request the caller will block on; when it is the only one
   running it is finished with the transport's blocking calls, outside the
   lock, since they may sleep: meanwhile other threads' completion calls go
   on with the collectives of other communicators (MPI_THREAD_MULTIPLE). */
static void shim_nb_progress(shim_req *wait) {
    shim_req *q;
    if (!shim_nb.running) return;
    pthread_mutex_lock(&shim_nb.mu);
    if (wait && wait->rq && !wait->done && shim_nb.running == 1 && !shim_nb_busy(wait)) {
        redcoll_result r;
        wait->finishing = 1;
        shim_nb.finishing++;
        pthread_mutex_unlock(&shim_nb.mu);
        r = redcoll_wait(wait->rq);
        pthread_mutex_lock(&shim_nb.mu);
        wait->finishing = 0;
        shim_nb.finishing--;
        shim_nb_complete(wait, r);
    } else {
        for (q = shim_nb.live; q; q = q->next) {
            int done = 0;
            redcoll_result r;
            if (!q->rq || q->done || shim_nb_busy(q)) continue;
            r = redcoll_test(q->rq, &done);
            if (done) shim_nb_complete(q, r);
        }
    }
    pthread_mutex_unlock(&shim_nb.mu);
}

/* The live request whose application handle (a persistent one) or
   generalized request is h; NULL: the application's own. */
static shim_req *shim_nb_find(MPI_Request h) {
    shim_req *q;
    if (h == MPI_REQUEST_NULL || !shim_nb.nlive) return NULL;
    pthread_mutex_lock(&shim_nb.mu);
    for (q = shim_nb.live; q; q = q->next)
        if (q->persistent ? q->handle == h : q->greq == h) break;
    pthread_mutex_unlock(&shim_nb.mu);
    return q;
}

static void shim_nb_drop(shim_req *q) {
    if (!q) return;
    while (q->nheld > 0) PMPI_Type_free(&q->held[--q->nheld]);
    shim_comm_release(q->s); /* may be the last reference: the transports go */
    free(q->counts);
    free(q);
}

/* ---- the application's arrays in the completion calls ---- */

/* An array as MPI is to see it: each persistent handle replaced by its
   current generalized request (MPI_REQUEST_NULL when inactive), and which
   entries are redcoll's collectives. */
typedef struct shim_view {
    MPI_Request *reqs, few[8];
    shim_req   **ours, *fewq[8];
    int          n, any;
} shim_view;

static int shim_view_make(shim_view *v, int n, const MPI_Request *reqs) {
    int i;
    v->n = n; v->any = 0;
    v->reqs = v->few; v->ours = v->fewq;
    if (n > 8) {
        v->reqs = (MPI_Request *)malloc(sizeof *v->reqs * (size_t)n);
        v->ours = (shim_req **)malloc(sizeof *v->ours * (size_t)n);
        if (!v->reqs || !v->ours) { free(v->reqs); free(v->ours); return 0; }
    }
    for (i = 0; i < n; ++i) {
        shim_req *q = shim_nb_find(reqs[i]);
        v->ours[i] = q;
        v->reqs[i] = q && q->persistent ? (q->started ? q->greq : MPI_REQUEST_NULL) : reqs[i];
        v->any |= q != NULL;
    }
    return 1;
}

/* After MPI completed some entries: the application's array back (a
   persistent handle stays, inactive once its start completed), each
   completed collective released and its error returned (statuses' MPI_ERROR
   too when given): MPI_SUCCESS, the code, or MPI_ERR_IN_STATUS (multi). */
static int shim_view_done(shim_view *v, MPI_Request *reqs, MPI_Status *st, int multi, int rc) {
    int i, bad = 0, code = MPI_SUCCESS;
    int given = st && st != MPI_STATUS_IGNORE && st != MPI_STATUSES_IGNORE;
    for (i = 0; i < v->n; ++i) { /* the entries that completed, and how */
        shim_req *q = v->ours[i];
        int completed = q && q->started && v->reqs[i] == MPI_REQUEST_NULL;
        reqs[i] = q && q->persistent ? q->handle : v->reqs[i];
        if (!completed) { v->ours[i] = NULL; continue; }
        if (q->code != MPI_SUCCESS && code == MPI_SUCCESS) code = q->code;
        bad |= q->code != MPI_SUCCESS;
    }
    if (bad && given && rc == MPI_SUCCESS) {
        if (!multi) st->MPI_ERROR = code;
        else for (i = 0; i < v->n; ++i) /* MPI_ERR_IN_STATUS: every entry says how it went */
            st[i].MPI_ERROR = v->ours[i] ? v->ours[i]->code : MPI_SUCCESS;
    }
    for (i = 0; i < v->n; ++i) { /* completed collectives released */
        shim_req *q = v->ours[i];
        if (!q) continue;
        q->started = 0;
        if (q->persistent) continue;
        pthread_mutex_lock(&shim_nb.mu);
        shim_nb_unlink(q);
        pthread_mutex_unlock(&shim_nb.mu);
        shim_nb_drop(q);
    }
    if (v->reqs != v->few) { free(v->reqs); free(v->ours); }
    if (!bad || rc != MPI_SUCCESS) return rc;
    return multi && given ? MPI_ERR_IN_STATUS : code;
}

/* ---- the completion calls ---- */

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *st) {
    shim_view v;
    int rc;
    if (!shim_nb.nlive) return PMPI_Test(req, flag, st);
    shim_nb_progress(NULL);
    if (!shim_view_make(&v, 1, req)) return MPI_ERR_NO_MEM;
    rc = PMPI_Test(v.reqs, flag, st);
    return shim_view_done(&v, req, st, 0, rc);
}

int MPI_Wait(MPI_Request *req, MPI_Status *st) {
    shim_view v;
    int rc, flag = 0;
    if (!shim_nb.nlive) return PMPI_Wait(req, st);
    if (!shim_view_make(&v, 1, req)) return MPI_ERR_NO_MEM;
    shim_nb_progress(v.ours[0]);
    do {
        rc = PMPI_Test(v.reqs, &flag, st);
        if (!flag && rc == MPI_SUCCESS) shim_nb_progress(v.ours[0]);
    } while (!flag && rc == MPI_SUCCESS);
    return shim_view_done(&v, req, st, 0, rc);
}

int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status sts[]) {
    shim_view v;
    int rc;
    if (!shim_nb.nlive) return PMPI_Testall(n, reqs, flag, sts);
    shim_nb_progress(NULL);
    if (!shim_view_make(&v, n, reqs)) return MPI_ERR_NO_MEM;
    rc = PMPI_Testall(n, v.reqs, flag, sts);
    return shim_view_done(&v, reqs, sts, 1, rc);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    shim_view v;
    int rc, flag = 0;
    if (!shim_nb.nlive) return PMPI_Waitall(n, reqs, sts);
    if (!shim_view_make(&v, n, reqs)) return MPI_ERR_NO_MEM;
    do {
        shim_nb_progress(n == 1 ? v.ours[0] : NULL);
        rc = PMPI_Testall(n, v.reqs, &flag, sts);
    } while (!flag && rc == MPI_SUCCESS);
    return shim_view_done(&v, reqs, sts, 1, rc);
}

/* Testany / Waitany: the index MPI picks among the entries (collectives
   count once their generalized request is complete). */
static int shim_any(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st, int wait) {
    shim_view v;
    int rc;
    if (!shim_view_make(&v, n, reqs)) return MPI_ERR_NO_MEM;
    do {
        shim_nb_progress(NULL);
        rc = PMPI_Testany(n, v.reqs, index, flag, st);
    } while (wait && !*flag && rc == MPI_SUCCESS);
    return shim_view_done(&v, reqs, st, 0, rc);
}

int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *st) {
    if (!shim_nb.nlive) return PMPI_Testany(n, reqs, index, flag, st);
    return shim_any(n, reqs, index, flag, st, 0);
}

int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *st) {
    int flag = 0;
    if (!shim_nb.nlive) return PMPI_Waitany(n, reqs, index, st);
    return shim_any(n, reqs, index, &flag, st, 1);
}

/* Testsome / Waitsome: the completed entries' statuses are in index order. */
static int shim_some(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[], int wait) {
    shim_view v;
    int rc, k, bad = 0;
    if (!shim_view_make(&v, n, reqs)) return MPI_ERR_NO_MEM;
    do {
        shim_nb_progress(NULL);
        rc = PMPI_Testsome(n, v.reqs, outcount, idx, sts);
    } while (wait && *outcount == 0 && rc == MPI_SUCCESS);
    for (k = 0; rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED && k < *outcount; ++k) {
        shim_req *q = v.ours[idx[k]];
        bad |= q && q->code != MPI_SUCCESS;
    }
    for (k = 0; bad && sts != MPI_STATUSES_IGNORE && k < *outcount; ++k) { /* in index order */
        shim_req *q = v.ours[idx[k]];
        sts[k].MPI_ERROR = q ? q->code : MPI_SUCCESS;
    }
    rc = shim_view_done(&v, reqs, MPI_STATUSES_IGNORE, 0, rc);
    return bad && sts != MPI_STATUSES_IGNORE ? MPI_ERR_IN_STATUS : rc;
}

int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[]) {
    if (!shim_nb.nlive) return PMPI_Testsome(n, reqs, outcount, idx, sts);
    return shim_some(n, reqs, outcount, idx, sts, 0);
}

int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int idx[], MPI_Status sts[]) {
    if (!shim_nb.nlive) return PMPI_Waitsome(n, reqs, outcount, idx, sts);
    return shim_some(n, reqs, outcount, idx, sts, 1);
}

int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *st) {
    shim_req *q;
    if (!shim_nb.nlive) return PMPI_Request_get_status(req, flag, st);
    shim_nb_progress(NULL);
    q = shim_nb_find(req);
    if (q && q->persistent && !q->started) { *flag = 1; return PMPI_Request_get_status(MPI_REQUEST_NULL, flag, st); }
    return PMPI_Request_get_status(q && q->persistent ? q->greq : req, flag, st);
}

/* Frees a handle: a collective still running is completed first (its peers
   rely on it), a persistent one's kept call goes too. */
int MPI_Request_free(MPI_Request *req) {
    shim_req *q = shim_nb.nlive ? shim_nb_find(*req) : NULL;
    MPI_Request h;
    int rc;
    if (!q) return PMPI_Request_free(req);
    while (q->started && !q->done) shim_nb_progress(q);
    pthread_mutex_lock(&shim_nb.mu);
    shim_nb_unlink(q);
    pthread_mutex_unlock(&shim_nb.mu);
    if (q->started) PMPI_Request_free(&q->greq);
    h = q->persistent ? q->handle : MPI_REQUEST_NULL;
    shim_nb_drop(q);
    rc = h != MPI_REQUEST_NULL ? PMPI_Request_free(&h) : MPI_SUCCESS;
    *req = MPI_REQUEST_NULL;
    return rc;
}

/* ---- starts ---- */

/* A request for a call about to be tried as a start (or a persistent
   init); NULL when the shim is off (the call then goes to MPI). */
static shim_req *shim_nb_open(int mode, MPI_Comm comm) {
    shim_req *q;
    int p = 0;
    if (!shim_start() || comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &p) != MPI_SUCCESS) return NULL;
    q = (shim_req *)calloc(1, sizeof *q);
    if (q) q->counts = (size_t *)malloc(sizeof(size_t) * (size_t)(p > 0 ? p : 1));
    if (!q || !q->counts) { shim_nb_drop(q); return NULL; }
    q->mode = mode;
    q->greq = q->handle = MPI_REQUEST_NULL;
    shim_nb_into = q;
    return q;
}

/* After the try: 1 with *request set when the shim served it (rc is the
   call's code), 0 when it goes to MPI. */
static int shim_nb_close(shim_req *q, int served, int rc, MPI_Request *request) {
    shim_nb_into = NULL;
    if (!served) { shim_nb_drop(q); return 0; }
    if (q->mode == SHIM_NB_INIT && rc == MPI_SUCCESS) {
        rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &q->handle);
        if (rc == MPI_SUCCESS) {
            q->persistent = 1;
            pthread_mutex_lock(&shim_nb.mu);
            shim_nb_link(q);
            pthread_mutex_unlock(&shim_nb.mu);
            *request = q->handle;
            return 1;
        }
    }
    if (rc != MPI_SUCCESS || !q->started) { /* an error at start: no request */
        *request = MPI_REQUEST_NULL;
        shim_nb_drop(q);
        return 1;
    }
    *request = q->greq;
    shim_nb_progress(NULL); /* the first steps of what is under way */
    return 1;
}

/* MPI_Start on a persistent collective: its call once more, as a start. */
static int shim_nb_restart(shim_req *q) {
    int rc = MPI_SUCCESS;
    if (q->started) return MPI_ERR_REQUEST; /* still active */
    q->mode = SHIM_NB_START;
    shim_nb_into = q;
    if (!q->redo(&rc, &q->args)) rc = MPI_ERR_INTERN; /* served at init: served now */
    shim_nb_into = NULL;
    if (rc == MPI_SUCCESS) shim_nb_progress(NULL);
    return rc;
}

int MPI_Start(MPI_Request *req) {
    shim_req *q = shim_nb.nlive ? shim_nb_find(*req) : NULL;
    return q && q->persistent ? shim_nb_restart(q) : PMPI_Start(req);
}

int MPI_Startall(int n, MPI_Request reqs[]) {
    int i, rc = MPI_SUCCESS;
    for (i = 0; i < n && rc == MPI_SUCCESS; ++i) rc = MPI_Start(&reqs[i]);
    return rc;
}

/* The calls a persistent collective replays, from its kept arguments. */
static int shim_redo_allreduce(int *rc, const shim_args *a) {
    return shim_try_allreduce(rc, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
}
static int shim_redo_reduce(int *rc, const shim_args *a) {
    return shim_try_reduce(rc, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->root, a->comm);
}
static int shim_redo_reduce_scatter(int *rc, const shim_args *a) {
    return shim_try_reduce_scatter(rc, a->sbuf, a->rbuf, a->rcounts, a->rtype, a->op, a->comm);
}
static int shim_redo_reduce_scatter_block(int *rc, const shim_args *a) {
    return shim_try_reduce_scatter_block(rc, a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, a->comm);
}
static int shim_redo_allgather(int *rc, const shim_args *a) {
    return shim_try_allgather(rc, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
}
static int shim_redo_allgatherv(int *rc, const shim_args *a) {
    return shim_try_allgatherv(rc, a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->displs,
                               a->rtype, a->comm);
}
static int shim_redo_bcast(int *rc, const shim_args *a) {
    return shim_try_bcast(rc, a->rbuf, a->rcount, a->rtype, a->root, a->comm);
}
static int shim_redo_alltoall(int *rc, const shim_args *a) {
    return shim_try_alltoall(rc, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->comm);
}
static int shim_redo_gather(int *rc, const shim_args *a) {
    return shim_try_gather(rc, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
                           a->comm);
}
static int shim_redo_scatter(int *rc, const shim_args *a) {
    return shim_try_scatter(rc, a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, a->root,
                            a->comm);
}
static int shim_redo_barrier(int *rc, const shim_args *a) {
    return shim_try_barrier(rc, a->comm);
}

/* The request's own references to the derived datatypes its call uses on
   this rank (shim_type_hold), in place of the application's in q->args:
   the call runs on them, a persistent one replays them, shim_nb_drop frees
   them. The datatypes MPI ignores on this rank (a root's only, or beside
   MPI_IN_PLACE) may be any value, so they are left alone. */
static void shim_nb_hold(shim_req *q, const shim_comm *s) {
    shim_args *a = &q->args;
    int (*f)(int *, const shim_args *) = q->redo;
    int root = s->rank == a->root;
    int sends = f == shim_redo_allgather || f == shim_redo_allgatherv || f == shim_redo_alltoall ||
                        f == shim_redo_gather ? a->sbuf != MPI_IN_PLACE
                : f == shim_redo_scatter ? root : 0;
    int recvs = f == shim_redo_barrier ? 0
                : f == shim_redo_gather ? root
                : f == shim_redo_scatter ? a->rbuf != MPI_IN_PLACE : 1;
    if (sends) {
        MPI_Datatype t = shim_type_hold(a->stype);
        if (t != a->stype) q->held[q->nheld++] = a->stype = t;
    }
    if (recvs) {
        MPI_Datatype t = shim_type_hold(a->rtype);
        if (t != a->rtype) q->held[q->nheld++] = a->rtype = t;
    }
}

/* REDCOLL_VERBOSE: once per process (world rank 0), that a start went to MPI
   because no blocking collective had set its communicator up. */
static void shim_pass_unset(void) {
    static atomic_int said;
    if (!shim_g.verbose || shim_world_rank() != 0 || atomic_exchange(&said, 1)) return;
    fprintf(stderr, "redcoll: a non-blocking or persistent collective passed to MPI: no blocking "
            "collective has run on its communicator yet (setting one up waits for its other ranks, "
            "which a start must not)\n");
}

/* One start or persistent init of `redo` with arguments a: served (1, the
   code in *rc, the handle in *request) or not (0: the caller asks MPI). */
static int shim_nb_call(int mode, int (*redo)(int *, const shim_args *), const shim_args *a, int *rc,
                        MPI_Request *request) {
    shim_req *q = shim_nb_open(mode, a->comm);
    shim_comm *s;
    if (!q) return 0;
    q->redo = redo;
    q->args = *a;
    /* Setting a communicator up waits for its other ranks (it duplicates the
       communicator and maps a segment), which a start or a persistent init
       must not: ranks may start collectives on two communicators in
       different orders. So only blocking collectives set one up, and a
       start on a communicator none has run on yet goes to MPI. Every rank
       decides alike: they make the same collectives on a communicator in
       the same order. */
    s = shim_comm_find(a->comm, 0);
    if (!s) {
        shim_nb_into = NULL;
        shim_nb_drop(q);
        shim_pass_unset();
        return 0;
    }
    shim_comm_hold(q->s = s);
    if (s && s->ok) shim_nb_hold(q, s);
    *rc = MPI_SUCCESS;
    return shim_nb_close(q, redo(rc, &q->args), *rc, request);
}

/* Arguments of the entry points, in shim_args. */
static shim_args shim_counted(shim_args a, shim_array rcounts, shim_array displs) {
    a.rcounts = rcounts;
    a.displs = displs;
    return a;
}
static shim_args shim_red_args(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                               MPI_Op op, int root, MPI_Comm comm) {
    shim_args a;
    memset(&a, 0, sizeof a);
    a.sbuf = sbuf; a.rbuf = rbuf; a.rcount = count; a.rtype = type; a.op = op; a.root = root;
    a.comm = comm;
    return a;
}
static shim_args shim_move_args(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                                MPI_Count rcount, MPI_Datatype rtype, int root, MPI_Comm comm) {
    shim_args a;
    memset(&a, 0, sizeof a);
    a.sbuf = sbuf; a.scount = scount; a.stype = stype; a.rbuf = rbuf; a.rcount = rcount;
    a.rtype = rtype; a.root = root; a.comm = comm;
    return a;
}

/* Each non-blocking or persistent entry point: served, or to PMPI_. */
#define SHIM_NB_ENTRY(name, params, mode, redo, argv, request, args)            \
    int name params {                                                           \
        int rc;                                                                 \
        shim_args a_ = argv;                                                    \
        if (shim_nb_call(mode, redo, &a_, &rc, request)) return rc;             \
        return P##name args;                                                    \
    }

SHIM_NB_ENTRY(MPI_Iallreduce,
              (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_allreduce,
              shim_red_args(sendbuf, recvbuf, count, datatype, op, 0, comm), request,
              (sendbuf, recvbuf, count, datatype, op, comm, request))
SHIM_NB_ENTRY(MPI_Ireduce,
              (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_reduce,
              shim_red_args(sendbuf, recvbuf, count, datatype, op, root, comm), request,
              (sendbuf, recvbuf, count, datatype, op, root, comm, request))
SHIM_NB_ENTRY(MPI_Ireduce_scatter,
              (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_reduce_scatter,
              shim_counted(shim_red_args(sendbuf, recvbuf, 0, datatype, op, 0, comm), shim_ints(recvcounts),
                           shim_none), request,
              (sendbuf, recvbuf, recvcounts, datatype, op, comm, request))
SHIM_NB_ENTRY(MPI_Ireduce_scatter_block,
              (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_reduce_scatter_block,
              shim_red_args(sendbuf, recvbuf, recvcount, datatype, op, 0, comm), request,
              (sendbuf, recvbuf, recvcount, datatype, op, comm, request))
SHIM_NB_ENTRY(MPI_Iallgather,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_allgather,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm), request,
              (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
SHIM_NB_ENTRY(MPI_Iallgatherv,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
               MPI_Request *request),
              SHIM_NB_START, shim_redo_allgatherv,
              shim_counted(shim_move_args(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0, comm),
                           shim_ints(recvcounts), shim_ints(displs)), request,
              (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request))
SHIM_NB_ENTRY(MPI_Ibcast,
              (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request),
              SHIM_NB_START, shim_redo_bcast,
              shim_move_args(NULL, 0, MPI_DATATYPE_NULL, buffer, count, datatype, root, comm), request,
              (buffer, count, datatype, root, comm, request))
SHIM_NB_ENTRY(MPI_Ialltoall,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_alltoall,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm), request,
              (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request))
SHIM_NB_ENTRY(MPI_Igather,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_gather,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              request, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
SHIM_NB_ENTRY(MPI_Iscatter,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_scatter,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              request, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request))
SHIM_NB_ENTRY(MPI_Ibarrier,
              (MPI_Comm comm, MPI_Request *request),
              SHIM_NB_START, shim_redo_barrier,
              shim_red_args(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, comm), request,
              (comm, request))

#if MPI_VERSION >= 4
SHIM_NB_ENTRY(MPI_Allreduce_init,
              (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Info info, MPI_Request *request),
              SHIM_NB_INIT, shim_redo_allreduce,
              shim_red_args(sendbuf, recvbuf, count, datatype, op, 0, comm), request,
              (sendbuf, recvbuf, count, datatype, op, comm, info, request))
SHIM_NB_ENTRY(MPI_Reduce_init,
              (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm, MPI_Info info, MPI_Request *request),
              SHIM_NB_INIT, shim_redo_reduce,
              shim_red_args(sendbuf, recvbuf, count, datatype, op, root, comm), request,
              (sendbuf, recvbuf, count, datatype, op, root, comm, info, request))
SHIM_NB_ENTRY(MPI_Reduce_scatter_init,
              (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request),
              SHIM_NB_INIT, shim_redo_reduce_scatter,
              shim_counted(shim_red_args(sendbuf, recvbuf, 0, datatype, op, 0, comm), shim_ints(recvcounts),
                           shim_none), request,
              (sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request))
SHIM_NB_ENTRY(MPI_Reduce_scatter_block_init,
              (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Info info, MPI_Request *request),
              SHIM_NB_INIT, shim_redo_reduce_scatter_block,
              shim_red_args(sendbuf, recvbuf, recvcount, datatype, op, 0, comm), request,
              (sendbuf, recvbuf, recvcount, datatype, op, comm, info, request))
SHIM_NB_ENTRY(MPI_Allgather_init,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
               MPI_Request *request),
              SHIM_NB_INIT, shim_redo_allgather,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm), request,
              (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
SHIM_NB_ENTRY(MPI_Allgatherv_init,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
               MPI_Info info, MPI_Request *request),
              SHIM_NB_INIT, shim_redo_allgatherv,
              shim_counted(shim_move_args(sendbuf, sendcount, sendtype, recvbuf, 0, recvtype, 0, comm),
                           shim_ints(recvcounts), shim_ints(displs)), request,
              (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, info, request))
SHIM_NB_ENTRY(MPI_Bcast_init,
              (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
               MPI_Request *request),
              SHIM_NB_INIT, shim_redo_bcast,
              shim_move_args(NULL, 0, MPI_DATATYPE_NULL, buffer, count, datatype, root, comm), request,
              (buffer, count, datatype, root, comm, info, request))
SHIM_NB_ENTRY(MPI_Alltoall_init,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
               MPI_Request *request),
              SHIM_NB_INIT, shim_redo_alltoall,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, 0, comm), request,
              (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info, request))
SHIM_NB_ENTRY(MPI_Gather_init,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
               MPI_Request *request),
              SHIM_NB_INIT, shim_redo_gather,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              request, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request))
SHIM_NB_ENTRY(MPI_Scatter_init,
              (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
               MPI_Request *request),
              SHIM_NB_INIT, shim_redo_scatter,
              shim_move_args(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
              request, (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info, request))
SHIM_NB_ENTRY(MPI_Barrier_init,
              (MPI_Comm comm, MPI_Info info, MPI_Request *request),
              SHIM_NB_INIT, shim_redo_barrier,
              shim_red_args(NULL, NULL, 0, MPI_DATATYPE_NULL, MPI_OP_NULL, 0, comm), request,
              (comm, info, request))
#endif

/* Releases what MPI_Finalize finds live: persistent collectives the
   application never freed, and (an erroneous program) collectives never
   completed, which are finished first. */
static void shim_nb_finalize(void) {
    for (;;) {
        shim_req *q;
        MPI_Request h;
        pthread_mutex_lock(&shim_nb.mu);
        q = shim_nb.live;
        pthread_mutex_unlock(&shim_nb.mu);
        if (!q) break;
        h = q->persistent ? q->handle : q->greq;
        MPI_Request_free(&h);
    }
}

/* ---- user ops and finalize ---------------------------------------------------- */

static void shim_uop_add(MPI_Op op, const shim_uop *u) {
    shim_uop x = *u;
    int commute = 1;
    if (PMPI_Op_commutative(op, &commute) == MPI_SUCCESS) x.commute = commute;
    x.op = op;
    pthread_mutex_lock(&shim_g.lock);
    if (shim_g.nuops == shim_g.cap_uops) {
        size_t cap = shim_g.cap_uops ? 2 * shim_g.cap_uops : 16;
        shim_uop *more = (shim_uop *)realloc(shim_g.uops, cap * sizeof *more);
        if (more) { shim_g.uops = more; shim_g.cap_uops = cap; }
    }
    if (shim_g.nuops < shim_g.cap_uops) shim_g.uops[shim_g.nuops++] = x; /* else: passes through */
    pthread_mutex_unlock(&shim_g.lock);
}

int MPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op) {
    int rc = PMPI_Op_create(user_fn, commute, op);
    shim_uop u;
    memset(&u, 0, sizeof u);
    u.fn = user_fn;
    u.commute = commute;
    if (rc == MPI_SUCCESS && user_fn) shim_uop_add(*op, &u);
    return rc;
}

#if SHIM_LARGE_COUNT
int MPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op) {
    int rc = PMPI_Op_create_c(user_fn, commute, op);
    shim_uop u;
    memset(&u, 0, sizeof u);
    u.fn_c = user_fn;
    u.commute = commute;
    if (rc == MPI_SUCCESS && user_fn) shim_uop_add(*op, &u);
    return rc;
}
#endif

/* The op leaves the table at once: requests still using it keep their own
   copy (shim_nb_keep_op), and MPI may give the handle to the next op. */
int MPI_Op_free(MPI_Op *op) {
    size_t i;
    if (op) {
        pthread_mutex_lock(&shim_g.lock);
        for (i = 0; i < shim_g.nuops; ++i)
            if (shim_g.uops[i].op == *op) { shim_g.uops[i] = shim_g.uops[--shim_g.nuops]; break; }
        pthread_mutex_unlock(&shim_g.lock);
    }
    return PMPI_Op_free(op);
}

/* MPI_COMM_WORLD is set up inside MPI_Init, where every rank is: setting a
   communicator up waits for its other ranks, which a start must not
   (shim_nb_call), so a program whose first collective is non-blocking is
   served (and summed exactly under REDCOLL_SUM_EXACT) from its first call.
   Other communicators are set up by their first blocking collective. */
int MPI_Init(int *argc, char ***argv) {
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) (void)shim_comm_of(MPI_COMM_WORLD);
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS) (void)shim_comm_of(MPI_COMM_WORLD);
    return rc;
}

/* Frees every transport and cache entry (each attribute's delete callback
   unlinks its state), then the keyvals. The requests go first: a state
   whose communicator the application freed is not in the list, and goes
   with the last request that held it; the others go with their
   attributes, each once. */
int MPI_Finalize(void) {
    shim_nb_finalize();
    if (shim_g.ready) {
        for (;;) {
            shim_comm *s;
            pthread_mutex_lock(&shim_g.lock);
            s = shim_g.comms;
            pthread_mutex_unlock(&shim_g.lock);
            if (!s) break;
            if (PMPI_Comm_delete_attr(s->user, shim_g.comm_key) != MPI_SUCCESS)
                shim_comm_delete(s->user, shim_g.comm_key, s, NULL);
        }
        for (;;) {
            shim_type *t;
            pthread_mutex_lock(&shim_g.lock);
            t = shim_g.types;
            pthread_mutex_unlock(&shim_g.lock);
            if (!t) break;
            if (PMPI_Type_delete_attr(t->type, shim_g.type_key) != MPI_SUCCESS)
                shim_type_delete(t->type, shim_g.type_key, t, NULL);
        }
        PMPI_Comm_free_keyval(&shim_g.comm_key);
        PMPI_Type_free_keyval(&shim_g.type_key);
        shim_g.ready = 0;
        shim_g.disabled = 1; /* nothing after finalize is served */
    }
    free(shim_g.uops);
    shim_g.uops = NULL;
    shim_g.nuops = shim_g.cap_uops = 0;
    return PMPI_Finalize();
}
