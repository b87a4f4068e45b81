/* plug.c: where the trainer program's optional parts plug in (plug.h): the
 * CUDA backend (TR_CUDA_BACKEND) and distributed training over Open MPI
 * (HAVE_MPI). The program's #ifdefs are here: without a part, its functions
 * do nothing, or refuse its flags by name. */
#include "config.h"

#include "plug.h"

#include "ckpt.h"
#include "error.h"
#include "flags.h"
#ifdef TR_CUDA_BACKEND
#include "backend_cuda.h"
#endif
#ifdef HAVE_MPI
#include "dist.h"
#include "dist_gpt.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the backend: --backend cpu|cuda and the CUDA switches ---------------- */

#ifdef TR_CUDA_BACKEND
/* --attention; cudnn is refused before the device opens where it cannot run. */
static tr_cuda_attention attention_mode(const tr_options *o)
{
    if (!o->attention)
        return TR_CUDA_ATTENTION_AUTO;
    /* the table's choices are in tr_cuda_attention's order */
    tr_cuda_attention m = (tr_cuda_attention)tr_flag_pick("--attention", o->attention);
    if (m == TR_CUDA_ATTENTION_CUDNN && !strcmp(o->amp, "off")) {
        fprintf(stderr, "trainer: --attention cudnn: cuDNN's fused attention has no fp32; add --amp bf16 or --amp "
                        "fp16, or use --attention auto (the own kernel for fp32)\n");
        exit(2);
    }
#ifndef HAVE_CUDNN
    if (m == TR_CUDA_ATTENTION_CUDNN) {
        fprintf(stderr, "trainer: --attention cudnn: this trainer was built without cuDNN (configure found no "
                        "cudnn.h or libcudnn); use --attention auto or own\n");
        exit(2);
    }
#endif
    return m;
}
#endif

/* The CPU backend, or the CUDA one with its switches; CUDA flags without
 * --backend cuda are refused rather than ignored. */
tr_backend *tr_plug_backend(const tr_options *o)
{
    bool cuda = o->backend && !strcmp(o->backend, "cuda");
    if (o->backend && !cuda && strcmp(o->backend, "cpu"))
        tr_flag_pick("--backend", o->backend);
    if (!cuda && o->attention) {
        fprintf(stderr, "trainer: --attention is a switch of --backend cuda (the cpu backend has one attention "
                        "kernel)\n");
        exit(2);
    }
    if (!cuda) {
        if (o->device >= 0 || o->pin_memory || o->expandable_segments || o->sync_every_op || o->autotune || o->tf32) {
            fprintf(stderr, "trainer: --device, --pin-memory, --expandable-segments, --sync-every-op, --autotune "
                            "and --tf32 are switches of --backend cuda\n");
            exit(2);
        }
        return tr_backend_cpu(o->threads);
    }
#ifdef TR_CUDA_BACKEND
    tr_cuda_options co = {.device = o->device < 0 ? 0 : o->device,
                          .pin_memory = tr_options_on("--pin-memory", o->pin_memory),
                          .expandable_segments = tr_options_on("--expandable-segments", o->expandable_segments),
                          .sync_every_op = tr_options_on("--sync-every-op", o->sync_every_op),
                          .autotune = tr_options_on("--autotune", o->autotune),
                          .tf32 = tr_options_on("--tf32", o->tf32),
                          .attention = attention_mode(o)};
    tr_backend *be;
    if (tr_backend_cuda_new(&be, &co) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
    return be;
#else
    fprintf(stderr, "trainer: --backend cuda: this trainer was built without the CUDA toolkit (configure found "
                    "none, or no cuBLASLt); use --backend cpu\n");
    exit(2);
#endif
}

void tr_plug_backend_free(tr_backend *be)
{
#ifdef TR_CUDA_BACKEND
    if (be->device == TR_CUDA)
        tr_backend_cuda_free(be);
#else
    (void)be;
#endif
}

void tr_plug_backend_banner(const tr_options *o, const tr_backend *be)
{
#ifdef TR_CUDA_BACKEND
    if (be->device == TR_CUDA)
        printf("trainer: cuda device %d: %s\n", o->device < 0 ? 0 : o->device, tr_backend_cuda_describe(be));
#else
    (void)o, (void)be;
#endif
}

/* ---- distributed training ---------------------------------------------------- */

#ifdef HAVE_MPI
static tr_dist_gpt_config dist_cfg; /* what attach makes */
static tr_dist_stats comm0;         /* at the start of the steps */
static double states_bytes;         /* allocated after the last step: the model states */

static int dist_attach(tr_dist_gpt **out, void *ctx, tr_gpt *m) { return tr_dist_gpt_new(out, ctx, m, &dist_cfg); }

/* dist_gpt.h in the trainer's loop; ctx is the tr_dist */
static tr_train_dist dist_hooks = {
    .attach = dist_attach,
    .detach = tr_dist_gpt_free,
    .range = tr_dist_gpt_range,
    .forward_begin = tr_dist_gpt_forward_begin,
    .backward_begin = tr_dist_gpt_backward_begin,
    .backward_end = tr_dist_gpt_backward_end,
    .eval_end = tr_dist_gpt_eval_end,
    .grad_sumsq = tr_dist_gpt_grad_sumsq,
    .step_end = tr_dist_gpt_step_end,
    .mean = tr_dist_gpt_mean,
};

/* MPI starts before anything else; ranks other than 0 print errors only. */
static tr_dist *dist_start(const tr_options *o)
{
    if (!o->dist)
        return NULL;
    tr_flag_pick("--dist", o->dist); /* ddp or fsdp, or exits naming them */
    tr_dist *d;
    tr_check(tr_dist_init(&d, o->dist_timeout));
    if (tr_dist_rank(d) != 0 && !freopen("/dev/null", "w", stdout))
        perror("trainer: /dev/null");
    return d;
}

/* Every flag the table marks TR_FLAG_RANKS, as the model resolved it, and
 * the shapes that change the training must match on all ranks. */
static void dist_agree(tr_dist *d, const tr_options *o, const tr_gpt *m, const tr_dataset *data)
{
    tr_options r = *o; /* the shape the preset and the flags made */
    r.n_layers = m->cfg.n_layers;
    r.channels = m->cfg.channels;
    r.n_heads = m->cfg.n_heads;
    tr_dist_setting *s = calloc((size_t)tr_n_flags + 2, sizeof *s);
    int n = 0;
    if (!s) {
        fprintf(stderr, "trainer: rank %d: out of host memory for the configuration check\n", tr_dist_rank(d));
        exit(1);
    }
    for (int i = 0; i < tr_n_flags; i++)
        if (tr_flags[i].bits & TR_FLAG_RANKS) {
            s[n].name = tr_flags[i].name;
            tr_flag_format(&r, &tr_flags[i], s[n++].value, sizeof s->value);
        }
    s[n].name = "data tokens";
    snprintf(s[n++].value, sizeof s->value, "%zu", data->n_tokens);
    s[n].name = "parameters";
    snprintf(s[n++].value, sizeof s->value, "%zu", m->n_params);
    int rc = tr_dist_agree(d, s, n);
    free(s);
    if (rc < 0) {
        fprintf(stderr, "trainer: rank %d: %s\n", tr_dist_rank(d), tr_error_last());
        tr_dist_free(d);
        exit(2);
    }
}
#endif

struct tr_dist *tr_plug_dist_start(tr_options *o, int *rank, int *n_ranks)
{
    *rank = 0;
    *n_ranks = 1;
#ifdef HAVE_MPI
    tr_dist *dist = dist_start(o);
    dist_cfg = (tr_dist_gpt_config){.strategy = o->dist && !strcmp(o->dist, "fsdp") ? TR_DIST_FSDP : TR_DIST_DDP,
                                    .zero = o->zero ? o->zero : 3,
                                    .bucket_bytes = (size_t)(o->bucket_mb * 1048576.0)};
    if (dist) {
        *rank = tr_dist_rank(dist);
        *n_ranks = tr_dist_size(dist);
        if (o->device < 0 && o->backend && !strcmp(o->backend, "cuda")) /* one GPU per rank of a node */
            o->device = tr_dist_local_rank(dist);
    }
    return dist;
#else
    (void)o;
    return NULL;
#endif
}

void tr_plug_dist_check_save(struct tr_dist *dist, int save_rc, int rank)
{
#ifdef HAVE_MPI
    if (dist) { /* every rank stops if one cannot save: the failing ones say why */
        int ok = save_rc == TR_OK;
        tr_check(tr_dist_allreduce_min_int(dist, &ok, 1, "checking --save"));
        if (!ok) {
            if (save_rc < 0)
                fprintf(stderr, "trainer: rank %d: %s\n", rank, tr_error_last());
            tr_dist_free(dist);
            exit(1);
        }
    }
#else
    (void)dist, (void)save_rc, (void)rank;
#endif
    if (save_rc < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
}

void tr_plug_dist_join(struct tr_dist *dist, const tr_options *o, const tr_gpt *model, const tr_dataset *data,
                       tr_backend *be, tr_train_config *tc)
{
#ifdef HAVE_MPI
    if (!dist)
        return;
    dist_agree(dist, o, model, data);
    if (tr_dist_use_backend(dist, be) < 0) { /* on a GPU: the NCCL communicator */
        fprintf(stderr, "trainer: rank %d: %s\n", tr_dist_rank(dist), tr_error_last());
        exit(1);
    }
    dist_hooks.ctx = dist;
    dist_hooks.shards_weights = dist_cfg.strategy == TR_DIST_FSDP && dist_cfg.zero == 3;
    tc->dist = &dist_hooks;
#else
    (void)dist, (void)o, (void)model, (void)data, (void)be, (void)tc;
#endif
}

void tr_plug_dist_banner(struct tr_dist *dist, const tr_trainer *t, int B)
{
#ifdef HAVE_MPI
    if (!dist)
        return;
    printf("trainer: %s over %d ranks (%s): batch %d per rank, %d in all\n", tr_dist_gpt_name(t->dist),
           tr_dist_size(dist), tr_dist_transport(dist), B, B * tr_dist_size(dist));
    tr_check(tr_dist_barrier(dist, "start")); /* time the steps, not the start-up */
    tr_check(tr_dist_get_stats(dist, &comm0));
#else
    (void)dist, (void)t, (void)B;
#endif
}

void tr_plug_dist_last_step(struct tr_dist *dist, const tr_alloc *alloc)
{
#ifdef HAVE_MPI
    if (!dist)
        return;
    tr_alloc_stats as;
    tr_alloc_get_stats((tr_alloc *)alloc, &as);
    states_bytes = (double)as.allocated_bytes;
#else
    (void)dist, (void)alloc;
#endif
}

void tr_plug_dist_summary(struct tr_dist *dist, const tr_options *o, const tr_trainer *t)
{
#ifdef HAVE_MPI
    if (!dist)
        return;
    /* the ZeRO accounting, and how much communication compute hid */
    tr_dist_gpt_memory mem;
    double optim_bytes = t->opt.m.data ? (t->opt.v.data ? 8.0 : 4.0) : 0.0;
    tr_dist_gpt_get_memory(t->dist, optim_bytes, &mem);
    tr_dist_stats c1;
    tr_check(tr_dist_get_stats(dist, &c1));
    double steps = o->steps > 0 ? o->steps : 1;
    double fl = (c1.in_flight_ns - comm0.in_flight_ns) / 1e6 / steps;
    double ex = (c1.exposed_ns - comm0.exposed_ns) / 1e6 / steps;
    printf("trainer: rank 0 model states: expected %.3f MiB (amp %s), measured %.3f MiB after the last step; "
           "the ZeRO paper's mixed-precision figure %.3f MiB\n",
           mem.expected_bytes / 1048576.0, o->amp, states_bytes / 1048576.0, mem.paper_bytes / 1048576.0);
    printf("trainer: communication per step: %.0f collectives, %.2f MiB sent, %.2f ms in flight, %.2f ms "
           "exposed, %.0f%% hidden behind compute\n",
           (c1.n_collectives - comm0.n_collectives) / steps, (c1.bytes - comm0.bytes) / 1048576.0 / steps, fl, ex,
           fl > 0 ? 100.0 * (fl - ex > 0 ? fl - ex : 0) / fl : 0.0);
#else
    (void)dist, (void)o, (void)t;
#endif
}

void tr_plug_dist_free(struct tr_dist *dist)
{
#ifdef HAVE_MPI
    tr_dist_free(dist);
#else
    (void)dist;
#endif
}

/* ---- checkpoints: one file, or through the ranks ------------------------- */

/* A checkpoint not saved or resumed: each rank prints its reason (the
 * ranks agreed on failing, so all stop here and MPI ends cleanly). */
void tr_plug_fail_checkpoint(tr_trainer *t)
{
#ifdef HAVE_MPI
    if (t->dist) {
        tr_dist *d = tr_dist_gpt_dist(t->dist);
        fprintf(stderr, "trainer: rank %d: %s\n", tr_dist_rank(d), tr_error_last());
        tr_trainer_release(t);
        tr_dist_free(d);
        exit(1);
    }
#endif
    fprintf(stderr, "trainer: %s\n", tr_error_last());
    exit(1);
}

int tr_plug_save(tr_trainer *t, const char *path, bool full, const tr_ckpt_state *cs)
{
#ifdef HAVE_MPI
    if (t->dist)
        return tr_dist_gpt_save(t->dist, path, full, &t->opt, cs);
#endif
    (void)full;
    return tr_ckpt_save(path, t->gpt, &t->opt, cs);
}

int tr_plug_load(tr_trainer *t, const char *path, tr_ckpt_state *st)
{
#ifdef HAVE_MPI
    if (t->dist)
        return tr_dist_gpt_load(t->dist, path, &t->opt, st); /* a full file or this rank's shard */
#endif
    return tr_ckpt_load(path, t->gpt, &t->opt, st);
}
