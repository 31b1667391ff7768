/* memctl — tables sized to their contents (memctl_table.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "memctl_table.h"

typedef enum { ITEM_CELL, ITEM_LINE, ITEM_HEADER } item_kind;

typedef struct item {
    item_kind kind;
    char *text; /* NULL: an empty cell */
} item;

struct memctl_table {
    size_t ncols, col;        /* col: cells in the current row so far */
    const char *const *headers;
    const char *align;
    item *items;
    size_t n, cap;
    bool failed, has_header;
};

size_t memctl_text_width(const char *s)
{
    size_t w = 0;
    for (; s && *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80; /* count lead bytes, not continuations */
    return w;
}

memctl_table *memctl_table_new(size_t ncols, const char *const *headers, const char *align)
{
    memctl_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->ncols = ncols;
    t->headers = headers;
    t->align = align;
    return t;
}

static void push(memctl_table *t, item_kind kind, char *text)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        item *p = realloc(t->items, cap * sizeof *p);
        if (!p) {
            t->failed = true;
            free(text);
            return;
        }
        t->items = p;
        t->cap = cap;
    }
    t->items[t->n++] = (item){kind, text};
}

/* The cell's text escaped (text.h): names from other processes reach a terminal here,
 * and a process name may hold an escape sequence. */
__attribute__((format(printf, 2, 0))) /* clang checks va_list wrappers too */
static char *vformat(memctl_table *t, const char *fmt, va_list ap)
{
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) {
        t->failed = true;
        return NULL;
    }
    size_t cap = 4 * strlen(s) + 8; /* \xNN per byte at most: never cut */
    char *e = malloc(cap);
    if (!e) {
        free(s);
        t->failed = true;
        return NULL;
    }
    memd_text_escape(s, e, cap);
    free(s);
    return e;
}

void memctl_table_cell(memctl_table *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(t, fmt, ap);
    va_end(ap);
    push(t, ITEM_CELL, s);
    t->col = (t->col + 1) % t->ncols;
}

void memctl_table_end_row(memctl_table *t)
{
    while (t->col != 0) {
        push(t, ITEM_CELL, NULL);
        t->col = (t->col + 1) % t->ncols;
    }
}

void memctl_table_line(memctl_table *t, const char *fmt, ...)
{
    memctl_table_end_row(t);
    va_list ap;
    va_start(ap, fmt);
    char *s = vformat(t, fmt, ap);
    va_end(ap);
    push(t, ITEM_LINE, s);
}

void memctl_table_header(memctl_table *t)
{
    memctl_table_end_row(t);
    push(t, ITEM_HEADER, NULL);
    t->has_header = true;
}

static void print_row(const memctl_table *t, FILE *f, const char *indent, const size_t *widths,
                      const char *const *cells)
{
    size_t last = t->ncols;
    while (last > 0 && (!cells[last - 1] || !*cells[last - 1]))
        last--;
    fputs(indent, f);
    for (size_t c = 0; c < last; c++) {
        const char *s = cells[c] ? cells[c] : "";
        size_t pad = widths[c] - memctl_text_width(s);
        if (c > 0)
            fputs("  ", f);
        if (t->align[c] == 'r')
            fprintf(f, "%*s%s", (int)pad, "", s);
        else
            fprintf(f, "%s%*s", s, c + 1 < last ? (int)pad : 0, "");
    }
    fputc('\n', f);
}

int memctl_table_print(const memctl_table *t, FILE *f, const char *indent)
{
    size_t *widths = calloc(t->ncols, sizeof *widths);
    const char **cells = calloc(t->ncols, sizeof *cells);
    if (t->failed || !widths || !cells) {
        free(widths);
        free(cells);
        fputs("memctl: out of memory formatting a table\n", stderr);
        return -ENOMEM;
    }
    for (size_t c = 0; c < t->ncols; c++)
        widths[c] = memctl_text_width(t->headers[c]);
    for (size_t i = 0, c = 0; i < t->n; i++) {
        if (t->items[i].kind != ITEM_CELL)
            continue;
        size_t w = memctl_text_width(t->items[i].text);
        if (w > widths[c])
            widths[c] = w;
        c = (c + 1) % t->ncols;
    }
    if (!t->has_header)
        print_row(t, f, indent, widths, t->headers);
    for (size_t i = 0; i < t->n;) {
        const item *it = &t->items[i];
        if (it->kind == ITEM_LINE) {
            fprintf(f, "%s\n", it->text ? it->text : "");
            i++;
        } else if (it->kind == ITEM_HEADER) {
            print_row(t, f, indent, widths, t->headers);
            i++;
        } else {
            for (size_t c = 0; c < t->ncols; c++)
                cells[c] = i < t->n && t->items[i].kind == ITEM_CELL ? t->items[i++].text : NULL;
            print_row(t, f, indent, widths, cells);
        }
    }
    free(widths);
    free(cells);
    return 0;
}

void memctl_table_free(memctl_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->items[i].text);
    free(t->items);
    free(t);
}
