/* The opcode table: every opcode's row (name, request shape, flags) and the length
 * check of each shape, against the lengths the decoders and handlers accept. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "wire.h"

static uint8_t buf[512];

START_TEST(opcodes)
{
    ck_assert(!memd_wire_opcode_valid(0));
    for (uint32_t op = MEMD_OP_HELLO; op < MEMD_OP_OPCODE_COUNT; op++) {
        ck_assert(memd_wire_opcode_valid(op));
        ck_assert_str_ne(memd_wire_opcode_name(op), "?");
    }
    ck_assert(!memd_wire_opcode_valid(MEMD_OP_OPCODE_COUNT));
    ck_assert(!memd_wire_opcode_valid(0xffff));
    ck_assert_str_eq(memd_wire_opcode_name(0xffff), "?");
    ck_assert_str_eq(memd_wire_opcode_name(MEMD_OP_FREE_BATCH), "FREE_BATCH");
}
END_TEST

/* Every opcode's row agrees with itself and with its shape's length rule; the rows'
 * values come from proto/memd.toml and proto/layout.lock pins them (tests/unit/
 * proto_lock_test.py), so a new request needs no line here. A few rows spelled out say
 * what the fields mean. */
START_TEST(opcode_table)
{
    for (uint16_t op = MEMD_OP_HELLO; op < MEMD_OP_OPCODE_COUNT; op++) {
        const memd_wire_op *o = memd_wire_op_of(op);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(memd_wire_opcode_name(op), o->name);
        ck_assert_int_eq(memd_wire_opcode_mutating(op), o->mutating);
        ck_assert(o->shape == MEMD_WIRE_SHAPE_FIXED || o->shape == MEMD_WIRE_SHAPE_MIN ||
                  o->shape == MEMD_WIRE_SHAPE_COUNT || o->shape == MEMD_WIRE_SHAPE_DOC);
        ck_assert(o->len_v1 == 0 || ((o->shape == MEMD_WIRE_SHAPE_FIXED ||
                                      o->shape == MEMD_WIRE_SHAPE_MIN) && o->len_v1 < o->len));
        for (uint16_t other = MEMD_OP_HELLO; other < op; other++)
            ck_assert_str_ne(memd_wire_opcode_name(other), o->name);
    }
    static const struct {
        uint16_t op;
        const char *name;
        memd_wire_shape shape;
        uint32_t len, len_v1;
        bool mutating, admin_only;
    } want[] = {
        {MEMD_OP_HELLO, "HELLO", MEMD_WIRE_SHAPE_FIXED, 64, 40, true, false},
        {MEMD_OP_ALLOC_BATCH, "ALLOC_BATCH", MEMD_WIRE_SHAPE_COUNT, 136, 0, true, false},
        {MEMD_OP_QUERY, "QUERY", MEMD_WIRE_SHAPE_FIXED, 8, 0, false, false},
        {MEMD_OP_UPLOAD, "UPLOAD", MEMD_WIRE_SHAPE_MIN, 24, 0, false, false},
        {MEMD_OP_PLAN, "PLAN", MEMD_WIRE_SHAPE_DOC, 8, 0, false, false},
        /* The window (u64) appended: the definition without it still accepted. */
        {MEMD_OP_SUBDEV_DEFINE, "SUBDEV_DEFINE", MEMD_WIRE_SHAPE_MIN, 352, 344, true, true},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const memd_wire_op *o = memd_wire_op_of(want[i].op);
        ck_assert_str_eq(o->name, want[i].name);
        ck_assert_int_eq(o->shape, want[i].shape);
        ck_assert_uint_eq(o->len, want[i].len);
        ck_assert_uint_eq(o->len_v1, want[i].len_v1);
        ck_assert_int_eq(o->mutating, want[i].mutating);
        ck_assert_int_eq(o->admin_only, want[i].admin_only);
    }
    ck_assert_ptr_null(memd_wire_op_of(0));
    ck_assert_ptr_null(memd_wire_op_of(MEMD_OP_OPCODE_COUNT));
    ck_assert_ptr_null(memd_wire_op_of(0xffff));
    ck_assert(!memd_wire_opcode_mutating(0));
    ck_assert(!memd_wire_opcode_mutating(0xffff));
}
END_TEST

static bool len_ok(uint32_t op, size_t len)
{
    return memd_wire_op_check_len(op, buf, len) == 0;
}

START_TEST(op_check_len_fixed)
{
    static const uint16_t handle_ops[] = {MEMD_OP_FREE, MEMD_OP_QUERY, MEMD_OP_BANKS,
                                          MEMD_OP_BANK_ADDRS};
    static const uint16_t ref_ops[] = {MEMD_OP_MODEL_UNLOAD, MEMD_OP_MODEL_INFO,
                                       MEMD_OP_INSTANCE_CREATE, MEMD_OP_INSTANCE_RELEASE};
    memd_wire_hello h = {.min_version = 1, .max_version = 1};
    memset(buf, 0, sizeof buf);
    memd_wire_hello_put(buf, &h);
    for (size_t len = 0; len <= 300; len++) {
        ck_assert_int_eq(len_ok(MEMD_OP_HELLO, len), len == 40 || len == 64);
        /* the table and the HELLO decoder agree on the lengths */
        ck_assert_int_eq(len_ok(MEMD_OP_HELLO, len),
                         memd_wire_hello_get_any(buf, len, &h) != -EBADMSG);
        ck_assert_int_eq(len_ok(MEMD_OP_ALLOC, len), len == MEMD_WIRE_ALLOC_REQ_SIZE);
        ck_assert_int_eq(len_ok(MEMD_OP_DUMP, len),
                         len == MEMD_WIRE_DUMP_REQ_SIZE || len == MEMD_WIRE_DUMP_REQ_V1_SIZE);
        /* exactly one u64 handle: 7 or 9 bytes are not one */
        for (size_t i = 0; i < sizeof handle_ops / sizeof handle_ops[0]; i++)
            ck_assert_int_eq(len_ok(handle_ops[i], len), len == MEMD_WIRE_HANDLE_SIZE);
        for (size_t i = 0; i < sizeof ref_ops / sizeof ref_ops[0]; i++)
            ck_assert_int_eq(len_ok(ref_ops[i], len), len == MEMD_WIRE_REF_SIZE);
    }
    ck_assert_int_eq(memd_wire_op_check_len(MEMD_OP_FREE, buf, 7), -EBADMSG);
    ck_assert_int_eq(memd_wire_op_check_len(MEMD_OP_FREE, buf, 9), -EBADMSG);
    ck_assert_int_eq(memd_wire_op_check_len(0, buf, 8), -EBADRQC);
    ck_assert_int_eq(memd_wire_op_check_len(MEMD_OP_OPCODE_COUNT, buf, 8), -EBADRQC);
}
END_TEST

START_TEST(op_check_len_shapes)
{
    memset(buf, 0, sizeof buf);
    /* UPLOAD: its 24-byte record, then any number of data bytes */
    ck_assert(!len_ok(MEMD_OP_UPLOAD, 23));
    ck_assert(len_ok(MEMD_OP_UPLOAD, 24));
    ck_assert(len_ok(MEMD_OP_UPLOAD, 24 + 1000));
    /* batches: the count must match the records that follow */
    memd_wire_count_put(buf, 3);
    ck_assert(len_ok(MEMD_OP_FREE_BATCH, 8 + 3 * 8));
    ck_assert(!len_ok(MEMD_OP_FREE_BATCH, 8 + 2 * 8));
    ck_assert(!len_ok(MEMD_OP_FREE_BATCH, 8 + 4 * 8));
    ck_assert(!len_ok(MEMD_OP_FREE_BATCH, 8 + 3 * 8 - 1));
    ck_assert(len_ok(MEMD_OP_ALLOC_BATCH, 8 + 3 * MEMD_WIRE_ALLOC_REQ_SIZE));
    ck_assert(!len_ok(MEMD_OP_ALLOC_BATCH, 8 + 3 * 8));
    ck_assert(!len_ok(MEMD_OP_ALLOC_BATCH, 7));
    memd_wire_count_put(buf, 0);
    ck_assert(len_ok(MEMD_OP_ALLOC_BATCH, 8));
    memd_wire_count_put(buf, UINT32_MAX); /* no overflow in the check */
    ck_assert(!len_ok(MEMD_OP_ALLOC_BATCH, 8 + MEMD_WIRE_ALLOC_REQ_SIZE));
    /* ALLOC_BATCH_BANKS: the count prefix; its elements vary, the handler walks them */
    ck_assert(!len_ok(MEMD_OP_ALLOC_BATCH_BANKS, 7));
    ck_assert(len_ok(MEMD_OP_ALLOC_BATCH_BANKS, 8));
    /* documents: upload id 0 and the document inline, or a named upload alone */
    for (uint16_t op = MEMD_OP_PLAN; op <= MEMD_OP_MODEL_LOAD; op++) {
        memd_wire_put_u64(buf, 0);
        ck_assert(!len_ok(op, 7));
        ck_assert(len_ok(op, 8));
        ck_assert(len_ok(op, 8 + 100));
        memd_wire_put_u64(buf, 5);
        ck_assert(len_ok(op, 8));
        ck_assert(!len_ok(op, 9));
        ck_assert(!len_ok(op, 8 + 100));
    }
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("opcodes");
    TCase *tc = tcase_create("table");
    tcase_add_test(tc, opcodes);
    tcase_add_test(tc, opcode_table);
    tcase_add_test(tc, op_check_len_fixed);
    tcase_add_test(tc, op_check_len_shapes);
    suite_add_tcase(s, tc);
    return s;
}
