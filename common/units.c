/* memd — integer and size syntax (units.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

int memd_parse_digits(const char **p, uint64_t *out)
{
    const char *s = *p;
    unsigned base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    uint64_t v = 0;
    const char *start = s;
    bool overflow = false;
    for (;; s++) {
        unsigned d;
        if (*s >= '0' && *s <= '9')
            d = (unsigned)(*s - '0');
        else if (base == 16 && *s >= 'a' && *s <= 'f')
            d = (unsigned)(*s - 'a' + 10);
        else if (base == 16 && *s >= 'A' && *s <= 'F')
            d = (unsigned)(*s - 'A' + 10);
        else
            break;
        if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v))
            overflow = true;
    }
    if (s == start)
        return -EINVAL;
    *p = s;
    *out = v;
    return overflow ? -ERANGE : 0;
}

int memd_parse_u64(const char *s, uint64_t *out)
{
    if (!s)
        return -EINVAL;
    uint64_t v;
    int rc = memd_parse_digits(&s, &v);
    if (rc == 0 && *s)
        return -EINVAL;
    if (rc == 0)
        *out = v;
    return rc;
}

static const struct {
    const char *suffix;
    unsigned shift;
} suffixes[] = {
    {"B", 0},    {"K", 10},   {"KiB", 10}, {"M", 20},   {"MiB", 20},
    {"G", 30},   {"GiB", 30}, {"T", 40},   {"TiB", 40},
};

int memd_parse_size(const char *s, uint64_t *out, const char **bad_suffix)
{
    if (!s)
        return -EINVAL;
    uint64_t v;
    int rc = memd_parse_digits(&s, &v);
    if (rc == -EINVAL)
        return rc;
    bool overflow = rc == -ERANGE;
    while (*s == ' ')
        s++;
    unsigned shift = 0;
    if (*s) {
        size_t i = 0, n = sizeof(suffixes) / sizeof(suffixes[0]);
        while (i < n && strcmp(s, suffixes[i].suffix) != 0)
            i++;
        if (i == n) {
            if (bad_suffix)
                *bad_suffix = s;
            return -ENOENT;
        }
        shift = suffixes[i].shift;
    }
    if (overflow || (shift && v > (UINT64_MAX >> shift)))
        return -ERANGE;
    *out = v << shift;
    return 0;
}

const char *memd_human_bytes(uint64_t v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (v < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", v);
        return buf;
    }
    double d = (double)v;
    unsigned u = 0;
    while (d >= 1024.0 && u + 1 < sizeof(units) / sizeof(units[0])) {
        d /= 1024.0;
        u++;
    }
    snprintf(buf, len, "%.1f %s", d, units[u]);
    return buf;
}
