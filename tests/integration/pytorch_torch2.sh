#!/bin/sh
# pytorch_torch2.sh: the PyTorch tests whose answers hang on the order in
# which autograd runs hooks, run again under PyTorch 2.5.1 (from PyPI,
# pinned, the virtual environment pytorch_compile.sh makes) as they run
# under Debian's 1.13: torch 2.x runs a tensor's hooks before its node's
# pre-hooks, 1.13 in the order they were made, and gtrace's module
# backward ranges begin in a node pre-hook. Each test picks the first
# python3 on PATH that imports torch (pytorch_common.sh): the
# environment's, here. Skips (77) when pip cannot reach the package index.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"
if [ "${GT_SANITIZERS:-no}" = yes ]; then
    echo "SKIP: under the sanitizers the PyTorch tests that run are pytorch_train, pytorch_fork and pytorch_threads"
    exit 77
fi
CAPTURE_WORK=$WORK
INTEROP_NAME=pytorch-torch2
. "$GT_TOP_SRCDIR/tests/integration/interop_common.sh"
rmdir "$WORK" 2>/dev/null || rm -rf "$WORK" # one work folder is enough
WORK=$CAPTURE_WORK
pinned_venv torch "" "$TORCH2_PINS"
echo "torch $("$VENV/bin/python" -c 'import torch; print(torch.__version__)') from $VENV"
for t in oom_pytorch pytorch_backward; do
    st=0
    PATH="$VENV/bin:$PATH" sh "$GT_TOP_SRCDIR/tests/integration/$t.sh" > "$WORK/$t.log" 2>&1 || st=$?
    grep -q "^python: $VENV/bin/python3, torch 2\." "$WORK/$t.log" || { cat "$WORK/$t.log"; fail "$t: not run under torch 2.x"; }
    [ "$st" -eq 0 ] || { cat "$WORK/$t.log"; fail "$t under torch 2.x: exit $st"; }
    echo "ok: $t under torch 2.x"
done
