/* libmemclient: deriving tensor lifetimes from a model graph (memclient_model_lifetimes).
 *
 * Op i runs at time i. An activation lives from the op that writes it to the last op
 * that reads it: [producer, last_use + 1), or [producer, producer + 1) if nothing reads
 * it. An in-place op (reshape, view) writes no new storage: each output is an alias of
 * the tensor holding inputs[0]'s data, and the source lives until its aliases' last
 * use too; an alias that is a graph output keeps its source to the end of the run.
 * Weights and placeholders (inputs, outputs, in-outs) have their own buffers for the
 * whole run. Pure: no I/O, no connection. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memclient_internal.h"
#include "memd/protocol.h"

#define NONE MEMCLIENT_NO_TENSOR

static int fail(memclient_model_error *err, size_t op, size_t tensor, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(memclient_model_error *err, size_t op, size_t tensor, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (err) {
        err->status = -EINVAL;
        err->op = op;
        err->tensor = tensor;
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return memclient_fail(-EINVAL, "%s", msg);
}

/* "'name'" or "#index", for messages. */
static const char *tname(const memclient_model_desc *d, size_t i, char *buf, size_t len)
{
    if (i < d->ntensors && d->tensors[i].name && d->tensors[i].name[0])
        snprintf(buf, len, "'%s'", d->tensors[i].name);
    else
        snprintf(buf, len, "#%zu", i);
    return buf;
}

static const char *oname(const memclient_model_desc *d, size_t k, char *buf, size_t len)
{
    if (d->ops[k].name && d->ops[k].name[0])
        snprintf(buf, len, "op '%s' (#%zu)", d->ops[k].name, k);
    else
        snprintf(buf, len, "op #%zu", k);
    return buf;
}

/* Every tensor op k lists as its what ("input", "output") exists: 0, else fail()'s. */
static int check_refs(const memclient_model_desc *d, size_t k, const uint32_t *ids, uint32_t nids,
                      const char *what, memclient_model_error *err)
{
    char a[96];
    for (uint32_t j = 0; j < nids; j++)
        if (ids[j] >= d->ntensors)
            return fail(err, k, SIZE_MAX, "%s: %s %u is tensor #%u; there are %zu",
                        oname(d, k, a, sizeof a), what, j, ids[j], d->ntensors);
    return 0;
}

static int tensor_size(const memclient_tensor_desc *t, uint64_t *out)
{
    if (t->dtype == MEMD_DTYPE_NONE) {
        *out = t->bytes;
        return 0;
    }
    static const uint8_t elem[MEMD_DTYPE_COUNT] = {0, 1, 1, 2, 2, 2, 2, 4, 4, 4, 8, 8, 8};
    if ((unsigned)t->dtype >= MEMD_DTYPE_COUNT || t->ndim == 0 || t->ndim > MEMD_MAX_DIMS)
        return -EINVAL;
    uint64_t n = elem[t->dtype];
    for (uint32_t i = 0; i < t->ndim; i++) {
        if (t->shape[i] == 0)
            return -EINVAL;
        if (n > UINT64_MAX / t->shape[i])
            return -EOVERFLOW;
        n *= t->shape[i];
    }
    *out = n;
    return 0;
}

static bool is_placeholder(memclient_tensor_role r)
{
    return r == MEMCLIENT_TENSOR_INPUT || r == MEMCLIENT_TENSOR_OUTPUT ||
           r == MEMCLIENT_TENSOR_INOUT;
}

int memclient_model_lifetimes(const memclient_model_desc *d, memclient_tensor_life *out,
                              memclient_model_error *err)
{
    char a[96], b[96];
    if (err)
        *err = (memclient_model_error){.op = SIZE_MAX, .tensor = SIZE_MAX};
    if (!d || !out || (d->ntensors && !d->tensors) || (d->nops && !d->ops))
        return fail(err, SIZE_MAX, SIZE_MAX, "memclient_model_lifetimes: NULL argument");
    size_t n = d->ntensors;
    if (n == 0 || n > MEMD_MODEL_MAX_TENSORS)
        return fail(err, SIZE_MAX, SIZE_MAX, "a model has 1..%u tensors, not %zu",
                    MEMD_MODEL_MAX_TENSORS, n);
    if (d->nops >= NONE)
        return fail(err, SIZE_MAX, SIZE_MAX, "too many ops (%zu)", d->nops);
    uint64_t end = d->nops ? d->nops : 1;
    for (size_t i = 0; i < n; i++) {
        const memclient_tensor_desc *t = &d->tensors[i];
        memclient_tensor_life *l = &out[i];
        *l = (memclient_tensor_life){.lower = 0, .upper = end, .alias_of = NONE,
                                     .producer = NONE, .last_use = NONE};
        if ((unsigned)t->role > MEMCLIENT_TENSOR_INOUT)
            return fail(err, SIZE_MAX, i, "tensor %s: role %d is not one a model declares",
                        tname(d, i, a, sizeof a), (int)t->role);
        int r = tensor_size(t, &l->size);
        if (r < 0 || l->size == 0)
            return fail(err, SIZE_MAX, i, "tensor %s: %s", tname(d, i, a, sizeof a),
                        r == -EOVERFLOW ? "size overflows 64 bits"
                        : r < 0         ? "bad dtype or shape (1..4 dimensions, none 0)"
                                        : "size 0");
        l->alignment = t->alignment ? t->alignment : MEMCLIENT_MODEL_DEFAULT_ALIGN;
        if (l->alignment & (l->alignment - 1))
            return fail(err, SIZE_MAX, i, "tensor %s: alignment %llu is not a power of two",
                        tname(d, i, a, sizeof a), (unsigned long long)t->alignment);
    }
    for (size_t k = 0; k < d->nops; k++) {
        const memclient_op_desc *op = &d->ops[k];
        if ((op->ninputs && !op->inputs) || (op->noutputs && !op->outputs))
            return fail(err, k, SIZE_MAX, "%s: NULL tensor list", oname(d, k, a, sizeof a));
        if (op->inplace && op->ninputs == 0)
            return fail(err, k, SIZE_MAX, "%s is in place but reads no tensor",
                        oname(d, k, a, sizeof a));
        int rc;
        if ((rc = check_refs(d, k, op->inputs, op->ninputs, "input", err)) < 0 ||
            (rc = check_refs(d, k, op->outputs, op->noutputs, "output", err)) < 0)
            return rc;
        for (uint32_t j = 0; j < op->ninputs; j++) {
            uint32_t t = op->inputs[j];
            memclient_tensor_role role = d->tensors[t].role;
            bool written_first = role == MEMCLIENT_TENSOR_ACTIVATION ||
                                 role == MEMCLIENT_TENSOR_OUTPUT;
            if (written_first && out[t].producer == NONE)
                return fail(err, k, t, "%s reads tensor %s before any op writes it",
                            oname(d, k, a, sizeof a), tname(d, t, b, sizeof b));
            out[t].last_use = (uint32_t)k;
        }
        for (uint32_t j = 0; j < op->noutputs; j++) {
            uint32_t t = op->outputs[j];
            memclient_tensor_role role = d->tensors[t].role;
            if (role == MEMCLIENT_TENSOR_WEIGHT || role == MEMCLIENT_TENSOR_INPUT)
                return fail(err, k, t, "%s writes tensor %s, a graph %s",
                            oname(d, k, a, sizeof a), tname(d, t, b, sizeof b),
                            role == MEMCLIENT_TENSOR_WEIGHT ? "weight" : "input");
            if (out[t].producer != NONE && role != MEMCLIENT_TENSOR_INOUT)
                return fail(err, k, t, "%s writes tensor %s, already written by op #%u",
                            oname(d, k, a, sizeof a), tname(d, t, b, sizeof b),
                            out[t].producer);
            if (out[t].producer == NONE)
                out[t].producer = (uint32_t)k;
            if (!op->inplace)
                continue;
            uint32_t src = op->inputs[0];
            uint32_t root = out[src].alias_of != NONE ? out[src].alias_of : src;
            if (t == root)
                continue; /* an in-out updated in place: no new name for the storage */
            if (role != MEMCLIENT_TENSOR_ACTIVATION && role != MEMCLIENT_TENSOR_OUTPUT)
                return fail(err, k, t, "%s: in-place output %s must be an activation or a "
                            "graph output", oname(d, k, a, sizeof a), tname(d, t, b, sizeof b));
            if (out[t].size > out[root].size)
                return fail(err, k, t, "%s: in-place output %s (%llu bytes) is larger than "
                            "its source %s (%llu bytes)", oname(d, k, a, sizeof a),
                            tname(d, t, b, sizeof b), (unsigned long long)out[t].size,
                            tname(d, root, a, sizeof a), (unsigned long long)out[root].size);
            out[t].alias_of = root;
        }
    }
    /* Storage lifetimes: activations that hold data, extended by their aliases. */
    for (size_t i = 0; i < n; i++) {
        memclient_tensor_role role = d->tensors[i].role;
        memclient_tensor_life *l = &out[i];
        if (l->alias_of != NONE)
            continue;
        if (role == MEMCLIENT_TENSOR_OUTPUT && l->producer == NONE)
            return fail(err, SIZE_MAX, i, "graph output %s is never written",
                        tname(d, i, a, sizeof a));
        if (role != MEMCLIENT_TENSOR_ACTIVATION)
            continue;
        if (l->producer == NONE)
            return fail(err, SIZE_MAX, i, "activation %s is never written%s",
                        tname(d, i, a, sizeof a),
                        l->last_use == NONE ? " nor read (declare it where it is used)" : "");
        l->lower = l->producer;
        l->upper = (uint64_t)(l->last_use != NONE ? l->last_use : l->producer) + 1;
    }
    for (size_t i = 0; i < n; i++) {
        const memclient_tensor_life *l = &out[i];
        if (l->alias_of == NONE)
            continue;
        memclient_tensor_life *r = &out[l->alias_of];
        if (d->tensors[l->alias_of].role != MEMCLIENT_TENSOR_ACTIVATION)
            continue; /* a placeholder or weight lives for the whole run anyway */
        uint64_t u = (uint64_t)(l->last_use != NONE ? l->last_use : l->producer) + 1;
        if (d->tensors[i].role == MEMCLIENT_TENSOR_OUTPUT)
            u = end;
        if (u > r->upper)
            r->upper = u;
    }
    for (size_t i = 0; i < n; i++) {
        memclient_tensor_life *l = &out[i];
        if (l->alias_of != NONE) {
            l->lower = out[l->alias_of].lower;
            l->upper = out[l->alias_of].upper;
        } else if (d->tensors[i].role == MEMCLIENT_TENSOR_WEIGHT ||
                   is_placeholder(d->tensors[i].role)) {
            l->lower = 0;
            l->upper = end;
        }
    }
    return 0;
}
