#!/usr/bin/env python3
"""csv_once.py: each column of `gtrace export --format csv` is described once,
in libtrace/analyze/export_csv.c's tables (a name and where its value is),
and both the header row and the data rows are made from them. A second copy
that must agree with the tables by position is named, exit 1:
  - a string literal in libtrace/ or viewer/ that is a comma-joined list of
    column names ("start_ns,end_ns,..."): a header written by hand;
  - a format in export_csv.c with more than one conversion ("%lld,%lld"):
    a row written by hand, whose fields line up with the header only by count.
Fails as well when it finds fewer column tables than the nine kinds of
event, so a rename cannot make it pass by matching nothing."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
home = os.path.join("libtrace", "analyze", "export_csv.c")
comment = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
literal = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
name_list = re.compile(r"[a-z][a-z0-9_]*(?:,[a-z][a-z0-9_]*)+,?")
conversion = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|j|z|t|L)?[diouxXeEfgGaAcsp]")


def code_of(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    return comment.sub(lambda m: "\n" * m.group(0).count("\n"), text)


bad = []
for folder in ("libtrace", "viewer"):
    for root, _, files in os.walk(os.path.join(top, folder)):
        for f in files:
            path = os.path.join(root, f)
            rel = os.path.relpath(path, top)
            if not f.endswith((".c", ".h")) or "nvtx3" in rel:
                continue
            for n, line in enumerate(code_of(path).split("\n"), 1):
                for lit in literal.findall(line):
                    if name_list.fullmatch(lit):
                        bad.append(f"{rel}:{n}: \"{lit[:48]}\" is a header by hand (describe the columns in {home})")

code = code_of(os.path.join(top, home))
for n, line in enumerate(code.split("\n"), 1):
    for lit in literal.findall(line):
        if "," in lit and len(conversion.findall(lit.replace("%%", ""))) > 1:
            bad.append(f"{home}:{n}: \"{lit[:48]}\" writes several cells by position (one column, one cell)")
tables = re.findall(r"static const csv_col \w+\[\] = \{", code)
if len(tables) < 9:
    bad.append(f"{home}: {len(tables)} column tables (static const csv_col NAME[]) found, not one per kind of event")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"csv_once.py: {len(tables)} column tables in {home}; no header or row written by hand")
