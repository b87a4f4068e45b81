/* data.h: token data and the batch loader.
 * A dataset is one token array, read from a text file (bytes are tokens),
 * a folder of text files (the plain ones, sorted by name: fortune's .dat
 * indexes, .u8 links and hidden files are skipped; a line holding only "%"
 * separates fortunes and becomes an empty line), or an llm.c token file
 * (.bin: 256 int32 header, magic 20240520, version 1, n_tokens, then uint16
 * tokens). The caller picks the split (the trainer: the last tenth, or
 * --val-fraction, is validation; tr_dataset_split).
 * A sample is T+1 consecutive tokens at a multiple of T; an epoch visits
 * every sample once, in an order drawn from (seed, epoch); batch k of the
 * run is a pure function of (seed, k), so workers, resume and thread counts
 * do not change what is trained on. Epochs run on without a gap: nothing is
 * dropped, and when B does not divide the sample count, the batch at an
 * epoch's end is completed from the next epoch's order. With workers, background threads fill a bounded ring of batches
 * in host staging buffers (pinned when the backend has pinned memory). */
#ifndef TR_DATA_H
#define TR_DATA_H

#include "backend.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TR_BIN_MAGIC 20240520
#define TR_BIN_VERSION 1

typedef struct tr_dataset {
    uint16_t *tokens;
    size_t n_tokens;
    size_t n_train;  /* tokens [0, n_train) train, the rest validate */
    int vocab_size;  /* 256 for text, 50257 (GPT-2) for .bin unless it holds larger ids */
    int n_files;
} tr_dataset;

int tr_dataset_open(tr_dataset **out, const char *path);
/* Makes the last val_fraction (0 <= x < 1) of the tokens the validation
 * split; tr_dataset_open leaves 0.1. */
void tr_dataset_split(tr_dataset *d, double val_fraction);
void tr_dataset_free(tr_dataset *d);

typedef struct tr_batch {
    int32_t *inputs;  /* (B, T) */
    int32_t *targets; /* (B, T) */
    int64_t index;    /* which batch of the run */
} tr_batch;

typedef struct tr_loader tr_loader;

/* Batches of B x T from tokens [begin, end) of d. n_workers 0 loads on the
 * calling thread. be supplies staging buffers (may be NULL: malloc). */
int tr_loader_new(tr_loader **out, const tr_dataset *d, size_t begin, size_t end, int B, int T,
                  uint64_t seed, int n_workers, tr_backend *be);
void tr_loader_free(tr_loader *l);
/* The next batch (borrowed until the next call); blocks until a worker has it. */
int tr_loader_next(tr_loader *l, const tr_batch **out);
/* Restarts at batch index k (resume). */
int tr_loader_seek(tr_loader *l, int64_t k);
int64_t tr_loader_n_samples(const tr_loader *l);
/* Batches that cover one epoch: ceil(n_samples / B). */
int64_t tr_loader_batches_per_epoch(const tr_loader *l);
/* Which sample of the split is row r of batch k (for tests). */
int64_t tr_loader_sample_of(const tr_loader *l, int64_t k, int r);

#endif
