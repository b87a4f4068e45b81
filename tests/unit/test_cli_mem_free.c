/* test_cli_mem_free.c: the memory the launcher may still take
 * (libtrace/cli/mem_free.h), from meminfo and cgroup files written here:
 * MemAvailable alone; a cgroup v2 limit under it, and over it; no limit
 * ("max"), the root cgroup, a cgroup v1 line; nothing known. */
#include "config.h"

#include "gt_test.h"
#include "mem_free.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void test_cli_mem_free__sources(void)
{
    char *mi = gt_test_path("meminfo"), *cg = gt_test_path("cgroup"), *fs = gt_test_path("fs");
    char *job = gt_test_path("fs/job"), *max = gt_test_path("fs/job/memory.max");
    char *cur = gt_test_path("fs/job/memory.current"), *none = gt_test_path("nothing-here");
    char *rmax = gt_test_path("fs/memory.max"), *rcur = gt_test_path("fs/memory.current");
    mkdir(fs, 0700);
    mkdir(job, 0700);
    write_file(mi, "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n");
    write_file(cg, "0::/job\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, none, fs), 20000000LL * 1024); /* no cgroup file */
    write_file(max, "1073741824\n");
    write_file(cur, "73741824\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, cg, fs), 1000000000LL); /* the limit's room, under MemAvailable */
    write_file(max, "max\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, cg, fs), 20000000LL * 1024); /* no limit */
    write_file(max, "40000000000\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, cg, fs), 20000000LL * 1024); /* a limit over what the machine has */
    write_file(max, "1000\n"); /* over its limit already: no room */
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, cg, fs), 0);
    write_file(cg, "0::/\n");
    write_file(rmax, "2048\n");
    write_file(rcur, "1024\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, cg, fs), 1024); /* the root cgroup's files */
    write_file(cg, "12:memory:/job\n"); /* cgroup v1: no 0:: line */
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, cg, fs), 20000000LL * 1024);
    write_file(cg, "0::/job\n");
    write_file(max, "1073741824\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(none, cg, fs), 1000000000LL); /* no meminfo: the limit's room */
    write_file(mi, "MemTotal: 1 kB\n");
    CU_ASSERT_EQUAL(gt_mem_free_at(mi, none, fs), -1); /* nothing known */
    CU_ASSERT_TRUE(gt_mem_free() != 0); /* this machine's: known or -1, never nothing free */
    free(mi), free(cg), free(fs), free(job), free(max), free(cur), free(none), free(rmax), free(rcur);
}

static const gt_test_case mem_free_cases[] = {
    {"test_cli_mem_free__sources", test_cli_mem_free__sources},
    {NULL, NULL},
};

int main(int argc, char **argv)
{
    static const gt_test_suite suites[] = {{"cli_mem_free", mem_free_cases}};
    return gt_test_main(argc, argv, suites, 1);
}
