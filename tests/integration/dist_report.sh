#!/bin/sh
# dist_report.sh: gtrace report's Communication section on the distributed
# trainer. gtrace runs mpirun -np 2 trainer --dist ddp, then --dist fsdp
# --zero 3 (tiny model, 4 steps); both ranks land in one trace. Checked, on
# figures that hold whatever the timing:
#   - two ranks, each with its 4 steps; in every step and in the totals
#     overlap + exposed = communication, overlap <= compute, and the steps add
#     up to the rank's totals;
#   - the collectives of every step of every rank = the trainer's own count
#     per step;
#   - the trainer's exposed time per step (rank 0's training thread blocked in
#     waits) against the report's exposed time (communication while no compute
#     op runs): blocked time is exposed time, so it is not above the report's
#     (0.1 ms for rounding); the report's also holds the host work between
#     ops while a collective is in flight, a small part: the trainer's is at
#     least 40% of it (less 0.1 ms). The trace knows which process is rank 0
#     (mpirun's variables, recorded by the capture): the report lists ranks 0, 1;
#   - bytes (the NVTX payload of each collective) = the trainer's MiB sent
#     per step;
#   - the text report has the section, the advice lists the rule; gtrace diff
#     of the two runs has the communication rows.
# Skips (77) without Open MPI in this build, mpirun, the fortunes data or python3.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
grep -q '^#define HAVE_MPI 1' "$GT_TOP_BUILDDIR/config.h" || { echo "skip: built without Open MPI"; exit 77; }
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (apt-get install openmpi-bin)"; exit 77; }
data=/usr/share/games/fortunes
[ -d "$data" ] || { echo "skip: $data is missing (apt-get install fortunes)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not found"; exit 77; }
. "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
for f in "$GTRACE" "$TRAINER"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-dist-report.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
common="--model gpt-tiny --layers 2 --width 64 --steps 4 --batch 4 --threads 1 --workers 0 --eval-every 0 --log-every 1"
fails=0

for mode in ddp z3; do
    case $mode in
    ddp) flags="--dist ddp" ;;
    z3) flags="--dist fsdp --zero 3" ;;
    esac
    "$GTRACE" -o "$WORK/$mode.sqlite" mpirun --oversubscribe --bind-to none -np 2 "$TRAINER" $common $flags \
        >"$WORK/$mode.log" 2>&1 || { cat "$WORK/$mode.log"; echo "FAIL: gtrace mpirun trainer $flags"; exit 1; }
    line=$(grep 'trainer: communication per step:' "$WORK/$mode.log")
    echo "$line"
    [ -n "$line" ] || { cat "$WORK/$mode.log"; echo "FAIL: $mode: the trainer printed no communication line"; exit 1; }
    "$GTRACE" report "$WORK/$mode.sqlite" >"$WORK/$mode.txt" 2>&1 ||
        { cat "$WORK/$mode.txt"; echo "FAIL: gtrace report ($mode)"; exit 1; }
    sed -n '/^communication/,/^top /p' "$WORK/$mode.txt"
    grep -q '^communication  2 ranks: NVTX ranges of a "communication" category; compute: CPU ops' "$WORK/$mode.txt" ||
        { echo "FAIL: $mode: no Communication section for 2 ranks in the text report"; fails=1; }
    grep -q '^  rank 1 (pid [0-9]*) ' "$WORK/$mode.txt" || { echo "FAIL: $mode: the text report does not name rank 1"; fails=1; }
    "$GTRACE" report --json "$WORK/$mode.sqlite" >"$WORK/$mode.json" 2>&1 ||
        { cat "$WORK/$mode.json"; echo "FAIL: gtrace report --json ($mode)"; exit 1; }
    python3 - "$WORK/$mode.json" "$mode" "$line" <<'PY' || fails=1
import json, re, sys
r = json.load(open(sys.argv[1]))
mode, line = sys.argv[2], sys.argv[3]
m = re.search(r"per step: (\d+) collectives, ([0-9.]+) MiB sent, ([0-9.]+) ms in flight, ([0-9.]+) ms exposed", line)
n_coll, mib, flight_ms, exposed_ms = int(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))
ok = True
def check(what, cond, got):
    global ok
    print(("ok: " if cond else "FAIL: ") + mode + ": " + what + ": " + repr(got))
    ok = ok and cond
c = r["communication"]
ranks = c["ranks"]
check("two ranks, two processes", len(ranks) == 2 and len({k["pid"] for k in ranks}) == 2, [k["pid"] for k in ranks])
check("ranks 0 and 1 in order, from mpirun's variables", [k["rank"] for k in ranks] == [0, 1], [k["rank"] for k in ranks])
check("host communication (NVTX)", all(k["source"] == "nvtx" and k["device_id"] == -1 for k in ranks), None)
check("per step", c["per_step"] is True, c["per_step"])
sums = ("comm_ns", "compute_ns", "overlap_ns", "exposed_ns", "collectives", "bytes", "bytes_known")
for k in ranks:
    who = "rank %d (pid %d)" % (k["rank"], k["pid"])
    steps = k["steps"]
    check(who + ": its own steps 0..3", k["own_steps"] and [s["number"] for s in steps] == [0, 1, 2, 3],
          [s["number"] for s in steps])
    bad = [s for s in steps + [k] if s["overlap_ns"] + s["exposed_ns"] != s["comm_ns"] or
           s["overlap_ns"] > s["compute_ns"] or s["exposed_ns"] < 0 or s["comm_ns"] <= 0]
    check(who + ": overlap + exposed = comm > 0, overlap <= compute, in every step and the total", not bad, bad[:2])
    check(who + ": the steps add up to the totals",
          all(sum(s[f] for s in steps) == k[f] for f in sums), [(f, k[f]) for f in sums])
    check(who + ": %d collectives in every step, as the trainer counts" % n_coll,
          all(s["collectives"] == n_coll for s in steps), [s["collectives"] for s in steps])
    check(who + ": hidden = overlap / comm", abs(k["hidden"] - k["overlap_ns"] / k["comm_ns"]) < 1e-5, k["hidden"])
# rank 0's blocked time against each rank's exposed time, per step (ms)
e = ranks[0]["exposed_ns"] / 1e6 / len(ranks[0]["steps"])
check("the trainer's %.2f ms exposed per step (rank 0) within the report's exposed per step of rank 0" % exposed_ms,
      exposed_ms <= e + 0.1 and exposed_ms >= 0.4 * e - 0.1, "%.3f" % e)
check("bytes known for every collective (the trainer's NVTX payload)",
      all(k["bytes_known"] == k["collectives"] and k["collectives"] > 0 for k in ranks),
      [(k["bytes_known"], k["collectives"]) for k in ranks])
sent = ranks[0]["bytes"] / 1048576.0 / len(ranks[0]["steps"])
check("the trainer's %.2f MiB sent per step = rank 0's bytes per step" % mib, abs(sent - mib) <= 0.006, "%.4f" % sent)
names = [k["name"] for k in c["collectives_by_name"]]
expect = {"ddp": "allreduce bucket", "z3": "all-gather block"}[mode]
check("collectives by name include '%s'" % expect, expect in names, names)
check("the advice lists the exposed_communication rule", any(a["rule"] == "exposed_communication" for a in r["advice"]),
      [a["rule"] for a in r["advice"] if a["fired"]])
sys.exit(0 if ok else 1)
PY
done

"$GTRACE" diff "$WORK/ddp.sqlite" "$WORK/z3.sqlite" >"$WORK/diff.txt" 2>&1 ||
    { cat "$WORK/diff.txt"; echo "FAIL: gtrace diff"; exit 1; }
for metric in "communication per step" "exposed communication per step" "communication hidden by compute" \
              "collectives per step"; do
    grep -q "^$metric " "$WORK/diff.txt" || { cat "$WORK/diff.txt"; echo "FAIL: gtrace diff has no '$metric' row"; fails=1; }
done
grep '^collectives per step' "$WORK/diff.txt"
[ "$fails" -eq 0 ] && echo "ok: the Communication section of gtrace report on 2 ranks, DDP and ZeRO-3"
exit $fails
