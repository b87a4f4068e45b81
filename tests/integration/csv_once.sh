#!/bin/sh
# csv_once.sh: the CSV columns are described once (tests/integration/csv_once.py).
: "${GT_TOP_SRCDIR:?run through make check}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$GT_TOP_SRCDIR/tests/integration/csv_once.py" "$GT_TOP_SRCDIR"
