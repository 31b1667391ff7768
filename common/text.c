/* memd — checking and escaping text from outside (see text.h). */
#include "text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

size_t memd_utf8_len(const unsigned char *p)
{
    size_t n;
    uint32_t cp;
    if (p[0] < 0x80)
        return 1;
    if ((p[0] & 0xe0) == 0xc0) {
        n = 2;
        cp = p[0] & 0x1f;
    } else if ((p[0] & 0xf0) == 0xe0) {
        n = 3;
        cp = p[0] & 0x0f;
    } else if ((p[0] & 0xf8) == 0xf0) {
        n = 4;
        cp = p[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0; /* overlong, out of range, or a surrogate */
    return n;
}

/* A C1 control (U+0080..U+009F) is the two bytes C2 80..C2 9F. */
static bool is_control(const unsigned char *p, size_t n)
{
    return (n == 1 && (p[0] < 0x20 || p[0] == 0x7f)) || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0);
}

int memd_text_check(const char *s, size_t *at, const char **why)
{
    const unsigned char *p = (const unsigned char *)s, *b = p;
    for (; *p;) {
        size_t n = memd_utf8_len(p);
        if (n == 0 || is_control(p, n)) {
            if (at)
                *at = (size_t)(p - b);
            if (why)
                *why = n == 0 ? "not valid UTF-8" : "a control character";
            return -EILSEQ;
        }
        p += n;
    }
    return 0;
}

const char *memd_text_escape(const char *s, char *buf, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t j = 0;
    while (*p) {
        char piece[8];
        size_t n = memd_utf8_len(p), len;
        if (n == 0 || is_control(p, n)) {
            snprintf(piece, sizeof piece, "\\x%02x", p[0]);
            len = 4;
            n = 1;
        } else if (p[0] == '\\') {
            memcpy(piece, "\\\\", 2);
            len = 2;
        } else {
            memcpy(piece, p, n);
            len = n;
        }
        if (j + len + 4 > cap) { /* room for "..." and the NUL */
            memcpy(buf + j, "...", 3);
            j += 3;
            break;
        }
        memcpy(buf + j, piece, len);
        j += len;
        p += n;
    }
    buf[j] = '\0';
    return buf;
}
