/* memd daemon — wire error messages (see errmsg.h). */
#include "errmsg.h"

#include <stdarg.h>
#include <stdio.h>

int memd_err_set(memd_wire_error *err, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    /* Messages longer than the field are cut; the field always ends with a NUL. */
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->status = status;
    return status;
}
