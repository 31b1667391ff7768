/* memd engine — where an aligned request goes inside one free block. Shared by the range
 * allocator (range.c) and the coverage map (cover.c) so both place with the same rules. */
#ifndef MEMD_ENGINE_PLACE_H
#define MEMD_ENGINE_PLACE_H

#include <stdbool.h>
#include <stdint.h>

#include "memd/types.h"

/* Where sz bytes aligned to al (power of two) go inside free block [a, a + s) in
 * direction dir; false if they do not fit. Both directions fit exactly when an aligned
 * address exists in [a, a + s - sz], so fitting does not depend on the direction. The
 * block must not wrap past 2^64. */
static inline bool memd_place(uint64_t a, uint64_t s, uint64_t sz, uint64_t al, memd_dir dir,
                              uint64_t *at)
{
    if (s < sz)
        return false;
    uint64_t last = a + (s - sz); /* inside the arena: no overflow */
    uint64_t x;
    if (dir == MEMD_DIR_TOP_DOWN) {
        x = last & ~(al - 1);
        if (x < a)
            return false;
    } else {
        if (a > UINT64_MAX - (al - 1))
            return false;
        x = (a + (al - 1)) & ~(al - 1);
        if (x > last)
            return false;
    }
    *at = x;
    return true;
}

#endif
