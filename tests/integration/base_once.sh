#!/bin/sh
# base_once.sh: saturating arithmetic and comparators live only in gt_base.h (tests/integration/base_once.py).
: "${GT_TOP_SRCDIR:?run through make check}"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
exec python3 "$GT_TOP_SRCDIR/tests/integration/base_once.py" "$GT_TOP_SRCDIR"
