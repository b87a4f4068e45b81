#!/bin/sh
# memory_window.sh: `gtrace memory --at T` and `--step N` read the memory
# part of a trace only (its NVTX ranges, memory events and the calls that
# made device allocations), not every kernel and call: on a GPU-shaped trace
# of a million events (bench_report's) they answer under an address-space
# limit that the whole analysis model does not fit in, and say the same as
# without the limit.
. "$GT_TOP_SRCDIR/tests/integration/bounded_common.sh"
# 88 MiB: the memory part of this trace takes about 60 MiB of address
# space, the whole model with its report over 110 MiB
LIMIT_KB=90000
bounded_limit "$LIMIT_KB"
bounded_trace 1000000 "$WORK/big.sqlite"
# the middle of the trace (its first event is at 1 s)
"$GTRACE" report --steps 3:3 --json "$WORK/big.sqlite" >"$WORK/step.json" 2>"$WORK/err" ||
    { cat "$WORK/err"; fail "report --steps 3:3"; }
at=$(sed -n 's/.*"steps":\[{"number":3,"start_ns":\([0-9]*\).*/\1/p' "$WORK/step.json")
[ -n "$at" ] || fail "no step 3 in the report"

for args in "--at $at" "--json --at $at" "--step 3"; do
    # shellcheck disable=SC2086
    "$GTRACE" memory $args "$WORK/big.sqlite" >"$WORK/free.txt" 2>"$WORK/err" ||
        { cat "$WORK/err"; fail "memory $args"; }
    # shellcheck disable=SC2086
    (ulimit -v "$LIMIT_KB" && exec "$GTRACE" memory $args "$WORK/big.sqlite") >"$WORK/limited.txt" 2>"$WORK/err" ||
        { cat "$WORK/err"; fail "memory $args under ulimit -v $LIMIT_KB"; }
    cmp -s "$WORK/free.txt" "$WORK/limited.txt" || fail "memory $args: not the same under the limit"
    grep -q "segment\|block" "$WORK/free.txt" || fail "memory $args: no allocator state printed"
    echo "ok: memory $args under ulimit -v $LIMIT_KB ($(wc -c <"$WORK/free.txt") bytes)"
done
