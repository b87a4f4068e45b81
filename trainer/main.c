/* main.c: the trainer program: the run from its flags (options.c) to the
 * last step: data, backend, model, resume, the loop over steps (the step
 * itself is train.c's), progress lines, evaluation and checkpoints. The
 * optional parts (the CUDA backend, distributed training) plug in through
 * plug.h, which holds the program's #ifdefs.
 * It speaks NVTX only (ranges "step N", "data", "forward", "backward",
 * "optimizer", "eval" and one per op; the allocator's memory events), so any
 * NVTX tool can trace it; it does not know gtrace. */
#include "config.h"

#include "alloc.h"
#include "backend.h"
#include "ckpt.h"
#include "data.h"
#include "error.h"
#include "gpt.h"
#include "memlimit.h"
#include "options.h"
#include "plug.h"
#include "run_cnn.h"
#include "train.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Everything a run holds, from its flags to its loaders. */
typedef struct run {
    tr_options o;
    int B, T, rank, n_ranks; /* the loader yields n_ranks x B rows; this rank trains on its B */
    struct tr_dist *dist;    /* NULL: one process */
    tr_dataset *data;
    tr_gpt_config cfg;
    tr_backend *be;
    tr_alloc *alloc;
    tr_gpt *model;
    tr_train_config tc;
    tr_trainer trainer;
    int step0, end;
    uint64_t seed;
    tr_loader *train, *val;
    bool tty;
    double last_loss, seconds;
} run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- checkpoints: --save, --resume ---------------------------------------- */

static void save_checkpoint(const tr_options *o, tr_trainer *t, int64_t step, uint64_t seed, int rank, int n_ranks)
{
    tr_ckpt_state cs = {.step = step, .seed = seed, .ema = t->ema.w.data ? &t->ema.w : NULL};
    if (t->scaler.dynamic) { /* a resumed fp16 run goes on with the scale it had learned */
        cs.loss_scale = t->scaler.scale;
        cs.loss_scale_good_steps = t->scaler.good_steps;
    }
    bool full = !strcmp(o->save_format, "full");
    if (tr_plug_save(t, o->save, full, &cs) < 0)
        tr_plug_fail_checkpoint(t);
    if (rank != 0)
        return;
    if (full)
        printf("trainer: saved %s%s\n", o->save, n_ranks > 1 && t->shard_end - t->shard_begin < t->model->n_params ?
               " (gathered from every rank's shard)" : "");
    else
        printf("trainer: saved %s.rank0-of-%d to %s.rank%d-of-%d (one shard per rank)\n", o->save, n_ranks, o->save,
               n_ranks - 1, n_ranks);
    /* one checkpoint per name: what an earlier save of the other kind left would make --resume ambiguous */
    int n_stale = tr_ckpt_remove_stale(o->save, full ? TR_CKPT_FULL : TR_CKPT_SHARDED, n_ranks);
    if (n_stale > 0)
        printf("trainer: removed %d file(s) an earlier checkpoint left at %s\n", n_stale, o->save);
}

/* --save is checked before any work: a run whose checkpoint cannot be
 * written (a device, a FIFO or a folder at the path, a folder that is
 * missing or not writable) is refused now rather than after training.
 * Each rank checks the file it will write. */
static int check_save(const tr_options *o, int rank, int n_ranks)
{
    if (!o->save)
        return TR_OK;
    if (!strcmp(o->save_format, "full"))
        return rank == 0 ? tr_ckpt_check_target(o->save) : TR_OK;
    char *file = tr_ckpt_shard_path(o->save, rank, n_ranks);
    if (!file)
        return tr_error_set(TR_ENOMEM, "out of memory checking %s", o->save);
    int rc = tr_ckpt_check_target(file);
    free(file);
    return rc;
}

/* The data, split, with room for one sample in each part it uses. */
static void open_data(run *r)
{
    tr_options *o = &r->o;
    int T = r->T;
    if (tr_dataset_open(&r->data, o->data) < 0) {
        fprintf(stderr, "trainer: %s\n", tr_error_last());
        exit(1);
    }
    tr_dataset *data = r->data;
    tr_dataset_split(data, o->val_fraction);
    if (o->val_fraction == 0)
        o->eval_every = 0;
    size_t n_val = data->n_tokens - data->n_train;
    if (data->n_train < (size_t)T + 1) { /* a sample is T + 1 tokens: T inputs and the next token of each */
        fprintf(stderr, "trainer: the data %s holds %zu tokens, %zu of them for training: fewer than one sample of "
                        "--seq %d needs (%d); use more data or a smaller --seq\n", o->data, data->n_tokens,
                data->n_train, T, T + 1);
        exit(1);
    }
    if (o->eval_every && n_val < (size_t)T + 1) {
        fprintf(stderr, "trainer: the data %s holds %zu tokens, %zu of them for validation (--val-fraction %g): "
                        "fewer than one sample of --seq %d needs (%d); use a larger --val-fraction, --val-fraction 0 "
                        "(no evaluation) or a smaller --seq\n", o->data, data->n_tokens, n_val, o->val_fraction, T,
                T + 1);
        exit(1);
    }
}

/* The backend, the caching allocator, the model and the trainer. */
static void make_model(run *r)
{
    tr_options *o = &r->o;
    const tr_preset *p = o->p;
    r->cfg = (tr_gpt_config){.max_seq_len = r->T > p->seq_len ? r->T : p->seq_len,
                             .vocab_size = r->data->vocab_size, .n_layers = o->n_layers ? o->n_layers : p->n_layers,
                             .n_heads = o->n_heads ? o->n_heads : p->n_heads,
                             .channels = o->channels ? o->channels : p->channels};
    tr_gpt_config_finish(&r->cfg);
    tr_check(tr_gpt_config_check(&r->cfg));

    tr_options_cuda_graph(o); /* what --cuda-graph cannot do is refused before the device opens */
    r->be = tr_plug_backend(o);
    size_t as_cap = tr_memlimit_cap(o, r->be, &r->cfg), mem_limit = o->mem_limit;
    if (as_cap && (!mem_limit || as_cap < mem_limit))
        mem_limit = as_cap;
    tr_check(tr_alloc_new(&r->alloc, &r->be->mem, mem_limit));
    tr_check(tr_gpt_new(&r->model, &r->cfg, r->be, r->alloc, o->seed));
    r->tc = tr_options_train_config(o);
    tr_plug_dist_join(r->dist, o, r->model, r->data, r->be, &r->tc);
    tr_check(tr_trainer_init(&r->trainer, r->model, &r->tc));
    r->trainer.row0 = r->rank * r->B;
}

/* --resume: the weights, optimizer, EMA and loss scale; the step and seed it was saved at. */
static void resume(run *r)
{
    const tr_options *o = &r->o;
    tr_trainer *t = &r->trainer;
    tr_ckpt_state st = {.ema = t->ema.w.data ? &t->ema.w : NULL};
    if (tr_plug_load(t, o->resume, &st) < 0)
        tr_plug_fail_checkpoint(t);
    if (st.step > INT_MAX - o->steps) { /* steps are counted in an int */
        tr_error_set(TR_EFORMAT, "%s was saved at step %lld: %d more steps pass the last step the trainer counts "
                     "(%d); use fewer --steps", o->resume, (long long)st.step, o->steps, INT_MAX);
        tr_plug_fail_checkpoint(t);
    }
    if (!tr_scaler_resume(&t->scaler, st.loss_scale, st.loss_scale_good_steps)) {
        tr_error_set(TR_EFORMAT, "%s: the metadata's loss_scale_good_steps is %d: expected below the loss scale's "
                     "growth interval (%d)", o->resume, st.loss_scale_good_steps, t->scaler.growth_interval);
        tr_plug_fail_checkpoint(t);
    }
    r->step0 = (int)st.step;
    r->seed = st.seed; /* the data order continues as the saved run drew it */
    if (st.ema && !st.ema_loaded) { /* a file saved without --ema: the average starts at the resumed weights */
        r->be->copy_d2h(r->be, st.ema->data, r->model->params_flat.data, r->model->n_params * sizeof(float), 0);
        fprintf(stderr, "trainer: %s holds no weight EMA; --ema starts from the resumed weights\n", o->resume);
    }
    fprintf(stderr, "trainer: resumed %s at step %d%s\n", o->resume, r->step0, st.ema_loaded ? " (with its EMA)" : "");
}

/* The loaders, positioned at the first step. */
static void make_loaders(run *r)
{
    const tr_options *o = &r->o;
    int B = r->B, T = r->T;
    r->end = r->step0 + o->steps;
    if ((double)r->end * o->accum * B * r->n_ranks > 9e18) { /* the loader numbers samples in an int64 */
        fprintf(stderr, "trainer: %d steps x --accum %d x --batch %d x %d rank(s) is more samples than the loader "
                        "counts; use fewer --steps or a smaller --accum or --batch\n", r->end, o->accum, B,
                r->n_ranks);
        exit(2);
    }
    r->trainer.cfg.schedule.total_steps = r->end; /* the schedule spans the whole run, resumed or not */
    tr_dataset *data = r->data;
    tr_check(tr_loader_new(&r->train, data, 0, data->n_train, B * r->n_ranks, T, r->seed, o->workers, r->be));
    tr_check(tr_loader_seek(r->train, (int64_t)r->step0 * o->accum)); /* accum micro-batches per step */
    if (o->eval_every)
        tr_check(tr_loader_new(&r->val, data, data->n_train, data->n_tokens, B * r->n_ranks, T, r->seed, 0, r->be));
}

static void print_banner(run *r)
{
    const tr_options *o = &r->o;
    const tr_gpt_config *cfg = &r->cfg;
    const tr_dataset *data = r->data;
    /* n_params counts the (Vp - V) zero padding rows of wte, as llm.c does */
    size_t n_unpadded = r->model->n_params - (size_t)(cfg->padded_vocab_size - cfg->vocab_size) * cfg->channels;
    printf("trainer: %s on %s: %d layers, width %d, %d heads, context %d, vocabulary %d (padded to %d); "
           "%zu parameters (%zu without the padding rows)\n",
           o->p->name, r->be->name, cfg->n_layers, cfg->channels, cfg->n_heads, r->T, cfg->vocab_size,
           cfg->padded_vocab_size, r->model->n_params, n_unpadded);
    printf("trainer: data %s: %zu tokens from %d file(s), %zu train, %zu validation; batch %d x %d",
           o->data, data->n_tokens, data->n_files, data->n_train, data->n_tokens - data->n_train, r->B, r->T);
    if (o->accum > 1)
        printf(" x %d micro-batches", o->accum);
    printf("; %d thread(s), %d loader worker(s)\n", r->be->n_threads, o->workers);
    tr_plug_backend_banner(o, r->be);
    const tr_trainer *t = &r->trainer;
    printf("trainer: %s%samp %s%s, checkpointing %s, fusion %s, %s, lr %g %s%s%s\n", o->preset ? "preset " : "",
           o->preset ? o->preset : "", o->amp,
           t->scaler.dynamic ? " (dynamic loss scale)" : t->scaler.enabled ? " (fixed loss scale)" : "",
           o->checkpoint, o->fuse, o->optimizer, o->lr, o->schedule, o->ema > 0 ? ", ema" : "",
           r->tc.cuda_graph ? ", cuda graph" : "");
    tr_plug_dist_banner(r->dist, t, r->B);
    fflush(stdout);
}

/* On a GPU the loss is read back (a wait for the device) only on the steps that print it. */
static bool read_loss(void *ctx, int step)
{
    const run *r = ctx;
    return r->be->device != TR_CUDA || r->tty || (step - r->step0 + 1) % r->o.log_every == 0 ||
           step == r->step0 || step + 1 == r->end;
}

/* A step's progress line; a validation after it when it is due. */
static int report_step(void *ctx, int step, const tr_step_result *res, double dt, double elapsed)
{
    run *r = ctx;
    const tr_options *o = &r->o;
    tr_trainer *t = &r->trainer;
    const char *cr = r->tty ? "\r\033[K" : "";
    float loss = (float)res->loss;
    r->last_loss = loss;
    if (res->graph_captured) {
        tr_alloc_stats as;
        tr_alloc_get_stats(r->alloc, &as);
        printf("%strainer: step %d captured into a CUDA graph of %zu nodes after %d warm-up step(s), replayed "
               "from here on; its private pool holds %.1f MiB\n", cr, step + 1, t->graph.n_nodes, t->graph.n_warmup,
               as.graph_pool_bytes / 1048576.0);
    }
    if (step + 1 == r->end)
        tr_plug_dist_last_step(r->dist, r->alloc);
    int done = step - r->step0 + 1;
    tr_alloc_stats st;
    tr_alloc_get_stats(r->alloc, &st);
    double eta = elapsed / done * (r->end - step - 1);
    if (r->tty || done % o->log_every == 0 || step == r->step0 || step + 1 == r->end || res->skipped) {
        if (isnan(loss) && t->skip_loss) /* a skipped step between logging steps: not read back */
            printf("step %d/%d loss n/a lr %.2e", step + 1, r->end, res->lr);
        else
            printf("%sstep %d/%d loss %.4f lr %.2e", cr, step + 1, r->end, loss, res->lr);
        if (t->scaler.enabled)
            printf(" scale %g%s", res->scale, res->skipped ? " (skipped: inf/NaN gradients)" : "");
        if (isfinite(res->grad_norm))
            printf(" norm %.3f", res->grad_norm);
        printf(" %.0f tok/s %.1f ms/step mem %.1f/%.1f MiB eta %.0fs%s", (double)r->B * r->T * o->accum / dt,
               dt * 1e3, st.allocated_bytes / 1048576.0, st.reserved_bytes / 1048576.0, eta, r->tty ? "" : "\n");
        fflush(stdout);
    }
    if (r->val && ((step + 1) % o->eval_every == 0 || step + 1 == r->end)) {
        float vl;
        tr_trainer_eval_weights(t, true);
        tr_check(tr_trainer_evaluate(t, r->val, o->eval_batches, r->B, r->T, &vl));
        tr_trainer_eval_weights(t, false);
        printf("%sstep %d val loss %.4f%s\n", cr, step + 1, vl, t->ema.w.data ? " (ema weights)" : "");
        fflush(stdout);
    }
    return 0;
}

/* The steps; 1 if the loss diverged. */
static int train_steps(run *r)
{
    r->tty = isatty(STDOUT_FILENO) && !r->dist; /* mpirun hands rank 0 a pseudo-terminal; its output is a log */
    r->last_loss = NAN;
    double t_start = now_s();
    tr_trainer *t = &r->trainer;
    tr_gpt_loader g;
    tr_gpt_loader_init(&g, t, r->train, r->B, r->T);
    const tr_run_hooks hooks = {r, read_loss, report_step};
    int rc = tr_trainer_run(t, &g.batches, r->step0, r->end, &hooks);
    tr_check(rc < 0 ? rc : TR_OK);
    r->seconds = now_s() - t_start;
    return rc;
}

static void print_summary(run *r)
{
    const tr_options *o = &r->o;
    tr_trainer *t = &r->trainer;
    tr_trainer_sync(t); /* a step decided on the device: its scale, skips and optimizer step count */
    tr_alloc_stats st;
    tr_alloc_get_stats(r->alloc, &st);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double tokens = (double)r->B * r->T * o->accum * o->steps;
    printf("%strainer: %d steps in %.2f s, %.0f tok/s; final loss %.4f; peak allocated %.1f MiB, peak reserved "
           "%.1f MiB, peak activations %.1f MiB, peak RSS %.1f MiB\n",
           r->tty ? "\r\033[K" : "", o->steps, r->seconds, tokens / (r->seconds > 0 ? r->seconds : 1), r->last_loss,
           st.peak_allocated_bytes / 1048576.0, st.peak_reserved_bytes / 1048576.0,
           r->model->peak_activation_bytes / 1048576.0, ru.ru_maxrss / 1024.0);
    if (t->scaler.enabled)
        printf("trainer: loss scale %g at the end, %lld step(s) skipped for inf/NaN gradients\n", t->scaler.scale,
               (long long)t->scaler.n_skipped);
    if (r->tc.cuda_graph && t->graph.captured_at >= 0)
        printf("trainer: cuda graph: %d warm-up step(s), captured at step %d, %lld replay(s)\n", t->graph.n_warmup,
               t->graph.captured_at + 1, (long long)t->graph.n_replays);
    else if (r->tc.cuda_graph)
        printf("trainer: cuda graph: %d warm-up step(s); the run ended before the capture\n", t->graph.n_warmup);
    tr_plug_dist_summary(r->dist, o, t);
}

int main(int argc, char **argv)
{
    run r = {0};
    tr_options_parse(&r.o, argc, argv);
    if (r.o.cnn) /* an image classifier: a run of its own */
        return tr_run_cnn(&r.o);
    r.B = r.o.batch;
    r.T = r.o.seq_len;
    r.seed = r.o.seed;
    r.dist = tr_plug_dist_start(&r.o, &r.rank, &r.n_ranks);
    tr_plug_dist_check_save(r.dist, check_save(&r.o, r.rank, r.n_ranks), r.rank);
    open_data(&r);
    make_model(&r);
    if (r.o.resume)
        resume(&r);
    make_loaders(&r);
    print_banner(&r);
    if (train_steps(&r) != 0)
        return 1;
    print_summary(&r);
    if (r.o.save)
        save_checkpoint(&r.o, &r.trainer, r.end, r.seed, r.rank, r.n_ranks);
    tr_loader_free(r.train);
    tr_loader_free(r.val);
    tr_trainer_release(&r.trainer);
    tr_gpt_free(r.model);
    tr_alloc_free(r.alloc);
    tr_plug_backend_free(r.be);
    tr_dataset_free(r.data);
    tr_plug_dist_free(r.dist);
    return 0;
}
