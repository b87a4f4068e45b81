#!/bin/sh
# cli_analyze.sh: `gtrace report|diff|memory|export|info` on real inputs (the
# nsys fixtures and a trace gtrace records of a small NVTX program), a clear
# error with the right exit status for every kind of bad input, and exports
# that never remove or half-write what they did not write (/dev/full, a
# failed or interrupted write).
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"

CLOVER="$GT_FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite"
SAXPY="$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"
[ -r "$CLOVER" ] && [ -r "$SAXPY" ] || { echo "fixtures missing under $GT_FIXTURES"; exit 99; }

# expect_fail WHAT STATUS PATTERN CMD...: CMD exits with STATUS and says PATTERN on stderr
expect_fail() {
    what=$1 want=$2 pattern=$3; shift 3
    "$@" > out.txt 2> err.txt && fail "$what: succeeded"
    got=$?
    [ "$got" = "$want" ] || fail "$what: exit status $got, expected $want ($(cat err.txt))"
    grep -q -- "$pattern" err.txt || fail "$what: stderr lacks '$pattern': $(cat err.txt)"
    echo "ok: $what -> $got: $(head -n 1 err.txt)"
}

# ---- report on an nsys export: the numbers checked against the file itself ----
"$GTRACE" report "$CLOVER" > report.txt 2> err.txt || fail "report on cloverleaf: $(cat err.txt)"
grep -q "1312" report.txt || fail "report lacks the 1,312 kernels"
grep -qi "pageable" report.txt || fail "report lacks the pageable copies"
"$GTRACE" report --json "$CLOVER" > report.json || fail "report --json"
kernels=$(sqlite3 "$CLOVER" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
expect_eq "kernels in the fixture" 1312 "$kernels"
if command -v python3 >/dev/null; then
    python3 - report.json <<'PY' || fail "report --json is not what it should be"
import json, sys
r = json.load(open(sys.argv[1]))
fired = [a["rule"] for a in r["advice"] if a.get("fired")]
assert "pageable_copies" in fired or "cuda_memcpy_sync" in fired, fired
print("ok: json advice fired:", ", ".join(fired))
PY
fi

# ---- a trace recorded here: report with steps, diff, memory, exports ------------
"$GTRACE" -o run.sqlite "$SAMPLES/nvtx_features" > /dev/null 2> rec.txt || fail "recording: $(cat rec.txt)"
"$GTRACE" report run.sqlite > /dev/null || fail "report on a gtrace trace"
"$GTRACE" diff "$SAXPY" "$CLOVER" > diff.txt || fail "diff"
grep -qi "kernel" diff.txt || fail "diff says nothing about kernels"
"$GTRACE" diff --json "$SAXPY" "$CLOVER" > diff.json || fail "diff --json"
"$GTRACE" memory run.sqlite --at 1s > mem.txt || fail "memory --at"
"$GTRACE" export "$CLOVER" --format chrome -o clover.json 2> /dev/null || fail "export chrome"
[ -s clover.json ] || fail "export chrome wrote nothing"
"$GTRACE" export "$CLOVER" --format csv -o csv 2> /dev/null || fail "export csv"
[ -s csv/kernel.csv ] || fail "export csv: no kernel.csv ($(ls csv))"
expect_eq "kernel.csv rows" 1313 "$(wc -l < csv/kernel.csv | tr -d ' ')"
"$GTRACE" export run.sqlite --format memviz -o run.pickle 2> /dev/null || fail "export memviz"
[ -s run.pickle ] || fail "export memviz wrote nothing"
if command -v python3 >/dev/null; then
    python3 -c "import json,sys; d=json.load(open('clover.json')); print('ok: chrome events', len(d['traceEvents']))" \
        || fail "the chrome export is not JSON"
    python3 -c "import pickle; s=pickle.load(open('run.pickle','rb')); assert 'segments' in s and 'device_traces' in s; print('ok: memviz keys')" \
        || fail "the memviz export does not load"
fi

# ---- bad input: each a clear message and a distinct status -----------------------
expect_fail "report: no trace" 2 "which trace" "$GTRACE" report
expect_fail "report: missing file" 1 "no-such.sqlite" "$GTRACE" report no-such.sqlite
printf 'hello' > notsql.sqlite
expect_fail "report: not SQLite" 1 "not an SQLite database" "$GTRACE" report notsql.sqlite
head -c 100000 "$CLOVER" > cut.sqlite
expect_fail "report: truncated" 1 "cut.sqlite" "$GTRACE" report cut.sqlite
expect_fail "report: bad --steps" 2 "steps" "$GTRACE" report --steps x:y "$CLOVER"
expect_fail "report: reversed --steps" 2 "A <= B" "$GTRACE" report --steps 5:2 "$CLOVER"
expect_fail "report: unknown option" 2 "frobnicate" "$GTRACE" report --frobnicate "$CLOVER"
expect_fail "export: -o without a value" 2 "missing value" "$GTRACE" export "$CLOVER" --format chrome -o
expect_fail "diff: one trace" 2 "two traces" "$GTRACE" diff "$CLOVER"
expect_fail "memory: neither --at nor --step" 2 "either --at" "$GTRACE" memory "$CLOVER"
expect_fail "memory: bad time" 2 "--at wants" "$GTRACE" memory --at soon "$CLOVER"
expect_fail "memory: no such step" 1 "step" "$GTRACE" memory --step 99999 run.sqlite
expect_fail "export: no format" 2 "--format is required" "$GTRACE" export "$CLOVER"
expect_fail "export: bad format" 2 "chrome, memviz or csv" "$GTRACE" export --format pdf "$CLOVER"
expect_fail "export: existing output" 1 "exists" "$GTRACE" export "$CLOVER" --format chrome -o clover.json
expect_fail "info: not a trace" 1 "not an SQLite database" "$GTRACE" info notsql.sqlite

# ---- times that are not times: refused in one line, status 2 ----------------------
for bad in nan inf -inf "" 5x 1e30 -1 " 5" 0x10 1s2 9223372036854775808 9.3e18ns; do
    expect_fail "memory --at '$bad'" 2 "--at wants" "$GTRACE" memory --at "$bad" run.sqlite
    [ "$(wc -l < err.txt | tr -d ' ')" = 1 ] || fail "memory --at '$bad': not one line: $(cat err.txt)"
done
"$GTRACE" memory run.sqlite --at 9223372036854775807 > /dev/null || fail "memory --at the last int64 ns"
expect_fail "memory: bad --pid" 2 "--pid wants" "$GTRACE" memory --at 1s --pid x run.sqlite
expect_fail "memory: a process without allocations" 1 "no allocation events" "$GTRACE" memory --at 1s --pid 1 run.sqlite

# ---- exports never remove what they did not write ----------------------------------
# /dev/full: the write fails (ENOSPC); the device stays a device (an export
# that unlinked its target on failure deleted it, as root).
if [ -c /dev/full ]; then
    expect_fail "export to /dev/full" 1 "cannot write /dev/full: No space left" \
        "$GTRACE" export "$CLOVER" --format chrome -o /dev/full --force
    [ "$(wc -l < err.txt | tr -d ' ')" = 1 ] || fail "export to /dev/full: not one line: $(cat err.txt)"
    [ -c /dev/full ] || fail "/dev/full is no longer a character device"
    expect_fail "memviz to /dev/full" 1 "No space left" "$GTRACE" export run.sqlite --format memviz -o /dev/full
    [ -c /dev/full ] || fail "/dev/full is no longer a character device"
    echo "ok: /dev/full is still a character device"
fi
# /dev/stdout is written in place, without --force
"$GTRACE" export run.sqlite --format memviz -o /dev/stdout 2> /dev/null > stdout.pickle || fail "memviz to /dev/stdout"
cmp -s stdout.pickle run.pickle || fail "memviz through /dev/stdout differs from the file"
# a write that fails half way (the file size limit) leaves the old file as it was, and nothing beside it
printf 'old' > keep.json
(ulimit -f 64; trap '' XFSZ; exec "$GTRACE" export "$CLOVER" --format chrome -o keep.json --force) 2> err.txt &&
    fail "export past the file size limit succeeded"
grep -q "cannot write keep.json" err.txt || fail "export past the size limit: $(cat err.txt)"
[ "$(cat keep.json)" = old ] || fail "a failed export changed keep.json"
[ -z "$(ls -A | grep '^\.keep\.json\.')" ] || fail "a failed export left $(ls -A | grep '^\.keep')"
echo "ok: a failed export leaves the old file and no temporary: $(head -n 1 err.txt)"
"$GTRACE" export "$CLOVER" --format chrome -o keep.json --force 2> /dev/null || fail "export over keep.json"
cmp -s keep.json clover.json || fail "the replaced keep.json is not the export"
# interrupted (SIGTERM, SIGINT) at several moments: never a temporary left, never a partial target
interrupted=0
for d in 0.02 0.05 0.1 0.2 0.3 0.5; do
    for sig in TERM INT; do
        rm -f int.json
        "$GTRACE" export "$CLOVER" --format chrome -o int.json 2> /dev/null &
        pid=$!
        sleep "$d"
        kill -s "$sig" "$pid" 2> /dev/null
        wait "$pid"
        st=$?
        [ -z "$(ls -A | grep '^\.int\.json\.')" ] || fail "SIG$sig after ${d}s left $(ls -A | grep '^\.int')"
        if [ "$st" = 0 ]; then
            cmp -s int.json clover.json || fail "an export that finished wrote another file"
        else
            [ ! -e int.json ] || fail "SIG$sig after ${d}s (status $st) left a partial int.json"
            interrupted=$((interrupted + 1))
        fi
    done
done
echo "ok: $interrupted interrupted exports left no temporary and no partial file"

# ---- an empty trace still reports -------------------------------------------------
"$GTRACE" -o empty.sqlite /bin/true > /dev/null 2>&1 || fail "recording an empty run"
"$GTRACE" report empty.sqlite > empty.txt || fail "report on an empty trace"
grep -q "no steps" empty.txt && grep -q "no device activity" empty.txt || fail "empty report: $(cat empty.txt)"
echo "ok: an empty trace reports no steps and no device activity"

# ---- a big trace (64 MB and more) is checked beside the reading: damage is still refused
if command -v sqlite3 > /dev/null && command -v dd > /dev/null; then
    cp run.sqlite big.sqlite
    sqlite3 big.sqlite "PRAGMA journal_mode=DELETE; CREATE TABLE filler (x BLOB);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 70)
        INSERT INTO filler SELECT zeroblob(1048576) FROM n;" > /dev/null || fail "making a big trace"
    "$GTRACE" report big.sqlite > big.txt || fail "report on an intact big trace"
    "$GTRACE" info big.sqlite > info.txt || fail "info on an intact big trace"
    # a file changed since gtrace closed it: checked whole, not by its mark
    grep -q "^checked" info.txt && fail "info: a changed big trace checked by its mark: $(cat info.txt)"
    "$GTRACE" info --check big.sqlite > info2.txt || fail "info --check on an intact big trace"
    cmp -s info.txt info2.txt || fail "info and info --check differ on a changed big trace"
    page=$(sqlite3 big.sqlite "PRAGMA page_size")
    size=$(wc -c < big.sqlite)
    dd if=/dev/zero of=big.sqlite bs="$page" count=1 seek=$((size / page / 2)) conv=notrunc 2> /dev/null
    expect_fail "report: damaged big trace" 1 "damaged" "$GTRACE" report big.sqlite
    expect_fail "info: damaged big trace" 1 "damaged" "$GTRACE" info big.sqlite
    expect_fail "info --check: damaged big trace" 1 "damaged" "$GTRACE" info --check big.sqlite
    expect_fail "diff: damaged big trace" 1 "damaged" "$GTRACE" diff run.sqlite big.sqlite
    rm -f big.sqlite
fi
echo "all cli_analyze checks passed"
