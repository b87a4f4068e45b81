/* pickle.c: reads Python pickles (protocols 2 to 5) that hold plain data:
 * dicts, lists, tuples, strings, bytes, ints, floats, booleans and None,
 * which is all a PyTorch memory snapshot is. It is not an unpickler: it
 * knows no classes and calls nothing. Every opcode that would import or call
 * (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, PERSID, EXT...)
 * and every opcode outside that data set is refused with its name and
 * offset. Lengths are checked against what is left of the file, memo
 * indices against the file's size, and nesting against MAX_DEPTH; a
 * truncated file or a memo reference to nothing is an error, never a read
 * past the end. The file is read whole (snapshots are tens of MB). */
#include "import_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    MAX_DEPTH = 256,                        /* containers in containers, and open MARKs */
    MAX_FILE_BYTES = 1024 * 1024 * 1024,    /* 1 GiB */
};

struct pk_doc {
    pk_value **all; size_t n_all, cap_all; /* every value, to free them */
    pk_value *root;
    size_t file_bytes;
};

typedef struct parser {
    const char *path;
    const unsigned char *p; size_t len, pos;
    size_t op_pos;        /* offset of the current opcode */
    const char *op_name;
    pk_doc *doc;
    pk_value **stack; size_t n_stack, cap_stack;
    size_t marks[MAX_DEPTH]; size_t n_marks;
    pk_value **memo; size_t n_memo, cap_memo;
} parser;

static const struct { unsigned char op; const char *name; } op_names[] = {
    {'c', "GLOBAL"}, {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"}, {'b', "BUILD"}, {'i', "INST"},
    {'o', "OBJ"}, {0x81, "NEWOBJ"}, {0x92, "NEWOBJ_EX"}, {'P', "PERSID"}, {'Q', "BINPERSID"},
    {0x82, "EXT1"}, {0x83, "EXT2"}, {0x84, "EXT4"}, {0x97, "NEXT_BUFFER"}, {0x98, "READONLY_BUFFER"},
    {'I', "INT"}, {'L', "LONG"}, {'F', "FLOAT"}, {'S', "STRING"}, {'V', "UNICODE"}, {'d', "DICT"},
    {'l', "LIST"}, {'p', "PUT"}, {'g', "GET"}, {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"},
    {0x91, "FROZENSET"}, {0x96, "BYTEARRAY8"}, {'G', "BINFLOAT"},
};

static int fail(parser *ps, const char *what)
{
    return gt_error_set(GT_ERR_CORRUPT, "%s: %s at offset %zu", ps->path, what, ps->op_pos);
}

static int truncated(parser *ps)
{
    return gt_error_set(GT_ERR_CORRUPT, "%s: truncated: the pickle ends inside %s at offset %zu", ps->path,
                        ps->op_name ? ps->op_name : "an opcode", ps->op_pos);
}

static int need(parser *ps, size_t n)
{
    return n > ps->len - ps->pos ? truncated(ps) : 0;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int new_value(parser *ps, pk_type type, pk_value **out)
{
    pk_doc *d = ps->doc;
    if (d->n_all == d->cap_all) {
        size_t cap = d->cap_all ? d->cap_all * 2 : 256;
        pk_value **a = realloc(d->all, cap * sizeof *a);
        if (!a)
            return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", ps->path);
        d->all = a;
        d->cap_all = cap;
    }
    pk_value *v = calloc(1, sizeof *v);
    if (!v)
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", ps->path);
    v->type = type;
    d->all[d->n_all++] = v;
    *out = v;
    return 0;
}

static int push(parser *ps, pk_value *v)
{
    if (ps->n_stack == ps->cap_stack) {
        size_t cap = ps->cap_stack ? ps->cap_stack * 2 : 64;
        pk_value **s = realloc(ps->stack, cap * sizeof *s);
        if (!s)
            return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", ps->path);
        ps->stack = s;
        ps->cap_stack = cap;
    }
    ps->stack[ps->n_stack++] = v;
    return 0;
}

/* The stack's floor: nothing below the last MARK may be popped. */
static size_t floor_of(const parser *ps) { return ps->n_marks ? ps->marks[ps->n_marks - 1] : 0; }

static int pop(parser *ps, pk_value **out)
{
    if (ps->n_stack <= floor_of(ps))
        return fail(ps, "a pickle takes from an empty stack");
    *out = ps->stack[--ps->n_stack];
    return 0;
}

static int top(parser *ps, pk_value **out)
{
    if (ps->n_stack <= floor_of(ps))
        return fail(ps, "a pickle takes from an empty stack");
    *out = ps->stack[ps->n_stack - 1];
    return 0;
}

static int seq_add(parser *ps, pk_value *c, pk_value *item)
{
    if (c->u.seq.n == c->u.seq.cap) {
        size_t cap = c->u.seq.cap ? c->u.seq.cap * 2 : 8;
        pk_value **v = realloc(c->u.seq.v, cap * sizeof *v);
        if (!v)
            return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", ps->path);
        c->u.seq.v = v;
        c->u.seq.cap = cap;
    }
    c->u.seq.v[c->u.seq.n++] = item;
    int d = (item->type == PK_LIST || item->type == PK_TUPLE || item->type == PK_DICT) ? item->depth + 1 : 1;
    if (d > c->depth)
        c->depth = d;
    if (c->depth > MAX_DEPTH)
        return fail(ps, "containers nested more than 256 deep");
    return 0;
}

static int push_string(parser *ps, pk_type type, size_t n)
{
    pk_value *v;
    int rc;
    if ((rc = need(ps, n)) < 0 || (rc = new_value(ps, type, &v)) < 0)
        return rc;
    if (!(v->u.str.s = malloc(n + 1)))
        return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", ps->path);
    memcpy(v->u.str.s, ps->p + ps->pos, n);
    v->u.str.s[n] = '\0';
    v->u.str.len = n;
    ps->pos += n;
    return push(ps, v);
}

static int push_int(parser *ps, int64_t i, bool big)
{
    pk_value *v;
    int rc = new_value(ps, PK_INT, &v);
    if (rc < 0)
        return rc;
    v->u.i = i;
    v->big = big;
    return push(ps, v);
}

/* LONG1/LONG4: n bytes of little-endian two's complement. */
static int push_long(parser *ps, size_t n)
{
    int rc;
    if ((rc = need(ps, n)) < 0)
        return rc;
    const unsigned char *b = ps->p + ps->pos;
    ps->pos += n;
    if (n == 0)
        return push_int(ps, 0, false);
    if (n == 9 && b[8] == 0) /* an unsigned 64-bit value (device addresses) */
        return push_int(ps, (int64_t)le(b, 8), (b[7] & 0x80) != 0);
    if (n > 8)
        return fail(ps, "an integer wider than 64 bits");
    uint64_t u = le(b, (int)n);
    if (n < 8 && (b[n - 1] & 0x80))
        u |= ~0ull << (8 * n); /* sign-extend */
    return push_int(ps, (int64_t)u, false);
}

/* Items from the last MARK to the top, which is then dropped. */
static int take_marked(parser *ps, size_t *out_from)
{
    if (ps->n_marks == 0)
        return fail(ps, "a pickle uses a MARK it never set");
    *out_from = ps->marks[--ps->n_marks];
    return 0;
}

static int memo_put(parser *ps, uint64_t idx)
{
    pk_value *v = NULL;
    int rc;
    if ((rc = top(ps, &v)) < 0)
        return rc;
    if (idx > ps->len) /* each entry took an opcode: more entries than bytes is a lie */
        return fail(ps, "a memo index beyond the file's size");
    if (idx >= ps->cap_memo) {
        size_t cap = ps->cap_memo ? ps->cap_memo : 64;
        while (cap <= idx)
            cap *= 2;
        pk_value **m = realloc(ps->memo, cap * sizeof *m);
        if (!m)
            return gt_error_set(GT_ERR_NOMEM, "%s: out of memory", ps->path);
        memset(m + ps->cap_memo, 0, (cap - ps->cap_memo) * sizeof *m);
        ps->memo = m;
        ps->cap_memo = cap;
    }
    ps->memo[idx] = v;
    if (idx >= ps->n_memo)
        ps->n_memo = idx + 1;
    return 0;
}

static int memo_get(parser *ps, uint64_t idx)
{
    if (idx >= ps->n_memo || !ps->memo[idx]) {
        char what[96];
        snprintf(what, sizeof what, "memo reference %llu out of range", (unsigned long long)idx);
        return fail(ps, what);
    }
    return push(ps, ps->memo[idx]);
}

static int refuse(parser *ps, unsigned char op)
{
    const char *name = NULL;
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        if (op_names[i].op == op)
            name = op_names[i].name;
    if (name)
        return gt_error_set(GT_ERR_CORRUPT, "%s: pickle opcode %s at offset %zu is not data; refusing to run code",
                            ps->path, name, ps->op_pos);
    return gt_error_set(GT_ERR_CORRUPT, "%s: pickle opcode 0x%02x at offset %zu is not data; refusing to run code",
                        ps->path, op, ps->op_pos);
}

static int run(parser *ps)
{
    int rc = 0;
    pk_value *v, *k, *c;
    size_t from = 0;
    while (ps->pos < ps->len) {
        unsigned char op = ps->p[ps->pos];
        ps->op_pos = ps->pos++;
        ps->op_name = NULL;
        switch (op) {
        case 0x80: /* PROTO */
            ps->op_name = "PROTO";
            if ((rc = need(ps, 1)) < 0)
                return rc;
            if (ps->p[ps->pos] < 2 || ps->p[ps->pos] > 5)
                return fail(ps, "a pickle protocol other than 2 to 5");
            ps->pos++;
            break;
        case 0x95: /* FRAME: a length, then the opcodes it frames */
            ps->op_name = "FRAME";
            if ((rc = need(ps, 8)) < 0)
                return rc;
            if (le(ps->p + ps->pos, 8) > ps->len - ps->pos - 8)
                return truncated(ps);
            ps->pos += 8;
            break;
        case '.': /* STOP */
            if ((rc = pop(ps, &v)) < 0)
                return rc;
            ps->doc->root = v;
            return 0;
        case '(': /* MARK */
            if (ps->n_marks == MAX_DEPTH)
                return fail(ps, "MARKs nested more than 256 deep");
            ps->marks[ps->n_marks++] = ps->n_stack;
            break;
        case '}': case ']': case ')':
            if ((rc = new_value(ps, op == '}' ? PK_DICT : op == ']' ? PK_LIST : PK_TUPLE, &v)) < 0 ||
                (rc = push(ps, v)) < 0)
                return rc;
            break;
        case 's': /* SETITEM */
            if ((rc = pop(ps, &v)) < 0 || (rc = pop(ps, &k)) < 0 || (rc = top(ps, &c)) < 0)
                return rc;
            if (c->type != PK_DICT)
                return fail(ps, "SETITEM on something not a dict");
            if ((rc = seq_add(ps, c, k)) < 0 || (rc = seq_add(ps, c, v)) < 0)
                return rc;
            break;
        case 'u': /* SETITEMS */
            if ((rc = take_marked(ps, &from)) < 0)
                return rc;
            if (from <= floor_of(ps))
                return fail(ps, "SETITEMS without a dict below its MARK");
            c = ps->stack[from - 1];
            if (c->type != PK_DICT || (ps->n_stack - from) % 2)
                return fail(ps, c->type != PK_DICT ? "SETITEMS on something not a dict" : "SETITEMS with a key without value");
            for (size_t i = from; i < ps->n_stack; i++)
                if ((rc = seq_add(ps, c, ps->stack[i])) < 0)
                    return rc;
            ps->n_stack = from;
            break;
        case 'a': /* APPEND */
            if ((rc = pop(ps, &v)) < 0 || (rc = top(ps, &c)) < 0)
                return rc;
            if (c->type != PK_LIST)
                return fail(ps, "APPEND to something not a list");
            if ((rc = seq_add(ps, c, v)) < 0)
                return rc;
            break;
        case 'e': /* APPENDS */
            if ((rc = take_marked(ps, &from)) < 0)
                return rc;
            if (from <= floor_of(ps))
                return fail(ps, "APPENDS without a list below its MARK");
            c = ps->stack[from - 1];
            if (c->type != PK_LIST)
                return fail(ps, "APPENDS to something not a list");
            for (size_t i = from; i < ps->n_stack; i++)
                if ((rc = seq_add(ps, c, ps->stack[i])) < 0)
                    return rc;
            ps->n_stack = from;
            break;
        case 'J': /* BININT */
            ps->op_name = "BININT";
            if ((rc = need(ps, 4)) < 0)
                return rc;
            rc = push_int(ps, (int32_t)(uint32_t)le(ps->p + ps->pos, 4), false);
            ps->pos += 4;
            break;
        case 'K': /* BININT1 */
            ps->op_name = "BININT1";
            if ((rc = need(ps, 1)) < 0)
                return rc;
            rc = push_int(ps, ps->p[ps->pos++], false);
            break;
        case 'M': /* BININT2 */
            ps->op_name = "BININT2";
            if ((rc = need(ps, 2)) < 0)
                return rc;
            rc = push_int(ps, (int64_t)le(ps->p + ps->pos, 2), false);
            ps->pos += 2;
            break;
        case 0x8a: /* LONG1 */
            ps->op_name = "LONG1";
            if ((rc = need(ps, 1)) < 0)
                return rc;
            ps->pos++;
            rc = push_long(ps, ps->p[ps->pos - 1]);
            break;
        case 0x8b: /* LONG4 */
            ps->op_name = "LONG4";
            if ((rc = need(ps, 4)) < 0)
                return rc;
            ps->pos += 4;
            rc = push_long(ps, (size_t)le(ps->p + ps->pos - 4, 4));
            break;
        case 'G': { /* BINFLOAT: big-endian IEEE 754 double */
            ps->op_name = "BINFLOAT";
            if ((rc = need(ps, 8)) < 0)
                return rc;
            uint64_t u = 0;
            for (int i = 0; i < 8; i++)
                u = u << 8 | ps->p[ps->pos + i];
            ps->pos += 8;
            if ((rc = new_value(ps, PK_FLOAT, &v)) < 0)
                return rc;
            memcpy(&v->u.f, &u, sizeof u);
            rc = push(ps, v);
            break;
        }
        case 0x8c: case 'C': case 'U': /* SHORT_BINUNICODE, SHORT_BINBYTES, SHORT_BINSTRING */
            ps->op_name = op == 0x8c ? "SHORT_BINUNICODE" : op == 'C' ? "SHORT_BINBYTES" : "SHORT_BINSTRING";
            if ((rc = need(ps, 1)) < 0)
                return rc;
            ps->pos++;
            rc = push_string(ps, op == 'C' ? PK_BYTES : PK_STR, ps->p[ps->pos - 1]);
            break;
        case 'X': case 'B': case 'T': /* BINUNICODE, BINBYTES, BINSTRING: 4-byte length */
            ps->op_name = op == 'X' ? "BINUNICODE" : op == 'B' ? "BINBYTES" : "BINSTRING";
            if ((rc = need(ps, 4)) < 0)
                return rc;
            ps->pos += 4;
            if (op == 'T' && (ps->p[ps->pos - 1] & 0x80))
                return fail(ps, "a negative BINSTRING length");
            rc = push_string(ps, op == 'B' ? PK_BYTES : PK_STR, (size_t)le(ps->p + ps->pos - 4, 4));
            break;
        case 0x8d: case 0x8e: { /* BINUNICODE8, BINBYTES8 */
            ps->op_name = op == 0x8d ? "BINUNICODE8" : "BINBYTES8";
            if ((rc = need(ps, 8)) < 0)
                return rc;
            uint64_t n = le(ps->p + ps->pos, 8);
            ps->pos += 8;
            if (n > ps->len - ps->pos)
                return truncated(ps);
            rc = push_string(ps, op == 0x8e ? PK_BYTES : PK_STR, (size_t)n);
            break;
        }
        case 'N':
            if ((rc = new_value(ps, PK_NONE, &v)) < 0)
                return rc;
            rc = push(ps, v);
            break;
        case 0x88: case 0x89: /* NEWTRUE, NEWFALSE */
            if ((rc = new_value(ps, PK_BOOL, &v)) < 0)
                return rc;
            v->u.i = op == 0x88;
            rc = push(ps, v);
            break;
        case 0x85: case 0x86: case 0x87: { /* TUPLE1-3 */
            size_t n = (size_t)(op - 0x84);
            if (ps->n_stack < floor_of(ps) + n)
                return fail(ps, "a pickle takes from an empty stack");
            if ((rc = new_value(ps, PK_TUPLE, &c)) < 0)
                return rc;
            for (size_t i = ps->n_stack - n; i < ps->n_stack; i++)
                if ((rc = seq_add(ps, c, ps->stack[i])) < 0)
                    return rc;
            ps->n_stack -= n;
            rc = push(ps, c);
            break;
        }
        case 't': /* TUPLE */
            if ((rc = take_marked(ps, &from)) < 0 || (rc = new_value(ps, PK_TUPLE, &c)) < 0)
                return rc;
            for (size_t i = from; i < ps->n_stack; i++)
                if ((rc = seq_add(ps, c, ps->stack[i])) < 0)
                    return rc;
            ps->n_stack = from;
            rc = push(ps, c);
            break;
        case 0x94: /* MEMOIZE */
            rc = memo_put(ps, ps->n_memo);
            break;
        case 'q': /* BINPUT */
            ps->op_name = "BINPUT";
            if ((rc = need(ps, 1)) < 0)
                return rc;
            rc = memo_put(ps, ps->p[ps->pos++]);
            break;
        case 'r': /* LONG_BINPUT */
            ps->op_name = "LONG_BINPUT";
            if ((rc = need(ps, 4)) < 0)
                return rc;
            ps->pos += 4;
            rc = memo_put(ps, le(ps->p + ps->pos - 4, 4));
            break;
        case 'h': /* BINGET */
            ps->op_name = "BINGET";
            if ((rc = need(ps, 1)) < 0)
                return rc;
            rc = memo_get(ps, ps->p[ps->pos++]);
            break;
        case 'j': /* LONG_BINGET */
            ps->op_name = "LONG_BINGET";
            if ((rc = need(ps, 4)) < 0)
                return rc;
            ps->pos += 4;
            rc = memo_get(ps, le(ps->p + ps->pos - 4, 4));
            break;
        case '0': /* POP */
            rc = pop(ps, &v);
            break;
        case '1': /* POP_MARK */
            if ((rc = take_marked(ps, &from)) == 0)
                ps->n_stack = from;
            break;
        case '2': /* DUP */
            if ((rc = top(ps, &v)) == 0)
                rc = push(ps, v);
            break;
        default:
            return refuse(ps, op);
        }
        if (rc < 0)
            return rc;
    }
    ps->op_pos = ps->pos;
    ps->op_name = "the pickle (no STOP opcode)";
    return truncated(ps);
}

int pk_load(pk_doc **out, const char *path)
{
    parser ps;
    struct stat sb;
    unsigned char *buf = NULL;
    FILE *f = NULL;
    int rc = 0;
    memset(&ps, 0, sizeof ps);
    *out = NULL;
    if (!(f = fopen(path, "rb")))
        return gt_error_set(errno == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        rc = gt_error_set(GT_ERR_IO, "%s: not a regular file", path);
        goto cleanup;
    }
    if (sb.st_size > MAX_FILE_BYTES) {
        rc = gt_error_set(GT_ERR_INVALID, "%s: a snapshot over 1 GiB (%lld bytes) is not read", path,
                          (long long)sb.st_size);
        goto cleanup;
    }
    if (!(buf = malloc(sb.st_size ? (size_t)sb.st_size : 1)) || !(ps.doc = calloc(1, sizeof *ps.doc))) {
        rc = gt_error_set(GT_ERR_NOMEM, "%s: out of memory", path);
        goto cleanup;
    }
    if (fread(buf, 1, (size_t)sb.st_size, f) != (size_t)sb.st_size) {
        rc = gt_error_set(GT_ERR_IO, "%s: cannot read: %s", path, ferror(f) ? strerror(errno) : "short read");
        goto cleanup;
    }
    ps.path = path;
    ps.p = buf;
    ps.len = (size_t)sb.st_size;
    ps.doc->file_bytes = ps.len;
    if ((rc = run(&ps)) < 0)
        goto cleanup;
    *out = ps.doc;
    ps.doc = NULL;
cleanup:
    pk_free(ps.doc);
    free(ps.stack);
    free(ps.memo);
    free(buf);
    if (f)
        fclose(f);
    return rc;
}

void pk_free(pk_doc *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_all; i++) {
        pk_value *v = d->all[i];
        if (v->type == PK_STR || v->type == PK_BYTES)
            free(v->u.str.s);
        else if (v->type == PK_LIST || v->type == PK_TUPLE || v->type == PK_DICT)
            free(v->u.seq.v);
        free(v);
    }
    free(d->all);
    free(d);
}

const pk_value *pk_root(const pk_doc *d) { return d->root; }

size_t pk_file_bytes(const pk_doc *d) { return d->file_bytes; }

const pk_value *pk_get(const pk_value *dict, const char *key)
{
    if (!dict || dict->type != PK_DICT)
        return NULL;
    /* the last of equal keys wins, as in Python */
    for (size_t i = dict->u.seq.n; i >= 2; i -= 2) {
        const pk_value *k = dict->u.seq.v[i - 2];
        if (k->type == PK_STR && !strcmp(k->u.str.s, key))
            return dict->u.seq.v[i - 1];
    }
    return NULL;
}

bool pk_get_int(const pk_value *dict, const char *key, int64_t *out)
{
    const pk_value *v = pk_get(dict, key);
    if (!v || (v->type != PK_INT && v->type != PK_BOOL))
        return false;
    *out = v->u.i;
    return true;
}

const char *pk_get_str(const pk_value *dict, const char *key)
{
    const pk_value *v = pk_get(dict, key);
    return v && v->type == PK_STR ? v->u.str.s : NULL;
}

const pk_value *pk_get_list(const pk_value *dict, const char *key)
{
    const pk_value *v = pk_get(dict, key);
    return v && (v->type == PK_LIST || v->type == PK_TUPLE) ? v : NULL;
}
