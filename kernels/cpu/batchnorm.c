/* batchnorm.c: BatchNorm2d over NCHW and over channels-last (NHWC) tensors:
 * per channel, statistics over the batch and the pixels. Training
 * normalizes with the batch's mean and biased variance and moves the
 * running averages (PyTorch's rule: the running variance takes the unbiased
 * estimate); evaluation normalizes with the running averages. Sums in
 * double. NCHW: one channel per loop iteration, so results do not depend on
 * the thread count. NHWC: chunks of rows summed for every channel (the
 * channels are the contiguous, vectorized axis; float sums over blocks of
 * rows, flushed into double) and the partials added in chunk order: the
 * same results for any thread count; one pass for the mean and the
 * variance, one to normalize. */
#include "ops.h"
#include "cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void op_batchnorm_forward_cpu(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                              const float *inp, const float *weight, const float *bias, int B, int C, int HW,
                              int training, float momentum, float eps, int relu)
{
    double n = (double)B * HW;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float m, r;
        if (training) {
            double s = 0.0, ss = 0.0;
            for (int b = 0; b < B; b++) {
                const float *x = inp + ((size_t)b * C + c) * HW;
                for (int i = 0; i < HW; i++)
                    s += x[i];
            }
            double mu = s / n;
            for (int b = 0; b < B; b++) {
                const float *x = inp + ((size_t)b * C + c) * HW;
                for (int i = 0; i < HW; i++)
                    ss += (x[i] - mu) * (x[i] - mu);
            }
            double var = ss / n;
            m = (float)mu;
            r = (float)(1.0 / sqrt(var + eps));
            mean[c] = m;
            rstd[c] = r;
            running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * m;
            running_var[c] = (1.0f - momentum) * running_var[c] + momentum * (float)(n > 1 ? ss / (n - 1) : var);
        } else {
            m = running_mean[c];
            r = 1.0f / sqrtf(running_var[c] + eps);
        }
        float w = weight[c] * r, sh = bias[c] - m * w;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW;
            float *y = out + ((size_t)b * C + c) * HW;
            if (relu)
                for (int i = 0; i < HW; i++) {
                    float v = x[i] * w + sh;
                    y[i] = v > 0.0f ? v : 0.0f;
                }
            else
                for (int i = 0; i < HW; i++)
                    y[i] = x[i] * w + sh;
        }
    }
}

void op_batchnorm_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int B, int C, int HW,
                               int add_dparams, const float *relu_bias)
{
    double n = (double)B * HW;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float m = mean[c], r = rstd[c];
        /* the fused ReLU's mask, recomputed as the forward computed its input */
        float sc = weight[c] * r, sh = relu_bias ? relu_bias[c] - m * sc : 0.0f;
        double sd = 0.0, sdx = 0.0;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW, *dy = dout + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++) {
                float g = relu_bias && !(x[i] * sc + sh > 0.0f) ? 0.0f : dy[i];
                sd += g;
                sdx += g * (x[i] - m) * r;
            }
        }
        dbias[c] = (add_dparams ? dbias[c] : 0.0f) + (float)sd;
        dweight[c] = (add_dparams ? dweight[c] : 0.0f) + (float)sdx;
        if (!dinp)
            continue;
        float k = weight[c] * r, a = (float)(sd / n), g = (float)(sdx / n);
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW, *dy = dout + ((size_t)b * C + c) * HW;
            float *dx = dinp + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++) {
                float d = relu_bias && !(x[i] * sc + sh > 0.0f) ? 0.0f : dy[i];
                dx[i] += k * (d - a - (x[i] - m) * r * g);
            }
        }
    }
}

/* ---- channels-last (NHWC: N = B*H*W rows of C channels) ---- */

static int team_max(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

/* The row loops are compiled for AVX-512, AVX2 and the baseline, picked at load (GCC's target_clones). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CLONES
#endif

/* Channels in blocks of 16 (GCC's vector extension) when C is a multiple of
 * 16: a block's sums and factors stay in registers down a block of rows. */
typedef float vf __attribute__((vector_size(64)));
typedef int vi __attribute__((vector_size(64)));
enum { VL = 16 };
#define VLOAD(v, p) memcpy(&(v), (p), sizeof(vf))
#define VSTORE(p, v) memcpy((p), &(v), sizeof(vf))
/* d where t > 0, else 0 */
#define VPOS(t, d) ((vf)((vi)(d) & (vi)((t) > (vf){0})))

/* Per-channel sums over rows: the rows are N_RCHUNKS chunks, handed out to
 * the team's threads as they come free (a descheduled thread holds up none
 * of the others); each chunk sums in float (vectors across the channels),
 * flushed into its double partials every FLUSH rows; the partials are added
 * in chunk order, so results are bitwise the same for any thread count. */
enum { FLUSH = 256, N_RCHUNKS = 32 };

static int chunk_lo(int k, int N) { return (int)((int64_t)k * N / N_RCHUNKS); }

typedef struct bn_ws {
    double *part; /* (chunks, 2, C) */
    double *sum;  /* (threads, 2, C): the total, each thread its own copy */
    float *f;     /* (threads, 2, C): the float sums between flushes */
    float *k;     /* (threads, 5, C): the per-channel factors of the passes */
} bn_ws;

static void ws_new(bn_ws *w, int C)
{
    size_t nt = (size_t)team_max();
    w->part = malloc((N_RCHUNKS + nt) * 2 * C * sizeof(double));
    w->f = malloc(nt * 7 * C * sizeof(float));
    if (!w->part || !w->f) {
        fprintf(stderr, "trainer: batchnorm: out of host memory\n");
        exit(1);
    }
    w->sum = w->part + (size_t)N_RCHUNKS * 2 * C;
    w->k = w->f + nt * 2 * C;
}

static int thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static void ws_free(bn_ws *w)
{
    free(w->part);
    free(w->f);
}

/* Sums of x and x*x (stats: dy NULL), or of g and g*(x-mean)*rstd with g = dy masked where the fused ReLU's
 * input, x*scale + shift as the forward computed it, is not positive (scale NULL: no ReLU), over rows [lo, hi). */
CLONES static void sums(const float *restrict dy, const float *restrict x, const float *restrict scale,
                        const float *restrict shift, const float *restrict mean, const float *restrict rstd, int lo,
                        int hi, int C, double *restrict pa, double *restrict pb, float *restrict fa,
                        float *restrict fb)
{
    for (int r0 = lo; r0 < hi; r0 += FLUSH) {
        int r1 = r0 + FLUSH < hi ? r0 + FLUSH : hi;
        if (C % VL == 0) {
            for (int cb = 0; cb < C; cb += VL) {
                vf s = {0}, t = {0}, m = {0}, rs = {0}, sc = {0}, sh = {0};
                if (dy) {
                    VLOAD(m, mean + cb);
                    VLOAD(rs, rstd + cb);
                }
                if (scale) {
                    VLOAD(sc, scale + cb);
                    VLOAD(sh, shift + cb);
                }
                for (int r = r0; r < r1; r++) {
                    vf d, xv;
                    VLOAD(xv, x + (size_t)r * C + cb);
                    if (!dy) {
                        s += xv;
                        t += xv * xv;
                        continue;
                    }
                    VLOAD(d, dy + (size_t)r * C + cb);
                    if (scale)
                        d = VPOS(xv * sc + sh, d);
                    s += d;
                    t += d * ((xv - m) * rs);
                }
                for (int j = 0; j < VL; j++) {
                    pa[cb + j] += s[j];
                    pb[cb + j] += t[j];
                }
            }
            continue;
        }
        for (int c = 0; c < C; c++)
            fa[c] = fb[c] = 0.0f;
        for (int r = r0; r < r1; r++) {
            const float *xr = x + (size_t)r * C, *d = dy ? dy + (size_t)r * C : NULL;
            if (!d) {
                for (int c = 0; c < C; c++) {
                    fa[c] += xr[c];
                    fb[c] += xr[c] * xr[c];
                }
            } else if (scale) {
                for (int c = 0; c < C; c++) {
                    float g = xr[c] * scale[c] + shift[c] > 0.0f ? d[c] : 0.0f;
                    fa[c] += g;
                    fb[c] += g * ((xr[c] - mean[c]) * rstd[c]);
                }
            } else {
                for (int c = 0; c < C; c++) {
                    fa[c] += d[c];
                    fb[c] += d[c] * ((xr[c] - mean[c]) * rstd[c]);
                }
            }
        }
        for (int c = 0; c < C; c++) {
            pa[c] += fa[c];
            pb[c] += fb[c];
        }
    }
}

/* Inside a parallel region, every thread: chunks of rows summed as they
 * come (grad: dy given), then, past the loop's barrier, the partials added
 * in chunk order into the thread's own copy of the total (returned). */
static const double *team_sums(bn_ws *w, const float *x, const float *dy, const float *scale, const float *shift,
                               const float *mean, const float *rstd, int N, int C)
{
    int me = thread_num();
    float *fa = w->f + (size_t)me * 2 * C, *fb = fa + C;
#pragma omp for schedule(dynamic, 1)
    for (int k = 0; k < N_RCHUNKS; k++) {
        double *pa = w->part + (size_t)k * 2 * C, *pb = pa + C;
        for (int c = 0; c < C; c++)
            pa[c] = pb[c] = 0.0;
        sums(dy, x, scale, shift, mean, rstd, chunk_lo(k, N), chunk_lo(k + 1, N), C, pa, pb, fa, fb);
    }
    double *sum = w->sum + (size_t)me * 2 * C;
    for (int c = 0; c < 2 * C; c++) {
        double s = 0.0;
        for (int k = 0; k < N_RCHUNKS; k++)
            s += w->part[(size_t)k * 2 * C + c];
        sum[c] = s;
    }
    return sum;
}

/* y = x * scale + shift per channel (then ReLU), rows [lo, hi). */
CLONES static void apply_rows(float *restrict out, const float *restrict inp, const float *restrict scale,
                              const float *restrict shift, int lo, int hi, int C, int relu)
{
    if (C % VL == 0) {
        for (int r0 = lo; r0 < hi; r0 += FLUSH) {
            int r1 = r0 + FLUSH < hi ? r0 + FLUSH : hi;
            for (int cb = 0; cb < C; cb += VL) {
                vf sc, sh;
                VLOAD(sc, scale + cb);
                VLOAD(sh, shift + cb);
                for (int r = r0; r < r1; r++) {
                    vf v;
                    VLOAD(v, inp + (size_t)r * C + cb);
                    v = v * sc + sh;
                    if (relu)
                        v = VPOS(v, v);
                    VSTORE(out + (size_t)r * C + cb, v);
                }
            }
        }
        return;
    }
    for (int r = lo; r < hi; r++) {
        const float *x = inp + (size_t)r * C;
        float *y = out + (size_t)r * C;
        if (relu)
            for (int c = 0; c < C; c++) {
                float v = x[c] * scale[c] + shift[c];
                y[c] = v > 0.0f ? v : 0.0f;
            }
        else
            for (int c = 0; c < C; c++)
                y[c] = x[c] * scale[c] + shift[c];
    }
}

/* dx += k * (dy - a - (x - mean) * g) per channel, dy masked as in sums; rows [lo, hi). */
CLONES static void dx_rows(float *restrict dinp, const float *restrict dout, const float *restrict inp,
                           const float *restrict scale, const float *restrict shift, const float *restrict k,
                           const float *restrict a, const float *restrict g, const float *restrict mean, int lo,
                           int hi, int C)
{
    if (C % VL == 0) {
        for (int r0 = lo; r0 < hi; r0 += FLUSH) {
            int r1 = r0 + FLUSH < hi ? r0 + FLUSH : hi;
            for (int cb = 0; cb < C; cb += VL) {
                vf kk, aa, gg, m, sc = {0}, sh = {0};
                VLOAD(kk, k + cb);
                VLOAD(aa, a + cb);
                VLOAD(gg, g + cb);
                VLOAD(m, mean + cb);
                if (scale) {
                    VLOAD(sc, scale + cb);
                    VLOAD(sh, shift + cb);
                }
                for (int r = r0; r < r1; r++) {
                    vf d, xv, dx;
                    size_t at = (size_t)r * C + cb;
                    VLOAD(d, dout + at);
                    VLOAD(xv, inp + at);
                    VLOAD(dx, dinp + at);
                    if (scale)
                        d = VPOS(xv * sc + sh, d);
                    dx += kk * (d - aa - (xv - m) * gg);
                    VSTORE(dinp + at, dx);
                }
            }
        }
        return;
    }
    for (int r = lo; r < hi; r++) {
        const float *x = inp + (size_t)r * C, *dy = dout + (size_t)r * C;
        float *dx = dinp + (size_t)r * C;
        if (scale) {
            for (int c = 0; c < C; c++) {
                float d = x[c] * scale[c] + shift[c] > 0.0f ? dy[c] : 0.0f;
                dx[c] += k[c] * (d - a[c] - (x[c] - mean[c]) * g[c]);
            }
        } else {
            for (int c = 0; c < C; c++)
                dx[c] += k[c] * (dy[c] - a[c] - (x[c] - mean[c]) * g[c]);
        }
    }
}

void op_batchnorm_nhwc_forward_cpu(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                                   const float *inp, const float *weight, const float *bias, int N, int C,
                                   int training, float momentum, float eps, int relu)
{
    bn_ws w;
    ws_new(&w, C);
    double n = (double)N;
#pragma omp parallel
    {
        /* each thread its own scale and shift, the same values; the first writes the statistics */
        int me = thread_num();
        float *scale = w.k + (size_t)me * 5 * C, *shift = scale + C;
        if (training) {
            const double *sum = team_sums(&w, inp, NULL, NULL, NULL, NULL, NULL, N, C);
            for (int c = 0; c < C; c++) {
                double mu = sum[c] / n, var = sum[C + c] / n - mu * mu;
                var = var > 0.0 ? var : 0.0;
                float r = (float)(1.0 / sqrt(var + eps));
                scale[c] = weight[c] * r;
                shift[c] = bias[c] - (float)mu * scale[c];
                if (me == 0) {
                    mean[c] = (float)mu;
                    rstd[c] = r;
                    running_mean[c] = (1.0f - momentum) * running_mean[c] + momentum * (float)mu;
                    running_var[c] =
                        (1.0f - momentum) * running_var[c] + momentum * (float)(n > 1 ? var * n / (n - 1) : var);
                }
            }
        } else {
            for (int c = 0; c < C; c++) {
                float r = 1.0f / sqrtf(running_var[c] + eps);
                scale[c] = weight[c] * r;
                shift[c] = bias[c] - running_mean[c] * scale[c];
            }
        }
#pragma omp for schedule(dynamic, 1) nowait
        for (int k = 0; k < N_RCHUNKS; k++)
            apply_rows(out, inp, scale, shift, chunk_lo(k, N), chunk_lo(k + 1, N), C, relu);
    }
    ws_free(&w);
}

void op_batchnorm_nhwc_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                    const float *weight, const float *mean, const float *rstd, int N, int C,
                                    int add_dparams, const float *relu_bias)
{
    bn_ws w;
    ws_new(&w, C);
    double n = (double)N;
#pragma omp parallel
    {
        /* the sum of dy, and of dy times the normalized input; each thread its factors, the first the gradients */
        int me = thread_num();
        float *k = w.k + (size_t)me * 5 * C, *a = k + C, *g = a + C, *scale = g + C, *shift = scale + C;
        for (int c = 0; c < C; c++) { /* the fused ReLU's mask, as the forward computed its input */
            scale[c] = weight[c] * rstd[c];
            shift[c] = relu_bias ? relu_bias[c] - mean[c] * scale[c] : 0.0f;
        }
        const double *sum = team_sums(&w, inp, dout, relu_bias ? scale : NULL, shift, mean, rstd, N, C);
        for (int c = 0; c < C; c++) {
            if (me == 0) {
                dbias[c] = (add_dparams ? dbias[c] : 0.0f) + (float)sum[c];
                dweight[c] = (add_dparams ? dweight[c] : 0.0f) + (float)sum[C + c];
            }
            k[c] = weight[c] * rstd[c];
            a[c] = (float)(sum[c] / n);
            g[c] = (float)(sum[C + c] / n) * rstd[c];
        }
#pragma omp for schedule(dynamic, 1) nowait
        for (int ch = 0; ch < N_RCHUNKS; ch++)
            if (dinp)
                dx_rows(dinp, dout, inp, relu_bias ? scale : NULL, shift, k, a, g, mean, chunk_lo(ch, N),
                        chunk_lo(ch + 1, N), C);
    }
    ws_free(&w);
}
