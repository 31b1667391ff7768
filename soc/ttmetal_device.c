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

/* Bank id -> core, in tt-metal's order (ttmetal.h): compute cores row by row, then the
 * banks of each storage core. */
static memd_bank_core *l1_cores(const memd_ttmetal_soc *soc, const memd_ttmetal_core *core,
                                uint64_t banks, uint64_t per_storage)
{
    memd_bank_core *c = malloc(sizeof(*c) * banks);
    if (!c)
        return NULL;
    uint64_t i = 0;
    for (int64_t y = core->grid_start[1]; y <= core->grid_end[1]; y++)
        for (int64_t x = core->grid_start[0]; x <= core->grid_end[0]; x++)
            c[i++] = core_at(soc, x, y);
    for (uint32_t s = 0; s < core->storage_cores; s++)
        for (uint64_t j = 0; j < per_storage; j++)
            c[i++] = s < MEMD_TTMETAL_MAX_STORAGE
                         ? core_at(soc, core->storage_xy[s][0], core->storage_xy[s][1])
                         : (memd_bank_core){MEMD_NO_CORE, MEMD_NO_CORE, MEMD_NO_CORE,
                                            MEMD_NO_CORE};
    return c;
}

/* -EINVAL with msg when the numbers do not fit. */
static int l1_group(const memd_ttmetal_soc *soc, const memd_ttmetal_core *core, uint64_t reserved,
                    uint64_t alignment, memd_bank_group_spec *g, char *msg, size_t msglen)
{
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
    int64_t *off = malloc(sizeof(int64_t) * banks);
    if (!off)
        return -ENOMEM;
    uint64_t i = 0, min_off = w - bank;
    for (uint32_t c = 0; c < core->compute_cores; c++)
        off[i++] = (int64_t)(w - bank);
    for (uint32_t s = 0; s < core->storage_cores; s++)
        for (uint64_t j = 0; j < per_storage; j++) {
            uint64_t o = w - (j + 1) * bank; /* (j + 1) * bank <= w by construction */
            off[i++] = (int64_t)o;
            if (o < min_off)
                min_off = o;
        }
    uint64_t low = reserved > min_off ? reserved - min_off : 0;
    if (low >= bank) {
        free(off);
        snprintf(msg, msglen,
                 "reserved size %" PRIu64 " covers the whole %" PRIu64 "-byte L1 bank of some core: nothing left for buffers",
                 reserved, bank);
        return -EINVAL;
    }
    memd_bank_core *cores = l1_cores(soc, core, banks, per_storage);
    if (!cores) {
        free(off);
        return -ENOMEM;
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
    int rc = l1_group(soc, core, o->sram_reserved,
                      o->sram_alignment ? o->sram_alignment : MEMD_DEFAULT_SRAM_ALIGNMENT,
                      &out->groups[MEMD_KIND_SRAM], msg, sizeof(msg));
    if (rc) {
        const char *file = o->reserved_file ? o->reserved_file : core_file;
        return memd_yaml_error(err, file, o->reserved_file ? o->reserved_node : NULL, "%s",
                               rc == -ENOMEM ? "out of memory" : msg);
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
