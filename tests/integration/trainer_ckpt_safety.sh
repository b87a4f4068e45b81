#!/bin/sh
# trainer_ckpt_safety.sh: what --save may replace and what --resume accepts.
# A save replaces a regular file (through a symbolic link, the file it
# names) or creates one; a FIFO, a device, a folder, a link to one or to
# nothing, or a folder that is missing is refused with one line before any
# step runs, and is left as it was. A save that fails (a file-size limit) or
# is ended by SIGTERM leaves no PATH.tmp.* behind. A checkpoint whose
# metadata numbers were edited (step, optimizer_t, seed, loss scale), or
# whose tensors hold NaN, an infinity or a negative second moment, is
# refused with one line naming the file and the field or tensor.
# Needs python3 (to edit the safetensors header); skips (77) without it.
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
py=$(command -v python3) || { echo "skip: no python3 to edit checkpoint headers"; exit 77; }
tmp=$(mktemp -d "${GT_TMPDIR:-/tmp}/trainer-ckpt.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=1; }
common="--steps 2 --eval-every 0 --threads 1 --workers 0"

# refused STATUS PATTERN ARGS...: the status, the message, one line on stderr, no step run
refused() {
    want=$1 pat=$2; shift 2
    timeout 120 "$tr" "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
    if [ "$got" -ne "$want" ] || ! grep -q -- "$pat" "$tmp/err" || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
        grep -q '^step ' "$tmp/out"; then
        fail "trainer $*: status $got, stderr: $(cat "$tmp/err"), stdout: $(tail -n 2 "$tmp/out")"
    fi
}
no_temporaries() {
    for f in "$tmp"/*.tmp.* "$tmp"/sub/*.tmp.*; do
        [ -e "$f" ] && fail "$1: a temporary file was left: $f"
    done
}

# ---- --save: only a regular file is ever replaced -------------------------------
mkfifo "$tmp/fifo"
mkdir "$tmp/dir"
ln -s fifo "$tmp/to-fifo"
ln -s dir "$tmp/to-dir"
ln -s nothing-here "$tmp/dangling"
refused 1 "$tmp/fifo: it is a FIFO" $common --save "$tmp/fifo"
refused 1 "$tmp/dir: it is a folder" $common --save "$tmp/dir"
refused 1 "$tmp/to-fifo: it is a symbolic link to .*fifo, which is a FIFO" $common --save "$tmp/to-fifo"
refused 1 "$tmp/to-dir: it is a symbolic link to .*dir, which is a folder" $common --save "$tmp/to-dir"
refused 1 "$tmp/dangling: it is a symbolic link to nothing" $common --save "$tmp/dangling"
refused 1 "cannot create a file beside $tmp/missing/ck" $common --save "$tmp/missing/ck"
refused 1 "cannot save a checkpoint to an empty path" $common --save ""
[ -p "$tmp/fifo" ] && [ -d "$tmp/dir" ] && [ -L "$tmp/to-fifo" ] && [ -L "$tmp/to-dir" ] && [ -L "$tmp/dangling" ] ||
    fail "a refused --save changed what was there"
# a device node (root can make one here): refused, and still a device afterwards
if mknod "$tmp/null" c 1 3 2>/dev/null; then
    refused 1 "$tmp/null: it is a character device" $common --save "$tmp/null"
    [ -c "$tmp/null" ] || fail "the device node was replaced"
else
    echo "note: mknod not permitted here; the device case was not run"
fi
no_temporaries "refused saves"

# a link to a regular file: the file it names gets the checkpoint, the link stays
: > "$tmp/real.safetensors"
ln -s real.safetensors "$tmp/link.safetensors"
"$tr" $common --save "$tmp/link.safetensors" >"$tmp/out" 2>&1 || fail "save through a link: $(cat "$tmp/out")"
[ -L "$tmp/link.safetensors" ] && [ -s "$tmp/real.safetensors" ] || fail "the link was replaced or its file not written"
"$tr" --steps 1 --eval-every 0 --threads 1 --resume "$tmp/link.safetensors" 2>&1 | grep -q "step 3/3" ||
    fail "resume through the link"
no_temporaries "a save through a link"

# ---- a save that cannot finish leaves nothing behind -----------------------------
# over a file-size limit (SIGXFSZ would end the process mid-write): an error, the old file intact
"$tr" $common --save "$tmp/ck.safetensors" >/dev/null 2>&1 || fail "save"
cp "$tmp/ck.safetensors" "$tmp/ck.before"
(
    ulimit -f 2000 # 1-2 MB, the gpt-mini checkpoint is 38 MB
    timeout 120 "$tr" --model gpt-mini --steps 0 --eval-every 0 --threads 1 --workers 0 --save "$tmp/ck.safetensors" \
        >"$tmp/out" 2>"$tmp/err"
    echo $? >"$tmp/status"
)
[ "$(cat "$tmp/status")" = 1 ] && grep -q "cannot write the checkpoint $tmp/ck.safetensors: File too large" "$tmp/err" ||
    fail "a save over the file-size limit: status $(cat "$tmp/status"), $(cat "$tmp/err")"
cmp -s "$tmp/ck.safetensors" "$tmp/ck.before" || fail "a failed save changed the checkpoint it was replacing"
no_temporaries "a save over the file-size limit"

# SIGTERM while the temporary file is being written: the signal ends the run, the temporary goes with it.
# The window is the write of a 130 MB checkpoint; a few tries catch it, and a try that misses it proves nothing.
caught=0
for try in 1 2 3 4 5; do
    rm -f "$tmp"/big*
    "$tr" --model gpt-small --steps 0 --eval-every 0 --threads 1 --workers 0 --save "$tmp/big.safetensors" \
        >/dev/null 2>&1 &
    pid=$!
    seen=0
    while kill -0 $pid 2>/dev/null; do
        set -- "$tmp"/big.safetensors.tmp.*
        if [ -e "$1" ]; then
            kill -TERM $pid
            seen=1
            break
        fi
    done
    wait $pid
    status=$?
    if [ $seen = 1 ] && [ $status = 143 ]; then
        caught=1
        no_temporaries "SIGTERM during a save"
        [ -e "$tmp/big.safetensors" ] && fail "a save ended by SIGTERM left $tmp/big.safetensors"
        break
    fi
done
[ $caught = 1 ] || echo "note: no try caught the save in progress; the SIGTERM case was not run"

# a sharded save (one file per rank): the rank whose file cannot be written stops every rank before any step
if command -v mpirun >/dev/null 2>&1 && ! "$tr" --dist fsdp --steps 0 2>&1 | grep -q "needs Open MPI"; then
    mkfifo "$tmp/sh.rank1-of-2"
    (
        . "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
        timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$tr" $common --dist fsdp --save "$tmp/sh"
    ) >"$tmp/out" 2>&1
    status=$?
    [ $status -ne 0 ] && [ $status -ne 124 ] &&
        grep -q "rank 1: cannot save the checkpoint $tmp/sh.rank1-of-2: it is a FIFO" "$tmp/out" &&
        ! grep -q '^step ' "$tmp/out" && [ -p "$tmp/sh.rank1-of-2" ] && [ ! -e "$tmp/sh.rank0-of-2" ] ||
        fail "a sharded save onto a FIFO: status $status, $(cat "$tmp/out")"
    no_temporaries "a refused sharded save"
else
    echo "note: no mpirun or a trainer without MPI; the sharded case was not run"
fi

# ---- --resume: every number of the metadata is checked ---------------------------
# edit SRC DST KEY VALUE: DST is SRC with __metadata__[KEY] = VALUE ("-" deletes it), the header rewritten
edit() {
    "$py" - "$@" <<'PY'
import json, struct, sys
src, dst, key, value = sys.argv[1:5]
raw = open(src, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
h = json.loads(raw[8:8 + n])
if value == "-":
    del h["__metadata__"][key]
else:
    h["__metadata__"][key] = value
t = json.dumps(h, separators=(",", ":")).encode()
t += b" " * (-(8 + len(t)) % 8)
open(dst, "wb").write(struct.pack("<Q", len(t)) + t + raw[8 + n:])
PY
}
ck="$tmp/ck.safetensors" # 2 steps of gpt-tiny, AdamW: step 2, optimizer_t 2
meta() { # meta KEY VALUE PATTERN: resuming from ck with KEY = VALUE is refused by name
    edit "$ck" "$tmp/edited" "$1" "$2"
    refused 1 "$tmp/edited: $3" --steps 1 --eval-every 0 --threads 1 --resume "$tmp/edited"
}
# the editor itself: a valid edit is taken (the run resumes at the edited step)
edit "$ck" "$tmp/edited" step 7
"$tr" --steps 1 --eval-every 0 --threads 1 --resume "$tmp/edited" 2>&1 | grep -q "step 8/8" || fail "an edited step 7"
meta step 9223372036854775807 "the metadata's step is 9223372036854775807: expected 0 to 2147483647"
meta step 99999999999999999999 "the metadata's step is '99999999999999999999': expected a whole number"
meta step -1 "the metadata's step is -1: expected 0 to 2147483647"
meta step " 5" "the metadata's step is ' 5'"
meta step - "the metadata has no step"
meta optimizer_t 3 "the metadata's optimizer_t is 3: expected 0 to 2"
meta optimizer_t -1 "the metadata's optimizer_t is -1"
meta seed -1 "the metadata's seed is -1: expected 0 to 9223372036854775807"
meta seed 1x "the metadata's seed is '1x'"
meta loss_scale_good_steps 1 "the metadata has loss_scale_good_steps but no loss_scale"
edit "$ck" "$tmp/edited" step 2147483647
edit "$tmp/edited" "$tmp/edited" optimizer_t 2
refused 1 "saved at step 2147483647: 2 more steps pass the last step" --steps 2 --eval-every 0 --threads 1 \
    --resume "$tmp/edited"

# the tensors' values: NaN or an infinity anywhere, a negative second moment
poke() { # poke SRC DST TENSOR INDEX VALUE: DST is SRC with element INDEX of TENSOR set to the float VALUE
    "$py" - "$@" <<'PY'
import json, struct, sys
src, dst, name, index, value = sys.argv[1:6]
raw = bytearray(open(src, "rb").read())
(n,) = struct.unpack("<Q", raw[:8])
lo = json.loads(raw[8:8 + n])[name]["data_offsets"][0]
struct.pack_into("<f", raw, 8 + n + lo + 4 * int(index), float(value))
open(dst, "wb").write(raw)
PY
}
poke "$ck" "$tmp/edited" blocks.attn.qkv.weight 7 0.25
"$tr" --steps 1 --eval-every 0 --threads 1 --resume "$tmp/edited" 2>&1 | grep -q "step 3/3" || fail "a finite edit"
poke "$ck" "$tmp/edited" blocks.attn.qkv.weight 7 nan
refused 1 "$tmp/edited: blocks.attn.qkv.weight holds nan at element 7: not a finite number" --steps 1 --eval-every 0 \
    --threads 1 --resume "$tmp/edited"
poke "$ck" "$tmp/edited" optimizer.m.ln_f.bias 3 -inf
refused 1 "$tmp/edited: optimizer.m.ln_f.bias holds -inf at element 3: not a finite number" --steps 1 --eval-every 0 \
    --threads 1 --resume "$tmp/edited"
poke "$ck" "$tmp/edited" optimizer.v.wte.weight 0 -1
refused 1 "$tmp/edited: optimizer.v.wte.weight holds -1 at element 0: AdamW's second moment is never negative" \
    --steps 1 --eval-every 0 --threads 1 --resume "$tmp/edited"

# the loss scaler's state, from an fp16 run with a dynamic scale
"$tr" $common --amp fp16 --save "$tmp/fp16.safetensors" >/dev/null 2>&1 || fail "fp16 save"
ck="$tmp/fp16.safetensors"
fp16() { # fp16 KEY VALUE PATTERN
    edit "$ck" "$tmp/edited" "$1" "$2"
    refused 1 "$tmp/edited: $3" --steps 1 --eval-every 0 --threads 1 --amp fp16 --resume "$tmp/edited"
}
"$tr" --steps 1 --eval-every 0 --threads 1 --amp fp16 --resume "$ck" 2>&1 | grep -q "step 3/3" || fail "fp16 resume"
fp16 loss_scale nan "the metadata's loss_scale is 'nan'"
fp16 loss_scale inf "the metadata's loss_scale is 'inf'"
fp16 loss_scale -8 "the metadata's loss_scale is '-8'"
fp16 loss_scale 0 "the metadata's loss_scale is '0'"
fp16 loss_scale 1e39 "the metadata's loss_scale is '1e39'"
fp16 loss_scale_good_steps 3 "the metadata's loss_scale_good_steps is 3: expected 0 to 2"
fp16 loss_scale_good_steps - "the metadata has no loss_scale_good_steps"
edit "$ck" "$tmp/e1" step 5000
edit "$tmp/e1" "$tmp/edited" loss_scale_good_steps 2500
refused 1 "loss_scale_good_steps is 2500: expected below the loss scale's growth interval (2000)" --steps 1 \
    --eval-every 0 --threads 1 --amp fp16 --resume "$tmp/edited"

[ $fails -eq 0 ] && echo "ok"
exit $fails
