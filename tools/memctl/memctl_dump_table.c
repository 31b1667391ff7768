/* memctl dump: the human table. Sizes are per bank (lockstep: a buffer takes the same
 * range in every bank of its group). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "memctl_service.h"
#include "memctl_table.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

/* ALLOCATED per bank: one figure in lockstep; where bank-set buffers make banks differ,
 * the emptiest and the fullest bank (lockstep stats alone would say 0 B). */
static void stats_cells(memctl_table *t, const memclient_stats *st, uint64_t min, uint64_t max,
                        double frag)
{
    if (min == max)
        memctl_table_cell(t, "%s", HB(max));
    else
        memctl_table_cell(t, "%s-%s", HB(min), HB(max));
    memctl_table_cell(t, "%s", HB(st->free));
    memctl_table_cell(t, "%s", HB(st->largest_free));
    memctl_table_cell(t, "%.1f%%", frag);
    memctl_table_cell(t, "%" PRIu64, st->allocations);
}

/* One table for every device, so the columns line up from one device to the next. */
static void devices_table(FILE *f, const memclient_snapshot *s)
{
    static const char *const head[] = {"GROUP/REGION", "BANKS", "BASE", "SIZE/BANK", "ALLOCATED",
                                       "FREE", "LARGEST", "FRAG", "ALLOCS", "CLIENTS"};
    memctl_table *t = memctl_table_new(10, head, "lrrrrrrrrr");
    if (!t)
        return;
    for (size_t d = 0; d < s->ndevices; d++) {
        const memclient_device *dev = &s->devices[d];
        if (d) /* an empty line of its own: a "\n" inside the line would be escaped */
            memctl_table_line(t, "%s", "");
        memctl_table_line(t, "device %" PRIu32 ": %s (arch %s%s)", dev->id, dev->name, dev->arch,
                          dev->texture ? ", dram.texture" : "");
        memctl_table_header(t);
        for (size_t g = 0; g < s->ngroups; g++) {
            const memclient_group *grp = &s->groups[g];
            if (grp->device != dev->id)
                continue;
            memctl_table_cell(t, "%s", memclient_kind_name(grp->kind));
            memctl_table_cell(t, "%" PRIu32, grp->banks);
            memctl_table_cell(t, "%s", "");
            memctl_table_cell(t, "%s", HB(grp->bank_size));
            memd_report_group_bytes u;
            memd_report_group_use(s, grp, &u);
            stats_cells(t, &grp->stats, u.used_min_bank, u.used_max_bank,
                        memd_report_group_fragmentation(s, grp));
            memctl_table_cell(t, "%" PRIu32, grp->clients);
            for (size_t r = 0; r < s->nregions; r++) {
                const memclient_region *reg = &s->regions[r];
                if (reg->device != dev->id || reg->kind != grp->kind)
                    continue;
                memctl_table_cell(t, "  %s", reg->name);
                memctl_table_cell(t, "%s", "");
                memctl_table_cell(t, "0x%" PRIx64, reg->base);
                memctl_table_cell(t, "%s", HB(reg->size));
                if (reg->allocatable) {
                    uint64_t min, max;
                    memd_report_region_bank_range(s, reg, &min, &max);
                    stats_cells(t, &reg->stats, min, max, memd_report_fragmentation(&reg->stats));
                } else {
                    memctl_table_cell(t, "(reserved)");
                }
                memctl_table_end_row(t);
            }
        }
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
    fputc('\n', f);
}

static void allocs_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "allocations: %zu\n", s->nallocs);
    if (s->nallocs == 0)
        return;
    static const char *const head[] = {"HANDLE", "DEVICE", "REGION", "CLASS", "ADDRESS",
                                       "BYTES/BANK", "BANKS", "PID", "UID", "PROCESS", "NAME",
                                       "AGE"};
    memctl_table *t = memctl_table_new(12, head, "rrllrrrrrllr");
    if (!t)
        return;
    for (size_t i = 0; i < s->nallocs; i++) {
        const memclient_alloc_info *a = &s->allocs[i];
        char rbuf[24], age[24];
        uint64_t age_ns = s->server.now_ns > a->created_ns ? s->server.now_ns - a->created_ns : 0;
        memctl_table_cell(t, "%" PRIu64, a->buf.handle);
        memctl_table_cell(t, "%" PRIu32, a->device);
        memctl_table_cell(t, "%s/%s", memclient_kind_name(a->buf.kind),
                          memd_report_region_name(s, a->device, a->buf.kind, a->buf.region, rbuf,
                                                  sizeof(rbuf)));
        memctl_table_cell(t, "%s", memclient_class_name(a->cls));
        memctl_table_cell(t, "0x%" PRIx64, a->buf.address);
        memctl_table_cell(t, "%s", HB(a->buf.size_per_bank));
        memctl_table_cell(t, "%" PRIu32, a->buf.banks);
        memctl_table_cell(t, "%" PRIu32, a->pid);
        memctl_table_cell(t, "%" PRIu32, a->uid);
        memctl_table_cell(t, "%s", a->comm[0] ? a->comm : "-");
        /* A client pool is marked: its sub-allocations follow under "pools". */
        char role[2 * MEMD_NAME_MAX];
        const char *name = memd_report_alloc_role(s, a, role, sizeof role);
        /* A shared buffer is every holder's: the pid is its creator's only. */
        char shared[32] = "";
        if (a->buf.refcount > 1)
            snprintf(shared, sizeof shared, " [shared by %" PRIu32 "]", a->buf.refcount);
        memctl_table_cell(t, "%s%s%s", name[0] ? name : "-", a->pool ? " [pool]" : "", shared);
        memctl_table_cell(t, "%s", memctl_human_age(age_ns, age, sizeof(age)));
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

/* Each client pool: owner, pooled bytes, as of when, then its sub-allocations. */
static void pools_table(FILE *f, const memclient_snapshot *s)
{
    if (s->npools == 0)
        return;
    fprintf(f, "\npools: %zu (sub-allocations as the owners last reported them)\n", s->npools);
    static const char *const head[] = {"OFFSET", "ADDRESS", "BYTES/BANK", "NAME"};
    memctl_table *t = memctl_table_new(4, head, "rrrl");
    if (!t)
        return;
    size_t sub = 0;
    for (size_t i = 0; i < s->npools; i++) {
        const memclient_pool_rec *p = &s->pools[i];
        const memclient_alloc_info *a = NULL;
        for (size_t k = 0; k < s->nallocs && !a; k++)
            if (s->allocs[k].buf.handle == p->handle)
                a = &s->allocs[k];
        char age[24];
        uint64_t age_ns = s->server.now_ns > p->as_of_ns ? s->server.now_ns - p->as_of_ns : 0;
        memctl_table_line(t, "pool %" PRIu64 " %s (pid %" PRIu32 " %s): %" PRIu32
                          " sub-allocations, %s of %s pooled, as of %s ago",
                          p->handle, a && a->name[0] ? a->name : "-", a ? a->pid : 0,
                          a && a->comm[0] ? a->comm : "-", p->suballocs, HB(p->pooled_bytes),
                          HB(a ? a->buf.size_per_bank : 0),
                          memctl_human_age(age_ns, age, sizeof(age)));
        if (sub < s->nsuballocs && s->suballocs[sub].pool == p->handle)
            memctl_table_header(t);
        for (; sub < s->nsuballocs && s->suballocs[sub].pool == p->handle; sub++) {
            const memclient_suballoc_rec *x = &s->suballocs[sub];
            memctl_table_cell(t, "0x%" PRIx64, x->offset);
            memctl_table_cell(t, "0x%" PRIx64, (a ? a->buf.address : 0) + x->offset);
            memctl_table_cell(t, "%s", HB(x->size));
            memctl_table_cell(t, "%s", x->name[0] ? x->name : "-");
        }
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

static void blocks_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "\nblocks: %zu\n", s->nblocks);
    if (s->nblocks == 0)
        return;
    static const char *const head[] = {"DEVICE", "REGION", "ADDRESS", "END", "SIZE", "STATUS"};
    memctl_table *t = memctl_table_new(6, head, "rlrrrl");
    if (!t)
        return;
    for (size_t i = 0; i < s->nblocks; i++) {
        const memclient_block *b = &s->blocks[i];
        char rbuf[24];
        memctl_table_cell(t, "%" PRIu32, b->device);
        memctl_table_cell(t, "%s/%s", memclient_kind_name(b->kind),
                          memd_report_region_name(s, b->device, b->kind, b->region, rbuf,
                                                  sizeof(rbuf)));
        memctl_table_cell(t, "0x%" PRIx64, b->address);
        memctl_table_cell(t, "0x%" PRIx64, b->address + b->size);
        memctl_table_cell(t, "%s", HB(b->size));
        memctl_table_cell(t, "%s", b->allocated ? "allocated" : "free");
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

void memctl_devices_table(FILE *f, const memclient_snapshot *s)
{
    devices_table(f, s);
    memctl_bank_use_table(f, s);
    memctl_subdevs_table(f, s);
}

void memctl_dump_table(FILE *f, const memclient_snapshot *s, bool detailed)
{
    char up[24];
    uint64_t up_ns = s->server.now_ns > s->server.start_ns ? s->server.now_ns - s->server.start_ns : 0;
    fprintf(f, "memd %s (pid %" PRIu32 "), up %s, %" PRIu32 " sessions; sizes are per bank\n\n",
            s->server.version, s->server.pid, memctl_human_age(up_ns, up, sizeof(up)),
            s->server.sessions);
    devices_table(f, s);
    allocs_table(f, s);
    memctl_banks_table(f, s);
    pools_table(f, s);
    memctl_subdevs_table(f, s);
    if (detailed)
        blocks_table(f, s);
    fputc('\n', f); /* who holds what: sessions and processes with their bytes */
    memctl_sessions_usage_table(f, s);
}
