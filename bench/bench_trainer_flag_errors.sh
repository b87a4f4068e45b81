#!/bin/sh
# bench_trainer_flag_errors.sh TRAINER OUTDIR: the trainer on a list of flag
# lines, good and bad (wrong types, out of range, unknown, missing values,
# repeated, contradicting each other or this build), each with --steps 0 on
# a small text (the CNN lines on the default idx folder or none); each line's
# stdout, stderr and exit status, timing figures masked, go to OUTDIR/N.*.
# Two trees' trainers compared, as bench_trainer_same_bytes.sh does:
#   bench/bench_trainer_flag_errors.sh old/trainer/trainer /tmp/a
#   bench/bench_trainer_flag_errors.sh new/trainer/trainer /tmp/b
#   diff -r /tmp/a /tmp/b && echo same messages
# A line starting with ENV runs as mpirun's rank would (OMPI_COMM_WORLD_SIZE=2).
set -u
tr=$1 out=$2
case $tr in /*) ;; *) tr=$PWD/$tr ;; esac # the lines run in the scratch folder
mkdir -p "$out/work"
w=$out/work
python3 -c 'import random, sys; r = random.Random(1)
open(sys.argv[1], "w").write("".join(r.choice("abcdefgh ijk\n") for _ in range(20000)))' "$w/text" || exit 1
mask() { sed -E 's/[0-9.]+ (tok|img)\/s/T \1\/s/g; s/[0-9.]+ ms\/step/T ms\/step/; s/eta [0-9]+s/eta Ts/;
                s/in [0-9.]+ s/in T s/; s/peak RSS [0-9.]+/peak RSS R/'; }
n=0
while IFS= read -r line; do
    n=$((n + 1))
    case $line in
    ENV*) eval "set -- ${line#ENV}"
          (cd "$w" && OMPI_COMM_WORLD_SIZE=2 timeout 60 "$tr" --data text "$@") >"$w/out" 2>"$w/err" </dev/null ;;
    *--data*|*--model\ cnn*) eval "set -- $line"
          (cd "$w" && timeout 60 "$tr" --steps 0 "$@") >"$w/out" 2>"$w/err" </dev/null ;;
    *) eval "set -- $line"
       (cd "$w" && timeout 60 "$tr" --data text --steps 0 "$@") >"$w/out" 2>"$w/err" </dev/null ;;
    esac
    echo "exit $?" >>"$w/err"
    echo "$line" >"$out/$n.cmd"
    mask <"$w/out" >"$out/$n.out"
    mask <"$w/err" >"$out/$n.err"
done <<'CASES'
--help
-h
--batch 4 --help
--batch x --help
--help --batch x
--batch x
--batch 1.5
--batch ''
--batch 0
--batch 65537
--lr abc
--lr 1e-10
--lr 11
--lr nan
--lr inf
--lr 0x1p-3
--steps -1
--steps 2147483648
--seed -1
--seed 99999999999999999999
--mem-limit 1K
--mem-limit 2X
--mem-limit 1e16
--mem-limit 512MB
--mem-limit ''
--val-fraction 0.95
--ema 1
--momentum 1
--zero 4
--bucket-mb 0
--dist-timeout 0
--device 1024
--workers 65
--epochs 0
--train-images 1
--test-images 0
--threads 0
--eval-batches 0
--log-every 0
--accum 0
--clip 0
--loss-scale 0
--init-scale 0
--weight-decay -1
--heads 0
--width 70000
--layers 2000
--seq 0
--eval-every -1
--warmup -1
--foo 1
--Batch 1
-x
foo
--
--batch
--model
--lr
--batch 2 --batch x
--batch x --batch 2
--model gpt-mini --model foo
--preset baseline --preset foo
--preset foo
--preset
--amp bf16 --amp zz
--model foo
--amp zz
--checkpoint zz
--fuse maybe
--optimizer zz
--lr-schedule zz
--dist zz
--backend zz
--zero 2
--dist ddp --zero 2
--save-format full
--save-format sharded --save S
--save-format zz --save S
--epochs 2
--layout nhwc
--train-images 5
--model cnn-guide --seq 4
--model cnn-guide --preset baseline
--model cnn-guide --dist ddp
--model cnn-guide --zero 1
--model cnn-guide --cuda-graph on
--model cnn-guide --save-format full
--model cnn-guide --checkpoint blocks
--model cnn-resnet --checkpoint selective
--model cnn-guide --checkpoint zz
--model cnn-guide --amp bf16 --backend cuda
--model cnn-guide --amp zz
--model cnn-guide --layout zz
--model cnn-guide --conv-autotune on --layout nhwc
--model cnn-guide --conv-autotune zz
--model cnn-guide --layout nhwc --backend cuda
--model cnn-guide --bias-before-bn zz
--model cnn-guide --fuse zz
--model cnn-guide --optimizer zz
--model cnn-guide --lr-schedule zz
--model cnn-guide --backend zz
--model cnn-guide --init-scale 5
--model cnn-guide --lr x
--model cnn-guide
--init-scale 5
--init-scale 5 --amp fp16 --loss-scale 8
--cuda-graph on
--cuda-graph zz
--attention cudnn
--attention zz
--device 0
--pin-memory on
--tf32 zz
--sync-every-op on
--backend cuda
--batch 65536 --seq 65536
--dist ddp --save-format sharded --save S
--dist fsdp --ema 0.9 --save-format sharded --save S
--optimizer sgd --momentum 0.5
--lr-schedule onecycle --warmup 1000
--accum 3 --clip 0.5 --ema 0.9
--data /nonexistent/x
--model gpt-small --layers 1 --width 64 --heads 3
--heads 3
--steps 2147483647 --resume /nonexistent
--resume /nonexistent
--save /nonexistent/dir/x
--save-format full --save S --dist ddp
ENV --steps 1
CASES
rm -rf "$w"
echo "$n lines, $(ls "$out" | wc -l) files in $out"
