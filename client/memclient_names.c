/* libmemclient: names of kinds, classes, scopes and dtypes (memctl flags, JSON, messages).
 * The spellings match the daemon's config and messages. */
#include <errno.h>
#include <string.h>

#include "memclient_internal.h"

static const char *const kind_names[MEMD_KIND_COUNT] = {"dram", "sram"};
static const char *const class_names[MEMD_CLASS_COUNT] = {
    "code", "constant", "placeholder", "internal", "logging",
};
static const char *const scope_names[MEMD_SCOPE_COUNT] = {"dram", "sram", "dram.texture"};
static const char *const dtype_names[MEMD_DTYPE_COUNT] = {
    "none", "u8", "i8", "u16", "i16", "f16", "bf16", "u32", "i32", "f32", "u64", "i64", "f64",
};

const char *memclient_kind_name(memd_kind k)
{
    return (unsigned)k < MEMD_KIND_COUNT ? kind_names[k] : "?";
}

const char *memclient_class_name(memd_class c)
{
    return (unsigned)c < MEMD_CLASS_COUNT ? class_names[c] : "?";
}

const char *memclient_scope_name(memd_scope s)
{
    return (unsigned)s < MEMD_SCOPE_COUNT ? scope_names[s] : "?";
}

const char *memclient_dtype_name(memd_dtype t)
{
    return (unsigned)t < MEMD_DTYPE_COUNT ? dtype_names[t] : "?";
}

static int lookup(const char *s, const char *const *names, int n)
{
    if (!s)
        return -EINVAL;
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -EINVAL;
}

int memclient_kind_parse(const char *s, memd_kind *out)
{
    int v = lookup(s, kind_names, MEMD_KIND_COUNT);
    if (v < 0 && s && !strcmp(s, "l1"))
        v = MEMD_KIND_SRAM;
    if (v < 0)
        return v;
    *out = (memd_kind)v;
    return 0;
}

int memclient_class_parse(const char *s, memd_class *out)
{
    int v = lookup(s, class_names, MEMD_CLASS_COUNT);
    if (v < 0)
        return v;
    *out = (memd_class)v;
    return 0;
}

int memclient_scope_parse(const char *s, memd_scope *out)
{
    int v = lookup(s, scope_names, MEMD_SCOPE_COUNT);
    if (v < 0 && s && !strcmp(s, "global"))
        v = MEMD_SCOPE_DRAM;
    if (v < 0 && s && !strcmp(s, "l1"))
        v = MEMD_SCOPE_SRAM;
    if (v < 0)
        return v;
    *out = (memd_scope)v;
    return 0;
}

int memclient_dtype_parse(const char *s, memd_dtype *out)
{
    int v = lookup(s, dtype_names, MEMD_DTYPE_COUNT);
    if (v <= 0) /* "none" is not a dtype one asks for */
        return -EINVAL;
    *out = (memd_dtype)v;
    return 0;
}
