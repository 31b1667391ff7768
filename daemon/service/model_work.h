/* memd daemon — runs planning jobs on libuv's thread pool (see model.h). */
#ifndef MEMD_DAEMON_MODEL_WORK_H
#define MEMD_DAEMON_MODEL_WORK_H

#include "server.h"

/* Installs the runner for srv's loop. 0 or -ENOMEM. */
int memd_model_work_attach(memd_server *srv);
/* After the loop ended (every job completed): planning runs inline again. */
void memd_model_work_detach(memd_server *srv);

#endif
