/* Device model: spec validation, lockstep footprints, class policy and direction
 * collisions, scopes and textures, alloc/alloc_at/free, bank addresses, stats, names. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "device.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

static void add_region(memd_bank_group_spec *g, const char *name, uint64_t base, uint64_t size,
                       bool allocatable)
{
    memd_region_spec *r = &g->regions[g->nregions++];
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->base = base;
    r->size = size;
    r->allocatable = allocatable;
}

/* Wormhole-like: 12 DRAM banks of 1 GiB (offsets 0, 1 GiB, ...), regions code/data/logging;
 * 64 SRAM banks of 1 MiB, reserved + buffers; textures with 256-byte pitch. */
static void wormhole_spec(memd_device_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->id = 7;
    snprintf(s->name, sizeof(s->name), "wh");
    memd_bank_group_spec *d = &s->groups[MEMD_KIND_DRAM];
    d->banks = 12;
    d->bank_size = GiB;
    d->alignment = 32;
    d->bank_offsets = calloc(12, sizeof(int64_t));
    ck_assert_ptr_nonnull(d->bank_offsets);
    for (int i = 0; i < 12; i++)
        d->bank_offsets[i] = (i % 2) ? (int64_t)GiB : 0;
    add_region(d, "code", 0, 64 * MiB, true);
    add_region(d, "data", 64 * MiB, GiB - 128 * MiB, true);
    add_region(d, "logging", GiB - 64 * MiB, 64 * MiB, true);
    memd_bank_group_spec *l1 = &s->groups[MEMD_KIND_SRAM];
    l1->banks = 64;
    l1->bank_size = MiB;
    l1->alignment = 16;
    add_region(l1, "reserved", 0, 128 * KiB, false);
    add_region(l1, "buffers", 128 * KiB, MiB - 128 * KiB, true);
    s->texture.enabled = true;
    s->texture.max_width = 4096;
    s->texture.max_height = 2048;
    s->texture.pitch_alignment = 256;
    memd_device_spec_default_policy(s);
}

/* Esperanto-like: one DRAM bank, code [0, 1 MiB), data [1 MiB, 2 MiB), logging [2, 3 MiB). */
static void esperanto_spec(memd_device_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->id = 1;
    snprintf(s->name, sizeof(s->name), "et");
    memd_bank_group_spec *d = &s->groups[MEMD_KIND_DRAM];
    d->banks = 1;
    d->bank_size = 3 * MiB;
    d->alignment = 64;
    add_region(d, "code", 0, MiB, true);
    add_region(d, "data", MiB, MiB, true);
    add_region(d, "logging", 2 * MiB, MiB, true);
    memd_device_spec_default_policy(s);
}

static memd_device *create_ok(memd_device_spec *s)
{
    memd_device *d = NULL;
    memd_error err = {0};
    int rc = memd_device_create(s, &d, &err);
    ck_assert_msg(rc == 0, "create failed: %d %s", rc, err.msg);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* A device of wormhole_spec (it keeps no pointer into the spec: test_device_owns_its_copy). */
static memd_device *wormhole_device(void)
{
    memd_device_spec s;
    wormhole_spec(&s);
    memd_device *d = create_ok(&s);
    memd_device_spec_free(&s);
    return d;
}

static memd_alloc_req bytes_req(memd_class c, memd_scope sc, uint64_t bytes)
{
    memd_alloc_req r;
    memset(&r, 0, sizeof(r));
    r.cls = c;
    r.scope = sc;
    r.bytes = bytes;
    return r;
}

/* ---- names ---- */

START_TEST(test_names_round_trip)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        memd_kind v;
        ck_assert_int_eq(memd_kind_parse(memd_kind_name((memd_kind)k), &v), 0);
        ck_assert_int_eq(v, k);
    }
    for (int c = 0; c < MEMD_CLASS_COUNT; c++) {
        memd_class v;
        ck_assert_int_eq(memd_class_parse(memd_class_name((memd_class)c), &v), 0);
        ck_assert_int_eq(v, c);
    }
    for (int s = 0; s < MEMD_SCOPE_COUNT; s++) {
        memd_scope v;
        ck_assert_int_eq(memd_scope_parse(memd_scope_name((memd_scope)s), &v), 0);
        ck_assert_int_eq(v, s);
    }
    for (int t = 0; t < MEMD_DTYPE_COUNT; t++) {
        memd_dtype v;
        ck_assert_int_eq(memd_dtype_parse(memd_dtype_name((memd_dtype)t), &v), 0);
        ck_assert_int_eq(v, t);
    }
    ck_assert_str_eq(memd_scope_name(MEMD_SCOPE_DRAM), "dram");
    ck_assert_str_eq(memd_scope_name(MEMD_SCOPE_SRAM), "sram");
    ck_assert_str_eq(memd_scope_name(MEMD_SCOPE_DRAM_TEXTURE), "dram.texture");
    ck_assert_str_eq(memd_class_name(MEMD_CLASS_PLACEHOLDER), "placeholder");
    ck_assert_str_eq(memd_kind_name(MEMD_KIND_SRAM), "sram");
    ck_assert_str_eq(memd_dir_name(MEMD_DIR_TOP_DOWN), "top_down");
    ck_assert_str_eq(memd_fit_name(MEMD_FIT_BEST), "best");
    ck_assert_str_eq(memd_class_name((memd_class)99), "unknown");
}
END_TEST

/* parse(text, &var) succeeds and sets var to want. */
#define PARSES_TO(parse, text, var, want)                                                 \
    do {                                                                                  \
        ck_assert_int_eq(parse(text, &(var)), 0);                                         \
        ck_assert_int_eq(var, want);                                                      \
    } while (0)

START_TEST(test_names_aliases_and_errors)
{
    memd_scope s;
    memd_kind k;
    memd_dtype t;
    memd_dir dir;
    memd_fit fit;
    memd_class c;
    PARSES_TO(memd_scope_parse, "global", s, MEMD_SCOPE_DRAM);
    PARSES_TO(memd_scope_parse, "l1", s, MEMD_SCOPE_SRAM);
    PARSES_TO(memd_scope_parse, "global.texture", s, MEMD_SCOPE_DRAM_TEXTURE);
    PARSES_TO(memd_kind_parse, "l1", k, MEMD_KIND_SRAM);
    PARSES_TO(memd_kind_parse, "global", k, MEMD_KIND_DRAM);
    PARSES_TO(memd_dtype_parse, "float32", t, MEMD_DTYPE_F32);
    PARSES_TO(memd_dtype_parse, "bfloat16", t, MEMD_DTYPE_BF16);
    PARSES_TO(memd_dir_parse, "bottom_up", dir, MEMD_DIR_BOTTOM_UP);
    PARSES_TO(memd_fit_parse, "best", fit, MEMD_FIT_BEST);

    s = MEMD_SCOPE_SRAM;
    ck_assert_int_eq(memd_scope_parse("texture", &s), -EINVAL);
    ck_assert_int_eq(memd_scope_parse("DRAM", &s), -EINVAL);
    ck_assert_int_eq(memd_scope_parse("", &s), -EINVAL);
    ck_assert_int_eq(memd_scope_parse(NULL, &s), -EINVAL);
    ck_assert_int_eq(s, MEMD_SCOPE_SRAM); /* untouched on error */
    ck_assert_int_eq(memd_class_parse("constants", &c), -EINVAL);
    ck_assert_int_eq(memd_dtype_parse("f128", &t), -EINVAL);
    ck_assert_int_eq(memd_dir_parse("up", &dir), -EINVAL);
    ck_assert_int_eq(memd_fit_parse("worst", &fit), -EINVAL);
    ck_assert_int_eq(memd_kind_parse("hbm", &k), -EINVAL);
}
END_TEST

START_TEST(test_dtype_sizes)
{
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_NONE), 0);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_U8), 1);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_I8), 1);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_BF16), 2);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_F16), 2);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_I32), 4);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_F32), 4);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_F64), 8);
    ck_assert_uint_eq(memd_dtype_size(MEMD_DTYPE_I64), 8);
    ck_assert_uint_eq(memd_dtype_size((memd_dtype)200), 0);
}
END_TEST

/* ---- validation ---- */

typedef void (*spec_mutator)(memd_device_spec *s);

static void bad_overlap(memd_device_spec *s) { s->groups[0].regions[1].base -= 1; }
static void bad_exceeds(memd_device_spec *s) { s->groups[0].regions[2].size += 1; }
static void bad_base_past_bank(memd_device_spec *s)
{
    s->groups[0].regions[2].base = 2 * GiB;
    s->groups[0].regions[2].size = 1;
}
static void bad_size_overflow(memd_device_spec *s)
{
    s->groups[0].regions[2].size = UINT64_MAX - 5;
}
static void bad_zero_region(memd_device_spec *s) { s->groups[1].regions[0].size = 0; }
static void bad_dup_region(memd_device_spec *s)
{
    snprintf(s->groups[0].regions[2].name, MEMD_NAME_MAX, "code");
}
static void bad_noname_region(memd_device_spec *s) { s->groups[0].regions[0].name[0] = 0; }
static void bad_alignment(memd_device_spec *s) { s->groups[0].alignment = 48; }
static void bad_alignment0(memd_device_spec *s) { s->groups[1].alignment = 0; }
static void bad_bank_size0(memd_device_spec *s) { s->groups[1].bank_size = 0; }
static void bad_too_many_banks(memd_device_spec *s) { s->groups[1].banks = MEMD_MAX_BANKS + 1; }
static void bad_no_regions(memd_device_spec *s) { s->groups[1].nregions = 0; }
static void bad_too_many_regions(memd_device_spec *s) { s->groups[1].nregions = MEMD_MAX_REGIONS + 1; }
static void bad_all_reserved(memd_device_spec *s)
{
    s->groups[1].regions[1].allocatable = false;
    s->policy[1][MEMD_CLASS_CONSTANT].enabled = false;
}
static void bad_policy_reserved(memd_device_spec *s) { s->policy[1][MEMD_CLASS_INTERNAL].region = 0; }
static void bad_policy_region(memd_device_spec *s) { s->policy[0][MEMD_CLASS_CODE].region = 5; }
static void bad_policy_align(memd_device_spec *s) { s->policy[0][MEMD_CLASS_CONSTANT].alignment = 3000; }
static void bad_policy_dir(memd_device_spec *s) { s->policy[0][MEMD_CLASS_CONSTANT].dir = (memd_dir)7; }
static void bad_policy_absent_group(memd_device_spec *s)
{
    memd_bank_group_spec *g = &s->groups[1];
    g->banks = 0;
    g->nregions = 0;
}
static void bad_regions_no_banks(memd_device_spec *s)
{
    memd_device_spec_default_policy(s);
    s->groups[1].banks = 0;
    for (int c = 0; c < MEMD_CLASS_COUNT; c++)
        s->policy[1][c].enabled = false;
}
static void bad_tiny_region(memd_device_spec *s)
{
    s->groups[1].regions[1].base = 128 * KiB + 8;
    s->groups[1].regions[1].size = 16;
}
static void bad_no_name(memd_device_spec *s) { s->name[0] = 0; }
static void bad_page_pow2(memd_device_spec *s) { s->groups[0].page_size = 3000; }
static void bad_page_below_align(memd_device_spec *s) { s->groups[1].page_size = 8; }
static void bad_page_over_bank(memd_device_spec *s) { s->groups[0].page_size = 2 * GiB; }
static void bad_policy_page(memd_device_spec *s) { s->policy[0][MEMD_CLASS_INTERNAL].page_size = 24; }
static void bad_texture_pitch(memd_device_spec *s) { s->texture.pitch_alignment = 100; }
static void bad_texture_width(memd_device_spec *s) { s->texture.max_width = 0; }
static void bad_offset_negative(memd_device_spec *s)
{
    /* reserved [0,128K) is not addressed; buffers start at 128 KiB */
    s->groups[1].bank_offsets = calloc(64, sizeof(int64_t));
    s->groups[1].bank_offsets[3] = -(int64_t)(128 * KiB) - 1;
}
static void bad_offset_overflow(memd_device_spec *s)
{
    s->groups[0].bank_size = UINT64_MAX; /* bank 1's offset of 1 GiB now runs past 2^64 */
}
static void bad_no_memory(memd_device_spec *s)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        free(s->groups[k].bank_offsets);
        memset(&s->groups[k], 0, sizeof(s->groups[k]));
        for (int c = 0; c < MEMD_CLASS_COUNT; c++)
            s->policy[k][c].enabled = false;
    }
    s->texture.enabled = false;
}

static const struct {
    spec_mutator fn;
    const char *msg;
} bad_specs[] = {
    {bad_overlap, "dram region 'data' [0x3ffffff, 0x3bffffff) overlaps region 'code' [0x0, 0x4000000)"},
    {bad_exceeds, "dram region 'logging' [0x3c000000, +0x4000001) exceeds the bank size 0x40000000"},
    {bad_base_past_bank, "dram region 'logging' [0x80000000, +0x1) exceeds the bank size"},
    {bad_size_overflow, "region 'logging' [0x3c000000, +0xfffffffffffffffa) exceeds the bank size"},
    {bad_zero_region, "sram region 'reserved' has size 0"},
    {bad_dup_region, "dram region 'code' is defined twice"},
    {bad_noname_region, "dram region 0 has no name"},
    {bad_alignment, "dram alignment 48 is not a power of two"},
    {bad_alignment0, "sram alignment 0 is not a power of two"},
    {bad_bank_size0, "sram bank size is 0"},
    {bad_too_many_banks, "sram has 65537 banks, at most 65536 allowed"},
    {bad_no_regions, "sram needs 1 to 8 regions, has 0"},
    {bad_too_many_regions, "sram needs 1 to 8 regions, has 9"},
    {bad_all_reserved, "sram has no allocatable region"},
    {bad_policy_reserved, "class internal names sram region 'reserved', which is not allocatable"},
    {bad_policy_region, "class code names dram region 5, which does not exist"},
    {bad_policy_align, "class constant in dram: alignment 3000 is not a power of two"},
    {bad_policy_dir, "class constant in dram has a bad direction"},
    {bad_policy_absent_group, "class code uses sram, which the device lacks"},
    {bad_regions_no_banks, "sram has regions but no banks"},
    {bad_tiny_region, "sram region 'buffers' [0x20008, +0x10) holds no whole 16-byte alignment unit"},
    {bad_no_name, "device 7 has no name"},
    {bad_page_pow2, "dram page_size 3000 is not a power of two"},
    {bad_page_below_align, "sram page_size 8 is below the group's alignment"},
    {bad_page_over_bank, "dram page_size 2147483648 is larger than a bank"},
    {bad_policy_page, "class internal in dram: page_size 24 is not a power of two"},
    {bad_texture_pitch, "texture pitch_alignment 100 is not a power of two"},
    {bad_texture_width, "texture max_width and max_height must be > 0"},
    {bad_offset_negative, "sram bank 3 offset -131073 puts address 0x20000 below 0"},
    {bad_offset_overflow, "dram bank 1 offset 1073741824 overflows 64-bit addresses"},
    {bad_no_memory, "device 'wh' has no memory"},
};

START_TEST(test_validation_rejects)
{
    memd_device_spec s;
    wormhole_spec(&s);
    bad_specs[_i].fn(&s);
    memd_device *d = (memd_device *)&s; /* must be reset to NULL on failure */
    memd_error err = {0};
    ck_assert_int_eq(memd_device_create(&s, &d, &err), -EINVAL);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(err.msg, bad_specs[_i].msg) != NULL, "case %d: got '%s', want '%s'", _i,
                  err.msg, bad_specs[_i].msg);
    ck_assert_int_eq(memd_device_spec_validate(&s, &err), -EINVAL);
    memd_device_spec_free(&s);
}
END_TEST

START_TEST(test_validation_accepts_good_specs)
{
    memd_device_spec s;
    wormhole_spec(&s);
    memd_error err = {0};
    ck_assert_int_eq(memd_device_spec_validate(&s, &err), 0);
    ck_assert_str_eq(err.msg, "");
    /* A negative offset that keeps every allocatable byte at or above 0 is fine
     * (tt-metal's storage-core banks sit below the compute banks). */
    s.groups[1].bank_offsets = calloc(64, sizeof(int64_t));
    s.groups[1].bank_offsets[3] = -(int64_t)(128 * KiB);
    memd_device *d = create_ok(&s);
    uint64_t abs;
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_SRAM, 3, 128 * KiB, &abs), 0);
    ck_assert_uint_eq(abs, 0);
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_SRAM, 3, 128 * KiB - 16, &abs), -ERANGE);
    memd_device_destroy(d);
    memd_device_spec_free(&s);
}
END_TEST

/* A class's default page: its policy's, else its group's; 0 is one page. */
START_TEST(test_default_page_sizes)
{
    memd_device_spec s;
    wormhole_spec(&s);
    ck_assert_uint_eq(memd_device_page_size(&s, MEMD_KIND_DRAM, MEMD_CLASS_CONSTANT), 0);
    s.groups[0].page_size = 2048;
    s.policy[0][MEMD_CLASS_INTERNAL].page_size = 8192;
    ck_assert_uint_eq(memd_device_page_size(&s, MEMD_KIND_DRAM, MEMD_CLASS_CONSTANT), 2048);
    ck_assert_uint_eq(memd_device_page_size(&s, MEMD_KIND_DRAM, MEMD_CLASS_INTERNAL), 8192);
    ck_assert_uint_eq(memd_device_page_size(&s, MEMD_KIND_SRAM, MEMD_CLASS_INTERNAL), 0);
    /* The limits: the group's alignment and a whole bank are both page sizes. */
    const memd_bank_group_spec *g = &s.groups[0];
    ck_assert_ptr_null(memd_page_size_problem(g, g->alignment));
    ck_assert_ptr_null(memd_page_size_problem(g, g->bank_size));
    ck_assert_str_eq(memd_page_size_problem(g, g->alignment / 2), "is below the group's alignment");
    ck_assert_str_eq(memd_page_size_problem(g, 0), "is not a power of two");
    memd_device_destroy(create_ok(&s));
    memd_device_spec_free(&s);
}
END_TEST

START_TEST(test_device_owns_its_copy)
{
    memd_device_spec s;
    wormhole_spec(&s);
    memd_device *d = create_ok(&s);
    memd_device_spec_free(&s); /* the device must not point into the caller's spec */
    memset(&s, 0xa5, sizeof(s));
    const memd_device_spec *c = memd_device_spec_of(d);
    ck_assert_str_eq(c->name, "wh");
    ck_assert_uint_eq(c->groups[MEMD_KIND_DRAM].banks, 12);
    ck_assert_int_eq(c->groups[MEMD_KIND_DRAM].bank_offsets[11], (int64_t)GiB);
    memd_device_destroy(d);
    memd_device_destroy(NULL);
    ck_assert_ptr_null(memd_device_spec_of(NULL));
}
END_TEST

START_TEST(test_spec_copy)
{
    memd_device_spec s, c;
    wormhole_spec(&s);
    ck_assert_int_eq(memd_device_spec_copy(&c, &s), 0);
    ck_assert_ptr_ne(c.groups[0].bank_offsets, s.groups[0].bank_offsets);
    ck_assert_ptr_null(c.groups[1].bank_offsets);
    ck_assert_int_eq(memcmp(c.groups[0].bank_offsets, s.groups[0].bank_offsets, 12 * sizeof(int64_t)), 0);
    memd_device_spec_free(&s);
    ck_assert_int_eq(c.groups[0].bank_offsets[1], (int64_t)GiB);
    memd_device_spec_free(&c);
    memd_device_spec_free(&c); /* idempotent */
    memd_device_spec_free(NULL);
}
END_TEST

/* ---- default policy ---- */

START_TEST(test_default_policy)
{
    memd_device_spec s;
    wormhole_spec(&s);
    const memd_class_policy *p = s.policy[MEMD_KIND_DRAM];
    ck_assert(p[MEMD_CLASS_CODE].enabled);
    ck_assert_uint_eq(p[MEMD_CLASS_CODE].region, 0);
    ck_assert_int_eq(p[MEMD_CLASS_CODE].dir, MEMD_DIR_BOTTOM_UP);
    ck_assert_uint_eq(p[MEMD_CLASS_CONSTANT].region, 1);
    ck_assert_int_eq(p[MEMD_CLASS_CONSTANT].dir, MEMD_DIR_BOTTOM_UP);
    ck_assert_uint_eq(p[MEMD_CLASS_PLACEHOLDER].region, 1);
    ck_assert_int_eq(p[MEMD_CLASS_PLACEHOLDER].dir, MEMD_DIR_TOP_DOWN);
    ck_assert_uint_eq(p[MEMD_CLASS_INTERNAL].region, 1);
    ck_assert_int_eq(p[MEMD_CLASS_INTERNAL].dir, MEMD_DIR_TOP_DOWN);
    ck_assert_uint_eq(p[MEMD_CLASS_LOGGING].region, 2);
    ck_assert_int_eq(p[MEMD_CLASS_LOGGING].dir, MEMD_DIR_BOTTOM_UP);
    const memd_class_policy *q = s.policy[MEMD_KIND_SRAM];
    for (int c = 0; c < MEMD_CLASS_LOGGING; c++) {
        ck_assert(q[c].enabled);
        ck_assert_uint_eq(q[c].region, 1);
        ck_assert_int_eq(q[c].dir, MEMD_DIR_TOP_DOWN);
        ck_assert_uint_eq(q[c].alignment, 0);
        ck_assert_int_eq(q[c].fit, MEMD_FIT_FIRST);
    }
    ck_assert(!q[MEMD_CLASS_LOGGING].enabled);
    memd_device_spec_free(&s);

    /* Only a data region: code goes top-down in data, logging is not offered. */
    memset(&s, 0, sizeof(s));
    snprintf(s.name, sizeof(s.name), "plain");
    s.groups[0].banks = 2;
    s.groups[0].bank_size = MiB;
    s.groups[0].alignment = 32;
    add_region(&s.groups[0], "data", 0, MiB, true);
    memd_device_spec_default_policy(&s);
    ck_assert(s.policy[0][MEMD_CLASS_CODE].enabled);
    ck_assert_uint_eq(s.policy[0][MEMD_CLASS_CODE].region, 0);
    ck_assert_int_eq(s.policy[0][MEMD_CLASS_CODE].dir, MEMD_DIR_TOP_DOWN);
    ck_assert(!s.policy[0][MEMD_CLASS_LOGGING].enabled);
    for (int c = 0; c < MEMD_CLASS_COUNT; c++)
        ck_assert(!s.policy[1][c].enabled);
    memd_device *d = create_ok(&s);
    memd_placement pl;
    memd_alloc_req r = bytes_req(MEMD_CLASS_LOGGING, MEMD_SCOPE_DRAM, 64);
    ck_assert_int_eq(memd_device_footprint(d, &r, &pl), -EOPNOTSUPP);
    r = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_SRAM, 64);
    ck_assert_int_eq(memd_device_alloc(d, &r, &pl), -EOPNOTSUPP);
    r = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM_TEXTURE, 0);
    r.dtype = MEMD_DTYPE_U8;
    r.ndim = 2;
    r.shape[0] = r.shape[1] = 4;
    ck_assert_int_eq(memd_device_footprint(d, &r, &pl), -EOPNOTSUPP);
    r = bytes_req(MEMD_CLASS_CODE, MEMD_SCOPE_DRAM, 100);
    ck_assert_int_eq(memd_device_alloc(d, &r, &pl), 0);
    ck_assert_uint_eq(pl.address, MiB - 128); /* top-down, 100 -> 128 */
    memd_device_destroy(d);
}
END_TEST

/* ---- footprints ---- */

static memd_placement footprint_ok(memd_device *d, const memd_alloc_req *r)
{
    memd_placement p;
    memset(&p, 0xff, sizeof(p));
    int rc = memd_device_footprint(d, r, &p);
    ck_assert_msg(rc == 0, "footprint: %d", rc);
    ck_assert_uint_eq(p.address, 0);
    return p;
}

START_TEST(test_lockstep_sizing)
{
    memd_device *d = wormhole_device();
    memd_alloc_req r = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 1000);
    memd_placement p;

    /* One page (page_size 0): every bank reserves the whole padded buffer. */
    p = footprint_ok(d, &r);
    ck_assert_int_eq(p.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(p.region, 1);
    ck_assert_uint_eq(p.size_per_bank, 1024);
    ck_assert_uint_eq(p.banks, 12);
    ck_assert_uint_eq(p.page_size, 1024);
    ck_assert_uint_eq(p.pitch, 0);

    /* 10 pages of 100 over 12 banks: 1 page of 128 per bank. */
    r.page_size = 100;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 128);
    ck_assert_uint_eq(p.page_size, 128);
    ck_assert_uint_eq(p.banks, 12);

    /* over 4 banks: ceil(10/4) = 3 pages -> 384 */
    r.banks = 4;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 384);
    ck_assert_uint_eq(p.banks, 4);

    /* 25 pages of 2048 over 12 banks: ceil(25/12) = 3 -> 6144 */
    r.bytes = 25 * 2048;
    r.page_size = 2048;
    r.banks = 0;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 3 * 2048);
    /* 24 pages: exactly 2 per bank */
    r.bytes = 24 * 2048;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 2 * 2048);
    /* a short last page still takes a page slot: 24 pages + 1 byte = 25 pages */
    r.bytes = 24 * 2048 + 1;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 3 * 2048);
    /* one bank */
    r.banks = 1;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 25 * 2048);

    /* SRAM: 64 banks, alignment 16; 100 pages of 1000 -> 2 pages of 1008 */
    r = bytes_req(MEMD_CLASS_PLACEHOLDER, MEMD_SCOPE_SRAM, 100 * 1000);
    r.page_size = 1000;
    p = footprint_ok(d, &r);
    ck_assert_int_eq(p.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(p.region, 1);
    ck_assert_uint_eq(p.page_size, 1008);
    ck_assert_uint_eq(p.size_per_bank, 2 * 1008);
    ck_assert_uint_eq(p.banks, 64);

    /* banks beyond the group */
    r.banks = 65;
    ck_assert_int_eq(memd_device_footprint(d, &r, &p), -EINVAL);
    r.banks = 64;
    ck_assert_int_eq(memd_device_footprint(d, &r, &p), 0);
    memd_device_destroy(d);
}
END_TEST

START_TEST(test_shape_footprints)
{
    memd_device *d = wormhole_device();
    memd_alloc_req r = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 0);
    memd_placement p;
    r.dtype = MEMD_DTYPE_F32;
    r.ndim = 2;
    r.shape[0] = 3;
    r.shape[1] = 5; /* 60 bytes -> one page of 64 */
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 64);

    r.dtype = MEMD_DTYPE_BF16; /* 1x3x32x32 bf16 = 6144 bytes, pages of 2048 over 12 banks */
    r.ndim = 4;
    r.shape[0] = 1;
    r.shape[1] = 3;
    r.shape[2] = 32;
    r.shape[3] = 32;
    r.page_size = 2048;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 2048);

    /* errors */
    memd_alloc_req e = r;
    e.bytes = 6144; /* both bytes and shape */
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.shape[2] = 0;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.ndim = 0;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.ndim = MEMD_MAX_DIMS + 1;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.dtype = (memd_dtype)99;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.shape[0] = e.shape[1] = e.shape[2] = e.shape[3] = UINT64_C(1) << 20;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EOVERFLOW);
    e = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 0); /* neither */
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 64);
    e.ndim = 2; /* a shape without dtype */
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);

    /* larger than the region, or overflowing the page padding */
    e = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, GiB - 128 * MiB + 1);
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -E2BIG);
    e.bytes = GiB - 128 * MiB;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), 0);
    e.bytes = UINT64_MAX - 3;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EOVERFLOW);
    e.bytes = UINT64_MAX;
    e.page_size = 1;
    e.banks = 1; /* 2^64-1 pages of 32 bytes */
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EOVERFLOW);

    /* bad enums and alignment */
    e = bytes_req((memd_class)9, MEMD_SCOPE_DRAM, 64);
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = bytes_req(MEMD_CLASS_CODE, (memd_scope)9, 64);
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = bytes_req(MEMD_CLASS_CODE, MEMD_SCOPE_DRAM, 64);
    e.alignment = 96;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    ck_assert_int_eq(memd_device_footprint(NULL, &e, &p), -EINVAL);
    memd_device_destroy(d);
}
END_TEST

START_TEST(test_texture_footprints)
{
    memd_device_spec s;
    wormhole_spec(&s);
    memd_device *d = create_ok(&s);
    memd_alloc_req r = bytes_req(MEMD_CLASS_PLACEHOLDER, MEMD_SCOPE_DRAM_TEXTURE, 0);
    memd_placement p;
    r.dtype = MEMD_DTYPE_F16;
    r.ndim = 2;
    r.shape[0] = 10; /* height */
    r.shape[1] = 33; /* width: 33 * 4 * 2 = 264 bytes -> pitch 512 */
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.pitch, 512);
    ck_assert_uint_eq(p.page_size, 512);
    ck_assert_uint_eq(p.size_per_bank, 512); /* 10 rows over 12 banks */
    ck_assert_uint_eq(p.banks, 12);
    ck_assert_int_eq(p.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(p.region, 1);

    r.banks = 1; /* all rows in one bank: pitch * height */
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 5120);
    r.banks = 3; /* ceil(10/3) = 4 rows */
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 4 * 512);

    /* [h, w, 4] is the same texture; the page size may be given as the pitch */
    r.ndim = 3;
    r.shape[2] = 4;
    r.page_size = 512;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.size_per_bank, 4 * 512);
    ck_assert_uint_eq(p.pitch, 512);

    /* row exactly a multiple of the pitch alignment: no padding (64 * 4 * 4 = 1024) */
    r.dtype = MEMD_DTYPE_F32;
    r.shape[1] = 64;
    r.page_size = 0;
    r.banks = 1;
    p = footprint_ok(d, &r);
    ck_assert_uint_eq(p.pitch, 1024);
    ck_assert_uint_eq(p.size_per_bank, 10 * 1024);

    /* limits: width 4096, height 2048 */
    memd_alloc_req e = r;
    e.shape[1] = 4096;
    e.shape[0] = 2048;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), 0);
    ck_assert_uint_eq(p.pitch, 4096 * 16);
    ck_assert_uint_eq(p.size_per_bank, 2048ull * 4096 * 16);
    e.shape[1] = 4097;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -E2BIG);
    e.shape[1] = 4096;
    e.shape[0] = 2049;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -E2BIG);

    /* malformed texture requests */
    e = r;
    e.shape[2] = 3; /* 3 channels */
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.ndim = 1;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.shape[0] = 0;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.dtype = MEMD_DTYPE_NONE; /* bytes are not a texture */
    e.bytes = 4096;
    e.ndim = 0;
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);
    e = r;
    e.page_size = 256; /* rows are the pages */
    ck_assert_int_eq(memd_device_footprint(d, &e, &p), -EINVAL);

    /* texture alloc carries the pitch */
    r.banks = 0;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), 0);
    ck_assert_uint_eq(p.pitch, 1024);
    ck_assert_uint_eq(p.size_per_bank, 1024);
    ck_assert_uint_eq(p.address, GiB - 64 * MiB - 1024); /* placeholder: top of data */
    memd_device_destroy(d);

    /* a device without textures */
    s.texture.enabled = false;
    d = create_ok(&s);
    ck_assert_int_eq(memd_device_footprint(d, &r, &p), -EOPNOTSUPP);
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), -EOPNOTSUPP);
    memd_device_destroy(d);
    memd_device_spec_free(&s);
}
END_TEST

START_TEST(test_scope_not_offered)
{
    memd_device_spec s;
    esperanto_spec(&s); /* DRAM only */
    memd_device *d = create_ok(&s);
    memd_placement p;
    memd_alloc_req r = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_SRAM, 64);
    ck_assert_int_eq(memd_device_footprint(d, &r, &p), -EOPNOTSUPP);
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), -EOPNOTSUPP);
    r.scope = MEMD_SCOPE_DRAM;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), 0);
    memd_range_stats st;
    ck_assert_int_eq(memd_device_group_stats(d, MEMD_KIND_SRAM, &st), -ENOENT);
    uint64_t abs;
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_SRAM, 0, 0, &abs), -ERANGE);
    memd_device_destroy(d);
    memd_device_spec_free(&s);
}
END_TEST

/* ---- placement ---- */

static memd_placement alloc_ok(memd_device *d, memd_class c, uint64_t bytes)
{
    memd_alloc_req r = bytes_req(c, MEMD_SCOPE_DRAM, bytes);
    memd_placement p;
    int rc = memd_device_alloc(d, &r, &p);
    ck_assert_msg(rc == 0, "alloc %s %llu: %d", memd_class_name(c), (unsigned long long)bytes, rc);
    return p;
}

/* Esperanto data region: constants bottom-up, placeholders top-down, until they meet. */
START_TEST(test_class_collision)
{
    memd_device_spec s;
    esperanto_spec(&s);
    memd_device *d = create_ok(&s);
    memd_placement c1 = alloc_ok(d, MEMD_CLASS_CONSTANT, 300 * KiB);
    ck_assert_uint_eq(c1.address, MiB);
    ck_assert_uint_eq(c1.region, 1);
    memd_placement c2 = alloc_ok(d, MEMD_CLASS_CONSTANT, 100 * KiB);
    ck_assert_uint_eq(c2.address, MiB + 300 * KiB);
    memd_placement p1 = alloc_ok(d, MEMD_CLASS_PLACEHOLDER, 200 * KiB);
    ck_assert_uint_eq(p1.address, 2 * MiB - 200 * KiB);
    memd_placement i1 = alloc_ok(d, MEMD_CLASS_INTERNAL, 100 * KiB);
    ck_assert_uint_eq(i1.address, 2 * MiB - 300 * KiB);
    /* 1024 - 300 - 100 - 200 - 100 = 324 KiB left in the middle: one byte more fails */
    memd_alloc_req r = bytes_req(MEMD_CLASS_PLACEHOLDER, MEMD_SCOPE_DRAM, 324 * KiB + 1);
    memd_placement p;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), -ENOMEM);
    r.cls = MEMD_CLASS_CONSTANT;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), -ENOMEM);
    memd_range_stats st;
    ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_DRAM, 1, &st), 0);
    ck_assert_uint_eq(st.largest_free, 324 * KiB);
    ck_assert_uint_eq(st.largest_free_addr, MiB + 400 * KiB);
    ck_assert_uint_eq(st.allocations, 4);
    /* exactly the gap: the two directions meet with nothing between them */
    memd_placement last = alloc_ok(d, MEMD_CLASS_PLACEHOLDER, 324 * KiB);
    ck_assert_uint_eq(last.address, MiB + 400 * KiB);
    r.bytes = 1;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), -ENOMEM);
    /* code and logging live in their own regions and are unaffected */
    memd_placement code = alloc_ok(d, MEMD_CLASS_CODE, 4096);
    ck_assert_uint_eq(code.address, 0);
    ck_assert_uint_eq(code.region, 0);
    memd_placement log = alloc_ok(d, MEMD_CLASS_LOGGING, 4096);
    ck_assert_uint_eq(log.address, 2 * MiB);
    ck_assert_uint_eq(log.region, 2);
    /* free a constant: the next constant takes its place (bottom-up first fit) */
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_DRAM, 1, c1.address), 0);
    memd_placement c3 = alloc_ok(d, MEMD_CLASS_CONSTANT, 64);
    ck_assert_uint_eq(c3.address, MiB);
    /* a top-down placeholder takes the highest part of the freed hole */
    memd_placement p2 = alloc_ok(d, MEMD_CLASS_PLACEHOLDER, 64);
    ck_assert_uint_eq(p2.address, MiB + 300 * KiB - 64);
    ck_assert_int_eq(memd_device_group_stats(d, MEMD_KIND_DRAM, &st), 0);
    ck_assert_uint_eq(st.total, 3 * MiB);
    ck_assert_uint_eq(st.allocations, 8);
    ck_assert_uint_eq(st.allocated, 4096 + 4096 + 100 * KiB + 200 * KiB + 100 * KiB + 324 * KiB + 128);
    ck_assert_uint_eq(st.free, st.total - st.allocated);
    /* code and logging regions both have MiB - 4096 left: the lower address wins */
    ck_assert_uint_eq(st.largest_free, MiB - 4096);
    ck_assert_uint_eq(st.largest_free_addr, 4096);
    memd_device_destroy(d);
    memd_device_spec_free(&s);
}
END_TEST

/* GMEM: constants 4 KiB aligned, bottom-up; activations keep the NoC alignment. */
START_TEST(test_gmem_constant_alignment)
{
    memd_device_spec s;
    esperanto_spec(&s);
    s.policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].alignment = 4096;
    memd_device *d = create_ok(&s);
    memd_placement a = alloc_ok(d, MEMD_CLASS_CONSTANT, 100);
    ck_assert_uint_eq(a.address, MiB);
    ck_assert_uint_eq(a.size_per_bank, 128);
    memd_placement b = alloc_ok(d, MEMD_CLASS_CONSTANT, 5000);
    ck_assert_uint_eq(b.address, MiB + 4096);
    memd_placement c = alloc_ok(d, MEMD_CLASS_CONSTANT, 1);
    ck_assert_uint_eq(c.address, MiB + 12288);
    memd_placement p = alloc_ok(d, MEMD_CLASS_PLACEHOLDER, 100);
    ck_assert_uint_eq(p.address, 2 * MiB - 128); /* 64-byte group alignment only */
    /* a request may ask for more alignment than its class */
    memd_alloc_req r = bytes_req(MEMD_CLASS_PLACEHOLDER, MEMD_SCOPE_DRAM, 100);
    r.alignment = 64 * KiB;
    memd_placement q;
    ck_assert_int_eq(memd_device_alloc(d, &r, &q), 0);
    ck_assert_uint_eq(q.address, 2 * MiB - 64 * KiB);
    /* ... but never less than its class */
    r.cls = MEMD_CLASS_CONSTANT;
    r.alignment = 1;
    ck_assert_int_eq(memd_device_alloc(d, &r, &q), 0);
    ck_assert_uint_eq(q.address, MiB + 16384);
    memd_device_destroy(d);
    memd_device_spec_free(&s);
}
END_TEST

START_TEST(test_sram_top_down_and_bank_addresses)
{
    memd_device *d = wormhole_device();
    memd_alloc_req r = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_SRAM, 64 * 2048);
    r.page_size = 2048;
    memd_placement p;
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), 0);
    ck_assert_uint_eq(p.size_per_bank, 2048);
    ck_assert_uint_eq(p.address, MiB - 2048);
    ck_assert_int_eq(memd_device_alloc(d, &r, &p), 0);
    ck_assert_uint_eq(p.address, MiB - 4096);

    /* DRAM bank addresses: offsets alternate 0 and 1 GiB */
    memd_placement q = alloc_ok(d, MEMD_CLASS_CONSTANT, 12 * 4096);
    ck_assert_uint_eq(q.address, 64 * MiB);
    uint64_t abs;
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_DRAM, 0, q.address, &abs), 0);
    ck_assert_uint_eq(abs, 64 * MiB);
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_DRAM, 1, q.address, &abs), 0);
    ck_assert_uint_eq(abs, GiB + 64 * MiB);
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_DRAM, 11, q.address, &abs), 0);
    ck_assert_uint_eq(abs, GiB + 64 * MiB);
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_DRAM, 12, q.address, &abs), -ERANGE);
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_DRAM, 1, UINT64_MAX - 5, &abs), -ERANGE);
    ck_assert_int_eq(memd_device_bank_address(d, (memd_kind)5, 0, 0, &abs), -EINVAL);
    /* no offsets: absolute = address */
    ck_assert_int_eq(memd_device_bank_address(d, MEMD_KIND_SRAM, 63, p.address, &abs), 0);
    ck_assert_uint_eq(abs, MiB - 4096);
    memd_device_destroy(d);
}
END_TEST

START_TEST(test_alloc_at_and_free)
{
    memd_device_spec s;
    esperanto_spec(&s);
    memd_device *d = create_ok(&s);
    memd_placement p = {.kind = MEMD_KIND_DRAM, .region = 1, .address = MiB + 4096,
                        .size_per_bank = 8192, .banks = 1, .page_size = 8192};
    ck_assert_int_eq(memd_device_alloc_at(d, &p), 0);
    ck_assert_int_eq(memd_device_alloc_at(d, &p), -EBUSY);
    memd_placement o = p;
    o.address = MiB;
    o.size_per_bank = 4160; /* overlaps by 64 */
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EBUSY);
    o.size_per_bank = 4096; /* touches only */
    ck_assert_int_eq(memd_device_alloc_at(d, &o), 0);
    /* the next constant goes after both */
    memd_placement c = alloc_ok(d, MEMD_CLASS_CONSTANT, 64);
    ck_assert_uint_eq(c.address, MiB + 12288);

    o = p;
    o.banks = 2; /* the group has one bank */
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EINVAL);
    o = p;
    o.banks = 0;
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EINVAL);
    o = p;
    o.size_per_bank = 0;
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EINVAL);
    o = p;
    o.region = 7; /* no such region */
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EINVAL);
    o = p;
    o.address = 2 * MiB - 64; /* leaves the region */
    o.size_per_bank = 128;
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EINVAL);
    o = p;
    o.kind = MEMD_KIND_SRAM;
    ck_assert_int_eq(memd_device_alloc_at(d, &o), -EINVAL);

    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_DRAM, 1, p.address), 0);
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_DRAM, 1, p.address), -ENOENT);
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_DRAM, 1, p.address + 64), -ENOENT);
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_DRAM, 0, c.address), -ENOENT);
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_DRAM, 200, 0), -ENOENT);
    ck_assert_int_eq(memd_device_free(d, MEMD_KIND_SRAM, 0, 0), -ENOENT);
    ck_assert_int_eq(memd_device_free(d, (memd_kind)3, 0, 0), -EINVAL);
    ck_assert_int_eq(memd_device_alloc_at(d, &p), 0); /* free again after the free */

    memd_range_stats st;
    ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_DRAM, 1, &st), 0);
    ck_assert_uint_eq(st.allocations, 3);
    ck_assert_uint_eq(st.allocated, 8192 + 4096 + 64);
    ck_assert_ptr_nonnull(memd_device_region_range(d, MEMD_KIND_DRAM, 1));
    ck_assert_ptr_null(memd_device_region_range(d, MEMD_KIND_SRAM, 0));
    ck_assert_ptr_null(memd_device_region_range(d, MEMD_KIND_DRAM, 3));
    memd_device_destroy(d);
    memd_device_spec_free(&s);
}
END_TEST

START_TEST(test_reserved_region_not_allocatable)
{
    memd_device *d = wormhole_device();
    memd_placement p = {.kind = MEMD_KIND_SRAM, .region = 0, .address = 0,
                        .size_per_bank = 64, .banks = 1};
    ck_assert_int_eq(memd_device_alloc_at(d, &p), -EINVAL);
    memd_range_stats st;
    ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_SRAM, 0, &st), -ENOENT);
    ck_assert_int_eq(memd_device_region_stats(d, MEMD_KIND_SRAM, 1, &st), 0);
    ck_assert_uint_eq(st.total, MiB - 128 * KiB);
    ck_assert_int_eq(memd_device_group_stats(d, MEMD_KIND_SRAM, &st), 0);
    ck_assert_uint_eq(st.total, MiB - 128 * KiB); /* reserved bytes are not counted */
    ck_assert_uint_eq(st.largest_free, MiB - 128 * KiB);
    ck_assert_uint_eq(st.largest_free_addr, 128 * KiB);
    ck_assert_int_eq(memd_device_group_stats(d, (memd_kind)4, &st), -EINVAL);
    memd_device_destroy(d);
}
END_TEST

START_TEST(test_region_find)
{
    memd_device_spec s;
    wormhole_spec(&s);
    ck_assert_int_eq(memd_region_find(&s.groups[0], "code"), 0);
    ck_assert_int_eq(memd_region_find(&s.groups[0], "logging"), 2);
    ck_assert_int_eq(memd_region_find(&s.groups[1], "buffers"), 1);
    ck_assert_int_eq(memd_region_find(&s.groups[1], "data"), -ENOENT);
    memd_device_spec_free(&s);
}
END_TEST


START_TEST(test_describe_errors)
{
    memd_device_spec s;
    esperanto_spec(&s);
    memd_device *et = create_ok(&s);
    memd_device_spec_free(&s);
    wormhole_spec(&s);
    memd_device *wh = create_ok(&s);
    memd_device_spec_free(&s);
    char buf[256];
    memd_placement p;

    memd_alloc_req r = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_SRAM, 64);
    int rc = memd_device_alloc(et, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(et, &r, rc, buf, sizeof(buf)),
                     "device 'et' does not offer scope sram");
    r = bytes_req(MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM_TEXTURE, 0);
    r.dtype = MEMD_DTYPE_U8;
    r.ndim = 2;
    r.shape[0] = r.shape[1] = 8;
    rc = memd_device_alloc(et, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(et, &r, rc, buf, sizeof(buf)),
                     "device 'et' does not offer scope dram.texture");
    r = bytes_req(MEMD_CLASS_LOGGING, MEMD_SCOPE_SRAM, 64);
    rc = memd_device_alloc(wh, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "device 'wh' does not offer class logging in scope sram");

    r = bytes_req(MEMD_CLASS_PLACEHOLDER, MEMD_SCOPE_DRAM_TEXTURE, 0);
    r.dtype = MEMD_DTYPE_F32;
    r.ndim = 2;
    r.shape[0] = 10;
    r.shape[1] = 5000;
    rc = memd_device_footprint(wh, &r, &p);
    ck_assert_int_eq(rc, -E2BIG);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "texture 10 x 5000 (height x width) exceeds device 'wh' limit of 2048 x 4096");

    r = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 600 * KiB);
    ck_assert_int_eq(memd_device_alloc(et, &r, &p), 0);
    rc = memd_device_alloc(et, &r, &p);
    ck_assert_int_eq(rc, -ENOMEM);
    ck_assert_str_eq(memd_device_describe_error(et, &r, rc, buf, sizeof(buf)),
                     "no room for 614400 bytes per bank in dram region 'data' of device 'et' "
                     "(largest free block 434176, 434176 free)");

    r = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 64);
    r.banks = 13;
    rc = memd_device_footprint(wh, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "invalid dram request on device 'wh': 13 banks requested, but dram of device 'wh' has 12");
    r.banks = 0;
    r.alignment = 3;
    rc = memd_device_footprint(wh, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "invalid dram request on device 'wh': alignment 3 is not a power of two");
    /* A power of two, but no address of a bank is aligned to it: invalid, not "no room". */
    r.alignment = UINT64_C(1) << 63;
    rc = memd_device_alloc(wh, &r, &p);
    ck_assert_int_eq(rc, -EINVAL);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "invalid dram request on device 'wh': alignment 9223372036854775808 exceeds "
                     "the bank size 1073741824 of dram");
    r.alignment = memd_device_spec_of(wh)->groups[MEMD_KIND_DRAM].bank_size * 2;
    ck_assert_int_eq(memd_device_footprint(wh, &r, &p), -EINVAL);
    r.alignment = memd_device_spec_of(wh)->groups[MEMD_KIND_DRAM].bank_size;
    ck_assert_int_eq(memd_device_footprint(wh, &r, &p), 0);
    r = bytes_req(MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 0);
    rc = memd_device_footprint(wh, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "invalid dram request on device 'wh': give bytes, or a shape of 1 to 4 non-zero dimensions with a dtype, not both");
    r.bytes = UINT64_MAX;
    rc = memd_device_footprint(wh, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "dram constant request on device 'wh': size overflows 64 bits");
    r.bytes = GiB;
    rc = memd_device_footprint(wh, &r, &p);
    ck_assert_str_eq(memd_device_describe_error(wh, &r, rc, buf, sizeof(buf)),
                     "dram constant buffer is larger than its region on device 'wh'");
    memd_device_destroy(et);
    memd_device_destroy(wh);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("device");
    TCase *tc = tcase_create("device");
    tcase_add_test(tc, test_names_round_trip);
    tcase_add_test(tc, test_names_aliases_and_errors);
    tcase_add_test(tc, test_dtype_sizes);
    tcase_add_loop_test(tc, test_validation_rejects, 0, (int)(sizeof(bad_specs) / sizeof(bad_specs[0])));
    tcase_add_test(tc, test_validation_accepts_good_specs);
    tcase_add_test(tc, test_default_page_sizes);
    tcase_add_test(tc, test_device_owns_its_copy);
    tcase_add_test(tc, test_spec_copy);
    tcase_add_test(tc, test_default_policy);
    tcase_add_test(tc, test_lockstep_sizing);
    tcase_add_test(tc, test_shape_footprints);
    tcase_add_test(tc, test_texture_footprints);
    tcase_add_test(tc, test_scope_not_offered);
    tcase_add_test(tc, test_class_collision);
    tcase_add_test(tc, test_gmem_constant_alignment);
    tcase_add_test(tc, test_sram_top_down_and_bank_addresses);
    tcase_add_test(tc, test_alloc_at_and_free);
    tcase_add_test(tc, test_reserved_region_not_allocatable);
    tcase_add_test(tc, test_region_find);
    tcase_add_test(tc, test_describe_errors);
    suite_add_tcase(s, tc);
    return s;
}
