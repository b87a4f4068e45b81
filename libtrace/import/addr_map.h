/* addr_map.h: an ordered map from device addresses to the segments or blocks
 * that start there, for snapshot.c's replay: an AVL tree in one array of
 * nodes, so that every lookup, insert and removal is O(log n) whatever the
 * order of the addresses (a sorted array with memmove is quadratic when
 * they come downwards). Private to libtrace/import. */
#ifndef GT_ADDR_MAP_H
#define GT_ADDR_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "import_int.h"

typedef struct am_item {
    uint64_t addr;              /* the key */
    int64_t bytes;
    uint64_t heap;              /* segments: the trace's heap id */
    const pk_value *frames;     /* blocks: who allocated it */
} am_item;

typedef struct am_node am_node;

typedef struct addr_map {
    am_node *nodes; size_t n_nodes, cap_nodes;  /* the pool; freed nodes are chained */
    int32_t root, free_list;                    /* -1: none */
    size_t n;                                   /* items in the map */
} addr_map;

void am_init(addr_map *m);
void am_free(addr_map *m);
/* Inserts `it`, or replaces the item at its address. */
int am_put(addr_map *m, const am_item *it);
/* Removes the item at addr, if there is one. */
void am_remove(addr_map *m, uint64_t addr);
/* The item at addr; at the greatest address <= addr; at the least address
 * >= addr; NULL if none. Borrowed: valid until the next am_put, or the
 * item's own removal, and may be changed in place except for its address. */
am_item *am_find(const addr_map *m, uint64_t addr);
am_item *am_floor(const addr_map *m, uint64_t addr);
am_item *am_ceil(const addr_map *m, uint64_t addr);
/* The item after `it` in address order, or NULL. */
am_item *am_next(const addr_map *m, const am_item *it);

#endif
