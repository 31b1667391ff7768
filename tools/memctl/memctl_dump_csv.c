/* memctl dump --csv --report NAME: the three memory reports tt-metal users know, with one
 * unit (bytes) spelled out in every size column's header. tt-metal's own reports mix B and
 * KB and nest sections; these are flat tables a spreadsheet or pandas reads directly.
 *   memory_usage_summary   one row per device and bank group (DRAM, L1): per-bank totals
 *   l1_usage_summary       one row per device: the largest L1 buffer that can still be
 *                          interleaved over every L1 bank
 *   detailed_memory_usage  one row per block (free or allocated) of every region */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bisect.h"
#include "memctl_service.h"

static const char *const reports[] = {
    "memory_usage_summary", "l1_usage_summary", "detailed_memory_usage",
};

bool memctl_csv_report_valid(const char *report)
{
    for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
        if (!strcmp(report, reports[i]))
            return true;
    return false;
}

bool memctl_csv_report_needs_blocks(const char *report)
{
    return !strcmp(report, "detailed_memory_usage");
}

/* tt-metal calls the bank groups DRAM and L1. */
static const char *buffer_type(memd_kind k)
{
    return k == MEMD_KIND_SRAM ? "L1" : "DRAM";
}

static void memory_usage_summary(FILE *f, const memclient_snapshot *s)
{
    fputs("device,buffer_type,num_banks,bank_size_bytes,total_allocatable_bytes_per_bank,"
          "allocated_bytes_per_bank,free_bytes_per_bank,largest_free_block_bytes_per_bank,"
          "allocations\n", f);
    for (size_t g = 0; g < s->ngroups; g++) {
        const memclient_group *x = &s->groups[g];
        fprintf(f, "%" PRIu32 ",%s,%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
                ",%" PRIu64 ",%" PRIu64 "\n",
                x->device, buffer_type(x->kind), x->banks, x->bank_size, x->stats.total,
                x->stats.allocated, x->stats.free, x->stats.largest_free, x->stats.allocations);
    }
}

static void l1_usage_summary(FILE *f, const memclient_snapshot *s)
{
    fputs("device,num_banks,largest_contiguous_free_block_bytes_per_bank,"
          "largest_interleaved_buffer_bytes,total_free_bytes_per_bank\n", f);
    for (size_t g = 0; g < s->ngroups; g++) {
        const memclient_group *x = &s->groups[g];
        if (x->kind != MEMD_KIND_SRAM)
            continue;
        fprintf(f, "%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", x->device,
                x->banks, x->stats.largest_free, x->stats.largest_free * x->banks, x->stats.free);
    }
}

/* Allocations sorted by place, so each allocated block finds its owner in O(log n). */
static int place_cmp(uint32_t dev_a, memd_kind kind_a, uint32_t reg_a, uint64_t addr_a,
                     uint32_t dev_b, memd_kind kind_b, uint32_t reg_b, uint64_t addr_b)
{
    if (dev_a != dev_b)
        return dev_a < dev_b ? -1 : 1;
    if (kind_a != kind_b)
        return kind_a < kind_b ? -1 : 1;
    if (reg_a != reg_b)
        return reg_a < reg_b ? -1 : 1;
    if (addr_a != addr_b)
        return addr_a < addr_b ? -1 : 1;
    return 0;
}

static int alloc_cmp(const void *x, const void *y)
{
    const memclient_alloc_info *a = *(const memclient_alloc_info *const *)x;
    const memclient_alloc_info *b = *(const memclient_alloc_info *const *)y;
    return place_cmp(a->device, a->buf.kind, a->buf.region, a->buf.address, b->device,
                     b->buf.kind, b->buf.region, b->buf.address);
}

static int cmp_block(const memclient_alloc_info *a, const memclient_block *b)
{
    return place_cmp(a->device, a->buf.kind, a->buf.region, a->buf.address, b->device,
                     b->kind, b->region, b->address);
}

static bool before_block(const void *elem, const void *key)
{
    return cmp_block(*(const memclient_alloc_info *const *)elem, key) < 0;
}

static const memclient_alloc_info *alloc_at(const memclient_alloc_info **sorted, size_t n,
                                            const memclient_block *b)
{
    size_t i = memd_partition_point(sorted, n, sizeof(*sorted), before_block, b);
    return i < n && cmp_block(sorted[i], b) == 0 ? sorted[i] : NULL;
}

static int detailed_memory_usage(FILE *f, const memclient_snapshot *s)
{
    const memclient_alloc_info **sorted = calloc(s->nallocs ? s->nallocs : 1, sizeof(*sorted));
    if (!sorted)
        return -ENOMEM;
    for (size_t i = 0; i < s->nallocs; i++)
        sorted[i] = &s->allocs[i];
    qsort(sorted, s->nallocs, sizeof(*sorted), alloc_cmp);
    fputs("device,buffer_type,region,address,size_bytes,status,handle,class,pid,name\n", f);
    for (size_t i = 0; i < s->nblocks; i++) {
        const memclient_block *b = &s->blocks[i];
        char rbuf[24];
        fprintf(f, "%" PRIu32 ",%s,", b->device, buffer_type(b->kind));
        memctl_csv_str(f, memd_report_region_name(s, b->device, b->kind, b->region, rbuf, sizeof(rbuf)));
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%s,", b->address, b->size,
                b->allocated ? "allocated" : "free");
        /* Allocations of other sessions are not visible to a non-admin: empty owner. */
        const memclient_alloc_info *a = b->allocated ? alloc_at(sorted, s->nallocs, b) : NULL;
        if (a) {
            fprintf(f, "%" PRIu64 ",%s,%" PRIu32 ",", a->buf.handle, memclient_class_name(a->cls),
                    a->pid);
            memctl_csv_str(f, a->name);
        } else {
            fputs(",,,", f);
        }
        fputc('\n', f);
    }
    free(sorted);
    return 0;
}

int memctl_dump_csv(FILE *f, const memclient_snapshot *s, const char *report)
{
    if (!strcmp(report, "memory_usage_summary"))
        memory_usage_summary(f, s);
    else if (!strcmp(report, "l1_usage_summary"))
        l1_usage_summary(f, s);
    else if (!strcmp(report, "detailed_memory_usage"))
        return detailed_memory_usage(f, s);
    else
        return -EINVAL;
    return 0;
}
