/* memd daemon — logging (see log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "text.h"

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
    /* Log lines carry names from clients and files (process names, allocation names,
     * YAML text): escaped, none can forge a second line or reach a terminal as an
     * escape sequence. */
    char raw[1024], line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    memd_text_escape(raw, line, sizeof line);
    if (use_syslog) {
        syslog(prio, "%s", line);
    } else {
        /* journald parses "<N>" at the start of a line as the priority. */
        if (getenv("JOURNAL_STREAM"))
            fprintf(stderr, "<%d>%s\n", prio, line);
        else
            fprintf(stderr, "memd: %s\n", line);
    }
}
