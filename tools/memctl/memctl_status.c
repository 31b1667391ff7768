/* memctl status (also memctl with no command): an nvidia-smi style summary. Per device
 * and bank group: bytes used of the allocatable total summed over every bank, its peak,
 * and the same per bank; the regions' current bytes and peaks; then the processes
 * holding memory with their peaks. Table or --json. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "units.h"
#include "memctl_service.h"
#include "memctl_table.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

static double pct(uint64_t used, uint64_t total)
{
    return total ? 100.0 * (double)used / (double)total : 0.0;
}

static void status_table(FILE *f, const memclient_snapshot *s)
{
    char up[24];
    uint64_t up_ns = s->server.now_ns > s->server.start_ns ? s->server.now_ns - s->server.start_ns : 0;
    fprintf(f, "memd %s (pid %" PRIu32 "), up %s, %" PRIu32 " sessions\n", s->server.version,
            s->server.pid, memctl_human_age(up_ns, up, sizeof up), s->server.sessions);
    static const char *const head[] = {"DEVICE", "NAME", "GROUP", "BANKS",
                                       "USED / TOTAL (ALL BANKS)", "USE%", "", "PEAK",
                                       "USED / TOTAL (PER BANK)", "ALLOCS"};
    memctl_table *t = memctl_table_new(10, head, "rllrrrlrrr");
    if (!t)
        return;
    for (size_t d = 0; d < s->ndevices; d++) {
        const memclient_device *dev = &s->devices[d];
        bool first = true;
        size_t gi = 0;
        memd_report_group_bytes u;
        for (const memclient_group *g; (g = memd_report_device_group(s, dev->id, &gi, &u));) {
            double p = pct(u.used, u.total);
            char bar[13];
            int full = (int)(p / 10.0 + 0.5);
            bar[0] = '[';
            for (int i = 0; i < 10; i++)
                bar[i + 1] = i < full ? '#' : '.';
            bar[11] = ']';
            bar[12] = '\0';
            if (first)
                memctl_table_cell(t, "%" PRIu32, dev->id);
            else
                memctl_table_cell(t, "%s", "");
            memctl_table_cell(t, "%s", first ? dev->name : "");
            memctl_table_cell(t, "%s", memclient_kind_name(g->kind));
            memctl_table_cell(t, "%" PRIu32, g->banks);
            memctl_table_cell(t, "%s / %s", HB(u.used), HB(u.total));
            memctl_table_cell(t, "%.1f%%", p);
            memctl_table_cell(t, "%s", bar);
            const memclient_peak *pk = memd_report_peak(s, MEMCLIENT_PEAK_GROUP, dev->id, g->kind, 0);
            memctl_table_cell(t, "%s", pk ? HB(pk->peak) : "-");
            if (u.used_min_bank == u.used_max_bank) /* lockstep: one figure fits all */
                memctl_table_cell(t, "%s / %s", HB(u.used_max_bank), HB(u.total_per_bank));
            else /* banks differ: the emptiest and the fullest */
                memctl_table_cell(t, "%s-%s / %s", HB(u.used_min_bank), HB(u.used_max_bank),
                                  HB(u.total_per_bank));
            memctl_table_cell(t, "%" PRIu64, g->stats.allocations);
            first = false;
        }
    }
    memctl_table_print(t, f, "");
    memctl_table_free(t);
    fputc('\n', f);
    memctl_peaks_table(f, s, UINT32_MAX, 1u << MEMCLIENT_PEAK_REGION);
    fputc('\n', f);
    memctl_processes_table(f, s);
}

static void status_json(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "{\n  \"schema_version\": 1,\n  \"server\": {\"version\": ");
    memd_json_str(f, s->server.version);
    fprintf(f, ", \"pid\": %" PRIu32 ", \"sessions\": %" PRIu32 ", \"start_ns\": %" PRIu64
               ", \"start_ns_str\": \"%" PRIu64 "\", \"now_ns\": %" PRIu64
               ", \"now_ns_str\": \"%" PRIu64 "\"},\n  \"devices\": [",
            s->server.pid, s->server.sessions, s->server.start_ns, s->server.start_ns,
            s->server.now_ns, s->server.now_ns);
    for (size_t d = 0; d < s->ndevices; d++) {
        const memclient_device *dev = &s->devices[d];
        fprintf(f, "%s\n    {\"id\": %" PRIu32 ", \"name\": ", d ? "," : "", dev->id);
        memd_json_str(f, dev->name);
        fputs(", \"bank_groups\": [", f);
        bool first = true;
        size_t gi = 0;
        memd_report_group_bytes u;
        for (const memclient_group *g; (g = memd_report_device_group(s, dev->id, &gi, &u));) {
            fprintf(f, "%s\n      {\"kind\": \"%s\", \"banks\": %" PRIu32 ", \"bank_size\": %" PRIu64
                       ", \"used\": %" PRIu64 ", \"total\": %" PRIu64 ", \"used_per_bank\": %" PRIu64
                       ", \"used_per_bank_min\": %" PRIu64 ", \"total_per_bank\": %" PRIu64
                       ", \"use_pct\": %.2f, \"allocations\": %" PRIu64 ", \"clients\": %" PRIu32,
                    first ? "" : ",", memclient_kind_name(g->kind), g->banks, g->bank_size,
                    u.used, u.total, u.used_max_bank, u.used_min_bank, u.total_per_bank,
                    pct(u.used, u.total), g->stats.allocations, g->clients);
            const memclient_peak *pk = memd_report_peak(s, MEMCLIENT_PEAK_GROUP, dev->id, g->kind, 0);
            if (pk)
                fprintf(f, ", \"peak\": %" PRIu64 ", \"peak_ns\": %" PRIu64, pk->peak, pk->peak_ns);
            fputc('}', f);
            first = false;
        }
        fputs(first ? "]}" : "\n    ]}", f);
    }
    fprintf(f, "%s],\n  \"regions\": ", s->ndevices ? "\n  " : "");
    memctl_peaks_json(f, s, UINT32_MAX, 1u << MEMCLIENT_PEAK_REGION, "    ");
    fputs(",\n  \"processes\": ", f);
    memd_report_processes_json(f, s, "    ");
    fputs("\n}\n", f);
}

int memctl_cmd_status(const memctl_globals *g, int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: memctl [status] [--json]\n"
                   "  used / total per device and bank group, summed over its banks and per "
                   "bank, with its peak;\n  the regions' current bytes and peaks; the processes "
                   "holding memory with their\n  peaks (their sessions' summed; memctl peaks "
                   "has each and when)\n");
            return 0;
        } else {
            fprintf(stderr, "memctl status: unexpected argument '%s' (usage: memctl status "
                            "[--json])\n", argv[i]);
            return MEMCTL_EXIT_USAGE;
        }
    }
    memclient_snapshot *s;
    int r = memctl_fetch(g, "status", MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_BANKS | MEMCLIENT_DUMP_CGROUPS |
                                              MEMCLIENT_DUMP_PEAKS, &s);
    if (r)
        return r;
    (json ? status_json : status_table)(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}
