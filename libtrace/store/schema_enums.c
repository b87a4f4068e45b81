/* schema_enums.c: the ENUM_* tables of a trace, with nsys's rows (and
 * GTRACE_ENUM_MEMORY_OPER, numbered as gt_store.h numbers gt_heap_op).
 *
 * nsys's enum tables all have one shape (id, name, label) and a comment
 * naming what they label; their rows are nsys 2024.5's. This file does not
 * create the other tables (schema.c). */
#include "config.h"

#include "columns.h"
#include "gt_labels.h"
#include "schema.h"

#include <stddef.h>

typedef struct enum_row {
    int id;
    const char *name, *label;
    const char *word; /* how gtrace's own outputs and Kineto say it, where they do */
} enum_row;

typedef struct enum_table {
    const char *table, *comment;
    const enum_row *rows;
    size_t n_rows;
} enum_table;

/* Most rows have no word: they leave it out, NULL. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define ENUM_TABLE(t, c, rows) {t, c, rows, sizeof rows / sizeof rows[0]}

static const enum_row enum_cuda_memcpy_oper_rows[] = {
    {0, "CUDA_MEMCPY_KIND_UNKNOWN", "Unknown"},
    {1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device", "HtoD"},
    {2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host", "DtoH"},
    {3, "CUDA_MEMCPY_KIND_HTOA", "Host-to-Array", "HtoA"},
    {4, "CUDA_MEMCPY_KIND_ATOH", "Array-to-Host", "AtoH"},
    {5, "CUDA_MEMCPY_KIND_ATOA", "Array-to-Array", "AtoA"},
    {6, "CUDA_MEMCPY_KIND_ATOD", "Array-to-Device", "AtoD"},
    {7, "CUDA_MEMCPY_KIND_DTOA", "Device-to-Array", "DtoA"},
    {8, "CUDA_MEMCPY_KIND_DTOD", "Device-to-Device", "DtoD"},
    {9, "CUDA_MEMCPY_KIND_HTOH", "Host-to-Host", "HtoH"},
    {10, "CUDA_MEMCPY_KIND_PTOP", "Peer-to-Peer", "PtoP"},
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

/* Creates an enum table with nsys's shape and comment (comment NULL: the
 * table exists) and fills it. */
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

int gt_schema_create_enums(sqlite3 *db)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < sizeof enum_tables / sizeof enum_tables[0]; i++)
        rc = fill_enum(db, enum_tables[i].table, enum_tables[i].comment, enum_tables[i].rows, enum_tables[i].n_rows);
    if (rc == SQLITE_OK)
        rc = fill_enum(db, gt_tab_memory_oper.name, NULL, memory_oper_rows,
                       sizeof memory_oper_rows / sizeof memory_oper_rows[0]);
    return rc;
}

/* ---- the labels' one description, for every output (gt_labels.h) ---------- */

static const enum_table *label_table(gt_label_set set)
{
    static const enum_table copy = ENUM_TABLE("", "", enum_cuda_memcpy_oper_rows);
    static const enum_table mem = ENUM_TABLE("", "", enum_cuda_mem_kind_rows);
    static const enum_table sync = ENUM_TABLE("", "", enum_cupti_sync_type_rows);
    switch (set) {
    case GT_LABELS_COPY_KIND:
    case GT_LABELS_COPY_DIRECTION: return &copy;
    case GT_LABELS_MEM_KIND: return &mem;
    case GT_LABELS_SYNC_TYPE: return &sync;
    }
    return NULL;
}

const char *gt_label(gt_label_set set, int value)
{
    const enum_table *t = label_table(set);
    for (size_t i = 0; t && i < t->n_rows; i++)
        if (t->rows[i].id == value)
            return set != GT_LABELS_COPY_DIRECTION ? t->rows[i].label : t->rows[i].word ? t->rows[i].word : "unknown";
    return set == GT_LABELS_COPY_DIRECTION ? "unknown" : "";
}

int gt_label_max(gt_label_set set)
{
    const enum_table *t = label_table(set);
    int max = -1;
    for (size_t i = 0; t && i < t->n_rows; i++)
        max = t->rows[i].id > max ? t->rows[i].id : max;
    return max;
}
