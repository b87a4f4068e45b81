/* gv-compare.c: keeps the two timelines' views in step and fills the diff
 * table once both analyses are in: gtrace diff's rows, each op's and
 * kernel's judged on its per-step samples with its 95% interval, computed
 * on a GTask thread from the loaded analyses (the bootstrap takes a while on
 * long runs). Then the after trace's view draws through
 * the step alignment (gv-align), so both views' t0 and scale are in the
 * before trace's time and a view change on one side is copied as is to the
 * other; `syncing` stops the echo. Until then each follows its own span. */
#include "gv-compare.h"

#include <math.h>
#include <string.h>

struct _GvCompare {
    GtkPaned parent_instance;
    GvTraceModel *models[2];
    GvTimeline *timelines[2];
    GtkWidget *titles[2];
    GtkListStore *store;
    GtkWidget *tree;
    GtkWidget *table_title; /* says while the diff is computed */
    GCancellable *diffing;  /* the diff's task; NULL when none runs */
    GtkTreeViewColumn *heads[2]; /* "before (FILE)", "after (FILE)" */
    GvAlign align;
    gboolean syncing, diffed;
    gssize shown_step; /* the aligned pair a row showed; -1 none */
    gboolean placed;   /* the table's share of the height set */
};

G_DEFINE_TYPE(GvCompare, gv_compare, GTK_TYPE_PANED)

/* Text columns shown; ABS and REL sort the change columns by value (a new
 * name sorts above every change, a gone one below); NAME is what a per-name
 * row is about ("" for whole-run rows). */
enum { COL_METRIC, COL_BEFORE, COL_AFTER, COL_ABS_TEXT, COL_CHANGE, COL_VERDICT, COL_INTERVAL, COL_COLOR, COL_ABS,
       COL_REL, COL_NAME, COL_LO, N_COLS };

#define TABLE_TITLE "diff (gtrace diff BEFORE AFTER): double-click a row to show it in both"


static void sync_from(GvCompare *self, int from)
{
    if (self->syncing || !self->diffed)
        return;
    self->syncing = TRUE;
    GvView *src = gv_timeline_get_view(self->timelines[from]);
    GvView *dst = gv_timeline_get_view(self->timelines[1 - from]);
    dst->ns_per_px = src->ns_per_px;
    dst->t0_ns = src->t0_ns;
    gv_timeline_stop_following(self->timelines[1 - from]);
    gv_timeline_view_changed(self->timelines[1 - from]);
    self->syncing = FALSE;
}

static void on_view_changed(GvTimeline *tl, gpointer p)
{
    GvCompare *self = p;
    sync_from(self, tl == self->timelines[0] ? 0 : 1);
}

/* One diff row as gtrace diff prints it: new and gone names said so, the
 * verdict and the 95% interval of the change beside it. */
static void add_row(GvCompare *self, const gt_diff_row *r)
{
    char x[40], y[40], c[40], dabs[48], iv[96], lo[40], hi[40];
    const char *verdict = r->presence > 0 ? "new" : r->presence < 0 ? "gone"
                        : r->too_few          ? (r->by_runs ? "too few runs" : "too few steps")
                        : r->verdict > 0      ? "better"
                        : r->verdict < 0      ? "worse"
                                              : "same";
    double rel = r->presence > 0 ? INFINITY : r->presence < 0 ? -INFINITY : r->change;
    double d = r->after - r->before;
    if (r->presence > 0)
        snprintf(c, sizeof c, "new");
    else if (r->presence < 0)
        snprintf(c, sizeof c, "gone");
    else
        gt_diff_change(c, sizeof c, r->change);
    gt_diff_cell(dabs + 1, sizeof dabs - 1, r->unit, fabs(d));
    dabs[0] = d < 0 ? '-' : '+';
    gboolean has_iv = !isnan(r->lo) && !isnan(r->hi) && !r->presence;
    if (has_iv) /* as gtrace diff prints it */
        snprintf(iv, sizeof iv, "[%s, %s]", gt_diff_change(lo, sizeof lo, r->lo), gt_diff_change(hi, sizeof hi, r->hi));
    else
        iv[0] = 0;
    const char *colon = strchr(r->metric, ':');
    GtkTreeIter it;
    gtk_list_store_append(self->store, &it);
    gtk_list_store_set(self->store, &it, COL_METRIC, r->metric, COL_BEFORE,
                       r->presence > 0 ? "-" : gt_diff_cell(x, sizeof x, r->unit, r->before), COL_AFTER,
                       r->presence < 0 ? "-" : gt_diff_cell(y, sizeof y, r->unit, r->after), COL_ABS_TEXT, dabs,
                       COL_CHANGE, c, COL_VERDICT, verdict, COL_INTERVAL, iv, COL_COLOR,
                       r->verdict > 0 ? "#1a7f37" : r->verdict < 0 ? "#b02020" : "#555555", COL_ABS, d, COL_REL,
                       rel, COL_NAME, colon ? colon + 1 + strspn(colon + 1, " ") : "", COL_LO,
                       has_iv ? r->lo : -INFINITY, -1);
}

/* The diff of the two runs, as gtrace diff computes it (per-step samples,
 * warm-up left out, bootstrap intervals), on a worker thread. */
static void diff_thread(GTask *task, gpointer src, gpointer data, GCancellable *cancel)
{
    GvTraceModel **models = data;
    gt_diff_run *runs[2] = {NULL, NULL};
    gt_diff *d = NULL;
    GError *error = NULL;
    if (gv_trace_model_diff_run(models[0], &runs[0], &error) && gv_trace_model_diff_run(models[1], &runs[1], &error)) {
        int rc = gt_diff_compute_runs(&d, &runs[0], 1, &runs[1], 1, NULL);
        if (rc < 0)
            g_set_error(&error, GV_ERROR, -rc, "diff: %s", gt_error_last());
    }
    gt_diff_run_free(runs[0]);
    gt_diff_run_free(runs[1]);
    if (error)
        g_task_return_error(task, error);
    else
        g_task_return_pointer(task, d, (GDestroyNotify)gt_diff_free);
}

static void models_unref(gpointer p)
{
    GvTraceModel **models = p;
    g_object_unref(models[0]);
    g_object_unref(models[1]);
    g_free(models);
}

static void diff_done(GObject *src, GAsyncResult *res, gpointer p)
{
    g_autoptr(GError) error = NULL;
    gt_diff *d = g_task_propagate_pointer(G_TASK(res), &error);
    GvCompare *self = GV_COMPARE(src);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || !self->store) { /* the page is gone */
        gt_diff_free(d);
        return;
    }
    g_clear_object(&self->diffing);
    if (d)
        for (size_t i = 0; i < d->n_rows; i++)
            add_row(self, &d->rows[i]);
    gtk_label_set_text(GTK_LABEL(self->table_title), d ? TABLE_TITLE : error->message);
    gt_diff_free(d);
}

static void start_diff(GvCompare *self)
{
    GvTraceModel **models = g_new(GvTraceModel *, 2);
    models[0] = g_object_ref(self->models[0]);
    models[1] = g_object_ref(self->models[1]);
    self->diffing = g_cancellable_new();
    gtk_label_set_text(GTK_LABEL(self->table_title), "diff: each op's and kernel's steps compared...");
    GTask *task = g_task_new(self, self->diffing, diff_done, NULL);
    g_task_set_return_on_cancel(task, TRUE);
    g_task_set_task_data(task, models, models_unref);
    g_task_run_in_thread(task, diff_thread);
    g_object_unref(task);
}

/* Both analysed: align every step both have, and fill the table. */
static void on_analysed(GvTraceModel *m, gpointer p)
{
    GvCompare *self = p;
    const gt_report *a = gv_trace_model_report(self->models[0]), *b = gv_trace_model_report(self->models[1]);
    if (!a || !b || self->diffed)
        return;
    self->diffed = TRUE;
    if (gv_align_init(&self->align, a->steps, a->n_steps, b->steps, b->n_steps, a->start_ns, b->start_ns) < 0)
        self->align.shift_ns = b->start_ns - a->start_ns; /* out of memory: aligned on the starts only */
    GvView *va = gv_timeline_get_view(self->timelines[0]), *vb = gv_timeline_get_view(self->timelines[1]);
    va->align = vb->align = &self->align;
    va->align_side = 0;
    vb->align_side = 1;
    vb->origin_ns = gv_align_map(&self->align, 0, va->origin_ns); /* both axes read the same at a pair's start */
    start_diff(self);
    /* Show the first two aligned steps on both. */
    const GvAlign *al = &self->align;
    if (al->n_pairs > 0)
        gv_timeline_show_range(self->timelines[0], al->pairs[0].start_ns[0],
                               al->pairs[al->n_pairs > 1 ? 1 : 0].end_ns[0]);
    sync_from(self, 0);
}

/* The aligned step pair whose duration changed most (index into the pairs; -1 none). */
static gssize largest_step_change(const GvAlign *al)
{
    gssize best = -1;
    int64_t most = -1;
    for (size_t k = 0; k < al->n_pairs; k++) {
        int64_t d0 = al->pairs[k].end_ns[0] - al->pairs[k].start_ns[0];
        int64_t d1 = al->pairs[k].end_ns[1] - al->pairs[k].start_ns[1];
        int64_t d = d1 > d0 ? d1 - d0 : d0 - d1;
        if (d > most) {
            most = d;
            best = (gssize)k;
        }
    }
    return best;
}

void gv_compare_activate_row(GvCompare *self, GtkTreePath *path)
{
    g_return_if_fail(GV_IS_COMPARE(self));
    GtkTreeModel *tm = gtk_tree_view_get_model(GTK_TREE_VIEW(self->tree));
    GtkTreeIter it;
    if (!gtk_tree_model_get_iter(tm, &it, path))
        return;
    g_autofree char *name = NULL;
    gtk_tree_model_get(tm, &it, COL_NAME, &name, -1);
    for (int i = 0; i < 2; i++) /* the op outlined in both runs ("" clears) */
        gv_timeline_set_search(self->timelines[i], name, NULL);
    gssize k = self->diffed ? largest_step_change(&self->align) : -1;
    self->shown_step = k;
    if (k >= 0) /* the after side follows through the alignment */
        gv_timeline_show_range(self->timelines[0], self->align.pairs[k].start_ns[0], self->align.pairs[k].end_ns[0]);
    sync_from(self, 0);
}

static void on_row(GtkTreeView *tv, GtkTreePath *path, GtkTreeViewColumn *col, gpointer p)
{
    gv_compare_activate_row(p, path);
}

GtkTreeView *gv_compare_get_table(GvCompare *self) { return GTK_TREE_VIEW(self->tree); }
gssize gv_compare_get_shown_step(GvCompare *self) { return self->shown_step; }

GvTimeline *gv_compare_get_timeline(GvCompare *self, int which) { return self->timelines[which ? 1 : 0]; }
const char *gv_compare_get_title(GvCompare *self, int which)
{
    return gtk_label_get_text(GTK_LABEL(self->titles[which ? 1 : 0]));
}
const GvAlign *gv_compare_get_align(GvCompare *self) { return self->diffed ? &self->align : NULL; }
gboolean gv_compare_is_diffing(GvCompare *self) { return self->diffing != NULL; }
guint gv_compare_n_diff_rows(GvCompare *self)
{
    return (guint)gtk_tree_model_iter_n_children(GTK_TREE_MODEL(self->store), NULL);
}

/* The first allocation gives the table 40% of the height: the timelines' lanes leave most of theirs blank. */
static void on_allocate(GtkWidget *w, GdkRectangle *a, gpointer p)
{
    GvCompare *self = GV_COMPARE(w);
    if (self->placed || a->height < 200)
        return;
    self->placed = TRUE;
    gtk_paned_set_position(GTK_PANED(self), a->height * 3 / 5);
}

static void gv_compare_dispose(GObject *obj)
{
    GvCompare *self = GV_COMPARE(obj);
    for (int i = 0; i < 2; i++)
        if (self->timelines[i]) /* they may outlive the map they point to */
            gv_timeline_get_view(self->timelines[i])->align = NULL;
    for (int i = 0; i < 2; i++)
        if (self->models[i]) {
            g_signal_handlers_disconnect_by_data(self->models[i], self);
            g_clear_object(&self->models[i]);
        }
    if (self->diffing) /* its result finds the page gone */
        g_cancellable_cancel(self->diffing);
    g_clear_object(&self->diffing);
    g_clear_object(&self->store);
    G_OBJECT_CLASS(gv_compare_parent_class)->dispose(obj);
}

static void gv_compare_finalize(GObject *obj)
{
    gv_align_clear(&GV_COMPARE(obj)->align);
    G_OBJECT_CLASS(gv_compare_parent_class)->finalize(obj);
}

static void gv_compare_class_init(GvCompareClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = gv_compare_dispose;
    G_OBJECT_CLASS(klass)->finalize = gv_compare_finalize;
}

static void gv_compare_init(GvCompare *self)
{
    self->shown_step = -1;
    g_signal_connect(self, "size-allocate", G_CALLBACK(on_allocate), NULL);
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    self->store = gtk_list_store_new(N_COLS, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING,
                                     G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_DOUBLE,
                                     G_TYPE_DOUBLE, G_TYPE_STRING, G_TYPE_DOUBLE);
}

/* "before: PATH": the path is known once loading starts, after the page is made. */
static void update_titles(GvCompare *self)
{
    for (int i = 0; i < 2; i++) {
        g_autofree char *t = g_strdup_printf("%s: %s", i ? "after" : "before", gv_trace_model_path(self->models[i]));
        gtk_label_set_text(GTK_LABEL(self->titles[i]), t);
        g_autofree char *base = g_path_get_basename(gv_trace_model_path(self->models[i]));
        g_auto(GStrv) parts = g_strsplit(base, "_", -1);
        g_autofree char *shown = g_strjoinv("__", parts); /* a header's label reads _ as a mnemonic */
        g_autofree char *h = g_strdup_printf("%s (%s)", i ? "after" : "before", shown);
        if (self->heads[i])
            gtk_tree_view_column_set_title(self->heads[i], h);
    }
}

static GtkWidget *titled(const char *title, GtkWidget *child, GtkWidget **out_label)
{
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
    GtkWidget *label = gtk_label_new(title);
    if (out_label)
        *out_label = label;
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_START);
    gtk_box_pack_start(GTK_BOX(box), label, FALSE, FALSE, 2);
    gtk_box_pack_start(GTK_BOX(box), child, TRUE, TRUE, 0);
    return box;
}

GtkWidget *gv_compare_new(GvTraceModel *before, GvTraceModel *after)
{
    g_return_val_if_fail(GV_IS_TRACE_MODEL(before) && GV_IS_TRACE_MODEL(after), NULL);
    GvCompare *self = g_object_new(GV_TYPE_COMPARE, NULL);
    GvTraceModel *ms[2] = {before, after};
    GtkWidget *pair = gtk_paned_new(GTK_ORIENTATION_VERTICAL);
    for (int i = 0; i < 2; i++) {
        self->models[i] = g_object_ref(ms[i]);
        self->timelines[i] = GV_TIMELINE(gv_timeline_new());
        gv_timeline_set_model(self->timelines[i], ms[i]);
        g_signal_connect(self->timelines[i], "view-changed", G_CALLBACK(on_view_changed), self);
        g_signal_connect(ms[i], "analysed", G_CALLBACK(on_analysed), self);
        g_signal_connect_swapped(ms[i], "notify::path", G_CALLBACK(update_titles), self);
        GtkWidget *t = titled("", GTK_WIDGET(self->timelines[i]), &self->titles[i]);
        if (i == 0)
            gtk_paned_pack1(GTK_PANED(pair), t, TRUE, FALSE);
        else
            gtk_paned_pack2(GTK_PANED(pair), t, TRUE, FALSE);
    }
    GtkWidget *tree = self->tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(self->store));
    static const struct { const char *head; int text, sort; } cols[] = {
        {"metric", COL_METRIC, COL_METRIC}, {"before", COL_BEFORE, -1}, {"after", COL_AFTER, -1},
        {"change", COL_ABS_TEXT, COL_ABS}, {"relative", COL_CHANGE, COL_REL}, {"verdict", COL_VERDICT, COL_VERDICT},
        {"95% interval", COL_INTERVAL, COL_LO}};
    for (size_t c = 0; c < G_N_ELEMENTS(cols); c++) {
        GtkCellRenderer *cell = gtk_cell_renderer_text_new();
        GtkTreeViewColumn *col = gtk_tree_view_column_new_with_attributes(cols[c].head, cell, "text", cols[c].text,
                                                                          NULL);
        if (cols[c].text == COL_CHANGE || cols[c].text == COL_VERDICT)
            gtk_tree_view_column_add_attribute(col, cell, "foreground", COL_COLOR);
        if (cols[c].sort >= 0)
            gtk_tree_view_column_set_sort_column_id(col, cols[c].sort);
        gtk_tree_view_column_set_resizable(col, TRUE);
        if (c == 1 || c == 2)
            self->heads[c - 1] = col;
        gtk_tree_view_append_column(GTK_TREE_VIEW(tree), col);
    }
    g_signal_connect(tree, "row-activated", G_CALLBACK(on_row), self);
    GtkWidget *sw = gtk_scrolled_window_new(NULL, NULL);
    gtk_container_add(GTK_CONTAINER(sw), tree);
    gtk_widget_set_size_request(sw, -1, 200);
    gtk_paned_pack1(GTK_PANED(self), pair, TRUE, FALSE);
    gtk_paned_pack2(GTK_PANED(self),
                    titled(TABLE_TITLE, sw, &self->table_title), TRUE, FALSE);
    update_titles(self);
    on_analysed(before, self); /* both may be in already */
    return GTK_WIDGET(self);
}
