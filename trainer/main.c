/* main.c: the trainer program: flags, presets, the loop over steps (the step
 * itself is train.c's), progress lines, evaluation and checkpoints.
 * It speaks NVTX only (ranges "step N", "data", "forward", "backward",
 * "optimizer", "eval" and one per op; the allocator's memory events), so any
 * NVTX tool can trace it; it does not know gtrace. */
#include "config.h"

#include "alloc.h"
#include "backend.h"
#include "ckpt.h"
#include "data.h"
#include "error.h"
#include "gpt.h"
#include "nvtx.h"
#include "optim.h"
#include "train.h"
#ifdef TR_CUDA_BACKEND
#include "backend_cuda.h"
#endif
#ifdef HAVE_MPI
#include "dist.h"
#include "dist_gpt.h"
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_DATA "/usr/share/games/fortunes"

typedef struct preset {
    const char *name;
    int n_layers, channels, n_heads, seq_len, batch;
    const char *what;
} preset;

static const preset presets[] = {
    {"gpt-tiny", 2, 128, 4, 64, 8, "0.4M parameters: a hundred steps in seconds on 2 cores"},
    {"gpt-mini", 4, 256, 4, 128, 8, "3.2M parameters"},
    {"gpt-small", 6, 384, 6, 256, 8, "10.8M parameters (nanoGPT's character model)"},
    {"gpt2-124m", 12, 768, 12, 1024, 4, "GPT-2 small's shape: 124.4M parameters on a GPT-2 .bin, 86.0M on bytes"},
};

typedef struct options {
    const char *model, *data, *save, *resume, *preset;
    const char *save_format; /* NULL: sharded under --dist fsdp, else full */
    int steps, batch, seq_len, n_layers, channels, n_heads, workers, threads;
    int eval_every, eval_batches, log_every, warmup, accum;
    double lr, weight_decay, val_fraction, loss_scale, init_scale, clip, ema, momentum;
    const char *amp, *checkpoint, *fuse, *optimizer, *schedule;
    unsigned long long seed;
    size_t mem_limit;
    const char *dist;       /* distributed training: NULL, "ddp" or "fsdp" */
    int zero;               /* FSDP's ZeRO stage; 0: not given */
    double bucket_mb, dist_timeout;
    /* the backend; NULL strings are the defaults ("cpu", "off") */
    const char *backend, *pin_memory, *expandable_segments, *sync_every_op, *autotune, *tf32;
    const char *cuda_graph; /* --cuda-graph on|off */
    const char *attention; /* --attention auto|cudnn|own (NULL: auto) */
    int device;             /* -1: not given (0, or under --dist the rank's index on its node) */
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainer [options]\n"
            "Trains a GPT on text (bytes are tokens) or on llm.c token files, on the CPU.\n\n"
            "  --model NAME        gpt-tiny (default), gpt-mini, gpt-small, gpt2-124m\n"
            "  --layers N --width N --heads N   override the preset's shape\n"
            "  --data PATH         a text file, a folder of text files or an llm.c .bin\n"
            "                      (default: " DEFAULT_DATA ")\n"
            "  --steps N           optimizer steps (default 100)\n"
            "  --batch N           sequences per micro-batch (default: the preset's)\n"
            "  --seq N             tokens per sequence (default: the preset's context)\n"
            "  --seed N            weights, data order: the same seed gives the same run (default 1337)\n"
            "  --workers N         data loader threads; 0 loads on the training thread (default 1)\n"
            "  --threads N         compute threads (default: OMP_NUM_THREADS or all cores); on a machine\n"
            "                      shared with busy programs, run with OMP_WAIT_POLICY=passive\n"
            "  --val-fraction X    the last X of the data is the validation split, 0 to 0.9;\n"
            "                      0 trains on everything and turns evaluation off (default 0.1)\n"
            "  --eval-every N      validation loss every N steps, 0 never (default 50)\n"
            "  --eval-batches N    batches per validation (default 8)\n"
            "  --log-every N       a log line every N steps when not on a terminal (default 10)\n"
            "  --mem-limit BYTES   the device's capacity for the caching allocator (K, M, G suffixes)\n"
            "  --save PATH         write a checkpoint (safetensors) at the end\n"
            "  --save-format F     sharded (the default with --dist fsdp, without --ema): each rank writes its shard of the\n"
            "                      weights and optimizer state, PATH.rank<r>-of-<N>; full (the default\n"
            "                      otherwise): gathered to rank 0 into one file at PATH, which one process,\n"
            "                      DDP, or FSDP on any number of ranks resumes from\n"
            "  --resume PATH       continue from a checkpoint: the file PATH, or under --dist fsdp on N ranks\n"
            "                      the shards PATH.rank<r>-of-<N>\n"
            "\nOptimizations (each a switch; --preset sets several, later flags override it):\n"
            "  --preset NAME       baseline: fp32, no fusion, no loader workers, no checkpointing;\n"
            "                      optimized: the fastest settings measured on this backend\n"
            "  --amp MODE          off (default), bf16 or fp16: matrix products and attention in low\n"
            "                      precision, LayerNorm, softmax and the loss in fp32, fp32 master weights\n"
            "  --loss-scale S      a fixed loss scale; fp16 defaults to a dynamic one (GradScaler's rules)\n"
            "  --init-scale S      the dynamic loss scale's start (default 65536)\n"
            "  --checkpoint MODE   none (default), blocks (recompute each block in backward) or\n"
            "                      selective (recompute LayerNorm and GELU only)\n"
            "  --accum K           K micro-batches per step: the update of one K x batch batch (default 1)\n"
            "  --fuse on|off       fused bias+GELU, residual+LayerNorm, softmax+cross-entropy, one-pass\n"
            "                      optimizer and gradient norm (default off)\n"
            "  --optimizer NAME    adamw (default) or sgd\n"
            "  --lr X              peak learning rate (default 0.003)\n"
            "  --momentum X        SGD's momentum (default 0.9 with sgd)\n"
            "  --weight-decay X    decay of matrices and embeddings (default 0.1)\n"
            "  --lr-schedule NAME  constant (default), cosine (to lr/10) or onecycle\n"
            "  --warmup N          linear warmup steps (onecycle: the rising phase, default 30%%)\n"
            "  --clip NORM         clip the global gradient norm (default 0: off)\n"
            "  --ema DECAY         keep an EMA of the weights, used for evaluation (like 0.999)\n"
            "\nDistributed (run under Open MPI's mpirun: mpirun -np N trainer --dist ddp ...; on GPUs with\n"
            "--backend cuda each rank takes the GPU of its index on its node and NCCL carries the gradients\n"
            "and parameters; one rank may also start without mpirun):\n"
            "  --dist MODE         ddp: gradients all-reduced in buckets during backward;\n"
            "                      fsdp: ZeRO sharding of optimizer state, gradients, parameters\n"
            "  --zero N            fsdp's stage: 1 optimizer state, 2 also gradients, 3 also parameters (default 3)\n"
            "  --bucket-mb X       ddp and zero 1: all-reduce bucket size in MiB (default 25)\n"
            "  --dist-timeout S    a collective not done after S seconds stops every rank (default 300)\n"
            "                      --batch is per rank: N ranks of batch B train as one of batch N x B\n"
            "\nCUDA backend (built with the CUDA toolkit):\n"
            "  --backend NAME      cpu (default) or cuda\n"
            "  --device N          the GPU to train on (default 0; under --dist the rank's index on its node)\n"
            "  --pin-memory on|off pinned staging buffers: batches copied on a copy stream while compute\n"
            "                      runs (default off: pageable copies that wait for the compute stream)\n"
            "  --expandable-segments on|off  the allocator's segments mapped into one reserved virtual\n"
            "                      range (cuMemCreate/cuMemMap) instead of cudaMalloc (default off)\n"
            "  --sync-every-op on|off  wait for the GPU after every op: what synchronization costs (default off)\n"
            "  --autotune on|off   time cuBLASLt's candidate algorithms once per GEMM shape (default off)\n"
            "  --attention MODE    auto (default): cuDNN's fused flash attention under --amp bf16|fp16 where\n"
            "                      cuDNN loads and has a plan for the shape, the own kernel otherwise; cudnn:\n"
            "                      cuDNN or an error saying why not; own: the own kernel, which keeps the\n"
            "                      (B,NH,T,T) probabilities where cuDNN keeps (B,NH,T) softmax statistics\n"
            "  --tf32 on|off       fp32 matrix products on tensor cores with TF32 inputs (default off)\n"
            "  --cuda-graph on|off capture the training step into a CUDA graph once, after eager warm-up\n"
            "                      steps (until one takes no new memory, at most 3), and replay it: one launch\n"
            "                      per step (default off; not with --sync-every-op or --dist). With or without\n"
            "                      it, one process on the cuda backend keeps the loss scaler, clipping and\n"
            "                      the optimizer's step on the GPU and reads them back on the steps it prints\n"
            "  --help              this text\n");
}

static void fail_flag(const char *flag, const char *value, const char *expected)
{
    fprintf(stderr, "trainer: %s: expected %s, got '%s' (see trainer --help)\n", flag, expected, value);
    exit(2);
}

static long long parse_int(const char *flag, const char *v, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        char what[96];
        snprintf(what, sizeof what, "an integer from %lld to %lld", lo, hi);
        fail_flag(flag, v, what);
    }
    return x;
}

static double parse_real(const char *flag, const char *v, double lo, double hi)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi)) {
        char what[96];
        snprintf(what, sizeof what, "a number from %g to %g", lo, hi);
        fail_flag(flag, v, what);
    }
    return x;
}

static size_t parse_bytes(const char *flag, const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    double mult = 1;
    if (end != v && *end && !end[1]) {
        switch (*end) {
        case 'K': case 'k': mult = 1024.0; end++; break;
        case 'M': case 'm': mult = 1048576.0; end++; break;
        case 'G': case 'g': mult = 1073741824.0; end++; break;
        default: break;
        }
    }
    if (errno || end == v || *end || !(x * mult >= 1048576.0) || x * mult > 1e15)
        fail_flag(flag, v, "a size of at least 1M, like 512M or 2G");
    return (size_t)(x * mult);
}

static void parse(options *o, int argc, char **argv)
{
    *o = (options){.model = "gpt-tiny", .data = DEFAULT_DATA, .steps = 100, .workers = 1, .eval_every = 50,
                   .eval_batches = 8, .log_every = 10, .lr = 3e-3, .weight_decay = 0.1, .val_fraction = 0.1,
                   .seed = 1337, .accum = 1, .bucket_mb = 25, .dist_timeout = 300, .device = -1, .momentum = -1, .amp = "off", .checkpoint = "none", .fuse = "off",
                   .optimizer = "adamw", .schedule = "constant"};
    /* a preset first, so the flags around it override what it sets */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--preset")) {
            o->preset = argv[i + 1];
            if (!strcmp(o->preset, "baseline")) {
                o->workers = 0;
            } else if (!strcmp(o->preset, "optimized")) {
                /* measured on the cpu backend (bench/results/2026-11-21-optimizations-cpu.md): fusion and
                 * a loader worker pay; AMP costs time there (conversions, no low-precision arithmetic) */
                o->fuse = "on";
                o->workers = 1;
            } else {
                fail_flag("--preset", o->preset, "baseline or optimized");
            }
        }
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            usage(stdout);
            exit(0);
        }
        if (strncmp(f, "--", 2) != 0) {
            fprintf(stderr, "trainer: unexpected argument '%s' (see trainer --help)\n", f);
            exit(2);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "trainer: %s needs a value (see trainer --help)\n", f);
            exit(2);
        }
        const char *v = argv[++i];
        if (!strcmp(f, "--model")) o->model = v;
        else if (!strcmp(f, "--preset")) continue; /* applied above */
        else if (!strcmp(f, "--data")) o->data = v;
        else if (!strcmp(f, "--save")) o->save = v;
        else if (!strcmp(f, "--resume")) o->resume = v;
        else if (!strcmp(f, "--save-format")) o->save_format = v;
        else if (!strcmp(f, "--steps")) o->steps = (int)parse_int(f, v, 0, INT_MAX);
        else if (!strcmp(f, "--batch")) o->batch = (int)parse_int(f, v, 1, 65536);
        else if (!strcmp(f, "--seq")) o->seq_len = (int)parse_int(f, v, 1, 65536);
        else if (!strcmp(f, "--layers")) o->n_layers = (int)parse_int(f, v, 1, 1024);
        else if (!strcmp(f, "--width")) o->channels = (int)parse_int(f, v, 1, 65536);
        else if (!strcmp(f, "--heads")) o->n_heads = (int)parse_int(f, v, 1, 1024);
        else if (!strcmp(f, "--workers")) o->workers = (int)parse_int(f, v, 0, 64);
        else if (!strcmp(f, "--threads")) o->threads = (int)parse_int(f, v, 1, 1024);
        else if (!strcmp(f, "--eval-every")) o->eval_every = (int)parse_int(f, v, 0, INT_MAX);
        else if (!strcmp(f, "--eval-batches")) o->eval_batches = (int)parse_int(f, v, 1, 1000000);
        else if (!strcmp(f, "--log-every")) o->log_every = (int)parse_int(f, v, 1, INT_MAX);
        else if (!strcmp(f, "--warmup")) o->warmup = (int)parse_int(f, v, 0, INT_MAX);
        else if (!strcmp(f, "--accum")) o->accum = (int)parse_int(f, v, 1, 65536);
        else if (!strcmp(f, "--seed")) o->seed = (unsigned long long)parse_int(f, v, 0, LLONG_MAX);
        else if (!strcmp(f, "--lr")) o->lr = parse_real(f, v, 1e-9, 10);
        else if (!strcmp(f, "--weight-decay")) o->weight_decay = parse_real(f, v, 0, 10);
        else if (!strcmp(f, "--val-fraction")) o->val_fraction = parse_real(f, v, 0, 0.9);
        else if (!strcmp(f, "--loss-scale")) o->loss_scale = parse_real(f, v, 1e-30, 1e30);
        else if (!strcmp(f, "--init-scale")) o->init_scale = parse_real(f, v, 1e-30, 1e30);
        else if (!strcmp(f, "--clip")) o->clip = parse_real(f, v, 1e-12, 1e12);
        else if (!strcmp(f, "--ema")) o->ema = parse_real(f, v, 1e-9, 0.999999999);
        else if (!strcmp(f, "--momentum")) o->momentum = parse_real(f, v, 0, 0.999999);
        else if (!strcmp(f, "--mem-limit")) o->mem_limit = parse_bytes(f, v);
        else if (!strcmp(f, "--amp")) o->amp = v;
        else if (!strcmp(f, "--checkpoint")) o->checkpoint = v;
        else if (!strcmp(f, "--fuse")) o->fuse = v;
        else if (!strcmp(f, "--optimizer")) o->optimizer = v;
        else if (!strcmp(f, "--dist")) o->dist = v;
        else if (!strcmp(f, "--zero")) o->zero = (int)parse_int(f, v, 1, 3);
        else if (!strcmp(f, "--bucket-mb")) o->bucket_mb = parse_real(f, v, 0.004, 1024);
        else if (!strcmp(f, "--dist-timeout")) o->dist_timeout = parse_real(f, v, 0.1, 1e6);
        else if (!strcmp(f, "--lr-schedule")) o->schedule = v;
        else if (!strcmp(f, "--backend")) o->backend = v;
        else if (!strcmp(f, "--device")) o->device = (int)parse_int(f, v, 0, 1023);
        else if (!strcmp(f, "--pin-memory")) o->pin_memory = v;
        else if (!strcmp(f, "--expandable-segments")) o->expandable_segments = v;
        else if (!strcmp(f, "--sync-every-op")) o->sync_every_op = v;
        else if (!strcmp(f, "--autotune")) o->autotune = v;
        else if (!strcmp(f, "--attention")) o->attention = v;
        else if (!strcmp(f, "--tf32")) o->tf32 = v;
        else if (!strcmp(f, "--cuda-graph")) o->cuda_graph = v;
        else {
            fprintf(stderr, "trainer: unknown option '%s' (see trainer --help)\n", f);
            exit(2);
        }
    }
}

/* One of names[] -> its index, or a clear error listing them. */
static int pick(const char *flag, const char *v, const char *const *names, int n, const char *expected)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    fail_flag(flag, v, expected);
    return -1;
}

/* --cuda-graph on|off; what a captured step cannot hold is refused by name. */
static bool cuda_graph_on(const options *o)
{
    static const char *const onoff[] = {"off", "on"};
    if (!o->cuda_graph || pick("--cuda-graph", o->cuda_graph, onoff, 2, "on or off") == 0)
        return false;
    const char *why = NULL;
    if (!o->backend || strcmp(o->backend, "cuda"))
        why = "needs --backend cuda: a CUDA graph replays GPU work, and the cpu backend runs its ops on the host";
    else if (o->sync_every_op && pick("--sync-every-op", o->sync_every_op, onoff, 2, "on or off") == 1)
        why = "with --sync-every-op: a replay is one launch of the whole step, there is no op to wait after, and a "
              "wait cannot be captured";
    else if (o->dist)
        why = "with --dist: the collectives are not captured yet";
    if (why) {
        fprintf(stderr, "trainer: --cuda-graph on %s (see trainer --help)\n", why);
        exit(2);
    }
    return true;
}

/* The flags as a train.c configuration; invalid combinations are refused by name. */
static tr_train_config train_config(const options *o)
{
    static const char *const amps[] = {"off", "bf16", "fp16"}, *const ckpts[] = {"none", "blocks", "selective"},
                             *const onoff[] = {"off", "on"}, *const optims[] = {"adamw", "sgd"},
                             *const scheds[] = {"constant", "cosine", "onecycle"};
    static const tr_dtype amp_dtype[] = {TR_F32, TR_BF16, TR_F16};
    tr_train_config c = {
        .accum = o->accum,
        .amp = amp_dtype[pick("--amp", o->amp, amps, 3, "off, bf16 or fp16")],
        .loss_scale = (float)o->loss_scale,
        .init_scale = (float)o->init_scale,
        .checkpoint = (tr_gpt_checkpoint)pick("--checkpoint", o->checkpoint, ckpts, 3, "none, blocks or selective"),
        .fuse = pick("--fuse", o->fuse, onoff, 2, "on or off") == 1,
        .clip = (float)o->clip,
        .ema_decay = (float)o->ema,
        .cuda_graph = cuda_graph_on(o),
    };
    int kind = pick("--optimizer", o->optimizer, optims, 2, "adamw or sgd");
    c.optim = (tr_optim_config){.kind = kind == 0 ? TR_OPTIM_ADAMW : TR_OPTIM_SGD, .beta1 = 0.9f, .beta2 = 0.95f,
                                .eps = 1e-8f, .weight_decay = (float)o->weight_decay};
    if (o->momentum >= 0)
        c.optim.momentum = (float)o->momentum;
    else if (kind == 1)
        c.optim.momentum = 0.9f;
    c.schedule = (tr_schedule){.kind = (tr_schedule_kind)pick("--lr-schedule", o->schedule, scheds, 3,
                                                              "constant, cosine or onecycle"),
                               .lr = (float)o->lr, .min_frac = 0.1f, .warmup = o->warmup, .total_steps = o->steps};
    if (o->init_scale > 0 && !(c.amp == TR_F16 && o->loss_scale == 0)) {
        fprintf(stderr, "trainer: --init-scale is the start of the dynamic loss scale, which only --amp fp16 "
                        "without --loss-scale uses\n");
        exit(2);
    }
    if (tr_train_config_check(&c) < 0) {
        fprintf(stderr, "trainer: %s (see trainer --help)\n", tr_error_last());
        exit(2);
    }
    return c;
}

/* ---- the backend: --backend cpu|cuda and the CUDA switches ---------------- */

#ifdef TR_CUDA_BACKEND
static bool switch_on(const char *flag, const char *v)
{
    static const char *const onoff[] = {"off", "on"};
    return v && pick(flag, v, onoff, 2, "on or off") == 1;
}

/* --attention; cudnn is refused before the device opens where it cannot run. */
static tr_cuda_attention attention_mode(const options *o)
{
    static const char *const modes[] = {"auto", "cudnn", "own"}; /* tr_cuda_attention's order */
    if (!o->attention)
        return TR_CUDA_ATTENTION_AUTO;
    tr_cuda_attention m = (tr_cuda_attention)pick("--attention", o->attention, modes, 3, "auto, cudnn or own");
    if (m == TR_CUDA_ATTENTION_CUDNN && !strcmp(o->amp, "off")) {
        fprintf(stderr, "trainer: --attention cudnn: cuDNN's fused attention has no fp32; add --amp bf16 or --amp "
                        "fp16, or use --attention auto (the own kernel for fp32)\n");
        exit(2);
    }
#ifndef HAVE_CUDNN
    if (m == TR_CUDA_ATTENTION_CUDNN) {
        fprintf(stderr, "trainer: --attention cudnn: this trainer was built without cuDNN (configure found no "
                        "cudnn.h or libcudnn); use --attention auto or own\n");
        exit(2);
    }
#endif
    return m;
}
#endif

/* The CPU backend, or the CUDA one with its switches; CUDA flags without
 * --backend cuda are refused rather than ignored. */
static tr_backend *make_backend(const options *o)
{
    bool cuda = o->backend && !strcmp(o->backend, "cuda");
    if (o->backend && !cuda && strcmp(o->backend, "cpu"))
        fail_flag("--backend", o->backend, "cpu or cuda");
    if (!cuda && o->attention) {
        fprintf(stderr, "trainer: --attention is a switch of --backend cuda (the cpu backend has one attention "
                        "kernel)\n");
        exit(2);
    }
    if (!cuda) {
        if (o->device >= 0 || o->pin_memory || o->expandable_segments || o->sync_every_op || o->autotune || o->tf32) {
            fprintf(stderr, "trainer: --device, --pin-memory, --expandable-segments, --sync-every-op, --autotune "
                            "and --tf32 are switches of --backend cuda\n");
            exit(2);
        }
        return tr_backend_cpu(o->threads);
    }
#ifdef TR_CUDA_BACKEND
    tr_cuda_options co = {.device = o->device < 0 ? 0 : o->device,
                          .pin_memory = switch_on("--pin-memory", o->pin_memory),
                          .expandable_segments = switch_on("--expandable-segments", o->expandable_segments),
                          .sync_every_op = switch_on("--sync-every-op", o->sync_every_op),
                          .autotune = switch_on("--autotune", o->autotune),
                          .tf32 = switch_on("--tf32", o->tf32),
                          .attention = attention_mode(o)};
    tr_backend *be;
    if (tr_backend_cuda_new(&be, &co) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
    return be;
#else
    fprintf(stderr, "trainer: --backend cuda: this trainer was built without the CUDA toolkit (configure found "
                    "none, or no cuBLASLt); use --backend cpu\n");
    exit(2);
#endif
}

static void free_backend(tr_backend *be)
{
#ifdef TR_CUDA_BACKEND
    if (be->device == TR_CUDA)
        tr_backend_cuda_free(be);
#else
    (void)be;
#endif
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The mean validation loss; under distributed training each rank takes its
 * rows of the global batch and the ranks average. */
static float evaluate(tr_trainer *t, tr_loader *val, int n_batches, int B, int T)
{
    tr_gpt *m = t->model;
    tr_nvtx_push_static("eval");
    tr_check(tr_loader_seek(val, 0)); /* the same batches every time: comparable numbers */
    double s = 0;
    size_t row0 = (size_t)t->row0 * T;
    for (int i = 0; i < n_batches; i++) {
        const tr_batch *b;
        float loss;
        tr_check(tr_loader_next(val, &b));
#ifdef HAVE_MPI
        if (t->dist)
            tr_check(tr_dist_gpt_forward_begin(t->dist));
#endif
        tr_check(tr_gpt_forward(m, b->inputs + row0, b->targets + row0, B, T, false, &loss));
        s += loss;
    }
    float mean = (float)(s / n_batches);
#ifdef HAVE_MPI
    if (t->dist) {
        tr_check(tr_dist_gpt_eval_end(t->dist));
        tr_check(tr_dist_gpt_mean(t->dist, &mean));
    }
#endif
    tr_nvtx_pop();
    return mean;
}

/* ---- distributed training: start-up and the configuration check ---------- */

#ifdef HAVE_MPI
/* MPI starts before anything else; ranks other than 0 print errors only. */
static tr_dist *dist_start(const options *o)
{
    if (!o->dist)
        return NULL;
    if (strcmp(o->dist, "ddp") && strcmp(o->dist, "fsdp"))
        fail_flag("--dist", o->dist, "ddp or fsdp");
    tr_dist *d;
    tr_check(tr_dist_init(&d, o->dist_timeout));
    if (tr_dist_rank(d) != 0 && !freopen("/dev/null", "w", stdout))
        perror("trainer: /dev/null");
    return d;
}

/* Every flag and shape that changes the training must match on all ranks. */
static void dist_agree(tr_dist *d, const options *o, const tr_gpt *m, const tr_dataset *data)
{
    tr_dist_setting s[40];
    int n = 0;
#define SET(flag, ...) (s[n].name = (flag), snprintf(s[n].value, sizeof s[n].value, __VA_ARGS__), n++)
    SET("--model", "%s", o->model);
    SET("--layers/--width/--heads", "%d/%d/%d", m->cfg.n_layers, m->cfg.channels, m->cfg.n_heads);
    SET("--seq", "%d", o->seq_len);
    SET("--batch", "%d", o->batch);
    SET("--accum", "%d", o->accum);
    SET("--steps", "%d", o->steps);
    SET("--lr", "%.9g", o->lr);
    SET("--warmup", "%d", o->warmup);
    SET("--lr-schedule", "%s", o->schedule);
    SET("--weight-decay", "%.9g", o->weight_decay);
    SET("--optimizer", "%s", o->optimizer);
    SET("--momentum", "%.9g", o->momentum);
    SET("--seed", "%llu", o->seed);
    SET("--amp", "%s", o->amp);
    SET("--loss-scale", "%.9g", o->loss_scale);
    SET("--init-scale", "%.9g", o->init_scale);
    SET("--checkpoint", "%s", o->checkpoint);
    SET("--fuse", "%s", o->fuse);
    SET("--clip", "%.9g", o->clip);
    SET("--ema", "%.9g", o->ema);
    SET("--data", "%s", o->data);
    SET("data tokens", "%zu", data->n_tokens);
    SET("--val-fraction", "%.9g", o->val_fraction);
    SET("--eval-every", "%d", o->eval_every);
    SET("--eval-batches", "%d", o->eval_batches);
    SET("--dist", "%s", o->dist);
    SET("--backend", "%s", o->backend ? o->backend : "cpu");
    SET("--zero", "%d", o->zero);
    SET("--bucket-mb", "%.9g", o->bucket_mb);
    SET("--dist-timeout", "%.9g", o->dist_timeout);
    SET("--resume", "%s", o->resume ? o->resume : "");
    SET("--save", "%s", o->save ? o->save : "");
    SET("--save-format", "%s", o->save_format);
    SET("parameters", "%zu", m->n_params);
#undef SET
    if (tr_dist_agree(d, s, n) < 0) {
        fprintf(stderr, "trainer: rank %d: %s\n", tr_dist_rank(d), tr_error_last());
        tr_dist_free(d);
        exit(2);
    }
}
#endif

/* --dist without MPI, or mpirun without --dist: both would train wrong. */
static void dist_check_flags(const options *o)
{
    const char *np = getenv("OMPI_COMM_WORLD_SIZE");
    if (!o->dist && np && atoi(np) > 1) {
        fprintf(stderr, "trainer: started by mpirun with %s ranks but without --dist: each would train alone; "
                        "add --dist ddp or --dist fsdp\n", np);
        exit(2);
    }
    if (o->zero && !(o->dist && !strcmp(o->dist, "fsdp"))) {
        fprintf(stderr, "trainer: --zero is the stage of --dist fsdp\n");
        exit(2);
    }
#ifndef HAVE_MPI
    if (o->dist) {
        fprintf(stderr, "trainer: --dist %s needs Open MPI, and this trainer was built without it "
                        "(apt-get install libopenmpi-dev openmpi-bin, then configure and make again)\n", o->dist);
        exit(2);
    }
#elif defined(TR_CUDA_BACKEND) && !defined(TR_DIST_NCCL) /* without the backend, make_backend says so */
    if (o->dist && o->backend && !strcmp(o->backend, "cuda")) {
        fprintf(stderr, "trainer: --dist %s on --backend cuda needs NCCL, and this trainer was built without it "
                        "(configure finds it in the CUDA toolkit: nccl.h and libnccl); use --backend cpu\n", o->dist);
        exit(2);
    }
#endif
}

/* ---- checkpoints: --save, --save-format, --resume ------------------------- */

/* Sharded by default under --dist fsdp (FSDP's SHARDED_STATE_DICT), one
 * full file otherwise; sharded needs --dist fsdp, the one mode with shards.
 * The weight EMA is whole on every rank, so --ema saves full files. */
static void checkpoint_flags(options *o)
{
    bool fsdp = o->dist && !strcmp(o->dist, "fsdp");
    static const char *const formats[] = {"sharded", "full"};
    if (!o->save_format)
        o->save_format = fsdp && !(o->ema > 0) ? "sharded" : "full";
    else if (!o->save) {
        fprintf(stderr, "trainer: --save-format is the format of --save PATH, which is missing\n");
        exit(2);
    }
    if (pick("--save-format", o->save_format, formats, 2, "sharded or full") == 0 && !fsdp) {
        fprintf(stderr, "trainer: --save-format sharded needs --dist fsdp: %s holds everything in one process, "
                        "and its checkpoint is one file\n", o->dist ? "ddp" : "a run without --dist");
        exit(2);
    }
    if (!strcmp(o->save_format, "sharded") && o->ema > 0) {
        fprintf(stderr, "trainer: --save-format sharded with --ema: every rank keeps the whole weight EMA, which "
                        "is saved in full checkpoints only; use --save-format full\n");
        exit(2);
    }
}

/* A checkpoint not saved or resumed: each rank prints its reason (the
 * ranks agreed on failing, so all stop here and MPI ends cleanly). */
static void fail_checkpoint(tr_trainer *t)
{
#ifdef HAVE_MPI
    if (t->dist) {
        tr_dist *d = tr_dist_gpt_dist(t->dist);
        fprintf(stderr, "trainer: rank %d: %s\n", tr_dist_rank(d), tr_error_last());
        tr_trainer_release(t);
        tr_dist_free(d);
        exit(1);
    }
#endif
    fprintf(stderr, "trainer: %s\n", tr_error_last());
    exit(1);
}

static void save_checkpoint(const options *o, tr_trainer *t, int64_t step, uint64_t seed, int rank, int n_ranks)
{
    tr_ckpt_state cs = {.step = step, .seed = seed, .ema = t->ema.w.data ? &t->ema.w : NULL};
    if (t->scaler.dynamic) { /* a resumed fp16 run goes on with the scale it had learned */
        cs.loss_scale = t->scaler.scale;
        cs.loss_scale_good_steps = t->scaler.good_steps;
    }
    bool full = !strcmp(o->save_format, "full");
    int rc;
#ifdef HAVE_MPI
    if (t->dist)
        rc = tr_dist_gpt_save(t->dist, o->save, full, &t->opt, &cs);
    else
#endif
        rc = tr_ckpt_save(o->save, t->model, &t->opt, &cs);
    if (rc < 0)
        fail_checkpoint(t);
    if (rank != 0)
        return;
    if (full)
        printf("trainer: saved %s%s\n", o->save, n_ranks > 1 && t->shard_end - t->shard_begin < t->model->n_params ?
               " (gathered from every rank's shard)" : "");
    else
        printf("trainer: saved %s.rank0-of-%d to %s.rank%d-of-%d (one shard per rank)\n", o->save, n_ranks, o->save,
               n_ranks - 1, n_ranks);
    /* one checkpoint per name: what an earlier save of the other kind left would make --resume ambiguous */
    int n_stale = tr_ckpt_remove_stale(o->save, full ? TR_CKPT_FULL : TR_CKPT_SHARDED, n_ranks);
    if (n_stale > 0)
        printf("trainer: removed %d file(s) an earlier checkpoint left at %s\n", n_stale, o->save);
}

/* --save is checked before any work: a run whose checkpoint cannot be
 * written (a device, a FIFO or a folder at the path, a folder that is
 * missing or not writable) is refused now rather than after training.
 * Each rank checks the file it will write. */
static int check_save(const options *o, int rank, int n_ranks)
{
    if (!o->save)
        return TR_OK;
    if (!strcmp(o->save_format, "full"))
        return rank == 0 ? tr_ckpt_check_target(o->save) : TR_OK;
    char *file = tr_ckpt_shard_path(o->save, rank, n_ranks);
    if (!file)
        return tr_error_set(TR_ENOMEM, "out of memory checking %s", o->save);
    int rc = tr_ckpt_check_target(file);
    free(file);
    return rc;
}

/* ---- memory limits (ulimit -v, ulimit -d) -------------------------------------- */

/* OpenBLAS maps one buffer per thread that calls a GEMM, at its first call,
 * and keeps it: BUFFER_SIZE (128 MiB on x86_64) and a page. When that fails
 * it retries without end (0.3.21's blas_memory_alloc spins), so a run under
 * a limit that leaves no room for the buffers would hang in its first
 * matrix product. Each thread also takes a stack and a malloc arena. */
#define BLAS_BUFFER_BYTES (((size_t)128 << 20) + 4096)
#define THREAD_BYTES ((size_t)72 << 20) /* an 8 MiB stack and a 64 MiB malloc arena */
#define SLACK_BYTES ((size_t)64 << 20)  /* small allocations outside the caching allocator */

/* The parameters tr_gpt_new allocates (llm.c's count, wte's padding rows included). */
static size_t param_count(const tr_gpt_config *c)
{
    size_t C = (size_t)c->channels, L = (size_t)c->n_layers;
    return (size_t)c->padded_vocab_size * C + (size_t)c->max_seq_len * C + L * (12 * C * C + 13 * C) + 2 * C;
}

/* Field k of /proc/self/statm (0: all mappings, 5: data and stack), in bytes; 0 if unknown. */
static size_t statm_bytes(int k)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long long v[7] = {0};
    if (f) {
        if (fscanf(f, "%llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
            v[k] = 0;
        fclose(f);
    }
    return (size_t)v[k] * (size_t)sysconf(_SC_PAGESIZE);
}

static double gib(double bytes) { return bytes / 1073741824.0; }

/* The limits that count OpenBLAS's buffers: the address space, and since
 * Linux 4.7 the data size (private writable mappings). */
static const struct mem_rlimit {
    int resource;
    const char *name, *shell; /* the limit, and how a shell sets it */
    int statm_field;          /* what the limit counts now */
} mem_rlimits[] = {
    {RLIMIT_AS, "address-space limit", "ulimit -v", 0},
    {RLIMIT_DATA, "data-size limit", "ulimit -d", 5},
};

/* Under RLIMIT_AS or RLIMIT_DATA on the CPU backend: refuses a run whose
 * model states (parameters, gradients, optimizer state, EMA, AMP copy:
 * bytes known before anything is allocated) and BLAS buffers cannot fit,
 * with the numbers and the ways out; else returns the caching allocator's
 * capacity that keeps room for the buffers, so the activations run out of
 * memory with the allocator's error instead of hanging OpenBLAS. 0: no limit. */
static size_t memory_limit_cap(const options *o, const tr_backend *be, const tr_gpt_config *cfg)
{
    if (be->device != TR_CPU)
        return 0;
    size_t n_threads = (size_t)be->n_threads, threads = n_threads * (BLAS_BUFFER_BYTES + THREAD_BYTES);
    bool sgd = !strcmp(o->optimizer, "sgd");
    double per_param = 8.0 + (sgd ? (o->momentum != 0 ? 4.0 : 0.0) : 8.0) + (o->ema > 0 ? 4.0 : 0.0) +
                       (strcmp(o->amp, "off") ? 2.0 : 0.0);
    /* one process holds all of it; a ZeRO rank a share that this does not model: only the reserve then */
    double states = o->dist ? 0.0 : per_param * (double)param_count(cfg);
    size_t cap = 0, bound_limit = 0;
    const struct mem_rlimit *bound = NULL;
    for (size_t i = 0; i < sizeof mem_rlimits / sizeof *mem_rlimits; i++) {
        const struct mem_rlimit *r = &mem_rlimits[i];
        struct rlimit rl;
        if (getrlimit(r->resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
            continue;
        size_t limit = (size_t)rl.rlim_cur;
        size_t rest = statm_bytes(r->statm_field) + (size_t)o->workers * THREAD_BYTES + SLACK_BYTES;
        if ((double)(rest + threads) + states > (double)limit) {
            fprintf(stderr, "trainer: the %s (%s) is %.2f GiB and this run needs %.2f GiB before its activations: "
                            "%.2f GiB of model states (%.0f bytes per parameter), %.2f GiB for %zu compute thread(s) "
                            "(OpenBLAS maps a 128 MiB buffer for each, and would hang without it), %.2f GiB for the "
                            "program and its other threads; raise the limit (%s unlimited), or use fewer --threads or "
                            "a smaller --model, --batch or --seq\n",
                    r->name, r->shell, gib((double)limit), gib((double)(rest + threads) + states), gib(states),
                    per_param, gib((double)threads), n_threads, gib((double)rest), r->shell);
            exit(1);
        }
        if (!bound || limit - rest - threads < cap) {
            cap = limit - rest - threads;
            bound = r;
            bound_limit = limit;
        }
    }
    if (bound)
        printf("trainer: the %s (%s) of %.2f GiB leaves %.2f GiB to the caching allocator (the program and "
               "OpenBLAS's buffers for %zu thread(s) keep the rest)\n", bound->name, bound->shell,
               gib((double)bound_limit), gib((double)cap), n_threads);
    return cap;
}

int main(int argc, char **argv)
{
    options o;
    parse(&o, argc, argv);
    const preset *p = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
        if (!strcmp(o.model, presets[i].name))
            p = &presets[i];
    if (!p)
        fail_flag("--model", o.model, "gpt-tiny, gpt-mini, gpt-small or gpt2-124m");
    int B = o.batch ? o.batch : p->batch, T = o.seq_len ? o.seq_len : p->seq_len;
    o.batch = B;
    o.seq_len = T;
    if ((int64_t)B * T > INT_MAX) { /* the model counts a micro-batch's rows (B x T) in an int */
        fprintf(stderr, "trainer: --batch %d x --seq %d is %lld tokens per micro-batch: more than %d; use a smaller "
                        "--batch or --seq (or --accum to train on more per step)\n", B, T, (long long)B * T, INT_MAX);
        exit(2);
    }
    dist_check_flags(&o);
    checkpoint_flags(&o);
    int rank = 0, n_ranks = 1; /* the loader yields n_ranks x B rows; this rank trains on its B */
#ifdef HAVE_MPI
    tr_dist *dist = dist_start(&o);
    tr_dist_gpt_config dist_cfg = {.strategy = o.dist && !strcmp(o.dist, "fsdp") ? TR_DIST_FSDP : TR_DIST_DDP,
                                   .zero = o.zero ? o.zero : 3, .bucket_bytes = (size_t)(o.bucket_mb * 1048576.0)};
    if (dist) {
        rank = tr_dist_rank(dist);
        n_ranks = tr_dist_size(dist);
        if (o.device < 0 && o.backend && !strcmp(o.backend, "cuda")) /* one GPU per rank of a node */
            o.device = tr_dist_local_rank(dist);
    }
#endif

    int save_rc = check_save(&o, rank, n_ranks);
#ifdef HAVE_MPI
    if (dist) { /* every rank stops if one cannot save: the failing ones say why */
        int ok = save_rc == TR_OK;
        tr_check(tr_dist_allreduce_min_int(dist, &ok, 1, "checking --save"));
        if (!ok) {
            if (save_rc < 0)
                fprintf(stderr, "trainer: rank %d: %s\n", rank, tr_error_last());
            tr_dist_free(dist);
            exit(1);
        }
    }
#endif
    if (save_rc < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }

    tr_dataset *data;
    if (tr_dataset_open(&data, o.data) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
    tr_dataset_split(data, o.val_fraction);
    if (o.val_fraction == 0)
        o.eval_every = 0;
    size_t n_val = data->n_tokens - data->n_train;
    if (data->n_train < (size_t)T + 1) { /* a sample is T + 1 tokens: T inputs and the next token of each */
        fprintf(stderr, "trainer: the data %s holds %zu tokens, %zu of them for training: fewer than one sample of "
                        "--seq %d needs (%d); use more data or a smaller --seq\n", o.data, data->n_tokens,
                data->n_train, T, T + 1);
        exit(1);
    }
    if (o.eval_every && n_val < (size_t)T + 1) {
        fprintf(stderr, "trainer: the data %s holds %zu tokens, %zu of them for validation (--val-fraction %g): "
                        "fewer than one sample of --seq %d needs (%d); use a larger --val-fraction, --val-fraction 0 "
                        "(no evaluation) or a smaller --seq\n", o.data, data->n_tokens, n_val, o.val_fraction, T,
                T + 1);
        exit(1);
    }
    tr_gpt_config cfg = {.max_seq_len = T > p->seq_len ? T : p->seq_len, .vocab_size = data->vocab_size,
                         .n_layers = o.n_layers ? o.n_layers : p->n_layers,
                         .n_heads = o.n_heads ? o.n_heads : p->n_heads,
                         .channels = o.channels ? o.channels : p->channels};
    tr_gpt_config_finish(&cfg);
    tr_check(tr_gpt_config_check(&cfg));

    cuda_graph_on(&o); /* what --cuda-graph cannot do is refused before the device opens */
    tr_backend *be = make_backend(&o);
    size_t as_cap = memory_limit_cap(&o, be, &cfg), mem_limit = o.mem_limit;
    if (as_cap && (!mem_limit || as_cap < mem_limit))
        mem_limit = as_cap;
    tr_alloc *alloc;
    tr_check(tr_alloc_new(&alloc, &be->mem, mem_limit));
    tr_gpt *model;
    tr_check(tr_gpt_new(&model, &cfg, be, alloc, o.seed));
    tr_train_config tc = train_config(&o);
#ifdef HAVE_MPI
    if (dist) {
        dist_agree(dist, &o, model, data);
        if (tr_dist_use_backend(dist, be) < 0) { /* on a GPU: the NCCL communicator */
            fprintf(stderr, "trainer: rank %d: %s\n", rank, tr_error_last());
            exit(1);
        }
        tc.dist = dist;
        tc.dist_cfg = &dist_cfg;
    }
#endif
    tr_trainer trainer;
    tr_check(tr_trainer_init(&trainer, model, &tc));
    trainer.row0 = rank * B;
    int step0 = 0;
    uint64_t seed = o.seed;
    if (o.resume) {
        tr_ckpt_state st = {.ema = trainer.ema.w.data ? &trainer.ema.w : NULL};
        int rc;
#ifdef HAVE_MPI
        if (trainer.dist)
            rc = tr_dist_gpt_load(trainer.dist, o.resume, &trainer.opt, &st); /* a full file or this rank's shard */
        else
#endif
            rc = tr_ckpt_load(o.resume, model, &trainer.opt, &st);
        if (rc < 0)
            fail_checkpoint(&trainer);
        if (st.step > INT_MAX - o.steps) { /* steps are counted in an int */
            tr_error_set(TR_EFORMAT, "%s was saved at step %lld: %d more steps pass the last step the trainer counts "
                         "(%d); use fewer --steps", o.resume, (long long)st.step, o.steps, INT_MAX);
            fail_checkpoint(&trainer);
        }
        if (trainer.scaler.dynamic && st.loss_scale > 0 &&
            st.loss_scale_good_steps >= trainer.scaler.growth_interval) {
            tr_error_set(TR_EFORMAT, "%s: the metadata's loss_scale_good_steps is %d: expected below the loss scale's "
                         "growth interval (%d)", o.resume, st.loss_scale_good_steps, trainer.scaler.growth_interval);
            fail_checkpoint(&trainer);
        }
        step0 = (int)st.step;
        seed = st.seed; /* the data order continues as the saved run drew it */
        if (trainer.scaler.dynamic && st.loss_scale > 0) {
            trainer.scaler.scale = (float)st.loss_scale;
            trainer.scaler.good_steps = st.loss_scale_good_steps;
        }
        if (st.ema && !st.ema_loaded) { /* a file saved without --ema: the average starts at the resumed weights */
            be->copy_d2h(be, st.ema->data, model->params_flat.data, model->n_params * sizeof(float), 0);
            fprintf(stderr, "trainer: %s holds no weight EMA; --ema starts from the resumed weights\n", o.resume);
        }
        fprintf(stderr, "trainer: resumed %s at step %d%s\n", o.resume, step0, st.ema_loaded ? " (with its EMA)" : "");
    }
    int end = step0 + o.steps;
    if ((double)end * o.accum * B * n_ranks > 9e18) { /* the loader numbers samples in an int64 */
        fprintf(stderr, "trainer: %d steps x --accum %d x --batch %d x %d rank(s) is more samples than the loader "
                        "counts; use fewer --steps or a smaller --accum or --batch\n", end, o.accum, B, n_ranks);
        exit(2);
    }
    trainer.cfg.schedule.total_steps = end; /* the schedule spans the whole run, resumed or not */
    tr_loader *train, *val = NULL;
    tr_check(tr_loader_new(&train, data, 0, data->n_train, B * n_ranks, T, seed, o.workers, be));
    tr_check(tr_loader_seek(train, (int64_t)step0 * o.accum)); /* accum micro-batches per step */
    if (o.eval_every)
        tr_check(tr_loader_new(&val, data, data->n_train, data->n_tokens, B * n_ranks, T, seed, 0, be));

    /* n_params counts the (Vp - V) zero padding rows of wte, as llm.c does */
    size_t n_unpadded = model->n_params - (size_t)(cfg.padded_vocab_size - cfg.vocab_size) * cfg.channels;
    printf("trainer: %s on %s: %d layers, width %d, %d heads, context %d, vocabulary %d (padded to %d); "
           "%zu parameters (%zu without the padding rows)\n",
           p->name, be->name, cfg.n_layers, cfg.channels, cfg.n_heads, T, cfg.vocab_size, cfg.padded_vocab_size,
           model->n_params, n_unpadded);
    printf("trainer: data %s: %zu tokens from %d file(s), %zu train, %zu validation; batch %d x %d",
           o.data, data->n_tokens, data->n_files, data->n_train, data->n_tokens - data->n_train, B, T);
    if (o.accum > 1)
        printf(" x %d micro-batches", o.accum);
    printf("; %d thread(s), %d loader worker(s)\n", be->n_threads, o.workers);
#ifdef TR_CUDA_BACKEND
    if (be->device == TR_CUDA)
        printf("trainer: cuda device %d: %s\n", o.device < 0 ? 0 : o.device, tr_backend_cuda_describe(be));
#endif
    printf("trainer: %s%samp %s%s, checkpointing %s, fusion %s, %s, lr %g %s%s%s\n", o.preset ? "preset " : "",
           o.preset ? o.preset : "", o.amp,
           trainer.scaler.dynamic ? " (dynamic loss scale)" : trainer.scaler.enabled ? " (fixed loss scale)" : "",
           o.checkpoint, o.fuse, o.optimizer, o.lr, o.schedule, o.ema > 0 ? ", ema" : "",
           tc.cuda_graph ? ", cuda graph" : "");
#ifdef HAVE_MPI
    tr_dist_stats comm0 = {0};
    double states_bytes = 0; /* allocated after the last step: the model states */
    if (dist) {
        printf("trainer: %s over %d ranks (%s): batch %d per rank, %d in all\n", tr_dist_gpt_name(trainer.dist),
               n_ranks, tr_dist_transport(dist), B, B * n_ranks);
        tr_check(tr_dist_barrier(dist, "start")); /* time the steps, not the start-up */
        tr_check(tr_dist_get_stats(dist, &comm0));
    }
#endif
    fflush(stdout);
    bool tty = isatty(STDOUT_FILENO);
#ifdef HAVE_MPI
    tty = tty && !dist; /* mpirun hands rank 0 a pseudo-terminal; its output is a log */
#endif
    double t_start = now_s(), last_loss = NAN;
    int64_t tokens_per_step = (int64_t)B * T * o.accum;
    for (int step = step0; step < end; step++) {
        double t0 = now_s();
        tr_step_result r;
        /* on a GPU the loss is read back (a wait for the device) only on the steps that print it */
        trainer.skip_loss = be->device == TR_CUDA && !(tty || (step - step0 + 1) % o.log_every == 0 ||
                                                       step == step0 || step + 1 == end);
        tr_check(tr_train_step(&trainer, train, step, B, T, &r));
        if (!trainer.skip_loss && !isfinite(r.loss)) {
            fprintf(stderr, "trainer: the loss is %f at step %d: diverged (try a lower --lr)\n", r.loss, step);
            return 1;
        }
        last_loss = r.loss;
        if (r.graph_captured) {
            tr_alloc_stats as;
            tr_alloc_get_stats(alloc, &as);
            printf("%strainer: step %d captured into a CUDA graph of %zu nodes after %d warm-up step(s), replayed "
                   "from here on; its private pool holds %.1f MiB\n", tty ? "\r\033[K" : "", step + 1,
                   trainer.graph.n_nodes, trainer.graph.n_warmup, as.graph_pool_bytes / 1048576.0);
        }
#ifdef HAVE_MPI
        if (dist && step + 1 == end) {
            tr_alloc_stats as;
            tr_alloc_get_stats(alloc, &as);
            states_bytes = (double)as.allocated_bytes;
        }
#endif
        double dt = now_s() - t0, elapsed = now_s() - t_start;
        int done = step - step0 + 1;
        tr_alloc_stats st;
        tr_alloc_get_stats(alloc, &st);
        double eta = elapsed / done * (end - step - 1);
        if (tty || done % o.log_every == 0 || step == step0 || step + 1 == end || r.skipped) {
            if (isnan(r.loss) && trainer.skip_loss) /* a skipped step between logging steps: not read back */
                printf("step %d/%d loss n/a lr %.2e", step + 1, end, r.lr);
            else
                printf("%sstep %d/%d loss %.4f lr %.2e", tty ? "\r\033[K" : "", step + 1, end, r.loss, r.lr);
            if (trainer.scaler.enabled)
                printf(" scale %g%s", r.scale, r.skipped ? " (skipped: inf/NaN gradients)" : "");
            if (isfinite(r.grad_norm))
                printf(" norm %.3f", r.grad_norm);
            printf(" %.0f tok/s %.1f ms/step mem %.1f/%.1f MiB eta %.0fs%s", tokens_per_step / dt, dt * 1e3,
                   st.allocated_bytes / 1048576.0, st.reserved_bytes / 1048576.0, eta, tty ? "" : "\n");
            fflush(stdout);
        }
        if (val && ((step + 1) % o.eval_every == 0 || step + 1 == end)) {
            tr_trainer_eval_weights(&trainer, true);
            float vl = evaluate(&trainer, val, o.eval_batches, B, T);
            tr_trainer_eval_weights(&trainer, false);
            printf("%sstep %d val loss %.4f%s\n", tty ? "\r\033[K" : "", step + 1, vl,
                   trainer.ema.w.data ? " (ema weights)" : "");
            fflush(stdout);
        }
    }
    double total = now_s() - t_start;
    tr_trainer_sync(&trainer); /* a step decided on the device: its scale, skips and optimizer step count */
    tr_alloc_stats st;
    tr_alloc_get_stats(alloc, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%strainer: %d steps in %.2f s, %.0f tok/s; final loss %.4f; peak allocated %.1f MiB, peak reserved "
           "%.1f MiB, peak activations %.1f MiB, peak RSS %.1f MiB\n",
           tty ? "\r\033[K" : "", o.steps, total, o.steps * (double)tokens_per_step / (total > 0 ? total : 1),
           last_loss, st.peak_allocated_bytes / 1048576.0, st.peak_reserved_bytes / 1048576.0,
           model->peak_activation_bytes / 1048576.0, ru.ru_maxrss / 1024.0);
    if (trainer.scaler.enabled)
        printf("trainer: loss scale %g at the end, %lld step(s) skipped for inf/NaN gradients\n",
               trainer.scaler.scale, (long long)trainer.scaler.n_skipped);
    if (tc.cuda_graph && trainer.graph.captured_at >= 0)
        printf("trainer: cuda graph: %d warm-up step(s), captured at step %d, %lld replay(s)\n",
               trainer.graph.n_warmup, trainer.graph.captured_at + 1, (long long)trainer.graph.n_replays);
    else if (tc.cuda_graph)
        printf("trainer: cuda graph: %d warm-up step(s); the run ended before the capture\n", trainer.graph.n_warmup);
#ifdef HAVE_MPI
    if (dist) {
        /* the ZeRO accounting, and how much communication compute hid */
        tr_dist_gpt_memory mem;
        double optim_bytes = trainer.opt.m.data ? (trainer.opt.v.data ? 8.0 : 4.0) : 0.0;
        tr_dist_gpt_get_memory(trainer.dist, optim_bytes, &mem);
        tr_dist_stats c1;
        tr_check(tr_dist_get_stats(dist, &c1));
        double steps = o.steps > 0 ? o.steps : 1;
        double fl = (c1.in_flight_ns - comm0.in_flight_ns) / 1e6 / steps;
        double ex = (c1.exposed_ns - comm0.exposed_ns) / 1e6 / steps;
        printf("trainer: rank 0 model states: expected %.3f MiB (amp %s), measured %.3f MiB after the last step; "
               "the ZeRO paper's mixed-precision figure %.3f MiB\n",
               mem.expected_bytes / 1048576.0, o.amp, states_bytes / 1048576.0, mem.paper_bytes / 1048576.0);
        printf("trainer: communication per step: %.0f collectives, %.2f MiB sent, %.2f ms in flight, %.2f ms "
               "exposed, %.0f%% hidden behind compute\n",
               (c1.n_collectives - comm0.n_collectives) / steps, (c1.bytes - comm0.bytes) / 1048576.0 / steps, fl, ex,
               fl > 0 ? 100.0 * (fl - ex > 0 ? fl - ex : 0) / fl : 0.0);
    }
#endif
    if (o.save)
        save_checkpoint(&o, &trainer, end, seed, rank, n_ranks);
    tr_loader_free(train);
    tr_loader_free(val);
    tr_trainer_release(&trainer);
    tr_gpt_free(model);
    tr_alloc_free(alloc);
    free_backend(be);
    tr_dataset_free(data);
#ifdef HAVE_MPI
    tr_dist_free(dist);
#endif
    return 0;
}
