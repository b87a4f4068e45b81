/* data_idx.c: the idx reader of data_idx.h, through zlib's gzread (which
 * reads plain files as they are). The header is big-endian: a magic of two
 * zero bytes, the element type (0x08: unsigned byte) and the number of
 * dimensions, then one uint32 per dimension. */
#include "data_idx.h"

#include "error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Reads an idx file of n_dims dimensions into *data (the caller frees);
 * dims[] receives them. */
static int read_idx(const char *path, int n_dims, uint32_t *dims, uint8_t **data)
{
    *data = NULL;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return tr_error_set(TR_EIO, "%s: cannot open", path);
    int rc = TR_OK;
    uint8_t head[4 + 4 * 3];
    int head_bytes = 4 + 4 * n_dims;
    if (gzread(f, head, (unsigned)head_bytes) != head_bytes) {
        rc = tr_error_set(TR_EFORMAT, "%s: truncated idx header", path);
        goto cleanup;
    }
    uint32_t magic = be32(head), want = 0x800u | (uint32_t)n_dims;
    if (magic != want) {
        rc = tr_error_set(TR_EFORMAT, "%s: not an idx file of %d dimension%s of bytes (magic 0x%08x, expected 0x%08x)",
                          path, n_dims, n_dims > 1 ? "s" : "", magic, want);
        goto cleanup;
    }
    uint64_t n_bytes = 1;
    for (int i = 0; i < n_dims; i++) {
        dims[i] = be32(head + 4 + 4 * i);
        n_bytes *= dims[i];
    }
    if (dims[0] == 0 || dims[0] > (1u << 30) || n_bytes > (1ull << 32)) {
        rc = tr_error_set(TR_EFORMAT, "%s: implausible idx size (%u items, %llu bytes)", path, dims[0],
                          (unsigned long long)n_bytes);
        goto cleanup;
    }
    *data = malloc(n_bytes);
    if (!*data) {
        rc = tr_error_set(TR_ENOMEM, "%s: out of host memory for %llu bytes", path, (unsigned long long)n_bytes);
        goto cleanup;
    }
    uint64_t got = 0;
    while (got < n_bytes) {
        unsigned chunk = n_bytes - got > (1u << 30) ? 1u << 30 : (unsigned)(n_bytes - got);
        int r = gzread(f, *data + got, chunk);
        if (r <= 0)
            break;
        got += (uint64_t)r;
    }
    if (got != n_bytes) {
        int errnum = 0;
        const char *zmsg = gzerror(f, &errnum);
        rc = tr_error_set(TR_EFORMAT, "%s: truncated: %llu of %llu data bytes%s%s", path, (unsigned long long)got,
                          (unsigned long long)n_bytes, errnum < 0 ? ": " : "", errnum < 0 ? zmsg : "");
        goto cleanup;
    }
    uint8_t extra;
    if (gzread(f, &extra, 1) != 0) {
        rc = tr_error_set(TR_EFORMAT, "%s: longer than its idx header says (%llu data bytes)", path,
                          (unsigned long long)n_bytes);
        goto cleanup;
    }
cleanup:
    gzclose(f);
    if (rc < 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int tr_idx_load(tr_idx_set *out, const char *images_path, const char *labels_path, int n_classes)
{
    memset(out, 0, sizeof(*out));
    uint32_t di[3], dl[1];
    uint8_t *images = NULL, *labels = NULL;
    int rc = read_idx(images_path, 3, di, &images);
    if (rc < 0)
        return rc;
    rc = read_idx(labels_path, 1, dl, &labels);
    if (rc < 0)
        goto cleanup;
    if (di[0] != dl[0]) {
        rc = tr_error_set(TR_EFORMAT, "%s: %u labels for the %u images of %s", labels_path, dl[0], di[0],
                          images_path);
        goto cleanup;
    }
    if (di[1] == 0 || di[2] == 0 || di[1] > 4096 || di[2] > 4096) {
        rc = tr_error_set(TR_EFORMAT, "%s: images of %u x %u pixels", images_path, di[1], di[2]);
        goto cleanup;
    }
    for (uint32_t i = 0; i < dl[0]; i++)
        if (labels[i] >= n_classes) {
            rc = tr_error_set(TR_EFORMAT, "%s: label %u of item %u is not below %d classes", labels_path, labels[i],
                              i, n_classes);
            goto cleanup;
        }
    out->n = (int)di[0];
    out->rows = (int)di[1];
    out->cols = (int)di[2];
    out->images = images;
    out->labels = labels;
    return TR_OK;
cleanup:
    free(images);
    free(labels);
    return rc;
}

/* dir/base.gz, else dir/base if only that exists. */
static char *find(const char *dir, const char *base)
{
    size_t n = strlen(dir) + strlen(base) + 8;
    char *p = malloc(n);
    if (!p)
        return NULL;
    struct stat sb;
    snprintf(p, n, "%s/%s", dir, base);
    if (stat(p, &sb) == 0)
        return p;
    snprintf(p, n, "%s/%s.gz", dir, base);
    return p;
}

int tr_idx_load_dir(tr_idx_set *train, tr_idx_set *test, const char *dir, int n_classes)
{
    memset(train, 0, sizeof(*train));
    memset(test, 0, sizeof(*test));
    struct stat sb;
    if (!dir) {
        dir = TR_IDX_DEFAULT_DIR;
        if (stat(dir, &sb) != 0)
            return tr_error_set(TR_EIO, "%s: no Fashion-MNIST here: install Debian's dataset-fashion-mnist package "
                                "(apt-get install dataset-fashion-mnist) or give --data DIR", dir);
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return tr_error_set(TR_EIO, "%s: not a folder of idx files (train-images-idx3-ubyte.gz, ...)", dir);
    const char *names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                            "t10k-labels-idx1-ubyte"};
    char *p[4] = {0};
    int rc = TR_OK;
    for (int i = 0; i < 4; i++)
        if (!(p[i] = find(dir, names[i]))) {
            rc = tr_error_set(TR_ENOMEM, "out of host memory");
            goto cleanup;
        }
    if ((rc = tr_idx_load(train, p[0], p[1], n_classes)) < 0)
        goto cleanup;
    if ((rc = tr_idx_load(test, p[2], p[3], n_classes)) < 0)
        goto cleanup;
    if (test->rows != train->rows || test->cols != train->cols)
        rc = tr_error_set(TR_EFORMAT, "%s: images of %d x %d pixels, the training set's are %d x %d", p[2],
                          test->rows, test->cols, train->rows, train->cols);
cleanup:
    for (int i = 0; i < 4; i++)
        free(p[i]);
    if (rc < 0) {
        tr_idx_release(train);
        tr_idx_release(test);
    }
    return rc;
}

void tr_idx_release(tr_idx_set *s)
{
    if (!s)
        return;
    free(s->images);
    free(s->labels);
    memset(s, 0, sizeof(*s));
}
