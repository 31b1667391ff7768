/* memd — XML text output for memctl's pictures (SVG, HTML): names come from other
 * processes, so every one is escaped, control characters (not allowed in XML 1.0) become
 * '?', and bytes that are not UTF-8 become U+FFFD, keeping the document well-formed. */
#include <stdio.h>

#include "json.h"

void memd_xml_str(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        switch (*p) {
        case '&': fputs("&amp;", f); p++; continue;
        case '<': fputs("&lt;", f); p++; continue;
        case '>': fputs("&gt;", f); p++; continue;
        case '"': fputs("&quot;", f); p++; continue;
        case '\'': fputs("&#39;", f); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7f) {
            fputc('?', f);
            p++;
            continue;
        }
        size_t n = memd_utf8_len(p);
        if (n == 0) {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        fwrite(p, 1, n, f);
        p += n;
    }
}
