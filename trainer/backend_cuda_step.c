/* backend_cuda_step.c: the CUDA backend's step_ops (backend.h) over the
 * device state of kernels/step_state.h: the step decided on the device, and
 * the CUDA graph of the training step.
 *
 * The state is one tr_step_state in device memory (cudaMalloc'ed when first
 * loaded, before any capture) with a pinned mirror for loading and reading
 * it back, and the reductions' partial sums beside it; its kernels are in
 * kernels/cuda/optim.cu. Every op runs on the backend's compute stream, so
 * the ops are ordered with the model's without events.
 *
 * The graph: cudaStreamBeginCapture on the compute stream in
 * cudaStreamCaptureModeThreadLocal: this thread may not make calls that
 * would escape the capture (cudaMalloc, synchronizing calls) and gets an
 * error if it does, while other threads (the data loader's workers) are not
 * restricted by our capture. Global mode would also fail their CUDA calls,
 * and Relaxed would let a cudaMalloc in the captured step pass unnoticed.
 * cudaGraphInstantiate once; cudaGraphLaunch per step in an NVTX range
 * "graph replay". The captured step's host memory reads are the pinned
 * inputs only; an event recorded inside the graph (cudaEventRecordExternal)
 * after their last copy tells the host when a replay has read them. */
#include "config.h"

#include "backend_cuda_step.h"

#include "error.h"
#include "kernels_cuda.h"
#include "nvtx.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tr_cuda_step {
    cudaStream_t compute;
    bool sync_every_op;
    tr_step_state *dev;      /* the state, device memory; NULL until loaded */
    tr_step_state *mirror;   /* pinned: loads and read-backs go through it */
    void *scratch;           /* the gradient check's partial sums */
    /* the graph */
    bool capturing, launched;
    const char *inputs;      /* the pinned inputs of the capture */
    size_t inputs_bytes;
    char *inputs_dev;        /* their device address (mapped) */
    cudaEvent_t inputs_read; /* recorded by each replay after its inputs' last copy */
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    void **retired;          /* device buffers the graph may read, replaced since the capture */
    int n_retired;
};

static void fail(const char *what, cudaError_t err)
{
    fprintf(stderr, "trainer: cuda: %s: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
    exit(1);
}

static void check(cudaError_t err, const char *what)
{
    if (err != cudaSuccess)
        fail(what, err);
}

void tr_cuda_step_refuse(const char *what)
{
    fprintf(stderr, "trainer: --cuda-graph: %s while the training step is being captured into a CUDA graph, "
                    "which cannot hold it; train without --cuda-graph\n", what);
    exit(1);
}

int tr_cuda_step_new(tr_cuda_step **out, cudaStream_t compute, bool sync_every_op)
{
    *out = NULL;
    tr_cuda_step *s = calloc(1, sizeof *s);
    if (!s)
        return tr_error_set(TR_ENOMEM, "out of host memory");
    s->compute = compute;
    s->sync_every_op = sync_every_op;
    *out = s;
    return TR_OK;
}

static void destroy_graph(tr_cuda_step *s)
{
    if (s->exec) {
        check(cudaStreamSynchronize(s->compute), "waiting for the last graph replay");
        check(cudaGraphExecDestroy(s->exec), "cudaGraphExecDestroy");
        s->exec = NULL;
    }
    if (s->graph) {
        check(cudaGraphDestroy(s->graph), "cudaGraphDestroy");
        s->graph = NULL;
    }
    s->launched = false;
    for (int i = 0; i < s->n_retired; i++)
        check(cudaFree(s->retired[i]), "cudaFree of a buffer the graph read");
    free(s->retired);
    s->retired = NULL;
    s->n_retired = 0;
}

bool tr_cuda_step_retire(tr_cuda_step *s, void *dev)
{
    if (!dev || (!s->graph && !s->capturing))
        return false;
    void **v = realloc(s->retired, (s->n_retired + 1) * sizeof *v);
    if (!v) {
        fprintf(stderr, "trainer: out of host memory\n");
        exit(1);
    }
    s->retired = v;
    s->retired[s->n_retired++] = dev;
    return true;
}

void tr_cuda_step_free(tr_cuda_step *s)
{
    if (!s)
        return;
    destroy_graph(s);
    if (s->inputs_read)
        cudaEventDestroy(s->inputs_read);
    cudaFree(s->dev);
    cudaFree(s->scratch);
    cudaFreeHost(s->mirror);
    free(s);
}

bool tr_cuda_step_capturing(const tr_cuda_step *s) { return s->capturing; }

bool tr_cuda_step_is_input(const tr_cuda_step *s, const void *p, size_t n)
{
    const char *c = p;
    return s->inputs && c >= s->inputs && n <= s->inputs_bytes && (size_t)(c - s->inputs) <= s->inputs_bytes - n;
}

const float *tr_cuda_step_loss_scale(const tr_cuda_step *s) { return s->dev ? &s->dev->scaler.scale : NULL; }

static tr_cuda_step *step_of(tr_backend *be) { return be->step_ctx; }

/* An op's end, as the backend's: the launch's error, the optional wait. */
static void done(tr_cuda_step *s, const char *op, int err)
{
    if (err)
        fail(op, (cudaError_t)err);
    if (s->sync_every_op && !s->capturing)
        check(cudaStreamSynchronize(s->compute), op);
    tr_nvtx_pop();
}

static float *f32(const char *op, const char *what, const tr_tensor *t)
{
    if (!t)
        return NULL;
    if (t->device != TR_CUDA || t->dtype != TR_F32) {
        fprintf(stderr, "trainer: the cuda backend has no %s kernel for %s as %s on %s (it takes F32 on cuda)\n", op,
                what, tr_dtype_name(t->dtype), t->device == TR_CUDA ? "cuda" : "cpu");
        exit(1);
    }
    return t->data;
}

static tr_step_state *state(tr_cuda_step *s, const char *op)
{
    if (!s->dev) {
        fprintf(stderr, "trainer: cuda: %s before the device step state was loaded\n", op);
        exit(1);
    }
    return s->dev;
}

/* ---- the state ---- */

static int load(tr_backend *be, const tr_step_state *host)
{
    tr_cuda_step *s = step_of(be);
    if (s->capturing)
        tr_cuda_step_refuse("loading the step state");
    if (!s->dev) {
        cudaError_t err = cudaMalloc((void **)&s->dev, sizeof *s->dev);
        if (err == cudaSuccess)
            err = cudaMalloc(&s->scratch, kc_sumsq_scratch_bytes());
        if (err == cudaSuccess)
            err = cudaHostAlloc((void **)&s->mirror, sizeof *s->mirror, cudaHostAllocDefault);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            return tr_error_set(TR_ENOMEM, "the device step state: %s", cudaGetErrorString(err));
        }
    }
    *s->mirror = *host;
    check(cudaMemcpyAsync(s->dev, s->mirror, sizeof *s->dev, cudaMemcpyHostToDevice, s->compute),
          "loading the step state");
    check(cudaStreamSynchronize(s->compute), "loading the step state");
    return TR_OK;
}

static void read_state(tr_backend *be, tr_step_state *host)
{
    tr_cuda_step *s = step_of(be);
    if (s->capturing)
        tr_cuda_step_refuse("reading the step state back");
    tr_nvtx_push_static("read step state");
    check(cudaMemcpyAsync(s->mirror, state(s, "read"), sizeof *s->mirror, cudaMemcpyDeviceToHost, s->compute),
          "reading the step state back");
    check(cudaStreamSynchronize(s->compute), "reading the step state back (a kernel before it failed?)");
    *host = *s->mirror;
    tr_nvtx_pop();
}

static const tr_step_state *state_of(tr_backend *be) { return state(step_of(be), "state"); }

static void begin(tr_backend *be, float lr, const float *lr_src)
{
    tr_cuda_step *s = step_of(be);
    tr_nvtx_push_op("step_begin");
    const float *src = NULL;
    if (lr_src) { /* the replay reads it: the mapped address of the pinned inputs */
        if (!tr_cuda_step_is_input(s, lr_src, sizeof *lr_src)) {
            fprintf(stderr, "trainer: cuda: step_begin: the learning rate is not in the capture's pinned inputs\n");
            exit(1);
        }
        src = (const float *)(s->inputs_dev + ((const char *)lr_src - s->inputs));
    }
    done(s, "step_begin", kc_step_begin(state(s, "step_begin"), lr, src, s->compute));
}

static void add_loss(tr_backend *be, const tr_tensor *losses)
{
    tr_cuda_step *s = step_of(be);
    tr_nvtx_push_op("step_add_loss");
    int64_t n = tr_tensor_numel(losses);
    if (n < 1 || n > INT32_MAX) {
        fprintf(stderr, "trainer: cuda: step_add_loss: %lld losses\n", (long long)n);
        exit(1);
    }
    done(s, "step_add_loss", kc_step_add_loss(state(s, "step_add_loss"), f32("step_add_loss", "losses", losses),
                                              (int)n, s->compute));
}

static void check_grads(tr_backend *be, const tr_tensor *g)
{
    tr_cuda_step *s = step_of(be);
    tr_nvtx_push_op("step_check_grads");
    done(s, "step_check_grads", kc_step_check_grads(state(s, "step_check_grads"), f32("step_check_grads", "g", g),
                                                    (long)tr_tensor_numel(g), s->scratch, s->compute));
}

static void verdict(tr_backend *be)
{
    tr_cuda_step *s = step_of(be);
    tr_nvtx_push_op("step_verdict");
    done(s, "step_verdict", kc_step_verdict(state(s, "step_verdict"), s->compute));
}

/* ---- the graph ---- */

static void *pinned_alloc(tr_backend *be, size_t n)
{
    (void)be;
    void *p = NULL;
    cudaError_t err = cudaHostAlloc(&p, n, cudaHostAllocMapped); /* kernels read the lr from it */
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return p;
}

static void pinned_free(tr_backend *be, void *p)
{
    (void)be;
    if (p)
        check(cudaFreeHost(p), "cudaFreeHost");
}

static int capture_begin(tr_backend *be, const void *inputs, size_t n)
{
    tr_cuda_step *s = step_of(be);
    if (s->exec || s->capturing)
        return tr_error_set(TR_EINVAL, "--cuda-graph: the step is captured already");
    if (!s->dev)
        return tr_error_set(TR_EINVAL, "--cuda-graph: the step state must be loaded before the capture");
    /* what the warm-up queued runs first, and its errors are its own */
    check(cudaStreamSynchronize(s->compute), "waiting for the warm-up steps before the capture");
    void *dev = NULL;
    cudaError_t err = cudaHostGetDevicePointer(&dev, (void *)inputs, 0);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        return tr_error_set(TR_EINVAL, "--cuda-graph: the step's inputs are not mapped pinned memory: %s",
                            cudaGetErrorString(err));
    }
    if (!s->inputs_read)
        check(cudaEventCreateWithFlags(&s->inputs_read, cudaEventDisableTiming), "cudaEventCreate");
    s->inputs = inputs;
    s->inputs_bytes = n;
    s->inputs_dev = dev;
    if ((err = cudaStreamBeginCapture(s->compute, cudaStreamCaptureModeThreadLocal)) != cudaSuccess) {
        (void)cudaGetLastError();
        return tr_error_set(TR_EINVAL, "--cuda-graph: cudaStreamBeginCapture: %s", cudaGetErrorString(err));
    }
    s->capturing = true;
    return TR_OK;
}

static void inputs_read(tr_backend *be)
{
    tr_cuda_step *s = step_of(be);
    if (!s->capturing) {
        fprintf(stderr, "trainer: cuda: inputs_read outside a capture\n");
        exit(1);
    }
    check(cudaEventRecordWithFlags(s->inputs_read, s->compute, cudaEventRecordExternal),
          "recording in the graph that the inputs were read");
}

static int capture_end(tr_backend *be, size_t *n_nodes)
{
    tr_cuda_step *s = step_of(be);
    cudaGraph_t g = NULL;
    cudaError_t err = cudaStreamEndCapture(s->compute, &g);
    s->capturing = false;
    if (err != cudaSuccess || !g) {
        (void)cudaGetLastError();
        if (g)
            cudaGraphDestroy(g);
        return tr_error_set(TR_EINVAL, "--cuda-graph: capturing the step failed: %s (%s); train without --cuda-graph",
                            cudaGetErrorString(err), cudaGetErrorName(err));
    }
    s->graph = g;
    *n_nodes = 0;
    check(cudaGraphGetNodes(g, NULL, n_nodes), "cudaGraphGetNodes");
    if ((err = cudaGraphInstantiate(&s->exec, g, 0)) != cudaSuccess) {
        (void)cudaGetLastError();
        s->exec = NULL;
        return tr_error_set(TR_EINVAL, "--cuda-graph: cudaGraphInstantiate of the step's %zu nodes: %s (%s)",
                            *n_nodes, cudaGetErrorString(err), cudaGetErrorName(err));
    }
    check(cudaGraphUpload(s->exec, s->compute), "cudaGraphUpload"); /* the first replay starts sooner */
    return TR_OK;
}

static void wait_inputs(tr_backend *be)
{
    tr_cuda_step *s = step_of(be);
    if (s->launched)
        check(cudaEventSynchronize(s->inputs_read), "waiting for the last graph replay to read its inputs");
}

static void replay(tr_backend *be)
{
    tr_cuda_step *s = step_of(be);
    if (!s->exec) {
        fprintf(stderr, "trainer: cuda: a graph replay before the capture\n");
        exit(1);
    }
    tr_nvtx_push_static("graph replay");
    check(cudaGraphLaunch(s->exec, s->compute), "cudaGraphLaunch");
    s->launched = true;
    tr_nvtx_pop();
}

static void graph_free(tr_backend *be) { destroy_graph(step_of(be)); }

const tr_step_ops tr_cuda_step_ops = {
    .load = load,
    .read = read_state,
    .state = state_of,
    .begin = begin,
    .add_loss = add_loss,
    .check_grads = check_grads,
    .verdict = verdict,
    .pinned_alloc = pinned_alloc,
    .pinned_free = pinned_free,
    .capture_begin = capture_begin,
    .inputs_read = inputs_read,
    .capture_end = capture_end,
    .wait_inputs = wait_inputs,
    .replay = replay,
    .graph_free = graph_free,
};
