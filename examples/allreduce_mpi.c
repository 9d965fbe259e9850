/* allreduce_mpi.c - what it shows: redcoll as a drop-in for MPI_Allreduce
   over an MPI communicator (transports/redcoll_mpi.h). The MPI datatype,
   op and MPI_IN_PLACE of an existing call are translated with the helpers,
   an algorithm is forced (or left to the selector), and the result is
   checked against MPI's own MPI_Allreduce.

   Build: mpicc.mpich -std=c11 -I.. allreduce_mpi.c -o allreduce_mpi
   Run:   mpiexec.mpich -n 4 ./allreduce_mpi                                 */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 10000

/* MPI_Allreduce's signature, running redcoll's schedules. */
static int my_allreduce(redcoll_mpi *m, const void *sbuf, void *rbuf, int count,
                        MPI_Datatype type, MPI_Op op, redcoll_algo algo) {
    redcoll_dtype d;
    redcoll_op o;
    redcoll_options opts;
    if (!redcoll_mpi_dtype(type, &d) || !redcoll_mpi_op(op, &o)) /* not predefined: use MPI */
        return MPI_Allreduce(sbuf, rbuf, count, type, op, m->comm);
    memset(&opts, 0, sizeof opts);
    opts.algo = algo; /* REDCOLL_ALGO_AUTO: the selector chooses */
    return redcoll_allreduce(&m->t, redcoll_mpi_buf(sbuf), rbuf, (size_t)count, d, o, &opts) ==
                   REDCOLL_OK
               ? MPI_SUCCESS
               : MPI_ERR_OTHER;
}

int main(int argc, char **argv) {
    redcoll_mpi m;
    int rank, size, i, a, wrong = 0, total = 0;
    long *x, *mine, *theirs;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (redcoll_mpi_init(&m, MPI_COMM_WORLD, NULL) != REDCOLL_OK) MPI_Abort(MPI_COMM_WORLD, 1);
    x = (long *)malloc(N * sizeof *x);
    mine = (long *)malloc(N * sizeof *mine);
    theirs = (long *)malloc(N * sizeof *theirs);
    for (i = 0; i < N; ++i) x[i] = (long)(rank + 1) * (i % 1000) - 7 * rank;
    MPI_Allreduce(x, theirs, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) { /* every allreduce schedule, and AUTO */
        if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)a)) continue;
        memcpy(mine, x, N * sizeof *mine); /* in place, as with MPI_IN_PLACE */
        if (my_allreduce(&m, MPI_IN_PLACE, mine, N, MPI_LONG, MPI_SUM, (redcoll_algo)a) != MPI_SUCCESS)
            wrong = 1;
        else
            wrong = memcmp(mine, theirs, N * sizeof *mine) != 0;
        MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        total += wrong;
        if (rank == 0)
            printf("%-26s %s\n", redcoll_algo_name((redcoll_algo)a),
                   wrong ? "DIFFERS from MPI_Allreduce" : "same as MPI_Allreduce");
    }
    if (rank == 0)
        printf("%d processes on %d node(s); the selector picks %s for %zu bytes\n", size, m.nodes,
               redcoll_algo_name(redcoll_select(REDCOLL_COLL_ALLREDUCE, size, N * sizeof(long), 1, NULL)),
               N * sizeof(long));
    free(x); free(mine); free(theirs);
    redcoll_mpi_finalize(&m);
    MPI_Finalize();
    return total != 0;
}
