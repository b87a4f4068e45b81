/* gv-window.c: wiring between the views (see gv-window.h). Keys: Ctrl+F
 * search (Enter next, Shift+Enter previous), Ctrl+S export the current page
 * to PNG, Ctrl+1/2/3 pages; the timeline's own keys work when it has focus. */
#include "gv-window.h"

#include <string.h>

struct _GvWindow {
    GtkWindow parent_instance;
    GvTraceModel *model, *after;
    GtkWidget *header, *notebook, *search, *matches, *status;
    GtkWidget *progress; /* beside the status line while the traces load and are analysed */
    guint pulse_id;      /* the bar's pulse while the analysis runs */
    gboolean failed;     /* a trace failed to load: no more progress */
    GtkWidget *bottom, *details; /* under the timeline: details, top kernels and ops, the range's table */
    GvTimeline *timeline;
    GvRangeView *range;
    GvTopView *top;
    GvMemoryView *memory;
    GvSummary *summary;
    GvCompare *compare;
    gboolean opened; /* the first page was chosen by the trace's kind */
};

G_DEFINE_TYPE(GvWindow, gv_window, GTK_TYPE_WINDOW)

GvTimeline *gv_window_get_timeline(GvWindow *self) { return self->timeline; }
GvMemoryView *gv_window_get_memory_view(GvWindow *self) { return self->memory; }
GvRangeView *gv_window_get_range_view(GvWindow *self) { return self->range; }
GvTopView *gv_window_get_top_view(GvWindow *self) { return self->top; }
const char *gv_window_get_details(GvWindow *self) { return gtk_label_get_text(GTK_LABEL(self->details)); }
GtkWidget *gv_window_get_details_label(GvWindow *self) { return self->details; }
GvSummary *gv_window_get_summary(GvWindow *self) { return self->summary; }
GvCompare *gv_window_get_compare(GvWindow *self) { return self->compare; }
const char *gv_window_get_status(GvWindow *self) { return gtk_label_get_text(GTK_LABEL(self->status)); }
const char *gv_window_get_matches(GvWindow *self) { return gtk_label_get_text(GTK_LABEL(self->matches)); }
GtkWidget *gv_window_get_search_entry(GvWindow *self) { return self->search; }
GtkProgressBar *gv_window_get_progress(GvWindow *self) { return GTK_PROGRESS_BAR(self->progress); }

void gv_window_show_page(GvWindow *self, int page)
{
    if (page >= 0 && page < gtk_notebook_get_n_pages(GTK_NOTEBOOK(self->notebook)))
        gtk_notebook_set_current_page(GTK_NOTEBOOK(self->notebook), page);
}

#define NO_DETAILS "click an item on the timeline to see its details"

static void set_status(GvWindow *self, const char *text, gboolean error)
{
    if (error) {
        g_autofree char *m = g_markup_printf_escaped("<span foreground='#b02020'><b>%s</b></span>", text);
        gtk_label_set_markup(GTK_LABEL(self->status), m);
    } else {
        gtk_label_set_text(GTK_LABEL(self->status), text);
    }
}

static gboolean pulse(gpointer p)
{
    gtk_progress_bar_pulse(GTK_PROGRESS_BAR(GV_WINDOW(p)->progress));
    return G_SOURCE_CONTINUE;
}

static void stop_pulse(GvWindow *self)
{
    if (self->pulse_id)
        g_source_remove(self->pulse_id);
    self->pulse_id = 0;
}

/* The load's progress: the events' share while rows come in (the timeline
 * draws them as they come), then a pulse while the analysis runs (summary,
 * memory, top tables wait for it); hidden once every trace is analysed. */
static void update_progress(GvWindow *self)
{
    GvTraceModel *ms[2] = {self->model, self->after};
    gboolean loaded = TRUE, analysed = TRUE, started = FALSE;
    double sum = 0;
    int n = 0;
    for (int i = 0; i < 2; i++)
        if (ms[i]) {
            n++;
            sum += gv_trace_model_progress(ms[i]);
            loaded &= gv_trace_model_is_loaded(ms[i]);
            analysed &= gv_trace_model_is_analysed(ms[i]);
            started |= *gv_trace_model_path(ms[i]) != 0;
        }
    if (analysed || self->failed || !started) {
        stop_pulse(self);
        gtk_widget_hide(self->progress);
        return;
    }
    gtk_widget_show(self->progress);
    if (!loaded) {
        stop_pulse(self);
        g_autofree char *t = g_strdup_printf("loading: %.0f%% of the events", 100 * sum / n);
        gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(self->progress), sum / n);
        gtk_progress_bar_set_text(GTK_PROGRESS_BAR(self->progress), t);
    } else if (!self->pulse_id) {
        gtk_progress_bar_set_text(GTK_PROGRESS_BAR(self->progress), "analysing: summary, memory, top tables");
        gtk_progress_bar_pulse(GTK_PROGRESS_BAR(self->progress));
        self->pulse_id = g_timeout_add(120, pulse, self);
    }
}

void gv_window_set_error(GvWindow *self, const char *message)
{
    g_return_if_fail(GV_IS_WINDOW(self));
    set_status(self, message, TRUE);
    self->failed = TRUE;
    update_progress(self);
}

static void on_selection(GvTimeline *tl, gpointer p)
{
    GvWindow *self = p;
    GvItemRef r;
    if (gv_timeline_get_selection(tl, &r)) {
        g_autofree char *d = gv_trace_model_describe(gv_timeline_get_model(tl), &r);
        char *nl = strchr(d, '\n'); /* the status line: the first two lines */
        if (nl && (nl = strchr(nl + 1, '\n')))
            *nl = 0;
        set_status(self, d, FALSE);
        g_autofree char *all = gv_trace_model_details(gv_timeline_get_model(tl), &r);
        gtk_label_set_text(GTK_LABEL(self->details), all);
    } else {
        set_status(self, "", FALSE);
        gtk_label_set_text(GTK_LABEL(self->details), NO_DETAILS);
    }
}

/* A row of the top table: its longest instance selected and zoomed to, and
 * n/p over that name's instances. */
static void on_top_item(GvTopView *top, gpointer ref, guint name, gpointer p)
{
    GvWindow *self = p;
    gv_window_show_page(self, 0);
    gv_timeline_select(self->timeline, ref);
    gv_timeline_zoom_to_selection(self->timeline);
    gv_timeline_walk_name(self->timeline, name);
    gtk_widget_grab_focus(GTK_WIDGET(self->timeline));
}

/* The range's statistics under the timeline while a range is selected. */
static void on_range(GvTimeline *tl, gpointer p)
{
    GvWindow *self = p;
    int64_t from, to;
    if (gv_timeline_get_range(tl, &from, &to)) {
        gv_range_view_show(self->range, self->model, from, to);
        gtk_widget_show(GTK_WIDGET(self->range));
        gtk_notebook_set_current_page(GTK_NOTEBOOK(self->bottom),
                                      gtk_notebook_page_num(GTK_NOTEBOOK(self->bottom), GTK_WIDGET(self->range)));
    } else {
        gv_range_view_clear(self->range);
        gtk_widget_hide(GTK_WIDGET(self->range));
    }
}

static void on_block(GvMemoryView *mv, gpointer p)
{
    const char *d = gv_memory_view_get_details(mv); /* its first line: the rest is under the chart */
    g_autofree char *first = g_strndup(d, strcspn(d, "\n"));
    set_status(p, first, FALSE);
}

/* The first page, once the path is known: two runs open on their compare
 * (what they were opened for); a memory snapshot (.pickle), which has no
 * timeline worth a first look, on the memory page. */
static void on_path(GvWindow *self)
{
    const char *path = gv_trace_model_path(self->model);
    if (self->opened || !*path)
        return;
    self->opened = TRUE;
    if (self->after)
        gv_window_show_page(self, 2);
    else if (g_str_has_suffix(path, ".pickle") || g_str_has_suffix(path, ".pkl"))
        gv_window_show_page(self, 1);
}

static void on_navigate(GvSummary *s, gint64 from, gint64 to, gpointer p)
{
    GvWindow *self = p;
    gv_timeline_show_range(self->timeline, from, to);
    GvMemView *mv = gv_memory_view_get_state(self->memory);
    gv_view_show_range(&mv->x, from, to);
    gtk_widget_queue_draw(GTK_WIDGET(self->memory));
    if (gtk_notebook_get_current_page(GTK_NOTEBOOK(self->notebook)) == 2)
        gv_window_show_page(self, 0);
}

/* Every match outlined as the text changes; "k of N" beside the entry. */
static void on_search_changed(GtkSearchEntry *e, gpointer p)
{
    GvWindow *self = p;
    const char *text = gtk_entry_get_text(GTK_ENTRY(e));
    size_t rank = 0, n = gv_timeline_set_search(self->timeline, text, &rank);
    g_autofree char *m = !*text ? g_strdup("") : rank ? g_strdup_printf("%zu of %zu", rank, n)
                                                       : g_strdup_printf("%zu matches", n);
    gtk_label_set_text(GTK_LABEL(self->matches), m);
}

static void on_search(GtkEntry *e, gpointer p)
{
    GvWindow *self = p;
    GdkModifierType mods = 0;
    gtk_get_current_event_state(&mods);
    const char *text = gtk_entry_get_text(e);
    gv_window_show_page(self, 0);
    gboolean found = gv_timeline_search(self->timeline, text, (mods & GDK_SHIFT_MASK) != 0);
    if (found) /* Enter zooms to the next match */
        gv_timeline_zoom_to_selection(self->timeline);
    on_search_changed(GTK_SEARCH_ENTRY(e), self);
    if (!found) {
        g_autofree char *m = g_strdup_printf("no more items named like \"%s\"", text);
        set_status(self, m, FALSE);
    }
}

gboolean gv_window_export_png(GvWindow *self, const char *path, GError **error)
{
    g_return_val_if_fail(GV_IS_WINDOW(self), FALSE);
    int page = gtk_notebook_get_current_page(GTK_NOTEBOOK(self->notebook));
    if (page == 0)
        return gv_timeline_export_png(self->timeline, path, error);
    GtkWidget *w = gtk_notebook_get_nth_page(GTK_NOTEBOOK(self->notebook), page);
    int width = gtk_widget_get_allocated_width(w), height = gtk_widget_get_allocated_height(w);
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, MAX(width, 1), MAX(height, 1));
    cairo_t *cr = cairo_create(s);
    /* Pages leave their background to the window: without it, unpainted parts come out black. */
    gtk_render_background(gtk_widget_get_style_context(GTK_WIDGET(self)), cr, 0, 0, width, height);
    gtk_widget_draw(w, cr);
    cairo_destroy(cr);
    gboolean ok = gv_write_png(s, path, error);
    cairo_surface_destroy(s);
    return ok;
}

static void export_dialog(GvWindow *self)
{
    GtkFileChooserNative *fc = gtk_file_chooser_native_new("Export the view to PNG", GTK_WINDOW(self),
                                                           GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
    gtk_file_chooser_set_do_overwrite_confirmation(GTK_FILE_CHOOSER(fc), TRUE);
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(fc), "gtrace-view.png");
    if (gtk_native_dialog_run(GTK_NATIVE_DIALOG(fc)) == GTK_RESPONSE_ACCEPT) {
        g_autofree char *path = gtk_file_chooser_get_filename(GTK_FILE_CHOOSER(fc));
        g_autoptr(GError) error = NULL;
        if (gv_window_export_png(self, path, &error)) {
            g_autofree char *m = g_strdup_printf("wrote %s", path);
            set_status(self, m, FALSE);
        } else {
            set_status(self, error->message, TRUE);
        }
    }
    g_object_unref(fc);
}

static gboolean on_key(GtkWidget *w, GdkEventKey *e)
{
    GvWindow *self = GV_WINDOW(w);
    if (e->state & GDK_CONTROL_MASK) {
        switch (e->keyval) {
        case GDK_KEY_f: gtk_widget_grab_focus(self->search); return TRUE;
        case GDK_KEY_s: export_dialog(self); return TRUE;
        case GDK_KEY_1: gv_window_show_page(self, 0); return TRUE;
        case GDK_KEY_2: gv_window_show_page(self, 1); return TRUE;
        case GDK_KEY_3: gv_window_show_page(self, 2); return TRUE;
        default: break;
        }
    }
    return GTK_WIDGET_CLASS(gv_window_parent_class)->key_press_event(w, e);
}

/* The title is the trace's file name (both, compared), once it is known. */
static void update_title(GvWindow *self)
{
    g_autofree char *a = g_path_get_basename(gv_trace_model_path(self->model));
    g_autofree char *b = self->after ? g_path_get_basename(gv_trace_model_path(self->after)) : NULL;
    if (!*gv_trace_model_path(self->model)) {
        gtk_window_set_title(GTK_WINDOW(self), "gtrace-view");
        return;
    }
    g_autofree char *title = b ? g_strdup_printf("%s vs %s", a, b) : g_strdup(a);
    gtk_window_set_title(GTK_WINDOW(self), title);
    gtk_header_bar_set_title(GTK_HEADER_BAR(self->header), title);
    gtk_header_bar_set_subtitle(GTK_HEADER_BAR(self->header), "gtrace-view");
}

static void gv_window_dispose(GObject *obj)
{
    GvWindow *self = GV_WINDOW(obj);
    stop_pulse(self);
    if (self->model)
        g_signal_handlers_disconnect_by_data(self->model, self);
    if (self->after)
        g_signal_handlers_disconnect_by_data(self->after, self);
    g_clear_object(&self->after);
    g_clear_object(&GV_WINDOW(obj)->model);
    G_OBJECT_CLASS(gv_window_parent_class)->dispose(obj);
}

static void gv_window_class_init(GvWindowClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = gv_window_dispose;
    GTK_WIDGET_CLASS(klass)->key_press_event = on_key;
}

static void gv_window_init(GvWindow *self)
{
}

GtkWidget *gv_window_new(GvTraceModel *model, GvTraceModel *after)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(model), NULL);
    GvWindow *self = g_object_new(GV_TYPE_WINDOW, "type", GTK_WINDOW_TOPLEVEL, NULL);
    self->model = g_object_ref(model);
    self->after = after ? g_object_ref(after) : NULL;
    gtk_window_set_default_size(GTK_WINDOW(self), 1400, 860);

    GtkWidget *header = self->header = gtk_header_bar_new();
    gtk_header_bar_set_show_close_button(GTK_HEADER_BAR(header), TRUE);
    update_title(self);
    g_signal_connect_swapped(model, "notify::path", G_CALLBACK(update_title), self);
    g_signal_connect_swapped(model, "notify::path", G_CALLBACK(on_path), self);
    if (after)
        g_signal_connect_swapped(after, "notify::path", G_CALLBACK(update_title), self);
    self->search = gtk_search_entry_new();
    gtk_entry_set_placeholder_text(GTK_ENTRY(self->search), "search names (Ctrl+F)");
    g_signal_connect(self->search, "activate", G_CALLBACK(on_search), self);
    g_signal_connect(self->search, "search-changed", G_CALLBACK(on_search_changed), self);
    self->matches = gtk_label_new("");
    GtkWidget *fit = gtk_button_new_with_label("Fit");
    GtkWidget *png = gtk_button_new_with_label("Export PNG");
    gtk_header_bar_pack_end(GTK_HEADER_BAR(header), self->search);
    gtk_header_bar_pack_end(GTK_HEADER_BAR(header), self->matches);
    gtk_header_bar_pack_start(GTK_HEADER_BAR(header), fit);
    gtk_header_bar_pack_start(GTK_HEADER_BAR(header), png);
    gtk_window_set_titlebar(GTK_WINDOW(self), header);
    gtk_widget_show_all(header); /* the window shows only what is shown: the bar too */

    self->timeline = GV_TIMELINE(gv_timeline_new());
    gv_timeline_set_model(self->timeline, model);
    g_signal_connect(self->timeline, "selection-changed", G_CALLBACK(on_selection), self);
    g_signal_connect(self->timeline, "range-changed", G_CALLBACK(on_range), self);
    self->range = GV_RANGE_VIEW(gv_range_view_new());
    self->details = gtk_label_new(NO_DETAILS);
    gtk_label_set_xalign(GTK_LABEL(self->details), 0);
    gtk_label_set_yalign(GTK_LABEL(self->details), 0);
    gtk_label_set_selectable(GTK_LABEL(self->details), TRUE);
    gtk_label_set_line_wrap(GTK_LABEL(self->details), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(self->details), PANGO_WRAP_WORD_CHAR);
    gtk_widget_set_margin_start(self->details, 6);
    gtk_widget_set_margin_top(self->details, 4);
    GtkWidget *details_sw = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(details_sw), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    gtk_container_add(GTK_CONTAINER(details_sw), self->details);
    self->top = GV_TOP_VIEW(gv_top_view_new());
    gv_top_view_set_model(self->top, model);
    g_signal_connect(self->top, "show-item", G_CALLBACK(on_top_item), self);
    self->bottom = gtk_notebook_new();
    gtk_notebook_append_page(GTK_NOTEBOOK(self->bottom), details_sw, gtk_label_new("Details"));
    gtk_notebook_append_page(GTK_NOTEBOOK(self->bottom), GTK_WIDGET(self->top), gtk_label_new("Top kernels and ops"));
    gtk_notebook_append_page(GTK_NOTEBOOK(self->bottom), GTK_WIDGET(self->range), gtk_label_new("Range"));
    gtk_widget_set_size_request(self->bottom, -1, 190);
    GtkWidget *tl_page = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
    gtk_paned_pack1(GTK_PANED(tl_page), GTK_WIDGET(self->timeline), TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(tl_page), self->bottom, FALSE, FALSE);
    g_signal_connect_swapped(fit, "clicked", G_CALLBACK(gv_timeline_fit), self->timeline);
    g_signal_connect_swapped(png, "clicked", G_CALLBACK(export_dialog), self);
    self->memory = GV_MEMORY_VIEW(gv_memory_view_new());
    gv_memory_view_set_model(self->memory, model);
    g_signal_connect(self->memory, "details-changed", G_CALLBACK(on_block), self);
    self->summary = GV_SUMMARY(gv_summary_new());
    gv_summary_set_model(self->summary, model);
    g_signal_connect(self->summary, "navigate", G_CALLBACK(on_navigate), self);

    self->notebook = gtk_notebook_new();
    gtk_notebook_append_page(GTK_NOTEBOOK(self->notebook), tl_page, gtk_label_new("Timeline"));
    gtk_notebook_append_page(GTK_NOTEBOOK(self->notebook), GTK_WIDGET(self->memory), gtk_label_new("Memory"));
    if (after) {
        self->compare = GV_COMPARE(gv_compare_new(model, after));
        gtk_notebook_append_page(GTK_NOTEBOOK(self->notebook), GTK_WIDGET(self->compare), gtk_label_new("Compare"));
    }
    GtkWidget *paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
    gtk_paned_pack1(GTK_PANED(paned), self->notebook, TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(paned), GTK_WIDGET(self->summary), FALSE, FALSE);
    gtk_paned_set_position(GTK_PANED(paned), 1020);
    self->status = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(self->status), 0);
    gtk_label_set_ellipsize(GTK_LABEL(self->status), PANGO_ELLIPSIZE_END);
    gtk_label_set_selectable(GTK_LABEL(self->status), TRUE);
    self->progress = gtk_progress_bar_new();
    gtk_progress_bar_set_show_text(GTK_PROGRESS_BAR(self->progress), TRUE);
    gtk_widget_set_size_request(self->progress, 360, -1);
    gtk_widget_set_valign(self->progress, GTK_ALIGN_CENTER);
    gtk_widget_set_no_show_all(self->progress, TRUE);
    GtkWidget *status_row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_pack_start(GTK_BOX(status_row), self->status, TRUE, TRUE, 0);
    gtk_box_pack_end(GTK_BOX(status_row), self->progress, FALSE, FALSE, 4);
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
    gtk_box_pack_start(GTK_BOX(box), paned, TRUE, TRUE, 0);
    gtk_box_pack_start(GTK_BOX(box), status_row, FALSE, FALSE, 2);
    gtk_container_add(GTK_CONTAINER(self), box);
    gtk_widget_show_all(box);
    GvTraceModel *ms[2] = {model, after};
    for (int i = 0; i < 2; i++)
        if (ms[i]) {
            g_signal_connect_swapped(ms[i], "notify::path", G_CALLBACK(update_progress), self);
            g_signal_connect_swapped(ms[i], "updated", G_CALLBACK(update_progress), self);
            g_signal_connect_swapped(ms[i], "analysed", G_CALLBACK(update_progress), self);
        }
    update_progress(self);
    gtk_widget_hide(GTK_WIDGET(self->range)); /* until a range is selected */
    if (after)
        gv_window_show_page(self, 2);
    on_path(self); /* the path may be set already */
    return GTK_WIDGET(self);
}
