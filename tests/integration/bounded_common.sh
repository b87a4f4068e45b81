# bounded_common.sh: sourced by the tests that run a command of gtrace
# under an address-space limit (ulimit -v) on bench_report's synthetic
# GPU-shaped trace: capture_common.sh's scratch folder and helpers, then
#   bounded_limit KIB      skips (77) where gtrace cannot start under KIB
#                          (a sanitizer build maps terabytes of shadow)
#   bounded_trace N FILE   writes a trace of N events, without a kept report
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
SYNTH="$GT_TOP_BUILDDIR/bench/bench_report"
[ -x "$SYNTH" ] || { echo "missing $SYNTH: build it first"; exit 99; }

bounded_limit() {
    (ulimit -v "$1" && "$GTRACE" --help) >/dev/null 2>&1 ||
        { echo "SKIP: gtrace cannot start under ulimit -v $1 (a sanitizer build?)"; exit 77; }
}

bounded_trace() {
    "$SYNTH" -n "$1" -f "$2" --no-summary --no-runs >"$WORK/synth.log" 2>&1 ||
        { cat "$WORK/synth.log"; fail "bench_report -n $1"; }
}
