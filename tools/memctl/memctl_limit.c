/* memctl limit: device memory limits per cgroup (the kernel dmem controller's dmem.max,
 * hierarchical): set and clear them (admin), list them with their usage and peak. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"
#include "names.h"

static const char limit_usage[] =
    "usage: memctl limit set --cgroup PATH --device N [--group dram|sram] --max SIZE [--json]\n"
    "       memctl limit list [--json]\n"
    "       memctl limit clear --cgroup PATH [--device N] [--group dram|sram] [--json]\n"
    "  PATH: an absolute cgroup v2 path (as in /proc/PID/cgroup), e.g. /kubepods.slice/x\n"
    "  what the processes of PATH and of every cgroup below it hold on the device and bank\n"
    "  group (default dram) may not pass SIZE; set and clear need root or the daemon's admin\n"
    "  group, and memd keeps what they set across restarts; clear without --device or\n"
    "  --group removes the cgroup's limits on every device or group\n";

typedef struct limit_opts {
    const char *verb, *cgroup;
    uint32_t device;
    memd_kind kind;
    uint64_t max;
    bool dev, group, has_max, json;
} limit_opts;

static int option(const char *a, const char *v, limit_opts *o)
{
    if (!strcmp(a, "--cgroup")) {
        o->cgroup = v;
        return 0;
    }
    if (!strcmp(a, "--device")) {
        o->dev = true;
        return memctl_parse_u32(v, &o->device) < 0 ? memctl_bad_value("limit", a, v, "a device id")
                                                   : 0;
    }
    if (!strcmp(a, "--group")) {
        o->group = true;
        return memd_kind_parse(v, &o->kind) < 0
                   ? memctl_bad_value("limit", a, v, "dram (global) or sram (l1)")
                   : 0;
    }
    if (!strcmp(a, "--max")) {
        o->has_max = true;
        return memctl_parse_size(v, &o->max) < 0
                   ? memctl_bad_value("limit", a, v, "a size, e.g. 8GiB")
                   : 0;
    }
    fprintf(stderr, "memctl limit: unknown option '%s'\n%s", a, limit_usage);
    return MEMCTL_EXIT_USAGE;
}

/* 0 when the command line is complete; -1 after --help; an exit code otherwise. */
static int parse(int argc, char **argv, limit_opts *o)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(limit_usage, stdout);
        return -1;
    }
    if (argc < 2 || (strcmp(argv[1], "set") && strcmp(argv[1], "list") && strcmp(argv[1], "clear"))) {
        fputs(limit_usage, stderr);
        return MEMCTL_EXIT_USAGE;
    }
    o->verb = argv[1];
    for (int i = 2; i < argc; i++) {
        int rc;
        if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(limit_usage, stdout);
            return -1;
        } else {
            const char *v = memctl_optarg("limit", argc, argv, &i);
            if (!v)
                return MEMCTL_EXIT_USAGE;
            if ((rc = option(argv[i - 1], v, o)) != 0)
                return rc;
        }
    }
    bool list = !strcmp(o->verb, "list"), set = !strcmp(o->verb, "set");
    if (list ? (o->cgroup || o->dev || o->group || o->has_max)
             : (!o->cgroup || (set && (!o->dev || !o->has_max)) || (!set && o->has_max))) {
        fprintf(stderr, "memctl limit %s: %s\n%s", o->verb,
                list ? "takes only --json"
                : set ? "needs --cgroup, --device and --max"
                      : "needs --cgroup (and takes no --max)",
                limit_usage);
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

static void list_json(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, "[");
    for (size_t i = 0; i < s->nlimits; i++) {
        const memclient_limit *l = &s->limits[i];
        fprintf(f, "%s\n  {\"cgroup\": ", i ? "," : "");
        memd_json_str(f, l->cgroup);
        fprintf(f, ", \"device\": %" PRIu32 ", \"group\": \"%s\", \"max\": %" PRIu64
                ", \"current\": %" PRIu64 ", \"peak\": %" PRIu64 ", \"source\": \"%s\"}",
                l->device, memclient_kind_name(l->kind), l->max, l->current, l->peak,
                l->from_config ? "config" : "set");
    }
    fprintf(f, "%s]\n", s->nlimits ? "\n" : "");
}

static void list_table(FILE *f, const memclient_snapshot *s)
{
    if (s->nlimits == 0) {
        fprintf(f, "no cgroup limits\n");
        return;
    }
    fprintf(f, "%-6s %-5s %14s %14s %14s %-6s %s\n", "DEVICE", "GROUP", "MAX", "CURRENT",
            "PEAK", "SOURCE", "CGROUP");
    for (size_t i = 0; i < s->nlimits; i++) {
        const memclient_limit *l = &s->limits[i];
        char cg[sizeof l->cgroup * 4];
        memd_text_escape(l->cgroup, cg, sizeof cg); /* a path is the kernel's text, not ours */
        fprintf(f, "%-6" PRIu32 " %-5s %14" PRIu64 " %14" PRIu64 " %14" PRIu64 " %-6s %s\n",
                l->device, memclient_kind_name(l->kind), l->max, l->current, l->peak,
                l->from_config ? "config" : "set", cg);
    }
}

static int list(memclient *c, const limit_opts *o)
{
    memclient_snapshot *s;
    int r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_LIMITS, &s);
    if (r < 0)
        return memctl_fail(c, "limit", "cannot read the limits", r);
    (o->json ? list_json : list_table)(stdout, s);
    memclient_snapshot_free(s);
    return 0;
}

int memctl_cmd_limit(const memctl_globals *g, int argc, char **argv)
{
    limit_opts o = {.kind = MEMD_KIND_DRAM};
    memclient *c;
    int r = memctl_parsed_connect(g, parse(argc, argv, &o), &c);
    if (!c)
        return r;
    int code;
    if (!strcmp(o.verb, "list")) {
        code = list(c, &o);
    } else if (!strcmp(o.verb, "set")) {
        r = memclient_limit_set(c, o.cgroup, o.device, o.kind, o.max);
        code = r < 0 ? memctl_fail(NULL, "limit", "cannot set the limit", r) : 0;
        if (r == 0 && o.json) {
            printf("{\"set\": ");
            memd_json_str(stdout, o.cgroup);
            printf(", \"device\": %" PRIu32 ", \"group\": \"%s\", \"max\": %" PRIu64 "}\n",
                   o.device, memclient_kind_name(o.kind), o.max);
        } else if (r == 0) {
            printf("limit of %s on device %" PRIu32 " %s: %" PRIu64 " bytes\n", o.cgroup,
                   o.device, memclient_kind_name(o.kind), o.max);
        }
    } else {
        r = memclient_limit_clear(c, o.cgroup, o.dev ? o.device : MEMCLIENT_ALL_DEVICES,
                                  o.group ? o.kind : MEMD_KIND_COUNT);
        code = r < 0 ? memctl_fail(NULL, "limit", "cannot clear the limit", r) : 0;
        if (r == 0 && o.json) {
            printf("{\"cleared\": ");
            memd_json_str(stdout, o.cgroup);
            printf("}\n");
        } else if (r == 0) {
            printf("cleared the limits of %s\n", o.cgroup);
        }
    }
    memclient_disconnect(c);
    return code;
}
