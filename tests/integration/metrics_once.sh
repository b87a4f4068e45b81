#!/bin/sh
# metrics_once.sh: the report's metrics are spelled only in libtrace/analyze/metrics.c (tests/integration/metrics_once.py).
: "${GT_TOP_SRCDIR:?run through make check}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$GT_TOP_SRCDIR/tests/integration/metrics_once.py" "$GT_TOP_SRCDIR"
