/* test_nodes.c - two levels: the simulator's timing rules between nodes
   (hand-computed cases), and the node-aware schedules, their cost and
   AUTO's choice under the two-level model. */

/* ---- the simulator's two-level rules ------------------------------------------
   Each rank runs a short script of transport calls; the times are computed
   by hand. The model is chosen so that every figure is exact in binary:
   inside a node alpha = 1/4, beta = 2^-10 (1 KiB: 1); between nodes A = 1,
   B = 2^-8 (1 KiB: 4). */
#define TN_A    1.0
#define TN_B    (1.0 / 256)
#define TN_KIB  1024

/* One call of a script: send (s), recv (r), sendrecv (x: to and from peer),
   recv_reduce (R), compute bytes (c), isend (S) and irecv (I) ended by a
   waitall of all of them (w). */
typedef struct tn_op {
    char   kind;
    int    peer;
    size_t bytes;
} tn_op;

#define TN_MAXOPS 6
typedef struct tn_script {
    tn_op ops[8][TN_MAXOPS]; /* per rank, ended by kind 0 */
} tn_script;

static void tn_noop_fn(void *arg, const void *piece, size_t off, size_t bytes) {
    (void)arg; (void)piece; (void)off; (void)bytes;
}

static redcoll_result tn_rank(const redcoll_transport *t, void *arg) {
    const tn_script *sc = (const tn_script *)arg;
    static char sbuf[8][4 * TN_KIB], rbuf[8][4 * TN_KIB];
    redcoll_request reqs[TN_MAXOPS];
    redcoll_consumer into;
    int i, nreq = 0;
    into.fn = tn_noop_fn; into.arg = NULL; into.unit = 1;
    for (i = 0; i < TN_MAXOPS && sc->ops[t->rank][i].kind; ++i) {
        const tn_op *o = &sc->ops[t->rank][i];
        redcoll_result res = REDCOLL_OK;
        switch (o->kind) {
        case 's': res = t->send(t->user, o->peer, sbuf[t->rank], o->bytes, 1); break;
        case 'r': res = t->recv(t->user, o->peer, rbuf[t->rank], o->bytes, 1); break;
        case 'x': res = t->sendrecv(t->user, o->peer, sbuf[t->rank], o->bytes, o->peer, rbuf[t->rank], o->bytes, 1); break;
        case 'R': res = t->recv_reduce(t->user, o->peer, o->bytes, 1, &into); break;
        case 'c': t->on_compute(t->user, 0, o->bytes); break;
        case 'S': res = t->isend(t->user, o->peer, sbuf[t->rank], o->bytes, 1, &reqs[nreq++]); break;
        case 'I': res = t->irecv(t->user, o->peer, rbuf[t->rank], o->bytes, 1, &reqs[nreq++]); break;
        case 'w': res = t->waitall(t->user, nreq, reqs); nreq = 0; break;
        default: return REDCOLL_ERR_INVALID_ARG;
        }
        if (res != REDCOLL_OK) return res;
    }
    return REDCOLL_OK;
}

/* The exact model above on p ranks; node_size 0 with map NULL: one level. */
static redcoll_mock_config tn_config(int p, int node_size, const int *map) {
    redcoll_mock_config cfg = redcoll_mock_defaults(p);
    cfg.model.alpha = 0.25; cfg.model.beta = 1.0 / 1024; cfg.model.gamma = 1.0 / 1024;
    cfg.model.inter_alpha = TN_A; cfg.model.inter_beta = TN_B;
    cfg.node_size = node_size;
    cfg.node_map = map;
    return cfg;
}

/* Runs the script and checks every rank's time. */
static void tn_expect(const char *what, const redcoll_mock_config *cfg, const tn_script *sc,
                      const double *want) {
    redcoll_mock_report rep;
    int i;
    CHECK(redcoll_mock_run(cfg, tn_rank, (void *)sc, &rep) == REDCOLL_OK, "%s: run", what);
    for (i = 0; i < cfg->size; ++i) {
        CHECK(rep.results[i] == REDCOLL_OK, "%s: rank %d: %s", what, i, redcoll_result_string(rep.results[i]));
        CHECK(rep.stats[i].time == want[i], "%s: rank %d ends at %.17g, want %.17g", what, i,
              rep.stats[i].time, want[i]);
    }
    redcoll_mock_report_free(&rep);
}

#define TN_OP(k, peer, bytes) { (k), (peer), (size_t)(bytes) }

static void test_nodes_sim_alone(void) {
    /* two nodes of one rank: a one-way message n B + A, then an exchange
       (each direction its own link: no sharing) n B + A again */
    tn_script sc = { { { TN_OP('s', 1, TN_KIB), TN_OP('x', 1, TN_KIB) },
                       { TN_OP('r', 0, TN_KIB), TN_OP('x', 0, TN_KIB) } } };
    double want[2] = { 10, 10 };
    redcoll_mock_config cfg = tn_config(2, 1, NULL);
    tn_expect("alone", &cfg, &sc, want);
    /* one way with f_alpha = f_beta = 1/2: 2 + 1/2; the exchange keeps A, B */
    cfg.model.f_alpha = 0.5; cfg.model.f_beta = 0.5;
    want[0] = want[1] = 2.5 + 5;
    tn_expect("one-way factors", &cfg, &sc, want);
    { /* an empty message between nodes: its latency only */
        tn_script z = { { { TN_OP('s', 1, 0) }, { TN_OP('r', 0, 0) } } };
        double wz[2] = { TN_A, TN_A };
        cfg = tn_config(2, 1, NULL);
        tn_expect("empty", &cfg, &z, wz);
    }
}

static void test_nodes_sim_shared(void) {
    redcoll_mock_config cfg;
    { /* ranks 0, 1 of node 0 send 1 KiB each to ranks 2, 3 of node 1 at once:
         both share the link, 2 (1 KiB B) + A = 9 */
        tn_script sc = { { { TN_OP('s', 2, TN_KIB) }, { TN_OP('s', 3, TN_KIB) },
                           { TN_OP('r', 0, TN_KIB) }, { TN_OP('r', 1, TN_KIB) } } };
        double want[4] = { 9, 9, 9, 9 };
        cfg = tn_config(4, 2, NULL);
        tn_expect("two leave one node", &cfg, &sc, want);
    }
    { /* three leave a node of three (map): 3 * 4 + 1 */
        static const int map[6] = { 0, 0, 0, 1, 1, 1 };
        tn_script sc = { { { TN_OP('s', 3, TN_KIB) }, { TN_OP('s', 4, TN_KIB) }, { TN_OP('s', 5, TN_KIB) },
                           { TN_OP('r', 0, TN_KIB) }, { TN_OP('r', 1, TN_KIB) }, { TN_OP('r', 2, TN_KIB) } } };
        double want[6] = { 13, 13, 13, 13, 13, 13 };
        cfg = tn_config(6, 0, map);
        tn_expect("three leave a node of three", &cfg, &sc, want);
    }
    { /* two enter one node from two others: the incoming link is shared */
        static const int map[4] = { 0, 1, 2, 2 };
        tn_script sc = { { { TN_OP('s', 2, TN_KIB) }, { TN_OP('s', 3, TN_KIB) },
                           { TN_OP('r', 0, TN_KIB) }, { TN_OP('r', 1, TN_KIB) } } };
        double want[4] = { 9, 9, 9, 9 };
        cfg = tn_config(4, 0, map);
        tn_expect("two enter one node", &cfg, &sc, want);
    }
    { /* node 0 sends to nodes 1 and 2: k = max(out, in) = 2 for both */
        static const int map[4] = { 0, 0, 1, 2 };
        tn_script sc = { { { TN_OP('s', 2, TN_KIB) }, { TN_OP('s', 3, TN_KIB) },
                           { TN_OP('r', 0, TN_KIB) }, { TN_OP('r', 1, TN_KIB) } } };
        double want[4] = { 9, 9, 9, 9 };
        cfg = tn_config(4, 0, map);
        tn_expect("one node to two", &cfg, &sc, want);
    }
    { /* two exchanges between nodes 0 and 1 (ranks 0-2, 1-3): each direction
         carries two, 2 * 4 + 1 */
        tn_script sc = { { { TN_OP('x', 2, TN_KIB) }, { TN_OP('x', 3, TN_KIB) },
                           { TN_OP('x', 0, TN_KIB) }, { TN_OP('x', 1, TN_KIB) } } };
        double want[4] = { 9, 9, 9, 9 };
        cfg = tn_config(4, 2, NULL);
        tn_expect("two exchanges", &cfg, &sc, want);
    }
}

/* Shares change as messages join and leave: rank 0 sends 1 KiB to rank 2
   at 0; rank 1 first reduces 2 KiB (gamma 2^-10: until 2) and then sends
   1 KiB to rank 3. The first has 512 B left at 2, moves at half rate until
   6 and ends at 7; the second has moved 512 B by 6, the rest alone by 8,
   ends at 9. The ranks of node 1 wait for theirs. */
static void test_nodes_sim_join_leave(void) {
    tn_script sc = { { { TN_OP('s', 2, TN_KIB) }, { TN_OP('c', 0, 2048), TN_OP('s', 3, TN_KIB) },
                       { TN_OP('r', 0, TN_KIB) }, { TN_OP('r', 1, TN_KIB) } } };
    double want[4] = { 7, 9, 7, 9 };
    redcoll_mock_config cfg = tn_config(4, 2, NULL);
    tn_expect("join and leave", &cfg, &sc, want);
    { /* the same with the first message twice as long: alone for 2 (512 B),
         shared 2..10 (1 KiB each), then the second is done (ends 11) and the
         first has 512 B alone: done 12, ends 13 */
        tn_script s2 = { { { TN_OP('s', 2, 2 * TN_KIB) }, { TN_OP('c', 0, 2048), TN_OP('s', 3, TN_KIB) },
                           { TN_OP('r', 0, 2 * TN_KIB) }, { TN_OP('r', 1, TN_KIB) } } };
        double w2[4] = { 13, 11, 13, 11 };
        tn_expect("the longer one ends alone", &cfg, &s2, w2);
    }
}

/* Messages inside a node keep the one-level rules, next to shared links;
   peer_reduce applies inside nodes only. */
static void test_nodes_sim_inside(void) {
    { /* 0 -> 1 inside node 0 and 2 -> 3 inside node 1: 1/4 + 1 each */
        tn_script sc = { { { TN_OP('s', 1, TN_KIB) }, { TN_OP('r', 0, TN_KIB) },
                           { TN_OP('s', 3, TN_KIB) }, { TN_OP('r', 2, TN_KIB) } } };
        double want[4] = { 1.25, 1.25, 1.25, 1.25 };
        redcoll_mock_config cfg = tn_config(4, 2, NULL);
        tn_expect("inside", &cfg, &sc, want);
    }
    { /* peer_reduce: a receive-and-reduce inside costs its latency only,
         between nodes its bytes too */
        tn_script sc = { { { TN_OP('s', 1, TN_KIB), TN_OP('s', 2, TN_KIB) }, { TN_OP('R', 0, TN_KIB) },
                           { TN_OP('R', 0, TN_KIB) } } };
        double want[3] = { 0.25 + 5, 0.25, 0.25 + 5 };
        redcoll_mock_config cfg = tn_config(3, 2, NULL);
        cfg.peer_reduce = 1;
        tn_expect("peer_reduce inside only", &cfg, &sc, want);
    }
    { /* a waitall still serialises a rank's port: two receives from two
         nodes into one rank share its node's incoming link (each 2 * 4 + 1)
         and the port (summed: 18) */
        static const int map[3] = { 0, 1, 2 };
        tn_script sc = { { { TN_OP('s', 2, TN_KIB) }, { TN_OP('s', 2, TN_KIB) },
                           { TN_OP('I', 0, TN_KIB), TN_OP('I', 1, TN_KIB), TN_OP('w', 0, 0) } } };
        double want[3] = { 9, 9, 18 };
        redcoll_mock_config cfg = tn_config(3, 0, map);
        tn_expect("waitall", &cfg, &sc, want);
    }
}

/* Figures of one collective on two configurations must be the same bit for bit. */
static void tn_same_figures(const char *what, const rc_spec *a, const rc_spec *b) {
    rc_outcome x, y;
    int i;
    rc_run(a, &x);
    rc_run(b, &y);
    CHECK(x.ok && y.ok, "%s: %s / %s", what, x.why, y.why);
    CHECK(x.rep.time == y.rep.time && x.rep.rounds == y.rep.rounds, "%s: time %.17g vs %.17g", what,
          x.rep.time, y.rep.time);
    for (i = 0; i < a->p && i < b->p; ++i)
        CHECK(memcmp(&x.rep.stats[i], &y.rep.stats[i], sizeof x.rep.stats[i]) == 0, "%s: rank %d's figures", what, i);
    rc_outcome_free(&x);
    rc_outcome_free(&y);
}

/* One node, or inter links equal to the intra ones (given or zero): the
   one-level model, bit for bit. */
static void test_nodes_sim_one_level(void) {
    static const redcoll_algo algos[3] = { REDCOLL_ALGO_RING, REDCOLL_ALGO_RECURSIVE_DOUBLING,
                                           REDCOLL_ALGO_HALVING_DOUBLING };
    int i;
    for (i = 0; i < 3; ++i) {
        rc_spec flat = rc_spec_make(REDCOLL_COLL_ALLREDUCE, algos[i], 12, 1000), s;
        flat.dtype = REDCOLL_DOUBLE;
        s = flat;
        s.sim.node_size = 4; /* zero inter fields */
        tn_same_figures("zero inter fields", &flat, &s);
        s.use_model = 1;
        s.sim.model = redcoll_mock_defaults(1).model;
        flat.use_model = 1;
        flat.sim.model = s.sim.model;
        s.sim.model.inter_alpha = s.sim.model.alpha;
        s.sim.model.inter_beta = s.sim.model.beta;
        tn_same_figures("equal inter fields", &flat, &s);
        s.sim.model.inter_alpha = 10 * s.sim.model.alpha;
        s.sim.node_size = 12;
        tn_same_figures("one node", &flat, &s);
    }
}

/* The rules that hold in one level hold in two: deadlock reported, a fault
   releases the peers, every rank's result as without nodes. */
static void test_nodes_sim_failures(void) {
    redcoll_mock_config cfg = tn_config(5, 2, NULL);
    redcoll_mock_report rep;
    int i;
    CHECK(redcoll_mock_run(&cfg, ts_send_first, NULL, &rep) == REDCOLL_OK, "run");
    CHECK(rep.deadlocked, "a ring of blocking sends deadlocks under rendezvous, two levels too");
    for (i = 0; i < 5; ++i) CHECK(rep.results[i] == REDCOLL_ERR_DEADLOCK, "rank %d", i);
    redcoll_mock_report_free(&rep);
    for (i = 1; i <= 4; ++i) {
        rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_RING, 6, 100);
        rc_outcome o;
        s.sim.node_size = 2;
        s.use_model = 1;
        s.sim.model = redcoll_mock_defaults(1).model;
        s.sim.model.inter_alpha = 4e-6; s.sim.model.inter_beta = 1e-9;
        s.sim.fail_rank = 3; s.sim.fail_call = i;
        rc_run(&s, &o);
        CHECK(o.rep.results[3] == REDCOLL_ERR_TRANSPORT && !o.rep.deadlocked, "fault %d: rank 3 fails, no hang", i);
        rc_outcome_free(&o);
    }
    {
        static const int bad[2] = { 0, 2 };
        cfg = tn_config(2, 0, bad);
        CHECK(redcoll_mock_run(&cfg, ts_send_first, NULL, &rep) == REDCOLL_ERR_INVALID_ARG,
              "a node id outside 0..p-1 is refused");
        redcoll_mock_report_free(&rep);
    }
}


/* ---- the node-aware schedules ------------------------------------------------- */

static const redcoll_coll tn_colls[4] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE, REDCOLL_COLL_BCAST,
                                          REDCOLL_COLL_ALLGATHER };

/* A two-level model: slow links between nodes (the level choices follow it). */
static redcoll_cost_model tn_two_level(void) {
    redcoll_cost_model m = redcoll_options_resolved(NULL).model;
    m.alpha = 5e-7; m.beta = 5e-11;
    m.inter_alpha = 2e-6; m.inter_beta = 1e-10;
    return m;
}

/* The standard sweep (every p to 129, counts, roots, in place, every dtype x
   op, the matrix product) with nodes of 3 consecutive ranks from the
   options (the simulator gives no node_of), under a two-level model. */
static void tn_sweep(redcoll_algo algo) {
    redcoll_options o;
    int c;
    memset(&o, 0, sizeof o);
    o.ranks_per_node = 3;
    o.model = tn_two_level();
    for (c = 0; c < 4; ++c) tf_sweep_opts(tn_colls[c], algo, &o);
}

static void test_nodes_sweep_split(void) { tn_sweep(REDCOLL_ALGO_NODE_SPLIT); }
static void test_nodes_sweep_leader(void) { tn_sweep(REDCOLL_ALGO_NODE_LEADER); }

/* Node maps of every kind for p ranks into map (p entries): 0 blocks of 1,
   1 blocks of 2, 2 blocks of 5, 3 uneven sizes 3 1 4 1 5 9 2 6 ..., 4 round
   robin over 3 nodes (no node a run), 5 blocks of 4 with two nodes swapped
   (runs, ids out of order), 6 one node. */
#define TN_MAPS 7
static void tn_map(int kind, int p, int *map) {
    static const int sizes[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
    int r, g = 0, left = sizes[0];
    for (r = 0; r < p; ++r) {
        switch (kind) {
        case 0: map[r] = r; break;
        case 1: map[r] = r / 2; break;
        case 2: map[r] = r / 5; break;
        case 3:
            if (left == 0) left = sizes[++g % 8];
            map[r] = g; left--;
            break;
        case 4: map[r] = r % 3; break;
        case 5: map[r] = (r / 4) ^ 1; break;
        default: map[r] = 0; break;
        }
        if (map[r] >= p) map[r] = p - 1 - map[r] % p; /* ids stay below p */
    }
}

/* The nodes of map (p <= 40 ranks, ids below p): N, the smallest and the
   largest node's rank count. */
static void tn_shape(const int *map, int p, int *N, int *kmin, int *kmax) {
    int seen[40] = { 0 }, r, g;
    *N = 0; *kmin = p; *kmax = 0;
    for (r = 0; r < p; ++r) *N += seen[map[r]]++ == 0;
    for (g = 0; g < p; ++g)
        if (seen[g]) { *kmin = seen[g] < *kmin ? seen[g] : *kmin; *kmax = seen[g] > *kmax ? seen[g] : *kmax; }
}

/* Every node-aware row on every map, p = 1..40: counts 0, 1, p + 1, 1007,
   roots first, last and middle, in place or not, int32 sums, double sums
   and the non-commutative matrix product; every rank's result checked
   bitwise against the canonical-order reference. */
static void test_nodes_maps(void) {
    static const redcoll_algo algos[2] = { REDCOLL_ALGO_NODE_SPLIT, REDCOLL_ALGO_NODE_LEADER };
    static int map[40];
    int p, kind, ai, c, k;
    for (p = 1; p <= 40; ++p)
        for (kind = 0; kind < TN_MAPS; ++kind) {
            tn_map(kind, p, map);
            for (ai = 0; ai < 2; ++ai)
                for (c = 0; c < 4; ++c)
                    for (k = 0; k < 4; ++k) {
                        static const size_t counts[4] = { 0, 1, 2, 1007 };
                        rc_spec s = rc_spec_make(tn_colls[c], algos[ai], p, k == 2 ? (size_t)p + 1 : counts[k]);
                        s.sim.node_map = map;
                        s.use_model = 1;
                        s.sim.model = tn_two_level();
                        s.opts.model = s.sim.model;
                        s.root = k == 0 ? 0 : k == 1 ? p - 1 : p / 2;
                        s.in_place = tf_has_in_place(tn_colls[c]) && (p + k) % 2;
                        if (tn_colls[c] != REDCOLL_COLL_BCAST && tn_colls[c] != REDCOLL_COLL_ALLGATHER) {
                            if ((p + kind + k) % 3 == 0) s.op = "matmul";
                            else if ((p + kind + k) % 3 == 1) s.dtype = REDCOLL_DOUBLE;
                        }
                        tf_run_ok(&s);
                    }
        }
}


/* node_split's allreduce in chunks (its pipeline: the network steps of one
   chunk beside the ring steps inside the nodes for the next and the last),
   on every map of p = 1..40 whose node count is a power of two, under a
   slow network, where the model chooses chunks: int32 and double sums and
   a commutative user op, in place or not; every rank's result bitwise
   against the reference. Then on 256 ranks in nodes of 16 the estimate
   above the replay's limit is the simulated time, and at the target shape
   (1024 ranks, nodes of 32, 16 MiB) the pipeline beats the best one-level
   row the way docs/nodes.md reports. */
static void test_nodes_pipeline(void) {
    static int map[40];
    static const size_t counts[3] = { 65536, 100003, 300007 };
    redcoll_cost_model m = tn_two_level();
    int p, kind, ci, piped = 0;
    m.inter_beta = 2e-9;
    for (p = 1; p <= 40; ++p)
        for (kind = 0; kind < TN_MAPS; ++kind) {
            int N, kmin, kmax;
            tn_map(kind, p, map);
            tn_shape(map, p, &N, &kmin, &kmax);
            for (ci = 0; ci < 3; ++ci) {
                rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_SPLIT, p, counts[ci]);
                if (redcoll__pipe_chunks(&m, 0, counts[ci], 8, N, kmax, kmin, NULL) < 2) continue;
                piped++;
                s.sim.node_map = map;
                s.use_model = 1;
                s.sim.model = m;
                s.opts.model = m;
                s.in_place = (p + ci) % 2;
                s.dtype = REDCOLL_DOUBLE;
                if ((p + kind + ci) % 3 == 1) s.dtype = REDCOLL_INT32;
                if ((p + kind + ci) % 3 == 2) { s.dtype = REDCOLL_INT32; s.op = "user_sum"; }
                tf_run_ok(&s);
            }
        }
    CHECK(piped >= 60, "only %d pipelined cases", piped);
    {
        redcoll_options o = redcoll_options_resolved(NULL);
        double sim, cost;
        m = tn_two_level();
        o.model = m;
        o.ranks_per_node = 16;
        sim = tmo_sim_nodes(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_SPLIT, 256, 16, (size_t)1 << 20, &m);
        cost = redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_SPLIT, 256, (size_t)4 << 20, 4, &o);
        CHECK(redcoll__pipe_chunks(&m, 0, (size_t)1 << 20, 4, 16, 16, 16, NULL) > 1, "256 in 16s: not pipelined");
        CHECK(sim > 0 && fabs(cost / sim - 1) < 1e-6, "256 in 16s, 4 MiB: cost %.3f us, simulated %.3f us",
              cost * 1e6, sim * 1e6);
        o.ranks_per_node = 32;
        cost = redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_SPLIT, 1024, (size_t)16 << 20, 8, &o);
        sim = redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_BUTTERFLY, 1024, (size_t)16 << 20, 8, &o);
        CHECK(cost > 0 && cost < sim / 1.4, "1024 in 32s, 16 MiB: node_split %.1f us, butterfly %.1f us",
              cost * 1e6, sim * 1e6);
    }
}


/* node_lanes on every map, p = 1..40, and on nodes of 8 and of 8, 11, 9,
   16 ranks: counts 0, 1, 3, p + 1, 1007, in place or not, int32 and double
   sums and a commutative user op, under the two-level model, under a slow
   network (other plans: more lanes per block, fewer rounds) and where the
   link's bytes outweigh every latency (transposed plans: the swap in
   groups of nodes, with rounds among the groups or none, folded nodes and
   ranks); every rank's result bitwise against the reference. */
static void tn_lanes_map(int kind, int p, int *map) {
    static const int sizes[4] = { 8, 11, 9, 16 };
    int r, g = 0, left = sizes[0];
    if (kind < TN_MAPS) { tn_map(kind, p, map); return; }
    for (r = 0; r < p; ++r) {
        if (kind == TN_MAPS) { map[r] = r / 8; continue; }
        if (left == 0) left = sizes[++g % 4];
        map[r] = g; left--;
    }
}

static void test_nodes_lanes(void) {
    static int map[40];
    static const size_t counts[5] = { 0, 1, 3, 2, 1007 };
    int p, kind, k, model, transposed = 0, rounds = 0, folded = 0;
    for (model = 0; model < 3; ++model)
        for (p = 1; p <= 40; ++p)
            for (kind = 0; kind < TN_MAPS + 2; ++kind) {
                int N, kmin, kmax;
                tn_lanes_map(kind, p, map);
                tn_shape(map, p, &N, &kmin, &kmax);
                for (k = 0; k < 5; ++k) {
                    size_t n = k == 3 ? (size_t)p + 1 : counts[k];
                    rc_spec s = rc_spec_make(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_LANES, p, n);
                    redcoll__lanes pl;
                    s.sim.node_map = map;
                    s.use_model = 1;
                    s.sim.model = tn_two_level();
                    if (model == 1) { s.sim.model.inter_alpha = 2e-5; s.sim.model.inter_beta = 1e-9; }
                    if (model == 2) { /* the link's bytes outweigh every latency */
                        s.sim.model.alpha = 1e-10; s.sim.model.beta = s.sim.model.gamma = 1e-12;
                        s.sim.model.inter_alpha = s.sim.model.inter_beta = 1e-7;
                    }
                    s.opts.model = s.sim.model;
                    s.in_place = (p + k + model) % 2;
                    if ((p + kind + k) % 3 == 1) s.dtype = REDCOLL_DOUBLE;
                    if ((p + kind + k) % 3 == 2) s.op = "user_sum";
                    redcoll__lanes_plan(&s.sim.model, 0, n, s.dtype == REDCOLL_DOUBLE ? 8 : 4, N, kmin, kmax, &pl);
                    if (n && pl.G > 1) { transposed++; rounds += pl.R > 0; folded += pl.M < N || kmax > pl.P; }
                    tf_run_ok(&s);
                }
            }
    CHECK(transposed >= 150 && rounds >= 100 && folded >= 50, "transposed plans: %d, with rounds %d, folded %d",
          transposed, rounds, folded);
    if (tf_verbose) fprintf(stderr, "    transposed %d, with rounds %d, folded %d\n", transposed, rounds, folded);
    { /* the target shape: 1024 ranks in nodes of 32, 2 KiB: one swap each way, estimate = simulated */
        redcoll_options o = redcoll_options_resolved(NULL);
        redcoll__lanes pl;
        double sim, cost, hd;
        o.model = tn_two_level();
        o.ranks_per_node = 32;
        redcoll__lanes_plan(&o.model, 0, 512, 4, 32, 32, 32, &pl);
        CHECK(pl.G == 32 && pl.R == 0, "1024 in 32s, 2 KiB: plan G %d, %d rounds", pl.G, pl.R);
        sim = tmo_sim_nodes(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_LANES, 1024, 32, 512, &o.model);
        cost = redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_LANES, 1024, 2048, 4, &o);
        hd = redcoll_algo_cost(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_HALVING_DOUBLING, 1024, 2048, 4, &o);
        CHECK(sim > 0 && fabs(cost / sim - 1) < 1e-9, "1024 in 32s, 2 KiB: cost %.4f us, simulated %.4f us",
              cost * 1e6, sim * 1e6);
        CHECK(cost > 0 && cost <= hd / 2, "1024 in 32s, 2 KiB: node_lanes %.3f us, halving_doubling %.3f us",
              cost * 1e6, hd * 1e6);
    }
}

static void test_nodes_sweep_lanes(void) {
    redcoll_options o;
    memset(&o, 0, sizeof o);
    o.ranks_per_node = 3;
    o.model = tn_two_level();
    tf_sweep_opts(REDCOLL_COLL_ALLREDUCE, REDCOLL_ALGO_NODE_LANES, &o);
}

/* ---- the two-level cost model -------------------------------------------------- */

/* Node shapes (p, ranks per node) of the two-level tests. */
static const int tn_shapes[][2] = { { 4, 2 }, { 6, 3 }, { 8, 4 }, { 12, 4 }, { 16, 4 }, { 16, 8 },
                                    { 24, 8 }, { 10, 4 }, { 32, 8 }, { 64, 16 } };
#define TN_NSHAPES ((int)(sizeof tn_shapes / sizeof tn_shapes[0]))

/* Up to the replay's limit every row's two-level cost is its replay under
   the simulator's rules: equal to the simulated time (within rounding), on
   every shape, for every collective, counts 1 .. 100000, one-way factors
   or not. */
static void test_nodes_costs_exact(void) {
    static const size_t counts[] = { 1, 7, 1007, 16384, 100000 };
    const redcoll_algo_info *e;
    int i, si, ci, mi, bad = 0, runs = 0;
    for (mi = 0; mi < 2; ++mi) {
        redcoll_cost_model m = tn_two_level();
        if (mi) { m.f_alpha = 0.7; m.f_beta = 0.9; }
        for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
            if (e->algo == REDCOLL_ALGO_HIERARCHICAL || e->coll == REDCOLL_COLL_ALLGATHERV ||
                e->coll == REDCOLL_COLL_REDUCE_SCATTER)
                continue; /* the harness's counts are uneven; the cost sees the total */
            for (si = 0; si < TN_NSHAPES; ++si)
                for (ci = 0; ci < 5; ++ci) {
                    int p = tn_shapes[si][0], k = tn_shapes[si][1];
                    redcoll_options o;
                    double sim, cost;
                    if ((p > 24 || mi) && ci % 2) continue; /* keep the run short */
                    memset(&o, 0, sizeof o);
                    o.model = m;
                    o.ranks_per_node = k;
                    sim = tmo_sim_nodes(e->coll, e->algo, p, k, counts[ci], &m);
                    cost = redcoll_algo_cost(e->coll, e->algo, p, tmo_bytes(e->coll, p, counts[ci]), 4, &o);
                    ++runs;
                    if (!(sim > 0 && fabs(cost - sim) <= 1e-9 * sim) && bad++ < 20)
                        CHECK(0, "%s/%s p=%d k=%d n=%zu model %d: cost %.6f us, simulator %.6f us",
                              redcoll_coll_name(e->coll), redcoll_algo_name(e->algo), p, k, counts[ci], mi,
                              cost * 1e6, sim * 1e6);
                }
        }
    }
    CHECK(bad == 0 && runs > 1000, "%d of %d differ", bad, runs);
}


/* AUTO under the two-level model against the simulator's argmin over the
   same rows (every row of the collective but hierarchical, the node-aware
   ones included), on a grid of node shapes: AUTO, run as a collective on
   the simulator's nodes (node_of), takes the least time (within rounding).
   Up to the replay's limit every row is priced by its replay, so AUTO is
   exact; allgatherv and reduce_scatter are left to their own tests (the
   harness's counts are uneven). */
static void tn_argmin(const redcoll_cost_model *m, int *bad, int *runs) {
    static const size_t counts[] = { 1, 7, 1007, 16384, 100000 };
    int c, si, ci, i;
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c) {
        if (c == REDCOLL_COLL_ALLGATHERV || c == REDCOLL_COLL_REDUCE_SCATTER) continue;
        for (si = 0; si < TN_NSHAPES; ++si)
            for (ci = 0; ci < 5; ++ci) {
                int p = tn_shapes[si][0], k = tn_shapes[si][1];
                const redcoll_algo_info *e;
                redcoll_algo best_algo = REDCOLL_ALGO_AUTO;
                double best = -1, picked;
                if (c == REDCOLL_COLL_BARRIER && ci) continue;
                if ((c == REDCOLL_COLL_ALLTOALL || c == REDCOLL_COLL_ALLGATHER || c == REDCOLL_COLL_GATHER ||
                     c == REDCOLL_COLL_SCATTER || c == REDCOLL_COLL_REDUCE_SCATTER_BLOCK) && ci == 4)
                    continue; /* per block: keep the run short */
                for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
                    double t;
                    if ((int)e->coll != c || e->algo == REDCOLL_ALGO_HIERARCHICAL) continue;
                    t = tmo_sim_nodes(e->coll, e->algo, p, k, counts[ci], m);
                    if (best < 0 || t < best * (1 - 1e-12)) { best = t; best_algo = e->algo; }
                }
                picked = tmo_sim_nodes((redcoll_coll)c, REDCOLL_ALGO_AUTO, p, k, counts[ci], m);
                ++*runs;
                if (!(picked > 0 && picked <= best * (1 + 1e-9)) && (*bad)++ < 20)
                    CHECK(0, "%s p=%d k=%d n=%zu: AUTO %.4f us, the simulator's best is %s (%.4f us)",
                          redcoll_coll_name(c), p, k, counts[ci], picked * 1e6, redcoll_algo_name(best_algo),
                          best * 1e6);
            }
    }
}

static void test_nodes_auto_argmin(void) {
    redcoll_cost_model m = tn_two_level();
    int bad = 0, runs = 0;
    tn_argmin(&m, &bad, &runs);
    m.f_alpha = 0.7; m.f_beta = 0.9;                   /* one-way factors */
    tn_argmin(&m, &bad, &runs);
    m = tn_two_level();
    m.inter_alpha = 1e-5; m.inter_beta = 1e-9;         /* a slow network */
    tn_argmin(&m, &bad, &runs);
    CHECK(bad == 0 && runs > 500, "%d of %d cases: AUTO not the simulator's argmin", bad, runs);
}


/* Above the replay's limit the one-level rows are estimated by how their
   messages meet the nodes (redcoll__two_level_estimate) and the node-aware
   rows by their levels: cost / simulated time stays in these bounds, on
   nodes of 8 and 32 at p = 200 and 160 (measured; the README states them).
   Estimates above the time cost a row AUTO's favour; those below could
   make AUTO pick it wrongly, and stay above 0.8. */
typedef struct tn_bound { redcoll_algo algo; redcoll_coll coll; double lo, hi; } tn_bound;
static const tn_bound tn_bounds[] = {
    { REDCOLL_ALGO_RECURSIVE_DOUBLING, REDCOLL_COLL_ALLREDUCE, 1.0, 1.6 },
    { REDCOLL_ALGO_RECURSIVE_DOUBLING, REDCOLL_COLL_REDUCE_SCATTER_BLOCK, 0.98, 1.0 },
    { REDCOLL_ALGO_HALVING_DOUBLING, REDCOLL_COLL_ALLREDUCE, 0.99, 1.1 },
    { REDCOLL_ALGO_HALVING_DOUBLING, REDCOLL_COLL_REDUCE, 0.87, 1.01 },
    { REDCOLL_ALGO_BINARY_BLOCKS, REDCOLL_COLL_ALLREDUCE, 1.0, 1.3 },
    { REDCOLL_ALGO_BINARY_BLOCKS, REDCOLL_COLL_REDUCE, 1.0, 1.02 },
    { REDCOLL_ALGO_RING, REDCOLL_COLL_ALLREDUCE, 1.0, 1.15 },
    { REDCOLL_ALGO_RING, REDCOLL_COLL_REDUCE, 1.0, 1.2 },
    { REDCOLL_ALGO_BUTTERFLY, REDCOLL_COLL_ALLREDUCE, 0.77, 1.1 },
    { REDCOLL_ALGO_BUTTERFLY, REDCOLL_COLL_REDUCE, 0.77, 1.1 },
    { REDCOLL_ALGO_ELIMINATION, REDCOLL_COLL_ALLREDUCE, 0.79, 1.03 },
    { REDCOLL_ALGO_ELIMINATION, REDCOLL_COLL_REDUCE, 0.9, 1.03 },
    { REDCOLL_ALGO_ELIMINATION_NONOVERLAP, REDCOLL_COLL_ALLREDUCE, 0.79, 1.03 },
    { REDCOLL_ALGO_ELIMINATION_NONOVERLAP, REDCOLL_COLL_REDUCE, 0.9, 1.03 },
    { REDCOLL_ALGO_FACTOR_RING, REDCOLL_COLL_ALLREDUCE, 0.85, 1.03 },
    { REDCOLL_ALGO_FACTOR_RING, REDCOLL_COLL_REDUCE, 0.85, 1.03 },
    { REDCOLL_ALGO_BRUCK, REDCOLL_COLL_ALLGATHER, 1.0, 1.15 },
    { REDCOLL_ALGO_BRUCK, REDCOLL_COLL_ALLTOALL, 1.0, 2.4 },
    { REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING, REDCOLL_COLL_BCAST, 1.0, 2.0 },
    { REDCOLL_ALGO_SCATTER_RING, REDCOLL_COLL_BCAST, 1.0, 1.03 },
    { REDCOLL_ALGO_SCATTERED, REDCOLL_COLL_ALLTOALL, 1.0, 1.25 },
    { REDCOLL_ALGO_PAIRWISE, REDCOLL_COLL_ALLTOALL, 1.0, 1.21 },
    { REDCOLL_ALGO_PAIRWISE, REDCOLL_COLL_REDUCE_SCATTER_BLOCK, 1.0, 1.21 },
    { REDCOLL_ALGO_RECURSIVE_HALVING, REDCOLL_COLL_REDUCE_SCATTER_BLOCK, 1.0, 1.95 },
    { REDCOLL_ALGO_FLAT, REDCOLL_COLL_REDUCE, 1.0, 1.18 },
    { REDCOLL_ALGO_FLAT, REDCOLL_COLL_BCAST, 1.0, 1.18 },
    { REDCOLL_ALGO_CHAIN, REDCOLL_COLL_REDUCE, 1.0, 3.8 },
    { REDCOLL_ALGO_CHAIN, REDCOLL_COLL_BCAST, 1.0, 3.8 },
    { REDCOLL_ALGO_PIPELINE, REDCOLL_COLL_REDUCE, 1.0, 3.8 },
    { REDCOLL_ALGO_PIPELINE, REDCOLL_COLL_BCAST, 1.0, 3.8 },
    { REDCOLL_ALGO_BINARY, REDCOLL_COLL_REDUCE, 0.8, 2.7 },
    { REDCOLL_ALGO_IN_ORDER_BINARY, REDCOLL_COLL_REDUCE, 0.8, 16 },
    { REDCOLL_ALGO_NODE_SPLIT, REDCOLL_COLL_ALLREDUCE, 0.99, 1.02 },
    { REDCOLL_ALGO_NODE_SPLIT, REDCOLL_COLL_REDUCE, 1.0, 1.02 },
    { REDCOLL_ALGO_NODE_SPLIT, REDCOLL_COLL_BCAST, 0.78, 1.2 },
    { REDCOLL_ALGO_NODE_LEADER, REDCOLL_COLL_ALLREDUCE, 0.999, 1.001 },
    { REDCOLL_ALGO_NODE_LANES, REDCOLL_COLL_ALLREDUCE, 0.97, 1.01 },
};

static void test_nodes_estimates(void) {
    static const int shapes[2][2] = { { 200, 8 }, { 160, 32 } };
    static const size_t counts[3] = { 1, 1007, 16384 };
    redcoll_cost_model m = tn_two_level();
    const redcoll_algo_info *e;
    int i, si, ci, b;
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
        double lo = 1e9, hi = 0, want_lo = 1.0, want_hi = 1.0;
        if (e->algo == REDCOLL_ALGO_HIERARCHICAL || e->coll == REDCOLL_COLL_ALLGATHERV ||
            e->coll == REDCOLL_COLL_REDUCE_SCATTER)
            continue;
        for (b = 0; b < (int)(sizeof tn_bounds / sizeof tn_bounds[0]); ++b)
            if (tn_bounds[b].algo == e->algo && tn_bounds[b].coll == e->coll) {
                want_lo = tn_bounds[b].lo; want_hi = tn_bounds[b].hi;
            }
        for (si = 0; si < 2; ++si)
            for (ci = 0; ci < 3; ++ci) {
                int p = shapes[si][0], k = shapes[si][1];
                size_t n = counts[ci] > 1000 && rc_blocks(e->coll) ? 1000 : counts[ci];
                redcoll_options o;
                double sim, cost, r;
                memset(&o, 0, sizeof o);
                o.model = m;
                o.ranks_per_node = k;
                sim = tmo_sim_nodes(e->coll, e->algo, p, k, n, &m);
                cost = redcoll_algo_cost(e->coll, e->algo, p, tmo_bytes(e->coll, p, n), 4, &o);
                r = sim > 0 ? cost / sim : -1;
                if (r < lo) lo = r;
                if (r > hi) hi = r;
            }
        CHECK(lo >= want_lo * (1 - 1e-9) && hi <= want_hi * (1 + 1e-9),
              "%s/%s: cost / simulated time %.3f .. %.3f, stated %.2f .. %.2f", redcoll_coll_name(e->coll),
              redcoll_algo_name(e->algo), lo, hi, want_lo, want_hi);
        if (tf_verbose)
            fprintf(stderr, "    %s/%s %.3f .. %.3f\n", redcoll_coll_name(e->coll), redcoll_algo_name(e->algo), lo, hi);
    }
}


/* AUTO above the replay's limit, on estimates: its pick's simulated time
   over the best row's stays below the stated regret, for the node-aware
   collectives at p = 256 (nodes of 16) and 512 (nodes of 32). */
#define TN_REGRET 1.05
static void test_nodes_auto_estimated(void) {
    static const int shapes[2][2] = { { 256, 16 }, { 512, 32 } };
    static const size_t counts[4] = { 1, 256, 16384, 262144 };
    redcoll_cost_model m = tn_two_level();
    int c, si, ci, i;
    double worst = 1;
    for (c = 0; c < 4; ++c)
        for (si = 0; si < 2; ++si)
            for (ci = 0; ci < 4; ++ci) {
                int p = shapes[si][0], k = shapes[si][1];
                size_t n = tn_colls[c] == REDCOLL_COLL_ALLGATHER ? counts[ci] / 64 + 1 : counts[ci];
                const redcoll_algo_info *e;
                double best = -1, picked, r;
                redcoll_algo best_algo = REDCOLL_ALGO_AUTO;
                for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
                    double t;
                    if (e->coll != tn_colls[c] || e->algo == REDCOLL_ALGO_HIERARCHICAL) continue;
                    if (p > 256 && n > 1000 && (e->algo == REDCOLL_ALGO_FLAT || e->algo == REDCOLL_ALGO_CHAIN ||
                                                e->algo == REDCOLL_ALGO_RING))
                        continue; /* slow to simulate, far from the best */
                    t = tmo_sim_nodes(e->coll, e->algo, p, k, n, &m);
                    if (t > 0 && (best < 0 || t < best)) { best = t; best_algo = e->algo; }
                }
                picked = tmo_sim_nodes(tn_colls[c], REDCOLL_ALGO_AUTO, p, k, n, &m);
                r = picked / best;
                if (r > worst) worst = r;
                CHECK(picked > 0 && r <= TN_REGRET, "%s p=%d k=%d n=%zu: AUTO %.3f us, best %s %.3f us (%.3fx)",
                      redcoll_coll_name(tn_colls[c]), p, k, n, picked * 1e6, redcoll_algo_name(best_algo),
                      best * 1e6, r);
            }
    if (tf_verbose) fprintf(stderr, "    worst regret %.4f\n", worst);
}


/* The profile carries both levels: inter_alpha and inter_beta round trip,
   a profile without them (as written before them) parses with 0 (one
   level), and they are refused as the other numbers are. */
static void test_nodes_profile(void) {
    redcoll_cost_model m, back;
    char buf[2048];
    memset(&m, 0, sizeof m);
    m.alpha = 5e-7; m.beta = 1.0 / 3e10; m.gamma = 2.5e-11; m.f_alpha = 0.7; m.f_beta = 0.9;
    m.inter_alpha = 2.1e-6; m.inter_beta = 1.0 / 7e9;
    CHECK(redcoll_cost_model_format(&m, buf, sizeof buf) > 0, "format");
    CHECK(strstr(buf, "\ninter_alpha ") && strstr(buf, "\ninter_beta "), "both levels written:\n%s", buf);
    memset(&back, 0x55, sizeof back);
    CHECK(redcoll_cost_model_parse(buf, &back, NULL, 0) == REDCOLL_OK && memcmp(&m, &back, sizeof m) == 0,
          "the same doubles back");
    memset(&back, 0x55, sizeof back);
    CHECK(redcoll_cost_model_parse("redcoll_profile 1\nalpha 1e-6\nbeta 1e-10\ngamma 1e-11\nf_alpha 1\nf_beta 1\n",
                                   &back, NULL, 0) == REDCOLL_OK && back.inter_alpha == 0 && back.inter_beta == 0,
          "an older profile: one level");
    {
        static const char *bad[] = { "inter_alpha 0\n", "inter_beta -1e-10\n", "inter_alpha x\n",
                                     "inter_beta 1e-10\ninter_beta 2e-10\n" };
        int i;
        for (i = 0; i < 4; ++i) {
            char text[512], err[128] = "";
            snprintf(text, sizeof text, "redcoll_profile 1\nalpha 1e-6\nbeta 1e-10\ngamma 1e-11\nf_alpha 1\nf_beta 1\n%s",
                     bad[i]);
            CHECK(redcoll_cost_model_parse(text, &back, err, sizeof err) == REDCOLL_ERR_INVALID_ARG &&
                  strstr(err, "inter_"), "refused: %s (%s)", bad[i], err);
        }
    }
    m.inter_alpha = m.inter_beta = 0; /* one level: no inter keys */
    redcoll_cost_model_format(&m, buf, sizeof buf);
    CHECK(!strstr(buf, "inter_"), "a one-level model writes no inter keys");
}

static void suite_nodes(void) {
    tf_test("nodes/sim: one message alone", test_nodes_sim_alone);
    tf_test("nodes/sim: a node's link shared", test_nodes_sim_shared);
    tf_test("nodes/sim: shares as messages join and leave", test_nodes_sim_join_leave);
    tf_test("nodes/sim: inside nodes, one-level rules", test_nodes_sim_inside);
    tf_test("nodes/sim: one node or equal links is one level", test_nodes_sim_one_level);
    tf_test("nodes/sim: deadlock and faults", test_nodes_sim_failures);
    tf_test("nodes/every map, p = 1..40, every node-aware row", test_nodes_maps);
    tf_test("nodes/pipeline: node_split's allreduce in chunks", test_nodes_pipeline);
    tf_test("nodes/lanes: every map, p = 1..40, transposed plans too", test_nodes_lanes);
    tf_test("sweep/node_lanes (nodes of 3)", test_nodes_sweep_lanes);
    tf_test("sweep/node_split (nodes of 3)", test_nodes_sweep_split);
    tf_test("sweep/node_leader (nodes of 3)", test_nodes_sweep_leader);
    tf_test("nodes/model: costs replayed as simulated", test_nodes_costs_exact);
    tf_test("nodes/model: auto is the simulator's argmin on node shapes", test_nodes_auto_argmin);
    tf_test("nodes/model: estimates above the replay's limit", test_nodes_estimates);
    tf_test("nodes/model: auto on estimates, p = 256 and 512", test_nodes_auto_estimated);
    tf_test("nodes/profile: both levels round trip", test_nodes_profile);
}
