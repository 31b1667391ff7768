/* memd daemon — per-uid quotas: bytes per bank each uid holds in each bank group (DRAM,
 * SRAM) of each device. */
#ifndef MEMD_DAEMON_QUOTA_H
#define MEMD_DAEMON_QUOTA_H

#include <stdint.h>

#include "state.h"

/* Bytes per bank uid holds in bank group kind of device index dev. */
uint64_t memd_quota_used(const memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid);
/* Makes sure (dev, kind, uid) has its slot, so that memd_quota_add after a placement
 * cannot fail. 0 or -ENOMEM. */
int memd_quota_reserve(memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid);
/* Charges bytes to (dev, kind, uid), whose slot memd_quota_reserve made. */
void memd_quota_add(memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid, uint64_t bytes);
/* Gives bytes back; the slot goes with the last byte (bytes 0 drops an unused slot). */
void memd_quota_sub(memd_state *st, uint32_t dev, memd_kind kind, uint32_t uid, uint64_t bytes);
/* Counts every allocation's bytes again, for a quota set while allocations live (a
 * reload). 0, or -ENOMEM with the books unchanged. */
int memd_quota_recount(memd_state *st);

#endif
