#!/usr/bin/env bash
# The documentation holds: every C snippet of README.md compiles (a complete
# program is built, as C11 and the first also as C++, and run, its output
# compared with the "# ..." lines of the sh block after it; a fragment must
# appear line for line in a file of examples/, which `make test` builds and
# runs); every public function of redcoll.h has a doc block with Parameters,
# Return Value and Thread Safety; and code and docs hold no lab notes.
# Usage: test/docs.sh BUILD_DIR CC CXX MPICC
set -u
build=${1:-build} cc=${2:-cc} cxx=${3:-c++} mpicc=${4:-mpicc.mpich}
work="$build/docs"
mkdir -p "$work"
pass=0 fail=0
check() { # check NAME STATUS [LOG]
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); echo "ok    docs/$1"
    else fail=$((fail + 1)); echo "FAIL  docs/$1"; [ -n "${3:-}" ] && [ -f "$3" ] && tail -n 20 "$3"; fi
}

# README's ```c blocks, one file each (block_N.c), and after each complete
# program the "# " lines of the next ```sh block (block_N.out).
rm -f "$work"/block_*
awk -v dir="$work" '
    /^```c$/ { n++; f = dir "/block_" n ".c"; inc = 1; next }
    /^```sh$/ && want { insh = 1; next }
    /^```/ { if (inc) { inc = 0; if (main) want = n; main = 0 } else if (insh) { insh = 0; want = 0 } next }
    inc { print > f; if ($0 ~ /int main\(/) main = 1; next }
    insh && /^# / { print substr($0, 3) > (dir "/block_" want ".out") }
' README.md
nblocks=$(ls "$work"/block_*.c 2>/dev/null | wc -l)
check "README has C snippets ($nblocks)" $([ "$nblocks" -gt 0 ]; echo $?)

# The lines of a snippet, without leading blanks, in order and adjacent, in
# one of the files given.
in_some_file() { # in_some_file SNIPPET FILE...
    local snip=$1 f; shift
    for f in "$@"; do
        awk 'NR == FNR { if (NF) want[++n] = $0; next }
             { sub(/^[ \t]+/, ""); got[++m] = $0 }
             END { for (s = 1; s + n - 1 <= m; s++) { for (k = 1; k <= n; k++) { w = want[k]; sub(/^[ \t]+/, "", w); if (got[s + k - 1] != w) break }
                   if (k > n) exit 0 } exit 1 }' "$snip" "$f" && return 0
    done
    return 1
}

first=1
for src in $(ls "$work"/block_*.c | sort -t_ -k2 -n); do
    name=$(basename "$src" .c)
    if grep -q 'int main(' "$src"; then
        if grep -q '#include <mpi.h>' "$src"; then
            if command -v "$mpicc" >/dev/null 2>&1; then
                "$mpicc" -std=c11 -Wall -Wextra -Werror -I. "$src" -o "$work/$name" > "$work/$name.log" 2>&1
                check "README $name (an MPI program) compiles" $? "$work/$name.log"
            else echo "docs/README $name skipped: no $mpicc"; fi
            continue
        fi
        "$cc" -std=c11 -Wall -Wextra -pedantic -Werror -I. "$src" -o "$work/$name" -lpthread -lm > "$work/$name.log" 2>&1
        check "README $name compiles as C11" $? "$work/$name.log"
        if [ "$first" = 1 ]; then
            "$cxx" -std=c++11 -Wall -Wextra -pedantic -Werror -I. -x c++ "$src" -o "$work/${name}_cpp" -lpthread -lm \
                > "$work/${name}_cpp.log" 2>&1
            check "README's first program compiles as C++" $? "$work/${name}_cpp.log"
            first=0
        fi
        if [ -x "$work/$name" ]; then
            timeout 60 "$work/$name" > "$work/$name.got" 2>&1
            check "README $name runs" $? "$work/$name.got"
            if [ -f "$work/$name.out" ]; then
                diff "$work/$name.out" "$work/$name.got" > "$work/$name.diff"
                check "README $name prints what the README says" $? "$work/$name.diff"
            fi
        fi
    else
        in_some_file "$src" examples/*.c
        check "README $name (a fragment) is in examples/" $? "$src"
    fi
done

# Every public function of redcoll.h opens with a doc block that has
# Parameters, Return Value and Thread Safety, right above it.
awk '
    /^#ifdef REDCOLL_IMPLEMENTATION/ { exit }
    /^\/\*/ { blk = ""; inblk = 1 }
    inblk { blk = blk $0 "\n"; if ($0 ~ /\*\//) { inblk = 0; last = NR } next }
    /^REDCOLL_API / {
        name = $0; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
        if (last != NR - 1 || blk !~ /\nParameters\n/ || blk !~ /\nReturn Value\n/ || blk !~ /\nThread Safety\n/) {
            print "no doc block (Parameters, Return Value, Thread Safety) right above " name; bad = 1
        }
        n++
    }
    END { if (!n) { print "no REDCOLL_API declarations found"; bad = 1 } exit bad }
' redcoll.h > "$work/docblocks.log"
check "every public function of redcoll.h has a doc block" $? "$work/docblocks.log"

# No lab notes: issue numbers, commit hashes, load averages, "this session".
grep -nE "issue [0-9]|[0-9a-f]{7} |load (average|[0-9])|this session" \
    redcoll.h transports/*.h shim/*.c redcoll/*.c bench/*.c bench/*.h examples/*.c README.md CHANGELOG.md \
    > "$work/notes.log"
check "no lab notes in code, README or CHANGELOG" $([ ! -s "$work/notes.log" ]; echo $?) "$work/notes.log"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
