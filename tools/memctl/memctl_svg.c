/* memctl dump --svg FILE / --html FILE: a picture of every bank group's address space.
 *
 * Per bank group: a strip of its banks (each bank's use; lockstep groups hold the same
 * map in every bank), then per region a linear bar of the region's addresses (one column
 * per 1/BAR_W of the region; a column holding any allocated byte shows the allocation
 * holding most of it, paler when it covers less than half the column, so a 4 KiB buffer
 * in a 1 GiB region still shows), then the region's blocks one by one in address order,
 * each as wide as the square root of its size allows (at least MIN_BLOCK_W pixels),
 * wrapped over lines: every buffer and free gap of a region with a thousand buffers gets
 * a visible box. Allocations are filled by class; a band on top names the owner (one
 * colour per process, listed in the legend); free gaps are pale grey; blocks of other
 * users' allocations (not listed to this session) are hatched. Hovering shows a block's
 * details (SVG <title>). The HTML page wraps the same picture with a table of the
 * largest allocations. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"
#include "memctl_picture.h"

#define LABEL_W 190        /* left column: region names and ranges */
#define BAR_W 1400         /* the drawing's width */
#define PAGE_W (LABEL_W + BAR_W + 20)
#define BAR_H 22
#define LINE_H 18          /* one line of the block strip */
#define MIN_BLOCK_W 3
#define MAX_STRIP_LINES 12
#define MAX_STRIP_BLOCKS 20000 /* more than that: the linear bar only */

#define HB(v) memd_human_bytes((v), (char[24]){0}, 24)

static const char *const class_fill[MEMD_CLASS_COUNT] = {
    [MEMD_CLASS_CODE] = "#4e79a7",        [MEMD_CLASS_CONSTANT] = "#59a14f",
    [MEMD_CLASS_PLACEHOLDER] = "#f28e2b", [MEMD_CLASS_INTERNAL] = "#b07aa1",
    [MEMD_CLASS_LOGGING] = "#9c755f",
};
#define FREE_FILL "#ececec"
#define OTHER_FILL "url(#hidden)"

typedef struct picture {
    FILE *f;
    const memclient_snapshot *s;
    const memctl_filter *flt;
    const memclient_alloc_info **by_addr; /* visible allocations by (dev, kind, region, address) */
    size_t nby;
    const memclient_alloc_info **by_handle; /* the same, by handle */
    uint32_t *owners;      /* distinct pids, in order of first appearance */
    size_t nowners;
    int y;                 /* next free line of the drawing */
} picture;

static int cmp_alloc(const void *a, const void *b)
{
    const memclient_alloc_info *x = *(const memclient_alloc_info *const *)a;
    const memclient_alloc_info *y = *(const memclient_alloc_info *const *)b;
    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    if (x->buf.kind != y->buf.kind)
        return x->buf.kind < y->buf.kind ? -1 : 1;
    if (x->buf.region != y->buf.region)
        return x->buf.region < y->buf.region ? -1 : 1;
    return x->buf.address < y->buf.address ? -1 : x->buf.address > y->buf.address;
}

static const memclient_alloc_info *alloc_at(const picture *p, const memclient_block *b)
{
    size_t lo = 0, hi = p->nby;
    memclient_alloc_info key = {.device = b->device, .buf = {.kind = b->kind, .region = b->region,
                                                             .address = b->address}};
    const memclient_alloc_info *k = &key;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = cmp_alloc(&p->by_addr[mid], &k);
        if (c == 0)
            return p->by_addr[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int cmp_handle(const void *a, const void *b)
{
    uint64_t x = (*(const memclient_alloc_info *const *)a)->buf.handle;
    uint64_t y = (*(const memclient_alloc_info *const *)b)->buf.handle;
    return x < y ? -1 : x > y;
}

static const memclient_alloc_info *alloc_of(const picture *p, uint64_t handle)
{
    const memclient_alloc_info key = {.buf = {.handle = handle}}, *k = &key;
    const memclient_alloc_info **hit = bsearch(&k, p->by_handle, p->nby, sizeof *p->by_handle,
                                               cmp_handle);
    return hit ? *hit : NULL;
}

void memctl_picture_hue(size_t i, char *buf, size_t len)
{
    snprintf(buf, len, "hsl(%u,70%%,45%%)", (unsigned)((i * 137) % 360));
}

/* A process's colour, in order of first appearance. */
static void owner_color(const picture *p, uint32_t pid, char *buf, size_t len)
{
    size_t i = 0;
    while (i < p->nowners && p->owners[i] != pid)
        i++;
    memctl_picture_hue(i, buf, len);
}

static void note_owner(picture *p, uint32_t pid)
{
    for (size_t i = 0; i < p->nowners; i++)
        if (p->owners[i] == pid)
            return;
    p->owners[p->nowners++] = pid;
}

/* The client name a session gave ("" none, or a session this user cannot see). */
static const char *session_client(const memclient_snapshot *s, uint32_t session_id)
{
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].id == session_id)
            return s->sessions[i].client_name;
    return "";
}

/* The <title> of a block: what an operator hovers for. */
static void block_title(const picture *p, const memclient_block *b, const memclient_alloc_info *a,
                        uint32_t bank)
{
    FILE *f = p->f;
    fputs("<title>", f);
    if (bank != UINT32_MAX)
        fprintf(f, "bank %" PRIu32 ": ", bank);
    fprintf(f, "0x%" PRIx64 "-0x%" PRIx64 " %s", b->address, b->address + b->size,
            HB(b->size));
    if (!b->allocated) {
        fputs(" free</title>", f);
        return;
    }
    if (!a) {
        fputs(" allocated (another user's)</title>", f);
        return;
    }
    fprintf(f, " per bank, handle %" PRIu64 ", %s, pid %" PRIu32 " (", a->buf.handle,
            memclient_class_name(a->cls), a->pid);
    memd_xml_str(f, a->comm);
    const char *client = session_client(p->s, a->session_id);
    if (client[0]) {
        fputs(", client ", f);
        memd_xml_str(f, client);
    }
    fprintf(f, "), uid %" PRIu32 ", session %" PRIu32, a->uid, a->session_id);
    if (a->buf.refcount > 1) /* the creator is one of its holders */
        fprintf(f, ", shared by %" PRIu32 " holders", a->buf.refcount);
    char role[2 * MEMD_NAME_MAX];
    const char *name = memd_report_alloc_role(p->s, a, role, sizeof role);
    if (name[0]) {
        fputs(", ", f);
        memd_xml_str(f, name);
    }
    fputs("</title>", f);
}

/* Fill and opacity of a block. */
static const char *block_fill(const picture *p, const memclient_block *b,
                              const memclient_alloc_info *a, double *opacity)
{
    *opacity = 1.0;
    if (!b->allocated)
        return FREE_FILL;
    if (!a)
        return OTHER_FILL;
    if (p->flt->any && !memctl_filter_match(p->flt, a))
        *opacity = 0.25;
    return class_fill[a->cls];
}

/* One rectangle: fill, then for an allocation the owner band on top. */
static void rect(const picture *p, const memclient_block *b, const memclient_alloc_info *a,
                 uint32_t bank, double x, double y, double w, double h)
{
    double op;
    const char *fill = block_fill(p, b, a, &op);
    fprintf(p->f, "<g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\""
                  " stroke=\"#ffffff\" stroke-width=\"%s\"%s%.2f\"/>",
            x, y, w, h, fill, w >= 4 ? "0.5" : "0", " fill-opacity=\"", op);
    if (a) {
        char oc[32];
        owner_color(p, a->pid, oc, sizeof oc);
        fprintf(p->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\""
                      " fill-opacity=\"%.2f\"/>", x, y, w, h > 8 ? 4.0 : h / 3, oc, op);
    }
    block_title(p, b, a, bank);
    fputs("</g>\n", p->f);
}

/* The blocks of region r: [*first, *first + n) of s->blocks. */
static void region_blocks(const memclient_snapshot *s, const memclient_region *r, size_t *first,
                          size_t *n)
{
    *first = 0;
    *n = 0;
    for (size_t i = 0; i < s->nblocks; i++) {
        const memclient_block *b = &s->blocks[i];
        if (b->device != r->device || b->kind != r->kind || b->region != r->region)
            continue;
        if (*n == 0)
            *first = i;
        (*n)++;
    }
}

/* The linear bar: BAR_W columns over the region's addresses. */
static void linear_bar(picture *p, const memclient_region *r, size_t first, size_t n)
{
    static double cover[BAR_W], alloc_bytes[BAR_W];
    static size_t winner[BAR_W];
    memset(cover, 0, sizeof cover);
    memset(alloc_bytes, 0, sizeof alloc_bytes);
    for (size_t c = 0; c < BAR_W; c++)
        winner[c] = SIZE_MAX;
    const double col = (double)r->size / BAR_W;
    for (size_t i = first; i < first + n; i++) {
        const memclient_block *b = &p->s->blocks[i];
        if (b->device != r->device || b->kind != r->kind || b->region != r->region || !b->allocated)
            continue;
        double lo = (double)(b->address - r->base), hi = lo + (double)b->size;
        size_t c0 = (size_t)(lo / col), c1 = (size_t)(hi / col);
        if (c1 >= BAR_W)
            c1 = BAR_W - 1;
        for (size_t c = c0; c <= c1 && c < BAR_W; c++) {
            double s0 = c * col, s1 = s0 + col;
            double ov = (hi < s1 ? hi : s1) - (lo > s0 ? lo : s0);
            if (ov <= 0)
                continue;
            alloc_bytes[c] += ov;
            if (ov > cover[c]) {
                cover[c] = ov;
                winner[c] = i;
            }
        }
    }
    FILE *f = p->f;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"" FREE_FILL
               "\" stroke=\"#999999\" stroke-width=\"0.5\"><title>%s free of %s per bank</title></rect>\n",
            LABEL_W, p->y, BAR_W, BAR_H, HB(r->stats.free), HB(r->size));
    for (size_t c = 0; c < BAR_W;) {
        if (winner[c] == SIZE_MAX) {
            c++;
            continue;
        }
        /* A run of columns with the same winner and the same paleness: one rectangle. */
        bool pale = alloc_bytes[c] < col / 2;
        size_t e = c + 1;
        while (e < BAR_W && winner[e] == winner[c] && (alloc_bytes[e] < col / 2) == pale)
            e++;
        const memclient_block *b = &p->s->blocks[winner[c]];
        const memclient_alloc_info *a = alloc_at(p, b);
        double op;
        const char *fill = block_fill(p, b, a, &op);
        fprintf(f, "<rect x=\"%zu\" y=\"%d\" width=\"%zu\" height=\"%d\" fill=\"%s\" "
                   "fill-opacity=\"%.2f\">", LABEL_W + c, p->y, e - c, BAR_H, fill,
                pale ? op * 0.55 : op);
        block_title(p, b, a, UINT32_MAX);
        fputs("</rect>\n", f);
        c = e;
    }
    p->y += BAR_H + 4;
}

/* The block strip: each block at least MIN_BLOCK_W wide, the rest shared by sqrt(size). */
static void block_strip(picture *p, const memclient_region *r, size_t first, size_t n)
{
    size_t nb = 0;
    double sum = 0;
    for (size_t i = first; i < first + n; i++) {
        const memclient_block *b = &p->s->blocks[i];
        if (b->device == r->device && b->kind == r->kind && b->region == r->region) {
            nb++;
            sum += __builtin_sqrt((double)b->size);
        }
    }
    if (nb == 0)
        return;
    double total = 8.0 * (double)nb;
    if (total < BAR_W)
        total = BAR_W;
    if (total > (double)BAR_W * MAX_STRIP_LINES)
        total = (double)BAR_W * MAX_STRIP_LINES;
    double spare = total - (double)MIN_BLOCK_W * (double)nb;
    if (spare < 0)
        spare = 0;
    double x = 0;
    int line = 0;
    for (size_t i = first; i < first + n; i++) {
        const memclient_block *b = &p->s->blocks[i];
        if (b->device != r->device || b->kind != r->kind || b->region != r->region)
            continue;
        const memclient_alloc_info *a = b->allocated ? alloc_at(p, b) : NULL;
        double w = MIN_BLOCK_W + (sum > 0 ? spare * __builtin_sqrt((double)b->size) / sum : 0);
        while (w > 0.01) { /* wraps over the end of a line */
            double room = BAR_W - x;
            double part = w < room ? w : room;
            rect(p, b, a, UINT32_MAX, LABEL_W + x, p->y + line * LINE_H, part, LINE_H - 3);
            x += part;
            w -= part;
            if (x >= BAR_W - 0.01) {
                x = 0;
                line++;
            }
        }
    }
    p->y += (line + (x > 0)) * LINE_H + 6;
}

static void text(picture *p, int x, int y, const char *style, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static void text(picture *p, int x, int y, const char *style, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(p->f, "<text x=\"%d\" y=\"%d\" class=\"%s\">", x, y, style);
    memd_xml_str(p->f, buf);
    fputs("</text>\n", p->f);
}

/* One cell per bank: its own use (bank subsets make banks differ; lockstep alone, every
 * bank holds the group's map). */
static void bank_strip(picture *p, const memclient_group *g)
{
    double cell = (double)BAR_W / g->banks;
    if (cell > 24)
        cell = 24;
    text(p, 8, p->y + 11, "small", "%u banks", g->banks);
    for (uint32_t i = 0; i < g->banks; i++) {
        uint64_t in_bank = memd_report_bank_allocated(p->s, g, i);
        double used = g->stats.total ? (double)in_bank / (double)g->stats.total : 0;
        fprintf(p->f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"12\" fill=\"hsl(%d,65%%,%d%%)\" "
                      "stroke=\"#ffffff\" stroke-width=\"0.5\"><title>bank %u: %s of %s used (%.1f%%)"
                      "</title></rect>\n",
                LABEL_W + i * cell, p->y, cell, (int)(120 - 120 * used), (int)(85 - 40 * used), i,
                HB(in_bank), HB(g->stats.total), 100 * used);
    }
    p->y += 20;
}

/* Bank-set buffers (a range in some banks only, or an address of their own in each bank)
 * are not in the region's lockstep map (its bar and blocks): one row per bank shows them at
 * their addresses in that bank, so banks that differ are seen side by side. */
static void per_bank_strip(picture *p, const memclient_group *g, const memclient_region *r)
{
    size_t n = 0;
    for (size_t i = 0; i < p->s->nalloc_banks; i++) {
        const memclient_alloc_info *a = alloc_of(p, p->s->alloc_banks[i].handle);
        n += a && a->device == r->device && a->buf.kind == r->kind && a->buf.region == r->region;
    }
    if (n == 0 || g->banks == 0)
        return;
    double rh = 240.0 / g->banks; /* a row per bank, the strip ~240 px high at most */
    rh = rh > 10 ? 10 : rh < 3 ? 3 : rh;
    const double scale = (double)BAR_W / (double)r->size;
    text(p, LABEL_W, p->y + 11, "small", "per bank: %zu bank-set buffer placements in %u banks "
         "(bank 0 on top)", n, g->banks);
    p->y += 16;
    fputs("<g class=\"perbank\" data-region=\"", p->f);
    memd_xml_str(p->f, r->name);
    fputs("\">\n", p->f);
    for (uint32_t b = 0; b < g->banks; b++)
        fprintf(p->f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"" FREE_FILL
                      "\" stroke=\"#ffffff\" stroke-width=\"%s\"><title>bank %" PRIu32
                      "</title></rect>\n", LABEL_W, p->y + b * rh, BAR_W, rh,
                rh >= 4 ? "0.5" : "0", b);
    for (size_t i = 0; i < p->s->nalloc_banks; i++) {
        const memclient_alloc_bank *e = &p->s->alloc_banks[i];
        const memclient_alloc_info *a = alloc_of(p, e->handle);
        if (!a || a->device != r->device || a->buf.kind != r->kind || a->buf.region != r->region ||
            e->bank.bank >= g->banks || e->bank.address < r->base)
            continue;
        const memclient_block blk = {.device = r->device, .kind = r->kind, .region = r->region,
                                     .allocated = 1, .address = e->bank.address,
                                     .size = a->buf.size_per_bank};
        double w = (double)blk.size * scale;
        rect(p, &blk, a, e->bank.bank, LABEL_W + (double)(blk.address - r->base) * scale,
             p->y + e->bank.bank * rh, w < 2 ? 2 : w, rh);
    }
    fputs("</g>\n", p->f);
    p->y += (int)(g->banks * rh + 0.999) + 6;
}

static void group_picture(picture *p, const memclient_device *dev, const memclient_group *g)
{
    const memclient_snapshot *s = p->s;
    memd_report_group_bytes u;
    memd_report_group_use(s, g, &u);
    if (u.used_min_bank == u.used_max_bank)
        text(p, 8, p->y + 14, "group", "device %u %s: %s, %u x %s banks; %s of %s allocated per "
             "bank (%s over all banks)%s", dev->id, dev->name, memclient_kind_name(g->kind),
             g->banks, HB(g->bank_size), HB(u.used_max_bank), HB(u.total_per_bank), HB(u.used),
             g->banks > 1 ? "; every bank holds the same map" : "");
    else
        text(p, 8, p->y + 14, "group", "device %u %s: %s, %u x %s banks; %s to %s of %s allocated "
             "per bank (%s over all banks; banks differ: see the strip)",
             dev->id, dev->name, memclient_kind_name(g->kind), g->banks, HB(g->bank_size),
             HB(u.used_min_bank), HB(u.used_max_bank), HB(u.total_per_bank), HB(u.used));
    p->y += 22;
    bank_strip(p, g);
    for (size_t ri = 0; ri < s->nregions; ri++) {
        const memclient_region *r = &s->regions[ri];
        if (r->device != g->device || r->kind != g->kind)
            continue;
        text(p, 8, p->y + 12, "region", "%s", r->name);
        text(p, 8, p->y + 25, "small", "0x%" PRIx64 "-0x%" PRIx64, r->base, r->base + r->size);
        if (!r->allocatable) {
            fprintf(p->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#reserved)\" "
                          "stroke=\"#999999\" stroke-width=\"0.5\"><title>reserved: %s, never "
                          "allocated</title></rect>\n", LABEL_W, p->y, BAR_W, BAR_H, HB(r->size));
            p->y += BAR_H + 14;
            continue;
        }
        int top = p->y;
        text(p, 8, p->y + 37, "small", "%s, %" PRIu64 " allocations", HB(r->size),
             r->stats.allocations);
        text(p, 8, p->y + 49, "small", "%s free, largest %s", HB(r->stats.free),
             HB(r->stats.largest_free));
        size_t first, n;
        region_blocks(s, r, &first, &n);
        linear_bar(p, r, first, n);
        per_bank_strip(p, g, r);
        if (n <= MAX_STRIP_BLOCKS) {
            block_strip(p, r, first, n);
        } else {
            text(p, LABEL_W, p->y + 12, "small", "%zu blocks: too many to draw one by one; the "
                 "bar above shows them by address", n);
            p->y += 18;
        }
        if (p->y < top + 54)
            p->y = top + 54;
        p->y += 6;
    }
    p->y += 10;
}

static void legend(picture *p)
{
    int x = 8;
    for (int c = 0; c < MEMD_CLASS_COUNT; c++) {
        fprintf(p->f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>", x, p->y,
                class_fill[c]);
        text(p, x + 18, p->y + 12, "small", "%s", memclient_class_name((memd_class)c));
        x += 110;
    }
    fprintf(p->f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"" FREE_FILL
                  "\" stroke=\"#999999\"/>", x, p->y);
    text(p, x + 18, p->y + 12, "small", "free");
    x += 70;
    fprintf(p->f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"" OTHER_FILL "\"/>",
            x, p->y);
    text(p, x + 18, p->y + 12, "small", "another user's");
    x += 130;
    fprintf(p->f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"url(#reserved)\"/>",
            x, p->y);
    text(p, x + 18, p->y + 12, "small", "reserved");
    p->y += 24;
    /* Owners: the band on top of each allocation. */
    x = 8;
    text(p, x, p->y + 12, "small", "owners:");
    x += 60;
    for (size_t i = 0; i < p->nowners; i++) {
        const char *comm = "?", *client = "";
        for (size_t k = 0; k < p->s->nallocs; k++)
            if (p->s->allocs[k].pid == p->owners[i]) {
                comm = p->s->allocs[k].comm;
                client = session_client(p->s, p->s->allocs[k].session_id);
            }
        char oc[32];
        owner_color(p, p->owners[i], oc, sizeof oc);
        if (x > PAGE_W - 230) {
            x = 68;
            p->y += 18;
        }
        fprintf(p->f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"6\" fill=\"%s\"/>", x,
                p->y + 6, oc);
        /* The client name tells apart processes that share a program (python3). */
        if (client[0] && strcmp(client, comm))
            text(p, x + 18, p->y + 12, "small owner", "%.24s: %s (%u)", client, comm, p->owners[i]);
        else
            text(p, x + 18, p->y + 12, "small owner", "%s (%u)", comm, p->owners[i]);
        x += 230;
    }
    if (!p->nowners)
        text(p, x, p->y + 12, "small", "(no allocations visible to this user)");
    p->y += 26;
}

static int draw(FILE *f, const memclient_snapshot *s, const memctl_filter *flt)
{
    picture p = {.f = f, .s = s, .flt = flt};
    p.by_addr = malloc((s->nallocs ? s->nallocs : 1) * sizeof *p.by_addr);
    p.by_handle = malloc((s->nallocs ? s->nallocs : 1) * sizeof *p.by_handle);
    p.owners = malloc((s->nallocs ? s->nallocs : 1) * sizeof *p.owners);
    if (!p.by_addr || !p.by_handle || !p.owners) {
        free(p.by_addr);
        free(p.by_handle);
        free(p.owners);
        return -ENOMEM;
    }
    for (size_t i = 0; i < s->nallocs; i++) {
        p.by_handle[p.nby] = &s->allocs[i];
        p.by_addr[p.nby++] = &s->allocs[i];
        note_owner(&p, s->allocs[i].pid);
    }
    qsort(p.by_addr, p.nby, sizeof *p.by_addr, cmp_alloc);
    qsort(p.by_handle, p.nby, sizeof *p.by_handle, cmp_handle);
    char up[24];
    text(&p, 8, 20, "title", "memd %s on pid %u: %zu allocations visible, %u sessions, up %s",
         s->server.version, s->server.pid, s->nallocs, s->server.sessions,
         memctl_human_age(s->server.now_ns - s->server.start_ns, up, sizeof up));
    p.y = 32;
    legend(&p);
    for (size_t d = 0; d < s->ndevices; d++)
        for (size_t g = 0; g < s->ngroups; g++)
            if (s->groups[g].device == s->devices[d].id)
                group_picture(&p, &s->devices[d], &s->groups[g]);
    free(p.by_addr);
    free(p.by_handle);
    free(p.owners);
    return p.y + 10;
}

static const char defs[] =
    "<defs>\n"
    "<pattern id=\"hidden\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#c8c8c8\"/>"
    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888888\" stroke-width=\"2\"/></pattern>\n"
    "<pattern id=\"reserved\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
    "patternTransform=\"rotate(-45)\"><rect width=\"8\" height=\"8\" fill=\"#5a5a5a\"/>"
    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" stroke=\"#8a8a8a\" stroke-width=\"3\"/></pattern>\n"
    "</defs>\n"
    "<style>text{font-family:DejaVu Sans,Arial,sans-serif;fill:#222222}"
    ".title{font-size:16px;font-weight:bold}.group{font-size:14px;font-weight:bold}"
    ".region{font-size:12px;font-weight:bold}.small{font-size:10px}</style>\n";

int memctl_picture_svg(FILE *out, const memclient_snapshot *s, const memctl_filter *flt)
{
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f)
        return -ENOMEM;
    int h = draw(f, s, flt);
    if (fclose(f) != 0 || h < 0) {
        free(body);
        return h < 0 ? h : -ENOMEM;
    }
    /* As wide as the window (or the HTML page's box), never wider: viewBox scales it. */
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100%%\" "
                 "viewBox=\"0 0 %d %d\" style=\"max-width:%dpx;height:auto\">\n%s"
                 "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            PAGE_W, h, PAGE_W, defs);
    fwrite(body, 1, len, out);
    fputs("</svg>\n", out);
    free(body);
    return ferror(out) ? -EIO : 0;
}

static int cmp_size(const void *a, const void *b)
{
    const memclient_alloc_info *x = *(const memclient_alloc_info *const *)a;
    const memclient_alloc_info *y = *(const memclient_alloc_info *const *)b;
    uint64_t sx = x->buf.size_per_bank, sy = y->buf.size_per_bank;
    return sx < sy ? 1 : sx > sy ? -1 : 0;
}

void memctl_picture_html_begin(FILE *out, const char *title)
{
    /* Fits the window: the picture scales to the page's width; a table scrolls inside
     * its own box when the window is narrower than it. */
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
          "<title>", out);
    memd_xml_str(out, title);
    fputs("</title>\n<style>body{font-family:sans-serif;margin:8px}"
          "h1{font-size:1.4em}svg{display:block}.scroll{overflow-x:auto;max-width:100%}"
          "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
          "padding:2px 6px;text-align:right;white-space:nowrap}td.l,th.l{text-align:left}"
          "</style></head><body>\n<h1>", out);
    memd_xml_str(out, title);
    fputs("</h1>\n", out);
}

int memctl_picture_html(FILE *out, const memclient_snapshot *s, const memctl_filter *flt)
{
    memctl_picture_html_begin(out, "memd memory map");
    fputs("<p>Hover a block for its details. Each region: its "
          "addresses to scale, bank-set buffers bank by bank, then every block in address "
          "order (width grows with the square root of the size).</p>\n<div id=\"map\">\n", out);
    int rc = memctl_picture_svg(out, s, flt);
    if (rc < 0)
        return rc;
    const memclient_alloc_info **list = malloc((s->nallocs ? s->nallocs : 1) * sizeof *list);
    if (!list)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < s->nallocs; i++)
        if (!flt->any || memctl_filter_match(flt, &s->allocs[i]))
            list[n++] = &s->allocs[i];
    qsort(list, n, sizeof *list, cmp_size);
    fprintf(out, "</div>\n<h2>Largest allocations (%zu of %zu)</h2>\n<div class=\"scroll\">"
                 "<table id=\"largest\"><tr><th>handle</th>"
                 "<th>device</th><th class=\"l\">region</th><th class=\"l\">class</th>"
                 "<th>address</th><th>bytes per bank</th><th>banks</th><th>pid</th>"
                 "<th class=\"l\">process</th><th class=\"l\">client</th>"
                 "<th class=\"l\">name</th></tr>\n",
            n < 200 ? n : 200, n);
    for (size_t i = 0; i < n && i < 200; i++) {
        const memclient_alloc_info *a = list[i];
        char rbuf[24];
        fprintf(out, "<tr><td>%" PRIu64 "</td><td>%" PRIu32 "</td><td class=\"l\">%s/",
                a->buf.handle, a->device, memclient_kind_name(a->buf.kind));
        memd_xml_str(out, memd_report_region_name(s, a->device, a->buf.kind, a->buf.region, rbuf,
                                                  sizeof rbuf));
        fprintf(out, "</td><td class=\"l\">%s</td><td>0x%" PRIx64 "</td><td title=\"%" PRIu64
                     " bytes\">%s</td><td>%" PRIu32 "</td><td>%" PRIu32 "</td><td class=\"l\">",
                memclient_class_name(a->cls), a->buf.address, a->buf.size_per_bank,
                HB(a->buf.size_per_bank), a->buf.banks, a->pid);
        memd_xml_str(out, a->comm);
        fputs("</td><td class=\"l\">", out);
        memd_xml_str(out, session_client(s, a->session_id));
        fputs("</td><td class=\"l\">", out);
        char role[2 * MEMD_NAME_MAX];
        memd_xml_str(out, memd_report_alloc_role(s, a, role, sizeof role));
        fputs("</td></tr>\n", out);
    }
    free(list);
    fputs("</table></div>\n</body></html>\n", out);
    return ferror(out) ? -EIO : 0;
}
