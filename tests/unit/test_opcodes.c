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

/* Each opcode's row: the request shape its handler decodes, whether it may change what
 * the state store records, and which are for admins only (SUBDEV_DEFINE alone: the other
 * handlers widen what an admin may see and free; none refuses a session outright). */
START_TEST(opcode_table)
{
    static const struct {
        uint16_t op;
        const char *name;
        memd_wire_shape shape;
        uint32_t len, len_v1;
        bool mutating;
        bool admin_only;
    } want[] = {
        {MEMD_OP_HELLO, "HELLO", MEMD_WIRE_SHAPE_FIXED, 64, 40, true},
        {MEMD_OP_ALLOC, "ALLOC", MEMD_WIRE_SHAPE_FIXED, 136, 0, true},
        {MEMD_OP_ALLOC_BATCH, "ALLOC_BATCH", MEMD_WIRE_SHAPE_COUNT, 136, 0, true},
        {MEMD_OP_FREE, "FREE", MEMD_WIRE_SHAPE_FIXED, 8, 0, true},
        {MEMD_OP_FREE_BATCH, "FREE_BATCH", MEMD_WIRE_SHAPE_COUNT, 8, 0, true},
        {MEMD_OP_QUERY, "QUERY", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_BANKS, "BANKS", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_DUMP, "DUMP", MEMD_WIRE_SHAPE_FIXED, 16, 8, false},
        {MEMD_OP_UPLOAD, "UPLOAD", MEMD_WIRE_SHAPE_MIN, 24, 0, false},
        {MEMD_OP_PLAN, "PLAN", MEMD_WIRE_SHAPE_DOC, 8, 0, false},
        {MEMD_OP_MODEL_LOAD, "MODEL_LOAD", MEMD_WIRE_SHAPE_DOC, 8, 0, true},
        {MEMD_OP_MODEL_UNLOAD, "MODEL_UNLOAD", MEMD_WIRE_SHAPE_FIXED, 16, 0, true},
        {MEMD_OP_MODEL_INFO, "MODEL_INFO", MEMD_WIRE_SHAPE_FIXED, 16, 0, false},
        {MEMD_OP_INSTANCE_CREATE, "INSTANCE_CREATE", MEMD_WIRE_SHAPE_FIXED, 16, 0, true},
        {MEMD_OP_INSTANCE_RELEASE, "INSTANCE_RELEASE", MEMD_WIRE_SHAPE_FIXED, 16, 0, true},
        {MEMD_OP_EVENTS, "EVENTS", MEMD_WIRE_SHAPE_FIXED, 16, 0, false},
        {MEMD_OP_POOL_REPORT, "POOL_REPORT", MEMD_WIRE_SHAPE_COUNT, 96, 0, false},
        {MEMD_OP_ALLOC_BANKS, "ALLOC_BANKS", MEMD_WIRE_SHAPE_MIN, 144, 0, true},
        {MEMD_OP_BANK_ADDRS, "BANK_ADDRS", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_SUBDEV_DEFINE, "SUBDEV_DEFINE", MEMD_WIRE_SHAPE_MIN, 344, 0, true, true},
        {MEMD_OP_SUBDEV_BIND, "SUBDEV_BIND", MEMD_WIRE_SHAPE_FIXED, 64, 0, true},
        {MEMD_OP_ALLOC_BATCH_BANKS, "ALLOC_BATCH_BANKS", MEMD_WIRE_SHAPE_MIN, 8, 0, true},
        {MEMD_OP_PAGE_SIZE, "PAGE_SIZE", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_CONTEXT, "CONTEXT", MEMD_WIRE_SHAPE_FIXED, 640, 0, false},
        {MEMD_OP_HISTORY, "HISTORY", MEMD_WIRE_SHAPE_FIXED, 64, 0, false},
        {MEMD_OP_ALLOC_AT, "ALLOC_AT", MEMD_WIRE_SHAPE_MIN, 152, 0, true},
        {MEMD_OP_LOWEST, "LOWEST", MEMD_WIRE_SHAPE_FIXED, 16, 0, false},
        {MEMD_OP_MODEL_SET_READY, "MODEL_SET_READY", MEMD_WIRE_SHAPE_FIXED, 16, 0, true},
        {MEMD_OP_MODEL_WAIT, "MODEL_WAIT", MEMD_WIRE_SHAPE_FIXED, 16, 0, true},
        {MEMD_OP_MODEL_STATES, "MODEL_STATES", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_REGION_HOLDERS, "REGION_HOLDERS", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_LIMIT_SET, "LIMIT_SET", MEMD_WIRE_SHAPE_FIXED, 272, 0, true, true},
        {MEMD_OP_LIMIT_CLEAR, "LIMIT_CLEAR", MEMD_WIRE_SHAPE_FIXED, 272, 0, true, true},
        {MEMD_OP_PEAKS, "PEAKS", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
        {MEMD_OP_PEAKS_RESET, "PEAKS_RESET", MEMD_WIRE_SHAPE_FIXED, 8, 0, false},
    };
    ck_assert_uint_eq(sizeof want / sizeof want[0], MEMD_OP_OPCODE_COUNT - 1);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const memd_wire_op *o = memd_wire_op_of(want[i].op);
        ck_assert_ptr_nonnull(o);
        ck_assert_str_eq(o->name, want[i].name);
        ck_assert_str_eq(memd_wire_opcode_name(want[i].op), want[i].name);
        ck_assert_int_eq(o->shape, want[i].shape);
        ck_assert_uint_eq(o->len, want[i].len);
        ck_assert_uint_eq(o->len_v1, want[i].len_v1);
        ck_assert_int_eq(o->mutating, want[i].mutating);
        ck_assert_int_eq(memd_wire_opcode_mutating(want[i].op), want[i].mutating);
        ck_assert_int_eq(o->admin_only, want[i].admin_only);
    }
    ck_assert_ptr_null(memd_wire_op_of(0));
    ck_assert_ptr_null(memd_wire_op_of(MEMD_OP_OPCODE_COUNT));
    ck_assert_ptr_null(memd_wire_op_of(0xffff));
    ck_assert(!memd_wire_opcode_mutating(0));
    ck_assert(!memd_wire_opcode_mutating(0xffff));
    /* the sizes the rows name are the records' */
    ck_assert_uint_eq(MEMD_WIRE_HELLO_SIZE, 64);
    ck_assert_uint_eq(MEMD_WIRE_HELLO_V1_SIZE, 40);
    ck_assert_uint_eq(MEMD_WIRE_ALLOC_REQ_SIZE, 136);
    ck_assert_uint_eq(MEMD_WIRE_UPLOAD_SIZE, 24);
    ck_assert_uint_eq(MEMD_WIRE_REF_SIZE, 16);
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
