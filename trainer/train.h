/* train.h: the trainer's loop, for any model of model.h (the GPT, the
 * CNNs): steps of tr_trainer_step, each an optimizer step with every
 * optimization a switch: gradient accumulation over micro-batches, mixed
 * precision with a loss scaler, gradient clipping, the optimizer (fused or
 * not) and its learning-rate schedule, a weight EMA; the GPT's activation
 * checkpointing and fusion are set here too. The programs (main.c,
 * run_cnn.c) parse the flags into a tr_train_config, give their batches
 * and a report hook to tr_trainer_run; this file does not print but the
 * one line of a diverged loss. NVTX: "step N" around each step, "data",
 * "forward", "backward" per micro-batch, "grad norm", "optimizer", "ema",
 * and marks "loss scale" (every step, payload the scale) and "skipped step"
 * (payload the scale that overflowed).
 * On a backend with step_ops (CUDA) and one process, the step is decided on
 * the device (step_state.h): no wait for the device in the step; the loss,
 * the scale, the gradient norm and the verdict are read back only when
 * skip_loss is false (the marks then come with that read-back), and
 * t->scaler and t->opt.t are the device's as of the last read-back
 * (tr_trainer_sync). With cuda_graph the step is then captured into a CUDA
 * graph after eager warm-up steps and replayed: NVTX "graph replay" inside
 * "step N"; the op ranges were recorded once, at the capture. */
#ifndef TR_TRAIN_H
#define TR_TRAIN_H

#include "data.h"
#include "gpt.h"
#include "optim.h"
#include "scaler.h"

#include <stdbool.h>

/* Distributed training's part in the steps, through its object w (a
 * tr_dist_gpt): dist_gpt.h's functions, which the program plugs in
 * (plug.c), so that the loop knows no transport. attach makes w for the
 * model once AMP is set (ctx: the program's); the rest match dist_gpt.h. */
struct tr_dist_gpt;
typedef struct tr_train_dist {
    void *ctx;
    bool shards_weights;  /* ZeRO-3: no rank holds a whole copy of the weights */
    int (*attach)(struct tr_dist_gpt **out, void *ctx, tr_gpt *m);
    void (*detach)(struct tr_dist_gpt *w);
    void (*range)(const struct tr_dist_gpt *w, size_t *begin, size_t *end);
    int (*forward_begin)(struct tr_dist_gpt *w);
    int (*backward_begin)(struct tr_dist_gpt *w, bool first, bool last);
    int (*backward_end)(struct tr_dist_gpt *w);
    int (*eval_end)(struct tr_dist_gpt *w);
    int (*grad_sumsq)(struct tr_dist_gpt *w, bool fused, double *sumsq, bool *finite);
    int (*step_end)(struct tr_dist_gpt *w, bool stepped);
    int (*mean)(struct tr_dist_gpt *w, float *x);
} tr_train_dist;

typedef struct tr_train_config {
    int accum;                    /* micro-batches per step (>= 1) */
    tr_dtype amp;                 /* TR_F32 (off), TR_BF16, TR_F16 */
    float loss_scale;             /* > 0: fixed; 0: dynamic for fp16, none otherwise */
    float init_scale;             /* the dynamic scaler's first scale (2^16) */
    int growth_interval;          /* good steps before the scale grows (2000) */
    tr_gpt_checkpoint checkpoint;
    bool fuse;                    /* fused ops, fused optimizer and gradient-norm pass */
    float clip;                   /* global gradient-norm clipping; 0 off */
    float ema_decay;              /* 0 off */
    tr_optim_config optim;
    tr_schedule schedule;
    const tr_train_dist *dist;    /* distributed training; NULL: one process */
    bool cuda_graph;              /* capture the step once, replay it (a backend with step_ops, one process) */
} tr_train_config;

/* Checks a configuration; TR_EINVAL with a message naming the switch. */
int tr_train_config_check(const tr_train_config *c);
/* The loss scaler the configuration asks for: --loss-scale's fixed one,
 * fp16's dynamic one (GradScaler's defaults), or none. */
void tr_train_config_scaler(const tr_train_config *c, tr_scaler *s);

/* Where a step's micro-batches come from: next gives micro-batch k's, of
 * the kind the model's forward takes, and makes its own NVTX range. */
typedef struct tr_batches {
    int (*next)(void *ctx, int k, const void **batch);
    void *ctx;
} tr_batches;

typedef struct tr_trainer {
    tr_train_config cfg;
    tr_model *model;
    tr_gpt *gpt;                  /* the GPT's own (a step on the device, CUDA graphs, --dist, evaluation); NULL
                                     for another model */
    tr_optim opt;
    tr_ema ema;                   /* w.data NULL without --ema */
    tr_scaler scaler;
    size_t shard_begin, shard_end; /* the part of the flat buffers this process updates */
    struct tr_dist_gpt *dist;     /* NULL: one process */
    int row0;                     /* this rank's first row of the loader's global batch */
    bool skip_loss;               /* set per step: do not read the loss back (r->loss NaN); under --dist every
                                     rank must set it alike (it also skips the ranks' mean) */
    bool on_device;               /* the step is decided on the device (step_state.h) */
    bool device_loaded;           /* the device state holds the host's scaler and t */
    struct {                      /* --cuda-graph */
        int n_warmup;             /* eager steps before the capture */
        bool warmup_grew;         /* the last of them took a new segment from the device */
        int captured_at;          /* the step that was captured; -1: none yet */
        int64_t n_replays;
        size_t n_nodes;           /* in the captured graph */
        tr_gpt_batch batch;       /* a micro-batch of the pinned inputs */
        void *inputs;             /* pinned: the lr, then per micro-batch inputs and targets (B, T) int32 */
        size_t inputs_bytes;
        int B, T;
    } graph;
} tr_trainer;

typedef struct tr_step_result {
    double loss;      /* mean over the micro-batches; the GPT's is a float's value */
    float lr;
    float scale;      /* the loss scale used for this step */
    float grad_norm;  /* of the unscaled gradients, before clipping; NaN if not computed */
    bool skipped;     /* inf/NaN gradients: no update (on the device: as of the read-back) */
    bool graph_captured; /* this step was captured into the CUDA graph (and replayed) */
} tr_step_result;

/* Sets the GPT up (AMP, checkpointing, fusion, --dist) and makes the
 * optimizer, EMA and scaler. The model stays the caller's. */
int tr_trainer_init(tr_trainer *t, tr_gpt *model, const tr_train_config *cfg);
/* The same for a model that sets itself up (the CNNs: model_cnn.h's config). */
int tr_trainer_init_model(tr_trainer *t, tr_model *model, const tr_train_config *cfg);
void tr_trainer_release(tr_trainer *t);
/* One optimizer step: accum micro-batches from src. */
int tr_trainer_step(tr_trainer *t, const tr_batches *src, int step, tr_step_result *r);
/* The GPT's step: accum micro-batches of B x T from loader. Under
 * distributed training the loader yields the global batch (ranks x B rows)
 * and each rank trains on its B rows of it. */
int tr_train_step(tr_trainer *t, tr_loader *loader, int step, int B, int T, tr_step_result *r);
/* The GPT's batches for tr_trainer_run: this rank's B rows of loader's. */
typedef struct tr_gpt_loader {
    tr_batches batches;
    const tr_trainer *t;
    tr_loader *loader;
    tr_gpt_batch b;
} tr_gpt_loader;
void tr_gpt_loader_init(tr_gpt_loader *g, const tr_trainer *t, tr_loader *loader, int B, int T);

/* What a program does around the steps of tr_trainer_run. */
typedef struct tr_run_hooks {
    void *ctx;
    /* Whether step's loss is read back (t->skip_loss is its negation); NULL: always. */
    bool (*read_loss)(void *ctx, int step);
    /* After step (dt: its seconds; elapsed: the run's): progress lines,
     * evaluation; non-zero ends the run with it. */
    int (*after_step)(void *ctx, int step, const tr_step_result *r, double dt, double elapsed);
} tr_run_hooks;
/* Steps [step0, end) from src: the hooks around each. A loss that is not
 * finite ends the run with one line and 1; an error, its (negative) code. */
int tr_trainer_run(tr_trainer *t, const tr_batches *src, int step0, int end, const tr_run_hooks *h);
/* The mean loss of the first n_batches of val (NVTX range "eval"); under
 * distributed training each rank takes its rows and the ranks average. */
int tr_trainer_evaluate(tr_trainer *t, tr_loader *val, int n_batches, int B, int T, float *loss);
/* Evaluation uses the EMA weights when there are any: swap in, then back. */
void tr_trainer_eval_weights(tr_trainer *t, bool begin);
/* A step decided on the device: reads its state back into t->scaler and
 * t->opt.t (for a checkpoint, the final report); waits. Nothing otherwise. */
void tr_trainer_sync(tr_trainer *t);

#endif
