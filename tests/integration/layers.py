#!/usr/bin/env python3
"""layers.py: the tree's folders include each other only as ARCHITECTURE.md's
"Layers" section says. Reads that section's list (folder: the folders whose
headers it may include), finds every #include "..." in the listed folders'
C, CUDA and header files, resolves it to the folder that holds the header,
and names each include the list does not allow. Exit 1 on any, or when the
section is missing or names a folder that is not there."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
doc = open(os.path.join(top, "ARCHITECTURE.md"), encoding="utf-8").read()
sect = re.search(r"^## Layers\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
if not sect:
    sys.exit("layers.py: ARCHITECTURE.md has no '## Layers' section")
allowed = {}
for line in sect.group(1).splitlines():
    m = re.match(r"^    (\S+):\s*(.*)$", line)
    if m:
        allowed[m.group(1)] = m.group(2).split()
if not allowed:
    sys.exit("layers.py: the Layers section lists no folder")
for d, ups in allowed.items():
    for x in [d] + ups:
        if not os.path.isdir(os.path.join(top, x)):
            sys.exit(f"layers.py: the Layers section names '{x}', which is not a folder")

# Every header of the tree by its name, and where it lives.
where = {}
for d in allowed:
    for f in os.listdir(os.path.join(top, d)):
        if f.endswith((".h", ".cuh")):
            where.setdefault(f, set()).add(d)

bad = []
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
for d in allowed:
    for f in sorted(os.listdir(os.path.join(top, d))):
        if not f.endswith((".c", ".h", ".cu", ".cuh", ".cc")):
            continue
        path = os.path.join(top, d, f)
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = include.match(line)
                if not m:
                    continue
                inc = m.group(1)
                rel = os.path.normpath(os.path.join(d, inc))
                if os.path.exists(os.path.join(top, rel)):
                    owner = {os.path.dirname(rel)}
                else:
                    owner = where.get(os.path.basename(inc), set())
                if not owner or d in owner:
                    continue  # a generated header (config.h) or the folder's own
                if not owner & set(allowed[d]):
                    bad.append(f"{d}/{f}:{n}: includes {inc} from {' or '.join(sorted(owner))}, "
                               f"which {d} may not include")
for b in bad:
    print(b)
if bad:
    print(f"layers.py: {len(bad)} include(s) against ARCHITECTURE.md's Layers section")
    sys.exit(1)
print(f"layers.py: {len(allowed)} folders include only what the Layers section allows")
