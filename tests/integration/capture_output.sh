#!/bin/sh
# gtrace writes its trace only to a regular file, and replaces only a
# regular file (with --force): a device, a FIFO, a directory or a symbolic
# link to one or to nothing named by -o is refused before the program runs
# and left as it was (output_audit.sh: a link to a regular file).
# An interrupted gtrace leaves no temporary file and no parts directory.
. "$(dirname "$0")/capture_common.sh"
# refused WHAT PATH [--force]: gtrace -o PATH exits 1 and says why
refused() {
    what=$1; path=$2; shift 2
    "$GTRACE" -o "$path" "$@" "$SAMPLES/exit_with" 0 >out.txt 2>err.txt
    expect_eq "exit status with -o $what $*" 1 $?
    grep -q "not a regular file" err.txt || fail "-o $what $*: $(cat err.txt)"
    [ ! -s out.txt ] || fail "the program ran: $(cat out.txt)"
}
for force in "" --force; do
    refused /dev/full /dev/full $force
    [ -c /dev/full ] || fail "/dev/full is no longer a character device"
    mkfifo fifo.sqlite
    refused "a FIFO" fifo.sqlite $force
    [ -p fifo.sqlite ] || fail "the FIFO was replaced: $(ls -l fifo.sqlite)"
    mkdir dir.sqlite
    refused "a directory" dir.sqlite $force
    [ -d dir.sqlite ] || fail "the directory was replaced"
    ln -s fifo.sqlite link.sqlite
    refused "a symbolic link to a FIFO" link.sqlite $force
    ln -s nothing-here dangling.sqlite
    refused "a dangling symbolic link" dangling.sqlite $force
    [ -L link.sqlite ] && [ -p fifo.sqlite ] && [ -L dangling.sqlite ] && [ ! -e nothing-here ] ||
        fail "a link or what it names changed"
    rm -rf fifo.sqlite dir.sqlite link.sqlite dangling.sqlite
done
# a regular file (last run's trace) is replaced only with --force
echo "last run" >old.sqlite
"$GTRACE" -o old.sqlite "$SAMPLES/exit_with" 0 >out.txt 2>err.txt
expect_eq "exit status with -o an existing trace" 1 $?
grep -q "old.sqlite exists (use --force to replace it)" err.txt || fail "-o an existing trace: $(cat err.txt)"
expect_eq "the existing trace, kept" "last run" "$(cat old.sqlite)"
rm -f old.sqlite
ls -a | grep -q gtrace-parts && fail "a parts directory was left behind: $(ls -a)"

# SIGTERM to gtrace once the program is done, while it assembles the parts
# of 20 processes (or, should it come later, once it has finished): gtrace
# dies of it and leaves nothing of its own behind.
"$GTRACE" -o t.sqlite sh -c "for i in \$(seq 20); do \"$PROBE\" _exit 20000 & done; wait" >out.txt 2>err.txt &
gt=$!
i=0
while [ "$(wc -l <out.txt)" -lt 20 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
# Once none of its processes is left, gtrace assembles.
while pgrep -P $gt >/dev/null && [ $i -lt 3000 ]; do sleep 0.02; i=$((i + 1)); done
kill -TERM $gt
wait $gt
expect_eq "exit status of an interrupted gtrace" 143 $?
ls -a | grep -q gtrace-parts && fail "a parts directory was left behind: $(ls -a)"
ls -a | grep -q '\.tmp' && fail "a temporary file was left behind: $(ls -a)"
if [ -e t.sqlite ]; then
    "$GTRACE" info t.sqlite >/dev/null || fail "an interrupted gtrace left a damaged trace"
fi

# -o with the job rank (%r), the launcher's pid (%p) and %%: one trace per rank.
env -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID OMPI_COMM_WORLD_RANK=3 "$GTRACE" -o 'rank.%r.%%.sqlite' "$PROBE" _exit 5 >out.txt 2>err.txt
expect_eq "exit status with %r" 0 $?
expect_eq "ranges in the rank's trace" 5 "$(nvtx_count 'rank.3.%.sqlite' quick 59)"
env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK SLURM_PROCID=1 "$GTRACE" -o 'pid.%p.sqlite' "$PROBE" _exit 5 >out.txt 2>err.txt
expect_eq "exit status with %p" 0 $?
[ "$(ls pid.*.sqlite | wc -l)" -eq 1 ] || fail "no trace named after gtrace's pid: $(ls)"
env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID "$GTRACE" -o 'none.%r.sqlite' "$PROBE" _exit 5 >out.txt 2>err.txt
[ $? -ne 0 ] || fail "%r without a job rank was accepted"
grep -q "job rank" err.txt || fail "no word of the missing rank: $(cat err.txt)"
ls none.* >/dev/null 2>&1 && fail "a trace was written without a rank: $(ls)"
echo "all good"
