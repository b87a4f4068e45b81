#!/bin/sh
# What a fork child inherits from NVTX is still right in its own trace part:
# the parent's registered strings (their handles are the parent's), its
# categories (of a domain and of the default domain), its domain and its
# memory heap, used in a child, in a grandchild (forked after the child
# registered a string of its own) and in a second child forked after the
# parent registered more; each process's own strings whole. Nothing is
# dropped, nothing unresolved (samples/nvtx_fork_strings.c). What cannot be
# resolved is not written under a wrong name but dropped, counted and said:
# a handle no process made; names beyond what is kept for fork children.
. "$(dirname "$0")/capture_common.sh"
timeout 60 "$GTRACE" -o f.sqlite "$SAMPLES/nvtx_fork_strings" >out.txt 2>err.txt
expect_eq "exit status" 0 $?
expect_eq "program output" ok "$(cat out.txt)"
grep -q "unresolved\|dropped" err.txt && fail "the summary reports a loss: $(cat err.txt)"
expect_eq "processes" 4 "$(q f.sqlite 'SELECT count(*) FROM PROCESSES')"
expect_eq "no dropped events" 0 "$(q f.sqlite 'SELECT count(*) FROM GTRACE_DROPPED_EVENTS')"

# The process that pushed the range "role ROLE".
pid_of() {
    q f.sqlite "SELECT DISTINCT n.globalTid >> 24 FROM NVTX_EVENTS n WHERE n.text = 'role $1'"
}
# The events of process GLOBAL_PID (ranges, marks), in start order, one a line:
# "TYPE|NAME|CATEGORY NAME|DOMAIN NAME", both names as that process's own
# rows (NvtxCategory, NvtxDomainCreate) give them.
events_of() {
    q f.sqlite "SELECT n.eventType || '|' || $NT || '|' ||
        coalesce((SELECT group_concat(c.text) FROM NVTX_EVENTS c WHERE c.eventType = 33
                  AND c.category = n.category AND coalesce(c.domainId, 0) = coalesce(n.domainId, 0)
                  AND c.globalTid >> 24 = n.globalTid >> 24), '') || '|' ||
        coalesce((SELECT group_concat(d.text) FROM NVTX_EVENTS d WHERE d.eventType = 75
                  AND d.domainId = n.domainId AND d.globalTid >> 24 = n.globalTid >> 24), '')
        FROM NVTX_EVENTS n WHERE n.globalTid >> 24 = $1 AND n.eventType IN (34, 59, 60)
        ORDER BY n.start, n.\"end\" DESC"
}
nl='
'
check_events() {
    role=$1
    shift
    expected=""
    for e in "$@"; do expected="$expected${expected:+$nl}$e"; done
    gpid=$(pid_of "$role")
    [ -n "$gpid" ] || fail "no process pushed 'role $role'"
    got=$(events_of "$gpid")
    [ "$got" = "$expected" ] || fail "$role: the events are
$got
expected
$expected"
    echo "ok: $role: $(echo "$got" | wc -l) events, each named as it was"
}
check_events parent "59|role parent||" \
    "59|forward|compute|fork.domain" "59|Sequential#2 backward|compute|fork.domain" \
    "59|forward|compute|fork.domain" "59|parent after fork||fork.domain"
check_events child "59|role child||" \
    "59|forward|compute|fork.domain" "59|Sequential#2 backward|compute|fork.domain" \
    "34|Sequential#2 backward||fork.domain" "60|forward|compute|fork.domain" \
    "59|io|io|" "59|registered in the child||fork.domain"
check_events grandchild "59|role grandchild||" \
    "59|forward|compute|fork.domain" "59|registered in the child||fork.domain" \
    "59|registered in the grandchild||fork.domain"
check_events "second child" "59|role second child||" \
    "59|parent after fork||fork.domain" "59|Sequential#2 backward|compute|fork.domain"

# Registered strings stay registered strings (nsys's textId), in every process.
expect_eq "registered rows stored by textId" 0 "$(q f.sqlite "SELECT count(*) FROM NVTX_EVENTS n
    WHERE n.textId IS NULL AND n.text IN ('forward', 'Sequential#2 backward', 'parent after fork',
    'registered in the child', 'registered in the grandchild')")"
# Each process names its domain and categories once.
for role in parent child grandchild "second child"; do
    gpid=$(pid_of "$role")
    expect_eq "$role: its domain and categories" "33|3|compute,33|5|io,75|0|fork.domain" \
        "$(q f.sqlite "SELECT group_concat(x) FROM (SELECT n.eventType || '|' || coalesce(n.category, 0) || '|' || n.text x
                       FROM NVTX_EVENTS n WHERE n.globalTid >> 24 = $gpid AND n.eventType IN (33, 75) ORDER BY 1)")"
done

# The heap registered in the parent is the heap of the regions its
# descendants register in it, in their own parts (memory is per process).
heap_of() {
    gpid=$(pid_of "$1")
    q f.sqlite "SELECT m.heapId || '|' || m.bytes || '|' || s.value || '|' ||
        (SELECT count(*) FROM GTRACE_MEMORY_EVENTS r WHERE r.operation = 3 AND r.heapId = m.heapId
         AND r.globalTid >> 24 = $gpid)
        FROM GTRACE_MEMORY_EVENTS m JOIN StringIds s ON s.id = m.nameId
        WHERE m.operation = 0 AND m.globalTid >> 24 = $gpid"
}
heap=$(q f.sqlite "SELECT heapId FROM GTRACE_MEMORY_EVENTS WHERE operation = 0 ORDER BY start LIMIT 1")
expect_eq "parent: its heap" "$heap|1048576|parent heap|0" "$(heap_of parent)"
expect_eq "child: the parent's heap, 2 regions in it" "$heap|1048576|parent heap|2" "$(heap_of child)"
expect_eq "grandchild: the parent's heap, 1 region in it" "$heap|1048576|parent heap|1" "$(heap_of grandchild)"
expect_eq "second child: the parent's heap" "$heap|1048576|parent heap|0" "$(heap_of "second child")"
expect_eq "regions in a heap their process does not hold" 0 "$(q f.sqlite "SELECT count(*) FROM GTRACE_MEMORY_EVENTS r
    WHERE r.operation = 3 AND NOT EXISTS (SELECT 1 FROM GTRACE_MEMORY_EVENTS m WHERE m.operation = 0
    AND m.heapId = r.heapId AND m.globalTid >> 24 = r.globalTid >> 24)")"

# A string handle gtrace never made: its 3 events (a push/pop range, a mark,
# a start/end range) are dropped, counted, and said; the rest is written.
timeout 60 "$GTRACE" -o b.sqlite "$SAMPLES/nvtx_fork_strings" bogus >out.txt 2>err.txt
expect_eq "bogus handle: exit status (3: events lost)" 3 $?
expect_eq "bogus handle: program output" ok "$(cat out.txt)"
grep -q "3 NVTX events named a registered string that its string table does not hold" err.txt ||
    fail "the unresolved events are not said: $(cat err.txt)"
expect_eq "bogus handle: the events written" "role bogus,after bogus" \
    "$(q b.sqlite "SELECT group_concat(x) FROM (SELECT $NT x FROM NVTX_EVENTS n ORDER BY n.start)")"
expect_eq "bogus handle: dropped, counted" "nvtx|3" "$(q b.sqlite "SELECT kind || '|' || count FROM GTRACE_DROPPED_EVENTS")"

# More names than are kept for fork children: the child has each name it
# inherited or a count of it dropped, and it is said once.
N=5000
timeout 60 "$GTRACE" -o m.sqlite "$SAMPLES/nvtx_fork_strings" many $N >out.txt 2>err.txt
expect_eq "many names: exit status (3: events lost)" 3 $?
grep -q "more NVTX domains, categories and heaps than gtrace keeps for fork children" err.txt ||
    fail "the names a child cannot inherit are not said: $(cat err.txt)"
child=$(q m.sqlite "SELECT DISTINCT n.globalTid >> 24 FROM NVTX_EVENTS n WHERE n.text = 'role many child'")
named=$(q m.sqlite "SELECT count(*) FROM NVTX_EVENTS n WHERE n.eventType = 33 AND n.globalTid >> 24 = $child")
dropped=$(q m.sqlite "SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS WHERE globalPid >> 24 = $child")
[ "$named" -gt 0 ] && [ "$dropped" -gt 0 ] || fail "many names: the child named $named categories, dropped $dropped"
expect_eq "many names: the child's categories, named or dropped" $N $((named + dropped))
expect_eq "many names: the parent's categories" $N "$(q m.sqlite "SELECT count(*) FROM NVTX_EVENTS n WHERE n.eventType = 33 AND n.globalTid >> 24 != $child")"
expect_eq "many names: the names the child has are the parent's" 0 "$(q m.sqlite "SELECT count(*) FROM NVTX_EVENTS n
    WHERE n.eventType = 33 AND n.globalTid >> 24 = $child AND n.text != 'cat ' || n.category")"
echo "all good"
