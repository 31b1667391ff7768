/* memctl — pictures of the daemon's map: dump --svg FILE and --html FILE
 * (memctl_svg.c). The snapshot needs MEMCLIENT_DUMP_BLOCKS (free gaps, and the blocks of
 * allocations this session cannot list). Allocations not matching flt are drawn pale. */
#ifndef MEMD_MEMCTL_PICTURE_H
#define MEMD_MEMCTL_PICTURE_H

#include <stdio.h>

#include "memctl_filter.h"
#include "memctl_service.h"

int memctl_picture_svg(FILE *out, const memclient_snapshot *s, const memctl_filter *flt);
int memctl_picture_html(FILE *out, const memclient_snapshot *s, const memctl_filter *flt);

/* The start of a self-contained page: doctype, head with the pictures' style, <body>
 * and an <h1> of title. The caller ends it with "</body></html>". */
void memctl_picture_html_begin(FILE *out, const char *title);
/* The i-th of a series of distinct colours (hues spread by the golden angle). */
void memctl_picture_hue(size_t i, char *buf, size_t len);

#endif
