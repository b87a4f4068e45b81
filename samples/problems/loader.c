/* loader: a data-loader stall. Each step loads and collates its batch on
 * the training thread ("load batch", 800 us) before the device computes on
 * it, so the device waits for every batch. --fixed loads on a loader thread
 * two batches ahead (num_workers, prefetching): loading overlaps compute. */
#include "problem.h"

#include <pthread.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int n_loaded, n_taken, n_total;
enum { AHEAD = 2 };
static const double load_us = 800;

static void *loader(void *arg)
{
    (void)arg;
    for (int i = 0; i < n_total; i++) {
        pthread_mutex_lock(&mu);
        while (n_loaded - n_taken >= AHEAD)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        pb_host("load batch", load_us);
        pthread_mutex_lock(&mu);
        n_loaded++;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pb_args a = pb_init(argc, argv, "batches loaded on the training thread (--fixed: a loader thread ahead)");
    pthread_t t;
    n_total = a.steps;
    if (a.fixed && pthread_create(&t, NULL, loader, NULL) != 0) {
        fprintf(stderr, "loader: pthread_create failed\n");
        return 1;
    }
    for (int i = 0; i < a.steps; i++) {
        pb_step_push(i);
        if (a.fixed) { /* take a loaded batch */
            pthread_mutex_lock(&mu);
            while (n_loaded == n_taken)
                pthread_cond_wait(&cv, &mu);
            n_taken++;
            pthread_cond_broadcast(&cv);
            pthread_mutex_unlock(&mu);
        } else {
            pb_host("load batch", load_us);
        }
        pb_compute("forward", 1000);
        pb_compute("backward", 800);
        pb_pop();
    }
    if (a.fixed)
        pthread_join(t, NULL);
    puts("ok");
    return 0;
}
