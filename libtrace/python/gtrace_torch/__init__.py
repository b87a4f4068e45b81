# gtrace_torch: NVTX annotations for PyTorch programs run by `gtrace --pytorch`.
#
# sitecustomize.py calls arm() at start. arm() reads what to mark from
# GTRACE_PYTORCH (steps, modules, ops, shapes, backward-every=N: the launcher
# checked the list)
# and waits for the program to import torch: a finder on sys.meta_path sees
# `import torch`, lets it finish, then installs the hooks (hooks.py). A
# program that never imports torch pays one finder lookup per import.
#
# Nothing here changes what the program computes; a hook that cannot be
# installed is said once on stderr and the program runs without it.
import importlib.abc
import importlib.machinery
import os
import sys

FEATURES = ("steps", "modules", "ops", "shapes")
OPTIONS = ("backward-every=",)  # with a value: backward-every=N (hooks.py)


def warn(msg):
    sys.stderr.write("gtrace: %s\n" % msg)


def _features():
    spec = os.environ.get("GTRACE_PYTORCH", "")
    return frozenset(f for f in spec.split(",") if f in FEATURES or f.startswith(OPTIONS))


class _Loader(importlib.abc.Loader):
    """torch's own loader, then the hooks."""

    def __init__(self, inner, on_loaded):
        self._inner = inner
        self._on_loaded = on_loaded

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._inner
        if module.__spec__ is not None:
            module.__spec__.loader = self._inner
        self._inner.exec_module(module)
        self._on_loaded(module)


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Waits for `import torch`; then takes itself off sys.meta_path."""

    def __init__(self, on_loaded):
        self._on_loaded = on_loaded

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find else None
            if spec is not None:
                break
        else:
            return None
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _Loader(spec.loader, self._on_loaded)
        return spec


def _install(torch):
    try:
        from . import hooks
        hooks.install(torch, _features(), os.environ.get("GTRACE_NVTX_LIB", ""))
    except Exception as e:  # the program runs on without annotations
        warn("PyTorch annotations are off: %s: %s" % (type(e).__name__, e))


def arm():
    """Called by sitecustomize: install the hooks once torch is imported."""
    if not _features():
        return
    if "torch" in sys.modules:
        _install(sys.modules["torch"])
        return
    sys.meta_path.insert(0, _TorchFinder(_install))
