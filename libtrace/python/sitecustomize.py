# sitecustomize.py: gtrace's entry into a Python program run by
# `gtrace --pytorch PROGRAM`. The launcher puts this folder first on
# PYTHONPATH; Python imports this file at start. It arms gtrace_torch (which
# waits for the program to import torch, so a program without torch pays
# nothing), takes its own folder off sys.path, and then runs the
# sitecustomize this one shadows (a distribution's or a virtualenv's), so the
# program starts as it would without gtrace.
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        import gtrace_torch
        gtrace_torch.arm()
    except Exception as e:  # never stop the program
        sys.stderr.write("gtrace: PyTorch annotations are off: %s\n" % (e,))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    import importlib.machinery
    import importlib.util
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if spec is None or spec.origin is None or os.path.dirname(os.path.abspath(spec.origin)) == here:
        return
    mod = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = mod
    spec.loader.exec_module(mod)


_chain()
del _chain
