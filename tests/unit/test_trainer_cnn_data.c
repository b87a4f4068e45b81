/* test_trainer_cnn_data.c: the idx reader (data_idx.c) on small files this
 * test writes, gzip-compressed and plain: what it reads, and each kind of
 * bad file refused with its name. */
#include "data_idx.h"
#include "error.h"
#include "gt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = v >> 24; p[1] = v >> 16; p[2] = v >> 8; p[3] = v;
}

/* An idx file: magic, dims, then n_data bytes of data (pixel i is i*7 mod
 * 256, label i is i mod 10). */
static char *write_idx(const char *name, uint32_t magic, int n_dims, const uint32_t *dims, size_t n_data, int gz)
{
    char *path = gt_test_path(name);
    uint8_t head[16];
    put32(head, magic);
    for (int i = 0; i < n_dims; i++)
        put32(head + 4 + 4 * i, dims[i]);
    uint8_t *data = malloc(n_data + 1);
    for (size_t i = 0; i < n_data; i++)
        data[i] = n_dims == 1 ? (uint8_t)(i % 10) : (uint8_t)(i * 7);
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, head, 4 + 4 * n_dims);
        if (n_data)
            gzwrite(f, data, (unsigned)n_data);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(head, 1, 4 + 4 * n_dims, f);
        fwrite(data, 1, n_data, f);
        fclose(f);
    }
    free(data);
    return path;
}

static void test_trainer_cnn_data__reads_gz_and_plain(void)
{
    uint32_t di[3] = {300, 28, 28}, dl[1] = {300};
    char *im = write_idx("im.gz", 0x803, 3, di, 300 * 28 * 28, 1), *lb = write_idx("lb", 0x801, 1, dl, 300, 0);
    tr_idx_set s;
    CU_ASSERT_EQUAL_FATAL(tr_idx_load(&s, im, lb, 10), TR_OK);
    CU_ASSERT_EQUAL(s.n, 300);
    CU_ASSERT_EQUAL(s.rows, 28);
    CU_ASSERT_EQUAL(s.cols, 28);
    CU_ASSERT_EQUAL(s.images[1000], (uint8_t)(1000 * 7));
    CU_ASSERT_EQUAL(s.labels[123], 3);
    tr_idx_release(&s);
    free(im);
    free(lb);
}

static void test_trainer_cnn_data__folder(void)
{
    char *dir = gt_test_path("fmnist");
    mkdir(dir, 0755);
    uint32_t di[3] = {200, 28, 28}, dl[1] = {200}, ti[3] = {50, 28, 28}, tl[1] = {50};
    free(write_idx("fmnist/train-images-idx3-ubyte.gz", 0x803, 3, di, 200 * 784, 1));
    free(write_idx("fmnist/train-labels-idx1-ubyte.gz", 0x801, 1, dl, 200, 1));
    free(write_idx("fmnist/t10k-images-idx3-ubyte", 0x803, 3, ti, 50 * 784, 0)); /* unpacked */
    free(write_idx("fmnist/t10k-labels-idx1-ubyte.gz", 0x801, 1, tl, 50, 1));
    tr_idx_set train, test;
    CU_ASSERT_EQUAL_FATAL(tr_idx_load_dir(&train, &test, dir, 10), TR_OK);
    CU_ASSERT_EQUAL(train.n, 200);
    CU_ASSERT_EQUAL(test.n, 50);
    tr_idx_release(&train);
    tr_idx_release(&test);
    /* a folder without the files names the one missing */
    char *empty = gt_test_path("empty");
    mkdir(empty, 0755);
    CU_ASSERT_EQUAL(tr_idx_load_dir(&train, &test, empty, 10), TR_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "train-images-idx3-ubyte"));
    free(empty);
    free(dir);
}

/* Each bad file: the code, and a message naming the file and the fault. */
static void refused(const char *im, const char *lb, int code, const char *name, const char *what)
{
    tr_idx_set s;
    CU_ASSERT_EQUAL(tr_idx_load(&s, im, lb, 10), code);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), name));
    if (!strstr(tr_error_last(), what))
        fprintf(stderr, "  message: %s\n", tr_error_last());
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), what));
    CU_ASSERT_PTR_NULL(strchr(tr_error_last(), '\n'));
    CU_ASSERT_PTR_NULL(s.images);
}

static void test_trainer_cnn_data__bad_files(void)
{
    uint32_t di[3] = {100, 28, 28}, dl[1] = {100}, dl2[1] = {99};
    char *im = write_idx("ok-im.gz", 0x803, 3, di, 100 * 784, 1), *lb = write_idx("ok-lb.gz", 0x801, 1, dl, 100, 1);
    char *swapped = write_idx("swapped.gz", 0x801, 3, di, 100 * 784, 1);
    refused(swapped, lb, TR_EFORMAT, "swapped.gz", "magic");
    char *magic = write_idx("magic.gz", 0x0d03, 1, dl, 100, 1);
    refused(im, magic, TR_EFORMAT, "magic.gz", "magic");
    char *shortim = write_idx("short-im.gz", 0x803, 3, di, 100 * 784 - 5, 1);
    refused(shortim, lb, TR_EFORMAT, "short-im.gz", "truncated");
    char *shortlb = write_idx("short-lb", 0x801, 1, dl, 60, 0);
    refused(im, shortlb, TR_EFORMAT, "short-lb", "truncated");
    char *header = write_idx("header.gz", 0x803, 1, di, 0, 1); /* 8 bytes: half a header */
    refused(header, lb, TR_EFORMAT, "header.gz", "truncated");
    char *count = write_idx("count.gz", 0x801, 1, dl2, 99, 1);
    refused(im, count, TR_EFORMAT, "count.gz", "99 labels for the 100 images");
    char *longer = write_idx("longer.gz", 0x801, 1, dl2, 100, 1);
    refused(im, longer, TR_EFORMAT, "longer.gz", "longer");
    refused(im, "no-such-file", TR_EIO, "no-such-file", "cannot open");
    tr_idx_set s;
    CU_ASSERT_EQUAL(tr_idx_load(&s, im, lb, 9), TR_EFORMAT); /* label 9 of 9 classes */
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "not below 9 classes"));
    /* a damaged gzip stream */
    char *bad = gt_test_path("damaged.gz");
    FILE *f = fopen(bad, "wb"), *g = fopen(im, "rb");
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, g);
    for (size_t i = 100; i < n; i++)
        buf[i] ^= 0x5a;
    fwrite(buf, 1, n, f);
    fclose(f);
    fclose(g);
    refused(bad, lb, TR_EFORMAT, "damaged.gz", "damaged.gz"); /* garbage: too short, or too long */
    /* a gzip stream cut in half */
    char *cut = gt_test_path("cut.gz");
    f = fopen(cut, "wb");
    fwrite(buf, 1, n / 2, f);
    fclose(f);
    g = fopen(im, "rb");
    n = fread(buf, 1, sizeof buf, g);
    fclose(g);
    f = fopen(cut, "wb");
    fwrite(buf, 1, n / 2, f);
    fclose(f);
    refused(cut, lb, TR_EFORMAT, "cut.gz", "truncated");
    free(cut);
    free(im); free(lb); free(swapped); free(magic); free(shortim); free(shortlb); free(header); free(count);
    free(longer); free(bad);
}

static const gt_test_case cases[] = {
    {"reads_gz_and_plain", test_trainer_cnn_data__reads_gz_and_plain},
    {"folder", test_trainer_cnn_data__folder},
    {"bad_files", test_trainer_cnn_data__bad_files},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_cnn_data", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
