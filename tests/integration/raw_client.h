/* memd tests — a minimal client on a raw socket, built on the wire codec only, so the
 * daemon's tests do not depend on libmemclient and can send any bytes they like. */
#ifndef MEMD_TESTS_RAW_CLIENT_H
#define MEMD_TESTS_RAW_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

/* Writes all of buf. 0 or -errno. */
int raw_write(int fd, const void *buf, size_t len);
/* Sends one frame (header with version 1 and status 0, then payload). */
int raw_send(int fd, uint16_t op, uint64_t id, const void *payload, uint32_t len);

/* Reads one reply frame within timeout_ms: its header into *h and up to cap payload
 * bytes into buf (the rest is discarded). 0, -ETIMEDOUT, -EPIPE when the daemon closed
 * the connection before a whole frame arrived, -EPROTO for a header that does not
 * decode. */
int raw_recv(int fd, memd_wire_hdr *h, uint8_t *buf, size_t cap, int timeout_ms);
/* Like raw_recv, but decodes an error reply's payload into *err when status < 0. */
int raw_recv_err(int fd, memd_wire_hdr *h, uint8_t *buf, size_t cap, memd_wire_error *err,
                 int timeout_ms);

/* True once the daemon has closed the connection (EOF or reset) within timeout_ms;
 * anything that arrives before is discarded. */
bool raw_closed(int fd, int timeout_ms);

/* A DRAM request of `bytes` for class cls on device dev. */
memd_wire_alloc_req raw_req(uint32_t dev, uint8_t cls, uint8_t scope, uint64_t bytes);

/* One ALLOC round trip: returns the reply status (0 or -errno); *out on success, *err
 * (may be NULL) on failure. */
int raw_alloc(int fd, const memd_wire_alloc_req *r, memd_wire_buffer *out,
              memd_wire_error *err);
int raw_free(int fd, uint64_t handle, memd_wire_error *err);
/* HELLO round trip. */
int raw_hello(int fd, const char *name, memd_wire_welcome *out);

/* DUMP into a malloc'd payload (*payload, *len); returns the status. */
int raw_dump(int fd, uint32_t device, uint32_t flags, uint8_t **payload, size_t *len);
/* Counts the records with `tag` in a DUMP payload; -EBADMSG if it does not parse. */
int raw_dump_count(const uint8_t *p, size_t len, uint32_t tag);

#endif
