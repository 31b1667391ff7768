/* memd daemon — the service state: devices, allocation records, sessions, counters.
 *
 * Everything here is plain data driven by dispatch; no libuv, no sockets, so the whole
 * request path can be exercised by unit tests without a daemon. */
#ifndef MEMD_DAEMON_STATE_H
#define MEMD_DAEMON_STATE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "device.h"
#include "handles.h"
#include "hooks.h"
#include "map.h"
#include "peak.h"
#include "pool.h"
#include "config.h"

typedef struct memd_session memd_session;
typedef struct memd_alloc memd_alloc;
typedef struct memd_models memd_models; /* model.h */
typedef struct memd_subdev memd_subdev; /* subdev.h */
typedef struct memd_store memd_store;   /* store.h */
typedef struct memd_events memd_events; /* event.h */
typedef struct memd_history memd_history; /* history.h */
typedef struct memd_cglimits memd_cglimits; /* cglimit.h */
typedef struct memd_postmortems memd_postmortems; /* postmortem.h */
typedef struct memd_pm_files memd_pm_files; /* service/postmortem_files.h */

/* What one session holds in one (device, bank group), kept as holds come and go
 * (alloc.c), so the dump's usage records cost O(sessions), not O(holds). bytes: the
 * whole allocation on the device (memd_alloc_device_bytes) once per hold. */
typedef struct memd_group_use {
    uint64_t bytes, shared_bytes;
    uint32_t holds;
    memd_peak peak;                /* of bytes (peak.h) */
} memd_group_use;

/* One holder of an allocation, in its session's list. Every allocation has one inside
 * it (memd_alloc.first: the creator's, no second record in the common unshared case);
 * other holders of a shared one are memd_xholds. memd_hold_alloc finds the allocation. */
typedef struct memd_hold {
    memd_session *session;
    uint64_t req;                  /* client request id that made it (0: unknown): a
                                    * retried request finds it (MEMD_REQ_F_RETRY) */
    struct memd_hold *next;        /* the session's holds */
    uintptr_t prev_bits;           /* the previous one | MEMD_HOLD_EXTRA (alloc.c) */
} memd_hold;

/* A holder besides the one inside the allocation (another session of a shared one). */
typedef struct memd_xhold {
    memd_hold h;
    memd_alloc *alloc;
    struct memd_xhold *a_next;     /* the allocation's other holders */
} memd_xhold;

/* Who made an allocation: its session's credentials and process name when it did.
 * One record per creating session, shared by every allocation it makes (reference
 * counted by the session and each of them), instead of 28 bytes in each. */
typedef struct memd_creator {
    uint32_t refs;
    uint32_t pid, gid, session_id;
    char comm[16];
} memd_creator;

/* The parts of an allocation few have, allocated only for those that do (named, shared,
 * held by several sessions, pools with reports, textures, bank sets, sub-devices). */
typedef struct memd_alloc_ext {
    memd_alloc *name_next;         /* name table chain */
    struct memd_pool_books *books; /* pool: its reported sub-allocations (pool_books.h) */
    memd_xhold *holds;             /* holders besides `first` */
    uint64_t pitch;                /* dram.texture: the placement's row pitch */
    /* A bank-set placement (memd_placement's mode RANGE or PER_BANK): its banks, and
     * per bank its addresses (PER_BANK), owned here. */
    uint32_t nset;
    uint32_t *set;
    uint64_t *addrs;
    uint64_t *sizes;               /* PER_BANK with per-core shard sizes, else NULL */
    uint32_t subdev;               /* sub-device charged (index + 1), 0: none (subdev.h) */
    char name[];                   /* NUL-terminated; "" when unnamed */
} memd_alloc_ext;

/* An allocation's placement as memd keeps it: what every allocation has (memd_placement
 * has room for textures and bank sets besides; memd_alloc_placement rebuilds one). */
typedef struct memd_alloc_pl {
    uint64_t address;              /* same in every bank of the group */
    uint64_t size_per_bank;
    uint64_t page_size;
    uint32_t banks;
    uint8_t kind;                  /* memd_kind */
    uint8_t region;
    uint8_t mode;                  /* memd_bank_mode */
} memd_alloc_pl;

/* 128 bytes: at a million allocations every byte here is a megabyte (issue 14). Rare
 * parts live in ext, the creator's details in one record per session. Read the name,
 * creator and pitch through the accessors in alloc.h. */
struct memd_alloc {
    uint64_t handle;               /* never reused while the daemon runs */
    uint64_t requested;            /* bytes the client asked for (shape * dtype computed) */
    uint64_t created_ns;           /* CLOCK_REALTIME */
    memd_alloc_pl pl;
    uint64_t store_key;            /* state store: key of the record that holds it */
    memd_creator *creator;
    memd_alloc_ext *ext;           /* NULL: no name, one holder at most, ... */
    memd_hold first;               /* a holder's hold (first_used) */
    uint32_t refcount;             /* holders */
    uint32_t uid;                  /* the creator's */
    uint16_t dev;                  /* index into memd_state.devs */
    uint8_t cls, scope;
    bool shared;                   /* in the name table */
    bool pool;                     /* a client pool (MEMD_ALLOC_F_POOL) */
    bool first_used;
    bool marked;                   /* batch free: duplicate detection */
};

#define MEMD_SESSION_GROUPS 16
#define MEMD_SESSION_CGROUP_MAX 256 /* the wire's MEMD_CGROUP_MAX */

struct memd_session {
    uint32_t id;
    uint32_t pid, uid, gid;
    bool admin;                    /* root or in the configured admin group */
    uint16_t version;              /* negotiated protocol version (HELLO), default 1 */
    bool pm_errors;                /* HELLO's MEMD_HELLO_F_POSTMORTEM: its error replies
                                      carry the appended postmortem field */
    uint32_t subdev;               /* bound sub-device (index + 1), 0: none (subdev.h) */
    bool subdev_by_config;
    /* The first supplementary groups of the peer (SO_PEERGROUPS at connect): the config
     * binds sessions to sub-devices by them too. Not stored: a restored orphan has none. */
    uint8_t ngroups;
    uint32_t groups[MEMD_SESSION_GROUPS];
    char comm[16];
    char client_name[32];
    /* The process's cgroup at connect (service/creds.c), "" when unknown. Not stored: a
     * restored orphan has none. */
    char cgroup[MEMD_SESSION_CGROUP_MAX];
    memd_creator *creator;         /* of what it allocates (alloc.c), or NULL */
    uint32_t hist_who;             /* its entry in the flight recorder (+ 1), 0: none yet */
    uint32_t hist_context;         /* its context (CONTEXT), interned there; 0: none */
    /* Revocation notices (revoke.h): asked for in HELLO, and those not yet sent. */
    bool wants_notices;
    uint32_t nnotes, notes_cap;
    struct memd_revoke_note *notes;
    uint64_t connected_ns;
    uint64_t requests;
    uint32_t nholds;
    memd_hold *holds;              /* doubly linked */
    memd_group_use *group_holds;   /* use per (device index, bank group): ndevs *
                                      MEMD_KIND_COUNT, NULL until the first hold */
    memd_session *prev, *next;     /* memd_state.sessions */
    /* Where the session's last dump page stopped inside a pool's sub-allocations: the
     * cursor it handed out and the offset of the first one not sent (handlers/dump.c),
     * so the next page resumes there in O(log n). */
    uint64_t dump_cursor, dump_offset;
    /* An EVENTS request with MEMD_EVENTS_F_WAIT that found nothing: answered later
     * (handlers/events.c), the session's next requests wait behind it. */
    struct {
        bool parked;
        uint64_t id;               /* the request's id, for the reply */
        uint64_t since;
        uint32_t max;
        uint64_t until_ms;         /* memd_mono_ms deadline */
    } ewait;
};

/* Why an allocation was refused (memd_alloc_failed), counted per device. */
enum {
    MEMD_FAIL_NO_ROOM,             /* -ENOMEM detail NOMEM */
    MEMD_FAIL_QUOTA,               /* -EDQUOT: per-uid quota, sub-device budget */
    MEMD_FAIL_LIMIT,               /* -ENOMEM detail LIMIT: a cgroup limit */
    MEMD_FAIL_TOO_LARGE,           /* -E2BIG, -EOVERFLOW */
    MEMD_FAIL_OTHER,
    MEMD_FAIL_COUNT
};

typedef struct memd_dev {
    memd_device *dev;
    const memd_device_spec *spec;
    uint64_t failures[MEMD_FAIL_COUNT];
    /* Bytes of the live buffers (every bank counted) per bank group and per region, with
     * their peaks (peak.h), kept as buffers come and go (alloc.c). */
    memd_use_peak group[MEMD_KIND_COUNT];
    memd_use_peak regions[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
} memd_dev;

typedef struct memd_counters {
    uint64_t requests, allocs, frees, alloc_failures, protocol_errors, sessions_total;
    uint64_t bytes_in, bytes_out;
    uint64_t subs_released; /* pool sub-allocation records let go (what a trim waits for) */
} memd_counters;

/* Shared allocations by (device, creator's uid, name), or by (device, name) when the
 * config makes shared names global: one uid can neither take nor attach to another
 * uid's name unless the operator allowed it. Models are scoped the same way (model.h). */

typedef struct memd_names {
    memd_alloc **buckets;
    size_t cap, len;               /* cap: power of two or 0 */
    bool global;                   /* shared_names: global (set once, at start) */
} memd_names;

typedef struct memd_state {
    memd_dev *devs;
    uint32_t ndevs;
    memd_limits limits;
    bool have_admin_gid;
    gid_t admin_gid;
    uint64_t next_handle;
    uint64_t next_mark;
    uint32_t next_session_id;
    memd_handles handles;          /* handle -> memd_alloc * (handles.h) */
    memd_map quota;                /* (dev, uid) -> bytes per bank in use (quota.c) */
    memd_names names;
    memd_pool alloc_pool, hold_pool;
    memd_session *sessions;
    uint32_t nsessions;
    memd_creator *restore_creator; /* the last one memd_alloc_adopt made (alloc.c) */
    uint32_t events_parked;        /* sessions with ewait.parked */
    memd_counters ctr;
    /* Sessions holding something per (device index, bank group), kept as holds come and
     * go (alloc.c): a dump reads it instead of walking every hold. */
    uint32_t *group_clients;
    uint64_t start_ns;
    uint64_t now_ns;               /* request time, read once per request (memd_state_now) */
    memd_alloc **scratch;          /* FREE_BATCH: records found in its checking pass */
    size_t scratch_cap;
    memd_hook *hooks;              /* listeners on changes (hooks.h): store, models */
    /* Where the layers that listen keep their state; core never looks inside. */
    memd_models *models;           /* plans, models, instances (model.h); NULL until used */
    memd_store *store;             /* the state store (store.h); NULL: not persisted */
    memd_subdev *subdevs;          /* sub-devices (subdev.h), room for MEMD_SUBDEV_MAX */
    uint32_t nsubdevs;
    uint64_t subdev_record_hwm;    /* the largest record id a defined sub-device has had */
    memd_hook subdev_hook;         /* subdev_record.c: restores them from the store */
    memd_hook range_hook;          /* region_range.c: restores ranges given up */
    memd_events *events;           /* the event log (event.h); NULL until the first event */
    memd_history *history;         /* the flight recorder (history.h); NULL until used */
    /* Why memd_hold_release drops a hold (memd_hist_type; 0: its holder freed it), and
     * for MEMD_HIST_REVOKE the admin who did: set around the release by its cause. */
    uint8_t hist_cause;
    memd_session *hist_actor;
    memd_cglimits *cglimits;       /* limits per cgroup (cglimit.h) */
    memd_postmortems *postmortems; /* out-of-memory snapshots (postmortem.h); NULL until one */
    memd_pm_files *pm_files;       /* where the daemon shell writes them; core never looks
                                      inside; NULL: in memory only */
    const memd_session *cur;       /* the session whose frames are being processed, or
                                      NULL: events without a session are about it */
    size_t reply_room;             /* bytes the reply being built may take: max_reply_backlog
                                      less the session's unsent replies (SIZE_MAX: no bound) */
} memd_state;

/* Builds one engine device per configured spec and resolves the admin group.
 * 0, or a negative errno with a message in err. */
int memd_state_init(memd_state *st, const memd_config *cfg, memd_error *err);
/* cfg's admin_group ("memd-admin" or "1234") -> gid. An unknown group is an error
 * (-ENOENT) at the config's admin_group line: silently falling back to "only root" would
 * hide a typo that locks operators out. */
int memd_resolve_group(const memd_config *cfg, gid_t *out, memd_error *err);
/* Releases every session's holds and destroys the devices. */
void memd_state_fini(memd_state *st);

/* The lowest address of a bank that a buffer occupies (memd_device_bank_lowest) and its
 * absolute address: 1, 0 when the bank holds nothing, or -ENODEV / -EINVAL (no such
 * bank) with err filled. */
int memd_state_bank_lowest(const memd_state *st, uint32_t device, memd_kind kind, uint32_t bank,
                           uint64_t *addr, uint64_t *absolute, memd_error *err);

/* Index of the device with this id, or -ENODEV. */
static inline int memd_state_dev_index(const memd_state *st, uint32_t id)
{
    /* Few devices per host: a scan beats any index. */
    for (uint32_t i = 0; i < st->ndevs; i++)
        if (st->devs[i].spec->id == id)
            return (int)i;
    return -ENODEV;
}

/* The current request's time: one clock read per request, not per allocation of a
 * batch. memd_dispatch resets it. */
static inline uint64_t memd_state_now(memd_state *st)
{
    if (st->now_ns == 0)
        st->now_ns = memd_now_ns();
    return st->now_ns;
}

#endif
