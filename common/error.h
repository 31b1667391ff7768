/* memd — the one error type below the wire: what went wrong, and where.
 *
 * Every layer that reports an error to a person (descriptor and config loading, the
 * daemon's start-up, the state store) fills one of these, with the file and, for YAML,
 * line and column. Requests are answered with the wire's memd_wire_error instead: that
 * is the reply a client decodes, not an internal error. */
#ifndef MEMD_ENGINE_ERROR_H
#define MEMD_ENGINE_ERROR_H

#include <stddef.h>

typedef struct memd_error {
    char file[512];  /* "" when no file is involved */
    unsigned line;   /* 1-based; 0 if unknown */
    unsigned column; /* 1-based; 0 if unknown */
    char msg[512];
} memd_error;

/* Sets the message (printf style) and returns rc, so a caller can write
 * `return memd_error_set(err, -EINVAL, "...")`; file and position are left as they are. */
int memd_error_set(memd_error *e, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "file:line:col: msg", "file: msg", or "msg" alone when there is no file. */
void memd_error_format(const memd_error *e, char *buf, size_t len);

#endif
