/* memd daemon — wall-clock time for records and views. */
#ifndef MEMD_DAEMON_CLOCK_H
#define MEMD_DAEMON_CLOCK_H

#include <stdint.h>

uint64_t memd_now_ns(void); /* CLOCK_REALTIME */

#endif
