# capture_common.sh: sourced by the capture_*.sh tests: where gtrace and the
# samples are, a scratch directory, and small assertion helpers. Each helper
# prints what it expected and what it got, then fails the test (exit 1).
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
SAMPLES="$GT_TOP_BUILDDIR/samples"
PROBE="$GT_TOP_BUILDDIR/tests/integration/capture_probe"
for f in "$GTRACE" "$GT_TOP_BUILDDIR/libtrace/capture/.libs/libgtrace.so"; do
    [ -e "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 (the CLI) is needed by this test"; exit 99; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-capture.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99

fail() { echo "FAIL: $*"; exit 1; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
    [ "$2" = "$3" ] || fail "$1: expected '$2', got '$3'"
    echo "ok: $1 = $3"
}

# q TRACE SQL: one value from a trace
q() { sqlite3 "$1" "$2"; }

# The message of NVTX_EVENTS row n: in its text column, or in StringIds
# through textId (registered strings; nsys stores messages either way).
NT="coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"

# nvtx_count TRACE TEXT [EVENT_TYPE]: NVTX rows with that text
nvtx_count() {
    q "$1" "SELECT count(*) FROM NVTX_EVENTS n WHERE $NT = '$2' ${3:+AND n.eventType = $3}"
}

# probe_counted GT_PID AT_LEAST N: waits (up to 10 s) until the capture_probe
# that gtrace GT_PID started in "counted N count.bin" mode has completed
# AT_LEAST ranges (or all N); sets prog to its pid. Fails the test, killing
# gtrace, if the program never started.
probe_counted() {
    prog=""
    i=0
    while [ $i -lt 1000 ]; do
        [ -n "$prog" ] || prog=$(pgrep -P "$1" -x capture_probe | head -n 1)
        if [ -n "$prog" ] && [ -s count.bin ]; then
            c=$(od -An -t d8 count.bin | tr -d ' ')
            [ "${c:-0}" -ge "$2" ] && return 0
            [ "$(cat out.txt 2>/dev/null)" = "emitted $3" ] && return 0
        fi
        i=$((i + 1))
        sleep 0.01
    done
    [ -n "$prog" ] || { kill -9 "$1"; fail "the program did not start: $(cat err.txt)"; }
}
