/* REDCOLL_STATIC: every function is static to this file. */
#define REDCOLL_STATIC
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"

int redcoll_compile_static(void);
int redcoll_compile_static(void) {
    double x = 1, y = 2;
    return redcoll_reduce_local(&x, &y, 1, REDCOLL_DOUBLE, REDCOLL_SUM) == REDCOLL_OK;
}
