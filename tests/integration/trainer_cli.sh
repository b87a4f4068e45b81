#!/bin/sh
# trainer_cli.sh: --help, and every kind of bad flag or file gets a clear
# message and a non-zero status.
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
fails=0
"$tr" --help | grep -q -- '--mem-limit' || { echo "FAIL: --help"; fails=1; }
expect() { # expect STATUS PATTERN ARGS...
    want=$1 pat=$2; shift 2
    msg=$("$tr" "$@" 2>&1); got=$?
    if [ "$got" -ne "$want" ] || ! echo "$msg" | grep -q -- "$pat"; then
        echo "FAIL: trainer $*: status $got, message: $msg"; fails=1
    fi
}
expect 2 "expected an integer" --steps abc
expect 2 "expected an integer" --steps -1
expect 2 "expected an integer" --batch 0
expect 2 "expected a number" --lr fast
expect 2 "a size of at least 1M" --mem-limit 12Q
expect 2 "unknown option" --frobnicate 1
expect 2 "needs a value" --steps
expect 2 "gpt-tiny, gpt-mini" --model gpt-huge
expect 1 "cannot read the data" --data /nonexistent
tmp=$(mktemp -d "${GT_TMPDIR:-/tmp}/trainer-cli.XXXXXX")
printf 'x' > "$tmp/bad.bin"
expect 1 "truncated" --data "$tmp/bad.bin"
printf 'not a checkpoint' > "$tmp/ck"
expect 1 "not a safetensors file\|not a checkpoint" --steps 1 --eval-every 0 --resume "$tmp/ck"
expect 1 "out of memory" --steps 1 --mem-limit 2M
expect 1 "width" --width 100 --heads 3
# the optimization switches: bad values and combinations are refused by name
expect 2 "off, bf16 or fp16" --amp fp8
expect 2 "none, blocks or selective" --checkpoint all
expect 2 "on or off" --fuse yes
expect 2 "adamw or sgd" --optimizer lion
expect 2 "constant, cosine or onecycle" --lr-schedule step
expect 2 "baseline or optimized" --preset fastest
expect 2 "expected an integer" --accum 0
expect 2 "--loss-scale needs mixed precision" --loss-scale 1024
expect 2 "--init-scale" --amp bf16 --init-scale 1024
expect 2 "--init-scale" --amp fp16 --loss-scale 8 --init-scale 1024
expect 2 "--momentum is for --optimizer sgd" --momentum 0.9
expect 2 "--warmup (200) must be shorter" --lr-schedule cosine --warmup 200
expect 2 "expected a number" --ema 1
expect 2 "expected a number" --clip -1
# a preset sets switches; a later flag overrides it
"$tr" --preset optimized --fuse off --steps 1 --eval-every 0 2>&1 | grep -q "preset optimized.*fusion off" ||
    { echo "FAIL: a flag after --preset overrides it"; fails=1; }
"$tr" --fuse off --preset optimized --steps 1 --eval-every 0 2>&1 | grep -q "preset optimized.*fusion off" ||
    { echo "FAIL: a flag before --preset overrides it too"; fails=1; }
# save, resume: the resumed run continues at the saved step
"$tr" --steps 3 --eval-every 0 --save "$tmp/ck.safetensors" >/dev/null 2>&1 || { echo "FAIL: --save"; fails=1; }
"$tr" --steps 2 --eval-every 0 --resume "$tmp/ck.safetensors" 2>&1 | grep -q "step 5/5" || { echo "FAIL: --resume"; fails=1; }
rm -rf "$tmp"
[ $fails -eq 0 ] && echo "ok"
exit $fails
