/* memd daemon — writing the state store: every dirty key's record rewritten from
 * memory in one LMDB transaction (see store.h, store_internal.h). */
#include "store_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"
#include "wire.h"

static int reserve_buf(memd_store *S, size_t n)
{
    if (n <= S->buf_cap)
        return 0;
    size_t cap = S->buf_cap ? S->buf_cap : 512;
    while (cap < n)
        cap *= 2;
    uint8_t *b = realloc(S->buf, cap);
    if (!b)
        return ENOMEM;
    S->buf = b;
    S->buf_cap = cap;
    return 0;
}

static int cmp_holder(const void *a, const void *b)
{
    const memd_store_holder *x = a, *y = b;
    if (x->session != y->session)
        return x->session < y->session ? -1 : 1;
    return x->req < y->req ? -1 : x->req > y->req;
}

static bool same_holder(const memd_store_holder *x, const memd_store_holder *y)
{
    return x->session == y->session && x->req == y->req;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* One transaction's cursors: consecutive keys are found from where the last one was,
 * and keys above every stored one are appended without a search (MDB_APPEND). */
typedef struct writer {
    memd_state *st;
    MDB_txn *txn;
    MDB_cursor *allocs, *sessions;
    uint64_t top;                  /* no allocation key in the table is larger */
    bool stored;                   /* false: the table is empty (top means nothing) */
    const memd_alloc *live[MEMD_STORE_CHUNK]; /* the chunk being written */
    uint8_t comm_len[MEMD_STORE_CHUNK], name_len[MEMD_STORE_CHUNK];
} writer;

/* Holds of a by session id and request, sorted, into S->holders (a session may hold a
 * shared buffer more than once); returns how many, and the distinct ones in *unique. */
static int holders_of(memd_store *S, const memd_alloc *a, uint32_t *n_out, uint32_t *unique)
{
    if (a->refcount > S->holders_cap) {
        memd_store_holder *h = realloc(S->holders, a->refcount * sizeof *h);
        if (!h)
            return ENOMEM;
        S->holders = h;
        S->holders_cap = a->refcount;
    }
    uint32_t n = 0;
    for (const memd_hold *h = memd_alloc_holders(a); h && n < a->refcount;
         h = memd_alloc_next_holder(a, h))
        S->holders[n++] = (memd_store_holder){h->session->id, h->req};
    if (n > 1)
        qsort(S->holders, n, sizeof *S->holders, cmp_holder);
    uint32_t u = 0;
    for (uint32_t i = 0; i < n; i++)
        if (i == 0 || !same_holder(&S->holders[i], &S->holders[i - 1]))
            u++;
    *n_out = n;
    *unique = u;
    return 0;
}

static void to_rec(const memd_state *st, const memd_alloc *a, uint32_t unique,
                   memd_store_alloc_rec *r)
{
    /* Field by field: a compound literal would clear the whole struct first (a
     * measurable share of a batch's flush), and every field is set here anyway. */
    r->handle = a->handle;
    r->device = st->devs[a->dev].spec->id;
    const memd_creator *c = memd_alloc_creator(a);
    memd_alloc_placement(a, &r->pl);
    r->requested = a->requested;
    r->created_ns = a->created_ns;
    r->pid = c->pid;
    r->uid = a->uid;
    r->gid = c->gid;
    r->session_id = c->session_id;
    r->cls = a->cls;
    r->scope = a->scope;
    r->flags = (uint8_t)((a->shared ? MEMD_STORE_REC_SHARED : 0) |
                         (a->pool ? MEMD_STORE_REC_POOL : 0));
    r->nholders = unique;
    r->holders = NULL;
    memd_wire_strset(r->comm, sizeof r->comm, c->comm);
    memd_wire_strset(r->name, sizeof r->name, memd_alloc_name(a));
}

/* Encodes the record of w->live[i] at *p and moves *p past it (write_chunk reserved
 * its size). */
static int put_alloc(writer *w, uint32_t i, uint8_t **p)
{
    const memd_alloc *a = w->live[i];
    memd_store *S = w->st->store;
    memd_store_alloc_rec r;
    uint32_t n = 1, unique = 1;
    if (a->refcount == 1) {
        const memd_hold *h = memd_alloc_holders(a);
        S->holders[0] = (memd_store_holder){h->session->id, h->req}; /* no sort */
    } else {
        int rc = holders_of(S, a, &n, &unique);
        if (rc != 0)
            return rc;
    }
    to_rec(w->st, a, unique, &r);
    uint8_t *q = memd_store_alloc_rec_put_len(*p, &r, w->comm_len[i], w->name_len[i]);
    for (uint32_t k = 0; k < n;) {
        uint32_t j = k;
        while (j < n && same_holder(&S->holders[j], &S->holders[k]))
            j++;
        q = memd_store_holder_put(q, S->holders[k].session, j - k, S->holders[k].req);
        k = j;
    }
    memd_store_alloc_rec_seal(*p, (size_t)(q - *p));
    *p = q;
    return 0;
}

/* Encoded size of the record of w->live[i] (keeping its string lengths for put_alloc). */
static int alloc_size(writer *w, uint32_t i, size_t *size)
{
    const memd_alloc *a = w->live[i];
    uint32_t n, unique = 1;
    if (a->refcount != 1) {
        int rc = holders_of(w->st->store, a, &n, &unique);
        if (rc != 0)
            return rc;
    }
    w->comm_len[i] = (uint8_t)memd_store_str_len(memd_alloc_creator(a)->comm,
                                                 sizeof memd_alloc_creator(a)->comm);
    w->name_len[i] = (uint8_t)memd_store_str_len(memd_alloc_name(a), MEMD_NAME_MAX);
    *size = MEMD_STORE_ALLOC_REC_BASE + w->comm_len[i] + w->name_len[i] +
            memd_store_bankset_size(a->pl.mode, memd_alloc_nset(a), memd_alloc_sizes(a) != NULL) +
            (size_t)unique * MEMD_STORE_HOLDER_SIZE;
    return 0;
}

/* Rewrites the record under key (store_internal.h) from memory: the records of the live
 * allocations stored there, one after the other, or no record when there are none. */
static int write_chunk(writer *w, uint64_t key)
{
    memd_store *S = w->st->store;
    size_t size = 0;
    uint32_t n = 0;
    for (uint64_t h = key; h - key < MEMD_STORE_CHUNK; h++) {
        const memd_alloc *a = h ? memd_alloc_find(w->st, h) : NULL;
        if (!a || a->store_key != key)
            continue;
        size_t sz;
        w->live[n] = a;
        int rc = alloc_size(w, n, &sz);
        if (rc != 0)
            return rc;
        size += sz;
        n++;
    }
    uint8_t k[8];
    memd_store_key_u64(k, key);
    MDB_val mk = {sizeof k, k};
    if (n == 0) {
        if (!w->stored || key > w->top)
            return 0; /* above every stored key: never written */
        int rc = mdb_cursor_get(w->allocs, &mk, NULL, MDB_SET);
        if (rc == 0)
            rc = mdb_cursor_del(w->allocs, 0);
        return rc == MDB_NOTFOUND ? 0 : rc;
    }
    if (S->holders_cap == 0) {
        memd_store_holder *hs = malloc(16 * sizeof *hs);
        if (!hs)
            return ENOMEM;
        S->holders = hs;
        S->holders_cap = 16;
    }
    /* MDB_RESERVE: the records are encoded straight into their place in the page. */
    bool append = !w->stored || key > w->top;
    MDB_val val = {size, NULL};
    int rc = mdb_cursor_put(w->allocs, &mk, &val, MDB_RESERVE | (append ? MDB_APPEND : 0));
    if (rc != 0)
        return rc;
    if (append) {
        w->top = key;
        w->stored = true;
    }
    uint8_t *p = val.mv_data;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        rc = put_alloc(w, i, &p);
    return rc;
}

static void sess_to_rec(const memd_store_sess *ss, memd_store_sess_rec *r)
{
    const memd_session *s = ss->s;
    *r = (memd_store_sess_rec){.id = s->id, .pid = s->pid, .uid = s->uid, .gid = s->gid,
                               .starttime = ss->starttime, .connected_ns = s->connected_ns};
    memcpy(r->token, ss->token, sizeof r->token);
    memcpy(r->comm, s->comm, sizeof r->comm);
    memcpy(r->client_name, s->client_name, sizeof r->client_name);
}

/* The sessions cursor, opened on first use: most writes change no session. */
static int sess_cursor(writer *w)
{
    return w->sessions ? 0 : mdb_cursor_open(w->txn, w->st->store->dbi_sessions, &w->sessions);
}

static int put_sess(writer *w, const memd_store_sess *ss)
{
    int rc = sess_cursor(w);
    if (rc != 0)
        return rc;
    memd_store_sess_rec r;
    sess_to_rec(ss, &r);
    uint8_t rec[MEMD_STORE_SESS_REC_SIZE], k[4];
    memd_store_sess_rec_put(rec, &r);
    memd_store_key_u32(k, r.id);
    MDB_val key = {sizeof k, k}, val = {sizeof rec, rec};
    return mdb_cursor_put(w->sessions, &key, &val, 0);
}

static int write_sess(writer *w, uint32_t id)
{
    const memd_store_sess *ss = memd_store_sess_get(w->st->store, id);
    if (ss)
        return put_sess(w, ss);
    /* Gone: delete its record if there is one. */
    uint8_t k[4];
    memd_store_key_u32(k, id);
    MDB_val key = {sizeof k, k};
    int rc = sess_cursor(w);
    if (rc == 0)
        rc = mdb_cursor_get(w->sessions, &key, NULL, MDB_SET);
    if (rc == 0)
        rc = mdb_cursor_del(w->sessions, 0);
    return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Runs of increasing keys in the dirty list, up to max + 1. */
static size_t dirty_runs(const memd_store *S, size_t max)
{
    size_t runs = 1;
    for (size_t i = 1; i < S->ndirty && runs <= max; i++)
        runs += S->dirty[i] < S->dirty[i - 1];
    return runs;
}

/* Every dirty key's record, rewritten from memory. Listing order does not change what
 * is written, and neither does a record written twice (the same records again; a
 * second delete finds nothing): equal neighbours in the list are written once, and a
 * list of a few increasing runs (a round's batches: the chunks it created, then those
 * it freed) is written as it is, each record at most once per run. Sorting that list
 * cost more than the few records written twice; only a list in no order (frees in
 * random order) is sorted, so no record is written again and again. New handles grow,
 * so nearly every new record is an append. */
static int write_dirty(writer *w)
{
    memd_store *S = w->st->store;
    if (dirty_runs(S, 8) > 8)
        qsort(S->dirty, S->ndirty, sizeof *S->dirty, cmp_u64);
    uint64_t last = UINT64_MAX;
    int rc = 0;
    for (size_t i = 0; i < S->ndirty && rc == 0; i++) {
        uint64_t key = S->dirty[i];
        if (key & MEMD_STORE_SESS_KEY) {
            rc = write_sess(w, (uint32_t)key);
            continue;
        }
        if (key != last)
            rc = write_chunk(w, key);
        last = key;
    }
    return rc;
}

typedef struct key_list {
    uint64_t *keys;
    size_t n;
} key_list;

static int add_key(void *ctx, memd_alloc *a)
{
    key_list *kl = ctx;
    kl->keys[kl->n++] = a->store_key;
    return 0;
}

static int write_all(writer *w)
{
    memd_store *S = w->st->store;
    const memd_state *st = w->st;
    int rc = mdb_drop(w->txn, S->dbi_allocs, 0);
    if (rc == 0)
        rc = mdb_drop(w->txn, S->dbi_sessions, 0);
    w->top = 0;
    w->stored = false;
    /* In key order, so every put is an append. */
    key_list kl = {.keys = malloc((st->handles.len + 1) * sizeof *kl.keys)};
    if (!kl.keys)
        return ENOMEM;
    (void)memd_handles_each(&st->handles, add_key, &kl);
    uint64_t *keys = kl.keys;
    size_t n = kl.n;
    qsort(keys, n, sizeof *keys, cmp_u64);
    for (size_t i = 0; i < n && rc == 0; i++)
        if (i == 0 || keys[i] != keys[i - 1])
            rc = write_chunk(w, keys[i]);
    free(keys);
    for (size_t i = 0; i < S->sessions.cap && rc == 0; i++)
        if (S->sessions.slots[i].key)
            rc = put_sess(w, (const memd_store_sess *)(uintptr_t)S->sessions.slots[i].val);
    return rc;
}

/* Other layers' records, in the order they changed (a later change of a key replaces an
 * earlier one in the same transaction). */
static int write_objs(memd_state *st, MDB_txn *txn)
{
    memd_store *S = st->store;
    if (S->nobjs == 0)
        return 0;
    if (memd_store_failpoint(S, "objects"))
        return EIO; /* tests: writing them fails like a broken disk */
    for (size_t i = 0; i < S->nobjs; i++) {
        const memd_store_obj *o = &S->objs[i];
        MDB_val key = {sizeof o->key, (void *)o->key}, val = {o->len, o->rec};
        int rc = o->rec ? mdb_put(txn, S->dbi_objects, &key, &val, 0)
                        : mdb_del(txn, S->dbi_objects, &key, NULL);
        if (rc != 0 && !(rc == MDB_NOTFOUND && !o->rec))
            return rc;
    }
    return 0;
}

static int write_meta(memd_state *st, MDB_txn *txn)
{
    memd_store *S = st->store;
    memd_store_meta m = {.format = MEMD_STORE_FORMAT, .handle_hwm = S->handle_hwm,
                         .session_hwm = S->session_hwm, .ndevs = st->ndevs};
    memcpy(m.boot_id, S->boot_id, sizeof m.boot_id);
    size_t size = memd_store_meta_size(st->ndevs);
    if (reserve_buf(S, size))
        return ENOMEM;
    memd_store_meta_put(S->buf, &m, S->fps);
    MDB_val key = {4, "meta"}, val = {size, S->buf};
    return mdb_put(txn, S->dbi_meta, &key, &val, 0);
}

/* Pages the trees use (their pages, the two meta pages, slack for the free list's own
 * tree): the rest of the map is free or reusable. */
static uint64_t bytes_in_use(const memd_store *S, MDB_txn *txn)
{
    uint64_t pages = 2 + 16;
    MDB_dbi dbis[] = {1 /* the main DB, which names the others */, S->dbi_allocs,
                      S->dbi_sessions, S->dbi_meta, S->dbi_objects};
    for (size_t i = 0; i < sizeof dbis / sizeof dbis[0]; i++) {
        MDB_stat ms;
        if (mdb_stat(txn, dbis[i], &ms) == 0)
            pages += ms.ms_branch_pages + ms.ms_leaf_pages + ms.ms_overflow_pages;
    }
    return pages * S->psize;
}

/* The largest key in the allocations table: where appends start. */
static int top_key(writer *w)
{
    MDB_val key, val;
    int rc = mdb_cursor_get(w->allocs, &key, &val, MDB_LAST);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc == 0 && key.mv_size == 8) {
        w->top = memd_store_key_get_u64(key.mv_data);
        w->stored = true;
    }
    return rc;
}

int memd_store_write(memd_state *st, bool all)
{
    memd_store *S = st->store;
    MDB_txn *txn;
    int rc = mdb_txn_begin(S->env, NULL, 0, &txn);
    if (rc != 0)
        return rc;
    writer w = {.st = st, .txn = txn};
    if ((rc = mdb_cursor_open(txn, S->dbi_allocs, &w.allocs)) != 0) {
        mdb_txn_abort(txn);
        return rc;
    }
    if (all) {
        rc = write_all(&w);
    } else {
        /* The largest key as the last successful write left it (an upper bound, which
         * is all appends and skipped deletes need), so most writes need no search. */
        if (S->top_known) {
            w.top = S->top;
            w.stored = S->top_stored;
        } else {
            rc = top_key(&w);
        }
        if (rc == 0)
            rc = write_dirty(&w);
    }
    if (rc == 0)
        rc = write_objs(st, txn);
    if (rc == 0 && (S->meta_dirty || all))
        rc = write_meta(st, txn);
    /* Tests: make this commit fail like a broken disk would. */
    if (rc == 0 && memd_store_failpoint(S, NULL))
        rc = EIO;
    if (rc != 0) {
        mdb_txn_abort(txn);
        S->top_known = false;
        return rc;
    }
    uint64_t used = bytes_in_use(S, txn);
    rc = mdb_txn_commit(txn);
    /* A failed write leaves the table as it was: search for its top again. */
    S->top_known = rc == 0;
    if (rc == 0) {
        S->used_bytes = used;
        S->top = w.top;
        S->top_stored = w.stored;
        if (memd_store_failpoint(S, "kill")) {
            char p[PATH_MAX + 8];
            snprintf(p, sizeof p, "%s.kill", S->failpoint);
            unlink(p);
            raise(SIGKILL);
        }
    }
    return rc;
}

#define HWM_STEP 4096u /* counters are stored ahead, so most flushes need no meta write */

/* Keys per transaction when the store is at its limit: each may copy a leaf page and
 * its branch path, and a few such pages fit the room kept back for releases
 * (MEMD_STORE_TXN_COST + MEMD_STORE_RESERVE). */
#define SLICE_KEYS 8u

/* The dirty keys in slices of SLICE_KEYS, each its own transaction, the other layers'
 * records and the meta with the last. A batch of releases deletes records spread over
 * the table and copies every page it touches: at the limit, more than the room kept,
 * while each slice's deletes give pages back to the next. A crash between slices
 * leaves some releases unwritten: each record stands alone, so the store still holds a
 * map memd had (less released), as after any crash before a flush. On failure the
 * keys not yet written stay dirty; returns the last write's LMDB code. */
static int write_in_slices(memd_state *st)
{
    memd_store *S = st->store;
    uint64_t *all = S->dirty;
    size_t total = S->ndirty, done = 0, nobjs = S->nobjs;
    bool meta = S->meta_dirty;
    qsort(all, total, sizeof *all, cmp_u64); /* neighbouring keys share pages */
    int rc;
    for (;;) {
        size_t k = total - done < SLICE_KEYS ? total - done : SLICE_KEYS;
        bool last = done + k == total;
        S->dirty += done;
        S->ndirty = k;
        S->nobjs = last ? nobjs : 0;
        S->meta_dirty = last && meta;
        rc = memd_store_write(st, false);
        S->dirty = all;
        S->nobjs = nobjs;
        S->meta_dirty = meta;
        if (rc == 0)
            done += k;
        if (rc || last)
            break;
    }
    memmove(all, all + done, (total - done) * sizeof *all);
    S->ndirty = total - done;
    return rc;
}

int memd_store_flush(memd_state *st, memd_error *err)
{
    memd_store *S = st->store;
    if (!S)
        return 0;
    /* Every handle and session id given out so far is below next_*: the store's marks
     * must be too, or a restarted memd could give one out again. */
    if (st->next_handle > S->handle_hwm) {
        S->handle_hwm = st->next_handle + HWM_STEP;
        S->meta_dirty = true;
    }
    if (st->next_session_id > S->session_hwm) {
        S->session_hwm = st->next_session_id > UINT32_MAX - HWM_STEP
                             ? UINT32_MAX
                             : st->next_session_id + HWM_STEP;
        S->meta_dirty = true;
    }
    if (!memd_store_pending(S))
        return 0;
    int rc;
    for (;;) {
        rc = memd_store_write(st, S->resync);
        if (rc != MDB_MAP_FULL)
            break;
        /* The estimate was short: grow and write again (the dirty keys are all still
         * there, the failed transaction changed nothing). */
        memd_error g;
        if (memd_store_grow(S, S->map_bytes + 1, &g) < 0) {
            if (!S->resync && (rc = write_in_slices(st)) == 0)
                break;
            memd_error_set(err, -EIO, "state store %s is full: %s", S->path, g.msg);
            goto failed;
        }
    }
    if (rc != 0) {
        memd_error_set(err, -EIO, "state store %s: cannot commit: %s", S->path, mdb_strerror(rc));
        goto failed;
    }
    S->ndirty = 0;
    memd_store_objs_clear(S);
    S->resync = false;
    S->meta_dirty = false;
    if (S->failed) {
        memd_log(LOG_NOTICE, "state store %s: writing again", S->path);
        S->failed = false;
    }
    memd_store_update_room(S);
    return 0;

failed:
    if (!S->failed)
        memd_log(LOG_ERR, "%s", err->msg);
    S->failed = true;
    return -EIO;
}
