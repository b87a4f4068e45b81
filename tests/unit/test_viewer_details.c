/* test_viewer_details.c: the panel under the timeline in the window as a
 * window manager shows it (tests/integration/viewer_ui.sh runs it under
 * Xvfb with openbox): a clicked kernel's details (full name, launch
 * configuration, the call that launched it and that call's stack), a
 * copy's (its bytes and kind), and the
 * top kernels and ops table checked against SQL on the nsys fixture, whose
 * row, clicked, selects the name's longest instance, with n/p over the
 * others. Screenshots are grabs of the screen, written to $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "gv-window.h"

static GvWindow *open_window(const char *path, GvTraceModel **out)
{
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *w = GV_WINDOW(gv_window_new(m, NULL));
    gtk_window_set_default_size(GTK_WINDOW(w), 1300, 800);
    gtk_widget_show(GTK_WIDGET(w));
    GError *error = NULL;
    CU_ASSERT_TRUE(gv_trace_model_load(m, path, &error));
    for (int k = 0; k < 200 && !gtk_widget_get_mapped(GTK_WIDGET(w)); k++)
        ti_settle();
    for (int k = 0; k < 10; k++)
        ti_settle();
    *out = m;
    return w;
}

/* One launch with a two-frame stack and the kernel it launched. */
static int write_stack(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t pid = gt_global_pid(FX_PID), tid = gt_global_tid(FX_PID, FX_PID);
    gt_string_id full, shortn, launch, f0, f1, mod;
    gt_writer_intern(w, "void ops::scale_kernel<ops::Halve, 4>(float *, int)", &full);
    gt_writer_intern(w, "scale_kernel", &shortn);
    gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch);
    gt_writer_intern(w, "train_step", &f0);
    gt_writer_intern(w, "main", &f1);
    gt_writer_intern(w, "trainer", &mod);
    gt_writer_add_process(w, FX_PID, "stack");
    gt_writer_add_thread_name(w, tid, "main", 0);
    gt_frame frames[2] = {{.symbol = f0, .module = mod}, {.symbol = f1, .module = mod}};
    gt_writer_add_callchain(w, 9, frames, 2);
    gt_writer_begin(w);
    gt_event e = {.kind = GT_EV_API};
    e.u.api = (gt_api_call){.start_ns = FX_MS / 2, .end_ns = FX_MS, .global_tid = tid, .correlation_id = 1,
                            .name = launch, .event_class = GT_API_RUNTIME, .callchain_id = 9};
    gt_writer_add(w, &e);
    gt_event k = {.kind = GT_EV_KERNEL};
    k.u.kernel = (gt_kernel){.start_ns = 2 * FX_MS, .end_ns = 5 * FX_MS, .global_pid = pid, .device_id = 0,
                             .context_id = 1, .stream_id = 7, .correlation_id = 1, .demangled_name = full,
                             .short_name = shortn, .grid_x = 80, .grid_y = 2, .grid_z = 1, .block_x = 128,
                             .block_y = 1, .block_z = 1, .registers_per_thread = 40};
    gt_writer_add(w, &k);
    gt_string_id copy_call;
    gt_writer_intern(w, "cudaMemcpy_v3020", &copy_call);
    e.u.api = (gt_api_call){.start_ns = 5 * FX_MS + FX_MS / 2, .end_ns = 7 * FX_MS, .global_tid = tid,
                            .correlation_id = 2, .name = copy_call, .event_class = GT_API_RUNTIME, .callchain_id = 9};
    gt_writer_add(w, &e);
    gt_event c = {.kind = GT_EV_MEMCPY};
    c.u.memcpy = (gt_memcpy){.start_ns = 6 * FX_MS, .end_ns = 7 * FX_MS - FX_MS / 10, .global_pid = pid,
                             .device_id = 0, .context_id = 1, .stream_id = 7, .correlation_id = 2,
                             .bytes = 1 << 20, .copy_kind = GT_COPY_HTOD};
    gt_writer_add(w, &c);
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

/* A real click on the kernel: the details panel shows its full name, its
 * grid and block, the call that launched it and that call's stack. */
static void test_viewer_details__kernel(void)
{
    char *path = gt_test_path("stack.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_stack(path), 0);
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvView *v = gv_timeline_get_view(tl);
    GtkWidget *label = gv_window_get_details_label(win);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(label));
    int wx, wy, ww, wh;
    ti_screen_rect(GTK_WIDGET(tl), &wx, &wy, &ww, &wh);
    CU_ASSERT_EQUAL(ti_xclick(wx + (int)gv_view_x(v, 3 * FX_MS), wy + (int)gv_view_lane_y(m, v, 0, 1) + GV_LANE_H / 2), 0);
    for (int k = 0; k < 20; k++)
        ti_settle();
    const char *d = gv_window_get_details(win);
    fprintf(stderr, "details:\n%s\n", d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "scale_kernel<Halve>"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "void ops::scale_kernel<ops::Halve, 4>(float *, int)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "grid (80, 2, 1)  block (128, 1, 1)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "launched by cudaLaunchKernel"));
    const char *stack = strstr(d, "stack of the call");
    CU_ASSERT_PTR_NOT_NULL_FATAL(stack);
    const char *a = strstr(stack, "train_step  trainer"), *b = strstr(stack, "main  trainer");
    CU_ASSERT_TRUE(a && b && a < b);
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-details-kernel.png");
    GtkWidget *sw = gtk_widget_get_ancestor(label, GTK_TYPE_SCROLLED_WINDOW);
    int lx, ly, lw, lh;
    ti_screen_rect(sw, &lx, &ly, &lw, &lh);
    CU_ASSERT(ly >= wy + wh); /* under the timeline */
    int ink = ti_count_dark(screen, lx, ly, lw, lh, 110);
    fprintf(stderr, "details panel at %d,%d %dx%d: %d dark px\n", lx, ly, lw, lh, ink);
    CU_ASSERT(ink > 800);
    CU_ASSERT(ink < lw * lh / 5); /* text on the light panel */
    g_object_unref(screen);

    /* The copy: what it moved, and its call's stack. */
    int copy_x = wx + (int)gv_view_x(v, 6 * FX_MS + FX_MS / 2);
    CU_ASSERT_EQUAL(ti_xclick(copy_x, wy + (int)gv_view_lane_y(m, v, 0, 1) + GV_LANE_H / 2), 0);
    for (int k = 0; k < 20; k++)
        ti_settle();
    d = gv_window_get_details(win);
    fprintf(stderr, "details:\n%s\n", d);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "Memcpy HtoD"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "arguments\n  HtoD, 1.00 MiB (1048576 B)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "launched by cudaMemcpy"));
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "stack of the call (innermost first)\n  train_step  trainer"));
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    free(path);
}

/* Count and longest duration of the fixture's kernels whose demangled name starts with prefix. */
static gboolean sql_kernels(const char *path, const char *prefix, long long *count, long long *longest)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return FALSE;
    gboolean ok = sqlite3_prepare_v2(db, "SELECT COUNT(*), MAX(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k"
                                         " JOIN StringIds s ON s.id = k.demangledName WHERE substr(s.value, 1, ?1) = ?2",
                                     -1, &st, NULL) == SQLITE_OK;
    if (ok) {
        sqlite3_bind_int(st, 1, (int)strlen(prefix));
        sqlite3_bind_text(st, 2, prefix, -1, SQLITE_STATIC);
        ok = sqlite3_step(st) == SQLITE_ROW;
        *count = sqlite3_column_int64(st, 0);
        *longest = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return ok;
}

static gboolean is_tab_label(GtkWidget *w, gconstpointer text)
{
    return GTK_IS_LABEL(w) && strcmp(gtk_label_get_text(GTK_LABEL(w)), text) == 0;
}

static gboolean selected_item(GvTraceModel *m, GvTimeline *tl, GvItem *out)
{
    GvItemRef r;
    if (!gv_timeline_get_selection(tl, &r))
        return FALSE;
    gv_trace_model_lock(m);
    *out = gv_trace_model_track(m, r.track)->lanes[r.lane]->items[r.index];
    gv_trace_model_unlock(m);
    return TRUE;
}

/* The table against SQL; a real click on a row selects the longest PdV
 * kernel and zooms to it; n and p walk that name's kernels in time. */
static void test_viewer_details__top_table(void)
{
    char *path = g_build_filename(getenv("GT_FIXTURES") ? getenv("GT_FIXTURES") : "tests/fixtures",
                                  "nsys/cloverleaf-cuda-nsys2024.5.sqlite", NULL);
    GvTraceModel *m;
    GvWindow *win = open_window(path, &m);
    GvTimeline *tl = gv_window_get_timeline(win);
    GvTopView *top = gv_window_get_top_view(win);
    GtkTreeModel *tm = gv_top_view_get_model(top);
    for (int k = 0; k < 500 && gtk_tree_model_iter_n_children(tm, NULL) == 0; k++)
        ti_settle(); /* counted on a thread */
    CU_ASSERT_FATAL(gtk_tree_model_iter_n_children(tm, NULL) > 10);

    /* The tab, clicked with the real pointer. */
    GtkWidget *tab = ti_find_widget(GTK_WIDGET(win), is_tab_label, "Top kernels and ops");
    CU_ASSERT_PTR_NOT_NULL_FATAL(tab);
    int x, y, w, h;
    ti_screen_rect(tab, &x, &y, &w, &h);
    CU_ASSERT_EQUAL(ti_xclick(x + w / 2, y + h / 2), 0);
    for (int k = 0; k < 20; k++)
        ti_settle();
    GtkTreeView *tree = gv_top_view_get_tree(top);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(GTK_WIDGET(tree)));

    /* Sorted by total, longest first; the PdV row is SQL's count. */
    long long want_n = 0, want_max = 0;
    CU_ASSERT_TRUE_FATAL(sql_kernels(path, "void clover::par_ranged2d_kernel<PdV_kernel(", &want_n, &want_max));
    GtkTreeIter it;
    gint64 prev = G_MAXINT64;
    int unsorted = 0, row = 0, pdv_row = -1;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it), row++) {
        g_autofree char *name = NULL;
        gint64 count = 0, total = 0, longest = 0;
        gtk_tree_model_get(tm, &it, GV_TOP_COL_NAME, &name, GV_TOP_COL_COUNT, &count, GV_TOP_COL_TOTAL, &total,
                           GV_TOP_COL_MAX, &longest, -1);
        unsorted += total > prev;
        prev = total;
        if (strcmp(name, "par_ranged2d_kernel<PdV_kernel>") == 0) {
            pdv_row = row;
            CU_ASSERT_EQUAL(count, want_n);
            CU_ASSERT_EQUAL(longest, want_max);
        }
    }
    CU_ASSERT_EQUAL(unsorted, 0);
    CU_ASSERT_FATAL(pdv_row >= 0);
    fprintf(stderr, "PdV: row %d, %lld kernels, longest %lld ns\n", pdv_row, want_n, want_max);
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-details-top.png");
    int tx, ty, tw, th;
    ti_screen_rect(GTK_WIDGET(tree), &tx, &ty, &tw, &th);
    CU_ASSERT(ti_count_dark(screen, tx, ty, tw, th, 110) > 500);
    g_object_unref(screen);

    /* A real click on the row. */
    GtkTreePath *tp = gtk_tree_path_new_from_indices(pdv_row, -1);
    gtk_tree_view_scroll_to_cell(tree, tp, NULL, FALSE, 0, 0);
    for (int k = 0; k < 10; k++)
        ti_settle();
    GdkRectangle cell;
    gtk_tree_view_get_cell_area(tree, tp, gtk_tree_view_get_column(tree, GV_TOP_COL_NAME), &cell);
    int bx, by;
    gtk_tree_view_convert_bin_window_to_widget_coords(tree, cell.x, cell.y, &bx, &by);
    gtk_tree_path_free(tp);
    ti_screen_rect(GTK_WIDGET(tree), &tx, &ty, &tw, &th);
    CU_ASSERT_EQUAL(ti_xclick(tx + bx + 20, ty + by + cell.height / 2), 0);
    for (int k = 0; k < 20; k++)
        ti_settle();
    GvItem sel;
    CU_ASSERT_TRUE_FATAL(selected_item(m, tl, &sel));
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, sel.name), "par_ranged2d_kernel<PdV_kernel>");
    CU_ASSERT_EQUAL(sel.end_ns - sel.start_ns, want_max);
    GvView *v = gv_timeline_get_view(tl);
    CU_ASSERT(v->t0_ns <= sel.start_ns && gv_view_end(v) >= sel.end_ns &&
              gv_view_end(v) - v->t0_ns < 2 * (sel.end_ns - sel.start_ns));
    CU_ASSERT_TRUE(gtk_widget_has_focus(GTK_WIDGET(tl)));
    screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-details-longest.png");
    g_object_unref(screen);

    /* n: the next PdV kernel in time (others run between); p: back. */
    GvItem longest = sel, next;
    CU_ASSERT_EQUAL(ti_xdotool("key n"), 0);
    for (int k = 0; k < 10; k++)
        ti_settle();
    CU_ASSERT_TRUE_FATAL(selected_item(m, tl, &next));
    CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, next.name), "par_ranged2d_kernel<PdV_kernel>");
    CU_ASSERT(next.start_ns > longest.start_ns);
    CU_ASSERT_EQUAL(ti_xdotool("key p"), 0);
    for (int k = 0; k < 10; k++)
        ti_settle();
    CU_ASSERT_TRUE_FATAL(selected_item(m, tl, &sel));
    CU_ASSERT_EQUAL(sel.start_ns, longest.start_ns);
    /* All of them, from the first: n reaches every one. */
    int steps = 1;
    for (int k = 0; k < 200; k++) {
        GvItem before = sel;
        CU_ASSERT_EQUAL(ti_xdotool("key p"), 0);
        ti_settle();
        selected_item(m, tl, &sel);
        if (sel.start_ns == before.start_ns)
            break;
    }
    for (int k = 0; k < 200; k++) {
        GvItem before = sel;
        CU_ASSERT_EQUAL(ti_xdotool("key n"), 0);
        ti_settle();
        selected_item(m, tl, &sel);
        if (sel.start_ns == before.start_ns)
            break;
        CU_ASSERT(sel.start_ns > before.start_ns);
        CU_ASSERT_STRING_EQUAL(gv_trace_model_name(m, sel.name), "par_ranged2d_kernel<PdV_kernel>");
        steps++;
    }
    CU_ASSERT_EQUAL(steps, want_n);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
    g_free(path);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_details: no display (run it through tests/integration/viewer_ui.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_details__kernel", test_viewer_details__kernel},
        {"test_viewer_details__top_table", test_viewer_details__top_table},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_details", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
