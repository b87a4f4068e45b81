/* import_cmd.c: `gtrace import FILE... -o TRACE`: PyTorch's own files (the
 * Kineto traces torch.profiler writes, and CUDA memory snapshot pickles)
 * made into one gtrace trace through libtrace/import, then a line per input
 * on what it became. The formats and their mapping are import's; where the
 * trace may go is output.c's rule (never over an input, a device, a FIFO). */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "flags.h"
#include "gt_import.h"

#define IMPORT_SYNOPSIS (gt_import_flag_table.synopsis)
enum { EXIT_IMPORT_USAGE = 2 };

static int usage(const char *problem)
{
    if (problem)
        gt_cli_error("import: %s", problem);
    fprintf(stderr, "usage: gtrace %s\n", IMPORT_SYNOPSIS);
    return EXIT_IMPORT_USAGE;
}

/* ", N what" when N is not zero. */
static void count(FILE *f, bool *first, int64_t n, const char *what)
{
    if (n == 0)
        return;
    fprintf(f, "%s%lld %s", *first ? "" : ", ", (long long)n, what);
    *first = false;
}

static void print_stats(FILE *f, const char *path, const gt_import_stats *s)
{
    bool first = true;
    fprintf(f, "  %s: %s, pid %lld", path, s->format == GT_IMPORT_KINETO ? "torch.profiler trace" : "memory snapshot",
            (long long)s->pid);
    if (s->rank >= 0)
        fprintf(f, ", rank %d", (int)s->rank);
    fputs("\n    ", f);
    if (s->format == GT_IMPORT_KINETO) {
        count(f, &first, s->n_cpu_ops, "cpu ops");
        count(f, &first, s->n_annotations, "annotations");
        count(f, &first, s->n_steps, "steps");
        count(f, &first, s->n_comms, "collectives");
        count(f, &first, s->n_python, "python functions");
        count(f, &first, s->n_kernels, "kernels");
        count(f, &first, s->n_memcpy, "memcpys");
        count(f, &first, s->n_memset, "memsets");
        count(f, &first, s->n_runtime, "runtime calls");
        count(f, &first, s->n_driver, "driver calls");
        count(f, &first, s->n_sync, "synchronizations");
        count(f, &first, s->n_marks, "marks");
        count(f, &first, s->n_memory, "memory events");
        count(f, &first, s->n_memory_other, "memory events of another device (not imported)");
        count(f, &first, s->n_skipped, "events of no table (skipped)");
        if (first)
            fputs("no events", f);
        if (s->n_memory)
            fprintf(f, "\n    at the last memory event: %lld bytes allocated, %lld reserved",
                    (long long)s->last_allocated, (long long)s->last_reserved);
    } else {
        count(f, &first, s->n_segments, "segments");
        count(f, &first, s->n_blocks, "allocated blocks");
        count(f, &first, s->n_actions, "allocator actions");
        count(f, &first, s->n_ooms, "out-of-memory events");
        count(f, &first, s->n_heap_events, "memory events written");
        if (first)
            fputs("an empty snapshot", f);
    }
    fputc('\n', f);
}

int gt_cli_import(int argc, char **argv)
{
    gt_output_flags f = {0};
    gt_import_stats *stats = NULL;
    gt_flags_result res;
    /* options and files in any order; "--" ends the options */
    switch (gt_flags_parse(&gt_import_flag_table, argc, argv, &f, &res, stderr)) {
    case GT_FLAGS_OK: break;
    case GT_FLAGS_HELP: gt_flags_help(&gt_import_flag_table, stdout); return 0;
    case GT_FLAGS_UNKNOWN:
        if (res.missing)
            return usage("-o wants the trace to write");
        gt_cli_error("import: unknown option '%s'", res.bad);
        return usage(NULL);
    default: return EXIT_IMPORT_USAGE;
    }
    const char *output = f.output;
    bool force = f.force;
    const char **inputs = (const char **)argv + res.first;
    size_t n = (size_t)res.n;
    if (n == 0 || !output || !*output)
        return usage(n == 0 ? "which files? (torch.profiler traces, memory snapshots)" : "-o TRACE is required");
    char target[PATH_MAX], tmp[PATH_MAX + 64];
    if (gt_cli_check_output(output, force, inputs, n, target, sizeof target) != 0) {
        gt_cli_error("import: %s", gt_error_last());
        return 1;
    }
    /* written beside what it replaces, installed only when whole, by the same rule */
    const char *slash = strrchr(target, '/');
    int dir_n = slash ? (int)(slash - target) + 1 : 0;
    snprintf(tmp, sizeof tmp, "%.*s.%s.gtrace-import-%ld", dir_n, target, target + dir_n, (long)getpid());
    gt_cli_remove_trace(tmp);
    int rc = gt_import_files(&stats, tmp, inputs, n, GT_IMPORT_OVERWRITE);
    if (rc == 0)
        rc = gt_cli_install(tmp, target, force);
    if (rc < 0) {
        gt_cli_error("import: %s", gt_error_last());
        gt_cli_remove_trace(tmp);
        free(stats);
        return 1;
    }
    printf("imported %zu file%s into %s\n", n, n == 1 ? "" : "s", output);
    for (size_t i = 0; i < n; i++)
        print_stats(stdout, inputs[i], &stats[i]);
    free(stats);
    if (fflush(stdout) != 0) {
        gt_cli_error("import: cannot write the summary");
        return 1;
    }
    return 0;
}
