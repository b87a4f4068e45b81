/* test_cli_flags.c: gtrace's flag tables and what flags.c makes of them
 * (libtrace/cli/flags.h): a bad number, one out of range, a missing value,
 * a bad choice, each refused with one line in its command's style; values
 * stored where the table says; a row's default set as if typed and said in
 * --help; import's exact names; and every table of gtrace well formed,
 * each of its flags with its line in --help.
 * gtrace_flags.sh holds --help to the man page. */
#include "config.h"

#include "flags.h"
#include "gt_test.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct vals {
    int64_t n, ns;
    const char *mode, *later, *out;
    bool force, help;
    int64_t parsed;
} vals;

static bool parse_even(const char *v, void *field)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*end || x % 2)
        return false;
    *(int64_t *)field = x;
    return true;
}

#define V(f) offsetof(vals, f)
static const gt_flag rows[] = {
    {.name = "n", .kind = GT_FLAG_INT, .offset = V(n), .lo = 1, .hi = 9, .wants = "a count", .arg = "N",
     .help = "a count"},
    {.name = "wait", .kind = GT_FLAG_SECONDS, .offset = V(ns), .lo = 0, .hi = 60, .wants = "seconds", .arg = "S",
     .help = "seconds"},
    {.name = "mode", .kind = GT_FLAG_CHOICE, .offset = V(mode), .choices = (const char *const[]){"a", "b", "c", NULL},
     .arg = "M", .help = "a mode"},
    {.name = "later", .kind = GT_FLAG_CHOICE, .offset = V(later), .choices = (const char *const[]){"x", NULL},
     .arg = "L", .help = "checked later", .bits = GT_FLAG_LATER},
    {.name = "even", .kind = GT_FLAG_PARSED, .offset = V(parsed), .parse = parse_even,
     .wants = "an even number, like 2, 4", .arg = "E", .help = "even"},
    {.name = "output", .short_name = 'o', .kind = GT_FLAG_TEXT, .offset = V(out), .arg = "F", .help = "out"},
    {.name = "force", .kind = GT_FLAG_SWITCH, .offset = V(force), .help = "force"},
    {.name = "help", .short_name = 'h', .kind = GT_FLAG_SWITCH, .help = "help", .bits = GT_FLAG_HELP},
};

static gt_flags table(gt_flags_style style, bool exact)
{
    return (gt_flags){.command = "cmd", .synopsis = "cmd X [--n N]", .style = style, .exact = exact, .sep = ' ',
                      .v = rows, .n = (int)(sizeof rows / sizeof rows[0])};
}

/* Parses the arguments after "cmd" (NULL-terminated); *err_text is what it
 * said on its error stream (caller frees). */
static gt_flags_rc parse(const gt_flags *fs, vals *v, gt_flags_result *res, char **err_text, ...)
{
    char *argv[16] = {"cmd"};
    int argc = 1;
    va_list ap;
    va_start(ap, err_text);
    for (const char *a; argc < 15 && (a = va_arg(ap, const char *));)
        argv[argc++] = (char *)a;
    va_end(ap);
    size_t n = 0;
    FILE *err = open_memstream(err_text, &n);
    *v = (vals){.n = -1};
    gt_flags_rc rc = gt_flags_parse(fs, argc, argv, v, res, err);
    fclose(err);
    return rc;
}

static void test_cli_flags__bad_int(void)
{
    gt_flags fs = table(GT_FLAGS_EXPECTED, false);
    vals v;
    gt_flags_result res;
    char *err;
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=x", "t", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: --n=x: expected a count from 1 to 9\n");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n", "3x", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: --n=3x: expected a count from 1 to 9\n");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=", NULL), GT_FLAGS_BAD);
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=99999999999999999999", NULL), GT_FLAGS_BAD);
    free(err);
    CU_ASSERT_EQUAL(v.n, -1); /* nothing stored */
}

static void test_cli_flags__out_of_range(void)
{
    gt_flags fs = table(GT_FLAGS_EXPECTED, false);
    vals v;
    gt_flags_result res;
    char *err;
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=10", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: --n=10: expected a count from 1 to 9\n");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=0", NULL), GT_FLAGS_BAD);
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=9", "t", NULL), GT_FLAGS_OK);
    CU_ASSERT_EQUAL(v.n, 9);
    CU_ASSERT_STRING_EQUAL(err, "");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--wait=60.5", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: --wait=60.5: expected seconds from 0 to 60\n");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--wait=1.5", NULL), GT_FLAGS_OK);
    CU_ASSERT_EQUAL(v.ns, 1500000000);
    free(err);
}

static void test_cli_flags__missing_value(void)
{
    vals v;
    gt_flags_result res;
    char *err;
    for (int exact = 0; exact < 2; exact++) {
        gt_flags fs = table(GT_FLAGS_WANTS_USAGE, exact);
        CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "t", "--n", NULL), GT_FLAGS_UNKNOWN);
        CU_ASSERT(res.missing);
        CU_ASSERT_STRING_EQUAL(res.bad, "--n");
        CU_ASSERT_STRING_EQUAL(err, ""); /* the command says it, in its words */
        free(err);
        CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "-o", NULL), GT_FLAGS_UNKNOWN);
        CU_ASSERT(res.missing);
        free(err);
        CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--bogus", NULL), GT_FLAGS_UNKNOWN);
        CU_ASSERT(!res.missing);
        CU_ASSERT_STRING_EQUAL(res.bad, "--bogus");
        free(err);
    }
}

/* Each style's one line (and the usage after WANTS_USAGE's). */
static void test_cli_flags__styles(void)
{
    vals v;
    gt_flags_result res;
    char *err;
    gt_flags fs = table(GT_FLAGS_WANTS_USAGE, false);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n", "0", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: cmd: --n wants a count from 1 to 9\nusage: gtrace cmd X [--n N]\n");
    free(err);
    fs = table(GT_FLAGS_WANTS_VALUE, false);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--mode", "d", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: cmd: --mode wants a, b or c; not 'd'\n");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--even", "3", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: cmd: --even wants an even number, like 2, 4; not '3'\n");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--wait", "x", NULL), GT_FLAGS_BAD);
    CU_ASSERT_STRING_EQUAL(err, "gtrace: cmd: --wait wants seconds from 0 to 60, not 'x'\n");
    free(err);
}

static void test_cli_flags__values_stored(void)
{
    gt_flags fs = table(GT_FLAGS_EXPECTED, false);
    vals v;
    gt_flags_result res;
    char *err;
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "a", "--mode=b", "--later", "zz", "--even=4", "-ofile", "--forc", "b",
                          NULL), GT_FLAGS_OK);
    CU_ASSERT_STRING_EQUAL(v.mode, "b");
    CU_ASSERT_STRING_EQUAL(v.later, "zz"); /* the command checks it (gt_flag_pick) */
    CU_ASSERT_EQUAL(gt_flag_pick(&rows[3], v.later), -1);
    CU_ASSERT_EQUAL(v.parsed, 4);
    CU_ASSERT_STRING_EQUAL(v.out, "file");
    CU_ASSERT(v.force); /* getopt_long's abbreviation */
    CU_ASSERT_EQUAL(res.n, 2);
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n=3", "--help", "--n=0", NULL), GT_FLAGS_HELP);
    CU_ASSERT_STRING_EQUAL(err, ""); /* nothing after --help is read */
    free(err);
}

/* import's rules: exact names, options anywhere, "--" ends them. */
static void test_cli_flags__exact(void)
{
    gt_flags fs = table(GT_FLAGS_WANTS_USAGE, true);
    vals v;
    gt_flags_result res;
    char *err;
    char *argv[] = {"cmd", "a", "-ob", "c", "--output=d", "--", "--force", NULL};
    FILE *e = fopen("/dev/null", "w");
    v = (vals){0};
    CU_ASSERT_EQUAL(gt_flags_parse(&fs, 7, argv, &v, &res, e), GT_FLAGS_OK);
    fclose(e);
    CU_ASSERT_STRING_EQUAL(v.out, "d");
    CU_ASSERT(!v.force);
    CU_ASSERT_EQUAL(res.first, 1);
    CU_ASSERT_EQUAL(res.n, 3);
    CU_ASSERT_STRING_EQUAL(argv[1], "a");
    CU_ASSERT_STRING_EQUAL(argv[2], "c");
    CU_ASSERT_STRING_EQUAL(argv[3], "--force");
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--forc", NULL), GT_FLAGS_UNKNOWN);
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--force=1", NULL), GT_FLAGS_UNKNOWN);
    CU_ASSERT_STRING_EQUAL(res.bad, "--force=1");
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "-hx", NULL), GT_FLAGS_UNKNOWN);
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "-", "-h", NULL), GT_FLAGS_HELP);
    free(err);
}

static const gt_flags *const tables[] = {
    &gt_record_flag_table, &gt_report_flag_table, &gt_diff_flag_table,   &gt_memory_flag_table, &gt_export_flag_table,
    &gt_import_flag_table, &gt_merge_flag_table,  &gt_recover_flag_table, &gt_info_flag_table,
};

/* Every row of every table: what its kind needs, a name of its own, a line
 * in --help's flag column; every command takes --help. */
static void test_cli_flags__every_table_whole(void)
{
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        const gt_flags *fs = tables[t];
        char *help = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&help, &n);
        gt_flags_help(fs, f);
        fclose(f);
        bool has_help = false;
        for (int i = 0; i < fs->n; i++) {
            const gt_flag *fl = &fs->v[i];
            char name[64], line[80];
            snprintf(name, sizeof name, "--%s", fl->name);
            has_help |= (fl->bits & GT_FLAG_HELP) != 0;
            CU_ASSERT_PTR_NOT_NULL(gt_flags_lookup(fs, name));
            CU_ASSERT_PTR_EQUAL(gt_flags_find(fs, fl->name), fl); /* names of their own */
            for (int j = 0; j < i; j++)
                CU_ASSERT(!fl->short_name || fl->short_name != fs->v[j].short_name);
            /* a text, or on the line of a flag that has one */
            CU_ASSERT(fl->help || (fl->bits & GT_FLAG_SAME_LINE && i > 0));
            CU_ASSERT(fl->kind == GT_FLAG_SWITCH ? fl->arg == NULL : fl->arg != NULL);
            if (fl->kind == GT_FLAG_INT || fl->kind == GT_FLAG_SECONDS)
                CU_ASSERT(fl->wants && fl->lo <= fl->hi);
            if (fl->kind == GT_FLAG_PARSED)
                CU_ASSERT(fl->wants && fl->parse);
            if (fl->kind == GT_FLAG_CHOICE)
                CU_ASSERT(fl->choices && fl->choices[0]);
            /* its line in the flag column: "  -o, --output" or "      --json" */
            if (fl->short_name)
                snprintf(line, sizeof line, "\n  -%c, %s", fl->short_name, name);
            else
                snprintf(line, sizeof line, "\n      %s", name);
            if (fl->bits & GT_FLAG_SAME_LINE)
                snprintf(line, sizeof line, ", %s", name);
            if (!strstr(help, line))
                fprintf(stderr, "%s: %s has no line in --help\n", fs->command ? fs->command : "recording", name);
            CU_ASSERT_PTR_NOT_NULL(strstr(help, line));
        }
        CU_ASSERT(has_help);
        CU_ASSERT(fs->command || !fs->synopsis); /* recording's synopsis is made of its flags */
        CU_ASSERT(!fs->command || fs->synopsis);
        free(help);
    }
}

/* A row's default: in place when the flag is not given, the value typing
 * it gives (every table of gtrace), and at the end of its --help text. */
static void test_cli_flags__defaults(void)
{
    enum { MAX_VALUES = 512 };
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        const gt_flags *fs = tables[t];
        char *help = NULL;
        size_t help_n = 0;
        FILE *hf = open_memstream(&help, &help_n);
        gt_flags_column(fs, hf);
        fclose(hf);
        for (int i = 0; i < fs->n; i++) {
            const gt_flag *fl = &fs->v[i];
            if (!fl->def)
                continue;
            _Alignas(max_align_t) char untyped[MAX_VALUES] = {0}, typed[MAX_VALUES] = {0};
            char opt[96], *argv_none[] = {"gtrace", "x", NULL}, *argv_typed[] = {"gtrace", opt, "x", NULL};
            snprintf(opt, sizeof opt, "--%s=%s", fl->name, fl->def);
            gt_flags_result res;
            CU_ASSERT_EQUAL(gt_flags_parse(fs, 2, argv_none, untyped, &res, stderr), GT_FLAGS_OK);
            CU_ASSERT_EQUAL(gt_flags_parse(fs, 3, argv_typed, typed, &res, stderr), GT_FLAGS_OK);
            size_t size = fl->kind == GT_FLAG_CHOICE || fl->kind == GT_FLAG_TEXT ? sizeof(const char *)
                          : fl->kind == GT_FLAG_SWITCH                         ? sizeof(bool)
                                                                               : sizeof(int64_t);
            if (fl->kind == GT_FLAG_CHOICE || fl->kind == GT_FLAG_TEXT) {
                const char *set = *(const char **)(untyped + fl->offset);
                CU_ASSERT(set && !strcmp(set, fl->def));
            } else if (fl->kind != GT_FLAG_PARSED) {
                CU_ASSERT_EQUAL(memcmp(untyped + fl->offset, typed + fl->offset, size), 0);
            }
            char said[96], name[72];
            snprintf(said, sizeof said, " (default %s)\n", fl->def);
            snprintf(name, sizeof name, "--%s", fl->name);
            const char *line = strstr(help, name);
            /* the next flag's line: "  -o, --output" or "      --json" */
            const char *next = line ? strstr(line, "\n  -") : NULL, *next_long = line ? strstr(line, "\n      --") : NULL;
            if (next_long && (!next || next_long < next))
                next = next_long;
            const char *at = line ? strstr(line, said) : NULL;
            if (!at || (next && at > next))
                fprintf(stderr, "--%s: its --help text does not end with%s", fl->name, said);
            CU_ASSERT(at && (!next || at < next));
        }
        free(help);
    }
    /* a row of this test's table: the default goes through the flag's checks */
    static const gt_flag with_def[] = {
        {.name = "n", .kind = GT_FLAG_INT, .offset = V(n), .lo = 1, .hi = 9, .wants = "a count", .arg = "N",
         .help = "a count", .def = "7"},
    };
    gt_flags fs = {.command = "cmd", .synopsis = "cmd", .style = GT_FLAGS_WANTS_USAGE, .sep = ' ', .v = with_def,
                   .n = 1};
    vals v;
    gt_flags_result res;
    char *err = NULL;
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, NULL), GT_FLAGS_OK);
    CU_ASSERT_EQUAL(v.n, 7);
    free(err);
    CU_ASSERT_EQUAL(parse(&fs, &v, &res, &err, "--n", "3", NULL), GT_FLAGS_OK);
    CU_ASSERT_EQUAL(v.n, 3);
    free(err);
}

static const gt_test_case cli_flags_cases[] = {
    {"test_cli_flags__bad_int", test_cli_flags__bad_int},
    {"test_cli_flags__out_of_range", test_cli_flags__out_of_range},
    {"test_cli_flags__missing_value", test_cli_flags__missing_value},
    {"test_cli_flags__styles", test_cli_flags__styles},
    {"test_cli_flags__values_stored", test_cli_flags__values_stored},
    {"test_cli_flags__exact", test_cli_flags__exact},
    {"test_cli_flags__every_table_whole", test_cli_flags__every_table_whole},
    {"test_cli_flags__defaults", test_cli_flags__defaults},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    static const gt_test_suite suites[] = {{"cli_flags", cli_flags_cases}};
    return gt_test_main(argc, argv, suites, 1);
}
