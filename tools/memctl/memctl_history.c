/* memctl history: the flight recorder (every allocation, free, refusal and release, pool
 * report, model load and unload, instance and sub-device change, with who and in what
 * context) as a table, JSON lines or a timeline page (--html, memctl_timeline.c),
 * filtered by device, process, client and age; --follow keeps printing new records until
 * interrupted. An admin sees every
 * record, others those of their own uid. The JSON keys are documented in memctl(1) and
 * doc/running.md: tools read them, so they only ever gain keys. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memd/protocol.h" /* memd_hist_type */

#include "json.h"
#include "memctl_service.h"
#include "memctl_timeline.h"
#include "units.h"
#include "text.h"

/* --follow asks again this often: the recorder has no long poll of its own. */
#define FOLLOW_POLL_US 200000

void memctl_history_json(FILE *f, const memclient_hist_event *e)
{
    fprintf(f, "{\"seq\": %" PRIu64 ", \"time_ns\": %" PRIu64 ", \"time_ns_str\": \"%" PRIu64
               "\", \"type\": \"%s\", \"device\": %" PRIu32 ", \"kind\": \"%s\", \"region\": %u"
               ", \"class\": \"%s\", \"handle\": %" PRIu64 ", \"address\": %" PRIu64
               ", \"size_per_bank\": %" PRIu64 ", \"banks\": %" PRIu32 ", \"bytes\": %" PRIu64
               ", \"status\": %" PRId32 ", \"session\": %" PRIu32 ", \"pid\": %" PRIu32
               ", \"uid\": %" PRIu32 ", \"process\": ",
            e->seq, e->time_ns, e->time_ns, memclient_hist_type_name(e->type), e->device,
            memclient_kind_name((memd_kind)e->kind), e->region,
            memclient_class_name((memd_class)e->cls), e->handle, e->address, e->size_per_bank,
            e->banks, e->bytes, e->status, e->session_id, e->pid, e->uid);
    memd_json_str(f, e->comm);
    memd_json_member(f, ", \"client\": ", e->client_name);
    memd_json_member(f, ", \"name\": ", e->name);
    memd_json_member(f, ", \"context\": ", e->context);
    memd_json_member(f, ", \"stack\": ", e->stack);
    if (e->actor_session)
        fprintf(f, ", \"actor\": {\"session\": %" PRIu32 ", \"pid\": %" PRIu32
                   ", \"uid\": %" PRIu32 "}", e->actor_session, e->actor_pid, e->actor_uid);
    fprintf(f, ", \"id\": %" PRIu64 ", \"model_id\": %" PRIu64 ", \"count\": %" PRIu32
               ", \"added\": %" PRIu32 ", \"removed\": %" PRIu32 "}\n",
            e->id, e->model_id, e->count, e->added, e->removed);
}

/* What a record about no single buffer's hold says beyond the columns. */
static void print_object(FILE *f, const memclient_hist_event *e)
{
    char bytes[16];
    memd_human_bytes(e->bytes, bytes, sizeof bytes);
    switch (e->type) {
    case MEMD_HIST_POOL_REPORT:
        fprintf(f, " (%" PRIu32 " sub-allocations, %s pooled: +%" PRIu32 " -%" PRIu32 ")",
                e->count, bytes, e->added, e->removed);
        break;
    case MEMD_HIST_MODEL_LOAD:
    case MEMD_HIST_MODEL_UNLOAD:
        fprintf(f, " (model %" PRIu64 ", %s of code and constants)", e->id, bytes);
        break;
    case MEMD_HIST_INSTANCE_CREATE:
    case MEMD_HIST_INSTANCE_RELEASE:
        fprintf(f, " (instance %" PRIu64 " of model %" PRIu64 ", %s)", e->id, e->model_id,
                bytes);
        break;
    case MEMD_HIST_SUBDEV_DEFINE:
    case MEMD_HIST_SUBDEV_BIND:
        fprintf(f, " (%" PRIu32 " banks, budget %s)", e->count, e->bytes ? bytes : "none");
        break;
    default:
        break;
    }
}

void memctl_hist_print_header(FILE *f)
{
    fprintf(f, "%-23s %-16s %3s %-9s %-11s %18s %10s %5s %8s %7s %-7s %-15s %-16s %s\n", "TIME",
            "TYPE", "DEV", "REGION", "CLASS", "ADDRESS", "PER BANK", "BANKS", "HANDLE", "PID",
            "SESSION", "PROCESS", "NAME", "CONTEXT");
}

void memctl_hist_print_text(FILE *f, const memclient_hist_event *e)
{
    char when[32], region[16], per_bank[16], comm[64], name[160], ctx[300];
    snprintf(region, sizeof region, "%s#%u", memclient_kind_name((memd_kind)e->kind), e->region);
    /* Names and contexts come from other processes: escaped for the terminal. */
    const char *who = e->client_name[0] ? e->client_name : e->comm;
    fprintf(f, "%s.%03u %-16s %3" PRIu32 " %-9s %-11s %#18" PRIx64 " %10s %5" PRIu32 " %8" PRIu64
               " %7" PRIu32 " %-7" PRIu32 " %-15s %-16s %s",
            memctl_local_time(e->time_ns, when, sizeof when),
            (unsigned)(e->time_ns / 1000000ull % 1000), memclient_hist_type_name(e->type),
            e->device, region, memclient_class_name((memd_class)e->cls), e->address,
            memd_human_bytes(e->type == MEMD_HIST_FAIL ? e->bytes : e->size_per_bank, per_bank,
                               sizeof per_bank),
            e->banks, e->handle, e->pid, e->session_id, memd_text_escape(who, comm, sizeof comm),
            memd_text_escape(e->name[0] ? e->name : "-", name, sizeof name),
            memd_text_escape(e->context[0] ? e->context : "-", ctx, sizeof ctx));
    if (e->type == MEMD_HIST_FAIL)
        fprintf(f, " (%s)", strerror(-e->status));
    if (e->actor_session)
        fprintf(f, " (by admin session %" PRIu32 ", pid %" PRIu32 ", uid %" PRIu32 ")",
                e->actor_session, e->actor_pid, e->actor_uid);
    print_object(f, e);
    fputc('\n', f);
}

static const char usage_line[] = "usage: memctl history [--json | --html FILE] [--device N] "
                                 "[--pid P] [--client NAME] [--since DURATION] [--follow]\n";

/* --html FILE: the records so far as a timeline page. */
static int write_page(memclient *c, const memclient_history_filter *f, const char *path)
{
    FILE *out = fopen(path, "w");
    if (!out) {
        fprintf(stderr, "memctl history: cannot write %s: %s\n", path, strerror(errno));
        return MEMCTL_EXIT_FAIL;
    }
    int r = memctl_timeline_html(out, c, f);
    if (fclose(out) != 0 && r == 0)
        r = -errno;
    if (r < 0)
        return memctl_fail(c, "history", path, r);
    return 0;
}

int memctl_cmd_history(const memctl_globals *g, int argc, char **argv)
{
    bool follow = false, json = false;
    const char *html = NULL;
    memclient_history_filter f = {.device = MEMCLIENT_ANY_DEVICE};
    uint64_t age_ms = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (memctl_log_option(a, &follow, &json))
            continue;
        if (!strcmp(a, "--html")) {
            if (!(html = memctl_optarg("history", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(a, "--device") || !strcmp(a, "--pid") || !strcmp(a, "--client") ||
                   !strcmp(a, "--since")) {
            if (!(v = memctl_optarg("history", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (!strcmp(a, "--device") && memctl_parse_u32(v, &f.device) < 0)
                return memctl_bad_value("history", a, v, "a device id");
            if (!strcmp(a, "--pid") && (memctl_parse_u32(v, &f.pid) < 0 || f.pid == 0))
                return memctl_bad_value("history", a, v, "a process id");
            if (!strcmp(a, "--client")) {
                if (!*v || strlen(v) >= 32)
                    return memctl_bad_value("history", a, v, "a client name of 1 to 31 bytes");
                f.client = v;
            }
            if (!strcmp(a, "--since") && memctl_parse_duration(v, &age_ms) < 0)
                return memctl_bad_value("history", a, v, "a duration such as 90s, 10m, 2h or 1d");
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s"
                   "  the flight recorder: allocations, frees, refusals, releases, pool "
                   "reports,\n  model loads and unloads, instances and sub-devices, oldest "
                   "first\n  (an admin sees all, others their uid's)\n"
                   "  --json            one JSON object per line (keys: memctl(1))\n"
                   "  --html FILE       a timeline page: per region, address over time, each\n"
                   "                    allocation a band coloured by process (hover, zoom,\n"
                   "                    pan, peak marker); one file, no network\n"
                   "  --device N        only device N\n"
                   "  --pid P           only process P\n"
                   "  --client NAME     only sessions with this client or process name\n"
                   "  --since DURATION  only the last DURATION (90s, 10m, 2h, 1d)\n"
                   "  --follow          keep printing new records until interrupted\n",
                   usage_line);
            return 0;
        } else {
            fprintf(stderr, "memctl history: unknown option '%s' (%s)", a, usage_line);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (html && (json || follow)) {
        fprintf(stderr, "memctl history: --html writes the records so far: not with --json "
                        "or --follow\n");
        return MEMCTL_EXIT_USAGE;
    }
    if (age_ms) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        uint64_t now_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        f.since_ns = now_ns > age_ms * 1000000ull ? now_ns - age_ms * 1000000ull : 0;
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    if (html) {
        r = write_page(c, &f, html);
        memclient_disconnect(c);
        return r;
    }
    if (follow)
        memctl_follow_signals();
    if (!json)
        memctl_hist_print_header(stdout);
    uint64_t since = 0;
    for (;;) {
        memclient_history_page pg;
        int e = memclient_history(c, since, 0, &f, &pg);
        if (e < 0) {
            r = memctl_fail(NULL, "history", "cannot read the flight recorder", e);
            break;
        }
        if (pg.capacity == 0 && !follow)
            fprintf(stderr, "memctl history: the flight recorder is off (limits: "
                            "history_events: 0 in memd.yaml)\n");
        if (pg.lost)
            fprintf(stderr, "memctl history: %" PRIu64 " records were overwritten before they "
                            "were read\n", pg.lost);
        for (size_t i = 0; i < pg.n; i++)
            (json ? memctl_history_json : memctl_hist_print_text)(stdout, &pg.events[i]);
        bool more = pg.next_seq > since && pg.n > 0;
        since = pg.next_seq;
        memclient_history_page_free(&pg);
        if (!memctl_flush_page(&r))
            break;
        if (!more && !follow)
            break;
        if (!more)
            usleep(FOLLOW_POLL_US);
    }
    memclient_disconnect(c);
    return r;
}
