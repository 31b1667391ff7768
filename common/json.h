/* memd — JSON and XML string output. */
#ifndef MEMD_COMMON_JSON_H
#define MEMD_COMMON_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "text.h" /* memd_utf8_len, for xml.c and json.c */

/* Writes s as a JSON string literal: quotes, backslashes and control characters escaped,
 * and every byte that is not part of valid UTF-8 replaced by U+FFFD, because names come
 * from other processes and files and must never make the document invalid. */
void memd_json_str(FILE *f, const char *s);

/* Writes the literal lead (the separator and key, e.g. ", \"name\": ") and then s as
 * memd_json_str does: one call per string member of an object. */
void memd_json_member(FILE *f, const char *lead, const char *s);

/* Writes s as XML character data or an attribute value (xml.c): &, <, >, " and '
 * escaped, control characters (not allowed in XML 1.0) as '?', and bytes that are not
 * UTF-8 as U+FFFD, so a picture with hostile names is still well-formed. */
void memd_xml_str(FILE *f, const char *s);

#endif
