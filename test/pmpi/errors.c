/* errors.c - how the redcoll drop-in reports a failure (test/pmpi/run.sh,
   with the shim only, under mpiexec -n 2 and
   REDCOLL_ALLREDUCE_ALGORITHM=recursive_doubling).

   An erroneous program: the two ranks pass different counts to
   MPI_Allreduce, so redcoll's exchange receives the wrong number of bytes.
   Checks that each rank's communicator error handler is called once with
   the class MPI_ERR_TRUNCATE and that the call returns that code; that
   later calls on the broken communicator fail (MPI_ERR_OTHER) without
   communicating; that a successful call does not call the handler; and
   that a new communicator works after the broken one is freed. Includes
   only mpi.h. Rank 0 prints "N passed, N failed". */
#include <mpi.h>

#include <stdio.h>

static int g_calls, g_class = -1;
static int g_pass, g_fail;

static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    g_calls++;
    MPI_Error_class(*code, &g_class);
}

static void check(int rank, const char *what, int ok) {
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* not through the shim */
    if (all) g_pass++; else g_fail++;
    if (rank == 0) printf("%s  errors/%s\n", all ? "ok   " : "FAIL ", what);
}

int main(int argc, char **argv) {
    MPI_Comm d, e;
    MPI_Errhandler eh;
    int rank, size, rc, cls = -1, in[4] = { 1, 2, 3, 4 }, out[4] = { 0, 0, 0, 0 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) printf("errors: run with -n 2\n0 passed, 1 failed\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, eh);

    rc = MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, d);
    check(rank, "a good call returns MPI_SUCCESS and calls no handler",
          rc == MPI_SUCCESS && g_calls == 0 && out[3] == 8);

    rc = MPI_Allreduce(in, out, rank == 0 ? 4 : 2, MPI_INT, MPI_SUM, d);
    MPI_Error_class(rc, &cls);
    check(rank, "mismatched counts: the handler once with MPI_ERR_TRUNCATE",
          g_calls == 1 && g_class == MPI_ERR_TRUNCATE);
    check(rank, "mismatched counts: the call returns that code", cls == MPI_ERR_TRUNCATE);

    rc = MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, d);
    MPI_Error_class(rc, &cls);
    check(rank, "the broken communicator fails the next call with MPI_ERR_OTHER",
          g_calls == 2 && g_class == MPI_ERR_OTHER && cls == MPI_ERR_OTHER);

    MPI_Comm_free(&d);
    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    MPI_Comm_set_errhandler(e, eh);
    out[3] = 0;
    rc = MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, e);
    check(rank, "a new communicator works after the broken one is freed",
          rc == MPI_SUCCESS && g_calls == 2 && out[3] == 8);
    MPI_Comm_free(&e);
    MPI_Errhandler_free(&eh);
    if (rank == 0) printf("%d passed, %d failed\n", g_pass, g_fail);
    MPI_Finalize();
    return g_fail ? 1 : 0;
}
