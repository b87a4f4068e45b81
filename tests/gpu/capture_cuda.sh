#!/bin/sh
# gtrace on a CUDA program with known work (samples/cuda_ops.cu): kernels,
# pageable and pinned copies, memsets, synchronizations, device allocations
# with their call stacks, runtime calls, and correlation ids that tie each
# GPU activity to the call that caused it. Exits 77 without a GPU.
. "$(dirname "$0")/../integration/capture_common.sh"
PROBE="$SAMPLES/cuda_probe"
[ -x "$PROBE" ] || { echo "no CUDA samples (built without CUDA)"; exit 77; }

# Without a GPU too: a program that execs with an environment of its own
# still hands CUDA's injection hook to the new image (hooks.c), unless
# --cuda=off never set it. (The environment keeps ASAN_OPTIONS alone, set
# in the sanitizer build only: without it ASan stops a program whose
# preloaded libgtrace.so comes ahead of ASan's runtime.)
if command -v python3 >/dev/null 2>&1; then
    bare_exec='import os; os.execve("/usr/bin/env", ["env"], {k: v for k, v in os.environ.items() if k == "ASAN_OPTIONS"})'
    "$GTRACE" -o env.sqlite python3 -c "$bare_exec" >env.txt 2>/dev/null
    expect_eq "CUDA injection after an exec with a bare environment" 1 \
        "$(grep -c '^CUDA_INJECTION64_PATH=.*libgtrace' env.txt)"
    "$GTRACE" -o env-off.sqlite --cuda=off python3 -c "$bare_exec" >env.txt 2>/dev/null
    expect_eq "no CUDA injection with --cuda=off" 0 "$(grep -c '^CUDA_INJECTION64_PATH=' env.txt)"
fi

"$PROBE"
rc=$?
[ $rc = 77 ] && exit 77
[ $rc = 0 ] || fail "cuda_probe failed ($rc)"

# 32 frames: the allocation callback runs under CUDA's and CUPTI's own frames
# (how many is the driver's business), and alloc_buffers must be among them.
"$GTRACE" -o c.sqlite --cuda=on --stacks=32 "$SAMPLES/cuda_ops" >out.txt 2>err.txt
expect_eq "exit status" 0 $?
expect_eq "program output" "kernels 5 memcpy 6 memset 4 malloc 6 free 6" "$(cat out.txt)"
grep -q "CUDA is not traced" err.txt && fail "CUDA was not traced: $(cat err.txt)"
T=c.sqlite
expect_eq "kernels" 5 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL')"
expect_eq "kernel name and launch configuration" "fill|4|128" \
    "$(q $T 'SELECT DISTINCT s.value, k.gridX, k.blockX FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName')"
# A pageable copy may reach CUPTI as one record or as several staged pieces: count calls.
expect_eq "pageable host-to-device copies" 3 "$(q $T 'SELECT count(*) FROM (SELECT sum(bytes) AS b FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 0 GROUP BY correlationId) WHERE b = 1048576')"
expect_eq "pinned host-to-device copies" 2 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 1 AND srcKind = 1')"
expect_eq "device-to-pinned copies" 1 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind = 2 AND dstKind = 1')"
expect_eq "memsets" 4 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE bytes = 1048576')"
# Synchronizations by the call that made them: the type is CUPTI's to choose
# (nsys's cloverleaf export has its cudaDeviceSynchronize calls as type 1).
sync_of() {
    q $T "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION y JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = y.correlationId JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE '$1\_v%' ESCAPE '\\'"
}
expect_eq "cudaDeviceSynchronize synchronizations" 2 "$(sync_of cudaDeviceSynchronize)"
expect_eq "cudaStreamSynchronize synchronizations" 1 "$(sync_of cudaStreamSynchronize)"
expect_eq "synchronization types nsys labels" 0 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE syncType NOT IN (SELECT id FROM ENUM_CUPTI_SYNC_TYPE)')"
expect_eq "device allocations" 6 "$(q $T 'SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind = 2 AND memoryOperationType = 0 AND bytes = 1048576')"
expect_eq "device frees of those allocations" 6 "$(q $T 'SELECT count(*) FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memoryOperationType = 1 AND address IN (SELECT address FROM CUDA_GPU_MEMORY_USAGE_EVENTS WHERE memKind = 2 AND memoryOperationType = 0 AND bytes = 1048576)')"
expect_eq "cudaMalloc calls" 6 "$(q $T "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaMalloc\_v%' ESCAPE '\\'")"
expect_eq "cudaFree calls" 6 "$(q $T "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaFree\_v%' ESCAPE '\\'")"
expect_eq "kernels tied to a cudaLaunchKernel call" 5 "$(q $T "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaLaunchKernel%'")"
expect_eq "copies tied to a cudaMemcpy call" 6 "$(q $T "SELECT count(DISTINCT m.correlationId) FROM CUPTI_ACTIVITY_KIND_MEMCPY m JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId JOIN StringIds s ON s.id = r.nameId WHERE s.value LIKE 'cudaMemcpy%'")"
expect_eq "allocations with a stack through alloc_buffers" 6 "$(q $T "SELECT count(DISTINCT g.rowid) FROM CUDA_GPU_MEMORY_USAGE_EVENTS g JOIN GTRACE_GPU_MEMORY_STACKS m ON m.eventId = g.rowid JOIN CUDA_CALLCHAINS c ON c.id = m.callchainId JOIN StringIds s ON s.id = c.symbol WHERE g.memoryOperationType = 0 AND g.memKind = 2 AND s.value = 'alloc_buffers'")"
expect_eq "one distinct allocation stack" 1 "$(q $T 'SELECT count(DISTINCT m.callchainId) FROM CUDA_GPU_MEMORY_USAGE_EVENTS g JOIN GTRACE_GPU_MEMORY_STACKS m ON m.eventId = g.rowid WHERE g.memoryOperationType = 0 AND g.memKind = 2')"
expect_eq "GPU described" 1 "$(q $T 'SELECT count(*) > 0 FROM TARGET_INFO_GPU')"
expect_eq "GPU uuid as nsys writes it" 1 "$(q $T "SELECT min(uuid GLOB '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-*' AND length(uuid) = 36) FROM TARGET_INFO_GPU")"
expect_eq "launch type (nsys: 1 regular)" 1 "$(q $T 'SELECT group_concat(DISTINCT launchType) FROM CUPTI_ACTIVITY_KIND_KERNEL')"
# Runtime calls on the thread that made them: the program's one thread (tid = pid).
expect_eq "runtime calls on the main thread" 0 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE (globalTid & 16777215) != ((globalTid >> 24) & 16777215)')"
expect_eq "nothing dropped" 0 "$(q $T 'SELECT coalesce(sum(count), 0) FROM GTRACE_DROPPED_EVENTS')"
expect_eq "kernels inside the run" 0 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start < 0 OR end < start')"
# GPU work starts after the call that launched it (one clock for CPU and GPU).
expect_eq "kernels after their launch call" 5 "$(q $T 'SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId WHERE k.start >= r.start')"
# --cuda=off: NVTX only, no CUDA tables filled.
"$GTRACE" -o off.sqlite --cuda=off "$SAMPLES/cuda_ops" >/dev/null 2>&1
# (a trace has the tables it has rows for, as nsys's exports do)
expect_eq "--cuda=off records no kernels" 0 "$(q off.sqlite "SELECT count(*) FROM sqlite_master WHERE name LIKE 'CUPTI_ACTIVITY_KIND_%'")"
echo "all good"
