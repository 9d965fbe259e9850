/* errors.c - how the redcoll drop-in reports failures (test/pmpi/run.sh,
   mpiexec -n 2).

   White-box, unlike the other programs here: it compiles
   shim/redcoll_pmpi.c into itself (its MPI_ functions are this program's,
   no LD_PRELOAD) to reach the transport behind a communicator. Checks:
   every redcoll result's MPI error; a good call calls no error handler; a
   transport failure (over MPI: its duplicate communicator pulled away on
   every rank, so each fails at its first message and none waits; over
   shared memory: the segment aborted on every rank) reaches the
   communicator's own error handler once with the MPI error the transport
   saw (class MPI_ERR_COMM; MPI_ERR_OTHER for shared memory) and is returned; the next call on the broken
   communicator fails with MPI_ERR_OTHER without communicating; a new
   communicator works after the broken one is freed; an argument error the
   shim sees itself (send and receive sizes differ on every rank) is raised
   as MPI_ERR_TRUNCATE. Rank 0 prints "N passed, N failed". */
#include "shim/redcoll_pmpi.c"

static int g_calls, g_class = -1;
static int g_pass, g_fail, g_rank;

static void handler(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    g_calls++;
    PMPI_Error_class(*code, &g_class);
}

static void check(const char *what, int ok) {
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* not through the shim */
    if (all) g_pass++; else g_fail++;
    if (g_rank == 0) printf("%s  errors/%s\n", all ? "ok   " : "FAIL ", what);
}

static int class_of(int code) {
    int cls = -1;
    PMPI_Error_class(code, &cls);
    return cls;
}

int main(int argc, char **argv) {
    MPI_Comm d, e;
    MPI_Errhandler eh;
    shim_comm *s = NULL;
    int size, rc, flag = 0, in[4] = { 1, 2, 3, 4 }, out[8] = { 0 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (g_rank == 0) printf("errors: run with -n 2\n0 passed, 1 failed\n");
        MPI_Finalize();
        return 1;
    }
    /* errors on the pulled-away (null) communicator land on WORLD or SELF (MPI 4) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    check("redcoll results map to MPI errors",
          shim_error_code(REDCOLL_OK, MPI_SUCCESS) == MPI_SUCCESS &&
          shim_error_code(REDCOLL_ERR_INVALID_ARG, MPI_SUCCESS) == MPI_ERR_ARG &&
          shim_error_code(REDCOLL_ERR_OUT_OF_MEMORY, MPI_SUCCESS) == MPI_ERR_NO_MEM &&
          shim_error_code(REDCOLL_ERR_UNSUPPORTED, MPI_SUCCESS) == MPI_ERR_UNSUPPORTED_OPERATION &&
          shim_error_code(REDCOLL_ERR_TRANSPORT, MPI_ERR_TRUNCATE) == MPI_ERR_TRUNCATE &&
          shim_error_code(REDCOLL_ERR_TRANSPORT, MPI_SUCCESS) == MPI_ERR_OTHER &&
          shim_error_code(REDCOLL_ERR_ABORTED, MPI_SUCCESS) == MPI_ERR_OTHER &&
          shim_error_code(REDCOLL_ERR_TIMEOUT, MPI_SUCCESS) == MPI_ERR_OTHER);

    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, eh);
    rc = MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, d);
    check("a good call returns MPI_SUCCESS and calls no handler",
          rc == MPI_SUCCESS && g_calls == 0 && out[3] == 8);

    PMPI_Comm_get_attr(d, shim_g.comm_key, &s, &flag);
    check("the communicator carries its transport", flag && s && s->ok);
    if (flag && s && s->ok && s->pshm) s->t->abort(s->t->user, REDCOLL_ERR_TRANSPORT); /* every rank */
    else if (flag && s && s->ok) PMPI_Comm_free(&s->m.comm); /* now MPI_COMM_NULL: every send fails */
    rc = MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, d);
    check(s && s->pshm ? "a shared-memory transport failure: the communicator's handler once (MPI_ERR_OTHER)"
                       : "a transport failure: the communicator's handler once, with the MPI error (MPI_ERR_COMM)",
          g_calls == 1 && g_class == (s && s->pshm ? MPI_ERR_OTHER : MPI_ERR_COMM));
    check("a transport failure: the call returns that error",
          class_of(rc) == (s && s->pshm ? MPI_ERR_OTHER : MPI_ERR_COMM));
    rc = MPI_Bcast(in, 4, MPI_INT, 0, d);
    check("the broken communicator fails the next call with MPI_ERR_OTHER",
          g_calls == 2 && g_class == MPI_ERR_OTHER && class_of(rc) == MPI_ERR_OTHER);
    MPI_Comm_free(&d);

    MPI_Comm_dup(MPI_COMM_WORLD, &e);
    MPI_Comm_set_errhandler(e, eh);
    out[3] = 0;
    rc = MPI_Allreduce(in, out, 4, MPI_INT, MPI_SUM, e);
    check("a new communicator works after the broken one is freed",
          rc == MPI_SUCCESS && g_calls == 2 && out[3] == 8);
    rc = MPI_Allgather(in, 2, MPI_INT, out, 1, MPI_INT, e); /* 8 bytes sent, 4 received */
    check("send and receive sizes that differ: MPI_ERR_TRUNCATE through the handler",
          g_calls == 3 && g_class == MPI_ERR_TRUNCATE && class_of(rc) == MPI_ERR_TRUNCATE);
    MPI_Comm_free(&e);
    MPI_Errhandler_free(&eh);
    if (g_rank == 0) printf("%d passed, %d failed\n", g_pass, g_fail);
    MPI_Finalize();
    return g_fail ? 1 : 0;
}
