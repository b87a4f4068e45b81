/* gt_json.h: the one JSON writer of libtrace, over a FILE *. It keeps the
 * nesting (objects and arrays, up to GT_JSON_MAX_DEPTH) and writes the
 * commas and colons itself; strings are escaped here once (invalid UTF-8
 * becomes U+FFFD); numbers are int64, uint64, thousandths ("1.500") or
 * doubles (an integer where exact, else %.6g; NaN and inf as null). A failed
 * write or an unclosed container is kept and returned by gt_json_finish, so
 * callers check once at the end. It parses nothing (import/json.c reads).
 */
#ifndef GT_JSON_H
#define GT_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GT_JSON_MAX_DEPTH = 32 };

typedef struct gt_json {
    FILE *f;
    int depth;           /* open objects and arrays */
    uint32_t has_items;  /* bit d: the container at depth d has an item (a comma before the next) */
    uint32_t is_object;  /* bit d: the container at depth d is an object */
    bool after_key;      /* a key was written: its value follows, no comma */
    bool spaced;         /* ", " and ": " as Python's json.dump writes them */
    const char *ws;      /* whitespace before the next item or closing bracket */
    int err;             /* the first misuse (GT_ERR_INVALID), 0 if none */
} gt_json;

void gt_json_init(gt_json *j, FILE *f);
/* 0, GT_ERR_INVALID (a container left open, a misuse) or GT_ERR_IO (a write
 * failed); sets no message, the caller names what it was writing. */
int gt_json_finish(gt_json *j);

void gt_json_object(gt_json *j);
void gt_json_array(gt_json *j);
void gt_json_end(gt_json *j); /* closes the innermost object or array */

void gt_json_key(gt_json *j, const char *key);
void gt_json_str(gt_json *j, const char *s); /* NULL writes "" */
void gt_json_int(gt_json *j, int64_t v);
void gt_json_uint(gt_json *j, uint64_t v);
void gt_json_num(gt_json *j, double v);
void gt_json_milli(gt_json *j, int64_t v); /* v / 1000 with three decimals: 1500 is 1.500 */
void gt_json_bool(gt_json *j, bool v);
void gt_json_null(gt_json *j);

/* A key and its value. */
void gt_json_kv_str(gt_json *j, const char *key, const char *s);
void gt_json_kv_int(gt_json *j, const char *key, int64_t v);
void gt_json_kv_num(gt_json *j, const char *key, double v);
void gt_json_kv_bool(gt_json *j, const char *key, bool v);

/* Layout, where a reader wants it: `ws` ("\n") is written before the next
 * item (after its comma), closing bracket or the end; `spaced` switches
 * json.dump's separators on or off from the next item on. */
void gt_json_ws(gt_json *j, const char *ws);
void gt_json_spaced(gt_json *j, bool spaced);

/* Length of the valid UTF-8 sequence at s (1 to 4), 0 if it is not one. */
int gt_utf8_len(const unsigned char *s);

#ifdef __cplusplus
}
#endif

#endif
