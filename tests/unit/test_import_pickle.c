/* test_import_pickle.c: libtrace/import's data-only pickle reader and the
 * snapshot importer: every data opcode read to its value, every code opcode
 * refused by name and offset, every prefix of a real snapshot pickle refused
 * as truncated (never read past), the bounds on nesting, lengths and the
 * memo; the fixture snapshots imported with the counts they hold, and a
 * snapshot whose memo repeats its lists refused; the address map the replay
 * keeps its segments and blocks in. */
#include "config.h"

#include "addr_map.h"
#include "gt_test.h"
#include "import_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *write_file(const char *name, const void *bytes, size_t n)
{
    char *p = gt_test_path(name);
    FILE *f = fopen(p, "wb");
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_FATAL(fwrite(bytes, 1, n, f) == n);
    fclose(f);
    return p;
}

static int load_bytes(pk_doc **out, const void *bytes, size_t n)
{
    char *p = write_file("t.pickle", bytes, n);
    int rc = pk_load(out, p);
    free(p);
    return rc;
}

/* {'i': [BININT -5, BININT1 200, BININT2 65000, LONG1 -300, LONG1 2**64-1],
 *  'f': 1.5, 's': 'hé', 'b': b'\x00\x01', 't': (None, True, False),
 *  'u': ('x', 'y'), 'm': <memo of 's' value>}, protocol 4 with a FRAME. */
static const unsigned char data_pickle[] = {
    0x80, 0x04, 0x95, 0x5a, 0, 0, 0, 0, 0, 0, 0,            /* PROTO 4, FRAME 90 */
    '}', 0x94, '(',                                         /* EMPTY_DICT MEMOIZE MARK */
    0x8c, 1, 'i', ']', '(',                                 /* 'i': [ ... */
    'J', 0xfb, 0xff, 0xff, 0xff,                            /* BININT -5 */
    'K', 200,                                               /* BININT1 200 */
    'M', 0xe8, 0xfd,                                        /* BININT2 65000 */
    0x8a, 2, 0xd4, 0xfe,                                    /* LONG1 -300 */
    0x8a, 9, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, /* LONG1 2**64-1 */
    'e',                                                    /* APPENDS */
    0x8c, 1, 'f', 'G', 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,        /* 'f': 1.5 */
    0x8c, 1, 's', 'X', 3, 0, 0, 0, 'h', 0xc3, 0xa9, 0x94,   /* 's': 'hé' MEMOIZE (1) */
    0x8c, 1, 'b', 'C', 2, 0, 1,                             /* 'b': b'\0\1' */
    0x8c, 1, 't', 'N', 0x88, 0x89, 0x87,                    /* 't': TUPLE3(None, True, False) */
    0x8c, 1, 'u', '(', 0x8c, 1, 'x', 0x8c, 1, 'y', 't',     /* 'u': MARK 'x' 'y' TUPLE */
    0x8c, 1, 'm', 'h', 1,                                   /* 'm': BINGET 1 */
    'u', '.',                                               /* SETITEMS STOP */
};

static void test_import_pickle__data(void)
{
    pk_doc *d = NULL;
    CU_ASSERT_EQUAL_FATAL(load_bytes(&d, data_pickle, sizeof data_pickle), 0);
    const pk_value *root = pk_root(d);
    CU_ASSERT_EQUAL_FATAL(root->type, PK_DICT);
    const pk_value *ints = pk_get_list(root, "i");
    CU_ASSERT_FATAL(ints != NULL && ints->u.seq.n == 5);
    CU_ASSERT_EQUAL(ints->u.seq.v[0]->u.i, -5);
    CU_ASSERT_EQUAL(ints->u.seq.v[1]->u.i, 200);
    CU_ASSERT_EQUAL(ints->u.seq.v[2]->u.i, 65000);
    CU_ASSERT_EQUAL(ints->u.seq.v[3]->u.i, -300);
    CU_ASSERT_EQUAL((uint64_t)ints->u.seq.v[4]->u.i, UINT64_MAX);
    CU_ASSERT(ints->u.seq.v[4]->big);
    const pk_value *f = pk_get(root, "f");
    CU_ASSERT(f && f->type == PK_FLOAT && f->u.f == 1.5);
    CU_ASSERT_STRING_EQUAL(pk_get_str(root, "s"), "h\xc3\xa9");
    const pk_value *b = pk_get(root, "b");
    CU_ASSERT(b && b->type == PK_BYTES && b->u.str.len == 2 && b->u.str.s[1] == 1);
    const pk_value *t = pk_get(root, "t");
    CU_ASSERT_FATAL(t && t->type == PK_TUPLE && t->u.seq.n == 3);
    CU_ASSERT(t->u.seq.v[0]->type == PK_NONE && t->u.seq.v[1]->u.i == 1 && t->u.seq.v[2]->u.i == 0);
    const pk_value *u = pk_get_list(root, "u");
    CU_ASSERT(u && u->u.seq.n == 2 && !strcmp(u->u.seq.v[1]->u.str.s, "y"));
    CU_ASSERT_PTR_EQUAL(pk_get(root, "m"), pk_get(root, "s")); /* the memo shares the value */
    CU_ASSERT_PTR_NULL(pk_get(root, "absent"));
    pk_free(d);
}

/* Each opcode that imports, calls or builds objects: refused by name at its
 * offset, after a valid start. */
static void test_import_pickle__refuses_code(void)
{
    static const struct { unsigned char op; const char *name; } ops[] = {
        {'c', "GLOBAL"}, {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"}, {'b', "BUILD"}, {'i', "INST"},
        {'o', "OBJ"}, {0x81, "NEWOBJ"}, {0x92, "NEWOBJ_EX"}, {'P', "PERSID"}, {'Q', "BINPERSID"},
        {0x82, "EXT1"}, {'I', "INT"}, {'S', "STRING"}, {0x8f, "EMPTY_SET"}, {0xff, "0xff"},
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        unsigned char p[] = {0x80, 0x02, ']', ops[i].op, 'o', 's', '\n', '.'};
        pk_doc *d = NULL;
        char want[128];
        CU_ASSERT_EQUAL(load_bytes(&d, p, sizeof p), GT_ERR_CORRUPT);
        CU_ASSERT_PTR_NULL(d);
        snprintf(want, sizeof want, "pickle opcode %s at offset 3 is not data; refusing to run code", ops[i].name);
        if (!strstr(gt_error_last(), want)) {
            fprintf(stderr, "got '%s', want '%s'\n", gt_error_last(), want);
            CU_FAIL("message");
        }
    }
}

/* Every proper prefix of a real snapshot pickle is an error, never a crash
 * or a read past the end; the whole file loads. */
static void test_import_pickle__every_prefix_truncated(void)
{
    char *path = gt_test_fixture("pytorch/snapshot_p4.pickle");
    FILE *f = fopen(path, "rb");
    CU_ASSERT_FATAL(f != NULL);
    static unsigned char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CU_ASSERT_FATAL(n > 100 && n < sizeof buf);
    pk_doc *d = NULL;
    for (size_t k = 0; k < n; k++) {
        CU_ASSERT_EQUAL(load_bytes(&d, buf, k), GT_ERR_CORRUPT);
        CU_ASSERT_PTR_NULL(d);
    }
    CU_ASSERT_EQUAL(load_bytes(&d, buf, n), 0);
    CU_ASSERT(d && pk_get_list(pk_root(d), "segments") && pk_get_list(pk_root(d), "segments")->u.seq.n == 2);
    pk_free(d);
    free(path);
}

static void test_import_pickle__bounds(void)
{
    static const struct { const unsigned char *p; size_t n; const char *says; } cases[] = {
        {(const unsigned char *)"\x80\x02h\x05.", 5, "memo reference 5 out of range"},
        {(const unsigned char *)"\x80\x02]r\xff\xff\xff\x7f.", 9, "memo index beyond the file's size"},
        {(const unsigned char *)"\x80\x04\x8c\x05" "ab.", 7, "truncated"},
        {(const unsigned char *)"\x80\x02X\xff\xff\xff\xff.", 8, "truncated"},
        {(const unsigned char *)"\x80\x02T\x00\x00\x00\x80.", 8, "negative BINSTRING length"},
        {(const unsigned char *)"\x80\x02\x8a\x0a\0\0\0\0\0\0\0\0\0\x01.", 15, "wider than 64 bits"},
        {(const unsigned char *)"\x80\x02K\x01K\x02" "a.", 8, "APPEND to something not a list"},
        {(const unsigned char *)"\x80\x02K\x01K\x02" "K\x03s.", 10, "SETITEM on something not a dict"},
        {(const unsigned char *)"\x80\x02.", 3, "empty stack"},
        {(const unsigned char *)"\x80\x02(.", 4, "empty stack"},
        {(const unsigned char *)"\x80\x02]e.", 5, "MARK it never set"},
        {(const unsigned char *)"\x80\x06}.", 4, "protocol other than 2 to 5"},
        {(const unsigned char *)"\x80\x02}", 3, "no STOP"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_doc *d = NULL;
        CU_ASSERT_EQUAL(load_bytes(&d, cases[i].p, cases[i].n), GT_ERR_CORRUPT);
        if (!strstr(gt_error_last(), cases[i].says)) {
            fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, gt_error_last(), cases[i].says);
            CU_FAIL("message");
        }
    }
    /* 300 nested lists: refused at the 257th level */
    unsigned char deep[2 + 300 + 300 + 1];
    size_t k = 0;
    deep[k++] = 0x80;
    deep[k++] = 0x02;
    for (int i = 0; i < 300; i++)
        deep[k++] = ']';
    for (int i = 0; i < 299; i++)
        deep[k++] = 'a';
    deep[k++] = '.';
    pk_doc *d = NULL;
    CU_ASSERT_EQUAL(load_bytes(&d, deep, k), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "nested more than 256 deep"));
    /* 257 open MARKs */
    unsigned char marks[2 + 257 + 1];
    marks[0] = 0x80;
    marks[1] = 0x02;
    memset(marks + 2, '(', 257);
    marks[259] = '.';
    CU_ASSERT_EQUAL(load_bytes(&d, marks, sizeof marks), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "MARKs nested more than 256 deep"));
}

/* The fixture snapshots, imported: what they hold, by count. */
static void test_import_pickle__snapshot_import(void)
{
    char *p4 = gt_test_fixture("pytorch/snapshot_p4.pickle");
    char *p2 = gt_test_fixture("pytorch/snapshot_p2.pickle");
    char *out = gt_test_path("snap.sqlite");
    const char *inputs[] = {p4, p2};
    gt_import_stats *st = NULL;
    gt_import_format fmt;
    CU_ASSERT(gt_import_detect(p4, &fmt) == 0 && fmt == GT_IMPORT_SNAPSHOT);
    CU_ASSERT_EQUAL_FATAL(gt_import_files(&st, out, inputs, 2, 0), 0);
    CU_ASSERT_EQUAL(st[0].format, GT_IMPORT_SNAPSHOT);
    CU_ASSERT_EQUAL(st[0].n_segments, 2);
    CU_ASSERT_EQUAL(st[0].n_blocks, 3); /* active_allocated; not the one pending its free */
    CU_ASSERT_EQUAL(st[0].n_actions, 10);
    CU_ASSERT_EQUAL(st[0].n_ooms, 1);
    CU_ASSERT_EQUAL(st[1].n_segments, 2);
    CU_ASSERT_EQUAL(st[1].n_blocks, 2);
    CU_ASSERT_EQUAL(st[1].n_actions, 7);
    CU_ASSERT_NOT_EQUAL(st[0].pid, st[1].pid);
    /* the rows are in the trace, on a thread per device */
    gt_trace *t = NULL;
    int64_t n_heap = -1;
    CU_ASSERT_EQUAL_FATAL(gt_trace_open(&t, out, 0), 0);
    CU_ASSERT_EQUAL(gt_trace_count(t, GT_EV_HEAP, &n_heap), 0);
    CU_ASSERT_EQUAL(n_heap, st[0].n_heap_events + st[1].n_heap_events);
    size_t n_threads = 0;
    gt_trace_threads(t, &n_threads);
    CU_ASSERT_EQUAL(n_threads, 3); /* p4: cuda:0; p2: cuda:0, cuda:1 */
    gt_trace_free(t);
    /* the output exists now: without OVERWRITE it is kept */
    CU_ASSERT_EQUAL(gt_import_files(NULL, out, inputs, 1, 0), GT_ERR_EXISTS);
    free(st);
    free(out);
    free(p4);
    free(p2);
}

/* {'segments': [], 'device_traces': [L] * k}, L = [E] * m, E one
 * {'action': 'snapshot', 'size': 0}: about 2 (k + m) bytes naming k x m
 * actions, as Python's pickle writes a list repeated through its memo. */
static size_t repeated_traces(unsigned char *p, size_t k, size_t m)
{
    static const unsigned char head[] = {
        0x80, 0x04, '}', '(', 0x8c, 8, 's', 'e', 'g', 'm', 'e', 'n', 't', 's', ']',
        0x8c, 13, 'd', 'e', 'v', 'i', 'c', 'e', '_', 't', 'r', 'a', 'c', 'e', 's', ']', '(',
        ']', 0x94, '(',                                            /* L: memo 0 */
        '}', 0x94, '(', 0x8c, 6, 'a', 'c', 't', 'i', 'o', 'n',     /* E: memo 1 */
        0x8c, 8, 's', 'n', 'a', 'p', 's', 'h', 'o', 't', 0x8c, 4, 's', 'i', 'z', 'e', 'K', 0, 'u',
    };
    size_t n = sizeof head;
    memcpy(p, head, n);
    for (size_t i = 1; i < m; i++)
        p[n++] = 'h', p[n++] = 1;
    p[n++] = 'e';
    for (size_t i = 1; i < k; i++)
        p[n++] = 'h', p[n++] = 0;
    p[n++] = 'e';
    p[n++] = 'u';
    p[n++] = '.';
    return n;
}

/* Work is bounded by the file's size: one device's 1000 actions import;
 * the same list on 100 devices (100,000 actions from 2.3 KB) is refused. */
static void test_import_pickle__memo_repeats(void)
{
    static unsigned char buf[8192];
    char *out = gt_test_path("repeat.sqlite");
    gt_import_stats *st = NULL;
    char *in = write_file("one.pickle", buf, repeated_traces(buf, 1, 1000));
    const char *inputs[] = {in};
    CU_ASSERT_EQUAL_FATAL(gt_import_files(&st, out, inputs, 1, 0), 0);
    CU_ASSERT_EQUAL(st[0].n_actions, 1000);
    free(st);
    free(in);
    remove(out);
    size_t n = repeated_traces(buf, 100, 1000);
    in = write_file("many.pickle", buf, n);
    inputs[0] = in;
    CU_ASSERT(n < 2400);
    CU_ASSERT_EQUAL(gt_import_files(NULL, out, inputs, 1, 0), GT_ERR_CORRUPT);
    CU_ASSERT_PTR_NOT_NULL(strstr(gt_error_last(), "many.pickle: lists repeated through the pickle's memo"));
    CU_ASSERT_PTR_NULL(strchr(gt_error_last(), '\n'));
    FILE *f = fopen(out, "rb");
    CU_ASSERT_PTR_NULL(f); /* nothing written */
    if (f)
        fclose(f);
    free(in);
    free(out);
}

/* The address map against a sorted array, over inserts, replacements and
 * removals in random order, then downwards: every lookup agrees. */
static void test_import_pickle__addr_map(void)
{
    enum { N = 4000 };
    static uint64_t ref[N]; /* sorted; bytes = addr / 16 */
    size_t n_ref = 0;
    addr_map m;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    am_init(&m);
    for (int round = 0; round < 3 * N; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t addr = (round < 2 * N ? x % (2 * N) : (uint64_t)(3 * N - round)) * 16;
        size_t i = 0;
        while (i < n_ref && ref[i] < addr)
            i++;
        bool there = i < n_ref && ref[i] == addr;
        if (round < 2 * N && (x >> 40) % 3 == 0) {
            am_remove(&m, addr);
            if (there)
                memmove(ref + i, ref + i + 1, (--n_ref - i) * sizeof *ref);
        } else if (n_ref < N) {
            CU_ASSERT_EQUAL_FATAL(am_put(&m, &(am_item){addr, (int64_t)(addr / 16), 0, NULL}), 0);
            if (!there) {
                memmove(ref + i + 1, ref + i, (n_ref++ - i) * sizeof *ref);
                ref[i] = addr;
            }
        }
        CU_ASSERT_EQUAL_FATAL(m.n, n_ref);
        uint64_t q = (x >> 20) % (2 * N * 16 + 32);
        size_t j = 0;
        while (j < n_ref && ref[j] <= q)
            j++;
        am_item *fl = am_floor(&m, q), *ce = am_ceil(&m, q), *fi = am_find(&m, q);
        CU_ASSERT_FATAL(j ? fl && fl->addr == ref[j - 1] && fl->bytes == (int64_t)(ref[j - 1] / 16) : !fl);
        size_t c = j && ref[j - 1] == q ? j - 1 : j;
        CU_ASSERT_FATAL(c < n_ref ? ce && ce->addr == ref[c] : !ce);
        CU_ASSERT_FATAL(j && ref[j - 1] == q ? fi == fl : !fi);
    }
    size_t k = 0;
    for (am_item *it = am_ceil(&m, 0); it; it = am_next(&m, it))
        CU_ASSERT_FATAL(k < n_ref && it->addr == ref[k++]);
    CU_ASSERT_EQUAL(k, n_ref);
    am_free(&m);
}

static const gt_test_case cases[] = {
    {"test_import_pickle__data", test_import_pickle__data},
    {"test_import_pickle__refuses_code", test_import_pickle__refuses_code},
    {"test_import_pickle__every_prefix_truncated", test_import_pickle__every_prefix_truncated},
    {"test_import_pickle__bounds", test_import_pickle__bounds},
    {"test_import_pickle__snapshot_import", test_import_pickle__snapshot_import},
    {"test_import_pickle__memo_repeats", test_import_pickle__memo_repeats},
    {"test_import_pickle__addr_map", test_import_pickle__addr_map},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    gt_test_suite suites[] = {{"import_pickle", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
