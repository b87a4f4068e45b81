#!/bin/sh
# A program killed with SIGKILL leaves a trace with every event it recorded
# (its rings are shared with gtrace, which reads them after its death), and
# so does one that crashes (SIGSEGV, SIGABRT) right after its events.
. "$(dirname "$0")/capture_common.sh"
sh -c "exec \"$GTRACE\" -o k.sqlite --flush-ms=50 \"$SAMPLES/nvtx_sigkill\" 300 400" >out.txt 2>err.txt
expect_eq "killed by SIGKILL" 137 $?
expect_eq "ranges recorded long before SIGKILL" 300 "$(nvtx_count k.sqlite before 59)"
expect_eq "range recorded just before SIGKILL" 1 "$(nvtx_count k.sqlite after 59)"
grep -q "nvtx  *301\$" err.txt || fail "summary after SIGKILL: $(cat err.txt)"
for how in segv abort; do
    sh -c "exec \"$GTRACE\" -o $how.sqlite --flush-ms=60000 \"$SAMPLES/nvtx_crash\" $how 250" >out.txt 2>err.txt
    rc=$?
    case $how in segv) want=139 ;; abort) want=134 ;; esac
    expect_eq "exit status after $how" $want $rc
    expect_eq "ranges recorded before $how" 250 "$(nvtx_count $how.sqlite doomed 59)"
    expect_eq "last mark before $how" 1 "$(nvtx_count $how.sqlite 'last words' 34)"
done
echo "all good"
