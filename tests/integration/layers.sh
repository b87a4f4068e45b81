#!/bin/sh
# layers.sh: the layering ARCHITECTURE.md states (its "Layers" section: which
# folder may include which) is the tree's: tests/integration/layers.py.
: "${GT_TOP_SRCDIR:?run through make check}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$GT_TOP_SRCDIR/tests/integration/layers.py" "$GT_TOP_SRCDIR"
