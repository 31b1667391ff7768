/* memd daemon — fixed-size object pool (see pool.h). */
#include "pool.h"

#include <stdlib.h>
#include <string.h>

void memd_pool_init(memd_pool *p, size_t objsize, size_t per_chunk)
{
    *p = (memd_pool){0};
    /* Round up so every object is suitably aligned for any member. */
    size_t a = _Alignof(max_align_t);
    p->objsize = (objsize < sizeof(void *) ? sizeof(void *) : objsize + a - 1) / a * a;
    if (p->objsize == 0)
        p->objsize = a;
    p->per_chunk = per_chunk ? per_chunk : 256;
}

static int add_chunk(memd_pool *p)
{
    if (p->nchunks == p->chunks_cap) {
        size_t cap = p->chunks_cap ? p->chunks_cap * 2 : 16;
        void **c = realloc(p->chunks, cap * sizeof *c);
        if (!c)
            return -1;
        p->chunks = c;
        p->chunks_cap = cap;
    }
    char *chunk = malloc(p->objsize * p->per_chunk);
    if (!chunk)
        return -1;
    p->chunks[p->nchunks++] = chunk;
    for (size_t i = p->per_chunk; i-- > 0;) {
        void *obj = chunk + i * p->objsize;
        *(void **)obj = p->free;
        p->free = obj;
    }
    return 0;
}

void *memd_pool_get(memd_pool *p)
{
    if (!p->free && add_chunk(p) < 0)
        return NULL;
    void *obj = p->free;
    p->free = *(void **)obj;
    memset(obj, 0, p->objsize);
    return obj;
}

void memd_pool_put(memd_pool *p, void *obj)
{
    *(void **)obj = p->free;
    p->free = obj;
}

void memd_pool_free(memd_pool *p)
{
    for (size_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    *p = (memd_pool){0};
}
