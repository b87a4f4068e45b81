/* sync: a synchronization in the step loop. A device thread runs the ops
 * the host queues (the stream); each step the host prepares (1000 us),
 * queues two ops of 600 us, then synchronizes (a "synchronize" range, as
 * torch.cuda.synchronize() or loss.item() would) before the next step, so
 * host and device take turns. --fixed queues without waiting, up to two
 * steps ahead (the launch queue's depth): the host prepares the next step
 * while the device computes this one. */
#include "problem.h"

#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int n_queued, n_done;
static bool closing;

static void *device(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (n_done == n_queued && !closing)
            pthread_cond_wait(&cv, &mu);
        bool idle = n_done == n_queued;
        pthread_mutex_unlock(&mu);
        if (idle)
            return NULL;
        pb_compute("matmul", 600);
        pthread_mutex_lock(&mu);
        n_done++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

/* Waits until at most n ops are queued and not done. */
static void wait_queue(int n)
{
    pthread_mutex_lock(&mu);
    while (n_queued - n_done > n)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "a synchronize in every step (--fixed: none, two steps queued ahead)");
    pthread_t t;
    if (pthread_create(&t, NULL, device, NULL) != 0) {
        fprintf(stderr, "sync: pthread_create failed\n");
        return 1;
    }
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        pb_host("prepare", 1000);
        if (a.fixed)
            wait_queue(2); /* a full launch queue holds the host back, no more */
        pthread_mutex_lock(&mu);
        n_queued += 2;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        if (!a.fixed) {
            pb_push("synchronize", 0);
            wait_queue(0);
            pb_pop();
        }
        pb_pop();
    }
    pthread_mutex_lock(&mu);
    closing = true;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    puts("ok");
    return 0;
}
