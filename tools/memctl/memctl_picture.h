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

#endif
