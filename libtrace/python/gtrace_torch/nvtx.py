# nvtx.py: NVTX ranges from Python through libgtrace-nvtx.so (ctypes).
#
# libgtrace-nvtx.so is the NVTX 3 C API compiled from its headers; under
# gtrace its first call loads libgtrace.so (NVTX_INJECTION64_PATH) and every
# call lands there. A range name is registered once (nvtxDomainRegisterStringA)
# and its event attributes are built once, so a push is one ctypes call with
# two prepared arguments. Push and pop go through a PyDLL handle, without
# argtypes: the call keeps the GIL (a push into gtrace never waits: it
# copies a record into this thread's ring) and converts nothing: a push and
# pop pair under gtrace took 250 ns, against 345 ns through CDLL with
# argtypes (bench/results/2026-11-26-pytorch-overhead.md). Everything is in
# one domain, "PyTorch"; category 1 of it is named "compute" (ATen ops), as
# the analysis expects of compute ops.
import ctypes
import functools

COMPUTE = 1

_MESSAGE_ASCII = 1
_MESSAGE_REGISTERED = 3
_PAYLOAD_U64 = 1
_VERSION = 3


class _Attributes(ctypes.Structure):
    """nvtxEventAttributes_v2 (nvToolsExt.h): 48 bytes."""
    _fields_ = [
        ("version", ctypes.c_uint16),
        ("size", ctypes.c_uint16),
        ("category", ctypes.c_uint32),
        ("color_type", ctypes.c_int32),
        ("color", ctypes.c_uint32),
        ("payload_type", ctypes.c_int32),
        ("reserved0", ctypes.c_int32),
        ("payload", ctypes.c_uint64),
        ("message_type", ctypes.c_int32),
        ("message", ctypes.c_void_p),
    ]


assert ctypes.sizeof(_Attributes) == 48


class Nvtx:
    """One domain's ranges. push(name_handle) / pop(); handle(name) makes a
    handle once per name (keep it: it is what makes a push cheap)."""

    def __init__(self, path, domain_name=b"PyTorch"):
        lib = ctypes.CDLL(path)
        lib.nvtxDomainCreateA.restype = ctypes.c_void_p
        lib.nvtxDomainCreateA.argtypes = [ctypes.c_char_p]
        lib.nvtxDomainRegisterStringA.restype = ctypes.c_void_p
        lib.nvtxDomainRegisterStringA.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.nvtxDomainNameCategoryA.restype = None
        lib.nvtxDomainNameCategoryA.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_char_p]
        lib.nvtxDomainMarkEx.restype = None
        lib.nvtxDomainMarkEx.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        fast = ctypes.PyDLL(path)
        fast.nvtxDomainRangePushEx.restype = ctypes.c_int
        fast.nvtxDomainRangePop.restype = ctypes.c_int
        self._lib = lib
        self._domain = lib.nvtxDomainCreateA(domain_name)
        lib.nvtxDomainNameCategoryA(self._domain, COMPUTE, b"compute")
        self._handles = {}
        domain = ctypes.c_void_p(self._domain)
        # Partials (C calls, no Python frame): no lookups on the hot path.
        self.push = functools.partial(fast.nvtxDomainRangePushEx, domain)
        self.pop = functools.partial(fast.nvtxDomainRangePop, domain)
        # For C callers (fast.c): the functions, the domain, address(handle).
        self.push_address = ctypes.cast(fast.nvtxDomainRangePushEx, ctypes.c_void_p).value
        self.pop_address = ctypes.cast(fast.nvtxDomainRangePop, ctypes.c_void_p).value
        self.domain_address = self._domain
        self.register_address = ctypes.cast(lib.nvtxDomainRegisterStringA, ctypes.c_void_p).value

    def handle(self, name, category=0, keep=True):
        """A prepared argument for push(): the name registered, its attributes
        built; kept for the next call unless `keep` is false (step names)."""
        key = (name, category)
        h = self._handles.get(key)
        if h is None:
            data = name.encode("utf-8", "replace") if isinstance(name, str) else bytes(name)
            a = _Attributes()
            a.version = _VERSION
            a.size = ctypes.sizeof(_Attributes)
            a.category = category
            a.message_type = _MESSAGE_REGISTERED
            a.message = self._lib.nvtxDomainRegisterStringA(self._domain, data)
            h = ctypes.byref(a)  # holds `a`
            if keep:
                self._handles[key] = h
        return h

    @staticmethod
    def address(h):
        """Where the attributes of handle h are (what a C push is given)."""
        return ctypes.addressof(h._obj)

    def name_category(self, category, name):
        """Names one of the domain's categories."""
        self._lib.nvtxDomainNameCategoryA(self._domain, category, name.encode())

    def mark(self, text, category=0, payload=None):
        """A mark with `text` (not registered: each is its own), in
        `category`, with an unsigned 64-bit payload unless it is None.
        Attributes of its own: two threads may mark at once."""
        data = text.encode("utf-8", "replace")
        a = _Attributes()
        a.version = _VERSION
        a.size = ctypes.sizeof(_Attributes)
        a.category = category
        a.message_type = _MESSAGE_ASCII
        a.message = ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p)
        if payload is not None:
            a.payload_type, a.payload = _PAYLOAD_U64, payload
        self._lib.nvtxDomainMarkEx(self._domain, ctypes.byref(a))
