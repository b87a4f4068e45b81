#!/usr/bin/env python3
"""metrics_once.py: the report's metrics are spelled once, in
libtrace/analyze/metrics.c's rows (gt_metrics.h). A string literal in the
JSON report's and the text report's writers, in gtrace diff or in the
viewer's summary that is a metric's JSON key ("wall_ns", "idle_ns"...) or
its label ("step time", "peak allocated"; in diff, also as the word of a
format: "%s copies%s") is a second spelling that can drift from the
registry: named, exit 1. Fails as well when it reads too few rows, so a
rename cannot make it pass by matching nothing."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
home = os.path.join("libtrace", "analyze", "metrics.c")
src = open(os.path.join(top, home), encoding="utf-8").read()
row = re.compile(r'\[GT_M_\w+\] = \{"([^"]*)", (?:"([^"]*)"|NULL), "([^"]*)", (-?\d), ([01]), GT_MARG_\w+,')
labels, keys = set(), set()
for m in row.finditer(src):
    labels.add(m.group(1))
    if m.group(2):
        keys.add(m.group(2))
    if m.group(3) not in ("ns", "bytes", "%", "GB/s", "count"):
        sys.exit(f"metrics_once.py: {home}: {m.group(1)}: unit {m.group(3)} is none gt_diff_cell writes")
n_rows = len(row.findall(src))
if n_rows < 15 or len(labels) != n_rows:
    sys.exit(f"metrics_once.py: {n_rows} rows, {len(labels)} labels read from {home}")

analyze = os.path.join("libtrace", "analyze")
writers = [os.path.join(analyze, f) for f in sorted(os.listdir(os.path.join(top, analyze)))
           if re.fullmatch(r"(render\w*|report\w*|diff\w*)\.c", f)] + [os.path.join("viewer", "gv-summary.c")]
comment = re.compile(r"/\*.*?\*/|//[^\n]*|^#[^\n]*", re.S | re.M)
# A line that writes JSON: its literals are keys (a section may share a
# label's word: "communication", "copies"); elsewhere they are text.
json_call = re.compile(r"\bgt_json_\w+\(|\bJF\(|\ban_json_dist\(")
conv = re.compile(r"%[-+ #0-9.*]*(?:ll|l|z|h)?[sdifgeu]")
bad = []
for rel in writers:
    text = open(os.path.join(top, rel), encoding="utf-8", errors="replace").read()
    code = comment.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    in_diff = os.path.basename(rel).startswith("diff")
    for n, line in enumerate(code.splitlines(), 1):
        json = json_call.search(line) is not None
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
            word = conv.sub(" ", lit).strip()
            if json and lit in keys:
                bad.append(f"{rel}:{n}: writes the key \"{lit}\" of {home} (gt_metric_key)")
            elif not json and (lit in labels or (in_diff and word in labels)):
                bad.append(f"{rel}:{n}: spells \"{lit}\", a metric of {home} (gt_metric_label, gt_metric_name)")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"metrics_once.py: {n_rows} metrics, {len(keys)} JSON keys, spelled only in {home}")
