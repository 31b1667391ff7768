/* memd engine — one placement of the exact plan search and its undo: the unplaced
 * lists, the lowest offsets of the neighbours, section totals and witnesses, and the
 * trail that restores them (see plan_search.c for why witnesses). */
#include "plan_search_internal.h"

/* A new entry on the trail, or NULL (c->oom set) when the trail cannot grow. */
static inline trail_ent *trail_push(plan_search_ctx *c)
{
    if (c->ntr == c->trcap) {
        trail_ent *tr = memd_plan_search_grow(c, c->tr, &c->trcap, c->ntr + 1, sizeof(*tr));
        if (!tr)
            return NULL;
        c->tr = tr;
    }
    return &c->tr[c->ntr++];
}

static inline bool trail_min(plan_search_ctx *c, uint32_t y)
{
    trail_ent *e = trail_push(c);
    if (!e)
        return false;
    e->i = y;
    e->v = c->minoff[y];
    return true;
}

static inline bool set_wit(plan_search_ctx *c, uint32_t s, uint32_t w)
{
    trail_ent *e = trail_push(c);
    if (!e)
        return false;
    uint32_t old = c->wit[s];
    e->i = TR_WIT | s;
    e->w = old;
    if (old != NONE)
        c->wcnt[old]--;
    c->wit[s] = w;
    c->wcnt[w]++;
    return true;
}

static void trail_undo(plan_search_ctx *c, size_t to)
{
    while (c->ntr > to) {
        const trail_ent *e = &c->tr[--c->ntr];
        if (e->i & TR_WIT) {
            uint32_t s = e->i & ~TR_WIT;
            c->wcnt[c->wit[s]]--;
            c->wit[s] = e->w;
            if (e->w != NONE)
                c->wcnt[e->w]++;
        } else {
            c->minoff[e->i] = e->v;
        }
    }
}

static inline void unpl_remove(plan_search_ctx *c, part *pt, uint32_t x)
{
    uint32_t *l = c->pool + pt->base;
    uint32_t p = c->upos[x], last = l[--pt->nun];
    l[p] = last;
    c->upos[last] = p;
    l[pt->nun] = x; /* parked at the end so undo can swap back */
    c->upos[x] = (uint32_t)pt->nun;
}

static inline void unpl_restore(plan_search_ctx *c, part *pt, uint32_t x, uint32_t p)
{
    /* x sits at index nun (parked); the element now at p came from there. */
    uint32_t *l = c->pool + pt->base;
    uint32_t moved = l[p];
    l[p] = x;
    c->upos[x] = p;
    l[pt->nun] = moved;
    c->upos[moved] = (uint32_t)pt->nun;
    pt->nun++;
}

/* Finds a new witness for section s (total > 0): an unplaced member whose lowest
 * offset leaves room for the section's unplaced total. false when there is none (the
 * section cannot fit). */
static bool rewitness(plan_search_ctx *c, uint32_t s)
{
    /* The first member low enough will do: scanning for the lowest one costs more
     * than the extra re-witnessing it would save. */
    uint64_t lim = c->cap - c->total[s];
    const uint32_t *row = c->smem + c->soff[s];
    for (size_t m = 0, k = c->nun_s[s]; m < k; m++)
        if (c->minoff[row[m]] <= lim)
            return set_wit(c, s, row[m]);
    return false;
}

int memd_plan_search_place(plan_search_ctx *c, part *pt, uint32_t x, uint64_t o, bool *hatless)
{
    const uint64_t *sz = c->sz, *am = c->amask;
    const plan_graph *g = c->g;
    uint64_t top = o + sz[x], cap = c->cap;
    c->off[x] = o;
    c->placed[x] = 1;
    unpl_remove(c, pt, x);
    for (uint32_t s = c->sl[x], *mp = c->mpos + c->mbase[x]; s < c->sh[x]; s++, mp++) {
        c->total[s] -= sz[x];
        /* swap x behind the unplaced prefix of the row; undo swaps it back */
        uint32_t *row = c->smem + c->soff[s];
        uint32_t last = --c->nun_s[s], y = row[last], p = *mp;
        row[p] = y;
        c->mpos[c->mbase[y] + (s - c->sl[y])] = p;
        row[last] = x; /* *mp keeps p: where x goes back to on undo */
    }
    *hatless = true;
    size_t nr = 0;
    for (size_t e = g->off[x]; e < g->off[x + 1]; e++) {
        uint32_t y = g->adj[e];
        if (c->placed[y])
            continue;
        *hatless = false;
        uint64_t h = (top + am[y]) & ~am[y];
        if (c->minoff[y] >= h)
            continue;
        if (!trail_min(c, y))
            return 0;
        c->minoff[y] = h;
        if (h > cap || sz[y] > cap - h)
            return 0;
        if (c->wcnt[y])
            c->raised[nr++] = y;
    }
    /* x itself may have been the witness of its sections; their totals fell, so a
     * witness that still stands stays valid. */
    for (uint32_t s = c->sl[x]; s < c->sh[x]; s++) {
        if (!c->total[s])
            continue;
        uint32_t w = c->wit[s];
        if (w == x || c->minoff[w] > cap - c->total[s])
            if (!rewitness(c, s))
                return 0;
    }
    for (size_t r = 0; r < nr; r++) {
        uint32_t y = c->raised[r];
        for (uint32_t s = c->sl[y]; s < c->sh[y] && c->wcnt[y]; s++)
            if (c->wit[s] == y && c->minoff[y] > cap - c->total[s])
                if (!rewitness(c, s))
                    return 0;
    }
    return 1;
}

void memd_plan_search_unplace(plan_search_ctx *c, part *pt, uint32_t x, uint32_t upos, size_t tr)
{
    trail_undo(c, tr);
    /* Rows are restored in reverse order of the removals (x was removed last). */
    for (uint32_t s = c->sh[x], *mp = c->mpos + c->mbase[x] + (c->sh[x] - c->sl[x]); s-- > c->sl[x];) {
        mp--;
        c->total[s] += c->b[x].size;
        uint32_t *row = c->smem + c->soff[s];
        uint32_t p = *mp, at = c->nun_s[s]++; /* x sits at 'at' */
        uint32_t y = row[p];
        /* y was moved from 'at' to p when x was removed: move it back */
        row[at] = y;
        c->mpos[c->mbase[y] + (s - c->sl[y])] = at;
        row[p] = x;
    }
    c->placed[x] = 0;
    unpl_restore(c, pt, x, upos);
}
