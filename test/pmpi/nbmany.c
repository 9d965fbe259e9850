/* nbmany.c - an unmodified MPI program for the redcoll drop-in
   (test/pmpi/run.sh): many non-blocking collectives outstanding at once on
   four communicators, with point-to-point mixed in.

   Includes only mpi.h. Each round starts NREQ collectives (allreduce,
   bcast, allgather, alltoall, reduce, barrier, allgatherv,
   reduce_scatter_block in turn), most on a duplicate of MPI_COMM_WORLD and
   the rest spread over a split into halves, a split in reverse rank order
   and a second duplicate, plus a ring of MPI_Isend / MPI_Irecv. Amid the
   starts each rank receives a synchronous message from the previous rank
   and, after them, sends one to the next: a start that waited for one of
   its older collectives to finish would wait for a peer that is still
   waiting for that message. Ranks then complete the array with a different
   MPI completion call each (MPI_Wait in reverse, MPI_Test, MPI_Waitall,
   MPI_Testall, MPI_Waitany, MPI_Testany, MPI_Waitsome, MPI_Testsome,
   rotating per round and per rank). Every result is checked against its
   closed form; rank 0 prints one line per completion call and a last
   line, which run.sh compares with and without LD_PRELOAD. */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NREQ 24   /* collectives outstanding at once */
#define EARLY 8   /* started before the message from the previous rank */
#define ROUNDS 24
#define MAXN 40   /* elements per rank at most */
#define NCOMM 4

static int R, P;

static int32_t val(int r, long j, int seed) { return (int32_t)((r * 131 + j * 7919 + seed * 101) % 1000) - 500; }
static int32_t val2(int from, int to, long j, int seed) { return val(from * 7 + to, j, seed); }

typedef struct one {
    int     kind, n, root, seed;
    MPI_Comm comm;
    int     cr, cs;                /* rank and size in comm */
    int32_t *sb, *rb;
    int     *counts, *displs;
} one;

static int nof(int i) { return 1 + i * 13 % MAXN; }

/* Starts collective i of round `round` on comm. */
static void start(one *o, int i, int round, MPI_Comm comm, MPI_Request *req) {
    int q, j, total = 0;
    o->kind = i % 8;
    o->n = nof(i);
    o->seed = round * 100 + i;
    o->comm = comm;
    MPI_Comm_rank(comm, &o->cr);
    MPI_Comm_size(comm, &o->cs);
    o->root = (i + round) % o->cs;
    o->sb = (int32_t *)calloc((size_t)o->n * (size_t)o->cs + 3 * (size_t)o->cs, sizeof(int32_t));
    o->rb = (int32_t *)calloc((size_t)o->n * (size_t)o->cs + 3 * (size_t)o->cs, sizeof(int32_t));
    o->counts = (int *)malloc(sizeof(int) * (size_t)o->cs);
    o->displs = (int *)malloc(sizeof(int) * (size_t)o->cs);
    if (!o->sb || !o->rb || !o->counts || !o->displs) MPI_Abort(MPI_COMM_WORLD, 2);
    for (q = 0; q < o->cs; ++q) { o->counts[q] = o->n + q % 3; o->displs[q] = total; total += o->counts[q]; }
    switch (o->kind) {
    case 0: /* allreduce */
        for (j = 0; j < o->n; ++j) o->sb[j] = val(o->cr, j, o->seed);
        MPI_Iallreduce(o->sb, o->rb, o->n, MPI_INT32_T, MPI_SUM, comm, req);
        break;
    case 1: /* bcast */
        for (j = 0; j < o->n; ++j) o->rb[j] = o->cr == o->root ? val(o->root, j, o->seed) : -1;
        MPI_Ibcast(o->rb, o->n, MPI_INT32_T, o->root, comm, req);
        break;
    case 2: /* allgather */
        for (j = 0; j < o->n; ++j) o->sb[j] = val(o->cr, j, o->seed);
        MPI_Iallgather(o->sb, o->n, MPI_INT32_T, o->rb, o->n, MPI_INT32_T, comm, req);
        break;
    case 3: /* alltoall */
        for (q = 0; q < o->cs; ++q)
            for (j = 0; j < o->n; ++j) o->sb[q * o->n + j] = val2(o->cr, q, j, o->seed);
        MPI_Ialltoall(o->sb, o->n, MPI_INT32_T, o->rb, o->n, MPI_INT32_T, comm, req);
        break;
    case 4: /* reduce */
        for (j = 0; j < o->n; ++j) o->sb[j] = val(o->cr, j, o->seed);
        MPI_Ireduce(o->sb, o->rb, o->n, MPI_INT32_T, MPI_SUM, o->root, comm, req);
        break;
    case 5:
        MPI_Ibarrier(comm, req);
        break;
    case 6: /* allgatherv */
        for (j = 0; j < o->counts[o->cr]; ++j) o->sb[j] = val(o->cr, j, o->seed);
        MPI_Iallgatherv(o->sb, o->counts[o->cr], MPI_INT32_T, o->rb, o->counts, o->displs, MPI_INT32_T, comm,
                        req);
        break;
    default: /* reduce_scatter_block */
        for (q = 0; q < o->cs; ++q)
            for (j = 0; j < o->n; ++j) o->sb[q * o->n + j] = val2(o->cr, q, j, o->seed);
        MPI_Ireduce_scatter_block(o->sb, o->rb, o->n, MPI_INT32_T, MPI_SUM, comm, req);
        break;
    }
}

/* 1 when o's result is its closed form; frees o's buffers. */
static int check(one *o) {
    int q, j, ok = 1;
    for (j = 0; j < o->n && ok; ++j) {
        int32_t s = 0;
        switch (o->kind) {
        case 0: case 4:
            for (q = 0; q < o->cs; ++q) s += val(q, j, o->seed);
            if (o->kind == 0 || o->cr == o->root) ok &= o->rb[j] == s;
            break;
        case 1: ok &= o->rb[j] == val(o->root, j, o->seed); break;
        case 2: for (q = 0; q < o->cs; ++q) ok &= o->rb[q * o->n + j] == val(q, j, o->seed); break;
        case 3: for (q = 0; q < o->cs; ++q) ok &= o->rb[q * o->n + j] == val2(q, o->cr, j, o->seed); break;
        case 5: break;
        case 6: break;
        default:
            for (q = 0; q < o->cs; ++q) s += val2(q, o->cr, j, o->seed);
            ok &= o->rb[j] == s;
            break;
        }
    }
    if (o->kind == 6)
        for (q = 0; q < o->cs; ++q)
            for (j = 0; j < o->counts[q]; ++j) ok &= o->rb[o->displs[q] + j] == val(q, j, o->seed);
    free(o->sb); free(o->rb); free(o->counts); free(o->displs);
    return ok;
}

static const char *mode_name[8] = { "MPI_Wait (reverse)", "MPI_Test", "MPI_Waitall", "MPI_Testall",
                                    "MPI_Waitany", "MPI_Testany", "MPI_Waitsome", "MPI_Testsome" };

/* Completes reqs[0..n-1] with completion call `mode`. */
static void complete(int mode, int n, MPI_Request *reqs) {
    static MPI_Status sts[NREQ + 2];
    int idx[NREQ + 2], i, left = n, flag, out, k;
    switch (mode) {
    case 0: for (i = n - 1; i >= 0; --i) MPI_Wait(&reqs[i], MPI_STATUS_IGNORE); break;
    case 1:
        while (left > 0)
            for (left = 0, i = 0; i < n; ++i) {
                flag = 1;
                if (reqs[i] != MPI_REQUEST_NULL) MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
                left += !flag;
            }
        break;
    case 2: MPI_Waitall(n, reqs, sts); break;
    case 3: do MPI_Testall(n, reqs, &flag, sts); while (!flag); break;
    case 4:
        for (k = 0; k < n; ++k) MPI_Waitany(n, reqs, &out, MPI_STATUS_IGNORE);
        break;
    case 5:
        for (k = 0; k < n;) {
            MPI_Testany(n, reqs, &out, &flag, MPI_STATUS_IGNORE);
            if (flag && out != MPI_UNDEFINED) ++k;
            if (flag && out == MPI_UNDEFINED) break;
        }
        break;
    case 6:
        for (k = 0; k < n;) {
            MPI_Waitsome(n, reqs, &out, idx, sts);
            if (out == MPI_UNDEFINED) break;
            k += out;
        }
        break;
    default:
        for (k = 0; k < n;) {
            MPI_Testsome(n, reqs, &out, idx, sts);
            if (out == MPI_UNDEFINED) break;
            k += out;
        }
        break;
    }
}

int main(int argc, char **argv) {
    MPI_Comm comms[NCOMM];
    one ops[NREQ];
    MPI_Request reqs[NREQ + 2];
    int round, i, wrong_by_mode[8], token = 0, ring_out, ring_in, cold;
    double t0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, R % 2, R, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, P - R, &comms[2]);
    MPI_Comm_dup(comms[0], &comms[3]);
    /* `nbmany cold`: the first rounds start on communicators no blocking
       collective has run on yet (a start must not wait for the other ranks
       to set one up: they may be waiting for the message below); the
       barriers come after the second round. */
    cold = argc > 1 && strcmp(argv[1], "cold") == 0;
    for (i = 0; i < NCOMM && !cold; ++i) MPI_Barrier(comms[i]);
    memset(wrong_by_mode, 0, sizeof wrong_by_mode);
    t0 = MPI_Wtime();
    for (round = 0; round < ROUNDS; ++round) {
        int mode = (round + R) % 8, wrong = 0;
        for (i = 0; i < NREQ; ++i) {
            MPI_Comm c = i % 3 == 2 ? comms[1 + i / 3 % 3] : comms[0];
            if (i == EARLY && R > 0) MPI_Recv(&token, 1, MPI_INT, R - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            start(&ops[i], i, round, c, &reqs[i]);
        }
        if (R + 1 < P) MPI_Ssend(&token, 1, MPI_INT, R + 1, 7, MPI_COMM_WORLD);
        ring_out = R * 1000 + round;
        ring_in = -1;
        MPI_Irecv(&ring_in, 1, MPI_INT, (R + P - 1) % P, 8, MPI_COMM_WORLD, &reqs[NREQ]);
        MPI_Isend(&ring_out, 1, MPI_INT, (R + 1) % P, 8, MPI_COMM_WORLD, &reqs[NREQ + 1]);
        complete(mode, NREQ + 2, reqs);
        for (i = 0; i < NREQ + 2; ++i) wrong += reqs[i] != MPI_REQUEST_NULL;
        for (i = 0; i < NREQ; ++i) wrong += !check(&ops[i]);
        wrong += ring_in != ((R + P - 1) % P) * 1000 + round;
        wrong_by_mode[mode] += wrong;
        for (i = 0; i < NCOMM && cold && round == 1; ++i) MPI_Barrier(comms[i]);
    }
    MPI_Allreduce(MPI_IN_PLACE, wrong_by_mode, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (R == 0) {
        for (i = 0; i < 8; ++i)
            printf("%d outstanding on %d communicators, completed by %s: %s\n", NREQ, NCOMM, mode_name[i],
                   wrong_by_mode[i] ? "WRONG" : "ok");
        fprintf(stderr, "nbmany: %d rounds of %d collectives in %.3f s\n", ROUNDS, NREQ, MPI_Wtime() - t0);
    }
    for (i = 0; i < NCOMM; ++i) MPI_Comm_free(&comms[i]);
    MPI_Finalize();
    return 0;
}
