/* memd daemon — the top holders of a region (holders.h). */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "event.h"
#include "holders.h"
#include "units.h"

size_t memd_region_top_holders(const memd_state *st, uint32_t dev, uint8_t kind,
                               uint8_t region, memd_region_holder *out, size_t n)
{
    size_t k = 0;
    for (const memd_session *s = st->sessions; s && n; s = s->next) {
        uint64_t bytes = 0;
        for (const memd_hold *h = s->holds; h; h = h->next) {
            const memd_alloc *a = memd_hold_alloc(h);
            if (a->dev == dev && a->pl.kind == kind && a->pl.region == region)
                bytes += memd_alloc_device_bytes(st, a);
        }
        if (bytes == 0)
            continue;
        /* Insertion into the sorted top n (n is a handful). */
        size_t i = k < n ? k++ : n;
        while (i > 0 && out[i - 1].bytes < bytes) {
            if (i < n)
                out[i] = out[i - 1];
            i--;
        }
        if (i < n)
            out[i] = (memd_region_holder){.s = s, .bytes = bytes};
    }
    return k;
}

void memd_region_holders_text(const memd_state *st, uint32_t dev, uint8_t kind,
                              uint8_t region, char *buf, size_t len)
{
    memd_region_holder top[3];
    size_t n = memd_region_top_holders(st, dev, kind, region, top, 3);
    snprintf(buf, len, "%s", n ? "" : "nobody");
    for (size_t i = 0; i < n; i++) {
        const memd_session *s = top[i].s;
        char hb[24], who[64], one[112];
        const char *comm = s->comm[0] ? s->comm : "?";
        /* The client name is most often the process name (libmemclient's default):
         * both only when they differ. */
        if (!s->client_name[0])
            snprintf(who, sizeof who, "%s", comm);
        else if (!strncmp(s->client_name, comm, strlen(comm)))
            snprintf(who, sizeof who, "'%.20s'", s->client_name);
        else
            snprintf(who, sizeof who, "%s '%.20s'", comm, s->client_name);
        memd_human_bytes(top[i].bytes, hb, sizeof hb);
        size_t used = strlen(buf);
        snprintf(one, sizeof one, "%spid %u %s %s", i ? ", " : "", s->pid, who, hb);
        if (used + strlen(one) >= len) /* too long with the names: the pid says who */
            snprintf(one, sizeof one, "%spid %u %s", i ? ", " : "", s->pid, hb);
        if (used + strlen(one) >= len)
            break; /* whole entries only */
        memcpy(buf + used, one, strlen(one) + 1);
    }
}
