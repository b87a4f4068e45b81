#!/bin/sh
# trainer_cli.sh: --help, and every kind of bad flag or file gets a clear
# message and a non-zero status (2 for a flag, 1 for a file), promptly: every
# run is under timeout, so a refusal that blocks (a FIFO opened for reading)
# fails here instead of hanging.
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
fails=0
"$tr" --help | grep -q -- '--mem-limit' || { echo "FAIL: --help"; fails=1; }
expect() { # expect STATUS PATTERN ARGS...
    want=$1 pat=$2; shift 2
    msg=$(timeout 120 "$tr" "$@" 2>&1); got=$?
    if [ "$got" -ne "$want" ] || ! echo "$msg" | grep -q -- "$pat"; then
        echo "FAIL: trainer $*: status $got, message: $msg"; fails=1
    fi
}
expect 2 "expected an integer" --steps abc
expect 2 "expected an integer" --steps 5x
expect 2 "expected an integer" --steps 1e3
expect 2 "expected an integer" --batch -3
expect 2 "expected an integer" --seq 0
expect 2 "expected an integer" --steps 99999999999999999999
expect 2 "expected a number" --lr 0.1x
expect 2 "expected a number" --lr nan
expect 2 "expected a number" --lr inf
expect 2 "expected a number" --lr -0.1
expect 2 "a size of at least 1M" --mem-limit 1e400
expect 2 "a size of at least 1M" --mem-limit 0
expect 2 "expected an integer" --width 0
expect 2 "expected an integer" --layers -1
expect 2 "expected an integer" --heads 0
expect 2 "expected an integer" --eval-batches 0
expect 2 "expected a number" --val-fraction nan
expect 2 "expected a number" --weight-decay nan
expect 2 "expected a number" --clip inf
expect 2 "expected a number" --ema -nan
expect 2 "a size of at least 1M" --mem-limit nanM
expect 2 "tokens per micro-batch" --batch 65536 --seq 65536
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
# data that is not a file: refused by what it is, without waiting on a writer
mkfifo "$tmp/fifo"
expect 1 "data $tmp/fifo: it is a FIFO" --data "$tmp/fifo"
expect 1 "checkpoint $tmp/fifo: it is a FIFO" --steps 1 --eval-every 0 --resume "$tmp/fifo"
expect 1 "checkpoint $tmp: it is a folder" --steps 1 --eval-every 0 --resume "$tmp"
[ -p "$tmp/fifo" ] || { echo "FAIL: the FIFO is gone"; fails=1; }
# data too short: empty, shorter than one sample, a validation split shorter than one
: > "$tmp/empty.txt"
expect 1 "$tmp/empty.txt holds 0 tokens" --data "$tmp/empty.txt"
printf '%050d' 0 > "$tmp/short.txt"
expect 1 "data $tmp/short.txt holds 50 tokens, 45 of them for training: fewer than one sample of --seq 64 needs (65)" \
    --data "$tmp/short.txt" --steps 1
printf '%0100d' 0 > "$tmp/noval.txt"
expect 1 "data $tmp/noval.txt holds 100 tokens, 10 of them for validation" --data "$tmp/noval.txt" --steps 1
"$tr" --data "$tmp/noval.txt" --steps 1 --val-fraction 0 >/dev/null 2>&1 ||
    { echo "FAIL: --val-fraction 0 trains on data with no room for validation"; fails=1; }
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
