#!/bin/sh
# viewer_pytorch.sh: gtrace-view's first view of a `gtrace --pytorch` trace
# (pytorch_train.py, 4 steps after a second of loading), under Xvfb with
# openbox: test_viewer_fit opens it in the window and checks the view begins
# near step 0 and ends near the last step, and that f shows the whole trace.
# Skips (77) without Xvfb, openbox or xdotool, or without a Python with torch.
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
B="$GT_TOP_BUILDDIR"
[ -x "$B/tests/unit/test_viewer_fit" ] || { echo "missing $B/tests/unit/test_viewer_fit: build it first"; exit 99; }
"$GTRACE" --pytorch -o t.sqlite "$PY" "$TRAIN" --steps 4 --idle-before 1 > out.txt 2> err.txt || fail "the traced run: $(cat err.txt)"
GV_PYTORCH_TRACE="$WORK/t.sqlite"
GV_SHOT_DIR=${GV_SHOT_DIR:-$B/viewer/screenshots}
mkdir -p "$GV_SHOT_DIR"
export GV_PYTORCH_TRACE GV_SHOT_DIR
# gv_display's EXIT trap removes the work folder too
. "$GT_TOP_SRCDIR/tests/integration/viewer_display.sh"
gv_display "$WORK" --wm
"$B/tests/unit/test_viewer_fit" || fail "test_viewer_fit"
echo "ok: the first view of a --pytorch trace shows its steps"
