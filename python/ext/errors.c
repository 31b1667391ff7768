/* memd._memd: raising memd's exceptions, and the mapping of libmemclient's negative
 * errnos onto them (module.c creates the types). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "memdpy.h"

memdpy_errors memdpy_err;

/* ---- raising ---------------------------------------------------------------------- */

static int set_attr_u64(PyObject *o, const char *name, uint64_t v)
{
    PyObject *x = PyLong_FromUnsignedLongLong(v);
    if (!x)
        return -1;
    int r = PyObject_SetAttrString(o, name, x);
    Py_DECREF(x);
    return r;
}

static int set_attr_str(PyObject *o, const char *name, const char *v)
{
    PyObject *x = PyUnicode_DecodeUTF8(v, (Py_ssize_t)strlen(v), "replace");
    if (!x)
        return -1;
    int r = PyObject_SetAttrString(o, name, x);
    Py_DECREF(x);
    return r;
}

/* Instantiates exc(message), sets .errno and .message, and raises it. For the OSError
 * based types (PermissionError, ConnectionError) errno and strerror are OSError's own. */
static PyObject *raise_with(PyObject *exc, int errnum, const char *msg, const memclient_error *e)
{
    PyObject *inst = PyObject_CallFunction(exc, "s", msg);
    if (!inst)
        return NULL;
    bool ok = set_attr_u64(inst, "errno", (uint64_t)errnum) == 0 &&
              set_attr_str(inst, "message", msg) == 0;
    if (ok && PyObject_IsSubclass(exc, PyExc_OSError) == 1)
        ok = set_attr_str(inst, "strerror", msg) == 0;
    /* OutOfMemory's figures are always there: ints, 0 when nothing was measured (the
     * library's own malloc failed), so `e.free < e.requested` never meets None. */
    memclient_error none = {.detail = MEMCLIENT_DETAIL_NOMEM};
    bool figures = e && e->detail >= MEMCLIENT_DETAIL_NOMEM && e->detail <= MEMCLIENT_DETAIL_LIMIT;
    if (ok && exc == memdpy_err.oom && !figures) {
        e = &none;
        figures = true;
    }
    if (ok && exc == memdpy_err.oom) {
        PyObject *empty = PyList_New(0); /* memdpy_raise_on fills the daemon's */
        ok = empty && PyObject_SetAttrString(inst, "holders", empty) == 0;
        Py_XDECREF(empty);
    }
    if (ok && figures)
        ok = memdpy_fields_setattr(inst, e, memdpy_fields_error) == 0 &&
             PyObject_SetAttrString(inst, "quota",
                                    e->detail == MEMCLIENT_DETAIL_QUOTA ? Py_True : Py_False) == 0 &&
             PyObject_SetAttrString(inst, "limit",
                                    e->detail == MEMCLIENT_DETAIL_LIMIT ? Py_True : Py_False) == 0;
    if (ok && exc == memdpy_err.oom) {
        /* None: no post-mortem was saved (rate limit, turned off, an older daemon). */
        PyObject *pm = e->postmortem ? PyLong_FromUnsignedLongLong(e->postmortem)
                                     : Py_NewRef(Py_None);
        ok = pm && PyObject_SetAttrString(inst, "postmortem", pm) == 0;
        Py_XDECREF(pm);
    }
    if (ok)
        PyErr_SetObject(exc, inst);
    Py_DECREF(inst);
    return NULL;
}

PyObject *memdpy_raise_msg(PyObject *exc, int errnum, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return raise_with(exc, errnum, msg, NULL);
}

static PyObject *type_for(int err, bool at_connect)
{
    switch (err) {
    case ENOMEM:
    case EDQUOT:
        return memdpy_err.oom;
    case EPERM:
    case EACCES:
        return memdpy_err.perm;
    case ENOENT:
        return at_connect ? memdpy_err.conn : memdpy_err.notfound;
    case ENODEV:
        return memdpy_err.notfound;
    case ECONNREFUSED:
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ENOTCONN:
    case EPROTO:
    case EPROTONOSUPPORT:
    case EBADMSG:
    case ESTALE:
    case EISCONN:
    case ENOTSOCK:
    case ENOTDIR:
        return memdpy_err.conn;
    case EINVAL:
    case E2BIG:
    case EMSGSIZE:
    case EOVERFLOW:
    case ENAMETOOLONG:
    case EBADRQC:
        return memdpy_err.invalid;
    case EOPNOTSUPP:
        return memdpy_err.unsupported;
    case EBUSY:
        return memdpy_err.busy;
    case ETIMEDOUT:
        return memdpy_err.timeout;
    case EEXIST:
        return memdpy_err.exists;
    default:
        return memdpy_err.error;
    }
}

/* [{"pid", "process", "client", "session", "uid", "bytes"}, ...] of holders h[0..n). */
static PyObject *holders_list(const memclient_holder *h, int n)
{
    PyObject *l = PyList_New(n);
    for (int i = 0; l && i < n; i++) {
        PyObject *d = Py_BuildValue("{s:I,s:s,s:s,s:I,s:I,s:K}", "pid", h[i].pid, "process",
                                    h[i].comm, "client", h[i].client_name, "session",
                                    h[i].session_id, "uid", h[i].uid, "bytes",
                                    (unsigned long long)h[i].bytes);
        if (!d)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, i, d);
    }
    return l;
}

PyObject *memdpy_raise_on(memclient *c, int err, const char *what)
{
    memclient_error e;
    memclient_last_error(&e);
    memdpy_raise(err, what, false);
    if (err != -ENOMEM || e.status != err || e.detail != MEMCLIENT_DETAIL_NOMEM)
        return NULL;
    /* The exception waits while the daemon is asked (a connection that died with the
     * failure simply gives no holders). */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    memclient_holder h[8]; /* the daemon gives at most 8 */
    int n;
    Py_BEGIN_ALLOW_THREADS
    n = memclient_region_holders(c, e.device, e.kind, e.region, h, sizeof h / sizeof h[0]);
    Py_END_ALLOW_THREADS
    PyObject *l = n > 0 ? holders_list(h, n) : NULL;
    if (l && value)
        PyObject_SetAttrString(value, "holders", l);
    Py_XDECREF(l);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    return NULL;
}

PyObject *memdpy_raise(int err, const char *what, bool at_connect)
{
    if (err >= 0)
        err = -EIO; /* never raise "success" */
    memclient_error e;
    memclient_last_error(&e);
    bool ours = e.status == err && e.message[0];
    char msg[512];
    if (ours)
        snprintf(msg, sizeof msg, "%s: %s", what, e.message);
    else
        snprintf(msg, sizeof msg, "%s: %s", what, memclient_strerror(err));
    return raise_with(type_for(-err, at_connect), -err, msg, ours ? &e : NULL);
}

