/* data_idx.h: image classification data in the idx format of MNIST and
 * Fashion-MNIST (gzip-compressed or plain): an images file (magic 0x803,
 * n x rows x cols bytes) and a labels file (magic 0x801, n bytes). It reads
 * whole files into memory (Fashion-MNIST's training set is 47 MB); it does
 * not batch, shuffle or normalize (model_cnn.c does). */
#ifndef TR_DATA_IDX_H
#define TR_DATA_IDX_H

#include <stdint.h>

/* Where Debian's dataset-fashion-mnist package puts the four files. */
#define TR_IDX_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

typedef struct tr_idx_set {
    int n, rows, cols;
    uint8_t *images; /* (n, rows, cols), 0..255 */
    uint8_t *labels; /* (n), each below n_classes */
} tr_idx_set;

/* Reads an images file and its labels file; TR_EFORMAT naming the file when
 * the magic is wrong, a file is truncated or longer than its header says,
 * the counts differ or a label is not below n_classes; TR_EIO when a file
 * cannot be opened. */
int tr_idx_load(tr_idx_set *out, const char *images_path, const char *labels_path, int n_classes);
/* The training and test sets of dir (NULL: TR_IDX_DEFAULT_DIR), named
 * train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-*: with or
 * without ".gz". A missing default folder names the Debian package. */
int tr_idx_load_dir(tr_idx_set *train, tr_idx_set *test, const char *dir, int n_classes);
void tr_idx_release(tr_idx_set *s);

#endif
