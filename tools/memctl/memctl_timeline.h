/* memctl history --html FILE: the flight recorder as a timeline picture (memctl_timeline.c;
 * the page itself is timeline.html, embedded at build time). */
#ifndef MEMD_MEMCTL_TIMELINE_H
#define MEMD_MEMCTL_TIMELINE_H

#include <stdio.h>

#include "memd/client.h"


/* Reads every record passing filt, and a dump (regions, banks of the live bank-set
 * buffers), and writes the self-contained page to out. 0, or a negative errno. */
int memctl_timeline_html(FILE *out, memclient *c, const memclient_history_filter *filt);

#endif
