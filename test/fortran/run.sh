#!/usr/bin/env bash
# The drop-in's Fortran suite (shim/redcoll_pmpi.c): unmodified Fortran MPI
# programs run under MPIEXEC with and without LD_PRELOAD=BUILD/libredcoll_pmpi.so
# and their outputs must be identical (exact data: the same whatever the
# algorithm). colls.f90 (the mpi module) covers every collective on
# Fortran's datatypes, Fortran user ops, MPI_IN_PLACE and what passes
# through, at -n 1..4, then every algorithm of every collective forced at
# -n 3 and 4; f08.f90 (the mpi_f08 module) the same calls through mpi_f08's
# wrappers. REDCOLL_VERBOSE=1 shows which calls were served: only the
# expected ones pass to MPI.
# Without an MPI Fortran compiler the suite is skipped with a message.
# Ends with "N passed, N failed".
# Usage: test/fortran/run.sh BUILD_DIR MPIFORT MPIEXEC
set -u
build=${1:-build} mpifort=${2:-mpifort.mpich} mpiexec=${3:-mpiexec.mpich}
suite=fortran
. test/pmpi/lib.sh
fc=$("$mpifort" -show 2>/dev/null | awk '{print $1}') # the compiler behind the wrapper
suite_begin "Fortran drop-in suite" "$build" "$mpifort" "${fc:-gfortran}" "$mpiexec"
# The mpi module declares no interface for choice buffers, so gfortran warns
# at every call whose buffer type differs from an earlier one: only the
# mpi_f08 program builds with warnings as errors (== on reals: exact data).
# Modules go to a directory per program.
for prog in colls f08; do
    flags="-w"; [ $prog = f08 ] && flags="-Wall -Wextra -Wno-compare-reals -Werror"
    bin=$build/fortran_$prog
    built "Fortran drop-in suite" "$bin" "test/fortran/$prog.f90" test/fortran/checks.f90 -- \
        sh -c "mkdir -p $build/fmod/${bin##*/} && $mpifort -O2 -g -fcheck=bounds -J $build/fmod/${bin##*/} $flags \
               test/fortran/checks.f90 test/fortran/$prog.f90 -o $bin"
done

# ---- unmodified programs, with and without the shim
for n in 1 2 3 4; do
    mpi "$n" "$tmp/nat$n" -- "$build/fortran_colls"; a=$?
    shim "$n" "$tmp/pre$n" -- "$build/fortran_colls"; b=$?
    same "colls.f90 n=$n: identical with and without the shim" $a $b "$tmp/nat$n" "$tmp/pre$n"
done
mpi 3 "$tmp/f08n" -- "$build/fortran_f08"; a=$?
shim 3 "$tmp/f08s" REDCOLL_VERBOSE=1 -- "$build/fortran_f08"; b=$?
same "f08.f90 n=3: identical with and without the shim" $a $b "$tmp/f08n" "$tmp/f08s"

# ---- served, not passed: the only calls that go to MPI are colls.f90's
# complex MPI_PROD and REAL16 MPI_MAX (op not mapped: one line for world,
# one for its duplicate), and f08.f90's user op: MPICH's mpi_f08
# MPI_Op_create calls PMPI_Op_create, so the drop-in never learns its function.
shim 3 "$tmp/v3" REDCOLL_VERBOSE=1 -- "$build/fortran_colls"; s=$?
passed=$(grep 'passed to MPI' "$tmp/v3.err" | sed 's/ on [^(]*(/ on C (/' | sort | uniq -c | sed 's/^ *//')
want="2 redcoll: allreduce on C (p=3): passed to MPI: op not mapped (unknown, or predefined op on this datatype)"
check "REDCOLL_VERBOSE=1: every Fortran datatype is served (only complex MPI_PROD and REAL16 pass)" \
    $([ $s -eq 0 ] && [ "$passed" = "$want" ]; echo $?) "$tmp/v3.err"
[ "$passed" = "$want" ] || echo "    passed: $passed"
grep -q '^redcoll: allreduce on MPI_COMM_WORLD (p=3), .*: .* (auto)$' "$tmp/v3.err" &&
    grep -q '^redcoll: reduce_scatter on MPI_COMM_WORLD (p=3), ' "$tmp/v3.err" &&
    grep -q '^redcoll: alltoall on MPI_COMM_WORLD (p=3), ' "$tmp/v3.err"
check "REDCOLL_VERBOSE=1 names the schedules that served them" $? "$tmp/v3.err"
passed=$(grep 'passed to MPI' "$tmp/f08s.err")
check "f08.f90: served but for its user op (MPICH's mpi_f08 MPI_Op_create bypasses MPI_Op_create)" \
    $([ "$passed" = "redcoll: allreduce on MPI_COMM_WORLD (p=3): passed to MPI: op not mapped (unknown, or predefined op on this datatype)" ]; echo $?) "$tmp/f08s.err"

# ---- REDCOLL_SUM_EXACT=1: exact data, so the same output as MPI's sums
shim 3 "$tmp/x3" REDCOLL_SUM_EXACT=1 -- "$build/fortran_colls"; s=$?
same "colls.f90 n=3 REDCOLL_SUM_EXACT=1: identical" 0 $s "$tmp/nat3" "$tmp/x3"

# ---- every algorithm of every collective, forced: round k forces the k-th name of each
force_every "colls.f90 " "$build/fortran_colls" world
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
