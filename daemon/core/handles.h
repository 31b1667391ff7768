/* memd daemon — the handle table: handle -> allocation record.
 *
 * Handles are handed out in sequence and never reused, so live ones mostly come in runs:
 * the table keeps chunks of MEMD_HANDLES_CHUNK consecutive handles as plain arrays of
 * record pointers (8 bytes a live handle where a run is dense; a hash map at a load of
 * 1/4 cost 64-128). A chunk left sparse behind the newest one (fewer than 1/16 of its
 * handles alive) is dissolved into a hash map of stragglers, so a few long-lived handles
 * among many freed ones do not keep whole chunks. Lookup, insert and remove are O(1)
 * (amortized: a dissolve moves at most 1/16 of a chunk, paid by the removes before it).
 * Allocation-free when warm except where a run crosses into a new chunk. */
#ifndef MEMD_DAEMON_HANDLES_H
#define MEMD_DAEMON_HANDLES_H

#include <stddef.h>
#include <stdint.h>

#include "map.h"

#define MEMD_HANDLES_CHUNK_BITS 9
#define MEMD_HANDLES_CHUNK (1u << MEMD_HANDLES_CHUNK_BITS)

typedef struct memd_alloc memd_alloc;

typedef struct memd_handles_chunk {
    uint32_t live;
    memd_alloc *slot[MEMD_HANDLES_CHUNK];
} memd_handles_chunk;

typedef struct memd_handles {
    memd_map chunks;            /* chunk number + 1 -> memd_handles_chunk * */
    memd_map loose;             /* handle -> memd_alloc *: the handles of dissolved chunks,
                                   and of chunks behind the newest that never had one */
    uint64_t front;             /* chunk number of the newest chunk (chunks are only made
                                   from it on: none behind it comes back) */
    memd_handles_chunk *front_chunk; /* that chunk, or NULL */
    size_t len;                 /* live handles */
} memd_handles;

static inline memd_alloc *memd_handles_get(const memd_handles *t, uint64_t handle)
{
    uint64_t c = handle >> MEMD_HANDLES_CHUNK_BITS;
    const memd_handles_chunk *ch = t->front_chunk;
    if (!ch || c != t->front) {
        uint64_t *v = memd_map_get(&t->chunks, c + 1);
        ch = v ? (const memd_handles_chunk *)(uintptr_t)*v : NULL;
    }
    if (ch)
        return ch->slot[handle & (MEMD_HANDLES_CHUNK - 1)];
    uint64_t *v = memd_map_get(&t->loose, handle);
    return v ? (memd_alloc *)(uintptr_t)*v : NULL;
}

/* Adds handle (non-zero, not in the table) -> a. 0, -EINVAL (handle 0 or present) or
 * -ENOMEM (nothing changed). */
int memd_handles_put(memd_handles *t, uint64_t handle, memd_alloc *a);
/* Removes handle; nothing if absent. Never fails (a chunk that cannot be dissolved for
 * lack of memory stays as it is). */
void memd_handles_remove(memd_handles *t, uint64_t handle);
/* Calls fn for every live handle's record, in no particular order, until it returns
 * non-zero (returned). fn must not change the table. */
int memd_handles_each(const memd_handles *t, int (*fn)(void *ctx, memd_alloc *a), void *ctx);
/* Frees everything; the table is empty again. */
void memd_handles_free(memd_handles *t);

#endif
