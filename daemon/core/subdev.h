/* memd daemon — sub-devices (partitions) at run time: the configured ones and those an
 * admin defines by request, the sessions bound to them, their use against the budget.
 *
 * A session is bound when it opens (its uid or primary gid is listed in the config) or by
 * its own SUBDEV_BIND request; a bound session is never unbound. Its allocations stay in
 * the sub-device's banks: a request without a bank set gets the sub-device's banks as
 * its set (lockstep over the sub-device), a bank set must lie inside it, another device
 * or bank group is refused. Request-defined sub-devices are kept in the state store as
 * records of core's own (subdev_record.c, MEMD_RECORD_SUBDEV) and come back with a
 * restart; configured ones come back with the config. Request bindings are stored too (a record per bound session): after a restart
 * the orphan is bound again, its allocations charged again, and the session that
 * reclaims it takes the binding over. */
#ifndef MEMD_DAEMON_SUBDEV_H
#define MEMD_DAEMON_SUBDEV_H

#include "alloc.h"
#include "state.h"

typedef struct memd_subdev {
    memd_subdev_spec spec;         /* own copy (banks owned) */
    gid_t gids[MEMD_SUBDEV_MAX_LIST];
    bool from_config;
    uint64_t used;                 /* bytes charged: size_per_bank x banks used */
    uint64_t allocations;
    uint32_t sessions;             /* bound sessions */
    uint64_t record;               /* defined by request: its state store record's id; 0 */
    uint32_t window;               /* its window's engine id (spec.window bytes); 0: none */
} memd_subdev;

/* From the config: copies the specs (state.c resolves their groups into gids). 0 or
 * -errno with err. */
int memd_subdevs_init(memd_state *st, const memd_config *cfg, memd_error *err);
void memd_subdevs_fini(memd_state *st);

/* Index of the sub-device called name, or -ENOENT. */
int memd_subdev_find(const memd_state *st, const char *name);

/* An admin's (s) SUBDEV_DEFINE (the recorder keeps it): validated as the config's are (msg says why), then handed
 * to the state store as a record (the caller ran memd_hooks_prepare: there is room).
 * Takes over sd->banks on success. 0, -EINVAL, -EEXIST (name taken), -ENOSPC (too many),
 * -ENOMEM. */
int memd_subdev_define(memd_state *st, memd_session *s, memd_subdev_spec *sd, char *msg,
                       size_t cap);
/* The same checks and addition without a record: record is the id of the one it came
 * from (0: none); adopt: at restore, its window takes the restored buffers there over
 * (memd_subdev_window_open). -EBUSY (a buffer where its window goes) too. */
int memd_subdev_add(memd_state *st, memd_subdev_spec *sd, uint64_t record, bool adopt,
                    char *msg, size_t cap);

/* subdev_window.c: d's window (spec.window bytes; none: 0 at once) carved from the
 * bottom of its group's first allocatable region, d->window its id. adopt: the buffers
 * restored on its banks there move into it. 0, or -EBUSY / -EINVAL / -ENOMEM with msg. */
int memd_subdev_window_open(memd_state *st, memd_subdev *d, bool adopt, char *msg, size_t cap);
void memd_subdev_window_close(memd_state *st, memd_subdev *d);
/* The configured sub-devices' windows, once the devices exist. */
int memd_subdev_windows_open(memd_state *st, memd_error *err);
/* s's request of `bytes` per bank found no room in its sub-device's window: -ENOMEM. */
int memd_subdev_window_full(const memd_state *st, const memd_session *s, uint64_t bytes,
                            memd_error *err);

/* subdev_record.c: d's record to the store (memd_hooks_record_put); 0 or -ENOMEM. */
int memd_subdev_record_put(memd_state *st, const memd_subdev *d);
/* s's binding by request to the store (kind MEMD_RECORD_SUBDEV_BIND, id s->id: the
 * sub-device's name); memd_subdev_unbind removes it. 0 or -ENOMEM. */
int memd_subdev_bind_record(memd_state *st, const memd_session *s);
/* Registers core's listener for MEMD_RECORD_SUBDEV records at restore (st->subdev_hook). */
void memd_subdev_records_listen(memd_state *st);
/* The record's payload, for tests: encode returns the bytes of version 2 (malloc'd,
 * *len), decode reads version 1 or 2, fills sd (sd->banks malloc'd) and returns 0,
 * -EBADMSG or -EINVAL. */
uint8_t *memd_subdev_record_encode(const memd_subdev_spec *sd, size_t *len);
int memd_subdev_record_decode(const uint8_t *p, size_t len, uint16_t version,
                              memd_subdev_spec *sd);

/* Binds s by its credentials (session open and restore). */
void memd_subdev_bind_creds(memd_state *st, memd_session *s);
/* SUBDEV_BIND: s asks to be bound to index i. -EPERM if bound to another already. */
int memd_subdev_bind(memd_state *st, memd_session *s, uint32_t i, memd_error *err);
/* The session is closing: its binding goes. */
void memd_subdev_unbind(memd_state *st, memd_session *s);

/* Applies s's sub-device to a request for device index dev (scope -> bank group): b is
 * replaced by the sub-device's banks when it is NULL, or checked to lie inside them;
 * *tmp receives the replacement. 0, or -EACCES / -EINVAL with err set. */
int memd_subdev_restrict(const memd_state *st, const memd_session *s, uint32_t dev,
                         const memd_alloc_request *w, const memd_alloc_banks *b,
                         memd_alloc_banks *tmp, memd_error *err);
/* Budget check for a placement's footprint, then charge and uncharge. */
int memd_subdev_check_budget(const memd_state *st, const memd_session *s, uint64_t bytes,
                             memd_error *err);
void memd_subdev_charge(memd_state *st, memd_alloc *a, uint32_t subdev);
void memd_subdev_uncharge(memd_state *st, memd_alloc *a);

/* Bytes a placement charges: size per bank times the banks it uses. */
uint64_t memd_subdev_bytes(const memd_state *st, uint32_t dev, const memd_placement *p);

#endif
