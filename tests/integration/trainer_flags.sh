#!/bin/sh
# trainer_flags.sh: a trainer flag is described once, in the table of
# trainer/flags.c, which makes the parser and --help; the man page
# (gtrace-trainer.1) is written by hand. Fails when the three sets of names
# differ, when a flag of the table has no line of its own in --help's flag
# column (no help text), when that column names a flag the table lacks, and
# when a name --help or the man page gives is unknown to the trainer.
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
src="$GT_TOP_SRCDIR/trainer"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
grep -oE '(_FLAG\(|\.name = )"--[a-z0-9-]+"' "$src/flags.c" | grep -o -- '--[a-z0-9-]*' | sort -u >"$work/parser"
"$tr" --help >"$work/help.txt" || { echo "FAIL: trainer --help exits $?"; fails=1; }
grep -o -- '--[a-z][a-z0-9-]*[a-z0-9]' "$work/help.txt" | sort -u >"$work/help"
# the flag column: "  --flag ARG" up to two spaces, or, when ARG ends at
# column 21, one space before the text at column 22
awk '/^  --/ { left = substr($0, 3); col = left
               if (substr(left, 20, 1) == " " && substr(left, 1, 19) !~ /  /) col = substr(left, 1, 19)
               else if (match(left, /  /)) col = substr(left, 1, RSTART - 1)
               print col }' "$work/help.txt" | grep -o -- '--[a-z][a-z0-9-]*[a-z0-9]' | grep -vx -- --help |
    sort -u >"$work/column"
grep -o -- '\\-\\-[a-z][a-z0-9\\-]*[a-z0-9]' "$src/gtrace-trainer.1" | sed 's/\\-/-/g; s/\\f$//' | sort -u >"$work/man"
[ "$(wc -l <"$work/parser")" -ge 40 ] || { echo "FAIL: only $(wc -l <"$work/parser") flags found in flags.c"; fails=1; }
missing=$(comm -23 "$work/parser" "$work/column" | tr '\n' ' ')
extra=$(comm -13 "$work/parser" "$work/column" | tr '\n' ' ')
[ -z "$missing" ] || { echo "FAIL: the table has, --help's flag column lacks (no help text?): $missing"; fails=1; }
[ -z "$extra" ] || { echo "FAIL: --help's flag column names, the table lacks: $extra"; fails=1; }
for place in help man; do
    missing=$(comm -23 "$work/parser" "$work/$place" | tr '\n' ' ')
    extra=$(comm -13 "$work/parser" "$work/$place" | grep -vx -- --help | tr '\n' ' ')
    [ -z "$missing" ] || { echo "FAIL: the parser takes, the $place text lacks: $missing"; fails=1; }
    [ -z "$extra" ] || { echo "FAIL: the $place text names, the parser lacks: $extra"; fails=1; }
done
# the parser's view at run time: each documented name is known (its value may still be refused)
for f in $(sort -u "$work/help" "$work/man"); do
    [ "$f" = --help ] && continue
    msg=$(timeout 60 "$tr" "$f" x --zz-unknown 1 2>&1 </dev/null)
    case $msg in *"unknown option '$f'"*) echo "FAIL: $f is documented but unknown to the trainer"; fails=1 ;; esac
done
exit $fails
