/* vocab.c: the names and number formats every output of gtrace uses (see
 * gt_vocab.h). Nothing here reads a trace. */
#include "gt_vocab.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
    static const char *const names[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                        "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
    _Static_assert(sizeof names / sizeof names[0] == GT_COPY_PTOP + 1, "a name for every copy kind");
    if (copy_kind == -1)
        return "memset";
    return copy_kind >= 0 && copy_kind <= GT_COPY_PTOP ? names[copy_kind] : "unknown";
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
