/* test_analyze_csv.c: the CSV export (export_csv.c) read back as RFC 4180.
 * For every kind of event, one event whose every number is different and
 * whose strings hold commas, quotes and line breaks: the header and each
 * row have as many fields, every cell is found under its own column's name,
 * each `<column>_label` follows its number column's label, the label
 * columns come last. A row that drifts from its header by one field, or a
 * value put under another column's name, fails here. */
#include "analyze_fixture.h"
#include "gt_labels.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define ODD "a,b \"c\"\r\nd"
#define TID2 gt_global_tid(PID, 99)
#define MAX_FIELDS 32
#define MAX_RECORDS 4

/* One file read back: records of fields, each field a malloc'd string. */
typedef struct csv {
    char *cells[MAX_RECORDS][MAX_FIELDS];
    size_t n_fields[MAX_RECORDS];
    size_t n_records;
    int malformed; /* a quote inside an unquoted field, text after a closing quote, a bare LF */
} csv;

static void csv_parse(csv *c, const char *p)
{
    memset(c, 0, sizeof *c);
    char buf[256];
    while (*p && c->n_records < MAX_RECORDS) {
        size_t r = c->n_records++;
        for (;;) {
            size_t n = 0;
            if (*p == '"') {
                for (p++; *p && !(p[0] == '"' && p[1] != '"'); p++) {
                    if (*p == '"')
                        p++; /* a doubled quote */
                    if (n + 1 < sizeof buf)
                        buf[n++] = *p;
                }
                if (*p != '"')
                    c->malformed = 1;
                else
                    p++;
            } else {
                for (; *p && *p != ',' && *p != '\r' && *p != '\n'; p++) {
                    if (*p == '"')
                        c->malformed = 1;
                    if (n + 1 < sizeof buf)
                        buf[n++] = *p;
                }
            }
            buf[n] = '\0';
            if (c->n_fields[r] < MAX_FIELDS)
                c->cells[r][c->n_fields[r]++] = strdup(buf);
            if (*p == ',') {
                p++;
                continue;
            }
            if (p[0] == '\r' && p[1] == '\n')
                p += 2;
            else
                c->malformed = 1; /* a row ends with CRLF, even the last */
            break;
        }
        if (c->malformed)
            break;
    }
}

static void csv_free(csv *c)
{
    for (size_t r = 0; r < MAX_RECORDS; r++)
        for (size_t i = 0; i < MAX_FIELDS; i++)
            free(c->cells[r][i]);
}

/* The cell of row r under column name; NULL when the header lacks it. */
static const char *cell(const csv *c, size_t r, const char *name)
{
    for (size_t i = 0; i < c->n_fields[0]; i++)
        if (strcmp(c->cells[0][i], name) == 0)
            return i < c->n_fields[r] ? c->cells[r][i] : NULL;
    return NULL;
}

typedef struct expect {
    const char *column, *cell;
} expect;

/* The kind's export has a header and one row per event; both have the same
 * fields; the header's names are distinct lower-case words; every cell of
 * row 1 is the one `want` gives under its name, and every column has one. */
static void check_kind(gt_trace *t, gt_event_kind kind, size_t n_rows, const expect *want)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_EQUAL_FATAL(gt_export_csv_kind(t, kind, f), 0);
    fclose(f);
    csv c;
    csv_parse(&c, text);
    CU_ASSERT_FALSE(c.malformed);
    CU_ASSERT_EQUAL(c.n_records, 1 + n_rows);
    CU_ASSERT_TRUE(c.n_fields[0] >= 5);
    for (size_t r = 1; r < c.n_records; r++)
        if (c.n_fields[r] != c.n_fields[0]) {
            fprintf(stderr, "%s.csv: row %zu has %zu fields, the header %zu\n", gt_event_kind_name(kind), r,
                    c.n_fields[r], c.n_fields[0]);
            CU_FAIL("a row and its header disagree");
        }
    size_t n_want = 0, first_label = c.n_fields[0];
    for (; want[n_want].column; n_want++) {
        const char *got = cell(&c, 1, want[n_want].column);
        if (!got || strcmp(got, want[n_want].cell) != 0) {
            fprintf(stderr, "%s.csv: %s is \"%s\", not \"%s\"\n", gt_event_kind_name(kind), want[n_want].column,
                    got ? got : "(no such column)", want[n_want].cell);
            CU_FAIL("a cell under another column's name");
        }
    }
    CU_ASSERT_EQUAL(n_want, c.n_fields[0]); /* and no column without its expected cell */
    for (size_t i = 0; i < c.n_fields[0]; i++) {
        const char *name = c.cells[0][i];
        for (const char *s = name; *s; s++)
            CU_ASSERT_TRUE(islower((unsigned char)*s) || *s == '_');
        for (size_t k = i + 1; k < c.n_fields[0]; k++)
            CU_ASSERT_STRING_NOT_EQUAL(name, c.cells[0][k]);
        size_t l = strlen(name);
        if (l > 6 && strcmp(name + l - 6, "_label") == 0) {
            char number[64];
            snprintf(number, sizeof number, "%.*s", (int)(l - 6), name);
            CU_ASSERT_PTR_NOT_NULL(cell(&c, 1, number)); /* the column it labels */
            if (first_label == c.n_fields[0])
                first_label = i;
        } else {
            CU_ASSERT_TRUE(first_label == c.n_fields[0]); /* labels last: the numbered columns keep their places */
        }
    }
    csv_free(&c);
    free(text);
}

/* One event of every kind, each number its own. */
static gt_trace *every_kind(void)
{
    fx f;
    fx_open(&f, "csv-kinds.sqlite");
    int64_t pid = gt_global_pid(PID);
    gt_event ev = {.kind = GT_EV_KERNEL};
    ev.u.kernel = (gt_kernel){.start_ns = 1000, .end_ns = 3500, .global_pid = pid, .device_id = 3, .context_id = 4,
                              .stream_id = 5, .correlation_id = 6, .demangled_name = fx_s(&f, ODD),
                              .short_name = fx_s(&f, "k,short"), .mangled_name = fx_s(&f, "_Z1kv"), .grid_x = 7,
                              .grid_y = 8, .grid_z = 9, .block_x = 10, .block_y = 11, .block_z = 12,
                              .registers_per_thread = 13, .static_shared_bytes = 14, .dynamic_shared_bytes = 15,
                              .graph_node_id = 16};
    fx_add(&f, &ev);
    ev.u.kernel.start_ns = 4000; /* a second: named by its mangled name */
    ev.u.kernel.end_ns = 4100;
    ev.u.kernel.demangled_name = 0;
    ev.u.kernel.mangled_name = fx_s(&f, "_Z1k\"m\"");
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_MEMCPY};
    ev.u.memcpy = (gt_memcpy){.start_ns = 1000, .end_ns = 1100, .global_pid = pid, .device_id = 3, .context_id = 4,
                              .stream_id = 5, .correlation_id = 6, .bytes = 4096, .copy_kind = GT_COPY_HTOD,
                              .src_kind = GT_MEM_PINNED, .dst_kind = GT_MEM_DEVICE};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_MEMSET};
    ev.u.memset = (gt_memset){.start_ns = 1000, .end_ns = 1020, .global_pid = pid, .device_id = 3, .context_id = 4,
                              .stream_id = 5, .correlation_id = 6, .value = 255, .bytes = 512,
                              .mem_kind = GT_MEM_DEVICE};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_API};
    ev.u.api = (gt_api_call){1000, 1030, TID2, 6, fx_s(&f, ODD), GT_API_DRIVER, 17, 0};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_SYNC};
    ev.u.sync = (gt_sync){.start_ns = 1000, .end_ns = 1040, .global_pid = pid, .device_id = 3, .context_id = 4,
                          .stream_id = 5, .correlation_id = 6, .sync_type = 1, .event_id = 19};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_NVTX};
    ev.u.nvtx = (gt_nvtx){.start_ns = 1000, .end_ns = 9000, .event_type = GT_NVTX_PUSHPOP, .category = 21,
                          .has_color = true, .color = 0xff112233u, .text = fx_s(&f, ODD), .global_tid = TID2,
                          .domain_id = 0};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_GPU_MEMORY};
    ev.u.gpu_memory = (gt_gpu_memory){.start_ns = 1000, .global_pid = pid, .device_id = 3, .context_id = 4,
                                      .address = 0xfffffffffff00000ull, .bytes = 1024, .mem_kind = GT_MEM_DEVICE,
                                      .operation = GT_DEVMEM_FREE, .correlation_id = 6, .stream_id = 5};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_HEAP};
    ev.u.heap = (gt_heap_event){.start_ns = 1000, .global_tid = TID2, .operation = GT_REGION_REGISTER,
                                .heap_id = 0x8000000000000001ull, .address = 0x7f0000001000ull, .bytes = 2048,
                                .heap_usage = 1, .memory_type = 2, .name = fx_s(&f, ODD)};
    fx_add(&f, &ev);
    ev = (gt_event){.kind = GT_EV_CPU_OP};
    ev.u.cpu_op = (gt_cpu_op){1000, 1500, TID2, fx_s(&f, ODD), 22, 23, 24};
    fx_add(&f, &ev);
    return fx_close(&f);
}

static void test_export_csv__every_kind_by_name(void)
{
    gt_trace *t = every_kind();
    char l_htod[64], l_pinned[64], l_device[64], l_sync[64];
    snprintf(l_htod, sizeof l_htod, "%s", gt_label(GT_LABELS_COPY_KIND, GT_COPY_HTOD));
    snprintf(l_pinned, sizeof l_pinned, "%s", gt_label(GT_LABELS_MEM_KIND, GT_MEM_PINNED));
    snprintf(l_device, sizeof l_device, "%s", gt_label(GT_LABELS_MEM_KIND, GT_MEM_DEVICE));
    snprintf(l_sync, sizeof l_sync, "%s", gt_label(GT_LABELS_SYNC_TYPE, 1));
    CU_ASSERT_TRUE(l_htod[0] && l_pinned[0] && l_device[0] && l_sync[0]);
    char n_htod[8], n_pinned[8], n_device[8];
    snprintf(n_htod, sizeof n_htod, "%d", GT_COPY_HTOD);
    snprintf(n_pinned, sizeof n_pinned, "%d", GT_MEM_PINNED);
    snprintf(n_device, sizeof n_device, "%d", GT_MEM_DEVICE);
#define GPU_ACTIVITY(end, dur) \
    {"start_ns", "1000"}, {"end_ns", end}, {"duration_ns", dur}, {"pid", "4242"}, {"device", "3"}, \
    {"context", "4"}, {"stream", "5"}, {"correlation_id", "6"}
    const expect kernel[] = {GPU_ACTIVITY("3500", "2500"),
                             {"name", ODD},
                             {"short_name", "k,short"},
                             {"grid_x", "7"},
                             {"grid_y", "8"},
                             {"grid_z", "9"},
                             {"block_x", "10"},
                             {"block_y", "11"},
                             {"block_z", "12"},
                             {"registers_per_thread", "13"},
                             {"static_shared_bytes", "14"},
                             {"dynamic_shared_bytes", "15"},
                             {"graph_node_id", "16"},
                             {NULL, NULL}};
    check_kind(t, GT_EV_KERNEL, 2, kernel);
    const expect memcpy_[] = {GPU_ACTIVITY("1100", "100"),
                              {"bytes", "4096"},
                              {"copy_kind", n_htod},
                              {"src_kind", n_pinned},
                              {"dst_kind", n_device},
                              {"copy_kind_label", l_htod},
                              {"src_kind_label", l_pinned},
                              {"dst_kind_label", l_device},
                              {NULL, NULL}};
    check_kind(t, GT_EV_MEMCPY, 1, memcpy_);
    const expect memset_[] = {GPU_ACTIVITY("1020", "20"),
                              {"bytes", "512"},
                              {"value", "255"},
                              {"mem_kind", n_device},
                              {"mem_kind_label", l_device},
                              {NULL, NULL}};
    check_kind(t, GT_EV_MEMSET, 1, memset_);
    const expect api[] = {{"start_ns", "1000"}, {"end_ns", "1030"}, {"duration_ns", "30"},
                          {"pid", "4242"},      {"tid", "99"},      {"correlation_id", "6"},
                          {"name", ODD},        {"class", "driver"}, {"return_value", "17"},
                          {"callchain_id", "0"}, {NULL, NULL}};
    check_kind(t, GT_EV_API, 1, api);
    const expect sync[] = {GPU_ACTIVITY("1040", "40"), {"sync_type", "1"}, {"event_id", "19"},
                           {"sync_type_label", l_sync}, {NULL, NULL}};
    check_kind(t, GT_EV_SYNC, 1, sync);
    char n_pushpop[8];
    snprintf(n_pushpop, sizeof n_pushpop, "%d", GT_NVTX_PUSHPOP);
    const expect nvtx[] = {{"start_ns", "1000"},     {"end_ns", "9000"},   {"pid", "4242"},
                           {"tid", "99"},            {"event_type", n_pushpop}, {"range_id", "0"},
                           {"domain_id", "0"},       {"category", "21"},   {"color", "#ff112233"},
                           {"text", ODD},            {NULL, NULL}};
    check_kind(t, GT_EV_NVTX, 1, nvtx);
    const expect gpu_memory[] = {{"start_ns", "1000"},
                                 {"pid", "4242"},
                                 {"device", "3"},
                                 {"context", "4"},
                                 {"stream", "5"},
                                 {"operation", "free"},
                                 {"address", "18446744073708503040"},
                                 {"bytes", "1024"},
                                 {"mem_kind", n_device},
                                 {"correlation_id", "6"},
                                 {"callchain_id", "0"},
                                 {"mem_kind_label", l_device},
                                 {NULL, NULL}};
    check_kind(t, GT_EV_GPU_MEMORY, 1, gpu_memory);
    const expect heap[] = {{"start_ns", "1000"},
                           {"pid", "4242"},
                           {"tid", "99"},
                           {"operation", "region_register"},
                           {"heap_id", "9223372036854775809"},
                           {"address", "139637976731648"},
                           {"bytes", "2048"},
                           {"heap_usage", "1"},
                           {"memory_type", "2"},
                           {"name", ODD},
                           {"domain_id", "0"},
                           {"callchain_id", "0"},
                           {NULL, NULL}};
    check_kind(t, GT_EV_HEAP, 1, heap);
    const expect cpu_op[] = {{"start_ns", "1000"}, {"end_ns", "1500"}, {"duration_ns", "500"},
                             {"pid", "4242"},      {"tid", "99"},      {"stream", "22"},
                             {"name", ODD},        {"flops", "23"},    {"bytes", "24"},
                             {NULL, NULL}};
    check_kind(t, GT_EV_CPU_OP, 1, cpu_op);
#undef GPU_ACTIVITY
    gt_trace_free(t);
}

/* The second kernel has no demangled name: its mangled one, quotes doubled. */
static void test_export_csv__kernel_mangled_name(void)
{
    gt_trace *t = every_kind();
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_EQUAL_FATAL(gt_export_csv_kind(t, GT_EV_KERNEL, f), 0);
    fclose(f);
    csv c;
    csv_parse(&c, text);
    CU_ASSERT_EQUAL_FATAL(c.n_records, 3);
    CU_ASSERT_STRING_EQUAL(cell(&c, 2, "name"), "_Z1k\"m\"");
    CU_ASSERT_PTR_NOT_NULL(strstr(text, ",\"_Z1k\"\"m\"\"\","));
    csv_free(&c);
    free(text);
    gt_trace_free(t);
}

/* A kind without events still gets its header, the same one. */
static void test_export_csv__empty_kind_header(void)
{
    fx f;
    fx_open(&f, "csv-empty.sqlite");
    gt_trace *empty = fx_close(&f);
    gt_trace *full = every_kind();
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        char *a = NULL, *b = NULL;
        size_t la = 0, lb = 0;
        FILE *fa = open_memstream(&a, &la), *fb = open_memstream(&b, &lb);
        CU_ASSERT_EQUAL(gt_export_csv_kind(empty, (gt_event_kind)k, fa), 0);
        CU_ASSERT_EQUAL(gt_export_csv_kind(full, (gt_event_kind)k, fb), 0);
        fclose(fa);
        fclose(fb);
        CU_ASSERT_TRUE(la > 10 && strchr(a, '\r') == a + la - 2); /* the header only */
        CU_ASSERT_TRUE(lb > la && strncmp(a, b, la) == 0);
        free(a);
        free(b);
    }
    gt_trace_free(empty);
    gt_trace_free(full);
}

static const gt_test_case cases[] = {
    {"test_export_csv__every_kind_by_name", test_export_csv__every_kind_by_name},
    {"test_export_csv__kernel_mangled_name", test_export_csv__kernel_mangled_name},
    {"test_export_csv__empty_kind_header", test_export_csv__empty_kind_header},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"analyze_csv", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
