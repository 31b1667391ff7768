/* memd — the one error type below the wire: what went wrong, and where.
 *
 * Every layer fills one of these: descriptor and config loading (with the file and, for
 * YAML, line and column), the daemon's start-up, the state store, and every request
 * (code, detail and, for out-of-memory and quota refusals, the figures). The request
 * handlers convert it to the wire's memd_wire_error once, when they queue the reply. */
#ifndef MEMD_ENGINE_ERROR_H
#define MEMD_ENGINE_ERROR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "memd/types.h"

/* An out-of-memory or quota refusal's figures (detail NOMEM or QUOTA; an allocation's
 * other refusals fill requested, device and cls). */
typedef struct memd_error_room {
    uint64_t requested;     /* bytes the client asked for */
    uint64_t size_per_bank; /* what lockstep sizing made of it */
    uint64_t allocated;     /* region state at the time of failure */
    uint64_t free;
    uint64_t largest_free;
    uint32_t device;
    uint8_t cls;
    uint8_t kind;
    uint8_t region;
    uint64_t postmortem;    /* the post-mortem an out-of-memory saved (daemon), 0: none */
} memd_error_room;

typedef struct memd_error {
    int code;              /* 0 or a negative errno */
    uint32_t detail;       /* MEMD_ERR_DETAIL_* (memd/types.h) */
    memd_error_room room;
    unsigned line;         /* 1-based; 0 if unknown */
    unsigned column;       /* 1-based; 0 if unknown */
    char file[512];        /* "" when no file is involved */
    char msg[512];
} memd_error;

/* Bytes of a request error's message as a client gets it (memd_wire_error.message,
 * NUL included): longer messages are cut there. */
#define MEMD_ERROR_REPLY_MSG 192

/* Clears code, detail, figures, position and text (only the first byte of file and
 * msg: a request's path must not clear a kilobyte it will not read). `= {0}` does the
 * same where the cost does not matter. */
void memd_error_reset(memd_error *e);

/* Sets code and the message (printf style) and returns code, so a caller can write
 * `return memd_error_set(err, -EINVAL, "...")`; file, position, detail and figures are
 * left as they are. */
int memd_error_set(memd_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for a wrapper that adds its own context (a parser's file and position). */
int memd_error_vset(memd_error *e, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* Sets the file ("" for NULL) and the 1-based position (0: unknown) and returns e, so a
 * parser can write `return memd_error_set(memd_error_at(err, name, line, col), ...)`. */
memd_error *memd_error_at(memd_error *e, const char *file, unsigned line, unsigned column);

/* "file:line:col: msg", "file: msg", or "msg" alone when there is no file. */
void memd_error_format(const memd_error *e, char *buf, size_t len);

#endif
