#!/usr/bin/env bash
# `make install` to a temporary prefix, then, outside the source tree and with
# only pkg-config's flags: the README's first example and
# examples/allreduce_threads.c (with redcoll.pc), the installed `redcoll` tool,
# and where MPI is installed examples/allreduce_mpi.c built with plain cc from
# redcoll-mpi.pc and the README's MPI drop-in example under LD_PRELOAD of the
# installed libredcoll_pmpi.so, and the installed redcoll-mpi's bench on MPI.
# Then `make uninstall` must leave no file and none of the directories install
# created; a second prefix whose bin/ and include/ existed before (bin/ with
# another program's file) keeps both.
# Ends with "N passed, N failed".
# Usage: test/install.sh MAKE MPIEXEC   (from the top of the tree; .ci/run: make test-install)
set -u
make=${1:-make} mpiexec=${2:-mpiexec.mpich}
cc=${CC:-cc}
src=$(pwd)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
prefix=$root/prefix work=$root/work
mkdir -p "$work"
pass=0 fail=0
check() { # check NAME STATUS [LOG]
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "ok    install/$1"
    else fail=$((fail + 1)); echo "FAIL  install/$1"; [ -n "${3:-}" ] && tail -n 20 "$3"; fi
}
# The first ```c block after the heading $1 of the README.
readme_block() { awk -v h="$1" '$0 == h {f = 1} f && /^```c/ {g = 1; next} g && /^```/ {exit} g {print}' "$src/README.md"; }

$make --no-print-directory install PREFIX="$prefix" > "$root/install.log" 2>&1
check "make install PREFIX=<tmp>" $? "$root/install.log"
missing=""
for f in include/redcoll/redcoll.h include/redcoll/transports/redcoll_mock.h \
         include/redcoll/transports/redcoll_shm.h include/redcoll/transports/redcoll_mpi.h \
         bin/redcoll lib/pkgconfig/redcoll.pc; do
    [ -f "$prefix/$f" ] || missing="$missing $f"
done
check "headers, tool and redcoll.pc installed" $([ -z "$missing" ]; echo $?)
[ -z "$missing" ] || echo "    missing:$missing"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
cd "$work" || exit 1
flags=$(pkg-config --cflags --libs redcoll)
check "pkg-config --cflags --libs redcoll: $flags" $?

readme_block "## A first program" > use.c
$cc -std=c11 -Wall -Werror use.c $flags -o use > use.log 2>&1 && ./use >> use.log 2>&1 &&
    grep -q "^ok$" use.log
check "README's example builds against the installed copy and runs" $? use.log

cp "$src/examples/allreduce_threads.c" .
$cc -std=c11 -Wall -Werror allreduce_threads.c $flags -o allreduce_threads > threads.log 2>&1 &&
    ./allreduce_threads 3 >> threads.log 2>&1
check "examples/allreduce_threads.c builds outside the tree and runs" $? threads.log

"$prefix/bin/redcoll" simulate -p 5 --count 100 > tool.log 2>&1
check "installed redcoll tool runs" $? tool.log

if [ -f "$prefix/lib/libredcoll_pmpi.so" ] && command -v "$mpiexec" >/dev/null 2>&1; then
    mflags=$(pkg-config --cflags --libs redcoll-mpi)
    check "pkg-config --cflags --libs redcoll-mpi: $mflags" $?
    cp "$src/examples/allreduce_mpi.c" .
    $cc -std=c11 -Wall -Werror allreduce_mpi.c $mflags -o allreduce_mpi > mpi.log 2>&1 &&
        timeout 300 "$mpiexec" -n 2 ./allreduce_mpi >> mpi.log 2>&1
    check "examples/allreduce_mpi.c builds with cc and redcoll-mpi.pc, runs" $? mpi.log
    pmpi=$(pkg-config --variable=pmpi redcoll-mpi)
    readme_block "## The MPI drop-in" > app.c
    mpicc=$(command -v mpicc.mpich || command -v mpicc)
    "$mpicc" -std=c11 -Wall -Werror app.c -o app > app.log 2>&1 &&
        REDCOLL_VERBOSE=1 REDCOLL_ALLREDUCE_ALGORITHM=ring timeout 300 "$mpiexec" -n 3 \
            -genv LD_PRELOAD "$pmpi" ./app >> app.log 2>&1 &&
        grep -q "allreduce on MPI_COMM_WORLD (p=3), .*: ring (forced by the environment)" app.log &&
        grep -q "sum = 6" app.log
    check "README's drop-in example runs on the installed libredcoll_pmpi.so" $? app.log
    [ -x "$prefix/bin/redcoll-mpi" ]; check "redcoll-mpi (build/redcoll_mpi) installed" $?
    timeout 300 "$mpiexec" -n 2 "$prefix/bin/redcoll-mpi" bench -b 8 -e 8 --reps 1 --iters 2 --warmup 0 --csv \
        > bench.csv 2> bench.err &&
        awk -F, 'NR > 1 { n++; if ($4 != "mpi" || $16 != "ok") bad = 1 } $2 == "native" { nat = 1 } END { exit bad || !n || !nat }' bench.csv
    check "installed redcoll-mpi benches on MPI under mpiexec (native row too)" $? bench.csv
else
    echo "install: MPI part skipped (no MPI compiler or $mpiexec)"
fi

cd "$src" || exit 1
$make --no-print-directory uninstall PREFIX="$prefix" > "$root/uninstall.log" 2>&1
left=$(find "$prefix" -type f 2>/dev/null)
check "make uninstall removes every installed file" $([ -z "$left" ]; echo $?) "$root/uninstall.log"
[ -z "$left" ] || echo "    left: $left"
left=$(find "$prefix" 2>/dev/null)
check "make uninstall removes the directories install created" $([ -z "$left" ]; echo $?) "$root/uninstall.log"
[ -z "$left" ] || echo "    left: $left"
# a prefix in use: bin/ holds another program, include/ is there and empty
other=$root/other
mkdir -p "$other/bin" "$other/include" && echo "#!/bin/sh" > "$other/bin/someone-else"
{ $make --no-print-directory install PREFIX="$other" && $make --no-print-directory uninstall PREFIX="$other"; } \
    > "$root/other.log" 2>&1
check "install + uninstall into a prefix in use" $? "$root/other.log"
left=$(cd "$other" && find . | sort | tr '\n' ' ')
check "uninstall keeps the directories that were there and others' files ($left)" \
    $([ "$left" = ". ./bin ./bin/someone-else ./include " ]; echo $?) "$root/other.log"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
