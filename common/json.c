/* memd — JSON string output shared by `memd --check-config --json`, `memctl dump --json`
 * and `memctl plan`, so every document memd prints escapes alike. */
#include <stdint.h>
#include <stdio.h>

#include "json.h"

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

void memd_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        switch (*p) {
        case '"': fputs("\\\"", f); p++; continue;
        case '\\': fputs("\\\\", f); p++; continue;
        case '\n': fputs("\\n", f); p++; continue;
        case '\r': fputs("\\r", f); p++; continue;
        case '\t': fputs("\\t", f); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p);
            p++;
            continue;
        }
        /* Names come from other processes: bytes that are not UTF-8 would make the
         * document invalid, so each becomes U+FFFD. */
        size_t n = memd_utf8_len(p);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        fwrite(p, 1, n, f);
        p += n;
    }
    fputc('"', f);
}

