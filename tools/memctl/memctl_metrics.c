/* memctl metrics: the daemon's state in the Prometheus text exposition format (0.0.4), for
 * node_exporter's textfile collector, or served over HTTP (--listen, memctl_http.c) for a
 * Prometheus that scrapes. Region byte gauges are per bank; device and process gauges
 * count every bank. */
#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
    family(f, name, "counter", help);
    fprintf(f, "%s %" PRIu64 "\n", name, v);
}

static void group_labels(FILE *f, const memclient_group *g)
{
    fprintf(f, "{device=\"%" PRIu32 "\",kind=\"%s\"}", g->device, memclient_kind_name(g->kind));
}

static void region_labels(FILE *f, const memclient_region *r)
{
    fprintf(f, "{device=\"%" PRIu32 "\",kind=\"%s\",region=", r->device,
            memclient_kind_name(r->kind));
    memctl_prom_label(f, r->name);
    fputc('}', f);
}

typedef enum { G_BANKS, G_BANK_SIZE, G_CLIENTS } group_metric;

static void group_family(FILE *f, const memclient_snapshot *s, const char *name,
                         const char *help, group_metric m)
{
    family(f, name, "gauge", help);
    for (size_t i = 0; i < s->ngroups; i++) {
        const memclient_group *g = &s->groups[i];
        uint64_t v = m == G_BANKS ? g->banks : m == G_BANK_SIZE ? g->bank_size : g->clients;
        fputs(name, f);
        group_labels(f, g);
        fprintf(f, " %" PRIu64 "\n", v);
    }
}

typedef enum { R_SIZE, R_ALLOCATED, R_FREE, R_LARGEST, R_FREE_BLOCKS, R_ALLOCS, R_FRAG } region_metric;

static void region_family(FILE *f, const memclient_snapshot *s, const char *name,
                          const char *help, region_metric m)
{
    family(f, name, "gauge", help);
    for (size_t i = 0; i < s->nregions; i++) {
        const memclient_region *r = &s->regions[i];
        if (m != R_SIZE && !r->allocatable)
            continue;
        fputs(name, f);
        region_labels(f, r);
        if (m == R_FRAG) {
            fprintf(f, " %.6f\n", memd_report_fragmentation(&r->stats) / 100.0);
            continue;
        }
        uint64_t v = m == R_SIZE ? r->size
                   : m == R_ALLOCATED ? r->stats.allocated
                   : m == R_FREE ? r->stats.free
                   : m == R_LARGEST ? r->stats.largest_free
                   : m == R_FREE_BLOCKS ? r->stats.free_blocks
                   : r->stats.allocations;
        fprintf(f, " %" PRIu64 "\n", v);
    }
}

/* Client pools per process (pid): bytes leased as pools, bytes their owners reported
 * sub-allocated in them, and those sub-allocations (as of each pool's last report). */
typedef struct pool_proc {
    uint32_t pid;
    const char *comm;
    uint64_t v[3];
} pool_proc;

static void pool_families(FILE *f, const memclient_snapshot *s)
{
    static const struct {
        const char *name, *help;
    } fam[3] = {
        {"memd_pool_bytes", "Bytes per bank leased as client pools, per process."},
        {"memd_pooled_bytes", "Bytes per bank sub-allocated in client pools, per process "
                              "(as of the pools' last reports)."},
        {"memd_pool_suballocations", "Live sub-allocations in client pools, per process."},
    };
    pool_proc *procs = calloc(s->npools ? s->npools : 1, sizeof *procs);
    size_t n = 0;
    /* Allocations and pools both come in handle order: one merge walk pairs them. */
    for (size_t i = 0, k = 0; procs && i < s->npools; i++) {
        while (k < s->nallocs && s->allocs[k].buf.handle < s->pools[i].handle)
            k++;
        if (k == s->nallocs || s->allocs[k].buf.handle != s->pools[i].handle)
            continue;
        const memclient_alloc_info *a = &s->allocs[k];
        size_t j = 0;
        while (j < n && procs[j].pid != a->pid)
            j++;
        if (j == n)
            procs[n++] = (pool_proc){.pid = a->pid, .comm = a->comm};
        procs[j].v[0] += a->buf.size_per_bank;
        procs[j].v[1] += s->pools[i].pooled_bytes;
        procs[j].v[2] += s->pools[i].suballocs;
    }
    for (int m = 0; m < 3; m++) {
        family(f, fam[m].name, "gauge", fam[m].help);
        for (size_t j = 0; j < n; j++) {
            fprintf(f, "%s{pid=\"%" PRIu32 "\",process=", fam[m].name, procs[j].pid);
            memctl_prom_label(f, procs[j].comm);
            fprintf(f, "} %" PRIu64 "\n", procs[j].v[m]);
        }
    }
    free(procs);
}

/* Per process series: the MEMCTL_METRICS_PROCS largest holders get their own series
 * (pid, process, uid, device labels), the rest are summed into memd_process_other_bytes,
 * so a host with thousands of short-lived clients cannot blow up a scraper's series
 * count. */
#define MEMCTL_METRICS_PROCS 20

static void process_families(FILE *f, const memclient_snapshot *s)
{
    memd_report_procs ps;
    if (memd_report_processes(s, &ps) < 0)
        return;
    family(f, "memd_device_used_bytes", "gauge",
           "Bytes allocated in the bank group, summed over its banks.");
    for (size_t i = 0; i < s->ngroups; i++) {
        const memclient_group *g = &s->groups[i];
        fputs("memd_device_used_bytes", f);
        group_labels(f, g);
        fprintf(f, " %" PRIu64 "\n", g->stats.allocated * g->banks);
    }
    family(f, "memd_device_total_bytes", "gauge",
           "Allocatable bytes of the bank group, summed over its banks.");
    for (size_t i = 0; i < s->ngroups; i++) {
        const memclient_group *g = &s->groups[i];
        fputs("memd_device_total_bytes", f);
        group_labels(f, g);
        fprintf(f, " %" PRIu64 "\n", g->stats.total * g->banks);
    }
    family(f, "memd_processes", "gauge", "Processes with a session (visible to this user).");
    fprintf(f, "memd_processes %zu\n", ps.n);
    family(f, "memd_process_bytes", "gauge",
           "Bytes a process holds on a device, every bank counted (the "
           "20 largest holders; the rest in memd_process_other_bytes).");
    size_t shown = ps.n < MEMCTL_METRICS_PROCS ? ps.n : MEMCTL_METRICS_PROCS;
    for (size_t i = 0; i < shown; i++) {
        const memd_report_proc *p = &ps.procs[i];
        for (size_t d = 0; d < s->ndevices; d++) {
            uint64_t b = memd_report_proc_device_bytes(&ps, p, d);
            if (!b && p->bytes)
                continue;
            fprintf(f, "memd_process_bytes{pid=\"%" PRIu32 "\",comm=", p->pid);
            memctl_prom_label(f, p->comm);
            fprintf(f, ",uid=\"%" PRIu32 "\",device=\"%" PRIu32 "\"} %" PRIu64 "\n", p->uid,
                    s->devices[d].id, b);
            if (!p->bytes)
                break; /* holds nothing: one series at 0 for its first device */
        }
    }
    family(f, "memd_process_other_bytes", "gauge",
           "Bytes held on a device by the processes beyond the 20 largest.");
    for (size_t d = 0; d < s->ndevices; d++) {
        uint64_t rest = 0;
        for (size_t i = shown; i < ps.n; i++)
            rest += memd_report_proc_device_bytes(&ps, &ps.procs[i], d);
        fprintf(f, "memd_process_other_bytes{device=\"%" PRIu32 "\"} %" PRIu64 "\n",
                s->devices[d].id, rest);
    }
    memd_report_processes_free(&ps);
}

static void metrics(FILE *f, const memclient_snapshot *s)
{
    const memclient_server *sv = &s->server;
    family(f, "memd_info", "gauge", "memd daemon version (value is always 1).");
    fputs("memd_info{version=", f);
    memctl_prom_label(f, sv->version);
    fputs("} 1\n", f);
    family(f, "memd_start_time_seconds", "gauge", "When the daemon started, seconds since the epoch.");
    fprintf(f, "memd_start_time_seconds %.3f\n", (double)sv->start_ns / 1e9);
    family(f, "memd_sessions", "gauge", "Connected client sessions.");
    fprintf(f, "memd_sessions %" PRIu32 "\n", sv->sessions);
    counter(f, "memd_requests_total", "Requests served since start.", sv->requests);
    counter(f, "memd_allocations_total", "Successful allocations since start.", sv->allocs);
    counter(f, "memd_frees_total", "Frees since start.", sv->frees);
    counter(f, "memd_allocation_failures_total", "Failed allocation requests since start.",
            sv->alloc_failures);
    counter(f, "memd_protocol_errors_total", "Malformed frames since start.", sv->protocol_errors);
    counter(f, "memd_sessions_opened_total", "Sessions opened since start.", sv->sessions_total);
    counter(f, "memd_received_bytes_total", "Bytes received from clients since start.", sv->bytes_in);
    counter(f, "memd_sent_bytes_total", "Bytes sent to clients since start.", sv->bytes_out);

    family(f, "memd_device_info", "gauge", "Devices served (value is always 1).");
    for (size_t i = 0; i < s->ndevices; i++) {
        fprintf(f, "memd_device_info{device=\"%" PRIu32 "\",name=", s->devices[i].id);
        memctl_prom_label(f, s->devices[i].name);
        fputs(",arch=", f);
        memctl_prom_label(f, s->devices[i].arch);
        fputs("} 1\n", f);
    }
    group_family(f, s, "memd_bank_group_banks", "Banks in the bank group.", G_BANKS);
    group_family(f, s, "memd_bank_group_bank_size_bytes", "Size of each bank.", G_BANK_SIZE);
    group_family(f, s, "memd_bank_group_clients", "Sessions holding memory in the bank group.",
                 G_CLIENTS);
    region_family(f, s, "memd_region_size_bytes", "Region size per bank.", R_SIZE);
    region_family(f, s, "memd_region_allocated_bytes", "Allocated bytes per bank.", R_ALLOCATED);
    region_family(f, s, "memd_region_free_bytes", "Free bytes per bank.", R_FREE);
    region_family(f, s, "memd_region_largest_free_bytes", "Largest free block per bank.",
                  R_LARGEST);
    region_family(f, s, "memd_region_free_blocks", "Free blocks in the region.", R_FREE_BLOCKS);
    region_family(f, s, "memd_region_allocations", "Live allocations in the region.", R_ALLOCS);
    region_family(f, s, "memd_region_fragmentation_ratio",
                  "1 - largest free block / free bytes (0 when nothing is free).", R_FRAG);
    pool_families(f, s);
    process_families(f, s);
}

void memctl_metrics_write(FILE *f, const memclient_snapshot *s)
{
    metrics(f, s);
}

int memctl_cmd_metrics(const memctl_globals *g, int argc, char **argv)
{
    const char *listen = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--listen")) {
            if (!(listen = memctl_optarg("metrics", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: memctl metrics [--listen ADDR:PORT]\n"
                   "  the daemon's state in Prometheus text format on stdout, or served at\n"
                   "  http://ADDR:PORT/metrics until interrupted (--listen 127.0.0.1:9109,\n"
                   "  [::1]:9109, :9109 for every address; port 0 picks a free one)\n");
            return 0;
        } else {
            fprintf(stderr, "memctl metrics: unexpected argument '%s' (usage: memctl metrics "
                            "[--listen ADDR:PORT])\n", argv[i]);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (listen)
        return memctl_metrics_serve(g, listen);
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    memclient_snapshot *s;
    r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_POOLS, &s);
    memclient_disconnect(c);
    if (r < 0)
        return memctl_fail(NULL, "metrics", "cannot read the daemon's state", r);
    metrics(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}
