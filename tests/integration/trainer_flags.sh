#!/bin/sh
# trainer_flags.sh: a trainer flag is written in the parser (options.c),
# --help and the man page (gtrace-trainer.1); one added in one place only
# fails here: the three sets of names are the same, and every name --help
# or the man page gives is one the trainer takes (not "unknown option").
set -u
tr="$GT_TOP_BUILDDIR/trainer/trainer"
src="$GT_TOP_SRCDIR/trainer"
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
fails=0
grep -o 'strcmp(f, "--[a-z0-9-]*")' "$src/options.c" | grep -o -- '--[a-z0-9-]*' | sort -u >"$work/parser"
"$tr" --help | grep -o -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u >"$work/help"
grep -o -- '\\-\\-[a-z][a-z0-9\\-]*[a-z0-9]' "$src/gtrace-trainer.1" | sed 's/\\-/-/g; s/\\f$//' | sort -u >"$work/man"
[ "$(wc -l <"$work/parser")" -ge 40 ] || { echo "FAIL: only $(wc -l <"$work/parser") flags found in options.c"; fails=1; }
for place in help man; do
    missing=$(comm -23 "$work/parser" "$work/$place" | tr '\n' ' ')
    extra=$(comm -13 "$work/parser" "$work/$place" | tr '\n' ' ')
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
