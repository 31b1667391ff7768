/* memd._memd: plans. Offline through the engine's planner and validator (no daemon), and
 * through the daemon (Client._plan: its plan cache). Buffers come from Python as tuples
 * (lower, upper, size[, alignment[, offset]]) or objects with those attributes. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "memdpy.h"

#define MAX_BUDGET_MS (3600u * 1000u)

static uint64_t mono_ns(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One field of buffer i as u64; absent optional fields leave *out untouched. */
static int field_u64(PyObject *item, Py_ssize_t i, Py_ssize_t pos, const char *name,
                     const char *alt, bool required, bool align, uint64_t *out, bool *found)
{
    bool f;
    PyObject *v = memdpy_field(item, pos, name, &f);
    if (v && !f && alt) {
        Py_DECREF(v);
        v = memdpy_field(item, pos, alt, &f);
    }
    if (!v)
        return -1;
    if (found)
        *found = f;
    if (!f) {
        Py_DECREF(v);
        if (required) {
            PyErr_Format(PyExc_TypeError, "buffer #%zd has no %s", i, name);
            return -1;
        }
        return 0;
    }
    char what[64];
    snprintf(what, sizeof what, "buffer #%zd: %s", i, name);
    int r = align ? memdpy_align(v, what, out) : memdpy_u64(v, what, out);
    Py_DECREF(v);
    return r;
}

int memdpy_plan_buffers(PyObject *seq, memd_plan_buffer **out, size_t *n, PyObject **names)
{
    *out = NULL;
    *n = 0;
    if (names)
        *names = NULL;
    PyObject *list = memdpy_list(seq, "buffers");
    if (!list)
        return -1;
    Py_ssize_t len = PyList_GET_SIZE(list);
    memd_plan_buffer *b = PyMem_Calloc(len ? (size_t)len : 1, sizeof *b);
    PyObject *nm = names ? PyList_New(len) : NULL;
    if (!b || (names && !nm)) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        bool seq_item = PyTuple_Check(item) || PyList_Check(item);
        if (seq_item) {
            Py_ssize_t k = PySequence_Fast_GET_SIZE(item);
            if (k < 3 || k > 5) {
                PyErr_Format(PyExc_TypeError, "buffer #%zd: a tuple (lower, upper, size"
                             "[, alignment[, offset]]) has 3 to 5 items, not %zd", i, k);
                goto fail;
            }
        }
        bool pinned = false;
        if (field_u64(item, i, 0, "lower", NULL, true, false, &b[i].lower, NULL) < 0 ||
            field_u64(item, i, 1, "upper", NULL, true, false, &b[i].upper, NULL) < 0 ||
            field_u64(item, i, 2, "size", NULL, true, false, &b[i].size, NULL) < 0 ||
            field_u64(item, i, 3, "alignment", "align", false, true, &b[i].align, NULL) < 0 ||
            field_u64(item, i, 4, "offset", NULL, false, false, &b[i].offset, &pinned) < 0)
            goto fail;
        b[i].pinned = pinned;
        if (nm) {
            PyObject *name = Py_NewRef(Py_None);
            if (!seq_item) {
                bool f;
                Py_DECREF(name);
                name = memdpy_field(item, 0, "name", &f);
                if (name && !f) {
                    Py_DECREF(name);
                    name = memdpy_field(item, 0, "id", &f);
                }
                if (!name)
                    goto fail;
            }
            PyList_SET_ITEM(nm, i, name);
        }
    }
    Py_DECREF(list);
    *out = b;
    *n = (size_t)len;
    if (names)
        *names = nm;
    return 0;
fail:
    Py_DECREF(list);
    Py_XDECREF(nm);
    PyMem_Free(b);
    return -1;
}

/* "buffer #3 'conv1.out' (lower 0, upper 5, size 100[, offset 64])" */
static PyObject *describe(const memd_plan_buffer *b, size_t n, PyObject *names, size_t i,
                          const uint64_t *offsets)
{
    if (i >= n)
        return PyUnicode_FromFormat("buffer #%zu", i);
    PyObject *name = names ? PyList_GET_ITEM(names, (Py_ssize_t)i) : Py_None;
    PyObject *label = name == Py_None ? PyUnicode_FromString("")
                                      : PyUnicode_FromFormat(" %R", name);
    if (!label)
        return NULL;
    PyObject *off = offsets || b[i].pinned
                        ? PyUnicode_FromFormat(", %s %llu", offsets ? "offset" : "pinned at",
                                               (unsigned long long)(offsets ? offsets[i]
                                                                            : b[i].offset))
                        : PyUnicode_FromString("");
    PyObject *s = off ? PyUnicode_FromFormat("buffer #%zu%U (lower %llu, upper %llu, size %llu%U)",
                                             i, label, (unsigned long long)b[i].lower,
                                             (unsigned long long)b[i].upper,
                                             (unsigned long long)b[i].size, off)
                      : NULL;
    Py_DECREF(label);
    Py_XDECREF(off);
    return s;
}

/* Raises memd.PlanError for a violation: "what: issue: buffer #a ... and buffer #b ...". */
static PyObject *raise_violation(const char *what, const memd_plan_violation *v,
                                 const memd_plan_buffer *b, size_t n, PyObject *names,
                                 const uint64_t *offsets)
{
    bool pair = v->issue == MEMD_PLAN_OVERLAP || v->issue == MEMD_PLAN_PIN_CONFLICT;
    PyObject *da = describe(b, n, names, v->a, offsets);
    PyObject *db = pair ? describe(b, n, names, v->b, offsets) : NULL;
    if (!da || (pair && !db)) {
        Py_XDECREF(da);
        Py_XDECREF(db);
        return NULL;
    }
    const char *reason = memd_plan_issue_reason(v->issue);
    PyObject *msg = pair ? PyUnicode_FromFormat("%s: %s (%s): %U and %U", what,
                                                memd_plan_issue_name(v->issue), reason, da, db)
                         : PyUnicode_FromFormat("%s: %s (%s): %U", what,
                                                memd_plan_issue_name(v->issue), reason, da);
    Py_DECREF(da);
    Py_XDECREF(db);
    if (!msg)
        return NULL;
    PyObject *exc = PyObject_CallFunctionObjArgs(memdpy_err.plan, msg, NULL);
    if (!exc) {
        Py_DECREF(msg);
        return NULL;
    }
    PyObject *na = names && v->a < n ? PyList_GET_ITEM(names, (Py_ssize_t)v->a) : Py_None;
    PyObject *nb = names && pair && v->b < n ? PyList_GET_ITEM(names, (Py_ssize_t)v->b) : Py_None;
    PyObject *attrs = Py_BuildValue("{s:i,s:O,s:s,s:n,s:N,s:(OO)}", "errno", EINVAL, "message",
                                    msg, "issue", memd_plan_issue_name(v->issue), "a",
                                    (Py_ssize_t)v->a, "b",
                                    pair ? PyLong_FromSize_t(v->b) : Py_NewRef(Py_None), "names",
                                    na, nb);
    Py_DECREF(msg);
    Py_ssize_t pos = 0;
    PyObject *k, *val;
    int ok = attrs != NULL;
    while (ok && PyDict_Next(attrs, &pos, &k, &val))
        ok = PyObject_SetAttr(exc, k, val) == 0;
    Py_XDECREF(attrs);
    if (ok)
        PyErr_SetObject(memdpy_err.plan, exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *raise_engine(const char *what, int rc, const memd_plan_violation *v,
                              const memd_plan_buffer *b, size_t n, PyObject *names)
{
    if (rc == -ENOMEM)
        return PyErr_NoMemory();
    if (rc == -EOVERFLOW)
        return memdpy_raise_msg(memdpy_err.plan, EOVERFLOW,
                                "%s: the sizes and offsets overflow 64 bits (at buffer #%zu)",
                                what, v->a);
    if (rc == -EINVAL)
        return raise_violation(what, v, b, n, names, NULL);
    return memdpy_raise_msg(memdpy_err.error, -rc, "%s: the planner failed (%s)", what,
                            strerror(-rc));
}

/* A problem read from Python: buffers and their names for messages. */
typedef struct problem {
    memd_plan_buffer *b;
    size_t n;
    PyObject *names;
    uint64_t *off; /* their offsets, when the call has them (freed with the problem) */
} problem;

static int problem_read(PyObject *seq, problem *p)
{
    p->off = NULL;
    return memdpy_plan_buffers(seq, &p->b, &p->n, &p->names);
}

static void problem_free(problem *p)
{
    PyMem_Free(p->b);
    PyMem_Free(p->off);
    Py_CLEAR(p->names);
}

/* offsets: a sequence of n ints, into a new array. */
static uint64_t *offsets_array(PyObject *seq, size_t n)
{
    PyObject *l = memdpy_list(seq, "offsets");
    if (!l)
        return NULL;
    uint64_t *o = NULL;
    if ((size_t)PyList_GET_SIZE(l) != n) {
        PyErr_Format(PyExc_ValueError, "%zd offsets for %zu buffers", PyList_GET_SIZE(l), n);
        goto out;
    }
    o = PyMem_Calloc(n ? n : 1, sizeof *o);
    if (!o) {
        PyErr_NoMemory();
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "offset #%zu", i);
        if (memdpy_u64(PyList_GET_ITEM(l, (Py_ssize_t)i), what, &o[i]) < 0) {
            PyMem_Free(o);
            o = NULL;
            break;
        }
    }
out:
    Py_DECREF(l);
    return o;
}

PyObject *memdpy_plan_solve(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"buffers", "budget_ms", "seed", "iterations", NULL};
    PyObject *seq, *budget_o = NULL, *seed_o = NULL, *iter_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO:plan", kwlist, &seq, &budget_o, &seed_o,
                                     &iter_o))
        return NULL;
    uint64_t budget_ms = 1000, seed = 0, iterations = 0;
    if ((budget_o && memdpy_u64(budget_o, "budget_ms", &budget_ms) < 0) ||
        (seed_o && memdpy_u64(seed_o, "seed", &seed) < 0) ||
        (iter_o != Py_None && memdpy_u64(iter_o, "iterations", &iterations) < 0))
        return NULL;
    if (budget_ms > MAX_BUDGET_MS) {
        PyErr_Format(PyExc_ValueError, "budget_ms is at most %u", MAX_BUDGET_MS);
        return NULL;
    }
    if (iter_o != Py_None && iterations == 0) {
        PyErr_SetString(PyExc_ValueError, "iterations must be at least 1 (or None)");
        return NULL;
    }
    problem pb;
    if (problem_read(seq, &pb) < 0)
        return NULL;
    const memd_plan_buffer *b = pb.b;
    size_t n = pb.n;
    PyObject *ret = NULL;
    uint64_t *off = pb.off = PyMem_Calloc(n ? n : 1, sizeof *off);
    if (!off) {
        PyErr_NoMemory();
        goto out;
    }
    /* iterations: no clock, a fixed improvement budget (deterministic for a seed);
     * else the clock stops improving after budget_ms (0: the first greedy plans only). */
    memd_plan_opts opts = {.seed = seed, .max_iterations = iterations,
                           .clock = iterations ? NULL : mono_ns,
                           .budget_ns = budget_ms * 1000000ull};
    memd_plan_result res;
    memd_plan_violation v;
    memset(&res, 0, sizeof res);
    memset(&v, 0, sizeof v);
    int rc;
    uint64_t t0 = mono_ns(NULL), arena = 0;
    Py_BEGIN_ALLOW_THREADS
    rc = memd_plan_solve(b, n, &opts, off, &res, &v);
    if (rc == 0) { /* independent re-check: never hand out a plan the validator rejects */
        int vr = memd_plan_validate(b, n, off, &v, &arena);
        rc = vr < 0 ? vr : vr == 1 || arena != res.arena ? -ENOTRECOVERABLE : 0;
    }
    Py_END_ALLOW_THREADS
    uint64_t elapsed = mono_ns(NULL) - t0;
    if (rc == -ENOTRECOVERABLE) {
        memdpy_raise_msg(memdpy_err.error, ENOTRECOVERABLE,
                         "plan: the planner produced an invalid plan (a bug in memd)");
        goto out;
    }
    if (rc < 0) {
        raise_engine("plan", rc, &v, b, n, pb.names);
        goto out;
    }
    ret = Py_BuildValue("(NKKsOKK)", memdpy_u64_list(off, n), (unsigned long long)res.arena,
                        (unsigned long long)res.lower_bound, res.strategy ? res.strategy : "",
                        res.optimal ? Py_True : Py_False, (unsigned long long)res.iterations,
                        (unsigned long long)elapsed);
out:
    problem_free(&pb);
    return ret;
}

PyObject *memdpy_plan_validate(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"buffers", "offsets", NULL};
    PyObject *seq, *offs;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:validate", kwlist, &seq, &offs))
        return NULL;
    problem pb;
    if (problem_read(seq, &pb) < 0)
        return NULL;
    PyObject *ret = NULL;
    uint64_t *off = pb.off = offsets_array(offs, pb.n);
    if (!off)
        goto out;
    memd_plan_violation v;
    memset(&v, 0, sizeof v);
    uint64_t arena = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = memd_plan_validate(pb.b, pb.n, off, &v, &arena);
    Py_END_ALLOW_THREADS
    if (rc < 0)
        PyErr_NoMemory();
    else if (rc == 1)
        raise_violation("invalid plan", &v, pb.b, pb.n, pb.names, off);
    else
        ret = PyLong_FromUnsignedLongLong(arena);
out:
    problem_free(&pb);
    return ret;
}

PyObject *memdpy_plan_lower_bound(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"buffers", NULL};
    PyObject *seq;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:lower_bound", kwlist, &seq))
        return NULL;
    problem pb;
    if (problem_read(seq, &pb) < 0)
        return NULL;
    memd_plan_violation v;
    memset(&v, 0, sizeof v);
    uint64_t lb = 0;
    int rc = memd_plan_check(pb.b, pb.n, &v);
    if (rc == 0)
        rc = memd_plan_lower_bound(pb.b, pb.n, &lb);
    PyObject *ret = rc < 0 ? raise_engine("lower_bound", rc, &v, pb.b, pb.n, pb.names)
                           : PyLong_FromUnsignedLongLong(lb);
    problem_free(&pb);
    return ret;
}

/* ---- through the daemon --------------------------------------------------------------- */

PyObject *memdpy_client_plan(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"buffers", "budget_ms", "seed", "offsets", NULL};
    PyObject *seq, *budget_o = NULL, *seed_o = NULL, *offs = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OOO:plan", kwlist, &seq, &budget_o, &seed_o,
                                     &offs))
        return NULL;
    uint32_t budget_ms = 0;
    uint64_t seed = 0;
    if ((budget_o && memdpy_u32(budget_o, "budget_ms", &budget_ms) < 0) ||
        (seed_o && memdpy_u64(seed_o, "seed", &seed) < 0))
        return NULL;
    memd_plan_buffer *b;
    size_t n;
    if (memdpy_plan_buffers(seq, &b, &n, NULL) < 0)
        return NULL;
    PyObject *ret = NULL;
    uint64_t *pre = NULL;
    memclient_plan_buffer *pb = PyMem_Calloc(n ? n : 1, sizeof *pb);
    uint64_t *off = PyMem_Calloc(n ? n : 1, sizeof *off);
    if (!pb || !off) {
        PyErr_NoMemory();
        goto out;
    }
    memclient_plan_opts opts = {.budget_ms = budget_ms, .seed = seed};
    if (offs != Py_None) {
        if (!(pre = offsets_array(offs, n)))
            goto out;
        opts.flags |= MEMCLIENT_PLAN_PRECOMPUTED;
    }
    for (size_t i = 0; i < n; i++)
        pb[i] = (memclient_plan_buffer){.lower = b[i].lower, .upper = b[i].upper,
                                        .size = b[i].size, .alignment = b[i].align,
                                        .offset = pre ? pre[i] : b[i].offset,
                                        .pinned = b[i].pinned};
    memclient_plan_info info;
    memset(&info, 0, sizeof info);
    const char *what = pre ? "plan (validate)" : "plan";
    int r;
    MEMDPY_CALL(self, r, memclient_plan_submit(c, pb, n, &opts, &info, off));
    if (r < 0)
        goto out;
    char id[24];
    snprintf(id, sizeof id, "%016llx", (unsigned long long)info.plan_id);
    ret = Py_BuildValue("(NKKsOKKsOO)", memdpy_u64_list(off, n), (unsigned long long)info.arena,
                        (unsigned long long)info.lower_bound, info.strategy,
                        info.optimal ? Py_True : Py_False, (unsigned long long)info.iterations,
                        (unsigned long long)info.plan_us * 1000ull, id,
                        info.cached ? Py_True : Py_False,
                        info.precomputed ? Py_True : Py_False);
out:
    PyMem_Free(pb);
    PyMem_Free(off);
    PyMem_Free(pre);
    PyMem_Free(b);
    return ret;
}
