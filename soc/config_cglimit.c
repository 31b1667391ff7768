/* memd — the `cgroup_limits` list of memd.yaml (config.h), errors at file:line:col:
 *
 *   cgroup_limits:
 *     - cgroup: /kubepods.slice/kubepods-pod1234.slice  # absolute cgroup v2 path
 *       device: 0             # a configured device id
 *       group: dram           # optional: dram (global, the default) or sram (l1)
 *       max: 8GiB             # bytes on the device (size per bank x banks) */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_path.h"
#include "config.h"
#include "names.h"
#include "soc_internal.h"

static int one(const char *file, const memd_ynode *e, const memd_config *cfg,
               memd_cglimit_spec *l, memd_error *err)
{
    static const char *const keys[] = {"cgroup", "device", "group", "max", NULL};
    static const char *const need[] = {"cgroup", "device", "max"};
    int rc = memd_yaml_expect_map(file, e, "a cgroup limit {cgroup, device, group, max}", err);
    if (rc || (rc = memd_yaml_check_keys(file, e, "a cgroup limit", keys, err)))
        return rc;
    for (int i = 0; i < 3; i++)
        if (!memd_yaml_get(e, need[i]))
            return memd_yaml_error(err, file, e, "missing key '%s' in a cgroup limit", need[i]);
    const memd_ynode *v = memd_yaml_get(e, "cgroup");
    const char *why;
    if ((rc = memd_yaml_string(file, v, l->cgroup, sizeof l->cgroup, err)))
        return rc;
    if (memd_cgroup_path_check(l->cgroup, &why) < 0)
        return memd_yaml_error(err, file, v, "bad cgroup path '%s': %s", l->cgroup, why);
    uint64_t id;
    v = memd_yaml_get(e, "device");
    if ((rc = memd_yaml_uint(file, v, UINT32_MAX, &id, err)))
        return rc;
    l->device = (uint32_t)id;
    const memd_device_spec *d = NULL;
    for (uint32_t i = 0; i < cfg->ndevices; i++)
        if (cfg->devices[i].id == l->device)
            d = &cfg->devices[i];
    if (!d)
        return memd_yaml_error(err, file, v, "no device %" PRIu32, l->device);
    l->kind = MEMD_KIND_DRAM;
    if ((v = memd_yaml_get(e, "group")) &&
        (v->type != MEMD_Y_SCALAR || memd_kind_parse(v->str, &l->kind) < 0))
        return memd_yaml_error(err, file, v, "expected a bank group: sram (l1) or dram (global)");
    if (d->groups[l->kind].banks == 0)
        return memd_yaml_error(err, file, e, "device %" PRIu32 " has no %s banks", l->device,
                               memd_kind_name(l->kind));
    return memd_yaml_size(file, memd_yaml_get(e, "max"), &l->max, err);
}

int memd_soc_config_cglimits(const char *file, const memd_ynode *list, memd_config *cfg,
                             memd_error *err)
{
    int rc = memd_yaml_expect_seq(file, list, "a list of cgroup limits", err);
    if (rc)
        return rc;
    if (list->n && !(cfg->cglimits = calloc(list->n, sizeof *cfg->cglimits)))
        return memd_yaml_error(err, file, list, "out of memory");
    for (size_t i = 0; i < list->n; i++) {
        memd_cglimit_spec *l = &cfg->cglimits[i];
        if ((rc = one(file, list->items[i], cfg, l, err)))
            return rc;
        cfg->ncglimits++;
        for (size_t j = 0; j < i; j++) {
            const memd_cglimit_spec *o = &cfg->cglimits[j];
            if (!strcmp(o->cgroup, l->cgroup) && o->device == l->device && o->kind == l->kind)
                return memd_yaml_error(err, file, list->items[i],
                                       "cgroup %s has a limit on device %" PRIu32 " %s already "
                                       "(line %u)", l->cgroup, l->device,
                                       memd_kind_name(l->kind), list->items[j]->line);
        }
    }
    return 0;
}
