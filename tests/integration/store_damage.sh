#!/bin/sh
# store_damage.sh: the gtrace CLI on damaged and hostile copies of a real
# nsys export (the cloverleaf fixture, damaged with the sqlite3 CLI). A view
# in place of a table that would never finish is refused at once with one
# line naming the file and exit status 1; rows with int64 extremes, REALs
# where integers belong and megabyte names are read with those rows refused,
# and info, report and export finish with sane figures. Every command runs
# under `timeout` only so that a hang fails the test instead of stalling it.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
CLOVER="$GT_FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite"
[ -x "$GTRACE" ] || { echo "missing $GTRACE: build it first"; exit 99; }
[ -r "$CLOVER" ] || { echo "fixture missing under $GT_FIXTURES"; exit 99; }
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 (the CLI) is needed by this test"; exit 99; }
command -v timeout >/dev/null 2>&1 || { echo "timeout (coreutils) is needed by this test"; exit 99; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-store-damage.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99

fail() { echo "FAIL: $*"; exit 1; }

# damaged NAME SQL: a copy of the fixture with SQL run on it
damaged() {
    cp "$CLOVER" "$1.sqlite" && sqlite3 "$1.sqlite" "$2" || fail "damaging $1: sqlite3 failed"
}

# refused WHAT PATTERN FILE CMD...: exits 1 with one line on stderr naming FILE and saying PATTERN
refused() {
    what=$1 pattern=$2 file=$3; shift 3
    timeout 300 "$@" > out.txt 2> err.txt
    got=$?
    [ "$got" = 124 ] && fail "$what: still running after 300 s"
    [ "$got" = 1 ] || fail "$what: exit status $got, expected 1 ($(cat err.txt))"
    [ "$(wc -l < err.txt | tr -d ' ')" = 1 ] || fail "$what: not one line on stderr: $(cat err.txt)"
    grep -q -- "$file" err.txt || fail "$what: stderr does not name $file: $(cat err.txt)"
    grep -q -- "$pattern" err.txt || fail "$what: stderr lacks '$pattern': $(cat err.txt)"
    echo "ok: $what -> $(cat err.txt)"
}

# runs WHAT CMD...: exits 0
runs() {
    what=$1; shift
    timeout 300 "$@" > out.txt 2> err.txt
    got=$?
    [ "$got" = 124 ] && fail "$what: still running after 300 s"
    [ "$got" = 0 ] || fail "$what: exit status $got ($(cat err.txt))"
    echo "ok: $what"
}

# ---- views in place of tables: refused before any query could run them ---------
damaged cross "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k;
    CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT a.* FROM k a, k b, k c, k d, k e;"
damaged recursive "ALTER TABLE StringIds RENAME TO s;
    CREATE VIEW StringIds AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
    SELECT x AS id, 'x' AS value FROM c;"
for cmd in info report; do
    refused "$cmd: a cross-join view" "CUPTI_ACTIVITY_KIND_KERNEL is a view" cross.sqlite "$GTRACE" $cmd cross.sqlite
    refused "$cmd: a recursive view" "StringIds is a view" recursive.sqlite "$GTRACE" $cmd recursive.sqlite
done
refused "export: a cross-join view" "is a view" cross.sqlite "$GTRACE" export cross.sqlite --format chrome -o x.json
[ -e x.json ] && fail "export of a refused trace left x.json behind"

# ---- rows out of range or of the wrong type: refused rows, sane figures -------------
damaged rows "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 9223372036854775807, \"end\" = 9223372036854775807
        WHERE rowid = (SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);
    UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = -9223372036854775808
        WHERE rowid = (SELECT max(rowid) FROM CUPTI_ACTIVITY_KIND_RUNTIME);
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = 1e300 WHERE rowid = 1;
    UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = x'0102' WHERE rowid = 2;
    UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -9223372036854775808 WHERE rowid = 1;"
runs "info: extreme rows" "$GTRACE" info rows.sqlite
span=$(grep '^span' out.txt)
echo "$span" | grep -q "years" && fail "info: the span still reaches the refused rows: $span"
echo "ok: info $span"
grep -q '^refused    cuda_api *2 rows' out.txt || fail "info: the two refused runtime rows are not reported: $(grep refused out.txt)"
grep -q '^refused    kernel *2 rows' out.txt || fail "info: the two refused kernel rows are not reported: $(grep refused out.txt)"
grep -q '^refused    memcpy *1 rows' out.txt || fail "info: the refused copy is not reported: $(grep refused out.txt)"
echo "ok: info reports the refused rows"
runs "report: extreme rows" "$GTRACE" report rows.sqlite
runs "report --json: extreme rows" "$GTRACE" report --json rows.sqlite
runs "export chrome: extreme rows" "$GTRACE" export rows.sqlite --format chrome -o rows.json
if command -v python3 >/dev/null; then
    python3 - rows.json <<'PY' || fail "the chrome export of the damaged trace is not sane JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ts = [e["ts"] for e in d["traceEvents"] if "ts" in e]
assert ts and max(abs(t) for t in ts) < 2 ** 53 / 1000, max(ts)
print("ok: chrome events", len(ts), "all within bounds")
PY
fi

# ---- a megabyte name: cut to 4 KiB, everything still works -----------------------
damaged names "UPDATE StringIds SET value = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c
        LIMIT 1048576) SELECT group_concat('x', '') FROM c) || value
    WHERE id IN (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL);"
runs "report: megabyte names" "$GTRACE" report names.sqlite
longest=$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' out.txt)
[ "$longest" -lt 65536 ] || fail "report: a line of $longest bytes (a name not cut)"
echo "ok: report's longest line is $longest bytes"
runs "export csv: megabyte names" "$GTRACE" export names.sqlite --format csv -o csv
grep -q "bytes, " csv/kernel.csv || fail "export csv: the cut names lack their length and hash"
echo "ok: cut names end with their length and hash"
exit 0
