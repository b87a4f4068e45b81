/* nvtx_export.c: libgtrace-nvtx.so, the NVTX 3 C API as a shared library.
 *
 * NVTX 3 is header-only: a C program includes the headers and its calls go
 * to the tool named in NVTX_INJECTION64_PATH, or cost nothing. A language
 * that cannot include C headers (Python through ctypes, gtrace's PyTorch
 * package in libtrace/python) needs the functions as symbols; the headers
 * build them so when NVTX_EXPORT_API is defined, as NVIDIA's libnvToolsExt
 * does. Nothing here is gtrace's own code: under gtrace the launcher sets
 * NVTX_INJECTION64_PATH to libgtrace.so and the first call loads it.
 *
 * Exported: the core API (marks, push/pop and start/end ranges, categories,
 * thread names) and the domain API (domains, registered strings, domain
 * ranges and categories), nothing else (local.mk lists the symbols). */
#define NVTX_EXPORT_API
#include <nvtx3/nvToolsExt.h>
