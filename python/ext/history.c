/* memd._memd — the flight recorder from Python: Client._history (one page of records as
 * dicts) and Client._set_context; memd/__init__.py pages, names and scopes them. */
#include "memdpy.h"

PyObject *memdpy_hist_events_list(const memclient_hist_event *e, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *d = memdpy_fields_dict(&e[i], memdpy_fields_hist_event);
        PyObject *t = d ? PyUnicode_FromString(memclient_hist_type_name(e[i].type)) : NULL;
        if (!t || PyDict_SetItemString(d, "type", t) < 0) {
            Py_XDECREF(t);
            Py_XDECREF(d);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(t);
        PyList_SET_ITEM(list, (Py_ssize_t)i, d);
    }
    return list;
}

PyObject *memdpy_client_history(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"since", "max", "device", "pid", "client", "since_ns", NULL};
    unsigned long long since = 0, since_ns = 0;
    unsigned int max = 0, pid = 0;
    PyObject *device = Py_None;
    const char *client = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|KIOIzK:_history", kwlist, &since, &max, &device,
                                     &pid, &client, &since_ns))
        return NULL;
    memclient_history_filter f = {.since_ns = since_ns, .device = MEMCLIENT_ANY_DEVICE,
                                  .pid = pid, .client = client};
    if (device != Py_None) {
        unsigned long d = PyLong_AsUnsignedLong(device);
        if (PyErr_Occurred() || d >= UINT32_MAX) {
            PyErr_Clear();
            PyErr_SetString(PyExc_ValueError, "device: expected a device id or None");
            return NULL;
        }
        f.device = (uint32_t)d;
    }
    const char *what = "history";
    memclient_history_page pg;
    int r;
    MEMDPY_CALL(self, r, memclient_history(c, since, max, &f, &pg));
    if (r < 0)
        return NULL;
    PyObject *list = memdpy_hist_events_list(pg.events, pg.n);
    PyObject *out = list ? Py_BuildValue("(NKKKI)", list, (unsigned long long)pg.next_seq,
                                         (unsigned long long)pg.lost,
                                         (unsigned long long)pg.capacity, pg.record_size)
                         : NULL;
    memclient_history_page_free(&pg);
    return out;
}

PyObject *memdpy_client_set_context(PyObject *op, PyObject *args)
{
    memdpy_client *self = (memdpy_client *)op;
    const char *context, *stack = NULL;
    if (!PyArg_ParseTuple(args, "s|z:_set_context", &context, &stack))
        return NULL;
    const char *what = "set_context";
    int r;
    MEMDPY_CALL(self, r, memclient_set_context(c, context, stack));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}
