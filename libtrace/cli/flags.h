/* flags.h: gtrace's flags, each described once: a table per command
 * (flag_tables.c) gives a flag's names, its value's kind and range or
 * choices, what the error says it wants, and its --help line. The parser
 * (over getopt_long, or exact names for import), the value checks and
 * their messages, and the --help text are made from the tables (flags.c).
 * What flags mean together (--at with --format memviz, ...) stays code in
 * the commands, after parsing. tests/integration/gtrace_flags.sh holds
 * --help and gtrace.1 to the tables. Private to libtrace/cli. */
#ifndef GT_CLI_FLAGS_H
#define GT_CLI_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum gt_flag_kind {
    GT_FLAG_SWITCH,  /* no value: bool */
    GT_FLAG_INT,     /* int64_t in [lo, hi] */
    GT_FLAG_SECONDS, /* seconds, fractions allowed, in [lo, hi]: int64_t ns */
    GT_FLAG_CHOICE,  /* one of choices: const char * */
    GT_FLAG_TEXT,    /* a path or a name: const char *, checked where it is used */
    GT_FLAG_PARSED,  /* its own parse function (a time, a window, a list) */
} gt_flag_kind;

/* bits */
#define GT_FLAG_OPTIONAL 1u   /* the value may be left out (--pytorch[=LIST]); parse gets NULL */
#define GT_FLAG_LATER 2u      /* a CHOICE stored as given and checked after parsing (gt_flag_pick), so
                               * that the command's other checks come first */
#define GT_FLAG_NO_RANGE 4u   /* an INT whose message says what it wants without its range */
#define GT_FLAG_SAME_LINE 8u  /* described on the line of the flag before it in --help */
#define GT_FLAG_HELP 16u      /* -h, --help: the parser stops and says so */
#define GT_FLAG_VERSION 32u   /* -V, --version */

typedef struct gt_flag {
    const char *name;            /* the long name without "--": "stacks" */
    char short_name;             /* 'o', or 0 */
    gt_flag_kind kind;
    size_t offset;               /* of its field in the command's values */
    int64_t lo, hi;              /* INT, SECONDS: the range */
    const char *const *choices;  /* CHOICE: NULL-terminated */
    bool (*parse)(const char *v, void *field); /* PARSED: false refuses v */
    const char *wants;           /* what a value is, as the error says it: "milliseconds" (INT, SECONDS: the
                                  * range follows), or all of it; NULL for a CHOICE: its choices */
    const char *arg;             /* the value's name in --help: "N"; NULL for a switch */
    const char *help;            /* the --help text, lines apart by '\n'; NULL with GT_FLAG_SAME_LINE */
    const char *def;             /* the default as a user would type it ("16", "auto"): the parser sets it
                                  * through the flag's own checks, --help ends the text with "(default DEF)";
                                  * NULL: the command's "not given" */
    unsigned bits;
} gt_flag;

/* How a command says a value is wrong, as it always has:
 *   EXPECTED     gtrace: --NAME=VALUE: expected WANTS
 *   WANTS_USAGE  gtrace: CMD: --NAME wants WANTS, then the usage line
 *   WANTS_VALUE  gtrace: CMD: --NAME wants WANTS, not 'VALUE' ("; not" after a WANTS with commas) */
typedef enum gt_flags_style { GT_FLAGS_EXPECTED, GT_FLAGS_WANTS_USAGE, GT_FLAGS_WANTS_VALUE } gt_flags_style;

typedef struct gt_flags {
    const char *command;  /* "report"; NULL: recording (gtrace [options] PROGRAM) */
    const char *synopsis; /* after "gtrace ": "report TRACE [--json] ..."; NULL: made of the flags */
    const char *operands; /* recording's, after the flags: "[--] PROGRAM [ARGS...]" */
    const char *about;    /* --help's lines between the usage and the flags */
    gt_flags_style style;
    bool exact;           /* import's: exact names only, options anywhere, "--" ends them */
    char sep;             /* between a flag and its value in --help: '=' or ' ' */
    const gt_flag *v;
    int n;
} gt_flags;

/* What gt_flags_parse found. */
typedef enum gt_flags_rc {
    GT_FLAGS_OK = 0,
    GT_FLAGS_HELP,    /* -h or --help: nothing after it was read */
    GT_FLAGS_VERSION, /* -V or --version */
    GT_FLAGS_BAD,     /* a value refused; the message is printed */
    GT_FLAGS_UNKNOWN, /* an unknown option or one without its value: the command says so, in its words */
} gt_flags_rc;

typedef struct gt_flags_result {
    int first, n;         /* the operands: argv[first .. first + n) */
    const char *bad;      /* GT_FLAGS_UNKNOWN: the argument as given */
    char bad_short;       /* ... the short option it was, or 0 */
    bool missing;         /* ... a known option without its value */
} gt_flags_result;

/* Parses argv[1 .. argc) against fs into values (fields at the table's
 * offsets: first each row's def, the others as the caller set them); a refused value's one line
 * goes to err. getopt_long's rules (abbreviations, operands moved after the
 * options; a leading '+' in the short options of recording stops at the
 * first operand) unless fs->exact. */
gt_flags_rc gt_flags_parse(const gt_flags *fs, int argc, char **argv, void *values, gt_flags_result *out, FILE *err);

/* The row whose name is arg exactly ("-h", "--help"), or NULL. */
const gt_flag *gt_flags_lookup(const gt_flags *fs, const char *arg);
/* The row of a long name ("format"), or NULL. */
const gt_flag *gt_flags_find(const gt_flags *fs, const char *name);
/* The index of v among the choices of fl, or -1. */
int gt_flag_pick(const gt_flag *fl, const char *v);
/* "chrome, memviz or csv": the choices of fl as the messages list them. */
const char *gt_flag_choices_text(const gt_flag *fl, char *buf, size_t buf_bytes);

/* The usage line(s): "Usage: gtrace SYNOPSIS" and, for recording, its
 * flags wrapped and its operands. */
void gt_flags_usage(const gt_flags *fs, FILE *out);
/* The flag column: "  -o, --output=FILE   text", the text at column 22. */
void gt_flags_column(const gt_flags *fs, FILE *out);
/* --help: the usage, the about lines, the flag column. */
void gt_flags_help(const gt_flags *fs, FILE *out);

/* ---- the commands' values and tables (flag_tables.c) ---- */

typedef struct gt_flight_value {
    const char *text;            /* as given; NULL: none */
    int64_t ns, bytes;           /* one of them above zero */
} gt_flight_value;

typedef struct gt_record_flags {
    const char *output, *cuda, *capture, *summary;
    bool force;
    int64_t n_stack_frames, flush_ms, wait_leftovers_s, delay_ns, duration_ns;
    char pytorch[64];            /* "steps,modules[,ops][,shapes][,backward-every=N]"; empty: not given */
    gt_flight_value flight;
} gt_record_flags;

typedef struct gt_steps_value {
    int64_t first, last;         /* -1: open at that end */
} gt_steps_value;

typedef struct gt_analyze_flags {
    bool json, no_summary, keep_warmup, keep_busy, force;
    gt_steps_value steps;        /* report --steps */
    int64_t top;                 /* report --top; 0: not given */
    double noise_floor;          /* diff, a fraction */
    int64_t at_ns, step, pid;    /* memory, export; -1: not given */
    const char *format, *output, *memviz_format;
} gt_analyze_flags;

typedef struct gt_output_flags {  /* import, merge, recover, info */
    const char *output;
    bool force;
    bool check;                  /* info --check */
} gt_output_flags;

extern const gt_flags gt_record_flag_table, gt_report_flag_table, gt_diff_flag_table, gt_memory_flag_table,
    gt_export_flag_table, gt_import_flag_table, gt_merge_flag_table, gt_recover_flag_table, gt_info_flag_table;

#endif
