/* fresh_memory.h - the suites' allocator (include before redcoll.h).

   Fresh memory comes filled with 0xA5 (its first 256 KiB: enough to show any
   element, without paging in the large, lazily touched blocks of the scale
   tests), so a schedule that passes on bytes it never wrote - the padding of
   long double or of the pair types, say - fails every time instead of only
   when malloc happens to reuse dirty memory. */
#ifndef REDCOLL_TEST_FRESH_MEMORY_H
#define REDCOLL_TEST_FRESH_MEMORY_H

#include <stdlib.h>
#include <string.h>

static long rc_fresh_allocs; /* calls so far (the steady-state tests count them); threads
                                add to it at once, so atomically */

static void *rc_fresh_memory(size_t bytes) {
    void *p = malloc(bytes);
    __atomic_fetch_add(&rc_fresh_allocs, 1, __ATOMIC_RELAXED);
    if (p) memset(p, 0xA5, bytes < 262144 ? bytes : 262144);
    return p;
}
#define REDCOLL_MALLOC(bytes) rc_fresh_memory(bytes)
#define REDCOLL_FREE(ptr) free(ptr)

#endif
