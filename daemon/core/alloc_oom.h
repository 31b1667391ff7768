/* memd daemon — out-of-memory messages of allocations (alloc_oom.c). */
#ifndef MEMD_DAEMON_ALLOC_OOM_H
#define MEMD_DAEMON_ALLOC_OOM_H

#include <stdint.h>

#include "device.h"
#include "error.h"
#include "state.h"

/* -ENOMEM (detail NOMEM) for request r that did not fit on device index dev: fp its
 * footprint (size per bank over the region's size: larger than the region), bank the
 * bank that ran out (UINT32_MAX: the lockstep region) whose figures err->room holds
 * (requested and the region's state already filled). */
int memd_alloc_oom_error(const memd_state *st, uint32_t dev, const memd_alloc_req *r,
                         const memd_placement *fp, uint32_t bank, memd_error *err);

#endif
