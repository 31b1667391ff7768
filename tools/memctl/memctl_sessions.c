/* memctl sessions / memctl devices: who holds what (per session, per process, per
 * device), and the devices with their bank groups and regions; table or --json. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "units.h"
#include "memctl_service.h"
#include "cgroup_path.h"
#include "memctl_table.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

/* A cgroup as one cell: a container as "pod UID8/ID12" or "RUNTIME ID12" (the JSON
 * has the whole path and ids), anything else as its path. */
static void cgroup_cell(memctl_table *t, const char *cgroup)
{
    memd_cgroup_info c;
    memd_cgroup_parse(cgroup, &c);
    if (c.pod_uid[0])
        memctl_table_cell(t, "pod %.8s/%.12s", c.pod_uid, c.container_id[0] ? c.container_id : "-");
    else if (c.container_id[0])
        memctl_table_cell(t, "%s %.12s", c.runtime[0] ? c.runtime : "container", c.container_id);
    else
        memctl_table_cell(t, "%s", cgroup[0] ? cgroup : "-");
}

/* What a session holds per device, as one cell ("0: 12.0 MiB, 1: 3.0 KiB"). */
static void per_device_cell(memctl_table *t, const memclient_snapshot *s, uint32_t session_id)
{
    char buf[256] = "";
    size_t n = 0;
    for (size_t d = 0; d < s->ndevices && n < sizeof buf; d++) {
        uint64_t b = 0;
        for (size_t i = 0; i < s->nusage; i++)
            if (s->usage[i].session_id == session_id && s->usage[i].device == s->devices[d].id)
                b += s->usage[i].bytes;
        if (b)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%" PRIu32 ": %s", n ? ", " : "",
                                  s->devices[d].id, HB(b));
    }
    memctl_table_cell(t, "%s", n ? buf : "-");
}

static void sessions_part(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "sessions: %zu (bytes: every bank a buffer reserves; shared buffers count for "
               "each holder)\n", s->nsessions);
    if (!s->nsessions)
        return;
    /* SUB-DEVICE only where sub-devices exist (a dump with MEMCLIENT_DUMP_BANKS names them). */
    static const char *const head[] = {"ID", "PID", "UID", "GID", "PROCESS", "CLIENT", "CGROUP",
                                       "AGE", "ALLOCS", "REQUESTS", "BYTES", "PER DEVICE",
                                       "STATE"},
                             *const head_sd[] = {"ID", "PID", "UID", "GID", "PROCESS", "CLIENT",
                                                 "CGROUP", "AGE", "ALLOCS", "REQUESTS", "BYTES",
                                                 "PER DEVICE", "SUB-DEVICE", "STATE"};
    bool subdevs = s->nsubdevs > 0;
    memctl_table *t = subdevs ? memctl_table_new(14, head_sd, "rrrrlllrrrrlll")
                              : memctl_table_new(13, head, "rrrrlllrrrrll");
    if (!t)
        return;
    for (size_t i = 0; i < s->nsessions; i++) {
        const memclient_session_rec *x = &s->sessions[i];
        char age[24], left[24];
        uint64_t age_ns = s->server.now_ns > x->connected_ns ? s->server.now_ns - x->connected_ns : 0;
        memd_report_use u;
        memd_report_session_total(s, x->id, &u);
        memctl_table_cell(t, "%" PRIu32, x->id);
        memctl_table_cell(t, "%" PRIu32, x->pid);
        memctl_table_cell(t, "%" PRIu32, x->uid);
        memctl_table_cell(t, "%" PRIu32, x->gid);
        memctl_table_cell(t, "%s", x->comm[0] ? x->comm : "-");
        memctl_table_cell(t, "%s", x->client_name[0] ? x->client_name : "-");
        cgroup_cell(t, x->cgroup);
        memctl_table_cell(t, "%s", memctl_human_age(age_ns, age, sizeof age));
        memctl_table_cell(t, "%" PRIu64, u.allocations);
        memctl_table_cell(t, "%" PRIu64, x->requests);
        memctl_table_cell(t, "%s", HB(u.bytes));
        per_device_cell(t, s, x->id);
        if (subdevs)
            memctl_table_cell(t, "%s", x->subdev && x->subdev <= s->nsubdevs
                                           ? s->subdevs[x->subdev - 1].name : "-");
        /* From before a daemon restart: holds its memory until reclaimed or released. */
        if (x->orphaned) {
            uint64_t left_ns = x->reclaim_deadline_ns > s->server.now_ns
                                   ? x->reclaim_deadline_ns - s->server.now_ns : 0;
            memctl_table_cell(t, "ORPHANED (released in %s)",
                              memctl_human_age(left_ns, left, sizeof left));
        } else {
            memctl_table_cell(t, "connected");
        }
    }
    memctl_table_print(t, f, "  ");
    memctl_table_free(t);
}

void memctl_processes_table(FILE *f, const memclient_snapshot *s)
{
    memd_report_procs ps;
    if (memd_report_processes(s, &ps) < 0)
        return;
    /* With peaks (memctl status): PEAK after BYTES. */
    size_t fixed_n = s->peaks ? 9 : 8, ncols = fixed_n + s->ndevices;
    const char **head = calloc(ncols, sizeof *head);
    char *align = calloc(ncols + 1, 1);
    char (*devh)[16] = calloc(s->ndevices ? s->ndevices : 1, sizeof *devh);
    memctl_table *t = NULL;
    if (head && align && devh) {
        static const char *const fixed[] = {"PID", "UID", "PROCESS", "CLIENT", "SESSIONS",
                                            "ALLOCS", "BYTES", "PEAK", "SHARED"};
        for (size_t i = 0, j = 0; i < 9; i++)
            if (s->peaks || i != 7)
                head[j++] = fixed[i];
        memcpy(align, "rrllrrrrr", fixed_n);
        for (size_t d = 0; d < s->ndevices; d++) {
            snprintf(devh[d], sizeof devh[d], "DEVICE %" PRIu32, s->devices[d].id);
            head[fixed_n + d] = devh[d];
            align[fixed_n + d] = 'r';
        }
        t = memctl_table_new(ncols, head, align);
    }
    size_t shown = 0;
    for (size_t i = 0; t && i < ps.n; i++) {
        const memd_report_proc *p = &ps.procs[i];
        memctl_table_cell(t, "%" PRIu32, p->pid);
        memctl_table_cell(t, "%" PRIu32, p->uid);
        memctl_table_cell(t, "%s", p->comm[0] ? p->comm : "-");
        memctl_table_cell(t, "%s", p->client[0] ? p->client : "-");
        memctl_table_cell(t, "%" PRIu32, p->sessions);
        memctl_table_cell(t, "%" PRIu64, p->allocations);
        memctl_table_cell(t, "%s", HB(p->bytes));
        if (s->peaks)
            memctl_table_cell(t, "%s", HB(memd_report_proc_peak(s, p->pid, UINT32_MAX)));
        memctl_table_cell(t, "%s", HB(p->shared_bytes));
        for (size_t d = 0; d < s->ndevices; d++)
            memctl_table_cell(t, "%s", HB(memd_report_proc_device_bytes(&ps, p, d)));
        shown++;
    }
    fprintf(f, "processes: %zu\n", shown);
    if (t && shown)
        memctl_table_print(t, f, "  ");
    memctl_table_free(t);
    free(head);
    free(align);
    free(devh);
    memd_report_processes_free(&ps);
}

void memctl_sessions_usage_table(FILE *f, const memclient_snapshot *s)
{
    sessions_part(f, s);
    fputc('\n', f);
    memctl_processes_table(f, s);
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
    memclient_snapshot *s;
    int r = memctl_fetch(g, argv[0], flags, &s);
    if (r)
        return r;
    (as_json ? json : table)(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}

int memctl_cmd_sessions(const memctl_globals *g, int argc, char **argv)
{
    return show(g, argc, argv,
                "connected clients and what they hold, per session and per process (an "
                "admin sees all, others their own)",
                MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_BANKS | MEMCLIENT_DUMP_CGROUPS,
                memctl_sessions_usage_table,
                sessions_json);
}

static void devices_json(FILE *f, const memclient_snapshot *s)
{
    memclient_snapshot v = *s;
    v.nallocs = v.nsessions = v.nblocks = v.nusage = v.nalloc_banks = 0;
    v.usage = NULL;
    memd_report_json(f, &v, false);
}

int memctl_cmd_devices(const memctl_globals *g, int argc, char **argv)
{
    return show(g, argc, argv,
                "devices, their bank groups and regions (sizes per bank), per-bank use where "
                "it differs, and sub-devices",
                MEMCLIENT_DUMP_BANKS, memctl_devices_table, devices_json);
}
