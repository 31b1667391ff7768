/* memd daemon — who holds a region: the sessions holding the most of one region of one
 * device, for out-of-memory messages ("who has it all?"). */
#ifndef MEMD_DAEMON_HOLDERS_H
#define MEMD_DAEMON_HOLDERS_H

#include <stddef.h>
#include <stdint.h>

#include "state.h"

typedef struct memd_region_holder {
    const memd_session *s;
    uint64_t bytes;                /* device bytes (size per bank x banks) it holds there */
} memd_region_holder;

/* The (at most n) sessions holding the most bytes in region `region` of bank group kind
 * of device index dev, biggest first (a shared buffer counts for each holder). A walk
 * over every session's holds: for failures, not for the allocation path. Returns how
 * many it wrote. */
size_t memd_region_top_holders(const memd_state *st, uint32_t dev, uint8_t kind,
                               uint8_t region, memd_region_holder *out, size_t n);

/* "pid 42 python3 'runtime' 1.5 GiB, pid 7 ..." for the top holders, cut to fit len;
 * "nobody" when the region holds nothing. */
void memd_region_holders_text(const memd_state *st, uint32_t dev, uint8_t kind,
                              uint8_t region, char *buf, size_t len);

#endif
