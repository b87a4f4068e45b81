/* options.c: the trainer's flags (options.h) as a run's configuration: the
 * parsing loop over the table (flags.c, which holds each flag's type, range,
 * default and help), presets, the checks of flags against each other and
 * against this build, and the tr_train_config they make. It opens no file
 * and no device. */
#include "config.h"

#include "options.h"

#include "error.h"
#include "flags.h"
#include "model_cnn.h"
#include "ops.h"

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

static void parse_flags(tr_options *o, int argc, char **argv)
{
    *o = (tr_options){0};
    tr_flags_defaults(o);
    /* a preset first, so the flags around it override what it sets */
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--preset")) {
            o->preset = argv[i + 1];
            if (tr_flag_pick("--preset", o->preset) == 0) {
                o->workers = 0;
            } else {
                /* measured on the cpu backend (bench/results/2026-11-21-optimizations-cpu.md): fusion and
                 * a loader worker pay; AMP costs time there (conversions, no low-precision arithmetic) */
                o->fuse = "on";
                o->workers = 1;
            }
        }
    for (int i = 1; i < argc; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "--help") || !strcmp(f, "-h")) {
            tr_flags_usage(stdout);
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
        const tr_flag *fl = tr_flag_find(f);
        if (!fl) {
            fprintf(stderr, "trainer: unknown option '%s' (see trainer --help)\n", f);
            exit(2);
        }
        if (!strcmp(f, "--preset"))
            continue; /* applied above */
        tr_flag_set(o, fl, v);
        if (!strcmp(f, "--steps")) /* a CNN's --steps stops its epochs sooner */
            o->steps_given = true;
    }
}

/* One of names[] -> its index, or a clear error listing them. */
int tr_options_pick(const char *flag, const char *v, const char *const *names, int n, const char *expected)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v, names[i]))
            return i;
    tr_flag_fail(flag, v, expected);
    return -1;
}

/* --cuda-graph on|off; what a captured step cannot hold is refused by name. */
bool tr_options_cuda_graph(const tr_options *o)
{
    if (!tr_options_on("--cuda-graph", o->cuda_graph))
        return false;
    const char *why = NULL;
    if (!o->backend || strcmp(o->backend, "cuda"))
        why = "needs --backend cuda: a CUDA graph replays GPU work, and the cpu backend runs its ops on the host";
    else if (tr_options_on("--sync-every-op", o->sync_every_op))
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
    static const tr_dtype amp_dtype[] = {TR_F32, TR_BF16, TR_F16}; /* --amp's choices */
    return amp_dtype[tr_flag_pick("--amp", o->amp)];
}

/* The flags as a train.c configuration; invalid combinations are refused by name. */
tr_train_config tr_options_train_config(const tr_options *o)
{
    tr_train_config c = {
        .accum = o->accum,
        .amp = tr_options_amp(o),
        .loss_scale = (float)o->loss_scale,
        .init_scale = (float)o->init_scale,
        .checkpoint = (tr_gpt_checkpoint)tr_flag_pick("--checkpoint", o->checkpoint),
        .fuse = tr_options_on("--fuse", o->fuse),
        .clip = (float)o->clip,
        .ema_decay = (float)o->ema,
        .cuda_graph = tr_options_cuda_graph(o),
    };
    int kind = tr_flag_pick("--optimizer", o->optimizer);
    c.optim = (tr_optim_config){.kind = kind == 0 ? TR_OPTIM_ADAMW : TR_OPTIM_SGD, .beta1 = 0.9f, .beta2 = 0.95f,
                                .eps = 1e-8f, .weight_decay = (float)o->weight_decay};
    if (o->momentum >= 0)
        c.optim.momentum = (float)o->momentum;
    else if (kind == 1)
        c.optim.momentum = 0.9f;
    c.schedule = (tr_schedule){.kind = (tr_schedule_kind)tr_flag_pick("--lr-schedule", o->schedule),
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
    return v && tr_flag_pick(flag, v) == 1;
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
    if (!o->save_format)
        o->save_format = fsdp && !(o->ema > 0) ? "sharded" : "full";
    else if (!o->save) {
        fprintf(stderr, "trainer: --save-format is the format of --save PATH, which is missing\n");
        exit(2);
    }
    if (tr_flag_pick("--save-format", o->save_format) == 0 && !fsdp) {
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
    bool tune = tr_options_on("--conv-autotune", o->conv_autotune);
    /* NHWC's direct kernels where the CPU holds them in registers (AVX-512);
     * the autotuner chooses among the NCHW algorithms */
    if (!o->layout)
        o->layout = cpu && !tune && op_conv2d_nhwc_vectorized_cpu() ? "nhwc" : "nchw";
    if (tr_flag_pick("--layout", o->layout) == 0 && !cpu) {
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
        tr_flag_fail("--model", o->model, "gpt-tiny, gpt-mini, gpt-small, gpt2-124m, cnn-guide or cnn-resnet");
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
