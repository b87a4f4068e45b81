#!/bin/sh
# carry_mpi.sh: gathers the Open MPI of the build machine into a folder that a
# machine with a GPU, CUDA and NCCL but no Open MPI can use. The trainer built
# with Open MPI and NCCL then runs there:
# one rank as an MPI singleton (no mpirun: Open MPI's ess/singleton with
# ess_singleton_isolated, no daemon), or N ranks under the carried mpirun.
# Only shared memory and TCP: the fabric components (UCX, OFI, verbs, PSM)
# and their libraries stay behind; MPI carries the NCCL id and a few host
# reductions only.
#
# usage, from the source root: tests/gpu/carry_mpi.sh [DEST [BUILD_DIR]]
#   DEST  default _build-gpu/stage (tests/gpu/prepare_device.sh's stage, which
#         calls this script); BUILD_DIR default DEST's parent. It gets:
#     lib/                  libmpi and every library it and the components need
#                           that a machine may lack (never libc, libstdc++ or
#                           libgcc_s: the GPU machine's own, newer ones must win)
#     bin/                  mpirun, orted
#     openmpi/lib/openmpi3  Open MPI's components; openmpi/lib/pmix PMIx's
#     openmpi/share, etc    help texts, the MCA parameter files
#     openmpi/env.sh        what a shell sources there to use it:
#                             GT_OPENMPI=DEST/openmpi; . "$GT_OPENMPI/env.sh"
#     tests/integration/dist_test  when BUILD_DIR is a build tree with Open MPI
#                           (made there if needed): tests/gpu/dist_nccl.sh
#                           runs it on device buffers
# Check on the build machine that nothing of the system's Open MPI is used
# through the copy:
#   tests/gpu/carry_mpi.sh /tmp/x && GT_OPENMPI=/tmp/x/openmpi && . /tmp/x/openmpi/env.sh &&
#   strace -f -e trace=openat trainer --dist ddp ... 2>&1 | grep -c /openmpi   (only /tmp/x paths)
set -eu
cd "$(dirname "$0")/../.."
DEST=${1:-_build-gpu/stage}
case $DEST in /*) ;; *) DEST=$(pwd)/$DEST ;; esac
BUILD=${2:-$(dirname "$DEST")}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac

ompi_info >/dev/null 2>&1 || { echo "carry_mpi: no Open MPI here (apt-get install openmpi-bin libopenmpi-dev)"; exit 1; }
info() { ompi_info --parsable --path "$1" | sed -n "s/^path:$1:\(.*\)/\1/p"; }
PKGLIBDIR=$(info pkglibdir)      # the components
PKGDATADIR=$(info pkgdatadir)    # help texts
SYSCONFDIR=$(info sysconfdir)    # openmpi-mca-params.conf
BINDIR=$(info bindir)
LIBMPI=$(ldconfig -p | awk '$1 == "libmpi.so.40" && /x86-64/ { print $NF; exit }')
[ -n "$LIBMPI" ] && [ -d "$PKGLIBDIR" ] || { echo "carry_mpi: libmpi.so.40 or $PKGLIBDIR not found"; exit 1; }
# PMIx (mpirun's server, ess/pmi in the ranks): its components beside its library
PMIX_SO=$(ldconfig -p | awk '$1 == "libpmix.so.2" && /x86-64/ { print $NF; exit }')
PMIX_HOME=""
for d in "${PMIX_SO:+$(dirname "$PMIX_SO")}/pmix2" /usr/lib/x86_64-linux-gnu/pmix2; do
    [ -d "$d/lib/pmix" ] && { PMIX_HOME=$d; break; }
done

rm -rf "$DEST/openmpi"
mkdir -p "$DEST/lib" "$DEST/bin" "$DEST/openmpi/lib/openmpi3" "$DEST/openmpi/lib/pmix" "$DEST/openmpi/share" \
    "$DEST/openmpi/etc"

# components, without the fabrics' (their libraries are most of Open MPI's size)
fabric='libuc[pstm]\.so|libfabric\.so|libibverbs\.so|librdmacm\.so|libefa\.so|libpsm|libinfinipath|libmca_common_(ucx|ofi|verbs)\.so'
n_comp=0 n_skipped=0
for f in "$PKGLIBDIR"/mca_*.so; do
    if ldd "$f" 2>/dev/null | grep -Eq "$fabric"; then n_skipped=$((n_skipped + 1)); continue; fi
    cp -L "$f" "$DEST/openmpi/lib/openmpi3/"
    n_comp=$((n_comp + 1))
done
[ -n "$PMIX_HOME" ] && cp -L "$PMIX_HOME"/lib/pmix/*.so "$DEST/openmpi/lib/pmix/"
cp -L "$BINDIR/orterun" "$DEST/bin/mpirun"
cp -L "$BINDIR/orted" "$DEST/bin/orted"
cp -rL "$PKGDATADIR" "$DEST/openmpi/share/openmpi"
[ -n "$PMIX_HOME" ] && [ -d "$PMIX_HOME/share/pmix" ] && cp -rL "$PMIX_HOME/share/pmix" "$DEST/openmpi/share/pmix"
cp -L "$SYSCONFDIR"/openmpi-mca-params.conf "$SYSCONFDIR"/openmpi-default-hostfile "$DEST/openmpi/etc/" 2>/dev/null || true

# every library they load, but the C runtime's
system='^(libc|libm|libdl|libpthread|librt|libresolv|ld-linux-x86-64|libgcc_s|libstdc\+\+)\.so'
for f in "$LIBMPI" "$DEST/openmpi/lib/openmpi3"/*.so "$DEST/openmpi/lib/pmix"/*.so "$DEST/bin/mpirun" "$DEST/bin/orted"; do
    ldd "$f" 2>/dev/null | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r name path; do
    echo "$name" | grep -Eq "$system" && continue
    [ -e "$DEST/lib/$name" ] || cp -L "$path" "$DEST/lib/$name"
done
cp -L "$LIBMPI" "$DEST/lib/"

# the distributed pieces' test program, for the stage of a build with Open MPI
if [ -f "$BUILD/config.h" ] && grep -q '^#define HAVE_MPI 1' "$BUILD/config.h"; then
    if ! make -C "$BUILD" -j2 tests/integration/dist_test >/dev/null; then
        echo "carry_mpi: could not make tests/integration/dist_test in $BUILD (above): dist_nccl.sh will not run it"
    elif [ "$BUILD" != "$DEST" ]; then
        mkdir -p "$DEST/tests/integration"
        cp -L "$BUILD/tests/integration/dist_test" "$DEST/tests/integration/"
    fi
fi

cat > "$DEST/openmpi/env.sh" <<'ENV'
# Sourced, with GT_OPENMPI set to this folder: the carried Open MPI instead
# of an installed one (tests/gpu/carry_mpi.sh). Open MPI finds its parts
# through the OPAL_* variables, PMIx through PMIX_*.
: "${GT_OPENMPI:?set GT_OPENMPI to the carried openmpi folder before sourcing env.sh}"
GT_OPENMPI_STAGE=$(cd "$GT_OPENMPI/.." && pwd)
OPAL_PREFIX=$GT_OPENMPI OPAL_LIBDIR=$GT_OPENMPI_STAGE/lib OPAL_BINDIR=$GT_OPENMPI_STAGE/bin
OPAL_PKGLIBDIR=$GT_OPENMPI/lib/openmpi3 OPAL_DATADIR=$GT_OPENMPI/share OPAL_PKGDATADIR=$GT_OPENMPI/share/openmpi
OPAL_SYSCONFDIR=$GT_OPENMPI/etc
PMIX_PREFIX=$GT_OPENMPI PMIX_PKGLIBDIR=$GT_OPENMPI/lib/pmix PMIX_MCA_mca_base_component_path=$GT_OPENMPI/lib/pmix
export OPAL_PREFIX OPAL_LIBDIR OPAL_BINDIR OPAL_PKGLIBDIR OPAL_DATADIR OPAL_PKGDATADIR OPAL_SYSCONFDIR
export PMIX_PREFIX PMIX_PKGLIBDIR PMIX_MCA_mca_base_component_path
LD_LIBRARY_PATH=$GT_OPENMPI_STAGE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PATH=$GT_OPENMPI_STAGE/bin:$PATH
export LD_LIBRARY_PATH PATH
# one rank without mpirun: a singleton that starts no daemon
OMPI_MCA_ess_singleton_isolated=1
# containers run as root; one node: shared memory and loopback TCP only
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
export OMPI_MCA_ess_singleton_isolated OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
export OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include
ENV

echo "carry_mpi: Open MPI $(ompi_info --parsable | sed -n 's/^ompi:version:full:\(.*\)/\1/p'): $n_comp components" \
     "($n_skipped fabric ones left out), $(ls "$DEST/lib" | wc -l) libraries in $DEST/lib," \
     "$(du -sh "$DEST/openmpi" | cut -f1) in $DEST/openmpi"
