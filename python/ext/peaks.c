/* memd._memd — Client.peaks() and reset_peaks(): high-water marks (libmemclient's "peaks"),
 * like torch.cuda.max_memory_allocated and reset_peak_memory_stats. */
#include "memdpy.h"

PyObject *memdpy_client_peaks(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"device", NULL};
    PyObject *dev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:peaks", kws, &dev))
        return NULL;
    uint32_t device = MEMCLIENT_ALL_DEVICES;
    if (dev != Py_None && memdpy_u32(dev, "device", &device) < 0)
        return NULL;
    const char *what = "peaks";
    memclient_peak *v = NULL;
    size_t n = 0;
    int r;
    MEMDPY_CALL(self, r, memclient_peaks(c, device, &v, &n));
    if (r < 0)
        return NULL;
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *d = memdpy_fields_dict(&v[i], memdpy_fields_peak);
        PyObject *name = d ? PyUnicode_FromString(memclient_peak_what_name(v[i].what)) : NULL;
        if (!name || PyDict_SetItemString(d, "what", name) < 0 || PyList_Append(l, d) < 0)
            Py_CLEAR(l);
        Py_XDECREF(name);
        Py_XDECREF(d);
    }
    free(v);
    return l;
}

PyObject *memdpy_client_reset_peaks(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"device", "session", NULL};
    PyObject *dev = Py_None, *ses = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$O:reset_peaks", kws, &dev, &ses))
        return NULL;
    uint32_t device = MEMCLIENT_ALL_DEVICES, session = MEMCLIENT_PEAKS_OWN;
    if (dev != Py_None && memdpy_u32(dev, "device", &device) < 0)
        return NULL;
    if (PyUnicode_Check(ses) && PyUnicode_CompareWithASCIIString(ses, "all") == 0) {
        session = MEMCLIENT_PEAKS_ALL;
    } else if (ses != Py_None) {
        if (PyUnicode_Check(ses)) {
            PyErr_SetString(PyExc_ValueError, "session must be None (this one's), a session id "
                                              "or 'all'");
            return NULL;
        }
        if (memdpy_u32(ses, "session", &session) < 0)
            return NULL;
    }
    const char *what = "reset_peaks";
    int r;
    MEMDPY_CALL(self, r, memclient_peaks_reset(c, device, session));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}
