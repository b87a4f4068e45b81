#!/bin/sh
# export_chrome_bounded.sh: `gtrace export --format chrome` of a GPU-shaped
# trace of 1 M events (bench_report's synthetic run: kernels, launch calls,
# NVTX steps, phases and ops, allocator events) fits an address space of
# 152 MiB (ulimit -v). The export's correlation ids and NVTX projections,
# one entry per launch and per range, are kept on disk (gt_flagmap,
# gt_spanmap) and not in memory: with them in hash sets it needed over
# 176 MiB here; it now passes with 128 MiB. The file it writes is whole:
# one kernel event per kernel, a flow end per launch, annotations, memory.
set -u
GTRACE=$GT_TOP_BUILDDIR/libtrace/cli/gtrace
SYNTH=$GT_TOP_BUILDDIR/bench/bench_report
LIMIT_KIB=155648
[ -x "$SYNTH" ] || { echo "skip: no bench/bench_report in this build"; exit 77; }
# a sanitizer build maps terabytes of shadow memory at start: no limit holds it
(ulimit -v "$LIMIT_KIB" && "$GTRACE" --help) > /dev/null 2>&1 ||
    { echo "skip: gtrace cannot start under ulimit -v (a sanitizer build?)"; exit 77; }
DIR=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-chrome-bounded-XXXXXX") || exit 1
trap 'rm -rf "$DIR"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$SYNTH" -n 1000000 -f "$DIR/t.sqlite" --no-summary --no-runs > "$DIR/synth.log" 2>&1 ||
    { cat "$DIR/synth.log"; fail "bench_report -n 1000000"; }
(ulimit -v "$LIMIT_KIB" && exec "$GTRACE" export "$DIR/t.sqlite" --format chrome -o "$DIR/t.json") \
    > "$DIR/export.log" 2>&1 || { cat "$DIR/export.log"; fail "export --format chrome under ulimit -v $LIMIT_KIB"; }

kernels=$("$GTRACE" info "$DIR/t.sqlite" 2> /dev/null | sed -n 's/^ *kernel  *\([0-9]*\)$/\1/p')
got=$(grep -c '^{"ph":"X","cat":"kernel"' "$DIR/t.json")
flows=$(grep -c '^{"ph":"f",' "$DIR/t.json")
annots=$(grep -c '"cat":"gpu_user_annotation"' "$DIR/t.json")
counters=$(grep -c '^{"ph":"C",' "$DIR/t.json")
echo "kernels $kernels, in the export $got; flow ends $flows; annotations $annots; memory samples $counters"
[ -n "$kernels" ] && [ "$got" -eq "$kernels" ] || fail "$got kernel events for $kernels kernels"
[ "$flows" -ge "$kernels" ] || fail "$flows flow ends for $kernels kernels"
[ "$annots" -gt 0 ] && [ "$counters" -gt 0 ] || fail "no annotations ($annots) or no memory counter ($counters)"
tail -c 3 "$DIR/t.json" | grep -q ']}' || fail "the JSON does not end its event array"
echo "ok: the Chrome export of 1 M events fits ulimit -v $LIMIT_KIB KiB"
