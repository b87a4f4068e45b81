/* run_cnn.h: the trainer program's run of a CNN model (--model cnn-*):
 * Fashion-MNIST from --data, the model of model_cnn.h, epochs of
 * optimizer steps and a test pass after each. */
#ifndef TR_RUN_CNN_H
#define TR_RUN_CNN_H

#include "options.h"

/* The whole run from parsed flags; the program's exit status. */
int tr_run_cnn(const tr_options *o);

#endif
