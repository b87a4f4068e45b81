/* test_viewer_agree.c: the viewer and gtrace report say the same thing.
 * On the nsys fixtures and on a trace of the CPU trainer, the viewer's idle
 * lanes (each gap, its cause), its CPU-op lanes (ops by name: count, total
 * time) and its memory peaks per process are compared with what
 * `gtrace report --json` prints for the same file. python3 reads the JSON
 * into lines; the viewer's model is written as the same lines. */
#include "gt_test.h"
#include "gv-trace-model.h"
#include "gt_store.h"

#define FX_PID 4242
#define FX_MS 1000000LL

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gtrace report --json, as lines: "gap DEV START END CAUSE", "op NAME N TOTAL"
 * (cpu_timeline only), "peak PID ALLOC ALLOC_NS RES RES_NS". */
static const char *const to_lines =
    "import json, sys\n"
    "r = json.load(sys.stdin)\n"
    "for g in r['gaps']['longest']:\n"
    "    print('gap %d %d %d %s' % (g['device_id'], g['start_ns'], g['end_ns'], g['cause']))\n"
    "assert len(r['gaps']['longest']) == r['gaps']['n'], 'not every gap listed'\n"
    "if r['cpu_timeline']:\n"
    "    assert len(r['kernels']) == r['kernel_names'], 'not every op listed'\n"
    "    for k in r['kernels']:\n"
    "        print('op %s %d %d' % (k['name'], k['time']['n'], k['time']['total_ns']))\n"
    "m = r['memory']\n"
    "for p in (m['processes'] or [m]):\n"
    "    if p['has_blocks'] or p['has_segments'] or p['has_device']:\n"
    "        print('peak %d %d %d %d %d' % (p['pid'], p['peak_allocated_bytes'], p['peak_allocated_ns'],\n"
    "                                     p['peak_reserved_bytes'], p['peak_reserved_ns']))\n";

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted lines of a text (the array and its strings are one g_strsplit). */
static char **sorted_lines(char *text, size_t *out_n)
{
    char **v = g_strsplit(g_strstrip(text), "\n", -1);
    size_t n = g_strv_length(v);
    if (n == 1 && !*v[0])
        n = 0;
    qsort(v, n, sizeof *v, cmp_str);
    *out_n = n;
    return v;
}

static char *report_lines(const char *trace)
{
    const char *top = getenv("GT_TOP_BUILDDIR");
    g_autofree char *gtrace = g_build_filename(top ? top : ".", "libtrace", "cli", "gtrace", NULL);
    g_autofree char *base = g_path_get_basename(trace);
    g_autofree char *name = g_strdup_printf("%s.json", base);
    char *json_path = gt_test_path(name);
    g_autofree char *cmd = g_strdup_printf("'%s' report --json --top 100000 '%s' > '%s'", gtrace, trace, json_path);
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    g_autofree char *py = g_strdup_printf("python3 -c \"$GT_AGREE_PY\" < '%s'", json_path);
    g_setenv("GT_AGREE_PY", to_lines, TRUE);
    FILE *p = popen(py, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    GString *s = g_string_new(NULL);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0)
        g_string_append_len(s, buf, (gssize)n);
    CU_ASSERT_EQUAL(pclose(p), 0);
    free(json_path);
    return g_string_free(s, FALSE);
}

typedef struct op_sum { int64_t n, total_ns; } op_sum;

static char *viewer_lines(GvTraceModel *m, gboolean cpu_timeline)
{
    GString *s = g_string_new(NULL);
    GHashTable *ops = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    gv_trace_model_lock(m);
    for (size_t t = 0; t < gv_trace_model_n_tracks(m); t++) {
        const GvTrack *tr = gv_trace_model_track(m, t);
        for (size_t l = 0; l < tr->n_lanes; l++) {
            const GvLane *lane = tr->lanes[l];
            for (size_t i = 0; i < lane->n; i++) {
                const GvItem *it = &lane->items[i];
                if (it->kind == GV_ITEM_GAP) {
                    g_string_append_printf(s, "gap %lld %lld %lld %s\n", (long long)tr->key, (long long)it->start_ns,
                                           (long long)it->end_ns, gt_gap_cause_name((gt_gap_cause)it->aux));
                } else if (it->kind == GV_ITEM_CPU_OP && cpu_timeline) {
                    const char *name = gv_trace_model_name(m, it->name);
                    op_sum *o = g_hash_table_lookup(ops, name);
                    if (!o)
                        g_hash_table_insert(ops, (gpointer)name, o = g_new0(op_sum, 1));
                    o->n++;
                    o->total_ns += it->end_ns - it->start_ns;
                }
            }
        }
    }
    GHashTableIter hi;
    gpointer k, v;
    g_hash_table_iter_init(&hi, ops);
    while (g_hash_table_iter_next(&hi, &k, &v))
        g_string_append_printf(s, "op %s %lld %lld\n", (const char *)k, (long long)((op_sum *)v)->n,
                               (long long)((op_sum *)v)->total_ns);
    gv_trace_model_unlock(m);
    g_hash_table_unref(ops);
    for (size_t i = 0; i < gv_trace_model_n_memories(m); i++) {
        const GvMemory *mem = gv_trace_model_memory_nth(m, i);
        g_string_append_printf(s, "peak %lld %lld %lld %lld %lld\n", (long long)mem->pid,
                               (long long)mem->peak_allocated_bytes, (long long)mem->peak_allocated_ns,
                               (long long)mem->peak_reserved_bytes, (long long)mem->peak_reserved_ns);
    }
    return g_string_free(s, FALSE);
}

/* Loads `trace` in the viewer and compares; returns the number of lines. */
static size_t agree(const char *trace)
{
    GvTraceModel *m = gv_trace_model_new();
    g_autoptr(GError) error = NULL;
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, trace, &error));
    const gt_report *r = gv_trace_model_report(m);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    char *want_text = report_lines(trace), *got_text = viewer_lines(m, r->cpu_timeline);
    size_t n_want, n_got;
    char **want = sorted_lines(want_text, &n_want), **got = sorted_lines(got_text, &n_got);
    CU_ASSERT_EQUAL(n_got, n_want);
    size_t n_diff = 0;
    for (size_t i = 0; i < n_want && i < n_got; i++)
        if (strcmp(want[i], got[i]) != 0 && n_diff++ < 5)
            fprintf(stderr, "%s: report '%s', viewer '%s'\n", trace, want[i], got[i]);
    CU_ASSERT_EQUAL(n_diff, 0);
    /* the report's counts are the lanes' */
    int64_t by_cause[GT_GAP_N_CAUSES] = {0};
    for (size_t i = 0; i < n_got; i++)
        for (int c = 0; c < GT_GAP_N_CAUSES; c++)
            if (g_str_has_prefix(got[i], "gap ") && g_str_has_suffix(got[i], gt_gap_cause_name((gt_gap_cause)c)))
                by_cause[c]++;
    for (int c = 0; c < GT_GAP_N_CAUSES; c++)
        CU_ASSERT_EQUAL(by_cause[c], r->gaps.n_by_cause[c]);
    g_strfreev(want);
    g_strfreev(got);
    g_free(want_text);
    g_free(got_text);
    g_object_unref(m);
    return n_want;
}

static void test_viewer_agree__nsys_fixtures(void)
{
    const char *names[] = {"nsys/cloverleaf-cuda-nsys2024.5.sqlite", "nsys/saxpy-mpi-cuda-nsys2022.2.sqlite"};
    for (size_t i = 0; i < 2; i++) {
        char *path = gt_test_fixture(names[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(path);
        CU_ASSERT_TRUE(agree(path) > 0); /* each has idle gaps to compare */
        free(path);
    }
}

/* Gaps at the edges of the cause rules: a launch that starts as the gap
 * begins (host-wait: nothing was queued yet), a kernel whose launch is not
 * in the trace (other), and a launch 300 calls before its kernel (other:
 * it was queued before the gap). Times in ms: kernels [0,1) [2,3) [4,5)
 * [6,7) on one stream; launches at 0.2 (corr 1), 1 (corr 2), 0.5 (corr 4);
 * corr 3 has none; 300 other calls from 1.5 ms on. */
static int write_edges(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t pid = gt_global_pid(FX_PID), tid = gt_global_tid(FX_PID, FX_PID);
    gt_string_id kern, launch, other;
    gt_writer_intern(w, "kern", &kern);
    gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch);
    gt_writer_intern(w, "cudaGetLastError_v3020", &other);
    gt_writer_add_process(w, FX_PID, "edges");
    gt_writer_begin(w);
    const int64_t launch_at[4] = {FX_MS / 5, FX_MS, -1, FX_MS / 2};
    for (int i = 0; i < 4; i++) {
        gt_event k = {.kind = GT_EV_KERNEL};
        k.u.kernel = (gt_kernel){.start_ns = 2 * i * FX_MS, .end_ns = (2 * i + 1) * FX_MS, .global_pid = pid,
                                 .device_id = 0, .context_id = 1, .stream_id = 7, .correlation_id = i + 1,
                                 .demangled_name = kern, .short_name = kern, .launch_type = 1};
        gt_writer_add(w, &k);
        if (launch_at[i] < 0)
            continue;
        gt_event a = {.kind = GT_EV_API};
        a.u.api = (gt_api_call){.start_ns = launch_at[i], .end_ns = launch_at[i] + 1000, .global_tid = tid,
                                .correlation_id = i + 1, .name = launch, .event_class = GT_API_RUNTIME};
        gt_writer_add(w, &a);
    }
    for (int j = 0; j < 300; j++) {
        gt_event a = {.kind = GT_EV_API};
        int64_t t = 3 * FX_MS / 2 + j * 10000;
        a.u.api = (gt_api_call){.start_ns = t, .end_ns = t + 1000, .global_tid = tid, .correlation_id = 100 + j,
                                .name = other, .event_class = GT_API_RUNTIME};
        gt_writer_add(w, &a);
    }
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

static void test_viewer_agree__cause_edges(void)
{
    char *path = gt_test_path("edges.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_edges(path), 0);
    CU_ASSERT_EQUAL(agree(path), 3);
    GvTraceModel *m = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, NULL));
    const gt_report *r = gv_trace_model_report(m);
    CU_ASSERT_EQUAL(r->gaps.n_by_cause[GT_GAP_HOST_WAIT], 1);
    CU_ASSERT_EQUAL(r->gaps.n_by_cause[GT_GAP_OTHER], 2);
    g_object_unref(m);
    free(path);
}

/* The trainer's CPU backend: compute ops from NVTX "compute" ranges, their
 * gaps, and the caching allocator's memory. */
static void test_viewer_agree__trainer(void)
{
    const char *top = getenv("GT_TOP_BUILDDIR");
    if (!g_file_test("/usr/share/games/fortunes", G_FILE_TEST_IS_DIR)) {
        fprintf(stderr, "skipped: no /usr/share/games/fortunes (the trainer's data)\n");
        return;
    }
    char *trace = gt_test_path("trainer.sqlite");
    g_autofree char *cmd = g_strdup_printf(
        "'%s/libtrace/cli/gtrace' -o '%s' '%s/trainer/trainer' --model gpt-tiny --steps 4 --eval-every 0 >/dev/null 2>&1",
        top ? top : ".", trace, top ? top : ".");
    CU_ASSERT_EQUAL_FATAL(system(cmd), 0);
    GvTraceModel *m = gv_trace_model_new();
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, trace, NULL));
    CU_ASSERT_TRUE(gv_trace_model_report(m)->cpu_timeline);
    CU_ASSERT_TRUE(gv_trace_model_n_memories(m) > 0);
    g_object_unref(m);
    CU_ASSERT_TRUE(agree(trace) > 10);
    free(trace);
}

static const gt_test_case cases[] = {
    {"test_viewer_agree__nsys_fixtures", test_viewer_agree__nsys_fixtures},
    {"test_viewer_agree__cause_edges", test_viewer_agree__cause_edges},
    {"test_viewer_agree__trainer", test_viewer_agree__trainer},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    if (system("python3 -c pass") != 0) {
        fprintf(stderr, "skip: python3 reads the report's JSON\n");
        return 77;
    }
    gt_test_suite suites[] = {{"viewer_agree", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
