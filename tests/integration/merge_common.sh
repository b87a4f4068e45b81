# merge_common.sh: sourced by the merge_*.sh tests: gtrace, the writer and
# checker of parts with known clocks (merge_clock), a scratch directory
# (the current one, removed at exit), and `fails`, set to 1 by a failed check.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
CLOCK="$GT_TOP_BUILDDIR/tests/integration/merge_clock"
SAMPLES="$GT_TOP_BUILDDIR/samples"
for f in "$GTRACE" "$CLOCK"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-merge.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99
fails=0
