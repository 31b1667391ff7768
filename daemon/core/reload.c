/* memd daemon — applying a re-read config (see reload.h). */
#include "reload.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "oom.h"
#include "cglimit.h"
#include "quota.h"

/* The first field of group k in which a and b differ, or NULL. */
static const char *group_diff(const memd_bank_group_spec *a, const memd_bank_group_spec *b)
{
    if (a->banks != b->banks)
        return "banks";
    if (a->bank_size != b->bank_size)
        return "bank_size";
    if (a->alignment != b->alignment)
        return "alignment";
    for (uint32_t i = 0; i < a->banks; i++)
        if ((a->bank_offsets ? a->bank_offsets[i] : 0) != (b->bank_offsets ? b->bank_offsets[i] : 0))
            return "bank offsets";
    if (a->nregions != b->nregions)
        return "regions";
    for (uint32_t i = 0; i < a->nregions; i++) {
        const memd_region_spec *x = &a->regions[i], *y = &b->regions[i];
        if (strcmp(x->name, y->name) || x->base != y->base || x->size != y->size ||
            x->allocatable != y->allocatable || x->min_alloc != y->min_alloc)
            return "regions";
    }
    return NULL;
}

static bool policy_same(const memd_class_policy *a, const memd_class_policy *b)
{
    return a->enabled == b->enabled && a->region == b->region && a->dir == b->dir &&
           a->fit == b->fit && a->alignment == b->alignment;
}

/* Writes what differs between the running device a and the configured b into why;
 * false when nothing does. */
static bool device_diff(const memd_device_spec *a, const memd_device_spec *b, char *why,
                        size_t len)
{
    const char *what = NULL;
    if (a->id != b->id)
        what = "id";
    else if (strcmp(a->name, b->name))
        what = "name";
    else if (strcmp(a->arch, b->arch))
        what = "arch";
    else if (a->ttmetal != b->ttmetal) /* tt-metal's rules come with its descriptors */
        what = "descriptor format";
    for (int k = 0; !what && k < MEMD_KIND_COUNT; k++) {
        const char *g = group_diff(&a->groups[k], &b->groups[k]);
        for (int c = 0; !g && c < MEMD_CLASS_COUNT; c++)
            if (!policy_same(&a->policy[k][c], &b->policy[k][c]))
                g = "class policy";
        if (g) {
            snprintf(why, len, "device %u (%s): %s %s", a->id, a->name,
                     memd_kind_name((memd_kind)k), g);
            return true;
        }
    }
    const memd_texture_spec *x = &a->texture, *y = &b->texture;
    if (!what && (x->enabled != y->enabled || x->max_width != y->max_width ||
                  x->max_height != y->max_height || x->pitch_alignment != y->pitch_alignment))
        what = "texture";
    if (what)
        snprintf(why, len, "device %u (%s): %s", a->id, a->name, what);
    return what != NULL;
}

int memd_state_reload(memd_state *st, const memd_config *cfg, memd_error *err)
{
    char why[256];
    if (cfg->ndevices != st->ndevs)
        return memd_error_set(err, -EBUSY, "device map changed: %u devices instead of %u",
                              cfg->ndevices, st->ndevs);
    for (uint32_t i = 0; i < st->ndevs; i++)
        if (device_diff(st->devs[i].spec, &cfg->devices[i], why, sizeof why))
            return memd_error_set(err, -EBUSY, "device map changed: %s", why);
    if (cfg->shared_names_global != st->names.global)
        return memd_error_set(err, -EBUSY, "shared_names changed to %s: it takes a restart",
                              cfg->shared_names_global ? "global" : "per_uid");
    gid_t gid = 0;
    if (cfg->admin_group[0]) {
        int rc = memd_resolve_group(cfg, &gid, err);
        if (rc < 0)
            return rc;
    }
    /* The quota books are kept only while a quota is set (alloc.c). */
    if (cfg->limits.quota_per_uid && !st->limits.quota_per_uid && memd_quota_recount(st) < 0)
        return memd_self_oom(err);
    if (!cfg->limits.quota_per_uid)
        memd_map_clear(&st->quota);
    uint32_t max_frame = st->limits.max_frame;
    st->limits = cfg->limits;
    st->limits.max_frame = max_frame;
    st->have_admin_gid = cfg->admin_group[0] != '\0';
    st->admin_gid = gid;
    memd_log_set_level(cfg->log_level);
    return memd_cglimits_reload(st, cfg, err);
}
