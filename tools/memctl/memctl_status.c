/* memctl status (also memctl with no command): an nvidia-smi style summary. Per device
 * and bank group: bytes used of the allocatable total summed over every bank, and the
 * same per bank; then the processes holding memory. Table or --json. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memctl_service.h"

#define HB(v) memctl_human_bytes((v), (char[24]){0}, 24)

static double pct(uint64_t used, uint64_t total)
{
    return total ? 100.0 * (double)used / (double)total : 0.0;
}

static void bar(FILE *f, double p, int width)
{
    int full = (int)(p / 100.0 * width + 0.5);
    fputc('[', f);
    for (int i = 0; i < width; i++)
        fputc(i < full ? '#' : '.', f);
    fputc(']', f);
}

static void status_table(FILE *f, const memclient_snapshot *s)
{
    char up[24];
    uint64_t up_ns = s->server.now_ns > s->server.start_ns ? s->server.now_ns - s->server.start_ns : 0;
    fprintf(f, "memd %s (pid %" PRIu32 "), up %s, %" PRIu32 " sessions\n", s->server.version,
            s->server.pid, memctl_human_age(up_ns, up, sizeof up), s->server.sessions);
    fprintf(f, "%-4s %-16s %-5s %5s %25s %6s %12s  %-23s %6s\n", "DEV", "NAME", "GROUP",
            "BANKS", "USED / TOTAL (all banks)", "USE%", "", "USED / TOTAL (per bank)",
            "ALLOCS");
    for (size_t d = 0; d < s->ndevices; d++) {
        const memclient_device *dev = &s->devices[d];
        bool first = true;
        for (size_t gi = 0; gi < s->ngroups; gi++) {
            const memclient_group *g = &s->groups[gi];
            if (g->device != dev->id)
                continue;
            char name[17], all[40], per[40], id[12];
            memctl_fit(name, sizeof name, dev->name);
            snprintf(id, sizeof id, "%" PRIu32, dev->id);
            uint64_t used = g->stats.allocated * g->banks, total = g->stats.total * g->banks;
            snprintf(all, sizeof all, "%s / %s", HB(used), HB(total));
            snprintf(per, sizeof per, "%s / %s", HB(g->stats.allocated), HB(g->stats.total));
            double p = pct(g->stats.allocated, g->stats.total);
            fprintf(f, "%-4s %-16s %-5s %5" PRIu32 " %25s %5.1f%% ", first ? id : "",
                    first ? name : "", memclient_kind_name(g->kind), g->banks, all, p);
            bar(f, p, 10);
            fprintf(f, "  %-23s %6" PRIu64 "\n", per, g->stats.allocations);
            first = false;
        }
    }
    memd_report_procs ps;
    if (memd_report_processes(s, &ps) < 0)
        return;
    fprintf(f, "\n%-7s %6s %-15s %8s %7s %11s  %s\n", "PID", "UID", "PROCESS", "SESSIONS",
            "ALLOCS", "USED", "PER DEVICE");
    if (ps.n == 0)
        fprintf(f, "(no sessions%s)\n", s->server.sessions ? " visible to this user" : "");
    for (size_t i = 0; i < ps.n; i++) {
        const memd_report_proc *p = &ps.procs[i];
        if (p->pid == (uint32_t)getpid() && !p->allocations)
            continue; /* this memctl's own session */
        char comm[16];
        memctl_fit(comm, sizeof comm, p->comm[0] ? p->comm : "-");
        fprintf(f, "%-7" PRIu32 " %6" PRIu32 " %-15s %8" PRIu32 " %7" PRIu64 " %11s  ", p->pid,
                p->uid, comm, p->sessions, p->allocations, HB(p->bytes));
        bool any = false;
        for (size_t d = 0; d < s->ndevices; d++) {
            uint64_t b = memd_report_proc_device_bytes(&ps, p, d);
            if (b) {
                fprintf(f, "%s%" PRIu32 ": %s", any ? ", " : "", s->devices[d].id, HB(b));
                any = true;
            }
        }
        fputs(any ? "\n" : "-\n", f);
    }
    memd_report_processes_free(&ps);
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
        for (size_t gi = 0; gi < s->ngroups; gi++) {
            const memclient_group *g = &s->groups[gi];
            if (g->device != dev->id)
                continue;
            fprintf(f, "%s\n      {\"kind\": \"%s\", \"banks\": %" PRIu32 ", \"bank_size\": %" PRIu64
                       ", \"used\": %" PRIu64 ", \"total\": %" PRIu64 ", \"used_per_bank\": %" PRIu64
                       ", \"total_per_bank\": %" PRIu64 ", \"use_pct\": %.2f, \"allocations\": %" PRIu64
                       ", \"clients\": %" PRIu32 "}",
                    first ? "" : ",", memclient_kind_name(g->kind), g->banks, g->bank_size,
                    g->stats.allocated * g->banks, g->stats.total * g->banks, g->stats.allocated,
                    g->stats.total, pct(g->stats.allocated, g->stats.total), g->stats.allocations,
                    g->clients);
            first = false;
        }
        fputs(first ? "]}" : "\n    ]}", f);
    }
    fprintf(f, "%s],\n  \"processes\": ", s->ndevices ? "\n  " : "");
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
                   "bank, and the processes holding memory\n");
            return 0;
        } else {
            fprintf(stderr, "memctl status: unexpected argument '%s' (usage: memctl status "
                            "[--json])\n", argv[i]);
            return MEMCTL_EXIT_USAGE;
        }
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    memclient_snapshot *s;
    r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_USAGE, &s);
    memclient_disconnect(c);
    if (r < 0)
        return memctl_fail(NULL, "status", "cannot read the daemon's state", r);
    (json ? status_json : status_table)(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}
