/* launch: launch-bound tiny kernels. After the matrix product, an
 * elementwise chain runs as 150 ops of 4 us, each after 10 us of host
 * launch overhead, so the device idles between them. --fixed runs the
 * chain as one fused op doing the same 600 us of work. */
#include "problem.h"

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "150 ops of 4 us with 10 us launches (--fixed: one fused op)");
    enum { N_OPS = 150 };
    const double op_us = 4, launch_us = 10;
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        pb_compute("matmul", 1000);
        if (a.fixed) {
            pb_wait_us(launch_us);
            pb_compute("fused elementwise", N_OPS * op_us);
        } else {
            for (int k = 0; k < N_OPS; k++) {
                pb_wait_us(launch_us); /* the launch: host time, the device idle */
                pb_compute("elementwise", op_us);
            }
        }
        pb_pop();
    }
    puts("ok");
    return 0;
}
