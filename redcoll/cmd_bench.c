/* cmd_bench.c - `redcoll bench`: time collectives on threads or MPI, with
   nccl-tests' columns, every result checked. Included by main.c.

   For each collective, size and placement (out of / in place) the rows (auto,
   algorithms, MPI's native collective) share one set of buffers from the
   harness and are timed interleaved: each row gets its warm-up calls and a
   batch size (--iters, or doubling until a batch fills BENCH_BATCH_SECONDS),
   then --reps rounds time one batch of every row in turn (each round starting
   one row further), each batch between
   barriers and taken as the slowest rank's. The row's time is the median
   batch divided by its calls. Then every row runs once more on fresh inputs
   and every rank's result is compared element by element with the exact one
   (the harness's inputs make every sum exact in any order).

   Threads: one team of p threads per phase (a failing row is reported and the
   phase rerun without it, since an aborted team stays aborted). Processes
   (pshm: this one and the p - 1 it forks, sharing a segment) and MPI: every
   process is one rank and keeps its vectors in its own memory; an error ends
   the run (an aborted transport stays aborted). Processes synchronise and
   agree through the transport itself, MPI through a duplicate communicator.

   REDCOLL_BENCH_CORRUPT=R (for the tests): flips a byte of rank R's result
   before the check, which must then report a wrong element. */

#define BENCH_BATCH_SECONDS 0.005
#define BENCH_MAX_ITERS     (1L << 20)

typedef struct bench_row {
    rc_spec            spec;     /* the case; opts.algo = what runs (AUTO for auto) */
    const char        *label;    /* "auto", an algorithm name, "native" */
    int                native, is_auto;
    long               iters;
    double            *samples;  /* reps batches, seconds per call */
    double             time;     /* the median */
    unsigned long long wrong;
    redcoll_result     err;
    double             regret;   /* auto with --algo all: time over the fastest's */
    double             spread;   /* the slowest batch over the fastest */
} bench_row;

/* auto against the fastest algorithm of one (collective, size, placement),
   with --algo all. */
typedef struct bench_verdict {
    redcoll_coll coll;
    size_t       bytes;
    int          in_place;
    const char  *picked, *fastest; /* algorithm names (static strings) */
    double       auto_time, fastest_time, regret;
} bench_verdict;
#define BENCH_MAX_VERDICTS 4096
#define BENCH_MAX_SPREADS  65536

typedef struct bench {
    cli               *c;
    int                mpi, p, rank;  /* rank: this process (MPI, pshm); 0 for threads */
    int                procs;         /* a rank per process: MPI or pshm */
    redcoll_pshm      *ph;            /* pshm: this process's rank */
    const redcoll_transport *pt;      /* ... and its transport */
    bench_row         *rows;
    int                nrows;
    long              *iters;         /* p x nrows: each rank's batch sizes */
    rc_state          *rowst;         /* per row: the phase's buffers with the row's spec */
    /* threads */
    pthread_barrier_t  bar;
    double            *slot;
    pthread_mutex_t    mu;
    int                err_row;       /* the row that failed in a phase, -1: none */
    redcoll_result     err;
    redcoll_shm_config cfg;
    int                corrupt1;      /* REDCOLL_BENCH_CORRUPT + 1 */
#ifdef REDCOLL_CLI_MPI
    redcoll_mpi        m;
    MPI_Comm           comm;          /* native collectives and the bench's own sync */
#endif
    /* output */
    int                printed, nregret, worst;
    double            *spreads;       /* every timed row's spread, nspread of them */
    int                nspread;
    bench_verdict     *verdicts;      /* nregret of them, the worst at [worst] */
    int                failures;
    /* progress on stderr while one size runs long (bench_progress) */
    char               doing[64];     /* "bench: allreduce 1 GiB in place" */
} bench;

/* nccl-tests' bus bandwidth factor (nccl-tests doc/PERFORMANCE.md). */
static double bench_busbw_factor(redcoll_coll coll, int p) {
    switch (coll) {
    case REDCOLL_COLL_ALLREDUCE: return p > 1 ? 2.0 * (p - 1) / p : 0;
    case REDCOLL_COLL_BCAST: case REDCOLL_COLL_REDUCE: return 1.0;
    case REDCOLL_COLL_BARRIER: return 0;
    default: return p > 1 ? (double)(p - 1) / p : 0;
    }
}

/* ---- synchronisation between the ranks of the bench ------------------------------- */

static void bench_sync(bench *b) {
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) { MPI_Barrier(b->comm); return; }
#endif
    if (b->pt) { redcoll_barrier(b->pt, NULL); return; }
    pthread_barrier_wait(&b->bar);
}

/* pshm: every rank gets the maximum over ranks of v[0..n-1] (or the sum). */
static void bench_pshm_all(const bench *b, double *v, int n, redcoll_op op) {
    redcoll_allreduce(b->pt, REDCOLL_IN_PLACE, v, (size_t)n, REDCOLL_DOUBLE, op, NULL);
}

/* Every rank gets the maximum over ranks of v[0] and of v[1]. */
static void bench_max2(bench *b, int r, double v[2]) {
    int q;
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) { MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_MAX, b->comm); return; }
#endif
    if (b->pt) { bench_pshm_all(b, v, 2, REDCOLL_MAX); return; }
    b->slot[2 * r] = v[0];
    b->slot[2 * r + 1] = v[1];
    pthread_barrier_wait(&b->bar);
    for (q = 0; q < b->p; ++q) {
        if (b->slot[2 * q] > v[0]) v[0] = b->slot[2 * q];
        if (b->slot[2 * q + 1] > v[1]) v[1] = b->slot[2 * q + 1];
    }
    pthread_barrier_wait(&b->bar);
}

/* ---- the MPI library's own collectives ---------------------------------------------- */

#ifdef REDCOLL_CLI_MPI
static MPI_Datatype bench_mpi_dtype(redcoll_dtype d) {
    switch (d) {
    case REDCOLL_INT8: return MPI_INT8_T;
    case REDCOLL_UINT8: return MPI_UINT8_T;
    case REDCOLL_INT16: return MPI_INT16_T;
    case REDCOLL_UINT16: return MPI_UINT16_T;
    case REDCOLL_INT32: return MPI_INT32_T;
    case REDCOLL_UINT32: return MPI_UINT32_T;
    case REDCOLL_INT64: return MPI_INT64_T;
    case REDCOLL_UINT64: return MPI_UINT64_T;
    case REDCOLL_FLOAT: return MPI_FLOAT;
    case REDCOLL_DOUBLE: return MPI_DOUBLE;
    case REDCOLL_LONG_DOUBLE: return MPI_LONG_DOUBLE;
    case REDCOLL_FLOAT_INT: return MPI_FLOAT_INT;
    case REDCOLL_DOUBLE_INT: return MPI_DOUBLE_INT;
    case REDCOLL_LONG_INT: return MPI_LONG_INT;
    case REDCOLL_2INT: return MPI_2INT;
    case REDCOLL_SHORT_INT: return MPI_SHORT_INT;
    case REDCOLL_LONG_DOUBLE_INT: return MPI_LONG_DOUBLE_INT;
    default: return MPI_DATATYPE_NULL;
    }
}

static MPI_Op bench_mpi_op(redcoll_op_kind k) {
    switch (k) {
    case REDCOLL_OP_SUM: return MPI_SUM;
    case REDCOLL_OP_PROD: return MPI_PROD;
    case REDCOLL_OP_MIN: return MPI_MIN;
    case REDCOLL_OP_MAX: return MPI_MAX;
    case REDCOLL_OP_LAND: return MPI_LAND;
    case REDCOLL_OP_LOR: return MPI_LOR;
    case REDCOLL_OP_LXOR: return MPI_LXOR;
    case REDCOLL_OP_BAND: return MPI_BAND;
    case REDCOLL_OP_BOR: return MPI_BOR;
    case REDCOLL_OP_BXOR: return MPI_BXOR;
    case REDCOLL_OP_MINLOC: return MPI_MINLOC;
    case REDCOLL_OP_MAXLOC: return MPI_MAXLOC;
    default: return MPI_OP_NULL;
    }
}

/* The harness's case through MPI's collective, with the same buffers and
   the same MPI_IN_PLACE forms (counts must fit in int: bench_sizes sees to it). */
static redcoll_result bench_native(const bench *b, const rc_state *st, int r) {
    const rc_spec *s = st->spec;
    MPI_Datatype d = bench_mpi_dtype(st->dtype);
    MPI_Op op = bench_mpi_op(st->op.kind);
    MPI_Comm comm = b->comm;
    int n = (int)s->count, root = s->root, ip = s->in_place, me = r == root, e = MPI_SUCCESS;
    void *sb = st->sbuf[r], *rb = st->rbuf[r];
    int *ic = NULL, *id = NULL, q;
    if (rc_irregular(s->coll)) {
        ic = (int *)malloc(2 * (size_t)b->p * sizeof(int));
        if (!ic) return REDCOLL_ERR_OUT_OF_MEMORY;
        id = ic + b->p;
        for (q = 0; q < b->p; ++q) { ic[q] = (int)st->counts[q]; id[q] = (int)st->displs[q]; }
    }
    switch (s->coll) {
    case REDCOLL_COLL_ALLREDUCE: e = MPI_Allreduce(ip ? MPI_IN_PLACE : sb, rb, n, d, op, comm); break;
    case REDCOLL_COLL_REDUCE: e = MPI_Reduce(ip && me ? MPI_IN_PLACE : sb, rb, n, d, op, root, comm); break;
    case REDCOLL_COLL_BCAST: e = MPI_Bcast(rb, n, d, root, comm); break;
    case REDCOLL_COLL_GATHER: e = MPI_Gather(ip && me ? MPI_IN_PLACE : sb, n, d, rb, n, d, root, comm); break;
    case REDCOLL_COLL_SCATTER: e = MPI_Scatter(sb, n, d, ip && me ? MPI_IN_PLACE : rb, n, d, root, comm); break;
    case REDCOLL_COLL_ALLGATHER: e = MPI_Allgather(ip ? MPI_IN_PLACE : sb, n, d, rb, n, d, comm); break;
    case REDCOLL_COLL_ALLGATHERV: e = MPI_Allgatherv(ip ? MPI_IN_PLACE : sb, ic[r], d, rb, ic, id, d, comm); break;
    case REDCOLL_COLL_ALLTOALL: e = MPI_Alltoall(ip ? MPI_IN_PLACE : sb, n, d, rb, n, d, comm); break;
    case REDCOLL_COLL_REDUCE_SCATTER: e = MPI_Reduce_scatter(ip ? MPI_IN_PLACE : sb, rb, ic, d, op, comm); break;
    case REDCOLL_COLL_REDUCE_SCATTER_BLOCK:
        e = MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : sb, rb, n, d, op, comm);
        break;
    case REDCOLL_COLL_BARRIER: e = MPI_Barrier(comm); break;
    default: e = MPI_ERR_OTHER; break;
    }
    free(ic);
    return redcoll_mpi_result(e);
}
#endif

/* One call of a row on rank t->rank. */
static redcoll_result bench_call(const bench *b, int i, const redcoll_transport *t) {
#ifdef REDCOLL_CLI_MPI
    if (b->rows[i].native) return bench_native(b, &b->rowst[i], t->rank);
#endif
    return rc_rank(t, &b->rowst[i]);
}

/* ---- progress and memory ------------------------------------------------------------ */

/* Rank 0 says what the size running now is doing (the reporter of work.c
   prints it on stderr once the size has run --progress seconds, then every
   few seconds). */
#define bench_progress(...) \
    do { if (b->rank == 0) cli_progress_set(__VA_ARGS__); } while (0)

/* What one size needs at most (bytes: the per-rank vector of bench's size,
   the whole input of the block collectives): per rank its input and its
   output, and for the library's scratch and the check (the reference and
   its accumulator) 4 vectors more: once for a team of threads, in each
   process over MPI (p_here of them on this machine, 2 + 3 each). Measured
   peaks (allreduce, 256 MiB, threads): 6 vectors at p = 2, 10 at p = 4. */
static double bench_mem_need(double bytes, int p_here, int mpi) {
    return mpi ? (double)p_here * 5.0 * bytes : (2.0 * (double)p_here + 4.0) * bytes;
}

/* ---- the timing phase --------------------------------------------------------------- */

static void bench_note_error(bench *b, int row, redcoll_result e) {
    pthread_mutex_lock(&b->mu);
    /* the root cause, not the peers it aborted */
    if (b->err_row < 0 || (b->err == REDCOLL_ERR_ABORTED && e != REDCOLL_ERR_ABORTED)) {
        b->err_row = row;
        b->err = e;
    }
    pthread_mutex_unlock(&b->mu);
}

/* Times `n` calls of row i on this rank; every rank returns the slowest
   rank's time, and *failed whether any rank failed. */
static double bench_batch(bench *b, int i, const redcoll_transport *t, long n, int *failed) {
    double v[2], t0;
    redcoll_result e = REDCOLL_OK, x;
    long k;
    bench_sync(b);
    /* one untimed call lines the ranks up: a rank woken late from the
       barrier would otherwise charge its wake-up (a scheduling delay under
       load) to its peers' first call, a bias that grows as batches shrink */
    e = bench_call(b, i, t);
    t0 = cli_now();
    for (k = 0; k < n; ++k)
        if ((x = bench_call(b, i, t)) != REDCOLL_OK && e == REDCOLL_OK) e = x;
    v[0] = cli_now() - t0;
    v[1] = e != REDCOLL_OK;
    if (e != REDCOLL_OK) bench_note_error(b, i, e);
    bench_max2(b, t->rank, v);
    *failed = v[1] != 0;
    return v[0];
}

static redcoll_result bench_time_rank(const redcoll_transport *t, void *arg) {
    bench *b = (bench *)arg;
    const cli *c = b->c;
    long *iters = b->iters + (size_t)(b->procs ? 0 : t->rank) * (size_t)b->nrows, n;
    double rate;
    int i, k, rep, failed = 0;
    for (i = 0; i < b->nrows && !failed; ++i) {
        if (b->rows[i].err) continue;
        if (c->warmup) bench_batch(b, i, t, c->warmup - 1, &failed); /* + its line-up call */
        if (c->iters > 0) { iters[i] = c->iters; continue; }
        /* batches of 1, 2, 4, ... calls until one fills the target and three
           were timed; that last batch's call rate sizes the batch. Not the
           fastest rate seen: a batch of a few calls that ran while both
           threads had a core can be 50x faster than the machine's usual
           rate under load, and batches sized from it ran for seconds. */
        for (n = 1, k = 0, rate = 0; !failed; ++k) {
            double dt = bench_batch(b, i, t, n, &failed);
            rate = dt > 0 ? dt / (double)n : 0;
            if (t->rank == 0)
                bench_progress("%s: sizing the batches, row %d of %d (%s)", b->doing, i + 1, b->nrows, b->rows[i].label);
            if ((dt >= BENCH_BATCH_SECONDS && k >= 2) || n >= BENCH_MAX_ITERS) break;
            n *= dt < BENCH_BATCH_SECONDS / 64 ? 8 : 2;
        }
        iters[i] = rate > 0 ? (long)(BENCH_BATCH_SECONDS / rate) + 1 : n;
        if (iters[i] > BENCH_MAX_ITERS) iters[i] = BENCH_MAX_ITERS;
    }
    for (rep = 0; rep < c->reps && !failed; ++rep)
        for (k = 0; k < b->nrows && !failed; ++k) {
            double dt;
            i = (k + rep) % b->nrows; /* each round starts at another row: no row always first */
            if (b->rows[i].err) continue;
            dt = bench_batch(b, i, t, iters[i], &failed);
            if (t->rank == 0 && !failed) { b->rows[i].samples[rep] = dt / (double)iters[i]; b->rows[i].iters = iters[i]; }
            if (t->rank == 0)
                bench_progress("%s: timing, round %d of %d, row %d of %d (%s)", b->doing, rep + 1, c->reps,
                               k + 1, b->nrows, b->rows[i].label);
        }
    return failed ? REDCOLL_ERR_ABORTED : REDCOLL_OK;
}

static int bench_dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- running one (collective, size, placement) ----------------------------------------- */

/* Runs fn on every rank: a team of threads, or this process. */
static redcoll_result bench_run(bench *b, redcoll_shm_rank_fn fn, void *arg, redcoll_result *res) {
    redcoll_result r;
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) { res[b->rank] = r = fn(&b->m.t, arg); return r; }
#endif
    if (b->pt) { res[b->rank] = r = fn(b->pt, arg); return r; }
    pthread_barrier_init(&b->bar, NULL, (unsigned)b->p);
    r = redcoll_shm_run_config(&b->cfg, b->p, fn, arg, res);
    pthread_barrier_destroy(&b->bar);
    return r;
}

typedef struct bench_check { bench *b; int row; rc_state *st; } bench_check;

static redcoll_result bench_check_rank(const redcoll_transport *t, void *arg) {
    bench_check *k = (bench_check *)arg;
    rc_state s = *k->st;
    s.spec = &k->b->rows[k->row].spec;
#ifdef REDCOLL_CLI_MPI
    if (k->b->rows[k->row].native) return bench_native(k->b, &s, t->rank);
#endif
    return rc_rank(t, &s);
}

/* 1 on every rank if `ok` holds on every rank (MPI: no rank may skip a collective alone). */
static int bench_all_ok(const bench *b, int ok) {
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, b->comm);
#endif
    if (b->pt) {
        double v = ok ? 0 : 1;
        bench_pshm_all(b, &v, 1, REDCOLL_MAX);
        ok = v == 0;
    }
    return ok;
}

/* Row i once more on fresh inputs; counts the wrong elements of every rank. */
static void bench_check_row(bench *b, int i, redcoll_result *res) {
    bench_row *row = &b->rows[i];
    rc_state st;
    rc_outcome o;
    rc_expect e;
    bench_check k;
    unsigned long long wrong = 0;
    int r, have;
    redcoll_result first = REDCOLL_OK;
    have = rc_begin(&row->spec, &st, &o) == REDCOLL_OK;
    if (!bench_all_ok(b, have)) {
        if (have) rc_teardown(&st);
        row->err = REDCOLL_ERR_OUT_OF_MEMORY;
        return;
    }
    k.b = b; k.row = i; k.st = &st;
    for (r = 0; r < b->p; ++r) res[r] = REDCOLL_OK;
    bench_run(b, bench_check_rank, &k, res);
    have = rc_expect_init(&st, &e);
    for (r = 0; have && r < b->p; ++r) {
        size_t n;
        const char *got, *want;
        if (b->procs && r != b->rank) continue;
        if (res[r] != REDCOLL_OK) {
            if (first == REDCOLL_OK || first == REDCOLL_ERR_ABORTED) first = res[r];
            continue;
        }
        n = rc_expect_rank(&st, &e, r, &got, &want);
        if (r + 1 == b->corrupt1 && n) ((char *)got)[0] ^= 0x5a;
        wrong += rc_wrong_elems(&st, &e, r, NULL);
    }
    if (have) rc_expect_free(&e);
    else first = REDCOLL_ERR_OUT_OF_MEMORY;
    rc_teardown(&st);
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) {
        unsigned long long w = wrong;
        int f = -(int)first; /* errors are negative: the largest code wins */
        MPI_Allreduce(&w, &wrong, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, b->comm);
        MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_INT, MPI_MAX, b->comm);
        first = (redcoll_result)-f;
    }
#endif
    if (b->pt) { /* wrong elements summed (exact below 2^53), the largest error code */
        double v[2];
        v[0] = (double)wrong;
        bench_pshm_all(b, v, 1, REDCOLL_SUM);
        v[1] = -(double)first;
        bench_pshm_all(b, v + 1, 1, REDCOLL_MAX);
        wrong = (unsigned long long)v[0];
        first = (redcoll_result)-(int)v[1];
    }
    row->wrong = wrong;
    if (first != REDCOLL_OK) row->err = first;
}

/* ---- output ------------------------------------------------------------------------------ */

static const char *bench_transport(const bench *b) { return b->mpi ? "mpi" : b->pt ? "pshm" : "threads"; }

static void bench_print_row(bench *b, const bench_row *row, size_t bytes, const char *selected) {
    const cli *c = b->c;
    const rc_spec *s = &row->spec;
    double t = row->time, algbw = t > 0 ? (double)bytes / t / 1e9 : 0;
    double busbw = algbw * bench_busbw_factor(s->coll, b->p);
    size_t count = bytes / redcoll_dtype_size(s->dtype);
    const char *result = row->err ? redcoll_result_string(row->err) : row->wrong ? "wrong" : "ok";
    if (b->rank != 0) return;
    if (c->csv) {
        printf("%s,%s,%s,%s,%d,%zu,%zu,%s,%s,%d,", redcoll_coll_name(s->coll), row->label, selected,
               bench_transport(b), b->p, bytes, count, redcoll_dtype_name(s->dtype), s->op, s->in_place);
        if (row->err) printf(",,,");
        else printf("%.3f,%.6g,%.6g,", t * 1e6, algbw, busbw);
        printf("%llu,%ld,%s,", row->wrong, row->iters, result);
        if (row->regret > 0) printf("%.4f", row->regret);
        printf("\n");
    } else if (c->json) {
        printf("%s{\"coll\":\"%s\",\"algo\":\"%s\",\"selected\":\"%s\",\"transport\":\"%s\",\"p\":%d,"
               "\"bytes\":%zu,\"count\":%zu,\"dtype\":\"%s\",\"op\":\"%s\",\"in_place\":%s,",
               b->printed++ ? ",\n" : "", redcoll_coll_name(s->coll), row->label, selected,
               bench_transport(b), b->p, bytes, count, redcoll_dtype_name(s->dtype), s->op,
               s->in_place ? "true" : "false");
        if (row->err) printf("\"time_us\":null,\"algbw_GBps\":null,\"busbw_GBps\":null,");
        else printf("\"time_us\":%.3f,\"algbw_GBps\":%.6g,\"busbw_GBps\":%.6g,", t * 1e6, algbw, busbw);
        printf("\"wrong\":%llu,\"iters\":%ld,\"result\":\"%s\"", row->wrong, row->iters, result);
        if (row->regret > 0) printf(",\"regret\":%.4f", row->regret);
        printf("}");
    } else {
        printf("%-20s %10zu %10zu %5s %-26s", redcoll_coll_name(s->coll), bytes, count,
               s->in_place ? "in" : "out", row->label);
        if (row->err) printf(" %s", redcoll_result_string(row->err));
        else printf(" %11.2f %11.3f %11.3f %6llu %8ld", t * 1e6, algbw, busbw, row->wrong, row->iters);
        if (row->is_auto && !row->err) printf("  %s", selected);
        printf("\n");
    }
    fflush(stdout);
}

static void bench_header(bench *b) {
    const cli *c = b->c;
    if (b->rank != 0) return;
    if (c->csv) {
        printf("coll,algo,selected,transport,p,bytes,count,dtype,op,in_place,time_us,algbw_GBps,"
               "busbw_GBps,wrong,iters,result,regret\n");
    } else if (c->json) {
        printf("{\"transport\":\"%s\",\"p\":%d,\"reps\":%d,\"profile\":", bench_transport(b), b->p, c->reps);
        if (c->profile) cli_json_string(stdout, c->profile); else printf("null");
        printf(",\"rows\":[\n");
    } else {
        printf("# redcoll %s bench: %s transport, p=%d, %s %s; time per call: the median of %d\n"
               "# batches (each the slowest rank's); busbw with nccl-tests' factors; wrong: elements\n"
               "# that differ from the exact result, summed over every rank. auto rows name what\n"
               "# auto picked%s.\n",
               REDCOLL_VERSION_STRING, b->mpi ? "MPI" : b->pt ? "shared-memory (processes)"
                                                   : "shared-memory (threads)", b->p,
               redcoll_dtype_name(c->spec.dtype), c->spec.op, c->reps,
               c->algo_all ? "; each size ends with auto's time over the fastest algorithm's" : "");
        printf("# auto's cost model: ");
        cli_model_line(stdout, c);
        printf("\n#\n");
        printf("%-20s %10s %10s %5s %-26s %11s %11s %11s %6s %8s  %s\n", "# coll", "bytes", "count",
               "place", "algo", "time_us", "algbw_GBps", "busbw_GBps", "wrong", "iters", "selected");
    }
}

/* ---- the command ---------------------------------------------------------------------------- */

/* The sizes of coll: (bytes, the harness's count) pairs, deduplicated. */
static int bench_sizes(const bench *b, redcoll_coll coll, size_t esize, size_t *bytes, size_t *count, int cap) {
    const cli *c = b->c;
    size_t want = c->min_bytes, unit = esize * (rc_blocks(coll) ? (size_t)b->p : 1);
    int n = 0;
    if (coll == REDCOLL_COLL_BARRIER) { bytes[0] = count[0] = 0; return 1; }
    for (;;) {
        size_t k = want / unit ? want / unit : 1;     /* at least one element (per block) */
        if (b->mpi && k > (size_t)INT_MAX) break;      /* MPI counts are int */
        if (n == 0 || k * unit != bytes[n - 1]) {
            if (n == cap) break;
            bytes[n] = k * unit;
            count[n] = k;
            ++n;
        }
        if ((want = cli_next_size(c, want)) == 0) break;
    }
    return n;
}

/* The rows of one (collective, size, placement). */
static int bench_rows(bench *b, redcoll_coll coll, size_t count, int in_place, bench_row *rows) {
    const cli *c = b->c;
    int n = 0, a;
    int comm = c->commutative || !rc_reduces(coll);
    redcoll_algo forced = REDCOLL_ALGO_AUTO;
    const char *var;
    if (cli_env_algo(coll, comm, &forced, &var) <= 0) forced = REDCOLL_ALGO_AUTO;
    for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
        int want = c->algo_all ? a == 0 || !cli_algo_problem(coll, (redcoll_algo)a, comm)
                               : a == (int)c->spec.opts.algo;
        bench_row *row;
        if (a && !redcoll_algo_supported(coll, (redcoll_algo)a)) continue;
        if (!want) continue;
        row = &rows[n++];
        memset(row, 0, sizeof *row);
        row->spec = c->spec;
        row->spec.coll = coll;
        row->spec.count = count;
        row->spec.p = b->p;
        row->spec.in_place = in_place;
        row->spec.local_rank1 = b->procs ? b->rank + 1 : 0;
        row->spec.opts.algo = a ? (redcoll_algo)a : forced;
        row->is_auto = a == 0;
        row->label = a ? redcoll_algo_name((redcoll_algo)a) : "auto";
    }
#ifdef REDCOLL_CLI_MPI
    if (b->mpi && bench_mpi_op(c->op.kind) != MPI_OP_NULL && bench_mpi_dtype(c->spec.dtype) != MPI_DATATYPE_NULL) {
        bench_row *row = &rows[n++];
        *row = rows[0];
        row->native = 1;
        row->is_auto = 0;
        row->label = "native";
    }
#endif
    return n;
}

/* Times and checks one (collective, size, placement); returns 0, or 1 when
   the run cannot go on (MPI after an error). */
static int bench_one(bench *b, redcoll_coll coll, size_t bytes, size_t count, int in_place) {
    const cli *c = b->c;
    bench_row rows[REDCOLL_ALGO_COUNT + 1];
    redcoll_result *res = (redcoll_result *)calloc((size_t)b->p, sizeof *res);
    rc_state st;
    rc_outcome o;
    int i, n = bench_rows(b, coll, count, in_place, rows), fastest = -1, auto_row = -1;
    char selected[64];
    double *samples = (double *)calloc((size_t)(n * c->reps) + 1, sizeof(double));
    rc_spec auto_spec = rows[0].spec;
    redcoll_algo sel;
    const char *var;
    int stop = 0, have;
    b->iters = (long *)calloc((size_t)n * (size_t)b->p + 1, sizeof(long));
    if (!res || !samples || !b->iters || !n) { free(res); free(samples); free(b->iters); return 1; }
    /* what auto picks (or REDCOLL_<COLL>_ALGORITHM forces), whatever the rows run */
    if (cli_env_algo(coll, c->commutative || !rc_reduces(coll), &auto_spec.opts.algo, &var) <= 0)
        auto_spec.opts.algo = REDCOLL_ALGO_AUTO;
    if (b->pt) auto_spec.opts.transport_flags |= b->pt->flags; /* what the transport advertises */
    else if (!c->mpi) auto_spec.opts.transport_flags |= REDCOLL_TRANSPORT_PEER_REDUCE; /* as threads do */
    sel = cli_selected(c, &auto_spec);
    snprintf(selected, sizeof selected, "%s", redcoll_algo_name(sel));
    for (i = 0; i < n; ++i) rows[i].samples = samples + (size_t)i * (size_t)c->reps;
    b->rows = rows;
    b->nrows = n;
    b->rowst = (rc_state *)calloc((size_t)n, sizeof(rc_state));
    have = b->rowst && rc_begin(&rows[0].spec, &st, &o) == REDCOLL_OK;
    bench_progress("%s: buffers filled, %d rows to time", b->doing, n);
    if (!bench_all_ok(b, have)) {
        if (have) rc_teardown(&st);
        for (i = 0; i < n; ++i) rows[i].err = REDCOLL_ERR_OUT_OF_MEMORY;
    } else {
        for (i = 0; i < n; ++i) { b->rowst[i] = st; b->rowst[i].spec = &rows[i].spec; }
        for (;;) { /* a failed row drops out and the others are timed again */
            b->err_row = -1;
            b->err = REDCOLL_OK;
            bench_run(b, bench_time_rank, b, res);
#ifdef REDCOLL_CLI_MPI
            if (b->mpi) { /* agree on the failing row */
                int er = b->err_row;
                MPI_Allreduce(MPI_IN_PLACE, &er, 1, MPI_INT, MPI_MAX, b->comm);
                if (er >= 0) { rows[er].err = b->err_row == er ? b->err : REDCOLL_ERR_ABORTED; stop = 1; }
                break;
            }
#endif
            if (b->pt) { /* agree on the failing row; the transport is aborted: stop */
                double er = b->err_row;
                bench_pshm_all(b, &er, 1, REDCOLL_MAX);
                if (er >= 0) {
                    rows[(int)er].err = b->err_row == (int)er ? b->err : REDCOLL_ERR_ABORTED;
                    stop = 1;
                }
                break;
            }
            if (b->err_row < 0) break;
            rows[b->err_row].err = b->err;
        }
        rc_teardown(&st);
    }
    free(b->rowst);
    b->rowst = NULL;
    for (i = 0; i < n; ++i) {
        bench_row *row = &rows[i];
        if (row->err) continue;
        qsort(row->samples, (size_t)c->reps, sizeof(double), bench_dcmp);
        row->time = row->samples[c->reps / 2];
        row->spread = row->samples[0] > 0 ? row->samples[c->reps - 1] / row->samples[0] : 0;
        if (row->spread > 0 && b->nspread < BENCH_MAX_SPREADS) b->spreads[b->nspread++] = row->spread;
        bench_progress("%s: checking the results, row %d of %d (%s)", b->doing, i + 1, n, row->label);
        if (!stop) bench_check_row(b, i, res);
        if (row->err) continue;
        if (row->is_auto) auto_row = i;
        else if (!row->native && (fastest < 0 || row->time < rows[fastest].time)) fastest = i;
    }
    if (c->algo_all && auto_row >= 0 && fastest >= 0 && rows[fastest].time > 0) {
        bench_verdict *v = &b->verdicts[b->nregret];
        rows[auto_row].regret = rows[auto_row].time / rows[fastest].time;
        v->coll = coll;
        v->bytes = bytes;
        v->in_place = in_place;
        v->picked = redcoll_algo_name(sel);
        v->fastest = rows[fastest].label;
        v->auto_time = rows[auto_row].time;
        v->fastest_time = rows[fastest].time;
        v->regret = rows[auto_row].regret;
        if (b->nregret < BENCH_MAX_VERDICTS - 1) ++b->nregret;
        if (v->regret >= b->verdicts[b->worst].regret) b->worst = (int)(v - b->verdicts);
    }
    for (i = 0; i < n; ++i) {
        bench_print_row(b, &rows[i], bytes, selected);
        b->failures += rows[i].err != REDCOLL_OK || rows[i].wrong != 0;
    }
    if (c->algo_all && auto_row >= 0 && fastest >= 0 && b->rank == 0 && !c->csv && !c->json)
        printf("#   auto (%s) %.2f us = %.2fx the fastest, %s %.2f us\n", selected,
               rows[auto_row].time * 1e6, rows[auto_row].regret, rows[fastest].label,
               rows[fastest].time * 1e6);
    free(res);
    free(samples);
    free(b->iters);
    b->iters = NULL;
    return stop;
}

/* The median of v[0..n-1] (n >= 1), which it sorts. */
static double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_dcmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void bench_footer(bench *b) {
    const cli *c = b->c;
    double med = 0, worst = 0, noise = 0;
    FILE *f = c->csv ? stderr : stdout;
    int k;
    if (b->rank != 0) return;
    if (b->nregret) {
        double *sorted = (double *)malloc((size_t)b->nregret * sizeof(double));
        worst = b->verdicts[b->worst].regret;
        if (sorted) {
            for (k = 0; k < b->nregret; ++k) sorted[k] = b->verdicts[k].regret;
            med = bench_median(sorted, b->nregret);
            free(sorted);
        }
    }
    /* how far to trust the times: a row's slowest batch over its fastest */
    if (b->nspread && c->reps >= 3) noise = bench_median(b->spreads, b->nspread);
    if (c->json) {
        printf("\n],\"regret\":");
        if (b->nregret) printf("{\"sizes\":%d,\"median\":%.4f,\"worst\":%.4f}", b->nregret, med, worst);
        else printf("null");
        if (noise > 0) printf(",\"noise\":%.4f", noise); else printf(",\"noise\":null");
        printf(",\"failures\":%d}\n", b->failures);
        return;
    }
    if (b->nregret && !c->csv) { /* the table's verdicts again, together, for people */
        printf("#\n# auto's pick against the fastest algorithm measured, size by size:\n");
        for (k = 0; k < b->nregret; ++k) {
            const bench_verdict *v = &b->verdicts[k];
            char h[32];
            printf("#   %s %s%s: auto ran %s in %.2f us; ", redcoll_coll_name(v->coll),
                   cli_human(h, sizeof h, (double)v->bytes), v->in_place ? " in place" : "", v->picked,
                   v->auto_time * 1e6);
            if (strcmp(v->picked, v->fastest) == 0) /* the same schedule timed twice */
                printf("that is the fastest algorithm (its own row: %.2f us, %.2fx apart: noise)\n",
                       v->fastest_time * 1e6, v->regret);
            else
                printf("the fastest, %s, %.2f us (auto %.2fx)\n", v->fastest, v->fastest_time * 1e6, v->regret);
        }
    }
    if (b->nregret) {
        const bench_verdict *w = &b->verdicts[b->worst];
        fprintf(f, "# regret (auto's time over the fastest algorithm's) over %d sizes: median %.3f, "
                   "worst %.3f (%s %zu B%s)\n", b->nregret, med, worst, redcoll_coll_name(w->coll),
                w->bytes, w->in_place ? " in place" : "");
    }
    if (noise > 0)
        fprintf(f, "# noise: a row's slowest batch took %.2fx its fastest (the median over rows)%s\n", noise,
                noise > 1.5 ? "; a loaded machine: ratios within that factor may be noise" : "");
    fprintf(f, "# %d rows with an error or a wrong element%s\n", b->failures,
            b->failures ? "" : ": every result checked and right");
}

/* Whether the largest size of the run fits in memory (bench_mem_need);
   said once, by rank 0, whose answer every process takes. */
static int bench_mem_ok(bench *b, int coll0, int coll1, size_t es) {
    double need = 0, top = 0;
    int k, j, p_here = b->p, ok;
    char what[96], how[96], h[32];
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) /* the processes on this machine */
        for (j = 0, p_here = 0; j < b->p; ++j) p_here += b->m.node_ids[j] == b->m.node_ids[b->rank];
#endif
    for (k = coll0; k < coll1; ++k) {
        size_t bytes[64], count[64];
        int n = bench_sizes(b, (redcoll_coll)k, es, bytes, count, 64);
        for (j = 0; j < n; ++j)
            if (bench_mem_need((double)bytes[j], p_here, b->mpi) > need) {
                need = bench_mem_need((double)bytes[j], p_here, b->mpi);
                top = (double)bytes[j];
                snprintf(what, sizeof what, "%s of %s", redcoll_coll_name((redcoll_coll)k),
                         cli_human(h, sizeof h, top));
            }
    }
    if (b->mpi) snprintf(how, sizeof how, "%d processes here x 5 vectors of %s", p_here, cli_human(h, sizeof h, top));
    else snprintf(how, sizeof how, "%d ranks x 2 vectors of %s, and 4 more for scratch and the check", p_here,
                  cli_human(h, sizeof h, top));
    ok = b->rank != 0 || need == 0 || cli_mem_fits("bench", what, need, how);
#ifdef REDCOLL_CLI_MPI
    if (b->mpi) MPI_Bcast(&ok, 1, MPI_INT, 0, b->comm);
#endif
    return ok;
}

static int bench_go(bench *b) {
    const cli *c = b->c;
    int k, coll0 = c->coll_all ? 0 : (int)c->spec.coll, coll1 = c->coll_all ? REDCOLL_COLL_COUNT : coll0 + 1;
    int total = 0, done = 0, stop;
    double t0 = cli_now();
    size_t es = redcoll_dtype_size(c->spec.dtype);
    b->verdicts = (bench_verdict *)calloc(BENCH_MAX_VERDICTS, sizeof *b->verdicts);
    b->spreads = (double *)calloc(BENCH_MAX_SPREADS, sizeof(double));
    if (!b->verdicts || !b->spreads) { free(b->verdicts); free(b->spreads); return 1; }
    for (k = coll0; k < coll1; ++k) {
        size_t bytes[64], count[64];
        int both = c->in_place && c->out_of_place && k != REDCOLL_COLL_BCAST && k != REDCOLL_COLL_BARRIER;
        total += bench_sizes(b, (redcoll_coll)k, es, bytes, count, 64) * (both ? 2 : 1);
    }
    if (!bench_mem_ok(b, coll0, coll1, es)) { free(b->verdicts); free(b->spreads); return 2; }
    bench_header(b);
    for (k = coll0; k < coll1; ++k) {
        size_t bytes[64], count[64];
        int n = bench_sizes(b, (redcoll_coll)k, es, bytes, count, 64), j, place;
        if (c->coll_all && rc_reduces((redcoll_coll)k) && c->op.kind != REDCOLL_OP_USER &&
            !redcoll_op_valid_for(c->op.kind, c->spec.dtype))
            continue;
        for (j = 0; j < n; ++j)
            for (place = 0; place < 2; ++place) {
                double ts = cli_now();
                /* bcast and barrier have no in-place form: their rows are out of place */
                int has_in = k != REDCOLL_COLL_BCAST && k != REDCOLL_COLL_BARRIER;
                if (place == 0 && !c->out_of_place && has_in) continue;
                if (place == 1 && (!c->in_place || !has_in)) continue;
                if (b->rank == 0) {
                    char h[32];
                    snprintf(b->doing, sizeof b->doing, "bench: %s %s%s", redcoll_coll_name((redcoll_coll)k),
                             cli_human(h, sizeof h, (double)bytes[j]), place ? " in place" : "");
                    cli_progress_begin(b->doing, 0, c->progress_after);
                }
                stop = bench_one(b, (redcoll_coll)k, bytes[j], count[j], place);
                if (b->rank == 0) cli_progress_end();
                if (stop) {
                    bench_footer(b);
                    free(b->verdicts);
                    free(b->spreads);
                    return 1;
                }
                ++done;
                if (b->rank == 0) {
                    char h[32];
                    fprintf(stderr, "redcoll bench: %s %s%s done (%d of %d), %.1f s, %.0f s in all\n",
                            redcoll_coll_name((redcoll_coll)k), cli_human(h, sizeof h, (double)bytes[j]),
                            place ? " in place" : "", done, total, cli_now() - ts, cli_now() - t0);
                }
            }
    }
    bench_footer(b);
    free(b->verdicts);
    free(b->spreads);
    return b->failures ? 1 : 0;
}

/* pshm: this process becomes rank 0 of a fresh segment and forks ranks
   1..p-1 (kids[i]); each returns from here as its rank. 0 on failure. */
static int bench_pshm_start(bench *b, pid_t *kids) {
    redcoll_pshm_config pc;
    int i;
    memset(&pc, 0, sizeof pc);
    pc.timeout_seconds = b->c->timeout;
    if (redcoll_pshm_create(&pc, b->p, &b->ph) != REDCOLL_OK) {
        fprintf(stderr, "redcoll bench: %s\n", redcoll_pshm_last_error());
        return 0;
    }
    fflush(NULL);
    for (i = 1; i < b->p; ++i) {
        kids[i] = fork();
        if (kids[i] == 0) { b->rank = i; break; }
        if (kids[i] < 0) { fprintf(stderr, "redcoll bench: fork: %s\n", strerror(errno)); b->p = i; break; }
    }
    if (redcoll_pshm_attach(b->ph, b->rank) != REDCOLL_OK) {
        if (b->rank == 0) fprintf(stderr, "redcoll bench: %s\n", redcoll_pshm_last_error());
        return 0;
    }
    b->pt = redcoll_pshm_transport(b->ph);
    return 1;
}

/* pshm: the worst exit status of every rank; the forked ranks exit here. */
static int bench_pshm_end(bench *b, pid_t *kids, int r) {
    double v = r;
    int i, st;
    if (b->pt) bench_pshm_all(b, &v, 1, REDCOLL_MAX);
    redcoll_pshm_destroy(b->ph);
    if (b->rank != 0) { fflush(NULL); _exit((int)v); }
    for (i = 1; i < b->p; ++i)
        if (kids[i] > 0 && waitpid(kids[i], &st, 0) == kids[i] && (!WIFEXITED(st) || WEXITSTATUS(st)) && v == 0)
            v = 1;
    return (int)v;
}

static int cmd_bench(cli *c, int *argc, char ***argv) {
    bench b;
    const char *corrupt = getenv("REDCOLL_BENCH_CORRUPT");
    pid_t *kids = NULL;
    int r;
    memset(&b, 0, sizeof b);
    b.c = c;
    b.p = c->spec.p;
    b.mpi = c->mpi;
    b.procs = c->mpi || c->pshm;
    b.cfg.timeout_seconds = c->timeout;
    b.corrupt1 = corrupt && *corrupt ? atoi(corrupt) + 1 : 0;
    if (!c->in_place) c->out_of_place = 1;
    pthread_mutex_init(&b.mu, NULL);
    (void)argc; (void)argv;
#ifdef REDCOLL_CLI_MPI
    if (b.mpi) {
        int size, bad = 0;
        MPI_Init(argc, argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        /* what needs the job's size, said once (by rank 0) */
        if (c->given[F_P] && c->spec.p != size) bad = b.rank ? 2 : cli_bad("-p %d: the MPI job has %d processes", c->spec.p, size);
        else if (c->spec.root >= size) bad = b.rank ? 2 : cli_bad("--root %d must be below the job's %d processes", c->spec.root, size);
        else if (c->spec.opts.groups > size) bad = b.rank ? 2 : cli_bad("--groups %d must be at most the job's %d processes", c->spec.opts.groups, size);
        b.p = c->spec.p = size;
        if (bad || redcoll_mpi_init(&b.m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) {
            MPI_Finalize();
            return bad ? bad : 1;
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &b.comm);
        MPI_Comm_set_errhandler(b.comm, MPI_ERRORS_RETURN);
    }
#endif
    if (c->pshm) {
        kids = (pid_t *)calloc((size_t)b.p, sizeof *kids);
        if (!kids || !bench_pshm_start(&b, kids)) r = 1;
    }
    b.slot = (double *)calloc(2 * (size_t)b.p, sizeof(double));
    r = b.slot && (!c->pshm || b.pt) ? bench_go(&b) : 1;
    free(b.slot);
    pthread_mutex_destroy(&b.mu);
    if (c->pshm) r = bench_pshm_end(&b, kids, r);
    free(kids);
#ifdef REDCOLL_CLI_MPI
    if (b.mpi) {
        MPI_Comm_free(&b.comm);
        redcoll_mpi_finalize(&b.m);
        MPI_Allreduce(MPI_IN_PLACE, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Finalize();
    }
#endif
    return r;
}
