#!/bin/sh
# The launcher killed (SIGKILL) mid-run leaves its parts in the hidden parts
# folder beside the output: `gtrace info` reads such a part, also one whose
# checkpoint was cut short (page 1 already counting pages that are still in
# the -wal only), and `gtrace recover DIR -o TRACE` makes the trace of them,
# with every event that was written. Bad folders and outputs are refused.
. "$(dirname "$0")/capture_common.sh"

# be32 FILE OFFSET: the big-endian 32-bit number there
be32() { od -An -v -t u1 -j "$2" -N 4 "$1" | awk '{ print (($1 * 256 + $2) * 256 + $3) * 256 + $4 }'; }

# rows PART: the ranges SQLite reads in a part (read-only: no checkpoint)
rows() { sqlite3 -readonly "$1" "SELECT count(*) FROM NVTX_EVENTS" 2>/dev/null || echo 0; }

N=3000000
"$GTRACE" -o l.sqlite "$PROBE" counted $N count.bin >out.txt 2>err.txt &
gt=$!
probe_counted $gt 1000 $N
dir=$(ls -d .gtrace-parts-* | head -n 1)
[ -n "$dir" ] || { kill -KILL $gt $prog; fail "no parts folder"; }
# Some batches committed (a hang guard, never a timing test).
i=0
while [ "$(rows "$dir"/*.sqlite)" -lt 1000 ]; do
    i=$((i + 1))
    [ $i -lt 1200 ] || { kill -KILL $gt $prog; fail "no batch was written"; }
    sleep 0.05
done
kill -KILL $gt
wait $gt
expect_eq "the launcher was killed" 137 $?
kill -KILL "$prog"
part=$(ls "$dir"/*.sqlite)
[ -s "$part-wal" ] || fail "the killed launcher's part has no -wal: $(ls -la "$dir")"
written=$(rows "$part")
echo "the part holds $written ranges"

# gtrace info on the folder says how to recover it.
"$GTRACE" info "$dir" >info.txt 2>&1
expect_eq "info on a parts folder" 1 $?
grep -q "gtrace recover $dir -o TRACE" info.txt || fail "no way to recover said: $(cat info.txt)"

# A checkpoint cut short, the way a kill leaves it: page 1 of the log's last
# commit (which counts every page, most of them only in the log) is already
# in the file, the pages after it are not.
cp "$part" cut.sqlite
cp "$part-wal" cut.sqlite-wal
page=$(be32 cut.sqlite-wal 8)
salt1=$(be32 cut.sqlite-wal 16)
salt2=$(be32 cut.sqlite-wal 20)
frame=$((24 + page))
n_frames=$((($(stat -c %s cut.sqlite-wal) - 32) / frame))
f=0
page1=-1
last_page1=-1
while [ $f -lt $n_frames ]; do
    at=$((32 + f * frame))
    [ "$(be32 cut.sqlite-wal $((at + 8)))" = "$salt1" ] && [ "$(be32 cut.sqlite-wal $((at + 12)))" = "$salt2" ] || break
    [ "$(be32 cut.sqlite-wal $at)" = 1 ] && page1=$f
    [ "$(be32 cut.sqlite-wal $((at + 4)))" != 0 ] && last_page1=$page1 # a commit
    f=$((f + 1))
done
[ $last_page1 -ge 0 ] || fail "no committed page 1 in the log"
dd if=cut.sqlite-wal of=cut.sqlite bs="$page" count=1 iflag=skip_bytes skip=$((32 + last_page1 * frame + 24)) \
    conv=notrunc 2>/dev/null || fail "dd"
claimed=$(($(be32 cut.sqlite 28) * page))
size=$(stat -c %s cut.sqlite)
echo "page 1 counts $claimed bytes; the file has $size"
[ "$claimed" -gt "$size" ] || fail "the cut checkpoint is not shorter than its page 1 says"
"$GTRACE" info cut.sqlite >info.txt 2>&1 || fail "info refused the part: $(cat info.txt)"
expect_eq "info counts what SQLite reads" "$(rows cut.sqlite)" "$(awk '$1 == "nvtx" { print $2 }' info.txt)"
expect_eq "and what the part holds" "$written" "$(rows cut.sqlite)"

# A part really cut short (no log beside it) is still refused as truncated.
head -c "$size" cut.sqlite >short.sqlite
"$GTRACE" info short.sqlite >info.txt 2>&1
expect_eq "a truncated file without a log refused" 1 $?
grep -q "short.sqlite is truncated" info.txt || fail "message: $(cat info.txt)"

# Bad uses of recover: nothing changes in the folder.
before=$(ls -l --time-style=full-iso "$dir" | md5sum)
"$GTRACE" recover "$dir" >err.txt 2>&1
expect_eq "recover without -o" 2 $?
"$GTRACE" recover nowhere -o r.sqlite >err.txt 2>&1
expect_eq "recover of a missing folder" 1 $?
grep -q "nowhere" err.txt || fail "the folder is not named: $(cat err.txt)"
mkdir empty
"$GTRACE" recover empty -o r.sqlite >err.txt 2>&1
expect_eq "recover of a folder without parts" 1 $?
grep -q "empty holds no parts" err.txt || fail "message: $(cat err.txt)"
"$GTRACE" recover count.bin -o r.sqlite >err.txt 2>&1
expect_eq "recover of a file" 1 $?
grep -q "count.bin: not a directory" err.txt || fail "message: $(cat err.txt)"
echo keep >r.sqlite
"$GTRACE" recover "$dir" -o r.sqlite >err.txt 2>&1
expect_eq "recover over an existing file without --force" 1 $?
expect_eq "the existing file is kept" keep "$(cat r.sqlite)"
expect_eq "the parts are untouched" "$before" "$(ls -l --time-style=full-iso "$dir" | md5sum)"
[ -e l.sqlite ] && fail "the killed launcher wrote a trace"

# The trace of the parts, with every range that was written.
"$GTRACE" recover "$dir" -o r.sqlite --force >out.txt 2>err.txt
expect_eq "recover" 0 $?
cat out.txt
expect_eq "every range written is in the recovered trace" "$written" "$(nvtx_count r.sqlite counted 59)"
expect_eq "integrity" ok "$(q r.sqlite 'PRAGMA quick_check')"
expect_eq "its command line" "$PROBE counted $N count.bin" "$(q r.sqlite "SELECT value FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = 'command_line'")"
expect_eq "its root pid" "$prog" "$(q r.sqlite "SELECT value FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = 'root_pid'")"
"$GTRACE" info r.sqlite >info.txt 2>&1 || fail "the recovered trace cannot be read: $(cat info.txt)"
[ -e "$dir" ] && fail "the parts folder was not removed: $(ls -la "$dir")"

# A folder a running gtrace still writes is refused.
rm -f count.bin
"$GTRACE" -o live.sqlite "$PROBE" counted 100000 count.bin >out.txt 2>err.txt &
gt=$!
probe_counted $gt 100 100000
live=$(ls -d .gtrace-parts-* | head -n 1)
i=0
while ! ls "$live"/*.sqlite-shm >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -lt 1200 ] || { kill -KILL $gt $prog; fail "no part was opened"; }
    sleep 0.05
done
"$GTRACE" recover "$live" -o stolen.sqlite >rec.txt 2>&1
rc=$?
kill -TERM "$prog"
wait $gt
expect_eq "recover of a folder still written" 1 $rc
grep -q "is still being written by process $gt" rec.txt || fail "message: $(cat rec.txt)"
[ -e stolen.sqlite ] && fail "a trace was made of a live folder"
expect_eq "the running gtrace still wrote its trace" 0 "$(q live.sqlite 'SELECT count(*) = 0 FROM NVTX_EVENTS')"
echo "all good"
