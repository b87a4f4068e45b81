/* gv-summary.c: the panel's rows, built from gt_report when the model says
 * "analysed". Rows are GtkListBoxRows holding their time range. */
#include "gv-summary.h"

#include "gv-names.h"
#include "gt_metrics.h"

#include <stdio.h>

struct _GvSummary {
    GtkBox parent_instance;
    GtkWidget *list;
    GvTraceModel *model;
    gulong analysed_id, updated_id;
    gboolean showing_kept; /* the kept report, until the analysis is in */
    GRegex *gaps; /* two spaces or more: a column gap of the report's text */
};

G_DEFINE_TYPE(GvSummary, gv_summary, GTK_TYPE_BOX)

enum { SIG_NAVIGATE, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct range { int64_t from_ns, to_ns; } range;

static void add_row(GvSummary *self, const char *markup, int64_t from_ns, int64_t to_ns)
{
    GtkWidget *label = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(label), markup);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    /* Long names break anywhere: one unbroken kernel name would make the
     * panel as wide as itself and leave the timeline no room. */
    gtk_label_set_line_wrap(GTK_LABEL(label), TRUE);
    gtk_label_set_line_wrap_mode(GTK_LABEL(label), PANGO_WRAP_WORD_CHAR);
    gtk_label_set_max_width_chars(GTK_LABEL(label), 48);
    gtk_widget_set_margin_start(label, 6);
    gtk_widget_set_margin_end(label, 6);
    gtk_widget_set_margin_top(label, 3);
    gtk_widget_set_margin_bottom(label, 3);
    GtkWidget *row = gtk_list_box_row_new();
    gtk_container_add(GTK_CONTAINER(row), label);
    if (to_ns > from_ns) {
        range *r = g_new(range, 1);
        *r = (range){from_ns, to_ns};
        g_object_set_data_full(G_OBJECT(row), "gv-range", r, g_free);
        gtk_widget_set_tooltip_text(row, "click to show it on the timeline");
    } else {
        gtk_list_box_row_set_activatable(GTK_LIST_BOX_ROW(row), FALSE);
    }
    gtk_widget_show_all(row);
    gtk_container_add(GTK_CONTAINER(self->list), row);
}

static void addf(GvSummary *self, int64_t from, int64_t to, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static void addf(GvSummary *self, int64_t from, int64_t to, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = g_markup_vprintf_escaped(fmt, ap);
    va_end(ap);
    add_row(self, s, from, to);
    g_free(s);
}

/* The kept report's text in rows that fit the panel: a row per section,
 * its heading (the first line, to its first column gap) in bold,
 * column gaps cut to two spaces so the lines wrap between figures. */
static void add_kept(GvSummary *self, const char *text)
{
    GString *row = g_string_new(NULL);
    for (const char *at = text; *at;) {
        const char *nl = strchr(at, '\n');
        size_t n = nl ? (size_t)(nl - at) : strlen(at);
        if (n == 0 && row->len > 0) { /* a section's end */
            add_row(self, row->str, 0, 0);
            g_string_truncate(row, 0);
        } else if (n > 0) {
            char *line = g_strndup(at, n), *gap = strstr(line, "  ");
            gboolean first = row->len == 0 && line[0] != ' ';
            if (row->len)
                g_string_append_c(row, '\n');
            char *words = g_regex_replace_literal(self->gaps, line, -1, 0, "  ", 0, NULL);
            if (first) { /* the heading, bold: to its first column gap, or the whole line */
                size_t k = gap ? (size_t)(gap - line) : n;
                char *head = g_markup_escape_text(line, (gssize)k), *rest = g_markup_escape_text(words + k, -1);
                g_string_append_printf(row, "<b>%s</b>%s", head, rest);
                g_free(head);
                g_free(rest);
            } else {
                char *esc = g_markup_escape_text(words, -1);
                g_string_append(row, esc);
                g_free(esc);
            }
            g_free(words);
            g_free(line);
        }
        at += n + (nl != NULL);
    }
    if (row->len > 0)
        add_row(self, row->str, 0, 0);
    g_string_free(row, TRUE);
}

static void fill(GvSummary *self)
{
    GList *children = gtk_container_get_children(GTK_CONTAINER(self->list));
    for (GList *l = children; l; l = l->next)
        gtk_widget_destroy(l->data);
    g_list_free(children);
    const gt_report *r = self->model ? gv_trace_model_report(self->model) : NULL;
    if (!r) {
        char *kept = self->model ? gv_trace_model_kept_report(self->model) : NULL;
        self->showing_kept = kept != NULL;
        if (kept) { /* a big trace's report at once; its rows become links with the analysis */
            addf(self, 0, 0, "<i>the report kept in the trace; analysing for links...</i>");
            add_kept(self, kept);
            g_free(kept);
        } else {
            addf(self, 0, 0, "<i>%s</i>", self->model ? "analysing..." : "no trace");
        }
        return;
    }
    self->showing_kept = FALSE;
    char a[32], b[32], c[32];
    int64_t o, span_end; /* times from the trace's start, as the timeline's axis counts them */
    gv_trace_model_span(self->model, &o, &span_end);
    addf(self, 0, 0, "<b>%s</b>", gv_trace_model_path(self->model)); /* as given: not an import's temporary */
    if (r->n_steps > 0)
        addf(self, r->steps[0].start_ns, r->steps[r->n_steps - 1].end_ns,
             "wall %s, %zu steps, %s median %s (p95 %s)", gt_fmt_ns(a, sizeof a, r->wall_ns), r->n_steps,
             gt_metric_label(GT_M_STEP_TIME),
             gt_fmt_ns(b, sizeof b, (int64_t)r->step_time.median_ns),
             gt_fmt_ns(c, sizeof c, (int64_t)r->step_time.p95_ns));
    else
        addf(self, 0, 0, "wall %s, no steps found", gt_fmt_ns(a, sizeof a, r->wall_ns));
    for (size_t i = 0; i < r->n_devices; i++) {
        const gt_device_util *d = &r->devices[i];
        if (d->device_id < 0)
            addf(self, 0, 0, "CPU ops busy %.1f%% (%s)", 100 * d->utilization, gt_fmt_ns(a, sizeof a, d->busy_ns));
        else
            addf(self, 0, 0, "GPU %d busy %.1f%% (%s)", d->device_id, 100 * d->utilization,
                 gt_fmt_ns(a, sizeof a, d->busy_ns));
    }
    size_t fired = 0;
    for (size_t i = 0; i < r->n_advice; i++)
        fired += r->advice[i].fired;
    add_row(self, fired ? "<b>advice</b>" : "<b>advice</b>: no rule fired", 0, 0);
    for (size_t i = 0; i < r->n_advice; i++) {
        const gt_advice *ad = &r->advice[i];
        if (!ad->fired)
            continue;
        addf(self, ad->from_ns, ad->to_ns, "<span foreground='#b02020'>●</span> <b>%s</b>\n%s\n%s%s%s",
             ad->title, ad->evidence, ad->suggestion, ad->gain && *ad->gain ? "\nexpected: " : "",
             ad->gain ? ad->gain : "");
    }
    addf(self, 0, 0, "<b>idle gaps</b>: %lld, %s (host-wait %s)", (long long)r->gaps.n_gaps,
         gt_fmt_ns(a, sizeof a, r->gaps.idle_ns),
         gt_fmt_ns(b, sizeof b, r->gaps.idle_by_cause_ns[GT_GAP_HOST_WAIT]));
    for (size_t i = 0; i < r->gaps.n_longest && i < 10; i++) {
        const gt_gap *g = &r->gaps.longest[i];
        addf(self, g->start_ns, g->end_ns, "gap %s at +%s, %s%s%s", gt_fmt_ns(a, sizeof a, g->end_ns - g->start_ns),
             gt_fmt_ns(b, sizeof b, g->start_ns - o), gt_gap_cause_name(g->cause),
             g->nvtx_path && *g->nvtx_path ? ", host in " : "", g->nvtx_path ? g->nvtx_path : "");
    }
    const gt_memory *m = &r->memory;
    if (m->has_blocks || m->has_device || m->has_segments) {
        int64_t w = r->wall_ns / 200 + 1;
        addf(self, m->peak_allocated_ns - w, m->peak_allocated_ns + w,
             "<b>memory</b>: %s %s at +%s, %s %s, fragmentation %.1f%%", gt_metric_label(GT_M_PEAK_ALLOCATED),
             gt_fmt_bytes(a, sizeof a, m->peak_allocated_bytes), gt_fmt_ns(b, sizeof b, m->peak_allocated_ns - o),
             gt_metric_label(GT_M_PEAK_RESERVED), gt_fmt_bytes(c, sizeof c, m->peak_reserved_bytes),
             100 * m->fragmentation);
        for (size_t i = 0; i < m->n_leaks; i++)
            addf(self, m->leaks[i].first_ns, m->leaks[i].last_ns + 1, "leak: %s alive (%lld blocks), %.0f B/step, from %s",
                 gt_fmt_bytes(a, sizeof a, m->leaks[i].alive_bytes), (long long)m->leaks[i].n_alive,
                 m->leaks[i].bytes_per_step, m->leaks[i].origin);
        for (size_t i = 0; i < m->n_spikes && i < 10; i++)
            addf(self, m->spikes[i].start_ns, m->spikes[i].end_ns, "spike: %s for %s at +%s, from %s",
                 gt_fmt_bytes(a, sizeof a, m->spikes[i].bytes),
                 gt_fmt_ns(b, sizeof b, m->spikes[i].end_ns - m->spikes[i].start_ns),
                 gt_fmt_ns(c, sizeof c, m->spikes[i].start_ns - o), m->spikes[i].origin);
    }
    if (r->n_kernels > 0) {
        add_row(self, r->cpu_timeline ? "<b>top CPU ops</b>" : "<b>top kernels</b>", 0, 0);
        for (size_t i = 0; i < r->n_kernels && i < 8; i++) {
            char name[256]; /* as the timeline names them; the table under it has them all */
            addf(self, 0, 0, "%5.1f%%  %s  x%lld  %s", 100 * r->kernels[i].share,
                 gt_fmt_ns(a, sizeof a, r->kernels[i].d.total_ns), (long long)r->kernels[i].d.n,
                 r->cpu_timeline ? r->kernels[i].name : gv_short_kernel_name(name, sizeof name, r->kernels[i].name));
        }
    }
}

/* Rows come in: the kept report is known from the first of them on. */
static void on_updated(GvSummary *self)
{
    if (!self->showing_kept && !gv_trace_model_is_analysed(self->model)) {
        char *kept = gv_trace_model_kept_report(self->model);
        if (kept)
            fill(self);
        g_free(kept);
    }
}

static void on_row_activated(GtkListBox *box, GtkListBoxRow *row, gpointer p)
{
    range *r = g_object_get_data(G_OBJECT(row), "gv-range");
    if (r)
        g_signal_emit(p, signals[SIG_NAVIGATE], 0, (gint64)r->from_ns, (gint64)r->to_ns);
}

void gv_summary_set_model(GvSummary *self, GvTraceModel *model)
{
    g_return_if_fail(GV_IS_SUMMARY(self));
    if (self->model) {
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_signal_handler_disconnect(self->model, self->updated_id);
        g_clear_object(&self->model);
    }
    if (model) {
        self->model = g_object_ref(model);
        self->analysed_id = g_signal_connect_swapped(model, "analysed", G_CALLBACK(fill), self);
        self->updated_id = g_signal_connect_swapped(model, "updated", G_CALLBACK(on_updated), self);
    }
    fill(self);
}

guint gv_summary_n_items(GvSummary *self, guint *out_n_linked)
{
    GList *children = gtk_container_get_children(GTK_CONTAINER(self->list));
    guint n = 0, linked = 0;
    for (GList *l = children; l; l = l->next, n++)
        linked += g_object_get_data(l->data, "gv-range") != NULL;
    g_list_free(children);
    if (out_n_linked)
        *out_n_linked = linked;
    return n;
}

char *gv_summary_item_text(GvSummary *self, guint i)
{
    GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(self->list), (int)i);
    GtkWidget *label = row ? gtk_bin_get_child(GTK_BIN(row)) : NULL;
    return label && GTK_IS_LABEL(label) ? g_strdup(gtk_label_get_text(GTK_LABEL(label))) : NULL;
}

gboolean gv_summary_activate(GvSummary *self, guint i)
{
    GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(self->list), (int)i);
    if (!row || !g_object_get_data(G_OBJECT(row), "gv-range"))
        return FALSE;
    g_signal_emit_by_name(self->list, "row-activated", row);
    return TRUE;
}

static void gv_summary_dispose(GObject *obj)
{
    GvSummary *self = GV_SUMMARY(obj);
    g_clear_pointer(&self->gaps, g_regex_unref);
    if (self->model) {
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_signal_handler_disconnect(self->model, self->updated_id);
        g_clear_object(&self->model);
    }
    G_OBJECT_CLASS(gv_summary_parent_class)->dispose(obj);
}

static void gv_summary_class_init(GvSummaryClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = gv_summary_dispose;
    signals[SIG_NAVIGATE] = g_signal_new("navigate", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);
}

static void gv_summary_init(GvSummary *self)
{
    self->gaps = g_regex_new("  +", G_REGEX_OPTIMIZE, 0, NULL);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    GtkWidget *sw = gtk_scrolled_window_new(NULL, NULL);
    gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(sw), GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC);
    self->list = gtk_list_box_new();
    gtk_list_box_set_selection_mode(GTK_LIST_BOX(self->list), GTK_SELECTION_SINGLE);
    gtk_list_box_set_activate_on_single_click(GTK_LIST_BOX(self->list), TRUE);
    g_signal_connect(self->list, "row-activated", G_CALLBACK(on_row_activated), self);
    gtk_container_add(GTK_CONTAINER(sw), self->list);
    gtk_box_pack_start(GTK_BOX(self), sw, TRUE, TRUE, 0);
    gtk_widget_set_size_request(GTK_WIDGET(self), 200, -1);
}

GtkWidget *gv_summary_new(void)
{
    return g_object_new(GV_TYPE_SUMMARY, NULL);
}
