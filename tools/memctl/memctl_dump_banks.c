/* memctl dump: per-bank views of a dump taken with MEMCLIENT_DUMP_BANKS — a compact
 * per-bank use table (consecutive banks whose maps look the same share a row), which
 * banks each range-lockstep or per-bank buffer spans, with tt-metal core coordinates,
 * and the sub-devices. All through memctl_table, like the rest of the dump. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"
#include "memctl_service.h"
#include "memctl_table.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

static bool same_use(const memclient_bank_use *a, const memclient_bank_use *b)
{
    return a->device == b->device && a->kind == b->kind && a->region == b->region &&
           b->bank == a->bank + 1 && a->stats.allocated == b->stats.allocated &&
           a->stats.largest_free == b->stats.largest_free &&
           a->stats.allocations == b->stats.allocations &&
           a->stats.free_blocks == b->stats.free_blocks;
}

static void core_str(char *buf, size_t n, uint16_t lx, uint16_t ly, uint16_t nx, uint16_t ny)
{
    if (lx == MEMD_NO_CORE)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%u,%u@%u,%u", lx, ly, nx, ny);
}

/* Bank ids of entries [i, j) of the snapshot's alloc_banks as ranges: "0-3,8". */
static void bank_ranges(const memclient_snapshot *s, size_t i, size_t j, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t k = i; k < j && used + 24 < cap;) {
        size_t r = k + 1;
        while (r < j && s->alloc_banks[r].bank.bank == s->alloc_banks[r - 1].bank.bank + 1)
            r++;
        used += (size_t)snprintf(buf + used, cap - used, "%s%" PRIu32, k > i ? "," : "",
                                 s->alloc_banks[k].bank.bank);
        if (r - k > 1)
            used += (size_t)snprintf(buf + used, cap - used, "-%" PRIu32,
                                     s->alloc_banks[r - 1].bank.bank);
        k = r;
        if (k < j && used + 24 >= cap)
            snprintf(buf + used, cap - used, ",...");
    }
}

void memctl_bank_use_table(FILE *f, const memclient_snapshot *s)
{
    static const char *const head[] = {"DEVICE", "REGION", "BANKS", "CORES", "ALLOCATED",
                                       "FREE", "LARGEST", "FRAG", "ALLOCS"};
    memctl_table *t = NULL;
    for (size_t i = 0; i < s->nbank_use;) {
        size_t j = i + 1;
        while (j < s->nbank_use && same_use(&s->bank_use[j - 1], &s->bank_use[j]))
            j++;
        const memclient_bank_use *a = &s->bank_use[i], *z = &s->bank_use[j - 1];
        /* A region all of whose banks share one row has no per-bank story to tell: the
         * region's own row says it all. */
        bool whole = a->bank == 0 && (j == s->nbank_use || s->bank_use[j].device != a->device ||
                                      s->bank_use[j].kind != a->kind ||
                                      s->bank_use[j].region != a->region);
        i = j;
        if (whole)
            continue;
        if (!t && !(t = memctl_table_new(9, head, "rlllrrrrr")))
            return;
        char rbuf[24], c0[32], c1[32];
        memctl_table_cell(t, "%" PRIu32, a->device);
        memctl_table_cell(t, "%s/%s", memclient_kind_name(a->kind),
                          memd_report_region_name(s, a->device, a->kind, a->region, rbuf,
                                                  sizeof(rbuf)));
        if (a == z)
            memctl_table_cell(t, "%" PRIu32, a->bank);
        else
            memctl_table_cell(t, "%" PRIu32 "-%" PRIu32, a->bank, z->bank);
        core_str(c0, sizeof(c0), a->logical_x, a->logical_y, a->noc_x, a->noc_y);
        core_str(c1, sizeof(c1), z->logical_x, z->logical_y, z->noc_x, z->noc_y);
        if (a == z || a->logical_x == MEMD_NO_CORE)
            memctl_table_cell(t, "%s", c0);
        else
            memctl_table_cell(t, "%s..%s", c0, c1);
        memctl_table_cell(t, "%s", HB(a->stats.allocated));
        memctl_table_cell(t, "%s", HB(a->stats.free));
        memctl_table_cell(t, "%s", HB(a->stats.largest_free));
        memctl_table_cell(t, "%.1f%%", memd_report_fragmentation(&a->stats));
        memctl_table_cell(t, "%" PRIu64, a->stats.allocations);
    }
    if (!t)
        return;
    fprintf(f, "\nper-bank use (banks whose maps differ; core: logical@noc)\n");
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

/* Range lockstep: one address in the listed banks. Per bank: bank:address each. */
/* The longest entry of a per-bank list: ",65535:0x" + 16 hex digits +
 * "(65535,65535@65535,65535)" is 50 bytes; with room for the NUL and ",...". */
#define ENTRY_MAX 64

static void spans_table(FILE *f, const memclient_snapshot *s)
{
    if (s->nalloc_banks == 0)
        return;
    static const char *const head[] = {"HANDLE", "MODE", "ADDRESS", "BANKS"};
    memctl_table *t = memctl_table_new(4, head, "rlrl");
    if (!t)
        return;
    for (size_t i = 0; i < s->nalloc_banks;) {
        size_t j = i;
        while (j < s->nalloc_banks && s->alloc_banks[j].handle == s->alloc_banks[i].handle)
            j++;
        const memclient_alloc_bank *a = &s->alloc_banks[i];
        memctl_table_cell(t, "%" PRIu64, a->handle);
        memctl_table_cell(t, "%s", memctl_mode_text(a->mode));
        if (a->mode == MEMD_BANKS_PER_BANK) {
            memctl_table_cell(t, "%s", "(per bank)");
            char list[1024];
            size_t used = 0;
            list[0] = '\0';
            for (size_t k = i; k < j && used + ENTRY_MAX < sizeof list; k++) {
                const memclient_bank *b = &s->alloc_banks[k].bank;
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s%" PRIu32 ":0x%" PRIx64, k > i ? "," : "", b->bank,
                                         b->address);
                if (b->logical_x != MEMD_NO_CORE)
                    used += (size_t)snprintf(list + used, sizeof list - used, "(%u,%u@%u,%u)",
                                             b->logical_x, b->logical_y, b->noc_x, b->noc_y);
                if (k + 1 < j && used + ENTRY_MAX >= sizeof list)
                    snprintf(list + used, sizeof list - used, ",...");
            }
            memctl_table_cell(t, "%s", list);
        } else {
            char list[512];
            bank_ranges(s, i, j, list, sizeof list);
            memctl_table_cell(t, "0x%" PRIx64, a->bank.address);
            memctl_table_cell(t, "%s", list);
        }
        i = j;
    }
    fprintf(f, "\nbank-set buffers: which banks they span (per bank: bank:address(core "
               "logical@noc))\n");
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

void memctl_banks_table(FILE *f, const memclient_snapshot *s)
{
    memctl_bank_use_table(f, s);
    spans_table(f, s);
}

/* Sub-devices: their banks, budget and use, and the sessions bound to them. */
void memctl_subdevs_table(FILE *f, const memclient_snapshot *s)
{
    size_t shown = memd_report_subdevs_shown(s); /* those of the devices dumped */
    if (shown == 0)
        return;
    fprintf(f, "\nsub-devices: %zu\n", shown);
    static const char *const head[] = {"NAME", "DEVICE", "GROUP", "BANKS", "BUDGET", "USED",
                                       "ALLOCS", "WINDOW", "FROM", "SESSIONS"};
    memctl_table *t = memctl_table_new(10, head, "lrllrrrlll");
    if (!t)
        return;
    for (size_t i = 0; i < s->nsubdevs; i++) {
        const memclient_subdev_rec *d = &s->subdevs[i];
        if (!memd_report_subdev_shown(s, i))
            continue;
        char ids[256] = "";
        size_t used = 0;
        for (size_t k = 0; k < s->nsessions && used + 16 < sizeof ids; k++)
            if (s->sessions[k].subdev == i + 1)
                used += (size_t)snprintf(ids + used, sizeof ids - used, "%s%" PRIu32,
                                         used ? "," : "", s->sessions[k].id);
        memctl_table_cell(t, "%s", d->name);
        memctl_table_cell(t, "%" PRIu32, d->device);
        memctl_table_cell(t, "%s", memclient_kind_name(d->kind));
        char *banks = memd_report_subdev_banks(d); /* whole, however long */
        memctl_table_cell(t, "%s", banks ? banks : d->banks);
        free(banks);
        memctl_table_cell(t, "%s", d->budget ? HB(d->budget) : "-");
        memctl_table_cell(t, "%s", HB(d->used));
        memctl_table_cell(t, "%" PRIu64, d->allocations);
        if (d->window) /* [start, end), its use there */
            memctl_table_cell(t, "[0x%" PRIx64 ", 0x%" PRIx64 ") %s used", d->window_start,
                              d->window_start + d->window, HB(d->window_allocated));
        else
            memctl_table_cell(t, "-");
        memctl_table_cell(t, "%s", d->from_config ? "config" : "request");
        memctl_table_cell(t, "%s", ids[0] ? ids : (d->sessions ? "(others')" : "-"));
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}
