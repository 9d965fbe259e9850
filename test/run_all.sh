#!/usr/bin/env bash
# Runs every test suite, then prints one combined "N passed, N failed" line.
# Each suite is a command whose output ends with its own "N passed, N failed".
# After each suite a line "== NAME: ... in W s (CPU U user + S sys), load L"
# says where the time went (wall, the suite's CPU, the 1-minute load average).
# A suite named NAME& starts in the background and runs beside the suites
# that follow (a second lane, for a 2-core machine); its output is printed,
# whole, and counted at the next "wait" argument or at the end. Put there
# suites that use about one core; the MPI suites, whose ranks busy-poll,
# run alone after a wait.
# Usage: test/run_all.sh NAME[&]=COMMAND ... [wait] NAME=COMMAND ...
set -u
total_pass=0 total_fail=0 broken=0
TIMEFORMAT='%R %U %S'
lane=() # background suites: "name|pid|output|status file|time file"

# count NAME OUTPUT STATUS TIMEFILE: adds a finished suite's result line to the totals.
count() {
    local name=$1 out=$2 status=$3 wall user sys line p f
    read -r wall user sys < "$4"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1)
    echo "== $name: ${line:-no result line} in $wall s (CPU $user user + $sys sys), load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null)"
    if [ -z "$line" ]; then
        echo "== $name: no result line (exit $status): counted as one failure"
        broken=$((broken + 1)); return
    fi
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    total_pass=$((total_pass + p)); total_fail=$((total_fail + f))
    if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "== $name: exit $status with no failed test: counted as one failure"
        broken=$((broken + 1))
    fi
}

# collect: waits for the background suites, prints their output and counts them.
collect() {
    local entry name pid out st tf
    for entry in "${lane[@]+"${lane[@]}"}"; do
        IFS='|' read -r name pid out st tf <<< "$entry"
        wait "$pid"
        echo "== $name (ran beside the suites above): output"
        cat "$out"
        count "$name" "$out" "$(cat "$st")" "$tf"
        rm -f "$out" "$st" "$tf"
    done
    lane=()
}

for spec in "$@"; do
    if [ "$spec" = wait ]; then collect; continue; fi
    name=${spec%%=*} cmd=${spec#*=}
    out=$(mktemp) tfile=$(mktemp)
    if [ "${name%&}" != "$name" ]; then
        name=${name%&} st=$(mktemp)
        echo "== $name: $cmd (in the background)"
        ( { time { bash -c "$cmd" > "$out" 2>&1; echo $? > "$st"; }; } 2> "$tfile" ) &
        lane+=("$name|$!|$out|$st|$tfile")
        continue
    fi
    echo "== $name: $cmd"
    st=$(mktemp) # a subshell, so a background suite reaped meanwhile is not timed with this one
    ( { time { bash -c "$cmd" 2>&1 | tee "$out"; echo "${PIPESTATUS[0]}" > "$st"; }; } 2> "$tfile" )
    count "$name" "$out" "$(cat "$st")" "$tfile"
    rm -f "$out" "$st" "$tfile"
done
collect
total_fail=$((total_fail + broken))
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
