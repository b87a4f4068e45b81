"""hta_interop.py: HTA's analyses on gtrace's Chrome exports; run by
hta_interop.sh in HTA's environment as: hta_interop.py WORK NAME:KIND:RANKS...
WORK/NAME/ holds the export (one file per rank), WORK/NAME.json the report.
Prints one line per check; exits 1 when one fails."""
import collections
import copy
import glob
import json
import logging
import sys
import warnings

import pandas as pd

warnings.filterwarnings("ignore")  # pandas' FutureWarnings on HTA's own code
from hta.analyzers.breakdown_analysis import BreakdownAnalysis  # noqa: E402
from hta.trace_analysis import TraceAnalysis  # noqa: E402

bad = 0


def check(ok, what):
    global bad
    print(f"{'ok' if ok else 'FAIL'}: {what}")
    bad += not ok


class Warnings(logging.Handler):
    """HTA's warnings, for those about ranks and steps."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def shape(path):
    """Slices of a row nest; flow ids are unique; no tid is negative."""
    d = json.load(open(path))
    rows = collections.defaultdict(list)
    flows = collections.Counter()
    negative = 0
    for e in d["traceEvents"]:
        if e.get("ph") == "X":
            rows[(e["pid"], e["tid"])].append((float(e["ts"]), -float(e["dur"])))
        elif e.get("ph") in ("s", "f"):
            flows[(e["ph"], e["id"])] += 1
        if isinstance(e.get("tid"), int) and e["tid"] < 0:
            negative += 1
    crossing = 0
    for v in rows.values():
        v.sort()
        ends = []
        for start, minus_dur in v:
            end = start - minus_dur
            while ends and ends[-1] <= start + 1e-6:
                ends.pop()
            if ends and end > ends[-1] + 1e-6:
                crossing += 1
            ends.append(end)
    return crossing, sum(c - 1 for c in flows.values()), negative


def over_steps(trace):
    """HTA's trace with each rank's kernels cut to its steps (ProfilerStep#N,
    the times HTA reads, after its own alignment), and each rank's steps'
    time in us. HTA's per-rank window otherwise runs from the rank's first
    kernel to its last: on the trainer, whose CPU ops and collectives stand
    in for kernels, that includes the start-up before step 0 (model set-up,
    the parameters' broadcast, then 100 ms of nothing), which HTA counts as
    idle and the report leaves out, since it measures over the steps."""
    steps = [v for k, v in trace.symbol_table.get_sym_id_map().items() if k.startswith("ProfilerStep#")]
    clipped = copy.copy(trace)
    clipped.traces = {}
    steps_us = {}
    for rank, df in trace.traces.items():
        marks = df[df["name"].isin(steps)]
        kernels = df[df["stream"].ne(-1)]
        parts = []
        for w0, dur in zip(marks["ts"], marks["dur"]):
            k = kernels.copy()
            end = (k["ts"] + k["dur"]).clip(upper=w0 + dur)
            k["ts"] = k["ts"].clip(lower=w0)
            k["dur"] = end - k["ts"]
            parts.append(k[k["dur"] > 0])
        k = pd.concat(parts).sort_values("ts")
        k["end"] = k["ts"] + k["dur"]
        clipped.traces[rank] = k
        steps_us[rank] = float(marks["dur"].sum())
    return clipped, steps_us


def near(a, b, tol, what):
    check(abs(a - b) <= tol, f"{what}: HTA {a:.0f} ns, gtrace {b:.0f} ns (within {tol:.0f})")


work = sys.argv[1]
for spec in sys.argv[2:]:
    name, kind, n_ranks = spec.split(":")
    files = sorted(glob.glob(f"{work}/{name}/*.pt.trace.json"))
    check(len(files) == int(n_ranks), f"{name}: {len(files)} files for {n_ranks} ranks")
    for f in files:
        crossing, dup, negative = shape(f)
        check(crossing == 0 and dup == 0 and negative == 0,
              f"{name}: {f.rsplit('/', 1)[1]}: {crossing} crossing slices, {dup} repeated flow ids, "
              f"{negative} negative tids")
    report = json.load(open(f"{work}/{name}.json"))

    handler = Warnings()
    logging.getLogger("hta").addHandler(handler)
    ana = TraceAnalysis(trace_dir=f"{work}/{name}", include_last_profiler_step=True)
    ranks = ana.t.get_ranks()
    check(ranks == list(range(int(n_ranks))), f"{name}: ranks {ranks}")
    iterations = [int(i) for i in ana.t.get_iterations(0) if i >= 0]
    has_steps = len(report.get("steps", [])) > 0
    check(not has_steps or len(iterations) >= 2,
          f"{name}: {len(iterations)} iterations (ProfilerStep) for {len(report.get('steps', []))} steps")

    temporal = ana.get_temporal_breakdown(visualize=False)
    kernels, _ = ana.get_gpu_kernel_breakdown(visualize=False)
    idle, _ = ana.get_idle_time_breakdown(visualize=False)
    overlap = ana.get_comm_comp_overlap(visualize=False)
    launches = ana.get_cuda_kernel_launch_stats(visualize=False)
    check(len(temporal) == int(n_ranks) and len(kernels) > 0 and len(idle) > 0 and len(overlap) == int(n_ranks),
          f"{name}: temporal, kernel, idle time and overlap breakdowns ({len(kernels)} kernel types)")
    if kind == "gpu":
        n_launch = sum(len(df) for df in launches.values())
        check(n_launch > 0, f"{name}: CUDA launch statistics ({n_launch} launches)")
        if has_steps:
            cp = ana.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=iterations[1])
        else:
            cp = ana.critical_path_analysis(rank=0, annotation="", instance_id=None)
        check(cp is not None and cp[1] and len(cp[0].critical_path_nodes) > 0,
              f"{name}: critical path ({len(cp[0].critical_path_nodes) if cp else 0} nodes)")
        # one device: HTA's idle and compute time against the report's
        row = temporal.iloc[0]
        dev = report["devices"][0]
        near(row["idle_time(us)"] * 1000, report["gaps"]["idle_ns"], 0.02 * report["gaps"]["idle_ns"] + 1000,
             f"{name}: idle time")
        near(row["compute_time(us)"] * 1000, dev["kernel_ns"], 0.02 * dev["kernel_ns"], f"{name}: compute time")
    else:
        # Each rank on the report's window, its steps: HTA's idle, compute
        # and communication time against the report's for that rank. The
        # report gives a rank's compute, communication and their overlap over
        # its steps (communication.ranks); its idle time there is the steps'
        # time less the union of the two. HTA's temporal breakdown runs on its
        # own loaded trace with every kernel cut to the rank's steps
        # (over_steps); its idle time is then its window, the first kernel's
        # start to the last one's end, less the union of the kernels, so the
        # steps' time outside that window (from a step's start to its first
        # kernel, the end likewise) is added and the gaps between steps
        # inside it taken out: both come from HTA's ProfilerStep rows alone.
        comm = {r["rank"]: r for r in report["communication"]["ranks"]}
        clipped, steps_us = over_steps(ana.t)
        windowed = BreakdownAnalysis.get_temporal_breakdown(clipped, visualize=False)
        for _, row in windowed.iterrows():
            r = int(row["rank"])
            c = comm[r]
            idle = c["span_ns"] - (c["comm_ns"] + c["compute_ns"] - c["overlap_ns"])
            hta_idle = (row["idle_time(us)"] + steps_us[r] - row["kernel_time(us)"]) * 1000
            near(hta_idle, idle, 0.02 * idle + 1000, f"{name}: rank {r}: idle time over its steps")
            near(row["compute_time(us)"] * 1000, c["compute_ns"], 0.02 * c["compute_ns"],
                 f"{name}: rank {r}: compute time over its steps")
            near(row["non_compute_time(us)"] * 1000, c["comm_ns"], 0.02 * c["comm_ns"],
                 f"{name}: rank {r}: communication time over its steps")
            got_pct = float(overlap.set_index("rank").loc[r, "comp_comm_overlap_pctg"])
            want_pct = 100.0 * c["overlap_ns"] / c["comm_ns"] if c["comm_ns"] else 0.0
            check(abs(got_pct - want_pct) <= 2.0,
                  f"{name}: rank {r}: communication overlapped by compute {got_pct:.1f}%, the report's {want_pct:.1f}%")
    logging.getLogger("hta").removeHandler(handler)
    # HTA's own words when a file has no rank, two files one rank, or the
    # trace no iterations (the last only where the trace has steps)
    about = ["does not have the rank", "has the same rank", "failed to create rank"]
    if has_steps:
        about += ["ProfilerStep not found", "only one iteration"]
    missing = [m for m in handler.messages if any(a in m for a in about)]
    check(not missing, f"{name}: no HTA warning about ranks or steps {missing[:3]}")
sys.exit(1 if bad else 0)
