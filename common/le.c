/* memd — records' fixed parts by a table of fields (le.h). */
#include "le.h"

#include <string.h>

/* A member of 1, 2, 4 or 8 bytes, in the host's order. */
typedef union member {
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
} member;

static uint64_t member_load(const uint8_t *m, unsigned width)
{
    member u;
    memcpy(&u, m, width);
    return width == 1 ? u.u8 : width == 2 ? u.u16 : width == 4 ? u.u32 : u.u64;
}

static void member_store(uint8_t *m, unsigned width, uint64_t v)
{
    member u;
    if (width == 1)
        u.u8 = (uint8_t)v;
    else if (width == 2)
        u.u16 = (uint16_t)v;
    else if (width == 4)
        u.u32 = (uint32_t)v;
    else
        u.u64 = v;
    memcpy(m, &u, width);
}

void memd_le_fields_put(uint8_t *p, const void *obj, const memd_le_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = member_load((const uint8_t *)obj + f[i].off, f[i].width);
        for (unsigned b = 0; b < f[i].width; b++)
            p[f[i].at + b] = (uint8_t)(v >> 8 * b);
    }
}

void memd_le_fields_get(const uint8_t *p, void *obj, const memd_le_field *f, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 0;
        for (unsigned b = 0; b < f[i].width; b++)
            v |= (uint64_t)p[f[i].at + b] << 8 * b;
        member_store((uint8_t *)obj + f[i].off, f[i].width, v);
    }
}
