/* The configuration macros: every memory routine and the allocator can be
   replaced (static.c compiles this with REDCOLL_STATIC). Compiled with
   -DREDCOLL_TEST_HALF_ALLOC=1 (only REDCOLL_MALLOC) or 2 (only REDCOLL_FREE)
   it must NOT compile: a half-configured allocator is an #error. */
#include <stdlib.h>
#include <string.h>

static size_t redcoll_compile_bytes; /* what the replaced routines moved */
#define REDCOLL_MEMCPY(d, s, n)  (redcoll_compile_bytes += (n), memcpy(d, s, n))
#define REDCOLL_MEMMOVE(d, s, n) (redcoll_compile_bytes += (n), memmove(d, s, n))
#define REDCOLL_MEMSET(d, b, n)  (redcoll_compile_bytes += (n), memset(d, b, n))
#if !defined(REDCOLL_TEST_HALF_ALLOC) || REDCOLL_TEST_HALF_ALLOC == 1
#define REDCOLL_MALLOC(n) malloc(n)
#endif
#if !defined(REDCOLL_TEST_HALF_ALLOC) || REDCOLL_TEST_HALF_ALLOC == 2
#define REDCOLL_FREE(p) free(p)
#endif
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"

size_t redcoll_compile_config(void);
size_t redcoll_compile_config(void) { return redcoll_compile_bytes; }
