#!/bin/sh
# nsys_readers.sh: tools written for Nsight Systems' SQLite exports read
# gtrace's traces. Two parts, each run on the nsys fixtures and on traces
# gtrace writes here (a synthetic GPU-shaped trace from the store's writer,
# a trainer run, and a 2-rank `gtrace mpirun ... --dist ddp` run):
#
#  1. the queries such tools run (python3's sqlite3): tables listed with
#     sqlite_master type='table', kernels joined to StringIds for names,
#     runtime calls joined to kernels by correlationId, NVTX ranges with
#     text/textId coalesced and searched by text, copies labelled through
#     ENUM_CUDA_MEMCPY_OPER, GPUs, processes and threads, streams and contexts;
#  2. a maintained third-party reader, nsys2prv (pinned, from PyPI, in a
#     throwaway virtual environment cached under $GT_TMPDIR): its kernel and
#     NVTX readers and the metadata reads of its converter.
#
# A query or reader call that works on an nsys export must work on gtrace's
# traces that hold that kind of event; tables of a kind a trace has none of
# must be absent, as nsys leaves them out. Skips (77) without python3, or
# when pip cannot reach the package index; the trainer runs are left out
# without the trainer or the fortunes data, the ddp run without Open MPI.
set -u
INTEROP_NAME=nsys-readers
. "$GT_TOP_SRCDIR/tests/integration/interop_common.sh"

# ---- traces: name:kind, kind gpu (CUDA activity) or cpu (NVTX only) ------------
"$SYNTH" -n 20000 -f "$WORK/synthetic.sqlite" --runs 1 --gtrace "$GTRACE" >"$WORK/synth.log" 2>&1 ||
    { cat "$WORK/synth.log"; fail "the synthetic trace"; }
traces="synthetic:gpu"
if [ ! -x "$TRAINER" ]; then
    echo "note: the trainer is not built here: the trainer runs are left out"
elif [ -d /usr/share/games/fortunes ]; then
    "$GTRACE" -o "$WORK/trainer.sqlite" "$TRAINER" --model gpt-tiny --steps 3 --eval-every 0 \
        >"$WORK/trainer.log" 2>&1 || { cat "$WORK/trainer.log"; fail "gtrace on the trainer"; }
    traces="$traces trainer:cpu"
    if grep -q '^#define HAVE_MPI 1' "$GT_TOP_BUILDDIR/config.h" && command -v mpirun >/dev/null 2>&1; then
        . "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
        "$GTRACE" -o "$WORK/ddp.sqlite" mpirun --oversubscribe --bind-to none -np 2 "$TRAINER" --model gpt-tiny \
            --layers 2 --width 64 --steps 2 --batch 4 --threads 1 --workers 0 --eval-every 0 --dist ddp \
            >"$WORK/ddp.log" 2>&1 || { cat "$WORK/ddp.log"; fail "gtrace mpirun trainer --dist ddp"; }
        traces="$traces ddp:cpu"
    else
        echo "note: no Open MPI here: the ddp run is left out"
    fi
else
    echo "note: no fortunes data (apt-get install fortunes): the trainer runs are left out"
fi
# every trace gtrace wrote is read back by gtrace itself
for t in $traces; do
    "$GTRACE" report "$WORK/${t%%:*}.sqlite" >/dev/null 2>"$WORK/report.err" ||
        fail "gtrace report ${t%%:*}: $(cat "$WORK/report.err")"
done

# ---- 1. the queries of nsys-export readers -------------------------------------------
python3 - "$CLOVER" "$SAXPY" "$WORK" $traces <<'PY' || fail "queries that work on nsys exports fail on gtrace's traces"
import os, sqlite3, sys
fixtures, work, traces = sys.argv[1:3], sys.argv[3], [t.split(":") for t in sys.argv[4:]]

def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

# (name, kinds of events it needs, SQL, check of its rows on a gtrace trace that has them)
one = lambda rows: rows[0][0]
QUERIES = [
    ("kernels with names", "gpu",
     "SELECT k.start, k.end, k.streamId, d.value, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL AS k"
     " JOIN StringIds AS d ON d.id = k.demangledName JOIN StringIds AS s ON s.id = k.shortName ORDER BY k.start",
     lambda db, rows: len(rows) > 0 and len(rows) == one(db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall())
                      and all(r[3] and r[4] and r[1] >= r[0] for r in rows)),
    ("kernel launch shapes", "gpu",
     "SELECT gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread, staticSharedMemory,"
     " dynamicSharedMemory, localMemoryTotal, correlationId, globalPid, deviceId, contextId"
     " FROM CUPTI_ACTIVITY_KIND_KERNEL",
     lambda db, rows: all(r[0] > 0 and r[3] > 0 for r in rows)),
    ("runtime calls of kernels by correlationId", "gpu",
     "SELECT r.start, r.end, n.value, k.start FROM CUPTI_ACTIVITY_KIND_RUNTIME AS r"
     " JOIN CUPTI_ACTIVITY_KIND_KERNEL AS k ON k.correlationId = r.correlationId"
     " JOIN StringIds AS n ON n.id = r.nameId",
     lambda db, rows: len(rows) > 0 and all(r[2] and r[3] >= r[0] for r in rows)),
    ("copies by kind", "gpu",
     "SELECT o.label, count(*), sum(m.bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m"
     " JOIN ENUM_CUDA_MEMCPY_OPER AS o ON o.id = m.copyKind GROUP BY o.label",
     lambda db, rows: len(rows) > 0 and sum(r[1] for r in rows)
                      == one(db.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY").fetchall())),
    ("copy memory kinds", "gpu",
     "SELECT s.label, d.label FROM CUPTI_ACTIVITY_KIND_MEMCPY AS m LEFT JOIN ENUM_CUDA_MEM_KIND AS s"
     " ON s.id = m.srcKind LEFT JOIN ENUM_CUDA_MEM_KIND AS d ON d.id = m.dstKind",
     lambda db, rows: len(rows) > 0 and all(r[0] and r[1] for r in rows)),
    ("GPUs", "gpu", "SELECT id, name, totalMemory, smCount FROM TARGET_INFO_GPU",
     lambda db, rows: len(rows) > 0 and all(r[1] for r in rows)),
    ("streams of kernels", "gpu",
     "SELECT DISTINCT k.streamId, s.streamId FROM CUPTI_ACTIVITY_KIND_KERNEL AS k LEFT JOIN TARGET_INFO_CUDA_STREAM AS s"
     " ON s.streamId = k.streamId AND s.contextId = k.contextId"
     " AND s.processId = k.globalPid / 16777216 % 16777216",
     lambda db, rows: len(rows) > 0 and all(r[1] is not None for r in rows)),
    ("CUDA contexts", "gpu",
     "SELECT processId, deviceId, contextId, nullStreamId FROM TARGET_INFO_CUDA_CONTEXT_INFO",
     lambda db, rows: len(rows) > 0),
    ("NVTX ranges, text or textId", "nvtx",
     "SELECT n.start, n.end, coalesce(n.text, s.value) FROM NVTX_EVENTS AS n LEFT JOIN StringIds AS s"
     " ON s.id = n.textId WHERE n.eventType IN (59, 60)",
     lambda db, rows: len(rows) > 0 and all(r[2] is not None and r[1] >= r[0] for r in rows)),
    ("NVTX domains by name", "nvtx",
     "SELECT domainId, text FROM NVTX_EVENTS WHERE eventType = 75",
     lambda db, rows: all(r[1] for r in rows)),
    ("processes", "any", "SELECT pid, name FROM PROCESSES", lambda db, rows: len(rows) > 0),
    ("thread names", "any",
     "SELECT t.globalTid, s.value FROM ThreadNames AS t JOIN StringIds AS s ON s.id = t.nameId",
     lambda db, rows: True),
    ("session start", "any", "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME", lambda db, rows: True),
    ("export schema version", "any",
     "SELECT value FROM META_DATA_EXPORT WHERE name = 'EXPORT_SCHEMA_VERSION'",
     lambda db, rows: len(rows) == 1),
    ("host name", "any", "SELECT value FROM TARGET_INFO_SYSTEM_ENV WHERE name = 'Hostname'",
     lambda db, rows: len(rows) == 1 and rows[0][0]),
]
# the GPU kinds: event tables nsys leaves out of an export without them
GPU_TABLES = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME"}
# the metadata tables of nsys's exports (2022.2 writes every table, 2024.5
# leaves out empty event tables, never these), the contexts nsys2prv's
# converter reads among them: there on every trace, without rows if need be
REQUIRED_TABLES = {"META_DATA_EXPORT", "META_DATA_CAPTURE", "TARGET_INFO_SESSION_START_TIME",
                   "TARGET_INFO_SYSTEM_ENV", "TARGET_INFO_CUDA_STREAM", "TARGET_INFO_CUDA_CONTEXT_INFO"}

works_on_nsys, nsys_tables = set(), set()
for f in fixtures:
    db = sqlite3.connect(f"file:{f}?mode=ro", uri=True)
    nsys_tables |= tables(db)
    db.text_factory = lambda b: b.decode(errors="replace")
    for name, _, sql, _ in QUERIES:
        try:
            db.execute(sql).fetchall()
            works_on_nsys.add(name)
        except sqlite3.Error as e:
            print(f"  ({os.path.basename(f)}: {name}: {e})")
    db.close()
if REQUIRED_TABLES - nsys_tables:
    sys.exit(f"tables no nsys export has (the test is wrong): {sorted(REQUIRED_TABLES - nsys_tables)}")
print("works on the nsys exports:", ", ".join(n for n, *_ in QUERIES if n in works_on_nsys))
missing = [n for n, *_ in QUERIES if n not in works_on_nsys]
if missing:
    sys.exit(f"queries that fail on both nsys exports (the test is wrong): {missing}")

bad = 0
for trace, kind in traces:
    path = os.path.join(work, trace + ".sqlite")
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = tables(db)
    views = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'view'")]
    if views:
        print(f"FAIL {trace}: views where nsys has tables: {views}"); bad += 1
    if kind == "gpu" and "CUPTI_ACTIVITY_KIND_KERNEL" not in have:
        print(f"FAIL {trace}: CUPTI_ACTIVITY_KIND_KERNEL is not listed among its tables"); bad += 1
    if kind == "cpu" and have & GPU_TABLES:
        print(f"FAIL {trace}: GPU tables without GPU activity (nsys leaves them out): {sorted(have & GPU_TABLES)}"); bad += 1
    if REQUIRED_TABLES - have:
        print(f"FAIL {trace}: no {sorted(REQUIRED_TABLES - have)} (nsys writes them, empty or not)"); bad += 1
    for name, needs, sql, check in QUERIES:
        if needs == "gpu" and kind != "gpu":
            continue
        try:
            rows = db.execute(sql).fetchall()
        except sqlite3.Error as e:
            print(f"FAIL {trace}: {name}: {e}"); bad += 1
            continue
        if not check(db, rows):
            print(f"FAIL {trace}: {name}: unexpected rows: {rows[:3]}"); bad += 1
        else:
            print(f"ok: {trace}: {name} ({len(rows)} rows)")
    if kind == "cpu":
        # a reader that searches NVTX messages in text (as nsys stores a plain message) finds the steps
        n = one(db.execute("SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'step %'").fetchall())
        print(f"{'ok' if n > 0 else 'FAIL'}: {trace}: step ranges found by text ({n})")
        bad += n == 0
    db.close()
sys.exit(1 if bad else 0)
PY

# ---- 2. nsys2prv, pinned, in a throwaway environment ------------------------------------
PINS="nsys2prv==0.5.8 pandas==2.3.3 SQLAlchemy==2.1.9 numpy==2.4.6 tqdm==4.70.1"
pinned_venv nsys2prv "" "$PINS"
echo "nsys2prv from $VENV"

mkdir "$WORK/prv" && cd "$WORK/prv" || exit 99
cp "$CLOVER" cloverleaf.sqlite && cp "$SAXPY" saxpy.sqlite || exit 99
for t in $traces; do ln -s "$WORK/${t%%:*}.sqlite" "${t%%:*}.sqlite"; done
"$VENV/bin/python" - cloverleaf:nsys saxpy:nsys $traces <<'PY' || fail "nsys2prv reads the nsys exports but not gtrace's traces"
# nsys2prv's converter finds NAME.sqlite in the working directory for a
# report NAME.nsys-rep; its readers are called as its converter calls them.
import sys, warnings
warnings.filterwarnings("ignore")
import pandas as pd
from nsys2prv.semantics.kernels_semantic import KernelsSemantic
from nsys2prv.semantics.nvtx_pushpop_simple_semantic import NVTXPushPopSimpleSemantic
from nsys2prv.semantics.nvtx_startend_semantic import NVTXStartEndSemantic

def semantic(cls, name):
    s = cls(name + ".nsys-rep")
    s.Setup()
    s.load_data()
    return s.get_df()

def table(name, t):
    return pd.read_sql_table(t, f"sqlite:///{name}.sqlite")

def meta(name):
    m = table(name, "META_DATA_EXPORT")
    minor = int(m.loc[m["name"] == "EXPORT_SCHEMA_VERSION_MINOR"]["value"].iloc[0])
    assert 11 <= minor <= 16, minor  # what the converter supports
    return m

def context_info(name):  # the converter's resource identification
    c = table(name, "TARGET_INFO_CUDA_CONTEXT_INFO")
    env = table(name, "TARGET_INFO_SYSTEM_ENV")
    c["hostname"] = env.loc[env["name"] == "Hostname"]["value"].iloc[0]
    c.sort_values(["processId"], inplace=True)
    assert c["deviceId"].notna().all()
    return c

# (call, kinds of events it needs, check of its result on a gtrace trace)
CALLS = [
    ("META_DATA_EXPORT", "any", meta, lambda d: len(d) > 0),
    ("KernelsSemantic", "gpu", lambda n: semantic(KernelsSemantic, n),
     lambda d: len(d) > 0 and d["Name"].notna().all() and (d["Duration:dur_ns"] >= 0).all()),
    ("NVTXPushPopSimpleSemantic", "nvtx", lambda n: semantic(NVTXPushPopSimpleSemantic, n),
     lambda d: len(d) > 0 and not d["Name"].str.endswith(":None").any()),
    ("NVTXStartEndSemantic", "nvtx", lambda n: semantic(NVTXStartEndSemantic, n), lambda d: True),
    # on every trace: without a GPU, no rows (the converter reads the table all the same)
    ("TARGET_INFO_CUDA_CONTEXT_INFO + Hostname", "any", context_info, lambda d: True),
    ("TARGET_INFO_CUDA_STREAM", "any", lambda n: table(n, "TARGET_INFO_CUDA_STREAM"), lambda d: True),
    ("TARGET_INFO_SESSION_START_TIME", "any", lambda n: table(n, "TARGET_INFO_SESSION_START_TIME"), lambda d: True),
]
works_on_nsys, bad = set(), 0
runs = [a.split(":") for a in sys.argv[1:]]
for name, kind in runs:
    for call, needs, fn, check in CALLS:
        if kind == "nsys":
            try:
                fn(name)
                works_on_nsys.add(call)
            except Exception as e:
                print(f"  ({name}: {call}: {type(e).__name__}: {str(e).splitlines()[0][:120]})")
            continue
        if call not in works_on_nsys or (needs == "gpu" and kind != "gpu"):
            continue
        try:
            d = fn(name)
        except Exception as e:
            print(f"FAIL {name}: {call}: {type(e).__name__}: {str(e).splitlines()[0][:200]}"); bad += 1
            continue
        if check(d):
            print(f"ok: {name}: nsys2prv {call} ({len(d)} rows)")
        else:
            print(f"FAIL {name}: nsys2prv {call}: unexpected result:\n{d.head(3)}"); bad += 1
print("nsys2prv calls that work on the nsys exports:", ", ".join(c for c, *_ in CALLS if c in works_on_nsys))
if len(works_on_nsys) < len(CALLS):
    sys.exit(f"calls that fail on both nsys exports (the test is wrong): {[c for c, *_ in CALLS if c not in works_on_nsys]}")
sys.exit(1 if bad else 0)
PY
echo "ok: nsys2prv and the nsys queries read gtrace's traces"
