/* memd daemon — fixed-size object pool: allocation and hold records come from slabs
 * and return to them, so the request path does not call malloc once warm.
 *
 * Each slab is one aligned block (its header first), so an object finds its slab by
 * masking its address. Objects are taken from the slab used last that has room (so a
 * pool that shrank fills its fullest slabs first), and a slab whose objects all came
 * back is freed, but for one kept empty: a million records freed give their memory
 * back to the system (issue 14), while a pool going up and down across one slab's
 * worth does not call malloc each time. */
#ifndef MEMD_DAEMON_POOL_H
#define MEMD_DAEMON_POOL_H

#include <stddef.h>

typedef struct memd_slab memd_slab;

typedef struct memd_pool {
    size_t objsize;   /* >= sizeof(void *), a multiple of max_align_t's alignment */
    size_t per_chunk; /* objects per slab */
    size_t slab_bytes;/* a power of two: slabs are aligned to it */
    memd_slab *open;  /* slabs with a free object, doubly linked */
    memd_slab *all;   /* every slab, doubly linked */
    memd_slab *spare; /* the one empty slab kept, or NULL (also on open and all) */
    size_t nchunks;   /* slabs */
    size_t live;      /* objects handed out */
} memd_pool;

/* per_chunk: about how many objects a slab holds (0: 256). */
void memd_pool_init(memd_pool *p, size_t objsize, size_t per_chunk);
/* A zeroed object, or NULL when memory is short. */
void *memd_pool_get(memd_pool *p);
void memd_pool_put(memd_pool *p, void *obj);
/* Frees every slab (objects still in use become invalid). */
void memd_pool_free(memd_pool *p);

#endif
