#!/usr/bin/env bash
# The MPI suite: builds test/mpi/test_mpi.c with MPICC and runs it under
# MPIEXEC -n 1..5 (through test/run_all.sh: one combined "N passed, N failed" line).
# Without an MPI compiler the suite is skipped with a message (0 tests);
# .ci/run installs MPICH first.
# Usage: test/mpi/run.sh BUILD_DIR MPICC MPIEXEC [extra compiler flags...]
set -u
build=${1:-build} mpicc=${2:-mpicc.mpich} mpiexec=${3:-mpiexec.mpich}
shift 3 2>/dev/null || shift $#
if ! command -v "$mpicc" >/dev/null 2>&1 || ! command -v "$mpiexec" >/dev/null 2>&1; then
    echo "MPI suite skipped: $mpicc / $mpiexec not found (install MPICH: apt-get install -y mpich libmpich-dev, as .ci/run does)"
    echo "0 passed, 0 failed"
    exit 0
fi
mkdir -p "$build"
# build OUT WHAT [flags...]: OUT from test/mpi/test_mpi.c with the extra
# flags and the script's own, unless it is newer than its sources (and the
# script got no flags); WHAT names it in the failure line.
build() {
    local out=$1 what=$2 newer
    shift 2
    newer=$(find test/mpi/test_mpi.c test/disagree_cases.h redcoll.h transports/redcoll_mpi.h -newer "$out" 2>/dev/null)
    if [ ${#extra[@]} -eq 0 ] && [ -x "$out" ] && [ -z "$newer" ]; then
        echo "MPI suite: $out is up to date (make test builds it)"
    elif ! "$mpicc" -std=c11 -Wall -Wextra -pedantic -Werror -Wmissing-prototypes -Wstrict-prototypes \
            -O2 -g -I. "$@" "${extra[@]}" test/mpi/test_mpi.c -o "$out"; then
        echo "MPI suite: build failed ($what)"
        echo "0 passed, 1 failed"
        exit 1
    fi
}
extra=("$@")
bin=$build/test_mpi
build "$bin" test_mpi
# BUILD/test_mpi_looks: the same program with the transport's looks at every poll and one
# look enough for a verdict, run --looks at -n 4 (a correct program's long sends).
looks=$build/test_mpi_looks
build "$looks" looks -DREDCOLL__MPI_LOOK_AFTER=1 -DREDCOLL__MPI_LOOK_EVERY=1 -DREDCOLL__MPI_SUSPECT_LOOKS=1
# BUILD/mpi_yield.so (make test): ranks that poll in vain yield the core (test/mpi/yield.c).
yield=$(cd "$build" && pwd)/mpi_yield.so
[ -f "$yield" ] && mpiexec="$mpiexec -genv LD_PRELOAD $yield"
runs=()
for n in 1 2 3 4 5; do runs+=("n$n=timeout 600 $mpiexec -n $n $bin"); done
runs+=("looks=timeout 600 $mpiexec -n 4 $looks --looks")
exec test/run_all.sh "${runs[@]}"
