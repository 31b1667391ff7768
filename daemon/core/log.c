/* memd daemon — logging (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static bool use_syslog; /* set once at startup, before the loop runs */
static int max_prio = LOG_INFO; /* set at startup and on reload, from the loop */

void memd_log_set_level(int prio)
{
    max_prio = prio;
}

bool memd_log_enabled(int prio)
{
    return prio <= max_prio;
}

void memd_log_to_syslog(bool on)
{
    use_syslog = on;
    if (on)
        openlog("memd", LOG_PID, LOG_DAEMON);
}

void memd_log(int prio, const char *fmt, ...)
{
    if (prio > max_prio)
        return;
    va_list ap;
    va_start(ap, fmt);
    if (use_syslog) {
        vsyslog(prio, fmt, ap);
    } else {
        /* journald parses "<N>" at the start of a line as the priority. */
        if (getenv("JOURNAL_STREAM"))
            fprintf(stderr, "<%d>", prio);
        else
            fputs("memd: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
}
