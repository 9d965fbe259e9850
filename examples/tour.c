/* tour.c - what it shows: the README's fragments as one working program on
   threads you own (transports/redcoll_shm.h): a team whose transports your
   threads use, a persistent plan run many times, a non-commutative user op
   (2x2 matrix product, applied in rank order), and the reproducible sum.
   Every result is checked; the program prints what it checked.

   Build: cc -std=c11 -I.. tour.c -o tour -lpthread
   Run:   ./tour                                                          */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_shm.h"

#include <pthread.h>
#include <stdio.h>

#define P 4     /* threads */
#define NV 1000 /* doubles per vector */

typedef struct rank_arg {
    redcoll_shm_team *team;
    int               rank, wrong;
} rank_arg;

static void fill(double *x, int step) {
    int i;
    for (i = 0; i < NV; ++i) x[i] = step + i;
}

static int check(const double *sum, int step) {
    int i, wrong = 0;
    for (i = 0; i < NV; ++i) wrong += sum[i] != (double)P * (step + i);
    return wrong;
}

/* A persistent allreduce, run once per step on new data. */
static int plan_steps(const redcoll_transport *t) {
    double x[NV], sum[NV];
    size_t n = NV;
    int step = -1, steps = 10, wrong = 0;
    redcoll_plan *pl;
    if (redcoll_allreduce_init(t, x, sum, n, REDCOLL_DOUBLE, REDCOLL_SUM, NULL, &pl) == REDCOLL_OK) {
        for (step = 0; step < steps; ++step) { fill(x, step); redcoll_plan_run(pl); wrong += check(sum, step); }
        redcoll_plan_free(pl);
    }
    return step == steps ? wrong : 1; /* the plan was made and ran every step */
}

/* inout = in * inout for 2x2 matrices of doubles, in from the lower ranks. */
static void matmul2x2(const void *in, void *inout, size_t count, void *user) {
    const double *a = (const double *)in;
    double *b = (double *)inout;
    size_t k;
    (void)user;
    for (k = 0; k < count; ++k, a += 4, b += 4) {
        double c0 = a[0] * b[0] + a[1] * b[2], c1 = a[0] * b[1] + a[1] * b[3];
        double c2 = a[2] * b[0] + a[3] * b[2], c3 = a[2] * b[1] + a[3] * b[3];
        b[0] = c0; b[1] = c1; b[2] = c2; b[3] = c3;
    }
}

/* Rank r holds M_r = [[1, r+1], [0, 2]] (twice). M_0 M_1 ... M_(P-1) is
   [[1, s], [0, 2^P]] with s = sum over r of (r+1) 2^(P-1-r): any other
   order of the factors gives another s. */
static int matrix_product(const redcoll_transport *t) {
    double mine[4 * 2], total[4 * 2], s = 0;
    size_t n = 2;
    int k, r, wrong = 0;
    for (k = 0; k < 2; ++k) {
        mine[4 * k + 0] = 1; mine[4 * k + 1] = t->rank + 1;
        mine[4 * k + 2] = 0; mine[4 * k + 3] = 2;
    }
    for (r = 0; r < P; ++r) s = 2 * s + (r + 1);
    {
        redcoll_op matmul = redcoll_op_user(matmul2x2, NULL, /* commutative = */ 0);
        redcoll_reduce(t, mine, total, n, REDCOLL_OPAQUE(4 * sizeof(double)), matmul, 0, NULL);
    }
    if (t->rank == 0)
        for (k = 0; k < 2; ++k)
            wrong += total[4 * k + 0] != 1 || total[4 * k + 1] != s || total[4 * k + 2] != 0 ||
                     total[4 * k + 3] != (double)(1 << P);
    return wrong;
}

/* Rank r's 0.1 * (r + 1): the exact sum rounded once, the same bits at any p. */
static int exact_sum(const redcoll_transport *t) {
    double x[4], sum[4], want = 0;
    size_t n = 4;
    int i, r;
    for (i = 0; i < 4; ++i) x[i] = 0.1 * (t->rank + 1);
    for (r = 0; r < P; ++r) want += 0.1 * (r + 1); /* exact here: the sum is far from a tie */
    redcoll_allreduce(t, x, sum, n, REDCOLL_DOUBLE, REDCOLL_SUM_EXACT, NULL);
    return sum[0] != want || sum[3] != sum[0];
}

static void *rank_main(void *p) {
    rank_arg *a = (rank_arg *)p;
    const redcoll_transport *t = redcoll_shm_transport(a->team, a->rank);
    a->wrong = plan_steps(t) + matrix_product(t) + exact_sum(t);
    return NULL;
}

/* Your own threads: thread r uses the team's transport of rank r. */
static int run_on_my_threads(redcoll_shm_team *team) {
    pthread_t th[P];
    rank_arg args[P];
    int r, wrong = 0;
    for (r = 0; r < P; ++r) {
        args[r].team = team; args[r].rank = r; args[r].wrong = 0;
        pthread_create(&th[r], NULL, rank_main, &args[r]);
    }
    for (r = 0; r < P; ++r) {
        pthread_join(th[r], NULL);
        wrong += args[r].wrong;
    }
    return wrong;
}

int main(void) {
    int wrong = -1;
    redcoll_shm_team *team;
    if (redcoll_shm_team_create(NULL, P, &team) == REDCOLL_OK) {
        wrong = run_on_my_threads(team);   /* thread r calls collectives on redcoll_shm_transport(team, r) */
        redcoll_shm_team_destroy(team);
    }
    printf("%d threads: plan runs, ordered matrix product, exact sum: %s\n", P,
           wrong == 0 ? "all right" : "WRONG");
    return wrong != 0;
}
