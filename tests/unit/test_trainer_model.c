/* test_trainer_model.c: the GPT end to end on the CPU backend: the loss at
 * initialization, the whole model's backward against finite differences,
 * training lowers the loss, checkpoint round trip and resume equality, and
 * refused checkpoints. */
#include "ckpt.h"
#include "data.h"
#include "error.h"
#include "gpt.h"
#include "gt_test.h"
#include "trainer_fixture.h"
#include "optim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { B = 2, T = 8 };

static void setup(fixture *f, uint64_t seed) { fixture_setup(f, 16, T, seed); }
static void teardown(fixture *f) { fixture_teardown(f); }
static void tokens(int32_t *in, int32_t *tg, unsigned salt) { fixture_tokens(in, tg, B * T, salt); }

static void test_trainer_model__initial_loss(void)
{
    fixture f;
    setup(&f, 1);
    int32_t in[B * T], tg[B * T];
    tokens(in, tg, 0);
    float loss;
    CU_ASSERT_EQUAL(tr_gpt_forward(f.m, in, tg, B, T, false, &loss), TR_OK);
    CU_ASSERT(fabs(loss - log(256.0)) < 0.05); /* small weights: nearly uniform predictions */
    /* tokens outside the vocabulary are an error, not a crash */
    in[3] = 300;
    CU_ASSERT_EQUAL(tr_gpt_forward(f.m, in, tg, B, T, false, &loss), TR_EINVAL);
    teardown(&f);
}

static double loss_at(fixture *f, const int32_t *in, const int32_t *tg)
{
    float loss;
    CU_ASSERT_EQUAL(tr_gpt_forward(f->m, in, tg, B, T, false, &loss), TR_OK);
    return loss;
}

static void test_trainer_model__gradient_check(void)
{
    fixture f;
    setup(&f, 2);
    int32_t in[B * T], tg[B * T];
    tokens(in, tg, 1);
    /* larger weights than the init, so every path carries signal */
    float *p = f.m->params_flat.data;
    for (size_t i = 0; i < f.m->n_params; i++)
        p[i] *= 5.0f;
    tr_gpt_zero_grad(f.m);
    float loss;
    CU_ASSERT_EQUAL_FATAL(tr_gpt_forward(f.m, in, tg, B, T, true, &loss), TR_OK);
    CU_ASSERT_EQUAL_FATAL(tr_gpt_backward(f.m), TR_OK);
    const float *g = f.m->grads_flat.data;
    /* the largest gradient entry of each tensor against a central difference */
    int n_checked = 0;
    for (int k = 0; k < TR_GPT_N_TENSORS; k++) {
        tr_tensor *t = &f.m->params.all[k];
        size_t off = (size_t)((float *)t->data - p), n = (size_t)tr_tensor_numel(t), best = off;
        for (size_t i = off; i < off + n; i++)
            if (fabsf(g[i]) > fabsf(g[best]))
                best = i;
        float keep = p[best], eps = 1e-2f;
        p[best] = keep + eps;
        double lp = loss_at(&f, in, tg);
        p[best] = keep - eps;
        double lm = loss_at(&f, in, tg);
        p[best] = keep;
        double num = (lp - lm) / (2 * eps);
        if (fabs(num - g[best]) > 0.05 * fabs(g[best]) + 1e-4)
            fprintf(stderr, "  %s: analytic %g, numeric %g\n", tr_gpt_tensor_names[k], g[best], num);
        else
            n_checked++;
    }
    CU_ASSERT_EQUAL(n_checked, TR_GPT_N_TENSORS);
    /* the directional derivative along the gradient: all parameters at once */
    double gnorm = 0;
    for (size_t i = 0; i < f.m->n_params; i++)
        gnorm += (double)g[i] * g[i];
    gnorm = sqrt(gnorm);
    float *keep = malloc(f.m->n_params * sizeof *keep), eps = 1e-3f;
    memcpy(keep, p, f.m->n_params * sizeof *keep);
    for (size_t i = 0; i < f.m->n_params; i++)
        p[i] = keep[i] + eps * (float)(g[i] / gnorm);
    double lp = loss_at(&f, in, tg);
    for (size_t i = 0; i < f.m->n_params; i++)
        p[i] = keep[i] - eps * (float)(g[i] / gnorm);
    double lm = loss_at(&f, in, tg);
    double dir = (lp - lm) / (2 * eps);
    CU_ASSERT(fabs(dir - gnorm) < 0.02 * gnorm);
    free(keep);
    teardown(&f);
}

/* A step the host decided to take, with lr and the gradients' scale. */
static void optim_step(tr_optim *o, tr_gpt *m, float lr, float grad_scale)
{
    tr_step_hyper h = tr_optim_host_step(o, lr, grad_scale);
    tr_optim_step(o, &m->base, &h);
}

static const tr_optim_config adamw_config = {
    .kind = TR_OPTIM_ADAMW, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};

/* Trains steps [from, to) on the loader's batches. */
static void train(fixture *f, tr_optim *o, tr_loader *l, int from, int to, float *last)
{
    CU_ASSERT_EQUAL(tr_loader_seek(l, from), TR_OK);
    for (int s = from; s < to; s++) {
        const tr_batch *b;
        CU_ASSERT_EQUAL(tr_loader_next(l, &b), TR_OK);
        CU_ASSERT_EQUAL(tr_gpt_forward(f->m, b->inputs, b->targets, B, T, true, last), TR_OK);
        tr_gpt_zero_grad(f->m);
        CU_ASSERT_EQUAL(tr_gpt_backward(f->m), TR_OK);
        optim_step(o, f->m, 1e-2f, 1.0f);
    }
}

static tr_dataset *text_dataset(void)
{
    char *path = gt_test_path("text.txt");
    FILE *fp = fopen(path, "w");
    for (int i = 0; i < 200; i++)
        fprintf(fp, "the quick brown fox %d jumps over the lazy dog\n%%\n", i % 10);
    fclose(fp);
    tr_dataset *d = NULL;
    CU_ASSERT_EQUAL(tr_dataset_open(&d, path), TR_OK);
    free(path);
    return d;
}

static void test_trainer_model__learns_and_resumes(void)
{
    tr_dataset *d = text_dataset();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    fixture a, b;
    tr_optim oa, ob;
    tr_loader *la, *lb;
    setup(&a, 3);
    setup(&b, 99); /* other weights: loading must replace them all */
    CU_ASSERT_EQUAL(tr_optim_init(&oa, &a.m->base, &adamw_config, 0, a.m->n_params), TR_OK);
    CU_ASSERT_EQUAL(tr_optim_init(&ob, &b.m->base, &adamw_config, 0, b.m->n_params), TR_OK);
    CU_ASSERT_EQUAL(tr_loader_new(&la, d, 0, d->n_train, B, T, 5, 2, NULL), TR_OK);
    CU_ASSERT_EQUAL(tr_loader_new(&lb, d, 0, d->n_train, B, T, 5, 0, NULL), TR_OK);
    float first, last;
    train(&a, &oa, la, 0, 1, &first);
    train(&a, &oa, la, 1, 6, &last);
    char *ck = gt_test_path("ck.safetensors");
    tr_ckpt_state st = {.step = 6, .seed = 5};
    CU_ASSERT_EQUAL(tr_ckpt_save(ck, a.m, &oa, &st), TR_OK);
    train(&a, &oa, la, 6, 40, &last);
    CU_ASSERT(last < first - 1.0f); /* repetitive text: the loss falls fast */

    tr_ckpt_state got;
    CU_ASSERT_EQUAL(tr_ckpt_load(ck, b.m, &ob, &got), TR_OK);
    CU_ASSERT_EQUAL(got.step, 6);
    CU_ASSERT_EQUAL(got.seed, 5);
    CU_ASSERT_EQUAL(ob.t, 6);
    train(&b, &ob, lb, 6, 40, &last);
    /* 6 steps, save, resume, 34 steps == 40 steps, bitwise (workers 2 vs 0, too) */
    CU_ASSERT(memcmp(a.m->params_flat.data, b.m->params_flat.data, a.m->n_params * sizeof(float)) == 0);
    CU_ASSERT(memcmp(oa.v.data, ob.v.data, a.m->n_params * sizeof(float)) == 0);

    /* refused: truncated, foreign, another shape */
    char *bad = gt_test_path("bad.safetensors");
    CU_ASSERT_EQUAL(gt_test_copy(ck, bad), 0);
    CU_ASSERT_EQUAL(truncate(bad, gt_test_file_size(ck) - 4), 0);
    CU_ASSERT_EQUAL(tr_ckpt_load(bad, b.m, &ob, &got), TR_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "truncated"));
    FILE *fp = fopen(bad, "w");
    fputs("hello, I am not a checkpoint", fp);
    fclose(fp);
    CU_ASSERT_EQUAL(tr_ckpt_load(bad, b.m, &ob, &got), TR_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), bad));
    fixture c;
    tr_gpt_config other = {.max_seq_len = T, .vocab_size = 256, .n_layers = 1, .n_heads = 2, .channels = 16};
    tr_gpt_config_finish(&other);
    c.be = a.be;
    CU_ASSERT_EQUAL(tr_alloc_new(&c.alloc, &c.be->mem, 0), TR_OK);
    CU_ASSERT_EQUAL(tr_gpt_new(&c.m, &other, c.be, c.alloc, 1), TR_OK);
    tr_optim oc;
    CU_ASSERT_EQUAL(tr_optim_init(&oc, &c.m->base, &adamw_config, 0, c.m->n_params), TR_OK);
    CU_ASSERT_EQUAL(tr_ckpt_load(ck, c.m, &oc, &got), TR_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "another model"));
    CU_ASSERT_EQUAL(tr_ckpt_load(gt_test_path("missing"), c.m, &oc, &got), TR_EIO);
    tr_optim_release(&oc, &c.m->base);
    teardown(&c);

    free(ck);
    free(bad);
    tr_loader_free(la);
    tr_loader_free(lb);
    tr_optim_release(&oa, &a.m->base);
    tr_optim_release(&ob, &b.m->base);
    teardown(&a);
    teardown(&b);
    tr_dataset_free(d);
}

static const gt_test_case cases[] = {
    {"test_trainer_model__initial_loss", test_trainer_model__initial_loss},
    {"test_trainer_model__gradient_check", test_trainer_model__gradient_check},
    {"test_trainer_model__learns_and_resumes", test_trainer_model__learns_and_resumes},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_model", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
