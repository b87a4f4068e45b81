#!/bin/sh
# pytorch_open.sh: `gtrace report|diff|memory|export` take PyTorch's own files
# (a torch.profiler JSON trace, a CUDA memory snapshot pickle) where a trace
# goes: each is imported into a temporary trace, which is gone when gtrace
# exits, and the answers are those on the trace `gtrace import` writes.
# Bad files get one line and no temporary trace is left.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
FX="$GT_FIXTURES/pytorch"
[ -r "$FX/plain.json" ] && [ -r "$FX/snapshot_p4.pickle" ] || { echo "fixtures missing under $FX"; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "python3 is needed to compare JSON"; exit 99; }
mkdir tmp
TMPDIR="$WORK/tmp"
export TMPDIR
no_temps() { expect_eq "temporary traces left after $1" 0 "$(ls -A tmp | wc -l | tr -d ' ')"; }

"$GTRACE" import "$FX/plain.json" -o plain.sqlite > /dev/null || fail "import plain.json"
"$GTRACE" import "$FX/snapshot_p4.pickle" -o p4.sqlite > /dev/null || fail "import snapshot_p4.pickle"

# ---- report: the same JSON as on the imported trace, but for the path ------------------
"$GTRACE" report --json "$FX/plain.json" > direct.json 2> err.txt || fail "report plain.json: $(cat err.txt)"
grep -q "imported as a torch.profiler trace" err.txt || fail "report does not say it imported: $(cat err.txt)"
"$GTRACE" report --json plain.sqlite > imported.json || fail "report plain.sqlite"
python3 - direct.json imported.json <<'PY' || fail "report on plain.json differs from report on its import"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
a.pop("path"); b.pop("path")
assert a == b, [k for k in a if a[k] != b.get(k)]
assert sum(a["events"].values()) > 0, a["events"]
print("ok: report on plain.json = report on its import (%d events)" % sum(a["events"].values()))
PY
no_temps report

# ---- diff: a file against its own import changes nothing ------------------------------
"$GTRACE" diff --json "$FX/plain.json" plain.sqlite > diff.json 2> err.txt || fail "diff: $(cat err.txt)"
python3 - diff.json <<'PY' || fail "diff of plain.json against its import is not all the same"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert rows and all(r["verdict"] == "same" for r in rows), [r for r in rows if r["verdict"] != "same"]
assert d["before"].endswith("plain.json"), "diff names %s, not the file given" % d["before"]
print("ok: diff plain.json against its import: %d rows, all the same" % len(rows))
PY
no_temps diff

# ---- memory and export on a snapshot ---------------------------------------------------
"$GTRACE" export "$FX/snapshot_p4.pickle" --format csv -o direct.csv 2> err.txt || fail "export: $(cat err.txt)"
"$GTRACE" export p4.sqlite --format csv -o imported.csv || fail "export p4.sqlite"
# (a CSV export is a folder of tables)
[ -n "$(ls direct.csv)" ] || fail "the export of the snapshot is empty"
diff -r direct.csv imported.csv > /dev/null || fail "export of the snapshot differs from export of its import"
echo "ok: export of snapshot_p4.pickle = export of its import ($(ls direct.csv | tr '\n' ' '))"
"$GTRACE" memory "$FX/snapshot_p4.pickle" --at 1000s > direct.txt 2> err.txt || fail "memory: $(cat err.txt)"
"$GTRACE" memory p4.sqlite --at 1000s > imported.txt || fail "memory on p4.sqlite"
grep -q "allocated 8.00 MiB, reserved 22.00 MiB" direct.txt || fail "memory on the snapshot: $(head -n 1 direct.txt)"
cmp -s direct.txt imported.txt || fail "memory on the snapshot differs from memory on its import"
echo "ok: memory on snapshot_p4.pickle = memory on its import: $(head -n 1 direct.txt)"
no_temps "export and memory"

# ---- bad files ----------------------------------------------------------------------------
head -c 40000 "$FX/plain.json" > cut.json
"$GTRACE" report cut.json > out.txt 2> err.txt && fail "a truncated JSON accepted"
[ "$?" -eq 1 ] || fail "a truncated JSON: exit status not 1"
grep -q "cut.json" err.txt || fail "a truncated JSON: the file is not named: $(cat err.txt)"
expect_eq "a truncated JSON: lines of error" 1 "$(grep -vc "imported as" err.txt)"
no_temps "a truncated JSON"
printf 'hello\n' > text.txt
"$GTRACE" report text.txt > out.txt 2> err.txt && fail "a text file accepted"
expect_eq "a text file: lines of error" 1 "$(wc -l < err.txt | tr -d ' ')"
no_temps "a text file"
echo "PASS"
