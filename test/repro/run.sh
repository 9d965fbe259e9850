#!/usr/bin/env bash
# The drop-in's reproducible mode (REDCOLL_SUM_EXACT=1): small real programs,
# unmodified, in C and in Fortran (test/repro: wide.c / wide.f90, vector sums
# of wide-range doubles, floats and complex in MPI_Allreduce, MPI_Reduce,
# MPI_Reduce_scatter(_block); cg.c / cg.f90, conjugate gradients whose dot
# products are MPI_Allreduce of doubles). Under the mode their output bits
# are the same whatever allreduce, reduce and reduce_scatter algorithm is
# forced (every one, at -n 3 and 4), from run to run, in C and in Fortran,
# and, for inputs held by the first D ranks (the others zeros), at every
# process count; every wide.c sum is the correctly rounded one. Without the
# mode the forced algorithms give different bits on the same inputs. Ranks
# that disagree on the mode are an error; REDCOLL_VERBOSE=1 says the mode
# once per communicator and why a derived datatype's sum stays MPI's.
# Without MPI the suite is skipped; without an MPI Fortran compiler its
# Fortran half is (with a message). Ends with "N passed, N failed".
# Usage: test/repro/run.sh BUILD_DIR MPICC MPIFORT MPIEXEC
set -u
build=${1:-build} mpicc=${2:-mpicc.mpich} mpifort=${3:-mpifort.mpich} mpiexec=${4:-mpiexec.mpich}
suite=repro
. test/pmpi/lib.sh
suite_begin "reproducible-mode suite" "$build" "$mpicc" "$mpiexec"
langs="c"
fc=$("$mpifort" -show 2>/dev/null | awk '{print $1}') # the compiler behind the wrapper
if [ -n "$fc" ] && command -v "$fc" >/dev/null 2>&1; then langs="c f"
else echo "reproducible-mode suite: no $mpifort (or its compiler), the Fortran programs are skipped"; fi
for prog in wide cg; do
    bin=$build/repro_${prog}_c
    built "reproducible-mode suite" "$bin" test/repro/$prog.c test/repro/repro.h -- \
        "$mpicc" -std=c11 -Wall -Wextra -pedantic -Werror -O2 -g test/repro/$prog.c -o "$bin" -lm
    bin=$build/repro_${prog}_f # the mpi module: mismatch warnings (test/fortran/run.sh)
    [ "$langs" = "c f" ] && built "reproducible-mode suite" "$bin" test/repro/$prog.f90 test/fortran/checks.f90 -- \
        sh -c "mkdir -p $build/fmod/${bin##*/} && $mpifort -O2 -g -fcheck=bounds -w -J $build/fmod/${bin##*/} \
               test/fortran/checks.f90 test/repro/$prog.f90 -o $bin"
done
x=REDCOLL_SUM_EXACT=1

# ---- every algorithm forced, with the mode: one output per program and n
# (C and Fortran alike), every wide sum correctly rounded
colls="allreduce reduce reduce_scatter reduce_scatter_block"
declare -A known
algorithms "$build/repro_wide_c 1" $colls
check "the reductions list their algorithms ($rounds rounds)" $([ "$rounds" -ge 10 ]; echo $?) "$tmp/known.err"
for n in 3 4; do
    for prog in wide cg; do
        ref=$tmp/$prog$n
        shim $n "$ref" $x -- "$build/repro_${prog}_c"; s=$?
        bad=0; runs=0
        for ((k = 0; k < rounds; ++k)); do
            forced $k $colls
            for l in $langs; do
                shim $n "$tmp/out" $x "${envs[@]}" -- "$build/repro_${prog}_$l"; s2=$?
                runs=$((runs + 1))
                if [ $s -ne 0 ] || [ $s2 -ne 0 ] || ! cmp -s "$ref" "$tmp/out"; then
                    bad=$((bad + 1)); echo "    differs ($l):$desc"; diff "$ref" "$tmp/out" | head -n 4
                fi
            done
        done
        check "$prog n=$n $x: the same bits under all $rounds forced algorithm rounds, C and Fortran ($runs runs)" $bad
    done
    ! grep -q 'not-correctly-rounded' "$tmp/wide$n" && [ "$(grep -c 'correctly-rounded' "$tmp/wide$n")" -eq 13 ]
    check "wide n=$n $x: every sum is the correctly rounded one" $? "$tmp/wide$n"
done

# ---- without the mode the same runs give different bits (so the check above can fail)
for prog in wide cg; do
    for ((k = 0; k < rounds; ++k)); do
        forced $k allreduce reduce
        shim 4 "$tmp/ord$k" "${envs[@]}" -- "$build/repro_${prog}_c"
    done
    distinct=$(cat "$tmp"/ord* | sort -u | wc -l)
    lines=$(wc -l < "$tmp/ord0")
    check "$prog n=4 without the mode: forced algorithms give different bits ($distinct distinct lines, $lines per run)" \
        $([ "$distinct" -gt "$lines" ]; echo $?)
    rm -f "$tmp"/ord*
done

# ---- from run to run, and across process counts for inputs held by ranks 0 .. D-1
for prog in wide cg; do
    for l in $langs; do
        shim 4 "$tmp/again" $x -- "$build/repro_${prog}_$l"; s=$?
        same "$prog ($l) n=4 $x: the same bits from run to run" 0 $s "$tmp/${prog}4" "$tmp/again"
        for d in 2 3; do
            ns="2 3 4"; [ $d -eq 3 ] && ns="3 4 5"
            shim $d "$tmp/d$d" $x -- "$build/repro_${prog}_c" $d
            bad=0
            for n in $ns; do
                shim $n "$tmp/dn" $x -- "$build/repro_${prog}_$l" $d; s=$?
                [ $s -eq 0 ] && cmp -s "$tmp/d$d" "$tmp/dn" || { bad=1; diff "$tmp/d$d" "$tmp/dn" | head -n 4; }
            done
            check "$prog ($l) $x, data on $d ranks: the same bits at -n $ns" $bad
        done
    done
done

# ---- REDCOLL_VERBOSE=1: the mode once per communicator; derived datatypes stay MPI's
shim 3 "$tmp/v" $x REDCOLL_VERBOSE=1 -- "$build/repro_wide_c"; s=$?
[ $s -eq 0 ] &&
    [ "$(grep -c '^redcoll: MPI_COMM_WORLD (p=3): MPI_SUM on float and double types is the correctly rounded exact sum (REDCOLL_SUM_EXACT)$' "$tmp/v.err")" -eq 1 ] &&
    grep -q '^redcoll: allreduce on comm [0-9]* (p=3): passed to MPI: predefined op on a derived datatype (MPI reduces it; REDCOLL_SUM_EXACT does not apply)$' "$tmp/v.err"
check "REDCOLL_VERBOSE=1 says the mode once, and that a derived datatype's sum is MPI's" $? "$tmp/v.err"
if [ -x "$build/pmpi_colls" ]; then # C's drop-in program: exact data, many communicators
    mpi 3 "$tmp/cn" -- "$build/pmpi_colls"; a=$?
    shim 3 "$tmp/cx" $x REDCOLL_VERBOSE=1 -- "$build/pmpi_colls"; b=$?
    same "test/pmpi/colls.c n=3 $x: identical to MPI (exact data)" $a $b "$tmp/cn" "$tmp/cx"
    said=$(grep 'is the correctly rounded exact sum' "$tmp/cx.err" | sort | uniq -d | wc -l)
    comms=$(grep -c 'is the correctly rounded exact sum' "$tmp/cx.err")
    check "REDCOLL_VERBOSE=1 says the mode once per communicator ($comms communicators)" \
        $([ "$said" -eq 0 ] && [ "$comms" -ge 2 ]; echo $?) "$tmp/cx.err"
fi

# ---- ranks that disagree: an error (MPI_ERRORS_ARE_FATAL: the job ends), said by both sides
timeout 120 "$mpiexec" -genv LD_PRELOAD "$lib${yield:+:$yield}" -n 1 -env REDCOLL_SUM_EXACT 1 \
    "$build/repro_wide_c" : -n 2 "$build/repro_wide_c" > "$tmp/mix" 2> "$tmp/mix.err"; s=$?
[ $s -ne 0 ] && [ $s -ne 124 ] &&
    grep -q 'redcoll: MPI_COMM_WORLD (p=3): REDCOLL_SUM_EXACT is on on rank 0 and off on rank 1; every rank must set it alike' "$tmp/mix.err" &&
    grep -q 'REDCOLL_SUM_EXACT is off on rank 1 and on on rank 0' "$tmp/mix.err"
check "ranks that disagree on REDCOLL_SUM_EXACT: an error through the error handler (exit $s)" $? "$tmp/mix.err"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
