/* test_kernels.c - every reduction kernel, at every vector level this CPU
   runs, bitwise against a scalar reference written here: every predefined op
   x type, counts 0..300 and large, byte offsets, and the three aliasing forms
   (out is lo, out is hi, out is a third buffer), with guard bytes around out.

   Inputs mix random bits with the values that break careless vector code:
   NaNs (quiet and signalling, either sign, many payloads), -0, infinities,
   subnormals, ties, zeros, integer extremes. One exception: when both
   operands of a sum or product are NaN, IEEE 754 leaves open which payload
   the result carries and C compilers commute + and *, so there the two NaNs
   are made identical; a single NaN operand keeps its own payload. */
#include <float.h>
#include <stddef.h>

static uint64_t tk_rng = 0x9E3779B97F4A7C15ull;
static uint64_t tk_rand(void) { /* xorshift64* */
    tk_rng ^= tk_rng >> 12; tk_rng ^= tk_rng << 25; tk_rng ^= tk_rng >> 27;
    return tk_rng * 0x2545F4914F6CDD1Dull;
}

static const char *tk_isa_name(int isa) {
    static const char *names[REDCOLL__ISA_COUNT] = { "scalar", "vec16", "avx2", "avx512" };
    return names[isa];
}

static int tk_is_float(redcoll_dtype d) {
    return d == REDCOLL_FLOAT || d == REDCOLL_DOUBLE || d == REDCOLL_LONG_DOUBLE;
}

/* Bytes that carry the value: long double's padding is not part of it. */
static size_t tk_value_bytes(redcoll_dtype d) {
    if (d == REDCOLL_LONG_DOUBLE && LDBL_MANT_DIG == 64) return 10;
    return redcoll_dtype_size(d);
}

/* ---- inputs ---------------------------------------------------------------- */

static void tk_fill_float(float *x) {
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u,  /* +-0, +-inf */
        0x7FC00000u, 0xFFC00000u, 0x7FC12345u, 0x7F800001u,  /* quiet, signalling NaNs */
        0xFFA00000u, 0x00000001u, 0x807FFFFFu, 0x00400000u,  /* subnormals */
        0x00800000u, 0x7F7FFFFFu, 0x3F800000u, 0xBF800000u   /* FLT_MIN, FLT_MAX, +-1 */
    };
    uint64_t r = tk_rand();
    uint32_t bits = (r & 3) == 0 ? special[(r >> 8) % 16] : (uint32_t)(r >> 32);
    if ((r & 3) == 1) bits = (uint32_t)((r >> 16) % 7) << 23 | 0x3F000000u; /* small normals: ties */
    memcpy(x, &bits, 4);
}

static void tk_fill_double(double *x) {
    static const uint64_t special[] = {
        0x0000000000000000ull, 0x8000000000000000ull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
        0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF8000000ABCDEFull, 0x7FF0000000000001ull,
        0xFFF4000000000000ull, 0x0000000000000001ull, 0x800FFFFFFFFFFFFFull, 0x0008000000000000ull,
        0x0010000000000000ull, 0x7FEFFFFFFFFFFFFFull, 0x3FF0000000000000ull, 0xBFF0000000000000ull
    };
    uint64_t r = tk_rand(), bits = (r & 3) == 0 ? special[(r >> 8) % 16] : tk_rand();
    if ((r & 3) == 1) bits = ((r >> 16) % 7) << 52 | 0x3FE0000000000000ull;
    memcpy(x, &bits, 8);
}

static void tk_fill_long_double(long double *x) {
    static const long double special[] = { 0.0L, -0.0L, 1.0L, -1.0L, 0.5L, 3.0L };
    uint64_t r = tk_rand();
    switch (r & 7) {
    case 0: *x = special[(r >> 8) % 6]; break;
    case 1: *x = (r & 8) ? HUGE_VALL : -HUGE_VALL; break;
    case 2: *x = (r & 8) ? nanl("") : -nanl("7"); break;
    case 3: *x = LDBL_MIN / (long double)(1u << ((r >> 8) % 20)); break; /* subnormal */
    default: *x = (long double)(int64_t)tk_rand() / (long double)(1 + (r >> 40)); break;
    }
}

/* n random elements of d at p; integers mix zeros, small values and extremes. */
static void tk_fill(redcoll_dtype d, unsigned char *p, size_t n) {
    size_t es = redcoll_dtype_size(d), i, k;
    for (i = 0; i < n; ++i, p += es) {
        uint64_t r = tk_rand(), v = tk_rand();
        memset(p, 0, es);
        switch (d) {
        case REDCOLL_FLOAT: { float x; tk_fill_float(&x); memcpy(p, &x, 4); break; }
        case REDCOLL_DOUBLE: { double x; tk_fill_double(&x); memcpy(p, &x, 8); break; }
        case REDCOLL_LONG_DOUBLE: { long double x; tk_fill_long_double(&x); memcpy(p, &x, sizeof x); break; }
#define TK_PAIR(T, VEXPR) { T x; memset(&x, 0, sizeof x); x.v = VEXPR; x.i = (int)(v % 5) - 2; memcpy(p, &x, sizeof x); break; }
        case REDCOLL_FLOAT_INT: TK_PAIR(redcoll_float_int, (float)(r % 4) - 1.5f)
        case REDCOLL_DOUBLE_INT: TK_PAIR(redcoll_double_int, (r & 16) ? NAN : (double)(r % 4))
        case REDCOLL_LONG_INT: TK_PAIR(redcoll_long_int, (long)(r % 4) - 2)
        case REDCOLL_2INT: TK_PAIR(redcoll_2int, (int)(r % 4) - 2)
        case REDCOLL_SHORT_INT: TK_PAIR(redcoll_short_int, (short)(r % 4))
        case REDCOLL_LONG_DOUBLE_INT: TK_PAIR(redcoll_long_double_int, (long double)(r % 4) / 3.0L)
#undef TK_PAIR
        default: /* integers */
            switch (r % 8) {
            case 0: case 1: v = 0; break;
            case 2: v = r >> 60; break;                 /* small */
            case 3: v = ~(uint64_t)0; break;            /* -1, the unsigned maximum */
            case 4: v = (uint64_t)1 << (8 * es - 1); break; /* the signed minimum */
            case 5: v = ((uint64_t)1 << (8 * es - 1)) - 1; break;
            default: break;                             /* random bits */
            }
            for (k = 0; k < es; ++k) p[k] = (unsigned char)(v >> (8 * k)); /* little or big endian alike: bits */
        }
    }
}

static int tk_float_is_nan(redcoll_dtype d, const unsigned char *p) {
    if (d == REDCOLL_FLOAT) { float x; memcpy(&x, p, 4); return x != x; }
    if (d == REDCOLL_DOUBLE) { double x; memcpy(&x, p, 8); return x != x; }
    if (d == REDCOLL_LONG_DOUBLE) { long double x; memcpy(&x, p, sizeof x); return x != x; }
    return 0;
}

/* ---- the reference: one element at a time, integers modulo 2^64 ---------- */

#define TK_INT_REF(T, U)                                                                   \
    {                                                                                      \
        T a, b; U r = 0; uint64_t ua, ub;                                                  \
        memcpy(&a, lo, sizeof a); memcpy(&b, hi, sizeof b);                                \
        ua = (uint64_t)(U)a; ub = (uint64_t)(U)b;                                          \
        switch (op) {                                                                      \
        case REDCOLL_OP_SUM: r = (U)(ua + ub); break;                                      \
        case REDCOLL_OP_PROD: r = (U)(ua * ub); break;                                     \
        case REDCOLL_OP_MIN: r = (U)(a <= b ? a : b); break;                               \
        case REDCOLL_OP_MAX: r = (U)(a >= b ? a : b); break;                               \
        case REDCOLL_OP_LAND: r = (U)(a && b); break;                                      \
        case REDCOLL_OP_LOR: r = (U)(a || b); break;                                       \
        case REDCOLL_OP_LXOR: r = (U)(!a != !b); break;                                    \
        case REDCOLL_OP_BAND: r = (U)(ua & ub); break;                                     \
        case REDCOLL_OP_BOR: r = (U)(ua | ub); break;                                      \
        case REDCOLL_OP_BXOR: r = (U)(ua ^ ub); break;                                     \
        default: return 0;                                                                 \
        }                                                                                  \
        memcpy(out, &r, sizeof r);                                                         \
        return 1;                                                                          \
    }
static const uint32_t tk_qnanf = 0x7fc00000u;           /* SUM_EXACT's NaN */
static const uint64_t tk_qnan = 0x7ff8000000000000ull;
/* MPI's min and max on floats as the C comparison sees them: the higher rank's
   operand replaces the lower's only when it compares strictly better. */
#define TK_FLOAT_REF(T)                                                                    \
    {                                                                                      \
        T a, b, r;                                                                         \
        memcpy(&a, lo, sizeof a); memcpy(&b, hi, sizeof b);                                \
        switch (op) {                                                                      \
        case REDCOLL_OP_SUM: r = a + b; break;                                             \
        case REDCOLL_OP_PROD: r = a * b; break;                                            \
        case REDCOLL_OP_MIN: r = a; if (b < a) r = b; break;                               \
        case REDCOLL_OP_MAX: r = a; if (b > a) r = b; break;                               \
        case REDCOLL_OP_SUM_EXACT: /* float, double: the sum, NaN canonical */             \
            if (d == REDCOLL_LONG_DOUBLE) return 0;                                        \
            r = a + b;                                                                     \
            if (r != r) memcpy(&r, sizeof r == 4 ? (const void *)&tk_qnanf : &tk_qnan, sizeof r); \
            break;                                                                         \
        default: return 0;                                                                 \
        }                                                                                  \
        memcpy(out, &r, tk_value_bytes(d));                                                \
        return 1;                                                                          \
    }
#define TK_PAIR_REF(T)                                                                     \
    {                                                                                      \
        T a, b;                                                                            \
        if (op != REDCOLL_OP_MINLOC && op != REDCOLL_OP_MAXLOC) return 0;                  \
        memcpy(&a, lo, sizeof a); memcpy(&b, hi, sizeof b);                                \
        int b_better = op == REDCOLL_OP_MINLOC ? b.v < a.v : b.v > a.v;                   \
        int a_better = op == REDCOLL_OP_MINLOC ? a.v < b.v : a.v > b.v;                   \
        if (b_better) a = b;                                                               \
        else if (!a_better && b.i < a.i) a.i = b.i; /* a tie, NaN included */              \
        memcpy(out, &a.v, sizeof a.v);                                                     \
        memcpy(out + offsetof(T, i), &a.i, sizeof a.i);                                    \
        return 1;                                                                          \
    }

/* out = lo op hi for one element; 0 if the op is undefined on d. Writes only
   the value bytes (pairs: v and i; long double: not its padding). */
static int tk_ref_elem(redcoll_op_kind op, redcoll_dtype d, const unsigned char *lo,
                       const unsigned char *hi, unsigned char *out) {
    switch (d) {
    case REDCOLL_INT8: TK_INT_REF(int8_t, uint8_t)
    case REDCOLL_UINT8: TK_INT_REF(uint8_t, uint8_t)
    case REDCOLL_INT16: TK_INT_REF(int16_t, uint16_t)
    case REDCOLL_UINT16: TK_INT_REF(uint16_t, uint16_t)
    case REDCOLL_INT32: TK_INT_REF(int32_t, uint32_t)
    case REDCOLL_UINT32: TK_INT_REF(uint32_t, uint32_t)
    case REDCOLL_INT64: TK_INT_REF(int64_t, uint64_t)
    case REDCOLL_UINT64: TK_INT_REF(uint64_t, uint64_t)
    case REDCOLL_FLOAT: TK_FLOAT_REF(float)
    case REDCOLL_DOUBLE: TK_FLOAT_REF(double)
    case REDCOLL_LONG_DOUBLE: TK_FLOAT_REF(long double)
    case REDCOLL_FLOAT_INT: TK_PAIR_REF(redcoll_float_int)
    case REDCOLL_DOUBLE_INT: TK_PAIR_REF(redcoll_double_int)
    case REDCOLL_LONG_INT: TK_PAIR_REF(redcoll_long_int)
    case REDCOLL_2INT: TK_PAIR_REF(redcoll_2int)
    case REDCOLL_SHORT_INT: TK_PAIR_REF(redcoll_short_int)
    case REDCOLL_LONG_DOUBLE_INT: TK_PAIR_REF(redcoll_long_double_int)
    default: return 0;
    }
}
#undef TK_INT_REF
#undef TK_FLOAT_REF
#undef TK_PAIR_REF

/* Where a pair type keeps its index, and the bytes of its value; 0 if d is
   not a pair. */
static size_t tk_pair_layout(redcoll_dtype d, size_t *value_bytes) {
    switch (d) {
    case REDCOLL_FLOAT_INT: *value_bytes = sizeof(float); return offsetof(redcoll_float_int, i);
    case REDCOLL_DOUBLE_INT: *value_bytes = sizeof(double); return offsetof(redcoll_double_int, i);
    case REDCOLL_LONG_INT: *value_bytes = sizeof(long); return offsetof(redcoll_long_int, i);
    case REDCOLL_2INT: *value_bytes = sizeof(int); return offsetof(redcoll_2int, i);
    case REDCOLL_SHORT_INT: *value_bytes = sizeof(short); return offsetof(redcoll_short_int, i);
    case REDCOLL_LONG_DOUBLE_INT:
        *value_bytes = tk_value_bytes(REDCOLL_LONG_DOUBLE);
        return offsetof(redcoll_long_double_int, i);
    default: return 0;
    }
}

/* Same value bytes in element x and y? (Padding is not compared.) */
static int tk_same_elem(redcoll_dtype d, const unsigned char *x, const unsigned char *y) {
    size_t vb, io = tk_pair_layout(d, &vb);
    if (io) return memcmp(x, y, vb) == 0 && memcmp(x + io, y + io, sizeof(int)) == 0;
    return memcmp(x, y, tk_value_bytes(d)) == 0;
}

/* ---- the sweep -------------------------------------------------------------- */

#define TK_POOL 70000      /* elements per input pool: the largest count below */
#define TK_GUARD 80        /* guard bytes before and after out */
#define TK_MAXOFF 64

typedef struct tk_bufs {
    unsigned char *lo_in, *hi_in, *want;       /* pools: inputs and the reference */
    unsigned char *a, *b, *c;                  /* working buffers with room for offsets and guards */
} tk_bufs;

static const size_t tk_large[] = { 511, 512, 513, 1000, 4103, 65536 + 3, TK_POOL };
#define TK_NCOUNTS (301 + (int)(sizeof tk_large / sizeof tk_large[0]))

static size_t tk_count(int k) { return k <= 300 ? (size_t)k : tk_large[k - 301]; }

/* Byte offsets of (lo, hi, out) from 64-byte alignment: aligned, element
   aligned, and (where the type allows) byte misaligned. */
static const size_t tk_offsets[4][3] = { { 0, 0, 0 }, { 1, 3, 5 }, { 1, 2, 3 }, { 63, 17, 40 } };

/* Runs kernel k on one window and checks it against the reference. */
static void tk_case(redcoll__kernel k, int isa, redcoll_op_kind op, redcoll_dtype d,
                    tk_bufs *B, size_t start, size_t n, int off, int form) {
    size_t es = redcoll_dtype_size(d), bytes = n * es, i, o[3];
    int bytewise = off >= 2, j;
    unsigned char *lo, *hi, *out, *base[3];
    const unsigned char *lo_in = B->lo_in + start * es, *hi_in = B->hi_in + start * es;
    const unsigned char *want = B->want + start * es;
    int ok = 1;
    for (j = 0; j < 3; ++j) o[j] = bytewise ? tk_offsets[off][j] : tk_offsets[off][j] * es;
    if (bytewise && d >= REDCOLL_LONG_DOUBLE) return; /* these need their alignment */
    base[0] = B->a + TK_GUARD; base[1] = B->b + TK_GUARD; base[2] = B->c + TK_GUARD;
    lo = base[0] + o[0]; hi = base[1] + o[1];
    out = form == 0 ? lo : form == 1 ? hi : base[2] + o[2];
    for (j = 0; j < 3; ++j) memset(base[j] - TK_GUARD, 0xA5, 2 * TK_GUARD + TK_MAXOFF * 8 + bytes);
    memcpy(lo, lo_in, bytes);
    memcpy(hi, hi_in, bytes);
    k(lo, hi, out, n);
    for (i = 0; i < n && ok; ++i)
        if (!tk_same_elem(d, out + i * es, want + i * es)) {
            char got[40], exp[40];
            size_t b2;
            for (b2 = 0; b2 < es && b2 < 16; ++b2) {
                sprintf(got + 2 * b2, "%02x", out[i * es + b2]);
                sprintf(exp + 2 * b2, "%02x", want[i * es + b2]);
            }
            CHECK(0, "%s %s %s n=%zu offsets=%zu,%zu,%zu out=%s: element %zu is %s, want %s",
                  tk_isa_name(isa), redcoll_op_name(op), redcoll_dtype_name(d), n, o[0], o[1], o[2],
                  form == 0 ? "lo" : form == 1 ? "hi" : "third", i, got, exp);
            ok = 0;
        }
    if (ok) CHECK(1, "ok");
    /* the inputs that are not out are untouched, and so is every guard byte */
    if (form != 0) CHECK(memcmp(lo, lo_in, bytes) == 0, "%s %s %s n=%zu: lo changed",
                         tk_isa_name(isa), redcoll_op_name(op), redcoll_dtype_name(d), n);
    if (form != 1) CHECK(memcmp(hi, hi_in, bytes) == 0, "%s %s %s n=%zu: hi changed",
                         tk_isa_name(isa), redcoll_op_name(op), redcoll_dtype_name(d), n);
    {
        unsigned char *ob = form == 0 ? base[0] : form == 1 ? base[1] : base[2];
        size_t oo = form == 0 ? o[0] : form == 1 ? o[1] : o[2];
        int guards = 1;
        for (i = 0; i < TK_GUARD + oo; ++i) guards &= ob[(ptrdiff_t)i - TK_GUARD] == 0xA5;
        for (i = 0; i < TK_GUARD; ++i) guards &= out[bytes + i] == 0xA5;
        CHECK(guards, "%s %s %s n=%zu offsets=%zu,%zu,%zu: wrote outside out", tk_isa_name(isa),
              redcoll_op_name(op), redcoll_dtype_name(d), n, o[0], o[1], o[2]);
    }
}

/* Every level, count, offset and aliasing form of one (op, type). */
static void tk_sweep_one(redcoll_op_kind op, redcoll_dtype d, tk_bufs *B) {
    size_t es = redcoll_dtype_size(d), i;
    int isa, kc, off, form, defined;
    tk_fill(d, B->lo_in, TK_POOL);
    tk_fill(d, B->hi_in, TK_POOL);
    memset(B->want, 0, TK_POOL * es);
    defined = 1;
    for (i = 0; i < TK_POOL; ++i) {
        unsigned char *x = B->lo_in + i * es, *y = B->hi_in + i * es;
        if ((op == REDCOLL_OP_SUM || op == REDCOLL_OP_PROD) && tk_is_float(d) &&
            tk_float_is_nan(d, x) && tk_float_is_nan(d, y))
            memcpy(y, x, es); /* NaN op NaN: the payload is the implementation's choice */
        defined &= tk_ref_elem(op, d, x, y, B->want + i * es);
    }
    CHECK((redcoll__kernel_scalar(op, d) != NULL) == defined, "%s on %s: defined %d in the library",
          redcoll_op_name(op), redcoll_dtype_name(d), defined);
    if (!defined) return;
    CHECK(redcoll__kernel_for(op, d) != NULL, "%s on %s: no kernel", redcoll_op_name(op), redcoll_dtype_name(d));
    for (isa = 0; isa < REDCOLL__ISA_COUNT; ++isa) {
        redcoll__kernel k;
        if (!redcoll__isa_ok(isa)) continue;
        k = redcoll__kernel_isa(op, d, isa);
        CHECK(k != NULL, "%s %s %s: no kernel", tk_isa_name(isa), redcoll_op_name(op), redcoll_dtype_name(d));
        if (!k) continue;
        for (kc = 0; kc < TK_NCOUNTS; ++kc) {
            size_t n = tk_count(kc), start = (size_t)(kc * 131) % (TK_POOL - n + 1);
            for (off = 0; off < 4; ++off)
                for (form = 0; form < 3; ++form) {
                    if (n > 4096 && off % 2 == 1) continue; /* large: two offsets are enough */
                    tk_case(k, isa, op, d, B, start, n, off, form);
                }
        }
    }
}

static void tk_sweep(int first_dtype, int last_dtype) {
    tk_bufs B;
    size_t big = TK_POOL * sizeof(redcoll_long_double_int);
    size_t room = big + 2 * TK_GUARD + TK_MAXOFF * 8;
    int d, op;
    B.lo_in = (unsigned char *)malloc(big); B.hi_in = (unsigned char *)malloc(big);
    B.want = (unsigned char *)malloc(big);
    /* 64-byte aligned working buffers, so the offsets above are what they say */
    B.a = (unsigned char *)aligned_alloc(64, (room + 63) / 64 * 64 + 64);
    B.b = (unsigned char *)aligned_alloc(64, (room + 63) / 64 * 64 + 64);
    B.c = (unsigned char *)aligned_alloc(64, (room + 63) / 64 * 64 + 64);
    CHECK(B.lo_in && B.hi_in && B.want && B.a && B.b && B.c, "out of memory");
    if (B.lo_in && B.hi_in && B.want && B.a && B.b && B.c) {
        B.a += 64 - TK_GUARD % 64; B.b += 64 - TK_GUARD % 64; B.c += 64 - TK_GUARD % 64;
        for (d = first_dtype; d <= last_dtype; ++d)
            for (op = 0; op < REDCOLL_OP_KIND_COUNT; ++op)
                if (op != REDCOLL_OP_USER) tk_sweep_one((redcoll_op_kind)op, (redcoll_dtype)d, &B);
        B.a -= 64 - TK_GUARD % 64; B.b -= 64 - TK_GUARD % 64; B.c -= 64 - TK_GUARD % 64;
    }
    free(B.lo_in); free(B.hi_in); free(B.want); free(B.a); free(B.b); free(B.c);
}

static void test_kernels_integers(void) { tk_sweep(REDCOLL_INT8, REDCOLL_UINT64); }
static void test_kernels_floats(void) { tk_sweep(REDCOLL_FLOAT, REDCOLL_LONG_DOUBLE); }
static void test_kernels_pairs(void) { tk_sweep(REDCOLL_FLOAT_INT, REDCOLL_LONG_DOUBLE_INT); }

/* The selection: the widest level this CPU runs, and the scalar loop is level 0. */
static void test_kernels_dispatch(void) {
    int isa, best = 0;
    for (isa = 0; isa < REDCOLL__ISA_COUNT; ++isa)
        if (redcoll__isa_ok(isa)) best = isa;
    CHECK(redcoll__isa_ok(REDCOLL__ISA_SCALAR), "the scalar level always runs");
    CHECK(redcoll__kernel_for(REDCOLL_OP_SUM, REDCOLL_DOUBLE) ==
          redcoll__kernel_isa(REDCOLL_OP_SUM, REDCOLL_DOUBLE, best), "kernel_for takes level %s",
          tk_isa_name(best));
    CHECK(redcoll__kernel_isa(REDCOLL_OP_MAX, REDCOLL_INT32, REDCOLL__ISA_SCALAR) == redcoll__k_max_i32,
          "level 0 is the scalar loop");
    CHECK(redcoll__kernel_for(REDCOLL_OP_MINLOC, REDCOLL_DOUBLE_INT) == redcoll__k_minloc_di,
          "pairs stay scalar");
    CHECK(redcoll__kernel_for(REDCOLL_OP_BAND, REDCOLL_FLOAT) == NULL, "band on float is undefined");
    if (tf_verbose) printf("      kernels: level %s\n", tk_isa_name(best));
}

/* The float min/max rules by hand, at every level, in lanes and in the tail. */
static void test_kernels_float_minmax(void) {
    float lo[67], hi[67], out[67];
    int isa, i;
    for (isa = 0; isa < REDCOLL__ISA_COUNT; ++isa) {
        redcoll__kernel kmin, kmax;
        if (!redcoll__isa_ok(isa)) continue;
        kmin = redcoll__kernel_isa(REDCOLL_OP_MIN, REDCOLL_FLOAT, isa);
        kmax = redcoll__kernel_isa(REDCOLL_OP_MAX, REDCOLL_FLOAT, isa);
        for (i = 0; i < 67; ++i) {
            switch (i % 4) {
            case 0: lo[i] = NAN; hi[i] = 1.0f; break;    /* NaN in lo: lo stays */
            case 1: lo[i] = 1.0f; hi[i] = NAN; break;    /* NaN in hi: lo stays */
            case 2: lo[i] = 0.0f; hi[i] = -0.0f; break;  /* -0 == 0: lo stays */
            default: lo[i] = -INFINITY; hi[i] = INFINITY; break;
            }
        }
        kmin(lo, hi, out, 67);
        for (i = 0; i < 67; ++i) {
            int ok = i % 4 == 0 ? isnan(out[i]) : i % 4 == 1 ? out[i] == 1.0f
                   : i % 4 == 2 ? out[i] == 0.0f && !signbit(out[i]) : out[i] == -INFINITY;
            CHECK(ok, "%s min element %d: %g", tk_isa_name(isa), i, (double)out[i]);
        }
        kmax(lo, hi, out, 67);
        for (i = 0; i < 67; ++i) {
            int ok = i % 4 == 0 ? isnan(out[i]) : i % 4 == 1 ? out[i] == 1.0f
                   : i % 4 == 2 ? out[i] == 0.0f && !signbit(out[i]) : out[i] == INFINITY;
            CHECK(ok, "%s max element %d: %g", tk_isa_name(isa), i, (double)out[i]);
        }
    }
}

static void suite_kernels(void) {
    tf_test("kernels/dispatch", test_kernels_dispatch);
    tf_test("kernels/float min max rules", test_kernels_float_minmax);
    tf_test("kernels/bitwise integers", test_kernels_integers);
    tf_test("kernels/bitwise floats", test_kernels_floats);
    tf_test("kernels/bitwise pairs", test_kernels_pairs);
}
