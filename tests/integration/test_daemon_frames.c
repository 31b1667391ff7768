/* The real daemon against malformed input: every kind of bad frame gets an error reply
 * (where the frame can be answered at all) and closes that connection only, while
 * another session, holding memory, carries on untouched. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check_main.h"
#include "daemon_fixture.h"
#include "raw_client.h"
#include "test_clock.h"
#include "wire_frame.h"

static memd_fixture fx;
static int bystander = -1;
static uint64_t bystander_handle;

static void setup(void)
{
    ck_assert_int_eq(memd_fixture_start(&fx, NULL), 0);
    bystander = memd_fixture_connect(&fx);
    ck_assert_int_ge(bystander, 0);
    memd_wire_buffer b;
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 1 << 20);
    ck_assert_int_eq(raw_alloc(bystander, &r, &b, NULL), 0);
    bystander_handle = b.handle;
}

static void teardown(void)
{
    /* The bystander's allocation survived the other session's failure. */
    uint8_t p[8];
    memd_wire_handle_put(p, bystander_handle);
    ck_assert_int_eq(raw_send(bystander, MEMD_OP_QUERY, 9, p, 8), 0);
    memd_wire_hdr h;
    uint8_t buf[512];
    ck_assert_int_eq(raw_recv(bystander, &h, buf, sizeof buf, 5000), 0);
    ck_assert_int_eq(h.status, 0);
    /* and it can still allocate and free */
    memd_wire_buffer b;
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 4096);
    ck_assert_int_eq(raw_alloc(bystander, &r, &b, NULL), 0);
    ck_assert_int_eq(raw_free(bystander, b.handle, NULL), 0);
    close(bystander);
    ck_assert_int_eq(memd_fixture_stop(&fx), 0);
}

/* Sends bytes on a fresh connection; expects one error reply (status, id) and then the
 * connection closed by the daemon. */
static void expect_rejected(const uint8_t *bytes, size_t len, bool shut_wr, int status,
                            uint64_t id)
{
    int fd = memd_fixture_connect(&fx);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(raw_write(fd, bytes, len), 0);
    if (shut_wr)
        shutdown(fd, SHUT_WR);
    memd_wire_hdr h;
    uint8_t buf[MEMD_WIRE_ERROR_SIZE];
    memd_wire_error err;
    ck_assert_int_eq(raw_recv_err(fd, &h, buf, sizeof buf, &err, 5000), 0);
    ck_assert_int_eq(h.status, status);
    ck_assert_uint_eq(h.id, id);
    ck_assert_uint_gt(strlen(err.message), 0);
    ck_assert_msg(raw_closed(fd, 5000), "connection not closed after a malformed frame");
    close(fd);
}

static uint8_t buf[4096];
static uint8_t pl[1024];

START_TEST(bad_magic)
{
    size_t n = frame(buf, MEMD_OP_FREE, 3, "\0\0\0\0\0\0\0\0", 8);
    memcpy(buf, "DMEM", 4);
    expect_rejected(buf, n, false, -EPROTO, 0);
}
END_TEST

START_TEST(bad_version)
{
    size_t n = frame(buf, MEMD_OP_FREE, 3, "\0\0\0\0\0\0\0\0", 8);
    memd_wire_put_u16(buf + 4, 7);
    expect_rejected(buf, n, false, -EPROTONOSUPPORT, 0);
}
END_TEST

START_TEST(oversized_length)
{
    /* Only the header is sent: the daemon must not wait for 2 GiB of payload. */
    frame(buf, MEMD_OP_ALLOC, 3, NULL, 0);
    memd_wire_put_u32(buf + 16, 0x80000000u);
    expect_rejected(buf, MEMD_HDR_SIZE, false, -EMSGSIZE, 0);
}
END_TEST

START_TEST(unknown_opcode)
{
    size_t n = frame(buf, 0x4242, 77, NULL, 0);
    expect_rejected(buf, n, false, -EBADRQC, 77);
}
END_TEST

START_TEST(truncated_payload_length)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 64);
    memd_wire_alloc_req_put(pl, &r);
    size_t n = frame(buf, MEMD_OP_ALLOC, 5, pl, MEMD_WIRE_ALLOC_REQ_SIZE - 1);
    expect_rejected(buf, n, false, -EBADMSG, 5);
}
END_TEST

START_TEST(truncated_at_eof)
{
    /* The header promises 8 bytes, 3 arrive, then the client stops sending. */
    size_t n = frame(buf, MEMD_OP_FREE, 6, "\1\0\0\0\0\0\0\0", 8);
    expect_rejected(buf, n - 5, true, -EBADMSG, 6);
    /* A cut header too. */
    expect_rejected(buf, 10, true, -EBADMSG, 0);
}
END_TEST

START_TEST(bad_enum)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 64);
    memd_wire_alloc_req_put(pl, &r);
    pl[4] = MEMD_CLASS_COUNT; /* class */
    size_t n = frame(buf, MEMD_OP_ALLOC, 7, pl, MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_rejected(buf, n, false, -EINVAL, 7);
    memd_wire_alloc_req_put(pl, &r);
    pl[6] = 200; /* dtype */
    n = frame(buf, MEMD_OP_ALLOC, 8, pl, MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_rejected(buf, n, false, -EINVAL, 8);
}
END_TEST

START_TEST(string_without_nul)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 64);
    memd_wire_alloc_req_put(pl, &r);
    memset(pl + 72, 'A', MEMD_NAME_MAX);
    size_t n = frame(buf, MEMD_OP_ALLOC, 9, pl, MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_rejected(buf, n, false, -EINVAL, 9);
    memd_wire_hello hello = {.min_version = 1, .max_version = 1};
    memd_wire_hello_put(pl, &hello);
    memset(pl + 8, 'B', 32);
    n = frame(buf, MEMD_OP_HELLO, 10, pl, MEMD_WIRE_HELLO_SIZE);
    expect_rejected(buf, n, false, -EINVAL, 10);
}
END_TEST

START_TEST(batch_count_mismatch)
{
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 64);
    memd_wire_count_put(pl, 3);
    memd_wire_alloc_req_put(pl + 8, &r);
    memd_wire_alloc_req_put(pl + 8 + MEMD_WIRE_ALLOC_REQ_SIZE, &r);
    size_t n = frame(buf, MEMD_OP_ALLOC_BATCH, 11, pl, 8 + 2 * MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_rejected(buf, n, false, -EBADMSG, 11);
    memd_wire_count_put(pl, 1); /* FREE_BATCH: one handle announced, two sent */
    n = frame(buf, MEMD_OP_FREE_BATCH, 12, pl, 8 + 16);
    expect_rejected(buf, n, false, -EBADMSG, 12);
}
END_TEST

START_TEST(good_frames_before_bad_are_answered)
{
    /* Pipelined: a valid ALLOC, then garbage. The ALLOC is answered, then the error,
     * and the allocation is released with the closed session. */
    memd_wire_alloc_req r = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 900u << 20);
    memd_wire_alloc_req_put(pl, &r);
    size_t n = frame(buf, MEMD_OP_ALLOC, 1, pl, MEMD_WIRE_ALLOC_REQ_SIZE);
    n += frame(buf + n, 999, 2, NULL, 0);
    int fd = memd_fixture_connect(&fx);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(raw_write(fd, buf, n), 0);
    memd_wire_hdr h;
    ck_assert_int_eq(raw_recv(fd, &h, pl, sizeof pl, 5000), 0);
    ck_assert_uint_eq(h.id, 1);
    ck_assert_int_eq(h.status, 0);
    ck_assert_int_eq(raw_recv(fd, &h, pl, sizeof pl, 5000), 0);
    ck_assert_uint_eq(h.id, 2);
    ck_assert_int_eq(h.status, -EBADRQC);
    ck_assert(raw_closed(fd, 5000));
    close(fd);
    /* 900 MiB per bank was given back: the bystander can take it now (retrying while
     * the daemon finishes the close it already saw). */
    memd_wire_buffer b;
    int rc = -ENOMEM;
    for (int i = 0; i < 100 && rc == -ENOMEM; i++) {
        rc = raw_alloc(bystander, &r, &b, NULL);
        if (rc == -ENOMEM)
            memd_test_sleep_ms(20);
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(raw_free(bystander, b.handle, NULL), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-frames");
    TCase *tc = tcase_create("malformed");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bad_magic);
    tcase_add_test(tc, bad_version);
    tcase_add_test(tc, oversized_length);
    tcase_add_test(tc, unknown_opcode);
    tcase_add_test(tc, truncated_payload_length);
    tcase_add_test(tc, truncated_at_eof);
    tcase_add_test(tc, bad_enum);
    tcase_add_test(tc, string_without_nul);
    tcase_add_test(tc, batch_count_mismatch);
    tcase_add_test(tc, good_frames_before_bad_are_answered);
    suite_add_tcase(s, tc);
    return s;
}
