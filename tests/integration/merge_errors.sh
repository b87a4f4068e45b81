#!/bin/sh
# merge_errors.sh: gtrace merge on bad input. Each case gets one line on
# stderr that names the file and what is wrong, exit status 1, and nothing
# written: no output, an existing output unchanged, no temporary left
# beside it. Cases: no parts; no -o; a part that is missing, a directory,
# not SQLite, or a trace without a start time; one part given twice
# (same name, another name for the same file, a copy); an output that
# exists without --force, that is a directory or a symbolic link to
# nothing even with --force, that is one of the parts (through a link too),
# or whose directory does not exist. Then --force replaces a regular file,
# and only that (through a link, the file it names; the link stays).
: "${GT_TOP_SRCDIR:?run through make check}"
. "$GT_TOP_SRCDIR/tests/integration/merge_common.sh"

"$CLOCK" write a.sqlite b.sqlite c.sqlite || exit 99
"$CLOCK" nostart nostart.sqlite || exit 99
cp a.sqlite copy-of-a.sqlite
ln a.sqlite hardlink-a.sqlite
mkdir adir
echo "not a trace" >text.sqlite
echo "keep me" >existing.sqlite
ln -s existing.sqlite link.sqlite
ln -s nothing-here dangling.sqlite
ln -s b.sqlite link-to-b.sqlite
sum_before=$(cksum existing.sqlite a.sqlite b.sqlite)

# bad NAME MESSAGE-PART ARGS...: exit 1, one line that holds MESSAGE-PART, nothing written
bad() {
    name=$1; want=$2; shift 2
    rm -f out.sqlite
    "$GTRACE" merge "$@" >stdout.txt 2>stderr.txt
    rc=$?
    msg=$(cat stderr.txt)
    echo "$name: exit $rc: $msg"
    [ "$rc" -eq 1 ] || { echo "FAIL: $name: exit $rc, expected 1"; fails=1; }
    [ "$(wc -l <stderr.txt)" -eq 1 ] || { echo "FAIL: $name: expected one line on stderr"; fails=1; }
    case $msg in
    "gtrace: merge: "*"$want"*) ;;
    *) echo "FAIL: $name: the message lacks '$want'"; fails=1 ;;
    esac
    [ ! -s stdout.txt ] || { echo "FAIL: $name: something on stdout"; fails=1; }
    [ ! -e out.sqlite ] || { echo "FAIL: $name: out.sqlite written"; fails=1; }
    ls -A | grep -q '^\.gtrace-merge-' && { echo "FAIL: $name: a temporary directory left"; fails=1; }
    [ "$(cksum existing.sqlite a.sqlite b.sqlite)" = "$sum_before" ] ||
        { echo "FAIL: $name: an input or the existing output changed"; fails=1; }
}

bad "no parts" "no traces to merge" -o out.sqlite
bad "no output" "no output" a.sqlite b.sqlite
bad "missing part" "missing.sqlite" a.sqlite missing.sqlite -o out.sqlite
bad "a directory" "adir: not a trace (a directory)" a.sqlite adir -o out.sqlite
bad "not SQLite" "text.sqlite" a.sqlite text.sqlite -o out.sqlite
bad "no start time" "nostart.sqlite: the trace holds no start time" a.sqlite nostart.sqlite -o out.sqlite
bad "same part twice" "a.sqlite and a.sqlite are the same file" a.sqlite b.sqlite a.sqlite -o out.sqlite
bad "another name" "a.sqlite and hardlink-a.sqlite are the same file" a.sqlite hardlink-a.sqlite -o out.sqlite
bad "a copy" "a.sqlite and copy-of-a.sqlite are copies of one trace" a.sqlite b.sqlite copy-of-a.sqlite -o out.sqlite
bad "output exists" "existing.sqlite exists (use --force" a.sqlite b.sqlite -o existing.sqlite
bad "output a link, no --force" "link.sqlite exists (use --force" a.sqlite b.sqlite -o link.sqlite
bad "output a directory" "adir: it is a folder, not a regular file" a.sqlite b.sqlite -o adir --force
bad "output a dangling link" "dangling.sqlite: it is a symbolic link to nothing" a.sqlite b.sqlite -o dangling.sqlite --force
bad "output is a part" "b.sqlite is b.sqlite, which this command reads" a.sqlite b.sqlite -o b.sqlite --force
bad "output links to a part" "link-to-b.sqlite is b.sqlite, which this command reads" a.sqlite b.sqlite -o link-to-b.sqlite --force
bad "no such directory" "cannot write nodir/out.sqlite" a.sqlite b.sqlite -o nodir/out.sqlite
"$GTRACE" merge a.sqlite --bogus -o out.sqlite 2>stderr.txt
rc=$?
cat stderr.txt
[ "$rc" -eq 2 ] && [ "$(wc -l <stderr.txt)" -eq 1 ] && [ ! -e out.sqlite ] ||
    { echo "FAIL: unknown option: exit $rc (2 expected), one line, nothing written"; fails=1; }

# --force replaces a regular file, and only that.
"$GTRACE" merge a.sqlite b.sqlite -o existing.sqlite --force >/dev/null 2>&1 ||
    { echo "FAIL: --force over a regular file"; fails=1; }
"$GTRACE" info existing.sqlite | grep -q '^merged     2 parts$' || { echo "FAIL: --force: not the merged trace"; fails=1; }
[ -L link.sqlite ] || { echo "FAIL: the symbolic link was replaced"; fails=1; }
"$GTRACE" merge a.sqlite c.sqlite -o link.sqlite --force >/dev/null 2>&1 ||
    { echo "FAIL: --force through a link to a regular file"; fails=1; }
[ -L link.sqlite ] && "$GTRACE" info existing.sqlite | grep -q '^  2: c.sqlite' ||
    { echo "FAIL: --force through a link: the link replaced, or its file not the merged trace"; fails=1; }
[ -d adir ] || { echo "FAIL: the directory was replaced"; fails=1; }

[ "$fails" -eq 0 ] && echo "PASS: merge refuses bad input"
exit "$fails"
