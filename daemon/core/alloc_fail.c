/* memd daemon — refused allocations counted per device and reason (alloc.h). */
#include <errno.h>

#include "alloc.h"
#include "error.h"

static int reason(const memd_error *err)
{
    switch (err->code) {
    case -ENOMEM:
        return err->detail == MEMD_ERR_DETAIL_LIMIT   ? MEMD_FAIL_LIMIT
               : err->detail == MEMD_ERR_DETAIL_NOMEM ? MEMD_FAIL_NO_ROOM
                                                      : MEMD_FAIL_OTHER; /* the daemon's own */
    case -EDQUOT:
        return MEMD_FAIL_QUOTA;
    case -E2BIG:
    case -EOVERFLOW:
        return MEMD_FAIL_TOO_LARGE;
    default:
        return MEMD_FAIL_OTHER;
    }
}

void memd_alloc_failed(memd_state *st, uint32_t device, const memd_error *err)
{
    st->ctr.alloc_failures++;
    int i = memd_state_dev_index(st, device);
    if (i >= 0)
        st->devs[i].failures[reason(err)]++;
}
