/* memd — the bank-list syntax: bank ids and inclusive ranges separated by commas,
 * "0-3,8,10-11", as memctl --bank-set and memd.yaml sub-devices write them. Pure. */
#ifndef MEMD_ENGINE_BANKLIST_H
#define MEMD_ENGINE_BANKLIST_H

#include <stddef.h>
#include <stdint.h>

/* Parses s into ids strictly increasing (written to ids, at most cap entries; ids may be
 * NULL to count only), *n the count. Ids must be below limit. 0, -EINVAL (syntax, a
 * reversed range, a duplicate or overlap; *bad: the offending character's offset),
 * -ERANGE (an id >= limit), -ENOSPC (more than cap ids). */
int memd_parse_bank_list(const char *s, uint32_t limit, uint32_t *ids, uint32_t cap, uint32_t *n,
                         uint32_t *bad);

/* The inverse: ids[0..n) (strictly increasing) written as "0-31,40" into buf (cap
 * bytes, cap >= 4), ending in "..." when it does not fit. */
void memd_format_bank_list(const uint32_t *ids, uint32_t n, char *buf, size_t cap);

#endif
