#!/bin/sh
# Memory in a capture window: the NVTX memory API's heaps and regions (the
# trainer's caching allocator announces its blocks so) are recorded all run
# long, so that a window's trace holds every block allocated before it
# opened: a whole-run trace and a steps:4-5 trace of the same seeded run
# agree on every block (size, name) and heap live when step 4 starts.
. "$(dirname "$0")/capture_common.sh"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
[ -x "$TRAINER" ] || { echo "missing $TRAINER"; exit 99; }
"$GTRACE" -o all.sqlite "$TRAINER" --model gpt-tiny --steps 8 --seed 1 >/dev/null 2>err.txt
expect_eq "whole run: exit status" 0 $?
"$GTRACE" -o win.sqlite --capture=steps:4-5 "$TRAINER" --model gpt-tiny --steps 8 --seed 1 >/dev/null 2>err.txt
expect_eq "window: exit status" 0 $?
expect_eq "window: opens at step 4" "step 4" \
    "$(q win.sqlite "SELECT text FROM NVTX_EVENTS WHERE text LIKE 'step %' ORDER BY start LIMIT 1")"

# live TRACE REGISTER UNREGISTER: "bytes|name" of what is registered and not
# unregistered before step 4 starts (addresses differ between runs); a
# region's size is its last resize (operation 4), its name its last naming.
live() {
    q "$1" "WITH t AS (SELECT min(start) AS t FROM NVTX_EVENTS WHERE text = 'step 4'),
        r AS (SELECT m.start, m.heapId, m.address, m.bytes FROM GTRACE_MEMORY_EVENTS m, t
              WHERE m.operation = $2 AND m.start < t.t)
        SELECT coalesce((SELECT z.bytes FROM GTRACE_MEMORY_EVENTS z, t WHERE $4 AND z.operation = 4
                         AND z.heapId = r.heapId AND z.address = r.address AND z.start >= r.start AND z.start < t.t
                         ORDER BY z.start DESC LIMIT 1), r.bytes) || '|' ||
               coalesce((SELECT s.value FROM GTRACE_MEMORY_EVENTS n JOIN StringIds s ON s.id = n.nameId, t
                         WHERE n.operation IN ($2, 6) AND n.heapId = r.heapId AND n.address = r.address
                         AND n.start >= r.start AND n.start < t.t ORDER BY n.start DESC LIMIT 1), '')
        FROM r, t WHERE NOT EXISTS (SELECT 1 FROM GTRACE_MEMORY_EVENTS u WHERE u.operation = $3
              AND u.heapId = r.heapId AND ($2 = 0 OR u.address = r.address) AND u.start >= r.start AND u.start < t.t)
        ORDER BY 1"
}
blocks_all=$(live all.sqlite 3 5 1)
blocks_win=$(live win.sqlite 3 5 1)
n=$(printf '%s\n' "$blocks_all" | grep -c .)
[ "$n" -gt 0 ] || fail "no block is live when step 4 starts in the whole-run trace"
expect_eq "blocks live at the window's start ($n)" "$blocks_all" "$blocks_win"
heaps_all=$(live all.sqlite 0 1 0)
[ -n "$heaps_all" ] || fail "no heap is live when step 4 starts"
expect_eq "heaps live at the window's start" "$heaps_all" "$(live win.sqlite 0 1 0)"
echo "all good"
