/* memctl sessions / memctl devices: who holds what (per session, per process, per
 * device), and the devices with their bank groups and regions; table or --json. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"

#define HB(v) memctl_human_bytes((v), (char[24]){0}, 24)

/* One line of what a session holds per device ("0: 12.0 MiB, 1: 3.0 KiB"). */
static void per_device(FILE *f, const memclient_snapshot *s, uint32_t session_id)
{
    bool any = false;
    for (size_t d = 0; d < s->ndevices; d++) {
        uint64_t b = 0;
        for (size_t i = 0; i < s->nusage; i++)
            if (s->usage[i].session_id == session_id && s->usage[i].device == s->devices[d].id)
                b += s->usage[i].bytes;
        if (!b)
            continue;
        fprintf(f, "%s%" PRIu32 ": %s", any ? ", " : "", s->devices[d].id, HB(b));
        any = true;
    }
    if (!any)
        fputc('-', f);
}

void memctl_sessions_usage_table(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "sessions: %zu (bytes: every bank a buffer reserves; shared buffers count for "
               "each holder)\n", s->nsessions);
    if (s->nsessions) {
        fprintf(f, "  %6s %7s %6s %-15s %-18s %7s %7s %11s  %s\n", "ID", "PID", "UID",
                "PROCESS", "CLIENT", "AGE", "ALLOCS", "BYTES", "PER DEVICE");
        for (size_t i = 0; i < s->nsessions; i++) {
            const memclient_session_rec *x = &s->sessions[i];
            char age[24], client[19], comm[16];
            uint64_t age_ns = s->server.now_ns > x->connected_ns ? s->server.now_ns - x->connected_ns : 0;
            memd_report_use u;
            memd_report_session_total(s, x->id, &u);
            memctl_fit(client, sizeof client, x->client_name[0] ? x->client_name : "-");
            memctl_fit(comm, sizeof comm, x->comm[0] ? x->comm : "-");
            fprintf(f, "  %6" PRIu32 " %7" PRIu32 " %6" PRIu32 " %-15s %-18s %7s %7" PRIu64
                       " %11s  ", x->id, x->pid, x->uid, comm, client,
                    memctl_human_age(age_ns, age, sizeof age), u.allocations, HB(u.bytes));
            per_device(f, s, x->id);
            fputs(x->orphaned ? "  ORPHANED\n" : "\n", f);
        }
    }
    memd_report_procs ps;
    if (memd_report_processes(s, &ps) < 0)
        return;
    fprintf(f, "\nprocesses: %zu\n", ps.n);
    if (ps.n) {
        fprintf(f, "  %7s %6s %-15s %8s %7s %11s %11s", "PID", "UID", "PROCESS", "SESSIONS",
                "ALLOCS", "BYTES", "SHARED");
        for (size_t d = 0; d < s->ndevices; d++) {
            char h[16];
            snprintf(h, sizeof h, "DEV%" PRIu32, s->devices[d].id);
            fprintf(f, " %11s", h);
        }
        fputc('\n', f);
        for (size_t i = 0; i < ps.n; i++) {
            const memd_report_proc *p = &ps.procs[i];
            char comm[16];
            memctl_fit(comm, sizeof comm, p->comm[0] ? p->comm : "-");
            fprintf(f, "  %7" PRIu32 " %6" PRIu32 " %-15s %8" PRIu32 " %7" PRIu64 " %11s %11s",
                    p->pid, p->uid, comm, p->sessions, p->allocations, HB(p->bytes),
                    HB(p->shared_bytes));
            for (size_t d = 0; d < s->ndevices; d++)
                fprintf(f, " %11s", HB(memd_report_proc_device_bytes(&ps, p, d)));
            fputc('\n', f);
        }
    }
    memd_report_processes_free(&ps);
}

static void sessions_json(FILE *f, const memclient_snapshot *s)
{
    /* The dump's document cut to what this view is about. */
    memclient_snapshot v = *s;
    v.ndevices = 0;
    v.ngroups = v.nregions = v.nallocs = v.nblocks = 0;
    fputs("{\n  \"schema_version\": 1,\n  \"sessions\": ", f);
    memd_report_sessions_json(f, &v);
    fputs(",\n  \"processes\": ", f);
    memd_report_processes_json(f, s, "    ");
    fputs("\n}\n", f);
}

static int show(const memctl_globals *g, int argc, char **argv, const char *help,
                unsigned flags, memctl_snapshot_fn table, memctl_snapshot_fn json)
{
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            as_json = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: memctl %s [--json]\n  %s\n", argv[0], help);
            return 0;
        } else {
            fprintf(stderr, "memctl %s: unexpected argument '%s' (usage: memctl %s [--json])\n",
                    argv[0], argv[i], argv[0]);
            return MEMCTL_EXIT_USAGE;
        }
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    memclient_snapshot *s;
    r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, flags, &s);
    memclient_disconnect(c);
    if (r < 0)
        return memctl_fail(NULL, argv[0], "cannot read the daemon's state", r);
    (as_json ? json : table)(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}

int memctl_cmd_sessions(const memctl_globals *g, int argc, char **argv)
{
    return show(g, argc, argv,
                "connected clients and what they hold, per session and per process (an "
                "admin sees all, others their own)",
                MEMCLIENT_DUMP_USAGE, memctl_sessions_usage_table, sessions_json);
}

static void devices_json(FILE *f, const memclient_snapshot *s)
{
    memclient_snapshot v = *s;
    v.nallocs = v.nsessions = v.nblocks = v.nusage = 0;
    v.usage = NULL;
    memd_report_json(f, &v, false);
}

int memctl_cmd_devices(const memctl_globals *g, int argc, char **argv)
{
    return show(g, argc, argv, "devices, their bank groups and regions (sizes per bank)", 0,
                memctl_devices_table, devices_json);
}
