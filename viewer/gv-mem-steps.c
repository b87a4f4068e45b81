/* gv-mem-steps.c: the per-step peak, leak and spike table (see the header).
 * The peaks are read off the analysis's samples (what the chart draws); the
 * leaks and spikes are the report's. */
#include "gv-mem-steps.h"

#include <string.h>

struct _GvMemSteps {
    GtkScrolledWindow parent_instance;
    GtkListStore *store;
    GtkWidget *tree;
};

G_DEFINE_TYPE(GvMemSteps, gv_mem_steps, GTK_TYPE_SCROLLED_WINDOW)

enum { SIG_NAVIGATE, N_SIGNALS };
static guint signals[N_SIGNALS];

/* Allocated bytes just after t: the last sample at or before it (0 before any). */
static int64_t allocated_at(const GvMemory *mem, int64_t t, size_t *idx)
{
    size_t lo = GT_UPPER_BOUND(mem->samples, mem->n_samples, t_ns, t);
    *idx = lo;
    return lo > 0 ? mem->samples[lo - 1].allocated_bytes : 0;
}

/* The most allocated in [from, to]: what was there at from, or any sample inside. */
static int64_t peak_in(const GvMemory *mem, int64_t from, int64_t to)
{
    size_t i;
    int64_t peak = allocated_at(mem, from, &i);
    for (; i < mem->n_samples && mem->samples[i].t_ns <= to; i++)
        peak = MAX(peak, mem->samples[i].allocated_bytes);
    return peak;
}

static void add_row(GvMemSteps *self, const char *kind, const char *steps, int64_t bytes, const char *change,
                    const char *origin, int64_t from, int64_t to)
{
    char b[32];
    GtkTreeIter it;
    gtk_list_store_append(self->store, &it);
    gtk_list_store_set(self->store, &it, GV_MEM_STEPS_KIND, kind, GV_MEM_STEPS_STEPS, steps, GV_MEM_STEPS_BYTES,
                       bytes >= 0 ? gt_fmt_bytes(b, sizeof b, (double)bytes) : "", GV_MEM_STEPS_CHANGE, change,
                       GV_MEM_STEPS_ORIGIN, origin ? origin : "", GV_MEM_STEPS_BYTES_N, bytes, GV_MEM_STEPS_FROM,
                       from, GV_MEM_STEPS_TO, to, -1);
}

static void fill_steps(GvMemSteps *self, const GvMemory *mem, const gt_report *r, const gt_memory *pm)
{
    char b[32], n[48], ch[48];
    if (!r || r->n_steps == 0) {
        int64_t t1 = mem->n_samples ? mem->samples[mem->n_samples - 1].t_ns : 0;
        add_row(self, "peak", "whole trace (no steps)", pm ? pm->peak_allocated_bytes : peak_in(mem, INT64_MIN, t1),
                "", "", mem->n_samples ? mem->samples[0].t_ns : 0, t1);
        return;
    }
    int64_t prev_end = 0;
    size_t idx;
    for (size_t i = 0; i < r->n_steps; i++) {
        const gt_step *s = &r->steps[i];
        int64_t end = allocated_at(mem, s->end_ns, &idx);
        snprintf(n, sizeof n, "step %lld", (long long)s->number);
        if (i == 0)
            snprintf(ch, sizeof ch, "first");
        else if (end > prev_end)
            snprintf(ch, sizeof ch, "+%s at its end", gt_fmt_bytes(b, sizeof b, (double)(end - prev_end)));
        else
            snprintf(ch, sizeof ch, "no growth");
        add_row(self, "peak", n, peak_in(mem, s->start_ns, s->end_ns), ch, "", s->start_ns, s->end_ns);
        prev_end = end;
    }
}

static void fill_leaks(GvMemSteps *self, const gt_memory *pm)
{
    char b[32], n[64], ch[48];
    size_t shown = 0;
    for (size_t i = 0; pm && i < pm->n_leaks; i++) {
        const gt_leak *l = &pm->leaks[i];
        snprintf(n, sizeof n, "grew in %lld steps", (long long)l->n_steps_grew);
        snprintf(ch, sizeof ch, "+%s per step", gt_fmt_bytes(b, sizeof b, l->bytes_per_step));
        add_row(self, "leak", n, l->alive_bytes, ch, l->origin, l->first_ns, l->last_ns);
        shown++;
    }
    if (shown == 0)
        add_row(self, "leak", "no growth", -1, "no growth", "nothing left alive grows from step to step", 0, -1);
}

/* Spikes of one origin and size are one row: "spike x N" over their steps. */
static void fill_spikes(GvMemSteps *self, const gt_memory *pm)
{
    size_t n = pm ? pm->n_spikes : 0;
    gboolean *done = g_new0(gboolean, n ? n : 1);
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        const gt_spike *a = &pm->spikes[i];
        const char *oa = a->origin ? a->origin : "";
        GString *steps = g_string_new("");
        size_t count = 0;
        int64_t from = a->start_ns, to = a->end_ns, last_step = INT64_MIN;
        for (size_t k = i; k < n; k++) {
            const gt_spike *o = &pm->spikes[k];
            if (done[k] || o->bytes != a->bytes || strcmp(oa, o->origin ? o->origin : "") != 0)
                continue;
            done[k] = TRUE;
            count++;
            from = MIN(from, o->start_ns);
            to = MAX(to, o->end_ns);
            if (o->step >= 0 && o->step != last_step && steps->len < 120)
                g_string_append_printf(steps, "%s%lld", steps->len ? ", " : "step ", (long long)o->step);
            last_step = o->step;
        }
        char kind[48];
        if (count > 1)
            snprintf(kind, sizeof kind, "spike x %zu", count);
        else
            snprintf(kind, sizeof kind, "spike");
        add_row(self, kind, steps->len ? steps->str : "", a->bytes, count > 1 ? "repeated" : "", oa, from, to);
        g_string_free(steps, TRUE);
    }
    g_free(done);
}

void gv_mem_steps_fill(GvMemSteps *self, const GvMemory *mem, const gt_report *r, const gt_memory *pm)
{
    g_return_if_fail(GV_IS_MEM_STEPS(self));
    gtk_list_store_clear(self->store);
    if (!mem || mem->n_samples == 0)
        return;
    fill_steps(self, mem, r, pm);
    fill_leaks(self, pm);
    fill_spikes(self, pm);
}

GtkTreeView *gv_mem_steps_get_tree(GvMemSteps *self) { return GTK_TREE_VIEW(self->tree); }

static void on_activated(GtkTreeView *tv, GtkTreePath *path, GtkTreeViewColumn *col, gpointer p)
{
    GvMemSteps *self = p;
    GtkTreeIter it;
    gint64 from = 0, to = -1;
    if (!gtk_tree_model_get_iter(GTK_TREE_MODEL(self->store), &it, path))
        return;
    gtk_tree_model_get(GTK_TREE_MODEL(self->store), &it, GV_MEM_STEPS_FROM, &from, GV_MEM_STEPS_TO, &to, -1);
    if (to > from)
        g_signal_emit(self, signals[SIG_NAVIGATE], 0, from, to);
}

static void gv_mem_steps_dispose(GObject *obj)
{
    g_clear_object(&GV_MEM_STEPS(obj)->store);
    G_OBJECT_CLASS(gv_mem_steps_parent_class)->dispose(obj);
}

static void gv_mem_steps_class_init(GvMemStepsClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = gv_mem_steps_dispose;
    signals[SIG_NAVIGATE] = g_signal_new("navigate", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 2, G_TYPE_INT64, G_TYPE_INT64);
}

static void gv_mem_steps_init(GvMemSteps *self)
{
    self->store = gtk_list_store_new(GV_MEM_STEPS_N_COLS, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING,
                                     G_TYPE_STRING, G_TYPE_INT64, G_TYPE_INT64, G_TYPE_INT64);
    self->tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(self->store));
    static const char *const heads[] = {"", "steps", "bytes", "change", "origin"};
    for (int c = 0; c < 5; c++) {
        GtkCellRenderer *cell = gtk_cell_renderer_text_new();
        GtkTreeViewColumn *col = gtk_tree_view_column_new_with_attributes(heads[c], cell, "text", c, NULL);
        gtk_tree_view_column_set_resizable(col, TRUE);
        if (c == GV_MEM_STEPS_BYTES)
            gtk_tree_view_column_set_sort_column_id(col, GV_MEM_STEPS_BYTES_N);
        gtk_tree_view_append_column(GTK_TREE_VIEW(self->tree), col);
    }
    g_signal_connect(self->tree, "row-activated", G_CALLBACK(on_activated), self);
    gtk_container_add(GTK_CONTAINER(self), self->tree);
    gtk_widget_show(self->tree);
}

GtkWidget *gv_mem_steps_new(void)
{
    return g_object_new(GV_TYPE_MEM_STEPS, "hadjustment", NULL, "vadjustment", NULL, NULL);
}
