/* memd daemon — post-mortems in the state directory: STATE_DIR/postmortems/ID.pm, each a
 * POSTMORTEM get reply's payload, written after the pass's replies went out (write to a
 * temporary name, then rename: a reader never sees half of one), read back at start. */
#ifndef MEMD_DAEMON_POSTMORTEM_FILES_H
#define MEMD_DAEMON_POSTMORTEM_FILES_H

#include "state.h"

/* Makes STATE_DIR/postmortems (0750) and keeps the post-mortems found there (the newest
 * limits.postmortems, the files of older ones removed; unreadable files are logged and
 * left alone). When the folder
 * cannot be made or opened, logs why: post-mortems are then kept in memory only. */
void memd_pm_files_open(memd_state *st, const char *state_dir);
/* Encodes what was captured, writes what is not on disk yet and removes the files of
 * the ones dropped past the bound. Errors are logged; the snapshot stays in memory. */
void memd_pm_files_flush(memd_state *st);
/* Flushes, then forgets the folder. */
void memd_pm_files_close(memd_state *st);

#endif
