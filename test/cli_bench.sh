#!/usr/bin/env bash
# `redcoll bench`, `tune`, `profile` and `map`:
# bench's flags, its CSV columns and its checking (a corrupted result must be
# counted), auto's pick and the regret column, every collective in and out of
# place, processes sharing memory (--transport pshm), the MPI binary's native
# rows; the profile's round trip and refusals; map's cells against select on a
# tiny grid, from the cost functions, the simulator, the selector and a bench
# CSV; the default grid's p axis and legend. Timings are never checked (the
# machine is shared).
# Usage: test/cli_bench.sh [BUILD/redcoll [BUILD/redcoll_mpi [MPIEXEC]]]
set -u
bin=${1:-build/redcoll} mpibin=${2:-} mpiexec=${3:-mpiexec.mpich}
suite=cli-bench
. "$(dirname "$0")/cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
quick="--reps 1 --iters 2 --warmup 0"   # correctness, not speed

# ---- bench: flags ----
exits 2 "bench -b 1x" bench -b 1x
exits 2 "bench -b ' 8'" bench -b " 8"
exits 2 "bench -b above -e" bench -b 64 -e 8
exits 2 "bench -f 1" bench -f 1
exits 2 "bench --transport foo" bench --transport foo
exits 2 "bench --coll bogus" bench --coll bogus
exits 2 "bench --csv --json" bench --csv --json
exits 2 "bench --op band --dtype float" bench --op band --dtype float
exits 2 "bench --iters -1" bench --iters -1
if ! "$bin" --version | grep -q mpi; then
    exits 2 "bench --transport mpi without MPI says where to go" bench --transport mpi
fi

# ---- bench: -e is the last size, even where -f steps past it ----
sizes=$("$bin" bench -p 2 -b 8 -e 64K --csv $quick 2>/dev/null | awk -F, 'NR > 1 { printf "%s ", $6 }')
check "bench -b 8 -e 64K (-f 4): 8 .. 32768 by 4, then 65536 ($sizes)" $([ "$sizes" = "8 32 128 512 2048 8192 32768 65536 " ]; echo $?)
sizes=$(timeout 60 "$bin" bench -p 2 -b 0 -e 8 --csv $quick 2>/dev/null | awk -F, 'NR > 1 { printf "%s ", $6 }')
check "bench -b 0 -e 8 ends: one element, 8 B ($sizes)" $([ "$sizes" = "8 " ]; echo $?)

# ---- bench and tune: sizes that do not fit in memory are refused at once, progress while long ----
t0=$(date +%s)
timeout 60 "$bin" bench -p 2 -b 1K -e 100000G --csv $quick > /dev/null 2> "$tmp/big.err"; st=$?
t1=$(date +%s)
check "bench -e 100000G: refused (exit 2) before anything runs, in $((t1 - t0)) s" $(( st == 2 && t1 - t0 < 30 ? 0 : 1 ))
grep -Eq '^redcoll bench: allreduce of [0-9.]+ TiB needs about [0-9.]+ [TPG]iB of memory \(2 ranks x 2 vectors of [0-9.]+ TiB, and 4 more for scratch and the check\), and this machine has [0-9.]+ [GMT]iB available: lower -e \(or -p\)$' "$tmp/big.err"
check "bench -e 100000G: says how much it needs and how much is available" $? 
"$bin" bench -p 2 -b 64 -e 64 --progress 0 $quick > /dev/null 2> "$tmp/prog.err"
grep -q '^redcoll: bench: allreduce 64 B.*, [0-9]* s so far$' "$tmp/prog.err"
check "bench --progress 0: what the size running does, on stderr" $? "$tmp/prog.err"
"$bin" tune --reps 1 --progress 0 > /dev/null 2> "$tmp/tprog.err"
grep -q '^redcoll: tune.*, [0-9]* s so far$' "$tmp/tprog.err"
check "tune --progress 0: progress on stderr" $? "$tmp/tprog.err"

# ---- bench: the CSV, every allreduce algorithm and auto ----
cols='coll,algo,selected,transport,p,bytes,count,dtype,op,in_place,time_us,algbw_GBps,busbw_GBps,wrong,iters,result,regret'
"$bin" bench -p 2 --coll allreduce --algo all -b 8 -e 4K -f 8 --csv $quick > "$tmp/b.csv" 2> "$tmp/b.err"
check "bench --algo all --csv exits 0" $?
head -n 1 "$tmp/b.csv" | grep -qx "$cols"; check "bench CSV header: the named columns" $?
awk -F, 'NR > 1 && NF != 17 { bad = 1 } END { exit bad }' "$tmp/b.csv"; check "bench CSV: 17 fields per row" $?
awk -F, 'NR > 1 && ($14 != 0 || $16 != "ok") { bad = 1 } END { exit bad }' "$tmp/b.csv"; check "bench CSV: no wrong element, every row ok" $?
nalg=$("$bin" --algo list --coll allreduce | wc -w)   # the name, then one word per algorithm
for bytes in 8 64 512 4096; do
    n=$(awk -F, -v b=$bytes 'NR > 1 && $6 == b' "$tmp/b.csv" | wc -l)
    check "bench $bytes B: auto + every algorithm ($n rows)" $(( n == nalg ? 0 : 1 ))
    want=$("$bin" select -p 2 --count $((bytes / 8)) | sed -n 's/.*the selector picks \([a-z_]*\)$/\1/p')
    got=$(awk -F, -v b=$bytes 'NR > 1 && $6 == b && $2 == "auto" { print $3 }' "$tmp/b.csv")
    check "bench $bytes B: selected = select's pick ($got, $want)" $([ -n "$want" ] && [ "$got" = "$want" ]; echo $?)
    awk -F, -v b=$bytes 'NR > 1 && $6 == b && $2 == "auto" { exit !($17 > 0) }' "$tmp/b.csv"
    check "bench $bytes B: the auto row carries the regret" $?
done
grep -q 'redcoll bench: allreduce 4 KiB done (4 of 4)' "$tmp/b.err"; check "bench: a progress line per size on stderr" $?
grep -q 'regret .* over 4 sizes: median' "$tmp/b.err"; check "bench: regret summary" $?
grep -q "^# noise: a row's slowest batch took [0-9.]*x its fastest" "$tmp/b.err"; check "bench: the noise of the run" $(( $? == 1 ? 0 : 1 ))  # --reps 1: no spread
"$bin" bench -p 2 --algo all -b 64 -e 64 --reps 3 --iters 1 --warmup 0 > "$tmp/t.txt" 2>/dev/null
grep -q "^# noise: a row's slowest batch took [0-9.]*x its fastest" "$tmp/t.txt"; check "bench: the noise of the run (3 reps)" $?
grep -Eq '^#   allreduce 64 B: auto ran [a-z_]+ in [0-9.]+ us; (the fastest, [a-z_]+, [0-9.]+ us \(auto [0-9.]+x\)|that is the fastest algorithm)' "$tmp/t.txt"
check "bench: the summary says auto's pick against the fastest" $?

# ---- bench: the check counts wrong elements ----
REDCOLL_BENCH_CORRUPT=1 "$bin" bench -p 2 -b 64 -e 64 --csv $quick > "$tmp/c.csv" 2>/dev/null; st=$?
check "bench: a corrupted result exits 1" $(( st == 1 ? 0 : 1 ))
awk -F, 'NR == 2 { exit !($14 == 1 && $16 == "wrong") }' "$tmp/c.csv"; check "bench: a corrupted result counts 1 wrong element" $?

# ---- bench: every collective, in and out of place, a non-commutative op ----
"$bin" bench -p 3 --coll all -b 64 -e 1K -f 16 --in-place --out-of-place --csv $quick > "$tmp/all.csv" 2>/dev/null
check "bench --coll all, both places, p=3 exits 0" $?
n=$(awk -F, 'NR > 1 { print $1 }' "$tmp/all.csv" | sort -u | wc -l)
check "bench --coll all: every collective ($n)" $(( n == 11 ? 0 : 1 ))
awk -F, 'NR > 1 { s[$10]++ } END { exit !(s[0] > 0 && s[1] > 0) }' "$tmp/all.csv"; check "bench: in-place and out-of-place rows" $?
awk -F, 'NR > 1 && $1 == "allgather" && $6 % (3 * 8) { bad = 1 } END { exit bad }' "$tmp/all.csv"
check "bench: allgather bytes are whole blocks of p" $?
# busbw = algbw x nccl-tests' factor (allreduce 2(p-1)/p, bcast and reduce 1, barrier 0,
# the rest (p-1)/p) and algbw = bytes / time
awk -F, 'NR > 1 && $11 > 0 {
    f = $1 == "allreduce" ? 4 / 3 : ($1 == "bcast" || $1 == "reduce") ? 1 : $1 == "barrier" ? 0 : 2 / 3
    if ($13 - f * $12 > 1e-5 * $12 + 1e-12 || f * $12 - $13 > 1e-5 * $12 + 1e-12) { bad = 1; print "  busbw " $0 > "/dev/stderr" }
    if ($1 != "barrier" && ($12 * $11 * 1e3 > $6 * 1.01 || $12 * $11 * 1e3 < $6 * 0.99)) { bad = 1; print "  algbw " $0 > "/dev/stderr" }
} END { exit bad }' "$tmp/all.csv"
check "bench: busbw with nccl-tests' factor per collective, algbw = bytes / time (p=3)" $?
"$bin" bench -p 3 --coll reduce --op matmul --algo all -b 64 -e 64 --csv $quick > "$tmp/m.csv" 2>/dev/null
check "bench reduce matmul --algo all exits 0" $?
grep -q ',binary,' "$tmp/m.csv"; check "bench: no order-breaking algorithm for matmul" $(( $? == 1 ? 0 : 1 ))
"$bin" bench -p 2 -b 8 -e 8 --json $quick 2>/dev/null | grep -q '"rows":\[' ; check "bench --json" $?
"$bin" bench -p 2 --algo all -b 8 -e 8 --json --reps 3 --iters 1 --warmup 0 2>/dev/null |
    grep -Eq '^\],"regret":\{"sizes":1,"median":[0-9.]+,"worst":[0-9.]+\},"noise":[0-9.]+,"failures":0\}$'
check "bench --json: regret and noise" $?
REDCOLL_ALLREDUCE_ALGORITHM=ring "$bin" bench -p 2 -b 8 -e 8 --csv $quick 2>/dev/null | grep -q '^allreduce,auto,ring,'
check "bench: REDCOLL_ALLREDUCE_ALGORITHM=ring is what auto runs" $?

# ---- bench on processes sharing memory: forked ranks, checked on every rank ----
"$bin" bench --transport pshm -p 3 --coll all --algo all -b 256 -e 256 --in-place --out-of-place --csv $quick \
    > "$tmp/ps.csv" 2>/dev/null
check "pshm bench --coll all --algo all, both places, 3 processes exits 0" $?
n=$(awk -F, 'NR > 1 { print $1 }' "$tmp/ps.csv" | sort -u | wc -l)
check "pshm bench: every collective ($n)" $(( n == 11 ? 0 : 1 ))
awk -F, 'NR > 1 && ($14 != 0 || $16 != "ok" || $4 != "pshm" || $5 != 3) { bad = 1 } END { exit bad || NR < 12 }' "$tmp/ps.csv"
check "pshm bench: every row right, transport pshm, p=3" $?
REDCOLL_BENCH_CORRUPT=2 "$bin" bench --transport pshm -p 3 -b 64 -e 64 --csv $quick > "$tmp/psc.csv" 2>/dev/null; st=$?
check "pshm bench: a result corrupted on rank 2 exits 1" $(( st == 1 ? 0 : 1 ))
awk -F, 'NR == 2 { exit !($14 == 1 && $16 == "wrong") }' "$tmp/psc.csv"; check "pshm bench: rank 2's wrong element counted" $?
exits 2 "tune --transport pshm is refused" tune --transport pshm

# ---- bench on MPI: native rows, interleaved, checked ----
if [ -n "$mpibin" ] && [ -x "$mpibin" ] && command -v "$mpiexec" >/dev/null 2>&1; then
    timeout 600 "$mpiexec" -n 2 "$mpibin" bench --transport mpi --coll allreduce -b 8 -e 64K -f 8 --csv $quick \
        > "$tmp/mpi.csv" 2>/dev/null
    check "mpi bench exits 0" $?
    n=$(grep -c '^allreduce,native,' "$tmp/mpi.csv"); check "mpi bench: native rows, one per size, 64 KiB last ($n)" $(( n == 6 ? 0 : 1 ))
    awk -F, 'NR > 1 && ($14 != 0 || $16 != "ok" || $4 != "mpi" || $5 != 2) { bad = 1 } END { exit bad }' "$tmp/mpi.csv"
    check "mpi bench: every row right, transport mpi, p=2" $?
    timeout 600 "$mpiexec" -n 3 "$mpibin" bench --transport mpi --coll all -b 256 -e 256 --in-place --out-of-place --csv $quick \
        > "$tmp/mpi3.csv" 2>/dev/null
    check "mpi bench --coll all, both places, 3 processes exits 0" $?
    awk -F, 'NR > 1 && $2 == "native" { s[$1]++ } END { exit length(s) != 11 }' "$tmp/mpi3.csv"
    check "mpi bench: native rows for every collective" $?
    timeout 600 "$mpiexec" -n 2 "$mpibin" bench -b 64 -e 64 --csv $quick > "$tmp/mpid.csv" 2>/dev/null
    awk -F, 'NR > 1 { n++; if ($4 != "mpi") bad = 1 } $2 == "native" { nat = 1 } END { exit bad || !n || !nat }' "$tmp/mpid.csv"
    check "mpi bench: under mpiexec the transport is mpi without --transport (native rows too)" $?
    REDCOLL_BENCH_CORRUPT=1 timeout 600 "$mpiexec" -n 2 "$mpibin" bench --transport mpi -b 64 -e 64 --csv $quick \
        > "$tmp/mpic.csv" 2>/dev/null; st=$?
    check "mpi bench: a result corrupted on rank 1 exits 1" $(( st == 1 ? 0 : 1 ))
    awk -F, 'NR > 1 { n++; if ($14 != 1 || $16 != "wrong") bad = 1 } END { exit bad || n != 2 }' "$tmp/mpic.csv"
    check "mpi bench: rank 1's wrong element counted in the auto and native rows" $?
    timeout 120 "$mpiexec" -n 1 "$mpibin" bench --transport threads -p 2 -b 8 -e 8 --csv $quick 2>/dev/null |
        awk -F, 'NR > 1 { n++; if ($4 != "threads" || $5 != 2) bad = 1 } END { exit bad || !n }'
    check "mpi bench: --transport threads under mpiexec stays on threads" $?
    timeout 300 "$mpiexec" -n 2 "$mpibin" bench --transport mpi --op sum_exact -b 8 -e 8K -f 32 --csv $quick \
        > "$tmp/mpix.csv" 2>/dev/null
    check "mpi bench --op sum_exact exits 0" $?
    awk -F, 'NR > 1 { n++; if ($2 == "native" || $14 != 0 || $16 != "ok") bad = 1 } END { exit bad || n != 3 }' "$tmp/mpix.csv"
    check "mpi bench --op sum_exact: no native row (MPI has no such op), every row right" $?
    timeout 120 "$mpiexec" -n 2 "$mpibin" bench --transport mpi -p 3 >/dev/null 2>&1
    check "mpi bench: -p other than the job's size (exit 2)" $(( $? == 2 ? 0 : 1 ))
else
    echo "cli-bench: MPI bench skipped (no $mpibin or $mpiexec)"
fi

# ---- the profile: round trip and refusals ----
cat > "$tmp/p1" <<'EOF'
# a hand-written profile
redcoll_profile 1
alpha 3e-06     # per message
beta 2.5e-10
gamma 1e-10
f_alpha 0.75
f_beta 1
transport threads
host some machine with spaces in its name
EOF
"$bin" profile "$tmp/p1" > "$tmp/p2"; check "profile reads a hand-written profile" $?
"$bin" profile "$tmp/p2" > "$tmp/p3"; cmp -s "$tmp/p2" "$tmp/p3"; check "profile: canonical form round-trips" $?
a=$("$bin" simulate -p 7 --profile "$tmp/p2" --json | sed 's/.*"time":\([^,]*\),.*/\1/')
b=$("$bin" simulate -p 7 --alpha 3e-06 --beta 2.5e-10 --gamma 1e-10 --f-alpha 0.75 --f-beta 1 --json | sed 's/.*"time":\([^,]*\),.*/\1/')
check "profile: simulate --profile models what the flags model ($a, $b)" $([ -n "$a" ] && [ "$a" = "$b" ]; echo $?)
"$bin" select -p 5 --profile "$tmp/p1" | grep -q "alpha 3e-06 s, beta 2.5e-10 s/B, gamma 1e-10 s/B, f_alpha 0.75, f_beta 1 (from $tmp/p1)"
check "profile: select shows the model it read" $?
"$bin" bench -p 2 -b 8 -e 8 $quick --profile "$tmp/p1" 2>/dev/null | grep -q "^# auto's cost model: alpha 3e-06 s, .*(from $tmp/p1)"
check "profile: bench --profile shows the model auto uses" $?
"$bin" bench -p 2 -b 8 -e 8 $quick --profile "$tmp/p1" --json 2>/dev/null | grep -q "\"profile\":\"$tmp/p1\""
check "profile: bench --json names the profile" $?
bad() { # bad NAME: the profile in $tmp/bad is refused (exit 2) naming WHY
    "$bin" profile "$tmp/bad" > /dev/null 2> "$tmp/why"
    check "profile refused: $1 (exit 2)" $(( $? == 2 ? 0 : 1 ))
}
grep -v '^gamma' "$tmp/p1" > "$tmp/bad"; bad "missing gamma"; grep -q 'missing key gamma' "$tmp/why"; check "profile: names the missing key" $?
sed 's/^beta .*/beta -1/' "$tmp/p1" > "$tmp/bad"; bad "negative beta"; grep -q 'line 4' "$tmp/why"; check "profile: names the line" $?
sed 's/^beta .*/beta nan/' "$tmp/p1" > "$tmp/bad"; bad "beta nan"
sed 's/^beta .*/beta inf/' "$tmp/p1" > "$tmp/bad"; bad "beta inf"
sed 's/^beta .*/beta 0/' "$tmp/p1" > "$tmp/bad"; bad "beta 0"
sed 's/^beta .*/beta 1e-10 2e-10/' "$tmp/p1" > "$tmp/bad"; bad "two values"
{ cat "$tmp/p1"; echo "alpha 1e-6"; } > "$tmp/bad"; bad "repeated alpha"
sed '/^redcoll_profile/d' "$tmp/p1" > "$tmp/bad"; bad "no version line"
sed 's/^redcoll_profile 1/redcoll_profile 2/' "$tmp/p1" > "$tmp/bad"; bad "a newer version"
"$bin" select --profile "$tmp/nonexistent" >/dev/null 2>&1; check "--profile of a missing file (exit 2)" $(( $? == 2 ? 0 : 1 ))

# ---- tune writes a profile select reads ----
"$bin" tune -p 2 --reps 1 --out "$tmp/tuned" 2>/dev/null; check "tune -p 2 --out F exits 0" $?
"$bin" profile "$tmp/tuned" >/dev/null; check "tune's profile parses" $?
grep -q '^transport threads$' "$tmp/tuned"; check "tune's profile says what it measured" $?
"$bin" select -p 24 --count 1000 --profile "$tmp/tuned" | grep -q "(from $tmp/tuned)"; check "select --profile uses tune's profile" $?
exits 2 "tune -p 1" tune -p 1
a=$(sed -n 's/^alpha //p' "$tmp/tuned"); b=$(sed -n 's/^beta //p' "$tmp/tuned")
[ -n "$a" ] && grep -q "^inter_alpha $a\$" "$tmp/tuned" && grep -q "^inter_beta $b\$" "$tmp/tuned" &&
    grep -q '^# one node .*: the inter level equals the intra one$' "$tmp/tuned"
check "tune on threads (one node): the inter level written equal to the intra one" $?
if [ -n "$mpibin" ] && [ -x "$mpibin" ] && command -v "$mpiexec" >/dev/null 2>&1; then
    REDCOLL_RANKS_PER_NODE=2 timeout 600 "$mpiexec" -n 3 "$mpibin" tune --reps 1 --out "$tmp/tuned2" 2>/dev/null &&
        grep -q '^# two levels: inside a node ranks 0 and 1, between nodes ranks 0 and 2$' "$tmp/tuned2" &&
        grep -q '^inter_alpha ' "$tmp/tuned2" && grep -q '^inter_beta ' "$tmp/tuned2" && "$bin" profile "$tmp/tuned2" >/dev/null
    check "mpi tune with nodes of 2 (REDCOLL_RANKS_PER_NODE=2, -n 3): both levels measured, a profile that parses" $?
fi

# ---- map on tiny grids ----
"$bin" map --p-min 2 --p-max 5 -b 8 -e 512 -f 8 --svg "$tmp/m.svg" 2>/dev/null; check "map from the model exits 0" $?
head -c 200 "$tmp/m.svg" | grep -q '<svg'; check "map writes SVG" $?
cells() { # the map's cells as "p bytes algo" lines (a rect covers the grid's p from data-p-min to data-p-max)
    local ps
    ps=$(sed -n 's/.*<g [^>]*data-p="\([0-9 ]*\)".*/\1/p' "$1")
    sed -n 's/.*data-p-min="\([0-9]*\)" data-p-max="\([0-9]*\)" data-bytes="\([0-9]*\)" data-algo="\([a-z_]*\)".*/\1 \2 \3 \4/p' "$1" |
        while read -r lo hi by al; do for p in $ps; do [ "$p" -ge "$lo" ] && [ "$p" -le "$hi" ] && echo "$p $by $al"; done; done
}
cells "$tmp/m.svg" > "$tmp/cells"
n=$(wc -l < "$tmp/cells"); check "map: 4 p x 3 sizes = 12 cells ($n)" $(( n == 12 ? 0 : 1 ))
bad=0
while read -r p by al; do
    best=$("$bin" select -p "$p" --count $((by / 8)) --json | sed -n 's/.*"model_best":"\([a-z_]*\)".*/\1/p')
    [ "$best" = "$al" ] || { bad=1; echo "  map p=$p $by B: $al, select's model best: $best" >&2; }
done < "$tmp/cells"
check "map: every cell is select's model best (the simulator's fastest)" $bad
"$bin" map --from simulator --p-min 2 --p-max 5 -b 8 -e 512 -f 8 --svg "$tmp/ms.svg" 2>/dev/null; check "map --from simulator exits 0" $?
cells "$tmp/ms.svg" > "$tmp/mscells"
check "map --from simulator: the same cells as the cost functions' here" $(cmp -s "$tmp/cells" "$tmp/mscells"; echo $?)
grep -q 'winner (share of the map)' "$tmp/m.svg"; check "map: legend" $?
# a profile whose messages cost 1000x more: map --profile draws select --profile's argmin
sed 's/^alpha .*/alpha 3e-03/' "$tmp/p1" > "$tmp/slow"
"$bin" map --profile "$tmp/slow" --p-min 5 --p-max 6 -b 64 -e 4K -f 8 --svg "$tmp/mp.svg" 2>/dev/null; check "map --profile exits 0" $?
grep -q "alpha 0.003 s, .*profile $tmp/slow" "$tmp/mp.svg"; check "map --profile: the SVG names the profile's model" $?
cells "$tmp/mp.svg" > "$tmp/pcells"
n=$(wc -l < "$tmp/pcells"); bad=$(( n == 6 ? 0 : 1 ))
while read -r p by al; do
    best=$("$bin" select -p "$p" --count $((by / 8)) --profile "$tmp/slow" --json | sed -n 's/.*"model_best":"\([a-z_]*\)".*/\1/p')
    [ "$best" = "$al" ] || { bad=1; echo "  map --profile p=$p $by B: $al, select --profile's model best: $best" >&2; }
done < "$tmp/pcells"
check "map --profile: every cell is select --profile's model best" $bad
"$bin" map --from selector --p-min 2 --p-max 40 -b 8 -e 1M -f 32 --svg "$tmp/s.svg" 2>/dev/null; check "map --from selector exits 0" $?
cells "$tmp/s.svg" > "$tmp/scells"
bad=0
while read -r p by al; do
    pick=$("$bin" select -p "$p" --count $((by / 8)) --limit 0 2>/dev/null | sed -n 's/.*the selector picks \([a-z_]*\)$/\1/p')
    [ "$pick" = "$al" ] || { bad=1; echo "  selector map p=$p $by B: $al, select: $pick" >&2; }
done < <(awk 'NR % 7 == 1' "$tmp/scells")
check "map --from selector: cells are redcoll_select's picks" $bad
"$bin" map --from-csv "$tmp/b.csv" --svg "$tmp/c.svg" 2>/dev/null; check "map --from-csv exits 0" $?
cells "$tmp/c.svg" > "$tmp/ccells"
want=$(awk -F, 'NR > 1 && $2 != "auto" && $2 != "native" && $16 == "ok" {
           k = $5 " " $6; if (!(k in t) || $11 + 0 < t[k]) { t[k] = $11 + 0; a[k] = $2 } }
           END { for (k in a) print k, a[k] }' "$tmp/b.csv" | sort)
check "map --from-csv: the fastest measured algorithm per size" $([ "$(sort "$tmp/ccells")" = "$want" ]; echo $?)

# ---- map with no flags: the whole default grid from the cost functions ----
"$bin" map --svg "$tmp/d.svg" 2>/dev/null; check "map with the default grid (p = 2..1024) from the model exits 0" $?
ps=$(sed -n 's/.*<g [^>]*data-p="\([0-9 ]*\)".*/\1/p' "$tmp/d.svg")
check "map: log-spaced p, 2 and 1024 the ends ($(echo $ps | wc -w) values)" $(echo "$ps" | awk '{ exit !($1 == 2 && $NF == 1024 && NF > 40 && NF < 100) }'; echo $?)
bad=0; for q in 2 4 8 16 32 64 128 256 512 1024; do echo " $ps " | grep -q " $q " || bad=1; done
check "map: every power of two among the p" $bad
echo "$ps" | awk '{ for (i = 2; i <= NF; ++i) if ($i <= $(i - 1) || (i > 2 && $i / $(i - 1) > 1.6)) exit 1 }'
check "map: p rising, no step above 1.6x" $?
n=$(cells "$tmp/d.svg" | wc -l); check "map: every cell drawn ($n = $(echo $ps | wc -w) p x 24 sizes)" $(( n == $(echo $ps | wc -w) * 24 ? 0 : 1 ))
# the legend's share of each winner is its part of the drawn area, as printed
awk '
/<rect .*data-algo=/ { match($0, /width="[0-9.]+"/); w = substr($0, RSTART + 7, RLENGTH - 8)
    match($0, /height="[0-9.]+"/); h = substr($0, RSTART + 8, RLENGTH - 9)
    match($0, /data-algo="[a-z_]+"/); a = substr($0, RSTART + 11, RLENGTH - 12); area[a] += w * h; all += w * h }
/<text .*data-share=/ { match($0, /data-algo="[a-z_]+"/); a = substr($0, RSTART + 11, RLENGTH - 12)
    match($0, /\(([<>]?[0-9]+)%\)/); shown[a] = substr($0, RSTART + 1, RLENGTH - 3) }
END { for (a in area) { s = 100 * area[a] / all; p = shown[a]
          if (p == "") { print "  legend lacks " a > "/dev/stderr"; bad = 1; continue }
          if (p == "<1" ? !(s > 0 && s < 0.5) : p == ">99" ? !(s > 99.5 && s < 100) : (s < p - 0.5 || s > p + 0.5)) {
              print "  legend " a ": " p "%, drawn " s "%" > "/dev/stderr"; bad = 1 } }
      exit bad || !all }' "$tmp/d.svg"
check "map: the legend's shares are the drawn area's" $?
"$bin" map --from selector --selector papers --svg "$tmp/dp.svg" 2>/dev/null; check "map --from selector --selector papers, default grid, exits 0" $?
grep -q 'papers selector' "$tmp/dp.svg"; check "map --from selector --selector papers says so" $?
"$bin" map --from simulator 2>"$tmp/why" >/dev/null; st=$?
check "map of p = 2..1024 from the simulator is refused without --force (exit 2)" $(( st == 2 ? 0 : 1 ))
grep -q -- '--force' "$tmp/why"; check "map's refusal gives the way out" $?
exits 2 "map --p-step with --p-per-octave" map --p-step 2 --p-per-octave 4
exits 2 "map -b 0 (a log axis)" map -b 0
exits 2 "map --from nonsense" map --from nonsense
n=$("$bin" map --p-min 100 --p-max 200 --p-step 10 -b 8 -e 8 | grep -o ' data-p="[^"]*"')
check "map --p-step 10: every 10th p ($n)" $([ "$n" = ' data-p="100 110 120 130 140 150 160 170 180 190 200"' ]; echo $?)

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
