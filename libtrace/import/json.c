/* json.c: a pull reader of JSON (RFC 8259) over a plain or gzipped file, for
 * traces of hundreds of MB: it hands out one token at a time from a 64 KiB
 * buffer and keeps only the current string, so memory does not grow with
 * the file. It checks the grammar as it goes (objects, arrays, keys, commas,
 * escapes, UTF-16 surrogate pairs, number syntax, nesting up to
 * JSON_MAX_DEPTH, one top-level value). It builds no tree: callers read the
 * tokens they want and skip the rest. Beyond RFC 8259 it takes what
 * Python's json.dump writes (NaN, Infinity, -Infinity, as numbers) and a
 * UTF-8 byte-order mark; a string with \u0000 or over 16 MiB is read to
 * its end and flagged (json_text_flags), so that a caller skips the value
 * it is part of, not the whole file. */
#include "import_int.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    BUF_BYTES = 64 * 1024,
    MAX_TEXT_BYTES = 16 * 1024 * 1024,
};

/* What may come next. */
enum { S_VALUE, S_FIRST_VALUE, S_KEY, S_FIRST_KEY, S_COLON, S_AFTER, S_DONE };

struct json_reader {
    gzFile gz;
    char *path;
    unsigned char buf[BUF_BYTES];
    size_t pos, len;
    bool eof;
    int64_t line;
    char *text;                 /* the current key, string or number */
    size_t text_len, text_cap;
    unsigned text_flags;        /* JSON_TEXT_*: of the current text */
    bool started;               /* a first byte was read (a BOM is looked for there) */
    char stack[JSON_MAX_DEPTH]; /* 'o' or 'a' */
    int depth;
    int state;
    int status;                 /* the error a failed read set */
};

int json_fail(json_reader *r, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return gt_error_set(GT_ERR_CORRUPT, "%s: line %lld: %s", r->path, (long long)r->line, msg);
}

int json_open(json_reader **out, const char *path)
{
    *out = NULL;
    json_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", path);
    }
    r->gz = gzopen(path, "rb");
    if (!r->gz) {
        int e = errno;
        json_free(r);
        return gt_error_set(e == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO, "%s: cannot open: %s", path,
                            e ? strerror(e) : "out of memory");
    }
    gzbuffer(r->gz, 128 * 1024);
    r->line = 1;
    r->state = S_VALUE;
    *out = r;
    return 0;
}

void json_free(json_reader *r)
{
    if (!r)
        return;
    if (r->gz)
        gzclose(r->gz);
    free(r->text);
    free(r->path);
    free(r);
}

unsigned json_text_flags(const json_reader *r) { return r->text_flags; }

const char *json_text(const json_reader *r, size_t *out_len)
{
    if (out_len)
        *out_len = r->text_len;
    return r->text ? r->text : "";
}

int json_depth(const json_reader *r) { return r->depth; }

/* Refills the buffer; 0 at the end of the file, 1 with bytes, <0 on error. */
static int fill(json_reader *r)
{
    if (r->eof)
        return 0;
    int n = gzread(r->gz, r->buf, BUF_BYTES);
    int err = Z_OK;
    const char *m = n <= 0 ? gzerror(r->gz, &err) : NULL;
    /* gzread returns what it had of a truncated gzip stream, then 0 or -1:
     * the stream's own error says whether it ended early. zlib's message
     * starts with the path. */
    if (err == Z_ERRNO)
        return r->status = gt_error_set(GT_ERR_IO, "%s: %s", r->path, strerror(errno));
    if (err != Z_OK && err != Z_STREAM_END)
        return r->status = gt_error_set(GT_ERR_CORRUPT, "%s (gzip)", m);
    if (n <= 0) {
        r->eof = true;
        return 0;
    }
    r->pos = 0;
    r->len = (size_t)n;
    if (!r->started) { /* a UTF-8 byte-order mark, as Windows editors write */
        r->started = true;
        if (n >= 3 && r->buf[0] == 0xef && r->buf[1] == 0xbb && r->buf[2] == 0xbf)
            r->pos = 3;
        if (r->pos == r->len)
            return fill(r);
    }
    return 1;
}

/* The next byte (-1 at the end, or -2 after an error already set). */
static int getb(json_reader *r)
{
    if (r->pos == r->len) {
        int rc = fill(r);
        if (rc <= 0)
            return rc == 0 ? -1 : -2;
    }
    return r->buf[r->pos++];
}

static int peekb(json_reader *r)
{
    if (r->pos == r->len) {
        int rc = fill(r);
        if (rc <= 0)
            return rc == 0 ? -1 : -2;
    }
    return r->buf[r->pos];
}

static int put(json_reader *r, const char *s, size_t n)
{
    if (r->text_len + n + 1 > r->text_cap) {
        if (r->text_len + n + 1 > MAX_TEXT_BYTES) {
            /* kept cut: read on to the end, the caller told by the flag */
            r->text_flags |= JSON_TEXT_CUT;
            return 0;
        }
        size_t cap = r->text_cap ? r->text_cap : 256;
        while (cap < r->text_len + n + 1)
            cap *= 2;
        char *t = realloc(r->text, cap);
        if (!t)
            return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", r->path);
        r->text = t;
        r->text_cap = cap;
    }
    memcpy(r->text + r->text_len, s, n);
    r->text_len += n;
    r->text[r->text_len] = '\0';
    return 0;
}

static int put_utf8(json_reader *r, uint32_t c)
{
    char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xc0 | (c >> 6));
        b[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xe0 | (c >> 12));
        b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | (c >> 18));
        b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        b[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    return put(r, b, n);
}

static int hex4(json_reader *r, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int c = getb(r);
        if (c == -2)
            return r->status;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0)
            return json_fail(r, "a \\u escape wants 4 hex digits");
        v = v << 4 | (uint32_t)d;
    }
    *out = v;
    return 0;
}

/* A string after its opening quote, into text. */
static int read_string(json_reader *r)
{
    int rc;
    r->text_len = 0;
    r->text_flags = 0;
    if ((rc = put(r, "", 0)) < 0)
        return rc;
    for (;;) {
        /* copy runs of plain bytes straight from the buffer */
        size_t start = r->pos;
        while (r->pos < r->len && r->buf[r->pos] != '"' && r->buf[r->pos] != '\\' && r->buf[r->pos] >= 0x20)
            r->pos++;
        if (r->pos > start && (rc = put(r, (const char *)r->buf + start, r->pos - start)) < 0)
            return rc;
        int c = getb(r);
        if (c == -2)
            return r->status;
        if (c == -1)
            return json_fail(r, "the file ends inside a string");
        if (c == '"')
            return 0;
        if (c < 0x20) {
            if (c == '\n')
                r->line++;
            return json_fail(r, "a control character (0x%02x) inside a string", c);
        }
        if (c != '\\') {
            /* the buffer ran out mid-run: this byte is plain */
            char ch = (char)c;
            if ((rc = put(r, &ch, 1)) < 0)
                return rc;
            continue;
        }
        c = getb(r);
        char ch;
        switch (c) {
        case '"': ch = '"'; break;
        case '\\': ch = '\\'; break;
        case '/': ch = '/'; break;
        case 'b': ch = '\b'; break;
        case 'f': ch = '\f'; break;
        case 'n': ch = '\n'; break;
        case 'r': ch = '\r'; break;
        case 't': ch = '\t'; break;
        case 'u': {
            uint32_t u, lo;
            if ((rc = hex4(r, &u)) < 0)
                return rc;
            if (u >= 0xd800 && u <= 0xdbff) {
                if (getb(r) != '\\' || getb(r) != 'u')
                    return json_fail(r, "a UTF-16 high surrogate without its low half");
                if ((rc = hex4(r, &lo)) < 0)
                    return rc;
                if (lo < 0xdc00 || lo > 0xdfff)
                    return json_fail(r, "a UTF-16 high surrogate without its low half");
                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            } else if (u >= 0xdc00 && u <= 0xdfff) {
                return json_fail(r, "a lone UTF-16 low surrogate");
            }
            if (u == 0) { /* not in a C string: the caller skips what holds it */
                r->text_flags |= JSON_TEXT_NUL;
                continue;
            }
            if ((rc = put_utf8(r, u)) < 0)
                return rc;
            continue;
        }
        case -2: return r->status;
        case -1: return json_fail(r, "the file ends inside a string");
        default: return json_fail(r, "an unknown escape \\%c", c);
        }
        if ((rc = put(r, &ch, 1)) < 0)
            return rc;
    }
}

/* Python's NaN, Infinity and -Infinity, into text as a number: the word
 * after its first letter (after the '-' when `neg`). */
static int nonfinite(json_reader *r, const char *word, bool neg)
{
    int rc;
    for (const char *p = word + (neg ? 0 : 1); *p; p++) {
        int c = getb(r);
        if (c == -2)
            return r->status;
        if (c != *p)
            return json_fail(r, "an unknown word (true, false, null, NaN and Infinity are the only ones)");
    }
    r->text_len = 0;
    r->text_flags = 0;
    if ((neg && (rc = put(r, "-", 1)) < 0) || (rc = put(r, word, strlen(word))) < 0)
        return rc;
    return 0;
}

/* A number starting with `c`, into text; checked against JSON's grammar. */
static int read_number(json_reader *r, int c)
{
    char ch = (char)c;
    int rc;
    r->text_len = 0;
    r->text_flags = 0;
    if ((rc = put(r, &ch, 1)) < 0)
        return rc;
    if (c == '-' && peekb(r) == 'I')
        return nonfinite(r, "Infinity", true);
    for (;;) {
        int p = peekb(r);
        if (p == -2)
            return r->status;
        if (!(p >= '0' && p <= '9') && p != '.' && p != 'e' && p != 'E' && p != '+' && p != '-')
            break;
        ch = (char)p;
        r->pos++;
        if ((rc = put(r, &ch, 1)) < 0)
            return rc;
        if (r->text_len > 64)
            return json_fail(r, "a number longer than 64 characters");
    }
    /* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
    const char *s = r->text;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return json_fail(r, "a malformed number '%s'", r->text);
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return json_fail(r, "a malformed number '%s'", r->text);
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return json_fail(r, "a malformed number '%s'", r->text);
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s)
        return json_fail(r, "a malformed number '%s'", r->text);
    return 0;
}

static int literal(json_reader *r, const char *rest)
{
    for (const char *p = rest; *p; p++) {
        int c = getb(r);
        if (c == -2)
            return r->status;
        if (c != *p)
            return json_fail(r, "an unknown word (true, false, null, NaN and Infinity are the only ones)");
    }
    return 0;
}

static int skip_space(json_reader *r)
{
    for (;;) {
        while (r->pos < r->len) {
            unsigned char c = r->buf[r->pos];
            if (c == '\n')
                r->line++;
            else if (c != ' ' && c != '\t' && c != '\r')
                return c;
            r->pos++;
        }
        int rc = fill(r);
        if (rc <= 0)
            return rc == 0 ? -1 : -2;
    }
}

/* After a value closes at the current depth. */
static void value_done(json_reader *r)
{
    r->state = r->depth == 0 ? S_DONE : S_AFTER;
}

int json_next(json_reader *r, json_tok *out)
{
    int rc;
    for (;;) {
        int c = skip_space(r);
        if (c == -2)
            return r->status;
        if (c == -1) {
            if (r->state == S_DONE) {
                *out = JT_EOF;
                return 0;
            }
            return json_fail(r, r->depth == 0 && r->state == S_VALUE ? "the file is empty"
                                                                     : "the file ends before the JSON does (truncated?)");
        }
        r->pos++;
        switch (r->state) {
        case S_DONE:
            return json_fail(r, "text after the end of the JSON value");
        case S_COLON:
            if (c != ':')
                return json_fail(r, "expected ':' after an object key");
            r->state = S_VALUE;
            continue;
        case S_AFTER:
            if (c == ',') {
                r->state = r->stack[r->depth - 1] == 'o' ? S_KEY : S_VALUE;
                continue;
            }
            if ((c == '}' && r->stack[r->depth - 1] == 'o') || (c == ']' && r->stack[r->depth - 1] == 'a')) {
                r->depth--;
                value_done(r);
                *out = c == '}' ? JT_OBJ_END : JT_ARR_END;
                return 0;
            }
            return json_fail(r, "expected ',' or '%c'", r->stack[r->depth - 1] == 'o' ? '}' : ']');
        case S_FIRST_KEY:
        case S_KEY:
            if (c == '}' && r->state == S_FIRST_KEY) {
                r->depth--;
                value_done(r);
                *out = JT_OBJ_END;
                return 0;
            }
            if (c != '"')
                return json_fail(r, r->state == S_KEY ? "expected a key after ','" : "expected a key or '}'");
            if ((rc = read_string(r)) < 0)
                return rc;
            r->state = S_COLON;
            *out = JT_KEY;
            return 0;
        case S_FIRST_VALUE:
        case S_VALUE:
            if (c == ']' && r->state == S_FIRST_VALUE) {
                r->depth--;
                value_done(r);
                *out = JT_ARR_END;
                return 0;
            }
            switch (c) {
            case '{':
            case '[':
                if (r->depth == JSON_MAX_DEPTH)
                    return json_fail(r, "nested more than %d deep", JSON_MAX_DEPTH);
                r->stack[r->depth++] = c == '{' ? 'o' : 'a';
                r->state = c == '{' ? S_FIRST_KEY : S_FIRST_VALUE;
                *out = c == '{' ? JT_OBJ : JT_ARR;
                return 0;
            case '"':
                if ((rc = read_string(r)) < 0)
                    return rc;
                *out = JT_STR;
                break;
            case 't':
                if ((rc = literal(r, "rue")) < 0)
                    return rc;
                *out = JT_TRUE;
                break;
            case 'f':
                if ((rc = literal(r, "alse")) < 0)
                    return rc;
                *out = JT_FALSE;
                break;
            case 'n':
                if ((rc = literal(r, "ull")) < 0)
                    return rc;
                *out = JT_NULL;
                break;
            case 'N':
            case 'I':
                if ((rc = nonfinite(r, c == 'N' ? "NaN" : "Infinity", false)) < 0)
                    return rc;
                *out = JT_NUM;
                break;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    if ((rc = read_number(r, c)) < 0)
                        return rc;
                    *out = JT_NUM;
                    break;
                }
                if (c >= 0x20 && c < 0x7f)
                    return json_fail(r, "unexpected '%c' where a value belongs", c);
                return json_fail(r, "unexpected byte 0x%02x where a value belongs (not JSON?)", c);
            }
            value_done(r);
            return 0;
        }
    }
}

int json_next_member(json_reader *r, char *key, size_t key_bytes, json_tok *value)
{
    json_tok t;
    int rc;
    if ((rc = json_next(r, &t)) < 0)
        return rc;
    if (t == JT_OBJ_END)
        return 0;
    /* a key with \u0000 or cut is no key a caller knows */
    snprintf(key, key_bytes, "%s", r->text_flags ? "" : json_text(r, NULL));
    if ((rc = json_next(r, value)) < 0)
        return rc;
    return 1;
}

int json_next_element(json_reader *r, json_tok *value)
{
    int rc = json_next(r, value);
    if (rc < 0)
        return rc;
    return *value != JT_ARR_END;
}

int json_skip(json_reader *r, json_tok first)
{
    if (first != JT_OBJ && first != JT_ARR)
        return 0;
    int depth = json_depth(r) - 1;
    json_tok t;
    int rc;
    do {
        if ((rc = json_next(r, &t)) < 0)
            return rc;
    } while (json_depth(r) > depth);
    return 0;
}

bool json_int(const char *s, int64_t *out)
{
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (!*p)
        return false;
    uint64_t v = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        if (v > (UINT64_MAX - 9) / 10)
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (neg ? v > (uint64_t)INT64_MAX + 1 : v > (uint64_t)INT64_MAX)
        return false;
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

bool json_us_to_ns(const char *s, int64_t *out_ns)
{
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (strpbrk(p, "eE")) {
        /* an exponent: through a double (Kineto writes none) */
        char *end;
        double v = strtod(s, &end);
        if (*end || !(v * 1e3 < 9.2e18 && v * 1e3 > -9.2e18))
            return false;
        *out_ns = (int64_t)(v * 1e3 + (v < 0 ? -0.5 : 0.5));
        return true;
    }
    uint64_t us = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (us > (uint64_t)INT64_MAX / 10000)
            return false; /* beyond int64 nanoseconds */
        us = us * 10 + (uint64_t)(*p - '0');
    }
    uint64_t frac = 0;
    int n_frac = 0;
    bool round_up = false;
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, n_frac++) {
            if (n_frac < 3)
                frac = frac * 10 + (uint64_t)(*p - '0');
            else if (n_frac == 3)
                round_up = *p >= '5';
        }
    }
    if (*p)
        return false;
    for (; n_frac < 3; n_frac++)
        frac *= 10;
    uint64_t ns = us * 1000 + frac + (round_up ? 1 : 0);
    if (ns > (uint64_t)INT64_MAX)
        return false;
    *out_ns = neg ? -(int64_t)ns : (int64_t)ns;
    return true;
}
