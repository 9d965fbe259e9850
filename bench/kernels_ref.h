/* kernels_ref.h - the reference the kernel benchmark measures against: plain
   `restrict` loops in their own translation unit (bench/kernels_ref.c), built
   -O3 -march=native by `make bench-kernels`. */
#ifndef REDCOLL_BENCH_KERNELS_REF_H
#define REDCOLL_BENCH_KERNELS_REF_H
#include <stddef.h>

typedef void (*bk_kernel)(const void *lo, const void *hi, void *out, size_t n);

/* Aliasing forms: out is lo, out is hi, out is a third buffer. */
enum { BK_OUT_LO, BK_OUT_HI, BK_OUT_THIRD, BK_FORMS };

/* out = lo op hi for (op, dtype) in `form`, or NULL. op and dtype are
   redcoll_op_kind and redcoll_dtype values. */
bk_kernel bk_reference(int op, int dtype, int form);
#endif
