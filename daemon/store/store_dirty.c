/* memd daemon — the state store's dirty keys, and room in its file for writing them
 * (see store_internal.h). Every byte of the map is allocated before LMDB may write it
 * (store.c says why), so the file grows here, by allocating first. */
#include "store_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void memd_store_mark(memd_store *S, uint64_t key)
{
    S->touches++;
    if (S->resync)
        return; /* everything is rewritten anyway */
    if (S->ndirty == S->dirty_cap) {
        size_t cap = S->dirty_cap ? S->dirty_cap * 2 : 256;
        uint64_t *d = realloc(S->dirty, cap * sizeof *d);
        if (!d) {
            /* The key cannot be remembered: the next flush rewrites the whole map from
             * memory instead, so nothing is lost. */
            S->resync = true;
            return;
        }
        S->dirty = d;
        S->dirty_cap = cap;
    }
    S->dirty[S->ndirty++] = key;
}

bool memd_store_pending(const memd_store *S)
{
    return S->ndirty || S->nobjs || S->meta_dirty || S->resync;
}

void memd_store_objs_clear(memd_store *S)
{
    for (size_t i = 0; i < S->nobjs; i++)
        free(S->objs[i].rec);
    S->nobjs = 0;
}

void memd_store_update_room(memd_store *S)
{
    uint64_t keep = S->used_bytes + MEMD_STORE_TXN_COST + MEMD_STORE_RESERVE;
    S->dirty_limit = S->map_bytes > keep ? (S->map_bytes - keep) / MEMD_STORE_REC_COST : 0;
    if (S->dirty_limit >= 64)
        S->full_logged = false;
}

int memd_store_grow(memd_store *S, uint64_t want, memd_error *err)
{
    if (want <= S->map_bytes)
        return 0;
    uint64_t n = S->map_bytes;
    while (n < want && n < S->max_bytes)
        n *= 2;
    if (n > S->max_bytes)
        n = S->max_bytes;
    if (n < want)
        return memd_error_set(err, -ENOSPC, "%s would need %llu bytes, over its limit of %llu",
                              S->path, (unsigned long long)want, (unsigned long long)S->max_bytes);
    /* Allocate first: LMDB writes through the map, and a page without backing store
     * would be SIGBUS, not an error. */
    int rc = memd_store_failpoint(S, "grow") ? ENOSPC : posix_fallocate(S->fd, 0, (off_t)n);
    if (rc != 0)
        return memd_error_set(err, -rc, "cannot grow %s to %llu bytes: %s", S->path,
                              (unsigned long long)n, strerror(rc));
    rc = mdb_env_set_mapsize(S->env, (size_t)n);
    if (rc != 0)
        return memd_error_set(err, -EIO, "cannot map %s at %llu bytes: %s", S->path,
                              (unsigned long long)n, mdb_strerror(rc));
    S->map_bytes = n;
    memd_store_update_room(S);
    return 0;
}
