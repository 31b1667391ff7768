/* memd engine — from a request (class, scope, bytes or shape + dtype, pages, banks) to
 * the bytes it reserves in every bank of its group. No state is read but the spec.
 *
 * Lockstep sizing (tt-metal): P pages of S bytes spread over B banks put ceil(P / B)
 * pages in the fullest bank; every bank reserves that much at the same address, each
 * page padded to the group's alignment (the NoC's DRAM/L1 alignment):
 *     size_per_bank = ceil(P / B) * round_up(S, group alignment)
 * The start address is aligned to max(group, class policy, request) alignment.
 *
 * dram.texture: shape [height, width] or [height, width, 4] with a dtype; a texel is 4
 * channels of the dtype. row = width * 4 * sizeof(dtype), pitch = round_up(row,
 * texture.pitch_alignment), bytes = pitch * height. Each row is one page (page_size 0
 * or equal to the pitch), so rows interleave over the banks like any paged buffer. */
#include <errno.h>

#include "device_internal.h"

int memd_scope_kind(memd_scope s, memd_kind *k)
{
    switch (s) {
    case MEMD_SCOPE_DRAM:
    case MEMD_SCOPE_DRAM_TEXTURE:
        *k = MEMD_KIND_DRAM;
        return 0;
    case MEMD_SCOPE_SRAM:
        *k = MEMD_KIND_SRAM;
        return 0;
    default:
        return -EINVAL;
    }
}

/* bytes of a plain shape + dtype request. */
static int shape_bytes(const memd_alloc_req *req, uint64_t *bytes)
{
    uint32_t es = memd_dtype_size(req->dtype);
    if (es == 0 || req->ndim == 0 || req->ndim > MEMD_MAX_DIMS)
        return -EINVAL;
    uint64_t n = es;
    for (uint32_t i = 0; i < req->ndim; i++) {
        if (req->shape[i] == 0)
            return -EINVAL;
        if (!memd_mul_ok(n, req->shape[i], &n))
            return -EOVERFLOW;
    }
    *bytes = n;
    return 0;
}

static int texture_bytes(const memd_texture_spec *t, const memd_alloc_req *req,
                         uint64_t *bytes, uint64_t *pitch)
{
    uint32_t es = memd_dtype_size(req->dtype);
    if (es == 0 || req->bytes != 0)
        return -EINVAL; /* a texture is always shape + dtype */
    if (req->ndim != 2 && !(req->ndim == 3 && req->shape[2] == 4))
        return -EINVAL;
    uint64_t h = req->shape[0], w = req->shape[1];
    if (h == 0 || w == 0)
        return -EINVAL;
    if (w > t->max_width || h > t->max_height)
        return -E2BIG;
    uint64_t row, p, total;
    /* w <= 2^32 and es <= 8: w * 4 * es < 2^38 cannot overflow. */
    row = w * 4u * es;
    if (!memd_round_up(row, t->pitch_alignment, &p))
        return -EOVERFLOW;
    if (!memd_mul_ok(p, h, &total))
        return -EOVERFLOW;
    *bytes = total;
    *pitch = p;
    return 0;
}

/* The request's bank mode and set size. A set must hold valid, strictly increasing ids;
 * `banks` must be 0 or the set's size (per bank without a set: every bank's, as its
 * pieces are in every bank). A range set of every bank is plain lockstep. */
static int bank_mode(const memd_bank_group_spec *g, const memd_alloc_req *req, memd_bank_mode *mode,
                     uint32_t *nset)
{
    if (req->nbank_set == 0 && req->bank_set)
        return -EINVAL;
    if (req->nbank_set) {
        if (!req->bank_set || req->nbank_set > g->banks)
            return -EINVAL;
        for (uint32_t i = 0; i < req->nbank_set; i++)
            if (req->bank_set[i] >= g->banks || (i && req->bank_set[i] <= req->bank_set[i - 1]))
                return -EINVAL;
    }
    if (req->range_lockstep && (req->per_bank || req->nbank_set == 0))
        return -EINVAL;
    *nset = req->nbank_set ? req->nbank_set : g->banks;
    if (req->banks && (req->nbank_set || req->per_bank) && req->banks != *nset)
        return -EINVAL;
    if (req->per_bank)
        *mode = MEMD_BANKS_PER_BANK;
    else if (*nset == g->banks)
        *mode = MEMD_BANKS_ALL;
    else
        *mode = req->range_lockstep ? MEMD_BANKS_RANGE_LOCKSTEP : MEMD_BANKS_RANGE;
    return 0;
}

bool memd_piece_bytes(const memd_device *d, const memd_placement *p, uint64_t bytes,
                      uint64_t *out)
{
    const memd_bank_group_spec *g = &d->spec.groups[p->kind];
    uint64_t least; /* as tt-metal: align(max(size, min_allocation_size)) */
    if (!memd_round_up(g->regions[p->region].min_alloc, g->alignment, &least) ||
        !memd_round_up(bytes, g->alignment, out))
        return false;
    if (*out < least)
        *out = least;
    return true;
}

/* Per-core shard sizes: per bank over a set only, from the sizes alone (one page a
 * piece); size_per_bank is the largest piece. */
static int sized_footprint(const memd_device *d, const memd_alloc_req *req, memd_kind kind,
                           const memd_class_policy *pol, memd_placement *out)
{
    const memd_bank_group_spec *g = &d->spec.groups[kind];
    if (!req->per_bank || req->nbank_set == 0 || req->range_lockstep || req->bytes != 0 ||
        req->dtype != MEMD_DTYPE_NONE || req->ndim != 0 || req->page_size != 0 ||
        req->scope == MEMD_SCOPE_DRAM_TEXTURE)
        return -EINVAL;
    memd_bank_mode mode;
    uint32_t nset;
    int rc = bank_mode(g, req, &mode, &nset);
    if (rc)
        return rc;
    *out = (memd_placement){.kind = kind, .region = pol->region,
                            .banks = nset, .mode = mode, .nset = nset};
    for (uint32_t i = 0; i < nset; i++) {
        uint64_t s;
        if (req->sizes[i] == 0)
            return -EINVAL;
        if (!memd_piece_bytes(d, out, req->sizes[i], &s))
            return -EOVERFLOW;
        if (s > out->size_per_bank)
            out->size_per_bank = s;
    }
    out->page_size = out->size_per_bank;
    return out->size_per_bank > g->regions[pol->region].size ? -E2BIG : 0;
}

int memd_device_footprint(const memd_device *d, const memd_alloc_req *req, memd_placement *out)
{
    if (!d || !req || !out)
        return -EINVAL;
    const memd_device_spec *spec = &d->spec;
    memd_kind kind;
    if (memd_scope_kind(req->scope, &kind))
        return -EINVAL;
    if ((unsigned)req->cls >= MEMD_CLASS_COUNT)
        return -EINVAL;
    const memd_bank_group_spec *g = &spec->groups[kind];
    if (g->banks == 0)
        return -EOPNOTSUPP;
    if (req->scope == MEMD_SCOPE_DRAM_TEXTURE && !spec->texture.enabled)
        return -EOPNOTSUPP;
    const memd_class_policy *pol = &spec->policy[kind][req->cls];
    if (!pol->enabled)
        return -EOPNOTSUPP;
    /* Beyond the bank size no address of a bank but 0 is aligned (2^63 included): a
     * malformed request, not a lack of room. */
    if (req->alignment != 0 && (!memd_is_pow2(req->alignment) || req->alignment > g->bank_size))
        return -EINVAL;
    /* tt-metal's allocator refuses sharded-by-core buffers outside L1. */
    if (spec->ttmetal && kind == MEMD_KIND_DRAM && (req->nbank_set || req->per_bank))
        return -EINVAL;

    uint64_t bytes, pitch = 0;
    int rc;
    if (req->sizes)
        return sized_footprint(d, req, kind, pol, out);
    if (req->scope == MEMD_SCOPE_DRAM_TEXTURE) {
        rc = texture_bytes(&spec->texture, req, &bytes, &pitch);
        if (rc)
            return rc;
        if (req->page_size != 0 && req->page_size != pitch)
            return -EINVAL;
    } else if (req->dtype != MEMD_DTYPE_NONE) {
        if (req->bytes != 0)
            return -EINVAL; /* bytes or shape + dtype, not both */
        rc = shape_bytes(req, &bytes);
        if (rc)
            return rc;
    } else {
        if (req->bytes == 0 || req->ndim != 0)
            return -EINVAL;
        bytes = req->bytes;
    }

    uint64_t page = pitch ? pitch : (req->page_size ? req->page_size : bytes);
    /* A short last page still takes a whole page slot. */
    uint64_t pages = bytes / page + (bytes % page != 0);

    if (req->banks > g->banks)
        return -EINVAL;
    memd_bank_mode mode;
    uint32_t nset;
    rc = bank_mode(g, req, &mode, &nset);
    if (rc)
        return rc;
    uint64_t nbanks = req->banks ? req->banks : (mode == MEMD_BANKS_ALL ? g->banks : nset);

    uint64_t padded, per_bank;
    if (!memd_round_up(page, g->alignment, &padded))
        return -EOVERFLOW;
    uint64_t pages_per_bank = pages / nbanks + (pages % nbanks != 0);
    if (!memd_mul_ok(pages_per_bank, padded, &per_bank))
        return -EOVERFLOW;
    uint64_t least; /* as tt-metal: align(max(size, min_allocation_size)) */
    if (!memd_round_up(g->regions[pol->region].min_alloc, g->alignment, &least))
        return -EOVERFLOW;
    if (per_bank < least)
        per_bank = least;

    out->kind = kind;
    out->region = pol->region;
    out->address = 0;
    out->size_per_bank = per_bank;
    out->banks = (uint32_t)nbanks;
    out->page_size = padded;
    if (per_bank > g->regions[pol->region].size)
        return -E2BIG; /* *out says what it would take (the caller's message) */
    out->pitch = pitch;
    out->mode = mode;
    out->nset = mode == MEMD_BANKS_ALL ? 0 : nset;
    out->set = NULL;
    out->addrs = NULL;
    out->sizes = NULL;
    return 0;
}

uint64_t memd_device_req_alignment(const memd_device *d, memd_kind kind, const memd_alloc_req *req)
{
    const memd_bank_group_spec *g = &d->spec.groups[kind];
    uint64_t a = g->alignment;
    uint64_t pa = d->spec.policy[kind][req->cls].alignment;
    if (pa > a)
        a = pa;
    if (req->alignment > a)
        a = req->alignment;
    return a;
}
