#!/usr/bin/env python3
"""fuzz.py: every reader entry point of gtrace on damaged traces.

    fuzz.py --gtrace BIN [--view BIN] --seeds DIR --work DIR
            [--seconds N] [--jobs N] [--seed N] [--timeout S] [--window]
            [--cases SEED:CASE,...]

Seeds that `gtrace import` reads (*.json, *.json.gz: torch.profiler traces;
*.pickle: memory snapshots) are damaged by mutate_import.py instead and
imported: the import must pass the same rules, and a trace it writes must
hold at most ROWS_PER_BYTE event rows per byte of input (decompressed for
gzip), so that the work is bounded by the input's size; then `gtrace info`
reads the trace and `report --json` the input itself.

Each input is a seed trace (DIR/*.sqlite) damaged by mutate.py: first every
fixed case on every seed (these always run), then random cases numbered from
--seed until --seconds have passed since the start (inputs started by then
are finished). On each input
it runs `gtrace info`, `report`, `report --json`, `memory --step` and
`--at`, `diff` against the seed, the three exports and, with --view, the
viewer's headless timeline and memory views (with --window also the window,
under xvfb-run, for the fixed cases). Every run must end in a result (exit 0)
or in one line on stderr and exit 1: no signal, no sanitizer report, no run
longer than --timeout seconds, and the input and its seed unchanged
(SHA-256 before and after); JSON output must be valid JSON in valid UTF-8.

A failing input is kept in WORK/failures/ with a line in WORK/failures.txt
saying how to remake it (mutate.py SEED OUT CASE) and which command failed
how. Exits 0 when every run passed, 1 otherwise.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutate  # noqa: E402
import mutate_import  # noqa: E402

IMPORT_EXTS = (".json.gz", ".json", ".pickle")
# The ceiling on work per input byte: rows of the event tables (and the
# callchains) a trace imported from N bytes may hold is ROWS_PER_BYTE * N +
# ROWS_FIXED, the bound the importers state (snapshot.c charges every value
# replayed against 16 per byte of the file plus 4096; a Kineto event is at
# least about 30 bytes and makes at most 3 rows). Real inputs make 0.003 to
# 0.013 rows per byte; the densest accepted hostile snapshot about 1.2.
ROWS_PER_BYTE = 16
ROWS_FIXED = 4096
ROW_TABLES = ("NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
              "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "GTRACE_MEMORY_EVENTS",
              "CUDA_GPU_MEMORY_USAGE_EVENTS", "GTRACE_CPU_OPS", "CUDA_CALLCHAINS", "GTRACE_GPU_MEMORY_STACKS",
              "ThreadNames", "TARGET_INFO_GPU")


def import_ext(path):
    return next((e for e in IMPORT_EXTS if path.endswith(e)), None)


def input_bytes(path):
    """The bytes the importer reads: a gzip stream's decompressed size."""
    import gzip
    try:
        with gzip.open(path, "rb") as f:
            return sum(len(b) for b in iter(lambda: f.read(1 << 20), b""))
    except (OSError, EOFError, ValueError):  # not gzip, or damaged: its own size bounds what is read
        return os.path.getsize(path)


def row_ceiling(trace, n_bytes):
    """None when the trace holds no more rows than the ceiling allows, else why not."""
    import sqlite3
    try:
        db = sqlite3.connect("file:%s?mode=ro" % trace, uri=True)
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        rows = {t: db.execute('SELECT count(*) FROM "%s"' % t).fetchone()[0] for t in ROW_TABLES if t in names}
        db.close()
    except sqlite3.Error as e:
        return "the imported trace cannot be read: %s" % e
    total = sum(rows.values())
    if total > ROWS_PER_BYTE * n_bytes + ROWS_FIXED:
        big = ", ".join("%s %d" % kv for kv in sorted(rows.items(), key=lambda kv: -kv[1])[:3])
        return "%d rows from %d input bytes, over the ceiling of %g per byte + %d (%s)" % (
            total, n_bytes, ROWS_PER_BYTE, ROWS_FIXED, big)
    return None

SAN_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "UndefinedBehaviorSanitizer",
               "ERROR: ThreadSanitizer", "AddressSanitizer:DEADLYSIGNAL")


def sha256(path):
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for b in iter(lambda: f.read(1 << 20), b""):
                h.update(b)
    except OSError as e:
        return "unreadable: %s" % e
    return h.hexdigest()


def check_json(path):
    """None when path holds one JSON document in strict UTF-8, else why not."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        return "cannot read the output: %s" % e
    try:
        text = data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return "output is not UTF-8 (%s)" % e
    try:
        json.loads(text)
    except ValueError as e:
        return "output is not JSON (%s)" % str(e)[:200]
    return None


class Fuzz:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.n_inputs = self.n_runs = self.n_imports = 0
        self.failures = []
        self.slowest = []  # (seconds, input, command)
        self.env = dict(os.environ)
        supp = os.path.join(os.path.dirname(HERE), "lsan.supp")  # tests/lsan.supp: leaks of libraries not ours
        # Sanitizer reports go to stderr, where each run is checked, with exit
        # codes of their own, and stop the run: these options come after the
        # environment's (the test environment sends reports to files).
        def opts(name, mine):
            old = self.env.get(name, "")
            self.env[name] = (old + ":" if old else "") + mine
        opts("ASAN_OPTIONS", "log_path=stderr:exitcode=86:halt_on_error=1:detect_leaks=1:"
                             "allocator_may_return_null=1:hard_rss_limit_mb=%d" % a.rss_mb)
        opts("UBSAN_OPTIONS", "log_path=stderr:print_stacktrace=1:halt_on_error=1:exitcode=87")
        opts("LSAN_OPTIONS", "suppressions=%s:print_suppressions=0" % supp)
        self.env.pop("DISPLAY", None)  # the headless views need none
        self.sanitized = b"__asan_init" in open(a.gtrace, "rb").read() if os.path.exists(a.gtrace) else False

    def limit(self):
        # without sanitizers, a memory ceiling stands in for ASan's RSS limit
        if not self.sanitized:
            import resource
            b = self.a.rss_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (b * 2, b * 2))

    def commands(self, seed, f, out, index, fixed):
        g = self.a.gtrace
        c = [
            ("info", [g, "info", f], None),
            ("report", [g, "report", f] + (["--steps", "1:2", "--top", "3"] if index % 2 else []), None),
            ("report --json", [g, "report", "--json", f], "stdout"),
            ("memory --step", [g, "memory", f, "--step", str(1 + index % 3)], None),
            ("memory --at", [g, "memory", f, "--at", ["1ms", "0", "2s", "250us"][index % 4]] +
             (["--json"] if index % 2 else []), "stdout" if index % 2 else None),
            ("diff", [g, "diff", seed, f] if index % 2 else [g, "diff", f, seed, "--json"], None if index % 2 else "stdout"),
            ("export chrome", [g, "export", f, "--format", "chrome", "-o", os.path.join(out, "c.json")],
             os.path.join(out, "c.json")),
            ("export memviz", [g, "export", f, "--format", "memviz", "-o", os.path.join(out, "m.pickle")], None),
            ("export csv", [g, "export", f, "--format", "csv", "-o", os.path.join(out, "csv")], None),
        ]
        v = self.a.view
        if v:
            c.append(("view timeline", [v, "--screenshot", os.path.join(out, "t.png"), "--view", "timeline", f], None))
            c.append(("view memory", [v, "--screenshot", os.path.join(out, "m.png"), "--view", "memory", f], None))
            if self.a.window and fixed:
                c.append(("view window", ["xvfb-run", "-a", v, "--screenshot", os.path.join(out, "w.png"), f], None))
        return c

    def run_one(self, name, argv, json_out, inputs, out):
        stdout_path = os.path.join(out, "stdout")
        t0 = time.monotonic()
        with open(stdout_path, "wb") as so:
            try:
                p = subprocess.run(argv, stdout=so, stderr=subprocess.PIPE, env=self.env, cwd=out,
                                   timeout=self.a.timeout, preexec_fn=self.limit)
                rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
            except subprocess.TimeoutExpired as e:
                rc, err = None, (e.stderr or b"").decode("utf-8", "replace")
            except OSError as e:  # the program is missing (a rebuild under way)
                return "cannot run %s: %s" % (argv[0], e), -1, 0.0
        dt = time.monotonic() - t0
        why = None
        lines = [x for x in err.splitlines() if x.strip()]
        if rc is None:
            why = "no result after %d s (hang)" % self.a.timeout
        elif any(m in err for m in SAN_MARKERS):
            first = next((x for x in lines if any(m in x for m in SAN_MARKERS)), lines[0] if lines else "")
            why = "sanitizer: " + first.strip()[:300]
        elif rc < 0:
            why = "killed by signal %d" % -rc
        elif rc not in (0, 1):
            why = "exit status %d" % rc
        elif rc == 1 and len(lines) != 1:
            why = "exit 1 with %d lines on stderr, not one" % len(lines)
        elif rc == 1 and not any(os.path.basename(i) in lines[0] for i in inputs):
            why = "the error does not name the file: " + lines[0][:200]
        elif rc == 0 and json_out:
            why = check_json(stdout_path if json_out == "stdout" else json_out)
        if why and err:
            why += "\n    stderr: " + "\n    ".join(err.splitlines()[:12])
        return why, rc, dt

    def fuzz_import(self, seed, case, index):
        """An input of `gtrace import`: damaged, imported, the trace checked and read."""
        ext = import_ext(seed)
        base = os.path.basename(seed)[:-len(ext)].split(".")[0]
        tag = "%05d-%s-%s" % (index, base, case)
        out = os.path.join(self.a.work, "in", tag)
        os.makedirs(out, exist_ok=True)
        f = os.path.join(out, "input" + ext)
        trace = os.path.join(out, "imported.sqlite")
        try:
            what = mutate_import.mutate(seed, f, case)
        except Exception as e:  # a mutation that does not apply to this seed
            with self.lock:
                self.failures.append("%s: mutate_import.py failed: %s: %s" % (tag, type(e).__name__, e))
            shutil.rmtree(out, ignore_errors=True)
            return
        if what is None:
            shutil.rmtree(out, ignore_errors=True)
            return
        sums = {seed: sha256(seed), f: sha256(f)}
        g = self.a.gtrace
        fails = []
        n = 0
        why, rc, dt = self.run_one("import", [g, "import", f, "-o", trace], None, [f], out)
        n += 1
        with self.lock:
            self.slowest = sorted(self.slowest + [(dt, tag, "import")], reverse=True)[:5]
        if why:
            fails.append("import: " + why)
        elif rc == 0:
            why = row_ceiling(trace, input_bytes(f))
            if why:
                fails.append("ceiling: " + why)
            cmds = [("info", [g, "info", trace], None, [trace])]
            if index % 2:
                cmds.append(("report --json", [g, "report", "--json", f], "stdout", [f]))
            for name, argv, json_out, named in cmds:
                why, rc, dt = self.run_one(name, argv, json_out, named, out)
                n += 1
                if why:
                    fails.append("%s: %s" % (name, why))
        for p, s in sums.items():
            if sha256(p) != s:
                fails.append("input changed: %s" % p)
        with self.lock:
            self.n_inputs += 1
            self.n_imports += 1
            self.n_runs += n
            if fails:
                keep = os.path.join(self.a.work, "failures", tag + ext)
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                mutate_import.mutate(seed, keep, case)
                self.failures.append("%s: %s\n  remake: mutate_import.py %s %s %s\n  damage: %s\n  %s" % (
                    tag, "; ".join(x.split(":")[0] for x in fails), seed, keep, case, what, "\n  ".join(fails)))
        shutil.rmtree(out, ignore_errors=True)

    def fuzz_input(self, seed, case, index):
        if import_ext(seed):
            return self.fuzz_import(seed, case, index)
        base = os.path.splitext(os.path.basename(seed))[0]
        tag = "%05d-%s-%s" % (index, base, case)
        out = os.path.join(self.a.work, "in", tag)
        os.makedirs(out, exist_ok=True)
        f = os.path.join(out, "trace.sqlite")
        try:
            what = mutate.mutate(seed, f, case)
        except Exception as e:  # a mutation that does not apply to this seed
            what = None
            err = "%s: %s" % (type(e).__name__, e)
            with self.lock:
                self.failures.append("%s: mutate.py failed: %s" % (tag, err))
            shutil.rmtree(out, ignore_errors=True)
            return
        if what is None:
            shutil.rmtree(out, ignore_errors=True)
            return
        sums = {seed: sha256(seed), f: sha256(f)}
        fails = []
        n = 0
        fixed = case in mutate.FIXED
        for name, argv, json_out in self.commands(seed, f, out, index, fixed):
            for p in ("c.json", "m.pickle", "csv", "t.png", "m.png", "w.png"):
                q = os.path.join(out, p)
                shutil.rmtree(q, ignore_errors=True) if os.path.isdir(q) else (os.path.exists(q) and os.remove(q))
            why, rc, dt = self.run_one(name, argv, json_out, [f, seed] if name == "diff" else [f], out)
            n += 1
            with self.lock:
                self.slowest = sorted(self.slowest + [(dt, tag, name)], reverse=True)[:5]
            if why:
                fails.append("%s: %s" % (name, why))
                if why.startswith("no result"):
                    break  # the others would hang too: the budget goes to other inputs
        for p, s in sums.items():
            if sha256(p) != s:
                fails.append("input changed: %s" % p)
        with self.lock:
            self.n_inputs += 1
            self.n_runs += n
            if fails:
                keep = os.path.join(self.a.work, "failures", tag + ".sqlite")
                os.makedirs(os.path.dirname(keep), exist_ok=True)
                mutate.mutate(seed, keep, case)
                self.failures.append("%s: %s\n  remake: mutate.py %s %s %s\n  damage: %s\n  %s" % (
                    tag, "; ".join(x.split(":")[0] for x in fails), seed, keep, case, what, "\n  ".join(fails)))
        shutil.rmtree(out, ignore_errors=True)

    def plan(self, seeds):
        if self.a.cases:
            for i, sc in enumerate(self.a.cases.split(",")):
                s, c = sc.rsplit(":", 1)
                yield next(x for x in seeds if os.path.basename(x).startswith(s)), c, i
            return
        i = 0
        for c in mutate.FIXED:
            for s in seeds:
                if not import_ext(s):
                    yield s, c, i
                    i += 1
        for c in mutate_import.FIXED:  # (each applies to one format: mutate_import skips the others)
            for s in seeds:
                if import_ext(s):
                    yield s, c, i
                    i += 1
        k = 0
        while True:
            yield seeds[k % len(seeds)], str(self.a.seed * 100003 + k), i
            i += 1
            k += 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gtrace", required=True)
    ap.add_argument("--view", default="")
    ap.add_argument("--seeds", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=int, default=30)
    ap.add_argument("--rss-mb", type=int, default=4096)
    ap.add_argument("--window", action="store_true")
    ap.add_argument("--cases", default="")
    a = ap.parse_args()
    a.seeds, a.work, a.gtrace = os.path.abspath(a.seeds), os.path.abspath(a.work), os.path.abspath(a.gtrace)
    a.view = os.path.abspath(a.view) if a.view else ""
    seeds = sorted(os.path.join(a.seeds, x) for x in os.listdir(a.seeds) if x.endswith(".sqlite") or import_ext(x))
    if not seeds:
        print("fuzz: no seed traces in %s" % a.seeds)
        return 1
    z = Fuzz(a)
    print("fuzz: %d seeds (%s), %s s, %d jobs, seed %d, %s build" % (
        len(seeds), ", ".join(os.path.basename(s) for s in seeds), a.seconds, a.jobs, a.seed,
        "sanitizer" if z.sanitized else "plain"))
    t0 = time.monotonic()
    plan = z.plan(seeds)
    pending = set()
    with cf.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for s, c, i in plan:
            if time.monotonic() - t0 > a.seconds and (a.cases == "" and c not in mutate.FIXED + mutate_import.FIXED):
                break
            while len(pending) >= a.jobs:
                done, pending = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
                for d in done:
                    d.result()
            pending.add(ex.submit(z.fuzz_input, s, c, i))
        for d in cf.as_completed(pending):
            d.result()
    dt = time.monotonic() - t0
    with open(os.path.join(a.work, "failures.txt"), "w") as f:
        f.write("\n".join(z.failures) + ("\n" if z.failures else ""))
    for x in z.failures:
        print("FAIL " + x)
    print("fuzz: slowest runs: " + ", ".join("%s %s %.1f s" % (t, c, d) for d, t, c in z.slowest))
    print("fuzz: %d inputs (%d imported), %d runs in %.0f s; %d failing inputs" % (
        z.n_inputs, z.n_imports, z.n_runs, dt, len(z.failures)))
    return 1 if z.failures else 0


if __name__ == "__main__":
    sys.exit(main())
