/* memd engine — first-fit lower bounds for per-bank searches (bank_hints.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bank_hints.h"

/* Size classes: 1 unit, then two an octave (2, 3, 4, 6, 8, 12, ... units) up to 256
 * units (8 KiB in 32-byte units); larger requests share the last class. Simulated on
 * memd-bench-alloc --banks mixed (10k live): blocks merged per per-bank search 94 from
 * the region's end, 26 from bounds with a class per unit, 28 with eight an octave, 30
 * with four, 34 with two (32 measured with these). Sixteen keep a bank's bounds in
 * eight cache lines, which its searches and frees touch. */
#define CLASSES 16
/* Shared-map frees a bank may miss before it forgets its bounds. */
#define SHARED_LOG 64

typedef struct span {
    uint64_t lo, hi;
} span;

typedef struct bank_hint {
    uint64_t seen; /* shared-log entries applied */
    /* Bottom-up: no fit of cls_floor(c) units or more starts below up[c]; top-down: none
     * ends above end[c]. Both hold for the larger classes too: up is non-decreasing in
     * c, end non-increasing. (Top-down bounds ends, not starts: a free then moves every
     * class's bound to the same value, and the loops stop at the first class already
     * past it.) */
    uint64_t up[CLASSES];
    uint64_t end[CLASSES];
} bank_hint;

struct memd_hints {
    uint64_t unit;
    uint32_t banks;
    uint64_t logged; /* shared-log entries written */
    span log[SHARED_LOG];
    bank_hint bank[];
};

/* The smallest size of class c, in units. */
static inline uint64_t cls_floor(unsigned c)
{
    if (c == 0)
        return 1;
    unsigned k = c - 1;
    return (uint64_t)(2 + k % 2) << (k / 2);
}

/* The class of a request of u >= 1 units: the largest whose floor is <= u. */
static inline unsigned cls_of(uint64_t u)
{
    if (u < 2)
        return 0;
    unsigned e = 63 - (unsigned)__builtin_clzll(u); /* >= 1 */
    unsigned c = 1 + (e - 1) * 2 + (unsigned)((u >> (e - 1)) & 1);
    return c < CLASSES ? c : CLASSES - 1;
}

static void forget(bank_hint *b)
{
    for (unsigned c = 0; c < CLASSES; c++) {
        b->up[c] = 0;
        b->end[c] = UINT64_MAX;
    }
}

int memd_hints_create(uint32_t banks, uint64_t unit, memd_hints **out)
{
    if (!out || banks == 0 || unit == 0 || (unit & (unit - 1)) != 0 || unit > (UINT64_C(1) << 40))
        return -EINVAL;
    memd_hints *h = malloc(sizeof(*h) + sizeof(bank_hint) * banks);
    if (!h)
        return -ENOMEM;
    h->unit = unit;
    h->banks = banks;
    h->logged = 0;
    for (uint32_t i = 0; i < banks; i++) {
        forget(&h->bank[i]);
        h->bank[i].seen = 0;
    }
    *out = h;
    return 0;
}

void memd_hints_destroy(memd_hints *h)
{
    free(h);
}

/* [lo, hi) became a free block of one of the two maps: every fit it makes possible lies
 * inside it (bank_hints.h), in the classes whose floor fits in it. Monotone bounds: the
 * smaller classes are past lo / hi already once one is. */
static void freed(bank_hint *b, uint64_t unit, uint64_t lo, uint64_t hi)
{
    uint64_t units = (hi - lo) / unit;
    if (units == 0)
        return;
    unsigned top = cls_of(units);
    for (unsigned c = top + 1; c-- > 0 && b->up[c] > lo;)
        b->up[c] = lo;
    for (unsigned c = top + 1; c-- > 0 && b->end[c] < hi;)
        b->end[c] = hi;
}

void memd_hints_shared_freed(memd_hints *h, uint64_t lo, uint64_t hi)
{
    h->log[h->logged % SHARED_LOG] = (span){lo, hi};
    h->logged++;
}

void memd_hints_own_freed(memd_hints *h, uint32_t bank, uint64_t lo, uint64_t hi)
{
    freed(&h->bank[bank], h->unit, lo, hi);
}

uint64_t memd_hints_start(memd_hints *h, uint32_t bank, memd_dir dir, uint64_t sz)
{
    bank_hint *b = &h->bank[bank];
    if (h->logged - b->seen > SHARED_LOG) {
        forget(b);
    } else {
        for (uint64_t i = b->seen; i < h->logged; i++)
            freed(b, h->unit, h->log[i % SHARED_LOG].lo, h->log[i % SHARED_LOG].hi);
    }
    b->seen = h->logged;
    unsigned c = cls_of(sz / h->unit);
    if (dir != MEMD_DIR_TOP_DOWN)
        return b->up[c];
    /* Ends at or below end[c]: starts at or below end[c] - sz (none at all below sz: 0
     * is as good a bound then, the search finds nothing either way). */
    return b->end[c] == UINT64_MAX ? UINT64_MAX : b->end[c] >= sz ? b->end[c] - sz : 0;
}

void memd_hints_found(memd_hints *h, uint32_t bank, memd_dir dir, uint64_t sz, uint64_t addr)
{
    bank_hint *b = &h->bank[bank];
    uint64_t u = sz / h->unit;
    unsigned c = cls_of(u);
    if (cls_floor(c) < u)
        c++; /* the answer bounds only classes whose every size is >= sz */
    /* Monotone: once a bound is past the answer, so are the ones of the larger classes.
     * Top-down, a fit of n >= sz bytes ending at e holds one of sz bytes ending at e,
     * which starts at or below addr: every such fit ends at or below addr + sz. */
    if (dir == MEMD_DIR_TOP_DOWN) {
        for (; c < CLASSES && b->end[c] > addr + sz; c++)
            b->end[c] = addr + sz;
    } else {
        for (; c < CLASSES && b->up[c] < addr; c++)
            b->up[c] = addr;
    }
}
