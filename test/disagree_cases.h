/* disagree_cases.h - the cases of ranks that disagree, for every transport's
   suite (test/test_disagree.c: simulator and threads; test/mpi/test_mpi.c:
   MPI). Needs redcoll.h (with its implementation) and <string.h>.

   Every case is one collective (all eleven) that the last rank ("odd")
   makes differently from the others, as one of the kinds below says; then,
   as a program goes on, every rank whose call returned OK makes two more
   calls on the same transport, a barrier (a bcast after a barrier, so that a
   rank that skipped the barrier is not simply one barrier behind) and
   another barrier, where a rank that could not see the mistake in its own
   call learns of it: the first error of a rank is in the call where it can
   see the mistake or in a later one. One later call is not always enough: a
   rank whose peer is done with the first one in time (an eager send)
   completes it before the peer finds the mistake. */
#ifndef REDCOLL_TEST_DISAGREE_CASES_H
#define REDCOLL_TEST_DISAGREE_CASES_H

typedef enum td_kind {
    TD_COUNT, TD_ROOT, TD_OP, TD_DTYPE, TD_ALGO, TD_INPLACE, TD_SKIP, TD_OTHER, TD_NONE, TD_KINDS
} td_kind;
static const char *const td_kind_names[TD_KINDS] = {
    "count", "root", "op", "dtype", "algorithm", "in place", "skip", "other collective", "none"
};

enum { TD_N = 5, TD_PMAX = 5, TD_BUF = TD_PMAX * (TD_N + 2) };

typedef struct td_case {
    redcoll_coll   coll;
    td_kind        kind;
    redcoll_algo   algo[2];            /* TD_ALGO: the others' and the odd rank's */
    redcoll_result res[TD_PMAX];       /* each rank's first error */
    int            in_call[TD_PMAX];   /* 1: in the call itself, 0: in a call after */
    int32_t        out[TD_PMAX][TD_BUF];
} td_case;

/* Whether kind k is a mistake collective c can make. */
static int td_applies(redcoll_coll c, td_kind k, redcoll_algo *algo) {
    int a, n = 0;
    switch (k) {
    case TD_ROOT:
        return c == REDCOLL_COLL_REDUCE || c == REDCOLL_COLL_BCAST || c == REDCOLL_COLL_GATHER ||
               c == REDCOLL_COLL_SCATTER;
    case TD_OP:
        return c == REDCOLL_COLL_ALLREDUCE || c == REDCOLL_COLL_REDUCE ||
               c == REDCOLL_COLL_REDUCE_SCATTER || c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK;
    case TD_COUNT: case TD_DTYPE:
        return c != REDCOLL_COLL_BARRIER;
    case TD_INPLACE:
        return c == REDCOLL_COLL_ALLREDUCE || c == REDCOLL_COLL_REDUCE_SCATTER ||
               c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK || c == REDCOLL_COLL_ALLGATHER ||
               c == REDCOLL_COLL_ALLGATHERV || c == REDCOLL_COLL_ALLTOALL;
    case TD_ALGO: /* the first two algorithms the collective has */
        for (a = 1; a < REDCOLL_ALGO_COUNT && n < 2; ++a)
            if (redcoll_algo_supported(c, (redcoll_algo)a)) algo[n++] = (redcoll_algo)a;
        return n == 2;
    default:
        return 1;
    }
}

/* One collective as this rank makes it (odd: the rank that disagrees). */
static redcoll_result td_call(const redcoll_transport *t, td_case *x, redcoll_coll c, int odd) {
    int32_t *out = x->out[t->rank], in[TD_BUF];
    size_t n = TD_N + (odd && x->kind == TD_COUNT), counts[TD_PMAX];
    int i, root = odd && x->kind == TD_ROOT ? 1 : 0, in_place = odd && x->kind == TD_INPLACE;
    redcoll_dtype d = odd && x->kind == TD_DTYPE ? REDCOLL_FLOAT : REDCOLL_INT32;
    redcoll_op op = odd && x->kind == TD_OP ? REDCOLL_MAX : REDCOLL_SUM;
    redcoll_options o;
    const void *s = in_place ? REDCOLL_IN_PLACE : (const void *)in;
    memset(&o, 0, sizeof o);
    if (x->kind == TD_ALGO && c == x->coll) o.algo = x->algo[odd];
    for (i = 0; i < TD_BUF; ++i) in[i] = out[i] = t->rank * 100 + i;
    for (i = 0; i < t->size; ++i) counts[i] = TD_N;
    if (odd && x->kind == TD_COUNT) counts[t->size - 1] = TD_N + 1;
    switch (c) {
    case REDCOLL_COLL_ALLREDUCE: return redcoll_allreduce(t, s, out, n, d, op, &o);
    case REDCOLL_COLL_REDUCE: return redcoll_reduce(t, in, out, n, d, op, root, &o);
    case REDCOLL_COLL_REDUCE_SCATTER: return redcoll_reduce_scatter(t, s, out, counts, d, op, &o);
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK: return redcoll_reduce_scatter_block(t, s, out, n, d, op, &o);
    case REDCOLL_COLL_ALLGATHER: return redcoll_allgather(t, s, out, n, d, &o);
    case REDCOLL_COLL_ALLGATHERV: return redcoll_allgatherv(t, s, out, counts, d, &o);
    case REDCOLL_COLL_BCAST: return redcoll_bcast(t, out, n, d, root, &o);
    case REDCOLL_COLL_ALLTOALL: return redcoll_alltoall(t, s, out, n, d, &o);
    case REDCOLL_COLL_GATHER: return redcoll_gather(t, in, out, n, d, root, &o);
    case REDCOLL_COLL_SCATTER: return redcoll_scatter(t, in, out, n, d, root, &o);
    default: return redcoll_barrier(t, &o);
    }
}

static redcoll_result td_rank(const redcoll_transport *t, void *arg) {
    td_case *x = (td_case *)arg;
    int odd = t->rank == t->size - 1 && x->kind != TD_NONE;
    redcoll_coll c = x->coll;
    redcoll_result r;
    if (odd && x->kind == TD_OTHER) c = c == REDCOLL_COLL_BCAST ? REDCOLL_COLL_ALLREDUCE : REDCOLL_COLL_BCAST;
    x->in_call[t->rank] = 1;
    r = odd && x->kind == TD_SKIP ? REDCOLL_OK : td_call(t, x, c, odd);
    if (r == REDCOLL_OK) { /* the program goes on (after a barrier, with another call) */
        int32_t v = 1;
        x->in_call[t->rank] = 0;
        r = x->coll == REDCOLL_COLL_BARRIER ? redcoll_bcast(t, &v, 1, REDCOLL_INT32, 0, NULL)
                                            : redcoll_barrier(t, NULL);
    }
    if (r == REDCOLL_OK) r = redcoll_barrier(t, NULL);
    x->res[t->rank] = r;
    return REDCOLL_OK;
}

#endif /* REDCOLL_TEST_DISAGREE_CASES_H */
