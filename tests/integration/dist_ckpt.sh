#!/bin/sh
# dist_ckpt.sh: distributed checkpoints (FSDP's sharded and full state dicts).
# - ZeRO 1, 2, 3 on 2 ranks: 3 steps, save sharded, resume for 3 more ==
#   6 steps uninterrupted: the same loss lines, and the two runs' final
#   checkpoints (gathered into one file) equal byte for byte.
# - A full file gathered from 2 ranks resumes on 1 process, on 4 ranks and
#   under DDP: the same loss lines as the uninterrupted 2-rank run, and
#   weights and optimizer state within 1e-5 of it (reductions in another
#   order; a lost optimizer state is ~1e-3 off); 4 ranks that load it and save
#   at once give the file back byte for byte.
# - Refused by file name and reason: another rank count, a missing shard, a
#   truncated or garbage shard, another shape, optimizer or range, a sharded
#   checkpoint for one process or DDP, a path holding both kinds.
# Skips (77) only without mpirun.
set -u
command -v mpirun >/dev/null 2>&1 || { echo "skip: no mpirun (apt-get install openmpi-bin)"; exit 77; }
. "$GT_TOP_SRCDIR/tests/integration/dist_common.sh"
tr="$GT_TOP_BUILDDIR/trainer/trainer"
d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
awk 'BEGIN { for (i = 0; i < 300; i++) printf "%d: the quick brown fox jumps over the lazy dog %d times\n", i, i * 7 % 13 }' \
    >"$d/text.txt"
common="--data $d/text.txt --layers 2 --width 32 --heads 4 --seq 16 --threads 1 --workers 0 --eval-every 0 --log-every 1"
fails=0
fail() { echo "FAIL: $*"; fails=1; }
losses() { tr '\r' '\n' | sed -n 's/^step \([0-9]*\)\/[0-9]* loss \([0-9.]*\).*/\1 \2/p'; }
# start NAME NP ARGS...: the trainer on NP ranks (0: one process, no mpirun) in
# the background (mpirun's start and a refused job's teardown are most of the
# time; in parallel the suite takes seconds); $d/NAME.log, status in $d/NAME.rc
start() {
    name=$1 np=$2; shift 2
    if [ "$np" -eq 0 ]; then ("$tr" $common "$@" >"$d/$name.log" 2>&1; echo $? >"$d/$name.rc") &
    else (dist_mpirun "$np" "$tr" $common "$@" >"$d/$name.log" 2>&1; echo $? >"$d/$name.rc") & fi
}
ran() { # NAME: it exited 0
    rc=$(cat "$d/$1.rc" 2>/dev/null)
    [ "$rc" = 0 ] || { cat "$d/$1.log"; fail "$1 exited ${rc:-?}"; return 1; }
}
same_losses() { # WHAT REF GOT: equal loss lines (at least one)
    if [ -z "$3" ] || [ "$2" != "$3" ]; then fail "$1: loss lines differ"; printf 'expected:\n%s\ngot:\n%s\n' "$2" "$3"
    else echo "ok: $1"; fi
}
# largest |a - b| over the tensor data of two checkpoints with the same header
maxdiff() {
    h=$(od -A n -t u8 -N 8 "$1" | tr -d ' ')
    od -A n -v -t f4 -w4 -j $((8 + h)) "$1" >"$d/a.txt"
    od -A n -v -t f4 -w4 -j $((8 + h)) "$2" >"$d/b.txt"
    paste "$d/a.txt" "$d/b.txt" | awk '{ x = $1 - $2; if (x < 0) x = -x; if (x > m) m = x } END { printf "%g\n", m + 0 }'
}
close_to() { # WHAT FILE REF
    [ -f "$2" ] || { fail "$1: no checkpoint $2"; return; }
    m=$(maxdiff "$2" "$3")
    awk -v m="$m" 'BEGIN { exit !(m < 1e-5) }' && echo "ok: $1 (largest difference $m)" || fail "$1: weights/state differ by $m"
}
refused() { # WHAT NAME PATTERN: NAME failed, saying PATTERN
    if [ "$(cat "$d/$2.rc")" != 0 ] && grep -q -- "$3" "$d/$2.log"; then echo "ok: refused: $1"
    else cat "$d/$2.log"; fail "$1 was not refused with '$3' (status $(cat "$d/$2.rc"))"; fi
}

# ---- first: the uninterrupted runs, the sharded saves, a full save ---------------
for z in 1 2 3; do
    start "u$z" 2 --batch 4 --steps 6 --dist fsdp --zero "$z" --save "$d/u$z" --save-format full
    start "a$z" 2 --batch 4 --steps 3 --dist fsdp --zero "$z" --save "$d/s$z"
done
start full 2 --batch 4 --steps 3 --dist fsdp --zero 3 --save "$d/full" --save-format full
wait
for x in u1 a1 u2 a2 u3 a3 full; do ran "$x" || { echo "cannot go on"; exit 1; }; done

# ---- then: the resumes, and every refusal (each in a folder of its own) -----------
for z in 1 2 3; do
    start "b$z" 2 --batch 4 --steps 3 --dist fsdp --zero "$z" --resume "$d/s$z" --save "$d/r$z" --save-format full
done
start one 0 --batch 8 --steps 3 --resume "$d/full" --save "$d/one"
start four 4 --batch 2 --steps 3 --dist fsdp --zero 2 --resume "$d/full" --save "$d/four" --save-format full
start ddp 2 --batch 4 --steps 3 --dist ddp --resume "$d/full"
touch "$d/rt.rank0-of-3" "$d/rt.rank1-of-3" "$d/rt.rank2-of-3" # a stale save of 3 ranks at that name
start rt 4 --batch 2 --steps 0 --dist fsdp --zero 1 --resume "$d/full" --save "$d/rt" --save-format full
# shard folders: s3's files, then one of them damaged
shards() { mkdir "$d/$1" && cp "$d/s3.rank0-of-2" "$d/s3.rank1-of-2" "$d/$1/"; }
start nranks 4 --batch 2 --steps 1 --dist fsdp --resume "$d/s3"
shards missing && rm "$d/missing/s3.rank1-of-2"
start missing 2 --batch 4 --steps 1 --dist fsdp --resume "$d/missing/s3"
shards trunc && head -c 2000 "$d/s3.rank1-of-2" >"$d/trunc/s3.rank1-of-2"
start trunc 2 --batch 4 --steps 1 --dist fsdp --resume "$d/trunc/s3"
shards garbage && printf 'not a checkpoint at all' >"$d/garbage/s3.rank1-of-2"
start garbage 2 --batch 4 --steps 1 --dist fsdp --resume "$d/garbage/s3"
shards renamed && cp "$d/s3.rank0-of-2" "$d/renamed/s3.rank1-of-2"
start renamed 2 --batch 4 --steps 1 --dist fsdp --resume "$d/renamed/s3"
# another range: the same file with its begin moved by one element
shards range && perl -0777 -pe 's/"begin":"(\d+)"/sprintf("\"begin\":\"%0*d\"", length($1), $1 + 1)/e' \
    "$d/s3.rank1-of-2" >"$d/range/s3.rank1-of-2"
start range 2 --batch 4 --steps 1 --dist fsdp --resume "$d/range/s3"
start shape 2 --batch 4 --steps 1 --dist fsdp --resume "$d/s3" --width 64
start optim 2 --batch 4 --steps 1 --dist fsdp --resume "$d/s3" --optimizer sgd
start single 0 --batch 8 --steps 1 --resume "$d/s3"
start ddpsh 2 --batch 4 --steps 1 --dist ddp --resume "$d/s3"
shards both && cp "$d/full" "$d/both/s3"
start both 2 --batch 4 --steps 1 --dist fsdp --resume "$d/both/s3"
start fmt 0 --steps 1 --save "$d/x" --save-format sharded
wait

# sharded: save on 2 ranks, resume on 2 ranks == uninterrupted, bitwise
for z in 1 2 3; do
    ran "b$z" || continue
    same_losses "zero $z: 3 steps, sharded save, resume, 3 steps == 6 steps" "$(losses <"$d/u$z.log")" \
        "$(cat "$d/a$z.log" "$d/b$z.log" | losses)"
    cmp -s "$d/u$z" "$d/r$z" && echo "ok: zero $z: the resumed run ends bitwise equal to the uninterrupted one" ||
        fail "zero $z: the final checkpoints of the resumed and the uninterrupted run differ"
    [ -f "$d/s$z.rank0-of-2" ] && [ -f "$d/s$z.rank1-of-2" ] && [ ! -e "$d/s$z" ] ||
        fail "zero $z: a sharded save should write s$z.rank0-of-2 and s$z.rank1-of-2 and nothing at s$z"
done
# the shard's metadata: rank, count, stage, range
n=$(sed -n 's/.* \([0-9]*\) parameters (.*/\1/p' "$d/u2.log")
grep -aq "\"rank\":\"0\",\"ranks\":\"2\",\"zero\":\"2\",\"begin\":\"0\"" "$d/s2.rank0-of-2" &&
    grep -aq "\"rank\":\"1\",\"ranks\":\"2\",\"zero\":\"2\",\"begin\":\"[0-9]*\",\"end\":\"$n\",\"n_params\":\"$n\"" \
        "$d/s2.rank1-of-2" && echo "ok: shard metadata" || fail "shard metadata (n_params $n)"

# full: gathered from 2 ranks, resumed anywhere
ref=$(losses <"$d/u3.log" | tail -n 3)
ran one && same_losses "full file from 2 ranks resumed on 1 process" "$ref" "$(losses <"$d/one.log")" &&
    close_to "1 process ends where 2 ranks do" "$d/one" "$d/u3"
ran four && same_losses "full file from 2 ranks resumed on 4 ranks (zero 2)" "$ref" "$(losses <"$d/four.log")" &&
    close_to "4 ranks end where 2 ranks do" "$d/four" "$d/u3"
ran ddp && same_losses "full file from fsdp resumed under ddp" "$ref" "$(losses <"$d/ddp.log")"
# 4 ranks take their shards of the file and gather them back: the same bytes
ran rt && { cmp -s "$d/full" "$d/rt" && echo "ok: 4 ranks scatter and gather the full file bitwise" ||
    fail "4 ranks that load and save at once changed the file"; }
[ ! -e "$d/rt.rank0-of-3" ] && grep -q "removed 3 file(s)" "$d/rt.log" && echo "ok: stale shards removed" ||
    fail "the stale shards of rt were not removed"

# refusals, by file name and reason
refused "another rank count" nranks "s3.rank0-of-4 is missing: the checkpoint $d/s3 was saved by 2 ranks"
refused "a missing shard" missing "the shard $d/missing/s3.rank1-of-2 is missing"
grep -q "rank 0: resuming from $d/missing/s3 failed on another rank" "$d/missing.log" ||
    fail "rank 0 did not say that another rank failed"
refused "a truncated shard" trunc "$d/trunc/s3.rank1-of-2 is truncated or padded"
refused "a garbage shard" garbage "$d/garbage/s3.rank1-of-2 is not a safetensors file"
refused "another rank's shard" renamed "$d/renamed/s3.rank1-of-2 holds rank 0 of 2 ranks"
refused "another range" range "$d/range/s3.rank1-of-2 holds elements"
refused "another shape" shape "$d/s3.rank0-of-2 was saved from another model"
refused "another optimizer" optim "$d/s3.rank0-of-2 holds the state of another optimizer (adamw)"
refused "sharded for one process" single "it is a sharded checkpoint; resume it with mpirun -np 2"
refused "sharded for DDP" ddpsh "which DDP cannot resume"
refused "both kinds at one path" both "both a full checkpoint $d/both/s3 and sharded files"
refused "sharded without fsdp" fmt "save-format sharded needs --dist fsdp"
exit $fails
