/* common/le.h: little-endian scalars and records' fixed parts by a table of fields. */
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "le.h"

typedef struct rec {
    uint8_t kind;
    uint16_t port;
    uint32_t count;
    uint64_t handle;
    struct {
        uint64_t address;
        uint32_t banks;
    } pl;
} rec;

/* Out of member order, with a gap at 1 and a nested member. */
static const memd_le_field fields[] = {
    MEMD_LE_FIELD(0, rec, kind),
    MEMD_LE_FIELD(2, rec, port),
    MEMD_LE_FIELD(4, rec, pl.banks),
    MEMD_LE_FIELD(8, rec, handle),
    MEMD_LE_FIELD(16, rec, count),
    MEMD_LE_FIELD(20, rec, pl.address),
};
#define NFIELDS (sizeof fields / sizeof fields[0])

START_TEST(fields_are_little_endian_at_their_offsets)
{
    ck_assert_uint_eq(fields[2].width, 4);
    ck_assert_uint_eq(fields[2].off, offsetof(rec, pl.banks));
    rec r = {.kind = 0xa1, .port = 0xb2b1, .count = 0xc4c3c2c1u,
             .handle = 0xd8d7d6d5d4d3d2d1ull, .pl = {.address = 0xe8e7e6e5e4e3e2e1ull,
                                                     .banks = 0xf4f3f2f1u}};
    uint8_t p[28];
    memset(p, 0x55, sizeof p);
    memd_le_fields_put(p, &r, fields, NFIELDS);
    static const uint8_t want[28] = {
        0xa1, 0x55, 0xb1, 0xb2, 0xf1, 0xf2, 0xf3, 0xf4,
        0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7, 0xd8,
        0xc1, 0xc2, 0xc3, 0xc4,
        0xe1, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8};
    ck_assert_mem_eq(p, want, sizeof p); /* byte 1 untouched: no field there */
    ck_assert_uint_eq(memd_le_u32(p + 4), r.pl.banks);
    ck_assert_uint_eq(memd_le_u64(p + 8), r.handle);
    ck_assert_uint_eq(memd_le_u16(p + 2), r.port);

    rec back;
    memset(&back, 0, sizeof back);
    memd_le_fields_get(p, &back, fields, NFIELDS);
    ck_assert_uint_eq(back.kind, r.kind);
    ck_assert_uint_eq(back.port, r.port);
    ck_assert_uint_eq(back.count, r.count);
    ck_assert_uint_eq(back.handle, r.handle);
    ck_assert_uint_eq(back.pl.address, r.pl.address);
    ck_assert_uint_eq(back.pl.banks, r.pl.banks);
}
END_TEST

START_TEST(scalars_round_trip)
{
    uint8_t b[8];
    ck_assert_ptr_eq(memd_le_put_u64(b, 0x0102030405060708ull), b + 8);
    ck_assert_uint_eq(b[0], 0x08);
    ck_assert_uint_eq(b[7], 0x01);
    ck_assert_uint_eq(memd_le_u64(b), 0x0102030405060708ull);
    ck_assert_ptr_eq(memd_le_put_u16(b, 0xfffe), b + 2);
    ck_assert_uint_eq(memd_le_u16(b), 0xfffe);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("le");
    memd_test_tcase(s, "le", 0, NULL, NULL,
                    (const TTest *const[]){fields_are_little_endian_at_their_offsets,
                                           scalars_round_trip, NULL});
    return s;
}
