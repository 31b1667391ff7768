/* memd daemon — one client connection: reads in large chunks, dispatches every complete
 * frame per read, gathers the replies in one buffer; at the end of the loop pass, after
 * the store's commit (server.h), writes them with one call (uv_try_write first, a queued
 * uv_write only for what the socket did not take). Backpressure: a client whose unsent
 * replies pass the high-water mark is not read (nor are its buffered frames dispatched)
 * until they drain below half of it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "dispatch.h"
#include "event.h"
#include "frames.h"
#include "error.h"
#include "log.h"
#include "model.h"
#include "reply.h"
#include "server.h"
#include "creds.h"
#include "session.h"
#include "store.h"
#include "wire.h"

#define READ_CHUNK (64u * 1024u)
#define KEEP_BUF (1u << 20) /* buffers larger than this are freed once empty */

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);

static size_t backlog(const memd_conn *c)
{
    return memd_buf_pending(&c->out) + memd_buf_pending(&c->wbuf);
}

static void on_closed(uv_handle_t *h)
{
    memd_conn *c = h->data;
    memd_buf_free(&c->in);
    memd_buf_free(&c->out);
    memd_buf_free(&c->wbuf);
    free(c);
}

/* Replies to write (or a close to finish) at the end of this pass, after the commit. */
static void queue(memd_conn *c)
{
    if (c->queued || c->closing)
        return;
    c->queued = true;
    c->queue_next = c->srv->queue;
    c->srv->queue = c;
}

static bool unlink_from(memd_conn **p, memd_conn *c)
{
    for (; *p; p = &(*p)->queue_next) {
        if (*p == c) {
            *p = c->queue_next;
            return true;
        }
    }
    return false;
}

static void unqueue(memd_conn *c)
{
    if (c->queued && !unlink_from(&c->srv->queue, c))
        (void)unlink_from(&c->srv->sending, c);
    c->queued = false;
}

void memd_conn_close(memd_conn *c)
{
    if (c->closing)
        return;
    c->closing = true;
    memd_server *srv = c->srv;
    unqueue(c);
    /* Everything the session owned goes back now, whatever ended the connection. */
    if (c->has_session) {
        memd_session_close(srv->st, &c->sess);
        c->has_session = false;
    }
    if (c->prev)
        c->prev->next = c->next;
    else
        srv->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    srv->nconns--;
    uv_close((uv_handle_t *)&c->pipe, on_closed);
    if (srv->stopping && !srv->conns && !uv_is_closing((uv_handle_t *)&srv->drain))
        uv_close((uv_handle_t *)&srv->drain, NULL);
}

static void set_reading(memd_conn *c, bool on)
{
    if (on == c->reading || c->closing)
        return;
    if (on) {
        if (uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) < 0)
            return;
    } else {
        uv_read_stop((uv_stream_t *)&c->pipe);
    }
    c->reading = on;
}

/* Room for the next read: at least one chunk, or the whole frame whose header is
 * already in (the frame size limit bounds that). */
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    (void)suggested;
    memd_conn *c = h->data;
    size_t want = READ_CHUNK;
    if (c->in.len >= MEMD_HDR_SIZE) {
        size_t frame = MEMD_HDR_SIZE + (size_t)memd_wire_u32(c->in.data + 16);
        if (frame <= MEMD_HDR_SIZE + (size_t)c->srv->st->limits.max_frame && frame > c->in.len &&
            frame - c->in.len > want)
            want = frame - c->in.len;
    }
    if (memd_buf_reserve(&c->in, want) < 0) {
        *buf = uv_buf_init(NULL, 0); /* libuv reports UV_ENOBUFS to on_read */
        return;
    }
    *buf = uv_buf_init((char *)c->in.data + c->in.len, (unsigned)(c->in.cap - c->in.len));
}

/* Dispatches what is buffered, as far as backpressure allows (all of it when the
 * client has stopped sending or the daemon is stopping: the input is bounded then). The
 * replies wait in out for the end of the pass. */
static void process(memd_conn *c, bool all)
{
    if (c->closing || c->close_after_flush || !c->has_session)
        return;
    memd_server *srv = c->srv;
    size_t wb = memd_buf_pending(&c->wbuf);
    size_t high = srv->out_high > wb ? srv->out_high - wb : 0;
    size_t used = 0;
    int rc = memd_frames_dispatch(srv->st, &c->sess, c->in.data, c->in.len, &c->out,
                                  all || srv->stopping ? SIZE_MAX : high, &used,
                                  &c->changed_at);
    memd_buf_consume(&c->in, used);
    memd_buf_trim(&c->in, KEEP_BUF);
    if (rc < 0) {
        memd_log(LOG_ERR, "session %u: out of memory building a reply; closing it",
                 c->sess.id);
        memd_conn_close(c);
        return;
    }
    if (rc == MEMD_CLOSE) {
        c->close_after_flush = true;
        set_reading(c, false);
    }
    /* A reply that does not fit the backlog waits for it to drain, and so does the
     * input behind it: its buffer must not grow meanwhile. */
    c->held = rc == MEMD_DEFER;
    if (c->held)
        set_reading(c, false);
    if (used > 0) {
        c->greeted = true;
        queue(c);
    }
}

/* The session waits for a planning job or an event: its later frames wait too. */
static bool waiting(const memd_conn *c)
{
    return memd_models_busy(c->srv->st, &c->sess) || c->sess.ewait.parked;
}

static void update_reading(memd_conn *c)
{
    if (c->closing)
        return;
    /* A session waiting for a planning job is not read either: its input would pile up
     * unprocessed. */
    if (c->close_after_flush || c->srv->stopping || c->deferred || c->held ||
        waiting(c))
        set_reading(c, false);
    else if (backlog(c) > c->srv->out_high)
        set_reading(c, false);
    else if (backlog(c) <= c->srv->out_high / 2)
        set_reading(c, true);
}

static void on_written(uv_write_t *req, int status)
{
    memd_conn *c = req->data;
    c->writing = false;
    if (c->closing)
        return; /* cancelled by uv_close; on_closed frees the buffers */
    if (status < 0) {
        memd_conn_close(c); /* the peer went away */
        return;
    }
    c->srv->st->ctr.bytes_out += memd_buf_pending(&c->wbuf);
    c->wbuf.len = c->wbuf.off = 0;
    memd_buf_trim(&c->wbuf, KEEP_BUF);
    process(c, false); /* frames held back by backpressure get their turn now */
    queue(c);          /* and what gathered meanwhile goes out */
}

/* Writes out (everything the commit before it covers), then closes a connection that
 * was to close once its replies were gone. */
static void flush(memd_conn *c)
{
    if (!c->writing && memd_buf_pending(&c->out) > 0) {
        uv_buf_t b = uv_buf_init((char *)c->out.data + c->out.off,
                                 (unsigned)memd_buf_pending(&c->out));
        int n = uv_try_write((uv_stream_t *)&c->pipe, &b, 1);
        if (n == UV_EAGAIN)
            n = 0;
        if (n < 0) {
            memd_conn_close(c);
            return;
        }
        c->out.off += (size_t)n;
        c->srv->st->ctr.bytes_out += (uint64_t)n;
        if (memd_buf_pending(&c->out) == 0) {
            c->out.len = c->out.off = 0;
            memd_buf_trim(&c->out, KEEP_BUF);
        } else {
            /* Hand the rest to a queued write and keep gathering in the other buffer. */
            memd_buf t = c->wbuf;
            c->wbuf = c->out;
            c->out = t;
            c->out.len = c->out.off = 0;
            b = uv_buf_init((char *)c->wbuf.data + c->wbuf.off,
                            (unsigned)memd_buf_pending(&c->wbuf));
            c->wreq.data = c;
            if (uv_write(&c->wreq, (uv_stream_t *)&c->pipe, &b, 1, on_written) < 0) {
                memd_conn_close(c);
                return;
            }
            c->writing = true;
        }
    }
    if (c->close_after_flush && backlog(c) == 0) {
        memd_conn_close(c);
        return;
    }
    update_reading(c);
}

/* The commit failed and c's frames changed state in this pass: its replies from the
 * first such frame on become -EIO errors, its session goes now (releasing its memory)
 * and the connection closes once they are written. */
static void store_failed(memd_conn *c, const char *why)
{
    if (memd_frames_store_failed(&c->out, c->changed_at, why) < 0) {
        memd_log(LOG_ERR, "session %u: out of memory building a reply; closing it",
                 c->sess.id);
        memd_conn_close(c);
        return;
    }
    memd_session_close(c->srv->st, &c->sess);
    c->has_session = false;
    c->close_after_flush = true;
    set_reading(c, false);
}

/* Parked requests: EVENTS waiting for an event, MODEL_WAIT for its model. */
static bool parked_any(memd_state *st)
{
    return st->events_parked || memd_models_waiting(st);
}

static bool answer_parked(memd_state *st, memd_session *s, uint64_t now_ms, memd_buf *out)
{
    return (s->ewait.parked && memd_events_answer_parked(st, s, now_ms, out)) ||
           memd_model_wait_answer(st, s, now_ms, out);
}

void memd_conn_answer_events(memd_server *srv, uint64_t now_ms)
{
    memd_state *st = srv->st;
    if (!parked_any(st))
        return;
    srv->events_seen = memd_events_next_seq(st);
    /* Every change a MODEL_WAIT waits for (ready, a filler gone) is an event too. */
    for (memd_conn *c = srv->conns; c && parked_any(st); c = c->next)
        if (!c->closing && answer_parked(st, &c->sess, now_ms, &c->out))
            memd_conn_resume(c); /* the reply, and the frames that waited behind it */
}

void memd_conn_pass_end(memd_server *srv)
{
    memd_error why;
    for (;;) {
        /* Events of this pass wake the sessions waiting for one. */
        if (parked_any(srv->st) && memd_events_next_seq(srv->st) != srv->events_seen)
            memd_conn_answer_events(srv, memd_mono_ms());
        /* Also records what closed since (sessions of connections that went). */
        bool failed = memd_store_commit(srv->st, &why) < 0;
        if (!srv->queue)
            return;
        srv->sending = srv->queue;
        srv->queue = NULL;
        while (srv->sending) {
            memd_conn *c = srv->sending;
            srv->sending = c->queue_next;
            c->queued = false;
            if (failed && c->changed_at != SIZE_MAX)
                store_failed(c, why.msg);
            c->changed_at = SIZE_MAX;
            if (c->closing)
                continue;
            flush(c);
            /* The socket took it all: frames held back by backpressure go on now, for
             * the next commit of this loop (a write that the socket takes at once must
             * not end the pass while frames wait). */
            if (!c->closing && !c->writing)
                process(c, false);
        }
    }
}

/* The client may have shut down only its sending side: answer what it sent, and say so
 * if it stopped in the middle of a frame. Frames held back behind a planning job are not
 * cut: the rest waits for memd_conn_resume. */
static void on_eof(memd_conn *c)
{
    process(c, true);
    if (c->closing)
        return;
    queue(c);
    set_reading(c, false);
    if (waiting(c)) {
        c->deferred = MEMD_CONN_DEFER_EOF;
        return;
    }
    if (!c->close_after_flush && c->in.len > 0)
        memd_frames_truncated(c->srv->st, &c->sess, c->in.data, c->in.len, &c->out);
    c->close_after_flush = true;
}

void memd_conn_resume(memd_conn *c)
{
    if (c->closing)
        return;
    uint8_t d = c->deferred;
    c->deferred = MEMD_CONN_DEFER_NONE;
    if (d == MEMD_CONN_DEFER_EOF) {
        on_eof(c);
    } else if (d == MEMD_CONN_DEFER_SHUTDOWN) {
        memd_conn_shutdown(c);
    } else {
        process(c, false);
        queue(c); /* the job's reply */
    }
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    memd_conn *c = s->data;
    if (c->closing)
        return;
    if (nread > 0) {
        c->in.len += (size_t)nread;
        c->srv->st->ctr.bytes_in += (uint64_t)nread;
        process(c, false);
        return;
    }
    if (nread == 0)
        return;
    if (nread == UV_EOF && !c->close_after_flush) {
        on_eof(c);
        return;
    }
    memd_conn_close(c); /* reset, ENOBUFS, or a read error */
}

static void reject(memd_conn *c, int status, const char *msg)
{
    memd_error err;
    memd_error_reset(&err);
    memd_error_set(&err, status, "%s", msg);
    if (memd_reply_error(&c->out, 0, 0, &err, false) < 0) {
        memd_conn_close(c);
        return;
    }
    c->close_after_flush = true;
    queue(c);
}

/* Sessions of this uid on open connections. */
static uint32_t uid_sessions(const memd_server *srv, uint32_t uid)
{
    uint32_t n = 0;
    for (const memd_conn *c = srv->conns; c; c = c->next)
        n += c->has_session && !c->closing && c->sess.uid == uid;
    return n;
}

/* Why this peer may not have a session now, in msg; 0 if it may. Admins (root, the
 * admin group) have the slots kept for them and no per-uid limit: one uid holding
 * every connection must not lock out the operator who would stop it. */
static int admission(const memd_server *srv, const memd_session *s, char *msg, size_t len)
{
    const memd_state *st = srv->st;
    const memd_limits *l = &st->limits;
    /* Orphans (store.h) do not count: their clients must be able to come back. */
    uint32_t connected = st->nsessions - memd_store_orphans(st);
    if (srv->nconns > srv->fd_budget) {
        snprintf(msg, len, "out of file descriptors: %u connections open, the descriptor "
                           "limit leaves room for %u (raise LimitNOFILE)",
                 srv->nconns - 1, srv->fd_budget);
        return -EMFILE;
    }
    if (l->max_sessions && connected >= l->max_sessions) {
        snprintf(msg, len, "too many sessions: %u connected (max_sessions)", connected);
        return -EUSERS;
    }
    if (s->admin)
        return 0;
    uint32_t kept = l->admin_sessions < l->max_sessions ? l->admin_sessions : l->max_sessions - 1;
    if (l->max_sessions && connected >= l->max_sessions - kept) {
        snprintf(msg, len, "too many sessions: %u connected, the last %u of max_sessions %u "
                           "are kept for the admin group (admin_sessions)",
                 connected, kept, l->max_sessions);
        return -EUSERS;
    }
    uint32_t mine = uid_sessions(srv, s->uid);
    if (l->max_sessions_per_uid && mine >= l->max_sessions_per_uid) {
        snprintf(msg, len, "too many sessions for uid %u: %u connected (max_sessions_per_uid)",
                 s->uid, mine);
        return -EUSERS;
    }
    return 0;
}

void memd_conn_accept(memd_server *srv)
{
    memd_conn *c = calloc(1, sizeof *c);
    if (!c) {
        memd_log(LOG_ERR, "out of memory accepting a connection");
        return;
    }
    c->srv = srv;
    c->changed_at = SIZE_MAX;
    uv_pipe_init(srv->loop, &c->pipe, 0);
    c->pipe.data = c;
    c->next = srv->conns;
    if (srv->conns)
        srv->conns->prev = c;
    srv->conns = c;
    srv->nconns++;
    if (uv_accept((uv_stream_t *)&srv->listener, (uv_stream_t *)&c->pipe) < 0) {
        memd_conn_close(c);
        return;
    }
    memd_state *st = srv->st;
    uv_os_fd_t fd;
    int rc = uv_fileno((uv_handle_t *)&c->pipe, &fd);
    if (rc == 0)
        rc = memd_session_creds(st, fd, &c->sess);
    if (rc < 0) {
        memd_log(LOG_WARNING, "cannot read peer credentials: %s", strerror(-rc));
        memd_conn_close(c);
        return;
    }
    char msg[200];
    rc = admission(srv, &c->sess, msg, sizeof msg);
    if (rc < 0) {
        memd_log(LOG_WARNING, "%s; refusing a connection of uid %u pid %u", msg, c->sess.uid,
                 c->sess.pid);
        reject(c, rc, msg);
        return;
    }
    memd_session_open(st, &c->sess);
    c->sess.connected_ns = memd_now_ns();
    c->accepted_ms = uv_now(srv->loop);
    c->has_session = true;
    set_reading(c, true);
}

void memd_conn_expire_silent(memd_server *srv)
{
    uint32_t ms = srv->st->limits.hello_timeout_ms;
    if (ms == 0)
        return;
    uint64_t now = uv_now(srv->loop);
    memd_conn *next;
    for (memd_conn *c = srv->conns; c; c = next) {
        next = c->next; /* reject may close c (out of memory) */
        if (c->greeted || !c->has_session || c->closing || c->close_after_flush ||
            now - c->accepted_ms < ms)
            continue;
        memd_log(LOG_WARNING, "session %u (uid %u pid %u): no request within %u ms "
                             "(hello_timeout_ms); closing it",
                 c->sess.id, c->sess.uid, c->sess.pid, ms);
        c->greeted = true; /* answered once */
        set_reading(c, false);
        char msg[96];
        snprintf(msg, sizeof msg, "no request within %u ms of connecting (hello_timeout_ms)", ms);
        reject(c, -ETIMEDOUT, msg);
    }
}

void memd_conn_shutdown(memd_conn *c)
{
    if (c->closing)
        return;
    if (answer_parked(c->srv->st, &c->sess, UINT64_MAX, &c->out))
        queue(c); /* a waiting EVENTS gets what there is now, a MODEL_WAIT its timeout */
    process(c, true); /* requests already received still get their replies */
    if (c->closing)
        return;
    queue(c);
    if (waiting(c)) {
        c->deferred = MEMD_CONN_DEFER_SHUTDOWN; /* the drain timer still bounds the wait */
        return;
    }
    c->close_after_flush = true;
}
