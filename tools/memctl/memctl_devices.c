/* memctl devices / memctl sessions: the device and session parts of the state dump. */
#include "memctl_service.h"

int memctl_cmd_devices(const memctl_globals *g, int argc, char **argv)
{
    return memctl_show_snapshot(g, argc, argv,
                                "devices, their bank groups and regions (sizes per bank)",
                                memctl_devices_table);
}

int memctl_cmd_sessions(const memctl_globals *g, int argc, char **argv)
{
    return memctl_show_snapshot(g, argc, argv,
                                "connected clients (an admin sees all, others their own)",
                                memctl_sessions_table);
}
