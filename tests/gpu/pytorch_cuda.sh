#!/bin/sh
# pytorch_cuda.sh: `gtrace --pytorch` on a PyTorch program training on the GPU
# (pytorch_cuda.py): CUPTI records its kernels beside PyTorch's own use of
# CUDA, the caching allocator's snapshot goes into the trace, and the report's
# peaks for the process are PyTorch's own, byte for byte: allocated is the
# requested bytes' peak (memory_stats' requested_bytes.all.peak: the snapshot's
# history records requested sizes, not the rounded blocks that
# max_memory_allocated counts), reserved is max_memory_reserved. The steps are
# found. Exits 77 without a GPU or without torch.
# Paths: GT_TOP_SRCDIR and GT_TOP_BUILDDIR (make check, device_check.sh).
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
PROG="$GT_TOP_SRCDIR/tests/gpu/pytorch_cuda.py"
"$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 77)' || { echo "SKIP: torch sees no GPU"; exit 77; }

"$GTRACE" --pytorch -o t.sqlite "$PY" "$PROG" --steps 8 > out.txt 2> err.txt ||
    fail "gtrace --pytorch exited $?: $(tail -5 err.txt)"
cat out.txt err.txt
PID=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' out.txt)
PEAK=$(sed -n 's/.* requested_peak \([0-9]*\) .*/\1/p' out.txt)
RESERVED=$(sed -n 's/.* max_memory_reserved \([0-9]*\) .*/\1/p' out.txt)
[ -n "$PID" ] && [ -n "$PEAK" ] && [ -n "$RESERVED" ] || fail "the program printed: $(cat out.txt)"
kernels=$(q t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')
echo "kernels: $kernels"
[ "$kernels" -gt 50 ] || fail "only $kernels kernels recorded"
expect_eq "kernels with a launch call" "$kernels" "$(q t.sqlite 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = k.correlationId)')"
expect_eq "nothing dropped" 0 "$(q t.sqlite 'SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS')"
"$GTRACE" report --json t.sqlite > r.json || fail "gtrace report --json"
"$GTRACE" report t.sqlite | sed -n '/Memory/,/^$/p'
"$PY" - r.json "$PID" "$PEAK" "$RESERVED" <<'PY' || fail "the report's peaks are not PyTorch's"
import json, sys
r, pid, peak, reserved = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
found = []
def walk(v):
    if isinstance(v, dict):
        if v.get("pid") == pid and "peak_allocated_bytes" in v:
            found.append((v["peak_allocated_bytes"], v["peak_reserved_bytes"]))
        for x in v.values(): walk(x)
    elif isinstance(v, list):
        for x in v: walk(x)
walk(r.get("memory"))
print("report peaks (allocated, reserved) for pid %d: %s; PyTorch's: %d requested, %d reserved; steps %d" % (
    pid, found, peak, reserved, len(r.get("steps", []))))
sys.exit(0 if (peak, reserved) in found and len(r.get("steps", [])) == 8 else 1)
PY
echo "all good"
