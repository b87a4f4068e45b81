#!/bin/sh
# hta_interop.sh: Holistic Trace Analysis (HTA, PyTorch's trace analysis
# tool; pinned, from PyPI, in a throwaway virtual environment cached under
# $GT_TMPDIR) reads gtrace's Chrome exports as it reads PyTorch profiler
# traces. Exports (`gtrace export --format chrome -o DIR/`, one file per
# rank) of:
#   - the nsys fixtures (cloverleaf, saxpy-mpi);
#   - a synthetic GPU-shaped trace (bench_report: NVTX steps, launches,
#     kernels on two streams, copies, syncs);
#   - 2 ranks of the distributed trainer (`gtrace mpirun -np 2 trainer --dist
#     ddp`), a trace without kernels whose CPU ops and collectives stand in
#     for the device.
# On each, HTA's temporal breakdown, kernel breakdown, idle time breakdown,
# communication/computation overlap, CUDA launch statistics and critical
# path (per ProfilerStep where the trace has steps, else the whole trace;
# not on the trainer: HTA's critical path wants CUDA launch calls) run
# without an error and without HTA's warnings about missing ranks or steps;
# the ranks are the trace's (0 and 1 for the trainer, from mpirun's
# variables); every file nests (each row's slices inside each other), flow
# ids are unique, no tid is negative. On the single-device traces HTA's
# idle and compute time agree with `gtrace report --json` (gaps.idle_ns,
# the device's kernel_ns) within 2%; HTA runs with HTA_DISABLE_NS_ROUNDING=1,
# its own switch that keeps the nanoseconds (it otherwise floors every
# time to a microsecond, about 1 us per gap on these traces). On the trainer
# each rank's idle, compute and communication time agree with the report's
# for that rank within 2%, on the same window: HTA's per-rank window starts
# at the rank's first kernel (here the start-up before step 0), the report's
# figures are over the steps, so HTA's temporal breakdown is run on its own
# loaded trace with each rank's kernels cut to its ProfilerStep window
# (hta_interop.py says how).
# Skips (77) without python3 or python3-venv, or when pip cannot reach the
# package index; the trainer part is left out without Open MPI or the
# fortunes data.
set -u
INTEROP_NAME=hta
. "$GT_TOP_SRCDIR/tests/integration/interop_common.sh"

# ---- HTA, pinned, in a throwaway environment ----------------------------------------
# HTA itself without its dependencies (they include jupyterlab and pytest),
# then what it imports, pinned: pandas 2 (HTA 0.5.0 fails on pandas 3).
HTA_PIN="holistictraceanalysis==0.5.0"
PINS="pandas==2.2.3 numpy==2.2.6 plotly==6.3.1 networkx==3.6.1 psutil==7.1.3 PyYAML==6.0.3"
pinned_venv hta "$HTA_PIN" "$PINS"
echo "HTA from $VENV"

# ---- traces and their exports ---------------------------------------------------------
"$SYNTH" -n 20000 -f "$WORK/synthetic.sqlite" --runs 1 --gtrace "$GTRACE" >"$WORK/synth.log" 2>&1 ||
    { cat "$WORK/synth.log"; fail "the synthetic trace"; }
cp "$CLOVER" "$WORK/cloverleaf.sqlite" && cp "$SAXPY" "$WORK/saxpy.sqlite" || exit 99
# name:kind:ranks; kind gpu (one device: idle and compute checked) or cpu (the trainer)
traces="cloverleaf:gpu:1 saxpy:gpu:1 synthetic:gpu:1"
if ! grep -q '^#define HAVE_MPI 1' "$GT_TOP_BUILDDIR/config.h" || ! command -v mpirun >/dev/null 2>&1; then
    echo "note: no Open MPI in this build: the 2-rank trainer is left out"
elif [ ! -x "$TRAINER" ] || [ ! -d /usr/share/games/fortunes ]; then
    echo "note: no trainer or no fortunes data: the 2-rank trainer is left out"
else
    . "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
    "$GTRACE" -o "$WORK/trainer.sqlite" mpirun --oversubscribe --bind-to none -np 2 "$TRAINER" --dist ddp --batch 4 \
        --steps 6 >"$WORK/trainer.log" 2>&1 || { cat "$WORK/trainer.log"; fail "gtrace mpirun trainer --dist ddp"; }
    traces="$traces trainer:cpu:2"
fi
for t in $traces; do
    name=${t%%:*}
    "$GTRACE" export "$WORK/$name.sqlite" --format chrome -o "$WORK/$name/" >"$WORK/export.log" 2>&1 ||
        { cat "$WORK/export.log"; fail "gtrace export $name --format chrome -o DIR/"; }
    "$GTRACE" report "$WORK/$name.sqlite" --json >"$WORK/$name.json" 2>"$WORK/report.log" ||
        { cat "$WORK/report.log"; fail "gtrace report $name --json"; }
done

HTA_DISABLE_NS_ROUNDING=1 "$VENV/bin/python" "$GT_TOP_SRCDIR/tests/integration/hta_interop.py" "$WORK" $traces ||
    fail "HTA on gtrace's Chrome exports"
echo "ok: HTA reads gtrace's Chrome exports"
