/* memd daemon — the plan cache: plans by content hash, so the same problem submitted
 * again (by any session, e.g. for a model loaded again) is answered at once.
 *
 * The key is XXH64 over a canonical byte encoding of the problem: a domain tag (solved
 * problem or precomputed plan), then per buffer lower, upper, size, align (0 read as
 * 1), pinned and the pin (or, precomputed, the plan's offset), all little-endian. A hit
 * also compares the stored problem field by field (on a planning worker, the entry
 * pinned meanwhile). Entries no model or job uses are evicted,
 * least recently used first, once the cache passes plan_cache_bytes (config limits);
 * one just planned stays only until its reply is built (memd_plan_cache_trim). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "model_internal.h"
#include "wire.h"

#define KEY_SEED 0x6d656d642d706c6eull /* "memd-pln" */
#define REC 41u                         /* encoded bytes per buffer */

void memd_plan_canonical(memd_plan_buffer *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (b[i].align == 0)
            b[i].align = 1;
        if (!b[i].pinned)
            b[i].offset = 0;
    }
}

int memd_plan_key(const memd_plan_buffer *b, const uint64_t *offsets, uint32_t n,
                  bool precomputed, uint64_t *key)
{
    size_t len = 8 + (size_t)n * REC;
    uint8_t *enc = malloc(len);
    if (!enc)
        return -ENOMEM;
    uint8_t *p = memd_wire_put_u32(enc, precomputed ? 2 : 1);
    p = memd_wire_put_u32(p, n);
    for (uint32_t i = 0; i < n; i++) {
        p = memd_wire_put_u64(p, b[i].lower);
        p = memd_wire_put_u64(p, b[i].upper);
        p = memd_wire_put_u64(p, b[i].size);
        p = memd_wire_put_u64(p, b[i].align);
        p = memd_wire_put_u64(p, precomputed ? offsets[i] : b[i].offset);
        *p++ = b[i].pinned;
    }
    uint64_t k = memd_digest64(enc, len, KEY_SEED);
    free(enc);
    *key = k ? k : 1; /* 0 is no key in memd_map, and no plan id on the wire */
    return 0;
}

bool memd_plan_cache_same(const memd_plan_entry *e, const memd_plan_buffer *b,
                          const uint64_t *offsets, uint32_t n, bool precomputed)
{
    if (e->n != n || e->precomputed != precomputed)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const memd_plan_buffer *x = &e->bufs[i];
        if (x->lower != b[i].lower || x->upper != b[i].upper || x->size != b[i].size ||
            x->align != b[i].align || x->pinned != b[i].pinned || x->offset != b[i].offset)
            return false;
        if (precomputed && e->offsets[i] != offsets[i])
            return false;
    }
    return true;
}

memd_plan_entry *memd_plan_cache_get(memd_models *ms, uint64_t id)
{
    uint64_t *v = memd_map_get(&ms->plans, id);
    return v ? (memd_plan_entry *)(uintptr_t)*v : NULL;
}

static void lru_unlink(memd_models *ms, memd_plan_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        ms->lru_head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        ms->lru_tail = e->prev;
    e->prev = e->next = NULL;
}

static void lru_push(memd_models *ms, memd_plan_entry *e)
{
    e->prev = NULL;
    e->next = ms->lru_head;
    if (ms->lru_head)
        ms->lru_head->prev = e;
    ms->lru_head = e;
    if (!ms->lru_tail)
        ms->lru_tail = e;
}

void memd_plan_cache_touch(memd_models *ms, memd_plan_entry *e)
{
    lru_unlink(ms, e);
    lru_push(ms, e);
}

static void entry_free(memd_models *ms, memd_plan_entry *e)
{
    if (e->recorded)
        memd_models_save_gone(ms, MEMD_RECORD_PLAN, e->id);
    lru_unlink(ms, e);
    memd_map_remove(&ms->plans, e->id);
    ms->plan_bytes -= e->bytes;
    free(e->bufs);
    free(e->offsets);
    free(e);
}

/* Oldest unreferenced entries first; `keep` is never evicted (just inserted). */
static void evict(memd_models *ms, const memd_plan_entry *keep)
{
    memd_plan_entry *e = ms->lru_tail;
    uint64_t limit = ms->st->limits.plan_cache_bytes ? ms->st->limits.plan_cache_bytes
                                                     : MEMD_PLAN_CACHE_BYTES;
    while (e && ms->plan_bytes > limit) {
        memd_plan_entry *prev = e->prev;
        if (e != keep && e->models == 0 && e->pins == 0)
            entry_free(ms, e);
        e = prev;
    }
}

/* Indexes e (its id and arrays set) and puts it at the head of the LRU list. */
static int link_entry(memd_models *ms, memd_plan_entry *e)
{
    if (memd_map_put(&ms->plans, e->id, (uint64_t)(uintptr_t)e) < 0)
        return -ENOMEM;
    e->bytes = sizeof *e + (size_t)e->n * (sizeof *e->bufs + sizeof *e->offsets);
    ms->plan_bytes += e->bytes;
    lru_push(ms, e);
    return 0;
}

int memd_plan_cache_adopt(memd_models *ms, memd_plan_entry *e)
{
    if (link_entry(ms, e) < 0)
        return -ENOMEM;
    e->recorded = true;
    /* Records come back in id order: the most recently created goes nearest the head,
     * so the oldest are still evicted first. (Walks; a restart restores few plans.) */
    memd_plan_entry *after = NULL;
    for (memd_plan_entry *x = e->next; x && x->created_ns > e->created_ns; x = x->next)
        after = x;
    if (after) {
        lru_unlink(ms, e);
        e->prev = after;
        e->next = after->next;
        if (after->next)
            after->next->prev = e;
        else
            ms->lru_tail = e;
        after->next = e;
    }
    return 0;
}

memd_plan_entry *memd_plan_cache_insert(memd_models *ms, memd_model_job *j)
{
    memd_plan_entry *e = malloc(sizeof *e);
    if (!e)
        return NULL;
    *e = j->mine;
    if (link_entry(ms, e) < 0) {
        free(e); /* the job keeps its arrays */
        return NULL;
    }
    j->bufs = NULL;
    j->offsets = NULL;
    if (e->n <= MEMD_PLAN_RECORD_AT_ONCE) {
        memd_models_save_plan(ms, e, j->rec);
        e->recorded = true;
    }
    evict(ms, e);
    return e;
}

void memd_plan_cache_trim(memd_models *ms)
{
    evict(ms, NULL);
}

void memd_plan_cache_ref(memd_models *ms, memd_plan_entry *e)
{
    if (!e->recorded) { /* a model's plan must survive a restart */
        memd_models_save_plan(ms, e, NULL);
        e->recorded = true;
    }
    e->models++;
}

void memd_plan_cache_unref(memd_models *ms, memd_plan_entry *e)
{
    if (e->models > 0)
        e->models--;
    evict(ms, NULL);
}

void memd_plan_cache_free(memd_models *ms)
{
    while (ms->lru_head)
        entry_free(ms, ms->lru_head);
    memd_map_free(&ms->plans);
}
