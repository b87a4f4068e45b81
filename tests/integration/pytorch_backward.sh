#!/bin/sh
# pytorch_backward.sh: `gtrace --pytorch` marks each module's backward as
# well as its forward, without changing what the program computes: the CNN
# of pytorch_train.py with in-place ReLU modules (which full backward hooks
# on modules break) trains to the same losses, bit for bit, with and without
# the marks, and the trace has a range "NAME backward" for every module call
# of every step, nested as the modules are: "features.0.conv backward" in
# "features.0 backward" in "features backward" in "Net backward", the model
# and the loss in the step's "backward" phase. With modules alone (no
# steps) the same ranges, without the phase. A backward that raises (a hook
# on the model's output) leaves no range open: the ranges of the steps after
# it nest as before; nor does a module's forward that raises, and torch
# holds no global module hook. Runs on Debian's python3-torch
# (1.13); GT_PYTORCH_PYTHONS may name more Pythons with torch (a 2.x in a
# virtual environment), each checked the same way.
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
STEPS=4

# check PYTHON TAG FEATURES: the losses with and without the marks, the ranges.
check() {
    py=$1 tag=$2 features=$3
    "$GTRACE" -o "plain-$tag.sqlite" "$py" "$TRAIN" --steps $STEPS --inplace --losses > plain.txt 2> err.txt ||
        fail "$tag: without --pytorch: $(cat err.txt)"
    "$GTRACE" --pytorch="$features" -o "marked-$tag.sqlite" "$py" "$TRAIN" --steps $STEPS --inplace --losses \
        > marked.txt 2> err.txt || fail "$tag: --pytorch=$features: $(cat err.txt)"
    grep -q "annotations are off" err.txt && fail "$tag: the hooks were not installed: $(cat err.txt)"
    expect_eq "$tag: steps trained" $STEPS "$(grep -c '^loss ' marked.txt)"
    cmp -s plain.txt marked.txt || { diff plain.txt marked.txt; fail "$tag: the losses differ with the marks"; }
    echo "ok: $tag: the same losses with and without --pytorch=$features: $(grep '^loss' marked.txt | tr '\n' ' ')"
    ranges "$py" "marked-$tag.sqlite" "$features" $STEPS 0 || fail "$tag: the backward ranges"
}

# ranges PYTHON TRACE FEATURES STEPS FAILED: every module's backward range in
# its parent's; STEPS of each, and up to FAILED more (a backward that raised).
ranges() {
    "$1" - "$2" "$3" "$4" "$5" <<'PY'
import collections, sqlite3, sys
db, features, steps, failed = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4])
c = sqlite3.connect(db)
rows = c.execute("""SELECT n.globalTid, n.start, n."end",
    coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId))
    FROM NVTX_EVENTS n WHERE n.eventType = 59 ORDER BY n.globalTid, n.start, n."end" DESC""").fetchall()
parent = {}
stack = []
for tid, start, end, name in rows:  # the innermost range around each (ranges nest per thread)
    while stack and (stack[-1][0] != tid or stack[-1][2] < end):
        stack.pop()
    parent[(tid, start, end, name)] = stack[-1][3] if stack else None
    stack.append((tid, start, end, name))
modules = ["Net", "features", "features.0", "features.0.conv", "features.0.norm", "features.0.relu",
           "features.1", "features.1.conv", "features.1.norm", "features.1.relu", "head", "CrossEntropyLoss"]
def expected_parent(m):
    if m in ("Net", "CrossEntropyLoss"):
        return "backward" if "steps" in features else None
    return ("Net" if "." not in m else m.rsplit(".", 1)[0]) + " backward"
got = collections.Counter()
bad = []
for (tid, start, end, name), p in parent.items():
    if name.endswith(" backward"):
        m = name[:-len(" backward")]
        got[m] += 1
        if p != expected_parent(m):
            bad.append("%s in %s" % (name, p))
for m in modules:
    assert steps <= got[m] <= steps + failed, "%d ranges '%s backward', not %d" % (got[m], m, steps)
assert sorted(got) == sorted(modules), sorted(set(got) - set(modules))
assert not bad, bad[:5]
print("ok: %d ranges 'NAME backward' for %d modules, each in its parent's" % (sum(got.values()), len(modules)))
PY
}

check "$PY" "torch-$("$PY" -c 'import torch; print(torch.__version__)')" steps,modules
check "$PY" "modules-alone" modules

# A backward that raises half-way, caught by the program, which goes on.
"$GTRACE" --pytorch -o failed.sqlite "$PY" "$TRAIN" --steps $STEPS --inplace --fail-backward-at 1 > out.txt 2> err.txt ||
    fail "a failed backward: $(cat err.txt)"
grep -q "backward failed at step 1" out.txt || fail "the backward did not fail: $(cat out.txt)"
ranges "$PY" failed.sqlite steps,modules $STEPS 1 || fail "the ranges after a failed backward"
expect_eq "backward phases (one failed)" $((STEPS + 1)) "$(count_of failed.sqlite backward)"

# forward PYTHON TAG: a module's forward that raises inside the model's,
# caught by the program, which goes on: every module range of the run is in
# its caller's (the model's and the loss's in the "forward" phase), those of
# the failed call included; and torch holds no global module hook (which
# would send every module call through its slow path).
forward() {
    py=$1 tag=$2
    "$GTRACE" --pytorch -o fwd-$tag.sqlite "$py" "$TRAIN" --steps $STEPS --inplace --fail-forward-at 1 \
        --global-hooks > out.txt 2> err.txt || fail "$tag: a failed forward: $(cat err.txt)"
    grep -q "forward failed at step 1" out.txt || fail "$tag: the forward did not fail: $(cat out.txt)"
    expect_eq "$tag: global module hooks" "global module hooks 0" "$(grep '^global module hooks' out.txt)"
    "$py" - fwd-$tag.sqlite $STEPS <<'PY' || fail "$tag: the forward ranges after a failed forward"
import collections, sqlite3, sys
db, steps = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
rows = c.execute("""SELECT n.globalTid, n.start, n."end",
    coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId))
    FROM NVTX_EVENTS n WHERE n.eventType = 59 ORDER BY n.globalTid, n.start, n."end" DESC""").fetchall()
stack, got, bad = [], collections.Counter(), []
for tid, start, end, name in rows:
    while stack and (stack[-1][0] != tid or stack[-1][2] < end):
        stack.pop()
    p = stack[-1][3] if stack else None
    stack.append((tid, start, end, name))
    if name.endswith(" backward") or name in ("forward", "backward", "data", "optimizer") or name.startswith("step "):
        continue
    got[name] += 1
    want = "forward" if name in ("Net", "CrossEntropyLoss") else name.rsplit(".", 1)[0] if "." in name else "Net"
    if p != want:
        bad.append("%s in %s" % (name, p))
assert not bad, bad[:5]
# the steps, the failed call, the evaluation after the last step
assert got["Net"] == steps + 2 and got["features.1"] == steps + 2, dict(got)
assert got["features.1.conv"] == steps + 1 and got["head"] == steps + 1, dict(got)
print("ok: %d module ranges, each in its caller's, after a failed forward" % sum(got.values()))
PY
}
forward "$PY" "torch-$("$PY" -c 'import torch; print(torch.__version__)')"

for py in ${GT_PYTORCH_PYTHONS:-}; do
    "$py" -c "import torch" 2>/dev/null || fail "GT_PYTORCH_PYTHONS: $py cannot import torch"
    tag="torch-$("$py" -c 'import torch; print(torch.__version__)' 2>/dev/null)"
    check "$py" "$tag" steps,modules
    forward "$py" "$tag"
done
echo "PASS"
