#!/bin/sh
# oom_pytorch.sh: an out-of-memory error under `gtrace --pytorch`
# (pytorch_window.py; Debian's python3-torch, skipped, 77, without it). In
# step 3 an allocation fails and the error ends the program: gtrace passes
# its exit status on, the trace holds one "oom" mark, step 3 is in the trace
# (closed where the program died), and `gtrace report` has an Out of memory
# section that names step 3 and the phase, with the figures the error gave:
#  - forward: torch.cuda.OutOfMemoryError raised in the module body.1 with
#    PyTorch 1.13's message: its request, allocated, reserved, free and
#    total, to the byte as the message rounds them, and its cause
#    (fragmentation: 696 MiB reserved but free, 20 MiB asked);
#  - backward: a real CPU allocation of 1 PiB refused (a RuntimeError) in a
#    hook on the gradient of body.1's linear layer's output: the request
#    parsed, the module's backward range it failed in (as each torch orders
#    hooks);
#  - optimizer: the same in the optimizer's step (marked as the error leaves
#    the program, inside the optimizer's range);
#  - a program that catches the error and goes on, in step 13 (a step
#    without module backward ranges, backward-every=10): the mark in its
#    forward, and the steps as the optimizer made them (none added).
. "$GT_TOP_SRCDIR/tests/integration/pytorch_common.sh"
PROG="$GT_TOP_SRCDIR/tests/integration/pytorch_window.py"
steps() { q "$1" "SELECT group_concat(t, ',') FROM (SELECT $NT AS t FROM NVTX_EVENTS n WHERE $NT LIKE 'step %' ORDER BY n.start)"; }
marks() { q "$1" "SELECT count(*) FROM NVTX_EVENTS n WHERE eventType = 34 AND $NT LIKE 'out of memory%'"; }

# run NAME EXPECTED_STATUS ARGS...: the program under gtrace, then its report
run() {
    name=$1 want=$2
    shift 2
    st=0
    "$GTRACE" --pytorch -o "$name.sqlite" "$PY" "$PROG" --steps 6 --oom-at 3 "$@" >"$name.out" 2>"$name.err" || st=$?
    expect_eq "$name: exit status" "$want" "$st"
    expect_eq "$name: oom marks" 1 "$(marks "$name.sqlite")"
    "$GTRACE" report "$name.sqlite" >"$name.txt" || fail "$name: report failed"
    "$GTRACE" report --json "$name.sqlite" >"$name.json" || fail "$name: report --json failed"
}

# section NAME KEY=VALUE...: the JSON section's fields (numbers or strings)
section() {
    name=$1
    shift
    "$PY" - "$name.json" "$@" <<'PY' || fail "$name: $(sed -n '/^Out of memory/,/^$/p' "$name.txt")"
import json, sys
o = json.load(open(sys.argv[1]))["oom"]
assert o is not None, "no oom section"
for kv in sys.argv[2:]:
    k, v = kv.split("=", 1)
    got = o[k]
    assert str(got) == v, (k, got, v)
print("ok: " + ", ".join(sys.argv[2:]))
PY
}

GiB=1073741824 MiB=1048576
# PyTorch 1.13's figures, as its message rounds them to two decimals
r() { "$PY" -c "print(int(round($1)))"; }
run fwd 1 --oom-in forward --oom-kind raise
expect_eq "forward: steps" "step 0,step 1,step 2,step 3" "$(steps fwd.sqlite)"
grep -q "^Out of memory  at .*, step 3, forward$" fwd.txt || fail "forward: $(cat fwd.txt)"
grep -q "^  in             step 3 > forward > Net > body > body.1$" fwd.txt || fail "forward: where: $(cat fwd.txt)"
section fwd step=3 phase=forward failures=1 requested_bytes=$((20 * MiB)) \
    allocated_bytes="$(r "14.12 * $GiB")" reserved_bytes="$(r "14.80 * $GiB")" \
    free_bytes="$(($(r "14.80 * $GiB") - $(r "14.12 * $GiB")))" device_free_bytes="$(r "17.75 * $MiB")" \
    limit_bytes="$(r "15.78 * $GiB")" shortfall_bytes="$((20 * MiB - $(r "17.75 * $MiB")))" cause=fragmentation

run bwd 1 --oom-in backward --oom-kind cpu
grep -q "you tried to allocate 1125899906842624 bytes" bwd.err || fail "backward: not the CPU allocator's error: $(cat bwd.err)"
expect_eq "backward: steps" "step 0,step 1,step 2,step 3" "$(steps bwd.sqlite)"
# Where the hook runs: torch 1.13 runs a node's pre-hooks in the order they
# were made (gtrace's, made as body.1.lin returned, first: its backward has
# begun); torch 2.x runs a tensor's hooks before its node's pre-hooks, so the
# hook runs before autograd starts body.1.lin's backward, inside body.1's.
where="step 3 > backward > Net backward > body backward > body.1 backward"
"$PY" -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)' || where="$where > body.1.lin backward"
grep -qx "  in             $where" bwd.txt || fail "backward: where (torch $("$PY" -c 'import torch; print(torch.__version__)'), want $where): $(cat bwd.txt)"
section bwd step=3 phase=backward requested_bytes=1125899906842624 allocated_bytes=-1 reserved_bytes=-1 cause=unknown

run opt 1 --oom-in optimizer --oom-kind cpu
grep -q "^  in             step 3 > optimizer$" opt.txt || fail "optimizer: where: $(cat opt.txt)"
section opt step=3 phase=optimizer requested_bytes=1125899906842624

run caught 0 --steps 16 --oom-at 13 --oom-in forward --oom-kind cpu --catch
grep -q "^step 13: RuntimeError" caught.out || fail "caught: the program did not catch it: $(cat caught.out)"
expect_eq "caught: steps (one batch skipped)" "$(seq -s, 0 14 | sed 's/\([0-9]*\)/step \1/g')" "$(steps caught.sqlite)"
section caught step=13 phase=forward requested_bytes=1125899906842624 \
    range_path="step 13 > forward > Net > body > body.1"
echo "all good"
