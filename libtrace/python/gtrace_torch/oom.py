# oom.py: a PyTorch program's out-of-memory errors, marked in the trace.
#
# An out-of-memory error becomes one NVTX mark of the category "oom" of the
# PyTorch domain (ARCHITECTURE.md, conventions): its message says where it
# happened and gives the figures as key=N words in bytes (requested,
# allocated, reserved, free, limit, device_free), its payload the request;
# the report's Out of memory section reads it (analyze/oom.c). What is an
# out-of-memory error: torch.cuda.OutOfMemoryError (1.13 and 2.x), and any
# RuntimeError whose message says so ("out of memory", the CPU allocator's
# "can't allocate memory" or "not enough memory").
#
# When. The mark must lie inside the ranges open where the error happened
# (step, phase, module): the report finds the step and phase by them, and
# the ranges are popped as the error passes through gtrace's wrappers. So
# hooks.py calls seen() first thing where an exception leaves one of its
# wrappers (a module's call, backward, a DataLoader batch): the innermost
# wrapper marks it; the others, and a re-raise that chains it, see it marked.
# On a GPU with PyTorch 2.x, the allocator's out-of-memory observer marks it
# first, inside the failing allocation, with the allocator's exact figures.
# An error that reaches sys.excepthook (or threading.excepthook) unmarked
# (raised outside every wrapper: an optimizer step, the loop's own code) is
# marked there, inside what is still open.
#
# An error that ends the program. A range gtrace pushed and never popped is
# not in the trace: the step the program died in would be missing, and the
# report could not name it. So when an out-of-memory error reaches the
# excepthook, the ranges of the PyTorch domain still open on that thread (the
# step; an optimizer step's range, which torch never closes when it raises)
# are closed there, after the mark. An error the program catches changes
# nothing: its step goes on and ends as any other.
#
# The figures. Requested: parsed from the message ("Tried to allocate 20.00
# MiB", "you tried to allocate 1125899906842624 bytes"), as torch rounds it.
# With CUDA: allocated and reserved from torch.cuda.memory_stats, device free
# and total from torch.cuda.mem_get_info, exact. Without (an error raised on
# purpose, a CPU tensor): what the message says (1.13: "14.12 GiB already
# allocated; 17.75 MiB free; 14.80 GiB reserved in total by PyTorch"; 2.x: "of
# which 17.75 MiB is free", "78.23 GiB is allocated by PyTorch, and 402.21 MiB
# is reserved by PyTorch but unallocated"), else nothing: the report then
# replays the allocator the trace holds.
import re
import sys
import threading

OOM_CATEGORY = 2  # of the PyTorch domain; 1 is "compute" (nvtx.py)

_UNITS = {"b": 1, "bytes": 1, "byte": 1, "kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
          "pib": 1 << 50, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
_SIZE = r"([0-9]+(?:\.[0-9]+)?) ?(bytes|byte|[KMGTP]i?B|B)\b"
_OOM_WORDS = re.compile(r"out of memory|can't allocate memory|not enough memory", re.IGNORECASE)
_FIGURES = (  # (key, pattern): the first pattern that matches gives the key
    ("requested", re.compile(r"tried to allocate " + _SIZE, re.IGNORECASE)),
    ("allocated", re.compile(_SIZE + r" already allocated")),  # 1.13
    ("allocated", re.compile(_SIZE + r" is allocated by PyTorch")),  # 2.x
    ("reserved", re.compile(_SIZE + r" reserved in total by PyTorch")),  # 1.13
    ("unallocated", re.compile(_SIZE + r" is reserved by PyTorch but unallocated")),  # 2.x
    ("device_free", re.compile(r"of which " + _SIZE + r" is free")),  # 2.x
    ("device_free", re.compile(_SIZE + r" free\b")),  # 1.13
    ("limit", re.compile(r"total capacity of " + _SIZE)),  # 2.x
    ("limit", re.compile(_SIZE + r" total capacity")),  # 1.13
)
_GPU = re.compile(r"\bGPU ([0-9]+)")


def _bytes(number, unit):
    return int(round(float(number) * _UNITS[unit.lower()]))


def is_oom(exc):
    """Whether exc is an out-of-memory error of torch's."""
    oom_type = _state.get("type")
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    return isinstance(exc, RuntimeError) and _OOM_WORDS.search(str(exc).split("\n", 1)[0]) is not None


def figures(text):
    """The byte figures an out-of-memory message gives: {key: bytes}."""
    out = {}
    for key, pattern in _FIGURES:
        if key not in out:
            m = pattern.search(text)
            if m:
                out[key] = _bytes(m.group(1), m.group(2))
    unallocated = out.pop("unallocated", None)
    if unallocated is not None and "allocated" in out and "reserved" not in out:
        out["reserved"] = out["allocated"] + unallocated
    return out


def _device_of(exc, text):
    cuda_type = getattr(_state.get("torch"), "cuda", None)
    cuda_type = getattr(cuda_type, "OutOfMemoryError", None)
    m = _GPU.search(text)
    if m:
        return "cuda:%s" % m.group(1)
    if (cuda_type is not None and isinstance(exc, cuda_type)) or "CUDA" in text:
        return "cuda"
    return "cpu"


def _cuda_figures(torch, device):
    """Exact figures of the CUDA caching allocator of `device` (an int)."""
    out = {}
    try:
        stats = torch.cuda.memory_stats(device)
        out["allocated"] = int(stats.get("allocated_bytes.all.current", 0))
        out["reserved"] = int(stats.get("reserved_bytes.all.current", 0))
        free, total = torch.cuda.mem_get_info(device)
        out["device_free"], out["limit"] = int(free), int(total)
    except Exception:  # the device is in no state to say: the message's figures stay
        pass
    return out


def message(exc, exact=None):
    """The mark's message for exc: where, the figures, then torch's words."""
    text = str(exc).split("\n", 1)[0]
    found = figures(text)
    where = _device_of(exc, text)
    torch = _state.get("torch")
    if where.startswith("cuda") and torch is not None and _state.get("cuda"):
        found.update(_cuda_figures(torch, int(where[5:]) if where[5:] else torch.cuda.current_device()))
    if exact:
        found.update(exact)
    if "free" not in found and "allocated" in found and "reserved" in found:
        found["free"] = max(found["reserved"] - found["allocated"], 0)
    words = " ".join("%s=%d" % (k, found[k]) for k in
                     ("requested", "segment", "allocated", "reserved", "free", "limit", "device_free") if k in found)
    if len(text) > 240:
        text = text[:237] + "..."
    return "out of memory on %s: %s (%s: %s)" % (where, words, type(exc).__name__, text), found.get("requested")


_state = {}


def _mark(text, requested):
    payload = requested if requested is not None and requested >= 0 else None
    _state["nv"].mark(text, OOM_CATEGORY, payload)


def _marked(exc):
    """Whether exc, or an error it chains, was marked already."""
    for e in (exc, getattr(exc, "__cause__", None), getattr(exc, "__context__", None)):
        if e is not None and (getattr(e, "_gtrace_oom", False) or e is _state.get("last")):
            return True
    return False


def _note(exc):
    try:
        exc._gtrace_oom = True
    except Exception:  # an exception type without a __dict__: remembered instead
        pass
    _state["last"] = exc


def seen(exc=None):
    """Called where an exception leaves a gtrace wrapper, its ranges still
    open: marks it if it is an out-of-memory error not marked yet. Never
    raises."""
    try:
        if exc is None:
            exc = sys.exc_info()[1]
        if exc is None or not is_oom(exc) or _marked(exc):
            return
        observed = _state.get("observed")
        if observed is not None and observed[0] == threading.get_ident():  # the allocator's observer marked it
            _state["observed"] = None
        else:
            text, requested = message(exc)
            _mark(text, requested)
        _note(exc)
    except Exception as e:  # never in the program's way
        _warn_once("an out-of-memory error is not marked: %s: %s" % (type(e).__name__, e))


def _warn_once(msg):
    if not _state.get("warned"):
        _state["warned"] = True
        sys.stderr.write("gtrace: %s\n" % msg)


def _close_open():
    """Closes the PyTorch domain's ranges still open on this thread."""
    pop = _state["nv"].pop
    for _ in range(4096):
        if pop() < 0:
            break


def _on_uncaught(exc):
    if exc is None or not is_oom(exc):
        return
    seen(exc)
    _close_open()


def install(torch, nv):
    """Prepares the marks on the Nvtx `nv` (its domain, category "oom"),
    hooks the excepthooks and, on a GPU with 2.x, the allocator's observer.
    Returns seen, for the wrappers (one that does nothing if this failed)."""
    try:
        _install(torch, nv)
    except Exception as e:
        sys.stderr.write("gtrace: out-of-memory errors are not marked: %s: %s\n" % (type(e).__name__, e))
        return lambda exc=None: None
    return seen


def _install(torch, nv):
    nv.name_category(OOM_CATEGORY, "oom")
    _state.update(torch=torch, type=getattr(torch.cuda, "OutOfMemoryError", None), nv=nv, observed=None)
    try:
        _state["cuda"] = bool(torch.cuda.is_available())
    except Exception:
        _state["cuda"] = False

    chained = sys.excepthook

    def excepthook(exc_type, exc, tb):
        _on_uncaught(exc)
        chained(exc_type, exc, tb)

    sys.excepthook = excepthook
    chained_thread = threading.excepthook

    def thread_excepthook(args):
        _on_uncaught(args.exc_value)
        chained_thread(args)

    threading.excepthook = thread_excepthook

    attach = getattr(torch._C, "_cuda_attach_out_of_memory_observer", None)
    if _state["cuda"] and attach is not None:
        def on_oom(device, alloc, device_total, device_free):
            """The allocator failed (2.x), before it raises: marked here,
            inside every range, with its figures; seen() then skips it."""
            try:
                exact = _cuda_figures(torch, device)
                exact.update(requested=int(alloc), device_free=int(device_free), limit=int(device_total))
                words = " ".join("%s=%d" % (k, exact[k]) for k in
                                 ("requested", "allocated", "reserved", "limit", "device_free") if k in exact)
                _mark("out of memory on cuda:%d: %s (the caching allocator)" % (device, words), int(alloc))
                _state["observed"] = (threading.get_ident(),)
            except Exception as e:
                _warn_once("an out-of-memory error is not marked: %s: %s" % (type(e).__name__, e))
        attach(on_oom)
