#!/usr/bin/env python3
"""labels_once.py: the words for copy kinds, memory kinds and sync types are
written once, in libtrace/store/schema_enums.c's rows (gt_labels.h). Any
other C or Python file of the product that spells one of them as a string
literal ("Host-to-Device", "Pageable", "HtoD", "Stream sync"...) is a second
copy that can drift from the trace's own ENUM_* tables: named, exit 1."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
home = os.path.join("libtrace", "store", "schema_enums.c")
src = open(os.path.join(top, home), encoding="utf-8").read()
words = set()
for table in ("enum_cuda_memcpy_oper_rows", "enum_cuda_mem_kind_rows", "enum_cupti_sync_type_rows"):
    m = re.search(table + r"\[\] = \{(.*?)\n\};", src, re.S)
    if not m:
        sys.exit(f"labels_once.py: {home} has no {table}")
    for row in re.finditer(r'\{\d+, "[^"]*", "([^"]*)"(?:, "([^"]*)")?\}', m.group(1)):
        words.update(w for w in row.groups() if w)
if len(words) < 20:
    sys.exit(f"labels_once.py: only {len(words)} words read from {home}")

comment = re.compile(r"/\*.*?\*/|//[^\n]*|#[^\n]*", re.S)
bad = []
for folder in ("libtrace", "viewer", "trainer", "samples"):
    for root, _, files in os.walk(os.path.join(top, folder)):
        for f in files:
            path = os.path.join(root, f)
            rel = os.path.relpath(path, top)
            if rel == home or not f.endswith((".c", ".h", ".py")) or "nvtx3" in rel:
                continue
            text = open(path, encoding="utf-8", errors="replace").read()
            code = comment.sub(lambda m: "\n" * m.group(0).count("\n"), text) if f.endswith((".c", ".h")) \
                else re.sub(r"#[^\n]*", "", text)
            for n, line in enumerate(code.splitlines(), 1):
                for lit in re.findall(r'"([^"\\]*)"', line):
                    if lit in words:
                        bad.append(f"{rel}:{n}: spells \"{lit}\", a word of {home} (use gt_label)")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"labels_once.py: {len(words)} words, each spelled only in {home}")
