/* collect.c: the launcher's collector: the one thread that reads every
 * traced process's rings and writes what they hold into part files.
 *
 * Traced processes connect to an abstract unix socket (GTRACE_SOCKET) and
 * send the descriptor of their region of rings (capture/shm.h). The
 * collector maps it and, every --flush-ms or when a process asks (a byte on
 * its connection: a ring is half full), reads every ring of every process
 * and writes the records into that process image's part file
 * (PARTS_DIR/PID-N.sqlite), one transaction per read (drain.c turns records
 * into rows). When a connection closes (the process ended in any way, or
 * exec'd) the collector reads its rings one last time, writes the ranges
 * never ended, the drop counts, and closes the part; the mapping outlives
 * the process, so nothing it committed is lost. A part is made only for a
 * process that recorded something.
 *
 * When writing a part fails (a full disk, a file size limit), the collector
 * goes on reading that process's rings without writing, counts what it
 * could not write and records it in the loss table (losses.c). The
 * assembly (assemble.c) makes one trace of the parts at the end.
 *
 * The clock: TSC stamps are put on CLOCK_MONOTONIC by interpolating between
 * (TSC, CLOCK_MONOTONIC) pairs this thread samples before each read.
 *
 * It does not fork, run or wait for the program (record.c does).
 */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "cli.h"
#include "drain.h"
#include "losses.h"

/* ---- the clock ---------------------------------------------------------- */

typedef struct sample {
    uint64_t tsc;
    int64_t mono_ns;
} sample;

#define MAX_SAMPLES (1u << 20)
#define MIN_SAMPLE_GAP_NS 100000 /* closer samples add only noise */
static sample *samples;
static size_t n_samples, cap_samples;

int64_t gt_clock_mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t read_tsc(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return 0;
#endif
}

/* One pair read as close together as we can: the TSC halfway between two
 * reads around clock_gettime, best of three. */
static sample take_sample(void)
{
    sample best = {0, 0};
    uint64_t best_gap = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        uint64_t a = read_tsc();
        int64_t m = gt_clock_mono_now();
        uint64_t b = read_tsc();
        if (b - a < best_gap) {
            best_gap = b - a;
            best.tsc = a + (b - a) / 2;
            best.mono_ns = m;
        }
    }
    return best;
}

static void clock_sample(void)
{
    sample s = take_sample();
    if (n_samples > 0 && s.mono_ns - samples[n_samples - 1].mono_ns < MIN_SAMPLE_GAP_NS)
        return;
    if (n_samples == cap_samples) {
        if (cap_samples >= MAX_SAMPLES)
            return; /* beyond: extrapolate from the last pair */
        size_t cap = cap_samples ? cap_samples * 2 : 256;
        sample *v = realloc(samples, cap * sizeof *v);
        if (!v)
            return;
        samples = v;
        cap_samples = cap;
    }
    samples[n_samples++] = s;
}

int64_t gt_clock_tsc_to_mono(uint64_t stamp)
{
    /* A second sample, if there is none yet: wait out the gap (once). */
    for (long spin = 0; n_samples < 2; spin++) {
        if (spin > 10000000)
            return gt_clock_mono_now(); /* no memory for a second sample: the best we can say */
        clock_sample();
    }
    size_t lo = 0, hi = n_samples - 1;
    if (stamp >= samples[hi].tsc) {
        lo = hi - 1;
    } else if (stamp > samples[0].tsc) {
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            if (samples[mid].tsc <= stamp)
                lo = mid;
            else
                hi = mid;
        }
    }
    const sample *a = &samples[lo], *b = &samples[lo + 1];
    double rate = (double)(b->mono_ns - a->mono_ns) / (double)(b->tsc - a->tsc);
    return a->mono_ns + (int64_t)(((double)(int64_t)(stamp - a->tsc)) * rate);
}

/* ---- processes ------------------------------------------------------------ */

typedef struct proc {          /* one process image: its connection, region and part */
    int sock;                  /* -1 once closed */
    int64_t pid;
    gt_shm_header *h;          /* NULL until its descriptor arrived */
    size_t map_bytes;
    uint32_t *seen_gen;        /* (n_rings) generation last seen per ring */
    uint8_t *ring_state;       /* (n_rings) 0: unseen occupant, 1: announced, 2: broken */
    gt_writer *writer;
    gt_drain *drain;           /* also without a writer, once writing failed */
    bool part_tried;
    int64_t dropped_total[GT_EV_N_KINDS];
    char part_name[64];
    char fail_reason[128];
} proc;

struct gt_collector {
    int listen_fd;
    int stop_pipe[2];
    char socket_name[64];      /* "@gtrace-..." */
    char parts_dir[PATH_MAX];
    int flush_ms;
    pthread_t thread;
    bool started;
    proc **procs;
    size_t n_procs, cap_procs;
    int part_seq;
};

static void proc_free(proc *p)
{
    if (!p)
        return;
    if (p->sock >= 0)
        close(p->sock);
    if (p->h)
        munmap(p->h, p->map_bytes);
    free(p->seen_gen);
    free(p->ring_state);
    gt_drain_free(p->drain);
    free(p);
}

static bool add_proc(gt_collector *c, int sock)
{
    if (c->n_procs == c->cap_procs) {
        size_t cap = c->cap_procs ? c->cap_procs * 2 : 16;
        proc **v = realloc(c->procs, cap * sizeof *v);
        if (!v)
            return false;
        c->procs = v;
        c->cap_procs = cap;
    }
    proc *p = calloc(1, sizeof *p);
    if (!p)
        return false;
    p->sock = sock;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
        p->pid = cred.pid;
    c->procs[c->n_procs++] = p;
    return true;
}

/* Maps the region a process sent, if it is one. */
static void take_region(proc *p, int fd)
{
    struct stat st;
    if (p->h || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(gt_shm_header)) {
        close(fd);
        return;
    }
    size_t bytes = (size_t)st.st_size;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return;
    gt_shm_header *h = m;
    size_t rings_end = sizeof *h + (size_t)h->n_rings * sizeof(gt_shm_ring);
    bool ok = h->magic == GT_SHM_MAGIC && h->header_bytes == sizeof *h && h->n_rings >= 1
              && h->n_rings <= GT_SHM_MAX_RINGS && h->ring_bytes >= 4096 && h->ring_bytes <= (1ull << 32)
              && (h->ring_bytes & (h->ring_bytes - 1)) == 0 && h->data_offset >= rings_end
              && h->data_offset <= bytes && (bytes - h->data_offset) / h->ring_bytes >= h->n_rings
              && h->info_bytes <= GT_SHM_INFO_BYTES;
    if (ok) {
        p->seen_gen = calloc(h->n_rings, sizeof *p->seen_gen);
        p->ring_state = calloc(h->n_rings, 1);
        ok = p->seen_gen && p->ring_state;
    }
    if (!ok) {
        munmap(m, bytes);
        return;
    }
    p->h = h;
    p->map_bytes = bytes;
    if (p->pid == 0)
        p->pid = h->pid;
}

/* Reads what the connection holds: the region's descriptor, wake-ups, or
 * its end (the socket is then closed). */
static void read_socket(proc *p)
{
    for (;;) {
        char buf[64];
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof buf};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
        ssize_t n = recvmsg(p->sock, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm; cm = CMSG_NXTHDR(&msg, cm)) {
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                int nfd = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                for (int i = 0; i < nfd; i++) {
                    int fd;
                    memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
                    take_region(p, fd);
                }
            }
        }
        if (n <= 0) { /* 0: the process image is gone; < 0: a broken connection */
            close(p->sock);
            p->sock = -1;
            return;
        }
    }
}

static void accept_all(gt_collector *c)
{
    for (;;) {
        int fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return;
        }
        if (!add_proc(c, fd)) {
            close(fd);
            continue;
        }
        read_socket(c->procs[c->n_procs - 1]);
    }
}

/* ---- parts -------------------------------------------------------------------- */

static void stop_writing(proc *p, const char *what)
{
    if (!p->fail_reason[0])
        snprintf(p->fail_reason, sizeof p->fail_reason, "%s", what);
    if (p->writer) {
        gt_writer_free(p->writer);
        p->writer = NULL;
    }
    if (p->drain)
        gt_drain_discard(p->drain);
    else if (gt_drain_new(&p->drain, NULL, p->pid, p->h) == 0)
        gt_drain_discard(p->drain);
}

static void write_config(proc *p, int64_t gpid, const char *key, const char *value)
{
    gt_writer_add_config(p->writer, gpid, key, value);
    if (p->h->is_root)
        gt_writer_add_config(p->writer, 0, key, value);
}

/* The process's description (its region's `info`): name, then key/value pairs. */
static void describe_process(proc *p)
{
    const char *cur = p->h->info, *end = p->h->info + p->h->info_bytes;
    int64_t gpid = gt_global_pid(p->pid);
    const char *comm = memchr(cur, '\0', (size_t)(end - cur)) ? cur : "";
    gt_writer_add_process(p->writer, p->pid, comm);
    gt_writer_set_session_start(p->writer, p->h->utc_t0_ns);
    if (*comm || cur < end)
        cur += strlen(comm) + 1;
    while (cur < end) {
        const char *key = cur;
        const char *kend = memchr(key, '\0', (size_t)(end - key));
        if (!kend || kend + 1 >= end)
            break;
        const char *value = kend + 1;
        const char *vend = memchr(value, '\0', (size_t)(end - value));
        if (!vend)
            break;
        write_config(p, gpid, key, value);
        cur = vend + 1;
    }
}

static void open_part(gt_collector *c, proc *p)
{
    char path[PATH_MAX + 64];
    p->part_tried = true;
    int rc = GT_ERR_EXISTS;
    for (int k = 0; k < 1000 && rc == GT_ERR_EXISTS; k++) {
        snprintf(p->part_name, sizeof p->part_name, "%lld-%04d.sqlite", (long long)p->pid, c->part_seq++);
        snprintf(path, sizeof path, "%s/%s", c->parts_dir, p->part_name);
        rc = gt_writer_open(&p->writer, path, 0);
    }
    if (rc != 0) {
        fprintf(stderr, "gtrace: cannot write the trace (%s): %s; events of process %lld are counted, not recorded\n",
                path, gt_error_last(), (long long)p->pid);
        p->writer = NULL;
        stop_writing(p, gt_error_last());
        return;
    }
    rc = gt_drain_new(&p->drain, p->writer, p->pid, p->h);
    if (rc == 0)
        rc = gt_writer_begin(p->writer);
    if (rc == 0) {
        describe_process(p);
        rc = gt_writer_commit(p->writer);
    }
    if (rc != 0)
        stop_writing(p, gt_error_last());
}

/* Whether the process recorded (or tried to record) anything. */
static bool has_events(const proc *p)
{
    const gt_shm_header *h = p->h;
    if (atomic_load_explicit(&h->n_carved, memory_order_acquire) > 0)
        return true;
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        if (atomic_load_explicit(&h->orphan_dropped[k], memory_order_relaxed) > 0)
            return true;
    return false;
}

/* Every record waiting in the process's rings, oldest first per ring;
 * frees the rings of threads that exited once read to the end. */
static void drain_rings(proc *p)
{
    gt_shm_header *h = p->h;
    gt_shm_ring *rings = (gt_shm_ring *)((char *)h + h->header_bytes);
    char *data = (char *)h + h->data_offset;
    uint64_t cap = h->ring_bytes;
    uint32_t n = atomic_load_explicit(&h->n_carved, memory_order_acquire);
    if (n > h->n_rings)
        n = h->n_rings;
    for (uint32_t i = 0; i < n; i++) {
        gt_shm_ring *r = &rings[i];
        if (p->ring_state[i] == 2)
            continue;
        /* Read `state` before `head`: once DEAD, the head read after it is final. */
        uint32_t state = atomic_load_explicit(&r->state, memory_order_acquire);
        if (state != GT_RING_LIVE && state != GT_RING_DEAD)
            continue;
        uint32_t gen = atomic_load_explicit(&r->generation, memory_order_relaxed);
        if (gen != p->seen_gen[i]) {
            p->seen_gen[i] = gen;
            p->ring_state[i] = 0;
        }
        int32_t tid = r->tid;
        uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
        if (head - tail > cap) {
            p->ring_state[i] = 2; /* not what a producer writes: read no more of it */
            continue;
        }
        const char *base = data + (uint64_t)i * cap;
        while (tail < head) {
            uint64_t off = tail & (cap - 1);
            const rec_hdr *rec = (const rec_hdr *)(base + off);
            uint32_t size = rec->size_bytes;
            if (size < sizeof(rec_hdr) || (size & 7) || size > cap - off || size > head - tail) {
                p->ring_state[i] = 2;
                break;
            }
            if (rec->type != REC_PAD)
                gt_drain_record(p->drain, tid, rec);
            tail += size;
        }
        if (p->ring_state[i] == 2)
            continue;
        atomic_store_explicit(&r->tail, tail, memory_order_release);
        /* After its first records, which may name it (nvtxNameOsThread). */
        if (p->ring_state[i] == 0) {
            char name[sizeof r->name + 1];
            memcpy(name, r->name, sizeof r->name);
            name[sizeof r->name] = '\0';
            gt_drain_thread(p->drain, tid, name);
            p->ring_state[i] = 1;
        }
        if (state == GT_RING_DEAD && tail == head) {
            uint32_t expected = GT_RING_DEAD;
            atomic_compare_exchange_strong_explicit(&r->state, &expected, GT_RING_FREE, memory_order_release,
                                                    memory_order_relaxed);
        }
    }
    if (atomic_load_explicit(&h->n_lost_ends, memory_order_acquire) > 0) {
        for (size_t i = 0; i < GT_SHM_LOST_END_SLOTS; i++) {
            int64_t id = atomic_exchange_explicit(&h->lost_ends[i], 0, memory_order_acquire);
            if (id) {
                atomic_fetch_sub_explicit(&h->n_lost_ends, 1, memory_order_relaxed);
                gt_drain_range_lost(p->drain, id);
            }
        }
    }
}

/* Drop counts of every ring and of threads without one (they only grow). */
static void total_dropped(const proc *p, int64_t *out)
{
    const gt_shm_header *h = p->h;
    const gt_shm_ring *rings = (const gt_shm_ring *)((const char *)h + h->header_bytes);
    uint32_t n = atomic_load_explicit(&h->n_carved, memory_order_acquire);
    if (n > h->n_rings)
        n = h->n_rings;
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        int64_t v = atomic_load_explicit(&h->orphan_dropped[k], memory_order_relaxed);
        for (uint32_t i = 0; i < n; i++)
            v += atomic_load_explicit(&rings[i].dropped[k], memory_order_relaxed);
        out[k] += v > 0 ? v : 0;
    }
}

/* One read of every ring of `p`: into one transaction while writing works,
 * else only counted. With `last`, also the ranges never ended, the drop
 * counts, and the part closed. */
static void drain_proc(gt_collector *c, proc *p, bool last)
{
    if (!p->h)
        return;
    atomic_store_explicit(&p->h->wake_pending, 0, memory_order_relaxed);
    if (!p->part_tried) {
        if (!has_events(p))
            return;
        open_part(c, p);
    }
    int rc = p->writer ? gt_writer_begin(p->writer) : 0;
    if (rc != 0)
        stop_writing(p, gt_error_last());
    gt_drain_batch_begin(p->drain);
    drain_rings(p);
    if (last) {
        gt_drain_finish(p->drain, gt_clock_mono_now() - p->h->t0_ns);
        total_dropped(p, p->dropped_total);
        gt_drain_take_lost(p->drain, p->dropped_total); /* ranges whose end was dropped */
    }
    if (p->writer) {
        rc = gt_drain_error(p->drain);
        if (rc == 0 && last)
            for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++)
                if (p->dropped_total[k] > 0)
                    rc = gt_writer_add_dropped(p->writer, gt_global_pid(p->pid), (gt_event_kind)k, p->dropped_total[k]);
        int rc2 = gt_writer_commit(p->writer);
        if (rc == 0)
            rc = rc2;
        gt_drain_batch_end(p->drain, rc == 0);
        if (rc != 0) {
            fprintf(stderr, "gtrace: writing the trace failed (%s): the events of process %lld are counted from now "
                            "on, not recorded\n", gt_error_last(), (long long)p->pid);
            stop_writing(p, gt_error_last());
        }
    }
    if (!last)
        return;
    if (p->writer) {
        if (gt_writer_close(p->writer) != 0)
            fprintf(stderr, "gtrace: finishing the trace of process %lld failed: %s\n", (long long)p->pid,
                    gt_error_last());
        p->writer = NULL;
    }
    if (p->fail_reason[0]) {
        /* The drop counts never reached the part: all of them go to the loss table. */
        int64_t lost[GT_EV_N_KINDS];
        memcpy(lost, p->dropped_total, sizeof lost);
        gt_drain_take_lost(p->drain, lost);
        gt_cli_report_losses(c->parts_dir, p->pid, p->part_name, lost, p->fail_reason);
    }
}

/* ---- the thread ------------------------------------------------------------ */

static void *collector_main(void *arg)
{
    gt_collector *c = arg;
    struct pollfd *fds = NULL;
    size_t cap_fds = 0;
    for (bool stopping = false; !stopping;) {
        if (cap_fds < c->n_procs + 2) {
            size_t cap = (c->n_procs + 2) * 2;
            struct pollfd *v = realloc(fds, cap * sizeof *v);
            if (v) {
                fds = v;
                cap_fds = cap;
            }
        }
        size_t n_fds = 0;
        if (fds) {
            fds[n_fds++] = (struct pollfd){.fd = c->listen_fd, .events = POLLIN};
            fds[n_fds++] = (struct pollfd){.fd = c->stop_pipe[0], .events = POLLIN};
            for (size_t i = 0; i < c->n_procs && n_fds < cap_fds; i++)
                if (c->procs[i]->sock >= 0)
                    fds[n_fds++] = (struct pollfd){.fd = c->procs[i]->sock, .events = POLLIN};
        }
        if (fds)
            poll(fds, n_fds, c->flush_ms);
        else
            usleep(1000);
        char buf[16];
        if (read(c->stop_pipe[0], buf, sizeof buf) > 0)
            stopping = true;
        accept_all(c);
        for (size_t i = 0; i < c->n_procs; i++)
            if (c->procs[i]->sock >= 0)
                read_socket(c->procs[i]);
        clock_sample();
        /* Read every region; finish those whose process image is gone (all, when stopping). */
        size_t kept = 0;
        for (size_t i = 0; i < c->n_procs; i++) {
            proc *p = c->procs[i];
            bool last = stopping || p->sock < 0;
            drain_proc(c, p, last);
            if (last)
                proc_free(p);
            else
                c->procs[kept++] = p;
        }
        c->n_procs = kept;
    }
    free(fds);
    return NULL;
}

int gt_collector_new(gt_collector **out, const char *parts_dir, int flush_ms)
{
    gt_collector *c = calloc(1, sizeof *c);
    if (!c)
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    c->stop_pipe[0] = c->stop_pipe[1] = -1;
    snprintf(c->parts_dir, sizeof c->parts_dir, "%s", parts_dir);
    c->flush_ms = flush_ms;
    c->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c->listen_fd < 0) {
        int rc = gt_error_set(GT_ERR_IO, "cannot make the launcher's socket: %s", strerror(errno));
        free(c);
        return rc;
    }
    /* An abstract name: nothing on disk to remove, gone with the launcher. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(c->socket_name, sizeof c->socket_name, "@gtrace-%d-%lx", (int)getpid(),
             (unsigned long)(ts.tv_nsec ^ (ts.tv_sec << 20)));
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    size_t len = strlen(c->socket_name);
    memcpy(addr.sun_path, c->socket_name, len);
    addr.sun_path[0] = '\0';
    if (bind(c->listen_fd, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) != 0
        || listen(c->listen_fd, 4096) != 0 || pipe2(c->stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        int rc = gt_error_set(GT_ERR_IO, "cannot listen on the launcher's socket: %s", strerror(errno));
        gt_collector_free(c);
        return rc;
    }
    clock_sample(); /* the first pair, before any process stamps */
    *out = c;
    return 0;
}

const char *gt_collector_socket(const gt_collector *c)
{
    return c->socket_name;
}

int gt_collector_start(gt_collector *c)
{
    int rc = pthread_create(&c->thread, NULL, collector_main, c);
    if (rc != 0)
        return gt_error_set(GT_ERR_IO, "cannot start the collector thread: %s", strerror(rc));
    c->started = true;
    return 0;
}

void gt_collector_finish(gt_collector *c)
{
    if (!c || !c->started)
        return;
    ssize_t n = write(c->stop_pipe[1], "s", 1);
    (void)n;
    pthread_join(c->thread, NULL);
    c->started = false;
}

void gt_collector_free(gt_collector *c)
{
    if (!c)
        return;
    gt_collector_finish(c);
    for (size_t i = 0; i < c->n_procs; i++)
        proc_free(c->procs[i]);
    free(c->procs);
    if (c->listen_fd >= 0)
        close(c->listen_fd);
    if (c->stop_pipe[0] >= 0)
        close(c->stop_pipe[0]);
    if (c->stop_pipe[1] >= 0)
        close(c->stop_pipe[1]);
    free(c);
}
