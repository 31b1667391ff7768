/* memd daemon — resetting the high-water marks (see peak.h). */
#include "peak.h"

#include "alloc.h"
#include "cglimit.h"
#include "pool_books.h"
#include "state.h"

/* s's bank groups and the pools it holds, on device index dev (-1: every one). */
static void session_reset(memd_state *st, int dev, memd_session *s, uint64_t now)
{
    for (uint32_t d = 0; s->group_holds && d < st->ndevs; d++) {
        if (dev >= 0 && d != (uint32_t)dev)
            continue;
        for (uint32_t k = 0; k < MEMD_KIND_COUNT; k++) {
            memd_group_use *u = &s->group_holds[(size_t)d * MEMD_KIND_COUNT + k];
            memd_peak_reset(&u->peak, u->bytes, now);
        }
    }
    for (memd_hold *h = s->holds; h; h = h->next) {
        memd_alloc *a = memd_hold_alloc(h);
        memd_pool_books *b = a->ext ? a->ext->books : NULL;
        if (b && (dev < 0 || a->dev == (uint32_t)dev))
            memd_peak_reset(&b->peak, b->pooled, now);
    }
}

void memd_peaks_reset(memd_state *st, int dev, memd_session *only)
{
    uint64_t now = memd_state_now(st);
    if (only) {
        session_reset(st, dev, only, now);
        return;
    }
    for (memd_session *s = st->sessions; s; s = s->next)
        session_reset(st, dev, s, now);
    for (uint32_t d = 0; d < st->ndevs; d++) {
        if (dev >= 0 && d != (uint32_t)dev)
            continue;
        memd_dev *x = &st->devs[d];
        for (uint32_t k = 0; k < MEMD_KIND_COUNT; k++) {
            memd_peak_reset(&x->group[k].peak, x->group[k].bytes, now);
            for (uint32_t r = 0; r < MEMD_MAX_REGIONS; r++)
                memd_peak_reset(&x->regions[k][r].peak, x->regions[k][r].bytes, now);
        }
    }
    memd_cglimit_reset_peaks(st, dev);
}
