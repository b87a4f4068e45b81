#!/bin/sh
# setup.sh: set up a fresh Debian machine for gtrace, build it, and run it.
#
#   ./setup.sh          install what is missing, build into _build/, then run the
#                       main job: gtrace on the trainer, and the trace's summary
#   ./setup.sh --check  install, build with -Werror, run the whole test suite
#                       twice: in _build/, then in _build-san/ under
#                       AddressSanitizer and UndefinedBehaviorSanitizer; then
#                       make distcheck; and 5 of tests/mutation's planted bugs
#                       must each fail a test. This is what CI runs (.ci/run)
#
# Debian packages are installed only when missing (apt-get as root, else sudo);
# --check adds those the tests use (python3 with PyTorch for the interop tests).
# The CUDA toolkit is optional: without /usr/local/cuda everything but the CUDA
# parts builds (the NVTX headers are in the tree).
# CONFIGURE_FLAGS adds options to configure (e.g. --without-cuda).
set -eu

mode=run
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    -h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "setup.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")" && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)
t_start=$(date +%s)

say() { printf '\n==> %s\n' "$*"; }
took() { echo "($1: $(($(date +%s) - $2)) s)"; }

# ---- Debian packages ---------------------------------------------------------
packages="build-essential autoconf automake libtool pkg-config python3-dev
    libsqlite3-dev sqlite3 zlib1g-dev libcunit1-dev
    libopenblas-dev libopenmpi-dev openmpi-bin
    libgtk-3-dev xvfb xauth openbox xdotool x11-utils
    fortunes fortune-mod dataset-fashion-mnist"
# The tests' outside readers: Python's json/csv/pickle, and PyTorch itself
# (safetensors checkpoints, the optimizers' and schedules' reference values),
# and venv for the pinned third-party readers (nsys2prv, HTA) from PyPI.
# libtorch-dev: the ops of Debian's torch through a RecordFunction callback.
[ "$mode" = check ] && packages="$packages python3 python3-torch python3-venv libtorch-dev"
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
if [ ! -x configure ] || [ -n "$(find configure.ac m4 -newer configure 2>/dev/null)" ]; then
    autoreconf -fi
fi
# build DIR FLAGS...: configure (if its flags changed) and make, in DIR.
build() {
    dir=$1; shift
    say "configuring and building in $dir/ ($*)"
    t0=$(date +%s)
    mkdir -p "$dir"
    (cd "$dir" && ../configure "$@" && make -j"$jobs") || return 1
    took "$dir built" "$t0"
}
flags="${CONFIGURE_FLAGS:-}"
[ "$mode" = check ] && flags="--enable-werror $flags"
# shellcheck disable=SC2086
build _build $flags

if [ "$mode" = check ]; then
    # check DIR: make check in DIR; prints the counts; nonzero if a test failed.
    count() { grep -h "^# $2:" "$1/test-suite.log" 2>/dev/null | awk '{s+=$3} END {print s+0}'; }
    check() {
        say "running the test suite in $1/ (make check)"
        t0=$(date +%s)
        rm -rf "$1/test-suite.log" "$1/sanitizer-reports"
        st=0
        (cd "$1" && make -j"$jobs" check) || st=$?
        if [ ! -f "$1/test-suite.log" ]; then
            echo "$1: make check wrote no test-suite.log"; return 1
        fi
        n_pass=$(($(count "$1" PASS) + $(count "$1" XFAIL)))
        n_fail=$(($(count "$1" FAIL) + $(count "$1" ERROR) + $(count "$1" XPASS)))
        echo "$1: tests: $n_pass passed, $n_fail failed, $(count "$1" SKIP) skipped"
        # A sanitizer's report fails the suite even where the test passed
        # (a test that expects a failure, or that hid the program's stderr).
        # (Files with warnings only, such as LSan's note on a forked child's
        # threads, are not reports, nor is ASan refusing to start under an
        # address-space limit, which trainer_memlimit.sh probes for.)
        reports=$(grep -L 'ReserveShadowMemoryRange failed' "$1"/sanitizer-reports/* 2>/dev/null |
            xargs -r grep -l -E 'ERROR: |runtime error: ' || true)
        if [ -n "$reports" ]; then
            echo "$1: sanitizer reports (the first lines of each):"
            for r in $reports; do
                echo "--- $r"; grep -m 8 -E 'ERROR: |runtime error: |SUMMARY|^ +#[0-9] ' "$r"
            done
            st=1
        fi
        took "$1 tested" "$t0"
        return $st
    }
    # skipped DIR: one line per skipped test, with the reason its log gives
    # (its last line that says skip, else its last line of output).
    skipped() {
        find "$1" -name '*.trs' | sort | while read -r trs; do
            grep -q '^:test-result: SKIP' "$trs" || continue
            log=${trs%.trs}.log
            why=$(grep -v '^SKIP ' "$log" | grep -i 'skip' | tail -1)
            [ -n "$why" ] || why=$(grep -v '^SKIP ' "$log" | grep -v '^[[:space:]]*$' | tail -1)
            t=${trs%.trs}
            echo "skipped: ${t#"$1"/} ($1): ${why:-no reason given}"
        done
    }
    status=0
    check _build || status=1
    # Are the tests sharp? A sample of tests/mutation's bugs, 5 chosen by the
    # commit among those a test catches, in the areas whose tests take
    # seconds (capture and record: 15 to 45 s a mutant, as analyze under
    # load; a CUPTI mutant drawn configures a --with-cuda copy too), each
    # planted in a copy of the tree (_build-mut/): one that
    # survives fails the check (make mutation runs them all). The suite
    # just passed, so the unmutated copy is built but not tested again.
    if [ "$status" -eq 0 ]; then
        say "mutation sample: 5 mutants (tests/mutation/README.md)"
        t0=$(date +%s)
        # a mutant whose text left its file would drop out of every sample unseen
        python3 tests/mutation/run.py --check-list || status=1
        python3 tests/mutation/run.py --area analyze --area import --area store --area capture --area record --sample 5 \
            --seed "$(git rev-parse HEAD 2>/dev/null || echo none)" --jobs "$jobs" --budget 120 --baseline-passed ||
            status=1
        took "mutation sample" "$t0"
    fi
    # The same suite under ASan and UBSan (tests/gt-test-env.sh sets their
    # options: any report fails the test). Its own tree, so _build stays a
    # plain build.
    # Without the CUDA toolkit: nothing CUDA runs without a GPU, the kernels
    # are tested in _build (tests/simt), and nvcc would double the build.
    # shellcheck disable=SC2086
    if build _build-san --enable-sanitizers --without-cuda $flags; then
        check _build-san || status=1
    else
        status=1
    fi
    if [ "$status" -eq 0 ]; then
        say "checking the release tarball (make distcheck)"
        t0=$(date +%s)
        # The tarball must build and its tests find what they need (fixtures,
        # NVTX headers); the whole suite ran twice above, so a few tests that
        # use those suffice, without nvcc.
        (cd _build && make -j"$jobs" distcheck GT_DISTCHECK_FLAGS=--without-cuda \
            TESTS="tests/unit/test_store_reader tests/unit/test_analyze_report tests/integration/report_trainer.sh tests/integration/capture_features.sh") ||
            status=1
        took "distcheck" "$t0"
    else
        say "make distcheck not run: the test suite failed (logs: _build*/test-suite.log)"
    fi
    say "summary"
    total() { n=0; for d in _build _build-san; do n=$((n + $(count "$d" "$1"))); done; echo "$n"; }
    n_pass=$(($(total PASS) + $(total XFAIL)))
    n_fail=$(($(total FAIL) + $(total ERROR) + $(total XPASS)))
    took "setup.sh --check" "$t_start"
    echo "tests: $n_pass passed, $n_fail failed, $(total SKIP) skipped"
    skipped _build
    skipped _build-san
    exit "$status"
fi

# ---- the main job ---------------------------------------------------------------
# gtrace on the trainer, then the report. OMP_WAIT_POLICY=passive keeps the
# trainer's OpenMP threads from spinning when the machine has other work.
cd _build
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
say "tracing the trainer: gtrace -o trainer.sqlite --force ./trainer/trainer --model gpt-tiny --steps 100"
./libtrace/cli/gtrace -o trainer.sqlite --force ./trainer/trainer --model gpt-tiny --steps 100
say "why is it slow, where did memory go: gtrace report trainer.sqlite"
./libtrace/cli/gtrace report trainer.sqlite
printf '\nThe trace is _build/trainer.sqlite; try gtrace info, memory --step N, export --format chrome.\n'
