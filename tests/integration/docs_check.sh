#!/bin/sh
# docs_check.sh: the documents name only files that exist, and the results
# index lists every results file (tests/integration/docs_check.py).
: "${GT_TOP_SRCDIR:?run through make check}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$GT_TOP_SRCDIR/tests/integration/docs_check.py" "$GT_TOP_SRCDIR"
