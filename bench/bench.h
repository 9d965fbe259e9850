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
