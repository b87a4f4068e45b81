/* collect.c: the launcher's collector: reads every traced process's rings
 * and writes what they hold into part files, with two threads.
 *
 * Traced processes connect to an abstract unix socket (GTRACE_SOCKET) and
 * send the descriptor of their region of rings (capture/shm.h). The reader
 * thread maps it and, every --flush-ms or when a process asks (a byte on
 * its connection: a ring is a quarter full), copies what every ring holds into a
 * chunk of its own memory and gives the room back at once, so a program's
 * burst is absorbed by the launcher's memory (up to MAX_QUEUED_BYTES) rather
 * than dropped while SQLite works. The writer thread, the only one that
 * touches SQLite, writes each chunk into that process image's part file
 * (PARTS_DIR/PID-N.sqlite), one transaction per chunk (drain.c turns
 * records into rows). When a connection closes (the process ended in any
 * way, or exec'd) the reader reads its rings one last time and hands over
 * its end: the writer writes the ranges never ended, the drop counts, and
 * closes the part. The mapping outlives the process, so nothing it
 * committed is lost. A part is made only for a process that recorded
 * something.
 *
 * When writing a part fails (a full disk, a file size limit), the collector
 * goes on reading that process's rings without writing, counts what it
 * could not write and records it in the loss table (losses.c). The
 * assembly (assemble.c) makes one trace of the parts at the end.
 *
 * Every tick the reader also reads each process's scheduler statistics
 * from /proc (schedstat.c); the writer puts their sums in the part's run
 * configuration when the process ends.
 *
 * The clock: the writer samples a (TSC, CLOCK_MONOTONIC) pair before each
 * chunk (every stamp in it was taken before), tsc_clock.c interpolates.
 *
 * It does not fork, run or wait for the program (run.c does).
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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "record_int.h"
#include "drain.h"
#include "flight.h"
#include "losses.h"
#include "schedstat.h"
#include "tsc_clock.h"

/* ---- processes ------------------------------------------------------------ */

typedef struct proc {          /* one process image: its connection, region and part */
    int sock;                  /* -1 once closed */
    int64_t pid;
    gt_shm_header *h;          /* NULL until its descriptor arrived */
    size_t map_bytes;
    uint32_t n_rings;          /* the region's layout as checked when it arrived: */
    uint64_t ring_bytes;       /* the process can write its header, so it is */
    uint64_t data_offset;      /* never read from there again */
    uint32_t *seen_gen;        /* (n_rings) generation last seen per ring */
    uint8_t *ring_state;       /* (n_rings) 0: unseen occupant, 1: announced, 2: broken */
    gt_writer *writer;
    gt_drain *drain;           /* also without a writer, once writing failed */
    bool part_tried;
    gt_flight_proc *flight;    /* under a flight recorder: its state there (the writer's) */
    uint64_t seen_dump_requests; /* the region's dump_requests as last read (the reader's) */
    int64_t dropped_total[GT_EV_N_KINDS];
    gt_sched *sched;           /* its threads' CPU time and runqueue waits (the reader's, then the writer's) */
    int64_t sched_next_ns;     /* when the reader reads them next */
    char part_name[64];
    char fail_reason[128];
} proc;

/* What the reader hands the writer: a copy of what one read found in a
 * process's rings (segments), or the end of a process, or the end of all. */
enum { CHUNK_DATA, CHUNK_END, CHUNK_STOP, CHUNK_DUMP };

typedef struct chunk {
    struct chunk *next;
    proc *p;
    int kind;                  /* CHUNK_* */
    int64_t read_ns;           /* CLOCK_MONOTONIC when the rings were read */
    const char *reason;        /* CHUNK_DUMP: why (a literal) */
    size_t n_bytes, cap_bytes;
    char *data;                /* segments */
} chunk;

/* The most the reader holds for the writer; beyond, rings are left to fill
 * (their producers drop and count) until the writer catches up. */
#define MAX_QUEUED_BYTES ((size_t)1 << 30)

struct gt_collector {
    int listen_fd;
    int stop_pipe[2];
    char socket_name[64];      /* "@gtrace-..." */
    char parts_dir[PATH_MAX];
    int flush_ms;
    pthread_t reader, writer;
    bool started;
    proc **procs;              /* the reader's */
    size_t n_procs, cap_procs;
    int part_seq;              /* the writer's */
    pthread_mutex_t lock;      /* the queue */
    pthread_cond_t nonempty;
    chunk *head, *tail;
    size_t queued_bytes;
    gt_launcher_window window; /* the reader's */
    int window_closed;         /* as last written to the gate file; -1: not yet */
    char gate_path[PATH_MAX + 16]; /* where processes read it as they start */
    gt_flight *flight;         /* --flight-recorder: chunks are kept there, not written */
    sig_atomic_t seen_dump_signals; /* the reader's */
};

volatile sig_atomic_t gt_record_n_toggles;
volatile sig_atomic_t gt_record_n_dump_signals;

void gt_collector_set_flight(gt_collector *c, gt_flight *f)
{
    c->flight = f;
}

/* A process starting reads the launcher's side of the gate here
 * (GTRACE_CAPTURE_GATE) before the launcher has seen its region. */
static void write_gate_file(gt_collector *c, bool closed)
{
    char tmp[PATH_MAX + 24];
    snprintf(tmp, sizeof tmp, "%s.tmp", c->gate_path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    bool ok = write(fd, closed ? "1" : "0", 1) == 1;
    close(fd);
    if (!ok || rename(tmp, c->gate_path) != 0)
        unlink(tmp);
}

static int apply_window(gt_collector *c, int wait_ms);

const char *gt_collector_set_window(gt_collector *c, const gt_launcher_window *w)
{
    c->window = *w;
    c->window_closed = -1;
    snprintf(c->gate_path, sizeof c->gate_path, "%s/window.gate", c->parts_dir);
    apply_window(c, 0);
    return c->gate_path;
}

/* The launcher's side of every region's gate, now; the time until it next
 * moves (or `wait_ms`). */
static int apply_window(gt_collector *c, int wait_ms)
{
    const gt_launcher_window *w = &c->window;
    if (!w->on)
        return wait_ms;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    bool closed = w->closed || now < w->open_ns || (w->close_ns && now >= w->close_ns);
    if (gt_record_n_toggles & 1)
        closed = !closed;
    if (c->window_closed != (int)closed) {
        write_gate_file(c, closed);
        c->window_closed = closed;
    }
    for (size_t i = 0; i < c->n_procs; i++)
        if (c->procs[i]->h)
            gt_gate_set(&c->procs[i]->h->gate, GT_GATE_LAUNCHER, closed);
    int64_t next = now < w->open_ns ? w->open_ns : (w->close_ns && now < w->close_ns) ? w->close_ns : 0;
    if (next && (next - now) / 1000000 + 1 < wait_ms)
        return (int)((next - now) / 1000000 + 1);
    return wait_ms;
}

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
    gt_sched_free(p->sched);
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
    if (p->pid > 0)
        p->sched = gt_sched_new(p->pid); /* from its start: its first tick could be a flush apart */
    c->procs[c->n_procs++] = p;
    return true;
}

/* Maps the region a process sent, if it is one. The memfd is sealed first
 * (no shrinking: a region cut short under the mapping would fault), and its
 * layout is checked once, on a copy. */
static void take_region(proc *p, int fd)
{
    struct stat st;
    if (p->h || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 || fstat(fd, &st) != 0
        || st.st_size < (off_t)sizeof(gt_shm_header)) {
        close(fd);
        return;
    }
    size_t bytes = (size_t)st.st_size;
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return;
    gt_shm_header *h = m;
    uint64_t magic = h->magic, header_bytes = h->header_bytes, ring_bytes = h->ring_bytes;
    uint64_t data_offset = h->data_offset;
    uint32_t n_rings = h->n_rings;
    size_t rings_end = sizeof *h + (size_t)n_rings * sizeof(gt_shm_ring);
    bool ok = magic == GT_SHM_MAGIC && header_bytes == sizeof *h && n_rings >= 1 && n_rings <= GT_SHM_MAX_RINGS
              && ring_bytes >= 4096 && ring_bytes <= (1ull << 32) && ring_bytes % 4096 == 0
              && data_offset >= rings_end && data_offset <= bytes && (bytes - data_offset) / ring_bytes >= n_rings;
    if (ok) {
        p->seen_gen = calloc(n_rings, sizeof *p->seen_gen);
        p->ring_state = calloc(n_rings, 1);
        ok = p->seen_gen && p->ring_state;
    }
    if (!ok) {
        munmap(m, bytes);
        return;
    }
    p->h = h;
    p->map_bytes = bytes;
    p->n_rings = n_rings;
    p->ring_bytes = ring_bytes;
    p->data_offset = data_offset;
    if (p->pid == 0) {
        p->pid = h->pid;
        p->sched = gt_sched_new(p->pid);
    }
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
        gt_record_say("gtrace: cannot write the trace (%s): %s; events of process %lld are counted, not recorded\n",
                path, gt_error_last(), (long long)p->pid);
        p->writer = NULL;
        stop_writing(p, gt_error_last());
        return;
    }
    rc = gt_drain_new(&p->drain, p->writer, p->pid, p->h);
    if (rc == 0)
        rc = gt_writer_begin(p->writer);
    if (rc == 0) {
        gt_drain_describe(p->writer, p->pid, p->h);
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

/* ---- the reader: rings to chunks ------------------------------------------ */

static bool chunk_room(chunk *k, size_t more)
{
    if (k->n_bytes + more <= k->cap_bytes)
        return true;
    size_t cap = k->cap_bytes ? k->cap_bytes : 4096;
    while (cap < k->n_bytes + more)
        cap *= 2;
    char *d = realloc(k->data, cap);
    if (!d)
        return false;
    k->data = d;
    k->cap_bytes = cap;
    return true;
}

static bool add_seg(chunk *k, uint32_t kind, int32_t tid, const void *a, size_t a_bytes, const void *b,
                    size_t b_bytes)
{
    size_t n = (a_bytes + b_bytes + 7) & ~(size_t)7;
    if (!chunk_room(k, sizeof(seg_hdr) + n))
        return false;
    seg_hdr h = {.kind = kind, .tid = tid, .n_bytes = n};
    memcpy(k->data + k->n_bytes, &h, sizeof h);
    char *d = k->data + k->n_bytes + sizeof h;
    if (a_bytes)
        memcpy(d, a, a_bytes);
    if (b_bytes)
        memcpy(d + a_bytes, b, b_bytes);
    memset(d + a_bytes + b_bytes, 0, n - a_bytes - b_bytes);
    k->n_bytes += sizeof h + n;
    return true;
}

/* Copies every record waiting in the process's rings into `k`, oldest first
 * per ring, and gives the room back at once; frees the rings of threads
 * that exited once read to the end. The records are not looked into here
 * (the writer checks them). */
static void copy_rings(proc *p, chunk *k)
{
    gt_shm_header *h = p->h;
    gt_shm_ring *rings = (gt_shm_ring *)((char *)h + sizeof *h);
    char *data = (char *)h + p->data_offset;
    uint64_t cap = p->ring_bytes;
    uint32_t n = atomic_load_explicit(&h->n_carved, memory_order_acquire);
    if (n > p->n_rings)
        n = p->n_rings;
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
        if (head - tail > cap || ((head | tail) & 7)) {
            p->ring_state[i] = 2; /* not what a producer writes: read no more of it */
            continue;
        }
        if (head != tail) {
            const char *base = data + (uint64_t)i * cap;
            uint64_t from = tail % cap, len = head - tail;
            uint64_t first = len <= cap - from ? len : cap - from;
            if (!add_seg(k, SEG_RECORDS, tid, base + from, first, base, len - first))
                continue; /* no memory: the records stay in the ring */
            atomic_store_explicit(&r->tail, head, memory_order_release);
        }
        /* After its first records, which may name it (nvtxNameOsThread). */
        if (p->ring_state[i] == 0) {
            char name[24] = "";
            memcpy(name, r->name, sizeof r->name);
            name[sizeof r->name] = '\0';
            if (!add_seg(k, SEG_THREAD, tid, name, sizeof name, NULL, 0))
                continue;
            p->ring_state[i] = 1;
        }
        if (state == GT_RING_DEAD) {
            /* freed only once read to its end (the head read after DEAD is
             * final) and its thread named: nothing of it is left behind */
            GT_ASSERT(p->ring_state[i] == 1);
            uint32_t expected = GT_RING_DEAD;
            atomic_compare_exchange_strong_explicit(&r->state, &expected, GT_RING_FREE, memory_order_release,
                                                    memory_order_relaxed);
        }
    }
    if (atomic_load_explicit(&h->n_lost_ends, memory_order_acquire) > 0) {
        for (size_t i = 0; i < GT_SHM_LOST_END_SLOTS; i++) {
            if (!atomic_load_explicit(&h->lost_ends[i], memory_order_relaxed) || !chunk_room(k, 64))
                continue;
            int64_t id = atomic_exchange_explicit(&h->lost_ends[i], 0, memory_order_acquire);
            if (id) {
                atomic_fetch_sub_explicit(&h->n_lost_ends, 1, memory_order_relaxed);
                add_seg(k, SEG_LOST_END, 0, &id, sizeof id, NULL, 0);
            }
        }
    }
}

static void enqueue(gt_collector *c, chunk *k)
{
    pthread_mutex_lock(&c->lock);
    k->next = NULL;
    if (c->tail)
        c->tail->next = k;
    else
        c->head = k;
    c->tail = k;
    c->queued_bytes += k->n_bytes;
    pthread_cond_signal(&c->nonempty);
    pthread_mutex_unlock(&c->lock);
}

static chunk *new_chunk(proc *p, int kind)
{
    chunk *k = calloc(1, sizeof *k);
    if (k) {
        k->p = p;
        k->kind = kind;
    }
    return k;
}

static void chunk_free(chunk *k)
{
    if (k) {
        free(k->data);
        free(k);
    }
}

/* One read of a process's rings, handed to the writer. The last read of a
 * process is made even beyond MAX_QUEUED_BYTES: its mapping goes with it,
 * and what its rings hold was committed and counted as emitted. */
static void read_proc(gt_collector *c, proc *p, bool last)
{
    if (!p->h)
        return;
    atomic_store_explicit(&p->h->wake_pending, 0, memory_order_relaxed);
    pthread_mutex_lock(&c->lock);
    bool full = c->queued_bytes > MAX_QUEUED_BYTES;
    pthread_mutex_unlock(&c->lock);
    if (full && !last)
        return;
    chunk *k = new_chunk(p, CHUNK_DATA);
    if (!k)
        return;
    k->read_ns = gt_clock_mono_now();
    copy_rings(p, k);
    if (k->n_bytes == 0)
        chunk_free(k);
    else
        enqueue(c, k);
}

/* Once a tick, and at its end, however often the process wakes the reader. */
static void read_sched(gt_collector *c, proc *p, bool last)
{
    int64_t now = gt_clock_mono_now();
    if (!p->sched || (!last && now < p->sched_next_ns))
        return;
    gt_sched_sample(p->sched);
    p->sched_next_ns = now + (int64_t)c->flush_ms * 1000000;
}

/* ---- the writer: chunks to parts ------------------------------------------- */

/* The scheduler's sums into the part's run configuration; none where /proc
 * had no schedstat. */
static int write_sched(proc *p)
{
    int64_t run_ns, wait_ns, n_samples;
    if (!gt_sched_totals(p->sched, &run_ns, &wait_ns, &n_samples))
        return 0;
    const char *keys[] = {GT_CONFIG_SCHED_RUN, GT_CONFIG_SCHED_WAIT, GT_CONFIG_SCHED_SAMPLES};
    int64_t values[] = {run_ns, wait_ns, n_samples};
    int rc = 0;
    for (size_t i = 0; i < 3 && rc == 0; i++) {
        char v[24];
        snprintf(v, sizeof v, "%lld", (long long)values[i]);
        rc = gt_writer_add_config(p->writer, gt_global_pid(p->pid), keys[i], v);
    }
    return rc;
}

/* One chunk (or the end of `p`: `k` NULL) into one transaction while writing
 * works, else only counted. At the end, also the ranges never ended, the
 * drop counts, and the part closed. */
static void write_chunk(gt_collector *c, proc *p, const chunk *k)
{
    bool last = k == NULL;
    if (!p->h)
        return; /* its region never came */
    if (!p->part_tried) {
        if (!has_events(p))
            return;
        open_part(c, p);
    }
    int rc = p->writer ? gt_writer_begin(p->writer) : 0;
    if (rc != 0)
        stop_writing(p, gt_error_last());
    gt_drain_batch_begin(p->drain);
    if (k)
        gt_drain_segments(p->drain, k->data, k->n_bytes);
    if (last) {
        gt_drain_finish(p->drain, gt_clock_mono_now() - p->h->t0_ns);
        gt_drain_region_dropped(p->h, p->n_rings, p->dropped_total);
        gt_drain_take_lost(p->drain, p->dropped_total); /* ranges whose end was dropped */
    }
    if (p->writer) {
        rc = gt_drain_error(p->drain);
        if (rc == 0 && last)
            for (int kk = 0; kk < GT_EV_N_KINDS && rc == 0; kk++)
                if (p->dropped_total[kk] > 0)
                    rc = gt_writer_add_dropped(p->writer, gt_global_pid(p->pid), (gt_event_kind)kk,
                                               p->dropped_total[kk]);
        if (rc == 0 && last)
            rc = write_sched(p);
        int rc2 = gt_writer_commit(p->writer);
        if (rc == 0)
            rc = rc2;
        gt_drain_batch_end(p->drain, rc == 0);
        if (rc != 0) {
            gt_record_say("gtrace: writing the trace failed (%s): the events of process %lld are counted from now "
                            "on, not recorded\n", gt_error_last(), (long long)p->pid);
            stop_writing(p, gt_error_last());
        }
    }
    if (!last)
        return;
    if (p->writer) {
        if (gt_writer_close(p->writer) != 0)
            gt_record_say("gtrace: finishing the trace of process %lld failed: %s\n", (long long)p->pid,
                    gt_error_last());
        p->writer = NULL;
    }
    if (p->fail_reason[0]) {
        /* The drop counts never reached the part: all of them go to the loss table. */
        int64_t lost[GT_EV_N_KINDS];
        memcpy(lost, p->dropped_total, sizeof lost);
        gt_drain_take_lost(p->drain, lost);
        gt_record_report_losses(c->parts_dir, p->pid, p->part_name, lost, p->fail_reason);
    }
}

/* Under a flight recorder: a chunk kept, a process's end noted, a dump
 * written (asked for, or an out-of-memory mark seen). */
static void keep_chunk(gt_collector *c, chunk *k)
{
    proc *p = k->p;
    if (k->kind == CHUNK_DUMP) {
        gt_flight_dump(c->flight, k->reason);
        return;
    }
    if (p->h && !p->flight && has_events(p))
        p->flight = gt_flight_proc_new(c->flight, p->pid, p->h, p->n_rings);
    if (k->kind == CHUNK_DATA) {
        if (p->flight) {
            bool oom = gt_flight_add(c->flight, p->flight, k->data, k->n_bytes, k->read_ns);
            k->data = NULL; /* the recorder's now */
            if (oom)
                gt_flight_dump(c->flight, "out of memory");
        }
        return;
    }
    if (p->flight)
        gt_flight_proc_end(c->flight, p->flight);
    proc_free(p);
}

/* The writer yields to the reader and to the traced program: what it has
 * not written yet waits in the queue (the rings are already free), while a
 * reader that runs late lets rings fill and a slowed program is what gtrace
 * must not cause. */
#define WRITER_NICE 5

static void *writer_main(void *arg)
{
    gt_collector *c = arg;
    errno = 0;
    int nice_now = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    if (errno == 0)
        setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), nice_now + WRITER_NICE);
    for (;;) {
        pthread_mutex_lock(&c->lock);
        while (!c->head)
            pthread_cond_wait(&c->nonempty, &c->lock);
        chunk *k = c->head;
        c->head = k->next;
        if (!c->head)
            c->tail = NULL;
        pthread_mutex_unlock(&c->lock);
        if (k->kind == CHUNK_STOP) {
            chunk_free(k);
            break;
        }
        /* A pair after every stamp of the chunk (they were written before it was copied). */
        gt_clock_sample();
        if (c->flight)
            keep_chunk(c, k);
        else if (k->kind == CHUNK_DATA)
            write_chunk(c, k->p, k);
        else {
            write_chunk(c, k->p, NULL);
            proc_free(k->p);
        }
        pthread_mutex_lock(&c->lock);
        c->queued_bytes -= k->n_bytes;
        pthread_mutex_unlock(&c->lock);
        chunk_free(k);
    }
    return NULL;
}

/* ---- the thread ------------------------------------------------------------ */

static void *reader_main(void *arg)
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
        int wait_ms = apply_window(c, c->flush_ms);
        if (fds)
            poll(fds, n_fds, wait_ms);
        else
            usleep(1000);
        char buf[16];
        if (read(c->stop_pipe[0], buf, sizeof buf) > 0)
            stopping = true;
        accept_all(c);
        for (size_t i = 0; i < c->n_procs; i++)
            if (c->procs[i]->sock >= 0)
                read_socket(c->procs[i]);
        apply_window(c, 0); /* regions that just arrived */
        /* Read every region; hand over the end of those whose process image
         * is gone (all, when stopping): the writer finishes and frees them. */
        size_t kept = 0;
        const char *dump = NULL;
        if (c->flight && gt_record_n_dump_signals != c->seen_dump_signals) {
            c->seen_dump_signals = gt_record_n_dump_signals;
            dump = "SIGUSR2";
        }
        for (size_t i = 0; i < c->n_procs; i++) {
            proc *p = c->procs[i];
            bool last = stopping || p->sock < 0;
            if (c->flight && p->h) {
                uint64_t asked = atomic_load_explicit(&p->h->dump_requests, memory_order_relaxed);
                if (asked != p->seen_dump_requests) {
                    p->seen_dump_requests = asked;
                    dump = "SIGUSR2";
                }
            }
            read_sched(c, p, last);
            read_proc(c, p, last);
            chunk *end = last ? new_chunk(p, CHUNK_END) : NULL;
            if (end) {
                enqueue(c, end);
            } else if (last) {
                proc_free(p); /* no memory to say so: its part stays unfinished */
            } else {
                c->procs[kept++] = p;
            }
        }
        c->n_procs = kept;
        chunk *dk = dump && !stopping ? new_chunk(NULL, CHUNK_DUMP) : NULL;
        if (dk) { /* after what was read now: the dump holds it */
            dk->reason = dump;
            enqueue(c, dk);
        }
    }
    free(fds);
    chunk *stop = new_chunk(NULL, CHUNK_STOP);
    while (!stop) { /* the writer must hear it */
        usleep(1000);
        stop = new_chunk(NULL, CHUNK_STOP);
    }
    enqueue(c, stop);
    return NULL;
}

int gt_collector_new(gt_collector **out, const char *parts_dir, int flush_ms)
{
    gt_collector *c = calloc(1, sizeof *c);
    if (!c)
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    c->stop_pipe[0] = c->stop_pipe[1] = -1;
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->nonempty, NULL);
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
    gt_clock_sample(); /* the first pair, before any process stamps */
    *out = c;
    return 0;
}

const char *gt_collector_socket(const gt_collector *c)
{
    return c->socket_name;
}

int gt_collector_start(gt_collector *c)
{
    int rc = pthread_create(&c->writer, NULL, writer_main, c);
    if (rc != 0)
        return gt_error_set(GT_ERR_IO, "cannot start the collector's writer: %s", strerror(rc));
    rc = pthread_create(&c->reader, NULL, reader_main, c);
    if (rc != 0) {
        enqueue(c, new_chunk(NULL, CHUNK_STOP));
        pthread_join(c->writer, NULL);
        return gt_error_set(GT_ERR_IO, "cannot start the collector's reader: %s", strerror(rc));
    }
    c->started = true;
    return 0;
}

void gt_collector_finish(gt_collector *c)
{
    if (!c || !c->started)
        return;
    ssize_t n = write(c->stop_pipe[1], "s", 1);
    (void)n;
    pthread_join(c->reader, NULL); /* which says stop to the writer last */
    pthread_join(c->writer, NULL);
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
    if (c->gate_path[0])
        unlink(c->gate_path);
    if (c->listen_fd >= 0)
        close(c->listen_fd);
    if (c->stop_pipe[0] >= 0)
        close(c->stop_pipe[0]);
    if (c->stop_pipe[1] >= 0)
        close(c->stop_pipe[1]);
    for (chunk *k = c->head; k;) {
        chunk *next = k->next;
        chunk_free(k);
        k = next;
    }
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->nonempty);
    free(c);
}
