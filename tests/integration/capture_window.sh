#!/bin/sh
# The capture window: --capture=steps:A-B (the trainer's "step N" ranges,
# several windows), --capture=nvtx:NAME, --capture=signal with SIGUSR1 to
# gtrace, --delay and --duration. Outside the window no NVTX range or mark
# is written; a range that overlaps it is.
. "$(dirname "$0")/capture_common.sh"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
[ -x "$TRAINER" ] || { echo "missing $TRAINER"; exit 99; }
steps() { q "$1" "SELECT group_concat(text, ',') FROM (SELECT text FROM NVTX_EVENTS WHERE text LIKE 'step %' ORDER BY start)"; }

# steps:4-5 of 8: only those steps, and every range written overlaps them.
"$GTRACE" -o all.sqlite "$TRAINER" --model gpt-tiny --steps 8 --seed 1 >/dev/null 2>err.txt
expect_eq "whole run: exit status" 0 $?
"$GTRACE" -o win.sqlite --capture=steps:4-5 "$TRAINER" --model gpt-tiny --steps 8 --seed 1 >/dev/null 2>err.txt
expect_eq "window: exit status" 0 $?
expect_eq "whole run: steps" "step 0,step 1,step 2,step 3,step 4,step 5,step 6,step 7" "$(steps all.sqlite)"
expect_eq "window: steps" "step 4,step 5" "$(steps win.sqlite)"
W="(SELECT (SELECT min(start) FROM NVTX_EVENTS WHERE text = 'step 4') AS a, (SELECT max(end) FROM NVTX_EVENTS WHERE text = 'step 5') AS b) w"
expect_eq "window: NVTX rows outside steps 4-5" 0 \
    "$(q win.sqlite "SELECT count(*) FROM NVTX_EVENTS, $W WHERE eventType IN (34, 59, 60) AND (coalesce(end, start) < a OR start > b)")"
inside=$(q win.sqlite "SELECT count(*) FROM NVTX_EVENTS, $W WHERE eventType = 59 AND start >= a AND end <= b")
[ "$inside" -gt 20 ] || fail "window: only $inside ranges inside steps 4-5"
expect_eq "window: the same ranges in steps 4-5 as the whole run" \
    "$(q all.sqlite "SELECT count(*) FROM NVTX_EVENTS, $W WHERE eventType = 59 AND start >= a AND end <= b")" "$inside"
expect_eq "window: the option in the run's configuration" 1 \
    "$(q win.sqlite "SELECT count(*) FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = 'env.GTRACE_CAPTURE' AND value = 'steps:4-5'")"

# several windows
"$GTRACE" -o two.sqlite --capture=steps:1,5-6 "$TRAINER" --model gpt-tiny --steps 8 --seed 1 >/dev/null 2>err.txt
expect_eq "two windows: exit status" 0 $?
expect_eq "two windows: steps" "step 1,step 5,step 6" "$(steps two.sqlite)"

# nvtx:forward: inside each "forward" (and the steps holding them), never "backward"
"$GTRACE" -o fw.sqlite --capture=nvtx:forward "$SAMPLES/nvtx_steps" 4 2000 >/dev/null 2>err.txt
expect_eq "nvtx window: exit status" 0 $?
expect_eq "nvtx window: forward ranges" 4 "$(nvtx_count fw.sqlite forward 59)"
expect_eq "nvtx window: backward ranges" 0 "$(nvtx_count fw.sqlite backward 59)"
expect_eq "nvtx window: steps holding a forward" "step 0,step 1,step 2,step 3" "$(steps fw.sqlite)"

# --capture=signal: closed until SIGUSR1. The program runs a first loop,
# waits until the launcher's side of the window is open, then a second.
cat >prog.sh <<EOS
"$SAMPLES/nvtx_steps" 2 1000 >/dev/null
: >ran1
while [ "\$(cat "\$GTRACE_CAPTURE_GATE" 2>/dev/null)" != 0 ]; do sleep 0.01; done
"$SAMPLES/nvtx_steps" 3 1000 >/dev/null
EOS
"$GTRACE" -o sig.sqlite --capture=signal --flush-ms=20 sh prog.sh >out.txt 2>err.txt &
gt=$!
i=0
while [ ! -e ran1 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
[ -e ran1 ] || { kill -9 $gt; fail "the program did not run: $(cat err.txt)"; }
kill -USR1 $gt
wait $gt
expect_eq "signal: exit status" 0 $?
expect_eq "signal: steps of the second loop only" "step 0,step 1,step 2" "$(steps sig.sqlite)"

# --delay: the same program, the window opening by itself
rm -f ran1
"$GTRACE" -o delay.sqlite --delay=0.3 --flush-ms=20 sh prog.sh >out.txt 2>err.txt
expect_eq "delay: exit status" 0 $?
expect_eq "delay: steps of the second loop only" "step 0,step 1,step 2" "$(steps delay.sqlite)"
# a window that never opens (or closes at once) holds no range
"$GTRACE" -o never.sqlite --delay=3600 "$SAMPLES/nvtx_steps" 2 1000 >/dev/null 2>err.txt
expect_eq "long delay: steps" "" "$(steps never.sqlite)"
"$GTRACE" -o short.sqlite --duration=0.000001 --flush-ms=1 sh -c "sleep 0.2; exec $SAMPLES/nvtx_steps 2 1000" >/dev/null 2>err.txt
expect_eq "duration over: steps" "" "$(steps short.sqlite)"
"$GTRACE" -o long.sqlite --duration=3600 "$SAMPLES/nvtx_steps" 2 1000 >/dev/null 2>err.txt
expect_eq "long duration: steps" "step 0,step 1" "$(steps long.sqlite)"

# options gtrace refuses
"$GTRACE" --capture=steps:5-4 true 2>err.txt
expect_eq "steps:5-4: exit status" 2 $?
"$GTRACE" --capture=frames true 2>err.txt
expect_eq "--capture=frames: exit status" 2 $?
"$GTRACE" --delay=-1 true 2>err.txt
expect_eq "--delay=-1: exit status" 2 $?
echo "all good"
