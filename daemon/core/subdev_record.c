/* memd daemon — sub-devices an admin defined, kept in the state store as core's own
 * records (hooks.h memd_record, kind MEMD_RECORD_SUBDEV, id = the sub-device's record id;
 * the store envelopes and checksums them). At the next start the store hands each back
 * (after the allocations and sessions: nothing restored refers to a sub-device) and it is
 * defined again; one the config now contradicts (its name or banks taken, its device
 * gone) is dropped with a warning and its record removed: the config wins.
 *
 * Payload, version 2 (84 bytes + 64 per overlap name + 4 per bank + 8):
 *    0 u8 bank group (memd_kind)   1 u8 overlap names   2 u16 0   4 u32 device id
 *    8 u64 budget   16 u32 banks   20 name[64]
 *   84 overlap names x name[64], then banks x u32 bank id (strictly increasing),
 *      then u64 window (bytes per bank; 0: none)
 * Version 1, of a memd before windows, is the same without the window: read as 0.
 * Users and groups are never stored: only the config binds by credentials.
 *
 * A session bound by SUBDEV_BIND is a record too (kind MEMD_RECORD_SUBDEV_BIND, id = the
 * session id, payload = the sub-device's name[64] and u64 record id, 0 for a configured
 * one: a name the config has given to another sub-device since is not the same one),
 * removed when the session ends. At the
 * next start the orphan is bound again and its allocations charged to the sub-device
 * again; the session that reclaims it takes the binding over (session_reclaimed). A
 * binding whose session or sub-device is gone, or whose session the config binds now,
 * is dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hooks.h"
#include "log.h"
#include "oom.h"
#include "state.h"
#include "subdev.h"
#include "le.h"

#define RECORD_VERSION 1 /* of the bindings */
#define SUBDEV_VERSION 2
#define BASE 84u

uint8_t *memd_subdev_record_encode(const memd_subdev_spec *sd, size_t *len)
{
    *len = BASE + (size_t)sd->noverlap * MEMD_NAME_MAX + 4 * (size_t)sd->nbanks + 8;
    uint8_t *p = calloc(1, *len);
    if (!p)
        return NULL;
    p[0] = (uint8_t)sd->kind;
    p[1] = (uint8_t)sd->noverlap;
    memd_le_put_u32(p + 4, sd->device);
    memd_le_put_u64(p + 8, sd->budget);
    memd_le_put_u32(p + 16, sd->nbanks);
    memcpy(p + 20, sd->name, strnlen(sd->name, MEMD_NAME_MAX - 1));
    uint8_t *q = p + BASE;
    for (uint32_t i = 0; i < sd->noverlap; i++, q += MEMD_NAME_MAX)
        memcpy(q, sd->overlap[i], strnlen(sd->overlap[i], MEMD_NAME_MAX - 1));
    for (uint32_t i = 0; i < sd->nbanks; i++)
        q = memd_le_put_u32(q, sd->banks[i]);
    memd_le_put_u64(q, sd->window);
    return p;
}

/* A stored name: not empty, NUL-terminated within its 64 bytes. */
static int get_name(const uint8_t *p, char *out)
{
    size_t n = strnlen((const char *)p, MEMD_NAME_MAX);
    if (n == 0 || n == MEMD_NAME_MAX)
        return -EINVAL;
    memset(out, 0, MEMD_NAME_MAX);
    memcpy(out, p, n);
    return 0;
}

int memd_subdev_record_decode(const uint8_t *p, size_t len, uint16_t version,
                              memd_subdev_spec *sd)
{
    memset(sd, 0, sizeof *sd);
    if (len < BASE)
        return -EBADMSG;
    uint32_t noverlap = p[1], nbanks = memd_le_u32(p + 16);
    size_t banks_end = BASE + (size_t)noverlap * MEMD_NAME_MAX + 4 * (size_t)nbanks;
    if (noverlap > MEMD_SUBDEV_MAX_LIST || nbanks == 0 || nbanks > MEMD_MAX_BANKS ||
        len != banks_end + (version >= 2 ? 8 : 0))
        return -EBADMSG;
    if (version >= 2)
        sd->window = memd_le_u64(p + banks_end);
    if (p[0] >= MEMD_KIND_COUNT || get_name(p + 20, sd->name) < 0)
        return -EINVAL;
    sd->kind = (memd_kind)p[0];
    sd->device = memd_le_u32(p + 4);
    sd->budget = memd_le_u64(p + 8);
    const uint8_t *q = p + BASE;
    for (uint32_t i = 0; i < noverlap; i++, q += MEMD_NAME_MAX)
        if (get_name(q, sd->overlap[i]) < 0)
            return -EINVAL;
    sd->noverlap = noverlap;
    if (!(sd->banks = malloc(sizeof(*sd->banks) * nbanks)))
        return -ENOMEM;
    sd->nbanks = nbanks;
    for (uint32_t i = 0; i < nbanks; i++, q += 4) {
        sd->banks[i] = memd_le_u32(q);
        if (i && sd->banks[i] <= sd->banks[i - 1]) {
            memd_subdev_spec_free(sd);
            return -EINVAL;
        }
    }
    return 0;
}

int memd_subdev_record_put(memd_state *st, const memd_subdev *d)
{
    size_t len;
    uint8_t *p = memd_subdev_record_encode(&d->spec, &len);
    if (!p)
        return -ENOMEM;
    memd_record r = {.kind = MEMD_RECORD_SUBDEV, .version = SUBDEV_VERSION, .id = d->record,
                     .data = p, .len = len};
    memd_hooks_record_put(st, &r); /* the store copies it */
    free(p);
    return 0;
}

#define BIND_LEN (MEMD_NAME_MAX + 8u)

int memd_subdev_bind_record(memd_state *st, const memd_session *s)
{
    uint8_t p[BIND_LEN] = {0};
    const memd_subdev *d = &st->subdevs[s->subdev - 1];
    memcpy(p, d->spec.name, strnlen(d->spec.name, MEMD_NAME_MAX - 1));
    memd_le_put_u64(p + MEMD_NAME_MAX, d->record);
    memd_record r = {.kind = MEMD_RECORD_SUBDEV_BIND, .version = RECORD_VERSION, .id = s->id,
                     .data = p, .len = sizeof p};
    memd_hooks_record_put(st, &r);
    return 0;
}

static memd_session *session_of(memd_state *st, uint64_t id)
{
    for (memd_session *s = st->sessions; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* A stored binding: the orphan it names is bound again and its holds charged. */
static int restore_binding(memd_state *st, const memd_record *r, memd_error *err)
{
    char name[MEMD_NAME_MAX];
    if (r->version != RECORD_VERSION || r->len != BIND_LEN || get_name(r->data, name) < 0)
        return memd_error_set(err, -EINVAL, "sub-device binding record %llu: damaged",
                              (unsigned long long)r->id);
    uint64_t record = memd_le_u64(r->data + MEMD_NAME_MAX);
    memd_session *s = session_of(st, r->id);
    int i = memd_subdev_find(st, name);
    bool same = i >= 0 && st->subdevs[i].record == record;
    if (!s || !same || s->subdev) {
        memd_log(LOG_WARNING, "session %llu's binding to sub-device '%s' is dropped: %s",
                 (unsigned long long)r->id, name,
                 !s ? "no such session" : !same ? "that sub-device is gone"
                                                : "the config binds it");
        memd_record gone = {.kind = MEMD_RECORD_SUBDEV_BIND, .id = r->id};
        memd_hooks_record_put(st, &gone);
        return 1;
    }
    s->subdev = (uint32_t)i + 1;
    s->subdev_by_config = false;
    st->subdevs[i].sessions++;
    for (memd_hold *h = s->holds; h; h = h->next)
        memd_subdev_charge(st, memd_hold_alloc(h), s->subdev);
    return 1;
}

/* Hook: the session reclaiming orphan o takes o's binding by request over (its id is
 * o's, so the stored record is its own now), unless the config bound it already. */
static void on_session_reclaimed(void *data, memd_session *o, memd_session *s)
{
    (void)data;
    if (!o->subdev || o->subdev_by_config || s->subdev)
        return;
    s->subdev = o->subdev;
    s->subdev_by_config = false;
    o->subdev = 0; /* the count of bound sessions moves with it */
}

/* Hook: one stored record at start. 1 if it was a sub-device's (defined again, or dropped
 * with a warning) or a binding's, 0 if another kind, or -EINVAL for one that does not
 * decode. */
static int on_record_restore(void *data, const memd_record *r, memd_error *err)
{
    memd_state *st = data;
    if (r->kind == MEMD_RECORD_SUBDEV_BIND)
        return restore_binding(st, r, err);
    if (r->kind != MEMD_RECORD_SUBDEV)
        return 0;
    memd_subdev_spec sd;
    int rc = r->version == 1 || r->version == SUBDEV_VERSION
                 ? memd_subdev_record_decode(r->data, r->len, r->version, &sd)
                 : -EPROTONOSUPPORT;
    if (rc == -ENOMEM)
        return memd_self_oom(err);
    if (rc < 0)
        return memd_error_set(err, -EINVAL, "sub-device record %llu: %s",
                              (unsigned long long)r->id,
                              rc == -EPROTONOSUPPORT ? "written by another memd version"
                                                     : "damaged");
    char msg[192];
    if (memd_subdev_add(st, &sd, r->id, true, msg, sizeof msg) < 0) {
        memd_log(LOG_WARNING, "sub-device '%s' defined before the restart is dropped: %s",
                 sd.name, msg);
        memd_record gone = {.kind = MEMD_RECORD_SUBDEV, .id = r->id};
        memd_hooks_record_put(st, &gone);
        if (r->id > st->subdev_record_hwm) /* its id is not given out again either */
            st->subdev_record_hwm = r->id;
    }
    memd_subdev_spec_free(&sd); /* taken over when added: nothing left then */
    return 1;
}

static const memd_state_events record_events = {.record_restore = on_record_restore,
                                                 .session_reclaimed = on_session_reclaimed};

void memd_subdev_records_listen(memd_state *st)
{
    memd_hook_add(st, &st->subdev_hook, &record_events, st);
}
