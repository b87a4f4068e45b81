#!/bin/sh
# pytorch_compile.sh: `gtrace --pytorch` on a program that uses torch.compile
# (PyTorch 2.5.1 from PyPI, pinned, in a throwaway virtual environment kept
# under $GT_TMPDIR; pytorch_compile.py: two Blocks of a model compiled, one
# with fullgraph=True, the model around them eager, then the whole model
# compiled with fullgraph=True for an evaluation; nine small modules of nine
# classes compiled, one more than dynamo keeps graphs for one frame's code:
# a graph each, here as without gtrace). gtrace changes nothing
# torch.compile does: with --pytorch (steps and modules), --pytorch=steps
# and --pytorch=steps,modules,ops the program exits 0 and torch's own
# counters (graph breaks, none; unique graphs; frames; recompilations; the
# frames compiled) and the losses, bit for bit, are those of the run
# without gtrace. And it names what ran: the 3 steps, which the report
# finds; the eager modules by their qualified names; each compiled module as
# one range named after the module it runs ("body.1", not OptimizedModule
# or body.1._orig_mod), with no module ranges inside (compiled code), and its
# backward; the compiled model as "Net". With ops (through ITT), the ops
# of the eager modules, of the compiled forward and of the compiled backward
# (aten::mm) are named; through the dispatch mode (GTRACE_TORCH_OPS=dispatch)
# none in a compiled forward (the mode steps aside there: dynamo compiles
# nothing while one is on).
# Skips (77) when pip cannot reach the package index (or without
# python3-venv); inductor compiles C++ on the CPU: g++ is needed.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
# Under the sanitizers libgtrace.so brings GCC 12's ASan runtime into every
# process, and in inductor's g++ child it crashes in its own start-up
# (__sanitizer::InitTlsSize calls a null pointer): `gcc --version` alone does.
# The plain build runs this test.
if [ "${GT_SANITIZERS:-no}" = yes ]; then
    echo "SKIP: the ASan runtime crashes inductor's g++ child at its start (GCC 12); run in the plain build"
    exit 77
fi
CAPTURE_WORK=$WORK
INTEROP_NAME=pytorch-compile
. "$GT_TOP_SRCDIR/tests/integration/interop_common.sh"
# interop_common.sh made a work folder of its own: one is enough (the
# EXIT trap removes $WORK)
rmdir "$WORK" 2>/dev/null || rm -rf "$WORK"
WORK=$CAPTURE_WORK
SCRIPT="$GT_TOP_SRCDIR/tests/integration/pytorch_compile.py"
command -v g++ >/dev/null 2>&1 || fail "torch.compile's inductor needs a C++ compiler on the CPU (apt-get install g++)"

start=$(date +%s)
pinned_venv torch "" "$TORCH2_PINS"
PY="$VENV/bin/python"
echo "torch $("$PY" -c 'import torch; print(torch.__version__)' 2>/dev/null) from $VENV ($(($(date +%s) - start)) s)"
# Inductor's caches beside the environment (kept, as it is, between runs);
# its compiles in the program's process: with a pool of compile workers
# (one per core above one), a worker outlives the program by up to 30 s and
# gtrace waits for it (--wait-leftovers).
TORCHINDUCTOR_CACHE_DIR="$VENV/inductor-cache"
TORCHINDUCTOR_COMPILE_THREADS=1
OMP_NUM_THREADS=1
export TORCHINDUCTOR_CACHE_DIR TORCHINDUCTOR_COMPILE_THREADS OMP_NUM_THREADS

# field JSON NAME: one field of the program's JSON line
field() { "$PY" -c "import json, sys; print(json.dumps(json.loads(open(sys.argv[1]).read())[sys.argv[2]]))" "$1" "$2"; }
# inside TRACE CHILD PARENT: CHILD ranges inside a PARENT range on its thread
inside() {
    q "$1" "SELECT count(*) FROM NVTX_EVENTS c, NVTX_EVENTS p
        WHERE c.eventType = 59 AND p.eventType = 59 AND p.globalTid = c.globalTid
          AND coalesce(c.text, (SELECT value FROM StringIds WHERE id = c.textId)) $2
          AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) = '$3'
          AND p.start <= c.start AND c.\"end\" <= p.\"end\""
}

"$PY" "$SCRIPT" > plain.json 2> err.txt || fail "without gtrace: $(cat err.txt)"
expect_eq "graph breaks without gtrace" 0 "$(field plain.json graph_breaks)"
echo "ok: without gtrace: $(cut -c1-300 plain.json)"

# traced FEATURES TRACE: the program under gtrace --pytorch=FEATURES, torch.compile's
# counters and the losses as without gtrace
traced() {
    "$GTRACE" --pytorch="$1" -o "$2" "$PY" "$SCRIPT" > traced.json 2> err.txt ||
        fail "--pytorch=$1: the program failed: $(grep -E '^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception|Unsupported):' err.txt |
            tail -n 1)"
    grep -q "annotations are off" err.txt && fail "--pytorch=$1: the hooks were not installed: $(cat err.txt)"
    for f in graph_breaks break_reasons unique_graphs frames frames_ok recompiles compiled losses eval; do
        expect_eq "--pytorch=$1: $f as without gtrace" "$(field plain.json $f)" "$(field traced.json $f)"
    done
    for s in 0 1 2; do
        expect_eq "--pytorch=$1: range 'step $s'" 1 "$(count_of "$2" "step $s")"
    done
    "$GTRACE" report --json "$2" > r.json || fail "--pytorch=$1: report --json"
    expect_eq "--pytorch=$1: steps found by the report" 3 \
        "$("$PY" -c "import json, sys; print(len(json.load(open(sys.argv[1]))['steps']))" r.json)"
    # 3 steps: the model and the loss; the evaluation: eager, compiled, the 9 small modules
    expect_eq "--pytorch=$1: forward ranges" 17 "$(count_of "$2" forward)"
}
count_of() { nvtx_count "$1" "$2" 59; }

# ---- steps and modules ------------------------------------------------------------
traced steps,modules sm.sqlite
# 3 steps and the eager evaluation; Net once more: the compiled model
for m in body body.0 body.1 body.2 head; do
    expect_eq "module '$m'" 4 "$(count_of sm.sqlite "$m")"
done
expect_eq "module 'Net' (and the compiled one)" 5 "$(count_of sm.sqlite Net)"
expect_eq "module CrossEntropyLoss" 3 "$(count_of sm.sqlite CrossEntropyLoss)"
expect_eq "the 9 compiled small modules, each named after its class" "9|9" "$(q sm.sqlite "SELECT count(*),
    count(DISTINCT $NT) FROM NVTX_EVENTS n WHERE n.eventType = 59 AND $NT GLOB 'Small[0-8]'")"
for m in body.1 body.2; do
    expect_eq "'$m backward' (the compiled graph's backward)" 3 "$(count_of sm.sqlite "$m backward")"
    expect_eq "'$m' inside body" 4 "$(inside sm.sqlite "= '$m'" body)"
done
expect_eq "ranges named after torch.compile's wrapper" 0 "$(q sm.sqlite "SELECT count(*) FROM NVTX_EVENTS n
    WHERE n.eventType = 59 AND ($NT LIKE '%OptimizedModule%' OR $NT LIKE '%_orig_mod%')")"
# inside a compiled region: compiled code, no module calls
expect_eq "module ranges inside the compiled Blocks" 0 "$(q sm.sqlite "SELECT count(*) FROM NVTX_EVENTS n
    WHERE n.eventType = 59 AND ($NT LIKE 'body.1.%' OR $NT LIKE 'body.2.%')")"
expect_eq "Net ranges with no body inside (the compiled model)" 1 "$(q sm.sqlite "SELECT count(*) FROM NVTX_EVENTS p
    WHERE p.eventType = 59 AND coalesce(p.text, (SELECT value FROM StringIds WHERE id = p.textId)) = 'Net'
      AND NOT EXISTS (SELECT 1 FROM NVTX_EVENTS n WHERE n.eventType = 59 AND n.globalTid = p.globalTid
        AND $NT = 'body' AND p.start <= n.start AND n.\"end\" <= p.\"end\")")"

# ---- steps alone ------------------------------------------------------------------
traced steps st.sqlite
expect_eq "modules without modules" 0 "$(count_of st.sqlite Net)"

# ---- ops --------------------------------------------------------------------------
# through torch's ITT profiler (2.5.1 has ITT): every RecordFunction, the
# compiled forward's too (its extern kernels, and dynamo's and inductor's
# own ops while they compile), as torch.profiler shows them
traced steps,modules,ops ops.sqlite
expect_eq "aten::addmm inside body.0 (eager)" 4 "$(inside ops.sqlite "= 'aten::addmm'" body.0)"
expect_eq "AddmmBackward0 (only ITT names autograd nodes)" yes \
    "$([ "$(count_of ops.sqlite AddmmBackward0)" -gt 0 ] && echo yes)"
expect_eq "ops inside the compiled body.1's forward" yes \
    "$([ "$(inside ops.sqlite "LIKE 'aten::%'" body.1)" -gt 0 ] && echo yes)"
expect_eq "aten::mm inside body.1 backward (compiled)" yes \
    "$([ "$(inside ops.sqlite "= 'aten::mm'" "body.1 backward")" -ge 3 ] && echo yes)"
# through the dispatch mode (GTRACE_TORCH_OPS=dispatch; torch 1.13, shapes):
# it steps aside in compiled forwards
GTRACE_TORCH_OPS=dispatch
export GTRACE_TORCH_OPS
traced steps,modules,ops dispatch.sqlite
expect_eq "dispatch mode: aten::addmm inside body.0 (eager)" 4 "$(inside dispatch.sqlite "= 'aten::addmm'" body.0)"
expect_eq "dispatch mode: ops inside the compiled body.1's forward" 0 \
    "$(inside dispatch.sqlite "LIKE 'aten::%'" body.1)"
expect_eq "dispatch mode: aten::mm inside body.1 backward (compiled)" 3 \
    "$(inside dispatch.sqlite "= 'aten::mm'" "body.1 backward")"
expect_eq "dispatch mode: no autograd node ranges" 0 "$(count_of dispatch.sqlite AddmmBackward0)"
echo "PASS"
