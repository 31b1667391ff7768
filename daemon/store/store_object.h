/* memd daemon — the state store's "objects" table: the records other layers keep in the
 * store through core (hooks.h memd_record: the model layer's plans, models, instances).
 * Pure encode/decode, no LMDB, like store_codec.h.
 *
 * The store does not read the owner's bytes; it wraps them in an envelope with a
 * checksum, so a damaged record is caught (at start, by the checker: store_check.c)
 * before the owner ever decodes it, and the owner gets back exactly what it wrote.
 *
 *   key     u8 kind, u64 id (big-endian: LMDB's byte order is kind, then id order)
 *   record  0 u8 format (MEMD_STORE_OBJ_FORMAT)   1 u8 kind   2 u16 owner's version
 *           4 u32 payload length   8 u64 id   16 u32 checksum   20 u32 0
 *           24 the payload */
#ifndef MEMD_DAEMON_STORE_OBJECT_H
#define MEMD_DAEMON_STORE_OBJECT_H

#include <stddef.h>
#include <stdint.h>

#include "hooks.h"

#define MEMD_STORE_OBJ_FORMAT 1
#define MEMD_STORE_OBJ_HEAD 24u
#define MEMD_STORE_OBJ_KEY 9u
/* A payload's limit: a plan of MEMD_PLAN_MAX_BUFFERS is far below it. */
#define MEMD_STORE_OBJ_MAX (256u << 20)

void memd_store_obj_key(uint8_t out[MEMD_STORE_OBJ_KEY], uint8_t kind, uint64_t id);
/* Encoded size of r's record. */
size_t memd_store_obj_size(const memd_record *r);
/* Writes r's record (memd_store_obj_size bytes) at out, checksum included. */
void memd_store_obj_put(uint8_t *out, const memd_record *r);
/* Decodes the record under key: r->data points into in. 0, -EBADMSG (length, checksum,
 * key), -EINVAL (kind, reserved field), -EPROTONOSUPPORT (format). Whatever the result,
 * r->kind and r->id are the key's (to name a damaged record), if the key has its size. */
int memd_store_obj_get(const uint8_t *key, size_t key_len, const uint8_t *in, size_t len,
                       memd_record *r);

#endif
