/* memd daemon — post-mortems (issue 25): each out-of-memory refusal of an allocation
 * leaves a snapshot an operator can read later: the request and who made it, the
 * region's state, its top holders, its largest free blocks and (filled in by whoever
 * encodes it) the last recorder events on the device.
 *
 * Core captures the snapshot at the refusal (rate-limited, no I/O) into a short pending
 * list and names its id in the error; the handlers encode pending snapshots into their
 * saved form (memd_postmortem_keep), which core keeps, bounded, oldest dropped; the
 * daemon shell writes saved ones to the state directory and removes the dropped ones'
 * files. Core never looks inside a saved snapshot's bytes. */
#ifndef MEMD_DAEMON_POSTMORTEM_H
#define MEMD_DAEMON_POSTMORTEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "error.h"
#include "state.h"

#define MEMD_PM_HOLDERS 8  /* top holders kept (the wire's MEMD_HOLDERS_MAX) */
#define MEMD_PM_BLOCKS 8   /* largest free blocks kept (the wire's MEMD_PM_BLOCKS_MAX) */
#define MEMD_PM_PENDING 8  /* captured in one pass before they are encoded; more: none */

typedef struct memd_pm_holder {
    uint64_t bytes;
    uint32_t session_id, pid, uid;
    char comm[16];
    char client_name[32];
} memd_pm_holder;

typedef struct memd_postmortem {
    uint64_t id, time_ns;
    uint64_t hist_next;            /* the recorder's next sequence number after the refusal
                                      was recorded: its events are those before it */
    int32_t status;                /* the negative errno the client got */
    uint32_t detail;               /* MEMD_ERR_DETAIL_* */
    memd_error_room room;          /* requested, size per bank, the region's state, ... */
    uint64_t alignment, region_base, region_size;
    uint32_t banks;
    uint8_t scope, dir;
    bool admin;                    /* the session's: which events it may see */
    uint32_t session_id, pid, uid;
    char region_name[64];
    char comm[16];
    char client_name[32];
    char cgroup[256];
    char message[192];
    uint32_t nholders, nfree;
    memd_pm_holder holders[MEMD_PM_HOLDERS];
    uint64_t free_addr[MEMD_PM_BLOCKS], free_size[MEMD_PM_BLOCKS];
} memd_postmortem;

/* A saved post-mortem: its encoded bytes (owned) and what access checks need. */
typedef struct memd_pm_saved {
    uint64_t id, time_ns;
    uint32_t uid;
    bool written;                  /* in the state directory already */
    uint8_t *data;
    size_t len;
} memd_pm_saved;

struct memd_postmortems {
    memd_postmortem pending[MEMD_PM_PENDING];
    uint32_t npending;
    memd_pm_saved *saved;          /* oldest first, at most limits.postmortems */
    uint32_t nsaved, cap;
    uint64_t dropped[MEMD_PM_PENDING]; /* ids dropped whose files are still to remove */
    uint32_t ndropped;
    uint64_t next_id;
};

/* After s was refused w (b: its bank set or NULL) with rc and err: when it is an
 * out-of-memory (no room, larger than the region, quota, cgroup limit) and the rate
 * limits allow (limits.postmortem_interval_ms per uid, postmortems_per_minute over
 * all), captures a snapshot and sets err->room.postmortem to its id. Never fails the
 * refusal: without memory for it, no snapshot. */
void memd_postmortem_capture(memd_state *st, const memd_session *s,
                             const memd_alloc_request *w, const memd_alloc_banks *b, int rc,
                             memd_error *err);

/* The snapshots captured since the last memd_postmortem_settled, *n of them. */
const memd_postmortem *memd_postmortem_pending(const memd_state *st, uint32_t *n);
void memd_postmortem_settled(memd_state *st);

/* Keeps in (its data now owned here; written: already on disk), dropping the oldest past
 * limits.postmortems (their ids queue for memd_postmortem_take_dropped). Ids after it
 * come after in->id. 0, or -ENOMEM (in->data freed). */
int memd_postmortem_keep(memd_state *st, const memd_pm_saved *in);

/* Saved ones, oldest first: *n of them. */
memd_pm_saved *memd_postmortem_saved(memd_state *st, uint32_t *n);
const memd_pm_saved *memd_postmortem_find(const memd_state *st, uint64_t id);

/* The id of a dropped snapshot whose file is to remove, 0 when none is left. */
uint64_t memd_postmortem_take_dropped(memd_state *st);

void memd_postmortem_free(memd_state *st);

#endif
