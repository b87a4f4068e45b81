#!/bin/sh
# viewer_memory.sh: the memory page's process chooser under Xvfb
# (tests/unit/test_viewer_memory). Skips (77) only without Xvfb.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
T="$GT_TOP_BUILDDIR/tests/unit/test_viewer_memory"
command -v Xvfb >/dev/null 2>&1 || { echo "skip: Xvfb not found (apt-get install xvfb)"; exit 77; }
[ -x "$T" ] || { echo "missing $T: build it first"; exit 99; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-viewer-memory.XXXXXX") || exit 99
xvfb_pid=""
trap '[ -z "$xvfb_pid" ] || kill "$xvfb_pid" 2>/dev/null; rm -rf "$WORK"' EXIT
Xvfb -displayfd 3 -nolisten tcp -screen 0 1280x1024x24 3>"$WORK/display" 2>"$WORK/xvfb.log" &
xvfb_pid=$!
for _ in $(seq 100); do
    [ -s "$WORK/display" ] && break
    kill -0 "$xvfb_pid" 2>/dev/null || break
    sleep 0.1
done
[ -s "$WORK/display" ] || { cat "$WORK/xvfb.log"; echo "Xvfb did not start"; exit 99; }
DISPLAY=:$(cat "$WORK/display") "$T"
