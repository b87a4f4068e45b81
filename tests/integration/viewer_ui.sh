#!/bin/sh
# viewer_ui.sh: gtrace-view under Xvfb. Records two traces of the CPU
# trainer (fp16 with its loss-scale marks, and fp32), runs the window tests
# (synthetic input, compare, the trainer's trace, a corrupt file), then the
# program itself: --screenshot of each nsys fixture and of the trainer's
# trace (window and headless views), the two runs compared, through
# `gtrace view` too, and bad files, which must fail with a message that
# names the file and not crash. Screenshots land in $GV_SHOT_DIR (default:
# the build's viewer/screenshots). Skips (77) only without Xvfb.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
B="$GT_TOP_BUILDDIR"
VIEW="$B/viewer/gtrace-view"
GTRACE="$B/libtrace/cli/gtrace"
command -v xvfb-run >/dev/null 2>&1 || { echo "skip: xvfb-run not found (apt-get install xvfb xauth)"; exit 77; }
for f in "$VIEW" "$GTRACE" "$B/tests/unit/test_viewer_ui"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-viewer.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
GV_SHOT_DIR=${GV_SHOT_DIR:-$B/viewer/screenshots}
mkdir -p "$GV_SHOT_DIR"
export GV_SHOT_DIR

GV_TRAINER_TRACE=""
if [ -d /usr/share/games/fortunes ]; then
    "$GTRACE" -o "$WORK/trainer.sqlite" "$B/trainer/trainer" --model gpt-tiny --steps 20 --eval-every 0 --amp fp16 \
        >"$WORK/trainer.log" 2>&1 || { cat "$WORK/trainer.log"; fail "gtrace on the trainer (fp16)"; }
    "$GTRACE" -o "$WORK/trainer32.sqlite" "$B/trainer/trainer" --model gpt-tiny --steps 20 --eval-every 0 \
        >"$WORK/trainer32.log" 2>&1 || { cat "$WORK/trainer32.log"; fail "gtrace on the trainer (fp32)"; }
    GV_TRAINER_TRACE="$WORK/trainer.sqlite"
else
    echo "note: no fortunes data; the trainer's trace is not part of this run"
fi
export GV_TRAINER_TRACE

xvfb-run -a "$B/tests/unit/test_viewer_ui" || fail "test_viewer_ui"

is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
shoot() { # name, args...
    name=$1; shift
    xvfb-run -a "$VIEW" --screenshot "$GV_SHOT_DIR/$name" "$@" >"$WORK/out" 2>&1 ||
        { cat "$WORK/out"; fail "gtrace-view $*"; }
    is_png "$GV_SHOT_DIR/$name" || fail "$name is not a PNG"
    echo "ok: $name"
}
for f in "$GT_FIXTURES"/nsys/*.sqlite; do
    shoot "viewer-$(basename "$f" .sqlite).png" "$f"
done
if [ -n "$GV_TRAINER_TRACE" ]; then
    shoot viewer-trainer-window.png "$GV_TRAINER_TRACE"
    shoot viewer-compare.png "$WORK/trainer32.sqlite" "$GV_TRAINER_TRACE"
    # headless views need no display
    "$VIEW" --screenshot "$WORK/tl.png" --view timeline "$GV_TRAINER_TRACE" || fail "headless timeline"
    "$VIEW" --screenshot "$WORK/mem.png" --view memory --size 900x600 "$GV_TRAINER_TRACE" || fail "headless memory"
    is_png "$WORK/tl.png" && is_png "$WORK/mem.png" || fail "headless screenshots are not PNGs"
fi
# gtrace view finds gtrace-view
"$GTRACE" view --screenshot "$WORK/cli.png" --view timeline "$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite" ||
    fail "gtrace view"
is_png "$WORK/cli.png" || fail "gtrace view wrote no PNG"

# Bad files: exit 1 with the file's name in the message, never a crash.
printf 'not a trace\n' >"$WORK/garbage.sqlite"
head -c 9000 "$GT_FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite" >"$WORK/truncated.sqlite"
for f in "$WORK/garbage.sqlite" "$WORK/truncated.sqlite" "$WORK/missing.sqlite"; do
    for view in timeline window; do
        xvfb-run -a "$VIEW" --screenshot "$WORK/bad.png" --view $view "$f" >"$WORK/err" 2>&1
        rc=$?
        [ $rc -eq 1 ] || { cat "$WORK/err"; fail "gtrace-view on $f ($view) exited $rc, not 1"; }
        grep -q "$f" "$WORK/err" || { cat "$WORK/err"; fail "the error does not name $f"; }
    done
    echo "ok: $(head -1 "$WORK/err")"
done
"$VIEW" --size 10x10 x.sqlite >/dev/null 2>&1; [ $? -eq 2 ] || fail "a bad --size is not a usage error"
echo "ok: gtrace-view"
