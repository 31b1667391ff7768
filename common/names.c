/* memd engine — names of kinds, classes, scopes, dtypes, directions and fits (names.h).
 * One table per enum so printing and parsing can never disagree; aliases are only
 * accepted when parsing (TVM says "global" and "l1", tt-metal says "L1"). */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "names.h"

typedef struct memd_name_entry {
    const char *name;
    int value;
} memd_name_entry;

/* The first entry for a value is its canonical name; later ones are aliases. */
static const memd_name_entry kind_names[] = {
    {"dram", MEMD_KIND_DRAM},
    {"sram", MEMD_KIND_SRAM},
    {"global", MEMD_KIND_DRAM},
    {"l1", MEMD_KIND_SRAM},
};

static const memd_name_entry class_names[] = {
    {"code", MEMD_CLASS_CODE},
    {"constant", MEMD_CLASS_CONSTANT},
    {"placeholder", MEMD_CLASS_PLACEHOLDER},
    {"internal", MEMD_CLASS_INTERNAL},
    {"logging", MEMD_CLASS_LOGGING},
};

static const memd_name_entry scope_names[] = {
    {"dram", MEMD_SCOPE_DRAM},
    {"sram", MEMD_SCOPE_SRAM},
    {"dram.texture", MEMD_SCOPE_DRAM_TEXTURE},
    {"global", MEMD_SCOPE_DRAM},
    {"l1", MEMD_SCOPE_SRAM},
    {"global.texture", MEMD_SCOPE_DRAM_TEXTURE},
};

static const memd_name_entry dtype_names[] = {
    {"none", MEMD_DTYPE_NONE},
    {"u8", MEMD_DTYPE_U8},
    {"i8", MEMD_DTYPE_I8},
    {"u16", MEMD_DTYPE_U16},
    {"i16", MEMD_DTYPE_I16},
    {"f16", MEMD_DTYPE_F16},
    {"bf16", MEMD_DTYPE_BF16},
    {"u32", MEMD_DTYPE_U32},
    {"i32", MEMD_DTYPE_I32},
    {"f32", MEMD_DTYPE_F32},
    {"u64", MEMD_DTYPE_U64},
    {"i64", MEMD_DTYPE_I64},
    {"f64", MEMD_DTYPE_F64},
    {"uint8", MEMD_DTYPE_U8},
    {"int8", MEMD_DTYPE_I8},
    {"uint16", MEMD_DTYPE_U16},
    {"int16", MEMD_DTYPE_I16},
    {"float16", MEMD_DTYPE_F16},
    {"bfloat16", MEMD_DTYPE_BF16},
    {"uint32", MEMD_DTYPE_U32},
    {"int32", MEMD_DTYPE_I32},
    {"float32", MEMD_DTYPE_F32},
    {"uint64", MEMD_DTYPE_U64},
    {"int64", MEMD_DTYPE_I64},
    {"float64", MEMD_DTYPE_F64},
};

static const memd_name_entry dir_names[] = {
    {"bottom_up", MEMD_DIR_BOTTOM_UP},
    {"top_down", MEMD_DIR_TOP_DOWN},
};

static const memd_name_entry fit_names[] = {
    {"first", MEMD_FIT_FIRST},
    {"best", MEMD_FIT_BEST},
};

/* Canonical names first (printing takes the first); then tt-metal's names of the same
 * modes, which requests may give (doc/ttmetal.md). */
static const memd_name_entry bank_mode_names[] = {
    {"all", MEMD_BANKS_ALL},
    {"range", MEMD_BANKS_RANGE},
    {"per_bank", MEMD_BANKS_PER_BANK},
    {"range_lockstep", MEMD_BANKS_RANGE_LOCKSTEP},
    {"lockstep", MEMD_BANKS_ALL},
    {"uniform_per_core", MEMD_BANKS_RANGE},
    {"per_core", MEMD_BANKS_PER_BANK},
};

#define NAMES(t) (t), sizeof(t) / sizeof((t)[0])

static const char *name_of(const memd_name_entry *t, size_t n, int v)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].value == v)
            return t[i].name;
    return "unknown";
}

static int parse(const memd_name_entry *t, size_t n, const char *s, int *v)
{
    if (!s)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, s) == 0) {
            *v = t[i].value;
            return 0;
        }
    return -EINVAL;
}

const char *memd_kind_name(memd_kind k) { return name_of(NAMES(kind_names), (int)k); }
const char *memd_class_name(memd_class c) { return name_of(NAMES(class_names), (int)c); }
const char *memd_scope_name(memd_scope s) { return name_of(NAMES(scope_names), (int)s); }
const char *memd_dtype_name(memd_dtype t) { return name_of(NAMES(dtype_names), (int)t); }
const char *memd_dir_name(memd_dir d) { return name_of(NAMES(dir_names), (int)d); }
const char *memd_fit_name(memd_fit f) { return name_of(NAMES(fit_names), (int)f); }
const char *memd_bank_mode_name(memd_bank_mode m) { return name_of(NAMES(bank_mode_names), (int)m); }

/* Each parser goes through an int so the enum's storage size never matters. */
#define DEFINE_PARSE(fn, type, table)                                                     \
    int fn(const char *s, type *out)                                                      \
    {                                                                                     \
        int v;                                                                            \
        int rc = parse(NAMES(table), s, &v);                                              \
        if (rc == 0)                                                                      \
            *out = (type)v;                                                               \
        return rc;                                                                        \
    }

DEFINE_PARSE(memd_kind_parse, memd_kind, kind_names)
DEFINE_PARSE(memd_class_parse, memd_class, class_names)
DEFINE_PARSE(memd_scope_parse, memd_scope, scope_names)
DEFINE_PARSE(memd_dtype_parse, memd_dtype, dtype_names)
DEFINE_PARSE(memd_dir_parse, memd_dir, dir_names)
DEFINE_PARSE(memd_fit_parse, memd_fit, fit_names)
DEFINE_PARSE(memd_bank_mode_parse, memd_bank_mode, bank_mode_names)

uint32_t memd_dtype_size(memd_dtype t)
{
    switch (t) {
    case MEMD_DTYPE_U8:
    case MEMD_DTYPE_I8:
        return 1;
    case MEMD_DTYPE_U16:
    case MEMD_DTYPE_I16:
    case MEMD_DTYPE_F16:
    case MEMD_DTYPE_BF16:
        return 2;
    case MEMD_DTYPE_U32:
    case MEMD_DTYPE_I32:
    case MEMD_DTYPE_F32:
        return 4;
    case MEMD_DTYPE_U64:
    case MEMD_DTYPE_I64:
    case MEMD_DTYPE_F64:
        return 8;
    default:
        return 0;
    }
}
