#!/bin/sh
# setup.sh: set up a fresh Debian machine for gtrace, build it, and run it.
#
#   ./setup.sh          install what is missing, build into _build/, then run the
#                       main job: gtrace on the trainer, and the trace's summary
#   ./setup.sh --check  install, build with -Werror, run the whole test suite
#                       (make check, then make distcheck); this is what CI runs
#
# Debian packages are installed only when missing (apt-get as root, else sudo).
# CONFIGURE_FLAGS adds options to configure (e.g. --without-cuda).
set -eu

mode=run
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    -h|--help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)

say() { printf '\n==> %s\n' "$*"; }

# ---- Debian packages ---------------------------------------------------------
packages="build-essential autoconf automake libtool pkg-config
    libsqlite3-dev sqlite3 zlib1g-dev libcunit1-dev
    libopenblas-dev libopenmpi-dev openmpi-bin
    libgtk-3-dev xvfb xauth
    fortunes fortune-mod"
missing=""
for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    say "installing Debian packages:$missing"
    if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo=sudo; else
        echo "setup.sh: these packages are missing and I am not root (no sudo):$missing" >&2; exit 1
    fi
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi

# ---- build --------------------------------------------------------------------
say "configuring and building in _build/"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ m4/gt_cuda.m4 -nt configure ]; then
    autoreconf -fi
fi
mkdir -p _build
cd _build
flags="${CONFIGURE_FLAGS:-}"
[ "$mode" = check ] && flags="--enable-werror $flags"
# shellcheck disable=SC2086
../configure $flags
make -j"$jobs"

if [ "$mode" = check ]; then
    say "running the test suite (make check)"
    status=0
    make -j"$jobs" check || status=$?
    # One closing line that says what ran, from Automake's test logs.
    count() { grep -h "^# $1:" test-suite.log 2>/dev/null | awk '{s+=$3} END {print s+0}'; }
    if [ -f test-suite.log ]; then
        echo "tests: $(count PASS) passed, $(($(count FAIL) + $(count ERROR) + $(count XPASS))) failed, $(count SKIP) skipped"
    fi
    [ "$status" -eq 0 ] || exit "$status"
    say "checking the release tarball (make distcheck)"
    make -j"$jobs" distcheck
    exit 0
fi

# ---- the main job ---------------------------------------------------------------
# gtrace on the trainer, then the report. OMP_WAIT_POLICY=passive keeps the
# trainer's OpenMP threads from spinning when the machine has other work.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
say "tracing the trainer: gtrace -o trainer.sqlite --force ./trainer/trainer --model gpt-tiny --steps 100"
./libtrace/cli/gtrace -o trainer.sqlite --force ./trainer/trainer --model gpt-tiny --steps 100
say "why is it slow, where did memory go: gtrace report trainer.sqlite"
./libtrace/cli/gtrace report trainer.sqlite
printf '\nThe trace is _build/trainer.sqlite; try gtrace info, memory --step N, export --format chrome.\n'
