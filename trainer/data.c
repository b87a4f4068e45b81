/* data.c: datasets and the batch loader of data.h. */
#include "data.h"

#include "error.h"
#include "nvtx.h"
#include "rng.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- datasets ---- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* What a path that is not a regular file is, for messages. */
static const char *kind_of(mode_t mode)
{
    return S_ISDIR(mode) ? "a folder" : S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
         : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket" : S_ISLNK(mode) ? "a symbolic link"
         : "not a regular file";
}

/* Reads a whole regular file. Opened without blocking and checked on the
 * descriptor, so a FIFO or a device put where a file was is refused, never
 * waited on. */
static int read_file(const char *path, unsigned char **out, size_t *n_out)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return tr_error_set(TR_EIO, "cannot open %s: %s", path, strerror(errno));
    int rc = TR_OK;
    unsigned char *buf = NULL;
    struct stat st;
    size_t n = 0;
    if (fstat(fd, &st) != 0) {
        rc = tr_error_set(TR_EIO, "cannot read %s: %s", path, strerror(errno));
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = tr_error_set(TR_EIO, "cannot read %s: it is %s, not a regular file", path, kind_of(st.st_mode));
        goto cleanup;
    }
    n = (size_t)st.st_size;
    buf = malloc(n ? n : 1);
    if (!buf) {
        rc = tr_error_set(TR_ENOMEM, "out of memory reading %s (%zu bytes)", path, n);
        goto cleanup;
    }
    for (size_t got = 0; got < n;) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = tr_error_set(TR_EIO, "cannot read %s: %s", path, k < 0 ? strerror(errno) : "short read");
            goto cleanup;
        }
        got += (size_t)k;
    }
    *out = buf;
    *n_out = n;
    buf = NULL;
cleanup:
    free(buf);
    close(fd);
    return rc;
}

/* Appends text as byte tokens; a line that is only "%" (fortune's separator)
 * becomes an empty line. */
static int append_text(tr_dataset *d, size_t *cap, const unsigned char *s, size_t n)
{
    if (d->n_tokens + n + 1 > *cap) {
        size_t c = (d->n_tokens + n + 1) * 2;
        uint16_t *t = realloc(d->tokens, c * sizeof *t);
        if (!t)
            return tr_error_set(TR_ENOMEM, "out of memory for %zu tokens", c);
        d->tokens = t;
        *cap = c;
    }
    for (size_t i = 0; i < n; i++) {
        bool line_start = i == 0 || s[i - 1] == '\n';
        if (line_start && s[i] == '%' && (i + 1 == n || s[i + 1] == '\n'))
            continue; /* drop the '%', keep its newline */
        d->tokens[d->n_tokens++] = s[i];
    }
    return TR_OK;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int open_folder(tr_dataset *d, const char *path)
{
    DIR *dir = opendir(path);
    if (!dir)
        return tr_error_set(TR_EIO, "cannot open the folder %s: %s", path, strerror(errno));
    char **names = NULL;
    size_t n_names = 0, cap_names = 0, cap = 0;
    int rc = TR_OK;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.' || ends_with(e->d_name, ".dat") || ends_with(e->d_name, ".u8"))
            continue;
        if (n_names == cap_names) {
            cap_names = cap_names ? 2 * cap_names : 64;
            char **v = realloc(names, cap_names * sizeof *v);
            if (!v) {
                rc = tr_error_set(TR_ENOMEM, "out of memory listing %s", path);
                goto cleanup;
            }
            names = v;
        }
        if (!(names[n_names] = strdup(e->d_name))) {
            rc = tr_error_set(TR_ENOMEM, "out of memory listing %s", path);
            goto cleanup;
        }
        n_names++;
    }
    if (n_names) /* qsort takes no NULL, even for nothing */
        qsort(names, n_names, sizeof *names, cmp_names);
    for (size_t i = 0; i < n_names; i++) {
        char full[4096];
        struct stat st;
        snprintf(full, sizeof full, "%s/%s", path, names[i]);
        if (lstat(full, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* links (fortune's .u8 aliases) and folders are not read twice or at all */
        unsigned char *buf;
        size_t n;
        if ((rc = read_file(full, &buf, &n)) < 0)
            goto cleanup;
        rc = append_text(d, &cap, buf, n);
        free(buf);
        if (rc < 0)
            goto cleanup;
        d->n_files++;
    }
    if (d->n_files == 0)
        rc = tr_error_set(TR_EFORMAT, "the folder %s has no plain text files", path);
cleanup:
    for (size_t i = 0; i < n_names; i++)
        free(names[i]);
    free(names);
    closedir(dir);
    return rc;
}

static int open_bin(tr_dataset *d, const char *path)
{
    unsigned char *buf;
    size_t n;
    int rc = read_file(path, &buf, &n);
    if (rc < 0)
        return rc;
    int32_t header[256];
    int max = 0;
    if (n < sizeof header) {
        rc = tr_error_set(TR_EFORMAT, "%s: truncated: %zu bytes, shorter than the 1024-byte llm.c header", path, n);
        goto cleanup;
    }
    memcpy(header, buf, sizeof header);
    if (header[0] != TR_BIN_MAGIC) {
        rc = tr_error_set(TR_EFORMAT, "%s: not an llm.c token file (magic %d, expected %d)", path, header[0],
                          TR_BIN_MAGIC);
        goto cleanup;
    }
    if (header[1] != TR_BIN_VERSION) {
        rc = tr_error_set(TR_EFORMAT, "%s: token file version %d; this trainer reads version %d (uint16 tokens)",
                          path, header[1], TR_BIN_VERSION);
        goto cleanup;
    }
    if (header[2] <= 0 || n != sizeof header + 2 * (size_t)header[2]) {
        rc = tr_error_set(TR_EFORMAT, "%s: the header says %d tokens but the file holds %zu bytes of tokens",
                          path, header[2], n - sizeof header);
        goto cleanup;
    }
    d->n_tokens = (size_t)header[2];
    if (!(d->tokens = malloc(d->n_tokens * sizeof *d->tokens))) {
        rc = tr_error_set(TR_ENOMEM, "out of memory for %zu tokens", d->n_tokens);
        goto cleanup;
    }
    memcpy(d->tokens, buf + sizeof header, d->n_tokens * sizeof *d->tokens);
    for (size_t i = 0; i < d->n_tokens; i++)
        if (d->tokens[i] > max)
            max = d->tokens[i];
    d->vocab_size = max < 50257 ? 50257 : max + 1; /* GPT-2's tokenizer unless the ids say otherwise */
    d->n_files = 1;
cleanup:
    free(buf);
    return rc;
}

int tr_dataset_open(tr_dataset **out, const char *path)
{
    *out = NULL;
    tr_dataset *d = calloc(1, sizeof *d);
    if (!d)
        return tr_error_set(TR_ENOMEM, "out of memory");
    struct stat st;
    int rc;
    if (stat(path, &st) != 0) {
        rc = tr_error_set(TR_EIO, "cannot read the data %s: %s", path, strerror(errno));
    } else if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
        rc = tr_error_set(TR_EIO, "cannot read the data %s: it is %s, not a file or a folder", path,
                          kind_of(st.st_mode));
    } else if (S_ISDIR(st.st_mode)) {
        d->vocab_size = 256;
        rc = open_folder(d, path);
    } else if (ends_with(path, ".bin")) {
        rc = open_bin(d, path);
    } else {
        unsigned char *buf;
        size_t n, cap = 0;
        d->vocab_size = 256;
        d->n_files = 1;
        if ((rc = read_file(path, &buf, &n)) >= 0) {
            rc = append_text(d, &cap, buf, n);
            free(buf);
        }
    }
    if (rc >= 0 && d->n_tokens < 2)
        rc = tr_error_set(TR_EFORMAT, "%s holds %zu tokens: too few to train on", path, d->n_tokens);
    if (rc < 0) {
        tr_dataset_free(d);
        return rc;
    }
    tr_dataset_split(d, 0.1);
    *out = d;
    return TR_OK;
}

void tr_dataset_split(tr_dataset *d, double val_fraction)
{
    assert(val_fraction >= 0 && val_fraction < 1);
    d->n_train = d->n_tokens - (size_t)((double)d->n_tokens * val_fraction);
}

void tr_dataset_free(tr_dataset *d)
{
    if (!d)
        return;
    free(d->tokens);
    free(d);
}

/* ---- the loader ---- */

typedef struct slot {
    tr_batch batch;
    int64_t ready; /* the batch index this slot holds, -1 none */
} slot;

typedef struct order { /* one epoch's sample order, cached per thread */
    int64_t epoch;
    int64_t *perm;
} order;

typedef struct worker {
    tr_loader *l;
    int id;
    pthread_t thread;
    order ord;
} worker;

struct tr_loader {
    const uint16_t *tokens; /* the split's first token */
    int64_t n_samples, n_batches; /* per epoch */
    int B, T;
    uint64_t seed;
    tr_backend *be;
    int n_workers, n_slots;
    slot *slots;
    worker *workers;
    order inline_ord;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int64_t start, next, free_below;
    bool stop;
};

static void make_order(const tr_loader *l, order *o, int64_t epoch)
{
    if (o->epoch == epoch)
        return;
    tr_rng r = {l->seed * 0x2545F4914F6CDD1DULL + (uint64_t)epoch};
    for (int64_t i = 0; i < l->n_samples; i++)
        o->perm[i] = i;
    for (int64_t i = l->n_samples - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)tr_rng_below(&r, (uint64_t)i + 1), t = o->perm[i];
        o->perm[i] = o->perm[j];
        o->perm[j] = t;
    }
    o->epoch = epoch;
}

/* Row r of batch k is sample g = k*B + r of the run's stream: position
 * g % n_samples of epoch g / n_samples. Epochs follow each other without a
 * gap, so no sample is dropped: a batch may end one epoch and begin the next. */
static int64_t sample_at(const tr_loader *l, order *o, int64_t k, int r)
{
    int64_t g = k * l->B + r;
    make_order(l, o, g / l->n_samples);
    return o->perm[g % l->n_samples];
}

static void fill(const tr_loader *l, order *o, tr_batch *b, int64_t k)
{
    for (int r = 0; r < l->B; r++) {
        const uint16_t *s = l->tokens + sample_at(l, o, k, r) * l->T;
        for (int t = 0; t < l->T; t++) {
            b->inputs[r * l->T + t] = s[t];
            b->targets[r * l->T + t] = s[t + 1];
        }
    }
    b->index = k;
}

int64_t tr_loader_sample_of(const tr_loader *l, int64_t k, int r)
{
    order o = {-1, malloc(l->n_samples * sizeof(int64_t))};
    if (!o.perm)
        return -1;
    int64_t s = sample_at(l, &o, k, r);
    free(o.perm);
    return s;
}

static void *work(void *arg)
{
    worker *w = arg;
    tr_loader *l = w->l;
    for (int64_t k = l->start + w->id;; k += l->n_workers) {
        pthread_mutex_lock(&l->lock);
        while (!l->stop && k - l->n_slots >= l->free_below)
            pthread_cond_wait(&l->changed, &l->lock);
        bool stop = l->stop;
        pthread_mutex_unlock(&l->lock);
        if (stop)
            break;
        slot *s = &l->slots[k % l->n_slots];
        fill(l, &w->ord, &s->batch, k);
        pthread_mutex_lock(&l->lock);
        s->ready = k;
        pthread_cond_broadcast(&l->changed);
        pthread_mutex_unlock(&l->lock);
    }
    return NULL;
}

static void stop_workers(tr_loader *l)
{
    pthread_mutex_lock(&l->lock);
    l->stop = true;
    pthread_cond_broadcast(&l->changed);
    pthread_mutex_unlock(&l->lock);
    for (int i = 0; i < l->n_workers; i++)
        if (l->workers[i].thread)
            pthread_join(l->workers[i].thread, NULL);
}

static int start_workers(tr_loader *l, int64_t k)
{
    l->stop = false;
    l->start = l->next = l->free_below = k;
    for (int i = 0; i < l->n_slots; i++)
        l->slots[i].ready = -1;
    for (int i = 0; i < l->n_workers; i++) {
        l->workers[i].l = l;
        l->workers[i].id = i;
        if (pthread_create(&l->workers[i].thread, NULL, work, &l->workers[i]) != 0) {
            l->workers[i].thread = 0;
            stop_workers(l);
            return tr_error_set(TR_ENOMEM, "cannot start data loader worker %d", i);
        }
    }
    return TR_OK;
}

int tr_loader_new(tr_loader **out, const tr_dataset *d, size_t begin, size_t end, int B, int T, uint64_t seed,
                  int n_workers, tr_backend *be)
{
    *out = NULL;
    if (end > d->n_tokens || begin >= end || B < 1 || T < 1 || n_workers < 0)
        return tr_error_set(TR_EINVAL, "tr_loader_new: bad arguments");
    int64_t n_samples = (int64_t)(end - begin - 1) / T;
    if (n_samples < 1)
        return tr_error_set(TR_EINVAL, "the split has %zu tokens: fewer than one sample of %d tokens needs (%d)",
                            end - begin, T, T + 1);
    tr_loader *l = calloc(1, sizeof *l);
    if (!l)
        return tr_error_set(TR_ENOMEM, "out of memory");
    l->tokens = d->tokens + begin;
    l->n_samples = n_samples;
    l->n_batches = (n_samples + B - 1) / B; /* to cover an epoch */
    l->B = B;
    l->T = T;
    l->seed = seed;
    l->be = be;
    l->n_workers = n_workers;
    l->n_slots = n_workers ? 2 * n_workers : 1;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->changed, NULL);
    int rc = TR_OK;
    size_t bytes = (size_t)B * T * sizeof(int32_t);
    l->slots = calloc(l->n_slots, sizeof *l->slots);
    l->workers = calloc(n_workers ? n_workers : 1, sizeof *l->workers);
    l->inline_ord = (order){-1, malloc(n_samples * sizeof(int64_t))};
    if (!l->slots || !l->workers || !l->inline_ord.perm) {
        rc = tr_error_set(TR_ENOMEM, "out of memory for the loader");
        goto cleanup;
    }
    for (int i = 0; i < n_workers; i++)
        if (!(l->workers[i].ord = (order){-1, malloc(n_samples * sizeof(int64_t))}).perm) {
            rc = tr_error_set(TR_ENOMEM, "out of memory for the loader");
            goto cleanup;
        }
    for (int i = 0; i < l->n_slots; i++) { /* host staging: pinned on a GPU backend */
        slot *s = &l->slots[i];
        s->batch.inputs = be ? be->host_alloc(be, bytes) : malloc(bytes);
        s->batch.targets = be ? be->host_alloc(be, bytes) : malloc(bytes);
        if (!s->batch.inputs || !s->batch.targets) {
            rc = tr_error_set(TR_ENOMEM, "out of memory for staging buffers");
            goto cleanup;
        }
    }
    if ((rc = start_workers(l, 0)) < 0)
        goto cleanup;
    *out = l;
    return TR_OK;
cleanup:
    l->n_workers = 0; /* no thread was left running */
    tr_loader_free(l);
    return rc;
}

void tr_loader_free(tr_loader *l)
{
    if (!l)
        return;
    if (l->workers)
        stop_workers(l);
    for (int i = 0; l->slots && i < l->n_slots; i++) {
        if (l->be) {
            if (l->slots[i].batch.inputs)
                l->be->host_free(l->be, l->slots[i].batch.inputs);
            if (l->slots[i].batch.targets)
                l->be->host_free(l->be, l->slots[i].batch.targets);
        } else {
            free(l->slots[i].batch.inputs);
            free(l->slots[i].batch.targets);
        }
    }
    for (int i = 0; l->workers && i < l->n_workers; i++)
        free(l->workers[i].ord.perm);
    free(l->inline_ord.perm);
    free(l->slots);
    free(l->workers);
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->changed);
    free(l);
}

int tr_loader_next(tr_loader *l, const tr_batch **out)
{
    tr_nvtx_push_static("data");
    if (l->n_workers == 0) {
        fill(l, &l->inline_ord, &l->slots[0].batch, l->next++);
        *out = &l->slots[0].batch;
        tr_nvtx_pop();
        return TR_OK;
    }
    pthread_mutex_lock(&l->lock);
    l->free_below = l->next; /* the batch borrowed last time is given back */
    pthread_cond_broadcast(&l->changed);
    slot *s = &l->slots[l->next % l->n_slots];
    while (s->ready != l->next)
        pthread_cond_wait(&l->changed, &l->lock);
    l->next++;
    pthread_mutex_unlock(&l->lock);
    *out = &s->batch;
    tr_nvtx_pop();
    return TR_OK;
}

int tr_loader_seek(tr_loader *l, int64_t k)
{
    if (k < 0)
        return tr_error_set(TR_EINVAL, "tr_loader_seek: negative batch index");
    if (l->n_workers == 0) {
        l->next = k;
        return TR_OK;
    }
    stop_workers(l);
    return start_workers(l, k);
}

int64_t tr_loader_n_samples(const tr_loader *l) { return l->n_samples; }
int64_t tr_loader_batches_per_epoch(const tr_loader *l) { return l->n_batches; }
