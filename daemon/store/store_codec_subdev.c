/* memd daemon — state store: the sub-device record (see store_codec.h).
 *
 * Sub-device record, format 2 (88 bytes + 64 per overlap name + 4 per bank):
 *    0 u8 format   1 u8 bank group (memd_kind)   2 u16 overlap names
 *    4 u32 device id   8 u64 budget   16 u32 banks   20 u32 checksum   24 name[64]
 *   88 overlap names x name[64], then banks x u32 bank id (strictly increasing)
 * Names are stored whole (NUL-padded): the table's key is the name too, and LMDB keys of
 * one table have one size. Users and groups are never stored: only the config binds by
 * credentials. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_codec.h"
#include "wire.h"

#define SUBDEV_SUM_AT 20u

size_t memd_store_subdev_rec_size(const memd_subdev_spec *sd)
{
    return MEMD_STORE_SUBDEV_BASE + (size_t)sd->noverlap * MEMD_NAME_MAX + 4 * (size_t)sd->nbanks;
}

void memd_store_subdev_rec_put(uint8_t *p, const memd_subdev_spec *sd)
{
    size_t len = memd_store_subdev_rec_size(sd);
    memset(p, 0, MEMD_STORE_SUBDEV_BASE);
    p[0] = MEMD_STORE_FORMAT;
    p[1] = (uint8_t)sd->kind;
    p[2] = (uint8_t)sd->noverlap;
    p[3] = (uint8_t)(sd->noverlap >> 8);
    memd_wire_put_u32(p + 4, sd->device);
    memd_wire_put_u64(p + 8, sd->budget);
    memd_wire_put_u32(p + 16, sd->nbanks);
    memcpy(p + 24, sd->name, strnlen(sd->name, MEMD_NAME_MAX - 1));
    uint8_t *q = p + MEMD_STORE_SUBDEV_BASE;
    for (uint32_t i = 0; i < sd->noverlap; i++, q += MEMD_NAME_MAX) {
        memset(q, 0, MEMD_NAME_MAX);
        memcpy(q, sd->overlap[i], strnlen(sd->overlap[i], MEMD_NAME_MAX - 1));
    }
    for (uint32_t i = 0; i < sd->nbanks; i++)
        q = memd_wire_put_u32(q, sd->banks[i]);
    memd_wire_put_u32(p + SUBDEV_SUM_AT, memd_store_sum(p, len, SUBDEV_SUM_AT));
}

/* A stored name: NUL-terminated within its 64 bytes, not empty, zeros after. */
static int get_name(const uint8_t *p, char *out)
{
    size_t n = strnlen((const char *)p, MEMD_NAME_MAX);
    if (n == 0 || n == MEMD_NAME_MAX)
        return -EINVAL;
    for (size_t i = n; i < MEMD_NAME_MAX; i++)
        if (p[i])
            return -EINVAL;
    memcpy(out, p, MEMD_NAME_MAX);
    return 0;
}

int memd_store_subdev_rec_get(const uint8_t *p, size_t len, memd_subdev_spec *sd)
{
    memset(sd, 0, sizeof *sd);
    if (len < MEMD_STORE_SUBDEV_BASE)
        return -EBADMSG;
    if (p[0] != MEMD_STORE_FORMAT)
        return -EPROTONOSUPPORT;
    uint32_t noverlap = p[2] | (uint32_t)p[3] << 8, nbanks = memd_wire_u32(p + 16);
    if (noverlap > MEMD_SUBDEV_MAX_LIST || nbanks == 0 || nbanks > MEMD_MAX_BANKS ||
        len != MEMD_STORE_SUBDEV_BASE + (size_t)noverlap * MEMD_NAME_MAX + 4 * (size_t)nbanks)
        return -EBADMSG;
    if (memd_wire_u32(p + SUBDEV_SUM_AT) != memd_store_sum(p, len, SUBDEV_SUM_AT))
        return -EBADMSG;
    if (p[1] >= MEMD_KIND_COUNT || get_name(p + 24, sd->name) < 0)
        return -EINVAL;
    sd->kind = (memd_kind)p[1];
    sd->device = memd_wire_u32(p + 4);
    sd->budget = memd_wire_u64(p + 8);
    const uint8_t *q = p + MEMD_STORE_SUBDEV_BASE;
    for (uint32_t i = 0; i < noverlap; i++, q += MEMD_NAME_MAX)
        if (get_name(q, sd->overlap[i]) < 0)
            return -EINVAL;
    sd->noverlap = noverlap;
    if (!(sd->banks = malloc(sizeof(*sd->banks) * nbanks)))
        return -ENOMEM;
    sd->nbanks = nbanks;
    for (uint32_t i = 0; i < nbanks; i++, q += 4) {
        sd->banks[i] = memd_wire_u32(q);
        if (i && sd->banks[i] <= sd->banks[i - 1]) {
            memd_subdev_spec_free(sd);
            return -EINVAL;
        }
    }
    return 0;
}
