/* recover.c: `gtrace recover DIR -o TRACE [--force]`: the trace of a run
 * whose launcher died before it made one (kill -9, an out-of-memory kill, a
 * lost node). Its collector wrote each traced process's events into a part
 * in the hidden parts folder beside the output (.gtrace-parts-XXXXXX, see
 * libtrace/record/run.c); every committed batch survives in the part and its -wal. The
 * parts become one trace as the launcher would have made it
 * (gt_record_assemble), less what only the launcher knew: its options and the
 * end-of-run clock pair (so `gtrace merge` corrects such a trace's offset
 * only). The folder is removed once empty. It refuses a folder whose parts
 * a running gtrace still writes. It does not import CUDA memory snapshots
 * left in the folder (it names them, for `gtrace import`).
 */
#define _GNU_SOURCE
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "flags.h"

/* SQLite's unix VFS: every connection to a WAL database holds a shared lock
 * on this byte of the -shm file while it is open (UNIX_SHM_DMS). */
#define SHM_DMS_OFFSET 128

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* The pid of a process that has `shm` open through SQLite, or 0. */
static pid_t shm_holder(const char *shm)
{
    int fd = open(shm, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = SHM_DMS_OFFSET, .l_len = 1};
    pid_t pid = fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK ? lk.l_pid : 0;
    close(fd);
    return pid;
}

typedef struct folder_scan {
    int n_parts;
    int n_snapshots;      /* pytorch-*.pickle: not parts */
    pid_t writer;         /* a process still writing a part, or 0 */
} folder_scan;

static int scan_folder(const char *dir, folder_scan *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(dir);
    if (!d)
        return gt_error_set(errno == ENOENT ? GT_ERR_NOTFOUND : GT_ERR_IO, "%s: %s", dir,
                            errno == ENOTDIR ? "not a directory (give the parts folder, .gtrace-parts-XXXXXX)"
                                             : strerror(errno));
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (ends_with(e->d_name, ".sqlite")) {
            out->n_parts++;
        } else if (ends_with(e->d_name, ".sqlite-shm") && !out->writer) {
            out->writer = shm_holder(path);
        } else if (!strncmp(e->d_name, "pytorch-", 8) && ends_with(e->d_name, ".pickle")) {
            out->n_snapshots++;
        }
    }
    closedir(d);
    return 0;
}

/* What the parts say of the run: the root process's command line and pid
 * (its part holds them under pid 0 too), the wall clock at the trace's zero. */
typedef struct run_facts {
    char command_line[4096];
    char program[256];
    int64_t root_pid;
    int64_t utc_t0_ns;
} run_facts;

static void read_facts(const char *dir, run_facts *f)
{
    memset(f, 0, sizeof *f);
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!ends_with(e->d_name, ".sqlite"))
            continue;
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        gt_trace *t = NULL;
        if (gt_trace_open(&t, path, 0) != 0)
            continue; /* the assembly says which part it skips, and why */
        int64_t utc = 0;
        if (gt_trace_session_start(t, &utc) == 0 && utc > 0 && (f->utc_t0_ns == 0 || utc < f->utc_t0_ns))
            f->utc_t0_ns = utc;
        const char *cmd = gt_trace_meta(t, "command_line");
        size_t n = 0;
        const gt_process *procs = gt_trace_processes(t, &n);
        if (cmd && !f->command_line[0] && n > 0) {
            snprintf(f->command_line, sizeof f->command_line, "%s", cmd);
            snprintf(f->program, sizeof f->program, "%s", procs[0].name ? procs[0].name : "");
            f->root_pid = procs[0].pid;
        }
        gt_trace_free(t);
    }
    if (d)
        closedir(d);
}

/* The usage and what the command does, after a usage error. */
static void recover_usage(FILE *out)
{
    gt_flags_usage(&gt_recover_flag_table, out);
    fputs(gt_recover_flag_table.about, out);
}

int gt_cli_recover(int argc, char **argv)
{
    gt_output_flags given = {0};
    gt_flags_result res;
    switch (gt_flags_parse(&gt_recover_flag_table, argc, argv, &given, &res, stderr)) {
    case GT_FLAGS_OK: break;
    case GT_FLAGS_HELP: gt_flags_help(&gt_recover_flag_table, stdout); return 0;
    case GT_FLAGS_UNKNOWN:
        gt_cli_error("recover: unknown option '%s'", res.bad);
        recover_usage(stderr);
        return 2;
    default: return 2;
    }
    const char *output = given.output;
    bool force = given.force;
    if (res.n != 1 || !output) {
        gt_cli_error("recover: %s", res.n < 1 ? "no parts folder given"
                                    : res.n > 1 ? "one parts folder at a time" : "no output given (-o TRACE)");
        recover_usage(stderr);
        return 2;
    }
    const char *dir = argv[res.first];
    folder_scan scan;
    if (scan_folder(dir, &scan) != 0) {
        gt_cli_error("%s", gt_error_last());
        return 1;
    }
    if (scan.n_parts == 0) {
        gt_cli_error("%s holds no parts of a trace (the PID-N.sqlite files gtrace writes there)%s", dir,
                     scan.n_snapshots ? "; its CUDA memory snapshots go in with gtrace import" : "");
        return 1;
    }
    if (scan.writer) {
        gt_cli_error("%s is still being written by process %d (a gtrace that is running): its trace is "
                     "assembled when that run ends", dir, (int)scan.writer);
        return 1;
    }
    if (gt_cli_check_output(output, force, NULL, 0, NULL, 0) != 0) {
        gt_cli_error("%s", gt_error_last());
        return 1;
    }
    run_facts f;
    read_facts(dir, &f);
    gt_record_run_info run = {.utc_t0_ns = f.utc_t0_ns, .end_ns = 0, .utc_end_ns = 0, .root_pid = f.root_pid,
                       .program_name = f.program, .command_line = f.command_line,
                       .options = "(recovered from the parts of a gtrace that did not finish)"};
    gt_record_losses losses;
    if (gt_record_assemble(dir, output, force, &run, &losses) != 0) {
        gt_cli_error("%s", gt_error_last());
        gt_cli_error("no trace written; the parts are kept in %s", dir);
        return 1;
    }
    if (rmdir(dir) != 0 && errno == ENOTEMPTY)
        gt_cli_error("kept %s: it holds files that are not parts%s", dir,
                     scan.n_snapshots ? " (CUDA memory snapshots: gtrace import them)" : "");
    gt_trace *t = NULL;
    if (gt_trace_open(&t, output, 0) != 0) {
        gt_cli_error("the recovered trace cannot be read back: %s", gt_error_last());
        return 1;
    }
    printf("recovered  %s from %d part%s of %s\n", output, scan.n_parts, scan.n_parts == 1 ? "" : "s", dir);
    if (f.command_line[0])
        printf("command    %s\n", f.command_line);
    printf("events\n");
    gt_cli_print_counts(stdout, t, "  ");
    gt_trace_free(t);
    if (losses.n_failed > 0 || losses.n_unaccounted > 0)
        gt_cli_error("the trace is incomplete: %d process%s could not write %s part (%s)",
                     losses.n_failed + (int)losses.n_unaccounted,
                     losses.n_failed + losses.n_unaccounted == 1 ? "" : "es",
                     losses.n_failed + losses.n_unaccounted == 1 ? "its" : "their",
                     losses.reason[0] ? losses.reason : "killed while it counted its losses");
    return 0;
}
