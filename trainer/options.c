/* options.c: the trainer's flags (options.h): the usage text, parsing,
 * presets, the checks of flags against each other and against this build,
 * and the tr_train_config they make. It opens no file and no device. */
#include "config.h"

#include "options.h"

#include "data_idx.h"
#include "error.h"
#include "model_cnn.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tr_preset presets[] = {
    {"gpt-tiny", 2, 128, 4, 64, 8, "0.4M parameters: a hundred steps in seconds on 2 cores"},
    {"gpt-mini", 4, 256, 4, 128, 8, "3.2M parameters"},
    {"gpt-small", 6, 384, 6, 256, 8, "10.8M parameters (nanoGPT's character model)"},
    {"gpt2-124m", 12, 768, 12, 1024, 4, "GPT-2 small's shape: 124.4M parameters on a GPT-2 .bin, 86.0M on bytes"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: trainer [options]\n"
            "Trains a GPT on text (bytes are tokens) or on llm.c token files, on the CPU.\n\n"
            "  --model NAME        gpt-tiny (default), gpt-mini, gpt-small, gpt2-124m; or an image classifier on\n"
            "                      Fashion-MNIST: cnn-guide (PyTorch's two conv and two linear layers) or\n"
            "                      cnn-resnet (a small ResNet: BatchNorm, three residual blocks)\n"
            "  --layers N --width N --heads N   override the preset's shape\n"
            "  --data PATH         a text file, a folder of text files or an llm.c .bin\n"
            "                      (default: " TR_DEFAULT_DATA ")\n"
            "  --steps N           optimizer steps (default 100; a CNN: all of --epochs)\n"
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
            "\nThe CNN models (--model cnn-guide, cnn-resnet):\n"
            "  --data DIR          the idx files train-images-idx3-ubyte.gz, ... (default: " TR_IDX_DEFAULT_DIR ",\n"
            "                      from Debian's dataset-fashion-mnist package)\n"
            "  --epochs N          passes over the training images (default 1); a test pass after each\n"
            "  --train-images N --test-images N   the first N images of each set (default: all)\n"
            "  --bias-before-bn on|off  off drops the bias of a conv that BatchNorm follows (its mean\n"
            "                      removes it anyway; default on, PyTorch's default)\n"
            "  --conv-autotune on|off  time the conv algorithms once per shape and keep the fastest: the cpu\n"
            "                      backend's NCHW ones (im2col+GEMM, direct), cuDNN's on the cuda backend\n"
            "                      (cudnn.benchmark's way); default off: im2col+GEMM on the cpu (faster on\n"
            "                      every shape of the presets measured here), cuDNN's heuristic choice on\n"
            "                      cuda; on: --layout nchw\n"
            "  --layout nhwc|nchw  the activations' layout: channels-last (direct vector convolutions) or\n"
            "                      PyTorch's default NCHW (im2col+GEMM); default nhwc on the cpu backend\n"
            "                      (the faster here) without --conv-autotune on, else nchw (cuDNN's)\n"
            "                      batch 64 and AdamW at lr 0.001, weight decay 0.0001 unless given\n"
            "\nOptimizations (each a switch; --preset sets several, later flags override it):\n"
            "  --preset NAME       baseline: fp32, no fusion, no loader workers, no checkpointing;\n"
            "                      optimized: the fastest settings measured on this backend\n"
            "  --amp MODE          off (default), bf16 or fp16: matrix products and attention in low\n"
            "                      precision, LayerNorm, softmax and the loss in fp32, fp32 master weights\n"
            "                      (CNN: convolutions and activations in low precision, BatchNorm's\n"
            "                      statistics and the loss in fp32; cpu backend)\n"
            "  --loss-scale S      a fixed loss scale; fp16 defaults to a dynamic one (GradScaler's rules)\n"
            "  --init-scale S      the dynamic loss scale's start (default 65536)\n"
            "  --checkpoint MODE   none (default), blocks (recompute each block in backward) or\n"
            "                      selective (recompute LayerNorm and GELU only); cnn-resnet: blocks\n"
            "  --accum K           K micro-batches per step: the update of one K x batch batch (default 1)\n"
            "  --fuse on|off       fused bias+GELU, residual+LayerNorm, softmax+cross-entropy, one-pass\n"
            "                      optimizer and gradient norm (default off; CNN: softmax+cross-entropy\n"
            "                      and AdamW, its ReLUs being fused always)\n"
            "  --optimizer NAME    adamw (default) or sgd\n"
            "  --lr X              peak learning rate (default 0.003)\n"
            "  --momentum X        SGD's momentum (default 0.9 with sgd)\n"
            "  --weight-decay X    decay of matrices and embeddings (default 0.1)\n"
            "  --lr-schedule NAME  constant (default), cosine (to lr/10) or onecycle\n"
            "  --warmup N          linear warmup steps (onecycle: the rising phase, default 30%%)\n"
            "  --clip NORM         clip the global gradient norm (default 0: off)\n"
            "  --ema DECAY         keep an EMA of the weights, used for evaluation (like 0.999)\n"
            "                      (CNN: and of BatchNorm's running statistics)\n"
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

void tr_options_fail(const char *flag, const char *value, const char *expected)
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
        tr_options_fail(flag, v, what);
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
        tr_options_fail(flag, v, what);
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
        tr_options_fail(flag, v, "a size of at least 1M, like 512M or 2G");
    return (size_t)(x * mult);
}

static void parse_flags(tr_options *o, int argc, char **argv)
{
    *o = (tr_options){.model = "gpt-tiny", .data = TR_DEFAULT_DATA, .steps = 100, .workers = 1, .eval_every = 50,
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
                tr_options_fail("--preset", o->preset, "baseline or optimized");
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
        else if (!strcmp(f, "--steps")) o->steps = (int)parse_int(f, v, 0, INT_MAX), o->steps_given = true;
        else if (!strcmp(f, "--epochs")) o->epochs = (int)parse_int(f, v, 1, 100000);
        else if (!strcmp(f, "--train-images")) o->train_images = (int)parse_int(f, v, 2, INT_MAX);
        else if (!strcmp(f, "--test-images")) o->test_images = (int)parse_int(f, v, 1, INT_MAX);
        else if (!strcmp(f, "--bias-before-bn")) o->bias_before_bn = v;
        else if (!strcmp(f, "--conv-autotune")) o->conv_autotune = v;
        else if (!strcmp(f, "--layout")) o->layout = v;
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
int tr_options_pick(const char *flag, const char *v, const char *const *names, int n, const char *expected)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    tr_options_fail(flag, v, expected);
    return -1;
}

/* --cuda-graph on|off; what a captured step cannot hold is refused by name. */
bool tr_options_cuda_graph(const tr_options *o)
{
    static const char *const onoff[] = {"off", "on"};
    if (!o->cuda_graph || tr_options_pick("--cuda-graph", o->cuda_graph, onoff, 2, "on or off") == 0)
        return false;
    const char *why = NULL;
    if (!o->backend || strcmp(o->backend, "cuda"))
        why = "needs --backend cuda: a CUDA graph replays GPU work, and the cpu backend runs its ops on the host";
    else if (o->sync_every_op && tr_options_pick("--sync-every-op", o->sync_every_op, onoff, 2, "on or off") == 1)
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

tr_dtype tr_options_amp(const tr_options *o)
{
    static const char *const amps[] = {"off", "bf16", "fp16"};
    static const tr_dtype amp_dtype[] = {TR_F32, TR_BF16, TR_F16};
    return amp_dtype[tr_options_pick("--amp", o->amp, amps, 3, "off, bf16 or fp16")];
}

/* The flags as a train.c configuration; invalid combinations are refused by name. */
tr_train_config tr_options_train_config(const tr_options *o)
{
    static const char *const ckpts[] = {"none", "blocks", "selective"}, *const onoff[] = {"off", "on"},
                             *const optims[] = {"adamw", "sgd"}, *const scheds[] = {"constant", "cosine", "onecycle"};
    tr_train_config c = {
        .accum = o->accum,
        .amp = tr_options_amp(o),
        .loss_scale = (float)o->loss_scale,
        .init_scale = (float)o->init_scale,
        .checkpoint = (tr_gpt_checkpoint)tr_options_pick("--checkpoint", o->checkpoint, ckpts, 3, "none, blocks or selective"),
        .fuse = tr_options_pick("--fuse", o->fuse, onoff, 2, "on or off") == 1,
        .clip = (float)o->clip,
        .ema_decay = (float)o->ema,
        .cuda_graph = tr_options_cuda_graph(o),
    };
    int kind = tr_options_pick("--optimizer", o->optimizer, optims, 2, "adamw or sgd");
    c.optim = (tr_optim_config){.kind = kind == 0 ? TR_OPTIM_ADAMW : TR_OPTIM_SGD, .beta1 = 0.9f, .beta2 = 0.95f,
                                .eps = 1e-8f, .weight_decay = (float)o->weight_decay};
    if (o->momentum >= 0)
        c.optim.momentum = (float)o->momentum;
    else if (kind == 1)
        c.optim.momentum = 0.9f;
    c.schedule = (tr_schedule){.kind = (tr_schedule_kind)tr_options_pick("--lr-schedule", o->schedule, scheds, 3,
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

bool tr_options_on(const char *flag, const char *v)
{
    static const char *const onoff[] = {"off", "on"};
    return v && tr_options_pick(flag, v, onoff, 2, "on or off") == 1;
}


/* --dist without MPI, or mpirun without --dist: both would train wrong. */
static void dist_check_flags(const tr_options *o)
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
static void checkpoint_flags(tr_options *o)
{
    bool fsdp = o->dist && !strcmp(o->dist, "fsdp");
    static const char *const formats[] = {"sharded", "full"};
    if (!o->save_format)
        o->save_format = fsdp && !(o->ema > 0) ? "sharded" : "full";
    else if (!o->save) {
        fprintf(stderr, "trainer: --save-format is the format of --save PATH, which is missing\n");
        exit(2);
    }
    if (tr_options_pick("--save-format", o->save_format, formats, 2, "sharded or full") == 0 && !fsdp) {
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

static bool given(int argc, char **argv, const char *flag)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], flag))
            return true;
    return false;
}

/* The CNN models: their defaults, and what they do not have refused by name. */
static void cnn_flags(tr_options *o, int argc, char **argv)
{
    static const char *const gpt_only[] = {"--seq", "--layers", "--width", "--heads", "--val-fraction",
                                           "--eval-every", "--eval-batches", "--workers", "--preset"};
    static const char *const not_yet[] = {"--dist", "--zero", "--save-format", "--cuda-graph"};
    for (size_t i = 0; i < sizeof gpt_only / sizeof *gpt_only; i++)
        if (given(argc, argv, gpt_only[i])) {
            fprintf(stderr, "trainer: %s is a GPT flag; --model %s does not take it\n", gpt_only[i], o->model);
            exit(2);
        }
    for (size_t i = 0; i < sizeof not_yet / sizeof *not_yet; i++)
        if (given(argc, argv, not_yet[i])) {
            fprintf(stderr, "trainer: %s is not implemented for --model %s\n", not_yet[i], o->model);
            exit(2);
        }
    static const char *const ckpts[] = {"none", "blocks"};
    if (tr_options_pick("--checkpoint", o->checkpoint, ckpts, 2, "none or blocks (--model cnn-*)") == 1 &&
        strcmp(o->model, "cnn-resnet") != 0) {
        fprintf(stderr, "trainer: --checkpoint blocks: --model %s has no residual blocks (cnn-resnet has)\n",
                o->model);
        exit(2);
    }
    bool cpu = !o->backend || !strcmp(o->backend, "cpu");
    if (strcmp(o->amp, "off") != 0 && !cpu) {
        fprintf(stderr, "trainer: --amp %s with --model %s runs on the cpu backend; the %s backend's CNN ops are "
                        "fp32 only\n", o->amp, o->model, o->backend);
        exit(2);
    }
    if (!given(argc, argv, "--data"))
        o->data = NULL; /* data_idx.h's default folder */
    if (!o->batch)
        o->batch = 64;
    if (!given(argc, argv, "--lr"))
        o->lr = 1e-3;
    if (!given(argc, argv, "--weight-decay"))
        o->weight_decay = 1e-4;
    if (!o->epochs)
        o->epochs = 1;
    tr_options_on("--bias-before-bn", o->bias_before_bn ? o->bias_before_bn : "on");
    static const char *const layouts[] = {"nhwc", "nchw"};
    bool tune = tr_options_on("--conv-autotune", o->conv_autotune);
    if (!o->layout) /* the autotuner chooses among the NCHW algorithms */
        o->layout = cpu && !tune ? "nhwc" : "nchw";
    if (tr_options_pick("--layout", o->layout, layouts, 2, "nhwc or nchw") == 0 && !cpu) {
        fprintf(stderr, "trainer: --layout nhwc is the cpu backend's; --backend %s has nchw only\n", o->backend);
        exit(2);
    }
    if (tune && !strcmp(o->layout, "nhwc")) {
        fprintf(stderr, "trainer: --conv-autotune times the NCHW conv algorithms; --layout nhwc has one (use "
                        "--layout nchw, or leave --layout out)\n");
        exit(2);
    }
    if (o->dist) {
        fprintf(stderr, "trainer: --dist is not implemented for --model %s\n", o->model);
        exit(2);
    }
    o->seq_len = 1;
    o->p = NULL;
}

void tr_options_parse(tr_options *o, int argc, char **argv)
{
    parse_flags(o, argc, argv);
    for (int i = 0; tr_cnn_presets[i]; i++)
        if (!strcmp(o->model, tr_cnn_presets[i]))
            o->cnn = true;
    if (o->cnn) {
        cnn_flags(o, argc, argv);
        return;
    }
    if (o->epochs || o->train_images || o->test_images || o->bias_before_bn || o->conv_autotune || o->layout) {
        fprintf(stderr, "trainer: --epochs, --train-images, --test-images, --bias-before-bn, --conv-autotune and "
                        "--layout are for the CNN models (--model cnn-guide or cnn-resnet)\n");
        exit(2);
    }
    const tr_preset *p = NULL;
    for (size_t i = 0; i < sizeof presets / sizeof *presets; i++)
        if (!strcmp(o->model, presets[i].name))
            p = &presets[i];
    if (!p)
        tr_options_fail("--model", o->model, "gpt-tiny, gpt-mini, gpt-small, gpt2-124m, cnn-guide or cnn-resnet");
    int B = o->batch ? o->batch : p->batch, T = o->seq_len ? o->seq_len : p->seq_len;
    o->batch = B;
    o->seq_len = T;
    if ((int64_t)B * T > INT_MAX) { /* the model counts a micro-batch's rows (B x T) in an int */
        fprintf(stderr, "trainer: --batch %d x --seq %d is %lld tokens per micro-batch: more than %d; use a smaller "
                        "--batch or --seq (or --accum to train on more per step)\n", B, T, (long long)B * T, INT_MAX);
        exit(2);
    }
    dist_check_flags(o);
    checkpoint_flags(o);
    o->p = p;
}
