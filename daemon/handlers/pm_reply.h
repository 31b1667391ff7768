/* memd daemon — post-mortems on the wire: the encoding core keeps and the state
 * directory holds (a POSTMORTEM get reply's payload), and the POSTMORTEM request. */
#ifndef MEMD_DAEMON_PM_REPLY_H
#define MEMD_DAEMON_PM_REPLY_H

#include "state.h"

/* Encodes the snapshots core captured since the last call (with the recorder's events
 * before each, as its session may see them) and hands them to core to keep. */
void memd_pm_settle(memd_state *st);

#endif
