/* memd engine — turning a footprint/alloc error code back into a sentence a client can
 * act on. The engine returns plain errno values; only here do they get names. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "device_internal.h"

/* The first id of the request's bank set that is out of range or out of order: its
 * index, or nbank_set when there is none. */
static uint32_t bad_set(const memd_alloc_req *req, uint32_t banks)
{
    uint32_t i = 0;
    for (; req->bank_set && i < req->nbank_set; i++)
        if (req->bank_set[i] >= banks || (i && req->bank_set[i] <= req->bank_set[i - 1]))
            break;
    return req->bank_set ? i : req->nbank_set;
}

static const char *why_einval(const memd_device *d, const memd_alloc_req *req, char *buf, size_t len)
{
    const char *dev = d->spec.name;
    if ((unsigned)req->scope >= MEMD_SCOPE_COUNT)
        snprintf(buf, len, "unknown scope %d", (int)req->scope);
    else if ((unsigned)req->cls >= MEMD_CLASS_COUNT)
        snprintf(buf, len, "unknown buffer class %d", (int)req->cls);
    else if (req->alignment && (req->alignment & (req->alignment - 1)))
        snprintf(buf, len, "alignment %" PRIu64 " is not a power of two", req->alignment);
    else {
        memd_kind k = req->scope == MEMD_SCOPE_SRAM ? MEMD_KIND_SRAM : MEMD_KIND_DRAM;
        uint32_t banks = d->spec.groups[k].banks;
        uint64_t bank_size = d->spec.groups[k].bank_size;
        if (req->alignment > bank_size)
            snprintf(buf, len, "alignment %" PRIu64 " exceeds the bank size %" PRIu64 " of %s",
                     req->alignment, bank_size, memd_scope_name(req->scope));
        else if (d->spec.ttmetal && k == MEMD_KIND_DRAM && (req->nbank_set || req->per_bank))
            snprintf(buf, len, "tt-metal devices take bank sets and per-bank buffers in L1 only, "
                     "not in %s", memd_scope_name(req->scope));
        else if (req->range_lockstep && (req->per_bank || req->nbank_set == 0))
            snprintf(buf, len, "range lockstep needs a bank set (the banks its address is "
                     "searched in) and is not per bank");
        else if (req->sizes && (!req->per_bank || req->nbank_set == 0 || req->range_lockstep))
            snprintf(buf, len, "per-core shard sizes need a per-bank buffer over a bank set");
        else if (req->sizes && (req->bytes || req->dtype != MEMD_DTYPE_NONE || req->ndim ||
                                req->page_size || req->scope == MEMD_SCOPE_DRAM_TEXTURE))
            snprintf(buf, len, "with per-core shard sizes the sizes are the buffer: bytes, "
                     "shape and page size must be 0, and the scope not a texture");
        else if (req->nbank_set > banks || (req->nbank_set && !req->bank_set))
            snprintf(buf, len, "bank set of %" PRIu32 " banks, but %s of device '%s' has %" PRIu32,
                     req->nbank_set, memd_scope_name(req->scope), dev, banks);
        else if (bad_set(req, banks) < req->nbank_set) {
            uint32_t i = bad_set(req, banks), id = req->bank_set[i];
            if (id >= banks)
                snprintf(buf, len, "bank set: no bank %" PRIu32 " (banks 0-%" PRIu32 ")", id,
                         banks - 1);
            else
                snprintf(buf, len, "bank set: ids must be strictly increasing, %" PRIu32
                         " comes after %" PRIu32, id, req->bank_set[i - 1]);
        }
        else if (req->nbank_set && req->banks && req->banks != req->nbank_set)
            snprintf(buf, len, "banks %" PRIu32 " differs from the bank set's %" PRIu32 " banks",
                     req->banks, req->nbank_set);
        else if (req->per_bank && !req->nbank_set && req->banks && req->banks != banks)
            snprintf(buf, len, "per bank without a bank set takes a piece in each of the %" PRIu32
                     " banks: banks %" PRIu32 " would leave the others unused; give banks 0 or "
                     "a bank set", banks, req->banks);
        else if (req->banks > banks)
            snprintf(buf, len, "%" PRIu32 " banks requested, but %s of device '%s' has %" PRIu32,
                     req->banks, memd_scope_name(req->scope), dev, banks);
        else if (req->scope == MEMD_SCOPE_DRAM_TEXTURE)
            snprintf(buf, len,
                     "dram.texture needs a shape [height, width] or [height, width, 4] of non-zero "
                     "texels with a dtype (no bytes), and page_size 0 or the row pitch");
        else
            snprintf(buf, len,
                     "give bytes, or a shape of 1 to %d non-zero dimensions with a dtype, not both",
                     MEMD_MAX_DIMS);
    }
    return buf;
}

const char *memd_device_describe_error(const memd_device *d, const memd_alloc_req *req, int rc,
                                       char *buf, size_t len)
{
    if (!buf || len == 0)
        return buf;
    if (!d || !req) {
        snprintf(buf, len, "%s", strerror(rc < 0 ? -rc : rc));
        return buf;
    }
    const char *dev = d->spec.name;
    const char *scope = memd_scope_name(req->scope);
    const char *cls = memd_class_name(req->cls);
    memd_kind kind = req->scope == MEMD_SCOPE_SRAM ? MEMD_KIND_SRAM : MEMD_KIND_DRAM;
    memd_placement p;
    switch (rc) {
    case -EOPNOTSUPP:
        if ((unsigned)req->scope < MEMD_SCOPE_COUNT &&
            (d->spec.groups[kind].banks == 0 ||
             (req->scope == MEMD_SCOPE_DRAM_TEXTURE && !d->spec.texture.enabled)))
            snprintf(buf, len, "device '%s' does not offer scope %s", dev, scope);
        else
            snprintf(buf, len, "device '%s' does not offer class %s in scope %s", dev, cls, scope);
        break;
    case -E2BIG:
        if (req->scope == MEMD_SCOPE_DRAM_TEXTURE &&
            (req->shape[0] > d->spec.texture.max_height || req->shape[1] > d->spec.texture.max_width))
            snprintf(buf, len,
                     "texture %" PRIu64 " x %" PRIu64 " (height x width) exceeds device '%s' limit of %" PRIu32
                     " x %" PRIu32,
                     req->shape[0], req->shape[1], dev, d->spec.texture.max_height, d->spec.texture.max_width);
        else
            snprintf(buf, len, "%s %s buffer is larger than its region on device '%s'", scope, cls, dev);
        break;
    case -ENOMEM:
        if (memd_device_footprint(d, req, &p) == 0 && d->oom_bank != UINT32_MAX) {
            /* A split region: one bank ran out; name it and give its own state. */
            memd_range_stats st;
            memd_device_bank_stats(d, p.kind, p.region, d->oom_bank, &st);
            snprintf(buf, len,
                     "no room for %" PRIu64 " bytes in bank %" PRIu32 " of %s region '%s' of device "
                     "'%s' (bank %" PRIu32 ": largest free block %" PRIu64 ", %" PRIu64 " free)",
                     p.size_per_bank, d->oom_bank, memd_kind_name(p.kind),
                     d->spec.groups[p.kind].regions[p.region].name, dev, d->oom_bank,
                     st.largest_free, st.free);
        } else if (memd_device_footprint(d, req, &p) == 0) {
            memd_range_stats st;
            memd_device_region_stats(d, p.kind, p.region, &st);
            snprintf(buf, len,
                     "no room for %" PRIu64 " bytes per bank in %s region '%s' of device '%s' "
                     "(largest free block %" PRIu64 ", %" PRIu64 " free)",
                     p.size_per_bank, memd_kind_name(p.kind), d->spec.groups[p.kind].regions[p.region].name,
                     dev, st.largest_free, st.free);
        } else {
            snprintf(buf, len, "out of memory on device '%s'", dev);
        }
        break;
    case -ENOBUFS:
        snprintf(buf, len, "memd itself is out of memory (device '%s')", dev);
        break;
    case -EOVERFLOW:
        snprintf(buf, len, "%s %s request on device '%s': size overflows 64 bits", scope, cls, dev);
        break;
    case -EINVAL: {
        char why[256];
        snprintf(buf, len, "invalid %s request on device '%s': %s", scope, dev, why_einval(d, req, why, sizeof(why)));
        break;
    }
    default:
        snprintf(buf, len, "device '%s': %s", dev, strerror(rc < 0 ? -rc : rc));
        break;
    }
    return buf;
}

const char *memd_device_describe_fixed_error(const memd_device *d, const memd_alloc_req *req,
                                             uint64_t address, int rc, char *buf, size_t len)
{
    memd_placement p;
    if (!buf || len == 0 || !d || !req || memd_device_footprint(d, req, &p) != 0 ||
        (rc != -EINVAL && rc != -ERANGE && rc != -EBUSY))
        return memd_device_describe_error(d, req, rc, buf, len);
    const char *region = d->spec.groups[p.kind].regions[p.region].name;
    uint64_t lo, hi;
    memd_region_span(d, p.kind, p.region, &lo, &hi);
    if (rc == -EINVAL)
        snprintf(buf, len, "address 0x%" PRIx64 " is not aligned: %s %s buffers on device '%s' "
                 "start at multiples of %" PRIu64, address, memd_scope_name(req->scope),
                 memd_class_name(req->cls), d->spec.name,
                 memd_device_req_alignment(d, p.kind, req));
    else if (rc == -ERANGE)
        snprintf(buf, len, "%" PRIu64 " bytes per bank at 0x%" PRIx64 " do not lie inside %s "
                 "region '%s' [0x%" PRIx64 ", 0x%" PRIx64 ") of device '%s'", p.size_per_bank,
                 address, memd_kind_name(p.kind), region, lo, hi, d->spec.name);
    else
        snprintf(buf, len, "[0x%" PRIx64 ", 0x%" PRIx64 ") is taken in %s region '%s' of device "
                 "'%s' (in some bank the buffer needs)", address, address + p.size_per_bank,
                 memd_kind_name(p.kind), region, d->spec.name);
    return buf;
}
