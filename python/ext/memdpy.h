/* memd._memd — the CPython extension under the `memd` package: internals shared by its
 * files. Everything here is hidden; the module exports only PyInit__memd.
 *
 *   module.c   the module, its exception types, errors, names
 *   args.c     strict conversions of Python arguments (sizes, names, sequences)
 *   client.c   memd._memd.Client: one libmemclient connection
 *   buffer.c   memd._memd.Buffer: one allocation
 *   pool.c     memd._memd.Pool and PoolBuffer: client pools and their sub-allocations
 *   plan.c     offline planning and validation (the engine's planner, no daemon)
 *   model.c    model graphs: lifetimes, YAML, loading models and instances
 *   fields.c   memclient_* structs -> dicts and attributes, by generated field tables
 *   history.c  the flight recorder: history pages, contexts
 *
 * Every socket call runs with the GIL released: libmemclient is thread-safe, and a
 * Client counts the calls in flight so that close() never frees a connection another
 * thread is using (the last call out disconnects). */
#ifndef MEMD_PYTHON_MEMDPY_H
#define MEMD_PYTHON_MEMDPY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "memd/client.h"
#include "plan.h"

/* ---- module state (one interpreter: module-level globals, set once at import) ---- */

typedef struct memdpy_errors {
    PyObject *error;        /* memd.Error */
    PyObject *oom;          /* memd.OutOfMemory (Error, MemoryError) */
    PyObject *perm;         /* memd.PermissionError (Error, PermissionError) */
    PyObject *conn;         /* memd.ConnectionError (Error, ConnectionError) */
    PyObject *notfound;     /* memd.NotFoundError (Error, LookupError) */
    PyObject *invalid;      /* memd.InvalidRequestError (Error, ValueError) */
    PyObject *unsupported;  /* memd.UnsupportedError (Error) */
    PyObject *busy;         /* memd.BusyError (Error) */
    PyObject *exists;       /* memd.ExistsError (Error) */
    PyObject *plan;         /* memd.PlanError (Error, ValueError) */
    PyObject *model;        /* memd.ModelError (Error, ValueError) */
    PyObject *timeout;      /* memd.TimeoutError (Error, TimeoutError) */
    PyObject *revoked;      /* memd.RevokedError (NotFoundError) */
} memdpy_errors;

extern memdpy_errors memdpy_err;
extern PyTypeObject memdpy_client_type;
extern PyTypeObject memdpy_buffer_type;
extern PyTypeObject memdpy_pool_type;
extern PyTypeObject memdpy_pool_buffer_type;

/* ---- errors (module.c) ---- */

/* Raises the memd exception for a failed libmemclient call (err < 0), with the calling
 * thread's memclient_last_error() details when they describe err. `what` prefixes the
 * message ("alloc", "connect to /run/memd/memd.sock"). at_connect: ENOENT and EACCES
 * name the socket, not a handle. Returns NULL. */
PyObject *memdpy_raise(int err, const char *what, bool at_connect);
/* memdpy_raise for a call on connection c: an OutOfMemory the daemon refused also gets
 * .holders, the region's top holders (one request more, REGION_HOLDERS). */
PyObject *memdpy_raise_on(memclient *c, int err, const char *what);
/* Raises exc with a formatted message and errno (positive) set on the instance. */
PyObject *memdpy_raise_msg(PyObject *exc, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- memclient_* structs -> Python, by field tables (fields.c) ---- */

/* How a field reads in Python: an int (unsigned, or signed: INT), a bool (a C int), a
 * str (a NUL-terminated char array) or an enum's name (memclient_kind_name ...). */
typedef enum memdpy_field_kind {
    MEMDPY_F_UINT,
    MEMDPY_F_INT,
    MEMDPY_F_BOOL,
    MEMDPY_F_STR,
    MEMDPY_F_KIND,
    MEMDPY_F_CLASS,
    MEMDPY_F_SCOPE,
} memdpy_field_kind;

typedef struct memdpy_cfield {
    const char *key;        /* the Python name; NULL ends a table */
    size_t offset, size;    /* of the field in its struct */
    memdpy_field_kind kind;
} memdpy_cfield;

/* memdpy_fields_<x>: the tables proto/gen.py writes from proto/memd.toml's py keys. */
#include "memdpy_fields_gen.h"

/* A new dict of the fields of s that t names; NULL with an exception set. */
PyObject *memdpy_fields_dict(const void *s, const memdpy_cfield *t);
/* The same fields as attributes of o: 0, or -1 with an exception set. */
int memdpy_fields_setattr(PyObject *o, const void *s, const memdpy_cfield *t);

/* ---- argument conversion (args.c) ---- */

/* A non-negative Python int that fits u64 (bool refused); what names it in errors.
 * 0 or -1 with TypeError/ValueError/OverflowError set. */
int memdpy_u64(PyObject *o, const char *what, uint64_t *out);
int memdpy_u32(PyObject *o, const char *what, uint32_t *out);
/* A timeout in seconds (int or float, > 0, bool refused) as milliseconds, rounded up,
 * at most INT_MAX; None gives -1 (no limit). */
int memdpy_timeout_ms(PyObject *o, const char *what, int *out);
/* A size: a non-negative int, or a str as memctl and memd.yaml take them ("64KiB",
 * "1MiB", "0x1000": common/units.h). */
int memdpy_size(PyObject *o, const char *what, uint64_t *out);
/* A power of two or 0 (a size, so "4KiB" too). */
int memdpy_align(PyObject *o, const char *what, uint64_t *out);
/* A str without NUL bytes, UTF-8; *out points into o (valid while o lives). NULL o or
 * None gives NULL when allow_none. */
int memdpy_str(PyObject *o, const char *what, bool allow_none, const char **out);
/* memd vocabulary from a str ("constant", "dram", "l1", "f16"...); a dtype also from a
 * torch.dtype or a numpy dtype or scalar type (torch.float16, np.float16). */
int memdpy_class(PyObject *o, memd_class *out);
int memdpy_scope(PyObject *o, memd_scope *out);
int memdpy_dtype(PyObject *o, memd_dtype *out);
/* v[0..n) as a new list of ints. */
PyObject *memdpy_u32_list(const uint32_t *v, size_t n);
PyObject *memdpy_u64_list(const uint64_t *v, size_t n);
/* A sequence as a new list (generators and other iterables too); NULL with an error. */
PyObject *memdpy_list(PyObject *o, const char *what);
/* x[i] or x.name: from a tuple/list by position, else by attribute. found is false when
 * absent (index past the end, or no attribute / None). New reference or NULL. */
PyObject *memdpy_field(PyObject *item, Py_ssize_t i, const char *name, bool *found);

/* ---- Client internals used by other files ---- */

typedef struct memdpy_client {
    PyObject_HEAD
    memclient *c;           /* NULL once closed and no call is in flight */
    unsigned inflight;      /* calls running without the GIL */
    bool closing;           /* close() asked: no new calls; the last call out disconnects */
    PyObject *socket_path;  /* str */
    PyObject *regions;      /* (device, kind, region index) -> region name, or NULL */
    PyObject *revoked;      /* handle -> revocation notice dict (revoked.c), or NULL */
    PyObject *weakrefs;
} memdpy_client;

/* Takes the connection for one call (raises if closed); pair with memdpy_client_leave.
 * Both are called with the GIL held. */
memclient *memdpy_client_enter(memdpy_client *self);
void memdpy_client_leave(memdpy_client *self);

/* r = call, on the client's connection with the GIL released; on failure the exception
 * is set (r < 0). `c` names the connection inside call; `what` must be in scope. */
#define MEMDPY_CALL(self, r, call)                                                            \
    do {                                                                                   \
        memclient *c = memdpy_client_enter(self);                                          \
        if (!c) {                                                                          \
            (r) = INT_MIN;                                                                 \
            break;                                                                         \
        }                                                                                  \
        Py_BEGIN_ALLOW_THREADS                                                             \
        (r) = (call);                                                                      \
        Py_END_ALLOW_THREADS                                                               \
        if ((r) < 0)                                                                       \
            memdpy_raise_on(c, (r), what);                                                 \
        memdpy_client_leave(self);                                                         \
    } while (0)

/* ---- context managers (context.c) ---- */

/* __enter__ of an object with nothing to check: the object itself. */
PyObject *memdpy_enter_self(PyObject *op, PyObject *unused);
/* __exit__'s work: close(op) (the type's close or free method); False (the exception, if
 * any, propagates), or NULL with close's exception set. */
PyObject *memdpy_exit_via(PyObject *op, PyCFunction close);
/* The __enter__ and __exit__ entries of a type's method table; exit_doc says what leaving
 * the block does. */
#define MEMDPY_CONTEXT_METHODS(enter, exit, exit_doc)                                          \
    {"__enter__", enter, METH_NOARGS, "__enter__($self, /)\n--\n\nReturns itself."},          \
    {"__exit__", exit, METH_VARARGS,                                                           \
     "__exit__($self, exc_type, exc_value, traceback, /)\n--\n\n" exit_doc}

/* ---- revocation (revoked.c) ---- */

/* Whether an admin freed h under self (a notice came with some reply): 1, 0, or -1 with
 * an exception set. Makes no request. */
int memdpy_revoked(memdpy_client *self, uint64_t h);
/* When h was revoked: memd.RevokedError replaces the exception set (if any) and -1;
 * else 0, the exception left as it was. */
int memdpy_raise_if_revoked(memdpy_client *self, uint64_t h);
/* Client.revoked(): every notice received so far, as dicts. */
PyObject *memdpy_client_revoked(PyObject *op, PyObject *unused);

/* A Buffer for buf, made by client (kept alive by the buffer), with the request's
 * device, class, scope and name. */
PyObject *memdpy_buffer_new(memdpy_client *client, const memclient_buffer *buf, uint32_t device,
                            memd_class cls, memd_scope scope, const char *name);
/* Keeps banks[0..n) (a bank-set allocation's reply) as the Buffer's bank_info(). */
int memdpy_buffer_set_banks(PyObject *buffer, const memclient_bank *banks, uint32_t n);
/* Client.bank_info()'s list of dicts for banks[0..n). */
PyObject *memdpy_bank_list(const memclient_bank *banks, uint32_t n);
/* A Pool leased by client from req (pool.c): grow adds MEMCLIENT_POOL_GROW, limit caps
 * its growth (0: none). */
PyObject *memdpy_pool_new(memdpy_client *client, const memclient_alloc_req *req, bool grow,
                          uint64_t limit);

/* The name of region `region` of device's `kind` bank group (a new str), from the
 * client's cache, filled from one memclient_dump of the device on first use: regions come
 * from the device config and never change while the daemon runs. NULL with an
 * exception set. */
PyObject *memdpy_client_region_name(memdpy_client *self, uint32_t device, memd_kind kind,
                                    uint32_t region);

/* The handle of a Buffer or an int. */
int memdpy_handle(PyObject *o, uint64_t *out);

/* ---- functions and methods in other files, gathered into the module / Client ---- */

PyObject *memdpy_plan_solve(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *memdpy_plan_validate(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *memdpy_plan_lower_bound(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *memdpy_model_lifetimes(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *memdpy_model_read_yaml(PyObject *mod, PyObject *args, PyObject *kw);
PyObject *memdpy_model_parse_yaml(PyObject *mod, PyObject *args, PyObject *kw);

PyObject *memdpy_client_plan(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_model_load(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_model_unload(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_model_set_ready(PyObject *op, PyObject *args, PyObject *kw);
PyObject *memdpy_client_model_wait(PyObject *op, PyObject *args, PyObject *kw);
PyObject *memdpy_client_instance_create(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_instance_release(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_history(PyObject *self, PyObject *args, PyObject *kw);
/* Flight recorder records as Client.history's dicts (type by name), or NULL. */
PyObject *memdpy_hist_events_list(const memclient_hist_event *e, size_t n);
PyObject *memdpy_client_postmortems(PyObject *self, PyObject *unused);
PyObject *memdpy_client_postmortem(PyObject *self, PyObject *args);
PyObject *memdpy_client_set_context(PyObject *self, PyObject *args);
PyObject *memdpy_client_limits(PyObject *self, PyObject *unused);
PyObject *memdpy_client_peaks(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_reset_peaks(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_set_limit(PyObject *self, PyObject *args, PyObject *kw);
PyObject *memdpy_client_clear_limit(PyObject *self, PyObject *args, PyObject *kw);

/* Plan buffers from Python (plan.c): a list of tuples (lower, upper, size[, alignment[,
 * offset]]) or objects with those attributes (`align` also accepted; an `offset` that
 * is not None pins the buffer). *names (may be NULL) receives a new list of each
 * buffer's name for messages (the object's `name` or `id`, else None). */
int memdpy_plan_buffers(PyObject *seq, memd_plan_buffer **out, size_t *n, PyObject **names);

#endif
