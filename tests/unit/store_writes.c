/* store_writes.c: the helpers of store_writes.h. */
#include "store_writes.h"

#include "gt_test.h"
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *fresh_path(const char *name)
{
    char *path = gt_test_path(name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    const char *suffixes[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < 4; i++) {
        char p[4200];
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
    return path;
}

sqlite3 *open_ro(const char *path)
{
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    CU_ASSERT_EQUAL(rc, SQLITE_OK);
    if (rc != SQLITE_OK) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* First column of the first row; -1 when the query fails. */
int64_t query_int(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *stmt = NULL;
    int64_t v = -1;
    if (db && sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
        v = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    return v;
}

/* First column of the first row, in buf; "" when absent or NULL. */
const char *query_text(sqlite3 *db, const char *sql, char *buf, size_t n_bytes)
{
    sqlite3_stmt *stmt = NULL;
    buf[0] = '\0';
    if (db && sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW &&
        sqlite3_column_text(stmt, 0))
        snprintf(buf, n_bytes, "%s", (const char *)sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    return buf;
}

bool integrity_ok(sqlite3 *db)
{
    char buf[256];
    return strcmp(query_text(db, "PRAGMA integrity_check", buf, sizeof buf), "ok") == 0;
}

gt_writer *open_writer(const char *path)
{
    gt_writer *w = NULL;
    int st = gt_writer_open(&w, path, 0);
    CU_ASSERT_EQUAL(st, GT_OK);
    if (st != GT_OK)
        fprintf(stderr, "open: %s\n", gt_error_last());
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    return w;
}

gt_string_id intern(gt_writer *w, const char *s)
{
    gt_string_id id = 0;
    CU_ASSERT_EQUAL(gt_writer_intern(w, s, &id), GT_OK);
    return id;
}

gt_event kernel_event(int64_t start, gt_string_id name, int grid_x)
{
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = start;
    k->end_ns = start + 1500;
    k->global_pid = gt_global_pid(4242);
    k->device_id = 0;
    k->context_id = 1;
    k->stream_id = 7;
    k->correlation_id = start / 10;
    k->demangled_name = k->short_name = name;
    k->grid_x = grid_x;
    k->grid_y = k->grid_z = 1;
    k->block_x = 256;
    k->block_y = k->block_z = 1;
    k->registers_per_thread = 32;
    k->grid_id = start / 10;
    k->launch_type = 1;
    return ev;
}


/* A batch shaped like a training step: per launch an API call and a kernel,
 * an NVTX range per 8 launches, a copy per 32, an allocation with its stack
 * per 64. Names depend on `seed`, so each batch interns new strings and new
 * launch configurations. Stops at the first failure and returns it. */
int write_batch(gt_writer *w, int n_launches, unsigned seed, int64_t *t_ns, mix *m)
{
    int st = gt_writer_begin(w);
    for (int i = 0; i < n_launches && st == GT_OK; i++) {
        char name[64];
        snprintf(name, sizeof name, "kernel_%u_%d", seed, i % 40);
        gt_string_id kname = 0, api = 0;
        st = gt_writer_intern(w, name, &kname);
        if (st == GT_OK)
            st = gt_writer_intern(w, "cudaLaunchKernel_v7000", &api);
        int64_t t = *t_ns += 2000;
        gt_event ev = {.kind = GT_EV_API};
        ev.u.api = (gt_api_call){.start_ns = t - 900, .end_ns = t - 100, .global_tid = gt_global_tid(4242, 4243),
                                 .correlation_id = t / 10, .name = api};
        if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
            m->n_api++;
        ev = kernel_event(t, kname, 1 + i % 13);
        if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
            m->n_kernels++;
        if (st == GT_OK && i % 8 == 0) {
            gt_string_id text = 0;
            snprintf(name, sizeof name, "step %u.%d", seed, i);
            st = gt_writer_intern(w, name, &text);
            ev = (gt_event){.kind = GT_EV_NVTX};
            ev.u.nvtx = (gt_nvtx){.start_ns = t - 1000, .end_ns = t + 1000, .event_type = GT_NVTX_PUSHPOP,
                                  .text = text, .global_tid = gt_global_tid(4242, 4243)};
            if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
                m->n_nvtx++;
        }
        if (st == GT_OK && i % 32 == 0) {
            ev = (gt_event){.kind = GT_EV_MEMCPY};
            ev.u.memcpy = (gt_memcpy){.start_ns = t + 10, .end_ns = t + 500, .global_pid = gt_global_pid(4242),
                                      .bytes = 4096, .copy_kind = GT_COPY_HTOD, .dst_kind = GT_MEM_DEVICE};
            if ((st = gt_writer_add(w, &ev)) == GT_OK)
                m->n_memcpy++;
        }
        if (st == GT_OK && i % 64 == 0) {
            gt_string_id sym = 0;
            snprintf(name, sizeof name, "alloc_site_%u_%d", seed, i);
            st = gt_writer_intern(w, name, &sym);
            gt_frame frames[2] = {{.symbol = sym, .module = api}, {.symbol = api, .module = api}};
            int64_t chain = (int64_t)seed * 1000000 + i + 1;
            if (st == GT_OK)
                st = gt_writer_add_callchain(w, chain, frames, 2);
            ev = (gt_event){.kind = GT_EV_GPU_MEMORY};
            ev.u.gpu_memory = (gt_gpu_memory){.start_ns = t, .global_pid = gt_global_pid(4242), .address = 0x7f0000 + i,
                                              .bytes = 1 << 20, .mem_kind = GT_MEM_DEVICE, .callchain_id = chain};
            if (st == GT_OK && (st = gt_writer_add(w, &ev)) == GT_OK)
                m->n_gpu_memory++;
        }
    }
    if (st == GT_OK)
        st = gt_writer_commit(w);
    return st;
}

/* Rows of `table`; 0 for a table a closed trace leaves out (nothing went in). */
int64_t count_rows(sqlite3 *db, const char *table, const char *where)
{
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM sqlite_master WHERE name = '%s'", table);
    if (query_int(db, q) == 0)
        return 0;
    snprintf(q, sizeof q, "SELECT count(*) FROM %s%s%s", table, where ? " WHERE " : "", where ? where : "");
    return query_int(db, q);
}

/* The file holds exactly `m`, and is sound. */
void check_counts(const char *path, const mix *m)
{
    sqlite3 *db = open_ro(path);
    CU_ASSERT_TRUE(integrity_ok(db));
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_KERNEL", NULL), m->n_kernels);
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_RUNTIME", NULL), m->n_api);
    CU_ASSERT_EQUAL(count_rows(db, "NVTX_EVENTS", NULL), m->n_nvtx);
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_MEMCPY", NULL), m->n_memcpy);
    CU_ASSERT_EQUAL(count_rows(db, "CUDA_GPU_MEMORY_USAGE_EVENTS", NULL), m->n_gpu_memory);
    CU_ASSERT_EQUAL(count_rows(db, GT_TABLE_GPU_MEMORY_STACKS, NULL), m->n_gpu_memory);
    /* every name an event refers to is there */
    CU_ASSERT_EQUAL(count_rows(db, "CUPTI_ACTIVITY_KIND_KERNEL", "shortName NOT IN (SELECT id FROM StringIds)"), 0);
    /* an NVTX message is in text or (registered) in textId, never both */
    CU_ASSERT_EQUAL(count_rows(db, "NVTX_EVENTS", "textId NOT IN (SELECT id FROM StringIds)"
                                                  " OR (text IS NULL) = (textId IS NULL)"), 0);
    CU_ASSERT_EQUAL(count_rows(db, "CUDA_CALLCHAINS", "symbol NOT IN (SELECT id FROM StringIds)"), 0);
    sqlite3_close(db);
}

void add_mix(mix *a, const mix *b)
{
    a->n_kernels += b->n_kernels;
    a->n_api += b->n_api;
    a->n_nvtx += b->n_nvtx;
    a->n_memcpy += b->n_memcpy;
    a->n_gpu_memory += b->n_gpu_memory;
}

bool names_file(const char *path)
{
    return strstr(gt_error_last(), path) != NULL;
}
