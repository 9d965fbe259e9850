/* The header compiles as C11 with every warning as an error, declarations and implementation. */
#include "redcoll.h"
#include "redcoll.h" /* include-once */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "transports/redcoll_shm.h"
#include "transports/redcoll_shm.h" /* include-once */
#include "transports/redcoll_pshm.h"
#include "transports/redcoll_pshm.h" /* include-once */

int redcoll_compile_c11(void);
int redcoll_compile_c11(void) { return (int)redcoll_dtype_size(REDCOLL_DOUBLE); }
