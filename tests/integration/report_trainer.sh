#!/bin/sh
# report_trainer.sh: gtrace on the trainer's CPU backend, then gtrace report.
# The backend marks each op as an NVTX range of its "compute" category, so the
# report has the shape of a GPU trace's: 20 steps, the CPU ops as the device
# timeline with busy time, idle gaps, and matmul ops among the top ops; the
# same in --json. Skips (77) without the fortunes package (the trainer's
# default data) or python3 (to read the JSON).
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
data=/usr/share/games/fortunes
[ -d "$data" ] || { echo "skip: $data is missing (apt-get install fortunes)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not found"; exit 77; }
for f in "$GTRACE" "$TRAINER"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-report-trainer.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$GTRACE" -o "$WORK/t.sqlite" "$TRAINER" --model gpt-tiny --steps 20 --eval-every 0 >"$WORK/run.log" 2>&1 ||
    { cat "$WORK/run.log"; fail "gtrace on the trainer exited non-zero"; }
"$GTRACE" report "$WORK/t.sqlite" >"$WORK/report.txt" 2>&1 ||
    { cat "$WORK/report.txt"; fail "gtrace report exited non-zero"; }
cat "$WORK/report.txt"
grep -q 'steps 0\.\.19 (20)' "$WORK/report.txt" || fail "the text report does not list steps 0..19 (20)"
grep -q 'CPU compute ops stand in for kernels' "$WORK/report.txt" || fail "the text report does not say CPU ops stand in for kernels"
grep -q '^cpu ops .*busy' "$WORK/report.txt" || fail "no 'cpu ops ... busy' line"
grep -q 'no device activity' "$WORK/report.txt" && fail "the text report says there is no device activity"
grep -q '^top CPU ops' "$WORK/report.txt" || fail "no 'top CPU ops' table"

"$GTRACE" report --json "$WORK/t.sqlite" >"$WORK/report.json" 2>&1 ||
    { cat "$WORK/report.json"; fail "gtrace report --json exited non-zero"; }
python3 - "$WORK/report.json" <<'PY' || fail "the JSON report is not what a CPU trace gives"
import json, sys
r = json.load(open(sys.argv[1]))
ok = True
def check(what, cond, got):
    global ok
    print(("ok: " if cond else "FAIL: ") + what + ": " + repr(got))
    ok = ok and cond
check("cpu_timeline", r["cpu_timeline"] is True, r["cpu_timeline"])
check("20 steps numbered 0..19", [s["number"] for s in r["steps"]] == list(range(20)), len(r["steps"]))
devs = r["devices"]
check("one CPU timeline (device -1)", len(devs) == 1 and devs[0]["device_id"] == -1, devs)
check("busy time > 0", len(devs) == 1 and devs[0]["busy_ns"] > 0, devs[0]["busy_ns"] if devs else None)
check("busy time within steps > 0", all(s["busy_ns"] > 0 for s in r["steps"]), [s["busy_ns"] for s in r["steps"][:3]])
names = [k["name"] for k in r["kernels"]]
check("matmul ops among the top ops", "matmul_forward" in names and "matmul_backward" in names, names)
check("phases are not ops", not any(n in ("forward", "backward", "optimizer", "data") or n.startswith("step ")
                                    for n in names), names)
check("gaps counted", r["gaps"]["n"] > 0, r["gaps"]["n"])
sys.exit(0 if ok else 1)
PY
echo "ok: gtrace report on the CPU trainer"
