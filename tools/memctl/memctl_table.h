/* memctl — text tables whose columns are as wide as their widest cell. Names come from
 * other processes and can be any length: fixed printf widths let one long name shift
 * every column after it, so tables are collected first and printed once the widths are
 * known. */
#ifndef MEMD_TOOLS_MEMCTL_TABLE_H
#define MEMD_TOOLS_MEMCTL_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef struct memctl_table memctl_table;

/* A table of ncols columns; headers[i] is column i's title, align[i] 'l' or 'r'
 * (left- or right-aligned). Returns NULL when out of memory. */
memctl_table *memctl_table_new(size_t ncols, const char *const *headers, const char *align);

/* Appends one cell to the current row; after ncols cells the next cell starts a row. */
void memctl_table_cell(memctl_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Ends the current row early: the cells left are empty. */
void memctl_table_end_row(memctl_table *t);
/* A line of its own (a heading between groups of rows); it does not widen columns. */
void memctl_table_line(memctl_table *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The column titles again at this point (one header per device, say). */
void memctl_table_header(memctl_table *t);

/* Prints every line, rows prefixed by indent, the header first unless
 * memctl_table_header placed it; trailing blanks are trimmed. Returns 0, or -ENOMEM if
 * a cell could not be stored (nothing is printed then but an error line). */
int memctl_table_print(const memctl_table *t, FILE *f, const char *indent);
void memctl_table_free(memctl_table *t);

/* Columns a string takes on a terminal: UTF-8 code points (no wide characters). */
size_t memctl_text_width(const char *s);

#endif
