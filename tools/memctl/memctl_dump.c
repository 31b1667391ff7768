/* memctl dump: the daemon's state as a table, one JSON document, or a tt-metal style CSV
 * report; --watch repeats it until interrupted. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memctl_model.h"
#include "memctl_picture.h"
#include "memctl_service.h"

static volatile sig_atomic_t stop_watch;

static void on_signal(int sig)
{
    (void)sig;
    stop_watch = 1;
}

typedef struct dump_opts {
    uint32_t device;
    bool json, csv, detailed;
    const char *report;
    const char *svg, *html;  /* picture files */
    uint64_t watch_ms; /* 0: once */
    memctl_filter flt;
} dump_opts;

static int parse(int argc, char **argv, dump_opts *o)
{
    const char *cmd = "dump";
    o->device = MEMCLIENT_ALL_DEVICES;
    for (int i = 1; i < argc; i++) {
        int fr = memctl_filter_opt(&o->flt, cmd, argc, argv, &i);
        if (fr < 0)
            return MEMCTL_EXIT_USAGE;
        if (fr > 0)
            continue;
        const char *a = argv[i], *v;
        if (!strcmp(a, "--svg") || !strcmp(a, "--html")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            *(a[2] == 's' ? &o->svg : &o->html) = v;
        } else if (!strcmp(a, "--json")) {
            o->json = true;
        } else if (!strcmp(a, "--csv")) {
            o->csv = true;
        } else if (!strcmp(a, "--report")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (!memctl_csv_report_valid(v))
                return memctl_bad_value(cmd, a, v, "one of memory_usage_summary, "
                                        "l1_usage_summary, detailed_memory_usage");
            o->report = v;
        } else if (!strcmp(a, "--detailed")) {
            o->detailed = true;
        } else if (!strcmp(a, "--watch")) {
            if (!(v = memctl_optarg(cmd, argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_seconds(v, &o->watch_ms) < 0)
                return memctl_bad_value(cmd, a, v, "seconds, e.g. 2 or 0.5, at most 86400");
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: memctl dump [--json | --csv --report NAME | --svg FILE | --html FILE] "
                   "[--detailed] [--watch SEC] [filters]\n"
                   "  --json      one JSON document (schema_version 1; handles and times also "
                   "as strings: *_str)\n"
                   "  --csv       a tt-metal style report: --report memory_usage_summary, "
                   "l1_usage_summary or detailed_memory_usage\n"
                   "  --svg FILE  a picture of every bank group's address space (SVG)\n"
                   "  --html FILE the same picture in a web page, with the largest allocations\n"
                   "  --detailed  also every free and allocated block, and the sessions\n"
                   "  --watch SEC repeat every SEC seconds until interrupted\n"
                   "filters (allocations matching all; the picture draws the others pale):\n%s",
                   memctl_filter_help);
            return -1;
        } else {
            fprintf(stderr, "memctl dump: unknown option '%s'\n", a);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (o->json + o->csv + (o->svg != NULL) + (o->html != NULL) > 1) {
        fprintf(stderr, "memctl dump: --json, --csv, --svg and --html are exclusive\n");
        return MEMCTL_EXIT_USAGE;
    }
    if ((o->svg || o->html) && o->watch_ms) {
        fprintf(stderr, "memctl dump: --watch does not go with a picture file\n");
        return MEMCTL_EXIT_USAGE;
    }
    if (o->flt.has_device)
        o->device = o->flt.device; /* the daemon sends only that device */
    if (o->csv && !o->report) {
        fprintf(stderr, "memctl dump: --csv needs --report memory_usage_summary, "
                        "l1_usage_summary or detailed_memory_usage\n");
        return MEMCTL_EXIT_USAGE;
    }
    if (o->report && !o->csv) {
        fprintf(stderr, "memctl dump: --report goes with --csv\n");
        return MEMCTL_EXIT_USAGE;
    }
    return 0;
}

/* --svg / --html: the whole map, with the filtered-out allocations drawn pale. */
static int picture(memclient_snapshot *s, const dump_opts *o)
{
    const char *path = o->svg ? o->svg : o->html;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "memctl dump: cannot write %s: %s\n", path, strerror(errno));
        memclient_snapshot_free(s);
        return MEMCTL_EXIT_FAIL;
    }
    int r = o->svg ? memctl_picture_svg(f, s, &o->flt) : memctl_picture_html(f, s, &o->flt);
    memclient_snapshot_free(s);
    if (fclose(f) != 0 && r == 0)
        r = -errno;
    if (r < 0) {
        fprintf(stderr, "memctl dump: writing %s: %s\n", path, strerror(-r));
        return MEMCTL_EXIT_FAIL;
    }
    return 0;
}

static int dump_once(const memctl_globals *g, memclient *c, const dump_opts *o, bool clear)
{
    unsigned flags = MEMCLIENT_DUMP_MODELS | MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_SUBALLOCS |
                     MEMCLIENT_DUMP_BANKS;
    if (o->detailed || o->svg || o->html || (o->csv && memctl_csv_report_needs_blocks(o->report)))
        flags |= MEMCLIENT_DUMP_BLOCKS;
    memclient_snapshot *s;
    int r = memclient_dump(c, o->device, flags, &s);
    if (r < 0)
        return memctl_fail(NULL, "dump", "cannot read the daemon's state", r);
    memctl_hide_own_sessions(g, s);
    if (o->svg || o->html)
        return picture(s, o);
    memctl_filter_snapshot(&o->flt, s);
    if (clear)
        fputs("\033[H\033[2J", stdout);
    if (o->json)
        memd_report_json(stdout, s, o->detailed);
    else if (o->csv)
        r = memctl_dump_csv(stdout, s, o->report);
    else {
        memctl_dump_table(stdout, s, o->detailed);
        memctl_models_table(stdout, s);
    }
    memclient_snapshot_free(s);
    if (r < 0) {
        fprintf(stderr, "memctl dump: %s\n", strerror(-r));
        return MEMCTL_EXIT_FAIL;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "memctl dump: writing the output: %s\n", strerror(errno));
        return MEMCTL_EXIT_FAIL;
    }
    return 0;
}

int memctl_cmd_dump(const memctl_globals *g, int argc, char **argv)
{
    dump_opts o = {0};
    memclient *c;
    int r = memctl_parsed_connect(g, parse(argc, argv, &o), &c);
    if (!c)
        return r;
    if (!o.watch_ms) {
        r = dump_once(g, c, &o, false);
        memclient_disconnect(c);
        return r;
    }
    /* Watch: SIGINT/SIGTERM end the loop cleanly (exit 0) between two dumps. */
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    bool clear = !o.json && !o.csv && isatty(STDOUT_FILENO);
    while (!stop_watch) {
        if ((r = dump_once(g, c, &o, clear)) != 0)
            break;
        struct timespec ts = {.tv_sec = (time_t)(o.watch_ms / 1000),
                              .tv_nsec = (long)(o.watch_ms % 1000) * 1000000L};
        while (!stop_watch && nanosleep(&ts, &ts) < 0 && errno == EINTR) {
        }
    }
    memclient_disconnect(c);
    return r;
}
