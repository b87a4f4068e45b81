/* test_viewer_compare.c: the compare page's diff table in the window under
 * a window manager (tests/integration/viewer_ui.sh): columns headed by the
 * files' names, a kernel only in the after run marked "new" (not "+0.0%"),
 * gtrace diff's verdicts and 95% intervals beside the changes, per kernel
 * too (from each step's samples, as `gtrace diff` computes them: the row's
 * text is that of the CLI's diff of the same files), the change columns sorted by
 * value through a real click on their header, and a row double-clicked
 * through the X server outlining its kernel in both runs and showing the
 * step whose time changed most. Screenshots go to $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gv-window.h"

/* Steps of step_ns[k], one train_kernel each, and (extra) an extra_kernel too. */
static int write_run(const char *path, const int64_t *step_ns, int n, gboolean extra)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    int64_t pid = gt_global_pid(FX_PID), tid = gt_global_tid(FX_PID, FX_PID);
    gt_string_id kern, more, launch;
    gt_writer_intern(w, "train_kernel", &kern);
    gt_writer_intern(w, "extra_kernel", &more);
    gt_writer_intern(w, "cudaLaunchKernel_v7000", &launch);
    gt_writer_add_process(w, FX_PID, "steps");
    gt_writer_add_thread_name(w, tid, "main", 0);
    gt_writer_begin(w);
    int64_t t = FX_MS;
    int corr = 1;
    for (int k = 0; k < n; k++) {
        char name[32];
        snprintf(name, sizeof name, "step %d", k);
        gt_string_id sn;
        gt_writer_intern(w, name, &sn);
        int64_t d = step_ns[k];
        gt_event e = {.kind = GT_EV_NVTX};
        e.u.nvtx = (gt_nvtx){.start_ns = t, .end_ns = t + d, .event_type = GT_NVTX_PUSHPOP, .text = sn,
                             .global_tid = tid};
        gt_writer_add(w, &e);
        for (int j = 0; j < (extra ? 2 : 1); j++) {
            gt_event a = {.kind = GT_EV_API};
            a.u.api = (gt_api_call){.start_ns = t + d / 10 + j * 60000, .end_ns = t + d / 10 + j * 60000 + 50000,
                                    .global_tid = tid, .correlation_id = corr, .name = launch,
                                    .event_class = GT_API_RUNTIME};
            gt_writer_add(w, &a);
            gt_event kn = {.kind = GT_EV_KERNEL};
            int64_t ks = j ? t + d / 2 + 1000 : t + d / 5;
            kn.u.kernel = (gt_kernel){.start_ns = ks, .end_ns = j ? ks + d / 4 : t + d / 2, .global_pid = pid,
                                      .device_id = 0, .context_id = 1, .stream_id = 7, .correlation_id = corr,
                                      .demangled_name = j ? more : kern, .short_name = j ? more : kern,
                                      .grid_x = 1, .grid_y = 1, .grid_z = 1, .block_x = 32, .block_y = 1,
                                      .block_z = 1, .launch_type = 1};
            gt_writer_add(w, &kn);
            corr++;
        }
        t += d;
    }
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

static gboolean is_label(GtkWidget *w, gconstpointer data) { return GTK_IS_LABEL(w); }

/* The row whose metric is `metric`; FALSE none. */
static gboolean find_row(GtkTreeModel *tm, const char *metric, GtkTreeIter *it)
{
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, it); ok; ok = gtk_tree_model_iter_next(tm, it)) {
        g_autofree char *m = NULL;
        gtk_tree_model_get(tm, it, 0, &m, -1);
        if (!strcmp(m, metric))
            return TRUE;
    }
    return FALSE;
}

/* What `gtrace diff BEFORE AFTER` computes (its run_of: top 50 names). */
static gt_diff *cli_diff(const char *before, const char *after)
{
    const char *paths[2] = {before, after};
    gt_diff_run *runs[2] = {NULL, NULL};
    gt_diff *d = NULL;
    for (int i = 0; i < 2; i++) {
        gt_report_options opt;
        gt_report_options_init(&opt);
        opt.top_n = 50;
        gt_trace *t = NULL;
        CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, paths[i], 0), 0);
        CU_ASSERT_EQUAL(gt_diff_run_load(&runs[i], t, &opt), 0);
        gt_trace_free(t);
    }
    if (runs[0] && runs[1])
        CU_ASSERT_EQUAL(gt_diff_compute_runs(&d, &runs[0], 1, &runs[1], 1, NULL), 0);
    gt_diff_run_free(runs[0]);
    gt_diff_run_free(runs[1]);
    return d;
}

static void test_viewer_compare__table(void)
{
    const int64_t da[6] = {10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS, 10 * FX_MS};
    const int64_t db[6] = {11 * FX_MS, 10 * FX_MS, 19 * FX_MS, 12 * FX_MS, 11 * FX_MS, 12 * FX_MS};
    char *a = gt_test_path("cmp_before.sqlite"), *b = gt_test_path("cmp_after.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_run(a, da, 6, FALSE), 0);
    CU_ASSERT_EQUAL_FATAL(write_run(b, db, 6, TRUE), 0);
    GvTraceModel *ma = gv_trace_model_new(), *mb = gv_trace_model_new();
    GvWindow *win = GV_WINDOW(gv_window_new(ma, mb));
    gtk_window_set_default_size(GTK_WINDOW(win), 1400, 900);
    gtk_widget_show(GTK_WIDGET(win));
    CU_ASSERT_TRUE(gv_trace_model_load(ma, a, NULL));
    CU_ASSERT_TRUE(gv_trace_model_load(mb, b, NULL));
    GvCompare *c = gv_window_get_compare(win);
    for (int k = 0; k < 3000 && gv_compare_n_diff_rows(c) == 0; k++)
        ti_settle();
    for (int k = 0; k < 20; k++)
        ti_settle();
    GtkTreeView *tv = gv_compare_get_table(c);
    GtkTreeModel *tm = gtk_tree_view_get_model(tv);
    /* the files' names head their columns */
    for (int i = 0; i < 2; i++) { /* as shown: the button's label, "_" not taken as a mnemonic */
        GtkWidget *btn = gtk_tree_view_column_get_button(gtk_tree_view_get_column(tv, 1 + i));
        GtkWidget *lab = ti_find_widget(btn, is_label, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(lab);
        CU_ASSERT_STRING_EQUAL(gtk_label_get_text(GTK_LABEL(lab)),
                               i ? "after (cmp_after.sqlite)" : "before (cmp_before.sqlite)");
    }
    /* the new kernel: "new", not a percentage */
    GtkTreeIter it;
    gboolean found = FALSE;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok && !found; ok = gtk_tree_model_iter_next(tm, &it)) {
        g_autofree char *m = NULL, *ch = NULL, *verdict = NULL;
        gtk_tree_model_get(tm, &it, 0, &m, 4, &ch, 5, &verdict, -1);
        fprintf(stderr, "row: %s | %s | %s\n", m, ch, verdict);
        if (strstr(m, "extra_kernel")) {
            found = TRUE;
            CU_ASSERT_STRING_EQUAL(ch, "new");
            CU_ASSERT_STRING_EQUAL(verdict, "new");
        }
    }
    CU_ASSERT_TRUE(found);
    CU_ASSERT_TRUE_FATAL(find_row(tm, "kernel time per step: train_kernel", &it));
    g_autofree char *verdict = NULL, *interval = NULL;
    gtk_tree_model_get(tm, &it, 5, &verdict, 6, &interval, -1);
    fprintf(stderr, "train_kernel: %s %s\n", verdict, interval);
    /* the kernel's verdict and interval are gtrace diff's, from its steps */
    gt_diff *d = cli_diff(a, b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const gt_diff_row *want = NULL;
    for (size_t i = 0; i < d->n_rows; i++)
        if (!strcmp(d->rows[i].metric, "kernel time per step: train_kernel"))
            want = &d->rows[i];
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    CU_ASSERT_FALSE(isnan(want->lo));
    char lo[40], hi[40], iv[96];
    snprintf(iv, sizeof iv, "[%s, %s]", gt_diff_change(lo, sizeof lo, want->lo), gt_diff_change(hi, sizeof hi, want->hi));
    fprintf(stderr, "gtrace diff: %s %s (n %lld, %lld)\n", want->verdict > 0 ? "better" : want->verdict < 0 ? "worse" : "same",
            iv, (long long)want->n_before, (long long)want->n_after);
    CU_ASSERT_STRING_EQUAL(interval, iv);
    CU_ASSERT_STRING_EQUAL(verdict, want->too_few ? "too few steps" : want->verdict > 0 ? "better"
                                    : want->verdict < 0                 ? "worse"
                                                                        : "same");
    CU_ASSERT_EQUAL(gv_compare_n_diff_rows(c), d->n_rows); /* every row of gtrace diff */
    gt_diff_free(d);

    /* the table has room: at least a third of the page */
    GtkAllocation pa, ta;
    gtk_widget_get_allocation(GTK_WIDGET(c), &pa);
    gtk_widget_get_allocation(gtk_widget_get_parent(GTK_WIDGET(tv)), &ta);
    fprintf(stderr, "page %d px high, table %d\n", pa.height, ta.height);
    CU_ASSERT(ta.height * 3 >= pa.height);

    /* a real click on the relative change's header sorts by value, new first when descending */
    GtkWidget *hb = gtk_tree_view_column_get_button(gtk_tree_view_get_column(tv, 4));
    int hx, hy, hw, hh;
    ti_screen_rect(hb, &hx, &hy, &hw, &hh);
    for (int n = 0; n < 2; n++) {
        CU_ASSERT_EQUAL(ti_xclick(hx + hw / 2, hy + hh / 2), 0);
        ti_settle();
        int sort_id;
        GtkSortType order;
        if (gtk_tree_sortable_get_sort_column_id(GTK_TREE_SORTABLE(tm), &sort_id, &order) && order == GTK_SORT_DESCENDING)
            break;
    }
    double prev = INFINITY;
    int n = 0;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it), n++) {
        double rel;
        g_autofree char *m = NULL;
        gtk_tree_model_get(tm, &it, 0, &m, 9, &rel, -1);
        CU_ASSERT(rel <= prev);
        if (n == 0)
            CU_ASSERT_PTR_NOT_NULL(strstr(m, "extra_kernel"));
        prev = rel;
    }

    /* double-click train_kernel's row through the X server */
    gboolean have = FALSE;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it)) {
        g_autofree char *m = NULL;
        gtk_tree_model_get(tm, &it, 0, &m, -1);
        if (strstr(m, "train_kernel")) {
            have = TRUE;
            break;
        }
    }
    CU_ASSERT_TRUE_FATAL(have);
    GtkTreePath *path = gtk_tree_model_get_path(tm, &it);
    gtk_tree_view_scroll_to_cell(tv, path, NULL, FALSE, 0, 0);
    ti_settle();
    GdkRectangle cell;
    gtk_tree_view_get_cell_area(tv, path, gtk_tree_view_get_column(tv, 0), &cell);
    int wx, wy;
    gtk_tree_view_convert_bin_window_to_widget_coords(tv, cell.x, cell.y, &wx, &wy);
    int tx, ty, tw, th;
    ti_screen_rect(GTK_WIDGET(tv), &tx, &ty, &tw, &th);
    g_autofree char *dbl = g_strdup_printf("mousemove %d %d click --repeat 2 --delay 80 1", tx + wx + 20,
                                           ty + wy + cell.height / 2);
    CU_ASSERT_EQUAL(ti_xdotool(dbl), 0);
    for (int k = 0; k < 30; k++)
        ti_settle();
    gtk_tree_path_free(path);
    CU_ASSERT_EQUAL(gv_compare_get_shown_step(c), 2); /* step 2: 10 ms -> 19 ms */
    const GvAlign *al = gv_compare_get_align(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(al);
    for (int i = 0; i < 2; i++) {
        GvTimeline *tl = gv_compare_get_timeline(c, i);
        const GvView *v = gv_timeline_get_view(tl);
        CU_ASSERT_PTR_NOT_NULL(v->match); /* the kernel outlined on both sides */
        /* step 2 fills each side's view (in that side's own time) */
        double x0 = gv_view_x(v, al->pairs[2].start_ns[i]), x1 = gv_view_x(v, al->pairs[2].end_ns[i]);
        fprintf(stderr, "side %d: step 2 at x %.0f..%.0f of %d\n", i, x0, x1, v->width);
        CU_ASSERT(x0 >= 0 && x1 <= v->width + 1 && x1 - x0 > v->width / 2);
    }
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-compare-table.png");
    g_object_unref(screen);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(ma);
    g_object_unref(mb);
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_compare: no display (run it through tests/integration/viewer_ui.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_compare__table", test_viewer_compare__table},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_compare", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
