#!/bin/sh
# NVTX features, each with the count and values samples/nvtx_features.c
# records: domains, categories, colors, payloads, marks, registered strings,
# start/end ranges (one ended on another thread), the NVTX memory API.
. "$(dirname "$0")/capture_common.sh"
"$GTRACE" -o f.sqlite "$SAMPLES/nvtx_features" >out.txt 2>err.txt
expect_eq "exit status" 0 $?
expect_eq "program output" ok "$(cat out.txt)"
T=f.sqlite
expect_eq "domain created" 1 "$(nvtx_count $T gt.sample 75)"
dom=$(q $T "SELECT n.domainId FROM NVTX_EVENTS n WHERE $NT = 'gt.sample'")
[ -n "$dom" ] && [ "$dom" != 0 ] || fail "the domain has no id"
expect_eq "category named in the domain" "7|$dom" "$(q $T "SELECT n.category, n.domainId FROM NVTX_EVENTS n WHERE $NT = 'io' AND n.eventType = 33")"
expect_eq "domain ranges: payloads" "10,20,30" "$(q $T "SELECT group_concat(int64Value) FROM (SELECT int64Value FROM NVTX_EVENTS n WHERE $NT = 'domain-range' AND n.eventType = 59 AND n.domainId = $dom AND n.category = 7 ORDER BY start)")"
expect_eq "domain ranges: color" "3" "$(q $T "SELECT count(*) FROM NVTX_EVENTS n WHERE $NT = 'domain-range' AND n.color = 4294901760")"
expect_eq "marks (ASCII and wide)" 2 "$(nvtx_count $T tick 34)"
expect_eq "mark with a double payload" "2.5" "$(q $T "SELECT doubleValue FROM NVTX_EVENTS n WHERE $NT = 'payload-mark' AND n.eventType = 34")"
expect_eq "registered-string ranges" 4 "$(nvtx_count $T registered 59)"
expect_eq "a long message, cut" "1|1023" "$(q $T "SELECT count(*), max(length($NT)) FROM NVTX_EVENTS n WHERE $NT LIKE 'LLLL%' AND n.eventType = 59 AND n.domainId = 0")"
expect_eq "a range with a category, and one nested in it" "3|59|0|1" "$(q $T "SELECT o.category, o.eventType, coalesce(i.category, 0), count(*) FROM NVTX_EVENTS o JOIN NVTX_EVENTS i ON i.start >= o.start AND i.end <= o.end AND i.globalTid = o.globalTid WHERE coalesce(o.text, '') = 'with-category' AND coalesce(i.text, '') = 'nested'")"
expect_eq "start/end range ended on another thread" 1 "$(q $T "SELECT count(*) FROM NVTX_EVENTS n WHERE $NT = 'handoff' AND n.eventType = 60 AND n.endGlobalTid IS NOT NULL AND n.endGlobalTid != n.globalTid AND n.end > n.start")"
expect_eq "start/end range ended on its thread" "1|" "$(q $T "SELECT count(*), max(n.endGlobalTid) FROM NVTX_EVENTS n WHERE $NT = 'local' AND n.eventType = 60 AND n.end >= n.start")"
# the NVTX memory API
M="SELECT count(*) FROM GTRACE_MEMORY_EVENTS WHERE operation ="
expect_eq "heap registered" "1048576|pool|1" "$(q $T "SELECT m.bytes, s.value, m.memoryType FROM GTRACE_MEMORY_EVENTS m JOIN StringIds s ON s.id = m.nameId WHERE m.operation = 0")"
heap=$(q $T "SELECT heapId FROM GTRACE_MEMORY_EVENTS WHERE operation = 0")
base=$(q $T "SELECT address FROM GTRACE_MEMORY_EVENTS WHERE operation = 0")
expect_eq "regions registered in the heap" "3|28672" "$(q $T "SELECT count(*), sum(bytes) FROM GTRACE_MEMORY_EVENTS WHERE operation = 3 AND heapId = $heap")"
expect_eq "region offsets" "0,4096,12288" "$(q $T "SELECT group_concat(o) FROM (SELECT address - $base o FROM GTRACE_MEMORY_EVENTS WHERE operation = 3 ORDER BY address)")"
expect_eq "region resized" "0|6144" "$(q $T "SELECT address - $base, bytes FROM GTRACE_MEMORY_EVENTS WHERE operation = 4")"
expect_eq "region named" "4096|blockB" "$(q $T "SELECT m.address - $base, s.value FROM GTRACE_MEMORY_EVENTS m JOIN StringIds s ON s.id = m.nameId WHERE m.operation = 6")"
expect_eq "regions unregistered" "0,4096" "$(q $T "SELECT group_concat(o) FROM (SELECT address - $base o FROM GTRACE_MEMORY_EVENTS WHERE operation = 5 ORDER BY address)")"
expect_eq "memory events in the domain" 8 "$(q $T "SELECT count(*) FROM GTRACE_MEMORY_EVENTS WHERE domainId = $dom")"

# what programs mix that the sample does not (capture_probe attributes)
"$GTRACE" -o a.sqlite "$PROBE" attributes >out.txt 2>err.txt
expect_eq "attributes: exit status" 0 $?
A=a.sqlite
# a pop closes its own domain's range, not the one on top of the stack
expect_eq "two domains closed out of order" "a-outer,b-inner" "$(q $A "SELECT group_concat(t) FROM (SELECT $NT t FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.domainId != 0 ORDER BY n.end)")"
expect_eq "each range in its domain" "2" "$(q $A "SELECT count(DISTINCT n.domainId) FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.domainId != 0")"
# nsys writes a color only of a known type (ARGB)
expect_eq "a color of unknown type" "none" "$(q $A "SELECT coalesce(n.color, 'none') FROM NVTX_EVENTS n WHERE $NT = 'no-color-type'")"
# SQLite's INTEGER holds the uint64's 64 bits: 2^63 + 5 reads as -(2^63) + 5
expect_eq "a uint64 payload" "-9223372036854775803" "$(q $A "SELECT n.uint64Value FROM NVTX_EVENTS n WHERE $NT = 'u64-mark'")"
# a thread named by another (main names its worker): the name is the worker's
expect_eq "a thread named by another" 1 "$(q $A "SELECT count(*) FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId WHERE s.value = 'loader-0' AND t.globalTid = (SELECT n.globalTid FROM NVTX_EVENTS n WHERE $NT = 'worker-range')")"

# Without the TSC (GTRACE_NO_TSC; a machine whose TSC is not invariant) the
# stamps are CLOCK_MONOTONIC: on the trace's zero too, inside the run.
GTRACE_NO_TSC=1 "$GTRACE" -o m.sqlite "$PROBE" attributes >out.txt 2>err.txt
expect_eq "no TSC: exit status" 0 $?
end=$(q m.sqlite "SELECT value FROM GTRACE_RUN_CONFIG WHERE key = 'clock_end_ns' AND globalPid = 0")
expect_eq "no TSC: events inside the run" "5|1" "$(q m.sqlite "SELECT count(*), min(n.start) >= 0 AND max(coalesce(n.end, n.start)) <= $end FROM NVTX_EVENTS n WHERE n.eventType IN (34, 59)")"
echo "all good"
