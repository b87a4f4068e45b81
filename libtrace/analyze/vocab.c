/* vocab.c: the names and number formats every output of gtrace uses (see
 * gt_vocab.h). Nothing here reads a trace. */
#include "gt_vocab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gt_labels.h"
#include "gt_store.h"

const char *gt_api_base_name(const char *name, char *buf, size_t n)
{
    const char *v = strrchr(name, '_');
    if (v && v[1] == 'v' && v[2] >= '0' && v[2] <= '9' && strspn(v + 2, "0123456789") == strlen(v + 2)) {
        snprintf(buf, n, "%.*s", (int)(v - name), name);
        return buf;
    }
    return name;
}

const char *gt_copy_kind_name(int copy_kind)
{
    return copy_kind == -1 ? "memset" : gt_label(GT_LABELS_COPY_DIRECTION, copy_kind);
}

const char *gt_fmt_ns(char *buf, size_t n, double ns)
{
    double a = fabs(ns);
    if (a >= 1e9)
        snprintf(buf, n, "%.3f s", ns / 1e9);
    else if (a >= 1e6)
        snprintf(buf, n, "%.3f ms", ns / 1e6);
    else if (a >= 1e3)
        snprintf(buf, n, "%.2f us", ns / 1e3);
    else
        snprintf(buf, n, "%.0f ns", ns);
    return buf;
}

const char *gt_fmt_bytes(char *buf, size_t n, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = bytes;
    while (fabs(v) >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", v);
    else
        snprintf(buf, n, "%.2f %s", v, units[u]);
    return buf;
}

size_t gt_text_width(const char *s)
{
    size_t w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xc0) != 0x80;
    return w;
}

/* The byte offset of character k of s (its end when s is shorter). */
static size_t char_at(const char *s, size_t k)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80 && k-- == 0)
            break;
    return i;
}

const char *gt_cut_middle(char *buf, size_t n, const char *s, size_t width, size_t tail)
{
    size_t w = gt_text_width(s);
    if (w <= width || width < 3 || n == 0)
        return s;
    if (tail > width - 2)
        tail = width - 2;
    if (tail < 1)
        tail = 1;
    size_t head = width - 1 - tail;
    size_t head_end = char_at(s, head), tail_at = char_at(s, w - tail);
    snprintf(buf, n, "%.*s\xe2\x80\xa6%s", (int)head_end, s, s + tail_at);
    /* a cut into a character at the buffer's end: drop its lead bytes */
    size_t len = strlen(buf);
    if (len + 1 == n) {
        size_t k = len;
        while (k > 0 && ((unsigned char)buf[k - 1] & 0xc0) == 0x80)
            k--;
        if (k > 0 && ((unsigned char)buf[k - 1] & 0x80)) {
            unsigned char lead = (unsigned char)buf[k - 1];
            size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
            if (len - (k - 1) < need)
                buf[k - 1] = 0;
        }
    }
    return buf;
}

const char *gt_diff_cell(char *buf, size_t n, const char *unit, double v)
{
    if (strcmp(unit, "ns") == 0)
        return gt_fmt_ns(buf, n, v);
    if (strcmp(unit, "bytes") == 0)
        return gt_fmt_bytes(buf, n, v);
    if (strcmp(unit, "%") == 0)
        snprintf(buf, n, "%.1f%%", v);
    else if (strcmp(unit, "GB/s") == 0)
        snprintf(buf, n, "%.2f GB/s", v);
    else
        snprintf(buf, n, "%.4g", v);
    return buf;
}

const char *gt_diff_change(char *buf, size_t n, double change)
{
    snprintf(buf, n, "%+.1f%%", 100 * change);
    return buf;
}
