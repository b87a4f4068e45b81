/* batchnorm.c: BatchNorm2d over NCHW: per channel, statistics over the
 * batch and the pixels. Training normalizes with the batch's mean and
 * biased variance and moves the running averages (PyTorch's rule: the
 * running variance takes the unbiased estimate); evaluation normalizes with
 * the running averages. Sums in double; one channel per loop iteration, so
 * results do not depend on the thread count. */
#include "ops.h"

#include <math.h>

void op_batchnorm_forward_cpu(float *out, float *mean, float *rstd, float *running_mean, float *running_var,
                              const float *inp, const float *weight, const float *bias, int B, int C, int HW,
                              int training, float momentum, float eps)
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
            for (int i = 0; i < HW; i++)
                y[i] = x[i] * w + sh;
        }
    }
}

void op_batchnorm_backward_cpu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                               const float *weight, const float *mean, const float *rstd, int B, int C, int HW,
                               int add_dparams)
{
    double n = (double)B * HW;
#pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float m = mean[c], r = rstd[c];
        double sd = 0.0, sdx = 0.0;
        for (int b = 0; b < B; b++) {
            const float *x = inp + ((size_t)b * C + c) * HW, *dy = dout + ((size_t)b * C + c) * HW;
            for (int i = 0; i < HW; i++) {
                sd += dy[i];
                sdx += dy[i] * (x[i] - m) * r;
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
            for (int i = 0; i < HW; i++)
                dx[i] += k * (dy[i] - a - (x[i] - m) * r * g);
        }
    }
}
