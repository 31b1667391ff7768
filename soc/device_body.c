/* memd soc — bank groups, regions, textures and policy overrides from YAML nodes.
 * Region geometry is checked here with positions (the engine re-checks without them). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soc_internal.h"

int memd_soc_parse_pow2(const char *file, const memd_ynode *n, uint64_t *out, memd_error *err)
{
    uint64_t v;
    int rc = memd_yaml_size(file, n, &v, err);
    if (rc)
        return rc;
    if (v == 0 || (v & (v - 1)))
        return memd_yaml_error(err, file, n, "expected a power of two, got %" PRIu64, v);
    *out = v;
    return 0;
}

static int missing(const char *file, const memd_ynode *map, const char *key, const char *where,
                   const char *what, memd_error *err)
{
    return memd_yaml_error(err, file, map, "missing key '%s' in %s: expected %s", key, where, what);
}

/* ---- regions ---- */

typedef struct region_in {
    const memd_ynode *node, *name, *base_n, *size_n;
    bool has_base, has_size;
    uint64_t base, size;
} region_in;

static int read_region(const char *file, const memd_ynode *item, memd_kind kind,
                       memd_region_spec *r, region_in *in, memd_error *err)
{
    static const char *const keys[] = {"name", "base", "size", "allocatable",
                                       "min_allocation_size", NULL};
    char where[32];
    snprintf(where, sizeof(where), "a %s region", memd_kind_name(kind));
    int rc = memd_yaml_check_keys(file, item, where, keys, err);
    if (rc)
        return rc;
    memset(in, 0, sizeof(*in));
    in->node = item;
    in->name = memd_yaml_get(item, "name");
    if (!in->name)
        return missing(file, item, "name", where, "the region's name", err);
    rc = memd_yaml_name(file, in->name, r->name, sizeof(r->name), err);
    if (rc)
        return rc;
    if ((in->base_n = memd_yaml_get(item, "base"))) {
        rc = memd_yaml_size(file, in->base_n, &in->base, err);
        if (rc)
            return rc;
        in->has_base = true;
    }
    if ((in->size_n = memd_yaml_get(item, "size"))) {
        rc = memd_yaml_size(file, in->size_n, &in->size, err);
        if (rc)
            return rc;
        if (in->size == 0)
            return memd_yaml_error(err, file, in->size_n, "expected a region size > 0, got 0");
        in->has_size = true;
    }
    const memd_ynode *m = memd_yaml_get(item, "min_allocation_size");
    if (m && (rc = memd_yaml_size(file, m, &r->min_alloc, err)))
        return rc;
    r->allocatable = strcmp(r->name, "reserved") != 0;
    const memd_ynode *a = memd_yaml_get(item, "allocatable");
    if (a) {
        rc = memd_yaml_bool(file, a, &r->allocatable, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Reads every region of seq; at most one may leave out its size (*sizeless: its index,
 * or -1). */
static int read_regions(const char *file, const memd_ynode *seq, memd_kind kind,
                        memd_bank_group_spec *g, region_in *in, int *sizeless, memd_error *err)
{
    *sizeless = -1;
    for (size_t i = 0; i < seq->n; i++) {
        int rc = read_region(file, seq->items[i], kind, &g->regions[i], &in[i], err);
        if (rc)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (strcmp(g->regions[i].name, g->regions[j].name) == 0)
                return memd_yaml_error(err, file, in[i].name,
                                       "region '%s' is defined twice (first at line %u)",
                                       g->regions[i].name, in[j].name->line);
        if (!in[i].has_size) {
            if (*sizeless >= 0)
                return memd_yaml_error(err, file, in[i].node,
                                       "only one region may leave out 'size' (region '%s' at line %u already does)",
                                       g->regions[*sizeless].name, in[*sizeless].node->line);
            *sizeless = (int)i;
        }
    }
    return 0;
}

/* Regions after the sizeless one s are packed downwards from the bank's top; s then
 * takes what is left between cursor (the end of the regions before it) and them. */
static int place_sizeless(const char *file, const memd_bank_group_spec *g, region_in *in,
                          size_t n, size_t s, uint64_t cursor, memd_error *err)
{
    const uint64_t bank = g->bank_size;
    uint64_t top = bank;
    for (size_t i = n - 1; i > s; i--) {
        region_in *r = &in[i];
        if (r->has_base) {
            if (r->size > UINT64_MAX - r->base || r->base + r->size > bank)
                return memd_yaml_error(err, file, r->base_n,
                                       "region '%s' [0x%" PRIx64 ", +0x%" PRIx64
                                       ") exceeds the bank (bank_size 0x%" PRIx64 ")",
                                       g->regions[i].name, r->base, r->size, bank);
        } else {
            if (r->size > top)
                return memd_yaml_error(err, file, r->size_n,
                                       "region '%s' (0x%" PRIx64 " bytes) does not fit below 0x%" PRIx64,
                                       g->regions[i].name, r->size, top);
            r->base = top - r->size;
        }
        top = r->base;
    }
    region_in *z = &in[s];
    if (!z->has_base)
        z->base = cursor;
    uint64_t end = s + 1 < n ? in[s + 1].base : bank;
    if (z->base > bank)
        return memd_yaml_error(err, file, z->base_n,
                               "region '%s' starts at 0x%" PRIx64
                               ", past the bank (bank_size 0x%" PRIx64 ")",
                               g->regions[s].name, z->base, bank);
    if (end <= z->base)
        return memd_yaml_error(err, file, z->node,
                               "no room left for region '%s' between 0x%" PRIx64 " and 0x%" PRIx64,
                               g->regions[s].name, z->base, end);
    z->size = end - z->base;
    return 0;
}

int memd_soc_parse_regions(const char *file, const memd_ynode *seq, memd_kind kind,
                           memd_bank_group_spec *g, memd_error *err)
{
    int rc = memd_yaml_expect_seq(file, seq, "a list of regions", err);
    if (rc)
        return rc;
    if (seq->n == 0)
        return memd_yaml_error(err, file, seq, "expected at least one region");
    if (seq->n > MEMD_MAX_REGIONS)
        return memd_yaml_error(err, file, seq->items[MEMD_MAX_REGIONS],
                               "at most %d regions per bank group", MEMD_MAX_REGIONS);
    region_in in[MEMD_MAX_REGIONS];
    size_t n = seq->n;
    int sizeless;
    if ((rc = read_regions(file, seq, kind, g, in, &sizeless, err)))
        return rc;

    const uint64_t bank = g->bank_size;
    size_t fwd_end = sizeless >= 0 ? (size_t)sizeless : n;
    uint64_t cursor = 0;
    /* Regions before the sizeless one (or all): packed upwards from 0. */
    for (size_t i = 0; i < fwd_end; i++) {
        region_in *r = &in[i];
        if (!r->has_base)
            r->base = cursor;
        if (r->size > UINT64_MAX - r->base || r->base + r->size > bank)
            return memd_yaml_error(err, file, r->has_base ? r->base_n : r->size_n,
                                   "region '%s' [0x%" PRIx64 ", +0x%" PRIx64
                                   ") exceeds the bank (bank_size 0x%" PRIx64 ")",
                                   g->regions[i].name, r->base, r->size, bank);
        cursor = r->base + r->size;
    }
    if (sizeless >= 0 && (rc = place_sizeless(file, g, in, n, (size_t)sizeless, cursor, err)))
        return rc;
    /* Address order, no overlap (all ends are within the bank by now). */
    for (size_t i = 1; i < n; i++) {
        const region_in *p = &in[i - 1], *r = &in[i];
        if (r->base < p->base + p->size)
            return memd_yaml_error(err, file, r->has_base ? r->base_n : r->node,
                                   "region '%s' [0x%" PRIx64 ", 0x%" PRIx64
                                   ") overlaps region '%s' [0x%" PRIx64 ", 0x%" PRIx64
                                   "); list regions in address order without overlap",
                                   g->regions[i].name, r->base, r->base + r->size,
                                   g->regions[i - 1].name, p->base, p->base + p->size);
    }
    for (size_t i = 0; i < n; i++) {
        g->regions[i].base = in[i].base;
        g->regions[i].size = in[i].size;
    }
    g->nregions = (uint32_t)n;
    return 0;
}

/* ---- bank groups (memd's own format) ---- */

int memd_soc_parse_group(const char *file, const memd_ynode *n, memd_kind kind,
                         memd_bank_group_spec *g, memd_error *err)
{
    static const char *const keys[] = {"banks", "bank_size", "alignment", "page_size", "offsets",
                                       "regions", NULL};
    const char *kn = memd_kind_name(kind);
    int rc = memd_yaml_check_keys(file, n, kn, keys, err);
    if (rc)
        return rc;
    const memd_ynode *v;
    uint64_t x;

    if (!(v = memd_yaml_get(n, "banks")))
        return missing(file, n, "banks", kn, "the number of banks", err);
    if ((rc = memd_yaml_uint(file, v, MEMD_MAX_BANKS, &x, err)))
        return rc;
    if (x == 0)
        return memd_yaml_error(err, file, v, "expected at least 1 bank, got 0");
    g->banks = (uint32_t)x;

    if (!(v = memd_yaml_get(n, "bank_size")))
        return missing(file, n, "bank_size", kn, "the size of one bank", err);
    if ((rc = memd_yaml_size(file, v, &g->bank_size, err)))
        return rc;
    if (g->bank_size == 0)
        return memd_yaml_error(err, file, v, "expected a bank size > 0, got 0");

    g->alignment = kind == MEMD_KIND_DRAM ? MEMD_DEFAULT_DRAM_ALIGNMENT : MEMD_DEFAULT_SRAM_ALIGNMENT;
    if ((v = memd_yaml_get(n, "alignment")) && (rc = memd_soc_parse_pow2(file, v, &g->alignment, err)))
        return rc;
    /* Checked against the alignment and bank size with the whole spec. */
    if ((v = memd_yaml_get(n, "page_size")) && (rc = memd_yaml_size(file, v, &g->page_size, err)))
        return rc;

    /* offsets: one per bank, or one scalar for every bank (e.g. L1 banks above firmware). */
    if ((v = memd_yaml_get(n, "offsets"))) {
        if (v->type == MEMD_Y_MAP)
            return memd_yaml_error(err, file, v, "expected offsets as a list (one per bank) or one offset for all banks, got a mapping");
        if (v->type == MEMD_Y_SEQ && v->n != g->banks)
            return memd_yaml_error(err, file, v, "expected %" PRIu32 " offsets (one per bank), got %zu",
                                   g->banks, v->n);
        g->bank_offsets = calloc(g->banks, sizeof(int64_t));
        if (!g->bank_offsets)
            return memd_yaml_error(err, file, v, "out of memory");
        for (size_t i = 0; i < g->banks; i++) {
            if (v->type != MEMD_Y_SEQ && i > 0)
                g->bank_offsets[i] = g->bank_offsets[0];
            else if ((rc = memd_yaml_ssize(file, v->type == MEMD_Y_SEQ ? v->items[i] : v,
                                           &g->bank_offsets[i], err)))
                return rc;
        }
    }

    if (!(v = memd_yaml_get(n, "regions")))
        return missing(file, n, "regions", kn, "a list of regions", err);
    return memd_soc_parse_regions(file, v, kind, g, err);
}

/* ---- texture ---- */

int memd_soc_parse_texture(const char *file, const memd_ynode *n, memd_device_spec *spec,
                           memd_error *err)
{
    static const char *const keys[] = {"max_width", "max_height", "pitch_alignment", NULL};
    int rc = memd_yaml_check_keys(file, n, "texture", keys, err);
    if (rc)
        return rc;
    if (spec->groups[MEMD_KIND_DRAM].banks == 0)
        return memd_yaml_error(err, file, n, "dram.texture needs a dram bank group");
    static const char *const req[] = {"max_width", "max_height", "pitch_alignment"};
    const memd_ynode *v[3];
    for (int i = 0; i < 3; i++)
        if (!(v[i] = memd_yaml_get(n, req[i])))
            return missing(file, n, req[i], "texture",
                           i < 2 ? "a limit in texels" : "the row pitch alignment in bytes", err);
    uint64_t w, h;
    if ((rc = memd_yaml_uint(file, v[0], UINT32_MAX, &w, err)) ||
        (rc = memd_yaml_uint(file, v[1], UINT32_MAX, &h, err)))
        return rc;
    if (w == 0)
        return memd_yaml_error(err, file, v[0], "expected max_width > 0");
    if (h == 0)
        return memd_yaml_error(err, file, v[1], "expected max_height > 0");
    if ((rc = memd_soc_parse_pow2(file, v[2], &spec->texture.pitch_alignment, err)))
        return rc;
    spec->texture.max_width = (uint32_t)w;
    spec->texture.max_height = (uint32_t)h;
    spec->texture.enabled = true;
    return 0;
}

/* ---- policy overrides ---- */

static int region_list(const memd_bank_group_spec *g, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < g->nregions; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", g->regions[i].name);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
    return 0;
}

static int parse_class_policy(const char *file, const memd_ynode *n, memd_kind kind,
                              memd_class cls, memd_device_spec *spec, memd_error *err)
{
    static const char *const keys[] = {"region", "dir", "fit", "alignment", "page_size",
                                       "enabled", NULL};
    char where[64];
    snprintf(where, sizeof(where), "the %s policy of class %s", memd_kind_name(kind), memd_class_name(cls));
    int rc = memd_yaml_check_keys(file, n, where, keys, err);
    if (rc)
        return rc;
    const memd_bank_group_spec *g = &spec->groups[kind];
    memd_class_policy p = spec->policy[kind][cls];
    const memd_ynode *v;
    bool enabled = true;
    if ((v = memd_yaml_get(n, "enabled")) && (rc = memd_yaml_bool(file, v, &enabled, err)))
        return rc;
    if ((v = memd_yaml_get(n, "region"))) {
        char name[MEMD_NAME_MAX];
        if ((rc = memd_yaml_name(file, v, name, sizeof(name), err)))
            return rc;
        int idx = memd_region_find(g, name);
        if (idx < 0) {
            char list[256];
            region_list(g, list, sizeof(list));
            return memd_yaml_error(err, file, v, "no %s region '%s' (regions: %s)",
                                   memd_kind_name(kind), name, list);
        }
        if (!g->regions[idx].allocatable)
            return memd_yaml_error(err, file, v, "%s region '%s' is not allocatable",
                                   memd_kind_name(kind), name);
        p.region = (uint8_t)idx;
        p.enabled = true;
    }
    if ((v = memd_yaml_get(n, "dir"))) {
        if (v->type != MEMD_Y_SCALAR || memd_dir_parse(v->str, &p.dir))
            return memd_yaml_error(err, file, v, "expected bottom_up or top_down");
    }
    if ((v = memd_yaml_get(n, "fit"))) {
        if (v->type != MEMD_Y_SCALAR || memd_fit_parse(v->str, &p.fit))
            return memd_yaml_error(err, file, v, "expected first or best");
    }
    if ((v = memd_yaml_get(n, "alignment")) && (rc = memd_soc_parse_pow2(file, v, &p.alignment, err)))
        return rc;
    if ((v = memd_yaml_get(n, "page_size")) && (rc = memd_yaml_size(file, v, &p.page_size, err)))
        return rc;
    if (!enabled) {
        p.enabled = false;
    } else if (!p.enabled) {
        return memd_yaml_error(err, file, n, "class %s has no default %s region: give 'region'",
                               memd_class_name(cls), memd_kind_name(kind));
    }
    spec->policy[kind][cls] = p;
    return 0;
}

int memd_soc_parse_policy(const char *file, const memd_ynode *n, memd_device_spec *spec,
                          memd_error *err)
{
    int rc = memd_yaml_expect_map(file, n, "policy: bank group -> class -> settings", err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n->n; i++) {
        const memd_ynode *k = memd_yaml_key(n, i), *v = memd_yaml_val(n, i);
        memd_kind kind;
        if (memd_kind_parse(k->str, &kind))
            return memd_yaml_error(err, file, k, "unknown bank group '%s' in policy; expected dram or sram",
                                   k->str);
        if (spec->groups[kind].banks == 0)
            return memd_yaml_error(err, file, k, "policy for %s, but the device has no %s",
                                   memd_kind_name(kind), memd_kind_name(kind));
        if ((rc = memd_yaml_expect_map(file, v, "class -> settings", err)))
            return rc;
        for (size_t j = 0; j < v->n; j++) {
            const memd_ynode *ck = memd_yaml_key(v, j);
            memd_class cls;
            if (memd_class_parse(ck->str, &cls))
                return memd_yaml_error(err, file, ck,
                                       "unknown buffer class '%s'; expected code, constant, placeholder, internal or logging",
                                       ck->str);
            if ((rc = parse_class_policy(file, memd_yaml_val(v, j), kind, cls, spec, err)))
                return rc;
        }
    }
    return 0;
}

int memd_soc_validate(const char *file, const memd_ynode *node, const memd_device_spec *spec,
                      memd_error *err)
{
    int rc = memd_device_spec_validate(spec, err);
    if (rc)
        memd_error_at(err, file, node ? node->line : 0, node ? node->col : 0);
    return rc;
}

void memd_soc_name_from(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap && i + 1 < MEMD_NAME_MAX; i++) {
        char c = src[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_'))
            c = '_';
        dst[i] = c;
    }
    dst[i] = '\0';
}
