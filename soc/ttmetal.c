/* memd soc — tt-metal SoC and core descriptors -> the numbers memory is built from
 * (see ttmetal.h for the rules). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soc_internal.h"
#include "ttmetal.h"

/* ---- SoC descriptor ---- */

/* A NOC core written "x-y" (tt-metal's SoC descriptor form); false if it is not one. */
static bool noc_xy(const memd_ynode *n, uint16_t xy[2])
{
    unsigned x, y;
    char tail;
    if (n->type != MEMD_Y_SCALAR || sscanf(n->str, "%u-%u%c", &x, &y, &tail) != 2 ||
        x >= MEMD_NO_CORE || y >= MEMD_NO_CORE)
        return false;
    xy[0] = (uint16_t)x;
    xy[1] = (uint16_t)y;
    return true;
}

/* Adds v to the sorted set a[0..*n) (up to MEMD_TTMETAL_MAX_AXIS). */
static void axis_add(uint16_t *a, uint32_t *n, uint16_t v)
{
    uint32_t i = 0;
    while (i < *n && a[i] < v)
        i++;
    if ((i < *n && a[i] == v) || *n == MEMD_TTMETAL_MAX_AXIS)
        return;
    memmove(a + i + 1, a + i, sizeof(*a) * (*n - i));
    a[i] = v;
    (*n)++;
}

/* Logical -> NOC axes: the distinct columns and rows of the functional workers. */
static void worker_axes(const memd_ynode *seq, memd_ttmetal_soc *out)
{
    for (size_t i = 0; i < seq->n; i++) {
        uint16_t xy[2];
        if (!noc_xy(seq->items[i], xy))
            continue;
        axis_add(out->noc_x, &out->nnoc_x, xy[0]);
        axis_add(out->noc_y, &out->nnoc_y, xy[1]);
    }
}

static int soc_from_tree(const char *file, const memd_ynode *root, memd_ttmetal_soc *out,
                         memd_error *err)
{
    int rc = memd_yaml_expect_map(file, root, "a tt-metal SoC descriptor", err);
    if (rc)
        return rc;
    const memd_ynode *v;
    if (!(v = memd_yaml_get(root, "dram")))
        return memd_yaml_error(err, file, root, "missing key 'dram' in the SoC descriptor: expected one entry per DRAM bank");
    if ((rc = memd_yaml_expect_seq(file, v, "one entry per DRAM bank", err)))
        return rc;
    if (v->n == 0)
        return memd_yaml_error(err, file, v, "expected at least one DRAM bank");
    if (v->n > MEMD_MAX_BANKS)
        return memd_yaml_error(err, file, v, "%zu DRAM banks, at most %u supported", v->n, MEMD_MAX_BANKS);
    out->dram_banks = (uint32_t)v->n;

    if (!(v = memd_yaml_get(root, "dram_bank_size")))
        return memd_yaml_error(err, file, root, "missing key 'dram_bank_size' in the SoC descriptor: expected the DRAM bank size in bytes");
    if ((rc = memd_yaml_uint(file, v, UINT64_MAX, &out->dram_bank_size, err)))
        return rc;
    if (out->dram_bank_size == 0)
        return memd_yaml_error(err, file, v, "expected a DRAM bank size > 0, got 0");

    out->dram_offsets = calloc(out->dram_banks, sizeof(int64_t));
    if (!out->dram_offsets)
        return memd_yaml_error(err, file, root, "out of memory");
    if ((v = memd_yaml_get(root, "dram_address_offsets"))) {
        if ((rc = memd_yaml_expect_seq(file, v, "one address offset per DRAM bank", err)))
            return rc;
        if (v->n != out->dram_banks)
            return memd_yaml_error(err, file, v, "expected %" PRIu32 " offsets (one per 'dram' entry), got %zu",
                                   out->dram_banks, v->n);
        for (size_t i = 0; i < v->n; i++)
            if ((rc = memd_yaml_int(file, v->items[i], &out->dram_offsets[i], err)))
                return rc;
    }

    if (!(v = memd_yaml_get(root, "worker_l1_size")))
        return memd_yaml_error(err, file, root, "missing key 'worker_l1_size' in the SoC descriptor: expected the L1 size of a worker core in bytes");
    if ((rc = memd_yaml_uint(file, v, UINT64_MAX, &out->worker_l1_size, err)))
        return rc;
    if (out->worker_l1_size == 0)
        return memd_yaml_error(err, file, v, "expected a worker L1 size > 0, got 0");

    out->dram_noc = malloc(sizeof(*out->dram_noc) * out->dram_banks);
    if (!out->dram_noc)
        return memd_yaml_error(err, file, root, "out of memory");
    v = memd_yaml_get(root, "dram");
    for (size_t i = 0; i < v->n; i++) {
        const memd_ynode *e = v->items[i];
        if (e->type == MEMD_Y_SEQ && e->n > 0)
            e = e->items[0];
        if (!noc_xy(e, out->dram_noc[i]))
            out->dram_noc[i][0] = out->dram_noc[i][1] = MEMD_NO_CORE;
    }
    if ((v = memd_yaml_get(root, "functional_workers")) && v->type == MEMD_Y_SEQ)
        worker_axes(v, out);

    if ((v = memd_yaml_get(root, "arch_name"))) {
        char arch[256];
        if ((rc = memd_yaml_string(file, v, arch, sizeof(arch), err)))
            return rc;
        memd_soc_name_from(out->arch, sizeof(out->arch), arch);
    }
    return 0;
}

/* Which descriptor a buffer holds and where it goes: the SoC's (soc), or the core
 * descriptor's (core, for product with hw_cqs command queues). */
typedef struct descriptor {
    memd_ttmetal_soc *soc;
    memd_ttmetal_core *core;
    const char *product;
    uint32_t hw_cqs;
    uint64_t worker_l1_size;
} descriptor;

static int core_from_tree(const char *file, const memd_ynode *root, const char *product,
                          uint32_t hw_cqs, uint64_t worker_l1_size, memd_ttmetal_core *out,
                          memd_error *err);

/* Parses the YAML and reads the descriptor d names from its tree. */
static int read_descriptor(const char *file, const char *buf, size_t len, const descriptor *d,
                           memd_error *err)
{
    memd_ynode *root;
    int rc = memd_yaml_parse(file, buf, len, &root, err);
    if (rc)
        return rc;
    rc = d->soc ? soc_from_tree(file, root, d->soc, err)
                : core_from_tree(file, root, d->product, d->hw_cqs, d->worker_l1_size, d->core,
                                 err);
    memd_yaml_free(root);
    return rc;
}

int memd_ttmetal_parse_soc(const char *file, const char *buf, size_t len, memd_ttmetal_soc *out,
                           memd_error *err)
{
    memset(out, 0, sizeof(*out));
    int rc = read_descriptor(file, buf, len, &(descriptor){.soc = out}, err);
    if (rc)
        memd_ttmetal_soc_free(out);
    return rc;
}

void memd_ttmetal_soc_free(memd_ttmetal_soc *s)
{
    if (!s)
        return;
    free(s->dram_offsets);
    s->dram_offsets = NULL;
    free(s->dram_noc);
    s->dram_noc = NULL;
}

/* ---- core descriptor ---- */

/* A logical core [x, y]; coordinates may be negative (relative to the grid's end). */
static int read_core(const char *file, const memd_ynode *n, const char *what, int64_t xy[2],
                     memd_error *err)
{
    if (n->type != MEMD_Y_SEQ || n->n != 2)
        return memd_yaml_error(err, file, n, "expected %s as a core [x, y]", what);
    for (int i = 0; i < 2; i++) {
        int rc = memd_yaml_int(file, n->items[i], &xy[i], err);
        if (rc)
            return rc;
        if (xy[i] < -4096 || xy[i] > 4096)
            return memd_yaml_error(err, file, n->items[i], "core coordinate %" PRId64 " is out of range", xy[i]);
    }
    return 0;
}

/* Every storage core is a distinct [x, y]: a duplicate would count its banks twice. */
typedef struct core_at {
    int64_t x, y;
    size_t index;
} core_at;

static int core_cmp(const void *a, const void *b)
{
    const core_at *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    return p->index < q->index ? -1 : (p->index > q->index);
}

static int check_storage_cores(const char *file, const memd_ynode *seq, memd_error *err)
{
    if (seq->n == 0)
        return 0;
    core_at *c = malloc(sizeof(*c) * seq->n);
    if (!c)
        return memd_yaml_error(err, file, seq, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < seq->n && !rc; i++) {
        int64_t xy[2];
        rc = read_core(file, seq->items[i], "a storage core", xy, err);
        c[i] = (core_at){xy[0], xy[1], i};
    }
    if (!rc) {
        qsort(c, seq->n, sizeof(*c), core_cmp);
        for (size_t i = 1; i < seq->n && !rc; i++)
            if (c[i].x == c[i - 1].x && c[i].y == c[i - 1].y)
                rc = memd_yaml_error(err, file, seq->items[c[i].index],
                                     "storage core [%" PRId64 ", %" PRId64 "] is listed twice (first at line %u, column %u)",
                                     c[i].x, c[i].y, seq->items[c[i - 1].index]->line,
                                     seq->items[c[i - 1].index]->col);
    }
    free(c);
    return rc;
}

static void key_list(const memd_ynode *map, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < map->n; i++) {
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", memd_yaml_key(map, i)->str);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
}

static int core_from_tree(const char *file, const memd_ynode *root, const char *product,
                          uint32_t hw_cqs, uint64_t worker_l1_size, memd_ttmetal_core *out,
                          memd_error *err)
{
    char list[256];
    int rc = memd_yaml_expect_map(file, root, "a tt-metal core descriptor", err);
    if (rc)
        return rc;
    const memd_ynode *prod = memd_yaml_get(root, product);
    if (!prod) {
        key_list(root, list, sizeof(list));
        return memd_yaml_error(err, file, root, "product '%s' not found in the core descriptor (products: %s)",
                               product, list);
    }
    if ((rc = memd_yaml_expect_map(file, prod, "hardware command queue counts", err)))
        return rc;
    char cqs[16];
    snprintf(cqs, sizeof(cqs), "%" PRIu32, hw_cqs);
    const memd_ynode *cfg = memd_yaml_get(prod, cqs);
    if (!cfg) {
        key_list(prod, list, sizeof(list));
        return memd_yaml_error(err, file, prod,
                               "product '%s' has no configuration for %" PRIu32 " hardware command queues (available: %s)",
                               product, hw_cqs, list);
    }
    if ((rc = memd_yaml_expect_map(file, cfg, "a core configuration", err)))
        return rc;

    const memd_ynode *grid = memd_yaml_get(cfg, "compute_with_storage_grid_range"), *v;
    if (!grid)
        return memd_yaml_error(err, file, cfg, "missing key 'compute_with_storage_grid_range': expected {start: [x, y], end: [x, y]}");
    if ((rc = memd_yaml_expect_map(file, grid, "{start: [x, y], end: [x, y]}", err)))
        return rc;
    int64_t s[2], e[2];
    if (!(v = memd_yaml_get(grid, "start")))
        return memd_yaml_error(err, file, grid, "missing key 'start' in compute_with_storage_grid_range: expected [x, y]");
    if ((rc = read_core(file, v, "the grid's start", s, err)))
        return rc;
    if (!(v = memd_yaml_get(grid, "end")))
        return memd_yaml_error(err, file, grid, "missing key 'end' in compute_with_storage_grid_range: expected [x, y]");
    if ((rc = read_core(file, v, "the grid's end", e, err)))
        return rc;
    if (s[0] < 0 || s[1] < 0 || e[0] < s[0] || e[1] < s[1])
        return memd_yaml_error(err, file, grid,
                               "expected a grid range with 0 <= start <= end, got [%" PRId64 ", %" PRId64
                               "] .. [%" PRId64 ", %" PRId64 "]",
                               s[0], s[1], e[0], e[1]);
    memcpy(out->grid_start, s, sizeof s);
    memcpy(out->grid_end, e, sizeof e);
    uint64_t cores = (uint64_t)(e[0] - s[0] + 1) * (uint64_t)(e[1] - s[1] + 1);
    if (cores > MEMD_MAX_BANKS)
        return memd_yaml_error(err, file, grid, "%" PRIu64 " compute cores, at most %u supported", cores, MEMD_MAX_BANKS);
    out->compute_cores = (uint32_t)cores;

    out->storage_cores = 0;
    if ((v = memd_yaml_get(cfg, "storage_cores"))) {
        if ((rc = memd_yaml_expect_seq(file, v, "a list of storage cores [x, y]", err)))
            return rc;
        if (v->n > MEMD_MAX_BANKS)
            return memd_yaml_error(err, file, v, "too many storage cores");
        rc = check_storage_cores(file, v, err);
        if (rc)
            return rc;
        out->storage_cores = (uint32_t)v->n;
        for (size_t i = 0; i < v->n && i < MEMD_TTMETAL_MAX_STORAGE; i++)
            (void)read_core(file, v->items[i], "a storage core", out->storage_xy[i], err);
    }

    out->l1_bank_size = 0;
    if ((v = memd_yaml_get(cfg, "l1_bank_size"))) {
        if ((rc = memd_yaml_uint(file, v, UINT64_MAX, &out->l1_bank_size, err)))
            return rc;
        if (out->l1_bank_size == 0)
            return memd_yaml_error(err, file, v, "expected an L1 bank size > 0, got 0");
        if (out->l1_bank_size > worker_l1_size)
            return memd_yaml_error(err, file, v,
                                   "l1_bank_size %" PRIu64 " is larger than the SoC's worker_l1_size %" PRIu64,
                                   out->l1_bank_size, worker_l1_size);
    }
    return 0;
}

int memd_ttmetal_parse_core(const char *file, const char *buf, size_t len, const char *product,
                            uint32_t hw_cqs, uint64_t worker_l1_size, memd_ttmetal_core *out,
                            memd_error *err)
{
    memset(out, 0, sizeof(*out));
    descriptor d = {.core = out, .product = product, .hw_cqs = hw_cqs,
                    .worker_l1_size = worker_l1_size};
    return read_descriptor(file, buf, len, &d, err);
}
