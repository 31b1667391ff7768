/* memctl subdev define: an admin defines a sub-device (a named subset of one bank group's
 * banks, optionally with a byte budget and a window) without editing memd.yaml; memd keeps it in its
 * state store. Sessions bind to it themselves (memclient_subdev_bind); memctl devices and
 * dump show it with its use. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banklist.h"
#include "memctl_service.h"

static const char subdev_usage[] =
    "usage: memctl subdev define NAME --device N --group G (--banks LIST | --cores X:Y...)\n"
    "                            [--budget SIZE] [--overlap NAME[,NAME...]] [--window SIZE]\n"
    "                            [--json]\n"
    "  group: sram (l1) or dram (global); banks: ids and ranges, e.g. 0-31 or 0-3,8\n"
    "  cores: logical core columns:rows, e.g. 0-7:0-3 (every bank on those cores; the\n"
    "         device's banks must have cores, as tt-metal's do); repeat for more\n"
    "  budget: bytes over all its banks; overlap: sub-devices it may share banks with\n"
    "  window: bytes per bank it owns at the bottom of the group's first allocatable\n"
    "          region (tt-metal's local L1): its buffers go there, no other buffer does\n"
    "  needs root or the daemon's admin group; memd keeps it across restarts\n";

static uint32_t banks[MEMD_BANKSET_MAX];

/* Logical core coordinates are small (a tt-metal grid is tens of cores wide). */
#define CORE_MAX 1024u
#define RECT_MAX 16

typedef struct subdev_opts {
    memclient_subdev sd;
    char overlap[4][MEMD_NAME_MAX];
    const char *given;             /* --banks as given */
    char *picked;                  /* the banks --cores picked, as ranges (malloc'd) */
    bool dev, group, json;
    uint32_t nrects;               /* --cores: column and row lists of each rectangle */
    uint32_t ncols[RECT_MAX], nrows[RECT_MAX];
    uint32_t cols[RECT_MAX][CORE_MAX], rows[RECT_MAX][CORE_MAX];
} subdev_opts;

/* --cores X:Y (two coordinate lists) into the next rectangle. */
static int parse_cores(const char *v, subdev_opts *o)
{
    const char *colon = strchr(v, ':');
    char half[2][128];
    if (o->nrects == RECT_MAX || !colon || (size_t)(colon - v) >= sizeof half[0] ||
        strlen(colon + 1) >= sizeof half[1])
        return memctl_bad_value("subdev", "--cores", v, "columns:rows of logical cores, e.g. "
                                "0-7:0-3 (at most 16 --cores)");
    snprintf(half[0], sizeof half[0], "%.*s", (int)(colon - v), v);
    snprintf(half[1], sizeof half[1], "%s", colon + 1);
    uint32_t *axis[2] = {o->cols[o->nrects], o->rows[o->nrects]};
    uint32_t *n[2] = {&o->ncols[o->nrects], &o->nrows[o->nrects]}, bad;
    for (int k = 0; k < 2; k++)
        if (memd_parse_bank_list(half[k], CORE_MAX, axis[k], CORE_MAX, n[k], &bad) < 0)
            return memctl_bad_value("subdev", "--cores", v, "columns:rows of logical cores "
                                    "as increasing ids and ranges below 1024, e.g. 0-7:0-3");
    o->nrects++;
    return 0;
}

/* The banks of the device's group whose logical core lies in one of the --cores
 * rectangles: memclient_snapshot_banks_on_cores for each, over one dump. 0, or an exit
 * code after the message. */
static int resolve_cores(memclient *c, subdev_opts *o)
{
    static uint32_t got[MEMD_BANKSET_MAX];
    static bool on[MEMD_BANKSET_MAX];
    memset(on, 0, sizeof on);
    memclient_snapshot *s;
    int r = memclient_dump(c, o->sd.device, MEMCLIENT_DUMP_BANKS, &s);
    if (r < 0)
        return memctl_fail(NULL, "subdev", "cannot read the device's banks", r);
    for (uint32_t k = 0; k < o->nrects; k++) {
        r = memclient_snapshot_banks_on_cores(s, o->sd.device, o->sd.kind, o->cols[k],
                                              o->ncols[k], o->rows[k], o->nrows[k], got,
                                              MEMD_BANKSET_MAX);
        if (r == -ENXIO)
            continue; /* another rectangle may hold some */
        if (r < 0)
            break;
        for (int i = 0; i < r && i < (int)MEMD_BANKSET_MAX; i++)
            on[got[i]] = true;
    }
    memclient_snapshot_free(s);
    if (r == -ENOENT || r == -ENODATA) { /* the device's facts, not a failure */
        memclient_error e;
        memclient_last_error(&e);
        fprintf(stderr, "memctl subdev: %s\n", e.message);
        return MEMCTL_EXIT_USAGE;
    }
    if (r < 0 && r != -ENXIO)
        return memctl_fail(NULL, "subdev", "cannot read the device's banks", r);
    uint32_t n = 0;
    for (uint32_t b = 0; b < MEMD_BANKSET_MAX; b++)
        if (on[b])
            banks[n++] = b;
    if (n == 0) {
        fprintf(stderr, "memctl subdev: no bank lies on these cores\n");
        return MEMCTL_EXIT_USAGE;
    }
    o->sd.banks = banks;
    o->sd.nbanks = n;
    memclient_subdev_rec listed = {.bank_ids = banks, .nbanks = n};
    if (!(o->picked = memd_report_subdev_banks(&listed))) {
        fprintf(stderr, "memctl subdev: out of memory\n");
        return MEMCTL_EXIT_FAIL;
    }
    return 0;
}

static int parse_overlap(const char *v, subdev_opts *o)
{
    const char *p = v;
    for (int n = 0; *p; n++) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (n == 4 || len == 0 || len >= MEMD_NAME_MAX)
            return memctl_bad_value("subdev", "--overlap", v, "1 to 4 names of 1 to 63 bytes");
        memcpy(o->overlap[n], p, len);
        o->overlap[n][len] = '\0';
        o->sd.overlap[n] = o->overlap[n];
        p = end ? end + 1 : p + len;
    }
    return 0;
}

static int option(const char *a, const char *v, subdev_opts *o)
{
    if (!strcmp(a, "--device")) {
        o->dev = true;
        return memctl_parse_u32(v, &o->sd.device) < 0
                   ? memctl_bad_value("subdev", a, v, "a device id")
                   : 0;
    }
    if (!strcmp(a, "--group")) {
        o->group = true;
        if (!strcmp(v, "sram") || !strcmp(v, "l1"))
            o->sd.kind = MEMD_KIND_SRAM;
        else if (!strcmp(v, "dram") || !strcmp(v, "global"))
            o->sd.kind = MEMD_KIND_DRAM;
        else
            return memctl_bad_value("subdev", a, v, "sram (l1) or dram (global)");
        return 0;
    }
    if (!strcmp(a, "--banks")) {
        uint32_t n;
        int e = memctl_parse_banks("subdev", a, v, banks, &n);
        if (e)
            return e;
        o->sd.banks = banks;
        o->sd.nbanks = n;
        o->given = v;
        return 0;
    }
    if (!strcmp(a, "--cores"))
        return parse_cores(v, o);
    if (!strcmp(a, "--budget"))
        return memctl_parse_size(v, &o->sd.budget) < 0
                   ? memctl_bad_value("subdev", a, v, "a size, e.g. 8MiB")
                   : 0;
    if (!strcmp(a, "--overlap"))
        return parse_overlap(v, o);
    if (!strcmp(a, "--window"))
        return memctl_parse_size(v, &o->sd.window) < 0
                   ? memctl_bad_value("subdev", a, v, "a size, e.g. 64KiB")
                   : 0;
    fprintf(stderr, "memctl subdev: unknown option '%s'\n%s", a, subdev_usage);
    return MEMCTL_EXIT_USAGE;
}

/* 0 when the command line is complete; -1 after --help; an exit code otherwise. */
static int parse(int argc, char **argv, subdev_opts *o)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(subdev_usage, stdout);
        return -1;
    }
    if (argc < 3 || strcmp(argv[1], "define") != 0 || argv[2][0] == '-') {
        fputs(subdev_usage, stderr);
        return MEMCTL_EXIT_USAGE;
    }
    if (strlen(argv[2]) >= MEMD_NAME_MAX)
        return memctl_bad_value("subdev", "NAME", argv[2], "1 to 63 bytes");
    o->sd.name = argv[2];
    for (int i = 3; i < argc; i++) {
        int rc;
        if (!strcmp(argv[i], "--json")) {
            o->json = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(subdev_usage, stdout);
            return -1;
        } else {
            const char *v = memctl_optarg("subdev", argc, argv, &i);
            if (!v)
                return MEMCTL_EXIT_USAGE;
            if ((rc = option(argv[i - 1], v, o)) != 0)
                return rc;
        }
    }
    if (!o->dev || !o->group || !o->sd.nbanks == !o->nrects) {
        fprintf(stderr, "memctl subdev: define needs --device, --group and either --banks or "
                "--cores\n%s", subdev_usage);
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

int memctl_cmd_subdev(const memctl_globals *g, int argc, char **argv)
{
    static subdev_opts o; /* 128 KiB of core lists */
    memset(&o, 0, sizeof o);
    memclient *c;
    int r = memctl_parsed_connect(g, parse(argc, argv, &o), &c);
    if (!c)
        return r;
    if (o.nrects && (r = resolve_cores(c, &o)) != 0) {
        memclient_disconnect(c);
        free(o.picked);
        return r;
    }
    const char *list = o.picked ? o.picked : o.given;
    r = memclient_subdev_define(c, &o.sd);
    char what[128];
    snprintf(what, sizeof what, "cannot define sub-device '%s'", o.sd.name);
    int code = r < 0 ? memctl_fail(NULL, "subdev", what, r) : 0;
    if (r == 0 && o.json) {
        printf("{\"defined\": ");
        memd_json_str(stdout, o.sd.name);
        printf(", \"device\": %" PRIu32 ", \"group\": \"%s\", \"banks\": ", o.sd.device,
               memclient_kind_name(o.sd.kind));
        memd_json_str(stdout, list);
        printf(", \"nbanks\": %" PRIu32 ", \"budget\": %" PRIu64 ", \"window\": %" PRIu64 "}\n",
               o.sd.nbanks, o.sd.budget, o.sd.window);
    } else if (r == 0) {
        printf("defined sub-device %s: device %" PRIu32 " %s banks %s (%" PRIu32 ")%s",
               o.sd.name, o.sd.device, memclient_kind_name(o.sd.kind), list, o.sd.nbanks,
               o.sd.budget ? ", with a budget" : "");
        if (o.sd.window)
            printf(", a window of %" PRIu64 " bytes per bank", o.sd.window);
        printf("\n");
    }
    memclient_disconnect(c);
    free(o.picked);
    return code;
}
