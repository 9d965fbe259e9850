/* kernels_ref.c - what a compiler makes of the reduction loop at its best:
   one restrict loop per (op, type, aliasing form), built -O3 -march=native.
   bench/kernels.c times the library's kernels against these. */
#include <stdint.h>
#include "redcoll.h"
#include "bench/kernels_ref.h"

/* Three loops per (op, type), each with restrict on what really is
   distinct, and the common signature around each. STEP computes r from a
   and b; integer arithmetic in the unsigned type W, as any UB-free
   reduction must. */
#define BR_FORMS(OP, SUF, T, WIDE, STEP)                                                       \
    static void br_##OP##_##SUF##_lo(T *restrict lo, const T *restrict hi, size_t n) {         \
        typedef WIDE W; size_t i;                                                              \
        for (i = 0; i < n; ++i) { T a = lo[i], b = hi[i], r; STEP; lo[i] = r; }                \
    }                                                                                          \
    static void br_##OP##_##SUF##_hi(const T *restrict lo, T *restrict hi, size_t n) {         \
        typedef WIDE W; size_t i;                                                              \
        for (i = 0; i < n; ++i) { T a = lo[i], b = hi[i], r; STEP; hi[i] = r; }                \
    }                                                                                          \
    static void br_##OP##_##SUF##_3(const T *restrict lo, const T *restrict hi,                \
                                    T *restrict out, size_t n) {                               \
        typedef WIDE W; size_t i;                                                              \
        for (i = 0; i < n; ++i) { T a = lo[i], b = hi[i], r; STEP; out[i] = r; }               \
    }                                                                                          \
    static void bw_##OP##_##SUF##_lo(const void *lo, const void *hi, void *out, size_t n) {    \
        (void)lo; br_##OP##_##SUF##_lo((T *)out, (const T *)hi, n);                            \
    }                                                                                          \
    static void bw_##OP##_##SUF##_hi(const void *lo, const void *hi, void *out, size_t n) {    \
        (void)hi; br_##OP##_##SUF##_hi((const T *)lo, (T *)out, n);                            \
    }                                                                                          \
    static void bw_##OP##_##SUF##_3(const void *lo, const void *hi, void *out, size_t n) {     \
        br_##OP##_##SUF##_3((const T *)lo, (const T *)hi, (T *)out, n);                        \
    }
#define BR_LOOPS(OP, SUF, T, WIDE, EXPR) BR_FORMS(OP, SUF, T, WIDE, (void)sizeof(W); r = (T)(EXPR))

/* MINLOC/MAXLOC as MPI defines them: the better value wins, a tie keeps the
   smaller index. */
#define BR_LOC(OP, SUF, T, WIDE, BETTER)                                                       \
    BR_FORMS(OP, SUF, T, WIDE, (void)sizeof(W); r = a;                                         \
             if (b.v BETTER a.v) r = b; else if (!(a.v BETTER b.v) && b.i < a.i) r.i = b.i)

#define BR_INT(X, OP, EXPR)                                                                    \
    X(OP, i8, int8_t, unsigned, EXPR) X(OP, u8, uint8_t, unsigned, EXPR)                       \
    X(OP, i16, int16_t, unsigned, EXPR) X(OP, u16, uint16_t, unsigned, EXPR)                   \
    X(OP, i32, int32_t, uint32_t, EXPR) X(OP, u32, uint32_t, uint32_t, EXPR)                   \
    X(OP, i64, int64_t, uint64_t, EXPR) X(OP, u64, uint64_t, uint64_t, EXPR)
#define BR_FLT(X, OP, EXPR) X(OP, f32, float, float, EXPR) X(OP, f64, double, double, EXPR)
#define BR_PAIR(X, OP, BETTER)                                                                 \
    X(OP, fi, redcoll_float_int, int, BETTER) X(OP, di, redcoll_double_int, int, BETTER)           \
    X(OP, li, redcoll_long_int, int, BETTER) X(OP, ii, redcoll_2int, int, BETTER)                  \
    X(OP, si, redcoll_short_int, int, BETTER) X(OP, ldi, redcoll_long_double_int, int, BETTER)

BR_INT(BR_LOOPS, sum, (W)a + (W)b)  BR_FLT(BR_LOOPS, sum, a + b)
BR_INT(BR_LOOPS, prod, (W)a * (W)b) BR_FLT(BR_LOOPS, prod, a * b)
BR_INT(BR_LOOPS, min, b < a ? b : a) BR_FLT(BR_LOOPS, min, b < a ? b : a)
BR_INT(BR_LOOPS, max, b > a ? b : a) BR_FLT(BR_LOOPS, max, b > a ? b : a)
BR_INT(BR_LOOPS, land, a && b)
BR_INT(BR_LOOPS, lor, a || b)
BR_INT(BR_LOOPS, lxor, !a != !b)
BR_INT(BR_LOOPS, band, (W)a & (W)b)
BR_INT(BR_LOOPS, bor, (W)a | (W)b)
BR_INT(BR_LOOPS, bxor, (W)a ^ (W)b)
BR_PAIR(BR_LOC, minloc, <)
BR_PAIR(BR_LOC, maxloc, >)

typedef struct br_entry { int op, dtype; bk_kernel fn[BK_FORMS]; } br_entry;

#define BR_ROW(OP, SUF, OPK, DT) { REDCOLL_OP_##OPK, REDCOLL_##DT, { bw_##OP##_##SUF##_lo, bw_##OP##_##SUF##_hi, bw_##OP##_##SUF##_3 } },
#define BR_INT_ROWS(OP, OPK)                                                                   \
    BR_ROW(OP, i8, OPK, INT8) BR_ROW(OP, u8, OPK, UINT8) BR_ROW(OP, i16, OPK, INT16)           \
    BR_ROW(OP, u16, OPK, UINT16) BR_ROW(OP, i32, OPK, INT32) BR_ROW(OP, u32, OPK, UINT32)      \
    BR_ROW(OP, i64, OPK, INT64) BR_ROW(OP, u64, OPK, UINT64)
#define BR_FLT_ROWS(OP, OPK) BR_ROW(OP, f32, OPK, FLOAT) BR_ROW(OP, f64, OPK, DOUBLE)
#define BR_PAIR_ROWS(OP, OPK)                                                                  \
    BR_ROW(OP, fi, OPK, FLOAT_INT) BR_ROW(OP, di, OPK, DOUBLE_INT) BR_ROW(OP, li, OPK, LONG_INT) \
    BR_ROW(OP, ii, OPK, 2INT) BR_ROW(OP, si, OPK, SHORT_INT) BR_ROW(OP, ldi, OPK, LONG_DOUBLE_INT)

static const br_entry br_table[] = {
    BR_INT_ROWS(sum, SUM) BR_FLT_ROWS(sum, SUM) BR_INT_ROWS(prod, PROD) BR_FLT_ROWS(prod, PROD)
    BR_INT_ROWS(min, MIN) BR_FLT_ROWS(min, MIN) BR_INT_ROWS(max, MAX) BR_FLT_ROWS(max, MAX)
    BR_INT_ROWS(land, LAND) BR_INT_ROWS(lor, LOR) BR_INT_ROWS(lxor, LXOR)
    BR_INT_ROWS(band, BAND) BR_INT_ROWS(bor, BOR) BR_INT_ROWS(bxor, BXOR)
    BR_PAIR_ROWS(minloc, MINLOC) BR_PAIR_ROWS(maxloc, MAXLOC)
};

bk_kernel bk_reference(int op, int dtype, int form) {
    size_t i;
    if (form < 0 || form >= BK_FORMS) return NULL;
    for (i = 0; i < sizeof br_table / sizeof br_table[0]; ++i)
        if (br_table[i].op == op && br_table[i].dtype == dtype) return br_table[i].fn[form];
    return NULL;
}
