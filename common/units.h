/* memd — the one syntax for integers and sizes, shared by the config loader (YAML),
 * memctl's flags and anything else that reads sizes from text, so "4KiB" means the same
 * everywhere. Integers: decimal or 0x-hex. Sizes: an integer, optional spaces, optional
 * suffix B, K/KiB, M/MiB, G/GiB, T/TiB, all powers of 1024; decimal-looking KB/GB and
 * fractions are refused on purpose (ambiguous). Pure functions. */
#ifndef MEMD_ENGINE_UNITS_H
#define MEMD_ENGINE_UNITS_H

#include <stdint.h>

/* The digits at *p (decimal, or hex after 0x); advances *p past every digit even on
 * overflow. 0, -EINVAL (no digits), -ERANGE (does not fit in 64 bits). */
int memd_parse_digits(const char **p, uint64_t *out);

/* The whole string is an unsigned integer. 0, -EINVAL, -ERANGE. */
int memd_parse_u64(const char *s, uint64_t *out);

/* The whole string is a size. 0, -EINVAL (not a size), -ENOENT (unknown suffix: if
 * bad_suffix is not NULL it points at it), -ERANGE (does not fit in 64 bits). */
int memd_parse_size(const char *s, uint64_t *out, const char **bad_suffix);

/* v bytes for people: "512 B", "1.5 GiB" (one decimal, powers of 1024; exact figures
 * belong in JSON, CSV and metrics). Writes buf (24 bytes suffice) and returns it. */
const char *memd_human_bytes(uint64_t v, char *buf, size_t len);

#endif
