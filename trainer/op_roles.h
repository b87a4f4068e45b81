/* op_roles.h: which dtype each tensor of each backend op takes, in one
 * table both backends enforce through one function, so what the CPU backend
 * accepts (CI) is what the CUDA backend runs (a GPU).
 *
 * The model passes an op tensors of a few roles: the op's activation dtype
 * (fp32, bf16 or fp16 under --amp: autocast's choice for that op, the same
 * for all of its activation tensors), fp32 (the residual stream, LayerNorm
 * statistics, biases, parameter gradients, optimizer state), int32 tokens.
 * The CUDA kernels are instantiated for exactly these roles; the CPU kernels
 * compute in fp32 and could widen anything, but refuse what the CUDA
 * backend would, so a model change that breaks the GPU run fails in CI.
 * It does not know shapes: each backend checks those it depends on. */
#ifndef TR_OP_ROLES_H
#define TR_OP_ROLES_H

#include "tensor.h"

typedef enum tr_role {
    TR_ROLE_ACT = 1, /* the op's activation dtype: F32, BF16 or F16, one for all its ACT tensors */
    TR_ROLE_F32,     /* F32 in every mode */
    TR_ROLE_I32,     /* tokens */
    TR_ROLE_ATT,     /* attention's saved tensor: probabilities in ACT, or fused attention's F32 statistics */
    TR_ROLE_FLOAT,   /* any of F32, BF16, F16 on its own (cast) */
} tr_role;

enum { TR_OP_MAX_ARGS = 10 };

typedef struct tr_op_roles {
    const char *op;     /* the backend table's member, the op's NVTX range */
    int n_args;         /* tensors, in the order of the op's parameters */
    struct {
        const char *name;
        tr_role role;
    } args[TR_OP_MAX_ARGS];
} tr_op_roles;

/* The table; *n: its ops. */
const tr_op_roles *tr_op_roles_table(int *n);
/* op's entry; NULL if the table has none. */
const tr_op_roles *tr_op_roles_find(const char *op);
/* Checks op's n tensors against its roles: on device, each dtype its role's
 * (NULL: an absent optional tensor, not checked). *act (may be NULL): the
 * activation dtype found, TR_F32 if no ACT tensor. TR_EINVAL naming the op,
 * the tensor, its dtype and what the role takes. */
int tr_op_roles_check(const char *op, tr_device device, const tr_tensor *const *args, int n, tr_dtype *act);
/* The same for a backend op: a refusal prints the message naming the
 * backend and exits (a program's fail-fast). Returns the activation dtype. */
tr_dtype tr_op_roles_require(const char *backend, const char *op, tr_device device, const tr_tensor *const *args,
                             int n);

/* How many checks of op passed in this process (what a test exercised). */
long tr_op_roles_n_checked(const char *op);

/* In a backend op: ROLES(be, "op", t1, t2, ...) with the op's tensors in order. */
#define TR_OP_ROLES(be, op, ...)                                                                       \
    tr_op_roles_require((be)->name, (op), (be)->device, (const tr_tensor *const[]){__VA_ARGS__},       \
                        (int)(sizeof((const tr_tensor *const[]){__VA_ARGS__}) / sizeof(const tr_tensor *)))

#endif
