/* test_cudnn_attention_plans: the attention graphs of trainer/attention_cudnn.c
 * on a machine without a GPU. cuDNN (9.8 and newer) builds plans
 * "deviceless" from a description of the device; its support checks then
 * decide whether an engine takes the graph, and it compiles the fused kernel
 * at run time (NVRTC); only loading the kernel needs the device. So each
 * forward and backward graph, bf16 and fp16, at shapes like the tests' and
 * the trainer's, must be accepted for an H100 (sm_90); so must the graphs
 * older cuDNN versions get (the backward's padding-mask workaround, which
 * the device may run) and the backward with the dQ accumulator, the
 * fallback. A graph whose pattern cuDNN does not recognize (a wrong op, a
 * wrong intermediate type in the forward) is refused here; numerics are
 * test_cuda_attention's, on a GPU.
 * The runtime compiler wants libcuda.so.1: the driver where there is one,
 * else the toolkit's stub (kernels compile, nothing loads). Skips (77)
 * without cuDNN 9.8 or newer or without either libcuda. */
#include "config.h"

#include "attention_cudnn.h"
#include "error.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* An H100 SXM (80 GB HBM3) as cuDNN's CUDNN_ATTR_DEVICEPROP_JSON_REPRESENTATION
 * describes a device, written from the card's published properties (132 SMs,
 * 228 KiB of shared memory per SM, 50 MiB of L2, 1.98 GHz, a 5120-bit bus);
 * the last three keys are the ones cuDNN 9.28 requires besides 9.19's (no
 * oversized shared memory: the opt-in maximum). test_cuda_attention writes
 * the real description of the GPU it runs on to $OUT. */
static const char h100_json[] =
    "{\"deviceName\":\"NVIDIA H100 80GB HBM3\",\"cudaDeviceId\":0,\"deviceVer\":900,\"driverVer\":13000,"
    "\"totalGlobalMem\":85520809984,\"multiProcessorCount\":132,\"maxGridSize\":[2147483647,65535,65535],"
    "\"maxBlockSize\":[1024,1024,64],\"regsPerBlock\":65536,\"warpSize\":32,\"maxSharedMemoryPerBlock\":49152,"
    "\"maxSharedMemoryPerBlockOptin\":232448,\"reservedSharedMemoryPerBlock\":1024,\"maxRegistersPerSM\":65536,"
    "\"maxCtasPerSM\":32,\"maxThreadsPerBlock\":1024,\"maxThreadsPerSM\":2048,\"pciDeviceId\":0,\"isTccDriver\":0,"
    "\"supportCoopLaunch\":1,\"smClockRateKHz\":1980000,\"memClockRateKHz\":2619000,\"l2CacheSize\":52428800,"
    "\"smCountOrigin\":0,\"oversizedSharedMemoryPerBlock\":232448,\"memoryBusWidth\":5120}";

static int n_failed, n_checked;

static void expect_ok(int rc, const char *what)
{
    n_checked++;
    if (rc < 0) {
        n_failed++;
        printf("FAIL %s: %s\n", what, tr_error_last());
    } else {
        printf("ok   %s\n", what);
    }
}

/* A refusal that names its reason. */
static void expect_refused(int rc, const char *what, const char *needle)
{
    n_checked++;
    if (rc >= 0 || !strstr(tr_error_last(), needle)) {
        n_failed++;
        printf("FAIL %s: %s (expected an error naming '%s')\n", what, rc >= 0 ? "accepted" : tr_error_last(), needle);
    } else {
        printf("ok   %s: %s\n", what, tr_error_last());
    }
}

/* Each shape's forward and backward, bf16 and fp16; with want_kind, the
 * backward plan must be of that kind. */
static void prepare_all(tr_attn_cudnn *a, const char *variant, const int (*shapes)[4], size_t n_shapes,
                        const char *want_kind)
{
    static const tr_dtype dts[] = {TR_BF16, TR_F16};
    for (size_t d = 0; d < 2; d++)
        for (size_t i = 0; i < n_shapes; i++) {
            const int *s = shapes[i];
            char what[200];
            size_t ws;
            int rc = tr_attn_cudnn_prepare(a, dts[d], s[0], s[1], s[2], s[3], &ws);
            const char *kind = rc < 0 ? "-" : tr_attn_cudnn_backward_kind(a, dts[d], s[0], s[1], s[2], s[3]);
            snprintf(what, sizeof what, "%-4s B %d T %4d NH %2d HS %3d%s: forward and backward accepted (%s)",
                     tr_dtype_name(dts[d]), s[0], s[1], s[2], s[3], variant, kind);
            expect_ok(rc, what);
            if (rc >= 0 && want_kind && strncmp(kind, want_kind, strlen(want_kind)) != 0) {
                n_checked++;
                n_failed++;
                printf("FAIL %s: the backward is not '%s'\n", what, want_kind);
            }
        }
}

int main(void)
{
    if (!dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) &&
        !dlopen(GT_CUDA_LIBDIR "/stubs/libcuda.so", RTLD_NOW | RTLD_GLOBAL)) {
        printf("SKIP: no libcuda.so.1 and no stub in %s/stubs: cuDNN cannot compile its kernels here\n",
               GT_CUDA_LIBDIR);
        return 77;
    }
    tr_attn_cudnn *a;
    if (tr_attn_cudnn_new(&a, h100_json) < 0) {
        if (strstr(tr_error_last(), "does not load") || strstr(tr_error_last(), "or newer is needed") ||
            strstr(tr_error_last(), "9.8 or newer")) {
            printf("SKIP: %s\n", tr_error_last());
            return 77;
        }
        printf("FAIL deviceless cuDNN for an H100: %s\n", tr_error_last());
        return 1;
    }
    const char *version = tr_attn_cudnn_version(a);
    unsigned major = 0, minor = 0, patch = 0;
    sscanf(version, "%u.%u.%u", &major, &minor, &patch);
    size_t version_number = major * 10000 + minor * 100 + patch;
    printf("cuDNN %s, plans for an H100 (sm_90), deviceless\n", version);
    /* B, T, NH, HS: test_cuda_attention's shapes (T not a multiple of 64, head sizes 32, 64, 128), then the
     * trainer's presets (gpt-tiny, gpt-mini, gpt-small, gpt2-124m, and that at B 8 as device_check times it) */
    static const int shapes[][4] = {{2, 67, 2, 64}, {1, 200, 3, 128}, {8, 64, 4, 32},  {3, 128, 4, 32},
                                    {8, 128, 4, 64}, {8, 256, 6, 64}, {4, 1024, 12, 64}, {8, 1024, 12, 64}};
    size_t n_shapes = sizeof shapes / sizeof *shapes, n_small = 3; /* head sizes 64, 128, 32; T % 128 != 0 */
    prepare_all(a, "", shapes, n_shapes, NULL);
    /* the graphs older versions get: the backward's padding mask when T is not a multiple of 128 (up to
     * 9.15.0; with the lowest float before 9.10); the dQ accumulator, with and without it */
    tr_attn_cudnn_test_graphs(a, 91500, false);
    prepare_all(a, " as for 9.15.0", shapes, n_small, NULL);
    tr_attn_cudnn_test_graphs(a, 90900, false);
    prepare_all(a, " as for 9.9.0", shapes, n_small, NULL);
    tr_attn_cudnn_test_graphs(a, version_number, true);
    prepare_all(a, ", dQ accumulator", shapes, n_small, "dQ accumulated");
    tr_attn_cudnn_test_graphs(a, 91500, true);
    prepare_all(a, " as for 9.15.0, dQ accumulator", shapes, n_small, "dQ accumulated");
    tr_attn_cudnn_test_graphs(a, version_number, false);
    size_t ws;
    expect_refused(tr_attn_cudnn_prepare(a, TR_F32, 2, 64, 2, 64, &ws), "fp32 is refused", "F32");
    expect_refused(tr_attn_cudnn_prepare(a, TR_BF16, 2, 64, 2, 60, &ws), "a head size of 60 is refused",
                   "multiple of 8");
    expect_refused(tr_attn_cudnn_prepare(a, TR_BF16, 2, 1, 2, 64, &ws), "a sequence of 1 is refused",
                   "a sequence of 1");
    char stats[16];
    expect_refused(tr_attn_cudnn_forward(a, stats, (float *)stats, stats, TR_BF16, 2, 67, 2, 64, stats, 0),
                   "deviceless plans do not run", "deviceless");
    tr_attn_cudnn_free(a);
    tr_attn_cudnn *bad = NULL;
    expect_refused(tr_attn_cudnn_new(&bad, "{\"deviceName\":\"half a description\"}"),
                   "an incomplete device description is refused", "device properties");
    tr_attn_cudnn_free(bad);
    printf("%d of %d checks failed\n", n_failed, n_checked);
    return n_failed ? 1 : 0;
}
