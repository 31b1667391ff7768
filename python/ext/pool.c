/* memd._memd.Pool and memd._memd.PoolBuffer: a client pool (memclient_pool_*) and one
 * sub-allocation in it.
 *
 * Sub-allocation is in-process and takes tens of nanoseconds, less than releasing the
 * GIL would: alloc and free keep it, unless the pool grows (a round trip to memd).
 * Flushing and closing talk to memd and release it. The pool's memory belongs to its
 * client's connection: once the client is closed (memclient_disconnect destroys what is
 * left of its pools) every call on the Pool raises memd.ConnectionError. A Pool or
 * PoolBuffer that is dropped without close() or free() stays allocated until the session
 * ends, as a Buffer does. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "memdpy.h"

#include <structmember.h>

typedef struct memdpy_pool {
    PyObject_HEAD
    memdpy_client *client;
    memclient_pool *pool;   /* NULL once closed */
    unsigned inflight;      /* calls using pool (one may run without the GIL: growth) */
    bool grow;
    uint32_t device;
    memd_class cls;
    PyObject *name;         /* str or None */
} memdpy_pool;

typedef struct memdpy_pool_buffer {
    PyObject_HEAD
    memdpy_pool *pool;
    memclient_pool_buffer buf;
    bool freed;
    PyObject *name;         /* str or None */
} memdpy_pool_buffer;

/* The pool's C object for one call, or NULL with the exception set. Pair with leave. */
static memclient_pool *pool_enter(memdpy_pool *p, const char *what)
{
    if (!p->pool) {
        memdpy_raise_msg(memdpy_err.notfound, ENOENT, "%s: the pool is closed", what);
        return NULL;
    }
    if (!memdpy_client_enter(p->client))
        return NULL;
    p->inflight++;
    return p->pool;
}

static void pool_leave(memdpy_pool *p)
{
    p->inflight--;
    memdpy_client_leave(p->client);
}

/* ---- PoolBuffer ---- */

static PyObject *pool_buffer_new(memdpy_pool *p, const memclient_pool_buffer *b, PyObject *name)
{
    memdpy_pool_buffer *o = PyObject_GC_New(memdpy_pool_buffer, &memdpy_pool_buffer_type);
    if (!o)
        return NULL;
    o->pool = (memdpy_pool *)Py_NewRef((PyObject *)p);
    o->buf = *b;
    o->freed = false;
    o->name = Py_NewRef(name ? name : Py_None);
    PyObject_GC_Track(o);
    return (PyObject *)o;
}

static void pool_buffer_dealloc(PyObject *op)
{
    memdpy_pool_buffer *b = (memdpy_pool_buffer *)op;
    PyObject_GC_UnTrack(op);
    Py_CLEAR(b->pool);
    Py_CLEAR(b->name);
    PyObject_GC_Del(op);
}

static int pool_buffer_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(((memdpy_pool_buffer *)op)->pool);
    return 0;
}

static PyObject *pool_free_handle(memdpy_pool *p, uint64_t handle)
{
    const char *what = "pool free";
    memclient_pool *mp = pool_enter(p, what);
    if (!mp)
        return NULL;
    int r = memclient_pool_free(mp, handle);
    if (r < 0)
        memdpy_raise(r, what, false);
    pool_leave(p);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pool_buffer_free(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_pool_buffer *b = (memdpy_pool_buffer *)op;
    if (b->freed)
        return memdpy_raise_msg(memdpy_err.notfound, ENOENT, "free: the buffer is already freed");
    PyObject *r = pool_free_handle(b->pool, b->buf.handle);
    if (r)
        b->freed = true;
    return r;
}

static PyObject *pool_buffer_exit(PyObject *op, PyObject *args)
{
    (void)args;
    memdpy_pool_buffer *b = (memdpy_pool_buffer *)op;
    /* A closed pool freed everything already. */
    if (b->freed || !b->pool->pool)
        Py_RETURN_FALSE;
    return memdpy_exit_via(op, pool_buffer_free);
}

static PyObject *pool_buffer_repr(PyObject *op)
{
    memdpy_pool_buffer *b = (memdpy_pool_buffer *)op;
    char addr[32];
    snprintf(addr, sizeof addr, "0x%llx", (unsigned long long)b->buf.address);
    return PyUnicode_FromFormat("<memd.PoolBuffer %R at %s, %llu bytes, offset %llu in %llu%s>",
                                b->name, addr, (unsigned long long)b->buf.size,
                                (unsigned long long)b->buf.offset,
                                (unsigned long long)b->buf.lease, b->freed ? " freed" : "");
}

static PyMemberDef pool_buffer_members[] = {
    {"handle", T_ULONGLONG, offsetof(memdpy_pool_buffer, buf.handle), READONLY,
     "The sub-allocation's handle in its pool (Pool.free takes it too)."},
    {"address", T_ULONGLONG, offsetof(memdpy_pool_buffer, buf.address), READONLY,
     "Address in the bank group's address map (the same in every bank)."},
    {"size", T_ULONGLONG, offsetof(memdpy_pool_buffer, buf.size), READONLY,
     "Bytes reserved (per bank), rounded up to the pool's 32-byte unit."},
    {"offset", T_ULONGLONG, offsetof(memdpy_pool_buffer, buf.offset), READONLY,
     "Offset from the start of the pool range holding it."},
    {"lease", T_ULONGLONG, offsetof(memdpy_pool_buffer, buf.lease), READONLY,
     "memd handle of the pool range holding it."},
    {"name", T_OBJECT, offsetof(memdpy_pool_buffer, name), READONLY, "Name, or None."},
    {"freed", T_BOOL, offsetof(memdpy_pool_buffer, freed), READONLY,
     "True once freed through this object."},
    {NULL, 0, 0, 0, NULL},
};

static PyObject *pool_buffer_get_pool(PyObject *op, void *unused)
{
    (void)unused;
    return Py_NewRef((PyObject *)((memdpy_pool_buffer *)op)->pool);
}

static PyGetSetDef pool_buffer_getset[] = {
    {"pool", pool_buffer_get_pool, NULL, "The Pool it lives in.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef pool_buffer_methods[] = {
    {"free", pool_buffer_free, METH_NOARGS,
     "free($self, /)\n--\n\nFrees the sub-allocation (memd.NotFoundError if it is already freed)."},
    MEMDPY_CONTEXT_METHODS(memdpy_enter_self, pool_buffer_exit,
                           "Frees the sub-allocation unless it is freed already."),
    {NULL, NULL, 0, NULL},
};

PyTypeObject memdpy_pool_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "memd.PoolBuffer",
    .tp_basicsize = sizeof(memdpy_pool_buffer),
    .tp_dealloc = pool_buffer_dealloc,
    .tp_repr = pool_buffer_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One sub-allocation of a Pool, made by Pool.alloc(). A context manager: "
              "leaving the block frees it.",
    .tp_traverse = pool_buffer_traverse,
    .tp_methods = pool_buffer_methods,
    .tp_members = pool_buffer_members,
    .tp_getset = pool_buffer_getset,
    .tp_new = NULL,
};

/* ---- Pool ---- */

PyObject *memdpy_pool_new(memdpy_client *client, const memclient_alloc_req *req, bool grow,
                          uint64_t limit)
{
    const char *what = "pool";
    memclient_alloc_req r = *req;
    if (grow)
        r.flags |= MEMCLIENT_POOL_GROW;
    memclient_pool *mp = NULL;
    int rc;
    MEMDPY_CALL(client, rc, memclient_pool_create(c, &r, &mp));
    if (rc < 0)
        return NULL;
    if (limit)
        memclient_pool_set_limit(mp, limit);
    memdpy_pool *p = PyObject_GC_New(memdpy_pool, &memdpy_pool_type);
    PyObject *name = req->name && req->name[0] ? PyUnicode_FromString(req->name)
                                               : Py_NewRef(Py_None);
    if (!p || !name) {
        Py_XDECREF(name);
        if (p) {
            p->client = NULL;
            p->name = NULL;
            p->pool = NULL;
            Py_DECREF(p);
        }
        /* The leases go back with the session, or here if the client is still open. */
        if (memdpy_client_enter(client)) {
            Py_BEGIN_ALLOW_THREADS
            memclient_pool_destroy(mp);
            Py_END_ALLOW_THREADS
            memdpy_client_leave(client);
        }
        return NULL;
    }
    p->client = (memdpy_client *)Py_NewRef((PyObject *)client);
    p->pool = mp;
    p->inflight = 0;
    p->grow = grow;
    p->device = req->device;
    p->cls = req->cls;
    p->name = name;
    PyObject_GC_Track(p);
    return (PyObject *)p;
}

static void pool_dealloc(PyObject *op)
{
    memdpy_pool *p = (memdpy_pool *)op;
    PyObject_GC_UnTrack(op);
    Py_CLEAR(p->client);
    Py_CLEAR(p->name);
    PyObject_GC_Del(op);
}

static int pool_traverse(PyObject *op, visitproc visit, void *arg)
{
    Py_VISIT(((memdpy_pool *)op)->client);
    return 0;
}

static PyObject *pool_alloc(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_pool *p = (memdpy_pool *)op;
    static char *kwlist[] = {"size", "alignment", "name", NULL};
    PyObject *size_o, *align_o = NULL, *name_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO:alloc", kwlist, &size_o, &align_o,
                                     &name_o))
        return NULL;
    uint64_t size, align = 0;
    const char *name = NULL;
    if (memdpy_size(size_o, "size", &size) < 0 ||
        (align_o && memdpy_align(align_o, "alignment", &align) < 0) ||
        (name_o && memdpy_str(name_o, "name", true, &name) < 0))
        return NULL;
    if (size == 0) {
        PyErr_SetString(PyExc_ValueError, "size must be at least 1 byte");
        return NULL;
    }
    if (name && strlen(name) >= MEMD_NAME_MAX) {
        PyErr_Format(PyExc_ValueError, "name has at most %d bytes", MEMD_NAME_MAX - 1);
        return NULL;
    }
    const char *what = "pool alloc";
    memclient_pool *mp = pool_enter(p, what);
    if (!mp)
        return NULL;
    memclient_pool_buffer b;
    int r;
    if (p->grow) { /* growing is a round trip: let other threads run meanwhile */
        Py_BEGIN_ALLOW_THREADS
        r = memclient_pool_alloc(mp, size, align, name, &b);
        Py_END_ALLOW_THREADS
    } else {
        r = memclient_pool_alloc(mp, size, align, name, &b);
    }
    if (r < 0)
        memdpy_raise(r, what, false);
    pool_leave(p);
    if (r < 0)
        return NULL;
    PyObject *out = pool_buffer_new(p, &b, name ? name_o : NULL);
    if (!out)
        (void)pool_free_handle(p, b.handle);
    return out;
}

static PyObject *pool_free(PyObject *op, PyObject *arg)
{
    memdpy_pool *p = (memdpy_pool *)op;
    if (Py_IS_TYPE(arg, &memdpy_pool_buffer_type)) {
        memdpy_pool_buffer *b = (memdpy_pool_buffer *)arg;
        if (b->pool != p) {
            PyErr_SetString(PyExc_ValueError, "free: the buffer belongs to another pool");
            return NULL;
        }
        return pool_buffer_free(arg, NULL);
    }
    uint64_t h;
    if (memdpy_u64(arg, "handle", &h) < 0)
        return NULL;
    return pool_free_handle(p, h);
}

static PyObject *pool_flush(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_pool *p = (memdpy_pool *)op;
    const char *what = "pool flush";
    memclient_pool *mp = pool_enter(p, what);
    if (!mp)
        return NULL;
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = memclient_pool_flush(mp);
    Py_END_ALLOW_THREADS
    if (r < 0)
        memdpy_raise(r, what, false);
    pool_leave(p);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pool_close(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_pool *p = (memdpy_pool *)op;
    if (!p->pool)
        Py_RETURN_NONE; /* closing twice is fine */
    if (!p->client->c || p->client->closing) {
        p->pool = NULL; /* the client's close ended the pool with the session */
        Py_RETURN_NONE;
    }
    if (p->inflight)
        return memdpy_raise_msg(memdpy_err.busy, EBUSY, "pool close: another thread is "
                                "allocating in the pool");
    const char *what = "pool close";
    memclient_pool *mp = pool_enter(p, what);
    if (!mp)
        return NULL;
    p->pool = NULL; /* no other call starts on it from now */
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = memclient_pool_destroy(mp);
    Py_END_ALLOW_THREADS
    if (r < 0)
        memdpy_raise(r, what, false);
    pool_leave(p);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *pool_info(memdpy_pool *p, memclient_pool_info *out)
{
    const char *what = "pool";
    memclient_pool *mp = pool_enter(p, what);
    if (!mp)
        return NULL;
    int r = memclient_pool_query(mp, out);
    pool_leave(p);
    if (r < 0)
        return memdpy_raise(r, what, false);
    return Py_None; /* borrowed: success */
}

#define POOL_FIELD(fn, field)                                                                 \
    static PyObject *fn(PyObject *op, void *unused)                                         \
    {                                                                                        \
        (void)unused;                                                                        \
        memclient_pool_info i;                                                               \
        if (!pool_info((memdpy_pool *)op, &i))                                               \
            return NULL;                                                                     \
        return PyLong_FromUnsignedLongLong(i.field);                                         \
    }
POOL_FIELD(pool_get_handle, handle)
POOL_FIELD(pool_get_address, address)
POOL_FIELD(pool_get_size, leased)
POOL_FIELD(pool_get_used, used)
POOL_FIELD(pool_get_peak, peak)
POOL_FIELD(pool_get_leases, leases)
POOL_FIELD(pool_get_allocations, allocations)
POOL_FIELD(pool_get_unreported, unreported)
POOL_FIELD(pool_get_refused_errno, refused_errno)
POOL_FIELD(pool_get_limit, limit)

static PyObject *pool_get_closed(PyObject *op, void *unused)
{
    (void)unused;
    return PyBool_FromLong(((memdpy_pool *)op)->pool == NULL);
}

static PyObject *pool_get_client(PyObject *op, void *unused)
{
    (void)unused;
    return Py_NewRef((PyObject *)((memdpy_pool *)op)->client);
}

static PyObject *pool_exit_ctx(PyObject *op, PyObject *args)
{
    (void)args;
    return memdpy_exit_via(op, pool_close);
}

static PyObject *pool_repr(PyObject *op)
{
    memdpy_pool *p = (memdpy_pool *)op;
    if (!p->pool)
        return PyUnicode_FromFormat("<memd.Pool %R closed>", p->name);
    memclient_pool_info i;
    if (!pool_info(p, &i)) {
        PyErr_Clear();
        return PyUnicode_FromFormat("<memd.Pool %R>", p->name);
    }
    return PyUnicode_FromFormat("<memd.Pool %R %llu: %llu of %llu bytes used in %u ranges, "
                                "%u buffers>", p->name, (unsigned long long)i.handle,
                                (unsigned long long)i.used, (unsigned long long)i.leased,
                                i.leases, i.allocations);
}

static PyGetSetDef pool_getset[] = {
    {"handle", pool_get_handle, NULL, "memd handle of the pool's first range.", NULL},
    {"address", pool_get_address, NULL, "Address of the first range.", NULL},
    {"size", pool_get_size, NULL, "Bytes (per bank) of every range the pool leased.", NULL},
    {"used", pool_get_used, NULL, "Bytes in live sub-allocations.", NULL},
    {"peak", pool_get_peak, NULL, "The most bytes ever used at once.", NULL},
    {"leases", pool_get_leases, NULL, "Ranges leased (1, more after growth).", NULL},
    {"allocations", pool_get_allocations, NULL, "Live sub-allocations.", NULL},
    {"unreported", pool_get_unreported, NULL,
     "Changes memd has not heard of yet (sent within 50 ms, or by flush()); after memd "
     "refused a report, every live sub-allocation until one is accepted.", NULL},
    {"refused_errno", pool_get_refused_errno, NULL,
     "errno of memd's refusal of this connection's pool reports while its books lag "
     "(the library retries after a growing back-off); 0: none.", NULL},
    {"limit", pool_get_limit, NULL, "Growth limit in bytes (0: none).", NULL},
    {"closed", pool_get_closed, NULL, "True once close() was called.", NULL},
    {"client", pool_get_client, NULL, "The Client the pool belongs to.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef pool_methods[] = {
    {"alloc", (PyCFunction)(void (*)(void))pool_alloc, METH_VARARGS | METH_KEYWORDS,
     "alloc($self, /, size, alignment=0, name=None)\n--\n\n"
     "Returns a PoolBuffer. "
     "Places size bytes (per bank) in the pool, in the process, exact first fit. "
     "memd.OutOfMemory when it does not fit (and the pool may not grow)."},
    {"free", pool_free, METH_O,
     "free($self, buffer, /)\n--\n\nFrees a sub-allocation of this pool (a PoolBuffer or its "
     "handle)."},
    {"flush", pool_flush, METH_NOARGS,
     "flush($self, /)\n--\n\nSends memd what it has not heard yet and waits for its answer."},
    {"close", pool_close, METH_NOARGS,
     "close($self, /)\n--\n\nFrees the pool's ranges (and every sub-allocation); closing twice is fine."},
    MEMDPY_CONTEXT_METHODS(memdpy_enter_self, pool_exit_ctx, "Closes the pool."),
    {NULL, NULL, 0, NULL},
};

PyTypeObject memdpy_pool_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "memd.Pool",
    .tp_basicsize = sizeof(memdpy_pool),
    .tp_dealloc = pool_dealloc,
    .tp_repr = pool_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A client pool, made by Client.pool(): a range memd leased to the session, "
              "sub-allocated in the process. A context manager: leaving the block closes it.",
    .tp_traverse = pool_traverse,
    .tp_methods = pool_methods,
    .tp_getset = pool_getset,
    .tp_new = NULL,
};
