/* memd — records' fixed parts by a table of fields (le.h). */
#include "le.h"

#include <string.h>

/* Every record of every allocation goes through these: one fixed-size copy per width,
 * which compilers make a plain load or store, not a memcpy call and a byte loop (that
 * took a quarter of memd's instructions per batched allocation). */
void memd_le_fields_put(uint8_t *p, const void *obj, const memd_le_field *f, size_t n)
{
    const uint8_t *o = obj;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *m = o + f[i].off;
        uint8_t *q = p + f[i].at;
        switch (f[i].width) {
        case 1:
            *q = *m;
            break;
        case 2: {
            uint16_t v;
            memcpy(&v, m, sizeof v);
            memd_le_put_u16(q, v);
            break;
        }
        case 4: {
            uint32_t v;
            memcpy(&v, m, sizeof v);
            memd_le_put_u32(q, v);
            break;
        }
        default: {
            uint64_t v;
            memcpy(&v, m, sizeof v);
            memd_le_put_u64(q, v);
            break;
        }
        }
    }
}

void memd_le_fields_get(const uint8_t *p, void *obj, const memd_le_field *f, size_t n)
{
    uint8_t *o = obj;
    for (size_t i = 0; i < n; i++) {
        uint8_t *m = o + f[i].off;
        const uint8_t *q = p + f[i].at;
        switch (f[i].width) {
        case 1:
            *m = *q;
            break;
        case 2: {
            uint16_t v = memd_le_u16(q);
            memcpy(m, &v, sizeof v);
            break;
        }
        case 4: {
            uint32_t v = memd_le_u32(q);
            memcpy(m, &v, sizeof v);
            break;
        }
        default: {
            uint64_t v = memd_le_u64(q);
            memcpy(m, &v, sizeof v);
            break;
        }
        }
    }
}
