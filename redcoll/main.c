/* main.c - the `redcoll` command-line tool.

   redcoll simulate   run a collective on the simulator, verify, print counters
   redcoll select     what the selector picks, and every candidate's modeled time
   redcoll schedule   draw an allreduce / reduce protocol round by round
   redcoll bench      time collectives on threads (or MPI), check every result
   redcoll tune       measure a transport's alpha, beta, gamma into a profile
   redcoll map        the selection map as SVG (Rabenseifner 2004, Fig. 4)
   redcoll profile    check a profile and print it in canonical form

   One translation unit: the subcommands live in redcoll/cmd_*.c files
   included below, sharing the option parser of this file, which checks every
   flag against the command and every combination against the library's rules
   before anything runs (exit status 2 with the reason). Built with
   -DREDCOLL_CLI_MPI by mpicc it is build/redcoll_mpi (`make install` installs
   it as redcoll-mpi): the same tool, plus `--transport mpi` for bench and tune
   under mpiexec. `bench --transport pshm` forks its own processes
   (transports/redcoll_pshm.h, Linux). */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "transports/redcoll_shm.h"
#include "transports/redcoll_pshm.h"
#ifdef REDCOLL_CLI_MPI
#include "transports/redcoll_mpi.h"
#endif
#include "redcoll/harness.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- commands and flags ---------------------------------------------------- */

enum {
    CMD_SIMULATE = 1 << 0, CMD_SELECT = 1 << 1, CMD_SCHEDULE = 1 << 2, CMD_BENCH = 1 << 3,
    CMD_TUNE = 1 << 4, CMD_MAP = 1 << 5, CMD_PROFILE = 1 << 6,
    CMD_TOP = 1 << 7 /* no command: `redcoll --algo list`, `redcoll --version` */
};
#define CMD_SIMS (CMD_SIMULATE | CMD_SELECT | CMD_SCHEDULE)
#define CMD_MODEL (CMD_SIMS | CMD_MAP)
#define CMD_ANY 0xff

typedef struct cli_command {
    const char *name;
    int         bit;
    const char *summary, *about;
} cli_command;

static const cli_command cli_commands[] = {
    { "simulate", CMD_SIMULATE,
      "run one collective on the simulator, verify every rank, print counters",
      "Runs one collective on the simulator with inputs whose exact result is known,\n"
      "checks every rank bitwise against a sequential canonical-order reference and\n"
      "prints per-rank messages, bytes, reduced elements, rounds, scratch and the\n"
      "modeled time. Runs estimated above the work limit are refused (--force).\n" },
    { "select", CMD_SELECT,
      "what the selector picks, and every candidate's modeled time",
      "Shows what the selector picks for the collective on p ranks and count\n"
      "elements, and every candidate algorithm's modeled time on the simulator,\n"
      "fastest first: the model's best is marked next to the selector's pick.\n"
      "Exits 1 when no candidate ran.\n" },
    { "schedule", CMD_SCHEDULE,
      "draw an allreduce or reduce protocol round by round",
      "Draws an allreduce or reduce protocol round by round, as the papers' figures\n"
      "do: which elements (A, B, ...) each rank holds and over which ranks they are\n"
      "reduced (p <= 64, count <= 52, default count: the largest power of two <= p).\n"
      "The op only decides commutativity: with a non-commutative one (matmul) the\n"
      "canonical order of every reduction is checked.\n" },
    { "bench", CMD_BENCH,
      "time collectives on threads, processes or MPI, every result checked",
      "Times collectives on a real transport: threads of this process (default,\n"
      "p = online CPUs), processes sharing memory (--transport pshm: this process\n"
      "and p - 1 it forks, each a rank, their vectors in private memory as an MPI\n"
      "program's) or MPI (the MPI build of this tool, build/redcoll_mpi, installed\n"
      "as redcoll-mpi, under mpiexec.mpich -n P, where --transport mpi is the\n"
      "default, with rows `native` for the MPI library's own collective).\n"
      "Sizes from -b growing by -f, and -e as the last one even where -f steps past\n"
      "it (nccl-tests would stop at the last step below -e). As in nccl-tests,\n"
      "`bytes` is the largest buffer (the whole vector; all p blocks for allgather,\n"
      "alltoall, gather, scatter, reduce_scatter), count = bytes / element size.\n"
      "Every row is timed in batches interleaved with the other rows of its size,\n"
      "reported as the median batch (max over ranks), then run once more on fresh\n"
      "inputs and checked on every rank against the exact result (`wrong` =\n"
      "differing elements). busbw uses nccl-tests' factors: allreduce 2(p-1)/p;\n"
      "reduce_scatter, allgather, alltoall, gather, scatter (p-1)/p; bcast, reduce 1.\n"
      "`selected` is what auto picks for the size. With --algo all, each size also\n"
      "reports auto's time over the fastest algorithm's (the regret), and the run\n"
      "ends with auto's pick against the fastest, size by size, and the noise: a\n"
      "row's slowest batch over its fastest, the median over rows. Progress goes to\n"
      "stderr.\n"
      "Exits 1 if any row failed or had a wrong element.\n" },
    { "tune", CMD_TUNE,
      "measure a transport's alpha, beta, gamma into a profile",
      "Measures the cost model of a transport between ranks 0 and 1: ping-pong\n"
      "(one-way messages), exchange (sendrecv both ways) and reduction-kernel runs,\n"
      "each fitted to a + n b, and writes a profile (--out FILE, else stdout) with\n"
      "alpha, beta, gamma, f_alpha, f_beta that select, simulate, bench and map read\n"
      "with --profile FILE. Threads by default; MPI with --transport mpi.\n" },
    { "map", CMD_MAP,
      "the selection map as SVG (Rabenseifner 2004, Fig. 4)",
      "Draws the selection map as SVG, like Fig. 4 of Rabenseifner 2004: process\n"
      "count on the x axis (log-spaced p from --p-min to --p-max, --p-per-octave\n"
      "values a doubling; or every --p-step), message size on the y axis (-b to -e\n"
      "by -f), one colour per winning algorithm; the legend gives each winner's\n"
      "share of the drawn map.\n"
      "--from model (default): the least modeled time, from the cost functions AUTO\n"
      "picks by (redcoll_algo_cost), for the dtype's whole elements: the full grid\n"
      "in a few seconds; --from simulator: the fastest with every candidate run on\n"
      "the simulator in no-data mode (slow for large p: the estimate is printed,\n"
      "and runs above the work limit need --force); --from selector: what\n"
      "redcoll_select picks (--selector papers: the papers' rules); --from-csv FILE:\n"
      "the fastest measured algorithm in a `redcoll bench --csv` output (several\n"
      "runs at different p may be concatenated).\n" },
    { "profile", CMD_PROFILE,
      "check a profile and print it in canonical form",
      "Reads the profile FILE (as `redcoll tune` writes it), reports what is wrong\n"
      "with it (exit 2) or prints it in canonical form.\n" },
};

typedef enum cli_flag_id {
    F_HELP, F_VERSION, F_COLL, F_ALGO, F_P, F_COUNT, F_DTYPE, F_OP, F_ROOT, F_IN_PLACE,
    F_OUT_OF_PLACE, F_ALPHA, F_BETA, F_GAMMA, F_F_ALPHA, F_F_BETA, F_INTER_ALPHA, F_INTER_BETA,
    F_PROFILE, F_FAIL_RANK,
    F_FAIL_CALL, F_THRESHOLD, F_SEGMENT, F_GROUPS, F_INNER, F_OUTER, F_NODE_SIZE, F_SELECTOR,
    F_NO_DATA, F_ALL_RANKS, F_JSON, F_CSV, F_FORCE, F_LIMIT, F_PROGRESS, F_TRANSPORT,
    F_MIN_BYTES, F_MAX_BYTES, F_FACTOR, F_ITERS, F_WARMUP, F_REPS, F_TIMEOUT, F_OUT, F_SVG,
    F_FROM, F_FROM_CSV, F_P_MIN, F_P_MAX, F_P_STEP, F_P_OCTAVE,
    F_COUNT_
} cli_flag_id;

/* One row per (flag, commands it means the same thing to); arg NULL: a switch. */
typedef struct cli_flag {
    cli_flag_id id;
    const char *name, *arg;
    int         cmds;
    const char *help;
} cli_flag;

static const cli_flag cli_flags[] = {
    { F_COLL, "--coll", "C", CMD_MODEL | CMD_TOP,
      "collective: allreduce (default), reduce, reduce_scatter, reduce_scatter_block, "
      "allgather, allgatherv, bcast, alltoall, gather, scatter, barrier" },
    { F_COLL, "--coll", "C", CMD_BENCH, "a collective as for simulate, or `all` (default allreduce)" },
    { F_ALGO, "--algo", "A", CMD_SIMULATE | CMD_SCHEDULE,
      "algorithm name, `auto` (default: the selector, or REDCOLL_<COLL>_ALGORITHM) or "
      "`list` (the collective's algorithms)" },
    { F_ALGO, "--algo", "A", CMD_SELECT | CMD_TOP, "`list`: the algorithms of every collective, or of --coll" },
    { F_ALGO, "--algo", "A", CMD_BENCH,
      "algorithm name, `auto` (default: the selector, or REDCOLL_<COLL>_ALGORITHM), `all` "
      "(every algorithm of the collective, and auto) or `list`" },
    { F_P, "-p", "P", CMD_SIMS, "number of ranks (default 8)" },
    { F_P, "-p", "P", CMD_BENCH, "ranks: threads or processes (default: the online CPUs); with --transport mpi: the job's size" },
    { F_P, "-p", "P", CMD_TUNE, "threads (default 2; ranks 0 and 1 measure); with --transport mpi: the job's size" },
    { F_COUNT, "--count", "N", CMD_SCHEDULE,
      "elements drawn, A, B, ... (1..52; default: the largest power of two <= p)" },
    { F_COUNT, "--count", "N", CMD_SIMULATE | CMD_SELECT,
      "elements per rank (per block for gather/scatter/allgather/alltoall/"
      "reduce_scatter_block; the total for allgatherv and reduce_scatter, spread "
      "unevenly, some ranks getting none: \"counts\" in --json); K/M/G suffixes "
      "(x1024); default 1024" },
    { F_DTYPE, "--dtype", "D", CMD_SIMULATE | CMD_SELECT | CMD_BENCH | CMD_TUNE | CMD_MAP,
      "int8..uint64, float, double (default), long_double, float_int, double_int, "
      "long_int, 2int, short_int, long_double_int" },
    { F_OP, "--op", "O", CMD_SIMULATE | CMD_SELECT | CMD_BENCH | CMD_TUNE | CMD_MAP,
      "sum (default), prod, min, max, land, lor, lxor, band, bor, bxor, minloc, maxloc "
      "(valid for the dtype), matmul (non-commutative 2x2 matrix product of uint32, "
      "16-byte elements), user_sum (commutative user op on int32), sum_exact (float, double: "
      "the correctly rounded exact sum)" },
    { F_OP, "--op", "O", CMD_SCHEDULE,
      "an op as for simulate; only its commutativity matters here (default sum)" },
    { F_ROOT, "--root", "R", CMD_SIMS | CMD_BENCH, "root of rooted collectives (default 0)" },
    { F_IN_PLACE, "--in-place", NULL, CMD_SIMS, "pass REDCOLL_IN_PLACE where the collective allows it" },
    { F_IN_PLACE, "--in-place", NULL, CMD_BENCH, "time in-place calls (with --out-of-place: both)" },
    { F_OUT_OF_PLACE, "--out-of-place", NULL, CMD_BENCH, "time out-of-place calls (the default)" },
    { F_ALPHA, "--alpha", "A", CMD_MODEL, "cost model: seconds per message (default 2e-6)" },
    { F_BETA, "--beta", "B", CMD_MODEL, "seconds per byte sent (default 1e-10)" },
    { F_GAMMA, "--gamma", "G", CMD_MODEL, "seconds per byte reduced (default 2.5e-11)" },
    { F_F_ALPHA, "--f-alpha", "FA", CMD_MODEL, "one-way message factor on alpha (default 1)" },
    { F_F_BETA, "--f-beta", "FB", CMD_MODEL,
      "one-way message factor on beta (default 1). The model is the simulator's and "
      "the options' (what the library's model-driven choices use)" },
    { F_INTER_ALPHA, "--inter-alpha", "A", CMD_MODEL,
      "two levels (with --node-size): seconds per message between nodes; --alpha and --beta "
      "are then the links inside a node (default: --alpha, one level)" },
    { F_INTER_BETA, "--inter-beta", "B", CMD_MODEL,
      "seconds per byte between nodes, each node's link shared by the messages on it at "
      "once: k of them move at 1/(k B) bytes/s each (default: --beta, one level)" },
    { F_PROFILE, "--profile", "FILE", CMD_MODEL | CMD_BENCH,
      "the cost model from a profile written by `redcoll tune` (flags after it override "
      "single values)" },
    { F_FAIL_RANK, "--fail-rank", "R", CMD_SIMULATE | CMD_SCHEDULE, "with --fail-call: the rank whose call fails" },
    { F_FAIL_CALL, "--fail-call", "K", CMD_SIMULATE | CMD_SCHEDULE,
      "make transport call K (1-based) of --fail-rank fail, to watch recovery" },
    { F_THRESHOLD, "--threshold", "B", CMD_MODEL | CMD_BENCH,
      "butterfly threshold b in bytes (K/M/G; 0: every level halves), `inf` (none halves) "
      "or `auto` (the cost model chooses: the default)" },
    { F_SEGMENT, "--segment", "BYTES", CMD_MODEL | CMD_BENCH, "segment size of pipelined schedules (K/M/G)" },
    { F_GROUPS, "--groups", "G", CMD_MODEL | CMD_BENCH, "hierarchical: number of groups (<= p)" },
    { F_INNER, "--inner", "A", CMD_MODEL | CMD_BENCH,
      "hierarchical: algorithm inside the groups (a reduce algorithm for reduce and "
      "allreduce, a bcast one for bcast)" },
    { F_OUTER, "--outer", "A", CMD_MODEL | CMD_BENCH,
      "hierarchical: algorithm among the group leaders (reduce: reduce, allreduce: "
      "allreduce, bcast: bcast)" },
    { F_NODE_SIZE, "--node-size", "N", CMD_MODEL,
      "ranks per node: nodes of N consecutive ranks (the last may have fewer); "
      "hierarchical groups follow the nodes, and with --inter-alpha/--inter-beta the "
      "model has two levels" },
    { F_SELECTOR, "--selector", "S", CMD_MODEL | CMD_BENCH, "rules AUTO follows: model (default: least modeled time), papers or mpich" },
    { F_NO_DATA, "--no-data", NULL, CMD_SIMULATE,
      "move no payload (counters and times only; automatic when the buffers would "
      "exceed 2 GiB)" },
    { F_ALL_RANKS, "--all-ranks", NULL, CMD_SIMULATE, "print every rank, not only the first 64" },
    { F_JSON, "--json", NULL, CMD_SIMULATE | CMD_SELECT | CMD_BENCH, "one JSON object on stdout" },
    { F_CSV, "--csv", NULL, CMD_BENCH,
      "CSV on stdout: coll,algo,selected,transport,p,bytes,count,dtype,op,in_place,"
      "time_us,algbw_GBps,busbw_GBps,wrong,iters,result,regret" },
    { F_FORCE, "--force", NULL, CMD_SIMULATE | CMD_SELECT | CMD_MAP,
      "run even when the work estimate is above the limit" },
    { F_LIMIT, "--limit", "EVENTS", CMD_SIMULATE | CMD_SELECT | CMD_MAP,
      "the work limit: simulator events (transport calls, plus 64 per rank, plus one "
      "per 64 KiB copied in data mode; default 1e8)" },
    { F_PROGRESS, "--progress", "S", CMD_SIMULATE | CMD_SELECT | CMD_MAP | CMD_BENCH | CMD_TUNE,
      "seconds before progress lines start on stderr (default 3)" },
    { F_TRANSPORT, "--transport", "T", CMD_BENCH | CMD_TUNE,
      "threads, pshm (bench: processes sharing memory) or mpi (the MPI build, "
      "build/redcoll_mpi, installed as redcoll-mpi, under "
      "mpiexec.mpich, where mpi is the default; elsewhere threads is)" },
    { F_MIN_BYTES, "-b", "BYTES", CMD_BENCH | CMD_MAP, "smallest size (K/M/G; bench default 8, map 8)" },
    { F_MAX_BYTES, "-e", "BYTES", CMD_BENCH | CMD_MAP,
      "largest size, always the last one (bench default 8M, map 64M)" },
    { F_FACTOR, "-f", "F", CMD_BENCH | CMD_MAP,
      "size factor between steps, >= 2; the step to -e may be smaller (bench default 4, map 2)" },
    { F_ITERS, "--iters", "N", CMD_BENCH,
      "calls per timed batch (default 0: as many as fill 5 ms, at least 1)" },
    { F_WARMUP, "--warmup", "N", CMD_BENCH, "untimed calls per row and size before timing (default 2)" },
    { F_REPS, "--reps", "N", CMD_BENCH | CMD_TUNE, "timed batches per row, reported as the median (default 5)" },
    { F_TIMEOUT, "--timeout", "S", CMD_BENCH | CMD_TUNE,
      "threads: a blocking call waiting longer fails with a timeout (default 60)" },
    { F_OUT, "--out", "FILE", CMD_TUNE, "write the profile to FILE (default: stdout)" },
    { F_OUT, "--out", "FILE", CMD_MAP, "write the SVG to FILE (as --svg)" },
    { F_SVG, "--svg", "FILE", CMD_MAP, "write the SVG to FILE (default: stdout)" },
    { F_FROM, "--from", "SRC", CMD_MAP,
      "model (default: the least modeled time, the cost functions AUTO uses), simulator "
      "(every candidate run on the simulator, under the work limit) or selector "
      "(redcoll_select under --selector)" },
    { F_FROM_CSV, "--from-csv", "FILE", CMD_MAP, "the fastest measured algorithm of a bench CSV" },
    { F_P_MIN, "--p-min", "P", CMD_MAP, "smallest p (default 2)" },
    { F_P_MAX, "--p-max", "P", CMD_MAP, "largest p (default 1024)" },
    { F_P_STEP, "--p-step", "S", CMD_MAP, "every S-th p from --p-min (instead of log-spaced p)" },
    { F_P_OCTAVE, "--p-per-octave", "K", CMD_MAP,
      "log-spaced p: K values per doubling (default 8), every p where they are closer "
      "than 1, powers of two always" },
    { F_VERSION, "--version", NULL, CMD_ANY, "print the version" },
    { F_HELP, "--help", NULL, CMD_ANY, "this text" },
};
#define CLI_NFLAGS (sizeof cli_flags / sizeof cli_flags[0])

/* ---- the parsed command line ----------------------------------------------- */

typedef struct cli {
    int             cmd;                /* CMD_* */
    const char     *cmd_name;
    int             given[F_COUNT_];    /* flags seen */
    rc_spec         spec;
    redcoll_op      op;                 /* resolved from spec.op */
    int             commutative;
    int             json, csv, list, help, version, all_ranks, force;
    int             no_data;            /* -1: automatic */
    double          limit, progress_after;
    int             coll_all, algo_all; /* bench: --coll all, --algo all */
    const char     *env_var;            /* REDCOLL_<COLL>_ALGORITHM that forced spec.opts.algo */
    int             mpi;                /* --transport mpi */
    int             pshm;               /* --transport pshm */
    size_t          min_bytes, max_bytes;
    size_t          factor;
    int             iters, warmup, reps;
    double          timeout;
    const char     *out, *from, *from_csv, *profile;
    int             p_min, p_max, p_step, p_octave;
    int             in_place, out_of_place;
    const char     *positional;         /* profile FILE */
} cli;

/* The command whose help a usage error points to (NULL: the top level's). */
static const char *cli_help_cmd;

static int cli_bad(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "redcoll: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see redcoll %s%s--help)\n", cli_help_cmd ? cli_help_cmd : "", cli_help_cmd ? " " : "");
    return 2;
}

/* A non-negative number, no leading space or sign, finite. */
static int cli_number(const char *s, double *out) {
    char *end;
    if (!s[0] || isspace((unsigned char)s[0]) || s[0] == '+' || s[0] == '-') return 0;
    errno = 0;
    *out = strtod(s, &end);
    return !*end && errno == 0 && isfinite(*out) && *out >= 0;
}

/* Digits with an optional K, M or G (x 1024, 1024^2, 1024^3): nothing else,
   no space, no sign, no overflow. */
static int cli_size(const char *s, size_t *out) {
    unsigned long long v = 0;
    int shift = 0;
    if (!isdigit((unsigned char)*s)) return 0;
    for (; isdigit((unsigned char)*s); ++s) {
        unsigned d = (unsigned)(*s - '0');
        if (v > (ULLONG_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    if (*s == 'K' || *s == 'k') { shift = 10; ++s; }
    else if (*s == 'M' || *s == 'm') { shift = 20; ++s; }
    else if (*s == 'G' || *s == 'g') { shift = 30; ++s; }
    if (*s || v > (unsigned long long)SIZE_MAX >> shift) return 0;
    *out = (size_t)(v << shift);
    return 1;
}

/* The size after `bytes` on the grid of -b, -e and -f (bench, map): 0 after
   -e; -e itself where the next step of -f would pass it, so the last size
   is always the one asked for. */
static size_t cli_next_size(const cli *c, size_t bytes) {
    if (bytes >= c->max_bytes) return 0;
    if (bytes == 0) return 1;
    return bytes > c->max_bytes / c->factor ? c->max_bytes : bytes * c->factor;
}

static int cli_int(const char *s, int *out, int lo) {
    size_t v;
    if (!cli_size(s, &v) || v > (size_t)INT_MAX || (int)v < lo) return 0;
    *out = (int)v;
    return 1;
}

static int cli_dtype(const char *s, redcoll_dtype *out) {
    int d;
    for (d = 0; d < REDCOLL_DTYPE_COUNT; ++d)
        if (strcmp(s, redcoll_dtype_name((redcoll_dtype)d)) == 0) { *out = (redcoll_dtype)d; return 1; }
    return 0;
}

/* "1.5 MiB", "8 B": for messages to people. */
static const char *cli_human(char *buf, size_t cap, double bytes) {
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
    int u = 0;
    while (bytes >= 1024 && u < 6) { bytes /= 1024; ++u; }
    if (u == 0 || bytes >= 100 || bytes == floor(bytes)) snprintf(buf, cap, "%.0f %s", bytes, unit[u]);
    else snprintf(buf, cap, "%.3g %s", bytes, unit[u]);
    return buf;
}

/* Bytes of memory the machine can give now without swapping (Linux:
   MemAvailable; else the free pages), 0 when unknown. */
static double cli_mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb >= 0) return kb * 1024;
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
    if (sysconf(_SC_AVPHYS_PAGES) > 0 && sysconf(_SC_PAGESIZE) > 0)
        return (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
#endif
    return 0;
}

/* 1 when `need` bytes (what `what` needs, in words after "needs about")
   fit in the memory available; else 0, having said on stderr how much is
   needed and how much there is, before anything was allocated: a run that
   climbs into swap or meets the OOM killer tells nobody anything. */
static int cli_mem_fits(const char *cmd, const char *what, double need, const char *how) {
    double have = cli_mem_available();
    char h1[32], h2[32];
    if (have <= 0 || need <= have) return 1;
    fprintf(stderr, "redcoll %s: %s needs about %s of memory (%s), and this machine has %s available: %s\n",
            cmd, what, cli_human(h1, sizeof h1, need), how, cli_human(h2, sizeof h2, have),
            strcmp(cmd, "bench") == 0 ? "lower -e (or -p)" : "free some memory first");
    return 0;
}

static double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cli_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (; s && *s; ++s) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if (*s == '\n') fputs("\\n", f);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}


/* ---- what the library would do ------------------------------------------------ */

/* The bytes the selector sees for spec.count elements (as the entry points compute them). */
static size_t cli_sel_bytes(redcoll_coll coll, int p, size_t count, size_t esize) {
    if (coll == REDCOLL_COLL_BARRIER) return 0;
    if (coll == REDCOLL_COLL_REDUCE_SCATTER_BLOCK) return count * (size_t)p * esize;
    return count * esize;
}

/* The collective a level of the hierarchical transformation runs. */
static redcoll_coll cli_level_coll(redcoll_coll coll, int outer) {
    if (coll == REDCOLL_COLL_BCAST) return REDCOLL_COLL_BCAST;
    return coll == REDCOLL_COLL_ALLREDUCE && outer ? REDCOLL_COLL_ALLREDUCE : REDCOLL_COLL_REDUCE;
}

/* Why `algo` cannot serve `coll` with this op, or NULL when it can. */
static const char *cli_algo_problem(redcoll_coll coll, redcoll_algo algo, int commutative) {
    if (algo == REDCOLL_ALGO_AUTO) return NULL;
    if (!redcoll_algo_supported(coll, algo)) return "is not an algorithm of";
    if (!commutative && !redcoll_algo_keeps_order(coll, algo))
        return "breaks rank order (it needs a commutative op) in";
    return NULL;
}

/* The algorithm REDCOLL_<COLL>_ALGORITHM forces for coll: 1 and *algo set,
   0 when unset or `auto`, -1 (reason printed) when it cannot serve. */
static int cli_env_algo(redcoll_coll coll, int commutative, redcoll_algo *algo, const char **var) {
    static char names[REDCOLL_COLL_COUNT][48];
    char *name = names[coll], *q;
    const char *v, *why;
    snprintf(name, sizeof names[0], "REDCOLL_%s_ALGORITHM", redcoll_coll_name(coll));
    for (q = name; *q; ++q) *q = (char)toupper((unsigned char)*q);
    *var = name;
    v = getenv(name);
    if (!v || !*v || strcmp(v, "auto") == 0) return 0;
    if (!redcoll_algo_from_name(v, algo)) {
        cli_bad("%s=%s: no such algorithm (try redcoll --algo list)", name, v);
        return -1;
    }
    if ((why = cli_algo_problem(coll, *algo, commutative)) != NULL) {
        cli_bad("%s=%s: %s %s %s", name, v, v, why, redcoll_coll_name(coll));
        return -1;
    }
    return 1;
}

/* The algorithm AUTO resolves to for spec (the forced one when set). */
static redcoll_algo cli_selected(const cli *c, const rc_spec *s) {
    if (s->opts.algo != REDCOLL_ALGO_AUTO) return s->opts.algo;
    return redcoll_select(s->coll, s->p,
                          cli_sel_bytes(s->coll, s->p, s->count, redcoll_dtype_size(s->dtype)),
                          c->commutative || !rc_reduces(s->coll), &s->opts);
}

/* ---- parsing ------------------------------------------------------------------- */

static const cli_flag *cli_find_flag(const char *name, int cmd, int *exists) {
    size_t i;
    *exists = 0;
    for (i = 0; i < CLI_NFLAGS; ++i)
        if (strcmp(name, cli_flags[i].name) == 0) {
            *exists = 1;
            if (cli_flags[i].cmds & cmd) return &cli_flags[i];
        }
    return NULL;
}

static void cli_set_model(cli *c, redcoll_cost_model m) {
    c->spec.sim.model = m;
    c->spec.opts.model = m;
}

/* Reads a profile into the model; 0 or the exit status. */
static int cli_load_profile(cli *c, const char *path) {
    char err[256];
    redcoll_cost_model m;
    char *text = rc_read_file(path);
    if (!text) return cli_bad("--profile %s: %s", path, strerror(errno));
    if (redcoll_cost_model_parse(text, &m, err, sizeof err) != REDCOLL_OK) {
        free(text);
        return cli_bad("--profile %s: %s", path, err);
    }
    free(text);
    cli_set_model(c, m);
    return 0;
}

/* One flag with its value v (NULL for switches); 0 or the exit status. */
static int cli_apply(cli *c, const cli_flag *fl, const char *v) {
    rc_spec *s = &c->spec;
    double d;
    size_t z;
    switch (fl->id) {
    case F_HELP: c->help = 1; break;
    case F_VERSION: c->version = 1; break;
    case F_JSON: c->json = 1; break;
    case F_CSV: c->csv = 1; break;
    case F_FORCE: c->force = 1; break;
    case F_IN_PLACE: c->in_place = 1; s->in_place = 1; break;
    case F_OUT_OF_PLACE: c->out_of_place = 1; break;
    case F_NO_DATA: c->no_data = 1; break;
    case F_ALL_RANKS: c->all_ranks = 1; break;
    case F_COLL:
        if (c->cmd == CMD_BENCH && strcmp(v, "all") == 0) c->coll_all = 1;
        else if (!redcoll_coll_from_name(v, &s->coll)) return cli_bad("unknown collective '%s'", v);
        break;
    case F_ALGO:
        if (strcmp(v, "list") == 0) c->list = 1;
        else if (c->cmd == CMD_BENCH && strcmp(v, "all") == 0) c->algo_all = 1;
        else if (c->cmd & (CMD_SELECT | CMD_TOP))
            return cli_bad("%s takes --algo list only (it shows every algorithm)", c->cmd_name);
        else if (!redcoll_algo_from_name(v, &s->opts.algo))
            return cli_bad("unknown algorithm '%s' (try --algo list)", v);
        break;
    case F_P: if (!cli_int(v, &s->p, 1)) return cli_bad("-p wants a rank count >= 1, not '%s'", v); break;
    case F_COUNT:
        if (!cli_size(v, &s->count)) return cli_bad("--count wants a non-negative integer (K/M/G suffixes), not '%s'", v);
        break;
    case F_DTYPE: if (!cli_dtype(v, &s->dtype)) return cli_bad("unknown dtype '%s'", v); break;
    case F_OP: {
        redcoll_dtype dd = s->dtype;
        redcoll_op op;
        if (!rc_op_from_name(v, &dd, &op)) return cli_bad("unknown op '%s'", v);
        s->op = v;
        break;
    }
    case F_ROOT: if (!cli_int(v, &s->root, 0)) return cli_bad("--root wants a rank, not '%s'", v); break;
    case F_ALPHA: case F_BETA: case F_GAMMA: case F_F_ALPHA: case F_F_BETA: case F_INTER_ALPHA:
    case F_INTER_BETA: {
        redcoll_cost_model m = s->sim.model;
        if (!cli_number(v, &d)) return cli_bad("%s wants a non-negative number, not '%s'", fl->name, v);
        if (fl->id == F_ALPHA) m.alpha = d;
        else if (fl->id == F_BETA) m.beta = d;
        else if (fl->id == F_GAMMA) m.gamma = d;
        else if (fl->id == F_F_ALPHA) m.f_alpha = d;
        else if (fl->id == F_F_BETA) m.f_beta = d;
        else if (fl->id == F_INTER_ALPHA) m.inter_alpha = d;
        else m.inter_beta = d;
        cli_set_model(c, m);
        break;
    }
    case F_PROFILE: c->profile = v; return cli_load_profile(c, v);
    case F_FAIL_RANK: if (!cli_int(v, &s->sim.fail_rank, 0)) return cli_bad("--fail-rank wants a rank, not '%s'", v); break;
    case F_FAIL_CALL: {
        int k;
        if (!cli_int(v, &k, 1)) return cli_bad("--fail-call wants a call number >= 1, not '%s'", v);
        s->sim.fail_call = k;
        break;
    }
    case F_THRESHOLD:
        if (strcmp(v, "auto") == 0) s->opts.threshold_bytes = REDCOLL_THRESHOLD_AUTO;
        else if (strcmp(v, "inf") == 0) s->opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_NONE;
        else if (strcmp(v, "zero") == 0) s->opts.threshold_bytes = REDCOLL_THRESHOLD_HALVE_ALL;
        else if (!cli_size(v, &z) || z >= REDCOLL_THRESHOLD_HALVE_ALL)
            return cli_bad("--threshold wants bytes (K/M/G), `inf` or `auto`, not '%s'", v);
        else s->opts.threshold_bytes = z ? z : REDCOLL_THRESHOLD_HALVE_ALL;
        break;
    case F_SEGMENT:
        if (!cli_size(v, &s->opts.segment_bytes)) return cli_bad("--segment wants bytes (K/M/G), not '%s'", v);
        break;
    case F_GROUPS: if (!cli_int(v, &s->opts.groups, 1)) return cli_bad("--groups wants G >= 1, not '%s'", v); break;
    case F_INNER: case F_OUTER:
        if (!redcoll_algo_from_name(v, fl->id == F_INNER ? &s->opts.inner_algo : &s->opts.outer_algo))
            return cli_bad("unknown %s algorithm '%s'", fl->id == F_INNER ? "inner" : "outer", v);
        break;
    case F_NODE_SIZE:
        if (!cli_int(v, &s->sim.node_size, 1)) return cli_bad("--node-size wants N >= 1, not '%s'", v);
        s->opts.by_node = 1;
        s->opts.ranks_per_node = s->sim.node_size; /* what redcoll_select prices (no transport there) */
        break;
    case F_SELECTOR:
        if (strcmp(v, "model") == 0) s->opts.selector = REDCOLL_SELECTOR_MODEL;
        else if (strcmp(v, "papers") == 0) s->opts.selector = REDCOLL_SELECTOR_PAPERS;
        else if (strcmp(v, "mpich") == 0) s->opts.selector = REDCOLL_SELECTOR_MPICH;
        else return cli_bad("--selector is model, papers or mpich, not '%s'", v);
        break;
    case F_LIMIT: if (!cli_number(v, &c->limit)) return cli_bad("--limit wants a number of events, not '%s'", v); break;
    case F_PROGRESS: if (!cli_number(v, &c->progress_after)) return cli_bad("--progress wants seconds, not '%s'", v); break;
    case F_TRANSPORT:
        c->mpi = c->pshm = 0;
        if (strcmp(v, "threads") == 0) {}
        else if (strcmp(v, "mpi") == 0) c->mpi = 1;
        else if (strcmp(v, "pshm") == 0) c->pshm = 1;
        else return cli_bad("--transport is threads, pshm or mpi, not '%s'", v);
        break;
    case F_MIN_BYTES: if (!cli_size(v, &c->min_bytes)) return cli_bad("-b wants bytes (K/M/G), not '%s'", v); break;
    case F_MAX_BYTES: if (!cli_size(v, &c->max_bytes)) return cli_bad("-e wants bytes (K/M/G), not '%s'", v); break;
    case F_FACTOR:
        if (!cli_size(v, &c->factor) || c->factor < 2) return cli_bad("-f wants an integer factor >= 2, not '%s'", v);
        break;
    case F_ITERS: if (!cli_int(v, &c->iters, 0)) return cli_bad("--iters wants N >= 0, not '%s'", v); break;
    case F_WARMUP: if (!cli_int(v, &c->warmup, 0)) return cli_bad("--warmup wants N >= 0, not '%s'", v); break;
    case F_REPS: if (!cli_int(v, &c->reps, 1)) return cli_bad("--reps wants N >= 1, not '%s'", v); break;
    case F_TIMEOUT:
        if (!cli_number(v, &c->timeout) || c->timeout <= 0) return cli_bad("--timeout wants seconds > 0, not '%s'", v);
        break;
    case F_OUT: case F_SVG: c->out = v; break;
    case F_FROM:
        if (strcmp(v, "model") != 0 && strcmp(v, "simulator") != 0 && strcmp(v, "selector") != 0)
            return cli_bad("--from is model, simulator or selector, not '%s' (a CSV: --from-csv FILE)", v);
        c->from = v;
        break;
    case F_FROM_CSV: c->from_csv = v; break;
    case F_P_MIN: if (!cli_int(v, &c->p_min, 1)) return cli_bad("--p-min wants P >= 1, not '%s'", v); break;
    case F_P_MAX: if (!cli_int(v, &c->p_max, 1)) return cli_bad("--p-max wants P >= 1, not '%s'", v); break;
    case F_P_STEP: if (!cli_int(v, &c->p_step, 1)) return cli_bad("--p-step wants S >= 1, not '%s'", v); break;
    case F_P_OCTAVE:
        if (!cli_int(v, &c->p_octave, 1) || c->p_octave > 1024)
            return cli_bad("--p-per-octave wants K in 1..1024, not '%s'", v);
        break;
    case F_COUNT_: break;
    }
    return 0;
}

static void cli_defaults(cli *c) {
    rc_spec *s = &c->spec;
    s->coll = REDCOLL_COLL_ALLREDUCE;
    s->p = 8;
    s->count = 1024;
    s->dtype = REDCOLL_DOUBLE;
    s->op = "sum";
    s->use_model = 1;
    cli_set_model(c, redcoll_mock_defaults(1).model);
    c->no_data = -1;
    c->limit = 1e8;
    c->progress_after = 3.0;
    c->min_bytes = 8;
    c->max_bytes = c->cmd == CMD_MAP ? (size_t)64 << 20 : (size_t)8 << 20;
    c->factor = c->cmd == CMD_MAP ? 2 : 4;
    c->warmup = 2;
    c->reps = 5;
    c->timeout = 60;
    c->from = "model";
    c->p_min = 2;
    c->p_max = 1024;
    c->p_step = 1;
    c->p_octave = 8;
    if (c->cmd == CMD_TUNE) s->p = 2;
#ifdef REDCOLL_CLI_MPI
    /* Started by mpiexec (MPICH's PMI, Open MPI, PMIx), bench and tune run on
       MPI unless told otherwise: P processes each timing its own threads
       would print P unrelated benches. */
    if (c->cmd & (CMD_BENCH | CMD_TUNE))
        c->mpi = getenv("PMI_SIZE") || getenv("PMI_RANK") || getenv("OMPI_COMM_WORLD_SIZE") ||
                 getenv("PMIX_RANK");
#endif
    if (c->cmd == CMD_BENCH) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        s->p = n >= 1 && n <= INT_MAX ? (int)n : 1;
    }
}

/* Parses argv[first..]; returns 0 or the exit status of a usage error. */
static int cli_parse(cli *c, int cmd, const char *name, int argc, char **argv, int first) {
    int i, bad;
    memset(c, 0, sizeof *c);
    c->cmd = cmd;
    c->cmd_name = name;
    cli_help_cmd = cmd == CMD_TOP ? NULL : name;
    cli_defaults(c);
    for (i = first; i < argc; ++i) {
        const char *f = argv[i];
        int exists;
        const cli_flag *fl = cli_find_flag(f, cmd, &exists);
        if (strcmp(f, "-h") == 0) fl = cli_find_flag("--help", cmd, &exists);
        if (!fl && cmd == CMD_PROFILE && f[0] != '-' && !c->positional) { c->positional = f; continue; }
        if (!fl && exists) return cli_bad("%s does not take %s", name, f);
        if (!fl) return cli_bad("unknown flag '%s'", f);
        if (fl->arg && i + 1 >= argc) return cli_bad("%s needs a value", f);
        c->given[fl->id] = 1;
        bad = cli_apply(c, fl, fl->arg ? argv[++i] : NULL);
        if (bad) return bad;
    }
    return 0;
}

/* ---- checks before anything runs ------------------------------------------------- */

/* The op and dtype: resolved, and valid together; 0 or the exit status. */
static int cli_check_op(cli *c) {
    rc_spec *s = &c->spec;
    redcoll_dtype forced = s->dtype;
    rc_op_from_name(s->op, &forced, &c->op);
    if (forced != s->dtype) { /* matmul and user_sum bring their own element type */
        if (c->given[F_DTYPE])
            return cli_bad("--op %s works on %s elements, not --dtype %s", s->op,
                           forced == REDCOLL_INT32 ? "int32" : "its own 16-byte", redcoll_dtype_name(s->dtype));
        s->dtype = forced;
    }
    c->commutative = c->op.kind != REDCOLL_OP_USER || c->op.commutative;
    if (c->op.kind != REDCOLL_OP_USER && !redcoll_op_valid_for(c->op.kind, s->dtype) &&
        (rc_reduces(s->coll) || c->coll_all || c->cmd & (CMD_TUNE | CMD_MAP)))
        return cli_bad("--op %s is not defined on --dtype %s", s->op, redcoll_dtype_name(s->dtype));
    return 0;
}

/* An algorithm and its hierarchical levels for coll; 0 or the exit status. */
static int cli_check_algo(const cli *c, redcoll_coll coll) {
    const redcoll_options *o = &c->spec.opts;
    const char *why = cli_algo_problem(coll, o->algo, c->commutative), *cn = redcoll_coll_name(coll);
    int outer;
    if (why) {
        if (!redcoll_algo_supported(coll, o->algo))
            return cli_bad("%s is not an algorithm of %s (try --algo list --coll %s)",
                           redcoll_algo_name(o->algo), cn, cn);
        return cli_bad("%s %s %s; --op %s is not commutative", redcoll_algo_name(o->algo), why, cn,
                       c->spec.op);
    }
    if ((o->inner_algo || o->outer_algo) && o->algo != REDCOLL_ALGO_HIERARCHICAL)
        return cli_bad("--inner and --outer are the levels of --algo hierarchical%s", "");
    if (o->algo != REDCOLL_ALGO_HIERARCHICAL) return 0;
    for (outer = 0; outer < 2; ++outer) {
        redcoll_algo a = outer ? o->outer_algo : o->inner_algo;
        redcoll_algo other = outer ? o->inner_algo : o->outer_algo;
        redcoll_coll lc = cli_level_coll(coll, outer);
        const char *lvl = outer ? "--outer" : "--inner";
        /* AUTO takes the other level's algorithm where lc has it (as the library does) */
        if (a == REDCOLL_ALGO_AUTO && other != REDCOLL_ALGO_HIERARCHICAL && redcoll_algo_supported(lc, other))
            a = other;
        if (a == REDCOLL_ALGO_AUTO) continue;
        if (a == REDCOLL_ALGO_HIERARCHICAL || !redcoll_algo_supported(lc, a))
            return cli_bad("%s %s: the %s level of a hierarchical %s runs a %s algorithm "
                           "(not hierarchical; try --algo list --coll %s)", lvl,
                           redcoll_algo_name(a), outer ? "outer" : "inner", cn, redcoll_coll_name(lc),
                           redcoll_coll_name(lc));
        if (!c->commutative && !redcoll_algo_keeps_order(lc, a))
            return cli_bad("%s %s breaks rank order (it needs a commutative op); --op %s is not "
                           "commutative", lvl, redcoll_algo_name(a), c->spec.op);
    }
    return 0;
}

/* count x element size (x p for block collectives) must fit in size_t. */
static int cli_check_bytes(const cli *c) {
    const rc_spec *s = &c->spec;
    size_t es = redcoll_dtype_size(s->dtype), per = rc_blocks(s->coll) ? (size_t)s->p : 1;
    if (es && s->count > SIZE_MAX / es / per)
        return cli_bad("--count %zu of %zu-byte %s%s is more bytes than size_t holds", s->count, es,
                       redcoll_dtype_name(s->dtype), per > 1 ? " times p blocks" : "");
    return 0;
}

/* Every combination the command cannot serve is refused here, with the
   reason, before any rank runs. */
static int cli_check(cli *c) {
    rc_spec *s = &c->spec;
    int bad;
    if ((bad = cli_check_op(c)) != 0) return bad;
    if (c->cmd & (CMD_SIMS | CMD_BENCH)) {
        if (!c->coll_all && (bad = cli_check_algo(c, s->coll)) != 0) return bad;
        if (c->cmd != CMD_BENCH || !c->mpi) {
            if (s->root >= s->p) return cli_bad("--root %d must be below -p %d", s->root, s->p);
            if (s->opts.groups > s->p) return cli_bad("--groups %d must be at most -p %d", s->opts.groups, s->p);
        }
    }
    if (c->cmd & (CMD_SIMULATE | CMD_SCHEDULE) && s->p > REDCOLL_MAX_RANKS)
        return cli_bad("-p %d: the collectives serve up to REDCOLL_MAX_RANKS = %d ranks (select "
                       "still says what the selector picks)", s->p, REDCOLL_MAX_RANKS);
    if (c->cmd & CMD_SIMS) {
        if (s->sim.fail_call && s->sim.fail_rank >= s->p)
            return cli_bad("--fail-rank %d must be below -p %d", s->sim.fail_rank, s->p);
        if (c->given[F_FAIL_RANK] && !s->sim.fail_call) return cli_bad("--fail-rank needs --fail-call%s", "");
        if ((bad = cli_check_bytes(c)) != 0) return bad;
    }
    if ((c->given[F_INTER_ALPHA] || c->given[F_INTER_BETA]) && !c->given[F_NODE_SIZE])
        return cli_bad("--inter-alpha and --inter-beta price links between nodes: give --node-size N "
                       "(ranks per node)%s", "");
    if (c->cmd & (CMD_BENCH | CMD_MAP)) {
        if (c->min_bytes > c->max_bytes) return cli_bad("-b %zu is above -e %zu", c->min_bytes, c->max_bytes);
        if (c->algo_all && s->opts.algo) return cli_bad("--algo all and --algo %s", redcoll_algo_name(s->opts.algo));
    }
    if (c->cmd == CMD_BENCH && c->json && c->csv) return cli_bad("--json or --csv, not both%s", "");
    if (c->coll_all && s->opts.algo)
        return cli_bad("--coll all runs --algo auto or all, not %s", redcoll_algo_name(s->opts.algo));
    if (c->coll_all) { /* every collective's REDCOLL_<COLL>_ALGORITHM must make sense */
        int k;
        for (k = 0; k < REDCOLL_COLL_COUNT; ++k) {
            redcoll_algo forced;
            const char *var;
            if (cli_env_algo((redcoll_coll)k, c->commutative || !rc_reduces((redcoll_coll)k), &forced, &var) < 0)
                return 2;
        }
    }
    if (c->cmd == CMD_MAP) {
        if (c->p_min > c->p_max) return cli_bad("--p-min %d is above --p-max %d", c->p_min, c->p_max);
        if (c->from_csv && c->given[F_FROM]) return cli_bad("--from and --from-csv, not both%s", "");
        if (c->given[F_P_STEP] && c->given[F_P_OCTAVE]) return cli_bad("--p-step or --p-per-octave, not both%s", "");
        if (!c->from_csv && c->min_bytes == 0) return cli_bad("-b 0: the size axis is logarithmic (-b 1 or more)%s", "");
        if (!c->from_csv && strcmp(c->from, "simulator") == 0 && c->p_max > REDCOLL_MAX_RANKS)
            return cli_bad("--p-max %d: the collectives serve up to REDCOLL_MAX_RANKS = %d ranks "
                           "(--from model and --from selector draw any p)", c->p_max, REDCOLL_MAX_RANKS);
    }
    if (c->cmd == CMD_TUNE && !c->mpi && s->p < 2) return cli_bad("tune measures between two ranks: -p 2 or more%s", "");
    if (c->cmd == CMD_TUNE && c->pshm) return cli_bad("tune measures threads or mpi, not pshm%s", "");
    if (c->cmd & (CMD_BENCH | CMD_TUNE) && c->mpi) {
#ifndef REDCOLL_CLI_MPI
        return cli_bad("this redcoll has no MPI: use redcoll-mpi (build/redcoll_mpi, built when mpicc.mpich "
                       "exists) under mpiexec.mpich -n P%s", "");
#endif
    }
    /* REDCOLL_<COLL>_ALGORITHM forces what AUTO picks (the tools only; the header reads no environment) */
    if (s->opts.algo == REDCOLL_ALGO_AUTO && !c->coll_all && (c->cmd & (CMD_SIMS | CMD_BENCH))) {
        redcoll_algo forced;
        const char *var;
        int e = cli_env_algo(s->coll, c->commutative || !rc_reduces(s->coll), &forced, &var);
        if (e < 0) return 2;
        if (e > 0 && c->cmd != CMD_BENCH) { s->opts.algo = forced; c->env_var = var; } /* bench: auto rows */
    }
    return 0;
}

/* ---- help, version, lists ---------------------------------------------------------- */

/* Prints `text` wrapped at 80 columns, continuation lines indented by `indent`. */
static void cli_wrap(FILE *f, const char *text, int col, int indent) {
    const char *w = text;
    while (*w) {
        int len = 0;
        while (w[len] && w[len] != ' ') ++len;
        if (col + 1 + len > 80 && col > indent) { fprintf(f, "\n%*s", indent, ""); col = indent; }
        else if (col > indent) { fputc(' ', f); ++col; }
        fprintf(f, "%.*s", len, w);
        col += len;
        w += len;
        while (*w == ' ') ++w;
    }
    fputc('\n', f);
}

static void cli_usage(FILE *f, int cmd) {
    size_t i;
    if (cmd == 0 || cmd == CMD_TOP) {
        fputs("usage: redcoll COMMAND [flags]      (redcoll COMMAND --help: the command's flags)\n"
              "       redcoll --algo list [--coll C]   the algorithms of every collective\n"
              "       redcoll --version\n\ncommands:\n", f);
        for (i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; ++i)
            fprintf(f, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
        fputs("\nenvironment:\n"
              "  REDCOLL_<COLL>_ALGORITHM=name   what AUTO runs for that collective in simulate,\n"
              "                                  select, schedule and bench (e.g.\n"
              "                                  REDCOLL_ALLREDUCE_ALGORITHM=ring); --algo wins\n"
              "\nexit status: 0 ok, 1 a collective failed or gave a wrong result, 2 bad usage or\n"
              "a refused run\n", f);
        return;
    }
    for (i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; ++i)
        if (cli_commands[i].bit == cmd)
            fprintf(f, "usage: redcoll %s [flags]%s\n\n%s\nflags:\n", cli_commands[i].name,
                    cmd == CMD_PROFILE ? " FILE" : "", cli_commands[i].about);
    for (i = 0; i < CLI_NFLAGS; ++i) {
        char head[40];
        int n;
        if (!(cli_flags[i].cmds & cmd)) continue;
        n = snprintf(head, sizeof head, "  %s%s%s", cli_flags[i].name, cli_flags[i].arg ? " " : "",
                     cli_flags[i].arg ? cli_flags[i].arg : "");
        fputs(head, f);
        if (n < 20) fprintf(f, "%*s", 20 - n, "");
        cli_wrap(f, cli_flags[i].help, n < 20 ? 20 : n, 20);
    }
    fputs("\nexit status: 0 ok, 1 a collective failed or gave a wrong result, 2 bad usage or\n"
          "a refused run\n", f);
}

static void cli_version(void) {
    printf("redcoll %s (transports: simulator, threads, pshm%s)\n", REDCOLL_VERSION_STRING,
#ifdef REDCOLL_CLI_MPI
           ", mpi"
#else
           ""
#endif
    );
}

/* One line per collective: its name, then its algorithms; "(commutative)"
   marks the ones that need a commutative op. Only --coll's line when given. */
static void cli_list(const cli *c) {
    int k, a;
    for (k = 0; k < REDCOLL_COLL_COUNT; ++k) {
        int any = 0;
        if (c->given[F_COLL] && !c->coll_all && k != (int)c->spec.coll) continue;
        printf("%-22s", redcoll_coll_name((redcoll_coll)k));
        for (a = 1; a < REDCOLL_ALGO_COUNT; ++a)
            if (redcoll_algo_supported((redcoll_coll)k, (redcoll_algo)a)) {
                printf(" %s%s", redcoll_algo_name((redcoll_algo)a),
                       redcoll_algo_keeps_order((redcoll_coll)k, (redcoll_algo)a) ? "" : "(commutative)");
                any = 1;
            }
        printf("%s\n", any ? "" : " (none yet)");
    }
}

/* The model in one line, for headers. */
/* The model has two levels: nodes, and links between them that differ from
   those inside (zero inter fields are the intra values). */
static int cli_two_level(const cli *c) {
    const redcoll_cost_model *m = &c->spec.sim.model;
    return c->spec.sim.node_size > 0 && ((m->inter_alpha > 0 && m->inter_alpha != m->alpha) ||
                                         (m->inter_beta > 0 && m->inter_beta != m->beta));
}

static void cli_model_line(FILE *f, const cli *c) {
    const redcoll_cost_model *m = &c->spec.sim.model;
    fprintf(f, "alpha %.4g s, beta %.4g s/B, gamma %.4g s/B, f_alpha %.4g, f_beta %.4g", m->alpha,
            m->beta, m->gamma, m->f_alpha, m->f_beta);
    if (cli_two_level(c))
        fprintf(f, "; nodes of %d ranks, between them inter_alpha %.4g s, inter_beta %.4g s/B (shared link)",
                c->spec.sim.node_size, m->inter_alpha > 0 ? m->inter_alpha : m->alpha,
                m->inter_beta > 0 ? m->inter_beta : m->beta);
    fprintf(f, "%s%s%s", c->profile ? " (from " : "", c->profile ? c->profile : "", c->profile ? ")" : "");
}

#include "work.c"
#include "cmd_simulate.c"
#include "cmd_schedule.c"
#include "cmd_bench.c"
#include "cmd_tune.c"
#include "cmd_map.c"

static int cli_profile_cmd(cli *c) {
    char err[256], *text, *out;
    redcoll_cost_model m;
    int n;
    if (!c->positional) return cli_bad("profile wants a FILE%s", "");
    text = rc_read_file(c->positional);
    if (!text) return cli_bad("%s: %s", c->positional, strerror(errno));
    if (redcoll_cost_model_parse(text, &m, err, sizeof err) != REDCOLL_OK) {
        free(text);
        return cli_bad("%s: %s", c->positional, err);
    }
    free(text);
    n = redcoll_cost_model_format(&m, NULL, 0);
    out = (char *)malloc((size_t)n + 1);
    if (!out) return 1;
    redcoll_cost_model_format(&m, out, (size_t)n + 1);
    fputs(out, stdout);
    free(out);
    return 0;
}

int main(int argc, char **argv) {
    cli c;
    int bad, cmd = CMD_TOP, first = 1;
    size_t i;
    const char *name = "redcoll";
    (void)rc_run; /* the harness's one-call run; the tool counts calls through cli_sim */
    if (argc < 2) { cli_usage(stderr, 0); return 2; }
    if (strcmp(argv[1], "help") == 0) { cli_usage(stdout, 0); return 0; }
    for (i = 0; i < sizeof cli_commands / sizeof cli_commands[0]; ++i)
        if (strcmp(argv[1], cli_commands[i].name) == 0) { cmd = cli_commands[i].bit; name = argv[1]; first = 2; }
    if (cmd == CMD_TOP && argv[1][0] != '-') {
        fprintf(stderr, "redcoll: unknown command '%s'\n(see redcoll --help)\n", argv[1]);
        return 2;
    }
    bad = cli_parse(&c, cmd, name, argc, argv, first);
    if (bad) return bad;
    if (c.help) { cli_usage(stdout, cmd); return 0; }
    if (c.version) { cli_version(); return 0; }
    if ((bad = cli_check(&c)) != 0) return bad;
    if (c.list) { cli_list(&c); return 0; }
    switch (cmd) {
    case CMD_SIMULATE: return cmd_simulate(&c);
    case CMD_SELECT: return cmd_select(&c);
    case CMD_SCHEDULE: return cmd_schedule(&c);
    case CMD_BENCH: return cmd_bench(&c, &argc, &argv);
    case CMD_TUNE: return cmd_tune(&c, &argc, &argv);
    case CMD_MAP: return cmd_map(&c);
    case CMD_PROFILE: return cli_profile_cmd(&c);
    default: cli_usage(stderr, 0); return 2;
    }
}
