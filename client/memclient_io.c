/* libmemclient: socket I/O and the queue of requests in flight.
 *
 * Frames are appended to a send buffer and sent in bulk; replies are read into a receive
 * buffer and decoded as soon as they are whole, into the slot of the request they answer.
 * Replies arrive in request order, so the next reply always belongs to slot reply_seq and
 * must carry its id. The socket is blocking for reads (one recv per wait, no poll) but
 * sends never block: when the daemon stops reading (backpressure), we read its replies
 * meanwhile, so a client that pipelines a lot can never deadlock against it.
 * Every function here runs with c->mu held. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "memclient_internal.h"
#include "wire.h"

memclient_slot *memclient_slot_at(memclient *c, uint64_t seq)
{
    return &c->slots[seq & (c->slots_cap - 1)];
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 4096;
    while (n < need)
        n *= 2;
    uint8_t *p = realloc(*buf, n);
    if (!p)
        return -ENOMEM;
    *buf = p;
    *cap = n;
    return 0;
}

static int slots_reserve(memclient *c)
{
    if (c->tail - c->head < c->slots_cap)
        return 0;
    size_t ncap = c->slots_cap * 2;
    memclient_slot *ns = malloc(ncap * sizeof(*ns));
    if (!ns)
        return -ENOMEM;
    for (uint64_t s = c->head; s != c->tail; s++)
        ns[s & (ncap - 1)] = *memclient_slot_at(c, s);
    free(c->slots);
    c->slots = ns;
    c->slots_cap = ncap;
    return 0;
}

int memclient_kill(memclient *c, int err, const char *what)
{
    if (c->dead)
        return c->dead;
    c->dead = err;
    for (uint64_t s = c->reply_seq; s != c->tail; s++) {
        memclient_slot *sl = memclient_slot_at(c, s);
        sl->status = err;
        sl->cut = true;
        memclient_error_set(&sl->err, err, "connection to %s lost: %s", c->info.socket_path,
                            what ? what : memclient_strerror(err));
        sl->done = true;
    }
    c->reply_seq = c->tail;
    c->tx_off = c->tx_len = 0;
    /* The daemon closes the connection after a protocol error; so do we, at once, so it
     * releases the session's memory without waiting for memclient_disconnect(). */
    shutdown(c->fd, SHUT_RDWR);
    return err;
}

uint8_t *memclient_begin(memclient *c, uint16_t op, uint32_t payload_len,
                         memclient_out_kind out_kind, void *out, size_t n, bool waited,
                         uint64_t *seq, int *err)
{
    if (op != MEMD_OP_HELLO && payload_len > c->info.max_frame) {
        *err = -EMSGSIZE;
        return NULL;
    }
    /* A memd from before the later opcodes would drop the connection on one. */
    if (op > MEMD_OP_ALLOC_BATCH_BANKS && !(c->welcome_flags & MEMD_WELCOME_F_OPS_2)) {
        *err = -EOPNOTSUPP;
        return NULL;
    }
    if (slots_reserve(c) < 0) {
        *err = -ENOMEM;
        return NULL;
    }
    if (c->tx_off == c->tx_len)
        c->tx_off = c->tx_len = 0;
    if (grow(&c->tx, &c->tx_cap, c->tx_len + MEMD_HDR_SIZE + (size_t)payload_len) < 0) {
        *err = -ENOMEM;
        return NULL;
    }
    uint64_t id = c->next_id++;
    c->last_frame = c->tx_len;
    memd_wire_hdr h = {
        .magic = MEMD_PROTO_MAGIC,
        .version = c->info.protocol_version ? c->info.protocol_version : MEMD_PROTO_VERSION,
        .opcode = op,
        .id = id,
        .len = payload_len,
        .status = 0,
    };
    uint8_t *payload = memd_wire_hdr_put(c->tx + c->tx_len, &h);
    c->tx_len += MEMD_HDR_SIZE + payload_len;

    memclient_slot *s = memclient_slot_at(c, c->tail);
    s->id = id;
    s->op = op;
    s->out_kind = (uint8_t)out_kind;
    s->done = false;
    s->waited = waited;
    s->consumed = false;
    s->cut = false;
    s->status = 0;
    s->result = 0;
    s->n = n;
    s->out = out;
    s->reqs = NULL;
    s->err.status = 0;
    s->frame = NULL;
    s->frame_len = 0;
    s->hold_ms = 0;
    *seq = c->tail++;
    return payload;
}

int memclient_resend(memclient *c, const uint8_t *frame, size_t len, const memclient_slot *old,
                     uint64_t *seq)
{
    memclient_slot tmpl = *old; /* old may live in the ring that slots_reserve moves */
    if (slots_reserve(c) < 0)
        return -ENOMEM;
    if (c->tx_off == c->tx_len)
        c->tx_off = c->tx_len = 0;
    if (grow(&c->tx, &c->tx_cap, c->tx_len + len) < 0)
        return -ENOMEM;
    memcpy(c->tx + c->tx_len, frame, len);
    memd_wire_put_u32(c->tx + c->tx_len + 20, MEMD_REQ_F_RETRY); /* the header's status */
    c->last_frame = c->tx_len;
    c->tx_len += len;
    memclient_slot *s = memclient_slot_at(c, c->tail);
    *s = tmpl;
    s->done = s->consumed = s->cut = false;
    s->status = s->result = 0;
    s->err.status = 0;
    *seq = c->tail++;
    return 0;
}

void memclient_unbegin(memclient *c, uint64_t seq)
{
    if (seq + 1 != c->tail) /* not the last frame: a caller bug, leave it to fail visibly */
        return;
    c->tail--;
    c->next_id--;
    c->tx_len = c->last_frame;
}

/* Reads what the socket has into the receive buffer. block: wait for at least one byte.
 * Returns bytes read (0 only when !block and nothing was there) or a negative errno. */
static int recv_some(memclient *c, bool block)
{
    if (c->rx_off == c->rx_len) {
        c->rx_off = c->rx_len = 0;
        /* Give back what a large dump made the buffer grow to. */
        if (c->rx_cap > MEMCLIENT_RX_KEEP) {
            free(c->rx);
            c->rx = NULL;
            c->rx_cap = 0;
        }
    } else if (c->rx_off > 0 && c->rx_cap - c->rx_len < MEMCLIENT_RX_CHUNK) {
        memmove(c->rx, c->rx + c->rx_off, c->rx_len - c->rx_off);
        c->rx_len -= c->rx_off;
        c->rx_off = 0;
    }
    if (c->rx_cap - c->rx_len < MEMCLIENT_RX_CHUNK &&
        grow(&c->rx, &c->rx_cap, c->rx_len + MEMCLIENT_RX_CHUNK) < 0)
        return -ENOMEM;
    for (;;) {
        ssize_t n = recv(c->fd, c->rx + c->rx_len, c->rx_cap - c->rx_len, block ? 0 : MSG_DONTWAIT);
        if (n > 0) {
            c->rx_len += (size_t)n;
            return (int)n;
        }
        if (n == 0)
            return -ECONNRESET;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return -errno;
    }
}

/* One whole reply for the oldest request in flight. */
static void handle_reply(memclient *c, const memd_wire_hdr *h, const uint8_t *p)
{
    char what[256];
    if (h->id == 0 && h->status < 0) {
        /* The daemon found one of our frames malformed and closes the connection. */
        memd_wire_error e;
        if (memd_wire_error_get_any(p, h->len, &e) == 0)
            snprintf(what, sizeof(what), "daemon rejected a frame: %s", e.message);
        else
            snprintf(what, sizeof(what), "daemon rejected a frame: %s",
                     memclient_strerror(h->status));
        memclient_kill(c, h->status, what);
        return;
    }
    if (c->reply_seq == c->tail) {
        snprintf(what, sizeof(what), "reply with id %" PRIu64 " but no request in flight", h->id);
        memclient_kill(c, -EPROTO, what);
        return;
    }
    memclient_slot *s = memclient_slot_at(c, c->reply_seq);
    if (h->id != s->id || h->status > 0 || (h->status == 0 && h->opcode != s->op)) {
        snprintf(what, sizeof(what), "reply id %" PRIu64 " opcode %u status %d, expected id %" PRIu64
                 " opcode %u", h->id, h->opcode, h->status, s->id, s->op);
        memclient_kill(c, -EPROTO, what);
        return;
    }
    if (h->status < 0) {
        memd_wire_error e;
        memclient_error *d = &s->err;
        /* 248 bytes from a daemon before post-mortems: postmortem reads as 0 */
        if (memd_wire_error_get_any(p, h->len, &e) == 0) {
            memset(d, 0, sizeof(*d));
            memclient_error_from_wire(d, &e);
            d->status = h->status;
            snprintf(d->message, sizeof(d->message), "%s", e.message[0] ? e.message
                     : memclient_strerror(h->status));
        } else {
            memclient_error_set(d, h->status, "%s (%s request)", memclient_strerror(h->status),
                                memd_wire_opcode_name(s->op));
        }
        s->status = h->status;
        s->done = true;
        c->reply_seq++;
        /* Nobody waits for a pool report's result: keep a refusal for memclient_pool_flush. */
        if (s->op == MEMD_OP_POOL_REPORT) {
            if (c->report_err.status == 0)
                c->report_err = s->err;
            /* memd applied none of it: its books lack what the process did since. The
             * first refusal is answered by a resync at once; a refused resync waits twice
             * as long each time (the same state would be refused again). */
            c->reports_refused = true;
            c->refused_marked = false;
            uint64_t wait_ms = c->refusals == 0 ? 0 : (uint64_t)MEMCLIENT_POOL_REPORT_MS << (c->refusals < 16 ? c->refusals : 16);
            if (wait_ms > MEMCLIENT_POOL_RESYNC_MAX_MS)
                wait_ms = MEMCLIENT_POOL_RESYNC_MAX_MS;
            c->refusals++;
            c->resync_at_ns = memclient_now_ns() + wait_ms * 1000000u;
            atomic_store_explicit(&c->refused_errno, (unsigned)-h->status, memory_order_relaxed);
            atomic_store_explicit(&c->pools_dirty, 1, memory_order_relaxed);
        }
        return;
    }
    int r = memclient_decode(c, s, p, h->len);
    if (r < 0) {
        if (r == -EPROTONOSUPPORT)
            snprintf(what, sizeof(what), "the daemon chose protocol version %u, this library "
                     "speaks 1..%u", memd_wire_u16(p), MEMD_PROTO_VERSION);
        else
            snprintf(what, sizeof(what), "malformed %s reply (%s)", memd_wire_opcode_name(s->op),
                     memclient_strerror(r));
        memclient_kill(c, r, what); /* fails s too: it is still pending */
        return;
    }
    s->status = 0;
    s->done = true;
    c->reply_seq++;
    if (s->op == MEMD_OP_POOL_REPORT && !c->reports_refused) { /* memd's books caught up */
        c->refusals = 0;
        atomic_store_explicit(&c->refused_errno, 0, memory_order_relaxed);
    }
}

/* Decodes every whole frame in the receive buffer. */
static void dispatch(memclient *c)
{
    while (!c->dead) {
        size_t avail = c->rx_len - c->rx_off;
        if (avail < MEMD_HDR_SIZE)
            return;
        memd_wire_hdr h;
        int r = memd_wire_hdr_get(c->rx + c->rx_off, avail, MEMD_MAX_REPLY, &h);
        if (r < 0) {
            memclient_kill(c, r == -EMSGSIZE ? -EMSGSIZE : -EPROTO,
                           r == -EMSGSIZE ? "reply larger than MEMD_MAX_REPLY"
                                          : "malformed reply header");
            return;
        }
        size_t frame = MEMD_HDR_SIZE + (size_t)h.len;
        if (avail < frame) {
            /* Make room for the whole frame so the next recv can complete it. */
            if (c->rx_off > 0) {
                memmove(c->rx, c->rx + c->rx_off, avail);
                c->rx_len = avail;
                c->rx_off = 0;
            }
            if (grow(&c->rx, &c->rx_cap, frame) < 0)
                memclient_kill(c, -ENOMEM, "no memory for a reply");
            return;
        }
        const uint8_t *payload = c->rx + c->rx_off + MEMD_HDR_SIZE;
        c->rx_off += frame;
        if (h.opcode == MEMD_OP_REVOKED && h.id == 0 && h.status == 0) {
            /* A notice before a reply (we asked for them in HELLO): not a reply. */
            if ((r = memclient_revoke_notices(c, payload, h.len)) < 0)
                memclient_kill(c, r, "malformed REVOKED notice");
            continue;
        }
        handle_reply(c, &h, payload);
    }
}

static int timed_out(memclient *c, long ms, const char *what)
{
    char why[160];
    snprintf(why, sizeof why, "memd did not answer within %ld ms (%s); the connection is "
             "closed, connect again", ms, what);
    return memclient_kill(c, -ETIMEDOUT, why);
}

static int fail_io(memclient *c, int r)
{
    return memclient_kill(c, r, r == -ECONNRESET ? "the daemon closed the connection" : NULL);
}

int memclient_send(memclient *c, bool force)
{
    if (c->dead)
        return c->dead;
    if (!force && c->tx_len - c->tx_off < MEMCLIENT_TX_FLUSH_AT)
        return 0;
    while (c->tx_off < c->tx_len) {
        ssize_t n = send(c->fd, c->tx + c->tx_off, c->tx_len - c->tx_off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            c->tx_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
            return fail_io(c, -errno);
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT | POLLIN};
        int n_ready = poll(&pfd, 1, c->timeout_ms > 0 ? c->timeout_ms : -1);
        if (n_ready < 0) {
            if (errno == EINTR)
                continue;
            return fail_io(c, -errno);
        }
        if (n_ready == 0)
            return timed_out(c, c->timeout_ms, "to take a request");
        if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
            int r = recv_some(c, false);
            if (r < 0)
                return fail_io(c, r);
            dispatch(c);
            if (c->dead)
                return c->dead;
        }
    }
    c->tx_off = c->tx_len = 0;
    return 0;
}

int memclient_wait(memclient *c, uint64_t seq)
{
    memclient_slot *s = memclient_slot_at(c, seq);
    long limit = c->timeout_ms > 0 && s->hold_ms >= 0 ? (long)c->timeout_ms + s->hold_ms : -1;
    long deadline = limit >= 0 ? memclient_now_ms() + limit : -1;
    if (!s->done)
        memclient_send(c, true);
    while (!s->done && !c->dead) {
        if (deadline >= 0) {
            long left = deadline - memclient_now_ms();
            struct pollfd pfd = {.fd = c->fd, .events = POLLIN};
            int n = left > 0 ? poll(&pfd, 1, (int)(left < INT_MAX ? left : INT_MAX)) : 0;
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 0) {
                timed_out(c, limit, memd_wire_opcode_name(s->op));
                break;
            }
        }
        int r = recv_some(c, true);
        if (r < 0) {
            fail_io(c, r);
            break;
        }
        dispatch(c);
    }
    return s->status;
}

void memclient_consume(memclient *c, uint64_t seq)
{
    memclient_slot *s = memclient_slot_at(c, seq);
    s->consumed = true;
    free(s->frame);
    s->frame = NULL;
    while (c->head != c->reply_seq && memclient_slot_at(c, c->head)->consumed)
        c->head++;
}
