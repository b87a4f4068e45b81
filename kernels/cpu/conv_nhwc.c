/* conv_nhwc.c: 2-D convolution over channels-last tensors (NHWC: --layout
 * nhwc), computed directly, without columns or a GEMM library: each output
 * pixel's channels are a vector, and a block of up to 8 pixels of one
 * output row times 16 or 32 output channels is held in vector registers
 * while the kernel taps and input channels are summed in (an input value
 * broadcast against a row of weights). The weights stay in PyTorch's
 * (OC,C,K,K) order in the model; the ops reorder them into the workspace
 * per call ((K,K,C,OC) for the forward and the weight gradient, (K,K,OC,C)
 * for the input gradient), which is small next to the activations.
 *   forward:        y[pix][o]   = sum over taps and c of x[tap(pix)][c] * w[tap][c][o]
 *   input grad:     dx[tap(pix)][c] += sum over o of dy[pix][o] * w[tap][o][c]
 *                   (scattered per tap into a zero-padded image, so any stride works)
 *   weight grad:    dw[tap][c][o] += x[tap(pix)][c] * dy[pix][o], over the image's pixels
 * Images are handed out to the team's threads one (forward) or one chunk
 * (backward) at a time, as threads come free: a thread the machine
 * deschedules holds up none of the others. Each chunk of images has its own
 * partial weight gradient, added in chunk order, so results are bitwise
 * the same whichever thread ran which chunk, for any thread count.
 * Vectors are GCC's vector extension, compiled three times (AVX-512,
 * AVX2+FMA, and the baseline) and picked once by what the CPU supports.
 * Shapes whose channels are not a multiple of 16 take plain loops. */
#include "ops.h"
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

typedef float vf __attribute__((vector_size(64)));
typedef int vi __attribute__((vector_size(64)));
enum { VL = 16, PMAX = 8 };

#define VLOAD(v, p) memcpy(&(v), (p), sizeof(vf))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(vf))
#define AI static inline __attribute__((always_inline))

/* Output pixels [ow0, ow0+P) of one row, channels [ob, ob + NV*VL). x: the
 * (padded) input at the row's first input row and ow0's first column; rs:
 * floats per input row. mode: ADD, the sums go onto y (bias NULL), else y = bias + sums; RELU, max(0, .) stored. */
enum { ADD = 1, RELU = 2 };
AI void fwd_block(float *y, const float *x, const float *wt, const float *bias, int mode, int C, int OC, int K,
                  int s, int rs, int ob, const int P, const int NV)
{
    vf acc[PMAX][2];
#pragma GCC unroll 16
    for (int v = 0; v < NV; v++) {
        vf b = {0};
        if (bias)
            VLOAD(b, bias + ob + v * VL);
#pragma GCC unroll 16
        for (int p = 0; p < P; p++) {
            if (mode & ADD)
                VLOAD(acc[p][v], y + (size_t)p * OC + ob + v * VL);
            else
                acc[p][v] = b;
        }
    }
    for (int ki = 0; ki < K; ki++)
        for (int kj = 0; kj < K; kj++) {
            const float *x0 = x + (size_t)ki * rs + (size_t)kj * C;
            const float *w0 = wt + (size_t)(ki * K + kj) * C * OC + ob;
            for (int c = 0; c < C; c++) {
                vf w[2];
#pragma GCC unroll 16
                for (int v = 0; v < NV; v++)
                    VLOAD(w[v], w0 + (size_t)c * OC + v * VL);
#pragma GCC unroll 16
                for (int p = 0; p < P; p++) {
                    float xs = x0[(size_t)p * s * C + c];
#pragma GCC unroll 16
                    for (int v = 0; v < NV; v++)
                        acc[p][v] += xs * w[v];
                }
            }
        }
#pragma GCC unroll 16
    for (int p = 0; p < P; p++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            if (mode & RELU)
                acc[p][v] = (vf)((vi)acc[p][v] & (vi)(acc[p][v] > (vf){0}));
            VSTORE(y + (size_t)p * OC + ob + v * VL, acc[p][v]);
        }
}

/* Input gradient of P output pixels, input channels [cb, cb + NV*VL): dy at
 * the block's first pixel; dxp the padded gradient image at its first input
 * pixel. */
AI void dx_block(float *dxp, const float *dy, const float *wd, int C, int OC, int K, int s, int rs, int cb,
                 const int P, const int NV)
{
    for (int ki = 0; ki < K; ki++)
        for (int kj = 0; kj < K; kj++) {
            vf acc[PMAX][2];
#pragma GCC unroll 16
            for (int p = 0; p < P; p++)
#pragma GCC unroll 16
                for (int v = 0; v < NV; v++)
                    acc[p][v] = (vf){0};
            const float *w0 = wd + (size_t)(ki * K + kj) * OC * C + cb;
            for (int o = 0; o < OC; o++) {
                vf w[2];
#pragma GCC unroll 16
                for (int v = 0; v < NV; v++)
                    VLOAD(w[v], w0 + (size_t)o * C + v * VL);
#pragma GCC unroll 16
                for (int p = 0; p < P; p++) {
                    float d = dy[(size_t)p * OC + o];
#pragma GCC unroll 16
                    for (int v = 0; v < NV; v++)
                        acc[p][v] += d * w[v];
                }
            }
            float *d0 = dxp + (size_t)ki * rs + (size_t)kj * C + cb;
#pragma GCC unroll 16
            for (int p = 0; p < P; p++)
#pragma GCC unroll 16
                for (int v = 0; v < NV; v++) {
                    vf t;
                    VLOAD(t, d0 + (size_t)p * s * C + v * VL);
                    t += acc[p][v];
                    VSTORE(d0 + (size_t)p * s * C + v * VL, t);
                }
        }
}

/* One tap's weight gradient over one image, input channels [cb, cb+CB),
 * output channels [ob, ob + NV*VL): x is the padded image at the tap's
 * offset, dy the image's output gradient. */
AI void dw_block(float *dwt, const float *x, const float *dy, int OH, int OW, int C, int OC, int s, int rs,
                 const int CB, const int NV)
{
    vf acc[16][2];
#pragma GCC unroll 16
    for (int cc = 0; cc < CB; cc++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++)
            acc[cc][v] = (vf){0};
    for (int oh = 0; oh < OH; oh++) {
        const float *xr = x + (size_t)oh * s * rs, *dr = dy + (size_t)oh * OW * OC;
        for (int ow = 0; ow < OW; ow++) {
            vf d[2];
#pragma GCC unroll 16
            for (int v = 0; v < NV; v++)
                VLOAD(d[v], dr + (size_t)ow * OC + v * VL);
            const float *xv = xr + (size_t)ow * s * C;
#pragma GCC unroll 16
            for (int cc = 0; cc < CB; cc++) {
                float xs = xv[cc];
#pragma GCC unroll 16
                for (int v = 0; v < NV; v++)
                    acc[cc][v] += xs * d[v];
            }
        }
    }
#pragma GCC unroll 16
    for (int cc = 0; cc < CB; cc++)
#pragma GCC unroll 16
        for (int v = 0; v < NV; v++) {
            vf t;
            VLOAD(t, dwt + (size_t)cc * OC + v * VL);
            t += acc[cc][v];
            VSTORE(dwt + (size_t)cc * OC + v * VL, t);
        }
}

/* A row of OW output pixels in blocks of P: 7 where the row is a multiple
 * of 7 (28, 14, 7), else 8, 4, 2, 1. BLOCK(p) is the call for one block at ow. */
#define ROW_BLOCKS(OW, BLOCK)                                                                                         \
    do {                                                                                                               \
        int ow = 0;                                                                                                    \
        if ((OW) % 7 == 0)                                                                                             \
            for (; ow < (OW); ow += 7)                                                                                 \
                BLOCK(7);                                                                                              \
        for (; ow + 8 <= (OW); ow += 8)                                                                                \
            BLOCK(8);                                                                                                  \
        for (; ow + 4 <= (OW); ow += 4)                                                                                \
            BLOCK(4);                                                                                                  \
        for (; ow + 2 <= (OW); ow += 2)                                                                                \
            BLOCK(2);                                                                                                  \
        for (; ow < (OW); ow++)                                                                                        \
            BLOCK(1);                                                                                                  \
    } while (0)

/* The row and image drivers, once per instruction set. */
#define DRIVERS(sfx, attr)                                                                                            \
    attr static void fwd_row_##sfx(float *y, const float *x, const float *wt, const float *bias, int mode, int OW,   \
                                   int C, int OC, int K, int s, int rs)                                                \
    {                                                                                                                  \
        int nv = OC % (2 * VL) == 0 ? 2 : 1;                                                                           \
        for (int ob = 0; ob < OC; ob += nv * VL) {                                                                     \
            if (nv == 2) {                                                                                             \
                ROW_BLOCKS(OW, FWD2);                                                                                  \
            } else {                                                                                                   \
                ROW_BLOCKS(OW, FWD1);                                                                                  \
            }                                                                                                          \
        }                                                                                                              \
    }                                                                                                                  \
    attr static void dx_row_##sfx(float *dxp, const float *dy, const float *wd, int OW, int C, int OC, int K, int s,  \
                                  int rs)                                                                              \
    {                                                                                                                  \
        int nv = C % (2 * VL) == 0 ? 2 : 1;                                                                            \
        for (int cb = 0; cb < C; cb += nv * VL) {                                                                      \
            if (nv == 2) {                                                                                             \
                ROW_BLOCKS(OW, DX2);                                                                                   \
            } else {                                                                                                   \
                ROW_BLOCKS(OW, DX1);                                                                                   \
            }                                                                                                          \
        }                                                                                                              \
    }                                                                                                                  \
    attr static void dw_image_##sfx(float *dwt, const float *xp, const float *dy, int OH, int OW, int C, int OC,     \
                                    int K, int s, int rs)                                                              \
    {                                                                                                                  \
        int nv = OC % (2 * VL) == 0 ? 2 : 1, cbw = C % (16 / nv) == 0 ? 16 / nv : 1;                                 \
        for (int ki = 0; ki < K; ki++)                                                                                 \
            for (int kj = 0; kj < K; kj++)                                                                             \
                for (int cb = 0; cb < C; cb += cbw)                                                                    \
                    for (int ob = 0; ob < OC; ob += nv * VL) {                                                         \
                        float *d = dwt + ((size_t)(ki * K + kj) * C + cb) * OC + ob;                                   \
                        const float *x = xp + (size_t)ki * rs + (size_t)kj * C + cb;                                   \
                        if (nv == 2 && cbw == 8)                                                                       \
                            dw_block(d, x, dy + ob, OH, OW, C, OC, s, rs, 8, 2);                                       \
                        else if (nv == 2)                                                                              \
                            dw_block(d, x, dy + ob, OH, OW, C, OC, s, rs, 1, 2);                                       \
                        else if (cbw == 16)                                                                            \
                            dw_block(d, x, dy + ob, OH, OW, C, OC, s, rs, 16, 1);                                      \
                        else                                                                                           \
                            dw_block(d, x, dy + ob, OH, OW, C, OC, s, rs, 1, 1);                                       \
                    }                                                                                                  \
    }

#define FWD2(P) fwd_block(y + (size_t)ow * OC, x + (size_t)ow * s * C, wt, bias, mode, C, OC, K, s, rs, ob, P, 2)
#define FWD1(P) fwd_block(y + (size_t)ow * OC, x + (size_t)ow * s * C, wt, bias, mode, C, OC, K, s, rs, ob, P, 1)
#define DX2(P) dx_block(dxp + (size_t)ow * s * C, dy + (size_t)ow * OC, wd, C, OC, K, s, rs, cb, P, 2)
#define DX1(P) dx_block(dxp + (size_t)ow * s * C, dy + (size_t)ow * OC, wd, C, OC, K, s, rs, cb, P, 1)

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
DRIVERS(avx512, __attribute__((target("avx512f,fma"))))
DRIVERS(avx2, __attribute__((target("avx2,fma"))))
#endif
DRIVERS(base, )

typedef struct drivers {
    void (*fwd_row)(float *, const float *, const float *, const float *, int, int, int, int, int, int, int);
    void (*dx_row)(float *, const float *, const float *, int, int, int, int, int, int);
    void (*dw_image)(float *, const float *, const float *, int, int, int, int, int, int, int);
} drivers;

static const drivers *pick(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    static const drivers avx512 = {fwd_row_avx512, dx_row_avx512, dw_image_avx512},
                         avx2 = {fwd_row_avx2, dx_row_avx2, dw_image_avx2};
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        return &avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &avx2;
#endif
    static const drivers base = {fwd_row_base, dx_row_base, dw_image_base};
    return &base;
}

int op_conv2d_nhwc_vectorized_cpu(void)
{
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    return pick()->fwd_row == fwd_row_avx512;
#else
    return 0;
#endif
}

/* ---- shapes whose channels do not fill vectors: plain loops on the same layouts ---- */

static void fwd_image_plain(float *y, const float *xp, const float *wt, const float *bias, int OH, int OW, int C,
                            int OC, int K, int s, int rs)
{
    for (int oh = 0; oh < OH; oh++)
        for (int ow = 0; ow < OW; ow++) {
            float *yo = y + ((size_t)oh * OW + ow) * OC;
            for (int o = 0; o < OC; o++)
                yo[o] = bias ? bias[o] : 0.0f;
            for (int ki = 0; ki < K; ki++)
                for (int kj = 0; kj < K; kj++) {
                    const float *x = xp + (size_t)(oh * s + ki) * rs + (size_t)(ow * s + kj) * C;
                    const float *w = wt + (size_t)(ki * K + kj) * C * OC;
                    for (int c = 0; c < C; c++)
                        for (int o = 0; o < OC; o++)
                            yo[o] += x[c] * w[(size_t)c * OC + o];
                }
        }
}

static void dx_image_plain(float *dxp, const float *dy, const float *wd, int OH, int OW, int C, int OC, int K, int s,
                           int rs)
{
    for (int oh = 0; oh < OH; oh++)
        for (int ow = 0; ow < OW; ow++) {
            const float *d = dy + ((size_t)oh * OW + ow) * OC;
            for (int ki = 0; ki < K; ki++)
                for (int kj = 0; kj < K; kj++) {
                    float *dx = dxp + (size_t)(oh * s + ki) * rs + (size_t)(ow * s + kj) * C;
                    const float *w = wd + (size_t)(ki * K + kj) * OC * C;
                    for (int o = 0; o < OC; o++)
                        for (int c = 0; c < C; c++)
                            dx[c] += d[o] * w[(size_t)o * C + c];
                }
        }
}

/* ---- the ops ---- */

static int team_size(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* The input gradient of a stride-1 convolution is itself a convolution: of
 * dy zero-padded by q = K-1-pad, with the taps flipped and C, OC swapped
 * (the forward's kernel, summed onto dx: no scatter). Other strides
 * scatter each output pixel's taps into a padded gradient image. */
static int gathers(int K, int stride, int pad) { return stride == 1 && pad <= K - 1; }

/* Floats per thread: the padded image, the padded dy or the padded gradient image. */
static size_t per_thread(int C, int OC, int K, int H, int W, int stride, int pad)
{
    size_t n_img = (size_t)(H + 2 * pad) * (W + 2 * pad) * C, n_grad = n_img;
    if (gathers(K, stride, pad)) {
        int q = K - 1 - pad, OH = H + 2 * pad - K + 1, OW = W + 2 * pad - K + 1;
        n_grad = (size_t)(OH + 2 * q) * (OW + 2 * q) * OC;
    }
    return n_img + n_grad;
}

/* The backward's chunks of images, each with its partial dw (K,K,C,OC) and db (OC). */
enum { N_CHUNKS = 16 };

size_t op_conv2d_nhwc_workspace_cpu(int C, int OC, int K, int H, int W, int stride, int pad)
{
    size_t kkco = (size_t)K * K * C * OC;
    return 2 * kkco + N_CHUNKS * (kkco + OC) + (size_t)team_size() * per_thread(C, OC, K, H, W, stride, pad);
}

/* (OC,C,K,K) -> wt (K,K,C,OC) and, if wd, (K,K,OC,C), its taps flipped if flip. */
static void reorder(float *wt, float *wd, const float *w, int C, int OC, int K, int flip)
{
    for (int o = 0; o < OC; o++)
        for (int c = 0; c < C; c++)
            for (int t = 0; t < K * K; t++) {
                float v = w[((size_t)o * C + c) * K * K + t];
                wt[((size_t)t * C + c) * OC + o] = v;
                if (wd)
                    wd[((size_t)(flip ? K * K - 1 - t : t) * OC + o) * C + c] = v;
            }
}

/* Image (H,W,C) into the interior of xp (H+2pad, W+2pad, C), whose border is zero. */
static void pad_copy(float *xp, const float *x, int H, int W, int C, int pad)
{
    size_t rs = (size_t)(W + 2 * pad) * C;
    for (int h = 0; h < H; h++)
        memcpy(xp + (size_t)(h + pad) * rs + (size_t)pad * C, x + (size_t)h * W * C, (size_t)W * C * sizeof(float));
}

void op_conv2d_nhwc_forward_cpu(float *out, const float *inp, const float *weight, const float *bias, float *ws, int B,
                                int C, int H, int W, int OC, int K, int stride, int pad, int relu)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1, Wp = W + 2 * pad;
    size_t kkco = (size_t)K * K * C * OC, per = per_thread(C, OC, K, H, W, stride, pad);
    float *wt = ws, *tws = ws + 2 * kkco;
    const drivers *dr = pick();
    reorder(wt, NULL, weight, C, OC, K, 0);
#pragma omp parallel
    {
#ifdef _OPENMP
        float *xp = tws + (size_t)omp_get_thread_num() * per;
#else
        float *xp = tws;
#endif
        if (pad)
            memset(xp, 0, (size_t)(H + 2 * pad) * Wp * C * sizeof(float));
#pragma omp for schedule(dynamic, 1) nowait
        for (int b = 0; b < B; b++) {
            const float *x = inp + (size_t)b * H * W * C;
            float *y = out + (size_t)b * OH * OW * OC;
            if (pad) {
                pad_copy(xp, x, H, W, C, pad);
                x = xp;
            }
            int rs = Wp * C;
            if (OC % VL == 0)
                for (int oh = 0; oh < OH; oh++)
                    dr->fwd_row(y + (size_t)oh * OW * OC, x + (size_t)oh * stride * rs, wt, bias, relu ? RELU : 0,
                                OW, C, OC, K, stride, rs);
            else {
                fwd_image_plain(y, x, wt, bias, OH, OW, C, OC, K, stride, rs);
                for (size_t i = 0; relu && i < (size_t)OH * OW * OC; i++)
                    y[i] = y[i] > 0.0f ? y[i] : 0.0f;
            }
        }
    }
}

void op_conv2d_nhwc_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                 const float *weight, float *ws, int B, int C, int H, int W, int OC, int K, int stride,
                                 int pad, int add_dparams)
{
    int OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1, Hp = H + 2 * pad, Wp = W + 2 * pad;
    int gather = gathers(K, stride, pad), q = K - 1 - pad, OWq = OW + 2 * q, rs = Wp * C;
    size_t kkco = (size_t)K * K * C * OC, per = per_thread(C, OC, K, H, W, stride, pad), n_img = (size_t)Hp * Wp * C;
    size_t n_grad = gather ? (size_t)(OH + 2 * q) * OWq * OC : n_img;
    float *wt = ws, *wd = ws + kkco, *parts = ws + 2 * kkco, *tws = parts + N_CHUNKS * (kkco + OC);
    const drivers *dr = pick();
    reorder(wt, wd, weight, C, OC, K, gather);
#pragma omp parallel
    {
#ifdef _OPENMP
        int me = omp_get_thread_num();
#else
        int me = 0;
#endif
        float *xp = tws + (size_t)me * per, *gp = xp + n_img;
        if (pad)
            memset(xp, 0, n_img * sizeof(float));
        if (gather && q)
            memset(gp, 0, n_grad * sizeof(float));
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < N_CHUNKS; k++) {
            float *dwp = parts + (size_t)k * (kkco + OC), *dbp = dwp + kkco;
            memset(dwp, 0, (kkco + OC) * sizeof(float));
            for (int b = (int)((int64_t)k * B / N_CHUNKS); b < (int)((int64_t)(k + 1) * B / N_CHUNKS); b++) {
                const float *x = inp + (size_t)b * H * W * C, *dy = dout + (size_t)b * OH * OW * OC;
                if (pad) {
                    pad_copy(xp, x, H, W, C, pad);
                    x = xp;
                }
                if (OC % VL == 0)
                    dr->dw_image(dwp, x, dy, OH, OW, C, OC, K, stride, rs);
                else /* the plain loops */
                    for (int oh = 0; oh < OH; oh++)
                        for (int ow = 0; ow < OW; ow++)
                            for (int t = 0; t < K * K; t++) {
                                const float *xv =
                                    x + (size_t)(oh * stride + t / K) * rs + (size_t)(ow * stride + t % K) * C;
                                const float *d = dy + ((size_t)oh * OW + ow) * OC;
                                for (int c = 0; c < C; c++)
                                    for (int o = 0; o < OC; o++)
                                        dwp[((size_t)t * C + c) * OC + o] += xv[c] * d[o];
                            }
                for (size_t i = 0; i < (size_t)OH * OW; i++)
                    for (int o = 0; o < OC; o++)
                        dbp[o] += dy[i * OC + o];
                if (!dinp)
                    continue;
                float *dx = dinp + (size_t)b * H * W * C;
                if (gather) { /* dx += conv(dy padded by q, flipped taps) */
                    const float *g = dy;
                    if (q) {
                        pad_copy(gp, dy, OH, OW, OC, q);
                        g = gp;
                    }
                    if (C % VL == 0)
                        for (int h = 0; h < H; h++)
                            dr->fwd_row(dx + (size_t)h * W * C, g + (size_t)h * OWq * OC, wd, NULL, ADD, W, OC, C, K, 1,
                                        OWq * OC);
                    else {
                        for (int h = 0; h < H; h++)
                            for (int w = 0; w < W; w++)
                                for (int t = 0; t < K * K; t++) {
                                    const float *d = g + ((size_t)(h + t / K) * OWq + w + t % K) * OC;
                                    const float *wv = wd + (size_t)t * OC * C;
                                    float *o = dx + ((size_t)h * W + w) * C;
                                    for (int oc = 0; oc < OC; oc++)
                                        for (int c = 0; c < C; c++)
                                            o[c] += d[oc] * wv[(size_t)oc * C + c];
                                }
                    }
                    continue;
                }
                memset(gp, 0, n_img * sizeof(float));
                if (C % VL == 0)
                    for (int oh = 0; oh < OH; oh++)
                        dr->dx_row(gp + (size_t)oh * stride * rs, dy + (size_t)oh * OW * OC, wd, OW, C, OC, K, stride,
                                   rs);
                else
                    dx_image_plain(gp, dy, wd, OH, OW, C, OC, K, stride, rs);
                for (int h = 0; h < H; h++) {
                    const float *src = gp + (size_t)(h + pad) * rs + (size_t)pad * C;
                    float *dst = dx + (size_t)h * W * C;
                    for (int i = 0; i < W * C; i++)
                        dst[i] += src[i];
                }
            }
        }
        /* the loop's barrier passed: every partial is complete; (K,K,C,OC) back to (OC,C,K,K) */
        int lo, hi;
        team_range((int)(kkco + OC), 64, &lo, &hi);
        for (int i = lo; i < hi; i++) {
            float s = 0.0f;
            for (int k = 0; k < N_CHUNKS; k++)
                s += parts[(size_t)k * (kkco + OC) + i];
            if (i < (int)kkco) {
                int o = i % OC, c = i / OC % C, tap = i / OC / C;
                float *dw = dweight + ((size_t)o * C + c) * K * K + tap;
                *dw = (add_dparams ? *dw : 0.0f) + s;
            } else if (dbias) {
                float *db = dbias + (i - kkco);
                *db = (add_dparams ? *db : 0.0f) + s;
            }
        }
    }
}
