/* memd daemon — a region's allocatable range shrunk and restored by an admin
 * (REGION_RANGE: tt-metal's shrink_size / reset_size; the engine's
 * memd_device_region_shrink), kept in the state store as core's own records. */
#ifndef MEMD_DAEMON_REGION_RANGE_H
#define MEMD_DAEMON_REGION_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "state.h"

enum { MEMD_RANGE_END_BOTTOM = 1u << 0, MEMD_RANGE_END_TOP = 1u << 1 };

/* Shrink (ends: one end, bytes more given up there) or reset (ends: one or both) region
 * `region` of group kind on device id `device`; out says what is left. The caller ran
 * memd_hooks_prepare: the change is in the state store before the reply. 0, or a
 * negative errno with err filled (the engine's: -EBUSY naming the buffer, -ERANGE,
 * -EINVAL; -ENODEV, -ENOENT). */
int memd_region_range_change(memd_state *st, uint32_t device, memd_kind kind, uint8_t region,
                             bool reset, unsigned ends, uint64_t bytes, memd_region_cut *out,
                             memd_error *err);

/* Registers core's listener for MEMD_RECORD_RANGE records at restore (st->range_hook). */
void memd_region_range_listen(memd_state *st);

#endif
