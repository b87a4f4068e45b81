#!/bin/sh
# trainer_cnn_cuda.sh: the CNN models on --backend cuda (convolution and
# BatchNorm on cuDNN, pooling, ReLU and dropout on kernels/cuda/pool.cu)
# against --backend cpu on one small synthetic Fashion-MNIST-shaped set: the
# first steps' losses must agree closely (fp32 on both; the same weights and
# batches), with cuDNN's heuristic algorithms and with --conv-autotune on (its
# timed picks are printed), --checkpoint blocks gives the same losses with a
# lower peak, and a longer run's loss falls on the GPU. Exits 77 without a
# usable GPU, without the CUDA backend or without python3 (which writes the
# idx files).
# Paths: GT_TOP_BUILDDIR (make check sets it), else the build tree given as $1.
set -u
BUILD=${1:-${GT_TOP_BUILDDIR:-}}
TRAINER=$BUILD/trainer/trainer
[ -x "$TRAINER" ] || { echo "skip: no trainer in '$BUILD'"; exit 77; }
[ -x "$BUILD/tests/gpu/test_cuda_ops" ] || { echo "skip: built without the CUDA backend"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 writes the idx files"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/trainer_cnn_cuda.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" <<'PY' || exit 1
import gzip, random, struct, sys
d, rng = sys.argv[1], random.Random(5)
for name, n in (("train", 512), ("t10k", 128)):
    labels, px = [], bytearray()
    for i in range(n):
        k = rng.randrange(10)
        labels.append(k)
        px += bytes(min(255, rng.randrange(60) + (180 if r == 2 * k + 4 and 4 <= c < 24 else 0))
                    for r in range(28) for c in range(28))
    with gzip.open(f"{d}/{name}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 0x803, n, 28, 28) + bytes(px))
    with gzip.open(f"{d}/{name}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 0x801, n) + bytes(labels))
PY
probe=$("$TRAINER" --model cnn-resnet --backend cuda --steps 0 --data "$TMP" 2>&1)
case $probe in
*"no NVIDIA driver"*|*"no CUDA device"*|*"built without the CUDA toolkit"*)
    echo "skip: $probe"; exit 77 ;;
esac
fails=0
# losses of steps 1..5, one per line
losses() {
    "$TRAINER" --data "$TMP" --seed 3 --steps 5 --log-every 1 --batch 32 --test-images 32 "$@" 2>&1 |
        sed -n 's/^epoch [0-9]* step [0-9]*\/[0-9]* loss \([0-9.]*\) .*/\1/p'
}
for model in cnn-resnet cnn-guide; do
    # cnn-guide's dropout masks come from the host generator: the same on both backends
    cpu=$(losses --model "$model" --backend cpu | tr '\n' ' ')
    gpu=$(losses --model "$model" --backend cuda | tr '\n' ' ')
    echo "$model: cpu $cpu / cuda $gpu"
    if ! awk -v a="$cpu" -v b="$gpu" 'BEGIN { n = split(a, x); m = split(b, y); if (n != 5 || m != 5) exit 1;
            for (i = 1; i <= 5; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 2e-3 * (1 + x[i])) exit 1 } }'; then
        echo "FAIL: $model: the cuda backend's losses differ from the cpu backend's"; fails=1
    fi
done
# --conv-autotune on: cuDNN times each shape's algorithms; the losses stay the
# cpu backend's, and the picks are listed (recorded with the device's results)
cpu=$(losses --model cnn-resnet --backend cpu | tr '\n' ' ')
tuned=$("$TRAINER" --data "$TMP" --seed 3 --steps 5 --log-every 1 --batch 32 --test-images 32 --model cnn-resnet \
    --backend cuda --conv-autotune on 2>&1)
gpu=$(echo "$tuned" | sed -n 's/^epoch [0-9]* step [0-9]*\/[0-9]* loss \([0-9.]*\) .*/\1/p' | tr '\n' ' ')
echo "cnn-resnet --conv-autotune on: cpu $cpu / cuda $gpu"
echo "$tuned" | sed -n '/conv-autotune timed/,$p'
if ! awk -v a="$cpu" -v b="$gpu" 'BEGIN { n = split(a, x); m = split(b, y); if (n != 5 || m != 5) exit 1;
        for (i = 1; i <= 5; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 2e-3 * (1 + x[i])) exit 1 } }'; then
    echo "FAIL: cnn-resnet --conv-autotune on: the cuda backend's losses differ from the cpu backend's"; fails=1
fi
echo "$tuned" | grep -q "conv-autotune timed [1-9][0-9]* conv shape" ||
    { echo "FAIL: --conv-autotune on: no shapes timed on cuda"; fails=1; }
# --checkpoint blocks on cuda: the same losses (cuDNN's BatchNorm backward
# may sum in another order from run to run: 1e-4, not bitwise), less memory
plain=$("$TRAINER" --data "$TMP" --seed 3 --steps 5 --log-every 1 --batch 32 --test-images 32 --model cnn-resnet \
    --backend cuda 2>&1)
ckpt=$("$TRAINER" --data "$TMP" --seed 3 --steps 5 --log-every 1 --batch 32 --test-images 32 --model cnn-resnet \
    --backend cuda --checkpoint blocks 2>&1)
a=$(echo "$plain" | sed -n 's/^epoch [0-9]* step [0-9]*\/[0-9]* loss \([0-9.]*\) .*/\1/p' | tr '\n' ' ')
b=$(echo "$ckpt" | sed -n 's/^epoch [0-9]* step [0-9]*\/[0-9]* loss \([0-9.]*\) .*/\1/p' | tr '\n' ' ')
pa=$(echo "$plain" | sed -n 's/.*peak allocated \([0-9.]*\) MiB.*/\1/p')
pb=$(echo "$ckpt" | sed -n 's/.*peak allocated \([0-9.]*\) MiB.*/\1/p')
echo "cnn-resnet on cuda: losses $a, peak $pa MiB; --checkpoint blocks: $b, peak $pb MiB"
if ! awk -v a="$a" -v b="$b" 'BEGIN { n = split(a, x); m = split(b, y); if (n != 5 || m != 5) exit 1;
        for (i = 1; i <= 5; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-4) exit 1 } }'; then
    echo "FAIL: --checkpoint blocks on cuda: losses $b, without it $a"; fails=1
fi
awk -v a="$pa" -v b="$pb" 'BEGIN { exit !(a > 0 && b > 0 && b < a) }' ||
    { echo "FAIL: --checkpoint blocks on cuda: peak $pb MiB, without it $pa MiB"; fails=1; }
out=$("$TRAINER" --data "$TMP" --model cnn-resnet --backend cuda --epochs 3 --batch 32 --lr 0.003 2>&1) ||
    { echo "FAIL: cnn-resnet on cuda: $out"; fails=1; }
echo "$out" | tail -3
echo "$out" | awk '/first loss/ { f = $0; sub(/.*first loss /, "", f); split(f, v, /[,; ]+/); ok = v[4] < 0.5 * v[1] }
                   END { exit !ok }' || { echo "FAIL: cnn-resnet on cuda: the loss did not halve"; fails=1; }
exit $fails
