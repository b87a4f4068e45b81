/* test_viewer_memory.c: the memory page under a display
 * (tests/integration/viewer_memory.sh runs it under Xvfb): with two
 * processes whose allocators share heap handles and addresses, the page has
 * a process chooser, shows one process at a time, and its snapshot is the
 * chosen process's; with one process the chooser stays hidden. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

#include <stdlib.h>
#include <string.h>

#include "gv-memory-view.h"

/* Ranks 7001 and 7002, heap 1 at 0x1000 each: 7001 holds 768 KiB of 1 MiB,
 * 7002 512 KiB of 2 MiB at 2 ms. */
static int write_two_ranks(const char *path)
{
    gt_writer *w = NULL;
    int rc = gt_writer_open(&w, path, GT_WRITE_OVERWRITE);
    if (rc < 0)
        return rc;
    gt_writer_add_process(w, 7001, "rank a");
    gt_writer_add_process(w, 7002, "rank b");
    gt_writer_begin(w);
    const struct { int64_t pid, t; int op; uint64_t addr; int64_t bytes; } mem[] = {
        {7001, FX_MS / 10, GT_HEAP_REGISTER, 0x1000, 1 << 20},
        {7002, FX_MS / 10 + 1, GT_HEAP_REGISTER, 0x1000, 2 << 20},
        {7001, 1 * FX_MS, GT_REGION_REGISTER, 0x1000, 512 << 10},
        {7002, 1 * FX_MS + 1, GT_REGION_REGISTER, 0x1000, 512 << 10},
        {7001, 1 * FX_MS + 2, GT_REGION_REGISTER, 0x81000, 256 << 10},
        {7002, 3 * FX_MS, GT_REGION_UNREGISTER, 0x1000, 0},
    };
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++) {
        gt_event h = {.kind = GT_EV_HEAP};
        h.u.heap = (gt_heap_event){.start_ns = mem[i].t, .global_tid = gt_global_tid(mem[i].pid, mem[i].pid),
                                   .operation = mem[i].op, .heap_id = 1, .address = mem[i].addr,
                                   .bytes = mem[i].bytes, .heap_usage = 1, .memory_type = 1};
        gt_writer_add(w, &h);
    }
    if ((rc = gt_writer_commit(w)) < 0) {
        gt_writer_free(w);
        return rc;
    }
    return gt_writer_close(w);
}

/* The page for `path` in a window: returns the view; *out_win and *out_m to free. */
static GvMemoryView *open_page(const char *path, GtkWidget **out_win, GvTraceModel **out_m)
{
    GvTraceModel *m = gv_trace_model_new();
    GtkWidget *win = gtk_window_new(GTK_WINDOW_TOPLEVEL);
    GtkWidget *mv = gv_memory_view_new();
    gtk_container_add(GTK_CONTAINER(win), mv);
    gtk_window_set_default_size(GTK_WINDOW(win), 900, 600);
    gv_memory_view_set_model(GV_MEMORY_VIEW(mv), m);
    gtk_widget_show_all(win);
    GError *error = NULL;
    CU_ASSERT_TRUE_FATAL(gv_trace_model_load(m, path, &error));
    ti_settle();
    *out_win = win;
    *out_m = m;
    return GV_MEMORY_VIEW(mv);
}

static void test_viewer_memory__chooser(void)
{
    char *path = gt_test_path("two_ranks_ui.sqlite");
    CU_ASSERT_EQUAL_FATAL(write_two_ranks(path), 0);
    GtkWidget *win;
    GvTraceModel *m;
    GvMemoryView *mv = open_page(path, &win, &m);
    GtkComboBoxText *c = gv_memory_view_get_chooser(mv);
    CU_ASSERT_TRUE(gtk_widget_get_visible(GTK_WIDGET(c)));
    CU_ASSERT_EQUAL(gtk_tree_model_iter_n_children(gtk_combo_box_get_model(GTK_COMBO_BOX(c)), NULL), 2);
    CU_ASSERT_STRING_EQUAL(gtk_combo_box_get_active_id(GTK_COMBO_BOX(c)), "7001");
    CU_ASSERT_EQUAL(gv_memory_view_get_pid(mv), 7001);
    gv_memory_view_set_cursor(mv, 2 * FX_MS);
    const gt_mem_state *s = gv_memory_view_get_snapshot(mv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->pid, 7001);
    CU_ASSERT_EQUAL(s->allocated_bytes, 768 << 10);
    CU_ASSERT_EQUAL(s->reserved_bytes, 1 << 20);
    /* the user picks the second process: the chart and the snapshot follow */
    gtk_combo_box_set_active(GTK_COMBO_BOX(c), 1);
    ti_settle();
    CU_ASSERT_EQUAL(gv_memory_view_get_pid(mv), 7002);
    CU_ASSERT_EQUAL(gv_mem_view_memory(m, gv_memory_view_get_state(mv))->pid, 7002);
    s = gv_memory_view_get_snapshot(mv);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(s->pid, 7002);
    CU_ASSERT_EQUAL(s->allocated_bytes, 512 << 10);
    CU_ASSERT_EQUAL(s->reserved_bytes, 2 << 20);
    CU_ASSERT_EQUAL(s->n_unplaced, 0);
    /* and choosing in code moves the chooser */
    gv_memory_view_set_pid(mv, 7001);
    CU_ASSERT_STRING_EQUAL(gtk_combo_box_get_active_id(GTK_COMBO_BOX(c)), "7001");
    gtk_widget_destroy(win);
    g_object_unref(m);
    free(path);
}

static void test_viewer_memory__one_process(void)
{
    char *path = gt_test_path("one_process_ui.sqlite");
    CU_ASSERT_EQUAL_FATAL(fx_write(path), 0);
    GtkWidget *win;
    GvTraceModel *m;
    GvMemoryView *mv = open_page(path, &win, &m);
    CU_ASSERT_FALSE(gtk_widget_get_visible(GTK_WIDGET(gv_memory_view_get_chooser(mv))));
    CU_ASSERT_EQUAL(gv_memory_view_get_pid(mv), FX_PID);
    gtk_widget_destroy(win);
    g_object_unref(m);
    free(path);
}

int main(int argc, char **argv)
{
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "test_viewer_memory: no display (run it through tests/integration/viewer_memory.sh)\n");
        return 77;
    }
    static const gt_test_case cases[] = {
        {"test_viewer_memory__chooser", test_viewer_memory__chooser},
        {"test_viewer_memory__one_process", test_viewer_memory__one_process},
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_memory", cases}};
    (void)fx_write_steps; /* the fixture header's other trace */
    return gt_test_main(argc, argv, suites, 1);
}
