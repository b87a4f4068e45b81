/* test_viewer_memsnap.c: the memory page on a PyTorch memory snapshot
 * (tests/fixtures/pytorch/snapshot_p4.pickle) in the window under a window
 * manager (tests/integration/viewer_ui.sh): the snapshot opens on the memory
 * page; the pointer, moved through the X server over a band, gets a tooltip
 * with the block's size, lifetime and full stack with file:line; a click on
 * a band and on a block of the snapshot under the chart shows that block
 * (the snapshot's drawn dark); the table under it says "no growth" when
 * nothing grows, and folds repeated spikes into one row. A snapshot of two
 * devices (snapshot_p2.pickle) shows one device at a time, chosen through
 * the X server in a chooser that lists each with its peak. Screenshots go to
 * $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gv-window.h"

enum { MiB = 1 << 20 };

static GvWindow *open_snapshot(const char *name, GvTraceModel **out)
{
    char *path = g_build_filename(getenv("GT_FIXTURES") ? getenv("GT_FIXTURES") : "tests/fixtures", "pytorch", name,
                                  NULL);
    GvTraceModel *m = gv_trace_model_new();
    GvWindow *w = GV_WINDOW(gv_window_new(m, NULL));
    gtk_window_set_default_size(GTK_WINDOW(w), 1300, 860);
    gtk_widget_show(GTK_WIDGET(w));
    GError *error = NULL;
    CU_ASSERT_TRUE(gv_trace_model_load(m, path, &error));
    for (int k = 0; k < 3000 && !(gtk_widget_get_mapped(GTK_WIDGET(w)) && gv_trace_model_is_analysed(m)); k++)
        ti_settle();
    for (int k = 0; k < 10; k++)
        ti_settle();
    g_free(path);
    *out = m;
    return w;
}

/* A point of the drawing over band `bi`, found through the view's own hit test. */
static gboolean band_point(GvTraceModel *m, const GvMemView *v, gssize bi, double *x, double *y)
{
    for (double py = 0; py < gv_memory_chart_bottom(v); py += 2)
        for (double px = GV_LABEL_W + 10; px < v->x.width - 10; px += 7)
            if (gv_memory_hit_block(m, v, px, py) == bi) {
                *x = px;
                *y = py;
                return TRUE;
            }
    return FALSE;
}

static gssize block_of(const GvMemory *mem, int64_t bytes)
{
    for (size_t i = 0; i < mem->n_blocks; i++)
        if (mem->blocks[i].bytes == bytes)
            return (gssize)i;
    return -1;
}

static void test_viewer_memsnap__hover_click(void)
{
    GvTraceModel *m = NULL;
    GvWindow *win = open_snapshot("snapshot_p4.pickle", &m);
    GvMemoryView *mv = gv_window_get_memory_view(win);
    /* a snapshot opens on the memory page */
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(GTK_WIDGET(mv)));
    const GvMemory *mem = gv_mem_view_memory(m, gv_memory_view_get_state(mv));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    GvMemView *v = gv_memory_view_get_state(mv);
    gssize bi = block_of(mem, 8 * MiB); /* forward > linear, train.py:10 and :11 */
    CU_ASSERT_FATAL(bi >= 0);
    double bx = 0, by = 0;
    CU_ASSERT_TRUE_FATAL(band_point(m, v, bi, &bx, &by));
    int ax, ay, aw, ah;
    GtkWidget *drawing = NULL;
    GList *kids = gtk_container_get_children(GTK_CONTAINER(mv));
    for (GList *k = kids; k; k = k->next)
        if (GTK_IS_PANED(k->data))
            drawing = gtk_paned_get_child1(GTK_PANED(k->data));
    g_list_free(kids);
    CU_ASSERT_TRUE_FATAL(GTK_IS_DRAWING_AREA(drawing));
    ti_screen_rect(drawing, &ax, &ay, &aw, &ah);

    /* hover: the tooltip names size, lifetime and the stack with file:line */
    g_autofree char *move = g_strdup_printf("mousemove %d %d", ax + (int)bx - 2, ay + (int)by);
    CU_ASSERT_EQUAL(ti_xdotool(move), 0);
    g_autofree char *move2 = g_strdup_printf("mousemove %d %d", ax + (int)bx, ay + (int)by);
    CU_ASSERT_EQUAL(ti_xdotool(move2), 0);
    char *hover = NULL;
    for (int k = 0; k < 100 && !(hover = gv_memory_view_dup_hover(mv)); k++)
        ti_settle();
    fprintf(stderr, "hover:\n%s\n", hover ? hover : "(none)");
    CU_ASSERT_PTR_NOT_NULL_FATAL(hover);
    CU_ASSERT_PTR_NOT_NULL(strstr(hover, "block 8.00 MiB"));
    CU_ASSERT_PTR_NOT_NULL(strstr(hover, "lifetime"));
    const char *a = strstr(hover, "linear  train.py:11"), *b = strstr(hover, "forward  train.py:10");
    CU_ASSERT_TRUE(a && b && a < b); /* innermost first */
    g_free(hover);
    for (int k = 0; k < 60; k++) /* the tooltip window shows after a delay */
        ti_settle();
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-memory-hover.png");
    g_object_unref(screen);

    /* click the band: the panel under the chart shows it, the cursor takes a snapshot */
    CU_ASSERT_EQUAL(ti_xclick(ax + (int)bx, ay + (int)by), 0);
    for (int k = 0; k < 20; k++)
        ti_settle();
    const char *about = gtk_label_get_text(gv_memory_view_get_about(mv));
    fprintf(stderr, "about:\n%s\n", about);
    CU_ASSERT_PTR_NOT_NULL(strstr(about, "linear  train.py:11"));
    CU_ASSERT_EQUAL(v->selected_block, bi);
    const gt_mem_state *st = gv_memory_view_get_snapshot(mv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);

    /* click a block of the snapshot: the largest with a stack that is not the band's (backward > mm) */
    gssize want = -1;
    for (size_t k = 0; k < st->n_blocks; k++)
        if (st->blocks[k].bytes != 8 * MiB && st->blocks[k].callchain_id != 0 &&
            (want < 0 || st->blocks[k].bytes > st->blocks[want].bytes))
            want = (gssize)k;
    CU_ASSERT_FATAL(want >= 0);
    double sx = -1, sy = -1, x0 = -1, x1 = -1; /* the middle of the block's first row */
    for (double py = gv_memory_chart_bottom(v) + 1; py < v->x.height && sx < 0; py += 1) {
        for (double px = 0; px < v->x.width; px += 1)
            if (gv_memory_hit_snapshot(v, st, px, py) == want) {
                x0 = x0 < 0 ? px : x0;
                x1 = px;
            }
        if (x0 >= 0) {
            sx = floor((x0 + x1) / 2);
            sy = py + 6;
        }
    }
    CU_ASSERT_FATAL(sx >= 0);
    CU_ASSERT_EQUAL(gv_memory_hit_snapshot(v, st, sx, sy), want);
    CU_ASSERT_EQUAL(ti_xclick(ax + (int)sx, ay + (int)sy), 0);
    for (int k = 0; k < 20; k++)
        ti_settle();
    about = gtk_label_get_text(gv_memory_view_get_about(mv));
    fprintf(stderr, "about:\n%s\n", about);
    CU_ASSERT_PTR_NOT_NULL(strstr(about, "(snapshot)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(about, "  train.py:11\n  "));
    CU_ASSERT_EQUAL(v->selected_snap, want);
    CU_ASSERT_PTR_NULL(strstr(about, "linear  train.py:11"));
    screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-memory-snapshot-click.png");
    int rgb[3];
    ti_pixel(screen, ax + (int)sx, ay + (int)sy, rgb);
    fprintf(stderr, "selected snapshot block pixel: %d %d %d\n", rgb[0], rgb[1], rgb[2]);
    CU_ASSERT(rgb[0] < 60 && rgb[1] < 60 && rgb[2] < 60); /* drawn dark: selected */
    /* the panel's text is on the screen, under the drawing */
    int lx, ly, lw, lh;
    ti_screen_rect(GTK_WIDGET(gv_memory_view_get_about(mv)), &lx, &ly, &lw, &lh);
    CU_ASSERT(ly >= ay + ah);
    CU_ASSERT(ti_count_dark(screen, lx, ly, lw, lh, 110) > 300);
    g_object_unref(screen);

    /* the table: no steps in a snapshot, and nothing that grows */
    GtkTreeModel *tm = gtk_tree_view_get_model(gv_mem_steps_get_tree(gv_memory_view_get_steps(mv)));
    GtkTreeIter it;
    gboolean peak = FALSE, no_growth = FALSE;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it)) {
        g_autofree char *kind = NULL, *steps = NULL;
        gtk_tree_model_get(tm, &it, GV_MEM_STEPS_KIND, &kind, GV_MEM_STEPS_STEPS, &steps, -1);
        peak |= !strcmp(kind, "peak");
        no_growth |= !strcmp(kind, "leak") && !strcmp(steps, "no growth");
    }
    CU_ASSERT_TRUE(peak);
    CU_ASSERT_TRUE(no_growth);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
}

/* Three spikes of one origin and size and one other: two rows; the steps
 * grow once, then not. */
static void test_viewer_memsnap__table(void)
{
    GvTraceModel *m = NULL;
    GvWindow *win = open_snapshot("snapshot_p4.pickle", &m);
    GvMemoryView *mv = gv_window_get_memory_view(win);
    GvMemSample samples[] = {{.t_ns = 0, .allocated_bytes = MiB}, {.t_ns = 50, .allocated_bytes = 5 * MiB},
                             {.t_ns = 90, .allocated_bytes = 2 * MiB}, {.t_ns = 150, .allocated_bytes = 6 * MiB},
                             {.t_ns = 190, .allocated_bytes = 2 * MiB}};
    GvMemory mem = {.pid = 1, .samples = samples, .n_samples = 5};
    gt_step steps[] = {{.number = 1, .start_ns = 0, .end_ns = 100}, {.number = 2, .start_ns = 100, .end_ns = 200}};
    gt_report r = {.steps = steps, .n_steps = 2};
    gt_spike sp[] = {{.origin = "fwd [attn]", .bytes = 4 * MiB, .start_ns = 40, .end_ns = 60, .step = 1},
                     {.origin = "fwd [attn]", .bytes = 4 * MiB, .start_ns = 140, .end_ns = 160, .step = 2},
                     {.origin = "fwd [mlp]", .bytes = 3 * MiB, .start_ns = 145, .end_ns = 150, .step = 2},
                     {.origin = "fwd [attn]", .bytes = 4 * MiB, .start_ns = 240, .end_ns = 260, .step = 3}};
    gt_memory pm = {.spikes = sp, .n_spikes = 4};
    GvMemSteps *t = gv_memory_view_get_steps(mv);
    gv_mem_steps_fill(t, &mem, &r, &pm);
    for (int k = 0; k < 20; k++)
        ti_settle();
    GtkTreeModel *tm = gtk_tree_view_get_model(gv_mem_steps_get_tree(t));
    const char *want[][4] = {{"peak", "step 1", "5.00 MiB", "first"},
                             {"peak", "step 2", "6.00 MiB", "no growth"},
                             {"leak", "no growth", "", "no growth"},
                             {"spike x 3", "step 1, 2, 3", "4.00 MiB", "repeated"},
                             {"spike", "step 2", "3.00 MiB", ""}};
    GtkTreeIter it;
    size_t n = 0;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok; ok = gtk_tree_model_iter_next(tm, &it), n++) {
        g_autofree char *c0 = NULL, *c1 = NULL, *c2 = NULL, *c3 = NULL;
        gtk_tree_model_get(tm, &it, GV_MEM_STEPS_KIND, &c0, GV_MEM_STEPS_STEPS, &c1, GV_MEM_STEPS_BYTES, &c2,
                           GV_MEM_STEPS_CHANGE, &c3, -1);
        fprintf(stderr, "row: %s | %s | %s | %s\n", c0, c1, c2, c3);
        if (n < 5) {
            CU_ASSERT_STRING_EQUAL(c0, want[n][0]);
            CU_ASSERT_STRING_EQUAL(c1, want[n][1]);
            CU_ASSERT_STRING_EQUAL(c2, want[n][2]);
            CU_ASSERT_STRING_EQUAL(c3, want[n][3]);
        }
    }
    CU_ASSERT_EQUAL(n, 5);
    CU_ASSERT_TRUE(gtk_widget_get_mapped(GTK_WIDGET(gv_mem_steps_get_tree(t))));
    GdkPixbuf *screen = ti_grab_screen();
    ti_save_grab(screen, "viewer-memory-table.png");
    g_object_unref(screen);
    gv_mem_steps_fill(t, NULL, NULL, NULL); /* before the widget lets go of the stack data */
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
}

/* The drawing's pixels that differ between two grabs of its rectangle. */
static int n_changed(GdkPixbuf *a, GdkPixbuf *b, int x, int y, int w, int h)
{
    int n = 0;
    for (int j = y; j < y + h; j += 2)
        for (int i = x; i < x + w; i += 2) {
            int p[3], q[3];
            ti_pixel(a, i, j, p);
            ti_pixel(b, i, j, q);
            n += p[0] != q[0] || p[1] != q[1] || p[2] != q[2];
        }
    return n;
}

/* snapshot_p2.pickle: cuda:0 holds 3 MiB of an expandable 4 MiB segment at
 * its end, cuda:1 4 KiB of 2 MiB (tests/fixtures/pytorch/expected.txt). */
static void test_viewer_memsnap__devices(void)
{
    GvTraceModel *m = NULL;
    GvWindow *win = open_snapshot("snapshot_p2.pickle", &m);
    GvMemoryView *mv = gv_window_get_memory_view(win);
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(GTK_WIDGET(mv)));
    GtkComboBox *c = GTK_COMBO_BOX(gv_memory_view_get_chooser(mv));
    CU_ASSERT_TRUE_FATAL(gtk_widget_get_mapped(GTK_WIDGET(c)));
    GtkTreeModel *tm = gtk_combo_box_get_model(c);
    CU_ASSERT_EQUAL_FATAL(gtk_tree_model_iter_n_children(tm, NULL), 2);
    /* each device once, with its peak */
    GtkTreeIter it;
    char *labels[2] = {NULL, NULL};
    int k = 0;
    for (gboolean ok = gtk_tree_model_get_iter_first(tm, &it); ok && k < 2; ok = gtk_tree_model_iter_next(tm, &it))
        gtk_tree_model_get(tm, &it, gtk_combo_box_get_entry_text_column(c), &labels[k++], -1);
    fprintf(stderr, "chooser: [%s] [%s]\n", labels[0], labels[1]);
    CU_ASSERT_TRUE(labels[0] && strstr(labels[0], "cuda:0") && strstr(labels[0], "peak"));
    CU_ASSERT_TRUE(labels[1] && strstr(labels[1], "cuda:1, peak 4.00 KiB"));
    g_free(labels[0]);
    g_free(labels[1]);
    /* the chart shows the first device */
    CU_ASSERT_EQUAL(gv_memory_view_get_device(mv), 0);
    const GvMemory *mem = gv_mem_view_memory(m, gv_memory_view_get_state(mv));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mem);
    CU_ASSERT_EQUAL(mem->device_id, 0);
    CU_ASSERT(mem->max_reserved_bytes >= 4 * MiB); /* it grew past its end state (expandable) */
    int64_t start = 0, end = 0;
    gv_trace_model_span(m, &start, &end);
    gv_memory_view_set_cursor(mv, end);
    const gt_mem_state *st = gv_memory_view_get_snapshot(mv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(st->device_id, 0);
    CU_ASSERT_EQUAL(st->allocated_bytes, 3 * MiB);
    CU_ASSERT_EQUAL(st->reserved_bytes, 4 * MiB);
    for (int i = 0; i < 20; i++)
        ti_settle();
    GtkWidget *area = NULL;
    GList *kids = gtk_container_get_children(GTK_CONTAINER(mv));
    for (GList *l = kids; l; l = l->next)
        if (GTK_IS_PANED(l->data))
            area = gtk_paned_get_child1(GTK_PANED(l->data));
    g_list_free(kids);
    CU_ASSERT_TRUE_FATAL(GTK_IS_DRAWING_AREA(area));
    int ax, ay, aw, ah, cx, cy, cw, ch;
    ti_screen_rect(area, &ax, &ay, &aw, &ah);
    GdkPixbuf *before = ti_grab_screen();

    /* the user opens the chooser and picks the second device, through the X server */
    ti_screen_rect(GTK_WIDGET(c), &cx, &cy, &cw, &ch);
    CU_ASSERT_EQUAL(ti_xclick(cx + cw / 2, cy + ch / 2), 0);
    for (int i = 0; i < 40; i++)
        ti_settle();
    CU_ASSERT_EQUAL(ti_xdotool("key --delay 50 Down Return"), 0);
    for (int i = 0; i < 200 && gv_memory_view_get_device(mv) != 1; i++)
        ti_settle();
    CU_ASSERT_EQUAL_FATAL(gv_memory_view_get_device(mv), 1);
    CU_ASSERT_EQUAL(gtk_combo_box_get_active(c), 1);
    mem = gv_mem_view_memory(m, gv_memory_view_get_state(mv));
    CU_ASSERT_EQUAL(mem->device_id, 1);
    CU_ASSERT_EQUAL(mem->max_reserved_bytes, 2 * MiB);
    CU_ASSERT_EQUAL(mem->peak_allocated_bytes, 4096);
    /* the snapshot under the cursor is the chosen device's */
    st = gv_memory_view_get_snapshot(mv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(st);
    CU_ASSERT_EQUAL(st->device_id, 1);
    CU_ASSERT_EQUAL(st->allocated_bytes, 4096);
    CU_ASSERT_EQUAL(st->reserved_bytes, 2 * MiB);
    for (int i = 0; i < 20; i++)
        ti_settle();
    GdkPixbuf *after = ti_grab_screen();
    ti_save_grab(after, "viewer-memory-devices.png");
    int changed = n_changed(before, after, ax, ay, aw, ah);
    fprintf(stderr, "pixels of the drawing that changed with the device: %d of %d\n", changed, aw * ah / 4);
    CU_ASSERT(changed > 200); /* another chart, another snapshot */
    /* the chooser on the screen shows the chosen entry's text */
    CU_ASSERT(ti_count_dark(after, cx, cy, cw, ch, 110) > 40);
    g_object_unref(before);
    g_object_unref(after);
    gtk_widget_destroy(GTK_WIDGET(win));
    g_object_unref(m);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_memsnap: no display (run it through tests/integration/viewer_ui.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_memsnap__hover_click", test_viewer_memsnap__hover_click},
        {"test_viewer_memsnap__table", test_viewer_memsnap__table},
        {"test_viewer_memsnap__devices", test_viewer_memsnap__devices},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_memsnap", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
