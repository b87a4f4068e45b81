/* flags.c: the table of the trainer's flags (flags.h) and what is made of
 * it: the --help text, the parsing and range check of one value, the
 * defaults, a value as the text the ranks compare. What a value means next
 * to other flags is options.c's. */
#include "config.h"

#include "flags.h"

#include "data_idx.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void tr_flag_fail(const char *flag, const char *value, const char *expected)
{
    fprintf(stderr, "trainer: %s: expected %s, got '%s' (see trainer --help)\n", flag, expected, value);
    exit(2);
}

#define AT(field) offsetof(tr_options, field)
#define CHOICES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define INT_FLAG(nm, field, l, h, d, use, text, b) \
    {.name = nm, .type = TR_FLAG_INT, .offset = AT(field), .lo = l, .hi = h, .def = d, .usage = use, .help = text, \
     .bits = b}
#define REAL_FLAG(nm, field, l, h, d, use, text, b) \
    {.name = nm, .type = TR_FLAG_REAL, .offset = AT(field), .lo = l, .hi = h, .def = d, .usage = use, .help = text, \
     .bits = b}
#define TEXT_FLAG(nm, field, d, use, text, b) \
    {.name = nm, .type = TR_FLAG_TEXT, .offset = AT(field), .def = d, .usage = use, .help = text, .bits = b}
#define CHOICE_FLAG(nm, field, names, d, use, text, b) \
    {.name = nm, .type = TR_FLAG_CHOICE, .offset = AT(field), .choices = names, .def = d, .usage = use, \
     .help = text, .bits = b}
#define SWITCH_FLAG(nm, field, use, text, b) \
    {.name = nm, .type = TR_FLAG_SWITCH, .offset = AT(field), .usage = use, .help = text, .bits = b}
#define LINE(use, text) {.type = TR_FLAG_NONE, .usage = use, .help = text}

#define R TR_FLAG_RANKS

/* In --help's order. A default NULL is "not given": the code after parsing
 * decides (the preset's shape, the backend's layout, ...). */
const tr_flag tr_flags[] = {
    LINE(NULL, "usage: trainer [options]\n"
               "Trains a GPT on text (bytes are tokens) or on llm.c token files, on the CPU.\n"),
    TEXT_FLAG("--model", model, "gpt-tiny", "--model NAME",
              "gpt-tiny (default), gpt-mini, gpt-small, gpt2-124m; or an image classifier on\n"
              "Fashion-MNIST: cnn-guide (PyTorch's two conv and two linear layers) or\n"
              "cnn-resnet (a small ResNet: BatchNorm, three residual blocks)", R | TR_FLAG_CKPT),
    INT_FLAG("--layers", n_layers, 1, 1024, NULL, "--layers N", "override the preset's shape", R | TR_FLAG_CKPT),
    INT_FLAG("--width", channels, 1, 65536, NULL, "--width N", NULL, R | TR_FLAG_SAME_LINE | TR_FLAG_CKPT),
    INT_FLAG("--heads", n_heads, 1, 1024, NULL, "--heads N", NULL, R | TR_FLAG_SAME_LINE | TR_FLAG_CKPT),
    TEXT_FLAG("--data", data, TR_DEFAULT_DATA, "--data PATH",
              "a text file, a folder of text files or an llm.c .bin\n"
              "(default: " TR_DEFAULT_DATA ")", R),
    INT_FLAG("--steps", steps, 0, INT_MAX, "100", "--steps N", "optimizer steps (default 100; a CNN: all of --epochs)",
             R),
    INT_FLAG("--batch", batch, 1, 65536, NULL, "--batch N", "sequences per micro-batch (default: the preset's)", R),
    INT_FLAG("--seq", seq_len, 1, 65536, NULL, "--seq N", "tokens per sequence (default: the preset's context)", R),
    {.name = "--seed", .type = TR_FLAG_U64, .offset = AT(seed), .lo = 0, .hi = (double)LLONG_MAX, .def = "1337",
     .usage = "--seed N", .help = "weights, data order: the same seed gives the same run (default 1337)", .bits = R},
    INT_FLAG("--workers", workers, 0, 64, "1", "--workers N",
             "data loader threads; 0 loads on the training thread (default 1)", 0),
    INT_FLAG("--threads", threads, 1, 1024, NULL, "--threads N",
             "compute threads (default: OMP_NUM_THREADS or all cores); on a machine\n"
             "shared with busy programs, run with OMP_WAIT_POLICY=passive", 0),
    REAL_FLAG("--val-fraction", val_fraction, 0, 0.9, "0.1", "--val-fraction X",
              "the last X of the data is the validation split, 0 to 0.9;\n"
              "0 trains on everything and turns evaluation off (default 0.1)", R),
    INT_FLAG("--eval-every", eval_every, 0, INT_MAX, "50", "--eval-every N",
             "validation loss every N steps, 0 never (default 50)", R),
    INT_FLAG("--eval-batches", eval_batches, 1, 1000000, "8", "--eval-batches N", "batches per validation (default 8)",
             R),
    INT_FLAG("--log-every", log_every, 1, INT_MAX, "10", "--log-every N",
             "a log line every N steps when not on a terminal (default 10)", 0),
    {.name = "--mem-limit", .type = TR_FLAG_BYTES, .offset = AT(mem_limit), .usage = "--mem-limit BYTES",
     .help = "the device's capacity for the caching allocator (K, M, G suffixes)"},
    TEXT_FLAG("--save", save, NULL, "--save PATH", "write a checkpoint (safetensors) at the end", R),
    CHOICE_FLAG("--save-format", save_format, CHOICES("sharded", "full"), NULL, "--save-format F",
                "sharded (the default with --dist fsdp, without --ema): each rank writes its shard of the\n"
                "weights and optimizer state, PATH.rank<r>-of-<N>; full (the default\n"
                "otherwise): gathered to rank 0 into one file at PATH, which one process,\n"
                "DDP, or FSDP on any number of ranks resumes from", R),
    TEXT_FLAG("--resume", resume, NULL, "--resume PATH",
              "continue from a checkpoint: the file PATH, or under --dist fsdp on N ranks\n"
              "the shards PATH.rank<r>-of-<N>", R),

    LINE(NULL, "\nThe CNN models (--model cnn-guide, cnn-resnet):"),
    LINE("--data DIR", "the idx files train-images-idx3-ubyte.gz, ... (default: " TR_IDX_DEFAULT_DIR ",\n"
                       "from Debian's dataset-fashion-mnist package)"),
    INT_FLAG("--epochs", epochs, 1, 100000, NULL, "--epochs N",
             "passes over the training images (default 1); a test pass after each", 0),
    INT_FLAG("--train-images", train_images, 2, INT_MAX, NULL, "--train-images N",
             "the first N images of each set (default: all)", TR_FLAG_CKPT),
    INT_FLAG("--test-images", test_images, 1, INT_MAX, NULL, "--test-images N", NULL, TR_FLAG_SAME_LINE),
    SWITCH_FLAG("--bias-before-bn", bias_before_bn, "--bias-before-bn on|off",
                "off drops the bias of a conv that BatchNorm follows (its mean\n"
                "removes it anyway; default on, PyTorch's default)", TR_FLAG_CKPT),
    SWITCH_FLAG("--conv-autotune", conv_autotune, "--conv-autotune on|off",
                "time the conv algorithms once per shape and keep the fastest: the cpu\n"
                "backend's NCHW ones (im2col+GEMM, direct), cuDNN's on the cuda backend\n"
                "(cudnn.benchmark's way); default off: im2col+GEMM on the cpu (faster on\n"
                "every shape of the presets measured here), cuDNN's heuristic choice on\n"
                "cuda; on: --layout nchw", 0),
    CHOICE_FLAG("--layout", layout, CHOICES("nhwc", "nchw"), NULL, "--layout nhwc|nchw",
                "the activations' layout: channels-last (direct vector convolutions) or\n"
                "PyTorch's default NCHW (im2col+GEMM); default nhwc on the cpu backend\n"
                "of a CPU with AVX-512 (the faster there) without --conv-autotune on,\n"
                "else nchw (cuDNN's; with AVX2 alone 6 to 19x faster than nhwc)\n"
                "batch 64 and AdamW at lr 0.001, weight decay 0.0001 unless given", 0),

    LINE(NULL, "\nOptimizations (each a switch; --preset sets several, later flags override it):"),
    CHOICE_FLAG("--preset", preset, CHOICES("baseline", "optimized"), NULL, "--preset NAME",
                "baseline: fp32, no fusion, no loader workers, no checkpointing;\n"
                "optimized: the fastest settings measured on this backend", 0),
    CHOICE_FLAG("--amp", amp, CHOICES("off", "bf16", "fp16"), "off", "--amp MODE",
                "off (default), bf16 or fp16: matrix products and attention in low\n"
                "precision, LayerNorm, softmax and the loss in fp32, fp32 master weights\n"
                "(CNN: convolutions and activations in low precision, BatchNorm's\n"
                "statistics and the loss in fp32; cpu backend)", R),
    REAL_FLAG("--loss-scale", loss_scale, 1e-30, 1e30, NULL, "--loss-scale S",
              "a fixed loss scale; fp16 defaults to a dynamic one (GradScaler's rules)", R),
    REAL_FLAG("--init-scale", init_scale, 1e-30, 1e30, NULL, "--init-scale S",
              "the dynamic loss scale's start (default 65536)", R),
    CHOICE_FLAG("--checkpoint", checkpoint, CHOICES("none", "blocks", "selective"), "none", "--checkpoint MODE",
                "none (default), blocks (recompute each block in backward) or\n"
                "selective (recompute LayerNorm and GELU only); cnn-resnet: blocks", R),
    INT_FLAG("--accum", accum, 1, 65536, "1", "--accum K",
             "K micro-batches per step: the update of one K x batch batch (default 1)", R),
    {.name = "--fuse", .type = TR_FLAG_SWITCH, .offset = AT(fuse), .def = "off", .usage = "--fuse on|off",
     .help = "fused bias+GELU, residual+LayerNorm, softmax+cross-entropy, one-pass\n"
             "optimizer and gradient norm (default off; CNN: softmax+cross-entropy\n"
             "and AdamW, its ReLUs being fused always)", .bits = R},
    CHOICE_FLAG("--optimizer", optimizer, CHOICES("adamw", "sgd"), "adamw", "--optimizer NAME",
                "adamw (default) or sgd", R | TR_FLAG_CKPT),
    REAL_FLAG("--lr", lr, 1e-9, 10, "3e-3", "--lr X", "peak learning rate (default 0.003)", R),
    /* -1: not given (0.9 with sgd) */
    REAL_FLAG("--momentum", momentum, 0, 0.999999, "-1", "--momentum X", "SGD's momentum (default 0.9 with sgd)", R),
    REAL_FLAG("--weight-decay", weight_decay, 0, 10, "0.1", "--weight-decay X",
              "decay of matrices and embeddings (default 0.1)", R),
    CHOICE_FLAG("--lr-schedule", schedule, CHOICES("constant", "cosine", "onecycle"), "constant",
                "--lr-schedule NAME", "constant (default), cosine (to lr/10) or onecycle", R),
    INT_FLAG("--warmup", warmup, 0, INT_MAX, NULL, "--warmup N",
             "linear warmup steps (onecycle: the rising phase, default 30%)", R),
    REAL_FLAG("--clip", clip, 1e-12, 1e12, NULL, "--clip NORM", "clip the global gradient norm (default 0: off)", R),
    REAL_FLAG("--ema", ema, 1e-9, 0.999999999, NULL, "--ema DECAY",
              "keep an EMA of the weights, used for evaluation (like 0.999)\n"
              "(CNN: and of BatchNorm's running statistics)", R),

    LINE(NULL, "\nDistributed (run under Open MPI's mpirun: mpirun -np N trainer --dist ddp ...; on GPUs with\n"
               "--backend cuda each rank takes the GPU of its index on its node and NCCL carries the gradients\n"
               "and parameters; one rank may also start without mpirun):"),
    CHOICE_FLAG("--dist", dist, CHOICES("ddp", "fsdp"), NULL, "--dist MODE",
                "ddp: gradients all-reduced in buckets during backward;\n"
                "fsdp: ZeRO sharding of optimizer state, gradients, parameters", R),
    INT_FLAG("--zero", zero, 1, 3, NULL, "--zero N",
             "fsdp's stage: 1 optimizer state, 2 also gradients, 3 also parameters (default 3)", R),
    REAL_FLAG("--bucket-mb", bucket_mb, 0.004, 1024, "25", "--bucket-mb X",
              "ddp and zero 1: all-reduce bucket size in MiB (default 25)", R),
    REAL_FLAG("--dist-timeout", dist_timeout, 0.1, 1e6, "300", "--dist-timeout S",
              "a collective not done after S seconds stops every rank (default 300)\n"
              "--batch is per rank: N ranks of batch B train as one of batch N x B", R),

    LINE(NULL, "\nCUDA backend (built with the CUDA toolkit):"),
    CHOICE_FLAG("--backend", backend, CHOICES("cpu", "cuda"), "cpu", "--backend NAME", "cpu (default) or cuda", R),
    /* -1: not given (0, or under --dist the rank's index on its node) */
    INT_FLAG("--device", device, 0, 1023, "-1", "--device N",
             "the GPU to train on (default 0; under --dist the rank's index on its node)", 0),
    SWITCH_FLAG("--pin-memory", pin_memory, "--pin-memory on|off",
                "pinned staging buffers: batches copied on a copy stream while compute\n"
                "runs (default off: pageable copies that wait for the compute stream)", 0),
    SWITCH_FLAG("--expandable-segments", expandable_segments, "--expandable-segments on|off",
                "the allocator's segments mapped into one reserved virtual\n"
                "range (cuMemCreate/cuMemMap) instead of cudaMalloc (default off)", 0),
    SWITCH_FLAG("--sync-every-op", sync_every_op, "--sync-every-op on|off",
                "wait for the GPU after every op: what synchronization costs (default off)", 0),
    SWITCH_FLAG("--autotune", autotune, "--autotune on|off",
                "time cuBLASLt's candidate algorithms once per GEMM shape (default off)", 0),
    CHOICE_FLAG("--attention", attention, CHOICES("auto", "cudnn", "own"), NULL, "--attention MODE",
                "auto (default): cuDNN's fused flash attention under --amp bf16|fp16 where\n"
                "cuDNN loads and has a plan for the shape, the own kernel otherwise; cudnn:\n"
                "cuDNN or an error saying why not; own: the own kernel, which keeps the\n"
                "(B,NH,T,T) probabilities where cuDNN keeps (B,NH,T) softmax statistics", 0),
    SWITCH_FLAG("--tf32", tf32, "--tf32 on|off",
                "fp32 matrix products on tensor cores with TF32 inputs (default off)", 0),
    SWITCH_FLAG("--cuda-graph", cuda_graph, "--cuda-graph on|off",
                "capture the training step into a CUDA graph once, after eager warm-up\n"
                "steps (until one takes no new memory, at most 3), and replay it: one launch\n"
                "per step (default off; not with --sync-every-op or --dist). With or without\n"
                "it, one process on the cuda backend keeps the loss scaler, clipping and\n"
                "the optimizer's step on the GPU and reads them back on the steps it prints", 0),
    LINE("--help", "this text"),
};
const int tr_n_flags = (int)(sizeof tr_flags / sizeof *tr_flags);

/* The flag column's width after its two spaces of indent: the text starts
 * at column 22; a line of several flags sets them apart from their text by
 * three spaces, a longer flag by two. */
#define USAGE_WIDTH 20

void tr_flags_usage(FILE *f)
{
    for (int i = 0; i < tr_n_flags; i++) {
        const tr_flag *fl = &tr_flags[i];
        if (!fl->help)
            continue; /* on the line before (TR_FLAG_SAME_LINE), or no text: trainer_flags.sh fails */
        if (!fl->usage) {
            fprintf(f, "%s\n", fl->help);
            continue;
        }
        int n = fprintf(f, "  %s", fl->usage) - 2;
        bool joined = false;
        for (int j = i + 1; j < tr_n_flags && tr_flags[j].bits & TR_FLAG_SAME_LINE; j++, joined = true)
            n += fprintf(f, " %s", tr_flags[j].usage);
        fprintf(f, "%*s", joined ? 3 : n < USAGE_WIDTH ? USAGE_WIDTH - n : 2, "");
        for (const char *s = fl->help; *s;) {
            const char *nl = strchr(s, '\n');
            int len = nl ? (int)(nl - s) : (int)strlen(s);
            fprintf(f, "%s%.*s\n", s == fl->help ? "" : "                      ", len, s);
            s += len + (nl != NULL);
        }
    }
}

const tr_flag *tr_flag_find(const char *name)
{
    for (int i = 0; i < tr_n_flags; i++)
        if (tr_flags[i].name && !strcmp(tr_flags[i].name, name))
            return &tr_flags[i];
    return NULL;
}

static long long parse_int(const char *flag, const char *v, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        char what[96];
        snprintf(what, sizeof what, "an integer from %lld to %lld", lo, hi);
        tr_flag_fail(flag, v, what);
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
        tr_flag_fail(flag, v, what);
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
        tr_flag_fail(flag, v, "a size of at least 1M, like 512M or 2G");
    return (size_t)(x * mult);
}

void tr_flag_set(tr_options *o, const tr_flag *fl, const char *v)
{
    char *field = (char *)o + fl->offset;
    switch (fl->type) {
    case TR_FLAG_NONE: break;
    case TR_FLAG_TEXT: case TR_FLAG_CHOICE: case TR_FLAG_SWITCH: *(const char **)field = v; break;
    case TR_FLAG_INT: *(int *)field = (int)parse_int(fl->name, v, (long long)fl->lo, (long long)fl->hi); break;
    case TR_FLAG_U64: *(unsigned long long *)field = (unsigned long long)parse_int(fl->name, v, 0, LLONG_MAX); break;
    case TR_FLAG_REAL: *(double *)field = parse_real(fl->name, v, fl->lo, fl->hi); break;
    case TR_FLAG_BYTES: *(size_t *)field = parse_bytes(fl->name, v); break;
    }
}

/* A default is the table's own text: out of range ones (-1: not given) are
 * not checked. */
void tr_flags_defaults(tr_options *o)
{
    for (int i = 0; i < tr_n_flags; i++) {
        const tr_flag *fl = &tr_flags[i];
        char *field = (char *)o + fl->offset;
        if (!fl->name || !fl->def)
            continue;
        switch (fl->type) {
        case TR_FLAG_NONE: case TR_FLAG_BYTES: break;
        case TR_FLAG_TEXT: case TR_FLAG_CHOICE: case TR_FLAG_SWITCH: *(const char **)field = fl->def; break;
        case TR_FLAG_INT: *(int *)field = (int)strtol(fl->def, NULL, 10); break;
        case TR_FLAG_U64: *(unsigned long long *)field = strtoull(fl->def, NULL, 10); break;
        case TR_FLAG_REAL: *(double *)field = strtod(fl->def, NULL); break;
        }
    }
}

void tr_flag_format(const tr_options *o, const tr_flag *fl, char *buf, size_t n)
{
    const char *field = (const char *)o + fl->offset;
    switch (fl->type) {
    case TR_FLAG_NONE: snprintf(buf, n, "%s", ""); break;
    case TR_FLAG_TEXT: case TR_FLAG_CHOICE: case TR_FLAG_SWITCH: {
        const char *s = *(const char *const *)field;
        snprintf(buf, n, "%s", s ? s : "");
        break;
    }
    case TR_FLAG_INT: snprintf(buf, n, "%d", *(const int *)field); break;
    case TR_FLAG_U64: snprintf(buf, n, "%llu", *(const unsigned long long *)field); break;
    case TR_FLAG_REAL: snprintf(buf, n, "%.9g", *(const double *)field); break;
    case TR_FLAG_BYTES: snprintf(buf, n, "%zu", *(const size_t *)field); break;
    }
}

int tr_flag_pick(const char *name, const char *v)
{
    static const char *const onoff[] = {"off", "on", NULL};
    const tr_flag *fl = tr_flag_find(name);
    const char *const *names = fl && fl->type == TR_FLAG_SWITCH ? onoff : fl ? fl->choices : NULL;
    char expected[160] = "";
    int n = 0;
    for (; names && names[n]; n++)
        if (!strcmp(v, names[n]))
            return n;
    if (names == onoff) {
        snprintf(expected, sizeof expected, "on or off");
    } else {
        size_t at = 0;
        for (int i = 0; i < n && at < sizeof expected; i++)
            at += (size_t)snprintf(expected + at, sizeof expected - at, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
                                   names[i]);
    }
    tr_flag_fail(name, v, expected);
}
