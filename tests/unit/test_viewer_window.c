/* test_viewer_window.c: the window as a window manager shows it
 * (tests/integration/viewer_ui.sh runs it under Xvfb with openbox): the
 * header bar with the trace's name, its close button clicked through the X
 * server, the compare page's titles, and a range selected with the mouse
 * with its statistics checked against SQL on the trace and the analysis, and
 * the progress bar shown while a trace loads and is analysed. Screenshots
 * are grabs of the screen, written to $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "gv-window.h"

static GvWindow *open_window(const char *path, const char *path2, GvTraceModel **out)
{
    GvTraceModel *m = gv_trace_model_new(), *m2 = path2 ? gv_trace_model_new() : NULL;
    GvWindow *w = GV_WINDOW(gv_window_new(m, m2));
    gtk_window_set_default_size(GTK_WINDOW(w), 1300, 800);
    gtk_widget_show(GTK_WIDGET(w));
    GError *error = NULL;
    CU_ASSERT_TRUE(gv_trace_model_load(m, path, &error));
    if (m2)
        CU_ASSERT_TRUE(gv_trace_model_load(m2, path2, &error));
    /* Until the window manager has mapped it and GTK has drawn it. */
    for (int k = 0; k < 200 && !gtk_widget_get_mapped(GTK_WIDGET(w)); k++)
        ti_settle();
    ti_settle();
    if (out)
        *out = m;
    else
        g_object_unref(m);
    if (m2)
        g_object_unref(m2);
    return w;
}

static gboolean is_label_with_text(GtkWidget *w, gconstpointer text)
{
    return GTK_IS_LABEL(w) && strcmp(gtk_label_get_text(GTK_LABEL(w)), text) == 0;
}

static gboolean is_close_button(GtkWidget *w, gconstpointer unused)
{
    GtkStyleContext *sc = gtk_widget_get_style_context(w);
    return GTK_IS_BUTTON(w) && gtk_style_context_has_class(sc, "titlebutton") && gtk_style_context_has_class(sc, "close");
}

static gboolean is_search_entry(GtkWidget *w, gconstpointer unused) { return GTK_IS_SEARCH_ENTRY(w); }

static gboolean is_button_labelled(GtkWidget *w, gconstpointer text)
{
    return GTK_IS_BUTTON(w) && gtk_button_get_label(GTK_BUTTON(w)) &&
           strcmp(gtk_button_get_label(GTK_BUTTON(w)), text) == 0;
}

static void on_destroy(GtkWidget *w, gpointer p) { *(gboolean *)p = TRUE; }

/* The header bar is on screen with the file's name drawn in it, Fit, Export
 * and the search entry beside it, and its close button closes the window. */
static void test_viewer_window__header_bar(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvWindow *win = open_window(path, NULL, NULL);
    GtkWidget *top = GTK_WIDGET(win);
    CU_ASSERT_STRING_EQUAL(gtk_window_get_title(GTK_WINDOW(win)), "fixture.sqlite");
    GtkWidget *bar = gtk_window_get_titlebar(GTK_WINDOW(win));
    CU_ASSERT_PTR_NOT_NULL_FATAL(bar);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(bar));
    CU_ASSERT_STRING_EQUAL(gtk_header_bar_get_title(GTK_HEADER_BAR(bar)), "fixture.sqlite");
    GtkWidget *title = ti_find_widget(bar, is_label_with_text, "fixture.sqlite");
    CU_ASSERT_PTR_NOT_NULL_FATAL(title);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(title));
    const char *const buttons[] = {"Fit", "Export PNG"};
    for (int i = 0; i < 2; i++) {
        GtkWidget *b = ti_find_widget(bar, is_button_labelled, buttons[i]);
        CU_ASSERT_TRUE(b && gtk_widget_get_mapped(b));
    }
    GtkWidget *search = ti_find_widget(bar, is_search_entry, NULL);
    CU_ASSERT_TRUE_FATAL(search && gtk_widget_get_mapped(search));

    /* On the screen: the bar sits above the content, and the title's text is
     * drawn where its label is (dark pixels on the bar), not elsewhere in the bar's
     * empty middle. */
    GdkPixbuf *screen = ti_grab_screen();
    CU_ASSERT_PTR_NOT_NULL_FATAL(screen);
    ti_save_grab(screen, "viewer-window-header.png");
    int bx, by, bw, bh, tx, ty, tw, th;
    ti_screen_rect(bar, &bx, &by, &bw, &bh);
    ti_screen_rect(title, &tx, &ty, &tw, &th);
    int cx, cy, cw, ch;
    ti_screen_rect(GTK_WIDGET(gv_window_get_timeline(win)), &cx, &cy, &cw, &ch);
    CU_ASSERT(bh >= 30);
    CU_ASSERT(cy >= by + bh); /* the timeline is below the bar */
    CU_ASSERT(ty >= by && ty + th <= by + bh);
    int ink = ti_count_dark(screen, tx, ty, tw, th, 110);
    CU_ASSERT(ink > 40);
    /* The bar's background between the title and the search entry: no text. */
    int sx, sy, sw, sh;
    ti_screen_rect(search, &sx, &sy, &sw, &sh);
    CU_ASSERT(ti_count_dark(screen, tx + tw + 8, by + 4, MAX(sx - (tx + tw) - 16, 0), bh - 8, 110) == 0);
    int bg[3];
    ti_pixel(screen, tx + tw + 10, by + bh / 2, bg);
    fprintf(stderr, "title at %d,%d %dx%d: %d dark pixels; bar background %d,%d,%d\n", tx, ty, tw, th, ink, bg[0],
            bg[1], bg[2]);
    g_object_unref(screen);

    /* A real click on the close button closes the window. */
    GtkWidget *close = ti_find_widget(bar, is_close_button, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(close);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(close));
    gboolean destroyed = FALSE;
    g_signal_connect(top, "destroy", G_CALLBACK(on_destroy), &destroyed);
    int x, y, w, h;
    ti_screen_rect(close, &x, &y, &w, &h);
    CU_ASSERT_EQUAL(ti_xclick(x + w / 2, y + h / 2), 0);
    for (int k = 0; k < 200 && !destroyed; k++)
        ti_settle();
    CU_ASSERT_TRUE(destroyed);
    if (!destroyed)
        gtk_widget_destroy(top);
    free(path);
}

/* The compare page names both files over their timelines, and the window both. */
static void test_viewer_window__compare_titles(void)
{
    const int64_t da[3] = {10 * FX_MS, 10 * FX_MS, 10 * FX_MS}, db[3] = {12 * FX_MS, 7 * FX_MS, 15 * FX_MS};
    char *a = gt_test_path("before.sqlite"), *b = gt_test_path("after.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write_steps(a, da, 3, 1 * FX_MS, 0), 0);
    CU_ASSERT_EQUAL_FATAL(fx_write_steps(b, db, 3, 4 * FX_MS, 0), 0);
    GvWindow *win = open_window(a, b, NULL);
    GvCompare *c = gv_window_get_compare(win);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    g_autofree char *want0 = g_strdup_printf("before: %s", a), *want1 = g_strdup_printf("after: %s", b);
    CU_ASSERT_STRING_EQUAL(gv_compare_get_title(c, 0), want0);
    CU_ASSERT_STRING_EQUAL(gv_compare_get_title(c, 1), want1);
    CU_ASSERT_STRING_EQUAL(gtk_window_get_title(GTK_WINDOW(win)), "before.sqlite vs after.sqlite");
    GtkWidget *label = ti_find_widget(GTK_WIDGET(c), is_label_with_text, want0);
    CU_ASSERT_TRUE_FATAL(label && gtk_widget_get_mapped(label));
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-window-compare.png");
    int x, y, w, h;
    ti_screen_rect(label, &x, &y, &w, &h);
    CU_ASSERT(ti_count_dark(screen, x, y, w, h, 110) > 100);
    g_object_unref(screen);
    gtk_widget_destroy(GTK_WIDGET(win));
    free(a);
    free(b);
}

/* Sums over the trace's rows in [from, to): count, clipped total, and clipped
 * self (less the ranges nested in each), by name; SQL's own arithmetic. */
typedef struct sql_row { char name[64]; long long count, total, self; } sql_row;

static int sql_rows(const char *path, const char *table_sql, int64_t from, int64_t to, sql_row *out, int max)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int n = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -1;
    g_autofree char *q = g_strdup_printf(
        "WITH r(name, s, e) AS (%s),"
        " c(name, s, e) AS (SELECT name, MAX(s, ?1), MIN(e, ?2) FROM r WHERE e > ?1 AND s < ?2)"
        " SELECT name, COUNT(*), SUM(e - s),"
        "  SUM(e - s) - COALESCE(SUM((SELECT SUM(MIN(k.e, p.e) - MAX(k.s, p.s)) FROM c AS k"
        "   WHERE k.s >= p.s AND k.e <= p.e AND NOT (k.s = p.s AND k.e = p.e))), 0)"
        " FROM c AS p GROUP BY name ORDER BY name",
        table_sql);
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    sqlite3_bind_int64(st, 1, from);
    sqlite3_bind_int64(st, 2, to);
    while (n < max && sqlite3_step(st) == SQLITE_ROW) {
        g_strlcpy(out[n].name, (const char *)sqlite3_column_text(st, 0), sizeof out[n].name);
        out[n].count = sqlite3_column_int64(st, 1);
        out[n].total = sqlite3_column_int64(st, 2);
        out[n].self = sqlite3_column_int64(st, 3);
        n++;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

/* The table's row whose lane contains `lane` and whose name is `name`. */
static gboolean table_row(GtkTreeModel *tm, const char *lane, const char *name, gint64 *count, gint64 *total,
                          gint64 *self, double *share)
{
    GtkTreeIter it;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it)) {
        g_autofree char *l = NULL, *n = NULL;
        gtk_tree_model_get(tm, &it, GV_RANGE_COL_LANE, &l, GV_RANGE_COL_NAME, &n, GV_RANGE_COL_COUNT, count,
                           GV_RANGE_COL_TOTAL, total, GV_RANGE_COL_SELF, self, GV_RANGE_COL_SHARE, share, -1);
        if (strstr(l, lane) && strcmp(n, name) == 0)
            return TRUE;
    }
    return FALSE;
}

/* The axis pixels in the colour of the range's label, between x0 and x1. */
static int range_label_pixels(const GdkPixbuf *p, int x0, int x1, int y0, int h)
{
    int n = 0;
    for (int y = y0; y < y0 + h; y++)
        for (int x = x0; x < x1; x++) {
            int rgb[3];
            ti_pixel(p, x, y, rgb);
            n += abs(rgb[0] - 51) <= 3 && abs(rgb[1] - 102) <= 3 && abs(rgb[2] - 230) <= 3;
        }
    return n;
}

/* A drag on the time axis with the real pointer selects 1.5..4.5 ms: the band
 * says its duration, and the table's rows are what SQL and the analysis say
 * of the same range; a click on a column's header sorts by it. */
static void test_viewer_window__range_stats(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, NULL, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView *v = gv_timeline_get_view(tl);
    GvRangeView *rv = gv_window_get_range_view(win);
    CU_ASSERT_FALSE(gtk_widget_get_visible(GTK_WIDGET(rv)));
    int wx, wy, ww, wh;
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    int x0 = (int)gv_view_x(v, 3 * FX_MS / 2), x1 = (int)gv_view_x(v, 9 * FX_MS / 2);
    CU_ASSERT_EQUAL(ti_xdrag(wx + x0, wy + 8, wx + x1, wy + 8), 0);
    ti_settle();
    int64_t from = 0, to = 0;
    CU_ASSERT_TRUE_FATAL(gv_timeline_get_range(tl, &from, &to));
    CU_ASSERT(llabs(from - 3 * FX_MS / 2) <= (int64_t)v->ns_per_px + 1);
    CU_ASSERT(llabs(to - 9 * FX_MS / 2) <= (int64_t)v->ns_per_px + 1);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(GTK_WIDGET(rv)));
    for (int k = 0; k < 20; k++)
        ti_settle();

    /* Drawn: the duration's label on the axis over the band, and the table. */
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-window-range.png");
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    int label = range_label_pixels(screen, wx + x0 + 1, wx + x1 - 1, wy + 2, GV_AXIS_H - 4);
    CU_ASSERT(label > (x1 - x0) * (GV_AXIS_H - 4) / 2);  /* mostly the label's fill */
    CU_ASSERT(label < (x1 - x0) * (GV_AXIS_H - 4) - 20); /* with the duration's text in it */
    CU_ASSERT_EQUAL(range_label_pixels(screen, wx + GV_LABEL_W, wx + x0 - 2, wy + 2, GV_AXIS_H - 4), 0);
    int tx, ty, tw, th;
    ti_screen_rect(GTK_WIDGET(gv_range_view_get_tree(rv)), &tx, &ty, &tw, &th);
    CU_ASSERT(ty >= wy + wh && th > 60);
    CU_ASSERT(ti_count_dark(screen, tx, ty, tw, th, 110) > 300); /* rows of text */
    g_object_unref(screen);
    char d[40];
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_range_view_get_summary(rv), gt_fmt_ns(d, sizeof d, (double)(to - from))));

    /* The rows against SQL: kernels on stream 7, NVTX ranges (self: less the nested ones). */
    GtkTreeModel *tm = gv_range_view_get_model(rv);
    sql_row want[8];
    int n = sql_rows(path, "SELECT s.value, k.start, k.end FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                           " JOIN StringIds s ON s.id = k.shortName", from, to, want, 8);
    CU_ASSERT_EQUAL(n, 2); /* kernA and kernB */
    long long busy = 0;
    for (int i = 0; i < n; i++) {
        gint64 count = 0, total = 0, self = 0;
        double share = 0;
        CU_ASSERT_TRUE(table_row(tm, "stream 7", want[i].name, &count, &total, &self, &share));
        CU_ASSERT_EQUAL(count, want[i].count);
        CU_ASSERT_EQUAL(total, want[i].total);
        CU_ASSERT_EQUAL(self, want[i].total);
        CU_ASSERT_DOUBLE_EQUAL(share, (double)want[i].total / (double)(to - from), 1e-9);
        busy += want[i].total; /* one stream: the union is the sum */
    }
    n = sql_rows(path, "SELECT text, start, end FROM NVTX_EVENTS WHERE eventType = 59", from, to, want, 8);
    CU_ASSERT_EQUAL(n, 2); /* forward and step 0 */
    for (int i = 0; i < n; i++) {
        gint64 count = 0, total = 0, self = 0;
        double share = 0;
        /* on the lanes named for what they hold (gv-trace-loader.c) */
        const char *lane = strcmp(want[i].name, "step 0") == 0 ? " / steps" : " / phases";
        CU_ASSERT_TRUE(table_row(tm, lane, want[i].name, &count, &total, &self, &share));
        CU_ASSERT_EQUAL(count, want[i].count);
        CU_ASSERT_EQUAL(total, want[i].total);
        CU_ASSERT_EQUAL(self, want[i].self);
    }
    CU_ASSERT(want[1].self < want[1].total); /* step 0 holds forward */

    /* The device: busy, and idle by cause from the analysis's own gaps, clipped. */
    gt_trace *t = NULL;
    gt_analysis *a = NULL;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, path, 0), 0);
    CU_ASSERT_EQUAL_FATAL(gt_analysis_load(&a, t, NULL), 0);
    size_t n_gaps = 0;
    const gt_gap_span *gaps = gt_analysis_gaps(a, &n_gaps);
    long long idle[GT_GAP_OTHER + 1] = {0}, n_idle[GT_GAP_OTHER + 1] = {0};
    for (size_t i = 0; i < n_gaps; i++) {
        long long in = MIN(gaps[i].end_ns, to) - MAX(gaps[i].start_ns, from);
        if (in > 0) {
            idle[gaps[i].cause] += in;
            n_idle[gaps[i].cause]++;
        }
    }
    int causes = 0;
    for (int c = 0; c <= GT_GAP_OTHER; c++) {
        g_autofree char *name = g_strdup_printf("idle: %s", gt_gap_cause_name((gt_gap_cause)c));
        gint64 count = 0, total = 0, self = 0;
        double share = 0;
        gboolean found = table_row(tm, "GPU 0", name, &count, &total, &self, &share);
        CU_ASSERT_EQUAL(found, n_idle[c] > 0);
        if (found) {
            causes++;
            CU_ASSERT_EQUAL(count, n_idle[c]);
            CU_ASSERT_EQUAL(total, idle[c]);
        }
    }
    CU_ASSERT_EQUAL(causes, 1); /* the host-wait gap */
    gt_analysis_free(a);
    gt_trace_free(t);
    gint64 count = 0, total = 0, self = 0;
    double share = 0;
    CU_ASSERT_TRUE(table_row(tm, "GPU 0", "busy", &count, &total, &self, &share));
    CU_ASSERT_EQUAL(total, busy);

    /* A real click on the "count" header sorts by count. */
    GtkTreeView *tree = gv_range_view_get_tree(rv);
    GtkWidget *head = gtk_tree_view_column_get_button(gtk_tree_view_get_column(tree, GV_RANGE_COL_COUNT));
    int hx, hy, hw, hh;
    ti_screen_rect(head, &hx, &hy, &hw, &hh);
    CU_ASSERT_EQUAL(ti_xclick(hx + hw / 2, hy + hh / 2), 0);
    ti_settle();
    int sort_col = -1;
    GtkSortType order;
    CU_ASSERT_TRUE(gtk_tree_sortable_get_sort_column_id(GTK_TREE_SORTABLE(tm), &sort_col, &order));
    CU_ASSERT_EQUAL(sort_col, GV_RANGE_COL_COUNT);
    GtkTreeIter it;
    gint64 prev = order == GTK_SORT_ASCENDING ? G_MININT64 : G_MAXINT64;
    int rows = 0, unsorted = 0;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it)) {
        gtk_tree_model_get(tm, &it, GV_RANGE_COL_COUNT, &count, -1);
        unsorted += order == GTK_SORT_ASCENDING ? count < prev : count > prev;
        prev = count;
        rows++;
    }
    CU_ASSERT(rows >= 7);
    CU_ASSERT_EQUAL(unsorted, 0);

    /* Escape drops the range and the table. */
    gtk_widget_grab_focus(GTK_WIDGET(tl));
    GdkEvent *e = gdk_event_new(GDK_KEY_PRESS);
    e->key.keyval = GDK_KEY_Escape;
    ti_send(GTK_WIDGET(tl), e);
    CU_ASSERT_FALSE(gv_timeline_get_range(tl, &from, &to));
    CU_ASSERT_FALSE(gtk_widget_get_visible(GTK_WIDGET(rv)));
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

static int orange_pixels(const GdkPixbuf *p, int x, int y, int w, int h)
{
    int n = 0;
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) {
            int rgb[3];
            ti_pixel(p, i, j, rgb);
            n += rgb[0] >= 250 && abs(rgb[1] - 140) <= 4 && rgb[2] <= 4;
        }
    return n;
}

/* Runs the loop until the match count beside the entry reads `want` (the
 * entry says "search-changed" a moment after the last key). */
static gboolean wait_matches(GvWindow *win, const char *want)
{
    for (int k = 0; k < 500 && strcmp(gv_window_get_matches(win), want) != 0; k++)
        ti_settle();
    if (strcmp(gv_window_get_matches(win), want) != 0)
        fprintf(stderr, "matches: \"%s\", not \"%s\"\n", gv_window_get_matches(win), want);
    return strcmp(gv_window_get_matches(win), want) == 0;
}

/* Ctrl+F, typing and Enter with real keys: every match outlined, "k of N"
 * with N what SQL counts, Enter zooms to the next match in time order. */
static void test_viewer_window__search(void)
{
    char *path = gt_test_path("fixture.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, NULL, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView *v = gv_timeline_get_view(tl);
    GtkWidget *entry = gv_window_get_search_entry(win);
    gtk_widget_grab_focus(GTK_WIDGET(tl));
    ti_settle();
    CU_ASSERT_EQUAL(ti_xdotool("key --clearmodifiers ctrl+f"), 0);
    for (int k = 0; k < 100 && !gtk_widget_has_focus(entry); k++)
        ti_settle();
    CU_ASSERT_TRUE_FATAL(gtk_widget_has_focus(entry));
    CU_ASSERT_EQUAL(ti_xdotool("type --delay 20 kern"), 0);

    /* Names containing "kern", any case: the kernels and their launch calls. */
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db,
        "SELECT (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName"
        "  WHERE s.value LIKE '%kern%')"
        " + (SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId"
        "  WHERE s.value LIKE '%kern%')"
        " + (SELECT COUNT(*) FROM NVTX_EVENTS WHERE text LIKE '%kern%')", -1, &st, NULL), SQLITE_OK);
    CU_ASSERT_EQUAL_FATAL(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    CU_ASSERT_EQUAL(n, 6);
    g_autofree char *all = g_strdup_printf("%d matches", n);
    CU_ASSERT_TRUE(wait_matches(win, all));
    for (int k = 0; k < 20; k++)
        ti_settle();
    /* Outlined: in the kernels' lane and in the CUDA calls' lane. */
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-window-search.png");
    int wx, wy, ww, wh;
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    int ky = wy + (int)gv_view_lane_y(m, v, 0, 1), ay = wy + (int)gv_view_lane_y(m, v, 1, 3);
    int in_kernels = orange_pixels(screen, wx + GV_LABEL_W, ky, ww - GV_LABEL_W, GV_LANE_H);
    int in_calls = orange_pixels(screen, wx + GV_LABEL_W, ay, ww - GV_LABEL_W, GV_LANE_H);
    int elsewhere = orange_pixels(screen, wx + GV_LABEL_W, wy + (int)gv_view_lane_y(m, v, 1, 1), ww - GV_LABEL_W,
                                  GV_LANE_H); /* NVTX 0: "step 0" */
    fprintf(stderr, "orange: kernels %d, calls %d, NVTX %d\n", in_kernels, in_calls, elsewhere);
    CU_ASSERT(in_kernels > 100);
    CU_ASSERT(in_calls > 30);
    CU_ASSERT_EQUAL(elsewhere, 0);
    g_object_unref(screen);

    /* Enter: the first match in time (launch A at 0.5 ms), zoomed to; again: kernA at 1 ms. */
    CU_ASSERT_EQUAL(ti_xdotool("key Return"), 0);
    g_autofree char *first = g_strdup_printf("1 of %d", n), *second = g_strdup_printf("2 of %d", n);
    CU_ASSERT_TRUE(wait_matches(win, first));
    GvItemRef sel;
    CU_ASSERT_TRUE(gv_timeline_get_selection(tl, &sel));
    CU_ASSERT(v->t0_ns <= FX_MS / 2 && gv_view_end(v) >= 6 * FX_MS / 10 && gv_view_end(v) - v->t0_ns < FX_MS / 2);
    CU_ASSERT_EQUAL(ti_xdotool("key Return"), 0);
    CU_ASSERT_TRUE(wait_matches(win, second));
    CU_ASSERT(v->t0_ns <= 1 * FX_MS && gv_view_end(v) >= 2 * FX_MS && gv_view_end(v) - v->t0_ns < 2 * FX_MS);
    CU_ASSERT_PTR_NOT_NULL(strstr(gv_window_get_status(win), "kernA"));
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

static void on_loaded(GObject *src, GAsyncResult *res, gpointer p)
{
    *(int *)p = gv_trace_model_load_finish(GV_TRACE_MODEL(src), res, NULL) ? 1 : -1;
}

/* 60,000 steps (180,000 events): while they load and the analysis runs, a
 * progress bar beside the status line says so, on the screen; it goes once
 * the trace is analysed. */
static void test_viewer_window__progress(void)
{
    enum { N_STEPS = 60000 };
    int64_t *step_ns = g_new(int64_t, N_STEPS);
    for (int k = 0; k < N_STEPS; k++)
        step_ns[k] = FX_MS / 2 + k % 7 * 1000;
    char *path = gt_test_path("progress.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write_steps(path, step_ns, N_STEPS, FX_MS, 0), 0);
    g_free(step_ns);
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *win = GV_WINDOW(gv_window_new(m, NULL));
    gtk_window_set_default_size(GTK_WINDOW(win), 1300, 800);
    gtk_widget_show(GTK_WIDGET(win));
    for (int k = 0; k < 200 && !gtk_widget_get_mapped(GTK_WIDGET(win)); k++)
        ti_settle();
    GtkWidget *bar = GTK_WIDGET(gv_window_get_progress(win));
    CU_ASSERT_FALSE(gtk_widget_get_visible(bar)); /* nothing loads yet */
    int done = 0;
    gv_trace_model_load_async(m, path, NULL, on_loaded, &done);
    CU_ASSERT_TRUE(gtk_widget_get_visible(bar));
    const char *text = gtk_progress_bar_get_text(GTK_PROGRESS_BAR(bar));
    CU_ASSERT_TRUE(text && strstr(text, "loading"));
    gboolean seen = FALSE;
    while (!done) {
        ti_settle();
        if (seen || !gtk_widget_get_mapped(bar) || gv_trace_model_is_analysed(m))
            continue;
        ti_settle(); /* drawn */
        if (gv_trace_model_is_analysed(m))
            continue;
        g_autofree char *shown = g_strdup(gtk_progress_bar_get_text(GTK_PROGRESS_BAR(bar)));
        GdkPixbuf *screen = ti_grab_screen();
        int bx, by, bw, bh;
        ti_screen_rect(bar, &bx, &by, &bw, &bh);
        int dark = ti_count_dark(screen, bx, by, bw, bh, 190); /* the theme draws its text grey */
        fprintf(stderr, "progress: \"%s\" at %d,%d %dx%d, %d dark pixels\n", shown, bx, by, bw, bh, dark);
        CU_ASSERT(strstr(shown, "loading") || strstr(shown, "analysing"));
        CU_ASSERT(bw >= 200 && dark > 40); /* its text on the screen */
        ti_save_grab(screen, "viewer-progress.png");
        g_object_unref(screen);
        seen = TRUE;
    }
    CU_ASSERT_TRUE(seen);
    CU_ASSERT_EQUAL(done, 1);
    ti_settle();
    CU_ASSERT_FALSE(gtk_widget_get_visible(bar)); /* analysed: gone */
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_window: no display (run it through tests/integration/viewer_ui.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_window__header_bar", test_viewer_window__header_bar},
        {"test_viewer_window__compare_titles", test_viewer_window__compare_titles},
        {"test_viewer_window__range_stats", test_viewer_window__range_stats},
        {"test_viewer_window__search", test_viewer_window__search},
        {"test_viewer_window__progress", test_viewer_window__progress},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_window", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
