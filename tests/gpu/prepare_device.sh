#!/bin/sh
# prepare_device.sh: builds everything the GPU checks run and stages it into
# one folder to copy to a machine with a GPU. That machine needs a driver and
# the CUDA libraries, and nothing else: no compiler, no autotools, maybe no
# SQLite or Open MPI. So the build happens on a build machine (same x86-64)
# and the stage holds the binaries in the build tree's layout (what
# device_check.sh and the tests expect as GT_TOP_BUILDDIR) plus lib/ and bin/
# with the few libraries and tools the GPU machine may lack (SQLite and its
# CLI, libgomp, Open MPI).
#
# usage, from the source root: tests/gpu/prepare_device.sh [BUILD_DIR]
#   BUILD_DIR  default _build-gpu (configured --without-blas --without-gtk
#              unless it is configured already: with Open MPI, which
#              carry_mpi.sh stages too, so --dist runs on NCCL there)
# Then copy the source tree with the stage to the GPU machine and run there,
# from the source root (all parts at once, or a few at a time):
#   tests/gpu/device_check.sh _build-gpu/stage tests capture
#   tests/gpu/device_check.sh _build-gpu/stage dist sanitizer speed
#   tests/gpu/device_check.sh _build-gpu/stage bench
# Run this script again after any source change.
set -eu
cd "$(dirname "$0")/../.."
SRC=$(pwd)
BUILD=${1:-_build-gpu}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
STAGE=$BUILD/stage

mkdir -p "$BUILD"
cd "$BUILD"
[ -f config.status ] || "$SRC/configure" --enable-werror --without-blas --without-gtk
grep -q '^#define HAVE_CUDA 1' config.h || { echo "prepare_device: configure found no CUDA toolkit"; exit 1; }
# a tree configured without Open MPI has no --dist:
# dist_nccl.sh would only skip there. Configure it again with the same flags
# less that one, when Open MPI is here to be found.
if ! grep -q '^#define HAVE_MPI 1' config.h; then
    if pkg-config --exists ompi-c 2>/dev/null; then
        flags=$(./config.status --config | sed -E "s/(^| )'?--with(out-mpi|-mpi=no)'?( |\$)/ /g")
        echo "prepare_device: $BUILD was configured without Open MPI; configuring it again with it ($flags)"
        eval "\"\$SRC/configure\" $flags"
        grep -q '^#define HAVE_MPI 1' config.h || { echo "prepare_device: configure still found no Open MPI"; exit 1; }
    else
        echo "prepare_device: no Open MPI here (apt-get install libopenmpi-dev openmpi-bin): the stage has no --dist," \
             "and dist_nccl.sh will skip on the device"
    fi
fi

# What runs there: the trainer, gtrace and its libraries (--pytorch's NVTX
# library too), the CUDA samples, the
# GPU test programs (one per tests/gpu/*.c) and the bench programs.
targets="trainer/trainer libtrace/cli/gtrace libtrace/capture/libgtrace.la libtrace/nvtxlib/libgtrace-nvtx.la"
for f in "$SRC"/samples/cuda_*.cu "$SRC"/tests/gpu/*.c; do
    [ -e "$f" ] || continue
    d=$(basename "$(dirname "$f")")
    case $d in gpu) d=tests/gpu ;; esac
    n=$(basename "$f"); n=${n%.*}
    targets="$targets $d/$n"
done
make -j2 $targets

rm -rf "$STAGE"
mkdir -p "$STAGE/lib" "$STAGE/bin"
for t in $targets; do
    case $t in
    *.la) src=$(dirname "$t")/.libs/$(basename "$t" .la).so ;;
    *) src=$t ;;
    esac
    mkdir -p "$STAGE/$(dirname "$src")"
    # libtool wrappers are shell scripts: the stage needs the real program
    if ! head -c 4 "$src" | grep -q ELF; then
        echo "prepare_device: $src is not a program (a libtool wrapper?)"
        exit 1
    fi
    cp -L "$src" "$STAGE/$src"
done
# Libraries the device may lack; never libc, libstdc++ or libgcc_s, whose
# newer versions there must win (PyTorch runs in the same environment).
for lib in libsqlite3.so.0 libgomp.so.1 libreadline.so.8; do
    p=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64/ { print $NF; exit }')
    [ -n "$p" ] && cp -L "$p" "$STAGE/lib/"
done
command -v sqlite3 >/dev/null && cp -L "$(command -v sqlite3)" "$STAGE/bin/"
# Open MPI, if a script to gather it exists (the NCCL tests need mpirun)
if [ -x "$SRC/tests/gpu/carry_mpi.sh" ]; then "$SRC/tests/gpu/carry_mpi.sh" "$STAGE"; fi

echo "prepare_device: staged $(du -sh "$STAGE" | cut -f1) in $STAGE"
rel=${BUILD#"$SRC"/}
echo "next: copy this tree with $rel/stage to a machine with a GPU and run there, from the source root:"
for parts in "tests capture" "dist sanitizer speed" "bench"; do
    echo "  tests/gpu/device_check.sh $rel/stage $parts"
done
