/* memctl metrics: the daemon's state in the Prometheus text exposition format (0.0.4), for
 * node_exporter's textfile collector, or served over HTTP (--listen, memctl_http.c) for a
 * Prometheus that scrapes. Region byte gauges are per bank; device and process gauges
 * count every bank (each HELP says which).
 *
 * One label set per thing, the same in every family: device-related families carry
 * device (and group = dram|sram, region, where they apply); a process is
 * pid, comm, client (the client name its first session gave), cgroup (where that session
 * connected from; doc/cluster.md). memctl's own session, the
 * one taking the scrape, is left out of the counts and process series. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memd/version.h"
#include "memctl_service.h"

/* Where the series go: Prometheus text, or (--json) one document of the same families,
 * {"schema_version":1,"metrics":[{"name","type","help","samples":[{"labels":{},
 * "value"}]}]}, written as the families come. */
typedef struct sink {
    FILE *f;
    bool json;
    int families, samples; /* written so far (JSON separators) */
} sink;

typedef struct label {
    const char *key, *val;
} label;

static void family(sink *k, const char *name, const char *type, const char *help)
{
    if (!k->json) {
        fprintf(k->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
        return;
    }
    fprintf(k->f, "%s{\"name\":\"%s\",\"type\":\"%s\",\"help\":",
            k->families++ ? "]},\n" : "", name, type);
    memd_json_str(k->f, help);
    fputs(",\"samples\":[", k->f);
    k->samples = 0;
}

/* One sample of the family just begun; val is printed with fmt ("%" PRIu64 or "%.6f"). */
static void sample_begin(sink *k, const char *name, const label *l, size_t n)
{
    if (k->json) {
        fputs(k->samples++ ? ",{\"labels\":{" : "{\"labels\":{", k->f);
        for (size_t i = 0; i < n; i++) {
            fprintf(k->f, "%s\"%s\":", i ? "," : "", l[i].key);
            memd_json_str(k->f, l[i].val);
        }
        fputs("},\"value\":", k->f);
        return;
    }
    fputs(name, k->f);
    for (size_t i = 0; i < n; i++) {
        fprintf(k->f, "%s%s=", i ? "," : "{", l[i].key);
        memctl_prom_label(k->f, l[i].val);
    }
    if (n)
        fputc('}', k->f);
    fputc(' ', k->f);
}

static void sample_end(sink *k)
{
    fputs(k->json ? "}" : "\n", k->f);
}

static void sample(sink *k, const char *name, const label *l, size_t n, uint64_t v)
{
    sample_begin(k, name, l, n);
    fprintf(k->f, "%" PRIu64, v);
    sample_end(k);
}

static void sample_real(sink *k, const char *name, const label *l, size_t n, double v,
                        int decimals)
{
    sample_begin(k, name, l, n);
    fprintf(k->f, "%.*f", decimals, v);
    sample_end(k);
}

static void counter(sink *k, const char *name, const char *help, uint64_t v)
{
    family(k, name, "counter", help);
    sample(k, name, NULL, 0, v);
}

static void gauge(sink *k, const char *name, const char *help, uint64_t v)
{
    family(k, name, "gauge", help);
    sample(k, name, NULL, 0, v);
}

/* A number as a label value, in a buffer that lives for the statement. */
#define NUM(v) num_label((v), (char[24]){0})
static const char *num_label(uint64_t v, char *buf)
{
    snprintf(buf, 24, "%" PRIu64, v);
    return buf;
}

static void group_sample(sink *k, const char *name, const memclient_group *g, uint64_t v)
{
    label l[] = {{"device", NUM(g->device)}, {"group", memclient_kind_name(g->kind)}};
    sample(k, name, l, 2, v);
}

/* A process's first session (its client name and cgroup label the process). */
static const memclient_session_rec *session_of(const memclient_snapshot *s, uint32_t pid)
{
    static const memclient_session_rec none;
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].pid == pid)
            return &s->sessions[i];
    return &none;
}

/* One sample of a per-process family: the process labelled as its first session, on device
 * index d. */
static void process_sample(sink *k, const char *name, const memclient_snapshot *s,
                           const memd_report_proc *p, size_t d, uint64_t v)
{
    const memclient_session_rec *x = session_of(s, p->pid);
    label l[] = {{"pid", NUM(p->pid)}, {"comm", p->comm}, {"client", x->client_name},
                 {"cgroup", x->cgroup}, {"uid", NUM(p->uid)}, {"device", NUM(s->devices[d].id)}};
    sample(k, name, l, 6, v);
}

/* memctl's own sessions (this process's: the scrape's connection). */
static uint64_t own_sessions(const memclient_snapshot *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->nsessions; i++)
        n += s->sessions[i].pid == (uint32_t)getpid();
    return n;
}

/* One gauge family over the bank groups or the regions: its name, help and which value
 * (a group_metric or a region_metric). */
typedef struct metric_family {
    const char *name, *help;
    int m;
} metric_family;

typedef enum { G_BANKS, G_BANK_SIZE, G_CLIENTS } group_metric;

static const metric_family group_families[] = {
    {"memd_bank_group_banks", "Banks in the bank group.", G_BANKS},
    {"memd_bank_group_bank_size_bytes", "Size of each bank (per bank).", G_BANK_SIZE},
    {"memd_bank_group_clients", "Sessions holding memory in the bank group.", G_CLIENTS},
};

static void group_family(sink *k, const memclient_snapshot *s, const metric_family *fam)
{
    const char *name = fam->name;
    group_metric m = (group_metric)fam->m;
    family(k, name, "gauge", fam->help);
    for (size_t i = 0; i < s->ngroups; i++) {
        const memclient_group *g = &s->groups[i];
        group_sample(k, name, g, m == G_BANKS ? g->banks : m == G_BANK_SIZE ? g->bank_size
                                                                             : g->clients);
    }
}

typedef enum { R_SIZE, R_ALLOCATED, R_FREE, R_LARGEST, R_FREE_BLOCKS, R_ALLOCS, R_FRAG, R_PEAK } region_metric;

static const metric_family region_families[] = {
    {"memd_region_size_bytes", "Region size per bank.", R_SIZE},
    {"memd_region_allocated_bytes", "Allocated bytes per bank.", R_ALLOCATED},
    {"memd_region_free_bytes", "Free bytes per bank.", R_FREE},
    {"memd_region_largest_free_bytes", "Largest free block per bank.", R_LARGEST},
    {"memd_region_free_blocks", "Free blocks in the region (in one bank).", R_FREE_BLOCKS},
    {"memd_region_allocations", "Live allocations in the region.", R_ALLOCS},
    {"memd_region_fragmentation_ratio",
     "1 - largest free block / free bytes (0 when nothing is free).", R_FRAG},
    {"memd_region_peak_bytes",
     "The most bytes allocated in the region since memd started or the last peaks reset, "
     "summed over its banks (memd_region_allocated_bytes is per bank).", R_PEAK},
};

static void region_family(sink *k, const memclient_snapshot *s, const metric_family *fam)
{
    const char *name = fam->name;
    region_metric m = (region_metric)fam->m;
    family(k, name, "gauge", fam->help);
    for (size_t i = 0; i < s->nregions; i++) {
        const memclient_region *r = &s->regions[i];
        if (m != R_SIZE && !r->allocatable)
            continue;
        label l[] = {{"device", NUM(r->device)}, {"group", memclient_kind_name(r->kind)},
                     {"region", r->name}};
        if (m == R_FRAG) {
            sample_real(k, name, l, 3, memd_report_fragmentation(&r->stats) / 100.0, 6);
            continue;
        }
        if (m == R_PEAK) {
            const memclient_peak *p = memd_report_peak(s, MEMCLIENT_PEAK_REGION, r->device,
                                                       r->kind, r->region);
            if (p)
                sample(k, name, l, 3, p->peak);
            continue;
        }
        uint64_t v = m == R_SIZE ? r->size
                   : m == R_ALLOCATED ? r->stats.allocated
                   : m == R_FREE ? r->stats.free
                   : m == R_LARGEST ? r->stats.largest_free
                   : m == R_FREE_BLOCKS ? r->stats.free_blocks
                   : r->stats.allocations;
        sample(k, name, l, 3, v);
    }
}

/* Client pools per process (pid) and device: bytes leased as pools, bytes their owners
 * reported sub-allocated in them, and those sub-allocations (as of each pool's last
 * report). */
typedef struct pool_proc {
    uint32_t pid, device;
    const char *comm;
    uint64_t v[4];
} pool_proc;

static void pool_families(sink *k, const memclient_snapshot *s)
{
    static const struct {
        const char *name, *help;
    } fam[4] = {
        {"memd_pool_bytes", "Bytes leased as client pools, per bank, per process and device."},
        {"memd_pooled_bytes", "Bytes sub-allocated in client pools, per bank, per process and "
                              "device (as of the pools' last reports)."},
        {"memd_pool_suballocations", "Live sub-allocations in client pools, per process and "
                                     "device."},
        {"memd_pool_peak_bytes", "The most bytes sub-allocated in each client pool since memd "
                                 "started or the last peaks reset, per bank, summed over a "
                                 "process's pools on a device."},
    };
    pool_proc *procs = calloc(s->npools ? s->npools : 1, sizeof *procs);
    size_t n = 0;
    /* Allocations and pools both come in handle order: one merge walk pairs them. */
    for (size_t i = 0, x = 0; procs && i < s->npools; i++) {
        while (x < s->nallocs && s->allocs[x].buf.handle < s->pools[i].handle)
            x++;
        if (x == s->nallocs || s->allocs[x].buf.handle != s->pools[i].handle)
            continue;
        const memclient_alloc_info *a = &s->allocs[x];
        size_t j = 0;
        while (j < n && (procs[j].pid != a->pid || procs[j].device != a->device))
            j++;
        if (j == n)
            procs[n++] = (pool_proc){.pid = a->pid, .device = a->device, .comm = a->comm};
        procs[j].v[0] += a->buf.size_per_bank;
        procs[j].v[1] += s->pools[i].pooled_bytes;
        procs[j].v[2] += s->pools[i].suballocs;
        for (size_t q = 0; q < s->npeaks; q++)
            if (s->peaks[q].what == MEMCLIENT_PEAK_POOL && s->peaks[q].pool == a->buf.handle)
                procs[j].v[3] += s->peaks[q].peak;
    }
    for (int m = 0; m < 4; m++) {
        family(k, fam[m].name, "gauge", fam[m].help);
        for (size_t j = 0; j < n; j++) {
            const memclient_session_rec *x = session_of(s, procs[j].pid);
            label l[] = {{"pid", NUM(procs[j].pid)}, {"comm", procs[j].comm},
                         {"client", x->client_name}, {"cgroup", x->cgroup},
                         {"device", NUM(procs[j].device)}};
            sample(k, fam[m].name, l, 5, procs[j].v[m]);
        }
    }
    free(procs);
}

/* Per process series: the MEMCTL_METRICS_PROCS largest holders get their own series
 * (pid, comm, client, uid, device labels), the rest are summed into memd_process_other_bytes,
 * so a host with thousands of short-lived clients cannot blow up a scraper's series
 * count. */
#define MEMCTL_METRICS_PROCS 20

static void process_families(sink *k, const memclient_snapshot *s)
{
    memd_report_procs ps;
    if (memd_report_processes(s, &ps) < 0)
        return;
    family(k, "memd_device_used_bytes", "gauge",
           "Bytes allocated in the bank group, summed over its banks.");
    for (size_t i = 0; i < s->ngroups; i++) {
        memd_report_group_bytes u;
        memd_report_group_use(s, &s->groups[i], &u);
        group_sample(k, "memd_device_used_bytes", &s->groups[i], u.used);
    }
    family(k, "memd_device_peak_bytes", "gauge",
           "The most bytes allocated in the bank group since memd started or the last peaks "
           "reset, summed over its banks.");
    for (size_t i = 0; i < s->ngroups; i++) {
        const memclient_group *g = &s->groups[i];
        const memclient_peak *p = memd_report_peak(s, MEMCLIENT_PEAK_GROUP, g->device, g->kind, 0);
        if (p)
            group_sample(k, "memd_device_peak_bytes", g, p->peak);
    }
    family(k, "memd_device_total_bytes", "gauge",
           "Allocatable bytes of the bank group, summed over its banks.");
    for (size_t i = 0; i < s->ngroups; i++)
        group_sample(k, "memd_device_total_bytes", &s->groups[i],
                     s->groups[i].stats.total * s->groups[i].banks);
    /* memctl's own process (the scrape) is no holder: left out. */
    size_t own = ps.n;
    for (size_t i = 0; i < ps.n; i++)
        if (ps.procs[i].pid == (uint32_t)getpid())
            own = i;
    gauge(k, "memd_processes", "Processes with a session (visible to this user; not the "
          "scraper).", ps.n - (own < ps.n));
    family(k, "memd_process_bytes", "gauge",
           "Bytes a process holds on a device, every bank counted (the "
           "20 largest holders; the rest in memd_process_other_bytes).");
    size_t shown = ps.n < MEMCTL_METRICS_PROCS ? ps.n : MEMCTL_METRICS_PROCS;
    for (size_t i = 0; i < shown; i++) {
        const memd_report_proc *p = &ps.procs[i];
        if (i == own)
            continue;
        for (size_t d = 0; d < s->ndevices; d++) {
            uint64_t b = memd_report_proc_device_bytes(&ps, p, d);
            if (!b && p->bytes)
                continue;
            process_sample(k, "memd_process_bytes", s, p, d, b);
            if (!p->bytes)
                break; /* holds nothing: one series at 0 for its first device */
        }
    }
    family(k, "memd_process_other_bytes", "gauge",
           "Bytes held on a device by the processes beyond the 20 largest.");
    for (size_t d = 0; d < s->ndevices; d++) {
        uint64_t rest = 0;
        for (size_t i = shown; i < ps.n; i++)
            rest += memd_report_proc_device_bytes(&ps, &ps.procs[i], d);
        label l[] = {{"device", NUM(s->devices[d].id)}};
        sample(k, "memd_process_other_bytes", l, 1, rest);
    }
    family(k, "memd_process_peak_bytes", "gauge",
           "The most bytes a process has held on a device since memd started or the last peaks "
           "reset, every bank counted (its sessions' peaks summed; the 20 largest holders).");
    for (size_t i = 0; i < shown; i++) {
        const memd_report_proc *p = &ps.procs[i];
        for (size_t d = 0; i != own && d < s->ndevices; d++) {
            uint64_t b = memd_report_proc_peak(s, p->pid, s->devices[d].id);
            if (!b)
                continue;
            process_sample(k, "memd_process_peak_bytes", s, p, d, b);
        }
    }
    memd_report_processes_free(&ps);
}

/* Bytes held per cgroup, device and bank group (every bank counted): the sessions'
 * usage records summed by their session's cgroup. Sessions are few (max_sessions):
 * lookups scan. */
typedef struct cgroup_use {
    const char *cgroup;
    uint32_t device;
    memd_kind kind;
    uint64_t bytes;
} cgroup_use;

static void cgroup_family(sink *k, const memclient_snapshot *s)
{
    family(k, "memd_cgroup_bytes", "gauge",
           "Bytes the processes of a cgroup hold on a device's bank group, summed over its "
           "banks.");
    cgroup_use *use = calloc(s->nusage ? s->nusage : 1, sizeof *use);
    size_t n = 0;
    for (size_t i = 0; use && i < s->nusage; i++) {
        const memclient_session_use *u = &s->usage[i];
        const char *cg = NULL;
        for (size_t j = 0; j < s->nsessions && !cg; j++)
            if (s->sessions[j].id == u->session_id)
                cg = s->sessions[j].cgroup;
        if (!cg)
            continue;
        size_t e = 0;
        while (e < n && (use[e].device != u->device || use[e].kind != u->kind ||
                         strcmp(use[e].cgroup, cg)))
            e++;
        if (e == n)
            use[n++] = (cgroup_use){.cgroup = cg, .device = u->device, .kind = u->kind};
        use[e].bytes += u->bytes;
    }
    for (size_t e = 0; e < n; e++) {
        label l[] = {{"device", NUM(use[e].device)}, {"group", memclient_kind_name(use[e].kind)},
                     {"cgroup", use[e].cgroup}};
        sample(k, "memd_cgroup_bytes", l, 3, use[e].bytes);
    }
    free(use);
}

/* Refusals per device and reason; a daemon that sends no FAILURES records gives the total
 * only. */
static void failure_family(sink *k, const memclient_snapshot *s)
{
    family(k, "memd_allocation_failures_total", "counter",
           "Refused allocation requests since start, per device and reason: no_room (no free "
           "range fits), quota (per-uid quota or sub-device budget), limit (a cgroup limit), "
           "too_large, other.");
    if (s->nfailures == 0) {
        sample(k, "memd_allocation_failures_total", NULL, 0, s->server.alloc_failures);
        return;
    }
    for (size_t i = 0; i < s->nfailures; i++) {
        const memclient_failures *f = &s->failures[i];
        const struct {
            const char *reason;
            uint64_t n;
        } by[] = {{"no_room", f->no_room}, {"quota", f->quota}, {"limit", f->limit},
                  {"too_large", f->too_large}, {"other", f->other}};
        for (size_t r = 0; r < sizeof by / sizeof by[0]; r++) {
            label l[] = {{"device", NUM(f->device)}, {"reason", by[r].reason}};
            sample(k, "memd_allocation_failures_total", l, 2, by[r].n);
        }
    }
}

/* The cgroup limits: the kernel dmem controller's dmem.max, dmem.current, dmem.peak. */
static void limit_families(sink *k, const memclient_snapshot *s)
{
    static const struct {
        const char *name, *help;
    } fams[] = {
        {"memd_cgroup_limit_bytes", "A cgroup's device memory limit on a bank group (its "
                                    "dmem.max), summed over the banks."},
        {"memd_cgroup_usage_bytes", "Bytes charged to a limited cgroup and its descendants "
                                    "(dmem.current), summed over the banks."},
        {"memd_cgroup_peak_bytes", "The most a limited cgroup has been charged since its limit "
                                   "was set or memd started (dmem.peak), summed over the banks."},
    };
    for (size_t f = 0; f < 3; f++) {
        family(k, fams[f].name, "gauge", fams[f].help);
        for (size_t i = 0; i < s->nlimits; i++) {
            const memclient_limit *m = &s->limits[i];
            label l[] = {{"device", NUM(m->device)}, {"group", memclient_kind_name(m->kind)},
                         {"cgroup", m->cgroup}};
            sample(k, fams[f].name, l, 3, f == 0 ? m->max : f == 1 ? m->current : m->peak);
        }
    }
}

static void metrics(FILE *f, const memclient_snapshot *s, bool json)
{
    sink sk = {.f = f, .json = json}, *k = &sk;
    if (json)
        fputs("{\"schema_version\":1,\"metrics\":[\n", f);
    const memclient_server *sv = &s->server;
    family(k, "memd_build_info", "gauge",
           "The daemon's version and the exporter's (value is always 1).");
    sample(k, "memd_build_info",
           (label[]){{"version", sv->version}, {"exporter_version", MEMD_VERSION_STRING}},
           2, 1);
    family(k, "memd_start_time_seconds", "gauge", "When the daemon started, seconds since the epoch.");
    sample_real(k, "memd_start_time_seconds", NULL, 0, (double)sv->start_ns / 1e9, 3);
    gauge(k, "memd_sessions", "Connected client sessions (not the scraper's).",
          sv->sessions - own_sessions(s));
    counter(k, "memd_requests_total", "Requests served since start.", sv->requests);
    counter(k, "memd_allocations_total", "Successful allocations since start.", sv->allocs);
    counter(k, "memd_frees_total", "Frees since start.", sv->frees);
    failure_family(k, s);
    counter(k, "memd_protocol_errors_total", "Malformed frames since start.", sv->protocol_errors);
    counter(k, "memd_sessions_opened_total", "Sessions opened since start.", sv->sessions_total);
    counter(k, "memd_received_bytes_total", "Bytes received from clients since start.", sv->bytes_in);
    counter(k, "memd_sent_bytes_total", "Bytes sent to clients since start.", sv->bytes_out);

    family(k, "memd_device_info", "gauge", "Devices served (value is always 1).");
    for (size_t i = 0; i < s->ndevices; i++) {
        label l[] = {{"device", NUM(s->devices[i].id)}, {"name", s->devices[i].name},
                     {"arch", s->devices[i].arch}};
        sample(k, "memd_device_info", l, 3, 1);
    }
    for (size_t i = 0; i < sizeof group_families / sizeof *group_families; i++)
        group_family(k, s, &group_families[i]);
    for (size_t i = 0; i < sizeof region_families / sizeof *region_families; i++)
        region_family(k, s, &region_families[i]);
    pool_families(k, s);
    process_families(k, s);
    cgroup_family(k, s);
    limit_families(k, s);
    if (json)
        fputs("]}]}\n", f);
}

void memctl_metrics_write(FILE *f, const memclient_snapshot *s)
{
    metrics(f, s, false);
}

int memctl_cmd_metrics(const memctl_globals *g, int argc, char **argv)
{
    const char *listen = NULL;
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) {
            json = true;
        } else if (!strcmp(argv[i], "--listen")) {
            if (!(listen = memctl_optarg("metrics", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: memctl metrics [--json | --listen ADDR:PORT]\n"
                   "  the daemon's state in Prometheus text format on stdout, or served at\n"
                   "  http://ADDR:PORT/metrics until interrupted (--listen 127.0.0.1:9109,\n"
                   "  [::1]:9109, :9109 for every address; port 0 picks a free one;\n"
                   "  --listen systemd: the socket memd-metrics.socket passes)\n"
                   "  --json   the same families and samples as one JSON document:\n"
                   "           {\"schema_version\":1,\"metrics\":[{\"name\",\"type\",\"help\",\n"
                   "           \"samples\":[{\"labels\":{...},\"value\":N}]}]}\n");
            return 0;
        } else {
            fprintf(stderr, "memctl metrics: unexpected argument '%s' (usage: memctl metrics "
                            "[--json | --listen ADDR:PORT])\n", argv[i]);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (json && listen) {
        fprintf(stderr, "memctl metrics: --json and --listen exclude each other (the HTTP "
                        "endpoint serves Prometheus text)\n");
        return MEMCTL_EXIT_USAGE;
    }
    if (listen)
        return memctl_metrics_serve(g, listen);
    memclient_snapshot *s;
    int r = memctl_fetch(g, "metrics", MEMCTL_METRICS_DUMP, &s);
    if (r)
        return r;
    metrics(stdout, s, json);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}
