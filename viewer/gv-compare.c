/* gv-compare.c: keeps the two timelines' views in step and fills the diff
 * table once both analyses are in. Then the after trace's view draws through
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
       COL_REL, COL_NAME, N_COLS };

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
    char x[40], y[40], c[40], dabs[48], iv[64];
    const char *verdict = r->presence > 0 ? "new" : r->presence < 0 ? "gone" : r->too_few ? "too few samples"
                        : r->verdict > 0 ? "better" : r->verdict < 0 ? "worse" : "same";
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
    if (isnan(r->lo) || isnan(r->hi))
        iv[0] = 0;
    else
        snprintf(iv, sizeof iv, "[%+.1f%%, %+.1f%%]", 100 * r->lo, 100 * r->hi);
    const char *colon = strchr(r->metric, ':');
    GtkTreeIter it;
    gtk_list_store_append(self->store, &it);
    gtk_list_store_set(self->store, &it, COL_METRIC, r->metric, COL_BEFORE,
                       r->presence > 0 ? "-" : gt_diff_cell(x, sizeof x, r->unit, r->before), COL_AFTER,
                       r->presence < 0 ? "-" : gt_diff_cell(y, sizeof y, r->unit, r->after), COL_ABS_TEXT, dabs,
                       COL_CHANGE, c, COL_VERDICT, verdict, COL_INTERVAL, iv, COL_COLOR,
                       r->verdict > 0 ? "#1a7f37" : r->verdict < 0 ? "#b02020" : "#555555", COL_ABS, d, COL_REL,
                       rel, COL_NAME, colon ? colon + 1 + strspn(colon + 1, " ") : "", -1);
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
    gt_diff *d = NULL;
    if (gt_diff_compute(&d, a, b) == 0) {
        for (size_t i = 0; i < d->n_rows; i++)
            add_row(self, &d->rows[i]);
        gt_diff_free(d);
    }
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
                                     G_TYPE_DOUBLE, G_TYPE_STRING);
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
        {"95% interval", COL_INTERVAL, -1}};
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
                    titled("diff (gtrace diff BEFORE AFTER): double-click a row to show it in both", sw, NULL), TRUE,
                    FALSE);
    update_titles(self);
    on_analysed(before, self); /* both may be in already */
    return GTK_WIDGET(self);
}
