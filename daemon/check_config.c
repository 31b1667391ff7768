/* memd soc — `memd --check-config FILE [--json]`, like `nginx -t`: load the config and
 * every descriptor it names, set up the daemon's state (devices, admin group), then print the resulting memory map (or
 * the first error as file:line:col: message). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check_config.h"
#include "config.h"
#include "json.h"
#include "state.h"

static const char *human(uint64_t v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    uint64_t x = v;
    while (u < 4 && x >= 1024 && x % 1024 == 0) {
        x /= 1024;
        u++;
    }
    snprintf(buf, cap, "%" PRIu64 " %s", x, units[u]);
    return buf;
}

static uint64_t eff_alignment(const memd_bank_group_spec *g, const memd_class_policy *p)
{
    return p->alignment > g->alignment ? p->alignment : g->alignment;
}

/* The page a class's model buffers use (0: one page). */
static uint64_t eff_page(const memd_bank_group_spec *g, const memd_class_policy *p)
{
    return p->page_size ? p->page_size : g->page_size;
}

/* ---- table ---- */

static void print_offsets(FILE *out, const memd_bank_group_spec *g)
{
    bool all_zero = true;
    for (uint32_t i = 0; g->bank_offsets && i < g->banks; i++)
        all_zero &= g->bank_offsets[i] == 0;
    if (all_zero) {
        fprintf(out, "    offsets: all 0\n");
        return;
    }
    /* Runs of equal offsets are folded: 128 L1 banks would otherwise fill the screen. */
    fprintf(out, "    offsets:");
    for (uint32_t i = 0; i < g->banks;) {
        uint32_t j = i;
        while (j + 1 < g->banks && g->bank_offsets[j + 1] == g->bank_offsets[i])
            j++;
        int64_t o = g->bank_offsets[i];
        fprintf(out, " %s0x%" PRIx64, o < 0 ? "-" : "", o < 0 ? (uint64_t)0 - (uint64_t)o : (uint64_t)o);
        if (j > i)
            fprintf(out, " (banks %" PRIu32 "-%" PRIu32 ")", i, j);
        i = j + 1;
    }
    fprintf(out, "\n");
}

static void print_group(FILE *out, memd_kind k, const memd_bank_group_spec *g,
                        const memd_class_policy *pol)
{
    char h1[32], h2[32];
    fprintf(out, "  %s: %" PRIu32 " bank%s x 0x%" PRIx64 " (%s), alignment %" PRIu64 "\n",
            memd_kind_name(k), g->banks, g->banks == 1 ? "" : "s", g->bank_size,
            human(g->bank_size, h1, sizeof(h1)), g->alignment);
    print_offsets(out, g);
    /* Region names run up to 63 characters: the name columns are as wide as the longest. */
    int w = 12;
    for (uint32_t i = 0; i < g->nregions; i++)
        if ((int)strlen(g->regions[i].name) > w)
            w = (int)strlen(g->regions[i].name);
    fprintf(out, "    %-*s %-18s %-18s %-12s %s\n", w, "region", "base", "size", "", "use");
    for (uint32_t i = 0; i < g->nregions; i++) {
        const memd_region_spec *r = &g->regions[i];
        fprintf(out, "    %-*s 0x%016" PRIx64 " 0x%016" PRIx64 " %-12s %s\n", w, r->name, r->base,
                r->size, human(r->size, h2, sizeof(h2)),
                r->allocatable ? "allocatable" : "reserved");
    }
    fprintf(out, "    %-12s %-*s %-10s %-6s %-9s %s\n", "class", w, "region", "dir", "fit",
            "alignment", "page");
    for (int c = 0; c < MEMD_CLASS_COUNT; c++) {
        const memd_class_policy *p = &pol[c];
        if (!p->enabled) {
            fprintf(out, "    %-12s %s\n", memd_class_name((memd_class)c), "(not offered)");
            continue;
        }
        fprintf(out, "    %-12s %-*s %-10s %-6s %-9" PRIu64 " %" PRIu64 "\n",
                memd_class_name((memd_class)c), w, g->regions[p->region].name,
                memd_dir_name(p->dir), memd_fit_name(p->fit), eff_alignment(g, p),
                eff_page(g, p));
    }
}

static void print_table(FILE *out, const memd_config *cfg)
{
    fprintf(out, "socket: %s\n", cfg->socket_path[0] ? cfg->socket_path : "(default)");
    fprintf(out, "state_dir: %s\n", cfg->state_dir[0] ? cfg->state_dir : "(beside the socket)");
    fprintf(out, "admin_group: %s\n", cfg->admin_group[0] ? cfg->admin_group : "(root only)");
    fprintf(out, "shared_names: %s\n", cfg->shared_names_global ? "global" : "per_uid");
    const memd_limits *l = &cfg->limits;
    fprintf(out,
            "limits: max_frame %" PRIu32 ", max_sessions %" PRIu32 ", max_allocs_per_session %" PRIu32
            ", max_reply_backlog %" PRIu64 ", quota_per_uid %" PRIu64 "%s, reclaim_grace_ms %" PRIu32
            ", max_sessions_per_uid %" PRIu32 ", admin_sessions %" PRIu32 ", hello_timeout_ms %" PRIu32
            ", max_suballocs_per_pool %" PRIu32 ", history_events %" PRIu32 "%s"
            ", events_per_uid %" PRIu32 ", plan_cache_bytes %" PRIu64 ", postmortems %" PRIu32
            "%s, postmortem_interval_ms %" PRIu32 ", postmortems_per_minute %" PRIu32 "\n",
            l->max_frame, l->max_sessions, l->max_allocs_per_session, l->max_reply_backlog,
            l->quota_per_uid, l->quota_per_uid ? "" : " (unlimited)", l->reclaim_grace_ms,
            l->max_sessions_per_uid, l->admin_sessions, l->hello_timeout_ms,
            l->max_suballocs_per_pool, l->history_events, l->history_events ? "" : " (off)",
            l->events_per_uid, l->plan_cache_bytes, l->postmortems,
            l->postmortems ? "" : " (off)", l->postmortem_interval_ms, l->postmortems_per_minute);
    for (uint32_t i = 0; i < cfg->ndevices; i++) {
        const memd_device_spec *d = &cfg->devices[i];
        fprintf(out, "device %" PRIu32 " '%s'%s%s\n", d->id, d->name, d->arch[0] ? " arch " : "", d->arch);
        for (int k = 0; k < MEMD_KIND_COUNT; k++)
            if (d->groups[k].banks)
                print_group(out, (memd_kind)k, &d->groups[k], d->policy[k]);
        if (d->texture.enabled)
            fprintf(out, "  dram.texture: up to %" PRIu32 " x %" PRIu32 " texels, pitch alignment %" PRIu64 "\n",
                    d->texture.max_width, d->texture.max_height, d->texture.pitch_alignment);
        else
            fprintf(out, "  dram.texture: not offered\n");
    }
}

/* ---- JSON ---- */

static void json_group(FILE *out, memd_kind k, const memd_bank_group_spec *g,
                       const memd_class_policy *pol)
{
    fprintf(out, "{\"kind\":\"%s\",\"banks\":%" PRIu32 ",\"bank_size\":%" PRIu64 ",\"alignment\":%" PRIu64
                 ",\"page_size\":%" PRIu64 ",\"offsets\":[",
            memd_kind_name(k), g->banks, g->bank_size, g->alignment, g->page_size);
    for (uint32_t i = 0; i < g->banks; i++)
        fprintf(out, "%s%" PRId64, i ? "," : "", g->bank_offsets ? g->bank_offsets[i] : 0);
    fprintf(out, "],\"regions\":[");
    for (uint32_t i = 0; i < g->nregions; i++) {
        const memd_region_spec *r = &g->regions[i];
        fprintf(out, "%s{\"name\":", i ? "," : "");
        memd_json_str(out, r->name);
        fprintf(out, ",\"base\":%" PRIu64 ",\"size\":%" PRIu64 ",\"allocatable\":%s}", r->base, r->size,
                r->allocatable ? "true" : "false");
    }
    fprintf(out, "],\"policy\":[");
    for (int c = 0; c < MEMD_CLASS_COUNT; c++) {
        const memd_class_policy *p = &pol[c];
        fprintf(out, "%s{\"class\":\"%s\",\"enabled\":%s", c ? "," : "", memd_class_name((memd_class)c),
                p->enabled ? "true" : "false");
        if (p->enabled) {
            memd_json_member(out, ",\"region\":", g->regions[p->region].name);
            fprintf(out, ",\"dir\":\"%s\",\"fit\":\"%s\",\"alignment\":%" PRIu64
                         ",\"page_size\":%" PRIu64, memd_dir_name(p->dir),
                    memd_fit_name(p->fit), eff_alignment(g, p), eff_page(g, p));
        }
        fputc('}', out);
    }
    fprintf(out, "]}");
}

static void print_json(FILE *out, const memd_config *cfg)
{
    const memd_limits *l = &cfg->limits;
    memd_json_member(out, "{\"config\":", cfg->path);
    memd_json_member(out, ",\"socket\":", cfg->socket_path);
    memd_json_member(out, ",\"state_dir\":", cfg->state_dir);
    memd_json_member(out, ",\"admin_group\":", cfg->admin_group);
    fprintf(out, ",\"shared_names\":\"%s\"", cfg->shared_names_global ? "global" : "per_uid");
    fprintf(out,
            ",\"limits\":{\"max_frame\":%" PRIu32 ",\"max_sessions\":%" PRIu32 ",\"max_allocs_per_session\":%" PRIu32
            ",\"max_reply_backlog\":%" PRIu64 ",\"quota_per_uid\":%" PRIu64 ",\"reclaim_grace_ms\":%" PRIu32
            ",\"max_sessions_per_uid\":%" PRIu32 ",\"admin_sessions\":%" PRIu32 ",\"hello_timeout_ms\":%" PRIu32
            ",\"max_suballocs_per_pool\":%" PRIu32 ",\"history_events\":%" PRIu32
            ",\"events_per_uid\":%" PRIu32 ",\"plan_cache_bytes\":%" PRIu64
            ",\"postmortems\":%" PRIu32 ",\"postmortem_interval_ms\":%" PRIu32
            ",\"postmortems_per_minute\":%" PRIu32 "}",
            l->max_frame, l->max_sessions, l->max_allocs_per_session, l->max_reply_backlog, l->quota_per_uid,
            l->reclaim_grace_ms, l->max_sessions_per_uid, l->admin_sessions, l->hello_timeout_ms,
            l->max_suballocs_per_pool, l->history_events, l->events_per_uid, l->plan_cache_bytes,
            l->postmortems, l->postmortem_interval_ms, l->postmortems_per_minute);
    fprintf(out, ",\"devices\":[");
    for (uint32_t i = 0; i < cfg->ndevices; i++) {
        const memd_device_spec *d = &cfg->devices[i];
        fprintf(out, "%s{\"id\":%" PRIu32 ",\"name\":", i ? "," : "", d->id);
        memd_json_str(out, d->name);
        memd_json_member(out, ",\"arch\":", d->arch);
        fprintf(out, ",\"bank_groups\":[");
        bool first = true;
        for (int k = 0; k < MEMD_KIND_COUNT; k++) {
            if (!d->groups[k].banks)
                continue;
            if (!first)
                fputc(',', out);
            first = false;
            json_group(out, (memd_kind)k, &d->groups[k], d->policy[k]);
        }
        fprintf(out, "],\"texture\":");
        if (d->texture.enabled)
            fprintf(out, "{\"max_width\":%" PRIu32 ",\"max_height\":%" PRIu32 ",\"pitch_alignment\":%" PRIu64 "}",
                    d->texture.max_width, d->texture.max_height, d->texture.pitch_alignment);
        else
            fprintf(out, "null");
        fputc('}', out);
    }
    fprintf(out, "]}\n");
}

/* The error as the daemon would log it on errout and, with --json, as a document on out
 * too, so a script reading out always gets JSON. */
static void print_error(FILE *out, FILE *errout, const char *path, bool json,
                        const memd_error *e)
{
    char line[sizeof(e->file) + sizeof(e->msg) + 32];
    memd_error_format(e, line, sizeof(line));
    fprintf(errout, "%s\nmemd: configuration file %s test failed\n", line, path);
    if (!json)
        return;
    memd_json_member(out, "{\"config\":", path);
    memd_json_member(out, ",\"error\":{\"file\":", e->file);
    fprintf(out, ",\"line\":%u,\"column\":%u,\"message\":", e->line, e->column);
    memd_json_str(out, e->msg);
    fprintf(out, "}}\n");
}

int memd_check_config(const char *path, bool json, FILE *out, FILE *errout)
{
    memd_config cfg;
    memd_error err;
    memset(&err, 0, sizeof(err));
    if (memd_config_load(path, &cfg, &err)) {
        print_error(out, errout, path, json, &err);
        return 1;
    }
    /* The daemon's own start-up: every device built by the engine's checks, the admin
     * group resolved. */
    memd_state st;
    if (memd_state_init(&st, &cfg, &err)) {
        print_error(out, errout, path, json, &err);
        memd_config_free(&cfg);
        return 1;
    }
    memd_state_fini(&st);
    if (json) {
        print_json(out, &cfg);
    } else {
        print_table(out, &cfg);
        fprintf(out, "memd: configuration file %s test is successful\n", path);
    }
    memd_config_free(&cfg);
    return 0;
}
