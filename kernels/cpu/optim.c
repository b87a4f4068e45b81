/* optim.c: the optimizer's element-wise kernels beside AdamW (adamw.c): the
 * fused multi-range AdamW, SGD, the gradient-norm reductions, scaling and
 * the weight EMA. CPU reference, OpenMP. Reductions sum per thread in
 * double and combine in a fixed order, so a result depends only on the
 * thread count. */
#include "ops.h"
#include "cpu.h"

#include <math.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* [*lo, *hi) of [begin, end) for the calling thread of the team, contiguous and
 * fixed by the team size; *nt and *id say which part it is. */
static void thread_part(size_t begin, size_t end, size_t *lo, size_t *hi, int *nt, int *id)
{
#ifdef _OPENMP
    *nt = omp_get_num_threads();
    *id = omp_get_thread_num();
#else
    *nt = 1;
    *id = 0;
#endif
    size_t n = end - begin;
    *lo = begin + n * (size_t)*id / (size_t)*nt;
    *hi = begin + n * (size_t)(*id + 1) / (size_t)*nt;
}

void op_adamw_fused_cpu(float *param, const float *grad, float *m, float *v, const size_t *bounds,
                        const float *decay, int n_ranges, float lr, float beta1, float beta2, float eps,
                        float grad_scale, int t)
{
    float c1 = 1.0f - powf(beta1, (float)t), c2 = 1.0f - powf(beta2, (float)t);
    size_t begin = bounds[0], end = bounds[n_ranges];
#pragma omp parallel
    {
        /* each thread walks its contiguous part */
        size_t lo, hi;
        int nt, id;
        thread_part(begin, end, &lo, &hi, &nt, &id);
        for (int r = 0; r < n_ranges; r++) { /* the ranges that meet [lo, hi), each with its decay */
            size_t a = bounds[r] > lo ? bounds[r] : lo, b = bounds[r + 1] < hi ? bounds[r + 1] : hi;
            if (a < b)
                cpu_adamw_span(param, grad, m, v, a, b, lr, beta1, beta2, c1, c2, eps, decay[r], grad_scale);
        }
    }
}

void op_sgd_cpu(float *param, const float *grad, float *buf, size_t n, float lr, float momentum,
                float weight_decay, int first)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++) {
        float g = grad[i] + weight_decay * param[i];
        if (buf) {
            g = first ? g : momentum * buf[i] + g;
            buf[i] = g;
        }
        param[i] -= lr * g;
    }
}

/* Per-thread partial sums over fixed contiguous parts, combined in thread
 * order: the same bits for the same thread count (an OpenMP reduction
 * combines in whatever order threads finish). */
#define MAX_PARTS 256
static double sumsq_parts(const float *x, size_t n, int *finite)
{
    double part[MAX_PARTS];
    int ok_part[MAX_PARTS], n_parts = 1;
#pragma omp parallel
    {
        size_t lo, hi;
        int nt, id;
        thread_part(0, n, &lo, &hi, &nt, &id);
        if (nt > MAX_PARTS) { /* more threads than parts: the first MAX_PARTS split the work */
            nt = MAX_PARTS;
            lo = n * (size_t)id / MAX_PARTS;
            hi = n * (size_t)(id + 1) / MAX_PARTS;
        }
        if (id < nt) {
            double s = 0;
            int ok = 1;
            for (size_t i = lo; i < hi; i++) {
                s += (double)x[i] * x[i];
                if (finite)
                    ok &= isfinite(x[i]) != 0;
            }
            part[id] = s;
            ok_part[id] = ok;
        }
#pragma omp single
        n_parts = nt;
    }
    double s = 0;
    int ok = 1;
    for (int i = 0; i < n_parts; i++) {
        s += part[i];
        ok &= ok_part[i];
    }
    if (finite)
        *finite = ok;
    return s;
}

double op_sumsq_cpu(const float *x, size_t n) { return sumsq_parts(x, n, NULL); }

int op_all_finite_cpu(const float *x, size_t n)
{
    int ok = 1;
#pragma omp parallel for reduction(&& : ok)
    for (size_t i = 0; i < n; i++)
        ok = ok && isfinite(x[i]);
    return ok;
}

double op_sumsq_finite_cpu(const float *x, size_t n, int *finite) { return sumsq_parts(x, n, finite); }

void op_scale_cpu(float *x, float s, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
}

void op_ema_cpu(float *ema, const float *x, float decay, size_t n)
{
#pragma omp parallel for
    for (size_t i = 0; i < n; i++)
        ema[i] = decay * ema[i] + (1.0f - decay) * x[i];
}
