/* memd daemon — device memory limits per cgroup, with the kernel dmem controller's meaning
 * (dmem.max / dmem.current / dmem.peak per cgroup, device and bank group), hierarchical:
 * a hold by a session in cgroup /a/b/c is charged its bytes on the device to /a/b/c and
 * to every ancestor with a limit, and refused when any would go over its max. The check
 * and the charge cost one hash lookup per path component (O(depth)), none when no limit
 * is set. Limits come from the config (replaced by a reload) or from LIMIT_SET (kept in
 * the state store as core's records, MEMD_RECORD_CGROUP_LIMIT). */
#ifndef MEMD_DAEMON_CGLIMIT_H
#define MEMD_DAEMON_CGLIMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "state.h"

typedef struct memd_cglimit {
    char cgroup[MEMD_SESSION_CGROUP_MAX];
    uint64_t key;                  /* hash of (cgroup, dev, kind): the index's key */
    uint32_t dev;                  /* device index */
    uint8_t kind;                  /* memd_kind */
    bool from_config;              /* memd.yaml's; else set by request, stored */
    uint64_t max, current, peak;
} memd_cglimit;

typedef struct memd_cglimits {
    memd_cglimit *v;
    uint32_t n, cap;
    memd_map index;                /* key -> index in v + 1 */
    memd_hook hook;                /* cglimit_record.c: restores the stored ones */
} memd_cglimits;

/* The config's limits (validated by the config loader) and the store listener. */
int memd_cglimits_init(memd_state *st, const memd_config *cfg, memd_error *err);
void memd_cglimits_fini(memd_state *st);
/* A reload: the config's limits replace the config's; those set by request stay (and
 * win over a config limit with the same key). 0 or -ENOMEM (nothing changed). */
int memd_cglimits_reload(memd_state *st, const memd_config *cfg, memd_error *err);

typedef enum memd_cglimit_origin {
    MEMD_CGLIMIT_CONFIG,           /* memd.yaml */
    MEMD_CGLIMIT_REQUEST,          /* LIMIT_SET: written to the state store */
    MEMD_CGLIMIT_RESTORED,         /* LIMIT_SET before a restart: in the store already */
} memd_cglimit_origin;

/* Sets (adds or replaces) the limit of (cgroup, device index, kind). Its usage is
 * counted from the sessions holding memory now. 0, -EINVAL (bad path, device without
 * that group), -EEXIST (its hash collides with another path's) or -ENOMEM, err set. */
int memd_cglimit_set(memd_state *st, const char *cgroup, uint32_t dev, uint8_t kind,
                     uint64_t max, memd_cglimit_origin origin, memd_error *err);
/* Removes the cgroup's limits on dev (any: UINT32_MAX) and kind (any: MEMD_KIND_COUNT).
 * The number removed. */
uint32_t memd_cglimit_clear(memd_state *st, const char *cgroup, uint32_t dev, uint8_t kind);

/* Is any limit set that s's allocations could pass? (s's cgroup is known.) */
static inline bool memd_cglimit_applies(const memd_state *st, const memd_session *s)
{
    return st->cglimits && st->cglimits->n && s->cgroup[0];
}

/* May s hold `bytes` more on (dev, kind)? 0, or -ENOMEM detail LIMIT with a message that
 * names the cgroup whose limit it passes, its max and usage. */
int memd_cglimit_check(const memd_state *st, const memd_session *s, uint32_t dev, uint8_t kind,
                       uint64_t bytes, memd_error *err);
/* Charges (charge true) or uncharges s's cgroup and its limited ancestors (alloc.c, as
 * holds come and go). */
void memd_cglimit_charge(memd_state *st, const memd_session *s, uint32_t dev, uint8_t kind,
                         uint64_t bytes, bool charge);
/* Counts every limit's usage again from the sessions (a reclaimed session's holds). */
void memd_cglimit_recount(memd_state *st);

/* dmem.peak starts again from dmem.current (as a write to it does) for the limits on
 * device index dev (-1: every device): PEAKS_RESET of everything. */
void memd_cglimit_reset_peaks(memd_state *st, int dev);

/* The limits, for the dump (NULL, 0 when none). */
const memd_cglimit *memd_cglimit_list(const memd_state *st, uint32_t *n);

/* cglimit_record.c: the store record of a limit set by request (written), or its removal. */
void memd_cglimit_record_put(memd_state *st, const memd_cglimit *l, bool gone);
void memd_cglimit_records_listen(memd_state *st);

#endif
