#!/bin/sh
# trainer_cnn.sh: the CNN models through the trainer program on a small
# synthetic Fashion-MNIST-shaped set written here (idx files, gzip): both
# presets train and their loss falls, --bias-before-bn off has fewer
# parameters, --conv-autotune on times the shapes, --layout nhwc and nchw
# print the same losses, --checkpoint blocks the same losses bit for bit
# with less memory, --clip clips, --amp bf16|fp16 follows fp32's losses in
# less memory (fp16's loss scale skipping overflowed steps), --ema
# evaluates with the averaged weights, --fuse on saves the same state as
# off, and bad flags
# and files get one-line errors naming them.
. "$GT_TOP_SRCDIR/tests/integration/trainer_cnn_common.sh"

# run NAME ARGS...: trains, and checks that the loss fell and the test accuracy line is there.
# Under the sanitizers (ten times slower) each configuration runs 4 steps and
# only has to end well: the plain build checks that it learns.
run() {
    name=$1; shift
    short=""
    [ "${GT_SANITIZERS:-no}" = yes ] && short="--steps 4 --test-images 20"
    # shellcheck disable=SC2086
    out=$(timeout 600 "$tr" --data "$work/fm" --seed 3 --log-every 5 "$@" $short 2>&1); rc=$?
    echo "$out" | sed "s/^/  [$name] /"
    if [ $rc -ne 0 ]; then echo "FAIL: $name: status $rc"; fails=1; return; fi
    if [ -n "$short" ]; then
        echo "$out" | grep -q "first loss [0-9.]*, final loss" || { echo "FAIL: $name: no summary line"; fails=1; }
        return
    fi
    first=$(echo "$out" | sed -n 's/.*first loss \([0-9.]*\), final loss \([0-9.]*\).*/\1/p')
    last=$(echo "$out" | sed -n 's/.*first loss \([0-9.]*\), final loss \([0-9.]*\).*/\2/p')
    acc=$(echo "$out" | sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p' | tail -1)
    if [ -z "$first" ] || [ -z "$acc" ] || ! awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.5 * f) }'; then
        echo "FAIL: $name: the loss did not halve ($first -> $last)"; fails=1
    fi
    if ! awk -v a="$acc" 'BEGIN { exit !(a >= 60) }'; then
        echo "FAIL: $name: test accuracy $acc% on a set a linear model separates"; fails=1
    fi
}
run resnet --model cnn-resnet --epochs 2 --batch 32 --lr 0.003
run guide --model cnn-guide --epochs 2 --batch 32 --conv-autotune on
echo "$out" | grep -q "conv-autotune timed [1-9][0-9]* conv shape" ||
    { echo "FAIL: --conv-autotune on: no shapes timed"; fails=1; }
run resnet-accum --model cnn-resnet --epochs 2 --batch 16 --accum 2 --lr 0.003 --bias-before-bn off
run guide-sgd-cosine --model cnn-guide --layout nchw --epochs 2 --batch 16 --accum 2 --optimizer sgd --lr 0.1 \
    --lr-schedule cosine
# mixed precision learns too (cnn-resnet under --amp: its steps against fp32's below)
run guide-bf16 --model cnn-guide --epochs 2 --batch 32 --layout nchw --amp bf16
run guide-fp16-nchw --model cnn-guide --epochs 2 --batch 32 --amp fp16 --layout nchw

# --bias-before-bn off: the convs that BatchNorm follows have no bias
p_on=$(timeout 120 "$tr" --data "$work/fm" --model cnn-resnet --steps 1 --test-images 10 | sed -n 's/.*, \([0-9]*\) parameters.*/\1/p')
p_off=$(timeout 120 "$tr" --data "$work/fm" --model cnn-resnet --steps 1 --test-images 10 --bias-before-bn off |
        sed -n 's/.*, \([0-9]*\) parameters.*/\1/p')
[ -n "$p_on" ] && [ -n "$p_off" ] && [ $((p_on - p_off)) -eq 336 ] ||
    { echo "FAIL: --bias-before-bn off: $p_on and $p_off parameters (336 conv biases fewer expected)"; fails=1; }

# --layout: both layouts, the same losses step by step (to float rounding).
# The comparisons below run NL steps each: 6, and 3 under the sanitizers (the same code, shorter)
NL=6
[ "${GT_SANITIZERS:-no}" = yes ] && NL=3
losses() {
    model=$1; shift
    timeout 300 "$tr" --data "$work/fm" --model "$model" --steps $NL --batch 16 --test-images 20 --log-every 1 --seed 4 \
        "$@" | sed -n 's/^epoch [0-9]* step \([0-9]*\)\/[0-9]* loss \([0-9.]*\) .*/\2/p'
}
for m in cnn-resnet cnn-guide; do
    a=$(losses "$m" --layout nchw); b=$(losses "$m" --layout nhwc)
    if [ "$(echo "$a" | wc -l)" -ne $NL ] || [ "$(echo "$b" | wc -l)" -ne $NL ] ||
       ! printf '%s\n' "$a" | paste - "$(printf '%s\n' "$b" > "$work/b"; echo "$work/b")" |
           awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 2e-4) bad = 1 } END { exit bad }'; then
        echo "FAIL: $m: --layout nchw losses [$(echo $a)] and nhwc [$(echo $b)] differ"; fails=1
    fi
done
# --checkpoint blocks: the blocks' insides run again in the backward; the
# losses of every step are the same digits (the gradients bitwise: the same
# ops on the same inputs), on both layouts, and the peak is lower
for layout in nhwc nchw; do
    a=$(losses cnn-resnet --layout $layout); b=$(losses cnn-resnet --layout $layout --checkpoint blocks)
    [ "$(echo "$a" | wc -l)" -eq $NL ] && [ "$a" = "$b" ] ||
        { echo "FAIL: --checkpoint blocks ($layout): losses [$(echo $b)], without it [$(echo $a)]"; fails=1; }
done
# and the parameters, BatchNorm statistics and optimizer state after 4 steps are the same bytes
for layout in nhwc nchw; do
    for c in none blocks; do
        timeout 300 "$tr" --data "$work/fm" --model cnn-resnet --steps 4 --batch 16 --test-images 20 --seed 4 \
            --layout $layout --checkpoint $c --save "$work/ck-$c.safetensors" > /dev/null ||
            { echo "FAIL: --checkpoint $c --save"; fails=1; }
    done
    cmp -s "$work/ck-none.safetensors" "$work/ck-blocks.safetensors" ||
        { echo "FAIL: --checkpoint blocks ($layout): the saved state differs from the run without it"; fails=1; }
done
# --clip: the global gradient norm is printed; a clip above it changes no byte of the state, one below
# it (SGD, whose step scales with the gradient) changes the losses after the first step
clipped() {
    timeout 300 "$tr" --data "$work/fm" --model cnn-resnet --steps 4 --batch 16 --test-images 20 --seed 4 \
        --optimizer sgd --lr 0.05 --log-every 1 "$@"
}
c_none=$(clipped --save "$work/cl-none.safetensors") c_big=$(clipped --clip 1e9 --save "$work/cl-big.safetensors")
c_small=$(clipped --clip 0.05)
n1=$(echo "$c_big" | sed -n 's/^epoch 1 step 1\/4 .* norm \([0-9.]*\) .*/\1/p')
n1s=$(echo "$c_small" | sed -n 's/^epoch 1 step 1\/4 .* norm \([0-9.]*\) .*/\1/p')
echo "--clip: first step's gradient norm $n1 (and $n1s under --clip 0.05)"
cmp -s "$work/cl-none.safetensors" "$work/cl-big.safetensors" ||
    { echo "FAIL: --clip 1e9 changed the state"; fails=1; }
[ -n "$n1" ] && [ "$n1" = "$n1s" ] && awk -v n="$n1" 'BEGIN { exit !(n > 0.05) }' ||
    { echo "FAIL: --clip: norms '$n1' and '$n1s' (the same gradients at step 1, over 0.05)"; fails=1; }
l_none=$(echo "$c_none" | sed -n 's/^epoch 1 step 4\/4 loss \([0-9.]*\) .*/\1/p')
l_small=$(echo "$c_small" | sed -n 's/^epoch 1 step 4\/4 loss \([0-9.]*\) .*/\1/p')
[ -n "$l_none" ] && [ -n "$l_small" ] && [ "$l_none" != "$l_small" ] ||
    { echo "FAIL: --clip 0.05: step 4's loss $l_small, unclipped $l_none"; fails=1; }
peak() {
    timeout 300 "$tr" --data "$work/fm" --model cnn-resnet --steps 2 --batch 64 --test-images 20 "$@" |
        sed -n 's/.*peak allocated \([0-9.]*\) MiB.*/\1/p'
}
p_full=$(peak) p_ckpt=$(peak --checkpoint blocks) p_bf16=$(peak --amp bf16)
echo "peak allocated: $p_full MiB, with --checkpoint blocks $p_ckpt MiB, with --amp bf16 $p_bf16 MiB"
[ -n "$p_full" ] && [ -n "$p_ckpt" ] && awk -v a="$p_full" -v b="$p_ckpt" 'BEGIN { exit !(b < 0.8 * a) }' ||
    { echo "FAIL: --checkpoint blocks: peak $p_ckpt MiB against $p_full MiB without it"; fails=1; }
# --amp bf16 halves the activations (the weights' bf16 copy is small)
[ -n "$p_bf16" ] && awk -v a="$p_full" -v b="$p_bf16" 'BEGIN { exit !(b < 0.6 * a) }' ||
    { echo "FAIL: --amp bf16: peak $p_bf16 MiB against $p_full MiB in fp32"; fails=1; }

# --amp: each step's loss within low-precision rounding of fp32's, on both layouts
near() { # near A B: the two loss lists have NL entries each, each pair within 0.03
    [ "$(echo "$1" | wc -l)" -eq $NL ] && [ "$(echo "$2" | wc -l)" -eq $NL ] &&
        printf '%s\n' "$1" | paste - "$(printf '%s\n' "$2" > "$work/near"; echo "$work/near")" |
        awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 0.03) bad = 1 } END { exit bad }'
}
for m in cnn-resnet cnn-guide; do
    a=$(losses "$m")
    for amp in bf16 fp16; do
        for layout in nhwc nchw; do
            b=$(losses "$m" --amp $amp --layout $layout)
            near "$a" "$b" || { echo "FAIL: $m --amp $amp --layout $layout: losses [$(echo $b)], fp32 [$(echo $a)]"; fails=1; }
        done
    done
done
# bf16: --checkpoint blocks recomputes the same bits; a fixed power-of-two loss scale is exact
a=$(losses cnn-resnet --amp bf16)
b=$(losses cnn-resnet --amp bf16 --checkpoint blocks)
[ "$(echo "$a" | wc -l)" -eq $NL ] && [ "$a" = "$b" ] ||
    { echo "FAIL: --amp bf16 --checkpoint blocks: losses [$(echo $b)], without it [$(echo $a)]"; fails=1; }
b=$(losses cnn-resnet --amp bf16 --loss-scale 128)
[ "$a" = "$b" ] || { echo "FAIL: --amp bf16 --loss-scale 128: losses [$(echo $b)], unscaled [$(echo $a)]"; fails=1; }
# fp16 from a loss scale too large: the overflowed steps are skipped and the scale halves until they fit
out=$(timeout 300 "$tr" --data "$work/fm" --model cnn-resnet --steps 10 --batch 16 --test-images 20 --seed 4 \
      --log-every 1 --amp fp16 --init-scale 1e8 2>&1)
first=$(echo "$out" | sed -n 's/^epoch 1 step 1\/10 .* scale \([0-9.e+]*\) (skipped).*/\1/p')
skipped=$(echo "$out" | sed -n 's/.* \([0-9]*\) step(s) skipped for overflowed gradients/\1/p')
last=$(echo "$out" | sed -n 's/^epoch [0-9]* step 10\/10 .* scale \([0-9.e+]*\) [0-9]* img.*/\1/p')
echo "--amp fp16 --init-scale 1e8: step 1 skipped at scale $first; $skipped skipped; step 10 at scale $last"
[ "$first" = "1e+08" ] && [ -n "$skipped" ] && [ "$skipped" -ge 1 ] && [ "$skipped" -lt 10 ] && [ -n "$last" ] &&
    awk -v s="$last" -v n="$skipped" 'BEGIN { exit !(s == 1e8 / 2 ^ n) }' ||
    { echo "FAIL: --amp fp16 --init-scale 1e8: $(echo "$out" | grep -E "step|skipped")"; fails=1; }
# --fuse on: the fused softmax+cross-entropy and the one-pass AdamW (unscaling and clipping on the
# fly) do the unfused ops' arithmetic: the saved state after 4 steps is the same bytes
for args in "--model cnn-resnet --clip 0.5" "--model cnn-guide" "--model cnn-resnet --amp fp16 --layout nchw"; do
    for f in off on; do
        # shellcheck disable=SC2086
        timeout 300 "$tr" --data "$work/fm" --steps 4 --batch 16 --test-images 20 --seed 4 $args --fuse $f \
            --save "$work/fuse-$f.safetensors" > "$work/fuse-$f.log" 2>&1 ||
            { echo "FAIL: $args --fuse $f: $(cat "$work/fuse-$f.log")"; fails=1; }
    done
    cmp -s "$work/fuse-off.safetensors" "$work/fuse-on.safetensors" ||
        { echo "FAIL: $args: --fuse on saved another state than --fuse off"; fails=1; }
done
# --ema: training is unchanged; the test set is evaluated with the averages, which a decay near 1 keeps
# at the initial network (a test loss near ln 10), and a short one near the trained network
# (cnn-guide in nchw: the model that learns this set in seconds)
ema() {
    timeout 300 "$tr" --data "$work/fm" --model cnn-guide --layout nchw --epochs 2 --batch 32 --lr 0.003 \
        --seed 3 "$@"
}
e0=$(ema) e1=$(ema --ema 0.9999999) e2=$(ema --ema 0.5)
loss_of() { echo "$1" | sed -n 's/.*first loss \([0-9.]*\), final loss \([0-9.]*\).*/\1 \2/p'; }
test_loss() { echo "$1" | sed -n 's/^epoch 2 train loss .* test loss \([0-9.]*\) .*/\1/p'; }
echo "--ema: test loss $(test_loss "$e0") without, $(test_loss "$e1") at 0.9999999, $(test_loss "$e2") at 0.5"
[ -n "$(loss_of "$e0")" ] && [ "$(loss_of "$e0")" = "$(loss_of "$e1")" ] && [ "$(loss_of "$e0")" = "$(loss_of "$e2")" ] ||
    { echo "FAIL: --ema changed the training losses: $(loss_of "$e0") / $(loss_of "$e1") / $(loss_of "$e2")"; fails=1; }
echo "$e1" | grep -q "^epoch 2 train loss .* (ema weights)$" || { echo "FAIL: --ema: no (ema weights) line"; fails=1; }
awk -v a="$(test_loss "$e1")" -v b="$(test_loss "$e2")" -v c="$(test_loss "$e0")" \
    'BEGIN { exit !(a > 2.2 && a < 2.4 && b < 1.5 && c < 1.5) }' ||
    { echo "FAIL: --ema: test losses $(test_loss "$e0"), $(test_loss "$e1"), $(test_loss "$e2")"; fails=1; }
# the cpu backend's default layout: nhwc where the CPU has AVX-512 (its direct kernels in registers), else nchw
want=nchw
grep -qw avx512f /proc/cpuinfo 2>/dev/null && want=nhwc
timeout 120 "$tr" --data "$work/fm" --model cnn-resnet --steps 1 --test-images 10 | grep -q "cpu backend, $want," ||
    { echo "FAIL: the cpu backend's default layout is not $want on this CPU"; fails=1; }

expect() { # expect STATUS PATTERN ARGS...
    want=$1 pat=$2; shift 2
    msg=$(timeout 120 "$tr" "$@" 2>&1); got=$?
    lines=$(printf '%s\n' "$msg" | wc -l)
    if [ "$got" -ne "$want" ] || ! printf '%s\n' "$msg" | grep -q -- "$pat" || [ "$lines" -ne 1 ]; then
        echo "FAIL: trainer $*: status $got, message: $msg"; fails=1
    fi
}
expect 1 "t10k-labels-idx1-ubyte.gz: 199 labels for the 200 images" --model cnn-resnet --data "$work/bad"
expect 1 "$work/none: not a folder" --model cnn-guide --data "$work/none"
expect 1 "train-images-idx3-ubyte.gz: cannot open" --model cnn-guide --data "$work"
expect 2 "--seq is a GPT flag" --model cnn-guide --seq 8
expect 2 "--amp bf16 with --model cnn-resnet runs on the cpu backend" --model cnn-resnet --amp bf16 --backend cuda
expect 2 "--loss-scale needs mixed precision" --model cnn-resnet --loss-scale 128
expect 2 "--init-scale is the start of the dynamic loss scale" --model cnn-resnet --amp bf16 --init-scale 1024
expect 2 "--fuse: expected on or off" --model cnn-guide --fuse yes
expect 2 "--checkpoint: expected none or blocks" --model cnn-resnet --checkpoint selective
expect 2 "--model cnn-guide has no residual blocks" --model cnn-guide --checkpoint blocks
expect 2 "--bias-before-bn: expected on or off" --model cnn-resnet --bias-before-bn maybe
expect 2 "are for the CNN models" --epochs 2
expect 2 "--conv-autotune: expected on or off" --model cnn-guide --conv-autotune yes
expect 2 "--layout: expected nhwc or nchw, got 'chwn'" --model cnn-guide --layout chwn
expect 2 "--layout nhwc has one" --model cnn-guide --conv-autotune on --layout nhwc
expect 2 "are for the CNN models" --layout nchw
expect 2 "cnn-guide or cnn-resnet" --model cnn-huge
exit $fails
