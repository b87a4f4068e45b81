/* schedstat.c: the scheduler's account of a traced process's threads
 * (schedstat.h). Each read opens /proc/PID/task once and each thread's
 * schedstat once ("RUN_NS WAIT_NS TIMESLICES", proc(5)); nothing is asked
 * of the process itself, so it runs as untraced. A thread's values only
 * grow, so the last ones seen stand for a thread that exited between two
 * reads (what it ran after the last read is missed: at most one tick). It
 * does not know when to read (the collector's reader does) nor where the
 * sums go. */
#define _GNU_SOURCE
#include "config.h"

#include "schedstat.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct thread_stat {
    int64_t tid;
    int64_t base_run_ns, base_wait_ns; /* as read when the sampler was made; 0 for a later thread */
    int64_t run_ns, wait_ns;           /* as last read */
} thread_stat;

struct gt_sched {
    int64_t pid;
    thread_stat *v;
    size_t n, cap;
    int64_t gone_run_ns, gone_wait_ns; /* threads whose tid a new thread took */
    int64_t n_samples;
};

/* Reads one "RUN WAIT SLICES" line; false when the thread is gone. */
static bool read_stat(int dir_fd, long long tid, int64_t *run_ns, int64_t *wait_ns)
{
    char path[48], buf[96];
    snprintf(path, sizeof path, "%lld/schedstat", tid);
    int fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    long long r, w;
    if (sscanf(buf, "%lld %lld", &r, &w) != 2 || r < 0 || w < 0)
        return false;
    *run_ns = r;
    *wait_ns = w;
    return true;
}

static thread_stat *find(gt_sched *s, int64_t tid, size_t *hint)
{
    /* procfs lists threads in the same order each time: the next one is usually the one */
    if (*hint < s->n && s->v[*hint].tid == tid)
        return &s->v[(*hint)++];
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].tid == tid) {
            *hint = i + 1;
            return &s->v[i];
        }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        thread_stat *nv = realloc(s->v, cap * sizeof *nv);
        if (!nv)
            return NULL;
        s->v = nv;
        s->cap = cap;
    }
    thread_stat *t = &s->v[s->n++];
    *t = (thread_stat){.tid = tid};
    *hint = s->n;
    return t;
}

static void sample(gt_sched *s, bool base)
{
    char path[48];
    snprintf(path, sizeof path, "/proc/%lld/task", (long long)s->pid);
    DIR *d = opendir(path);
    if (!d)
        return;
    bool found = false;
    size_t hint = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char *end;
        long long tid = strtoll(e->d_name, &end, 10);
        int64_t run_ns, wait_ns;
        if (*end || tid <= 0 || !read_stat(dirfd(d), tid, &run_ns, &wait_ns))
            continue;
        thread_stat *t = find(s, tid, &hint);
        if (!t)
            break; /* out of memory: the sums so far stand */
        if (run_ns < t->run_ns || wait_ns < t->wait_ns) { /* a new thread with an old tid */
            s->gone_run_ns += t->run_ns - t->base_run_ns;
            s->gone_wait_ns += t->wait_ns - t->base_wait_ns;
            *t = (thread_stat){.tid = tid};
        }
        if (base) {
            t->base_run_ns = run_ns;
            t->base_wait_ns = wait_ns;
        }
        t->run_ns = run_ns;
        t->wait_ns = wait_ns;
        found = true;
    }
    closedir(d);
    s->n_samples += found;
}

gt_sched *gt_sched_new(int64_t pid)
{
    gt_sched *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->pid = pid;
    if (pid > 0)
        sample(s, true);
    return s;
}

void gt_sched_sample(gt_sched *s)
{
    if (s && s->pid > 0)
        sample(s, false);
}

bool gt_sched_totals(const gt_sched *s, int64_t *run_ns, int64_t *wait_ns, int64_t *n_samples)
{
    if (!s || s->n_samples == 0)
        return false;
    int64_t r = s->gone_run_ns, w = s->gone_wait_ns;
    for (size_t i = 0; i < s->n; i++) {
        r += s->v[i].run_ns - s->v[i].base_run_ns;
        w += s->v[i].wait_ns - s->v[i].base_wait_ns;
    }
    *run_ns = r;
    *wait_ns = w;
    *n_samples = s->n_samples;
    return true;
}

void gt_sched_free(gt_sched *s)
{
    if (s) {
        free(s->v);
        free(s);
    }
}
