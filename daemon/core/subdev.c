/* memd daemon — sub-devices at run time (subdev.h). A handful per host: lookups scan. */
#include "subdev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "history.h"
#include "oom.h"

static int copy_spec(memd_subdev_spec *dst, const memd_subdev_spec *src)
{
    *dst = *src;
    dst->banks = malloc(sizeof(*dst->banks) * (src->nbanks ? src->nbanks : 1));
    if (!dst->banks)
        return -ENOMEM;
    memcpy(dst->banks, src->banks, sizeof(*dst->banks) * src->nbanks);
    return 0;
}

int memd_subdevs_init(memd_state *st, const memd_config *cfg, memd_error *err)
{
    st->subdevs = calloc(MEMD_SUBDEV_MAX, sizeof *st->subdevs);
    if (!st->subdevs)
        return memd_self_oom(err);
    memd_subdev_records_listen(st);
    for (uint32_t i = 0; i < cfg->nsubdevs; i++) {
        memd_subdev *d = &st->subdevs[i];
        if (copy_spec(&d->spec, &cfg->subdevs[i]) < 0)
            return memd_self_oom(err);
        st->nsubdevs = i + 1;
        d->from_config = true;
    }
    return 0;
}

void memd_subdevs_fini(memd_state *st)
{
    memd_hook_remove(st, &st->subdev_hook);
    for (uint32_t i = 0; i < st->nsubdevs; i++)
        memd_subdev_spec_free(&st->subdevs[i].spec);
    free(st->subdevs);
    st->subdevs = NULL;
    st->nsubdevs = 0;
}

int memd_subdev_find(const memd_state *st, const char *name)
{
    for (uint32_t i = 0; i < st->nsubdevs; i++)
        if (strcmp(st->subdevs[i].spec.name, name) == 0)
            return (int)i;
    return -ENOENT;
}

int memd_subdev_add(memd_state *st, memd_subdev_spec *sd, uint64_t record, bool adopt,
                    char *msg, size_t cap)
{
    if (memd_subdev_find(st, sd->name) >= 0) {
        snprintf(msg, cap, "sub-device '%s' exists already", sd->name);
        return -EEXIST;
    }
    if (st->nsubdevs == MEMD_SUBDEV_MAX) {
        snprintf(msg, cap, "%d sub-devices defined: no room for '%s'", MEMD_SUBDEV_MAX, sd->name);
        return -ENOSPC;
    }
    /* The same rules as the config's, against the devices and every sub-device. */
    memd_device_spec *devs = calloc(st->ndevs + 1, sizeof *devs);
    const memd_subdev_spec **others = calloc(st->nsubdevs + 1, sizeof *others);
    int rc = devs && others ? 0 : -ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < st->ndevs; i++)
        devs[i] = *st->devs[i].spec; /* shallow: only ids and bank counts are read */
    for (uint32_t i = 0; rc == 0 && i < st->nsubdevs; i++)
        others[i] = &st->subdevs[i].spec;
    if (rc == 0)
        rc = memd_subdev_validate(sd, devs, st->ndevs, others, st->nsubdevs, msg, cap, NULL);
    else
        snprintf(msg, cap, "daemon out of memory");
    free(devs);
    free(others);
    if (rc < 0)
        return rc;
    memd_subdev *d = &st->subdevs[st->nsubdevs];
    memset(d, 0, sizeof *d);
    d->spec = *sd;
    if ((rc = memd_subdev_window_open(st, d, adopt, msg, cap)) < 0)
        return rc;
    st->nsubdevs++;
    d->record = record;
    if (record > st->subdev_record_hwm)
        st->subdev_record_hwm = record;
    sd->banks = NULL; /* taken over */
    sd->nbanks = 0;
    return 0;
}

/* s defined d, or bound itself to it (type). */
static void record(memd_state *st, memd_session *s, uint8_t type, const memd_subdev *d)
{
    memd_hist_obj o = {.type = type, .device = d->spec.device, .kind = (uint8_t)d->spec.kind,
                       .bytes = d->spec.budget, .count = d->spec.nbanks,
                       .name = d->spec.name};
    memd_history_object(st, s, &o);
}

int memd_subdev_define(memd_state *st, memd_session *s, memd_subdev_spec *sd, char *msg,
                       size_t cap)
{
    int rc = memd_subdev_add(st, sd, st->subdev_record_hwm + 1, false, msg, cap);
    if (rc < 0)
        return rc;
    /* The state store writes it before the reply: a restart brings it back. */
    if ((rc = memd_subdev_record_put(st, &st->subdevs[st->nsubdevs - 1])) < 0) {
        memd_subdev_window_close(st, &st->subdevs[st->nsubdevs - 1]);
        memd_subdev_spec_free(&st->subdevs[--st->nsubdevs].spec);
        snprintf(msg, cap, "daemon out of memory");
        return rc;
    }
    record(st, s, MEMD_HIST_SUBDEV_DEFINE, &st->subdevs[st->nsubdevs - 1]);
    return 0;
}

static bool listed(const memd_subdev *d, const memd_session *s)
{
    for (uint32_t i = 0; i < d->spec.nusers; i++)
        if (d->spec.users[i] == s->uid)
            return true;
    for (uint32_t i = 0; i < d->spec.ngroups; i++) {
        if (d->gids[i] == s->gid)
            return true;
        for (uint32_t k = 0; k < s->ngroups; k++)
            if (d->gids[i] == s->groups[k])
                return true;
    }
    return false;
}

void memd_subdev_bind_creds(memd_state *st, memd_session *s)
{
    s->subdev = 0;
    for (uint32_t i = 0; i < st->nsubdevs; i++)
        if (st->subdevs[i].from_config && listed(&st->subdevs[i], s)) {
            s->subdev = i + 1;
            s->subdev_by_config = true;
            st->subdevs[i].sessions++;
            return;
        }
}

int memd_subdev_bind(memd_state *st, memd_session *s, uint32_t i, memd_error *err)
{
    if (s->subdev == i + 1)
        return 0;
    if (s->subdev)
        return memd_error_set(err, -EPERM, "session %u is bound to sub-device '%s' already%s",
                            s->id, st->subdevs[s->subdev - 1].spec.name,
                            s->subdev_by_config ? " (by the config)" : "");
    if (s->nholds)
        return memd_error_set(err, -EBUSY, "session %u holds %u allocations: bind before "
                            "allocating", s->id, s->nholds);
    s->subdev = i + 1;
    st->subdevs[i].sessions++;
    /* Stored with the session (a reclaim after a restart keeps it bound). */
    if (memd_subdev_bind_record(st, s) < 0) {
        memd_subdev_unbind(st, s);
        return memd_self_oom(err);
    }
    record(st, s, MEMD_HIST_SUBDEV_BIND, &st->subdevs[i]);
    return 0;
}

void memd_subdev_unbind(memd_state *st, memd_session *s)
{
    if (s->subdev && s->subdev <= st->nsubdevs)
        st->subdevs[s->subdev - 1].sessions--;
    if (s->subdev && !s->subdev_by_config) {
        memd_record gone = {.kind = MEMD_RECORD_SUBDEV_BIND, .id = s->id};
        memd_hooks_record_put(st, &gone);
    }
    s->subdev = 0;
}

static memd_kind kind_of(const memd_alloc_request *w)
{
    return w->scope == MEMD_SCOPE_SRAM ? MEMD_KIND_SRAM : MEMD_KIND_DRAM;
}

int memd_subdev_restrict(const memd_state *st, const memd_session *s, uint32_t dev,
                         const memd_alloc_request *w, const memd_alloc_banks *b,
                         memd_alloc_banks *tmp, memd_error *err)
{
    const memd_subdev *d = &st->subdevs[s->subdev - 1];
    const memd_device_spec *spec = st->devs[dev].spec;
    if (spec->id != d->spec.device || kind_of(w) != d->spec.kind)
        return memd_error_set(err, -EACCES, "session %u is bound to sub-device '%s' (%s banks of "
                            "device %u): it cannot allocate %s memory of device %u", s->id,
                            d->spec.name, memd_kind_name(d->spec.kind), d->spec.device,
                            memd_kind_name(kind_of(w)), spec->id);
    /* tt-metal builds a sub-device's allocator without interleaving: its kernels address
     * interleaved buffers only over the bank counts they support. */
    if (spec->ttmetal && (!b || (b->nset == 0 && !b->per_bank)))
        return memd_error_set(err, -EINVAL, "session %u is bound to sub-device '%s' of "
                            "tt-metal device %u, which holds no interleaved buffers (as "
                            "tt-metal's sub-device allocators): give a bank set inside it, "
                            "or per bank", s->id, d->spec.name, spec->id);
    /* Range lockstep reserves every bank of the group, outside the sub-device too. */
    if (d->window && b && b->per_bank)
        return memd_error_set(err, -EINVAL, "session %u is bound to sub-device '%s', which owns "
                            "a window: its buffers are placed there lockstep over their bank "
                            "set, not per bank", s->id, d->spec.name);
    if (b && b->range_lockstep)
        return memd_error_set(err, -EINVAL, "session %u is bound to sub-device '%s': range "
                            "lockstep would reserve its range in every bank of the group, "
                            "outside the sub-device too; give a bank set without it (uniform "
                            "per-core) or per bank", s->id, d->spec.name);
    if (!b || b->nset == 0) {
        /* Lockstep (or per bank) over the sub-device's banks: `banks` is then theirs. */
        if (w->banks && w->banks != d->spec.nbanks)
            return memd_error_set(err, -EINVAL, "session %u is bound to sub-device '%s' of %u "
                                "banks: banks %u cannot be honoured (give 0 or %u, or a bank "
                                "set of %u banks inside it)", s->id, d->spec.name,
                                d->spec.nbanks, w->banks, d->spec.nbanks, w->banks);
        *tmp = (memd_alloc_banks){d->spec.banks, d->spec.nbanks, b && b->per_bank};
        return 0;
    }
    /* Both sorted: one merge walk. */
    uint32_t j = 0;
    for (uint32_t i = 0; i < b->nset; i++) {
        while (j < d->spec.nbanks && d->spec.banks[j] < b->set[i])
            j++;
        if (j == d->spec.nbanks || d->spec.banks[j] != b->set[i])
            return memd_error_set(err, -EACCES, "bank %u is not in sub-device '%s', to which "
                                "session %u is bound", b->set[i], d->spec.name, s->id);
    }
    *tmp = *b;
    return 0;
}

uint64_t memd_subdev_bytes(const memd_state *st, uint32_t dev, const memd_placement *p)
{
    uint64_t n = memd_mode_lockstep(p->mode) ? st->devs[dev].spec->groups[p->kind].banks : p->nset;
    return p->sizes ? memd_placement_bytes(p) : p->size_per_bank * n;
}

int memd_subdev_check_budget(const memd_state *st, const memd_session *s, uint64_t bytes,
                             memd_error *err)
{
    const memd_subdev *d = &st->subdevs[s->subdev - 1];
    if (d->spec.budget && (d->used > d->spec.budget || bytes > d->spec.budget - d->used))
        return memd_error_set(err, -EDQUOT, "sub-device '%s': budget of %llu bytes exceeded "
                            "(%llu in use, %llu more requested)", d->spec.name,
                            (unsigned long long)d->spec.budget, (unsigned long long)d->used,
                            (unsigned long long)bytes);
    return 0;
}

/* The bytes a charges: a function of its placement, so computed, not kept. */
static uint64_t alloc_bytes(const memd_state *st, const memd_alloc *a)
{
    memd_placement p;
    memd_alloc_placement(a, &p);
    return memd_subdev_bytes(st, a->dev, &p);
}

void memd_subdev_charge(memd_state *st, memd_alloc *a, uint32_t subdev)
{
    /* The sub-device is kept in a's ext, which callers make first (alloc.c). */
    if (!subdev || memd_alloc_subdev(a) || !memd_alloc_ext_get(a))
        return;
    a->ext->subdev = subdev;
    st->subdevs[subdev - 1].used += alloc_bytes(st, a);
    st->subdevs[subdev - 1].allocations++;
}

void memd_subdev_uncharge(memd_state *st, memd_alloc *a)
{
    uint32_t sd = memd_alloc_subdev(a);
    if (!sd || sd > st->nsubdevs)
        return;
    st->subdevs[sd - 1].used -= alloc_bytes(st, a);
    st->subdevs[sd - 1].allocations--;
    a->ext->subdev = 0;
}
