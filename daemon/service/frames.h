/* memd daemon — a session's input bytes -> frames -> dispatch, one round per read. */
#ifndef MEMD_DAEMON_FRAMES_H
#define MEMD_DAEMON_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "state.h"

/* Processes every complete frame in in[0, len): stops at a partial frame, after a frame
 * that closes the connection, or once out holds more than out_high unsent bytes
 * (backpressure: the rest waits until the client reads). *consumed is the number of
 * bytes of whole frames handled. Returns as a handler (reply.h). */
int memd_frames_process(memd_state *st, memd_session *s, const uint8_t *in, size_t len,
                        memd_buf *out, size_t out_high, size_t *consumed);

/* The connection ended (EOF) with len > 0 bytes of an unfinished frame in in: queues an
 * error reply saying so. */
void memd_frames_truncated(memd_state *st, const uint8_t *in, size_t len, memd_buf *out);

#endif
