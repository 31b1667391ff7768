/* memd daemon — INSTANCE_CREATE, INSTANCE_RELEASE. An instance is one inference in
 * flight: an internal arena sized by the model's plan plus one buffer per placeholder
 * (inputs, outputs, in-outs), all held by the creating session. Several may exist at
 * once (pipelining). Released instances stay allocated on the session's free list for
 * that model and are handed out again first (same addresses, nothing allocated), unless
 * released with MEMD_INST_F_FREE; unloading the model or closing the session frees them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "model_internal.h"
#include "wire.h"

static int alloc_one(memd_state *st, memd_session *s, const memd_model *m, memd_class cls,
                     uint64_t bytes, uint64_t align, memd_alloc **a, memd_error *err)
{
    memd_alloc_request w = {.device = st->devs[m->dev].spec->id, .cls = (uint8_t)cls,
                            .scope = m->scope, .bytes = bytes, .page_size = m->page_size,
                            .alignment = align > 1 ? align : 0, .name = ""};
    return memd_alloc_create(st, s, &w, a, err);
}

/* Allocates a new instance's buffers: all or nothing. */
static int instance_new(memd_state *st, memd_models *ms, memd_model_use *u, memd_instance **out,
                        memd_error *err)
{
    memd_model *m = u->m;
    memd_session *s = u->s;
    memd_instance *in = memd_models_instance_new(u);
    if (!in)
        return memd_error_set(err, -ENOMEM, "daemon out of memory for an instance");
    uint64_t *ph_h = in->ph_handle, *ph_a = in->ph_address;
    memd_alloc *a;
    int rc = 0;
    uint32_t done = 0;
    if (m->plan->arena) {
        rc = alloc_one(st, s, m, MEMD_CLASS_INTERNAL, m->plan->arena, m->arena_align, &a, err);
        if (rc == 0) {
            in->arena_handle = a->handle;
            in->arena_address = a->pl.address;
            in->arena_bytes = m->plan->arena;
        }
    }
    for (; rc == 0 && done < m->nph; done++) {
        const memd_model_tensor *t = &m->t[m->ph[done]];
        rc = alloc_one(st, s, m, MEMD_CLASS_PLACEHOLDER, t->size, t->align, &a, err);
        if (rc == 0) {
            ph_h[done] = a->handle;
            ph_a[done] = a->pl.address;
            in->ph_bytes += t->size;
        }
    }
    if (rc == 0) {
        rc = memd_models_manage(ms, in->arena_handle);
        for (uint32_t i = 0; rc == 0 && i < m->nph; i++)
            if ((rc = memd_models_manage(ms, ph_h[i])) < 0) {
                while (i-- > 0)
                    memd_models_unmanage(ms, ph_h[i]);
                memd_models_unmanage(ms, in->arena_handle);
            }
        if (rc == 0) {
            in->id = ms->next_instance_id++;
            if ((rc = memd_map_put(&ms->instances, in->id, (uint64_t)(uintptr_t)in)) < 0) {
                memd_models_unmanage(ms, in->arena_handle);
                for (uint32_t i = 0; i < m->nph; i++)
                    memd_models_unmanage(ms, ph_h[i]);
            }
        }
        if (rc < 0)
            memd_error_set(err, -ENOMEM, "daemon out of memory for an instance");
    } else {
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        memd_error_set(err, rc, "model %s instance: %s %s (nothing allocated)", m->name,
                     done < m->nph ? "placeholder" : "arena", msg);
    }
    if (rc < 0) {
        memd_models_release_handle(st, s, in->arena_handle);
        for (uint32_t i = 0; i < m->nph; i++)
            memd_models_release_handle(st, s, ph_h[i]);
    }
    if (memd_models_instance_built(in, rc) < 0)
        return rc;
    *out = in;
    return 0;
}

int memd_models_instance_take(memd_state *st, memd_session *s, uint64_t model_id, uint64_t req,
                              bool retry, memd_instance **out, bool *reused, memd_error *err)
{
    memd_models *ms = st->models;
    memd_model_use *u = ms ? memd_models_use_of(ms, s, model_id) : NULL;
    if (!u)
        return memd_error_set(err, -ENOENT, "this session has not loaded a model with id %llu",
                              (unsigned long long)model_id);
    /* A retry whose first sending made an instance busy gets that one (model.h). */
    for (memd_instance *in = retry ? u->insts : NULL; in; in = in->next) {
        if (in->busy && in->req == req) {
            *out = in;
            *reused = in->reused;
            return 0;
        }
    }
    for (memd_instance *in = u->insts; in; in = in->next) {
        if (!in->busy) {
            in->busy = true;
            in->reused = true;
            in->req = req;
            memd_models_save_instance(ms, in);
            memd_models_record(st, s, MEMD_HIST_INSTANCE_CREATE, u->m, in);
            *out = in;
            *reused = true;
            return 0;
        }
    }
    memd_instance *in = NULL;
    int rc = instance_new(st, ms, u, &in, err);
    if (rc < 0) {
        memd_alloc_failed(st, st->devs[u->m->dev].spec->id, err);
        return rc;
    }
    in->busy = true;
    in->req = req;
    memd_models_save_ids(ms);
    memd_models_save_instance(ms, in);
    memd_models_record(st, s, MEMD_HIST_INSTANCE_CREATE, u->m, in);
    *out = in;
    *reused = false;
    return 0;
}

int memd_models_instance_release(memd_state *st, memd_session *s, uint64_t id, bool free_it,
                                 bool retry, memd_error *err)
{
    memd_models *ms = st->models;
    uint64_t *v = ms ? memd_map_get(&ms->instances, id) : NULL;
    memd_instance *in = v ? (memd_instance *)(uintptr_t)*v : NULL;
    if (!in && retry)
        return 0; /* freed by the first sending */
    if (!in || in->use->s != s)
        return memd_error_set(err, -ENOENT, "this session has no instance with id %llu",
                              (unsigned long long)id);
    if (free_it) {
        memd_models_instance_destroy(st, ms, in);
    } else if (!in->busy && retry) {
        /* released by the first sending */
    } else if (!in->busy) {
        return memd_error_set(err, -EALREADY, "instance %llu is already released",
                              (unsigned long long)id);
    } else {
        memd_models_record(st, s, MEMD_HIST_INSTANCE_RELEASE, in->use->m, in);
        in->busy = false;
        memd_models_save_instance(ms, in);
    }
    return 0;
}
