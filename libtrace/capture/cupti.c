/* cupti.c: CUDA through CUPTI, loaded with dlopen so that libgtrace.so loads
 * where there is no CUDA at all.
 *
 * The launcher sets CUDA_INJECTION64_PATH to libgtrace.so: the CUDA driver
 * calls InitializeInjection() during cuInit, before any context exists, and
 * only in processes that use CUDA. (A process that has libcuda loaded when
 * the session starts is subscribed at once.) Then:
 *   - the activity API records runtime and driver calls, concurrent kernels,
 *     memcpy, memset, synchronization, device memory (MEMORY2) and devices;
 *     CUPTI's buffers are turned into ring records in its buffer callback;
 *   - callbacks on the allocation calls (cudaMalloc*, cuMemAlloc*, cuMemCreate,
 *     cuMemMap) take the caller's stack (--stacks) and remember it under the
 *     call's correlation id, so the MEMORY2 record and the API record of that
 *     call point to it.
 * CUPTI timestamps are put on the trace's clock: CUPTI is given our
 * CLOCK_MONOTONIC as its timestamp source when it supports that, else an
 * offset is measured once. Thread ids are the kernel's (gettid), as ours.
 * Records become rows in cupti_records.c.
 *
 * Failures (no libcupti, an old one, CUPTI taken by another tool: error 39)
 * switch CUDA tracing off and say why once; NVTX recording goes on.
 */
#define _GNU_SOURCE
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "capture.h"
#include "clock.h"
#include "cupti_control.h"
#include "cupti_records.h"
#include "ring.h"
#include "session.h"
#include "stacks.h"
#include "warn.h"
#include "window.h"

#define CUPTI_BUFFER_BYTES (8u << 20)
#define MAX_NAME_BYTES 2048

/* ---- the functions we use, from the dlopened library ------------------ */

static struct {
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult (*EnableCallback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
    CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
    CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*ActivityFlushAll)(uint32_t);
    CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc); /* optional */
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
} api;

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static _Atomic int started;           /* activities enabled */
static _Atomic int exit_flush_registered;
static _Atomic int exit_flushed;      /* the flush at exit ran: CUPTI may be torn down after it */
static CUpti_SubscriberHandle subscriber;
static int64_t cupti_offset_ns;       /* add to a CUPTI timestamp to get CLOCK_MONOTONIC */
static _Atomic int cupti_pid;         /* CUPTI does not survive fork: only this process flushes */

static const char *result_string(CUptiResult r)
{
    const char *s = NULL;
    if (api.GetResultString && api.GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

static bool want_messages(void)
{
    return gt_cap_opts.cuda == 1;
}

/* ---- clock ------------------------------------------------------------ */

static uint64_t CUPTIAPI monotonic_timestamp(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Added to a CUPTI timestamp: trace time. */
static int64_t shift_ns(void)
{
    return cupti_offset_ns - gt_cap_t0_ns;
}

static void measure_offset(void)
{
    /* The middle of two monotonic reads around one CUPTI read, best of 5. */
    int64_t best_gap = INT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t c = 0;
        int64_t a = (int64_t)monotonic_timestamp();
        if (api.GetTimestamp(&c) != CUPTI_SUCCESS)
            return;
        int64_t b = (int64_t)monotonic_timestamp();
        if (b - a < best_gap) {
            best_gap = b - a;
            cupti_offset_ns = a + (b - a) / 2 - (int64_t)c;
        }
    }
}

/* ---- correlation id -> call stack ------------------------------------- */

#define N_CORR 8192
static _Atomic uint64_t corr_key[N_CORR];
static _Atomic int64_t corr_chain[N_CORR];

static void corr_put(uint32_t corr, int64_t chain)
{
    size_t i = corr & (N_CORR - 1);
    atomic_store_explicit(&corr_chain[i], chain, memory_order_relaxed);
    atomic_store_explicit(&corr_key[i], corr, memory_order_release);
}

static int64_t corr_get(uint32_t corr)
{
    size_t i = corr & (N_CORR - 1);
    if (atomic_load_explicit(&corr_key[i], memory_order_acquire) != corr)
        return 0;
    return atomic_load_explicit(&corr_chain[i], memory_order_relaxed);
}

/* ---- names ------------------------------------------------------------ */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn demangle;

typedef struct name_entry {   /* a kernel's names, by CUPTI's (stable) name pointer */
    const char *key;
    char *demangled, *short_name;
} name_entry;
#define N_NAMES 4096
static name_entry names[N_NAMES];
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;

static void kernel_names(const char *mangled, const char **out_demangled, const char **out_short)
{
    *out_demangled = mangled;
    *out_short = mangled;
    if (!mangled)
        return;
    size_t h = ((uintptr_t)mangled >> 4) & (N_NAMES - 1);
    pthread_mutex_lock(&names_lock);
    for (size_t probe = 0; probe < 16; probe++, h = (h + 1) & (N_NAMES - 1)) {
        name_entry *e = &names[h];
        if (e->key == mangled) {
            *out_demangled = e->demangled;
            *out_short = e->short_name;
            break;
        }
        if (e->key == NULL) {
            int status = -1;
            char *d = demangle ? demangle(mangled, NULL, NULL, &status) : NULL;
            if (!d || status != 0) {
                free(d);
                d = strdup(mangled);
            }
            char *s = d ? gt_cupti_short_name(d) : NULL;
            if (d && s) {
                e->key = mangled;
                e->demangled = d;
                e->short_name = s;
                *out_demangled = d;
                *out_short = s;
            } else {
                free(d);
                free(s);
            }
            break;
        }
    }
    pthread_mutex_unlock(&names_lock);
}

static const char *api_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (api.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
        return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? "cuda runtime call" : "cuda driver call";
    return name;
}

/* ---- records ---------------------------------------------------------- */

__attribute__((noinline)) static size_t text_len(const char *s)
{
    return s ? strnlen(s, MAX_NAME_BYTES - 1) + 1 : 1;
}

__attribute__((noinline)) static char *put_text(char *dst, const char *s)
{
    size_t n = s ? strnlen(s, MAX_NAME_BYTES - 1) : 0;
    if (n)
        memcpy(dst, s, n);
    dst[n] = '\0';
    return dst + n + 1;
}

/* Reserves a rec_event for `kind` with room for texts; waits for room (this is
 * CUPTI's thread, or the program's flush at exit), then drops and counts. */
static rec_event *reserve_event(gt_event_kind kind, size_t text_bytes)
{
    rec_event *r = gt_cap_reserve_wait(REC_EVENT, sizeof *r, text_bytes, kind, 2000);
    if (r) {
        memset(&r->ev, 0, sizeof r->ev);
        r->ev.kind = kind;
    }
    return r;
}

/* Devices seen (contextId -> deviceId, for records that lack a device). */
#define N_CONTEXTS 64
static _Atomic uint32_t context_device[N_CONTEXTS];

static void note_context(uint32_t context_id, uint32_t device_id)
{
    if (context_id < N_CONTEXTS)
        atomic_store_explicit(&context_device[context_id], device_id + 1, memory_order_relaxed);
}

static int32_t device_of_context(uint32_t context_id)
{
    uint32_t v = context_id < N_CONTEXTS ? atomic_load_explicit(&context_device[context_id], memory_order_relaxed) : 0;
    return v ? (int32_t)v - 1 : 0;
}

static void api_record(const CUpti_ActivityAPI *a, bool runtime)
{
    gt_api_call row;
    if (!gt_cupti_api_row(&row, a, runtime, shift_ns())) {
        gt_cap_drop(GT_EV_API);
        return;
    }
    const char *name = api_name(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, a->cbid);
    rec_event *r = reserve_event(GT_EV_API, text_len(name));
    if (!r)
        return;
    row.callchain_id = corr_get(a->correlationId);
    r->ev.u.api = row;
    put_text((char *)(r + 1), name);
    gt_cap_commit();
}

static void kernel_record(const CUpti_ActivityKernel10 *k)
{
    note_context(k->contextId, k->deviceId);
    gt_kernel row;
    if (!gt_cupti_kernel_row(&row, k, shift_ns(), getpid())) {
        gt_cap_drop(GT_EV_KERNEL);
        return;
    }
    const char *demangled, *short_name;
    kernel_names(k->name, &demangled, &short_name);
    size_t tb = text_len(demangled) + text_len(short_name) + text_len(k->name);
    rec_event *r = reserve_event(GT_EV_KERNEL, tb);
    if (!r)
        return;
    r->ev.u.kernel = row;
    char *t = (char *)(r + 1);
    t = put_text(t, demangled);
    t = put_text(t, short_name);
    put_text(t, k->name);
    gt_cap_commit();
}

static void memcpy_record(const CUpti_ActivityMemcpy6 *m)
{
    note_context(m->contextId, m->deviceId);
    gt_memcpy row;
    if (!gt_cupti_memcpy_row(&row, m, shift_ns(), getpid())) {
        gt_cap_drop(GT_EV_MEMCPY);
        return;
    }
    rec_event *r = reserve_event(GT_EV_MEMCPY, 0);
    if (!r)
        return;
    r->ev.u.memcpy = row;
    gt_cap_commit();
}

static void memset_record(const CUpti_ActivityMemset4 *m)
{
    gt_memset row;
    if (!gt_cupti_memset_row(&row, m, shift_ns(), getpid())) {
        gt_cap_drop(GT_EV_MEMSET);
        return;
    }
    rec_event *r = reserve_event(GT_EV_MEMSET, 0);
    if (!r)
        return;
    r->ev.u.memset = row;
    gt_cap_commit();
}

static void sync_record(const CUpti_ActivitySynchronization2 *s)
{
    gt_sync row;
    if (!gt_cupti_sync_row(&row, s, shift_ns(), getpid(), device_of_context(s->contextId))) {
        gt_cap_drop(GT_EV_SYNC);
        return;
    }
    rec_event *r = reserve_event(GT_EV_SYNC, 0);
    if (!r)
        return;
    r->ev.u.sync = row;
    gt_cap_commit();
}

static void memory_record(const CUpti_ActivityMemory4 *m)
{
    gt_gpu_memory row;
    if (!gt_cupti_memory_row(&row, m, shift_ns(), getpid())) {
        if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
            || m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
            gt_cap_drop(GT_EV_GPU_MEMORY); /* no time */
        return;
    }
    rec_event *r = reserve_event(GT_EV_GPU_MEMORY, 0);
    if (!r)
        return;
    row.callchain_id = corr_get(m->correlationId);
    r->ev.u.gpu_memory = row;
    gt_cap_commit();
}

static _Atomic uint64_t devices_seen; /* bit per device id < 64 */

static void device_record(const CUpti_ActivityDevice5 *d)
{
    if (d->id < 64 && (atomic_fetch_or(&devices_seen, 1ull << d->id) & (1ull << d->id)))
        return;
    char uuid[37];
    gt_cupti_uuid(uuid, &d->uuid);
    size_t tb = text_len(d->name) + 1 + text_len(uuid) + 1;
    rec_gpu *r = gt_cap_reserve_wait(REC_GPU, sizeof *r, tb, GT_EV_KERNEL, 2000);
    if (!r)
        return;
    gt_cupti_gpu_row(&r->gpu, d);
    char *t = (char *)(r + 1);
    t = put_text(t, d->name);
    t = put_text(t, "");    /* bus location: CUPTI does not give it */
    t = put_text(t, uuid);
    put_text(t, "");        /* chip name: not given either */
    gt_cap_commit();
}

/* ---- CUPTI's buffers -------------------------------------------------- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, CUPTI_BUFFER_BYTES) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? CUPTI_BUFFER_BYTES : 0;
    *max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *rec = NULL;
    while (api.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_RUNTIME: api_record((const CUpti_ActivityAPI *)rec, true); break;
        case CUPTI_ACTIVITY_KIND_DRIVER: api_record((const CUpti_ActivityAPI *)rec, false); break;
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: kernel_record((const CUpti_ActivityKernel10 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMCPY: memcpy_record((const CUpti_ActivityMemcpy6 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMSET: memset_record((const CUpti_ActivityMemset4 *)rec); break;
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: sync_record((const CUpti_ActivitySynchronization2 *)rec); break;
        case CUPTI_ACTIVITY_KIND_MEMORY2: memory_record((const CUpti_ActivityMemory4 *)rec); break;
        case CUPTI_ACTIVITY_KIND_DEVICE: device_record((const CUpti_ActivityDevice5 *)rec); break;
        default: break;
        }
    }
    size_t n_dropped = 0;
    if (api.ActivityGetNumDroppedRecords(ctx, stream, &n_dropped) == CUPTI_SUCCESS)
        for (size_t i = 0; i < n_dropped; i++)
            gt_cap_drop(GT_EV_KERNEL); /* CUPTI does not say which kinds it dropped */
    (void)size;
    free(buffer);
}

/* ---- callbacks: stacks of allocations, flush before CUDA's teardown --- */

static bool is_allocation(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        switch (cbid) {
        case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020:
        case CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020: return true;
        default: return false;
        }
    }
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        switch (cbid) {
        case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync:
        case CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz:
        case CUPTI_DRIVER_TRACE_CBID_cuMemCreate:
        case CUPTI_DRIVER_TRACE_CBID_cuMemMap: return true;
        default: return false;
        }
    }
    return false;
}

static void flush_now(void)
{
    if (gt_cupti_started())
        api.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* Registered twice (see start and on_callback); the later registration runs
 * first and flushes once. After it CUPTI is never called again: exit() goes
 * on to the static destructors of libcupti and libcuda (registered when they
 * loaded, before ours), and the library destructor that stops the session
 * runs after those. */
static void flush_at_exit(void)
{
    if (!atomic_exchange(&exit_flushed, 1))
        flush_now();
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        /* CUDA tears its contexts down in an exit handler registered before
         * this one runs: ours, registered now, runs first and flushes. */
        if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && !atomic_exchange(&exit_flush_registered, 1))
            atexit(flush_at_exit);
        return;
    }
    const CUpti_CallbackData *cb = data;
    if (cb->callbackSite != CUPTI_API_ENTER)
        return;
    /* --capture=cudaProfilerApi, also from a static cudart, which hooks.c cannot see. */
    if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000)
        || (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)) {
        gt_cap_window_profiler(true);
        return;
    }
    if ((domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000)
        || (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop)) {
        gt_cap_window_profiler(false);
        return;
    }
    if (!is_allocation(domain, cbid))
        return;
    int64_t chain = gt_cap_stack_id(3);
    if (chain)
        corr_put(cb->correlationId, chain);
}

/* ---- start ------------------------------------------------------------ */

/* The first libcupti that loads and fills the record layouts we read: an
 * older one (CUDA 12) first on the library path must not hide the toolkit's.
 * `*out_version`: the version of the one returned, else the newest seen. */
static void *open_cupti(uint32_t *out_version)
{
    const char *candidates[] = {"libcupti.so.13", "libcupti.so",
#ifdef GT_CUPTI_PATH
                                GT_CUPTI_PATH,
#endif
    };
    *out_version = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        void *h = dlopen(candidates[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
            continue;
        CUptiResult (*get_version)(uint32_t *) = (CUptiResult(*)(uint32_t *))dlsym(h, "cuptiGetVersion");
        uint32_t version = 0;
        if (get_version && get_version(&version) == CUPTI_SUCCESS && version >= GT_CUPTI_MIN_VERSION) {
            *out_version = version;
            return h;
        }
        if (version > *out_version)
            *out_version = version;
        dlclose(h);
    }
    return NULL;
}

#define LOAD(field, sym) (api.field = (__typeof__(api.field))dlsym(lib, sym)) != NULL

static void start(void)
{
    static _Atomic int once_missing, once_old, once_taken, once_failed;
    if (gt_cap_opts.cuda == 0 || !atomic_load(&gt_cap_active))
        return;
    uint32_t version = 0;
    void *lib = open_cupti(&version);
    if (!lib && version > 0) {
        /* An older CUPTI fills older (smaller) record layouts than the ones we read. */
        gt_cap_warn_once(&once_old, "CUDA is not traced: the libcupti found has API version %u, older than %u "
                                    "(CUDA 13.0)", version, GT_CUPTI_MIN_VERSION);
        return;
    }
    if (!lib) {
        if (want_messages())
            gt_cap_warn_once(&once_missing, "CUDA is not traced: libcupti cannot be loaded (%s)", dlerror());
        return;
    }
    if (!(LOAD(GetVersion, "cuptiGetVersion") && LOAD(GetResultString, "cuptiGetResultString")
          && LOAD(Subscribe, "cuptiSubscribe") && LOAD(EnableCallback, "cuptiEnableCallback")
          && LOAD(GetCallbackName, "cuptiGetCallbackName")
          && LOAD(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks")
          && LOAD(ActivityEnable, "cuptiActivityEnable") && LOAD(ActivityGetNextRecord, "cuptiActivityGetNextRecord")
          && LOAD(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords")
          && LOAD(ActivityFlushAll, "cuptiActivityFlushAll") && LOAD(GetTimestamp, "cuptiGetTimestamp")
          && LOAD(SetThreadIdType, "cuptiSetThreadIdType"))) {
        gt_cap_warn_once(&once_old, "CUDA is not traced: this libcupti lacks functions gtrace needs");
        return;
    }
    api.ActivityRegisterTimestampCallback =
        (__typeof__(api.ActivityRegisterTimestampCallback))dlsym(lib, "cuptiActivityRegisterTimestampCallback");
    CUptiResult r = api.Subscribe(&subscriber, on_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
            gt_cap_warn_once(&once_taken, "CUDA is not traced: CUPTI is already used by another tool (CUPTI error 39); "
                                          "recording NVTX only");
        else
            gt_cap_warn_once(&once_failed, "CUDA is not traced: cuptiSubscribe failed: %s", result_string(r));
        return;
    }
    demangle = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");
    /* CUPTI's default thread id is pthread_self(); the trace's threads are
     * the kernel's ids (gettid), as NVTX events and thread names have them. */
    r = api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (r != CUPTI_SUCCESS)
        gt_cap_warn_once(&once_failed, "CUPTI cannot give system thread ids (%s): CUDA calls are not on their threads",
                         result_string(r));
    if (api.ActivityRegisterTimestampCallback
        && api.ActivityRegisterTimestampCallback(monotonic_timestamp) == CUPTI_SUCCESS)
        cupti_offset_ns = 0;
    else
        measure_offset();

    /* Stacks of allocations; the context-created callback for the exit flush. */
    api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    /* The capture window's cudaProfilerStart/Stop (rare calls: always on). */
    api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    if (gt_cap_opts.n_stack_frames > 0) {
        gt_cap_stacks_init();
        static const CUpti_CallbackId runtime_allocs[] = {
            CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaMallocPitch_v3020,
            CUPTI_RUNTIME_TRACE_CBID_cudaMalloc3D_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000,
            CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020,
            CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_v11020,
            CUPTI_RUNTIME_TRACE_CBID_cudaMallocFromPoolAsync_ptsz_v11020,
        };
        static const CUpti_CallbackId driver_allocs[] = {
            CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_DRIVER_TRACE_CBID_cuMemAllocPitch_v2,
            CUPTI_DRIVER_TRACE_CBID_cuMemAllocManaged, CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync,
            CUPTI_DRIVER_TRACE_CBID_cuMemAllocAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync,
            CUPTI_DRIVER_TRACE_CBID_cuMemAllocFromPoolAsync_ptsz, CUPTI_DRIVER_TRACE_CBID_cuMemCreate,
            CUPTI_DRIVER_TRACE_CBID_cuMemMap,
        };
        for (size_t i = 0; i < sizeof runtime_allocs / sizeof runtime_allocs[0]; i++)
            api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, runtime_allocs[i]);
        for (size_t i = 0; i < sizeof driver_allocs / sizeof driver_allocs[0]; i++)
            api.EnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, driver_allocs[i]);
    }

    r = api.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        gt_cap_warn_once(&once_failed, "CUDA is not traced: cuptiActivityRegisterCallbacks failed: %s", result_string(r));
        return;
    }
    static const CUpti_ActivityKind kinds[] = {
        CUPTI_ACTIVITY_KIND_DEVICE,  CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
    };
    int n_on = 0;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        r = api.ActivityEnable(kinds[i]);
        if (r == CUPTI_SUCCESS)
            n_on++;
        else
            gt_cap_warn_once(&once_failed, "CUPTI refused activity kind %d (%s): some CUDA events are missing",
                             (int)kinds[i], result_string(r));
    }
    if (n_on > 0) {
        atomic_store(&cupti_pid, getpid());
        atomic_store(&started, 1);
        /* Runs before the exit-time destructors of libcupti and libcuda,
         * which were registered when they loaded (before now). */
        atexit(flush_at_exit);
    }
}

void gt_cupti_start(void)
{
    pthread_once(&start_once, start);
}

bool gt_cupti_started(void)
{
    return atomic_load(&started) && getpid() == atomic_load(&cupti_pid);
}

void gt_cupti_flush(void)
{
    if (!atomic_load(&exit_flushed))
        flush_now();
}

/* Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names
 * this library (the launcher sets it). */
GT_EXPORT int InitializeInjection(void);
GT_EXPORT int InitializeInjection(void)
{
    gt_cap_init();
    gt_cupti_start();
    return 1;
}
