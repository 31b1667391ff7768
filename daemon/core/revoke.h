/* memd daemon — revocation notices: when an admin frees a buffer another session holds,
 * that session learns it with its next reply (issue 25; the handlers send what is queued
 * here as a REVOKED frame). Only sessions that asked for notices in HELLO get any, so the
 * queue costs nothing unused. */
#ifndef MEMD_DAEMON_REVOKE_H
#define MEMD_DAEMON_REVOKE_H

#include <stdint.h>

#include "state.h"

typedef struct memd_revoke_note {
    uint64_t handle, time_ns;
    uint32_t device;               /* device id */
    uint32_t session, pid, uid;    /* the admin's */
    char comm[16];
    char client_name[32];
} memd_revoke_note;

/* admin took a from s (s holds it, asked for notices): queued for s's next reply. A
 * notice memory cannot hold is dropped (the recorder's REVOKE says it still). */
void memd_revoke_note_add(memd_state *st, memd_session *s, const memd_alloc *a,
                          const memd_session *admin);
/* Frees what is queued (the session ends). */
void memd_revoke_notes_free(memd_session *s);

#endif
