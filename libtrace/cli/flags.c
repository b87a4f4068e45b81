/* flags.c: what is made of a command's flag table (flags.h): the parser
 * (getopt_long over options built from the table, or import's exact names),
 * the check of one value and its one-line message in the command's style,
 * and the --help text. The tables themselves are flag_tables.c's; what a
 * value means next to the others is the command's. */
#define _GNU_SOURCE
#include "config.h"

#include "flags.h"

#include "gt_base.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_FLAGS = 32, LONG_ONLY = 256 /* getopt_long's val for a flag without a short name: 256 + row */ };

const gt_flag *gt_flags_find(const gt_flags *fs, const char *name)
{
    for (int i = 0; i < fs->n; i++)
        if (!strcmp(fs->v[i].name, name))
            return &fs->v[i];
    return NULL;
}

const gt_flag *gt_flags_lookup(const gt_flags *fs, const char *arg)
{
    if (arg[0] != '-')
        return NULL;
    if (arg[1] == '-')
        return gt_flags_find(fs, arg + 2);
    for (int i = 0; i < fs->n; i++)
        if (fs->v[i].short_name && arg[1] == fs->v[i].short_name && !arg[2])
            return &fs->v[i];
    return NULL;
}

int gt_flag_pick(const gt_flag *fl, const char *v)
{
    for (int i = 0; fl->choices && fl->choices[i]; i++)
        if (!strcmp(v, fl->choices[i]))
            return i;
    return -1;
}

const char *gt_flag_choices_text(const gt_flag *fl, char *buf, size_t buf_bytes)
{
    size_t at = 0;
    int n = 0;
    buf[0] = '\0';
    while (fl->choices && fl->choices[n])
        n++;
    for (int i = 0; i < n && at < buf_bytes; i++)
        at += (size_t)snprintf(buf + at, buf_bytes - at, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
                               fl->choices[i]);
    return buf;
}

/* What the message says a value of fl must be. */
static const char *wants_text(const gt_flag *fl, char *buf, size_t buf_bytes)
{
    if (fl->kind == GT_FLAG_CHOICE && !fl->wants)
        return gt_flag_choices_text(fl, buf, buf_bytes);
    if ((fl->kind == GT_FLAG_INT || fl->kind == GT_FLAG_SECONDS) && !(fl->bits & GT_FLAG_NO_RANGE)) {
        snprintf(buf, buf_bytes, "%s from %lld to %lld", fl->wants, (long long)fl->lo, (long long)fl->hi);
        return buf;
    }
    return fl->wants;
}

static void say_bad(const gt_flags *fs, const gt_flag *fl, const char *v, FILE *err)
{
    char buf[256];
    const char *wants = wants_text(fl, buf, sizeof buf);
    switch (fs->style) {
    case GT_FLAGS_EXPECTED: fprintf(err, "gtrace: --%s=%s: expected %s\n", fl->name, v, wants); break;
    case GT_FLAGS_WANTS_USAGE:
        fprintf(err, "gtrace: %s: --%s wants %s\nusage: gtrace %s\n", fs->command, fl->name, wants, fs->synopsis);
        break;
    case GT_FLAGS_WANTS_VALUE: /* a list in what it wants: a semicolon sets the value apart */
        fprintf(err, "gtrace: %s: --%s wants %s%s not '%s'\n", fs->command, fl->name, wants,
                strchr(wants, ',') ? ";" : ",", v);
        break;
    }
}

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_seconds(const char *s, int64_t lo, int64_t hi, int64_t *out_ns)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= (double)lo) || v > (double)hi)
        return false;
    *out_ns = (int64_t)(v * 1e9);
    return true;
}

/* Checks v and stores it in fl's field; false after saying why on err. */
static bool set_value(const gt_flags *fs, const gt_flag *fl, const char *v, void *values, FILE *err)
{
    char *field = (char *)values + fl->offset;
    bool ok = true;
    switch (fl->kind) {
    case GT_FLAG_SWITCH: *(bool *)field = true; break;
    case GT_FLAG_INT: ok = parse_int(v, fl->lo, fl->hi, (int64_t *)field); break;
    case GT_FLAG_SECONDS: ok = parse_seconds(v, fl->lo, fl->hi, (int64_t *)field); break;
    case GT_FLAG_CHOICE:
        ok = (fl->bits & GT_FLAG_LATER) || gt_flag_pick(fl, v) >= 0;
        if (ok)
            *(const char **)field = v;
        break;
    case GT_FLAG_TEXT: *(const char **)field = v; break;
    case GT_FLAG_PARSED: ok = fl->parse(v, field); break;
    }
    if (!ok)
        say_bad(fs, fl, v, err);
    return ok;
}

static bool takes_value(const gt_flag *fl)
{
    return fl->kind != GT_FLAG_SWITCH;
}

/* After the row is known: help and version stop, a value is checked. */
static gt_flags_rc found(const gt_flags *fs, const gt_flag *fl, const char *v, void *values, FILE *err)
{
    if (fl->bits & GT_FLAG_HELP)
        return GT_FLAGS_HELP;
    if (fl->bits & GT_FLAG_VERSION)
        return GT_FLAGS_VERSION;
    return set_value(fs, fl, v, values, err) ? GT_FLAGS_OK : GT_FLAGS_BAD;
}

/* import's way: exact names in any order, "--name=V", "-xV", "-x V" and
 * "--name V"; "--" ends the options; the operands are moved to argv[1..]. */
static gt_flags_rc parse_exact(const gt_flags *fs, int argc, char **argv, void *values, gt_flags_result *out,
                               FILE *err)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        const gt_flag *fl = NULL;
        if (!strcmp(a, "--")) {
            while (++i < argc)
                argv[1 + n++] = argv[i];
            break;
        }
        if (a[0] != '-' || !a[1]) {
            argv[1 + n++] = argv[i];
            continue;
        }
        if (a[1] == '-') {
            size_t len = strcspn(a + 2, "=");
            for (int k = 0; k < fs->n && !fl; k++)
                if (strlen(fs->v[k].name) == len && !strncmp(fs->v[k].name, a + 2, len))
                    fl = &fs->v[k];
            v = a[2 + len] ? a + 3 + len : NULL;
        } else {
            for (int k = 0; k < fs->n && !fl; k++)
                if (fs->v[k].short_name == a[1])
                    fl = &fs->v[k];
            v = a[2] ? a + 2 : NULL;
        }
        if (!fl || (!takes_value(fl) && v)) {
            *out = (gt_flags_result){.bad = a};
            return GT_FLAGS_UNKNOWN;
        }
        if (takes_value(fl) && !v) {
            if (i + 1 == argc) {
                *out = (gt_flags_result){.bad = a, .missing = true};
                return GT_FLAGS_UNKNOWN;
            }
            v = argv[++i];
        }
        gt_flags_rc rc = found(fs, fl, v, values, err);
        if (rc != GT_FLAGS_OK)
            return rc;
    }
    out->first = 1;
    out->n = n;
    return GT_FLAGS_OK;
}

/* Each row's default goes through the checks a typed value does, so a
 * table cannot hold one the flag would refuse. */
static void set_defaults(const gt_flags *fs, void *values)
{
    for (int i = 0; i < fs->n; i++)
        if (fs->v[i].def && GT_NEVER(!set_value(fs, &fs->v[i], fs->v[i].def, values, stderr)))
            return;
}

gt_flags_rc gt_flags_parse(const gt_flags *fs, int argc, char **argv, void *values, gt_flags_result *out, FILE *err)
{
    *out = (gt_flags_result){0};
    set_defaults(fs, values);
    if (fs->exact)
        return parse_exact(fs, argc, argv, values, out, err);
    struct option longopts[MAX_FLAGS + 1];
    char shorts[2 * MAX_FLAGS + 3];
    size_t ns = 0;
    /* recording stops at PROGRAM: its options are its own; ':' tells a missing value from an unknown option */
    if (!fs->command)
        shorts[ns++] = '+';
    shorts[ns++] = ':';
    for (int i = 0; i < fs->n && i < MAX_FLAGS; i++) {
        const gt_flag *fl = &fs->v[i];
        int has = !takes_value(fl) ? no_argument : fl->bits & GT_FLAG_OPTIONAL ? optional_argument : required_argument;
        longopts[i] = (struct option){fl->name, has, NULL, fl->short_name ? fl->short_name : LONG_ONLY + i};
        if (fl->short_name) {
            shorts[ns++] = fl->short_name;
            if (has == required_argument)
                shorts[ns++] = ':';
        }
    }
    longopts[fs->n < MAX_FLAGS ? fs->n : MAX_FLAGS] = (struct option){0};
    shorts[ns] = '\0';
    int c;
    optind = 0; /* getopt_long starts afresh: a second parse in one process (the unit tests) reads its own rules */
    opterr = 0;
    while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        const gt_flag *fl = NULL;
        if (c == '?' || c == ':') {
            char bad_short = optopt > 0 && optopt < LONG_ONLY ? (char)optopt : 0;
            *out = (gt_flags_result){.bad = argv[optind - 1], .bad_short = bad_short, .missing = c == ':'};
            return GT_FLAGS_UNKNOWN;
        }
        if (c >= LONG_ONLY)
            fl = &fs->v[c - LONG_ONLY];
        else
            for (int i = 0; i < fs->n && !fl; i++)
                if (fs->v[i].short_name == c)
                    fl = &fs->v[i];
        gt_flags_rc rc = found(fs, fl, optarg, values, err);
        if (rc != GT_FLAGS_OK)
            return rc;
    }
    out->first = optind;
    out->n = argc - optind;
    return GT_FLAGS_OK;
}

/* ---- --help ---- */

/* "--output=FILE", "--pytorch[=LIST]", "--steps A:B". */
static int print_long(const gt_flags *fs, const gt_flag *fl, FILE *out)
{
    if (!fl->arg)
        return fprintf(out, "--%s", fl->name);
    if (fl->bits & GT_FLAG_OPTIONAL)
        return fprintf(out, "--%s[=%s]", fl->name, fl->arg);
    return fprintf(out, "--%s%c%s", fl->name, fs->sep, fl->arg);
}

/* Recording's synopsis: its flags in brackets, wrapped under the first. */
static void print_synopsis(const gt_flags *fs, FILE *out)
{
    enum { WIDTH = 100, INDENT = 14 /* "Usage: gtrace " */ };
    int col = fprintf(out, "Usage: gtrace");
    for (int i = 0; i < fs->n; i++) {
        const gt_flag *fl = &fs->v[i];
        char item[160], choices[128];
        if (fl->bits & (GT_FLAG_HELP | GT_FLAG_VERSION))
            continue;
        if (fl->short_name && fl->arg)
            snprintf(item, sizeof item, "[-%c %s]", fl->short_name, fl->arg);
        else if (fl->kind == GT_FLAG_CHOICE && fl->arg) {
            size_t at = 0;
            for (int k = 0; fl->choices[k] && at < sizeof choices; k++)
                at += (size_t)snprintf(choices + at, sizeof choices - at, "%s%s", k ? "|" : "", fl->choices[k]);
            snprintf(item, sizeof item, "[--%s%c%s]", fl->name, fs->sep, choices);
        } else if (!fl->arg)
            snprintf(item, sizeof item, "[--%s]", fl->name);
        else if (fl->bits & GT_FLAG_OPTIONAL)
            snprintf(item, sizeof item, "[--%s[=%s]]", fl->name, fl->arg);
        else
            snprintf(item, sizeof item, "[--%s%c%s]", fl->name, fs->sep, fl->arg);
        if (col + 1 + (int)strlen(item) > WIDTH)
            col = fprintf(out, "\n%*s", INDENT - 1, "") - 1;
        col += fprintf(out, " %s", item);
    }
    fprintf(out, "\n%*s%s\n", INDENT, "", fs->operands ? fs->operands : "");
}

void gt_flags_usage(const gt_flags *fs, FILE *out)
{
    if (fs->synopsis)
        fprintf(out, "Usage: gtrace %s\n", fs->synopsis);
    else
        print_synopsis(fs, out);
}

/* The text starts at column 22; a longer flag is set apart by two spaces. */
#define COLUMN 22

void gt_flags_column(const gt_flags *fs, FILE *out)
{
    for (int i = 0; i < fs->n; i++) {
        const gt_flag *fl = &fs->v[i];
        if (!fl->help)
            continue; /* on the line before (GT_FLAG_SAME_LINE); gtrace_flags.sh fails a flag without text */
        int n = fl->short_name ? fprintf(out, "  -%c, ", fl->short_name) : fprintf(out, "      ");
        n += print_long(fs, fl, out);
        for (int j = i + 1; j < fs->n && fs->v[j].bits & GT_FLAG_SAME_LINE; j++)
            n += fprintf(out, ", ") + print_long(fs, &fs->v[j], out);
        fprintf(out, "%*s", n < COLUMN - 2 ? COLUMN - n : 2, "");
        for (const char *s = fl->help; *s;) {
            const char *nl = strchr(s, '\n');
            int len = nl ? (int)(nl - s) : (int)strlen(s);
            fprintf(out, "%*s%.*s", s == fl->help ? 0 : COLUMN, "", len, s);
            s += len + (nl != NULL);
            if (!*s && fl->def)
                fprintf(out, " (default %s)", fl->def);
            fputc('\n', out);
        }
    }
}

void gt_flags_help(const gt_flags *fs, FILE *out)
{
    gt_flags_usage(fs, out);
    if (fs->about)
        fputs(fs->about, out);
    gt_flags_column(fs, out);
}
