/* names.h: the names this process image gave through NVTX (names.c):
 * domains, categories and memory heaps, kept so that a fork child, whose
 * trace part is its own, can say them again there. */
#ifndef GT_CAPTURE_NAMES_H
#define GT_CAPTURE_NAMES_H

#include <stddef.h>
#include <stdint.h>

typedef enum gt_name_kind {
    GT_NAME_DOMAIN = 0,     /* nvtxDomainCreate: domain_id, text */
    GT_NAME_CATEGORY = 1,   /* nvtxNameCategory, nvtxDomainNameCategory: domain_id, id, text */
    GT_NAME_HEAP = 2,       /* nvtxMemHeapRegister: domain_id, id, address ... type, text */
    GT_NAME_N_KINDS = 3
} gt_name_kind;

typedef struct gt_name {
    gt_name_kind kind;
    int64_t domain_id;      /* 0: the default domain */
    uint64_t id;            /* a category's or a heap's id; 0 for a domain */
    uint64_t address;       /* heaps: the range they cover, their usage and memory type */
    int64_t bytes;
    int32_t usage, type;
    const char *text;       /* NULL: none */
    size_t text_len;
} gt_name;

/* Remembers a name for the fork children to come (a category named again
 * replaces its earlier name). When the table is full the name is counted:
 * a child then drops it, counted (gt_names_each), and it is said once. */
void gt_names_keep(const gt_name *n);
/* A domain destroyed, a heap unregistered: children do not inherit it. */
void gt_names_forget(gt_name_kind kind, uint64_t id_or_domain);
/* In a fork child: calls `fn` for each name of `kind` its parent held when
 * it forked, in the order they were given; returns how many names of that
 * kind the table could not keep (for the caller to count as dropped). */
int64_t gt_names_each(gt_name_kind kind, void (*fn)(const gt_name *n));

#endif
