/* bench.h - helpers shared by the benchmark programs in bench/ (static, one
   copy per program; inline, so a program may use only some): sizes with
   K/M/G suffixes, medians, page faults. */
#ifndef REDCOLL_BENCH_H
#define REDCOLL_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Minor page faults of the whole process so far. */
static inline long bench_minor_faults(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v[0..n) and returns its median. */
static inline double bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "8,1K,1M,64M" -> up to max sizes in bytes (whole doubles, at least 8);
   returns how many. */
static inline int bench_parse_sizes(const char *s, size_t *sizes, int max) {
    int n = 0;
    while (*s && n < max) {
        char *end;
        double v = strtod(s, &end);
        if (*end == 'K' || *end == 'k') v *= 1024;
        else if (*end == 'M' || *end == 'm') v *= 1024 * 1024;
        else if (*end == 'G' || *end == 'g') v *= 1024.0 * 1024 * 1024;
        sizes[n++] = v < 8 ? 8 : (size_t)v / 8 * 8;
        s += strcspn(s, ",");
        if (*s == ',') ++s;
    }
    return n;
}

/* The options the interleaved benches share: --sizes LIST, --batches B,
   --seconds S. Returns 1 when argv[*i] is one of them (*i then at its value). */
static inline int bench_timing_option(int argc, char **argv, int *i, size_t *sizes, int *nsizes,
                                      int *batches, double *seconds) {
    if (*i + 1 >= argc) return 0;
    if (strcmp(argv[*i], "--sizes") == 0) *nsizes = bench_parse_sizes(argv[++*i], sizes, 32);
    else if (strcmp(argv[*i], "--batches") == 0) *batches = atoi(argv[++*i]);
    else if (strcmp(argv[*i], "--seconds") == 0) *seconds = atof(argv[++*i]);
    else return 0;
    return 1;
}

/* 8 B, 64 B, ... by factors of 8, the last one `last`; returns how many. */
static inline int bench_sizes_by_8(size_t *sizes, size_t last) {
    int n = 1;
    for (sizes[0] = 8; sizes[n - 1] < last; ++n)
        sizes[n] = sizes[n - 1] * 8 > last ? last : sizes[n - 1] * 8;
    return n;
}

/* Prints "# <what>: loadavg 1 5 15 min" (the run queue, where /proc/loadavg
   exists): on a shared machine the numbers mean little without it. */
static inline void bench_print_loadavg(const char *what) {
    char buf[128];
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return;
    if (fgets(buf, sizeof buf, f)) {
        double a, b, c;
        if (sscanf(buf, "%lf %lf %lf", &a, &b, &c) == 3)
            printf("# %s: loadavg %.2f %.2f %.2f (1, 5, 15 min)\n", what, a, b, c);
    }
    fclose(f);
}

#endif
