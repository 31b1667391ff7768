/* memd wire codec: fixed-size strings (see wire.h). */
#include "wire.h"

#include <errno.h>
#include <string.h>

/* Always NUL padded on the wire so no stray bytes leak and a receiver can rely on a
 * terminator. */
uint8_t *memd_wire_put_str(uint8_t *p, const char *s, size_t n)
{
    size_t l = strnlen(s, n);
    if (l == n)
        l = n - 1;
    memcpy(p, s, l);
    memset(p + l, 0, n - l);
    return p + n;
}

int memd_wire_get_str(const uint8_t *p, char *s, size_t n)
{
    const uint8_t *nul = memchr(p, 0, n);
    if (!nul)
        return -EINVAL;
    size_t l = (size_t)(nul - p);
    memcpy(s, p, l);
    memset(s + l, 0, n - l);
    return 0;
}

void memd_wire_strset(char *dst, size_t n, const char *src)
{
    if (n == 0)
        return;
    memd_wire_put_str((uint8_t *)dst, src ? src : "", n);
}
