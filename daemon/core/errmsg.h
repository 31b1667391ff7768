/* memd daemon — filling the wire error record that every failed request gets. */
#ifndef MEMD_DAEMON_ERRMSG_H
#define MEMD_DAEMON_ERRMSG_H

#include "memd/protocol.h"

/* Sets err->status and err->message (printf style) and returns status, so callers can
 * `return memd_err_set(err, -EINVAL, "...")`. Other fields are left as they are. */
int memd_err_set(memd_wire_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
