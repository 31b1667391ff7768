/* memd soc — a tt-metal descriptor pair and memd's options -> one device spec (the
 * rules are in ttmetal.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soc_internal.h"
#include "ttmetal.h"

/* Banks, bank size and offsets from the SoC descriptor; the whole bank is `data`. */
static int dram_group(const memd_ttmetal_soc *soc, uint64_t alignment, memd_bank_group_spec *g)
{
    g->banks = soc->dram_banks;
    g->bank_size = soc->dram_bank_size;
    g->alignment = alignment;
    g->bank_offsets = malloc(sizeof(int64_t) * soc->dram_banks);
    if (!g->bank_offsets)
        return -ENOMEM;
    memcpy(g->bank_offsets, soc->dram_offsets, sizeof(int64_t) * soc->dram_banks);
    /* DRAM bank i: logical (i, 0), as tt-metal names DRAM channels' cores. */
    g->cores = malloc(sizeof(*g->cores) * soc->dram_banks);
    if (!g->cores)
        return -ENOMEM;
    for (uint32_t i = 0; i < soc->dram_banks; i++)
        g->cores[i] = (memd_bank_core){(uint16_t)(i < MEMD_NO_CORE ? i : MEMD_NO_CORE), 0,
                                       soc->dram_noc[i][0], soc->dram_noc[i][1]};
    snprintf(g->regions[0].name, MEMD_NAME_MAX, "data");
    g->regions[0].size = g->bank_size;
    g->regions[0].allocatable = true;
    g->nregions = 1;
    return 0;
}

/* The core of logical (x, y): NOC coordinates through the worker axes (MEMD_NO_CORE
 * where the SoC descriptor does not say); negative logical coordinates count from the
 * end of the functional grid, as the core descriptor writes them. */
static memd_bank_core core_at(const memd_ttmetal_soc *soc, int64_t x, int64_t y)
{
    if (x < 0)
        x += soc->nnoc_x;
    if (y < 0)
        y += soc->nnoc_y;
    memd_bank_core c = {MEMD_NO_CORE, MEMD_NO_CORE, MEMD_NO_CORE, MEMD_NO_CORE};
    if (x < 0 || y < 0 || x >= MEMD_NO_CORE || y >= MEMD_NO_CORE)
        return c;
    c.logical_x = (uint16_t)x;
    c.logical_y = (uint16_t)y;
    if ((uint64_t)x < soc->nnoc_x && (uint64_t)y < soc->nnoc_y) {
        c.noc_x = soc->noc_x[x];
        c.noc_y = soc->noc_y[y];
    }
    return c;
}

/* One L1 bank where tt-metal's scan meets it: a compute core, or bank j of a storage
 * core (resolved logical coordinates; a storage core whose row cannot be resolved,
 * without functional_workers, comes last). */
typedef struct scan_bank {
    int64_t y, x;
    uint32_t order;            /* compute grid first, then storage cores as listed */
    uint32_t j;                /* bank of its storage core; 0 for compute cores */
    bool storage;
    memd_bank_core core;
} scan_bank;

static int cmp_scan(const void *a, const void *b)
{
    const scan_bank *p = a, *q = b;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return p->order < q->order ? -1 : p->order > q->order;
}

static int64_t resolve(int64_t v, uint32_t n)
{
    if (v < 0)
        v += n;
    return v < 0 ? INT64_MAX : v;
}

/* The banks in scan order: row by row (y, then x) over the worker grid, as tt-metal's
 * init_compute_and_storage_l1_bank_manager walks it; NULL when out of memory. */
static scan_bank *l1_scan(const memd_ttmetal_soc *soc, const memd_ttmetal_core *core,
                          uint64_t banks, uint64_t per_storage)
{
    scan_bank *v = calloc(banks, sizeof(*v));
    if (!v)
        return NULL;
    uint64_t i = 0;
    for (int64_t y = core->grid_start[1]; y <= core->grid_end[1]; y++)
        for (int64_t x = core->grid_start[0]; x <= core->grid_end[0]; x++, i++)
            v[i] = (scan_bank){.y = resolve(y, soc->nnoc_y), .x = resolve(x, soc->nnoc_x),
                               .order = (uint32_t)i, .core = core_at(soc, x, y)};
    for (uint32_t s = 0; s < core->storage_cores; s++)
        for (uint64_t j = 0; j < per_storage; j++, i++) {
            scan_bank *b = &v[i];
            *b = (scan_bank){.y = INT64_MAX, .x = INT64_MAX, .order = (uint32_t)i,
                             .j = (uint32_t)j, .storage = true,
                             .core = {MEMD_NO_CORE, MEMD_NO_CORE, MEMD_NO_CORE, MEMD_NO_CORE}};
            if (s < MEMD_TTMETAL_MAX_STORAGE) {
                b->x = resolve(core->storage_xy[s][0], soc->nnoc_x);
                b->y = resolve(core->storage_xy[s][1], soc->nnoc_y);
                b->core = core_at(soc, core->storage_xy[s][0], core->storage_xy[s][1]);
            }
        }
    qsort(v, banks, sizeof(*v), cmp_scan);
    return v;
}

/* remap[i]: the id of scan position i (ttmetal.h). -EINVAL with msg for a given list
 * that is not a permutation of the banks. */
static int l1_remap(const memd_ttmetal_opts *o, uint32_t banks, uint32_t *remap, char *msg,
                    size_t msglen)
{
    if (o->remap == MEMD_TTMETAL_REMAP_DEFAULT) {
        memd_ttmetal_default_remap(remap, banks);
        return 0;
    }
    if (o->remap == MEMD_TTMETAL_REMAP_LIBCXX) {
        memd_ttmetal_libcxx_remap(remap, banks);
        return 0;
    }
    for (uint32_t i = 0; i < banks; i++)
        remap[i] = i;
    if (o->remap == MEMD_TTMETAL_REMAP_IDENTITY)
        return 0;
    if (o->nremap != banks) {
        snprintf(msg, msglen, "l1_bank_remap has %" PRIu32 " bank ids; this device has %" PRIu32
                 " L1 banks (tt-metal requires one id per bank)", o->nremap, banks);
        return -EINVAL;
    }
    uint8_t *seen = calloc(banks, 1);
    if (!seen)
        return -ENOMEM;
    int rc = 0;
    for (uint32_t i = 0; i < banks && rc == 0; i++) {
        uint32_t id = o->remap_list[i];
        if (id >= banks || seen[id]) {
            snprintf(msg, msglen, "l1_bank_remap entry %" PRIu32 " (%" PRIu32 ") is %s: expected "
                     "each of the bank ids 0-%" PRIu32 " once", i, id,
                     id >= banks ? "out of range" : "given twice", banks - 1);
            rc = -EINVAL;
        } else {
            seen[id] = 1;
            remap[i] = id;
        }
    }
    free(seen);
    return rc;
}

/* -EINVAL with msg when the numbers do not fit. */
static int l1_group(const memd_ttmetal_soc *soc, const memd_ttmetal_core *core,
                    const memd_ttmetal_opts *o, uint64_t alignment, memd_bank_group_spec *g,
                    char *msg, size_t msglen)
{
    const uint64_t reserved = o->sram_reserved;
    const uint64_t w = soc->worker_l1_size;
    uint64_t bank;
    if (core->l1_bank_size) {
        bank = core->l1_bank_size;
        if (bank > w) {
            snprintf(msg, msglen, "l1_bank_size %" PRIu64 " is larger than worker_l1_size %" PRIu64, bank, w);
            return -EINVAL;
        }
    } else {
        if (reserved >= w) {
            snprintf(msg, msglen, "reserved size %" PRIu64 " leaves nothing of the %" PRIu64 "-byte worker L1",
                     reserved, w);
            return -EINVAL;
        }
        bank = w - reserved;
    }
    uint64_t per_storage = core->storage_cores ? w / bank : 0;
    uint64_t banks;
    if (__builtin_mul_overflow((uint64_t)core->storage_cores, per_storage, &banks) ||
        __builtin_add_overflow(banks, (uint64_t)core->compute_cores, &banks) || banks > MEMD_MAX_BANKS) {
        snprintf(msg, msglen,
                 "%" PRIu32 " compute cores + %" PRIu32 " storage cores x %" PRIu64
                 " banks each: more than %u L1 banks",
                 core->compute_cores, core->storage_cores, per_storage, MEMD_MAX_BANKS);
        return -EINVAL;
    }
    /* Compute-core banks are the top bank_size bytes of L1; storage core bank j sits at
     * j * bank_size ((j + 1) * bank_size <= w by construction). */
    uint64_t min_off = core->storage_cores && per_storage ? 0 : w - bank;
    uint64_t low = reserved > min_off ? reserved - min_off : 0;
    if (low >= bank) {
        snprintf(msg, msglen,
                 "reserved size %" PRIu64 " covers the whole %" PRIu64 "-byte L1 bank of some core: nothing left for buffers",
                 reserved, bank);
        return -EINVAL;
    }
    int64_t *off = malloc(sizeof(int64_t) * banks);
    memd_bank_core *cores = malloc(sizeof(*cores) * banks);
    uint32_t *remap = malloc(sizeof(uint32_t) * banks);
    scan_bank *scan = off && cores && remap ? l1_scan(soc, core, banks, per_storage) : NULL;
    int rc = scan ? l1_remap(o, (uint32_t)banks, remap, msg, msglen) : -ENOMEM;
    for (uint64_t i = 0; rc == 0 && i < banks; i++) {
        uint32_t id = remap[i];
        cores[id] = scan[i].core;
        off[id] = scan[i].storage ? (int64_t)(scan[i].j * bank) : (int64_t)(w - bank);
    }
    free(scan);
    free(remap);
    if (rc) {
        free(off);
        free(cores);
        return rc;
    }
    memset(g, 0, sizeof(*g));
    g->cores = cores;
    g->banks = (uint32_t)banks;
    g->bank_size = bank;
    g->alignment = alignment;
    g->bank_offsets = off;
    if (low) {
        snprintf(g->regions[g->nregions].name, MEMD_NAME_MAX, "reserved");
        g->regions[g->nregions].base = 0;
        g->regions[g->nregions].size = low;
        g->regions[g->nregions++].allocatable = false;
    }
    snprintf(g->regions[g->nregions].name, MEMD_NAME_MAX, "buffers");
    g->regions[g->nregions].base = low;
    g->regions[g->nregions].size = bank - low;
    g->regions[g->nregions++].allocatable = true;
    return 0;
}

/* Groups, arch and name from parsed descriptors; err positions as in memd_ttmetal_device. */
static int build(const memd_ttmetal_soc *soc, const memd_ttmetal_core *core, const char *soc_file,
                 const char *core_file, const memd_ttmetal_opts *o, memd_device_spec *out,
                 memd_error *err)
{
    uint64_t dram_align = o->dram_alignment ? o->dram_alignment : MEMD_DEFAULT_DRAM_ALIGNMENT;
    if (dram_group(soc, dram_align, &out->groups[MEMD_KIND_DRAM]))
        return memd_yaml_error(err, soc_file, NULL, "out of memory");
    char msg[256];
    msg[0] = '\0';
    int rc = l1_group(soc, core, o, o->sram_alignment ? o->sram_alignment : MEMD_DEFAULT_SRAM_ALIGNMENT,
                      &out->groups[MEMD_KIND_SRAM], msg, sizeof(msg));
    if (rc) {
        /* A remap error points at l1_bank_remap; the others at sram.reserved. */
        bool at_remap = rc == -EINVAL && !strncmp(msg, "l1_bank_remap", 13) && o->remap_file;
        const char *file = at_remap ? o->remap_file : o->reserved_file ? o->reserved_file : core_file;
        const memd_ynode *node = at_remap ? o->remap_node : o->reserved_file ? o->reserved_node : NULL;
        return memd_yaml_error(err, file, node, "%s", rc == -ENOMEM ? "out of memory" : msg);
    }
    snprintf(out->arch, sizeof(out->arch), "%s", o->arch ? o->arch : soc->arch);
    if (o->name) {
        snprintf(out->name, sizeof(out->name), "%s", o->name);
    } else {
        char name[2 * MEMD_NAME_MAX + 2];
        snprintf(name, sizeof(name), "%s-%s", out->arch[0] ? out->arch : "tt", o->product);
        memd_soc_name_from(out->name, sizeof(out->name), name);
    }
    memd_device_spec_default_policy(out);
    out->ttmetal = true;
    return 0;
}

int memd_ttmetal_device(const char *soc_file, const char *soc_buf, size_t soc_len,
                        const char *core_file, const char *core_buf, size_t core_len,
                        const memd_ttmetal_opts *opts, memd_device_spec *out, memd_error *err)
{
    memset(out, 0, sizeof(*out));
    memd_ttmetal_soc soc;
    memd_ttmetal_core core;
    int rc = memd_ttmetal_parse_soc(soc_file, soc_buf, soc_len, &soc, err);
    if (rc)
        return rc;
    rc = memd_ttmetal_parse_core(core_file, core_buf, core_len, opts->product, opts->hw_cqs,
                                 soc.worker_l1_size, &core, err);
    if (rc == 0)
        rc = build(&soc, &core, soc_file, core_file, opts, out, err);
    memd_ttmetal_soc_free(&soc);
    if (rc) {
        memd_device_spec_free(out);
        memset(out, 0, sizeof(*out));
    }
    return rc;
}
