# pytorch_common.sh: sourced by the pytorch_*.sh tests: capture_common.sh's
# helpers, a Python that imports torch (Debian's python3-torch; skipped, 77,
# without it), the training script and `names TRACE`: the NVTX range names of
# a trace with their counts, one "name|count" a line.
. "$GT_TOP_SRCDIR/tests/integration/capture_common.sh"

# Under the sanitizers (a torch step 5 to 10 times slower) only the tests
# that set GT_SAN_TORCH=yes before sourcing this run: pytorch_train,
# pytorch_fork and pytorch_threads take libgtrace.so and the NVTX library
# through what a PyTorch program does to them (threads, forks, the ops
# mode's rate); the hooks themselves are Python, which ASan does not see.
if [ "${GT_SANITIZERS:-no}" = yes ] && [ "${GT_SAN_TORCH:-no}" != yes ]; then
    echo "SKIP: under the sanitizers the PyTorch tests that run are pytorch_train, pytorch_fork and pytorch_threads"
    exit 77
fi

PY=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c "import torch" >/dev/null 2>&1; then
        PY=$(command -v "$p")
        break
    fi
done
[ -n "$PY" ] || { echo "SKIP: no python3 with torch (apt-get install python3-torch)"; exit 77; }
TRAIN="$GT_TOP_SRCDIR/tests/integration/pytorch_train.py"
echo "python: $PY, torch $("$PY" -c 'import torch; print(torch.__version__)')"

# PyTorch's own threads would only fight the other tests for the cores.
OMP_NUM_THREADS=1
export OMP_NUM_THREADS

names() {
    q "$1" "SELECT $NT, count(*) FROM NVTX_EVENTS n WHERE n.eventType = 59 GROUP BY 1 ORDER BY 1"
}

# count_of TRACE NAME: how many push/pop ranges of that name
count_of() { nvtx_count "$1" "$2" 59; }

# steps_of REPORT_JSON: the number of steps gtrace report --json found
steps_of() { "$PY" -c "import json, sys; print(len(json.load(open(sys.argv[1]))['steps']))" "$1"; }
