/* memd engine — device specs: validation, deep copy, default class policy.
 *
 * Validation is the engine's last line of defence: loaders report errors with file
 * positions first, but a spec built in code (tests, the state store) must be just as
 * safe, so every invariant the allocator relies on is checked here again. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"

static bool name_ok(const char *s)
{
    return s[0] != '\0' && memchr(s, '\0', MEMD_NAME_MAX) != NULL;
}

int memd_region_find(const memd_bank_group_spec *g, const char *name)
{
    uint32_t n = g->nregions < MEMD_MAX_REGIONS ? g->nregions : MEMD_MAX_REGIONS;
    for (uint32_t i = 0; i < n; i++)
        if (strncmp(g->regions[i].name, name, MEMD_NAME_MAX) == 0)
            return (int)i;
    return -ENOENT;
}

/* Lowest base of an allocatable region: the smallest address a bank offset is added to. */
static uint64_t lowest_alloc_base(const memd_bank_group_spec *g)
{
    uint64_t lo = UINT64_MAX;
    for (uint32_t i = 0; i < g->nregions; i++)
        if (g->regions[i].allocatable && g->regions[i].base < lo)
            lo = g->regions[i].base;
    return lo;
}

/* Region i of group g: named, inside the bank, holding a whole alignment unit if
 * allocatable, and neither a duplicate name nor an overlap of an earlier region. */
static int validate_region(const char *dev, const char *kn, const memd_bank_group_spec *g,
                           uint32_t i, memd_error *err)
{
    const memd_region_spec *r = &g->regions[i];
    if (!name_ok(r->name))
        return memd_error_set(err, -EINVAL,
                              "device '%s': %s region %" PRIu32 " has no name", dev, kn, i);
    if (r->size == 0)
        return memd_error_set(err, -EINVAL,
                              "device '%s': %s region '%s' has size 0", dev, kn, r->name);
    if (r->base > g->bank_size || r->size > g->bank_size - r->base)
        return memd_error_set(err, -EINVAL,
                              "device '%s': %s region '%s' [0x%" PRIx64 ", +0x%" PRIx64
                              ") exceeds the bank size 0x%" PRIx64,
                              dev, kn, r->name, r->base, r->size, g->bank_size);
    if (r->allocatable) {
        /* The allocator hands out whole alignment units: the region needs one. */
        uint64_t first = (r->base + (g->alignment - 1)) & ~(g->alignment - 1);
        if (first < r->base || first > r->base + r->size - 1 ||
            r->base + r->size - first < g->alignment)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': %s region '%s' [0x%" PRIx64 ", +0x%" PRIx64
                                  ") holds no whole %" PRIu64 "-byte alignment unit",
                                  dev, kn, r->name, r->base, r->size, g->alignment);
    }
    for (uint32_t j = 0; j < i; j++) {
        const memd_region_spec *o = &g->regions[j];
        if (strncmp(o->name, r->name, MEMD_NAME_MAX) == 0)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': %s region '%s' is defined twice", dev, kn,
                                  r->name);
        /* Both fit in the bank, so the ends cannot overflow. */
        if (r->base < o->base + o->size && o->base < r->base + r->size)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': %s region '%s' [0x%" PRIx64 ", 0x%" PRIx64
                                  ") overlaps region '%s' [0x%" PRIx64 ", 0x%" PRIx64 ")",
                                  dev, kn, r->name, r->base, r->base + r->size, o->name, o->base,
                                  o->base + o->size);
    }
    return 0;
}

/* Every absolute address address + offset must be representable and non-negative: the
 * lowest allocatable byte plus the offset must not go below 0, the bank's end plus the
 * offset must not pass 2^64. */
static int validate_offsets(const char *dev, const char *kn, const memd_bank_group_spec *g,
                            memd_error *err)
{
    uint64_t lo = lowest_alloc_base(g);
    for (uint32_t b = 0; b < g->banks; b++) {
        int64_t off = g->bank_offsets[b];
        if (off < 0) {
            uint64_t neg = (uint64_t)(-(off + 1)) + 1; /* |off| without overflow */
            if (lo < neg)
                return memd_error_set(err, -EINVAL,
                                      "device '%s': %s bank %" PRIu32 " offset %" PRId64
                                      " puts address 0x%" PRIx64 " below 0",
                                      dev, kn, b, off, lo);
        } else if ((uint64_t)off > UINT64_MAX - g->bank_size) {
            return memd_error_set(err, -EINVAL,
                                  "device '%s': %s bank %" PRIu32 " offset %" PRId64
                                  " overflows 64-bit addresses",
                                  dev, kn, b, off);
        }
    }
    return 0;
}

static int validate_group(const char *dev, memd_kind k, const memd_bank_group_spec *g,
                          memd_error *err)
{
    const char *kn = memd_kind_name(k);
    if (g->banks == 0) {
        if (g->nregions != 0)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': %s has regions but no banks", dev, kn);
        return 0;
    }
    if (g->banks > MEMD_MAX_BANKS)
        return memd_error_set(err, -EINVAL,
                              "device '%s': %s has %" PRIu32 " banks, at most %u allowed",
                              dev, kn, g->banks, MEMD_MAX_BANKS);
    if (g->bank_size == 0)
        return memd_error_set(err, -EINVAL, "device '%s': %s bank size is 0", dev, kn);
    if (!memd_is_pow2(g->alignment))
        return memd_error_set(err, -EINVAL,
                              "device '%s': %s alignment %" PRIu64 " is not a power of two",
                              dev, kn, g->alignment);
    if (g->nregions == 0 || g->nregions > MEMD_MAX_REGIONS)
        return memd_error_set(err, -EINVAL,
                              "device '%s': %s needs 1 to %d regions, has %" PRIu32, dev,
                              kn, MEMD_MAX_REGIONS, g->nregions);
    bool any_alloc = false;
    for (uint32_t i = 0; i < g->nregions; i++) {
        int rc = validate_region(dev, kn, g, i, err);
        if (rc)
            return rc;
        any_alloc = any_alloc || g->regions[i].allocatable;
    }
    if (!any_alloc)
        return memd_error_set(err, -EINVAL, "device '%s': %s has no allocatable region", dev, kn);
    const char *why = g->page_size ? memd_page_size_problem(g, g->page_size) : NULL;
    if (why)
        return memd_error_set(err, -EINVAL, "device '%s': %s page_size %" PRIu64 " %s", dev, kn,
                              g->page_size, why);
    return g->bank_offsets ? validate_offsets(dev, kn, g, err) : 0;
}

static int validate_policy(const char *dev, memd_kind k, const memd_bank_group_spec *g,
                           const memd_class_policy *pol, memd_error *err)
{
    const char *kn = memd_kind_name(k);
    for (int c = 0; c < MEMD_CLASS_COUNT; c++) {
        const memd_class_policy *p = &pol[c];
        const char *cn = memd_class_name((memd_class)c);
        if (!p->enabled)
            continue;
        if (g->banks == 0)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': class %s uses %s, which the device lacks",
                                  dev, cn, kn);
        if (p->region >= g->nregions)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': class %s names %s region %u, which does not exist",
                                  dev, cn, kn, p->region);
        if (!g->regions[p->region].allocatable)
            return memd_error_set(err, -EINVAL,
                "device '%s': class %s names %s region '%s', which is not allocatable",
                dev, cn, kn, g->regions[p->region].name);
        if (p->dir != MEMD_DIR_BOTTOM_UP && p->dir != MEMD_DIR_TOP_DOWN)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': class %s in %s has a bad direction", dev, cn, kn);
        if (p->fit != MEMD_FIT_FIRST && p->fit != MEMD_FIT_BEST)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': class %s in %s has a bad fit", dev, cn, kn);
        if (p->alignment != 0 && !memd_is_pow2(p->alignment))
            return memd_error_set(err, -EINVAL,
                "device '%s': class %s in %s: alignment %" PRIu64 " is not a power of two",
                dev, cn, kn, p->alignment);
        const char *why = p->page_size ? memd_page_size_problem(g, p->page_size) : NULL;
        if (why)
            return memd_error_set(err, -EINVAL, "device '%s': class %s in %s: page_size %" PRIu64
                                  " %s", dev, cn, kn, p->page_size, why);
    }
    return 0;
}

const char *memd_page_size_problem(const memd_bank_group_spec *g, uint64_t page)
{
    if (!memd_is_pow2(page))
        return "is not a power of two";
    if (page < g->alignment)
        return "is below the group's alignment";
    if (page > g->bank_size)
        return "is larger than a bank";
    return NULL;
}

uint64_t memd_device_page_size(const memd_device_spec *spec, memd_kind kind, memd_class cls)
{
    uint64_t p = spec->policy[kind][cls].page_size;
    return p ? p : spec->groups[kind].page_size;
}

int memd_device_spec_validate(const memd_device_spec *spec, memd_error *err)
{
    if (!spec)
        return memd_error_set(err, -EINVAL, "no device spec");
    if (!name_ok(spec->name))
        return memd_error_set(err, -EINVAL, "device %" PRIu32 " has no name", spec->id);
    if (!memchr(spec->arch, '\0', MEMD_NAME_MAX))
        return memd_error_set(err, -EINVAL, "device '%s': arch is not terminated", spec->name);
    const char *dev = spec->name;

    bool any = false;
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        int rc = validate_group(dev, (memd_kind)k, &spec->groups[k], err);
        if (rc)
            return rc;
        rc = validate_policy(dev, (memd_kind)k, &spec->groups[k], spec->policy[k], err);
        if (rc)
            return rc;
        any |= spec->groups[k].banks > 0;
    }
    if (!any)
        return memd_error_set(err, -EINVAL,
                              "device '%s' has no memory (no DRAM or SRAM banks)", dev);

    const memd_texture_spec *t = &spec->texture;
    if (t->enabled) {
        if (spec->groups[MEMD_KIND_DRAM].banks == 0)
            return memd_error_set(err, -EINVAL, "device '%s': dram.texture needs DRAM", dev);
        if (t->max_width == 0 || t->max_height == 0)
            return memd_error_set(err, -EINVAL,
                                  "device '%s': texture max_width and max_height must be > 0", dev);
        if (!memd_is_pow2(t->pitch_alignment))
            return memd_error_set(err, -EINVAL,
                "device '%s': texture pitch_alignment %" PRIu64 " is not a power of two",
                dev, t->pitch_alignment);
    }
    return 0;
}

int memd_device_spec_copy(memd_device_spec *dst, const memd_device_spec *src)
{
    *dst = *src;
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        dst->groups[k].bank_offsets = NULL;
        dst->groups[k].cores = NULL;
    }
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        const memd_bank_group_spec *g = &src->groups[k];
        if (g->banks == 0)
            continue;
        if (g->bank_offsets) {
            int64_t *o = malloc(sizeof(*o) * g->banks);
            if (!o)
                goto nomem;
            memcpy(o, g->bank_offsets, sizeof(*o) * g->banks);
            dst->groups[k].bank_offsets = o;
        }
        if (g->cores) {
            memd_bank_core *c = malloc(sizeof(*c) * g->banks);
            if (!c)
                goto nomem;
            memcpy(c, g->cores, sizeof(*c) * g->banks);
            dst->groups[k].cores = c;
        }
    }
    return 0;
nomem:
    memd_device_spec_free(dst);
    return -ENOMEM;
}

void memd_device_spec_free(memd_device_spec *spec)
{
    if (!spec)
        return;
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        free(spec->groups[k].bank_offsets);
        spec->groups[k].bank_offsets = NULL;
        free(spec->groups[k].cores);
        spec->groups[k].cores = NULL;
    }
}

static void set_policy(memd_device_spec *spec, memd_kind k, memd_class c, const char *region,
                       memd_dir dir)
{
    memd_class_policy *p = &spec->policy[k][c];
    memset(p, 0, sizeof(*p));
    const memd_bank_group_spec *g = &spec->groups[k];
    if (g->banks == 0)
        return;
    int idx = memd_region_find(g, region);
    if (idx < 0 || !g->regions[idx].allocatable)
        return;
    p->enabled = true;
    p->region = (uint8_t)idx;
    p->dir = dir;
    p->fit = MEMD_FIT_FIRST;
    p->alignment = 0;
}

void memd_device_spec_default_policy(memd_device_spec *spec)
{
    const memd_kind D = MEMD_KIND_DRAM, S = MEMD_KIND_SRAM;
    const memd_bank_group_spec *dram = &spec->groups[D];

    int code = memd_region_find(dram, "code");
    if (code >= 0 && dram->regions[code].allocatable)
        set_policy(spec, D, MEMD_CLASS_CODE, "code", MEMD_DIR_BOTTOM_UP);
    else /* tt-metal: program binaries top-down so they do not fragment user data */
        set_policy(spec, D, MEMD_CLASS_CODE, "data", MEMD_DIR_TOP_DOWN);
    set_policy(spec, D, MEMD_CLASS_CONSTANT, "data", MEMD_DIR_BOTTOM_UP);
    set_policy(spec, D, MEMD_CLASS_PLACEHOLDER, "data", MEMD_DIR_TOP_DOWN);
    set_policy(spec, D, MEMD_CLASS_INTERNAL, "data", MEMD_DIR_TOP_DOWN);
    set_policy(spec, D, MEMD_CLASS_LOGGING, "logging", MEMD_DIR_BOTTOM_UP);

    /* SRAM buffers top-down, away from circular buffers placed above the reserved area. */
    set_policy(spec, S, MEMD_CLASS_CODE, "buffers", MEMD_DIR_TOP_DOWN);
    set_policy(spec, S, MEMD_CLASS_CONSTANT, "buffers", MEMD_DIR_TOP_DOWN);
    set_policy(spec, S, MEMD_CLASS_PLACEHOLDER, "buffers", MEMD_DIR_TOP_DOWN);
    set_policy(spec, S, MEMD_CLASS_INTERNAL, "buffers", MEMD_DIR_TOP_DOWN);
    memset(&spec->policy[S][MEMD_CLASS_LOGGING], 0, sizeof(memd_class_policy));
}
