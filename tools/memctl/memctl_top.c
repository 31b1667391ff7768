/* memctl top: a live view of the daemon, like pw-top or nvtop (ncurses): the bank groups
 * with their use, the processes holding memory and the largest buffers, refreshed every
 * interval and cut to the terminal's size. Keys: q quit, s next sort key, r reverse,
 * / name filter (a glob), c next class, d next device, x clear filters, space refresh.
 * The command-line filters (--pid, --session, --name, --class, --device), --sort and
 * --reverse are the starting state. --json is the batch mode (top -b): the same view, one
 * JSON document per line and interval, without a terminal. */
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <ncurses.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "units.h"
#include "memctl_filter.h"
#include "memctl_service.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

typedef enum { SORT_BYTES, SORT_ALLOCS, SORT_PID, SORT_NAME, SORT_COUNT } sort_key;
static const char *const sort_names[SORT_COUNT] = {"bytes", "allocs", "pid", "name"};

typedef struct top {
    const memctl_globals *g;
    memctl_filter flt;
    char glob[64];
    sort_key sort;
    bool reverse;
    uint64_t interval_ms;
    char status[320];          /* the bottom line: errors */
    bool json;
    uint64_t iterations;       /* --json: documents to print, 0 until interrupted */
    uint64_t limit;            /* --json: buffers per document */
} top;

/* What the view shows: the processes (the --pid filter applied) and the buffers that
 * match the filters, both in the view's order. */
typedef struct view {
    memd_report_procs ps;
    bool have_ps;
    const memclient_alloc_info **list;
    size_t n;
} view;

static sort_key g_sort; /* for the qsort comparators */
static bool g_reverse;

static int cmp_proc(const void *a, const void *b)
{
    const memd_report_proc *x = a, *y = b;
    int c;
    switch (g_sort) {
    case SORT_ALLOCS: c = x->allocations < y->allocations ? 1 : x->allocations > y->allocations ? -1 : 0; break;
    case SORT_PID: c = x->pid < y->pid ? -1 : x->pid > y->pid; break;
    case SORT_NAME: c = strcmp(x->comm, y->comm); break;
    default: c = x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0; break;
    }
    return g_reverse ? -c : c;
}

static int cmp_buf(const void *a, const void *b)
{
    const memclient_alloc_info *x = *(const memclient_alloc_info *const *)a;
    const memclient_alloc_info *y = *(const memclient_alloc_info *const *)b;
    int c;
    switch (g_sort) {
    case SORT_PID: c = x->pid < y->pid ? -1 : x->pid > y->pid; break;
    case SORT_NAME: c = strcmp(x->name, y->name); break;
    default: /* bytes (allocs has no meaning per buffer: by size too) */
        c = x->buf.size_per_bank < y->buf.size_per_bank ? 1
            : x->buf.size_per_bank > y->buf.size_per_bank ? -1 : 0;
        break;
    }
    if (c == 0)
        c = x->buf.handle < y->buf.handle ? -1 : x->buf.handle > y->buf.handle;
    return g_reverse ? -c : c;
}

static void view_make(const top *t, const memclient_snapshot *s, view *v)
{
    *v = (view){0};
    g_sort = t->sort;
    g_reverse = t->reverse;
    if (memd_report_processes(s, &v->ps) == 0) {
        v->have_ps = true;
        size_t k = 0;
        for (size_t i = 0; i < v->ps.n; i++)
            if (!t->flt.has_pid || v->ps.procs[i].pid == t->flt.pid)
                v->ps.procs[k++] = v->ps.procs[i];
        v->ps.n = k;
        qsort(v->ps.procs, v->ps.n, sizeof *v->ps.procs, cmp_proc);
    }
    v->list = malloc((s->nallocs ? s->nallocs : 1) * sizeof *v->list);
    for (size_t i = 0; v->list && i < s->nallocs; i++)
        if (memctl_filter_match(&t->flt, &s->allocs[i]))
            v->list[v->n++] = &s->allocs[i];
    if (v->list)
        qsort(v->list, v->n, sizeof *v->list, cmp_buf);
}

static void view_free(view *v)
{
    if (v->have_ps)
        memd_report_processes_free(&v->ps);
    free(v->list);
}

static double use_pct(const memd_report_group_bytes *u)
{
    return u->total ? 100.0 * (double)u->used / (double)u->total : 0;
}

/* One line at row y, cut to the screen's width. */
static void line(int y, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void line(int y, int attr, const char *fmt, ...)
{
    if (y >= LINES)
        return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *p = buf; *p; p++) /* names from other processes: no control characters */
        if ((unsigned char)*p < 0x20)
            *p = '?';
    attron(attr);
    mvaddnstr(y, 0, buf, COLS);
    attroff(attr);
}

static void draw(top *t, const memclient_snapshot *s)
{
    erase();
    int y = 0;
    char up[24];
    uint64_t up_ns = s->server.now_ns > s->server.start_ns ? s->server.now_ns - s->server.start_ns : 0;
    char filters[160] = "";
    size_t fl = 0;
    if (t->flt.has_device)
        fl += (size_t)snprintf(filters + fl, sizeof filters - fl, " device=%u", t->flt.device);
    if (t->flt.has_class && fl < sizeof filters)
        fl += (size_t)snprintf(filters + fl, sizeof filters - fl, " class=%s",
                               memclient_class_name(t->flt.cls));
    if (t->flt.name_glob && fl < sizeof filters)
        fl += (size_t)snprintf(filters + fl, sizeof filters - fl, " name=%s", t->flt.name_glob);
    if (t->flt.has_pid && fl < sizeof filters)
        fl += (size_t)snprintf(filters + fl, sizeof filters - fl, " pid=%u", t->flt.pid);
    if (t->flt.has_session && fl < sizeof filters)
        snprintf(filters + fl, sizeof filters - fl, " session=%u", t->flt.session);
    line(y++, A_BOLD, "memd %s  pid %u  up %s  sessions %u  sort %s%s  filters:%s",
         s->server.version, s->server.pid, memctl_human_age(up_ns, up, sizeof up),
         s->server.sessions, sort_names[t->sort], t->reverse ? " (reversed)" : "",
         fl ? filters : " none");
    line(y++, A_REVERSE, "%-4s %-14s %-5s %5s %24s %6s  %-22s", "DEV", "NAME", "GROUP", "BANKS",
         "USED / TOTAL (all banks)", "USE%", "");
    for (size_t d = 0; d < s->ndevices; d++) {
        if (t->flt.has_device && s->devices[d].id != t->flt.device)
            continue;
        size_t gi = 0;
        memd_report_group_bytes u;
        const memclient_group *g;
        while ((g = memd_report_device_group(s, s->devices[d].id, &gi, &u))) {
            double p = use_pct(&u);
            char bar[23], used[40];
            int full = (int)(p / 5.0 + 0.5);
            for (int i = 0; i < 20; i++)
                bar[i + 1] = i < full ? '#' : '.';
            bar[0] = '[';
            bar[21] = ']';
            bar[22] = '\0';
            snprintf(used, sizeof used, "%s / %s", HB(u.used), HB(u.total));
            line(y++, 0, "%-4u %-14.14s %-5s %5u %24s %5.1f%%  %s", g->device, s->devices[d].name,
                 memclient_kind_name(g->kind), g->banks, used, p, bar);
        }
    }
    y++;
    /* What is left: processes and buffers share it, a third and two thirds. */
    int room = LINES - y - 1;
    int proc_rows = room / 3 - 2 > 0 ? room / 3 - 2 : 0;
    view v;
    view_make(t, s, &v);
    if (v.have_ps) {
        line(y++, A_REVERSE, "%-7s %6s %-15s %-20s %8s %7s %11s %11s", "PID", "UID", "PROCESS",
             "CLIENT", "SESSIONS", "ALLOCS", "BYTES", "SHARED");
        size_t shown = 0;
        for (; shown < v.ps.n && shown < (size_t)proc_rows; shown++) {
            const memd_report_proc *p = &v.ps.procs[shown];
            line(y++, 0, "%-7u %6u %-15.15s %-20.20s %8u %7" PRIu64 " %11s %11s", p->pid, p->uid,
                 p->comm[0] ? p->comm : "-", p->client[0] ? p->client : "-", p->sessions,
                 p->allocations, HB(p->bytes), HB(p->shared_bytes));
        }
        if (shown < v.ps.n)
            line(y++, A_DIM, "  ... %zu processes in all", v.ps.n);
    }
    y++;
    line(y++, A_REVERSE, "%8s %4s %-14s %-11s %11s %11s %7s %-15s %s", "HANDLE", "DEV", "REGION",
         "CLASS", "BYTES/BANK", "ALL BANKS", "PID", "PROCESS", "NAME");
    size_t rows = LINES - 1 > y ? (size_t)(LINES - 1 - y) : 0;
    for (size_t i = 0; i < v.n && i < rows; i++) {
        const memclient_alloc_info *a = v.list[i];
        char region[48], rbuf[24];
        snprintf(region, sizeof region, "%s/%s", memclient_kind_name(a->buf.kind),
                 memd_report_region_name(s, a->device, a->buf.kind, a->buf.region, rbuf, sizeof rbuf));
        line(y++, 0, "%8" PRIu64 " %4u %-14.14s %-11s %11s %11s %7u %-15.15s %s", a->buf.handle,
             a->device, region, memclient_class_name(a->cls), HB(a->buf.size_per_bank),
             HB(memd_report_alloc_bytes(s, a)), a->pid, a->comm[0] ? a->comm : "-",
             a->name[0] ? a->name : "-");
    }
    view_free(&v);
    line(LINES - 1, A_REVERSE, "%-*s", COLS,
         t->status[0] ? t->status
                      : " q quit  s sort  r reverse  / name  c class  d device  x clear  "
                        "space refresh");
    refresh();
}

/* The view as one JSON document on one line. */
static void top_json(const top *t, const memclient_snapshot *s, FILE *f)
{
    fprintf(f, "{\"schema_version\":1,\"now_ns\":%" PRIu64 ",\"now_ns_str\":\"%" PRIu64
               "\",\"sort\":\"%s\",\"reverse\":%s,\"bank_groups\":[",
            s->server.now_ns, s->server.now_ns, sort_names[t->sort], t->reverse ? "true" : "false");
    bool first = true;
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        const memclient_group *g = &s->groups[gi];
        if (t->flt.has_device && g->device != t->flt.device)
            continue;
        const char *name = "";
        for (size_t d = 0; d < s->ndevices; d++)
            if (s->devices[d].id == g->device)
                name = s->devices[d].name;
        memd_report_group_bytes u;
        memd_report_group_use(s, g, &u);
        fprintf(f, "%s{\"device\":%" PRIu32 ",\"name\":", first ? "" : ",", g->device);
        memd_json_str(f, name);
        fprintf(f, ",\"kind\":\"%s\",\"banks\":%" PRIu32 ",\"used\":%" PRIu64 ",\"total\":%" PRIu64
                   ",\"use_pct\":%.2f}",
                memclient_kind_name(g->kind), g->banks, u.used, u.total, use_pct(&u));
        first = false;
    }
    view v;
    view_make(t, s, &v);
    fputs("],\"processes\":[", f);
    for (size_t i = 0; v.have_ps && i < v.ps.n; i++) {
        const memd_report_proc *p = &v.ps.procs[i];
        fprintf(f, "%s{\"pid\":%" PRIu32 ",\"uid\":%" PRIu32 ",\"process\":", i ? "," : "",
                p->pid, p->uid);
        memd_json_str(f, p->comm);
        fputs(",\"client\":", f);
        memd_json_str(f, p->client);
        fprintf(f, ",\"sessions\":%" PRIu32 ",\"allocations\":%" PRIu64 ",\"bytes\":%" PRIu64
                   ",\"shared_bytes\":%" PRIu64 "}",
                p->sessions, p->allocations, p->bytes, p->shared_bytes);
    }
    fprintf(f, "],\"buffers_matching\":%zu,\"buffers\":[", v.n);
    for (size_t i = 0; i < v.n && i < t->limit; i++) {
        const memclient_alloc_info *a = v.list[i];
        char rbuf[24];
        fprintf(f, "%s{\"handle\":%" PRIu64 ",\"handle_str\":\"%" PRIu64 "\",\"device\":%" PRIu32
                   ",\"kind\":\"%s\",\"region\":",
                i ? "," : "", a->buf.handle, a->buf.handle, a->device,
                memclient_kind_name(a->buf.kind));
        memd_json_str(f, memd_report_region_name(s, a->device, a->buf.kind, a->buf.region, rbuf,
                                                 sizeof rbuf));
        fprintf(f, ",\"class\":\"%s\",\"bytes_per_bank\":%" PRIu64 ",\"bytes\":%" PRIu64
                   ",\"pid\":%" PRIu32 ",\"process\":",
                memclient_class_name(a->cls), a->buf.size_per_bank,
                memd_report_alloc_bytes(s, a), a->pid);
        memd_json_str(f, a->comm);
        fputs(",\"name\":", f);
        memd_json_str(f, a->name);
        fputc('}', f);
    }
    fputs("]}\n", f);
    view_free(&v);
}

/* --json: a document per interval until the iterations are done (or a signal). */
static int top_batch(top *t, memclient *c)
{
    for (uint64_t k = 0; t->iterations == 0 || k < t->iterations; k++) {
        if (k)
            usleep((useconds_t)(t->interval_ms * 1000));
        memclient_snapshot *s;
        int r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_BANKS, &s);
        if (r < 0)
            return memctl_fail(NULL, "top", "cannot read the daemon's state", r);
        memctl_hide_own_sessions(t->g, s);
        top_json(t, s, stdout);
        memclient_snapshot_free(s);
        if (fflush(stdout) != 0)
            return MEMCTL_EXIT_FAIL;
    }
    return 0;
}

/* Reads a glob on the bottom line (Enter ends it, Escape cancels). */
static void prompt_glob(top *t)
{
    echo();
    curs_set(1);
    timeout(-1);
    move(LINES - 1, 0);
    clrtoeol();
    attron(A_REVERSE);
    mvaddstr(LINES - 1, 0, "name glob (empty: all): ");
    attroff(A_REVERSE);
    char buf[sizeof t->glob] = "";
    if (getnstr(buf, (int)sizeof buf - 1) == OK) {
        snprintf(t->glob, sizeof t->glob, "%s", buf);
        t->flt.name_glob = t->glob[0] ? t->glob : NULL;
    }
    noecho();
    curs_set(0);
}

static void next_device(top *t, const memclient_snapshot *s)
{
    if (!s || !s->ndevices) {
        t->flt.has_device = false;
        return;
    }
    if (!t->flt.has_device) {
        t->flt.has_device = true;
        t->flt.device = s->devices[0].id;
        return;
    }
    for (size_t d = 0; d < s->ndevices; d++) {
        if (s->devices[d].id == t->flt.device) {
            if (d + 1 < s->ndevices)
                t->flt.device = s->devices[d + 1].id;
            else
                t->flt.has_device = false;
            return;
        }
    }
    t->flt.has_device = false;
}

static void refilter(top *t)
{
    t->flt.any = t->flt.has_pid || t->flt.has_session || t->flt.has_class ||
                 t->flt.has_device || t->flt.name_glob;
}

int memctl_cmd_top(const memctl_globals *g, int argc, char **argv)
{
    top t = {.g = g, .interval_ms = 1000, .limit = 20};
    for (int i = 1; i < argc; i++) {
        int r = memctl_filter_opt(&t.flt, "top", argc, argv, &i);
        if (r < 0)
            return MEMCTL_EXIT_USAGE;
        if (r > 0)
            continue;
        const char *a = argv[i], *v;
        if (!strcmp(a, "--interval")) {
            if (!(v = memctl_optarg("top", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            if (memctl_parse_seconds(v, &t.interval_ms) < 0)
                return memctl_bad_value("top", a, v, "seconds, e.g. 1 or 0.5");
        } else if (!strcmp(a, "--sort")) {
            if (!(v = memctl_optarg("top", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            int k = 0;
            while (k < SORT_COUNT && strcmp(v, sort_names[k]) != 0)
                k++;
            if (k == SORT_COUNT)
                return memctl_bad_value("top", a, v, "bytes, allocs, pid or name");
            t.sort = (sort_key)k;
        } else if (!strcmp(a, "--reverse")) {
            t.reverse = true;
        } else if (!strcmp(a, "--json")) {
            t.json = true;
        } else if (!strcmp(a, "--iterations") || !strcmp(a, "--limit")) {
            if (!(v = memctl_optarg("top", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
            char *end;
            unsigned long long n = strtoull(v, &end, 10);
            if (!*v || *end || *v == '-' || (a[2] == 'l' && n == 0))
                return memctl_bad_value("top", a, v, a[2] == 'l' ? "a count > 0"
                                                                : "a count (0: until interrupted)");
            *(a[2] == 'l' ? &t.limit : &t.iterations) = n;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("usage: memctl top [--interval SEC] [--sort KEY] [--reverse] [filters]\n"
                   "       memctl top --json [--iterations N] [--limit N] [--interval SEC] ...\n"
                   "  a live view: bank groups, processes, largest buffers (needs a terminal)\n"
                   "  keys: q quit, s next sort key (bytes, allocs, pid, name), r reverse,\n"
                   "        / name glob, c next class, d next device, x clear filters\n"
                   "  --interval SEC   refresh every SEC seconds (default 1)\n"
                   "  --sort KEY       bytes (default), allocs, pid or name\n"
                   "  --reverse        the other way round\n"
                   "  --json           batch mode, no terminal: the view as one JSON document\n"
                   "                   per line and interval\n"
                   "  --iterations N   --json: stop after N documents (default 0: until\n"
                   "                   interrupted)\n"
                   "  --limit N        --json: the N first buffers in the view's order\n"
                   "                   (default 20)\n%s",
                   memctl_filter_help);
            return 0;
        } else {
            fprintf(stderr, "memctl top: unknown option '%s'\n", a);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (t.flt.name_glob) {
        snprintf(t.glob, sizeof t.glob, "%s", t.flt.name_glob);
        t.flt.name_glob = t.glob;
    }
    if (t.json) {
        memclient *c;
        int r = memctl_connect(g, &c);
        if (r)
            return r;
        r = top_batch(&t, c);
        memclient_disconnect(c);
        return r;
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "memctl top: needs a terminal (memctl status prints one summary; "
                        "top --json is the batch mode)\n");
        return MEMCTL_EXIT_USAGE;
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    setlocale(LC_ALL, "");
    initscr();
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    curs_set(0);
    memclient_snapshot *s = NULL;
    int code = 0;
    bool quit = false;
    while (!quit) {
        memclient_snapshot *next = NULL;
        r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_USAGE | MEMCLIENT_DUMP_BANKS, &next);
        if (r < 0) {
            memclient_error e;
            memclient_last_error(&e);
            snprintf(t.status, sizeof t.status, " memd: %s (q quits)", e.message);
            if (memclient_reconnect(c, 0) < 0) { /* daemon gone or restarting: keep trying */
            }
        } else {
            memctl_hide_own_sessions(g, next);
            memclient_snapshot_free(s);
            s = next;
            t.status[0] = '\0';
        }
        if (s)
            draw(&t, s);
        else if (t.status[0])
            line(LINES - 1, A_REVERSE, "%s", t.status), refresh();
        timeout((int)t.interval_ms);
        int ch = getch();
        t.status[0] = '\0';
        switch (ch) {
        case 'q':
        case 'Q':
            quit = true;
            break;
        case 's':
            t.sort = (sort_key)((t.sort + 1) % SORT_COUNT);
            break;
        case 'r':
            t.reverse = !t.reverse;
            break;
        case '/':
            prompt_glob(&t);
            break;
        case 'c':
            if (!t.flt.has_class) {
                t.flt.has_class = true;
                t.flt.cls = (memd_class)0;
            } else if (t.flt.cls + 1 < MEMD_CLASS_COUNT) {
                t.flt.cls = (memd_class)(t.flt.cls + 1);
            } else {
                t.flt.has_class = false;
            }
            break;
        case 'd':
            next_device(&t, s);
            break;
        case 'x':
            t.flt = (memctl_filter){0};
            t.glob[0] = '\0';
            break;
        default: /* a key, a resize (KEY_RESIZE) or the interval: draw again */
            break;
        }
        refilter(&t);
    }
    endwin();
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    return code;
}
