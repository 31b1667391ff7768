/* memd daemon — high-water marks (issue 25): the most bytes in use, and when, per device
 * bank group and region, per session and bank group, per client pool, since the daemon
 * started or the last reset. Noted where those byte counts change, O(1); in memory only
 * (they restart with the daemon). */
#ifndef MEMD_DAEMON_PEAK_H
#define MEMD_DAEMON_PEAK_H

#include <stdint.h>

typedef struct memd_peak {
    uint64_t bytes;                /* the most the count has been */
    uint64_t at_ns;                /* when (CLOCK_REALTIME), or when it was reset */
} memd_peak;

/* A byte count and its peak, for counts nothing else keeps (devices, regions). */
typedef struct memd_use_peak {
    uint64_t bytes;
    memd_peak peak;
} memd_use_peak;

/* The count just became current (it rose, or may have). */
static inline void memd_peak_note(memd_peak *p, uint64_t current, uint64_t now_ns)
{
    if (current > p->bytes) {
        p->bytes = current;
        p->at_ns = now_ns;
    }
}

/* The peak starts again from the current count. */
static inline void memd_peak_reset(memd_peak *p, uint64_t current, uint64_t now_ns)
{
    p->bytes = current;
    p->at_ns = now_ns;
}

static inline void memd_use_peak_add(memd_use_peak *u, uint64_t bytes, uint64_t now_ns)
{
    u->bytes += bytes;
    memd_peak_note(&u->peak, u->bytes, now_ns);
}

typedef struct memd_state memd_state;
typedef struct memd_session memd_session;

/* PEAKS_RESET (peak.c): the peaks on device index dev (-1: every device) start again from
 * the current counts, at the request's time: only's (its bank groups and client pools),
 * or with only NULL every one (bank groups, regions, sessions, pools, and the cgroup
 * limits' dmem.peak). O(sessions + their holds): never on the allocation path. */
void memd_peaks_reset(memd_state *st, int dev, memd_session *only);

#endif
