/* memd daemon — service state setup and teardown (see state.h). */
#include "state.h"
#include "region_range.h"
#include "subdev.h"
#include "cglimit.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "event.h"
#include "history.h"
#include "postmortem.h"
#include "hooks.h"
#include "oom.h"
#include "session.h"

/* A group by number or name: 0, or -ENOENT. */
static int lookup_group(const char *name, gid_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(name, &end, 10);
    if (*name && *end == '\0' && errno == 0 && v < (gid_t)-1) {
        *out = (gid_t)v;
        return 0;
    }
    struct group gr, *res = NULL;
    char buf[16384];
    int rc = getgrnam_r(name, &gr, buf, sizeof buf, &res);
    if (rc != 0 || !res)
        return -ENOENT;
    *out = gr.gr_gid;
    return 0;
}

int memd_resolve_group(const memd_config *cfg, gid_t *out, memd_error *err)
{
    const char *name = cfg->admin_group;
    if (lookup_group(name, out) < 0) {
        memd_error_at(err, cfg->path, cfg->admin_group_line, cfg->admin_group_column);
        return memd_error_set(err, -ENOENT, "admin_group '%s': no such group", name);
    }
    return 0;
}

int memd_state_init(memd_state *st, const memd_config *cfg, memd_error *err)
{
    *st = (memd_state){0};
    *err = (memd_error){0};
    memd_error_at(err, cfg->path, 0, 0);
    st->limits = cfg->limits;
    st->names.global = cfg->shared_names_global;
    st->next_handle = 1;
    st->reply_room = SIZE_MAX;
    st->next_mark = 1;
    st->next_session_id = 1;
    st->start_ns = memd_now_ns();
    memd_pool_init(&st->alloc_pool, sizeof(memd_alloc), 1024);
    memd_pool_init(&st->hold_pool, sizeof(memd_xhold), 256);
    if (cfg->admin_group[0]) {
        int rc = memd_resolve_group(cfg, &st->admin_gid, err);
        if (rc < 0)
            return rc;
        st->have_admin_gid = true;
    }
    if (cfg->ndevices == 0)
        return memd_error_set(err, -EINVAL, "no devices configured");
    int src = memd_subdevs_init(st, cfg, err);
    for (uint32_t i = 0; src == 0 && i < st->nsubdevs; i++) {
        memd_subdev *d = &st->subdevs[i];
        for (uint32_t g = 0; src == 0 && g < d->spec.ngroups; g++)
            if ((src = lookup_group(d->spec.groups[g], &d->gids[g])) < 0)
                memd_error_set(err, src, "sub-device '%s': no such group '%s'", d->spec.name,
                               d->spec.groups[g]);
    }
    if (src < 0) {
        memd_subdevs_fini(st);
        return src;
    }
    st->devs = calloc(cfg->ndevices, sizeof *st->devs);
    st->group_clients = calloc((size_t)cfg->ndevices * MEMD_KIND_COUNT, sizeof *st->group_clients);
    if (!st->devs || !st->group_clients) {
        free(st->devs);
        free(st->group_clients);
        st->devs = NULL;
        st->group_clients = NULL;
        return memd_self_oom(err);
    }
    for (uint32_t i = 0; i < cfg->ndevices; i++) {
        memd_error dev = {0};
        int rc = memd_device_create(&cfg->devices[i], &st->devs[i].dev, &dev);
        if (rc < 0) {
            memd_error_set(err, rc, "device %u (%s): %s", cfg->devices[i].id, cfg->devices[i].name,
                           dev.msg);
            memd_state_fini(st);
            return rc;
        }
        st->devs[i].spec = memd_device_spec_of(st->devs[i].dev);
        st->ndevs = i + 1;
    }
    int rc = memd_subdev_windows_open(st, err); /* before the store restores buffers there */
    if (rc == 0)
        rc = memd_cglimits_init(st, cfg, err);
    if (rc < 0) {
        memd_state_fini(st);
        return rc;
    }
    memd_region_range_listen(st);
    return 0;
}

void memd_state_fini(memd_state *st)
{
    while (st->sessions)
        memd_session_close(st, st->sessions);
    memd_hooks_destroy(st); /* before the devices: listeners may still release holds */
    for (uint32_t i = 0; i < st->ndevs; i++)
        memd_device_destroy(st->devs[i].dev);
    free(st->devs);
    free(st->group_clients);
    memd_handles_free(&st->handles);
    memd_creator_put(st->restore_creator);
    memd_map_free(&st->quota);
    memd_names_free(&st->names);
    memd_events_free(st);
    memd_history_free(st);
    memd_postmortem_free(st);
    memd_pool_free(&st->alloc_pool);
    memd_pool_free(&st->hold_pool);
    free(st->scratch);
    memd_subdevs_fini(st);
    memd_cglimits_fini(st);
    *st = (memd_state){0};
}


int memd_state_bank_lowest(const memd_state *st, uint32_t device, memd_kind kind, uint32_t bank,
                           uint64_t *addr, uint64_t *absolute, memd_error *err)
{
    int dev = memd_state_dev_index(st, device);
    if (dev < 0)
        return memd_error_set(err, dev, "no device %u (%u configured)", device, st->ndevs);
    const memd_bank_group_spec *g = &st->devs[dev].spec->groups[kind];
    if (bank >= g->banks)
        return memd_error_set(err, -EINVAL, "device %u has %u %s banks: no bank %u", device,
                              g->banks, memd_kind_name(kind), bank);
    int rc = memd_device_bank_lowest(st->devs[dev].dev, kind, bank, addr);
    if (rc == -ENODATA)
        return 0;
    (void)memd_device_bank_address(st->devs[dev].dev, kind, bank, *addr, absolute);
    return 1;
}
