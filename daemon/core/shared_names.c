/* memd daemon — shared allocations by (device, uid, name), or (device, name) when names
 * are global: a chained hash table whose chain links live in the allocation records
 * themselves. Models' shared code and constants are named like any other (model.h), so
 * they are scoped the same way. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

/* The uid part of the key: the creator's, unless names are global. */
static inline uint32_t key_uid(const memd_names *n, uint32_t uid)
{
    return n->global ? 0 : uid;
}

static size_t name_hash(uint32_t dev, uint32_t uid, const char *name)
{
    uint64_t h = (1469598103934665603ull ^ dev) * 1099511628211ull ^ uid; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h ^ (h >> 29));
}

memd_alloc *memd_names_find(const memd_names *n, uint32_t dev, uint32_t uid, const char *name)
{
    if (n->cap == 0)
        return NULL;
    uid = key_uid(n, uid);
    for (memd_alloc *a = n->buckets[name_hash(dev, uid, name) & (n->cap - 1)]; a;
         a = a->ext->name_next)
        if (a->dev == dev && key_uid(n, a->uid) == uid && strcmp(a->ext->name, name) == 0)
            return a;
    return NULL;
}

static int grow(memd_names *n)
{
    size_t cap = n->cap ? n->cap * 2 : 64;
    memd_alloc **b = calloc(cap, sizeof *b);
    if (!b)
        return -ENOMEM;
    for (size_t i = 0; i < n->cap; i++) {
        memd_alloc *a = n->buckets[i];
        while (a) {
            memd_alloc *next = a->ext->name_next;
            size_t j = name_hash(a->dev, key_uid(n, a->uid), a->ext->name) & (cap - 1);
            a->ext->name_next = b[j];
            b[j] = a;
            a = next;
        }
    }
    free(n->buckets);
    n->buckets = b;
    n->cap = cap;
    return 0;
}

int memd_names_add(memd_names *n, memd_alloc *a)
{
    if (n->len >= n->cap) {
        int rc = grow(n);
        if (rc < 0)
            return rc;
    }
    size_t i = name_hash(a->dev, key_uid(n, a->uid), a->ext->name) & (n->cap - 1);
    a->ext->name_next = n->buckets[i];
    n->buckets[i] = a;
    n->len++;
    return 0;
}

void memd_names_remove(memd_names *n, memd_alloc *a)
{
    if (n->cap == 0)
        return;
    memd_alloc **pp = &n->buckets[name_hash(a->dev, key_uid(n, a->uid), a->ext->name) & (n->cap - 1)];
    for (; *pp; pp = &(*pp)->ext->name_next) {
        if (*pp == a) {
            *pp = a->ext->name_next;
            a->ext->name_next = NULL;
            n->len--;
            return;
        }
    }
}

void memd_names_free(memd_names *n)
{
    free(n->buckets);
    *n = (memd_names){0};
}
