/* test_viewer_window.c: the window as a window manager shows it
 * (tests/integration/viewer_ui.sh runs it under Xvfb with openbox): the
 * header bar with the trace's name, its close button clicked through the X
 * server, and the compare page's titles. Screenshots are grabs of the
 * screen, written to $GV_SHOT_DIR. */
#include "gt_test.h"
#include "test_viewer_fixture.h"
#include "test_viewer_input.h"

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

static void save_grab(GdkPixbuf *p, const char *name)
{
    const char *dir = getenv("GV_SHOT_DIR");
    char *path = dir && *dir ? g_build_filename(dir, name, NULL) : gt_test_path(name);
    CU_ASSERT_TRUE(gdk_pixbuf_save(p, path, "png", NULL, NULL));
    g_free(path);
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
    save_grab(screen, "viewer-window-header.png");
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
    save_grab(screen, "viewer-window-compare.png");
    int x, y, w, h;
    ti_screen_rect(label, &x, &y, &w, &h);
    CU_ASSERT(ti_count_dark(screen, x, y, w, h, 110) > 100);
    g_object_unref(screen);
    gtk_widget_destroy(GTK_WIDGET(win));
    free(a);
    free(b);
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
        {NULL, NULL},
    };
    static const gt_test_suite suites[] = {{"viewer_window", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
