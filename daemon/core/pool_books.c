/* memd daemon — client pool books (see pool_books.h). */
#include "pool_books.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"
#include "history.h"
#include "oom.h"

/* One applied op, so that a report refused half-way can be undone. */
typedef struct applied {
    memd_pool_books *b;
    memd_suballoc *sub;
    memd_pool_books *old;       /* RESET: the books it set aside */
    memd_alloc *a;
    uint64_t pooled;            /* the books' pooled bytes after it (their peak's candidate) */
    uint8_t op;
    bool first;                 /* the report's first op on b */
} applied;

const memd_suballoc *memd_pool_books_find(const memd_pool_books *b, uint64_t offset)
{
    uint64_t *v = b ? memd_map_get(&b->subs, offset + 1) : NULL;
    return v ? (const memd_suballoc *)(uintptr_t)*v : NULL;
}

void memd_pool_books_free(memd_pool_books *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->subs.cap; i++)
        if (b->subs.slots[i].key)
            free((void *)(uintptr_t)b->subs.slots[i].val);
    memd_map_free(&b->subs);
    memd_range_destroy(b->range);
    free(b);
}

static memd_pool_books *books_get(memd_alloc *a)
{
    if (!memd_alloc_ext_get(a))
        return NULL;
    if (a->ext->books)
        return a->ext->books;
    memd_pool_books *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->subs.spread = true; /* offsets come in no runs */
    if (memd_range_create(0, a->pl.size_per_bank, 1, &b->range) < 0) {
        free(b);
        return NULL;
    }
    b->as_of_ns = a->created_ns;
    a->ext->books = b;
    return b;
}

/* RESET: the pool starts new, empty books; the old ones are kept until the report is
 * applied whole, so that a refusal later in it can put them back. */
static int apply_reset(memd_alloc *a, uint32_t i, const memd_pool_op *op, applied *ap,
                       memd_error *err)
{
    if (op->offset != 0 || op->size != 0)
        return memd_error_set(err, -EINVAL, "pool report op %u: a reset of pool %llu takes "
                            "offset 0 and size 0", i, (unsigned long long)a->handle);
    if (!memd_alloc_ext_get(a)) /* where the books are kept */
        return memd_self_oom(err);
    memd_pool_books *old = a->ext->books;
    a->ext->books = NULL;
    memd_pool_books *b = books_get(a);
    if (!b) {
        a->ext->books = old;
        return memd_self_oom(err);
    }
    if (old) {
        b->reports = old->reports;
        b->peak = old->peak;
    }
    *ap = (applied){.b = b, .old = old, .a = a, .op = MEMD_POOL_RESET};
    return 0;
}

static int apply_alloc(memd_pool_books *b, const memd_alloc *a, uint32_t i, const memd_pool_op *op,
                       applied *ap, memd_error *err)
{
    uint64_t size = a->pl.size_per_bank;
    if (op->size == 0)
        return memd_error_set(err, -EINVAL, "pool report op %u: sub-allocation of 0 bytes", i);
    if (op->offset >= size || op->size > size - op->offset)
        return memd_error_set(err, -ERANGE, "pool report op %u: sub-allocation [%llu, +%llu) "
                            "'%s' leaves pool %llu of %llu bytes", i,
                            (unsigned long long)op->offset, (unsigned long long)op->size,
                            op->name, (unsigned long long)a->handle,
                            (unsigned long long)size);
    /* The limit was checked from counts before any op applied (count_subs). */
    memd_suballoc *sub = malloc(sizeof *sub);
    if (!sub || memd_map_reserve(&b->subs, 1) < 0) {
        free(sub);
        return memd_self_oom(err);
    }
    int rc = memd_range_alloc_at(b->range, op->offset, op->size);
    if (rc < 0) {
        free(sub);
        if (rc == -EBUSY)
            return memd_error_set(err, -EEXIST, "pool report op %u: sub-allocation [%llu, +%llu) "
                                "'%s' overlaps a live sub-allocation of pool %llu", i,
                                (unsigned long long)op->offset, (unsigned long long)op->size,
                                op->name, (unsigned long long)a->handle);
        return memd_error_set(err, rc, "pool report op %u: sub-allocation [%llu, +%llu) "
                            "refused: %s", i, (unsigned long long)op->offset,
                            (unsigned long long)op->size, strerror(-rc));
    }
    *sub = (memd_suballoc){.offset = op->offset, .size = op->size};
    memcpy(sub->name, op->name, sizeof sub->name);
    (void)memd_map_put(&b->subs, op->offset + 1, (uint64_t)(uintptr_t)sub); /* reserved */
    b->pooled += op->size;
    *ap = (applied){.b = b, .sub = sub, .op = MEMD_POOL_SUB_ALLOC};
    return 0;
}

static int apply_free(memd_pool_books *b, const memd_alloc *a, uint32_t i,
                      const memd_pool_op *op, applied *ap, memd_error *err)
{
    memd_map_slot *sl = memd_map_lookup(&b->subs, op->offset + 1);
    if (!sl)
        return memd_error_set(err, -ENOENT, "pool report op %u: no live sub-allocation at "
                            "offset %llu of pool %llu (freed already, or never reported)", i,
                            (unsigned long long)op->offset, (unsigned long long)a->handle);
    memd_suballoc *sub = (memd_suballoc *)(uintptr_t)sl->val;
    if (sub->size != op->size)
        return memd_error_set(err, -EINVAL, "pool report op %u: free of %llu bytes at offset "
                            "%llu of pool %llu, but '%s' there has %llu", i,
                            (unsigned long long)op->size, (unsigned long long)op->offset,
                            (unsigned long long)a->handle, sub->name,
                            (unsigned long long)sub->size);
    /* Cannot fail: the range's books say what the map says. */
    (void)memd_range_free(b->range, op->offset, NULL);
    memd_map_remove_slot(&b->subs, sl);
    b->pooled -= sub->size;
    *ap = (applied){.b = b, .sub = sub, .op = MEMD_POOL_SUB_FREE};
    return 0;
}

static void undo(applied *ap)
{
    memd_pool_books *b = ap->b;
    memd_suballoc *sub = ap->sub;
    if (ap->op == MEMD_POOL_RESET) { /* the ops after it are undone already */
        memd_pool_books_free(b);
        ap->a->ext->books = ap->old; /* apply_reset made a's ext */
    } else if (ap->op == MEMD_POOL_SUB_ALLOC) {
        (void)memd_range_free(b->range, sub->offset, NULL);
        memd_map_remove(&b->subs, sub->offset + 1);
        b->pooled -= sub->size;
        free(sub);
    } else {
        /* The space was free a moment ago and the map held the key: both succeed unless
         * memory is short, and then the books lose a record, never the device map. */
        if (memd_range_alloc_at(b->range, sub->offset, sub->size) == 0 &&
            memd_map_put(&b->subs, sub->offset + 1, (uint64_t)(uintptr_t)sub) == 0) {
            b->pooled += sub->size;
            return;
        }
        free(sub);
    }
}

/* Refuses, before anything is applied, a report that takes a pool past max_subs live
 * sub-allocations (-EMFILE naming the op), from counts alone: the same refusal as
 * applying it would give, without a record made and undone per op (issue 27: a client
 * resent such a report over and over). 0, -EMFILE, or -ENOMEM. */
static int count_subs(memd_alloc *const *pools, const memd_pool_op *ops, uint32_t n,
                      uint32_t max_subs, memd_error *err)
{
    memd_map live = {0}; /* pool handle -> its live sub-allocations after ops[0..i] */
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const memd_alloc *a = pools[i];
        uint64_t *v = memd_map_get(&live, a->handle);
        if (!v) {
            const memd_pool_books *b = a->ext ? a->ext->books : NULL;
            if (memd_map_put(&live, a->handle, b ? b->subs.len : 0) < 0) {
                rc = memd_self_oom(err);
                break;
            }
            v = memd_map_get(&live, a->handle);
        }
        if (ops[i].verb == MEMD_POOL_RESET)
            *v = 0;
        else if (ops[i].verb == MEMD_POOL_SUB_FREE)
            *v -= *v > 0;
        else if (++*v > max_subs)
            rc = memd_error_set(err, -EMFILE, "pool report op %u: pool %llu would have more "
                                "than %u live sub-allocations, the limit "
                                "(max_suballocs_per_pool)", i,
                                (unsigned long long)a->handle, max_subs);
    }
    memd_map_free(&live);
    return rc;
}

/* One record per pool the report changed, once all of it is applied. */
static void record(memd_state *st, memd_session *s, memd_alloc *const *pools,
                   const applied *done, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const memd_alloc *a = pools[i];
        const memd_pool_books *b = done[i].b;
        if (!done[i].first || memd_pool_books_of(a) != b) /* b: books a reset set aside */
            continue;
        memd_hist_obj o = {.type = MEMD_HIST_POOL_REPORT, .cls = a->cls, .kind = a->pl.kind,
                           .region = a->pl.region, .device = st->devs[a->dev].spec->id,
                           .id = a->handle, .ref = a->pl.address, .bytes = b->pooled,
                           .count = (uint32_t)b->subs.len, .added = b->added,
                           .removed = b->removed};
        memd_history_object(st, s, &o);
    }
}

int memd_pool_report(memd_state *st, memd_session *s, memd_alloc *const *pools,
                     const memd_pool_op *ops, uint32_t n, memd_error *err)
{
    int pre = count_subs(pools, ops, n, st->limits.max_suballocs_per_pool, err);
    if (pre < 0)
        return pre;
    applied *done = malloc(((size_t)n + 1) * sizeof *done);
    if (!done)
        return memd_self_oom(err);
    int rc = 0;
    uint32_t i;
    for (i = 0; i < n && rc == 0; i++) {
        memd_alloc *a = pools[i];
        if (ops[i].verb == MEMD_POOL_RESET) {
            rc = apply_reset(a, i, &ops[i], &done[i], err);
            if (rc < 0)
                break;
            done[i].pooled = 0;
            continue;
        }
        memd_pool_books *b = books_get(a);
        if (!b) {
            rc = memd_self_oom(err);
            break;
        }
        rc = ops[i].verb == MEMD_POOL_SUB_ALLOC ? apply_alloc(b, a, i, &ops[i], &done[i], err)
                                             : apply_free(b, a, i, &ops[i], &done[i], err);
        if (rc < 0)
            break;
        done[i].pooled = done[i].b->pooled;
    }
    if (rc < 0) {
        while (i-- > 0)
            undo(&done[i]);
        free(done);
        return rc;
    }
    /* Each pool a report touched is as of now, and counts the report once. */
    uint64_t now = memd_state_now(st), mark = ++st->next_mark;
    for (i = 0; i < n; i++) {
        memd_pool_books *b = done[i].b;
        if (b->mark != mark) {
            b->mark = mark;
            b->as_of_ns = now;
            b->reports++;
            b->added = b->removed = 0;
            done[i].first = true;
        }
        /* Every op's state counts, not only the report's end: the client went through it. */
        memd_peak_note(&b->peak, done[i].pooled, now);
        if (done[i].op == MEMD_POOL_SUB_ALLOC)
            b->added++;
        else if (done[i].op == MEMD_POOL_SUB_FREE)
            b->removed++;
        else if (done[i].old)
            b->removed += (uint32_t)done[i].old->subs.len;
    }
    record(st, s, pools, done, n);
    for (i = 0; i < n; i++) {
        if (done[i].op == MEMD_POOL_SUB_FREE) {
            free(done[i].sub);
            st->ctr.subs_released++;
        } else if (done[i].op == MEMD_POOL_RESET && done[i].old) {
            st->ctr.subs_released += done[i].old->subs.len;
            memd_pool_books_free(done[i].old);
        }
    }
    free(done);
    return 0;
}
