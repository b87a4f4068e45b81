#!/bin/sh
# export_chrome_bounded.sh: `gtrace export --format chrome` of a GPU-shaped
# trace of 1 M events (bench_report's synthetic run: kernels, launch calls,
# NVTX steps, phases and ops, allocator events) in a bounded address space
# (ulimit -v), and the same bytes whichever way it reads the trace:
#   - without the facts kept at close it loads the whole analysis model; its
#     correlation ids and NVTX projections, one entry per launch and per
#     range, are on disk (gt_flagmap, gt_spanmap): 152 MiB (over 176 MiB
#     with them in hash sets; it passes with 128 MiB);
#   - with them (the report kept as the launcher keeps it) only the model's
#     memory part: the launches on disk too (gt_pairmap), the allocator's
#     actions handed out one at a time: 104 MiB, where the whole model needs
#     more than 112 MiB (it passes with 96 MiB).
# The file it writes is whole: one kernel event per kernel, a flow end per
# launch, annotations, memory. One file per rank (-o DIR/) is bounded the
# same way: its processes come from the memory part and the calls on disk.
. "$GT_TOP_SRCDIR/tests/integration/bounded_common.sh"
LIMIT_KIB=155648
bounded_limit "$LIMIT_KIB"
bounded_trace 1000000 "$WORK/t.sqlite"
(ulimit -v "$LIMIT_KIB" && exec "$GTRACE" export "$WORK/t.sqlite" --format chrome -o "$WORK/t.json") \
    > "$WORK/export.log" 2>&1 || { cat "$WORK/export.log"; fail "export --format chrome under ulimit -v $LIMIT_KIB"; }

# one file per rank (the folder HTA reads), from the whole model
"$GTRACE" export "$WORK/t.sqlite" --format chrome -o "$WORK/whole-ranks/" > "$WORK/export.log" 2>&1 ||
    { cat "$WORK/export.log"; fail "export --format chrome -o DIR/"; }

# with the facts: a tighter limit, and the same file
"$SYNTH" -f "$WORK/t.sqlite" --keep-only > "$WORK/keep.log" 2>&1 || { cat "$WORK/keep.log"; fail "keeping the report"; }
mv "$WORK/t.json" "$WORK/whole.json"
PART_KIB=106496
(ulimit -v "$PART_KIB" && exec "$GTRACE" export "$WORK/t.sqlite" --format chrome -o "$WORK/t.json") \
    > "$WORK/export.log" 2>&1 || { cat "$WORK/export.log"; fail "export with the facts kept, under ulimit -v $PART_KIB"; }
cmp "$WORK/whole.json" "$WORK/t.json" || fail "the export with the facts kept differs from the whole model's"
(ulimit -v "$PART_KIB" && exec "$GTRACE" export "$WORK/t.sqlite" --format chrome -o "$WORK/ranks/") \
    > "$WORK/export.log" 2>&1 || { cat "$WORK/export.log"; fail "export -o DIR/ with the facts kept, under ulimit -v $PART_KIB"; }
n_ranks=$(ls "$WORK/ranks" | wc -l)
[ "$n_ranks" -ge 1 ] && [ "$n_ranks" -eq "$(ls "$WORK/whole-ranks" | wc -l)" ] || fail "$n_ranks files a rank"
for f in "$WORK"/whole-ranks/*; do
    cmp "$f" "$WORK/ranks/${f##*/}" || fail "the rank file ${f##*/} with the facts kept differs from the whole model's"
done

kernels=$("$GTRACE" info "$WORK/t.sqlite" 2> /dev/null | sed -n 's/^ *kernel  *\([0-9]*\)$/\1/p')
got=$(grep -c '^{"ph":"X","cat":"kernel"' "$WORK/t.json")
flows=$(grep -c '^{"ph":"f",' "$WORK/t.json")
annots=$(grep -c '"cat":"gpu_user_annotation"' "$WORK/t.json")
counters=$(grep -c '^{"ph":"C",' "$WORK/t.json")
echo "kernels $kernels, in the export $got; flow ends $flows; annotations $annots; memory samples $counters"
[ -n "$kernels" ] && [ "$got" -eq "$kernels" ] || fail "$got kernel events for $kernels kernels"
[ "$flows" -ge "$kernels" ] || fail "$flows flow ends for $kernels kernels"
[ "$annots" -gt 0 ] && [ "$counters" -gt 0 ] || fail "no annotations ($annots) or no memory counter ($counters)"
tail -c 3 "$WORK/t.json" | grep -q ']}' || fail "the JSON does not end its event array"
echo "ok: the Chrome export of 1 M events fits ulimit -v $LIMIT_KIB KiB, and $PART_KIB KiB with the facts kept (one file and one a rank)"
