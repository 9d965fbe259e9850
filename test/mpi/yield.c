/* yield.c - test-only LD_PRELOAD for the MPI suites: an MPI rank that polls
   and finds nothing gives up the CPU.

   MPICH (Debian's ch4:ucx) waits by polling, never by sleeping, and
   MPIR_CVAR_POLLS_BEFORE_YIELD is read only by ch3. With more ranks than
   cores (-n 3..5 on the 2-core CI machine) a rank that waits for a message
   spins until the timer tick (4 ms at HZ=250) preempts it and the sender
   runs: every message costs a tick, and the MPI suites spent minutes so
   (200 allreduces of one double at -n 3: 1.4 s; with this: 0.02 s).
   MPICH's progress loop calls ucp_worker_progress (UCX, through the PLT)
   on every pass whatever carried the message, so this wraps it: when UCX
   made no progress, the rank first yields (sched_yield: a runnable rank on
   this core goes first), and after YIELD_POLLS idle passes in a row sleeps
   the shortest sleep (the timer slack, about 50 us), which takes it off the
   run queue so both cores run ranks that have work. Measured on test_mpi
   under load 5-8: -n 5 80 s as is, 14 s yielding only, 5-6 s yielding 4 or
   16 times then sleeping; -n 2 unchanged (1.1-1.2 s). Results are
   unchanged, only who waits where. An MPI that never calls
   ucp_worker_progress (another device) is simply not affected.

   Built as BUILD/mpi_yield.so (make test); the suites pass it with
   mpiexec -genv LD_PRELOAD. Not a benchmark setting: it adds a system call
   to every idle poll. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#define YIELD_POLLS 8

typedef unsigned (*yield_progress_fn)(void *worker);

static yield_progress_fn yield_next;

/* Resolved before main (and before any thread of the program exists). */
__attribute__((constructor)) static void yield_init(void) {
    *(void **)&yield_next = dlsym(RTLD_NEXT, "ucp_worker_progress");
}

unsigned ucp_worker_progress(void *worker);
unsigned ucp_worker_progress(void *worker) {
    static _Thread_local int idle; /* MPI_THREAD_MULTIPLE: per thread */
    unsigned events = yield_next ? yield_next(worker) : 0;
    if (events) {
        idle = 0;
    } else if (++idle <= YIELD_POLLS) {
        sched_yield();
    } else {
        struct timespec ts = { 0, 1000 };
        nanosleep(&ts, NULL);
    }
    return events;
}
