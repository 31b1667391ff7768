/* memd._memd.Client: one libmemclient connection (one daemon session). The Python
 * subclass memd.Client adds the model and plan helpers on top. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memdpy.h"
#include "report.h"

/* ---- lifecycle ------------------------------------------------------------------------- */

static int client_init(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"socket", "name", "timeout", NULL};
    PyObject *sock = Py_None, *name = Py_None, *timeout = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OO$O:Client", kwlist, &sock, &name, &timeout))
        return -1;
    int timeout_ms = -1; /* None: $MEMD_TIMEOUT_MS, as libmemclient's own connect */
    if (timeout != Py_None && memdpy_timeout_ms(timeout, "timeout", &timeout_ms) < 0)
        return -1;
    if (self->c || self->closing) {
        PyErr_SetString(PyExc_RuntimeError, "Client.__init__ called twice");
        return -1;
    }
    PyObject *path_obj = NULL;
    const char *path = NULL, *cname = NULL;
    if (sock != Py_None) {
        if (!PyUnicode_Check(sock) && !PyBytes_Check(sock) && !PyObject_HasAttrString(sock, "__fspath__")) {
            PyErr_Format(PyExc_TypeError, "socket must be a path (str or os.PathLike), not %s",
                         Py_TYPE(sock)->tp_name);
            return -1;
        }
        if (!PyUnicode_FSConverter(sock, &path_obj))
            return -1;
        path = PyBytes_AS_STRING(path_obj);
    }
    if (memdpy_str(name, "name", true, &cname) < 0) {
        Py_XDECREF(path_obj);
        return -1;
    }
    memclient *c = NULL;
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = timeout_ms < 0 ? memclient_connect_named(path, cname, &c)
                       : memclient_connect_timeout(path, cname, 0, timeout_ms, &c);
    Py_END_ALLOW_THREADS
    Py_XDECREF(path_obj);
    if (r < 0) {
        memdpy_raise(r, "connect", true);
        return -1;
    }
    memclient_session_info si;
    memset(&si, 0, sizeof si);
    memclient_session(c, &si);
    self->socket_path = PyUnicode_DecodeFSDefault(si.socket_path);
    if (!self->socket_path) {
        memclient_disconnect(c);
        return -1;
    }
    self->c = c;
    return 0;
}

static void client_dealloc(PyObject *op)
{
    memdpy_client *self = (memdpy_client *)op;
    PyObject_GC_UnTrack(op);
    if (self->weakrefs)
        PyObject_ClearWeakRefs(op);
    /* No call can be in flight: every call holds a reference to the client. */
    if (self->c) {
        memclient *c = self->c;
        self->c = NULL;
        Py_BEGIN_ALLOW_THREADS
        memclient_disconnect(c);
        Py_END_ALLOW_THREADS
    }
    Py_CLEAR(self->socket_path);
    Py_CLEAR(self->regions);
    Py_CLEAR(self->revoked);
    Py_TYPE(op)->tp_free(op);
}

static int client_traverse(PyObject *op, visitproc visit, void *arg)
{
    (void)op;
    (void)visit;
    (void)arg;
    return 0; /* holds no Python object that could be part of a cycle */
}

static PyObject *client_close(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    self->closing = true;
    if (self->c && self->inflight == 0) {
        memclient *c = self->c;
        self->c = NULL;
        Py_BEGIN_ALLOW_THREADS
        memclient_disconnect(c);
        Py_END_ALLOW_THREADS
    }
    Py_RETURN_NONE;
}

static PyObject *client_enter(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    if (!self->c || self->closing)
        return memdpy_raise_msg(memdpy_err.conn, ENOTCONN, "the client is closed");
    return Py_NewRef(op);
}

static PyObject *client_exit(PyObject *op, PyObject *args)
{
    (void)args;
    return memdpy_exit_via(op, client_close);
}

static PyObject *client_get_closed(PyObject *op, void *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    return PyBool_FromLong(!self->c || self->closing);
}

static PyObject *client_get_socket(PyObject *op, void *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    if (!self->socket_path)
        Py_RETURN_NONE;
    return Py_NewRef(self->socket_path);
}

static PyObject *client_repr(PyObject *op)
{
    memdpy_client *self = (memdpy_client *)op;
    return PyUnicode_FromFormat("<memd.Client %R%s>", self->socket_path ? self->socket_path : Py_None,
                                !self->c || self->closing ? " closed" : "");
}

static PyObject *client_session(PyObject *op, PyObject *unused)
{
    (void)unused;
    memdpy_client *self = (memdpy_client *)op;
    const char *what = "session";
    memclient_session_info si;
    memset(&si, 0, sizeof si);
    int r;
    MEMDPY_CALL(self, r, memclient_session(c, &si));
    if (r < 0)
        return NULL;
    PyObject *d = memdpy_fields_dict(&si, memdpy_fields_session_info);
    /* Not the daemon's: the path as the file system spells it. */
    PyObject *sock = d ? PyUnicode_DecodeFSDefault(si.socket_path) : NULL;
    if (!sock || PyDict_SetItemString(d, "socket", sock) < 0)
        Py_CLEAR(d);
    Py_XDECREF(sock);
    return d;
}

static PyObject *client_reconnect(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"timeout_ms", NULL};
    int timeout_ms = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i:reconnect", kwlist, &timeout_ms))
        return NULL;
    if (timeout_ms < -1) {
        PyErr_SetString(PyExc_ValueError, "timeout_ms must be -1 (no limit), 0 or more");
        return NULL;
    }
    const char *what = "reconnect";
    int r;
    MEMDPY_CALL(self, r, memclient_reconnect(c, timeout_ms));
    if (r == -EISCONN) { /* alive: nothing to do, not an error */
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    if (r == -ENOENT || r == -ECONNREFUSED) { /* no daemon (yet) at the socket */
        PyErr_Clear();
        return memdpy_raise(r, what, true);
    }
    if (r < 0)
        return NULL;
    Py_RETURN_TRUE;
}

/* ---- allocation ------------------------------------------------------------------------ */

/* The keyword arguments of alloc, also the keys of alloc_batch's dicts. */
static const char *const req_keys[] = {"device", "cls", "size", "scope", "page_size", "alignment",
                                       "banks", "name", "shared", "shape", "dtype", "bank_set",
                                       "per_bank", "mode"};
enum { K_DEVICE, K_CLS, K_SIZE, K_SCOPE, K_PAGE, K_ALIGN, K_BANKS, K_NAME, K_SHARED, K_SHAPE,
       K_DTYPE, K_BANK_SET, K_PER_BANK, K_MODE, K_COUNT };

/* Fills req from v[K_*] (NULL = not given), but for the bank set (parse_banks). Borrowed
 * strings stay valid while v lives. sized: per-core shard sizes give the size instead. */
static int parse_req(PyObject *const v[K_COUNT], memclient_alloc_req *req, bool sized)
{
    memset(req, 0, sizeof *req);
    req->scope = MEMD_SCOPE_DRAM;
    if (!v[K_DEVICE] || !v[K_CLS]) {
        PyErr_SetString(PyExc_TypeError, "an allocation needs a device and a cls");
        return -1;
    }
    if (memdpy_u32(v[K_DEVICE], "device", &req->device) < 0 || memdpy_class(v[K_CLS], &req->cls) < 0)
        return -1;
    if (v[K_SCOPE] && v[K_SCOPE] != Py_None && memdpy_scope(v[K_SCOPE], &req->scope) < 0)
        return -1;
    bool has_size = v[K_SIZE] && v[K_SIZE] != Py_None;
    bool has_shape = v[K_SHAPE] && v[K_SHAPE] != Py_None;
    bool has_dtype = v[K_DTYPE] && v[K_DTYPE] != Py_None;
    if (sized && (has_size || has_shape || has_dtype)) {
        PyErr_SetString(PyExc_TypeError, "with sizes, give no size, shape or dtype");
        return -1;
    }
    if (!sized && (has_size == (has_shape || has_dtype) || has_shape != has_dtype)) {
        PyErr_SetString(PyExc_TypeError, "give size (bytes), or shape and dtype");
        return -1;
    }
    if (sized) {
    } else if (has_size) {
        if (memdpy_size(v[K_SIZE], "size", &req->bytes) < 0)
            return -1;
        if (req->bytes == 0) {
            PyErr_SetString(PyExc_ValueError, "size must be at least 1 byte");
            return -1;
        }
    } else {
        if (memdpy_dtype(v[K_DTYPE], &req->dtype) < 0)
            return -1;
        PyObject *shape = memdpy_list(v[K_SHAPE], "shape");
        if (!shape)
            return -1;
        Py_ssize_t n = PyList_GET_SIZE(shape);
        if (n < 1 || n > MEMD_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "shape has 1..%d dimensions, not %zd", MEMD_MAX_DIMS, n);
            Py_DECREF(shape);
            return -1;
        }
        req->ndim = (uint32_t)n;
        for (Py_ssize_t i = 0; i < n; i++) {
            if (memdpy_u64(PyList_GET_ITEM(shape, i), "shape dimension", &req->shape[i]) < 0) {
                Py_DECREF(shape);
                return -1;
            }
            if (req->shape[i] == 0) {
                PyErr_SetString(PyExc_ValueError, "shape dimensions must not be 0");
                Py_DECREF(shape);
                return -1;
            }
        }
        Py_DECREF(shape);
    }
    if ((v[K_PAGE] && memdpy_size(v[K_PAGE], "page_size", &req->page_size) < 0) ||
        (v[K_ALIGN] && memdpy_align(v[K_ALIGN], "alignment", &req->alignment) < 0) ||
        (v[K_BANKS] && memdpy_u32(v[K_BANKS], "banks", &req->banks) < 0) ||
        (v[K_NAME] && memdpy_str(v[K_NAME], "name", true, &req->name) < 0))
        return -1;
    if (req->name && strlen(req->name) >= MEMD_NAME_MAX) {
        PyErr_Format(PyExc_ValueError, "name has at most %d bytes", MEMD_NAME_MAX - 1);
        return -1;
    }
    if (v[K_SHARED]) {
        int shared = PyObject_IsTrue(v[K_SHARED]);
        if (shared < 0)
            return -1;
        if (shared) {
            if (!req->name || !req->name[0]) {
                PyErr_SetString(PyExc_ValueError, "a shared allocation needs a name");
                return -1;
            }
            req->flags |= MEMCLIENT_ALLOC_SHARED;
        }
    }
    return 0;
}

/* Bank ids (any iterable of ints, 1..MEMD_BANKSET_MAX of them): a PyMem array, or NULL
 * with the exception set. */
static uint32_t *bank_ids(PyObject *o, const char *what, uint32_t *count)
{
    PyObject *l = memdpy_list(o, what);
    if (!l)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(l);
    uint32_t *ids = NULL;
    if (n < 1 || n > (Py_ssize_t)MEMD_BANKSET_MAX)
        PyErr_Format(PyExc_ValueError, "%s has 1..%u bank ids, not %zd", what, MEMD_BANKSET_MAX, n);
    else if (!(ids = PyMem_Calloc((size_t)n, sizeof *ids)))
        PyErr_NoMemory();
    for (Py_ssize_t i = 0; ids && i < n; i++)
        if (memdpy_u32(PyList_GET_ITEM(l, i), "bank id", &ids[i]) < 0) {
            PyMem_Free(ids);
            ids = NULL;
        }
    Py_DECREF(l);
    *count = (uint32_t)n;
    return ids;
}

/* bank_set (bank ids, any iterable of ints, in any order: the library sorts them) and
 * per_bank from v into req; the ids in a PyMem array (*ids, NULL without a set) that
 * must live as long as req, and with either, req->bank_out (PyMem too: free it) for the
 * banks the reply brings (per_bank alone: up to 1024; a larger group's buffer asks memd
 * in Buffer.bank_info). 0, or -1 with the exception set. */
static int parse_banks(PyObject *const v[K_COUNT], memclient_alloc_req *req, uint32_t **ids)
{
    *ids = NULL;
    if (v[K_PER_BANK] && (req->per_bank = PyObject_IsTrue(v[K_PER_BANK])) < 0)
        return -1;
    if (v[K_MODE] && v[K_MODE] != Py_None) { /* tt-metal's names of the bank-set modes */
        const char *m = PyUnicode_Check(v[K_MODE]) ? PyUnicode_AsUTF8(v[K_MODE]) : NULL;
        if (!m || memclient_alloc_req_set_mode(req, m) < 0) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "mode must be 'uniform_per_core', 'range_lockstep' "
                         "or 'per_core', not %R", v[K_MODE]);
            return -1;
        }
    }
    if (v[K_BANK_SET] && v[K_BANK_SET] != Py_None) {
        if (!(*ids = bank_ids(v[K_BANK_SET], "bank_set", &req->nbank_set)))
            return -1;
        req->bank_set = *ids;
    }
    req->nbank_out = req->nbank_set ? req->nbank_set : req->per_bank ? 1024 : 0;
    if (req->nbank_out && !(req->bank_out = PyMem_Calloc(req->nbank_out, sizeof *req->bank_out))) {
        PyMem_Free(*ids);
        *ids = NULL;
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* The Buffer of a request's reply, with the bank list the reply brought (bank_out). */
static PyObject *new_buffer(memdpy_client *self, const memclient_alloc_req *req,
                            const memclient_buffer *buf)
{
    PyObject *b = memdpy_buffer_new(self, buf, req->device, req->cls, req->scope, req->name);
    if (b && req->bank_out && buf->banks <= req->nbank_out &&
        memdpy_buffer_set_banks(b, req->bank_out, buf->banks) < 0)
        Py_CLEAR(b);
    return b;
}

/* A bank id with its piece's size, to sort the set (the wire wants ids in order). */
typedef struct sized_bank {
    uint32_t id;
    uint64_t size;
} sized_bank;

static int cmp_sized_bank(const void *a, const void *b)
{
    uint32_t x = ((const sized_bank *)a)->id, y = ((const sized_bank *)b)->id;
    return (x > y) - (x < y);
}

/* sizes (one per bank_set id, in bank_set's order) into a PyMem array *out, req's set
 * sorted with it. 0, or -1 with the exception set. */
static int parse_sizes(PyObject *o, memclient_alloc_req *req, uint32_t *ids, uint64_t **out)
{
    *out = NULL;
    PyObject *l = memdpy_list(o, "sizes");
    if (!l)
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(l);
    sized_bank *sb = NULL;
    uint64_t *sizes = NULL;
    if (!ids || n != (Py_ssize_t)req->nbank_set)
        PyErr_Format(PyExc_ValueError, "sizes has %zd sizes but bank_set %u banks: one size "
                     "per bank", n, ids ? req->nbank_set : 0);
    else if (!(sb = PyMem_Calloc((size_t)n, sizeof *sb)) ||
             !(sizes = PyMem_Calloc((size_t)n, sizeof *sizes)))
        PyErr_NoMemory();
    for (Py_ssize_t i = 0; sizes && i < n; i++) {
        sb[i].id = ids[i];
        if (memdpy_size(PyList_GET_ITEM(l, i), "size", &sb[i].size) < 0)
            Py_CLEAR(l);
        if (!l)
            break;
    }
    int rc = -1;
    if (sizes && l) {
        qsort(sb, (size_t)n, sizeof *sb, cmp_sized_bank);
        for (Py_ssize_t i = 0; i < n; i++) {
            ids[i] = sb[i].id;
            sizes[i] = sb[i].size;
        }
        req->sizes = *out = sizes;
        rc = 0;
    } else {
        PyMem_Free(sizes);
    }
    PyMem_Free(sb);
    Py_XDECREF(l);
    return rc;
}

static PyObject *client_alloc(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"device", "cls", "size", "scope", "page_size", "alignment", "banks",
                             "name", "shared", "shape", "dtype", "bank_set", "per_bank",
                             "mode", "address", "sizes", NULL};
    PyObject *v[K_COUNT] = {0}, *at = NULL, *sizes_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|O$OOOOOOOOOOOOO:alloc", kwlist, &v[K_DEVICE],
                                     &v[K_CLS], &v[K_SIZE], &v[K_SCOPE], &v[K_PAGE], &v[K_ALIGN],
                                     &v[K_BANKS], &v[K_NAME], &v[K_SHARED], &v[K_SHAPE],
                                     &v[K_DTYPE], &v[K_BANK_SET], &v[K_PER_BANK], &v[K_MODE],
                                     &at, &sizes_o))
        return NULL;
    memclient_alloc_req req;
    uint32_t *ids;
    uint64_t *sizes = NULL;
    bool sized = sizes_o && sizes_o != Py_None;
    if (parse_req(v, &req, sized) < 0)
        return NULL;
    if (at && at != Py_None) { /* tt-metal's allocate_at_address */
        if (memdpy_u64(at, "address", &req.address) < 0)
            return NULL;
        req.flags |= MEMCLIENT_ALLOC_AT;
    }
    if (parse_banks(v, &req, &ids) < 0)
        return NULL;
    if (sized && parse_sizes(sizes_o, &req, ids, &sizes) < 0) {
        PyMem_Free(ids);
        PyMem_Free(req.bank_out);
        return NULL;
    }
    const char *what = "alloc";
    memclient_buffer buf;
    int r;
    MEMDPY_CALL(self, r, memclient_alloc(c, &req, &buf));
    PyObject *b = r < 0 ? NULL : new_buffer(self, &req, &buf);
    PyMem_Free(ids);
    PyMem_Free(sizes);
    PyMem_Free(req.bank_out);
    return b;
}

static PyObject *client_pool(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"device", "cls", "size", "scope", "page_size", "alignment", "banks",
                             "name", "grow", "limit", NULL};
    PyObject *v[K_COUNT] = {0}, *grow_o = NULL, *limit_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|$OOOOOOO:pool", kwlist, &v[K_DEVICE],
                                     &v[K_CLS], &v[K_SIZE], &v[K_SCOPE], &v[K_PAGE], &v[K_ALIGN],
                                     &v[K_BANKS], &v[K_NAME], &grow_o, &limit_o))
        return NULL;
    memclient_alloc_req req;
    uint64_t limit = 0;
    int grow = grow_o ? PyObject_IsTrue(grow_o) : 0;
    if (grow < 0 || parse_req(v, &req, false) < 0 ||
        (limit_o && memdpy_size(limit_o, "limit", &limit) < 0))
        return NULL;
    return memdpy_pool_new(self, &req, grow, limit);
}

/* Request i of alloc_batch; its bank ids in *ids and per-core shard sizes in *sizes (PyMem,
 * NULL without). */
static int dict_req(PyObject *d, Py_ssize_t i, memclient_alloc_req *req, uint32_t **ids,
                    uint64_t **sizes)
{
    *ids = NULL;
    *sizes = NULL;
    if (!PyDict_Check(d)) {
        PyErr_Format(PyExc_TypeError, "alloc_batch: request %zd must be a dict, not %s", i,
                     Py_TYPE(d)->tp_name);
        return -1;
    }
    PyObject *v[K_COUNT] = {0}, *sizes_o = NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *val;
    while (PyDict_Next(d, &pos, &key, &val)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (k && !strcmp(k, "sizes")) { /* alloc's keyword-only sizes, not a request field */
            sizes_o = val;
            continue;
        }
        size_t j = 0;
        while (k && j < K_COUNT && strcmp(k, req_keys[j]))
            j++;
        if (!k || j == K_COUNT) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "alloc_batch: request %zd: unknown key %R", i, key);
            return -1;
        }
        v[j] = val;
    }
    bool sized = sizes_o && sizes_o != Py_None;
    if (parse_req(v, req, sized) < 0 || parse_banks(v, req, ids) < 0 ||
        (sized && parse_sizes(sizes_o, req, *ids, sizes) < 0)) {
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        PyErr_NormalizeException(&type, &value, &tb);
        PyErr_Format(type, "alloc_batch: request %zd: %S", i, value);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return -1;
    }
    return 0;
}

static PyObject *client_alloc_batch(PyObject *op, PyObject *arg)
{
    memdpy_client *self = (memdpy_client *)op;
    PyObject *list = memdpy_list(arg, "alloc_batch requests");
    if (!list)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject *out = NULL;
    memclient_alloc_req *reqs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *reqs);
    memclient_buffer *bufs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *bufs);
    uint32_t **ids = PyMem_Calloc(n ? (size_t)n : 1, sizeof *ids);
    uint64_t **sizes = PyMem_Calloc(n ? (size_t)n : 1, sizeof *sizes);
    if (!reqs || !bufs || !ids || !sizes) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (dict_req(PyList_GET_ITEM(list, i), i, &reqs[i], &ids[i], &sizes[i]) < 0)
            goto done;
    if (n == 0) {
        out = PyList_New(0);
        goto done;
    }
    const char *what = "alloc_batch";
    int r;
    MEMDPY_CALL(self, r, memclient_alloc_batch(c, reqs, (size_t)n, bufs));
    if (r < 0)
        goto done;
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *b = new_buffer(self, &reqs[i], &bufs[i]);
        if (!b)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, b);
    }
done:
    for (Py_ssize_t i = 0; ids && reqs && sizes && i < n; i++) {
        PyMem_Free(ids[i]);
        PyMem_Free(sizes[i]);
        PyMem_Free(reqs[i].bank_out);
    }
    PyMem_Free(ids);
    PyMem_Free(sizes);
    PyMem_Free(reqs);
    PyMem_Free(bufs);
    Py_DECREF(list);
    return out;
}

static PyObject *client_free(PyObject *op, PyObject *arg)
{
    memdpy_client *self = (memdpy_client *)op;
    uint64_t h;
    if (memdpy_handle(arg, &h) < 0)
        return NULL;
    const char *what = "free";
    int r;
    MEMDPY_CALL(self, r, memclient_free(c, h));
    if (r < 0) {
        memdpy_raise_if_revoked(self, h);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *client_free_batch(PyObject *op, PyObject *arg)
{
    memdpy_client *self = (memdpy_client *)op;
    PyObject *list = memdpy_list(arg, "free_batch handles");
    if (!list)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(list);
    PyObject *out = NULL;
    uint64_t *hs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *hs);
    if (!hs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (memdpy_handle(PyList_GET_ITEM(list, i), &hs[i]) < 0)
            goto done;
    if (n) {
        const char *what = "free_batch";
        int r;
        MEMDPY_CALL(self, r, memclient_free_batch(c, hs, (size_t)n));
        if (r < 0)
            goto done;
    }
    out = Py_NewRef(Py_None);
done:
    PyMem_Free(hs);
    Py_DECREF(list);
    return out;
}

static PyObject *client_query(PyObject *op, PyObject *arg)
{
    memdpy_client *self = (memdpy_client *)op;
    uint64_t h;
    if (memdpy_handle(arg, &h) < 0)
        return NULL;
    const char *what = "query";
    memclient_alloc_info a;
    int r;
    MEMDPY_CALL(self, r, memclient_query(c, h, &a));
    if (r < 0)
        return NULL;
    return memdpy_fields_dict(&a, memdpy_fields_alloc_info);
}

static PyObject *client_bank_addresses(PyObject *op, PyObject *arg)
{
    memdpy_client *self = (memdpy_client *)op;
    uint64_t h;
    if (memdpy_handle(arg, &h) < 0)
        return NULL;
    const char *what = "bank_addresses";
    size_t cap = 64;
    for (;;) {
        uint64_t *addrs = PyMem_Calloc(cap, sizeof *addrs);
        if (!addrs)
            return PyErr_NoMemory();
        int r;
        MEMDPY_CALL(self, r, memclient_bank_addresses(c, h, addrs, cap));
        if (r < 0) {
            PyMem_Free(addrs);
            return NULL;
        }
        if ((size_t)r > cap) {
            PyMem_Free(addrs);
            cap = (size_t)r;
            continue;
        }
        PyObject *l = memdpy_u64_list(addrs, (size_t)r);
        PyMem_Free(addrs);
        return l;
    }
}

static PyObject *core_tuple(uint16_t x, uint16_t y)
{
    if (x == MEMD_NO_CORE)
        Py_RETURN_NONE;
    return Py_BuildValue("(II)", (unsigned)x, (unsigned)y);
}

PyObject *memdpy_bank_list(const memclient_bank *b, uint32_t n)
{
    PyObject *l = PyList_New(n);
    for (uint32_t i = 0; l && i < n; i++) {
        PyObject *d = Py_BuildValue("{s:I,s:K,s:K,s:N,s:N}", "bank", b[i].bank, "address",
                                    (unsigned long long)b[i].address, "absolute",
                                    (unsigned long long)b[i].absolute, "core",
                                    core_tuple(b[i].logical_x, b[i].logical_y), "noc",
                                    core_tuple(b[i].noc_x, b[i].noc_y));
        if (!d) {
            Py_CLEAR(l);
            break;
        }
        PyList_SET_ITEM(l, i, d);
    }
    return l;
}

/* Every bank of buffer h into *out (PyMem, the caller frees it): the count, or -1 with
 * the exception set. */
static int fetch_banks(memdpy_client *self, uint64_t h, const char *what, memclient_bank **out)
{
    size_t cap = 64;
    for (;;) {
        memclient_bank *b = PyMem_Calloc(cap, sizeof *b);
        if (!b) {
            PyErr_NoMemory();
            return -1;
        }
        int r;
        MEMDPY_CALL(self, r, memclient_bank_info(c, h, b, cap));
        if (r >= 0 && (size_t)r <= cap) {
            *out = b;
            return r;
        }
        PyMem_Free(b);
        if (r < 0)
            return -1;
        cap = (size_t)r;
    }
}

static PyObject *client_bank_info(PyObject *op, PyObject *arg)
{
    uint64_t h;
    memclient_bank *b;
    if (memdpy_handle(arg, &h) < 0)
        return NULL;
    int n = fetch_banks((memdpy_client *)op, h, "bank_info", &b);
    if (n < 0)
        return NULL;
    PyObject *l = memdpy_bank_list(b, (uint32_t)n);
    PyMem_Free(b);
    return l;
}

/* _locate(handle, offsets): memclient_locate of each offset, from one QUERY and one
 * BANK_ADDRS: tuples (bank, address, absolute, page, core, noc) with the cores as
 * bank_info gives them; memd.Client.locate makes them Locations. */
static PyObject *client_locate(PyObject *op, PyObject *args)
{
    memdpy_client *self = (memdpy_client *)op;
    PyObject *h_o, *offs_o;
    uint64_t h;
    if (!PyArg_ParseTuple(args, "OO:_locate", &h_o, &offs_o) || memdpy_handle(h_o, &h) < 0)
        return NULL;
    PyObject *offs = memdpy_list(offs_o, "offsets");
    if (!offs)
        return NULL;
    const char *what = "locate";
    memclient_alloc_info ai;
    memclient_bank *b = NULL;
    PyObject *ret = NULL;
    int r, n;
    MEMDPY_CALL(self, r, memclient_query(c, h, &ai));
    if (r < 0 || (n = fetch_banks(self, h, what, &b)) < 0) {
        memdpy_raise_if_revoked(self, h);
        goto out;
    }
    ret = PyList_New(PyList_GET_SIZE(offs));
    for (Py_ssize_t i = 0; ret && i < PyList_GET_SIZE(offs); i++) {
        uint64_t off;
        memclient_location loc;
        PyObject *t = NULL;
        if (memdpy_u64(PyList_GET_ITEM(offs, i), "offset", &off) == 0) {
            if ((r = memclient_locate(&ai.buf, b, (size_t)n, off, &loc)) < 0)
                memdpy_raise(r, what, false);
            else
                t = Py_BuildValue("(IKKKNN)", loc.bank, (unsigned long long)loc.address,
                                  (unsigned long long)loc.absolute, (unsigned long long)loc.page,
                                  core_tuple(loc.logical_x, loc.logical_y),
                                  core_tuple(loc.noc_x, loc.noc_y));
        }
        if (!t)
            Py_CLEAR(ret);
        else
            PyList_SET_ITEM(ret, i, t);
    }
out:
    PyMem_Free(b);
    Py_DECREF(offs);
    return ret;
}

/* tt-metal's lowest_occupied_address(bank): (address, absolute) or None. */
static PyObject *client_lowest_occupied(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"device", "group", "bank", NULL};
    unsigned int device, bank;
    const char *group;
    memd_kind kind;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "IsI:lowest_occupied", kws, &device, &group, &bank))
        return NULL;
    if (memclient_kind_parse(group, &kind) < 0)
        return PyErr_Format(PyExc_ValueError, "group must be sram (l1) or dram (global), not '%s'",
                            group);
    const char *what = "lowest_occupied";
    uint64_t addr, abs;
    int r;
    MEMDPY_CALL(self, r, memclient_lowest_occupied(c, device, kind, bank, &addr, &abs));
    if (r < 0)
        return NULL;
    if (r == 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)addr, (unsigned long long)abs);
}

/* ---- allocatable ranges (tt-metal's shrink_size / reset_size) --------------------------- */

/* "bottom", "top" (and "both" when allowed) -> MEMCLIENT_RANGE_* bits; 0 with ValueError. */
static unsigned range_ends(const char *s, bool both)
{
    if (!strcmp(s, "bottom"))
        return MEMCLIENT_RANGE_BOTTOM;
    if (!strcmp(s, "top"))
        return MEMCLIENT_RANGE_TOP;
    if (both && !strcmp(s, "both"))
        return MEMCLIENT_RANGE_BOTTOM | MEMCLIENT_RANGE_TOP;
    PyErr_Format(PyExc_ValueError, "end must be 'bottom'%s or 'top', not '%s'",
                 both ? ", 'both'" : "", s);
    return 0;
}

static PyObject *range_change(memdpy_client *self, PyObject *args, PyObject *kw, bool shrink)
{
    static char *shrink_kws[] = {"device", "group", "region", "bytes", "end", NULL};
    static char *reset_kws[] = {"device", "group", "region", "ends", NULL};
    unsigned int device, region;
    unsigned long long bytes = 0;
    const char *group, *end = shrink ? "bottom" : "both";
    int ok = shrink ? PyArg_ParseTupleAndKeywords(args, kw, "IsIK|$s:region_shrink", shrink_kws,
                                                  &device, &group, &region, &bytes, &end)
                    : PyArg_ParseTupleAndKeywords(args, kw, "IsI|$s:region_reset", reset_kws,
                                                  &device, &group, &region, &end);
    if (!ok)
        return NULL;
    memd_kind kind;
    if (memclient_kind_parse(group, &kind) < 0)
        return PyErr_Format(PyExc_ValueError, "group must be sram (l1) or dram (global), not '%s'",
                            group);
    unsigned ends = range_ends(end, !shrink);
    if (!ends)
        return NULL;
    const char *what = shrink ? "region_shrink" : "region_reset";
    memclient_range out;
    int r;
    MEMDPY_CALL(self, r, shrink ? memclient_region_shrink(c, device, kind, region, ends, bytes, &out)
                                : memclient_region_reset(c, device, kind, region, ends, &out));
    if (r < 0)
        return NULL;
    return memdpy_fields_dict(&out, memdpy_fields_range);
}

static PyObject *client_region_shrink(PyObject *op, PyObject *args, PyObject *kw)
{
    return range_change((memdpy_client *)op, args, kw, true);
}

static PyObject *client_region_reset(PyObject *op, PyObject *args, PyObject *kw)
{
    return range_change((memdpy_client *)op, args, kw, false);
}

/* What is left of every allocatable region's range (a dump with its RANGE records). */
static PyObject *client_region_ranges(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"device", NULL};
    PyObject *dev = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:region_ranges", kws, &dev))
        return NULL;
    uint32_t device = MEMCLIENT_ALL_DEVICES;
    if (dev != Py_None) {
        unsigned long v = PyLong_AsUnsignedLong(dev);
        if (PyErr_Occurred())
            return NULL;
        device = (uint32_t)v;
    }
    const char *what = "region_ranges";
    memclient_snapshot *s = NULL;
    int r;
    MEMDPY_CALL(self, r, memclient_dump(c, device, MEMCLIENT_DUMP_RANGES, &s));
    if (r < 0)
        return NULL;
    PyObject *l = PyList_New(0);
    for (size_t i = 0; l && i < s->nranges; i++) {
        const memclient_range *g = &s->ranges[i];
        const memclient_region *reg = memclient_snapshot_region(s, g->device, g->kind, g->region);
        PyObject *d = memdpy_fields_dict(g, memdpy_fields_range);
        PyObject *name = d ? PyUnicode_FromString(reg ? reg->name : "") : NULL;
        if (!name || PyDict_SetItemString(d, "name", name) < 0 || PyList_Append(l, d) < 0)
            Py_CLEAR(l);
        Py_XDECREF(name);
        Py_XDECREF(d);
    }
    memclient_snapshot_free(s);
    return l;
}

/* ---- sub-devices ------------------------------------------------------------------------ */

static PyObject *client_subdev_define(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kws[] = {"name", "device", "group", "banks", "budget", "overlap", "window",
                          NULL};
    const char *name, *group;
    unsigned int device;
    unsigned long long budget = 0, window = 0;
    PyObject *banks, *overlap = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sIsO|$KOK:subdev_define", kws, &name, &device,
                                     &group, &banks, &budget, &overlap, &window))
        return NULL;
    memclient_subdev sd = {.name = name, .device = device, .budget = budget, .window = window};
    if (memclient_kind_parse(group, &sd.kind) < 0)
        return PyErr_Format(PyExc_ValueError, "group must be sram (l1) or dram (global), not '%s'",
                            group);
    PyObject *ol = overlap && overlap != Py_None ? memdpy_list(overlap, "overlap") : NULL;
    if (overlap && overlap != Py_None && !ol)
        return NULL;
    if (ol && PyList_GET_SIZE(ol) > 4) {
        Py_DECREF(ol);
        return PyErr_Format(PyExc_ValueError, "overlap names at most 4 sub-devices");
    }
    for (Py_ssize_t i = 0; ol && i < PyList_GET_SIZE(ol); i++)
        if (!(sd.overlap[i] = PyUnicode_AsUTF8(PyList_GET_ITEM(ol, i)))) {
            Py_DECREF(ol);
            return NULL;
        }
    uint32_t *ids = bank_ids(banks, "banks", &sd.nbanks);
    if (!ids) {
        Py_XDECREF(ol);
        return NULL;
    }
    sd.banks = ids;
    const char *what = "subdev_define";
    int r;
    MEMDPY_CALL(self, r, memclient_subdev_define(c, &sd));
    PyMem_Free(ids);
    Py_XDECREF(ol);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *client_subdev_bind(PyObject *op, PyObject *arg)
{
    memdpy_client *self = (memdpy_client *)op;
    const char *name = PyUnicode_AsUTF8(arg);
    if (!name)
        return NULL;
    const char *what = "subdev_bind";
    int r;
    MEMDPY_CALL(self, r, memclient_subdev_bind(c, name));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* A sequence of coordinates into a PyMem array (*n of them); NULL with the exception set. */
static uint32_t *coords(PyObject *o, const char *what, size_t *n)
{
    PyObject *l = memdpy_list(o, what);
    if (!l)
        return NULL;
    *n = (size_t)PyList_GET_SIZE(l);
    uint32_t *v = PyMem_Calloc(*n ? *n : 1, sizeof *v);
    if (!v)
        PyErr_NoMemory();
    for (size_t i = 0; v && i < *n; i++)
        if (memdpy_u32(PyList_GET_ITEM(l, (Py_ssize_t)i), what, &v[i]) < 0) {
            PyMem_Free(v);
            v = NULL;
        }
    Py_DECREF(l);
    return v;
}

/* memclient_banks_on_cores for memd.Client.banks_on_cores: facts about the device (no
 * such group, no cores, no bank there) are ValueErrors, as that method documents. */
static PyObject *client_banks_on_cores(PyObject *op, PyObject *args)
{
    memdpy_client *self = (memdpy_client *)op;
    unsigned int device;
    const char *group;
    PyObject *ox, *oy;
    memd_kind kind;
    if (!PyArg_ParseTuple(args, "IsOO:_banks_on_cores", &device, &group, &ox, &oy))
        return NULL;
    if (memclient_kind_parse(group, &kind) < 0)
        return PyErr_Format(PyExc_ValueError, "banks_on_cores: group '%s': expected sram (l1) "
                            "or dram (global)", group);
    size_t nx, ny;
    uint32_t *xs = coords(ox, "x", &nx), *ys = xs ? coords(oy, "y", &ny) : NULL;
    uint32_t *ids = ys ? PyMem_Calloc(MEMD_BANKSET_MAX, sizeof *ids) : NULL;
    PyObject *list = NULL;
    if (ys && !ids)
        PyErr_NoMemory();
    if (ids) {
        const char *what = "banks_on_cores";
        int r;
        MEMDPY_CALL(self, r, memclient_banks_on_cores(c, device, kind, xs, nx, ys, ny, ids,
                                                      MEMD_BANKSET_MAX));
        if (r == -ENOENT || r == -ENODATA || r == -ENXIO) {
            memclient_error e;
            memclient_last_error(&e);
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "banks_on_cores: %s", e.message);
        }
        list = r < 0 ? NULL : memdpy_u32_list(ids, (size_t)r);
    }
    PyMem_Free(xs);
    PyMem_Free(ys);
    PyMem_Free(ids);
    return list;
}

/* ---- dump ------------------------------------------------------------------------------ */

static PyObject *client_dump(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"device", "detailed", NULL};
    PyObject *dev = Py_None;
    int detailed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O$p:dump", kwlist, &dev, &detailed))
        return NULL;
    uint32_t device = MEMCLIENT_ALL_DEVICES;
    if (dev != Py_None && memdpy_u32(dev, "device", &device) < 0)
        return NULL;
    if (device == MEMCLIENT_ALL_DEVICES && dev != Py_None) {
        PyErr_SetString(PyExc_ValueError, "device must be a device id, or None for every device");
        return NULL;
    }
    const char *what = "dump";
    memclient_snapshot *s = NULL;
    unsigned flags = MEMCLIENT_DUMP_MODELS | MEMCLIENT_DUMP_SUBALLOCS | MEMCLIENT_DUMP_BANKS |
                     (detailed ? MEMCLIENT_DUMP_BLOCKS : 0);
    int r;
    MEMDPY_CALL(self, r, memclient_dump(c, device, flags, &s));
    if (r < 0)
        return NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        memclient_snapshot_free(s);
        return PyErr_NoMemory();
    }
    memd_report_json(f, s, detailed); /* the document of `memctl dump --json` */
    memclient_snapshot_free(s);
    if (fclose(f) != 0 || !text) {
        free(text);
        return PyErr_NoMemory();
    }
    PyObject *json = PyImport_ImportModule("json");
    PyObject *doc = json ? PyObject_CallMethod(json, "loads", "s#", text, (Py_ssize_t)len) : NULL;
    Py_XDECREF(json);
    free(text);
    return doc;
}

PyObject *memdpy_client_region_name(memdpy_client *self, uint32_t device, memd_kind kind,
                                    uint32_t region)
{
    if (!self->regions && !(self->regions = PyDict_New()))
        return NULL;
    PyObject *key = Py_BuildValue("(IiI)", device, (int)kind, region);
    PyObject *name = key ? PyDict_GetItemWithError(self->regions, key) : NULL;
    if (name || !key || PyErr_Occurred()) {
        Py_XDECREF(key);
        return Py_XNewRef(name);
    }
    const char *what = "region name";
    memclient_snapshot *s = NULL;
    int r;
    MEMDPY_CALL(self, r, memclient_dump(c, device, 0, &s));
    for (size_t i = 0; r >= 0 && i < s->nregions; i++) {
        const memclient_region *g = &s->regions[i];
        PyObject *k = Py_BuildValue("(IiI)", g->device, (int)g->kind, g->region);
        PyObject *v = k ? PyUnicode_FromString(g->name) : NULL;
        if (!v || PyDict_SetItem(self->regions, k, v) < 0)
            r = -1;
        Py_XDECREF(k);
        Py_XDECREF(v);
    }
    memclient_snapshot_free(s);
    name = r >= 0 ? PyDict_GetItemWithError(self->regions, key) : NULL;
    if (r >= 0 && !name && !PyErr_Occurred())
        memdpy_raise_msg(memdpy_err.notfound, ENOENT, "device %u has no region %u in its %s "
                         "group", device, region, memclient_kind_name(kind));
    Py_DECREF(key);
    return Py_XNewRef(name);
}

/* ---- type ------------------------------------------------------------------------------ */

PyDoc_STRVAR(alloc_doc,
"alloc($self, /, device, cls, size=None, *, scope='dram', page_size=0, alignment=0,\n"
"      banks=0, name=None, shared=False, shape=None, dtype=None, bank_set=None,\n"
"      per_bank=False, mode=None, address=None, sizes=None)\n--\n\n"
"Allocates one buffer (a Buffer) on a device. cls is the buffer class ('code', 'constant',\n"
"'placeholder', 'internal', 'logging'): the device's policy turns it into a region and\n"
"a direction. Give size in bytes, or shape (1..4 dims) and dtype ('f16', 'float32', ...).\n"
"scope: 'dram' ('global'), 'sram' ('l1'), 'dram.texture' (shape [h, w] + dtype; the\n"
"buffer's pitch is the padded row). page_size: pages interleave over the banks (0: one\n"
"page). alignment: 0 = the class policy's. banks: 0 = every bank of the group.\n"
"bank_set: bank ids; one address free in all of them, reserved there only (tt-metal's\n"
"uniform per-core allocation), or with per_bank=True an address of its own in each\n"
"(per_bank alone: every bank). mode: the bank set's mode by tt-metal's name,\n"
"'uniform_per_core' (the default), 'range_lockstep' (the address searched in the set's\n"
"banks only, then reserved in every bank of the group, as tt-metal's range lockstep;\n"
"bank_mode 3) or 'per_core' (= per_bank=True).\n"
"shared=True with a name: the same buffer for every request with that name, class and\n"
"size (reference counted).\n"
"address: there or not at all (tt-metal's allocate_at_address; with a bank set, that\n"
"address in each of its banks): memd.InvalidRequestError when it is misaligned,\n"
"memd.BusyError when the range is taken, memd.Error (errno ERANGE) when it leaves\n"
"its region.\n"
"sizes: with bank_set and per_bank=True (mode='per_core'), bytes per piece, one for each\n"
"bank_set id in its order (tt-metal's set_per_core_shard_sizes); size, shape and dtype\n"
"are then not given, and the Buffer's size_per_bank is the largest piece.\n\n"
"Raises memd.OutOfMemory (requested, free, largest_free), memd.UnsupportedError,\n"
"memd.InvalidRequestError, memd.ConnectionError.");

PyDoc_STRVAR(alloc_batch_doc,
"alloc_batch($self, requests, /)\n--\n\n"
"Returns a list of Buffers. "
"All or nothing: each request is a dict with alloc's arguments as keys (device, cls,\n"
"size, scope, ..., bank_set, per_bank, mode, sizes): bank-set and per-bank requests mix\n"
"with plain ones in one round trip. Either every buffer is allocated or none is; the\n"
"error names the request that failed ('element I of N').");

static PyMethodDef client_methods[] = {
    {"close", client_close, METH_NOARGS,
     "close($self, /)\n--\n\nCloses the connection; the daemon releases everything the session still "
     "holds. Calls running in other threads finish first. Idempotent."},
    MEMDPY_CONTEXT_METHODS(client_enter, client_exit, "Closes the connection."),
    {"session", client_session, METH_NOARGS,
     "session($self, /)\n--\n\nThe session (a dict): session_id, protocol_version, max_frame, devices, "
     "server_version, socket, reclaimable, reclaimed."},
    {"reconnect", (PyCFunction)(void (*)(void))client_reconnect, METH_VARARGS | METH_KEYWORDS,
     "reconnect($self, /, timeout_ms=0)\n--\n\nAfter the daemon went away (a call raised "
     "memd.ConnectionError), connects again and takes the session back with everything it "
     "held. False when the connection was alive. Raises memd.ConnectionError (no daemon "
     "yet: call again) or memd.Error (the session could not be reclaimed; the connection "
     "is then up with a new, empty session)."},
    {"alloc", (PyCFunction)(void (*)(void))client_alloc, METH_VARARGS | METH_KEYWORDS, alloc_doc},
    {"alloc_batch", client_alloc_batch, METH_O, alloc_batch_doc},
    {"pool", (PyCFunction)(void (*)(void))client_pool, METH_VARARGS | METH_KEYWORDS,
     "pool($self, /, device, cls, size, *, scope='dram', page_size=0, alignment=0, banks=0,\n"
     "     name=None, grow=False, limit=0)\n--\n\n"
     "A client pool (a Pool): memd leases one range (an ordinary allocation of this session, marked as\n"
     "a pool); Pool.alloc/free then place buffers inside it in the process, exact first fit,\n"
     "in tens of nanoseconds, and tell memd in batches (within 50 ms). grow: lease another\n"
     "range when full, up to limit bytes in all (0: no limit)."},
    {"free", client_free, METH_O,
     "free($self, handle, /)\n--\n\nFrees an allocation (a handle or a Buffer). memd.NotFoundError if no "
     "such handle (memd.RevokedError if an admin freed it), memd.PermissionError if another "
     "session owns it."},
    {"revoked", memdpy_client_revoked, METH_NOARGS,
     "revoked($self, /)\n--\n\nThe buffers of this session an admin freed (memctl free), as "
     "dicts (handle, time_ns, device, admin_session, admin_pid, admin_uid, admin_process, "
     "admin_client): the notices that came with the replies so far (no request)."},
    {"free_batch", client_free_batch, METH_O,
     "free_batch($self, handles, /)\n--\n\nAll or nothing: if any handle cannot be freed, none is."},
    {"query", client_query, METH_O,
     "query($self, handle, /)\n--\n\nAn allocation's details (a dict) (owner or admin only)."},
    {"bank_info", client_bank_info, METH_O,
     "bank_info($self, handle, /)\n--\n\nEvery bank the buffer uses, in id order (dicts): bank, address "
     "(in the group's map), absolute, core and noc ((x, y) or None)."},
    {"lowest_occupied", (PyCFunction)(void (*)(void))client_lowest_occupied,
     METH_VARARGS | METH_KEYWORDS,
     "lowest_occupied($self, /, device, group, bank)\n--\n\n"
     "(address, absolute) or None. "
     "The lowest address of that bank any buffer occupies (every session's; tt-metal's\n"
     "lowest_occupied_address): in the group's map and absolute; None when it holds\n"
     "nothing. One small request, no dump."},
    {"region_shrink", (PyCFunction)(void (*)(void))client_region_shrink,
     METH_VARARGS | METH_KEYWORDS,
     "region_shrink($self, /, device, group, region, bytes, *, end='bottom')\n--\n\n"
     "Admin only: give up `bytes` more (per bank) at that end ('bottom' or 'top') of what is\n"
     "left of region `region` (its index in the group), as tt-metal's shrink_size. Refused\n"
     "(memd.BusyError) while a buffer lies there. Returns what is left: device, kind, region,\n"
     "bottom, top (bytes given up) and start, end: a dict."},
    {"region_reset", (PyCFunction)(void (*)(void))client_region_reset,
     METH_VARARGS | METH_KEYWORDS,
     "region_reset($self, /, device, group, region, *, ends='both')\n--\n\n"
     "Admin only: give back what was given up at 'bottom', 'top' or 'both' ends (tt-metal's\n"
     "reset_size). Returns what is left, as region_shrink."},
    {"region_ranges", (PyCFunction)(void (*)(void))client_region_ranges,
     METH_VARARGS | METH_KEYWORDS,
     "region_ranges($self, /, device=None)\n--\n\n"
     "What is left of every allocatable region's range (region_shrink's dicts, with the\n"
     "region's name): a list of dicts."},
    {"subdev_define", (PyCFunction)(void (*)(void))client_subdev_define,
     METH_VARARGS | METH_KEYWORDS,
     "subdev_define($self, /, name, device, group, banks, *, budget=0, overlap=(), window=0)\n"
     "--\n\nAdmin only: defines a sub-device, banks (ids) of bank group 'sram'/'l1' or "
     "'dram'/'global', with an optional byte budget over all its banks, up to 4 sub-devices "
     "it may share banks with, and an optional window: bytes per bank it owns at the bottom "
     "of the group's first allocatable region (tt-metal's local L1), where its sessions' "
     "buffers go and no other buffer does. memd keeps it across restarts."},
    {"limits", memdpy_client_limits, METH_NOARGS,
     "limits($self, /)\n--\n\nA list of dicts: the cgroup limits (memd.yaml's and those set by admins): cgroup, "
     "device,\nkind ('dram' or 'sram'), from_config, max (dmem.max), current (dmem.current) "
     "and\npeak (dmem.peak), in bytes on the device."},
    {"set_limit", (PyCFunction)(void (*)(void))memdpy_client_set_limit,
     METH_VARARGS | METH_KEYWORDS,
     "set_limit($self, /, cgroup, device, max, *, group='dram')\n--\n\nAdmin only: what the "
     "processes of cgroup and its descendants hold on the\ndevice's bank group may not pass max "
     "bytes (an allocation past it raises\nOutOfMemory). memd keeps it across restarts."},
    {"clear_limit", (PyCFunction)(void (*)(void))memdpy_client_clear_limit,
     METH_VARARGS | METH_KEYWORDS,
     "clear_limit($self, /, cgroup, device=None, *, group=None)\n--\n\nAdmin only: removes cgroup's "
     "limits on device (None: every one) and group\n(None: both). NotFoundError if it had "
     "none there."},
    {"peaks", (PyCFunction)(void (*)(void))memdpy_client_peaks, METH_VARARGS | METH_KEYWORDS,
     "peaks($self, /, device=None)\n--\n\nA list of dicts: the high-water marks this session may "
     "see on device (None:\nevery one), like torch.cuda.max_memory_allocated: what ('group', "
     "'region',\n'session' or 'pool'), device, kind, region, session_id, pid, pool, current,\n"
     "peak (bytes) and peak_ns (when, CLOCK_REALTIME). Every bank group and region;\nthis "
     "session's own bank groups and pools (an admin: every session's)."},
    {"reset_peaks", (PyCFunction)(void (*)(void))memdpy_client_reset_peaks,
     METH_VARARGS | METH_KEYWORDS,
     "reset_peaks($self, /, device=None, *, session=None)\n--\n\nThe peaks start again from "
     "the current bytes (torch.cuda.reset_peak_memory_stats):\nthis session's (session=None), "
     "another session's or 'all' (admin only:\nPermissionError otherwise), on device (None: "
     "every one)."},
    {"subdev_bind", client_subdev_bind, METH_O,
     "subdev_bind($self, name, /)\n--\n\nBinds this session to a sub-device (before it allocates): "
     "from then on it allocates only inside its banks."},
    {"_locate", client_locate, METH_VARARGS,
     "_locate($self, handle, offsets, /)\n--\n\nlist[tuple]: see memd.Client.locate."},
    {"_banks_on_cores", client_banks_on_cores, METH_VARARGS,
     "_banks_on_cores($self, device, group, x, y, /)\n--\n\nSee memd.Client.banks_on_cores."},
    {"bank_addresses", client_bank_addresses, METH_O,
     "bank_addresses($self, handle, /)\n--\n\nThe buffer's absolute address (ints) in every bank of "
     "its bank group."},
    {"dump", (PyCFunction)(void (*)(void))client_dump, METH_VARARGS | METH_KEYWORDS,
     "dump($self, /, device=None, *, detailed=False)\n--\n\nThe daemon's state as one document (a dict): "
     "exactly what `memctl dump --json` prints (schema_version 1), parsed. detailed adds "
     "every block of every region."},
    {"_plan", (PyCFunction)(void (*)(void))memdpy_client_plan, METH_VARARGS | METH_KEYWORDS,
     "_plan($self, /, buffers, budget_ms=0, seed=0, offsets=None)\n--\n\nSee memd.Client.plan."},
    {"_model_load", (PyCFunction)(void (*)(void))memdpy_client_model_load,
     METH_VARARGS | METH_KEYWORDS, "_model_load($self, /, name, device, scope, code_bytes, tensors, ops, offsets=None,\n"
     "            budget_ms=0, seed=0)\n--\n\nSee memd.Client.load_model."},
    {"_model_unload", (PyCFunction)(void (*)(void))memdpy_client_model_unload,
     METH_VARARGS | METH_KEYWORDS, "_model_unload($self, /, model_id, force=False)\n--\n\nSee LoadedModel.unload."},
    {"_model_set_ready", (PyCFunction)(void (*)(void))memdpy_client_model_set_ready,
     METH_VARARGS | METH_KEYWORDS,
     "_model_set_ready($self, /, model_id)\n--\n\nSee memd.LoadedModel.set_ready."},
    {"_model_wait", (PyCFunction)(void (*)(void))memdpy_client_model_wait,
     METH_VARARGS | METH_KEYWORDS,
     "_model_wait($self, /, model_id, timeout)\n--\n\nTrue when the fill job came to this "
     "session (see Client.load_model)."},
    {"_instance_create", (PyCFunction)(void (*)(void))memdpy_client_instance_create,
     METH_VARARGS | METH_KEYWORDS, "_instance_create($self, /, model_id, ntensors)\n--\n\nSee LoadedModel.create_instance."},
    {"_instance_release", (PyCFunction)(void (*)(void))memdpy_client_instance_release,
     METH_VARARGS | METH_KEYWORDS, "_instance_release($self, /, instance_id, free=False)\n--\n\nSee Instance.release."},
    {"_history", (PyCFunction)(void (*)(void))memdpy_client_history, METH_VARARGS | METH_KEYWORDS,
     "_history($self, /, since=0, max=0, device=None, pid=0, client=None, since_ns=0)\n--\n\n"
     "(records, next_seq, lost, capacity, record_size): see Client.history."},
    {"postmortems", memdpy_client_postmortems, METH_NOARGS,
     "postmortems($self, /)\n--\n\nA list of dicts, oldest first: the post-mortems memd saved at "
     "out-of-memory refusals that this session may see (an admin: all; others: their uid's); "
     "keys as memctl postmortem --json's, without holders, free_blocks and events."},
    {"postmortem", memdpy_client_postmortem, METH_VARARGS,
     "postmortem($self, id, /)\n--\n\nOne post-mortem (OutOfMemory.postmortem) as a dict: "
     "the request, the region's state, holders, free_blocks (largest first) and events (the "
     "recorder's last on the device, as Client.history's). NotFoundError if there is none "
     "this session may see."},
    {"_set_context", memdpy_client_set_context, METH_VARARGS,
     "_set_context($self, context, stack=None, /)\n--\n\nSee Client.context."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef client_getset[] = {
    {"closed", client_get_closed, NULL, "True once close() was called.", NULL},
    {"socket", client_get_socket, NULL, "The socket path actually connected to.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(client_doc,
"Client(socket=None, name=None)\n--\n\n"
"One connection (one session) to memd. socket: the daemon's socket; None: $MEMD_SOCKET,\n"
"then the default path (memd.default_socket()). name: the client name `memctl sessions`\n"
"shows (default: the process name). The session owns every allocation made through it:\n"
"when the connection closes, for any reason, memd releases them. A context manager;\n"
"thread-safe (calls release the GIL; threads may share one client).");

PyTypeObject memdpy_client_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "memd._memd.Client",
    .tp_basicsize = sizeof(memdpy_client),
    .tp_dealloc = client_dealloc,
    .tp_repr = client_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = client_doc,
    .tp_traverse = client_traverse,
    .tp_weaklistoffset = offsetof(memdpy_client, weakrefs),
    .tp_methods = client_methods,
    .tp_getset = client_getset,
    .tp_init = client_init,
    .tp_new = PyType_GenericNew,
};
