/* memctl — allocation filters (see memctl_filter.h). */
#include "memctl_filter.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "memctl_service.h"

const char memctl_filter_help[] =
    "  --pid PID        only allocations made by process PID\n"
    "  --session ID     only allocations of session ID\n"
    "  --name GLOB      only allocations whose name matches GLOB (fnmatch: *, ?, [..])\n"
    "  --class CLASS    only code, constant, placeholder, internal or logging buffers\n"
    "  --device N       only device N\n";

int memctl_filter_opt(memctl_filter *flt, const char *cmd, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    bool pid = !strcmp(a, "--pid"), session = !strcmp(a, "--session"),
         name = !strcmp(a, "--name"), cls = !strcmp(a, "--class"),
         device = !strcmp(a, "--device");
    if (!pid && !session && !name && !cls && !device)
        return 0;
    if (!(v = memctl_optarg(cmd, argc, argv, i)))
        return -1;
    if (pid && memctl_parse_u32(v, &flt->pid) < 0)
        return memctl_bad_value(cmd, a, v, "a process id"), -1;
    if (session && memctl_parse_u32(v, &flt->session) < 0)
        return memctl_bad_value(cmd, a, v, "a session id"), -1;
    if (device && (memctl_parse_u32(v, &flt->device) < 0 || flt->device == MEMCLIENT_ALL_DEVICES))
        return memctl_bad_value(cmd, a, v, "a device id"), -1;
    if (cls && memclient_class_parse(v, &flt->cls) < 0)
        return memctl_bad_value(cmd, a, v, "code, constant, placeholder, internal or logging"), -1;
    if (name)
        flt->name_glob = v;
    flt->has_pid |= pid;
    flt->has_session |= session;
    flt->has_device |= device;
    flt->has_class |= cls;
    flt->any = true;
    return 1;
}

bool memctl_filter_match(const memctl_filter *flt, const memclient_alloc_info *a)
{
    return (!flt->has_pid || a->pid == flt->pid) &&
           (!flt->has_session || a->session_id == flt->session) &&
           (!flt->has_device || a->device == flt->device) &&
           (!flt->has_class || a->cls == flt->cls) &&
           (!flt->name_glob || fnmatch(flt->name_glob, a->name, 0) == 0);
}

void memctl_filter_snapshot(const memctl_filter *flt, memclient_snapshot *s)
{
    if (!flt->any)
        return;
    size_t n = 0;
    for (size_t i = 0; i < s->nallocs; i++)
        if (memctl_filter_match(flt, &s->allocs[i]))
            s->allocs[n++] = s->allocs[i];
    s->nallocs = n;
    if (!flt->has_device)
        return;
#define KEEP(arr, cnt, field)                                                              \
    do {                                                                                   \
        size_t k = 0;                                                                      \
        for (size_t j = 0; j < s->cnt; j++)                                                \
            if (s->arr[j].field == flt->device)                                            \
                s->arr[k++] = s->arr[j];                                                   \
        s->cnt = k;                                                                        \
    } while (0)
    KEEP(devices, ndevices, id);
    KEEP(groups, ngroups, device);
    KEEP(regions, nregions, device);
    KEEP(blocks, nblocks, device);
#undef KEEP
}
