/* test_trainer_data.c: datasets (folders of text, fortune separators, llm.c
 * .bin files, bad files) and the loader (each sample once per epoch, the
 * same batches with or without workers, seeds). */
#include "data.h"
#include "error.h"
#include "gt_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void write_text(const char *name, const char *text)
{
    char *p = gt_test_path(name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    free(p);
}

static void test_trainer_data__folder(void)
{
    char *dir = gt_test_path("fortunes");
    mkdir(dir, 0755);
    write_text("fortunes/b", "second\n%\nthird\n");
    write_text("fortunes/a", "first\n");
    write_text("fortunes/a.dat", "binary index");
    char *target = gt_test_path("fortunes/b"), *link = gt_test_path("fortunes/b.u8"),
         *link2 = gt_test_path("fortunes/zz");
    CU_ASSERT_EQUAL(symlink(target, link), 0);
    CU_ASSERT_EQUAL(symlink(target, link2), 0); /* links are skipped whatever their name */
    tr_dataset *d;
    CU_ASSERT_EQUAL_FATAL(tr_dataset_open(&d, dir), TR_OK);
    const char *want = "first\nsecond\n\nthird\n"; /* sorted by name; the % line became empty */
    CU_ASSERT_EQUAL(d->n_tokens, strlen(want));
    CU_ASSERT_EQUAL(d->n_files, 2);
    CU_ASSERT_EQUAL(d->vocab_size, 256);
    int same = d->n_tokens == strlen(want);
    for (size_t i = 0; same && i < d->n_tokens; i++)
        same = d->tokens[i] == (unsigned char)want[i];
    CU_ASSERT(same);
    CU_ASSERT_EQUAL(d->n_train, d->n_tokens - d->n_tokens / 10);
    tr_dataset_free(d);
    char *empty = gt_test_path("empty");
    mkdir(empty, 0755);
    CU_ASSERT_EQUAL(tr_dataset_open(&d, empty), TR_EFORMAT);
    CU_ASSERT_EQUAL(tr_dataset_open(&d, "/nonexistent/data"), TR_EIO);
    free(dir); free(target); free(link); free(link2); free(empty);
}

static char *write_bin(const char *name, int magic, int n_header, int n_written)
{
    char *p = gt_test_path(name);
    FILE *f = fopen(p, "wb");
    int32_t h[256] = {magic, 1, n_header};
    fwrite(h, sizeof h, 1, f);
    for (int i = 0; i < n_written; i++) {
        uint16_t t = (uint16_t)(i * 101 % 50000);
        fwrite(&t, 2, 1, f);
    }
    fclose(f);
    return p;
}

static void test_trainer_data__bin(void)
{
    char *p = write_bin("ok.bin", TR_BIN_MAGIC, 1000, 1000);
    tr_dataset *d;
    CU_ASSERT_EQUAL_FATAL(tr_dataset_open(&d, p), TR_OK);
    CU_ASSERT_EQUAL(d->n_tokens, 1000);
    CU_ASSERT_EQUAL(d->tokens[7], 707);
    CU_ASSERT_EQUAL(d->vocab_size, 50257);
    tr_dataset_free(d);
    free(p);
    p = write_bin("magic.bin", 12345, 10, 10);
    CU_ASSERT_EQUAL(tr_dataset_open(&d, p), TR_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "magic"));
    free(p);
    p = write_bin("short.bin", TR_BIN_MAGIC, 1000, 999);
    CU_ASSERT_EQUAL(tr_dataset_open(&d, p), TR_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "1000 tokens"));
    free(p);
}

/* Counts how often each sample appears in the first epoch of a loader. */
static void one_epoch(tr_loader *l, int B, int T, int *seen, const tr_dataset *d)
{
    int64_t n = tr_loader_batches_per_epoch(l);
    for (int64_t k = 0; k < n; k++) {
        const tr_batch *b;
        CU_ASSERT_EQUAL(tr_loader_next(l, &b), TR_OK);
        CU_ASSERT_EQUAL(b->index, k);
        for (int r = 0; r < B; r++) {
            int64_t s = tr_loader_sample_of(l, k, r);
            seen[s]++;
            /* the rows are the tokens of that sample, targets shifted by one */
            CU_ASSERT_EQUAL(b->inputs[r * T], d->tokens[s * T]);
            CU_ASSERT_EQUAL(b->targets[r * T + T - 1], d->tokens[s * T + T]);
        }
    }
}

static void test_trainer_data__loader(void)
{
    tr_dataset d = {0};
    enum { B = 4, T = 8, N = 24 * 8 * 4 + 1 }; /* 96 samples, 24 batches: nothing dropped */
    uint16_t tok[N];
    for (int i = 0; i < N; i++)
        tok[i] = (uint16_t)(i % 251);
    d.tokens = tok;
    d.n_tokens = d.n_train = N;
    d.vocab_size = 256;
    int workers[3] = {0, 1, 3};
    int32_t first[3][B * T];
    for (int w = 0; w < 3; w++) {
        tr_loader *l;
        CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, &d, 0, N, B, T, 7, workers[w], NULL), TR_OK);
        CU_ASSERT_EQUAL(tr_loader_n_samples(l), 96);
        int seen[96] = {0};
        one_epoch(l, B, T, seen, &d);
        int once = 1;
        for (int s = 0; s < 96; s++)
            once &= seen[s] == 1;
        CU_ASSERT(once);
        /* the first batch of epoch 1 follows a different order than epoch 0's */
        const tr_batch *b;
        CU_ASSERT_EQUAL(tr_loader_next(l, &b), TR_OK);
        CU_ASSERT_EQUAL(b->index, 24);
        CU_ASSERT_EQUAL(tr_loader_seek(l, 0), TR_OK);
        CU_ASSERT_EQUAL(tr_loader_next(l, &b), TR_OK);
        memcpy(first[w], b->inputs, sizeof first[w]);
        tr_loader_free(l);
    }
    /* workers do not change the batches */
    CU_ASSERT(memcmp(first[0], first[1], sizeof first[0]) == 0);
    CU_ASSERT(memcmp(first[0], first[2], sizeof first[0]) == 0);
    /* another seed, another order */
    tr_loader *l;
    CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, &d, 0, N, B, T, 8, 0, NULL), TR_OK);
    const tr_batch *b;
    tr_loader_next(l, &b);
    CU_ASSERT(memcmp(first[0], b->inputs, sizeof first[0]) != 0);
    tr_loader_free(l);
    /* a split shorter than one sample (T + 1 tokens) is refused */
    CU_ASSERT_EQUAL(tr_loader_new(&l, &d, 0, T, B, T, 1, 0, NULL), TR_EINVAL);
}

/* B does not divide the sample count: nothing is dropped, each run of
 * n_samples consecutive rows is one epoch, and a batch may straddle two. */
static void test_trainer_data__wrap(void)
{
    tr_dataset d = {0};
    enum { B = 4, T = 8, S = 10, N = S * T + 1, K = 5 }; /* 10 samples, 5 batches = 2 epochs */
    uint16_t tok[N];
    for (int i = 0; i < N; i++)
        tok[i] = (uint16_t)(i % 251);
    d.tokens = tok;
    d.n_tokens = d.n_train = N;
    d.vocab_size = 256;
    for (int w = 0; w < 2; w++) {
        tr_loader *l;
        CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, &d, 0, N, B, T, 3, w, NULL), TR_OK);
        CU_ASSERT_EQUAL(tr_loader_batches_per_epoch(l), 3);
        int seen[2][S] = {{0}};
        for (int k = 0; k < K; k++) {
            const tr_batch *b;
            CU_ASSERT_EQUAL_FATAL(tr_loader_next(l, &b), TR_OK);
            for (int r = 0; r < B; r++) {
                int64_t s = tr_loader_sample_of(l, k, r);
                CU_ASSERT_FATAL(s >= 0 && s < S);
                CU_ASSERT_EQUAL(b->inputs[r * T], tok[s * T]);
                seen[(k * B + r) / S][s]++;
            }
        }
        for (int e = 0; e < 2; e++)
            for (int s = 0; s < S; s++)
                CU_ASSERT_EQUAL(seen[e][s], 1);
        tr_loader_free(l);
    }
    /* a split of fewer samples than B still makes batches */
    tr_loader *l;
    CU_ASSERT_EQUAL_FATAL(tr_loader_new(&l, &d, 0, 2 * T + 1, B, T, 3, 0, NULL), TR_OK);
    const tr_batch *b;
    CU_ASSERT_EQUAL(tr_loader_next(l, &b), TR_OK);
    CU_ASSERT_NOT_EQUAL(tr_loader_sample_of(l, 0, 0), tr_loader_sample_of(l, 0, 1));
    tr_loader_free(l);
}

static const gt_test_case cases[] = {
    {"test_trainer_data__folder", test_trainer_data__folder},
    {"test_trainer_data__bin", test_trainer_data__bin},
    {"test_trainer_data__loader", test_trainer_data__loader},
    {"test_trainer_data__wrap", test_trainer_data__wrap},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_data", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
