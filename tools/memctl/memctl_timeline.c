/* memctl history --html FILE: one self-contained page (timeline.html: its style and script
 * inline, no URL) with the flight recorder's records and the regions they fall in embedded
 * as JSON; the page's script draws per region (and per bank, for bank-set buffers) each
 * allocation as a band over [address, address + size) from its allocation to its free. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "json.h"
#include "memctl_service.h" /* memctl_history_json: the page reads its keys */
#include "memctl_timeline.h"

extern const char memctl_timeline_page[]; /* timeline.html (embed_text.py) */
#define DATA_MARK "@MEMD_TIMELINE_DATA@"

/* The JSON sits in a <script> element, where "</script>" in a client's name would end it:
 * every '<' (only ever inside a string) is written as its JSON escape. */
static ssize_t script_safe_write(void *cookie, const char *buf, size_t len)
{
    FILE *out = cookie;
    for (size_t i = 0; i < len;) {
        const char *lt = memchr(buf + i, '<', len - i);
        size_t n = lt ? (size_t)(lt - (buf + i)) : len - i;
        if (fwrite(buf + i, 1, n, out) != n || (lt && fputs("\\u003c", out) < 0))
            return -1;
        i += n + (lt != NULL);
    }
    return (ssize_t)len;
}

static int write_events(FILE *f, memclient *c, const memclient_history_filter *filt)
{
    uint64_t since = 0, lost = 0, capacity = 0;
    const char *sep = "";
    fputs("{\"events\": [", f);
    for (;;) {
        memclient_history_page pg;
        int e = memclient_history(c, since, 0, filt, &pg);
        if (e < 0)
            return e;
        lost += pg.lost;
        capacity = pg.capacity;
        for (size_t i = 0; i < pg.n; i++) {
            fputs(sep, f);
            memctl_history_json(f, &pg.events[i]);
            sep = ",";
        }
        bool more = pg.next_seq > since && pg.n > 0;
        since = pg.next_seq;
        memclient_history_page_free(&pg);
        if (!more)
            break;
    }
    fprintf(f, "], \"lost\": %" PRIu64 ", \"capacity\": %" PRIu64, lost, capacity);
    return 0;
}

/* The i-th object of a list: {"id": id, "key": "value"}. */
static void id_and_string(FILE *f, size_t i, uint32_t id, const char *key, const char *value)
{
    fprintf(f, "%s{\"id\": %" PRIu32 ", \"%s\": ", i ? ", " : "", id, key);
    memd_json_str(f, value);
    fputc('}', f);
}

/* What is held now (the page draws those whose alloc record is older than the records),
 * with the sessions' client names and the filter the records passed, which the page
 * applies to them too. */
static void write_live(FILE *f, const memclient_snapshot *s, const memclient_history_filter *filt)
{
    fprintf(f, ", \"filter\": {\"device\": %" PRId64 ", \"pid\": %" PRIu32 ", \"since_ns\": \"%"
               PRIu64 "\", \"client\": ",
            filt->device == MEMCLIENT_ANY_DEVICE ? -1 : (int64_t)filt->device, filt->pid,
            filt->since_ns);
    memd_json_str(f, filt->client ? filt->client : "");
    fputs("}, \"sessions\": [", f);
    for (size_t i = 0; i < s->nsessions; i++)
        id_and_string(f, i, s->sessions[i].id, "client", s->sessions[i].client_name);
    fputs("], \"live\": [", f);
    for (size_t i = 0; i < s->nallocs; i++) {
        const memclient_alloc_info *a = &s->allocs[i];
        fprintf(f, "%s{\"handle\": %" PRIu64 ", \"created_ns_str\": \"%" PRIu64 "\", \"device\": %"
                   PRIu32 ", \"kind\": \"%s\", \"region\": %" PRIu32 ", \"class\": \"%s\", "
                   "\"address\": %" PRIu64 ", \"size_per_bank\": %" PRIu64 ", \"banks\": %" PRIu32
                   ", \"session\": %" PRIu32 ", \"pid\": %" PRIu32 ", \"uid\": %" PRIu32
                   ", \"process\": ",
                i ? ", " : "", a->buf.handle, a->created_ns, a->device,
                memclient_kind_name(a->buf.kind), a->buf.region, memclient_class_name(a->cls),
                a->buf.address, a->buf.size_per_bank, a->buf.banks, a->session_id, a->pid, a->uid);
        memd_json_str(f, a->comm);
        fputs(", \"name\": ", f);
        memd_json_str(f, a->name);
        fputc('}', f);
    }
    fputc(']', f);
}

/* Where the records fall: devices, bank groups, regions, and the banks of the live
 * bank-set and per-bank buffers (the recorder keeps a buffer's bank count, not its banks). */
static void write_layout(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, ", \"now_ns\": \"%" PRIu64 "\", \"version\": ", s->server.now_ns);
    memd_json_str(f, s->server.version);
    fputs(", \"devices\": [", f);
    for (size_t i = 0; i < s->ndevices; i++)
        id_and_string(f, i, s->devices[i].id, "name", s->devices[i].name);
    fputs("], \"groups\": [", f);
    for (size_t i = 0; i < s->ngroups; i++) {
        const memclient_group *g = &s->groups[i];
        fprintf(f, "%s{\"device\": %" PRIu32 ", \"kind\": \"%s\", \"banks\": %" PRIu32 "}",
                i ? ", " : "", g->device, memclient_kind_name(g->kind), g->banks);
    }
    fputs("], \"regions\": [", f);
    for (size_t i = 0; i < s->nregions; i++) {
        const memclient_region *r = &s->regions[i];
        fprintf(f, "%s{\"device\": %" PRIu32 ", \"kind\": \"%s\", \"region\": %" PRIu32
                   ", \"base\": %" PRIu64 ", \"size\": %" PRIu64 ", \"name\": ",
                i ? ", " : "", r->device, memclient_kind_name(r->kind), r->region, r->base,
                r->size);
        memd_json_str(f, r->name);
        fputc('}', f);
    }
    fputs("], \"bank_sets\": [", f);
    for (size_t i = 0; i < s->nalloc_banks; i++) {
        const memclient_alloc_bank *b = &s->alloc_banks[i];
        fprintf(f, "%s{\"handle\": %" PRIu64 ", \"bank\": %" PRIu32 ", \"address\": %" PRIu64
                   "}", i ? ", " : "", b->handle, b->bank.bank, b->bank.address);
    }
    fputc(']', f);
}

int memctl_timeline_html(FILE *out, memclient *c, const memclient_history_filter *filt)
{
    const char *mark = strstr(memctl_timeline_page, DATA_MARK);
    if (!mark)
        return -EINVAL; /* timeline.html lost its marker: a build defect */
    /* The dump after the records: every band the records leave open is live in it. */
    memclient_snapshot *s = NULL;
    FILE *json = fopencookie(out, "w", (cookie_io_functions_t){.write = script_safe_write});
    if (!json)
        return -errno;
    fwrite(memctl_timeline_page, 1, (size_t)(mark - memctl_timeline_page), out);
    int r = write_events(json, c, filt);
    if (r == 0)
        r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_BANKS, &s);
    if (r == 0) {
        write_layout(json, s);
        write_live(json, s, filt);
        fputc('}', json);
    }
    memclient_snapshot_free(s);
    if (fclose(json) != 0 && r == 0)
        r = -EIO;
    if (r == 0)
        fputs(mark + strlen(DATA_MARK), out);
    return r < 0 ? r : ferror(out) ? -EIO : 0;
}
