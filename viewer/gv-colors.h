/* gv-colors.h: the fixed colours that the timeline's drawing files share
 * (0..1 RGB, for cairo_set_source_rgb). The items' colours by name and kind
 * are gv_color_item's (gv-render.h). */
#ifndef GV_COLORS_H
#define GV_COLORS_H

/* The related item's outline and the flow arrow to it. */
#define GV_FLOW_RGB 0.10, 0.30, 0.95
/* The selected time range: its band (translucent) and its duration's label on the axis. */
#define GV_RANGE_RGB 0.20, 0.40, 0.90
/* The outline of the search's matches. */
#define GV_MATCH_RGB 1.00, 0.55, 0.00

#endif /* GV_COLORS_H */
