/* itt_abi.h: ITT's types as a program's static part of ITT
 * (ittnotify_static.c) and a collector share them, laid out as
 * ittnotify.h and ittnotify_config.h (3.x) do: the collector (itt.c) and
 * bench/bench_itt.c, which plays the static part. Private to
 * libtrace/capture and its benchmark. */
#ifndef GT_ITT_ABI_H
#define GT_ITT_ABI_H

#include <pthread.h>

typedef struct itt_domain {
    volatile int flags;        /* 0: disabled (callers skip their task calls) */
    const char *nameA;
    void *nameW;
    int extra1;
    void *extra2;
    struct itt_domain *next;
} itt_domain;

typedef struct itt_string_handle {
    const char *strA;
    void *strW;
    int extra1;                /* a collector's mark (itt.c: extra2 is its own name) */
    void *extra2;
    struct itt_string_handle *next;
} itt_string_handle;

typedef struct itt_id {
    unsigned long long d1, d2, d3;
} itt_id;

typedef struct itt_api_info {
    const char *name;
    void **func_ptr;
    void *init_func;
    void *null_func;
    int group;
} itt_api_info;

/* The static part's global, up to the parts read here (pack 8, as there). */
typedef struct itt_global {
    unsigned char magic[8];
    unsigned long version_major, version_minor, version_build;
    volatile long api_initialized, mutex_initialized, atomic_counter;
    pthread_mutex_t mutex;
    void *lib;
    void *error_handler;
    const char **dll_path_ptr;
    itt_api_info *api_list_ptr;
    struct itt_global *next;
    void *thread_list;
    itt_domain *domain_list;
    itt_string_handle *string_list;
} itt_global;


/* The global's first bytes, as the static part writes them. */
#define ITT_MAGIC {0xED, 0xAB, 0xAB, 0xEC, 0x0D, 0xEE, 0xDA, 0x30}

#endif
