#!/bin/sh
# gtrace exits as the program did (code, or death by the same signal), its
# output unchanged, and the trace written either way; LD_PRELOAD keeps what
# it held.
. "$(dirname "$0")/capture_common.sh"
for code in 0 1 42 255; do
    "$GTRACE" -o "e$code.sqlite" "$SAMPLES/exit_with" $code >out.txt 2>err.txt
    expect_eq "exit code $code passed through" $code $?
    expect_eq "output with exit $code" hello "$(cat out.txt)"
    expect_eq "range recorded (exit $code)" 1 "$(nvtx_count e$code.sqlite exit_with 59)"
done
# Death by signal: gtrace dies of the same signal (a shell sees 128+N).
# SIGTERM and SIGABRT (default action) flush the trace first; SIGKILL cannot.
for sig in 15 6 9; do
    sh -c "exec \"$GTRACE\" -o s$sig.sqlite \"$SAMPLES/exit_with\" -s $sig" >out.txt 2>err.txt
    expect_eq "death by signal $sig passed through" $((128 + sig)) $?
    [ $sig = 9 ] || expect_eq "range recorded (signal $sig)" 1 "$(nvtx_count s$sig.sqlite exit_with 59)"
done
# LD_PRELOAD keeps its entries (gtrace's library goes after them).
# The entry is zlib (every gtrace links it): libm there, ahead of ASan's
# runtime, crashed the sanitizer build's run of sh before main.
pre=$(ls /lib/x86_64-linux-gnu/libz.so.1 /lib64/libz.so.1 /usr/lib/libz.so.1 2>/dev/null | head -n 1)
if [ -n "$pre" ]; then
    LD_PRELOAD="$pre" "$GTRACE" -o env.sqlite sh -c 'echo "$LD_PRELOAD"' >out.txt 2>err.txt
    expect_eq "exit status with LD_PRELOAD" 0 $?
    case "$(cat out.txt)" in
        "$pre:"*libgtrace.so) echo "ok: LD_PRELOAD = $(cat out.txt)" ;;
        *) fail "LD_PRELOAD lost its entry: $(cat out.txt)" ;;
    esac
fi
# A program that records nothing still gives a trace with its process.
"$GTRACE" -o none.sqlite true 2>err.txt
expect_eq "exit status of true" 0 $?
expect_eq "process of a program with no events" true "$(q none.sqlite 'SELECT name FROM PROCESSES')"
grep -q "none" err.txt || fail "summary does not say there were no events: $(cat err.txt)"
echo "all good"
