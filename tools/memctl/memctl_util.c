/* memctl — helpers shared by the service subcommands. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memd/protocol.h"
#include "units.h"
#include "banklist.h"
#include "memctl_service.h"

int memctl_connect(const memctl_globals *g, memclient **out)
{
    return memctl_connect_flags(g, 0, out);
}

int memctl_parsed_connect(const memctl_globals *g, int parsed, memclient **out)
{
    *out = NULL;
    if (parsed)
        return parsed < 0 ? 0 : parsed;
    return memctl_connect(g, out);
}

int memctl_connect_flags(const memctl_globals *g, unsigned flags, memclient **out)
{
    int r = memclient_connect_flags(g->socket_path, MEMCTL_CLIENT_NAME, flags, out);
    if (r == 0)
        return 0;
    memclient_error e;
    memclient_last_error(&e);
    fprintf(stderr, "memctl: %s\n", e.message);
    return r == -EACCES || r == -EPERM ? MEMCTL_EXIT_PERM : MEMCTL_EXIT_CONNECT;
}

int memctl_hold(memclient *c, const sigset_t *set, const char *cmd)
{
    const struct timespec tick = {.tv_sec = 0, .tv_nsec = 200 * 1000000L};
    for (;;) {
        int sig = sigtimedwait(set, NULL, &tick);
        if (sig > 0)
            return sig;
        /* -EISCONN: the daemon is there; 0: it restarted and the session is back. */
        int r = memclient_reconnect(c, MEMCLIENT_RECONNECT_MS);
        if (r == 0) {
            fprintf(stderr, "memctl %s: memd restarted; session reclaimed, still holding\n", cmd);
        } else if (r != -EISCONN) {
            memclient_error e;
            memclient_last_error(&e);
            fprintf(stderr, "memctl %s: the daemon went away and the hold is lost: %s\n", cmd,
                    e.message);
            return r;
        }
    }
}

/* memctl(1)'s exit code for a negative errno. */
static int exit_code(int err)
{
    switch (err) {
    case 0:
        return MEMCTL_EXIT_OK;
    case -EPERM:
    case -EACCES:
        return MEMCTL_EXIT_PERM;
    case -ENOMEM:
    case -EDQUOT:
        return MEMCTL_EXIT_NOMEM;
    case -ENOTCONN:
    case -ECONNRESET:
    case -EPIPE:
    case -ECONNREFUSED:
        return MEMCTL_EXIT_CONNECT;
    default:
        return MEMCTL_EXIT_FAIL;
    }
}

int memctl_fail(memclient *c, const char *cmd, const char *what, int err)
{
    /* The code's meaning first (what a script or a person acts on), then the specifics.
     * memctl fails this way only once connected, so -ENOENT came from the daemon: the
     * library's "or no socket at that path" would send the operator the wrong way. */
    const char *meaning = err == -ENOENT ? (strcmp(cmd, "limit") ? "no such allocation"
                                                                 : "no such limit")
                                         : memclient_strerror(err);
    memclient_error e;
    memclient_last_error(&e);
    if (e.status != err) /* the library did not record this one: say what we know */
        snprintf(e.message, sizeof(e.message), "%s", meaning);
    else if (e.detail == MEMCLIENT_DETAIL_LIMIT) /* not the region: a cgroup's limit */
        meaning = "over a cgroup's device memory limit";
    if (!strcmp(e.message, meaning))
        fprintf(stderr, "memctl %s: %s: %s\n", cmd, what, meaning);
    else
        fprintf(stderr, "memctl %s: %s: %s\n  detail: %s\n", cmd, what, meaning, e.message);
    if (e.status == err && (e.detail == MEMCLIENT_DETAIL_NOMEM || e.detail == MEMCLIENT_DETAIL_QUOTA)) {
        /* Name the region if the daemon still answers (a dump is cheap next to an OOM). */
        char rbuf[24];
        const char *region = NULL;
        memclient_snapshot *s = NULL;
        if (c && memclient_dump(c, e.device, 0, &s) == 0)
            region = memd_report_region_name(s, e.device, e.kind, e.region, rbuf, sizeof(rbuf));
        else
            region = (snprintf(rbuf, sizeof(rbuf), "#%" PRIu32, e.region), rbuf);
        fprintf(stderr,
                "  %s on device %" PRIu32 ", %s bank group, region %s, class %s:\n"
                "    requested          %" PRIu64 " bytes\n"
                "    size per bank      %" PRIu64 " bytes\n"
                "    allocated          %" PRIu64 " bytes per bank\n"
                "    free               %" PRIu64 " bytes per bank\n"
                "    largest free block %" PRIu64 " bytes\n",
                e.detail == MEMCLIENT_DETAIL_QUOTA ? "quota exceeded" : "out of memory",
                e.device, memclient_kind_name(e.kind), region, memclient_class_name(e.cls),
                e.requested, e.size_per_bank, e.allocated, e.free, e.largest_free);
        memclient_snapshot_free(s);
        if (e.detail == MEMCLIENT_DETAIL_NOMEM && e.free >= e.size_per_bank)
            fprintf(stderr, "  enough bytes are free but not in one block: the region is "
                            "fragmented\n");
    }
    if (e.status == err && e.postmortem)
        fprintf(stderr, "  post-mortem %" PRIu64 " saved: memctl postmortem %" PRIu64 "\n",
                e.postmortem, e.postmortem);
    return exit_code(err);
}

int memctl_parse_u64(const char *s, uint64_t *out)
{
    return memd_parse_u64(s, out);
}

int memctl_parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    int r = memctl_parse_u64(s, &v);
    if (r < 0)
        return r;
    if (v > UINT32_MAX)
        return -ERANGE;
    *out = (uint32_t)v;
    return 0;
}

int memctl_parse_size(const char *s, uint64_t *out)
{
    int rc = memd_parse_size(s, out, NULL);
    return rc == -ENOENT ? -EINVAL : rc;
}

int memctl_parse_budget(const char *cmd, const char *opt, const char *v, uint32_t *ms)
{
    uint64_t x;
    if (memctl_parse_u64(v, &x) < 0) {
        memctl_bad_value(cmd, opt, v, "milliseconds");
        return -EINVAL;
    }
    if (x > MEMD_PLAN_BUDGET_MAX_MS) {
        fprintf(stderr, "memctl %s: %s %s: the daemon plans for at most %u ms; for a longer "
                "search plan offline (memctl plan INPUT.csv --budget-ms %s --output PLAN.csv) "
                "and submit the result with plan-submit --validate\n", cmd, opt, v,
                (unsigned)MEMD_PLAN_BUDGET_MAX_MS, v);
        return -EINVAL;
    }
    *ms = (uint32_t)x;
    return 0;
}

int memctl_parse_seconds(const char *s, uint64_t *ms)
{
    if (!s || !*s)
        return -EINVAL;
    const char *dot = strchr(s, '.');
    char whole[16];
    size_t n = dot ? (size_t)(dot - s) : strlen(s);
    if (n == 0 || n >= sizeof(whole))
        return -EINVAL;
    memcpy(whole, s, n);
    whole[n] = '\0';
    uint64_t sec;
    if (whole[0] == '0' && (whole[1] == 'x' || whole[1] == 'X'))
        return -EINVAL;
    int r = memctl_parse_u64(whole, &sec);
    if (r < 0)
        return r;
    uint64_t frac = 0;
    if (dot) {
        const char *f = dot + 1;
        size_t fl = strlen(f);
        if (fl == 0 || fl > 3)
            return -EINVAL;
        for (size_t i = 0; i < 3; i++) {
            char ch = i < fl ? f[i] : '0';
            if (ch < '0' || ch > '9')
                return -EINVAL;
            frac = frac * 10 + (uint64_t)(ch - '0');
        }
    }
    if (sec > 86400 || (sec == 86400 && frac))
        return -ERANGE;
    *ms = sec * 1000 + frac;
    return *ms ? 0 : -ERANGE;
}

const char *memctl_optarg(const char *cmd, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "memctl %s: %s needs a value\n", cmd, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int memctl_bad_value(const char *cmd, const char *opt, const char *v, const char *why)
{
    fprintf(stderr, "memctl %s: bad value for %s: '%s' (%s)\n", cmd, opt, v, why);
    return MEMCTL_EXIT_USAGE;
}

const char *memctl_human_age(uint64_t ns, char *buf, size_t len)
{
    uint64_t s = ns / 1000000000ull;
    if (s >= 86400)
        snprintf(buf, len, "%" PRIu64 "d%02" PRIu64 "h", s / 86400, s % 86400 / 3600);
    else if (s >= 3600)
        snprintf(buf, len, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s % 3600 / 60);
    else if (s >= 60)
        snprintf(buf, len, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
    else
        snprintf(buf, len, "%" PRIu64 "s", s);
    return buf;
}

const char *memctl_local_time(uint64_t ns, char *buf, size_t len)
{
    time_t t = (time_t)(ns / 1000000000ull);
    struct tm tm;
    snprintf(buf, len, "?");
    if (localtime_r(&t, &tm))
        strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

void memctl_csv_str(FILE *f, const char *raw)
{
    const char *s = TX(raw);
    if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void memctl_prom_label(FILE *f, const char *raw)
{
    const char *s = TX(raw);
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", f);
        else if (*s == '"')
            fputs("\\\"", f);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

int memctl_fetch(const memctl_globals *g, const char *cmd, uint32_t flags,
                 memclient_snapshot **out)
{
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, flags, out);
    memclient_disconnect(c);
    if (r < 0)
        return memctl_fail(NULL, cmd, "cannot read the daemon's state", r);
    memctl_hide_own_sessions(g, *out);
    return 0;
}

bool memctl_own_session(const memclient_session_rec *x)
{
    return !strcmp(x->client_name, MEMCTL_CLIENT_NAME) && x->allocations == 0;
}

void memctl_hide_own_sessions(const memctl_globals *g, memclient_snapshot *s)
{
    if (g->all)
        return;
    size_t n = 0;
    for (size_t i = 0; i < s->nsessions; i++)
        if (!memctl_own_session(&s->sessions[i]))
            s->sessions[n++] = s->sessions[i];
    uint32_t hidden = (uint32_t)(s->nsessions - n);
    s->server.sessions = s->server.sessions > hidden ? s->server.sessions - hidden : 0;
    s->nsessions = n;
}

int memctl_show_snapshot(const memctl_globals *g, int argc, char **argv, const char *help,
                         memctl_snapshot_fn fn)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: memctl %s\n  %s\n", argv[0], help);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "memctl %s: unexpected argument '%s' (usage: memctl %s)\n", argv[0],
                argv[1], argv[0]);
        return MEMCTL_EXIT_USAGE;
    }
    memclient_snapshot *s;
    int r = memctl_fetch(g, argv[0], MEMCLIENT_DUMP_POOLS, &s);
    if (r)
        return r;
    fn(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}

int memctl_parse_banks(const char *cmd, const char *opt, const char *v, uint32_t *ids, uint32_t *n)
{
    uint32_t bad;
    int e = memd_parse_bank_list(v, MEMD_BANKSET_MAX, ids, MEMD_BANKSET_MAX, n, &bad);
    if (e == 0)
        return 0;
    if (e == -ERANGE)
        fprintf(stderr, "memctl %s: %s '%s': bank id too large at offset %u (ids are below "
                "%u; the device may have fewer banks)\n", cmd, opt, v, bad, MEMD_BANKSET_MAX);
    else
        fprintf(stderr, "memctl %s: %s '%s': expected increasing bank ids and ranges like "
                "0-3,8 at offset %u\n", cmd, opt, v, bad);
    return MEMCTL_EXIT_USAGE;
}

void memctl_print_error(const char *prefix, const memd_error *e)
{
    char msg[sizeof e->file + sizeof e->msg + 32];
    memd_error_format(e, msg, sizeof msg);
    fprintf(stderr, "%s%s\n", prefix, msg);
}

/* --follow ends with SIGINT or SIGTERM, most often while memd holds the request: every
 * page read is printed and flushed already, so leave at once, successfully. */
static void on_follow_signal(int sig)
{
    (void)sig;
    _exit(0);
}

void memctl_follow_signals(void)
{
    struct sigaction sa = {.sa_handler = on_follow_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN); /* a reader that went away: stop quietly (EPIPE) */
}

bool memctl_log_option(const char *a, bool *follow, bool *json)
{
    if (!strcmp(a, "--follow") || !strcmp(a, "-f"))
        *follow = true;
    else if (!strcmp(a, "--json"))
        *json = true;
    else
        return false;
    return true;
}

bool memctl_flush_page(int *exit_code)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return true;
    *exit_code = errno == EPIPE ? 0 : MEMCTL_EXIT_FAIL;
    return false;
}

int memctl_parse_duration(const char *s, uint64_t *ms)
{
    static const struct {
        char unit;
        uint64_t ms;
    } units[] = {{'s', 1000}, {'m', 60000}, {'h', 3600000}, {'d', 86400000}};
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n >= 24)
        return -EINVAL;
    uint64_t scale = 1000;
    char num[24];
    memcpy(num, s, n + 1);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (num[n - 1] == units[i].unit) {
            scale = units[i].ms;
            num[--n] = '\0';
        }
    uint64_t v;
    if (n == 0 || memctl_parse_u64(num, &v) < 0 || v == 0 || v > UINT64_MAX / scale / 1000000u)
        return -EINVAL;
    *ms = v * scale;
    return 0;
}

const char *memctl_mode_text(memd_bank_mode m)
{
    return m == MEMD_BANKS_PER_BANK         ? "per-bank"
           : m == MEMD_BANKS_RANGE_LOCKSTEP ? "range-lockstep"
                                            : memclient_bank_mode_name(m);
}
