/* close_mark.c: the mark a writer leaves on a trace it closed cleanly, and
 * the reader's test of it (close_mark.h).
 *
 * The mark is in SQLite's header, in the two fields an application may
 * use: application_id (offset 68) says "gtrc", user_version (offset 60)
 * holds a 32-bit digest of the whole file as it was at close, of its page
 * count and of the file change counter (offset 24) that the writing of the
 * mark leaves there. Writing the two fields is one SQLite transaction that
 * changes only page 1's header (the two fields, the change counter and the
 * version-valid-for number and SQLite version after it, offsets 92-99);
 * the digest reads those bytes as zeros. Any later write by SQLite changes
 * the counter, any other change to a byte changes the content hash, and
 * either makes the test fail: the reader then checks the file in full.
 *
 * The digest is a checksum, not a signature: anyone can compute it for a
 * file of their own. What it gives is that a file whose mark holds is the
 * file gtrace's writer closed, byte for byte, so far as damage (a bad disk,
 * a partial copy, an edit) goes; a file built to fool a reader still meets
 * every other protection of the reader (reader_check.c). This file does
 * not decide when the test replaces the check (reader_check.c does).
 */
#include "close_mark.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK_APPLICATION_ID 0x67747263u /* "gtrc" */
enum { HEADER_BYTES = 100, CHUNK_BYTES = 1 << 20 };

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

/* xxHash64's round and primes: four lanes over 32-byte stripes, a few
 * gigabytes a second, and a change in any byte changes the result. */
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

typedef struct hash_state {
    uint64_t lane[4];
    uint64_t n_bytes;
} hash_state;

static uint64_t round64(uint64_t acc, uint64_t w)
{
    return rotl64(acc + w * P2, 31) * P1;
}

static void hash_init(hash_state *h)
{
    h->lane[0] = P1 + P2;
    h->lane[1] = P2;
    h->lane[2] = 0;
    h->lane[3] = (uint64_t)0 - P1;
    h->n_bytes = 0;
}

/* len: a multiple of 32 (every SQLite page is) */
static void hash_add(hash_state *h, const unsigned char *p, size_t len)
{
    uint64_t a = h->lane[0], b = h->lane[1], c = h->lane[2], d = h->lane[3];
    for (size_t i = 0; i + 32 <= len; i += 32) {
        uint64_t w[4];
        memcpy(w, p + i, sizeof w); /* the bytes as this machine reads them: the digest is per byte order */
        a = round64(a, w[0]);
        b = round64(b, w[1]);
        c = round64(c, w[2]);
        d = round64(d, w[3]);
    }
    h->lane[0] = a, h->lane[1] = b, h->lane[2] = c, h->lane[3] = d;
    h->n_bytes += len;
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= P2;
    x ^= x >> 29;
    x *= P3;
    x ^= x >> 32;
    return x;
}

static uint32_t digest(const hash_state *h, uint32_t counter, uint32_t n_pages)
{
    uint64_t x = rotl64(h->lane[0], 1) + rotl64(h->lane[1], 7) + rotl64(h->lane[2], 12) + rotl64(h->lane[3], 18);
    x = mix(x ^ h->n_bytes);
    x = mix(x ^ ((uint64_t)counter << 32 | n_pages));
    uint32_t d = (uint32_t)(x ^ (x >> 32));
    return d ? d : 1; /* 0 is "no mark" */
}

static int read_full(int fd, unsigned char *buf, size_t len, off_t at)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, buf + got, len - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

typedef struct file_view {
    uint32_t page_bytes, n_pages, counter, valid_for, user_version, application_id;
    int64_t file_bytes;
} file_view;

static int read_header(int fd, file_view *v)
{
    unsigned char h[HEADER_BYTES];
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || read_full(fd, h, sizeof h, 0) != 0 ||
        memcmp(h, "SQLite format 3", 16) != 0)
        return -1;
    v->page_bytes = (uint32_t)h[16] << 8 | h[17];
    if (v->page_bytes == 1)
        v->page_bytes = 65536;
    if (v->page_bytes < 512 || (v->page_bytes & (v->page_bytes - 1)) != 0)
        return -1;
    v->counter = be32(h + 24);
    v->n_pages = be32(h + 28);
    v->user_version = be32(h + 60);
    v->application_id = be32(h + 68);
    v->valid_for = be32(h + 92);
    v->file_bytes = (int64_t)st.st_size;
    return 0;
}

/* The content hash of the file (its header's mark fields read as zeros);
 * -1 when it cannot be read or *stop becomes true. */
static int hash_file(int fd, const file_view *v, const atomic_bool *stop, hash_state *out)
{
    unsigned char *buf = malloc(CHUNK_BYTES);
    int rc = 0;
    if (!buf)
        return -1;
    hash_init(out);
    for (int64_t at = 0; at < v->file_bytes; at += CHUNK_BYTES) {
        size_t len = v->file_bytes - at < CHUNK_BYTES ? (size_t)(v->file_bytes - at) : CHUNK_BYTES;
        if ((stop && atomic_load_explicit(stop, memory_order_relaxed)) || read_full(fd, buf, len, (off_t)at) != 0) {
            rc = -1;
            break;
        }
        if (at == 0) {
            memset(buf + 24, 0, 4); /* the change counter */
            memset(buf + 60, 0, 4); /* user_version */
            memset(buf + 68, 0, 4); /* application_id */
            memset(buf + 92, 0, 8); /* version-valid-for, SQLite's version */
        }
        hash_add(out, buf, len);
    }
    free(buf);
    return rc;
}

/* Whether the header can carry a mark that holds: one file, its size the
 * header's page count (no log beside it, no pages missing or added). */
static bool whole_file(const file_view *v)
{
    return v->counter == v->valid_for && v->n_pages > 0 &&
           (int64_t)v->n_pages * v->page_bytes == v->file_bytes && v->file_bytes % 32 == 0;
}

int gt_close_mark_write(sqlite3 *db, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    file_view v;
    hash_state h;
    int rc = -1;
    if (fd < 0)
        return -1;
    if (read_header(fd, &v) != 0 || !whole_file(&v) || hash_file(fd, &v, NULL, &h) != 0)
        goto cleanup;
    /* the transaction that writes the mark adds one to the counter */
    uint32_t want = digest(&h, v.counter + 1, v.n_pages);
    char *sql = sqlite3_mprintf("BEGIN IMMEDIATE; PRAGMA application_id = %d; PRAGMA user_version = %d; COMMIT",
                                (int)MARK_APPLICATION_ID, (int)want);
    int erc = sql ? sqlite3_exec(db, sql, NULL, NULL, NULL) : SQLITE_NOMEM;
    sqlite3_free(sql);
    if (erc != SQLITE_OK) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        goto cleanup;
    }
    file_view after;
    if (read_header(fd, &after) == 0 && whole_file(&after) && after.counter == v.counter + 1 &&
        after.n_pages == v.n_pages && after.user_version == want && after.application_id == MARK_APPLICATION_ID)
        rc = 0;
    else /* not as foreseen: no mark, and the file gets the full check */
        sqlite3_exec(db, "PRAGMA user_version = 0", NULL, NULL, NULL);
cleanup:
    close(fd);
    return rc;
}

bool gt_close_mark_present(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    file_view v;
    bool present = fd >= 0 && read_header(fd, &v) == 0 && v.application_id == MARK_APPLICATION_ID &&
                   v.user_version != 0 && whole_file(&v);
    if (fd >= 0)
        close(fd);
    return present;
}

bool gt_close_mark_holds(const char *path, const atomic_bool *stop)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    file_view v;
    hash_state h;
    bool holds = false;
    if (fd < 0)
        return false;
    if (read_header(fd, &v) == 0 && v.application_id == MARK_APPLICATION_ID && v.user_version != 0 &&
        whole_file(&v) && hash_file(fd, &v, stop, &h) == 0)
        holds = digest(&h, v.counter, v.n_pages) == v.user_version;
    close(fd);
    return holds;
}
