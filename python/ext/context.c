/* memd._memd — the context-manager protocol Client, Buffer, PoolBuffer and Pool share:
 * __enter__ gives the object back, __exit__ closes or frees it and lets any exception
 * propagate. */
#include "memdpy.h"

PyObject *memdpy_enter_self(PyObject *op, PyObject *unused)
{
    (void)unused;
    return Py_NewRef(op);
}

PyObject *memdpy_exit_via(PyObject *op, PyCFunction close)
{
    PyObject *r = close(op, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}
