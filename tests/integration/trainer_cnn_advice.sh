#!/bin/sh
# trainer_cnn_advice.sh: gtrace's CNN advice on real trainer traces (the cpu
# backend, cnn-resnet on a small synthetic set): conv_bias_before_bn fires on
# a run whose convolutions keep their bias before BatchNorm (the default) and
# names --bias-before-bn off, with the bias's memory and estimated time, and
# is silent with --bias-before-bn off; conv_autotune fires on an NCHW run
# that repeats im2col+GEMM without timing, and is silent with
# --conv-autotune on and with --layout nhwc.
. "$GT_TOP_SRCDIR/tests/integration/trainer_cnn_common.sh"
GTRACE="$GT_TOP_BUILDDIR/libtrace/cli/gtrace"
[ -x "$GTRACE" ] || { echo "missing $GTRACE: build it first"; exit 99; }

# fired NAME ARGS...: the rules that fire on a trace of the trainer with ARGS, one per line, into $work/NAME.fired
fired() {
    name=$1; shift
    rm -f "$work/$name.sqlite"
    "$GTRACE" -o "$work/$name.sqlite" "$tr" --data "$work/fm" --model cnn-resnet --steps 3 --batch 16 \
        --test-images 20 "$@" > "$work/$name.log" 2>&1 || { cat "$work/$name.log"; echo "FAIL: $name: gtrace"; fails=1; }
    "$GTRACE" report --json "$work/$name.sqlite" > "$work/$name.json" 2> "$work/$name.err" ||
        { cat "$work/$name.err"; echo "FAIL: $name: gtrace report"; fails=1; }
    python3 - "$work/$name.json" > "$work/$name.fired" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for a in r["advice"]:
    if a["fired"]:
        print(a["rule"], "|", a["evidence"], "|", a["suggestion"])
PY
    sed "s/^/  [$name] /" "$work/$name.fired"
}
has() { grep -q "^$2 |" "$work/$1.fired"; }

fired nchw --layout nchw
has nchw conv_bias_before_bn || { echo "FAIL: conv_bias_before_bn silent on convs with a bias before BatchNorm"; fails=1; }
grep "^conv_bias_before_bn |" "$work/nchw.fired" | grep -q "9 convolutions with a bias followed by BatchNorm per step.*336 bias values.*--bias-before-bn off" ||
    { echo "FAIL: conv_bias_before_bn does not count cnn-resnet's 9 convs and 336 biases, or lacks the switch"; fails=1; }
has nchw conv_autotune || { echo "FAIL: conv_autotune silent on repeated untimed im2col+GEMM"; fails=1; }
grep "^conv_autotune |" "$work/nchw.fired" | grep -q "im2col+gemm.*--conv-autotune on" ||
    { echo "FAIL: conv_autotune does not name the algorithm and the switch"; fails=1; }

fired nobias --layout nchw --bias-before-bn off
has nobias conv_bias_before_bn && { echo "FAIL: conv_bias_before_bn fired with --bias-before-bn off"; fails=1; }

fired tuned --conv-autotune on
has tuned conv_autotune && { echo "FAIL: conv_autotune fired on a run that autotuned"; fails=1; }

fired nhwc --layout nhwc --bias-before-bn off
has nhwc conv_autotune && { echo "FAIL: conv_autotune fired on the nhwc kernels"; fails=1; }
has nhwc conv_bias_before_bn && { echo "FAIL: conv_bias_before_bn fired with --bias-before-bn off"; fails=1; }
exit $fails
