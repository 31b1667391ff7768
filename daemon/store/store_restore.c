/* memd daemon — restoring the map from the state store at start (see store.h).
 *
 * Nothing is decided anew: every allocation is reserved again at its stored address with
 * memd_device_alloc_at, so the engine's map is the one the clients were given. Anything
 * that does not fit (a record that does not decode, an overlap, a device whose memory
 * map changed) stops the start with a message naming the file: guessing would hand out
 * memory that a living process may still use. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "log.h"
#include "session.h"
#include "store_internal.h"

#define WAY_OUT "; once no client holds device memory, start memd with --discard-state"

typedef struct restore {
    memd_state *st;
    memd_store *S;
    MDB_txn *txn;
    memd_store_meta meta;
    bool fresh;                    /* no meta record: a new store */
    uint64_t max_handle;
    uint32_t max_session;
    size_t nallocs, nsessions, nobjects;
    memd_error *err;
} restore;

static int fail(restore *r, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(restore *r, int rc, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memd_error_set(r->err, rc, "state store %s: %s", r->S->path, msg);
    return rc;
}

static int lmdb_fail(restore *r, int rc, const char *what)
{
    return fail(r, -EIO, "%s: %s" WAY_OUT, what, mdb_strerror(rc));
}

static int open_dbis(restore *r)
{
    memd_store *S = r->S;
    int rc = mdb_dbi_open(r->txn, "allocations", MDB_CREATE, &S->dbi_allocs);
    if (rc == 0)
        rc = mdb_dbi_open(r->txn, "sessions", MDB_CREATE, &S->dbi_sessions);
    if (rc == 0)
        rc = mdb_dbi_open(r->txn, "meta", MDB_CREATE, &S->dbi_meta);
    if (rc == 0) /* (a store written before models were kept has none yet) */
        rc = mdb_dbi_open(r->txn, "objects", MDB_CREATE, &S->dbi_objects);
    return rc ? lmdb_fail(r, rc, "cannot open its tables") : 0;
}

static size_t entries(restore *r, MDB_dbi dbi)
{
    MDB_stat ms;
    return mdb_stat(r->txn, dbi, &ms) == 0 ? ms.ms_entries : 0;
}

static int read_meta(restore *r)
{
    memd_store *S = r->S;
    MDB_val key = {4, "meta"}, val;
    int rc = mdb_get(r->txn, S->dbi_meta, &key, &val);
    size_t na = entries(r, S->dbi_allocs), ns = entries(r, S->dbi_sessions);
    if (rc == MDB_NOTFOUND) {
        if (na || ns)
            return fail(r, -EINVAL, "%zu allocation and %zu session records but no meta "
                                    "record: damaged" WAY_OUT, na, ns);
        r->fresh = true;
        return 0;
    }
    if (rc != 0)
        return lmdb_fail(r, rc, "cannot read its meta record");
    rc = memd_store_meta_get(val.mv_data, val.mv_size, &r->meta);
    if (rc == -EPROTONOSUPPORT)
        return fail(r, -EINVAL, "written by another memd version (store format %u, this memd "
                                "reads %u)" WAY_OUT, r->meta.format, MEMD_STORE_FORMAT);
    if (rc < 0)
        return fail(r, -EINVAL, "its meta record is damaged" WAY_OUT);
    if (S->boot_id[0] && r->meta.boot_id[0] && strcmp(S->boot_id, r->meta.boot_id) != 0) {
        /* Written before the host last booted: the devices were reset since, and every
         * process it names is gone. Nothing in it can be in use. */
        memd_log(LOG_WARNING, "state store %s was written before the last boot: discarding "
                              "its %zu allocations and %zu sessions",
                 S->path, na, ns);
        if ((rc = mdb_drop(r->txn, S->dbi_allocs, 0)) != 0 ||
            (rc = mdb_drop(r->txn, S->dbi_sessions, 0)) != 0 ||
            (rc = mdb_drop(r->txn, S->dbi_objects, 0)) != 0)
            return lmdb_fail(r, rc, "cannot discard its records");
        r->fresh = true;
        return 0;
    }
    S->handle_hwm = r->meta.handle_hwm;
    S->session_hwm = r->meta.session_hwm;
    return 0;
}

static int restore_session(restore *r, const MDB_val *k, const MDB_val *v)
{
    memd_store *S = r->S;
    memd_store_sess_rec rec;
    int rc = memd_store_sess_rec_get(v->mv_data, v->mv_size, &rec);
    uint32_t key = k->mv_size == 4 ? memd_store_key_get_u32(k->mv_data) : 0;
    if (rc < 0 || key != rec.id)
        return fail(r, -EINVAL, "session record %u is damaged (%s)" WAY_OUT, key,
                    rc < 0 ? strerror(-rc) : "key mismatch");
    if (memd_store_sess_get(S, rec.id))
        return fail(r, -EINVAL, "session %u is recorded twice" WAY_OUT, rec.id);
    memd_session *o = calloc(1, sizeof *o);
    memd_store_sess *ss = calloc(1, sizeof *ss);
    if (!o || !ss || memd_map_put(&S->sessions, rec.id, (uint64_t)(uintptr_t)ss) < 0) {
        free(o);
        free(ss);
        return fail(r, -ENOMEM, "out of memory");
    }
    o->pid = rec.pid;
    o->uid = rec.uid;
    o->gid = rec.gid;
    o->connected_ns = rec.connected_ns;
    memcpy(o->comm, rec.comm, sizeof o->comm);
    memcpy(o->client_name, rec.client_name, sizeof o->client_name);
    memd_session_adopt(r->st, o, rec.id);
    ss->s = o;
    ss->orphan = true;
    ss->starttime = rec.starttime;
    memcpy(ss->token, rec.token, sizeof ss->token);
    S->norphans++;
    r->nsessions++;
    if (rec.id > r->max_session)
        r->max_session = rec.id;
    return 0;
}

/* The device an allocation names must exist with the memory map it was placed in. */
static int check_device(restore *r, const memd_store_alloc_rec *rec, int *dev)
{
    const memd_state *st = r->st;
    *dev = memd_state_dev_index(st, rec->device);
    if (*dev < 0)
        return fail(r, -EINVAL, "allocation %llu is on device %u, which the config no longer "
                                "has" WAY_OUT, (unsigned long long)rec->handle, rec->device);
    for (uint32_t i = 0; i < r->meta.ndevs; i++) {
        memd_store_dev_fp fp = memd_store_meta_dev(&r->meta, i);
        if (fp.id != rec->device)
            continue;
        if (fp.fingerprint == r->S->fps[*dev].fingerprint)
            return 0;
        return fail(r, -EINVAL, "device %u (%s) has another memory map (banks, regions or "
                                "alignment) than when the store was written, so the "
                                "allocations on it cannot be applied: restore the device's "
                                "old config, or, once no client holds device memory, start "
                                "memd with --discard-state",
                    rec->device, st->devs[*dev].spec->name);
    }
    return fail(r, -EINVAL, "allocation %llu names device %u, which its meta record does "
                            "not list: damaged" WAY_OUT, (unsigned long long)rec->handle,
                rec->device);
}

/* One allocation record of the chunk record at key. */
static int restore_one(restore *r, uint64_t key, const uint8_t *p, size_t len)
{
    memd_store *S = r->S;
    memd_store_alloc_rec rec;
    int rc = memd_store_alloc_rec_get(p, len, &rec);
    if (rc < 0 || rec.handle < key || rec.handle - key >= MEMD_STORE_CHUNK)
        return fail(r, -EINVAL, "allocation record %llu is damaged (%s)" WAY_OUT,
                    (unsigned long long)key, rc < 0 ? strerror(-rc) : "key mismatch");
    int dev;
    if ((rc = check_device(r, &rec, &dev)) < 0)
        return rc;
    memd_placement pl;
    if (memd_store_rec_placement(&rec, &pl) < 0)
        return fail(r, -ENOMEM, "out of memory");
    memd_alloc_proto proto = {.handle = rec.handle, .requested = rec.requested,
                              .created_ns = rec.created_ns, .pl = pl, .pid = rec.pid,
                              .uid = rec.uid, .gid = rec.gid, .session_id = rec.session_id,
                              .cls = rec.cls, .scope = rec.scope,
                              .shared = rec.flags & MEMD_STORE_REC_SHARED,
                              .pool = rec.flags & MEMD_STORE_REC_POOL, .store_key = key,
                              .name = rec.name, .comm = rec.comm};
    memd_alloc *a;
    rc = memd_alloc_adopt(r->st, (uint32_t)dev, &proto, &a); /* copies the placement */
    memd_placement_fini(&pl);
    if (rc < 0)
        return fail(r, rc, "allocation %llu (device %u, %s region %u, 0x%llx + %llu per bank) "
                           "cannot be reserved again: %s" WAY_OUT,
                    (unsigned long long)rec.handle, rec.device, memd_kind_name(rec.pl.kind),
                    rec.pl.region, (unsigned long long)rec.pl.address,
                    (unsigned long long)rec.pl.size_per_bank,
                    rc == -EBUSY    ? "it overlaps another one"
                    : rc == -EEXIST ? "its handle or shared name is recorded twice"
                                    : strerror(-rc));
    for (uint32_t i = 0; i < rec.nholders; i++) {
        uint32_t sid, count;
        uint64_t req;
        memd_store_holder_at(&rec, i, &sid, &count, &req);
        memd_store_sess *ss = memd_store_sess_get(S, sid);
        if (!ss)
            return fail(r, -EINVAL, "allocation %llu is held by session %u, which has no "
                                    "record: damaged" WAY_OUT,
                        (unsigned long long)rec.handle, sid);
        for (uint32_t c = 0; c < count; c++)
            if (memd_alloc_adopt_hold(r->st, a, ss->s, req) < 0)
                return fail(r, -ENOMEM, "out of memory");
    }
    r->nallocs++;
    if (rec.handle > r->max_handle)
        r->max_handle = rec.handle;
    return 0;
}

/* A chunk record (store_internal.h): the records of one or more allocations. */
static int restore_alloc(restore *r, const MDB_val *k, const MDB_val *v)
{
    uint64_t key = k->mv_size == 8 ? memd_store_key_get_u64(k->mv_data) : UINT64_MAX;
    const uint8_t *p = v->mv_data;
    size_t left = v->mv_size;
    if (key == UINT64_MAX || left == 0)
        return fail(r, -EINVAL, "allocation record %llu is damaged (%s)" WAY_OUT,
                    (unsigned long long)key, key == UINT64_MAX ? "key size" : "empty");
    while (left > 0) {
        size_t len;
        int rc = memd_store_alloc_rec_len(p, left, &len);
        if (rc < 0)
            return fail(r, -EINVAL, "allocation record %llu is damaged (%s)" WAY_OUT,
                        (unsigned long long)key, strerror(-rc));
        if ((rc = restore_one(r, key, p, len)) < 0)
            return rc;
        p += len;
        left -= len;
    }
    return 0;
}

/* Another layer's record (hooks.h memd_record): checked here, handed to its owner, who
 * rebuilds what it describes on the allocations and sessions restored before. */
static int restore_object(restore *r, const MDB_val *k, const MDB_val *v)
{
    memd_record rec;
    int rc = memd_store_obj_get(k->mv_data, k->mv_size, v->mv_data, v->mv_size, &rec);
    if (rc < 0)
        return fail(r, -EINVAL, "object record %u/%llu is damaged (%s)" WAY_OUT, rec.kind,
                    (unsigned long long)rec.id,
                    rc == -EBADMSG ? "bad length, checksum or key" : strerror(-rc));
    memd_error e;
    memd_error_reset(&e);
    rc = memd_hooks_record_restore(r->st, &rec, &e);
    if (rc == 0)
        return fail(r, -EINVAL, "object record %u/%llu: nothing in this memd reads records "
                                "of kind %u" WAY_OUT, rec.kind, (unsigned long long)rec.id,
                    rec.kind);
    if (rc < 0)
        return fail(r, rc, "%s" WAY_OUT, e.msg);
    r->nobjects++;
    return 0;
}

static int each(restore *r, MDB_dbi dbi, int (*fn)(restore *, const MDB_val *, const MDB_val *))
{
    MDB_cursor *cur;
    int rc = mdb_cursor_open(r->txn, dbi, &cur);
    if (rc != 0)
        return lmdb_fail(r, rc, "cannot read its records");
    MDB_val k, v;
    int out = 0;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0 && out == 0;
         rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
        out = fn(r, &k, &v);
    mdb_cursor_close(cur);
    if (out < 0)
        return out;
    return rc == MDB_NOTFOUND ? 0 : lmdb_fail(r, rc, "cannot read its records");
}

/* Orphans whose process is gone go at once; the others get the grace period. */
static uint32_t release_dead(memd_state *st, uint32_t *released_holds)
{
    memd_store *S = st->store;
    uint64_t deadline = memd_now_ns() + (uint64_t)st->limits.reclaim_grace_ms * 1000000ull;
    size_t cap = S->norphans, n = 0;
    memd_store_sess **dead = cap ? malloc(cap * sizeof *dead) : NULL;
    for (size_t i = 0; i < S->sessions.cap; i++) {
        if (!S->sessions.slots[i].key)
            continue;
        memd_store_sess *ss = (memd_store_sess *)(uintptr_t)S->sessions.slots[i].val;
        ss->deadline_ns = deadline;
        if (dead && n < cap && (st->limits.reclaim_grace_ms == 0 || memd_store_orphan_dead(ss)))
            dead[n++] = ss;
    }
    *released_holds = 0;
    for (size_t i = 0; i < n; i++) {
        *released_holds += dead[i]->s->nholds;
        memd_store_orphan_release(st, dead[i], st->limits.reclaim_grace_ms
                                                   ? "has no process any more"
                                                   : "cannot be reclaimed (reclaim_grace_ms 0)");
    }
    free(dead);
    return (uint32_t)n;
}

int memd_store_restore(memd_state *st, memd_error *err)
{
    memd_store *S = st->store;
    restore r = {.st = st, .S = S, .err = err};
    int rc = mdb_txn_begin(S->env, NULL, 0, &r.txn);
    if (rc != 0)
        return lmdb_fail(&r, rc, "cannot begin a transaction");
    if ((rc = open_dbis(&r)) == 0 && (rc = read_meta(&r)) == 0 && !r.fresh &&
        (rc = each(&r, S->dbi_sessions, restore_session)) == 0)
        rc = each(&r, S->dbi_allocs, restore_alloc);
    if (rc == 0 && !r.fresh)
        rc = each(&r, S->dbi_objects, restore_object);
    if (rc < 0) {
        mdb_txn_abort(r.txn);
        return rc;
    }
    if ((rc = mdb_txn_commit(r.txn)) != 0)
        return lmdb_fail(&r, rc, "cannot commit");
    /* Counters continue past everything ever given out (the marks) and everything
     * restored. */
    uint64_t next_handle = S->handle_hwm > r.max_handle ? S->handle_hwm : r.max_handle + 1;
    uint32_t next_session = S->session_hwm > r.max_session ? S->session_hwm : r.max_session + 1;
    if (next_handle > st->next_handle)
        st->next_handle = next_handle;
    if (next_session > st->next_session_id)
        st->next_session_id = next_session;

    uint32_t held = 0, gone = release_dead(st, &held);
    S->meta_dirty = true; /* this config's fingerprints and boot */
    if (memd_store_flush(st, err) < 0)
        return -EIO;
    S->restored = true;
    if (r.fresh)
        memd_log(LOG_INFO, "state store %s: new, empty", S->path);
    else
        memd_log(LOG_INFO, "state store %s: restored %zu allocations held by %zu sessions "
                           "and %zu records of models, plans and instances (%u sessions "
                           "released at once, %u holds); %u orphaned sessions may reclaim "
                           "within %u ms; next handle %llu",
                 S->path, r.nallocs, r.nsessions, r.nobjects, gone, held, S->norphans,
                 st->limits.reclaim_grace_ms, (unsigned long long)st->next_handle);
    return 0;
}
