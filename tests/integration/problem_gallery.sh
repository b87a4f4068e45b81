#!/bin/sh
# problem_gallery.sh: the advice measured on samples/problems. Each program
# shows one performance problem in a CPU form and runs again with --fixed as
# its twin; the trainer's default run (gpt-tiny, 100 steps) is a real clean
# run. Prints the confusion matrix (programs by rules fired) and fails when a
# problem's rule does not fire on it, or any rule fires on a twin, on the
# clean program or on the trainer. pageable_copies and amp read CUDA copies
# and a GPU's compute capability: no CPU form shows them.
# A program's shape is timings on two cores that the rest of the suite
# shares (sync --fixed needs both at once): a run whose verdict is wrong is
# traced again, up to three runs, and the matrix judges the last; every
# retry is in the log. A rule that misjudges the program itself does so on
# every run.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
command -v python3 >/dev/null 2>&1 || { echo "skip: python3 is needed"; exit 77; }
GALLERY="clean=- sync=sync_in_steps launch=launch_bound loader=data_loader_stall leak=memory_leak
churn=allocator_churn spike=memory_spike frag=memory_fragmentation conv=conv_autotune"
for p in $GALLERY; do
    name=${p%%=*}
    rule=${p#*=}
    for twin in "" --fixed; do
        want=$rule
        [ -n "$twin" ] && want=-
        for run in 1 2 3; do
            "$GTRACE" -o "$name$twin.sqlite" --force "$SAMPLES/problems/$name" $twin > out.txt 2> err.txt ||
                fail "tracing $name $twin: $(tail -n 3 err.txt)"
            expect_eq "$name $twin runs" ok "$(cat out.txt)"
            "$GTRACE" report --json "$name$twin.sqlite" > "$name$twin.json" || fail "report on $name $twin"
            python3 "$GT_TOP_SRCDIR/tests/integration/problem_gallery.py" check "$name$twin.json" "$name$twin" "$want" \
                > verdict.txt && break
            [ "$run" -lt 3 ] && echo "note: run $run of $name $twin judged wrong, traced again: $(head -n 1 verdict.txt)"
        done
    done
done
TRAINER="$GT_TOP_BUILDDIR/trainer/trainer"
if [ -x "$TRAINER" ]; then
    OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive "$GTRACE" -o trainer.sqlite "$TRAINER" --model gpt-tiny --steps 100 \
        > out.txt 2> err.txt || fail "tracing the trainer: $(tail -n 3 err.txt)"
    "$GTRACE" report --json trainer.sqlite > trainer.json || fail "report on the trainer's trace"
else
    echo "note: no trainer at $TRAINER, its row is left out"
fi
# shellcheck disable=SC2086 # the list splits into its words
python3 "$GT_TOP_SRCDIR/tests/integration/problem_gallery.py" matrix . $GALLERY || fail "the confusion matrix"
echo "all problem_gallery checks passed"
