/* sim_figures.c - writes or checks the simulator's figures on the grid of
   sim_figures.h.

   Usage: sim_figures                  the hashes per (collective, algorithm,
                                       part): test/sim_figures.txt
                                       (`make sim-figures`)
          sim_figures --check FILE     compares every part with FILE; exit
                                       status 1 on a difference
          sim_figures --dump [FILTER]  every case and its figures as text, one
                                       line each, to diff two builds and find
                                       the case that moved
          sim_figures --full [FILTER]  as --dump, with every rank of faulty runs
   FILTER is the start of "collective/algorithm"; --part NAME runs only that
   part of the grid (p1-8, ..., deadlock). */
#define _POSIX_C_SOURCE 200809L
#define REDCOLL_IMPLEMENTATION
#include "redcoll.h"
#include "transports/redcoll_mock.h"
#include "redcoll/harness.h"
#include "sim_figures.h"

int main(int argc, char **argv) {
    redcoll_coll colls[512];
    redcoll_algo algos[512];
    sf_hashes h;
    const char *filter = NULL, *check = NULL;
    char *recorded = NULL;
    int n = sf_pairs(colls, algos, 512), i, k, differ = 0;
    memset(&h, 0, sizeof h);
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--dump") == 0) h.dump = 1;
        else if (strcmp(argv[i], "--full") == 0) h.dump = h.full = 1;
        else if (strcmp(argv[i], "--check") == 0 && i + 1 < argc) check = argv[++i];
        else if (strcmp(argv[i], "--part") == 0 && i + 1 < argc) {
            for (k = 0; k < SF_PARTS && strcmp(argv[i + 1], sf_part_names[k]) != 0; ++k) {}
            if (k == SF_PARTS) { fprintf(stderr, "sim_figures: no part '%s'\n", argv[i + 1]); return 2; }
            h.parts = 1u << k;
            ++i;
        }
        else if (argv[i][0] == '-') { fprintf(stderr, "sim_figures: unknown flag '%s'\n", argv[i]); return 2; }
        else filter = argv[i];
    }
    if (check && !(recorded = rc_read_file(check))) { fprintf(stderr, "sim_figures: cannot read %s\n", check); return 2; }
    if (!h.dump && !check)
        printf("# test/sim_figures.txt - the simulator's figures on the grid of test/sim_figures.h:\n"
               "# collective algorithm part cases FNV-1a-hash. Written by `make sim-figures`.\n");
    for (i = 0; i < n; ++i) {
        char name[128];
        snprintf(name, sizeof name, "%s/%s", redcoll_coll_name(colls[i]), redcoll_algo_name(algos[i]));
        if (filter && strncmp(name, filter, strlen(filter)) != 0) continue;
        sf_hash_pair(&h, colls[i], algos[i]);
        for (k = 0; k < SF_PARTS && !h.dump; ++k) {
            long cases;
            uint64_t want;
            if (!h.cases[k]) continue;
            if (!check) {
                printf("%s %s %s %ld %016llx\n", redcoll_coll_name(colls[i]), redcoll_algo_name(algos[i]),
                       sf_part_names[k], h.cases[k], (unsigned long long)h.hash[k]);
            } else if (!sf_recorded(recorded, colls[i], algos[i], k, &cases, &want)) {
                printf("%s %s: not recorded\n", name, sf_part_names[k]);
            } else if (cases != h.cases[k] || want != h.hash[k]) {
                printf("%s %s: DIFFERENT figures\n", name, sf_part_names[k]);
                differ = 1;
            }
        }
        fflush(stdout);
    }
    if (check) printf("%s\n", differ ? "figures differ from the record" : "figures as recorded");
    free(h.text.s);
    free(recorded);
    return differ;
}
