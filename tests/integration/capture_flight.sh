#!/bin/sh
# --flight-recorder: only the last part of a run is kept, and a trace of it
# is written at the end (exit or crash), at a traced process's first
# out-of-memory mark, and on SIGUSR2 to gtrace or to the traced process
# (the first dump at -o, the next numbered: TRACE.2.sqlite, ...).
#  - a seeded trainer run outgrows a small recorder: the dump starts at a
#    later step, ends at the last, and the memory live set at its first
#    step equals a whole-run trace's at that step (blocks and heaps
#    allocated before the window are in it);
#  - dumps on SIGUSR2 to gtrace and to the program, then the last one;
#  - a dump when the program aborts; one at the trainer's OOM and at its exit;
#  - bad values and --capture with it are refused in one line.
. "$(dirname "$0")/capture_common.sh"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
[ -x "$TRAINER" ] || { echo "missing $TRAINER"; exit 99; }

# config TRACE KEY: a run entry of the whole run
config() { q "$1" "SELECT value FROM GTRACE_RUN_CONFIG WHERE globalPid = 0 AND key = '$2'"; }

# ---- bad values ---------------------------------------------------------
for bad in "--flight-recorder=abc" "--flight-recorder=0" "--flight-recorder=0s" "--flight-recorder=30" \
           "--flight-recorder=-5s" "--flight-recorder=30s --capture=steps:1-2"; do
    # shellcheck disable=SC2086 # the words are options
    "$GTRACE" $bad -o bad.sqlite "$SAMPLES/exit_with" 0 >out.txt 2>err.txt
    rc=$?
    [ "$rc" -ne 0 ] || fail "$bad: accepted"
    expect_eq "$bad: lines said" 1 "$(wc -l <err.txt)"
    [ ! -e bad.sqlite ] || fail "$bad: a trace was written"
done

# ---- a run longer than the recorder -------------------------------------
STEPS=30
"$GTRACE" -o all.sqlite "$TRAINER" --model gpt-tiny --steps $STEPS --seed 1 --eval-every 0 >/dev/null 2>err.txt
expect_eq "whole run: exit status" 0 $?
"$GTRACE" -o fl.sqlite --flush-ms=5 --flight-recorder=256K "$TRAINER" --model gpt-tiny --steps $STEPS --seed 1 \
    --eval-every 0 >/dev/null 2>err.txt
expect_eq "recorder: exit status" 0 $?
grep -q "flight recorder: dump 1 (exit 0): fl.sqlite" err.txt || fail "the dump is not said: $(cat err.txt)"
expect_eq "why the dump was written" "exit 0" "$(config fl.sqlite flight_dump)"
expect_eq "the recorder's size" "256K" "$(config fl.sqlite flight_recorder)"
w=$(config fl.sqlite flight_window_start_ns)
[ "${w:-0}" -gt 0 ] || fail "nothing fell out of the recorder (window start '$w')"
first=$(q fl.sqlite "SELECT min(CAST(substr(text, 6) AS INTEGER)) FROM NVTX_EVENTS
                     WHERE text LIKE 'step %' AND start >= $w")
[ -n "$first" ] && [ "$first" -gt 0 ] || fail "the dump's first whole step is '$first': early data was kept"
expect_eq "the last step is in the dump" 1 "$(nvtx_count fl.sqlite "step $((STEPS - 1))")"
expect_eq "steps before the window are not" 0 "$(q fl.sqlite "SELECT count(*) FROM NVTX_EVENTS
    WHERE text = 'step 0'")"
n_all=$(q all.sqlite "SELECT count(*) FROM NVTX_EVENTS")
n_fl=$(q fl.sqlite "SELECT count(*) FROM NVTX_EVENTS")
[ "$n_fl" -lt "$n_all" ] || fail "the dump holds $n_fl NVTX events, the whole run $n_all"
echo "ok: the dump starts at step $first, $n_fl of $n_all NVTX events"

# live TRACE STEP REGISTER UNREGISTER: "bytes|name" of what is registered and
# not unregistered when step STEP starts (capture_window_memory.sh's query).
# A block's name is its latest naming since its registration; a heap's, its
# registration's: a naming at a heap's first address names a block there
# (the trainer's per-step "block gradients"), which may be long freed, and
# whether that naming is still in the window depends on where it begins.
live() {
    q "$1" "WITH t AS (SELECT min(start) AS t FROM NVTX_EVENTS WHERE text = 'step $2'),
        r AS (SELECT m.start, m.heapId, m.address, m.bytes FROM GTRACE_MEMORY_EVENTS m, t
              WHERE m.operation = $3 AND m.start < t.t)
        SELECT coalesce((SELECT z.bytes FROM GTRACE_MEMORY_EVENTS z, t WHERE z.operation = 4
                         AND z.address = r.address AND z.start >= r.start AND z.start < t.t
                         ORDER BY z.start DESC LIMIT 1), r.bytes) || '|' ||
               coalesce((SELECT s.value FROM GTRACE_MEMORY_EVENTS n JOIN StringIds s ON s.id = n.nameId, t
                         WHERE (n.operation = 6 AND $3 = 3 OR n.operation = $3 AND n.heapId = r.heapId) AND n.address = r.address
                         AND n.start >= r.start AND n.start < t.t ORDER BY n.start DESC LIMIT 1), '')
        FROM r, t WHERE NOT EXISTS (SELECT 1 FROM GTRACE_MEMORY_EVENTS u WHERE u.operation = $4
              AND ($3 = 0 AND u.heapId = r.heapId OR $3 = 3 AND u.address = r.address)
              AND u.start >= r.start AND u.start < t.t)
        ORDER BY 1"
}
blocks_all=$(live all.sqlite "$first" 3 5)
n=$(printf '%s\n' "$blocks_all" | grep -c .)
[ "$n" -gt 0 ] || fail "no block is live when step $first starts in the whole-run trace"
expect_eq "blocks live when step $first starts ($n)" "$blocks_all" "$(live fl.sqlite "$first" 3 5)"
heaps_all=$(live all.sqlite "$first" 0 1)
[ -n "$heaps_all" ] || fail "no heap is live when step $first starts"
expect_eq "heaps live when step $first starts" "$heaps_all" "$(live fl.sqlite "$first" 0 1)"
# its state at the step's peak, the time left out (the runs' clocks differ)
state() { "$GTRACE" memory "$1" --step "$first" 2>&1 | grep "allocated" | head -n 1 | sed 's/ at [0-9]* ns//'; }
a_all=$(state all.sqlite)
a_fl=$(state fl.sqlite)
[ -n "$a_all" ] || fail "gtrace memory --step $first says nothing allocated"
expect_eq "gtrace memory --step $first: allocated" "$a_all" "$a_fl"

# ---- dumps on SIGUSR2, then the last one --------------------------------
"$GTRACE" -o sig.sqlite --flight-recorder=1M "$PROBE" counted 1000 count.bin >out.txt 2>err.txt &
gt=$!
probe_counted $gt 1000 1000
# wait_file FILE: up to 20 s for a dump to be in place
wait_file() {
    i=0
    while [ ! -s "$1" ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i + 1)); done
    [ -s "$1" ] || { kill -9 "$gt"; fail "no $1: $(cat err.txt)"; }
}
kill -USR2 "$gt"
wait_file sig.sqlite
kill -USR2 "$prog"
wait_file sig.2.sqlite
kill -TERM "$gt"
wait "$gt"
expect_eq "gtrace dies of the program's SIGTERM" 143 $?
expect_eq "dump 1: why" "SIGUSR2" "$(config sig.sqlite flight_dump)"
expect_eq "dump 1: every range" 1000 "$(nvtx_count sig.sqlite counted)"
expect_eq "dump 2 (asked by the program): why" "SIGUSR2" "$(config sig.2.sqlite flight_dump)"
expect_eq "dump 2: every range" 1000 "$(nvtx_count sig.2.sqlite counted)"
expect_eq "dump 3 (the end): why" "SIGTERM" "$(config sig.3.sqlite flight_dump)"
expect_eq "dump 3: every range" 1000 "$(nvtx_count sig.3.sqlite counted)"
[ ! -e sig.4.sqlite ] || fail "a fourth dump"

# ---- a crash ------------------------------------------------------------
"$GTRACE" -o crash.sqlite --flight-recorder=30s "$SAMPLES/nvtx_crash" abort 50 >/dev/null 2>err.txt
expect_eq "gtrace dies of the program's SIGABRT" 134 $?
expect_eq "crash: why" "SIGABRT" "$(config crash.sqlite flight_dump)"
expect_eq "crash: the ranges before it" 50 "$(nvtx_count crash.sqlite doomed)"
expect_eq "crash: its last mark" 1 "$(nvtx_count crash.sqlite "last words")"

# ---- out of memory ------------------------------------------------------
"$GTRACE" -o oom.sqlite --flight-recorder=30s "$TRAINER" --steps 3 --eval-every 0 --batch 64 --mem-limit 64M \
    >/dev/null 2>err.txt
expect_eq "OOM: the trainer's exit status" 1 $?
expect_eq "OOM: the first dump's why" "out of memory" "$(config oom.sqlite flight_dump)"
expect_eq "OOM: the last dump's why" "exit 1" "$(config oom.2.sqlite flight_dump)"
"$GTRACE" report oom.sqlite >report.txt 2>&1 || fail "report of the OOM dump failed: $(cat report.txt)"
grep -q "^Out of memory" report.txt || fail "the OOM dump has no Out of memory section: $(cat report.txt)"
echo "all good"
