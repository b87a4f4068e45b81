#!/bin/sh
# device_check.sh: everything checked on a machine with a GPU, in one call,
# from a build tree made elsewhere (it builds nothing): the GPU tests (each CUDA
# op against the CPU reference, the trainer on both backends), compute-
# sanitizer's memcheck over a few training steps, and the trainer's speed.
# Prints everything; with $OUT set (a folder for results) it also writes
# device_check.txt there.
#
# usage, from the source root: tests/gpu/device_check.sh [BUILD_DIR] [PART...]
#   BUILD_DIR  the build tree, or the stage tests/gpu/prepare_device.sh makes
#              of it (_build-gpu/stage: the binaries plus lib/ and bin/ with
#              SQLite and what else the device may lack); default _build-gpu
#   PART       tests, dist, capture, pytorch, sanitizer, speed, bench (default: all;
#              bench, bench/bench_gpu.sh against PyTorch, takes minutes alone)
# A check that exits 77 is skipped: without a GPU that is all most can do;
# on a machine with one a skip is a failure, since everything here is meant
# to run there.
set -u
cd "$(dirname "$0")/../.." || exit 1
SRC=$(pwd)
BUILD=${1:-_build-gpu}
[ $# -gt 0 ] && shift
PARTS=${*:-tests dist capture pytorch sanitizer speed bench}
case $BUILD in /*) ;; *) BUILD=$SRC/$BUILD ;; esac
TRAINER=$BUILD/trainer/trainer
DATA=/usr/share/games/fortunes
[ -d "$DATA" ] || DATA=$SRC/trainer # any text: the trainer's own sources
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
LOG=${OUT:+$OUT/device_check.txt}
export GT_TOP_SRCDIR=$SRC GT_TOP_BUILDDIR=$BUILD OMP_WAIT_POLICY=passive
# a stage's own libraries and tools (SQLite, its CLI, Open MPI's) for what the device lacks; Python
# runs with the machine's own (GT_PYTHON), so a carried libz or libudev never shadows what PyTorch loads
export GT_PYTHON="env LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} python3"
[ -d "$BUILD/lib" ] && export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -d "$BUILD/bin" ] && export PATH="$PATH:$BUILD/bin"
. "$SRC/tests/gpu/cudnn_path.sh" # the trainer dlopens cuDNN: PyTorch's where the system has none

# Libraries the binaries link that the loader does not find here: NCCL (and
# maybe cuBLASLt) may be installed only inside PyTorch's nvidia-* wheels.
# Each one's folder goes on LD_LIBRARY_PATH after the stage's. Says what it did.
libs_on_path() {
    missing=$(for b in "$TRAINER" "$BUILD/tests/integration/dist_test" "$BUILD"/tests/gpu/test_*; do
        [ -e "$b" ] && ldd "$b" 2>/dev/null | awk '/=> not found/ { print $1 }'
    done | sort -u)
    [ -n "$missing" ] || return 0
    wheels=$($GT_PYTHON -c 'import nvidia; print("\n".join(nvidia.__path__))' 2>/dev/null)
    for lib in $missing; do
        found=""
        for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $wheels; do
            found=$(find "$d" -name "$lib" 2>/dev/null | head -1)
            [ -n "$found" ] && break
        done
        if [ -n "$found" ]; then
            LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$found")
            echo "$lib: the loader has none; $(dirname "$found") put on LD_LIBRARY_PATH"
        else
            echo "$lib: not found (neither where the loader looks, nor in the CUDA toolkit, nor in PyTorch's nvidia packages)"
        fi
    done
    export LD_LIBRARY_PATH
}

# note NAME EXIT: one check's result, counted in the part's rc (0 passed, 1
# failed, 77 skipped: nothing failed, something skipped)
note() {
    echo "== $1: exit $2$([ "$2" -eq 77 ] && echo ' (skipped)')"
    if [ "$2" -eq 77 ]; then [ "$rc" -eq 0 ] && rc=77; elif [ "$2" -ne 0 ]; then rc=1; fi
}

main() {
    failed="" skipped=""
    if [ ! -x "$TRAINER" ]; then # nothing would run, and every part would pass as skipped
        echo "device_check: no trainer at $TRAINER: build and stage it with tests/gpu/prepare_device.sh" \
             "and copy the stage (_build-gpu/stage) here with the source tree"
        echo "== done; failed: no build"
        return 1
    fi
    echo "== device_check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname), build $BUILD"
    if command -v nvidia-smi >/dev/null 2>&1; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
    else
        echo "no nvidia-smi (no NVIDIA driver here?)"
    fi
    if [ -x "$BUILD/samples/cuda_probe" ]; then
        probe=$("$BUILD/samples/cuda_probe" 2>&1); gpu=$?
    else
        probe=$(nvidia-smi -L 2>&1 | head -1); nvidia-smi -L 2>/dev/null | grep -q '^GPU'; gpu=$?
    fi
    echo "GPU: $probe"
    cudnn_on_path
    libs_on_path
    for b in "$TRAINER" "$BUILD/tests/integration/dist_test" "$BUILD/libtrace/cli/gtrace" \
        "$BUILD/libtrace/capture/.libs/libgtrace.so"; do
        [ -e "$b" ] && ldd "$b" | grep -i "not found" && failed="${failed% libraries} libraries"
    done
    for part in $PARTS; do
        "part_$part"; r=$?
        if [ $r -eq 77 ]; then
            skipped="$skipped $part"
            [ $gpu -eq 0 ] && failed="$failed $part(skipped-with-a-GPU)"
        elif [ $r -ne 0 ]; then
            failed="$failed $part"
        fi
    done
    echo "== done; skipped:${skipped:- nothing}$([ $gpu -eq 0 ] || echo ' (no usable GPU)'); failed:${failed:- nothing}"
    [ -z "$failed" ]
}

part_tests() {
    rc=0
    for t in test_cuda_cast test_cuda_ops test_cuda_attention test_cudnn_attention_plans; do
        echo "== $t"
        "$BUILD/tests/gpu/$t"; note "$t" $?
    done
    for t in trainer_attention.sh trainer_cuda.sh trainer_cnn_cuda.sh cuda_graph.sh; do
        echo "== $t"
        sh "$SRC/tests/gpu/$t" "$BUILD"; note "$t" $?
    done
    return $rc
}

# --dist over NCCL (needs a build with Open MPI and, on a device without it,
# tests/gpu/carry_mpi.sh's copy in the stage)
part_dist() {
    rc=0
    echo "== dist_nccl.sh"
    sh "$SRC/tests/gpu/dist_nccl.sh" "$BUILD"; note dist_nccl.sh $?
    return $rc
}

# gtrace on CUDA programs: the capture test (kernels, copies, memsets, syncs,
# allocations with stacks, correlation ids) and what tracing costs
part_capture() {
    rc=0
    echo "== capture_cuda.sh"
    sh "$SRC/tests/gpu/capture_cuda.sh"; note capture_cuda.sh $?
    echo "== bench_capture_cuda.sh"
    sh "$SRC/bench/bench_capture_cuda.sh" "$BUILD"; note bench_capture_cuda.sh $?
    return $rc
}

# gtrace --pytorch on a PyTorch program training on the GPU (the machine's own torch)
part_pytorch() {
    rc=0
    echo "== pytorch_cuda.sh"
    sh "$SRC/tests/gpu/pytorch_cuda.sh"; note pytorch_cuda.sh $?
    return $rc
}

part_sanitizer() {
    [ $gpu -eq 0 ] || { echo "== compute-sanitizer: skipped, no usable GPU ($probe)"; return 77; }
    rc=0
    for flags in "" "--amp bf16 --fuse on --pin-memory on --workers 1" "--expandable-segments on --checkpoint blocks" \
        "--cuda-graph on --amp fp16 --clip 1 --accum 2 --steps 6"; do
        # compute-sanitizer refuses NVTX heaps on memory mapped with cuMemMap (each of
        # the expandable range's segments, whose ranges match their mappings exactly,
        # gives "nvtxMemHeapRegister failed"): that run checks accesses without NVTX
        nvtx=yes
        case $flags in *expandable-segments*) nvtx=no ;; esac
        echo "== compute-sanitizer memcheck --nvtx $nvtx: trainer --backend cuda --steps 3 $flags"
        "$SANITIZER" --tool memcheck --nvtx $nvtx --leak-check full --error-exitcode 99 "$TRAINER" --backend cuda --steps 3 \
            --eval-every 2 --eval-batches 2 --log-every 1 --data "$DATA" $flags; r=$?
        echo "== memcheck exit $r"; [ $r -eq 0 ] || rc=1
    done
    echo "== compute-sanitizer memcheck: test_cuda_ops"
    "$SANITIZER" --tool memcheck --error-exitcode 99 "$BUILD/tests/gpu/test_cuda_ops" >/dev/null; r=$?
    echo "== memcheck exit $r"; [ $r -eq 0 ] || rc=1
    return $rc
}

# speed MODEL STEPS FLAGS...: the trainer's own summary line
speed() {
    model=$1 steps=$2; shift 2
    out=$("$TRAINER" --backend cuda --model "$model" --steps "$steps" --eval-every 0 --log-every "$steps" \
        --data "$DATA" "$@" 2>&1)
    line=$(echo "$out" | grep -E "^trainer: [0-9]+ steps|error|FAIL|out of memory")
    [ -n "$line" ] || line="no summary: $(echo "$out" | tail -1)" # a failure the patterns miss
    printf '%-10s %-70s %s\n' "$model" "$*" "$line"
}

part_speed() {
    [ $gpu -eq 0 ] || { echo "== speed: skipped, no usable GPU ($probe)"; return 77; }
    echo "== speed (attention auto: cuDNN's under --amp, the own kernel in fp32; tok/s and ms/step from the trainer's summary)"
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2 --attention own
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2 --attention cudnn
    speed gpt-small 50
    speed gpt-small 50 --amp bf16 --fuse on --pin-memory on --workers 2
    speed gpt2-124m 20 --batch 8
    speed gpt2-124m 20 --batch 8 --tf32 on
    speed gpt2-124m 20 --batch 8 --amp bf16
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2 --autotune on
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2 --expandable-segments on
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2 --checkpoint selective
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --sync-every-op on
    speed gpt2-124m 20 --batch 8 --amp fp16 --fuse on --pin-memory on --workers 2
    speed gpt-small 50 --amp bf16 --fuse on --cuda-graph on
    speed gpt2-124m 20 --batch 8 --amp bf16 --fuse on --pin-memory on --workers 2 --cuda-graph on
    return 0
}

# the trainer against PyTorch (eager and torch.compile) on GPT-2 small's shape, each at its largest batch
part_bench() {
    [ $gpu -eq 0 ] || { echo "== bench_gpu.sh: skipped, no usable GPU ($probe)"; return 77; }
    rc=0
    echo "== bench_gpu.sh"
    sh "$SRC/bench/bench_gpu.sh" "$BUILD"; note bench_gpu.sh $?
    return $rc
}

if [ -n "$LOG" ]; then
    main 2>&1 | tee "$LOG"
    exit "$(tail -1 "$LOG" | grep -q 'failed: nothing' && echo 0 || echo 1)"
fi
main 2>&1
