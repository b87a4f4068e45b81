#!/bin/sh
# report_memory_ranks.sh: the Memory section of `gtrace report`, text and
# --json, on two torch.profiler files made here so every figure is known:
# rank r (pid 100 + r) runs 8 steps of 10 ms; in each it keeps (r + 1) MiB
# it never frees (a leak) and holds 8 MiB from 0.3 ms to 4 ms (a spike), in
# a 64 MiB reserved pool. Both outputs walk the same data: each process
# under its rank, its leak and its spikes (the text shows the first 5, the
# JSON all 8), and the total of the two at one moment; one process alone
# is one allocator, without process lines or a total.
# Skipped (77) without python3.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipped"; exit 77; }
GTRACE=${GT_TOP_BUILDDIR:-.}/libtrace/cli/gtrace
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-report-memory-XXXXXX")
trap 'rm -rf "$DIR"' EXIT

python3 - "$DIR" <<'PY'
import json, sys
MIB = 1 << 20
for rank in (0, 1):
    pid, ev, total = 100 + rank, [], [0]
    def mem(ts, addr, b):
        total[0] += b
        ev.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid, "tid": pid,
                   "ts": ts, "args": {"Addr": addr, "Bytes": b, "Total Allocated": total[0],
                                      "Total Reserved": 64 * MIB, "Device Id": 0, "Device Type": 1}})
    base = 0x7f0000000000 + rank * 0x100000000
    for step in range(8):
        s = 1000 + step * 10000
        ev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "pid": pid, "tid": pid,
                   "ts": s, "dur": 9000})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": pid, "ts": s + 100, "dur": 5000})
        ev.append({"ph": "X", "cat": "user_annotation", "name": "nccl:all_reduce", "pid": pid, "tid": pid,
                   "ts": s + 5200, "dur": 2000, "args": {"Input Dims": [[1024]], "Input type": ["float"]}})
        mem(s + 200, base + step * 0x200000, (rank + 1) * MIB)
        mem(s + 300, base + 0x10000000, 8 * MIB)
        mem(s + 4000, base + 0x10000000, -8 * MIB)
    json.dump({"distributedInfo": {"rank": rank}, "baseTimeNanoseconds": 1790000000000000000, "traceEvents": ev},
              open(f"{sys.argv[1]}/rank{rank}.json", "w"))
PY
"$GTRACE" import "$DIR/rank0.json" "$DIR/rank1.json" -o "$DIR/two.sqlite" > /dev/null
"$GTRACE" import "$DIR/rank1.json" -o "$DIR/one.sqlite" > /dev/null
for t in two one; do
    "$GTRACE" report "$DIR/$t.sqlite" | sed -n '/^memory/,/^$/p' > "$DIR/$t.txt"
    "$GTRACE" report --json "$DIR/$t.sqlite" > "$DIR/$t.json"
done

python3 - "$DIR" <<'PY'
import json, re, sys
d = sys.argv[1]
MIB = 1 << 20

def check(name, want_procs):
    text = open(f"{d}/{name}.txt").read()
    m = json.load(open(f"{d}/{name}.json"))["memory"]
    procs = m["processes"]
    assert [(p["rank"], p["pid"]) for p in procs] == want_procs, (name, procs)
    # by construction: rank r keeps (r+1) MiB a step, and 8 MiB spikes on top
    for p in procs:
        keep = (p["rank"] + 1) * MIB
        assert p["peak_allocated_bytes"] == 8 * keep + 8 * MIB, p
        assert p["peak_reserved_bytes"] == 64 * MIB, p
        assert len(p["leaks"]) == 1 and p["leaks"][0]["alive_bytes"] == 8 * keep, p["leaks"]
        assert p["leaks"][0]["bytes_per_step"] == keep, p["leaks"]
        assert len(p["spikes"]) == 8 and all(s["bytes"] == 8 * MIB for s in p["spikes"]), p["spikes"]
    # the text says the same
    if len(procs) > 1:
        assert text.startswith(f"memory         {len(procs)} processes, each its own allocator\n"), text
        blocks = re.split(r"\n(?=  rank )", text)[1:]
        assert len(blocks) == len(procs), text
        for p, b in zip(procs, blocks):
            mib = p["peak_allocated_bytes"] // MIB
            assert b.startswith(f"  rank {p['rank']} (pid {p['pid']}): peak allocated {mib}.00 MiB at +70.300 ms, "
                                "peak reserved 64.00 MiB"), b
            assert b.count("\n    leak: ") == 1 and f"leak: {8 * (p['rank'] + 1)}.00 MiB alive in 8 allocations" in b, b
            assert b.count("\n    spike: 8.00 MiB for 3.700 ms") == 5, b
        t = m["total"]
        assert t == {"peak_allocated_bytes": 40 * MIB, "peak_allocated_ns": 70300000,
                     "peak_reserved_bytes": 128 * MIB, "peak_reserved_ns": 200000}, t
        assert "\n  all 2 at once: peak allocated 40.00 MiB at +70.300 ms, peak reserved 128.00 MiB at +0.200 ms\n" in text
    else:
        assert text.startswith("memory         peak allocated 24.00 MiB at +70.300 ms, peak reserved 64.00 MiB"), text
        assert " rank " not in text and "all " not in text and m["total"] is None, (text, m["total"])
        assert text.count("\n  leak: 16.00 MiB alive in 8 allocations, +2.00 MiB per step over 8 steps") == 1, text
        assert text.count("\n  spike: 8.00 MiB for 3.700 ms") == 5, text
        # the whole trace's figures are its one process's
        assert {k: v for k, v in m.items() if k not in ("processes", "total", "skipped_rows")} == \
               {k: v for k, v in procs[0].items() if k != "rank"}, m

check("two", [(0, 100), (1, 101)])
check("one", [(1, 101)])
print("memory section: text and JSON agree with the construction")
PY
echo "report_memory_ranks: all checks passed"
