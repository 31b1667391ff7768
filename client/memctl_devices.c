/* memctl devices / memctl sessions: the device and session parts of the state dump. */
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"

typedef void (*table_fn)(FILE *f, const memclient_snapshot *s);

static int show(const memctl_globals *g, int argc, char **argv, const char *help, table_fn fn)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: memctl %s\n  %s\n", argv[0], help);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "memctl %s: unexpected argument '%s' (usage: memctl %s)\n", argv[0],
                argv[1], argv[0]);
        return MEMCTL_EXIT_USAGE;
    }
    memclient *c;
    int r = memctl_connect(g, &c);
    if (r)
        return r;
    memclient_snapshot *s;
    r = memclient_dump(c, MEMCLIENT_ALL_DEVICES, 0, &s);
    memclient_disconnect(c);
    if (r < 0)
        return memctl_fail(NULL, argv[0], "cannot read the daemon's state", r);
    fn(stdout, s);
    memclient_snapshot_free(s);
    return fflush(stdout) == 0 ? 0 : MEMCTL_EXIT_FAIL;
}

int memctl_cmd_devices(const memctl_globals *g, int argc, char **argv)
{
    return show(g, argc, argv, "devices, their bank groups and regions (sizes per bank)",
                memctl_devices_table);
}

int memctl_cmd_sessions(const memctl_globals *g, int argc, char **argv)
{
    return show(g, argc, argv, "connected clients (an admin sees all, others their own)",
                memctl_sessions_table);
}
