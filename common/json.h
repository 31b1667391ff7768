/* memd — JSON string output. */
#ifndef MEMD_COMMON_JSON_H
#define MEMD_COMMON_JSON_H

#include <stdio.h>

/* Writes s as a JSON string literal: quotes, backslashes and control characters escaped,
 * and every byte that is not part of valid UTF-8 replaced by U+FFFD, because names come
 * from other processes and files and must never make the document invalid. */
void memd_json_str(FILE *f, const char *s);

#endif
