/* memd daemon — allocation records: create (engine placement + handle + hold), shared
 * names with reference counts, per-uid quotas, release. The engine decides placement;
 * this file only keeps the books. */
#ifndef MEMD_DAEMON_ALLOC_H
#define MEMD_DAEMON_ALLOC_H

#include "state.h"

/* Allocates (or, for a shared name that exists, acquires) for session s. On success
 * *out is the allocation, held once more by s (that new hold is s->holds, the head of
 * the session's list). On failure returns a negative errno and
 * fills *err (message; for -ENOMEM and -EDQUOT the region's state):
 *   -ENODEV unknown device, -EINVAL bad request, -EOPNOTSUPP scope/class not offered,
 *   -E2BIG/-EOVERFLOW too large, -ENOMEM no room, -EDQUOT per-uid quota,
 *   -EMFILE the session's allocation limit, -EEXIST shared name with another shape. */
int memd_alloc_create(memd_state *st, memd_session *s, const memd_wire_alloc_req *req,
                      memd_alloc **out, memd_wire_error *err);

/* A bank set for memd_alloc_create_banks: set[0..nset) strictly increasing (nset 0 with
 * per_bank: every bank). */
typedef struct memd_alloc_banks {
    const uint32_t *set;
    uint32_t nset;
    bool per_bank;
} memd_alloc_banks;

/* memd_alloc_create with a bank set (range lockstep, or per bank): b NULL is plain
 * memd_alloc_create. Bank-set allocations cannot be shared (-EINVAL). */
int memd_alloc_create_banks(memd_state *st, memd_session *s, const memd_wire_alloc_req *req,
                            const memd_alloc_banks *b, memd_alloc **out, memd_wire_error *err);

static inline memd_alloc *memd_alloc_find(const memd_state *st, uint64_t handle)
{
    uint64_t *v = memd_map_get(&st->handles, handle);
    return v ? (memd_alloc *)(uintptr_t)*v : NULL;
}

/* s's hold on a, or NULL. */
memd_hold *memd_alloc_hold_of(const memd_alloc *a, const memd_session *s);

/* Drops one hold; the allocation goes back to the engine with its last holder. */
void memd_hold_release(memd_state *st, memd_hold *h);

/* Drops every hold at once (admin reclaim). */
void memd_alloc_reclaim(memd_state *st, memd_alloc *a);

/* State store restore: registers an allocation record made from proto (every field but
 * the links) at its stored placement (memd_device_alloc_at, never a new placement),
 * with no holder yet; memd_alloc_adopt_hold then gives it each hold. 0, -EEXIST (handle
 * or shared name taken), -EBUSY / -EINVAL (the engine refuses the placement), -ENOMEM. */
int memd_alloc_adopt(memd_state *st, uint32_t dev, const memd_alloc *proto, memd_alloc **out);
int memd_alloc_adopt_hold(memd_state *st, memd_alloc *a, memd_session *s, uint64_t req);

/* The holds of s made by client request req (memd_hold.req), newest first, into
 * out[0, cap); returns how many there are (a retried request, MEMD_REQ_F_RETRY: linear
 * in the session's holds, paid only by retries). */
size_t memd_holds_of_request(const memd_session *s, uint64_t req, memd_hold **out, size_t cap);

/* Fills a wire buffer / info record from an allocation. */
void memd_alloc_to_buffer(const memd_alloc *a, memd_wire_buffer *b);
void memd_alloc_to_info(const memd_state *st, const memd_alloc *a, memd_wire_alloc_info *i);

/* The banks an allocation uses (every bank of its group for lockstep; its set else),
 * and the i-th of them: bank id, core, address and absolute address. */
uint32_t memd_alloc_bank_count(const memd_state *st, const memd_alloc *a);
void memd_alloc_bank_at(const memd_state *st, const memd_alloc *a, uint32_t i,
                        memd_wire_bank_addr *out);

/* Shared name table (names.c). */
/* The shared allocation named name on device dev that a client of uid may attach to. */
memd_alloc *memd_names_find(const memd_names *n, uint32_t dev, uint32_t uid, const char *name);
int memd_names_add(memd_names *n, memd_alloc *a);
void memd_names_remove(memd_names *n, memd_alloc *a);
void memd_names_free(memd_names *n);

#endif
