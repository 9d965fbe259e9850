# redcoll - make demo | test | asan | tsan | examples | shim | install PREFIX=... | uninstall
CC       ?= cc
CXX      ?= c++
PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
PKGDIR   ?= $(LIBDIR)/pkgconfig
BUILD    ?= build
WARN     := -Wall -Wextra -pedantic -Werror
CFLAGS_  := -std=c11 $(WARN) -Wmissing-prototypes -Wstrict-prototypes -O2 -g -I. $(CFLAGS)
CXXFLAGS_:= -std=c++11 $(WARN) -O2 -I. $(CXXFLAGS)
LIBS     := -lpthread -lm
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN     := -fsanitize=thread -fno-omit-frame-pointer
# MPICH is the reference MPI; `mpicc` may be Open MPI's, so prefer the .mpich names.
MPICC    ?= mpicc.mpich
MPIEXEC  ?= mpiexec.mpich
MPIFORT  ?= mpifort.mpich
# The pkg-config name of that MPI, which redcoll-mpi.pc requires (none if it has no .pc).
MPI_PC   ?= $(shell pkg-config --exists mpich 2>/dev/null && echo mpich)

HEADERS  := redcoll.h $(wildcard transports/*.h) redcoll/harness.h
TEST_SRC := $(wildcard test/*.c) $(wildcard test/*.h)
EXAMPLES := $(BUILD)/allreduce_threads $(BUILD)/allreduce_processes $(BUILD)/custom_transport $(BUILD)/demo $(BUILD)/tour
SHIM     := $(BUILD)/libredcoll_pmpi.so
VERSION  := $(shell sed -n 's/^\#define REDCOLL_VERSION_STRING "\(.*\)"/\1/p' redcoll.h)
# The tool again with MPI (`bench --transport mpi`, `tune --transport mpi`), where MPICC exists.
MPI_TOOL := $(if $(shell command -v $(MPICC) 2>/dev/null),$(BUILD)/redcoll_mpi)

.PHONY: all demo test test-sim test-compile asan tsan examples shim install uninstall \
        test-install clean docs bench-kernels bench-datapath fuzz sim-figures bench-sim \
        bench-exact maps bench-select bench-overlap bench-percall

all: $(BUILD)/test_runner $(BUILD)/redcoll $(MPI_TOOL)

$(BUILD):
	@mkdir -p $(BUILD)

$(BUILD)/test_runner: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -Itest test/main.c -o $@ $(LIBS)

# The same runner on the ucontext coroutine switch (the fallback of the x86-64
# one): make test runs its non-blocking suite (nb/) with it.
$(BUILD)/test_runner_ucontext: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -DREDCOLL_CORO_UCONTEXT -Itest test/main.c -o $@ $(LIBS)

# The same runner with the pair path compiled out (REDCOLL_NO_EXACT_PAIR):
# make test runs its exact-sum suites (exact/), so p = 2 runs the general
# method there (the local fold, adding inputs as they arrive) as p >= 3 does.
$(BUILD)/test_runner_general: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -DREDCOLL_NO_EXACT_PAIR -Itest test/main.c -o $@ $(LIBS)

# The fuzz target (test/fuzz.c): random calls of the public API on the
# simulator, checked against the sequential reference and "nothing touched
# on an argument error". make test and make asan run it FUZZ_SECONDS as a
# smoke run (20 s: about 500 random cases at load 10, more on an idle
# machine; the target builds, runs and a fresh sample of cases holds);
# hunting is make fuzz, FUZZ_LONG seconds (default 900).
FUZZ_SECONDS ?= 20
$(BUILD)/fuzz: test/fuzz.c test/fresh_memory.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) test/fuzz.c -o $@ $(LIBS)

fuzz: $(BUILD)/fuzz
	$(BUILD)/fuzz -t $(or $(FUZZ_LONG),900)

$(BUILD)/redcoll: $(wildcard redcoll/*.c) $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) redcoll/main.c -o $@ $(LIBS)

$(BUILD)/redcoll_mpi: $(wildcard redcoll/*.c) $(HEADERS) | $(BUILD)
	$(MPICC) $(CFLAGS_) -DREDCOLL_CLI_MPI redcoll/main.c -o $@ $(LIBS)

# docs/hierarchical.md: the G sweep of the hierarchical transformation (about 30 s).
$(BUILD)/hierarchical_sweep: bench/hierarchical_sweep.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/hierarchical_sweep.c -o $@ $(LIBS)

docs/hierarchical.md: $(BUILD)/hierarchical_sweep
	@mkdir -p docs
	$(BUILD)/hierarchical_sweep > $@

# docs/nodes.md: AUTO on nodes under the two-level model, and Hasanov &
# Lastovetsky's Fig. 9 (a few minutes; take the heavy lock on a shared machine).
$(BUILD)/nodes_sweep: bench/nodes_sweep.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/nodes_sweep.c -o $@ $(LIBS)

docs/nodes.md: $(BUILD)/nodes_sweep
	@mkdir -p docs
	$(BUILD)/nodes_sweep > $@

# docs/nodes-map.svg: where the node-aware allreduce wins, nodes of 8, the
# two-level model of docs/nodes.md (every candidate on the simulator).
docs/nodes-map.svg: $(BUILD)/redcoll
	@mkdir -p docs
	nice $(BUILD)/redcoll map --from simulator --node-size 8 --alpha 5e-7 --beta 5e-11 --inter-alpha 2e-6 \
	    --inter-beta 1e-10 --p-min 8 --p-max 256 --p-step 8 -b 8 -e 64M -f 4 --force --svg $@

# docs/selection-map.svg: the allreduce algorithm with the least modeled time (the
# cost functions AUTO picks by) for p = 2..1024 and 8 B .. 64 MiB, the tool's
# default grid, in well under a second; `redcoll map --from simulator` runs every
# candidate on the simulator instead, for a grid within its work limit.
# docs/selector-map.svg: what the paper rules pick on the same grid.
docs/selection-map.svg: $(BUILD)/redcoll
	@mkdir -p docs
	$(BUILD)/redcoll map --svg $@

docs/selector-map.svg: $(BUILD)/redcoll
	@mkdir -p docs
	$(BUILD)/redcoll map --from selector --selector papers --svg $@

maps: docs/selection-map.svg docs/selector-map.svg docs/nodes-map.svg

docs: docs/hierarchical.md docs/nodes.md

# test/sim_figures.txt: the simulator's figures on a grid of every schedule, which
# the test `sim/figures as recorded on the grid` compares with. Regenerate (and
# commit) when redcoll.h changes a schedule's messages, rounds, scratch or times on
# purpose; `$(BUILD)/sim_figures --check test/sim_figures.txt` checks the whole grid.
$(BUILD)/sim_figures: test/sim_figures.c test/sim_figures.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -Itest test/sim_figures.c -o $@ $(LIBS)

sim-figures: $(BUILD)/sim_figures
	$(BUILD)/sim_figures > test/sim_figures.txt

# Messages per second of the simulator (README, "The simulator").
$(BUILD)/sim_events: bench/sim_events.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/sim_events.c -o $@ $(LIBS)

bench-sim: $(BUILD)/sim_events
	$(BUILD)/sim_events

# Reproducible sums: REDCOLL_SUM_EXACT against REDCOLL_SUM, threads and model (README).
$(BUILD)/exact_sum: bench/exact_sum.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/exact_sum.c -o $@ $(LIBS)

# exact_sum_general: the general method at p = 2 too (REDCOLL_NO_EXACT_PAIR)
$(BUILD)/exact_sum_general: bench/exact_sum.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -DREDCOLL_NO_EXACT_PAIR bench/exact_sum.c -o $@ $(LIBS)

bench-exact: $(BUILD)/exact_sum $(BUILD)/exact_sum_general
	$(BUILD)/exact_sum $(BENCH_FLAGS)
	$(BUILD)/exact_sum_general $(BENCH_FLAGS)

# What one AUTO decision costs, cache hit and miss, per collective at p = 1024
# (README, "Choosing the algorithm").
$(BUILD)/bench_select: bench/select.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/select.c -o $@ $(LIBS)

bench-select: $(BUILD)/bench_select
	nice $(BUILD)/bench_select $(BENCH_FLAGS)

# The library's own cost per one-shot call: 8 B collectives over a transport that only copies.
$(BUILD)/bench_percall: bench/percall.c bench/bench.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/percall.c -o $@ $(LIBS)

bench-percall: $(BUILD)/bench_percall
	$(BUILD)/bench_percall $(BENCH_FLAGS)

# Reduction kernels (-O2, as the library ships) against restrict loops built
# -O3 -march=native by the same compiler; README "Reduction kernels".
# With clang: make bench-kernels CC=clang BUILD=build-clang
$(BUILD)/bench_kernels: bench/kernels.c bench/kernels_ref.c bench/kernels_ref.h $(HEADERS) | $(BUILD)
	$(CC) -std=c11 $(WARN) -O3 -march=native -I. -c bench/kernels_ref.c -o $(BUILD)/kernels_ref.o
	$(CC) $(CFLAGS_) bench/kernels.c $(BUILD)/kernels_ref.o -o $@ $(LIBS)

bench-kernels: $(BUILD)/bench_kernels
	nice $(BUILD)/bench_kernels --tiny $(BENCH_FLAGS)
	nice $(BUILD)/bench_kernels $(BENCH_FLAGS)

# The data-path benchmark (issue 10): threads transport vs the direct shared-memory
# reduction and the kernel limit, then MPICH native at -n 2 right after.
# BENCH_FLAGS="--sizes 8,1K --batches 11" and the like are passed on.
$(BUILD)/datapath: bench/datapath.c bench/bench.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/datapath.c -o $@ $(LIBS)

$(BUILD)/datapath_mpi: bench/datapath_mpi.c bench/bench.h $(HEADERS) | $(BUILD)
	$(MPICC) $(CFLAGS_) bench/datapath_mpi.c -o $@ $(LIBS)

# Processes sharing a segment against threads, allreduce 8 B .. 16 MiB (docs/benchmarks.md).
$(BUILD)/bench_pshm: bench/pshm.c bench/bench.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) bench/pshm.c -o $@ $(LIBS)

bench-pshm: $(BUILD)/bench_pshm
	$(BUILD)/bench_pshm $(BENCH_FLAGS)

bench-datapath: $(BUILD)/datapath
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory $(BUILD)/datapath_mpi && \
	    $(BUILD)/datapath $(BENCH_FLAGS) --mpi "$(MPIEXEC) -n 2 $(BUILD)/datapath_mpi $(BENCH_FLAGS)"; \
	else $(BUILD)/datapath $(BENCH_FLAGS); fi

# The header as C11, as C++ and with REDCOLL_STATIC, warnings as errors.
test-compile: | $(BUILD)
	$(CC) $(CFLAGS_) -c test/compile/c11.c -o $(BUILD)/compile_c11.o
	$(CC) $(CFLAGS_) -c test/compile/static.c -o $(BUILD)/compile_static.o
	$(CXX) $(CXXFLAGS_) -c test/compile/cpp.cpp -o $(BUILD)/compile_cpp.o
	$(CC) $(CFLAGS_) -c test/compile/config.c -o $(BUILD)/compile_config.o
	@for half in 1 2; do \
	    if $(CC) $(CFLAGS_) -DREDCOLL_TEST_HALF_ALLOC=$$half -c test/compile/config.c -o $(BUILD)/compile_half.o 2>/dev/null; then \
	        echo "compile tests: REDCOLL_MALLOC/FREE half defined ($$half) compiled, want an #error"; exit 1; fi; done
	@echo "compile tests: C11, C++, REDCOLL_STATIC and replaced memory routines build cleanly; a half-defined allocator does not"

test-sim: $(BUILD)/test_runner
	$(BUILD)/test_runner

# Every suite, ending with one combined "N passed, N failed" line.
# The simulator suite (one core) runs in the background beside the tool's,
# the fuzz smoke run and the examples; then the MPI suites (the transport;
# the drop-in, with and without LD_PRELOAD) run alone under $(MPIEXEC)
# -n 1..5, since their ranks busy-poll; without $(MPICC) they say so and are
# skipped. Each suite's wall and CPU time is printed after it (test/run_all.sh).
SUITES := "simulator&=$(BUILD)/test_runner" "cli=test/cli.sh $(BUILD)/redcoll" \
          "ucontext=$(BUILD)/test_runner_ucontext nb/" \
          "exact-general=$(BUILD)/test_runner_general exact/" \
          "cli-bench=test/cli_bench.sh $(BUILD)/redcoll $(or $(MPI_TOOL),none) $(MPIEXEC)" \
          "fuzz=$(BUILD)/fuzz -t $(FUZZ_SECONDS)" \
          "examples=test/examples.sh $(BUILD) $(MPIEXEC)" \
          "docs=test/docs.sh $(BUILD) $(CC) $(CXX) $(MPICC)" wait \
          "mpi=test/mpi/run.sh $(BUILD) $(MPICC) $(MPIEXEC)" \
          "pmpi=test/pmpi/run.sh $(BUILD) $(MPICC) $(MPIEXEC)" \
          "fortran=test/fortran/run.sh $(BUILD) $(MPIFORT) $(MPIEXEC)" \
          "repro=test/repro/run.sh $(BUILD) $(MPICC) $(MPIFORT) $(MPIEXEC)"

# What make test runs, longest build first. The recipes build it two at a time
# even under a plain `make test` (CI; a -j given on the command line is kept).
TEST_BUILD  = $(BUILD)/test_runner $(BUILD)/test_runner_ucontext $(BUILD)/test_runner_general $(MPI_TESTS) $(FORTRAN_TESTS) \
              $(BUILD)/redcoll $(MPI_TOOL) $(BUILD)/fuzz test-compile examples shim $(BUILD)/mpi_yield.so
J2 = $(if $(filter -j%,$(MAKEFLAGS)),,-j2)

test:
	@$(MAKE) --no-print-directory $(J2) $(TEST_BUILD)
	@test/run_all.sh $(SUITES)

# The MPI suites' programs (test/mpi/run.sh and test/pmpi/run.sh build them
# the same way when run alone, and skip the build when these are up to date).
MPI_TESTS := $(if $(MPI_TOOL),$(BUILD)/test_mpi $(BUILD)/test_mpi_looks $(BUILD)/pmpi_errors $(BUILD)/pmpi_colls $(BUILD)/pmpi_threads \
                               $(BUILD)/pmpi_nonblock $(BUILD)/pmpi_disagree $(BUILD)/pmpi_progress $(BUILD)/pmpi_lifetimes \
                               $(BUILD)/pmpi_nbmany $(BUILD)/pmpi_nbthreads $(BUILD)/pmpi_persist)
$(BUILD)/test_mpi: test/mpi/test_mpi.c test/disagree_cases.h redcoll.h transports/redcoll_mpi.h | $(BUILD)
	$(MPICC) $(CFLAGS_) $< -o $@
# looks at every poll, one look enough (test/mpi/run.sh runs it --looks)
$(BUILD)/test_mpi_looks: test/mpi/test_mpi.c test/disagree_cases.h redcoll.h transports/redcoll_mpi.h | $(BUILD)
	$(MPICC) $(CFLAGS_) -DREDCOLL__MPI_LOOK_AFTER=1 -DREDCOLL__MPI_LOOK_EVERY=1 -DREDCOLL__MPI_SUSPECT_LOOKS=1 $< -o $@

$(BUILD)/pmpi_errors $(BUILD)/pmpi_colls $(BUILD)/pmpi_threads $(BUILD)/pmpi_nonblock $(BUILD)/pmpi_disagree \
$(BUILD)/pmpi_progress $(BUILD)/pmpi_lifetimes $(BUILD)/pmpi_nbmany $(BUILD)/pmpi_nbthreads \
$(BUILD)/pmpi_persist: $(BUILD)/pmpi_%: test/pmpi/%.c \
        shim/redcoll_pmpi.c redcoll.h transports/redcoll_mpi.h transports/redcoll_pshm.h \
        transports/redcoll_handoff.h | $(BUILD)
	$(MPICC) $(CFLAGS_) $< -o $@ -lpthread

# The drop-in's Fortran programs (test/fortran) and the reproducible mode's
# (test/repro, C and Fortran), where an MPI Fortran compiler (and the one it
# wraps) exists; the suites build them the same way when run alone. The mpi
# module declares no interface for choice buffers, so its programs build
# with -w, mpi_f08's with warnings as errors. Modules: a directory each.
FORTRAN  := $(if $(MPI_TOOL),$(shell command -v $(firstword $(shell $(MPIFORT) -show 2>/dev/null) none) 2>/dev/null))
FORTRAN_TESTS := $(if $(MPI_TOOL),$(BUILD)/repro_wide_c $(BUILD)/repro_cg_c) \
                 $(if $(FORTRAN),$(BUILD)/fortran_colls $(BUILD)/fortran_f08 \
                 $(BUILD)/repro_wide_f $(BUILD)/repro_cg_f)
FFLAGS_   = -O2 -g -fcheck=bounds -J $(BUILD)/fmod/$(@F)
$(BUILD)/fortran_colls: test/fortran/colls.f90 test/fortran/checks.f90 | $(BUILD)
	@mkdir -p $(BUILD)/fmod/$(@F)
	$(MPIFORT) $(FFLAGS_) -w test/fortran/checks.f90 $< -o $@
$(BUILD)/fortran_f08: test/fortran/f08.f90 test/fortran/checks.f90 | $(BUILD)
	@mkdir -p $(BUILD)/fmod/$(@F)
	$(MPIFORT) $(FFLAGS_) -Wall -Wextra -Wno-compare-reals -Werror test/fortran/checks.f90 $< -o $@
$(BUILD)/repro_%_f: test/repro/%.f90 test/fortran/checks.f90 | $(BUILD)
	@mkdir -p $(BUILD)/fmod/$(@F)
	$(MPIFORT) $(FFLAGS_) -w test/fortran/checks.f90 $< -o $@
$(BUILD)/repro_%_c: test/repro/%.c test/repro/repro.h | $(BUILD)
	$(MPICC) -std=c11 $(WARN) -O2 -g $< -o $@ -lm

# The MPI suites' ranks give up the core when a poll finds nothing (test/mpi/yield.c):
# more ranks than cores otherwise pay a timer tick per message.
$(BUILD)/mpi_yield.so: test/mpi/yield.c | $(BUILD)
	$(CC) -std=c11 $(WARN) -O2 -fPIC -shared $< -o $@ -ldl

# The main job on real threads: `redcoll bench` times every allreduce algorithm and
# auto on p = online CPUs threads, checks every result on every rank, and reports
# auto's time over the fastest algorithm's per size (DEMO_FLAGS="-p 8" for more).
demo: $(BUILD)/redcoll
	@echo "make demo: redcoll times each of its allreduce algorithms on threads of this process"
	@echo "(one per online CPU), checks every result, and compares what auto picks with the fastest."
	$(BUILD)/redcoll bench --coll allreduce --algo all -b 64 -e 4M -f 16 $(DEMO_FLAGS)

$(BUILD)/demo: examples/demo.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) $< -o $@ $(LIBS)

$(BUILD)/allreduce_threads $(BUILD)/allreduce_processes $(BUILD)/custom_transport $(BUILD)/tour: $(BUILD)/%: examples/%.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) $< -o $@ $(LIBS)

# Every example; allreduce_mpi only where an MPI compiler is installed.
examples: $(EXAMPLES)
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	    echo "$(MPICC) ... examples/allreduce_mpi.c -o $(BUILD)/allreduce_mpi"; \
	    $(MPICC) $(CFLAGS_) examples/allreduce_mpi.c -o $(BUILD)/allreduce_mpi; \
	else echo "examples: $(MPICC) not found, allreduce_mpi skipped (apt-get install -y mpich libmpich-dev)"; fi

# Both programs built at once; then the suite as two runners (-s 0/2, -s 1/2:
# alternate tests, one core each) and the fuzz smoke run beside them, through
# test/run_all.sh: each one's time and one total.
$(BUILD)/test_runner_asan: $(TEST_SRC) $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -O1 $(SAN) -Itest test/main.c -o $@ $(LIBS)

$(BUILD)/fuzz_asan: test/fuzz.c test/fresh_memory.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) -O1 $(SAN) test/fuzz.c -o $@ $(LIBS)

asan:
	@$(MAKE) --no-print-directory $(J2) $(BUILD)/test_runner_asan $(BUILD)/fuzz_asan
	@ASAN_OPTIONS=detect_leaks=1 test/run_all.sh "simulator-asan-0&=$(BUILD)/test_runner_asan -s 0/2" \
	    "simulator-asan-1&=$(BUILD)/test_runner_asan -s 1/2" "fuzz-asan=$(BUILD)/fuzz_asan -t $(FUZZ_SECONDS)"

# The thread sanitizer over the shared-memory transport's suite (every
# schedule on real threads, abort, timeout, faults).
tsan: | $(BUILD)
	$(CC) $(CFLAGS_) -O1 $(TSAN) -Itest test/main.c -o $(BUILD)/test_runner_tsan $(LIBS)
	TSAN_OPTIONS="halt_on_error=1 exitcode=66" $(BUILD)/test_runner_tsan shm/

# The MPI drop-in (LD_PRELOAD=build/libredcoll_pmpi.so mpiexec ...), where an MPI compiler exists.
shim:
	@if command -v $(MPICC) >/dev/null 2>&1; then $(MAKE) --no-print-directory $(SHIM); \
	else echo "shim: $(MPICC) not found, libredcoll_pmpi.so skipped (apt-get install -y mpich libmpich-dev)"; fi

$(SHIM): shim/redcoll_pmpi.c redcoll.h transports/redcoll_mpi.h transports/redcoll_pshm.h \
        transports/redcoll_handoff.h | $(BUILD)
	$(MPICC) $(CFLAGS_) -fPIC -shared shim/redcoll_pmpi.c -o $@ -lpthread

# Overlap of a non-blocking allreduce with computation (osu_iallreduce's
# measure) and its cost waited on at once, threads and MPI at p = 2
# (docs/benchmarks.md). BENCH_FLAGS="--sizes 1M --iters 51" and the like are passed on.
$(BUILD)/overlap: bench/overlap.c bench/bench.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS_) $< -o $@ $(LIBS)

$(BUILD)/overlap_mpi: bench/overlap.c bench/bench.h $(HEADERS) | $(BUILD)
	$(MPICC) $(CFLAGS_) -DOVERLAP_MPI $< -o $@ $(LIBS)

bench-overlap: $(BUILD)/overlap
	$(BUILD)/overlap -p 2 $(BENCH_FLAGS)
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory $(BUILD)/overlap_mpi && \
	    $(MPIEXEC) -n 2 $(BUILD)/overlap_mpi $(BENCH_FLAGS); \
	fi

# The shim's cost over calling redcoll directly at 8 B (a benchmark, not a test):
# mpiexec.mpich -n 2 -genv LD_PRELOAD $PWD/build/libredcoll_pmpi.so build/pmpi_overhead
$(BUILD)/pmpi_overhead: bench/pmpi_overhead.c redcoll.h transports/redcoll_mpi.h | $(BUILD)
	$(MPICC) $(CFLAGS_) $< -o $@

# The drop-in against the MPI library under it, allreduce 8 B .. 16 MiB (docs/benchmarks.md):
# mpiexec.mpich -n 2 -genv LD_PRELOAD $PWD/build/libredcoll_pmpi.so build/pmpi_allreduce
$(BUILD)/pmpi_allreduce: bench/pmpi_allreduce.c bench/bench.h | $(BUILD)
	$(MPICC) $(CFLAGS_) $< -o $@

# Allreduce inside one node four ways, interleaved: redcoll over shared memory between
# processes, between threads, over MPI point-to-point, and MPICH's own (docs/benchmarks.md):
# mpiexec.mpich -n 2 build/node_allreduce
$(BUILD)/node_allreduce: bench/node_allreduce.c bench/bench.h $(HEADERS) | $(BUILD)
	$(MPICC) $(CFLAGS_) $< -o $@ $(LIBS)

# PREFIX/include/redcoll/{redcoll.h,transports/*.h} (so `#include "redcoll.h"` and
# `#include "transports/redcoll_shm.h"` work with -IPREFIX/include/redcoll, which
# `pkg-config --cflags redcoll` gives), PREFIX/bin/redcoll, PKGDIR/redcoll.pc; with
# MPI also PREFIX/bin/redcoll-mpi (build/redcoll_mpi: the tool whose bench and tune
# run on MPI under mpiexec), LIBDIR/libredcoll_pmpi.so and PKGDIR/redcoll-mpi.pc.
# The tools are prerequisites: a failed build stops the install. The directories
# of INSTALL_DIRS that install creates are listed in include/redcoll/.installed-dirs,
# and uninstall removes those again when they are empty, and no others.
INSTALL_DIRS = $(PREFIX) $(PREFIX)/include $(PREFIX)/bin $(LIBDIR) $(PKGDIR)
INCDIR = $(DESTDIR)$(PREFIX)/include/redcoll

install: $(BUILD)/redcoll $(MPI_TOOL) shim
	@new=; for d in $(INSTALL_DIRS); do [ -d "$(DESTDIR)$$d" ] || new="$$new $$d"; done; \
	 echo "install -d $(INCDIR)/transports $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PKGDIR)"; \
	 install -d $(INCDIR)/transports $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PKGDIR) && \
	 for d in $$new; do echo "$$d" >> $(INCDIR)/.installed-dirs; done
	install -m 644 redcoll.h $(INCDIR)/
	install -m 644 transports/*.h $(INCDIR)/transports/
	install -m 755 $(BUILD)/redcoll $(DESTDIR)$(PREFIX)/bin/
	$(if $(MPI_TOOL),install -m 755 $(MPI_TOOL) $(DESTDIR)$(PREFIX)/bin/redcoll-mpi)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' redcoll.pc.in > $(DESTDIR)$(PKGDIR)/redcoll.pc
	@if [ -f $(SHIM) ]; then \
	    echo "install -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)/"; \
	    install -d $(DESTDIR)$(LIBDIR) && install -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)/ && \
	    sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	        -e 's|@MPI_PC@|$(MPI_PC)|' redcoll-mpi.pc.in > $(DESTDIR)$(PKGDIR)/redcoll-mpi.pc; \
	else echo "install: no MPI, so no redcoll-mpi, libredcoll_pmpi.so or redcoll-mpi.pc"; fi

# Deepest directories first (sort -r puts a path after its parent's): rmdir
# leaves any that still hold someone else's files.
uninstall:
	rm -f $(INCDIR)/redcoll.h $(addprefix $(INCDIR)/,$(wildcard transports/*.h)) \
	      $(DESTDIR)$(PREFIX)/bin/redcoll $(DESTDIR)$(PREFIX)/bin/redcoll-mpi \
	      $(DESTDIR)$(LIBDIR)/libredcoll_pmpi.so \
	      $(DESTDIR)$(PKGDIR)/redcoll.pc $(DESTDIR)$(PKGDIR)/redcoll-mpi.pc
	@made=$$(cat $(INCDIR)/.installed-dirs 2>/dev/null); rm -f $(INCDIR)/.installed-dirs; \
	 rmdir $(INCDIR)/transports $(INCDIR) 2>/dev/null; \
	 for d in $$(printf '%s\n' $$made | sort -ru); do rmdir "$(DESTDIR)$$d" 2>/dev/null && echo "rmdir $(DESTDIR)$$d"; done; true

# Installs to a temporary prefix, builds and runs examples outside the tree with
# pkg-config, then uninstalls (.ci/run runs it).
test-install: $(BUILD)/redcoll $(MPI_TOOL) shim
	@test/install.sh "$(MAKE)" $(MPIEXEC)

clean:
	rm -rf $(BUILD)
