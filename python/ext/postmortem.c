/* memd._memd — Client.postmortems() and Client.postmortem(id): the snapshots memd saved
 * at out-of-memory refusals (libmemclient's "post-mortems"). */
#include "memdpy.h"

/* A post-mortem's dict; class, kind and scope by name, dir as "bottom-up"/"top-down". */
static PyObject *summary(const memclient_postmortem *p)
{
    PyObject *d = memdpy_fields_dict(p, memdpy_fields_postmortem);
    PyObject *dir = d ? PyUnicode_FromString(p->dir == MEMD_DIR_TOP_DOWN ? "top-down"
                                                                         : "bottom-up")
                      : NULL;
    if (!dir || PyDict_SetItemString(d, "dir", dir) < 0)
        Py_CLEAR(d);
    Py_XDECREF(dir);
    return d;
}

PyObject *memdpy_client_postmortems(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    const char *what = "postmortems";
    memclient_postmortem *v = NULL;
    size_t n = 0;
    int r;
    MEMDPY_CALL(self, r, memclient_postmortems(c, &v, &n));
    if (r < 0)
        return NULL;
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *d = summary(&v[i]);
        if (!d)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, (Py_ssize_t)i, d);
    }
    free(v);
    return l;
}

/* list of n dicts of the records at p (size bytes apart) by field table t */
static PyObject *dicts(const void *p, size_t size, size_t n, const memdpy_cfield *t)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *d = memdpy_fields_dict((const char *)p + i * size, t);
        if (!d)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, (Py_ssize_t)i, d);
    }
    return l;
}

PyObject *memdpy_client_postmortem(PyObject *op, PyObject *args)
{
    memdpy_client *self = (memdpy_client *)op;
    unsigned long long id;
    if (!PyArg_ParseTuple(args, "K:postmortem", &id))
        return NULL;
    const char *what = "postmortem";
    memclient_postmortem_report rep;
    int r;
    MEMDPY_CALL(self, r, memclient_postmortem_get(c, id, &rep));
    if (r < 0)
        return NULL;
    const memclient_postmortem *p = &rep.info;
    PyObject *d = summary(p);
    PyObject *h = d ? dicts(rep.holders, sizeof *rep.holders, p->nholders, memdpy_fields_holder)
                    : NULL;
    PyObject *f = h ? dicts(rep.free_blocks, sizeof *rep.free_blocks, p->nfree,
                            memdpy_fields_free_block)
                    : NULL;
    PyObject *e = f ? memdpy_hist_events_list(rep.events, p->nevents) : NULL;
    if (!e || PyDict_SetItemString(d, "holders", h) < 0 ||
        PyDict_SetItemString(d, "free_blocks", f) < 0 || PyDict_SetItemString(d, "events", e) < 0)
        Py_CLEAR(d);
    Py_XDECREF(h);
    Py_XDECREF(f);
    Py_XDECREF(e);
    memclient_postmortem_report_free(&rep);
    return d;
}
