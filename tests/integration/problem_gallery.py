"""problem_gallery.py: reads the gallery's reports (problem_gallery.sh).
  matrix DIR PROGRAM...: prints the confusion matrix (rows: each program and
    its twin, the trainer; columns: rules that fired anywhere) and checks it:
    each problem's rule fires on the problem and not on its twin, and no rule
    fires on a twin, the clean program or the trainer. Exit 1 on a miss.
  check FILE NAME RULE: one run's verdict by the same rules (RULE: the one
    that must fire, - none); prints what is wrong, exit 1 if anything is.
  gains DIR PROGRAM...: for each problem, the step time change gtrace diff
    measured (twin against problem) beside the gain its rule promised per
    step, as a Markdown table. Times are reported, never asserted.
PROGRAM is NAME=RULE (clean: NAME=-); DIR holds NAME.json, NAME--fixed.json
(gtrace report --json), for gains NAME.diff.json (gtrace diff --json
NAME.sqlite NAME--fixed.sqlite), and trainer.json if the trainer ran."""
import json
import os
import sys


def fired(path):
    r = json.load(open(path))
    return r, {a["rule"]: a for a in r["advice"] if a["fired"]}


def faults(name, want, f):
    """What is wrong with one run's advice: a miss of `want`, or any rule
    firing where none should (want None)."""
    bad = []
    if want and want not in f:
        bad.append("%s: %s did not fire" % (name, want))
    if want is None:
        bad += ["%s: %s fired (%s)" % (name, c, f[c]["evidence"]) for c in sorted(f)]
    return bad


def check(path, name, rule):
    bad = faults(name, None if rule == "-" else rule, fired(path)[1])
    for b in bad:
        print(b)
    return 1 if bad else 0


def matrix(d, progs):
    rows = []
    for name, rule in progs:
        for twin in ("", "--fixed"):
            rows.append((name + twin, None if twin or rule == "-" else rule, fired(os.path.join(d, name + twin + ".json"))[1]))
    if os.path.exists(os.path.join(d, "trainer.json")):
        rows.append(("trainer gpt-tiny", None, fired(os.path.join(d, "trainer.json"))[1]))
    cols = sorted({k for _, _, f in rows for k in f} | {r for _, r in progs if r != "-"})
    w = max(len(n) for n, _, _ in rows)
    print("%-*s  %s" % (w, "program", "  ".join(cols)))
    bad = []
    for name, want, f in rows:
        cells = []
        for c in cols:
            mark = "X" if c in f else "."
            if c == want and c not in f:
                mark = "-"  # a miss
            elif c in f and c != want:
                mark = "!" if want is None else "x"  # x: another rule on a problem, allowed
            cells.append(mark.center(len(c)))
        bad += faults(name, want, f)
        print("%-*s  %s" % (w, name, "  ".join(cells)))
    print("X: the expected rule fired; x: another rule on a problem; !: a false firing; -: a miss")
    n_prob = sum(1 for _, r in progs if r != "-")
    n_found = sum(1 for n, want, f in rows if want and want in f)
    print("found %d of %d problems; %d false firings" % (n_found, n_prob, sum(1 for b in bad if "fired" in b)))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


def gains(d, progs):
    print("| problem | rule | promised gain per step | measured (diff, median step) | verdict | ratio | check |")
    print("|---|---|---|---|---|---|---|")
    for name, rule in progs:
        if rule == "-":
            continue
        r, f = fired(os.path.join(d, name + ".json"))
        diff = json.load(open(os.path.join(d, name + ".diff.json")))
        st = [x for x in diff["rows"] if x["metric"] == "step time median"][0]
        saved = st["before"] - st["after"]
        n = max(len(r["steps"]), 1)
        a = f.get(rule)
        promised = a["gain_ns"] / n if a else 0
        if not a or promised <= 0:
            check = "cannot predict: %s" % (a["gain"] if a else "rule silent")
            ratio = ""
        else:
            q = saved / promised
            ratio = "%.2f" % q
            check = "ok" if 0.5 <= q <= 2 else "off by more than 2x"
        print("| %s | %s | %s | %.3f ms (%+.1f%%, [%+.1f%%, %+.1f%%]) | %s | %s | %s |" % (
            name, rule, "%.3f ms" % (promised / 1e6) if promised > 0 else "-", saved / 1e6, -100 * st["change"],
            -100 * st["interval"][1], -100 * st["interval"][0], st["verdict"], ratio, check))
    return 0


if __name__ == "__main__":
    mode, d = sys.argv[1], sys.argv[2]
    if mode == "check":
        sys.exit(check(d, sys.argv[3], sys.argv[4]))
    progs = [tuple(p.split("=", 1)) for p in sys.argv[3:]]
    sys.exit(matrix(d, progs) if mode == "matrix" else gains(d, progs))
