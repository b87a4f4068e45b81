/* test_analyze_load.c: loading a trace into the analysis model through the
 * store's bulk reads (gt_bulk_*): on a trace with every table, stored out of
 * time order (one event per batch, so rows stay in the order written), the
 * rows of each kind are gt_iter's rows in stored order; the model built on
 * two threads from them is in time order with equal elements in the order
 * written; a damaged table fails with one line naming the file; rows with
 * values out of range are left out as gt_iter leaves them out; and the
 * model's sort keeps equal elements in order on any input; its arrays
 * are made at the size of what they hold. */
#include "analyze_fixture.h"
#include "analyze_int.h"
#include "gt_store_bulk.h"

#include <malloc.h>
#include <sqlite3.h>
#include <stdio.h>

#define TID2 gt_global_tid(PID, 77)

/* One event in a batch of its own: the writer sorts a batch by start, so
 * this keeps the rows in the order they are added. */
static void add_alone(fx *f, const gt_event *ev)
{
    fx_add(f, ev);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(f->w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(f->w), 0);
}

static gt_event kernel(fx *f, int64_t s, int64_t e, const char *name, int32_t stream, int64_t corr)
{
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = s;
    k->end_ns = e;
    k->global_pid = gt_global_pid(PID);
    k->stream_id = stream;
    k->correlation_id = corr;
    k->demangled_name = k->short_name = k->mangled_name = fx_s(f, name);
    k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
    return ev;
}

static gt_event nvtx(fx *f, int type, int64_t s, int64_t e, const char *text, int64_t tid, int32_t cat, int64_t bytes)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = s;
    n->end_ns = e;
    n->event_type = type;
    n->text = fx_s(f, text);
    n->global_tid = tid;
    n->domain_id = cat ? 3 : 0;
    n->category = cat;
    if (bytes >= 0) {
        n->payload_kind = GT_PAYLOAD_U64;
        n->payload.u64 = (uint64_t)bytes;
    }
    return ev;
}

/* A trace with a row in every event table, written against time order:
 * later events first, ties (same start and end) in a known order. */
static char *every_table(const char *name)
{
    fx f;
    fx_open(&f, name);
    gt_event ev;
    for (int i = 9; i >= 0; i--) { /* kernels and their launches, newest first */
        int64_t s = 100 * US + i * 50 * US;
        fx_api(&f, s - 10 * US, s - 5 * US, "cudaLaunchKernel_v7000", 100 + i);
        ev = kernel(&f, s, s + 20 * US, i % 2 ? "gemm" : "relu", 7, 100 + i);
        add_alone(&f, &ev);
    }
    /* a tie: the same start and end, "tie_b" written before "tie_a" */
    ev = kernel(&f, 90 * US, 95 * US, "tie_b", 9, 0);
    add_alone(&f, &ev);
    ev = kernel(&f, 90 * US, 95 * US, "tie_a", 9, 0);
    add_alone(&f, &ev);
    fx_copy(&f, 600 * US, 610 * US, "cudaMemcpyAsync_v3020", 605 * US, 640 * US, GT_COPY_HTOD, GT_MEM_PAGEABLE, 4 * MIB);
    fx_copy(&f, 20 * US, 30 * US, "cudaMemcpyAsync_v3020", 25 * US, 60 * US, GT_COPY_DTOH, GT_MEM_PINNED, MIB);
    ev = (gt_event){.kind = GT_EV_MEMSET};
    ev.u.memset = (gt_memset){70 * US, 75 * US, gt_global_pid(PID), 0, 1, 7, 0, 0, 4096, GT_MEM_DEVICE};
    add_alone(&f, &ev);
    ev = (gt_event){.kind = GT_EV_SYNC};
    ev.u.sync = (gt_sync){700 * US, 720 * US, gt_global_pid(PID), 0, 1, 7, 0, GT_SYNC_STREAM, 0};
    add_alone(&f, &ev);
    /* NVTX: steps stored after the ranges inside them (as they end), a
     * category, a communication range with its bytes, a mark */
    ev = nvtx(&f, GT_NVTX_CATEGORY, 0, -1, "communication", TID, 5, -1);
    add_alone(&f, &ev);
    for (int step = 1; step >= 0; step--) {
        int64_t s = step * 300 * US;
        ev = nvtx(&f, GT_NVTX_PUSHPOP, s + 10 * US, s + 100 * US, "forward", TID, 0, -1);
        add_alone(&f, &ev);
        ev = nvtx(&f, GT_NVTX_PUSHPOP, s + 100 * US, s + 200 * US, "backward", TID, 0, -1);
        add_alone(&f, &ev);
        ev = nvtx(&f, GT_NVTX_PUSHPOP, s, s + 290 * US, step ? "step 1" : "step 0", TID, 0, -1);
        add_alone(&f, &ev);
    }
    ev = nvtx(&f, GT_NVTX_STARTEND, 150 * US, 180 * US, "allreduce", TID2, 5, 8 * MIB);
    add_alone(&f, &ev);
    ev = nvtx(&f, GT_NVTX_MARK, 50 * US, -1, "checkpoint", TID, 0, -1);
    add_alone(&f, &ev);
    ev = nvtx(&f, GT_NVTX_PUSHPOP, 10 * US, 20 * US, "loader", TID2, 0, -1);
    add_alone(&f, &ev);
    /* memory: a device allocation, a heap and blocks, freed before made in the file */
    ev = (gt_event){.kind = GT_EV_GPU_MEMORY};
    ev.u.gpu_memory = (gt_gpu_memory){40 * US, gt_global_pid(PID), 0, 1, 0x7f0000, 0, 64 * MIB, GT_MEM_DEVICE,
                                      GT_DEVMEM_ALLOC, 101, 7, 0};
    add_alone(&f, &ev);
    int64_t t_heap[] = {500 * US, 30 * US, 35 * US, 35 * US};
    int op_heap[] = {GT_REGION_UNREGISTER, GT_HEAP_REGISTER, GT_REGION_REGISTER, GT_REGION_REGISTER};
    uint64_t addr[] = {0x7f1000, 0x7f0000, 0x7f1000, 0x7f2000};
    for (int i = 0; i < 4; i++) {
        ev = (gt_event){.kind = GT_EV_HEAP};
        ev.u.heap = (gt_heap_event){t_heap[i], TID, op_heap[i], 0xbeef, addr[i], op_heap[i] == GT_HEAP_REGISTER ? 64 * MIB : MIB,
                                    1, 1, 0, 0, 0};
        add_alone(&f, &ev);
    }
    ev = (gt_event){.kind = GT_EV_CPU_OP};
    ev.u.cpu_op = (gt_cpu_op){5 * US, 8 * US, TID, fx_s(&f, "cpu_add"), 0, 100, 800};
    add_alone(&f, &ev);
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(f.w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(f.w), 0);
    return f.path;
}

/* The members a bulk read fills (gt_store_bulk.h), as one comparable row. */
typedef struct row { int64_t v[12]; } row;

static row row_of(const gt_event *ev)
{
    row r;
    memset(&r, 0, sizeof r);
    switch (ev->kind) {
    case GT_EV_KERNEL: {
        const gt_kernel *k = &ev->u.kernel;
        r = (row){{k->start_ns, k->end_ns, k->global_pid, k->device_id, k->stream_id, k->correlation_id,
                   k->demangled_name, k->short_name, k->mangled_name}};
        break;
    }
    case GT_EV_MEMCPY: {
        const gt_memcpy *c = &ev->u.memcpy;
        r = (row){{c->start_ns, c->end_ns, c->global_pid, c->device_id, c->stream_id, c->correlation_id, c->bytes,
                   c->copy_kind, c->src_kind, c->dst_kind}};
        break;
    }
    case GT_EV_MEMSET: {
        const gt_memset *s = &ev->u.memset;
        r = (row){{s->start_ns, s->end_ns, s->global_pid, s->device_id, s->stream_id, s->correlation_id, s->bytes,
                   s->mem_kind}};
        break;
    }
    case GT_EV_API: {
        const gt_api_call *a = &ev->u.api;
        r = (row){{a->start_ns, a->end_ns, a->global_tid, a->correlation_id, a->name, a->event_class}};
        break;
    }
    case GT_EV_SYNC:
        r = (row){{ev->u.sync.start_ns, ev->u.sync.end_ns}};
        break;
    case GT_EV_NVTX: {
        const gt_nvtx *n = &ev->u.nvtx;
        r = (row){{n->start_ns, n->end_ns, n->event_type, n->category, n->global_tid, n->domain_id, n->text,
                   n->text_registered, n->payload_kind, (int64_t)n->payload.u64}};
        break;
    }
    case GT_EV_GPU_MEMORY: {
        const gt_gpu_memory *g = &ev->u.gpu_memory;
        r = (row){{g->start_ns, g->device_id, (int64_t)g->address, g->bytes, g->operation, g->correlation_id,
                   g->stream_id, g->callchain_id}};
        break;
    }
    case GT_EV_HEAP: {
        const gt_heap_event *h = &ev->u.heap;
        r = (row){{h->start_ns, h->global_tid, h->operation, (int64_t)h->heap_id, (int64_t)h->address, h->bytes,
                   h->callchain_id}};
        break;
    }
    case GT_EV_CPU_OP: {
        const gt_cpu_op *o = &ev->u.cpu_op;
        r = (row){{o->start_ns, o->end_ns, o->global_tid, o->name, o->stream_id, o->flops, o->bytes}};
        break;
    }
    default:
        break;
    }
    return r;
}

/* Every row of a kind, through gt_iter (time order) or gt_bulk (stored order). */
static size_t read_rows(gt_trace *t, gt_event_kind kind, bool bulk, row *out, size_t cap)
{
    gt_bulk *b = NULL;
    gt_iter *it = NULL;
    gt_event ev;
    size_t n = 0;
    int rc;
    if (bulk) {
        CU_ASSERT_EQUAL_FATAL(gt_bulk_new(&b, t, kind), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    } else {
        CU_ASSERT_EQUAL_FATAL(gt_iter_new(&it, t, kind, INT64_MIN, INT64_MAX), 0);
    }
    while ((rc = bulk ? gt_bulk_next(b, &ev) : gt_iter_next(it, &ev)) == 1) {
        CU_ASSERT_EQUAL(ev.kind, kind);
        CU_ASSERT_FATAL(n < cap);
        out[n++] = row_of(&ev);
    }
    CU_ASSERT_EQUAL(rc, 0);
    gt_bulk_free(b);
    gt_iter_free(it);
    return n;
}

/* Stable, by start (v[0]): gt_iter's order from stored order. */
static void by_start(row *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        row x = v[i];
        size_t j = i;
        while (j > 0 && v[j - 1].v[0] > x.v[0]) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

static void test_analyze_load__bulk_matches_iter(void)
{
    char *path = every_table("every.sqlite");
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    enum { CAP = 64 };
    row a[CAP], b[CAP];
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t na = read_rows(t, (gt_event_kind)k, false, a, CAP);
        size_t nb = read_rows(t, (gt_event_kind)k, true, b, CAP);
        CU_ASSERT(na > 0); /* every table has rows */
        CU_ASSERT_EQUAL(na, nb);
        by_start(b, nb);
        for (size_t i = 0; i < na && i < nb; i++)
            if (memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
                fprintf(stderr, "%s row %zu differs\n", gt_event_kind_name((gt_event_kind)k), i);
                CU_FAIL("a bulk row is not gt_iter's");
            }
    }
    /* the stored order is not time order: the reads above had work to do */
    CU_ASSERT_EQUAL(read_rows(t, GT_EV_API, true, b, CAP), 12);
    CU_ASSERT(b[0].v[0] > b[1].v[0]);
    CU_ASSERT_EQUAL(read_rows(t, GT_EV_NVTX, true, b, CAP), 10);
    CU_ASSERT(b[2].v[0] > b[3].v[0]); /* a step stored after the ranges inside it */
    gt_trace_free(t);
    free(path);
}

static void test_analyze_load__model_in_time_order(void)
{
    char *path = every_table("every_model.sqlite");
    gt_trace *t = NULL;
    an_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    CU_ASSERT_EQUAL_FATAL(an_model_load(&m, t), 0); /* two loaders, two handles */
    CU_ASSERT_EQUAL(m->n_acts, 12 + 2 + 1); /* kernels, copies, the memset; no CPU ops beside kernels */
    for (size_t i = 1; i < m->n_acts; i++)
        CU_ASSERT(m->acts[i - 1].start_ns < m->acts[i].start_ns ||
                  (m->acts[i - 1].start_ns == m->acts[i].start_ns && m->acts[i - 1].end_ns <= m->acts[i].end_ns));
    /* equal elements in the order written */
    size_t tie = 0;
    while (tie < m->n_acts && m->acts[tie].start_ns != 90 * US)
        tie++;
    CU_ASSERT_FATAL(tie + 1 < m->n_acts);
    CU_ASSERT_STRING_EQUAL(an_str(m, m->acts[tie].name), "tie_b");
    CU_ASSERT_STRING_EQUAL(an_str(m, m->acts[tie + 1].name), "tie_a");
    CU_ASSERT_EQUAL(m->n_apis, 12);
    for (size_t i = 1; i < m->n_apis; i++)
        CU_ASSERT(m->apis[i - 1].start_ns <= m->apis[i].start_ns);
    CU_ASSERT_EQUAL(m->n_copies, 3);
    /* ranges by thread, then start, outer first, each inside its parent */
    CU_ASSERT_EQUAL(m->n_ranges, 8);
    for (size_t i = 0; i < m->n_ranges; i++) {
        const an_range *r = &m->ranges[i];
        if (i > 0)
            CU_ASSERT(m->ranges[i - 1].tid < r->tid ||
                      (m->ranges[i - 1].tid == r->tid && m->ranges[i - 1].start_ns <= r->start_ns));
        if (r->parent >= 0)
            CU_ASSERT(m->ranges[r->parent].start_ns <= r->start_ns && m->ranges[r->parent].end_ns >= r->end_ns);
    }
    int64_t fwd = an_model_range_at(m, TID, 320 * US);
    CU_ASSERT_FATAL(fwd >= 0);
    char *p = an_model_range_path(m, fwd);
    CU_ASSERT_STRING_EQUAL(p, "step 1 > forward");
    free(p);
    /* the communication range, with its bytes */
    CU_ASSERT_EQUAL_FATAL(m->n_comms, 1);
    CU_ASSERT_EQUAL(m->comms[0].bytes, 8 * MIB);
    /* memory by time, the block freed last although stored first */
    CU_ASSERT_EQUAL(m->n_mem, 5);
    for (size_t i = 1; i < m->n_mem; i++)
        CU_ASSERT(m->mem[i - 1].t_ns <= m->mem[i].t_ns);
    CU_ASSERT_EQUAL(m->mem[m->n_mem - 1].op, AN_BLOCK_FREE);
    /* the device allocation's thread is its API call's */
    CU_ASSERT_EQUAL(m->mem[3].op, AN_DEV_ALLOC);
    CU_ASSERT_EQUAL(m->mem[3].tid, TID);
    CU_ASSERT_EQUAL(m->span_start_ns, 0);
    CU_ASSERT_EQUAL(m->span_end_ns, 720 * US);
    an_model_free(m);
    gt_trace_free(t);
    free(path);
}

/* Runs SQL on a closed trace, as damage would change it. */
static void sql_on(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "sql_on: %s\n", err ? err : "?");
    CU_ASSERT_EQUAL(rc, SQLITE_OK);
    sqlite3_free(err);
    sqlite3_close(db);
}

static int64_t sql_int(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* Rows with values out of range or of the wrong type: the same rows left
 * out by a bulk read as by gt_iter, and the rest read. */
static void test_analyze_load__refused_rows(void)
{
    char *path = every_table("refused.sqlite");
    sql_on(path, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE correlationId = 101;"
                 "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start - 1 WHERE correlationId = 102;"
                 "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET streamId = 2.5 WHERE correlationId = 103;"
                 "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = 'later' WHERE correlationId = 104;"
                 "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = -5 WHERE copyKind = 2;"
                 "UPDATE GTRACE_MEMORY_EVENTS SET start = 9007199254740993 WHERE operation = 5;"
                 "UPDATE NVTX_EVENTS SET int64Value = 'many' WHERE category = 5 AND eventType = 60;");
    gt_trace *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    enum { CAP = 64 };
    row a[CAP], b[CAP];
    size_t want[GT_EV_N_KINDS] = {[GT_EV_KERNEL] = 9, [GT_EV_API] = 11, [GT_EV_MEMCPY] = 1, [GT_EV_HEAP] = 3};
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        size_t na = read_rows(t, (gt_event_kind)k, false, a, CAP);
        size_t nb = read_rows(t, (gt_event_kind)k, true, b, CAP);
        CU_ASSERT_EQUAL(na, nb);
        if (want[k])
            CU_ASSERT_EQUAL(nb, want[k]);
        by_start(b, nb);
        CU_ASSERT(na != nb || memcmp(a, b, na * sizeof *a) == 0);
    }
    /* the communication range went with its payload */
    an_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(an_model_load(&m, t), 0);
    CU_ASSERT_EQUAL(m->n_comms, 0);
    CU_ASSERT_EQUAL(m->n_acts, 9 + 1 + 1);
    an_model_free(m);
    gt_trace_free(t);
    free(path);
}

/* A table's page overwritten after the file was opened and checked (as a
 * file can change under a reader): the load fails with one line that names
 * the file, on whichever loader thread meets the damage. */
static void test_analyze_load__damaged_table(void)
{
    char *path = every_table("damaged.sqlite");
    int64_t page_bytes = sql_int(path, "PRAGMA page_size");
    int64_t root = sql_int(path, "SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_RUNTIME'");
    CU_ASSERT_FATAL(page_bytes > 0 && root > 1);
    gt_trace *t0 = NULL, *t = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t0, path, 0), 0);
    FILE *fp = fopen(path, "r+b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    char *junk = malloc((size_t)page_bytes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(junk);
    memset(junk, 0xff, (size_t)page_bytes);
    CU_ASSERT_EQUAL(fseek(fp, (long)((root - 1) * page_bytes), SEEK_SET), 0);
    CU_ASSERT_EQUAL(fwrite(junk, 1, (size_t)page_bytes, fp), (size_t)page_bytes);
    fclose(fp);
    free(junk);
    /* a second handle reads the file afresh (the first one's cache may hold the page) */
    CU_ASSERT_EQUAL_FATAL(gt_trace_reopen(&t, t0), 0);
    gt_bulk *b = NULL;
    gt_event ev;
    int rc = gt_bulk_new(&b, t, GT_EV_API);
    while (rc == 0 && (rc = gt_bulk_next(b, &ev)) == 1)
        rc = 0;
    gt_bulk_free(b);
    CU_ASSERT_EQUAL(rc, GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    CU_ASSERT_PTR_NULL(strchr(gt_error_last(), '\n'));
    gt_trace *t2 = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_reopen(&t2, t0), 0);
    an_model *m = NULL;
    CU_ASSERT_EQUAL(an_model_load(&m, t2), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), path));
    CU_ASSERT_PTR_NULL(strchr(gt_error_last(), '\n'));
    gt_trace_free(t2);
    gt_trace_free(t);
    gt_trace_free(t0);
    free(path);
}

/* The model's sort against a plain stable sort, on inputs of every shape:
 * sorted, reversed, runs that overlap, many equal elements. */
static int cmp_ref(const an_range *x, const an_range *y)
{
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

static void test_analyze_load__sort_is_stable(void)
{
    enum { N = 20000 };
    uint64_t seed = 12345;
    for (int shape = 0; shape < 5; shape++) {
        an_model m;
        memset(&m, 0, sizeof m);
        m.ranges = calloc(N, sizeof *m.ranges);
        an_range *want = calloc(N, sizeof *want);
        CU_ASSERT_FATAL(m.ranges && want);
        m.n_ranges = N;
        for (size_t i = 0; i < N; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int64_t r = (int64_t)(seed >> 40), s;
            switch (shape) {
            case 0: s = (int64_t)i; break;                              /* sorted */
            case 1: s = (int64_t)(N - i); break;                        /* reversed */
            case 2: s = (int64_t)(i % 1000) * 7 + (int64_t)(i / 1000); break; /* overlapping runs */
            case 3: s = r % 16; break;                                   /* many ties */
            default: s = (int64_t)i + (r % 5000) - 2500; break;         /* local disorder, long moves */
            }
            m.ranges[i] = (an_range){s, s + r % 3, (int64_t)(r % 3), (gt_string_id)i, -1};
        }
        memcpy(want, m.ranges, N * sizeof *want);
        /* reference: a stable merge through a temporary array, bottom up */
        an_range *tmp = malloc(N * sizeof *tmp);
        CU_ASSERT_FATAL(tmp != NULL);
        for (size_t w = 1; w < N; w *= 2) {
            for (size_t lo = 0; lo < N; lo += 2 * w) {
                size_t mid = lo + w < N ? lo + w : N, hi = lo + 2 * w < N ? lo + 2 * w : N, i = lo, j = mid, o = lo;
                while (i < mid && j < hi)
                    tmp[o++] = cmp_ref(&want[j], &want[i]) < 0 ? want[j++] : want[i++];
                while (i < mid)
                    tmp[o++] = want[i++];
                while (j < hi)
                    tmp[o++] = want[j++];
            }
            memcpy(want, tmp, N * sizeof *want);
        }
        free(tmp);
        an_model_sort(&m);
        size_t bad = 0;
        for (size_t i = 0; i < N; i++)
            bad += m.ranges[i].text != want[i].text;
        if (bad)
            fprintf(stderr, "shape %d: %zu elements out of place\n", shape, bad);
        CU_ASSERT_EQUAL(bad, 0);
        free(want);
        free(m.ranges);
    }
}

/* The model's arrays are made at the size the store counts, not doubled
 * past it: at 100 M events the slack was gigabytes of address space, which
 * `ulimit -v` counts (bench/results/2026-12-03-scale-100m.md). */
static void test_analyze_load__arrays_at_their_size(void)
{
    enum { N = 3000 }; /* doubling from 1024 gives room for 4096 */
    fx f;
    fx_open(&f, "sized_model.sqlite");
    for (int i = 0; i < N; i++) {
        int64_t s = 100 * US + i * 50 * US;
        fx_api(&f, s - 10 * US, s - 5 * US, "cudaLaunchKernel_v7000", 100 + i);
        gt_event ev = kernel(&f, s, s + 20 * US, "gemm", 7, 100 + i);
        fx_add(&f, &ev);
        ev = nvtx(&f, GT_NVTX_PUSHPOP, s - 20 * US, s + 30 * US, "op", TID, 0, -1);
        fx_add(&f, &ev);
    }
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(f.w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(f.w), 0);
    gt_trace *t = NULL;
    an_model *m = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, f.path, 0), 0);
    CU_ASSERT_EQUAL_FATAL(an_model_load(&m, t), 0);
    CU_ASSERT_EQUAL_FATAL(m->n_acts, N);
    CU_ASSERT_EQUAL_FATAL(m->n_apis, N);
    CU_ASSERT_EQUAL_FATAL(m->n_ranges, N);
    /* within a page or two of what they hold (malloc's own rounding) */
    CU_ASSERT(malloc_usable_size(m->acts) < N * sizeof *m->acts + 8192);
    CU_ASSERT(malloc_usable_size(m->apis) < N * sizeof *m->apis + 8192);
    CU_ASSERT(malloc_usable_size(m->ranges) < N * sizeof *m->ranges + 8192);
    an_model_free(m);
    gt_trace_free(t);    free(f.path);
}

static const gt_test_case cases[] = {
    {"test_analyze_load__bulk_matches_iter", test_analyze_load__bulk_matches_iter},
    {"test_analyze_load__model_in_time_order", test_analyze_load__model_in_time_order},
    {"test_analyze_load__refused_rows", test_analyze_load__refused_rows},
    {"test_analyze_load__damaged_table", test_analyze_load__damaged_table},
    {"test_analyze_load__sort_is_stable", test_analyze_load__sort_is_stable},
    {"test_analyze_load__arrays_at_their_size", test_analyze_load__arrays_at_their_size},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_load", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
