#!/bin/sh
# viewer_ui.sh: gtrace-view under Xvfb. Records two traces of the CPU
# trainer (fp16 with its loss-scale marks, and fp32), runs the window tests
# (synthetic input, compare, the trainer's trace, a corrupt file), then the
# program itself: --screenshot of each nsys fixture and of the trainer's
# trace (window and headless views), the two runs compared, through
# `gtrace view` too, and bad files, which must fail with exit 1 and a message
# that names the file, in every view, and not crash (the window's screenshot
# of a bad file once freed an uninitialized GError). PyTorch's files (the
# fixtures): the window on a memory snapshot and the compare window of two
# torch.profiler traces draw what they draw of the traces `gtrace import`
# writes, and bad ones fail like bad traces (pytorch_view.sh does the
# headless views). Screenshots land in
# $GV_SHOT_DIR (default: the build's viewer/screenshots). One Xvfb serves the
# whole test, on a display it picks itself, with openbox as its window
# manager. Skips (77) only without Xvfb, openbox or xdotool.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
B="$GT_TOP_BUILDDIR"
VIEW="$B/viewer/gtrace-view"
GTRACE="$B/libtrace/cli/gtrace"
for f in "$VIEW" "$GTRACE" "$B/tests/unit/test_viewer_ui" "$B/tests/unit/test_viewer_window" \
    "$B/tests/unit/test_viewer_layout" "$B/tests/unit/test_viewer_details" "$B/tests/unit/test_viewer_memsnap" \
    "$B/tests/unit/test_viewer_compare"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-viewer.XXXXXX") || exit 99
fail() { echo "FAIL: $*"; exit 1; }
. "$(dirname "$0")/viewer_display.sh"
gv_display "$WORK" --wm
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

"$B/tests/unit/test_viewer_ui" || fail "test_viewer_ui"
"$B/tests/unit/test_viewer_window" || fail "test_viewer_window"
"$B/tests/unit/test_viewer_layout" || fail "test_viewer_layout"
"$B/tests/unit/test_viewer_details" || fail "test_viewer_details"
"$B/tests/unit/test_viewer_memsnap" || fail "test_viewer_memsnap"
"$B/tests/unit/test_viewer_compare" || fail "test_viewer_compare"

is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
shoot() { # name, args...
    name=$1; shift
    "$VIEW" --screenshot "$GV_SHOT_DIR/$name" "$@" >"$WORK/out" 2>&1 ||
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
    { is_png "$WORK/tl.png" && is_png "$WORK/mem.png"; } || fail "headless screenshots are not PNGs"
fi
# gtrace view finds gtrace-view
"$GTRACE" view --screenshot "$WORK/cli.png" --view timeline "$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite" ||
    fail "gtrace view"
is_png "$WORK/cli.png" || fail "gtrace view wrote no PNG"

# PyTorch's files, imported on the fly into temporaries removed at exit. Run
# from folders that give the files and their imports the same names, so the
# titles match and the pictures can be compared byte for byte.
FX="$GT_FIXTURES/pytorch"
mkdir "$WORK/given" "$WORK/imported" "$WORK/tmp"
cp "$FX/plain.json" "$WORK/given/plain.json"
cp "$(ls "$FX"/mlp_1rank/*.pt.trace.json.gz | head -n 1)" "$WORK/given/mlp.json.gz"
cp "$FX/snapshot_p4.pickle" "$WORK/given/p4.pickle"
for f in plain.json mlp.json.gz p4.pickle; do
    "$GTRACE" import "$WORK/given/$f" -o "$WORK/imported/$f" >/dev/null || fail "gtrace import $f"
done
pt_window() { # png dir files...
    png=$1 dir=$2; shift 2
    (cd "$WORK/$dir" && TMPDIR="$WORK/tmp" "$VIEW" --screenshot "$WORK/$png" "$@") >"$WORK/out" 2>&1 ||
        { cat "$WORK/out"; fail "gtrace-view $* (in $dir)"; }
    is_png "$WORK/$png" || fail "$png is not a PNG"
}
pt_window pt-snap.png given p4.pickle
pt_window pt-snap-trace.png imported p4.pickle
cmp -s "$WORK/pt-snap.png" "$WORK/pt-snap-trace.png" || fail "the window on p4.pickle differs from that on its import"
pt_window pt-cmp.png given plain.json mlp.json.gz
[ "$(grep -c "imported as a torch.profiler trace" "$WORK/out")" -eq 2 ] || { cat "$WORK/out"; fail "compare: not both imported"; }
pt_window pt-cmp-trace.png imported plain.json mlp.json.gz
cmp -s "$WORK/pt-cmp.png" "$WORK/pt-cmp-trace.png" || fail "the compare window of two JSON files differs from that of their imports"
[ -z "$(ls -A "$WORK/tmp")" ] || fail "temporary traces left: $(ls "$WORK/tmp")"
cp "$WORK/pt-cmp.png" "$GV_SHOT_DIR/viewer-pytorch-compare.png"
echo "ok: the window on a snapshot and the compare window of two torch.profiler traces = those of their imports"
head -c 40000 "$FX/plain.json" >"$WORK/cut.json"

# Bad files: exit 1 with the file's name in the message, never a crash, in
# every view and beside a good trace in the compare window; the screenshot
# file already there is left as it was.
printf 'not a trace\n' >"$WORK/garbage.sqlite"
head -c 9000 "$GT_FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite" >"$WORK/truncated.sqlite"
good="$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"
echo "kept" >"$WORK/bad.png"
for f in "$WORK/garbage.sqlite" "$WORK/truncated.sqlite" "$WORK/missing.sqlite" "$WORK/cut.json" \
    "$FX/evil_global.pickle"; do
    for view in timeline memory window compare; do
        case $view in
            compare) "$VIEW" --screenshot "$WORK/bad.png" "$good" "$f" >"$WORK/err" 2>&1 ;;
            *) "$VIEW" --screenshot "$WORK/bad.png" --view $view "$f" >"$WORK/err" 2>&1 ;;
        esac
        rc=$?
        [ $rc -eq 1 ] || { cat "$WORK/err"; fail "gtrace-view on $f ($view) exited $rc, not 1"; }
        grep -q "$f" "$WORK/err" || { cat "$WORK/err"; fail "the error does not name $f ($view)"; }
        [ "$(cat "$WORK/bad.png")" = kept ] || fail "gtrace-view on $f ($view) overwrote the screenshot file"
    done
    echo "ok: $(head -1 "$WORK/err")"
done
"$VIEW" --size 10x10 x.sqlite >/dev/null 2>&1; [ $? -eq 2 ] || fail "a bad --size is not a usage error"
echo "ok: gtrace-view"
