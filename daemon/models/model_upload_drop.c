/* memd daemon — dropping uploads (model_upload.c): on its own, so the models' state
 * (model_state.c), which drops a session's uploads when it ends, does not depend on the
 * upload requests that depend on it. */
#include <stdlib.h>

#include "model_internal.h"

void memd_models_upload_drop(memd_models *ms, memd_upload *up)
{
    for (memd_upload **pp = &ms->uploads; *pp; pp = &(*pp)->next) {
        if (*pp == up) {
            *pp = up->next;
            break;
        }
    }
    ms->upload_bytes -= up->total;
    free(up->data);
    free(up);
}

void memd_models_uploads_drop(memd_models *ms, const memd_session *s)
{
    for (memd_upload *u = ms->uploads, *next; u; u = next) {
        next = u->next;
        if (!s || u->s == s)
            memd_models_upload_drop(ms, u);
    }
}
