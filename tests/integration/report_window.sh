#!/bin/sh
# report_window.sh: `gtrace report --steps A:B` on a trace whose kept report
# carries its whole-trace facts reads the window's device timeline and calls
# only (and the memory part whole), not the whole analysis model: on a
# GPU-shaped trace of a million events (bench_report's, its report kept as
# the launcher keeps it) it answers under an address-space limit the whole
# model does not fit in, and prints the bytes the whole model prints
# (--no-summary reads it), errors and exit status included.
. "$GT_TOP_SRCDIR/tests/integration/bounded_common.sh"
# 83 MiB: the window read of this trace takes about 60 MiB of address
# space, the whole model with its report over 100 MiB
LIMIT_KB=85000
bounded_limit "$LIMIT_KB"
T=$WORK/big.sqlite
bounded_trace 1000000 "$T"
"$SYNTH" -f "$T" --keep-only >"$WORK/keep.log" 2>&1 || { cat "$WORK/keep.log"; fail "bench_report --keep-only"; }

last=$("$GTRACE" report --json "$T" | grep -o '"number":[0-9]*' | tail -n 1 | cut -d: -f2)
[ -n "$last" ] && [ "$last" -gt 10 ] || fail "no steps in the kept report"
mid=$((last / 2))

# the limit is one the whole model cannot answer under: else this proves nothing
if (ulimit -v "$LIMIT_KB" && exec "$GTRACE" report --no-summary --steps "$mid:$mid" "$T") >/dev/null 2>&1; then
    fail "the whole model fits under ulimit -v $LIMIT_KB: the limit no longer tells the window read from it"
fi
GTRACE_SUMMARY_SAY=1 "$GTRACE" report --steps "$mid:$mid" "$T" 2>&1 >/dev/null | grep -q "the window of its steps" ||
    fail "report --steps did not read the window with the kept facts"

# windows: the first steps, the middle, the last, one past the end, none at all
for w in "0:1" "$mid:$((mid + 1))" "$((last - 1)):$last" "$last:$((last + 3))" "$((last + 2)):$((last + 4))"; do
    for json in "" "--json"; do
        # shellcheck disable=SC2086
        "$GTRACE" report --no-summary $json --steps "$w" "$T" >"$WORK/whole.out" 2>"$WORK/whole.err"
        echo "exit $?" >>"$WORK/whole.out"
        # shellcheck disable=SC2086
        (ulimit -v "$LIMIT_KB" && exec "$GTRACE" report $json --steps "$w" "$T") >"$WORK/window.out" 2>"$WORK/window.err"
        echo "exit $?" >>"$WORK/window.out"
        cmp -s "$WORK/whole.out" "$WORK/window.out" && cmp -s "$WORK/whole.err" "$WORK/window.err" ||
            { diff "$WORK/whole.out" "$WORK/window.out" | head -n 20; cat "$WORK/window.err";
              fail "report $json --steps $w: not the whole model's output under ulimit -v $LIMIT_KB"; }
        echo "ok: report ${json:+$json }--steps $w under ulimit -v $LIMIT_KB ($(tail -n 1 "$WORK/window.out"))"
    done
done
