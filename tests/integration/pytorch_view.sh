#!/bin/sh
# pytorch_view.sh: gtrace-view opens PyTorch's own files (the fixtures: a
# torch.profiler JSON, plain and gzipped, a CUDA memory snapshot pickle) as
# `gtrace report` does: each is imported into a temporary trace that is gone
# when the viewer exits, and what it draws is what it draws of the trace
# `gtrace import` writes, pixel for pixel (the headless timeline and memory
# views; viewer_ui.sh does the window and the compare window under Xvfb).
# Bad files (truncated, hostile, not PyTorch's) fail with exit 1 and one
# line naming the file, and leave no temporary behind.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
B="$GT_TOP_BUILDDIR"
VIEW="$B/viewer/gtrace-view"
GTRACE="$B/libtrace/cli/gtrace"
FX="$GT_FIXTURES/pytorch"
for f in "$VIEW" "$GTRACE"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
[ -r "$FX/plain.json" ] && [ -r "$FX/snapshot_p4.pickle" ] || { echo "fixtures missing under $FX"; exit 99; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-pytorch-view.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99
fail() { echo "FAIL: $*"; exit 1; }
mkdir tmp
TMPDIR="$WORK/tmp"
export TMPDIR
no_temps() { [ -z "$(ls -A "$WORK/tmp")" ] || fail "temporary traces left after $1: $(ls "$WORK/tmp")"; }
is_png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }

# The files, and the traces `gtrace import` makes of them.
GZ=$(ls "$FX"/mlp_1rank/*.pt.trace.json.gz | head -n 1)
mkdir given imported
cp "$FX/plain.json" given/plain.json
cp "$GZ" given/mlp.json.gz
cp "$FX/snapshot_p4.pickle" given/p4.pickle
for f in plain.json mlp.json.gz p4.pickle; do
    "$GTRACE" import "given/$f" -o "imported/$f" >/dev/null || fail "gtrace import $f"
done
no_temps "gtrace import"

# ---- --help says so ----------------------------------------------------------------
"$VIEW" --help | grep -q "torch.profiler JSON trace" || fail "gtrace-view --help does not name PyTorch's files"

# ---- headless views: the file's pixels are its import's ------------------------------
for f in plain.json mlp.json.gz p4.pickle; do
    for view in timeline memory; do
        "$VIEW" --screenshot "$f.$view.png" --view $view "given/$f" >out.txt 2>err.txt ||
            { cat err.txt; fail "gtrace-view --view $view $f"; }
        grep -q "given/$f: imported as a" err.txt || fail "gtrace-view does not say it imported $f: $(cat err.txt)"
        "$VIEW" --screenshot "$f.$view.trace.png" --view $view "imported/$f" >out.txt 2>&1 ||
            { cat out.txt; fail "gtrace-view --view $view on the import of $f"; }
        is_png "$f.$view.png" || fail "$f.$view.png is not a PNG"
        cmp -s "$f.$view.png" "$f.$view.trace.png" || fail "the $view view of $f differs from that of its import"
        no_temps "gtrace-view --view $view $f"
    done
    echo "ok: headless timeline and memory of $f = those of its import"
done
# ... and they show something: each file draws its own picture.
cmp -s plain.json.timeline.png mlp.json.gz.timeline.png && fail "plain.json and mlp.json.gz draw the same timeline"
cmp -s plain.json.memory.png p4.pickle.memory.png && fail "plain.json and p4.pickle draw the same memory"
echo "ok: the three files draw three different pictures"

# ---- bad files: exit 1, one line naming the file, the screenshot file kept -----------
head -c 40000 "$FX/plain.json" >cut.json
printf 'hello\n' >text.txt
echo kept >bad.png
for f in cut.json "$FX/truncated.pickle" "$FX/evil_global.pickle" "$FX/huge_length.pickle" text.txt; do
    for view in timeline memory; do
        "$VIEW" --screenshot bad.png --view $view "$f" >out.txt 2>err.txt
        rc=$?
        [ $rc -eq 1 ] || { cat err.txt; fail "gtrace-view on $f ($view) exited $rc, not 1"; }
        errs=$(grep -v "imported as a" err.txt)
        [ "$(printf '%s\n' "$errs" | wc -l)" -eq 1 ] || { cat err.txt; fail "$f ($view): not one line of error"; }
        case $errs in *"$f"*) ;; *) fail "the error does not name $f ($view): $errs" ;; esac
        [ "$(cat bad.png)" = kept ] || fail "gtrace-view on $f ($view) overwrote the screenshot file"
        no_temps "$f ($view)"
    done
    echo "ok: $errs"
done
echo "PASS"
