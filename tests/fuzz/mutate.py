#!/usr/bin/env python3
"""mutate.py: damages a copy of a trace, deterministically.

    mutate.py SEED.sqlite OUT.sqlite CASE     prints what was done to OUT

CASE is a number (a random case, drawn from random.Random(CASE)) or the name
of one of the fixed cases in FIXED (each a known way a trace goes wrong). The
same SEED and CASE always give the same OUT. The damage is done through
Python's sqlite3 (the SQL kinds: dropped tables and columns, NULLs, values of
the wrong type, end before start, extreme and negative times and sizes,
dangling string ids, huge strings, invalid UTF-8, triggers and views, a table
replaced by a view that never ends) and on the bytes of the file (flipped
bytes, truncation, a zeroed page). Standard library only.
"""
import os
import random
import shutil
import sqlite3
import sys

I64_MAX = 2**63 - 1
I64_MIN = -2**63

# Tables whose rows are events, with their time, size and string-id columns.
EVENT_TABLES = {
    "CUPTI_ACTIVITY_KIND_KERNEL": (["start", "end"], ["staticSharedMemory", "dynamicSharedMemory", "localMemoryTotal"],
                                   ["demangledName", "shortName", "mangledName"]),
    "GTRACE_KERNELS": (["id", "end"], [], []),  # start is id >> 8
    "GTRACE_KERNEL_LAUNCHES": ([], ["staticSharedMemory", "dynamicSharedMemory"], ["demangledName", "shortName", "mangledName"]),
    "CUPTI_ACTIVITY_KIND_MEMCPY": (["start", "end"], ["bytes"], []),
    "CUPTI_ACTIVITY_KIND_MEMSET": (["start", "end"], ["bytes"], []),
    "CUPTI_ACTIVITY_KIND_RUNTIME": (["start", "end"], [], ["nameId"]),
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION": (["start", "end"], [], []),
    "NVTX_EVENTS": (["start", "end"], ["int64Value", "uint64Value"], ["textId", "jsonTextId"]),
    "CUDA_GPU_MEMORY_USAGE_EVENTS": (["start"], ["bytes", "address"], []),
    "GTRACE_MEMORY_EVENTS": (["start"], ["bytes", "address", "heapId"], ["nameId"]),
    "GTRACE_CPU_OPS": (["start", "end"], ["bytes", "flops"], ["nameId"]),
}
# Descriptions the readers list.
DESC_TABLES = ["StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU", "META_DATA_EXPORT", "EXPORT_META_DATA",
               "GTRACE_RUN_CONFIG", "CUDA_CALLCHAINS", "GTRACE_GPU_MEMORY_STACKS", "GTRACE_DROPPED_EVENTS",
               "TARGET_INFO_SESSION_START_TIME"]
TEXT_COLUMNS = {"StringIds": ["value"], "PROCESSES": ["name"], "TARGET_INFO_GPU": ["name", "busLocation", "chipName"],
                "GTRACE_RUN_CONFIG": ["key", "value"], "NVTX_EVENTS": ["text"], "META_DATA_EXPORT": ["value"]}

EXTREMES = [I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, -1, -2**62, 2**62, 2**53 + 1, -(2**53) - 1, 2**31, -2**31]
WRONG_TYPES = ["1.5", "-1e300", "1e300", "'abc'", "''", "x'00ff'", "zeroblob(8)", "'9223372036854775808'",
               "'-0'", "9.3e18", "'  12'"]
BAD_UTF8 = [b"\xff\xfe", b"\xc3\x28", b"\xe2\x82", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80",
            b"\xc0\xaf", b"\xe0\x80\xaf", b"\x80", b"\x01\x02\x1b[31m\x7f", b"a\x00b", b"\xf0\x9f\x98"]


def q(name):
    return '"' + name.replace('"', '""') + '"'


class Trace:
    def __init__(self, path):
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=DELETE")
        self.db.execute("BEGIN")

    def objects(self, kind="table"):
        return [r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type=? ORDER BY name", (kind,))]

    def columns(self, table):
        return [r[1] for r in self.db.execute("PRAGMA table_info(%s)" % q(table))]

    def count(self, table):
        try:
            return self.db.execute("SELECT count(*) FROM %s" % q(table)).fetchone()[0]
        except sqlite3.Error:
            return 0

    def close(self):
        self.db.execute("COMMIT")
        self.db.close()

    def base_table(self, table):
        """The table that holds a view's times (gtrace's kernel view), else table."""
        if table in self.objects("view") and table == "CUPTI_ACTIVITY_KIND_KERNEL":
            return "GTRACE_KERNELS"
        return table


def start_of(table):
    """The SQL for a row's start: gtrace's kernels keep it in the id."""
    return "(id >> 8)" if table == "GTRACE_KERNELS" else "start"


def set_start(table, expr):
    return "id = ((%s) << 8) | (id & 255)" % expr if table == "GTRACE_KERNELS" else "start = %s" % expr

def some_rows(t, table, rnd, most=None):
    """A WHERE clause picking a few rows (or one) of table."""
    n = t.count(table)
    if n == 0:
        return "1"
    k = rnd.choice([1, 1, 1, 2, 5, n]) if most is None else most
    if k >= n:
        return "1"
    first = rnd.randrange(n)
    return "rowid IN (SELECT rowid FROM %s LIMIT %d OFFSET %d)" % (q(table), k, first)


def event_tables(t):
    have = set(t.objects("table"))
    return [x for x in sorted(EVENT_TABLES) if x in have and t.count(x) > 0]


def pick_column(t, rnd, roles=(0, 1, 2), tables=None):
    """(table, column) of an event table and a column of one of the roles
    (0 times, 1 sizes, 2 string ids); None when the trace has none."""
    cands = []
    for table in tables or event_tables(t):
        base = table
        cols = set(t.columns(base))
        for r in roles:
            for c in EVENT_TABLES.get(table, ([], [], []))[r]:
                if c in cols:
                    cands.append((base, c))
    return rnd.choice(cands) if cands else None


# ---- the mutations: each takes (t, rnd) and returns a description ----------

def m_drop_table(t, rnd):
    tables = event_tables(t) + [x for x in DESC_TABLES if x in t.objects("table")] + t.objects("view")
    if not tables:
        return None
    x = rnd.choice(tables)
    if x in t.objects("view"):
        t.db.execute("DROP VIEW %s" % q(x))
    else:
        t.db.execute("DROP TABLE %s" % q(x))
    return "drop table " + x


def m_drop_column(t, rnd):
    tables = event_tables(t) + [x for x in DESC_TABLES if x in t.objects("table")]
    if not tables:
        return None
    x = rnd.choice(tables)
    cols = t.columns(x)
    if len(cols) < 2:
        return None
    c = rnd.choice(cols)
    # rebuilt without the column: works whatever indexes and views use it
    keep = ", ".join(q(k) for k in cols if k != c)
    for (name,) in t.db.execute("SELECT name FROM sqlite_master WHERE type='index' AND tbl_name=?", (x,)).fetchall():
        t.db.execute("DROP INDEX %s" % q(name))
    t.db.execute("CREATE TABLE fuzz_tmp AS SELECT %s FROM %s" % (keep, q(x)))
    t.db.execute("DROP TABLE %s" % q(x))
    t.db.execute("ALTER TABLE fuzz_tmp RENAME TO %s" % q(x))
    return "drop column %s.%s" % (x, c)


def m_null(t, rnd):
    pc = pick_column(t, rnd)
    if not pc:
        return None
    x, c = pc
    w = some_rows(t, x, rnd)
    t.db.execute("UPDATE %s SET %s = NULL WHERE %s" % (q(x), q(c), w))
    return "NULL in %s.%s where %s" % (x, c, w)


def m_wrong_type(t, rnd):
    pc = pick_column(t, rnd)
    if not pc:
        return None
    x, c = pc
    v = rnd.choice(WRONG_TYPES)
    w = some_rows(t, x, rnd)
    t.db.execute("UPDATE %s SET %s = %s WHERE %s" % (q(x), q(c), v, w))
    return "%s.%s = %s where %s" % (x, c, v, w)


def m_end_before_start(t, rnd):
    tables = [x for x in event_tables(t) if "end" in t.columns(x)]
    if not tables:
        return None
    x = rnd.choice(tables)
    d = rnd.choice([1, 1000, 10**9, 2**40])
    w = some_rows(t, x, rnd)
    t.db.execute('UPDATE %s SET "end" = %s - %d WHERE %s' % (q(x), start_of(x), d, w))
    return "%s end = start - %d where %s" % (x, d, w)


def m_extreme(t, rnd):
    pc = pick_column(t, rnd, roles=(0, 1))
    if not pc:
        return None
    x, c = pc
    v = rnd.choice(EXTREMES)
    w = some_rows(t, x, rnd)
    t.db.execute("UPDATE %s SET %s = %d WHERE %s" % (q(x), q(c), v, w))
    return "%s.%s = %d where %s" % (x, c, v, w)


def m_far_end(t, rnd):
    """Times extreme but consistent: end far past start, or both shifted."""
    tables = [x for x in event_tables(t) if "end" in t.columns(x)]
    if not tables:
        return None
    x = rnd.choice(tables)
    w = some_rows(t, x, rnd, most=rnd.choice([1, 1, 3]))
    top = I64_MAX >> 8 if x == "GTRACE_KERNELS" else I64_MAX
    bottom = I64_MIN >> 8 if x == "GTRACE_KERNELS" else I64_MIN
    how = rnd.choice(["end_max", "shift_max", "shift_min", "start_min"])
    if how == "end_max":
        t.db.execute('UPDATE %s SET "end" = %d WHERE %s' % (q(x), I64_MAX, w))
    elif how == "shift_max":
        t.db.execute('UPDATE %s SET %s, "end" = %d WHERE %s' % (q(x), set_start(x, top - 10), I64_MAX, w))
    elif how == "shift_min":
        t.db.execute('UPDATE %s SET %s, "end" = %d WHERE %s' % (q(x), set_start(x, bottom), I64_MIN + 10, w))
    else:
        t.db.execute('UPDATE %s SET %s WHERE %s' % (q(x), set_start(x, bottom), w))
    return "%s %s where %s" % (x, how, w)


def m_dangling(t, rnd):
    pc = pick_column(t, rnd, roles=(2,))
    if not pc:
        return None
    x, c = pc
    v = rnd.choice([987654321, -5, I64_MAX, 0])
    w = some_rows(t, x, rnd)
    t.db.execute("UPDATE %s SET %s = %d WHERE %s" % (q(x), q(c), v, w))
    return "dangling %s.%s = %d where %s" % (x, c, v, w)


def text_target(t, rnd):
    cands = [(x, c) for x, cols in sorted(TEXT_COLUMNS.items()) if x in t.objects("table") and t.count(x) > 0
             for c in cols if c in t.columns(x)]
    return rnd.choice(cands) if cands else None


def m_huge_string(t, rnd):
    tc = text_target(t, rnd)
    if not tc:
        return None
    x, c = tc
    n = rnd.choice([1 << 20, 70000, 4096])
    w = some_rows(t, x, rnd, most=rnd.choice([1, 3]))
    t.db.execute("UPDATE %s SET %s = printf('%%.*c', %d, 'x') || 'end' WHERE %s" % (q(x), q(c), n, w))
    return "%s.%s = %d bytes where %s" % (x, c, n, w)


def m_bad_utf8(t, rnd):
    tc = text_target(t, rnd)
    if not tc:
        return None
    x, c = tc
    b = rnd.choice(BAD_UTF8)
    w = some_rows(t, x, rnd, most=rnd.choice([1, 10, 1000]))
    how = rnd.choice(["replace", "append"])
    expr = "CAST(X'%s' AS TEXT)" % b.hex()
    if how == "append":
        expr = "%s || %s || %s" % (q(c), expr, q(c))
    t.db.execute("UPDATE %s SET %s = %s WHERE %s" % (q(x), q(c), expr, w))
    return "%s.%s %s bytes %s where %s" % (x, c, how, b.hex(), w)


def m_trigger_view(t, rnd):
    tables = t.objects("table")
    x = rnd.choice(tables)
    t.db.execute("CREATE TRIGGER fuzz_trig AFTER INSERT ON %s BEGIN DELETE FROM %s; END" % (q(x), q(x)))
    t.db.execute("CREATE TRIGGER fuzz_trig2 BEFORE DELETE ON %s BEGIN SELECT RAISE(ABORT, 'no'); END" % q(x))
    t.db.execute("CREATE VIEW fuzz_view AS SELECT * FROM %s" % q(x))
    t.db.execute("CREATE VIEW fuzz_endless AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                 "SELECT x FROM c")
    return "triggers on %s, views" % x


def endless_select(t, table, cols, rnd):
    """A SELECT with table's columns over rows that never end (a recursive
    CTE) or nearly never (a cross join of the table with itself)."""
    if rnd.random() < 0.5 or t.count(table) < 4:
        sel = ", ".join(("x AS %s" % q(c)) if c in ("start", "end", "id") else ("1 AS %s" % q(c)) for c in cols)
        return "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT %s FROM c" % sel, "recursive"
    sel = ", ".join("a.%s" % q(c) for c in cols)
    return "SELECT %s FROM fuzz_rows a, fuzz_rows b, fuzz_rows c, fuzz_rows d, fuzz_rows e" % sel, "cross join"


def m_endless_view(t, rnd):
    tables = event_tables(t) + [x for x in ("StringIds", "PROCESSES", "ThreadNames") if x in t.objects("table")]
    if not tables:
        return None
    x = rnd.choice(tables)
    if x == "GTRACE_KERNELS" and "CUPTI_ACTIVITY_KIND_KERNEL" in t.objects("view"):
        x = "CUPTI_ACTIVITY_KIND_KERNEL"
    base = t.base_table(x)
    cols = t.columns(x)
    t.db.execute("CREATE TABLE fuzz_rows AS SELECT * FROM %s" % q(x))
    sel, how = endless_select(t, x, cols, rnd)
    if x in t.objects("view"):
        t.db.execute("DROP VIEW %s" % q(x))
    else:
        t.db.execute("DROP TABLE %s" % q(x))
    t.db.execute("CREATE VIEW %s AS %s" % (q(x), sel))
    return "%s replaced by a %s view%s" % (x, how, "" if base == x else " (was a view over %s)" % base)


def m_reorder(t, rnd):
    tables = [x for x in event_tables(t) if "start" in t.columns(x)]
    if not tables:
        return None
    x = rnd.choice(tables)
    for (name,) in t.db.execute("SELECT name FROM sqlite_master WHERE type='index' AND tbl_name=?", (x,)).fetchall():
        t.db.execute("DROP INDEX %s" % q(name))
    t.db.execute("CREATE TABLE fuzz_tmp AS SELECT * FROM %s ORDER BY start DESC" % q(x))
    t.db.execute("DELETE FROM %s" % q(x))
    t.db.execute("INSERT INTO %s SELECT * FROM fuzz_tmp" % q(x))
    t.db.execute("DROP TABLE fuzz_tmp")
    return "%s rows in reverse time order, no index" % x


def m_duplicate(t, rnd):
    tables = [x for x in event_tables(t) if x not in ("GTRACE_KERNELS", "GTRACE_KERNEL_LAUNCHES")]
    if not tables:
        return None
    x = rnd.choice(tables)
    t.db.execute("INSERT INTO %s SELECT * FROM %s" % (q(x), q(x)))
    return "%s rows doubled" % x


def m_meta(t, rnd):
    have = t.objects("table")
    x = next((m for m in ("META_DATA_EXPORT", "EXPORT_META_DATA") if m in have), None)
    if not x:
        return None
    v = rnd.choice(["'abc'", "'99.0'", "NULL", "'3.13.2'", "''", "x'ff'", "-1"])
    t.db.execute("UPDATE %s SET value = %s WHERE %s" % (q(x), v, some_rows(t, x, rnd)))
    return "%s value = %s" % (x, v)


def m_wrong_enum(t, rnd):
    cands = [("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind"), ("CUPTI_ACTIVITY_KIND_MEMCPY", "srcKind"),
             ("CUPTI_ACTIVITY_KIND_MEMSET", "memKind"), ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "syncType"),
             ("NVTX_EVENTS", "eventType"), ("CUDA_GPU_MEMORY_USAGE_EVENTS", "memKind"),
             ("CUDA_GPU_MEMORY_USAGE_EVENTS", "memoryOperationType"), ("GTRACE_MEMORY_EVENTS", "operation"),
             ("CUPTI_ACTIVITY_KIND_RUNTIME", "eventClass"), ("GTRACE_KERNELS", "deviceId"),
             ("GTRACE_KERNELS", "streamId"), ("CUPTI_ACTIVITY_KIND_KERNEL", "deviceId"),
             ("CUPTI_ACTIVITY_KIND_KERNEL", "gridX"), ("NVTX_EVENTS", "category"), ("NVTX_EVENTS", "globalTid")]
    have = set(t.objects("table"))
    cands = [(x, c) for x, c in cands if x in have and c in t.columns(x) and t.count(x) > 0]
    if not cands:
        return None
    x, c = rnd.choice(cands)
    v = rnd.choice([-1, 127, 128, 255, 2**31 - 1, -2**31, 2**32 + 3, I64_MAX, I64_MIN])
    w = some_rows(t, x, rnd)
    t.db.execute("UPDATE %s SET %s = %d WHERE %s" % (q(x), q(c), v, w))
    return "%s.%s = %d where %s" % (x, c, v, w)


def m_step_names(t, rnd):
    """Names that read as steps with numbers at the ends of int64 (or past them)."""
    have = t.objects("table")
    if "StringIds" not in have or t.count("StringIds") == 0:
        return None
    v = rnd.choice(["step 9223372036854775807", "step -9223372036854775808", "step 99999999999999999999",
                    "step -1", "Step 0x7fffffffffffffff", "step", "iteration 18446744073709551615"])
    w = some_rows(t, "StringIds", rnd, most=rnd.choice([1, 5, 50]))
    t.db.execute("UPDATE StringIds SET value = ? WHERE %s" % w, (v,))
    if "NVTX_EVENTS" in have and "text" in t.columns("NVTX_EVENTS"):
        t.db.execute("UPDATE NVTX_EVENTS SET text = ? WHERE text IS NOT NULL AND %s" % some_rows(t, "NVTX_EVENTS", rnd), (v,))
    return "names '%s' where %s" % (v, w)


SQL_MUTATIONS = [m_drop_table, m_drop_column, m_null, m_wrong_type, m_end_before_start, m_extreme, m_far_end,
                 m_dangling, m_huge_string, m_bad_utf8, m_trigger_view, m_reorder, m_duplicate, m_meta,
                 m_wrong_enum, m_extreme, m_far_end, m_wrong_type, m_bad_utf8, m_step_names]


def byte_damage(path, rnd):
    size = os.path.getsize(path)
    how = rnd.choice(["flip", "flip", "truncate", "zero_page"])
    with open(path, "r+b") as f:
        if how == "flip":
            n = rnd.choice([1, 4, 32])
            at = []
            for _ in range(n):
                off = rnd.randrange(size)
                f.seek(off)
                b = f.read(1)
                f.seek(off)
                f.write(bytes([b[0] ^ (1 << rnd.randrange(8))]))
                at.append(off)
            return "flipped bits at %s" % ",".join(map(str, sorted(at)))
        if how == "truncate":
            off = rnd.choice([0, 10, 100, 4096, rnd.randrange(size)])
            f.truncate(off)
            return "truncated to %d bytes" % off
        page = 4096
        off = rnd.randrange(max(1, size // page)) * page
        f.seek(off)
        f.write(b"\0" * page)
        return "zeroed the page at %d" % off


# ---- fixed cases: each a known way a trace goes wrong ------------------------

def fixed(t, name):
    ex = t.db.execute
    have = set(t.objects("table")) | set(t.objects("view"))
    kt = t.base_table("CUPTI_ACTIVITY_KIND_KERNEL") if "CUPTI_ACTIVITY_KIND_KERNEL" in have else None
    if name == "sync-start-text":
        if "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION" not in have:
            return None
        ex("UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = 'abc' WHERE rowid = "
           "(SELECT min(rowid) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)")
        return "one sync row with start = 'abc'"
    if name == "times-int64-max":
        done = []
        for b in event_tables(t):
            if "end" in t.columns(b):
                top = I64_MAX >> 8 if b == "GTRACE_KERNELS" else I64_MAX
                ex('UPDATE %s SET %s, "end" = %d WHERE rowid = (SELECT min(rowid) FROM %s)'
                   % (q(b), set_start(b, top - 1000), I64_MAX, q(b)))
                done.append(b)
        return "first row of %s at INT64_MAX" % ",".join(done) if done else None
    if name == "times-int64-min":
        done = []
        for b in event_tables(t):
            if "end" in t.columns(b):
                bottom = I64_MIN >> 8 if b == "GTRACE_KERNELS" else I64_MIN
                ex('UPDATE %s SET %s WHERE rowid = (SELECT max(rowid) FROM %s)' % (q(b), set_start(b, bottom), q(b)))
                done.append(b)
        return "last row of %s starts at INT64_MIN" % ",".join(done) if done else None
    if name == "sizes-extreme":
        done = []
        for x in ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "CUDA_GPU_MEMORY_USAGE_EVENTS",
                  "GTRACE_MEMORY_EVENTS", "GTRACE_CPU_OPS"):
            if x in have and t.count(x) > 0:
                ex("UPDATE %s SET bytes = CASE rowid %% 3 WHEN 0 THEN %d WHEN 1 THEN %d ELSE -1 END" % (q(x), I64_MAX, I64_MIN))
                done.append(x)
        if kt and "staticSharedMemory" in t.columns("GTRACE_KERNEL_LAUNCHES" if kt == "GTRACE_KERNELS" else kt):
            k = "GTRACE_KERNEL_LAUNCHES" if kt == "GTRACE_KERNELS" else kt
            ex("UPDATE %s SET staticSharedMemory = %d, dynamicSharedMemory = %d" % (q(k), 2**31 - 1, 2**31 - 1))
            done.append(k)
        return "sizes INT64_MAX, INT64_MIN, -1 in %s" % ",".join(done) if done else None
    if name == "names-bad-utf8":
        if "StringIds" not in have:
            return None
        ex("UPDATE StringIds SET value = value || CAST(X'ffc328e282eda080f4908080c0af011b7f' AS TEXT) "
           "|| CAST(X'e29c93' AS TEXT)")
        for x, c in (("PROCESSES", "name"), ("NVTX_EVENTS", "text"), ("TARGET_INFO_GPU", "name")):
            if x in have and c in t.columns(x):
                ex("UPDATE %s SET %s = CAST(X'ff00fe0a' AS TEXT) || ifnull(%s, '')" % (q(x), q(c), q(c)))
        return "every string with invalid UTF-8 and control characters"
    if name == "endless-kernels":
        if not kt:
            return None
        cols = t.columns("CUPTI_ACTIVITY_KIND_KERNEL")
        if "CUPTI_ACTIVITY_KIND_KERNEL" in t.objects("view"):
            ex("DROP VIEW CUPTI_ACTIVITY_KIND_KERNEL")
        else:
            ex("DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
        sel = ", ".join(("x AS %s" % q(c)) if c in ("start", "end") else ("1 AS %s" % q(c)) for c in cols)
        ex("CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
           "SELECT %s FROM c" % sel)
        return "kernels replaced by a view that never ends"
    if name == "steps-extreme":
        done = 0
        expr = ("CASE rowid % 4 WHEN 0 THEN 'step 9223372036854775807' WHEN 1 THEN 'step -9223372036854775808' "
                "WHEN 2 THEN 'step 99999999999999999999' ELSE 'step 9223372036854775806' END")
        if "StringIds" in have:
            done += ex("UPDATE StringIds SET value = %s WHERE value LIKE 'step%%' OR value LIKE 'iter%%'" % expr).rowcount
        if "NVTX_EVENTS" in have and "text" in t.columns("NVTX_EVENTS"):
            done += ex("UPDATE NVTX_EVENTS SET text = %s WHERE text LIKE 'step%%'" % expr).rowcount
        return "%d step names numbered at the ends of int64" % done if done else None
    if name == "string-ids-extreme":
        done = []
        for x, c in (("NVTX_EVENTS", "textId"), ("CUPTI_ACTIVITY_KIND_RUNTIME", "nameId"),
                     ("GTRACE_KERNEL_LAUNCHES", "shortName"), ("CUPTI_ACTIVITY_KIND_KERNEL", "shortName")):
            if x in t.objects("table") and c in t.columns(x) and t.count(x) > 0:
                ex("UPDATE %s SET %s = CASE rowid %% 2 WHEN 0 THEN %d ELSE %d END WHERE rowid IN "
                   "(SELECT rowid FROM %s LIMIT 4)" % (q(x), q(c), I64_MAX, I64_MIN, q(x)))
                done.append(x)
        return "string ids INT64_MAX and INT64_MIN in %s" % ",".join(done) if done else None
    raise SystemExit("mutate.py: no fixed case named '%s'" % name)


FIXED = ["sync-start-text", "times-int64-max", "times-int64-min", "sizes-extreme", "names-bad-utf8",
         "endless-kernels", "steps-extreme", "string-ids-extreme"]


def mutate(seed, out, case):
    shutil.copyfile(seed, out)
    os.chmod(out, 0o644)
    if case in FIXED:
        t = Trace(out)
        what = fixed(t, case)
        t.close()
        return what
    rnd = random.Random(int(case))
    done = []
    kind = rnd.random()
    if kind < 0.8:  # SQL damage, one to three kinds
        t = Trace(out)
        for _ in range(rnd.choice([1, 1, 2, 3])):
            m = rnd.choice(SQL_MUTATIONS)
            try:
                what = m(t, rnd)
            except sqlite3.Error as e:
                what = "%s failed (%s)" % (m.__name__, e)
            if what:
                done.append(what)
        if rnd.random() < 0.04:
            done.append(m_endless_view(t, rnd) or "no endless view")
        t.close()
    if kind >= 0.7:  # bytes, sometimes on top of SQL damage
        done.append(byte_damage(out, rnd))
    return "; ".join(done) if done else "unchanged"


def main(argv):
    if len(argv) != 4:
        sys.stderr.write("usage: mutate.py SEED.sqlite OUT.sqlite CASE\n")
        return 2
    print(mutate(argv[1], argv[2], argv[3]) or "not applicable")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
