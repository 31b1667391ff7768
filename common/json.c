/* memd — JSON string output shared by `memd --check-config --json`, `memctl dump --json`
 * and `memctl plan`, so every document memd prints escapes alike. */
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "text.h"

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

void memd_json_member(FILE *f, const char *lead, const char *s)
{
    fputs(lead, f);
    memd_json_str(f, s);
}

