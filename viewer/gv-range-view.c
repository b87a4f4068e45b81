/* gv-range-view.c: the range statistics table (see gv-range-view.h). The
 * store keeps numbers, not text, so a click on a header sorts by value;
 * cell functions format them. */
#include "gv-range-view.h"

struct _GvRangeView {
    GtkBox parent_instance;
    GtkWidget *summary, *tree;
    GtkListStore *store;
};

G_DEFINE_TYPE(GvRangeView, gv_range_view, GTK_TYPE_BOX)

static void time_cell(GtkTreeViewColumn *col, GtkCellRenderer *cell, GtkTreeModel *model, GtkTreeIter *it,
                      gpointer column)
{
    GValue v = G_VALUE_INIT;
    gtk_tree_model_get_value(model, it, GPOINTER_TO_INT(column), &v);
    double ns = G_VALUE_HOLDS_INT64(&v) ? (double)g_value_get_int64(&v) : g_value_get_double(&v);
    char buf[40];
    g_object_set(cell, "text", gt_fmt_ns(buf, sizeof buf, ns), NULL);
    g_value_unset(&v);
}

static void share_cell(GtkTreeViewColumn *col, GtkCellRenderer *cell, GtkTreeModel *model, GtkTreeIter *it,
                       gpointer unused)
{
    double share = 0;
    gtk_tree_model_get(model, it, GV_RANGE_COL_SHARE, &share, -1);
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
    g_object_set(cell, "text", buf, NULL);
}

void gv_range_view_clear(GvRangeView *self)
{
    g_return_if_fail(GV_IS_RANGE_VIEW(self));
    gtk_list_store_clear(self->store);
    gtk_label_set_text(GTK_LABEL(self->summary), "");
}

void gv_range_view_show(GvRangeView *self, GvTraceModel *m, int64_t from_ns, int64_t to_ns)
{
    g_return_if_fail(GV_IS_RANGE_VIEW(self) && GV_IS_TRACE_MODEL(m));
    g_autoptr(GvRangeStats) s = gv_range_stats_compute(m, from_ns, to_ns);
    gtk_list_store_clear(self->store);
    for (size_t i = 0; i < s->n_rows; i++) {
        const GvRangeRow *r = &s->rows[i];
        gtk_list_store_insert_with_values(self->store, NULL, -1, GV_RANGE_COL_LANE, r->lane, GV_RANGE_COL_NAME,
                                          r->name, GV_RANGE_COL_COUNT, (gint64)r->count, GV_RANGE_COL_TOTAL,
                                          (gint64)r->total_ns, GV_RANGE_COL_SELF, (gint64)r->self_ns,
                                          GV_RANGE_COL_AVG, r->count ? (double)r->total_ns / r->count : 0.0,
                                          GV_RANGE_COL_SHARE, r->share, -1);
    }
    int64_t start = 0, end = 0;
    gv_trace_model_span(m, &start, &end);
    char d[40], a[40], b[40];
    g_autofree char *line = g_strdup_printf(
        "range %s, from %s to %s: %zu rows (drag on the time axis or shift+drag to select; z zooms, Escape clears)",
        gt_fmt_ns(d, sizeof d, (double)s->to_ns - (double)s->from_ns),
        gt_fmt_ns(a, sizeof a, (double)s->from_ns - (double)start), gt_fmt_ns(b, sizeof b, (double)s->to_ns - (double)start),
        s->n_rows);
    gtk_label_set_text(GTK_LABEL(self->summary), line);
}

GtkTreeModel *gv_range_view_get_model(GvRangeView *self) { return GTK_TREE_MODEL(self->store); }
GtkTreeView *gv_range_view_get_tree(GvRangeView *self) { return GTK_TREE_VIEW(self->tree); }
const char *gv_range_view_get_summary(GvRangeView *self) { return gtk_label_get_text(GTK_LABEL(self->summary)); }

static void gv_range_view_dispose(GObject *obj)
{
    g_clear_object(&GV_RANGE_VIEW(obj)->store);
    G_OBJECT_CLASS(gv_range_view_parent_class)->dispose(obj);
}

static void gv_range_view_class_init(GvRangeViewClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = gv_range_view_dispose;
}

static void gv_range_view_init(GvRangeView *self)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    self->store = gtk_list_store_new(GV_RANGE_N_COLS, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_INT64, G_TYPE_INT64,
                                     G_TYPE_INT64, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
    gtk_tree_sortable_set_sort_column_id(GTK_TREE_SORTABLE(self->store), GV_RANGE_COL_TOTAL, GTK_SORT_DESCENDING);
    self->tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(self->store));
    static const char *const heads[] = {"lane", "name", "count", "total", "self", "average", "share"};
    for (int c = 0; c < GV_RANGE_N_COLS; c++) {
        GtkCellRenderer *cell = gtk_cell_renderer_text_new();
        GtkTreeViewColumn *col = gtk_tree_view_column_new();
        gtk_tree_view_column_set_title(col, heads[c]);
        gtk_tree_view_column_pack_start(col, cell, TRUE);
        if (c <= GV_RANGE_COL_COUNT) {
            gtk_tree_view_column_add_attribute(col, cell, "text", c);
        } else if (c == GV_RANGE_COL_SHARE) {
            gtk_tree_view_column_set_cell_data_func(col, cell, share_cell, NULL, NULL);
        } else {
            gtk_tree_view_column_set_cell_data_func(col, cell, time_cell, GINT_TO_POINTER(c), NULL);
        }
        if (c >= GV_RANGE_COL_COUNT)
            g_object_set(cell, "xalign", 1.0, NULL);
        if (c == GV_RANGE_COL_NAME) {
            g_object_set(cell, "ellipsize", PANGO_ELLIPSIZE_END, NULL);
            gtk_tree_view_column_set_expand(col, TRUE);
        }
        gtk_tree_view_column_set_sort_column_id(col, c);
        gtk_tree_view_column_set_resizable(col, TRUE);
        gtk_tree_view_append_column(GTK_TREE_VIEW(self->tree), col);
    }
    self->summary = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(self->summary), 0);
    gtk_label_set_ellipsize(GTK_LABEL(self->summary), PANGO_ELLIPSIZE_END);
    GtkWidget *sw = gtk_scrolled_window_new(NULL, NULL);
    gtk_container_add(GTK_CONTAINER(sw), self->tree);
    gtk_widget_set_size_request(sw, -1, 150);
    gtk_box_pack_start(GTK_BOX(self), self->summary, FALSE, FALSE, 2);
    gtk_box_pack_start(GTK_BOX(self), sw, TRUE, TRUE, 0);
    gtk_widget_show_all(sw);
    gtk_widget_show(self->summary);
}

GtkWidget *gv_range_view_new(void)
{
    return g_object_new(GV_TYPE_RANGE_VIEW, NULL);
}
