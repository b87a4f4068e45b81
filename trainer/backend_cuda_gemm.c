/* backend_cuda_gemm.c: the CUDA backend's GEMMs on cuBLASLt and its matmul
 * ops: one cached plan per shape, dtype and pointer alignment (fp32
 * compute, --tf32), bias and GELU epilogues, our own kernels where cuBLASLt
 * has no algorithm, and --autotune timing the top candidates once per plan. */
#include "backend_cuda_core.h"

#include "backend_cuda_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- GEMMs on cuBLASLt ---- */

static cudaDataType_t lt_type(int dt)
{
    return dt == KC_BF16 ? CUDA_R_16BF : dt == KC_F16 ? CUDA_R_16F : CUDA_R_32F;
}

static int alignment(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    int al = 256;
    while (al > 1 && a % al)
        al /= 2;
    return al;
}

static size_t dt_size(int dt) { return dt == KC_F32 ? 4 : 2; }

/* The epilogue's pointers, set before each use of the plan and before its
 * heuristic, which takes their alignment from their values (cublasLt.h). */
static void set_epilogue_pointers(gemm_plan *p, const void *bias, const void *aux)
{
    if (bias)
        tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                 "bias pointer");
    if (aux)
        tr_cuda_check_lt(
            cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux),
            "aux pointer");
}

/* Times each candidate on a scratch output, once per shape; the choice is
 * kept in the plan. */
static void autotune(cuda_backend *cb, gemm_plan *p, const cublasLtMatmulHeuristicResult_t *cand, int n_cand,
                     const void *A, const void *B, const void *bias)
{
    size_t d_bytes = (size_t)p->key.ldd * p->key.n * dt_size(p->key.td);
    size_t aux_bytes = p->key.ld_aux ? (size_t)p->key.ld_aux * p->key.n * dt_size(p->key.td) : 0;
    void *d = NULL, *aux = NULL;
    tr_cuda_check(cudaMalloc(&d, d_bytes), "cudaMalloc for autotuning");
    tr_cuda_check(cudaMemsetAsync(d, 0, d_bytes, cb->compute), "autotune memset");
    if (aux_bytes)
        tr_cuda_check(cudaMalloc(&aux, aux_bytes), "cudaMalloc for autotuning");
    set_epilogue_pointers(p, bias, aux);
    cudaEvent_t t0, t1;
    tr_cuda_check(cudaEventCreate(&t0), "cudaEventCreate");
    tr_cuda_check(cudaEventCreate(&t1), "cudaEventCreate");
    float alpha = 1.0f, beta = 0.0f, best = -1.0f;
    for (int i = 0; i < n_cand; i++) {
        if (cublasLtMatmul(cb->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, d, p->d, d, p->d, &cand[i].algo,
                           cb->lt_workspace, LT_WORKSPACE_BYTES, cb->compute) != CUBLAS_STATUS_SUCCESS) {
            (void)cudaGetLastError(); /* a refused launch's error, else the next kernel's check reports it */
            continue;                 /* warm-up; a candidate that fails is not chosen */
        }
        tr_cuda_check(cudaEventRecord(t0, cb->compute), "cudaEventRecord");
        for (int r = 0; r < AUTOTUNE_REPS; r++)
            tr_cuda_check_lt(cublasLtMatmul(cb->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, d, p->d, d, p->d,
                                    &cand[i].algo, cb->lt_workspace, LT_WORKSPACE_BYTES, cb->compute),
                     "autotuning");
        tr_cuda_check(cudaEventRecord(t1, cb->compute), "cudaEventRecord");
        tr_cuda_check(cudaEventSynchronize(t1), "autotuning");
        float ms;
        tr_cuda_check(cudaEventElapsedTime(&ms, t0, t1), "cudaEventElapsedTime");
        ms /= AUTOTUNE_REPS;
        if (best < 0 || ms < best) {
            best = ms;
            p->algo = cand[i].algo;
        }
    }
    if (best >= 0)
        p->ms = best;
    tr_cuda_check(cudaEventDestroy(t0), "cudaEventDestroy");
    tr_cuda_check(cudaEventDestroy(t1), "cudaEventDestroy");
    tr_cuda_check(cudaFree(d), "cudaFree after autotuning");
    if (aux)
        tr_cuda_check(cudaFree(aux), "cudaFree after autotuning");
}

static gemm_plan *plan_for(cuda_backend *cb, const gemm_key *key, const void *A, const void *B, const void *bias,
                           const void *aux)
{
    for (int i = 0; i < cb->n_plans; i++)
        if (!memcmp(&cb->plans[i].key, key, sizeof *key))
            return &cb->plans[i];
    if (cb->n_plans == cb->cap_plans) {
        int cap = cb->cap_plans ? 2 * cb->cap_plans : 32;
        gemm_plan *v = realloc(cb->plans, cap * sizeof *v);
        if (!v) {
            fprintf(stderr, "trainer: out of host memory\n");
            exit(1);
        }
        cb->plans = v;
        cb->cap_plans = cap;
    }
    if (cb->opt.autotune && tr_cuda_step_capturing(cb->step)) /* it allocates and waits */
        tr_cuda_step_refuse("a GEMM shape the warm-up steps did not run needs --autotune");
    gemm_plan *p = &cb->plans[cb->n_plans++];
    memset(p, 0, sizeof *p);
    p->key = *key;
    bool all_f32 = key->ta == KC_F32 && key->tb == KC_F32 && key->td == KC_F32;
    cublasComputeType_t compute = all_f32 && cb->opt.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    tr_cuda_check_lt(cublasLtMatmulDescCreate(&p->desc, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    cublasOperation_t ta = key->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, tb = key->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "transa");
    tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "transb");
    cublasLtEpilogue_t epi = (cublasLtEpilogue_t)key->epilogue;
    tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi),
                     "epilogue");
    if (epi != CUBLASLT_EPILOGUE_DEFAULT) {
        cudaDataType_t bias_type = CUDA_R_32F; /* biases are the fp32 master weights */
        tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type,
                                                sizeof bias_type),
                 "bias type");
    }
    if (key->ld_aux) {
        int64_t ld = key->ld_aux;
        cudaDataType_t aux_type = lt_type(key->td);
        tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld),
                 "aux ld");
        tr_cuda_check_lt(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, &aux_type,
                                                sizeof aux_type),
                 "aux type");
    }
    set_epilogue_pointers(p, bias, aux);
    /* column-major layouts: op(A) is m x k, op(B) is k x n, D is m x n */
    tr_cuda_check_lt(cublasLtMatrixLayoutCreate(&p->a, lt_type(key->ta), key->trans_a ? key->k : key->m,
                                        key->trans_a ? key->m : key->k, key->lda),
             "layout A");
    tr_cuda_check_lt(cublasLtMatrixLayoutCreate(&p->b, lt_type(key->tb), key->trans_b ? key->n : key->k,
                                        key->trans_b ? key->k : key->n, key->ldb),
             "layout B");
    tr_cuda_check_lt(cublasLtMatrixLayoutCreate(&p->d, lt_type(key->td), key->m, key->n, key->ldd), "layout D");
    cublasLtMatmulPreference_t pref;
    tr_cuda_check_lt(cublasLtMatmulPreferenceCreate(&pref), "preference");
    size_t ws = LT_WORKSPACE_BYTES;
    uint32_t al_a = key->align_a, al_b = key->align_b, al_d = key->align_d;
    tr_cuda_check_lt(
        cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "workspace");
    tr_cuda_check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a,
                                                  sizeof al_a), "alignment");
    tr_cuda_check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b,
                                                  sizeof al_b), "alignment");
    tr_cuda_check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d,
                                                  sizeof al_d), "alignment");
    tr_cuda_check_lt(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d,
                                                  sizeof al_d), "alignment");
    cublasLtMatmulHeuristicResult_t cand[N_ALGOS];
    int n_cand = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(cb->lt, p->desc, p->a, p->b, p->d, p->d, pref,
                                                       cb->opt.autotune ? N_ALGOS : 1, cand, &n_cand);
    cublasLtMatmulPreferenceDestroy(pref);
    int n_ok = 0; /* cublasLt.h: each result's own state says whether it may be used */
    for (int i = 0; st == CUBLAS_STATUS_SUCCESS && i < n_cand; i++)
        if (cand[i].state == CUBLAS_STATUS_SUCCESS)
            cand[n_ok++] = cand[i];
    n_cand = n_ok;
    p->supported = st == CUBLAS_STATUS_SUCCESS && n_cand > 0;
    if (p->supported) {
        p->algo = cand[0].algo;
        if (cb->opt.autotune && n_cand > 1)
            autotune(cb, p, cand, n_cand, A, B, bias);
    }
    return p;
}

/* D (m x n, column-major, ld ldd) = op(A) op(B) + beta D, with an epilogue
 * (bias of length m, GELU with the pre-activation in aux). Returns false if
 * cuBLASLt has no algorithm for the epilogue; errors otherwise exit. */
static bool gemm(cuda_backend *cb, void *D, int td, int ldd, const void *A, int ta, bool trans_a, int lda,
                 const void *B, int tb, bool trans_b, int ldb, int m, int n, int k, float beta,
                 cublasLtEpilogue_t epi, const float *bias, void *aux, int ld_aux)
{
    if (bias && alignment(bias) < 16)
        return false; /* the epilogue reads the bias in 16-byte vectors */
    if (aux && ld_aux % 8)
        return false; /* cublasLt.h: the GELU input's leading dimension must be divisible by 8 */
    gemm_key key;
    memset(&key, 0, sizeof key); /* compared with memcmp: no stray padding */
    key.m = m, key.n = n, key.k = k, key.lda = lda, key.ldb = ldb, key.ldd = ldd, key.ld_aux = aux ? ld_aux : 0;
    key.ta = ta, key.tb = tb, key.td = td, key.trans_a = trans_a, key.trans_b = trans_b, key.epilogue = epi;
    key.align_a = alignment(A), key.align_b = alignment(B), key.align_d = alignment(D);
    key.align_bias = bias ? alignment(bias) : 0, key.align_aux = aux ? alignment(aux) : 0;
    gemm_plan *p = plan_for(cb, &key, A, B, bias, aux);
    if (!p->supported) {
        if (epi != CUBLASLT_EPILOGUE_DEFAULT)
            return false;
        fprintf(stderr, "trainer: cublasLt has no algorithm for a %dx%dx%d GEMM of %s x %s -> %s\n", m, n, k,
                tr_dtype_name((tr_dtype)ta), tr_dtype_name((tr_dtype)tb), tr_dtype_name((tr_dtype)td));
        exit(1);
    }
    set_epilogue_pointers(p, bias, aux);
    float alpha = 1.0f;
    tr_cuda_check_lt(cublasLtMatmul(cb->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, D, p->d, D, p->d, &p->algo,
                            cb->lt_workspace, LT_WORKSPACE_BYTES, cb->compute),
             "cublasLtMatmul");
    return true;
}

/* out (N,OC) = inp (N,C) @ w (OC,C)^T: in column-major terms out^T (OC x N)
 * = w^T (w stored C x OC, transposed) times inp^T (C x N). */
static bool linear(cuda_backend *cb, void *out, const void *inp, const void *w, int dt, int N, int C, int OC,
                   cublasLtEpilogue_t epi, const float *bias, void *aux)
{
    return gemm(cb, out, dt, OC, w, dt, true, C, inp, dt, false, C, OC, N, C, 0.0f, epi, bias, aux, OC);
}

static void matmul_forward(tr_backend *be, tr_tensor *out, const tr_tensor *inp, const tr_tensor *w,
                           const tr_tensor *bias, int N, int C, int OC)
{
    OP("matmul_forward");
    int dt = ROLES(out, inp, w, bias);
    void *o = D(out);
    const void *x = D(inp), *W = D(w);
    const float *b = F(bias);
    int err = 0;
    if (!b || !linear(cb, o, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_BIAS, b, NULL)) {
        linear(cb, o, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL);
        if (b)
            err = kc_bias_add(o, dt, b, N, OC, cb->compute);
    }
    DONE(err);
}

static void matmul_bias_gelu_forward(tr_backend *be, tr_tensor *pre, tr_tensor *out, const tr_tensor *inp,
                                     const tr_tensor *w, const tr_tensor *bias, int N, int C, int OC)
{
    OP("matmul_bias_gelu_forward");
    int dt = ROLES(pre, out, inp, w, bias);
    void *p = D(pre), *o = D(out);
    const void *x = D(inp), *W = D(w);
    const float *b = F(bias);
    int err = 0;
    if (!linear(cb, o, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, b, p)) {
        linear(cb, p, x, W, dt, N, C, OC, CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL);
        err = kc_bias_gelu(p, o, dt, b, N, OC, cb->compute);
    }
    DONE(err);
}

static void matmul_backward(tr_backend *be, tr_tensor *dinp, tr_tensor *dw, tr_tensor *dbias,
                            const tr_tensor *dout, const tr_tensor *inp, const tr_tensor *w, int N, int C, int OC,
                            bool add_dparams)
{
    OP("matmul_backward");
    int dt = ROLES(dinp, dw, dbias, dout, inp, w);
    const void *d = D(dout), *x = D(inp),
               *W = D(w);
    void *dx = D(dinp);
    float *dW = F(dw), *db = F(dbias);
    /* dinp^T (C x N) += w^T as stored (C x OC) times dout^T (OC x N) */
    if (dx)
        gemm(cb, dx, dt, C, W, dt, false, C, d, dt, false, OC, C, N, OC, 1.0f, CUBLASLT_EPILOGUE_DEFAULT, NULL,
             NULL, 0);
    /* dw^T (C x OC) (+)= inp^T (C x N) times dout (N x OC, dout^T transposed) */
    gemm(cb, dW, KC_F32, C, x, dt, false, C, d, dt, true, OC, C, OC, N, add_dparams ? 1.0f : 0.0f,
         CUBLASLT_EPILOGUE_DEFAULT, NULL, NULL, 0);
    int err = 0;
    if (db)
        err = kc_dbias(db, d, dt, N, OC, add_dparams, tr_cuda_scratch(cb, kc_dbias_scratch_bytes(N, OC)), cb->compute);
    DONE(err);
}

void tr_cuda_gemm_fill(tr_backend *table)
{
    table->matmul_forward = matmul_forward;
    table->matmul_bias_gelu_forward = matmul_bias_gelu_forward;
    table->matmul_backward = matmul_backward;
}

void tr_cuda_gemm_free(cuda_backend *cb)
{
    for (int i = 0; i < cb->n_plans; i++) {
        gemm_plan *p = &cb->plans[i];
        cublasLtMatrixLayoutDestroy(p->a);
        cublasLtMatrixLayoutDestroy(p->b);
        cublasLtMatrixLayoutDestroy(p->d);
        cublasLtMatmulDescDestroy(p->desc);
    }
    free(cb->plans);
    cb->plans = NULL;
    cb->n_plans = cb->cap_plans = 0;
}
