/* schema.c: the DDL of a gtrace trace and the rows every trace starts with.
 *
 * Tables that Nsight Systems' SQLite export has are declared with nsys
 * 2024.5's names, columns, declared types and column order (export schema
 * 3.13.2, checked against tests/fixtures and by test_store_writer); the
 * long per-column comments of nsys are left out, its REFERENCES notes kept.
 * Four tables the 3.13.2 fixture lacks (NVTX_EVENTS, _MEMSET,
 * CUDA_GPU_MEMORY_USAGE_EVENTS, CUDA_CALLCHAINS) are 2.9.1's, with the
 * columns 3.x added to them. While a trace is written, kernels are stored
 * compactly (see ARCHITECTURE.md, "Trace format") behind a view with nsys's
 * columns; closing (gt_schema_finish) turns them into nsys's real table,
 * adds the TARGET_INFO_* and META_DATA_CAPTURE rows gtrace knows, and drops
 * the event tables nothing went into, as nsys leaves out what it did not
 * collect.
 *
 * This file does not write events: writer.c does. */
#include "config.h"

#include "gt_store.h"
#include "schema.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- tables nsys has ------------------------------------------------------ */

static const char *const nsys_tables[] = {
    "CREATE TABLE StringIds (\n"
    "    id                       INTEGER NOT NULL PRIMARY KEY,\n"
    "    value                    TEXT NOT NULL\n"
    ")",
    "CREATE TABLE ThreadNames (\n"
    "    nameId                   INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    priority                 INTEGER,\n"
    "    globalTid                INTEGER\n"
    ")",
    "CREATE TABLE PROCESSES (\n"
    "    globalPid                INTEGER,\n"
    "    pid                      INTEGER,\n"
    "    name                     TEXT\n"
    ")",
    "CREATE TABLE TARGET_INFO_GPU (\n"
    "    vmId                     INTEGER NOT NULL,\n"
    "    id                       INTEGER NOT NULL,\n"
    "    name                     TEXT,\n"
    "    busLocation              TEXT,\n"
    "    isDiscrete               INTEGER,\n"
    "    l2CacheSize              INTEGER,\n"
    "    totalMemory              INTEGER,\n"
    "    memoryBandwidth          INTEGER,\n"
    "    clockRate                INTEGER,\n"
    "    smCount                  INTEGER,\n"
    "    pwGpuId                  INTEGER,\n"
    "    uuid                     TEXT,\n"
    "    luid                     INTEGER,\n"
    "    chipName                 TEXT,\n"
    "    cuDevice                 INTEGER,\n"
    "    ctxswDevPath             TEXT,\n"
    "    ctrlDevPath              TEXT,\n"
    "    revision                 INTEGER,\n"
    "    nodeMask                 INTEGER,\n"
    "    constantMemory           INTEGER,\n"
    "    maxIPC                   INTEGER,\n"
    "    maxRegistersPerBlock     INTEGER,\n"
    "    maxShmemPerBlock         INTEGER,\n"
    "    maxShmemPerBlockOptin    INTEGER,\n"
    "    maxShmemPerSm            INTEGER,\n"
    "    maxRegistersPerSm        INTEGER,\n"
    "    threadsPerWarp           INTEGER,\n"
    "    asyncEngines             INTEGER,\n"
    "    maxWarpsPerSm            INTEGER,\n"
    "    maxBlocksPerSm           INTEGER,\n"
    "    maxThreadsPerBlock       INTEGER,\n"
    "    maxBlockDimX             INTEGER,\n"
    "    maxBlockDimY             INTEGER,\n"
    "    maxBlockDimZ             INTEGER,\n"
    "    maxGridDimX              INTEGER,\n"
    "    maxGridDimY              INTEGER,\n"
    "    maxGridDimZ              INTEGER,\n"
    "    computeMajor             INTEGER,\n"
    "    computeMinor             INTEGER,\n"
    "    smMajor                  INTEGER,\n"
    "    smMinor                  INTEGER\n"
    ")",
    "CREATE TABLE TARGET_INFO_SESSION_START_TIME (\n"
    "    utcEpochNs               INTEGER,\n"
    "    utcTime                  TEXT,\n"
    "    localTime                TEXT\n"
    ")",
    "CREATE TABLE META_DATA_EXPORT (\n"
    "    name                     TEXT NOT NULL,\n"
    "    value                    TEXT\n"
    ")",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER NOT NULL,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    greenContextId           INTEGER,\n"
    "    streamId                 INTEGER NOT NULL,\n"
    "    correlationId            INTEGER,                -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)\n"
    "    globalPid                INTEGER,\n"
    "    bytes                    INTEGER NOT NULL,\n"
    "    copyKind                 INTEGER NOT NULL,       -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)\n"
    "    deprecatedSrcId          INTEGER,\n"
    "    srcKind                  INTEGER,                -- REFERENCES ENUM_CUDA_MEM_KIND(id)\n"
    "    dstKind                  INTEGER,                -- REFERENCES ENUM_CUDA_MEM_KIND(id)\n"
    "    srcDeviceId              INTEGER,\n"
    "    srcContextId             INTEGER,\n"
    "    dstDeviceId              INTEGER,\n"
    "    dstContextId             INTEGER,\n"
    "    migrationCause           INTEGER,                -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)\n"
    "    graphNodeId              INTEGER,                -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)\n"
    "    virtualAddress           INTEGER\n"
    ")",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER NOT NULL,\n"
    "    eventClass               INTEGER NOT NULL,       -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)\n"
    "    globalTid                INTEGER,\n"
    "    correlationId            INTEGER,\n"
    "    nameId                   INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    returnValue              INTEGER NOT NULL,\n"
    "    callchainId              INTEGER                 -- REFERENCES CUDA_CALLCHAINS(id)\n"
    ")",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER NOT NULL,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    greenContextId           INTEGER,\n"
    "    streamId                 INTEGER NOT NULL,\n"
    "    correlationId            INTEGER,\n"
    "    globalPid                INTEGER,\n"
    "    syncType                 INTEGER NOT NULL,       -- REFERENCES ENUM_CUPTI_SYNC_TYPE(id)\n"
    "    eventId                  INTEGER NOT NULL\n"
    ")",
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER NOT NULL,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    greenContextId           INTEGER,\n"
    "    streamId                 INTEGER NOT NULL,\n"
    "    correlationId            INTEGER,                -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)\n"
    "    globalPid                INTEGER,\n"
    "    value                    INTEGER NOT NULL,\n"
    "    bytes                    INTEGER NOT NULL,\n"
    "    graphNodeId              INTEGER,                -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)\n"
    "    memKind                  INTEGER                 -- REFERENCES ENUM_CUDA_MEM_KIND(id)\n"
    ")",
    "CREATE TABLE NVTX_EVENTS (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER,\n"
    "    eventType                INTEGER NOT NULL,       -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)\n"
    "    rangeId                  INTEGER,\n"
    "    category                 INTEGER,\n"
    "    color                    INTEGER,\n"
    "    text                     TEXT,\n"
    "    globalTid                INTEGER,\n"
    "    endGlobalTid             INTEGER,\n"
    "    textId                   INTEGER,                -- REFERENCES StringIds(id)\n"
    "    domainId                 INTEGER,\n"
    "    uint64Value              INTEGER,\n"
    "    int64Value               INTEGER,\n"
    "    doubleValue              REAL,\n"
    "    uint32Value              INTEGER,\n"
    "    int32Value               INTEGER,\n"
    "    floatValue               REAL,\n"
    "    jsonTextId               INTEGER,\n"
    "    jsonText                 TEXT\n"
    ")",
    "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    globalPid                INTEGER NOT NULL,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    address                  INTEGER NOT NULL,\n"
    "    pc                       INTEGER NOT NULL,\n"
    "    bytes                    INTEGER NOT NULL,\n"
    "    memKind                  INTEGER NOT NULL,       -- REFERENCES ENUM_CUDA_MEM_KIND(id)\n"
    "    memoryOperationType      INTEGER NOT NULL,       -- REFERENCES ENUM_CUDA_DEV_MEM_EVENT_OPER(id)\n"
    "    name                     TEXT,\n"
    "    correlationId            INTEGER,                -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)\n"
    "    streamId                 INTEGER,\n"
    "    localMemoryPoolAddress   INTEGER,\n"
    "    localMemoryPoolReleaseThreshold INTEGER,\n"
    "    localMemoryPoolSize      INTEGER,\n"
    "    localMemoryPoolUtilizedSize INTEGER,\n"
    "    importedMemoryPoolAddress INTEGER,\n"
    "    importedMemoryPoolProcessId INTEGER\n"
    ")",
    "CREATE TABLE CUDA_CALLCHAINS (\n"
    "    id                       INTEGER NOT NULL,\n"
    "    symbol                   INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    module                   INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    unresolved               INTEGER,\n"
    "    originalIP               INTEGER,\n"
    "    stackDepth               INTEGER NOT NULL,\n"
    "    PRIMARY KEY (id, stackDepth)\n"
    ")",
};

/* ---- kernels: deduplicated launches, compact rows, nsys's view ------------- */

#define STR_(x) #x
#define STR(x) STR_(x)

/* nsys's kernel columns, in its order, from the two compact tables. */
#define KERNEL_COLUMNS \
    "    k.id >> " STR(GT_KERNEL_ID_SHIFT) " AS start,\n" \
    "    k.end AS end,\n" \
    "    l.deviceId AS deviceId,\n" \
    "    l.contextId AS contextId,\n" \
    "    l.greenContextId AS greenContextId,\n" \
    "    k.streamId AS streamId,\n" \
    "    k.correlationId AS correlationId,\n" \
    "    l.globalPid AS globalPid,\n" \
    "    l.demangledName AS demangledName,\n" \
    "    l.shortName AS shortName,\n" \
    "    l.mangledName AS mangledName,\n" \
    "    l.launchType AS launchType,\n" \
    "    l.cacheConfig AS cacheConfig,\n" \
    "    l.registersPerThread AS registersPerThread,\n" \
    "    l.gridX AS gridX,\n" \
    "    l.gridY AS gridY,\n" \
    "    l.gridZ AS gridZ,\n" \
    "    l.blockX AS blockX,\n" \
    "    l.blockY AS blockY,\n" \
    "    l.blockZ AS blockZ,\n" \
    "    l.staticSharedMemory AS staticSharedMemory,\n" \
    "    l.dynamicSharedMemory AS dynamicSharedMemory,\n" \
    "    l.localMemoryPerThread AS localMemoryPerThread,\n" \
    "    l.localMemoryTotal AS localMemoryTotal,\n" \
    "    k.gridId AS gridId,\n" \
    "    l.sharedMemoryExecuted AS sharedMemoryExecuted,\n" \
    "    k.graphNodeId AS graphNodeId,\n" \
    "    l.sharedMemoryLimitConfig AS sharedMemoryLimitConfig\n"

static const char *const kernel_tables[] = {
    /* One row per distinct launch configuration: a training step launches the
     * same few hundred configurations again and again. */
    "CREATE TABLE " GT_TABLE_KERNEL_LAUNCHES " (\n"
    "    id                       INTEGER NOT NULL PRIMARY KEY,\n"
    "    globalPid                INTEGER,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    greenContextId           INTEGER,\n"
    "    demangledName            INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    shortName                INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    mangledName              INTEGER,                -- REFERENCES StringIds(id)\n"
    "    launchType               INTEGER,                -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)\n"
    "    cacheConfig              INTEGER,                -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)\n"
    "    registersPerThread       INTEGER NOT NULL,\n"
    "    gridX                    INTEGER NOT NULL,\n"
    "    gridY                    INTEGER NOT NULL,\n"
    "    gridZ                    INTEGER NOT NULL,\n"
    "    blockX                   INTEGER NOT NULL,\n"
    "    blockY                   INTEGER NOT NULL,\n"
    "    blockZ                   INTEGER NOT NULL,\n"
    "    staticSharedMemory       INTEGER NOT NULL,\n"
    "    dynamicSharedMemory      INTEGER NOT NULL,\n"
    "    localMemoryPerThread     INTEGER NOT NULL,\n"
    "    localMemoryTotal         INTEGER NOT NULL,\n"
    "    sharedMemoryExecuted     INTEGER,\n"
    "    sharedMemoryLimitConfig  INTEGER                 -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)\n"
    ")",
    /* Clustered on start: a time range is a rowid range, no index needed. */
    "CREATE TABLE " GT_TABLE_KERNELS " (\n"
    "    id                       INTEGER NOT NULL PRIMARY KEY, -- (start << " STR(GT_KERNEL_ID_SHIFT) ") | k\n"
    "    end                      INTEGER NOT NULL,\n"
    "    streamId                 INTEGER NOT NULL,\n"
    "    correlationId            INTEGER,                -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)\n"
    "    launchId                 INTEGER NOT NULL,       -- REFERENCES " GT_TABLE_KERNEL_LAUNCHES "(id)\n"
    "    gridId                   INTEGER NOT NULL,\n"
    "    graphNodeId              INTEGER                 -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)\n"
    ")",
    /* Exactly nsys's 28 columns, in nsys's order: what readers of a trace
     * whose writer was killed see. Closing replaces it with a table. */
    "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS SELECT\n"
    KERNEL_COLUMNS
    "FROM " GT_TABLE_KERNELS " AS k JOIN " GT_TABLE_KERNEL_LAUNCHES " AS l ON l.id = k.launchId",
};

/* ---- gtrace-only tables ----------------------------------------------------- */

static const char *const gtrace_tables[] = {
    /* The NVTX memory API: heaps (pools) and regions (blocks) of caching allocators. */
    "CREATE TABLE " GT_TABLE_MEMORY_EVENTS " (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    globalTid                INTEGER,\n"
    "    operation                INTEGER NOT NULL,       -- REFERENCES GTRACE_ENUM_MEMORY_OPER(id)\n"
    "    heapId                   INTEGER,                -- the nvtxMemHeapHandle_t\n"
    "    address                  INTEGER,\n"
    "    bytes                    INTEGER,\n"
    "    heapUsage                INTEGER,                -- nvtxMemHeapUsage\n"
    "    memoryType               INTEGER,                -- nvtxMemType\n"
    "    nameId                   INTEGER,                -- REFERENCES StringIds(id)\n"
    "    domainId                 INTEGER,\n"
    "    callchainId              INTEGER                 -- REFERENCES CUDA_CALLCHAINS(id)\n"
    ")",
    "CREATE TABLE GTRACE_ENUM_MEMORY_OPER (\n"
    "    id                       INTEGER NOT NULL PRIMARY KEY,\n"
    "    name                     TEXT,\n"
    "    label                    TEXT\n"
    ")",
    /* Allocation stacks of device allocations; eventId is the rowid of the
     * CUDA_GPU_MEMORY_USAGE_EVENTS row (kept by VACUUM only if not renumbered:
     * gtrace never vacuums a trace). */
    "CREATE TABLE " GT_TABLE_GPU_MEMORY_STACKS " (\n"
    "    eventId                  INTEGER NOT NULL PRIMARY KEY, -- CUDA_GPU_MEMORY_USAGE_EVENTS.rowid\n"
    "    callchainId              INTEGER NOT NULL        -- REFERENCES CUDA_CALLCHAINS(id)\n"
    ")",
    /* Command line, environment, options; globalPid 0: the whole trace. */
    "CREATE TABLE " GT_TABLE_RUN_CONFIG " (\n"
    "    globalPid                INTEGER NOT NULL,\n"
    "    key                      TEXT NOT NULL,\n"
    "    value                    TEXT\n"
    ")",
    "CREATE TABLE " GT_TABLE_CPU_OPS " (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER NOT NULL,\n"
    "    globalTid                INTEGER,\n"
    "    nameId                   INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    streamId                 INTEGER,\n"
    "    flops                    INTEGER,\n"
    "    bytes                    INTEGER\n"
    ")",
    "CREATE TABLE " GT_TABLE_DROPPED_EVENTS " (\n"
    "    globalPid                INTEGER NOT NULL,\n"
    "    kind                     TEXT NOT NULL,          -- gt_event_kind_name(): kernel, memcpy...\n"
    "    count                    INTEGER NOT NULL,\n"
    "    PRIMARY KEY (globalPid, kind)\n"
    ")",
};

/* ---- enum tables, with nsys's rows ----------------------------------------- */

typedef struct enum_row {
    int id;
    const char *name, *label;
} enum_row;

typedef struct enum_table {
    const char *table, *comment;
    const enum_row *rows;
    size_t n_rows;
} enum_table;

#define ENUM_TABLE(t, c, rows) {t, c, rows, sizeof rows / sizeof rows[0]}

static const enum_row enum_cuda_memcpy_oper_rows[] = {
    {0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"},
    {1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"},
    {2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host"},
    {3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array"},
    {4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host"},
    {5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array"},
    {6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device"},
    {7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array"},
    {8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device"},
    {9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host"},
    {10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer"},
    {11, "CUDA_MEMCPY_KIND_UVM_HTOD", "Unified Host-to-Device"},
    {12, "CUDA_MEMCPY_KIND_UVM_DTOH", "Unified Device-to-Host"},
    {13, "CUDA_MEMCPY_KIND_UVM_DTOD", "Unified Device-to-Device"},
};
static const enum_row enum_cuda_mem_kind_rows[] = {
    {0, "CUDA_MEMOPR_MEMORY_KIND_PAGEABLE", "Pageable"},
    {1, "CUDA_MEMOPR_MEMORY_KIND_PINNED", "Pinned"},
    {2, "CUDA_MEMOPR_MEMORY_KIND_DEVICE", "Device"},
    {3, "CUDA_MEMOPR_MEMORY_KIND_ARRAY", "Array"},
    {4, "CUDA_MEMOPR_MEMORY_KIND_MANAGED", "Managed"},
    {5, "CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC", "Device Static"},
    {6, "CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC", "Managed Static"},
    {7, "CUDA_MEMOPR_MEMORY_KIND_UNKNOWN", "Unknown"},
};
static const enum_row enum_cupti_sync_type_rows[] = {
    {0, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN", "Unknown"},
    {1, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE", "Event sync"},
    {2, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT", "Stream wait sync"},
    {3, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE", "Stream sync"},
    {4, "CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE", "Context sync"},
};
static const enum_row enum_cuda_dev_mem_event_oper_rows[] = {
    {0, "CUDA_DEV_MEM_EVENT_OPR_ALLOCATION", "Allocation"},
    {1, "CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION", "Deallocation"},
};
static const enum_row enum_cuda_kernel_launch_type_rows[] = {
    {0, "CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN", "Unknown"},
    {1, "CUDA_KERNEL_LAUNCH_TYPE_REGULAR", "Regular"},
    {2, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE", "Coop Single Device"},
    {3, "CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE", "Coop Multi Device"},
};
static const enum_row enum_cuda_shared_mem_limit_config_rows[] = {
    {0, "CUDA_SHARED_MEM_LIMIT_DEFAULT", "Default"},
    {1, "CUDA_SHARED_MEM_LIMIT_OPTIN", "Opt in"},
};
static const enum_row enum_cuda_func_cache_config_rows[] = {
    {0, "CU_FUNC_CACHE_PREFER_NONE", "None"},
    {1, "CU_FUNC_CACHE_PREFER_SHARED", "Shared"},
    {2, "CU_FUNC_CACHE_PREFER_L1", "L1"},
    {3, "CU_FUNC_CACHE_PREFER_EQUAL", "Equal"},
};
static const enum_row enum_cupti_stream_type_rows[] = {
    {0, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN", "Unknown stream type"},
    {1, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT", "Default stream"},
    {2, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING", "Non-blocking stream"},
    {3, "CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL", "Null stream"},
};
static const enum_row enum_stack_unwind_method_rows[] = {
    {0, "Unknown", "Unknown"},
    {1, "FramePointer", "Frame pointer"},
    {2, "UnwindTable", "Unwind table"},
    {3, "LR_FramePointer", "LR frame pointer"},
    {4, "LR_UnwindTable", "LR unwind table"},
    {5, "KernelContext", "Kernel context"},
    {6, "DWARF_EH", "DWARF EH"},
    {7, "DWARF_DF", "DWARF DF"},
    {8, "LBR", "LBR"},
    {1000, "Undefined", "Undefined"},
};
static const enum_row enum_cuda_mempool_type_rows[] = {
    {0, "CUDA_MEMPOOL_TYPE_INVALID", "Invalid"},
    {1, "CUDA_MEMPOOL_TYPE_LOCAL", "Local"},
    {2, "CUDA_MEMPOOL_TYPE_IMPORTED", "Imported"},
};
static const enum_row enum_cuda_mempool_oper_rows[] = {
    {0, "CUDA_MEMPOOL_OPERATION_TYPE_INVALID", "Invalid"},
    {1, "CUDA_MEMPOOL_OPERATION_TYPE_CREATED", "Created"},
    {2, "CUDA_MEMPOOL_OPERATION_TYPE_DESTROYED", "Destroyed"},
    {3, "CUDA_MEMPOOL_OPERATION_TYPE_TRIMMED", "Trimmed"},
};
static const enum_row enum_cuda_unif_mem_migration_rows[] = {
    {0, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_UNKNOWN", "Unknown"},
    {1, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_USER", "User prefetch"},
    {2, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE", "Page fault"},
    {3, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH", "Speculative prefecth"},
    {4, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION", "Eviction"},
    {5, "CUDA_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS", "Access counters"},
};
static const enum_row enum_nsys_event_class_rows[] = {
    {0, "TRACE_PROCESS_EVENT_CUDA_RUNTIME", "CUDA runtime"},
    {1, "TRACE_PROCESS_EVENT_CUDA_DRIVER", "CUDA driver"},
    {2, "TRACE_PROCESS_EVENT_GL", "GL"},
    {3, "TRACE_PROCESS_EVENT_TSP_OVERHEAD", "TSP overhead"},
    {4, "TRACE_PROCESS_EVENT_GL_DEBUG", "GL debug"},
    {5, "TRACE_PROCESS_EVENT_GL_WORKLOAD", "GL workload"},
    {6, "TRACE_PROCESS_EVENT_NVTX_START", "NVTX start"},
    {7, "TRACE_PROCESS_EVENT_NVTX_FINISH", "NVTX finish"},
    {8, "TRACE_PROCESS_EVENT_GL_START", "GL start"},
    {9, "TRACE_PROCESS_EVENT_GL_FINISH", "GL finish"},
    {10, "TRACE_PROCESS_EVENT_CUDA_START", "CUDA start"},
    {11, "TRACE_PROCESS_EVENT_CUDA_FINISH", "CUDA finish"},
    {12, "TRACE_PROCESS_EVENT_CUDA_INIT_ERROR", "CUDA init error"},
    {13, "TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER", "CUDA EGL driver"},
    {18, "TRACE_PROCESS_EVENT_VSYNC", "Vsync"},
    {26, "TRACE_PROCESS_EVENT_CUDA_API", "CUDA API"},
    {27, "TRACE_PROCESS_EVENT_OS_RUNTIME", "OSRT runtime"},
    {28, "TRACE_PROCESS_EVENT_CUDNN", "cuDNN"},
    {29, "TRACE_PROCESS_EVENT_CUBLAS", "cuBLAS"},
    {31, "TRACE_PROCESS_EVENT_OS_RUNTIME_START", "OSRT start"},
    {32, "TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH", "OSRT finish"},
    {33, "TRACE_PROCESS_EVENT_CUDNN_START", "cuDNN start"},
    {34, "TRACE_PROCESS_EVENT_CUDNN_FINISH", "cuDNN finish"},
    {35, "TRACE_PROCESS_EVENT_CUBLAS_START", "cuBLAS start"},
    {36, "TRACE_PROCESS_EVENT_CUBLAS_FINISH", "cuBLAS finish"},
    {37, "TRACE_PROCESS_EVENT_THREAD_BLOCK", "Thread block"},
    {38, "TRACE_PROCESS_EVENT_NVMEDIA", "NVmedia"},
    {39, "TRACE_PROCESS_EVENT_NVMEDIA_START", "NVmedia start"},
    {40, "TRACE_PROCESS_EVENT_NVMEDIA_FINISH", "NVmedia finish"},
    {41, "TRACE_PROCESS_EVENT_DX12_API", "DX12 API"},
    {42, "TRACE_PROCESS_EVENT_DX12_WORKLOAD", "DX12 workload"},
    {43, "TRACE_PROCESS_EVENT_DX12_START", "DX12 start"},
    {44, "TRACE_PROCESS_EVENT_DX12_FINISH", "DX12 finish"},
    {45, "TRACE_PROCESS_EVENT_OPENACC_START", "OpenACC start"},
    {46, "TRACE_PROCESS_EVENT_OPENACC_FINISH", "OpenACC finish"},
    {47, "TRACE_PROCESS_EVENT_OPENACC_INIT_ERROR", "OpenACC init error"},
    {48, "TRACE_PROCESS_EVENT_OPENACC", "OpenACC"},
    {49, "TRACE_PROCESS_EVENT_CPU_FPS", "CPU FPS"},
    {50, "TRACE_PROCESS_EVENT_GPU_FPS", "GPU FPS"},
    {51, "TRACE_PROCESS_EVENT_GL_MULTI_ERROR", "GL multi-error"},
    {52, "TRACE_PROCESS_EVENT_DX12_DISPLAY", "DX12 display"},
    {53, "TRACE_PROCESS_EVENT_VULKAN_API", "Vulkan API"},
    {54, "TRACE_PROCESS_EVENT_VULKAN_WORKLOAD", "Vulkan workload"},
    {55, "TRACE_PROCESS_EVENT_VULKAN_START", "Vulkan start"},
    {56, "TRACE_PROCESS_EVENT_VULKAN_FINISH", "Vulkan finish"},
    {57, "TRACE_PROCESS_EVENT_SYSTEM_EVENT", "System event"},
    {58, "TRACE_PROCESS_EVENT_GPU_MEMORY", "GPU memory"},
    {59, "TRACE_PROCESS_EVENT_DX12_CREATE_OBJECT", "DX12 create object"},
    {60, "TRACE_PROCESS_EVENT_VULKAN_CREATE_OBJECT", "Vulkan create object"},
    {61, "TRACE_PROCESS_EVENT_CUSTOM_ETW_TRACE", "Custom ETW trace"},
    {62, "TRACE_PROCESS_EVENT_SLI", "SLI"},
    {63, "TRACE_PROCESS_EVENT_SLI_START", "SLI start"},
    {64, "TRACE_PROCESS_EVENT_SLI_FINISH", "SLI finish"},
    {65, "TRACE_PROCESS_EVENT_DX12_DEBUG_API", "DX12 debug API"},
    {66, "TRACE_PROCESS_EVENT_VULKAN_DEBUG_API", "Vulkan debug API"},
    {67, "TRACE_PROCESS_EVENT_CUDABACKTRACE", "CUDA backtrace"},
    {68, "TRACE_PROCESS_EVENT_CUDABACKTRACE_START", "CUDA backtrace start"},
    {69, "TRACE_PROCESS_EVENT_CUDABACKTRACE_FINISH", "CUDA backtrace finish"},
    {70, "TRACE_PROCESS_EVENT_WDDM", "WDDM"},
    {71, "TRACE_PROCESS_EVENT_DX11_API", "DX11 API"},
    {72, "TRACE_PROCESS_EVENT_DX11_START", "DX11 start"},
    {73, "TRACE_PROCESS_EVENT_DX11_FINISH", "DX11 finish"},
    {74, "TRACE_PROCESS_EVENT_DX11_CREATE_OBJECT", "DX11 create object"},
    {75, "TRACE_PROCESS_EVENT_DX11_DEBUG_API", "DX11 debug API"},
    {76, "TRACE_PROCESS_EVENT_DXCOMMON_API", "DX common API"},
    {77, "TRACE_PROCESS_EVENT_CUDA_GRAPH_NODE_CREATION", "CUDA graph node creation"},
    {78, "TRACE_PROCESS_EVENT_OPENMP", "OpenMP"},
    {79, "TRACE_PROCESS_EVENT_OPENMP_START", "OpenMP start"},
    {80, "TRACE_PROCESS_EVENT_OPENMP_FINISH", "OpenMP finish"},
    {81, "TRACE_PROCESS_EVENT_NVAPI", "NV API"},
    {82, "TRACE_PROCESS_EVENT_ETWDXGKRNL", "ETW DXG KRNL"},
    {83, "TRACE_PROCESS_EVENT_NVENC", "NVENC"},
    {84, "TRACE_PROCESS_EVENT_NVENC_START", "NVENC start"},
    {85, "TRACE_PROCESS_EVENT_NVENC_FINISH", "NVENC finish"},
    {86, "TRACE_PROCESS_EVENT_NVDEC", "NVDEC"},
    {87, "TRACE_PROCESS_EVENT_NVDEC_START", "NVDEC start"},
    {88, "TRACE_PROCESS_EVENT_NVDEC_FINISH", "NVDEC finish"},
    {89, "TRACE_PROCESS_EVENT_NVJPEG", "nvJPEG"},
    {90, "TRACE_PROCESS_EVENT_NVJPEG_START", "nvJPEG start"},
    {91, "TRACE_PROCESS_EVENT_NVJPEG_FINISH", "nvJPEG finish"},
    {92, "TRACE_PROCESS_EVENT_DX12_BATCH_WORKLOAD", "DX12 batch workload"},
    {93, "TRACE_PROCESS_EVENT_VULKAN_BATCH_WORKLOAD", "Vulkan batch workload"},
    {94, "TRACE_PROCESS_EVENT_CUDA_GRAPHEXEC_CREATION", "CUDA graph exec creation"},
    {95, "TRACE_PROCESS_EVENT_CUDA_GRAPH_CREATION", "CUDA graph creation"},
    {96, "TRACE_PROCESS_EVENT_CUDA_GRAPH_CLONE", "CUDA graph clone"},
    {107, "TRACE_PROCESS_EVENT_SYSCALL", "Syscall"},
    {108, "TRACE_PROCESS_EVENT_TEGRA_INTERNAL", "Tegra Internal API"},
    {109, "TRACE_PROCESS_EVENT_TEGRA_INTERNAL_START", "Tegra Internal API start"},
    {110, "TRACE_PROCESS_EVENT_TEGRA_INTERNAL_FINISH", "Tegra Internal API finish"},
};
static const enum_row enum_nsys_event_type_rows[] = {
    {0, "Unknown", "Unknown"},
    {1, "CpuCycles", "CpuCycles"},
    {2, "Instructions", "Instructions"},
    {3, "CacheReferences", "CacheReferences"},
    {4, "L1CacheDataWriteMisses", "L1CacheDataWriteMisses"},
    {5, "L1CacheDataReadMisses", "L1CacheDataReadMisses"},
    {6, "L1CacheInstructionMisses", "L1CacheInstructionMisses"},
    {7, "L2CacheDataWriteMisses", "L2CacheDataWriteMisses"},
    {8, "L2CacheDataReadMisses", "L2CacheDataReadMisses"},
    {9, "L2CacheInstructionMisses", "L2CacheInstructionMisses"},
    {10, "BranchInstructions", "BranchInstructions"},
    {11, "BranchMisses", "BranchMisses"},
    {12, "BusCycles", "BusCycles"},
    {13, "CpuClock", "CpuClock"},
    {14, "TaskClock", "TaskClock"},
    {15, "PageFault", "PageFault"},
    {16, "ContextSwitches", "ContextSwitches"},
    {17, "CpuMigrations", "CpuMigrations"},
    {18, "PageFaultsMin", "PageFaultsMin"},
    {19, "PageFaultsMax", "PageFaultsMax"},
    {20, "AlignmentFaults", "AlignmentFaults"},
    {21, "EmulationFaults", "EmulationFaults"},
    {22, "ThreadState", "ThreadState"},
    {23, "Frames", "Frames"},
    {24, "Annotations", "Annotations"},
    {25, "SchedSwitch", "SchedSwitch"},
    {26, "SchedWakeup", "SchedWakeup"},
    {27, "Command", "Command"},
    {28, "Mmap", "Mmap"},
    {29, "MemUsage", "MemUsage"},
    {30, "Emc", "Emc"},
    {31, "Composite", "Composite"},
    {32, "NvtxEvents", "NvtxEvents"},
    {33, "NvtxCategory", "NvtxCategory"},
    {34, "NvtxMark", "NvtxMark"},
    {35, "NvtxPushRange", "NvtxPushRange"},
    {36, "NvtxPopRange", "NvtxPopRange"},
    {37, "NvtxStartRange", "NvtxStartRange"},
    {38, "NvtxEndRange", "NvtxEndRange"},
    {39, "NvtxThread", "NvtxThread"},
    {40, "PowerRate", "PowerRate"},
    {41, "Sched", "Sched"},
    {42, "CpuCyclesSelf", "CpuCyclesSelf"},
    {43, "CpuCyclesTotal", "CpuCyclesTotal"},
    {44, "CpuCyclesSelfPlus", "CpuCyclesSelfPlus"},
    {45, "Cuda", "Cuda"},
    {46, "CudaDevice", "CudaDevice"},
    {47, "TraceProcess", "TraceProcess"},
    {48, "TraceFunctions", "TraceFunctions"},
    {49, "Diagnostic", "Diagnostic"},
    {50, "GlWorkload", "GlWorkload"},
    {51, "BandwidthUsage", "BandwidthUsage"},
    {52, "KhrDebugMark", "KhrDebugMark"},
    {53, "KhrDebugPushRange", "KhrDebugPushRange"},
    {54, "KhrDebugPopRange", "KhrDebugPopRange"},
    {55, "KhrDebugGpuMark", "KhrDebugGpuMark"},
    {56, "KhrDebugGpuPushRange", "KhrDebugGpuPushRange"},
    {57, "KhrDebugGpuPopRange", "KhrDebugGpuPopRange"},
    {58, "GpuCtxsw", "GpuCtxsw"},
    {59, "NvtxPushPopRange", "NvtxPushPopRange"},
    {60, "NvtxStartEndRange", "NvtxStartEndRange"},
    {61, "ProfTime", "ProfTime"},
    {62, "KhrDebugPushPopRange", "KhrDebugPushPopRange"},
    {63, "KhrDebugGpuPushPopRange", "KhrDebugGpuPushPopRange"},
    {64, "NvtxtCategory", "NvtxtCategory"},
    {65, "NvtxtMark", "NvtxtMark"},
    {66, "NvtxtPushRange", "NvtxtPushRange"},
    {67, "NvtxtPopRange", "NvtxtPopRange"},
    {68, "NvtxtStartRange", "NvtxtStartRange"},
    {69, "NvtxtEndRange", "NvtxtEndRange"},
    {70, "NvtxtPushPopRange", "NvtxtPushPopRange"},
    {71, "NvtxtStartEndRange", "NvtxtStartEndRange"},
    {72, "NvtxtMetaThread", "NvtxtMetaThread"},
    {73, "NvtxtMetaProcess", "NvtxtMetaProcess"},
    {74, "NvtxtMetaFileDisplay", "NvtxtMetaFileDisplay"},
    {75, "NvtxDomainCreate", "NvtxDomainCreate"},
    {76, "NvtxDomainDestroy", "NvtxDomainDestroy"},
    {77, "NvnGpuCmdBuf", "NvnGpuCmdBuf"},
    {78, "TraceVSync", "TraceVSync"},
    {79, "CudaDeviceKernel", "CudaDeviceKernel"},
    {80, "CudaDeviceMemory", "CudaDeviceMemory"},
    {81, "Pmu", "Pmu"},
    {82, "NvnGpuDraw", "NvnGpuDraw"},
    {83, "NvnGpuCompute", "NvnGpuCompute"},
    {84, "NvnGpuDebug", "NvnGpuDebug"},
    {85, "OS runtime libraries", "OS runtime libraries"},
    {86, "CuDNN", "CuDNN"},
    {87, "CuBLAS", "CuBLAS"},
    {88, "NvMedia", "NvMedia"},
    {89, "OpenACC", "OpenACC"},
    {90, "Correlation", "Correlation"},
    {91, "DX12", "DX12"},
    {92, "DX12Workload", "DX12Workload"},
    {93, "PmuRawEvent", "PmuRawEvent"},
    {94, "GraphicsFrame", "GraphicsFrame"},
    {95, "Vulkan", "Vulkan"},
    {96, "VulkanWorkload", "VulkanWorkload"},
    {97, "NvtxNameCudaDevice", "NvtxNameCudaDevice"},
    {98, "NvtxNameCudaContext", "NvtxNameCudaContext"},
    {99, "NvtxNameCudaStream", "NvtxNameCudaStream"},
    {100, "SystemEvent", "SystemEvent"},
    {101, "GpuMemoryEvent", "GpuMemoryEvent"},
    {102, "DX12CreateObject", "DX12CreateObject"},
    {103, "VulkanCreateObject", "VulkanCreateObject"},
    {104, "UnitTraceEvent", "UnitTraceEvent"},
    {105, "CustomETWEvent", "CustomETWEvent"},
    {106, "CudaSyncEvent", "CudaSyncEvent"},
    {107, "SLIEvent", "SLIEvent"},
    {108, "CudaBacktrace", "CudaBacktrace"},
    {109, "WddmEvent", "WddmEvent"},
    {110, "DX11", "DX11"},
    {111, "DX11CreateObject", "DX11CreateObject"},
    {112, "DXGI", "DXGI"},
    {113, "CudaGraphNodeCreation", "CudaGraphNodeCreation"},
    {114, "OpenMP", "OpenMP"},
    {115, "UncorePmuEvent", "UncorePmuEvent"},
    {116, "UncorePmuCarmel", "UncorePmuCarmel"},
    {117, "CudaDeviceMemoryUsage", "CudaDeviceMemoryUsage"},
    {118, "ETWDxgKrnlEvent", "ETWDxgKrnlEvent"},
    {119, "CudaUvmCpuPageFaultEvent", "CudaUvmCpuPageFaultEvent"},
    {120, "CudaUvmGpuPageFaultEvent", "CudaUvmGpuPageFaultEvent"},
    {121, "NICMetricsValuesEvent", "NICMetricsValuesEvent"},
    {122, "NICMetricsListEvent", "NICMetricsListEvent"},
    {123, "InterruptHandler", "InterruptHandler"},
    {124, "NVENC", "NVENC"},
    {125, "NVDEC", "NVDEC"},
    {126, "nvJPEG", "nvJPEG"},
    {127, "CudaEventRecord", "CudaEventRecord"},
    {128, "PerfEventCountEvent", "PerfEventCountEvent"},
    {129, "CudaDeviceMemoryPool", "CudaDeviceMemoryPool"},
    {130, "CudaDeviceGraph", "CudaDeviceGraph"},
    {131, "CudaGraphExecCreation", "CudaGraphExecCreation"},
    {132, "CudaGraphCreation", "CudaGraphCreation"},
    {133, "CudaGraphClone", "CudaGraphClone"},
    {134, "GpuMemoryTransferEvent", "GpuMemoryTransferEvent"},
    {135, "GlTrace", "GlTrace"},
    {136, "GpuVideoEngineWorkload", "GpuVideoEngineWorkload"},
    {137, "IBSwitchMetricsValuesEvent", "IBSwitchMetricsValuesEvent"},
    {138, "GenericEvent", "GenericEvent"},
    {139, "UncorePmuT23xScf", "UncorePmuT23xScf"},
    {140, "UncorePmuT23xDsu", "UncorePmuT23xDsu"},
    {141, "IBSwitchCongestionEvent", "IBSwitchCongestionEvent"},
    {142, "CudaDeviceMemcpy", "CudaDeviceMemcpy"},
    {143, "PerfMetricValueEvent", "PerfMetricValueEvent"},
    {144, "OpenXREvent", "OpenXREvent"},
    {145, "TegraInternalEvent", "TegraInternalEvent"},
    {146, "OSRuntimeStartStop", "OSRuntimeStartStop"},
};

static const enum_table enum_tables[] = {
    ENUM_TABLE("ENUM_CUDA_MEMCPY_OPER", "CUDA memcpy operation labels", enum_cuda_memcpy_oper_rows),
    ENUM_TABLE("ENUM_CUDA_MEM_KIND", "CUDA memory kind labels", enum_cuda_mem_kind_rows),
    ENUM_TABLE("ENUM_CUPTI_SYNC_TYPE", "CUPTI synchronization type labels", enum_cupti_sync_type_rows),
    ENUM_TABLE("ENUM_CUDA_DEV_MEM_EVENT_OPER", "CUDA device mem event operation labels", enum_cuda_dev_mem_event_oper_rows),
    ENUM_TABLE("ENUM_CUDA_KERNEL_LAUNCH_TYPE", "CUDA kernel launch type labels", enum_cuda_kernel_launch_type_rows),
    ENUM_TABLE("ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG", "CUDA shared memory limit config labels", enum_cuda_shared_mem_limit_config_rows),
    ENUM_TABLE("ENUM_CUDA_FUNC_CACHE_CONFIG", "CUDA function cache config labels", enum_cuda_func_cache_config_rows),
    ENUM_TABLE("ENUM_CUPTI_STREAM_TYPE", "CUPTI stream type labels", enum_cupti_stream_type_rows),
    ENUM_TABLE("ENUM_STACK_UNWIND_METHOD", "Stack unwind method labels", enum_stack_unwind_method_rows),
    ENUM_TABLE("ENUM_CUDA_MEMPOOL_TYPE", "CUDA mempool type labels", enum_cuda_mempool_type_rows),
    ENUM_TABLE("ENUM_CUDA_MEMPOOL_OPER", "CUDA mempool operation labels", enum_cuda_mempool_oper_rows),
    ENUM_TABLE("ENUM_CUDA_UNIF_MEM_MIGRATION", "CUDA unified memory migration cause labels", enum_cuda_unif_mem_migration_rows),
    ENUM_TABLE("ENUM_NSYS_EVENT_CLASS", "Nsys event class labels", enum_nsys_event_class_rows),
    ENUM_TABLE("ENUM_NSYS_EVENT_TYPE", "Nsys event type labels", enum_nsys_event_type_rows),
};

/* gt_heap_op, numbered as gt_store.h does. */
static const enum_row memory_oper_rows[] = {
    {0, "GT_HEAP_REGISTER", "Heap register"},
    {1, "GT_HEAP_UNREGISTER", "Heap unregister"},
    {2, "GT_HEAP_RESET", "Heap reset"},
    {3, "GT_REGION_REGISTER", "Region register"},
    {4, "GT_REGION_RESIZE", "Region resize"},
    {5, "GT_REGION_UNREGISTER", "Region unregister"},
    {6, "GT_REGION_NAME", "Region name"},
};

/* ---- time indexes ----------------------------------------------------------- */

#define START_INDEX(t, only) {t, "CREATE INDEX IF NOT EXISTS GTRACE_IDX_" t "_start ON " t "(start)", only}

/* Built by gt_writer_close (and by the reader on request, for foreign files):
 * during capture they would slow every insert. */
const gt_schema_index gt_schema_indexes[] = {
    START_INDEX("CUPTI_ACTIVITY_KIND_KERNEL", false), /* the table closing writes */
    START_INDEX("CUPTI_ACTIVITY_KIND_MEMCPY", false),
    START_INDEX("CUPTI_ACTIVITY_KIND_MEMSET", false),
    START_INDEX("CUPTI_ACTIVITY_KIND_RUNTIME", false),
    START_INDEX("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", false),
    START_INDEX("NVTX_EVENTS", false),
    START_INDEX("CUDA_GPU_MEMORY_USAGE_EVENTS", false),
    START_INDEX(GT_TABLE_MEMORY_EVENTS, false),
    START_INDEX(GT_TABLE_CPU_OPS, false),
};
const size_t gt_schema_n_indexes = sizeof gt_schema_indexes / sizeof gt_schema_indexes[0];

/* ---- creation ----------------------------------------------------------------- */

static int exec_all(sqlite3 *db, const char *const *sql, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int rc = sqlite3_exec(db, sql[i], NULL, NULL, NULL);
        if (rc != SQLITE_OK)
            return rc;
    }
    return SQLITE_OK;
}

static int fill_enum(sqlite3 *db, const char *table, const char *comment, const enum_row *rows, size_t n_rows)
{
    sqlite3_stmt *stmt = NULL;
    char *sql = NULL;
    int rc;

    if (comment) {
        /* nsys's shape, and its table comment */
        sql = sqlite3_mprintf("CREATE TABLE %s (\n"
                              "    -- %s\n"
                              "    id                       INTEGER NOT NULL PRIMARY KEY,\n"
                              "    name                     TEXT,\n"
                              "    label                    TEXT\n"
                              ")", table, comment);
        if (!sql)
            return SQLITE_NOMEM;
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
        sqlite3_free(sql);
        if (rc != SQLITE_OK)
            return rc;
    }
    sql = sqlite3_mprintf("INSERT INTO %s (id, name, label) VALUES (?, ?, ?)", table);
    if (!sql)
        return SQLITE_NOMEM;
    rc = sqlite3_prepare_v2(db, sql, -1, &stmt, NULL);
    if (rc != SQLITE_OK)
        goto cleanup;
    for (size_t i = 0; i < n_rows; i++) {
        sqlite3_bind_int(stmt, 1, rows[i].id);
        sqlite3_bind_text(stmt, 2, rows[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 3, rows[i].label, -1, SQLITE_STATIC);
        rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE)
            goto cleanup;
        sqlite3_reset(stmt);
    }
    rc = SQLITE_OK;
cleanup:
    sqlite3_finalize(stmt);
    sqlite3_free(sql);
    return rc;
}

static int fill_metadata(sqlite3 *db)
{
    static const char *const rows[][2] = {
        {"EXPORT_PRODUCT_NAME", "gtrace"},
        {"EXPORT_PRODUCT_VERSION", PACKAGE_VERSION},
        {"EXPORT_SCHEMA_VERSION", GT_NSYS_SCHEMA_VERSION},
        {"EXPORT_SCHEMA_VERSION_MAJOR", "3"},
        {"EXPORT_SCHEMA_VERSION_MINOR", "13"},
        {"EXPORT_SCHEMA_VERSION_MICRO", "2"},
        {"GTRACE_SCHEMA_VERSION", STR(GT_SCHEMA_VERSION)},
    };
    sqlite3_stmt *stmt = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?, ?)", -1, &stmt, NULL);
    if (rc != SQLITE_OK)
        goto cleanup;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sqlite3_bind_text(stmt, 1, rows[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(stmt, 2, rows[i][1], -1, SQLITE_STATIC);
        rc = sqlite3_step(stmt);
        if (rc != SQLITE_DONE)
            goto cleanup;
        sqlite3_reset(stmt);
    }
    rc = SQLITE_OK;
cleanup:
    sqlite3_finalize(stmt);
    return rc;
}

int gt_schema_create(sqlite3 *db)
{
    int rc = exec_all(db, nsys_tables, sizeof nsys_tables / sizeof nsys_tables[0]);
    if (rc == SQLITE_OK)
        rc = exec_all(db, kernel_tables, sizeof kernel_tables / sizeof kernel_tables[0]);
    if (rc == SQLITE_OK)
        rc = exec_all(db, gtrace_tables, sizeof gtrace_tables / sizeof gtrace_tables[0]);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof enum_tables / sizeof enum_tables[0]; i++)
        rc = fill_enum(db, enum_tables[i].table, enum_tables[i].comment, enum_tables[i].rows, enum_tables[i].n_rows);
    if (rc == SQLITE_OK)
        rc = fill_enum(db, "GTRACE_ENUM_MEMORY_OPER", NULL, memory_oper_rows,
                       sizeof memory_oper_rows / sizeof memory_oper_rows[0]);
    if (rc == SQLITE_OK)
        rc = fill_metadata(db);
    return rc;
}

/* ---- closing: what nsys's export has, made from what was written -------------- */

/* nsys 2024.5's kernel table: what gtrace's view becomes when a trace is closed. */
static const char kernel_table_sql[] =
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (\n"
    "    start                    INTEGER NOT NULL,\n"
    "    end                      INTEGER NOT NULL,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    greenContextId           INTEGER,\n"
    "    streamId                 INTEGER NOT NULL,\n"
    "    correlationId            INTEGER,                -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)\n"
    "    globalPid                INTEGER,\n"
    "    demangledName            INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    shortName                INTEGER NOT NULL,       -- REFERENCES StringIds(id)\n"
    "    mangledName              INTEGER,                -- REFERENCES StringIds(id)\n"
    "    launchType               INTEGER,                -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)\n"
    "    cacheConfig              INTEGER,                -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)\n"
    "    registersPerThread       INTEGER NOT NULL,\n"
    "    gridX                    INTEGER NOT NULL,\n"
    "    gridY                    INTEGER NOT NULL,\n"
    "    gridZ                    INTEGER NOT NULL,\n"
    "    blockX                   INTEGER NOT NULL,\n"
    "    blockY                   INTEGER NOT NULL,\n"
    "    blockZ                   INTEGER NOT NULL,\n"
    "    staticSharedMemory       INTEGER NOT NULL,\n"
    "    dynamicSharedMemory      INTEGER NOT NULL,\n"
    "    localMemoryPerThread     INTEGER NOT NULL,\n"
    "    localMemoryTotal         INTEGER NOT NULL,\n"
    "    gridId                   INTEGER NOT NULL,\n"
    "    sharedMemoryExecuted     INTEGER,\n"
    "    graphNodeId              INTEGER,                -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)\n"
    "    sharedMemoryLimitConfig  INTEGER                 -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)\n"
    ")";

static const char context_info_sql[] =
    "CREATE TABLE TARGET_INFO_CUDA_CONTEXT_INFO (\n"
    "    nullStreamId             INTEGER NOT NULL,\n"
    "    hwId                     INTEGER NOT NULL,\n"
    "    vmId                     INTEGER NOT NULL,\n"
    "    processId                INTEGER NOT NULL,\n"
    "    deviceId                 INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    parentContextId          INTEGER,\n"
    "    isGreenContext           INTEGER\n"
    ")";

static const char stream_info_sql[] =
    "CREATE TABLE TARGET_INFO_CUDA_STREAM (\n"
    "    streamId                 INTEGER NOT NULL,\n"
    "    hwId                     INTEGER NOT NULL,\n"
    "    vmId                     INTEGER NOT NULL,\n"
    "    processId                INTEGER NOT NULL,\n"
    "    contextId                INTEGER NOT NULL,\n"
    "    priority                 INTEGER NOT NULL,\n"
    "    flag                     INTEGER NOT NULL        -- REFERENCES ENUM_CUPTI_STREAM_TYPE(id)\n"
    ")";

static const char system_env_sql[] =
    "CREATE TABLE TARGET_INFO_SYSTEM_ENV (\n"
    "    globalVid                INTEGER,\n"
    "    devStateName             TEXT NOT NULL,\n"
    "    name                     TEXT NOT NULL,\n"
    "    nameEnum                 INTEGER NOT NULL,\n"
    "    value                    TEXT NOT NULL\n"
    ")";

static const char capture_meta_sql[] =
    "CREATE TABLE META_DATA_CAPTURE (\n"
    "    name                     TEXT NOT NULL,\n"
    "    value                    TEXT\n"
    ")";

/* nsys's event tables, left out of a closed trace when nothing went into
 * them (as nsys leaves out what it did not collect); every reader of nsys
 * exports, gtrace's included, copes with their absence. The GTRACE_* tables
 * stay, empty or not: an empty GTRACE_DROPPED_EVENTS says nothing was lost. */
static const char *const droppable_tables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS",
    "CUDA_GPU_MEMORY_USAGE_EVENTS", "CUDA_CALLCHAINS",
};

/* The GPU activity tables a context or a stream shows up in. */
static const char *const gpu_tables[] = {
    "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
};

/* One integer from `sql` (0 when it returns no row). */
static int query_int(sqlite3 *db, const char *sql, int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    *out = 0;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW)
            *out = sqlite3_column_int64(st, 0);
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    return rc;
}

/* Whether `name` is a table (not a view) of the trace. */
static int is_table(sqlite3 *db, const char *name, bool *out)
{
    char *sql = sqlite3_mprintf("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = %Q", name);
    if (!sql)
        return SQLITE_NOMEM;
    int64_t n;
    int rc = query_int(db, sql, &n);
    sqlite3_free(sql);
    *out = n > 0;
    return rc;
}

static int exec_fmt(sqlite3 *db, const char *fmt, const char *arg)
{
    char *sql = sqlite3_mprintf(fmt, arg);
    if (!sql)
        return SQLITE_NOMEM;
    int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return rc;
}

/* The compact kernel tables become nsys's table, its rows in start order
 * (the compact table's rowid order), so GTRACE_TIME_ORDERED may list it. */
static int finish_kernels(sqlite3 *db)
{
    bool compact;
    int rc = is_table(db, GT_TABLE_KERNELS, &compact);
    if (rc != SQLITE_OK || !compact)
        return rc;
    static const char *const steps[] = {
        "DROP VIEW IF EXISTS CUPTI_ACTIVITY_KIND_KERNEL",
        kernel_table_sql,
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT\n" KERNEL_COLUMNS
        "FROM " GT_TABLE_KERNELS " AS k JOIN " GT_TABLE_KERNEL_LAUNCHES " AS l ON l.id = k.launchId ORDER BY k.id",
        "DROP TABLE " GT_TABLE_KERNELS,
        "DROP TABLE " GT_TABLE_KERNEL_LAUNCHES,
    };
    return exec_all(db, steps, sizeof steps / sizeof steps[0]);
}

static int drop_empty_tables(sqlite3 *db)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof droppable_tables / sizeof droppable_tables[0]; i++) {
        bool there = false;
        int64_t any = 1;
        rc = is_table(db, droppable_tables[i], &there);
        if (rc != SQLITE_OK || !there)
            continue;
        char *sql = sqlite3_mprintf("SELECT EXISTS (SELECT 1 FROM \"%w\")", droppable_tables[i]);
        rc = sql ? query_int(db, sql, &any) : SQLITE_NOMEM;
        sqlite3_free(sql);
        if (rc == SQLITE_OK && !any)
            rc = exec_fmt(db, "DROP TABLE \"%w\"", droppable_tables[i]);
    }
    return rc;
}

/* Runs `create`, then the INSERT of `select_fmt` over the union of the GPU
 * tables there are (%s: the union); no row, no table. */
static int table_from_gpu_rows(sqlite3 *db, const char *create, const char *select_fmt, const char *columns)
{
    sqlite3_str *u = sqlite3_str_new(db);
    int n = 0, rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof gpu_tables / sizeof gpu_tables[0]; i++) {
        bool there = false;
        rc = is_table(db, gpu_tables[i], &there);
        if (rc == SQLITE_OK && there)
            sqlite3_str_appendf(u, "%sSELECT %s FROM \"%w\"", n++ ? " UNION " : "", columns, gpu_tables[i]);
    }
    char *uni = sqlite3_str_finish(u);
    if (rc != SQLITE_OK || n == 0 || !uni) {
        sqlite3_free(uni);
        return rc != SQLITE_OK ? rc : n == 0 ? SQLITE_OK : SQLITE_NOMEM;
    }
    rc = sqlite3_exec(db, create, NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = exec_fmt(db, select_fmt, uni);
    if (rc == SQLITE_OK && sqlite3_changes(db) == 0) {
        const char *name = create + strlen("CREATE TABLE ");
        char table[64];
        snprintf(table, sizeof table, "%.*s", (int)strcspn(name, " ("), name);
        rc = exec_fmt(db, "DROP TABLE \"%w\"", table);
    }
    sqlite3_free(uni);
    return rc;
}

/* The CUDA contexts and streams the GPU activity names. gtrace records
 * neither a context's null stream (nullStreamId -1: none known) nor a
 * stream's priority and creation flags (0: the default priority, and
 * CUPTI's "unknown stream type"). */
#define GT_VM_ID_STR STR(GT_VM_ID)
static int add_context_and_stream_info(sqlite3 *db)
{
    int rc = table_from_gpu_rows(
        db, context_info_sql,
        "INSERT INTO TARGET_INFO_CUDA_CONTEXT_INFO (nullStreamId, hwId, vmId, processId, deviceId, contextId)"
        " SELECT DISTINCT -1, deviceId, " GT_VM_ID_STR ", (coalesce(globalPid, 0) >> 24) & 16777215, deviceId,"
        " contextId FROM (%s) ORDER BY 4, 5, 6",
        "globalPid, deviceId, contextId");
    if (rc == SQLITE_OK)
        rc = table_from_gpu_rows(
            db, stream_info_sql,
            "INSERT INTO TARGET_INFO_CUDA_STREAM (streamId, hwId, vmId, processId, contextId, priority, flag)"
            " SELECT DISTINCT streamId, deviceId, " GT_VM_ID_STR ", (coalesce(globalPid, 0) >> 24) & 16777215,"
            " contextId, 0, 0 FROM (%s) WHERE streamId >= 0 ORDER BY 4, 5, 1",
            "globalPid, deviceId, contextId, streamId");
    return rc;
}

/* The machine the trace was recorded on, for a trace written where it was
 * recorded (not for one imported from another tool's files). nameEnum: the
 * numbers nsys gives these names. */
static int add_system_env(sqlite3 *db)
{
    bool config;
    int64_t imported = 0;
    int rc = is_table(db, GT_TABLE_RUN_CONFIG, &config);
    if (rc == SQLITE_OK && config)
        rc = query_int(db, "SELECT EXISTS (SELECT 1 FROM " GT_TABLE_RUN_CONFIG " WHERE key = 'import.source')",
                       &imported);
    if (rc != SQLITE_OK || imported)
        return rc;

    char host[256] = "", cores[32], os[512] = "", arch[128] = "";
    struct utsname u;
    if (gethostname(host, sizeof host - 1) != 0)
        host[0] = '\0';
    snprintf(cores, sizeof cores, "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    if (uname(&u) == 0) {
        snprintf(os, sizeof os, "%s %s", u.sysname, u.release);
        snprintf(arch, sizeof arch, "%s", u.machine);
    }
    const struct { const char *name; int name_enum; const char *value; } rows[] = {
        {"CpuCores", 1, cores}, {"CpuArchitecture", 3, arch}, {"OsDescription", 605, os}, {"Hostname", 619, host},
    };
    rc = sqlite3_exec(db, system_env_sql, NULL, NULL, NULL);
    sqlite3_stmt *st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value)"
                                " VALUES (" STR(GT_VM_ID) " << 48, 'Local (gtrace)', ?, ?, ?)", -1, &st, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof rows / sizeof rows[0]; i++) {
        if (!rows[i].value[0] || strcmp(rows[i].value, "-1") == 0)
            continue; /* not known here */
        sqlite3_bind_text(st, 1, rows[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_int(st, 2, rows[i].name_enum);
        sqlite3_bind_text(st, 3, rows[i].value, -1, SQLITE_TRANSIENT);
        rc = sqlite3_step(st);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* What was collected, as nsys names it (CAPTURE_EVENT_TYPE rows). */
static int add_capture_meta(sqlite3 *db)
{
    static const struct { const char *table, *type; } kinds[] = {
        {"CUPTI_ACTIVITY_KIND_RUNTIME", "Cuda"}, {"CUPTI_ACTIVITY_KIND_KERNEL", "Cuda"},
        {"CUPTI_ACTIVITY_KIND_MEMCPY", "Cuda"}, {"NVTX_EVENTS", "NvtxEvents"},
    };
    bool cuda = false, nvtx = false;
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof kinds / sizeof kinds[0]; i++) {
        bool there = false;
        rc = is_table(db, kinds[i].table, &there);
        if (there && strcmp(kinds[i].type, "Cuda") == 0)
            cuda = true;
        else if (there)
            nvtx = true;
    }
    if (rc != SQLITE_OK || (!cuda && !nvtx))
        return rc;
    rc = sqlite3_exec(db, capture_meta_sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK && nvtx)
        rc = sqlite3_exec(db, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('CAPTURE_EVENT_TYPE', 'NvtxEvents')",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK && cuda)
        rc = sqlite3_exec(db, "INSERT INTO META_DATA_CAPTURE (name, value) VALUES ('CAPTURE_EVENT_TYPE', 'Cuda')",
                          NULL, NULL, NULL);
    return rc;
}

int gt_schema_finish(sqlite3 *db)
{
    int rc = finish_kernels(db);
    if (rc == SQLITE_OK)
        rc = drop_empty_tables(db);
    if (rc == SQLITE_OK)
        rc = add_context_and_stream_info(db);
    if (rc == SQLITE_OK)
        rc = add_system_env(db);
    if (rc == SQLITE_OK)
        rc = add_capture_meta(db);
    return rc;
}

int gt_schema_is_table(sqlite3 *db, const char *name, bool *out)
{
    return is_table(db, name, out);
}
