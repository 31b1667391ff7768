/* memd daemon — applying a re-read config (SIGHUP) to the running state. */
#ifndef MEMD_DAEMON_RELOAD_H
#define MEMD_DAEMON_RELOAD_H

#include "state.h"

/* Takes cfg's limits (all but max_frame, which clients learned in HELLO) and admin
 * group. The device map cannot change under live allocations: if cfg's devices differ
 * from the running ones, returns -EBUSY with what changed in err and changes nothing;
 * likewise on an unknown admin group (-ENOENT) or no memory (-ENOMEM). */
int memd_state_reload(memd_state *st, const memd_config *cfg, memd_error *err);

#endif
