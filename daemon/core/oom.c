/* memd daemon — memd's own out-of-memory (see oom.h). */
#include "oom.h"

#include <errno.h>

#include "log.h"

int memd_self_oom_at(memd_error *err, const char *where)
{
    memd_log(LOG_ERR, "memd itself is out of memory (in %s)", where);
    err->detail = MEMD_ERR_DETAIL_NONE;
    return memd_error_set(err, -ENOMEM, "memd itself is out of memory (in %s)", where);
}
