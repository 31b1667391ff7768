/* What a model's buffer is for, from a snapshot dumped with MEMCLIENT_DUMP_MODELS: the
 * daemon allocates a model's code and constants and an instance's arena and placeholders
 * without a name, so a view would show a row of anonymous buffers. */
#include <stdio.h>

#include "report.h"

const char *memd_report_alloc_role(const memclient_snapshot *s, const memclient_alloc_info *a,
                                   char *buf, size_t len)
{
    if (a->name[0])
        return a->name;
    const uint64_t h = a->buf.handle;
    for (size_t i = 0; i < s->nmodels; i++) {
        const memclient_model_rec *m = &s->models[i];
        if (h == m->code_handle || h == m->const_handle) {
            snprintf(buf, len, "%s/%s", m->name, h == m->code_handle ? "code" : "constants");
            return buf;
        }
    }
    for (size_t i = 0; i < s->ninstances; i++) {
        const memclient_instance_rec *in = &s->instances[i];
        if (!in->arena_handle || h < in->arena_handle || h > in->arena_handle + in->placeholders ||
            a->session_id != in->session_id)
            continue;
        const char *model = "?";
        for (size_t k = 0; k < s->nmodels; k++)
            if (s->models[k].model_id == in->model_id)
                model = s->models[k].name;
        /* The daemon allocates an instance's placeholders right after its arena, in one
         * request, so their handles follow the arena's (checked by class and session). */
        if (h == in->arena_handle)
            snprintf(buf, len, "%s/instance %llu/arena", model,
                     (unsigned long long)in->instance_id);
        else if (a->cls == MEMD_CLASS_PLACEHOLDER)
            snprintf(buf, len, "%s/instance %llu/placeholder %llu", model,
                     (unsigned long long)in->instance_id,
                     (unsigned long long)(h - in->arena_handle - 1));
        else
            continue;
        return buf;
    }
    return "";
}
