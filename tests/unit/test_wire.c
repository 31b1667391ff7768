/* Wire codec: every record round-trips, the byte layout is little-endian at the
 * documented offsets, and every malformed input is rejected with its errno. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "wire.h"

/* Encoded bytes go into a buffer larger than any record; the tail must stay untouched,
 * which proves put writes exactly the record size. */
#define CANARY 0xa5
static uint8_t buf[512];

static void fill_canary(void)
{
    memset(buf, CANARY, sizeof buf);
}

static void assert_tail_untouched(size_t n)
{
    for (size_t i = n; i < sizeof buf; i++)
        ck_assert_uint_eq(buf[i], CANARY);
}

/* Encodes V into buf (exactly SIZE bytes: the canary after them stays), checks that one
 * byte less does not decode, and decodes it back into G. */
#define ROUNDTRIP(REC, SIZE, V, G)                                                           \
    do {                                                                                     \
        fill_canary();                                                                       \
        ck_assert_ptr_eq(memd_wire_##REC##_put(buf, &(V)), buf + (SIZE));                    \
        assert_tail_untouched(SIZE);                                                         \
        ck_assert_int_eq(memd_wire_##REC##_get(buf, (SIZE) - 1, &(G)), -EBADMSG);            \
        ck_assert_int_eq(memd_wire_##REC##_get(buf, SIZE, &(G)), 0);                         \
    } while (0)

/* V's encoding with N bytes from OFF set to BYTE (a bad enum, a string without its NUL)
 * must not decode. */
#define REJECTS(REC, SIZE, V, OFF, BYTE, N)                                                  \
    do {                                                                                     \
        memd_wire_##REC got;                                                                 \
        memd_wire_##REC##_put(buf, &(V));                                                    \
        memset(buf + (OFF), BYTE, N);                                                        \
        ck_assert_int_eq(memd_wire_##REC##_get(buf, SIZE, &got), -EINVAL);                  \
    } while (0)

/* ---- scalars and header ---- */

START_TEST(scalars_little_endian)
{
    uint8_t b[8];
    memd_wire_put_u16(b, 0x1234);
    ck_assert_uint_eq(b[0], 0x34);
    ck_assert_uint_eq(b[1], 0x12);
    memd_wire_put_u32(b, 0x89abcdefu);
    ck_assert_uint_eq(b[0], 0xef);
    ck_assert_uint_eq(b[3], 0x89);
    ck_assert_uint_eq(memd_wire_u32(b), 0x89abcdefu);
    memd_wire_put_u64(b, 0x0102030405060708ull);
    ck_assert_uint_eq(b[0], 0x08);
    ck_assert_uint_eq(b[7], 0x01);
    ck_assert_uint_eq(memd_wire_u64(b), 0x0102030405060708ull);
    ck_assert_uint_eq(memd_wire_u16((const uint8_t[]){0xff, 0xfe}), 0xfeff);
}
END_TEST

static memd_wire_hdr good_hdr(void)
{
    return (memd_wire_hdr){.magic = MEMD_PROTO_MAGIC, .version = MEMD_PROTO_VERSION,
                           .opcode = MEMD_OP_ALLOC, .id = 0x1122334455667788ull,
                           .len = 136, .status = 0};
}

START_TEST(hdr_roundtrip_and_layout)
{
    fill_canary();
    memd_wire_hdr h = good_hdr(), g;
    h.status = -ENOMEM;
    uint8_t *end = memd_wire_hdr_put(buf, &h);
    ck_assert_ptr_eq(end, buf + MEMD_HDR_SIZE);
    assert_tail_untouched(MEMD_HDR_SIZE);
    ck_assert_mem_eq(buf, "MEMD", 4); /* magic reads "MEMD" in byte order */
    ck_assert_uint_eq(buf[6], MEMD_OP_ALLOC);
    ck_assert_uint_eq(buf[8], 0x88);
    ck_assert_uint_eq(buf[16], 136);
    ck_assert_uint_eq(buf[20], (uint8_t)-ENOMEM); /* status, two's complement LE */
    ck_assert_uint_eq(buf[23], 0xff);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 1024, &g), 0);
    ck_assert_int_eq(g.status, -ENOMEM);
}
END_TEST

START_TEST(hdr_roundtrip_values)
{
    memd_wire_hdr h = good_hdr(), g;
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 136, &g), 0);
    ck_assert_uint_eq(g.magic, h.magic);
    ck_assert_uint_eq(g.version, h.version);
    ck_assert_uint_eq(g.opcode, h.opcode);
    ck_assert_uint_eq(g.id, h.id);
    ck_assert_uint_eq(g.len, h.len);
    ck_assert_int_eq(g.status, 0);
    h.status = -ENOMEM;
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 136, &g), 0);
    ck_assert_int_eq(g.status, -ENOMEM);
}
END_TEST

START_TEST(hdr_rejects)
{
    memd_wire_hdr h = good_hdr(), g;
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE - 1, 1024, &g), -EBADMSG);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 135, &g), -EMSGSIZE);

    h = good_hdr();
    h.magic = 0x4d454d44u; /* byte-swapped: a big-endian writer */
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 1024, &g), -EPROTO);

    h = good_hdr();
    h.version = 0;
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 1024, &g), -EPROTONOSUPPORT);
    h.version = MEMD_PROTO_VERSION + 1;
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 1024, &g), -EPROTONOSUPPORT);

    h = good_hdr();
    h.status = 5;
    memd_wire_hdr_put(buf, &h);
    ck_assert_int_eq(memd_wire_hdr_get(buf, MEMD_HDR_SIZE, 1024, &g), -EINVAL);
}
END_TEST

/* ---- records ---- */

START_TEST(hello_roundtrip_and_rejects)
{
    memd_wire_hello h = {.min_version = 1, .max_version = 3, .flags = 0x80}, g;
    memd_wire_strset(h.client_name, sizeof h.client_name, "test-client");
    ROUNDTRIP(hello, MEMD_WIRE_HELLO_SIZE, h, g);
    ck_assert_uint_eq(g.min_version, 1);
    ck_assert_uint_eq(g.max_version, 3);
    ck_assert_uint_eq(g.flags, 0x80);
    ck_assert_str_eq(g.client_name, "test-client");
    REJECTS(hello, MEMD_WIRE_HELLO_SIZE, h, 8, 'x', 32); /* no NUL */
    h.min_version = 4; /* min > max */
    memd_wire_hello_put(buf, &h);
    ck_assert_int_eq(memd_wire_hello_get(buf, MEMD_WIRE_HELLO_SIZE, &g), -EINVAL);
}
END_TEST

START_TEST(welcome_roundtrip_and_rejects)
{
    memd_wire_welcome w = {.version = 1, .pad = 77, .session_id = 42, .max_frame = 1 << 20,
                           .ndevices = 3},
                      g;
    memd_wire_strset(w.server_version, sizeof w.server_version, "0.1.0");
    ROUNDTRIP(welcome, MEMD_WIRE_WELCOME_SIZE, w, g);
    ck_assert_uint_eq(buf[2], 0); /* pad is written as zero */
    ck_assert_uint_eq(g.version, 1);
    ck_assert_uint_eq(g.session_id, 42);
    ck_assert_uint_eq(g.max_frame, 1 << 20);
    ck_assert_uint_eq(g.ndevices, 3);
    ck_assert_str_eq(g.server_version, "0.1.0");
    w.version = 0;
    memd_wire_welcome_put(buf, &w);
    ck_assert_int_eq(memd_wire_welcome_get(buf, MEMD_WIRE_WELCOME_SIZE, &g), -EINVAL);
    w.version = 1;
    REJECTS(welcome, MEMD_WIRE_WELCOME_SIZE, w, 16, 'v', 32);
}
END_TEST

static memd_wire_error sample_error(void)
{
    memd_wire_error e = {.status = -ENOMEM, .detail = MEMD_ERR_DETAIL_NOMEM,
                         .requested = 1000, .size_per_bank = 128, .allocated = 1u << 20,
                         .free = 4096, .largest_free = 64, .device = 2,
                         .cls = MEMD_CLASS_INTERNAL, .kind = MEMD_KIND_SRAM, .region = 1};
    memd_wire_strset(e.message, sizeof e.message, "device 2 sram/buffers: no room");
    return e;
}

START_TEST(error_roundtrip_and_rejects)
{
    memd_wire_error e = sample_error(), g;
    ROUNDTRIP(error, MEMD_WIRE_ERROR_SIZE, e, g);
    ck_assert_int_eq(g.status, -ENOMEM);
    ck_assert_uint_eq(g.detail, MEMD_ERR_DETAIL_NOMEM);
    ck_assert_str_eq(g.message, e.message);
    ck_assert_uint_eq(g.requested, 1000);
    ck_assert_uint_eq(g.size_per_bank, 128);
    ck_assert_uint_eq(g.allocated, 1u << 20);
    ck_assert_uint_eq(g.free, 4096);
    ck_assert_uint_eq(g.largest_free, 64);
    ck_assert_uint_eq(g.device, 2);
    ck_assert_uint_eq(g.cls, MEMD_CLASS_INTERNAL);
    ck_assert_uint_eq(g.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(g.region, 1);

    e = sample_error();
    e.status = 0; /* an error record always carries an error */
    memd_wire_error_put(buf, &e);
    ck_assert_int_eq(memd_wire_error_get(buf, MEMD_WIRE_ERROR_SIZE, &g), -EINVAL);
    e = sample_error();
    e.detail = MEMD_ERR_DETAIL_LIMIT + 1;
    memd_wire_error_put(buf, &e);
    ck_assert_int_eq(memd_wire_error_get(buf, MEMD_WIRE_ERROR_SIZE, &g), -EINVAL);
    e = sample_error();
    e.cls = MEMD_CLASS_COUNT;
    memd_wire_error_put(buf, &e);
    ck_assert_int_eq(memd_wire_error_get(buf, MEMD_WIRE_ERROR_SIZE, &g), -EINVAL);
    e = sample_error();
    e.kind = MEMD_KIND_COUNT;
    memd_wire_error_put(buf, &e);
    ck_assert_int_eq(memd_wire_error_get(buf, MEMD_WIRE_ERROR_SIZE, &g), -EINVAL);
    e = sample_error();
    REJECTS(error, MEMD_WIRE_ERROR_SIZE, e, 8, 'm', 192);
}
END_TEST

static memd_wire_alloc_req sample_req(void)
{
    memd_wire_alloc_req r = {.device = 7, .cls = MEMD_CLASS_CONSTANT,
                             .scope = MEMD_SCOPE_DRAM_TEXTURE, .dtype = MEMD_DTYPE_BF16,
                             .ndim = 3, .bytes = 0, .shape = {2, 3, 4, 0},
                             .page_size = 2048, .alignment = 4096, .banks = 6,
                             .flags = MEMD_ALLOC_F_SHARED};
    memd_wire_strset(r.name, sizeof r.name, "weights.layer0");
    return r;
}

START_TEST(alloc_req_roundtrip)
{
    fill_canary();
    memd_wire_alloc_req r = sample_req(), g;
    ck_assert_ptr_eq(memd_wire_alloc_req_put(buf, &r), buf + MEMD_WIRE_ALLOC_REQ_SIZE);
    assert_tail_untouched(MEMD_WIRE_ALLOC_REQ_SIZE);
    ck_assert_uint_eq(buf[0], 7);
    ck_assert_uint_eq(buf[4], MEMD_CLASS_CONSTANT);
    ck_assert_uint_eq(buf[16], 2);  /* shape[0] */
    ck_assert_uint_eq(buf[72], 'w'); /* name */
    ck_assert_int_eq(memd_wire_alloc_req_get(buf, MEMD_WIRE_ALLOC_REQ_SIZE, &g), 0);
    ck_assert_uint_eq(g.device, 7);
    ck_assert_uint_eq(g.cls, r.cls);
    ck_assert_uint_eq(g.scope, r.scope);
    ck_assert_uint_eq(g.dtype, r.dtype);
    ck_assert_uint_eq(g.ndim, 3);
    ck_assert_uint_eq(g.bytes, 0);
    for (int i = 0; i < MEMD_MAX_DIMS; i++)
        ck_assert_uint_eq(g.shape[i], r.shape[i]);
    ck_assert_uint_eq(g.page_size, 2048);
    ck_assert_uint_eq(g.alignment, 4096);
    ck_assert_uint_eq(g.banks, 6);
    ck_assert_uint_eq(g.flags, MEMD_ALLOC_F_SHARED);
    ck_assert_str_eq(g.name, "weights.layer0");

    r.bytes = UINT64_MAX;
    r.name[0] = 0;
    memd_wire_alloc_req_put(buf, &r);
    ck_assert_int_eq(memd_wire_alloc_req_get(buf, MEMD_WIRE_ALLOC_REQ_SIZE, &g), 0);
    ck_assert_uint_eq(g.bytes, UINT64_MAX);
    ck_assert_str_eq(g.name, "");
}
END_TEST

/* Each mutation of a valid encoded request must be rejected with -EINVAL. */
START_TEST(alloc_req_rejects)
{
    memd_wire_alloc_req r = sample_req(), g;
    struct { size_t off; uint8_t val; } bad[] = {
        {4, MEMD_CLASS_COUNT}, {4, 0xff},   /* class */
        {5, MEMD_SCOPE_COUNT},              /* scope */
        {6, MEMD_DTYPE_COUNT},              /* dtype */
        {7, MEMD_MAX_DIMS + 1},             /* ndim */
        {68, 0x04}, {71, 0x80},             /* unknown flag bits */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memd_wire_alloc_req_put(buf, &r);
        buf[bad[i].off] = bad[i].val;
        ck_assert_msg(memd_wire_alloc_req_get(buf, MEMD_WIRE_ALLOC_REQ_SIZE, &g) == -EINVAL,
                      "mutation %zu accepted", i);
    }
    REJECTS(alloc_req, MEMD_WIRE_ALLOC_REQ_SIZE, r, 72, 'n', MEMD_NAME_MAX); /* name without NUL */
    memd_wire_alloc_req_put(buf, &r);
    for (size_t n = 0; n < MEMD_WIRE_ALLOC_REQ_SIZE; n++)
        ck_assert_int_eq(memd_wire_alloc_req_get(buf, n, &g), -EBADMSG);
}
END_TEST

START_TEST(strset_truncates_and_pads)
{
    char s[8];
    memset(s, 'z', sizeof s);
    memd_wire_strset(s, sizeof s, "abc");
    ck_assert_str_eq(s, "abc");
    for (size_t i = 3; i < sizeof s; i++)
        ck_assert_int_eq(s[i], 0);
    memd_wire_strset(s, sizeof s, "0123456789");
    ck_assert_str_eq(s, "0123456");
    memd_wire_strset(s, sizeof s, NULL);
    ck_assert_str_eq(s, "");

    /* put never emits a string without NUL, even from a field that has none */
    memd_wire_alloc_req r = sample_req(), g;
    memset(r.name, 'q', sizeof r.name);
    memd_wire_alloc_req_put(buf, &r);
    ck_assert_int_eq(memd_wire_alloc_req_get(buf, MEMD_WIRE_ALLOC_REQ_SIZE, &g), 0);
    ck_assert_uint_eq(strlen(g.name), MEMD_NAME_MAX - 1);
}
END_TEST

/* ALLOC_BANKS requests, bank addresses and the dump's bank records. */
START_TEST(banks_roundtrip_and_rejects)
{
    memd_wire_alloc_req r = {.device = 1, .cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_SRAM,
                             .bytes = 4096};
    uint32_t ids[] = {0, 3, 8};
    memd_wire_bankset b = {MEMD_BANKSET_F_PER_BANK, 3}, gb;
    uint8_t *p = memd_wire_bankset_put(memd_wire_alloc_req_put(buf, &r), &b, ids);
    size_t n = (size_t)(p - buf);
    ck_assert_uint_eq(n, MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + 12);
    memd_wire_alloc_req g;
    const uint8_t *raw;
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf, n, &g, &gb, &raw), 0);
    ck_assert_uint_eq(gb.count, 3);
    ck_assert_uint_eq(gb.flags, MEMD_BANKSET_F_PER_BANK);
    ck_assert_uint_eq(memd_wire_u32(raw + 8), 8);
    ck_assert_uint_eq(g.bytes, 4096);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf, n - 1, &g, &gb, &raw), -EBADMSG);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf, n + 4, &g, &gb, &raw), -EBADMSG);
    memd_wire_put_u32(buf + MEMD_WIRE_ALLOC_REQ_SIZE, MEMD_BANKSET_F_RANGE_LOCKSTEP);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf, n, &g, &gb, &raw), 0);
    ck_assert_uint_eq(gb.flags, MEMD_BANKSET_F_RANGE_LOCKSTEP);
    memd_wire_put_u32(buf + MEMD_WIRE_ALLOC_REQ_SIZE, MEMD_BANKSET_F_SIZES << 1);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf, n, &g, &gb, &raw), -EINVAL); /* unknown */
    /* Per-core shard sizes: a u64 per id after the ids. */
    const uint64_t sizes[] = {1024, 2048, 4096};
    memd_wire_bankset sb = {MEMD_BANKSET_F_PER_BANK | MEMD_BANKSET_F_SIZES, 3};
    p = memd_wire_bankset_sizes_put(memd_wire_bankset_put(buf + 400, &sb, ids), sizes, 3);
    memcpy(buf + 400 - MEMD_WIRE_ALLOC_REQ_SIZE, buf, MEMD_WIRE_ALLOC_REQ_SIZE);
    size_t sn = (size_t)(p - (buf + 400 - MEMD_WIRE_ALLOC_REQ_SIZE));
    ck_assert_uint_eq(sn, n + 24);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf + 400 - MEMD_WIRE_ALLOC_REQ_SIZE, sn, &g,
                                               &gb, &raw), 0);
    ck_assert_uint_eq(memd_wire_u64(memd_wire_bankset_sizes(&gb, raw) + 16), 4096);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf + 400 - MEMD_WIRE_ALLOC_REQ_SIZE, sn - 8,
                                               &g, &gb, &raw), -EBADMSG);
    memd_wire_put_u32(buf + MEMD_WIRE_ALLOC_REQ_SIZE, 0);
    memd_wire_put_u32(buf + MEMD_WIRE_ALLOC_REQ_SIZE + 4, MEMD_BANKSET_MAX + 1);
    ck_assert_int_eq(memd_wire_alloc_banks_get(buf, n, &g, &gb, &raw), -EINVAL);

    /* ALLOC_BATCH_BANKS elements: each says its size; what follows is the next one's. */
    memd_wire_bankset none = {0, 0};
    p = memd_wire_bankset_put(memd_wire_alloc_req_put(buf, &r), &b, ids);
    uint8_t *end = memd_wire_bankset_put(memd_wire_alloc_req_put(p, &r), &none, NULL);
    size_t used, total = (size_t)(end - buf);
    ck_assert_int_eq(memd_wire_alloc_banks_elem_get(buf, total, &g, &gb, &raw, &used), 0);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_eq(gb.count, 3);
    ck_assert_int_eq(memd_wire_alloc_banks_elem_get(buf + used, total - used, &g, &gb, &raw,
                                                    &used), 0);
    ck_assert_uint_eq(used, MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE);
    ck_assert_uint_eq(gb.count, 0);
    ck_assert_uint_eq(gb.flags, 0);
    ck_assert_int_eq(memd_wire_alloc_banks_elem_get(buf, n - 1, &g, &gb, &raw, &used), -EBADMSG);
    ck_assert_int_eq(memd_wire_alloc_banks_elem_get(buf, MEMD_WIRE_ALLOC_REQ_SIZE + 7, &g, &gb,
                                                    &raw, &used), -EBADMSG);

    memd_wire_alloc_bank_rec a = {.handle = 9, .bank_mode = MEMD_BANKS_RANGE,
                                  .bank = {.bank = 5, .logical_x = 1, .logical_y = 2,
                                           .noc_x = 3, .noc_y = 4, .address = 0x40,
                                           .absolute = 0x1040}},
                             ga;
    ROUNDTRIP(alloc_bank_rec, MEMD_WIRE_ALLOC_BANK_REC_SIZE, a, ga);
    ck_assert_uint_eq(ga.bank.bank, 5);
    ck_assert_uint_eq(ga.bank.noc_y, 4);
    ck_assert_uint_eq(ga.bank.absolute, 0x1040);
    REJECTS(alloc_bank_rec, MEMD_WIRE_ALLOC_BANK_REC_SIZE, a, 8, MEMD_BANKS_MODE_COUNT, 1);

    memd_wire_bank_rec k = {.device = 2, .kind = MEMD_KIND_SRAM, .region = 1, .bank = 63,
                            .logical_x = MEMD_NO_CORE, .logical_y = MEMD_NO_CORE,
                            .noc_x = MEMD_NO_CORE, .noc_y = MEMD_NO_CORE,
                            .stats = {.total = 100, .allocated = 40, .free = 60}},
                       gk;
    ROUNDTRIP(bank_rec, MEMD_WIRE_BANK_REC_SIZE, k, gk);
    ck_assert_uint_eq(gk.bank, 63);
    ck_assert_uint_eq(gk.logical_x, MEMD_NO_CORE);
    ck_assert_uint_eq(gk.stats.allocated, 40);
    /* Sub-devices: a definition with its banks, and the dump's record. */
    memd_wire_subdev_def sd = {.device = 3, .kind = MEMD_KIND_SRAM, .budget = 4096, .count = 2,
                               .window = 3200},
                         gd;
    memd_wire_strset(sd.name, sizeof sd.name, "left");
    memd_wire_strset(sd.overlap[1], sizeof sd.overlap[1], "right");
    uint32_t sids[] = {4, 9};
    p = memd_wire_subdev_def_put(buf, &sd, sids);
    ck_assert_uint_eq((size_t)(p - buf), MEMD_WIRE_SUBDEV_DEF_SIZE + 8);
    ck_assert_int_eq(memd_wire_subdev_def_get(buf, MEMD_WIRE_SUBDEV_DEF_SIZE + 8, &gd, &raw), 0);
    ck_assert_str_eq(gd.name, "left");
    ck_assert_str_eq(gd.overlap[1], "right");
    ck_assert_uint_eq(gd.budget, 4096);
    ck_assert_uint_eq(gd.window, 3200);
    ck_assert_uint_eq(memd_wire_u32(raw + 4), 9);
    /* A client from before windows sends 344 bytes, then the ids: no window. */
    uint8_t v1[MEMD_WIRE_SUBDEV_DEF_V1_SIZE + 8];
    memcpy(v1, buf, MEMD_WIRE_SUBDEV_DEF_V1_SIZE);
    memcpy(v1 + MEMD_WIRE_SUBDEV_DEF_V1_SIZE, raw, 8);
    ck_assert_int_eq(memd_wire_subdev_def_get(v1, sizeof v1, &gd, &raw), 0);
    ck_assert_uint_eq(gd.window, 0);
    ck_assert_uint_eq(memd_wire_u32(raw + 4), 9);
    ck_assert_int_eq(memd_wire_subdev_def_get(v1, sizeof v1 - 1, &gd, &raw), -EBADMSG);
    ck_assert_int_eq(memd_wire_subdev_def_get(buf, MEMD_WIRE_SUBDEV_DEF_SIZE + 4, &gd, &raw),
                     -EBADMSG);
    buf[68] = MEMD_KIND_COUNT;
    ck_assert_int_eq(memd_wire_subdev_def_get(buf, MEMD_WIRE_SUBDEV_DEF_SIZE + 8, &gd, &raw),
                     -EINVAL);
    memd_wire_subdev_rec sr = {.device = 1, .kind = MEMD_KIND_DRAM, .from_config = 1,
                               .nbanks = 12, .sessions = 2, .budget = 9, .used = 8,
                               .allocations = 1},
                         gs;
    memd_wire_strset(sr.name, sizeof sr.name, "x");
    memd_wire_strset(sr.banks, sizeof sr.banks, "0-11");
    ROUNDTRIP(subdev_rec, MEMD_WIRE_SUBDEV_REC_SIZE, sr, gs);
    ck_assert_str_eq(gs.banks, "0-11");
    ck_assert_uint_eq(gs.used, 8);
    ck_assert_uint_eq(gs.sessions, 2);
    ck_assert_uint_eq(memd_wire_rec_size(MEMD_REC_SUBDEV), MEMD_WIRE_SUBDEV_REC_SIZE);
    ck_assert_uint_eq(memd_wire_rec_size(MEMD_REC_BANK), MEMD_WIRE_BANK_REC_SIZE);
    ck_assert_uint_eq(memd_wire_rec_size(MEMD_REC_ALLOC_BANK), MEMD_WIRE_ALLOC_BANK_REC_SIZE);
}
END_TEST

static memd_wire_buffer sample_buffer(void)
{
    return (memd_wire_buffer){.handle = 0xdeadbeef00000001ull, .address = 0x1000,
                              .size_per_bank = 0x2000, .page_size = 0x800, .pitch = 192,
                              .banks = 12, .refcount = 2, .kind = MEMD_KIND_SRAM,
                              .region = 1, .pad = {1, 2, 3, 4, 5}};
}

static void assert_buffer_eq(const memd_wire_buffer *a, const memd_wire_buffer *b)
{
    ck_assert_uint_eq(a->handle, b->handle);
    ck_assert_uint_eq(a->address, b->address);
    ck_assert_uint_eq(a->size_per_bank, b->size_per_bank);
    ck_assert_uint_eq(a->page_size, b->page_size);
    ck_assert_uint_eq(a->pitch, b->pitch);
    ck_assert_uint_eq(a->banks, b->banks);
    ck_assert_uint_eq(a->refcount, b->refcount);
    ck_assert_uint_eq(a->kind, b->kind);
    ck_assert_uint_eq(a->region, b->region);
    ck_assert_uint_eq(a->bank_mode, b->bank_mode);
}

START_TEST(buffer_roundtrip_and_rejects)
{
    memd_wire_buffer b = sample_buffer(), g;
    ROUNDTRIP(buffer, MEMD_WIRE_BUFFER_SIZE, b, g);
    for (int i = 50; i < 56; i++)
        ck_assert_uint_eq(buf[i], 0); /* pad not leaked */
    assert_buffer_eq(&g, &b);
    REJECTS(buffer, MEMD_WIRE_BUFFER_SIZE, b, 48, MEMD_KIND_COUNT, 1);
}
END_TEST

static memd_wire_alloc_info sample_info(void)
{
    memd_wire_alloc_info a = {.buf = sample_buffer(), .device = 1,
                              .cls = MEMD_CLASS_PLACEHOLDER, .scope = MEMD_SCOPE_SRAM,
                              .pid = 4242, .uid = 1000, .gid = 100, .session_id = 9,
                              .created_ns = 1700000000123456789ull};
    memd_wire_strset(a.name, sizeof a.name, "acts");
    memd_wire_strset(a.comm, sizeof a.comm, "python3");
    return a;
}

START_TEST(alloc_info_roundtrip_and_rejects)
{
    memd_wire_alloc_info a = sample_info(), g;
    ROUNDTRIP(alloc_info, MEMD_WIRE_ALLOC_INFO_SIZE, a, g);
    assert_buffer_eq(&g.buf, &a.buf);
    ck_assert_uint_eq(g.device, 1);
    ck_assert_uint_eq(g.cls, MEMD_CLASS_PLACEHOLDER);
    ck_assert_uint_eq(g.scope, MEMD_SCOPE_SRAM);
    ck_assert_uint_eq(g.pid, 4242);
    ck_assert_uint_eq(g.uid, 1000);
    ck_assert_uint_eq(g.gid, 100);
    ck_assert_uint_eq(g.session_id, 9);
    ck_assert_uint_eq(g.created_ns, a.created_ns);
    ck_assert_str_eq(g.name, "acts");
    ck_assert_str_eq(g.comm, "python3");
    size_t bad_off[] = {48 /* kind */, 60 /* cls */, 61 /* scope */, 62 /* flags */};
    for (size_t i = 0; i < 4; i++) {
        memd_wire_alloc_info_put(buf, &a);
        buf[bad_off[i]] = 0x7f;
        ck_assert_int_eq(memd_wire_alloc_info_get(buf, MEMD_WIRE_ALLOC_INFO_SIZE, &g), -EINVAL);
    }
    REJECTS(alloc_info, MEMD_WIRE_ALLOC_INFO_SIZE, a, 88, 'n', 64);
    REJECTS(alloc_info, MEMD_WIRE_ALLOC_INFO_SIZE, a, 152, 'c', 16);
}
END_TEST

START_TEST(dump_req_roundtrip_and_rejects)
{
    fill_canary();
    memd_wire_dump_req d = {.device = UINT32_MAX, .flags = MEMD_DUMP_F_BLOCKS}, g;
    ck_assert_ptr_eq(memd_wire_dump_req_put(buf, &d), buf + MEMD_WIRE_DUMP_REQ_SIZE);
    assert_tail_untouched(MEMD_WIRE_DUMP_REQ_SIZE);
    ck_assert_int_eq(memd_wire_dump_req_get(buf, MEMD_WIRE_DUMP_REQ_SIZE, &g), 0);
    ck_assert_uint_eq(g.device, UINT32_MAX);
    ck_assert_uint_eq(g.flags, MEMD_DUMP_F_BLOCKS);
    ck_assert_uint_eq(g.cursor, 0);
    ck_assert_int_eq(memd_wire_dump_req_get(buf, 7, &g), -EBADMSG);
    /* the cursor is appended: the 8-byte request of older clients still reads, as 0 */
    d = (memd_wire_dump_req){.device = 3, .flags = MEMD_DUMP_F_PAGED, .cursor = 0x1234567890ull};
    memd_wire_dump_req_put(buf, &d);
    ck_assert_int_eq(memd_wire_dump_req_get(buf, MEMD_WIRE_DUMP_REQ_SIZE, &g), 0);
    ck_assert_uint_eq(g.cursor, 0x1234567890ull);
    ck_assert_int_eq(memd_wire_dump_req_get(buf, MEMD_WIRE_DUMP_REQ_V1_SIZE, &g), 0);
    ck_assert_uint_eq(g.cursor, 0);
    d.flags = 0; /* a cursor without paging means nothing */
    memd_wire_dump_req_put(buf, &d);
    ck_assert_int_eq(memd_wire_dump_req_get(buf, MEMD_WIRE_DUMP_REQ_SIZE, &g), -EINVAL);
    d.flags = MEMD_DUMP_F_ALL + 1; /* the first unknown bit */
    d.cursor = 0;
    memd_wire_dump_req_put(buf, &d);
    ck_assert_int_eq(memd_wire_dump_req_get(buf, MEMD_WIRE_DUMP_REQ_SIZE, &g), -EINVAL);
    memd_wire_page_rec pr = {.next = 77}, pg;
    ck_assert_ptr_eq(memd_wire_page_rec_put(buf, &pr), buf + MEMD_WIRE_PAGE_REC_SIZE);
    ck_assert_int_eq(memd_wire_page_rec_get(buf, MEMD_WIRE_PAGE_REC_SIZE, &pg), 0);
    ck_assert_uint_eq(pg.next, 77);
    ck_assert_int_eq(memd_wire_page_rec_get(buf, 7, &pg), -EBADMSG);
}
END_TEST

static memd_wire_stats sample_stats(uint64_t k)
{
    return (memd_wire_stats){.total = k * 7, .allocated = k * 3, .free = k * 4,
                             .largest_free = k * 2, .largest_free_addr = k * 5,
                             .free_blocks = k + 1, .allocations = k + 2};
}

static void assert_stats_eq(const memd_wire_stats *a, const memd_wire_stats *b)
{
    ck_assert_uint_eq(a->total, b->total);
    ck_assert_uint_eq(a->allocated, b->allocated);
    ck_assert_uint_eq(a->free, b->free);
    ck_assert_uint_eq(a->largest_free, b->largest_free);
    ck_assert_uint_eq(a->largest_free_addr, b->largest_free_addr);
    ck_assert_uint_eq(a->free_blocks, b->free_blocks);
    ck_assert_uint_eq(a->allocations, b->allocations);
}

START_TEST(stats_roundtrip)
{
    memd_wire_stats s = sample_stats(1ull << 40), g;
    ROUNDTRIP(stats, MEMD_WIRE_STATS_SIZE, s, g);
    assert_stats_eq(&g, &s);
}
END_TEST

START_TEST(server_rec_roundtrip_and_rejects)
{
    memd_wire_server_rec s = {.start_ns = 11, .now_ns = 22, .sessions = 3, .pid = 99,
                              .requests = 1000, .allocs = 400, .frees = 390,
                              .alloc_failures = 5, .protocol_errors = 2,
                              .sessions_total = 17, .bytes_in = 123456, .bytes_out = 654321},
                         g;
    memd_wire_strset(s.version, sizeof s.version, "0.1.0");
    ROUNDTRIP(server_rec, MEMD_WIRE_SERVER_REC_SIZE, s, g);
    ck_assert_str_eq(g.version, "0.1.0");
    ck_assert_uint_eq(g.start_ns, 11);
    ck_assert_uint_eq(g.now_ns, 22);
    ck_assert_uint_eq(g.sessions, 3);
    ck_assert_uint_eq(g.pid, 99);
    ck_assert_uint_eq(g.requests, 1000);
    ck_assert_uint_eq(g.allocs, 400);
    ck_assert_uint_eq(g.frees, 390);
    ck_assert_uint_eq(g.alloc_failures, 5);
    ck_assert_uint_eq(g.protocol_errors, 2);
    ck_assert_uint_eq(g.sessions_total, 17);
    ck_assert_uint_eq(g.bytes_in, 123456);
    ck_assert_uint_eq(g.bytes_out, 654321);
    memset(buf, 'v', 32);
    ck_assert_int_eq(memd_wire_server_rec_get(buf, MEMD_WIRE_SERVER_REC_SIZE, &g), -EINVAL);
}
END_TEST

START_TEST(device_rec_roundtrip_and_rejects)
{
    memd_wire_device_rec d = {.id = 4, .texture = 1}, g;
    memd_wire_strset(d.name, sizeof d.name, "n150");
    memd_wire_strset(d.arch, sizeof d.arch, "wormhole_b0");
    ROUNDTRIP(device_rec, MEMD_WIRE_DEVICE_REC_SIZE, d, g);
    ck_assert_uint_eq(g.id, 4);
    ck_assert_uint_eq(g.texture, 1);
    ck_assert_str_eq(g.name, "n150");
    ck_assert_str_eq(g.arch, "wormhole_b0");
    REJECTS(device_rec, MEMD_WIRE_DEVICE_REC_SIZE, d, 4, 2, 1);
    REJECTS(device_rec, MEMD_WIRE_DEVICE_REC_SIZE, d, 8, 'x', 64);
    REJECTS(device_rec, MEMD_WIRE_DEVICE_REC_SIZE, d, 72, 'x', 64);
}
END_TEST

START_TEST(group_rec_roundtrip_and_rejects)
{
    memd_wire_group_rec r = {.device = 1, .kind = MEMD_KIND_DRAM, .nregions = 3,
                             .banks = 12, .clients = 2, .bank_size = 1ull << 30,
                             .alignment = 32, .stats = sample_stats(1000)},
                        g;
    ROUNDTRIP(group_rec, MEMD_WIRE_GROUP_REC_SIZE, r, g);
    ck_assert_uint_eq(g.device, 1);
    ck_assert_uint_eq(g.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(g.nregions, 3);
    ck_assert_uint_eq(g.banks, 12);
    ck_assert_uint_eq(g.clients, 2);
    ck_assert_uint_eq(g.bank_size, 1ull << 30);
    ck_assert_uint_eq(g.alignment, 32);
    assert_stats_eq(&g.stats, &r.stats);
    REJECTS(group_rec, MEMD_WIRE_GROUP_REC_SIZE, r, 4, MEMD_KIND_COUNT, 1);
}
END_TEST

START_TEST(region_rec_roundtrip_and_rejects)
{
    memd_wire_region_rec r = {.device = 0, .kind = MEMD_KIND_SRAM, .region = 1,
                              .allocatable = 1, .base = 0x19000, .size = 0x140000,
                              .stats = sample_stats(77)},
                         g;
    memd_wire_strset(r.name, sizeof r.name, "buffers");
    ROUNDTRIP(region_rec, MEMD_WIRE_REGION_REC_SIZE, r, g);
    ck_assert_uint_eq(g.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(g.region, 1);
    ck_assert_uint_eq(g.allocatable, 1);
    ck_assert_str_eq(g.name, "buffers");
    ck_assert_uint_eq(g.base, 0x19000);
    ck_assert_uint_eq(g.size, 0x140000);
    assert_stats_eq(&g.stats, &r.stats);
    REJECTS(region_rec, MEMD_WIRE_REGION_REC_SIZE, r, 4, 9, 1);
    REJECTS(region_rec, MEMD_WIRE_REGION_REC_SIZE, r, 6, 2, 1);
    REJECTS(region_rec, MEMD_WIRE_REGION_REC_SIZE, r, 8, 'r', 64);
}
END_TEST

START_TEST(block_rec_roundtrip_and_rejects)
{
    memd_wire_block_rec b = {.device = 3, .kind = MEMD_KIND_DRAM, .region = 2,
                             .allocated = 1, .address = 0xabc000, .size = 0x400},
                        g;
    ROUNDTRIP(block_rec, MEMD_WIRE_BLOCK_REC_SIZE, b, g);
    ck_assert_uint_eq(g.device, 3);
    ck_assert_uint_eq(g.region, 2);
    ck_assert_uint_eq(g.allocated, 1);
    ck_assert_uint_eq(g.address, 0xabc000);
    ck_assert_uint_eq(g.size, 0x400);
    REJECTS(block_rec, MEMD_WIRE_BLOCK_REC_SIZE, b, 6, 3, 1);
    REJECTS(block_rec, MEMD_WIRE_BLOCK_REC_SIZE, b, 4, 2, 1);
}
END_TEST

START_TEST(event_records_roundtrip_and_reject)
{
    memd_wire_events_req q = {.since = 1ull << 60, .max = 7}, q2;
    ck_assert_ptr_eq(memd_wire_events_req_put(buf, &q), buf + MEMD_WIRE_EVENTS_REQ_SIZE);
    ck_assert_int_eq(memd_wire_events_req_get(buf, MEMD_WIRE_EVENTS_REQ_SIZE, &q2), 0);
    ck_assert_uint_eq(q2.since, q.since);
    ck_assert_uint_eq(q2.max, 7);
    ck_assert_int_eq(memd_wire_events_req_get(buf, MEMD_WIRE_EVENTS_REQ_SIZE - 1, &q2), -EBADMSG);
    q.flags = MEMD_EVENTS_F_WAIT;
    memd_wire_events_req_put(buf, &q);
    ck_assert_int_eq(memd_wire_events_req_get(buf, MEMD_WIRE_EVENTS_REQ_SIZE, &q2), 0);
    ck_assert_uint_eq(q2.flags, MEMD_EVENTS_F_WAIT);
    q.flags = 2; /* no such flag */
    memd_wire_events_req_put(buf, &q);
    ck_assert_int_eq(memd_wire_events_req_get(buf, MEMD_WIRE_EVENTS_REQ_SIZE, &q2), -EINVAL);

    memd_wire_event e = {.seq = 42, .time_ns = 1ull << 62, .type = MEMD_EVENT_QUOTA,
                         .priority = 4, .pid = 7, .uid = 1000, .session_id = 3, .device = 2,
                         .bytes = 1ull << 40}, e2;
    memd_wire_strset(e.comm, sizeof e.comm, "python3");
    memd_wire_strset(e.message, sizeof e.message, "quota exceeded");
    ck_assert_ptr_eq(memd_wire_event_put(buf, &e), buf + MEMD_WIRE_EVENT_SIZE);
    ck_assert_int_eq(memd_wire_event_get(buf, MEMD_WIRE_EVENT_SIZE, &e2), 0);
    ck_assert_uint_eq(e2.seq, 42);
    ck_assert_uint_eq(e2.time_ns, 1ull << 62);
    ck_assert_uint_eq(e2.type, MEMD_EVENT_QUOTA);
    ck_assert_uint_eq(e2.bytes, 1ull << 40);
    ck_assert_uint_eq(e2.device, 2);
    ck_assert_str_eq(e2.comm, "python3");
    ck_assert_str_eq(e2.message, "quota exceeded");
    ck_assert_int_eq(memd_wire_event_get(buf, MEMD_WIRE_EVENT_SIZE - 1, &e2), -EBADMSG);
    e.type = MEMD_EVENT_TYPE_COUNT;
    memd_wire_event_put(buf, &e);
    ck_assert_int_eq(memd_wire_event_get(buf, MEMD_WIRE_EVENT_SIZE, &e2), -EINVAL);
    e.type = MEMD_EVENT_DAEMON;
    REJECTS(event, MEMD_WIRE_EVENT_SIZE, e, 48 + 16, 'x', 256); /* the message without its NUL */

    memd_wire_events_info ei = {.next_seq = 9, .lost = 3, .count = 2}, ei2;
    memd_wire_events_info_put(buf, &ei);
    ck_assert_int_eq(memd_wire_events_info_get(buf, MEMD_WIRE_EVENTS_INFO_SIZE, &ei2), 0);
    ck_assert_uint_eq(ei2.next_seq, 9);
    ck_assert_uint_eq(ei2.lost, 3);
    ck_assert_uint_eq(ei2.count, 2);

    memd_wire_session_use u = {.session_id = 5, .device = 1, .kind = MEMD_KIND_SRAM,
                               .allocations = 3, .bytes = 1ull << 50, .shared_bytes = 64}, u2;
    ck_assert_ptr_eq(memd_wire_session_use_put(buf, &u), buf + MEMD_WIRE_SESSION_USE_SIZE);
    ck_assert_int_eq(memd_wire_session_use_get(buf, MEMD_WIRE_SESSION_USE_SIZE, &u2), 0);
    ck_assert_uint_eq(u2.session_id, 5);
    ck_assert_uint_eq(u2.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(u2.allocations, 3);
    ck_assert_uint_eq(u2.bytes, 1ull << 50);
    ck_assert_uint_eq(u2.shared_bytes, 64);
    REJECTS(session_use, MEMD_WIRE_SESSION_USE_SIZE, u, 8, MEMD_KIND_COUNT, 1);
}
END_TEST

START_TEST(session_rec_roundtrip_and_rejects)
{
    memd_wire_session_rec s = {.id = 5, .pid = 321, .uid = 0, .gid = 0,
                               .connected_ns = 99999, .allocations = 12, .requests = 40},
                          g;
    memd_wire_strset(s.comm, sizeof s.comm, "memctl");
    memd_wire_strset(s.client_name, sizeof s.client_name, "memctl 0.1.0");
    ROUNDTRIP(session_rec, MEMD_WIRE_SESSION_REC_SIZE, s, g);
    ck_assert_uint_eq(g.id, 5);
    ck_assert_uint_eq(g.pid, 321);
    ck_assert_uint_eq(g.connected_ns, 99999);
    ck_assert_uint_eq(g.allocations, 12);
    ck_assert_uint_eq(g.requests, 40);
    ck_assert_str_eq(g.comm, "memctl");
    ck_assert_str_eq(g.client_name, "memctl 0.1.0");
    REJECTS(session_rec, MEMD_WIRE_SESSION_REC_SIZE, s, 40, 'c', 16);
    REJECTS(session_rec, MEMD_WIRE_SESSION_REC_SIZE, s, 56, 'n', 32);
}
END_TEST

/* ---- batches, handles, tags ---- */

START_TEST(count_batches)
{
    uint32_t n = 99;
    uint8_t *p = memd_wire_count_put(buf, 3);
    ck_assert_ptr_eq(p, buf + MEMD_WIRE_COUNT_SIZE);
    size_t len = MEMD_WIRE_COUNT_SIZE + 3 * MEMD_WIRE_HANDLE_SIZE;
    ck_assert_int_eq(memd_wire_count_get(buf, len, MEMD_WIRE_HANDLE_SIZE, 10, &n), 0);
    ck_assert_uint_eq(n, 3);
    /* count says 3 but the payload holds 2 or 4 records, or a partial one */
    ck_assert_int_eq(memd_wire_count_get(buf, len - 8, 8, 10, &n), -EBADMSG);
    ck_assert_int_eq(memd_wire_count_get(buf, len + 8, 8, 10, &n), -EBADMSG);
    ck_assert_int_eq(memd_wire_count_get(buf, len - 1, 8, 10, &n), -EBADMSG);
    ck_assert_int_eq(memd_wire_count_get(buf, 7, 8, 10, &n), -EBADMSG);
    ck_assert_int_eq(memd_wire_count_get(buf, len, 8, 2, &n), -E2BIG);
    /* a huge count cannot overflow the length check */
    memd_wire_count_put(buf, UINT32_MAX);
    ck_assert_int_eq(memd_wire_count_get(buf, 8 + 136, 136, UINT32_MAX, &n), -EBADMSG);
    memd_wire_count_put(buf, 0);
    ck_assert_int_eq(memd_wire_count_get(buf, 8, 136, 0, &n), 0);
    ck_assert_uint_eq(n, 0);
}
END_TEST

/* Lengths of handle requests: test_opcodes.c. */
START_TEST(handles)
{
    ck_assert_ptr_eq(memd_wire_handle_put(buf, 0xfedcba9876543210ull), buf + 8);
    ck_assert_uint_eq(memd_wire_u64(buf), 0xfedcba9876543210ull);
    ck_assert_uint_eq(buf[0], 0x10);
}
END_TEST

START_TEST(alloc_info_pool_flag)
{
    memd_wire_alloc_info a = sample_info(), g;
    a.flags = MEMD_ALLOC_I_POOL;
    memd_wire_alloc_info_put(buf, &a);
    ck_assert_int_eq(memd_wire_alloc_info_get(buf, MEMD_WIRE_ALLOC_INFO_SIZE, &g), 0);
    ck_assert_uint_eq(g.flags, MEMD_ALLOC_I_POOL);
    REJECTS(alloc_info, MEMD_WIRE_ALLOC_INFO_SIZE, a, 62, 0x02, 1); /* the first unknown bit */
}
END_TEST

START_TEST(pool_records)
{
    memd_wire_pool_op o = {.pool = 7, .offset = 0x1000, .size = 96, .op = MEMD_POOL_OP_FREE}, og;
    memd_wire_strset(o.name, sizeof o.name, "act.3");
    ROUNDTRIP(pool_op, MEMD_WIRE_POOL_OP_SIZE, o, og);
    ck_assert_uint_eq(og.pool, 7);
    ck_assert_uint_eq(og.offset, 0x1000);
    ck_assert_uint_eq(og.size, 96);
    ck_assert_uint_eq(og.op, MEMD_POOL_OP_FREE);
    ck_assert_str_eq(og.name, "act.3");
    buf[24] = MEMD_POOL_OP_RESET;
    ck_assert_int_eq(memd_wire_pool_op_get(buf, MEMD_WIRE_POOL_OP_SIZE, &og), 0);
    ck_assert_uint_eq(og.op, MEMD_POOL_OP_RESET);
    REJECTS(pool_op, MEMD_WIRE_POOL_OP_SIZE, o, 24, 4, 1); /* no such op */
    REJECTS(pool_op, MEMD_WIRE_POOL_OP_SIZE, o, 24, 0, 1);
    REJECTS(pool_op, MEMD_WIRE_POOL_OP_SIZE, o, 32, 'n', MEMD_NAME_MAX); /* name without NUL */

    memd_wire_pool_rec p = {.handle = 3, .as_of_ns = 123456789, .pooled_bytes = 4096,
                            .reports = 5, .suballocs = 2}, pg;
    ROUNDTRIP(pool_rec, MEMD_WIRE_POOL_REC_SIZE, p, pg);
    ck_assert_uint_eq(pg.handle, 3);
    ck_assert_uint_eq(pg.as_of_ns, 123456789);
    ck_assert_uint_eq(pg.pooled_bytes, 4096);
    ck_assert_uint_eq(pg.reports, 5);
    ck_assert_uint_eq(pg.suballocs, 2);

    memd_wire_suballoc_rec s = {.pool = 3, .offset = 64, .size = 32}, sg;
    memd_wire_strset(s.name, sizeof s.name, "w");
    ROUNDTRIP(suballoc_rec, MEMD_WIRE_SUBALLOC_REC_SIZE, s, sg);
    ck_assert_uint_eq(sg.pool, 3);
    ck_assert_uint_eq(sg.offset, 64);
    ck_assert_uint_eq(sg.size, 32);
    ck_assert_str_eq(sg.name, "w");
    REJECTS(suballoc_rec, MEMD_WIRE_SUBALLOC_REC_SIZE, s, 24, 'n', MEMD_NAME_MAX);
}
END_TEST

START_TEST(tags)
{
    uint32_t tag;
    size_t n;
    for (uint32_t t = MEMD_REC_SERVER; t <= MEMD_REC_PAGE; t++) {
        size_t sz = memd_wire_rec_size(t);
        ck_assert_uint_gt(sz, 0);
        memd_wire_tag_put(buf, t);
        ck_assert_int_eq(memd_wire_tag_get(buf, 4 + sz, &tag, &n), 0);
        ck_assert_uint_eq(tag, t);
        ck_assert_uint_eq(n, sz);
        ck_assert_int_eq(memd_wire_tag_get(buf, 4 + sz - 1, &tag, &n), -EBADMSG);
    }
    ck_assert_uint_eq(memd_wire_rec_size(MEMD_REC_ALLOC), MEMD_WIRE_ALLOC_INFO_SIZE);
    ck_assert_uint_eq(memd_wire_rec_size(0), 0);
    memd_wire_tag_put(buf, 0);
    ck_assert_int_eq(memd_wire_tag_get(buf, 400, &tag, &n), -EINVAL);
    memd_wire_tag_put(buf, MEMD_REC_TAG_END);
    ck_assert_int_eq(memd_wire_tag_get(buf, 400, &tag, &n), -EINVAL);
    ck_assert_int_eq(memd_wire_tag_get(buf, 3, &tag, &n), -EBADMSG);
}
END_TEST

/* SUBDEV_BANKS: the one record whose size its count gives; ids strictly increasing. */
START_TEST(subdev_banks_rec)
{
    uint32_t ids[] = {3, 9, 200}, count, tag;
    const uint8_t *raw;
    size_t n;
    fill_canary();
    uint8_t *end = memd_wire_subdev_banks_put(memd_wire_tag_put(buf, MEMD_REC_SUBDEV_BANKS),
                                              ids, 3);
    ck_assert_ptr_eq(end, buf + 4 + MEMD_WIRE_SUBDEV_BANKS_REC_SIZE + 12);
    assert_tail_untouched(4 + MEMD_WIRE_SUBDEV_BANKS_REC_SIZE + 12);
    ck_assert_int_eq(memd_wire_tag_get(buf, 4 + 20, &tag, &n), 0);
    ck_assert_uint_eq(n, 20);
    ck_assert_int_eq(memd_wire_tag_get(buf, 4 + 19, &tag, &n), -EBADMSG);
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 20, &count, &raw), 0);
    ck_assert_uint_eq(count, 3);
    ck_assert_uint_eq(memd_wire_u32(raw + 8), 200);
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 19, &count, &raw), -EBADMSG);
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 24, &count, &raw), -EBADMSG);
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 7, &count, &raw), -EBADMSG);
    memd_wire_put_u32(buf + 4 + 8 + 4, 3); /* 3, 3: a duplicate */
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 20, &count, &raw), -EINVAL);
    memd_wire_put_u32(buf + 4 + 8 + 4, 2); /* 3, 2: decreasing */
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 20, &count, &raw), -EINVAL);
    memd_wire_put_u32(buf + 4, MEMD_BANKSET_MAX + 1);
    ck_assert_int_eq(memd_wire_tag_get(buf, sizeof buf, &tag, &n), -EINVAL);
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 20, &count, &raw), -EINVAL);
    memd_wire_put_u32(buf + 4, 0); /* an empty list is well formed */
    ck_assert_int_eq(memd_wire_tag_get(buf, 4 + 8, &tag, &n), 0);
    ck_assert_uint_eq(n, 8);
    ck_assert_int_eq(memd_wire_subdev_banks_get(buf + 4, 8, &count, &raw), 0);
    ck_assert_uint_eq(count, 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, scalars_little_endian);
    tcase_add_test(tc, hdr_roundtrip_and_layout);
    tcase_add_test(tc, hdr_roundtrip_values);
    tcase_add_test(tc, hdr_rejects);
    tcase_add_test(tc, hello_roundtrip_and_rejects);
    tcase_add_test(tc, welcome_roundtrip_and_rejects);
    tcase_add_test(tc, error_roundtrip_and_rejects);
    tcase_add_test(tc, alloc_req_roundtrip);
    tcase_add_test(tc, alloc_req_rejects);
    tcase_add_test(tc, strset_truncates_and_pads);
    tcase_add_test(tc, buffer_roundtrip_and_rejects);
    tcase_add_test(tc, banks_roundtrip_and_rejects);
    tcase_add_test(tc, alloc_info_roundtrip_and_rejects);
    tcase_add_test(tc, dump_req_roundtrip_and_rejects);
    tcase_add_test(tc, event_records_roundtrip_and_reject);
    tcase_add_test(tc, alloc_info_pool_flag);
    tcase_add_test(tc, pool_records);
    tcase_add_test(tc, stats_roundtrip);
    tcase_add_test(tc, server_rec_roundtrip_and_rejects);
    tcase_add_test(tc, device_rec_roundtrip_and_rejects);
    tcase_add_test(tc, group_rec_roundtrip_and_rejects);
    tcase_add_test(tc, region_rec_roundtrip_and_rejects);
    tcase_add_test(tc, block_rec_roundtrip_and_rejects);
    tcase_add_test(tc, session_rec_roundtrip_and_rejects);
    tcase_add_test(tc, count_batches);
    tcase_add_test(tc, handles);
    tcase_add_test(tc, tags);
    tcase_add_test(tc, subdev_banks_rec);
    suite_add_tcase(s, tc);
    return s;
}
