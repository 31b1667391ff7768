/* memd daemon — memd's own out-of-memory, told apart from a full device (issue 27): a
 * client reads -ENOMEM with "memd itself is out of memory" and no region figures, and
 * the operator finds a log line naming where it happened. */
#ifndef MEMD_DAEMON_OOM_H
#define MEMD_DAEMON_OOM_H

#include "error.h"

/* Sets err (-ENOMEM, detail NONE, the message), logs it, returns -ENOMEM. */
int memd_self_oom_at(memd_error *err, const char *where);
#define memd_self_oom(err) memd_self_oom_at((err), __func__)

#endif
