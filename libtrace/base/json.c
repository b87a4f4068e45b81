/* json.c: the JSON writer of gt_json.h. Each item first writes what goes
 * before it (a comma where its container has one already, the layout's
 * whitespace); closing brackets check that they close what is open. */
#include "gt_json.h"

#include "gt_base.h"

#include <math.h>

void gt_json_init(gt_json *j, FILE *f)
{
    *j = (gt_json){.f = f};
}

int gt_json_finish(gt_json *j)
{
    if (j->ws) {
        fputs(j->ws, j->f);
        j->ws = NULL;
    }
    if (j->err)
        return j->err;
    if (j->depth != 0 || j->after_key)
        return GT_ERR_INVALID;
    return ferror(j->f) ? GT_ERR_IO : 0;
}

static void misuse(gt_json *j)
{
    if (!j->err)
        j->err = GT_ERR_INVALID;
}

/* What goes before an item or a key: its comma, the pending whitespace. */
static void before_item(gt_json *j, bool key)
{
    uint32_t bit = j->depth > 0 ? 1u << (j->depth - 1) : 0;
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (GT_NEVER(!key && (j->is_object & bit))) /* a value in an object without its key */
        misuse(j);
    if (bit & j->has_items)
        fputs(j->spaced ? ", " : ",", j->f);
    j->has_items |= bit;
    if (j->ws) {
        fputs(j->ws, j->f);
        j->ws = NULL;
    }
}

static void begin(gt_json *j, char c, bool object)
{
    before_item(j, false);
    if (GT_NEVER(j->depth >= GT_JSON_MAX_DEPTH)) {
        misuse(j);
        return;
    }
    uint32_t bit = 1u << j->depth++;
    j->has_items &= ~bit;
    j->is_object = object ? j->is_object | bit : j->is_object & ~bit;
    fputc(c, j->f);
}

void gt_json_object(gt_json *j) { begin(j, '{', true); }
void gt_json_array(gt_json *j) { begin(j, '[', false); }

void gt_json_end(gt_json *j)
{
    if (GT_NEVER(j->depth == 0 || j->after_key)) {
        misuse(j);
        return;
    }
    if (j->ws) {
        fputs(j->ws, j->f);
        j->ws = NULL;
    }
    uint32_t bit = 1u << --j->depth;
    fputc(j->is_object & bit ? '}' : ']', j->f);
}

/* s as a JSON string. Bytes that need nothing go out a run at a time (one
 * fwrite for a whole plain name, not one per character: the exports write
 * millions of names). */
static void escaped(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : ""), *run = p;
    fputc('"', f);
    for (;;) {
        unsigned char c = *p;
        /* Names come from traced programs: bytes that are not UTF-8
         * become U+FFFD so the document stays valid JSON. */
        int n = c >= 0x20 && c != '"' && c != '\\' ? gt_utf8_len(p) : 0;
        if (n > 0) {
            p += n;
            continue;
        }
        if (p > run)
            fwrite(run, 1, (size_t)(p - run), f);
        if (c == 0)
            break;
        switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (c < 0x20)
                fprintf(f, "\\u%04x", c);
            else
                fputs("\\ufffd", f);
            break;
        }
        run = ++p;
    }
    fputc('"', f);
}

/* An integer's digits (a minus first if neg), without printf: the exports
 * write several numbers per event. */
static void digits(FILE *f, bool neg, uint64_t v)
{
    char buf[24], *e = buf + sizeof buf, *b = e;
    do
        *--b = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    if (neg)
        *--b = '-';
    fwrite(b, 1, (size_t)(e - b), f);
}

void gt_json_key(gt_json *j, const char *key)
{
    uint32_t bit = j->depth > 0 ? 1u << (j->depth - 1) : 0;
    if (GT_NEVER(!(j->is_object & bit) || j->after_key)) { /* a key outside an object */
        misuse(j);
        return;
    }
    before_item(j, true);
    escaped(j->f, key);
    fputs(j->spaced ? ": " : ":", j->f);
    j->after_key = true;
}

void gt_json_str(gt_json *j, const char *s)
{
    before_item(j, false);
    escaped(j->f, s);
}

void gt_json_int(gt_json *j, int64_t v)
{
    before_item(j, false);
    digits(j->f, v < 0, v < 0 ? 0 - (uint64_t)v : (uint64_t)v); /* INT64_MIN has no positive int64 */
}

void gt_json_uint(gt_json *j, uint64_t v)
{
    before_item(j, false);
    digits(j->f, false, v);
}

void gt_json_num(gt_json *j, double v)
{
    before_item(j, false);
    if (!isfinite(v))
        fputs("null", j->f);
    else if (v == (double)(int64_t)v && fabs(v) < 9e15)
        fprintf(j->f, "%lld", (long long)v);
    else
        fprintf(j->f, "%.6g", v);
}

void gt_json_milli(gt_json *j, int64_t v)
{
    before_item(j, false);
    /* the magnitude as unsigned: INT64_MIN has no positive int64 */
    uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    char frac[4] = {'.', (char)('0' + m / 100 % 10), (char)('0' + m / 10 % 10), (char)('0' + m % 10)};
    digits(j->f, v < 0, m / 1000);
    fwrite(frac, 1, sizeof frac, j->f);
}

void gt_json_bool(gt_json *j, bool v)
{
    before_item(j, false);
    fputs(v ? "true" : "false", j->f);
}

void gt_json_null(gt_json *j)
{
    before_item(j, false);
    fputs("null", j->f);
}

void gt_json_kv_str(gt_json *j, const char *key, const char *s) { gt_json_key(j, key); gt_json_str(j, s); }
void gt_json_kv_int(gt_json *j, const char *key, int64_t v) { gt_json_key(j, key); gt_json_int(j, v); }
void gt_json_kv_num(gt_json *j, const char *key, double v) { gt_json_key(j, key); gt_json_num(j, v); }
void gt_json_kv_bool(gt_json *j, const char *key, bool v) { gt_json_key(j, key); gt_json_bool(j, v); }

void gt_json_ws(gt_json *j, const char *ws) { j->ws = ws; }
void gt_json_spaced(gt_json *j, bool spaced) { j->spaced = spaced; }

/* RFC 3629: no overlong forms (C0, C1, E0 80..9F, F0 80..8F), no
 * surrogates (ED A0..BF), nothing past U+10FFFF (F4 90.., F5..FF). */
int gt_utf8_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    int n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (n == 0)
        return 0;
    unsigned char lo = 0x80, hi = 0xbf; /* the second byte's range */
    if (s[0] == 0xe0)
        lo = 0xa0;
    else if (s[0] == 0xed)
        hi = 0x9f;
    else if (s[0] == 0xf0)
        lo = 0x90;
    else if (s[0] == 0xf4)
        hi = 0x8f;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}
