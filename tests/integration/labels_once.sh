#!/bin/sh
# labels_once.sh: enum labels are described once (tests/integration/labels_once.py).
: "${GT_TOP_SRCDIR:?run through make check}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$GT_TOP_SRCDIR/tests/integration/labels_once.py" "$GT_TOP_SRCDIR"
