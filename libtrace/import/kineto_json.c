/* kineto_json.c: the walk over a torch.profiler trace (Kineto's Chrome trace
 * JSON): the top-level object (traceEvents, baseTimeNanoseconds,
 * distributedInfo, deviceProperties) and each event, as much of it as the
 * importer reads (phase, category, name, pid/tid, times read exactly into
 * nanoseconds, the args it knows). It streams (json.c) and writes nothing:
 * what an event becomes is kineto.c's. */
#include "kineto_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Kineto's categories: where their events happened. */
static const struct { const char *name; kt_cat cat; kt_side side; } cats[] = {
    {"cpu_op", KT_CPU_OP, KT_SIDE_HOST}, {"user_annotation", KT_USER_ANN, KT_SIDE_HOST},
    {"python_function", KT_PYTHON, KT_SIDE_HOST}, {"cuda_runtime", KT_RUNTIME, KT_SIDE_HOST},
    {"cuda_driver", KT_DRIVER, KT_SIDE_HOST}, {"kernel", KT_KERNEL, KT_SIDE_DEVICE},
    {"gpu_memcpy", KT_MEMCPY, KT_SIDE_DEVICE}, {"gpu_memset", KT_MEMSET, KT_SIDE_DEVICE},
    {"cuda_sync", KT_SYNC, KT_SIDE_DEVICE}, {"gpu_user_annotation", KT_GPU_USER_ANN, KT_SIDE_DEVICE},
    {"cpu_instant_event", KT_INSTANT, KT_SIDE_NONE}, {"Trace", KT_TRACE, KT_SIDE_NONE},
};
enum { N_CATS = sizeof cats / sizeof cats[0] };

static const char *const arg_keys[KT_N_ARGS] = {
    "correlation", "device", "stream", "context", "bytes", "registers per thread", "shared memory",
    "Addr", "Bytes", "Total Allocated", "Total Reserved", "Device Id", "Device Type",
};

static int set_str(char **dst, size_t *cap, const char *s, size_t n)
{
    if (n + 1 > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < n + 1)
            c *= 2;
        char *p = realloc(*dst, c);
        if (!p)
            return gt_error_set(GT_ERR_NOMEM, "import: out of memory");
        *dst = p;
        *cap = c;
    }
    memcpy(*dst, s, n);
    (*dst)[n] = '\0';
    return 0;
}

const char *kt_bad_name(kt_bad b)
{
    static const char *const names[KT_N_BAD] = {
        "", "a time out of range", "a time that is NaN or Infinity", "a \\u0000 in a name", "a name over 16 MiB",
    };
    return b > KT_BAD_NONE && b < KT_N_BAD ? names[b] : "";
}

/* Marks the event unreadable for the last string's flags (the first reason stays). */
static void check_text(json_reader *r, kt_event *e)
{
    unsigned f = json_text_flags(r);
    if (f && e->bad == KT_BAD_NONE)
        e->bad = f & JSON_TEXT_NUL ? KT_BAD_NUL : KT_BAD_LONG;
}

/* A pid or tid: a number, or a string ("Spans", "stream 7"): its number, or
 * none (has = false) when it holds no digits. */
static int read_id(json_reader *r, kt_event *e, json_tok t, bool *has, bool *is_num, int64_t *out)
{
    *has = false;
    *is_num = false;
    if (t == JT_NUM) {
        int64_t v;
        if (json_int(json_text(r, NULL), &v)) {
            *has = *is_num = true;
            *out = v;
        }
        return 0;
    }
    if (t == JT_STR) {
        const char *s = json_text(r, NULL);
        check_text(r, e);
        while (*s && (*s < '0' || *s > '9'))
            s++;
        int64_t v;
        char num[24];
        size_t n = 0;
        while (s[n] >= '0' && s[n] <= '9' && n < sizeof num - 1) {
            num[n] = s[n];
            n++;
        }
        num[n] = '\0';
        if (n && json_int(num, &v)) {
            *has = true;
            *out = v;
        }
        return 0;
    }
    return json_skip(r, t);
}

static int elem_bytes(const char *type)
{
    static const struct { const char *t; int n; } sizes[] = {
        {"float", 4}, {"double", 8}, {"c10::Half", 2}, {"c10::BFloat16", 2}, {"int", 4},
        {"long int", 8}, {"long", 8}, {"int64_t", 8}, {"short int", 2}, {"short", 2},
        {"signed char", 1}, {"unsigned char", 1}, {"bool", 1}, {"c10::Float8_e4m3fn", 1},
        {"c10::Float8_e5m2", 1}, {"c10::complex<float>", 8}, {"c10::complex<double>", 16},
    };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(type, sizes[i].t))
            return sizes[i].n;
    return 0;
}

/* "Input Dims": the elements of the first input: [[a, b], ...] is a*b; a
 * tensor list [[[a], [b]], ...] is a+b. -1 when it says nothing. */
static int read_input_dims(json_reader *r, json_tok t, int64_t *out)
{
    *out = -1;
    if (t != JT_ARR)
        return json_skip(r, t);
    int rc, base = json_depth(r); /* inside the outer array */
    int64_t total = -1, prod = 1;
    bool first = true, any = false;
    for (;;) {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
        int d = json_depth(r);
        if (d < base)
            break;
        if (!first) {
            if ((rc = json_skip(r, t)) < 0)
                return rc;
            continue;
        }
        if (t == JT_ARR && d == base + 1) {
            continue; /* the first input's dims open */
        } else if (t == JT_ARR && d == base + 2) {
            prod = 1; /* a tensor of a list */
            any = false;
        } else if (t == JT_NUM) {
            int64_t v;
            if (json_int(json_text(r, NULL), &v) && v >= 0 && (v == 0 || prod <= INT64_MAX / v))
                prod *= v;
            any = true;
        } else if (t == JT_ARR_END && d == base + 1) {
            if (any && __builtin_add_overflow(total < 0 ? 0 : total, prod, &total))
                total = INT64_MAX; /* one tensor of a list closed; a damaged file's sum saturates */
            any = false;
        } else if (t == JT_ARR_END && d == base) {
            if (any)
                total = prod; /* the first input's dims closed */
            first = false;
        } else if ((rc = json_skip(r, t)) < 0) {
            return rc;
        }
    }
    *out = total;
    return 0;
}

/* The "args" object of an event. */
static int read_args(json_reader *r, kt_event *e)
{
    json_tok t;
    char key[64];
    int rc;
    while ((rc = json_next_member(r, key, sizeof key, &t)) > 0) {
        int a = -1;
        for (int i = 0; i < KT_N_ARGS; i++)
            if (!strcmp(key, arg_keys[i]))
                a = i;
        if (a >= 0 && t == JT_NUM) {
            int64_t v;
            if (json_int(json_text(r, NULL), &v)) {
                e->arg[a] = v;
                e->has_arg |= 1u << a;
            }
        } else if ((!strcmp(key, "grid") || !strcmp(key, "block")) && t == JT_ARR) {
            int32_t *dst = key[0] == 'g' ? e->grid : e->block;
            for (int i = 0; (rc = json_next_element(r, &t)) > 0; i++) {
                int64_t v;
                if (t == JT_NUM && i < 3 && json_int(json_text(r, NULL), &v) && v >= 0 && v <= INT32_MAX)
                    dst[i] = (int32_t)v;
                else if ((rc = json_skip(r, t)) < 0)
                    return rc;
            }
            if (rc < 0)
                return rc;
        } else if (!strcmp(key, "name") && t == JT_STR) {
            size_t n;
            const char *s = json_text(r, &n);
            check_text(r, e);
            if ((rc = set_str(&e->meta, &e->meta_cap, s, n)) < 0)
                return rc;
        } else if (!strcmp(key, "Input Dims")) {
            if ((rc = read_input_dims(r, t, &e->in_elems)) < 0)
                return rc;
        } else if (!strcmp(key, "Input type") && t == JT_ARR) {
            for (int i = 0; (rc = json_next_element(r, &t)) > 0; i++) {
                if (i == 0 && t == JT_STR)
                    e->in_elem_bytes = elem_bytes(json_text(r, NULL));
                else if ((rc = json_skip(r, t)) < 0)
                    return rc;
            }
            if (rc < 0)
                return rc;
        } else if ((rc = json_skip(r, t)) < 0) {
            return rc;
        }
    }
    return rc;
}

/* One event object (its '{' read). */
static int read_event(json_reader *r, kt_event *e)
{
    json_tok t;
    char key[16];
    int rc;
    e->bad = KT_BAD_NONE;
    e->ph = 0;
    e->cat = KT_OTHER;
    e->name[0] = e->meta[0] = '\0';
    e->has_pid = e->has_tid = e->has_ts = e->has_dur = e->pid_is_num = false;
    e->has_arg = 0;
    e->in_elems = -1;
    e->in_elem_bytes = 0;
    memset(e->grid, 0, sizeof e->grid);
    memset(e->block, 0, sizeof e->block);
    while ((rc = json_next_member(r, key, sizeof key, &t)) > 0) {
        size_t n;
        const char *s = json_text(r, &n);
        if (t == JT_STR && (!strcmp(key, "ph") || !strcmp(key, "cat") || !strcmp(key, "name")))
            check_text(r, e);
        if (!strcmp(key, "ph") && t == JT_STR) {
            e->ph = s[0];
        } else if (!strcmp(key, "cat") && t == JT_STR) {
            for (size_t i = 0; i < N_CATS; i++)
                if (!strcmp(s, cats[i].name))
                    e->cat = cats[i].cat;
        } else if (!strcmp(key, "name") && t == JT_STR) {
            if ((rc = set_str(&e->name, &e->name_cap, s, n)) < 0)
                return rc;
        } else if (!strcmp(key, "pid")) {
            if ((rc = read_id(r, e, t, &e->has_pid, &e->pid_is_num, &e->pid)) < 0)
                return rc;
        } else if (!strcmp(key, "tid")) {
            bool num;
            if ((rc = read_id(r, e, t, &e->has_tid, &num, &e->tid)) < 0)
                return rc;
        } else if ((!strcmp(key, "ts") || !strcmp(key, "dur")) && t == JT_NUM) {
            int64_t v;
            if (!json_us_to_ns(s, &v)) {
                if (e->bad == KT_BAD_NONE)
                    e->bad = strpbrk(s, "NI") ? KT_BAD_NONFINITE : KT_BAD_TIME;
                continue;
            }
            if (key[0] == 't') {
                e->ts_ns = v;
                e->has_ts = true;
            } else {
                e->dur_ns = v < 0 ? 0 : v;
                e->has_dur = true;
            }
        } else if (!strcmp(key, "args") && t == JT_OBJ) {
            if ((rc = read_args(r, e)) < 0)
                return rc;
        } else if ((rc = json_skip(r, t)) < 0) {
            return rc;
        }
    }
    return rc;
}

kt_side kt_cat_side(kt_cat cat)
{
    for (size_t i = 0; i < N_CATS; i++)
        if (cats[i].cat == cat)
            return cats[i].side;
    return KT_SIDE_NONE;
}

int32_t kt_arg32(const kt_event *e, kt_arg a, int32_t dflt)
{
    return kt_has(e, a) && e->arg[a] >= INT32_MIN && e->arg[a] <= INT32_MAX ? (int32_t)e->arg[a] : dflt;
}

bool kt_is_imported(const kt_event *e)
{
    if (!e->has_ts)
        return false;
    if (e->ph == 'X') /* gpu_user_annotation: projections the analysis makes itself */
        return kt_cat_side(e->cat) != KT_SIDE_NONE && e->cat != KT_GPU_USER_ANN;
    if (kt_is_instant(e)) /* Kineto's, and annotations' (gtrace's export of NVTX marks) */
        return (e->cat == KT_INSTANT || e->cat == KT_USER_ANN) && e->has_pid && e->pid_is_num;
    return false;
}

/* ---- the file's frame: the top-level object around traceEvents ---------- */

static int read_distributed(json_reader *r, json_tok t, kt_frame *fi)
{
    char key[16];
    int rc;
    if (t != JT_OBJ)
        return json_skip(r, t);
    while ((rc = json_next_member(r, key, sizeof key, &t)) > 0) {
        int64_t v;
        if (!strcmp(key, "rank") && t == JT_NUM && json_int(json_text(r, NULL), &v) && v >= 0 && v <= INT32_MAX)
            fi->rank = (int32_t)v;
        else if ((rc = json_skip(r, t)) < 0)
            return rc;
    }
    return rc;
}

/* Whether t, and t + base, are within the limit. */
static bool time_ok(int64_t t, int64_t base)
{
    int64_t abs;
    return t >= -KT_TIME_LIMIT_NS && t <= KT_TIME_LIMIT_NS && !__builtin_add_overflow(t, base, &abs) &&
           abs >= -KT_TIME_LIMIT_NS && abs <= KT_TIME_LIMIT_NS;
}

/* The elements of the traceEvents array (its '[' read), each that can be
 * read through fn. */
static int read_events(json_reader *r, kt_frame *fi, kt_event *e, kt_event_fn fn, void *ctx)
{
    json_tok t;
    int rc;
    while ((rc = json_next_element(r, &t)) > 0) {
        if (t != JT_OBJ)
            return json_fail(r, "an element of traceEvents is not an object");
        if ((rc = read_event(r, e)) < 0)
            return rc;
        if (e->bad == KT_BAD_NONE && e->has_ts &&
            (!time_ok(e->ts_ns, fi->check_base_ns) || (e->has_dur && (e->dur_ns > KT_TIME_LIMIT_NS ||
                                                       !time_ok(e->ts_ns + e->dur_ns, fi->check_base_ns)))))
            e->bad = KT_BAD_TIME; /* (ts + dur cannot overflow: both are within the limit) */
        if (e->bad != KT_BAD_NONE) {
            fi->n_bad[e->bad]++;
            continue;
        }
        if ((rc = fn(ctx, e)) < 0)
            return rc;
    }
    return rc;
}

/* deviceProperties (its '[' read): each device through fn. */
static int read_gpus(json_reader *r, kt_gpu_fn fn, void *ctx)
{
    /* the figures gtrace keeps, by the key torch.cuda.get_device_properties
     * gives them */
    static const struct { const char *key; size_t off; bool wide; } fields[] = {
        {"totalGlobalMem", offsetof(gt_gpu_info, total_memory_bytes), true},
        {"computeMajor", offsetof(gt_gpu_info, compute_major), false},
        {"computeMinor", offsetof(gt_gpu_info, compute_minor), false},
        {"maxThreadsPerBlock", offsetof(gt_gpu_info, max_threads_per_block), false},
        {"regsPerBlock", offsetof(gt_gpu_info, max_registers_per_block), false},
        {"regsPerMultiprocessor", offsetof(gt_gpu_info, max_registers_per_sm), false},
        {"warpSize", offsetof(gt_gpu_info, threads_per_warp), false},
        {"sharedMemPerBlock", offsetof(gt_gpu_info, max_shmem_per_block), true},
        {"sharedMemPerMultiprocessor", offsetof(gt_gpu_info, max_shmem_per_sm), true},
        {"sharedMemPerBlockOptin", offsetof(gt_gpu_info, max_shmem_per_block_optin), true},
        {"numSms", offsetof(gt_gpu_info, sm_count), false},
    };
    json_tok t;
    char key[64];
    int rc;
    while ((rc = json_next_element(r, &t)) > 0) {
        if (t != JT_OBJ) {
            if ((rc = json_skip(r, t)) < 0)
                return rc;
            continue;
        }
        gt_gpu_info g;
        char name[256] = "";
        int64_t id = -1;
        memset(&g, 0, sizeof g);
        while ((rc = json_next_member(r, key, sizeof key, &t)) > 0) {
            int64_t v = 0;
            bool num = t == JT_NUM && json_int(json_text(r, NULL), &v);
            if (!strcmp(key, "name") && t == JT_STR) {
                snprintf(name, sizeof name, "%s", json_text(r, NULL));
                continue;
            }
            if (!num) {
                if ((rc = json_skip(r, t)) < 0)
                    return rc;
                continue;
            }
            if (!strcmp(key, "id"))
                id = v;
            for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
                char *dst = (char *)&g + fields[i].off;
                int32_t v32 = v >= INT32_MIN && v <= INT32_MAX ? (int32_t)v : 0;
                if (strcmp(key, fields[i].key))
                    continue;
                if (fields[i].wide)
                    memcpy(dst, &v, sizeof v);
                else
                    memcpy(dst, &v32, sizeof v32);
            }
        }
        g.name = name;
        if (rc < 0 || (rc = fn(ctx, id, &g)) < 0)
            return rc;
    }
    return rc;
}

int kt_walk(const char *path, kt_frame *fi, kt_event_fn fn, kt_gpu_fn gpu, void *ctx)
{
    json_reader *r = NULL;
    kt_event e;
    json_tok t;
    char key[32];
    int rc;
    bool saw_events = false;
    memset(&e, 0, sizeof e);
    fi->has_base = false;
    fi->base_ns = 0;
    fi->rank = -1;
    memset(fi->n_bad, 0, sizeof fi->n_bad);
    if ((rc = json_open(&r, path)) < 0)
        return rc;
    if ((rc = set_str(&e.name, &e.name_cap, "", 0)) < 0 || (rc = set_str(&e.meta, &e.meta_cap, "", 0)) < 0 ||
        (rc = json_next(r, &t)) < 0)
        goto cleanup;
    if (t == JT_ARR) {
        saw_events = true;
        if ((rc = read_events(r, fi, &e, fn, ctx)) < 0)
            goto cleanup;
    } else if (t != JT_OBJ) {
        rc = json_fail(r, "not a Chrome trace: the file is not a JSON object");
        goto cleanup;
    }
    while (t == JT_OBJ && (rc = json_next_member(r, key, sizeof key, &t)) > 0) {
        if (!strcmp(key, "traceEvents")) {
            if (t != JT_ARR) {
                rc = json_fail(r, "traceEvents is not an array");
                goto cleanup;
            }
            saw_events = true;
            if ((rc = read_events(r, fi, &e, fn, ctx)) < 0)
                goto cleanup;
        } else if (!strcmp(key, "baseTimeNanoseconds") && t == JT_NUM) {
            if (!json_int(json_text(r, NULL), &fi->base_ns)) {
                rc = json_fail(r, "baseTimeNanoseconds is not an integer");
                goto cleanup;
            }
            fi->has_base = true;
        } else if (!strcmp(key, "distributedInfo")) {
            if ((rc = read_distributed(r, t, fi)) < 0)
                goto cleanup;
        } else if (!strcmp(key, "deviceProperties") && t == JT_ARR && gpu) {
            if ((rc = read_gpus(r, gpu, ctx)) < 0)
                goto cleanup;
        } else if ((rc = json_skip(r, t)) < 0) {
            goto cleanup;
        }
        t = JT_OBJ; /* the next member */
    }
    if (rc < 0 || (rc = json_next(r, &t)) < 0) /* nothing after the top-level value */
        goto cleanup;
    if (!saw_events)
        rc = gt_error_set(GT_ERR_CORRUPT, "%s: not a Chrome trace: no traceEvents", path);
cleanup:
    free(e.name);
    free(e.meta);
    json_free(r);
    return rc < 0 ? rc : 0;
}
