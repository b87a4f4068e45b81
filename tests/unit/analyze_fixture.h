/* analyze_fixture.h: builds small traces with the store's writer for the
 * analysis suites, event by event, so each test knows its answers by
 * construction. Times are in microseconds (US) to keep tests readable.
 * Header-only: each suite includes it once. */
#ifndef ANALYZE_FIXTURE_H
#define ANALYZE_FIXTURE_H

#include "gt_analyze.h"
#include "gt_test.h"

#include <stdlib.h>
#include <string.h>

#define US 1000LL
#define MS 1000000LL
#define MIB (1024LL * 1024)
#define PID 4242
#define TID gt_global_tid(PID, 4242)

typedef struct fx {
    gt_writer *w;
    char *path;
    int64_t corr;
} fx;

static inline void fx_open(fx *f, const char *name)
{
    memset(f, 0, sizeof *f);
    f->path = gt_test_path(name);
    CU_ASSERT_EQUAL_FATAL(gt_writer_open(&f->w, f->path, GT_WRITE_OVERWRITE), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_begin(f->w), 0);
    gt_writer_add_process(f->w, PID, "test");
}

static inline gt_string_id fx_s(fx *f, const char *s)
{
    gt_string_id id = 0;
    CU_ASSERT_EQUAL_FATAL(gt_writer_intern(f->w, s, &id), 0);
    return id;
}

static inline void fx_add(fx *f, const gt_event *ev)
{
    int rc = gt_writer_add(f->w, ev);
    if (rc != 0)
        fprintf(stderr, "fx_add: %s\n", gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static inline void fx_gpu(fx *f, int major, int64_t total_bytes)
{
    gt_gpu_info g = {0};
    g.id = 0;
    g.name = "Test GPU";
    g.total_memory_bytes = total_bytes;
    g.compute_major = major;
    g.sm_count = 80;
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_gpu(f->w, &g), 0);
}

static inline void fx_api(fx *f, int64_t s, int64_t e, const char *name, int64_t corr)
{
    gt_event ev = {.kind = GT_EV_API};
    ev.u.api = (gt_api_call){s, e, TID, corr, fx_s(f, name), GT_API_RUNTIME, 0, 0};
    fx_add(f, &ev);
}

/* A launch call [ls, ls + 5 us) and its kernel [ks, ke). */
static inline void fx_kernel(fx *f, int64_t ls, int64_t ks, int64_t ke, const char *name)
{
    int64_t corr = ++f->corr;
    fx_api(f, ls, ls + 5 * US, "cudaLaunchKernel_v7000", corr);
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = ks;
    k->end_ns = ke;
    k->global_pid = gt_global_pid(PID);
    k->stream_id = 7;
    k->correlation_id = corr;
    k->demangled_name = k->short_name = k->mangled_name = fx_s(f, name);
    k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
    fx_add(f, &ev);
}

/* A copy [s, e) issued by `api` over [as, ae). */
static inline void fx_copy(fx *f, int64_t as, int64_t ae, const char *api, int64_t s, int64_t e, int kind, int host_kind,
                           int64_t bytes)
{
    int64_t corr = ++f->corr;
    fx_api(f, as, ae, api, corr);
    gt_event ev = {.kind = GT_EV_MEMCPY};
    gt_memcpy *c = &ev.u.memcpy;
    c->start_ns = s;
    c->end_ns = e;
    c->global_pid = gt_global_pid(PID);
    c->stream_id = 7;
    c->correlation_id = corr;
    c->bytes = bytes;
    c->copy_kind = kind;
    c->src_kind = kind == GT_COPY_HTOD ? host_kind : GT_MEM_DEVICE;
    c->dst_kind = kind == GT_COPY_HTOD ? GT_MEM_DEVICE : host_kind;
    fx_add(f, &ev);
}

static inline void fx_range(fx *f, int64_t s, int64_t e, const char *text)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = s;
    n->end_ns = e;
    n->event_type = GT_NVTX_PUSHPOP;
    n->text = fx_s(f, text);
    n->global_tid = TID;
    fx_add(f, &ev);
}

/* An NVTX range of category cat in domain dom, on thread tid. */
static inline void fx_range_cat(fx *f, int64_t s, int64_t e, const char *text, int64_t dom, int32_t cat, int64_t tid)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = s;
    n->end_ns = e;
    n->event_type = GT_NVTX_PUSHPOP;
    n->text = fx_s(f, text);
    n->global_tid = tid;
    n->domain_id = dom;
    n->category = cat;
    fx_add(f, &ev);
}

/* nvtxDomainNameCategoryA(dom, cat, name) at time t, as nsys writes it. */
static inline void fx_category(fx *f, int64_t t, int64_t dom, int32_t cat, const char *name)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = t;
    n->end_ns = -1;
    n->event_type = GT_NVTX_CATEGORY;
    n->text = fx_s(f, name);
    n->global_tid = TID;
    n->domain_id = dom;
    n->category = cat;
    fx_add(f, &ev);
}

/* Another process of the trace (a rank of a distributed job). */
static inline void fx_process(fx *f, int64_t pid, const char *name)
{
    CU_ASSERT_EQUAL_FATAL(gt_writer_add_process(f->w, pid, name), 0);
}

/* An NVTX range of any type (GT_NVTX_PUSHPOP, GT_NVTX_STARTEND) on thread
 * tid, in category cat of domain dom; bytes >= 0 rides as a u64 payload. */
static inline void fx_nvtx(fx *f, int type, int64_t s, int64_t e, const char *text, int64_t dom, int32_t cat,
                           int64_t tid, int64_t bytes)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = s;
    n->end_ns = e;
    n->event_type = type;
    n->range_id = type == GT_NVTX_STARTEND ? ++f->corr : 0;
    n->text = fx_s(f, text);
    n->global_tid = tid;
    n->domain_id = dom;
    n->category = cat;
    if (bytes >= 0) {
        n->payload_kind = GT_PAYLOAD_U64;
        n->payload.u64 = (uint64_t)bytes;
    }
    fx_add(f, &ev);
}

/* nvtxDomainNameCategoryA on thread tid (categories belong to a process). */
static inline void fx_category_on(fx *f, int64_t t, int64_t dom, int32_t cat, const char *name, int64_t tid)
{
    gt_event ev = {.kind = GT_EV_NVTX};
    gt_nvtx *n = &ev.u.nvtx;
    n->start_ns = t;
    n->end_ns = -1;
    n->event_type = GT_NVTX_CATEGORY;
    n->text = fx_s(f, name);
    n->global_tid = tid;
    n->domain_id = dom;
    n->category = cat;
    fx_add(f, &ev);
}

/* A kernel [s, e) of process pid on a device and stream, launched 5 us
 * before it starts by the process's main thread (tid = pid). */
static inline void fx_kernel_on(fx *f, int64_t pid, int32_t device, int32_t stream, int64_t s, int64_t e,
                                const char *name)
{
    int64_t corr = ++f->corr;
    gt_event call = {.kind = GT_EV_API};
    call.u.api = (gt_api_call){s - 5 * US, s - 4 * US, gt_global_tid(pid, pid), corr,
                               fx_s(f, "cudaLaunchKernel_v7000"), GT_API_RUNTIME, 0, 0};
    fx_add(f, &call);
    gt_event ev = {.kind = GT_EV_KERNEL};
    gt_kernel *k = &ev.u.kernel;
    k->start_ns = s;
    k->end_ns = e;
    k->global_pid = gt_global_pid(pid);
    k->device_id = device;
    k->stream_id = stream;
    k->correlation_id = corr;
    k->demangled_name = k->short_name = k->mangled_name = fx_s(f, name);
    k->grid_x = k->grid_y = k->grid_z = k->block_x = k->block_y = k->block_z = 1;
    fx_add(f, &ev);
}

/* A heap event (nsys's CUDA_HEAP: an allocator's heap or one of its
 * regions) on thread tid. */
static inline void fx_heap_on(fx *f, int64_t tid, int64_t t, int op, uint64_t heap, uint64_t addr, int64_t bytes)
{
    gt_event ev = {.kind = GT_EV_HEAP};
    gt_heap_event *h = &ev.u.heap;
    h->start_ns = t;
    h->global_tid = tid;
    h->operation = op;
    h->heap_id = heap;
    h->address = addr;
    h->bytes = bytes;
    h->heap_usage = 1;
    h->memory_type = 2;
    fx_add(f, &ev);
}

static inline void fx_heap(fx *f, int64_t t, int op, uint64_t heap, uint64_t addr, int64_t bytes)
{
    fx_heap_on(f, TID, t, op, heap, addr, bytes);
}

/* cudaMalloc / cudaFree over [t, t + 10 us) and its device memory event. */
static inline void fx_devmem(fx *f, int64_t t, int op, uint64_t addr, int64_t bytes)
{
    int64_t corr = ++f->corr;
    fx_api(f, t, t + 10 * US, op == GT_DEVMEM_ALLOC ? "cudaMalloc_v3020" : "cudaFree_v3020", corr);
    gt_event ev = {.kind = GT_EV_GPU_MEMORY};
    gt_gpu_memory *g = &ev.u.gpu_memory;
    g->start_ns = t + 5 * US;
    g->global_pid = gt_global_pid(PID);
    g->address = addr;
    g->bytes = bytes;
    g->mem_kind = GT_MEM_DEVICE;
    g->operation = op;
    g->correlation_id = corr;
    fx_add(f, &ev);
}

static inline void fx_cpu_op(fx *f, int64_t s, int64_t e, const char *name)
{
    gt_event ev = {.kind = GT_EV_CPU_OP};
    ev.u.cpu_op = (gt_cpu_op){s, e, TID, fx_s(f, name), 0, 0, 0};
    fx_add(f, &ev);
}

/* Closes the writer and opens the trace for reading. */
static inline gt_trace *fx_close(fx *f)
{
    CU_ASSERT_EQUAL_FATAL(gt_writer_commit(f->w), 0);
    CU_ASSERT_EQUAL_FATAL(gt_writer_close(f->w), 0);
    f->w = NULL;
    gt_trace *t = NULL;
    int rc = gt_trace_open(&t, f->path, 0);
    if (rc != 0)
        fprintf(stderr, "fx_close: %s\n", gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    free(f->path);
    f->path = NULL;
    return t;
}

/* The report of a trace, computed with default options. */
static inline gt_report *fx_report(gt_trace *t, const gt_report_options *opt)
{
    gt_report *r = NULL;
    int rc = gt_report_compute(&r, t, opt);
    if (rc != 0)
        fprintf(stderr, "fx_report: %s\n", gt_error_last());
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    return r;
}

static inline const gt_advice *fx_rule(const gt_report *r, const char *rule)
{
    for (size_t i = 0; i < r->n_advice; i++)
        if (strcmp(r->advice[i].rule, rule) == 0)
            return &r->advice[i];
    CU_FAIL_FATAL("rule missing from the report");
    return NULL;
}

static inline bool fx_fired(const gt_report *r, const char *rule)
{
    return fx_rule(r, rule)->fired;
}

#endif
