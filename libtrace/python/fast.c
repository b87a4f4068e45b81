/* fast.c: _gtrace_fast, the common call of Module.__call__ and of an ATen
 * op under the ops mode in C, for `gtrace --pytorch`.
 *
 * hooks.py wraps torch's Module.__call__ in a Python function to give each
 * module call a range. Run as Python, the wrapper costs a module call 2 to
 * 3 us inside a real training step (a frame and an argument tuple, with
 * caches cold from the matrix products between calls), where the range is
 * two calls into libgtrace-nvtx.so. This module gives that function a
 * vectorcall of its own (the entry CPython calls a function through): for
 * the common call (a module already named, not compiled, on a step without
 * backward ranges) it pushes the module's range, calls torch's
 * Module.__call__ with the arguments as they came (no tuple, no frame, and
 * nothing of gtrace's in a traceback) and pops it; every other call runs
 * the function's Python code, as without this module. The function stays a
 * Python function: torch.compile's dynamo, which reads its code and never
 * runs it, sees what it saw before (an explicit `m.__call__(x)` in compiled
 * code is traced as ever). The per-thread count of open module calls, which
 * both use, lives here, and so do the optimizer's step hooks (below).
 *
 * Built for the Python configure found, and loaded only by a Python with
 * the same extension suffix (hooks.py checks): other Pythons run the
 * Python code alone. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

/* nvtxDomainRangePushEx and nvtxDomainRangePop of libgtrace-nvtx.so */
typedef int (*push_fn)(void *domain, const void *attributes);
typedef int (*pop_fn)(void *domain);

/* Module calls open on this thread (a forked child sets it to 0). */
static _Thread_local Py_ssize_t depth;
/* This thread's step range is open (hooks.py's sstate.open, kept here). */
static _Thread_local int step_open;

/* What the wrapper is installed with (one per process: Module.__call__). */
static struct {
    PyObject *func;      /* hooks.py's wrapper, a Python function: its calls land here */
    PyObject *impl;      /* torch's Module.__call__ */
    PyObject *known;     /* hooks.py's names: id(module) -> (weakref, handle, backward handle,
                          * name, role, address of the handle's attributes) */
    PyObject *sampled;   /* [bool]: this step's calls get backward ranges */
    PyObject *clear;     /* at depth 0, after a call that sampling began in, or None */
    PyObject *seen;      /* oom.seen(exc): where an exception leaves the wrapper */
    push_fn push;
    pop_fn pop;
    void *domain;
    int modules;         /* each call gets its module's range */
    int ops;             /* a compiled module's call goes to Python (its dispatch mode steps aside) */
} w;

/* The phases of a step in C (install_phases): torch.autograd.backward and
 * the DataLoader iterator's __next__ are hooks.py's Python functions, whose
 * calls land here as the module calls do. A phase's range opens in the
 * thread's step (begin(), Python, opens one where none is); backward then
 * closes the module backward ranges a sampled or failed backward left open
 * (close, Python). Run as Python after the matrix products of a backward,
 * the few lines of a phase wrapper cost tens of us a step in cache misses. */
enum { PHASES_MAX = 2 };
static struct {
    PyObject *begin;       /* opens this thread's step */
    const void *forward;   /* the forward phase's attributes, pushed at depth 0; NULL: no steps */
    int n;
    struct {
        PyObject *func, *impl, *close; /* close: None or what a backward calls after its impl */
        const void *attributes;
    } v[PHASES_MAX];
} ph;

/* Opens this thread's step if it is not open (begin() may leave it closed:
 * another thread ends the steps). */
static int ensure_step(void)
{
    if (step_open)
        return 0;
    PyObject *r = PyObject_CallNoArgs(ph.begin);
    if (!r)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* The attributes of mod's range when its call is the common one, else NULL
 * (and no error set): not named yet, a reused id, a compiled module or the
 * one it runs. */
static const void *plain_attributes(PyObject *mod)
{
    PyObject *key = PyLong_FromVoidPtr(mod);
    if (!key)
        return NULL;
    PyObject *entry = PyDict_GetItemWithError(w.known, key); /* borrowed */
    Py_DECREF(key);
    if (!entry || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) < 6)
        return NULL;
    PyObject *ref = PyTuple_GET_ITEM(entry, 0);
    if (!PyWeakref_Check(ref) || PyWeakref_GetObject(ref) != mod || PyTuple_GET_ITEM(entry, 4) != Py_None)
        return NULL;
    void *attributes = PyLong_AsVoidPtr(PyTuple_GET_ITEM(entry, 5));
    if (!attributes && PyErr_Occurred())
        PyErr_Clear();
    return attributes;
}

/* A compiled module (torch.compile's OptimizedModule), by its type's name. */
static int is_compiled_module(PyObject *mod)
{
    const char *name = Py_TYPE(mod)->tp_name;
    const char *dot = strrchr(name, '.');
    return strcmp(dot ? dot + 1 : name, "OptimizedModule") == 0;
}

/* f() with the error being raised, if any, kept aside and put back. */
static void call_aside(PyObject *f)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallNoArgs(f);
    if (r)
        Py_DECREF(r);
    else
        PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

/* The exception leaving the call, shown to oom.seen and put back. */
static void show_exception(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value)
        PyException_SetTraceback(value, tb);
    if (value) {
        PyObject *r = PyObject_CallOneArg(w.seen, value);
        if (r)
            Py_DECREF(r);
        else
            PyErr_Clear(); /* seen never raises; should it, the program's error wins */
    }
    PyErr_Restore(type, value, tb);
}

/* The wrapper's vectorcall: the common call here; every other call runs the
 * wrapper's Python code, as without this module. */
static PyObject *wrapper_vectorcall(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    if (func != w.func || PyVectorcall_NARGS(nargsf) < 1)
        return _PyFunction_Vectorcall(func, args, nargsf, kwnames);
    PyObject *mod = args[0];
    const void *attributes = NULL;
    if (w.modules) {
        if (PyList_GET_ITEM(w.sampled, 0) != Py_False)
            return _PyFunction_Vectorcall(func, args, nargsf, kwnames);
        attributes = plain_attributes(mod);
        if (!attributes) {
            if (PyErr_Occurred())
                return NULL;
            return _PyFunction_Vectorcall(func, args, nargsf, kwnames);
        }
    } else if (w.ops && is_compiled_module(mod)) {
        return _PyFunction_Vectorcall(func, args, nargsf, kwnames);
    }
    Py_ssize_t d = depth;
    int outermost = d == 0 && ph.forward; /* with steps: the forward phase (and a step) open here */
    if (outermost) {
        if (ensure_step() < 0)
            return NULL;
        w.push(w.domain, ph.forward);
    }
    depth = d + 1;
    if (attributes)
        w.push(w.domain, attributes);
    PyObject *out = PyObject_Vectorcall(w.impl, args, nargsf, kwnames);
    if (!out)
        show_exception();
    if (attributes)
        w.pop(w.domain);
    depth = d;
    if (d == 0) {
        if (w.clear != Py_None && PyList_GET_ITEM(w.sampled, 0) != Py_False)
            call_aside(w.clear);
        if (outermost)
            w.pop(w.domain);
    }
    return out;
}

static PyObject *phase_vectorcall(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    int i = 0;
    while (i < ph.n && ph.v[i].func != func)
        i++;
    if (i == ph.n)
        return _PyFunction_Vectorcall(func, args, nargsf, kwnames);
    if (ensure_step() < 0)
        return NULL;
    w.push(w.domain, ph.v[i].attributes);
    PyObject *out = PyObject_Vectorcall(ph.v[i].impl, args, nargsf, kwnames);
    if (!out)
        show_exception();
    /* module backward ranges are opened on sampled steps only; a failed
     * backward may leave some open on any */
    if (ph.v[i].close != Py_None && (!out || PyList_GET_ITEM(w.sampled, 0) != Py_False))
        call_aside(ph.v[i].close);
    w.pop(w.domain);
    return out;
}

static void set_vectorcall(PyObject *func, vectorcallfunc f)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyFunction_SetVectorcall((PyFunctionObject *)func, f);
#else
    ((PyFunctionObject *)func)->vectorcall = f;
#endif
}

static PyObject *install(PyObject *module, PyObject *args)
{
    PyObject *func, *impl, *known, *sampled, *clear, *seen;
    unsigned long long push, pop, domain;
    int modules, ops;
    if (!PyArg_ParseTuple(args, "O!OO!O!OOKKKpp:install", &PyFunction_Type, &func, &impl, &PyDict_Type, &known,
                          &PyList_Type, &sampled, &clear, &seen, &push, &pop, &domain, &modules, &ops))
        return NULL;
    if (PyList_GET_SIZE(sampled) != 1 || !push || !pop) {
        PyErr_SetString(PyExc_ValueError, "install: sampled must be a 1-item list, push and pop addresses");
        return NULL;
    }
    if (w.func)
        set_vectorcall(w.func, _PyFunction_Vectorcall);
    Py_XSETREF(w.func, Py_NewRef(func));
    Py_XSETREF(w.impl, Py_NewRef(impl));
    Py_XSETREF(w.known, Py_NewRef(known));
    Py_XSETREF(w.sampled, Py_NewRef(sampled));
    Py_XSETREF(w.clear, Py_NewRef(clear));
    Py_XSETREF(w.seen, Py_NewRef(seen));
    w.push = (push_fn)(uintptr_t)push;
    w.pop = (pop_fn)(uintptr_t)pop;
    w.domain = (void *)(uintptr_t)domain;
    w.modules = modules;
    w.ops = ops;
    set_vectorcall(func, wrapper_vectorcall);
    Py_RETURN_NONE;
}

/* ---- the ops' dispatch mode ------------------------------------------------
 * With ops (and no shapes) hooks.py's TorchDispatchMode instance has
 * op_dispatch, bound to it, as its __torch_dispatch__ (torch checks that
 * the method's __self__ is the mode). An op seen before runs here between
 * its range's push and pop; the first call of each op, and collectives, go
 * to the mode's Python method (`slow`), which names the op and says how to
 * run it next: known[func] = (address of the range's attributes, what to
 * call), the op's C++ entry (OpOverload._op) for a plain ATen op. */
static struct {
    PyObject *known; /* op -> (address, callable) */
    PyObject *slow;  /* the mode's Python method: slow(mode, func, types, args, kwargs) */
} ops_w;

/* op_dispatch(mode, func, types, args=(), kwargs=None) */
static PyObject *op_dispatch(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!ops_w.slow) {
        PyErr_SetString(PyExc_RuntimeError, "_gtrace_fast.op_dispatch: install_ops was not called");
        return NULL;
    }
    if (kwnames || nargs < 3 || nargs > 5)
        goto slow;
    PyObject *entry = PyDict_GetItemWithError(ops_w.known, args[1]); /* borrowed */
    if (!entry) {
        if (PyErr_Occurred())
            return NULL;
        goto slow;
    }
    PyObject *call_args = nargs > 3 ? args[3] : NULL;
    PyObject *call_kwargs = nargs > 4 ? args[4] : NULL;
    if (call_args && !PyTuple_CheckExact(call_args))
        goto slow;
    if (call_kwargs == Py_None || (call_kwargs && PyDict_CheckExact(call_kwargs) && PyDict_GET_SIZE(call_kwargs) == 0))
        call_kwargs = NULL;
    else if (call_kwargs && !PyDict_CheckExact(call_kwargs))
        goto slow;
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 2)
        goto slow;
    const void *attributes = PyLong_AsVoidPtr(PyTuple_GET_ITEM(entry, 0));
    if (!attributes) {
        PyErr_Clear();
        goto slow;
    }
    PyObject *target = PyTuple_GET_ITEM(entry, 1);
    PyObject *empty = NULL;
    if (!call_args && !(call_args = empty = PyTuple_New(0)))
        return NULL;
    w.push(w.domain, attributes);
    PyObject *out = PyObject_Call(target, call_args, call_kwargs);
    w.pop(w.domain);
    Py_XDECREF(empty);
    return out;
slow:
    return PyObject_Vectorcall(ops_w.slow, args, (size_t)nargs, kwnames);
}

static PyObject *install_ops(PyObject *module, PyObject *args)
{
    PyObject *known, *slow;
    unsigned long long push, pop, domain;
    if (!PyArg_ParseTuple(args, "O!OKKK:install_ops", &PyDict_Type, &known, &slow, &push, &pop, &domain))
        return NULL;
    if (!push || !pop) {
        PyErr_SetString(PyExc_ValueError, "install_ops: push and pop addresses");
        return NULL;
    }
    if (w.push && (w.push != (push_fn)(uintptr_t)push || w.domain != (void *)(uintptr_t)domain)) {
        PyErr_SetString(PyExc_ValueError, "install_ops: not the domain of the module calls");
        return NULL;
    }
    Py_XSETREF(ops_w.known, Py_NewRef(known));
    Py_XSETREF(ops_w.slow, Py_NewRef(slow));
    w.push = (push_fn)(uintptr_t)push;
    w.pop = (pop_fn)(uintptr_t)pop;
    w.domain = (void *)(uintptr_t)domain;
    Py_RETURN_NONE;
}

/* install_phases(begin, forward, [(func, impl, close, address)...]): after install(). */
static PyObject *install_phases(PyObject *module, PyObject *args)
{
    PyObject *begin, *list;
    unsigned long long forward;
    if (!PyArg_ParseTuple(args, "OKO!:install_phases", &begin, &forward, &PyList_Type, &list))
        return NULL;
    if (!w.func || !w.push || !PyCallable_Check(begin) || !forward || PyList_GET_SIZE(list) > PHASES_MAX) {
        PyErr_SetString(PyExc_ValueError, "install_phases: after install(), begin callable, forward's address, "
                                          "at most 2 phases");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = PyList_GET_ITEM(list, i);
        if (!PyTuple_Check(e) || PyTuple_GET_SIZE(e) != 4 || !PyFunction_Check(PyTuple_GET_ITEM(e, 0))) {
            PyErr_SetString(PyExc_ValueError, "install_phases: (function, impl, close, address) each");
            return NULL;
        }
    }
    for (int i = 0; i < ph.n; i++) {
        set_vectorcall(ph.v[i].func, _PyFunction_Vectorcall);
        Py_CLEAR(ph.v[i].func);
        Py_CLEAR(ph.v[i].impl);
        Py_CLEAR(ph.v[i].close);
    }
    ph.n = 0;
    Py_XSETREF(ph.begin, Py_NewRef(begin));
    ph.forward = (const void *)(uintptr_t)forward;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = PyList_GET_ITEM(list, i);
        void *a = PyLong_AsVoidPtr(PyTuple_GET_ITEM(e, 3));
        if (!a)
            return PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_ValueError, "install_phases: no address"), NULL);
        ph.v[ph.n].func = Py_NewRef(PyTuple_GET_ITEM(e, 0));
        ph.v[ph.n].impl = Py_NewRef(PyTuple_GET_ITEM(e, 1));
        ph.v[ph.n].close = Py_NewRef(PyTuple_GET_ITEM(e, 2));
        ph.v[ph.n].attributes = a;
        set_vectorcall(ph.v[ph.n].func, phase_vectorcall);
        ph.n++;
    }
    Py_RETURN_NONE;
}

/* ---- the steps ------------------------------------------------------------
 * The optimizer's step hooks (hooks.py's step_pre and step_post, the same
 * rules) and the opening of a step's range, "step N", in C. They run right
 * after the optimizer has swept every parameter and its gradient, with the
 * caches cold: as Python their few lines cost 50 us a step. The state is
 * hooks.py's steps_of dict ("n", "lead": a weakref to the lead optimizer or
 * None, "owner": the thread ident that ended the last step or None), read and
 * written here under the GIL, so Python (begin(), a forked child) sees one
 * state; the step's range is this thread's step_open. */
typedef void *(*register_fn)(void *domain, const char *text);

/* nvtxEventAttributes_v2 (nvToolsExt.h), as nvtx.py builds it */
typedef struct {
    uint16_t version, size;
    uint32_t category;
    int32_t color_type;
    uint32_t color;
    int32_t payload_type, reserved0;
    uint64_t payload;
    int32_t message_type;
    const void *message;
} nvtx_attributes;
_Static_assert(sizeof(nvtx_attributes) == 48, "nvtxEventAttributes_v2 is 48 bytes");

static struct {
    PyObject *state;        /* hooks.py's steps_of */
    PyObject *sampled;      /* [bool]: the module calls of this step get backward ranges */
    PyObject *k_n, *k_lead, *k_owner;
    const void *optimizer;  /* the optimizer phase's attributes */
    push_fn push;
    pop_fn pop;
    void *domain;
    register_fn reg;        /* nvtxDomainRegisterStringA */
    long every;             /* backward-every=N */
    long first;             /* steps 0 to min(every, first) - 1 are sampled too */
} so;

/* Opens this thread's step range, named after steps_of["n"]. */
static int open_step(void)
{
    PyObject *n_obj = PyDict_GetItemWithError(so.state, so.k_n); /* borrowed */
    long long n = n_obj ? PyLong_AsLongLong(n_obj) : -1;
    if (n < 0)
        return PyErr_Occurred() ? -1 : (PyErr_SetString(PyExc_ValueError, "steps: no step count"), -1);
    char name[32];
    snprintf(name, sizeof name, "step %lld", n);
    nvtx_attributes a = {.version = 3, .size = sizeof a, .message_type = 3 /* registered */};
    a.message = so.reg(so.domain, name);
    step_open = 1;
    so.push(so.domain, &a);
    return 0;
}

/* The lead optimizer (borrowed), or Py_None when there is none or it is gone. */
static PyObject *lead_optimizer(void)
{
    PyObject *ref = PyDict_GetItemWithError(so.state, so.k_lead);
    return ref && PyWeakref_Check(ref) ? PyWeakref_GetObject(ref) : Py_None;
}

/* Whether steps_of["owner"] is None or this thread. */
static int owner_is_none_or_me(void)
{
    PyObject *owner = PyDict_GetItemWithError(so.state, so.k_owner);
    if (!owner || owner == Py_None)
        return 1;
    unsigned long id = PyLong_AsUnsignedLong(owner);
    if (id == (unsigned long)-1 && PyErr_Occurred())
        PyErr_Clear();
    return id == PyThread_get_thread_ident();
}

/* step_pre(opt, ...): the first optimizer to step (or the first after the
 * last one is gone) leads; a step opens on the lead's thread, or on any
 * thread while no other ends the steps; the optimizer's range opens. */
static PyObject *step_pre(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || !so.state) {
        PyErr_SetString(PyExc_TypeError, "step_pre(optimizer, ...) after install_steps()");
        return NULL;
    }
    PyObject *opt = args[0], *lead = lead_optimizer();
    if (lead == Py_None) {
        PyObject *ref = PyWeakref_NewRef(opt, NULL);
        if (!ref || PyDict_SetItem(so.state, so.k_lead, ref) < 0) {
            Py_XDECREF(ref);
            return NULL;
        }
        Py_DECREF(ref);
        lead = opt;
    }
    if (!step_open && (lead == opt || owner_is_none_or_me()) && open_step() < 0)
        return NULL;
    so.push(so.domain, so.optimizer);
    Py_RETURN_NONE;
}

/* step_post(opt, ...): the optimizer's range closes; after the lead's step,
 * outside any module call, the step closes on this thread, which now ends
 * the steps, the count moves on, sampling is set for the next step, and
 * the next step opens. */
static PyObject *step_post(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || !so.state) {
        PyErr_SetString(PyExc_TypeError, "step_post(optimizer, ...) after install_steps()");
        return NULL;
    }
    so.pop(so.domain);
    if (!step_open || depth != 0 || lead_optimizer() != args[0])
        Py_RETURN_NONE;
    so.pop(so.domain);
    PyObject *n_obj = PyDict_GetItemWithError(so.state, so.k_n);
    long long n = n_obj ? PyLong_AsLongLong(n_obj) : -1;
    if (n < 0)
        return PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_ValueError, "steps: no step count"), NULL);
    n++;
    PyObject *next = PyLong_FromLongLong(n), *me = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    int rc = next && me ? PyDict_SetItem(so.state, so.k_n, next) | PyDict_SetItem(so.state, so.k_owner, me) : -1;
    Py_XDECREF(next);
    Py_XDECREF(me);
    if (rc < 0)
        return NULL;
    int sampled = so.every > 0 && (n < (so.every < so.first ? so.every : so.first) || n % so.every == 0);
    PyObject *old = PyList_GET_ITEM(so.sampled, 0);
    PyList_SET_ITEM(so.sampled, 0, Py_NewRef(sampled ? Py_True : Py_False));
    Py_DECREF(old);
    if (open_step() < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *open_step_py(PyObject *module, PyObject *unused)
{
    if (!so.state) {
        PyErr_SetString(PyExc_TypeError, "open_step() after install_steps()");
        return NULL;
    }
    if (open_step() < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* install_steps(steps_of, sampled, every, first, optimizer, push, pop, domain, register) */
static PyObject *install_steps(PyObject *module, PyObject *args)
{
    PyObject *state, *sampled;
    long every, first;
    unsigned long long optimizer, push, pop, domain, reg;
    if (!PyArg_ParseTuple(args, "O!O!llKKKKK:install_steps", &PyDict_Type, &state, &PyList_Type, &sampled, &every,
                          &first, &optimizer, &push, &pop, &domain, &reg))
        return NULL;
    if (PyList_GET_SIZE(sampled) != 1 || !optimizer || !push || !pop || !reg) {
        PyErr_SetString(PyExc_ValueError, "install_steps: sampled a 1-item list, the optimizer's attributes, "
                                          "push, pop and register addresses");
        return NULL;
    }
    if (!so.k_n && (!(so.k_n = PyUnicode_InternFromString("n")) || !(so.k_lead = PyUnicode_InternFromString("lead")) ||
                    !(so.k_owner = PyUnicode_InternFromString("owner"))))
        return NULL;
    Py_XSETREF(so.state, Py_NewRef(state));
    Py_XSETREF(so.sampled, Py_NewRef(sampled));
    so.every = every;
    so.first = first;
    so.optimizer = (const void *)(uintptr_t)optimizer;
    so.push = (push_fn)(uintptr_t)push;
    so.pop = (pop_fn)(uintptr_t)pop;
    so.domain = (void *)(uintptr_t)domain;
    so.reg = (register_fn)(uintptr_t)reg;
    Py_RETURN_NONE;
}

static PyObject *get_step_open(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(step_open);
}

static PyObject *set_step_open(PyObject *module, PyObject *arg)
{
    int v = PyObject_IsTrue(arg);
    if (v < 0)
        return NULL;
    step_open = v;
    Py_RETURN_NONE;
}

static PyObject *get_depth(PyObject *module, PyObject *unused)
{
    return PyLong_FromSsize_t(depth);
}

static PyObject *set_depth(PyObject *module, PyObject *arg)
{
    Py_ssize_t d = PyLong_AsSsize_t(arg);
    if (d == -1 && PyErr_Occurred())
        return NULL;
    depth = d;
    Py_RETURN_NONE;
}

static PyMethodDef fast_methods[] = {
    {"install", install, METH_VARARGS,
     "install(wrapper, impl, known, sampled, clear, seen, push, pop, domain, modules, ops)"},
    {"install_ops", install_ops, METH_VARARGS, "install_ops(known, slow, push, pop, domain)"},
    {"op_dispatch", (PyCFunction)(void (*)(void))op_dispatch, METH_FASTCALL | METH_KEYWORDS,
     "op_dispatch(mode, func, types, args=(), kwargs=None): an ops mode's __torch_dispatch__, bound"},
    {"install_phases", install_phases, METH_VARARGS, "install_phases(begin, forward, [(func, impl, close, address)])"},
    {"install_steps", install_steps, METH_VARARGS,
     "install_steps(steps_of, sampled, every, first, optimizer, push, pop, domain, register)"},
    {"step_pre", (PyCFunction)(void (*)(void))step_pre, METH_FASTCALL, "step_pre(optimizer, ...): before its step"},
    {"step_post", (PyCFunction)(void (*)(void))step_post, METH_FASTCALL, "step_post(optimizer, ...): after its step"},
    {"open_step", open_step_py, METH_NOARGS, "open_step(): this thread's step range opens, named after the count"},
    {"step_open", get_step_open, METH_NOARGS, "step_open(): this thread's step range is open"},
    {"set_step_open", set_step_open, METH_O, "set_step_open(b)"},
    {"depth", get_depth, METH_NOARGS, "depth(): the module calls open on this thread"},
    {"set_depth", set_depth, METH_O, "set_depth(n)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fast_module = {
    PyModuleDef_HEAD_INIT, "_gtrace_fast", "Module.__call__ in C for gtrace --pytorch", -1,
    fast_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__gtrace_fast(void);
PyMODINIT_FUNC PyInit__gtrace_fast(void)
{
    return PyModule_Create(&fast_module);
}
