/* memd daemon — the flight recorder's records of models and instances (core/history.h):
 * loads, unloads, instances made busy and released. */
#include "history.h"
#include "model_internal.h"

void memd_models_record(memd_state *st, memd_session *s, uint8_t type, const memd_model *m,
                        const memd_instance *in)
{
    if (st->models->quiet) /* a restore or the teardown: nobody did anything */
        return;
    memd_hist_obj o = {.type = type, .device = st->devs[m->dev].spec->id,
                       .kind = m->scope == MEMD_SCOPE_SRAM ? MEMD_KIND_SRAM : MEMD_KIND_DRAM,
                       .name = m->name};
    if (in) {
        o.cls = MEMD_CLASS_INTERNAL; /* the arena's */
        o.id = in->id;
        o.ref = m->id;
        o.bytes = in->arena_bytes + in->ph_bytes;
    } else {
        o.cls = MEMD_CLASS_CONSTANT;
        o.id = m->id;
        o.bytes = m->code_bytes + m->const_bytes;
    }
    memd_history_object(st, s, &o);
}
