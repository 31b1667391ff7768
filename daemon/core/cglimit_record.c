/* memd daemon — cgroup limits set by request, kept in the state store as core's records
 * (hooks.h memd_record, kind MEMD_RECORD_CGROUP_LIMIT, id = the limit's key). At the next
 * start each is set again; one whose device or bank group is gone is dropped with a
 * warning and its record removed. Usage and peak are not stored: the restored sessions
 * have no cgroup (they are counted again when their process reclaims them).
 *
 * Payload, version 1 (16 bytes + the path, no NUL):
 *    0 u32 device id   4 u8 bank group (memd_kind)   5 u8[3] 0   8 u64 max   16 cgroup */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cglimit.h"
#include "hooks.h"
#include "le.h"
#include "log.h"

#define RECORD_VERSION 1
#define BASE 16u

void memd_cglimit_record_put(memd_state *st, const memd_cglimit *l, bool gone)
{
    uint8_t p[BASE + MEMD_SESSION_CGROUP_MAX] = {0};
    size_t n = strlen(l->cgroup);
    memd_le_put_u32(p, st->devs[l->dev].spec->id);
    p[4] = l->kind;
    memd_le_put_u64(p + 8, l->max);
    memcpy(p + BASE, l->cgroup, n);
    memd_record r = {.kind = MEMD_RECORD_CGROUP_LIMIT, .version = RECORD_VERSION, .id = l->key,
                     .data = gone ? NULL : p, .len = gone ? 0 : BASE + n};
    memd_hooks_record_put(st, &r); /* the store copies it */
}

static int on_record_restore(void *data, const memd_record *r, memd_error *err)
{
    memd_state *st = data;
    if (r->kind != MEMD_RECORD_CGROUP_LIMIT)
        return 0;
    char cgroup[MEMD_SESSION_CGROUP_MAX];
    if (r->version != RECORD_VERSION || r->len <= BASE ||
        r->len - BASE >= sizeof cgroup || r->data[4] >= MEMD_KIND_COUNT)
        return memd_error_set(err, -EINVAL, "cgroup limit record %llu: %s",
                              (unsigned long long)r->id,
                              r->version != RECORD_VERSION ? "written by another memd version"
                                                           : "damaged");
    memcpy(cgroup, r->data + BASE, r->len - BASE);
    cgroup[r->len - BASE] = '\0';
    uint32_t id = memd_le_u32(r->data);
    int dev = memd_state_dev_index(st, id);
    memd_error e;
    memd_error_reset(&e);
    int rc = dev < 0 ? memd_error_set(&e, dev, "no device %u", id)
                     : memd_cglimit_set(st, cgroup, (uint32_t)dev, r->data[4],
                                        memd_le_u64(r->data + 8), MEMD_CGLIMIT_RESTORED,
                                        &e);
    if (rc == -ENOMEM)
        return memd_error_set(err, -ENOMEM, "out of memory");
    if (rc < 0) {
        memd_log(LOG_WARNING, "cgroup limit of %s set before the restart is dropped: %s", cgroup,
                 e.msg);
        memd_record gone = {.kind = MEMD_RECORD_CGROUP_LIMIT, .id = r->id};
        memd_hooks_record_put(st, &gone);
    }
    return 1;
}

/* The reclaiming session has the orphan's holds now, and a cgroup the orphan had not. */
static void on_session_reclaimed(void *data, memd_session *o, memd_session *s)
{
    (void)o;
    (void)s;
    memd_cglimit_recount(data);
}

static const memd_state_events record_events = {.record_restore = on_record_restore,
                                                 .session_reclaimed = on_session_reclaimed};

void memd_cglimit_records_listen(memd_state *st)
{
    memd_hook_add(st, &st->cglimits->hook, &record_events, st);
}
