# Shell helpers of the drop-in's suites (test/pmpi/run.sh, test/fortran/run.sh,
# test/repro/run.sh). suite_begin sets lib (libredcoll_pmpi.so), tmp (a
# scratch directory removed at exit) and yield; check counts results in
# pass / fail, and the suite ends with "$pass passed, $fail failed".
# `suite` (pmpi unless set) prefixes the names of the checks.
pass=0 fail=0
check() { # check NAME STATUS [DETAIL-FILE]
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "ok    ${suite:-pmpi}/$1"
    else fail=$((fail + 1)); echo "FAIL  ${suite:-pmpi}/$1"; [ -n "${3:-}" ] && tail -n 15 "$3"; fi
}
# suite_begin TITLE BUILD TOOL...: skips the suite (exit 0) when a tool is
# not installed, fails it when BUILD has no drop-in.
suite_begin() {
    local title=$1 build=$2 t; shift 2
    for t in "$@"; do
        command -v "$t" >/dev/null 2>&1 && continue
        echo "$title skipped: $t not found (apt-get install -y mpich libmpich-dev gfortran, as .ci/run does)"
        echo "0 passed, 0 failed"
        exit 0
    done
    lib=$(cd "$build" 2>/dev/null && pwd)/libredcoll_pmpi.so
    if [ ! -f "$lib" ]; then
        echo "$title: $lib not built (make shim)"
        echo "0 passed, 1 failed"
        exit 1
    fi
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # BUILD/mpi_yield.so (make test), preloaded in every run: ranks that poll
    # in vain yield the core (test/mpi/yield.c); it defines no MPI symbol.
    yield=$(dirname "$lib")/mpi_yield.so
    [ -f "$yield" ] || yield=""
}
# built TITLE BIN SOURCE... -- COMMAND...: runs COMMAND (the build of BIN)
# unless BIN is newer than every SOURCE (make test built it); a failed
# build fails the suite.
built() {
    local title=$1 bin=$2 srcs=()
    shift 2
    while [ "$1" != "--" ]; do srcs+=("$1"); shift; done
    shift
    [ -x "$bin" ] && [ -z "$(find "${srcs[@]}" -newer "$bin" 2>/dev/null)" ] && return 0
    "$@" && return 0
    echo "$title: build of ${srcs[0]} failed"
    echo "0 passed, 1 failed"
    exit 1
}
# mpi N OUT [ENV=VAL ...] -- PROG ARGS: runs without the shim; shim N OUT ...: with it.
# stdout to OUT, stderr to OUT.err; returns the exit status (124: killed after
# $limit seconds, 600 unless set).
mpi() {
    local n=$1 out=$2; shift 2
    local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" timeout "${limit:-600}" "$mpiexec" -n "$n" ${yield:+-genv LD_PRELOAD "$yield"} "$@" >"$out" 2>"$out.err"
}
shim() {
    local n=$1 out=$2; shift 2
    local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    env "${envs[@]}" timeout "${limit:-600}" "$mpiexec" -n "$n" -genv LD_PRELOAD "$lib${yield:+:$yield}" "$@" >"$out" 2>"$out.err"
}
# same NAME A-STATUS B-STATUS A B: both ran, no WRONG line, identical output.
same() {
    local s=0
    [ "$2" -eq 0 ] && [ "$3" -eq 0 ] || s=1
    grep -q WRONG "$5" && s=1
    cmp -s "$4" "$5" || { s=1; diff "$4" "$5" | head -n 10 > "$5.diff"; cat "$5.err" >> "$5.diff"; }
    check "$1" $s "$5.diff"
}
# algorithms PROG COLL...: fills the associative array `known` (declare -A
# known first, in the caller or a function that calls this) with each collective's algorithm names, as the drop-in lists
# them for REDCOLL_<COLL>_ALGORITHM=? (PROG run once under it on one rank),
# and sets `rounds` to the longest list's length.
algorithms() {
    local prog=$1 c k; shift
    local qs=(); for c in "$@"; do qs+=("REDCOLL_${c^^}_ALGORITHM=?"); done
    shim 1 "$tmp/known" "${qs[@]}" -- $prog
    rounds=0
    for c in "$@"; do
        known[$c]=$(grep "REDCOLL_${c^^}_ALGORITHM=?:" "$tmp/known.err" | sed 's/.*Known: *//')
        k=$(echo ${known[$c]} | wc -w)
        [ "$k" -gt "$rounds" ] && rounds=$k
    done
}
# forced K COLL...: sets `envs` (REDCOLL_<COLL>_ALGORITHM=name) and `desc`
# for round K, the K-th name of each collective's list (cycling).
forced() {
    local k=$1 c; shift
    envs=(); desc=""
    for c in "$@"; do
        set -- ${known[$c]}
        [ $# -eq 0 ] && continue
        shift $((k % $#)); envs+=("REDCOLL_${c^^}_ALGORITHM=$1"); desc="$desc $c=$1"
    done
}
# force_every LABEL PROG [ARG...]: every algorithm of every collective forced
# on PROG (round k forces the k-th name of each) at -n 3 and 4, each run's
# output the same as PROG's without the drop-in ($tmp/qN, run here unless
# the suite has it already).
force_every() {
    local label=$1 n k s colls="allreduce reduce reduce_scatter reduce_scatter_block allgather
        allgatherv bcast alltoall gather scatter barrier"
    shift
    declare -A known
    algorithms "$*" $colls
    check "every collective lists its algorithms ($rounds rounds)" $([ "$rounds" -ge 10 ]; echo $?) "$tmp/known.err"
    for n in 3 4; do
        [ -f "$tmp/q$n" ] || mpi "$n" "$tmp/q$n" -- "$@"
        for ((k = 0; k < rounds; ++k)); do
            forced $k $colls
            shim "$n" "$tmp/force" "${envs[@]}" -- "$@"; s=$?
            same "${label}n=$n forced:$desc" 0 $s "$tmp/q$n" "$tmp/force"
        done
    done
}
