#!/bin/sh
# Clear errors, with shells' exit codes, for what cannot run; an existing
# output is never replaced without --force; default names never collide.
. "$(dirname "$0")/capture_common.sh"
# expect_fail CODE PATTERN CMD...: CMD exits CODE and says PATTERN on stderr
expect_fail() {
    code=$1; pattern=$2; shift 2
    "$@" >out.txt 2>err.txt
    rc=$?
    expect_eq "exit status of '$*'" "$code" "$rc"
    grep -q -e "$pattern" err.txt || fail "'$*' does not say '$pattern': $(cat err.txt)"
    [ ! -s out.txt ] || fail "'$*' wrote on stdout: $(cat out.txt)"
}
expect_fail 127 "cannot run './missing': No such file" "$GTRACE" ./missing
expect_fail 127 "not found in PATH" "$GTRACE" gt-no-such-command-xyz
printf 'not a program\n' >plain.txt
expect_fail 126 "not executable" "$GTRACE" ./plain.txt
expect_fail 126 "is a directory" "$GTRACE" "$WORK"
expect_fail 2 "unknown option '--frobnicate'" "$GTRACE" --frobnicate true
expect_fail 2 "expected auto, on or off" "$GTRACE" --cuda=maybe true
expect_fail 2 "--stacks=-1" "$GTRACE" --stacks=-1 true
expect_fail 2 "no program to run" "$GTRACE" -o x.sqlite
ls .gtrace-parts-* >/dev/null 2>&1 && fail "a parts directory was left behind"
# An existing output is kept as it was.
printf 'precious\n' >taken.sqlite
expect_fail 1 "taken.sqlite exists (use --force" "$GTRACE" -o taken.sqlite "$SAMPLES/exit_with" 0
expect_eq "existing output untouched" precious "$(cat taken.sqlite)"
"$GTRACE" -o taken.sqlite --force "$SAMPLES/exit_with" 0 >/dev/null 2>&1
expect_eq "--force replaces it" 1 "$(nvtx_count taken.sqlite exit_with 59)"
# Default names: gtrace-PROGRAM-N.sqlite, the first N free.
"$GTRACE" "$SAMPLES/exit_with" 0 >/dev/null 2>&1
"$GTRACE" "$SAMPLES/exit_with" 0 >/dev/null 2>&1
[ -f gtrace-exit_with-1.sqlite ] && [ -f gtrace-exit_with-2.sqlite ] || fail "default names: $(ls)"
# gtrace info on what is not a trace
expect_fail 1 "plain.txt" "$GTRACE" info plain.txt
expect_fail 1 "missing.sqlite" "$GTRACE" info missing.sqlite
expect_fail 2 "usage: gtrace info TRACE" "$GTRACE" info
echo "all good"
