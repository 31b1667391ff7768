/* memd._memd.Buffer: one allocation made through a Client. It keeps its client alive;
 * free() (or leaving its `with` block) frees it. A Buffer that is simply dropped stays
 * allocated until its session ends, like a handle in C. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "memdpy.h"
#include <structmember.h>

typedef struct memdpy_buffer {
    PyObject_HEAD
    memdpy_client *client;
    memclient_buffer buf;
    uint32_t device;
    memd_class cls;
    memd_scope scope;
    bool freed;
    PyObject *name; /* str or None */
    PyObject *banks; /* bank-set buffers: bank_info()'s list from the allocation's reply */
} memdpy_buffer;

PyObject *memdpy_buffer_new(memdpy_client *client, const memclient_buffer *buf, uint32_t device,
                            memd_class cls, memd_scope scope, const char *name)
{
    memdpy_buffer *b = PyObject_GC_New(memdpy_buffer, &memdpy_buffer_type);
    if (!b)
        return NULL;
    b->client = (memdpy_client *)Py_NewRef((PyObject *)client);
    b->buf = *buf;
    b->device = device;
    b->cls = cls;
    b->scope = scope;
    b->freed = false;
    b->banks = NULL;
    b->name = name && name[0] ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
    if (!b->name) {
        b->name = Py_NewRef(Py_None);
        Py_DECREF(b);
        return NULL;
    }
    PyObject_GC_Track(b);
    return (PyObject *)b;
}

int memdpy_buffer_set_banks(PyObject *op, const memclient_bank *banks, uint32_t n)
{
    memdpy_buffer *b = (memdpy_buffer *)op;
    PyObject *l = memdpy_bank_list(banks, n);
    if (!l)
        return -1;
    Py_XSETREF(b->banks, l);
    return 0;
}

int memdpy_handle(PyObject *o, uint64_t *out)
{
    if (o && Py_IS_TYPE(o, &memdpy_buffer_type)) {
        *out = ((memdpy_buffer *)o)->buf.handle;
        return 0;
    }
    if (memdpy_u64(o, "handle", out) < 0)
        return -1;
    if (*out == 0) {
        PyErr_SetString(PyExc_ValueError, "handle 0 names no allocation");
        return -1;
    }
    return 0;
}

static void buffer_dealloc(PyObject *op)
{
    memdpy_buffer *b = (memdpy_buffer *)op;
    PyObject_GC_UnTrack(op);
    Py_CLEAR(b->client);
    Py_CLEAR(b->name);
    Py_CLEAR(b->banks);
    PyObject_GC_Del(op);
}

static int buffer_traverse(PyObject *op, visitproc visit, void *arg)
{
    memdpy_buffer *b = (memdpy_buffer *)op;
    Py_VISIT(b->client);
    return 0;
}

static PyObject *buffer_free(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_buffer *b = (memdpy_buffer *)op;
    if (b->freed)
        return memdpy_raise_msg(memdpy_err.notfound, ENOENT, "free: buffer %llu is already freed",
                                (unsigned long long)b->buf.handle);
    const char *what = "free";
    int r;
    uint64_t h = b->buf.handle;
    if (memdpy_raise_if_revoked(b->client, h) < 0)
        return NULL;
    MEMDPY_CALL(b->client, r, memclient_free(c, h));
    if (r < 0) {
        memdpy_raise_if_revoked(b->client, h);
        return NULL;
    }
    b->freed = true;
    Py_RETURN_NONE;
}

static PyObject *buffer_bank_addresses(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_buffer *b = (memdpy_buffer *)op;
    PyObject *h = PyLong_FromUnsignedLongLong(b->buf.handle);
    if (!h)
        return NULL;
    PyObject *r = PyObject_CallMethod((PyObject *)b->client, "bank_addresses", "O", h);
    Py_DECREF(h);
    return r;
}

/* A copy of the list its allocation's reply gave; else Client.bank_info asks memd. */
static PyObject *buffer_bank_info(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_buffer *b = (memdpy_buffer *)op;
    if (b->banks) {
        Py_ssize_t n = PyList_GET_SIZE(b->banks);
        PyObject *l = PyList_New(n);
        for (Py_ssize_t i = 0; l && i < n; i++) {
            PyObject *d = PyDict_Copy(PyList_GET_ITEM(b->banks, i));
            if (!d)
                Py_CLEAR(l);
            else
                PyList_SET_ITEM(l, i, d);
        }
        return l;
    }
    return PyObject_CallMethod((PyObject *)b->client, "bank_info", "O", op);
}

static PyObject *buffer_exit(PyObject *op, PyObject *args)
{
    (void)args;
    if (((memdpy_buffer *)op)->freed)
        Py_RETURN_FALSE;
    return memdpy_exit_via(op, buffer_free);
}

static PyObject *buffer_repr(PyObject *op)
{
    memdpy_buffer *b = (memdpy_buffer *)op;
    char addr[32];
    snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)b->buf.address);
    return PyUnicode_FromFormat("<memd.Buffer %llu %s %s %s%s%R at %s, %llu bytes x %u banks%s>",
                                (unsigned long long)b->buf.handle, memclient_kind_name(b->buf.kind),
                                memclient_class_name(b->cls), b->name == Py_None ? "" : "name=",
                                b->name == Py_None ? "" : " ", b->name, addr,
                                (unsigned long long)b->buf.size_per_bank, b->buf.banks,
                                b->freed ? " freed" : "");
}

static PyMemberDef buffer_members[] = {
    {"handle", T_ULONGLONG, offsetof(memdpy_buffer, buf.handle), READONLY,
     "The allocation's handle (never reused while the daemon's state lives)."},
    {"size_per_bank", T_ULONGLONG, offsetof(memdpy_buffer, buf.size_per_bank), READONLY,
     "Bytes reserved in each bank (lockstep)."},
    {"page_size", T_ULONGLONG, offsetof(memdpy_buffer, buf.page_size), READONLY,
     "Effective (padded) page size."},
    {"pitch", T_ULONGLONG, offsetof(memdpy_buffer, buf.pitch), READONLY,
     "dram.texture row pitch in bytes, else 0."},
    {"bank_mode", T_INT, offsetof(memdpy_buffer, buf.bank_mode), READONLY,
     "0: lockstep over every bank, 1: a bank set, uniform per-core (reserved in its banks),\n"
     "2: per bank (per-core), 3: a bank set, range lockstep (reserved in every bank)"},
    {"banks", T_UINT, offsetof(memdpy_buffer, buf.banks), READONLY,
     "Banks the data is spread over."},
    {"refcount", T_UINT, offsetof(memdpy_buffer, buf.refcount), READONLY,
     "Holders of a shared buffer when it was allocated, else 1."},
    {"region_index", T_UINT, offsetof(memdpy_buffer, buf.region), READONLY,
     "Region index in the bank group: its place in Client.dump()'s regions list."},
    {"device", T_UINT, offsetof(memdpy_buffer, device), READONLY, "Device id."},
    {"name", T_OBJECT, offsetof(memdpy_buffer, name), READONLY, "Name, or None."},
    {"freed", T_BOOL, offsetof(memdpy_buffer, freed), READONLY,
     "True once freed through this object."},
    {NULL, 0, 0, 0, NULL},
};

/* memd.RevokedError once an admin freed it: the address may be someone else's now. */
static PyObject *buffer_get_address(PyObject *op, void *unused)
{
    (void)unused;
    memdpy_buffer *b = (memdpy_buffer *)op;
    if (memdpy_raise_if_revoked(b->client, b->buf.handle) < 0)
        return NULL;
    return PyLong_FromUnsignedLongLong(b->buf.address);
}

static PyObject *buffer_get_revoked(PyObject *op, void *unused)
{
    (void)unused;
    memdpy_buffer *b = (memdpy_buffer *)op;
    int r = memdpy_revoked(b->client, b->buf.handle);
    return r < 0 ? NULL : PyBool_FromLong(r);
}

static PyObject *buffer_get_kind(PyObject *op, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(memclient_kind_name(((memdpy_buffer *)op)->buf.kind));
}

static PyObject *buffer_get_cls(PyObject *op, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(memclient_class_name(((memdpy_buffer *)op)->cls));
}

static PyObject *buffer_get_scope(PyObject *op, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(memclient_scope_name(((memdpy_buffer *)op)->scope));
}

static PyObject *buffer_get_region(PyObject *op, void *unused)
{
    (void)unused;
    memdpy_buffer *b = (memdpy_buffer *)op;
    return memdpy_client_region_name(b->client, b->device, b->buf.kind, b->buf.region);
}

static PyObject *buffer_get_client(PyObject *op, void *unused)
{
    (void)unused;
    return Py_NewRef((PyObject *)((memdpy_buffer *)op)->client);
}

static PyGetSetDef buffer_getset[] = {
    {"address", buffer_get_address, NULL, "Address in the bank group's address map: the same "
     "offset in every bank (memd.RevokedError once an admin freed the buffer).", NULL},
    {"revoked", buffer_get_revoked, NULL, "True once an admin freed the buffer (memctl free): "
     "known from a notice that came with any later reply of this client; no request.", NULL},
    {"kind", buffer_get_kind, NULL, "Bank group: 'dram' or 'sram'.", NULL},
    {"cls", buffer_get_cls, NULL, "Buffer class ('constant', ...).", NULL},
    {"scope", buffer_get_scope, NULL, "Scope it was allocated in ('dram', ...).", NULL},
    {"region", buffer_get_region, NULL, "Name of the region it lies in ('data', ...), as "
     "Client.dump() and memctl name it (the client asks memd once per device).", NULL},
    {"client", buffer_get_client, NULL, "The Client that allocated it.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

/* Client.locate does it (one QUERY and BANK_ADDRS; libmemclient's memclient_locate). */
static PyObject *buffer_locate(PyObject *op, PyObject *offset)
{
    return PyObject_CallMethod((PyObject *)((memdpy_buffer *)op)->client, "locate", "OO", op,
                               offset);
}

static PyMethodDef buffer_methods[] = {
    {"locate", buffer_locate, METH_O,
     "locate($self, offset, /)\n--\n\nWhere byte offset of the buffer is, a memd.Location: (bank, address, "
     "absolute, page, core, noc), pages interleaved over the banks as tt-metal does "
     "(Client.locate); a sequence of offsets gives a list of them from the same two requests."},
    {"free", buffer_free, METH_NOARGS,
     "free($self, /)\n--\n\nFrees the buffer (memd.NotFoundError if it is already freed)."},
    {"bank_addresses", buffer_bank_addresses, METH_NOARGS,
     "bank_addresses($self, /)\n--\n\nThe buffer's absolute address (ints) in every bank of its "
     "group (address + the bank's offset)."},
    {"bank_info", buffer_bank_info, METH_NOARGS,
     "bank_info($self, /)\n--\n\nAs Client.bank_info(buffer) (dicts): every bank the buffer uses, "
     "in id order. A bank-set buffer has the list its allocation's reply brought (alloc and "
     "alloc_batch alike): no round trip."},
    MEMDPY_CONTEXT_METHODS(memdpy_enter_self, buffer_exit,
                           "Frees the buffer unless it is freed already."),
    {NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(buffer_doc,
"One allocation, made by Client.alloc(). A context manager: leaving the block frees it.\n"
"A Buffer that is dropped without free() stays allocated until the session ends.");

PyTypeObject memdpy_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "memd.Buffer",
    .tp_basicsize = sizeof(memdpy_buffer),
    .tp_dealloc = buffer_dealloc,
    .tp_repr = buffer_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = buffer_doc,
    .tp_traverse = buffer_traverse,
    .tp_methods = buffer_methods,
    .tp_members = buffer_members,
    .tp_getset = buffer_getset,
    .tp_new = NULL, /* made by Client.alloc only */
};
