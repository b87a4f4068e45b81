/* addr_map.c: the AVL tree behind addr_map.h. Nodes are indices into one
 * pool (never moved by a rebalance, so an item's pointer stays valid until
 * the pool grows); the recursion is as deep as the tree, under 1.45 log2 n.
 * It knows nothing of segments or blocks beyond their address. */
#include "addr_map.h"

#include <stdlib.h>

struct am_node {
    am_item item;
    int32_t left, right;  /* -1: none; a freed node chains on left */
    int32_t height;       /* of its subtree; 1 for a leaf */
};

#define N(i) (m->nodes[(i)])

void am_init(addr_map *m)
{
    *m = (addr_map){.root = -1, .free_list = -1};
}

void am_free(addr_map *m)
{
    free(m->nodes);
    am_init(m);
}

static int32_t height(const addr_map *m, int32_t i) { return i < 0 ? 0 : N(i).height; }

static void fix(addr_map *m, int32_t i)
{
    int32_t l = height(m, N(i).left), r = height(m, N(i).right);
    N(i).height = 1 + (l > r ? l : r);
}

static int32_t rot_right(addr_map *m, int32_t i)
{
    int32_t l = N(i).left;
    N(i).left = N(l).right;
    N(l).right = i;
    fix(m, i);
    fix(m, l);
    return l;
}

static int32_t rot_left(addr_map *m, int32_t i)
{
    int32_t r = N(i).right;
    N(i).right = N(r).left;
    N(r).left = i;
    fix(m, i);
    fix(m, r);
    return r;
}

/* Restores the AVL property at i, whose subtrees differ by 2 at most. */
static int32_t balance(addr_map *m, int32_t i)
{
    fix(m, i);
    int32_t l = N(i).left, r = N(i).right, b = height(m, l) - height(m, r);
    if (b > 1) {
        if (height(m, N(l).left) < height(m, N(l).right))
            N(i).left = rot_left(m, l);
        return rot_right(m, i);
    }
    if (b < -1) {
        if (height(m, N(r).right) < height(m, N(r).left))
            N(i).right = rot_right(m, r);
        return rot_left(m, i);
    }
    return i;
}

/* Links the new leaf k into the subtree at i (k's address is not in it). */
static int32_t link(addr_map *m, int32_t i, int32_t k)
{
    if (i < 0)
        return k;
    if (N(k).item.addr < N(i).item.addr)
        N(i).left = link(m, N(i).left, k);
    else
        N(i).right = link(m, N(i).right, k);
    return balance(m, i);
}

static int32_t unlink_min(addr_map *m, int32_t i, int32_t *out_min)
{
    if (N(i).left < 0) {
        *out_min = i;
        return N(i).right;
    }
    N(i).left = unlink_min(m, N(i).left, out_min);
    return balance(m, i);
}

static int32_t unlink_at(addr_map *m, int32_t i, uint64_t addr, int32_t *out_gone)
{
    if (i < 0)
        return -1;
    if (addr < N(i).item.addr) {
        N(i).left = unlink_at(m, N(i).left, addr, out_gone);
    } else if (addr > N(i).item.addr) {
        N(i).right = unlink_at(m, N(i).right, addr, out_gone);
    } else {
        int32_t l = N(i).left, r = N(i).right, succ;
        *out_gone = i;
        if (r < 0)
            return l;
        r = unlink_min(m, r, &succ);
        N(succ).left = l;
        N(succ).right = r;
        return balance(m, succ);
    }
    return balance(m, i);
}

int am_put(addr_map *m, const am_item *it)
{
    am_item *at = am_find(m, it->addr);
    int32_t k;
    if (at) {
        *at = *it;
        return 0;
    }
    if (m->free_list >= 0) {
        k = m->free_list;
        m->free_list = N(k).left;
    } else {
        if (m->n_nodes >= INT32_MAX)
            return gt_error_set(GT_ERR_NOMEM, "import: more than 2^31 segments or blocks");
        int rc = im_grow((void **)&m->nodes, &m->cap_nodes, m->n_nodes, sizeof *m->nodes);
        if (rc < 0)
            return rc;
        k = (int32_t)m->n_nodes++;
    }
    N(k) = (am_node){*it, -1, -1, 1};
    m->root = link(m, m->root, k);
    m->n++;
    return 0;
}

void am_remove(addr_map *m, uint64_t addr)
{
    int32_t gone = -1;
    m->root = unlink_at(m, m->root, addr, &gone);
    if (gone < 0)
        return;
    N(gone).left = m->free_list;
    m->free_list = gone;
    m->n--;
}

am_item *am_find(const addr_map *m, uint64_t addr)
{
    for (int32_t i = m->root; i >= 0; i = addr < N(i).item.addr ? N(i).left : N(i).right)
        if (N(i).item.addr == addr)
            return &N(i).item;
    return NULL;
}

am_item *am_floor(const addr_map *m, uint64_t addr)
{
    am_item *best = NULL;
    for (int32_t i = m->root; i >= 0;) {
        if (N(i).item.addr <= addr) {
            best = &N(i).item;
            i = N(i).right;
        } else {
            i = N(i).left;
        }
    }
    return best;
}

am_item *am_ceil(const addr_map *m, uint64_t addr)
{
    am_item *best = NULL;
    for (int32_t i = m->root; i >= 0;) {
        if (N(i).item.addr >= addr) {
            best = &N(i).item;
            i = N(i).left;
        } else {
            i = N(i).right;
        }
    }
    return best;
}

am_item *am_next(const addr_map *m, const am_item *it)
{
    return it->addr == UINT64_MAX ? NULL : am_ceil(m, it->addr + 1);
}
