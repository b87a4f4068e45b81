#!/usr/bin/env python3
"""Mutation testing for gtrace: does the test suite catch realistic bugs?

Each mutant in mutants.txt (README.md there gives the format) is one small
change to one source file. The runner never touches the source tree it is
started from: it copies the tree's files (tracked and untracked, not ignored)
into WORK/src, configures once in WORK/obj (--without-cuda), and then for each
mutant: applies the change to WORK/src, rebuilds the targets its area needs,
runs the area's tests under a time limit, one at a time, and puts the file
back. A mutant is

  killed     a test failed, timed out, or the build failed (a build failure
             means the mutant should be rewritten: it is reported as such)
  survived   every test passed: the tests cannot see this bug
  equivalent survived, and the list says why no behaviour changes
  stale      its text is not in the file (moved or rewritten code): skipped
  not run    the time budget ran out first

Usage: run.py [--area A]... [--id ID]... [--sample N --seed S] [--budget SEC]
Exit status: 0 when no non-equivalent mutant survived, 1 when one did, 2 when
the runner could not run (a baseline test failed, configure failed).
"""
import argparse
import hashlib
import os
import random
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Area:
    def __init__(self, name):
        self.name = name
        self.tests = []
        self.build = []
        self.configure = None
        self.timeout = 0


class Mutant:
    def __init__(self, mid, path, lineno):
        self.id = mid
        self.path = path
        self.lineno = lineno
        self.old = []
        self.new = []
        self.tests = None
        self.build = None
        self.configure = None
        self.equivalent = None
        self.known = None
        self.area = mid.split(".", 1)[0]
        self.status = "not run"
        self.detail = ""


def parse(listfile):
    """Areas and mutants from the list (format: README.md)."""
    areas, mutants, cur, area = {}, [], None, None
    with open(listfile, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("[area ") and line.endswith("]"):
                area = Area(line[6:-1].strip())
                areas[area.name] = area
                cur = None
            elif line.startswith("@ "):
                parts = line[2:].split()
                if len(parts) != 2:
                    sys.exit("%s:%d: '@ ID FILE' expected" % (listfile, n))
                cur = Mutant(parts[0], parts[1], n)
                if cur.area not in areas:
                    sys.exit("%s:%d: area '%s' not declared" % (listfile, n, cur.area))
                mutants.append(cur)
            elif line.startswith("- ") or line == "-":
                cur.old.append(line[2:])
            elif line.startswith("+ ") or line == "+":
                cur.new.append(line[2:])
            elif line.split("=", 1)[0].strip() == "tests" and "=" in line:
                (cur if cur else area).tests = line.split("=", 1)[1].split()
            elif line.split("=", 1)[0].strip() == "build" and "=" in line:
                (cur if cur else area).build = line.split("=", 1)[1].split()
            elif line.split("=", 1)[0].strip() == "configure" and "=" in line:
                (cur if cur else area).configure = line.split("=", 1)[1].split()
            elif line.split("=", 1)[0].strip() == "timeout" and "=" in line and cur is None:
                area.timeout = int(line.split("=", 1)[1])
            elif line.startswith("equivalent = ") and cur:
                cur.equivalent = line[13:].strip()
            elif line.startswith("known = ") and cur:
                cur.known = line[8:].strip()
            else:
                sys.exit("%s:%d: cannot read: %s" % (listfile, n, line))
    ids = set()
    for m in mutants:
        if m.id in ids:
            sys.exit("%s:%d: duplicate id %s" % (listfile, m.lineno, m.id))
        ids.add(m.id)
        if not m.old:
            sys.exit("%s:%d: mutant %s has no '- ' line" % (listfile, m.lineno, m.id))
    return areas, mutants


def sh(cmd, cwd, timeout=None, log=None):
    """Runs cmd (a list) niced; returns (status, output); 124 on timeout."""
    p = subprocess.Popen(["nice", "-n", "19"] + cmd, cwd=cwd, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        data, _ = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the test and all it started
        data, _ = p.communicate()
        data += b"\n(timed out)\n"
        rc = 124
    out = data.decode("utf-8", "replace")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write("$ %s\n%s\n" % (" ".join(cmd), out))
    return rc, out


def sync_tree(top, src):
    """Copies top's files into src, rewriting only those that differ (so
    make rebuilds only what changed since the last run)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=top,
                           check=True, stdout=subprocess.PIPE).stdout.decode().split("\0")
    # Files synced last time that the tree no longer has (moved, deleted)
    # go, so a mutant of a moved file reads as stale, not as run.
    manifest = os.path.join(src, ".mutation-files")
    keep = set(f for f in files if f)
    try:
        with open(manifest, encoding="utf-8") as f:
            for rel in f.read().split("\n"):
                if rel and rel not in keep and os.path.isfile(os.path.join(src, rel)):
                    os.remove(os.path.join(src, rel))
    except OSError:
        pass
    with open(manifest, "w", encoding="utf-8") as f:
        f.write("\n".join(sorted(keep)))
    n = 0
    for rel in files:
        a = os.path.join(top, rel)
        if not rel or not os.path.isfile(a) or os.path.islink(a):
            continue
        b = os.path.join(src, rel)
        with open(a, "rb") as f:
            data = f.read()
        try:
            with open(b, "rb") as f:
                if f.read() == data:
                    continue
        except OSError:
            os.makedirs(os.path.dirname(b), exist_ok=True)
        with open(b, "wb") as f:
            f.write(data)
        os.chmod(b, os.stat(a).st_mode & 0o777)
        n += 1
    return n


DEFAULT_CONFIGURE = ("--without-cuda",)


def obj_dir(work, flags):
    """The build folder of one set of configure flags: obj for the default,
    obj-HASH for others (CUPTI's record tests need the CUDA headers)."""
    if tuple(flags) == DEFAULT_CONFIGURE:
        return os.path.join(work, "obj")
    return os.path.join(work, "obj-" + hashlib.sha256(" ".join(flags).encode()).hexdigest()[:8])


def configure(src, obj, flags, log):
    if not os.path.exists(os.path.join(src, "configure")):
        if sh(["autoreconf", "-fi"], src, log=log)[0]:
            return False
    if not os.path.exists(os.path.join(obj, "Makefile")):
        os.makedirs(obj, exist_ok=True)
        if sh([os.path.join(src, "configure")] + list(flags), obj, log=log)[0]:
            return False
    return True


def setup_of(m, areas):
    """A mutant's tests, make targets and configure flags: its own, else its area's."""
    a = areas[m.area]
    flags = m.configure or a.configure or list(DEFAULT_CONFIGURE)
    build = m.build if m.build is not None else a.build
    return tuple(m.tests or a.tests), tuple(build), tuple(flags)


def targets_of(tests, extra):
    """Make targets: the area's build list and each compiled test program."""
    t = list(extra)
    for x in tests:
        if not x.endswith((".sh", ".py")) and x not in t:
            t.append(x)
    return t


def run_tests(tests, src, obj, timeout, log):
    """Runs tests one at a time as make check would; the first that fails."""
    env_file = os.path.join(obj, "tests", "gt-test-env.sh")
    for t in tests:
        if t.endswith(".sh"):
            cmd = "sh %s" % os.path.join(src, t)
        else:
            cmd = "./%s" % t
        script = "srcdir=%s; export srcdir; . %s; exec %s" % (src, env_file, cmd)
        rc, out = sh(["sh", "-c", script], obj, timeout=timeout, log=log)
        if rc == 77:
            continue  # skipped here (no GPU, no MPI): not evidence either way
        if rc != 0:
            return t, rc
    return None, 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--list", default=os.path.join(HERE, "mutants.txt"))
    ap.add_argument("--work", default=None, help="scratch folder (default: TOP/_build-mut)")
    ap.add_argument("--area", action="append", default=[])
    ap.add_argument("--id", action="append", default=[])
    ap.add_argument("--sample", type=int, default=0, help="run N mutants chosen by --seed")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--budget", type=float, default=0, help="start no mutant after SEC seconds")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per test")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--baseline-passed", action="store_true",
                    help="the suite just passed unmutated: build the baseline, do not run its tests again")
    ap.add_argument("--check-list", action="store_true",
                    help="only check that every mutant's text is in its file, once")
    args = ap.parse_args()

    top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=HERE, check=True,
                         stdout=subprocess.PIPE).stdout.decode().strip()
    areas, mutants = parse(args.list)
    sel = mutants
    if args.area:
        sel = [m for m in sel if m.area in args.area]
    if args.id:
        sel = [m for m in sel if m.id in args.id]
    if args.sample:
        # Equivalent mutants survive by definition, and known survivors
        # (no test catches them yet) are the full run's to report: the
        # sample is drawn from the others, which a test caught.
        pool = [m for m in sel if not m.equivalent and not m.known and not stale_in(m, top)]
        seed = int(hashlib.sha256(args.seed.encode()).hexdigest()[:16], 16)
        sel = random.Random(seed).sample(pool, min(args.sample, len(pool)))
        print("mutation: sample (seed %s): %s" % (args.seed[:12], " ".join(m.id for m in sel)))

    if args.check_list:
        bad = [m for m in sel if stale_in(m, top)]
        for m in bad:
            print("stale: %s (%s:%d): %s" % (m.id, args.list, m.lineno, stale_in(m, top)))
        print("%d mutants, %d stale" % (len(sel), len(bad)))
        return 1 if bad else 0

    work = args.work or os.path.join(top, "_build-mut")
    src = os.path.join(work, "src")
    os.makedirs(src, exist_ok=True)
    log = os.path.join(work, "mutation.log")
    open(log, "w").close()
    print("mutation: %d mutants; copying the tree to %s" % (len(sel), src), flush=True)
    sync_tree(top, src)
    unconfigured = set()
    for flags in sorted(set(setup_of(m, areas)[2] for m in sel)):
        if not configure(src, obj_dir(work, flags), flags, log):
            print("mutation: configure %s failed (%s)" % (" ".join(flags), log))
            if not args.sample or flags == DEFAULT_CONFIGURE:
                return 2
            unconfigured.add(flags)  # no CUDA toolkit here: the sample leaves those mutants out

    # The baseline: every test of the areas in play passes unmutated.
    need = {}
    for m in sel:
        need[setup_of(m, areas)] = 1
    make = ["make", "-j%d" % args.jobs]
    t0 = time.time()
    broken = set()
    dropped = {}
    for key in need:
        tests, build, flags = key
        if flags in unconfigured:
            broken.add(key)
            continue
        obj = obj_dir(work, flags)
        rc, out = sh(make + targets_of(tests, build), obj, log=log)
        if rc:
            print("mutation: the unmutated tree does not build (%s)" % log)
            return 2
        # A test that fails unmutated proves nothing about a mutant. The
        # sample leaves that area's mutants out (a flaky or broken test must
        # not fail CI, nor a mutant only it catches); the full run goes on
        # without that test, and says so.
        while not args.baseline_passed:
            bad, rc = run_tests(list(tests), src, obj, args.timeout, log)
            if not bad:
                break
            if args.sample:
                print("mutation: %s fails on the unmutated tree (status %d; %s): its area's mutants are not run"
                      % (bad, rc, log))
                broken.add(key)
                break
            print("mutation: %s fails on the unmutated tree (status %d; %s): run without it"
                  % (bad, rc, log))
            dropped[key] = dropped.get(key, ()) + (bad,)
            tests = tuple(t for t in tests if t != bad)
    print("mutation: baseline built and run (%.0f s)" % (time.time() - t0), flush=True)

    start = time.time()
    for m in sel:
        if args.budget and time.time() - start > args.budget:
            break
        key = setup_of(m, areas)
        if key in broken:
            m.status, m.detail = "not run", "its tests fail unmutated"
            continue
        tests = [t for t in key[0] if t not in dropped.get(key, ())]
        obj = obj_dir(work, key[2])
        path = os.path.join(src, m.path)
        why = stale_in(m, src)
        if why:
            m.status, m.detail = "stale", why
            print("%-40s stale (%s)" % (m.id, why), flush=True)
            continue
        with open(path, encoding="utf-8") as f:
            orig = f.read()
        old, new = "\n".join(m.old), "\n".join(m.new)
        t1 = time.time()
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig.replace(old, new, 1))
            with open(log, "a") as f:
                f.write("\n==== %s\n" % m.id)
            rc, out = sh(make + targets_of(tests, key[1]), obj, log=log)
            if rc:
                m.status, m.detail = "killed", "build failed: rewrite this mutant"
            else:
                bad, rc = run_tests(tests, src, obj, areas[m.area].timeout or args.timeout, log)
                if bad:
                    m.status = "killed"
                    m.detail = "%s (%s)" % (os.path.basename(bad),
                                            "timed out" if rc == 124 else
                                            "signal %d" % -rc if rc < 0 else "status %d" % rc)
                elif m.equivalent:
                    m.status, m.detail = "equivalent", m.equivalent
                elif m.known:
                    m.status, m.detail = "survived", "known: " + m.known
                else:
                    m.status = "survived"
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(orig)
        print("%-40s %-10s %s (%.0f s)" % (m.id, m.status, m.detail, time.time() - t1), flush=True)

    return report(sel, os.path.join(work, "mutation-results.txt"))


def stale_in(m, root):
    """Why a mutant cannot be applied in root, or None."""
    path = os.path.join(root, m.path)
    if not os.path.isfile(path):
        return "no file %s" % m.path
    with open(path, encoding="utf-8") as f:
        text = f.read()
    n = text.count("\n".join(m.old))
    if n == 0:
        return "text not found in %s" % m.path
    if n > 1:
        return "text found %d times in %s: make it unique" % (n, m.path)
    return None


def report(sel, out):
    lines = ["", "score per area (killed / run, not counting equivalent, stale, not run):"]
    by = {}
    for m in sel:
        by.setdefault(m.area, []).append(m)
    for a, ms in by.items():
        c = {s: sum(1 for m in ms if m.status == s)
             for s in ("killed", "survived", "equivalent", "stale", "not run")}
        run = c["killed"] + c["survived"]
        pct = " (%d%%)" % round(100.0 * c["killed"] / run) if run else ""
        lines.append("  %-10s %3d / %3d%s; %d equivalent, %d stale, %d not run" % (
            a, c["killed"], run, pct, c["equivalent"], c["stale"], c["not run"]))
    surv = [m for m in sel if m.status == "survived"]
    lines.append("survivors: %d" % len(surv))
    for m in surv:
        lines.append("  %s  %s:  %s  ->  %s" % (m.id, m.path, " / ".join(m.old).strip(),
                                               " / ".join(m.new).strip()))
    build = [m for m in sel if m.detail.startswith("build failed")]
    for m in build:
        lines.append("  (build failed, rewrite: %s)" % m.id)
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(out, "w", encoding="utf-8") as f:
        for m in sel:
            f.write("%s\t%s\t%s\n" % (m.id, m.status, m.detail))
        f.write(text)
    return 1 if surv else 0


if __name__ == "__main__":
    sys.exit(main())
