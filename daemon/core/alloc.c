/* memd daemon — allocation records (see alloc.h).
 *
 * Quotas (quota_per_uid) charge holders, not creators: every uid that holds an
 * allocation through one or more sessions is charged its whole size per bank, once; it
 * stops being charged when its last hold goes. A uid attaching to a shared buffer is
 * charged (and refused -EDQUOT past its quota), and a creator that released a buffer
 * others still hold no longer is. */
#include "alloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "alloc_oom.h"
#include "cglimit.h"
#include "error.h"
#include "event.h"
#include "history.h"
#include "hooks.h"
#include "oom.h"
#include "pool_books.h"
#include "postmortem.h"
#include "quota.h"
#include "revoke.h"
#include "subdev.h"
#include "text.h"

/* ---- holds ---- */

/* (device index, bank group) of a, an index into the group counts. */
static inline size_t group_of(const memd_alloc *a)
{
    return (size_t)a->dev * MEMD_KIND_COUNT + a->pl.kind;
}

/* s's group counts, before its first hold. 0 or -ENOMEM. */
static int session_groups(const memd_state *st, memd_session *s)
{
    if (!s->group_holds)
        s->group_holds = calloc((size_t)st->ndevs * MEMD_KIND_COUNT, sizeof *s->group_holds);
    return s->group_holds ? 0 : -ENOMEM;
}

/* A million live allocations: 128 MB of records (issue 14: at most 192 bytes each in all,
 * with the handle table and the engine's maps). A field that every allocation does not
 * need goes to memd_alloc_ext. */
_Static_assert(sizeof(memd_alloc) <= 128, "memd_alloc grew past 128 bytes");

void memd_creator_put(memd_creator *c)
{
    if (c && --c->refs == 0)
        free(c);
}

void memd_session_creator_put(memd_session *s)
{
    memd_creator_put(s->creator);
    s->creator = NULL;
}

static memd_creator *creator_make(uint32_t pid, uint32_t gid, uint32_t session_id,
                                  const char *comm)
{
    memd_creator *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    *c = (memd_creator){.refs = 1, .pid = pid, .gid = gid, .session_id = session_id};
    if (comm)
        memcpy(c->comm, comm, strnlen(comm, sizeof c->comm - 1));
    return c;
}

static bool creator_is(const memd_creator *c, uint32_t pid, uint32_t gid, uint32_t session_id,
                       const char *comm)
{
    return c && c->pid == pid && c->gid == gid && c->session_id == session_id &&
           strncmp(c->comm, comm ? comm : "", sizeof c->comm - 1) == 0;
}

/* s's creator record, as s is now (a reclaim changes its id, for one): one more
 * reference for the caller. NULL when memory is short. */
static memd_creator *creator_of(memd_session *s)
{
    if (!creator_is(s->creator, s->pid, s->gid, s->id, s->comm)) {
        memd_creator *c = creator_make(s->pid, s->gid, s->id, s->comm);
        if (!c)
            return NULL;
        memd_creator_put(s->creator);
        s->creator = c;
    }
    s->creator->refs++;
    return s->creator;
}


/* Keeps the engine's placement p in a (a's ext made first if p needs one), taking over
 * its bank-set arrays. 0 or -ENOMEM (p unchanged, still the caller's). */
static int keep_placement(memd_alloc *a, const memd_placement *p)
{
    bool rare = p->pitch || p->mode != MEMD_BANKS_ALL || p->set || p->addrs || p->sizes;
    if (rare && !memd_alloc_ext_get(a))
        return -ENOMEM;
    a->pl = (memd_alloc_pl){.address = p->address, .size_per_bank = p->size_per_bank,
                            .page_size = p->page_size, .banks = p->banks,
                            .kind = (uint8_t)p->kind, .region = p->region,
                            .mode = (uint8_t)p->mode};
    if (rare) {
        a->ext->pitch = p->pitch;
        a->ext->nset = p->nset;
        a->ext->set = p->set;
        a->ext->addrs = p->addrs;
        a->ext->sizes = p->sizes;
    }
    return 0;
}

/* ---- holds ---- */

/* s (whose session_groups is ready) holds a through h (a->first, or an xhold whose
 * alloc is set). Inline: part of every allocation's commit. */
static inline void hold_link(memd_state *st, memd_alloc *a, memd_session *s, memd_hold *h)
{
    size_t g = group_of(a);
    memd_group_use *u = &s->group_holds[g];
    if (u->holds++ == 0)
        st->group_clients[g]++;
    uint64_t bytes = memd_alloc_device_bytes(st, a);
    u->bytes += bytes;
    memd_peak_note(&u->peak, u->bytes, memd_state_now(st));
    if (memd_cglimit_applies(st, s)) /* no call per hold when no limit is set */
        memd_cglimit_charge(st, s, a->dev, a->pl.kind, bytes, true);
    if (a->shared) /* set before the first hold, kept until the last goes */
        u->shared_bytes += bytes;
    h->session = s;
    h->req = 0; /* the handler that made it sets it */
    h->prev_bits = h == &a->first ? 0 : MEMD_HOLD_EXTRA;
    h->next = s->holds;
    if (s->holds)
        s->holds->prev_bits = (uintptr_t)h | (s->holds->prev_bits & MEMD_HOLD_EXTRA);
    s->holds = h;
    s->nholds++;
    if (h == &a->first) {
        a->first_used = true;
    } else {
        memd_xhold *x = (memd_xhold *)h;
        x->a_next = a->ext->holds;
        a->ext->holds = x;
    }
    a->refcount++;
}

static void hold_unlink(memd_state *st, memd_hold *h)
{
    memd_session *s = h->session;
    memd_alloc *a = memd_hold_alloc(h);
    size_t g = group_of(a);
    memd_group_use *u = &s->group_holds[g];
    if (--u->holds == 0)
        st->group_clients[g]--;
    uint64_t bytes = memd_alloc_device_bytes(st, a);
    u->bytes -= bytes;
    if (memd_cglimit_applies(st, s)) /* no call per hold when no limit is set */
        memd_cglimit_charge(st, s, a->dev, a->pl.kind, bytes, false);
    if (a->shared)
        u->shared_bytes -= bytes;
    memd_hold *prev = (memd_hold *)(h->prev_bits & ~MEMD_HOLD_EXTRA);
    if (prev)
        prev->next = h->next;
    else
        s->holds = h->next;
    if (h->next)
        h->next->prev_bits = (uintptr_t)prev | (h->next->prev_bits & MEMD_HOLD_EXTRA);
    s->nholds--;
    if (h == &a->first) {
        a->first_used = false;
    } else {
        for (memd_xhold **pp = &a->ext->holds; *pp; pp = &(*pp)->a_next) {
            if (&(*pp)->h == h) {
                *pp = (*pp)->a_next;
                break;
            }
        }
    }
    a->refcount--;
    h->session = NULL;
}

/* A new hold on a for the caller to link: a->first when free, else an xhold. */
static memd_hold *hold_new(memd_state *st, memd_alloc *a)
{
    if (!a->first_used)
        return &a->first;
    if (!memd_alloc_ext_get(a))
        return NULL;
    memd_xhold *x = memd_pool_get(&st->hold_pool);
    if (!x)
        return NULL;
    x->alloc = a;
    return &x->h;
}

/* Does a session of uid other than through `except` hold a? */
static bool uid_holds(const memd_alloc *a, uint32_t uid, const memd_hold *except)
{
    for (const memd_hold *h = memd_alloc_holders(a); h; h = memd_alloc_next_holder(a, h))
        if (h != except && h->session->uid == uid)
            return true;
    return false;
}

memd_hold *memd_alloc_hold_of(const memd_alloc *a, const memd_session *s)
{
    for (memd_hold *h = memd_alloc_holders(a); h; h = memd_alloc_next_holder(a, h))
        if (h->session == s)
            return h;
    return NULL;
}

/* ---- device use ---- */

/* The bank group's and region's byte counts and peaks as buffer a comes (add) or goes.
 * Inline: with add constant at each call, the release path keeps no peak code. */
static inline void device_use(memd_state *st, const memd_alloc *a, bool add)
{
    memd_dev *d = &st->devs[a->dev];
    memd_use_peak *g = &d->group[a->pl.kind], *r = &d->regions[a->pl.kind][a->pl.region];
    uint64_t bytes = memd_alloc_device_bytes(st, a);
    if (add) {
        uint64_t now = memd_state_now(st);
        memd_use_peak_add(g, bytes, now);
        memd_use_peak_add(r, bytes, now);
    } else {
        g->bytes -= bytes;
        r->bytes -= bytes;
    }
}

/* ---- release ---- */

static void alloc_destroy(memd_state *st, memd_alloc *a)
{
    device_use(st, a, false);
    /* The engine only fails here if its books disagree with ours, which would be a
     * bug; the record goes either way so a handle never points at freed memory. */
    memd_placement p;
    memd_alloc_placement(a, &p);
    (void)memd_device_release(st->devs[a->dev].dev, &p);
    memd_subdev_uncharge(st, a);
    memd_placement_fini(&p); /* the bank set's arrays, which a->ext owned */
    if (a->shared)
        memd_names_remove(&st->names, a);
    if (a->ext) {
        if (a->ext->books)
            st->ctr.subs_released += a->ext->books->subs.len;
        memd_pool_books_free(a->ext->books); /* a pool goes back whole, sub-allocations and all */
        free(a->ext);
        a->ext = NULL;
    }
    memd_creator_put(a->creator);
    a->creator = NULL;
    memd_handles_remove(&st->handles, a->handle);
    st->ctr.frees++;
    memd_pool_put(&st->alloc_pool, a);
}

void memd_hold_release(memd_state *st, memd_hold *h)
{
    memd_alloc *a = memd_hold_alloc(h);
    if (memd_history_on(st))
        memd_history_release(st, h->session, a);
    memd_hooks_alloc_changed(st, a);
    if (st->limits.quota_per_uid && !uid_holds(a, h->session->uid, h))
        memd_quota_sub(st, a->dev, (memd_kind)a->pl.kind, h->session->uid, a->pl.size_per_bank);
    hold_unlink(st, h);
    if (h != &a->first)
        memd_pool_put(&st->hold_pool, h);
    if (a->refcount == 0)
        alloc_destroy(st, a);
}

void memd_alloc_reclaim(memd_state *st, memd_alloc *a, memd_session *admin)
{
    st->hist_cause = MEMD_HIST_REVOKE;
    st->hist_actor = admin;
    for (bool last = false; !last;) {
        memd_hold *h = memd_alloc_holders(a);
        last = a->refcount == 1; /* its release destroys a */
        if (h->session != admin && h->session->wants_notices)
            memd_revoke_note_add(st, h->session, a, admin);
        memd_hold_release(st, h);
    }
    st->hist_cause = 0;
    st->hist_actor = NULL;
}

/* ---- create ---- */

static uint64_t requested_bytes(const memd_alloc_request *r)
{
    if (r->dtype == MEMD_DTYPE_NONE)
        return r->bytes;
    uint64_t n = memd_dtype_size((memd_dtype)r->dtype);
    for (uint32_t i = 0; i < r->ndim && i < MEMD_MAX_DIMS; i++) {
        if (r->shape[i] && n > UINT64_MAX / r->shape[i])
            return UINT64_MAX;
        n *= r->shape[i];
    }
    return n;
}

static void to_engine_req(const memd_alloc_request *w, const memd_alloc_banks *b,
                          memd_alloc_req *r)
{
    *r = (memd_alloc_req){
        .cls = (memd_class)w->cls,
        .scope = (memd_scope)w->scope,
        .bytes = w->bytes,
        .dtype = (memd_dtype)w->dtype,
        .ndim = w->ndim,
        .page_size = w->page_size,
        .banks = w->banks,
        .alignment = w->alignment,
    };
    memcpy(r->shape, w->shape, sizeof r->shape);
    if (b) {
        r->bank_set = b->nset ? b->set : NULL;
        r->nbank_set = b->nset;
        r->per_bank = b->per_bank;
        r->range_lockstep = b->range_lockstep;
        r->sizes = b->sizes;
    }
}

/* Region state for -ENOMEM / -EDQUOT replies. */
static void fill_region_state(const memd_state *st, uint32_t dev, const memd_placement *fp,
                              memd_error *err)
{
    memd_range_stats rs;
    err->room.size_per_bank = fp->size_per_bank;
    err->room.kind = (uint8_t)fp->kind;
    err->room.region = fp->region;
    if (memd_device_region_stats(st->devs[dev].dev, fp->kind, fp->region, &rs) == 0) {
        err->room.allocated = rs.allocated;
        err->room.free = rs.free;
        err->room.largest_free = rs.largest_free;
    }
}

static int engine_error(const memd_state *st, uint32_t dev, const memd_alloc_request *w,
                        const memd_alloc_req *r, int rc, memd_error *err)
{
    const memd_device_spec *spec = st->devs[dev].spec;
    const char *scope = memd_scope_name(r->scope), *cls = memd_class_name(r->cls);
    err->room.requested = requested_bytes(w);
    err->room.device = spec->id;
    err->room.cls = w->cls;
    memd_placement fp;
    switch (rc) {
    case -ENOBUFS: /* the engine's own memory, not the device's: no region figures */
        return memd_self_oom(err);
    case -ENOMEM: {
        if (memd_device_footprint(st->devs[dev].dev, r, &fp) < 0)
            return memd_error_set(err, rc, "device %u (%s): out of memory for %s %s buffer",
                                spec->id, spec->name, scope, cls);
        fill_region_state(st, dev, &fp, err);
        uint32_t bank = memd_device_oom_bank(st->devs[dev].dev);
        memd_range_stats bs;
        if (bank != UINT32_MAX &&
            memd_device_bank_stats(st->devs[dev].dev, fp.kind, fp.region, bank, &bs) == 0) {
            /* One bank of a split region ran out: its state is the one that matters. */
            err->room.allocated = bs.allocated;
            err->room.free = bs.free;
            err->room.largest_free = bs.largest_free;
        } else {
            bank = UINT32_MAX;
        }
        return memd_alloc_oom_error(st, dev, r, &fp, bank, err);
    }
    case -EOPNOTSUPP:
        return memd_error_set(err, rc, "device %u (%s) does not offer scope %s for class %s",
                            spec->id, spec->name, scope, cls);
    case -E2BIG:
        fp = (memd_placement){0};
        if (memd_device_footprint(st->devs[dev].dev, r, &fp) == -E2BIG && fp.banks > 0) {
            fill_region_state(st, dev, &fp, err); /* larger than its region: out of memory */
            return memd_alloc_oom_error(st, dev, r, &fp, UINT32_MAX, err);
        }
        return memd_error_set(err, rc,
                            "device %u (%s): %s %s buffer of %llu bytes exceeds the device's "
                            "limits", spec->id, spec->name, scope, cls,
                            (unsigned long long)err->room.requested);
    case -EOVERFLOW:
        return memd_error_set(err, rc, "device %u (%s): %s %s buffer size overflows",
                            spec->id, spec->name, scope, cls);
    case -EINVAL: {
        /* The engine's reason first (e.g. the group's bank count): the message may be
         * cut at the wire's length, the echo of the request is the part to lose. */
        char why[160];
        memd_device_describe_error(st->devs[dev].dev, r, rc, why, sizeof why);
        return memd_error_set(err, rc,
                            "device %u: %s (%s %s, bytes %llu, dtype %s, ndim %u, page size "
                            "%llu, alignment %llu, banks %u)",
                            spec->id, why, scope, cls, (unsigned long long)w->bytes,
                            memd_dtype_name(r->dtype), w->ndim,
                            (unsigned long long)w->page_size, (unsigned long long)w->alignment,
                            w->banks);
    }
    default:
        return memd_error_set(err, rc, "device %u (%s): %s %s allocation failed: %s", spec->id,
                            spec->name, scope, cls, strerror(-rc));
    }
}

static bool same_shape(const memd_alloc *a, const memd_alloc_request *w,
                       const memd_placement *fp)
{
    return a->cls == w->cls && a->scope == w->scope && a->pl.kind == fp->kind &&
           a->pl.region == fp->region && a->pl.size_per_bank == fp->size_per_bank &&
           a->pl.banks == fp->banks && a->pl.page_size == fp->page_size;
}

/* Would charging fp to s's uid pass its quota? -EDQUOT with the details if not; else the
 * uid's quota slot is made, so the charge after placement cannot fail. */
static int quota_check(memd_state *st, uint32_t dev, const memd_session *s,
                       const memd_alloc_request *w, const memd_placement *fp,
                       memd_error *err)
{
    uint64_t used = memd_quota_used(st, dev, fp->kind, s->uid);
    uint64_t quota = st->limits.quota_per_uid;
    if (used > quota || fp->size_per_bank > quota - used) {
        fill_region_state(st, dev, fp, err);
        err->room.requested = requested_bytes(w);
        err->room.device = w->device;
        err->room.cls = w->cls;
        err->detail = MEMD_ERR_DETAIL_QUOTA;
        return memd_error_set(err, -EDQUOT,
                            "uid %u on device %u %s: quota of %llu bytes per bank exceeded "
                            "(%llu in use, %llu more requested)",
                            s->uid, w->device, memd_kind_name(fp->kind), (unsigned long long)quota,
                            (unsigned long long)used, (unsigned long long)fp->size_per_bank);
    }
    if (memd_quota_reserve(st, dev, fp->kind, s->uid) < 0)
        return memd_self_oom(err);
    return 0;
}

/* Would s's cgroup, or an ancestor, pass its limit with fp's bytes on the device? The
 * reply then carries the region's state as for a quota. */
static int limit_check(const memd_state *st, uint32_t dev, const memd_session *s,
                       const memd_alloc_request *w, const memd_placement *fp, memd_error *err)
{
    int rc = memd_cglimit_check(st, s, dev, (uint8_t)fp->kind, memd_subdev_bytes(st, dev, fp),
                                err);
    if (rc < 0) {
        fill_region_state(st, dev, fp, err);
        err->room.requested = requested_bytes(w);
        err->room.device = w->device;
        err->room.cls = w->cls;
    }
    return rc;
}

/* ---- reserve, then commit or abort ---- */

/* What one new allocation (or one attach to a shared name) takes, taken whole by
 * alloc_reserve and then either committed (the session holds it, quotas and
 * sub-device charged, listeners told) or aborted (every piece given back). Nothing
 * else may change the state between the two. */
typedef struct memd_alloc_resv {
    memd_state *st;
    memd_session *s;
    uint32_t dev;                  /* device index */
    memd_alloc *a;                 /* the record (new, or the shared one attached to) */
    bool attach;                   /* a is an existing shared allocation */
    memd_hold *hold;               /* attach: the hold to link */
    bool quota_slot;               /* the uid's quota slot was made: commit charges it */
    uint8_t quota_kind;            /* the bank group of that slot */
    bool placed;                   /* pl is the engine's placement of a */
    bool in_handles;               /* a is in the handle table */
    memd_placement pl;             /* last: alloc_reserve clears what comes before */
} memd_alloc_resv;

/* Gives back every piece r took. */
static void alloc_abort(memd_alloc_resv *r);

/* Attaching r's session to the shared allocation a that the request names: checks the
 * shape and the quota, and takes the hold commit links. */
static int reserve_attach(memd_alloc_resv *r, memd_alloc *a, const memd_alloc_request *w,
                          const memd_alloc_req *er, memd_error *err)
{
    memd_state *st = r->st;
    memd_placement fp;
    int rc = memd_device_footprint(st->devs[a->dev].dev, er, &fp);
    if (rc < 0)
        return engine_error(st, a->dev, w, er, rc, err);
    if (!same_shape(a, w, &fp))
        return memd_error_set(err, -EEXIST,
                            "device %u: shared name '%s' is held with class %s and %llu bytes "
                            "per bank; this request asks for class %s and %llu",
                            st->devs[a->dev].spec->id, memd_alloc_name(a),
                            memd_class_name((memd_class)a->cls),
                            (unsigned long long)a->pl.size_per_bank,
                            memd_class_name((memd_class)w->cls),
                            (unsigned long long)fp.size_per_bank);
    r->a = a;
    r->attach = true;
    /* A uid attaching to a buffer it does not hold yet is charged for it. */
    if (st->limits.quota_per_uid && !uid_holds(a, r->s->uid, NULL)) {
        if ((rc = quota_check(st, a->dev, r->s, w, &fp, err)) < 0)
            return rc;
        r->quota_slot = true;
        r->quota_kind = (uint8_t)fp.kind;
    }
    if ((rc = limit_check(st, a->dev, r->s, w, &fp, err)) < 0)
        return rc;
    if (!(r->hold = hold_new(st, a)))
        return memd_self_oom(err);
    return 0;
}

/* The checks of a request that do not depend on the device's state. */
/* An allocation at an address that the engine refused: where it is misaligned, outside
 * its region or taken, the engine says so; a request refused anyway, as any other. */
static int fixed_error(const memd_state *st, uint32_t dev, const memd_alloc_request *w,
                       const memd_alloc_req *r, int rc, memd_error *err)
{
    memd_placement fp;
    if ((rc != -EINVAL && rc != -ERANGE && rc != -EBUSY) ||
        memd_device_footprint(st->devs[dev].dev, r, &fp) < 0)
        return engine_error(st, dev, w, r, rc, err);
    char why[160];
    memd_device_describe_fixed_error(st->devs[dev].dev, r, w->address, rc, why, sizeof why);
    return memd_error_set(err, rc, "device %u: %s", st->devs[dev].spec->id, why);
}

static int check_request(const memd_state *st, const memd_session *s,
                         const memd_alloc_request *w, const memd_alloc_banks *b,
                         memd_error *err)
{
    if (st->limits.max_allocs_per_session && s->nholds >= st->limits.max_allocs_per_session)
        return memd_error_set(err, -EMFILE,
                            "session %u holds %u allocations, the limit "
                            "(max_allocs_per_session)",
                            s->id, s->nholds);
    if (w->shared && w->name[0] == '\0')
        return memd_error_set(err, -EINVAL, "a shared allocation needs a name");
    if (w->shared && b)
        return memd_error_set(err, -EINVAL, "a bank-set allocation cannot be shared");
    if (w->shared && w->fixed)
        return memd_error_set(err, -EINVAL, "an allocation at an address cannot be shared: "
                            "its name's holders have their own address");
    size_t at;
    const char *why;
    if (w->name[0] && memd_text_check(w->name, &at, &why) < 0)
        return memd_error_set(err, -EINVAL, "allocation name: byte %zu is %s (0x%02x); names are "
                            "UTF-8 text without control characters",
                            at, why, (unsigned char)w->name[at]);
    if (w->shared && w->pool)
        return memd_error_set(err, -EINVAL, "a pool cannot be shared: it is its session's");
    if (b && b->per_bank && w->pool)
        return memd_error_set(err, -EINVAL, "a pool is one address range in every bank of its "
                            "set: it cannot be per bank");
    return 0;
}

/* Takes, in order, what the new allocation needs, recording each piece in r so that
 * alloc_abort can give back whatever was taken when a later step fails. */
static int reserve(memd_alloc_resv *r, const memd_alloc_request *w, const memd_alloc_banks *b,
                   memd_error *err)
{
    memd_state *st = r->st;
    memd_session *s = r->s;
    int dev = memd_state_dev_index(st, w->device);
    if (dev < 0)
        return memd_error_set(err, dev, "no device %u (%u configured)", w->device, st->ndevs);
    r->dev = (uint32_t)dev;
    int rc = check_request(st, s, w, b, err);
    if (rc < 0)
        return rc;
    if (session_groups(st, s) < 0)
        return memd_self_oom(err);
    if ((rc = memd_hooks_prepare(st, s, err)) < 0) /* e.g. room in the state store */
        return rc;

    /* A session bound to a sub-device allocates only inside it. */
    memd_alloc_banks inside;
    if (s->subdev && w->shared)
        return memd_error_set(err, -EACCES, "session %u is bound to a sub-device: shared names "
                            "reach outside it", s->id);
    if (s->subdev) {
        if ((rc = memd_subdev_restrict(st, s, r->dev, w, b, &inside, err)) < 0)
            return rc;
        b = &inside;
    }
    memd_alloc_req er;
    to_engine_req(w, b, &er);
    if (s->subdev)
        er.window = st->subdevs[s->subdev - 1].window;
    if (w->shared) {
        memd_alloc *a = memd_names_find(&st->names, r->dev, s->uid, w->name);
        if (a)
            return reserve_attach(r, a, w, &er, err);
    }

    memd_device *d = st->devs[dev].dev;
    if (st->limits.quota_per_uid || s->subdev || memd_cglimit_applies(st, s)) {
        memd_placement fp;
        if ((rc = memd_device_footprint(d, &er, &fp)) < 0)
            return engine_error(st, r->dev, w, &er, rc, err);
        if (st->limits.quota_per_uid) {
            if ((rc = quota_check(st, r->dev, s, w, &fp, err)) < 0)
                return rc;
            r->quota_slot = true;
            r->quota_kind = (uint8_t)fp.kind;
        }
        if (s->subdev &&
            (rc = memd_subdev_check_budget(st, s, memd_subdev_bytes(st, r->dev, &fp), err)) < 0)
            return rc;
        if ((rc = limit_check(st, r->dev, s, w, &fp, err)) < 0)
            return rc;
    }
    memd_alloc *a = memd_pool_get(&st->alloc_pool);
    if (!a)
        return memd_self_oom(err);
    r->a = a;
    if (!(a->creator = creator_of(s)))
        return memd_self_oom(err);
    if (w->fixed)
        rc = memd_device_alloc_fixed(d, &er, w->address, &r->pl);
    else
        rc = memd_device_alloc(d, &er, &r->pl);
    if (rc == -ENOMEM && er.window) {
        memd_placement fp;
        (void)memd_device_footprint(d, &er, &fp);
        return memd_subdev_window_full(st, s, fp.size_per_bank, err);
    }
    if (rc < 0)
        return w->fixed ? fixed_error(st, r->dev, w, &er, rc, err)
                        : engine_error(st, r->dev, w, &er, rc, err);
    r->placed = true;
    a->handle = st->next_handle++;
    a->dev = (uint16_t)dev;
    a->uid = s->uid; /* before the name: the name table keys on it */
    if ((w->name[0] && !(a->ext = memd_alloc_ext_make(w->name))) ||
        keep_placement(a, &r->pl) < 0 ||
        (s->subdev && !memd_alloc_ext_get(a)) || /* a sub-device's charge is kept there */
        memd_handles_put(&st->handles, a->handle, a) < 0)
        return memd_self_oom(err);
    r->in_handles = true;
    if (w->shared) {
        if (memd_names_add(&st->names, a) < 0)
            return memd_self_oom(err);
        a->shared = true;
    }
    a->requested = requested_bytes(w);
    a->created_ns = memd_state_now(st);
    a->cls = w->cls;
    a->scope = w->scope;
    a->pool = w->pool;
    return 0;
}

/* The first half of memd_alloc_create_banks: 0 with r holding everything, or a negative
 * errno with err filled and nothing taken. Static, as alloc_commit and alloc_abort: each
 * has one caller, into which the compiler folds it. */
static int alloc_reserve(memd_state *st, memd_session *s, const memd_alloc_request *w,
                         const memd_alloc_banks *b, memd_alloc_resv *r, memd_error *err)
{
    /* Every field but the placement, which only the engine fills (r->placed says when):
     * zeroing it too took ~20 instructions per allocation. */
    memset(r, 0, offsetof(memd_alloc_resv, pl));
    r->st = st;
    r->s = s;
    int rc = reserve(r, w, b, err);
    if (rc < 0)
        alloc_abort(r);
    return rc;
}

/* Cannot fail: returns the allocation, held once more by the session (s->holds). */
static memd_alloc *alloc_commit(memd_alloc_resv *r)
{
    memd_state *st = r->st;
    memd_session *s = r->s;
    memd_alloc *a = r->a;
    hold_link(st, a, s, r->attach ? r->hold : &a->first);
    if (r->quota_slot)
        memd_quota_add(st, a->dev, (memd_kind)a->pl.kind, s->uid, a->pl.size_per_bank);
    if (memd_history_on(st))
        memd_history_alloc(st, s, a);
    if (r->attach) {
        memd_hooks_alloc_changed(st, a);
        return a;
    }
    memd_subdev_charge(st, a, s->subdev); /* its ext was made by reserve */
    device_use(st, a, true);
    st->ctr.allocs++;
    memd_hooks_alloc_created(st, a);
    return a;
}

static void alloc_abort(memd_alloc_resv *r)
{
    memd_state *st = r->st;
    memd_alloc *a = r->a;
    if (r->quota_slot)
        memd_quota_sub(st, r->dev, (memd_kind)r->quota_kind, r->s->uid, 0); /* drops the slot reserved if unused */
    if (r->attach) {
        if (r->hold && r->hold != &a->first)
            memd_pool_put(&st->hold_pool, r->hold);
        return;
    }
    if (!a)
        return;
    if (a->shared)
        memd_names_remove(&st->names, a);
    if (r->in_handles)
        memd_handles_remove(&st->handles, a->handle);
    if (r->placed) {
        (void)memd_device_release(st->devs[r->dev].dev, &r->pl);
        memd_placement_fini(&r->pl); /* its arrays, whether or not a->ext took them */
    }
    free(a->ext);
    memd_creator_put(a->creator);
    memd_pool_put(&st->alloc_pool, a);
}

/* ---- restore (state store) ---- */

int memd_alloc_adopt(memd_state *st, uint32_t dev, const memd_alloc_proto *proto,
                     memd_alloc **out)
{
    const char *name = proto->name ? proto->name : "";
    if (memd_handles_get(&st->handles, proto->handle) ||
        (proto->shared && memd_names_find(&st->names, dev, proto->uid, name)))
        return -EEXIST;
    if (proto->handle == 0 || (proto->shared && !name[0]))
        return -EINVAL;
    memd_alloc *a = memd_pool_get(&st->alloc_pool);
    if (!a)
        return -ENOMEM;
    /* Restored records come in creator runs: one creator record for each run. */
    memd_creator *c = st->restore_creator;
    if (creator_is(c, proto->pid, proto->gid, proto->session_id, proto->comm)) {
        c->refs++;
    } else if ((c = creator_make(proto->pid, proto->gid, proto->session_id, proto->comm))) {
        memd_creator_put(st->restore_creator);
        st->restore_creator = c;
        c->refs++;
    }
    if (!c || (name[0] && !(a->ext = memd_alloc_ext_make(name)))) {
        memd_creator_put(c);
        free(a->ext);
        memd_pool_put(&st->alloc_pool, a);
        return -ENOMEM;
    }
    a->creator = c;
    /* The stored placement, not a new one: living clients use these addresses. */
    memd_placement pl;
    int rc = memd_placement_copy(&pl, &proto->pl);
    if (rc == 0 && (rc = memd_device_alloc_at(st->devs[dev].dev, &pl)) < 0) {
        memd_placement_fini(&pl);
        if (rc == -ENOBUFS) /* the engine's own memory: memd's, as -ENOMEM here */
            rc = -ENOMEM;
    }
    else if (rc == 0 && (rc = keep_placement(a, &pl)) < 0) {
        (void)memd_device_release(st->devs[dev].dev, &pl);
        memd_placement_fini(&pl);
    }
    if (rc < 0) {
        memd_creator_put(c);
        free(a->ext);
        memd_pool_put(&st->alloc_pool, a);
        return rc;
    }
    a->handle = proto->handle;
    a->requested = proto->requested;
    a->created_ns = proto->created_ns;
    a->store_key = proto->store_key;
    a->uid = proto->uid;
    a->dev = (uint16_t)dev;
    a->cls = proto->cls;
    a->scope = proto->scope;
    a->pool = proto->pool;
    a->shared = proto->shared;
    if (memd_handles_put(&st->handles, a->handle, a) < 0 ||
        (a->shared && memd_names_add(&st->names, a) < 0)) {
        memd_handles_remove(&st->handles, a->handle);
        (void)memd_device_release(st->devs[dev].dev, &pl);
        memd_placement_fini(&pl);
        memd_creator_put(c);
        free(a->ext);
        memd_pool_put(&st->alloc_pool, a);
        return -ENOMEM;
    }
    device_use(st, a, true);
    *out = a; /* charged to its holders' uids as memd_alloc_adopt_hold gives it holds;
                 to a sub-device when a bound session takes its hold */
    return 0;
}

int memd_alloc_adopt_hold(memd_state *st, memd_alloc *a, memd_session *s, uint64_t req)
{
    if (session_groups(st, s) < 0)
        return -ENOMEM;
    bool charge = st->limits.quota_per_uid && !uid_holds(a, s->uid, NULL);
    if (charge && memd_quota_reserve(st, a->dev, (memd_kind)a->pl.kind, s->uid) < 0)
        return -ENOMEM;
    memd_hold *h = hold_new(st, a);
    if (!h || (s->subdev && !memd_alloc_ext_get(a))) {
        if (h && h != &a->first)
            memd_pool_put(&st->hold_pool, h);
        return -ENOMEM;
    }
    hold_link(st, a, s, h);
    h->req = req;
    if (charge) /* past a quota or not: what was held before the restart stays held */
        memd_quota_add(st, a->dev, (memd_kind)a->pl.kind, s->uid, a->pl.size_per_bank);
    memd_subdev_charge(st, a, s->subdev);
    return 0;
}

size_t memd_holds_of_request(const memd_session *s, uint64_t req, memd_hold **out, size_t cap)
{
    size_t n = 0;
    for (memd_hold *h = s->holds; h; h = h->next)
        if (h->req == req && req != 0) {
            if (n < cap)
                out[n] = h;
            n++;
        }
    return n;
}

/* ---- views ---- */

void memd_alloc_bank_at(const memd_state *st, const memd_alloc *a, uint32_t i,
                        memd_bank_addr *out)
{
    const memd_bank_group_spec *g = &st->devs[a->dev].spec->groups[a->pl.kind];
    const memd_alloc_ext *e = a->pl.mode == MEMD_BANKS_ALL ? NULL : a->ext;
    uint32_t bank = e ? e->set[i] : i;
    memset(out, 0, sizeof *out);
    out->bank = bank;
    out->address = e && e->addrs ? e->addrs[i] : a->pl.address;
    out->logical_x = out->logical_y = out->noc_x = out->noc_y = MEMD_NO_CORE;
    if (g->cores) {
        out->logical_x = g->cores[bank].logical_x;
        out->logical_y = g->cores[bank].logical_y;
        out->noc_x = g->cores[bank].noc_x;
        out->noc_y = g->cores[bank].noc_y;
    }
    /* Cannot fail for a bank of a live placement; 0 would show a bug plainly. */
    (void)memd_device_bank_address(st->devs[a->dev].dev, a->pl.kind, bank, out->address,
                                   &out->absolute);
}

int memd_alloc_create_banks(memd_state *st, memd_session *s, const memd_alloc_request *w,
                            const memd_alloc_banks *b, memd_alloc **out, memd_error *err)
{
    memd_alloc_resv r;
    int rc = alloc_reserve(st, s, w, b, &r, err);
    if (rc == 0) {
        *out = alloc_commit(&r);
        return 0;
    }
    /* The event log's copy of the reply's message: for -ENOMEM and -EDQUOT it names the
     * region and its state (requested, free, largest free block). */
    memd_history_fail(st, s, w, rc, err);
    memd_postmortem_capture(st, s, w, b, rc, err);
    bool room = rc == -ENOMEM && err->detail == MEMD_ERR_DETAIL_NOMEM;
    char pm[48] = "";
    if (err->room.postmortem)
        snprintf(pm, sizeof pm, " (postmortem %llu)", (unsigned long long)err->room.postmortem);
    memd_event(st, s, rc == -EDQUOT ? MEMD_EVENT_QUOTA : MEMD_EVENT_ALLOC_FAIL,
               room || rc == -EDQUOT ? LOG_WARNING : LOG_NOTICE, w->device,
               err->room.requested, "refused to session %u (pid %u, %s, uid %u)%s: %.*s",
               s->id, s->pid, s->comm[0] ? s->comm : "?", s->uid, pm,
               MEMD_ERROR_REPLY_MSG - 1, err->msg); /* what the client was told */
    return rc;
}

int memd_alloc_create(memd_state *st, memd_session *s, const memd_alloc_request *w,
                      memd_alloc **out, memd_error *err)
{
    return memd_alloc_create_banks(st, s, w, NULL, out, err);
}
