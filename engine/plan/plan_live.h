/* memd engine — the buffers live at one instant of a sweep over time, as disjoint
 * offset intervals: a treap by offset whose subtrees know their widest inner free gap,
 * with a min-heap of end times. Nodes sit in slots of one compact array, reused as
 * buffers end, so a sweep touches memory in proportion to what is live, not to n. The
 * start-order placer (plan_sweep.c) asks it for the lowest gap that fits; the plan
 * validator (plan_validate.c) adds each placement, which refuses an overlap. */
#ifndef MEMD_PLAN_LIVE_H
#define MEMD_PLAN_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A live buffer's interval [a, e), its id, and its subtree's lowest start, highest end
 * and widest free gap between two of its intervals. Slot 0 is "none". */
typedef struct plan_live_node {
    uint64_t a, e, mina, maxe, gap;
    uint32_t c[2], id; /* children: lower starts, higher starts */
} plan_live_node;

typedef struct plan_live_end {
    uint64_t upper;
    uint32_t slot;
} plan_live_end;

typedef struct plan_live {
    plan_live_node *nd;
    plan_live_end *heap;
    uint32_t *freel; /* free slots */
    size_t cap, used, nfree, nheap;
    uint32_t root;
} plan_live;

/* Removes the intervals whose buffers end at or before t (half-open lifetimes). */
void plan_live_expire(plan_live *w, uint64_t t);
/* Adds [a, e) (non-empty) for buffer id, live until upper: 0; 1 without adding it when
 * it overlaps a live interval, whose buffer *clash then names (its in-order neighbours
 * are on the insertion path: the check is free); -ENOMEM. */
int plan_live_add(plan_live *w, uint64_t a, uint64_t e, uint64_t upper, uint32_t id,
                  uint32_t *clash);
/* The lowest aligned offset where size fits among the live intervals; best fit takes
 * the tightest (ties: the lowest) of the first max_gaps gaps that fit (0: all). Above
 * every interval when no gap fits. */
uint64_t plan_live_fit(const plan_live *w, uint64_t size, uint64_t align, bool best_fit,
                       unsigned max_gaps);
void plan_live_free(plan_live *w);

#endif
