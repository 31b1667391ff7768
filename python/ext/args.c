/* memd._memd: strict conversions of Python arguments. Every value that reaches
 * libmemclient or the engine passes through here: ints are exact (no floats, no bools,
 * no negatives), names are str without NUL bytes, vocabulary is parsed by libmemclient
 * (the daemon's own spellings and aliases). */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "memdpy.h"
#include "units.h"

int memdpy_u64(PyObject *o, const char *what, uint64_t *out)
{
    if (!o || PyBool_Check(o) || !PyIndex_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, not %s", what,
                     o ? Py_TYPE(o)->tp_name : "nothing");
        return -1;
    }
    PyObject *i = PyNumber_Index(o);
    if (!i)
        return -1;
    PyObject *zero = PyLong_FromLong(0);
    int neg = zero ? PyObject_RichCompareBool(i, zero, Py_LT) : -1;
    Py_XDECREF(zero);
    if (neg < 0) {
        Py_DECREF(i);
        return -1;
    }
    if (neg) {
        PyErr_Format(PyExc_ValueError, "%s must not be negative (got %R)", what, i);
        Py_DECREF(i);
        return -1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(i);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_OverflowError, "%s does not fit in 64 bits (got %R)", what, i);
        Py_DECREF(i);
        return -1;
    }
    Py_DECREF(i);
    *out = v;
    return 0;
}

int memdpy_u32(PyObject *o, const char *what, uint32_t *out)
{
    uint64_t v;
    if (memdpy_u64(o, what, &v) < 0)
        return -1;
    if (v > UINT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "%s does not fit in 32 bits (got %llu)", what,
                     (unsigned long long)v);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

int memdpy_timeout_ms(PyObject *o, const char *what, int *out)
{
    if (o == Py_None) {
        *out = -1;
        return 0;
    }
    if (PyBool_Check(o) || (!PyFloat_Check(o) && !PyLong_Check(o))) {
        PyErr_Format(PyExc_TypeError, "%s must be a number of seconds or None, not %s", what,
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    double s = PyFloat_AsDouble(o);
    if (s == -1.0 && PyErr_Occurred())
        return -1;
    if (!(s > 0) || s * 1000.0 > (double)INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s must be more than 0 and at most %d seconds (got %R)",
                     what, INT_MAX / 1000, o);
        return -1;
    }
    double ms = s * 1000.0;
    *out = (int)ms + ((double)(int)ms < ms); /* rounded up: 1 us is not "no wait" */
    return 0;
}

int memdpy_size(PyObject *o, const char *what, uint64_t *out)
{
    if (!o || !PyUnicode_Check(o))
        return memdpy_u64(o, what, out);
    const char *s, *bad = NULL;
    if (memdpy_str(o, what, false, &s) < 0)
        return -1;
    int r = memd_parse_size(s, out, &bad);
    if (r == -ERANGE)
        PyErr_Format(PyExc_OverflowError, "%s '%s' does not fit in 64 bits", what, s);
    else if (r == -ENOENT)
        PyErr_Format(PyExc_ValueError, "%s '%s': unknown unit '%s' (B, K/KiB, M/MiB, G/GiB, "
                     "T/TiB: powers of 1024)", what, s, bad);
    else if (r < 0)
        PyErr_Format(PyExc_ValueError, "%s '%s' is not a size (bytes, or a number with a unit "
                     "such as '64KiB' or '1MiB')", what, s);
    return r < 0 ? -1 : 0;
}

int memdpy_align(PyObject *o, const char *what, uint64_t *out)
{
    if (memdpy_size(o, what, out) < 0)
        return -1;
    if (*out & (*out - 1)) {
        PyErr_Format(PyExc_ValueError, "%s must be a power of two or 0 (got %llu)", what,
                     (unsigned long long)*out);
        return -1;
    }
    return 0;
}

int memdpy_str(PyObject *o, const char *what, bool allow_none, const char **out)
{
    if (!o || o == Py_None) {
        if (allow_none) {
            *out = NULL;
            return 0;
        }
        PyErr_Format(PyExc_TypeError, "%s must be a str, not None", what);
        return -1;
    }
    if (!PyUnicode_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a str, not %s", what, Py_TYPE(o)->tp_name);
        return -1;
    }
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(o, &len);
    if (!s)
        return -1;
    if ((size_t)len != strlen(s)) {
        PyErr_Format(PyExc_ValueError, "%s must not contain NUL characters", what);
        return -1;
    }
    *out = s;
    return 0;
}

/* A vocabulary word through one of libmemclient's parsers; the error lists the words. */
static int word(PyObject *o, const char *what, const char *choices, int (*parse)(const char *, int *),
                int *out)
{
    const char *s;
    if (memdpy_str(o, what, false, &s) < 0)
        return -1;
    if (parse(s, out) < 0) {
        PyErr_Format(PyExc_ValueError, "unknown %s '%s' (one of %s)", what, s, choices);
        return -1;
    }
    return 0;
}

static int parse_class(const char *s, int *out)
{
    memd_class v;
    int r = memclient_class_parse(s, &v);
    *out = (int)v;
    return r;
}

static int parse_scope(const char *s, int *out)
{
    memd_scope v;
    int r = memclient_scope_parse(s, &v);
    *out = (int)v;
    return r;
}

static int parse_dtype(const char *s, int *out)
{
    memd_dtype v;
    int r = memclient_dtype_parse(s, &v);
    *out = (int)v;
    return r;
}

int memdpy_class(PyObject *o, memd_class *out)
{
    int v;
    if (word(o, "buffer class", "code, constant, placeholder, internal, logging", parse_class,
             &v) < 0)
        return -1;
    *out = (memd_class)v;
    return 0;
}

int memdpy_scope(PyObject *o, memd_scope *out)
{
    int v;
    if (word(o, "scope", "dram/global, sram/l1, dram.texture/global.texture", parse_scope,
             &v) < 0)
        return -1;
    *out = (memd_scope)v;
    return 0;
}

/* isinstance(o, module.attr) (issubclass when o is a class and as_class), without
 * importing module: a framework's dtype can only come from a framework already loaded.
 * 1, 0, or -1 with the exception set. */
static int framework_instance(PyObject *o, const char *module, const char *attr, bool as_class)
{
    PyObject *name = PyUnicode_FromString(module);
    PyObject *mod = name ? PyImport_GetModule(name) : NULL;
    Py_XDECREF(name);
    if (!mod)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *cls = PyObject_GetAttrString(mod, attr);
    Py_DECREF(mod);
    if (!cls) {
        PyErr_Clear(); /* a module of that name that is not the framework */
        return 0;
    }
    int r = as_class ? (PyType_Check(o) ? PyObject_IsSubclass(o, cls) : 0)
                     : PyObject_IsInstance(o, cls);
    Py_DECREF(cls);
    return r;
}

/* The dtype's name as memd spells it: a str as it is; a torch.dtype (torch.float16 ->
 * "float16"); a numpy dtype or scalar type (np.float16, np.dtype("f2") -> "float16").
 * A new str, or NULL with the exception set (TypeError for anything else). */
static PyObject *dtype_text(PyObject *o)
{
    if (PyUnicode_Check(o))
        return Py_NewRef(o);
    int torch = framework_instance(o, "torch", "dtype", false);
    if (torch < 0)
        return NULL;
    if (torch) {
        PyObject *s = PyObject_Str(o); /* "torch.float16" */
        PyObject *t = s ? PyUnicode_Substring(s, sizeof "torch." - 1, PY_SSIZE_T_MAX) : NULL;
        Py_XDECREF(s);
        return t;
    }
    int np_dtype = framework_instance(o, "numpy", "dtype", false);
    int np_type = np_dtype ? np_dtype : framework_instance(o, "numpy", "generic", true);
    if (np_dtype < 0 || np_type < 0)
        return NULL;
    if (np_type) {
        PyObject *mod = PyImport_ImportModule("numpy");
        PyObject *d = mod ? PyObject_CallMethod(mod, "dtype", "O", o) : NULL;
        PyObject *n = d ? PyObject_GetAttrString(d, "name") : NULL;
        Py_XDECREF(mod);
        Py_XDECREF(d);
        return n;
    }
    PyErr_Format(PyExc_TypeError, "dtype must be a str, a torch.dtype or a numpy dtype, not %s",
                 Py_TYPE(o)->tp_name);
    return NULL;
}

int memdpy_dtype(PyObject *o, memd_dtype *out)
{
    int v;
    PyObject *text = dtype_text(o);
    if (!text)
        return -1;
    int r = word(text, "dtype", "u8 i8 u16 i16 f16 bf16 u32 i32 f32 u64 i64 f64", parse_dtype, &v);
    Py_DECREF(text);
    if (r < 0)
        return -1;
    *out = (memd_dtype)v;
    return 0;
}

PyObject *memdpy_list(PyObject *o, const char *what)
{
    if (!o || PyUnicode_Check(o) || PyBytes_Check(o) || PyDict_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be a sequence, not %s", what,
                     o ? Py_TYPE(o)->tp_name : "nothing");
        return NULL;
    }
    PyObject *l = PySequence_List(o);
    if (!l && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s must be a sequence, not %s", what,
                     Py_TYPE(o)->tp_name);
    }
    return l;
}

PyObject *memdpy_field(PyObject *item, Py_ssize_t i, const char *name, bool *found)
{
    *found = false;
    if (PyTuple_Check(item) || PyList_Check(item)) {
        if (i >= PySequence_Fast_GET_SIZE(item))
            Py_RETURN_NONE;
        PyObject *v = PySequence_Fast_GET_ITEM(item, i);
        *found = v != Py_None;
        return Py_NewRef(v);
    }
    PyObject *v;
    if (PyDict_Check(item)) {
        v = PyDict_GetItemString(item, name);
        if (!v)
            Py_RETURN_NONE;
        Py_INCREF(v);
    } else {
        v = PyObject_GetAttrString(item, name);
        if (!v) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                return NULL;
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    *found = v != Py_None;
    return v;
}

PyObject *memdpy_u32_list(const uint32_t *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLong(v[i]);
        if (!x)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, (Py_ssize_t)i, x);
    }
    return l;
}

PyObject *memdpy_u64_list(const uint64_t *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, (Py_ssize_t)i, x);
    }
    return l;
}
