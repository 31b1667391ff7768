/* memd._memd: the module and its exception hierarchy (errors.c raises them). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "memdpy.h"

/* ---- names ------------------------------------------------------------------------ */

static PyObject *names_tuple(const char *(*fn)(int), int count)
{
    PyObject *t = PyTuple_New(count);
    for (int i = 0; t && i < count; i++) {
        PyObject *s = PyUnicode_FromString(fn(i));
        if (!s) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, s);
    }
    return t;
}

static const char *class_name(int i) { return memclient_class_name((memd_class)i); }
static const char *scope_name(int i) { return memclient_scope_name((memd_scope)i); }
static const char *kind_name(int i) { return memclient_kind_name((memd_kind)i); }
static const char *dtype_name(int i) { return memclient_dtype_name((memd_dtype)(i + 1)); }

static PyObject *default_socket(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyUnicode_FromString(memclient_default_socket());
}

PyDoc_STRVAR(default_socket_doc, "default_socket($module, /)\n--\n\n"
"The socket libmemclient connects to when neither an explicit path nor $MEMD_SOCKET\n"
"is given.");

static PyMethodDef module_methods[] = {
    {"default_socket", default_socket, METH_NOARGS, default_socket_doc},
    {"plan_solve", (PyCFunction)(void (*)(void))memdpy_plan_solve, METH_VARARGS | METH_KEYWORDS,
     "plan_solve($module, /, buffers, budget_ms=1000, seed=0, iterations=None)\n--\n\n"
     "The engine's planner, offline (see memd.plan): (offsets, arena, lower_bound, "
     "strategy, optimal, iterations, elapsed_ns)."},
    {"plan_validate", (PyCFunction)(void (*)(void))memdpy_plan_validate,
     METH_VARARGS | METH_KEYWORDS,
     "plan_validate($module, /, buffers, offsets)\n--\n\nThe arena size; raises "
     "memd.PlanError naming the offending buffers (see memd.validate)."},
    {"plan_lower_bound", (PyCFunction)(void (*)(void))memdpy_plan_lower_bound,
     METH_VARARGS | METH_KEYWORDS,
     "plan_lower_bound($module, /, buffers)\n--\n\nNo plan's arena can be smaller: the largest sum "
     "of the sizes of the buffers live at one time."},
    {"model_lifetimes", (PyCFunction)(void (*)(void))memdpy_model_lifetimes,
     METH_VARARGS | METH_KEYWORDS,
     "model_lifetimes($module, /, tensors, ops)\n--\n\ntensors: (name, role, bytes, alignment); "
     "ops: (name, inputs, outputs, inplace) with tensor indices. Returns per tensor "
     "(size, alignment, lower, upper, alias_of, producer, last_use), None for absent "
     "indices. Raises memd.ModelError naming the op and tensor at fault."},
    {"model_read_yaml", (PyCFunction)(void (*)(void))memdpy_model_read_yaml,
     METH_VARARGS | METH_KEYWORDS,
     "model_read_yaml($module, /, path)\n--\n\nParses a model description file (memd's YAML "
     "format) with memd's own parser."},
    {"model_parse_yaml", (PyCFunction)(void (*)(void))memdpy_model_parse_yaml,
     METH_VARARGS | METH_KEYWORDS,
     "model_parse_yaml($module, /, text, name='<string>')\n--\n\nThe same, from a str."},
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(module_doc, "Internal C part of the memd package: use `import memd`.");

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "memd._memd", module_doc, -1, module_methods,
    NULL, NULL, NULL, NULL,
};

/* memd.NAME = type(NAME, bases, {"__doc__": doc, "__module__": "memd"}). */
static PyObject *new_error(PyObject *mod, const char *name, const char *doc, PyObject *base1,
                           PyObject *base2)
{
    char full[64];
    snprintf(full, sizeof full, "memd.%s", name);
    PyObject *bases = base2 ? PyTuple_Pack(2, base1, base2) : PyTuple_Pack(1, base1);
    if (!bases)
        return NULL;
    PyObject *t = PyErr_NewExceptionWithDoc(full, doc, bases, NULL);
    Py_DECREF(bases);
    if (!t)
        return NULL;
    if (PyModule_AddObjectRef(mod, name, t) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t; /* the module keeps one reference; memdpy_err holds this one forever */
}

static int add_errors(PyObject *mod)
{
    memdpy_errors *e = &memdpy_err;
    e->error = new_error(mod, "Error",
        "Base of every error memd raises. Attributes: errno (positive errno), message.",
        PyExc_Exception, NULL);
    if (!e->error)
        return -1;
    e->oom = new_error(mod, "OutOfMemory",
        "The region (or the user's quota) cannot fit the request; also a MemoryError.\n"
        "Attributes: requested (bytes asked for), size_per_bank, allocated, free,\n"
        "largest_free (bytes per bank in the region at the time; always ints), device,\n"
        "region, cls, kind, quota (True when the uid's quota was the limit), holders (the\n"
        "region's top holders, biggest first: dicts with pid, process, client, session,\n"
        "uid and bytes; [] for a pool's own refusal).",
        e->error, PyExc_MemoryError);
    e->perm = new_error(mod, "PermissionError",
        "The daemon refused: the handle belongs to another session, or the socket is not\n"
        "accessible. Also a builtin PermissionError.", e->error, PyExc_PermissionError);
    e->conn = new_error(mod, "ConnectionError",
        "No daemon at the socket, or the connection broke (the daemon went away or sent\n"
        "something unexpected). Also a builtin ConnectionError. After a broken\n"
        "connection every later call raises it too: Client.reconnect() takes the\n"
        "session back from a restarted daemon.", e->error, PyExc_ConnectionError);
    e->notfound = new_error(mod, "NotFoundError",
        "No such allocation, model, instance or device. Also a LookupError.",
        e->error, PyExc_LookupError);
    e->invalid = new_error(mod, "InvalidRequestError",
        "The daemon or libmemclient rejected the request as invalid. Also a ValueError.",
        e->error, PyExc_ValueError);
    e->unsupported = new_error(mod, "UnsupportedError",
        "The device does not offer that scope or buffer class.", e->error, NULL);
    e->busy = new_error(mod, "BusyError",
        "The object is in use (an instance still running, a model's buffer freed alone).",
        e->error, NULL);
    e->exists = new_error(mod, "ExistsError",
        "A shared allocation or model of that name exists with other content.",
        e->error, NULL);
    e->plan = new_error(mod, "PlanError",
        "A plan problem or a plan is invalid. Attributes: issue ('overlap', 'misaligned',\n"
        "...), a and b (indices of the buffers concerned; b is None for a single-buffer\n"
        "issue), names (their names, or None). Also a ValueError.", e->error,
        PyExc_ValueError);
    e->model = new_error(mod, "ModelError",
        "A model graph or model file is invalid. Attributes: op and tensor (indices of\n"
        "the op and tensor at fault, or None). Also a ValueError.", e->error,
        PyExc_ValueError);
    e->timeout = new_error(mod, "TimeoutError",
        "No answer in time: the connection's timeout passed (memd.connect(timeout=...),\n"
        "$MEMD_TIMEOUT_MS; the connection is then closed: connect again), or a model\n"
        "was still filling when load_model's timeout ran out. Also a builtin TimeoutError.",
        e->error, PyExc_TimeoutError);
    e->revoked = e->notfound ? new_error(mod, "RevokedError",
        "An admin freed this buffer (memctl free): the session no longer holds it. Raised\n"
        "by a revoked Buffer's free(), locate() and address, and Client.free/locate of its\n"
        "handle. Attributes: handle, time_ns, device, admin_session, admin_pid, admin_uid,\n"
        "admin_process, admin_client. Also a memd.NotFoundError.", e->notfound, NULL) : NULL;
    return e->oom && e->perm && e->conn && e->notfound && e->invalid && e->unsupported &&
                   e->busy && e->exists && e->plan && e->model && e->timeout && e->revoked
               ? 0
               : -1;
}

static int add_names(PyObject *mod)
{
    struct {
        const char *attr;
        const char *(*fn)(int);
        int count;
    } v[] = {
        {"CLASSES", class_name, MEMD_CLASS_COUNT},
        {"SCOPES", scope_name, MEMD_SCOPE_COUNT},
        {"KINDS", kind_name, MEMD_KIND_COUNT},
        {"DTYPES", dtype_name, MEMD_DTYPE_COUNT - 1},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        PyObject *t = names_tuple(v[i].fn, v[i].count);
        if (!t || PyModule_AddObject(mod, v[i].attr, t) < 0) {
            Py_XDECREF(t);
            return -1;
        }
    }
    return PyModule_AddStringConstant(mod, "SOCKET_ENV", MEMCLIENT_SOCKET_ENV) < 0 ||
                   PyModule_AddStringConstant(mod, "VERSION", MEMD_VERSION_STRING) < 0 ||
                   PyModule_AddIntConstant(mod, "DEFAULT_ALIGNMENT",
                                           MEMCLIENT_MODEL_DEFAULT_ALIGN) < 0
               ? -1
               : 0;
}

PyMODINIT_FUNC PyInit__memd(void);

PyMODINIT_FUNC PyInit__memd(void)
{
    if (PyType_Ready(&memdpy_client_type) < 0 || PyType_Ready(&memdpy_buffer_type) < 0 ||
        PyType_Ready(&memdpy_pool_type) < 0 || PyType_Ready(&memdpy_pool_buffer_type) < 0)
        return NULL;
    PyObject *mod = PyModule_Create(&module_def);
    if (!mod)
        return NULL;
    if (add_errors(mod) < 0 || add_names(mod) < 0 ||
        PyModule_AddObjectRef(mod, "Client", (PyObject *)&memdpy_client_type) < 0 ||
        PyModule_AddObjectRef(mod, "Buffer", (PyObject *)&memdpy_buffer_type) < 0 ||
        PyModule_AddObjectRef(mod, "Pool", (PyObject *)&memdpy_pool_type) < 0 ||
        PyModule_AddObjectRef(mod, "PoolBuffer", (PyObject *)&memdpy_pool_buffer_type) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
