/* plug.h: where the trainer program's optional parts plug in: the CUDA
 * backend (built with the CUDA toolkit) and distributed training (built with
 * Open MPI). main.c calls these alike in every build; a part that was not
 * built does nothing here, or refuses its flags by name. dist is NULL in one
 * process. */
#ifndef TR_PLUG_H
#define TR_PLUG_H

#include "alloc.h"
#include "backend.h"
#include "ckpt.h"
#include "data.h"
#include "gpt.h"
#include "options.h"
#include "train.h"

#include <stdbool.h>

struct tr_dist;

/* The CPU backend, or the CUDA one with its switches; CUDA flags without
 * --backend cuda are refused rather than ignored. Exits on failure. */
tr_backend *tr_plug_backend(const tr_options *o);
void tr_plug_backend_free(tr_backend *be);
/* The banner's line about the device (nothing on the CPU). */
void tr_plug_backend_banner(const tr_options *o, const tr_backend *be);

/* MPI starts before anything else (ranks other than 0 print errors only);
 * NULL without --dist. Under --dist on GPUs a rank takes the GPU of its
 * index on its node unless --device says otherwise. */
struct tr_dist *tr_plug_dist_start(tr_options *o, int *rank, int *n_ranks);
/* --save checked on every rank (save_rc: this rank's check): all stop if one
 * cannot save, the failing ones saying why. */
void tr_plug_dist_check_save(struct tr_dist *dist, int save_rc, int rank);
/* The ranks agree on every flag and shape that changes the training, the
 * backend gets its communicator, tc its distributed part. */
void tr_plug_dist_join(struct tr_dist *dist, const tr_options *o, const tr_gpt *model, const tr_dataset *data,
                       tr_backend *be, tr_train_config *tc);
/* The banner's line and the start of the timed steps. */
void tr_plug_dist_banner(struct tr_dist *dist, const tr_trainer *t, int B);
/* After the last step: the model states the allocator holds. */
void tr_plug_dist_last_step(struct tr_dist *dist, const tr_alloc *alloc);
/* The ZeRO accounting and the communication per step. */
void tr_plug_dist_summary(struct tr_dist *dist, const tr_options *o, const tr_trainer *t);
void tr_plug_dist_free(struct tr_dist *dist);

/* A checkpoint saved or loaded by ckpt.c, or through the ranks (a full file
 * gathered to rank 0, or each rank's shard). */
int tr_plug_save(tr_trainer *t, const char *path, bool full, const tr_ckpt_state *cs);
int tr_plug_load(tr_trainer *t, const char *path, tr_ckpt_state *st);
/* A checkpoint not saved or resumed: each rank prints its reason (the ranks
 * agreed on failing, so all stop here and MPI ends cleanly); exits 1. */
void tr_plug_fail_checkpoint(tr_trainer *t) __attribute__((noreturn));

#endif
