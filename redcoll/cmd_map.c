/* cmd_map.c - `redcoll map`: the selection map as SVG, like Fig. 4 of
   Rabenseifner 2004. Included by main.c.

   A grid of process counts (x, log scale) by message sizes (y, log scale),
   each cell coloured by the algorithm that wins there: the least modeled
   time (the library's cost functions and argmin, which AUTO follows; the
   default), the fastest on the simulator in no-data mode (every candidate
   run), what redcoll_select picks, or the fastest measured in a bench CSV.
   The p values are log-spaced (--p-per-octave a doubling, every p where
   they are closer than 1, powers of two always among them), so every cell
   is a few pixels wide however large p gets; --p-step takes every S-th p
   instead. Cells of one row with the same winner are drawn as one rect
   carrying data-p-min, data-p-max, data-bytes and data-algo, inside a group
   whose data-p lists the grid's p values, so the map stays small and
   scripts can read it back. The legend's shares are of the drawn area. */

typedef struct map_grid {
    int     np, ns;
    int    *p;       /* np process counts, ascending */
    size_t *bytes;   /* ns sizes, ascending */
    int    *win;     /* np * ns: the winning algorithm, -1 none; [s * np + i] */
} map_grid;

static void map_free(map_grid *g) { free(g->p); free(g->bytes); free(g->win); memset(g, 0, sizeof *g); }

static int map_alloc(map_grid *g, int np, int ns) {
    int k;
    g->np = np;
    g->ns = ns;
    g->p = (int *)calloc((size_t)np + 1, sizeof(int));
    g->bytes = (size_t *)calloc((size_t)ns + 1, sizeof(size_t));
    g->win = (int *)malloc(((size_t)np * (size_t)ns + 1) * sizeof(int));
    if (!g->p || !g->bytes || !g->win) { map_free(g); return 0; }
    for (k = 0; k < np * ns; ++k) g->win[k] = -1;
    return 1;
}

/* The grid's p values: every --p-step from --p-min, or log-spaced: the
   rounded 2^(j / --p-per-octave) between --p-min and --p-max (powers of two
   included), plus both ends. n: how many; p NULL: only count. */
static int map_p_values(const cli *c, int *p) {
    int n = 0, j, last = 0;
    if (c->given[F_P_STEP]) {
        long long v;
        for (v = c->p_min; v <= c->p_max; v += c->p_step) { if (p) p[n] = (int)v; ++n; }
        return n;
    }
    for (j = (int)floor(c->p_octave * log2((double)c->p_min)) - 1;; ++j) {
        double x = floor(pow(2.0, (double)j / c->p_octave) + 0.5);
        int v = x < c->p_min ? c->p_min : x > c->p_max ? c->p_max : (int)x;
        if (v > last) { if (p) p[n] = v; ++n; last = v; }
        if (v == c->p_max) break;
    }
    return n;
}

/* The grid of the flags: p as map_p_values, sizes -b .. -e by -f (-e last). */
static int map_axes(const cli *c, map_grid *g) {
    int ns = 0;
    size_t b;
    for (b = c->min_bytes; b; b = cli_next_size(c, b)) ++ns;
    if (!map_alloc(g, map_p_values(c, NULL), ns)) return 0;
    map_p_values(c, g->p);
    for (ns = 0, b = c->min_bytes; b; b = cli_next_size(c, b)) g->bytes[ns++] = b;
    return 1;
}

/* The case of one cell, the one place its model is set: the simulator's
   configuration (sim) and the options the cost functions and the selector
   read (opts, with opts.model), both from the flags; count from the size
   (per block for block collectives). */
static rc_spec map_spec(const cli *c, int p, size_t bytes, redcoll_algo algo) {
    rc_spec s = c->spec;
    size_t unit = redcoll_dtype_size(s.dtype) * (rc_blocks(s.coll) ? (size_t)p : 1);
    s.p = p;
    s.count = bytes / unit ? bytes / unit : 1;
    s.root = 0;
    s.opts.algo = algo;
    s.sim.no_data = 1;
    s.sim.fail_call = 0;
    return s;
}

static int map_candidate(const cli *c, int a) {
    return a > 0 && redcoll_algo_supported(c->spec.coll, (redcoll_algo)a) &&
           !cli_algo_problem(c->spec.coll, (redcoll_algo)a, c->commutative || !rc_reduces(c->spec.coll));
}

/* Winners in the cost model: the least redcoll_algo_cost among the rows
   AUTO chooses from, priced in whole elements of the dtype as a collective
   prices its call (the library's argmin, so a cell is what AUTO runs). */
static int map_from_model(const cli *c, map_grid *g) {
    int i, s, comm = c->commutative || !rc_reduces(c->spec.coll);
    for (i = 0; i < g->np; ++i)
        for (s = 0; s < g->ns; ++s) {
            rc_spec sp = map_spec(c, g->p[i], g->bytes[s], REDCOLL_ALGO_AUTO);
            redcoll_options o = redcoll_options_resolved(&sp.opts);
            size_t es = redcoll_dtype_size(sp.dtype);
            redcoll_algo a = redcoll__select_model(sp.coll, sp.p, cli_sel_bytes(sp.coll, sp.p, sp.count, es),
                                                   es, comm, &o);
            g->win[s * g->np + i] = a == REDCOLL_ALGO_AUTO ? -1 : (int)a;
        }
    return 0;
}

/* Winners on the simulator: every candidate run, no data. */
static int map_from_simulator(const cli *c, map_grid *g) {
    double total_calls = 0, total_events = 0, scale = 0;
    int i, s, a, pmax = g->p[g->np - 1];
    for (i = 0; i < g->np; ++i) scale += ((double)g->p[i] / pmax) * ((double)g->p[i] / pmax);
    /* the work: each cell's probe at the largest p, scaled by (p / pmax)^2
       (ranks x messages per rank, the ring's growth) */
    for (s = 0; s < g->ns; ++s)
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
            rc_spec sp;
            cli_work w;
            if (!map_candidate(c, a)) continue;
            sp = map_spec(c, pmax, g->bytes[s], (redcoll_algo)a);
            w = cli_estimate(&sp);
            total_calls += w.calls * scale;
            total_events += w.events * scale;
        }
    if (!c->force && total_events > c->limit) {
        fprintf(stderr, "redcoll: map from the simulator would simulate about %.3g events (%d x %d cells, "
                "every candidate), above the limit of %.3g (--limit); fewer p (--p-max, --p-per-octave) "
                "or sizes (-f) shrink it, --force runs it anyway, and --from model (the default) draws "
                "the cost model's map at once\n", total_events, g->np, g->ns, c->limit);
        return 2;
    }
    cli_progress_begin("map", total_calls, c->progress_after);
    for (i = 0; i < g->np; ++i)
        for (s = 0; s < g->ns; ++s) {
            double best = 0;
            for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
                rc_spec sp;
                rc_outcome o;
                if (!map_candidate(c, a)) continue;
                sp = map_spec(c, g->p[i], g->bytes[s], (redcoll_algo)a);
                if (cli_sim(&sp, &o) != REDCOLL_OK) continue;
                if (o.ok && (g->win[s * g->np + i] < 0 || o.rep.time < best)) {
                    best = o.rep.time;
                    g->win[s * g->np + i] = a;
                }
                rc_outcome_free(&o);
            }
        }
    cli_progress_end();
    return 0;
}

static int map_from_selector(const cli *c, map_grid *g) {
    int i, s;
    for (i = 0; i < g->np; ++i)
        for (s = 0; s < g->ns; ++s) {
            rc_spec sp = map_spec(c, g->p[i], g->bytes[s], REDCOLL_ALGO_AUTO);
            g->win[s * g->np + i] = (int)cli_selected(c, &sp);
        }
    return 0;
}

/* ---- from a bench CSV ----------------------------------------------------------- */

typedef struct map_row { int p; size_t bytes; int algo; double time; } map_row;

static int map_int_cmp(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}
static int map_size_cmp(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* Splits a CSV line in place (no quoting: bench writes none). */
static int map_split(char *line, char **f, int cap) {
    int n = 0;
    while (n < cap) {
        f[n++] = line;
        line = strchr(line, ',');
        if (!line) break;
        *line++ = 0;
    }
    return n;
}

static int map_from_csv(const cli *c, map_grid *g) {
    enum { C_COLL, C_ALGO, C_P, C_BYTES, C_TIME, C_RESULT, C_N };
    static const char *const names[C_N] = { "coll", "algo", "p", "bytes", "time_us", "result" };
    int col[C_N], have = 0, nrows = 0, cap = 0, i, k, np = 0, ns = 0;
    map_row *rows = NULL;
    char *text = rc_read_file(c->from_csv), *line, *next;
    const char *coll = redcoll_coll_name(c->spec.coll);
    double *best;
    if (!text) return cli_bad("--from-csv %s: %s", c->from_csv, strerror(errno));
    for (line = text; line && *line; line = next) {
        char *f[64];
        int n;
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (line[0] == '#' || !line[0]) continue;
        n = map_split(line, f, 64);
        if (strcmp(f[0], "coll") == 0) { /* a header: where the columns are */
            for (k = 0; k < C_N; ++k) {
                col[k] = -1;
                for (i = 0; i < n; ++i) if (strcmp(f[i], names[k]) == 0) col[k] = i;
                if (col[k] < 0 && k != C_RESULT) { free(text); free(rows); return cli_bad("--from-csv %s: no column %s", c->from_csv, names[k]); }
            }
            have = 1;
            continue;
        }
        if (!have) { free(text); free(rows); return cli_bad("--from-csv %s: no header line (coll,algo,...)", c->from_csv); }
        if (col[C_TIME] >= n || strcmp(f[col[C_COLL]], coll) != 0 || !f[col[C_TIME]][0]) continue;
        if (col[C_RESULT] >= 0 && col[C_RESULT] < n && strcmp(f[col[C_RESULT]], "ok") != 0) continue;
        if (nrows == cap) {
            map_row *gr = (map_row *)realloc(rows, (size_t)(cap = 2 * cap + 64) * sizeof *rows);
            if (!gr) { free(text); free(rows); return 1; }
            rows = gr;
        }
        {
            map_row *r = &rows[nrows];
            redcoll_algo a;
            if (!redcoll_algo_from_name(f[col[C_ALGO]], &a) || a == REDCOLL_ALGO_AUTO) continue; /* auto, native */
            r->algo = (int)a;
            r->p = atoi(f[col[C_P]]);
            r->bytes = (size_t)strtoull(f[col[C_BYTES]], NULL, 10);
            r->time = atof(f[col[C_TIME]]);
            if (r->p > 0) ++nrows;
        }
    }
    free(text);
    if (!nrows) { free(rows); return cli_bad("--from-csv %s: no %s rows", c->from_csv, coll); }
    g->p = (int *)malloc((size_t)nrows * sizeof(int));
    g->bytes = (size_t *)malloc((size_t)nrows * sizeof(size_t));
    if (!g->p || !g->bytes) { free(rows); map_free(g); return 1; }
    for (i = 0; i < nrows; ++i) { g->p[i] = rows[i].p; g->bytes[i] = rows[i].bytes; }
    qsort(g->p, (size_t)nrows, sizeof(int), map_int_cmp);
    qsort(g->bytes, (size_t)nrows, sizeof(size_t), map_size_cmp);
    for (i = 0; i < nrows; ++i) if (!np || g->p[np - 1] != g->p[i]) g->p[np++] = g->p[i];
    for (i = 0; i < nrows; ++i) if (!ns || g->bytes[ns - 1] != g->bytes[i]) g->bytes[ns++] = g->bytes[i];
    {
        int *ps = g->p;
        size_t *bs = g->bytes;
        g->p = NULL; g->bytes = NULL;
        if (!map_alloc(g, np, ns)) { free(ps); free(bs); free(rows); return 1; }
        memcpy(g->p, ps, (size_t)np * sizeof(int));
        memcpy(g->bytes, bs, (size_t)ns * sizeof(size_t));
        free(ps);
        free(bs);
    }
    best = (double *)calloc((size_t)np * (size_t)ns, sizeof(double));
    if (!best) { free(rows); return 1; }
    for (k = 0; k < nrows; ++k) {
        int pi = 0, si = 0, at;
        while (g->p[pi] != rows[k].p) ++pi;
        while (g->bytes[si] != rows[k].bytes) ++si;
        at = si * np + pi;
        if (g->win[at] < 0 || rows[k].time < best[at]) { g->win[at] = rows[k].algo; best[at] = rows[k].time; }
    }
    free(best);
    free(rows);
    return 0;
}

/* ---- drawing --------------------------------------------------------------------- */

/* Stable colours, indexed by algorithm enum value. */
static const char *map_colour(int algo) {
    static const char *const pal[] = {
        "#bab0ac", "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
        "#ff9da7", "#9c755f", "#1f77b4", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896",
        "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5", "#bcbd22", "#8c564b", "#e377c2",
        "#7f7f7f"
    };
    return pal[(size_t)algo % (sizeof pal / sizeof pal[0])];
}

/* Cell edges on a log axis: geometric midpoints between neighbours. */
static void map_edges(const double *v, int n, double *e) {
    int i;
    for (i = 1; i < n; ++i) e[i] = sqrt(v[i - 1] * v[i]);
    e[0] = n > 1 ? v[0] * v[0] / e[1] : v[0] / sqrt(2.0);
    e[n] = n > 1 ? v[n - 1] * v[n - 1] / e[n - 1] : v[0] * sqrt(2.0);
}

/* "12%", "<1%" for a share that is there but rounds to 0, ">99%" likewise. */
static const char *map_percent(char *buf, size_t cap, double share) {
    if (share > 0 && share < 0.005) snprintf(buf, cap, "<1%%");
    else if (share < 1 && share > 0.995) snprintf(buf, cap, ">99%%");
    else snprintf(buf, cap, "%.0f%%", 100 * share);
    return buf;
}

static void map_svg(FILE *f, const cli *c, const map_grid *g, const char *source) {
    const double X0 = 80, Y0 = 70, PW = 720, PH = 440, LX = 830;
    double *pv = (double *)malloc(((size_t)g->np + 1) * sizeof(double) * 2);
    double *sv = (double *)malloc(((size_t)g->ns + 1) * sizeof(double) * 2);
    double *pe, *se, lx0, lx1, ly0, ly1, t, tstep, area[REDCOLL_ALGO_COUNT + 1], drawn = 0;
    int i, s, a, shown = 0;
    char lab[64];
    if (!pv || !sv) { free(pv); free(sv); return; }
    pe = pv + g->np + 1;
    se = sv + g->ns + 1;
    for (i = 0; i < g->np; ++i) pv[i] = g->p[i];
    for (s = 0; s < g->ns; ++s) sv[s] = (double)(g->bytes[s] ? g->bytes[s] : 1);
    map_edges(pv, g->np, pe);
    map_edges(sv, g->ns, se);
    lx0 = log(pe[0]); lx1 = log(pe[g->np]);
    ly0 = log(se[0]); ly1 = log(se[g->ns]);
#define MAP_X(v) (X0 + PW * (log(v) - lx0) / (lx1 - lx0))
#define MAP_Y(v) (Y0 + PH - PH * (log(v) - ly0) / (ly1 - ly0))
    memset(area, 0, sizeof area);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1100\" height=\"580\" "
               "viewBox=\"0 0 1100 580\" font-family=\"sans-serif\" font-size=\"12\">\n"
               "<rect width=\"1100\" height=\"580\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%g\" y=\"24\" font-size=\"16\">%s (%s, %s): %s</text>\n", X0,
            redcoll_coll_name(c->spec.coll), redcoll_dtype_name(c->spec.dtype), c->spec.op, source);
    fprintf(f, "<text x=\"%g\" y=\"44\" fill=\"#555\">", X0);
    if (!c->from_csv) {
        const redcoll_cost_model *m = &c->spec.sim.model;
        fprintf(f, "alpha %.3g s, beta %.3g s/B, gamma %.3g s/B, f_alpha %.3g, f_beta %.3g%s%s; ",
                m->alpha, m->beta, m->gamma, m->f_alpha, m->f_beta, c->profile ? ", profile " : "",
                c->profile ? c->profile : "");
        if (cli_two_level(c))
            fprintf(f, "nodes of %d, between them alpha %.3g s, beta %.3g s/B (shared link); ",
                    c->spec.sim.node_size, m->inter_alpha > 0 ? m->inter_alpha : m->alpha,
                    m->inter_beta > 0 ? m->inter_beta : m->beta);
    }
    fprintf(f, "p %d..%d (%d values", g->p[0], g->p[g->np - 1], g->np);
    if (!c->from_csv && !c->given[F_P_STEP]) fprintf(f, ", %d per doubling", c->p_octave);
    else if (!c->from_csv && c->p_step > 1) fprintf(f, ", every %d", c->p_step);
    fprintf(f, "), %d sizes; redcoll %s</text>\n", g->ns, REDCOLL_VERSION_STRING);
    /* cells: one rect per run of equal winners along a row */
    fprintf(f, "<g shape-rendering=\"crispEdges\" data-p=\"");
    for (i = 0; i < g->np; ++i) fprintf(f, "%s%d", i ? " " : "", g->p[i]);
    fprintf(f, "\">\n");
    for (s = 0; s < g->ns; ++s)
        for (i = 0; i < g->np;) {
            int w = g->win[s * g->np + i], j = i;
            double x = MAP_X(pe[i]), y = MAP_Y(se[s + 1]), wd, ht;
            while (j + 1 < g->np && g->win[s * g->np + j + 1] == w) ++j;
            wd = MAP_X(pe[j + 1]) - x;
            ht = MAP_Y(se[s]) - y;
            if (w >= 0) {
                area[w] += wd * ht; /* the legend's shares: what the picture shows */
                drawn += wd * ht;
                cli_human(lab, sizeof lab, sv[s]);
                fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" "
                           "data-p-min=\"%d\" data-p-max=\"%d\" data-bytes=\"%zu\" data-algo=\"%s\">"
                           "<title>p %d..%d, %s: %s</title></rect>\n",
                        x, y, wd, ht, map_colour(w), g->p[i], g->p[j], g->bytes[s],
                        redcoll_algo_name((redcoll_algo)w), g->p[i], g->p[j], lab,
                        redcoll_algo_name((redcoll_algo)w));
            }
            i = j + 1;
        }
    fprintf(f, "</g>\n");
    /* axes: p ticks at powers of two, at most about 12 of them */
    fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\" fill=\"none\" stroke=\"black\"/>\n",
            X0, Y0, PW, PH);
    for (tstep = 2; log2(pe[g->np] / pe[0]) / log2(tstep) > 12;) tstep *= 2;
    for (t = 1; t <= pe[g->np]; t *= tstep) {
        if (t < pe[0]) continue;
        fprintf(f, "<line x1=\"%.2f\" y1=\"%g\" x2=\"%.2f\" y2=\"%g\" stroke=\"black\"/>"
                   "<text x=\"%.2f\" y=\"%g\" text-anchor=\"middle\">%.0f</text>\n",
                MAP_X(t), Y0 + PH, MAP_X(t), Y0 + PH + 5, MAP_X(t), Y0 + PH + 18, t);
    }
    fprintf(f, "<text x=\"%g\" y=\"%g\" text-anchor=\"middle\">number of processes p</text>\n", X0 + PW / 2,
            Y0 + PH + 38);
    for (t = 1; t <= se[g->ns]; t *= 8) {
        if (t < se[0]) continue;
        cli_human(lab, sizeof lab, t);
        fprintf(f, "<line x1=\"%g\" y1=\"%.2f\" x2=\"%g\" y2=\"%.2f\" stroke=\"black\"/>"
                   "<text x=\"%g\" y=\"%.2f\" text-anchor=\"end\">%s</text>\n",
                X0 - 5, MAP_Y(t), X0, MAP_Y(t), X0 - 8, MAP_Y(t) + 4, lab);
    }
    fprintf(f, "<text transform=\"translate(18 %g) rotate(-90)\" text-anchor=\"middle\">message size "
               "(bytes per rank%s)</text>\n", Y0 + PH / 2, rc_blocks(c->spec.coll) ? ", all blocks" : "");
    /* legend: every winner, with its share of the drawn area */
    fprintf(f, "<text x=\"%g\" y=\"%g\" font-weight=\"bold\">winner (share of the map)</text>\n", LX, Y0 - 6);
    for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
        double y = Y0 + 8 + 22 * shown;
        if (area[a] <= 0) continue;
        fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"16\" height=\"16\" fill=\"%s\" stroke=\"#333\"/>"
                   "<text x=\"%g\" y=\"%g\" data-algo=\"%s\" data-share=\"%.6f\">%s%s (%s)</text>\n", LX, y,
                map_colour(a), LX + 24, y + 13, redcoll_algo_name((redcoll_algo)a), area[a] / drawn,
                redcoll_algo_name((redcoll_algo)a),
                a == REDCOLL_ALGO_NODE_SPLIT || a == REDCOLL_ALGO_NODE_LEADER || a == REDCOLL_ALGO_NODE_LANES
                    ? ", node-aware" : "",
                map_percent(lab, sizeof lab, area[a] / drawn));
        ++shown;
    }
    fprintf(f, "</svg>\n");
#undef MAP_X
#undef MAP_Y
    free(pv);
    free(sv);
}

static int cmd_map(cli *c) {
    map_grid g;
    int r;
    char source[300];
    double t0 = cli_now();
    FILE *f;
    memset(&g, 0, sizeof g);
    if (c->from_csv) {
        r = map_from_csv(c, &g);
        snprintf(source, sizeof source, "fastest measured (redcoll bench, %s)", c->from_csv);
    } else {
        if (!map_axes(c, &g)) return 1;
        if (strcmp(c->from, "selector") == 0) {
            r = map_from_selector(c, &g);
            snprintf(source, sizeof source, "what redcoll_select picks (%s selector)",
                     c->spec.opts.selector == REDCOLL_SELECTOR_MPICH    ? "mpich"
                     : c->spec.opts.selector == REDCOLL_SELECTOR_PAPERS ? "papers" : "model");
        } else if (strcmp(c->from, "simulator") == 0) {
            r = map_from_simulator(c, &g);
            snprintf(source, sizeof source, "fastest on the simulator (every candidate, no data)");
        } else {
            r = map_from_model(c, &g);
            snprintf(source, sizeof source, "least modeled time (the cost functions, as AUTO picks)");
        }
    }
    if (r) { map_free(&g); return r; }
    f = c->out ? fopen(c->out, "w") : stdout;
    if (!f) { map_free(&g); return cli_bad("--svg %s: %s", c->out, strerror(errno)); }
    map_svg(f, c, &g, source);
    if (c->out) {
        if (fclose(f) != 0) { map_free(&g); return cli_bad("--svg %s: %s", c->out, strerror(errno)); }
        fprintf(stderr, "redcoll: map: wrote %s (%d p x %d sizes, %s) in %.1f s\n", c->out, g.np, g.ns,
                source, cli_now() - t0);
    }
    map_free(&g);
    return 0;
}
