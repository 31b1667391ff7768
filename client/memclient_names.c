/* libmemclient: names of kinds, classes, scopes, dtypes and bank modes (memctl flags, JSON,
 * messages).
 * Thin wrappers over the engine's tables (common/names.c, compiled into this
 * library with hidden visibility), so the client accepts exactly what the daemon and its
 * config accept, aliases included. */
#include <errno.h>

#include "names.h"
#include "memclient_internal.h"

const char *memclient_kind_name(memd_kind k) { return memd_kind_name(k); }
const char *memclient_class_name(memd_class c) { return memd_class_name(c); }
const char *memclient_scope_name(memd_scope s) { return memd_scope_name(s); }
const char *memclient_dtype_name(memd_dtype t) { return memd_dtype_name(t); }
int memclient_kind_parse(const char *s, memd_kind *out) { return memd_kind_parse(s, out); }
int memclient_class_parse(const char *s, memd_class *out) { return memd_class_parse(s, out); }
int memclient_scope_parse(const char *s, memd_scope *out) { return memd_scope_parse(s, out); }

const char *memclient_bank_mode_name(memd_bank_mode m) { return memd_bank_mode_name(m); }

int memclient_alloc_req_set_mode(memclient_alloc_req *r, const char *mode)
{
    memd_bank_mode m;
    if (!r || memd_bank_mode_parse(mode, &m) < 0 || m == MEMD_BANKS_ALL)
        return -EINVAL; /* a bank set's mode: lockstep over every bank is no set */
    r->per_bank = m == MEMD_BANKS_PER_BANK;
    r->flags &= ~(uint32_t)MEMCLIENT_ALLOC_RANGE_LOCKSTEP;
    if (m == MEMD_BANKS_RANGE_LOCKSTEP)
        r->flags |= MEMCLIENT_ALLOC_RANGE_LOCKSTEP;
    return 0;
}

int memclient_dtype_parse(const char *s, memd_dtype *out)
{
    memd_dtype t;
    int rc = memd_dtype_parse(s, &t);
    if (rc < 0 || t == MEMD_DTYPE_NONE) /* "none" is not a dtype one asks for */
        return -EINVAL;
    *out = t;
    return 0;
}
