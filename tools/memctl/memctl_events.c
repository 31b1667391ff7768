/* memctl events: the daemon's event log (sessions, allocation failures, quota hits,
 * reclaims, model loads, protocol errors, reloads); --follow keeps reading new ones until
 * interrupted, each as soon as memd has it (memclient_events_wait: a long poll). An admin
 * sees every event, others those of their own uid. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"


static const char *prio_name(int p)
{
    static const char *const names[] = {"emerg", "alert", "crit", "err", "warning", "notice",
                                        "info", "debug"};
    return p >= 0 && p < 8 ? names[p] : "?";
}

static void print_json(FILE *f, const memclient_event *e)
{
    fprintf(f, "{\"seq\": %" PRIu64 ", \"seq_str\": \"%" PRIu64 "\", \"time_ns\": %" PRIu64
               ", \"time_ns_str\": \"%" PRIu64 "\", \"type\": \"%s\", \"priority\": \"%s\"",
            e->seq, e->seq, e->time_ns, e->time_ns, memclient_event_type_name(e->type),
            prio_name(e->priority));
    if (e->session_id)
        fprintf(f, ", \"session\": %" PRIu32 ", \"pid\": %" PRIu32 ", \"uid\": %" PRIu32
                   ", \"process\": ", e->session_id, e->pid, e->uid);
    if (e->session_id)
        memd_json_str(f, e->comm);
    if (e->device != UINT32_MAX)
        fprintf(f, ", \"device\": %" PRIu32, e->device);
    fprintf(f, ", \"bytes\": %" PRIu64 ", \"message\": ", e->bytes);
    memd_json_str(f, e->message);
    fputs("}\n", f);
}

static void print_text(FILE *f, const memclient_event *e)
{
    char when[32];
    fprintf(f, "%s.%03u %-7s %-14s ", memctl_local_time(e->time_ns, when, sizeof when), (unsigned)(e->time_ns / 1000000ull % 1000),
            prio_name(e->priority), memclient_event_type_name(e->type));
    /* The message comes from the daemon, names in it from other processes: no control
     * characters reach the terminal. */
    for (const char *c = e->message; *c; c++)
        fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, f);
    fputc('\n', f);
}

/* memctl's own sessions come and go with every command: noise in the log unless --all. */
static bool own_event(const memclient_event *e)
{
    return (e->type == MEMD_EVENT_SESSION_OPEN || e->type == MEMD_EVENT_SESSION_CLOSE) &&
           !strcmp(e->comm, MEMCTL_CLIENT_NAME);
}

static int usage_error(const char *a)
{
    fprintf(stderr, "memctl events: unknown option '%s' (usage: memctl events [--follow "
                    "[--from-start]] [--json] [--since SEQ])\n", a);
    return MEMCTL_EXIT_USAGE;
}

int memctl_cmd_events(const memctl_globals *g, int argc, char **argv)
{
    bool follow = false, json = false, from_start = false, have_since = false;
    uint64_t since = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (memctl_log_option(a, &follow, &json))
            continue;
        if (!strcmp(a, "--from-start")) {
            from_start = true;
        } else if (!strcmp(a, "--since")) {
            if (!(v = memctl_optarg("events", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_u64(v, &since) < 0)
                return memctl_bad_value("events", a, v, "an event number");
            have_since = true;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: memctl events [--follow [--from-start]] [--json] [--since SEQ]\n"
                   "  the daemon's last events, oldest first (an admin sees all, others "
                   "their uid's); memctl's own sessions opening and closing only with "
                   "memctl --all\n"
                   "  --follow    print new events as they come, until interrupted\n"
                   "  --from-start  with --follow: first the events the log still has\n"
                   "  --json      one JSON object per line (seq and time_ns also as strings: "
                   "seq_str, time_ns_str)\n"
                   "  --since SEQ start at event number SEQ\n");
            return 0;
        } else {
            return usage_error(a);
        }
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    if (follow)
        memctl_follow_signals();
    r = 0;
    /* --follow starts at the tail, as tail -f does: the log's pages are read, not printed. */
    bool skip = follow && !from_start && !have_since;
    /* --follow: until SIGINT or SIGTERM ends the process (what was read is printed). */
    for (bool first = true;; first = false) {
        memclient_events_page pg;
        /* The first page is what the log has; after it, wait for what comes. */
        int e = follow && !first && !skip ? memclient_events_wait(c, since, 0, &pg)
                                          : memclient_events(c, since, 0, &pg);
        if (e < 0) {
            r = memctl_fail(NULL, "events", "cannot read the event log", e);
            break;
        }
        if (pg.lost && !skip)
            fprintf(stderr, "memctl events: %" PRIu64 " events were overwritten before they "
                            "were read\n", pg.lost);
        for (size_t i = 0; i < pg.n && !skip; i++)
            if (g->all || !own_event(&pg.events[i]))
                (json ? print_json : print_text)(stdout, &pg.events[i]);
        bool more = pg.n > 0 && pg.next_seq > since;
        skip = skip && more; /* at the tail: print from here on */
        since = pg.next_seq;
        memclient_events_page_free(&pg);
        if (!memctl_flush_page(&r))
            break;
        if (!follow && !more)
            break;
    }
    memclient_disconnect(c);
    return r;
}
