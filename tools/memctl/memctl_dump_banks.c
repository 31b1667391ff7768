/* memctl dump: per-bank views of a dump taken with MEMCLIENT_DUMP_BANKS — a compact
 * per-bank use table (consecutive banks whose maps look the same share a row) and which
 * banks each subset or per-bank buffer spans, with tt-metal core coordinates. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"
#include "memctl_table.h"

#define HB(v) memctl_human_bytes((v), (char[24]){0}, 24)

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

/* The per-bank use of every region a bank-set buffer has split (others are uniform:
 * the group table says it all). */
static void bank_use_table(FILE *f, const memclient_snapshot *s)
{
    bool header = false;
    for (size_t i = 0; i < s->nbank_use;) {
        size_t j = i + 1;
        while (j < s->nbank_use && same_use(&s->bank_use[j - 1], &s->bank_use[j]))
            j++;
        const memclient_bank_use *a = &s->bank_use[i], *z = &s->bank_use[j - 1];
        /* A region all of whose banks share one row has no per-bank story to tell. */
        bool whole = a->bank == 0 && (j == s->nbank_use || s->bank_use[j].device != a->device ||
                                      s->bank_use[j].kind != a->kind ||
                                      s->bank_use[j].region != a->region);
        if (!whole) {
            if (!header) {
                fprintf(f, "\nper-bank use (banks whose maps differ; core: logical@noc)\n");
                fprintf(f, "  %6s %-14s %-11s %-13s %11s %11s %11s %6s %7s\n", "DEVICE",
                        "REGION", "BANKS", "CORES", "ALLOCATED", "FREE", "LARGEST", "FRAG",
                        "ALLOCS");
                header = true;
            }
            char region[96], rbuf[24], banks[32], c0[32], c1[32], cores[72], frag[16];
            snprintf(region, sizeof(region), "%s/%s", memclient_kind_name(a->kind),
                     memd_report_region_name(s, a->device, a->kind, a->region, rbuf,
                                             sizeof(rbuf)));
            if (a == z)
                snprintf(banks, sizeof(banks), "%" PRIu32, a->bank);
            else
                snprintf(banks, sizeof(banks), "%" PRIu32 "-%" PRIu32, a->bank, z->bank);
            core_str(c0, sizeof(c0), a->logical_x, a->logical_y, a->noc_x, a->noc_y);
            core_str(c1, sizeof(c1), z->logical_x, z->logical_y, z->noc_x, z->noc_y);
            if (a == z || a->logical_x == MEMD_NO_CORE)
                snprintf(cores, sizeof(cores), "%s", c0);
            else
                snprintf(cores, sizeof(cores), "%s..%s", c0, c1);
            snprintf(frag, sizeof(frag), "%.1f%%", memd_report_fragmentation(&a->stats));
            fprintf(f, "  %6" PRIu32 " %-14s %-11s %-13s %11s %11s %11s %6s %7" PRIu64 "\n",
                    a->device, region, banks, cores, HB(a->stats.allocated),
                    HB(a->stats.free), HB(a->stats.largest_free), frag, a->stats.allocations);
        }
        i = j;
    }
}

/* Bank ids as ranges ("0-3,8"), addresses per bank for per-bank buffers. */
static void spans_table(FILE *f, const memclient_snapshot *s)
{
    if (s->nalloc_banks == 0)
        return;
    fprintf(f, "\nbank-set buffers: which banks they span (per bank: bank:address)\n");
    for (size_t i = 0; i < s->nalloc_banks;) {
        size_t j = i;
        while (j < s->nalloc_banks && s->alloc_banks[j].handle == s->alloc_banks[i].handle)
            j++;
        const memclient_alloc_bank *a = &s->alloc_banks[i];
        fprintf(f, "  %8" PRIu64 " %-8s ", a->handle,
                a->mode == MEMD_BANKS_PER_BANK ? "per-bank" : "range");
        if (a->mode == MEMD_BANKS_PER_BANK) {
            for (size_t k = i; k < j; k++) {
                const memclient_bank *b = &s->alloc_banks[k].bank;
                fprintf(f, "%s%" PRIu32 ":0x%" PRIx64, k > i ? "," : "", b->bank, b->address);
                if (b->logical_x != MEMD_NO_CORE)
                    fprintf(f, "(%u,%u)", b->logical_x, b->logical_y);
            }
        } else {
            fprintf(f, "0x%" PRIx64 " in banks ", a->bank.address);
            for (size_t k = i; k < j;) {
                size_t r = k + 1;
                while (r < j && s->alloc_banks[r].bank.bank == s->alloc_banks[r - 1].bank.bank + 1)
                    r++;
                fprintf(f, "%s%" PRIu32, k > i ? "," : "", s->alloc_banks[k].bank.bank);
                if (r - k > 1)
                    fprintf(f, "-%" PRIu32, s->alloc_banks[r - 1].bank.bank);
                k = r;
            }
        }
        fputc('\n', f);
        i = j;
    }
}

void memctl_banks_table(FILE *f, const memclient_snapshot *s)
{
    bank_use_table(f, s);
    spans_table(f, s);
}

/* Sub-devices: their banks, budget and use, and the sessions bound to them. */
void memctl_subdevs_table(FILE *f, const memclient_snapshot *s)
{
    if (s->nsubdevs == 0)
        return;
    fprintf(f, "\nsub-devices: %zu\n", s->nsubdevs);
    static const char *const head[] = {"NAME", "DEVICE", "GROUP", "BANKS", "BUDGET", "USED",
                                       "ALLOCS", "FROM", "SESSIONS"};
    memctl_table *t = memctl_table_new(9, head, "lrllrrrll");
    if (!t)
        return;
    for (size_t i = 0; i < s->nsubdevs; i++) {
        const memclient_subdev_rec *d = &s->subdevs[i];
        char ids[256] = "";
        size_t used = 0;
        for (size_t k = 0; k < s->nsessions && used + 16 < sizeof ids; k++)
            if (s->sessions[k].subdev == i + 1)
                used += (size_t)snprintf(ids + used, sizeof ids - used, "%s%" PRIu32,
                                         used ? "," : "", s->sessions[k].id);
        memctl_table_cell(t, "%s", d->name);
        memctl_table_cell(t, "%" PRIu32, d->device);
        memctl_table_cell(t, "%s", memclient_kind_name(d->kind));
        memctl_table_cell(t, "%s", d->banks);
        memctl_table_cell(t, "%s", d->budget ? HB(d->budget) : "-");
        memctl_table_cell(t, "%s", HB(d->used));
        memctl_table_cell(t, "%" PRIu64, d->allocations);
        memctl_table_cell(t, "%s", d->from_config ? "config" : "request");
        memctl_table_cell(t, "%s", ids[0] ? ids : (d->sessions ? "(others')" : "-"));
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}
