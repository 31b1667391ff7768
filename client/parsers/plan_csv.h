/* Plan problems as CSV (the format MiniMalloc and other planners use).
 *
 * Header: `id,lower,upper,size` plus optional `alignment` and `offset` columns, in any
 * order; the header names decide. Rows: id is any non-empty text without `,` or `"`
 * (unique); lower, upper, size, alignment, offset are unsigned decimal integers.
 * Lifetimes are half-open: lower < upper. alignment: a power of two, empty cell = 1.
 * offset: empty cell = not pinned; a value pins the buffer (it must be aligned).
 * CRLF line ends are accepted; empty lines are skipped; the last line may lack a
 * newline. Any other deviation is an error naming file:line:column (the column is the
 * 1-based byte position where the offending field starts).
 */
#ifndef MEMD_PARSERS_PLAN_CSV_H
#define MEMD_PARSERS_PLAN_CSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "plan.h"

#define MEMD_PLAN_CSV_MAX_ID 1024        /* bytes in one id */
#define MEMD_PLAN_CSV_MAX_ROWS 50000000u /* keeps every index in uint32_t range */

enum memd_plan_csv_col {
    MEMD_PLAN_COL_ID,
    MEMD_PLAN_COL_LOWER,
    MEMD_PLAN_COL_UPPER,
    MEMD_PLAN_COL_SIZE,
    MEMD_PLAN_COL_ALIGNMENT,
    MEMD_PLAN_COL_OFFSET,
    MEMD_PLAN_COL_COUNT
};

typedef struct memd_plan_csv {
    size_t n;
    memd_plan_buffer *bufs;  /* n entries; pinned = the row had an offset */
    /* Row i's id is the NUL-terminated string at id_block + id_at[i] (memd_plan_csv_id):
     * every id in one allocation, and 4-byte offsets and lines rather than pointers
     * and size_t (8 MB less at a million rows, where memctl plan's memory counts). */
    char *id_block;
    uint32_t *id_at;
    uint32_t *lines;         /* 1-based line of each row, for messages */
    int cols[MEMD_PLAN_COL_COUNT]; /* header order: cols[k] = kind of column k */
    int ncols;
    bool has_alignment, has_offset;
    size_t npinned;
} memd_plan_csv;

static inline const char *memd_plan_csv_id(const memd_plan_csv *c, size_t i)
{
    return c->id_block + c->id_at[i];
}

/* Parses data[0..len). name is used in messages. 0 on success; -EINVAL with err's file
 * (name), line, column and message set (memd_error_format: "name:line:col: what");
 * -ENOMEM (err names the file). On error *out is left empty (nothing to free). */
int memd_plan_csv_parse(const char *name, const char *data, size_t len, memd_plan_csv *out,
                        memd_error *err);

/* Reads and parses a file; -errno from the file system with err naming the file too. */
int memd_plan_csv_read(const char *path, memd_plan_csv *out, memd_error *err);

void memd_plan_csv_free(memd_plan_csv *csv);

/* Writes the rows in the input's column order, with the offset column filled from
 * offsets[] (appended when the input had none). 0 or -EIO. */
int memd_plan_csv_write(FILE *f, const memd_plan_csv *csv, const uint64_t *offsets);
/* The same into a new file at path (the file is always closed). 0, or a negative errno
 * with err naming the file. */
int memd_plan_csv_save(const char *path, const memd_plan_csv *csv, const uint64_t *offsets,
                       memd_error *err);

#endif
