#!/bin/sh
# A program that ends leaving processes running (`sleep 300 &`, a recording
# worker): gtrace names them, passes a SIGTERM it gets on to them, writes the
# trace and dies of the signal; without a signal it waits --wait-leftovers
# seconds at most, then writes the trace and leaves them running.
. "$(dirname "$0")/capture_common.sh"

# wait_until WHAT CMD: polls CMD (a hang guard of 60 s, never a timing test)
wait_until() {
    i=0
    until eval "$2"; do
        i=$((i + 1))
        if [ $i -ge 1200 ]; then
            kill -KILL $gt $(cat left.pid 2>/dev/null) 2>/dev/null
            fail "$1 never happened: $(cat err.txt)"
        fi
        sleep 0.05
    done
}

# ends_within_guard: gtrace ($gt) ends on its own, else it is killed and the test fails
ends_within_guard() {
    wait_until "gtrace ending ($1)" "! kill -0 $gt 2>/dev/null"
    wait $gt
}

# 1. A leftover that records nothing; SIGTERM once the shell has ended.
"$GTRACE" -o s.sqlite sh -c 'echo $$ >sh.pid; sleep 300 & echo $! >left.pid; exit 0' >out.txt 2>err.txt &
gt=$!
wait_until "the shell starting" "[ -s sh.pid ] && [ -s left.pid ]"
wait_until "the shell ending" "! kill -0 $(cat sh.pid) 2>/dev/null"
left=$(cat left.pid)
kill -TERM $gt
ends_within_guard "after SIGTERM"
expect_eq "gtrace died of the SIGTERM it got (143)" 143 $?
cat err.txt
grep -q "leaving a process running: $left (" err.txt || fail "the leftover's pid is not named"
grep -q "$left ([a-z_]*) was ended by SIGTERM" err.txt || fail "what became of the leftover is not said"
kill -0 "$left" 2>/dev/null && { kill -KILL "$left"; fail "the leftover was not passed the SIGTERM"; }
echo "ok: the leftover got the SIGTERM and ended"
"$GTRACE" info s.sqlite >info.txt 2>&1 || fail "the trace cannot be read: $(cat info.txt)"
expect_eq "integrity" ok "$(q s.sqlite 'PRAGMA quick_check')"
expect_eq "the command line is in the trace" "sh" "$(q s.sqlite "SELECT substr(value, 1, 2) FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = 'command_line'")"
ls -a | grep -q gtrace-parts && fail "parts left behind: $(ls -a)"

# 2. A leftover that records NVTX ranges (the shell ends once it has).
N=500
# (the last run's pid files go before this one can write its own)
rm -f probe.txt sh.pid left.pid
"$GTRACE" -o n.sqlite sh -c "echo \$\$ >sh.pid; \"$PROBE\" counted $N count.bin >probe.txt & echo \$! >left.pid;
    until [ -s probe.txt ]; do sleep 0.05; done; exit 0" >out.txt 2>err.txt &
gt=$!
wait_until "the shell starting" "[ -s sh.pid ] && [ -s left.pid ]"
wait_until "the shell ending" "! kill -0 $(cat sh.pid) 2>/dev/null"
left=$(cat left.pid)
expect_eq "the leftover recorded" "emitted $N" "$(cat probe.txt)"
kill -TERM $gt
ends_within_guard "after SIGTERM, with a recording leftover"
expect_eq "gtrace died of the SIGTERM it got (143)" 143 $?
grep -q "leaving a process running: $left (" err.txt || fail "the leftover's pid is not named: $(cat err.txt)"
grep -q "$left ([a-z_]*) was ended by SIGTERM" err.txt || fail "what became of the leftover is not said: $(cat err.txt)"
kill -0 "$left" 2>/dev/null && { kill -KILL "$left"; fail "the recording leftover was not passed the SIGTERM"; }
expect_eq "integrity" ok "$(q n.sqlite 'PRAGMA quick_check')"
expect_eq "the leftover's ranges are in the trace" $N "$(nvtx_count n.sqlite counted 59)"
expect_eq "under the leftover's pid" "$left" "$(q n.sqlite "SELECT DISTINCT n.globalTid >> 24 & 16777215 FROM NVTX_EVENTS n WHERE $NT = 'counted'")"
"$GTRACE" info n.sqlite >info.txt 2>&1 || fail "the trace cannot be read: $(cat info.txt)"

# 3. The grace period: no signal; gtrace stops waiting, the leftover runs on
# and what it recorded until then is in the trace.
rm -f probe.txt left.pid
"$GTRACE" --wait-leftovers=1 -o g.sqlite sh -c "\"$PROBE\" counted $N count.bin >probe.txt & echo \$! >left.pid;
    until [ -s probe.txt ]; do sleep 0.05; done; exit 7" >out.txt 2>err.txt &
gt=$!
ends_within_guard "after its grace period"
expect_eq "the program's exit status" 7 $?
left=$(cat left.pid)
grep -q "stopped waiting after 1 s; still running: $left (capture_probe)" err.txt || fail "not said: $(cat err.txt)"
kill -0 "$left" 2>/dev/null || fail "the leftover did not keep running"
kill -KILL "$left"
echo "ok: the leftover kept running"
expect_eq "what it recorded before is in the trace" $N "$(nvtx_count g.sqlite counted 59)"
expect_eq "integrity" ok "$(q g.sqlite 'PRAGMA quick_check')"

# 4. Leftovers that end within the wait: gtrace waits for them, as before.
timeout 60 "$GTRACE" -o w.sqlite sh -c "\"$SAMPLES/nvtx_sigkill\" 20 300 & exit 0" >out.txt 2>err.txt
expect_eq "exit status" 0 $?
expect_eq "the ranges of a leftover that ended in time" 20 "$(nvtx_count w.sqlite before 59)"
expect_eq "and its last one" 1 "$(nvtx_count w.sqlite after 59)"

# 5. --wait-leftovers=0: not waited for at all; bad values refused.
timeout 60 "$GTRACE" --wait-leftovers=0 -o z.sqlite sh -c 'sleep 300 & echo $! >left.pid; exit 0' >out.txt 2>err.txt
expect_eq "exit status" 0 $?
grep -q "not waiting for it (--wait-leftovers=0)" err.txt || fail "not said: $(cat err.txt)"
kill -KILL "$(cat left.pid)" || fail "the leftover did not keep running"
for bad in -1 x 1.5 604801 ""; do
    "$GTRACE" --wait-leftovers="$bad" -o b.sqlite true >out.txt 2>err.txt
    expect_eq "--wait-leftovers=$bad refused" 2 $?
    grep -q "^gtrace: --wait-leftovers=$bad: expected seconds" err.txt || fail "message: $(cat err.txt)"
done
[ -e b.sqlite ] && fail "a trace was written after a bad option"

# 6. A SIGTERM while the program runs goes to it, then to what it left.
rm -f left.pid
"$GTRACE" -o f.sqlite sh -c 'sleep 300 & echo $! >left.pid; wait' >out.txt 2>err.txt &
gt=$!
wait_until "the shell starting its child" "[ -s left.pid ]"
left=$(cat left.pid)
kill -TERM $gt
ends_within_guard "after SIGTERM to the program"
expect_eq "exits as the program did (killed by SIGTERM: 143)" 143 $?
kill -0 "$left" 2>/dev/null && { kill -KILL "$left"; fail "the leftover was not passed the SIGTERM"; }
grep -q "$left ([a-z_]*) was ended by SIGTERM" err.txt || fail "not said: $(cat err.txt)"
expect_eq "integrity" ok "$(q f.sqlite 'PRAGMA quick_check')"
echo "all good"
