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

/* ---- open / close ---- */

static int open_file(memd_store *S, bool reset, memd_error *err)
{
    S->fd = open(S->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (S->fd < 0) {
        int e = errno;
        return memd_error_set(
            err, -e, "cannot open the state store %s: %s%s", S->path, strerror(e),
            e == ENOENT ? " (does the state directory exist? config key state_dir)" : "");
    }
    struct stat sb;
    if (fstat(S->fd, &sb) < 0 || !S_ISREG(sb.st_mode))
        return memd_error_set(err, -EINVAL, "the state store %s is not a regular file", S->path);
    if (flock(S->fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        return memd_error_set(err, e == EWOULDBLOCK ? -EBUSY : -e,
                              "the state store %s is in use by another memd%s", S->path,
                              e == EWOULDBLOCK ? "" : strerror(e));
    }
    if (reset) {
        if (ftruncate(S->fd, 0) < 0) {
            int e = errno;
            return memd_error_set(err, -e, "cannot reset the state store %s: %s", S->path,
                                  strerror(e));
        }
        memd_log(LOG_WARNING, "state store %s reset (--reset-state): starting with an empty "
                              "map", S->path);
    }
    return 0;
}

static int open_env(memd_store *S, memd_error *err)
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
        rc = mdb_env_set_maxdbs(S->env, 3);
    if (rc == 0)
        rc = mdb_env_set_mapsize(S->env, (size_t)map);
    if (rc == 0)
        rc = mdb_env_open(S->env, S->path,
                          MDB_NOSUBDIR | MDB_NOLOCK | MDB_WRITEMAP | MDB_NOSYNC |
                              MDB_NOMETASYNC | MDB_NORDAHEAD,
                          0600);
    if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH || rc == MDB_CORRUPTED ||
        rc == MDB_PANIC) {
        return memd_error_set(err, -EINVAL,
                              "%s is not a usable memd state store (%s). memd does not start on "
                              "a map it cannot read; once no client holds device memory, remove "
                              "the file or start memd with --reset-state",
                              S->path, mdb_strerror(rc));
    }
    if (rc != 0)
        return memd_error_set(err, -EIO, "cannot open the state store %s: %s", S->path,
                              mdb_strerror(rc));
    MDB_envinfo info;
    MDB_stat ms;
    mdb_env_info(S->env, &info);
    mdb_env_stat(S->env, &ms);
    S->map_bytes = info.me_mapsize;
    S->psize = ms.ms_psize;
    S->used_bytes = (info.me_last_pgno + 1) * S->psize; /* refined by the first flush */
    /* The whole map gets backing store now (see the top of this file). */
    rc = posix_fallocate(S->fd, 0, (off_t)S->map_bytes);
    if (rc != 0)
        return memd_error_set(err, -rc, "cannot reserve %llu bytes for the state store %s: %s",
                              (unsigned long long)S->map_bytes, S->path, strerror(rc));
    memd_store_update_room(S);
    return 0;
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
        (int)sizeof S->path) {
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
        rc = open_file(S, o->reset, err);
    if (rc == 0)
        rc = open_env(S, err);
    if (rc == 0)
        rc = memd_store_restore(st, err);
    if (rc < 0)
        memd_store_close(st);
    return rc;
}

void memd_store_close(memd_state *st)
{
    memd_store *S = st->store;
    if (!S)
        return;
    if (S->restored && (S->ndirty || S->meta_dirty || S->resync)) {
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
    if (S->fd >= 0)
        close(S->fd); /* releases the flock */
    free(S->dirty);
    free(S->buf);
    free(S->holders);
    free(S->fps);
    memd_hook_remove(st, &S->hook);
    free(S);
    st->store = NULL;
}
