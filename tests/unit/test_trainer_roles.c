/* test_trainer_roles.c: the dtype roles of trainer/op_roles.h, which the CPU
 * backend enforces as the CUDA backend does. The model is trained under
 * each --amp setting with every switch that changes which ops it calls, on
 * the CPU backend: a tensor the CUDA backend would refuse stops the run with
 * the backend's message naming the op and the tensor, and each op of the
 * table must have been checked, so CI sees what a GPU run would refuse. */
#include "data.h"
#include "error.h"
#include "gt_test.h"
#include "op_roles.h"
#include "train.h"
#include "trainer_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { B = 2, T = 16 };

static void test_trainer_roles__table_is_well_formed(void)
{
    int n;
    const tr_op_roles *t = tr_op_roles_table(&n);
    CU_ASSERT(n >= 27);
    for (int i = 0; i < n; i++) {
        CU_ASSERT_PTR_EQUAL(tr_op_roles_find(t[i].op), &t[i]); /* one entry per op */
        CU_ASSERT(t[i].n_args >= 1 && t[i].n_args <= TR_OP_MAX_ARGS);
        for (int k = 0; k < t[i].n_args; k++) {
            CU_ASSERT_PTR_NOT_NULL(t[i].args[k].name);
            CU_ASSERT(t[i].args[k].role >= TR_ROLE_ACT && t[i].args[k].role <= TR_ROLE_FLOAT);
        }
    }
    CU_ASSERT_PTR_NULL(tr_op_roles_find("no_such_op"));
}

static tr_tensor tensor(tr_dtype dt, tr_device dev) { return (tr_tensor){NULL, dt, dev, 1, {4}}; }

static void test_trainer_roles__refusals_name_the_tensor(void)
{
    tr_tensor out = tensor(TR_BF16, TR_CPU), mean = tensor(TR_F32, TR_CPU), rstd = tensor(TR_F32, TR_CPU),
              inp = tensor(TR_F32, TR_CPU), w = tensor(TR_F32, TR_CPU), b = tensor(TR_F32, TR_CPU);
    const tr_tensor *ln[] = {&out, &mean, &rstd, &inp, &w, &b};
    tr_dtype act = TR_I32;
    CU_ASSERT_EQUAL(tr_op_roles_check("layernorm_forward", TR_CPU, ln, 6, &act), TR_OK);
    CU_ASSERT_EQUAL(act, TR_BF16);
    /* statistics in bf16: the CUDA kernel writes fp32 there */
    mean.dtype = TR_BF16;
    CU_ASSERT_EQUAL(tr_op_roles_check("layernorm_forward", TR_CPU, ln, 6, NULL), TR_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "layernorm_forward: mean is BF16"));
    mean.dtype = TR_F32;
    /* on another device */
    CU_ASSERT_EQUAL(tr_op_roles_check("layernorm_forward", TR_CUDA, ln, 6, NULL), TR_EINVAL);
    /* the wrong number of tensors */
    CU_ASSERT_EQUAL(tr_op_roles_check("layernorm_forward", TR_CPU, ln, 5, NULL), TR_EINVAL);
    CU_ASSERT_EQUAL(tr_op_roles_check("no_such_op", TR_CPU, ln, 6, NULL), TR_EINVAL);

    /* activation tensors share one dtype; the bias is fp32 */
    tr_tensor mo = tensor(TR_F16, TR_CPU), mi = tensor(TR_F16, TR_CPU), mw = tensor(TR_BF16, TR_CPU),
              mb = tensor(TR_F32, TR_CPU);
    const tr_tensor *mm[] = {&mo, &mi, &mw, &mb};
    CU_ASSERT_EQUAL(tr_op_roles_check("matmul_forward", TR_CPU, mm, 4, NULL), TR_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "weight is BF16"));
    mw.dtype = TR_F16;
    CU_ASSERT_EQUAL(tr_op_roles_check("matmul_forward", TR_CPU, mm, 4, &act), TR_OK);
    CU_ASSERT_EQUAL(act, TR_F16);
    mb.dtype = TR_F16;
    CU_ASSERT_EQUAL(tr_op_roles_check("matmul_forward", TR_CPU, mm, 4, NULL), TR_EINVAL);
    mb.dtype = TR_F32;
    const tr_tensor *no_bias[] = {&mo, &mi, &mw, NULL}; /* an absent optional tensor */
    CU_ASSERT_EQUAL(tr_op_roles_check("matmul_forward", TR_CPU, no_bias, 4, NULL), TR_OK);

    /* attention keeps probabilities in the activation dtype, or fp32 statistics (cuDNN) */
    tr_tensor ao = tensor(TR_BF16, TR_CPU), att = tensor(TR_F16, TR_CPU), qkv = tensor(TR_BF16, TR_CPU);
    const tr_tensor *at[] = {&ao, &att, &qkv};
    CU_ASSERT_EQUAL(tr_op_roles_check("attention_forward", TR_CPU, at, 3, NULL), TR_EINVAL);
    att.dtype = TR_BF16;
    CU_ASSERT_EQUAL(tr_op_roles_check("attention_forward", TR_CPU, at, 3, NULL), TR_OK);
    att.dtype = TR_F32;
    CU_ASSERT_EQUAL(tr_op_roles_check("attention_forward", TR_CPU, at, 3, NULL), TR_OK);

    /* tokens are int32, and int32 is nothing else */
    tr_tensor lo = tensor(TR_F32, TR_CPU), lg = tensor(TR_BF16, TR_CPU), tg = tensor(TR_F32, TR_CPU);
    const tr_tensor *ce[] = {&lo, &lg, &tg};
    CU_ASSERT_EQUAL(tr_op_roles_check("crossentropy_fused_forward", TR_CPU, ce, 3, NULL), TR_EINVAL);
    tg.dtype = TR_I32;
    CU_ASSERT_EQUAL(tr_op_roles_check("crossentropy_fused_forward", TR_CPU, ce, 3, NULL), TR_OK);
    lg.dtype = TR_I32;
    CU_ASSERT_EQUAL(tr_op_roles_check("crossentropy_fused_forward", TR_CPU, ce, 3, NULL), TR_EINVAL);

    /* the optimizer's state is fp32 in every mode */
    tr_tensor p = tensor(TR_F32, TR_CPU), g = tensor(TR_BF16, TR_CPU), m = tensor(TR_F32, TR_CPU),
              v = tensor(TR_F32, TR_CPU);
    const tr_tensor *aw[] = {&p, &g, &m, &v};
    CU_ASSERT_EQUAL(tr_op_roles_check("adamw", TR_CPU, aw, 4, NULL), TR_EINVAL);
}

static tr_dataset *text_dataset(void)
{
    char *path = gt_test_path("roles-text.txt");
    FILE *fp = fopen(path, "w");
    for (int i = 0; i < 200; i++)
        fprintf(fp, "a stitch in time saves %d\n", i % 9);
    fclose(fp);
    tr_dataset *d = NULL;
    CU_ASSERT_EQUAL(tr_dataset_open(&d, path), TR_OK);
    free(path);
    return d;
}

/* Two steps of the trainer under c on the CPU backend. */
static void train(tr_dataset *d, const tr_train_config *c)
{
    fixture f;
    fixture_setup(&f, 16, T, 7);
    tr_trainer t;
    CU_ASSERT_EQUAL_FATAL(tr_trainer_init(&t, f.m, c), TR_OK);
    tr_loader *l;
    CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, d, 0, d->n_train, B, T, 3, 0, NULL), TR_OK);
    for (int s = 0; s < 2; s++) {
        tr_step_result r;
        CU_ASSERT_EQUAL_FATAL(tr_train_step(&t, l, s, B, T, &r), TR_OK);
    }
    tr_loader_free(l);
    tr_trainer_release(&t);
    fixture_teardown(&f);
}

/* An op of the CNN only (model_cnn.c), which the GPT never calls. */
static bool cnn_op(const char *op)
{
    static const char *const prefixes[] = {"conv2d_",  "batchnorm_",     "maxpool_",        "avgpool_",
                                           "relu_",    "dropout_",       "residual_relu_",  "layout_transpose"};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(op, prefixes[i], strlen(prefixes[i])))
            return true;
    return false;
}

static void test_trainer_roles__the_model_under_each_amp(void)
{
    tr_dataset *d = text_dataset();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const tr_dtype amps[] = {TR_F32, TR_BF16, TR_F16};
    int n;
    const tr_op_roles *ops = tr_op_roles_table(&n);
    long *before = calloc((size_t)n, sizeof *before);
    for (int a = 0; a < 3; a++) {
        for (int i = 0; i < n; i++)
            before[i] = tr_op_roles_n_checked(ops[i].op);
        tr_train_config c = {
            .accum = 2,
            .amp = amps[a],
            .clip = 1e-3f, /* always clips: the gradient checks and the unscaling pass run */
            .ema_decay = 0.9f,
            .optim = {.kind = TR_OPTIM_ADAMW, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f},
            .schedule = {.kind = TR_SCHEDULE_CONSTANT, .lr = 1e-3f, .total_steps = 2},
        };
        train(d, &c); /* unfused */
        c.fuse = true;
        c.checkpoint = TR_CHECKPOINT_SELECTIVE;
        train(d, &c);
        c.checkpoint = TR_CHECKPOINT_BLOCKS;
        c.optim = (tr_optim_config){.kind = TR_OPTIM_SGD, .momentum = 0.9f};
        train(d, &c);
        c.fuse = false;
        train(d, &c); /* SGD unfused */
        for (int i = 0; i < n; i++) {
            /* the ops a mode may leave out: fp32 activations need no cast, and in fp32 the residual
             * stream's gradient is updated in place, without the copies; the CNN's ops are the
             * CNN's (test_trainer_cnn_model) */
            bool fp32_only_skips = amps[a] == TR_F32 && (!strcmp(ops[i].op, "cast") ||
                                                         !strcmp(ops[i].op, "residual_backward") ||
                                                         !strcmp(ops[i].op, "residual_layernorm_backward"));
            bool used = !fp32_only_skips && !cnn_op(ops[i].op);
            if (used && tr_op_roles_n_checked(ops[i].op) == before[i])
                fprintf(stderr, "test: %s was not called under --amp %s\n", ops[i].op, tr_dtype_name(amps[a]));
            CU_ASSERT(!used || tr_op_roles_n_checked(ops[i].op) > before[i]);
        }
    }
    free(before);
    tr_dataset_free(d);
}

static const gt_test_case cases[] = {
    {"test_trainer_roles__table_is_well_formed", test_trainer_roles__table_is_well_formed},
    {"test_trainer_roles__refusals_name_the_tensor", test_trainer_roles__refusals_name_the_tensor},
    {"test_trainer_roles__the_model_under_each_amp", test_trainer_roles__the_model_under_each_amp},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_roles", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
