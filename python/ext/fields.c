/* memd._memd: memclient_* structs -> Python dicts and attributes, by the field tables
 * proto/gen.py writes (memdpy_fields_gen.c), so that a field a struct gains reaches
 * Python by a line in proto/memd.toml. */
#include <string.h>

#include "memdpy.h"

static PyObject *field_value(const void *s, const memdpy_cfield *f)
{
    const char *p = (const char *)s + f->offset;
    if (f->kind == MEMDPY_F_STR)
        return PyUnicode_FromString(p);
    /* Integers, C ints used as truth values and enums alike: read by their width. */
    uint64_t v = 0;
    switch (f->size) {
    case 1: {
        uint8_t x;
        memcpy(&x, p, 1);
        v = x;
        break;
    }
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        v = x;
        break;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        v = x;
        break;
    }
    default:
        memcpy(&v, p, sizeof v);
        break;
    }
    switch (f->kind) {
    case MEMDPY_F_BOOL:
        return PyBool_FromLong(v != 0);
    case MEMDPY_F_KIND:
        return PyUnicode_FromString(memclient_kind_name((memd_kind)v));
    case MEMDPY_F_CLASS:
        return PyUnicode_FromString(memclient_class_name((memd_class)v));
    case MEMDPY_F_SCOPE:
        return PyUnicode_FromString(memclient_scope_name((memd_scope)v));
    case MEMDPY_F_INT: /* sign-extended from its width */
        return PyLong_FromLongLong(f->size == 8 ? (long long)v
                                                : (long long)(v ^ (1ull << (8 * f->size - 1))) -
                                                      (1ll << (8 * f->size - 1)));
    default:
        return PyLong_FromUnsignedLongLong(v);
    }
}

PyObject *memdpy_fields_dict(const void *s, const memdpy_cfield *t)
{
    PyObject *d = PyDict_New();
    for (; d && t->key; t++) {
        PyObject *v = field_value(s, t);
        if (!v || PyDict_SetItemString(d, t->key, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

int memdpy_fields_setattr(PyObject *o, const void *s, const memdpy_cfield *t)
{
    for (; t->key; t++) {
        PyObject *v = field_value(s, t);
        int r = v ? PyObject_SetAttrString(o, t->key, v) : -1;
        Py_XDECREF(v);
        if (r < 0)
            return -1;
    }
    return 0;
}
