/* memd._memd: model graphs. A graph comes from Python as
 *   tensors: [(name, role, bytes, alignment), ...]   role 0..4 (memclient_tensor_role)
 *   ops:     [(name, inputs, outputs, inplace), ...]  inputs/outputs: tensor indices
 * and becomes a memclient_model_desc: libmemclient derives the lifetimes
 * (memclient_model_lifetimes) and loads it; memd-parsers reads the YAML format. */
#include <errno.h>
#include <string.h>

#include "memdpy.h"
#include "model_yaml.h"

typedef struct graph {
    PyObject *tensors;          /* lists, kept alive: names point into their strs */
    PyObject *ops;
    memclient_tensor_desc *t;
    memclient_op_desc *o;
    uint32_t *idx;              /* every op's inputs and outputs */
    memclient_model_desc d;
} graph;

static void graph_free(graph *g)
{
    Py_CLEAR(g->tensors);
    Py_CLEAR(g->ops);
    PyMem_Free(g->t);
    PyMem_Free(g->o);
    PyMem_Free(g->idx);
    memset(g, 0, sizeof *g);
}

/* A tuple or list of exactly n items, as a borrowed fast sequence item array. */
static PyObject *const *items(PyObject *o, Py_ssize_t n, const char *what, Py_ssize_t i)
{
    if ((!PyTuple_Check(o) && !PyList_Check(o)) || PySequence_Fast_GET_SIZE(o) != n) {
        PyErr_Format(PyExc_TypeError, "%s #%zd must be a tuple of %zd items, not %R", what, i, n, o);
        return NULL;
    }
    return (PyObject *const *)PySequence_Fast_ITEMS(o);
}

/* An op's tensor list into g->idx[*pos..). */
static int index_list(graph *g, PyObject *seq, Py_ssize_t k, const char *what, size_t *pos,
                      size_t cap, const uint32_t **out, uint32_t *count)
{
    char buf[64];
    snprintf(buf, sizeof buf, "op #%zd %s", k, what);
    PyObject *l = memdpy_list(seq, buf);
    if (!l)
        return -1;
    Py_ssize_t n = PyList_GET_SIZE(l);
    if (*pos + (size_t)n > cap) {
        PyErr_SetString(PyExc_RuntimeError, "op lists changed while read");
        Py_DECREF(l);
        return -1;
    }
    *out = g->idx + *pos;
    *count = (uint32_t)n;
    for (Py_ssize_t j = 0; j < n; j++) {
        snprintf(buf, sizeof buf, "op #%zd %s[%zd]", k, what, j);
        if (memdpy_u32(PyList_GET_ITEM(l, j), buf, &g->idx[*pos + (size_t)j]) < 0) {
            Py_DECREF(l);
            return -1;
        }
    }
    *pos += (size_t)n;
    Py_DECREF(l);
    return 0;
}

static int graph_build(graph *g, PyObject *tensors, PyObject *ops)
{
    memset(g, 0, sizeof *g);
    if (!(g->tensors = memdpy_list(tensors, "tensors")) || !(g->ops = memdpy_list(ops, "ops")))
        goto fail;
    Py_ssize_t nt = PyList_GET_SIZE(g->tensors), no = PyList_GET_SIZE(g->ops);
    if (nt == 0) {
        memdpy_raise_msg(memdpy_err.model, EINVAL, "a model has at least one tensor");
        goto fail;
    }
    g->t = PyMem_Calloc((size_t)nt, sizeof *g->t);
    g->o = PyMem_Calloc(no ? (size_t)no : 1, sizeof *g->o);
    if (!g->t || !g->o) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < nt; i++) {
        PyObject *const *v = items(PyList_GET_ITEM(g->tensors, i), 4, "tensor", i);
        if (!v)
            goto fail;
        memclient_tensor_desc *t = &g->t[i];
        uint32_t role;
        char what[48];
        snprintf(what, sizeof what, "tensor #%zd", i);
        if (memdpy_str(v[0], what, true, &t->name) < 0 || memdpy_u32(v[1], what, &role) < 0 ||
            memdpy_u64(v[2], what, &t->bytes) < 0 || memdpy_align(v[3], what, &t->alignment) < 0)
            goto fail;
        if (role > MEMCLIENT_TENSOR_INOUT) {
            PyErr_Format(PyExc_ValueError, "tensor #%zd: role %u is not one a model declares", i,
                         role);
            goto fail;
        }
        t->role = (memclient_tensor_role)role;
        t->dtype = MEMD_DTYPE_NONE;
    }
    /* Count the index slots first (each op's lists are converted once more below). */
    size_t total = 0;
    for (Py_ssize_t k = 0; k < no; k++) {
        PyObject *const *v = items(PyList_GET_ITEM(g->ops, k), 4, "op", k);
        if (!v)
            goto fail;
        for (int j = 1; j <= 2; j++) {
            Py_ssize_t len = PyObject_Length(v[j]);
            if (len < 0 || PyUnicode_Check(v[j])) {
                PyErr_Clear();
                PyErr_Format(PyExc_TypeError, "op #%zd: %s must be a list of tensor indices", k,
                             j == 1 ? "inputs" : "outputs");
                goto fail;
            }
            total += (size_t)len;
        }
    }
    g->idx = PyMem_Calloc(total ? total : 1, sizeof *g->idx);
    if (!g->idx) {
        PyErr_NoMemory();
        goto fail;
    }
    size_t pos = 0;
    for (Py_ssize_t k = 0; k < no; k++) {
        PyObject *const *v = (PyObject *const *)PySequence_Fast_ITEMS(PyList_GET_ITEM(g->ops, k));
        memclient_op_desc *op = &g->o[k];
        char what[48];
        snprintf(what, sizeof what, "op #%zd name", k);
        if (memdpy_str(v[0], what, true, &op->name) < 0 ||
            index_list(g, v[1], k, "inputs", &pos, total, &op->inputs, &op->ninputs) < 0 ||
            index_list(g, v[2], k, "outputs", &pos, total, &op->outputs, &op->noutputs) < 0)
            goto fail;
        int inplace = PyObject_IsTrue(v[3]);
        if (inplace < 0)
            goto fail;
        op->inplace = inplace;
    }
    g->d.tensors = g->t;
    g->d.ntensors = (size_t)nt;
    g->d.ops = g->o;
    g->d.nops = (size_t)no;
    return 0;
fail:
    graph_free(g);
    return -1;
}

static PyObject *opt_index(uint32_t v)
{
    return v == MEMCLIENT_NO_TENSOR ? Py_NewRef(Py_None) : PyLong_FromUnsignedLong(v);
}

static PyObject *life_list(const memclient_tensor_life *l, size_t n)
{
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *t = Py_BuildValue("(KKKKNNN)", (unsigned long long)l[i].size,
                                    (unsigned long long)l[i].alignment,
                                    (unsigned long long)l[i].lower,
                                    (unsigned long long)l[i].upper, opt_index(l[i].alias_of),
                                    opt_index(l[i].producer), opt_index(l[i].last_use));
        if (!t)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, (Py_ssize_t)i, t);
    }
    return out;
}

static PyObject *raise_model(const memclient_model_error *e)
{
    PyObject *exc = PyObject_CallFunction(memdpy_err.model, "s", e->message);
    if (!exc)
        return NULL;
    PyObject *op = e->op == SIZE_MAX ? Py_NewRef(Py_None) : PyLong_FromSize_t(e->op);
    PyObject *t = e->tensor == SIZE_MAX ? Py_NewRef(Py_None) : PyLong_FromSize_t(e->tensor);
    PyObject *msg = PyUnicode_FromString(e->message);
    PyObject *errnum = PyLong_FromLong(-e->status);
    if (op && t && msg && errnum && PyObject_SetAttrString(exc, "op", op) == 0 &&
        PyObject_SetAttrString(exc, "tensor", t) == 0 &&
        PyObject_SetAttrString(exc, "message", msg) == 0 &&
        PyObject_SetAttrString(exc, "errno", errnum) == 0)
        PyErr_SetObject(memdpy_err.model, exc);
    Py_XDECREF(op);
    Py_XDECREF(t);
    Py_XDECREF(msg);
    Py_XDECREF(errnum);
    Py_DECREF(exc);
    return NULL;
}

PyObject *memdpy_model_lifetimes(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"tensors", "ops", NULL};
    PyObject *tensors, *ops;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:model_lifetimes", kwlist, &tensors, &ops))
        return NULL;
    graph g;
    if (graph_build(&g, tensors, ops) < 0)
        return NULL;
    PyObject *ret = NULL;
    memclient_tensor_life *life = PyMem_Calloc(g.d.ntensors, sizeof *life);
    if (!life) {
        PyErr_NoMemory();
    } else {
        memclient_model_error e;
        int r;
        Py_BEGIN_ALLOW_THREADS
        r = memclient_model_lifetimes(&g.d, life, &e);
        Py_END_ALLOW_THREADS
        ret = r < 0 ? raise_model(&e) : life_list(life, g.d.ntensors);
    }
    PyMem_Free(life);
    graph_free(&g);
    return ret;
}

/* ---- YAML ------------------------------------------------------------------------------ */

static PyObject *yaml_dict(const memd_model_yaml *y)
{
    const memclient_model_desc *d = &y->desc;
    PyObject *tensors = PyList_New((Py_ssize_t)d->ntensors);
    PyObject *ops = PyList_New((Py_ssize_t)d->nops);
    PyObject *ret = NULL;
    if (!tensors || !ops)
        goto out;
    for (size_t i = 0; i < d->ntensors; i++) {
        const memclient_tensor_desc *t = &d->tensors[i];
        PyObject *shape;
        if (t->dtype == MEMD_DTYPE_NONE) {
            shape = Py_NewRef(Py_None);
        } else {
            shape = PyTuple_New(t->ndim);
            for (uint32_t k = 0; shape && k < t->ndim; k++) {
                PyObject *x = PyLong_FromUnsignedLongLong(t->shape[k]);
                if (!x)
                    Py_CLEAR(shape);
                else
                    PyTuple_SET_ITEM(shape, k, x);
            }
        }
        PyObject *item = shape ? Py_BuildValue("(siKKzN)", t->name, (int)t->role,
                                               (unsigned long long)y->life[i].size,
                                               (unsigned long long)y->life[i].alignment,
                                               t->dtype == MEMD_DTYPE_NONE
                                                   ? NULL
                                                   : memclient_dtype_name(t->dtype),
                                               shape)
                               : NULL;
        if (!item)
            goto out;
        PyList_SET_ITEM(tensors, (Py_ssize_t)i, item);
    }
    for (size_t k = 0; k < d->nops; k++) {
        const memclient_op_desc *o = &d->ops[k];
        PyObject *in = memdpy_u32_list(o->inputs, o->ninputs);
        PyObject *outl = memdpy_u32_list(o->outputs, o->noutputs);
        PyObject *item = in && outl ? Py_BuildValue("(zNNO)", o->name, in, outl,
                                                    o->inplace ? Py_True : Py_False)
                                    : NULL;
        if (!item) {
            if (!in || !outl) {
                Py_XDECREF(in);
                Py_XDECREF(outl);
            }
            goto out;
        }
        PyList_SET_ITEM(ops, (Py_ssize_t)k, item);
    }
    PyObject *dev = y->has_device ? PyLong_FromUnsignedLong(d->device) : Py_NewRef(Py_None);
    /* page_size: None for the device's default, 0 for one page (as load_model takes it). */
    PyObject *page = d->page_size == 0 ? Py_NewRef(Py_None)
                     : PyLong_FromUnsignedLongLong(d->page_size == MEMCLIENT_MODEL_ONE_PAGE
                                                   ? 0 : d->page_size);
    ret = Py_BuildValue("{s:s,s:N,s:s,s:K,s:O,s:O,s:N,s:N}", "name", d->name, "device", dev,
                        "scope", memclient_scope_name(d->scope), "code",
                        (unsigned long long)d->code_bytes, "tensors", tensors, "ops", ops,
                        "lifetimes", life_list(y->life, d->ntensors), "page_size", page);
out:
    Py_XDECREF(tensors);
    Py_XDECREF(ops);
    return ret;
}

static PyObject *yaml_result(int r, memd_model_yaml *y, const char *err)
{
    if (r == -ENOMEM)
        return PyErr_NoMemory();
    if (r < 0) {
        PyObject *exc = r == -EINVAL ? memdpy_err.model
                        : r == -ENOENT ? PyExc_FileNotFoundError
                        : r == -EACCES || r == -EPERM ? PyExc_PermissionError
                        : r == -EISDIR ? PyExc_IsADirectoryError
                                       : PyExc_OSError;
        if (exc == memdpy_err.model)
            return memdpy_raise_msg(exc, EINVAL, "%s", err);
        PyObject *e = PyObject_CallFunction(exc, "is", -r, err);
        if (e) {
            PyErr_SetObject(exc, e);
            Py_DECREF(e);
        }
        return NULL;
    }
    PyObject *ret = yaml_dict(y);
    memd_model_yaml_free(y);
    return ret;
}

PyObject *memdpy_model_read_yaml(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"path", NULL};
    PyObject *path;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&:model_read_yaml", kwlist,
                                     PyUnicode_FSConverter, &path))
        return NULL;
    memd_model_yaml y;
    memd_error e = {0};
    char err[512];
    int r;
    Py_BEGIN_ALLOW_THREADS
    r = memd_model_yaml_read(PyBytes_AS_STRING(path), &y, &e);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    memd_error_format(&e, err, sizeof err);
    return yaml_result(r, &y, err);
}

PyObject *memdpy_model_parse_yaml(PyObject *mod, PyObject *args, PyObject *kw)
{
    (void)mod;
    static char *kwlist[] = {"text", "name", NULL};
    const char *text, *name = "<string>";
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|s:model_parse_yaml", kwlist, &text, &len,
                                     &name))
        return NULL;
    memd_model_yaml y;
    memd_error e = {0};
    char err[512];
    int r = memd_model_yaml_parse(name, text, (size_t)len, &y, &e);
    memd_error_format(&e, err, sizeof err);
    return yaml_result(r, &y, err);
}

/* ---- the daemon ------------------------------------------------------------------------ */

static const char *role_name(memclient_tensor_role r)
{
    return memd_model_yaml_role_name(r);
}

static PyObject *model_info_dict(const memclient_model_info *mi)
{
    PyObject *d = memdpy_fields_dict(mi, memdpy_fields_model_info);
    if (!d)
        return NULL;
    /* Not in the table: the plan id reads as the dumps print it, and plan_cached and the
     * page size are the load's, not MODEL_INFO's. */
    char id[24];
    snprintf(id, sizeof id, "%016llx", (unsigned long long)mi->plan_id);
    PyObject *v = PyUnicode_FromString(id);
    PyObject *page = PyLong_FromUnsignedLongLong(mi->page_size);
    if (!v || !page || PyDict_SetItemString(d, "plan_id", v) < 0 ||
        PyDict_SetItemString(d, "plan_cached", mi->plan_cached ? Py_True : Py_False) < 0 ||
        PyDict_SetItemString(d, "page_size", page) < 0)
        Py_CLEAR(d);
    Py_XDECREF(v);
    Py_XDECREF(page);
    return d;
}

PyObject *memdpy_client_model_load(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"name", "device", "scope", "code_bytes", "tensors", "ops",
                             "offsets", "budget_ms", "seed", "page_size", NULL};
    PyObject *name_o, *dev_o, *scope_o, *code_o, *tensors, *ops, *offs = Py_None;
    PyObject *budget_o = NULL, *seed_o = NULL, *page_o = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOO|OOOO:_model_load", kwlist, &name_o,
                                     &dev_o, &scope_o, &code_o, &tensors, &ops, &offs, &budget_o,
                                     &seed_o, &page_o))
        return NULL;
    graph g;
    if (graph_build(&g, tensors, ops) < 0)
        return NULL;
    PyObject *ret = NULL;
    uint64_t *pre = NULL;
    memclient_tensor_info *ti = NULL;
    memclient_plan_opts opts = {0};
    if (memdpy_str(name_o, "model name", false, &g.d.name) < 0 ||
        memdpy_u32(dev_o, "device", &g.d.device) < 0 || memdpy_scope(scope_o, &g.d.scope) < 0 ||
        memdpy_u64(code_o, "code_bytes", &g.d.code_bytes) < 0 ||
        (budget_o && memdpy_u32(budget_o, "budget_ms", &opts.budget_ms) < 0) ||
        (seed_o && memdpy_u64(seed_o, "seed", &opts.seed) < 0) ||
        (page_o != Py_None && memdpy_u64(page_o, "page_size", &g.d.page_size) < 0))
        goto out;
    /* None: the device's default; 0: one page. */
    if (page_o != Py_None && g.d.page_size == 0)
        g.d.page_size = MEMCLIENT_MODEL_ONE_PAGE;
    if (offs != Py_None) {
        PyObject *l = memdpy_list(offs, "offsets");
        if (!l)
            goto out;
        if ((size_t)PyList_GET_SIZE(l) != g.d.ntensors) {
            PyErr_Format(PyExc_ValueError, "offsets: one per tensor (%zu), not %zd", g.d.ntensors,
                         PyList_GET_SIZE(l));
            Py_DECREF(l);
            goto out;
        }
        pre = PyMem_Calloc(g.d.ntensors, sizeof *pre);
        for (size_t i = 0; pre && i < g.d.ntensors; i++) {
            PyObject *x = PyList_GET_ITEM(l, (Py_ssize_t)i);
            if (x != Py_None && memdpy_u64(x, "offset", &pre[i]) < 0) {
                Py_DECREF(l);
                goto out;
            }
        }
        Py_DECREF(l);
        if (!pre) {
            PyErr_NoMemory();
            goto out;
        }
        g.d.offsets = pre;
    }
    ti = PyMem_Calloc(g.d.ntensors, sizeof *ti);
    if (!ti) {
        PyErr_NoMemory();
        goto out;
    }
    memclient_model_info mi;
    memset(&mi, 0, sizeof mi);
    const char *what = "load_model";
    int r;
    MEMDPY_CALL(self, r, memclient_model_load(c, &g.d, &opts, &mi, ti));
    if (r < 0)
        goto out;
    PyObject *tl = PyList_New((Py_ssize_t)g.d.ntensors);
    for (size_t i = 0; tl && i < g.d.ntensors; i++) {
        PyObject *t = Py_BuildValue("(sNKK)", role_name(ti[i].role), opt_index(ti[i].alias_of),
                                    (unsigned long long)ti[i].size,
                                    (unsigned long long)ti[i].value);
        if (!t)
            Py_CLEAR(tl);
        else
            PyList_SET_ITEM(tl, (Py_ssize_t)i, t);
    }
    if (tl)
        ret = Py_BuildValue("(NN)", model_info_dict(&mi), tl);
out:
    PyMem_Free(ti);
    PyMem_Free(pre);
    graph_free(&g);
    return ret;
}

PyObject *memdpy_client_model_unload(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"model_id", "force", NULL};
    PyObject *id_o;
    int force = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p:_model_unload", kwlist, &id_o, &force))
        return NULL;
    uint64_t id;
    if (memdpy_u64(id_o, "model_id", &id) < 0)
        return NULL;
    const char *what = "unload";
    int r;
    MEMDPY_CALL(self, r, memclient_model_unload(c, id, force ? MEMCLIENT_MODEL_FORCE : 0));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *memdpy_client_model_set_ready(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"model_id", NULL};
    PyObject *id_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O:_model_set_ready", kwlist, &id_o))
        return NULL;
    uint64_t id;
    if (memdpy_u64(id_o, "model_id", &id) < 0)
        return NULL;
    const char *what = "set_ready";
    int r;
    MEMDPY_CALL(self, r, memclient_model_set_ready(c, id));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *memdpy_client_model_wait(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"model_id", "timeout", NULL};
    PyObject *id_o, *timeout;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:_model_wait", kwlist, &id_o, &timeout))
        return NULL;
    uint64_t id;
    int timeout_ms;
    if (memdpy_u64(id_o, "model_id", &id) < 0 ||
        memdpy_timeout_ms(timeout, "timeout", &timeout_ms) < 0)
        return NULL;
    memclient_model_info mi;
    memset(&mi, 0, sizeof mi);
    const char *what = "load_model: waiting for the model to be ready";
    int r;
    MEMDPY_CALL(self, r, memclient_model_wait(c, id, timeout_ms, &mi, NULL, 0));
    if (r < 0)
        return NULL;
    return PyBool_FromLong(mi.created);
}

PyObject *memdpy_client_instance_create(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"model_id", "ntensors", NULL};
    PyObject *id_o, *n_o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO:_instance_create", kwlist, &id_o, &n_o))
        return NULL;
    uint64_t id;
    uint32_t cap;
    if (memdpy_u64(id_o, "model_id", &id) < 0 || memdpy_u32(n_o, "ntensors", &cap) < 0)
        return NULL;
    memclient_tensor_addr *addrs = PyMem_Calloc(cap ? cap : 1, sizeof *addrs);
    if (!addrs)
        return PyErr_NoMemory();
    memclient_instance inst;
    memset(&inst, 0, sizeof inst);
    const char *what = "create_instance";
    int r;
    MEMDPY_CALL(self, r, memclient_instance_create(c, id, &inst, addrs, cap));
    PyObject *ret = NULL;
    if (r >= 0 && (uint32_t)r != cap) {
        memdpy_raise_msg(memdpy_err.error, EPROTO,
                         "create_instance: the model has %d tensors, %u expected", r, cap);
        r = -EPROTO;
    }
    if (r >= 0) {
        PyObject *l = PyList_New(r);
        for (int i = 0; l && i < r; i++) {
            PyObject *t = Py_BuildValue("(KK)", (unsigned long long)addrs[i].address,
                                        (unsigned long long)addrs[i].handle);
            if (!t)
                Py_CLEAR(l);
            else
                PyList_SET_ITEM(l, i, t);
        }
        PyObject *d = l ? memdpy_fields_dict(&inst, memdpy_fields_instance) : NULL;
        if (d)
            ret = Py_BuildValue("(NN)", d, l);
        else
            Py_XDECREF(l);
    }
    PyMem_Free(addrs);
    return ret;
}

PyObject *memdpy_client_instance_release(PyObject *op, PyObject *args, PyObject *kw)
{
    memdpy_client *self = (memdpy_client *)op;
    static char *kwlist[] = {"instance_id", "free", NULL};
    PyObject *id_o;
    int free_it = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p:_instance_release", kwlist, &id_o, &free_it))
        return NULL;
    uint64_t id;
    if (memdpy_u64(id_o, "instance_id", &id) < 0)
        return NULL;
    const char *what = "release";
    int r;
    MEMDPY_CALL(self, r,
                memclient_instance_release(c, id, free_it ? MEMCLIENT_INSTANCE_FREE : 0));
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}
