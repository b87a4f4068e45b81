#!/bin/sh
# viewer_memory.sh: the memory page's process chooser under Xvfb
# (tests/unit/test_viewer_memory), on viewer_display.sh's Xvfb. Skips (77)
# only without Xvfb.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
T="$GT_TOP_BUILDDIR/tests/unit/test_viewer_memory"
[ -x "$T" ] || { echo "missing $T: build it first"; exit 99; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-viewer-memory.XXXXXX") || exit 99
. "$(dirname "$0")/viewer_display.sh"
gv_display "$WORK"
"$T"
