#!/bin/sh
# Programs that end without exit(): _exit and _Exit (a forked child's way
# out) skip exit handlers, yet every range recorded before is in the trace;
# a main that ends with pthread_exit ends the process when its last thread
# ends, as it does untraced (status 0), and SIGTERM still kills it.
. "$(dirname "$0")/capture_common.sh"
for how in _exit _Exit; do
    timeout 60 "$GTRACE" -o $how.sqlite "$PROBE" $how 100 >out.txt 2>err.txt
    expect_eq "exit status after $how" 0 $?
    expect_eq "ranges recorded before $how" 100 "$(nvtx_count $how.sqlite quick 59)"
done
timeout 60 "$GTRACE" -o f.sqlite "$PROBE" fork_exit 100 >out.txt 2>err.txt
expect_eq "exit status with a child that _exits" 0 $?
expect_eq "ranges of the child that _exits" 100 "$(nvtx_count f.sqlite child 59)"
# A vfork child's _exit (after a failed exec) leaves its parent's session alone.
timeout 60 "$GTRACE" -o v.sqlite "$PROBE" vfork_exit 100 >out.txt 2>err.txt
expect_eq "exit status after a vfork child's _exit" 0 $?
expect_eq "ranges of the parent of a vfork child" 100 "$(nvtx_count v.sqlite quick 59)"

# pthread_exit in main: the process ends with its last thread (124: it hung).
timeout 30 "$GTRACE" -o pe.sqlite "$PROBE" pthread_exit 50 >out.txt 2>err.txt
expect_eq "exit status after pthread_exit in main" 0 $?
expect_eq "ranges of main" 50 "$(nvtx_count pe.sqlite main 59)"
expect_eq "range of the worker" 1 "$(nvtx_count pe.sqlite worker 59)"
# ... also when the last thread is a worker that ends after main.
timeout 30 "$GTRACE" -o pw.sqlite "$PROBE" pthread_exit 5 300 >out.txt 2>err.txt
expect_eq "exit status after a worker outlived main" 0 $?
expect_eq "range of the worker that ended last" 1 "$(nvtx_count pw.sqlite worker 59)"
# SIGTERM kills a program whose main thread is gone, as it does untraced.
"$GTRACE" -o wt.sqlite "$PROBE" wait_term >out.txt 2>err.txt &
gt=$!
i=0
while [ "$(cat out.txt 2>/dev/null)" != waiting ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
prog=$(pgrep -P $gt -x capture_probe | head -n 1)
[ -n "$prog" ] || { kill -9 $gt; fail "the program did not start: $(cat err.txt)"; }
kill -TERM "$prog"
i=0
while kill -0 $gt 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $gt 2>/dev/null; then
    kill -KILL "$prog" $gt
    fail "SIGTERM did not end the program"
fi
wait $gt
expect_eq "SIGTERM passed through (143)" 143 $?
expect_eq "range of the thread killed by SIGTERM" 1 "$(nvtx_count wt.sqlite waiting 59)"
echo "all good"
