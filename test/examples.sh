#!/usr/bin/env bash
# The examples run and check their own results: the threads example, the
# processes example (shared memory between forked and named processes), the
# user-written socketpair transport (the same schedules over forked
# processes), a short demo, and the MPI example when it was built.
# Usage: test/examples.sh BUILD_DIR MPIEXEC
set -u
build=${1:-build} mpiexec=${2:-mpiexec.mpich}
pass=0 fail=0
run() { # run NAME COMMAND...
    local name=$1; shift
    if out=$("$@" 2>&1); then pass=$((pass + 1)); echo "ok    examples/$name"
    else fail=$((fail + 1)); echo "FAIL  examples/$name"; echo "$out" | tail -n 20; fi
}
run "allreduce_threads 5 threads" "$build/allreduce_threads" 5
run "allreduce_processes 5 processes" "$build/allreduce_processes" 5
run "custom_transport 1 process" "$build/custom_transport" 1
run "custom_transport 6 processes" "$build/custom_transport" 6
run "tour (the README's fragments)" "$build/tour"
run "demo (3 threads, to 64 KiB)" "$build/demo" -p 3 --max-bytes 65536 --seconds 0.01
if [ -x "$build/allreduce_mpi" ] && command -v "$mpiexec" >/dev/null 2>&1; then
    run "allreduce_mpi 3 processes" timeout 300 "$mpiexec" -n 3 "$build/allreduce_mpi"
else
    echo "examples/allreduce_mpi skipped: not built (no MPI compiler)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
