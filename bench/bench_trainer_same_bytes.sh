#!/bin/sh
# bench_trainer_same_bytes.sh TRAINER OUTDIR: a matrix of short, seeded runs of
# the GPT and both CNNs (fp32, --amp bf16/fp16, --accum, --checkpoint,
# --fuse, --clip, --ema, sgd, --save/--resume) on 2 threads; each run's
# output with its timing figures masked goes to OUTDIR/NAME.out and each
# checkpoint's sha256 to OUTDIR/NAME.sha. Two trees' trainers compared:
#   bench/bench_trainer_same_bytes.sh old/trainer/trainer /tmp/a
#   bench/bench_trainer_same_bytes.sh new/trainer/trainer /tmp/b
#   diff -r /tmp/a /tmp/b && echo same bytes
# The figures depend on the machine's kernels, so it compares two builds on
# one machine; it records no expected hashes.
set -u
tr=$1 out=$2
mkdir -p "$out/work"
w=$out/work
export OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
python3 - "$w" <<'PY' || exit 1
import gzip, os, random, struct, sys
d = sys.argv[1] + "/fm"
os.makedirs(d, exist_ok=True)
rng = random.Random(5)
for name, n in (("train", 300), ("t10k", 60)):
    labels, px = [], bytearray()
    for i in range(n):
        k = rng.randrange(10)
        labels.append(k)
        for r in range(28):
            for c in range(28):
                px.append(min(rng.randrange(60) + (180 if r == 2 * k + 4 and 4 <= c < 24 else 0), 255))
    for kind, magic, dims, data in (("images-idx3", 0x803, [n, 28, 28], bytes(px)),
                                    ("labels-idx1", 0x801, [n], bytes(labels))):
        with gzip.open(f"{d}/{name}-{kind}-ubyte.gz", "wb") as f:
            f.write(struct.pack(">I", magic) + b"".join(struct.pack(">I", x) for x in dims) + data)
with open(sys.argv[1] + "/text", "w") as f:
    r = random.Random(7)
    f.write("".join(r.choice("abcdefgh ijklmnop\nqrstuvwxyz.,") for _ in range(60000)))
PY
# the figures that time the run
mask() { sed -E 's/[0-9.]+ (tok|img)\/s/T \1\/s/g; s/[0-9.]+ ms\/step/T ms\/step/; s/eta [0-9]+s/eta Ts/;
                s/in [0-9.]+ s/in T s/; s/peak RSS [0-9.]+/peak RSS R/'; }
run() { # run NAME ARGS...
    name=$1; shift
    "$tr" --threads 2 --seed 3 "$@" >"$w/$name.raw" 2>&1
    echo "exit $?" >>"$w/$name.raw"
    mask <"$w/$name.raw" | sed "s|$w|W|g" >"$out/$name.out"
}
sha() { sha256sum "$1" | cut -d' ' -f1 >"$out/$2.sha"; }

g="--model gpt-tiny --data $w/text --steps 4 --log-every 1 --eval-every 2 --eval-batches 2 --batch 4 --seq 32"
run gpt-fp32 $g
run gpt-bf16 $g --amp bf16
run gpt-fp16 $g --amp fp16
run gpt-fp16-fixed $g --amp fp16 --loss-scale 1024
run gpt-accum3 $g --accum 3
run gpt-ckpt-blocks $g --checkpoint blocks
run gpt-ckpt-sel $g --checkpoint selective --amp bf16
run gpt-fuse $g --fuse on
run gpt-fuse-clip $g --fuse on --clip 0.5 --amp fp16
run gpt-clip $g --clip 0.5
run gpt-ema $g --ema 0.9
run gpt-sgd $g --optimizer sgd --lr-schedule cosine --warmup 1
run gpt-onecycle $g --lr-schedule onecycle --accum 2 --fuse on --ema 0.8
run gpt-save $g --amp fp16 --ema 0.9 --fuse on --save "$w/gpt.st"
sha "$w/gpt.st" gpt-save
run gpt-resume $g --amp fp16 --ema 0.9 --fuse on --resume "$w/gpt.st" --save "$w/gpt2.st"
sha "$w/gpt2.st" gpt-resume
run gpt-save-sgd $g --optimizer sgd --accum 3 --checkpoint blocks --save "$w/gpt3.st"
sha "$w/gpt3.st" gpt-save-sgd

for m in cnn-guide cnn-resnet; do
    c="--model $m --data $w/fm --train-images 200 --test-images 40 --batch 24 --steps 6 --epochs 2 --log-every 1"
    run $m-fp32 $c
    run $m-nchw $c --layout nchw
    run $m-bf16 $c --amp bf16
    run $m-fp16 $c --amp fp16
    run $m-fp16-fixed $c --amp fp16 --loss-scale 512 --clip 1
    run $m-accum3 $c --accum 3
    run $m-fuse $c --fuse on
    run $m-fuse-clip $c --fuse on --clip 0.5 --amp fp16
    run $m-clip $c --clip 0.5
    run $m-ema $c --ema 0.9
    run $m-sgd $c --optimizer sgd --lr-schedule cosine --warmup 1
    run $m-sgd-clip $c --optimizer sgd --momentum 0 --clip 0.3 --accum 2
    run $m-bias $c --bias-before-bn off --lr-schedule onecycle
    run $m-save $c --amp fp16 --ema 0.9 --fuse on --save "$w/$m.st"
    sha "$w/$m.st" $m-save
    run $m-resume $c --steps 12 --amp fp16 --ema 0.9 --fuse on --resume "$w/$m.st" --save "$w/$m.2.st"
    sha "$w/$m.2.st" $m-resume
    run $m-save-sgd $c --optimizer sgd --accum 2 --clip 1 --save "$w/$m.3.st"
    sha "$w/$m.3.st" $m-save-sgd
done
run cnn-resnet-ckpt --model cnn-resnet --data "$w/fm" --train-images 200 --test-images 40 --batch 24 --steps 4 \
    --checkpoint blocks --fuse on --save "$w/blocks.st"
sha "$w/blocks.st" cnn-resnet-ckpt
rm -rf "$w"
echo "$(ls "$out" | wc -l) files in $out"
