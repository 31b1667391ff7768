/* memctl — the allocation filters of dump and top: --pid, --session, --name GLOB,
 * --class, --device. An allocation is shown when it matches every filter given. */
#ifndef MEMD_MEMCTL_FILTER_H
#define MEMD_MEMCTL_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "memd/client.h"

typedef struct memctl_filter {
    bool any;                  /* at least one filter is set */
    bool has_pid, has_session, has_class, has_device;
    uint32_t pid, session, device;
    memd_class cls;
    const char *name_glob;     /* fnmatch(3) pattern, or NULL */
} memctl_filter;

/* If argv[*i] is one of the filter options, takes it and its value (advancing *i) and
 * returns 1; 0 for another argument; -1 after printing a usage error for cmd. */
int memctl_filter_opt(memctl_filter *flt, const char *cmd, int argc, char **argv, int *i);
bool memctl_filter_match(const memctl_filter *flt, const memclient_alloc_info *a);
/* Drops the allocations (and, with --device, devices, bank groups, regions and blocks of
 * other devices) that do not match, in place. */
void memctl_filter_snapshot(const memctl_filter *flt, memclient_snapshot *s);
/* "  --pid PID ..." lines for a command's --help. */
extern const char memctl_filter_help[];

#endif
