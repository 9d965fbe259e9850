# cli_lib.sh - what the tool's test scripts share (sourced): pass/fail
# counting and checks of one tool run. Set $bin and $suite first.
pass=0 fail=0
check() { # check NAME CONDITION-EXIT-STATUS
    if [ "$2" -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL  $suite/$1"; fi
}
exits() { # exits CODE NAME ARGS...: the tool exits with CODE
    local want=$1 name=$2; shift 2
    "$bin" "$@" >/dev/null 2>&1
    check "$name (exit $want)" $(( $? == want ? 0 : 1 ))
}
says() { # says PATTERN NAME ARGS...: stdout + stderr of the tool match PATTERN
    local pat=$1 name=$2; shift 2
    "$bin" "$@" 2>&1 | grep -Eq -- "$pat"
    check "$name" $?
}
