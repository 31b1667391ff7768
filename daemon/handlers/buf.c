/* memd daemon — growable byte buffer (see buf.h). */
#include "buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int memd_buf_reserve(memd_buf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return 0;
    if (more > SIZE_MAX / 2 - b->len)
        return -ENOMEM;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return -ENOMEM;
    b->data = p;
    b->cap = cap;
    return 0;
}

uint8_t *memd_buf_append(memd_buf *b, size_t n)
{
    if (memd_buf_reserve(b, n) < 0)
        return NULL;
    uint8_t *p = b->data + b->len;
    b->len += n;
    return p;
}

void memd_buf_consume(memd_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
}

void memd_buf_free(memd_buf *b)
{
    free(b->data);
    *b = (memd_buf){0};
}

void memd_buf_trim(memd_buf *b, size_t keep)
{
    if (b->len == b->off && b->cap > keep)
        memd_buf_free(b);
}

int memd_buf_adopt(memd_buf *b, uint8_t *data, size_t len, size_t cap)
{
    if (memd_buf_pending(b) == 0) {
        free(b->data);
        *b = (memd_buf){.data = data, .len = len, .cap = cap};
        return 0;
    }
    uint8_t *p = memd_buf_append(b, len);
    if (p)
        memcpy(p, data, len);
    free(data);
    return p ? 0 : -ENOMEM;
}
