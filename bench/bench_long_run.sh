#!/bin/sh
# bench_long_run.sh: a long run recorded three ways: whole, with a 10-step
# capture window, and with a 30 s flight recorder (issue #31, item 4).
#   bench/bench_long_run.sh [SECONDS [RATE [ROUNDS]]]   (from a build directory)
# The program (built here from the source below) emits RATE NVTX push/pop
# ranges a second for SECONDS, in steps of 20,000 ranges ("step N"), paced
# in blocks of 1,000; each mode runs it once per round, the modes alternated
# (untraced, whole, window, flight), OMP_NUM_THREADS=1 and
# OMP_WAIT_POLICY=passive for all. Prints, per mode (medians over rounds):
# the events in the trace, its size, the program's CPU time per event
# beyond untraced (the capture cost), the launcher's resident memory over
# the run (sampled each second: at 25, 50, 75, 100% of it, and the most),
# and `gtrace report` on the trace (seconds, most resident memory).
set -u
SECONDS_RUN=${1:-60}
RATE=${2:-200000}
ROUNDS=${3:-1}
B=${GT_TOP_BUILDDIR:-.}
GTRACE="$B/libtrace/cli/gtrace"
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$GTRACE" ] || { echo "run from a build directory (no $GTRACE)"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/gt-longrun.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
NPROC=$(nproc)
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive

cat >"$W/long_run.c" <<'EOF'
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
int main(int argc, char **argv)
{
    double seconds = atof(argv[1]), rate = atof(argv[2]);
    long step_pairs = 20000, block = 1000, n = 0, step = 0;
    double t0 = now_s(), next = t0;
    char name[32];
    while (now_s() - t0 < seconds) {
        snprintf(name, sizeof name, "step %ld", step++);
        nvtxRangePushA(name);
        for (long done = 0; done < step_pairs; done += block) {
            for (long i = 0; i < block; i++) {
                nvtxRangePushA("op");
                nvtxRangePop();
            }
            n += block;
            next += block / rate;
            double wait = next - now_s();
            if (wait > 0) {
                struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
                nanosleep(&ts, NULL);
            }
        }
        nvtxRangePop();
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    printf("events %ld steps %ld cpu_s %.3f\n", n + step, step, cpu);
    return 0;
}
EOF
cc -O2 -I"$SRC/libtrace/nvtx" -o "$W/long_run" "$W/long_run.c" -ldl || exit 1
STEPS_EXPECTED=$(awk -v s="$SECONDS_RUN" -v r="$RATE" 'BEGIN { printf "%d", s * r / 20000 }')
WIN_A=$((STEPS_EXPECTED / 2))
WIN="steps:$WIN_A-$((WIN_A + 9))"

# rss_samples PID OUT: VmRSS (kB) of PID each second until it ends
rss_samples() {
    while kill -0 "$1" 2>/dev/null; do
        awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null >>"$2"
        sleep 1
    done
}

# run MODE ROUND: one run; appends "MODE events bytes cpu_s rss25 rss50 rss75 rss100 rssmax rep_s rep_kb" to results
run() {
    mode=$1
    t="$W/$mode.$2.sqlite"
    rm -f "$W/rss" "$t"*
    case $mode in
    untraced) "$W/long_run" "$SECONDS_RUN" "$RATE" >"$W/out" 2>"$W/err" & ;;
    whole) "$GTRACE" -o "$t" "$W/long_run" "$SECONDS_RUN" "$RATE" >"$W/out" 2>"$W/err" & ;;
    window) "$GTRACE" -o "$t" --capture="$WIN" "$W/long_run" "$SECONDS_RUN" "$RATE" >"$W/out" 2>"$W/err" & ;;
    flight) "$GTRACE" -o "$t" --flight-recorder=30s "$W/long_run" "$SECONDS_RUN" "$RATE" >"$W/out" 2>"$W/err" & ;;
    esac
    pid=$!
    rss_samples "$pid" "$W/rss" &
    sampler=$!
    wait "$pid"
    wait "$sampler"
    cpu=$(awk '{ print $6 }' "$W/out")
    if [ "$mode" = untraced ]; then
        echo "$mode $(awk '{ print $2 }' "$W/out") 0 $cpu 0 0 0 0 0 0 0" >>"$W/results"
        return
    fi
    grep -q DROPPED "$W/err" && echo "  ($mode: events dropped: $(grep -A3 DROPPED "$W/err" | tr '\n' ' '))"
    events=$(sqlite3 "$t" "SELECT count(*) FROM NVTX_EVENTS")
    bytes=$(stat -c %s "$t")
    rss=$(awk '{ v[NR] = $1; if ($1 > m) m = $1 } END {
        if (NR == 0) { print "0 0 0 0 0"; exit }
        printf "%d %d %d %d %d", v[int((NR + 3) / 4)], v[int((NR + 1) / 2)], v[int((3 * NR + 3) / 4)], v[NR], m }' "$W/rss")
    /usr/bin/time -o "$W/time" -f "%e %M" "$GTRACE" report "$t" >/dev/null 2>&1
    rep=$(tail -n 1 "$W/time")
    echo "$mode $events $bytes $cpu $rss $rep" >>"$W/results"
    rm -f "$t"*
}

echo "bench_long_run: $SECONDS_RUN s at $RATE ranges/s (about $((SECONDS_RUN * RATE)) events, $STEPS_EXPECTED steps);" \
     "window $WIN; recorder 30s; $ROUNDS round(s); nproc $NPROC; load $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ $r -le "$ROUNDS" ]; do
    for m in untraced whole window flight; do
        run $m $r
    done
    r=$((r + 1))
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
# medians per mode, and the cost per event against untraced
awk '
function median(mode, col,   n, i, j, t, a) {
    n = 0
    for (i = 1; i <= NR_all; i++) if (m[i] == mode) a[++n] = v[i, col]
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n ? a[int((n + 1) / 2)] : 0
}
{ NR_all = NR; m[NR] = $1; for (c = 2; c <= NF; c++) v[NR, c] = $c }
END {
    base_cpu = median("untraced", 4); base_n = median("untraced", 2)
    printf "%-9s %12s %10s %9s %28s %8s %12s %10s\n", "mode", "events", "trace MB", "ns/event", "launcher RSS MB 25/50/75/100%", "max MB", "report s", "report MB"
    printf "%-9s %12d %10s %9s\n", "untraced", base_n, "-", "-"
    split("whole window flight", modes, " ")
    for (k = 1; k <= 3; k++) {
        mo = modes[k]
        printf "%-9s %12d %10.1f %9.1f %7.0f/%6.0f/%6.0f/%6.0f %8.0f %12.2f %10.0f\n", mo, median(mo, 2), median(mo, 3) / 1048576,
            (median(mo, 4) - base_cpu) / base_n * 1e9, median(mo, 5) / 1024, median(mo, 6) / 1024, median(mo, 7) / 1024,
            median(mo, 8) / 1024, median(mo, 9) / 1024, median(mo, 10), median(mo, 11) / 1024
    }
}' "$W/results"
