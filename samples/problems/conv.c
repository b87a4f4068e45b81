/* conv: convolutions without autotuning. Three convolution shapes run
 * forward and backward every step with the default algorithm
 * (im2col+gemm), named with their shape in a range inside the op as the
 * trainer's CPU backend does ("conv ALGO CxHxW->OC kK sS pP"). --fixed
 * times both algorithms once per shape in the first step (a "conv
 * autotune" range, cudnn.benchmark's trial) and keeps the faster, direct,
 * which takes half the time here. */
#include "problem.h"

static const struct shape { int C, H, W, OC; } shapes[3] = {{16, 32, 32, 32}, {32, 16, 16, 64}, {64, 8, 8, 64}};

static void conv(const char *algo, const struct shape *s, double us)
{
    char name[96];
    snprintf(name, sizeof name, "conv %s %dx%dx%d->%d k3 s1 p1", algo, s->C, s->H, s->W, s->OC);
    pb_push(name, 0);
    pb_wait_us(us);
    pb_pop();
}

static void conv_op(const char *op, const struct shape *s, bool fixed, bool first, double us)
{
    pb_push(op, PB_CAT_COMPUTE);
    if (fixed && first) {
        pb_push("conv autotune", 0);
        conv("im2col+gemm", s, us);
        conv("direct", s, us / 2);
        pb_pop();
    }
    conv(fixed ? "direct" : "im2col+gemm", s, fixed ? us / 2 : us);
    pb_pop();
}

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "convolutions by the default algorithm (--fixed: autotuned)");
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        for (int k = 0; k < 3; k++) {
            conv_op("conv2d_forward", &shapes[k], a.fixed, i == 0, 300);
            pb_compute("relu_forward", 40);
        }
        for (int k = 2; k >= 0; k--) {
            pb_compute("relu_backward", 40);
            conv_op("conv2d_backward", &shapes[k], a.fixed, i == 0, 500);
        }
        pb_compute("optimizer", 200);
        pb_pop();
    }
    puts("ok");
    return 0;
}
