#!/usr/bin/env python3
# alternate.py: whole-process timings of two commands run in turn.
#
#   python3 bench/alternate.py [-n RUNS] [--warmup K] --vs 'COMMAND_B' -- COMMAND_A [ARG...]
#
# A and B run RUNS times each (default 7) after K warm-up runs of each
# (default 1), in pairs whose order turns (A B, B A, A B, ...) so a drift
# of the machine's speed falls on both sides. Each run: wall seconds from a
# monotonic clock around the child, CPU seconds (user + system) and peak
# RSS from the kernel's accounting of the reaped child and what it waited
# for (wait4; the peak is the largest single process, and reads no lower
# than this script's own size, which the child had before its exec). The ratio A/B is taken pair by pair. Prints min / median /
# max of each and every run's exit status; the commands' output is thrown
# away; asserts nothing. COMMAND_B is split as a shell splits words; set
# variables before this script (they reach both commands).
import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def run_once(argv):
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "peak": ru.ru_maxrss / 1024.0, "rc": p.returncode}


def spread(values, fmt):
    return "%s / %s / %s" % (fmt % min(values), fmt % statistics.median(values), fmt % max(values))


def main():
    ap = argparse.ArgumentParser(description="whole-process timings of A and B, alternated")
    ap.add_argument("-n", type=int, default=7, help="runs of each command")
    ap.add_argument("--warmup", type=int, default=1, help="uncounted runs of each first")
    ap.add_argument("--vs", required=True, help="command B, one string")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- command A and its arguments")
    o = ap.parse_args()
    a = o.command[1:] if o.command[:1] == ["--"] else o.command
    b = shlex.split(o.vs)
    if not a or not b or o.n < 1 or o.warmup < 0:
        ap.error("need -n >= 1, --vs B and -- A")
    for _ in range(o.warmup):
        run_once(a)
        run_once(b)
    runs = {"A": [], "B": []}
    for i in range(o.n):
        order = ("A", "B") if i % 2 == 0 else ("B", "A")
        for side in order:
            runs[side].append(run_once(a if side == "A" else b))
    print("A: %s" % " ".join(shlex.quote(x) for x in a))
    print("B: %s" % " ".join(shlex.quote(x) for x in b))
    print("runs %d each, warm-up %d, order alternating; min / median / max" % (o.n, o.warmup))
    for side in ("A", "B"):
        r = runs[side]
        print("%s wall %s s, cpu %s s, peak %s MB, exit %s" % (
            side, spread([x["wall"] for x in r], "%.3f"), spread([x["cpu"] for x in r], "%.3f"),
            spread([x["peak"] for x in r], "%.0f"), ",".join(str(x["rc"]) for x in r)))
    for what in ("wall", "cpu"):
        ratios = [x[what] / y[what] for x, y in zip(runs["A"], runs["B"]) if y[what] > 0]
        if ratios:
            print("A/B %s %s" % (what, spread(ratios, "%.3f")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
