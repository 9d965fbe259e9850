// The header compiles as C++ (declarations in extern "C", implementation too).
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "transports/redcoll_shm.h"
#include "transports/redcoll_pshm.h"

int redcoll_compile_cpp();
int redcoll_compile_cpp() { return static_cast<int>(redcoll_dtype_size(REDCOLL_FLOAT)); }
