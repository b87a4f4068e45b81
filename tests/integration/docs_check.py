#!/usr/bin/env python3
"""docs_check.py: the documents point at what is there. Every results file
in bench/results/ is in its README's index; every file a document names
(README.md, ARCHITECTURE.md, trainer/README.md, viewer/README.md,
bench/results/README.md: paths in backquotes or image links) exists."""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."
docs = ["README.md", "ARCHITECTURE.md", "trainer/README.md", "viewer/README.md",
        "bench/results/README.md"]
# Files the documents name that are not the tree's: llm.c's trainer, and
# the env.sh that tests/gpu/carry_mpi.sh writes.
OUTSIDE = {"train_gpt2.c", "env.sh"}
_names = None


def names_in_tree():
    """Every file name in the source tree (build folders and dot folders left out)."""
    global _names
    if _names is None:
        _names = set()
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if not d.startswith(("_build", "."))]
            _names.update(files)
    return _names


bad = []
index = open(os.path.join(top, "bench/results/README.md"), encoding="utf-8").read()
for f in sorted(os.listdir(os.path.join(top, "bench/results"))):
    if f.endswith(".md") and f != "README.md" and f"`{f}`" not in index:
        bad.append(f"bench/results/README.md: {f} is not in the index")
path_like = re.compile(r"`([A-Za-z0-9_./-]+\.(?:md|sh|py|png|c|h|1))`|\]\(([^)\s]+\.(?:png|md))\)")
for doc in docs:
    text = open(os.path.join(top, doc), encoding="utf-8").read()
    base = os.path.dirname(doc)
    for m in path_like.finditer(text):
        p = m.group(1) or m.group(2)
        if "*" in p or p.startswith(("http", "/")):
            continue
        if p in OUTSIDE:
            continue
        tries = [os.path.join(top, base, p), os.path.join(top, p),
                 os.path.join(top, "libtrace", p), os.path.join(top, "bench/results", p)]
        # A bare name (`alloc.c`) is looked for anywhere in the tree.
        if "/" not in p:
            if any(os.path.exists(t) for t in tries):
                continue
            found = p in names_in_tree()
            if found:
                continue
        elif any(os.path.exists(t) for t in tries):
            continue
        bad.append(f"{doc}: names {p}, which is not in the tree")
for b in bad:
    print(b)
if bad:
    sys.exit(1)
print(f"docs_check.py: {len(docs)} documents name only files that are there")
