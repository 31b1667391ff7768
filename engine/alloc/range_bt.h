/* memd engine — private B+tree of (k, v) pairs for the range allocator.
 *
 * Entries are ordered by (k, v) and unique. Every inner node keeps, per child, the
 * smallest pair in that child's subtree (the separator) and the largest v in it (the
 * max), so "first entry in order with v >= x" is one descent. The range allocator keeps
 * its free blocks as (addr, size) — first fit is that descent — and, for best fit, as
 * (size, addr).
 *
 * Why a B+tree and not a binary tree: a free block costs 16 bytes of a leaf instead of a
 * 64-byte node, a descent visits 3-4 nodes instead of 15-20 for 10k-100k entries, and
 * neighbours share cache lines: the leaf lines a search touches for 33k free blocks are
 * about 0.8 MB. (An AVL tree of the same blocks measured about 2x slower per alloc/free
 * pair at 10k live blocks and 4x at 100k.)
 *
 * Positions are paths (node and index per level). A path stays valid across
 * memd_bt_set; memd_bt_insert and memd_bt_delete invalidate it. Nodes come from a pool
 * owned by the tree; memd_bt_reserve must be called before inserts so the operation
 * itself cannot fail half-way.
 */
#ifndef MEMD_ENGINE_RANGE_BT_H
#define MEMD_ENGINE_RANGE_BT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Measured with memd-bench-alloc: 32 beats 16 and 24 by 5-15 %; 48 and 64 gain nothing. */
#define MEMD_BT_FANOUT 32
/* Every non-root node is at least half full, so 13 levels would need more than 2^32
 * nodes; memd_bt_reserve refuses to grow past this bound anyway. */
#define MEMD_BT_MAX_DEPTH 16

typedef struct memd_bt_node {
    _Alignas(64) uint64_t k[MEMD_BT_FANOUT]; /* leaf: entries; inner: separators */
    uint64_t v[MEMD_BT_FANOUT];
    uint64_t m[MEMD_BT_FANOUT]; /* inner: max v under child i */
    uint32_t c[MEMD_BT_FANOUT]; /* inner: child ids; c[0] links the pool's spare list */
    uint32_t n;                 /* entries or children in use */
    /* Up to a power of two, so that finding node i is a shift, not a multiply: that
     * happens at every level of every descent and ascent. */
    uint8_t pad[1024 - 3 * 8 * MEMD_BT_FANOUT - 4 * MEMD_BT_FANOUT - 4];
} memd_bt_node;

typedef struct memd_bt {
    memd_bt_node *node;
    uint32_t cap, top;     /* pool capacity; ids >= top never handed out since clear */
    uint32_t spare, nspare; /* released ids */
    uint32_t root, height; /* height 1: the root is a leaf */
    uint64_t count;
} memd_bt;

typedef struct memd_bt_path {
    uint32_t node[MEMD_BT_MAX_DEPTH]; /* [0] is the root, [height - 1] a leaf */
    uint32_t idx[MEMD_BT_MAX_DEPTH];  /* child index per level; entry index in the leaf */
} memd_bt_path;

int memd_bt_init(memd_bt *t);
void memd_bt_fini(memd_bt *t);
void memd_bt_clear(memd_bt *t);
int memd_bt_grow(memd_bt *t, unsigned inserts);

/* Make room for `inserts` consecutive inserts (one insert splits at most every level and
 * adds a root). -ENOMEM leaves the tree unchanged. Inline: it runs on every operation and
 * almost never has to grow. */
static inline int memd_bt_reserve(memd_bt *t, unsigned inserts)
{
    uint64_t need = (uint64_t)inserts * (t->height + 2);
    if (t->height + inserts < MEMD_BT_MAX_DEPTH &&
        (uint64_t)t->nspare + (t->cap - t->top) >= need)
        return 0;
    return memd_bt_grow(t, inserts);
}

/* Room in the pool for any tree of up to `entries` entries, whatever its shape: every
 * non-root node is at least half full, so such a tree has at most entries / 15 + 2
 * nodes. A caller that holds room for every entry the tree can come to
 * have (the range: one free block more than its allocations) inserts without reserving:
 * a free then never allocates. -ENOMEM leaves the tree unchanged. */
int memd_bt_hold(memd_bt *t, uint64_t entries);

/* memd_bt_clear, and a pool larger than a fresh one's goes back to the system (kept
 * when memory for the small one is short). */
void memd_bt_clear_shrink(memd_bt *t);

/* Largest v in the tree, 0 if empty. */
uint64_t memd_bt_max(const memd_bt *t);

/* The (at most n, n <= MEMD_BT_TOP_MAX) entries with the largest v, largest first, into
 * k[] and v[]; returns how many. A best-first descent on the maxima that keeps only the
 * n best candidates: O(n^2 x fanout x height), no walk over the entries. */
#define MEMD_BT_TOP_MAX 32
size_t memd_bt_top_v(const memd_bt *t, size_t n, uint64_t *k, uint64_t *v);

/* Position where (k, v) would be inserted: before the first entry >= (k, v). The index
 * may be one past the end of its leaf; memd_bt_settle moves such a position onto the
 * entry it stands for. */
void memd_bt_seek(const memd_bt *t, uint64_t k, uint64_t v, memd_bt_path *p);
/* A position before the first entry with key >= k. The same entry as
 * memd_bt_seek(k, 0) once settled, found with one compare per key instead of two; the
 * position itself may be the end of the previous leaf instead, which is as good for an
 * insert. */
void memd_bt_seek_k(const memd_bt *t, uint64_t k, memd_bt_path *p);
/* memd_bt_seek_k from a path p already in the tree (any path a seek or a step left,
 * the tree unchanged since): climbs only as far as the levels whose child does not
 * hold k, then descends as memd_bt_seek_k (the same entry once settled). A search whose
 * keys move a little at a time (an anchored search walking forward or backward) pays
 * one leaf search per step instead of a root-to-leaf descent. */
void memd_bt_seek_k_near(const memd_bt *t, uint64_t k, memd_bt_path *p);
/* false: the position is past the last entry. */
bool memd_bt_settle(const memd_bt *t, memd_bt_path *p);
/* Step to the next / previous entry; false (path unchanged) at the end. */
bool memd_bt_next(const memd_bt *t, memd_bt_path *p);
bool memd_bt_prev(const memd_bt *t, memd_bt_path *p);

/* The first entry with v >= x in order (dir 0) or reverse order (dir 1). */
bool memd_bt_fit(const memd_bt *t, uint64_t x, int dir, memd_bt_path *p);
/* The next such entry after the one at p, in the same direction. */
bool memd_bt_fit_next(const memd_bt *t, uint64_t x, int dir, memd_bt_path *p);

static inline void memd_bt_get(const memd_bt *t, const memd_bt_path *p, uint64_t *k,
                               uint64_t *v)
{
    const memd_bt_node *leaf = &t->node[p->node[t->height - 1]];
    uint32_t i = p->idx[t->height - 1];
    *k = leaf->k[i];
    *v = leaf->v[i];
}

/* Replace the entry at p; (k, v) must keep its place in the order. */
void memd_bt_set(memd_bt *t, memd_bt_path *p, uint64_t k, uint64_t v);
/* Insert at a position from memd_bt_seek (or one that keeps the order). Reserved. */
void memd_bt_insert(memd_bt *t, memd_bt_path *p, uint64_t k, uint64_t v);
void memd_bt_delete(memd_bt *t, memd_bt_path *p);

/* Verify order, separators, maxima, fill and count; O(n). 0 or -EFAULT. */
int memd_bt_check(const memd_bt *t);

#endif
