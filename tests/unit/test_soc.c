/* memd's own device descriptor format and the YAML layer under it: a full valid
 * descriptor, region layout rules, sizes, and malformed input, each error checked for
 * its exact file:line:col and message. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "config.h"
#include "yaml_doc.h"

#define KiB 1024ull
#define MiB (1024ull * KiB)
#define GiB (1024ull * MiB)

static const char GOOD[] =
    "name: dev\n"                            /* 1 */
    "arch: test\n"                           /* 2 */
    "dram:\n"                                /* 3 */
    "  banks: 4\n"                           /* 4 */
    "  bank_size: 1MiB\n"                    /* 5 */
    "  alignment: 64\n"                      /* 6 */
    "  offsets: [0, 1MiB, 2MiB, 0x300000]\n" /* 7 */
    "  regions:\n"                           /* 8 */
    "    - {name: code, size: 64KiB}\n"      /* 9 */
    "    - {name: data}\n"                   /* 10 */
    "    - {name: logging, size: 128KiB}\n"  /* 11 */
    "sram:\n"                                /* 12 */
    "  banks: 2\n"                           /* 13 */
    "  bank_size: 256KiB\n"                  /* 14 */
    "  regions:\n"                           /* 15 */
    "    - {name: reserved, size: 32KiB}\n"  /* 16 */
    "    - {name: buffers}\n"                /* 17 */
    "texture: {max_width: 1024, max_height: 512, pitch_alignment: 128}\n"
    "policy:\n"                              /* 19 */
    "  dram:\n"                              /* 20 */
    "    constant: {alignment: 4KiB}\n"      /* 21 */
    "    internal: {region: code, dir: bottom_up, fit: best}\n"
    "  l1:\n"                                /* 23 */
    "    constant: {enabled: false}\n";      /* 24 */

static int load(const char *text, memd_device_spec *spec, char *msg, size_t cap)
{
    memd_error err;
    memset(&err, 0, sizeof(err));
    int rc = memd_soc_load_memd_device("t.yaml", text, strlen(text), spec, &err);
    if (rc)
        memd_error_format(&err, msg, cap);
    else
        msg[0] = '\0';
    return rc;
}

/* text's spec into *spec; a load error fails the test with its message. */
static void load_ok(const char *text, memd_device_spec *spec)
{
    char msg[1024];
    int rc = load(text, spec, msg, sizeof(msg));
    ck_assert_msg(rc == 0, "%s", msg);
}

START_TEST(test_good_descriptor)
{
    memd_device_spec s;
    load_ok(GOOD, &s);
    ck_assert_str_eq(s.name, "dev");
    ck_assert_str_eq(s.arch, "test");
    const memd_bank_group_spec *d = &s.groups[MEMD_KIND_DRAM];
    ck_assert_uint_eq(d->banks, 4);
    ck_assert_uint_eq(d->bank_size, MiB);
    ck_assert_uint_eq(d->alignment, 64);
    ck_assert_int_eq(d->bank_offsets[0], 0);
    ck_assert_int_eq(d->bank_offsets[1], (int64_t)MiB);
    ck_assert_int_eq(d->bank_offsets[3], 0x300000);
    ck_assert_uint_eq(d->nregions, 3);
    ck_assert_str_eq(d->regions[0].name, "code");
    ck_assert_uint_eq(d->regions[0].base, 0);
    ck_assert_uint_eq(d->regions[0].size, 64 * KiB);
    ck_assert_str_eq(d->regions[1].name, "data");
    ck_assert_uint_eq(d->regions[1].base, 64 * KiB);
    ck_assert_uint_eq(d->regions[1].size, MiB - 192 * KiB);
    ck_assert_str_eq(d->regions[2].name, "logging");
    ck_assert_uint_eq(d->regions[2].base, MiB - 128 * KiB);
    ck_assert_uint_eq(d->regions[2].size, 128 * KiB);
    for (int i = 0; i < 3; i++)
        ck_assert(d->regions[i].allocatable);
    const memd_bank_group_spec *l = &s.groups[MEMD_KIND_SRAM];
    ck_assert_uint_eq(l->banks, 2);
    ck_assert_uint_eq(l->bank_size, 256 * KiB);
    ck_assert_uint_eq(l->alignment, 16); /* default */
    ck_assert_ptr_null(l->bank_offsets);
    ck_assert(!l->regions[0].allocatable); /* "reserved" defaults to not allocatable */
    ck_assert_uint_eq(l->regions[0].size, 32 * KiB);
    ck_assert(l->regions[1].allocatable);
    ck_assert_uint_eq(l->regions[1].base, 32 * KiB);
    ck_assert_uint_eq(l->regions[1].size, 224 * KiB);
    ck_assert(s.texture.enabled);
    ck_assert_uint_eq(s.texture.max_width, 1024);
    ck_assert_uint_eq(s.texture.max_height, 512);
    ck_assert_uint_eq(s.texture.pitch_alignment, 128);
    /* policy: defaults plus overrides */
    const memd_class_policy *p = s.policy[MEMD_KIND_DRAM];
    ck_assert(p[MEMD_CLASS_CONSTANT].enabled);
    ck_assert_uint_eq(p[MEMD_CLASS_CONSTANT].region, 1);
    ck_assert_int_eq(p[MEMD_CLASS_CONSTANT].dir, MEMD_DIR_BOTTOM_UP);
    ck_assert_uint_eq(p[MEMD_CLASS_CONSTANT].alignment, 4096);
    ck_assert_uint_eq(p[MEMD_CLASS_INTERNAL].region, 0);
    ck_assert_int_eq(p[MEMD_CLASS_INTERNAL].dir, MEMD_DIR_BOTTOM_UP);
    ck_assert_int_eq(p[MEMD_CLASS_INTERNAL].fit, MEMD_FIT_BEST);
    ck_assert_uint_eq(p[MEMD_CLASS_PLACEHOLDER].region, 1);
    ck_assert_int_eq(p[MEMD_CLASS_PLACEHOLDER].dir, MEMD_DIR_TOP_DOWN);
    ck_assert_uint_eq(p[MEMD_CLASS_LOGGING].region, 2);
    ck_assert(!s.policy[MEMD_KIND_SRAM][MEMD_CLASS_CONSTANT].enabled);
    ck_assert(s.policy[MEMD_KIND_SRAM][MEMD_CLASS_PLACEHOLDER].enabled);
    /* the spec builds a device */
    memd_device *dev = NULL;
    memd_error err = {0};
    ck_assert_int_eq(memd_device_create(&s, &dev, &err), 0);
    memd_device_destroy(dev);
    memd_device_spec_free(&s);
}
END_TEST

/* page_size in a bank group and in a class policy; a bad one names the group. */
START_TEST(test_page_sizes)
{
    static const char text[] =
        "name: dev\n"
        "dram:\n"
        "  banks: 4\n"
        "  bank_size: 1MiB\n"
        "  page_size: 2KiB\n"
        "  regions: [{name: data}]\n"
        "policy:\n"
        "  dram:\n"
        "    internal: {page_size: 8KiB}\n";
    memd_device_spec s;
    load_ok(text, &s);
    ck_assert_uint_eq(s.groups[MEMD_KIND_DRAM].page_size, 2048);
    ck_assert_uint_eq(memd_device_page_size(&s, MEMD_KIND_DRAM, MEMD_CLASS_CONSTANT), 2048);
    ck_assert_uint_eq(memd_device_page_size(&s, MEMD_KIND_DRAM, MEMD_CLASS_INTERNAL), 8192);
    memd_device_spec_free(&s);
    char bad[sizeof text];
    memcpy(bad, text, sizeof text);
    char msg[1024];
    memcpy(strstr(bad, "2KiB"), "3KiB", 4);
    ck_assert_int_eq(load(bad, &s, msg, sizeof(msg)), -EINVAL);
    ck_assert_msg(strstr(msg, "t.yaml:1:1: device 'dev': dram page_size 3072 is not a power of two"),
                  "%s", msg);
    memd_device_spec_free(&s);
}
END_TEST

/* The loader does not read past len: the same text cut short at the end of a line is
 * a different (valid) descriptor, and a NUL-free copy without terminator works. */
START_TEST(test_buffer_not_terminated)
{
    size_t len = strlen(GOOD);
    char *copy = malloc(len);
    memcpy(copy, GOOD, len);
    memd_device_spec s;
    memd_error err;
    ck_assert_int_eq(memd_soc_load_memd_device("t.yaml", copy, len, &s, &err), 0);
    memd_device_spec_free(&s);
    /* up to the end of line 17: no texture and no policy */
    const char *cut = strstr(GOOD, "texture:");
    ck_assert_int_eq(memd_soc_load_memd_device("t.yaml", copy, (size_t)(cut - GOOD), &s, &err), 0);
    ck_assert(!s.texture.enabled);
    ck_assert(s.policy[MEMD_KIND_SRAM][MEMD_CLASS_CONSTANT].enabled);
    memd_device_spec_free(&s);
    free(copy);
}
END_TEST

START_TEST(test_region_layout)
{
    /* sizeless region in the middle, one region after it packed to the top, one with
     * an explicit base after it, a gap before an explicit base */
    const char *text =
        "name: lay\n"
        "dram:\n"
        "  banks: 1\n"
        "  bank_size: 0x100000\n"
        "  offsets: 0x10000000\n"
        "  regions:\n"
        "    - {name: a, size: 4KiB}\n"
        "    - {name: b, base: 16KiB, size: 4KiB}\n"
        "    - {name: c, allocatable: false}\n"
        "    - {name: d, size: 8KiB}\n"
        "    - {name: e, base: 0xF0000, size: 4KiB}\n"
        "    - {name: f, size: 4KiB}\n";
    memd_device_spec s;
    load_ok(text, &s);
    const memd_bank_group_spec *g = &s.groups[MEMD_KIND_DRAM];
    static const uint64_t base[] = {0, 16 * KiB, 20 * KiB, 0xF0000 - 8 * KiB, 0xF0000, 0x100000 - 4 * KiB};
    static const uint64_t size[] = {4 * KiB, 4 * KiB, 0xF0000 - 8 * KiB - 20 * KiB, 8 * KiB, 4 * KiB, 4 * KiB};
    ck_assert_uint_eq(g->nregions, 6);
    for (int i = 0; i < 6; i++) {
        ck_assert_msg(g->regions[i].base == base[i], "region %d base 0x%llx", i,
                      (unsigned long long)g->regions[i].base);
        ck_assert_msg(g->regions[i].size == size[i], "region %d size 0x%llx", i,
                      (unsigned long long)g->regions[i].size);
    }
    ck_assert(!g->regions[2].allocatable);
    ck_assert_int_eq(g->bank_offsets[0], 0x10000000);
    ck_assert(!s.policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].enabled); /* no "data" */
    memd_device_spec_free(&s);
}
END_TEST

/* ---- malformed descriptors ---- */

typedef struct bad_case {
    const char *text;
    const char *want; /* "t.yaml:L:C: message prefix or substring" */
} bad_case;

#define HEAD "name: d\ndram:\n  banks: 2\n" /* lines 1-3 */

static const bad_case bad[] = {
    /* truncated input */
    {HEAD "  bank_size: 1MiB\n  regions: [ {name: a, size: 1",
     "t.yaml:5:31: invalid YAML: while parsing a flow mapping did not find expected ',' or '}'"},
    {"name: d\ndram:\n  banks: 2\n  bank_size: \"1MiB\n", "t.yaml:5:1: invalid YAML: while scanning a quoted scalar found unexpected end of stream"},
    {"", "t.yaml:1:1: the file is empty: expected a YAML mapping"},
    {"# only a comment\n", "t.yaml:1:1: the file is empty"},
    /* wrong types */
    {"- a\n- b\n", "t.yaml:1:1: expected a device descriptor (a mapping), got a sequence"},
    {HEAD "  bank_size: [1]\n", "t.yaml:4:14: expected a size (an integer such as 4096 or 0x1000"},
    {"name: d\ndram:\n  banks: {n: 2}\n", "t.yaml:3:10: expected an integer, got a mapping"},
    {"name: d\ndram:\n  banks: two\n", "t.yaml:3:10: expected an integer, got 'two'"},
    {"name: d\ndram: 5\n", "t.yaml:2:7: expected dram (a mapping), got a scalar"},
    {HEAD "  bank_size: 1MiB\n  regions: {name: a}\n", "t.yaml:5:12: expected a list of regions (a sequence), got a mapping"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: a, allocatable: yes}]\n", "t.yaml:5:36: expected true or false, got 'yes'"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: [a]}]\n", "t.yaml:5:20: expected a name, got a sequence"},
    {HEAD "  bank_size:\n  regions: []\n", "t.yaml:4:13: expected a size (an integer such as 4096 or 0x1000, optionally with a suffix B, KiB, MiB, GiB, TiB or K, M, G, T), got an empty value"},
    /* negative, overflowing, zero */
    {HEAD "  bank_size: -1\n", "t.yaml:4:14: expected a non-negative size, got '-1'"},
    {"name: d\ndram:\n  banks: -2\n", "t.yaml:3:10: expected a non-negative integer, got '-2'"},
    {HEAD "  bank_size: 99999999999999999999\n", "t.yaml:4:14: size '99999999999999999999' does not fit in 64 bits"},
    {HEAD "  bank_size: 16777216TiB\n", "t.yaml:4:14: size '16777216TiB' does not fit in 64 bits"},
    {HEAD "  bank_size: 0x10000000000000000\n", "t.yaml:4:14: size '0x10000000000000000' does not fit in 64 bits"},
    {HEAD "  bank_size: 0\n", "t.yaml:4:14: expected a bank size > 0, got 0"},
    {"name: d\ndram:\n  banks: 0\n", "t.yaml:3:10: expected at least 1 bank, got 0"},
    {"name: d\ndram:\n  banks: 65537\n", "t.yaml:3:10: integer '65537' is too large (at most 65536)"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: a, size: 0}]\n", "t.yaml:5:29: expected a region size > 0, got 0"},
    {HEAD "  bank_size: 1GB\n", "t.yaml:4:14: expected a size (an integer such as 4096 or 0x1000, optionally with a suffix B, KiB, MiB, GiB, TiB or K, M, G, T), got '1GB' (unknown suffix 'GB')"},
    {HEAD "  bank_size: 1.5GiB\n", "t.yaml:4:14: expected a size"},
    {HEAD "  bank_size: 1MiB\n  alignment: 48\n", "t.yaml:5:14: expected a power of two, got 48"},
    {HEAD "  bank_size: 1MiB\n  offsets: [0, 0x8000000000000000]\n  regions: [{name: a}]\n",
     "t.yaml:5:16: size '0x8000000000000000' does not fit in a signed 64-bit offset"},
    {HEAD "  bank_size: 1MiB\n  offsets: [0, 1, 2]\n", "t.yaml:5:12: expected 2 offsets (one per bank), got 3"},
    {HEAD "  bank_size: 1MiB\n  offsets: {a: 1}\n", "t.yaml:5:12: expected offsets as a list"},
    /* regions that overlap or exceed the bank */
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, size: 64KiB}\n    - {name: b, base: 32KiB, size: 1KiB}\n",
     "t.yaml:7:23: region 'b' [0x8000, 0x8400) overlaps region 'a' [0x0, 0x10000); list regions in address order without overlap"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, base: 64KiB, size: 64KiB}\n    - {name: b, size: 1KiB}\n    - {name: c, base: 0, size: 1KiB}\n",
     "t.yaml:8:23: region 'c' [0x0, 0x400) overlaps region 'b' [0x20000, 0x20400)"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, size: 2MiB}\n", "t.yaml:6:23: region 'a' [0x0, +0x200000) exceeds the bank (bank_size 0x100000)"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, size: 1MiB}\n    - {name: b, size: 1}\n",
     "t.yaml:7:23: region 'b' [0x100000, +0x1) exceeds the bank (bank_size 0x100000)"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, base: 0xFFFFFFFFFFFFFFFF, size: 2}\n",
     "t.yaml:6:23: region 'a' [0xffffffffffffffff, +0x2) exceeds the bank"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, size: 1MiB}\n    - {name: b}\n",
     "t.yaml:7:7: no room left for region 'b' between 0x100000 and 0x100000"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a}\n    - {name: b, size: 2MiB}\n",
     "t.yaml:7:23: region 'b' (0x200000 bytes) does not fit below 0x100000"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, base: 2MiB}\n",
     "t.yaml:6:23: region 'a' starts at 0x200000, past the bank (bank_size 0x100000)"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a}\n    - {name: b}\n",
     "t.yaml:7:7: only one region may leave out 'size' (region 'a' at line 6 already does)"},
    {HEAD "  bank_size: 1MiB\n  regions:\n    - {name: a, size: 1}\n    - {name: a, size: 1}\n",
     "t.yaml:7:14: region 'a' is defined twice (first at line 6)"},
    {HEAD "  bank_size: 1MiB\n  regions: []\n", "t.yaml:5:12: expected at least one region"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: a, size: 1}, {name: b, size: 1}, {name: c, size: 1}, "
          "{name: d, size: 1}, {name: e, size: 1}, {name: f, size: 1}, {name: g, size: 1}, "
          "{name: h, size: 1}, {name: i, size: 1}]\n",
     "t.yaml:5:173: at most 8 regions per bank group"},
    {HEAD "  bank_size: 1MiB\n  alignment: 64\n  regions: [{name: a, base: 8, size: 64}]\n",
     "t.yaml:1:1: device 'd': dram region 'a' [0x8, +0x40) holds no whole 64-byte alignment unit"},
    /* unknown and missing keys */
    {"name: d\nnmae: x\n", "t.yaml:2:1: unknown key 'nmae' in a device descriptor; expected one of: name, arch, dram, sram, texture, policy"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: a, sise: 5}]\n", "t.yaml:5:23: unknown key 'sise' in a dram region; expected one of: name, base, size, allocatable"},
    {HEAD "  bank_size: 1MiB\n  bankz: 3\n", "t.yaml:5:3: unknown key 'bankz' in dram; expected one of: banks, bank_size, alignment, page_size, offsets, regions"},
    {"dram: {banks: 1}\n", "t.yaml:1:1: missing key 'name' in a device descriptor: expected the device's name"},
    {"name: d\narch: x\n", "t.yaml:1:1: a device descriptor needs 'dram', 'sram' or both"},
    {"name: d\nsram:\n  bank_size: 1MiB\n", "t.yaml:3:3: missing key 'banks' in sram: expected the number of banks"},
    {HEAD "  regions: []\n", "t.yaml:3:3: missing key 'bank_size' in dram: expected the size of one bank"},
    {HEAD "  bank_size: 1MiB\n", "t.yaml:3:3: missing key 'regions' in dram: expected a list of regions"},
    {HEAD "  bank_size: 1MiB\n  regions: [{size: 5}]\n", "t.yaml:5:13: missing key 'name' in a dram region: expected the region's name"},
    /* YAML structure */
    {"name: a\nname: b\n", "t.yaml:2:1: duplicate key 'name' (first at line 1, column 1)"},
    {"name: a\ndram: &g {banks: 1}\nsram: *g\n", "t.yaml:3:7: YAML aliases (*g) are not supported"},
    {"name: a\n---\nname: b\n", "t.yaml:2:1: expected a single YAML document"},
    {"? [a]\n: 1\n", "t.yaml:1:3: expected a scalar mapping key, got a sequence"},
    {"name: 'a b'\n", "t.yaml:1:7: expected a name of 1 to 63 letters, digits, '.', '_' or '-', got 'a b'"},
    {"name: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "t.yaml:1:7: expected a name of 1 to 63"},
    /* texture and policy */
    {"name: d\nsram: {banks: 1, bank_size: 1MiB, regions: [{name: buffers}]}\ntexture: {max_width: 1, max_height: 1, pitch_alignment: 64}\n",
     "t.yaml:3:10: dram.texture needs a dram bank group"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\ntexture: {max_width: 0, max_height: 1, pitch_alignment: 64}\n",
     "t.yaml:6:22: expected max_width > 0"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\ntexture: {max_width: 5, max_height: 1, pitch_alignment: 100}\n",
     "t.yaml:6:57: expected a power of two, got 100"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\ntexture: {max_width: 5, max_height: 1}\n",
     "t.yaml:6:10: missing key 'pitch_alignment' in texture: expected the row pitch alignment in bytes"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  dram:\n    constants: {region: data}\n",
     "t.yaml:8:5: unknown buffer class 'constants'; expected code, constant, placeholder, internal or logging"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  dram:\n    constant: {region: weights}\n",
     "t.yaml:8:24: no dram region 'weights' (regions: data)"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: reserved, size: 64}, {name: data}]\npolicy:\n  dram:\n    constant: {region: reserved}\n",
     "t.yaml:8:24: dram region 'reserved' is not allocatable"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  sram:\n    constant: {region: data}\n",
     "t.yaml:7:3: policy for sram, but the device has no sram"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  hbm: {}\n",
     "t.yaml:7:3: unknown bank group 'hbm' in policy; expected dram or sram"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  dram:\n    constant: {dir: sideways}\n",
     "t.yaml:8:21: expected bottom_up or top_down"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  dram:\n    constant: {fit: worst}\n",
     "t.yaml:8:21: expected first or best"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  dram:\n    logging: {dir: top_down}\n",
     "t.yaml:8:14: class logging has no default dram region: give 'region'"},
    {HEAD "  bank_size: 1MiB\n  regions: [{name: data}]\npolicy:\n  dram:\n    constant: {align: 4KiB}\n",
     "t.yaml:8:16: unknown key 'align' in the dram policy of class constant; expected one of: region, dir, fit, alignment, page_size, enabled"},
    /* engine validation after the loader: a negative offset below address 0 */
    {"name: d\nsram:\n  banks: 2\n  bank_size: 64KiB\n  offsets: [0, -64KiB]\n  regions: [{name: reserved, size: 1KiB}, {name: buffers}]\n",
     "t.yaml:1:1: device 'd': sram bank 1 offset -65536 puts address 0x400 below 0"},
};

START_TEST(test_malformed)
{
    memd_device_spec s;
    char msg[1024];
    memset(&s, 0x5a, sizeof(s));
    int rc = load(bad[_i].text, &s, msg, sizeof(msg));
    ck_assert_msg(rc == -EINVAL, "case %d: rc %d (%s)", _i, rc, msg);
    ck_assert_msg(strncmp(msg, bad[_i].want, strlen(bad[_i].want)) == 0, "case %d:\n got  '%s'\n want '%s'", _i,
                  msg, bad[_i].want);
    /* a failed load leaves an empty spec that is safe to free */
    ck_assert_ptr_null(s.groups[0].bank_offsets);
    ck_assert_ptr_null(s.groups[1].bank_offsets);
    memd_device_spec_free(&s);
}
END_TEST

START_TEST(test_deep_nesting)
{
    char text[512];
    size_t n = 0;
    n += (size_t)snprintf(text, sizeof(text), "name: d\nx: ");
    for (int i = 0; i < 100; i++)
        text[n++] = '[';
    text[n] = '\0';
    char msg[1024];
    memd_device_spec s;
    ck_assert_int_eq(load(text, &s, msg, sizeof(msg)), -EINVAL);
    /* the root mapping is level 1, so the 64th '[' (column 67) is one too many */
    ck_assert_msg(strcmp(msg, "t.yaml:2:67: nesting deeper than 64 levels") == 0, "%s", msg);
}
END_TEST

/* ---- scalar grammar ---- */

static int size_of(const char *text, uint64_t *v, char *msg, size_t cap)
{
    char doc[128];
    snprintf(doc, sizeof(doc), "v: %s\n", text);
    memd_ynode *root;
    memd_error err;
    int rc = memd_yaml_parse("s.yaml", doc, strlen(doc), &root, &err);
    ck_assert_int_eq(rc, 0);
    rc = memd_yaml_size("s.yaml", memd_yaml_get(root, "v"), v, &err);
    if (rc)
        memd_error_format(&err, msg, cap);
    memd_yaml_free(root);
    return rc;
}

START_TEST(test_sizes)
{
    static const struct {
        const char *text;
        uint64_t v;
    } ok[] = {
        {"0", 0},
        {"4096", 4096},
        {"0x1000", 4096},
        {"0X1f", 31},
        {"1B", 1},
        {"4K", 4096},
        {"4KiB", 4096},
        {"4 KiB", 4096},
        {"3MiB", 3 * MiB},
        {"2M", 2 * MiB},
        {"1GiB", GiB},
        {"16G", 16 * GiB},
        {"1TiB", 1024 * GiB},
        {"2T", 2048 * GiB},
        {"\"64KiB\"", 64 * KiB},
        {"18446744073709551615", UINT64_MAX},
        {"0xffffffffffffffff", UINT64_MAX},
        {"16777215TiB", 16777215ull << 40},
    };
    char msg[512];
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        uint64_t v = 0;
        ck_assert_msg(size_of(ok[i].text, &v, msg, sizeof(msg)) == 0, "%s: %s", ok[i].text, msg);
        ck_assert_msg(v == ok[i].v, "%s -> %llu", ok[i].text, (unsigned long long)v);
    }
    static const char *const no[] = {"-0", "1 GB", "1kib", "1KB", "0x", "x10", "1e6", "18446744073709551616",
                                     "1 G iB", "+5", "1_000", "1.0"};
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        uint64_t v = 77;
        ck_assert_msg(size_of(no[i], &v, msg, sizeof(msg)) == -EINVAL, "'%s' accepted", no[i]);
        ck_assert_msg(strncmp(msg, "s.yaml:1:4: ", 12) == 0, "%s", msg);
        ck_assert_uint_eq(v, 77);
    }
}
END_TEST

START_TEST(test_error_format)
{
    memd_error e;
    memset(&e, 0, sizeof(e));
    snprintf(e.file, sizeof(e.file), "a.yaml");
    snprintf(e.msg, sizeof(e.msg), "bad");
    char buf[64];
    memd_error_format(&e, buf, sizeof(buf));
    ck_assert_str_eq(buf, "a.yaml: bad");
    e.line = 3;
    e.column = 9;
    memd_error_format(&e, buf, sizeof(buf));
    ck_assert_str_eq(buf, "a.yaml:3:9: bad");
    memd_error_format(&e, buf, 5);
    ck_assert_str_eq(buf, "a.ya");
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("soc");
    TCase *tc = tcase_create("soc");
    tcase_add_test(tc, test_good_descriptor);
    tcase_add_test(tc, test_page_sizes);
    tcase_add_test(tc, test_buffer_not_terminated);
    tcase_add_test(tc, test_region_layout);
    tcase_add_loop_test(tc, test_malformed, 0, (int)(sizeof(bad) / sizeof(bad[0])));
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_sizes);
    tcase_add_test(tc, test_error_format);
    suite_add_tcase(s, tc);
    return s;
}
