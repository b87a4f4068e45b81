/* options.h: the trainer program's flags: parsing, the model presets, the
 * checks that need neither data nor a device, and the training
 * configuration they make (train.h). Each flag's type, range, default and
 * help are in the table of flags.h. A bad flag exits 2 with a message that
 * names it (a program's fail-fast). */
#ifndef TR_OPTIONS_H
#define TR_OPTIONS_H

#include "train.h"

#include <stdbool.h>
#include <stddef.h>

#define TR_DEFAULT_DATA "/usr/share/games/fortunes"

typedef struct tr_preset {
    const char *name;
    int n_layers, channels, n_heads, seq_len, batch;
    const char *what;
} tr_preset;

typedef struct tr_options {
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
    /* the backend ("cpu" by default) and its switches (NULL: off) */
    const char *backend, *pin_memory, *expandable_segments, *sync_every_op, *autotune, *tf32;
    const char *cuda_graph; /* --cuda-graph on|off */
    const char *attention; /* --attention auto|cudnn|own (NULL: auto) */
    int device;             /* -1: not given (0, or under --dist the rank's index on its node) */
    const tr_preset *p;     /* --model's preset; batch and seq_len are set from it when not given; NULL for a CNN */
    /* the CNN models (--model cnn-*, model_cnn.h; run_cnn.c) */
    bool cnn;
    int epochs;             /* passes over the training images (default 1); --steps, when given, stops sooner */
    bool steps_given;
    int train_images, test_images; /* the first N of each set; 0: all */
    const char *bias_before_bn;    /* --bias-before-bn on|off (NULL: on) */
    const char *conv_autotune;     /* --conv-autotune on|off (NULL: off) */
    const char *layout;            /* --layout nhwc|nchw (NULL: nhwc on the cpu backend, nchw elsewhere) */
} tr_options;

/* Parses argv (--help prints the usage and exits 0), resolves --model's
 * preset into batch and seq_len, and refuses flags that contradict each other
 * or this build (--dist without Open MPI, --save-format without --save). */
void tr_options_parse(tr_options *o, int argc, char **argv);
/* The flags as a train.c configuration; invalid combinations are refused by name. */
tr_train_config tr_options_train_config(const tr_options *o);
/* --amp as the activations' dtype: TR_F32 (off), TR_BF16 or TR_F16. */
tr_dtype tr_options_amp(const tr_options *o);
/* --cuda-graph on|off; what a captured step cannot hold is refused by name. */
bool tr_options_cuda_graph(const tr_options *o);
/* A flag's value is none of those expected: exits 2 naming them. */
void tr_options_fail(const char *flag, const char *value, const char *expected) __attribute__((noreturn));
/* One of names[] -> its index, or a clear error listing them. */
int tr_options_pick(const char *flag, const char *v, const char *const *names, int n, const char *expected);
/* An on|off switch; NULL (not given) is off. */
bool tr_options_on(const char *flag, const char *v);

#endif
