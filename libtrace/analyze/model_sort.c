/* model_sort.c: the stable sort the model's arrays are put in order with
 * (an_sort), made for what the loaders read: tables stored nearly in time
 * order. It knows no array of the model, only bytes and a comparison.
 *
 * The loaders read each table in the order it is stored, which for a trace
 * gtrace wrote is nearly time order (rows go in sorted a batch at a time):
 * the arrays are sorted runs with local disorder (equal starts, frees at
 * the time of an allocation, a long range stored when it ended). Sorting
 * them is stable in every branch, so the order of equal elements is the
 * order they were loaded in, as a stable sort of the whole array would
 * leave it:
 *   1. already sorted: one pass;
 *   2. local disorder: insertion, while it moves few elements;
 *   3. otherwise the runs merged pairwise, bottom up; a merge moves only
 *      where the two runs overlap, so nearly sorted input costs little
 *      more than a pass, and any input at most a merge sort. */
#include "analyze_int.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ELEM_BYTES = 64 };

static bool insertion(char *p, size_t n, size_t size, int (*cmp)(const void *, const void *), size_t budget)
{
    char x[MAX_ELEM_BYTES];
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        if (cmp(p + (i - 1) * size, p + i * size) <= 0)
            continue;
        memcpy(x, p + i * size, size);
        size_t j = i;
        /* only past strictly greater elements: equal ones keep their order,
         * also when we give up halfway */
        while (j > 0 && cmp(p + (j - 1) * size, x) > 0 && moves < budget) {
            memcpy(p + j * size, p + (j - 1) * size, size);
            j--;
            moves++;
        }
        memcpy(p + j * size, x, size);
        if (moves >= budget)
            return false;
    }
    return true;
}

/* Scratch space for merges, grown as needed. */
typedef struct scratch { char *p; size_t bytes; } scratch;

/* Merges the sorted [p, p + n1) and [p + n1, p + n) in place, through
 * scratch the size of the shorter one; ties go to the left run (stable). */
static bool merge_two(char *p, size_t n1, size_t n, size_t size, int (*cmp)(const void *, const void *), scratch *s)
{
    size_t n2 = n - n1, need = (n1 < n2 ? n1 : n2) * size;
    if (need > s->bytes) {
        char *q = realloc(s->p, need);
        if (!q)
            return false;
        s->p = q;
        s->bytes = need;
    }
    char *buf = s->p;
    if (n1 <= n2) { /* left into the buffer, merged forwards */
        memcpy(buf, p, n1 * size);
        size_t i = 0, j = n1, o = 0;
        while (i < n1 && j < n) {
            if (cmp(buf + i * size, p + j * size) <= 0)
                memcpy(p + (o++) * size, buf + (i++) * size, size);
            else
                memcpy(p + (o++) * size, p + (j++) * size, size);
        }
        memcpy(p + o * size, buf + i * size, (n1 - i) * size);
    } else { /* right into the buffer, merged backwards */
        memcpy(buf, p + n1 * size, n2 * size);
        size_t i = n1, j = n2, o = n;
        while (i > 0 && j > 0) {
            if (cmp(p + (i - 1) * size, buf + (j - 1) * size) > 0)
                memcpy(p + (--o) * size, p + (--i) * size, size);
            else
                memcpy(p + (--o) * size, buf + (--j) * size, size);
        }
        memcpy(p + (o - j) * size, buf, j * size);
    }
    return true;
}

/* merge_two on only the part of two runs that overlaps: the head of the
 * left run not after the right run's first element, and the tail of the
 * right run not before the left run's last, are in place already. */
static bool merge_overlap(char *p, size_t n1, size_t n, size_t size, int (*cmp)(const void *, const void *),
                          scratch *s)
{
    const char *first_right = p + n1 * size, *last_left = p + (n1 - 1) * size;
    size_t lo = 0, hi = n1;
    while (lo < hi) { /* the first left element after the right run's first */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(p + mid * size, first_right) <= 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t from = lo;
    if (from == n1)
        return true; /* in order already */
    lo = n1;
    hi = n;
    while (lo < hi) { /* the first right element not before the left run's last */
        size_t mid = lo + (hi - lo) / 2;
        if (cmp(p + mid * size, last_left) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return merge_two(p + from * size, n1 - from, lo - from, size, cmp, s);
}

/* Every run merged with its neighbour, pass after pass, until one is left. */
static bool merge_runs(char *p, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    size_t k = 0;
    for (size_t i = 1; i < n; i++)
        k += cmp(p + (i - 1) * size, p + i * size) > 0;
    size_t *b = malloc((k + 2) * sizeof *b); /* where each run begins, then n */
    scratch s = {NULL, 0};
    bool ok = b != NULL;
    if (ok) {
        b[0] = 0;
        k = 1;
        for (size_t i = 1; i < n; i++)
            if (cmp(p + (i - 1) * size, p + i * size) > 0)
                b[k++] = i;
        b[k] = n;
    }
    while (ok && k > 1) {
        size_t j = 0;
        for (size_t r = 0; r < k && ok; r += 2) {
            if (r + 1 < k)
                ok = merge_overlap(p + b[r] * size, b[r + 1] - b[r], b[r + 2] - b[r], size, cmp, &s);
            b[j++] = b[r];
        }
        b[j] = n;
        k = j;
    }
    free(b);
    free(s.p);
    return ok; /* what is merged stays merged: qsort finishes */
}

void an_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    char *p = base;
    size_t i = 1;
    while (i < n && cmp(p + (i - 1) * size, p + i * size) <= 0)
        i++;
    if (i >= n)
        return;
    if (size <= MAX_ELEM_BYTES && insertion(p, n, size, cmp, n / 8 + 4096))
        return;
    if (!merge_runs(p, n, size, cmp))
        qsort(base, n, size, cmp); /* out of memory: glibc's qsort, a merge sort while memory lasts */
}

