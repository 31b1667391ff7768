/* memctl region: what is left of each region's allocatable range, and an admin's
 * shrink and reset of it (tt-metal's shrink_size / reset_size; REGION_RANGE). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memctl_service.h"

static const char region_usage[] =
    "usage: memctl region ranges [--device N] [--json]\n"
    "       memctl region shrink --device N --group G --region R (--bottom | --top) SIZE [--json]\n"
    "       memctl region reset --device N --group G --region R [--bottom | --top] [--json]\n"
    "  group: sram (l1) or dram (global); region: its name (buffers) or index\n"
    "  shrink gives up SIZE more bytes per bank at that end of what is left (refused while\n"
    "  a buffer lies there); reset gives back what was given up (both ends by default);\n"
    "  shrink and reset need root or the daemon's admin group; memd keeps them across\n"
    "  restarts\n";

typedef struct region_opts {
    const char *verb, *region;
    uint32_t device;
    memd_kind kind;
    unsigned ends;
    uint64_t bytes;
    bool dev, group, json;
} region_opts;

static int parse(int argc, char **argv, region_opts *o)
{
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v;
        if (!strcmp(a, "--json")) {
            o->json = true;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(region_usage, stdout);
            exit(0);
        }
        bool bottom = !strcmp(a, "--bottom"), top = !strcmp(a, "--top");
        if ((bottom || top) && o->ends)
            return memctl_bad_value("region", a, "", "one of --bottom and --top");
        if ((bottom || top) && !strcmp(o->verb, "reset")) {
            o->ends = bottom ? MEMCLIENT_RANGE_BOTTOM : MEMCLIENT_RANGE_TOP;
            continue;
        }
        if (!bottom && !top && strcmp(a, "--device") && strcmp(a, "--group") &&
            strcmp(a, "--region")) {
            fprintf(stderr, "memctl region: unknown option '%s'\n%s", a, region_usage);
            return MEMCTL_EXIT_USAGE;
        }
        if (!(v = memctl_optarg("region", argc, argv, &i)))
            return MEMCTL_EXIT_USAGE;
        if (bottom || top) {
            o->ends = bottom ? MEMCLIENT_RANGE_BOTTOM : MEMCLIENT_RANGE_TOP;
            if (memctl_parse_size(v, &o->bytes) < 0)
                return memctl_bad_value("region", a, v, "a size (4096, 64K, 1MiB)");
        } else if (!strcmp(a, "--device") && !(o->dev = memctl_parse_u32(v, &o->device) == 0)) {
            return memctl_bad_value("region", a, v, "a device id");
        } else if (!strcmp(a, "--group") && !(o->group = memclient_kind_parse(v, &o->kind) == 0)) {
            return memctl_bad_value("region", a, v, "sram, l1, dram or global");
        } else if (!strcmp(a, "--region")) {
            o->region = v;
        }
    }
    return 0;
}

static void print_range(const memclient_range *r, const char *name, bool json, bool *first)
{
    if (json)
        printf("%s{\"device\": %" PRIu32 ", \"group\": \"%s\", \"region\": \"%s\", \"index\": %"
               PRIu32 ", \"bottom\": %" PRIu64 ", \"top\": %" PRIu64 ", \"start\": %" PRIu64
               ", \"end\": %" PRIu64 "}", *first ? "" : ", ", r->device,
               memclient_kind_name(r->kind), name, r->region, r->bottom, r->top, r->start,
               r->end);
    else
        printf("device %" PRIu32 " %s %-10s [0x%" PRIx64 ", 0x%" PRIx64 ")  given up: %" PRIu64
               " at the bottom, %" PRIu64 " at the top\n", r->device,
               memclient_kind_name(r->kind), name, r->start, r->end, r->bottom, r->top);
    *first = false;
}

/* The region's index: --region as a number, or the allocatable region of that name. */
static int find_region(memclient *c, const region_opts *o, uint32_t *index)
{
    char *end;
    unsigned long v = strtoul(o->region, &end, 10);
    if (*o->region && !*end && v <= UINT8_MAX) {
        *index = (uint32_t)v;
        return 0;
    }
    memclient_snapshot *s;
    int r = memclient_dump(c, o->device, 0, &s);
    if (r < 0)
        return memctl_fail(c, "region", "cannot read the device's regions", r);
    r = MEMCTL_EXIT_USAGE;
    for (size_t i = 0; i < s->nregions; i++)
        if (s->regions[i].kind == o->kind && !strcmp(s->regions[i].name, o->region)) {
            *index = s->regions[i].region;
            r = 0;
        }
    if (r)
        fprintf(stderr, "memctl region: device %" PRIu32 " has no %s region '%s'\n", o->device,
                memclient_kind_name(o->kind), o->region);
    memclient_snapshot_free(s);
    return r;
}

static int ranges(memclient *c, const region_opts *o)
{
    memclient_snapshot *s;
    int r = memclient_dump(c, o->dev ? o->device : MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_RANGES, &s);
    if (r < 0)
        return memctl_fail(c, "region", "cannot read the ranges", r);
    bool first = true;
    if (o->json)
        fputs("[", stdout);
    for (size_t i = 0; i < s->nranges; i++) {
        const memclient_region *reg = memclient_snapshot_region(s, s->ranges[i].device,
                                                                s->ranges[i].kind,
                                                                s->ranges[i].region);
        print_range(&s->ranges[i], reg ? reg->name : "?", o->json, &first);
    }
    if (o->json)
        fputs("]\n", stdout);
    memclient_snapshot_free(s);
    return 0;
}

int memctl_cmd_region(const memctl_globals *g, int argc, char **argv)
{
    region_opts o = {.verb = argc > 1 ? argv[1] : ""};
    if (!strcmp(o.verb, "--help") || !strcmp(o.verb, "-h")) {
        fputs(region_usage, stdout);
        return 0;
    }
    bool change = !strcmp(o.verb, "shrink") || !strcmp(o.verb, "reset");
    if (!change && strcmp(o.verb, "ranges")) {
        fprintf(stderr, "memctl region: ranges, shrink or reset\n%s", region_usage);
        return MEMCTL_EXIT_USAGE;
    }
    int r = parse(argc, argv, &o);
    if (r)
        return r;
    if (change && (!o.dev || !o.group || !o.region || (!strcmp(o.verb, "shrink") && !o.ends))) {
        fprintf(stderr, "memctl region %s: --device, --group, --region%s are required\n%s",
                o.verb, !strcmp(o.verb, "shrink") ? " and --bottom or --top" : "",
                region_usage);
        return MEMCTL_EXIT_USAGE;
    }
    memclient *c;
    if ((r = memctl_connect(g, &c)))
        return r;
    uint32_t index = 0;
    memclient_range out;
    if (!change)
        r = ranges(c, &o);
    else if (!(r = find_region(c, &o, &index))) {
        int e = !strcmp(o.verb, "shrink")
                    ? memclient_region_shrink(c, o.device, o.kind, index, o.ends, o.bytes, &out)
                    : memclient_region_reset(c, o.device, o.kind, index,
                                             o.ends ? o.ends : MEMCLIENT_RANGE_BOTTOM | MEMCLIENT_RANGE_TOP,
                                             &out);
        bool first = true;
        if (e < 0)
            r = memctl_fail(c, "region", !strcmp(o.verb, "shrink") ? "cannot shrink the range"
                                                                    : "cannot reset the range", e);
        else
            print_range(&out, o.region, o.json, &first);
        if (e >= 0 && o.json)
            fputc('\n', stdout);
    }
    memclient_disconnect(c);
    return r;
}
