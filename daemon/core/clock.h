/* memd daemon — wall-clock time for records and views. */
#ifndef MEMD_DAEMON_CLOCK_H
#define MEMD_DAEMON_CLOCK_H

#include <stdint.h>

uint64_t memd_now_ns(void); /* CLOCK_REALTIME */
uint64_t memd_mono_ms(void); /* CLOCK_MONOTONIC, for deadlines */

#endif
