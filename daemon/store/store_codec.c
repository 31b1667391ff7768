/* memd daemon — state store records (see store_codec.h).
 *
 * Every record carries a checksum (memd_store_sum of its bytes with the checksum field as
 * 0): a flipped bit or a zeroed page inside a record is reported as damage, never read
 * as another valid value (a meta record's boot id, above all: a damaged one must not
 * pass for "written before the last boot", which would discard the map).
 *
 * Allocation record, format 2 (96 bytes + comm + name + 16 per holder):
 *    0 u8 format   1 u8 kind   2 u8 region   3 u8 class   4 u8 scope
 *    5 u8 flags (bits 2-3: memd_bank_mode)
 *    6 u8 comm length (< 16)   7 u8 name length (< 64)
 *    8 u32 device id   12 u32 banks   16 u64 handle   24 u64 address   32 u64 size per bank
 *   40 u64 page size   48 u64 pitch   56 u64 requested   64 u64 created ns
 *   72 u32 pid   76 u32 uid   80 u32 gid   84 u32 creator session   88 u32 holders
 *   92 u32 checksum
 *   96 comm, name (no NULs), then, for a bank-set placement (mode != 0), u32 nset,
 *      nset x u32 bank id and (per bank) nset x u64 address and (flags bit 4, sizes per
 *      piece) nset x u64 size, then holders x (u32 session, u32 count, u64 request id):
 *   the holds of one session made by one client request (0: not known), see
 *   MEMD_REQ_F_RETRY in protocol.h
 * Strings are stored at their length: most names are empty, and a smaller record is a
 * cheaper write on every allocation.
 * Session record, format 2 (104 bytes):
 *    0 u8 format  1..3 0   4 u32 id   8 u32 pid   12 u32 uid   16 u32 gid   20 u32 checksum
 *   24 u64 start time   32 u64 connected ns   40 token[16]   56 comm[16]   72 client[32]
 * Meta, format 2 (64 bytes + 16 per device + 4):
 *    0 u32 magic   4 u32 format   8 u64 handle hwm   16 u32 session hwm   20 u32 devices
 *   24 boot id[40]   64 devices x (u32 id, u32 0, u64 fingerprint), then u32 checksum */
#include "store_codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "wire.h"

/* ---- checksums ---- */

/* One 64-bit word at a time: h = (h ^ w) * odd, rotated. Each step is a bijection of h
 * for a given word, so records that differ in one word (any number of bits in it) always
 * end with different h; more scattered damage is caught but for a 2^-32 chance. */
static uint64_t sum_step(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h << 29 | h >> 35;
}

static uint64_t sum_bytes(uint64_t h, const uint8_t *p, size_t n)
{
    for (; n >= 8; p += 8, n -= 8)
        h = sum_step(h, memd_wire_u64(p));
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return sum_step(h, w ^ ((uint64_t)n << 56));
}

uint32_t memd_store_sum(const uint8_t *p, size_t len, size_t skip)
{
    /* The 4 bytes at skip (the checksum's own place) count as zero. */
    uint64_t h = sum_step(0x6a09e667f3bcc908ull, len);
    h = sum_bytes(h, p, skip);
    h = sum_step(h, 0);
    h = sum_bytes(h, p + skip + 4, len - skip - 4);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return (uint32_t)(h ^ h >> 32);
}

/* ---- allocations ---- */

/* Bank subsets: after the strings, u32 nset, nset x u32 bank id and, per bank, nset x
 * u64 address; nothing for lockstep (mode 0, as every record before them). */
size_t memd_store_bankset_size(memd_bank_mode mode, uint64_t nset, bool sized)
{
    if (mode == MEMD_BANKS_ALL)
        return 0;
    return 4 + 4 * nset + (mode == MEMD_BANKS_PER_BANK ? 8 * nset : 0) + (sized ? 8 * nset : 0);
}

size_t memd_store_alloc_rec_size(const memd_store_alloc_rec *r)
{
    return MEMD_STORE_ALLOC_REC_BASE + memd_store_str_len(r->comm, sizeof r->comm) +
           memd_store_str_len(r->name, sizeof r->name) +
           memd_store_bankset_size(r->pl.mode, r->pl.nset, r->pl.sizes != NULL) +
           (size_t)r->nholders * MEMD_STORE_HOLDER_SIZE;
}

size_t memd_store_str_len(const char *s, size_t size)
{
    return s[0] ? strnlen(s, size - 1) : 0; /* most names are empty */
}

uint8_t *memd_store_alloc_rec_put(uint8_t *p, const memd_store_alloc_rec *r)
{
    return memd_store_alloc_rec_put_len(p, r, memd_store_str_len(r->comm, sizeof r->comm),
                                        memd_store_str_len(r->name, sizeof r->name));
}

/* The integer fields of an allocation record's fixed part; kind, flags and the mode
 * (bytes 1, 5) and the string lengths (6, 7) are by hand. */
static const memd_le_field alloc_fields[] = {
    MEMD_LE_FIELD(2, memd_store_alloc_rec, pl.region),
    MEMD_LE_FIELD(3, memd_store_alloc_rec, cls),
    MEMD_LE_FIELD(4, memd_store_alloc_rec, scope),
    MEMD_LE_FIELD(8, memd_store_alloc_rec, device),
    MEMD_LE_FIELD(12, memd_store_alloc_rec, pl.banks),
    MEMD_LE_FIELD(16, memd_store_alloc_rec, handle),
    MEMD_LE_FIELD(24, memd_store_alloc_rec, pl.address),
    MEMD_LE_FIELD(32, memd_store_alloc_rec, pl.size_per_bank),
    MEMD_LE_FIELD(40, memd_store_alloc_rec, pl.page_size),
    MEMD_LE_FIELD(48, memd_store_alloc_rec, pl.pitch),
    MEMD_LE_FIELD(56, memd_store_alloc_rec, requested),
    MEMD_LE_FIELD(64, memd_store_alloc_rec, created_ns),
    MEMD_LE_FIELD(72, memd_store_alloc_rec, pid),
    MEMD_LE_FIELD(76, memd_store_alloc_rec, uid),
    MEMD_LE_FIELD(80, memd_store_alloc_rec, gid),
    MEMD_LE_FIELD(84, memd_store_alloc_rec, session_id),
    MEMD_LE_FIELD(88, memd_store_alloc_rec, nholders),
};
#define NFIELDS(t) (sizeof(t) / sizeof((t)[0]))

uint8_t *memd_store_alloc_rec_put_len(uint8_t *p, const memd_store_alloc_rec *r, size_t cl,
                                      size_t nl)
{
    p[0] = MEMD_STORE_FORMAT;
    p[1] = (uint8_t)r->pl.kind;
    p[5] = (uint8_t)(r->flags | (unsigned)r->pl.mode << MEMD_STORE_REC_MODE_SHIFT |
                     (r->pl.sizes ? MEMD_STORE_REC_SIZES : 0));
    p[6] = (uint8_t)cl;
    p[7] = (uint8_t)nl;
    memd_le_fields_put(p, r, alloc_fields, NFIELDS(alloc_fields));
    memd_wire_put_u32(p + 92, 0); /* memd_store_alloc_rec_seal, once the holders are in */
    p += MEMD_STORE_ALLOC_REC_BASE;
    memcpy(p, r->comm, cl);
    memcpy(p + cl, r->name, nl);
    p += cl + nl;
    if (r->pl.mode == MEMD_BANKS_ALL)
        return p;
    p = memd_wire_put_u32(p, r->pl.nset);
    for (uint32_t i = 0; i < r->pl.nset; i++)
        p = memd_wire_put_u32(p, r->pl.set[i]);
    for (uint32_t i = 0; r->pl.addrs && i < r->pl.nset; i++)
        p = memd_wire_put_u64(p, r->pl.addrs[i]);
    for (uint32_t i = 0; r->pl.sizes && i < r->pl.nset; i++)
        p = memd_wire_put_u64(p, r->pl.sizes[i]);
    return p;
}

uint8_t *memd_store_holder_put(uint8_t *p, uint32_t session_id, uint32_t count, uint64_t req)
{
    p = memd_wire_put_u32(p, session_id);
    p = memd_wire_put_u32(p, count);
    return memd_wire_put_u64(p, req);
}

void memd_store_alloc_rec_seal(uint8_t *p, size_t len)
{
    memd_wire_put_u32(p + MEMD_STORE_ALLOC_SUM_AT, memd_store_sum(p, len, MEMD_STORE_ALLOC_SUM_AT));
}

int memd_store_alloc_rec_len(const uint8_t *p, size_t len, size_t *out)
{
    if (len < MEMD_STORE_ALLOC_REC_BASE)
        return -EBADMSG;
    uint64_t n = MEMD_STORE_ALLOC_REC_BASE + (uint64_t)p[6] + p[7] +
                 (uint64_t)memd_wire_u32(p + 88) * MEMD_STORE_HOLDER_SIZE;
    uint32_t mode = (p[5] & MEMD_STORE_REC_MODE_MASK) >> MEMD_STORE_REC_MODE_SHIFT;
    if (mode >= MEMD_BANKS_MODE_COUNT)
        return -EBADMSG;
    if (mode != MEMD_BANKS_ALL) {
        uint64_t at = MEMD_STORE_ALLOC_REC_BASE + (uint64_t)p[6] + p[7];
        if (at + 4 > len)
            return -EBADMSG;
        n += memd_store_bankset_size((memd_bank_mode)mode, memd_wire_u32(p + at),
                                     (p[5] & MEMD_STORE_REC_SIZES) != 0);
    }
    if (n > len)
        return -EBADMSG;
    *out = (size_t)n;
    return 0;
}

/* A string stored at its length: no NUL inside it. */
static int get_lstr(const uint8_t *p, size_t len, char *s, size_t n)
{
    if (len >= n || memchr(p, 0, len))
        return -EINVAL;
    memcpy(s, p, len);
    memset(s + len, 0, n - len);
    return 0;
}

/* A record of this format whose checksum (kept at sum_at) holds: 0, -EPROTONOSUPPORT or
 * -EBADMSG. The caller checked len covers sum_at. */
static int check_sealed(const uint8_t *p, size_t len, size_t sum_at)
{
    if (p[0] != MEMD_STORE_FORMAT)
        return -EPROTONOSUPPORT;
    if (memd_wire_u32(p + sum_at) != memd_store_sum(p, len, sum_at))
        return -EBADMSG;
    return 0;
}

int memd_store_alloc_rec_get(const uint8_t *p, size_t len, memd_store_alloc_rec *r)
{
    if (len < MEMD_STORE_ALLOC_REC_BASE)
        return -EBADMSG;
    int rc = check_sealed(p, len, MEMD_STORE_ALLOC_SUM_AT);
    if (rc < 0)
        return rc;
    memset(r, 0, sizeof *r);
    r->pl.kind = (memd_kind)p[1];
    r->flags = p[5] & (uint8_t)~(MEMD_STORE_REC_MODE_MASK | MEMD_STORE_REC_SIZES);
    r->sized = (p[5] & MEMD_STORE_REC_SIZES) != 0;
    size_t cl = p[6], nl = p[7];
    memd_le_fields_get(p, r, alloc_fields, NFIELDS(alloc_fields));
    uint32_t mode = (p[5] & MEMD_STORE_REC_MODE_MASK) >> MEMD_STORE_REC_MODE_SHIFT;
    if (mode >= MEMD_BANKS_MODE_COUNT)
        return -EINVAL;
    r->pl.mode = (memd_bank_mode)mode;
    size_t strings = cl + nl, rest = len - MEMD_STORE_ALLOC_REC_BASE;
    if (mode != MEMD_BANKS_ALL) {
        /* The bank set sits between the strings and the holders. */
        if (strings + 4 > rest)
            return -EBADMSG;
        r->pl.nset = memd_wire_u32(p + MEMD_STORE_ALLOC_REC_BASE + strings);
        size_t bs = memd_store_bankset_size(r->pl.mode, r->pl.nset, r->sized);
        if ((r->sized && mode != MEMD_BANKS_PER_BANK) || r->pl.nset == 0 || r->pl.nset > MEMD_MAX_BANKS || strings + bs > rest)
            return -EBADMSG;
        r->banks = p + MEMD_STORE_ALLOC_REC_BASE + strings + 4;
        strings += bs;
    }
    if (r->nholders == 0 || strings > rest ||
        (rest - strings) / MEMD_STORE_HOLDER_SIZE != r->nholders ||
        (rest - strings) % MEMD_STORE_HOLDER_SIZE != 0)
        return -EBADMSG;
    if (p[1] >= MEMD_KIND_COUNT || p[2] >= MEMD_MAX_REGIONS || p[3] >= MEMD_CLASS_COUNT ||
        p[4] >= MEMD_SCOPE_COUNT || (r->flags & ~(MEMD_STORE_REC_SHARED | MEMD_STORE_REC_POOL)) ||
        r->handle == 0 ||
        r->pl.banks == 0 || r->pl.size_per_bank == 0)
        return -EINVAL;
    const uint8_t *q = p + MEMD_STORE_ALLOC_REC_BASE;
    if (get_lstr(q, cl, r->comm, sizeof r->comm) < 0 ||
        get_lstr(q + cl, nl, r->name, sizeof r->name) < 0)
        return -EINVAL;
    if (r->pl.mode != MEMD_BANKS_ALL && r->pl.nset != r->pl.banks)
        return -EINVAL;
    if ((r->flags & MEMD_STORE_REC_SHARED) && r->name[0] == '\0')
        return -EINVAL;
    r->holders = q + strings;
    for (uint32_t i = 0; i < r->nholders; i++) {
        uint32_t sid, count;
        uint64_t req;
        memd_store_holder_at(r, i, &sid, &count, &req);
        if (sid == 0 || count == 0)
            return -EINVAL;
    }
    return 0;
}

void memd_store_holder_at(const memd_store_alloc_rec *r, uint32_t i, uint32_t *session_id,
                          uint32_t *count, uint64_t *req)
{
    const uint8_t *p = r->holders + (size_t)i * MEMD_STORE_HOLDER_SIZE;
    *session_id = memd_wire_u32(p);
    *count = memd_wire_u32(p + 4);
    *req = memd_wire_u64(p + 8);
}

/* ---- sessions ---- */

#define SESS_SUM_AT 20u

static const memd_le_field sess_fields[] = {
    MEMD_LE_FIELD(4, memd_store_sess_rec, id),
    MEMD_LE_FIELD(8, memd_store_sess_rec, pid),
    MEMD_LE_FIELD(12, memd_store_sess_rec, uid),
    MEMD_LE_FIELD(16, memd_store_sess_rec, gid),
    MEMD_LE_FIELD(24, memd_store_sess_rec, starttime),
    MEMD_LE_FIELD(32, memd_store_sess_rec, connected_ns),
};

uint8_t *memd_store_sess_rec_put(uint8_t *p, const memd_store_sess_rec *r)
{
    p[0] = MEMD_STORE_FORMAT;
    p[1] = p[2] = p[3] = 0;
    memd_le_fields_put(p, r, sess_fields, NFIELDS(sess_fields));
    memd_wire_put_u32(p + 20, 0);
    memcpy(p + 40, r->token, MEMD_TOKEN_SIZE);
    memd_wire_strset((char *)p + 56, sizeof r->comm, r->comm);
    memd_wire_strset((char *)p + 72, sizeof r->client_name, r->client_name);
    memd_wire_put_u32(p + SESS_SUM_AT, memd_store_sum(p, MEMD_STORE_SESS_REC_SIZE, SESS_SUM_AT));
    return p + MEMD_STORE_SESS_REC_SIZE;
}

int memd_store_sess_rec_get(const uint8_t *p, size_t len, memd_store_sess_rec *r)
{
    if (len != MEMD_STORE_SESS_REC_SIZE)
        return -EBADMSG;
    int rc = check_sealed(p, len, SESS_SUM_AT);
    if (rc < 0)
        return rc;
    memset(r, 0, sizeof *r);
    memd_le_fields_get(p, r, sess_fields, NFIELDS(sess_fields));
    memcpy(r->token, p + 40, MEMD_TOKEN_SIZE);
    if (r->id == 0)
        return -EINVAL;
    if (memd_wire_get_str(p + 56, r->comm, sizeof r->comm) < 0 ||
        memd_wire_get_str(p + 72, r->client_name, sizeof r->client_name) < 0)
        return -EINVAL;
    return 0;
}

/* ---- meta ---- */

uint8_t *memd_store_meta_put(uint8_t *p, const memd_store_meta *m, const memd_store_dev_fp *devs)
{
    uint8_t *start = p;
    memd_wire_put_u32(p, MEMD_STORE_META_MAGIC);
    memd_wire_put_u32(p + 4, MEMD_STORE_FORMAT);
    memd_wire_put_u64(p + 8, m->handle_hwm);
    memd_wire_put_u32(p + 16, m->session_hwm);
    memd_wire_put_u32(p + 20, m->ndevs);
    memd_wire_strset((char *)p + 24, sizeof m->boot_id, m->boot_id);
    p += MEMD_STORE_META_BASE;
    for (uint32_t i = 0; i < m->ndevs; i++) {
        p = memd_wire_put_u32(p, devs[i].id);
        p = memd_wire_put_u32(p, 0);
        p = memd_wire_put_u64(p, devs[i].fingerprint);
    }
    size_t n = (size_t)(p - start) + 4;
    return memd_wire_put_u32(p, memd_store_sum(start, n, n - 4));
}

int memd_store_meta_get(const uint8_t *p, size_t len, memd_store_meta *m)
{
    if (len < MEMD_STORE_META_BASE || memd_wire_u32(p) != MEMD_STORE_META_MAGIC)
        return -EBADMSG;
    memset(m, 0, sizeof *m);
    m->format = memd_wire_u32(p + 4);
    if (m->format != MEMD_STORE_FORMAT)
        return -EPROTONOSUPPORT;
    m->handle_hwm = memd_wire_u64(p + 8);
    m->session_hwm = memd_wire_u32(p + 16);
    m->ndevs = memd_wire_u32(p + 20);
    if (len < MEMD_STORE_META_BASE + 4 ||
        m->ndevs > (len - MEMD_STORE_META_BASE - 4) / MEMD_STORE_DEV_FP_SIZE ||
        len != memd_store_meta_size(m->ndevs) ||
        memd_wire_u32(p + len - 4) != memd_store_sum(p, len, len - 4))
        return -EBADMSG;
    if (memd_wire_get_str(p + 24, m->boot_id, sizeof m->boot_id) < 0)
        return -EINVAL;
    m->devs = p + MEMD_STORE_META_BASE;
    return 0;
}

size_t memd_store_meta_size(uint32_t ndevs)
{
    return MEMD_STORE_META_BASE + (size_t)ndevs * MEMD_STORE_DEV_FP_SIZE + 4;
}

memd_store_dev_fp memd_store_meta_dev(const memd_store_meta *m, uint32_t i)
{
    const uint8_t *p = m->devs + (size_t)i * MEMD_STORE_DEV_FP_SIZE;
    return (memd_store_dev_fp){.id = memd_wire_u32(p), .fingerprint = memd_wire_u64(p + 8)};
}

/* ---- keys ---- */

void memd_store_key_u64(uint8_t out[8], uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

void memd_store_key_u32(uint8_t out[4], uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

uint64_t memd_store_key_get_u64(const uint8_t in[8])
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | in[i];
    return v;
}

uint32_t memd_store_key_get_u32(const uint8_t in[4])
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | in[i];
    return v;
}

/* ---- device fingerprint ---- */

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    uint8_t b[8];
    memd_wire_put_u64(b, v);
    return fnv(h, b, sizeof b);
}

uint64_t memd_store_device_fingerprint(const memd_device_spec *spec)
{
    uint64_t h = fnv_u64(1469598103934665603ull, spec->id);
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        const memd_bank_group_spec *g = &spec->groups[k];
        h = fnv_u64(h, g->banks);
        h = fnv_u64(h, g->bank_size);
        h = fnv_u64(h, g->alignment);
        h = fnv_u64(h, g->nregions);
        for (uint32_t r = 0; r < g->nregions && r < MEMD_MAX_REGIONS; r++) {
            h = fnv(h, g->regions[r].name, strnlen(g->regions[r].name, MEMD_NAME_MAX) + 1);
            h = fnv_u64(h, g->regions[r].base);
            h = fnv_u64(h, g->regions[r].size);
            h = fnv_u64(h, g->regions[r].allocatable);
        }
        /* Which bank id is which core, and where each bank sits: stored bank sets name
         * banks by id, so a changed remap (tt_metal.l1_bank_remap) or bank offset must
         * not let them land on other cores. Only where the device has them, so that
         * devices without cores or offsets keep their fingerprints. */
        for (uint32_t b = 0; g->cores && b < g->banks; b++)
            h = fnv_u64(h, (uint64_t)g->cores[b].logical_x << 48 |
                               (uint64_t)g->cores[b].logical_y << 32 |
                               (uint64_t)g->cores[b].noc_x << 16 | g->cores[b].noc_y);
        for (uint32_t b = 0; g->bank_offsets && b < g->banks; b++)
            h = fnv_u64(h, (uint64_t)g->bank_offsets[b]);
    }
    h = fnv_u64(h, spec->texture.enabled);
    return fnv_u64(h, spec->texture.pitch_alignment);
}

int memd_store_rec_placement(const memd_store_alloc_rec *r, memd_placement *pl)
{
    *pl = r->pl;
    pl->set = NULL;
    pl->addrs = NULL;
    pl->sizes = NULL;
    if (r->pl.mode == MEMD_BANKS_ALL)
        return 0;
    pl->set = malloc(sizeof(*pl->set) * r->pl.nset);
    if (r->pl.mode == MEMD_BANKS_PER_BANK)
        pl->addrs = malloc(sizeof(*pl->addrs) * r->pl.nset);
    if (r->sized)
        pl->sizes = malloc(sizeof(*pl->sizes) * r->pl.nset);
    if (!pl->set || (r->pl.mode == MEMD_BANKS_PER_BANK && !pl->addrs) ||
        (r->sized && !pl->sizes)) {
        memd_placement_fini(pl);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < r->pl.nset; i++)
        pl->set[i] = memd_wire_u32(r->banks + 4 * (size_t)i);
    for (uint32_t i = 0; pl->addrs && i < r->pl.nset; i++)
        pl->addrs[i] = memd_wire_u64(r->banks + 4 * (size_t)r->pl.nset + 8 * (size_t)i);
    for (uint32_t i = 0; pl->sizes && i < r->pl.nset; i++)
        pl->sizes[i] = memd_wire_u64(r->banks + 12 * (size_t)r->pl.nset + 8 * (size_t)i);
    if (pl->addrs)
        pl->address = pl->addrs[0];
    return 0;
}
