#!/bin/sh
# --capture=cudaProfilerApi on a GPU, with nvcc's default static cudart:
# libgtrace.so cannot interpose the program's own cudaProfilerStart/Stop,
# so the window must come from CUPTI's callbacks (cupti.c). NVTX ranges
# between the calls are written, those before and after are not. The CPU
# form (a shared libcudart, hooks.c) is tests/integration/capture_profiler.sh.
# Exits 77 without a GPU or without nvcc.
. "$(dirname "$0")/../integration/capture_common.sh"
PROBE="$SAMPLES/cuda_probe"
[ -x "$PROBE" ] || { echo "no CUDA samples (built without CUDA)"; exit 77; }
"$PROBE" >/dev/null 2>&1 || { echo "no GPU"; exit 77; }
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "no nvcc"; exit 77; }
NVTX_INC="$(cd "$(dirname "$0")/../../libtrace/nvtx" && pwd)"

cat >prof.cu <<'CU'
#include <cuda_profiler_api.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
__global__ void twice(float *x) { x[threadIdx.x] *= 2; }
static void step(const char *name, float *d)
{
    nvtxRangePushA(name);
    twice<<<1, 32>>>(d);
    cudaDeviceSynchronize();
    nvtxRangePop();
}
int main(void)
{
    float *d;
    if (cudaMalloc(&d, 32 * sizeof *d) != cudaSuccess)
        return 77;
    step("before", d);
    cudaProfilerStart();
    step("inside", d);
    step("inside", d);
    cudaProfilerStop();
    step("after", d);
    puts("ok");
    return 0;
}
CU
"$NVCC" -I"$NVTX_INC" -o prof prof.cu -ldl >nvcc.txt 2>&1 || fail "nvcc: $(cat nvcc.txt)"
"$GTRACE" -o prof.sqlite --capture=cudaProfilerApi ./prof >out.txt 2>err.txt
rc=$?
[ $rc = 77 ] && exit 77
expect_eq "exit status" 0 $rc
expect_eq "ranges inside the window" 2 "$(nvtx_count prof.sqlite inside)"
expect_eq "ranges before it" 0 "$(nvtx_count prof.sqlite before)"
expect_eq "ranges after it" 0 "$(nvtx_count prof.sqlite after)"
echo "all good"
