/* memd daemon — state store internals shared by store.c (file, rounds, commits),
 * store_dirty.c (dirty keys, room), store_hooks.c (core's changes), store_write.c
 * (writing, flush), store_session.c (sessions, reclaim, orphans) and store_restore.c
 * (restore at open). Not for the rest of the daemon: it goes through store.h. */
#ifndef MEMD_DAEMON_STORE_INTERNAL_H
#define MEMD_DAEMON_STORE_INTERNAL_H

#include <lmdb.h>
#include <limits.h>

#include "map.h"
#include "store.h"
#include "store_codec.h"
#include "store_object.h"

/* A dirty key: an allocation handle, or a session id with this bit set. Handles are
 * counted from 1 and never get near 2^63. */
#define MEMD_STORE_SESS_KEY (1ull << 63)

/* The allocations table: a record under key K holds the records of the live
 * allocations whose store_key is K, one after the other (each record says its own
 * length); a key none has has no record. An allocation made alone has K = its handle,
 * a record of its own. The allocations of one ALLOC_BATCH share records by chunks:
 * K = the first handle of the chunk, and up to MEMD_STORE_CHUNK consecutive handles
 * from K (on_alloc_created in store.c). A batch of B allocations is then B / MEMD_STORE_CHUNK
 * tree writes, and freeing it as many deletes, instead of one of each per allocation:
 * the tree operations, not the bytes, were most of a batch's cost. Single requests keep
 * one small record each: rewriting a shared chunk on every request made them slower.
 * 8 records of a typical size (~120 bytes) stay well within a node of a 4 KiB page.
 * The reader takes any key K with records for handles K .. K + MEMD_STORE_CHUNK - 1
 * and gives each allocation store_key K, so a store written one record per handle
 * (by an earlier memd) restores as it is. */
#define MEMD_STORE_CHUNK 8u

/* Room estimates (prepare): bytes one dirty record may cost a flush (its share of the
 * leaf and branch pages copied on write), a flush's fixed cost (meta, free list), and
 * what is kept back for releases, which must be recordable when creations are refused. */
#define MEMD_STORE_REC_COST 1024u
#define MEMD_STORE_TXN_COST (16u * 4096u)
#define MEMD_STORE_RESERVE (16u * 4096u)
#define MEMD_STORE_MAP_MIN (1u << 20) /* the file starts at this size */

/* One hold while encoding a record: holds of one session and request are stored as one
 * holder entry with a count. */
typedef struct memd_store_holder {
    uint32_t session;
    uint64_t req;
} memd_store_holder;

/* A changed record of another layer (hooks.h memd_record), encoded for the objects
 * table (store_object.h), waiting for the next flush. */
typedef struct memd_store_obj {
    uint8_t key[MEMD_STORE_OBJ_KEY];
    uint8_t *rec;                  /* NULL: delete the record */
    size_t len;
} memd_store_obj;

/* Every stored session, live or orphaned. */
typedef struct memd_store_sess {
    memd_session *s;               /* the connection's session, or the orphan (owned) */
    uint64_t starttime;            /* of s->pid, to tell a reused pid */
    uint64_t deadline_ns;          /* orphan: released at this time unless reclaimed */
    bool orphan;
    uint8_t token[MEMD_TOKEN_SIZE];
} memd_store_sess;

typedef struct memd_store {
    memd_hook hook;                /* core's changes (hooks.h), registered at open */
    char path[PATH_MAX];
    char tmp[PATH_MAX];            /* path + ".new": where a store is built (store.c) */
    bool tmp_pending;              /* tmp is ours and not yet renamed to path */
    int fd;                        /* holds the flock: one memd per store */
    MDB_env *env;
    MDB_dbi dbi_allocs, dbi_sessions, dbi_meta, dbi_objects;
    uint64_t psize;
    uint64_t map_bytes, max_bytes; /* current file/map size, and its limit */
    uint64_t used_bytes;           /* pages in use after the last commit (estimate) */
    uint64_t dirty_limit;          /* prepare's fast path: fewer dirty keys fit for sure */
    bool batching;                 /* memd_store_batch: creations share records */
    uint64_t group;                /* batching: the key of the chunk being filled (0: none) */
    uint64_t top;                  /* top_known: no allocations key is above this, */
    bool top_stored, top_known;    /* and top_stored is false if the table is empty */

    uint64_t *dirty;               /* keys changed since the last successful flush */
    size_t ndirty, dirty_cap;
    bool resync;                   /* a key could not be queued: rewrite everything */
    memd_store_obj *objs;          /* other layers' records changed since the last flush, */
    size_t nobjs, objs_cap;        /* in the order they changed (written in that order) */
    bool objs_lost;                /* one could not be queued (logged once) */
    uint64_t touches;              /* changes ever (round marks) */
    uint64_t committed;            /* touches at the last memd_store_commit */
    bool in_round;                 /* frames.c is dispatching a round */
    bool stopping;                 /* only rounds are recorded now */
    uint32_t defer;                /* > 0: session closes leave the flush to a commit */
    bool failed;                   /* the last flush failed (logged once) */
    bool restored;                 /* open completed: close may flush what is pending */
    bool full_logged;              /* "store full" was logged (once per episode) */

    memd_map sessions;             /* id -> memd_store_sess * */
    const memd_session *last;      /* prepare's cache: this session is stored */
    uint32_t last_id;
    uint32_t norphans;

    uint64_t handle_hwm;           /* as stored (or pending in meta_dirty) */
    uint32_t session_hwm;
    bool meta_dirty;
    char boot_id[40];
    memd_store_dev_fp *fps;        /* per st->devs index: the current config's */

    uint8_t *buf;                  /* record encoding */
    size_t buf_cap;
    memd_store_holder *holders;    /* an allocation's holds while encoding */
    size_t holders_cap;
    char failpoint[PATH_MAX];      /* tests: memd_store_failpoint */
} memd_store;

static inline memd_store_sess *memd_store_sess_get(const memd_store *S, uint32_t id)
{
    uint64_t *v = memd_map_get(&S->sessions, id);
    return v ? (memd_store_sess *)(uintptr_t)*v : NULL;
}

/* Store fault injection, for tests only: memd-test and the unit tests set
 * memd_store_opts.failpoint, memd never does (main.c). Every write path of the store asks
 * here before it writes, and fails as on a broken or full disk while a file named after
 * it exists (FAILPOINT for a commit, FAILPOINT.NAME for the others):
 *   NULL      a commit (store_write.c): EIO
 *   "grow"    growing the file (store_dirty.c): ENOSPC
 *   "reserve" reserving the map at open (store.c): ENOSPC
 *   "copy"    the checked copy at open (store_check.c): EIO
 *   "publish" renaming the restored copy into place (store.c): EIO
 *   "objects" writing other layers' records (the objects table: models, plans,
 *             instances) in a commit (store_write.c): EIO
 *   "kill"    not a failure: memd SIGKILLs itself right after a commit that succeeded,
 *             before any reply of its round is sent (the file is removed first, so the
 *             next memd runs on), i.e. a crash between a request and its reply. */
bool memd_store_failpoint(const memd_store *S, const char *name);

/* store_dirty.c */
void memd_store_mark(memd_store *S, uint64_t key);
/* Whether anything waits for a flush (dirty keys, records, counters). */
bool memd_store_pending(const memd_store *S);
/* Forgets the queued records (written, or the store closes). */
void memd_store_objs_clear(memd_store *S);
int memd_store_grow(memd_store *S, uint64_t want, memd_error *err);
void memd_store_update_room(memd_store *S);

/* store_hooks.c: what the store registers with core at open. */
extern const memd_state_events memd_store_events;

/* store_write.c */
/* One attempt at writing everything dirty; an LMDB or errno code (MDB_MAP_FULL: grow). */
int memd_store_write(memd_state *st, bool all);

/* store_session.c */
/* Hook: s went away (memd_session_close, after its holds were dropped). While stopping,
 * the store keeps it (the next memd restores it as an orphan); otherwise it is forgotten
 * and the store flushed, at once unless memd_store_defer leaves that to a commit. */
void memd_store_session_closed(void *data, memd_session *s);
/* Records s (token, start time) if it is not yet; 0 or -ENOMEM. */
int memd_store_sess_add(memd_state *st, memd_session *s);
/* Whether an orphan's process is gone (absent, zombie, or its pid reused). */
bool memd_store_orphan_dead(const memd_store_sess *ss);
/* Releases orphan ss (its holds, its session, its record) and frees it. */
void memd_store_orphan_release(memd_state *st, memd_store_sess *ss, const char *why);
/* Frees every orphan without recording anything (close, failed restore). */
void memd_store_drop_orphans(memd_state *st);

/* store_check.c: the checks before a store is trusted. */
/* LMDB's two meta pages and the file's size, read with pread: 0, or -EINVAL with err
 * naming the file (empty, cut short, not LMDB, transaction ids no commit leaves). */
int memd_store_check_meta_pages(int fd, const char *path, memd_error *err);
/* Reads every record of the store at from in a child process, checking each, and writes
 * them to a new LMDB file at to. 0; 1 when the store is sound but the copy could not be
 * written (no room: use from in place, logged); -EINVAL with err naming from and the
 * damage (a crash of the child included). */
int memd_store_checked_copy(const char *from, const char *to, memd_error *err);

/* store_restore.c */
int memd_store_restore(memd_state *st, memd_error *err);

#endif
