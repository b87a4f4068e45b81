#!/bin/sh
# gt-timeout.sh PROGRAM [ARGS...]: the log compiler of every test. Runs the
# test under a time limit (GT_TEST_TIMEOUT seconds, 900 unless set), so a
# hung program fails its test with a line that says so instead of holding
# the suite until CI gives up. timeout(1) signals the test's whole process
# group: the programs it started go too.
limit=${GT_TEST_TIMEOUT:-900}
timeout -k 30 "$limit" "$@"
rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL: the test ran past its limit of $limit s (GT_TEST_TIMEOUT) and was stopped"
fi
exit "$rc"
