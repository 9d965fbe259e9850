/* persist.c - an unmodified MPI program for the redcoll drop-in
   (test/pmpi/run.sh): persistent collectives (MPI-4's MPI_<coll>_init)
   started in a different order on each rank.

   Includes only mpi.h. MPI-4.1 section 6.13: every process calls the
   initializations in the same order, and may start the requests in any
   order. First the plain case: MPI_Bcast_init then MPI_Barrier_init on
   every rank, rank 0 starting bcast then barrier, the others barrier then
   bcast, MPI_Waitall. Then NPER persistent collectives (bcast, barrier,
   allreduce, reduce, alltoall, reduce_scatter_block; on
   MPI_COMM_WORLD and a duplicate of it) started for ROUNDS rounds with new
   data, each rank in its own order (a rotation, reversed on odd ranks), by
   MPI_Start one at a time or by MPI_Startall on a permuted array, and
   completed by MPI_Waitall, MPI_Wait in yet another order or MPI_Test.
   Every result is checked against its closed form; rank 0 prints one line
   per case, which run.sh compares with and without LD_PRELOAD. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPER 14
#define ROUNDS 12
#define N 9 /* elements per rank */

static int R;

#if MPI_VERSION >= 4
static int P;
static MPI_Status g_sts[NPER]; /* statuses of the array calls (GCC warns at MPI_STATUSES_IGNORE) */

static int32_t val(int r, long j, int seed) { return (int32_t)((r * 131 + j * 7919 + seed * 101) % 1000) - 500; }

static void verdict(const char *name, int wrong) {
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (R == 0) printf("%s: %s\n", name, wrong ? "WRONG" : "ok");
}

/* The first case: two persistent collectives started in opposite orders. */
static void two(void) {
    MPI_Request q[2];
    int32_t buf[N];
    int j, wrong = 0;
    for (j = 0; j < N; ++j) buf[j] = R == 0 ? val(0, j, 1) : -1;
    MPI_Bcast_init(buf, N, MPI_INT32_T, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &q[0]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q[1]);
    if (R == 0) { MPI_Start(&q[0]); MPI_Start(&q[1]); }
    else { MPI_Start(&q[1]); MPI_Start(&q[0]); }
    MPI_Waitall(2, q, g_sts);
    for (j = 0; j < N; ++j) wrong += buf[j] != val(0, j, 1);
    MPI_Request_free(&q[0]);
    MPI_Request_free(&q[1]);
    verdict("bcast_init + barrier_init, started in opposite orders, MPI_Waitall", wrong);
}

typedef struct per {
    int kind, root;
    MPI_Comm comm;
    int32_t sb[N * 8], rb[N * 8];
} per;

static void fill(per *o, int seed) {
    int j, q;
    for (j = 0; j < N * P; ++j) o->rb[j] = -1;
    switch (o->kind) {
    case 0: for (j = 0; j < N; ++j) o->rb[j] = R == o->root ? val(o->root, j, seed) : -1; break;
    case 3: case 5:
        for (q = 0; q < P; ++q)
            for (j = 0; j < N; ++j) o->sb[q * N + j] = val(R * 7 + q, j, seed);
        break;
    default: for (j = 0; j < N; ++j) o->sb[j] = val(R, j, seed); break;
    }
}

static int check(const per *o, int seed) {
    int j, q, wrong = 0;
    for (j = 0; j < N; ++j) {
        int32_t s = 0;
        switch (o->kind) {
        case 0: wrong += o->rb[j] != val(o->root, j, seed); break;
        case 1: break;
        case 2: case 6:
            for (q = 0; q < P; ++q) s += val(q, j, seed);
            if (o->kind == 2 || R == o->root) wrong += o->rb[j] != s;
            break;
        case 3: for (q = 0; q < P; ++q) wrong += o->rb[q * N + j] != val(q * 7 + R, j, seed); break;
        case 4: for (q = 0; q < P; ++q) wrong += o->rb[q * N + j] != val(q, j, seed); break;
        default:
            for (q = 0; q < P; ++q) s += val(q * 7 + R, j, seed);
            wrong += o->rb[j] != s;
            break;
        }
    }
    return wrong;
}

static void init(per *o, MPI_Request *q) {
    MPI_Info in = MPI_INFO_NULL;
    switch (o->kind) {
    case 0: MPI_Bcast_init(o->rb, N, MPI_INT32_T, o->root, o->comm, in, q); break;
    case 1: MPI_Barrier_init(o->comm, in, q); break;
    case 2: MPI_Allreduce_init(o->sb, o->rb, N, MPI_INT32_T, MPI_SUM, o->comm, in, q); break;
    case 3: MPI_Alltoall_init(o->sb, N, MPI_INT32_T, o->rb, N, MPI_INT32_T, o->comm, in, q); break;
    case 4: MPI_Allgather_init(o->sb, N, MPI_INT32_T, o->rb, N, MPI_INT32_T, o->comm, in, q); break;
    case 5: MPI_Reduce_scatter_block_init(o->sb, o->rb, N, MPI_INT32_T, MPI_SUM, o->comm, in, q); break;
    default: MPI_Reduce_init(o->sb, o->rb, N, MPI_INT32_T, MPI_SUM, o->root, o->comm, in, q); break;
    }
}

static const char *how_name[3] = { "MPI_Start each, MPI_Waitall", "MPI_Startall permuted, MPI_Wait each",
                                   "MPI_Start each, MPI_Test each" };

int main(int argc, char **argv) {
    /* no MPI_Allgather_init: MPICH 4.0.2's own gives wrong results at -n 2
       and 4 (as its Gather_init and Scatter_init, see nonblock.c) */
    static const int kinds[6] = { 0, 1, 2, 3, 5, 6 };
    static per ops[NPER];
    MPI_Request q[NPER], perm[NPER];
    MPI_Comm dup;
    int i, k, round, how, wrong[3] = { 0, 0, 0 }, order[NPER];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (P > 8) MPI_Abort(MPI_COMM_WORLD, 2);
    two();
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Barrier(dup); /* the drop-in sets the communicator up at its first collective */
    for (i = 0; i < NPER; ++i) {
        ops[i].kind = kinds[i % 6];
        ops[i].root = (i * 3 + 1) % P;
        ops[i].comm = i % 2 ? dup : MPI_COMM_WORLD;
        init(&ops[i], &q[i]);
    }
    for (round = 0; round < ROUNDS; ++round) {
        int flag = 0;
        how = round % 3;
        for (i = 0; i < NPER; ++i) fill(&ops[i], round * 100 + i);
        for (k = 0; k < NPER; ++k) { /* this rank's start order */
            int at = (k + R + round) % NPER;
            order[k] = R % 2 ? NPER - 1 - at : at;
        }
        if (how == 1) {
            for (k = 0; k < NPER; ++k) perm[k] = q[order[k]];
            MPI_Startall(NPER, perm);
            for (k = NPER - 1; k >= 0; --k) MPI_Wait(&perm[(k * 5 + R) % NPER], MPI_STATUS_IGNORE);
        } else {
            for (k = 0; k < NPER; ++k) MPI_Start(&q[order[k]]);
            if (how == 0) MPI_Waitall(NPER, q, g_sts);
            else /* MPI_Testall on persistent collectives fails in MPICH 4.0.2 itself */
                while (!flag)
                    for (flag = 1, k = 0; k < NPER; ++k) {
                        int one = 0;
                        MPI_Test(&q[(k + R) % NPER], &one, MPI_STATUS_IGNORE);
                        flag &= one;
                    }
        }
        for (i = 0; i < NPER; ++i) wrong[how] += check(&ops[i], round * 100 + i);
    }
    for (how = 0; how < 3; ++how) {
        char name[160];
        snprintf(name, sizeof name, "%d persistent collectives on 2 communicators, per-rank start order, %s",
                 NPER, how_name[how]);
        verdict(name, wrong[how]);
    }
    for (i = 0; i < NPER; ++i) MPI_Request_free(&q[i]);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
#else
int main(int argc, char **argv) { /* no MPI_<coll>_init before MPI 4 (Open MPI 4.1) */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    if (R == 0) printf("persistent collectives: MPI_VERSION %d, none to run\n", MPI_VERSION);
    MPI_Finalize();
    return 0;
}
#endif
