/* main.c: gtrace's entry point: the subcommand table, --help and --version.
 * `gtrace SUBCOMMAND ...` runs a subcommand; anything else is a program to
 * record (`gtrace [options] PROGRAM`; `gtrace -- info` records a program
 * named info). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "flags.h"

/* gtrace view: runs gtrace-view from beside this binary (installed: both in
 * bindir; build tree: ../../viewer), else from PATH. */
static int cli_view(int argc, char **argv)
{
    char exe[PATH_MAX], path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    argv[0] = "gtrace-view";
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            const char *const rel[] = {"/gtrace-view", "/../../viewer/gtrace-view"};
            for (int i = 0; i < 2; i++) {
                snprintf(path, sizeof path, "%s%s", exe, rel[i]);
                if (access(path, X_OK) == 0)
                    execv(path, argv);
            }
        }
    }
    execvp("gtrace-view", argv);
    gt_cli_error("view: cannot run gtrace-view (%s); it is built when configure finds GTK 3", strerror(errno));
    (void)argc;
    return 127;
}

const gt_cli_command gt_cli_commands[] = {
    {"info", "info TRACE             describe a trace (gtrace or nsys export)", gt_cli_info},
    {"report", "report TRACE [--json] [--steps A:B] [--top N] [--no-summary]   why is it slow, where did memory go", gt_cli_report},
    {"diff", "diff BEFORE AFTER [--json]   what got better or worse between two runs", gt_cli_diff},
    {"memory", "memory TRACE --at TIME | --step N   the allocator's segments and blocks then", gt_cli_memory},
    {"export", "export TRACE --format chrome|memviz|csv [-o PATH]   for Perfetto, memory_viz, spreadsheets", gt_cli_export},
    {"import", "import FILE... -o TRACE [--force]   torch.profiler traces (JSON) and CUDA memory snapshots (pickle)", gt_cli_import},
    {"merge", "merge PART... -o TRACE [--force]   per-rank or per-node traces into one, on one clock", gt_cli_merge},
    {"recover", "recover DIR -o TRACE [--force]   the trace of a killed gtrace, from the parts it left in DIR", gt_cli_recover},
    {"view", "view TRACE [TRACE2]      open the viewer (gtrace-view): timeline, memory, compare", cli_view},
    {NULL, NULL, NULL},
};

/* gtrace --help: recording's usage and flags (flag_tables.c), then the subcommands. */
static void usage(FILE *out)
{
    const gt_flags *fs = &gt_record_flag_table;
    gt_flags_usage(fs, out);
    fprintf(out, "       gtrace SUBCOMMAND [ARGS...]\n\n%s\n", fs->about);
    gt_flags_column(fs, out);
    fprintf(out, "\nSubcommands:\n");
    for (const gt_cli_command *c = gt_cli_commands; c->name; c++)
        fprintf(out, "  gtrace %s\n", c->synopsis);
    fprintf(out, "\nThe exit status is PROGRAM's, or 3 when it exited 0 but events were lost; see gtrace(1).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const gt_flag *fl = gt_flags_lookup(&gt_record_flag_table, argv[1]);
    if (fl && fl->bits & GT_FLAG_HELP) {
        usage(stdout);
        return 0;
    }
    if (fl && fl->bits & GT_FLAG_VERSION) {
        printf("gtrace %s\n", PACKAGE_VERSION);
        return 0;
    }
    for (const gt_cli_command *c = gt_cli_commands; c->name; c++)
        if (!strcmp(argv[1], c->name))
            return c->run(argc - 1, argv + 1);
    return gt_cli_record(argc, argv);
}
