/* nodes_sweep.c - regenerates docs/nodes.md: the two-level model on the
   simulator. AUTO's allreduce against the best one-level row and against
   the bound of the node's network link on N nodes of k ranks, and Hasanov &
   Lastovetsky's Fig. 9 (the speedup the hierarchical transformation gives
   each reduce algorithm) in the one-level model and on nodes.

       make docs/nodes.md        (or: build/nodes_sweep > docs/nodes.md; a few minutes)

   Deterministic: the simulator's clock is a model, not a measurement. */
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"

#define NS_ALPHA  5e-7   /* inside a node */
#define NS_BETA   5e-11
#define NS_IALPHA 2e-6   /* between nodes */
#define NS_IBETA  1e-10

static redcoll_cost_model ns_model(int two) {
    redcoll_cost_model m = redcoll_options_resolved(NULL).model;
    if (two) {
        m.alpha = NS_ALPHA; m.beta = NS_BETA;
        m.inter_alpha = NS_IALPHA; m.inter_beta = NS_IBETA;
    }
    return m;
}

/* Modeled seconds of one collective (no data), or -1. */
static double ns_time(const rc_spec *spec) {
    rc_outcome o;
    double t = -1;
    if (rc_run(spec, &o) == REDCOLL_OK && o.ok) t = o.rep.time;
    rc_outcome_free(&o);
    return t;
}

static rc_spec ns_spec(redcoll_coll coll, redcoll_algo algo, int p, int k, size_t bytes,
                       const redcoll_cost_model *m) {
    rc_spec s = rc_spec_make(coll, algo, p, bytes / 8 ? bytes / 8 : 1);
    s.dtype = REDCOLL_DOUBLE;
    s.use_model = 1;
    s.sim.model = *m;
    s.sim.no_data = 1;
    s.sim.node_size = k;
    s.opts.model = *m;
    s.opts.ranks_per_node = k;
    return s;
}

static const char *ns_size(size_t bytes) {
    static char buf[32];
    if (bytes >= (1u << 20)) snprintf(buf, sizeof buf, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024) snprintf(buf, sizeof buf, "%zu KiB", bytes >> 10);
    else snprintf(buf, sizeof buf, "%zu B", bytes);
    return buf;
}

/* The allreduce table of one shape: every row simulated at every size. */
static void ns_allreduce(int N, int k) {
    redcoll_cost_model m = ns_model(1);
    int p = N * k, i;
    size_t bytes;
    double worst_bound = 0, best_gain = 0;
    printf("\n### allreduce, %d nodes x %d ranks (p = %d)\n\n", N, k, p);
    printf("| bytes | AUTO picks | AUTO (us) | best one-level row (us) | one-level / AUTO | node_split (us) |"
           " node_leader (us) | node_lanes (us) | link bound (us) | AUTO / bound |\n");
    printf("|--:|:--|--:|:--|--:|--:|--:|--:|--:|--:|\n");
    for (bytes = 8; bytes <= ((size_t)64 << 20); bytes *= 2) {
        const redcoll_algo_info *e;
        rc_spec s = ns_spec(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_AUTO, p, k, bytes, &m);
        redcoll_algo pick = redcoll_select(REDCOLL_COLL_ALLREDUCE, p, bytes, 1, &s.opts), flat_algo = REDCOLL_ALGO_AUTO;
        double t_auto = ns_time(&s), flat = -1, split = -1, leader = -1, lanes = -1;
        double bound = 2.0 * (double)bytes * (N - 1) / N * NS_IBETA;
        for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
            double t;
            if (e->coll != REDCOLL_COLL_ALLREDUCE || e->algo == REDCOLL_ALGO_HIERARCHICAL) continue;
            s = ns_spec(REDCOLL_COLL_ALLREDUCE, e->algo, p, k, bytes, &m);
            t = ns_time(&s);
            if (e->algo == REDCOLL_ALGO_NODE_SPLIT) split = t;
            else if (e->algo == REDCOLL_ALGO_NODE_LEADER) leader = t;
            else if (e->algo == REDCOLL_ALGO_NODE_LANES) lanes = t;
            else if (t > 0 && (flat < 0 || t < flat)) { flat = t; flat_algo = e->algo; }
        }
        if (flat / t_auto > best_gain) best_gain = flat / t_auto;
        if (bytes >= ((size_t)1 << 20) && t_auto / bound > worst_bound) worst_bound = t_auto / bound;
        printf("| %s | %s | %.1f | %s %.1f | %.2fx | %.1f | %.1f | %.1f | %.1f | %.2f |\n", ns_size(bytes),
               redcoll_algo_name(pick), t_auto * 1e6, redcoll_algo_name(flat_algo), flat * 1e6, flat / t_auto,
               split * 1e6, leader * 1e6, lanes * 1e6, bound * 1e6, t_auto / bound);
        fflush(stdout);
    }
    printf("\nLargest gain over the best one-level row: %.2fx. From 1 MiB on, AUTO is within %.2fx of the\n"
           "link bound.\n", best_gain, worst_bound);
}

/* Hasanov & Lastovetsky, Fig. 9: T(algorithm) / min over G of T(hierarchical,
   the algorithm at both levels, G groups), reduce, p ranks. */
static const redcoll_algo ns_hl[] = { REDCOLL_ALGO_FLAT, REDCOLL_ALGO_CHAIN, REDCOLL_ALGO_PIPELINE,
                                      REDCOLL_ALGO_BINARY, REDCOLL_ALGO_BINOMIAL, REDCOLL_ALGO_IN_ORDER_BINARY };
#define NS_NHL ((int)(sizeof ns_hl / sizeof ns_hl[0]))

static void ns_fig9(int p, int two) {
    redcoll_cost_model m = ns_model(two);
    static const size_t sizes[] = { (size_t)16 << 10, (size_t)128 << 10, (size_t)1 << 20, (size_t)16 << 20 };
    int a, si;
    printf("\n### reduce, p = %d%s\n\n| bytes |", p, two ? ", nodes of 4 (two levels)" : " (one level)");
    for (a = 0; a < NS_NHL; ++a) printf(" %s |", redcoll_algo_name(ns_hl[a]));
    printf("\n|--:|");
    for (a = 0; a < NS_NHL; ++a) printf("--:|");
    printf("\n");
    for (si = 0; si < 4; ++si) {
        printf("| %s |", ns_size(sizes[si]));
        for (a = 0; a < NS_NHL; ++a) {
            rc_spec s = ns_spec(REDCOLL_COLL_REDUCE, ns_hl[a], p, two ? 4 : 0, sizes[si], &m);
            double plain, best = -1;
            int G, bestG = 1;
            s.opts.segment_bytes = 32768;
            s.opts.ranks_per_node = 0;
            s.opts.by_node = 0;
            plain = ns_time(&s);
            for (G = 2; G < p; G *= 2) {
                double t;
                s.opts.algo = REDCOLL_ALGO_HIERARCHICAL;
                s.opts.inner_algo = s.opts.outer_algo = ns_hl[a];
                s.opts.groups = G;
                t = ns_time(&s);
                if (t > 0 && (best < 0 || t < best)) { best = t; bestG = G; }
            }
            if (best < 0 || plain < best) { best = plain; bestG = 1; }
            printf(" %.2fx (G=%d) |", plain / best, bestG);
            fflush(stdout);
        }
        printf("\n");
    }
}

int main(void) {
    printf("# Two levels: nodes in the simulator\n\n"
           "Generated by `make docs/nodes.md` (bench/nodes_sweep.c); do not edit.\n\n"
           "The two-level model (`redcoll_cost_model.inter_alpha`, `inter_beta`;\n"
           "`redcoll simulate|select|map --node-size N --inter-alpha A --inter-beta B`):\n"
           "inside a node alpha = %g s, beta = %g s/B; between nodes alpha = %g s,\n"
           "beta = %g s/B, the node's link shared by the messages on it (k at once\n"
           "move at 1/(k beta) bytes/s each); gamma = %g s/B, f_alpha = f_beta = 1.\n"
           "Times in microseconds of an allreduce of doubles, every row run on the\n"
           "simulator (no data); AUTO is the collective as it runs, its rows priced\n"
           "by the two-level cost model (estimates at these p). The link bound is the\n"
           "time the node's link needs for the 2 n (N - 1)/N bytes each node must\n"
           "send (and receive) in any allreduce. node_split's allreduce runs the\n"
           "longest vectors in chunks: the network steps of one chunk (isend/irecv,\n"
           "moved by the network card) overlap the node's ring steps for the next\n"
           "chunk and the last, so only the first reduce-scatter and the last\n"
           "allgather stay outside the link's time. node_lanes (short vectors)\n"
           "crosses the network with several ranks of a node at once: a few\n"
           "rounds of radix r instead of node_split's lg N crossings; or, in its\n"
           "transposed plans, rank q of node i swaps its node's block q for node q's\n"
           "block i, so a node allreduces one block of every node inside and swaps\n"
           "the sums back (at 32 x 32: two crossings, each moving 31/32 of the\n"
           "vector over a node's link).\n",
           NS_ALPHA, NS_BETA, NS_IALPHA, NS_IBETA, redcoll_options_resolved(NULL).model.gamma);
    printf("\n## AUTO on nodes: allreduce of doubles, 8 B .. 64 MiB\n");
    ns_allreduce(32, 32);
    ns_allreduce(64, 16);
    ns_allreduce(128, 8);
    printf("\n## Hasanov & Lastovetsky, Fig. 9: the hierarchical transformation's speedup\n\n"
           "T(algorithm) / T(hierarchical, the algorithm at both levels, best G of\n"
           "2, 4, ..., p/2 groups; G = 1 when none is faster), reduce, segments of\n"
           "32 KiB for the pipeline and the trees. One level: alpha = 2e-06 s,\n"
           "beta = 1e-10 s/B (the paper's Hockney model); two levels: the model\n"
           "above on nodes of 4 ranks (the Graphene cluster's 4 cores per node).\n");
    ns_fig9(256, 0);
    ns_fig9(512, 0);
    ns_fig9(256, 1);
    ns_fig9(512, 1);
    return 0;
}
