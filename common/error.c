/* memd — errors (see error.h). */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>

void memd_error_reset(memd_error *e)
{
    e->code = 0;
    e->detail = MEMD_ERR_DETAIL_NONE;
    e->room = (memd_error_room){0};
    e->line = e->column = 0;
    e->file[0] = e->msg[0] = '\0';
}

int memd_error_vset(memd_error *e, int code, const char *fmt, va_list ap)
{
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    e->code = code;
    return code;
}

int memd_error_set(memd_error *e, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    memd_error_vset(e, code, fmt, ap);
    va_end(ap);
    return code;
}

memd_error *memd_error_at(memd_error *e, const char *file, unsigned line, unsigned column)
{
    snprintf(e->file, sizeof e->file, "%s", file ? file : "");
    e->line = line;
    e->column = column;
    return e;
}

void memd_error_format(const memd_error *e, char *buf, size_t len)
{
    if (!buf || len == 0)
        return;
    if (e->line)
        snprintf(buf, len, "%s:%u:%u: %s", e->file, e->line, e->column, e->msg);
    else if (e->file[0])
        snprintf(buf, len, "%s: %s", e->file, e->msg);
    else
        snprintf(buf, len, "%s", e->msg);
}
