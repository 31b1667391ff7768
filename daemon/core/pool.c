/* memd daemon — fixed-size object pool (see pool.h). */
#include "pool.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct memd_slab {
    memd_slab *prev, *next;          /* pool's open list */
    memd_slab *all_prev, *all_next;  /* pool's list of every slab */
    void *free;                      /* free objects, linked through their first word */
    size_t live;                     /* objects handed out */
    size_t unused;                   /* objects never handed out, from `fresh` on */
    char *fresh;
};

/* Where the objects start: the header rounded up to their alignment. */
static size_t header_bytes(void)
{
    size_t a = _Alignof(max_align_t);
    return (sizeof(memd_slab) + a - 1) / a * a;
}

void memd_pool_init(memd_pool *p, size_t objsize, size_t per_chunk)
{
    *p = (memd_pool){0};
    /* Round up so every object is suitably aligned for any member. */
    size_t a = _Alignof(max_align_t);
    p->objsize = (objsize < sizeof(void *) ? sizeof(void *) : objsize + a - 1) / a * a;
    if (p->objsize == 0)
        p->objsize = a;
    size_t want = header_bytes() + p->objsize * (per_chunk ? per_chunk : 256);
    p->slab_bytes = 4096;
    while (p->slab_bytes < want)
        p->slab_bytes *= 2;
    p->per_chunk = (p->slab_bytes - header_bytes()) / p->objsize;
}

static void open_link(memd_pool *p, memd_slab *s)
{
    s->prev = NULL;
    s->next = p->open;
    if (p->open)
        p->open->prev = s;
    p->open = s;
}

static void open_unlink(memd_pool *p, memd_slab *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        p->open = s->next;
    if (s->next)
        s->next->prev = s->prev;
}

static memd_slab *add_slab(memd_pool *p)
{
    memd_slab *s = aligned_alloc(p->slab_bytes, p->slab_bytes);
    if (!s)
        return NULL;
    *s = (memd_slab){.unused = p->per_chunk, .fresh = (char *)s + header_bytes()};
    s->all_next = p->all;
    if (p->all)
        p->all->all_prev = s;
    p->all = s;
    p->nchunks++;
    open_link(p, s);
    return s;
}

void *memd_pool_get(memd_pool *p)
{
    memd_slab *s = p->open;
    if (s == p->spare && s && s->next)
        s = s->next; /* a slab in use before the empty one kept */
    if (!s && !(s = add_slab(p)))
        return NULL;
    void *obj;
    if (s->free) {
        obj = s->free;
        s->free = *(void **)obj;
    } else { /* carve lazily: a new slab's pages are touched only as it fills */
        obj = s->fresh;
        s->fresh += p->objsize;
        s->unused--;
    }
    if (s == p->spare)
        p->spare = NULL;
    s->live++;
    p->live++;
    if (!s->free && s->unused == 0)
        open_unlink(p, s); /* full */
    memset(obj, 0, p->objsize);
    return obj;
}

static void free_slab(memd_pool *p, memd_slab *s)
{
    open_unlink(p, s);
    if (s->all_prev)
        s->all_prev->all_next = s->all_next;
    else
        p->all = s->all_next;
    if (s->all_next)
        s->all_next->all_prev = s->all_prev;
    p->nchunks--;
    free(s);
}

void memd_pool_put(memd_pool *p, void *obj)
{
    memd_slab *s = (memd_slab *)((uintptr_t)obj & ~(uintptr_t)(p->slab_bytes - 1));
    bool was_full = !s->free && s->unused == 0;
    *(void **)obj = s->free;
    s->free = obj;
    s->live--;
    p->live--;
    if (was_full) {
        open_link(p, s);
    } else if (s != p->open) { /* the most recently freed into goes first: fill it up */
        open_unlink(p, s);
        open_link(p, s);
    }
    if (s->live != 0)
        return;
    if (!p->spare) {
        p->spare = s;
        return;
    }
    free_slab(p, s); /* one empty slab is enough */
}

void memd_pool_free(memd_pool *p)
{
    for (memd_slab *s = p->all, *next; s; s = next) {
        next = s->all_next;
        free(s);
    }
    *p = (memd_pool){0};
}
