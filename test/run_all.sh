#!/usr/bin/env bash
# Runs every test suite, then prints one combined "N passed, N failed" line.
# Each suite is a command whose output ends with its own "N passed, N failed".
# After each suite a line "== NAME: ... in W s (CPU U user + S sys), load L"
# says where the time went (wall, the suite's CPU, the 1-minute load average).
# Usage: test/run_all.sh NAME=COMMAND ...
set -u
total_pass=0 total_fail=0 broken=0
TIMEFORMAT='%R %U %S'
for spec in "$@"; do
    name=${spec%%=*} cmd=${spec#*=}
    echo "== $name: $cmd"
    out=$(mktemp) tfile=$(mktemp)
    { time { bash -c "$cmd" 2>&1 | tee "$out"; status=${PIPESTATUS[0]}; }; } 2> "$tfile"
    read -r wall user sys < "$tfile"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
    rm -f "$out" "$tfile"
    echo "== $name: ${line:-no result line} in $wall s (CPU $user user + $sys sys), load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null)"
    if [ -z "$line" ]; then
        echo "== $name: no result line (exit $status): counted as one failure"
        broken=$((broken + 1)); continue
    fi
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "== $name: exit $status with no failed test: counted as one failure"
        broken=$((broken + 1))
    fi
done
total_fail=$((total_fail + broken))
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
