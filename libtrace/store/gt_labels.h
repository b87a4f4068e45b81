/* gt_labels.h: the words for the store's enum values, described once.
 *
 * The labels are those of nsys's ENUM_* tables as a trace holds them
 * (schema_enums.c writes those tables from the same rows), so the CSV and
 * Chrome exports, the report and the Kineto import spell a copy kind or a
 * memory kind as the trace itself does. */
#ifndef GT_LABELS_H
#define GT_LABELS_H

typedef enum gt_label_set {
    GT_LABELS_COPY_KIND,      /* ENUM_CUDA_MEMCPY_OPER's label: "Host-to-Device" */
    GT_LABELS_COPY_DIRECTION, /* the same kinds as Kineto and gtrace's tables say them: "HtoD" */
    GT_LABELS_MEM_KIND,       /* ENUM_CUDA_MEM_KIND's label: "Pageable", "Device Static" */
    GT_LABELS_SYNC_TYPE,      /* ENUM_CUPTI_SYNC_TYPE's label: "Stream sync" */
} gt_label_set;

/* VALUE's word in SET; "" when SET has no such value (a copy direction:
 * "unknown" for kinds without a two-letter name, as UVM copies). */
const char *gt_label(gt_label_set set, int value);

/* The largest value SET names, so a caller can walk the set. */
int gt_label_max(gt_label_set set);

#endif /* GT_LABELS_H */
