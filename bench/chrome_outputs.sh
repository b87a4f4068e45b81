#!/bin/sh
# chrome_outputs.sh: every Chrome export of a set of inputs, by one gtrace
# binary, into one folder, so that two builds' outputs can be compared
# with cmp (or, where only the order differs, chrome_canon.py).
#
#   sh bench/chrome_outputs.sh GTRACE OUTDIR INPUT...
#
# INPUT: a trace (.sqlite) or anything `gtrace export` opens (Kineto JSON,
# memory snapshot pickles). Each gets its whole export (NAME.json) and, for
# every process the whole export names, one per process (NAME.pidP.json);
# a failed export leaves NAME.err with its message. Nothing is asserted.
set -u
G=$1 O=$2
shift 2
mkdir -p "$O"
for f in "$@"; do
    n=$(basename "$f" | tr -c 'A-Za-z0-9._\n-' _)
    if ! "$G" export "$f" --format chrome -o "$O/$n.json" --force > /dev/null 2> "$O/$n.err"; then
        continue
    fi
    rm -f "$O/$n.err"
    for p in $(grep -o '"name": *"process_name", *"pid": *[0-9]*' "$O/$n.json" | grep -o '[0-9]*$' | sort -un); do
        "$G" export "$f" --format chrome --pid "$p" -o "$O/$n.pid$p.json" --force > /dev/null 2> "$O/$n.pid$p.err" &&
            rm -f "$O/$n.pid$p.err"
    done
    "$G" export "$f" --format chrome -o "$O/$n.d/" --force > /dev/null 2> "$O/$n.d.err" && rm -f "$O/$n.d.err"
done
