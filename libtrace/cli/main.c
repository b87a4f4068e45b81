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
    {"report", "report TRACE [--json] [--steps A:B] [--no-summary]   why is it slow, where did memory go", gt_cli_report},
    {"diff", "diff BEFORE AFTER [--json]   what got better or worse between two runs", gt_cli_diff},
    {"memory", "memory TRACE --at TIME | --step N   the allocator's segments and blocks then", gt_cli_memory},
    {"export", "export TRACE --format chrome|memviz|csv [-o PATH]   for Perfetto, memory_viz, spreadsheets", gt_cli_export},
    {"import", "import FILE... -o TRACE [--force]   torch.profiler traces (JSON) and CUDA memory snapshots (pickle)", gt_cli_import},
    {"merge", "merge PART... -o TRACE [--force]   per-rank or per-node traces into one, on one clock", gt_cli_merge},
    {"recover", "recover DIR -o TRACE [--force]   the trace of a killed gtrace, from the parts it left in DIR", gt_cli_recover},
    {"view", "view TRACE [TRACE2]      open the viewer (gtrace-view): timeline, memory, compare", cli_view},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: gtrace [-o FILE] [--cuda=auto|on|off] [--stacks=N] [--flush-ms=N] [--pytorch[=LIST]] [--force]\n"
            "              [--wait-leftovers=SECONDS] [--capture=WINDOW] [--delay=SECONDS]\n"
            "              [--duration=SECONDS] [--flight-recorder=TIME|SIZE] [--summary=auto|on|off]\n"
            "              [--] PROGRAM [ARGS...]\n"
            "       gtrace SUBCOMMAND [ARGS...]\n"
            "\n"
            "Records a trace of PROGRAM (NVTX ranges and memory regions, CUDA calls, kernels,\n"
            "copies and device memory) into an SQLite file, then prints a summary.\n"
            "\n"
            "  -o, --output=FILE   write the trace to FILE (default: gtrace-PROGRAM-N.sqlite)\n"
            "      --force         replace FILE if it exists\n"
            "      --cuda=MODE     auto (default): trace CUDA when a GPU and CUPTI are there;\n"
            "                      on: say so when they are not; off: NVTX only\n"
            "      --stacks=N      record N frames of the call stack of device allocations (default 16, 0: none)\n"
            "      --flush-ms=N    write buffered events at least every N ms (default 200)\n"
            "      --pytorch[=LIST]  a Python PyTorch program marks, unchanged, what LIST names:\n"
            "                      steps (and their phases: data, forward, backward, optimizer),\n"
            "                      modules, ops (ATen ops), shapes (ops with input shapes),\n"
            "                      backward-every=N (module backward ranges on steps 0..N-1\n"
            "                      and every N-th, default 10); default steps,modules\n"
            "      --wait-leftovers=SECONDS  once PROGRAM ends, wait at most SECONDS (default 60)\n"
            "                      for the processes it left running, then write the trace\n"
            "      --capture=WINDOW  record NVTX only in a window: steps:A-B[,C-D], nvtx:NAME,\n"
            "                      signal (SIGUSR1 toggles) or cudaProfilerApi\n"
            "      --delay=SECONDS, --duration=SECONDS  a window in time\n"
            "      --flight-recorder=TIME|SIZE  keep only the last 30s (or 256M) and write it at\n"
            "                      the end, at a crash or OOM, and on SIGUSR2\n"
            "      --summary=MODE  keep the report in the trace, so gtrace report prints it at once:\n"
            "                      auto (default): for traces of 64 MB and more; on; off\n"
            "  -h, --help          show this help\n"
            "  -V, --version       show the version\n"
            "\n"
            "Subcommands:\n");
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
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
        printf("gtrace %s\n", PACKAGE_VERSION);
        return 0;
    }
    for (const gt_cli_command *c = gt_cli_commands; c->name; c++)
        if (!strcmp(argv[1], c->name))
            return c->run(argc - 1, argv + 1);
    return gt_cli_record(argc, argv);
}
