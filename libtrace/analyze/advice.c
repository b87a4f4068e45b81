/* advice.c: rules that turn what the report measured into a fix. Each rule
 * has a threshold, and when it fires, the evidence (numbers and the time
 * range of its worst instance), a suggestion and the expected gain. Every
 * rule is listed in the report, fired or silent, so a reader sees what was
 * checked. The rules of Nsight Systems' `nsys analyze` (gpu_gaps,
 * gpu_time_util, cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync,
 * cuda_api_sync) are here under their nsys names. Measuring is done
 * elsewhere; this file only reads the report and the model.
 * CPU traces of a CNN (the trainer's cpu backend) name each convolution's
 * algorithm and shape in a range inside its op ("conv ALGO CxHxW->OC kK sS
 * pP[ bias]", and "conv autotune" around a timing trial): the conv rules
 * read those. */
#define _GNU_SOURCE /* strcasestr */
#include "advice_int.h"
#include "diff_int.h" /* an_warmup_n: the warm-up steps the diff leaves out too */

#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { API_OTHER, API_SYNC, API_MEMCPY_SYNC, API_MEMCPY_ASYNC, API_MEMSET_SYNC, API_MALLOC };

static int classify_api(const char *name)
{
    if (strstr(name, "Synchronize"))
        return API_SYNC;
    bool async = strstr(name, "Async") != NULL;
    if (strncmp(name, "cudaMemcpy", 10) == 0 || strncmp(name, "cuMemcpy", 8) == 0)
        return async ? API_MEMCPY_ASYNC : API_MEMCPY_SYNC;
    if (strncmp(name, "cudaMemset", 10) == 0 || strncmp(name, "cuMemset", 8) == 0)
        return async ? API_OTHER : API_MEMSET_SYNC;
    if (strncmp(name, "cudaMalloc_", 11) == 0 || strcmp(name, "cudaMalloc") == 0 ||
        strncmp(name, "cudaFree_", 9) == 0 || strcmp(name, "cudaFree") == 0 ||
        strncmp(name, "cuMemAlloc", 10) == 0 || strncmp(name, "cuMemFree", 9) == 0)
        return API_MALLOC;
    return API_OTHER;
}

/* API name id -> class, cached: traces repeat a few names millions of times. */
static int api_class(api_cache *c, const an_model *m, gt_string_id id)
{
    size_t h = ((uint64_t)id * 0x9e3779b97f4a7c15ULL >> 40) & 4095;
    for (size_t probe = 0; probe < 4096; probe++, h = (h + 1) & 4095) {
        if (!c->used[h]) {
            c->used[h] = true;
            c->keys[h] = id;
            c->cls[h] = (int8_t)classify_api(an_str(m, id));
            return c->cls[h];
        }
        if (c->keys[h] == id)
            return c->cls[h];
    }
    return classify_api(an_str(m, id));
}

/* Formatted numbers for one message: up to 8 per message, each its own buffer.
 * Functions, not macros, so that several in one argument list are sequenced. */
static const char *fmt_t(char (*tb)[48], int *i, int64_t ns)
{
    char *b = tb[(*i)++ % 8];
    gt_fmt_ns(b, 48, (double)ns);
    return b;
}
static const char *fmt_b(char (*tb)[48], int *i, double bytes)
{
    char *b = tb[(*i)++ % 8];
    gt_fmt_bytes(b, 48, bytes);
    return b;
}
#define T(ns) fmt_t(tb, &tbi, (ns))
#define B(bytes) fmt_b(tb, &tbi, (double)(bytes))

/* ---- nsys analyze rules ------------------------------------------------- */

static int rule_gpu_gaps(rules *R)
{
    const gt_gaps *g = &R->r->gaps;
    char tb[8][48];
    int tbi = 0;
    const char *thr = "an idle gap of 500 ms or more on a device";
    const char *sug = "Find what the host did during the gap (see the gap list) and overlap it with device work.";
    if (g->n_long == 0)
        return an_advice_add(R, "gpu_gaps", "Long device idle gaps", thr, sug, 0, 0, 0, NULL, NULL);
    const gt_gap *w = g->n_longest ? &g->longest[0] : NULL;
    return an_advice_add(R, "gpu_gaps", "Long device idle gaps", thr, sug, g->long_ns, w ? w->start_ns : 0, w ? w->end_ns : 0,
               "up to the gap time", "%lld gaps of 500 ms or more, %s in all; the longest %s (%s) while the host was in %s%s%s",
               (long long)g->n_long, T(g->long_ns), w ? T(w->end_ns - w->start_ns) : "?",
               w ? gt_gap_cause_name(w->cause) : "?", w && *w->nvtx_path ? w->nvtx_path : "no NVTX range",
               w && *w->api ? ", in " : "", w && *w->api ? w->api : "");
}

/* span * c / n without the product: (q * n + r) * c / n is q * c + r * c / n. */
static int64_t slice_at(int64_t span, int c, int n)
{
    return span / n * c + span % n * c / n;
}

/* The busiest device: the one to keep fed. */
static const gt_device_util *busiest(const gt_report *r)
{
    const gt_device_util *d = &r->devices[0];
    for (size_t i = 1; i < r->n_devices; i++)
        if (r->devices[i].busy_ns > d->busy_ns)
            d = &r->devices[i];
    return d;
}

/* With steps, the evidence is the steps after the warm-up, in slices of
 * whole steps (two or more: the idle tail of every step, optimizer or
 * logging, is the step's shape, not a low period): start-up (compile,
 * autotune, loading) before and in the warm-up steps is not low utilization
 * of the run. Without steps, 30 equal slices of the analysed time. */
static int rule_gpu_time_util(rules *R)
{
    const gt_report *r = R->r;
    const an_model *m = R->m;
    enum { CHUNKS = 30 };
    const char *thr = "a device under 50% busy in one of 30 equal slices of the analysed time; with steps, in "
                      "one of up to 30 slices of two or more whole steps after the warm-up (two such slices "
                      "where there are five or more)";
    const char *sug = "Look at the low slices: the host is not feeding the device there (input, synchronization, "
                      "logging, checkpoints); overlap that work or move it off the critical path.";
    int64_t span = r->end_ns - r->start_ns;
    if (r->n_devices == 0 || span < CHUNKS)
        return an_advice_add(R, "gpu_time_util", "Low device utilization", thr, sug, 0, 0, 0, NULL, NULL);
    const gt_device_util *d = busiest(r);
    size_t n_warm = 0, per_slice = 0;
    int n_chunks = CHUNKS;
    char steps_note[96] = "";
    if (r->n_steps >= 2) {
        double *st = malloc(r->n_steps * sizeof *st);
        if (!st)
            return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
        for (size_t i = 0; i < r->n_steps; i++)
            st[i] = (double)(r->steps[i].end_ns - r->steps[i].start_ns);
        n_warm = an_warmup_n(st, r->n_steps, AN_WARMUP_MADS);
        free(st);
        size_t kept = r->n_steps - n_warm;
        per_slice = kept / CHUNKS + (kept % CHUNKS != 0);
        if (per_slice < 2)
            per_slice = 2;
        n_chunks = (int)(kept / per_slice);
        if (n_chunks < 1) { /* fewer than two steps kept: one slice of them */
            n_chunks = 1;
            per_slice = kept;
        }
        snprintf(steps_note, sizeof steps_note, " of %zu steps (warm-up: the first %zu left out)", per_slice, n_warm);
    }
    int n_low = 0;
    int64_t worst_s = 0, worst_e = 0, lost = 0;
    double worst = 2;
    for (int c = 0; c < n_chunks; c++) {
        int64_t s, e;
        if (per_slice) {
            size_t first = n_warm + (size_t)c * per_slice;
            size_t last = c == n_chunks - 1 ? r->n_steps - 1 : first + per_slice - 1; /* the rest in the last */
            s = r->steps[first].start_ns;
            e = r->steps[last].end_ns;
        } else {
            s = r->start_ns + slice_at(span, c, n_chunks);
            e = r->start_ns + slice_at(span, c + 1, n_chunks);
        }
        int64_t busy = an_busy(m, d->device_id, false, s, e);
        double u = e > s ? (double)busy / (double)(e - s) : 1;
        if (u < 0.5) {
            n_low++;
            lost += (e - s) / 2 - busy > 0 ? (e - s) / 2 - busy : 0;
            if (u < worst) {
                worst = u;
                worst_s = s;
                worst_e = e;
            }
        }
    }
    /* One low slice among five or more is one moment the machine took the
     * host away (another program's burst), not the run's shape. */
    if (n_low == 0 || (n_low == 1 && n_chunks >= 5))
        return an_advice_add(R, "gpu_time_util", "Low device utilization", thr, sug, 0, 0, 0, NULL, NULL);
    char who[32];
    if (d->device_id < 0)
        snprintf(who, sizeof who, "CPU ops"); /* the CPU timeline */
    else
        snprintf(who, sizeof who, "device %d", d->device_id);
    return an_advice_add(R, "gpu_time_util", "Low device utilization", thr, sug, lost, worst_s, worst_e,
               "the idle time that keeps these slices under 50%",
               "%s busy %.1f%% overall; %d of %d slices%s under 50%%, the worst %.1f%% busy",
               who, 100 * d->utilization, n_low, n_chunks, steps_note, 100 * worst);
}

/* Copies by the API that issued them. */
typedef struct copy_stats {
    int64_t n, bytes, api_ns, dev_ns, worst_s, worst_e, worst_d;
} copy_stats;

static void copy_add(copy_stats *s, const an_copy *c, const an_api *a)
{
    int64_t d = a ? a->end_ns - a->start_ns : c->end_ns - c->start_ns;
    s->n++; /* sums saturate: a damaged trace's rows may add past INT64_MAX */
    s->bytes = gt_sat_add(s->bytes, c->bytes);
    s->dev_ns = gt_sat_add(s->dev_ns, c->end_ns - c->start_ns);
    s->api_ns = gt_sat_add(s->api_ns, a ? a->end_ns - a->start_ns : 0);
    if (d > s->worst_d) {
        s->worst_d = d;
        s->worst_s = a ? a->start_ns : c->start_ns;
        s->worst_e = a ? a->end_ns : c->end_ns;
    }
}

static int rules_copies(rules *R)
{
    const gt_report *r = R->r;
    const an_model *m = R->m;
    copy_stats async_pageable = {0}, sync_copy = {0}, sync_set = {0}, pageable = {0};
    char tb[8][48];
    int tbi = 0;
    int64_t n_host_copies = 0;
    int rc;
    for (size_t i = 0; i < m->n_copies; i++) {
        const an_copy *c = &m->copies[i];
        if (c->start_ns < r->start_ns || c->start_ns >= r->end_ns)
            continue;
        const an_api *a = an_model_launch(m, c->corr);
        int cls = a ? api_class(&R->cache, m, a->name) : API_OTHER;
        bool is_pageable = c->copy_kind >= 0 && (c->src_kind == GT_MEM_PAGEABLE || c->dst_kind == GT_MEM_PAGEABLE);
        if (c->copy_kind == GT_COPY_HTOD || c->copy_kind == GT_COPY_DTOH)
            n_host_copies++;
        if (is_pageable)
            copy_add(&pageable, c, a);
        if (c->copy_kind >= 0 && cls == API_MEMCPY_ASYNC && is_pageable)
            copy_add(&async_pageable, c, a);
        if (c->copy_kind >= 0 && cls == API_MEMCPY_SYNC)
            copy_add(&sync_copy, c, a);
        if (c->copy_kind < 0 && cls == API_MEMSET_SYNC)
            copy_add(&sync_set, c, a);
    }

    const char *thr = "10 or more copies, or 1 MiB or more, between the device and pageable host memory";
    const char *sug = "Allocate host buffers in pinned memory (cudaMallocHost / cudaHostAlloc, "
                      "DataLoader(pin_memory=True)): copies run at full bus speed and can be asynchronous.";
    if (pageable.n >= 10 || pageable.bytes >= (1 << 20))
        rc = an_advice_add(R, "pageable_copies", "Copies from pageable memory", thr, sug, pageable.dev_ns / 2, pageable.worst_s,
                 pageable.worst_e, "about half the copy time (pinned copies typically run twice as fast)",
                 "%lld of %lld host<->device copies use pageable memory: %s in %s (%.2f GB/s)",
                 (long long)pageable.n, (long long)n_host_copies, B(pageable.bytes), T(pageable.dev_ns),
                 pageable.dev_ns ? (double)pageable.bytes / (double)pageable.dev_ns : 0.0);
    else
        rc = an_advice_add(R, "pageable_copies", "Copies from pageable memory", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;

    thr = "an asynchronous memcpy API call that copies pageable host memory";
    sug = "cudaMemcpyAsync with pageable memory is staged and blocks the host: pin the host buffer.";
    if (async_pageable.n > 0)
        rc = an_advice_add(R, "cuda_memcpy_async", "Asynchronous copies that are not", thr, sug, async_pageable.api_ns,
                 async_pageable.worst_s, async_pageable.worst_e, "the host time blocked in these calls",
                 "%lld cudaMemcpyAsync-style copies with pageable memory (%s), host blocked %s",
                 (long long)async_pageable.n, B(async_pageable.bytes), T(async_pageable.api_ns));
    else
        rc = an_advice_add(R, "cuda_memcpy_async", "Asynchronous copies that are not", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;

    thr = "a memcpy issued by a synchronous API (cudaMemcpy, cuMemcpyHtoD...)";
    sug = "Use cudaMemcpyAsync on a stream with pinned host memory, and synchronize only where the data is needed.";
    if (sync_copy.n > 0)
        rc = an_advice_add(R, "cuda_memcpy_sync", "Synchronous copies", thr, sug, sync_copy.api_ns - sync_copy.dev_ns > 0 ? sync_copy.api_ns - sync_copy.dev_ns : 0,
                 sync_copy.worst_s, sync_copy.worst_e, "the host time these calls wait beyond the copies themselves",
                 "%lld synchronous copies (%s): %s of host time in the calls, %s of copying",
                 (long long)sync_copy.n, B(sync_copy.bytes), T(sync_copy.api_ns), T(sync_copy.dev_ns));
    else
        rc = an_advice_add(R, "cuda_memcpy_sync", "Synchronous copies", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;

    thr = "a memset issued by a synchronous API (cudaMemset...)";
    sug = "Use cudaMemsetAsync on the stream that uses the memory.";
    if (sync_set.n > 0)
        rc = an_advice_add(R, "cuda_memset_sync", "Synchronous memsets", thr, sug, sync_set.api_ns, sync_set.worst_s, sync_set.worst_e,
                 "the host time blocked in these calls", "%lld synchronous memsets (%s), host blocked %s",
                 (long long)sync_set.n, B(sync_set.bytes), T(sync_set.api_ns));
    else
        rc = an_advice_add(R, "cuda_memset_sync", "Synchronous memsets", thr, sug, 0, 0, 0, NULL, NULL);
    return rc;
}

static bool in_window(const gt_report *r, const an_range *a);
static bool in_step(const gt_report *r, int64_t t);

static int rules_api(rules *R)
{
    const gt_report *r = R->r;
    const an_model *m = R->m;
    char tb[8][48];
    int tbi = 0;
    int64_t n_sync = 0, sync_ns = 0, ws = 0, we = 0, n_in_steps = 0, in_steps_ns = 0;
    int64_t malloc_in_steps_ns = 0;
    int rc;
    size_t si = 0;
    for (size_t i = 0; i < m->n_apis; i++) {
        const an_api *a = &m->apis[i];
        if (a->start_ns < r->start_ns || a->start_ns >= r->end_ns)
            continue;
        int cls = api_class(&R->cache, m, a->name);
        if (cls != API_SYNC && cls != API_MALLOC)
            continue;
        while (si < r->n_steps && r->steps[si].end_ns <= a->start_ns)
            si++;
        bool in_step = si < r->n_steps && r->steps[si].start_ns <= a->start_ns;
        int64_t d = a->end_ns - a->start_ns;
        if (cls == API_MALLOC) {
            if (in_step && si > 0) /* the steady state: the first step warms up */
                malloc_in_steps_ns = gt_sat_add(malloc_in_steps_ns, d);
            continue;
        }
        n_sync++;
        sync_ns = gt_sat_add(sync_ns, d);
        if (d > we - ws) {
            ws = a->start_ns;
            we = a->end_ns;
        }
        if (in_step) {
            n_in_steps++;
            in_steps_ns = gt_sat_add(in_steps_ns, d);
        }
    }
    /* Without kernels there are no CUDA calls: a host range named like one
     * ("synchronize", torch.cuda.synchronize) is the wait on the device. */
    for (size_t i = 0; m->cpu_timeline && i < m->n_ranges; i++) {
        const an_range *a = &m->ranges[i];
        if (!in_window(r, a) || !strcasestr(an_str(m, a->text), "synchronize"))
            continue;
        int64_t d = a->end_ns - a->start_ns;
        n_sync++;
        sync_ns = gt_sat_add(sync_ns, d);
        if (d > we - ws) {
            ws = a->start_ns;
            we = a->end_ns;
        }
        if (r->n_steps && in_step(r, a->start_ns)) {
            n_in_steps++;
            in_steps_ns = gt_sat_add(in_steps_ns, d);
        }
    }
    const char *thr = "a call that waits for the device (cudaDeviceSynchronize, cudaStreamSynchronize, "
                      "cudaEventSynchronize...)";
    const char *sug = "Each synchronization stalls the host until the device drains; keep only those that "
                      "guard data the host reads, and use events or stream waits between streams.";
    if (n_sync > 0)
        rc = an_advice_add(R, "cuda_api_sync", "Synchronization API calls", thr, sug, 0, ws, we,
                 "depends on what the host could do instead; see sync_in_steps",
                 "%lld synchronization calls, %s of host time in them; the longest %s",
                 (long long)n_sync, T(sync_ns), T(we - ws));
    else
        rc = an_advice_add(R, "cuda_api_sync", "Synchronization API calls", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;

    thr = "one synchronization call or more per step on average";
    sug = "Remove synchronizations from the step (.item(), .cpu(), printing a loss, cudaDeviceSynchronize): "
          "log every N steps, keep values on the device, or read them back asynchronously.";
    double per_step = r->n_steps ? (double)n_in_steps / (double)r->n_steps : 0;
    if (r->n_steps > 0 && per_step >= 1)
        rc = an_advice_add(R, "sync_in_steps", "Synchronizations inside steps", thr, sug, in_steps_ns, ws, we,
                 "up to the host time blocked in them, when the device has queued work to overlap",
                 "%.1f synchronizations per step (%lld in %zu steps), %s of host time blocked",
                 per_step, (long long)n_in_steps, r->n_steps, T(in_steps_ns));
    else
        rc = an_advice_add(R, "sync_in_steps", "Synchronizations inside steps", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;

    const gt_memory *mem = &r->memory;
    int64_t n_seg = 0;
    double seg_churn = an_seg_churn_per_step(r, m, &n_seg);
    thr = "2 or more device allocations and frees (cudaMalloc/cudaFree), or allocator segments reserved and "
          "released, per step after the first";
    sug = "Reuse memory: a caching allocator with expandable segments "
          "(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True), fixed or bucketed shapes, preallocated buffers.";
    if (r->n_steps >= 2 && mem->dev_churn_per_step >= 2)
        rc = an_advice_add(R, "allocator_churn", "Allocator churn", thr, sug, malloc_in_steps_ns, r->steps[1].start_ns,
                 r->steps[r->n_steps - 1].end_ns, "the time spent in cudaMalloc/cudaFree inside steps",
                 "%.1f device allocations and frees per step after the first (%lld allocations, %lld frees in all); "
                 "%s in cudaMalloc/cudaFree inside steps",
                 mem->dev_churn_per_step, (long long)mem->n_dev_allocs, (long long)mem->n_dev_frees,
                 T(malloc_in_steps_ns));
    else if (r->n_steps >= 2 && seg_churn >= 2) /* no API times: what reserving costs is not in the trace */
        rc = an_advice_add(R, "allocator_churn", "Allocator churn", thr, sug, 0, r->steps[1].start_ns,
                 r->steps[r->n_steps - 1].end_ns, "the time the allocator spends reserving and releasing segments "
                 "in the steps (not timed in this trace)",
                 "%.1f allocator segments reserved and released per step after the first (%lld in those steps): "
                 "the cache keeps nothing for the next step", seg_churn, (long long)n_seg);
    else
        rc = an_advice_add(R, "allocator_churn", "Allocator churn", thr, sug, 0, 0, 0, NULL, NULL);
    return rc;
}

static int rule_loader(rules *R)
{
    const gt_report *r = R->r;
    char tb[8][48];
    int tbi = 0;
    int64_t span = r->end_ns - r->start_ns;
    const char *thr = "device idle waiting for the host (host-wait) while the host is in a data-loading NVTX range "
                      "(data, load, batch, fetch...) for 5% of the time or more";
    const char *sug = "Load the next batch while the device computes: more loader workers (num_workers), "
                      "prefetching, pinned memory (pin_memory=True) and non_blocking copies.";
    const gt_gaps *g = &r->gaps;
    if (span > 0 && (double)g->loader_idle_ns * 20 >= (double)span && g->loader_idle_ns > 0) {
        /* the longest loader gap as the instance to look at */
        int64_t s = 0, e = 0;
        for (size_t i = 0; i < g->n_longest; i++)
            if (g->longest[i].cause == GT_GAP_HOST_WAIT && an_is_loader_name(g->longest[i].nvtx_path)) {
                s = g->longest[i].start_ns;
                e = g->longest[i].end_ns;
                break;
            }
        return an_advice_add(R, "data_loader_stall", "Data-loader stalls", thr, sug, g->loader_idle_ns, s, e,
                   "up to the idle time spent waiting for data",
                   "the device waited %s (%.1f%% of the time) for the host to load data",
                   T(g->loader_idle_ns), 100.0 * (double)g->loader_idle_ns / (double)span);
    }
    return an_advice_add(R, "data_loader_stall", "Data-loader stalls", thr, sug, 0, 0, 0, NULL, NULL);
}

static bool is_fp32_gemm(const char *n)
{
    /* convolutions have their own rule */
    if (strcasestr(n, "conv") || strcasestr(n, "tf32") || strcasestr(n, "bf16") || strcasestr(n, "f16") || strcasestr(n, "fp16") ||
        strcasestr(n, "half") || strcasestr(n, "h1688") || strcasestr(n, "h16816") || strcasestr(n, "i8"))
        return false;
    return strcasestr(n, "sgemm") || (strcasestr(n, "gemm") && (strcasestr(n, "f32") || strcasestr(n, "float"))) ||
           strcasestr(n, "matmul_f32") || strcasestr(n, "matmul_fp32");
}

static bool is_slow_conv(const char *n)
{
    return strcasestr(n, "implicit_convolve_sgemm") ||
           (strcasestr(n, "conv") && (strcasestr(n, "im2col") || strcasestr(n, "naive") || strcasestr(n, "direct") ||
                                      strcasestr(n, "fft") || strcasestr(n, "reference")));
}

/* ---- CNN convolutions on the CPU (the ranges inside the conv ops) ---- */

typedef struct conv_note {
    char algo[32];
    int C, H, W, OC, K, stride, pad;
    bool bias;
} conv_note;

static bool parse_conv_note(const char *text, conv_note *n)
{
    int used = 0;
    memset(n, 0, sizeof *n);
    if (strncmp(text, "conv", 4) != 0) /* most ranges: not worth a sscanf */
        return false;
    if (sscanf(text, "conv %31s %dx%dx%d->%d k%d s%d p%d%n", n->algo, &n->C, &n->H, &n->W, &n->OC, &n->K, &n->stride,
               &n->pad, &used) != 8)
        return false;
    n->bias = strcmp(text + used, " bias") == 0;
    return n->C > 0 && n->OC > 0 && n->K > 0 && (text[used] == '\0' || n->bias);
}

/* The range of thread tid after index i (ranges are by thread, then start) that starts past end_ns and has the
 * same parent: the op that ran next at that level; -1 none. */
static int64_t next_sibling(const an_model *m, size_t i, int64_t end_ns)
{
    const an_range *a = &m->ranges[i];
    for (size_t j = i + 1; j < m->n_ranges && m->ranges[j].tid == a->tid; j++)
        if (m->ranges[j].parent == a->parent && m->ranges[j].start_ns >= end_ns)
            return (int64_t)j;
    return -1;
}

static bool in_window(const gt_report *r, const an_range *a)
{
    return a->start_ns >= r->start_ns && a->end_ns <= r->end_ns;
}

/* Whether t falls in one of the report's steps (all of the window when it has none). */
static bool in_step(const gt_report *r, int64_t t)
{
    if (!r->n_steps)
        return true;
    for (size_t i = 0; i < r->n_steps; i++)
        if (t >= r->steps[i].start_ns && t < r->steps[i].end_ns)
            return true;
    return false;
}

/* A conv with a bias whose output BatchNorm normalizes: BatchNorm subtracts the per-channel mean, so the bias
 * changes nothing (its gradient is zero but for rounding) and costs its parameters, gradients, optimizer state
 * and one add per output element forward and backward. The time is estimated from the algorithms' own ranges
 * (an autotuning trial left out): the bias's adds against the convolution's multiply-adds, 2 / (3 C K K) of the
 * forward and backward time. Counted in the steps (an evaluation pass is not training). */
static int rule_conv_bias_bn(rules *R)
{
    const gt_report *r = R->r;
    const an_model *m = R->m;
    char tb[8][48];
    int tbi = 0;
    const char *rule = "conv_bias_before_bn", *title = "Convolution bias before BatchNorm";
    const char *thr = "a convolution with a bias whose output goes to BatchNorm (CPU ops that name their algorithm)";
    const char *sug = "Drop the bias of a convolution that BatchNorm follows: BatchNorm removes the per-channel mean, "
                      "so the bias has no effect (trainer: --bias-before-bn off; PyTorch: nn.Conv2d(..., bias=False)).";
    int64_t n_convs = 0, est_ns = 0, bias_floats = 0, from = 0, to = 0;
    conv_note worst;
    memset(&worst, 0, sizeof worst);
    int64_t worst_n = 0;
    for (size_t i = 0; i < m->n_ranges; i++) {
        const an_range *a = &m->ranges[i];
        conv_note n;
        if (!in_window(r, a) || a->parent < 0 || !parse_conv_note(an_str(m, a->text), &n) || !n.bias ||
            !in_step(r, a->start_ns)) /* in_step last: it walks the steps */
            continue;
        const an_range *op = &m->ranges[a->parent];
        const char *op_name = an_str(m, op->text);
        bool fwd = strcmp(op_name, "conv2d_forward") == 0;
        if (!fwd && strcmp(op_name, "conv2d_backward") != 0)
            continue;
        double share = 2.0 / (3.0 * n.C * n.K * n.K);
        if (fwd) {
            int64_t next = next_sibling(m, (size_t)a->parent, op->end_ns);
            if (next < 0 || strncmp(an_str(m, m->ranges[next].text), "batchnorm", 9) != 0)
                continue;
            n_convs++;
            bias_floats += n.OC;
            if (!from)
                from = op->start_ns, to = m->ranges[next].end_ns;
            if (!worst_n || n.OC > worst.OC)
                worst = n;
            worst_n++;
        }
        est_ns += (int64_t)((double)(a->end_ns - a->start_ns) * share);
    }
    if (!n_convs)
        return an_advice_add(R, rule, title, thr, sug, 0, 0, 0, NULL, NULL);
    double n_steps = r->n_steps ? (double)r->n_steps : 1;
    const char *per = r->n_steps ? " per step" : "";
    /* each bias: the parameter, its gradient and two optimizer moments (AdamW's; one or none for SGD) */
    int64_t per_step_floats = (int64_t)((double)bias_floats / n_steps + 0.5);
    return an_advice_add(R, rule, title, thr, sug, est_ns, from, to,
               "the bias's time and memory, with the same results",
               "%.0f convolution%s with a bias followed by BatchNorm%s (e.g. %dx%dx%d->%d k%d), %lld bias values: "
               "%s of parameters and as much again for their gradients, and twice that for AdamW's moments; the "
               "bias adds cost about %s%s of the convolutions' time (estimated: %s in all, one add per output "
               "element forward and backward against C*K*K multiply-adds)",
               (double)n_convs / n_steps, (double)n_convs / n_steps == 1 ? "" : "s", per, worst.C, worst.H, worst.W,
               worst.OC, worst.K, (long long)per_step_floats, B(per_step_floats * 4),
               T((int64_t)((double)est_ns / n_steps)), per, T(est_ns));
}

/* The same convolution shape, again and again, with an algorithm chosen without timing the others: on the CPU
 * backend, NCHW's im2col+GEMM (the default) or direct, without a "conv autotune" range anywhere in the trace. */
static int rule_conv_autotune_cpu(rules *R, const char *title)
{
    const gt_report *r = R->r;
    const an_model *m = R->m;
    char tb[8][48];
    int tbi = 0;
    const char *rule = "conv_autotune";
    const char *thr = "CPU: the same convolution shape run 3 times or more by an algorithm picked without timing "
                      "(im2col+GEMM or direct, no autotuning in the trace), convolutions 10% or more of the ops' time";
    const char *sug = "Time the algorithms once per shape and keep the fastest: trainer --conv-autotune on (or "
                      "--layout nhwc, its channels-last direct kernels); PyTorch: torch.backends.cudnn.benchmark=True "
                      "on the GPU, channels_last on the CPU.";
    enum { MAX_SHAPES = 64 };
    struct shape { char key[96]; int64_t n, ns, first, last; } shapes[MAX_SHAPES];
    size_t n_shapes = 0;
    int64_t conv_ns = 0, ops_ns = 0;
    bool tuned = false;
    for (size_t i = 0; i < m->n_ranges; i++) {
        const an_range *a = &m->ranges[i];
        const char *text = an_str(m, a->text);
        if (strcmp(text, "conv autotune") == 0)
            tuned = true;
        conv_note n;
        if (!in_window(r, a) || a->parent < 0 || !parse_conv_note(text, &n))
            continue;
        const an_range *op = &m->ranges[a->parent];
        int64_t ns = a->end_ns - a->start_ns; /* the algorithm's own range: a timing trial left out */
        conv_ns = gt_sat_add(conv_ns, ns);
        if (strcmp(n.algo, "im2col+gemm") != 0 && strcmp(n.algo, "direct") != 0)
            continue;
        char key[96];
        snprintf(key, sizeof key, "%s %s %dx%dx%d->%d k%d s%d p%d", strstr(an_str(m, op->text), "backward") ?
                 "backward" : "forward", n.algo, n.C, n.H, n.W, n.OC, n.K, n.stride, n.pad);
        size_t k = 0;
        while (k < n_shapes && strcmp(shapes[k].key, key) != 0)
            k++;
        if (k == n_shapes) {
            if (n_shapes == MAX_SHAPES)
                continue;
            memset(&shapes[k], 0, sizeof shapes[k]);
            snprintf(shapes[k].key, sizeof shapes[k].key, "%s", key);
            shapes[k].first = a->start_ns;
            n_shapes++;
        }
        shapes[k].n++;
        shapes[k].ns = gt_sat_add(shapes[k].ns, ns);
        shapes[k].last = a->end_ns;
    }
    for (size_t i = 0; i < r->n_kernels; i++)
        ops_ns = gt_sat_add(ops_ns, r->kernels[i].d.total_ns);
    const struct shape *top = NULL;
    int64_t slow_ns = 0, n_slow = 0;
    for (size_t k = 0; k < n_shapes; k++)
        if (shapes[k].n >= 3) {
            slow_ns = gt_sat_add(slow_ns, shapes[k].ns);
            n_slow++;
            if (!top || shapes[k].ns > top->ns)
                top = &shapes[k];
        }
    if (tuned || !top || ops_ns <= 0 || (double)conv_ns * 10 < (double)ops_ns)
        return an_advice_add(R, rule, title, thr, sug, 0, 0, 0, NULL, NULL);
    return an_advice_add(R, rule, title, thr, sug, 0, top->first, top->last,
               "the faster algorithm per shape, where one is faster (the tuner keeps the default where it wins)",
               "%lld convolution shape%s (forward and backward apart) ran an untimed algorithm again and again (%s, "
               "%.1f%% of the ops' time); "
               "the most time: %s, %lld runs, %s; no autotuning in the trace",
               (long long)n_slow, n_slow == 1 ? "" : "s", T(slow_ns), 100.0 * (double)slow_ns / (double)ops_ns,
               top->key, (long long)top->n, T(top->ns));
}

static int rules_kernels(rules *R)
{
    const gt_report *r = R->r;
    const an_model *m = R->m;
    char tb[8][48];
    int tbi = 0;
    int rc;
    int cc_major = 0;
    if (m->t) {
        size_t n_gpus = 0;
        const gt_gpu_info *g = gt_trace_gpus(m->t, &n_gpus);
        for (size_t i = 0; i < n_gpus; i++)
            if (g[i].compute_major > cc_major)
                cc_major = g[i].compute_major;
    }
    double fp32_share = 0, conv_share = 0;
    int64_t fp32_ns = 0, conv_ns = 0;
    const char *fp32_name = "", *conv_name = "";
    for (size_t i = 0; i < r->n_kernels; i++) {
        const gt_name_row *k = &r->kernels[i];
        if (is_fp32_gemm(k->name)) {
            fp32_share += k->share;
            fp32_ns = gt_sat_add(fp32_ns, k->d.total_ns);
            if (!*fp32_name)
                fp32_name = k->name;
        }
        if (is_slow_conv(k->name)) {
            conv_share += k->share;
            conv_ns = gt_sat_add(conv_ns, k->d.total_ns);
            if (!*conv_name)
                conv_name = k->name;
        }
    }
    const char *thr = "fp32 matrix-product kernels take 20% or more of kernel time on a GPU with tensor cores "
                      "(compute capability 7.0 or newer)";
    const char *sug = "Use automatic mixed precision (bf16 or fp16 autocast) or at least TF32, so matrix products "
                      "run on tensor cores.";
    if (!r->cpu_timeline && cc_major >= 7 && fp32_share >= 0.2)
        rc = an_advice_add(R, "amp", "fp32 matrix products on tensor-core hardware", thr, sug, fp32_ns / 2, 0, 0,
                 "about half their time (tensor cores run them 2x-8x faster)",
                 "fp32 matrix products take %.1f%% of kernel time (%s), e.g. %s; the GPU is compute capability %d.x",
                 100 * fp32_share, T(fp32_ns), fp32_name, cc_major);
    else
        rc = an_advice_add(R, "amp", "fp32 matrix products on tensor-core hardware", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;

    thr = "convolution kernels of slow algorithms (implicit GEMM without precomputation, im2col, naive, FFT) "
          "take 10% or more of kernel time";
    sug = "Let the library choose the algorithm by timing them once (torch.backends.cudnn.benchmark=True, "
          "cudnnFindConvolutionForwardAlgorithm), with fixed input shapes.";
    if (r->cpu_timeline)
        rc = rule_conv_autotune_cpu(R, "Slow convolution algorithms");
    else if (conv_share >= 0.1)
        rc = an_advice_add(R, "conv_autotune", "Slow convolution algorithms", thr, sug, conv_ns / 2, 0, 0,
                 "often half the convolution time or more",
                 "slow convolution kernels take %.1f%% of kernel time (%s), e.g. %s", 100 * conv_share, T(conv_ns),
                 conv_name);
    else
        rc = an_advice_add(R, "conv_autotune", "Slow convolution algorithms", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;
    if ((rc = rule_conv_bias_bn(R)) < 0)
        return rc;

    /* Launch-bound: most kernels short and the device idle between them. */
    int64_t n_k = 0, n_short = 0;
    for (size_t i = an_first_act(m, r->start_ns); i < m->n_acts && m->acts[i].start_ns < r->end_ns; i++) {
        const an_act *a = &m->acts[i];
        if (a->kind != (m->cpu_timeline ? GT_EV_CPU_OP : GT_EV_KERNEL) || a->start_ns < r->start_ns)
            continue;
        n_k++;
        n_short += a->end_ns - a->start_ns < 20000;
    }
    int64_t span = r->end_ns - r->start_ns;
    int64_t launch_idle = gt_sat_add(r->gaps.idle_by_cause_ns[GT_GAP_KERNEL_WAIT], r->gaps.idle_by_cause_ns[GT_GAP_HOST_WAIT]);
    thr = "100 kernels or more, most under 20 us, and the device idle between launches (host-wait plus "
          "kernel-wait) for 10% of the time or more";
    sug = "Launch fewer, bigger kernels: fuse elementwise chains (torch.compile, fused optimizers), "
          "or capture the step in a CUDA graph to remove per-launch overhead.";
    if (n_k >= 100 && n_short * 2 > n_k && span > 0 && (double)launch_idle * 10 >= (double)span)
        rc = an_advice_add(R, "launch_bound", "Many short kernels with launch gaps", thr, sug, launch_idle, 0, 0,
                 "up to the idle time between launches",
                 "%lld of %lld kernels run under 20 us; the device sat %s (%.1f%%) idle between launches "
                 "(%lld kernel-wait gaps, %lld host-wait gaps)",
                 (long long)n_short, (long long)n_k, T(launch_idle), 100.0 * (double)launch_idle / (double)span,
                 (long long)r->gaps.n_by_cause[GT_GAP_KERNEL_WAIT], (long long)r->gaps.n_by_cause[GT_GAP_HOST_WAIT]);
    else
        rc = an_advice_add(R, "launch_bound", "Many short kernels with launch gaps", thr, sug, 0, 0, 0, NULL, NULL);
    return rc;
}

static int rules_memory(rules *R)
{
    const gt_memory *mem = &R->r->memory;
    char tb[8][48];
    int tbi = 0;
    int rc;
    int64_t total = mem->total_device_bytes, peak = mem->peak_reserved_bytes;
    bool known = total > 0 && peak > 0 && !R->r->cpu_timeline;
    const char *thr = "peak reserved memory under 50% of the device's memory";
    const char *sug = "Raise the batch size (scale the learning rate with it) to use the idle memory and "
                      "keep the device busier per launch.";
    if (known && (double)peak * 2 < (double)total) /* doubles: the trace's sizes may be anything */
        rc = an_advice_add(R, "memory_headroom", "Memory headroom", thr, sug, 0, mem->peak_reserved_ns, mem->peak_reserved_ns,
                 "a batch up to the memory left, for better device utilization per step",
                 "peak reserved %s of %s (%.1f%%): roughly %.1fx the batch would fit",
                 B(peak), B(total), 100.0 * (double)peak / (double)total, 0.9 * (double)total / (double)peak);
    else
        rc = an_advice_add(R, "memory_headroom", "Memory headroom", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;
    thr = "peak reserved memory at 90% of the device's memory or more";
    sug = "Trade compute for memory: activation checkpointing, gradient accumulation over smaller micro-batches, "
          "mixed precision; or free cached blocks that fragment the pool.";
    if (known && (double)peak * 10 >= (double)total * 9)
        rc = an_advice_add(R, "memory_near_limit", "Memory near the limit", thr, sug, 0, mem->peak_reserved_ns,
                 mem->peak_reserved_ns, "room to grow the model or batch without out-of-memory errors",
                 "peak reserved %s of %s (%.1f%%), fragmentation %.1f%% at the allocated peak",
                 B(peak), B(total), 100.0 * (double)peak / (double)total, 100 * mem->fragmentation);
    else
        rc = an_advice_add(R, "memory_near_limit", "Memory near the limit", thr, sug, 0, 0, 0, NULL, NULL);
    if (rc < 0)
        return rc;
    thr = "allocations alive at the end whose total grew in 3 steps or more, and in half the steps";
    sug = "Something keeps tensors from every step (a list of losses with their graphs, a growing cache): "
          "store .item() values or detach, and bound the cache.";
    if (mem->n_leaks > 0) {
        const gt_leak *l = &mem->leaks[0];
        rc = an_advice_add(R, "memory_leak", "Memory growing step over step", thr, sug, 0, l->first_ns, l->last_ns,
                 "stable memory; an out-of-memory error avoided in long runs",
                 "%zu leaking origins; the largest, %s, holds %s in %lld allocations, %s per step",
                 mem->n_leaks, *l->origin ? l->origin : "(no NVTX range)", B(l->alive_bytes), (long long)l->n_alive,
                 B(l->bytes_per_step));
    } else {
        rc = an_advice_add(R, "memory_leak", "Memory growing step over step", thr, sug, 0, 0, 0, NULL, NULL);
    }
    return rc;
}

/* Exposed communication: the most exposed rank against its step time. The
 * suggestion follows the collective with most exposed time, and names a
 * straggler when the other ranks' exposed time is waiting for its compute. */
static int rule_exposed_comm(rules *R)
{
    const gt_comm *c = &R->r->comm;
    char tb[8][48];
    int tbi = 0;
    const char *rule = "exposed_communication", *title = "Exposed communication";
    const char *thr = "communication with no compute running (exposed) for 10% of a rank's step time or more";
    const char *sug = "Overlap communication with compute: start collectives as soon as their data is ready "
                      "(gradient buckets during backward, parameter prefetch) and wait for them as late as possible.";
    if (c->most_exposed < 0 || (size_t)c->most_exposed >= c->n_ranks) /* none (a zeroed gt_comm has no ranks) */
        return an_advice_add(R, rule, title, thr, sug, 0, 0, 0, NULL, NULL);
    const gt_comm_rank *k = &c->ranks[c->most_exposed];
    if (k->span_ns <= 0 || (double)k->exposed_ns * 10 < (double)k->span_ns)
        return an_advice_add(R, rule, title, thr, sug, 0, 0, 0, NULL, NULL);
    double n = k->n_steps ? (double)k->n_steps : 1;
    char wk[64];
    const char *per = k->n_steps ? " per step" : "";
    /* the worst step, and the collective with most exposed time */
    int64_t from = 0, to = 0, worst = -1;
    for (size_t i = 0; i < k->n_steps; i++)
        if (k->steps[i].exposed_ns > worst) {
            worst = k->steps[i].exposed_ns;
            from = k->steps[i].start_ns;
            to = k->steps[i].end_ns;
        }
    const gt_comm_kind *top = NULL;
    for (size_t i = 0; i < c->n_kinds; i++)
        if (!top || c->kinds[i].exposed_ns > top->exposed_ns)
            top = &c->kinds[i];
    const char *advice = "";
    if (top && (strcasestr(top->name, "gather")))
        advice = " Parameter all-gathers are exposed (ZeRO-3, FSDP): prefetch the next block's parameters earlier "
                 "(forward and backward prefetch), gather bigger units, or use ZeRO stage 2, which keeps whole "
                 "parameters and needs no gathers in forward and backward, if memory allows.";
    else if (top && strcasestr(top->name, "reduce")) {
        double mean = top->n ? (double)top->total_ns / (double)top->n : 0;
        double per_rank_step = (double)top->n / (double)(c->n_ranks ? c->n_ranks : 1) / n;
        advice = per_rank_step >= 8 && mean < 100e3
                     ? " Many short gradient reductions: bigger buckets (--bucket-mb, DDP's bucket_cap_mb) pay the "
                       "per-collective latency fewer times."
                     : " Gradient reductions wait at the end of backward: smaller buckets (--bucket-mb, DDP's "
                       "bucket_cap_mb) start the first ones while backward still computes; accumulating gradients "
                       "over more micro-batches (--accum, no_sync) reduces once per step for more compute.";
    }
    char straggler[640] = "", ws[64];
    if (c->slowest >= 0 && (size_t)c->slowest < c->n_ranks && c->slowest != c->most_exposed) {
        const gt_comm_rank *s = &c->ranks[c->slowest];
        double ns = s->n_steps ? (double)s->n_steps : 1;
        double extra = (double)s->compute_ns / ns - (double)k->compute_ns / n;
        if (extra * 2 >= (double)k->exposed_ns / n)
            snprintf(straggler, sizeof straggler,
                     " %s computes %s more%s than %s: much of the exposed time is waiting for it; "
                     "balance the work across ranks.",
                     an_rank_label(ws, sizeof ws, s), T((int64_t)extra), per, an_rank_label(wk, sizeof wk, k));
    }
    char *suggestion = an_printf("%s%s%s", sug, advice, straggler);
    if (!suggestion)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory writing advice");
    int rc = an_advice_add(R, rule, title, thr, suggestion, k->exposed_ns, from, to,
                 "up to the exposed time, when compute hides all of it",
                 "%s%s%s: %s of exposed communication%s, %.1f%% of its step time; %.1f%% of its communication "
                 "(%s%s) hidden behind compute; the collective with most exposed time, over all ranks: %s (%s in %lld)",
                 an_rank_label(wk, sizeof wk, k), *k->name ? " " : "", k->name, T((int64_t)((double)k->exposed_ns / n)), per,
                 100 * k->exposed_share, 100 * k->hidden, T((int64_t)((double)k->comm_ns / n)), per,
                 top ? top->name : "?", top ? T(top->exposed_ns) : "?", top ? (long long)top->n : 0LL);
    free(suggestion);
    return rc;
}

int an_advice(gt_report *r, const an_model *m)
{
    rules *R = calloc(1, sizeof *R);
    int rc;
    if (!R)
        return gt_error_set(GT_ERR_NOMEM, "analyze: out of memory");
    R->r = r;
    R->m = m;
    if ((rc = rule_gpu_gaps(R)) < 0 || (rc = rule_gpu_time_util(R)) < 0 || (rc = rules_copies(R)) < 0 ||
        (rc = rules_api(R)) < 0 || (rc = rule_loader(R)) < 0 || (rc = rules_kernels(R)) < 0 ||
        (rc = rules_memory(R)) < 0 || (rc = an_rules_memory_shape(R, r, m)) < 0 || (rc = rule_exposed_comm(R)) < 0)
        goto cleanup;
cleanup:
    free(R);
    return rc;
}
