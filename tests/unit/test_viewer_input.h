/* test_viewer_input.h: what the viewer's window tests share (the display
 * itself comes from tests/integration/viewer_display.sh): running the main
 * loop, GTK's synthetic events, real X input through xdotool, and grabs of
 * what the X server shows (the root window), so a test sees the window as
 * a person does, title bar and all, written where the screenshots go. */
#ifndef TEST_VIEWER_INPUT_H
#define TEST_VIEWER_INPUT_H

#include <gtk/gtk.h>
#include <stdio.h>
#include <stdlib.h>

#include "gt_test.h"

static inline void ti_settle(void)
{
    for (int k = 0; k < 20; k++) {
        while (gtk_events_pending())
            gtk_main_iteration();
        g_usleep(1000);
    }
}

static inline void ti_send(GtkWidget *w, GdkEvent *e)
{
    e->any.window = g_object_ref(gtk_widget_get_window(w));
    e->any.send_event = TRUE;
    gtk_widget_event(w, e);
    gdk_event_free(e);
}

static inline void ti_button(GtkWidget *w, GdkEventType type, double x, double y, GdkModifierType state)
{
    GdkEvent *e = gdk_event_new(type);
    e->button.x = x;
    e->button.y = y;
    e->button.button = 1;
    e->button.state = state;
    ti_send(w, e);
}

static inline void ti_motion(GtkWidget *w, double x, double y, GdkModifierType state)
{
    GdkEvent *e = gdk_event_new(GDK_MOTION_NOTIFY);
    e->motion.x = x;
    e->motion.y = y;
    e->motion.state = state;
    ti_send(w, e);
}

static inline void ti_drag(GtkWidget *w, double x0, double y0, double x1, double y1, GdkModifierType state)
{
    ti_button(w, GDK_BUTTON_PRESS, x0, y0, state);
    ti_motion(w, (x0 + x1) / 2, (y0 + y1) / 2, state);
    ti_motion(w, x1, y1, state);
    ti_button(w, GDK_BUTTON_RELEASE, x1, y1, state);
}

/* A widget's rectangle on the screen (root coordinates). */
static inline void ti_screen_rect(GtkWidget *w, int *x, int *y, int *width, int *height)
{
    int ox = 0, oy = 0;
    gdk_window_get_origin(gtk_widget_get_window(w), &ox, &oy);
    GtkAllocation a;
    gtk_widget_get_allocation(w, &a);
    if (!gtk_widget_get_has_window(w)) { /* allocations are relative to the parent's GdkWindow */
        ox += a.x;
        oy += a.y;
    }
    *x = ox;
    *y = oy;
    *width = a.width;
    *height = a.height;
}

/* Runs xdotool with these arguments; its exit status (-1: not run). The X
 * server has done what it asked when it returns (xdotool syncs as it
 * closes its display). Moves never take --sync: xdotool 3's wait for the
 * pointer to move spins about 18 s when it is already there. */
static inline int ti_xdotool(const char *args)
{
    g_autofree char *cmd = g_strdup_printf("xdotool %s", args);
    int status = -1;
    g_autoptr(GError) error = NULL;
    if (!g_spawn_command_line_sync(cmd, NULL, NULL, &status, &error)) {
        fprintf(stderr, "%s: %s\n", cmd, error->message);
        return -1;
    }
    return g_spawn_check_wait_status(status, NULL) ? 0 : 1;
}

/* A real click at a screen point, through the X server. */
static inline int ti_xclick(int x, int y)
{
    g_autofree char *args = g_strdup_printf("mousemove %d %d click 1", x, y);
    return ti_xdotool(args);
}

/* A real drag with button 1 from (x0, y0) through the middle to (x1, y1);
 * the short sleeps let the program see each motion. */
static inline int ti_xdrag(int x0, int y0, int x1, int y1)
{
    g_autofree char *args = g_strdup_printf("mousemove %d %d mousedown 1 sleep 0.05 mousemove %d %d "
                                            "sleep 0.05 mousemove %d %d sleep 0.05 mouseup 1",
                                            x0, y0, (x0 + x1) / 2, (y0 + y1) / 2, x1, y1);
    return ti_xdotool(args);
}

/* What the screen shows, as an RGB pixbuf (the caller unrefs). */
static inline GdkPixbuf *ti_grab_screen(void)
{
    GdkWindow *root = gdk_get_default_root_window();
    return gdk_pixbuf_get_from_window(root, 0, 0, gdk_window_get_width(root), gdk_window_get_height(root));
}

/* Writes a grab to $GV_SHOT_DIR/name (else the test's own directory). */
static inline void ti_save_grab(GdkPixbuf *p, const char *name)
{
    const char *dir = getenv("GV_SHOT_DIR");
    char *path = dir && *dir ? g_build_filename(dir, name, NULL) : gt_test_path(name);
    CU_ASSERT_TRUE(gdk_pixbuf_save(p, path, "png", NULL, NULL));
    g_free(path);
}

static inline void ti_pixel(const GdkPixbuf *p, int x, int y, int rgb[3])
{
    const guchar *d = gdk_pixbuf_read_pixels(p) + y * gdk_pixbuf_get_rowstride(p) + x * gdk_pixbuf_get_n_channels(p);
    for (int c = 0; c < 3; c++)
        rgb[c] = d[c];
}

/* Pixels in a rectangle whose every channel is below `dark` (text on a light bar). */
static inline int ti_count_dark(const GdkPixbuf *p, int x, int y, int w, int h, int dark)
{
    int n = 0;
    for (int j = MAX(y, 0); j < MIN(y + h, gdk_pixbuf_get_height(p)); j++)
        for (int i = MAX(x, 0); i < MIN(x + w, gdk_pixbuf_get_width(p)); i++) {
            int rgb[3];
            ti_pixel(p, i, j, rgb);
            n += rgb[0] < dark && rgb[1] < dark && rgb[2] < dark;
        }
    return n;
}

/* The first widget below `w` (internal children too) that `match` accepts. */
typedef gboolean (*ti_match_fn)(GtkWidget *w, gconstpointer data);
typedef struct ti_find { ti_match_fn match; gconstpointer data; GtkWidget *found; } ti_find;

static inline void ti_find_cb(GtkWidget *w, gpointer p)
{
    ti_find *f = p;
    if (f->found)
        return;
    if (f->match(w, f->data)) {
        f->found = w;
        return;
    }
    if (GTK_IS_CONTAINER(w))
        gtk_container_forall(GTK_CONTAINER(w), ti_find_cb, f);
}

static inline GtkWidget *ti_find_widget(GtkWidget *top, ti_match_fn match, gconstpointer data)
{
    ti_find f = {match, data, NULL};
    ti_find_cb(top, &f);
    return f.found;
}

#endif /* TEST_VIEWER_INPUT_H */
