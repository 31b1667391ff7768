/* memctl postmortem: the snapshots memd saved at out-of-memory refusals. Without an id, a
 * list (id, time, who, what, region, requested against free and largest free); with one,
 * its report: as text, as one JSON document (--json; keys documented in memctl(1)), or
 * as one self-contained HTML page (--html FILE: the request, a bar of the region with
 * its largest free blocks, the top holders, the events). An admin sees every one,
 * others those of their own uid. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memd/protocol.h" /* MEMD_HIST_FAIL */

#include "memctl_picture.h"
#include "memctl_service.h"
#include "units.h"

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

static const char usage_line[] = "usage: memctl postmortem [ID] [--json | --html FILE]\n";

/* "no room", "quota", "cgroup limit": why it was refused. */
static const char *reason(const memclient_postmortem *p)
{
    return p->status == -EDQUOT                 ? "quota"
           : p->detail == MEMCLIENT_DETAIL_LIMIT ? "cgroup limit"
           : p->requested > p->region_size && p->size_per_bank > p->region_size
               ? "larger than the region"
               : "no room";
}

static void json_summary(FILE *f, const memclient_postmortem *p)
{
    fprintf(f, "{\"id\": %" PRIu64 ", \"time_ns\": %" PRIu64 ", \"status\": %" PRId32
               ", \"reason\": \"%s\", \"device\": %" PRIu32 ", \"kind\": \"%s\", \"region\": %" PRIu32
               ", \"region_name\": ",
            p->id, p->time_ns, p->status, reason(p), p->device, memclient_kind_name(p->kind),
            p->region);
    memd_json_str(f, p->region_name);
    fprintf(f, ", \"region_base\": %" PRIu64 ", \"region_size\": %" PRIu64
               ", \"class\": \"%s\", \"scope\": \"%s\", \"direction\": \"%s\", \"requested\": %" PRIu64
               ", \"size_per_bank\": %" PRIu64 ", \"banks\": %" PRIu32 ", \"alignment\": %" PRIu64
               ", \"allocated\": %" PRIu64 ", \"free\": %" PRIu64 ", \"largest_free\": %" PRIu64
               ", \"session\": %" PRIu32 ", \"pid\": %" PRIu32 ", \"uid\": %" PRIu32 ", \"process\": ",
            p->region_base, p->region_size, memclient_class_name(p->cls),
            memclient_scope_name(p->scope), p->dir == MEMD_DIR_TOP_DOWN ? "top-down" : "bottom-up",
            p->requested, p->size_per_bank, p->banks, p->alignment, p->allocated, p->free,
            p->largest_free, p->session_id, p->pid, p->uid);
    memd_json_str(f, p->comm);
    memd_json_member(f, ", \"client\": ", p->client_name);
    memd_json_member(f, ", \"cgroup\": ", p->cgroup);
    memd_json_member(f, ", \"message\": ", p->message);
}

static void list_text(const memclient_postmortem *v, size_t n)
{
    printf("%-5s %-19s %-28s %-22s %-20s %10s %10s %10s\n", "ID", "TIME", "WHO", "WHAT",
           "REGION", "REQUESTED", "FREE", "LARGEST");
    for (size_t i = 0; i < n; i++) {
        const memclient_postmortem *p = &v[i];
        char t[32], who[96], what[64], region[96], esc[64];
        snprintf(who, sizeof who, "pid %" PRIu32 " %s uid %" PRIu32, p->pid,
                 memd_text_escape(p->client_name[0] ? p->client_name : p->comm, esc, sizeof esc),
                 p->uid);
        snprintf(what, sizeof what, "%s, %s", memclient_class_name(p->cls), reason(p));
        snprintf(region, sizeof region, "dev %" PRIu32 " %s/%s", p->device,
                 memclient_kind_name(p->kind), memd_text_escape(p->region_name, esc, sizeof esc));
        printf("%-5" PRIu64 " %-19s %-28s %-22s %-20s %10s %10s %10s\n", p->id,
               memctl_local_time(p->time_ns, t, sizeof t), who, what, region, HB(p->requested), HB(p->free),
               HB(p->largest_free));
    }
    if (n == 0)
        printf("(no post-mortems: memd saves one at each out-of-memory refusal)\n");
}

static void report_text(const memclient_postmortem_report *r)
{
    const memclient_postmortem *p = &r->info;
    char t[32], esc[512];
    printf("post-mortem %" PRIu64 ": %s, %s\n", p->id, memctl_local_time(p->time_ns, t, sizeof t), reason(p));
    printf("  told the client: %s\n", memd_text_escape(p->message, esc, sizeof esc));
    printf("request\n  session %" PRIu32 ", pid %" PRIu32 " (%s", p->session_id, p->pid,
           memd_text_escape(p->comm, esc, sizeof esc));
    printf(", client '%s'), uid %" PRIu32 "%s", memd_text_escape(p->client_name, esc, sizeof esc),
           p->uid, p->cgroup[0] ? ", cgroup " : "");
    printf("%s\n", memd_text_escape(p->cgroup, esc, sizeof esc));
    printf("  device %" PRIu32 ", %s bank group, region %s (#%" PRIu32 "), class %s, scope %s, "
           "%s\n", p->device, memclient_kind_name(p->kind),
           memd_text_escape(p->region_name, esc, sizeof esc), p->region,
           memclient_class_name(p->cls), memclient_scope_name(p->scope),
           p->dir == MEMD_DIR_TOP_DOWN ? "top-down" : "bottom-up");
    printf("  requested %s: %s per bank x %" PRIu32 " banks, alignment %" PRIu64 "\n",
           HB(p->requested), HB(p->size_per_bank), p->banks, p->alignment);
    printf("region (per bank)\n  size %s at 0x%" PRIx64 ", allocated %s, free %s, largest free "
           "%s\n", HB(p->region_size), p->region_base, HB(p->allocated), HB(p->free),
           HB(p->largest_free));
    printf("top holders\n");
    for (uint32_t i = 0; i < p->nholders; i++) {
        const memclient_holder *h = &r->holders[i];
        printf("  %10s  pid %" PRIu32 " %s", HB(h->bytes), h->pid,
               memd_text_escape(h->comm, esc, sizeof esc));
        printf(" '%s' uid %" PRIu32 " session %" PRIu32 "\n",
               memd_text_escape(h->client_name, esc, sizeof esc), h->uid, h->session_id);
    }
    if (p->nholders == 0)
        printf("  nobody\n");
    printf("largest free blocks\n");
    for (uint32_t i = 0; i < p->nfree; i++)
        printf("  %10s  at 0x%" PRIx64 "\n", HB(r->free_blocks[i].size), r->free_blocks[i].address);
    if (p->nfree == 0)
        printf("  none: the region is full\n");
    printf("last events on device %" PRIu32 "\n", p->device);
    if (p->nevents)
        memctl_hist_print_header(stdout);
    for (uint32_t i = 0; i < p->nevents; i++)
        memctl_hist_print_text(stdout, &r->events[i]);
    if (p->nevents == 0)
        printf("  none recorded\n");
}

static void report_json(const memclient_postmortem_report *r)
{
    const memclient_postmortem *p = &r->info;
    json_summary(stdout, p);
    fputs(", \"holders\": [", stdout);
    for (uint32_t i = 0; i < p->nholders; i++) {
        const memclient_holder *h = &r->holders[i];
        printf("%s{\"bytes\": %" PRIu64 ", \"session\": %" PRIu32 ", \"pid\": %" PRIu32
               ", \"uid\": %" PRIu32 ", \"process\": ",
               i ? ", " : "", h->bytes, h->session_id, h->pid, h->uid);
        memd_json_str(stdout, h->comm);
        memd_json_member(stdout, ", \"client\": ", h->client_name);
        fputc('}', stdout);
    }
    fputs("], \"free_blocks\": [", stdout);
    for (uint32_t i = 0; i < p->nfree; i++)
        printf("%s{\"address\": %" PRIu64 ", \"size\": %" PRIu64 "}", i ? ", " : "",
               r->free_blocks[i].address, r->free_blocks[i].size);
    fputs("], \"events\": [", stdout);
    for (uint32_t i = 0; i < p->nevents; i++) {
        if (i)
            fputs(", ", stdout);
        memctl_history_json(stdout, &r->events[i]);
    }
    fputs("]}\n", stdout);
}

/* One row of a two-column table of the request. */
static void html_row(FILE *f, const char *key, const char *value)
{
    fprintf(f, "<tr><th class=\"l\">%s</th><td class=\"l\">", key);
    memd_xml_str(f, value);
    fputs("</td></tr>\n", f);
}

#define BAR_W 960
#define BAR_H 28

/* The region to scale, allocated grey, with its largest free blocks where they are; then
 * the top holders' shares of what they hold together. */
static void html_bars(FILE *f, const memclient_postmortem_report *r)
{
    const memclient_postmortem *p = &r->info;
    double scale = p->region_size ? (double)BAR_W / (double)p->region_size : 0;
    fprintf(f, "<h2>The region, per bank, to scale</h2>\n<svg id=\"region\" "
               "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\"><rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
               "fill=\"#bbb\"><title>allocated (or free in blocks smaller than those shown)"
               "</title></rect>\n", BAR_W, BAR_H + 20, BAR_W, BAR_H + 20, BAR_W, BAR_H);
    for (uint32_t i = 0; i < p->nfree; i++) {
        const memclient_free_block *b = &r->free_blocks[i];
        uint64_t off = b->address > p->region_base ? b->address - p->region_base : 0;
        double x = (double)off * scale, w = (double)b->size * scale;
        fprintf(f, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"#4caf50\" "
                   "stroke=\"#1b5e20\" stroke-width=\"0.5\"><title>free block %u: %s at 0x%"
                   PRIx64 "</title></rect>\n", x, w < 1 ? 1 : w, BAR_H, i + 1, HB(b->size),
                b->address);
    }
    fprintf(f, "<text x=\"0\" y=\"%d\" font-size=\"12\">0x%" PRIx64 "</text><text x=\"%d\" "
               "y=\"%d\" font-size=\"12\" text-anchor=\"end\">%s: %s free, largest %s (green: "
               "the largest free blocks)</text></svg>\n", BAR_H + 15, p->region_base, BAR_W,
            BAR_H + 15, HB(p->region_size), HB(p->free), HB(p->largest_free));
    uint64_t held = 0;
    for (uint32_t i = 0; i < p->nholders; i++)
        held += r->holders[i].bytes;
    fprintf(f, "<h2>Top holders (over all banks)</h2>\n<svg id=\"holders\" "
               "xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "viewBox=\"0 0 %d %d\">\n", BAR_W, BAR_H, BAR_W, BAR_H);
    double x = 0;
    for (uint32_t i = 0; i < p->nholders && held; i++) {
        const memclient_holder *h = &r->holders[i];
        double w = (double)h->bytes * BAR_W / (double)held;
        char color[32];
        memctl_picture_hue(i, color, sizeof color);
        fprintf(f, "<rect x=\"%.1f\" y=\"0\" width=\"%.1f\" height=\"%d\" fill=\"%s\" "
                   "stroke=\"#fff\"><title>pid %" PRIu32 " ", x, w, BAR_H, color, h->pid);
        memd_xml_str(f, h->comm);
        fprintf(f, ": %s</title></rect>\n", HB(h->bytes));
        if (w > 90) {
            fprintf(f, "<text x=\"%.1f\" y=\"18\" font-size=\"12\" fill=\"#fff\">pid %" PRIu32
                       " %s</text>\n", x + 4, h->pid, HB(h->bytes));
        }
        x += w;
    }
    fputs("</svg>\n", f);
}

static int report_html(const char *path, const memclient_postmortem_report *r)
{
    const memclient_postmortem *p = &r->info;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "memctl postmortem: cannot write %s: %s\n", path, strerror(errno));
        return MEMCTL_EXIT_FAIL;
    }
    char title[64], t[32], buf[512];
    snprintf(title, sizeof title, "memd post-mortem %" PRIu64, p->id);
    memctl_picture_html_begin(f, title);
    fputs("<p>", f);
    memd_xml_str(f, p->message);
    fputs("</p>\n<h2>The request</h2>\n<table id=\"request\">\n", f);
    html_row(f, "time", memctl_local_time(p->time_ns, t, sizeof t));
    html_row(f, "why", reason(p));
    snprintf(buf, sizeof buf, "session %" PRIu32 ", pid %" PRIu32 " %s, client '%s', uid %" PRIu32,
             p->session_id, p->pid, p->comm, p->client_name, p->uid);
    html_row(f, "who", buf);
    html_row(f, "cgroup", p->cgroup[0] ? p->cgroup : "unknown");
    snprintf(buf, sizeof buf, "device %" PRIu32 ", %s bank group, region %s (#%" PRIu32 ")",
             p->device, memclient_kind_name(p->kind), p->region_name, p->region);
    html_row(f, "where", buf);
    snprintf(buf, sizeof buf, "%s, scope %s, %s", memclient_class_name(p->cls),
             memclient_scope_name(p->scope), p->dir == MEMD_DIR_TOP_DOWN ? "top-down" : "bottom-up");
    html_row(f, "class", buf);
    snprintf(buf, sizeof buf, "%s: %s per bank x %" PRIu32 " banks, alignment %" PRIu64,
             HB(p->requested), HB(p->size_per_bank), p->banks, p->alignment);
    html_row(f, "requested", buf);
    snprintf(buf, sizeof buf, "%s per bank: allocated %s, free %s, largest free %s",
             HB(p->region_size), HB(p->allocated), HB(p->free), HB(p->largest_free));
    html_row(f, "region", buf);
    fputs("</table>\n", f);
    html_bars(f, r);
    fputs("<div class=\"scroll\"><table id=\"holder-list\"><tr><th>bytes</th><th>pid</th>"
          "<th class=\"l\">process</th><th class=\"l\">client</th><th>uid</th><th>session</th>"
          "</tr>\n", f);
    for (uint32_t i = 0; i < p->nholders; i++) {
        const memclient_holder *h = &r->holders[i];
        fprintf(f, "<tr><td>%s</td><td>%" PRIu32 "</td><td class=\"l\">", HB(h->bytes), h->pid);
        memd_xml_str(f, h->comm);
        fputs("</td><td class=\"l\">", f);
        memd_xml_str(f, h->client_name);
        fprintf(f, "</td><td>%" PRIu32 "</td><td>%" PRIu32 "</td></tr>\n", h->uid, h->session_id);
    }
    fprintf(f, "</table></div>\n<h2>Last events on device %" PRIu32 "</h2>\n<div class=\"scroll\">"
               "<table id=\"events\"><tr><th class=\"l\">time</th><th class=\"l\">type</th>"
               "<th class=\"l\">class</th><th>address</th><th>per bank</th><th>banks</th>"
               "<th>pid</th><th class=\"l\">process</th><th class=\"l\">name</th>"
               "<th class=\"l\">context</th></tr>\n", p->device);
    for (uint32_t i = 0; i < p->nevents; i++) {
        const memclient_hist_event *e = &r->events[i];
        fprintf(f, "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td>"
                   "<td>0x%" PRIx64 "</td><td>%s</td><td>%" PRIu32 "</td><td>%" PRIu32
                   "</td><td class=\"l\">",
                memctl_local_time(e->time_ns, t, sizeof t), memclient_hist_type_name(e->type),
                memclient_class_name((memd_class)e->cls), e->address,
                HB(e->type == MEMD_HIST_FAIL ? e->bytes : e->size_per_bank), e->banks, e->pid);
        memd_xml_str(f, e->client_name[0] ? e->client_name : e->comm);
        fputs("</td><td class=\"l\">", f);
        memd_xml_str(f, e->name);
        fputs("</td><td class=\"l\">", f);
        memd_xml_str(f, e->context);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></div>\n</body></html>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "memctl postmortem: cannot write %s\n", path);
        return MEMCTL_EXIT_FAIL;
    }
    return 0;
}

int memctl_cmd_postmortem(const memctl_globals *g, int argc, char **argv)
{
    bool json = false;
    const char *html = NULL;
    uint64_t id = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            json = true;
        } else if (!strcmp(a, "--html")) {
            if (!(html = memctl_optarg("postmortem", argc, argv, &i)))
                return MEMCTL_EXIT_USAGE;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            printf("%s"
                   "  without ID: the post-mortems memd saved at out-of-memory refusals\n"
                   "  (an admin sees all, others their uid's); with ID: that one's report\n"
                   "  --json       one JSON document (keys: memctl(1))\n"
                   "  --html FILE  with ID: one self-contained page (no network)\n",
                   usage_line);
            return 0;
        } else if (a[0] != '-' && id == 0) {
            if (memctl_parse_u64(a, &id) < 0 || id == 0)
                return memctl_bad_value("postmortem", "ID", a, "a post-mortem id (1, 2, ...)");
        } else {
            fprintf(stderr, "memctl postmortem: unknown argument '%s' (%s)", a, usage_line);
            return MEMCTL_EXIT_USAGE;
        }
    }
    if (json && html) {
        fprintf(stderr, "memctl postmortem: --json and --html exclude each other (%s)", usage_line);
        return MEMCTL_EXIT_USAGE;
    }
    if (html && id == 0) {
        fprintf(stderr, "memctl postmortem: --html needs an ID (%s)", usage_line);
        return MEMCTL_EXIT_USAGE;
    }
    memclient *c;
    int rc = memctl_connect(g, &c);
    if (rc)
        return rc;
    if (id == 0) {
        memclient_postmortem *v;
        size_t n;
        if ((rc = memclient_postmortems(c, &v, &n)) < 0) {
            rc = memctl_fail(c, "postmortem", "listing post-mortems", rc);
            memclient_disconnect(c);
            return rc;
        }
        if (json) {
            fputs("{\"postmortems\": [", stdout);
            for (size_t i = 0; i < n; i++) {
                fputs(i ? ", " : "", stdout);
                json_summary(stdout, &v[i]);
                fputc('}', stdout);
            }
            fputs("]}\n", stdout);
        } else {
            list_text(v, n);
        }
        free(v);
        memclient_disconnect(c);
        return 0;
    }
    memclient_postmortem_report r;
    char what[48];
    snprintf(what, sizeof what, "post-mortem %" PRIu64, id);
    if ((rc = memclient_postmortem_get(c, id, &r)) < 0) {
        rc = memctl_fail(c, "postmortem", what, rc);
        memclient_disconnect(c);
        return rc;
    }
    memclient_disconnect(c);
    if (html)
        rc = report_html(html, &r);
    else if (json)
        report_json(&r);
    else
        report_text(&r);
    memclient_postmortem_report_free(&r);
    return rc;
}
