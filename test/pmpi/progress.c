/* progress.c - an unmodified MPI program for the redcoll drop-in
   (test/pmpi/run.sh): MPI's progress rule while a rank waits in a served
   collective.

   Includes only mpi.h. In each case some ranks start MPI traffic that
   needs another rank's MPI library to move (a rendezvous send, a receive
   of a large message, one-sided accumulates, puts and gets into a window
   of a rank, an access epoch) and only complete it once that rank has
   entered a collective and is waiting there for them. MPI promises that
   such matched operations complete while the other rank is blocked in any
   MPI call (MPI-4.1 sec. 2.9), so a collective that waits without driving
   MPI's progress engine hangs these programs. Every case checks its data;
   rank 0 prints one line per case ("ok" or "WRONG"), and run.sh compares
   the output with and without the drop-in, each run under a timeout.

   `progress NAME...` runs only the cases named (all by default). */
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIG ((long)4 << 20) /* ints: 16 MiB, far above any eager limit */
#define WIN 64              /* ints in each rank's window */

static int R, P, g_wrong;
static char **g_only;
static int g_nonly;

static int wanted(const char *name) {
    int i;
    if (!g_nonly) return 1;
    for (i = 0; i < g_nonly; ++i)
        if (strcmp(g_only[i], name) == 0) return 1;
    return 0;
}

static void verdict(const char *name, int ok) {
    int all = 0;
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) g_wrong++;
    if (R == 0) printf("%-64s %s\n", name, all ? "ok" : "WRONG");
}

static int32_t *ints(long n) {
    int32_t *p = (int32_t *)calloc((size_t)(n > 0 ? n : 1), sizeof *p);
    if (!p) { fprintf(stderr, "out of memory\n"); MPI_Abort(MPI_COMM_WORLD, 2); }
    return p;
}

static int32_t val(int r, long i) { return (int32_t)((r * 1000003L + i * 7919L) % 100003L); }

/* The served collective a rank waits in while its peers' traffic needs it. */
typedef enum { IN_BARRIER, IN_ALLREDUCE, IN_BCAST, IN_IBARRIER, IN_BIG_ALLREDUCE } waits_in;
static const char *const waits_name[] = { "barrier", "allreduce", "bcast", "ibarrier+wait",
                                          "allreduce 1 MiB" };

/* Runs the collective `how` on every rank and checks what it returned. */
static int collective(waits_in how) {
    int ok = 1;
    if (how == IN_BARRIER) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (how == IN_ALLREDUCE || how == IN_BIG_ALLREDUCE) {
        long n = how == IN_ALLREDUCE ? 4 : (1 << 18), i;
        int32_t *in = ints(n), *out = ints(n);
        for (i = 0; i < n; ++i) in[i] = val(R, i);
        MPI_Allreduce(in, out, (int)n, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
        for (i = 0; i < n; ++i) {
            int32_t want = 0;
            int r;
            for (r = 0; r < P; ++r) want += val(r, i);
            ok &= out[i] == want;
        }
        free(in);
        free(out);
    } else if (how == IN_BCAST) {
        int32_t v[3] = { R, R, R };
        MPI_Bcast(v, 3, MPI_INT32_T, P - 1, MPI_COMM_WORLD);
        ok = v[0] == P - 1 && v[2] == P - 1;
    } else {
        MPI_Request q;
        MPI_Ibarrier(MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
    }
    return ok;
}

/* Pairs (2k, 2k + 1): the even rank starts a transfer of BIG ints with its
   partner (a receive when even_receives, else a send) and goes into the
   collective; the odd one makes the matching blocking call first, a
   rendezvous that needs the even rank's MPI to answer, then joins it. */
static void rendezvous(waits_in how, int even_receives) {
    char name[96];
    int32_t *buf = ints(BIG);
    int even = R % 2 == 0, partner = even ? R + 1 : R - 1, tag = 7 + even_receives;
    int receives = even == even_receives, ok = 1;
    long i;
    if (partner < P) {
        if (!receives)
            for (i = 0; i < BIG; ++i) buf[i] = val(R, i);
        if (even) {
            MPI_Request q;
            if (receives) MPI_Irecv(buf, (int)BIG, MPI_INT32_T, partner, tag, MPI_COMM_WORLD, &q);
            else MPI_Isend(buf, (int)BIG, MPI_INT32_T, partner, tag, MPI_COMM_WORLD, &q);
            ok &= collective(how);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
        } else {
            if (receives) MPI_Recv(buf, (int)BIG, MPI_INT32_T, partner, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else MPI_Send(buf, (int)BIG, MPI_INT32_T, partner, tag, MPI_COMM_WORLD);
            ok &= collective(how);
        }
        if (receives)
            for (i = 0; i < BIG; ++i) ok &= buf[i] == val(partner, i);
    } else {
        ok &= collective(how);
    }
    free(buf);
    snprintf(name, sizeof name, "%s before %s", even_receives ? "a receive posted, its rendezvous send"
             : "a send started, its receive done", waits_name[how]);
    verdict(name, ok);
}

/* Passive target: every rank but 0 accumulates into rank 0's window (and
   puts into its own slot, gets it back) under MPI_Win_lock_all, flushing
   each operation, while rank 0 waits in the collective. */
static void passive_target(waits_in how) {
    char name[96];
    int32_t *base, mine[WIN], back[WIN];
    MPI_Win win;
    int i, k, ok = 1;
    MPI_Win_allocate((MPI_Aint)(WIN * sizeof(int32_t)), (int)sizeof(int32_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    memset(base, 0, WIN * sizeof(int32_t));
    PMPI_Barrier(MPI_COMM_WORLD); /* every window zeroed */
    MPI_Win_lock_all(0, win);
    if (R != 0) {
        for (k = 0; k < 20; ++k) {
            for (i = 0; i < WIN; ++i) mine[i] = val(R, i + k);
            MPI_Accumulate(mine, WIN / 2, MPI_INT32_T, 0, 0, WIN / 2, MPI_INT32_T, MPI_SUM, win);
            MPI_Win_flush(0, win);
        }
        mine[0] = R * 3 + 1;
        MPI_Put(mine, 1, MPI_INT32_T, 0, WIN / 2 + R % (WIN / 2), 1, MPI_INT32_T, win);
        MPI_Win_flush(0, win);
        MPI_Get(back, 1, MPI_INT32_T, 0, WIN / 2 + R % (WIN / 2), 1, MPI_INT32_T, win);
        MPI_Win_flush(0, win);
        ok &= back[0] == R * 3 + 1;
    }
    ok &= collective(how);
    MPI_Win_unlock_all(win);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (R == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        for (i = 0; i < WIN / 2; ++i) {
            int32_t want = 0;
            int r;
            for (r = 1; r < P; ++r)
                for (k = 0; k < 20; ++k) want += val(r, i + k);
            ok &= base[i] == want;
        }
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
    snprintf(name, sizeof name, "lock_all, accumulate/put/get + flush into a rank in %s", waits_name[how]);
    verdict(name, ok);
}

/* Active target, generalized: rank 0 exposes its window to every other rank
   (post), waits in the collective, then ends the exposure (wait); the
   others start an access epoch, put into it and complete before they join
   the collective. */
static void post_start(waits_in how) {
    char name[96];
    int32_t *base, v;
    MPI_Win win;
    MPI_Group world, others, zero;
    int i, ok = 1, z = 0;
    MPI_Win_allocate((MPI_Aint)(P * sizeof(int32_t)), (int)sizeof(int32_t), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    for (i = 0; i < P; ++i) base[i] = -1;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_excl(world, 1, &z, &others);
    MPI_Group_incl(world, 1, &z, &zero);
    PMPI_Barrier(MPI_COMM_WORLD);
    if (R == 0) {
        if (P > 1) MPI_Win_post(others, 0, win);
        ok &= collective(how);
        if (P > 1) MPI_Win_wait(win);
        for (i = 1; i < P; ++i) ok &= base[i] == val(i, 5);
    } else {
        v = val(R, 5);
        MPI_Win_start(zero, 0, win);
        MPI_Put(&v, 1, MPI_INT32_T, 0, R, 1, MPI_INT32_T, win);
        MPI_Win_complete(win);
        ok &= collective(how);
    }
    MPI_Group_free(&world);
    MPI_Group_free(&others);
    MPI_Group_free(&zero);
    MPI_Win_free(&win);
    snprintf(name, sizeof name, "post/start/put/complete into a rank in %s", waits_name[how]);
    verdict(name, ok);
}

int main(int argc, char **argv) {
    static const waits_in hows[] = { IN_BARRIER, IN_ALLREDUCE, IN_BCAST, IN_IBARRIER, IN_BIG_ALLREDUCE };
    size_t h;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &R);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    g_only = argv + 1;
    g_nonly = argc - 1;
    MPI_Barrier(MPI_COMM_WORLD); /* the drop-in's segment is made here, not inside a case */
    for (h = 0; h < sizeof hows / sizeof hows[0]; ++h) {
        if (wanted("recv")) rendezvous(hows[h], 1);
        if (wanted("send")) rendezvous(hows[h], 0);
        if (wanted("passive")) passive_target(hows[h]);
        if (wanted("pscw")) post_start(hows[h]);
    }
    if (R == 0) printf("%s\n", g_wrong ? "some cases WRONG" : "every case ok");
    MPI_Finalize();
    return g_wrong != 0;
}
