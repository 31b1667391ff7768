/* memctl peaks: high-water marks (PEAKS) per device bank group, region, session and client
 * pool, with when each was reached; memctl peaks reset starts them again (PEAKS_RESET). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "units.h"
#include "memctl_service.h"
#include "memctl_table.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

static const char peaks_usage[] =
    "usage: memctl peaks [--device N] [--json]\n"
    "       memctl peaks reset [--device N] [--session ID] [--json]\n"
    "  the most bytes in use since memd started or the last reset, and when: per device\n"
    "  bank group and region (every bank counted), per session and bank group, per client\n"
    "  pool (bytes its owner reported sub-allocated, per bank); others' sessions and pools\n"
    "  need root or the daemon's admin group. reset: every peak (admin; the cgroup limits'\n"
    "  dmem.peak too), or one session's with --session ID (admin, or that session itself).\n"
    "  Peaks restart with the daemon.\n";

typedef struct peaks_opts {
    bool reset, json, dev, session;
    uint32_t device, session_id;
} peaks_opts;

/* The region's name in the snapshot, "" if absent. */
static const char *region_name(const memclient_snapshot *s, const memclient_peak *p)
{
    const memclient_region *r = memclient_snapshot_region(s, p->device, p->kind, p->region);
    return r ? r->name : "";
}

static const memclient_session_rec *session_of(const memclient_snapshot *s, uint32_t id)
{
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].id == id)
            return &s->sessions[i];
    return NULL;
}

static bool shown(const memclient_peak *p, uint32_t device, unsigned mask)
{
    return (device == UINT32_MAX || p->device == device) && (mask & (1u << p->what));
}

void memctl_peaks_table(FILE *f, const memclient_snapshot *s, uint32_t device, unsigned mask)
{
    static const char *const head[] = {"WHAT", "DEVICE", "GROUP", "REGION", "OWNER", "CURRENT",
                                       "PEAK", "WHEN"};
    memctl_table *t = memctl_table_new(8, head, "lrlllrrl");
    size_t n = 0;
    for (size_t i = 0; t && i < s->npeaks; i++) {
        const memclient_peak *p = &s->peaks[i];
        if (!shown(p, device, mask))
            continue;
        memctl_table_cell(t, "%s", memclient_peak_what_name(p->what));
        memctl_table_cell(t, "%" PRIu32, p->device);
        memctl_table_cell(t, "%s", memclient_kind_name(p->kind));
        bool in_region = p->what == MEMCLIENT_PEAK_REGION || p->what == MEMCLIENT_PEAK_POOL;
        memctl_table_cell(t, "%s", in_region ? TX(region_name(s, p)) : "");
        const memclient_session_rec *x = session_of(s, p->session_id);
        if (p->what == MEMCLIENT_PEAK_POOL)
            memctl_table_cell(t, "pool 0x%" PRIx64 " (session %" PRIu32 ", pid %" PRIu32 ")",
                              p->pool, p->session_id, p->pid);
        else if (p->what == MEMCLIENT_PEAK_SESSION)
            memctl_table_cell(t, "session %" PRIu32 " (pid %" PRIu32 " %s)", p->session_id,
                              p->pid, x && x->comm[0] ? TX(x->comm) : "?");
        else
            memctl_table_cell(t, "%s", "");
        memctl_table_cell(t, "%s", HB(p->current));
        memctl_table_cell(t, "%s", HB(p->peak));
        char age[24];
        if (p->peak_ns && s->server.now_ns >= p->peak_ns)
            memctl_table_cell(t, "%s ago",
                              memctl_human_age(s->server.now_ns - p->peak_ns, age, sizeof age));
        else
            memctl_table_cell(t, "%s", "-");
        n++;
    }
    if (n)
        memctl_table_print(t, f, "");
    else
        fprintf(f, "no peaks\n");
    memctl_table_free(t);
}

void memctl_peaks_json(FILE *f, const memclient_snapshot *s, uint32_t device, unsigned mask,
                       const char *ind)
{
    fputc('[', f);
    size_t n = 0;
    for (size_t i = 0; i < s->npeaks; i++) {
        const memclient_peak *p = &s->peaks[i];
        if (!shown(p, device, mask))
            continue;
        fprintf(f, "%s\n%s{\"what\": \"%s\", \"device\": %" PRIu32 ", \"group\": \"%s\"",
                n++ ? "," : "", ind, memclient_peak_what_name(p->what), p->device,
                memclient_kind_name(p->kind));
        if (p->what == MEMCLIENT_PEAK_REGION || p->what == MEMCLIENT_PEAK_POOL) {
            fputs(", \"region\": ", f);
            memd_json_str(f, region_name(s, p));
        }
        if (p->what == MEMCLIENT_PEAK_SESSION || p->what == MEMCLIENT_PEAK_POOL)
            fprintf(f, ", \"session\": %" PRIu32 ", \"pid\": %" PRIu32, p->session_id, p->pid);
        if (p->what == MEMCLIENT_PEAK_POOL)
            fprintf(f, ", \"pool\": %" PRIu64, p->pool);
        fprintf(f, ", \"current\": %" PRIu64 ", \"peak\": %" PRIu64 ", \"peak_ns\": %" PRIu64
                   ", \"peak_ns_str\": \"%" PRIu64 "\"}",
                p->current, p->peak, p->peak_ns, p->peak_ns);
    }
    if (n)
        fprintf(f, "\n%.*s", (int)(strlen(ind) >= 2 ? strlen(ind) - 2 : 0), ind);
    fputc(']', f);
}

/* 0 when the command line is complete; -1 after --help; an exit code otherwise. */
static int parse(int argc, char **argv, peaks_opts *o)
{
    int i = 1;
    if (argc > 1 && !strcmp(argv[1], "reset")) {
        o->reset = true;
        i = 2;
    }
    for (; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(peaks_usage, stdout);
            return -1;
        } else if (!strcmp(a, "--device") || (o->reset && !strcmp(a, "--session"))) {
            if (!(v = memctl_optarg("peaks", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            bool dev = !strcmp(a, "--device");
            if (memctl_parse_u32(v, dev ? &o->device : &o->session_id) < 0 ||
                (!dev && (o->session_id == 0 || o->session_id == MEMCLIENT_PEAKS_ALL)))
                return memctl_bad_value("peaks", a, v, dev ? "a device id" : "a session id");
            *(dev ? &o->dev : &o->session) = true;
        } else {
            fprintf(stderr, "memctl peaks: unexpected argument '%s'\n%s", a, peaks_usage);
            return MEMCTL_EXIT_USAGE;
        }
    }
    return 0;
}

static int reset(const memctl_globals *g, int parsed, const peaks_opts *o)
{
    memclient *c;
    int r = memctl_parsed_connect(g, parsed, &c);
    if (!c)
        return r;
    uint32_t dev = o->dev ? o->device : MEMCLIENT_ALL_DEVICES;
    r = memclient_peaks_reset(c, dev, o->session ? o->session_id : MEMCLIENT_PEAKS_ALL);
    int code = r < 0 ? memctl_fail(c, "peaks", "cannot reset the peaks", r) : 0;
    memclient_disconnect(c);
    if (code)
        return code;
    /* JSON: null for every device or session. */
    char dev_s[16] = "null", ses_s[16] = "null";
    if (o->dev)
        snprintf(dev_s, sizeof dev_s, "%" PRIu32, o->device);
    if (o->session)
        snprintf(ses_s, sizeof ses_s, "%" PRIu32, o->session_id);
    if (o->json)
        printf("{\"reset\": true, \"device\": %s, \"session\": %s}\n", dev_s, ses_s);
    else
        printf("reset the peaks of %s%s on %s%s to the current bytes\n",
               o->session ? "session " : "every bank group, region, session and pool",
               o->session ? ses_s : "", o->dev ? "device " : "every device", o->dev ? dev_s : "");
    return 0;
}

int memctl_cmd_peaks(const memctl_globals *g, int argc, char **argv)
{
    peaks_opts o = {0};
    int parsed = parse(argc, argv, &o);
    if (parsed < 0)
        return 0;
    if (parsed)
        return parsed;
    if (o.reset)
        return reset(g, parsed, &o);
    memclient_snapshot *s;
    int r = memctl_fetch(g, "peaks", MEMCLIENT_DUMP_PEAKS, &s);
    if (r)
        return r;
    uint32_t dev = o.dev ? o.device : UINT32_MAX;
    bool known = !o.dev;
    for (size_t i = 0; i < s->ndevices; i++)
        known |= s->devices[i].id == dev;
    if (!known) {
        fprintf(stderr, "memctl peaks: no device %" PRIu32 " (memctl devices lists them)\n", dev);
        memclient_snapshot_free(s);
        return MEMCTL_EXIT_FAIL;
    }
    unsigned all = ~0u;
    if (o.json) {
        memctl_peaks_json(stdout, s, dev, all, "  ");
        fputc('\n', stdout);
    } else {
        memctl_peaks_table(stdout, s, dev, all);
    }
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}
