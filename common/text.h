/* memd — text that crosses a border: names from clients, descriptors and other
 * processes. Checked where it comes in (the protocol, YAML) and escaped where it goes
 * out (tables, CSV, metrics labels, logs), so a name can neither break a document nor
 * send a terminal escape sequence to an operator. */
#ifndef MEMD_COMMON_TEXT_H
#define MEMD_COMMON_TEXT_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at p (1..4; 1 for ASCII including NUL), or 0 if
 * it is not one (bad lead byte, a continuation missing, overlong, a surrogate or past
 * U+10FFFF). Reads no further than the first byte that breaks the sequence. */
size_t memd_utf8_len(const unsigned char *p);

/* 0 if s is valid UTF-8 without control characters (C0, DEL, C1); else -EILSEQ with
 * the offending byte's offset in *at (may be NULL) and what is wrong with it in *why
 * (may be NULL): "a control character" or "not valid UTF-8". */
int memd_text_check(const char *s, size_t *at, const char **why);

/* s made printable into buf: backslash as \\, control characters and bytes that are not
 * valid UTF-8 as \xNN, valid UTF-8 as is; cut with "..." when buf is too small.
 * Returns buf (cap >= 8). */
const char *memd_text_escape(const char *s, char *buf, size_t cap);

#endif
