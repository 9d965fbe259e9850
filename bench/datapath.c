/* datapath.c - the data-path benchmark: allreduce of doubles (sum)
   on the threads transport (transports/redcoll_shm.h) next to what the
   machine can do, all measured in the same run, as medians of interleaved
   batches (every method runs one batch in turn, B times over):

     lib:auto, lib:ALGO  redcoll_allreduce through the library: AUTO and every
                         allreduce algorithm
     direct              the shared-memory reduction an OpenMP programmer
                         writes: each thread sums its slice of all p inputs
                         (rank order) and stores it into all p outputs, then
                         a barrier
     kernel              the kernel limit: one thread computes c = a + b over
                         the vector (the other threads wait)
     plan:auto           the same as a persistent plan (redcoll_allreduce_init
                         once per size, redcoll_plan_run per call)
     lib:overhead        redcoll_allreduce (auto) on rank 0 alone over a null
                         transport of size p whose sendrecv copies its own
                         send buffer (send/recv do nothing) and which keeps a
                         scratch block as the threads transport does: the
                         library's own cost per call (checks, the measuring
                         pass, the schedule), without any partner or waiting
     plan:overhead       the same through a plan (redcoll_plan_run)
     t:...               the transport alone, through the vtable, ranks in
                         pairs (r, r ^ 1; even p only):
       t:pingpong        one way of a send/recv round trip
       t:exchange        sendrecv of the vector, no reduction
       t:exch+reduce     sendrecv into a buffer, then a reduction pass
       t:exch_reduce     sendrecv_reduce: the reduction reads the partner's
                         buffer directly (one pass; needs the entry)
       t:hd              p = 2 halving-doubling by hand: sendrecv of halves
                         into a buffer + reduction, then sendrecv of halves
       t:hd_fused        the same with sendrecv_reduce for the first step

   Columns: time per call (median; and the fastest batch), algbw = bytes / time, busbw = algbw *
   2(n-1)/n (nccl-tests), minor page faults per call (getrusage, the whole
   process), time / direct, time / kernel, and wrong elements in the last
   result. A summary table in Markdown follows, with MPICH's native
   MPI_Allreduce when --mpi gives the command that runs bench/datapath_mpi.c
   (it runs right after the threads, in the same run).

   Usage: datapath [-p N]... [--sizes 8,1K,1M,8M,64M] [--batches 7]
                   [--seconds 0.02] [--methods LIST] [--mpi "CMD"]
     -p N         team size (repeatable); default 2 and the online CPUs
     --sizes      vector sizes in bytes (K, M, G suffixes)
     --batches    batches per method (the median is reported)
     --seconds    target length of one batch (calls per batch are sized once)
     --methods    comma-separated names or prefixes (lib, t:, direct, ...)
     --mpi CMD    e.g. "mpiexec.mpich -n 2 build/datapath_mpi"
   `make bench-datapath` builds both programs and runs them. */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_shm.h"

#include "bench/bench.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 16
#define MAX_METHODS 40
#define TAG 77

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- a barrier as an OpenMP runtime has one: spin, then yield ------------- */

typedef struct bar { int count, gen, p; } bar;

static void bar_wait(bar *b) {
    int g = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE), k;
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->p) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->gen, g + 1, __ATOMIC_RELEASE);
        return;
    }
    for (k = 0; __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == g; ++k) {
#if defined(__x86_64__) || defined(__i386__)
        if (k < 64) { __builtin_ia32_pause(); continue; } /* as the transport polls */
#endif
        sched_yield();
    }
}

/* ---- methods ------------------------------------------------------------ */

enum { M_LIB, M_PLAN, M_LIB_NULL, M_PLAN_NULL, M_DIRECT, M_KERNEL, M_PINGPONG, M_EXCHANGE, M_EXCH_PLUS, M_EXCH_FUSED, M_HD,
       M_HD_FUSED };

typedef struct method { char name[40]; int kind; redcoll_algo algo; } method;

typedef struct bench {
    int          p;
    size_t       sizes[MAX_SIZES];
    int          nsizes, batches;
    double       target;
    method       m[MAX_METHODS];
    int          nm;
    size_t       maxn;                  /* doubles */
    double     **in, **out, **tmp;      /* per rank */
    bar          b;
    long         iters;                 /* calls per batch, set by rank 0 */
    double       t0;
    long         f0;
    double      *sample;                /* [size][method][batch] seconds per call */
    double      *faults;                /* [size][method] per call */
    long        *wrong;                 /* [size][method] */
    redcoll_result *err;                /* [size][method] */
    redcoll_transport null_t;           /* lib:overhead's, rank 0's */
    redcoll_plan *null_plan;            /* plan:overhead's (rank 0), for null_plan_n doubles */
    size_t       null_plan_n;
    redcoll_plan **plan;                /* plan:auto's, per rank, for plan_n[r] doubles */
    size_t      *plan_n;
} bench;

static double input(int r, size_t i) { return (double)(r + 1) * (double)(i % 64 + 1); }

/* c = a + b: the kernel limit's loop (a holds the lower ranks' operand). */
static void add3(const double *restrict a, const double *restrict b, double *restrict c, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

/* Consumer of sendrecv_reduce: out[piece] = lower + higher, from this rank's
   input and the partner's piece. */
typedef struct sum_into { const double *mine; double *out; int mine_lower; } sum_into;

static void sum_piece(void *arg, const void *piece, size_t off, size_t bytes) {
    sum_into *s = (sum_into *)arg;
    size_t o = off / sizeof(double), n = bytes / sizeof(double);
    if (s->mine_lower) add3(s->mine + o, (const double *)piece, s->out + o, n);
    else add3((const double *)piece, s->mine + o, s->out + o, n);
}

/* The receive-and-reduce step of a pair: out[lo..lo+n) = x_lower + x_higher
   from in (mine) and the partner's [lo..lo+n), sending in[slo..slo+sn). */
static redcoll_result pair_reduce(const redcoll_transport *t, bench *B, int fused, int peer,
                                  size_t slo, size_t sn, size_t lo, size_t n) {
    int r = t->rank;
    const double *mine = B->in[r];
    if (fused) {
        sum_into s;
        redcoll_consumer c;
        s.mine = mine + lo; s.out = B->out[r] + lo; s.mine_lower = r < peer;
        c.fn = sum_piece; c.arg = &s; c.unit = sizeof(double);
        return t->sendrecv_reduce(t->user, peer, mine + slo, sn * 8, peer, n * 8, TAG, &c);
    } else {
        redcoll_result res = t->sendrecv(t->user, peer, mine + slo, sn * 8, peer, B->tmp[r], n * 8, TAG);
        if (res) return res;
        if (r < peer) add3(mine + lo, B->tmp[r], B->out[r] + lo, n);
        else add3(B->tmp[r], mine + lo, B->out[r] + lo, n);
        return REDCOLL_OK;
    }
}

/* The null transport of lib:overhead. */
static redcoll_result null_send(void *u, int dst, const void *b, size_t n, int tag) {
    (void)u; (void)dst; (void)b; (void)n; (void)tag;
    return REDCOLL_OK;
}
static redcoll_result null_recv(void *u, int src, void *b, size_t n, int tag) {
    (void)u; (void)src; (void)b; (void)n; (void)tag;
    return REDCOLL_OK;
}
static redcoll_result null_sendrecv(void *u, int dst, const void *sb, size_t sn, int src, void *rb,
                                    size_t rn, int tag) {
    (void)u; (void)dst; (void)src; (void)tag;
    memcpy(rb, sb, sn < rn ? sn : rn);
    return REDCOLL_OK;
}

/* The null transport's scratch entry: a block kept as the threads transport keeps one. */
static void *null_scratch(void *u, size_t bytes) {
    static void *block;
    static size_t have;
    (void)u;
    if (bytes > have) { free(block); block = malloc(bytes); have = block ? bytes : 0; }
    return block;
}

/* One call of method m on rank t->rank with n doubles. */
static redcoll_result run_once(const redcoll_transport *t, bench *B, const method *m, size_t n) {
    int r = t->rank, p = t->size, peer = r ^ 1;
    size_t i, bytes = n * sizeof(double);
    switch (m->kind) {
    case M_LIB: {
        redcoll_options o;
        memset(&o, 0, sizeof o);
        o.algo = m->algo;
        return redcoll_allreduce(t, B->in[r], B->out[r], n, REDCOLL_DOUBLE, REDCOLL_SUM, &o);
    }
    case M_PLAN:
        if (!B->plan[r] || B->plan_n[r] != n) { /* made in the warm-up call of each size */
            redcoll_result e;
            redcoll_plan_free(B->plan[r]);
            B->plan[r] = NULL;
            e = redcoll_allreduce_init(t, B->in[r], B->out[r], n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL,
                                       &B->plan[r]);
            if (e) return e;
            B->plan_n[r] = n;
        }
        return redcoll_plan_run(B->plan[r]);
    case M_LIB_NULL: case M_PLAN_NULL:
        if (r) return REDCOLL_OK;
        if (B->null_t.size != p) { /* made once: its cost is not the library's */
            memset(&B->null_t, 0, sizeof B->null_t);
            B->null_t.size = p; B->null_t.send = null_send; B->null_t.recv = null_recv;
            B->null_t.sendrecv = null_sendrecv; B->null_t.scratch = null_scratch;
        }
        if (m->kind == M_PLAN_NULL) {
            if (!B->null_plan || B->null_plan_n != n) {
                redcoll_result e;
                redcoll_plan_free(B->null_plan);
                B->null_plan = NULL;
                e = redcoll_allreduce_init(&B->null_t, B->in[r], B->out[r], n, REDCOLL_DOUBLE,
                                           REDCOLL_SUM, NULL, &B->null_plan);
                if (e) return e;
                B->null_plan_n = n;
            }
            return redcoll_plan_run(B->null_plan);
        }
        return redcoll_allreduce(&B->null_t, B->in[r], B->out[r], n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    case M_DIRECT: {
        size_t q = n / (size_t)p, rem = n % (size_t)p;
        size_t lo = (size_t)r * q + ((size_t)r < rem ? (size_t)r : rem), hi = lo + q + ((size_t)r < rem);
        int k;
        for (i = lo; i < hi; ++i) {
            double s = B->in[0][i];
            for (k = 1; k < p; ++k) s += B->in[k][i];
            for (k = 0; k < p; ++k) B->out[k][i] = s;
        }
        bar_wait(&B->b);
        return REDCOLL_OK;
    }
    case M_KERNEL:
        if (r == 0) add3(B->in[0], B->in[p > 1 ? 1 : 0], B->out[0], n);
        return REDCOLL_OK;
    default: break;
    }
    if (peer >= p) return REDCOLL_OK; /* the odd rank out idles */
    switch (m->kind) {
    case M_PINGPONG: {
        redcoll_result res;
        if (r < peer) {
            if ((res = t->send(t->user, peer, B->in[r], bytes, TAG))) return res;
            return t->recv(t->user, peer, B->out[r], bytes, TAG);
        }
        if ((res = t->recv(t->user, peer, B->out[r], bytes, TAG))) return res;
        return t->send(t->user, peer, B->in[r], bytes, TAG);
    }
    case M_EXCHANGE:
        return t->sendrecv(t->user, peer, B->in[r], bytes, peer, B->out[r], bytes, TAG);
    case M_EXCH_PLUS: case M_EXCH_FUSED:
        return pair_reduce(t, B, m->kind == M_EXCH_FUSED, peer, 0, n, 0, n);
    case M_HD: case M_HD_FUSED: {
        /* the lower rank keeps the first half */
        size_t h = n / 2, mlo = r < peer ? 0 : h, mn = r < peer ? h : n - h;
        size_t olo = r < peer ? h : 0, on = n - mn;
        redcoll_result res = pair_reduce(t, B, m->kind == M_HD_FUSED, peer, olo, on, mlo, mn);
        if (res) return res;
        return t->sendrecv(t->user, peer, B->out[r] + mlo, mn * 8, peer, B->out[r] + olo, on * 8, TAG);
    }
    }
    return REDCOLL_ERR_INVALID_ARG;
}

/* Wrong elements in this rank's output after method m. */
static long check(const redcoll_transport *t, bench *B, const method *m, size_t n) {
    int r = t->rank, p = t->size, peer = r ^ 1, k;
    double scale = 0;
    long wrong = 0;
    size_t i;
    if (m->kind == M_LIB_NULL || m->kind == M_PLAN_NULL) return 0;
    if (m->kind == M_KERNEL) { if (r) return 0; scale = p > 1 ? 3 : 2; }
    else if (m->kind == M_LIB || m->kind == M_PLAN || m->kind == M_DIRECT) for (k = 0; k < p; ++k) scale += k + 1;
    else if (peer >= p) return 0;
    else if (m->kind == M_EXCHANGE || m->kind == M_PINGPONG) scale = peer + 1;
    else scale = r + peer + 2;
    for (i = 0; i < n; ++i) wrong += B->out[r][i] != scale * (double)(i % 64 + 1);
    return wrong;
}

/* Times `iters` calls between barriers; rank 0 records. */
static redcoll_result timed(const redcoll_transport *t, bench *B, const method *m, size_t n,
                            long iters, double *sec, long *faults) {
    redcoll_result res = REDCOLL_OK;
    long k;
    bar_wait(&B->b);
    if (t->rank == 0) { B->f0 = bench_minor_faults(); B->t0 = now(); }
    for (k = 0; k < iters && res == REDCOLL_OK; ++k) res = run_once(t, B, m, n);
    bar_wait(&B->b);
    if (t->rank == 0) {
        *sec = (now() - B->t0) / (double)iters;
        *faults = bench_minor_faults() - B->f0;
    }
    return res;
}

/* The first error of a (size, method), from any rank. */
static void note_err(bench *B, size_t at, redcoll_result e) {
    redcoll_result none = REDCOLL_OK;
    if (e) __atomic_compare_exchange_n(&B->err[at], &none, e, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static redcoll_result bench_rank(const redcoll_transport *t, void *arg) {
    bench *B = (bench *)arg;
    int r = t->rank, si, mi, bi;
    size_t i, nn = B->maxn ? B->maxn : 1;
    B->in[r] = (double *)malloc(nn * sizeof(double));
    B->out[r] = (double *)malloc(nn * sizeof(double));
    B->tmp[r] = (double *)malloc(nn * sizeof(double));
    if (!B->in[r] || !B->out[r] || !B->tmp[r]) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (i = 0; i < nn; ++i) { B->in[r][i] = input(r, i); B->out[r][i] = 0; B->tmp[r][i] = 0; }
    bar_wait(&B->b); /* direct and kernel read the peers' buffers */
    for (si = 0; si < B->nsizes; ++si) {
        size_t n = B->sizes[si] / sizeof(double);
        long *iters = (long *)calloc((size_t)B->nm, sizeof(long));
        if (!iters) exit(1);
        for (mi = 0; mi < B->nm; ++mi) { /* warm up, then size the batches */
            double sec;
            long f;
            size_t at = (size_t)si * (size_t)B->nm + (size_t)mi;
            redcoll_result e = run_once(t, B, &B->m[mi], n);
            if (!e) e = timed(t, B, &B->m[mi], n, 1, &sec, &f);
            note_err(B, at, e);
            if (r == 0) {
                double want = B->target / (sec > 1e-9 ? sec : 1e-9);
                B->iters = want < 1 ? 1 : want > 1e6 ? 1000000L : (long)want;
            }
            bar_wait(&B->b);
            iters[mi] = B->iters;
            bar_wait(&B->b);
        }
        for (bi = 0; bi < B->batches; ++bi) {
            for (mi = 0; mi < B->nm; ++mi) {
                size_t at = (size_t)si * (size_t)B->nm + (size_t)mi;
                double sec = 0;
                long f = 0;
                redcoll_result res = timed(t, B, &B->m[mi], n, iters[mi], &sec, &f);
                note_err(B, at, res);
                if (r == 0) {
                    B->sample[at * (size_t)B->batches + (size_t)bi] = sec;
                    B->faults[at] += (double)f / (double)iters[mi] / B->batches;
                }
                if (bi == B->batches - 1) {
                    long w = check(t, B, &B->m[mi], n);
                    if (w) __atomic_add_fetch(&B->wrong[at], w, __ATOMIC_RELAXED);
                }
            }
        }
        free(iters);
    }
    bar_wait(&B->b); /* nobody frees what a peer may still read */
    redcoll_plan_free(B->plan[r]);
    if (r == 0) redcoll_plan_free(B->null_plan);
    free(B->in[r]); free(B->out[r]); free(B->tmp[r]);
    return REDCOLL_OK;
}

/* ---- reporting ------------------------------------------------------------ */

static const char *fmt_time(double s, char *buf) {
    if (s < 1e-3) sprintf(buf, "%8.3f us", s * 1e6);
    else if (s < 1) sprintf(buf, "%8.3f ms", s * 1e3);
    else sprintf(buf, "%8.3f s ", s);
    return buf;
}

static const char *fmt_size(size_t b, char *buf) {
    if (b >= (1u << 20) && b % (1u << 20) == 0) sprintf(buf, "%zu MB", b >> 20);
    else if (b >= 1024 && b % 1024 == 0) sprintf(buf, "%zu KB", b >> 10);
    else sprintf(buf, "%zu B", b);
    return buf;
}

/* MPICH's numbers from the --mpi command: lines "R <name> <p> <bytes> <seconds> <faults>". */
typedef struct mpirow { char name[32]; int p; size_t bytes; double sec, faults; } mpirow;

static int run_mpi(const char *cmd, mpirow *rows, int max) {
    char line[512];
    int n = 0;
    FILE *f;
    fflush(stdout);
    f = popen(cmd, "r");
    if (!f) { printf("# --mpi: could not run %s\n", cmd); return 0; }
    while (fgets(line, sizeof line, f)) {
        mpirow m;
        if (line[0] == 'R' && sscanf(line, "R %31s %d %zu %lf %lf", m.name, &m.p, &m.bytes, &m.sec, &m.faults) == 5) {
            if (n < max) rows[n++] = m;
        } else {
            fputs(line, stdout);
        }
    }
    if (pclose(f) != 0) printf("# --mpi: %s failed\n", cmd);
    return n;
}

static const mpirow *mpi_find(const mpirow *rows, int n, const char *name, int p, size_t bytes) {
    int i;
    for (i = 0; i < n; ++i)
        if (rows[i].p == p && rows[i].bytes == bytes && strcmp(rows[i].name, name) == 0) return &rows[i];
    return NULL;
}

static int find_method(const bench *B, const char *name) {
    int i;
    for (i = 0; i < B->nm; ++i) if (strcmp(B->m[i].name, name) == 0) return i;
    return -1;
}

static void report(bench *B, const mpirow *mpi, int nmpi) {
    int si, mi, id = find_method(B, "direct"), ik = find_method(B, "kernel");
    int ia = find_method(B, "lib:auto");
    char tb[32], sb[32], bb[32];
    double *med = (double *)calloc((size_t)(B->nsizes * B->nm), sizeof(double));
    double *best = (double *)calloc((size_t)(B->nsizes * B->nm), sizeof(double));
    if (!med || !best) { free(med); free(best); return; }
    for (si = 0; si < B->nsizes; ++si)
        for (mi = 0; mi < B->nm; ++mi) {
            size_t at = (size_t)si * (size_t)B->nm + (size_t)mi;
            med[at] = bench_median(B->sample + at * (size_t)B->batches, B->batches);
            best[at] = B->sample[at * (size_t)B->batches]; /* sorted by bench_median() */
        }
    printf("\n# allreduce of doubles (sum), p = %d threads, %ld online CPUs; medians of %d interleaved batches\n",
           B->p, sysconf(_SC_NPROCESSORS_ONLN), B->batches);
    printf("#     size  method                       time   best batch  algbw GB/s  busbw GB/s  faults/call   x direct  x kernel  wrong\n");
    for (si = 0; si < B->nsizes; ++si) {
        double dir = id >= 0 ? med[(size_t)si * (size_t)B->nm + (size_t)id] : 0;
        double ker = ik >= 0 ? med[(size_t)si * (size_t)B->nm + (size_t)ik] : 0;
        for (mi = 0; mi < B->nm; ++mi) {
            size_t at = (size_t)si * (size_t)B->nm + (size_t)mi;
            double s = med[at], bw = (double)B->sizes[si] / s / 1e9;
            if (B->err[at]) {
                printf("%10s  %-24s  %s\n", fmt_size(B->sizes[si], sb), B->m[mi].name,
                       redcoll_result_string(B->err[at]));
                continue;
            }
            printf("%10s  %-24s %s %s  %10.3f  %10.3f  %11.1f  %9.2f %9.2f  %5ld\n",
                   fmt_size(B->sizes[si], sb), B->m[mi].name, fmt_time(s, tb), fmt_time(best[at], bb), bw,
                   bw * 2.0 * (B->p - 1) / B->p, B->faults[at], dir > 0 ? s / dir : 0,
                   ker > 0 ? s / ker : 0, B->wrong[at]);
        }
    }
    if (ia < 0) { free(med); free(best); return; }
    printf("\n| size | threads, redcoll_allreduce auto | direct shared-memory reduction | kernel limit (1 thread) | MPICH native MPI_Allreduce | auto / direct | auto / kernel | auto / MPICH |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    for (si = 0; si < B->nsizes; ++si) {
        size_t base = (size_t)si * (size_t)B->nm;
        double a = med[base + (size_t)ia], d = id >= 0 ? med[base + (size_t)id] : 0;
        double k = ik >= 0 ? med[base + (size_t)ik] : 0;
        const mpirow *n = mpi_find(mpi, nmpi, "native", B->p, B->sizes[si]);
        char t1[32], t2[32], t3[32], t4[32];
        printf("| %s | %s | %s | %s | %s | %.2f | %.2f | ", fmt_size(B->sizes[si], sb), fmt_time(a, t1),
               d > 0 ? fmt_time(d, t2) : "-", k > 0 ? fmt_time(k, t3) : "-",
               n ? fmt_time(n->sec, t4) : "-", d > 0 ? a / d : 0, k > 0 ? a / k : 0);
        if (n) printf("%.2f |\n", a / n->sec); else printf("- |\n");
    }
    free(med); free(best);
}

/* ---- driver --------------------------------------------------------------- */

static int wanted(const char *list, const char *name) {
    const char *s = list;
    if (!list) return 1;
    while (*s) {
        size_t len = strcspn(s, ",");
        if (len && strncmp(name, s, len) == 0) return 1;
        s += len + (s[len] == ',');
    }
    return 0;
}

static void add_method(bench *B, const char *list, const char *name, int kind, redcoll_algo algo) {
    if (B->nm >= MAX_METHODS || !wanted(list, name)) return;
    snprintf(B->m[B->nm].name, sizeof B->m[B->nm].name, "%s", name);
    B->m[B->nm].kind = kind;
    B->m[B->nm].algo = algo;
    B->nm++;
}

static int bench_team(bench *B, const char *methods, int fused_ok) {
    int a, ns = B->nsizes, nm;
    size_t cells;
    redcoll_result res;
    char name[40];
    B->nm = 0;
    add_method(B, methods, "lib:auto", M_LIB, REDCOLL_ALGO_AUTO);
    for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
        if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)a)) continue;
        snprintf(name, sizeof name, "lib:%s", redcoll_algo_name((redcoll_algo)a));
        add_method(B, methods, name, M_LIB, (redcoll_algo)a);
    }
    add_method(B, methods, "plan:auto", M_PLAN, REDCOLL_ALGO_AUTO);
    add_method(B, methods, "lib:overhead", M_LIB_NULL, REDCOLL_ALGO_AUTO);
    add_method(B, methods, "plan:overhead", M_PLAN_NULL, REDCOLL_ALGO_AUTO);
    add_method(B, methods, "direct", M_DIRECT, REDCOLL_ALGO_AUTO);
    add_method(B, methods, "kernel", M_KERNEL, REDCOLL_ALGO_AUTO);
    if (B->p % 2 == 0) {
        add_method(B, methods, "t:pingpong", M_PINGPONG, REDCOLL_ALGO_AUTO);
        add_method(B, methods, "t:exchange", M_EXCHANGE, REDCOLL_ALGO_AUTO);
        add_method(B, methods, "t:exch+reduce", M_EXCH_PLUS, REDCOLL_ALGO_AUTO);
        if (fused_ok) add_method(B, methods, "t:exch_reduce", M_EXCH_FUSED, REDCOLL_ALGO_AUTO);
        if (B->p == 2) add_method(B, methods, "t:hd", M_HD, REDCOLL_ALGO_AUTO);
        if (B->p == 2 && fused_ok) add_method(B, methods, "t:hd_fused", M_HD_FUSED, REDCOLL_ALGO_AUTO);
    }
    nm = B->nm;
    cells = (size_t)ns * (size_t)nm;
    B->in = (double **)calloc((size_t)B->p, sizeof(double *));
    B->out = (double **)calloc((size_t)B->p, sizeof(double *));
    B->tmp = (double **)calloc((size_t)B->p, sizeof(double *));
    B->sample = (double *)calloc(cells * (size_t)B->batches, sizeof(double));
    B->faults = (double *)calloc(cells, sizeof(double));
    B->wrong = (long *)calloc(cells, sizeof(long));
    B->err = (redcoll_result *)calloc(cells, sizeof(redcoll_result));
    B->plan = (redcoll_plan **)calloc((size_t)B->p, sizeof(redcoll_plan *));
    B->plan_n = (size_t *)calloc((size_t)B->p, sizeof(size_t));
    if (!B->plan || !B->plan_n || !B->in || !B->out || !B->tmp || !B->sample || !B->faults || !B->wrong || !B->err) return 1;
    B->b.p = B->p;
    res = redcoll_shm_run(B->p, bench_rank, B, NULL);
    if (res) printf("# team of %d: %s\n", B->p, redcoll_result_string(res));
    return 0;
}

static void bench_free(bench *B) {
    free(B->in); free(B->out); free(B->tmp); free(B->sample); free(B->faults); free(B->wrong);
    free(B->err); free(B->plan); free(B->plan_n);
}

int main(int argc, char **argv) {
    static const size_t default_sizes[] = { 8, 1024, 1 << 20, 8 << 20, 64 << 20 };
    int ps[8], np = 0, i, nmpi = 0, fused_ok, bad = 0;
    const char *methods = NULL, *mpi_cmd = NULL;
    static mpirow mpi[256];
    static bench base;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    redcoll_shm_team *probe;

    base.nsizes = 5;
    memcpy(base.sizes, default_sizes, sizeof default_sizes);
    base.batches = 7;
    base.target = 0.02;
    for (i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-p") == 0 && v && np < 8) { ps[np++] = atoi(v); ++i; }
        else if (strcmp(a, "--batches") == 0 && v) { base.batches = atoi(v); ++i; }
        else if (strcmp(a, "--seconds") == 0 && v) { base.target = atof(v); ++i; }
        else if (strcmp(a, "--methods") == 0 && v) { methods = v; ++i; }
        else if (strcmp(a, "--mpi") == 0 && v) { mpi_cmd = v; ++i; }
        else if (strcmp(a, "--sizes") == 0 && v) { base.nsizes = bench_parse_sizes(v, base.sizes, MAX_SIZES); ++i; }
        else {
            fprintf(stderr, "usage: datapath [-p N]... [--sizes LIST] [--batches N] [--seconds S] "
                            "[--methods LIST] [--mpi CMD]\n");
            return 2;
        }
    }
    if (base.batches < 1) base.batches = 1;
    if (np == 0) {
        ps[np++] = 2;
        if (cpus > 2) ps[np++] = (int)cpus;
    }
    for (i = 0; i < base.nsizes; ++i)
        if (base.sizes[i] / 8 > base.maxn) base.maxn = base.sizes[i] / 8;
    if (redcoll_shm_team_create(NULL, 2, &probe) != REDCOLL_OK) return 1;
    fused_ok = redcoll_shm_transport(probe, 0)->sendrecv_reduce != NULL;
    redcoll_shm_team_destroy(probe);
    printf("# redcoll datapath benchmark:");
    for (i = 0; i < argc; ++i) printf(" %s", argv[i]);
    printf("\n");
    bench_print_loadavg("start");
    {
        static bench runs[8];
        for (i = 0; i < np; ++i) { /* every team first, then MPICH right after, then the tables */
            runs[i] = base;
            runs[i].p = ps[i] < 1 ? 1 : ps[i];
            if (bench_team(&runs[i], methods, fused_ok)) { fprintf(stderr, "out of memory\n"); return 1; }
        }
        bench_print_loadavg("threads done");
        if (mpi_cmd) nmpi = run_mpi(mpi_cmd, mpi, 256);
        for (i = 0; i < np; ++i) {
            bench *B = &runs[i];
            int si, mi;
            report(B, mpi, nmpi);
            for (si = 0; si < B->nsizes; ++si)
                for (mi = 0; mi < B->nm; ++mi) {
                    size_t at = (size_t)si * (size_t)B->nm + (size_t)mi;
                    bad |= B->wrong[at] != 0 || B->err[at] != REDCOLL_OK;
                }
            bench_free(B);
        }
    }
    return bad;
}
