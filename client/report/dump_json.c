/* The JSON dump (memctl dump --json, memd.Client.dump): one document, "schema_version": 1.
 * Sizes are exact bytes per bank; names are escaped (they come from other processes).
 * Keys only ever get added. Values that may pass 2^53 (handles, nanosecond times), which
 * readers that parse numbers as doubles (jq, JavaScript) round, also come as strings in
 * a twin key with the suffix "_str". */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "cgroup_path.h"
#include "report.h"

static void stats_fields(FILE *f, const memclient_stats *st, double frag, const char *ind)
{
    fprintf(f,
            "%s\"total\": %" PRIu64 ",\n%s\"allocated\": %" PRIu64 ",\n%s\"free\": %" PRIu64
            ",\n%s\"largest_free\": %" PRIu64 ",\n%s\"largest_free_address\": %" PRIu64
            ",\n%s\"free_blocks\": %" PRIu64 ",\n%s\"allocations\": %" PRIu64
            ",\n%s\"fragmentation_pct\": %.2f",
            ind, st->total, ind, st->allocated, ind, st->free, ind, st->largest_free, ind,
            st->largest_free_addr, ind, st->free_blocks, ind, st->allocations, ind, frag);
}

static void blocks_json(FILE *f, const memclient_snapshot *s, const memclient_region *reg)
{
    const char *ind = "                ";
    fprintf(f, ",\n              \"blocks\": [");
    bool first = true;
    for (size_t i = 0; i < s->nblocks; i++) {
        const memclient_block *b = &s->blocks[i];
        if (b->device != reg->device || b->kind != reg->kind || b->region != reg->region)
            continue;
        fprintf(f, "%s\n%s{\"address\": %" PRIu64 ", \"size\": %" PRIu64 ", \"allocated\": %s}",
                first ? "" : ",", ind, b->address, b->size, b->allocated ? "true" : "false");
        first = false;
    }
    fprintf(f, "%s]", first ? "" : "\n              ");
}

static void core_json(FILE *f, uint16_t lx, uint16_t ly, uint16_t nx, uint16_t ny)
{
    if (lx == MEMD_NO_CORE)
        fprintf(f, "\"core\": null");
    else
        fprintf(f, "\"core\": {\"logical\": [%u, %u], \"noc\": [%u, %u]}", lx, ly, nx, ny);
}

/* Per-bank use of a region (dumps with MEMCLIENT_DUMP_BANKS): every bank's own map. */
static void banks_json(FILE *f, const memclient_snapshot *s, const memclient_region *reg)
{
    bool first = true;
    for (size_t i = 0; i < s->nbank_use; i++) {
        const memclient_bank_use *b = &s->bank_use[i];
        if (b->device != reg->device || b->kind != reg->kind || b->region != reg->region)
            continue;
        fprintf(f, "%s\n                {\"bank\": %" PRIu32 ", ", first ? ",\n              \"banks\": [" : ",",
                b->bank);
        core_json(f, b->logical_x, b->logical_y, b->noc_x, b->noc_y);
        fprintf(f, ", \"allocated\": %" PRIu64 ", \"free\": %" PRIu64 ", \"largest_free\": %" PRIu64
                   ", \"free_blocks\": %" PRIu64 ", \"allocations\": %" PRIu64
                   ", \"fragmentation_pct\": %.2f}",
                b->stats.allocated, b->stats.free, b->stats.largest_free, b->stats.free_blocks,
                b->stats.allocations, memd_report_fragmentation(&b->stats));
        first = false;
    }
    if (!first)
        fprintf(f, "\n              ]");
}


/* The snapshot's ALLOC_BANK entries come in handle order (the daemon writes them after
 * their ALLOC record, allocations by handle): [*first, *first + n) are handle's. */
static size_t alloc_banks_of(const memclient_snapshot *s, uint64_t handle, size_t *first)
{
    size_t lo = 0, hi = s->nalloc_banks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->alloc_banks[mid].handle < handle)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t n = 0;
    while (lo + n < s->nalloc_banks && s->alloc_banks[lo + n].handle == handle)
        n++;
    *first = lo;
    return n;
}

/* "bank_mode", "bank_ids" and, for a bank set, "bank_addresses" of an allocation. */
static void alloc_banks_json(FILE *f, const memclient_snapshot *s, const memclient_alloc_info *a)
{
    fprintf(f, ",\n      \"bank_mode\": \"%s\",\n      \"bank_ids\": [",
            memclient_bank_mode_name(a->buf.bank_mode));
    if (a->buf.bank_mode == MEMD_BANKS_ALL) {
        uint32_t banks = 0;
        for (size_t g = 0; g < s->ngroups; g++)
            if (s->groups[g].device == a->device && s->groups[g].kind == a->buf.kind)
                banks = s->groups[g].banks;
        for (uint32_t i = 0; i < banks; i++)
            fprintf(f, "%s%" PRIu32, i ? ", " : "", i);
        fprintf(f, "]");
        return;
    }
    size_t first, n = alloc_banks_of(s, a->buf.handle, &first);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu32, i ? ", " : "", s->alloc_banks[first + i].bank.bank);
    fprintf(f, "],\n      \"bank_addresses\": [");
    for (size_t i = 0; i < n; i++) {
        const memclient_bank *b = &s->alloc_banks[first + i].bank;
        fprintf(f, "%s\n        {\"bank\": %" PRIu32 ", \"address\": %" PRIu64
                   ", \"absolute\": %" PRIu64 ", ",
                i ? "," : "", b->bank, b->address, b->absolute);
        core_json(f, b->logical_x, b->logical_y, b->noc_x, b->noc_y);
        fputc('}', f);
    }
    fprintf(f, "%s]", n ? "\n      " : "");
}

static void region_json(FILE *f, const memclient_snapshot *s, const memclient_region *reg,
                        bool detailed)
{
    memd_json_member(f, "            {\n              \"name\": ", reg->name);
    fprintf(f, ",\n              \"index\": %" PRIu32 ",\n              \"allocatable\": %s,\n"
               "              \"base\": %" PRIu64 ",\n              \"size\": %" PRIu64 ",\n",
            reg->region, reg->allocatable ? "true" : "false", reg->base, reg->size);
    stats_fields(f, &reg->stats, memd_report_fragmentation(&reg->stats), "              ");
    banks_json(f, s, reg);
    if (detailed)
        blocks_json(f, s, reg);
    fprintf(f, "\n            }");
}

static void group_json(FILE *f, const memclient_snapshot *s, const memclient_group *g,
                       bool detailed)
{
    fprintf(f, "        {\n          \"kind\": \"%s\",\n          \"banks\": %" PRIu32
               ",\n          \"bank_size\": %" PRIu64 ",\n          \"alignment\": %" PRIu64
               ",\n          \"clients\": %" PRIu32 ",\n",
            memclient_kind_name(g->kind), g->banks, g->bank_size, g->alignment, g->clients);
    stats_fields(f, &g->stats, memd_report_group_fragmentation(s, g), "          ");
    fprintf(f, ",\n          \"regions\": [");
    bool first = true;
    for (size_t r = 0; r < s->nregions; r++) {
        const memclient_region *reg = &s->regions[r];
        if (reg->device != g->device || reg->kind != g->kind)
            continue;
        fprintf(f, "%s\n", first ? "" : ",");
        region_json(f, s, reg, detailed);
        first = false;
    }
    fprintf(f, "%s]\n        }", first ? "" : "\n          ");
}

static void alloc_json(FILE *f, const memclient_snapshot *s, const memclient_alloc_info *a)
{
    char rbuf[24];
    uint64_t age_ns = s->server.now_ns > a->created_ns ? s->server.now_ns - a->created_ns : 0;
    fprintf(f, "    {\n      \"handle\": %" PRIu64 ",\n      \"handle_str\": \"%" PRIu64
               "\",\n      \"device\": %" PRIu32 ",\n      \"kind\": \"%s\",\n      \"region\": ",
            a->buf.handle, a->buf.handle, a->device, memclient_kind_name(a->buf.kind));
    memd_json_str(f, memd_report_region_name(s, a->device, a->buf.kind, a->buf.region, rbuf,
                                          sizeof(rbuf)));
    fprintf(f, ",\n      \"region_index\": %" PRIu32 ",\n      \"class\": \"%s\",\n"
               "      \"scope\": \"%s\",\n      \"address\": %" PRIu64
               ",\n      \"size_per_bank\": %" PRIu64 ",\n      \"banks\": %" PRIu32
               ",\n      \"page_size\": %" PRIu64 ",\n      \"pitch\": %" PRIu64
               ",\n      \"refcount\": %" PRIu32 ",\n      \"pid\": %" PRIu32
               ",\n      \"uid\": %" PRIu32 ",\n      \"gid\": %" PRIu32
               ",\n      \"session\": %" PRIu32 ",\n      \"process\": ",
            a->buf.region, memclient_class_name(a->cls), memclient_scope_name(a->scope),
            a->buf.address, a->buf.size_per_bank, a->buf.banks, a->buf.page_size, a->buf.pitch,
            a->buf.refcount, a->pid, a->uid, a->gid, a->session_id);
    memd_json_str(f, a->comm);
    memd_json_member(f, ",\n      \"name\": ", a->name);
    fprintf(f, ",\n      \"pool\": %s,\n      \"created_ns\": %" PRIu64
               ",\n      \"created_ns_str\": \"%" PRIu64 "\",\n      \"age_s\": %.3f",
            a->pool ? "true" : "false", a->created_ns, a->created_ns, (double)age_ns / 1e9);
    alloc_banks_json(f, s, a);
    fprintf(f, "\n    }");
}

static void subdevs_json(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, ",\n  \"sub_devices\": [");
    size_t shown = 0;
    for (size_t i = 0; i < s->nsubdevs; i++) {
        const memclient_subdev_rec *d = &s->subdevs[i];
        if (!memd_report_subdev_shown(s, i))
            continue;
        fprintf(f, "%s\n    {\"name\": ", shown++ ? "," : "");
        memd_json_str(f, d->name);
        fprintf(f, ", \"device\": %" PRIu32 ", \"group\": \"%s\", \"banks\": ", d->device,
                memclient_kind_name(d->kind));
        char *banks = memd_report_subdev_banks(d);
        memd_json_str(f, banks ? banks : d->banks);
        free(banks);
        if (d->bank_ids) { /* the same list, for programs */
            fputs(", \"bank_ids\": [", f);
            for (uint32_t k = 0; k < d->nbanks; k++)
                fprintf(f, "%s%" PRIu32, k ? ", " : "", d->bank_ids[k]);
            fputc(']', f);
        }
        fprintf(f, ", \"nbanks\": %" PRIu32 ", \"budget\": %" PRIu64 ", \"used\": %" PRIu64
                   ", \"allocations\": %" PRIu64 ", \"window\": %" PRIu64
                   ", \"window_start\": %" PRIu64 ", \"window_allocated\": %" PRIu64
                   ", \"sessions\": [",
                d->nbanks, d->budget, d->used, d->allocations, d->window, d->window_start,
                d->window_allocated);
        bool first = true;
        for (size_t k = 0; k < s->nsessions; k++)
            if (s->sessions[k].subdev == i + 1) {
                fprintf(f, "%s%" PRIu32, first ? "" : ", ", s->sessions[k].id);
                first = false;
            }
        fprintf(f, "], \"from\": \"%s\"}", d->from_config ? "config" : "request");
    }
    fprintf(f, "%s]", shown ? "\n  " : "");
}

/* With MEMCLIENT_DUMP_USAGE: what the session holds, in total and per bank group. */
static void session_use_json(FILE *f, const memclient_snapshot *s, uint32_t id)
{
    memd_report_use t;
    memd_report_session_total(s, id, &t);
    fprintf(f, ", \"bytes\": %" PRIu64 ", \"shared_bytes\": %" PRIu64 ", \"use\": [",
            t.bytes, t.shared_bytes);
    bool first = true;
    for (size_t i = 0; i < s->nusage; i++) {
        const memclient_session_use *u = &s->usage[i];
        if (u->session_id != id)
            continue;
        fprintf(f, "%s{\"device\": %" PRIu32 ", \"kind\": \"%s\", \"allocations\": %" PRIu32
                   ", \"bytes\": %" PRIu64 ", \"shared_bytes\": %" PRIu64 "}",
                first ? "" : ", ", u->device, memclient_kind_name(u->kind), u->allocations,
                u->bytes, u->shared_bytes);
        first = false;
    }
    fputc(']', f);
}

/* A session's cgroup and what its path says (pod, container; null when it says nothing);
 * nothing when the snapshot has none (taken without MEMCLIENT_DUMP_CGROUPS, which memctl
 * dump leaves out so it reads an older memd's state as before). */
static void cgroup_json(FILE *f, const char *cgroup)
{
    if (!cgroup[0])
        return;
    memd_cgroup_info c;
    memd_cgroup_parse(cgroup, &c);
    memd_json_member(f, ", \"cgroup\": ", cgroup);
    const char *keys[] = {"pod_uid", "container_id", "container_runtime"};
    const char *vals[] = {c.pod_uid, c.container_id, c.runtime};
    for (size_t i = 0; i < 3; i++) {
        fprintf(f, ", \"%s\": ", keys[i]);
        if (*vals[i])
            memd_json_str(f, vals[i]);
        else
            fputs("null", f);
    }
}

void memd_report_processes_json(FILE *f, const memclient_snapshot *s, const char *ind)
{
    memd_report_procs ps;
    fputc('[', f);
    if (memd_report_processes(s, &ps) < 0) {
        fputc(']', f);
        return;
    }
    for (size_t i = 0; i < ps.n; i++) {
        const memd_report_proc *p = &ps.procs[i];
        fprintf(f, "%s\n%s{\"pid\": %" PRIu32 ", \"uid\": %" PRIu32 ", \"process\": ",
                i ? "," : "", ind, p->pid, p->uid);
        memd_json_str(f, p->comm);
        memd_json_member(f, ", \"client\": ", p->client);
        fprintf(f, ", \"sessions\": %" PRIu32 ", \"allocations\": %" PRIu64 ", \"bytes\": %" PRIu64
                   ", \"shared_bytes\": %" PRIu64,
                p->sessions, p->allocations, p->bytes, p->shared_bytes);
        if (s->peaks) /* MEMCLIENT_DUMP_PEAKS (memctl status) */
            fprintf(f, ", \"peak_bytes\": %" PRIu64, memd_report_proc_peak(s, p->pid, UINT32_MAX));
        fputs(", \"devices\": [", f);
        bool first = true;
        for (size_t d = 0; d < s->ndevices; d++) {
            uint64_t b = memd_report_proc_device_bytes(&ps, p, d);
            if (!b)
                continue;
            fprintf(f, "%s{\"device\": %" PRIu32 ", \"bytes\": %" PRIu64 "}", first ? "" : ", ",
                    s->devices[d].id, b);
            first = false;
        }
        fputc(']', f);
        for (size_t k = 0; k < s->nsessions; k++)
            if (s->sessions[k].pid == p->pid) { /* its first session's cgroup */
                cgroup_json(f, s->sessions[k].cgroup);
                break;
            }
        fputc('}', f);
    }
    if (ps.n)
        fprintf(f, "\n%.*s", (int)(strlen(ind) >= 2 ? strlen(ind) - 2 : 0), ind);
    fputc(']', f);
    memd_report_processes_free(&ps);
}

static void session_json(FILE *f, const memclient_snapshot *s, const memclient_session_rec *x)
{
    fprintf(f, "    {\"id\": %" PRIu32 ", \"pid\": %" PRIu32 ", \"uid\": %" PRIu32
               ", \"gid\": %" PRIu32 ", \"process\": ",
            x->id, x->pid, x->uid, x->gid);
    memd_json_str(f, x->comm);
    memd_json_member(f, ", \"client\": ", x->client_name);
    cgroup_json(f, x->cgroup);
    fprintf(f, ", \"connected_ns\": %" PRIu64 ", \"connected_ns_str\": \"%" PRIu64 "\""
               ", \"allocations\": %" PRIu64 ", \"requests\": %" PRIu64 ", \"orphaned\": %s"
               ", \"reclaim_deadline_ns\": %" PRIu64 ", \"reclaim_deadline_ns_str\": \"%" PRIu64 "\"",
            x->connected_ns, x->connected_ns, x->allocations, x->requests,
            x->orphaned ? "true" : "false", x->reclaim_deadline_ns, x->reclaim_deadline_ns);
    if (s->usage)
        session_use_json(f, s, x->id);
    if (s->subdevs) { /* dumps with MEMCLIENT_DUMP_BANKS: the sub-device it is bound to */
        fputs(", \"sub_device\": ", f);
        if (x->subdev && x->subdev <= s->nsubdevs)
            memd_json_str(f, s->subdevs[x->subdev - 1].name);
        else
            fputs("null", f);
    }
    fputc('}', f);
}

void memd_report_sessions_json(FILE *f, const memclient_snapshot *s)
{
    fputc('[', f);
    for (size_t i = 0; i < s->nsessions; i++) {
        fprintf(f, "%s\n", i ? "," : "");
        session_json(f, s, &s->sessions[i]);
    }
    fprintf(f, "%s]", s->nsessions ? "\n  " : "");
}

void memd_report_models_json(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, ",\n  \"models\": [");
    for (size_t i = 0; i < s->nmodels; i++) {
        const memclient_model_rec *m = &s->models[i];
        fprintf(f, "%s\n    {\"id\": %" PRIu64 ", \"name\": ", i ? "," : "", m->model_id);
        memd_json_str(f, m->name);
        fprintf(f, ", \"device\": %" PRIu32 ", \"plan_id\": \"%016" PRIx64 "\", \"users\": %" PRIu32
                ", \"tensors\": %" PRIu32 ", \"code_handle\": %" PRIu64 ", \"code_bytes\": %" PRIu64
                ", \"const_handle\": %" PRIu64 ", \"const_bytes\": %" PRIu64
                ", \"arena\": %" PRIu64 ", \"instances\": %" PRIu32 ", \"created_ns\": %" PRIu64,
                m->device, m->plan_id, m->users, m->ntensors, m->code_handle, m->code_bytes,
                m->const_handle, m->const_bytes, m->arena, m->instances, m->created_ns);
        if (m->state_known) /* only asked for by `memctl model list` (MODEL_STATE) */
            fprintf(f, ", \"state\": \"%s\", \"filler_session\": %" PRIu32
                    ", \"filler_pid\": %" PRIu32 ", \"waiters\": %" PRIu32,
                    m->ready ? "ready" : "filling", m->filler_session, m->filler_pid, m->waiters);
        fputc('}', f);
    }
    fprintf(f, "%s],\n  \"plans\": [", s->nmodels ? "\n  " : "");
    for (size_t i = 0; i < s->nplans; i++) {
        const memclient_plan_rec *p = &s->plans[i];
        fprintf(f, "%s\n    {\"plan_id\": \"%016" PRIx64 "\", \"buffers\": %" PRIu32
                ", \"arena\": %" PRIu64 ", \"lower_bound\": %" PRIu64 ", \"gap_pct\": %.4f"
                ", \"optimal\": %s, \"precomputed\": %s, \"strategy\": ",
                i ? "," : "", p->plan_id, p->buffers, p->arena, p->lower_bound,
                memd_report_gap_pct(p->arena, p->lower_bound), p->optimal ? "true" : "false",
                p->precomputed ? "true" : "false");
        memd_json_str(f, p->strategy);
        fprintf(f, ", \"plan_us\": %" PRIu64 ", \"hits\": %" PRIu64 ", \"models\": %" PRIu32
                ", \"created_ns\": %" PRIu64 "}", p->plan_us, p->hits, p->models, p->created_ns);
    }
    fprintf(f, "%s],\n  \"instances\": [", s->nplans ? "\n  " : "");
    for (size_t i = 0; i < s->ninstances; i++) {
        const memclient_instance_rec *x = &s->instances[i];
        fprintf(f, "%s\n    {\"id\": %" PRIu64 ", \"model_id\": %" PRIu64 ", \"session\": %" PRIu32
                ", \"pid\": %" PRIu32 ", \"busy\": %s, \"arena_handle\": %" PRIu64
                ", \"arena_address\": %" PRIu64 ", \"arena_bytes\": %" PRIu64
                ", \"placeholders\": %" PRIu32 ", \"placeholder_bytes\": %" PRIu64 "}",
                i ? "," : "", x->instance_id, x->model_id, x->session_id, x->pid,
                x->busy ? "true" : "false", x->arena_handle, x->arena_address, x->arena_bytes,
                x->placeholders, x->placeholder_bytes);
    }
    fprintf(f, "%s]", s->ninstances ? "\n  " : "");
}

void memd_report_json(FILE *f, const memclient_snapshot *s, bool detailed)
{
    const memclient_server *sv = &s->server;
    fprintf(f, "{\n  \"schema_version\": 1,\n  \"server\": {\n    \"version\": ");
    memd_json_str(f, sv->version);
    fprintf(f, ",\n    \"pid\": %" PRIu32 ",\n    \"start_ns\": %" PRIu64
               ",\n    \"start_ns_str\": \"%" PRIu64 "\",\n    \"now_ns\": %" PRIu64
               ",\n    \"now_ns_str\": \"%" PRIu64 "\",\n    \"sessions\": %" PRIu32 ",\n    \"requests\": %" PRIu64
               ",\n    \"allocs\": %" PRIu64 ",\n    \"frees\": %" PRIu64
               ",\n    \"alloc_failures\": %" PRIu64 ",\n    \"protocol_errors\": %" PRIu64
               ",\n    \"sessions_total\": %" PRIu64 ",\n    \"bytes_in\": %" PRIu64
               ",\n    \"bytes_out\": %" PRIu64 "\n  },\n  \"devices\": [",
            sv->pid, sv->start_ns, sv->start_ns, sv->now_ns, sv->now_ns, sv->sessions,
            sv->requests, sv->allocs, sv->frees,
            sv->alloc_failures, sv->protocol_errors, sv->sessions_total, sv->bytes_in,
            sv->bytes_out);
    for (size_t d = 0; d < s->ndevices; d++) {
        const memclient_device *dev = &s->devices[d];
        fprintf(f, "%s\n    {\n      \"id\": %" PRIu32 ",\n      \"name\": ", d ? "," : "", dev->id);
        memd_json_str(f, dev->name);
        memd_json_member(f, ",\n      \"arch\": ", dev->arch);
        fprintf(f, ",\n      \"texture\": %s,\n      \"bank_groups\": [",
                dev->texture ? "true" : "false");
        bool first = true;
        for (size_t g = 0; g < s->ngroups; g++) {
            if (s->groups[g].device != dev->id)
                continue;
            fprintf(f, "%s\n", first ? "" : ",");
            group_json(f, s, &s->groups[g], detailed);
            first = false;
        }
        fprintf(f, "%s]\n    }", first ? "" : "\n      ");
    }
    fprintf(f, "%s],\n  \"allocations\": [", s->ndevices ? "\n  " : "");
    for (size_t i = 0; i < s->nallocs; i++) {
        fprintf(f, "%s\n", i ? "," : "");
        alloc_json(f, s, &s->allocs[i]);
    }
    fprintf(f, "%s],\n  \"sessions\": ", s->nallocs ? "\n  " : "");
    memd_report_sessions_json(f, s);
    if (s->usage) {
        fputs(",\n  \"processes\": ", f);
        memd_report_processes_json(f, s, "    ");
    }
    memd_report_pools_json(f, s);
    subdevs_json(f, s);
    memd_report_models_json(f, s); /* "models", "plans", "instances" */
    fprintf(f, "\n}\n");
}
