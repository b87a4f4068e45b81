# pytorch_ops_common.sh: sourced by the tests of the op ranges torch's own
# RecordFunctions give (pytorch_itt.sh through ITT, pytorch_record_ops.sh
# through the callback), after capture_common.sh and with $PY set.

# name_of ALIAS: the message of NVTX_EVENTS row ALIAS
name_of() { echo "coalesce($1.text, (SELECT value FROM StringIds WHERE id = $1.textId))"; }

# inside_module TRACE OP PARENT_TEST: OP's ranges inside a module range
# (no category) whose name passes the SQL test PARENT_TEST
inside_module() {
    q "$1" "SELECT count(*) FROM NVTX_EVENTS c WHERE c.eventType = 59 AND $(name_of c) = '$2'
        AND EXISTS (SELECT 1 FROM NVTX_EVENTS p WHERE p.eventType = 59 AND p.globalTid = c.globalTid
          AND p.category IS NULL AND $(name_of p) $3 AND p.start <= c.start AND c.\"end\" <= p.\"end\")"
}

# torch_ops JSON: pytorch_itt.py's profiled step's events, "name|count" a line,
# less the phases gtrace marks itself
torch_ops() {
    "$PY" -c "import json, sys
d = json.load(open(sys.argv[1]))['events']
skip = ('autograd::engine::evaluate_function: ', 'Optimizer.step#', 'Optimizer.zero_grad#')
for k in sorted(d):
    if not k.startswith(skip):
        print('%s|%d' % (k, d[k]))" "$1"
}

# ops_of_step TRACE N: the op ranges (category 1) inside step N, "name|count" a line
ops_of_step() {
    q "$1" "SELECT $(name_of n), count(*) FROM NVTX_EVENTS n, NVTX_EVENTS s
        WHERE n.eventType = 59 AND s.eventType = 59 AND n.category = 1 AND s.globalTid = n.globalTid
          AND $(name_of s) = 'step $2' AND s.start <= n.start AND n.\"end\" <= s.\"end\" GROUP BY 1 ORDER BY 1"
}
