/* threads.c - an unmodified MPI program for the redcoll drop-in (test/pmpi/run.sh):
   collectives from several threads.

   `threads multiple`: MPI_THREAD_MULTIPLE, three threads, each with its own
   duplicate of MPI_COMM_WORLD, run collectives at the same time: the first
   use of each communicator (where the shim creates its transport) and of a
   shared derived type and user op happen concurrently.
   `threads serialized`: MPI_THREAD_SERIALIZED, three threads take strict
   turns on MPI_COMM_WORLD.
   Every rank checks every result; rank 0 prints one line per thread with a
   hash of its results, then "N wrong". Includes only mpi.h. */
#include <mpi.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 3
#define ITERS 25

static int W, P, g_serialized;
static MPI_Datatype g_pair; /* 2 contiguous ints */
static MPI_Op g_pairsum;
static MPI_Comm g_comm[THREADS];
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_turn; /* serialized: the thread whose turn it is */

typedef struct job { int t, wrong; uint32_t hash; } job;

static int32_t val(int r, long i, int t) { return (int32_t)(((long)r * 131 + i * 7919 + t * 31) % 1000) - 500; }

static uint32_t fnv(uint32_t h, const void *p, size_t n) {
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; ++i) h = (h ^ b[i]) * 16777619u;
    return h;
}

static void pairsum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    int k;
    (void)dt;
    for (k = 0; k < 2 * *len; ++k) ((int *)inout)[k] += ((const int *)in)[k];
}

static void turn_wait(int t) {
    pthread_mutex_lock(&g_mu);
    while (g_turn != t) pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
}

static void turn_pass(void) {
    pthread_mutex_lock(&g_mu);
    g_turn = (g_turn + 1) % THREADS;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
}

static void *work(void *arg) {
    job *j = (job *)arg;
    MPI_Comm comm = g_serialized ? MPI_COMM_WORLD : g_comm[j->t];
    int it, i, q;
    j->hash = 2166136261u;
    for (it = 0; it < ITERS; ++it) {
        int n = 1 + (it * 7 + j->t * 3) % 40, root = it % P;
        int32_t in[80], out[80], *all = (int32_t *)malloc(sizeof(int32_t) * 40 * (size_t)P);
        if (g_serialized) turn_wait(j->t);
        for (i = 0; i < 2 * n; ++i) in[i] = val(W, i, j->t + it);
        MPI_Allreduce(in, out, n, g_pair, g_pairsum, comm);
        for (i = 0; i < 2 * n; ++i) {
            int32_t s = 0;
            for (q = 0; q < P; ++q) s += val(q, i, j->t + it);
            j->wrong += out[i] != s;
        }
        j->hash = fnv(j->hash, out, sizeof(int32_t) * 2 * (size_t)n);
        if (W == root) memcpy(out, in, sizeof(int32_t) * (size_t)n);
        MPI_Bcast(out, n, MPI_INT32_T, root, comm);
        for (i = 0; i < n; ++i) j->wrong += out[i] != val(root, i, j->t + it);
        MPI_Allgather(in, n, MPI_INT32_T, all, n, MPI_INT32_T, comm);
        for (q = 0; q < P; ++q)
            for (i = 0; i < n; ++i) j->wrong += all[(long)q * n + i] != val(q, i, j->t + it);
        j->hash = fnv(j->hash, all, sizeof(int32_t) * (size_t)n * (size_t)P);
        MPI_Barrier(comm);
        free(all);
        if (g_serialized) turn_pass();
    }
    return NULL;
}

int main(int argc, char **argv) {
    int want, provided, t, wrong = 0, total = 0;
    pthread_t th[THREADS];
    job jobs[THREADS];
    g_serialized = argc > 1 && strcmp(argv[1], "serialized") == 0;
    want = g_serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &W);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (provided < want) {
        if (W == 0) printf("threads: thread level %d not provided (got %d)\n0 wrong\n", want, provided);
        MPI_Finalize();
        return 0;
    }
    MPI_Type_contiguous(2, MPI_INT, &g_pair);
    MPI_Type_commit(&g_pair);
    MPI_Op_create(pairsum, 1, &g_pairsum);
    for (t = 0; t < THREADS; ++t) MPI_Comm_dup(MPI_COMM_WORLD, &g_comm[t]);
    for (t = 0; t < THREADS; ++t) {
        memset(&jobs[t], 0, sizeof jobs[t]);
        jobs[t].t = t;
        pthread_create(&th[t], NULL, work, &jobs[t]);
    }
    for (t = 0; t < THREADS; ++t) {
        pthread_join(th[t], NULL);
        wrong += jobs[t].wrong;
    }
    MPI_Reduce(&wrong, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    for (t = 0; t < THREADS && W == 0; ++t)
        printf("thread %d (%s): %d iterations, hash %08x\n", t, g_serialized ? "serialized" : "multiple",
               ITERS, (unsigned)jobs[t].hash);
    if (W == 0) printf("%d wrong\n", total);
    for (t = 0; t < THREADS; ++t) MPI_Comm_free(&g_comm[t]);
    MPI_Op_free(&g_pairsum);
    MPI_Type_free(&g_pair);
    MPI_Finalize();
    return total ? 1 : 0;
}
