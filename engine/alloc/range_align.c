/* memd engine — aligned first-fit indexes (see range_align.h). */
#include <errno.h>
#include <stddef.h>

#include "range_align.h"

void memd_range_aidx_fini(memd_range_aidx *x)
{
    for (unsigned i = 0; i < x->n; i++)
        memd_bt_fini(&x->t[i]);
    x->n = 0;
}

memd_bt *memd_range_aidx_get(memd_range_aidx *x, uint64_t al)
{
    x->tick++;
    for (unsigned i = 0; i < x->n; i++) {
        if (x->al[i] == al) {
            x->used[i] = x->tick;
            return &x->t[i];
        }
    }
    return NULL;
}

/* Drop index i; the last one takes its slot. */
static void drop(memd_range_aidx *x, unsigned i)
{
    memd_bt_fini(&x->t[i]);
    x->n--;
    x->t[i] = x->t[x->n];
    x->al[i] = x->al[x->n];
    x->used[i] = x->used[x->n];
}

bool memd_range_aidx_build(memd_range_aidx *x, uint64_t al, const memd_bt *by_addr,
                           uint64_t entries)
{
    if (x->n == MEMD_RANGE_AIDX_MAX) {
        unsigned old = 0;
        for (unsigned i = 1; i < x->n; i++)
            if (x->used[i] < x->used[old])
                old = i;
        if (x->tick - x->used[old] < MEMD_RANGE_AIDX_IDLE)
            return false;
        drop(x, old);
    }
    memd_bt *t = &x->t[x->n];
    if (memd_bt_init(t) < 0)
        return false;
    if (memd_bt_hold(t, entries) < 0) {
        memd_bt_fini(t);
        return false;
    }
    /* Entries arrive in address order: each goes at the end, so a seek per entry is only
     * a descent along the right edge. */
    memd_bt_path p;
    memd_bt_seek_k(by_addr, 0, &p);
    for (bool ok = memd_bt_settle(by_addr, &p); ok; ok = memd_bt_next(by_addr, &p)) {
        uint64_t a, s;
        memd_bt_get(by_addr, &p, &a, &s);
        if (memd_bt_reserve(t, 1) < 0) {
            memd_bt_fini(t);
            return false;
        }
        memd_bt_path q;
        memd_bt_seek_k(t, a, &q);
        memd_bt_insert(t, &q, a, memd_range_room(a, s, al));
    }
    x->al[x->n] = al;
    x->used[x->n++] = x->tick;
    return true;
}

int memd_range_aidx_hold(memd_range_aidx *x, uint64_t entries)
{
    for (unsigned i = 0; i < x->n; i++)
        if (memd_bt_hold(&x->t[i], entries) < 0)
            return -ENOMEM;
    return 0;
}

int memd_range_aidx_reserve(memd_range_aidx *x, unsigned inserts)
{
    for (unsigned i = 0; i < x->n; i++)
        if (memd_bt_reserve(&x->t[i], inserts) < 0)
            return -ENOMEM;
    return 0;
}

void memd_range_aidx_change(memd_range_aidx *x, uint64_t old_a, uint64_t new_a,
                            uint64_t new_s)
{
    for (unsigned i = 0; i < x->n; i++) {
        memd_bt *t = &x->t[i];
        memd_bt_path p;
        if (old_a == UINT64_MAX) {
            memd_bt_seek_k(t, new_a, &p);
            memd_bt_insert(t, &p, new_a, memd_range_room(new_a, new_s, x->al[i]));
            continue;
        }
        memd_bt_seek_k(t, old_a, &p);
        memd_bt_settle(t, &p); /* the block is indexed: it is at p */
        if (new_s == 0)
            memd_bt_delete(t, &p);
        else
            memd_bt_set(t, &p, new_a, memd_range_room(new_a, new_s, x->al[i]));
    }
}

int memd_range_aidx_check(const memd_range_aidx *x, const memd_bt *by_addr)
{
    for (unsigned i = 0; i < x->n; i++) {
        const memd_bt *t = &x->t[i];
        if (memd_bt_check(t) < 0 || t->count != by_addr->count)
            return -EFAULT;
        memd_bt_path p, q;
        memd_bt_seek_k(by_addr, 0, &p);
        memd_bt_seek_k(t, 0, &q);
        bool ok = memd_bt_settle(by_addr, &p), oq = memd_bt_settle(t, &q);
        for (; ok && oq; ok = memd_bt_next(by_addr, &p), oq = memd_bt_next(t, &q)) {
            uint64_t a, s, b, room;
            memd_bt_get(by_addr, &p, &a, &s);
            memd_bt_get(t, &q, &b, &room);
            if (a != b || room != memd_range_room(a, s, x->al[i]))
                return -EFAULT;
        }
        if (ok != oq)
            return -EFAULT;
    }
    return 0;
}
