/* allreduce_processes.c - what it shows: an allreduce across separate
   processes of one machine with the process-shared-memory transport
   (transports/redcoll_pshm.h), no MPI. The parent makes an anonymous
   segment for p ranks and forks p workers; each attaches as its rank,
   contributes a vector and receives the element-wise sum. The second
   vector lives inside the segment (redcoll_pshm_alloc), so the peers
   reduce it where it is, without a copy. Then the same job started the way
   an unrelated launcher would: each process opens the segment by name.

   Build: cc -std=c11 -I.. allreduce_processes.c -o allreduce_processes
   Run:   ./allreduce_processes [processes]                                 */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_pshm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N 100000 /* doubles per rank */

/* Rank r contributes x[i] = r + i, so the sum over p ranks is
   p(p-1)/2 + p i, exact in double. Returns the wrong elements. */
static int check(const double *sum, int p) {
    int i, wrong = 0;
    for (i = 0; i < N; ++i) wrong += sum[i] != (double)p * (p - 1) / 2 + (double)p * i;
    return wrong;
}

/* One worker, attached to its job h. Returns its exit status. */
static int worker(redcoll_pshm *h) {
    const redcoll_transport *t = redcoll_pshm_transport(h);
    double *x, *sum, *shared;
    redcoll_result r;
    int i, wrong = 0, rank = t->rank;
    x = (double *)malloc(N * sizeof *x);
    sum = (double *)malloc(N * sizeof *sum);
    shared = (double *)redcoll_pshm_alloc(h, N * sizeof *shared); /* in the segment */
    if (!x || !sum || !shared) return 1;
    for (i = 0; i < N; ++i) x[i] = shared[i] = rank + i;

    /* private buffers: the bytes travel by single copy or through cells */
    r = redcoll_allreduce(t, x, sum, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    if (r == REDCOLL_OK) wrong += check(sum, t->size);
    /* a vector in the segment, in place: peers reduce straight from it */
    if (r == REDCOLL_OK) r = redcoll_allreduce(t, REDCOLL_IN_PLACE, shared, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL);
    if (r == REDCOLL_OK) wrong += check(shared, t->size);
    if (rank == 0)
        printf("rank 0 of %d processes: sum[1] = %g, %d wrong elements (%s)\n", t->size, sum[1], wrong,
               redcoll_result_string(r));
    redcoll_pshm_free(h, shared);
    free(x);
    free(sum);
    redcoll_pshm_destroy(h); /* leave: the peers do not count this rank dead */
    return r != REDCOLL_OK || wrong;
}

/* Forks p children running `child(arg, rank)`; 0 if every one exited 0. */
static int fork_all(int p, int (*child)(void *, int), void *arg) {
    int i, bad = 0, st;
    for (i = 0; i < p; ++i) {
        pid_t pid = fork();
        if (pid < 0) { perror("fork"); return 1; }
        if (pid == 0) { int rc = child(arg, i); fflush(stdout); _exit(rc); }
    }
    for (i = 0; i < p; ++i) {
        if (wait(&st) < 0) return 1;
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}

/* A forked child: attaches to the segment its parent made, as `rank`. */
static int forked_worker(void *arg, int rank) {
    redcoll_pshm *h = (redcoll_pshm *)arg;
    redcoll_result r = redcoll_pshm_attach(h, rank);
    if (r != REDCOLL_OK) {
        fprintf(stderr, "rank %d: attach: %s %s\n", rank, redcoll_result_string(r), redcoll_pshm_last_error());
        return 1;
    }
    return worker(h);
}

/* A process started on its own: it knows the job's name, size and its rank. */
static int named_worker(void *arg, int rank) {
    const int *p = (const int *)arg;
    redcoll_pshm_config cfg;
    redcoll_pshm *h;
    char name[64];
    redcoll_result r;
    memset(&cfg, 0, sizeof cfg);
    cfg.arena_bytes = 2 * N * sizeof(double); /* room for the vector kept in the segment */
    snprintf(name, sizeof name, "example-%d", (int)getppid()); /* what the launcher would agree on */
    if ((r = redcoll_pshm_open(&h, name, *p, rank, &cfg)) != REDCOLL_OK) {
        fprintf(stderr, "rank %d: open: %s %s\n", rank, redcoll_result_string(r), redcoll_pshm_last_error());
        return 1;
    }
    return worker(h); /* open has attached */
}

int main(int argc, char **argv) {
    int p = argc > 1 ? atoi(argv[1]) : 4, bad;
    redcoll_pshm_config cfg;
    redcoll_pshm *h;
    redcoll_result r;
    if (p < 1) { fprintf(stderr, "usage: %s [processes >= 1]\n", argv[0]); return 2; }

    /* 1. forked workers on an anonymous segment */
    memset(&cfg, 0, sizeof cfg);
    cfg.arena_bytes = 2 * N * sizeof(double);
    if ((r = redcoll_pshm_create(&cfg, p, &h)) != REDCOLL_OK) {
        fprintf(stderr, "create: %s %s\n", redcoll_result_string(r), redcoll_pshm_last_error());
        return 1;
    }
    fflush(stdout);
    bad = fork_all(p, forked_worker, h);
    redcoll_pshm_destroy(h); /* the parent is not a rank: it drops its view */
    printf("forked workers: %s\n", bad ? "FAILED" : "ok");

    /* 2. processes that agree on a name (as a launcher would start them) */
    fflush(stdout);
    r = fork_all(p, named_worker, &p) ? REDCOLL_ERR_TRANSPORT : REDCOLL_OK;
    printf("by name: %s\n", r == REDCOLL_OK ? "ok" : "FAILED");
    return bad || r != REDCOLL_OK;
}
