/* main.c: gtrace-view's entry point: options, then either the window, or a
 * screenshot: --view timeline|memory draws headless (no display needed);
 * --view window (the default) draws the whole window and needs a display. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_outpath.h"
#include "gv-window.h"

typedef struct opts {
    const char *screenshot, *view;
    int width, height;
    const char *paths[2];
    int n_paths;
} opts;

static void usage(FILE *f)
{
    fprintf(f, "Usage: gtrace-view [--screenshot FILE [--view window|timeline|memory] [--size WxH]] TRACE [TRACE2]\n"
               "\n"
               "Opens a gtrace trace or an Nsight Systems SQLite export (read-only), or a PyTorch\n"
               "file (a torch.profiler JSON trace, plain or gzipped, or a CUDA memory snapshot\n"
               "pickle) imported on the fly into a temporary trace removed at exit: the timeline\n"
               "(GPU streams, threads with NVTX ranges and CUDA calls, idle gaps, steps), memory\n"
               "over time with the allocator's state at a moment, and the analysis's summary and\n"
               "advice. With TRACE2 it compares the two, aligned on steps, with the diff table.\n"
               "\n"
               "  --screenshot FILE   load, draw one view to FILE (PNG) and exit\n"
               "  --view VIEW         window (default; needs a display), timeline or memory (headless)\n"
               "  --size WxH          size of the screenshot (default 1400x860)\n"
               "  -h, --help          this help;  -V, --version  the version\n"
               "\n"
               "In the window: wheel zooms, shift+wheel scrolls rows, drag pans, a drag on the time axis (or\n"
               "shift+drag) selects a range and shows its statistics (by lane and name, busy and idle), z zooms\n"
               "to it, f fits, + - zoom, arrows pan and scroll, n p next/previous item, r related,\n"
               "Ctrl+F search, Ctrl+S export PNG.\n");
}

static int parse(opts *o, int argc, char **argv)
{
    *o = (opts){.view = "window", .width = 1400, .height = 860};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
            printf("gtrace-view %s\n", PACKAGE_VERSION);
            exit(0);
        } else if (!strcmp(a, "--screenshot") && i + 1 < argc) {
            o->screenshot = argv[++i];
        } else if (!strcmp(a, "--view") && i + 1 < argc) {
            o->view = argv[++i];
            if (strcmp(o->view, "window") && strcmp(o->view, "timeline") && strcmp(o->view, "memory")) {
                fprintf(stderr, "gtrace-view: --view takes window, timeline or memory, not '%s'\n", o->view);
                return 2;
            }
        } else if (!strcmp(a, "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%dx%d", &o->width, &o->height) != 2 || o->width < 200 || o->height < 150 ||
                o->width > 16384 || o->height > 16384) {
                fprintf(stderr, "gtrace-view: --size takes WxH between 200x150 and 16384x16384, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "gtrace-view: unknown or incomplete option '%s' (try --help)\n", a);
            return 2;
        } else if (o->n_paths < 2) {
            o->paths[o->n_paths++] = a;
        } else {
            fprintf(stderr, "gtrace-view: at most two traces, not '%s'\n", a);
            return 2;
        }
    }
    if (o->n_paths == 0) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* Headless: load, draw one view, write the PNG. */
static int headless(const opts *o)
{
    g_autoptr(GvTraceModel) m = gv_trace_model_new();
    g_autoptr(GError) error = NULL;
    if (!gv_trace_model_load(m, o->paths[0], &error)) {
        fprintf(stderr, "gtrace-view: %s\n", error->message);
        return 1;
    }
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, o->width, o->height);
    cairo_t *cr = cairo_create(s);
    if (!strcmp(o->view, "timeline")) {
        GvView v;
        gv_view_init(&v, o->width, o->height);
        gv_view_fit_steps(&v, m);
        gv_render_timeline(cr, m, &v);
    } else {
        GvMemView v;
        gv_mem_view_init(&v, o->width, o->height);
        gv_view_fit(&v.x, m);
        const gt_report *r = gv_trace_model_report(m);
        gt_mem_state *st = NULL;
        if (r && (r->memory.has_blocks || r->memory.has_device)) { /* the snapshot at the peak */
            v.has_cursor = TRUE;
            v.cursor_ns = r->memory.peak_allocated_ns;
            st = gv_trace_model_memory_state_at(m, v.cursor_ns, NULL);
        }
        gv_render_memory(cr, m, &v, st);
        gt_mem_state_free(st);
    }
    cairo_destroy(cr);
    gboolean ok = gv_write_png(s, o->screenshot, &error);
    cairo_surface_destroy(s);
    if (!ok) {
        fprintf(stderr, "gtrace-view: %s\n", error->message);
        return 1;
    }
    return 0;
}

typedef struct run { GvWindow *win; int pending, failed; gboolean screenshot; } run;

static void loaded(GObject *src, GAsyncResult *res, gpointer p)
{
    run *r = p;
    g_autoptr(GError) error = NULL;
    if (!gv_trace_model_load_finish(GV_TRACE_MODEL(src), res, &error)) {
        fprintf(stderr, "gtrace-view: %s\n", error->message);
        gv_window_set_error(r->win, error->message);
        r->failed++;
    }
    r->pending--;
}

/* The window's screenshot, once every trace has loaded: 0, or 1 with the
 * reason on stderr (a trace that failed to load already said why). */
static int window_screenshot(run *r, const opts *o)
{
    gtk_window_set_default_size(GTK_WINDOW(r->win), o->width, o->height);
    gtk_widget_show(GTK_WIDGET(r->win));
    while (r->pending > 0)
        g_main_context_iteration(NULL, TRUE);
    if (r->failed)
        return 1;
    /* The compare's diff (a thread of its own), then the last "analysed"
     * signals, sizes and redraws settle. */
    GvCompare *c = gv_window_get_compare(r->win);
    while (c && gv_compare_is_diffing(c))
        g_main_context_iteration(NULL, TRUE);
    for (int k = 0; k < 50; k++) {
        while (gtk_events_pending())
            gtk_main_iteration();
        g_usleep(2000);
    }
    int w = gtk_widget_get_allocated_width(GTK_WIDGET(r->win)), h = gtk_widget_get_allocated_height(GTK_WIDGET(r->win));
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, MAX(w, 1), MAX(h, 1));
    cairo_t *cr = cairo_create(s);
    gtk_widget_draw(GTK_WIDGET(r->win), cr);
    cairo_destroy(cr);
    g_autoptr(GError) error = NULL;
    int rc = gv_write_png(s, o->screenshot, &error) ? 0 : 1;
    if (rc)
        fprintf(stderr, "gtrace-view: %s\n", error->message);
    cairo_surface_destroy(s);
    return rc;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse(&o, argc, argv);
    if (rc)
        return rc;
    gt_outpath out; /* before any loading: never over a trace it reads, a device, a FIFO */
    if (o.screenshot && gt_outpath_check(&out, o.screenshot, GT_OUTPATH_FORCE, o.paths, (size_t)o.n_paths) != 0) {
        fprintf(stderr, "gtrace-view: %s\n", out.why);
        return 1;
    }
    if (o.screenshot && strcmp(o.view, "window") != 0)
        return headless(&o);
    if (!gtk_init_check(&argc, &argv)) {
        fprintf(stderr, "gtrace-view: cannot open a display (is DISPLAY set?); "
                        "--screenshot FILE --view timeline|memory works without one\n");
        return 1;
    }
    GvTraceModel *models[2] = {gv_trace_model_new(), o.n_paths > 1 ? gv_trace_model_new() : NULL};
    run r = {.pending = o.n_paths, .screenshot = o.screenshot != NULL};
    r.win = GV_WINDOW(gv_window_new(models[0], models[1]));
    for (int i = 0; i < o.n_paths; i++)
        gv_trace_model_load_async(models[i], o.paths[i], NULL, loaded, &r);
    if (o.screenshot) {
        rc = window_screenshot(&r, &o);
        gtk_widget_destroy(GTK_WIDGET(r.win));
    } else { /* closing the window destroys it, which ends the main loop */
        g_signal_connect(r.win, "destroy", G_CALLBACK(gtk_main_quit), NULL);
        gtk_widget_show(GTK_WIDGET(r.win));
        gtk_main();
        rc = 0;
    }
    for (int i = 0; i < 2; i++)
        if (models[i])
            g_object_unref(models[i]);
    return rc;
}
