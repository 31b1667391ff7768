/* memd daemon — a session's input bytes -> frames -> dispatch. */
#ifndef MEMD_DAEMON_FRAMES_H
#define MEMD_DAEMON_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "state.h"

/* Dispatches every complete frame in in[0, len) without committing the state store:
 * stops at a partial frame, after a frame that closes the connection or waits for a
 * planning job, or once out holds more than out_high unsent bytes (backpressure: the
 * rest waits until the client reads). *consumed is the number of bytes of whole frames
 * handled. If *changed_at is SIZE_MAX and a frame changes state, it becomes out's length
 * before that frame's reply: no reply from there on may leave before the store has
 * committed (memd_store_commit). Sets st->reply_room for each frame; a frame whose
 * handler returns MEMD_DEFER is left unconsumed. Returns as a handler (reply.h). */
int memd_frames_dispatch(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                         memd_buf *out, size_t out_high, size_t *consumed,
                         size_t *changed_at);

/* The state store could not commit: every reply in out from offset from on becomes an
 * -EIO error for the same request. Returns MEMD_CLOSE (the session must go, which
 * releases its memory), or -ENOMEM. */
int memd_frames_store_failed(memd_buf *out, size_t from, const char *why);

/* One session on its own, as a single round (unit tests, fuzzers; the daemon commits
 * once per loop pass instead, server.h): dispatch, commit, and on a failed commit
 * memd_frames_store_failed. Returns as memd_frames_dispatch. */
int memd_frames_process(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                        memd_buf *out, size_t out_high, size_t *consumed);

/* The connection ended (EOF) with len > 0 bytes of an unfinished frame in in: queues an
 * error reply saying so. */
void memd_frames_truncated(memd_state *st, const memd_session *s, const uint8_t *in,
                           size_t len, memd_buf *out);

#endif
