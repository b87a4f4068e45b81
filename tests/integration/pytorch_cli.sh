#!/bin/sh
# pytorch_cli.sh: `gtrace --pytorch` at its edges: a bad list is refused with
# one line before anything runs; a program that never steps an optimizer still
# gets its module ranges (and no steps); a program that raises exits as it
# would without gtrace, with the steps it finished in the trace; a Python
# program without torch runs untouched; the sitecustomize gtrace's package
# shadows still runs.
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"

# ---- bad lists ------------------------------------------------------------------
for bad in bogus "" "steps,,ops" "steps,bogus" "STEPS"; do
    "$GTRACE" --pytorch="$bad" -o bad.sqlite sh -c 'touch ran' > out.txt 2> err.txt && fail "--pytorch='$bad' accepted"
    st=$?
    [ "$st" -ne 0 ] || fail "--pytorch='$bad': exit 0"
    expect_eq "--pytorch='$bad': lines of error" 1 "$(wc -l < err.txt | tr -d ' ')"
    grep -q "expected a comma-separated list of steps, modules, ops, shapes" err.txt ||
        fail "--pytorch='$bad': unclear error: $(cat err.txt)"
    [ ! -e ran ] && [ ! -e bad.sqlite ] || fail "--pytorch='$bad': the program ran"
    echo "ok: --pytorch='$bad' refused ($st): $(cat err.txt)"
done
GTRACE_PYTHON_DIR=/nonexistent "$GTRACE" --pytorch -o bad.sqlite sh -c 'touch ran' > out.txt 2> err.txt &&
    fail "a missing package accepted"
expect_eq "a missing package: lines of error" 1 "$(wc -l < err.txt | tr -d ' ')"
grep -q "GTRACE_PYTHON_DIR=/nonexistent" err.txt || fail "a missing package: $(cat err.txt)"
[ ! -e ran ] || fail "a missing package: the program ran"

# ---- no optimizer: modules, no steps ------------------------------------------------
"$GTRACE" --pytorch -o noopt.sqlite "$PY" "$TRAIN" --steps 3 --no-optimizer > out.txt 2> err.txt ||
    fail "no optimizer: $(cat err.txt)"
"$GTRACE" report --json noopt.sqlite > r.json || fail "report --json, no optimizer"
expect_eq "steps without an optimizer" 0 "$(steps_of r.json)"
expect_eq "features.0.conv without an optimizer" 4 "$(count_of noopt.sqlite features.0.conv)"
expect_eq "head without an optimizer" 4 "$(count_of noopt.sqlite head)"
"$GTRACE" --pytorch=modules -o modules.sqlite "$PY" "$TRAIN" --steps 2 > out.txt 2> err.txt ||
    fail "--pytorch=modules: $(cat err.txt)"
expect_eq "steps with modules alone" 0 "$(q modules.sqlite "SELECT count(*) FROM NVTX_EVENTS n WHERE $NT LIKE 'step %'")"
expect_eq "forward phases with modules alone" 0 "$(count_of modules.sqlite forward)"
expect_eq "Net with modules alone" 3 "$(count_of modules.sqlite Net)"

# ---- a program that raises ----------------------------------------------------------
"$GTRACE" --pytorch -o raise.sqlite "$PY" "$TRAIN" --steps 5 --raise-at 3 > out.txt 2> err.txt &&
    fail "a raising program: gtrace exited 0"
expect_eq "exit status of a raising program" 1 "$?"
grep -q "stopped at step 3 on purpose" err.txt || fail "the traceback is lost: $(cat err.txt)"
"$GTRACE" report --json raise.sqlite > r.json || fail "report --json on the raising program"
expect_eq "steps finished before the raise" 3 "$(steps_of r.json)"
"$GTRACE" --pytorch -o exit7.sqlite "$PY" -c "import torch, sys; sys.exit(7)" > out.txt 2> err.txt
expect_eq "exit status of sys.exit(7)" 7 "$?"

# ---- Python without torch; a shadowed sitecustomize ----------------------------------
mkdir site
printf 'import os\nos.environ["SITE_MARK"] = "chained"\n' > site/sitecustomize.py
PYTHONPATH="$PWD/site" "$GTRACE" --pytorch -o plain.sqlite "$PY" -c '
import os, sys
print(os.environ.get("SITE_MARK"), "torch" in sys.modules, any("gtrace_torch" in m for m in sys.modules))
print(any(p.endswith("libtrace/python") or p.endswith("gtrace/python") for p in sys.path))
' > out.txt 2> err.txt || fail "a program without torch: $(cat err.txt)"
expect_eq "without torch: the shadowed sitecustomize ran, torch not imported" "chained False True" "$(sed -n 1p out.txt)"
expect_eq "without torch: gtrace's folder left sys.path" "False" "$(sed -n 2p out.txt)"
grep -q "annotations are off" err.txt && fail "without torch: $(cat err.txt)"
# ---- CUDA memory snapshots left in the parts folder go into the trace -----------
# (gtrace_torch/memory.py writes them on a GPU; here a shell stands in for the
# writer, so this checks the launcher's side only: one that is no pickle is
# named in one line, kept beside the trace, and the run is incomplete.
# pytorch_snapshot.sh has real ones.)
st=0
"$GTRACE" --pytorch -o snap.sqlite sh -c 'printf snapshot > "$GTRACE_PARTS_DIR/pytorch-42.pickle"
    printf "1 2\n" > "$GTRACE_PARTS_DIR/pytorch-42.clock"' > out.txt 2> err.txt || st=$?
expect_eq "snapshot hand-off: exit status" 3 "$st"
expect_eq "the snapshot beside the trace" snapshot "$(cat snap.sqlite.pytorch-42.pickle)"
grep -q "the CUDA memory snapshot pytorch-42.pickle is not in the trace (.*); kept as snap.sqlite.pytorch-42.pickle" \
    err.txt || fail "the snapshot is not named: $(cat err.txt)"
expect_eq "parts folders left behind" 0 "$(ls -a | grep -c '^\.gtrace-parts')"
echo "PASS"
