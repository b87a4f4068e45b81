/* gv-timeline.c: input and redraws of the timeline (see gv-timeline.h).
 * Bindings: wheel zooms at the pointer, shift+wheel scrolls the rows, a
 * horizontal wheel or a drag pans, pinch zooms; a drag on the time axis
 * (or shift+drag anywhere) selects a time range ("range-changed": the
 * window shows its statistics) and z zooms to it (or to the selected item); a click selects and
 * shows the related launch or kernel (outlined, an arrow from the call to
 * the device work); double-click zooms to the item; keys:
 * + - (or w s) zoom, Left Right (a d) pan, Up Down scroll, f or Home fit,
 * n p next/previous item in the selected lane, r jump to the related item,
 * Escape clears. Until the user moves the view it follows the loaded span,
 * then the steps once the analysis has them; f shows the whole trace. */
#include "gv-timeline.h"

#include <math.h>

struct _GvTimeline {
    GtkDrawingArea parent_instance;
    GvTraceModel *model;
    gulong updated_id, analysed_id;
    GvView view;
    gboolean follow_span; /* fit on each update until the user moves the view */
    gboolean fit_steps;   /* that fit shows the steps (the first view), not the whole trace (f) */
    gboolean dragging, drag_moved, range_drag;
    double drag_x, drag_y;
    GtkGesture *zoom_gesture;
    guint8 *match; /* the view's names to outline (view.match) */
    guint walk_name; /* n/p go over this name's items while one is selected (G_MAXUINT: over the lane) */
    double pinch_last;
};

G_DEFINE_TYPE(GvTimeline, gv_timeline, GTK_TYPE_DRAWING_AREA)

enum { SIG_VIEW_CHANGED, SIG_SELECTION_CHANGED, SIG_RANGE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void clamp_scroll(GvTimeline *self)
{
    GvView *v = &self->view;
    if (!self->model) {
        v->scroll_y = 0;
        return;
    }
    double max = gv_view_content_height(self->model, v) - v->height;
    if (v->scroll_y > max)
        v->scroll_y = max;
    if (v->scroll_y < 0)
        v->scroll_y = 0;
}

void gv_timeline_view_changed(GvTimeline *self)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    clamp_scroll(self);
    gtk_widget_queue_draw(GTK_WIDGET(self));
    g_signal_emit(self, signals[SIG_VIEW_CHANGED], 0);
}

void gv_timeline_stop_following(GvTimeline *self)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    self->follow_span = FALSE;
}

gboolean gv_timeline_get_range(GvTimeline *self, int64_t *out_from_ns, int64_t *out_to_ns)
{
    g_return_val_if_fail(GV_IS_TIMELINE(self), FALSE);
    const GvView *v = &self->view;
    if (!v->has_range || v->range_from_ns == v->range_to_ns)
        return FALSE;
    *out_from_ns = MIN(v->range_from_ns, v->range_to_ns);
    *out_to_ns = MAX(v->range_from_ns, v->range_to_ns);
    return TRUE;
}

/* Drops the range, saying so when there was one. */
static void clear_range(GvTimeline *self)
{
    gboolean had = self->view.has_range;
    self->view.has_range = FALSE;
    if (had)
        g_signal_emit(self, signals[SIG_RANGE_CHANGED], 0);
}

static void user_moved(GvTimeline *self)
{
    self->follow_span = FALSE;
    gv_timeline_view_changed(self);
}

static gboolean on_draw(GtkWidget *w, cairo_t *cr)
{
    GvTimeline *self = GV_TIMELINE(w);
    self->view.width = gtk_widget_get_allocated_width(w);
    self->view.height = gtk_widget_get_allocated_height(w);
    if (!self->model) {
        cairo_set_source_rgb(cr, 1, 1, 1);
        cairo_paint(cr);
        return TRUE;
    }
    gv_render_timeline(cr, self->model, &self->view);
    return TRUE;
}

/* The fit the view follows until the user moves it. */
static void follow_fit(GvTimeline *self)
{
    if (self->fit_steps)
        gv_view_fit_steps(&self->view, self->model);
    else
        gv_view_fit(&self->view, self->model);
}

static void on_size_allocate(GtkWidget *w, GtkAllocation *a)
{
    GvTimeline *self = GV_TIMELINE(w);
    GTK_WIDGET_CLASS(gv_timeline_parent_class)->size_allocate(w, a);
    self->view.width = a->width;
    self->view.height = a->height;
    if (self->follow_span && self->model)
        follow_fit(self);
}

static void on_updated(GvTraceModel *m, gpointer p)
{
    GvTimeline *self = p;
    if (self->follow_span)
        follow_fit(self);
    gv_timeline_view_changed(self);
}

/* The analysis brings the steps: the first view moves to them. */
static void on_analysed(GvTraceModel *m, gpointer p)
{
    GvTimeline *self = p;
    if (self->follow_span) {
        follow_fit(self);
        gv_timeline_view_changed(self);
    }
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

void gv_timeline_set_model(GvTimeline *self, GvTraceModel *model)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    if (self->model) {
        g_signal_handler_disconnect(self->model, self->updated_id);
        g_signal_handler_disconnect(self->model, self->analysed_id);
        g_clear_object(&self->model);
    }
    self->view.has_selection = self->view.has_related = self->view.has_range = FALSE;
    self->follow_span = self->fit_steps = TRUE;
    if (model) {
        self->model = g_object_ref(model);
        self->updated_id = g_signal_connect(model, "updated", G_CALLBACK(on_updated), self);
        self->analysed_id = g_signal_connect(model, "analysed", G_CALLBACK(on_analysed), self);
        follow_fit(self);
    }
    gtk_widget_queue_draw(GTK_WIDGET(self));
}

GvTraceModel *gv_timeline_get_model(GvTimeline *self) { return self->model; }
GvView *gv_timeline_get_view(GvTimeline *self) { return &self->view; }

void gv_timeline_fit(GvTimeline *self)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    if (!self->model)
        return;
    gv_view_fit(&self->view, self->model);
    self->follow_span = TRUE;
    self->fit_steps = FALSE;
    gv_timeline_view_changed(self);
}

void gv_timeline_show_range(GvTimeline *self, int64_t from_ns, int64_t to_ns)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    gv_view_show_range(&self->view, from_ns, to_ns);
    user_moved(self);
}

static gboolean item_of(GvTimeline *self, const GvItemRef *r, GvItem *out)
{
    gboolean ok = FALSE;
    gv_trace_model_lock(self->model);
    const GvTrack *tr = gv_trace_model_track(self->model, r->track);
    if (tr && r->lane < tr->n_lanes && r->index < tr->lanes[r->lane]->n) {
        *out = tr->lanes[r->lane]->items[r->index];
        ok = TRUE;
    }
    gv_trace_model_unlock(self->model);
    return ok;
}

gboolean gv_timeline_zoom_to_selection(GvTimeline *self)
{
    g_return_val_if_fail(GV_IS_TIMELINE(self), FALSE);
    GvView *v = &self->view;
    GvItem it;
    if (v->has_range && v->range_from_ns != v->range_to_ns) {
        gv_timeline_show_range(self, MIN(v->range_from_ns, v->range_to_ns), MAX(v->range_from_ns, v->range_to_ns));
        clear_range(self);
        return TRUE;
    }
    if (v->has_selection && item_of(self, &v->selection, &it)) {
        gv_timeline_show_range(self, it.start_ns, it.end_ns);
        return TRUE;
    }
    return FALSE;
}

/* Scrolls so the item's lane is on screen and its start is in view. */
static void reveal(GvTimeline *self, const GvItemRef *r)
{
    GvView *v = &self->view;
    GvItem it;
    if (!item_of(self, r, &it))
        return;
    if (it.start_ns < gv_view_time(v, GV_LABEL_W) || it.start_ns > gv_view_end(v))
        v->t0_ns = gv_view_axis(v, it.start_ns) - (int64_t)((v->width - GV_LABEL_W) * v->ns_per_px / 3);
    double y = gv_view_lane_y(self->model, v, r->track, r->lane);
    if (y >= 0 && (y < GV_AXIS_H + GV_RULER_H || y + GV_LANE_H > v->height))
        v->scroll_y += y - v->height / 2.0;
}

void gv_timeline_select(GvTimeline *self, const GvItemRef *ref)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    GvView *v = &self->view;
    v->has_selection = v->has_related = FALSE;
    if (ref && self->model) {
        v->selection = *ref;
        v->has_selection = TRUE;
        gv_trace_model_lock(self->model);
        v->has_related = gv_trace_model_find_related(self->model, ref, &v->related);
        gv_trace_model_unlock(self->model);
    }
    g_signal_emit(self, signals[SIG_SELECTION_CHANGED], 0);
    gv_timeline_view_changed(self);
}

gboolean gv_timeline_get_selection(GvTimeline *self, GvItemRef *out)
{
    if (self->view.has_selection)
        *out = self->view.selection;
    return self->view.has_selection;
}

gboolean gv_timeline_get_related(GvTimeline *self, GvItemRef *out)
{
    if (self->view.has_related)
        *out = self->view.related;
    return self->view.has_related;
}

gboolean gv_timeline_search(GvTimeline *self, const char *text, gboolean backwards)
{
    g_return_val_if_fail(GV_IS_TIMELINE(self), FALSE);
    if (!self->model)
        return FALSE;
    GvView *v = &self->view;
    GvItem cur;
    int64_t from = v->has_selection && item_of(self, &v->selection, &cur) ? cur.start_ns
                   : backwards                                          ? gv_view_end(v)
                                                                        : gv_view_time(v, GV_LABEL_W) - 1;
    GvItemRef r;
    gv_trace_model_lock(self->model);
    gboolean found = gv_trace_model_search(self->model, text, from, backwards, &r);
    gv_trace_model_unlock(self->model);
    if (!found)
        return FALSE;
    reveal(self, &r);
    self->follow_span = FALSE;
    gv_timeline_select(self, &r);
    return TRUE;
}

size_t gv_timeline_set_search(GvTimeline *self, const char *text, size_t *out_rank)
{
    g_return_val_if_fail(GV_IS_TIMELINE(self), 0);
    g_clear_pointer(&self->match, g_free);
    self->view.match = NULL;
    self->view.n_match = 0;
    if (out_rank)
        *out_rank = 0;
    if (!self->model || !text || !*text) {
        gtk_widget_queue_draw(GTK_WIDGET(self));
        return 0;
    }
    gv_trace_model_lock(self->model);
    self->match = gv_trace_model_match_names(self->model, text, &self->view.n_match);
    self->view.match = self->match;
    size_t n = gv_trace_model_count_matches(self->model, self->match, self->view.n_match,
                                            self->view.has_selection ? &self->view.selection : NULL, out_rank);
    gv_trace_model_unlock(self->model);
    gtk_widget_queue_draw(GTK_WIDGET(self));
    return n;
}

gboolean gv_timeline_export_png(GvTimeline *self, const char *path, GError **error)
{
    g_return_val_if_fail(GV_IS_TIMELINE(self), FALSE);
    GvView v = self->view;
    if (v.width <= 0 || v.height <= 0) {
        v.width = 1200;
        v.height = 700;
    }
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, v.width, v.height);
    cairo_t *cr = cairo_create(s);
    if (self->model)
        gv_render_timeline(cr, self->model, &v);
    cairo_destroy(cr);
    gboolean ok = gv_write_png(s, path, error);
    cairo_surface_destroy(s);
    return ok;
}

/* ---- input ----------------------------------------------------------------------- */

static gboolean on_scroll(GtkWidget *w, GdkEventScroll *e)
{
    GvTimeline *self = GV_TIMELINE(w);
    double dx = 0, dy = 0;
    switch (e->direction) {
    case GDK_SCROLL_UP: dy = -1; break;
    case GDK_SCROLL_DOWN: dy = 1; break;
    case GDK_SCROLL_LEFT: dx = -1; break;
    case GDK_SCROLL_RIGHT: dx = 1; break;
    case GDK_SCROLL_SMOOTH: gdk_event_get_scroll_deltas((GdkEvent *)e, &dx, &dy); break;
    default: break;
    }
    if (e->state & GDK_SHIFT_MASK) {
        self->view.scroll_y += 40 * (dy != 0 ? dy : dx);
    } else {
        if (dx != 0)
            gv_view_pan(&self->view, -60 * dx);
        if (dy != 0)
            gv_view_zoom(&self->view, pow(1.25, -dy), e->x);
    }
    user_moved(self);
    return TRUE;
}

static gboolean on_press(GtkWidget *w, GdkEventButton *e)
{
    GvTimeline *self = GV_TIMELINE(w);
    gtk_widget_grab_focus(w);
    if (e->button != 1)
        return FALSE;
    if (e->type == GDK_2BUTTON_PRESS) {
        GvItemRef r;
        if (self->model && gv_view_hit(self->model, &self->view, e->x, e->y, &r, NULL)) {
            gv_timeline_select(self, &r);
            gv_timeline_zoom_to_selection(self);
        }
        return TRUE;
    }
    self->dragging = TRUE;
    self->drag_moved = FALSE;
    /* On the axis (and the steps' ruler) a drag selects, as in Perfetto; below it pans. */
    self->range_drag = (e->state & GDK_SHIFT_MASK) != 0 || (e->y < GV_AXIS_H + GV_RULER_H && e->x >= GV_LABEL_W);
    self->drag_x = e->x;
    self->drag_y = e->y;
    if (self->range_drag) {
        self->view.has_range = TRUE;
        self->view.range_from_ns = self->view.range_to_ns = gv_view_time(&self->view, e->x);
    }
    return TRUE;
}

static gboolean on_motion(GtkWidget *w, GdkEventMotion *e)
{
    GvTimeline *self = GV_TIMELINE(w);
    if (!self->dragging)
        return FALSE;
    if (fabs(e->x - self->drag_x) + fabs(e->y - self->drag_y) >= 3)
        self->drag_moved = TRUE;
    if (!self->drag_moved)
        return TRUE;
    if (self->range_drag) {
        self->view.range_to_ns = gv_view_time(&self->view, e->x);
        gtk_widget_queue_draw(w);
        return TRUE;
    }
    gv_view_pan(&self->view, e->x - self->drag_x);
    self->view.scroll_y -= e->y - self->drag_y;
    self->drag_x = e->x;
    self->drag_y = e->y;
    user_moved(self);
    return TRUE;
}

static gboolean on_release(GtkWidget *w, GdkEventButton *e)
{
    GvTimeline *self = GV_TIMELINE(w);
    if (e->button != 1 || !self->dragging)
        return FALSE;
    self->dragging = FALSE;
    if (self->drag_moved) {
        if (self->range_drag)
            g_signal_emit(self, signals[SIG_RANGE_CHANGED], 0);
        return TRUE;
    }
    clear_range(self);
    GvItemRef r;
    if (self->model && gv_view_hit(self->model, &self->view, e->x, e->y, &r, NULL))
        gv_timeline_select(self, &r);
    else
        gv_timeline_select(self, NULL);
    return TRUE;
}

void gv_timeline_walk_name(GvTimeline *self, guint name)
{
    g_return_if_fail(GV_IS_TIMELINE(self));
    self->walk_name = name;
}

/* The next or previous item of the selected lane, or of the walked name
 * while the selection is one of its items. */
static void step_selection(GvTimeline *self, int dir)
{
    GvView *v = &self->view;
    if (!v->has_selection)
        return;
    GvItemRef r = v->selection;
    gv_trace_model_lock(self->model);
    const GvTrack *tr = gv_trace_model_track(self->model, r.track);
    size_t n = tr && r.lane < tr->n_lanes ? tr->lanes[r.lane]->n : 0;
    const GvItem *cur = r.index < n ? &tr->lanes[r.lane]->items[r.index] : NULL;
    if (cur && cur->name == self->walk_name) {
        gboolean found = gv_trace_model_next_named(self->model, self->walk_name, cur->start_ns, dir < 0, &r);
        gv_trace_model_unlock(self->model);
        if (!found)
            return;
        reveal(self, &r);
        self->follow_span = FALSE;
        gv_timeline_select(self, &r);
        return;
    }
    gv_trace_model_unlock(self->model);
    if ((dir < 0 && r.index == 0) || (dir > 0 && r.index + 1 >= n))
        return;
    r.index = dir < 0 ? r.index - 1 : r.index + 1;
    reveal(self, &r);
    self->follow_span = FALSE;
    gv_timeline_select(self, &r);
}

static gboolean on_key(GtkWidget *w, GdkEventKey *e)
{
    GvTimeline *self = GV_TIMELINE(w);
    GvView *v = &self->view;
    double mid = GV_LABEL_W + (v->width - GV_LABEL_W) / 2.0;
    double page = (v->width - GV_LABEL_W) / 4.0;
    if (!self->model)
        return FALSE;
    switch (e->keyval) {
    case GDK_KEY_plus: case GDK_KEY_equal: case GDK_KEY_KP_Add: case GDK_KEY_w:
        gv_view_zoom(v, 1.5, mid);
        break;
    case GDK_KEY_minus: case GDK_KEY_KP_Subtract: case GDK_KEY_s:
        gv_view_zoom(v, 1 / 1.5, mid);
        break;
    case GDK_KEY_Left: case GDK_KEY_a:
        gv_view_pan(v, page);
        break;
    case GDK_KEY_Right: case GDK_KEY_d:
        gv_view_pan(v, -page);
        break;
    case GDK_KEY_Up:
        v->scroll_y -= 3 * GV_LANE_H;
        break;
    case GDK_KEY_Down:
        v->scroll_y += 3 * GV_LANE_H;
        break;
    case GDK_KEY_f: case GDK_KEY_Home:
        gv_timeline_fit(self);
        return TRUE;
    case GDK_KEY_z:
        gv_timeline_zoom_to_selection(self);
        return TRUE;
    case GDK_KEY_n: case GDK_KEY_Tab:
        step_selection(self, 1);
        return TRUE;
    case GDK_KEY_p: case GDK_KEY_ISO_Left_Tab:
        step_selection(self, -1);
        return TRUE;
    case GDK_KEY_r:
        if (v->has_related) {
            GvItemRef r = v->related;
            reveal(self, &r);
            self->follow_span = FALSE;
            gv_timeline_select(self, &r);
        }
        return TRUE;
    case GDK_KEY_Escape:
        clear_range(self);
        gv_timeline_select(self, NULL);
        return TRUE;
    default:
        return FALSE;
    }
    user_moved(self);
    return TRUE;
}

static gboolean on_query_tooltip(GtkWidget *w, int x, int y, gboolean kb, GtkTooltip *tip)
{
    GvTimeline *self = GV_TIMELINE(w);
    GvItemRef r;
    size_t count = 0;
    if (!self->model || !gv_view_hit(self->model, &self->view, x, y, &r, &count))
        return FALSE;
    g_autofree char *text = count > 1 ? gv_trace_model_describe_run(self->model, &r, count)
                                      : gv_trace_model_describe(self->model, &r);
    gtk_tooltip_set_text(tip, text);
    return TRUE;
}

static void on_pinch_begin(GtkGesture *g, GdkEventSequence *seq, gpointer p)
{
    GV_TIMELINE(p)->pinch_last = 1.0;
}

static void on_pinch(GtkGestureZoom *g, double scale, gpointer p)
{
    GvTimeline *self = p;
    double cx, cy;
    if (!gtk_gesture_get_bounding_box_center(GTK_GESTURE(g), &cx, &cy))
        cx = self->view.width / 2.0;
    if (self->pinch_last > 0 && scale > 0)
        gv_view_zoom(&self->view, scale / self->pinch_last, cx);
    self->pinch_last = scale;
    user_moved(self);
}

static void gv_timeline_dispose(GObject *obj)
{
    GvTimeline *self = GV_TIMELINE(obj);
    gv_timeline_set_model(self, NULL);
    g_clear_object(&self->zoom_gesture);
    g_clear_pointer(&self->match, g_free);
    self->view.match = NULL;
    G_OBJECT_CLASS(gv_timeline_parent_class)->dispose(obj);
}

static void gv_timeline_class_init(GvTimelineClass *klass)
{
    GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
    G_OBJECT_CLASS(klass)->dispose = gv_timeline_dispose;
    wc->draw = on_draw;
    wc->size_allocate = on_size_allocate;
    wc->scroll_event = on_scroll;
    wc->button_press_event = on_press;
    wc->button_release_event = on_release;
    wc->motion_notify_event = on_motion;
    wc->key_press_event = on_key;
    wc->query_tooltip = on_query_tooltip;
    signals[SIG_VIEW_CHANGED] = g_signal_new("view-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                             NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_RANGE_CHANGED] = g_signal_new("range-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                              NULL, NULL, NULL, G_TYPE_NONE, 0);
    signals[SIG_SELECTION_CHANGED] = g_signal_new("selection-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST,
                                                  0, NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void gv_timeline_init(GvTimeline *self)
{
    GtkWidget *w = GTK_WIDGET(self);
    gv_view_init(&self->view, 800, 600);
    self->follow_span = TRUE;
    self->walk_name = G_MAXUINT;
    gtk_widget_set_can_focus(w, TRUE);
    gtk_widget_set_has_tooltip(w, TRUE);
    gtk_widget_add_events(w, GDK_SCROLL_MASK | GDK_SMOOTH_SCROLL_MASK | GDK_BUTTON_PRESS_MASK |
                                 GDK_BUTTON_RELEASE_MASK | GDK_POINTER_MOTION_MASK | GDK_KEY_PRESS_MASK |
                                 GDK_TOUCHPAD_GESTURE_MASK);
    gtk_widget_set_size_request(w, 400, 200);
    self->zoom_gesture = gtk_gesture_zoom_new(w);
    g_signal_connect(self->zoom_gesture, "begin", G_CALLBACK(on_pinch_begin), self);
    g_signal_connect(self->zoom_gesture, "scale-changed", G_CALLBACK(on_pinch), self);
}

GtkWidget *gv_timeline_new(void)
{
    return g_object_new(GV_TYPE_TIMELINE, NULL);
}
