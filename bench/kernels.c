/* kernels.c - the library's reduction kernels (built at the Makefile's -O2)
   against the compiler's best: restrict loops built -O3 -march=native in
   bench/kernels_ref.c, measured in the same run.

   Usage: bench_kernels [--sizes 32K,1M,8M,64M] [--reps N] [--form hi|lo|third]
                        [--only OP/TYPE,...] [--isa N] [--all] [--tiny]
   For every (op, type, size) and two cache states it prints the library's
   time over the reference's: "hot" repeats the call on the same buffers,
   "stream" walks a 256 MB pool so every call reads cold memory. Each cell is
   the median over --reps repetitions of the ratio of two adjacent batches
   (library and reference interleaved, order alternating), each batch about
   0.5 ms of thread CPU time: the machine is shared, adjacent batches see the
   same load, and CPU time leaves out the slices other programs ran.
   --form picks the aliasing form (default hi: out == hi, as a schedule's
   reduce into the received buffer); --isa forces a kernel level (0 scalar,
   1 vec16, 2 avx2, 3 avx512); --tiny times calls of 1..8 elements. */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "bench/kernels_ref.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BK_POOL ((size_t)256 << 20) /* bytes per stream pool: beyond any last-level cache */
#define BK_BATCH_NS 5e5
#define BK_MAXREPS 63

/* Thread CPU time: on a shared machine a batch that is preempted would
   otherwise count the other programs' time slices. */
static double bk_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bk_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double bk_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bk_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Inputs that keep every op's values tame under repetition: lo holds +-1
   for float sums and products (no overflow, no subnormals), small integers
   elsewhere. */
static void bk_fill(unsigned char *p, size_t bytes, redcoll_dtype d, int lo_side) {
    size_t es = redcoll_dtype_size(d), i, n = bytes / es;
    uint32_t h = lo_side ? 12345u : 777u;
    for (i = 0; i < n; ++i, p += es) {
        h = h * 1664525u + 1013904223u;
        memset(p, 0, es);
        if (d == REDCOLL_FLOAT) { float x = (h >> 31) ? 1.0f : -1.0f; if (!lo_side) x = (float)(h >> 20); memcpy(p, &x, 4); }
        else if (d == REDCOLL_DOUBLE) { double x = (h >> 31) ? 1.0 : -1.0; if (!lo_side) x = (double)(h >> 20); memcpy(p, &x, 8); }
        else if (d >= REDCOLL_FLOAT_INT) { int v = (int)(h >> 29); memcpy(p, &v, 1); p[es - 4] = (unsigned char)(h >> 8); }
        else memcpy(p, &h, es < 4 ? es : 4);
    }
}

typedef struct bk_cell { double lib_ns, ref_ns, ratio; } bk_cell;

/* Times one (op, type, size, state): `lo`, `hi`, `out` are pools of `slots`
   buffers of `bytes` each (slots = 1 for hot). */
static bk_cell bk_measure(redcoll__kernel lib, bk_kernel ref, int form, unsigned char *lo,
                          unsigned char *hi, unsigned char *third, size_t slots, size_t bytes,
                          size_t n, int reps) {
    double tl[BK_MAXREPS], tr[BK_MAXREPS], ratio[BK_MAXREPS], t;
    size_t calls, c, slot = 0;
    int r, k;
    bk_cell cell;
    /* warm up both on the first slot (the pools are already in memory), then
       size the batch */
    {
        unsigned char *o = form == BK_OUT_LO ? lo : form == BK_OUT_HI ? hi : third;
        lib(lo, hi, o, n); ref(lo, hi, o, n);
        t = bk_now();
        lib(lo, hi, o, n);
        t = bk_now() - t;
    }
    calls = t > 0 ? (size_t)(BK_BATCH_NS / t) : 1000;
    if (calls < 1) calls = 1;
    if (calls > 1000000) calls = 1000000;
    for (r = 0; r < reps; ++r)
        for (k = 0; k < 2; ++k) {
            int use_lib = (k == 0) == (r % 2 == 0); /* alternate which goes first */
            double t0 = bk_now();
            for (c = 0; c < calls; ++c) {
                unsigned char *a = lo + slot * bytes, *b = hi + slot * bytes;
                unsigned char *o = form == BK_OUT_LO ? a : form == BK_OUT_HI ? b : third + slot * bytes;
                if (use_lib) lib(a, b, o, n); else ref(a, b, o, n);
                if (++slot == slots) slot = 0;
            }
            t0 = (bk_now() - t0) / (double)calls;
            if (use_lib) tl[r] = t0; else tr[r] = t0;
        }
    for (r = 0; r < reps; ++r) ratio[r] = tl[r] / tr[r];
    cell.ratio = bk_median(ratio, reps);
    cell.lib_ns = bk_median(tl, reps);
    cell.ref_ns = bk_median(tr, reps);
    return cell;
}

/* Whether `name` ("max/int32") is one of the comma-separated `list`. */
static int bk_listed(const char *list, const char *name) {
    size_t n = strlen(name);
    while (*list) {
        size_t k = strcspn(list, ",");
        if (k == n && strncmp(list, name, n) == 0) return 1;
        list += k + (list[k] == ',');
    }
    return 0;
}

static size_t bk_parse_size(const char *s) {
    char *end;
    double v = strtod(s, &end);
    if (*end == 'K' || *end == 'k') v *= 1024; else if (*end == 'M' || *end == 'm') v *= 1 << 20;
    return (size_t)v;
}

static void bk_size_name(size_t b, char *out, size_t len) {
    if (b >= (1u << 20)) snprintf(out, len, "%zuM", b >> 20); else snprintf(out, len, "%zuK", b >> 10);
}

/* Calls of 1..8 elements: the kernel a setup would pick, the reference, and
   the lookup itself (once per collective call). */
static void bk_tiny(int reps) {
    static const struct { redcoll_op_kind op; redcoll_dtype d; } cases[] = {
        { REDCOLL_OP_SUM, REDCOLL_DOUBLE }, { REDCOLL_OP_SUM, REDCOLL_FLOAT },
        { REDCOLL_OP_MAX, REDCOLL_INT32 }, { REDCOLL_OP_SUM, REDCOLL_INT64 }, { REDCOLL_OP_BOR, REDCOLL_UINT8 }
    };
    double lo[8] = { 1, 2, 3, 4, 5, 6, 7, 8 }, hi[8] = { 0 };
    const int calls = 200000;
    size_t ci, n;
    int r, c;
    printf("\ntiny counts: ns per call, library kernel / -O3 -march=native loop (out == hi), median of %d\n", reps);
    printf("%-12s", "op/type");
    for (n = 1; n <= 8; ++n) printf("      n=%zu   ", n);
    printf("\n");
    for (ci = 0; ci < sizeof cases / sizeof cases[0]; ++ci) {
        redcoll__kernel lib = redcoll__kernel_for(cases[ci].op, cases[ci].d);
        bk_kernel ref = bk_reference(cases[ci].op, cases[ci].d, BK_OUT_HI);
        printf("%-5s %-6s", redcoll_op_name(cases[ci].op), redcoll_dtype_name(cases[ci].d));
        for (n = 1; n <= 8; ++n) {
            double tl[BK_MAXREPS], tr[BK_MAXREPS];
            for (r = 0; r < reps; ++r) {
                double t0 = bk_now();
                for (c = 0; c < calls; ++c) lib(lo, hi, hi, n);
                tl[r] = (bk_now() - t0) / calls;
                t0 = bk_now();
                for (c = 0; c < calls; ++c) ref(lo, hi, hi, n);
                tr[r] = (bk_now() - t0) / calls;
            }
            printf(" %4.1f / %4.1f", bk_median(tl, reps), bk_median(tr, reps));
        }
        printf("\n");
    }
    {
        double t[BK_MAXREPS];
        volatile int sink = 0;
        for (r = 0; r < reps; ++r) {
            double t0 = bk_now();
            for (c = 0; c < calls; ++c)
                sink += redcoll__kernel_for((redcoll_op_kind)(c & 3), REDCOLL_DOUBLE) != NULL;
            t[r] = (bk_now() - t0) / calls;
        }
        printf("kernel lookup (redcoll__kernel_for, once per collective call): %.1f ns\n", bk_median(t, reps));
        for (r = 0; r < reps; ++r) {
            double t0 = bk_now();
            for (c = 0; c < calls; ++c) redcoll_reduce_local(lo, hi, 1, REDCOLL_DOUBLE, REDCOLL_SUM);
            t[r] = (bk_now() - t0) / calls;
        }
        printf("redcoll_reduce_local of 1 double (checks + lookup + kernel): %.1f ns\n", bk_median(t, reps));
        (void)sink;
    }
}

#define BK_NSIZES_MAX 8

int main(int argc, char **argv) {
    static const char *form_names[BK_FORMS] = { "lo", "hi", "third" };
    size_t sizes[BK_NSIZES_MAX] = { 32 << 10, 1 << 20, 8 << 20, 64 << 20 };
    int nsizes = 4, reps = 15, form = BK_OUT_HI, all = 0, tiny = 0, isa = -1, i, si, st;
    const char *only = NULL;
    unsigned char *lo, *hi, *third;
    int op, d;
    /* worst ratio per op row and column (size x state), with its type */
    double worst[REDCOLL_OP_KIND_COUNT][BK_NSIZES_MAX][2];
    int worst_d[REDCOLL_OP_KIND_COUNT][BK_NSIZES_MAX][2];
    double target_worst = 0;

    for (i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            char *s = argv[++i], *tok;
            nsizes = 0;
            for (tok = strtok(s, ","); tok && nsizes < BK_NSIZES_MAX; tok = strtok(NULL, ","))
                sizes[nsizes++] = bk_parse_size(tok);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1) reps = 1;
            if (reps > BK_MAXREPS) reps = BK_MAXREPS;
        } else if (!strcmp(argv[i], "--form") && i + 1 < argc) {
            ++i;
            for (form = 0; form < BK_FORMS && strcmp(argv[i], form_names[form]); ++form) {}
            if (form == BK_FORMS) { fprintf(stderr, "--form hi|lo|third\n"); return 2; }
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--isa") && i + 1 < argc) isa = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--all")) all = 1;
        else if (!strcmp(argv[i], "--tiny")) tiny = 1;
        else { fprintf(stderr, "usage: see the comment at the top of bench/kernels.c\n"); return 2; }
    }
    if (isa >= 0 && (isa >= REDCOLL__ISA_COUNT || !redcoll__isa_ok(isa))) {
        fprintf(stderr, "kernel level %d is not available here\n", isa);
        return 2;
    }
    {
        int best = REDCOLL__ISA_COUNT - 1;
        while (!redcoll__isa_ok(best)) --best;
        printf("kernel level %d (0 scalar, 1 vec16, 2 avx2, 3 avx512); compiler %s; form out == %s\n",
               isa >= 0 ? isa : best,
#ifdef __clang__
               "clang " __clang_version__,
#else
               "gcc " __VERSION__,
#endif
               form_names[form]);
    }
    if (tiny) { bk_tiny(reps); return 0; }

    lo = (unsigned char *)aligned_alloc(64, BK_POOL);
    hi = (unsigned char *)aligned_alloc(64, BK_POOL);
    third = (unsigned char *)aligned_alloc(64, BK_POOL);
    if (!lo || !hi || !third) { fprintf(stderr, "out of memory\n"); return 1; }
    for (op = 0; op < REDCOLL_OP_KIND_COUNT; ++op)
        for (si = 0; si < BK_NSIZES_MAX; ++si) worst[op][si][0] = worst[op][si][1] = 0;

    printf("ratio = library time / reference time; median of %d interleaved repetitions\n", reps);
    if (all) printf("%-7s %-16s %5s %-6s %10s %10s %7s %8s\n", "op", "type", "size", "state",
                    "lib us", "ref us", "GB/s", "ratio");
    memset(third, 0, BK_POOL);
    for (d = 0; d < REDCOLL_DTYPE_COUNT; ++d) {
        int filled = 0;
        for (op = 0; op < REDCOLL_OP_USER; ++op) {
            redcoll__kernel lib;
            bk_kernel ref = bk_reference(op, d, form);
            char name[64];
            int is_target;
            if (!ref || !redcoll_op_valid_for((redcoll_op_kind)op, (redcoll_dtype)d)) continue;
            lib = isa >= 0 ? redcoll__kernel_isa((redcoll_op_kind)op, (redcoll_dtype)d, isa)
                           : redcoll__kernel_for((redcoll_op_kind)op, (redcoll_dtype)d);
            snprintf(name, sizeof name, "%s/%s", redcoll_op_name((redcoll_op_kind)op),
                     redcoll_dtype_name((redcoll_dtype)d));
            if (only && !bk_listed(only, name)) continue;
            is_target = (op == REDCOLL_OP_SUM && (d == REDCOLL_DOUBLE || d == REDCOLL_FLOAT ||
                                                  d == REDCOLL_INT64)) ||
                        (op == REDCOLL_OP_MAX && d == REDCOLL_INT32);
            if (!filled) { /* once per type: the values stay tame under every op */
                bk_fill(lo, BK_POOL, (redcoll_dtype)d, 1);
                bk_fill(hi, BK_POOL, (redcoll_dtype)d, 0);
                filled = 1;
            }
            for (si = 0; si < nsizes; ++si)
                for (st = 0; st < 2; ++st) {
                    size_t es = redcoll_dtype_size((redcoll_dtype)d);
                    size_t bytes = sizes[si] / es * es, slots = st ? BK_POOL / bytes : 1;
                    char sz[16];
                    bk_cell cell;
                    if (slots < 1) slots = 1;
                    cell = bk_measure(lib, ref, form, lo, hi, third, slots, bytes, bytes / es, reps);
                    if (cell.ratio > worst[op][si][st]) { worst[op][si][st] = cell.ratio; worst_d[op][si][st] = d; }
                    if (is_target && sizes[si] <= (8u << 20) && cell.ratio > target_worst)
                        target_worst = cell.ratio;
                    bk_size_name(sizes[si], sz, sizeof sz);
                    if (all)
                        printf("%-7s %-16s %5s %-6s %10.2f %10.2f %7.1f %8.3f\n",
                               redcoll_op_name((redcoll_op_kind)op), redcoll_dtype_name((redcoll_dtype)d),
                               sz, st ? "stream" : "hot", cell.lib_ns / 1e3, cell.ref_ns / 1e3,
                               3.0 * (double)bytes / cell.lib_ns,
                               cell.ratio);
                    fflush(stdout);
                }
        }
    }

    /* The summary: per op, the worst ratio over its types, and which type. */
    printf("\nworst ratio over types (library / -O3 -march=native restrict loop)\n| op |");
    for (st = 0; st < 2; ++st)
        for (si = 0; si < nsizes; ++si) {
            char sz[16];
            bk_size_name(sizes[si], sz, sizeof sz);
            printf(" %s %s |", sz, st ? "stream" : "hot");
        }
    printf("\n|---|");
    for (si = 0; si < 2 * nsizes; ++si) printf("---|");
    printf("\n");
    for (op = 0; op < REDCOLL_OP_USER; ++op) {
        if (worst[op][0][0] == 0) continue;
        printf("| %s |", redcoll_op_name((redcoll_op_kind)op));
        for (st = 0; st < 2; ++st)
            for (si = 0; si < nsizes; ++si)
                printf(" %.2f %s |", worst[op][si][st], redcoll_dtype_name((redcoll_dtype)worst_d[op][si][st]));
        printf("\n");
    }
    if (target_worst > 0)
        printf("\nworst ratio of double/float/int64 sum and int32 max at <= 8 MB: %.3f\n",
               target_worst);
    free(lo); free(hi); free(third);
    return 0;
}
