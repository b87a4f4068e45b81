/* gv-top-view.c: the top kernels and ops table (see gv-top-view.h). The
 * counting walks every device and CPU-op lane once, on a GTask thread that
 * takes the model's lock one lane at a time, so drawing never waits long;
 * the store keeps numbers, and cell functions format them. */
#include "gv-top-view.h"

struct _GvTopView {
    GtkBox parent_instance;
    GtkWidget *tree;
    GtkListStore *store;
    GvTraceModel *model;
    GCancellable *cancel;
    gulong analysed_id;
};

G_DEFINE_TYPE(GvTopView, gv_top_view, GTK_TYPE_BOX)

enum { SIG_SHOW_ITEM, N_SIGNALS };
static guint signals[N_SIGNALS];

typedef struct top_row {
    uint32_t name;
    uint8_t kind;
    int64_t count, total_ns, max_ns;
    GvItemRef longest;
} top_row;

static gboolean counted_kind(GvItemKind k)
{
    return k == GV_ITEM_KERNEL || k == GV_ITEM_MEMCPY || k == GV_ITEM_MEMSET || k == GV_ITEM_CPU_OP;
}

/* Rows by name id: an array indexed by name, then only the names seen. */
static void count_rows(GTask *task, gpointer source, gpointer data, GCancellable *cancel)
{
    GvTraceModel *m = data;
    GArray *rows = g_array_new(FALSE, TRUE, sizeof(top_row));
    GHashTable *at = g_hash_table_new(g_direct_hash, g_direct_equal); /* name + 1 -> row + 1 */
    gv_trace_model_lock(m);
    size_t n_tracks = gv_trace_model_n_tracks(m);
    gv_trace_model_unlock(m);
    for (size_t ti = 0; ti < n_tracks && !g_cancellable_is_cancelled(cancel); ti++) {
        gv_trace_model_lock(m);
        const GvTrack *tr = gv_trace_model_track(m, ti);
        for (size_t li = 0; tr && li < tr->n_lanes; li++) {
            const GvLane *l = tr->lanes[li];
            for (size_t k = 0; counted_kind(l->kind) && k < l->n; k++) {
                const GvItem *it = &l->items[k];
                if (!counted_kind((GvItemKind)it->kind))
                    continue;
                gpointer key = GUINT_TO_POINTER(it->name + 1);
                guint r = GPOINTER_TO_UINT(g_hash_table_lookup(at, key));
                if (!r) {
                    top_row nr = {.name = it->name, .kind = it->kind, .max_ns = -1};
                    g_array_append_val(rows, nr);
                    r = rows->len;
                    g_hash_table_insert(at, key, GUINT_TO_POINTER(r));
                }
                top_row *row = &g_array_index(rows, top_row, r - 1);
                int64_t d = it->end_ns - it->start_ns;
                row->count++;
                row->total_ns += d;
                if (d > row->max_ns) {
                    row->max_ns = d;
                    row->longest = (GvItemRef){ti, li, k};
                }
            }
        }
        gv_trace_model_unlock(m);
    }
    g_hash_table_unref(at);
    g_task_return_pointer(task, rows, (GDestroyNotify)g_array_unref);
}

static void on_counted(GObject *source, GAsyncResult *res, gpointer p)
{
    GArray *rows = g_task_propagate_pointer(G_TASK(res), NULL);
    if (!rows) /* cancelled: the view may be gone */
        return;
    GvTopView *self = p;
    static const char *const kinds[] = {"kernel", "memcpy", "memset", "CPU op"};
    int64_t all = 0;
    for (guint i = 0; i < rows->len; i++)
        all += g_array_index(rows, top_row, i).total_ns;
    gtk_list_store_clear(self->store);
    gv_trace_model_lock(self->model);
    for (guint i = 0; i < rows->len; i++) {
        const top_row *r = &g_array_index(rows, top_row, i);
        gtk_list_store_insert_with_values(
            self->store, NULL, -1, GV_TOP_COL_NAME, gv_trace_model_name(self->model, r->name), GV_TOP_COL_KIND,
            kinds[r->kind <= GV_ITEM_CPU_OP ? r->kind : 0], GV_TOP_COL_COUNT, (gint64)r->count, GV_TOP_COL_TOTAL,
            (gint64)r->total_ns, GV_TOP_COL_AVG, (gint64)(r->total_ns / (r->count ? r->count : 1)), GV_TOP_COL_MAX,
            (gint64)r->max_ns, GV_TOP_COL_SHARE, all > 0 ? (double)r->total_ns / (double)all : 0.0,
            GV_TOP_COL_NAME_ID, (guint64)r->name, GV_TOP_COL_TRACK, (guint64)r->longest.track, GV_TOP_COL_LANE,
            (guint64)r->longest.lane, GV_TOP_COL_INDEX, (guint64)r->longest.index, -1);
    }
    gv_trace_model_unlock(self->model);
    g_array_unref(rows);
}

static void recount(GvTopView *self)
{
    if (self->cancel) {
        g_cancellable_cancel(self->cancel);
        g_clear_object(&self->cancel);
    }
    gtk_list_store_clear(self->store);
    if (!self->model || !gv_trace_model_is_analysed(self->model))
        return;
    self->cancel = g_cancellable_new();
    GTask *task = g_task_new(NULL, self->cancel, on_counted, self);
    g_task_set_task_data(task, g_object_ref(self->model), g_object_unref);
    g_task_set_return_on_cancel(task, TRUE);
    g_task_run_in_thread(task, count_rows);
    g_object_unref(task);
}

void gv_top_view_set_model(GvTopView *self, GvTraceModel *model)
{
    g_return_if_fail(GV_IS_TOP_VIEW(self));
    if (self->model) {
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_clear_object(&self->model);
    }
    if (model) {
        self->model = g_object_ref(model);
        self->analysed_id = g_signal_connect_swapped(model, "analysed", G_CALLBACK(recount), self);
    }
    recount(self);
}

GtkTreeModel *gv_top_view_get_model(GvTopView *self) { return GTK_TREE_MODEL(self->store); }
GtkTreeView *gv_top_view_get_tree(GvTopView *self) { return GTK_TREE_VIEW(self->tree); }

static void on_row_activated(GtkTreeView *tv, GtkTreePath *path, GtkTreeViewColumn *col, gpointer p)
{
    GvTopView *self = p;
    GtkTreeIter it;
    if (!gtk_tree_model_get_iter(GTK_TREE_MODEL(self->store), &it, path))
        return;
    guint64 name = 0, track = 0, lane = 0, index = 0;
    gtk_tree_model_get(GTK_TREE_MODEL(self->store), &it, GV_TOP_COL_NAME_ID, &name, GV_TOP_COL_TRACK, &track,
                       GV_TOP_COL_LANE, &lane, GV_TOP_COL_INDEX, &index, -1);
    GvItemRef ref = {track, lane, index};
    g_signal_emit(self, signals[SIG_SHOW_ITEM], 0, &ref, (guint)name);
}

static void time_cell(GtkTreeViewColumn *col, GtkCellRenderer *cell, GtkTreeModel *model, GtkTreeIter *it,
                      gpointer column)
{
    gint64 ns = 0;
    gtk_tree_model_get(model, it, GPOINTER_TO_INT(column), &ns, -1);
    char buf[40];
    g_object_set(cell, "text", gt_fmt_ns(buf, sizeof buf, (double)ns), NULL);
}

static void share_cell(GtkTreeViewColumn *col, GtkCellRenderer *cell, GtkTreeModel *model, GtkTreeIter *it,
                       gpointer unused)
{
    double share = 0;
    gtk_tree_model_get(model, it, GV_TOP_COL_SHARE, &share, -1);
    char buf[32];
    snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
    g_object_set(cell, "text", buf, NULL);
}

static void gv_top_view_dispose(GObject *obj)
{
    GvTopView *self = GV_TOP_VIEW(obj);
    if (self->cancel) {
        g_cancellable_cancel(self->cancel);
        g_clear_object(&self->cancel);
    }
    if (self->model) {
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_clear_object(&self->model);
    }
    g_clear_object(&self->store);
    G_OBJECT_CLASS(gv_top_view_parent_class)->dispose(obj);
}

static void gv_top_view_class_init(GvTopViewClass *klass)
{
    G_OBJECT_CLASS(klass)->dispose = gv_top_view_dispose;
    /* (const GvItemRef *longest, guint name) */
    signals[SIG_SHOW_ITEM] = g_signal_new("show-item", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 2, G_TYPE_POINTER, G_TYPE_UINT);
}

static void gv_top_view_init(GvTopView *self)
{
    gtk_orientable_set_orientation(GTK_ORIENTABLE(self), GTK_ORIENTATION_VERTICAL);
    self->store = gtk_list_store_new(GV_TOP_N_COLS, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_INT64, G_TYPE_INT64,
                                     G_TYPE_INT64, G_TYPE_INT64, G_TYPE_DOUBLE, G_TYPE_UINT64, G_TYPE_UINT64,
                                     G_TYPE_UINT64, G_TYPE_UINT64);
    gtk_tree_sortable_set_sort_column_id(GTK_TREE_SORTABLE(self->store), GV_TOP_COL_TOTAL, GTK_SORT_DESCENDING);
    self->tree = gtk_tree_view_new_with_model(GTK_TREE_MODEL(self->store));
    gtk_tree_view_set_activate_on_single_click(GTK_TREE_VIEW(self->tree), TRUE);
    gtk_widget_set_tooltip_text(self->tree, "click a row to show its longest instance; n/p: the next and previous");
    g_signal_connect(self->tree, "row-activated", G_CALLBACK(on_row_activated), self);
    static const char *const heads[] = {"name", "kind", "count", "total", "average", "longest", "share"};
    for (int c = 0; c <= GV_TOP_COL_SHARE; c++) {
        GtkCellRenderer *cell = gtk_cell_renderer_text_new();
        GtkTreeViewColumn *col = gtk_tree_view_column_new();
        gtk_tree_view_column_set_title(col, heads[c]);
        gtk_tree_view_column_pack_start(col, cell, TRUE);
        if (c <= GV_TOP_COL_COUNT)
            gtk_tree_view_column_add_attribute(col, cell, "text", c);
        else if (c == GV_TOP_COL_SHARE)
            gtk_tree_view_column_set_cell_data_func(col, cell, share_cell, NULL, NULL);
        else
            gtk_tree_view_column_set_cell_data_func(col, cell, time_cell, GINT_TO_POINTER(c), NULL);
        if (c >= GV_TOP_COL_COUNT)
            g_object_set(cell, "xalign", 1.0, NULL);
        if (c == GV_TOP_COL_NAME) {
            g_object_set(cell, "ellipsize", PANGO_ELLIPSIZE_END, NULL);
            gtk_tree_view_column_set_expand(col, TRUE);
        }
        gtk_tree_view_column_set_sort_column_id(col, c);
        gtk_tree_view_column_set_resizable(col, TRUE);
        gtk_tree_view_append_column(GTK_TREE_VIEW(self->tree), col);
    }
    GtkWidget *sw = gtk_scrolled_window_new(NULL, NULL);
    gtk_container_add(GTK_CONTAINER(sw), self->tree);
    gtk_widget_set_size_request(sw, -1, 120);
    gtk_box_pack_start(GTK_BOX(self), sw, TRUE, TRUE, 0);
    gtk_widget_show_all(sw);
}

GtkWidget *gv_top_view_new(void)
{
    return g_object_new(GV_TYPE_TOP_VIEW, NULL);
}
