/* columns.c: the description of every table a gtrace trace has, one line
 * per column (columns.h says what a description holds), and what is made
 * from them: the DDL, the INSERT statements and the reader's field lists.
 *
 * Tables that Nsight Systems' SQLite export has are described with nsys
 * 2024.5's names, columns, declared types and column order (export schema
 * 3.13.2, checked against the nsys exports in tests/fixtures by
 * test_store_schema); the long per-column comments of nsys are left out, its
 * REFERENCES notes kept. Four tables the 3.13.2 fixture lacks (NVTX_EVENTS,
 * _MEMSET, CUDA_GPU_MEMORY_USAGE_EVENTS, CUDA_CALLCHAINS) are 2.9.1's, with
 * the columns 3.x added to them.
 *
 * This file runs no SQL: schema.c creates the tables, writer*.c fill them,
 * reader*.c read them. */
#include "config.h"

#include "columns.h"
#include "schema.h"

#include <stdio.h>
#include <string.h>

#define NN 1 /* NOT NULL */
#define PK 2 /* NOT NULL PRIMARY KEY */

/* a column put from and got into member m of struct s */
#define COL(s, name, sql, nn, m, put, get, note) {name, sql, nn, put, get, offsetof(s, m), note}
/* a column neither written nor read by gtrace (NULL in its traces) */
#define UNUSED(name, sql, nn, note) {name, sql, nn, P_NONE, F_NONE, 0, note}
/* a column the writer's code binds itself, and the reader reads apart */
#define HOOK(name, sql, nn, note) {name, sql, nn, P_HOOK, F_NONE, 0, note}

#define I SQL_INTEGER
#define T SQL_TEXT
#define R SQL_REAL

#define REF_STRING "REFERENCES StringIds(id)"
#define REF_RUNTIME "REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)"
#define REF_MEM_KIND "REFERENCES ENUM_CUDA_MEM_KIND(id)"
#define REF_GRAPH_NODE "REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)"
#define REF_CALLCHAIN "REFERENCES CUDA_CALLCHAINS(id)"

#define TABLE(var, tname, cols, constraint) \
    const gt_table_desc var = {tname, cols, sizeof cols / sizeof cols[0], constraint}

/* ---- nsys's description tables -------------------------------------------- */

static const gt_column string_ids[] = {
    HOOK("id", I, PK, NULL),
    HOOK("value", T, NN, NULL),
};
TABLE(gt_tab_string_ids, "StringIds", string_ids, NULL);

static const gt_column thread_names[] = {
    HOOK("nameId", I, NN, REF_STRING),
    HOOK("priority", I, 0, NULL),
    HOOK("globalTid", I, 0, NULL),
};
TABLE(gt_tab_thread_names, "ThreadNames", thread_names, NULL);

static const gt_column processes[] = {
    COL(gt_process, "globalPid", I, 0, global_pid, P_I64, F_I64, NULL),
    COL(gt_process, "pid", I, 0, pid, P_I64, F_I64, NULL),
    COL(gt_process, "name", T, 0, name, P_TEXT, F_STR, NULL),
};
TABLE(gt_tab_processes, "PROCESSES", processes, NULL);

static const gt_column target_info_gpu[] = {
    HOOK("vmId", I, NN, NULL),
    COL(gt_gpu_info, "id", I, NN, id, P_I32, F_I32, NULL),
    COL(gt_gpu_info, "name", T, 0, name, P_TEXT, F_STR, NULL),
    COL(gt_gpu_info, "busLocation", T, 0, bus_location, P_TEXT, F_STR, NULL),
    UNUSED("isDiscrete", I, 0, NULL),
    COL(gt_gpu_info, "l2CacheSize", I, 0, l2_cache_bytes, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "totalMemory", I, 0, total_memory_bytes, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "memoryBandwidth", I, 0, memory_bandwidth_bytes_per_s, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "clockRate", I, 0, clock_rate_hz, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "smCount", I, 0, sm_count, P_I32, F_I32, NULL),
    UNUSED("pwGpuId", I, 0, NULL),
    COL(gt_gpu_info, "uuid", T, 0, uuid, P_TEXT, F_STR, NULL),
    UNUSED("luid", I, 0, NULL),
    COL(gt_gpu_info, "chipName", T, 0, chip_name, P_TEXT, F_STR, NULL),
    COL(gt_gpu_info, "cuDevice", I, 0, id, P_I32, F_NONE, NULL),
    UNUSED("ctxswDevPath", T, 0, NULL),
    UNUSED("ctrlDevPath", T, 0, NULL),
    UNUSED("revision", I, 0, NULL),
    UNUSED("nodeMask", I, 0, NULL),
    UNUSED("constantMemory", I, 0, NULL),
    UNUSED("maxIPC", I, 0, NULL),
    COL(gt_gpu_info, "maxRegistersPerBlock", I, 0, max_registers_per_block, P_I32, F_I32, NULL),
    COL(gt_gpu_info, "maxShmemPerBlock", I, 0, max_shmem_per_block, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "maxShmemPerBlockOptin", I, 0, max_shmem_per_block_optin, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "maxShmemPerSm", I, 0, max_shmem_per_sm, P_I64, F_SIZE, NULL),
    COL(gt_gpu_info, "maxRegistersPerSm", I, 0, max_registers_per_sm, P_I32, F_I32, NULL),
    COL(gt_gpu_info, "threadsPerWarp", I, 0, threads_per_warp, P_I32, F_I32, NULL),
    COL(gt_gpu_info, "asyncEngines", I, 0, async_engines, P_I32, F_I32, NULL),
    UNUSED("maxWarpsPerSm", I, 0, NULL),
    UNUSED("maxBlocksPerSm", I, 0, NULL),
    COL(gt_gpu_info, "maxThreadsPerBlock", I, 0, max_threads_per_block, P_I32, F_I32, NULL),
    UNUSED("maxBlockDimX", I, 0, NULL),
    UNUSED("maxBlockDimY", I, 0, NULL),
    UNUSED("maxBlockDimZ", I, 0, NULL),
    UNUSED("maxGridDimX", I, 0, NULL),
    UNUSED("maxGridDimY", I, 0, NULL),
    UNUSED("maxGridDimZ", I, 0, NULL),
    COL(gt_gpu_info, "computeMajor", I, 0, compute_major, P_I32, F_I32, NULL),
    COL(gt_gpu_info, "computeMinor", I, 0, compute_minor, P_I32, F_I32, NULL),
    COL(gt_gpu_info, "smMajor", I, 0, compute_major, P_I32, F_NONE, NULL),
    COL(gt_gpu_info, "smMinor", I, 0, compute_minor, P_I32, F_NONE, NULL),
};
TABLE(gt_tab_target_info_gpu, "TARGET_INFO_GPU", target_info_gpu, NULL);

static const gt_column session_start[] = {
    HOOK("utcEpochNs", I, 0, NULL),
    HOOK("utcTime", T, 0, NULL),
    HOOK("localTime", T, 0, NULL),
};
TABLE(gt_tab_session_start, "TARGET_INFO_SESSION_START_TIME", session_start, NULL);

static const gt_column name_value[] = {
    HOOK("name", T, NN, NULL),
    HOOK("value", T, 0, NULL),
};
TABLE(gt_tab_meta_data_export, "META_DATA_EXPORT", name_value, NULL);
TABLE(gt_tab_meta_data_capture, "META_DATA_CAPTURE", name_value, NULL);

/* ---- nsys's event tables ------------------------------------------------------ */

/* The first eight columns of nsys's GPU activity tables (copies, memsets,
 * synchronizations), from the members of the same names of struct s. */
#define GPU_ACTIVITY_COLUMNS(s, correlation_note) \
    COL(s, "start", I, NN, start_ns, P_I64, F_TIME, NULL), \
    COL(s, "end", I, NN, end_ns, P_I64, F_TIME, NULL), \
    COL(s, "deviceId", I, NN, device_id, P_I32, F_I32, NULL), \
    COL(s, "contextId", I, NN, context_id, P_I32, F_I32, NULL), \
    UNUSED("greenContextId", I, 0, NULL), \
    COL(s, "streamId", I, NN, stream_id, P_I32, F_I32, NULL), \
    COL(s, "correlationId", I, 0, correlation_id, P_I64, F_I64, correlation_note), \
    COL(s, "globalPid", I, 0, global_pid, P_I64, F_I64, NULL)

static const gt_column memcpy_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_memcpy, REF_RUNTIME),
    COL(gt_memcpy, "bytes", I, NN, bytes, P_I64, F_SIZE, NULL),
    COL(gt_memcpy, "copyKind", I, NN, copy_kind, P_I32, F_I32, "REFERENCES ENUM_CUDA_MEMCPY_OPER(id)"),
    UNUSED("deprecatedSrcId", I, 0, NULL),
    COL(gt_memcpy, "srcKind", I, 0, src_kind, P_I32, F_I32, REF_MEM_KIND),
    COL(gt_memcpy, "dstKind", I, 0, dst_kind, P_I32, F_I32, REF_MEM_KIND),
    COL(gt_memcpy, "srcDeviceId", I, 0, src_device_id, P_I32, F_I32, NULL),
    UNUSED("srcContextId", I, 0, NULL),
    COL(gt_memcpy, "dstDeviceId", I, 0, dst_device_id, P_I32, F_I32, NULL),
    UNUSED("dstContextId", I, 0, NULL),
    UNUSED("migrationCause", I, 0, "REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)"),
    UNUSED("graphNodeId", I, 0, REF_GRAPH_NODE),
    UNUSED("virtualAddress", I, 0, NULL),
};
TABLE(gt_tab_memcpy, "CUPTI_ACTIVITY_KIND_MEMCPY", memcpy_cols, NULL);

static const gt_column runtime_cols[] = {
    COL(gt_api_call, "start", I, NN, start_ns, P_I64, F_TIME, NULL),
    COL(gt_api_call, "end", I, NN, end_ns, P_I64, F_TIME, NULL),
    COL(gt_api_call, "eventClass", I, NN, event_class, P_I32, F_I32, "REFERENCES ENUM_NSYS_EVENT_CLASS(id)"),
    COL(gt_api_call, "globalTid", I, 0, global_tid, P_I64, F_I64, NULL),
    COL(gt_api_call, "correlationId", I, 0, correlation_id, P_I64, F_I64, NULL),
    COL(gt_api_call, "nameId", I, NN, name, P_I64, F_I64, REF_STRING),
    COL(gt_api_call, "returnValue", I, NN, return_value, P_I32, F_I32, NULL),
    COL(gt_api_call, "callchainId", I, 0, callchain_id, P_I64_NZ, F_I64, REF_CALLCHAIN),
};
TABLE(gt_tab_runtime, "CUPTI_ACTIVITY_KIND_RUNTIME", runtime_cols, NULL);

static const gt_column sync_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_sync, NULL),
    COL(gt_sync, "syncType", I, NN, sync_type, P_I32, F_I32, "REFERENCES ENUM_CUPTI_SYNC_TYPE(id)"),
    COL(gt_sync, "eventId", I, NN, event_id, P_I64, F_I64, NULL),
};
TABLE(gt_tab_sync, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", sync_cols, NULL);

static const gt_column memset_cols[] = {
    GPU_ACTIVITY_COLUMNS(gt_memset, REF_RUNTIME),
    COL(gt_memset, "value", I, NN, value, P_I32, F_I32, NULL),
    COL(gt_memset, "bytes", I, NN, bytes, P_I64, F_SIZE, NULL),
    UNUSED("graphNodeId", I, 0, REF_GRAPH_NODE),
    COL(gt_memset, "memKind", I, 0, mem_kind, P_I32, F_I32, REF_MEM_KIND),
};
TABLE(gt_tab_memset, "CUPTI_ACTIVITY_KIND_MEMSET", memset_cols, NULL);

/* Absent values are NULL, as nsys writes them. The color, the message
 * (a registered string's id in textId, any other message in text) and the
 * payload (one of the six value columns) are put and got by the NVTX code
 * of the writer and the reader. */
static const gt_column nvtx_cols[] = {
    COL(gt_nvtx, "start", I, NN, start_ns, P_I64, F_TIME, NULL),
    COL(gt_nvtx, "end", I, 0, end_ns, P_END_NEG1, F_END_OR_NEG1, NULL),
    COL(gt_nvtx, "eventType", I, NN, event_type, P_I32, F_I32, "REFERENCES ENUM_NSYS_EVENT_TYPE(id)"),
    COL(gt_nvtx, "rangeId", I, 0, range_id, P_I64_NZ, F_I64, NULL),
    COL(gt_nvtx, "category", I, 0, category, P_I32_NZ, F_I32, NULL),
    {"color", I, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, color), NULL},
    {"text", T, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, text), NULL},
    COL(gt_nvtx, "globalTid", I, 0, global_tid, P_I64, F_I64, NULL),
    COL(gt_nvtx, "endGlobalTid", I, 0, end_global_tid, P_I64_NZ, F_I64, NULL),
    {"textId", I, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, text), REF_STRING},
    COL(gt_nvtx, "domainId", I, 0, domain_id, P_I64, F_I64, NULL),
    {"uint64Value", I, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, payload), NULL},
    {"int64Value", I, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, payload), NULL},
    {"doubleValue", R, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, payload), NULL},
    {"uint32Value", I, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, payload), NULL},
    {"int32Value", I, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, payload), NULL},
    {"floatValue", R, 0, P_HOOK, F_HOOK, offsetof(gt_nvtx, payload), NULL},
    UNUSED("jsonTextId", I, 0, NULL),
    UNUSED("jsonText", T, 0, NULL),
};
TABLE(gt_tab_nvtx, "NVTX_EVENTS", nvtx_cols, NULL);

static const gt_column gpu_memory_cols[] = {
    COL(gt_gpu_memory, "start", I, NN, start_ns, P_I64, F_TIME, NULL),
    COL(gt_gpu_memory, "globalPid", I, NN, global_pid, P_I64, F_I64, NULL),
    COL(gt_gpu_memory, "deviceId", I, NN, device_id, P_I32, F_I32, NULL),
    COL(gt_gpu_memory, "contextId", I, NN, context_id, P_I32, F_I32, NULL),
    COL(gt_gpu_memory, "address", I, NN, address, P_I64, F_I64, NULL),
    COL(gt_gpu_memory, "pc", I, NN, pc, P_I64, F_I64, NULL),
    COL(gt_gpu_memory, "bytes", I, NN, bytes, P_I64, F_SIZE, NULL),
    COL(gt_gpu_memory, "memKind", I, NN, mem_kind, P_I32, F_I32, REF_MEM_KIND),
    COL(gt_gpu_memory, "memoryOperationType", I, NN, operation, P_I32, F_I32,
        "REFERENCES ENUM_CUDA_DEV_MEM_EVENT_OPER(id)"),
    UNUSED("name", T, 0, NULL),
    COL(gt_gpu_memory, "correlationId", I, 0, correlation_id, P_I64, F_I64, REF_RUNTIME),
    COL(gt_gpu_memory, "streamId", I, 0, stream_id, P_I32, F_I32, NULL),
    UNUSED("localMemoryPoolAddress", I, 0, NULL),
    UNUSED("localMemoryPoolReleaseThreshold", I, 0, NULL),
    UNUSED("localMemoryPoolSize", I, 0, NULL),
    UNUSED("localMemoryPoolUtilizedSize", I, 0, NULL),
    UNUSED("importedMemoryPoolAddress", I, 0, NULL),
    UNUSED("importedMemoryPoolProcessId", I, 0, NULL),
};
TABLE(gt_tab_gpu_memory, "CUDA_GPU_MEMORY_USAGE_EVENTS", gpu_memory_cols, NULL);

static const gt_column callchain_cols[] = {
    HOOK("id", I, NN, NULL),
    COL(gt_frame, "symbol", I, NN, symbol, P_I64, F_I64, REF_STRING),
    COL(gt_frame, "module", I, NN, module, P_I64, F_I64, REF_STRING),
    COL(gt_frame, "unresolved", I, 0, unresolved, P_BOOL, F_BOOL, NULL),
    COL(gt_frame, "originalIP", I, 0, original_ip, P_I64, F_I64, NULL),
    HOOK("stackDepth", I, NN, NULL),
};
TABLE(gt_tab_callchains, "CUDA_CALLCHAINS", callchain_cols, "PRIMARY KEY (id, stackDepth)");

/* nsys's kernel table: what a closed trace holds, filled by closing from
 * the two compact tables below (and, while written, a view of them). */
static const gt_column kernel_cols[] = {
    COL(gt_kernel, "start", I, NN, start_ns, P_NONE, F_TIME, NULL),
    COL(gt_kernel, "end", I, NN, end_ns, P_NONE, F_TIME, NULL),
    COL(gt_kernel, "deviceId", I, NN, device_id, P_NONE, F_I32, NULL),
    COL(gt_kernel, "contextId", I, NN, context_id, P_NONE, F_I32, NULL),
    UNUSED("greenContextId", I, 0, NULL),
    COL(gt_kernel, "streamId", I, NN, stream_id, P_NONE, F_I32, NULL),
    COL(gt_kernel, "correlationId", I, 0, correlation_id, P_NONE, F_I64, REF_RUNTIME),
    COL(gt_kernel, "globalPid", I, 0, global_pid, P_NONE, F_I64, NULL),
    COL(gt_kernel, "demangledName", I, NN, demangled_name, P_NONE, F_I64, REF_STRING),
    COL(gt_kernel, "shortName", I, NN, short_name, P_NONE, F_I64, REF_STRING),
    COL(gt_kernel, "mangledName", I, 0, mangled_name, P_NONE, F_I64, REF_STRING),
    COL(gt_kernel, "launchType", I, 0, launch_type, P_NONE, F_I32, "REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)"),
    COL(gt_kernel, "cacheConfig", I, 0, cache_config, P_NONE, F_I32, "REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)"),
    COL(gt_kernel, "registersPerThread", I, NN, registers_per_thread, P_NONE, F_I32, NULL),
    COL(gt_kernel, "gridX", I, NN, grid_x, P_NONE, F_I32, NULL),
    COL(gt_kernel, "gridY", I, NN, grid_y, P_NONE, F_I32, NULL),
    COL(gt_kernel, "gridZ", I, NN, grid_z, P_NONE, F_I32, NULL),
    COL(gt_kernel, "blockX", I, NN, block_x, P_NONE, F_I32, NULL),
    COL(gt_kernel, "blockY", I, NN, block_y, P_NONE, F_I32, NULL),
    COL(gt_kernel, "blockZ", I, NN, block_z, P_NONE, F_I32, NULL),
    COL(gt_kernel, "staticSharedMemory", I, NN, static_shared_bytes, P_NONE, F_I32, NULL),
    COL(gt_kernel, "dynamicSharedMemory", I, NN, dynamic_shared_bytes, P_NONE, F_I32, NULL),
    COL(gt_kernel, "localMemoryPerThread", I, NN, local_per_thread_bytes, P_NONE, F_I32, NULL),
    COL(gt_kernel, "localMemoryTotal", I, NN, local_total_bytes, P_NONE, F_SIZE, NULL),
    COL(gt_kernel, "gridId", I, NN, grid_id, P_NONE, F_I64, NULL),
    UNUSED("sharedMemoryExecuted", I, 0, NULL),
    COL(gt_kernel, "graphNodeId", I, 0, graph_node_id, P_NONE, F_I64, REF_GRAPH_NODE),
    COL(gt_kernel, "sharedMemoryLimitConfig", I, 0, shared_limit_config, P_NONE, F_I32,
        "REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)"),
};
TABLE(gt_tab_kernel, "CUPTI_ACTIVITY_KIND_KERNEL", kernel_cols, NULL);

/* ---- the TARGET_INFO_* tables closing writes ------------------------------------ */

static const gt_column context_info_cols[] = {
    UNUSED("nullStreamId", I, NN, NULL),
    UNUSED("hwId", I, NN, NULL),
    UNUSED("vmId", I, NN, NULL),
    UNUSED("processId", I, NN, NULL),
    UNUSED("deviceId", I, NN, NULL),
    UNUSED("contextId", I, NN, NULL),
    UNUSED("parentContextId", I, 0, NULL),
    UNUSED("isGreenContext", I, 0, NULL),
};
TABLE(gt_tab_context_info, "TARGET_INFO_CUDA_CONTEXT_INFO", context_info_cols, NULL);

static const gt_column stream_info_cols[] = {
    UNUSED("streamId", I, NN, NULL),
    UNUSED("hwId", I, NN, NULL),
    UNUSED("vmId", I, NN, NULL),
    UNUSED("processId", I, NN, NULL),
    UNUSED("contextId", I, NN, NULL),
    UNUSED("priority", I, NN, NULL),
    UNUSED("flag", I, NN, "REFERENCES ENUM_CUPTI_STREAM_TYPE(id)"),
};
TABLE(gt_tab_stream_info, "TARGET_INFO_CUDA_STREAM", stream_info_cols, NULL);

static const gt_column system_env_cols[] = {
    UNUSED("globalVid", I, 0, NULL),
    UNUSED("devStateName", T, NN, NULL),
    UNUSED("name", T, NN, NULL),
    UNUSED("nameEnum", I, NN, NULL),
    UNUSED("value", T, NN, NULL),
};
TABLE(gt_tab_system_env, "TARGET_INFO_SYSTEM_ENV", system_env_cols, NULL);

/* ---- kernels while written: deduplicated launches, compact rows ------------------ */

/* One row per distinct launch configuration: a training step launches the
 * same few hundred configurations again and again. Read into the members of
 * a gt_kernel that are the same for every launch of one configuration. */
static const gt_column kernel_launch_cols[] = {
    HOOK("id", I, PK, NULL),
    COL(gt_kernel, "globalPid", I, 0, global_pid, P_I64, F_I64, NULL),
    COL(gt_kernel, "deviceId", I, NN, device_id, P_I32, F_I32, NULL),
    COL(gt_kernel, "contextId", I, NN, context_id, P_I32, F_I32, NULL),
    UNUSED("greenContextId", I, 0, NULL),
    COL(gt_kernel, "demangledName", I, NN, demangled_name, P_I64, F_I64, REF_STRING),
    COL(gt_kernel, "shortName", I, NN, short_name, P_I64, F_I64, REF_STRING),
    COL(gt_kernel, "mangledName", I, 0, mangled_name, P_I64_NZ, F_I64, REF_STRING),
    COL(gt_kernel, "launchType", I, 0, launch_type, P_I32, F_I32, "REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)"),
    COL(gt_kernel, "cacheConfig", I, 0, cache_config, P_I32, F_I32, "REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)"),
    COL(gt_kernel, "registersPerThread", I, NN, registers_per_thread, P_I32, F_I32, NULL),
    COL(gt_kernel, "gridX", I, NN, grid_x, P_I32, F_I32, NULL),
    COL(gt_kernel, "gridY", I, NN, grid_y, P_I32, F_I32, NULL),
    COL(gt_kernel, "gridZ", I, NN, grid_z, P_I32, F_I32, NULL),
    COL(gt_kernel, "blockX", I, NN, block_x, P_I32, F_I32, NULL),
    COL(gt_kernel, "blockY", I, NN, block_y, P_I32, F_I32, NULL),
    COL(gt_kernel, "blockZ", I, NN, block_z, P_I32, F_I32, NULL),
    COL(gt_kernel, "staticSharedMemory", I, NN, static_shared_bytes, P_I32, F_I32, NULL),
    COL(gt_kernel, "dynamicSharedMemory", I, NN, dynamic_shared_bytes, P_I32, F_I32, NULL),
    COL(gt_kernel, "localMemoryPerThread", I, NN, local_per_thread_bytes, P_I32, F_I32, NULL),
    COL(gt_kernel, "localMemoryTotal", I, NN, local_total_bytes, P_I64, F_SIZE, NULL),
    UNUSED("sharedMemoryExecuted", I, 0, NULL),
    COL(gt_kernel, "sharedMemoryLimitConfig", I, 0, shared_limit_config, P_I32, F_I32,
        "REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)"),
};
TABLE(gt_tab_kernel_launches, GT_TABLE_KERNEL_LAUNCHES, kernel_launch_cols, NULL);

/* Clustered on start: a time range is a rowid range, no index needed. The
 * id is made of the start (the writer's kernel code), launchId names the
 * launch row (the reader's launch hook copies it in). */
static const gt_column kernels_cols[] = {
    {"id", I, PK, P_HOOK, F_ID_START, offsetof(gt_kernel, start_ns), "(start << 8) | k"},
    COL(gt_kernel, "end", I, NN, end_ns, P_I64, F_TIME, NULL),
    COL(gt_kernel, "streamId", I, NN, stream_id, P_I32, F_I32, NULL),
    COL(gt_kernel, "correlationId", I, 0, correlation_id, P_I64, F_I64, REF_RUNTIME),
    {"launchId", I, NN, P_HOOK, F_HOOK, 0, "REFERENCES " GT_TABLE_KERNEL_LAUNCHES "(id)"},
    COL(gt_kernel, "gridId", I, NN, grid_id, P_I64, F_I64, NULL),
    COL(gt_kernel, "graphNodeId", I, 0, graph_node_id, P_I64_NZ, F_I64, REF_GRAPH_NODE),
};
TABLE(gt_tab_kernels, GT_TABLE_KERNELS, kernels_cols, NULL);

/* ---- gtrace-only tables ------------------------------------------------------------- */

/* The NVTX memory API: heaps (pools) and regions (blocks) of caching allocators. */
static const gt_column memory_event_cols[] = {
    COL(gt_heap_event, "start", I, NN, start_ns, P_I64, F_TIME, NULL),
    COL(gt_heap_event, "globalTid", I, 0, global_tid, P_I64, F_I64, NULL),
    COL(gt_heap_event, "operation", I, NN, operation, P_I32, F_I32, "REFERENCES GTRACE_ENUM_MEMORY_OPER(id)"),
    COL(gt_heap_event, "heapId", I, 0, heap_id, P_I64, F_I64, "the nvtxMemHeapHandle_t"),
    COL(gt_heap_event, "address", I, 0, address, P_I64, F_I64, NULL),
    COL(gt_heap_event, "bytes", I, 0, bytes, P_I64, F_SIZE, NULL),
    COL(gt_heap_event, "heapUsage", I, 0, heap_usage, P_I32, F_I32, "nvtxMemHeapUsage"),
    COL(gt_heap_event, "memoryType", I, 0, memory_type, P_I32, F_I32, "nvtxMemType"),
    COL(gt_heap_event, "nameId", I, 0, name, P_I64_NZ, F_I64, REF_STRING),
    COL(gt_heap_event, "domainId", I, 0, domain_id, P_I64, F_I64, NULL),
    COL(gt_heap_event, "callchainId", I, 0, callchain_id, P_I64_NZ, F_I64, REF_CALLCHAIN),
};
TABLE(gt_tab_memory_events, GT_TABLE_MEMORY_EVENTS, memory_event_cols, NULL);

static const gt_column memory_oper_cols[] = {
    HOOK("id", I, PK, NULL),
    HOOK("name", T, 0, NULL),
    HOOK("label", T, 0, NULL),
};
TABLE(gt_tab_memory_oper, "GTRACE_ENUM_MEMORY_OPER", memory_oper_cols, NULL);

/* Allocation stacks of device allocations; eventId is the rowid of the
 * CUDA_GPU_MEMORY_USAGE_EVENTS row (kept by VACUUM only if not renumbered:
 * gtrace never vacuums a trace). Read joined to that table. */
static const gt_column gpu_memory_stack_cols[] = {
    HOOK("eventId", I, PK, "CUDA_GPU_MEMORY_USAGE_EVENTS.rowid"),
    COL(gt_gpu_memory, "callchainId", I, NN, callchain_id, P_I64, F_I64, REF_CALLCHAIN),
};
TABLE(gt_tab_gpu_memory_stacks, GT_TABLE_GPU_MEMORY_STACKS, gpu_memory_stack_cols, NULL);

/* Command line, environment, options; globalPid 0: the whole trace. */
static const gt_column run_config_cols[] = {
    HOOK("globalPid", I, NN, NULL),
    HOOK("key", T, NN, NULL),
    HOOK("value", T, 0, NULL),
};
TABLE(gt_tab_run_config, GT_TABLE_RUN_CONFIG, run_config_cols, NULL);

static const gt_column cpu_op_cols[] = {
    COL(gt_cpu_op, "start", I, NN, start_ns, P_I64, F_TIME, NULL),
    COL(gt_cpu_op, "end", I, NN, end_ns, P_I64, F_TIME, NULL),
    COL(gt_cpu_op, "globalTid", I, 0, global_tid, P_I64, F_I64, NULL),
    COL(gt_cpu_op, "nameId", I, NN, name, P_I64, F_I64, REF_STRING),
    COL(gt_cpu_op, "streamId", I, 0, stream_id, P_I32, F_I32, NULL),
    COL(gt_cpu_op, "flops", I, 0, flops, P_I64, F_SIZE, NULL),
    COL(gt_cpu_op, "bytes", I, 0, bytes, P_I64, F_SIZE, NULL),
};
TABLE(gt_tab_cpu_ops, GT_TABLE_CPU_OPS, cpu_op_cols, NULL);

static const gt_column dropped_cols[] = {
    HOOK("globalPid", I, NN, NULL),
    HOOK("kind", T, NN, "gt_event_kind_name(): kernel, memcpy..."),
    HOOK("count", I, NN, NULL),
};
TABLE(gt_tab_dropped_events, GT_TABLE_DROPPED_EVENTS, dropped_cols, "PRIMARY KEY (globalPid, kind)");

/* ---- lists ---------------------------------------------------------------------------- */

const gt_table_desc *const gt_created_tables[] = {
    &gt_tab_string_ids, &gt_tab_thread_names, &gt_tab_processes, &gt_tab_target_info_gpu, &gt_tab_session_start,
    &gt_tab_meta_data_export, &gt_tab_memcpy, &gt_tab_runtime, &gt_tab_sync, &gt_tab_memset, &gt_tab_nvtx,
    &gt_tab_gpu_memory, &gt_tab_callchains, &gt_tab_kernel_launches, &gt_tab_kernels, &gt_tab_memory_events,
    &gt_tab_memory_oper, &gt_tab_gpu_memory_stacks, &gt_tab_run_config, &gt_tab_cpu_ops, &gt_tab_dropped_events,
};
const size_t gt_n_created_tables = sizeof gt_created_tables / sizeof gt_created_tables[0];

const gt_table_desc *const gt_nsys_tables[] = {
    &gt_tab_string_ids, &gt_tab_thread_names, &gt_tab_processes, &gt_tab_target_info_gpu, &gt_tab_session_start,
    &gt_tab_meta_data_export, &gt_tab_memcpy, &gt_tab_runtime, &gt_tab_sync, &gt_tab_memset, &gt_tab_nvtx,
    &gt_tab_gpu_memory, &gt_tab_callchains, &gt_tab_kernel, &gt_tab_context_info, &gt_tab_stream_info,
    &gt_tab_system_env, &gt_tab_meta_data_capture,
};
const size_t gt_n_nsys_tables = sizeof gt_nsys_tables / sizeof gt_nsys_tables[0];

/* ---- what is made from a description ------------------------------------------------- */

const gt_column *gt_column_named(const gt_table_desc *t, const char *name)
{
    for (size_t i = 0; i < t->n_cols; i++)
        if (strcmp(t->cols[i].name, name) == 0)
            return &t->cols[i];
    return NULL;
}

void gt_table_ddl(sqlite3_str *out, const gt_table_desc *t)
{
    static const char *const types[] = {[SQL_INTEGER] = "INTEGER", [SQL_TEXT] = "TEXT", [SQL_REAL] = "REAL"};
    static const char *const nulls[] = {"", " NOT NULL", " NOT NULL PRIMARY KEY"};
    sqlite3_str_appendf(out, "CREATE TABLE %s (\n", t->name);
    for (size_t i = 0; i < t->n_cols; i++) {
        const gt_column *c = &t->cols[i];
        bool last = i + 1 == t->n_cols && !t->constraint;
        char decl[64];
        snprintf(decl, sizeof decl, "%s%s%s", types[c->sql], nulls[c->not_null], last ? "" : ",");
        sqlite3_str_appendf(out, "    %-24s %s", c->name, decl);
        if (c->note)
            sqlite3_str_appendf(out, "%*s-- %s", strlen(decl) < 24 ? (int)(24 - strlen(decl)) : 1, "", c->note);
        sqlite3_str_appendchar(out, 1, '\n');
    }
    if (t->constraint)
        sqlite3_str_appendf(out, "    %s\n", t->constraint);
    sqlite3_str_appendchar(out, 1, ')');
}

int gt_table_n_put(const gt_table_desc *t)
{
    int n = 0;
    for (size_t i = 0; i < t->n_cols; i++)
        n += t->cols[i].put != P_NONE;
    return n;
}

int gt_table_param(const gt_table_desc *t, const char *name)
{
    int n = 0;
    for (size_t i = 0; i < t->n_cols; i++) {
        if (t->cols[i].put == P_NONE)
            continue;
        n++;
        if (strcmp(t->cols[i].name, name) == 0)
            return n;
    }
    return 0;
}

void gt_table_insert(sqlite3_str *out, const gt_table_desc *t, int n_rows)
{
    sqlite3_str_appendf(out, "INSERT INTO %s (", t->name);
    int n = 0;
    for (size_t i = 0; i < t->n_cols; i++)
        if (t->cols[i].put != P_NONE)
            sqlite3_str_appendf(out, "%s%s", n++ ? ", " : "", t->cols[i].name);
    sqlite3_str_appendall(out, ") VALUES ");
    for (int r = 0; r < n_rows; r++) {
        sqlite3_str_appendall(out, r ? ", (?" : "(?");
        for (int c = 1; c < n; c++)
            sqlite3_str_appendall(out, ", ?");
        sqlite3_str_appendchar(out, 1, ')');
    }
}

void gt_table_fields(const gt_table_desc *t, bool joined, field *out, size_t *n, size_t cap)
{
    for (size_t i = 0; i < t->n_cols && *n < cap; i++)
        if (t->cols[i].get != F_NONE)
            out[(*n)++] = (field){t->cols[i].name, t->cols[i].offset, t->cols[i].get, joined};
}
