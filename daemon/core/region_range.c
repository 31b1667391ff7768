/* memd daemon — a region's allocatable range shrunk and restored (region_range.h).
 *
 * Kept in the state store as core's own records (hooks.h memd_record, kind
 * MEMD_RECORD_RANGE, id = device id << 16 | bank group << 8 | region), removed when
 * nothing is given up any more. Payload, version 1 (24 bytes):
 *    0 u32 device id   4 u8 bank group (memd_kind)   5 u8 region   6 u16 0
 *    8 u64 bytes given up at the bottom   16 u64 bytes given up at the top
 * At the next start (after the allocations: nothing a restored buffer holds lies there)
 * each end is given up again in one part; one the config now contradicts (the device or
 * region gone, the region smaller) is dropped with a warning and its record removed. */
#include "region_range.h"

#include <errno.h>
#include <string.h>

#include "hooks.h"
#include "le.h"
#include "log.h"

#define RECORD_VERSION 1
#define RECORD_LEN 24u

static uint64_t record_id(uint32_t device, memd_kind kind, uint8_t region)
{
    return (uint64_t)device << 16 | (uint64_t)kind << 8 | region;
}

static void record_put(memd_state *st, uint32_t device, memd_kind kind, uint8_t region,
                       const memd_region_cut *c)
{
    uint8_t p[RECORD_LEN] = {0};
    memd_le_put_u32(p, device);
    p[4] = (uint8_t)kind;
    p[5] = region;
    memd_le_put_u64(p + 8, c->bottom - c->window); /* the windows': their sub-devices' */
    memd_le_put_u64(p + 16, c->top);
    bool any = c->bottom > c->window || c->top;
    memd_record r = {.kind = MEMD_RECORD_RANGE, .version = RECORD_VERSION,
                     .id = record_id(device, kind, region), .data = any ? p : NULL,
                     .len = any ? sizeof p : 0};
    memd_hooks_record_put(st, &r); /* the store copies it */
}

int memd_region_range_change(memd_state *st, uint32_t device, memd_kind kind, uint8_t region,
                             bool reset, unsigned ends, uint64_t bytes, memd_region_cut *out,
                             memd_error *err)
{
    int dev = memd_state_dev_index(st, device);
    if (dev < 0)
        return memd_error_set(err, dev, "no device %u (%u configured)", device, st->ndevs);
    memd_device *d = st->devs[dev].dev;
    const memd_bank_group_spec *g = &st->devs[dev].spec->groups[kind];
    if (memd_device_region_cut(d, kind, region, out) < 0)
        return memd_error_set(err, -ENOENT, "device %u has no allocatable %s region %u (%u "
                              "regions)", device, memd_kind_name(kind), region, g->nregions);
    int rc;
    if (reset)
        rc = memd_device_region_reset(d, kind, region,
                                      ((ends & MEMD_RANGE_END_BOTTOM) ? 1u << MEMD_END_BOTTOM : 0) |
                                      ((ends & MEMD_RANGE_END_TOP) ? 1u << MEMD_END_TOP : 0));
    else
        rc = memd_device_region_shrink(d, kind, region,
                                       ends == MEMD_RANGE_END_TOP ? MEMD_END_TOP : MEMD_END_BOTTOM,
                                       bytes, err);
    if (rc < 0)
        return rc;
    (void)memd_device_region_cut(d, kind, region, out);
    record_put(st, device, kind, region, out);
    memd_log(LOG_INFO, "device %u %s region '%s': %llu bytes given up at the bottom, %llu at "
             "the top", device, memd_kind_name(kind), g->regions[region].name,
             (unsigned long long)out->bottom, (unsigned long long)out->top);
    return 0;
}

/* One end given up again at start; false with why when it cannot be. */
static bool restore_end(memd_device *d, memd_kind kind, uint8_t region, memd_end end,
                        uint64_t bytes, memd_error *why)
{
    return bytes == 0 || memd_device_region_shrink(d, kind, region, end, bytes, why) == 0;
}

/* Hook: one stored record at start. 1 if it was a range's (given up again, or dropped
 * with a warning), 0 if another kind, -EINVAL for one that does not decode. */
static int on_record_restore(void *data, const memd_record *r, memd_error *err)
{
    memd_state *st = data;
    if (r->kind != MEMD_RECORD_RANGE)
        return 0;
    if (r->version != RECORD_VERSION || r->len != RECORD_LEN || r->data[4] >= MEMD_KIND_COUNT)
        return memd_error_set(err, -EINVAL, "region range record %llu: %s",
                              (unsigned long long)r->id,
                              r->version != RECORD_VERSION ? "written by another memd version"
                                                           : "damaged");
    uint32_t device = memd_le_u32(r->data);
    memd_kind kind = (memd_kind)r->data[4];
    uint8_t region = r->data[5];
    uint64_t bottom = memd_le_u64(r->data + 8), top = memd_le_u64(r->data + 16);
    int dev = memd_state_dev_index(st, device);
    memd_error why = {0};
    memd_region_cut now;
    if (dev < 0)
        memd_error_set(&why, -ENODEV, "no device %u", device);
    else if (memd_device_region_cut(st->devs[dev].dev, kind, region, &now) < 0)
        memd_error_set(&why, -ENOENT, "no allocatable %s region %u", memd_kind_name(kind), region);
    else if (restore_end(st->devs[dev].dev, kind, region, MEMD_END_BOTTOM, bottom, &why) &&
             restore_end(st->devs[dev].dev, kind, region, MEMD_END_TOP, top, &why))
        return 1;
    if (dev >= 0) /* nothing half given up */
        (void)memd_device_region_reset(st->devs[dev].dev, kind, region, 3);
    memd_log(LOG_WARNING, "device %u %s region %u: its range given up before the restart is "
             "restored: %s", device, memd_kind_name(kind), region, why.msg);
    memd_record gone = {.kind = MEMD_RECORD_RANGE, .id = r->id};
    memd_hooks_record_put(st, &gone);
    return 1;
}

static const memd_state_events record_events = {.record_restore = on_record_restore};

void memd_region_range_listen(memd_state *st)
{
    memd_hook_add(st, &st->range_hook, &record_events, st);
}
