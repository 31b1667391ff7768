/* memd daemon — the model layer's lookups by id (a session, a session's use of a model):
 * leaves every other file of the layer calls, so readiness and state need not call each
 * other. */
#include "alloc.h"
#include "model_internal.h"

memd_session *memd_models_session_by_id(const memd_state *st, uint32_t id)
{
    for (memd_session *s = st->sessions; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

memd_model_use *memd_models_use_of(memd_models *ms, const memd_session *s, uint64_t model_id)
{
    for (memd_model_use *u = ms->uses; u; u = u->next)
        if (u->s == s && u->m->id == model_id)
            return u;
    return NULL;
}
