#!/bin/sh
# `gtrace info` takes PyTorch's own files (a torch.profiler JSON trace, a CUDA
# memory snapshot pickle) as report and memory do: imported into a temporary
# trace, gone when gtrace exits, described as the trace `gtrace import`
# writes, under the name given. A bad file gets one line naming it.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
FX="$GT_FIXTURES/pytorch"
[ -r "$FX/plain.json" ] && [ -r "$FX/snapshot_p4.pickle" ] || { echo "fixtures missing under $FX"; exit 99; }
mkdir tmp
TMPDIR="$WORK/tmp"
export TMPDIR

for f in plain.json snapshot_p4.pickle; do
    "$GTRACE" import "$FX/$f" -o imported.sqlite --force >/dev/null || fail "import $f"
    "$GTRACE" info "$FX/$f" >direct.txt 2>err.txt
    expect_eq "info $f" 0 $?
    "$GTRACE" info imported.sqlite >imported.txt || fail "info on the import of $f"
    expect_eq "info $f names it" "trace      $FX/$f" "$(head -n 1 direct.txt)"
    grep -q "^origin .*(imported)" direct.txt || fail "info $f does not say it imported: $(cat direct.txt)"
    # Past the name and origin, the same description as of its import.
    expect_eq "info $f = info on its import" "$(sed 1,2d imported.txt)" "$(sed 1,2d direct.txt)"
    grep -q "^events" direct.txt && [ "$(sed -n '/^events/,/^processes/p' direct.txt | wc -l)" -gt 2 ] ||
        fail "no events listed for $f: $(cat direct.txt)"
    expect_eq "temporary traces left after info $f" 0 "$(ls -A tmp | wc -l | tr -d ' ')"
done
for f in bad_memo.pickle huge_length.pickle; do
    "$GTRACE" info "$FX/$f" >out.txt 2>err.txt
    expect_eq "info on the bad $f" 1 $?
    expect_eq "one line" 1 "$(wc -l <err.txt | tr -d ' ')"
    grep -q "$f" err.txt || fail "the bad file is not named: $(cat err.txt)"
    expect_eq "temporary traces left after a bad $f" 0 "$(ls -A tmp | wc -l | tr -d ' ')"
done
echo "all good"
