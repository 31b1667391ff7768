/* memd daemon — allocation records: create (engine placement + handle + hold), shared
 * names with reference counts, per-uid quotas, release. The engine decides placement;
 * this file only keeps the books. */
#ifndef MEMD_DAEMON_ALLOC_H
#define MEMD_DAEMON_ALLOC_H

#include "state.h"

/* An allocation request as core takes it (the handlers decode it from the wire). */
typedef struct memd_alloc_request {
    uint32_t device;               /* device id */
    uint8_t cls;                   /* memd_class */
    uint8_t scope;                 /* memd_scope */
    uint8_t dtype;                 /* memd_dtype; NONE: use bytes */
    uint8_t ndim;
    uint64_t bytes;
    uint64_t shape[MEMD_MAX_DIMS];
    uint64_t page_size;            /* 0: one page */
    uint64_t alignment;            /* 0: class policy */
    uint32_t banks;                /* 0: all banks of the group */
    bool shared;                   /* named, shared by reference count */
    bool pool;                     /* a client pool */
    const char *name;              /* "": anonymous; read during the call only */
    bool fixed;                    /* at `address` or not at all (ALLOC_AT); not shared */
    uint64_t address;
} memd_alloc_request;

/* Allocates (or, for a shared name that exists, acquires) for session s. On success
 * *out is the allocation, held once more by s (that new hold is s->holds, the head of
 * the session's list). On failure returns a negative errno and
 * fills *err (message; for -ENOMEM and -EDQUOT the region's state):
 *   -ENODEV unknown device, -EINVAL bad request, -EOPNOTSUPP scope/class not offered,
 *   -E2BIG/-EOVERFLOW too large, -ENOMEM no room, -EDQUOT per-uid quota,
 *   -EMFILE the session's allocation limit, -EEXIST shared name with another shape;
 *   fixed: -EINVAL misaligned, -ERANGE outside its region, -EBUSY the range taken. */
int memd_alloc_create(memd_state *st, memd_session *s, const memd_alloc_request *req,
                      memd_alloc **out, memd_error *err);

/* A bank set for memd_alloc_create_banks: set[0..nset) strictly increasing (nset 0 with
 * per_bank: every bank). range_lockstep (with a set, not per bank): tt-metal's range
 * lockstep, searched in the set and reserved in every bank (MEMD_BANKS_RANGE_LOCKSTEP). */
typedef struct memd_alloc_banks {
    const uint32_t *set;
    uint32_t nset;
    bool per_bank;
    bool range_lockstep;
    const uint64_t *sizes; /* per bank over a set: bytes per piece (NULL: the request's) */
} memd_alloc_banks;

/* memd_alloc_create with a bank set (uniform, range lockstep or per bank): b NULL is plain
 * memd_alloc_create. Bank-set allocations cannot be shared (-EINVAL). */
int memd_alloc_create_banks(memd_state *st, memd_session *s, const memd_alloc_request *req,
                            const memd_alloc_banks *b, memd_alloc **out, memd_error *err);

static inline memd_alloc *memd_alloc_find(const memd_state *st, uint64_t handle)
{
    return memd_handles_get(&st->handles, handle);
}

/* ---- reading an allocation (state.h keeps it small; these hide where parts live) ---- */

/* memd_hold.prev_bits: the hold is a memd_xhold, not the one inside its allocation. */
#define MEMD_HOLD_EXTRA ((uintptr_t)1)

/* The allocation h holds. */
static inline memd_alloc *memd_hold_alloc(const memd_hold *h)
{
    if (h->prev_bits & MEMD_HOLD_EXTRA)
        return ((const memd_xhold *)h)->alloc;
    return (memd_alloc *)(uintptr_t)((uintptr_t)h - offsetof(memd_alloc, first));
}

/* Its name, "" when it has none. */
static inline const char *memd_alloc_name(const memd_alloc *a)
{
    return a->ext ? a->ext->name : "";
}

/* Who made it: session id, pid, gid and process name (the uid is a->uid). */
static inline const memd_creator *memd_alloc_creator(const memd_alloc *a)
{
    return a->creator;
}

/* A texture's row pitch, else 0. */
static inline uint64_t memd_alloc_pitch(const memd_alloc *a)
{
    return a->ext ? a->ext->pitch : 0;
}

/* The banks of a bank-set placement (its set: RANGE, RANGE_LOCKSTEP or PER_BANK; 0 for
 * lockstep). */
static inline uint32_t memd_alloc_nset(const memd_alloc *a)
{
    return a->pl.mode != MEMD_BANKS_ALL && a->ext ? a->ext->nset : 0;
}

/* A per-bank placement's piece sizes (per-core shard sizes), NULL: size_per_bank each. */
static inline const uint64_t *memd_alloc_sizes(const memd_alloc *a)
{
    return a->pl.mode != MEMD_BANKS_ALL && a->ext ? a->ext->sizes : NULL;
}

/* The sub-device it is charged to (index + 1), 0: none. */
static inline uint32_t memd_alloc_subdev(const memd_alloc *a)
{
    return a->ext ? a->ext->subdev : 0;
}

/* Its holders: for (h = memd_alloc_holders(a); h; h = memd_alloc_next_holder(a, h)). */
static inline memd_hold *memd_alloc_holders(const memd_alloc *a)
{
    if (a->first_used)
        return (memd_hold *)(uintptr_t)&a->first;
    return a->ext && a->ext->holds ? &a->ext->holds->h : NULL;
}

static inline memd_hold *memd_alloc_next_holder(const memd_alloc *a, const memd_hold *h)
{
    const memd_xhold *x = h == &a->first ? (a->ext ? a->ext->holds : NULL)
                                         : ((const memd_xhold *)h)->a_next;
    return x ? (memd_hold *)(uintptr_t)&x->h : NULL;
}

/* The one address its client is told: a per-bank buffer of a tt-metal device has none,
 * and tt-metal reports 0 for it (each bank's address is in its bank list); else the
 * placement's (a per-bank buffer's first bank's on other devices). */
static inline uint64_t memd_alloc_address(const memd_state *st, const memd_alloc *a)
{
    return a->pl.mode == MEMD_BANKS_PER_BANK && st->devs[a->dev].spec->ttmetal ? 0 : a->pl.address;
}

/* Its placement as the engine gives and takes it (no arrays of its own to free). */
void memd_alloc_placement(const memd_alloc *a, memd_placement *out);

/* s's hold on a, or NULL. */
memd_hold *memd_alloc_hold_of(const memd_alloc *a, const memd_session *s);

/* Counts a refused allocation request for device id `device` (an unknown id: in the
 * total only) under its reason, from err's code and detail (alloc_fail.c). */
void memd_alloc_failed(memd_state *st, uint32_t device, const memd_error *err);

/* Drops one hold; the allocation goes back to the engine with its last holder. */
void memd_hold_release(memd_state *st, memd_hold *h);

/* Drops s's reference to its creator record (session close); one reference to c. */
void memd_session_creator_put(memd_session *s);
void memd_creator_put(memd_creator *c);

/* alloc_ext.c: a new ext named name (NULL or "": unnamed), or NULL when memory is short;
 * a's ext, made (unnamed) if it has none. */
memd_alloc_ext *memd_alloc_ext_make(const char *name);
memd_alloc_ext *memd_alloc_ext_get(memd_alloc *a);

/* Drops every hold at once: admin, a session that did not hold it all, reclaims it (the
 * recorder names it in each holder's MEMD_HIST_REVOKE). */
void memd_alloc_reclaim(memd_state *st, memd_alloc *a, memd_session *admin);

/* What the state store restores an allocation from. */
typedef struct memd_alloc_proto {
    uint64_t handle, requested, created_ns;
    memd_placement pl;
    uint32_t uid, pid, gid, session_id;
    uint8_t cls, scope;
    bool shared, pool;
    uint64_t store_key;
    const char *name;              /* "" or NULL: none */
    const char *comm;
} memd_alloc_proto;

/* State store restore: registers an allocation record made from proto at its stored
 * placement (memd_device_alloc_at, never a new placement), with no holder yet;
 * memd_alloc_adopt_hold then gives it each hold. 0, -EEXIST (handle or shared name
 * taken), -EBUSY / -EINVAL (the engine refuses the placement), -ENOMEM. */
int memd_alloc_adopt(memd_state *st, uint32_t dev, const memd_alloc_proto *proto,
                     memd_alloc **out);
int memd_alloc_adopt_hold(memd_state *st, memd_alloc *a, memd_session *s, uint64_t req);

/* The holds of s made by client request req (memd_hold.req), newest first, into
 * out[0, cap); returns how many there are (a retried request, MEMD_REQ_F_RETRY: linear
 * in the session's holds, paid only by retries). */
size_t memd_holds_of_request(const memd_session *s, uint64_t req, memd_hold **out, size_t cap);

/* One bank of an allocation: bank id, its core (MEMD_NO_CORE: none known), the address
 * in the group's map and the absolute one. */
typedef struct memd_bank_addr {
    uint32_t bank;
    uint16_t logical_x, logical_y, noc_x, noc_y;
    uint64_t address, absolute;
} memd_bank_addr;

/* The banks an allocation uses (every bank of its group for lockstep; its set else),
 * and the i-th of them. */
static inline uint32_t memd_alloc_bank_count(const memd_state *st, const memd_alloc *a)
{
    return a->pl.mode == MEMD_BANKS_ALL ? st->devs[a->dev].spec->groups[a->pl.kind].banks
                                        : memd_alloc_nset(a);
}

/* Bytes a buffer reserves on its device: size per bank x every bank of its group
 * (lockstep reserves the range in each bank). The unit of every "bytes held" figure.
 * Inline: every hold and release counts it several times (group, region, session). */
/* With per-core shard sizes: the sum of its pieces (event.c). */
uint64_t memd_alloc_sized_bytes(const memd_alloc *a);
static inline uint64_t memd_alloc_device_bytes(const memd_state *st, const memd_alloc *a)
{
    /* A uniform or per-bank buffer reserves its set's banks only (per-core shard sizes:
     * its pieces' own); lockstep and range lockstep, every bank of the group. */
    if (memd_alloc_sizes(a))
        return memd_alloc_sized_bytes(a);
    uint32_t banks = !memd_mode_lockstep((memd_bank_mode)a->pl.mode)
                         ? memd_alloc_nset(a)
                         : st->devs[a->dev].spec->groups[a->pl.kind].banks;
    return a->pl.size_per_bank * banks;
}

void memd_alloc_bank_at(const memd_state *st, const memd_alloc *a, uint32_t i,
                        memd_bank_addr *out);

/* Shared name table (names.c). */
/* The shared allocation named name on device dev that a client of uid may attach to. */
memd_alloc *memd_names_find(const memd_names *n, uint32_t dev, uint32_t uid, const char *name);
int memd_names_add(memd_names *n, memd_alloc *a);
void memd_names_remove(memd_names *n, memd_alloc *a);
void memd_names_free(memd_names *n);

#endif
