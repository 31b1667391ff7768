/* Plan problem CSV reader and writer (see plan_csv.h for the format). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_csv.h"

static const char *const col_names[MEMD_PLAN_COL_COUNT] = {
    "id", "lower", "upper", "size", "alignment", "offset",
};

typedef struct parser {
    const char *name;
    memd_error *err;
    size_t line;
    size_t idlen, idcap; /* the block's use and size */
} parser;

__attribute__((format(printf, 4, 5))) static int fail(parser *p, size_t line, size_t col,
                                                       const char *fmt, ...)
{
    memd_error_at(p->err, p->name, (unsigned)line, (unsigned)col);
    va_list ap;
    va_start(ap, fmt);
    int rc = memd_error_vset(p->err, -EINVAL, fmt, ap);
    va_end(ap);
    return rc;
}

/* A field: [start, start+len) of the line, and its 1-based column. */
typedef struct field {
    const char *s;
    size_t len;
    size_t col;
} field;

/* Splits one line (no line end) at commas. Returns the field count, which may exceed
 * max (only the first max are stored). */
static size_t split(const char *line, size_t len, field *f, size_t max)
{
    size_t nf = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || line[i] == ',') {
            if (nf < max) {
                f[nf].s = line + start;
                f[nf].len = i - start;
                f[nf].col = start + 1;
            }
            nf++;
            start = i + 1;
        }
    }
    return nf;
}

/* Unsigned decimal; 0 ok, 1 not a number, 2 out of range. */
static int parse_u64(const field *f, uint64_t *v)
{
    if (f->len == 0)
        return 1;
    uint64_t x = 0;
    for (size_t i = 0; i < f->len; i++) {
        unsigned char c = (unsigned char)f->s[i];
        if (c < '0' || c > '9')
            return 1;
        unsigned d = c - '0';
        if (x > (UINT64_MAX - d) / 10)
            return 2;
        x = x * 10 + d;
    }
    *v = x;
    return 0;
}

static int number(parser *p, const field *f, int kind, uint64_t *v)
{
    int r = parse_u64(f, v);
    if (r == 1)
        return fail(p, p->line, f->col, "expected an unsigned integer for '%s', got '%.*s'",
                    col_names[kind], (int)(f->len > 40 ? 40 : f->len), f->s);
    if (r == 2)
        return fail(p, p->line, f->col, "value for '%s' does not fit in 64 bits",
                    col_names[kind]);
    return 0;
}

/* ---- duplicate ids: open addressing over the parsed ids ---- */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

static int check_dups(parser *p, const memd_plan_csv *c, const size_t *idcol)
{
    size_t cap = 16;
    while (cap < 2 * c->n)
        cap *= 2;
    size_t *slot = malloc(cap * sizeof(*slot));
    if (!slot)
        return -ENOMEM;
    for (size_t i = 0; i < cap; i++)
        slot[i] = SIZE_MAX;
    int rc = 0;
    for (size_t i = 0; i < c->n && !rc; i++) {
        const char *id = memd_plan_csv_id(c, i);
        size_t h = (size_t)hash_str(id) & (cap - 1);
        while (slot[h] != SIZE_MAX) {
            if (!strcmp(memd_plan_csv_id(c, slot[h]), id)) {
                rc = fail(p, c->lines[i], idcol[i], "duplicate id '%s' (first on line %" PRIu32 ")",
                          id, c->lines[slot[h]]);
                break;
            }
            h = (h + 1) & (cap - 1);
        }
        slot[h] = i;
    }
    free(slot);
    return rc;
}

void memd_plan_csv_free(memd_plan_csv *csv)
{
    if (!csv)
        return;
    free(csv->id_at);
    free(csv->id_block);
    free(csv->bufs);
    free(csv->lines);
    memset(csv, 0, sizeof(*csv));
}

static int grow(memd_plan_csv *c, size_t *cap, size_t **idcol)
{
    size_t nc = *cap ? 2 * *cap : 256;
    memd_plan_buffer *b = realloc(c->bufs, nc * sizeof(*b));
    if (b)
        c->bufs = b;
    uint32_t *at = realloc(c->id_at, nc * sizeof(*at));
    if (at)
        c->id_at = at;
    uint32_t *lines = realloc(c->lines, nc * sizeof(*lines));
    if (lines)
        c->lines = lines;
    size_t *ic = realloc(*idcol, nc * sizeof(*ic));
    if (ic)
        *idcol = ic;
    if (!b || !at || !lines || !ic)
        return -ENOMEM;
    *cap = nc;
    return 0;
}

static int parse_header(parser *p, const char *line, size_t len, memd_plan_csv *c)
{
    field f[MEMD_PLAN_COL_COUNT + 1];
    size_t nf = split(line, len, f, MEMD_PLAN_COL_COUNT + 1);
    if (nf > MEMD_PLAN_COL_COUNT)
        return fail(p, p->line, f[MEMD_PLAN_COL_COUNT].col,
                    "too many columns (at most id, lower, upper, size, alignment, offset)");
    bool seen[MEMD_PLAN_COL_COUNT] = {0};
    for (size_t k = 0; k < nf; k++) {
        int kind = -1;
        for (int j = 0; j < MEMD_PLAN_COL_COUNT; j++)
            if (strlen(col_names[j]) == f[k].len && !memcmp(col_names[j], f[k].s, f[k].len))
                kind = j;
        if (kind < 0)
            return fail(p, p->line, f[k].col,
                        "unknown column '%.*s' (expected id, lower, upper, size, alignment, "
                        "offset)", (int)(f[k].len > 40 ? 40 : f[k].len), f[k].s);
        if (seen[kind])
            return fail(p, p->line, f[k].col, "column '%s' appears twice", col_names[kind]);
        seen[kind] = true;
        c->cols[k] = kind;
    }
    for (int j = 0; j <= MEMD_PLAN_COL_SIZE; j++)
        if (!seen[j])
            return fail(p, p->line, len + 1, "missing column '%s'", col_names[j]);
    c->ncols = (int)nf;
    c->has_alignment = seen[MEMD_PLAN_COL_ALIGNMENT];
    c->has_offset = seen[MEMD_PLAN_COL_OFFSET];
    return 0;
}

static int parse_row(parser *p, const char *line, size_t len, memd_plan_csv *c, size_t *idcol)
{
    field f[MEMD_PLAN_COL_COUNT + 1];
    size_t nf = split(line, len, f, MEMD_PLAN_COL_COUNT + 1);
    if (nf > (size_t)c->ncols) {
        size_t col = 1; /* column of the first extra field */
        for (size_t i = 0, commas = 0; i < len; i++)
            if (line[i] == ',' && ++commas == (size_t)c->ncols) {
                col = i + 2;
                break;
            }
        return fail(p, p->line, col, "expected %d fields, found %zu", c->ncols, nf);
    }
    if (nf < (size_t)c->ncols)
        return fail(p, p->line, len + 1, "expected %d fields, found %zu", c->ncols, nf);
    memd_plan_buffer b = {.align = 1};
    const field *fid = NULL, *fup = NULL, *fal = NULL, *foff = NULL;
    for (int k = 0; k < c->ncols; k++) {
        const field *x = &f[k];
        int rc = 0;
        switch (c->cols[k]) {
        case MEMD_PLAN_COL_ID:
            fid = x;
            if (x->len == 0)
                return fail(p, p->line, x->col, "empty id");
            if (x->len > MEMD_PLAN_CSV_MAX_ID)
                return fail(p, p->line, x->col, "id longer than %d bytes", MEMD_PLAN_CSV_MAX_ID);
            if (memchr(x->s, '"', x->len))
                return fail(p, p->line, x->col, "quoted fields are not supported");
            break;
        case MEMD_PLAN_COL_LOWER: rc = number(p, x, MEMD_PLAN_COL_LOWER, &b.lower); break;
        case MEMD_PLAN_COL_UPPER:
            fup = x;
            rc = number(p, x, MEMD_PLAN_COL_UPPER, &b.upper);
            break;
        case MEMD_PLAN_COL_SIZE: rc = number(p, x, MEMD_PLAN_COL_SIZE, &b.size); break;
        case MEMD_PLAN_COL_ALIGNMENT:
            fal = x;
            if (x->len)
                rc = number(p, x, MEMD_PLAN_COL_ALIGNMENT, &b.align);
            break;
        case MEMD_PLAN_COL_OFFSET:
            foff = x;
            if (x->len) {
                rc = number(p, x, MEMD_PLAN_COL_OFFSET, &b.offset);
                b.pinned = true;
            }
            break;
        }
        if (rc)
            return rc;
    }
    if (b.lower >= b.upper)
        return fail(p, p->line, fup->col,
                    "'upper' (%" PRIu64 ") must be greater than 'lower' (%" PRIu64 ")", b.upper,
                    b.lower);
    if (fal && (b.align == 0 || (b.align & (b.align - 1))))
        return fail(p, p->line, fal->col, "alignment %" PRIu64 " is not a power of two",
                    b.align);
    if (b.pinned && b.offset % b.align)
        return fail(p, p->line, foff->col,
                    "offset %" PRIu64 " is not a multiple of the alignment %" PRIu64, b.offset,
                    b.align);
    if (b.pinned && b.size > UINT64_MAX - b.offset)
        return fail(p, p->line, foff->col, "offset + size does not fit in 64 bits");
    if (c->n >= MEMD_PLAN_CSV_MAX_ROWS)
        return fail(p, p->line, 1, "more than %u rows", MEMD_PLAN_CSV_MAX_ROWS);
    if (p->line > UINT32_MAX)
        return fail(p, p->line, 1, "more than %" PRIu32 " lines", UINT32_MAX);
    if (p->idlen + fid->len + 1 > UINT32_MAX)
        return fail(p, p->line, fid->col, "the ids take more than 4 GiB");
    if (p->idcap - p->idlen < fid->len + 1) {
        size_t cap = p->idcap ? p->idcap : 4096;
        while (cap - p->idlen < fid->len + 1)
            cap *= 2;
        char *nb = realloc(c->id_block, cap);
        if (!nb)
            return -ENOMEM;
        c->id_block = nb;
        p->idcap = cap;
    }
    memcpy(c->id_block + p->idlen, fid->s, fid->len);
    c->id_block[p->idlen + fid->len] = 0;
    c->id_at[c->n] = (uint32_t)p->idlen;
    p->idlen += fid->len + 1;
    c->bufs[c->n] = b;
    c->lines[c->n] = (uint32_t)p->line;
    idcol[c->n] = fid->col;
    c->n++;
    if (b.pinned)
        c->npinned++;
    return 0;
}

int memd_plan_csv_parse(const char *name, const char *data, size_t len, memd_plan_csv *out,
                        memd_error *err)
{
    memset(out, 0, sizeof(*out));
    parser p = {.name = name ? name : "<input>", .err = err};
    size_t cap = 0, *idcol = NULL, pos = 0;
    bool header = false;
    int rc = 0;
    if (len >= 3 && !memcmp(data, "\xEF\xBB\xBF", 3))
        pos = 3; /* a UTF-8 byte order mark, as spreadsheets write */
    while (pos < len && !rc) {
        p.line++;
        const char *line = data + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        if (ll && line[ll - 1] == '\r')
            ll--;
        const char *bad = memchr(line, '\r', ll);
        if (bad) {
            rc = fail(&p, p.line, (size_t)(bad - line) + 1, "stray carriage return");
            break;
        }
        bad = memchr(line, '\0', ll);
        if (bad) {
            rc = fail(&p, p.line, (size_t)(bad - line) + 1, "NUL byte");
            break;
        }
        if (ll == 0)
            continue;
        if (!header) {
            rc = parse_header(&p, line, ll, out);
            header = true;
            continue;
        }
        if (out->n == cap && (rc = grow(out, &cap, &idcol)))
            break;
        rc = parse_row(&p, line, ll, out, idcol);
    }
    if (!rc && !header)
        rc = fail(&p, p.line ? p.line : 1, 1, "empty file: expected a header 'id,lower,upper,size'");
    if (!rc)
        rc = check_dups(&p, out, idcol);
    free(idcol);
    if (rc == -ENOMEM)
        memd_error_set(memd_error_at(err, p.name, 0, 0), rc, "out of memory");
    if (rc)
        memd_plan_csv_free(out);
    return rc;
}

int memd_plan_csv_read(const char *path, memd_plan_csv *out, memd_error *err)
{
    memset(out, 0, sizeof(*out));
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        return memd_error_set(memd_error_at(err, path, 0, 0), -e, "%s", strerror(e));
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    int rc = 0;
    while (buf) {
        if (len == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0)
            break;
    }
    if (!buf)
        rc = memd_error_set(memd_error_at(err, path, 0, 0), -ENOMEM, "out of memory");
    else if (ferror(f))
        rc = memd_error_set(memd_error_at(err, path, 0, 0), -EIO, "read error");
    fclose(f);
    if (!rc)
        rc = memd_plan_csv_parse(path, buf, len, out, err);
    free(buf);
    return rc;
}

int memd_plan_csv_write(FILE *f, const memd_plan_csv *csv, const uint64_t *offsets)
{
    int ncols = csv->ncols;
    for (int k = 0; k < ncols; k++)
        fprintf(f, "%s%s", k ? "," : "", col_names[csv->cols[k]]);
    if (!csv->has_offset)
        fprintf(f, ",offset");
    fputc('\n', f);
    for (size_t i = 0; i < csv->n; i++) {
        const memd_plan_buffer *b = &csv->bufs[i];
        for (int k = 0; k < ncols; k++) {
            if (k)
                fputc(',', f);
            switch (csv->cols[k]) {
            case MEMD_PLAN_COL_ID: fputs(memd_plan_csv_id(csv, i), f); break;
            case MEMD_PLAN_COL_LOWER: fprintf(f, "%" PRIu64, b->lower); break;
            case MEMD_PLAN_COL_UPPER: fprintf(f, "%" PRIu64, b->upper); break;
            case MEMD_PLAN_COL_SIZE: fprintf(f, "%" PRIu64, b->size); break;
            case MEMD_PLAN_COL_ALIGNMENT: fprintf(f, "%" PRIu64, b->align); break;
            case MEMD_PLAN_COL_OFFSET: fprintf(f, "%" PRIu64, offsets[i]); break;
            }
        }
        if (!csv->has_offset)
            fprintf(f, ",%" PRIu64, offsets[i]);
        fputc('\n', f);
    }
    return ferror(f) ? -EIO : 0;
}

int memd_plan_csv_save(const char *path, const memd_plan_csv *csv, const uint64_t *offsets,
                       memd_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        return memd_error_set(memd_error_at(err, path, 0, 0), -e, "%s", strerror(e));
    }
    int rc = memd_plan_csv_write(f, csv, offsets);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc < 0)
        memd_error_set(memd_error_at(err, path, 0, 0), rc, "write failed: %s", strerror(-rc));
    return rc;
}
