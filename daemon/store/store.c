/* memd daemon — the state store's file: open, close, and the request rounds and
 * commits that decide when it is written (see store.h).
 *
 * LMDB, one file, opened with:
 *   MDB_NOSUBDIR  a single file DIR/memd-state.mdb
 *   MDB_NOLOCK    one process, one thread: no lock file, no reader table; exclusion
 *                 between daemons is our own flock on the file
 *   MDB_WRITEMAP  commits write the map in place: no write(2) per page, the largest
 *                 saving per request (measured: ~0.6 us per small commit instead of ~4.4)
 *   MDB_NOSYNC, MDB_NOMETASYNC
 *                 no fsync/msync. What the store must survive is memd's own crash: the
 *                 pages of a MAP_SHARED mapping are the kernel's page cache the moment
 *                 they are written, so a killed process loses nothing that was
 *                 committed. A host crash or power loss loses the runtime directory
 *                 (tmpfs) anyway, together with the device memory the map describes.
 * A write to a page of a mapped file that has no backing store raises SIGBUS, which on a
 * full tmpfs would kill memd; so every byte of the map is allocated (posix_fallocate)
 * before LMDB may use it, and the map only grows by allocating first. A full store is
 * then an error value: MDB_MAP_FULL, or ENOSPC from posix_fallocate (store_dirty.c). */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "procstat.h"

/* ---- rounds and commits ---- */

uint64_t memd_store_round_begin(memd_state *st)
{
    memd_store *S = st->store;
    if (!S)
        return 0;
    S->in_round = true;
    return S->touches;
}

bool memd_store_round_changed(const memd_state *st, uint64_t mark)
{
    return st->store && st->store->touches != mark;
}

void memd_store_round_end(memd_state *st)
{
    if (st->store)
        st->store->in_round = false;
}

int memd_store_commit(memd_state *st, memd_error *err)
{
    memd_store *S = st->store;
    if (!S || S->touches == S->committed)
        return 0;
    S->committed = S->touches;
    return memd_store_flush(st, err);
}

void memd_store_defer(memd_state *st, bool on)
{
    if (st->store)
        st->store->defer += on ? 1u : -1u;
}

void memd_store_stopping(memd_state *st)
{
    if (st->store)
        st->store->stopping = true;
}

/* ---- open / close ----
 *
 * A store is never opened where it lies. memd locks the file at DIR/memd-state.mdb, checks
 * it (store_check.c: LMDB's meta pages here, every record in a child process that writes
 * what it read into DIR/memd-state.mdb.new), restores from the checked copy, and only then
 * renames the copy over the old file. A new store is built the same way under the .new
 * name and renamed into place once it holds its meta record, so any file at the real name
 * is one memd finished: an empty or cut one is damage, never "new". */

#define NEW_SUFFIX ".new"
#define DISCARDED_SUFFIX ".discarded"

static int lock_file(int fd, const char *path, memd_error *err)
{
    struct stat sb;
    if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
        return memd_error_set(err, -EINVAL, "the state store %s is not a regular file", path);
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        return memd_error_set(err, e == EWOULDBLOCK ? -EBUSY : -e,
                              "the state store %s is in use by another memd%s", path,
                              e == EWOULDBLOCK ? "" : strerror(e));
    }
    return 0;
}

/* Opens and locks the store at S->path: 1 with *fd, 0 when there is none. */
static int open_old(memd_store *S, int *fd, memd_error *err)
{
    for (int tries = 0; tries < 8; tries++) {
        *fd = open(S->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (*fd < 0) {
            int e = errno;
            if (e == ENOENT)
                return 0;
            return memd_error_set(err, -e, "cannot open the state store %s: %s", S->path,
                                  strerror(e));
        }
        int rc = lock_file(*fd, S->path, err);
        struct stat mine, now;
        if (rc == 0 && fstat(*fd, &mine) == 0 && stat(S->path, &now) == 0 &&
            mine.st_ino == now.st_ino && mine.st_dev == now.st_dev)
            return 1;
        close(*fd);
        *fd = -1;
        if (rc < 0)
            return rc;
        /* The memd that held it renamed a new store over it meanwhile: open that. */
    }
    return memd_error_set(err, -EBUSY, "the state store %s keeps being replaced: another memd?",
                          S->path);
}

/* --discard-state: the old file goes aside (kept for a post-mortem), logged. */
static int discard(memd_store *S, memd_error *err)
{
    char aside[PATH_MAX + 16];
    snprintf(aside, sizeof aside, "%s" DISCARDED_SUFFIX, S->path);
    if (rename(S->path, aside) < 0) {
        int e = errno;
        return memd_error_set(err, -e, "cannot discard the state store %s: %s", S->path,
                              strerror(e));
    }
    memd_log(LOG_WARNING, "state store %s discarded (--discard-state), kept as %s: starting "
                          "with an empty map; memory that clients still hold may be handed "
                          "out again", S->path, aside);
    return 0;
}

/* Creates (or takes over a leftover) S->tmp, locked and empty, as S->fd. */
static int open_new(memd_store *S, memd_error *err)
{
    S->fd = open(S->tmp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (S->fd < 0) {
        int e = errno;
        return memd_error_set(
            err, -e, "cannot create the state store %s: %s%s", S->tmp, strerror(e),
            e == ENOENT ? " (does the state directory exist? config key state_dir)" : "");
    }
    int rc = lock_file(S->fd, S->tmp, err);
    if (rc < 0)
        return rc;
    if (ftruncate(S->fd, 0) < 0) {
        int e = errno;
        return memd_error_set(err, -e, "cannot truncate %s: %s", S->tmp, strerror(e));
    }
    S->tmp_pending = true;
    return 0;
}

/* The restored copy takes the store's name: over the old file, or (a new store) only if
 * no other memd made one meanwhile. */
static int publish(memd_store *S, bool replace, memd_error *err)
{
    int rc = replace ? rename(S->tmp, S->path)
                     : renameat2(AT_FDCWD, S->tmp, AT_FDCWD, S->path, RENAME_NOREPLACE);
    if (rc == 0 && memd_store_failpoint(S, "publish")) {
        rc = -1;
        errno = EIO;
    }
    if (rc < 0) {
        int e = errno;
        return memd_error_set(err, e == EEXIST ? -EBUSY : -e,
                              "cannot put the state store in place as %s: %s", S->path,
                              e == EEXIST ? "another memd made one meanwhile" : strerror(e));
    }
    S->tmp_pending = false;
    return 0;
}

static int open_env(memd_store *S, const char *path, memd_error *err)
{
    struct stat sb;
    if (fstat(S->fd, &sb) < 0)
        return -errno;
    /* Never below the file's size: LMDB would truncate it to the smaller map. */
    uint64_t map = MEMD_STORE_MAP_MIN;
    if ((uint64_t)sb.st_size > map)
        map = (uint64_t)sb.st_size;
    if (map > S->max_bytes)
        S->max_bytes = map;
    int rc = mdb_env_create(&S->env);
    if (rc == 0)
        rc = mdb_env_set_maxdbs(S->env, 4);
    if (rc == 0)
        rc = mdb_env_set_mapsize(S->env, (size_t)map);
    if (rc == 0)
        rc = mdb_env_open(S->env, path,
                          MDB_NOSUBDIR | MDB_NOLOCK | MDB_WRITEMAP | MDB_NOSYNC |
                              MDB_NOMETASYNC | MDB_NORDAHEAD,
                          0600);
    if (rc != 0)
        return memd_error_set(err, -EIO, "cannot open the state store %s: %s", path,
                              mdb_strerror(rc));
    MDB_envinfo info;
    MDB_stat ms;
    mdb_env_info(S->env, &info);
    mdb_env_stat(S->env, &ms);
    S->map_bytes = info.me_mapsize;
    S->psize = ms.ms_psize;
    S->used_bytes = (info.me_last_pgno + 1) * S->psize; /* refined by the first flush */
    /* The whole map gets backing store now (see the top of this file). */
    rc = memd_store_failpoint(S, "reserve") ? ENOSPC
                                             : posix_fallocate(S->fd, 0, (off_t)S->map_bytes);
    if (rc != 0)
        return memd_error_set(err, -rc, "cannot reserve %llu bytes for the state store %s: %s",
                              (unsigned long long)S->map_bytes, S->path, strerror(rc));
    memd_store_update_room(S);
    return 0;
}

/* Lock, check, copy, restore, rename (the top of this section). */
static int open_store(memd_state *st, memd_store *S, bool discard_old, memd_error *err)
{
    int old = -1;
    int rc = open_old(S, &old, err);
    bool have = rc == 1;
    if (have && discard_old) {
        rc = discard(S, err);
        have = false;
    } else if (have) {
        rc = memd_store_check_meta_pages(old, S->path, err);
    }
    if (rc >= 0)
        rc = open_new(S, err);
    if (rc == 0 && have && memd_store_failpoint(S, "copy"))
        rc = memd_error_set(err, -EIO, "cannot check the state store %s: test failpoint",
                            S->path);
    if (rc == 0 && have)
        rc = memd_store_checked_copy(S->path, S->tmp, err);
    bool in_place = rc == 1;
    if (in_place) {
        /* No room for the copy: the checked file itself, under its own lock. */
        unlink(S->tmp);
        S->tmp_pending = false;
        close(S->fd);
        S->fd = old;
        old = -1;
        rc = 0;
    }
    if (rc == 0)
        rc = open_env(S, in_place ? S->path : S->tmp, err);
    if (rc == 0)
        rc = memd_store_restore(st, err);
    if (rc == 0 && !in_place)
        rc = publish(S, have, err);
    if (old >= 0)
        close(old); /* the lock now lies on the published file (S->fd) */
    return rc;
}

int memd_store_dir(const char *state_dir, const char *socket_path, char *out, size_t outlen,
                   memd_error *err)
{
    char d[PATH_MAX];
    if (state_dir && state_dir[0]) {
        snprintf(d, sizeof d, "%s", state_dir);
    } else if (socket_path && socket_path[0] == '/') {
        snprintf(d, sizeof d, "%s", socket_path);
        *strrchr(d, '/') = '\0';
        if (!d[0])
            strcpy(d, "/");
    } else if (socket_path && socket_path[0] && !strchr(socket_path, '/')) {
        strcpy(d, "."); /* a socket in the working directory */
    } else if (socket_path && socket_path[0]) {
        snprintf(d, sizeof d, "%s", socket_path);
        *strrchr(d, '/') = '\0';
    } else {
        return memd_error_set(err, -EINVAL,
                              "the socket has no path to put the state store beside: set "
                              "state_dir in the config");
    }
    char abs[PATH_MAX];
    if (!realpath(d, abs)) {
        int e = errno;
        return memd_error_set(err, -e, "state directory %s: %s", d, strerror(e));
    }
    if (strlen(abs) + 1 > outlen)
        return memd_error_set(err, -ENAMETOOLONG, "state directory path too long: %s", abs);
    memcpy(out, abs, strlen(abs) + 1);
    return 0;
}

int memd_store_open(memd_state *st, const memd_store_opts *o, memd_error *err)
{
    memd_store *S = calloc(1, sizeof *S);
    if (!S)
        return memd_error_set(err, -ENOMEM, "out of memory");
    S->fd = -1;
    S->max_bytes = o->max_bytes ? o->max_bytes : MEMD_STORE_MAX_DEFAULT;
    if (S->max_bytes < MEMD_STORE_MAP_MIN)
        S->max_bytes = MEMD_STORE_MAP_MIN;
    if (snprintf(S->path, sizeof S->path, "%s/%s", o->dir, MEMD_STORE_FILE) >=
            (int)sizeof S->path ||
        snprintf(S->tmp, sizeof S->tmp, "%s" NEW_SUFFIX, S->path) >= (int)sizeof S->tmp) {
        free(S);
        return memd_error_set(err, -ENAMETOOLONG, "state directory path too long: %s", o->dir);
    }
    if (o->failpoint)
        snprintf(S->failpoint, sizeof S->failpoint, "%s", o->failpoint);
    st->store = S;
    memd_hook_add(st, &S->hook, &memd_store_events, st);
    S->fps = calloc(st->ndevs ? st->ndevs : 1, sizeof *S->fps);
    int rc = S->fps ? 0 : -ENOMEM;
    if (rc < 0)
        memd_error_set(err, rc, "out of memory");
    for (uint32_t i = 0; rc == 0 && i < st->ndevs; i++)
        S->fps[i] = (memd_store_dev_fp){.id = st->devs[i].spec->id,
                                        .fingerprint = memd_store_device_fingerprint(
                                            st->devs[i].spec)};
    if (rc == 0 && memd_proc_boot_id(S->boot_id, sizeof S->boot_id) < 0)
        S->boot_id[0] = '\0'; /* no /proc: the boot check is skipped */
    if (rc == 0)
        rc = open_store(st, S, o->discard, err);
    if (rc < 0)
        memd_store_close(st);
    return rc;
}

void memd_store_close(memd_state *st)
{
    memd_store *S = st->store;
    if (!S)
        return;
    if (S->restored && memd_store_pending(S)) {
        memd_error e;
        (void)memd_store_flush(st, &e); /* logged there */
    }
    S->stopping = true;
    S->in_round = false;
    memd_store_drop_orphans(st);
    for (size_t i = 0; i < S->sessions.cap; i++)
        if (S->sessions.slots[i].key)
            free((memd_store_sess *)(uintptr_t)S->sessions.slots[i].val);
    memd_map_free(&S->sessions);
    if (S->env)
        mdb_env_close(S->env);
    if (S->tmp_pending)
        unlink(S->tmp); /* a start that failed: the old file stays as it was */
    if (S->fd >= 0)
        close(S->fd); /* releases the flock */
    free(S->dirty);
    memd_store_objs_clear(S);
    free(S->objs);
    free(S->buf);
    free(S->holders);
    free(S->fps);
    memd_hook_remove(st, &S->hook);
    free(S);
    st->store = NULL;
}
