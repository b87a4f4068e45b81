/* ckpt_io.h: what every checkpoint of the trainer shares, whatever the
 * model: the safetensors header built as text, the atomic write (a
 * temporary file beside the target, fsync, rename; only a regular file is
 * replaced; a signal that ends the process during a save removes the
 * temporary file), and on loading the file opened without waiting on a
 * FIFO, its header read, the metadata's fields read and range-checked with
 * messages naming the file and the field, the tensor table compared with
 * the one the model would write, and tensor data read into host or device
 * memory. ckpt.c (the GPT) and ckpt_cnn.c (the CNNs) build on it. */
#ifndef TR_CKPT_IO_H
#define TR_CKPT_IO_H

#include "backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { TR_CKPT_CHUNK_BYTES = 16 << 20 }; /* device <-> file copies go through a host buffer of at most this */

/* A growing text buffer (the header); tr_ckpt_put appends printf-style. */
typedef struct tr_ckpt_buf { char *s; size_t n, cap; } tr_ckpt_buf;
void tr_ckpt_put(tr_ckpt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The memory of be (NULL: the host) is the host's. */
bool tr_ckpt_on_host(const tr_backend *be);

/* One stretch of tensor data written after the header. */
typedef struct tr_ckpt_blob { const void *p; size_t n_bytes; } tr_ckpt_blob;
/* Closes the header h (its last "}", padding to 8 bytes) and writes it and
 * the blobs to path atomically. be NULL or the CPU: the blobs are host
 * memory; else device memory of be, copied through a host buffer. */
int tr_ckpt_write(const char *path, tr_ckpt_buf *h, const tr_ckpt_blob *blobs, int n_blobs, tr_backend *be);

/* Whether a save to path can go there (nothing, or a regular file, is
 * there; a file can be created beside it), so that a run refuses a bad
 * --save before any work rather than after. Writes nothing that stays. */
int tr_ckpt_check_target(const char *path);

/* An open checkpoint file whose header has been read. */
typedef struct tr_ckpt_file {
    const char *path;
    FILE *f;
    char *header;
    uint64_t hlen;
    long long size;
    int open_errno; /* open's, when it failed */
} tr_ckpt_file;
/* Opens path (a regular file only) and reads a safetensors header that
 * names "format":"gtrace-trainer-..." in its metadata (any kind). */
int tr_ckpt_open(tr_ckpt_file *c, const char *path);
void tr_ckpt_close(tr_ckpt_file *c);
/* Whether the metadata's format is this one. */
bool tr_ckpt_has_format(const tr_ckpt_file *c, const char *format);
/* The value of "key":"..." in the header as a number (-1 if absent or not one). */
int tr_ckpt_meta_num(const char *header, const char *key, long long *out);
/* Its text, for messages ("?" if absent). */
const char *tr_ckpt_meta_str(const char *header, const char *key, char *buf, size_t n);
/* A whole number of the metadata in [lo, hi], or an error naming the file and the field. */
int tr_ckpt_meta_field(const tr_ckpt_file *c, const char *key, long long lo, long long hi, long long *out);
/* The dynamic loss scale a run saved ("loss_scale", "loss_scale_good_steps"
 * up to max_good): *scale 0 and *good 0 when it saved none. */
int tr_ckpt_meta_loss_scale(const tr_ckpt_file *c, long long max_good, double *scale, int *good);
/* The tensor table (want: the one this model writes) is in the header and
 * the file's size is the header's plus data_bytes. */
int tr_ckpt_check_table(const tr_ckpt_file *c, const char *want, size_t data_bytes);
/* Reads n_bytes at data_off of the data (after the header) into dst (memory
 * of be, NULL: the host), calling check (if any) on each chunk as read
 * (p: its bytes on the host, done: its offset in dst) before it is stored. */
typedef int (*tr_ckpt_check_fn)(void *ctx, const void *p, size_t n_bytes, size_t done);
int tr_ckpt_read(const tr_ckpt_file *c, uint64_t data_off, void *dst, size_t n_bytes, tr_backend *be,
                 tr_ckpt_check_fn check, void *ctx);

#endif
