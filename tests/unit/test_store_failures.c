/* test_store_failures.c: failures injected into the writer: allocation
 * failure (SQLite's allocator is replaced in this process; the writer
 * allocates through it) and a full disk (a VFS shim that refuses writes past
 * a budget). The file keeps exactly the committed batches, and the writer
 * can go on. */
#include "config.h"

#include "gt_store.h"
#include "gt_test.h"
#include "schema.h"
#include "store_writes.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- failing allocator ------------------------------------------------------ */

static sqlite3_mem_methods real_mem;
static long alloc_countdown = -1; /* allocations left before failing; -1: never fail */
static long n_allocs;             /* counted while alloc_countdown >= -1 */

static bool alloc_fails(void)
{
    n_allocs++;
    if (alloc_countdown < 0)
        return false;
    if (alloc_countdown == 0)
        return true; /* and every later one, until disarmed */
    alloc_countdown--;
    return false;
}
static void *failing_malloc(int n)
{
    return alloc_fails() ? NULL : real_mem.xMalloc(n);
}
static void *failing_realloc(void *p, int n)
{
    return alloc_fails() ? NULL : real_mem.xRealloc(p, n);
}

/* ---- a disk that fills up ---------------------------------------------------- */

static sqlite3_vfs *real_vfs;
static sqlite3_vfs full_vfs;
static sqlite3_int64 write_budget = -1; /* bytes that may still be written; -1: no limit */

typedef struct full_file {
    sqlite3_file base;
    sqlite3_file *real; /* just after this struct */
} full_file;

#define REAL(f) (((full_file *)(f))->real)
static int ff_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int ff_read(sqlite3_file *f, void *p, int n, sqlite3_int64 off) { return REAL(f)->pMethods->xRead(REAL(f), p, n, off); }
static int ff_write(sqlite3_file *f, const void *p, int n, sqlite3_int64 off)
{
    if (write_budget >= 0) {
        if (n > write_budget) {
            write_budget = 0;
            return SQLITE_FULL;
        }
        write_budget -= n;
    }
    return REAL(f)->pMethods->xWrite(REAL(f), p, n, off);
}
static int ff_truncate(sqlite3_file *f, sqlite3_int64 size) { return REAL(f)->pMethods->xTruncate(REAL(f), size); }
static int ff_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int ff_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int ff_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int ff_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int ff_check_lock(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int ff_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int ff_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int ff_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int ff_shm_map(sqlite3_file *f, int i, int n, int ext, void volatile **p) { return REAL(f)->pMethods->xShmMap(REAL(f), i, n, ext, p); }
static int ff_shm_lock(sqlite3_file *f, int off, int n, int flags) { return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags); }
static void ff_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int ff_shm_unmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
/* no memory-mapped I/O: every write goes through ff_write */
static int ff_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p) { *p = NULL; return SQLITE_OK; }
static int ff_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p) { return SQLITE_OK; }

static const sqlite3_io_methods full_io = {
    3, ff_close, ff_read, ff_write, ff_truncate, ff_sync, ff_file_size, ff_lock, ff_unlock,
    ff_check_lock, ff_control, ff_sector, ff_device, ff_shm_map, ff_shm_lock, ff_shm_barrier,
    ff_shm_unmap, ff_fetch, ff_unfetch,
};

static int ff_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags)
{
    full_file *ff = (full_file *)f;
    ff->real = (sqlite3_file *)(ff + 1);
    int rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out_flags);
    ff->base.pMethods = rc == SQLITE_OK ? &full_io : NULL;
    return rc;
}

/* ---- failures -------------------------------------------------------------------------- */

/* Allocations a batch makes, to aim failures at all of them. */
static long allocs_of_batch(const char *path)
{
    gt_writer *w = open_writer(path);
    int64_t t = 0;
    mix m = {0};
    write_batch(w, 400, 1, &t, &m);
    n_allocs = 0;
    write_batch(w, 1500, 2, &t, &m);
    long n = n_allocs;
    gt_writer_free(w);
    return n;
}

static void test_store_failures__allocation_failure(void)
{
    char *path = fresh_path("nomem.sqlite");
    long n_batch = allocs_of_batch(path);
    CU_ASSERT_TRUE(n_batch > 10);
    int n_failed = 0;
    long step = n_batch / 60 + 1;
    for (long i = 0; i <= n_batch; i += step) {
        unlink(path);
        gt_writer *w = open_writer(path);
        int64_t t = 0;
        mix before = {0}, failed = {0}, after = {0};
        CU_ASSERT_EQUAL_FATAL(write_batch(w, 400, 1, &t, &before), GT_OK);
        alloc_countdown = i;
        int st = write_batch(w, 1500, 2, &t, &failed);
        alloc_countdown = -1;
        if (st != GT_OK) {
            n_failed++;
            CU_ASSERT_EQUAL(st, GT_ERR_NOMEM);
            CU_ASSERT_TRUE(names_file(path));
            CU_ASSERT_EQUAL(gt_writer_count(w, GT_EV_KERNEL), before.n_kernels);
            check_counts(path, &before); /* while the writer is still open */
        } else {
            add_mix(&before, &failed);
        }
        /* the writer goes on, with the strings, launches and callchain ids
         * the failed batch had made */
        CU_ASSERT_EQUAL(write_batch(w, 200, st == GT_OK ? 3 : 2, &t, &after), GT_OK);
        add_mix(&before, &after);
        CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
        check_counts(path, &before);
    }
    CU_ASSERT_TRUE(n_failed > 10);

    /* in open: a failed open leaves no file behind */
    n_allocs = 0;
    gt_writer *w = open_writer(path = (free(path), fresh_path("nomem-open.sqlite")));
    long n_open = n_allocs;
    gt_writer_free(w);
    for (long i = 0; i < n_open; i += n_open / 40 + 1) {
        unlink(path);
        w = NULL;
        alloc_countdown = i;
        int st = gt_writer_open(&w, path, 0);
        alloc_countdown = -1;
        if (st != GT_OK) {
            CU_ASSERT_EQUAL(st, GT_ERR_NOMEM);
            CU_ASSERT_PTR_NULL(w);
            CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
        } else {
            CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
        }
    }

    /* the writer's own tables: strings, then launch configurations */
    unlink(path);
    w = open_writer(path);
    gt_string_id id = 0;
    alloc_countdown = 0;
    CU_ASSERT_EQUAL(gt_writer_intern(w, "first", &id), GT_ERR_NOMEM);
    alloc_countdown = -1;
    CU_ASSERT_TRUE(names_file(path));
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "intern"));
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(w), GT_OK);
    gt_event ev = kernel_event(10, intern(w, "first"), 1);
    alloc_countdown = 0;
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_ERR_NOMEM);
    alloc_countdown = -1;
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_ERR_INVALID); /* the batch went with the failure */
    CU_ASSERT_EQUAL(gt_writer_begin(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_add(w, &ev), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_commit(w), GT_OK);
    CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
    check_counts(path, &(mix){.n_kernels = 1});

    /* in close: what was committed stays readable */
    long n_close = 0;
    for (long i = 0; i <= n_close; i += n_close / 40 + 1) {
        unlink(path);
        w = open_writer(path);
        int64_t t = 0;
        mix m = {0};
        CU_ASSERT_EQUAL(write_batch(w, 300, 1, &t, &m), GT_OK);
        if (!n_close) { /* first, count what close allocates */
            n_allocs = 0;
            CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
            n_close = n_allocs;
            CU_ASSERT_TRUE(n_close > 0);
            continue;
        }
        alloc_countdown = i;
        int st = gt_writer_close(w);
        alloc_countdown = -1;
        CU_ASSERT_TRUE(st == GT_OK || st == GT_ERR_NOMEM);
        check_counts(path, &m);
    }
    free(path);
}

static void test_store_failures__disk_full(void)
{
    char *path = fresh_path("full.sqlite");
    static const sqlite3_int64 budgets[] = {0, 1, 4096, 30000, 100000, 250000, 500000, 800000};
    int n_failed = 0;
    for (size_t i = 0; i < sizeof budgets / sizeof budgets[0]; i++) {
        unlink(path);
        gt_writer *w = open_writer(path);
        int64_t t = 0;
        mix before = {0}, failed = {0}, after = {0};
        CU_ASSERT_EQUAL_FATAL(write_batch(w, 400, 1, &t, &before), GT_OK);
        write_budget = budgets[i];
        int st = write_batch(w, 20000, 2, &t, &failed); /* about 1 MB */
        write_budget = -1;
        if (st != GT_OK) {
            n_failed++;
            CU_ASSERT_EQUAL(st, GT_ERR_FULL);
            CU_ASSERT_TRUE(names_file(path));
            CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "full"));
            check_counts(path, &before); /* while the writer is still open */
        } else {
            add_mix(&before, &failed);
        }
        CU_ASSERT_EQUAL(write_batch(w, 200, st == GT_OK ? 3 : 2, &t, &after), GT_OK);
        add_mix(&before, &after);
        CU_ASSERT_EQUAL(gt_writer_close(w), GT_OK);
        check_counts(path, &before);
    }
    CU_ASSERT_EQUAL(n_failed, 8);

    /* the disk fills while closing: the committed batches stay readable */
    for (sqlite3_int64 budget = 0; budget < 3000000; budget = budget * 2 + 50000) {
        unlink(path);
        gt_writer *w = open_writer(path);
        int64_t t = 0;
        mix m = {0};
        CU_ASSERT_EQUAL(write_batch(w, 20000, 1, &t, &m), GT_OK);
        write_budget = budget;
        int st = gt_writer_close(w);
        write_budget = -1;
        CU_ASSERT_TRUE(st == GT_OK || st == GT_ERR_FULL);
        if (st != GT_OK)
            CU_ASSERT_TRUE(names_file(path));
        check_counts(path, &m);
    }
    free(path);
}

static const gt_test_case cases[] = {
    {"test_store_failures__allocation_failure", test_store_failures__allocation_failure},
    {"test_store_failures__disk_full", test_store_failures__disk_full},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    /* SQLite's allocator, and with it the writer's, can be made to fail;
     * files go through a VFS whose disk can be made full. */
    static sqlite3_mem_methods failing;
    if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem) != SQLITE_OK)
        return 99;
    failing = real_mem;
    failing.xMalloc = failing_malloc;
    failing.xRealloc = failing_realloc;
    if (sqlite3_config(SQLITE_CONFIG_MALLOC, &failing) != SQLITE_OK || sqlite3_initialize() != SQLITE_OK)
        return 99;
    real_vfs = sqlite3_vfs_find(NULL);
    if (!real_vfs)
        return 99;
    full_vfs = *real_vfs;
    full_vfs.zName = "gt-test-full";
    full_vfs.szOsFile = (int)sizeof(full_file) + real_vfs->szOsFile;
    full_vfs.xOpen = ff_open;
    full_vfs.pNext = NULL;
    if (sqlite3_vfs_register(&full_vfs, 1) != SQLITE_OK)
        return 99;

    const gt_test_suite suites[] = {{"store_failures", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
