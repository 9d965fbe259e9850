/* nbthreads.c - an unmodified MPI program for the redcoll drop-in
   (test/pmpi/run.sh): non-blocking collectives from two threads at once
   (MPI_THREAD_MULTIPLE), each thread on a communicator of its own.

   Includes only mpi.h. Each thread starts MPI_Iallreduce on its duplicate
   of MPI_COMM_WORLD and completes it with MPI_Wait or a loop of MPI_Test,
   ITERS times; while one thread waits for its collective, the other's
   completion calls must go on (a waiting thread that kept every other one
   out would hold up the peer process's matching thread, and both processes
   would wait forever). Sums checked in closed form; rank 0 prints one line
   per thread, which run.sh compares with and without LD_PRELOAD. */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>

#define ITERS 400

static MPI_Comm g_comm[2];
static int g_wrong[2];

static void *run(void *arg) {
    int t = (int)(long)arg, i, r, p;
    MPI_Comm_rank(g_comm[t], &r);
    MPI_Comm_size(g_comm[t], &p);
    for (i = 0; i < ITERS; ++i) {
        int x = r + i + t, y = 0, flag = 0;
        MPI_Request q;
        MPI_Iallreduce(&x, &y, 1, MPI_INT, MPI_SUM, g_comm[t], &q);
        if (i % 2) MPI_Wait(&q, MPI_STATUS_IGNORE);
        else while (!flag) MPI_Test(&q, &flag, MPI_STATUS_IGNORE);
        g_wrong[t] += y != p * (p - 1) / 2 + p * (i + t);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided, r, k;
    pthread_t th[2];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (r == 0) printf("MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 0;
    }
    for (k = 0; k < 2; ++k) {
        MPI_Comm_dup(MPI_COMM_WORLD, &g_comm[k]);
        MPI_Barrier(g_comm[k]); /* set up before the threads (the drop-in does it at the first collective) */
    }
    for (k = 0; k < 2; ++k) pthread_create(&th[k], NULL, run, (void *)(long)k);
    for (k = 0; k < 2; ++k) pthread_join(th[k], NULL);
    MPI_Allreduce(MPI_IN_PLACE, g_wrong, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (k = 0; k < 2 && r == 0; ++k)
        printf("thread %d: %d MPI_Iallreduce on its own communicator, MPI_Wait / MPI_Test: %s\n", k, ITERS,
               g_wrong[k] ? "WRONG" : "ok");
    for (k = 0; k < 2; ++k) MPI_Comm_free(&g_comm[k]);
    MPI_Finalize();
    return 0;
}
