#!/bin/sh
# pytorch_fast.sh: the common module call in C (libtrace/python/fast.c)
# changes nothing but its cost. Under `gtrace --pytorch` a build with
# Python's headers puts it under Module.__call__ (Module.__call__ stays a
# Python function: what torch.compile reads); with GTRACE_TORCH_FAST=none
# the Python wrapper does all. On the CNN of pytorch_train.py (backward
# ranges on steps 0-2 and 3, 6: both paths in one run; in-place ReLUs; a
# forward that raises at step 4, caught) and on pytorch_threads.py (forwards
# on 8 threads, then steps) the two give the same losses, bit for bit, and
# the same ranges: each name as often, in the same parent, also where a
# backward raises (the phases' calls and the optimizer's step hooks run in C
# too). A module's error leaves through the C path with no frame of
# gtrace's in its traceback.
# With ops, an ATen op seen before runs in C too (the dispatch mode's
# __torch_dispatch__ is fast.c's): the same ops, as often, in the same
# module ranges, with modules or alone.
# Skipped (77) without python3-torch or without the C module (no python3-dev).
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
FAST="$GT_TOP_BUILDDIR/libtrace/python/.libs/_gtrace_fast.so"
[ -f "$FAST" ] || { echo "SKIP: no C module wrapper in this build (configure found no Python.h)"; exit 77; }
# the ops of the dispatch mode, whose two paths this compares (a torch with
# ITT would name them through it: pytorch_itt.sh)
GTRACE_TORCH_OPS=dispatch
export GTRACE_TORCH_OPS

# Which wrapper runs, and the traceback of a module error (no backward
# ranges: the calls are the common ones).
cat > probe.py <<'PY'
import traceback
import torch
from gtrace_torch import hooks
m = torch.nn.Sequential(torch.nn.Linear(4, 4))
m(torch.randn(2, 4))
try:
    m(torch.randn(2, 5))
except RuntimeError:
    tb = traceback.format_exc()
print("fast", hooks._fast is not None, "function", type(torch.nn.Module.__call__).__name__,
      "gtrace frames", tb.count("gtrace_torch"))
mode = getattr(hooks, "_op_mode", None)
if mode is not None:
    print("ops dispatch", mode.__torch_dispatch__.__func__.__name__)
PY
"$GTRACE" --pytorch=steps,modules,backward-every=0 --force -o probe.sqlite "$PY" probe.py > probe.txt 2> err.txt ||
    fail "probe: $(cat err.txt)"
expect_eq "the C path, Module.__call__ a function, no gtrace frame" "fast True function function gtrace frames 0" \
    "$(cat probe.txt)"
GTRACE_TORCH_FAST=none "$GTRACE" --pytorch --force -o probe.sqlite "$PY" probe.py > probe.txt 2> err.txt ||
    fail "probe, GTRACE_TORCH_FAST=none: $(cat err.txt)"
case $(cat probe.txt) in "fast False function function"*) ;; *) fail "GTRACE_TORCH_FAST=none: $(cat probe.txt)" ;; esac
for f in steps,modules,ops ops; do
    "$GTRACE" --pytorch=$f --force -o probe.sqlite "$PY" probe.py > probe.txt 2> err.txt || fail "probe, $f: $(cat err.txt)"
    expect_eq "$f: the ops' dispatch in C" "ops dispatch op_dispatch" "$(sed -n 's/^ops dispatch/&/p' probe.txt)"
    GTRACE_TORCH_FAST=none "$GTRACE" --pytorch=$f --force -o probe.sqlite "$PY" probe.py > probe.txt 2> err.txt ||
        fail "probe, $f, GTRACE_TORCH_FAST=none: $(cat err.txt)"
    expect_eq "$f, GTRACE_TORCH_FAST=none: the ops' dispatch in Python" "ops dispatch dispatch" \
        "$(sed -n 's/^ops dispatch/&/p' probe.txt)"
done
echo "ok: the C path is used, and GTRACE_TORCH_FAST=none turns it off"

# tree TRACE: "name|parent|count" of every range (ranges nest per thread)
tree() {
    "$PY" - "$1" <<'PY'
import collections, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("""SELECT n.globalTid, n.start, n."end",
    coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId))
    FROM NVTX_EVENTS n WHERE n.eventType = 59 ORDER BY n.globalTid, n.start, n."end" DESC""").fetchall()
got, stack = collections.Counter(), []
for tid, start, end, name in rows:
    while stack and (stack[-1][0] != tid or stack[-1][1] < end):
        stack.pop()
    got[(name, stack[-1][2] if stack else "")] += 1
    stack.append((tid, end, name))
for (name, parent), n in sorted(got.items()):
    print("%s|%s|%d" % (name, parent, n))
PY
}

# same TAG FEATURES SCRIPT ARGS...: C and Python wrappers, the same run
same() {
    tag=$1 features=$2
    shift 2
    "$GTRACE" --pytorch="$features" -o "c-$tag.sqlite" "$PY" "$@" > c.txt 2> err.txt || fail "$tag, C: $(cat err.txt)"
    GTRACE_TORCH_FAST=none "$GTRACE" --pytorch="$features" -o "py-$tag.sqlite" "$PY" "$@" > py.txt 2> err.txt ||
        fail "$tag, Python: $(cat err.txt)"
    sed -i '/ tid [0-9]/d' c.txt py.txt  # pytorch_threads.py names its threads' ids
    cmp -s c.txt py.txt || { diff c.txt py.txt; fail "$tag: the program's output differs"; }
    tree "c-$tag.sqlite" > c-tree.txt
    tree "py-$tag.sqlite" > py-tree.txt
    [ -s c-tree.txt ] || fail "$tag: no ranges"
    cmp -s c-tree.txt py-tree.txt || { diff c-tree.txt py-tree.txt | head -20; fail "$tag: the ranges differ"; }
    echo "ok: $tag: the same output and the same $(wc -l < c-tree.txt) range names and parents with either wrapper"
}

same cnn steps,modules,backward-every=3 "$TRAIN" --steps 8 --inplace --losses --fail-forward-at 4
grep -q "forward failed at step 4" c.txt || fail "the forward did not fail: $(cat c.txt)"
n=$(count_of c-cnn.sqlite 'Net backward')
[ "$n" -gt 0 ] && [ "$n" -lt 8 ] || fail "$n steps of 8 with backward ranges: not both paths"
# a backward that raises, on a step without backward ranges (5) and on one with them (6)
same backward-fails-5 steps,modules,backward-every=3 "$TRAIN" --steps 8 --losses --fail-backward-at 5
grep -q "backward failed at step 5" c.txt || fail "the backward did not fail: $(cat c.txt)"
same backward-fails-6 steps,modules,backward-every=3 "$TRAIN" --steps 8 --losses --fail-backward-at 6
same modules-alone modules "$TRAIN" --steps 3 --losses
same steps-alone steps "$TRAIN" --steps 3 --losses
same threads steps,modules "$GT_TOP_SRCDIR/tests/integration/pytorch_threads.py" --threads 8 --forwards 5 --steps 3
same ops steps,modules,ops "$TRAIN" --steps 3 --losses --inplace
n=$(q c-ops.sqlite "SELECT count(*) FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId
                    WHERE coalesce(n.text, s.value) LIKE 'aten::%'")
[ "$n" -gt 100 ] || fail "$n ATen op ranges with ops"
same ops-alone ops "$TRAIN" --steps 2 --losses
