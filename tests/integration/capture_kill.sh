#!/bin/sh
# A program killed with SIGKILL leaves a trace with every event older than
# one flush interval; one that crashes (SIGSEGV, SIGABRT) right after its
# events leaves all of them, because the crash flushes.
. "$(dirname "$0")/capture_common.sh"
sh -c "exec \"$GTRACE\" -o k.sqlite --flush-ms=50 \"$SAMPLES/nvtx_sigkill\" 300 400" >out.txt 2>err.txt
expect_eq "killed by SIGKILL" 137 $?
expect_eq "ranges older than one flush interval" 300 "$(nvtx_count k.sqlite before 59)"
grep -q "nvtx  *300\$" err.txt || fail "summary after SIGKILL: $(cat err.txt)"
for how in segv abort; do
    sh -c "exec \"$GTRACE\" -o $how.sqlite --flush-ms=60000 \"$SAMPLES/nvtx_crash\" $how 250" >out.txt 2>err.txt
    rc=$?
    case $how in segv) want=139 ;; abort) want=134 ;; esac
    expect_eq "exit status after $how" $want $rc
    expect_eq "ranges flushed by the $how handler" 250 "$(nvtx_count $how.sqlite doomed 59)"
    expect_eq "last mark flushed by the $how handler" 1 "$(nvtx_count $how.sqlite 'last words' 34)"
done
echo "all good"
