/* memctl dump: the human table. Sizes are per bank (lockstep: a buffer takes the same
 * range in every bank of its group). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"

#define HB(v) memctl_human_bytes((v), (char[24]){0}, 24)

static void stats_row(FILE *f, const char *indent, const char *name, const char *banks,
                      const char *base, uint64_t size, const memclient_stats *st,
                      const char *clients)
{
    char frag[16];
    snprintf(frag, sizeof(frag), "%.1f%%", memd_report_fragmentation(st));
    fprintf(f, "%s%-*s %6s %14s %11s %11s %11s %11s %6s %7" PRIu64 " %7s\n", indent,
            (int)(16 - strlen(indent)), name, banks, base, HB(size), HB(st->allocated),
            HB(st->free), HB(st->largest_free), frag, st->allocations, clients);
}

static void devices_table(FILE *f, const memclient_snapshot *s)
{
    for (size_t d = 0; d < s->ndevices; d++) {
        const memclient_device *dev = &s->devices[d];
        fprintf(f, "device %" PRIu32 ": %s (arch %s%s)\n", dev->id, dev->name, dev->arch,
                dev->texture ? ", dram.texture" : "");
        fprintf(f, "  %-14s %6s %14s %11s %11s %11s %11s %6s %7s %7s\n", "GROUP/REGION", "BANKS",
                "BASE", "SIZE/BANK", "ALLOCATED", "FREE", "LARGEST", "FRAG", "ALLOCS",
                "CLIENTS");
        for (size_t g = 0; g < s->ngroups; g++) {
            const memclient_group *grp = &s->groups[g];
            if (grp->device != dev->id)
                continue;
            char banks[16], clients[16];
            snprintf(banks, sizeof(banks), "%" PRIu32, grp->banks);
            snprintf(clients, sizeof(clients), "%" PRIu32, grp->clients);
            stats_row(f, "  ", memclient_kind_name(grp->kind), banks, "", grp->bank_size,
                      &grp->stats, clients);
            for (size_t r = 0; r < s->nregions; r++) {
                const memclient_region *reg = &s->regions[r];
                if (reg->device != dev->id || reg->kind != grp->kind)
                    continue;
                char base[24];
                snprintf(base, sizeof(base), "0x%" PRIx64, reg->base);
                if (reg->allocatable) {
                    stats_row(f, "    ", reg->name, "", base, reg->size, &reg->stats, "");
                } else {
                    fprintf(f, "    %-12s %6s %14s %11s %11s\n", reg->name, "", base,
                            HB(reg->size), "(reserved)");
                }
            }
        }
        fputc('\n', f);
    }
}

static void allocs_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "allocations: %zu\n", s->nallocs);
    if (s->nallocs == 0)
        return;
    fprintf(f, "  %8s %6s %-14s %-11s %14s %11s %5s %7s %6s %-15s %-20s %6s\n", "HANDLE",
            "DEVICE", "REGION", "CLASS", "ADDRESS", "BYTES/BANK", "BANKS", "PID", "UID",
            "PROCESS", "NAME", "AGE");
    for (size_t i = 0; i < s->nallocs; i++) {
        const memclient_alloc_info *a = &s->allocs[i];
        char region[96], rbuf[24], addr[24], age[24];
        snprintf(region, sizeof(region), "%s/%s", memclient_kind_name(a->buf.kind),
                 memd_report_region_name(s, a->device, a->buf.kind, a->buf.region, rbuf, sizeof(rbuf)));
        snprintf(addr, sizeof(addr), "0x%" PRIx64, a->buf.address);
        uint64_t age_ns = s->server.now_ns > a->created_ns ? s->server.now_ns - a->created_ns : 0;
        fprintf(f, "  %8" PRIu64 " %6" PRIu32 " %-14s %-11s %14s %11s %5" PRIu32 " %7" PRIu32
                " %6" PRIu32 " %-15s %-20s %6s\n",
                a->buf.handle, a->device, region, memclient_class_name(a->cls), addr,
                HB(a->buf.size_per_bank), a->buf.banks, a->pid, a->uid,
                a->comm[0] ? a->comm : "-", a->name[0] ? a->name : "-",
                memctl_human_age(age_ns, age, sizeof(age)));
    }
}

static void blocks_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "\nblocks: %zu\n", s->nblocks);
    if (s->nblocks == 0)
        return;
    fprintf(f, "  %6s %-14s %18s %18s %11s %-9s\n", "DEVICE", "REGION", "ADDRESS", "END",
            "SIZE", "STATUS");
    for (size_t i = 0; i < s->nblocks; i++) {
        const memclient_block *b = &s->blocks[i];
        char region[96], rbuf[24], addr[24], end[24];
        snprintf(region, sizeof(region), "%s/%s", memclient_kind_name(b->kind),
                 memd_report_region_name(s, b->device, b->kind, b->region, rbuf, sizeof(rbuf)));
        snprintf(addr, sizeof(addr), "0x%" PRIx64, b->address);
        snprintf(end, sizeof(end), "0x%" PRIx64, b->address + b->size);
        fprintf(f, "  %6" PRIu32 " %-14s %18s %18s %11s %-9s\n", b->device, region, addr, end,
                HB(b->size), b->allocated ? "allocated" : "free");
    }
}

static void sessions_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "\nsessions: %zu\n", s->nsessions);
    if (s->nsessions == 0)
        return;
    fprintf(f, "  %6s %7s %6s %6s %-15s %-20s %7s %9s %9s  %s\n", "ID", "PID", "UID", "GID",
            "PROCESS", "CLIENT", "AGE", "ALLOCS", "REQUESTS", "STATE");
    for (size_t i = 0; i < s->nsessions; i++) {
        const memclient_session_rec *x = &s->sessions[i];
        char age[24], left[24], state[48] = "connected";
        uint64_t age_ns = s->server.now_ns > x->connected_ns ? s->server.now_ns - x->connected_ns : 0;
        /* From before a daemon restart: holds its memory until reclaimed or released. */
        if (x->orphaned) {
            uint64_t left_ns = x->reclaim_deadline_ns > s->server.now_ns
                                   ? x->reclaim_deadline_ns - s->server.now_ns : 0;
            snprintf(state, sizeof(state), "ORPHANED (released in %s)",
                     memctl_human_age(left_ns, left, sizeof(left)));
        }
        fprintf(f, "  %6" PRIu32 " %7" PRIu32 " %6" PRIu32 " %6" PRIu32 " %-15s %-20s %7s %9" PRIu64
                " %9" PRIu64 "  %s\n", x->id, x->pid, x->uid, x->gid, x->comm[0] ? x->comm : "-",
                x->client_name[0] ? x->client_name : "-",
                memctl_human_age(age_ns, age, sizeof(age)), x->allocations, x->requests, state);
    }
}

void memctl_sessions_table(FILE *f, const memclient_snapshot *s)
{
    sessions_table(f, s);
}

void memctl_devices_table(FILE *f, const memclient_snapshot *s)
{
    devices_table(f, s);
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
    if (detailed) {
        blocks_table(f, s);
        sessions_table(f, s);
    }
}
