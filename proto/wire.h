/* memd wire codec: pure functions shared by the daemon and libmemclient.
 *
 * Every record of <memd/protocol.h> is written and read field by field in
 * little-endian order with no padding, so the byte layout never depends on the
 * compiler's struct layout or the host's endianness. Sizes on the wire are the
 * MEMD_WIRE_*_SIZE constants (wire_gen.h, generated from proto/memd.toml).
 *
 * Put functions write exactly the record's size at `out` (the caller provides room) and
 * return the pointer just past it. Get functions read from `in` with `len` bytes
 * available and return 0 or a negative errno:
 *   -EBADMSG  fewer bytes than the record needs (truncated), or a batch/length mismatch
 *   -EINVAL   a field out of range: unknown enum value or flag bit, string without NUL
 * Header decoding adds:
 *   -EPROTO          bad magic
 *   -EPROTONOSUPPORT version outside [1, MEMD_PROTO_VERSION]
 *   -EMSGSIZE        payload length over the caller's limit
 * Get functions never read past in + len and leave *out unspecified on error. */
#ifndef MEMD_PROTO_WIRE_H
#define MEMD_PROTO_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "le.h"
#include "memd/protocol.h"
#include "opcodes.h"
#include "wire_gen.h" /* every record's put/get and size, from proto/memd.toml */

/* Scalars, little-endian, unaligned: common/le.h's, under the codec's names. */
#define memd_wire_put_u16 memd_le_put_u16
#define memd_wire_put_u32 memd_le_put_u32
#define memd_wire_put_u64 memd_le_put_u64
#define memd_wire_u16 memd_le_u16
#define memd_wire_u32 memd_le_u32
#define memd_wire_u64 memd_le_u64

/* ---- wire_str.c: fixed-size strings ---- */

/* Writes s into a string field of n bytes at out: truncated to n - 1 bytes, NUL padded
 * (so encoding never leaks stack bytes and always carries a NUL). Returns out + n. */
uint8_t *memd_wire_put_str(uint8_t *out, const char *s, size_t n);
/* The same into a struct's char field; src NULL is "". */
void memd_wire_strset(char *dst, size_t n, const char *src);
/* Reads a fixed-size string field of n bytes: -EINVAL unless it holds its NUL; copies it
 * zero padded so s is clean. Shared with the state store's records. */
int memd_wire_get_str(const uint8_t *p, char *s, size_t n);

/* ---- wire_frame.c: the frame header, batch counts, DUMP tags ---- */

/* hdr_get checks magic, version and len <= max_len (the frame size limit; pass
 * MEMD_MAX_REPLY on the client side). The opcode is not checked here: see opcodes.h. */
uint8_t *memd_wire_hdr_put(uint8_t *out, const memd_wire_hdr *h);
int memd_wire_hdr_get(const uint8_t *in, size_t len, uint32_t max_len, memd_wire_hdr *h);

/* Batch payloads (ALLOC_BATCH, FREE_BATCH and their replies, BANKS reply): a u32 count,
 * a reserved u32 0, then count records of rec_size bytes. count_get checks that the
 * payload is exactly 8 + count * rec_size bytes (-EBADMSG otherwise) and that
 * count <= max_count (-E2BIG otherwise; pass UINT32_MAX for no limit). A count of 0 is
 * valid. The records themselves start at in + MEMD_WIRE_COUNT_SIZE. */
uint8_t *memd_wire_count_put(uint8_t *out, uint32_t count);
int memd_wire_count_get(const uint8_t *in, size_t len, size_t rec_size, uint32_t max_count,
                        uint32_t *count);

/* FREE, QUERY, BANKS requests: exactly one u64 handle (the opcode table checks it). */
static inline uint8_t *memd_wire_handle_put(uint8_t *out, uint64_t handle)
{
    return memd_wire_put_u64(out, handle);
}

/* DUMP replies: reads the tag at `in` and returns the size of the record after it in
 * *rec_size (for SUBDEV_BANKS, from its count). -EINVAL for an unknown tag or a
 * SUBDEV_BANKS count over MEMD_BANKSET_MAX, -EBADMSG if the tag or its record is cut. */
static inline uint8_t *memd_wire_tag_put(uint8_t *out, uint32_t tag)
{
    return memd_wire_put_u32(out, tag);
}
int memd_wire_tag_get(const uint8_t *in, size_t len, uint32_t *tag, size_t *rec_size);

/* ---- wire_banks.c: the records bank ids follow ---- */

/* ALLOC_BANKS payload: the alloc_req, the bankset header, its ids and (MEMD_BANKSET_F_SIZES)
 * a u64 size per id. get: *ids points at the count ids inside in (read them with
 * memd_wire_u32; the sizes, memd_wire_bankset_sizes); -EBADMSG when len is not exactly
 * that, -EINVAL for unknown flags or a count over MEMD_BANKSET_MAX. bankset_put writes
 * the header and ids; with MEMD_BANKSET_F_SIZES, bankset_sizes_put the count sizes next. */
uint8_t *memd_wire_bankset_put(uint8_t *out, const memd_wire_bankset *b, const uint32_t *ids);
uint8_t *memd_wire_bankset_sizes_put(uint8_t *out, const uint64_t *sizes, uint32_t count);
/* The encoded sizes after a bankset's ids (read them with memd_wire_u64), NULL without
 * MEMD_BANKSET_F_SIZES. */
static inline const uint8_t *memd_wire_bankset_sizes(const memd_wire_bankset *b,
                                                     const uint8_t *ids)
{
    return (b->flags & MEMD_BANKSET_F_SIZES) ? ids + 4 * (size_t)b->count : NULL;
}
int memd_wire_alloc_banks_get(const uint8_t *in, size_t len, memd_wire_alloc_req *r,
                              memd_wire_bankset *b, const uint8_t **ids);
/* One element of an ALLOC_BATCH_BANKS payload (an ALLOC_BANKS payload; more may follow):
 * *used is its size. -EBADMSG when len is shorter than it, -EINVAL as above. */
int memd_wire_alloc_banks_elem_get(const uint8_t *in, size_t len, memd_wire_alloc_req *r,
                                   memd_wire_bankset *b, const uint8_t **ids, size_t *used);
/* SUBDEV_DEFINE payload: the definition and its count bank ids (*ids points at them);
 * -EBADMSG when len is not exactly that, -EINVAL for a bad kind, name or count. */
uint8_t *memd_wire_subdev_def_put(uint8_t *out, const memd_wire_subdev_def *d, const uint32_t *ids);
int memd_wire_subdev_def_get(const uint8_t *in, size_t len, memd_wire_subdev_def *d,
                             const uint8_t **ids);
/* SUBDEV_BANKS record: the header and count ids (*ids points at them). get: -EBADMSG
 * when len is not exactly that, -EINVAL for a count over MEMD_BANKSET_MAX or ids not
 * strictly increasing (their bound, the group's bank count, is the reader's to check). */
uint8_t *memd_wire_subdev_banks_put(uint8_t *out, const uint32_t *ids, uint32_t count);
int memd_wire_subdev_banks_get(const uint8_t *in, size_t len, uint32_t *count,
                               const uint8_t **ids);

#endif
