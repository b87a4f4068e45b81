#!/bin/sh
# trainer_ckpt_flags.sh: the flags the table (trainer/flags.c) marks
# TR_FLAG_CKPT are the ones a checkpoint records: resuming with another value
# of each is refused, naming the file, for the GPT and the CNNs. Each marked
# flag has a case here and each case's flag is marked, so the bit and the
# checkpoint's checks cannot drift apart.
. "$GT_TOP_SRCDIR/tests/integration/trainer_cnn_common.sh"
src="$GT_TOP_SRCDIR/trainer"
fail() { echo "FAIL: $*"; fails=1; }
python3 -c 'import random, sys; r = random.Random(7)
open(sys.argv[1], "w").write("".join(r.choice("abcdefgh ijklmnop\nqrstuvwxyz.,") for _ in range(20000)))' \
    "$work/text" || exit 1
# a row of the table runs from its name to the line that ends it
awk '/(_FLAG\(|\.name = )"--/ { row = ""; match($0, /"--[a-z0-9-]+"/); name = substr($0, RSTART + 1, RLENGTH - 2) }
     { row = row $0 }
     /(\)|}),$/ { if (name != "" && row ~ /TR_FLAG_CKPT/) print name; name = "" }' "$src/flags.c" |
    sort -u >"$work/marked"
[ -s "$work/marked" ] || fail "no flag of flags.c is marked TR_FLAG_CKPT"
: >"$work/tested"
g="--data $work/text --steps 1 --eval-every 0 --threads 1 --workers 0 --batch 2 --seq 16"
c="--data $work/fm --train-images 100 --test-images 20 --batch 20 --steps 1 --threads 1"
"$tr" $g --save "$work/gpt.st" >/dev/null 2>&1 || fail "saving a GPT checkpoint"
for m in cnn-guide cnn-resnet; do
    "$tr" --model $m $c --save "$work/$m.st" >/dev/null 2>&1 || fail "saving a $m checkpoint"
done
# changed FLAG CHECKPOINT PATTERN ARGS...: resuming CHECKPOINT with ARGS (FLAG changed) is refused
changed() {
    flag=$1 ck=$2 pat=$3; shift 3
    echo "$flag" >>"$work/tested"
    timeout 120 "$tr" "$@" --resume "$work/$ck" >"$work/out" 2>"$work/err"; rc=$?
    if [ "$rc" -eq 0 ] || ! grep -q -- "$work/$ck.*$pat" "$work/err" || grep -q '^step ' "$work/out"; then
        fail "resuming $ck with $*: status $rc, stderr: $(cat "$work/err")"
    fi
}
changed --model gpt.st "saved from another model" $g --model gpt-mini
changed --layers gpt.st "saved from another model" $g --layers 3
changed --width gpt.st "saved from another model" $g --width 64
changed --heads gpt.st "saved from another model" $g --heads 2
changed --optimizer gpt.st "another optimizer (adamw); this run uses sgd" $g --optimizer sgd
changed --model cnn-guide.st "holds the model cnn-guide; this run trains cnn-resnet" --model cnn-resnet $c
changed --optimizer cnn-guide.st "another optimizer (adamw); this run uses sgd" --model cnn-guide $c --optimizer sgd
changed --train-images cnn-guide.st "train_images is 100: expected 60" --model cnn-guide $c --train-images 60
changed --bias-before-bn cnn-resnet.st "another shape of cnn-resnet" --model cnn-resnet $c --bias-before-bn off
sort -u "$work/tested" >"$work/tested.u"
untested=$(comm -23 "$work/marked" "$work/tested.u" | tr '\n' ' ')
unmarked=$(comm -13 "$work/marked" "$work/tested.u" | tr '\n' ' ')
[ -z "$untested" ] || fail "marked TR_FLAG_CKPT in flags.c, no resume case here: $untested"
[ -z "$unmarked" ] || fail "a resume with another value is refused, but flags.c does not mark TR_FLAG_CKPT: $unmarked"
exit $fails
