/* memd — the `sub_devices` list of memd.yaml (config.h), errors at file:line:col:
 *
 *   sub_devices:
 *     - name: left              # [A-Za-z0-9._-], unique
 *       device: 0               # a configured device id
 *       group: sram             # its bank group: sram (l1) or dram (global)
 *       banks: 0-31             # bank ids and ranges, increasing ("0-3,8"), or instead
 *       cores: {x: 0-7, y: 0-3} # the banks of these logical cores (devices whose banks
 *                               # have cores: tt-metal); a list of such rectangles too
 *       budget: 4MiB            # optional: bytes over all its banks
 *       window: 64KiB           # optional: bytes per bank it owns at the bottom of the
 *                               # group's first allocatable region (local L1)
 *       overlap: [right]        # optional: sub-devices that may share its banks
 *       users: [1000]           # optional: uids whose sessions are bound to it
 *       groups: [render]        # optional: groups (names or gids) likewise */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "banklist.h"
#include "config.h"
#include "names.h"
#include "soc_internal.h"

void memd_subdev_spec_free(memd_subdev_spec *sd)
{
    if (!sd)
        return;
    free(sd->banks);
    sd->banks = NULL;
    sd->nbanks = 0;
}

static bool lists(const memd_subdev_spec *a, const char *name)
{
    for (uint32_t i = 0; i < a->noverlap; i++)
        if (strcmp(a->overlap[i], name) == 0)
            return true;
    return false;
}

/* The first bank two sorted sets share, or UINT32_MAX. */
static uint32_t shared_bank(const memd_subdev_spec *a, const memd_subdev_spec *b)
{
    uint32_t i = 0, j = 0;
    while (i < a->nbanks && j < b->nbanks) {
        if (a->banks[i] == b->banks[j])
            return a->banks[i];
        if (a->banks[i] < b->banks[j])
            i++;
        else
            j++;
    }
    return UINT32_MAX;
}

int memd_subdev_validate(const memd_subdev_spec *sd, const memd_device_spec *devs, uint32_t ndevs,
                         const memd_subdev_spec *const *others, uint32_t nothers, char *msg,
                         size_t cap, const char **key)
{
    const char *unused;
    if (!key)
        key = &unused;
    *key = "banks";
    const memd_device_spec *d = NULL;
    for (uint32_t i = 0; i < ndevs; i++)
        if (devs[i].id == sd->device)
            d = &devs[i];
    if (!d) {
        *key = "device";
        snprintf(msg, cap, "sub-device '%s': no device %" PRIu32, sd->name, sd->device);
        return -EINVAL;
    }
    uint32_t banks = d->groups[sd->kind].banks;
    if (banks == 0) {
        *key = "group";
        snprintf(msg, cap, "sub-device '%s': device %" PRIu32 " has no %s banks", sd->name,
                 sd->device, memd_kind_name(sd->kind));
        return -EINVAL;
    }
    if (d->ttmetal && sd->kind != MEMD_KIND_SRAM) {
        /* It could hold nothing: no interleaved buffers in a sub-device, no bank sets in
         * DRAM (doc/ttmetal.md). */
        *key = "group";
        snprintf(msg, cap, "sub-device '%s': device %" PRIu32 " is described by tt-metal, whose "
                 "sub-devices are sets of cores: group l1, not %s", sd->name, sd->device,
                 memd_kind_name(sd->kind));
        return -EINVAL;
    }
    if (sd->nbanks == 0 || sd->banks[sd->nbanks - 1] >= banks) {
        snprintf(msg, cap, "sub-device '%s': bank %" PRIu32 " is not a bank of %s of device %" PRIu32
                 " (it has %" PRIu32 ")", sd->name, sd->nbanks ? sd->banks[sd->nbanks - 1] : 0,
                 memd_kind_name(sd->kind), sd->device, banks);
        return -EINVAL;
    }
    for (uint32_t i = 0; i < nothers; i++) {
        const memd_subdev_spec *o = others[i];
        if (strcmp(o->name, sd->name) == 0) {
            *key = "name";
            snprintf(msg, cap, "sub-device name '%s' is used twice", sd->name);
            return -EINVAL;
        }
        for (uint32_t u = 0; u < sd->nusers; u++)
            for (uint32_t v = 0; v < o->nusers; v++)
                if (sd->users[u] == o->users[v]) {
                    *key = "users";
                    snprintf(msg, cap, "sub-device '%s': uid %" PRIu32 " is bound to '%s' already "
                             "(a session belongs to one sub-device)", sd->name, sd->users[u],
                             o->name);
                    return -EINVAL;
                }
        if (o->device != sd->device || o->kind != sd->kind)
            continue;
        uint32_t b = shared_bank(sd, o);
        if (b != UINT32_MAX && (sd->window || o->window)) {
            *key = sd->window ? "window" : "banks";
            snprintf(msg, cap, "sub-device '%s' shares bank %" PRIu32 " with '%s', and %s owns "
                     "a window: windows share addresses, so their banks may not be shared",
                     sd->name, b, o->name, sd->window ? sd->name : o->name);
            return -EINVAL;
        }
        if (b != UINT32_MAX && !lists(sd, o->name) && !lists(o, sd->name)) {
            snprintf(msg, cap, "sub-device '%s' shares bank %" PRIu32 " with '%s': list it under "
                     "'overlap' to allow that", sd->name, b, o->name);
            return -EINVAL;
        }
    }
    return 0;
}

static int name_list(const char *file, const memd_ynode *v, const char *what,
                     char (*out)[MEMD_NAME_MAX], size_t cap, uint32_t *n, memd_error *err)
{
    int rc = memd_yaml_expect_seq(file, v, what, err);
    if (rc)
        return rc;
    if (v->n > MEMD_SUBDEV_MAX_LIST)
        return memd_yaml_error(err, file, v, "at most %d entries", MEMD_SUBDEV_MAX_LIST);
    for (size_t i = 0; i < v->n; i++)
        if ((rc = memd_yaml_name(file, v->items[i], out[i], cap, err)))
            return rc;
    *n = (uint32_t)v->n;
    return 0;
}

/* banks: text (at v) into sd->banks. */
static int bank_list(const char *file, const memd_ynode *v, const char *text,
                     memd_subdev_spec *sd, memd_error *err)
{
    uint32_t n, bad;
    int rc = memd_parse_bank_list(text, MEMD_MAX_BANKS, NULL, 0, &n, &bad);
    if (rc == 0 && !(sd->banks = malloc(sizeof(*sd->banks) * n)))
        return memd_yaml_error(err, file, v, "out of memory");
    if (rc == 0)
        rc = memd_parse_bank_list(text, MEMD_MAX_BANKS, sd->banks, n, &sd->nbanks, &bad);
    if (rc == -ERANGE)
        return memd_yaml_error(err, file, v, "bad bank list '%s' at character %" PRIu32
                               ": bank id too large (a bank group has at most %u banks)", text,
                               bad + 1, MEMD_MAX_BANKS);
    if (rc)
        return memd_yaml_error(err, file, v, "bad bank list '%s' at character %" PRIu32
                               ": expected increasing bank ids and ranges like 0-3,8", text, bad + 1);
    return 0;
}

/* Logical core coordinates are small (a tt-metal grid is tens of cores wide). */
#define CORE_COORD_MAX 1024u

/* One axis of a core rectangle ("0-7", "3", "0-3,5"): in[c] for each coordinate c. */
static int core_axis(const char *file, const memd_ynode *v, const char *axis, bool *in,
                     memd_error *err)
{
    char text[256];
    int rc = memd_yaml_string(file, v, text, sizeof text, err);
    if (rc)
        return rc;
    uint32_t ids[CORE_COORD_MAX], n, bad;
    rc = memd_parse_bank_list(text, CORE_COORD_MAX, ids, CORE_COORD_MAX, &n, &bad);
    if (rc)
        return memd_yaml_error(err, file, v, "bad core %s '%s' at character %" PRIu32 ": expected "
                               "increasing coordinates and ranges like 0-3,5 (below %u)", axis,
                               text, bad + 1, CORE_COORD_MAX);
    for (uint32_t i = 0; i < n; i++)
        in[ids[i]] = true;
    return 0;
}

/* One rectangle {x: LIST, y: LIST}: marks the banks of g whose logical core is in it. */
static int core_rect(const char *file, const memd_ynode *r, const memd_bank_group_spec *g,
                     bool *pick, memd_error *err)
{
    static const char *const keys[] = {"x", "y", NULL};
    int rc = memd_yaml_expect_map(file, r, "cores as {x: 0-7, y: 0-3} (logical coordinates)", err);
    if (rc == 0)
        rc = memd_yaml_check_keys(file, r, "a core rectangle", keys, err);
    bool x[CORE_COORD_MAX] = {false}, y[CORE_COORD_MAX] = {false};
    if (rc == 0 && !memd_yaml_get(r, "x"))
        rc = memd_yaml_error(err, file, r, "missing key 'x' in a core rectangle");
    if (rc == 0 && !memd_yaml_get(r, "y"))
        rc = memd_yaml_error(err, file, r, "missing key 'y' in a core rectangle");
    if (rc == 0)
        rc = core_axis(file, memd_yaml_get(r, "x"), "x", x, err);
    if (rc == 0)
        rc = core_axis(file, memd_yaml_get(r, "y"), "y", y, err);
    for (uint32_t b = 0; rc == 0 && b < g->banks; b++)
        if (g->cores[b].logical_x < CORE_COORD_MAX && g->cores[b].logical_y < CORE_COORD_MAX &&
            x[g->cores[b].logical_x] && y[g->cores[b].logical_y])
            pick[b] = true;
    return rc;
}

/* cores: the ids (increasing) of the banks of sd's group whose logical core lies in one of
 * the rectangles; every bank of a core with several (tt-metal storage cores). A device
 * the config lacks is left to memd_subdev_validate to report. */
static int resolve_cores(const char *file, const memd_ynode *cores, const memd_config *cfg,
                         memd_subdev_spec *sd, memd_error *err)
{
    const memd_device_spec *d = NULL;
    for (uint32_t i = 0; i < cfg->ndevices; i++)
        if (cfg->devices[i].id == sd->device)
            d = &cfg->devices[i];
    if (!d || d->groups[sd->kind].banks == 0)
        return 0;
    const memd_bank_group_spec *g = &d->groups[sd->kind];
    if (!g->cores)
        return memd_yaml_error(err, file, cores, "sub-device '%s': the %s banks of device %" PRIu32
                               " have no core coordinates (tt-metal devices do): give banks",
                               sd->name, memd_kind_name(sd->kind), sd->device);
    bool *pick = calloc(g->banks, sizeof *pick);
    if (!pick)
        return memd_yaml_error(err, file, cores, "out of memory");
    int rc = 0;
    if (cores->type == MEMD_Y_SEQ) {
        if (cores->n == 0)
            rc = memd_yaml_error(err, file, cores, "an empty list of core rectangles");
        for (size_t i = 0; i < cores->n && rc == 0; i++)
            rc = core_rect(file, cores->items[i], g, pick, err);
    } else {
        rc = core_rect(file, cores, g, pick, err);
    }
    uint32_t n = 0;
    for (uint32_t b = 0; rc == 0 && b < g->banks; b++)
        n += pick[b];
    if (rc == 0 && n == 0)
        rc = memd_yaml_error(err, file, cores, "sub-device '%s': no %s bank of device %" PRIu32
                             " lies on these cores", sd->name, memd_kind_name(sd->kind),
                             sd->device);
    if (rc == 0 && !(sd->banks = malloc(sizeof(*sd->banks) * n)))
        rc = memd_yaml_error(err, file, cores, "out of memory");
    for (uint32_t b = 0; rc == 0 && b < g->banks; b++)
        if (pick[b])
            sd->banks[sd->nbanks++] = b;
    free(pick);
    return rc;
}

static int parse_one(const char *file, const memd_ynode *e, memd_subdev_spec *sd, memd_error *err)
{
    static const char *const keys[] = {"name", "device", "group", "banks", "cores", "budget",
                                       "window", "overlap", "users", "groups", NULL};
    int rc = memd_yaml_expect_map(file, e, "a sub-device {name, device, group, banks, ...}", err);
    if (rc == 0)
        rc = memd_yaml_check_keys(file, e, "a sub-device", keys, err);
    if (rc)
        return rc;
    const memd_ynode *v;
    static const char *const need[] = {"name", "device", "group"};
    for (int i = 0; i < 3; i++)
        if (!memd_yaml_get(e, need[i]))
            return memd_yaml_error(err, file, e, "missing key '%s' in a sub-device", need[i]);
    if (!memd_yaml_get(e, "banks") == !memd_yaml_get(e, "cores"))
        return memd_yaml_error(err, file, memd_yaml_get(e, "cores") ? memd_yaml_get(e, "cores") : e,
                               memd_yaml_get(e, "banks") ? "give banks or cores, not both"
                                                         : "missing key 'banks' in a sub-device "
                                                           "(or 'cores')");
    if ((rc = memd_yaml_name(file, memd_yaml_get(e, "name"), sd->name, sizeof sd->name, err)))
        return rc;
    uint64_t id;
    if ((rc = memd_yaml_uint(file, memd_yaml_get(e, "device"), UINT32_MAX, &id, err)))
        return rc;
    sd->device = (uint32_t)id;
    v = memd_yaml_get(e, "group");
    if (v->type != MEMD_Y_SCALAR || memd_kind_parse(v->str, &sd->kind) < 0)
        return memd_yaml_error(err, file, v, "expected a bank group: sram (l1) or dram (global)");
    v = memd_yaml_get(e, "banks");
    char text[4096];
    if (!v)
        ; /* cores: resolved against the device (resolve_cores) */
    else if ((rc = memd_yaml_string(file, v, text, sizeof text, err)))
        return rc;
    if (v)
        rc = bank_list(file, v, text, sd, err);
    if (rc)
        return rc;
    if ((v = memd_yaml_get(e, "budget")) && (rc = memd_yaml_size(file, v, &sd->budget, err)))
        return rc;
    if ((v = memd_yaml_get(e, "window")) && (rc = memd_yaml_size(file, v, &sd->window, err)))
        return rc;
    if ((v = memd_yaml_get(e, "overlap")) &&
        (rc = name_list(file, v, "a list of sub-device names", sd->overlap, MEMD_NAME_MAX,
                        &sd->noverlap, err)))
        return rc;
    if ((v = memd_yaml_get(e, "users"))) {
        if ((rc = memd_yaml_expect_seq(file, v, "a list of uids", err)))
            return rc;
        if (v->n > MEMD_SUBDEV_MAX_LIST)
            return memd_yaml_error(err, file, v, "at most %d users", MEMD_SUBDEV_MAX_LIST);
        for (size_t i = 0; i < v->n; i++) {
            uint64_t uid;
            if ((rc = memd_yaml_uint(file, v->items[i], UINT32_MAX - 1, &uid, err)))
                return rc;
            sd->users[i] = (uint32_t)uid;
        }
        sd->nusers = (uint32_t)v->n;
    }
    if ((v = memd_yaml_get(e, "groups"))) {
        if ((rc = memd_yaml_expect_seq(file, v, "a list of groups", err)))
            return rc;
        if (v->n > MEMD_SUBDEV_MAX_LIST)
            return memd_yaml_error(err, file, v, "at most %d groups", MEMD_SUBDEV_MAX_LIST);
        for (size_t i = 0; i < v->n; i++)
            if ((rc = memd_yaml_name(file, v->items[i], sd->groups[i], sizeof sd->groups[i], err)))
                return rc;
        sd->ngroups = (uint32_t)v->n;
    }
    return 0;
}

int memd_soc_config_subdevs(const char *file, const memd_ynode *list, memd_config *cfg,
                            memd_error *err)
{
    int rc = memd_yaml_expect_seq(file, list, "a list of sub-devices", err);
    if (rc)
        return rc;
    if (list->n > MEMD_SUBDEV_MAX)
        return memd_yaml_error(err, file, list, "at most %d sub-devices", MEMD_SUBDEV_MAX);
    cfg->subdevs = calloc(list->n + 1, sizeof(*cfg->subdevs));
    const memd_subdev_spec **prev = calloc(list->n + 1, sizeof(*prev));
    if (!cfg->subdevs || !prev) {
        free(prev);
        return memd_yaml_error(err, file, list, "out of memory");
    }
    for (size_t i = 0; i < list->n && rc == 0; i++) {
        memd_subdev_spec *sd = &cfg->subdevs[i];
        cfg->nsubdevs++;
        rc = parse_one(file, list->items[i], sd, err);
        const memd_ynode *cores = memd_yaml_get(list->items[i], "cores");
        if (rc == 0 && cores)
            rc = resolve_cores(file, cores, cfg, sd, err);
        char msg[256];
        const char *key;
        if (rc == 0 && memd_subdev_validate(sd, cfg->devices, cfg->ndevices, prev, (uint32_t)i,
                                            msg, sizeof msg, &key) < 0)
            rc = memd_yaml_error(err, file, memd_yaml_get(list->items[i], key)
                                                ? memd_yaml_get(list->items[i], key)
                                                : cores, /* banks given as cores */
                                 "%s", msg);
        prev[i] = sd;
    }
    /* Overlap names must name sub-devices (a typo would silently forbid the overlap). */
    for (uint32_t i = 0; i < cfg->nsubdevs && rc == 0; i++)
        for (uint32_t k = 0; k < cfg->subdevs[i].noverlap && rc == 0; k++) {
            bool found = false;
            for (uint32_t j = 0; j < cfg->nsubdevs; j++)
                found |= strcmp(cfg->subdevs[j].name, cfg->subdevs[i].overlap[k]) == 0;
            if (!found)
                rc = memd_yaml_error(err, file,
                                     memd_yaml_get(list->items[i], "overlap")->items[k],
                                     "overlap names no sub-device '%s'",
                                     cfg->subdevs[i].overlap[k]);
        }
    free(prev);
    return rc;
}
