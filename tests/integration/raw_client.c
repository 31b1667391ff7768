/* memd tests — raw socket client (see raw_client.h). */
#include "raw_client.h"

#include "daemon_fixture.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fdio.h"
#include "test_clock.h"

static uint64_t next_id = 1;

int raw_write(int fd, const void *buf, size_t len)
{
    return memd_write_all(fd, buf, len, true);
}

int raw_send(int fd, uint16_t op, uint64_t id, const void *payload, uint32_t len)
{
    uint8_t *f = malloc(MEMD_HDR_SIZE + (size_t)len);
    if (!f)
        return -ENOMEM;
    memd_wire_hdr h = {.magic = MEMD_PROTO_MAGIC, .version = MEMD_PROTO_VERSION,
                       .opcode = op, .id = id, .len = len};
    memd_wire_hdr_put(f, &h);
    if (len)
        memcpy(f + MEMD_HDR_SIZE, payload, len);
    int rc = raw_write(fd, f, MEMD_HDR_SIZE + (size_t)len);
    free(f);
    return rc;
}

/* Reads exactly len bytes (buf may be NULL: discard). */
static int read_full(int fd, uint8_t *buf, size_t len, long deadline)
{
    uint8_t sink[4096];
    while (len > 0) {
        long left = deadline - memd_test_now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -ETIMEDOUT;
        size_t want = buf ? len : (len < sizeof sink ? len : sizeof sink);
        ssize_t n = recv(fd, buf ? buf : sink, want, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return -EPIPE;
        if (n < 0)
            return -errno;
        if (buf)
            buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int raw_recv(int fd, memd_wire_hdr *h, uint8_t *buf, size_t cap, int timeout_ms)
{
    long deadline = memd_test_now_ms() + timeout_ms;
    uint8_t hb[MEMD_HDR_SIZE];
    int rc = read_full(fd, hb, sizeof hb, deadline);
    if (rc < 0)
        return rc;
    if (memd_wire_hdr_get(hb, sizeof hb, MEMD_MAX_REPLY, h) < 0)
        return -EPROTO;
    size_t keep = h->len < cap ? h->len : cap;
    if ((rc = read_full(fd, buf, keep, deadline)) < 0)
        return rc;
    return read_full(fd, NULL, h->len - keep, deadline);
}

int raw_recv_err(int fd, memd_wire_hdr *h, uint8_t *buf, size_t cap, memd_wire_error *err,
                 int timeout_ms)
{
    int rc = raw_recv(fd, h, buf, cap, timeout_ms);
    if (rc < 0)
        return rc;
    if (h->status < 0 && err) {
        memset(err, 0, sizeof *err);
        /* Either size: this client's HELLO may or may not ask for the postmortem field. */
        if (cap < h->len || memd_wire_error_get_any(buf, h->len, err) < 0)
            return -EBADMSG;
    }
    return 0;
}

bool raw_closed(int fd, int timeout_ms)
{
    long deadline = memd_test_now_ms() + timeout_ms;
    uint8_t sink[4096];
    for (;;) {
        long left = deadline - memd_test_now_ms();
        if (left <= 0)
            return false;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, (int)left);
        if (r <= 0)
            continue;
        ssize_t n = recv(fd, sink, sizeof sink, 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return true;
    }
}

memd_wire_alloc_req raw_req(uint32_t dev, uint8_t cls, uint8_t scope, uint64_t bytes)
{
    memd_wire_alloc_req r = {.device = dev, .cls = cls, .scope = scope, .bytes = bytes};
    return r;
}

/* Sends the request in p as op with a fresh id and reads its reply back into p. Returns
 * -EPROTO when the reply answers another id (or, with same_op, another opcode), else the
 * reply's status, its error record copied to *err (if not NULL) when negative. */
static int raw_exchange(int fd, uint16_t op, uint8_t p[MEMD_WIRE_ERROR_SIZE], uint32_t len,
                        bool same_op, memd_wire_hdr *h, memd_wire_error *err)
{
    uint64_t id = next_id++;
    memd_wire_error e;
    int rc = raw_send(fd, op, id, p, len);
    if (rc == 0)
        rc = raw_recv_err(fd, h, p, MEMD_WIRE_ERROR_SIZE, &e, 10000);
    if (rc < 0)
        return rc;
    if (h->id != id || (same_op && h->opcode != op))
        return -EPROTO;
    if (h->status < 0 && err)
        *err = e;
    return h->status;
}

int raw_alloc(int fd, const memd_wire_alloc_req *r, memd_wire_buffer *out,
              memd_wire_error *err)
{
    uint8_t p[MEMD_WIRE_ERROR_SIZE];
    memd_wire_alloc_req_put(p, r);
    memd_wire_hdr h;
    int rc = raw_exchange(fd, MEMD_OP_ALLOC, p, MEMD_WIRE_ALLOC_REQ_SIZE, true, &h, err);
    if (rc < 0)
        return rc;
    if (h.len != MEMD_WIRE_BUFFER_SIZE || memd_wire_buffer_get(p, h.len, out) < 0)
        return -EBADMSG;
    return 0;
}

int raw_free(int fd, uint64_t handle, memd_wire_error *err)
{
    uint8_t p[MEMD_WIRE_ERROR_SIZE];
    memd_wire_handle_put(p, handle);
    memd_wire_hdr h;
    return raw_exchange(fd, MEMD_OP_FREE, p, MEMD_WIRE_HANDLE_SIZE, false, &h, err);
}

int raw_hello(int fd, const char *name, memd_wire_welcome *out)
{
    uint8_t p[MEMD_WIRE_ERROR_SIZE];
    memd_wire_hello hello = {.min_version = 1, .max_version = MEMD_PROTO_VERSION};
    memd_wire_strset(hello.client_name, sizeof hello.client_name, name);
    memd_wire_hello_put(p, &hello);
    uint64_t id = next_id++;
    int rc = raw_send(fd, MEMD_OP_HELLO, id, p, MEMD_WIRE_HELLO_SIZE);
    memd_wire_hdr h;
    if (rc == 0)
        rc = raw_recv(fd, &h, p, sizeof p, 10000);
    if (rc < 0)
        return rc;
    if (h.status < 0)
        return h.status;
    return memd_wire_welcome_get(p, h.len, out);
}

int raw_dump(int fd, uint32_t device, uint32_t flags, uint8_t **payload, size_t *len)
{
    uint8_t p[MEMD_WIRE_DUMP_REQ_SIZE];
    memd_wire_dump_req d = {.device = device, .flags = flags};
    memd_wire_dump_req_put(p, &d);
    int rc = raw_send(fd, MEMD_OP_DUMP, next_id++, p, sizeof p);
    if (rc < 0)
        return rc;
    size_t cap = 16u << 20;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return -ENOMEM;
    memd_wire_hdr h;
    rc = raw_recv(fd, &h, buf, cap, 20000);
    if (rc < 0 || h.status < 0) {
        free(buf);
        return rc < 0 ? rc : h.status;
    }
    *payload = buf;
    *len = h.len;
    return 0;
}

int raw_dump_count(const uint8_t *p, size_t len, uint32_t tag)
{
    int n = 0;
    size_t off = 0;
    while (off < len) {
        uint32_t t;
        size_t sz;
        if (memd_wire_tag_get(p + off, len - off, &t, &sz) < 0)
            return -EBADMSG;
        n += t == tag;
        off += MEMD_WIRE_TAG_SIZE + sz;
    }
    return n;
}
