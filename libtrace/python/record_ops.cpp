/* record_ops.cpp: _gtrace_torch_ops.so, the ATen ops of a torch without ITT
 * (Debian's 1.13) named at C speed, for `gtrace --pytorch=...,ops`.
 *
 * torch 2.x hands gtrace each RecordFunction (every op, autograd node and
 * record_function) through its ITT profiler (libtrace/capture/itt.c). A
 * torch built without ITT has the same RecordFunctions and no profiler to
 * reach them from outside C++: this module adds a global RecordFunction
 * callback whose start and end are libgtrace.so's gt_torch_op_begin and
 * gt_torch_op_end, so each becomes the range the ITT path writes, by the
 * same rules (which names are left out, nesting with gtrace's ranges).
 * Without it, those ops go through a Python dispatch mode, which costs a
 * step about 1.4x.
 *
 * C++, as the one interface torch offers is: it is built against the
 * libtorch configure found (Debian's libtorch-dev) and must only be loaded
 * into a process that runs that libtorch: gtrace_torch/record.py checks
 * the file mapped as libtorch_cpu against the one this was linked with
 * before it loads it. A global callback is the program's, on every thread
 * and in forked children; torch's own profiler keeps working beside it
 * (its callbacks are thread-local ones), so a program's profile is as
 * untraced. */
#include <ATen/record_function.h>

#include <cstdint>

namespace {

using begin_fn = void (*)(const char *);
using end_fn = void (*)();

begin_fn op_begin;
end_fn op_end;
at::CallbackHandle handle;
bool added;

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn)
{
    op_begin(fn.name());
    return nullptr;
}

void on_end(const at::RecordFunction &, at::ObserverContext *)
{
    op_end();
}

} // namespace

extern "C" {

/* Adds the callback, calling begin(name) and end() (libgtrace.so's): 0, or
 * -1 when it is already added or either is missing. */
__attribute__((visibility("default"))) int gtrace_ops_start(void *begin, void *end)
{
    if (added || !begin || !end)
        return -1;
    op_begin = reinterpret_cast<begin_fn>(begin);
    op_end = reinterpret_cast<end_fn>(end);
    try {
        handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end));
    } catch (...) {
        return -1;
    }
    added = true;
    return 0;
}

/* The callback stops (off 1) or runs again (off 0): what bench/ toggles. */
__attribute__((visibility("default"))) void gtrace_ops_pause(int off)
{
    if (!added)
        return;
    if (off)
        at::disableCallback(handle);
    else
        at::reenableCallback(handle);
}

/* Removed before torch's exit (its callbacks are torch's static state). */
__attribute__((visibility("default"))) void gtrace_ops_stop(void)
{
    if (added)
        at::removeCallback(handle);
    added = false;
}
}
