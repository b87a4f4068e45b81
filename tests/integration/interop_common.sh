# interop_common.sh: what the interop tests (nsys_readers.sh, hta_interop.sh)
# share. Sourced with INTEROP_NAME set: the programs and nsys fixtures they
# read, a work folder removed at exit, fail(), and pinned_venv.
: "${GT_TOP_BUILDDIR:?run through make check}"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
SYNTH="$GT_TOP_BUILDDIR/bench/bench_report"
CLOVER="$GT_FIXTURES/nsys/cloverleaf-cuda-nsys2024.5.sqlite"
SAXPY="$GT_FIXTURES/nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"
[ -r "$CLOVER" ] && [ -r "$SAXPY" ] || { echo "fixtures missing under $GT_FIXTURES"; exit 99; }
for f in "$GTRACE" "$SYNTH"; do
    [ -x "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 not found"; exit 77; }
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-$INTEROP_NAME.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# PyTorch 2.5.1 (the CUDA wheel: it runs on the CPU) and what it imports,
# pinned: one environment for the tests that need torch 2.x
TORCH2_PINS="torch==2.5.1 numpy==2.1.3 filelock==3.16.1 typing-extensions==4.12.2 networkx==3.4.2"
TORCH2_PINS="$TORCH2_PINS jinja2==3.1.4 MarkupSafe==3.0.2 fsspec==2024.10.0 sympy==1.13.1 mpmath==1.3.0"

# pinned_venv NAME NODEPS PINS: sets VENV to a throwaway virtual environment
# holding NODEPS (installed without their dependencies; may be empty) and
# PINS, made once per set of pins and Python version and kept in GT_TMPDIR.
# Skips (77) without python3-venv or when pip cannot reach the package index.
pinned_venv() {
    key=$(printf '%s|%s|%s' "$2" "$3" "$(python3 -c 'import sys; print(sys.version_info[:2])')" |
        cksum | cut -d' ' -f1)
    VENV="${GT_TMPDIR:-/tmp}/gtrace-$1-$key"
    [ -e "$VENV/.complete" ] && return 0
    # made beside its place and moved there whole (a venv run through its
    # bin/python may move), so a run beside this one never sees half of it
    tmp="$VENV.tmp.$$"
    rm -rf "$tmp"
    python3 -m venv "$tmp" >"$WORK/venv.log" 2>&1 ||
        { cat "$WORK/venv.log"; rm -rf "$tmp"; echo "skip: python3 cannot make a virtual environment (python3-venv)"; exit 77; }
    pip="$tmp/bin/python -m pip install --disable-pip-version-check -q --timeout 30"
    # shellcheck disable=SC2086
    if ! { { [ -z "$2" ] || $pip --no-deps $2; } && $pip $3; } >"$WORK/pip.log" 2>&1; then
        rm -rf "$tmp"
        if grep -qiE 'connection|network|resolve|timed out|No matching distribution|Could not fetch' "$WORK/pip.log"; then
            tail -n 3 "$WORK/pip.log"; echo "skip: pip cannot reach the package index to install $2 $3"; exit 77
        fi
        cat "$WORK/pip.log"; fail "pip install $2 $3"
    fi
    touch "$tmp/.complete"
    mv -T "$tmp" "$VENV" 2>/dev/null || rm -rf "$tmp" # another run put it there first
}
