/* memd daemon — the state store's record formats: pure encode/decode, no LMDB.
 *
 * Records are fixed little-endian layouts with a format byte first (as the wire codec:
 * field by field, never a memcpy of a struct), so a store written by one build reads the
 * same in any other, and a decoder checks every length, enum and string, so a damaged
 * record is reported, never trusted. Keys are big-endian so LMDB's byte order is
 * numeric order.
 *
 *   allocations  key u64          -> memd_store_alloc_rec (+ holders), one or more
 *                                   (those stored under the key, store_internal.h)
 *   sessions     key u32 id       -> memd_store_sess_rec
 *   meta         key "meta"       -> memd_store_meta (+ device fingerprints) */
#ifndef MEMD_DAEMON_STORE_CODEC_H
#define MEMD_DAEMON_STORE_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "memd/protocol.h"

/* 2: every record carries a checksum (store_codec.c). A store of another format is
 * refused at start, never guessed at. */
#define MEMD_STORE_FORMAT 2
#define MEMD_STORE_META_MAGIC 0x5453444du /* "MDST" */

enum { MEMD_STORE_REC_SHARED = 1u << 0, MEMD_STORE_REC_POOL = 1u << 1 };
/* The flags byte's bits 2-3 hold the placement's memd_bank_mode (0, lockstep: the record
 * is byte-identical to one written before bank sets; 3, range lockstep, fills the field:
 * a fifth mode needs another bit). Not part of memd_store_alloc_rec's flags: encode takes
 * pl.mode, decode fills it. */
#define MEMD_STORE_REC_MODE_SHIFT 2u
#define MEMD_STORE_REC_MODE_MASK (3u << MEMD_STORE_REC_MODE_SHIFT)
/* Bit 4: a per-bank placement with a size per piece (pl.sizes): nset x u64 follow its
 * addresses. Encode takes pl.sizes, decode fills it; records without it load as before,
 * and a memd from before it refuses the record (an unknown flag). */
#define MEMD_STORE_REC_SIZES (1u << 4)

typedef struct memd_store_alloc_rec {
    uint64_t handle;
    uint32_t device;               /* device id (not index) */
    memd_placement pl;
    uint64_t requested;
    uint64_t created_ns;
    uint32_t pid, uid, gid, session_id; /* creator */
    uint8_t cls, scope, flags;     /* MEMD_STORE_REC_* */
    char comm[16];
    char name[MEMD_NAME_MAX];
    uint32_t nholders;             /* >= 1 */
    const uint8_t *holders;        /* decode: nholders x (u32 session, u32 count, u64 req) */
    /* decode, bank-set placements (pl.mode, pl.nset set; pl.set, pl.addrs NULL): the
     * encoded ids and addresses; memd_store_rec_placement reads them. */
    const uint8_t *banks;
    bool sized;                    /* decode: the record has pl.sizes (MEMD_STORE_REC_SIZES) */
} memd_store_alloc_rec;

#define MEMD_STORE_ALLOC_REC_BASE 96u
#define MEMD_STORE_HOLDER_SIZE 16u
#define MEMD_STORE_ALLOC_SUM_AT 92u

/* The checksum of len bytes at p, the 4 at skip (where it is kept) taken as zero. */
uint32_t memd_store_sum(const uint8_t *p, size_t len, size_t skip);

/* Encoded size of a placement's bank set (0 for lockstep); sized: with its pieces' sizes. */
size_t memd_store_bankset_size(memd_bank_mode mode, uint64_t nset, bool sized);
/* Encoded size of r (its nholders, and its comm and name without their NULs). */
size_t memd_store_alloc_rec_size(const memd_store_alloc_rec *r);

/* Writes the record (without holders) and returns where the holders go. */
uint8_t *memd_store_alloc_rec_put(uint8_t *out, const memd_store_alloc_rec *r);
/* The same with the lengths of comm and name known (memd_store_str_len). */
uint8_t *memd_store_alloc_rec_put_len(uint8_t *out, const memd_store_alloc_rec *r,
                                      size_t comm_len, size_t name_len);
/* A string field's stored length: up to its NUL, at most size - 1. */
size_t memd_store_str_len(const char *s, size_t size);
/* count holds of one session made by client request req (0: unknown). */
uint8_t *memd_store_holder_put(uint8_t *out, uint32_t session_id, uint32_t count, uint64_t req);
/* Sets the checksum of the complete record (holders written) of len bytes at rec. */
void memd_store_alloc_rec_seal(uint8_t *rec, size_t len);
/* The length of the record at in from its header (records are stored one after the
 * other, store_internal.h): 0, or -EBADMSG when it does not fit in len. */
int memd_store_alloc_rec_len(const uint8_t *in, size_t len, size_t *out);
/* 0, -EBADMSG (length or checksum), -EINVAL (field out of range), -EPROTONOSUPPORT (format). */
int memd_store_alloc_rec_get(const uint8_t *in, size_t len, memd_store_alloc_rec *r);
/* The decoded record's placement with its own bank arrays (memd_placement_fini).
 * 0 or -ENOMEM. */
int memd_store_rec_placement(const memd_store_alloc_rec *r, memd_placement *pl);
void memd_store_holder_at(const memd_store_alloc_rec *r, uint32_t i, uint32_t *session_id,
                          uint32_t *count, uint64_t *req);

typedef struct memd_store_sess_rec {
    uint32_t id, pid, uid, gid;
    uint64_t starttime;            /* /proc/PID/stat field 22; 0 unknown */
    uint64_t connected_ns;
    uint8_t token[MEMD_TOKEN_SIZE];
    char comm[16];
    char client_name[32];
} memd_store_sess_rec;

#define MEMD_STORE_SESS_REC_SIZE 104u
uint8_t *memd_store_sess_rec_put(uint8_t *out, const memd_store_sess_rec *r);
int memd_store_sess_rec_get(const uint8_t *in, size_t len, memd_store_sess_rec *r);

typedef struct memd_store_dev_fp {
    uint32_t id;
    uint64_t fingerprint;
} memd_store_dev_fp;

typedef struct memd_store_meta {
    uint32_t format;
    uint64_t handle_hwm;           /* every handle ever given out is below this */
    uint32_t session_hwm;          /* every session id ever given out is below this */
    char boot_id[40];
    uint32_t ndevs;
    const uint8_t *devs;           /* decode: ndevs x (u32 id, u32 0, u64 fingerprint) */
} memd_store_meta;

#define MEMD_STORE_META_BASE 64u
#define MEMD_STORE_DEV_FP_SIZE 16u
/* The encoded size of a meta record with ndevs devices. */
size_t memd_store_meta_size(uint32_t ndevs);
uint8_t *memd_store_meta_put(uint8_t *out, const memd_store_meta *m,
                             const memd_store_dev_fp *devs);
int memd_store_meta_get(const uint8_t *in, size_t len, memd_store_meta *m);
memd_store_dev_fp memd_store_meta_dev(const memd_store_meta *m, uint32_t i);

/* Keys. */
void memd_store_key_u64(uint8_t out[8], uint64_t v);
void memd_store_key_u32(uint8_t out[4], uint32_t v);
uint64_t memd_store_key_get_u64(const uint8_t in[8]);
uint32_t memd_store_key_get_u32(const uint8_t in[4]);

/* A hash of what decides whether a stored placement is still valid on this device: the
 * bank groups (banks, bank size, alignment) and their regions (name, base, size,
 * allocatable), and the texture pitch alignment. Not the class policy or names: those
 * only steer future placements. */
uint64_t memd_store_device_fingerprint(const memd_device_spec *spec);

#endif
