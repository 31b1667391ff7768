/* memd daemon — growable byte buffer for per-session input and output.
 * Buffers only grow (then are reused), so steady-state traffic does not call malloc. */
#ifndef MEMD_DAEMON_BUF_H
#define MEMD_DAEMON_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct memd_buf {
    uint8_t *data;
    size_t len; /* bytes in use: data[0, len) */
    size_t off; /* output buffers: bytes already written, data[off, len) still to go */
    size_t cap;
} memd_buf;

/* Makes room for `more` bytes after len. 0 or -ENOMEM (the buffer is unchanged). */
int memd_buf_reserve(memd_buf *b, size_t more);
/* Reserves n bytes at the end and returns them (len grows), or NULL on -ENOMEM. */
uint8_t *memd_buf_append(memd_buf *b, size_t n);
/* Drops data[0, n): moves the remainder to the front (input buffers). */
void memd_buf_consume(memd_buf *b, size_t n);
void memd_buf_free(memd_buf *b);
/* Appends data[0, len) (malloc'd, cap bytes allocated) and takes it: with nothing
 * pending, b takes the memory itself (O(1), no copy); else it is copied and freed.
 * The bytes are lost only when the copy finds no memory: -ENOMEM. */
int memd_buf_adopt(memd_buf *b, uint8_t *data, size_t len, size_t cap);
/* Gives the memory back when the buffer is empty and has grown past keep bytes (one
 * large DUMP reply or batch must not pin megabytes to a long-lived session). */
void memd_buf_trim(memd_buf *b, size_t keep);

static inline size_t memd_buf_pending(const memd_buf *b)
{
    return b->len - b->off;
}

#endif
