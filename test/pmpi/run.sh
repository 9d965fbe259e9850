#!/usr/bin/env bash
# The MPI drop-in suite (shim/redcoll_pmpi.c): unmodified MPI programs
# (test/pmpi/*.c, they include only mpi.h) run under MPIEXEC with and without
# LD_PRELOAD=BUILD/libredcoll_pmpi.so and their outputs must be identical
# (integer data: exact whatever the algorithm), at -n 1..5; then the
# transport (shared memory for a communicator on one node; MPI point-to-point
# with REDCOLL_SHM=0 or a /dev/shm too small, said once), the environment
# (forced algorithms, every algorithm of every collective at -n 3 and 4
# over shared memory, unknown names, REDCOLL_DISABLE, REDCOLL_PROFILE, the
# non-commutative fallback, REDCOLL_VERBOSE lines), threads (MULTIPLE,
# SERIALIZED), datatypes, user ops and communicators freed while a
# collective that uses them is pending (lifetimes.c), error reporting (errors.c, white-box: it compiles the shim
# in; over shared memory and over MPI), and the library's symbols.
# REDCOLL_SHM=0 in the environment runs the whole suite over MPI point-to-point.
# Without an MPI compiler the suite is skipped with a message (0 tests).
# Ends with "N passed, N failed".
# Usage: test/pmpi/run.sh BUILD_DIR MPICC MPIEXEC
set -u
build=${1:-build} mpicc=${2:-mpicc.mpich} mpiexec=${3:-mpiexec.mpich}
. test/pmpi/lib.sh
suite_begin "MPI drop-in suite" "$build" "$mpicc" "$mpiexec"
flags="-std=c11 -Wall -Wextra -pedantic -Werror -Wmissing-prototypes -Wstrict-prototypes -O2 -g"
for prog in colls threads errors nonblock disagree progress lifetimes nbmany nbthreads persist; do # errors.c compiles the shim in: -I.
    built "MPI drop-in suite" "$build/pmpi_$prog" "test/pmpi/$prog.c" shim/redcoll_pmpi.c redcoll.h \
        transports/redcoll_mpi.h transports/redcoll_pshm.h transports/redcoll_handoff.h \
        -- "$mpicc" $flags -I. "test/pmpi/$prog.c" -o "$build/pmpi_$prog" -lpthread
done

# ---- the library: every MPI call it makes is PMPI_, and it exports only MPI_ entry points
undef=$(nm -D --undefined-only "$lib" | awk '{print $2}' | grep -E '^MPI_' || true)
check "the library calls no MPI_ function (PMPI_ only: no recursion into itself)" $([ -z "$undef" ]; echo $?)
[ -z "$undef" ] || echo "    calls: $undef"
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}')
extra=$(echo "$exported" | grep -Ev '^(MPI_|_init$|_fini$)' || true)
missing=""
for f in Init Init_thread Allreduce Reduce Reduce_scatter Reduce_scatter_block Allgather Allgatherv Bcast Alltoall \
         Gather Scatter Barrier Op_create Op_free Finalize Iallreduce Ireduce Ireduce_scatter \
         Ireduce_scatter_block Iallgather Iallgatherv Ibcast Ialltoall Igather Iscatter Ibarrier \
         Allreduce_init Bcast_init Start Startall Wait Test Waitall Testall Waitany Testany Waitsome \
         Testsome Request_free Request_get_status; do
    echo "$exported" | grep -qx "MPI_$f" || missing="$missing MPI_$f"
done
check "the library exports the MPI entry points and nothing else" $([ -z "$extra$missing" ]; echo $?)
[ -z "$extra$missing" ] || echo "    extra: $extra missing: $missing"

# ---- unmodified program, with and without the shim, n = 1..5
for n in 1 2 3 4 5; do
    mpi "$n" "$tmp/nat$n" -- "$build/pmpi_colls"; a=$?
    shim "$n" "$tmp/pre$n" -- "$build/pmpi_colls"; b=$?
    same "colls n=$n: identical with and without the shim" $a $b "$tmp/nat$n" "$tmp/pre$n"
done

# ---- the transport: shared memory for a communicator on one node, MPI when REDCOLL_SHM=0,
# when the ranks span nodes, or when /dev/shm is too small (said once)
# (REDCOLL_SHM=0 in the suite's own environment runs all of it over MPI point-to-point.)
for n in 1 2 3 4 5; do
    shim "$n" "$tmp/off$n" REDCOLL_SHM=0 -- "$build/pmpi_colls"; b=$?
    same "colls n=$n REDCOLL_SHM=0 (MPI point-to-point): identical" 0 $b "$tmp/nat$n" "$tmp/off$n"
done
mpi 3 "$tmp/tn0" -- "$build/pmpi_threads" multiple; a=$?
shim 3 "$tmp/tp0" REDCOLL_SHM=0 -- "$build/pmpi_threads" multiple; b=$?
same "threads multiple n=3 REDCOLL_SHM=0: identical" $a $b "$tmp/tn0" "$tmp/tp0"
if [ "${REDCOLL_SHM:-1}" != 0 ]; then
    shim 3 "$tmp/tv" REDCOLL_VERBOSE=1 -- "$build/pmpi_colls" world; s=$?
    grep -q '^redcoll: MPI_COMM_WORLD (p=3): transport shared memory (processes of one node)$' "$tmp/tv.err" &&
        ! grep -q 'shared memory unavailable' "$tmp/tv.err"
    check "REDCOLL_VERBOSE=1 names the shared-memory transport" $? "$tmp/tv.err"
fi
shim 3 "$tmp/tv0" REDCOLL_VERBOSE=1 REDCOLL_SHM=0 -- "$build/pmpi_colls" world; s=$?
grep -q '^redcoll: MPI_COMM_WORLD (p=3): transport MPI point-to-point (REDCOLL_SHM=0)$' "$tmp/tv0.err" &&
    ! grep -q 'transport shared memory' "$tmp/tv0.err"
check "REDCOLL_SHM=0: MPI point-to-point, and REDCOLL_VERBOSE=1 says so" $? "$tmp/tv0.err"
leftover=$(ls /dev/shm 2>/dev/null | grep -c "^redcoll-$(id -u)-mpi-" || true)
check "nothing of the jobs left in /dev/shm" $([ "$leftover" -eq 0 ]; echo $?)
# A /dev/shm of 32 MiB (root: a mount namespace of its own) holds MPI's own segments but
# not redcoll's when its cells ask for 128 MiB: every communicator falls back to MPI and
# the job says so once.
if [ "${REDCOLL_SHM:-1}" = 0 ]; then
    echo "pmpi/a /dev/shm too small: skipped (REDCOLL_SHM=0)"
elif [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
    small() { # small OUT ENV... -- PROG: the run with a 32 MiB /dev/shm
        local out=$1; shift
        local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
        unshare -m bash -c 'mount --make-rprivate / && mount -t tmpfs -o size=32m tmpfs /dev/shm && exec "$@"' \
            small env "${envs[@]}" timeout 600 "$mpiexec" -n 2 -genv LD_PRELOAD "$lib${yield:+:$yield}" "$@" \
            >"$out" 2>"$out.err"
    }
    small "$tmp/sm" REDCOLL_SHM_CELLS=64 REDCOLL_SHM_CELL_BYTES=1048576 REDCOLL_VERBOSE=1 -- "$build/pmpi_colls"; s=$?
    same "a /dev/shm too small: identical (MPI point-to-point)" 0 $s "$tmp/nat2" "$tmp/sm"
    [ "$(grep -c 'shared memory unavailable, collectives use MPI point-to-point: redcoll_pshm: the segment needs .* MiB in /dev/shm' "$tmp/sm.err")" -eq 1 ] &&
        grep -q '^redcoll: MPI_COMM_WORLD (p=2): transport MPI point-to-point (no shared-memory segment)$' "$tmp/sm.err"
    check "a /dev/shm too small: said once, with the size needed" $? "$tmp/sm.err"
else
    echo "pmpi/a /dev/shm too small: skipped (needs root for unshare -m and mount)"
fi

# ---- non-blocking and persistent collectives (nonblock.c), n = 1..5
for n in 1 2 3 4 5; do
    mpi "$n" "$tmp/nbn$n" -- "$build/pmpi_nonblock"; a=$?
    shim "$n" "$tmp/nbp$n" -- "$build/pmpi_nonblock"; b=$?
    same "nonblock n=$n: MPI_I<coll>, <coll>_init, every completion call: identical" $a $b "$tmp/nbn$n" "$tmp/nbp$n"
done
shim 3 "$tmp/nbv" REDCOLL_VERBOSE=1 -- "$build/pmpi_nonblock" gather_scatter_init; s=$?
bad=$(grep -c WRONG "$tmp/nbv")
missing=""
for c in allreduce reduce reduce_scatter reduce_scatter_block allgather allgatherv bcast alltoall gather scatter barrier; do
    grep -q "^redcoll: $c on MPI_COMM_WORLD (p=3)" "$tmp/nbv.err" || missing="$missing $c"
done
check "nonblock n=3 with MPI_Gather_init, MPI_Scatter_init (MPICH's own are wrong): right results" \
    $([ "$s" -eq 0 ] && [ "$bad" -eq 0 ]; echo $?) "$tmp/nbv"
check "nonblock: every non-blocking and persistent collective served by redcoll (REDCOLL_VERBOSE)" \
    $([ -z "$missing" ]; echo $?) "$tmp/nbv.err"
[ -z "$missing" ] || echo "    passed to MPI:$missing"

# ---- many non-blocking collectives outstanding on four communicators, point-to-point mixed
# in, every completion call (nbmany.c), n = 2..4: a hang fails the check after 60 s
for n in 2 3 4; do
    limit=60 mpi "$n" "$tmp/nmn$n" -- "$build/pmpi_nbmany"; a=$?
    limit=60 shim "$n" "$tmp/nmp$n" -- "$build/pmpi_nbmany"; b=$?
    same "nbmany n=$n: 24 outstanding on 4 communicators, every completion call: identical" $a $b \
        "$tmp/nmn$n" "$tmp/nmp$n"
done
# the first rounds on communicators no blocking collective has set up yet: those starts go
# to MPI (setting a communicator up waits for its ranks, which a start must not), said once
for n in 2 3; do
    limit=60 mpi "$n" "$tmp/ncn$n" -- "$build/pmpi_nbmany" cold; a=$?
    limit=60 shim "$n" "$tmp/ncp$n" REDCOLL_VERBOSE=1 -- "$build/pmpi_nbmany" cold; b=$?
    same "nbmany cold n=$n: starts on communicators not yet set up: identical" $a $b "$tmp/ncn$n" "$tmp/ncp$n"
done
[ "$(grep -c 'passed to MPI: no blocking collective has run on its communicator yet' "$tmp/ncp3.err")" -eq 1 ]
check "nbmany cold: the starts that went to MPI are said once (REDCOLL_VERBOSE)" $? "$tmp/ncp3.err"

# ---- non-blocking collectives from two threads, a communicator each (nbthreads.c, MULTIPLE)
for n in 2 3; do
    limit=60 mpi "$n" "$tmp/ntn$n" -- "$build/pmpi_nbthreads"; a=$?
    limit=60 shim "$n" "$tmp/ntp$n" -- "$build/pmpi_nbthreads"; b=$?
    same "nbthreads n=$n: MPI_Iallreduce + Wait/Test from two threads at once: identical" $a $b \
        "$tmp/ntn$n" "$tmp/ntp$n"
done

# ---- persistent collectives started in a different order on each rank, matched by the
# order of their inits (persist.c), n = 2..4: a hang fails the check after 60 s
for n in 2 3 4; do
    limit=60 mpi "$n" "$tmp/psn$n" -- "$build/pmpi_persist"; a=$?
    limit=60 shim "$n" "$tmp/psp$n" -- "$build/pmpi_persist"; b=$?
    same "persist n=$n: <coll>_init, starts in per-rank order, Start/Startall, Waitall/Wait/Test: identical" \
        $a $b "$tmp/psn$n" "$tmp/psp$n"
done

# ---- datatypes, user ops and communicators freed while a non-blocking or persistent
# collective that uses them is pending (lifetimes.c; MPI keeps them alive until it completes),
# at n = 2..4, and over MPI point-to-point (-mpi); the types and the communicators in jobs of
# their own, each under a timeout, so a crash or a hang in one fails it alone
limit=120
for spec in "2 types" "2 comms" "3 types" "3 comms" "4 types" "4 comms" \
            "3-mpi types" "2-mpi comms" "3-mpi comms" "4-mpi comms"; do
    set -- $spec
    n=$1 envs=() names=(comm) words="communicators"
    [ "$n" != "${n%-mpi}" ] && envs=(REDCOLL_SHM=0)
    [ "$2" = types ] && names=(i allreduce_init bcast_init) words="types and user ops"
    mpi "${n%-mpi}" "$tmp/ltn$n$2" -- "$build/pmpi_lifetimes" "${names[@]}"; a=$?
    shim "${n%-mpi}" "$tmp/ltp$n$2" "${envs[@]}" -- "$build/pmpi_lifetimes" "${names[@]}"; b=$?
    same "lifetimes n=$n: $words freed while a collective is pending: identical" $a $b \
        "$tmp/ltn$n$2" "$tmp/ltp$n$2"
done
limit=600

# ---- progress (progress.c): a rank waiting in a served collective keeps MPI's engine
# moving, so a peer's rendezvous send, receive, one-sided accesses and access epoch into
# it complete, as natively; a hang is a failure after 60 s. Under Open MPI too, where it
# is installed (the drop-in built against it into BUILD/openmpi), with lifetimes.c,
# nbmany.c, nbthreads.c and persist.c (which says there is nothing to run before MPI 4).
limit=60
for n in 2 3 4; do
    mpi "$n" "$tmp/prn$n" -- "$build/pmpi_progress"; a=$?
    shim "$n" "$tmp/prp$n" -- "$build/pmpi_progress"; b=$?
    same "progress n=$n: MPI traffic into a rank waiting in a collective completes" $a $b \
        "$tmp/prn$n" "$tmp/prp$n"
done
if command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpiexec.openmpi >/dev/null 2>&1; then
    mkdir -p "$build/openmpi"
    built "MPI drop-in suite" "$build/openmpi/libredcoll_pmpi.so" shim/redcoll_pmpi.c redcoll.h \
        transports/redcoll_mpi.h transports/redcoll_pshm.h transports/redcoll_handoff.h \
        -- mpicc.openmpi $flags -I. -fPIC -shared shim/redcoll_pmpi.c -o "$build/openmpi/libredcoll_pmpi.so" -lpthread
    ompi() { # ompi PROG N OUT [PRELOAD]: one of these programs under Open MPI's launcher
        timeout "$limit" mpiexec.openmpi --allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 \
            ${4:+-x LD_PRELOAD="$4"} -n "$2" "$build/openmpi/pmpi_$1" >"$3" 2>"$3.err"
    }
    for prog in progress lifetimes nbmany nbthreads persist; do
        built "MPI drop-in suite" "$build/openmpi/pmpi_$prog" test/pmpi/$prog.c \
            -- mpicc.openmpi $flags test/pmpi/$prog.c -o "$build/openmpi/pmpi_$prog"
        for n in 2 3 4; do
            ompi $prog "$n" "$tmp/o${prog}n$n"; a=$?
            ompi $prog "$n" "$tmp/o${prog}p$n" "$build/openmpi/libredcoll_pmpi.so"; b=$?
            same "$prog n=$n under Open MPI: identical" $a $b "$tmp/o${prog}n$n" "$tmp/o${prog}p$n"
        done
    done
else
    echo "pmpi/progress, lifetimes, nbmany, nbthreads, persist under Open MPI: skipped (mpicc.openmpi or mpiexec.openmpi not found)"
fi
limit=600

# ---- environment
mpi 4 "$tmp/q4" -- "$build/pmpi_colls" world; q4=$?
shim 4 "$tmp/ring" REDCOLL_VERBOSE=1 REDCOLL_ALLREDUCE_ALGORITHM=ring -- "$build/pmpi_colls" world; s=$?
same "REDCOLL_ALLREDUCE_ALGORITHM=ring n=4: identical" $q4 $s "$tmp/q4" "$tmp/ring"
grep -q '^redcoll: allreduce on MPI_COMM_WORLD (p=4), 8\.\.15 B: ring (forced by the environment)$' "$tmp/ring.err"
check "REDCOLL_VERBOSE=1 shows redcoll's ring for allreduce" $? "$tmp/ring.err"
grep -q '^redcoll: bcast on MPI_COMM_WORLD (p=4), .*: binomial (auto)$' "$tmp/ring.err"
check "REDCOLL_VERBOSE=1 shows what auto picks (bcast: binomial)" $? "$tmp/ring.err"
grep -q '^redcoll: allreduce on MPI_COMM_WORLD (p=4): passed to MPI: datatype is not contiguous' "$tmp/ring.err" &&
    grep -q 'passed to MPI: intercommunicator' "$tmp/ring.err" &&
    grep -q '^redcoll: allreduce on MPI_COMM_WORLD (p=4): passed to MPI: op not mapped' "$tmp/ring.err"
check "REDCOLL_VERBOSE=1 says what passed through and why" $? "$tmp/ring.err"
dups=$(grep '^redcoll: ' "$tmp/ring.err" | grep -v intercommunicator | sort | uniq -d | wc -l)
lines=$(grep -c '^redcoll: ' "$tmp/ring.err")
check "REDCOLL_VERBOSE=1 prints each line once, from one rank per group ($lines lines)" $([ "$dups" -eq 0 ]; echo $?) "$tmp/ring.err"

shim 2 "$tmp/bad" REDCOLL_ALLREDUCE_ALGORITHM=no_such_algorithm REDCOLL_GATHER_ALGORITHM=ring \
    REDCOLL_VERBOSE=1 -- "$build/pmpi_colls" world; s=$?
mpi 2 "$tmp/q2" -- "$build/pmpi_colls" world; q2=$?
same "unknown and unsupported algorithm names: identical results" $q2 $s "$tmp/q2" "$tmp/bad"
[ "$(grep -c 'REDCOLL_ALLREDUCE_ALGORITHM=no_such_algorithm: no such allreduce algorithm; using auto' "$tmp/bad.err")" -eq 1 ] &&
    [ "$(grep -c 'REDCOLL_GATHER_ALGORITHM=ring: no such gather algorithm; using auto. Known: binomial' "$tmp/bad.err")" -eq 1 ] &&
    grep -q '^redcoll: allreduce on MPI_COMM_WORLD (p=2), 8\.\.15 B: recursive_doubling (auto)$' "$tmp/bad.err"
check "unknown and unsupported names are reported once and fall back to auto" $? "$tmp/bad.err"

shim 3 "$tmp/off" REDCOLL_DISABLE=1 REDCOLL_VERBOSE=1 REDCOLL_ALLREDUCE_ALGORITHM=ring -- "$build/pmpi_colls" world; s=$?
mpi 3 "$tmp/q3" -- "$build/pmpi_colls" world; q3=$?
same "REDCOLL_DISABLE=1: identical" $q3 $s "$tmp/q3" "$tmp/off"
! grep -q ' on MPI_COMM_WORLD' "$tmp/off.err" && [ "$(grep -c 'REDCOLL_DISABLE=1: every collective goes to MPI' "$tmp/off.err")" -eq 1 ]
check "REDCOLL_DISABLE=1 serves nothing" $? "$tmp/off.err"

shim 3 "$tmp/nc" REDCOLL_VERBOSE=1 REDCOLL_REDUCE_ALGORITHM=binary REDCOLL_REDUCE_SCATTER_ALGORITHM=recursive_halving \
    REDCOLL_REDUCE_SCATTER_BLOCK_ALGORITHM=recursive_halving -- "$build/pmpi_colls" world; s=$?
same "order-breaking algorithms forced with a non-commutative op: identical" $q3 $s "$tmp/q3" "$tmp/nc"
grep -q '^redcoll: reduce on MPI_COMM_WORLD (p=3), .*: binary (forced by the environment)$' "$tmp/nc.err" &&
    grep -q '^redcoll: reduce on MPI_COMM_WORLD (p=3), .*(auto: the forced algorithm needs a commutative op)$' "$tmp/nc.err" &&
    grep -q '^redcoll: reduce_scatter_block on MPI_COMM_WORLD (p=3), .*(auto: the forced algorithm needs a commutative op)$' "$tmp/nc.err"
check "non-commutative ops fall back to an order-keeping algorithm" $? "$tmp/nc.err"

shim 2 "$tmp/prof" REDCOLL_PROFILE=/nonexistent/profile -- "$build/pmpi_colls" world; s=$?
same "REDCOLL_PROFILE: identical" $q2 $s "$tmp/q2" "$tmp/prof"
[ "$(grep -c 'REDCOLL_PROFILE=/nonexistent/profile ignored (No such file' "$tmp/prof.err")" -eq 1 ]
check "REDCOLL_PROFILE: a missing file is reported once" $? "$tmp/prof.err"
printf 'redcoll_profile 1\nalpha 3e-6\nbeta 2e-10\ngamma 5e-11\nf_alpha 1\nf_beta 1\n' > "$tmp/good.profile"
shim 2 "$tmp/profok" REDCOLL_PROFILE="$tmp/good.profile" REDCOLL_VERBOSE=1 -- "$build/pmpi_colls" world; s=$?
same "REDCOLL_PROFILE with a profile: identical" $q2 $s "$tmp/q2" "$tmp/profok"
[ "$(grep -c "REDCOLL_PROFILE=$tmp/good.profile: auto chooses by its cost model" "$tmp/profok.err")" -eq 1 ]
check "REDCOLL_PROFILE: a profile is read and said once" $? "$tmp/profok.err"
printf 'redcoll_profile 1\nalpha fast\n' > "$tmp/bad.profile"
shim 2 "$tmp/profbad" REDCOLL_PROFILE="$tmp/bad.profile" -- "$build/pmpi_colls" world; s=$?
same "REDCOLL_PROFILE with a bad profile: identical" $q2 $s "$tmp/q2" "$tmp/profbad"
[ "$(grep -c "REDCOLL_PROFILE=$tmp/bad.profile ignored (" "$tmp/profbad.err")" -eq 1 ]
check "REDCOLL_PROFILE: a profile that does not parse is reported once" $? "$tmp/profbad.err"

# ---- nodes: REDCOLL_RANKS_PER_NODE=2 makes the transport see nodes of 2 ranks; the
# node-aware rows forced, and auto under a two-level profile, give MPI's results
printf 'redcoll_profile 1\nalpha 5e-7\nbeta 5e-11\ngamma 2.5e-11\nf_alpha 1\nf_beta 1\ninter_alpha 2e-6\ninter_beta 1e-10\n' > "$tmp/two.profile"
for n in 4 3; do
    ref=$tmp/q$n; [ -f "$ref" ] || { mpi "$n" "$ref" -- "$build/pmpi_colls" world; }
    for algo in node_split node_leader; do
        shim "$n" "$tmp/nodes" REDCOLL_RANKS_PER_NODE=2 REDCOLL_VERBOSE=1 REDCOLL_ALLREDUCE_ALGORITHM=$algo \
            REDCOLL_REDUCE_ALGORITHM=$algo REDCOLL_BCAST_ALGORITHM=$algo REDCOLL_ALLGATHER_ALGORITHM=$algo \
            -- "$build/pmpi_colls" world; s=$?
        same "n=$n REDCOLL_RANKS_PER_NODE=2, $algo forced: identical" 0 $s "$ref" "$tmp/nodes"
    done
    grep -q "(p=$n): $(( (n + 1) / 2 )) nodes; inside this node: shared memory" "$tmp/nodes.err"
    check "n=$n REDCOLL_RANKS_PER_NODE=2: the levels inside a node run on the node's shared memory" $? "$tmp/nodes.err"
    if [ "$n" -eq 4 ]; then
        shim "$n" "$tmp/nodes" REDCOLL_SHM=0 REDCOLL_RANKS_PER_NODE=2 REDCOLL_VERBOSE=1 \
            REDCOLL_ALLREDUCE_ALGORITHM=node_split -- "$build/pmpi_colls" world; s=$?
        same "n=4 REDCOLL_RANKS_PER_NODE=2 REDCOLL_SHM=0, node_split forced: identical" 0 $s "$ref" "$tmp/nodes"
        grep -q "(p=4): 2 nodes; inside this node: MPI point-to-point on the node's communicator" "$tmp/nodes.err"
        check "n=4 REDCOLL_SHM=0: the levels inside a node run on MPI on the node's communicator" $? "$tmp/nodes.err"
    fi
    shim "$n" "$tmp/nodes" REDCOLL_RANKS_PER_NODE=2 REDCOLL_PROFILE="$tmp/two.profile" -- "$build/pmpi_colls" world; s=$?
    same "n=$n REDCOLL_RANKS_PER_NODE=2, auto under a two-level profile: identical" 0 $s "$ref" "$tmp/nodes"
done

# ---- every algorithm of every collective, forced: round k forces the k-th name of each
force_every "" "$build/pmpi_colls" world

# ---- threads
for spec in "2 multiple" "3 multiple" "3 serialized"; do
    set -- $spec
    mpi "$1" "$tmp/tn" -- "$build/pmpi_threads" "$2"; a=$?
    shim "$1" "$tmp/tp" -- "$build/pmpi_threads" "$2"; b=$?
    same "threads $2 n=$1: identical" $a $b "$tmp/tn" "$tmp/tp"
done

# ---- ranks that disagree (disagree.c): every case ends in an error on every rank within
# 10 s (the program's own watchdog), or, where MPICH's own collectives wait forever too
# (the list below, as MPICH 4 with ch4:ucx behaves), is not run; a datatype of the same size
# in a collective that moves data is not a mistake MPI or the drop-in sees (every rank ok).
waits() { # the cases that wait forever at n = $1, natively as with the drop-in
    case $1 in
    2) echo "reduce:root reduce:other gather:root gather:other" ;;
    3) echo "allreduce:other reduce:other reduce_scatter:other reduce_scatter_block:other allgather:other" \
            "allgatherv:other alltoall:other gather:other barrier:skip barrier:other" ;;
    4) echo "reduce:root reduce:skip reduce:other gather:root gather:skip gather:other" ;;
    esac
}
all_cases=$(timeout 60 "$mpiexec" -n 1 "$build/pmpi_disagree" -l)
for n in 2 3 4; do
    skip=" $(waits $n) " run=()
    for c in $all_cases; do case "$skip" in *" $c "*) ;; *) run+=("$c") ;; esac; done
    shim "$n" "$tmp/dis$n" -- "$build/pmpi_disagree" -r "${run[@]}"; s=$?
    bad=$(awk -v n="$n" '
        { split($1, ck, ":"); c = ck[1]; k = ck[2]; ok = $4 == "ok"
          same_bytes = k == "dtype" && c !~ /reduce/ && c != "allreduce"
          want_ok = k == "none" || same_bytes
          if (ok != want_ok) print; lines[$1]++ }
        END { for (c in lines) if (lines[c] != n) print c ": " lines[c] " of " n " ranks answered" }' "$tmp/dis$n")
    [ "$s" -eq 0 ] && [ -z "$bad" ] && [ "$(wc -l < "$tmp/dis$n")" -eq $((n * ${#run[@]})) ]
    check "disagree n=$n: ${#run[@]} cases, each an error on every rank within 10 s (controls ok)" $? "$tmp/dis$n.err"
    [ -n "$bad" ] && echo "$bad" | head -n 10
done
# over shared memory (the default on one node) the drop-in ends in errors even the cases
# MPICH itself waits on forever (its deadlock detector, transports/redcoll_pshm.h)
if [ "${REDCOLL_SHM:-1}" != 0 ]; then
    cases=$(waits 2)
    shim 2 "$tmp/disw" -- "$build/pmpi_disagree" -r $cases; s=$?
    [ "$s" -eq 0 ] && [ "$(grep -c ': error redcoll: ' "$tmp/disw")" -eq $((2 * $(echo $cases | wc -w))) ]
    check "disagree n=2 over shared memory: the cases MPICH waits on forever end in errors too" $? "$tmp/disw"
fi
# MPICH alone on what the drop-in leaves alone: a same-size datatype in data movement
mpi 3 "$tmp/disnat" -- "$build/pmpi_disagree" -r allgather:dtype bcast:dtype gather:dtype; s=$?
[ "$s" -eq 0 ] && [ "$(grep -c ': ok$' "$tmp/disnat")" -eq 9 ]
check "disagree: MPICH alone also takes a same-size datatype in data movement" $? "$tmp/disnat.err"
# MPI_ERRORS_ARE_FATAL (the default): the job ends with redcoll's message
shim 2 "$tmp/disfatal" -- "$build/pmpi_disagree" allreduce:count; s=$?
[ "$s" -ne 0 ] && grep -q 'redcoll: MPI_Allreduce on .*ranks disagree about the call: rank [01] is in allreduce' "$tmp/disfatal.err"
check "disagree: MPI_ERRORS_ARE_FATAL ends the job with redcoll's message" $? "$tmp/disfatal.err"
# ranks whose environments force different algorithms: MPMD, one rank forces ring
timeout 60 "$mpiexec" -genv LD_PRELOAD "$lib${yield:+:$yield}" -n 2 "$build/pmpi_disagree" -r allreduce:none bcast:none : \
    -n 1 -env REDCOLL_ALLREDUCE_ALGORITHM ring "$build/pmpi_disagree" -r allreduce:none bcast:none \
    > "$tmp/disalgo" 2> "$tmp/disalgo.err"; s=$?
[ "$s" -eq 0 ] && [ "$(grep -c '^allreduce:none rank .: error .*REDCOLL_ALLREDUCE_ALGORITHM; this rank: ' "$tmp/disalgo")" -eq 3 ] &&
    [ "$(grep -c '^bcast:none rank .: ok$' "$tmp/disalgo")" -eq 3 ]
check "disagree: one rank forcing REDCOLL_ALLREDUCE_ALGORITHM: an error on every rank, bcast unaffected" $? "$tmp/disalgo"

# ---- errors through the communicator's error handler (white-box: the shim compiled in),
# over shared memory and over MPI point-to-point
for shm in 1 0; do
    mpi 2 "$tmp/err" REDCOLL_SHM=$shm -- "$build/pmpi_errors"
    sed "s|errors/|errors (REDCOLL_SHM=$shm)/|" "$tmp/err"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/err" | tail -n 1)
    if [ -n "$line" ]; then
        p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
        pass=$((pass + p)); fail=$((fail + f))
    else
        check "errors program ran (REDCOLL_SHM=$shm)" 1 "$tmp/err.err"
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
