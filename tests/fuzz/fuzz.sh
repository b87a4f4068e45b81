#!/bin/sh
# fuzz.sh: every reader entry point of gtrace on damaged traces, for a bounded
# time (fuzz.py does the work; see tests/fuzz/README.md). Seeds: the nsys
# fixtures, a trace of the CPU trainer recorded here, the synthetic traces of
# analyze_export (kernels, copies, an allocator at its edges) and a trace of
# samples/nvtx_features, each where it can be had; for `gtrace import`, the
# torch.profiler traces (plain and gzipped) and memory snapshot pickles of
# tests/fixtures/pytorch.
#   GT_FUZZ_SECONDS  no input starts after this many seconds but the fixed cases (default 25)
#   GT_FUZZ_SEED     first random case: the same seed, the same inputs (default: drawn from
#                    the commit, so each commit fuzzes other inputs; 1 outside git)
#   GT_FUZZ_JOBS     inputs fuzzed side by side (default 2)
#   GT_FUZZ_CASES    SEEDNAME:CASE,... runs just those (a failure's remake line)
#   GT_FUZZ_WINDOW=1 also the viewer's window under xvfb-run (fixed cases)
# Failing inputs stay in $GT_TOP_BUILDDIR/tests/fuzz/work/failures/.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
: "${GT_TOP_SRCDIR:?run through make check}"
B=$GT_TOP_BUILDDIR
GTRACE="$B/libtrace/cli/gtrace"
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not found"; exit 77; }
[ -x "$GTRACE" ] || { echo "missing $GTRACE: build it first"; exit 99; }
WORK="$B/tests/fuzz/work"
rm -rf "$WORK" && mkdir -p "$WORK/seeds" || exit 99
SEEDS="$WORK/seeds"
# The capture library loads before the sanitizer runtime in a sanitized build.
REC_ENV="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0"

for f in "$GT_FIXTURES"/nsys/*.sqlite; do
    [ -f "$f" ] && cp "$f" "$SEEDS/" && chmod u+w "$SEEDS/$(basename "$f")"
done
if [ -x "$B/trainer/trainer" ] && [ -d /usr/share/games/fortunes ]; then
    env $REC_ENV "$GTRACE" -o "$SEEDS/trainer.sqlite" "$B/trainer/trainer" --model gpt-tiny --steps 3 \
        --eval-every 0 >"$WORK/trainer.log" 2>&1 || { cat "$WORK/trainer.log"; echo "FAIL: recording the trainer"; exit 1; }
fi
if [ -x "$B/tests/integration/analyze_export" ]; then
    "$B/tests/integration/analyze_export" synth "$SEEDS/synth.sqlite" || exit 99
    "$B/tests/integration/analyze_export" memedge "$SEEDS/memedge.sqlite" || exit 99
fi
if [ -x "$B/samples/nvtx_features" ]; then
    env $REC_ENV "$GTRACE" -o "$SEEDS/features.sqlite" "$B/samples/nvtx_features" >"$WORK/features.log" 2>&1 ||
        { cat "$WORK/features.log"; echo "FAIL: recording samples/nvtx_features"; exit 1; }
fi
PT="$GT_FIXTURES/pytorch"
for f in "$PT/plain.json" "$PT/snapshot_p4.pickle" "$PT/snapshot_p2.pickle"; do
    [ -f "$f" ] && cp "$f" "$SEEDS/" && chmod u+w "$SEEDS/$(basename "$f")"
done
for f in "$PT"/mlp_1rank/*.pt.trace.json.gz "$PT"/ddp_2rank/rank0.*.pt.trace.json.gz; do
    [ -f "$f" ] && cp "$f" "$SEEDS/$(basename "$f" | cut -d. -f1).json.gz" && chmod u+w "$SEEDS/$(basename "$f" | cut -d. -f1).json.gz"
done
ls "$SEEDS"/*.sqlite >/dev/null 2>&1 || { echo "skip: no seed trace (no fixtures, trainer or samples)"; exit 77; }

seed=${GT_FUZZ_SEED:-}
if [ -z "$seed" ]; then
    head=$(git -C "$GT_TOP_SRCDIR" rev-parse --short=7 HEAD 2>/dev/null) && seed=$(printf '%d' "0x$head") || seed=1
fi
set -- --gtrace "$GTRACE" --seeds "$SEEDS" --work "$WORK" --seconds "${GT_FUZZ_SECONDS:-25}" \
    --seed "$seed" --jobs "${GT_FUZZ_JOBS:-2}"
[ -x "$B/viewer/gtrace-view" ] && set -- "$@" --view "$B/viewer/gtrace-view"
[ "${GT_FUZZ_WINDOW:-0}" = 1 ] && command -v xvfb-run >/dev/null 2>&1 && set -- "$@" --window
[ -n "${GT_FUZZ_CASES:-}" ] && set -- "$@" --cases "$GT_FUZZ_CASES"
# no __pycache__ beside the sources (a read-only tree under distcheck)
PYTHONDONTWRITEBYTECODE=1 python3 "$GT_TOP_SRCDIR/tests/fuzz/fuzz.py" "$@"
