/* memd._memd — revocation from Python: the notices libmemclient received (an admin freed
 * a buffer this client's session held) kept per Client by handle, Buffer.revoked, and
 * memd.RevokedError for a revoked buffer's use. */
#include <errno.h>

#include "memdpy.h"

/* Moves what libmemclient received into self->revoked (handle -> notice dict): no
 * request, the notices came with earlier replies. 0, or -1 with an exception set. */
static int drain(memdpy_client *self)
{
    if (!self->c || self->closing)
        return 0; /* closed: what was received is all there is */
    if (!self->revoked && !(self->revoked = PyDict_New()))
        return -1;
    memclient_revoke buf[32];
    for (int n = (int)(sizeof buf / sizeof buf[0]); n == (int)(sizeof buf / sizeof buf[0]);) {
        memclient *c = memdpy_client_enter(self);
        if (!c)
            return -1;
        Py_BEGIN_ALLOW_THREADS
        n = memclient_revoked(c, buf, sizeof buf / sizeof buf[0]);
        Py_END_ALLOW_THREADS
        memdpy_client_leave(self);
        for (int i = 0; i < n; i++) {
            PyObject *k = PyLong_FromUnsignedLongLong(buf[i].handle);
            PyObject *d = k ? memdpy_fields_dict(&buf[i], memdpy_fields_revoke) : NULL;
            int r = d ? PyDict_SetItem(self->revoked, k, d) : -1;
            Py_XDECREF(k);
            Py_XDECREF(d);
            if (r < 0)
                return -1;
        }
    }
    return 0;
}

/* The notice about h, borrowed, or NULL (an exception set when it is -1's NULL). */
static PyObject *notice_of(memdpy_client *self, uint64_t h, int *err)
{
    *err = drain(self);
    if (*err < 0 || !self->revoked)
        return NULL;
    PyObject *k = PyLong_FromUnsignedLongLong(h);
    PyObject *d = k ? PyDict_GetItemWithError(self->revoked, k) : NULL;
    Py_XDECREF(k);
    if (!d && PyErr_Occurred())
        *err = -1;
    return d;
}

int memdpy_revoked(memdpy_client *self, uint64_t h)
{
    int err;
    PyObject *d = notice_of(self, h, &err);
    return err < 0 ? -1 : d != NULL;
}

int memdpy_raise_if_revoked(memdpy_client *self, uint64_t h)
{
    /* The reply that failed may be the one that brought the notice: it explains it. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int err;
    PyObject *d = notice_of(self, h, &err);
    if (err < 0 || !d) {
        if (err < 0) {
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return -1;
        }
        PyErr_Restore(type, value, tb);
        return 0;
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyObject *pid = PyDict_GetItemString(d, "admin_pid");
    PyObject *uid = PyDict_GetItemString(d, "admin_uid");
    PyObject *proc = PyDict_GetItemString(d, "admin_process");
    PyObject *msg = PyUnicode_FromFormat("buffer %llu was freed by an admin (pid %S, uid %S, "
                                         "%S)", (unsigned long long)h, pid, uid, proc);
    PyObject *inst = msg ? PyObject_CallOneArg(memdpy_err.revoked, msg) : NULL;
    PyObject *en = inst ? PyLong_FromLong(ENOENT) : NULL;
    bool ok = en && PyObject_SetAttrString(inst, "errno", en) == 0 &&
              PyObject_SetAttrString(inst, "message", msg) == 0;
    PyObject *k, *v;
    for (Py_ssize_t pos = 0; ok && PyDict_Next(d, &pos, &k, &v);)
        ok = PyObject_SetAttr(inst, k, v) == 0;
    if (ok)
        PyErr_SetObject(memdpy_err.revoked, inst);
    Py_XDECREF(en);
    Py_XDECREF(inst);
    Py_XDECREF(msg);
    return -1;
}

PyObject *memdpy_client_revoked(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    if (drain(self) < 0)
        return NULL;
    return self->revoked ? PyDict_Values(self->revoked) : PyList_New(0);
}
