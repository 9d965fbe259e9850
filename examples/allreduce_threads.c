/* allreduce_threads.c - what it shows: an allreduce across POSIX threads of
   one process with the shared-memory transport (transports/redcoll_shm.h).
   redcoll_shm_run starts one thread per rank and hands each its transport;
   every thread contributes a vector and receives the element-wise sum, as
   MPI_Allreduce would give every process. Then the same with threads you
   already own, through redcoll_shm_team_create / redcoll_shm_transport.

   Build: cc -std=c11 -I.. allreduce_threads.c -o allreduce_threads -lpthread
   Run:   ./allreduce_threads [threads]                                      */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_shm.h"

#include <stdio.h>
#include <stdlib.h>

#define N 100000 /* doubles per thread */

/* Runs on every thread: rank r contributes x[i] = r + i, so the sum over p
   ranks is p(p-1)/2 + p i, exact in double. */
static redcoll_result work(const redcoll_transport *t, void *arg) {
    double *x = (double *)malloc(N * sizeof *x), *sum = (double *)malloc(N * sizeof *sum);
    int p = t->size, i, wrong = 0;
    redcoll_result r;
    (void)arg;
    if (!x || !sum) { free(x); free(sum); return REDCOLL_ERR_OUT_OF_MEMORY; }
    for (i = 0; i < N; ++i) x[i] = t->rank + i;
    r = redcoll_allreduce(t, x, sum, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    for (i = 0; r == REDCOLL_OK && i < N; ++i)
        wrong += sum[i] != (double)p * (p - 1) / 2 + (double)p * i;
    if (t->rank == 0)
        printf("rank 0 of %d: sum[1] = %g, %d wrong elements (%s)\n", p, sum[1], wrong,
               redcoll_result_string(r));
    free(x);
    free(sum);
    return r != REDCOLL_OK ? r : wrong ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK;
}

/* The same collective from threads the application started itself. */
typedef struct job { redcoll_shm_team *team; int rank; redcoll_result res; } job;

static void *own_thread(void *arg) {
    job *j = (job *)arg;
    j->res = work(redcoll_shm_transport(j->team, j->rank), NULL);
    return NULL;
}

int main(int argc, char **argv) {
    int p = argc > 1 ? atoi(argv[1]) : 4, i, bad = 0;
    redcoll_shm_team *team;
    pthread_t *th;
    job *jobs;
    redcoll_result r;
    if (p < 1) { fprintf(stderr, "usage: %s [threads >= 1]\n", argv[0]); return 2; }

    /* 1. the convenience: start p threads, run work on each, join */
    r = redcoll_shm_run(p, work, NULL, NULL);
    printf("redcoll_shm_run: %s\n", redcoll_result_string(r));
    bad |= r != REDCOLL_OK;

    /* 2. your own threads (a pool, OpenMP): one transport per rank */
    if (redcoll_shm_team_create(NULL, p, &team) != REDCOLL_OK) return 1;
    th = (pthread_t *)malloc(sizeof *th * (size_t)p);
    jobs = (job *)malloc(sizeof *jobs * (size_t)p);
    if (!th || !jobs) return 1;
    for (i = 0; i < p; ++i) {
        jobs[i].team = team; jobs[i].rank = i;
        if (pthread_create(&th[i], NULL, own_thread, &jobs[i]) != 0) return 1;
    }
    for (i = 0; i < p; ++i) { pthread_join(th[i], NULL); bad |= jobs[i].res != REDCOLL_OK; }
    printf("own threads: %s\n", bad ? "FAILED" : "ok");
    redcoll_shm_team_destroy(team);
    free(th);
    free(jobs);
    return bad;
}
