/* op_roles.c: the dtype roles of op_roles.h and their one check. The table
 * is written from the CUDA kernels' instantiations (kernels/cuda/kernels_cuda.h:
 * `void *` tensors in dt, `float *` tensors fp32). */
#include "op_roles.h"

#include "error.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define A TR_ROLE_ACT
#define F TR_ROLE_F32
#define I TR_ROLE_I32

static const tr_op_roles table[] = {
    {"encoder_forward", 4, {{"out", A}, {"inp", I}, {"wte", A}, {"wpe", A}}},
    {"encoder_backward", 4, {{"dwte", F}, {"dwpe", F}, {"dout", A}, {"inp", I}}},
    {"layernorm_forward", 6, {{"out", A}, {"mean", F}, {"rstd", F}, {"inp", F}, {"weight", F}, {"bias", F}}},
    {"layernorm_backward", 8,
     {{"dinp", F}, {"dweight", F}, {"dbias", F}, {"dout", A}, {"inp", F}, {"weight", F}, {"mean", F}, {"rstd", F}}},
    {"matmul_forward", 4, {{"out", A}, {"inp", A}, {"weight", A}, {"bias", F}}},
    {"matmul_backward", 6, {{"dinp", A}, {"dweight", F}, {"dbias", F}, {"dout", A}, {"inp", A}, {"weight", A}}},
    {"attention_forward", 3, {{"out", A}, {"att", TR_ROLE_ATT}, {"qkv", A}}},
    {"attention_backward", 6,
     {{"dqkv", A}, {"scratch", F}, {"dout", A}, {"qkv", A}, {"out", A}, {"att", TR_ROLE_ATT}}},
    {"gelu_forward", 2, {{"out", A}, {"inp", A}}},
    {"gelu_backward", 3, {{"dinp", A}, {"inp", A}, {"dout", A}}},
    {"residual_forward", 3, {{"out", F}, {"a", F}, {"b", A}}},
    {"residual_backward", 3, {{"da", F}, {"db", A}, {"dout", F}}},
    {"crossentropy_forward", 4, {{"losses", F}, {"probs", F}, {"logits", A}, {"targets", I}}},
    {"crossentropy_backward", 3, {{"dlogits", A}, {"probs", F}, {"targets", I}}},
    {"residual_layernorm_forward", 8,
     {{"res", F}, {"out", A}, {"mean", F}, {"rstd", F}, {"a", F}, {"b", A}, {"weight", F}, {"bias", F}}},
    {"residual_layernorm_backward", 10,
     {{"da", F}, {"db", A}, {"dres", F}, {"dweight", F}, {"dbias", F}, {"dout", A}, {"res", F}, {"weight", F},
      {"mean", F}, {"rstd", F}}},
    {"matmul_bias_gelu_forward", 5, {{"pre", A}, {"out", A}, {"inp", A}, {"weight", A}, {"bias", F}}},
    {"crossentropy_fused_forward", 3, {{"losses", F}, {"logits", A}, {"targets", I}}},
    {"cast", 2, {{"dst", TR_ROLE_FLOAT}, {"src", TR_ROLE_FLOAT}}},
    /* the CNN (model_cnn.c): autocast's choices, activations in the op's dtype, BatchNorm's statistics and
     * parameters fp32, dropout's mask fp32. The CUDA backend's CNN ops take fp32 activations only (cuDNN
     * is set up in fp32): they refuse the others after this check. */
    {"conv2d_forward", 5, {{"out", A}, {"inp", A}, {"weight", A}, {"bias", F}, {"ws", F}}},
    {"conv2d_backward", 7,
     {{"dinp", A}, {"dweight", F}, {"dbias", F}, {"dout", A}, {"inp", A}, {"weight", A}, {"ws", F}}},
    {"batchnorm_forward", 8,
     {{"out", A}, {"mean", F}, {"rstd", F}, {"running_mean", F}, {"running_var", F}, {"inp", A}, {"weight", F},
      {"bias", F}}},
    {"batchnorm_backward", 8,
     {{"dinp", A}, {"dweight", F}, {"dbias", F}, {"dout", A}, {"inp", A}, {"weight", F}, {"mean", F}, {"rstd", F}}},
    {"maxpool_forward", 3, {{"out", A}, {"idx", I}, {"inp", A}}},
    {"maxpool_backward", 3, {{"dinp", A}, {"dout", A}, {"idx", I}}},
    {"avgpool_forward", 2, {{"out", A}, {"inp", A}}},
    {"avgpool_backward", 2, {{"dinp", A}, {"dout", A}}},
    {"relu_forward", 2, {{"out", A}, {"inp", A}}},
    {"relu_backward", 3, {{"dinp", A}, {"out", A}, {"dout", A}}},
    {"dropout_forward", 3, {{"out", A}, {"inp", A}, {"mask", F}}},
    {"dropout_backward", 3, {{"dinp", A}, {"mask", F}, {"dout", A}}},
    {"residual_relu_forward", 3, {{"out", A}, {"a", A}, {"b", A}}},
    {"residual_relu_backward", 4, {{"da", A}, {"db", A}, {"out", A}, {"dout", A}}},
    {"layout_transpose", 2, {{"out", A}, {"inp", A}}},
    /* the optimizer: fp32 master weights and state in every mode */
    {"adamw", 4, {{"param", F}, {"grad", F}, {"m", F}, {"v", F}}},
    {"adamw_fused", 4, {{"param", F}, {"grad", F}, {"m", F}, {"v", F}}},
    {"sgd", 3, {{"param", F}, {"grad", F}, {"buf", F}}},
    {"sumsq", 1, {{"x", F}}},
    {"all_finite", 1, {{"x", F}}},
    {"sumsq_finite", 1, {{"x", F}}},
    {"scale", 1, {{"x", F}}},
    {"ema", 2, {{"ema", F}, {"x", F}}},
};

#undef A
#undef F
#undef I

enum { N_OPS = sizeof table / sizeof table[0] };
static long n_checked[N_OPS]; /* checks passed per op (backends call from one thread) */

const tr_op_roles *tr_op_roles_table(int *n)
{
    *n = (int)(sizeof table / sizeof table[0]);
    return table;
}

const tr_op_roles *tr_op_roles_find(const char *op)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].op, op) == 0)
            return &table[i];
    return NULL;
}

long tr_op_roles_n_checked(const char *op)
{
    const tr_op_roles *r = tr_op_roles_find(op);
    return r ? n_checked[r - table] : 0;
}

static const char *takes(tr_role role, int act)
{
    switch (role) {
    case TR_ROLE_ACT:
        return act >= 0 ? tr_dtype_name((tr_dtype)act) : "F32, BF16 or F16";
    case TR_ROLE_F32:
        return "F32";
    case TR_ROLE_I32:
        return "I32";
    case TR_ROLE_ATT:
        return act >= 0 ? (act == TR_F32 ? "F32" : "the activation dtype, or F32 statistics") : "F32, BF16 or F16";
    case TR_ROLE_FLOAT:
        return "F32, BF16 or F16";
    }
    return "?";
}

int tr_op_roles_check(const char *op, tr_device device, const tr_tensor *const *args, int n, tr_dtype *act)
{
    const tr_op_roles *r = tr_op_roles_find(op);
    if (!r)
        return tr_error_set(TR_EINVAL, "%s: no dtype roles for this op", op);
    if (n != r->n_args)
        return tr_error_set(TR_EINVAL, "%s: %d tensors passed, its roles name %d", op, n, r->n_args);
    int a = -1; /* the activation dtype, once an ACT tensor fixed it */
    for (int pass = 0; pass < 2; pass++) { /* ACT tensors first: ATT is judged against them */
        for (int i = 0; i < n; i++) {
            const tr_tensor *t = args[i];
            tr_role role = r->args[i].role;
            if (!t || (pass == 0) != (role == TR_ROLE_ACT))
                continue;
            bool ok;
            switch (role) {
            case TR_ROLE_ACT:
                ok = t->dtype != TR_I32 && (a < 0 || (int)t->dtype == a);
                break;
            case TR_ROLE_F32:
                ok = t->dtype == TR_F32;
                break;
            case TR_ROLE_I32:
                ok = t->dtype == TR_I32;
                break;
            case TR_ROLE_ATT:
                ok = t->dtype == TR_F32 || (int)t->dtype == a || (a < 0 && t->dtype != TR_I32);
                break;
            default:
                ok = t->dtype != TR_I32;
                break;
            }
            if (!ok || t->device != device)
                return tr_error_set(TR_EINVAL, "%s: %s is %s on %s; it takes %s on %s", op, r->args[i].name,
                                    tr_dtype_name(t->dtype), t->device == TR_CUDA ? "cuda" : "cpu", takes(role, a),
                                    device == TR_CUDA ? "cuda" : "cpu");
            if (role == TR_ROLE_ACT)
                a = (int)t->dtype;
        }
    }
    if (act)
        *act = a < 0 ? TR_F32 : (tr_dtype)a;
    n_checked[r - table]++;
    return TR_OK;
}

tr_dtype tr_op_roles_require(const char *backend, const char *op, tr_device device, const tr_tensor *const *args,
                             int n)
{
    tr_dtype act;
    if (tr_op_roles_check(op, device, args, n, &act) < 0) {
        fprintf(stderr, "trainer: the %s backend has no kernel for this: %s\n", backend, tr_error_last());
        exit(1);
    }
    return act;
}
