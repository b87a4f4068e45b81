#!/bin/sh
# sched_wait.sh: the scheduler's account a trace keeps of each process
# (sched.run_ns, sched.wait_ns, sched.samples in GTRACE_RUN_CONFIG), on a
# CPU-bound program (sched_spin): present, with time on a CPU; pinned to one
# CPU alone, it waits little; pinned beside a busy loop on the same CPU, it
# waits about half its time; and gtrace diff leaves that run out as busy with
# the evidence. Skipped (77) where the kernel keeps no schedstat or there is
# no taskset.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
SPIN="$GT_TOP_BUILDDIR/tests/integration/sched_spin"
key() { q "$1" "SELECT sum(CAST(value AS INTEGER)) FROM GTRACE_RUN_CONFIG WHERE globalPid != 0 AND key = '$2'"; }

"$GTRACE" -o plain.sqlite "$SPIN" 10 50 > out.txt 2> err.txt || fail "recording: $(cat err.txt)"
if [ ! -r "/proc/$$/task/$$/schedstat" ]; then
    expect_eq "keys without schedstat" 0 "$(q plain.sqlite "SELECT count(*) FROM GTRACE_RUN_CONFIG WHERE key LIKE 'sched.%'")"
    echo "skip: no /proc/PID/task/TID/schedstat (a kernel without schedstats)"
    exit 77
fi
for k in sched.run_ns sched.wait_ns sched.samples; do
    expect_eq "$k per process" 1 "$(q plain.sqlite "SELECT count(*) FROM GTRACE_RUN_CONFIG WHERE globalPid != 0 AND key = '$k'")"
done
[ "$(key plain.sqlite sched.run_ns)" -gt 0 ] || fail "sched.run_ns is not above 0: $(key plain.sqlite sched.run_ns)"
[ "$(key plain.sqlite sched.samples)" -ge 1 ] || fail "no samples"
echo "ok: run_ns $(key plain.sqlite sched.run_ns), wait_ns $(key plain.sqlite sched.wait_ns), $(key plain.sqlite sched.samples) samples"

command -v taskset > /dev/null 2>&1 || { echo "skip: taskset is needed"; exit 77; }
taskset -c 0 true 2> /dev/null || { echo "skip: cannot pin to CPU 0"; exit 77; }
# share TRACE: the per-mille of the threads' CPU time that was waiting for one
share() { q "$1" "SELECT CAST(1000 * sum(CASE key WHEN 'sched.wait_ns' THEN CAST(value AS REAL) END) /
                  sum(CAST(value AS REAL)) AS INTEGER) FROM GTRACE_RUN_CONFIG
                  WHERE globalPid != 0 AND key IN ('sched.run_ns', 'sched.wait_ns')"; }
# the traced program alone is pinned (through taskset's exec), not gtrace's collector
"$GTRACE" -o alone.sqlite taskset -c 0 "$SPIN" 20 50 > out.txt 2> err.txt || fail "recording alone: $(cat err.txt)"
"$GTRACE" -o alone2.sqlite taskset -c 0 "$SPIN" 20 50 > out.txt 2> err.txt || fail "recording alone: $(cat err.txt)"
taskset -c 0 sh -c 'while :; do :; done' &
busy=$!
trap 'kill "$busy" 2> /dev/null; rm -rf "$WORK"' EXIT # never left spinning
"$GTRACE" -o beside.sqlite taskset -c 0 "$SPIN" 20 50 > out.txt 2> err.txt
rc=$?
kill "$busy"
[ "$rc" = 0 ] || fail "recording beside a busy loop: $(cat err.txt)"
a=$(share alone.sqlite) b=$(share beside.sqlite)
echo "waiting for a CPU: alone ${a}/1000, beside a busy loop on its CPU ${b}/1000"
[ "$b" -gt 350 ] || fail "beside a busy loop it waited only ${b}/1000 of its time"
[ "$((b - a))" -gt 150 ] || fail "it waited ${b}/1000 beside a busy loop and ${a}/1000 alone"
echo "ok: waits more beside a busy loop"

"$GTRACE" diff alone.sqlite beside.sqlite -- alone2.sqlite alone.sqlite > diff.txt || fail "gtrace diff: $(cat diff.txt)"
grep -q "^          beside.sqlite (20 steps.*; left out: a busier machine, .*, waited for a CPU .* of its time, against .* for the side's fastest run)" diff.txt ||
    fail "the busy run and its evidence: $(head -n 6 diff.txt)"
echo "ok: $(grep beside.sqlite diff.txt)"
echo "all good"
