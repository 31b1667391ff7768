/* memd daemon — fixed-size object pool: allocation and hold records come from chunks
 * and return to a free list, so the request path does not call malloc once warm. */
#ifndef MEMD_DAEMON_POOL_H
#define MEMD_DAEMON_POOL_H

#include <stddef.h>

typedef struct memd_pool {
    size_t objsize;   /* >= sizeof(void *) */
    size_t per_chunk;
    void *free;       /* singly linked through the first word of each free object */
    void **chunks;
    size_t nchunks, chunks_cap;
} memd_pool;

void memd_pool_init(memd_pool *p, size_t objsize, size_t per_chunk);
/* A zeroed object, or NULL when memory is short. */
void *memd_pool_get(memd_pool *p);
void memd_pool_put(memd_pool *p, void *obj);
/* Frees every chunk (objects still in use become invalid). */
void memd_pool_free(memd_pool *p);

#endif
