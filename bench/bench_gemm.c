/* bench_gemm: the linear layer's backward GEMMs on the trainer's shapes,
 * OpenBLAS (as matmul.c called it: each thread of the team a single-threaded
 * GEMM on its rows) against kernels/cpu/gemm.c (the same split), side by
 * side: the two alternate call by call, the order flipped every round, and
 * the figure is each side's median GF/s and the ratio of the medians.
 * Prints figures, asserts nothing; says so and exits 0 where gemm.c cannot
 * run (no AVX-512) or there is no CBLAS.
 *
 *   bench/bench_gemm [ROUNDS]   (default 31; set OMP_NUM_THREADS and
 *                                OMP_WAIT_POLICY as for the trainer) */
#include "config.h"
#include "cpu/cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HAVE_CBLAS
#include <cblas.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float *random_floats(size_t n)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        p[i] = (float)rand() / (float)RAND_MAX - 0.5f;
    return p;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One backward product of a linear layer (N tokens, C inputs, OC outputs):
 * dinp (N,C) += dout (N,OC) @ W (OC,C), or dW (OC,C) += dout^T @ inp (N,C). */
typedef struct {
    const char *name;
    int N, C, OC;
    int dw; /* 0: dinp, 1: dW */
} shape;

static void run(const shape *s, const float *dout, const float *x, float *out, int own)
{
    int N = s->N, C = s->C, OC = s->OC;
#pragma omp parallel
    {
        int lo, hi;
        team_range(s->dw ? OC : N, 16, &lo, &hi);
        if (hi > lo && !s->dw && own)
            cpu_gemm_rows(lo, hi, C, OC, dout, OC, 1, x, C, out, C, true, NULL);
        else if (hi > lo && !s->dw)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, hi - lo, C, OC, 1.0f, dout + (size_t)lo * OC, OC,
                        x, C, 1.0f, out + (size_t)lo * C, C);
        else if (hi > lo && own)
            cpu_gemm_rows(lo, hi, C, N, dout, 1, OC, x, C, out, C, true, NULL);
        else if (hi > lo)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, hi - lo, C, N, 1.0f, dout + lo, OC, x, C, 1.0f,
                        out + (size_t)lo * C, C);
    }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 31;
    if (rounds < 1 || rounds > 1000) {
        fprintf(stderr, "bench_gemm: ROUNDS must be 1 to 1000, not %s\n", argv[1]);
        return 2;
    }
    if (!cpu_gemm_usable(32)) {
        printf("bench_gemm: this CPU has no AVX-512: the trainer uses the BLAS for every GEMM here\n");
        return 0;
    }
    cpu_blas_serial();
    /* the mid-size GPT of bench_trainer.sh: batch 8 x T 128 tokens, width 384 */
    static const shape shapes[] = {
        {"qkv dinp", 1024, 384, 1152, 0},    {"qkv dW", 1024, 384, 1152, 1},
        {"attproj dinp", 1024, 384, 384, 0}, {"attproj dW", 1024, 384, 384, 1},
        {"fc dinp", 1024, 384, 1536, 0},     {"fc dW", 1024, 384, 1536, 1},
        {"fcproj dinp", 1024, 1536, 384, 0}, {"fcproj dW", 1024, 1536, 384, 1},
    };
    double *t[2];
    t[0] = malloc((size_t)rounds * sizeof(double));
    t[1] = malloc((size_t)rounds * sizeof(double));
    printf("%-14s %6s %6s %6s  %10s %10s  %s\n", "product", "N", "C", "OC", "BLAS GF/s", "gemm.c", "ratio");
    double sum_blas = 0, sum_own = 0;
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        const shape *s = &shapes[k];
        size_t n_out = (size_t)(s->dw ? s->OC : s->N) * s->C;
        float *dout = random_floats((size_t)s->N * s->OC);
        float *x = random_floats(s->dw ? (size_t)s->N * s->C : (size_t)s->OC * s->C);
        float *out = random_floats(n_out);
        run(s, dout, x, out, 0); /* warm both */
        run(s, dout, x, out, 1);
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < 2; i++) {
                int own = (r % 2) ^ i;
                double t0 = now();
                run(s, dout, x, out, own);
                t[own][r] = now() - t0;
            }
        qsort(t[0], (size_t)rounds, sizeof(double), by_value);
        qsort(t[1], (size_t)rounds, sizeof(double), by_value);
        double flops = 2.0 * s->N * s->C * s->OC, blas = t[0][rounds / 2], own = t[1][rounds / 2];
        printf("%-14s %6d %6d %6d  %10.1f %10.1f  %.3f\n", s->name, s->N, s->C, s->OC, flops / blas * 1e-9,
               flops / own * 1e-9, blas / own);
        sum_blas += blas;
        sum_own += own;
        free(dout);
        free(x);
        free(out);
    }
    printf("all eight: %.2f ms (BLAS) vs %.2f ms (gemm.c), ratio %.3f\n", sum_blas * 1e3, sum_own * 1e3,
           sum_blas / sum_own);
    free(t[0]);
    free(t[1]);
    return 0;
}
#else
int main(void)
{
    printf("bench_gemm: built without CBLAS: nothing to compare against\n");
    return 0;
}
#endif
