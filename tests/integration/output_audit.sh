#!/bin/sh
# output_audit.sh: every program of gtrace that writes a file follows one
# rule (libtrace/cli/gt_outpath.h): capture (gtrace -o), import, merge,
# export, the trainer's --save and gtrace-view --screenshot. Each is run
# against a FIFO, a symbolic link to a regular file, a dangling link, a link
# to /dev/null, a device node (as root: made here with mknod, never the
# real /dev), a directory and its own input. Refused: exit 1, one line
# naming the path and what it is, the target unchanged (type and content),
# nothing left beside it. A link to a regular file: the file gets the
# output, the link stays. Export writes a stream: a device (through a link
# too) is written in place and stays a device. The trainer saves over the
# checkpoint it resumed from (read whole before), as it always has.
set -u
: "${GT_TOP_BUILDDIR:?run through make check}"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
CLOCK="$GT_TOP_BUILDDIR/tests/integration/merge_clock"
VIEW="$GT_TOP_BUILDDIR/viewer/gtrace-view"
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
KINETO="${GT_FIXTURES:-${GT_TOP_SRCDIR:-.}/tests/fixtures}/pytorch/plain.json"
for f in "$GTRACE" "$CLOCK" "$GT_TOP_BUILDDIR/samples/exit_with" "$KINETO"; do
    [ -e "$f" ] || { echo "missing $f: build it first"; exit 99; }
done
WORK=$(mktemp -d "${GT_TMPDIR:-/tmp}/gt-output.XXXXXX") || exit 99
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 99
fails=0
fail() { echo "FAIL: $*"; fails=1; }

"$CLOCK" write a.sqlite b.sqlite c.sqlite || exit 99
cp "$GT_TOP_BUILDDIR/samples/exit_with" prog
cp "$KINETO" in.json
TR_ARGS="--steps 1 --eval-every 0 --threads 1 --workers 0"

# out CMD PATH: CMD writing to PATH (replacing with --force where it has one)
out() {
    case $1 in
    record) "$GTRACE" -o "$2" --force ./prog 0 ;;
    import) "$GTRACE" import in.json -o "$2" --force ;;
    merge) "$GTRACE" merge a.sqlite b.sqlite -o "$2" --force ;;
    export) "$GTRACE" export a.sqlite --format memviz -o "$2" --force ;;
    trainer) "$TRAINER" $TR_ARGS --save "$2" ;;
    viewer) "$VIEW" --screenshot "$2" --view timeline --size 400x300 a.sqlite ;;
    esac
}
input_of() { case $1 in record) echo prog ;; import) echo in.json ;; *) echo a.sqlite ;; esac; }

# state PATH: what is there, link and type and content
state() {
    s=""
    [ -L "$1" ] && s="link to $(readlink "$1"): "
    if [ -p "$1" ]; then s="${s}FIFO"
    elif [ -c "$1" ]; then s="${s}char device $(stat -L -c %t,%T "$1")"
    elif [ -d "$1" ]; then s="${s}folder of $(ls -A "$1" | wc -l)"
    elif [ -f "$1" ]; then s="${s}file $(cksum <"$1")"
    elif [ -L "$1" ]; then s="${s}nothing"
    else s="${s}none"; fi
    echo "$s"
}
leftovers() { ls -A | grep -E '\.tmp\.|gtrace-import|gtrace-merge|gtrace-parts' ; }

# refused CMD PATH PATTERN: exit 1, one line holding PATH and PATTERN, PATH as it was
refused() {
    before=$(state "$2")
    out "$1" "$2" >out.txt 2>err.txt
    rc=$?
    echo "$1 -> $2: exit $rc: $(head -n 3 err.txt)"
    [ "$rc" -eq 1 ] || fail "$1 -> $2: exit $rc, expected 1"
    [ "$(wc -l <err.txt)" -eq 1 ] || fail "$1 -> $2: expected one line on stderr"
    grep -q -- "$2" err.txt && grep -q -- "$3" err.txt || fail "$1 -> $2: the message lacks '$3'"
    [ "$(state "$2")" = "$before" ] || fail "$1 -> $2: was '$before', now '$(state "$2")'"
    [ -z "$(leftovers)" ] || fail "$1 -> $2: left beside it: $(leftovers)"
}
# written CMD PATH: exit 0, PATH's link and type as they were; prints the content's checksum
written() {
    before=$(state "$2")
    out "$1" "$2" >out.txt 2>err.txt
    rc=$?
    [ "$rc" -eq 0 ] || fail "$1 -> $2: exit $rc, expected 0: $(cat err.txt)"
    after=$(state "$2")
    [ "${after%%: *}" = "${before%%: *}" ] || fail "$1 -> $2: was '$before', now '$after'"
    [ -z "$(leftovers)" ] || fail "$1 -> $2: left beside it: $(leftovers)"
}

as_root=0
mknod probe.node c 1 3 2>/dev/null && as_root=1 && rm -f probe.node
for cmd in record import merge export trainer viewer; do
    case $cmd in
    trainer) [ -x "$TRAINER" ] || { echo "skip: trainer: not built"; continue; } ;;
    viewer) [ -x "$VIEW" ] || { echo "skip: viewer: not built (no GTK)"; continue; } ;;
    esac
    mkfifo fifo
    mkdir dir
    printf 'precious\n' >dir/keep
    printf 'keep me\n' >regular
    ln -s regular link-regular
    ln -s nothing-here dangling
    ln -s /dev/null link-null
    refused $cmd fifo "FIFO"
    refused $cmd dangling "symbolic link to nothing"
    refused $cmd dir "folder"
    in=$(input_of $cmd)
    if [ $cmd = trainer ]; then
        # its input is the checkpoint it resumes from: saved over, as always
        "$TRAINER" $TR_ARGS --save ck >/dev/null 2>&1 || fail "trainer: --save ck"
        "$TRAINER" $TR_ARGS --resume ck --save ck >/dev/null 2>err.txt || fail "trainer: resume and save ck: $(cat err.txt)"
        "$TRAINER" --steps 0 --eval-every 0 --threads 1 --workers 0 --resume ck >/dev/null 2>&1 ||
            fail "trainer: the checkpoint saved over its input does not load"
        rm -f ck
    else
        refused $cmd "$in" "which this command reads"
    fi
    if [ $cmd = export ]; then # a stream: written in place into a device
        written $cmd link-null
    else
        refused $cmd link-null "symbolic link to /dev/null, which is a character device"
    fi
    if [ $as_root = 1 ]; then
        mknod node c 1 3
        if [ $cmd = export ]; then written $cmd node; else refused $cmd node "character device"; fi
        [ -c node ] || fail "$cmd: the device node is no longer a character device"
        rm -f node
    fi
    written $cmd link-regular
    [ -L link-regular ] && [ "$(readlink link-regular)" = regular ] || fail "$cmd: the link was replaced"
    [ -s regular ] && [ "$(cat regular)" != "keep me" ] || fail "$cmd: the file the link names was not written"
    [ "$(cat dir/keep)" = precious ] || fail "$cmd: the folder's file changed"
    rm -rf fifo dir regular link-regular dangling link-null
    [ "$(cksum <in.json)" = "$(cksum <"$KINETO")" ] || fail "$cmd: the input in.json changed"
done
[ $as_root = 1 ] || echo "note: mknod not permitted here; the device node cases were not run"
[ "$fails" -eq 0 ] && echo "PASS: one output rule for every program that writes a file"
exit "$fails"
