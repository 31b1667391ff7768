/* memd daemon — a sub-device's window (subdev.h memd_subdev_window_open): the engine's
 * memd_device_window_open over the bottom of its group's first allocatable region.
 *
 * At a restart the buffers come back before the sub-devices a request defined
 * (subdev_record.c), so they sit in the global maps where the window goes: opening with
 * `adopt` takes them out of there and puts them in the window. */
#include <stdio.h>
#include <stdlib.h>

#include "subdev.h"

/* The window's region: the group's first allocatable one; -ENOENT when it has none. */
static int window_region(const memd_device *dev, memd_kind k, memd_region_cut *cut)
{
    for (uint8_t r = 0; r < MEMD_MAX_REGIONS; r++)
        if (memd_device_region_cut(dev, k, r, cut) == 0)
            return r;
    return -ENOENT;
}

static bool in_banks(const memd_subdev_spec *sd, const memd_placement *p)
{
    for (uint32_t i = 0, j = 0; i < p->nset; i++) {
        while (j < sd->nbanks && sd->banks[j] < p->set[i])
            j++;
        if (j == sd->nbanks || sd->banks[j] != p->set[i])
            return false;
    }
    return p->nset > 0;
}

typedef struct adoption {
    const memd_subdev_spec *sd;
    uint16_t dev;
    uint8_t region;
    uint64_t end;      /* of the window */
    memd_alloc **found;
    size_t n, cap;
} adoption;

/* The buffers restored on the sub-device's banks where its window goes. */
static int collect(void *ctx, memd_alloc *a)
{
    adoption *ad = ctx;
    memd_placement p;
    memd_alloc_placement(a, &p); /* its arrays are a's: not freed here */
    if (a->dev != ad->dev || p.kind != ad->sd->kind || p.region != ad->region ||
        p.mode != MEMD_BANKS_RANGE || p.address >= ad->end || !in_banks(ad->sd, &p))
        return 0;
    if (ad->n == ad->cap) {
        size_t cap = ad->cap ? 2 * ad->cap : 16;
        memd_alloc **f = realloc(ad->found, cap * sizeof *f);
        if (!f)
            return -ENOMEM;
        ad->found = f;
        ad->cap = cap;
    }
    ad->found[ad->n++] = a;
    return 0;
}

/* Each found buffer to the global maps (back) or into window id. */
static void move(memd_device *d, const adoption *ad, uint32_t id)
{
    for (size_t i = 0; i < ad->n; i++) {
        memd_placement p;
        memd_alloc_placement(ad->found[i], &p);
        if (id)
            (void)memd_device_window_adopt(d, id, &p); /* it was there: free there */
        else
            (void)memd_device_alloc_at(d, &p);
    }
}

int memd_subdev_window_open(memd_state *st, memd_subdev *d, bool adopt, char *msg, size_t cap)
{
    if (!d->spec.window)
        return 0;
    int dev = memd_state_dev_index(st, d->spec.device);
    memd_region_cut cut;
    int r = dev < 0 ? dev : window_region(st->devs[dev].dev, d->spec.kind, &cut);
    if (r < 0) {
        snprintf(msg, cap, "sub-device '%s': device %u has no allocatable %s region for its "
                 "window", d->spec.name, d->spec.device, memd_kind_name(d->spec.kind));
        return -EINVAL;
    }
    memd_device *md = st->devs[dev].dev;
    adoption ad = {.sd = &d->spec, .dev = (uint16_t)dev, .region = (uint8_t)r,
                   .end = cut.start - cut.bottom + d->spec.window};
    if (adopt && memd_handles_each(&st->handles, collect, &ad) < 0) {
        free(ad.found);
        snprintf(msg, cap, "daemon out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < ad.n; i++) {
        memd_placement p;
        memd_alloc_placement(ad.found[i], &p);
        (void)memd_device_release(md, &p);
    }
    memd_error err = {0};
    int rc = memd_device_window_open(md, d->spec.kind, (uint8_t)r, d->spec.window,
                                     d->spec.banks, d->spec.nbanks, &d->window, &err);
    move(md, &ad, rc == 0 ? d->window : 0);
    free(ad.found);
    if (rc < 0)
        snprintf(msg, cap, "sub-device '%s': %s", d->spec.name,
                 rc == -ENOBUFS ? "daemon out of memory" : err.msg);
    return rc == -ENOBUFS ? -ENOMEM : rc;
}

void memd_subdev_window_close(memd_state *st, memd_subdev *d)
{
    int dev = memd_state_dev_index(st, d->spec.device);
    if (d->window && dev >= 0)
        (void)memd_device_window_close(st->devs[dev].dev, d->window);
    d->window = 0;
}

int memd_subdev_windows_open(memd_state *st, memd_error *err)
{
    char msg[256];
    for (uint32_t i = 0; i < st->nsubdevs; i++) {
        int rc = memd_subdev_window_open(st, &st->subdevs[i], false, msg, sizeof msg);
        if (rc < 0)
            return memd_error_set(err, rc, "%s", msg);
    }
    return 0;
}

int memd_subdev_window_full(const memd_state *st, const memd_session *s, uint64_t bytes,
                            memd_error *err)
{
    const memd_subdev *d = &st->subdevs[s->subdev - 1];
    memd_window_info wi = {0};
    int dev = memd_state_dev_index(st, d->spec.device);
    if (dev >= 0)
        (void)memd_device_window_info(st->devs[dev].dev, d->window, &wi);
    return memd_error_set(err, -ENOMEM, "sub-device '%s': its window [0x%llx, 0x%llx) has no "
                          "room for %llu bytes per bank (%llu allocated there in %llu buffers)",
                          d->spec.name, (unsigned long long)wi.start,
                          (unsigned long long)(wi.start + wi.bytes), (unsigned long long)bytes,
                          (unsigned long long)wi.allocated, (unsigned long long)wi.allocations);
}
