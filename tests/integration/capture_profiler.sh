#!/bin/sh
# --capture=cudaProfilerApi: the window is what lies between
# cudaProfilerStart and cudaProfilerStop, as nsys's capture range. On the
# CPU, a probe binds the two calls at load time as a program linked with a
# shared libcudart does (libgtrace.so's come first under gtrace): ranges
# inside the two windows are written, those before, between and after are
# not, and the calls still return (no CUDA library here: 801, not supported).
# A GPU run with a static cudart goes through CUPTI's callbacks instead
# (tests/gpu/capture_cuda.sh covers CUPTI on a device).
. "$(dirname "$0")/capture_common.sh"
PROFILER_PROBE="$GT_TOP_BUILDDIR/tests/integration/capture_profiler_probe"
[ -x "$PROFILER_PROBE" ] || { echo "missing $PROFILER_PROBE"; exit 99; }

"$GTRACE" -o api.sqlite --capture=cudaProfilerApi "$PROFILER_PROBE" >out.txt 2>err.txt
expect_eq "exit status" 0 $?
expect_eq "the calls reached a real (here: absent) CUDA" "start=801 stop=801" "$(cat out.txt)"
expect_eq "ranges inside the first window" 3 "$(nvtx_count api.sqlite inside)"
expect_eq "ranges inside the second window" 1 "$(nvtx_count api.sqlite again)"
for outside in before between after; do
    expect_eq "ranges '$outside' (outside)" 0 "$(nvtx_count api.sqlite $outside)"
done

# Without the option the whole run is recorded.
"$GTRACE" -o all.sqlite "$PROFILER_PROBE" >/dev/null 2>err.txt
expect_eq "whole run: ranges 'before'" 1 "$(nvtx_count all.sqlite before)"
expect_eq "whole run: ranges 'after'" 1 "$(nvtx_count all.sqlite after)"
echo "all good"
