#!/bin/sh
# window_compare.sh: `gtrace report --steps A:B` and `gtrace memory --at T`
# (and --step N) of two gtrace builds, byte for byte: stdout, stderr (an
# import's temporary name aside) and exit status, text and --json, on each
# trace given. Windows: the first steps, the middle, the last, one step, one
# running past the end and one wholly past it; times: the start, a quarter,
# the middle, the end and past it.
#
#   sh bench/window_compare.sh OLD_GTRACE NEW_GTRACE TRACE...
#
# Prints one line per trace (cases compared, cases that differ, each named)
# and exits 1 when any case differs. Nothing is timed.
set -u
[ $# -ge 3 ] || { echo "usage: $0 OLD_GTRACE NEW_GTRACE TRACE..." >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
bad=0

# same NAME ARGS...: one case, both builds
same() {
    name=$1
    shift
    "$OLD" "$@" > "$W/o.out" 2> "$W/o.err"; echo "rc $?" >> "$W/o.out"
    "$NEW" "$@" > "$W/n.out" 2> "$W/n.err"; echo "rc $?" >> "$W/n.out"
    n=$((n + 1))
    # an import's temporary trace has a name of its own in each run
    for f in o.out o.err n.out n.err; do
        sed 's|gtrace-import-[A-Za-z0-9]*|gtrace-import-X|g' "$W/$f" > "$W/$f.s" && mv "$W/$f.s" "$W/$f"
    done
    if ! cmp -s "$W/o.out" "$W/n.out" || ! cmp -s "$W/o.err" "$W/n.err"; then
        d=$((d + 1))
        diffs="$diffs $name"
    fi
}

for tr in "$@"; do
    n=0 d=0 diffs=
    "$OLD" report --json --no-summary "$tr" > "$W/whole.json" 2> /dev/null
    nums=$(grep -o '"number":[0-9]*' "$W/whole.json" | cut -d: -f2 | sort -n | uniq)
    first=$(echo "$nums" | head -n 1)
    last=$(echo "$nums" | tail -n 1)
    start=$(head -c 300 "$W/whole.json" | sed -n 's/.*"start_ns":\(-*[0-9]*\).*/\1/p')
    end=$(head -c 300 "$W/whole.json" | sed -n 's/.*"end_ns":\(-*[0-9]*\).*/\1/p')
    if [ -n "$first" ]; then
        mid=$(( (first + last) / 2 ))
        for w in "$first:$((first + 1))" "$mid:$((mid + 2))" "$((last - 1)):$last" "$mid:$mid" \
                 "$last:$((last + 5))" "$((last + 3)):$((last + 9))"; do
            same "steps=$w" report --steps "$w" "$tr"
            same "steps=$w/json" report --json --steps "$w" "$tr"
        done
        same "memstep=$mid" memory --step "$mid" "$tr"
    fi
    if [ -n "$start" ] && [ -n "$end" ]; then
        q=$(( (end - start) / 4 ))
        for t in "$start" "$((start + q))" "$((start + 2 * q))" "$end" "$((end + q))"; do
            [ "$t" -lt 0 ] && continue
            same "at=$t" memory --at "$t" "$tr"
            same "at=$t/json" memory --json --at "$t" "$tr"
        done
    fi
    printf '%s: %d cases, %d differ%s\n' "$tr" "$n" "$d" "${diffs:+:$diffs}"
    [ "$d" -eq 0 ] || bad=1
done
exit $bad
