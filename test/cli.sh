#!/usr/bin/env bash
# The `redcoll` tool's contract: --json shape with "ok":true for every
# registered schedule at p = 1..33, usage errors exit 2, failures exit 1;
# issue 13 items 7-11 (parse-time validation, strict sizes, --version and
# per-command help, full result strings, select's ranking, schedule's flags,
# work estimates and progress). Bench, tune, profile and map: test/cli_bench.sh.
# Usage: test/cli.sh [BUILD/redcoll]
set -u
bin=${1:-build/redcoll}
suite=cli
. "$(dirname "$0")/cli_lib.sh"
keys='"coll":.*"algo":.*"p":.*"count":.*"dtype":.*"op":.*"bytes":.*"ok":true.*"error":null.*"time":.*"ranks":\[\{"rank":0,.*"msgs_sent":.*"msgs_recv":.*"bytes_sent":.*"bytes_recv":.*"elems_reduced":.*"rounds":.*"time":.*"scratch_bytes":'
"$bin" simulate --algo list | while read -r coll algos; do
    for algo in $algos; do
        [ "$algo" = "(none" ] && break
        algo=${algo%(commutative)}
        bad=0
        for p in $(seq 1 33); do
            out=$("$bin" simulate --coll "$coll" --algo "$algo" -p "$p" --count $((p + 5)) --root $((p / 2)) --json) || bad=1
            [[ $out =~ $keys ]] || { bad=1; echo "  $coll/$algo p=$p: ${out:0:300}" >&2; } # no grep: 1683 runs
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

# ---- issue 13, item 7: nonsense refused at parse time, with the reason ----
says 'bruck is not an algorithm of allreduce' "7: an algorithm the collective lacks" simulate --coll allreduce --algo bruck -p 4
exits 2 "7: an algorithm the collective lacks" simulate --coll allreduce --algo bruck -p 4
out=$("$bin" simulate --coll allreduce --algo bruck -p 4 2>/dev/null); check "7: nothing runs before the refusal" $([ -z "$out" ]; echo $?)
says 'band is not defined on --dtype double' "7: an op the dtype lacks" simulate --op band --dtype double
exits 2 "7: an op the dtype lacks" simulate --op band --dtype double
exits 2 "7: --op matmul with an explicit --dtype" simulate --op matmul --dtype double
exits 2 "7: reduce inner bruck" simulate --coll reduce --algo hierarchical --inner bruck
exits 2 "7: reduce outer scattered" simulate --coll reduce --algo hierarchical --outer scattered
exits 2 "7: allreduce inner recursive_doubling (not a reduce algorithm)" simulate --coll allreduce --algo hierarchical --inner recursive_doubling
exits 2 "7: inner hierarchical" simulate --coll bcast --algo hierarchical --inner hierarchical
exits 2 "7: --inner without --algo hierarchical" simulate --coll reduce --algo binomial --inner flat
says 'binary breaks rank order' "7: non-commutative op, order-breaking algorithm" simulate --coll reduce --algo binary --op matmul
exits 2 "7: non-commutative op, order-breaking algorithm" simulate --coll reduce --algo binary --op matmul
exits 2 "7: non-commutative op, order-breaking inner level" simulate --coll reduce --algo hierarchical --inner binary --op matmul
exits 2 "7: non-commutative op, recursive_halving reduce_scatter" simulate --coll reduce_scatter --algo recursive_halving --op matmul
exits 0 "7: valid levels still run" simulate --coll allreduce --algo hierarchical --inner binomial --outer ring -p 9
exits 0 "7: valid non-commutative levels still run" simulate --coll reduce --algo hierarchical --inner chain --op matmul -p 9
exits 2 "7: --groups above p" simulate --algo hierarchical --groups 9 -p 8
exits 2 "7: bench refuses before starting threads" bench -p 2 --coll allreduce --algo bruck
REDCOLL_ALLREDUCE_ALGORITHM=bruck "$bin" simulate -p 4 >/dev/null 2>&1; check "7: REDCOLL_ALLREDUCE_ALGORITHM=bruck refused (exit 2)" $(( $? == 2 ? 0 : 1 ))
REDCOLL_ALLREDUCE_ALGORITHM=ring "$bin" simulate -p 5 --json | grep -q '"algo":"ring"'; check "REDCOLL_ALLREDUCE_ALGORITHM=ring forces auto" $?
REDCOLL_ALLREDUCE_ALGORITHM=ring "$bin" simulate -p 5 --algo binary_tree --json | grep -q '"algo":"binary_tree"'; check "--algo wins over REDCOLL_<COLL>_ALGORITHM" $?
REDCOLL_REDUCE_ALGORITHM=flat "$bin" select -p 5 --coll reduce | grep -q 'REDCOLL_REDUCE_ALGORITHM forces flat'; check "select names the forcing variable" $?

# ---- item 8: sizes are digits with K/M/G, nothing else ----
for flag in --count --segment --threshold; do
    for v in " -1" "-1" "+5" " 5" "5 " "1x" "" "0x10" "18446744073709551616" "99999999999999999999G"; do
        exits 2 "8: $flag '$v'" simulate $flag "$v" -p 2 --no-data
    done
done
"$bin" simulate --count 4K -p 2 --json | grep -q '"count":4096,'; check "8: --count 4K is 4096" $?
"$bin" simulate --count 2k -p 2 --json | grep -q '"count":2048,'; check "8: --count 2k is 2048" $?
exits 0 "8: --segment 1M" simulate --coll reduce --algo pipeline --segment 1M -p 3
exits 0 "8: --threshold 2K" simulate --algo butterfly --threshold 2K -p 6
exits 2 "8: -p ' 4'" simulate -p " 4"
exits 2 "8: --root -1" simulate --root -1

# ---- item 9: --version, help per command, --algo list ----
ver=$(sed -n 's/^#define REDCOLL_VERSION_STRING "\(.*\)"/\1/p' redcoll.h)
"$bin" --version | grep -q "^redcoll $ver"; check "9: --version prints $ver" $?
"$bin" simulate --version | grep -q "^redcoll $ver"; check "9: simulate --version" $?
for c in simulate select schedule bench tune map profile; do
    exits 0 "9: $c --help" $c --help
    "$bin" $c --help | grep -q "^usage: redcoll $c"; check "9: $c --help is $c's" $?
done
for c in simulate select schedule bench tune map profile; do # a usage error points to the command's own help
    "$bin" $c --root x 2>&1 >/dev/null | grep -q "^(see redcoll $c --help)$"; check "9: $c's usage error points to redcoll $c --help" $?
done
"$bin" --coll x 2>&1 >/dev/null | grep -q "^(see redcoll --help)$"; check "9: a usage error without a command points to redcoll --help" $?
"$bin" bench --help | grep -q -- '-b BYTES'; check "9: bench --help documents -b" $?
"$bin" bench --help | grep -q -- '^  --fail-call'; check "9: bench --help leaves out simulate's flags" $(( $? == 1 ? 0 : 1 ))
"$bin" schedule --help | grep -q -- '^  --json'; check "9: schedule --help has no --json" $(( $? == 1 ? 0 : 1 ))
says 'select does not take --fail-call' "9: a flag of another command is refused" select --fail-call 1
exits 2 "9: a flag of another command is refused" select --fail-call 1
exits 0 "9: redcoll --algo list" --algo list
n=$("$bin" --algo list | wc -l); check "9: redcoll --algo list: every collective ($n lines)" $(( n == 11 ? 0 : 1 ))
out=$("$bin" simulate --algo list --coll reduce); check "9: simulate --algo list --coll reduce: reduce's line only" $([ "$(echo "$out" | wc -l)" -eq 1 ] && [ "${out%% *}" = reduce ]; echo $?)
"$bin" bench --algo list --coll alltoall | grep -q '^alltoall .*pairwise'; check "9: bench --algo list --coll alltoall" $?

# ---- item 10: full results, select's ranking, bytes, schedule's flags ----
out=$("$bin" simulate -p 8 --fail-rank 3 --fail-call 1)
echo "$out" | grep -q '^ *0 aborted by a failed peer '; check "10: full result strings (aborted by a failed peer)" $?
echo "$out" | grep -q '^ *3 transport failure '; check "10: full result strings (transport failure)" $?
out=$("$bin" select -p 24 --count 100000)
echo "$out" | grep -q 'time (us)'; check "10: select in microseconds" $?
echo "$out" | awk '/^algorithm/ { on = 1; next } on && NF == 0 { exit } on { print $2 }' | sort -c -g; check "10: select sorted by modeled time" $?
echo "$out" | grep -Eq "^factor_ring .*<- selected, the model's best"; check "10: select marks the model's best (the default selector's pick)" $?
out=$("$bin" select -p 24 --count 100000 --selector papers)
echo "$out" | grep -Eq "^factor_ring .*<- the model's best"; check "10: select marks the model's best" $?
echo "$out" | grep -Eq "^ring .*<- selected \\([0-9.]+x the model's best\\)"; check "10: select marks the selector's pick" $?
"$bin" select -p 24 --count 100000 --selector papers --json | grep -q '"selected":"ring","model_best":"factor_ring"'; check "10: select --json names both" $?
exits 1 "10: select exits 1 when no candidate ran" select -p 4 --limit 1
exits 2 "10: bytes beyond size_t refused (2^61 doubles)" simulate --count 2305843009213693952 --no-data
exits 2 "10: bytes beyond size_t refused (allgather, p blocks)" simulate --coll allgather -p 4 --count 1152921504606846976 --no-data
"$bin" simulate --count 2305843009213693951 -p 1 --no-data --force | grep -q '(18446744073709551608 bytes)'; check "10: the largest count shows its bytes" $?
exits 2 "10: schedule refuses --json" schedule --json
exits 2 "10: schedule refuses --dtype" schedule --dtype int32
exits 2 "10: schedule refuses an order-breaking algorithm for matmul" schedule --coll reduce --algo binary --op matmul
"$bin" schedule --coll allreduce --algo ring -p 5 --op matmul | grep -q 'in canonical order'; check "10: schedule checks canonical order for matmul" $?
"$bin" schedule --coll allreduce --algo ring -p 5 | grep -q 'op sum (commutative)'; check "10: schedule runs sum as commutative" $?
out=$("$bin" schedule -p 8 --fail-rank 3 --fail-call 1); st=$?
check "10: schedule honours --fail-* (exit 1)" $(( st == 1 ? 0 : 1 ))
echo "$out" | grep -q 'rank 3: transport failure'; check "10: schedule reports the injected fault" $?

# ---- item 11: work estimated before, progress during, absurd runs refused ----
start=$SECONDS
out=$(timeout 60 "$bin" simulate --coll reduce --algo pipeline --segment 1 --count 100000000 -p 64 2>&1); st=$?
check "11: pipeline, 1-byte segments, 1e8 doubles, p=64 refused (exit 2)" $(( st == 2 ? 0 : 1 ))
echo "$out" | grep -Eq 'about [0-9.e+]+ events .*--force'; check "11: the refusal gives the estimate and --force" $?
check "11: the estimate takes seconds, not hours ($((SECONDS - start)) s)" $(( SECONDS - start < 30 ? 0 : 1 ))
out=$("$bin" simulate -p 4096 --algo ring --count 1048576 --limit 1e7 2>&1); st=$?
echo "$out" | grep -Eq 'about 3\.[0-9]+e\+07 events'; check "11: ring p=4096 estimated at ~3.4e7 events" $?
says 'above the limit of 10 events' "11: --limit refuses" simulate -p 8 --limit 10
exits 0 "11: --force insists" simulate -p 8 --limit 10 --force
"$bin" simulate -p 16 --algo ring --progress 0 2>&1 >/dev/null | grep -q 'transport calls'; check "11: progress on stderr" $?
"$bin" simulate -p 16 --algo ring 2>&1 >/dev/null | grep -q 'transport calls'; check "11: no progress for a short run" $(( $? == 1 ? 0 : 1 ))
exits 1 "11: select skips what is over the limit, exits 1 when nothing is left" select -p 3000000
# issue 13 item 1 in the tool: p up to INT_MAX answers at once, beyond REDCOLL_MAX_RANKS nothing is simulated
start=$SECONDS
out=$(timeout 60 "$bin" select -p 2147483647 --count 100 2>&1); st=$?
echo "$out" | grep -q 'the selector picks [a-z_]*$'; check "1: select -p INT_MAX says the selector's pick" $?
echo "$out" | grep -q 'not served: p above REDCOLL_MAX_RANKS'; check "1: select -p INT_MAX: candidates not served" $?
check "1: select -p INT_MAX exits 1 (no candidate ran)" $(( st == 1 ? 0 : 1 ))
says 'serve up to REDCOLL_MAX_RANKS' "1: simulate -p 2^30+1 refused with the reason" simulate -p 1073741825 --force
exits 2 "1: simulate -p 2^30+1 --force refused" simulate -p 1073741825 --force --no-data --count 1
exits 2 "1: schedule -p INT_MAX refused" schedule -p 2147483647
exits 2 "1: map --p-max INT_MAX from the simulator refused" map --from simulator --p-max 2147483647 --force
"$bin" map --p-max 2147483647 -b 8 -e 64M | grep -q 'data-p-max="2147483647"'; check "1: map --p-max INT_MAX from the cost functions draws p = INT_MAX" $?
check "1: all of it in seconds ($((SECONDS - start)) s)" $(( SECONDS - start < 30 ? 0 : 1 ))

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
