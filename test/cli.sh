#!/usr/bin/env bash
# The `redcoll` tool's contract: --json shape with "ok":true for every
# registered schedule at p = 1..33, usage errors exit 2, failures exit 1.
set -u
bin=${1:-build/redcoll}
pass=0 fail=0
check() { # check NAME CONDITION-EXIT-STATUS
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL  cli/$1"; fi
}
keys='"coll":.*"algo":.*"p":.*"count":.*"dtype":.*"op":.*"bytes":.*"ok":true.*"error":null.*"time":.*"ranks":\[\{"rank":0,.*"msgs_sent":.*"msgs_recv":.*"bytes_sent":.*"bytes_recv":.*"elems_reduced":.*"rounds":.*"time":.*"scratch_bytes":'
"$bin" simulate --algo list | while read -r coll algos; do
    for algo in $algos; do
        [ "$algo" = "(none" ] && break
        algo=${algo%(commutative)}
        bad=0
        for p in $(seq 1 33); do
            out=$("$bin" simulate --coll "$coll" --algo "$algo" -p "$p" --count $((p + 5)) --root $((p / 2)) --json) || bad=1
            echo "$out" | grep -Eq "$keys" || { bad=1; echo "  $coll/$algo p=$p: ${out:0:300}" >&2; }
        done
        echo "$coll $algo $bad"
    done
done > /tmp/redcoll_cli_$$.txt
while read -r coll algo bad; do
    check "json ok p=1..33 $coll/$algo" "$bad"
done < /tmp/redcoll_cli_$$.txt
rm -f /tmp/redcoll_cli_$$.txt
"$bin" simulate --no-such-flag >/dev/null 2>&1; check "unknown flag exits 2" $(( $? == 2 ? 0 : 1 ))
"$bin" simulate -p 0 >/dev/null 2>&1; check "p 0 exits 2" $(( $? == 2 ? 0 : 1 ))
"$bin" simulate --count >/dev/null 2>&1; check "missing value exits 2" $(( $? == 2 ? 0 : 1 ))
"$bin" simulate --help | grep -q -- "--fail-call"; check "help documents every flag" $?
"$bin" simulate -p 8 --fail-rank 3 --fail-call 1 --json | grep -q '"ok":false'; check "injected fault reported" $?
"$bin" simulate -p 8 --fail-rank 3 --fail-call 1 >/dev/null; check "failure exits 1" $(( $? == 1 ? 0 : 1 ))
"$bin" simulate -p 1024 --count 1048576 --algo recursive_doubling --json | grep -q '"ok":true'; check "p=1024, 1 M doubles" $?
for dt in double float; do "$bin" simulate --op sum_exact --dtype $dt -p 13 --count 1000 --json | grep -q '"ok":true'; check "sum_exact $dt verifies on every rank" $?; done
# `redcoll schedule` draws Fig. 2 / Fig. 3 and every allreduce / reduce schedule
"$bin" schedule --coll allreduce --algo halving_doubling -p 13 --count 8 | grep -q '^P1\* .*A-H:0-12'; check "schedule Fig. 2: removed rank P1 marked, gets A-H:0-12" $?
"$bin" schedule --coll allreduce --algo binary_blocks -p 13 | grep -q '^P8 .*A-B:8-12'; check "schedule Fig. 3: P8 reduces A-B over 8-12" $?
"$bin" schedule --coll reduce --algo halving_doubling -p 13 --root 3 | grep -q '^P3 .*A-H:0-12 *$'; check "schedule reduce: removed root swaps roles" $?
bad=0
for coll in allreduce reduce; do
    for algo in $("$bin" simulate --algo list | awk -v c=$coll '$1 == c { $1 = ""; print }'); do
        algo=${algo%(commutative)}
        for p in 1 2 5 13 24; do
            "$bin" schedule --coll $coll --algo $algo -p $p --root $((p - 1)) | grep -q 'result complete' || { bad=1; echo "  schedule $coll/$algo p=$p" >&2; }
        done
    done
done
check "schedule draws every allreduce/reduce schedule" $bad
"$bin" schedule --coll bcast >/dev/null 2>&1; check "schedule of bcast exits 2" $(( $? == 2 ? 0 : 1 ))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
