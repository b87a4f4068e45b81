/* reader_iter.c: events: counts, time spans and time-ordered iteration
 * over one kind at a time (gt_iter_*), and the rows the reader refuses.
 *
 * Every row handed out has its times within +-GT_TIME_LIMIT_NS, its end at
 * or after its start and at most GT_TIME_LIMIT_NS later, its sizes within
 * [0, GT_SIZE_LIMIT], and integers where integers belong; a row that breaks
 * one of these is skipped and counted (gt_trace_rejected); the checks are
 * made as a row is read (gt_rd_fill_fields, which reader.c uses for the
 * description tables too), comparisons of values already read: no query
 * per row. The columns read are those the tables' descriptions
 * (columns.c) say are read. A time range over a table in start order is a
 * rowid range, found by a binary search over rowids; over other tables an
 * index on start serves it where the file has one. It does not open files
 * (reader.c) nor judge them (reader_check.c).
 */
#include "reader_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- event layouts: which column goes to which struct member ------------- */

typedef struct gt_iter gt_iter;

enum { MAX_FIELDS = 32 };

typedef struct kind_desc {
    const gt_table_desc *main;
    const gt_table_desc *join; /* NULL: none */
    const char *join_on;       /* in terms of aliases m (main) and j (join) */
    bool instant;              /* one time only: no end column */
    bool start_from_id;        /* GTRACE_KERNELS: rows are keyed by id = start << shift | k */
    /* reads the F_HOOK columns: 0, 1 to refuse the row, or a negative status */
    int (*hook)(gt_iter *it, gt_event *ev);
    /* made from the descriptions at first use (build_layouts) */
    const char *table, *join_table;
    field fields[MAX_FIELDS]; /* the read columns of main, then of join */
    size_t n_fields;
} kind_desc;

struct gt_iter {
    gt_trace *t;
    sqlite3_stmt *stmt; /* NULL: nothing to iterate */
    const kind_desc *desc;
    gt_event_kind kind;
    bool everything;     /* over the whole table: its refused rows are all of them */
    int64_t ops;         /* the work of stmt so far (the budget) */
    int64_t n_rejected;  /* rows skipped so far */
};

static int nvtx_hook(gt_iter *it, gt_event *ev);
static int launch_hook(gt_iter *it, gt_event *ev);
static int load_launches(gt_trace *t);

/* The tables are those of events.c (gt_event_kind_table); gtrace traces read
 * kernels from GTRACE_KERNELS, while written (a closed trace has nsys's
 * table), rather than through the view of the same name. */
static kind_desc kind_descs[GT_EV_N_KINDS] = {
    [GT_EV_KERNEL] = {.main = &gt_tab_kernel},
    [GT_EV_MEMCPY] = {.main = &gt_tab_memcpy},
    [GT_EV_MEMSET] = {.main = &gt_tab_memset},
    [GT_EV_API] = {.main = &gt_tab_runtime},
    [GT_EV_SYNC] = {.main = &gt_tab_sync},
    [GT_EV_NVTX] = {.main = &gt_tab_nvtx, .hook = nvtx_hook},
    [GT_EV_GPU_MEMORY] = {.main = &gt_tab_gpu_memory, .join = &gt_tab_gpu_memory_stacks,
                          .join_on = "j.\"eventId\" = m.rowid", .instant = true},
    [GT_EV_HEAP] = {.main = &gt_tab_memory_events, .instant = true},
    [GT_EV_CPU_OP] = {.main = &gt_tab_cpu_ops},
};

/* gtrace traces while written: GTRACE_KERNELS (m), then the launch
 * configuration from its GTRACE_KERNEL_LAUNCHES row, which the reader keeps
 * in memory (launch_hook): a few hundred launch rows serve millions of
 * kernels, and joining them row by row in SQL took more time than reading
 * the kernels. */
static kind_desc gtrace_kernel_desc = {.main = &gt_tab_kernels, .start_from_id = true, .hook = launch_hook};
/* The columns of GTRACE_KERNEL_LAUNCHES, copied into each kernel of that launch. */
static field launch_fields[MAX_FIELDS];
static size_t n_launch_fields;

/* The positions in the select list of the columns the hooks read. */
enum { NV_COLOR, NV_TEXT, NV_TEXT_ID, NV_U64, NV_I64, NV_F64, NV_U32, NV_I32, NV_F32, NV_N_HOOKED };
static int nvtx_pos[NV_N_HOOKED];
static int launch_id_pos;

static pthread_once_t layouts_once = PTHREAD_ONCE_INIT;

static int field_pos(const kind_desc *d, const char *column)
{
    for (size_t i = 0; i < d->n_fields; i++)
        if (strcmp(d->fields[i].column, column) == 0)
            return (int)i;
    return -1; /* not reached: the hooked columns are described */
}

/* Fields in the order of their members in the struct (start, then end,
 * first in every event struct): filling a kernel's struct member after
 * member, rather than in the table's column order, read kernels about 5 %
 * faster (bench/results/2026-11-26-kernel-table.md). */
static void sort_by_member(field *f, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && f[j - 1].offset > f[j].offset; j--) {
            field x = f[j];
            f[j] = f[j - 1];
            f[j - 1] = x;
        }
}

static void build_layout(kind_desc *d)
{
    d->table = d->main->name;
    d->join_table = d->join ? d->join->name : NULL;
    gt_table_fields(d->main, false, d->fields, &d->n_fields, MAX_FIELDS);
    sort_by_member(d->fields, d->n_fields);
    if (d->join)
        gt_table_fields(d->join, true, d->fields, &d->n_fields, MAX_FIELDS);
}

/* The field lists of every kind, made from the tables' descriptions. */
static void build_layouts(void)
{
    for (int k = 0; k < GT_EV_N_KINDS; k++)
        build_layout(&kind_descs[k]);
    build_layout(&gtrace_kernel_desc);
    gt_table_fields(&gt_tab_kernel_launches, true, launch_fields, &n_launch_fields, MAX_FIELDS);
    static const char *const nvtx_hooked[NV_N_HOOKED] = {
        "color", "text", "textId", "uint64Value", "int64Value", "doubleValue", "uint32Value", "int32Value",
        "floatValue",
    };
    for (int i = 0; i < NV_N_HOOKED; i++)
        nvtx_pos[i] = field_pos(&kind_descs[GT_EV_NVTX], nvtx_hooked[i]);
    launch_id_pos = field_pos(&gtrace_kernel_desc, "launchId");
}

/* ---- reading rows ---------------------------------------------------------- */

int gt_rd_fill_fields(gt_trace *t, sqlite3_stmt *st, const field *fields, size_t n_fields, void *base)
{
    char *b = base; /* zeroed by the caller */
    int n_bad = 0, n_times = 0;
    int64_t times[2]; /* a row's first time is its start, its second (if set) its end */
    for (size_t i = 0; i < n_fields; i++) {
        int col = (int)i;
        unsigned ft = fields[i].type;
        char *member = b + fields[i].offset;
        if (ft == F_HOOK)
            continue; /* read by the kind's hook */
        /* one call into the statement per column: its value, then its type
         * and its integer (a second column call per column cost a quarter
         * of the time of reading events) */
        sqlite3_value *val = sqlite3_column_value(st, col);
        int type = sqlite3_value_type(val);
        if (type == SQLITE_INTEGER && ft != F_STR) {
            int64_t v = sqlite3_value_int64(val);
            int32_t v32 = (int32_t)v;
            bool vb = v != 0;
            switch (ft) {
            case F_I64:
                memcpy(member, &v, sizeof v);
                break;
            case F_I32:
                memcpy(member, &v32, sizeof v32);
                break;
            case F_BOOL:
                memcpy(member, &vb, sizeof vb);
                break;
            case F_SIZE:
                if (v < 0 || v > GT_SIZE_LIMIT)
                    n_bad++;
                else
                    memcpy(member, &v, sizeof v);
                break;
            case F_ID_START:
                v >>= GT_KERNEL_ID_SHIFT; /* an arithmetic shift, also for ids below zero */
                /* fall through */
            case F_TIME:
            case F_END_OR_NEG1:
                if (v < -GT_TIME_LIMIT_NS || v > GT_TIME_LIMIT_NS)
                    n_bad++;
                else
                    memcpy(member, &v, sizeof v);
                times[n_times++ & 1] = v;
                break;
            }
        } else if (type == SQLITE_NULL) {
            static const char empty[] = "";
            const char *s = empty;
            int64_t neg1 = -1;
            if (ft == F_TIME || ft == F_ID_START) /* a time is never missing */
                n_bad++;
            else if (ft == F_END_OR_NEG1) /* an instant */
                memcpy(member, &neg1, sizeof neg1);
            else if (ft == F_STR)
                memcpy(member, &s, sizeof s);
            /* other NULLs read as the zero already there */
        } else if (ft == F_STR) { /* any value reads as text */
            const unsigned char *text = sqlite3_value_text(val);
            const char *s = text ? gt_rd_arena_text(t, (const char *)text, (size_t)sqlite3_value_bytes(val),
                                                    NAME_MAX_BYTES)
                                 : NULL;
            if (!s)
                return gt_rd_nomem(t);
            memcpy(member, &s, sizeof s);
        } else { /* a REAL, TEXT or BLOB where an integer belongs */
            n_bad++;
        }
    }
    /* an end at or after its start, and at most GT_TIME_LIMIT_NS after it
     * (both are within +-GT_TIME_LIMIT_NS when n_bad is 0) */
    if (n_bad == 0 && n_times == 2 && (times[1] < times[0] || times[1] - times[0] > GT_TIME_LIMIT_NS))
        n_bad++;
    return n_bad;
}

int gt_rd_append_columns(gt_trace *t, sbuf *sql, const field *fields, size_t n_fields, const char *table,
                         const char *join_table)
{
    sqlite3_stmt *st = NULL;
    int64_t ops = 0;
    int rc = gt_rd_prepare(t, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2 COLLATE NOCASE", &st,
                           "reading the columns of a table");
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n_fields; i++) {
        const char *tab = fields[i].joined ? join_table : table;
        bool has = false;
        if (tab) {
            sqlite3_bind_text(st, 1, tab, -1, SQLITE_STATIC);
            sqlite3_bind_text(st, 2, fields[i].column, -1, SQLITE_STATIC);
            int step = gt_rd_step(t, st, &ops);
            if (step != SQLITE_ROW && step != SQLITE_DONE) {
                rc = gt_rd_sql_fail(t, step, "reading the columns of a table");
                goto cleanup;
            }
            has = step == SQLITE_ROW;
            sqlite3_reset(st);
        }
        if (has)
            gt_rd_sb_printf(sql, "%s%s.\"%s\"", i ? ", " : "", fields[i].joined ? "j" : "m", fields[i].column);
        else
            gt_rd_sb_printf(sql, "%sNULL", i ? ", " : "");
    }
cleanup:
    sqlite3_finalize(st);
    return rc;
}

/* ---- counts and spans -------------------------------------------------------- */

/* The layout to read `kind` with in this trace; NULL when it has no table
 * for it. gtrace traces keep kernels in GTRACE_KERNELS: the view the writer
 * names CUPTI_ACTIVITY_KIND_KERNEL, for nsys's readers, is never read (no
 * view is: a view may run any query, one that never ends included). */
static const kind_desc *desc_of(const gt_trace *t, gt_event_kind kind)
{
    pthread_once(&layouts_once, build_layouts);
    if (t->origin == GT_ORIGIN_GTRACE && kind == GT_EV_KERNEL && gt_rd_find_table(t, GT_TABLE_KERNELS))
        return &gtrace_kernel_desc;
    const kind_desc *d = &kind_descs[kind];
    return gt_rd_find_table(t, d->table) ? d : NULL;
}

int gt_rd_each_event_table(gt_trace *t, gt_rd_table_fn fn)
{
    static const char *const start_end[] = {"start", "end", NULL};
    static const char *const start_only[] = {"start", NULL};
    static const char *const id_end[] = {"id", "end", NULL};
    pthread_once(&layouts_once, build_layouts);
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        const kind_desc *d = &kind_descs[k];
        int rc;
        if (k == GT_EV_KERNEL && t->origin == GT_ORIGIN_GTRACE && gt_rd_find_object(t, GT_TABLE_KERNELS)) {
            if ((rc = fn(t, GT_TABLE_KERNELS, id_end)) < 0)
                return rc;
            continue; /* the view of nsys's name beside it is not read */
        }
        if ((rc = fn(t, d->table, d->instant ? start_only : start_end)) < 0)
            return rc;
    }
    return 0;
}

int gt_trace_count(gt_trace *t, gt_event_kind kind, int64_t *out_n)
{
    char sql[160];
    bool is_null;
    if (!t || !out_n || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_count: bad argument");
    *out_n = 0;
    const kind_desc *d = desc_of(t, kind);
    if (!d)
        return 0;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM \"%s\"", d->table);
    return gt_rd_query_int64(t, sql, out_n, &is_null, "counting events");
}

int gt_trace_dropped(gt_trace *t, gt_event_kind kind, int64_t *out_n)
{
    char sql[256];
    bool is_null;
    if (!t || !out_n || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_dropped: bad argument");
    *out_n = 0;
    if (!gt_rd_find_table(t, GT_TABLE_DROPPED_EVENTS))
        return 0; /* an nsys export, or nothing was ever dropped */
    snprintf(sql, sizeof sql,
             "SELECT sum(count) FROM " GT_TABLE_DROPPED_EVENTS " WHERE kind = '%s' AND typeof(count) = 'integer' "
             "AND count BETWEEN 0 AND %lld",
             gt_event_kind_name(kind), (long long)GT_SIZE_LIMIT);
    return gt_rd_query_int64(t, sql, out_n, &is_null, "reading dropped-event counts");
}

int gt_trace_session_start(gt_trace *t, int64_t *out_utc_epoch_ns)
{
    bool is_null;
    if (!t || !out_utc_epoch_ns)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_session_start: bad argument");
    *out_utc_epoch_ns = 0;
    if (!gt_rd_find_table(t, "TARGET_INFO_SESSION_START_TIME"))
        return gt_error_set(GT_ERR_NOTFOUND, "%s: the trace records no wall-clock start (TARGET_INFO_SESSION_START_TIME)", t->path);
    int rc = gt_rd_query_int64(t,
                               "SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME "
                               "WHERE typeof(utcEpochNs) = 'integer' AND utcEpochNs >= 0 LIMIT 1",
                               out_utc_epoch_ns, &is_null, "reading the session start time");
    if (rc == 0 && is_null)
        return gt_error_set(GT_ERR_NOTFOUND, "%s: the trace records no wall-clock start (TARGET_INFO_SESSION_START_TIME)", t->path);
    return rc;
}

/* The row checks on times (F_TIME, F_ID_START, span_ok) as an SQL condition,
 * for the aggregates that must not see refused rows. */
static void time_filter(sbuf *sql, const kind_desc *d)
{
    const long long lim = GT_TIME_LIMIT_NS;
    const char *s = d->start_from_id ? "(\"id\" >> " GT_STR(GT_KERNEL_ID_SHIFT) ")" : "\"start\"";
    gt_rd_sb_printf(sql, " WHERE typeof(%s) = 'integer' AND %s BETWEEN %lld AND %lld", s, s, -lim, lim);
    if (d->instant)
        return;
    gt_rd_sb_printf(sql, " AND (%stypeof(\"end\") = 'integer' AND \"end\" BETWEEN %s AND %s + %lld AND \"end\" <= %lld)",
                    d == &kind_descs[GT_EV_NVTX] ? "\"end\" IS NULL OR " : "", s, s, lim, lim);
}

int gt_trace_time_span(gt_trace *t, int64_t *out_start_ns, int64_t *out_end_ns)
{
    bool any = false;
    int rc = 0;
    sqlite3_stmt *st = NULL;

    if (!t || !out_start_ns || !out_end_ns)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_time_span: bad argument");
    *out_start_ns = 0;
    *out_end_ns = 0;
    for (int k = 0; k < GT_EV_N_KINDS; k++) {
        const kind_desc *d = desc_of(t, (gt_event_kind)k);
        sbuf sql = {0};
        int64_t ops = 0;
        if (!d)
            continue;
        if (d->start_from_id)
            gt_rd_sb_printf(&sql, "SELECT min(\"id\") >> %d, max(\"end\") FROM \"%s\"", GT_KERNEL_ID_SHIFT, d->table);
        else if (d->instant)
            gt_rd_sb_printf(&sql, "SELECT min(\"start\"), max(\"start\") FROM \"%s\"", d->table);
        else /* NVTX marks have no end */
            gt_rd_sb_printf(&sql, "SELECT min(\"start\"), max(coalesce(\"end\", \"start\")) FROM \"%s\"", d->table);
        time_filter(&sql, d);
        rc = sql.failed ? gt_rd_nomem(t) : gt_rd_prepare(t, sql.s, &st, "finding its time span");
        free(sql.s);
        if (rc < 0)
            return rc;
        int step = gt_rd_step(t, st, &ops);
        if (step == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
            int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1);
            if (!any || s < *out_start_ns)
                *out_start_ns = s;
            if (!any || e > *out_end_ns)
                *out_end_ns = e;
            any = true;
        } else if (step != SQLITE_ROW && step != SQLITE_DONE) {
            rc = gt_rd_sql_fail(t, step, "finding its time span");
        }
        sqlite3_finalize(st);
        st = NULL;
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* ---- iteration ---------------------------------------------------------------- */

/* Whether the writer recorded that `table`'s rows went in with non-decreasing
 * starts (GTRACE_TIME_ORDERED, written when a gtrace trace is closed): then
 * rowid order is (start, rowid) order. */
static bool time_ordered(const gt_trace *t, const char *table)
{
    const char *list = t->origin == GT_ORIGIN_GTRACE ? gt_trace_meta(t, "GTRACE_TIME_ORDERED") : NULL;
    size_t n = strlen(table);
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, " ");
        if (len == n && strncmp(p, table, n) == 0)
            return true;
        p += len;
        p += strspn(p, " ");
    }
    return false;
}

/* The longest event of a kind among the rows the iterators hand out. */
static int max_duration(gt_trace *t, gt_event_kind kind, const kind_desc *d, int64_t *out)
{
    bool is_null;
    if (!t->max_dur_known[kind]) {
        sbuf sql = {0};
        if (d->start_from_id)
            gt_rd_sb_printf(&sql, "SELECT max(\"end\" - (\"id\" >> %d)) FROM \"%s\"", GT_KERNEL_ID_SHIFT, d->table);
        else
            gt_rd_sb_printf(&sql, "SELECT max(\"end\" - \"start\") FROM \"%s\"", d->table);
        time_filter(&sql, d);
        int rc = sql.failed ? gt_rd_nomem(t)
                            : gt_rd_query_int64(t, sql.s, &t->max_dur_ns[kind], &is_null, "finding its longest event");
        free(sql.s);
        if (rc < 0)
            return rc;
        if (is_null || t->max_dur_ns[kind] < 0)
            t->max_dur_ns[kind] = 0;
        t->max_dur_known[kind] = true;
    }
    *out = t->max_dur_ns[kind];
    return 0;
}

/* The first rowid whose start is at least `key`, in [lo, hi) of a table
 * whose rowid order is its start order (GTRACE_TIME_ORDERED): a binary
 * search over the rowids with `probe` (the first row at or after ?1: its
 * rowid and start), one B-tree seek per probe, in place of an index on
 * start. hi when every start is below `key`. A file that lies about its
 * order gets a wrong range, never a crash. */
static int first_rowid_at(gt_trace *t, sqlite3_stmt *probe, int64_t lo, int64_t hi, int64_t key, int64_t *ops,
                          int64_t *out)
{
    int rc = 0;
    /* rows below lo start before key, rows at hi or above at or after it */
    while (lo < hi && rc == 0) {
        int64_t mid = lo + (hi - lo) / 2;
        sqlite3_bind_int64(probe, 1, mid);
        int step = gt_rd_step(t, probe, ops);
        if (step == SQLITE_ROW && sqlite3_column_int64(probe, 0) < hi) {
            int64_t rowid = sqlite3_column_int64(probe, 0);
            if (sqlite3_column_int64(probe, 1) < key)
                lo = rowid + 1;
            else
                hi = mid;
        } else if (step == SQLITE_ROW || step == SQLITE_DONE) {
            hi = mid; /* no row in [mid, hi) */
        } else {
            rc = gt_rd_sql_fail(t, step, "finding a time range");
        }
        sqlite3_reset(probe);
    }
    *out = lo;
    return rc;
}

/* The rowids [*first, *last] of the rows of `kind` starting in [lo, hi],
 * its table being in start order. */
static int rowid_range(gt_trace *t, gt_event_kind kind, const char *table, int64_t lo, int64_t hi, int64_t *ops,
                       int64_t *first, int64_t *last)
{
    int rc = 0;
    if (!t->rowid_probe[kind]) {
        char sql[160];
        bool is_null;
        int64_t end = 0;
        snprintf(sql, sizeof sql, "SELECT max(rowid) FROM \"%s\"", table);
        if ((rc = gt_rd_query_int64(t, sql, &end, &is_null, "finding a time range")) < 0)
            return rc;
        t->rowid_end[kind] = is_null || end < 0 || end == INT64_MAX ? 0 : end + 1;
        snprintf(sql, sizeof sql, "SELECT rowid, \"start\" FROM \"%s\" WHERE rowid >= ?1 ORDER BY rowid LIMIT 1",
                 table);
        if ((rc = gt_rd_prepare(t, sql, &t->rowid_probe[kind], "finding a time range")) < 0)
            return rc;
    }
    int64_t end = t->rowid_end[kind], past = end;
    rc = first_rowid_at(t, t->rowid_probe[kind], 0, end, lo, ops, first);
    if (rc == 0 && hi < INT64_MAX)
        rc = first_rowid_at(t, t->rowid_probe[kind], *first, end, hi + 1, ops, &past);
    *last = past - 1;
    return rc;
}

/* gt_iter_new; `ordered` false leaves the order to SQLite (for counting);
 * `starting`: the rows whose start lies in [from_ns, to_ns), whatever their
 * end (gt_iter_new_starting), so no longest event is looked for. */
static int iter_open(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns, bool ordered,
                     bool starting)
{
    gt_iter *it = NULL;
    sbuf sql = {0};
    int rc = 0;
    char doing[96];

    snprintf(doing, sizeof doing, "reading %s events", gt_event_kind_name(kind));
    it = calloc(1, sizeof *it);
    if (!it)
        return gt_rd_nomem(t);
    it->t = t;
    it->kind = kind;
    it->desc = desc_of(t, kind);
    const kind_desc *d = it->desc;
    bool everything = from_ns == INT64_MIN && to_ns == INT64_MAX;
    it->everything = everything;
    if (!d || from_ns == to_ns) /* no table, or an empty range: nothing */
        goto done;

    const db_object *o = gt_rd_find_table(t, d->table);
    const char *join = d->join_table && gt_rd_find_table(t, d->join_table) ? d->join_table : NULL;
    int64_t max_dur = 0;
    if (d->hook == launch_hook && (rc = load_launches(t)) < 0)
        goto cleanup;
    if (!everything && !d->instant && !starting) {
        rc = max_duration(t, kind, d, &max_dur);
        if (rc < 0)
            goto cleanup;
    }

    gt_rd_sb_printf(&sql, "SELECT ");
    rc = gt_rd_append_columns(t, &sql, d->fields, d->n_fields, d->table, join);
    if (rc < 0)
        goto cleanup;
    gt_rd_sb_printf(&sql, " FROM \"%s\" AS m", d->table);
    if (join)
        gt_rd_sb_printf(&sql, " LEFT JOIN \"%s\" AS j ON %s", join, d->join_on);
    /* [from, to) overlaps [start, end) when start < to and end > from; an
     * instant (end <= start) overlaps when from <= start < to. The lower
     * bound on start, from - longest, lets an index (or, for GTRACE_KERNELS,
     * the rowid) serve the range. */
    const char *start_col = d->start_from_id ? "id" : "start";
    bool rowid = o && !o->without_rowid;
    bool by_rowid = rowid && !d->start_from_id && time_ordered(t, d->table); /* rowid order is start order */
    if (!everything && d->start_from_id && starting)
        gt_rd_sb_printf(&sql, " WHERE m.\"id\" BETWEEN ?1 AND ?2");
    else if (!everything && d->start_from_id)
        gt_rd_sb_printf(&sql, " WHERE m.\"id\" BETWEEN ?1 AND ?2 AND (m.\"end\" > ?3 OR (m.\"id\" >> %d) >= ?3)",
                        GT_KERNEL_ID_SHIFT);
    else if (!everything && (d->instant || starting))
        gt_rd_sb_printf(&sql, " WHERE m.\"start\" BETWEEN ?1 AND ?2");
    else if (!everything)
        gt_rd_sb_printf(&sql, " WHERE m.\"start\" BETWEEN ?1 AND ?2 AND (m.\"end\" > ?3 OR m.\"start\" >= ?3)");
    if (!everything && by_rowid) /* the rows of [lo, hi] lie in one rowid range: no index needed */
        gt_rd_sb_printf(&sql, " AND m.rowid BETWEEN ?4 AND ?5");
    if (!ordered)
        ; /* any order */
    else if (by_rowid)
        gt_rd_sb_printf(&sql, " ORDER BY m.rowid"); /* the same order, without an index and its lookups */
    else
        gt_rd_sb_printf(&sql, " ORDER BY m.\"%s\"", start_col);
    if (ordered && !d->start_from_id && rowid && !by_rowid)
        gt_rd_sb_printf(&sql, ", m.rowid"); /* equal starts come out in the order written */
    if (sql.failed) {
        rc = gt_rd_nomem(t);
        goto cleanup;
    }
    rc = gt_rd_prepare(t, sql.s, &it->stmt, doing);
    if (rc < 0)
        goto cleanup;
    if (!everything) {
        int64_t lo = gt_sat_sub(from_ns, max_dur);
        int64_t hi = to_ns == INT64_MAX ? INT64_MAX : to_ns - 1;
        if (d->start_from_id) {
            const int64_t unit = (int64_t)1 << GT_KERNEL_ID_SHIFT;
            lo = lo < INT64_MIN / unit ? INT64_MIN : lo * unit;
            hi = hi > INT64_MAX / unit - 1 ? INT64_MAX : hi * unit + (unit - 1);
        }
        sqlite3_bind_int64(it->stmt, 1, lo);
        sqlite3_bind_int64(it->stmt, 2, hi);
        if (!d->instant && !starting)
            sqlite3_bind_int64(it->stmt, 3, from_ns);
        if (by_rowid) {
            int64_t first, last;
            if ((rc = rowid_range(t, kind, d->table, lo, hi, &it->ops, &first, &last)) < 0)
                goto cleanup;
            sqlite3_bind_int64(it->stmt, 4, first);
            sqlite3_bind_int64(it->stmt, 5, last);
        }
    }
done:
    *out = it;
    it = NULL;
cleanup:
    gt_iter_free(it);
    free(sql.s);
    return rc;
}

/* gt_iter_new and gt_iter_new_starting: their arguments checked, then iter_open. */
static int iter_new(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns, bool starting,
                    const char *fn)
{
    if (!out || !t || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "%s: bad argument", fn);
    *out = NULL;
    if (from_ns > to_ns)
        return gt_error_set(GT_ERR_INVALID, "%s: time range [%lld, %lld) ends before it starts", t->path,
                            (long long)from_ns, (long long)to_ns);
    return iter_open(out, t, kind, from_ns, to_ns, true, starting);
}

int gt_iter_new(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns)
{
    return iter_new(out, t, kind, from_ns, to_ns, false, "gt_iter_new");
}

int gt_iter_new_starting(gt_iter **out, gt_trace *t, gt_event_kind kind, int64_t from_ns, int64_t to_ns)
{
    return iter_new(out, t, kind, from_ns, to_ns, true, "gt_iter_new_starting");
}

/* Reads GTRACE_KERNEL_LAUNCHES into t->launches, once. */
static int load_launches(gt_trace *t)
{
    sbuf sql = {0};
    sqlite3_stmt *st = NULL;
    size_t cap_ids = 0, cap_launches = 0, cap_bad = 0;
    int64_t ops = 0;
    int rc = 0;
    if (t->launches_loaded)
        return 0;
    if (!gt_rd_find_table(t, GT_TABLE_KERNEL_LAUNCHES)) {
        t->launches_loaded = true; /* kernels without their launch: zeros, as a LEFT JOIN gives */
        return 0;
    }
    gt_rd_sb_printf(&sql, "SELECT ");
    rc = gt_rd_append_columns(t, &sql, launch_fields, n_launch_fields, NULL, GT_TABLE_KERNEL_LAUNCHES);
    if (rc < 0)
        goto cleanup;
    /* ids that are no integers name no launch: their kernels get zeros */
    gt_rd_sb_printf(&sql, ", j.\"id\" FROM \"%s\" AS j WHERE typeof(j.\"id\") = 'integer' ORDER BY j.\"id\"",
                    GT_TABLE_KERNEL_LAUNCHES);
    if (sql.failed) {
        rc = gt_rd_nomem(t);
        goto cleanup;
    }
    if ((rc = gt_rd_prepare(t, sql.s, &st, "reading kernel launches")) < 0)
        goto cleanup;
    int step;
    while ((step = gt_rd_step(t, st, &ops)) == SQLITE_ROW) {
        int64_t *ids = gt_rd_grow(t->launch_ids, &cap_ids, t->n_launches + 1, sizeof *ids);
        if (ids)
            t->launch_ids = ids;
        gt_kernel *launches = ids ? gt_rd_grow(t->launches, &cap_launches, t->n_launches + 1, sizeof *launches) : NULL;
        if (launches)
            t->launches = launches;
        unsigned char *bad = launches ? gt_rd_grow(t->launch_bad, &cap_bad, t->n_launches + 1, 1) : NULL;
        if (!bad) {
            rc = gt_rd_nomem(t);
            goto cleanup;
        }
        t->launch_bad = bad;
        gt_kernel *k = &t->launches[t->n_launches];
        memset(k, 0, sizeof *k);
        if ((rc = gt_rd_fill_fields(t, st, launch_fields, n_launch_fields, k)) < 0)
            goto cleanup;
        t->launch_bad[t->n_launches] = rc > 0;
        rc = 0;
        t->launch_ids[t->n_launches++] = sqlite3_column_int64(st, (int)n_launch_fields);
    }
    if (step != SQLITE_DONE) {
        rc = gt_rd_sql_fail(t, step, "reading kernel launches");
        goto cleanup;
    }
    t->launches_loaded = true;
cleanup:
    if (rc < 0)
        t->n_launches = 0;
    sqlite3_finalize(st);
    free(sql.s);
    return rc;
}

/* A gtrace kernel's launch configuration, from the launches read at first
 * use; a kernel of a refused launch row is refused. */
static int launch_hook(gt_iter *it, gt_event *ev)
{
    const gt_trace *t = it->t;
    if (sqlite3_column_type(it->stmt, launch_id_pos) == SQLITE_NULL)
        return 0;
    if (sqlite3_column_type(it->stmt, launch_id_pos) != SQLITE_INTEGER)
        return 1;
    int64_t id = sqlite3_column_int64(it->stmt, launch_id_pos);
    size_t n = t->n_launches, i;
    if (n > 0 && t->launch_ids[n - 1] - t->launch_ids[0] == (int64_t)n - 1) { /* ids 1..n, as written */
        if (id < t->launch_ids[0] || id > t->launch_ids[n - 1])
            return 0; /* no such launch: zeros, as a LEFT JOIN gives */
        i = (size_t)(id - t->launch_ids[0]);
    } else {
        size_t lo = 0, hi = n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t->launch_ids[mid] < id)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo == n || t->launch_ids[lo] != id)
            return 0;
        i = lo;
    }
    if (t->launch_bad[i])
        return 1;
    /* the launch's members from its row, this kernel's own from its own */
    gt_kernel *k = &ev->u.kernel, own = *k;
    *k = t->launches[i];
    k->start_ns = own.start_ns;
    k->end_ns = own.end_ns;
    k->stream_id = own.stream_id;
    k->correlation_id = own.correlation_id;
    k->grid_id = own.grid_id;
    k->graph_node_id = own.graph_node_id;
    return 0;
}

/* NVTX: the color, the message
 * (registered, or inline and interned here) and the one payload member that
 * is set. Refuses the row (1) where an integer column holds no integer. */
static int nvtx_hook(gt_iter *it, gt_event *ev)
{
    sqlite3_stmt *st = it->stmt;
    gt_nvtx *n = &ev->u.nvtx;
    int type[NV_N_HOOKED];

    for (int h = 0; h < NV_N_HOOKED; h++) {
        type[h] = sqlite3_column_type(st, nvtx_pos[h]);
        bool real = h == NV_F64 || h == NV_F32, text = h == NV_TEXT;
        if (!text && type[h] != SQLITE_NULL && type[h] != SQLITE_INTEGER && !(real && type[h] == SQLITE_FLOAT))
            return 1; /* no integer (or number) where one belongs */
    }
    if (type[NV_COLOR] != SQLITE_NULL) {
        n->has_color = true;
        n->color = (uint32_t)sqlite3_column_int64(st, nvtx_pos[NV_COLOR]);
    }
    if (type[NV_TEXT_ID] != SQLITE_NULL && sqlite3_column_int64(st, nvtx_pos[NV_TEXT_ID]) != 0) {
        n->text = sqlite3_column_int64(st, nvtx_pos[NV_TEXT_ID]);
        n->text_registered = true;
    } else if (type[NV_TEXT] != SQLITE_NULL) {
        const char *s = (const char *)sqlite3_column_text(st, nvtx_pos[NV_TEXT]);
        if (!s)
            return gt_rd_nomem(it->t);
        int rc = gt_rd_intern(it->t, s, &n->text);
        if (rc < 0)
            return rc;
    }
    for (int h = NV_U64; h <= NV_F32; h++) {
        if (type[h] == SQLITE_NULL)
            continue;
        int col = nvtx_pos[h];
        n->payload_kind = (gt_payload_kind)(GT_PAYLOAD_U64 + (h - NV_U64));
        switch (h) {
        case NV_U64: n->payload.u64 = (uint64_t)sqlite3_column_int64(st, col); break;
        case NV_I64: n->payload.i64 = sqlite3_column_int64(st, col); break;
        case NV_F64: n->payload.f64 = sqlite3_column_double(st, col); break;
        case NV_U32: n->payload.u32 = (uint32_t)sqlite3_column_int64(st, col); break;
        case NV_I32: n->payload.i32 = (int32_t)sqlite3_column_int64(st, col); break;
        case NV_F32: n->payload.f32 = (float)sqlite3_column_double(st, col); break;
        }
        break;
    }
    return 0;
}

int gt_iter_next(gt_iter *it, gt_event *ev)
{
    char doing[96];
    if (!it || !ev)
        return gt_error_set(GT_ERR_INVALID, "gt_iter_next: no iterator or no event");
    gt_trace *t = it->t;
    const kind_desc *d = it->desc;
    while (it->stmt) {
        int step = gt_rd_step(t, it->stmt, &it->ops);
        if (step == SQLITE_DONE) {
            sqlite3_finalize(it->stmt); /* releases its read of the file early */
            it->stmt = NULL;
            if (it->everything) {
                t->n_rejected[it->kind] = it->n_rejected;
                t->rejected_known[it->kind] = true;
            }
            return 0;
        }
        if (step != SQLITE_ROW) {
            snprintf(doing, sizeof doing, "reading %s events", gt_event_kind_name(it->kind));
            int rc = gt_rd_sql_fail(t, step, doing);
            sqlite3_finalize(it->stmt);
            it->stmt = NULL;
            return rc;
        }
        memset(ev, 0, sizeof *ev);
        ev->kind = it->kind;
        int rc = gt_rd_fill_fields(t, it->stmt, d->fields, d->n_fields, &ev->u);
        if (rc == 0 && d->hook)
            rc = d->hook(it, ev);
        if (rc < 0)
            return rc;
        if (rc == 0) {
            GT_ASSERT(gt_rd_row_in_limits(ev));
            return 1;
        }
        it->n_rejected++; /* a refused row: on to the next */
    }
    return 0;
}

void gt_iter_free(gt_iter *it)
{
    if (!it)
        return;
    sqlite3_finalize(it->stmt);
    free(it);
}

int gt_trace_rejected(gt_trace *t, gt_event_kind kind, int64_t *out_n)
{
    if (!t || !out_n || (unsigned)kind >= GT_EV_N_KINDS)
        return gt_error_set(GT_ERR_INVALID, "gt_trace_rejected: bad argument");
    *out_n = 0;
    if (!t->rejected_known[kind]) { /* no iteration went through it all yet: one that does */
        gt_iter *it = NULL;
        gt_event ev;
        int rc = iter_open(&it, t, kind, INT64_MIN, INT64_MAX, false, false);
        while (rc == 0 && (rc = gt_iter_next(it, &ev)) == 1)
            rc = 0;
        gt_iter_free(it);
        if (rc < 0)
            return rc;
        t->rejected_known[kind] = true; /* also with no table: none */
    }
    *out_n = t->n_rejected[kind];
    return 0;
}
