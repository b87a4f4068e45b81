#!/bin/sh
# dist_nccl.sh: --dist on --backend cuda, where NCCL carries the buckets and
# gathers (trainer/dist_nccl.c). On one GPU, one rank (an Open MPI singleton,
# no mpirun needed):
#   - dist_test --backend cuda: bucketed all-reduce and reduce-scatter,
#     all-gathers in place and packed, on device buffers, compared bit for bit
#   - the trainer with --dist ddp (one bucket and many) and --dist fsdp
#     --zero 1, 2 and 3, with and without --accum 2 --amp bf16: every step's
#     loss equals the run without --dist (a world of one: the sums are the
#     rank's own values; ZeRO-2/3 keep gradients and weights only in the
#     buffers NCCL moves, so a wrong collective or unpack shows at once), and
#     the collectives were counted
#   - the watchdog: the compute stream held 30 s before an all-reduce that
#     must finish within 2 s stops the rank with a message naming it
# With 2 GPUs and mpirun, also 2 ranks of batch 4 against one process of
# batch 8 (as tests/integration/dist_train.sh does on the CPU).
# Exits 77 without a GPU, or with a trainer built without NCCL or Open MPI.
# Paths: GT_TOP_BUILDDIR/GT_TOP_SRCDIR (make check sets them), else the
# build tree given as $1. On a GPU machine without Open MPI, run
# tests/gpu/carry_mpi.sh BUILD on the build machine first and copy BUILD
# there; BUILD/openmpi is then used.
set -u
BUILD=${1:-${GT_TOP_BUILDDIR:-}}
SRC=${GT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
TRAINER=$BUILD/trainer/trainer
DIST_TEST=$BUILD/tests/integration/dist_test
[ -x "$TRAINER" ] || { echo "skip: no trainer in '$BUILD'"; exit 77; }
if [ -f "$BUILD/openmpi/env.sh" ]; then
    GT_OPENMPI=$BUILD/openmpi
    . "$BUILD/openmpi/env.sh"
else # as the CPU tests run mpirun
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_ess_singleton_isolated=1
    OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_ess_singleton_isolated
    export OMPI_MCA_btl OMPI_MCA_btl_tcp_if_include OMPI_MCA_oob_tcp_if_include
fi
# NCCL checks that every buffer is device memory of the rank's GPU: with one
# rank an in-place all-reduce moves nothing, so a wrong pointer shows only so
NCCL_CHECK_POINTERS=${NCCL_CHECK_POINTERS:-1}
export NCCL_CHECK_POINTERS
DATA=/usr/share/games/fortunes
[ -d "$DATA" ] || DATA=$SRC/trainer
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dist_nccl.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

probe=$("$TRAINER" --backend cuda --dist ddp --steps 0 --data "$DATA" --eval-every 0 2>&1)
case $probe in
*"error while loading shared libraries: libmpi"*)
    echo "skip: the trainer does not start ($probe): carry Open MPI with tests/gpu/carry_mpi.sh"; exit 77 ;;
*"error while loading shared libraries"*)
    echo "skip: the trainer does not start ($probe)"; exit 77 ;;
*"no NVIDIA driver"*|*"no CUDA device"*|*"built without the CUDA toolkit"*|*"needs NCCL"*|*"needs Open MPI"*)
    echo "skip: $probe"; exit 77 ;;
esac
N_GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "dist_nccl: $N_GPUS GPU(s); $(echo "$probe" | grep -m1 'over 1 ranks' || echo "$probe" | tail -1)"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 1. the collectives on device buffers
if [ -x "$DIST_TEST" ]; then
    out=$("$DIST_TEST" --backend cuda 2>&1); rc=$?
    echo "$out"
    [ $rc -eq 0 ] || fail "dist_test --backend cuda exited $rc"
    [ "$(echo "$out" | grep -c '^ok: .*cuda)')" -eq 8 ] || fail "dist_test --backend cuda: not 8 checks ok on cuda buffers"
    echo "$out" | grep -q "collectives over NCCL" || fail "dist_test --backend cuda did not use NCCL"
else
    echo "NOT RUN: the collectives on device buffers and the watchdog: no $DIST_TEST" \
         "(tests/gpu/carry_mpi.sh STAGE BUILD puts it in a stage)"
fi

# 2. the trainer, step by step against the run without --dist
STEPS=6
COMMON="--backend cuda --model gpt-tiny --steps $STEPS --data $DATA --eval-every 0 --log-every 1 --workers 0"
losses() { sed -n 's/^step [0-9]*\/[0-9]* loss \([-0-9.naif]*\).*/\1/p' "$1"; }
# compare WHAT REF_FILE OUT_FILE RTOL
compare() {
    losses "$2" >"$TMP/ref.loss"
    losses "$3" >"$TMP/got.loss"
    paste "$TMP/ref.loss" "$TMP/got.loss" | awk -v tol="$4" -v what="$1" -v steps="$STEPS" '
        NF != 2 { bad++; next }
        { d = $1 - $2; if (d < 0) d = -d; r = d / ($1 > 0 ? $1 : 1); if (r > worst) worst = r; if (!(r <= tol)) bad++ }
        END { if (NR != steps) bad++
              if (bad) { printf "FAIL %-45s %d step(s) differ by more than %g (worst %.2e)\n", what, bad, tol, worst; exit 1 }
              printf "ok   %-45s worst relative difference %.2e (tolerance %g)\n", what, worst, tol }' ||
        { echo "  without --dist: $(tr '\n' ' ' <"$TMP/ref.loss")"; echo "  with:           $(tr '\n' ' ' <"$TMP/got.loss")"
          fails=$((fails + 1)); }
}
for variant in "" "--accum 2 --amp bf16"; do
    tol=1e-4; [ -n "$variant" ] && tol=2e-3
    "$TRAINER" $COMMON --batch 8 $variant >"$TMP/single.out" 2>&1 || { cat "$TMP/single.out"; fail "the run without --dist $variant"; continue; }
    for mode in "ddp" "ddp --bucket-mb 0.1" "fsdp --zero 1" "fsdp --zero 2" "fsdp --zero 3"; do
        if ! "$TRAINER" $COMMON --batch 8 $variant --dist $mode --dist-timeout 60 >"$TMP/dist.out" 2>&1; then
            cat "$TMP/dist.out"; fail "1 rank --dist $mode $variant exited non-zero"; continue
        fi
        grep -q "over 1 ranks (NCCL" "$TMP/dist.out" || { cat "$TMP/dist.out"; fail "--dist $mode: NCCL not named"; }
        grep -Eq "communication per step: [1-9][0-9]* collectives" "$TMP/dist.out" ||
            { grep "communication per step" "$TMP/dist.out"; fail "--dist $mode $variant: no collectives counted"; }
        compare "1 rank, --dist $mode $variant" "$TMP/single.out" "$TMP/dist.out" "$tol"
    done
done
grep "communication per step" "$TMP/dist.out"

# 3. the watchdog: the collective cannot start; the rank must stop, not hang
if [ -x "$DIST_TEST" ]; then
    out=$(timeout 120 "$DIST_TEST" nccl-stall 30 2>&1); rc=$?
    echo "$out" | tail -3
    if [ $rc -eq 124 ]; then fail "nccl-stall: the process hung (killed by the outer timeout)"
    elif [ $rc -eq 0 ]; then fail "nccl-stall: the all-reduce 'completed' although the stream was held past the timeout"
    elif ! echo "$out" | grep -q "rank 0 of 1: allreduce bucket 0 (NCCL) did not complete within 2 s"; then
        fail "nccl-stall: no message naming the stalled collective"
    else echo "ok   the NCCL watchdog stopped the rank (status $rc)"; fi
fi

# 4. two ranks on two GPUs
if [ "$N_GPUS" -ge 2 ] && command -v mpirun >/dev/null 2>&1; then
    MPIRUN="mpirun --oversubscribe --bind-to none -np 2"
    if [ -x "$DIST_TEST" ]; then
        out=$($MPIRUN "$DIST_TEST" --backend cuda 2>&1); rc=$?
        echo "$out" | grep -E "^ok|FAIL|dist_test"
        [ $rc -eq 0 ] && [ "$(echo "$out" | grep -c '^ok: .*cuda)')" -eq 9 ] ||
            fail "dist_test --backend cuda on 2 ranks (exit $rc)"
    fi
    "$TRAINER" $COMMON --batch 8 >"$TMP/single.out" 2>&1
    for mode in "ddp" "fsdp --zero 1" "fsdp --zero 2" "fsdp --zero 3"; do
        if ! $MPIRUN "$TRAINER" $COMMON --batch 4 --dist $mode --dist-timeout 60 >"$TMP/dist.out" 2>&1; then
            cat "$TMP/dist.out"; fail "2 ranks --dist $mode exited non-zero"; continue
        fi
        compare "2 ranks x batch 4, --dist $mode" "$TMP/single.out" "$TMP/dist.out" 1e-3
    done
else
    echo "note: 2 ranks not run ($N_GPUS GPU(s)$(command -v mpirun >/dev/null 2>&1 || echo ', no mpirun'))"
fi
[ $fails -eq 0 ] && echo "dist_nccl: all passed" || echo "dist_nccl: $fails failure(s)"
exit $((fails > 0))
