#!/bin/sh
# A full disk: the traced program fills a small tmpfs (in a private mount
# namespace; the test is skipped where it cannot mount one). The run says
# it lost events and exits 3; a trace that could still be written counts
# every event (rows + dropped = emitted), and none is half written.
. "$(dirname "$0")/capture_common.sh"
command -v unshare >/dev/null 2>&1 || { echo "skipped: no unshare"; exit 77; }
unshare -m true 2>/dev/null || { echo "skipped: no private mount namespace here"; exit 77; }
mkdir fs
N=20000
unshare -m sh -c '
    mount -t tmpfs -o size=3m gtrace-test "$1" 2>/dev/null || exit 77
    cd "$1" || exit 99
    "$2" -o t.sqlite --flush-ms=5 "$3" fill "$4" >"$5/out.txt" 2>"$5/err.txt"
    echo $? >"$5/rc.txt"
    ls -a >"$5/ls.txt"
    [ ! -e t.sqlite ] || cp t.sqlite "$5/t.sqlite"
' sh "$WORK/fs" "$GTRACE" "$PROBE" $N "$WORK"
case $? in
    77) echo "skipped: cannot mount a tmpfs here"; exit 77 ;;
    0) ;;
    *) fail "the namespace's script failed" ;;
esac
expect_eq "program output on a full disk" "emitted $N" "$(cat out.txt)"
expect_eq "exit status of a run that filled the disk" 3 "$(cat rc.txt)"
grep -q "lost" err.txt || fail "no word of the lost events: $(cat err.txt)"
grep -q "made no NVTX" err.txt && fail "the summary says the program made no NVTX calls: $(cat err.txt)"
if [ -e t.sqlite ]; then
    rows=$(q t.sqlite 'SELECT count(*) FROM NVTX_EVENTS')
    dropped=$(q t.sqlite "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS WHERE kind = 'nvtx'")
    echo "full disk: rows $rows, dropped $dropped"
    expect_eq "rows + dropped on a full disk" $N $((rows + dropped))
else
    grep -q "no trace written" err.txt || fail "no trace and no word of it: $(cat err.txt)"
fi
grep -q '\.tmp' ls.txt && fail "a temporary file was left: $(cat ls.txt)"
echo "all good"
