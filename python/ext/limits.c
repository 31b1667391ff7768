/* memd._memd — Client.limits(), set_limit(), clear_limit(): device memory limits per
 * cgroup (libmemclient's "cgroup limits"). */
#include "memdpy.h"

static int group_of(const char *group, memd_kind *kind)
{
    if (memclient_kind_parse(group, kind) == 0)
        return 0;
    PyErr_Format(PyExc_ValueError, "group must be dram (global) or sram (l1), not '%s'", group);
    return -1;
}

PyObject *memdpy_client_limits(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    const char *what = "limits";
    memclient_snapshot *s = NULL;
    int r;
    MEMDPY_CALL(self, r, memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_LIMITS, &s));
    if (r < 0)
        return NULL;
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < s->nlimits; i++) {
        PyObject *d = memdpy_fields_dict(&s->limits[i], memdpy_fields_limit);
        if (!d || PyList_Append(l, d) < 0)
            Py_CLEAR(l);
        Py_XDECREF(d);
    }
    memclient_snapshot_free(s);
    return l;
}

PyObject *memdpy_client_set_limit(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"cgroup", "device", "max", "group", NULL};
    const char *cgroup, *group = "dram";
    unsigned int device;
    unsigned long long max;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sIK|$s:set_limit", kws, &cgroup, &device, &max,
                                     &group))
        return NULL;
    memd_kind kind;
    if (group_of(group, &kind) < 0)
        return NULL;
    const char *what = "set_limit";
    int r;
    MEMDPY_CALL(self, r, memclient_limit_set(c, cgroup, device, kind, max));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *memdpy_client_clear_limit(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"cgroup", "device", "group", NULL};
    const char *cgroup, *group = NULL;
    PyObject *dev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|O$z:clear_limit", kws, &cgroup, &dev, &group))
        return NULL;
    uint32_t device = MEMCLIENT_ALL_DEVICES;
    if (dev != Py_None && memdpy_u32(dev, "device", &device) < 0)
        return NULL;
    memd_kind kind = MEMD_KIND_COUNT; /* both groups */
    if (group && group_of(group, &kind) < 0)
        return NULL;
    const char *what = "clear_limit";
    int r;
    MEMDPY_CALL(self, r, memclient_limit_clear(c, cgroup, device, kind));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}
