/* memd — bank-list syntax (banklist.h). Ids must come in increasing order: "8,0-3" is
 * refused rather than sorted, so a list reads the way the engine will see it. */
#include "banklist.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

int memd_parse_bank_list(const char *s, uint32_t limit, uint32_t *ids, uint32_t cap, uint32_t *n,
                         uint32_t *bad)
{
    const char *p = s;
    uint32_t count = 0;
    uint64_t next = 0; /* the lowest id the next item may start at */
    *n = 0;
    if (bad)
        *bad = 0;
    if (!s || !*s)
        return -EINVAL;
    for (;;) {
        const char *item = p;
        uint64_t lo, hi;
        int rl = memd_parse_digits(&p, &lo), rh = 0;
        if (rl == -EINVAL)
            goto syntax;
        hi = lo;
        if (*p == '-') {
            p++;
            if ((rh = memd_parse_digits(&p, &hi)) == -EINVAL || (rl == 0 && rh == 0 && hi < lo))
                goto syntax;
        }
        if (rl == 0 && lo < next) {
            p = item;
            goto syntax;
        }
        /* Past 64 bits is past any limit: too large, not malformed. */
        if (rl < 0 || rh < 0 || hi >= limit) {
            if (bad)
                *bad = (uint32_t)(item - s);
            return -ERANGE;
        }
        for (uint64_t b = lo; b <= hi; b++) {
            if (ids) {
                if (count == cap)
                    return -ENOSPC;
                ids[count] = (uint32_t)b;
            }
            count++;
        }
        next = hi + 1;
        if (*p == '\0')
            break;
        if (*p != ',')
            goto syntax;
        p++;
    }
    *n = count;
    return 0;
syntax:
    if (bad)
        *bad = (uint32_t)(p - s);
    return -EINVAL;
}

void memd_format_bank_list(const uint32_t *ids, uint32_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n;) {
        uint32_t j = i + 1;
        while (j < n && ids[j] == ids[j - 1] + 1)
            j++;
        char item[32];
        int w = j - i > 1 ? snprintf(item, sizeof item, "%s%u-%u", i ? "," : "", ids[i], ids[j - 1])
                          : snprintf(item, sizeof item, "%s%u", i ? "," : "", ids[i]);
        if (used + (size_t)w + 4 >= cap) {
            snprintf(buf + used, cap - used, "...");
            return;
        }
        memcpy(buf + used, item, (size_t)w + 1);
        used += (size_t)w;
        i = j;
    }
}
