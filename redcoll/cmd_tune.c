/* cmd_tune.c - `redcoll tune`: measure a transport's cost model into a
   profile. Included by main.c.

   Between ranks 0 and 1 of the transport (threads or MPI), for message sizes
   8 B .. 4 MiB:
     ping-pong  rank 0 sends n bytes, rank 1 sends them back: half a round
                trip is one one-way message, f_alpha alpha + n f_beta beta;
     exchange   both send n bytes to each other at once (sendrecv): one
                bi-directional message, alpha + n beta;
   and on rank 0 alone, reduction-kernel runs of the chosen dtype and op
   (redcoll_reduce_local) over 4 KiB .. 16 MiB: n gamma per byte. Each is
   the fastest of --reps batches (on a shared machine the least disturbed),
   fitted to a + n b by least squares on the relative error (every size weighs
   alike, so the small sizes decide a, the large ones b). f_alpha and f_beta
   are the one-way fit over the exchange fit, kept within [0.5, 1]: a one-way
   message costs at most an exchange (full duplex) and at least half of one
   (half duplex); outside that range the fit saw noise or cache effects, and
   the profile says so. The rest of the ranks wait. */

#define TUNE_SIZES 11     /* 8 B, 32 B, ..., 8 MiB (x4) */
#define TUNE_RED_SIZES 7  /* 4 KiB .. 16 MiB (x4) */
#define TUNE_BATCH_SECONDS 0.004 /* a timed batch lasts about this long */

typedef struct tune {
    const cli *c;
    size_t     size[TUNE_SIZES];
    double     oneway[TUNE_SIZES], exchange[TUNE_SIZES]; /* seconds, rank 0 */
    redcoll_result err;
} tune;

/* Calls per batch when one takes `per` seconds: about TUNE_BATCH_SECONDS, 4 .. 4000. */
static long tune_iters(double per) {
    double k = per > 0 ? TUNE_BATCH_SECONDS / per : 4000;
    return k < 4 ? 4 : k > 4000 ? 4000 : (long)k;
}

static int tune_dcmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double tune_fastest(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, tune_dcmp);
    return v[0];
}

static double tune_clamp(double f) { return f < 0.5 ? 0.5 : f > 1.0 ? 1.0 : f; }

/* Least squares of t = a + n b weighted by 1/t^2; a and b > 0 (a measured
   floor replaces a non-positive fit). */
static void tune_fit(const size_t *n, const double *t, int m, double *a, double *b) {
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, det;
    int i;
    for (i = 0; i < m; ++i) {
        double w = t[i] > 0 ? 1.0 / (t[i] * t[i]) : 0, x = (double)n[i];
        sw += w; sx += w * x; sy += w * t[i]; sxx += w * x * x; sxy += w * x * t[i];
    }
    det = sw * sxx - sx * sx;
    *a = det != 0 ? (sy * sxx - sx * sxy) / det : 0;
    *b = det != 0 ? (sw * sxy - sx * sy) / det : 0;
    if (*b <= 0) *b = t[m - 1] / (double)n[m - 1];
    if (*a <= 0) *a = t[0] > (double)n[0] * *b ? t[0] - (double)n[0] * *b : t[0] / 2;
}

static redcoll_result tune_rank(const redcoll_transport *t, void *arg) {
    tune *tn = (tune *)arg;
    const cli *c = tn->c;
    int me = t->rank, peer = 1 - me, s, rep;
    char *sb, *rb;
    redcoll_result e = REDCOLL_OK;
    double *sample;
    if (me > 1) return REDCOLL_OK;
    sb = (char *)calloc(tn->size[TUNE_SIZES - 1], 1);
    rb = (char *)calloc(tn->size[TUNE_SIZES - 1], 1);
    sample = (double *)calloc((size_t)c->reps, sizeof(double));
    if (!sb || !rb || !sample) { free(sb); free(rb); free(sample); return REDCOLL_ERR_OUT_OF_MEMORY; }
    for (s = 0; s < TUNE_SIZES && e == REDCOLL_OK; ++s) {
        size_t n = tn->size[s];
        long k, iters = 4;
        int kind;
        char h[32];
        for (kind = 0; kind < 2; ++kind) {
            if (me == 0)
                cli_progress_set("tune: %s of %s (size %d of %d)", kind ? "exchanges" : "ping-pongs",
                                 cli_human(h, sizeof h, (double)n), s + 1, TUNE_SIZES);
            /* rep -2: 4 calls that size the batch (rank 0 tells rank 1); rep -1: warm-up */
            for (rep = -2; rep < c->reps && e == REDCOLL_OK; ++rep) {
                double t0;
                /* a round trip lines both ranks up */
                if (me == 0) { e = t->send(t->user, peer, sb, 1, 1); if (!e) e = t->recv(t->user, peer, rb, 1, 1); }
                else { e = t->recv(t->user, peer, rb, 1, 1); if (!e) e = t->send(t->user, peer, sb, 1, 1); }
                t0 = cli_now();
                for (k = 0; k < iters && e == REDCOLL_OK; ++k) {
                    if (kind == 1) e = t->sendrecv(t->user, peer, sb, n, peer, rb, n, 2);
                    else if (me == 0) { e = t->send(t->user, peer, sb, n, 3); if (!e) e = t->recv(t->user, peer, rb, n, 3); }
                    else { e = t->recv(t->user, peer, rb, n, 3); if (!e) e = t->send(t->user, peer, sb, n, 3); }
                }
                if (rep >= 0) sample[rep] = (cli_now() - t0) / (double)iters / (kind ? 1.0 : 2.0);
                if (rep == -2 && e == REDCOLL_OK) {
                    long want = tune_iters((cli_now() - t0) / (double)iters);
                    if (me == 0) e = t->send(t->user, peer, &want, sizeof want, 4);
                    else e = t->recv(t->user, peer, &want, sizeof want, 4);
                    iters = want;
                }
            }
            if (me == 0 && e == REDCOLL_OK) {
                double m = tune_fastest(sample, c->reps);
                if (kind) tn->exchange[s] = m; else tn->oneway[s] = m;
            }
        }
    }
    free(sb);
    free(rb);
    free(sample);
    if (e != REDCOLL_OK && t->abort) t->abort(t->user, e);
    return e;
}

/* Seconds per byte reduced: reduction-kernel runs on this thread. */
static double tune_gamma(const cli *c) {
    size_t es = redcoll_dtype_size(c->spec.dtype), sizes[TUNE_RED_SIZES], top = (size_t)16 << 20;
    volatile char sink;
    double t[TUNE_RED_SIZES], a, b, *sample = (double *)calloc((size_t)c->reps, sizeof(double));
    char *in = (char *)calloc(top + es, 1), *io = (char *)calloc(top + es, 1);
    int s, rep;
    if (!in || !io || !sample) { free(in); free(io); free(sample); return 0; }
    rc_fill(c->spec.dtype, c->op.kind, 0, 0, in, top / es);
    rc_fill(c->spec.dtype, c->op.kind, 0, 1, io, top / es);
    for (s = 0; s < TUNE_RED_SIZES; ++s) {
        size_t n = ((size_t)4096 << (2 * s)) / es;
        long k, iters = 4;
        char h[32];
        sizes[s] = n * es;
        cli_progress_set("tune: reductions of %s (size %d of %d)", cli_human(h, sizeof h, (double)sizes[s]),
                         s + 1, TUNE_RED_SIZES);
        for (rep = -2; rep < c->reps; ++rep) { /* -2: sizing, -1: warm-up */
            double t0 = cli_now();
            for (k = 0; k < iters; ++k) redcoll_reduce_local(in, io, n, c->spec.dtype, c->op);
            if (rep >= 0) sample[rep] = (cli_now() - t0) / (double)iters;
            if (rep == -2) iters = tune_iters((cli_now() - t0) / (double)iters);
        }
        t[s] = tune_fastest(sample, c->reps);
    }
    sink = io[top / 2]; /* the runs' results are used */
    (void)sink;
    tune_fit(sizes, t, TUNE_RED_SIZES, &a, &b);
    free(in);
    free(io);
    free(sample);
    return b;
}

static int cmd_tune(cli *c, int *argc, char ***argv) {
    tune tn;
    redcoll_cost_model m;
    redcoll_result r = REDCOLL_ERR_UNSUPPORTED;
    double a1, b1, a2, b2;
    int s, rank = 0, p = c->spec.p, n;
    char *text;
    FILE *f;
    memset(&tn, 0, sizeof tn);
    tn.c = c;
    for (s = 0; s < TUNE_SIZES; ++s) tn.size[s] = (size_t)8 << (2 * s);
    (void)argc; (void)argv; (void)rank;
    /* two buffers of the largest message on each of ranks 0 and 1, two of
       the largest reduction on rank 0 (a few tens of MiB, fixed) */
    if (!cli_mem_fits("tune", "measuring", 4.0 * (double)tn.size[TUNE_SIZES - 1] + 2.0 * (double)(16 << 20),
                      "2 buffers of the largest message on each of 2 ranks, 2 for the reductions"))
        return 2;
    if (c->mpi) {
#ifdef REDCOLL_CLI_MPI
        redcoll_mpi mt;
        MPI_Init(argc, argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &p);
        if (p < 2 || (c->given[F_P] && c->spec.p != p)) {
            if (rank == 0) cli_bad("tune wants a job of 2 or more processes%s", c->given[F_P] ? " (and -p its size)" : "");
            MPI_Finalize();
            return 2;
        }
        r = redcoll_mpi_init(&mt, MPI_COMM_WORLD, NULL);
        if (r == REDCOLL_OK) {
            if (rank == 0) cli_progress_begin("tune", 0, c->progress_after);
            r = tune_rank(&mt.t, &tn);
            MPI_Barrier(MPI_COMM_WORLD);
            redcoll_mpi_finalize(&mt);
        }
        MPI_Finalize();
        if (rank != 0) return r == REDCOLL_OK ? 0 : 1;
#endif
    } else {
        redcoll_shm_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.timeout_seconds = c->timeout;
        cli_progress_begin("tune", 0, c->progress_after);
        r = redcoll_shm_run_config(&cfg, p, tune_rank, &tn, NULL);
    }
    if (r != REDCOLL_OK) {
        cli_progress_end();
        fprintf(stderr, "redcoll: tune: the transport failed: %s\n", redcoll_result_string(r));
        return 1;
    }
    tune_fit(tn.size, tn.exchange, TUNE_SIZES, &a2, &b2);
    tune_fit(tn.size, tn.oneway, TUNE_SIZES, &a1, &b1);
    m.alpha = a2;
    m.beta = b2;
    m.gamma = tune_gamma(c);
    cli_progress_end();
    m.f_alpha = tune_clamp(a1 / a2);
    m.f_beta = tune_clamp(b1 / b2);
    if (!(m.gamma > 0)) { fprintf(stderr, "redcoll: tune: no memory for the reduction runs\n"); return 1; }
    n = redcoll_cost_model_format(&m, NULL, 0);
    text = (char *)malloc((size_t)n + 1);
    if (!text) return 1;
    redcoll_cost_model_format(&m, text, (size_t)n + 1);
    f = c->out ? fopen(c->out, "w") : stdout;
    if (!f) { free(text); return cli_bad("--out %s: %s", c->out, strerror(errno)); }
    fputs(text, f);
    fprintf(f, "# measured by redcoll %s tune between ranks 0 and 1 of %d, fastest of %d batches;\n"
               "# fits: one-way %.4g + n %.4g, exchange %.4g + n %.4g (f_alpha %.3g, f_beta %.3g%s)\n",
            REDCOLL_VERSION_STRING, p, c->reps, a1, b1, a2, b2, a1 / a2, b1 / b2,
            a1 / a2 != m.f_alpha || b1 / b2 != m.f_beta ? ", kept within [0.5, 1]" : "");
    fprintf(f, "transport %s\np %d\ndtype %s\nop %s\n", c->mpi ? "mpi" : "threads", p,
            redcoll_dtype_name(c->spec.dtype), c->spec.op);
    fprintf(f, "# %10s %14s %14s\n", "bytes", "one-way (s)", "exchange (s)");
    for (s = 0; s < TUNE_SIZES; ++s)
        fprintf(f, "# %10zu %14.4g %14.4g\n", tn.size[s], tn.oneway[s], tn.exchange[s]);
    free(text);
    if (c->out) {
        if (fclose(f) != 0) return cli_bad("--out %s: %s", c->out, strerror(errno));
        fprintf(stderr, "redcoll: tune: wrote %s: alpha %.3g s, beta %.3g s/B (%.3g GB/s), gamma %.3g s/B "
                "(%.3g GB/s), f_alpha %.3g, f_beta %.3g\n", c->out, m.alpha, m.beta, 1e-9 / m.beta,
                m.gamma, 1e-9 / m.gamma, m.f_alpha, m.f_beta);
    }
    return 0;
}
