/* disagree.c - an MPI program whose ranks disagree about a collective call
   (test/pmpi/run.sh, with and without the redcoll drop-in).

   Includes only mpi.h. Each case is COLL:KIND: the last rank ("odd") makes
   the call COLL differently from the others, as KIND says:
     count    another count (allgatherv, reduce_scatter: its counts array)
     root     root 1 where the others say 0 (reduce, bcast, gather, scatter)
     op       MPI_MAX where the others use MPI_SUM (the reductions)
     dtype    MPI_FLOAT where the others use MPI_INT (same size)
     inplace  MPI_IN_PLACE on the odd rank only (where every rank or none must)
     skip     the odd rank skips COLL; then every rank calls MPI_Barrier
              (COLL barrier: MPI_Bcast)
     other    the odd rank calls MPI_Bcast instead (COLL bcast: MPI_Allreduce)
     none     every rank agrees (the control)
   The program goes on after the mistake: while its calls return
   MPI_SUCCESS, the rank calls MPI_Barrier twice on the same communicator
   (where a rank that could not see the mistake in its own call learns of
   it: in the first barrier, or in the second when its peer found the
   mistake only after this rank's first barrier was done). A case that has
   not ended after 10 s ends the program with "CASE rank R: no end after
   10 s" on stderr and status 3.
   Each case runs on a communicator of its own (a duplicate of
   MPI_COMM_WORLD, kept until the end so that no later case meets its
   leftover messages), then every rank waits in MPI_Barrier on
   MPI_COMM_WORLD.

   Usage: disagree [-r] CASE...    (CASE: COLL:KIND, or `all` for every
   case that applies). With -r the case communicators return errors
   (MPI_ERRORS_RETURN) and every rank prints one line per case:
       CASE rank R: ok
       CASE rank R: error CLASS: the error string
       CASE rank R: error in a later call CLASS: the error string
   Without -r they keep MPI_ERRORS_ARE_FATAL: the first error ends the job
   with MPI's message (and the exit status). `disagree -l` lists the cases. */
#define _POSIX_C_SOURCE 200809L /* alarm */
#include <mpi.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { N = 4 }; /* elements per rank (per block for the block collectives) */

static const char *const colls[] = { "allreduce", "reduce", "reduce_scatter", "reduce_scatter_block",
                                     "allgather", "allgatherv", "bcast", "alltoall", "gather",
                                     "scatter", "barrier" };
enum { C_ALLREDUCE, C_REDUCE, C_REDUCE_SCATTER, C_REDUCE_SCATTER_BLOCK, C_ALLGATHER, C_ALLGATHERV,
       C_BCAST, C_ALLTOALL, C_GATHER, C_SCATTER, C_BARRIER, C_COUNT };
static const char *const kinds[] = { "count", "root", "op", "dtype", "inplace", "skip", "other", "none" };
enum { K_COUNT, K_ROOT, K_OP, K_DTYPE, K_INPLACE, K_SKIP, K_OTHER, K_NONE, K_KINDS };

static int R, P;
static char g_case[64]; /* the case running, for the watchdog */

/* A case that has not ended after 10 s (alarm) ends the program: the
   caller's test fails on it. */
static void watchdog(int sig) {
    static const char msg[] = ": no end after 10 s\n";
    (void)sig;
    if (write(2, g_case, strlen(g_case)) < 0 || write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(3);
}

static int applies(int c, int k) {
    switch (k) {
    case K_COUNT: case K_DTYPE: return c != C_BARRIER;
    case K_ROOT: return c == C_REDUCE || c == C_BCAST || c == C_GATHER || c == C_SCATTER;
    case K_OP: return c <= C_REDUCE_SCATTER_BLOCK;
    case K_INPLACE: return c == C_ALLREDUCE || c == C_REDUCE_SCATTER || c == C_REDUCE_SCATTER_BLOCK ||
                           c == C_ALLGATHER || c == C_ALLGATHERV || c == C_ALLTOALL;
    default: return 1;
    }
}

/* One collective as this rank makes it: `odd` says whether it is the rank
   that disagrees (in the way `k` says). Returns the first MPI error. */
static int call(int c, int k, int odd, MPI_Comm comm) {
    static int in[64], out[64], counts[16], displs[16];
    int n = N + (odd && k == K_COUNT), root = odd && k == K_ROOT ? 1 : 0, i, rc;
    MPI_Datatype t = odd && k == K_DTYPE ? MPI_FLOAT : MPI_INT;
    MPI_Op op = odd && k == K_OP ? MPI_MAX : MPI_SUM;
    const void *s = odd && k == K_INPLACE ? MPI_IN_PLACE : (const void *)in;
    for (i = 0; i < 64; ++i) { in[i] = R * 100 + i; out[i] = in[i]; }
    for (i = 0; i < P; ++i) { counts[i] = N; displs[i] = i * N; }
    if (odd && k == K_COUNT) counts[P - 1] = N + 1;
    if (odd && k == K_SKIP) {
        if (c == C_BARRIER) return MPI_Bcast(out, N, MPI_INT, 0, comm);
        return MPI_Barrier(comm);
    }
    if (odd && k == K_OTHER)
        return c == C_BCAST ? MPI_Allreduce(s, out, n, t, op, comm) : MPI_Bcast(out, n, t, root, comm);
    switch (c) {
    case C_ALLREDUCE: rc = MPI_Allreduce(s, out, n, t, op, comm); break;
    case C_REDUCE: rc = MPI_Reduce(in, out, n, t, op, root, comm); break;
    case C_REDUCE_SCATTER: rc = MPI_Reduce_scatter(s, out, counts, t, op, comm); break;
    case C_REDUCE_SCATTER_BLOCK: rc = MPI_Reduce_scatter_block(s, out, n, t, op, comm); break;
    case C_ALLGATHER:
        if (s == MPI_IN_PLACE) rc = MPI_Allgather(s, 0, t, out, n, t, comm);
        else rc = MPI_Allgather(in, n, t, out, n, t, comm);
        break;
    case C_ALLGATHERV:
        if (s == MPI_IN_PLACE) rc = MPI_Allgatherv(s, 0, t, out, counts, displs, t, comm);
        else rc = MPI_Allgatherv(in, counts[R], t, out, counts, displs, t, comm);
        break;
    case C_BCAST: rc = MPI_Bcast(out, n, t, root, comm); break;
    case C_ALLTOALL:
        if (s == MPI_IN_PLACE) rc = MPI_Alltoall(s, 0, t, out, n, t, comm);
        else rc = MPI_Alltoall(in, n, t, out, n, t, comm);
        break;
    case C_GATHER: rc = MPI_Gather(in, n, t, out, n, t, root, comm); break;
    case C_SCATTER: rc = MPI_Scatter(in, n, t, out, n, t, root, comm); break;
    default: rc = MPI_Barrier(comm); break;
    }
    if (rc != MPI_SUCCESS || k != K_SKIP) return rc;
    return c == C_BARRIER ? MPI_Bcast(out, N, MPI_INT, 0, comm) : MPI_Barrier(comm);
}

static void run(int c, int k, int ret, MPI_Comm *keep) {
    char msg[MPI_MAX_ERROR_STRING + 1], cls_name[MPI_MAX_ERROR_STRING + 1];
    int rc, cls = 0, len = 0, next = 0;
    MPI_Comm_dup(MPI_COMM_WORLD, keep);
    if (ret) MPI_Comm_set_errhandler(*keep, MPI_ERRORS_RETURN);
    snprintf(g_case, sizeof g_case, "%s:%s rank %d", colls[c], kinds[k], R);
    alarm(10);
    rc = call(c, k, R == P - 1 && k != K_NONE, *keep);
    if (rc == MPI_SUCCESS) { next = 1; rc = MPI_Barrier(*keep); }
    if (rc == MPI_SUCCESS) rc = MPI_Barrier(*keep);
    alarm(0);
    if (rc == MPI_SUCCESS) {
        printf("%s:%s rank %d: ok\n", colls[c], kinds[k], R);
    } else {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(cls, cls_name, &len);
        MPI_Error_string(rc, msg, &len);
        printf("%s:%s rank %d: error%s %s: %s\n", colls[c], kinds[k], R, next ? " in a later call" : "",
               cls_name, msg);
    }
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
    MPI_Comm keep[C_COUNT * K_KINDS];
    int ret = 0, i, c, k, nkeep = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    signal(SIGALRM, watchdog);
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-r") == 0) { ret = 1; continue; }
        for (c = 0; c < C_COUNT; ++c)
            for (k = 0; k < K_KINDS; ++k) {
                char name[64];
                snprintf(name, sizeof name, "%s:%s", colls[c], kinds[k]);
                if (!applies(c, k)) continue;
                if (strcmp(argv[i], "-l") == 0) { if (R == 0) printf("%s\n", name); continue; }
                if (strcmp(argv[i], "all") != 0 && strcmp(argv[i], name) != 0) continue;
                if (P < 2 || nkeep == C_COUNT * K_KINDS) continue;
                run(c, k, ret, &keep[nkeep++]);
            }
    }
    for (i = 0; i < nkeep; ++i) MPI_Comm_free(&keep[i]);
    MPI_Finalize();
    return 0;
}
