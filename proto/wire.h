/* memd wire codec: pure functions shared by the daemon and libmemclient.
 *
 * Every record of include/memd/protocol.h is written and read field by field in
 * little-endian order with no padding, so the byte layout never depends on the
 * compiler's struct layout or the host's endianness. Sizes on the wire are the
 * MEMD_WIRE_*_SIZE constants below.
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

#include "memd/protocol.h"
#include "opcodes.h"

#define MEMD_WIRE_HELLO_SIZE 64u
#define MEMD_WIRE_HELLO_V1_SIZE 40u   /* HELLO before the reclaim fields: still accepted */
#define MEMD_WIRE_WELCOME_SIZE 72u
#define MEMD_WIRE_WELCOME_V1_SIZE 48u /* the welcome answering a 40-byte HELLO */
#define MEMD_WIRE_ERROR_SIZE 248u
#define MEMD_WIRE_ALLOC_REQ_SIZE 136u
#define MEMD_WIRE_BUFFER_SIZE 56u
#define MEMD_WIRE_ALLOC_INFO_SIZE 168u
#define MEMD_WIRE_DUMP_REQ_SIZE 16u
#define MEMD_WIRE_DUMP_REQ_V1_SIZE 8u /* without the cursor */
#define MEMD_WIRE_PAGE_REC_SIZE 8u
#define MEMD_WIRE_STATS_SIZE 56u
#define MEMD_WIRE_SERVER_REC_SIZE 120u
#define MEMD_WIRE_DEVICE_REC_SIZE 136u
#define MEMD_WIRE_GROUP_REC_SIZE 88u
#define MEMD_WIRE_REGION_REC_SIZE 144u
#define MEMD_WIRE_BLOCK_REC_SIZE 24u
#define MEMD_WIRE_SESSION_REC_SIZE 104u
#define MEMD_WIRE_HANDLE_SIZE 8u
#define MEMD_WIRE_COUNT_SIZE 8u /* u32 count, u32 0: the prefix of batch payloads */
#define MEMD_WIRE_TAG_SIZE 4u   /* u32 tag before each DUMP record */
/* Plans and models. */
#define MEMD_WIRE_UPLOAD_SIZE 24u
#define MEMD_WIRE_DOC_SIZE 8u   /* u64 upload id before a PLAN / MODEL_LOAD document */
#define MEMD_WIRE_PLAN_REQ_SIZE 24u
#define MEMD_WIRE_PLAN_BUF_SIZE 48u
#define MEMD_WIRE_PLAN_INFO_SIZE 80u
#define MEMD_WIRE_MODEL_REQ_SIZE 96u
#define MEMD_WIRE_TENSOR_SIZE 40u
#define MEMD_WIRE_MODEL_INFO_SIZE 208u
#define MEMD_WIRE_TENSOR_INFO_SIZE 24u
#define MEMD_WIRE_REF_SIZE 16u
#define MEMD_WIRE_INSTANCE_INFO_SIZE 48u
#define MEMD_WIRE_TENSOR_ADDR_SIZE 16u
#define MEMD_WIRE_PLAN_REC_SIZE 96u
#define MEMD_WIRE_MODEL_REC_SIZE 144u
#define MEMD_WIRE_INSTANCE_REC_SIZE 64u
/* Events, and DUMP's per-session use. */
#define MEMD_WIRE_EVENTS_REQ_SIZE 16u
#define MEMD_WIRE_EVENTS_INFO_SIZE 24u
#define MEMD_WIRE_EVENT_SIZE 320u
#define MEMD_WIRE_SESSION_USE_SIZE 32u
/* Client pools. */
#define MEMD_WIRE_POOL_OP_SIZE 96u
#define MEMD_WIRE_POOL_REC_SIZE 40u
#define MEMD_WIRE_SUBALLOC_REC_SIZE 88u
#define MEMD_WIRE_BANKSET_SIZE 8u
#define MEMD_WIRE_BANK_ADDR_SIZE 32u
#define MEMD_WIRE_BANK_REC_SIZE 80u
#define MEMD_WIRE_ALLOC_BANK_REC_SIZE 48u
#define MEMD_WIRE_SUBDEV_DEF_SIZE 344u
#define MEMD_WIRE_SUBDEV_REC_SIZE 232u
#define MEMD_WIRE_SUBDEV_BANKS_REC_SIZE 8u /* the fixed part; count x 4 bytes follow */

/* Scalars, little-endian, unaligned. */
static inline uint8_t *memd_wire_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static inline uint8_t *memd_wire_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static inline uint8_t *memd_wire_put_u64(uint8_t *p, uint64_t v)
{
    memd_wire_put_u32(p, (uint32_t)v);
    return memd_wire_put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t memd_wire_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t memd_wire_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t memd_wire_u64(const uint8_t *p)
{
    return (uint64_t)memd_wire_u32(p) | (uint64_t)memd_wire_u32(p + 4) << 32;
}

/* ---- wire_str.c: fixed-size strings ---- */

/* Writes s into a string field of n bytes at out: truncated to n - 1 bytes, NUL padded
 * (so encoding never leaks stack bytes and always carries a NUL). Returns out + n. */
uint8_t *memd_wire_put_str(uint8_t *out, const char *s, size_t n);
/* The same into a struct's char field; src NULL is "". */
void memd_wire_strset(char *dst, size_t n, const char *src);
/* Reads a fixed-size string field of n bytes: -EINVAL unless it holds its NUL; copies it
 * zero padded so s is clean. Shared with the state store's records. */
int memd_wire_get_str(const uint8_t *p, char *s, size_t n);

/* ---- wire_frame.c: header, HELLO / welcome, error ---- */

/* hdr_get checks magic, version and len <= max_len (the frame size limit; pass
 * MEMD_MAX_REPLY on the client side). The opcode is not checked here: see opcodes.h. */
uint8_t *memd_wire_hdr_put(uint8_t *out, const memd_wire_hdr *h);
int memd_wire_hdr_get(const uint8_t *in, size_t len, uint32_t max_len, memd_wire_hdr *h);
uint8_t *memd_wire_hello_put(uint8_t *out, const memd_wire_hello *r);
int memd_wire_hello_get(const uint8_t *in, size_t len, memd_wire_hello *r);
uint8_t *memd_wire_welcome_put(uint8_t *out, const memd_wire_welcome *r);
int memd_wire_welcome_get(const uint8_t *in, size_t len, memd_wire_welcome *r);
/* Either size of HELLO / welcome: exactly the V1 size (the appended fields read as 0)
 * or exactly the current size; any other length is -EBADMSG. */
int memd_wire_hello_get_any(const uint8_t *in, size_t len, memd_wire_hello *r);
int memd_wire_welcome_get_any(const uint8_t *in, size_t len, memd_wire_welcome *r);
uint8_t *memd_wire_error_put(uint8_t *out, const memd_wire_error *r);
int memd_wire_error_get(const uint8_t *in, size_t len, memd_wire_error *r);

/* ---- wire_alloc.c: allocations, batches, handles ---- */

uint8_t *memd_wire_alloc_req_put(uint8_t *out, const memd_wire_alloc_req *r);
int memd_wire_alloc_req_get(const uint8_t *in, size_t len, memd_wire_alloc_req *r);
uint8_t *memd_wire_buffer_put(uint8_t *out, const memd_wire_buffer *r);
/* ALLOC_BANKS payload: the alloc_req, the bankset header and its ids. get: *ids points
 * at the count ids inside in (read them with memd_wire_u32); -EBADMSG when len is not
 * exactly that, -EINVAL for unknown flags or a count over MEMD_BANKSET_MAX. */
uint8_t *memd_wire_bankset_put(uint8_t *out, const memd_wire_bankset *b, const uint32_t *ids);
int memd_wire_alloc_banks_get(const uint8_t *in, size_t len, memd_wire_alloc_req *r,
                              memd_wire_bankset *b, const uint8_t **ids);
/* One element of an ALLOC_BATCH_BANKS payload (an ALLOC_BANKS payload; more may follow):
 * *used is its size. -EBADMSG when len is shorter than it, -EINVAL as above. */
int memd_wire_alloc_banks_elem_get(const uint8_t *in, size_t len, memd_wire_alloc_req *r,
                                   memd_wire_bankset *b, const uint8_t **ids, size_t *used);
uint8_t *memd_wire_bank_addr_put(uint8_t *out, const memd_wire_bank_addr *r);
int memd_wire_bank_addr_get(const uint8_t *in, size_t len, memd_wire_bank_addr *r);
uint8_t *memd_wire_bank_rec_put(uint8_t *out, const memd_wire_bank_rec *r);
int memd_wire_bank_rec_get(const uint8_t *in, size_t len, memd_wire_bank_rec *r);
/* SUBDEV_DEFINE payload: the definition and its count bank ids (*ids points at them);
 * -EBADMSG when len is not exactly that, -EINVAL for a bad kind, name or count. */
uint8_t *memd_wire_subdev_def_put(uint8_t *out, const memd_wire_subdev_def *d, const uint32_t *ids);
int memd_wire_subdev_def_get(const uint8_t *in, size_t len, memd_wire_subdev_def *d,
                             const uint8_t **ids);
uint8_t *memd_wire_subdev_rec_put(uint8_t *out, const memd_wire_subdev_rec *r);
int memd_wire_subdev_rec_get(const uint8_t *in, size_t len, memd_wire_subdev_rec *r);
/* SUBDEV_BANKS record: the header and count ids (*ids points at them). get: -EBADMSG
 * when len is not exactly that, -EINVAL for a count over MEMD_BANKSET_MAX or ids not
 * strictly increasing (their bound, the group's bank count, is the reader's to check). */
uint8_t *memd_wire_subdev_banks_put(uint8_t *out, const uint32_t *ids, uint32_t count);
int memd_wire_subdev_banks_get(const uint8_t *in, size_t len, uint32_t *count,
                               const uint8_t **ids);
uint8_t *memd_wire_alloc_bank_rec_put(uint8_t *out, const memd_wire_alloc_bank_rec *r);
int memd_wire_alloc_bank_rec_get(const uint8_t *in, size_t len, memd_wire_alloc_bank_rec *r);
int memd_wire_buffer_get(const uint8_t *in, size_t len, memd_wire_buffer *r);
uint8_t *memd_wire_alloc_info_put(uint8_t *out, const memd_wire_alloc_info *r);
int memd_wire_alloc_info_get(const uint8_t *in, size_t len, memd_wire_alloc_info *r);

/* Batch payloads (ALLOC_BATCH, FREE_BATCH and their replies, BANKS reply): a u32 count,
 * a reserved u32 0, then count records of rec_size bytes. count_get checks that the
 * payload is exactly 8 + count * rec_size bytes (-EBADMSG otherwise) and that
 * count <= max_count (-E2BIG otherwise; pass UINT32_MAX for no limit). A count of 0 is
 * valid. The records themselves start at in + MEMD_WIRE_COUNT_SIZE. */
uint8_t *memd_wire_count_put(uint8_t *out, uint32_t count);
int memd_wire_count_get(const uint8_t *in, size_t len, size_t rec_size, uint32_t max_count,
                        uint32_t *count);

/* FREE, QUERY, BANKS requests: exactly one u64 handle (the opcode table checks it). */
uint8_t *memd_wire_handle_put(uint8_t *out, uint64_t handle);

/* ---- wire_dump.c: the DUMP request and its records ---- */

uint8_t *memd_wire_dump_req_put(uint8_t *out, const memd_wire_dump_req *r);
int memd_wire_dump_req_get(const uint8_t *in, size_t len, memd_wire_dump_req *r);
uint8_t *memd_wire_page_rec_put(uint8_t *out, const memd_wire_page_rec *r);
int memd_wire_page_rec_get(const uint8_t *in, size_t len, memd_wire_page_rec *r);
uint8_t *memd_wire_stats_put(uint8_t *out, const memd_wire_stats *r);
int memd_wire_stats_get(const uint8_t *in, size_t len, memd_wire_stats *r);
uint8_t *memd_wire_server_rec_put(uint8_t *out, const memd_wire_server_rec *r);
int memd_wire_server_rec_get(const uint8_t *in, size_t len, memd_wire_server_rec *r);
uint8_t *memd_wire_device_rec_put(uint8_t *out, const memd_wire_device_rec *r);
int memd_wire_device_rec_get(const uint8_t *in, size_t len, memd_wire_device_rec *r);
uint8_t *memd_wire_group_rec_put(uint8_t *out, const memd_wire_group_rec *r);
int memd_wire_group_rec_get(const uint8_t *in, size_t len, memd_wire_group_rec *r);
uint8_t *memd_wire_region_rec_put(uint8_t *out, const memd_wire_region_rec *r);
int memd_wire_region_rec_get(const uint8_t *in, size_t len, memd_wire_region_rec *r);
uint8_t *memd_wire_block_rec_put(uint8_t *out, const memd_wire_block_rec *r);
int memd_wire_block_rec_get(const uint8_t *in, size_t len, memd_wire_block_rec *r);
uint8_t *memd_wire_session_rec_put(uint8_t *out, const memd_wire_session_rec *r);
int memd_wire_session_rec_get(const uint8_t *in, size_t len, memd_wire_session_rec *r);

/* ---- wire_event.c: EVENTS, and DUMP's SESSION_USE record ---- */

uint8_t *memd_wire_events_req_put(uint8_t *out, const memd_wire_events_req *r);
int memd_wire_events_req_get(const uint8_t *in, size_t len, memd_wire_events_req *r);
uint8_t *memd_wire_events_info_put(uint8_t *out, const memd_wire_events_info *r);
int memd_wire_events_info_get(const uint8_t *in, size_t len, memd_wire_events_info *r);
uint8_t *memd_wire_event_put(uint8_t *out, const memd_wire_event *r);
int memd_wire_event_get(const uint8_t *in, size_t len, memd_wire_event *r);
uint8_t *memd_wire_session_use_put(uint8_t *out, const memd_wire_session_use *r);
int memd_wire_session_use_get(const uint8_t *in, size_t len, memd_wire_session_use *r);

/* DUMP replies: reads the tag at `in` and returns the size of the record after it in
 * *rec_size (for SUBDEV_BANKS, from its count). -EINVAL for an unknown tag or a
 * SUBDEV_BANKS count over MEMD_BANKSET_MAX, -EBADMSG if the tag or its record is cut. */
uint8_t *memd_wire_tag_put(uint8_t *out, uint32_t tag);
int memd_wire_tag_get(const uint8_t *in, size_t len, uint32_t *tag, size_t *rec_size);
/* 0 for an unknown tag; for SUBDEV_BANKS, the size of its fixed part */
size_t memd_wire_rec_size(uint32_t tag);

/* ---- wire_plan.c, wire_model.c: plans and models (protocol.h, section at the end) ----
 *
 * Get functions check enums, flags and strings like the others; ranges that depend on
 * the daemon (counts, sizes against limits, lifetimes) are the daemon's to judge. */

uint8_t *memd_wire_upload_put(uint8_t *out, const memd_wire_upload *r);
int memd_wire_upload_get(const uint8_t *in, size_t len, memd_wire_upload *r);
uint8_t *memd_wire_plan_req_put(uint8_t *out, const memd_wire_plan_req *r);
int memd_wire_plan_req_get(const uint8_t *in, size_t len, memd_wire_plan_req *r);
uint8_t *memd_wire_plan_buf_put(uint8_t *out, const memd_wire_plan_buf *r);
int memd_wire_plan_buf_get(const uint8_t *in, size_t len, memd_wire_plan_buf *r);
uint8_t *memd_wire_plan_info_put(uint8_t *out, const memd_wire_plan_info *r);
int memd_wire_plan_info_get(const uint8_t *in, size_t len, memd_wire_plan_info *r);
uint8_t *memd_wire_plan_rec_put(uint8_t *out, const memd_wire_plan_rec *r);
int memd_wire_plan_rec_get(const uint8_t *in, size_t len, memd_wire_plan_rec *r);

uint8_t *memd_wire_model_req_put(uint8_t *out, const memd_wire_model_req *r);
int memd_wire_model_req_get(const uint8_t *in, size_t len, memd_wire_model_req *r);
uint8_t *memd_wire_tensor_put(uint8_t *out, const memd_wire_tensor *r);
int memd_wire_tensor_get(const uint8_t *in, size_t len, memd_wire_tensor *r);
uint8_t *memd_wire_model_info_put(uint8_t *out, const memd_wire_model_info *r);
int memd_wire_model_info_get(const uint8_t *in, size_t len, memd_wire_model_info *r);
uint8_t *memd_wire_tensor_info_put(uint8_t *out, const memd_wire_tensor_info *r);
int memd_wire_tensor_info_get(const uint8_t *in, size_t len, memd_wire_tensor_info *r);
uint8_t *memd_wire_ref_put(uint8_t *out, const memd_wire_ref *r);
int memd_wire_ref_get(const uint8_t *in, size_t len, memd_wire_ref *r);
uint8_t *memd_wire_instance_info_put(uint8_t *out, const memd_wire_instance_info *r);
int memd_wire_instance_info_get(const uint8_t *in, size_t len, memd_wire_instance_info *r);
uint8_t *memd_wire_tensor_addr_put(uint8_t *out, const memd_wire_tensor_addr *r);
int memd_wire_tensor_addr_get(const uint8_t *in, size_t len, memd_wire_tensor_addr *r);
uint8_t *memd_wire_model_rec_put(uint8_t *out, const memd_wire_model_rec *r);
int memd_wire_model_rec_get(const uint8_t *in, size_t len, memd_wire_model_rec *r);
uint8_t *memd_wire_instance_rec_put(uint8_t *out, const memd_wire_instance_rec *r);
int memd_wire_instance_rec_get(const uint8_t *in, size_t len, memd_wire_instance_rec *r);

/* ---- wire_pool.c: client pools (protocol.h, section at the end) ---- */

uint8_t *memd_wire_pool_op_put(uint8_t *out, const memd_wire_pool_op *r);
int memd_wire_pool_op_get(const uint8_t *in, size_t len, memd_wire_pool_op *r);
uint8_t *memd_wire_pool_rec_put(uint8_t *out, const memd_wire_pool_rec *r);
int memd_wire_pool_rec_get(const uint8_t *in, size_t len, memd_wire_pool_rec *r);
uint8_t *memd_wire_suballoc_rec_put(uint8_t *out, const memd_wire_suballoc_rec *r);
int memd_wire_suballoc_rec_get(const uint8_t *in, size_t len, memd_wire_suballoc_rec *r);

#endif
