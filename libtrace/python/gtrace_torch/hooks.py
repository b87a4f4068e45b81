# hooks.py: where the NVTX ranges of a PyTorch program come from.
#
# All ranges are push/pop ranges of the "PyTorch" domain (nvtx.py), so they
# nest on each thread the way the calls did:
#
#   step N                    the training step (steps)
#     data                    waiting for a DataLoader batch (__next__)
#     forward                 an outermost module call, and in it
#       Net                   the module's range (modules), its children as
#         conv1               named_modules() names them: "encoder.layers.3"
#           aten::conv...     each ATen op (ops), category "compute";
#                             with shapes: "aten::mm [32, 64] [64, 10]"
#     backward                torch.autograd.backward (loss.backward())
#       Net backward          each module's backward (modules), nested as
#         head backward       its forward was, in the order autograd runs it
#     optimizer               Optimizer.step
#
# A step. Step N ends where an optimizer step ends; step N+1 begins right
# there, so the steps tile the training loop and the time between two
# optimizer steps (loading, logging, evaluation run inside the loop) is in
# the step it delays. The first step begins at the program's first DataLoader
# batch, module forward, backward or optimizer step. A step that no optimizer
# step ends (after the last one; or a program that never calls one) is never
# closed, and an NVTX push that is never popped is not in the trace: the
# report finds exactly the optimizer steps the program made. With several
# optimizers, the first one that steps ends the steps (a GAN's generator step
# then falls in the next step). A step the GradScaler skips (inf/NaN
# gradients: it does not call Optimizer.step) is part of the next.
#
# Threads. A step belongs to the thread that steps the optimizer: its range
# opens and closes there (a push is popped on the thread that pushed it), and
# what other threads run meanwhile (an evaluation's or a server's forwards,
# a prefetcher's batches) is inside it, not a step of theirs. Which thread
# that is, is known when the first step ends: until then each thread's first
# phase opens a step on it (those of threads that never step the optimizer
# are never closed, so not in the trace); after, phases open one only on the
# thread that ended the last step, and the lead optimizer's step opens one
# on any thread (a training loop that moved to another thread). The step
# state is per thread; the count, the lead optimizer and the thread that
# ended the last step are the program's. Module names are given under a
# lock: threads that call a new model at once name it once.
#
# Fork. A forked child (DataLoader workers, a multiprocessing Pool, forked
# at any point of the parent's training) starts with no step open, no lead
# optimizer and no step owner, its count at 0, no module call or backward
# open, and new locks (os.register_at_fork): the parent's open ranges are not
# on its NVTX stack, and a lock another thread held at fork would never be
# released. It keeps the parent's module names.
#
# How: Module.__call__ wrapped once (PyTorch 1.13: _call_impl; 2.x:
# _wrapped_call_impl), so torch's module call keeps its fast path: global
# module hooks would send every call through its slow path, 2 us a call on
# 2.x (bench/results/2026-11-26-pytorch-overhead.md); a module's name is one
# dict lookup (id, then the weakref checked); Optimizer.step through
# register_optimizer_step_pre/post_hook (2.x) or by wrapping each optimizer
# class's step the way Optimizer._hook_for_profile does (1.13);
# torch.autograd.backward and _BaseDataLoaderIter.__next__ wrapped; ATen ops
# through torch's ITT profiler into gtrace's ITT collector where torch has
# ITT (2.x: itt.py, every RecordFunction a range, in C), else through a
# global RecordFunction callback in C++ built for the libtorch it runs in
# (Debian's 1.13: record.py), else through a TorchDispatchMode entered once
# at start, which sees every op below autograd; all name backward ops too,
# on the thread that imported torch and the threads autograd runs on.
#
# A module's backward. Full backward hooks wrap every module's inputs and
# outputs in an autograd Function, which breaks in-place ops after them (an
# in-place ReLU then fails). Instead the wrapped call, after forward, with
# grad on, takes the autograd node that made the module's output (grad_fn,
# before any in-place op after the module replaces the tensor's) and gives
# it a pre-hook (Node.register_prehook, 1.13 and 2.x), which changes no
# tensor. When autograd is about to run that node, the module's backward
# begins: its range "NAME backward" opens, after closing those still open
# that are not its callers (a sibling's backward ends where the next one
# begins); a callback queued on the engine closes what is open when the
# backward ends. So a module's range covers its nodes and what runs after
# them up to the next module (AccumulateGrad of its parameters, a functional
# op of its caller that came before it in the forward). Ranges are per
# thread: on a GPU, autograd runs a device's nodes on a thread of its own.
#
# Sampled backward ranges. A node pre-hook costs torch 8-9 us a node
# (registering it and calling Python from the engine), which alone is 3-5%
# of a 26-module step (bench/results/2026-12-01-pytorch-overhead.md); a
# forward range costs 1-2 us. So module backward ranges are made on some
# steps only: with backward-every=N (default 25), the first N steps but at
# most ten (0-9: a short run has its figures) and then every N-th step (N,
# 2N, ...); 1: every step; 0: none (the backward phase alone). A sampled
# step costs 5-10% more (bench/results/2026-12-03-pytorch-step-hooks.md):
# 1 in 25 is under 0.4% a step, and a run of 100 steps still has 14. A step is sampled as a whole (each forward and backward in it);
# without steps, each torch.autograd.backward counts as one. The other
# steps' module calls get their forward range and nothing else. The report
# finds the sampled steps as those with module backward ranges and says so.
#
# torch.compile (2.1 and later). gtrace adds no graph break and no
# recompilation: dynamo compiles the same frames into the same graphs, with
# the same guards, as without it. Dynamo traces no Python of gtrace's:
#   - the Module.__call__ wrapper's code is marked for dynamo to skip as a
#     frame to compile (torch._C._dynamo.eval_frame.skip_code), as it skips
#     torch.nn's own _wrapped_call_impl: a compiled module's call of the
#     module it runs goes through the wrapper, uncompiled, and dynamo
#     compiles that module's forward below it, as without gtrace;
#   - the wrapper, should dynamo trace it all the same (an explicit
#     `m.__call__(x)` in compiled code), first asks
#     torch.compiler.is_dynamo_compiling(), which dynamo folds to True, and
#     goes straight to torch's call; in eager code the question is one call
#     of a function that returns False. Dynamo calls a compiled region's
#     modules through _call_impl, never through __call__.
# What the trace names: modules outside compiled regions as ever; a compiled
# module (OptimizedModule) as one range named after the module it runs, by
# that module's qualified name ("Net" for torch.compile(model), "body" for
# model.body = torch.compile(model.body); its modules are named as
# uncompiled, "body.0", never "body._orig_mod.0"): the call of the module it
# runs has no range of its own, and what runs inside the region is compiled
# code, with no module calls to name; its backward is "Net backward" (the
# compiled graph's CompiledFunctionBackward node). With ops through ITT
# (2.x), a compiled region's ops are named as torch.profiler shows them
# (its extern kernels, and dynamo's and inductor's own while they compile);
# the dispatch mode instead steps aside while a compiled module runs (with
# a mode of the program's on, dynamo compiles nothing: the program would
# run uncompiled), so a compiled forward's ops are not named; a compiled
# backward's are (aten::mm, aten::addmm: what torch.profiler shows under
# CompiledFunctionBackward). A function compiled with torch.compile(fn) is
# not a module: it has no range, and with ops through the dispatch mode it
# runs uncompiled.
import functools
import importlib
import os
import sys
import threading
import types
import weakref

from . import itt as _itt
from . import nvtx as _nvtx
from . import oom as _oom
from . import record as _record


_op_itt = None  # with ops through ITT or the RecordFunction callback: itt.Ops (bench/ turns it off and on)
BACKWARD_EVERY = 25  # the default of backward-every=N (see "Sampled backward ranges")
FIRST_SAMPLED = 10   # steps 0 to min(N, this) - 1 are sampled


def backward_every(features):
    """N of a "backward-every=N" in features, else BACKWARD_EVERY."""
    for f in features:
        if f.startswith("backward-every="):
            n = int(f[len("backward-every="):])
            if n < 0:
                raise ValueError("backward-every=%d: expected 0 or more" % n)
            return n
    return BACKWARD_EVERY


def install(torch, features, lib_path):
    if not lib_path:
        raise RuntimeError("GTRACE_NVTX_LIB is not set (run the program with gtrace --pytorch)")
    every = backward_every(features)
    nv = _nvtx.Nvtx(lib_path)
    push, pop, handle, address = nv.push, nv.pop, nv.handle, nv.address
    seen = _oom.install(torch, nv)  # marks an out-of-memory error where it leaves a wrapper (oom.py)
    steps = "steps" in features
    modules = "modules" in features
    ops = "ops" in features or "shapes" in features
    shapes = "shapes" in features

    # The steps (see "A step" above): the count, the lead optimizer, the
    # thread that ended the last one (None before the first), and per thread
    # whether its step range is open (pushed there; only that thread can pop it).
    steps_of = {"n": 0, "lead": None, "owner": None}
    steps_lock = threading.Lock()
    get_ident = threading.get_ident
    this = sys.modules[__name__]
    # The C module (fast.c), for module calls, phases and ops; None: Python does all.
    fast = this._fast = _load_fast() if (steps or modules or ops) else None

    class _StepState(threading.local):
        def __init__(self):
            self.open = False

    class _StepStateInC:
        """sstate.open where fast.c's calls read it: in C, per thread."""
        open = property(lambda self: fast.step_open(), lambda self, v: fast.set_step_open(v))

    sstate = _StepStateInC() if fast is not None else _StepState()
    # The next step's name, made while the code that makes it is warm: made
    # when the step opens, after an optimizer step, it costs ten times more.
    next_name = [None, -1]

    if steps and fast is not None:
        def open_step(s):
            fast.open_step()  # names the step in C: steps_of["n"], this thread's range (install_steps below)
    else:
        def open_step(s):
            s.open = True
            n = steps_of["n"]
            h = next_name[0] if next_name[1] == n else handle("step %d" % n, keep=False)
            push(h)
            next_name[:] = [handle("step %d" % (n + 1), keep=False), n + 1]

    def begin():
        """A phase (data, an outermost forward, backward) begins on a thread
        with no step open: a step opens there, unless another thread ends
        the steps (the phase is inside its step, not one of its own)."""
        owner = steps_of["owner"]
        if owner is None or owner == get_ident():
            open_step(sstate)

    op_mode = [None]  # with ops: the dispatch mode that names them, once entered
    try:
        from torch.utils._python_dispatch import _get_current_dispatch_mode as current_mode
    except ImportError:  # a torch without it: the mode never steps aside
        def current_mode():
            return None

    H_DATA, H_FORWARD, H_BACKWARD, H_OPTIMIZER = (handle("data"), handle("forward"), handle("backward"),
                                                    handle("optimizer"))

    # Whether module calls now get backward ranges (see "Sampled backward
    # ranges"): set for each step (without steps: each torch.autograd.backward)
    # by its number; read once a module call.
    sampled = [every > 0]
    n_backward = [0]  # without steps: the backwards ended

    def sample(n):
        sampled[0] = every > 0 and (n < min(every, FIRST_SAMPLED) or n % every == 0)

    this._sampled, this._backward_every = sampled, every  # for bench/bench_pytorch_overhead.py
    if steps and fast is not None:
        # In C (fast.c): the optimizer's step hooks below and the opening of
        # a step, by the same rules and on the same state (steps_of).
        fast.install_steps(steps_of, sampled, every, FIRST_SAMPLED, address(H_OPTIMIZER), nv.push_address, nv.pop_address,
                           nv.domain_address, nv.register_address)

    # ---- modules (and the forward phase) --------------------------------
    close_backward = None
    naming = fstate = bstate = None  # what the parts below keep, where they are on
    if steps or modules:
        # id(module) -> (weakref to it, handle, backward handle, name, role,
        # the handle's address): a plain dict lookup per call; the weakref
        # tells a module from a later one that reuses its id; role (remember)
        # marks compiled modules; the address is what the C wrapper pushes.
        known = {}
        roots = {}

        def forget(ref, key):
            entry = known.get(key)
            if entry is not None and entry[0] is ref:
                del known[key]

        def remember(mod, name, role=None):
            """role: for a compiled module (OptimizedModule) the module it
            runs; for that module True; else None."""
            key = id(mod)
            h = handle(name)
            entry = known[key] = (weakref.ref(mod, lambda r, k=key: forget(r, k)), h,
                                  handle(name + " backward"), name, role, address(h))
            return entry

        def compiled_inner(mod):
            """The module a torch.compile'd module (OptimizedModule) runs, else None."""
            if type(mod).__name__ != "OptimizedModule":
                return None
            inner = mod.__dict__.get("_modules", {}).get("_orig_mod")
            return inner if isinstance(inner, Module) else None

        def lookup(mod):
            entry = known.get(id(mod))
            if entry is not None and entry[0]() is mod:
                return entry
            return None

        naming = threading.Lock()

        def name_of(mod, depth):
            """A module not named yet: an outermost one names its tree, one
            called inside another is named after its type (a compiled one
            after the module it runs). Under a lock: threads calling the
            same model at once name it once ("Net", not "Net" on one thread
            and "Net#2" on another)."""
            with naming:
                entry = lookup(mod)
                if entry is None:
                    inner = compiled_inner(mod)
                    if depth == 0:
                        name_tree(mod)
                        entry = lookup(mod)
                    elif inner is not None:
                        known_inner = lookup(inner)
                        entry = remember_compiled(mod, inner, known_inner[3] if known_inner is not None
                                                  else type(inner).__name__)
                    else:
                        entry = remember(mod, type(mod).__name__)
            return entry

        def remember_compiled(mod, inner, name):
            remember(inner, name, True)
            return remember(mod, name, inner)

        def name_tree(root):
            """Names root's modules by their qualified names; root by its type
            (and #2, #3 for the next roots of that type). A compiled module
            (torch.compile's OptimizedModule) is named as the module it
            runs, whose modules are named as they would be uncompiled:
            "body", "body.0" rather than "body._orig_mod.0"."""
            inner = compiled_inner(root)
            if inner is not None:
                entry = lookup(inner)
                if entry is not None:  # the module was called before it was compiled
                    remember_compiled(root, inner, entry[3])
                    return
            base = type(inner if inner is not None else root).__name__
            k = roots.get(base, 0)
            roots[base] = k + 1
            if k:
                base = "%s#%d" % (base, k + 1)
            wrappers = []  # the names of the compiled modules in the tree, outermost first
            inners = set()
            for qualified, sub in root.named_modules():
                for w in wrappers:
                    orig = w + "._orig_mod" if w else "_orig_mod"
                    if qualified == orig or qualified.startswith(orig + "."):
                        qualified = w + qualified[len(orig):] if w else qualified[len(orig) + 1:]
                inner = compiled_inner(sub)
                if inner is not None:
                    wrappers.append(qualified)
                    inners.add(id(inner))
                remember(sub, qualified or base, inner if inner is not None else (id(sub) in inners or None))

        if modules:
            grad_enabled = torch.is_grad_enabled
            Tensor = torch.Tensor
            queue_callback = torch.autograd.Variable._execution_engine.queue_callback

            def encloses(outer, call):
                call = call[1]
                while call is not None:
                    if call is outer:
                        return True
                    call = call[1]
                return False

            def on_node(made_by, grad_outputs):
                """Before the node that made a module's output runs in backward:
                the module's backward begins. Calls still open that are not
                its callers end (their backward is over)."""
                b = bstate
                open_ = b.open
                if b.backward != backwards[0]:  # this thread's first node of this backward
                    close_open(b)  # what an earlier backward left open here (it raised)
                    b.backward = backwards[0]
                    queue_callback(end_backward)
                for call in reversed(made_by):  # the outermost first
                    while open_ and open_[-1] is not call and not encloses(open_[-1], call):
                        open_.pop()
                        pop()
                    if open_ and open_[-1] is call:
                        continue  # a module with several outputs: already open
                    push(call[0])
                    open_.append(call)
                return None

            def close_open(b):
                open_ = b.open
                while open_:
                    open_.pop()
                    pop()

            def end_backward():
                """Queued on the engine: runs when the backward ends; also
                after torch.autograd.backward returns or raises."""
                close_open(bstate)
                backwards[0] += 1

            close_backward = end_backward

            class _BackwardState(threading.local):
                def __init__(self):
                    self.open = []       # the module calls whose backward range is open, innermost last
                    self.backward = -1   # the backward they belong to

            bstate = _BackwardState()
            partial = functools.partial
            seqs = (tuple, list)
            # The backward running (a count of those ended). A callback runs
            # on one thread; another thread's ranges (a device's, on a GPU)
            # close at its first node of the next backward.
            backwards = [0]

        class _ForwardState(threading.local):
            def __init__(self):
                self.depth = 0    # module calls open on this thread (without the C wrapper)
                self.calls = []   # with modules: each open call, (backward handle, its caller's call)
                self.nodes = {}   # id(node) -> (node, [calls whose output it made]), in one outermost call
                self.inner = None  # with modules: the module the compiled module being called runs

        fstate = _ForwardState()
        if fast is not None:  # the common call in C (fast.c), which keeps the depth
            get_depth, set_depth = fast.depth, fast.set_depth
        else:
            def get_depth():
                return fstate.depth

            def set_depth(d):
                fstate.depth = d

        def clear_nodes():
            fstate.nodes.clear()
        Module = torch.nn.Module
        call_impl = Module.__call__  # 2.x: _wrapped_call_impl; 1.13: _call_impl
        compiling = _dynamo_compiling(torch)

        def outermost():
            if not sstate.open:
                begin()
            push(H_FORWARD)

        def call_compiled(self, *args, **kwargs):
            """A compiled module's call (torch.compile's OptimizedModule): with
            modules, the module it runs is called inside it, in its range,
            and has none of its own; with ops, the dispatch mode that names
            them steps aside (dynamo compiles nothing while a mode of the
            program's is on: the program would run uncompiled), so the ops
            of a compiled forward are not named."""
            if modules:
                fstate.inner = compiled_inner(self)
            mode = op_mode[0]
            aside = mode is not None and current_mode() is mode
            if aside:
                mode.__exit__(None, None, None)
            try:
                return call_impl(self, *args, **kwargs)
            finally:
                fstate.inner = None
                if aside:
                    mode.__enter__()

        if modules:
            def __call__(self, *args, **kwargs):
                if compiling is not None and compiling():
                    return call_impl(self, *args, **kwargs)  # dynamo traces this call (see above)
                st = fstate
                d = get_depth()
                entry = known.get(id(self))
                if entry is None or entry[0]() is not self:
                    entry = name_of(self, d)
                role = entry[4]
                impl = call_impl
                if role is not None:
                    if role is True:  # the module a compiled module runs
                        if st.inner is self:  # called by that compiled module: in its range
                            st.inner = None
                            return call_impl(self, *args, **kwargs)
                    else:
                        impl = call_compiled
                if d == 0 and steps:
                    outermost()
                set_depth(d + 1)
                push(entry[1])
                if not sampled[0]:  # no backward range: the forward's alone
                    try:
                        return impl(self, *args, **kwargs)
                    except BaseException:
                        seen()
                        raise
                    finally:
                        pop()
                        set_depth(d)
                        if d == 0:
                            if st.nodes:  # a call inside it made backward ranges (sampling began in it)
                                st.nodes.clear()
                            if steps:
                                pop()
                calls = st.calls
                call = (entry[2], calls[-1] if calls else None)
                calls.append(call)
                try:
                    output = impl(self, *args, **kwargs)
                except BaseException:
                    seen()
                    calls.pop()
                    pop()
                    set_depth(d)
                    if d == 0:
                        st.nodes.clear()
                        if steps:
                            pop()
                    raise
                calls.pop()
                pop()
                set_depth(d)
                if grad_enabled():
                    # The autograd node that made the output (of a tuple or
                    # list, its first) gets a pre-hook, not the tensors: in-place
                    # ops after the module are untouched. Held until the
                    # outermost call ends, so its id stays its own. Written
                    # out here, not called: one Python frame less a call.
                    t = output
                    if type(t) is not Tensor and not isinstance(t, Tensor):
                        t = t[0] if type(t) in seqs and t and isinstance(t[0], Tensor) else None
                    node = t.grad_fn if t is not None else None
                    if node is not None:
                        nodes = st.nodes
                        e = nodes.get(id(node))
                        if e is None:
                            made_by = [call]
                            nodes[id(node)] = (node, made_by)
                            node.register_prehook(partial(on_node, made_by))
                        else:
                            e[1].append(call)
                if d == 0:
                    st.nodes.clear()
                    if steps:
                        pop()
                return output
        else:
            def __call__(self, *args, **kwargs):
                if compiling is not None and compiling():
                    return call_impl(self, *args, **kwargs)
                d = get_depth()
                impl = call_compiled if ops and type(self).__name__ == "OptimizedModule" else call_impl
                if d:
                    set_depth(d + 1)
                    try:
                        return impl(self, *args, **kwargs)
                    finally:
                        set_depth(d)
                outermost()
                set_depth(1)
                try:
                    return impl(self, *args, **kwargs)
                except BaseException:
                    seen()
                    raise
                finally:
                    set_depth(0)
                    pop()

        __call__.__wrapped__ = call_impl
        __call__.__doc__ = call_impl.__doc__
        _skip_as_compiled_frame(torch, __call__)
        if fast is not None:
            # In C (fast.c): the call of a named, uncompiled module on a step
            # without backward ranges; every other call runs __call__'s code.
            fast.install(__call__, call_impl, known, sampled, clear_nodes if modules else None, seen,
                         nv.push_address, nv.pop_address, nv.domain_address, modules, ops)
        Module.__call__ = __call__

    # ---- the phases of a step --------------------------------------------
    if steps:
        autograd = torch.autograd
        backward_impl = autograd.backward

        def backward(*args, **kwargs):
            if not sstate.open:
                begin()
            push(H_BACKWARD)
            try:
                return backward_impl(*args, **kwargs)
            except BaseException:
                seen()
                raise
            finally:
                if close_backward is not None:
                    close_backward()  # what a failed backward left open
                pop()

        backward.__wrapped__ = backward_impl
        backward.__doc__ = backward_impl.__doc__
        autograd.backward = backward

        from torch.utils.data import dataloader
        it = dataloader._BaseDataLoaderIter
        next_impl = it.__next__

        def __next__(self):
            if not sstate.open:
                begin()
            push(H_DATA)
            try:
                return next_impl(self)
            except BaseException:
                seen()
                raise
            finally:
                pop()

        __next__.__wrapped__ = next_impl
        it.__next__ = __next__
        if fast is not None:
            # In C (fast.c): the two phases' calls and the forward's range at
            # depth 0; their Python code runs without the module.
            fast.install_phases(begin, address(H_FORWARD),
                                [(backward, backward_impl, close_backward, address(H_BACKWARD)),
                                 (__next__, next_impl, None, address(H_DATA))])

        def step_pre(opt, *args):
            lead = steps_of["lead"]
            if lead is None or lead() is None:  # the first optimizer to step (or the last one is gone)
                lead = steps_of["lead"] = weakref.ref(opt)
            s = sstate
            if not s.open and (lead() is opt or steps_of["owner"] in (None, get_ident())):
                open_step(s)  # the lead optimizer's thread has a step, whoever ended the last
            push(H_OPTIMIZER)

        def step_post(opt, *args):
            pop()
            lead = steps_of["lead"]
            s = sstate
            if s.open and lead is not None and lead() is opt and get_depth() == 0:
                pop()
                with steps_lock:
                    steps_of["n"] += 1
                    steps_of["owner"] = get_ident()
                    sample(steps_of["n"])
                    open_step(s)

        if fast is not None:
            step_pre, step_post = fast.step_pre, fast.step_post
        optim = importlib.import_module("torch.optim.optimizer")
        if hasattr(optim, "register_optimizer_step_pre_hook"):
            optim.register_optimizer_step_pre_hook(step_pre)
            optim.register_optimizer_step_post_hook(step_post)
        else:
            _wrap_optimizer_steps(torch, step_pre, step_post)

    if modules and not steps and every > 1:
        # no steps to sample by: each torch.autograd.backward counts as one
        autograd = torch.autograd
        backward_impl = autograd.backward

        def backward(*args, **kwargs):
            try:
                return backward_impl(*args, **kwargs)
            finally:
                n_backward[0] += 1
                sample(n_backward[0])

        backward.__wrapped__ = backward_impl
        backward.__doc__ = backward_impl.__doc__
        autograd.backward = backward

    # ---- ATen ops ---------------------------------------------------------
    if ops and not shapes:
        this._op_itt = _itt.start(torch) or _record.start(torch)
    if ops and (shapes or this._op_itt is None):
        op_mode[0] = _enter_op_mode(torch, nv, shapes, fast)

    # ---- fork ----------------------------------------------------------------
    def after_fork_in_child():
        """A forked child (a DataLoader worker, a multiprocessing Pool's) is a
        program of its own: its steps are counted from 0 and belong to the
        first optimizer it steps, on its own thread. What it inherits of the
        parent's state describes ranges that are not on its NVTX stack (the
        capture library drops the parent's open ranges at fork): no step is
        open, no module call or backward range is, and a lock another thread
        of the parent held stays held in the child, so each is made anew.
        The old containers are replaced, not emptied: frames of the parent's
        still on the child's stack (a fork inside a forward) keep theirs.
        The module names and the registered strings stay: they are the
        parent's, as the modules are."""
        nonlocal steps_lock, naming
        steps_lock = threading.Lock()
        naming = threading.Lock()
        steps_of["n"], steps_of["lead"], steps_of["owner"] = 0, None, None
        sstate.open = False
        if fstate is not None:
            fstate.depth, fstate.calls, fstate.nodes, fstate.inner = 0, [], {}, None
            set_depth(0)
        if bstate is not None:
            bstate.open = []
        n_backward[0] = 0
        sample(0)

    os.register_at_fork(after_in_child=after_fork_in_child)

    # ---- CUDA allocator history (with a GPU) -------------------------------
    try:
        cuda_ok = torch.cuda.is_available()
    except Exception:
        cuda_ok = False
    if cuda_ok:
        from . import memory
        memory.start(torch)


def _load_fast():
    """The C wrapper (fast.c) the launcher found ($GTRACE_TORCH_FAST), if it
    was built for this Python ($GTRACE_TORCH_FAST_SUFFIX, its extension
    suffix, is this one's), else None: the Python wrapper does it all."""
    path = os.environ.get("GTRACE_TORCH_FAST", "")
    if not path or path == "none":
        return None
    machinery = importlib.import_module("importlib.machinery")
    if os.environ.get("GTRACE_TORCH_FAST_SUFFIX") != machinery.EXTENSION_SUFFIXES[0]:
        return None
    util = importlib.import_module("importlib.util")
    try:
        spec = util.spec_from_file_location("_gtrace_fast", path)
        module = util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError) as e:
        sys.stderr.write("gtrace: %s: %s (module calls go through Python)\n" % (path, e))
        return None
    return module


def _dynamo_compiling(torch):
    """A function that is False when called and that torch.compile's dynamo,
    tracing a call, takes for True (it folds it to a constant: no guard, no
    graph break); None before 2.x (no torch.compile). The first of
    torch.compiler.is_dynamo_compiling (2.3: a plain `return False`, the
    cheapest), torch.compiler.is_compiling, torch._utils.is_compiling (2.1)."""
    compiler = getattr(torch, "compiler", None)
    for f in (getattr(compiler, "is_dynamo_compiling", None), getattr(compiler, "is_compiling", None),
              getattr(getattr(torch, "_utils", None), "is_compiling", None)):
        if f is not None:
            return f
    return None


def _skip_as_compiled_frame(torch, fn):
    """Dynamo never compiles a frame of fn's code: the frame runs as it is and
    dynamo compiles the frames it calls (what torch._dynamo.skip does, without
    the mark that makes an inlined call of fn a graph break). So a compiled
    module's call of the module it runs (through Module.__call__) is compiled
    from that module's forward, as without gtrace, not from this wrapper, whose
    one code object would then hold every compiled module's graphs and reach
    dynamo's cache size limit (8) where the program does not."""
    eval_frame = getattr(getattr(torch._C, "_dynamo", None), "eval_frame", None)  # 2.x
    skip_code = getattr(eval_frame, "skip_code", None)
    if skip_code is not None:
        skip_code(fn.__code__)


def _wrap_optimizer_steps(torch, step_pre, step_post):
    """PyTorch 1.13: no global optimizer hooks. Optimizer.__init__ calls
    _hook_for_profile, which wraps the class's step once; ours goes around
    it, once per class (the class's step keeps its `hooked` mark)."""
    import functools
    Optimizer = torch.optim.Optimizer
    hook_impl = Optimizer._hook_for_profile

    def wrap(step):
        @functools.wraps(step)
        def gtrace_step(self, *args, **kwargs):
            step_pre(self)
            out = step(self, *args, **kwargs)
            step_post(self)
            return out
        gtrace_step._gtrace = True
        return gtrace_step

    def _hook_for_profile(self):
        hook_impl(self)
        cls = self.__class__
        if not getattr(cls.step, "_gtrace", False):
            cls.step = wrap(cls.step)

    Optimizer._hook_for_profile = _hook_for_profile


def _enter_op_mode(torch, nv, shapes, fast):
    from torch.utils._python_dispatch import TorchDispatchMode
    from . import nvtx as _nvtx
    push, pop, handle = nv.push, nv.pop, nv.handle
    Tensor = torch.Tensor
    cache = {}

    def op_name(func):
        schema = getattr(func, "_schema", None)
        return schema.name if schema is not None else str(func)

    # Collectives (c10d::allreduce_ and the like). The mode's call wraps
    # their tensors in Python objects, and torch keeps such an object alive
    # with its tensor from then on (PyObject preservation), so freeing the
    # tensor needs the GIL. DDP's bucket tensors, never in Python untraced,
    # would then be freed last by a gloo worker, which waits for the GIL
    # while the main thread, holding it, frees the DDP model and joins that
    # worker: the program hangs at exit (torch 1.13). A collective's tensors
    # seen a second time (DDP's buckets, all-reduced every step) are held
    # here to the end, so no worker frees them; a tensor seen once is only
    # weakly referenced, so the program's fresh tensors are freed as
    # untraced. At most PIN_MAX are held (the buckets of a model number tens).
    collectives = {}
    pinned = {}
    seen = {}
    ref = weakref.ref
    PIN_MAX = 4096

    def pin(args):
        for a in args:
            if type(a) in (list, tuple):
                pin(a)
            elif isinstance(a, Tensor):
                k = id(a)
                if k in pinned:
                    continue
                r = seen.pop(k, None)
                if r is not None and r() is a:
                    if len(pinned) < PIN_MAX:
                        pinned[k] = a
                else:
                    seen[k] = ref(a, lambda r, k=k: seen.get(k) is r and seen.pop(k))

    def run_collective(func, args, kwargs):
        pin(args)
        if kwargs:
            pin(kwargs.values())
        return func(*args, **kwargs)

    def collective_handle(func, args):
        """func's handle if it is a collective, else None (each op looked at once)."""
        h = collectives.get(func)
        if h is None:
            name = op_name(func)
            h = collectives[func] = handle(name, _nvtx.COMPUTE) if name.startswith("c10d::") else False
        return h or None

    if shapes:
        def handle_of(func, args):
            key = (func,) + tuple(tuple(a.shape) for a in args if isinstance(a, Tensor))
            h = cache.get(key)
            if h is None:
                dims = " ".join("[%s]" % ", ".join(str(n) for n in s) for s in key[1:])
                h = cache[key] = handle("%s %s" % (op_name(func), dims) if dims else op_name(func),
                                        _nvtx.COMPUTE)
            return h
    else:
        def handle_of(func, args):
            h = cache.get(func)
            if h is None:
                h = cache[func] = handle(op_name(func), _nvtx.COMPUTE)
            return h

    if shapes:
        class GtraceOps(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                c = collective_handle(func, args)
                push(c if c is not None else handle_of(func, args))
                try:
                    if c is not None:
                        return run_collective(func, args, kwargs or {})
                    return func(*args, **(kwargs or {}))
                finally:
                    pop()
    else:
        get = cache.get
        # With the C module (fast.c): an op seen before runs in C, straight
        # into its C++ entry; here the first call of each op (which tells C
        # how to run it), collectives, and every call without the module.
        op_overload = getattr(getattr(torch, "_ops", None), "OpOverload", None)
        known = {} if fast is not None else None

        def dispatch(self, func, types, args=(), kwargs=None):
            h = get(func)  # handle_of, written out: one Python frame less an op
            if h is None:
                c = collective_handle(func, args)
                if c is not None:
                    push(c)
                    try:
                        return run_collective(func, args, kwargs or {})
                    finally:
                        pop()
                h = handle_of(func, args)
                if known is not None:
                    entry = getattr(func, "_op", None) if type(func) is op_overload else None
                    known[func] = (nv.address(h), entry if callable(entry) else func)
            push(h)
            try:
                if kwargs:
                    return func(*args, **kwargs)
                return func(*args)
            finally:
                pop()

        class GtraceOps(TorchDispatchMode):
            __torch_dispatch__ = dispatch

    mode = GtraceOps()
    if not shapes and fast is not None:  # the method in C, bound to the mode (torch checks its __self__)
        fast.install_ops(known, dispatch, nv.push_address, nv.pop_address, nv.domain_address)
        mode.__torch_dispatch__ = types.MethodType(fast.op_dispatch, mode)
    mode.__enter__()
    sys.modules[__name__]._op_mode = mode  # kept alive for the program's life
    return mode
