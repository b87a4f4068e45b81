/* assemble.c: one trace out of the part files the traced processes wrote.
 *
 * Every traced process writes its own part (libtrace/capture): PID-N.sqlite
 * in the run's parts directory. One cleanly finished part is renamed into
 * place. Several parts, or a part whose writer was killed (it still has its
 * -wal file), are copied event by event through the store's reader and
 * writer into a fresh trace: strings are interned again, callchain ids are
 * made unique per part, and duplicate descriptions (a process that exec'd
 * wrote two parts) are written once. GTRACE_RUN_CONFIG: the run's own
 * entries (command line, options, root pid) are written here; each process's
 * (and the root's copy under pid 0 of its environment) come from the first
 * part that has them, so an exec'd image does not repeat them.
 *
 * Drop counts: each part's own, except for a part whose process could not
 * write it (full disk, file size limit): its account is in the loss table
 * (losses.h), which also speaks for parts that were never created.
 *
 * The output: a trace is assembled in the parts directory (beside the
 * output, on the same file system) and renamed into place only once it is
 * complete. Only a regular file is ever replaced (with `force`), never a
 * device, a directory, a link or anything else; without `force` nothing
 * is replaced, even a file that appeared while the program ran.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "losses.h"

_Static_assert(GT_EV_N_KINDS <= GT_LOSS_KINDS, "the loss table has a count for every kind");

#define ROWS_PER_BATCH 50000
#define ASSEMBLED_NAME "assembled.tmp" /* in the parts directory; not a part (*.sqlite) */

volatile sig_atomic_t gt_cli_stop_signal;

static int interrupted(void)
{
    return gt_error_set(GT_ERR_IO, "interrupted by signal %d while assembling the trace", (int)gt_cli_stop_signal);
}

typedef struct id_set {       /* a small growing set of int64 */
    int64_t *v;
    size_t n, cap;
} id_set;

static bool set_has(const id_set *s, int64_t x)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == x)
            return true;
    return false;
}

static int set_add(id_set *s, int64_t x)
{
    if (set_has(s, x))
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        int64_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return gt_error_set(GT_ERR_NOMEM, "out of memory assembling the trace");
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = x;
    return 0;
}

typedef struct dropped_row {
    int64_t global_pid;
    int64_t n[GT_EV_N_KINDS];
} dropped_row;

typedef struct assembly {
    gt_writer *w;
    gt_loss_table *losses;  /* NULL: none */
    bool *slot_used;        /* (GT_LOSS_SLOTS) */
    int64_t n_rows_in_batch;
    id_set pids, gpus;
    id_set config_pids; /* global pids whose configuration was copied */
    dropped_row *dropped;
    size_t n_dropped;
} assembly;

static char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The part files (*.sqlite) of a directory, sorted; NULL-terminated. */
static char **list_parts(const char *dir, size_t *out_n)
{
    DIR *d = opendir(dir);
    *out_n = 0;
    if (!d)
        return NULL;
    size_t n = 0, cap = 16;
    char **v = malloc(cap * sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        if (!ends_with(e->d_name, ".sqlite"))
            continue;
        if (n + 1 >= cap) {
            char **b = realloc(v, (cap *= 2) * sizeof *v);
            if (!b)
                break;
            v = b;
        }
        v[n++] = path_join(dir, e->d_name);
    }
    closedir(d);
    if (v) {
        qsort(v, n, sizeof *v, cmp_str);
        v[n] = NULL;
    }
    *out_n = n;
    return v;
}

static void remove_part(const char *path)
{
    char side[4200];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-journal", path);
    unlink(side);
}

static bool has_wal(const char *path)
{
    char side[4200];
    struct stat st;
    snprintf(side, sizeof side, "%s-wal", path);
    return stat(side, &st) == 0;
}

static int add_row(assembly *a, const gt_event *ev)
{
    if (gt_cli_stop_signal)
        return interrupted();
    int rc = gt_writer_add(a->w, ev);
    if (rc == 0 && ++a->n_rows_in_batch >= ROWS_PER_BATCH) {
        rc = gt_writer_commit(a->w);
        if (rc == 0)
            rc = gt_writer_begin(a->w);
        a->n_rows_in_batch = 0;
    }
    return rc;
}

static int remap(gt_writer *w, gt_trace *t, gt_string_id *id)
{
    if (*id == 0)
        return 0;
    return gt_writer_intern(w, gt_trace_string(t, *id), id);
}

static int64_t new_callchain_id(int part_no, int64_t id)
{
    return id ? ((int64_t)(part_no + 1) << 40) | id : 0;
}

static int copy_events(assembly *a, gt_trace *t, int part_no, id_set *callchains)
{
    int rc = 0;
    for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++) {
        gt_iter *it = NULL;
        rc = gt_iter_new(&it, t, (gt_event_kind)k, INT64_MIN, INT64_MAX);
        if (rc != 0)
            break;
        gt_event ev;
        int more;
        while (rc == 0 && (more = gt_iter_next(it, &ev)) == 1) {
            int64_t *chain = NULL;
            switch (ev.kind) {
            case GT_EV_KERNEL:
                rc = remap(a->w, t, &ev.u.kernel.demangled_name);
                if (rc == 0)
                    rc = remap(a->w, t, &ev.u.kernel.short_name);
                if (rc == 0)
                    rc = remap(a->w, t, &ev.u.kernel.mangled_name);
                break;
            case GT_EV_API: rc = remap(a->w, t, &ev.u.api.name); chain = &ev.u.api.callchain_id; break;
            case GT_EV_NVTX: rc = remap(a->w, t, &ev.u.nvtx.text); break;
            case GT_EV_GPU_MEMORY: chain = &ev.u.gpu_memory.callchain_id; break;
            case GT_EV_HEAP: rc = remap(a->w, t, &ev.u.heap.name); chain = &ev.u.heap.callchain_id; break;
            case GT_EV_CPU_OP: rc = remap(a->w, t, &ev.u.cpu_op.name); break;
            default: break;
            }
            if (rc == 0 && chain && *chain) {
                rc = set_add(callchains, *chain);
                *chain = new_callchain_id(part_no, *chain);
            }
            if (rc == 0)
                rc = add_row(a, &ev);
        }
        if (rc == 0 && more < 0)
            rc = more;
        gt_iter_free(it);
    }
    for (size_t i = 0; rc == 0 && i < callchains->n; i++) {
        const gt_frame *frames;
        size_t n;
        if (gt_trace_callchain(t, callchains->v[i], &frames, &n) != 0)
            continue; /* referenced but never written (the process was killed first) */
        gt_frame copy[128];
        if (n > 128)
            n = 128;
        for (size_t f = 0; f < n && rc == 0; f++) {
            copy[f] = frames[f];
            rc = remap(a->w, t, &copy[f].symbol);
            if (rc == 0)
                rc = remap(a->w, t, &copy[f].module);
        }
        if (rc == 0)
            rc = gt_writer_add_callchain(a->w, new_callchain_id(part_no, callchains->v[i]), copy, n);
    }
    return rc;
}

/* One part's configuration rows: global pids met in an earlier part are
 * skipped (their first image's rows stand), as are the run's own keys. */
typedef struct config_copy {
    assembly *a;
    id_set seen_here;
} config_copy;

static int copy_config_row(void *ctx, int64_t gpid, const char *key, const char *value)
{
    config_copy *c = ctx;
    if (set_has(&c->a->config_pids, gpid))
        return 0;
    if (gpid == 0 && (!strcmp(key, "command_line") || !strcmp(key, "gtrace_options") || !strcmp(key, "root_pid")))
        return 0;
    int rc = set_has(&c->seen_here, gpid) ? 0 : set_add(&c->seen_here, gpid);
    return rc != 0 ? rc : gt_writer_add_config(c->a->w, gpid, key, value);
}

static int copy_config(assembly *a, gt_trace *t)
{
    config_copy c = {a, {0}};
    int rc = gt_trace_each_config(t, copy_config_row, &c);
    for (size_t i = 0; i < c.seen_here.n && rc == 0; i++)
        rc = set_add(&a->config_pids, c.seen_here.v[i]);
    free(c.seen_here.v);
    return rc;
}

/* Drops of one process (across its exec'd images) become one row. */
static int add_dropped(assembly *a, int64_t gpid, const int64_t *n)
{
    dropped_row *row = NULL;
    for (size_t i = 0; i < a->n_dropped; i++)
        if (a->dropped[i].global_pid == gpid)
            row = &a->dropped[i];
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        if (n[k] <= 0)
            continue;
        if (!row) {
            dropped_row *v = realloc(a->dropped, (a->n_dropped + 1) * sizeof *v);
            if (!v)
                return gt_error_set(GT_ERR_NOMEM, "out of memory assembling the trace");
            a->dropped = v;
            row = &a->dropped[a->n_dropped++];
            memset(row, 0, sizeof *row);
            row->global_pid = gpid;
        }
        row->n[k] += n[k];
    }
    return 0;
}

/* The loss table's account of a part (by its file name), marked used. */
static const gt_loss_slot *find_slot(assembly *a, const char *part_path)
{
    if (!a->losses)
        return NULL;
    const char *slash = strrchr(part_path, '/');
    const char *name = slash ? slash + 1 : part_path;
    for (int i = 0; i < GT_LOSS_SLOTS; i++) {
        const gt_loss_slot *s = &a->losses->slots[i];
        if (s->pid && s->complete && !a->slot_used[i] && !strncmp(s->part, name, sizeof s->part)) {
            a->slot_used[i] = true;
            return s;
        }
    }
    return NULL;
}

static int copy_part(assembly *a, const char *path, int part_no)
{
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, path, 0);
    if (rc != 0) {
        /* A process killed before its first commit leaves an empty file: say so, go on. */
        fprintf(stderr, "gtrace: skipping an unreadable part of the trace: %s\n", gt_error_last());
        return 0;
    }
    size_t n;
    const gt_process *procs = gt_trace_processes(t, &n);
    int64_t part_gpid = n ? procs[0].global_pid : 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (set_has(&a->pids, procs[i].pid))
            continue;
        rc = set_add(&a->pids, procs[i].pid);
        if (rc == 0)
            rc = gt_writer_add_process(a->w, procs[i].pid, procs[i].name ? procs[i].name : "");
    }
    const gt_thread *threads = gt_trace_threads(t, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = gt_writer_add_thread_name(a->w, threads[i].global_tid, threads[i].name ? threads[i].name : "", 0);
    const gt_gpu_info *gpus = gt_trace_gpus(t, &n);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (set_has(&a->gpus, gpus[i].id))
            continue;
        rc = set_add(&a->gpus, gpus[i].id);
        if (rc == 0)
            rc = gt_writer_add_gpu(a->w, &gpus[i]);
    }
    if (rc == 0)
        rc = copy_config(a, t);
    id_set callchains = {0};
    if (rc == 0)
        rc = copy_events(a, t, part_no, &callchains);
    free(callchains.v);
    int64_t part_dropped[GT_EV_N_KINDS];
    const gt_loss_slot *slot = find_slot(a, path);
    if (slot)
        memcpy(part_dropped, slot->n_lost, sizeof part_dropped);
    else
        gt_cli_dropped(t, part_dropped);
    if (rc == 0)
        rc = add_dropped(a, part_gpid, part_dropped);
    gt_trace_free(t);
    return rc;
}

static int write_run_config(gt_writer *w, const gt_run_info *run)
{
    char v[32];
    int rc = gt_writer_set_session_start(w, run->utc_t0_ns);
    if (rc == 0)
        rc = gt_writer_add_config(w, 0, "command_line", run->command_line);
    if (rc == 0)
        rc = gt_writer_add_config(w, 0, "gtrace_options", run->options);
    snprintf(v, sizeof v, "%lld", (long long)run->root_pid);
    if (rc == 0)
        rc = gt_writer_add_config(w, 0, "root_pid", v);
    return rc;
}

static int copy_all(char **parts, size_t n_parts, const char *output, const gt_run_info *run,
                    gt_loss_table *losses)
{
    bool slot_used[GT_LOSS_SLOTS] = {false};
    assembly a = {.losses = losses, .slot_used = slot_used};
    int rc = gt_writer_open(&a.w, output, 0);
    if (rc != 0)
        return rc;
    rc = gt_writer_begin(a.w);
    if (rc == 0)
        rc = write_run_config(a.w, run);
    if (rc == 0 && n_parts == 0) {
        rc = set_add(&a.pids, run->root_pid);
        if (rc == 0)
            rc = gt_writer_add_process(a.w, run->root_pid, run->program_name);
    }
    for (size_t i = 0; i < n_parts && rc == 0; i++)
        rc = copy_part(&a, parts[i], (int)i);
    /* Processes that lost everything: their part could not even be created. */
    for (int i = 0; losses && i < GT_LOSS_SLOTS && rc == 0; i++) {
        const gt_loss_slot *s = &losses->slots[i];
        if (s->pid && s->complete && !slot_used[i]) {
            if (!set_has(&a.pids, s->pid)) {
                rc = set_add(&a.pids, s->pid);
                if (rc == 0)
                    rc = gt_writer_add_process(a.w, s->pid, "");
            }
            if (rc == 0)
                rc = add_dropped(&a, gt_global_pid(s->pid), s->n_lost);
        }
    }
    for (size_t i = 0; i < a.n_dropped && rc == 0; i++)
        for (int k = 0; k < GT_EV_N_KINDS && rc == 0; k++)
            if (a.dropped[i].n[k] > 0)
                rc = gt_writer_add_dropped(a.w, a.dropped[i].global_pid, (gt_event_kind)k, a.dropped[i].n[k]);
    if (rc == 0)
        rc = gt_writer_commit(a.w);
    if (rc == 0)
        rc = gt_writer_close(a.w);
    else
        gt_writer_free(a.w);
    free(a.pids.v);
    free(a.gpus.v);
    free(a.config_pids.v);
    free(a.dropped);
    return rc;
}

/* Removes SQLite's files beside `path` (regular files only). */
static void remove_sidecars(const char *path)
{
    static const char *const suffixes[] = {"-wal", "-shm", "-journal"};
    char side[4200];
    struct stat st;
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(side, sizeof side, "%s%s", path, suffixes[i]);
        if (lstat(side, &st) == 0 && S_ISREG(st.st_mode))
            unlink(side);
    }
}

int gt_cli_check_output(const char *output, bool force)
{
    struct stat st;
    if (lstat(output, &st) != 0)
        return 0;
    if (!S_ISREG(st.st_mode))
        return gt_error_set(GT_ERR_EXISTS, "%s exists and is not a regular file (%s); gtrace never replaces it: "
                            "choose another name with -o", output,
                            S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link"
                            : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "not a file");
    if (!force)
        return gt_error_set(GT_ERR_EXISTS, "%s exists; use --force to replace it, or -o to choose another name", output);
    return 0;
}

/* Moves a finished trace (in the parts directory) to `output`. */
static int install(const char *from, const char *output, bool force)
{
    struct stat st;
    bool exists = lstat(output, &st) == 0;
    if (exists && !S_ISREG(st.st_mode))
        return gt_cli_check_output(output, force);
    if (exists && !force)
        return gt_error_set(GT_ERR_EXISTS, "%s appeared while the program ran; it is left as it is", output);
    /* Journals beside the name belong to the file replaced, or to none:
     * SQLite must not apply them to the new trace. */
    remove_sidecars(output);
    if (exists) {
        if (rename(from, output) != 0)
            return gt_error_set(GT_ERR_IO, "cannot move the trace to %s: %s", output, strerror(errno));
        return 0;
    }
    /* Without --force, never replace: a file may have appeared since the check. */
    if (renameat2(AT_FDCWD, from, AT_FDCWD, output, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno == EEXIST)
        return gt_error_set(GT_ERR_EXISTS, "%s appeared while the program ran; it is left as it is", output);
    if (errno != EINVAL && errno != ENOSYS)
        return gt_error_set(GT_ERR_IO, "cannot move the trace to %s: %s", output, strerror(errno));
    if (link(from, output) == 0) { /* a file system without RENAME_NOREPLACE */
        unlink(from);
        return 0;
    }
    if (errno == EEXIST)
        return gt_error_set(GT_ERR_EXISTS, "%s appeared while the program ran; it is left as it is", output);
    if (rename(from, output) != 0)
        return gt_error_set(GT_ERR_IO, "cannot move the trace to %s: %s", output, strerror(errno));
    return 0;
}

/* The loss table of a parts directory, read whole; NULL when absent or not one. */
static gt_loss_table *read_losses(const char *parts_dir)
{
    char *path = path_join(parts_dir, GT_LOSSES_NAME);
    if (!path)
        return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return NULL;
    gt_loss_table *t = malloc(sizeof *t);
    size_t got = 0;
    while (t && got < sizeof *t) {
        ssize_t n = read(fd, (char *)t + got, sizeof *t - got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    if (t && (got < sizeof *t || memcmp(t->magic, GT_LOSSES_MAGIC, sizeof t->magic) != 0)) {
        free(t);
        t = NULL;
    }
    return t;
}

int gt_cli_make_losses(const char *parts_dir)
{
    char *path = path_join(parts_dir, GT_LOSSES_NAME);
    if (!path)
        return gt_error_set(GT_ERR_NOMEM, "out of memory");
    int err = 0;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        err = errno;
    } else {
        /* Every block allocated now: a process that lost events because the
         * disk is full can still record how many. */
        char magic[8] = GT_LOSSES_MAGIC;
        err = posix_fallocate(fd, 0, (off_t)sizeof(gt_loss_table));
        if (err == 0 && pwrite(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic)
            err = errno ? errno : EIO;
        close(fd);
        if (err != 0)
            unlink(path);
    }
    int rc = 0;
    if (err != 0)
        rc = gt_error_set(err == ENOSPC || err == EFBIG ? GT_ERR_FULL : GT_ERR_IO, "cannot create %s: %s", path,
                          strerror(err));
    free(path);
    return rc;
}

void gt_cli_remove_parts(const char *parts_dir)
{
    size_t n = 0;
    char **parts = list_parts(parts_dir, &n);
    for (size_t i = 0; i < n; i++) {
        remove_part(parts[i]);
        free(parts[i]);
    }
    free(parts);
    char *p = path_join(parts_dir, GT_LOSSES_NAME);
    if (p)
        unlink(p);
    free(p);
    p = path_join(parts_dir, ASSEMBLED_NAME);
    if (p)
        remove_part(p);
    free(p);
}

int gt_cli_assemble(const char *parts_dir, const char *output, bool force, const gt_run_info *run,
                    gt_run_losses *out_losses)
{
    size_t n = 0;
    char **parts = list_parts(parts_dir, &n);
    gt_loss_table *losses = read_losses(parts_dir);
    bool any_slot = false;
    if (out_losses)
        memset(out_losses, 0, sizeof *out_losses);
    for (int i = 0; losses && i < GT_LOSS_SLOTS; i++) {
        const gt_loss_slot *s = &losses->slots[i];
        if (!s->pid)
            continue;
        any_slot = true;
        if (!out_losses)
            continue;
        if (!s->complete) {
            out_losses->n_unaccounted++; /* killed while it wrote its account */
            continue;
        }
        if (out_losses->n_failed++ == 0) {
            _Static_assert(sizeof out_losses->reason == sizeof s->reason, "same size");
            memcpy(out_losses->reason, s->reason, sizeof s->reason);
            out_losses->reason[sizeof out_losses->reason - 1] = '\0';
        }
    }
    if (losses && out_losses)
        out_losses->n_unaccounted += losses->n_unrecorded;
    int rc = 0;
    if (output) {
        if (n == 1 && !has_wal(parts[0]) && !any_slot) {
            rc = install(parts[0], output, force);
        } else {
            char *tmp = path_join(parts_dir, ASSEMBLED_NAME);
            if (!tmp) {
                rc = gt_error_set(GT_ERR_NOMEM, "out of memory assembling the trace");
            } else {
                remove_part(tmp);
                rc = copy_all(parts, n, tmp, run, losses);
                if (rc == 0 && gt_cli_stop_signal)
                    rc = interrupted();
                if (rc == 0)
                    rc = install(tmp, output, force);
                if (rc != 0)
                    remove_part(tmp);
                free(tmp);
            }
        }
    }
    if (rc == 0 || !output) {
        for (size_t i = 0; i < n; i++)
            remove_part(parts[i]);
        char *p = path_join(parts_dir, GT_LOSSES_NAME);
        if (p)
            unlink(p);
        free(p);
    }
    for (size_t i = 0; i < n; i++)
        free(parts[i]);
    free(parts);
    free(losses);
    return rc;
}
