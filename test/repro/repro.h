/* repro.h - what test/repro's C programs share: a generator of wide-range
   values that C and Fortran compute alike (test/fortran/checks.f90 is the
   Fortran one), and the hash of their output. */
#ifndef REPRO_H
#define REPRO_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Park-Miller, in 64-bit integers (no overflow: h < 2^31). */
static int64_t lcg(int64_t h) { return (h * 48271) % 2147483647; }

/* The value of the four draws after seed h: +-m 2^(e - 52), m a 53-bit
   mantissa cut to its top `bits` bits, e within +-w/2. Exact in double. */
static double draw(int64_t h, int64_t w, int bits) {
    int64_t m, e;
    h = lcg(h);
    m = h % 33554432; /* 25 bits */
    h = lcg(h);
    m = m * 134217728 + h % 134217728 + 4503599627370496LL; /* 2^52 + 52 bits */
    m = m >> (53 - bits) << (53 - bits);
    h = lcg(h);
    e = h % (w + 1) - w / 2;
    h = lcg(h);
    return (h % 2 ? -1.0 : 1.0) * ldexp((double)m, (int)e - 52);
}

/* FNV-1a of n bytes. */
static uint32_t fnv(const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    uint32_t h = 2166136261u;
    size_t i;
    for (i = 0; i < n; ++i) h = (h ^ b[i]) * 16777619u;
    return h;
}
#endif
