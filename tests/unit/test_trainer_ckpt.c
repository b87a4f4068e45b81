/* test_trainer_ckpt.c: what a checkpoint save leaves when it cannot finish,
 * and what it refuses to replace. A signal is delivered at a known point of
 * a save by the backend's device-to-host copy, which the writer calls while
 * its temporary file is open (a backend that says its memory is a device's;
 * the memory is the CPU backend's, the copy the same memcpy after the
 * signal). */
#include "ckpt.h"
#include "error.h"
#include "gpt.h"
#include "gt_test.h"
#include "optim.h"
#include "trainer_fixture.h"

#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const tr_optim_config adamw = {.kind = TR_OPTIM_ADAMW, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f};

static void copy_after_sigterm(tr_backend *be, void *dst, const void *src, size_t n, int stream)
{
    (void)be;
    (void)stream;
    raise(SIGTERM);
    memcpy(dst, src, n);
}

/* Files in the scratch folder whose name starts with prefix. */
static int count_prefixed(const char *prefix)
{
    DIR *d = opendir(gt_test_tmpdir());
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* In a child: a model saved to name while SIGTERM arrives mid-write, with
 * SIGTERM's disposition set to how (SIG_DFL or SIG_IGN). Returns the
 * child's wait status. */
static int save_with_sigterm(const char *name, void (*how)(int))
{
    gt_test_tmpdir(); /* made here, so the child writes where the parent looks */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, how);
        fixture f;
        tr_optim opt;
        fixture_setup(&f, 16, 16, 1);
        if (tr_optim_init(&opt, &f.m->base, &adamw, 0, f.m->n_params) < 0)
            _exit(3);
        tr_backend device = *f.be; /* the writer copies "device" memory out through copy_d2h */
        device.device = TR_CUDA;
        device.copy_d2h = copy_after_sigterm;
        f.m->be = &device;
        char *path = gt_test_path(name);
        tr_ckpt_state st = {.step = 1, .seed = 1};
        int rc = tr_ckpt_save(path, f.m, &opt, &st);
        _exit(rc == TR_OK ? 0 : 4);
    }
    int status = -1;
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    return status;
}

static void test_trainer_ckpt__sigterm_during_save_removes_temporary(void)
{
    int status = save_with_sigterm("term.safetensors", SIG_DFL);
    /* the process ends by the signal, as it would have without the save, and nothing is left */
    CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    CU_ASSERT_EQUAL(count_prefixed("term.safetensors"), 0);
}

static void test_trainer_ckpt__ignored_sigterm_stays_ignored(void)
{
    int status = save_with_sigterm("ign.safetensors", SIG_IGN);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT_EQUAL(count_prefixed("ign.safetensors"), 1); /* the checkpoint, and no temporary file */
    char *path = gt_test_path("ign.safetensors");
    CU_ASSERT(gt_test_file_size(path) > 0);
    free(path);
}

static void test_trainer_ckpt__refuses_what_is_not_a_regular_file(void)
{
    char *fifo = gt_test_path("fifo"), *dir = gt_test_path("dir"), *to_dir = gt_test_path("to-dir"),
         *dangling = gt_test_path("dangling"), *fresh = gt_test_path("fresh"), *missing = gt_test_path("no/ck");
    CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
    CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
    CU_ASSERT_EQUAL_FATAL(symlink("dir", to_dir), 0);
    CU_ASSERT_EQUAL_FATAL(symlink("nothing", dangling), 0);
    CU_ASSERT_EQUAL(tr_ckpt_check_target(fifo), TR_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "it is a FIFO"));
    CU_ASSERT_EQUAL(tr_ckpt_check_target(dir), TR_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "it is a folder"));
    CU_ASSERT_EQUAL(tr_ckpt_check_target(to_dir), TR_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "which is a folder"));
    CU_ASSERT_EQUAL(tr_ckpt_check_target(dangling), TR_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "a symbolic link to nothing"));
    CU_ASSERT_EQUAL(tr_ckpt_check_target(missing), TR_EIO);
    CU_ASSERT_PTR_NOT_NULL(strstr(tr_error_last(), "cannot create a file beside"));
    CU_ASSERT_EQUAL(tr_ckpt_check_target(fresh), TR_OK);
    CU_ASSERT_EQUAL(access(fresh, F_OK), -1); /* the check leaves nothing */

    /* the writer itself refuses too (a target that became a FIFO after the check) */
    fixture f;
    tr_optim opt;
    fixture_setup(&f, 16, 16, 1);
    CU_ASSERT_EQUAL_FATAL(tr_optim_init(&opt, &f.m->base, &adamw, 0, f.m->n_params), TR_OK);
    tr_ckpt_state st = {.step = 1, .seed = 1};
    CU_ASSERT_EQUAL(tr_ckpt_save(fifo, f.m, &opt, &st), TR_EIO);
    struct stat sb;
    CU_ASSERT(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
    CU_ASSERT_EQUAL(count_prefixed("fifo.tmp."), 0);
    CU_ASSERT_EQUAL(tr_ckpt_save(fresh, f.m, &opt, &st), TR_OK);
    CU_ASSERT(gt_test_file_size(fresh) > 0);
    tr_optim_release(&opt, &f.m->base);
    fixture_teardown(&f);
    free(fifo);
    free(dir);
    free(to_dir);
    free(dangling);
    free(fresh);
    free(missing);
}

static const gt_test_case cases[] = {
    /* the forks first: the parent has not started OpenMP's threads yet */
    {"test_trainer_ckpt__sigterm_during_save_removes_temporary",
     test_trainer_ckpt__sigterm_during_save_removes_temporary},
    {"test_trainer_ckpt__ignored_sigterm_stays_ignored", test_trainer_ckpt__ignored_sigterm_stays_ignored},
    {"test_trainer_ckpt__refuses_what_is_not_a_regular_file", test_trainer_ckpt__refuses_what_is_not_a_regular_file},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    const gt_test_suite suites[] = {{"trainer_ckpt", cases}};
    return gt_test_main(argc, argv, suites, 1);
}
