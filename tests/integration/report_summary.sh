#!/bin/sh
# report_summary.sh: the report kept in a trace at close (--summary). It is
# the same bytes as the analysis (text and JSON, at any path the trace is
# read from), it is what `gtrace report` prints (GTRACE_SUMMARY_SAY says
# which path it took), `report --steps` reads its window with the facts kept
# beside it and prints the analysis's bytes, a trace changed after close is analysed again and
# its report shows the change, --summary=off and small traces under auto
# keep none, and an nsys export is never written to.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"

SAY="env GTRACE_SUMMARY_SAY=1"
"$GTRACE" --summary=on -o run.sqlite "$SAMPLES/nvtx_steps" 6 2000 > /dev/null 2> rec.txt \
    || fail "recording: $(cat rec.txt)"
grep -q "report kept in the trace" rec.txt || fail "the launcher did not keep the report: $(cat rec.txt)"
expect_eq "kept entries" "report.json report.text report.whole" "$(q run.sqlite "SELECT group_concat(key, ' ') FROM
    (SELECT key FROM GTRACE_SUMMARY ORDER BY key)")"
"$GTRACE" info run.sqlite > info.txt || fail "info"
grep -q "^summary    the report, kept" info.txt || fail "info does not say the trace carries a summary: $(cat info.txt)"

# same_report NAME TRACE: kept and analysed reports are the same bytes, and
# each came the way it says
same_report() {
    for fmt in text json; do
        opt=; [ $fmt = json ] && opt=--json
        $SAY "$GTRACE" report $opt "$2" > kept.$fmt 2> say.txt || fail "$1: report $opt: $(cat say.txt)"
        grep -q "from the summary kept in the trace" say.txt || fail "$1: report $opt did not use the summary: $(cat say.txt)"
        $SAY "$GTRACE" report $opt --no-summary "$2" > full.$fmt 2> say.txt || fail "$1: report --no-summary $opt"
        grep -q "analysed (no summary used)" say.txt || fail "$1: --no-summary $opt used the summary"
        GTRACE_NO_SUMMARY=1 $SAY "$GTRACE" report $opt "$2" > env.$fmt 2> say.txt || fail "$1: GTRACE_NO_SUMMARY"
        grep -q "analysed" say.txt || fail "$1: GTRACE_NO_SUMMARY $opt used the summary"
        cmp kept.$fmt full.$fmt || fail "$1: the kept $fmt report differs from the analysis"
        cmp env.$fmt full.$fmt || fail "$1: GTRACE_NO_SUMMARY's $fmt report differs"
        grep -q "step" full.$fmt || fail "$1: the $fmt report has no steps"
    done
    echo "ok: $1: kept report = analysis, text and JSON"
}
same_report "as recorded" run.sqlite
same_report "relative path" ./run.sqlite
mkdir 'odd "dir"'
cp run.sqlite 'odd "dir"/r\un é.sqlite'
same_report "a path JSON escapes" 'odd "dir"/r\un é.sqlite'
grep -qF 'odd \"dir\"/r\\un' kept.json || fail "the JSON report does not name the copy: $(head -c 200 kept.json)"

# an option that changes the answer: analysed
$SAY "$GTRACE" report --top 3 run.sqlite > /dev/null 2> say.txt || fail "report --top 3"
grep -q "analysed" say.txt || fail "--top used the summary"
# --steps: the window, with the whole-trace facts kept beside the report,
# the same bytes as the whole analysis
$SAY "$GTRACE" report --steps 2:3 --json run.sqlite > steps.json 2> say.txt || fail "report --steps"
grep -q "the window of its steps, with the facts kept" say.txt || fail "--steps did not read the window: $(cat say.txt)"
"$GTRACE" report --steps 2:3 --json --no-summary run.sqlite | cmp - steps.json || fail "--steps: not the analysis"

# changed after close (one NVTX range renamed): analysed, and the change shows
cp run.sqlite changed.sqlite
q changed.sqlite "UPDATE NVTX_EVENTS SET text = 'step 99', textId = NULL WHERE rowid = (SELECT rowid FROM NVTX_EVENTS
    WHERE coalesce(text, (SELECT value FROM StringIds WHERE id = textId)) = 'step 5')"
expect_eq "ranges renamed" 1 "$(q changed.sqlite "SELECT count(*) FROM NVTX_EVENTS WHERE text = 'step 99'")"
$SAY "$GTRACE" report changed.sqlite > changed.txt 2> say.txt || fail "report on the changed trace: $(cat say.txt)"
grep -q "analysed (no summary used)" say.txt || fail "a trace changed after close used its summary"
grep -q "steps 0..99" changed.txt || fail "the report does not show the change: $(head -n 3 changed.txt)"
"$GTRACE" report --no-summary changed.sqlite | cmp - changed.txt || fail "changed trace: report differs from --no-summary"
$SAY "$GTRACE" report --steps 2:3 changed.sqlite > /dev/null 2> say.txt || fail "report --steps on the changed trace"
grep -q "analysed (no summary used)" say.txt || fail "a trace changed after close used its kept facts"
"$GTRACE" info changed.sqlite > info.txt || fail "info on the changed trace"
grep -q "^summary    none used: .*changed since" info.txt || fail "info on the changed trace: $(grep summary info.txt)"
echo "ok: a trace changed after close is analysed"

# --summary=off, and auto on a small trace: none
for mode in off auto; do
    "$GTRACE" --summary=$mode -o $mode.sqlite "$SAMPLES/nvtx_steps" 2 1000 > /dev/null 2> rec.txt \
        || fail "recording with --summary=$mode: $(cat rec.txt)"
    expect_eq "--summary=$mode: summary tables" 0 \
        "$(q $mode.sqlite "SELECT count(*) FROM sqlite_master WHERE name = 'GTRACE_SUMMARY'")"
    $SAY "$GTRACE" report $mode.sqlite > /dev/null 2> say.txt || fail "report on --summary=$mode"
    grep -q "analysed" say.txt || fail "--summary=$mode: report did not analyse"
done
"$GTRACE" --summary=sometimes "$SAMPLES/nvtx_steps" 1 1000 > /dev/null 2> err.txt && fail "--summary=sometimes accepted"
grep -q "expected auto, on or off" err.txt || fail "--summary=sometimes: $(cat err.txt)"

# an nsys export: analysed, never written to
CLOVER="$GT_FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite"
if [ -r "$CLOVER" ]; then
    cp "$CLOVER" nsys.sqlite
    before=$(cksum < nsys.sqlite)
    $SAY "$GTRACE" report nsys.sqlite > /dev/null 2> say.txt || fail "report on the nsys export: $(cat say.txt)"
    grep -q "analysed" say.txt || fail "the nsys export was not analysed"
    "$GTRACE" info nsys.sqlite > info.txt || fail "info on the nsys export"
    grep -q "^summary" info.txt && fail "info gives an nsys export a summary line"
    expect_eq "the nsys export after report and info" "$before" "$(cksum < nsys.sqlite)"
fi
echo "PASS"
