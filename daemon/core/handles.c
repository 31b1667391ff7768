/* memd daemon — the handle table (see handles.h). */
#include "handles.h"

#include <errno.h>
#include <stdlib.h>

/* A chunk behind the newest one with fewer live handles than this is dissolved. */
#define SPARSE (MEMD_HANDLES_CHUNK / 16)

static memd_handles_chunk *chunk_of(const memd_handles *t, uint64_t c)
{
    if (t->front_chunk && c == t->front)
        return t->front_chunk;
    uint64_t *v = memd_map_get(&t->chunks, c + 1);
    return v ? (memd_handles_chunk *)(uintptr_t)*v : NULL;
}

static void drop_chunk(memd_handles *t, uint64_t c, memd_handles_chunk *ch)
{
    memd_map_remove(&t->chunks, c + 1);
    memd_map_trim(&t->chunks);
    if (ch == t->front_chunk)
        t->front_chunk = NULL;
    free(ch);
}

/* Moves chunk c's live handles into the loose map and frees it; nothing changes if the
 * map cannot make room. */
static void dissolve(memd_handles *t, uint64_t c, memd_handles_chunk *ch)
{
    if (memd_map_reserve(&t->loose, ch->live) < 0)
        return;
    uint64_t base = c << MEMD_HANDLES_CHUNK_BITS;
    for (uint32_t i = 0; i < MEMD_HANDLES_CHUNK; i++)
        if (ch->slot[i])
            (void)memd_map_put(&t->loose, base + i, (uint64_t)(uintptr_t)ch->slot[i]);
    drop_chunk(t, c, ch);
}

int memd_handles_put(memd_handles *t, uint64_t handle, memd_alloc *a)
{
    if (handle == 0 || !a || memd_handles_get(t, handle))
        return -EINVAL;
    uint64_t c = handle >> MEMD_HANDLES_CHUNK_BITS;
    memd_handles_chunk *ch = chunk_of(t, c);
    if (!ch && (!t->front_chunk || c > t->front)) {
        /* A new newest chunk: handles from here on are dense while they are sequential. */
        if (memd_map_reserve(&t->chunks, 1) < 0 || !(ch = calloc(1, sizeof *ch)))
            return -ENOMEM;
        (void)memd_map_put(&t->chunks, c + 1, (uint64_t)(uintptr_t)ch);
        memd_handles_chunk *prev = t->front_chunk;
        uint64_t old = t->front;
        t->front = c;
        t->front_chunk = ch;
        /* The chunk it replaces as the newest will not fill any more: if few of its
         * handles live, they move to the loose map. */
        if (prev && prev->live == 0)
            drop_chunk(t, old, prev);
        else if (prev && prev->live < SPARSE)
            dissolve(t, old, prev);
    }
    if (ch) {
        ch->slot[handle & (MEMD_HANDLES_CHUNK - 1)] = a;
        ch->live++;
    } else {
        int rc = memd_map_put(&t->loose, handle, (uint64_t)(uintptr_t)a);
        if (rc < 0)
            return rc;
    }
    t->len++;
    return 0;
}

void memd_handles_remove(memd_handles *t, uint64_t handle)
{
    uint64_t c = handle >> MEMD_HANDLES_CHUNK_BITS;
    memd_handles_chunk *ch = chunk_of(t, c);
    if (ch) {
        memd_alloc **s = &ch->slot[handle & (MEMD_HANDLES_CHUNK - 1)];
        if (!*s)
            return;
        *s = NULL;
        ch->live--;
        t->len--;
        if (ch == t->front_chunk)
            return; /* the newest chunk may fill up again */
        if (ch->live == 0)
            drop_chunk(t, c, ch);
        else if (ch->live < SPARSE)
            dissolve(t, c, ch);
        return;
    }
    if (memd_map_remove(&t->loose, handle)) {
        t->len--;
        memd_map_trim(&t->loose); /* a million stragglers gone give the table back */
    }
}

int memd_handles_each(const memd_handles *t, int (*fn)(void *ctx, memd_alloc *a), void *ctx)
{
    for (size_t i = 0; i < t->chunks.cap; i++) {
        if (!t->chunks.slots[i].key)
            continue;
        const memd_handles_chunk *ch = (const memd_handles_chunk *)(uintptr_t)t->chunks.slots[i].val;
        for (uint32_t j = 0; j < MEMD_HANDLES_CHUNK; j++) {
            int rc = ch->slot[j] ? fn(ctx, ch->slot[j]) : 0;
            if (rc)
                return rc;
        }
    }
    for (size_t i = 0; i < t->loose.cap; i++) {
        int rc = t->loose.slots[i].key ? fn(ctx, (memd_alloc *)(uintptr_t)t->loose.slots[i].val) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

void memd_handles_free(memd_handles *t)
{
    for (size_t i = 0; i < t->chunks.cap; i++)
        if (t->chunks.slots[i].key)
            free((void *)(uintptr_t)t->chunks.slots[i].val);
    memd_map_free(&t->chunks);
    memd_map_free(&t->loose);
    *t = (memd_handles){0};
}
