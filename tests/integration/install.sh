#!/bin/sh
# install.sh: `make install` staged under DESTDIR with prefix /usr, then the
# installed tree used as a user would, with no build tree in sight: every
# file a user expects is there (and no bare `trainer` in bindir); the
# installed gtrace finds its capture library relative to its own binary (no
# LD_LIBRARY_PATH, no GTRACE_LIB) and records the installed gtrace-trainer;
# the trace reports; --pytorch finds the installed Python package and NVTX
# library; a CSV export labels its enum columns as the traces' ENUM_* tables
# do; and every installed man page renders without a warning.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
fail() { echo "FAIL: $*"; exit 1; }
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 (the CLI) is needed by this test"; exit 99; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-install.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99
D=$(pwd -P)/stage

# The make running this test may hand down its jobserver; this one is on its own.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -C "$GT_TOP_BUILDDIR" install DESTDIR="$D" prefix=/usr \
    > install.log 2>&1 || fail "make install: $(tail -n 20 install.log)"
echo "ok: make install DESTDIR=... prefix=/usr"

# ---- the files ----
expect="usr/bin/gtrace usr/bin/gtrace-trainer usr/lib/gtrace/libgtrace.so usr/lib/gtrace/libgtrace-nvtx.so
usr/share/gtrace/python/sitecustomize.py usr/share/gtrace/python/gtrace_torch/__init__.py
usr/share/gtrace/python/gtrace_torch/hooks.py usr/share/gtrace/python/gtrace_torch/memory.py
usr/share/gtrace/python/gtrace_torch/nvtx.py
usr/share/man/man1/gtrace.1 usr/share/man/man1/gtrace-trainer.1"
if [ -x "$GT_TOP_BUILDDIR/viewer/gtrace-view" ]; then
    expect="$expect usr/bin/gtrace-view usr/share/man/man1/gtrace-view.1"
fi
for f in $expect; do
    [ -f "$D/$f" ] || fail "not installed: /$f (installed: $(cd "$D" && find . -type f | sort | tr '\n' ' '))"
done
echo "ok: $(echo $expect | wc -w) files installed"
for f in usr/bin/trainer usr/lib/libgtrace.so usr/lib/libgtrace-nvtx.so; do
    [ ! -e "$D/$f" ] || fail "/$f installed: the trainer is gtrace-trainer, the libraries are in lib/gtrace"
done
[ -x "$D/usr/bin/gtrace-trainer" ] || fail "gtrace-trainer is not executable"
"$D/usr/bin/gtrace-trainer" --help | grep -q -- '--mem-limit' || fail "gtrace-trainer --help"

# ---- the installed gtrace on the installed trainer ----
unset GTRACE_LIB GTRACE_NVTX_LIB GTRACE_PYTHON_DIR
G="$D/usr/bin/gtrace"
"$G" -o run.sqlite "$D/usr/bin/gtrace-trainer" --steps 2 --eval-every 0 --threads 1 > run.out 2> run.err ||
    fail "gtrace on gtrace-trainer: $(tail -n 5 run.err)"
steps=$(sqlite3 run.sqlite "SELECT count(*) FROM NVTX_EVENTS n WHERE coalesce(n.text, (SELECT value FROM StringIds
    WHERE id = n.textId)) LIKE 'step %'")
[ "$steps" = 2 ] || fail "the trace holds $steps step ranges, expected 2"
blocks=$(sqlite3 run.sqlite "SELECT count(*) FROM GTRACE_MEMORY_EVENTS")
[ "$blocks" -gt 0 ] || fail "the trace holds no allocator events"
"$G" report run.sqlite > report.txt 2> report.err || fail "gtrace report: $(cat report.err)"
grep -q "steps 0..1 (2)" report.txt || fail "the report lacks the 2 steps: $(head -n 5 report.txt)"
echo "ok: installed gtrace recorded installed gtrace-trainer (2 steps, $blocks memory events) and reported"

# Without the staged library gtrace says so: the run above used it, not
# another libgtrace.so elsewhere.
mv "$D/usr/lib/gtrace/libgtrace.so" moved.so
"$G" -o none.sqlite true > none.out 2> none.err && fail "gtrace ran without its library"
grep -q "cannot find libgtrace.so" none.err || fail "no library, but: $(cat none.err)"
mv moved.so "$D/usr/lib/gtrace/libgtrace.so"
echo "ok: the library is found in the staged lib/gtrace, relative to the binary"

# --pytorch: the installed Python package and NVTX library (a program that
# does not import torch runs as without it).
if command -v python3 >/dev/null 2>&1; then
    "$G" --pytorch -o py.sqlite python3 -c 'import os; print(os.environ["PYTHONPATH"].split(":")[0]); print(os.environ["GTRACE_NVTX_LIB"])' \
        > py.out 2> py.err || fail "gtrace --pytorch: $(tail -n 5 py.err)"
    [ "$(sed -n 1p py.out)" = "$D/usr/share/gtrace/python" ] || fail "--pytorch PYTHONPATH: $(sed -n 1p py.out)"
    [ "$(sed -n 2p py.out)" = "$D/usr/lib/gtrace/libgtrace-nvtx.so" ] || fail "--pytorch NVTX library: $(sed -n 2p py.out)"
    echo "ok: --pytorch uses the installed Python package and libgtrace-nvtx.so"
fi

# ---- CSV labels, against the ENUM_* tables of nsys's own exports ----
n_csv=0
for fix in cloverleaf-cuda-nsys2024.5 saxpy-mpi-cuda-nsys2022.2; do
    F="${GT_FIXTURES:-}/nsys/$fix.sqlite"
    [ -r "$F" ] || { echo "fixture $F missing: its CSV check skipped"; continue; }
    "$G" export "$F" --format csv -o "csv-$fix" > /dev/null 2> csv.err || fail "csv export of $fix: $(cat csv.err)"
    for pair in copy_kind:ENUM_CUDA_MEMCPY_OPER src_kind:ENUM_CUDA_MEM_KIND dst_kind:ENUM_CUDA_MEM_KIND \
                mem_kind:ENUM_CUDA_MEM_KIND sync_type:ENUM_CUPTI_SYNC_TYPE; do
        col=${pair%%:*} table=${pair#*:}
        # nsys 2022.2 wrote no ENUM_* tables: then those gtrace writes (run.sqlite)
        src=$F
        sqlite3 "$F" "SELECT 1 FROM $table LIMIT 1" > /dev/null 2>&1 || src=run.sqlite
        sqlite3 -separator ',' "$src" "SELECT id, label FROM $table" > "labels-$table.txt" || fail "$src: no $table"
        for csv in "csv-$fix"/*.csv; do
            # the number and the label of each row, where the file has the column
            n=$(awk -F, -v col="$col" -v labels="labels-$table.txt" '
                BEGIN { while ((getline l < labels) > 0) { i = index(l, ","); lab[substr(l, 1, i - 1)] = substr(l, i + 1) } }
                { sub(/\r$/, "") }
                NR == 1 { for (i = 1; i <= NF; i++) { if ($i == col) c = i; if ($i == col "_label") cl = i }
                          if (!c) exit
                          for (i = cl; i <= NF && cl; i++) if ($i !~ /_label$/) cl = 0
                          if (!cl) { print "nolabel"; exit } next }
                { want = ($c in lab) ? lab[$c] : ""; if ($cl != want) { print "bad " NR ": " $c " -> " $cl ", expected " want; exit }
                  n++ }
                END { if (c && cl) print n + 0 }' "$csv")
            case $n in
            "") ;;
            nolabel) fail "$csv: $col has no ${col}_label column at the end of the row" ;;
            bad*) fail "$csv: ${col}_label, row $n" ;;
            *) [ "$n" -gt 0 ] && n_csv=$((n_csv + 1)) && echo "ok: $fix $(basename "$csv"): $n rows of ${col}_label as $table in $(basename "$src") says" ;;
            esac
        done
    done
done
[ -z "${GT_FIXTURES:-}" ] || [ ! -r "$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite" ] || [ "$n_csv" -ge 5 ] ||
    fail "only $n_csv labelled columns checked"

# ---- the man pages ----
command -v man >/dev/null 2>&1 || { echo "man missing: pages not rendered"; exit 0; }
for page in "$D"/usr/share/man/man1/*.1; do
    LC_ALL=C MANWIDTH=80 man -l --warnings "$page" > page.txt 2> page.err || fail "man -l $page: $(cat page.err)"
    [ ! -s page.err ] || fail "man -l --warnings $(basename "$page"): $(cat page.err)"
    [ -s page.txt ] || fail "$(basename "$page") renders empty"
done
LC_ALL=C MANWIDTH=80 man -l "$D/usr/share/man/man1/gtrace.1" > gtrace.txt 2>/dev/null
grep -q "^ *view \[TRACE \[TRACE2\]\]" gtrace.txt || fail "gtrace(1) lacks the view subcommand"
grep -q "^ *import FILE\.\.\. -o TRACE" gtrace.txt || fail "gtrace(1) lacks the import subcommand"
grep -q "gtrace-view(1)" gtrace.txt || fail "gtrace(1) does not name gtrace-view(1)"
grep -q "_label" gtrace.txt || fail "gtrace(1) does not say what the CSV label columns are"
echo "ok: $(ls "$D"/usr/share/man/man1/*.1 | wc -l) man pages render without warnings"
