/* flags.h: the trainer's flags, each described once (flags.c): its name, its
 * value's type and range or choices, its default, its --help lines,
 * whether every rank must give it the same value and whether a checkpoint
 * records it. The parser, the usage
 * text, the range checks and the ranks' agreement check are made from the
 * table; the checks of flags against each other and against this build
 * stay code (options.c, plug.c), after parsing. */
#ifndef TR_FLAGS_H
#define TR_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TR_DEFAULT_DATA "/usr/share/games/fortunes"

/* What the flags give: each field the table names is filled by tr_flag_set
 * (options.c resolves the preset and the rest after parsing). */
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
    const struct tr_preset *p; /* --model's preset; batch and seq_len are set from it when not given; NULL for a CNN */
    /* the CNN models (--model cnn-*, model_cnn.h; run_cnn.c) */
    bool cnn;
    int epochs;             /* passes over the training images (default 1); --steps, when given, stops sooner */
    bool steps_given;
    int train_images, test_images; /* the first N of each set; 0: all */
    const char *bias_before_bn;    /* --bias-before-bn on|off (NULL: on) */
    const char *conv_autotune;     /* --conv-autotune on|off (NULL: off) */
    const char *layout;            /* --layout nhwc|nchw (NULL: nhwc on the cpu backend, nchw elsewhere) */
} tr_options;

/* A flag's value is none of those expected: exits 2 naming them. */
void tr_flag_fail(const char *flag, const char *value, const char *expected) __attribute__((noreturn));

typedef enum tr_flag_type {
    TR_FLAG_NONE,   /* no value: a --help line only (a section, --help itself, a flag's second description) */
    TR_FLAG_TEXT,   /* a path or a name: const char *, checked where it is used */
    TR_FLAG_CHOICE, /* one of choices: const char *, checked where it is used (tr_flag_pick), so that what
                     * contradicts other flags is refused by its own message first */
    TR_FLAG_SWITCH, /* on|off: const char *, checked where it is used (tr_options_on) */
    TR_FLAG_INT,    /* int in [lo, hi] */
    TR_FLAG_U64,    /* unsigned long long in [lo, hi] */
    TR_FLAG_REAL,   /* double in [lo, hi] */
    TR_FLAG_BYTES,  /* size_t: a size of at least 1M with a K, M or G suffix */
} tr_flag_type;

/* bits */
#define TR_FLAG_RANKS 1u     /* every rank of --dist must give the same value (after presets resolve it) */
#define TR_FLAG_SAME_LINE 2u /* described on the line of the flag before it in --help */
/* A checkpoint records what it sets (the model's shape, the optimizer, the
 * training set: ckpt.c, ckpt_cnn.c) and a resume with another value is
 * refused; trainer_ckpt_flags.sh resumes with another value of each. */
#define TR_FLAG_CKPT 4u

typedef struct tr_flag {
    const char *name;           /* "--batch"; NULL for a --help line that is no flag */
    tr_flag_type type;
    size_t offset;              /* of its field in tr_options */
    double lo, hi;              /* TR_FLAG_INT, _U64, _REAL: the range */
    const char *const *choices; /* TR_FLAG_CHOICE: NULL-terminated, in the order of the enum they pick */
    const char *def;            /* the default as the flag's text; NULL: not given (0 or NULL) */
    const char *usage;          /* the --help column before the text: "--batch N" */
    const char *help;           /* the --help text, lines apart by '\n'; NULL with TR_FLAG_SAME_LINE */
    unsigned bits;
} tr_flag;


extern const tr_flag tr_flags[];
extern const int tr_n_flags;

/* The row of a flag; NULL for a name the trainer does not take. */
const tr_flag *tr_flag_find(const char *name);
/* The usage text (trainer --help). */
void tr_flags_usage(FILE *f);
/* Stores v in the field of fl in o, parsed and range
 * checked; a bad value exits 2 naming the flag and what it expects. */
void tr_flag_set(struct tr_options *o, const tr_flag *fl, const char *v);
/* Sets every field of the table to its default. */
void tr_flags_defaults(struct tr_options *o);
/* The value of fl in o as the text the ranks compare ("" for a text not given). */
void tr_flag_format(const struct tr_options *o, const tr_flag *fl, char *buf, size_t n);
/* The index of v among the choices of the flag name, or exits 2 listing them. */
int tr_flag_pick(const char *name, const char *v);

#endif
