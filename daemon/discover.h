/* memd daemon — `memd --discover [--json]`: the host's accelerators, found in sysfs and
 * devfs, each printed as a memd.yaml stanza with its descriptor pair. */
#ifndef MEMD_DAEMON_DISCOVER_H
#define MEMD_DAEMON_DISCOVER_H

#include <stdbool.h>
#include <stdio.h>

typedef struct memd_discover_opts {
    const char *sysfs;       /* sysfs mount (default /sys); tests pass a tree they built */
    const char *devfs;       /* devfs mount (default /dev) */
    const char *descriptors; /* where the descriptor pairs are: a tt-metal tree
                              * (tt_metal/soc_descriptors/...) or one folder holding
                              * soc_<arch>.yaml and core_<arch>.yaml; NULL: $TT_METAL_HOME */
    bool json;
} memd_discover_opts;

/* Prints what it finds on out, problems on errout; returns the exit code: 0 (devices
 * found, or none: an empty list is an answer), 1 (sysfs unreadable). */
int memd_discover(const memd_discover_opts *o, FILE *out, FILE *errout);

#endif
