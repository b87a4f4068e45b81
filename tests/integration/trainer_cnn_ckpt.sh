#!/bin/sh
# trainer_cnn_ckpt.sh: --save and --resume for the CNN models on the small
# synthetic set of trainer_cnn_common.sh: a run of N steps and a run of K
# steps saved and resumed for the rest print the same losses and save the
# same file, byte for byte (cnn-resnet with AdamW and BatchNorm, resumed
# mid-epoch; cnn-guide with SGD, momentum and dropout, resumed at an epoch's
# end; cnn-resnet under --amp fp16 with its dynamic loss scale, resumed
# after the scale has backed off; cnn-guide with a weight EMA); the saved tensors are the names the format promises; a checkpoint
# of the other preset or of a GPT, and a truncated one, are refused with
# one line naming the file.
. "$GT_TOP_SRCDIR/tests/integration/trainer_cnn_common.sh"
fail() { echo "FAIL: $*"; fails=1; }

# the step lines without their timing, total steps or memory
losses() { sed -n 's/^epoch \([0-9]*\) step \([0-9]*\)\/[0-9]* \(loss [0-9.]* (mean [0-9.]*)\).*/\1 \2 \3/p; s/^\(epoch [0-9]* train loss .*\)/\1/p' "$@"; }

# same NAME K N ARGS...: the uninterrupted run of N steps against K steps, a save, and a resume to N
same() {
    name=$1 k=$2 n=$3; shift 3
    a="--data $work/fm --train-images 100 --test-images 20 --batch 16 --log-every 1 --seed 4 --epochs 3"
    timeout 300 "$tr" $a --steps "$n" --save "$work/$name.full" "$@" >"$work/$name.out1" 2>&1 ||
        { fail "$name: the run of $n steps: $(cat "$work/$name.out1")"; return; }
    timeout 300 "$tr" $a --steps "$k" --save "$work/$name.k" "$@" >"$work/$name.out2" 2>&1 ||
        { fail "$name: the run of $k steps: $(cat "$work/$name.out2")"; return; }
    timeout 300 "$tr" $a --steps "$n" --resume "$work/$name.k" --save "$work/$name.resumed" "$@" \
        >"$work/$name.out3" 2>&1 || { fail "$name: the resumed run: $(cat "$work/$name.out3")"; return; }
    grep -q "resumed $work/$name.k at step $k" "$work/$name.out3" || fail "$name: no resume line"
    # the K-step run's step lines, then the resumed run's, are the uninterrupted run's
    losses "$work/$name.out1" | grep -v "train loss" >"$work/$name.l1"
    { losses "$work/$name.out2" | grep -v "train loss"; losses "$work/$name.out3" | grep -v "train loss"; } \
        >"$work/$name.l2"
    [ "$(wc -l <"$work/$name.l1")" -eq "$n" ] || fail "$name: $(wc -l <"$work/$name.l1") step lines, $n expected"
    cmp -s "$work/$name.l1" "$work/$name.l2" ||
        fail "$name: the losses differ: $(diff "$work/$name.l1" "$work/$name.l2" | head -6)"
    # the epoch summaries after the resume point are the same too
    losses "$work/$name.out3" | grep "train loss" >"$work/$name.e3"
    losses "$work/$name.out1" | grep "train loss" | tail -n "$(wc -l <"$work/$name.e3")" >"$work/$name.e1"
    cmp -s "$work/$name.e1" "$work/$name.e3" || fail "$name: the epoch summaries differ"
    cmp -s "$work/$name.full" "$work/$name.resumed" || fail "$name: the final checkpoints differ"
}
same resnet 4 10 --model cnn-resnet
same guide 7 12 --model cnn-guide --layout nchw --optimizer sgd --lr 0.05 --momentum 0.9
# the first steps overflow and are skipped: a resume that forgot the learned scale would skip again
same resnet-fp16 5 10 --model cnn-resnet --amp fp16 --init-scale 1e8
grep -q '"loss_scale":"' "$work/resnet-fp16.k" || fail "resnet-fp16.k: no loss scale saved"
same guide-ema 7 12 --model cnn-guide --layout nchw --ema 0.9
grep -q '"ema.params":' "$work/guide-ema.k" || fail "guide-ema.k: no EMA saved"

# the tensors, as safetensors readers see them
python3 - "$work/resnet.full" <<'PY' || fail "resnet.full: not the promised tensors"
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
meta = h.pop("__metadata__")
assert meta["format"] == "gtrace-trainer-cnn-1" and meta["model"] == "cnn-resnet" and meta["step"] == "10", meta
assert sorted(h) == ["bn_running_stats", "data.order", "optimizer.m", "optimizer.v", "params"], sorted(h)
assert h["data.order"]["dtype"] == "I32" and h["data.order"]["shape"] == [100]
end = max(t["data_offsets"][1] for t in h.values())
assert len(b) == 8 + n + end
o = h["data.order"]["data_offsets"]
order = struct.unpack("<100i", b[8 + n + o[0]:8 + n + o[1]])
assert sorted(order) == list(range(100)), "data.order is not a permutation"
PY

# refused STATUS PATTERN ARGS...: the status, one line on stderr naming the file
refused() {
    want=$1 pat=$2; shift 2
    timeout 120 "$tr" --data "$work/fm" --train-images 100 --test-images 20 --batch 16 --epochs 3 "$@" \
        >"$work/out" 2>"$work/err"; got=$?
    if [ $got -ne "$want" ] || ! grep -q -e "$pat" "$work/err" || [ "$(wc -l <"$work/err")" -ne 1 ] ||
       grep -q "^epoch" "$work/out"; then
        fail "$*: status $got (want $want), stderr: $(cat "$work/err")"
    fi
}
refused 1 "$work/guide.k holds the model cnn-guide; this run trains cnn-resnet" \
    --model cnn-resnet --optimizer sgd --lr 0.05 --momentum 0.9 --resume "$work/guide.k"
refused 1 "$work/resnet.k holds the state of another optimizer (adamw); this run uses sgd" \
    --model cnn-resnet --optimizer sgd --resume "$work/resnet.k"
refused 1 "$work/resnet.k: the metadata's train_images is 100: expected 60 to 60" \
    --model cnn-resnet --train-images 60 --resume "$work/resnet.k"
refused 1 "$work/resnet.k was saved from another shape of cnn-resnet" \
    --model cnn-resnet --bias-before-bn off --resume "$work/resnet.k"
refused 1 "$work/resnet.k was saved without a weight EMA; this run has one" \
    --model cnn-resnet --ema 0.9 --resume "$work/resnet.k"
refused 1 "$work/guide-ema.k was saved with a weight EMA; this run has none" \
    --model cnn-guide --resume "$work/guide-ema.k"
refused 1 "$work/resnet.k was saved at step 4, past this run's 2 steps" \
    --model cnn-resnet --steps 2 --resume "$work/resnet.k"
# a loss scale no run writes (the metadata edited, the header's length kept right)
python3 - "$work/resnet-fp16.k" "$work/badscale" <<'PY'
import json, struct, sys
raw = open(sys.argv[1], "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
h = json.loads(raw[8:8 + n])
h["__metadata__"]["loss_scale"] = "-4"
t = json.dumps(h, separators=(",", ":")).encode()
t += b" " * (-(8 + len(t)) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(t)) + t + raw[8 + n:])
PY
refused 1 "$work/badscale: the metadata's loss_scale is '-4': expected a number above 0" \
    --model cnn-resnet --amp fp16 --resume "$work/badscale"
size=$(wc -c <"$work/resnet.k")
head -c $((size - 100)) "$work/resnet.k" >"$work/truncated"
refused 1 "$work/truncated is truncated or padded" --model cnn-resnet --resume "$work/truncated"
head -c 4 "$work/resnet.k" >"$work/short"
refused 1 "$work/short is not a safetensors file" --model cnn-resnet --resume "$work/short"
refused 1 "cannot open the checkpoint $work/missing" --model cnn-resnet --resume "$work/missing"
# a GPT's checkpoint, and the GPT refusing a CNN's
timeout 120 "$tr" --model gpt-tiny --steps 0 --eval-every 0 --threads 1 --workers 0 --save "$work/gpt.st" \
    >"$work/out" 2>&1 || fail "the GPT's save: $(cat "$work/out")"
refused 1 "$work/gpt.st is not a CNN checkpoint (format gtrace-trainer-1" --model cnn-resnet --resume "$work/gpt.st"
timeout 120 "$tr" --model gpt-tiny --steps 1 --eval-every 0 --threads 1 --workers 0 --resume "$work/resnet.k" \
    >"$work/out" 2>"$work/err" && fail "a GPT resumed from a CNN's checkpoint"
grep -q "$work/resnet.k is a checkpoint of another kind of model (format gtrace-trainer-cnn-1, model cnn-resnet)" \
    "$work/err" || fail "the GPT refusing a CNN's checkpoint: $(cat "$work/err")"
# a refused --save target is refused before any step, and --save-format stays the GPT's
mkdir "$work/dir"
refused 1 "cannot save the checkpoint $work/dir: it is a folder" --model cnn-resnet --save "$work/dir"
refused 2 "--save-format is not implemented for --model cnn-resnet" --model cnn-resnet --save "$work/x" \
    --save-format full
exit $fails
