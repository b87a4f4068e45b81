/* options.h: the trainer program's flags: parsing, the model presets, the
 * checks that need neither data nor a device, and the training
 * configuration they make (train.h). Each flag's type, range, default and
 * help are in the table of flags.h. A bad flag exits 2 with a message that
 * names it (a program's fail-fast). */
#ifndef TR_OPTIONS_H
#define TR_OPTIONS_H

#include "flags.h"
#include "train.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct tr_preset {
    const char *name;
    int n_layers, channels, n_heads, seq_len, batch;
    const char *what;
} tr_preset;


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
/* One of names[] -> its index, or a clear error listing them. */
int tr_options_pick(const char *flag, const char *v, const char *const *names, int n, const char *expected);
/* An on|off switch; NULL (not given) is off. */
bool tr_options_on(const char *flag, const char *v);

#endif
