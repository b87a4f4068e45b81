#!/bin/sh
# The launcher killed (SIGKILL) while the program records: the program keeps
# running and finishes its burst without waiting (its rings fill, and what
# finds them full is dropped), and it is not taken down with the launcher.
. "$(dirname "$0")/capture_common.sh"
N=3000000
"$GTRACE" -o l.sqlite "$PROBE" counted $N count.bin >out.txt 2>err.txt &
gt=$!
probe_counted $gt 1000 $N
kill -KILL $gt
wait $gt
expect_eq "the launcher was killed" 137 $?
at=$(od -An -t d8 count.bin | tr -d ' ')
# The burst takes well under a second untraced; 60 s is for a loaded machine.
i=0
while [ $i -lt 6000 ] && [ "$(cat out.txt 2>/dev/null)" != "emitted $N" ]; do
    kill -0 "$prog" 2>/dev/null || break
    i=$((i + 1))
    sleep 0.01
done
alive=0
kill -0 "$prog" 2>/dev/null && alive=1
kill -KILL "$prog" 2>/dev/null
echo "launcher killed after $at of $N ranges; the program went on to $(od -An -t d8 count.bin | tr -d ' ')"
expect_eq "the program finished its burst" "emitted $N" "$(cat out.txt)"
expect_eq "the program was still running (waiting to be killed)" 1 "$alive"
echo "all good"
