/* test_core.c - kernels, argument checks, names: everything that needs no peers. */

/* ---- kernels against hand-computed values ---- */

static void test_kernels_integer(void) {
    int8_t a8[2] = { 100, -7 }, b8[2] = { 100, 3 };
    int32_t a[4] = { 5, -3, 0, 7 }, b[4] = { 2, 4, 0, 7 };
    uint16_t u[2] = { 0xF0F0, 0x00FF }, v[2] = { 0x0FF0, 0xFFFF };
    int64_t big[1] = { INT64_MAX }, one[1] = { 1 };

    CHECK(redcoll_reduce_local(a8, b8, 2, REDCOLL_INT8, REDCOLL_SUM) == REDCOLL_OK, "sum int8");
    CHECK(b8[0] == (int8_t)-56 && b8[1] == -4, "int8 sum wraps: %d %d", b8[0], b8[1]);
    { int32_t t[4]; memcpy(t, b, sizeof t);
      redcoll_reduce_local(a, t, 4, REDCOLL_INT32, REDCOLL_PROD);
      CHECK(t[0] == 10 && t[1] == -12 && t[2] == 0 && t[3] == 49, "prod int32"); }
    { int32_t t[4]; memcpy(t, b, sizeof t);
      redcoll_reduce_local(a, t, 4, REDCOLL_INT32, REDCOLL_MIN);
      CHECK(t[0] == 2 && t[1] == -3 && t[2] == 0 && t[3] == 7, "min int32"); }
    { int32_t t[4]; memcpy(t, b, sizeof t);
      redcoll_reduce_local(a, t, 4, REDCOLL_INT32, REDCOLL_MAX);
      CHECK(t[0] == 5 && t[1] == 4 && t[2] == 0 && t[3] == 7, "max int32"); }
    { int32_t t[4]; memcpy(t, b, sizeof t);
      redcoll_reduce_local(a, t, 4, REDCOLL_INT32, REDCOLL_LAND);
      CHECK(t[0] == 1 && t[1] == 1 && t[2] == 0 && t[3] == 1, "land"); }
    { int32_t x[3] = { 0, 3, 0 }, y[3] = { 0, 0, -1 };
      redcoll_reduce_local(x, y, 3, REDCOLL_INT32, REDCOLL_LOR);
      CHECK(y[0] == 0 && y[1] == 1 && y[2] == 1, "lor"); }
    { int32_t x[3] = { 0, 3, 5 }, y[3] = { 0, 0, -1 };
      redcoll_reduce_local(x, y, 3, REDCOLL_INT32, REDCOLL_LXOR);
      CHECK(y[0] == 0 && y[1] == 1 && y[2] == 0, "lxor"); }
    { uint16_t t[2]; memcpy(t, v, sizeof t);
      redcoll_reduce_local(u, t, 2, REDCOLL_UINT16, REDCOLL_BAND);
      CHECK(t[0] == 0x00F0 && t[1] == 0x00FF, "band"); }
    { uint16_t t[2]; memcpy(t, v, sizeof t);
      redcoll_reduce_local(u, t, 2, REDCOLL_UINT16, REDCOLL_BOR);
      CHECK(t[0] == 0xFFF0 && t[1] == 0xFFFF, "bor"); }
    { uint16_t t[2]; memcpy(t, v, sizeof t);
      redcoll_reduce_local(u, t, 2, REDCOLL_UINT16, REDCOLL_BXOR);
      CHECK(t[0] == 0xFF00 && t[1] == 0xFF00, "bxor"); }
    { uint16_t x[1] = { 65535 }, y[1] = { 65535 };
      redcoll_reduce_local(x, y, 1, REDCOLL_UINT16, REDCOLL_PROD);
      CHECK(y[0] == 1, "uint16 prod wraps without overflowing int: %u", y[0]); }
    redcoll_reduce_local(big, one, 1, REDCOLL_INT64, REDCOLL_SUM);
    CHECK(one[0] == INT64_MIN, "int64 sum wraps");
}

static void test_kernels_float_and_pairs(void) {
    double x[3] = { 1.5, -2.0, 0.25 }, y[3] = { 2.5, 8.0, 4.0 };
    long double lx[1] = { 3.0L }, ly[1] = { 0.5L };
    float fx[2] = { -1.0f, 3.0f }, fy[2] = { 2.0f, 1.0f };
    redcoll_double_int pa[3] = { { 1.0, 5 }, { 2.0, 1 }, { 3.0, 9 } };
    redcoll_double_int pb[3] = { { 1.0, 2 }, { 1.0, 7 }, { 3.0, 4 } };
    redcoll_2int ia[1] = { { 4, 3 } }, ib[1] = { { 9, 8 } };

    redcoll_reduce_local(x, y, 3, REDCOLL_DOUBLE, REDCOLL_SUM);
    CHECK(y[0] == 4.0 && y[1] == 6.0 && y[2] == 4.25, "double sum");
    redcoll_reduce_local(lx, ly, 1, REDCOLL_LONG_DOUBLE, REDCOLL_PROD);
    CHECK(ly[0] == 1.5L, "long double prod");
    redcoll_reduce_local(fx, fy, 2, REDCOLL_FLOAT, REDCOLL_MIN);
    CHECK(fy[0] == -1.0f && fy[1] == 1.0f, "float min");
    redcoll_reduce_local(pa, pb, 3, REDCOLL_DOUBLE_INT, REDCOLL_MINLOC);
    CHECK(pb[0].v == 1.0 && pb[0].i == 2, "minloc tie keeps smaller index: %d", pb[0].i);
    CHECK(pb[1].v == 1.0 && pb[1].i == 7, "minloc smaller value wins");
    CHECK(pb[2].v == 3.0 && pb[2].i == 4, "minloc tie, other side");
    redcoll_reduce_local(ia, ib, 1, REDCOLL_2INT, REDCOLL_MAXLOC);
    CHECK(ib[0].v == 9 && ib[0].i == 8, "maxloc larger value wins");
    { redcoll_2int ta[1] = { { 9, 3 } }, tb[1] = { { 9, 8 } };
      redcoll_reduce_local(ta, tb, 1, REDCOLL_2INT, REDCOLL_MAXLOC);
      CHECK(tb[0].v == 9 && tb[0].i == 3, "maxloc tie keeps smaller index"); }
}

/* 1 when bytes [from, to) of p are all zero. */
static int tc_zero_bytes(const void *p, size_t from, size_t to) {
    const unsigned char *b = (const unsigned char *)p;
    for (; from < to; ++from)
        if (b[from]) return 0;
    return 1;
}

/* Kernels on padded types write whole elements into any output buffer: the
   pairs copy the winner, padding and all; long double's padding becomes
   zero. Inputs with zero padding, the output filled with 0xA5 first. */
static void test_kernels_padding(void) {
    static const redcoll_op_kind kinds[] = { REDCOLL_OP_MINLOC, REDCOLL_OP_MAXLOC };
    const size_t value_end = REDCOLL__LDBL_VALUE_BYTES;
    const size_t index_end = offsetof(redcoll_long_double_int, i) + sizeof(int);
    redcoll_long_double_int a[3], b[3], out[3];
    long double x[2], y[2], sum[2];
    size_t i;
    int k;
    memset(a, 0, sizeof a); memset(b, 0, sizeof b);
    for (i = 0; i < 3; ++i) {
        a[i].v = (long double)i; a[i].i = 4; b[i].v = 1.0L; b[i].i = 2;
        /* a store of a long double constant may write its padding too */
        memset((char *)&a[i].v + value_end, 0, sizeof(long double) - value_end);
        memset((char *)&b[i].v + value_end, 0, sizeof(long double) - value_end);
    }
    for (k = 0; k < 2; ++k) {
        memset(out, 0xA5, sizeof out);
        redcoll__kernel_for(kinds[k], REDCOLL_LONG_DOUBLE_INT)(a, b, out, 3);
        for (i = 0; i < 3; ++i) {
            long double lo = a[i].v < b[i].v ? a[i].v : b[i].v, hi = a[i].v < b[i].v ? b[i].v : a[i].v;
            long double v = k == 0 ? lo : hi;
            int index = a[i].v == b[i].v ? 2 : v == a[i].v ? 4 : 2;
            CHECK(out[i].v == v && out[i].i == index, "%s element %d: value and index",
                  k == 0 ? "minloc" : "maxloc", (int)i);
            CHECK(tc_zero_bytes(&out[i], value_end, sizeof(long double)) &&
                  tc_zero_bytes(&out[i], index_end, sizeof out[i]),
                  "%s long_double_int element %d: padding copied from the inputs",
                  k == 0 ? "minloc" : "maxloc", (int)i);
        }
    }
    memset(x, 0, sizeof x); memset(y, 0, sizeof y);
    x[0] = 1.0L; x[1] = -2.5L; y[0] = 0.5L; y[1] = 4.0L;
    memset(sum, 0xA5, sizeof sum);
    redcoll__kernel_for(REDCOLL_OP_SUM, REDCOLL_LONG_DOUBLE)(x, y, sum, 2);
    CHECK(sum[0] == 1.5L && sum[1] == 1.5L, "long double sum values");
    for (i = 0; i < 2; ++i)
        CHECK(tc_zero_bytes(&sum[i], value_end, sizeof(long double)),
              "long double sum element %d: padding zero", (int)i);
}

static void test_kernels_user_op(void) {
    uint32_t a[4] = { 1, 2, 3, 4 }, b[4] = { 0, 1, 1, 0 };
    redcoll_op op = redcoll_op_user(rc_matmul_fn, NULL, 0);
    CHECK(redcoll_reduce_local(a, b, 1, REDCOLL_OPAQUE(16), op) == REDCOLL_OK, "user op runs");
    /* [1 2;3 4] * [0 1;1 0] = [2 1;4 3]: in op inout, in on the left */
    CHECK(b[0] == 2 && b[1] == 1 && b[2] == 4 && b[3] == 3, "user op order: in op inout");
}

static void test_op_validity(void) {
    int d, k, valid = 0;
    CHECK(redcoll_op_valid_for(REDCOLL_OP_SUM, REDCOLL_DOUBLE), "sum on double");
    CHECK(!redcoll_op_valid_for(REDCOLL_OP_SUM, REDCOLL_DOUBLE_INT), "no sum on pairs");
    CHECK(!redcoll_op_valid_for(REDCOLL_OP_BAND, REDCOLL_FLOAT), "no band on float");
    CHECK(!redcoll_op_valid_for(REDCOLL_OP_MINLOC, REDCOLL_INT32), "no minloc on int");
    CHECK(!redcoll_op_valid_for(REDCOLL_OP_SUM, REDCOLL_OPAQUE(8)), "no predefined op on opaque");
    CHECK(redcoll_op_valid_for(REDCOLL_OP_USER, REDCOLL_OPAQUE(8)), "user op on opaque");
    for (d = 0; d < REDCOLL_DTYPE_COUNT; ++d)
        for (k = 0; k < REDCOLL_OP_USER; ++k) valid += redcoll_op_valid_for((redcoll_op_kind)k, (redcoll_dtype)d);
    /* 8 ints x 10 ops + 3 floats x 4 ops + 6 pairs x 2 ops */
    CHECK(valid == 80 + 12 + 12, "valid (op, dtype) pairs: %d", valid);
    CHECK(redcoll_dtype_size(REDCOLL_OPAQUE(24)) == 24, "opaque size");
    CHECK(redcoll_dtype_size(REDCOLL_LONG_DOUBLE_INT) == sizeof(redcoll_long_double_int), "pair size");
}

static void test_names(void) {
    int a, c;
    redcoll_algo algo;
    redcoll_coll coll;
    for (a = 0; a < REDCOLL_ALGO_COUNT; ++a) {
        CHECK(redcoll_algo_from_name(redcoll_algo_name((redcoll_algo)a), &algo) && (int)algo == a,
              "algo name round trip %d", a);
    }
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
        CHECK(redcoll_coll_from_name(redcoll_coll_name((redcoll_coll)c), &coll) && (int)coll == c,
              "coll name round trip %d", c);
    CHECK(!redcoll_algo_from_name("no_such_algo", &algo), "unknown algorithm name");
    CHECK(strcmp(redcoll_result_string(REDCOLL_ERR_UNSUPPORTED), "unsupported combination") == 0,
          "result string");
    CHECK(strcmp(REDCOLL_VERSION_STRING, "0.1.0") == 0, "version string");
}

/* ---- the algorithm list drives the enum, the names and the registry ---- */

/* The enum values of the first release: ABI, never to change. */
static const struct { redcoll_algo algo; int value; const char *name; } tl_abi[] = {
    { REDCOLL_ALGO_AUTO, 0, "auto" },
    { REDCOLL_ALGO_BINOMIAL, 1, "binomial" },
    { REDCOLL_ALGO_REDUCE_BCAST, 2, "reduce_bcast" },
    { REDCOLL_ALGO_RECURSIVE_DOUBLING, 3, "recursive_doubling" },
    { REDCOLL_ALGO_BINARY_TREE, 4, "binary_tree" },
    { REDCOLL_ALGO_HALVING_DOUBLING, 5, "halving_doubling" },
    { REDCOLL_ALGO_BINARY_BLOCKS, 6, "binary_blocks" },
    { REDCOLL_ALGO_RING, 7, "ring" },
    { REDCOLL_ALGO_BUTTERFLY, 8, "butterfly" },
    { REDCOLL_ALGO_ELIMINATION, 9, "elimination" },
    { REDCOLL_ALGO_ELIMINATION_NONOVERLAP, 10, "elimination_nonoverlap" },
    { REDCOLL_ALGO_FACTOR_RING, 11, "factor_ring" },
    { REDCOLL_ALGO_BRUCK, 12, "bruck" },
    { REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING, 13, "scatter_recursive_doubling" },
    { REDCOLL_ALGO_SCATTER_RING, 14, "scatter_ring" },
    { REDCOLL_ALGO_SCATTERED, 15, "scattered" },
    { REDCOLL_ALGO_PAIRWISE, 16, "pairwise" },
    { REDCOLL_ALGO_RECURSIVE_HALVING, 17, "recursive_halving" },
    { REDCOLL_ALGO_FLAT, 18, "flat" },
    { REDCOLL_ALGO_CHAIN, 19, "chain" },
    { REDCOLL_ALGO_PIPELINE, 20, "pipeline" },
    { REDCOLL_ALGO_BINARY, 21, "binary" },
    { REDCOLL_ALGO_IN_ORDER_BINARY, 22, "in_order_binary" },
    { REDCOLL_ALGO_HIERARCHICAL, 23, "hierarchical" },
    { REDCOLL_ALGO_DISSEMINATION, 24, "dissemination" },
};

static void test_algorithm_list(void) {
    int i, j, c, a, rows = 0, seen[REDCOLL_COLL_COUNT][REDCOLL_ALGO_COUNT], named[REDCOLL_ALGO_COUNT];
    const redcoll_algo_info *e;
    memset(seen, 0, sizeof seen);
    memset(named, 0, sizeof named);
    for (i = 0; i < (int)(sizeof tl_abi / sizeof tl_abi[0]); ++i) {
        CHECK((int)tl_abi[i].algo == tl_abi[i].value, "%s: enum value %d, was %d", tl_abi[i].name,
              (int)tl_abi[i].algo, tl_abi[i].value);
        CHECK(strcmp(redcoll_algo_name(tl_abi[i].algo), tl_abi[i].name) == 0, "name of %d: %s",
              tl_abi[i].value, redcoll_algo_name(tl_abi[i].algo));
    }
    CHECK(REDCOLL_ALGO_COUNT >= 25, "names are appended, never removed");
    /* every row once, found by its (collective, algorithm), with the right flags */
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i) {
        rows++;
        CHECK((int)e->coll >= 0 && e->coll < REDCOLL_COLL_COUNT && e->algo > REDCOLL_ALGO_AUTO &&
              e->algo < REDCOLL_ALGO_COUNT, "row %d in range", i);
        if (!((int)e->coll >= 0 && e->coll < REDCOLL_COLL_COUNT && e->algo > 0 && e->algo < REDCOLL_ALGO_COUNT))
            continue;
        CHECK(++seen[e->coll][e->algo] == 1, "row %d: %s/%s listed twice", i, redcoll_coll_name(e->coll),
              redcoll_algo_name(e->algo));
        named[e->algo] = 1;
        CHECK(redcoll__find(e->coll, e->algo) == (const redcoll__row *)(const void *)e,
              "row %d: the registry finds it", i);
        CHECK(redcoll_algo_keeps_order(e->coll, e->algo) == e->keeps_order, "row %d: keeps_order", i);
        CHECK(e->paper && e->paper[0], "row %d: paper", i);
    }
    CHECK(rows == REDCOLL__ROW_COUNT && redcoll_algo_at(-1) == NULL, "%d rows", rows);
    for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a)
            CHECK(redcoll_algo_supported((redcoll_coll)c, (redcoll_algo)a) == (seen[c][a] == 1),
                  "%s/%s: supported iff listed", redcoll_coll_name((redcoll_coll)c),
                  redcoll_algo_name((redcoll_algo)a));
    for (a = 1; a < REDCOLL_ALGO_COUNT; ++a)
        CHECK(named[a], "%s has a row", redcoll_algo_name((redcoll_algo)a));
    /* every row's name column is its algorithm's name; NEW rows come in enum order */
    j = 0;
#define TL_ROW(first, A, name, C, fn, cost, var, ord, kn, paper)                                  \
    CHECK(strcmp(redcoll_algo_name(REDCOLL_ALGO_##A), name) == 0, "%s: name column", name);     \
    if (strcmp(#first, "NEW") == 0) CHECK((int)REDCOLL_ALGO_##A == ++j, "%s: NEW rows in enum order", name);
    REDCOLL_ALGORITHM_LIST(TL_ROW)
#undef TL_ROW
    CHECK(j == REDCOLL_ALGO_COUNT - 1, "one NEW row per name");
}

/* The next comma-separated token of *rest (NULL at the end); cuts the string. */
static char *tl_token(char **rest) {
    char *tok = *rest, *comma;
    if (!tok) return NULL;
    comma = strchr(tok, ',');
    if (comma) { *comma = 0; *rest = comma + 1; } else *rest = NULL;
    return tok;
}

/* README's algorithm table holds every pair of the list exactly once, with
   the list's paper column (README writes "§" where the list has none). */
static int tl_expand_colls(const char *cell, redcoll_coll *out) {
    char buf[256], *tok, *rest = buf;
    int n = 0;
    snprintf(buf, sizeof buf, "%s", cell);
    while ((tok = tl_token(&rest)) != NULL) {
        char name[256], *par;
        while (*tok == ' ') tok++;
        snprintf(name, sizeof name, "%s", tok);
        par = strchr(name, '(');
        if (par) { /* allgather(v), reduce_scatter(_block): both */
            char longer[512];
            size_t k = strlen(name);
            while (k > 0 && (name[k - 1] == ' ')) name[--k] = 0;
            if (name[k - 1] == ')') name[k - 1] = 0;
            *par = 0;
            snprintf(longer, sizeof longer, "%s%s", name, par + 1);
            if (!redcoll_coll_from_name(longer, &out[n++])) return -1;
        } else {
            size_t k = strlen(name);
            while (k > 0 && name[k - 1] == ' ') name[--k] = 0;
        }
        if (!redcoll_coll_from_name(name, &out[n++])) return -1;
    }
    return n;
}

static void tl_strip(char *s) { /* spaces at both ends, backticks and "§" */
    char *r = s, *w = s;
    for (; *r; ++r) {
        if (*r == '`') continue;
        if ((unsigned char)r[0] == 0xC2 && (unsigned char)r[1] == 0xA7) { ++r; continue; }
        *w++ = *r;
    }
    *w = 0;
    while (w > s && w[-1] == ' ') *--w = 0;
    for (r = s; *r == ' '; ++r) {}
    memmove(s, r, strlen(r) + 1);
}

static void test_readme_algorithm_table(void) {
    FILE *f = fopen("README.md", "r");
    char line[2048];
    int seen[REDCOLL_COLL_COUNT][REDCOLL_ALGO_COUNT], in_table = 0, rows = 0, i;
    const redcoll_algo_info *e;
    memset(seen, 0, sizeof seen);
    if (!f) f = fopen("../README.md", "r");
    CHECK(f != NULL, "README.md not found (run from the repository root)");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        char *cell[6], *p = line;
        int ncell = 0, k;
        if (strncmp(line, "## ", 3) == 0) in_table = strncmp(line, "## Algorithms", 13) == 0;
        if (!in_table || line[0] != '|' || strstr(line, "|---") || strstr(line, "| collective |")) continue;
        for (p = line + 1; ncell < 6 && (cell[ncell] = p) != NULL; ++ncell) {
            p = strchr(p, '|');
            if (!p) break;
            *p++ = 0;
        }
        if (ncell < 3) continue;
        for (k = 0; k < 3; ++k) tl_strip(cell[k]);
        {
            redcoll_coll colls[16];
            int nc = tl_expand_colls(cell[0], colls), ci;
            char algos[256], *tok, *rest = algos;
            CHECK(nc > 0, "README row '%s': unknown collective", cell[0]);
            snprintf(algos, sizeof algos, "%s", cell[1]);
            while ((tok = tl_token(&rest)) != NULL) {
                redcoll_algo a;
                tl_strip(tok);
                CHECK(redcoll_algo_from_name(tok, &a), "README: unknown algorithm '%s'", tok);
                if (!redcoll_algo_from_name(tok, &a)) continue;
                for (ci = 0; ci < nc; ++ci) {
                    const redcoll__row *row = redcoll__find(colls[ci], a);
                    CHECK(row != NULL, "README lists %s/%s, which is not in the list",
                          redcoll_coll_name(colls[ci]), tok);
                    if (!row) continue;
                    rows++;
                    seen[colls[ci]][a]++;
                    CHECK(strcmp(row->info.paper, cell[2]) == 0, "README %s/%s: paper '%s', the list says '%s'",
                          redcoll_coll_name(colls[ci]), tok, cell[2], row->info.paper);
                }
            }
        }
    }
    fclose(f);
    for (i = 0; (e = redcoll_algo_at(i)) != NULL; ++i)
        CHECK(seen[e->coll][e->algo] == 1, "README's table has %s/%s %d times, want once",
              redcoll_coll_name(e->coll), redcoll_algo_name(e->algo), seen[e->coll][e->algo]);
    CHECK(rows == REDCOLL__ROW_COUNT, "README's table: %d pairs, the list %d", rows, REDCOLL__ROW_COUNT);
}

/* ---- bad calls: documented error, nothing sent, buffers untouched ---- */

static int tb_calls;
static redcoll_result tb_send(void *u, int d, const void *b, size_t n, int t) {
    (void)u; (void)d; (void)b; (void)n; (void)t; tb_calls++; return REDCOLL_OK;
}
static redcoll_result tb_recv(void *u, int s, void *b, size_t n, int t) {
    (void)u; (void)s; (void)b; (void)n; (void)t; tb_calls++; return REDCOLL_OK;
}
static redcoll_result tb_sendrecv(void *u, int d, const void *sb, size_t sn, int s, void *rb,
                                  size_t rn, int t) {
    (void)u; (void)d; (void)sb; (void)sn; (void)s; (void)rb; (void)rn; (void)t; tb_calls++;
    return REDCOLL_OK;
}
static redcoll_result tb_isend(void *u, int d, const void *b, size_t n, int t, redcoll_request *r) {
    (void)u; (void)d; (void)b; (void)n; (void)t; (void)r; tb_calls++; return REDCOLL_OK;
}
static void *tb_alloc(size_t n, void *u) { (void)u; return malloc(n); }

typedef struct tb_case {
    const char *what;
    redcoll_result want;
} tb_case;

static void test_bad_calls(void) {
    enum { N = 64 };
    double sbuf[N], rbuf[N], sref[N], rref[N];
    redcoll_transport good, t;
    redcoll_options o;
    int i, cases = 0;
    memset(&good, 0, sizeof good);
    good.rank = 1; good.size = 4;
    good.send = tb_send; good.recv = tb_recv; good.sendrecv = tb_sendrecv;
    for (i = 0; i < N; ++i) { sref[i] = i + 0.5; rref[i] = -i - 0.25; }

#define TB(desc, expected, call)                                                              \
    do {                                                                                      \
        redcoll_result got_;                                                                  \
        memcpy(sbuf, sref, sizeof sbuf); memcpy(rbuf, rref, sizeof rbuf);                     \
        tb_calls = 0;                                                                         \
        got_ = (call);                                                                        \
        cases++;                                                                              \
        CHECK(got_ == (expected), "%s: got \"%s\", want \"%s\"", desc,                        \
              redcoll_result_string(got_), redcoll_result_string(expected));                 \
        CHECK(tb_calls == 0, "%s: %d transport calls", desc, tb_calls);                      \
        CHECK(!memcmp(sbuf, sref, sizeof sbuf) && !memcmp(rbuf, rref, sizeof rbuf),          \
              "%s: a buffer was touched", desc);                                             \
        t = good; memset(&o, 0, sizeof o);                                                    \
    } while (0)

    t = good; memset(&o, 0, sizeof o);
    TB("NULL transport", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(NULL, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    t.send = NULL;
    TB("transport without send", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    t.size = 0;
    TB("size 0", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    t.rank = 4;
    TB("rank >= size", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    t.isend = tb_isend;
    TB("isend without irecv/waitall", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    TB("unknown dtype", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DTYPE_COUNT, REDCOLL_SUM, NULL));
    TB("zero-size opaque dtype", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_OPAQUE(0), redcoll_op_user(rc_matmul_fn, NULL, 1), NULL));
    TB("unknown op", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, redcoll_op_predefined(REDCOLL_OP_KIND_COUNT), NULL));
    TB("user op without function", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, redcoll_op_user(NULL, NULL, 1), NULL));
    TB("sum on a pair type", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N / 2, REDCOLL_DOUBLE_INT, REDCOLL_SUM, NULL));
    TB("minloc on double", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_MINLOC, NULL));
    TB("band on double", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_BAND, NULL));
    TB("predefined op on opaque", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_OPAQUE(8), REDCOLL_SUM, NULL));
    TB("NULL send buffer", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, NULL, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    TB("NULL receive buffer", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, NULL, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    TB("IN_PLACE as receive buffer", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, REDCOLL_IN_PLACE, N, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    TB("count * size overflows", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, ((size_t)-1) / 4, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
    TB("negative root", REDCOLL_ERR_INVALID_ARG,
       redcoll_reduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, -1, NULL));
    TB("root == size", REDCOLL_ERR_INVALID_ARG,
       redcoll_reduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, 4, NULL));
    TB("IN_PLACE on a non-root", REDCOLL_ERR_INVALID_ARG,
       redcoll_reduce(&t, REDCOLL_IN_PLACE, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, 0, NULL));
    TB("root without receive buffer", REDCOLL_ERR_INVALID_ARG,
       redcoll_reduce(&t, sbuf, NULL, N, REDCOLL_DOUBLE, REDCOLL_SUM, 1, NULL));
    o.allocator.alloc_fn = tb_alloc;
    TB("allocator with alloc but no free", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, &o));
    o.algo = REDCOLL_ALGO_DISSEMINATION;
    TB("algorithm of another collective", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, &o));
    o.algo = REDCOLL_ALGO_COUNT;
    TB("algorithm out of range", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, &o));
    o.groups = -2;
    TB("negative group count", REDCOLL_ERR_INVALID_ARG,
       redcoll_reduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, 0, &o));
    o.model.alpha = -1.0;
    TB("negative alpha", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, &o));
    o.selector = (redcoll_selector)7;
    TB("unknown selector", REDCOLL_ERR_INVALID_ARG,
       redcoll_allreduce(&t, sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_SUM, &o));
    TB("bcast without buffer", REDCOLL_ERR_INVALID_ARG,
       redcoll_bcast(&t, NULL, N, REDCOLL_DOUBLE, 0, NULL));
    TB("bcast root out of range", REDCOLL_ERR_INVALID_ARG,
       redcoll_bcast(&t, rbuf, N, REDCOLL_DOUBLE, 9, NULL));
    TB("scatter IN_PLACE on a non-root", REDCOLL_ERR_INVALID_ARG,
       redcoll_scatter(&t, sbuf, REDCOLL_IN_PLACE, 4, REDCOLL_DOUBLE, 0, NULL));
    TB("gather count * p overflows", REDCOLL_ERR_INVALID_ARG,
       redcoll_gather(&t, sbuf, rbuf, ((size_t)-1) / 16, REDCOLL_DOUBLE, 1, NULL));
    TB("barrier on a NULL transport", REDCOLL_ERR_INVALID_ARG, redcoll_barrier(NULL, NULL));
    TB("local reduce with invalid op", REDCOLL_ERR_INVALID_ARG,
       redcoll_reduce_local(sbuf, rbuf, N, REDCOLL_DOUBLE, REDCOLL_BXOR));
    CHECK(cases >= 20, "the table has %d bad calls", cases);
    /* An algorithm that cannot keep canonical order refuses a non-commutative op. */
    {
        int a, refusals = 0;
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a) {
            if (!redcoll_algo_supported(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)a) ||
                redcoll_algo_keeps_order(REDCOLL_COLL_ALLREDUCE, (redcoll_algo)a)) continue;
            o.algo = (redcoll_algo)a;
            TB("order-breaking algorithm with a non-commutative op", REDCOLL_ERR_UNSUPPORTED,
               redcoll_allreduce(&t, sbuf, rbuf, N / 2, REDCOLL_OPAQUE(16),
                                 redcoll_op_user(rc_matmul_fn, NULL, 0), &o));
            refusals++;
        }
        (void)refusals; /* zero while every allreduce schedule keeps order */
    }
#undef TB
}

/* Issue 13 item 3: every check -- the hierarchical levels and their
   commutativity included -- runs before the first write, for every
   collective: a call that returns an argument error sent nothing and left
   both buffers as they were. Every inner x outer algorithm of the three
   hierarchical schedules, with a commutative and a non-commutative op. */
static void test_level_errors_touch_nothing(void) {
    enum { N = 32 };
    uint32_t sbuf[N], rbuf[N], sref[N], rref[N];
    static const redcoll_coll colls[3] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE, REDCOLL_COLL_BCAST };
    redcoll_transport t;
    redcoll_options o;
    int ci, in, out, nc, errors = 0;
    memset(&t, 0, sizeof t);
    t.rank = 1; t.size = 4;
    t.send = tb_send; t.recv = tb_recv; t.sendrecv = tb_sendrecv;
    for (ci = 0; ci < N; ++ci) { sref[ci] = 1000u + (uint32_t)ci; rref[ci] = 7u * (uint32_t)ci + 3u; }
    for (ci = 0; ci < 3; ++ci)
        for (in = 0; in < REDCOLL_ALGO_COUNT; ++in)
            for (out = 0; out < REDCOLL_ALGO_COUNT; ++out)
                for (nc = 0; nc < 2; ++nc) {
                    redcoll_op op = nc ? redcoll_op_user(rc_matmul_fn, NULL, 0) : REDCOLL_SUM;
                    redcoll_dtype d = nc ? REDCOLL_OPAQUE(16) : REDCOLL_UINT32;
                    size_t n = nc ? N / 4 : N;
                    int root; /* rank 1 as the root writes rbuf too */
                    for (root = 0; root < 2; ++root) {
                        redcoll_result r;
                        memset(&o, 0, sizeof o);
                        o.algo = REDCOLL_ALGO_HIERARCHICAL;
                        o.inner_algo = (redcoll_algo)in;
                        o.outer_algo = (redcoll_algo)out;
                        o.groups = 2;
                        memcpy(sbuf, sref, sizeof sbuf); memcpy(rbuf, rref, sizeof rbuf);
                        tb_calls = 0;
                        if (colls[ci] == REDCOLL_COLL_ALLREDUCE)
                            r = redcoll_allreduce(&t, root ? REDCOLL_IN_PLACE : sbuf, rbuf, n, d, op, &o);
                        else if (colls[ci] == REDCOLL_COLL_REDUCE)
                            r = redcoll_reduce(&t, sbuf, rbuf, n, d, op, root, &o);
                        else
                            r = redcoll_bcast(&t, rbuf, n, d, root, &o);
                        if (r != REDCOLL_ERR_INVALID_ARG && r != REDCOLL_ERR_UNSUPPORTED) continue;
                        errors++;
                        CHECK(tb_calls == 0 && !memcmp(sbuf, sref, sizeof sbuf) && !memcmp(rbuf, rref, sizeof rbuf),
                              "%s hierarchical inner=%s outer=%s%s: \"%s\" after %d transport calls, buffers %s",
                              redcoll_coll_name(colls[ci]), redcoll_algo_name((redcoll_algo)in),
                              redcoll_algo_name((redcoll_algo)out), nc ? " non-commutative" : "",
                              redcoll_result_string(r), tb_calls,
                              !memcmp(rbuf, rref, sizeof rbuf) && !memcmp(sbuf, sref, sizeof sbuf) ? "untouched" : "CHANGED");
                    }
                }
    CHECK(errors > 100, "%d argument errors tried", errors);
}

static void test_count_zero_is_a_no_op(void) {
    redcoll_transport t;
    double x = 1.0, y = 2.0;
    memset(&t, 0, sizeof t);
    t.rank = 0; t.size = 3; t.send = tb_send; t.recv = tb_recv; t.sendrecv = tb_sendrecv;
    tb_calls = 0;
    CHECK(redcoll_allreduce(&t, &x, &y, 0, REDCOLL_DOUBLE, REDCOLL_SUM, NULL) == REDCOLL_OK, "allreduce 0");
    CHECK(redcoll_reduce(&t, &x, &y, 0, REDCOLL_DOUBLE, REDCOLL_SUM, 2, NULL) == REDCOLL_OK, "reduce 0");
    CHECK(redcoll_bcast(&t, &y, 0, REDCOLL_DOUBLE, 1, NULL) == REDCOLL_OK, "bcast 0");
    CHECK(tb_calls == 0 && x == 1.0 && y == 2.0, "count 0 sends nothing and touches nothing");
}

/* Issue 13 item 5: an empty call is OK with NULL buffers in every form,
   IN_PLACE included, on the root and elsewhere, and touches nothing. */
static void test_empty_calls_with_null_buffers(void) {
    redcoll_transport t;
    size_t zeros[4] = { 0, 0, 0, 0 };
    int rank, ip;
    memset(&t, 0, sizeof t);
    t.size = 4; t.send = tb_send; t.recv = tb_recv; t.sendrecv = tb_sendrecv;
    for (rank = 0; rank < 4; ++rank)
        for (ip = 0; ip < 2; ++ip) {
            const void *in = ip ? REDCOLL_IN_PLACE : NULL;
            const void *root_in = ip && rank == 1 ? REDCOLL_IN_PLACE : NULL;
            t.rank = rank;
            tb_calls = 0;
#define TE(call) CHECK((call) == REDCOLL_OK, "rank %d%s: %s", rank, ip ? " in place" : "", #call)
            TE(redcoll_allreduce(&t, in, NULL, 0, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
            TE(redcoll_reduce(&t, root_in, NULL, 0, REDCOLL_DOUBLE, REDCOLL_SUM, 1, NULL));
            TE(redcoll_reduce_scatter(&t, in, NULL, zeros, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
            TE(redcoll_reduce_scatter_block(&t, in, NULL, 0, REDCOLL_DOUBLE, REDCOLL_SUM, NULL));
            TE(redcoll_allgather(&t, in, NULL, 0, REDCOLL_DOUBLE, NULL));
            TE(redcoll_allgatherv(&t, in, NULL, zeros, REDCOLL_DOUBLE, NULL));
            TE(redcoll_bcast(&t, NULL, 0, REDCOLL_DOUBLE, 1, NULL));
            TE(redcoll_alltoall(&t, in, NULL, 0, REDCOLL_DOUBLE, NULL));
            TE(redcoll_gather(&t, root_in, NULL, 0, REDCOLL_DOUBLE, 1, NULL));
            TE(redcoll_scatter(&t, NULL, ip && rank == 1 ? REDCOLL_IN_PLACE : NULL, 0, REDCOLL_DOUBLE, 1, NULL));
#undef TE
            CHECK(tb_calls == 0, "rank %d: empty calls sent %d messages", rank, tb_calls);
        }
}

/* Issue 13 item 6: more groups than ranks act as p groups (every rank its
   own group), documented at redcoll_options.groups: per-rank figures equal
   those of groups = p, results verified, up to INT_MAX groups. */
static void test_groups_above_p(void) {
    static const redcoll_coll colls[3] = { REDCOLL_COLL_ALLREDUCE, REDCOLL_COLL_REDUCE, REDCOLL_COLL_BCAST };
    static const int over[3] = { 7, 12, 2147483647 };
    int ci, k, r;
    for (ci = 0; ci < 3; ++ci) {
        rc_spec s = rc_spec_make(colls[ci], REDCOLL_ALGO_HIERARCHICAL, 6, 13);
        rc_outcome want, got;
        s.opts.inner_algo = REDCOLL_ALGO_FLAT;
        s.opts.outer_algo = colls[ci] == REDCOLL_COLL_ALLREDUCE ? REDCOLL_ALGO_RING : REDCOLL_ALGO_CHAIN;
        s.root = 4;
        s.opts.groups = 6;
        if (!tf_measure(&s, &want)) { rc_outcome_free(&want); continue; }
        for (k = 0; k < 3; ++k) {
            s.opts.groups = over[k];
            if (tf_measure(&s, &got))
                for (r = 0; r < 6; ++r)
                    CHECK(!memcmp(&got.rep.stats[r], &want.rep.stats[r], sizeof got.rep.stats[r]),
                          "%s, %d groups on 6 ranks: rank %d differs from 6 groups",
                          redcoll_coll_name(colls[ci]), over[k], r);
            rc_outcome_free(&got);
        }
        rc_outcome_free(&want);
    }
}

/* Issue 13 item 1: every p up to INT_MAX gives an answer. A transport of
   any size whose transfers fail at once drives the setup and selection paths
   without p threads: the selector answers for every p, collectives on 2^30
   ranks end with the transport's error (schedules of lg p depth, so the
   failure is met at once), larger transports are refused. */
static redcoll_result th_fail_send(void *u, int d, const void *b, size_t n, int t) {
    (void)u; (void)d; (void)b; (void)n; (void)t; return REDCOLL_ERR_TRANSPORT;
}
static redcoll_result th_fail_recv(void *u, int s, void *b, size_t n, int t) {
    (void)u; (void)s; (void)b; (void)n; (void)t; return REDCOLL_ERR_TRANSPORT;
}
static redcoll_result th_fail_sendrecv(void *u, int d, const void *sb, size_t sn, int s, void *rb,
                                       size_t rn, int t) {
    (void)u; (void)d; (void)sb; (void)sn; (void)s; (void)rb; (void)rn; (void)t;
    return REDCOLL_ERR_TRANSPORT;
}

/* The transports' scratch block: at least the bytes asked for, 64-byte
   aligned, the same block while it is large enough, grown when not, empty
   after free. */
static void test_scratch_block(void) {
    redcoll_scratch_block b;
    char *first, *again, *grown;
    memset(&b, 0, sizeof b);
    first = (char *)redcoll_scratch_block_get(&b, 1);
    CHECK(first && (size_t)first % 64 == 0 && b.bytes >= 64, "1 byte: %p, %zu usable", (void *)first, b.bytes);
    if (first) memset(first, 1, b.bytes);
    again = (char *)redcoll_scratch_block_get(&b, 64);
    CHECK(again == first, "a request it holds returns the same block");
    grown = (char *)redcoll_scratch_block_get(&b, 100000);
    CHECK(grown && (size_t)grown % 64 == 0 && b.bytes >= 100000, "grown: %zu usable", b.bytes);
    if (grown) memset(grown, 2, 100000);
    CHECK(redcoll_scratch_block_get(&b, (size_t)-1) == NULL && b.ptr == NULL && b.bytes == 0,
          "an impossible size: NULL and an empty block");
    CHECK(redcoll_scratch_block_get(&b, 10) != NULL, "usable again after a failure");
    redcoll_scratch_block_free(&b);
    CHECK(b.ptr == NULL && b.mem == NULL && b.bytes == 0, "free empties it");
    redcoll_scratch_block_free(&b); /* twice is fine */
}

static void test_huge_p(void) {
    static const int ps[] = { 1 << 30, (1 << 30) + 1, 1610612736, 2147483646, 2147483647 };
    static const redcoll_algo allreduce[] = {
        REDCOLL_ALGO_AUTO, REDCOLL_ALGO_RECURSIVE_DOUBLING, REDCOLL_ALGO_REDUCE_BCAST,
        REDCOLL_ALGO_BINARY_TREE, REDCOLL_ALGO_HALVING_DOUBLING, REDCOLL_ALGO_BINARY_BLOCKS,
        REDCOLL_ALGO_BUTTERFLY, REDCOLL_ALGO_ELIMINATION, REDCOLL_ALGO_ELIMINATION_NONOVERLAP,
        REDCOLL_ALGO_FACTOR_RING, REDCOLL_ALGO_HIERARCHICAL };
    static const redcoll_algo reduce[] = {
        REDCOLL_ALGO_AUTO, REDCOLL_ALGO_BINOMIAL, REDCOLL_ALGO_HALVING_DOUBLING, REDCOLL_ALGO_CHAIN,
        REDCOLL_ALGO_PIPELINE, REDCOLL_ALGO_BINARY, REDCOLL_ALGO_IN_ORDER_BINARY,
        REDCOLL_ALGO_BUTTERFLY, REDCOLL_ALGO_HIERARCHICAL };
    static const redcoll_algo bcast[] = {
        REDCOLL_ALGO_AUTO, REDCOLL_ALGO_BINOMIAL, REDCOLL_ALGO_SCATTER_RECURSIVE_DOUBLING,
        REDCOLL_ALGO_CHAIN, REDCOLL_ALGO_PIPELINE, REDCOLL_ALGO_HIERARCHICAL };
    redcoll_transport t;
    redcoll_options o;
    double x[4] = { 1, 2, 3, 4 }, y[4] = { 0, 0, 0, 0 };
    int i, c, k, rank;
    for (i = 0; i < (int)(sizeof ps / sizeof ps[0]); ++i)
        for (c = 0; c < REDCOLL_COLL_COUNT; ++c)
            for (k = 0; k < 4; ++k) {
                size_t bytes = k < 2 ? 8 : (size_t)1 << 24;
                redcoll_algo a = redcoll_select((redcoll_coll)c, ps[i], bytes, k % 2, NULL);
                CHECK(a != REDCOLL_ALGO_AUTO && redcoll_algo_supported((redcoll_coll)c, a) &&
                      (k % 2 || redcoll_algo_keeps_order((redcoll_coll)c, a)),
                      "select %s p=%d: %s", redcoll_coll_name((redcoll_coll)c), ps[i], redcoll_algo_name(a));
            }
    memset(&t, 0, sizeof t);
    t.send = th_fail_send; t.recv = th_fail_recv; t.sendrecv = th_fail_sendrecv;
    t.flags = REDCOLL_TRANSPORT_NO_DATA;
    memset(&o, 0, sizeof o);
    for (i = 0; i < (int)(sizeof ps / sizeof ps[0]); ++i)
        for (rank = 0; rank < 3; ++rank) {
            redcoll_result want = ps[i] <= REDCOLL_MAX_RANKS ? REDCOLL_ERR_TRANSPORT : REDCOLL_ERR_INVALID_ARG;
            t.size = ps[i];
            t.rank = rank == 0 ? 0 : rank == 1 ? ps[i] / 2 + 1 : ps[i] - 1;
            for (k = 0; k < (int)(sizeof allreduce / sizeof allreduce[0]); ++k) {
                redcoll_result r;
                o.algo = allreduce[k];
                r = redcoll_allreduce(&t, x, y, 4, REDCOLL_DOUBLE, REDCOLL_SUM, &o);
                CHECK(r == want, "allreduce %s p=%d rank %d: %s", redcoll_algo_name(o.algo), ps[i], t.rank,
                      redcoll_result_string(r));
            }
            for (k = 0; k < (int)(sizeof reduce / sizeof reduce[0]); ++k) {
                redcoll_result r;
                o.algo = reduce[k];
                r = redcoll_reduce(&t, x, y, 4, REDCOLL_DOUBLE, REDCOLL_SUM, ps[i] - 1, &o);
                CHECK(r == want, "reduce %s p=%d rank %d: %s", redcoll_algo_name(o.algo), ps[i], t.rank,
                      redcoll_result_string(r));
            }
            for (k = 0; k < (int)(sizeof bcast / sizeof bcast[0]); ++k) {
                redcoll_result r;
                o.algo = bcast[k];
                r = redcoll_bcast(&t, y, 4, REDCOLL_DOUBLE, ps[i] / 3, &o);
                CHECK(r == want, "bcast %s p=%d rank %d: %s", redcoll_algo_name(o.algo), ps[i], t.rank,
                      redcoll_result_string(r));
            }
            o.algo = REDCOLL_ALGO_AUTO;
            CHECK(redcoll_barrier(&t, &o) == want, "barrier p=%d", ps[i]);
        }
}

/* Rotation and swap against a naive reference: lengths across the swap
   buffer's 256 bytes, every shift, element sizes 1, 3, 8 and 24. */
static void test_rotate_and_swap(void) {
    static const size_t sizes[] = { 1, 3, 8, 24 };
    static unsigned char buf[1200 * 24], want[1200 * 24], other[1200 * 24];
    static const size_t ns[] = { 1, 2, 3, 7, 31, 100, 257, 1200 };
    size_t si, ni, k, i;
    for (si = 0; si < sizeof sizes / sizeof sizes[0]; ++si)
        for (ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni) {
            size_t es = sizes[si], n = ns[ni];
            redcoll__ctx c;
            memset(&c, 0, sizeof c);
            c.esize = es;
            for (k = 0; k <= n + 1; k += (n > 40 ? n / 13 + 1 : 1)) {
                for (i = 0; i < n * es; ++i) buf[i] = (unsigned char)(i * 7 + i / 251);
                for (i = 0; i < n * es; ++i) want[i] = buf[((i / es + k) % n) * es + i % es];
                redcoll__rotate(&c, buf, n, k);
                CHECK(memcmp(buf, want, n * es) == 0, "rotate n=%zu k=%zu esize=%zu", n, k, es);
            }
            for (i = 0; i < n * es; ++i) buf[i] = (unsigned char)i, other[i] = (unsigned char)(255 - i);
            redcoll__swap(&c, buf, other, n);
            for (i = 0; i < n * es && buf[i] == (unsigned char)(255 - i) && other[i] == (unsigned char)i; ++i) {}
            CHECK(i == n * es, "swap n=%zu esize=%zu: byte %zu", n, es, i);
        }
}

static void suite_core(void) {
    tf_test("core/kernels integer", test_kernels_integer);
    tf_test("core/kernels float and pairs", test_kernels_float_and_pairs);
    tf_test("core/kernels write padded types whole", test_kernels_padding);
    tf_test("core/kernels user op", test_kernels_user_op);
    tf_test("core/op validity", test_op_validity);
    tf_test("core/names", test_names);
    tf_test("core/algorithm list drives enum, names, registry", test_algorithm_list);
    tf_test("core/README algorithm table matches the list", test_readme_algorithm_table);
    tf_test("core/bad calls", test_bad_calls);
    tf_test("core/count zero", test_count_zero_is_a_no_op);
    tf_test("core/level errors touch nothing (issue 13.3)", test_level_errors_touch_nothing);
    tf_test("core/empty calls with NULL buffers (issue 13.5)", test_empty_calls_with_null_buffers);
    tf_test("core/groups above p act as p (issue 13.6)", test_groups_above_p);
    tf_test("core/p up to INT_MAX (issue 13.1)", test_huge_p);
    tf_test("core/scratch block of a transport", test_scratch_block);
    tf_test("core/rotate and swap", test_rotate_and_swap);
}
