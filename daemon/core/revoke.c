/* memd daemon — revocation notices (see revoke.h). */
#include "revoke.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void memd_revoke_note_add(memd_state *st, memd_session *s, const memd_alloc *a,
                          const memd_session *admin)
{
    if (s->nnotes == s->notes_cap) {
        /* Bounded by what s held: each notice is a buffer it lost. */
        uint32_t cap = s->notes_cap ? s->notes_cap * 2 : 4;
        memd_revoke_note *n = realloc(s->notes, cap * sizeof *n);
        if (!n)
            return;
        s->notes = n;
        s->notes_cap = cap;
    }
    memd_revoke_note *n = &s->notes[s->nnotes++];
    *n = (memd_revoke_note){.handle = a->handle, .time_ns = memd_state_now(st),
                            .device = st->devs[a->dev].spec->id, .session = admin->id,
                            .pid = admin->pid, .uid = admin->uid};
    memcpy(n->comm, admin->comm, sizeof n->comm);
    n->comm[sizeof n->comm - 1] = '\0';
    memcpy(n->client_name, admin->client_name, sizeof n->client_name);
    n->client_name[sizeof n->client_name - 1] = '\0';
}

void memd_revoke_notes_free(memd_session *s)
{
    free(s->notes);
    s->notes = NULL;
    s->nnotes = s->notes_cap = 0;
}
