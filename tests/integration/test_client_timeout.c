/* Call timeouts in libmemclient with the real daemon: a SIGSTOPped memd makes a call fail
 * with -ETIMEDOUT after the connection's timeout, the connection is closed (a late reply
 * can never answer a later request: every later call is -ENOTCONN), and once memd runs
 * again a new connection works; $MEMD_TIMEOUT_MS bounds the connect's own HELLO and is
 * refused when it is not a number; a MODEL_WAIT's own timeout comes on top of the call
 * timeout. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "client_util.h"
#include "test_clock.h"

static memd_fixture f;

static void setup(void)
{
    cu_start(&f);
}

static void teardown(void)
{
    kill(f.pid, SIGCONT);
    unsetenv(MEMCLIENT_TIMEOUT_ENV);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}

START_TEST(stopped_daemon_times_out)
{
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_set_timeout(c, -1), -EINVAL);
    /* Long enough for a loaded machine's store commit (an fsync), under valgrind too. */
    ck_assert_int_eq(memclient_set_timeout(c, 2000), 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_PLACEHOLDER, 4096);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0); /* a running daemon answers in time */

    ck_assert_int_eq(kill(f.pid, SIGSTOP), 0);
    long t0 = memd_test_now_ms();
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ETIMEDOUT);
    long took = memd_test_now_ms() - t0;
    ck_assert_int_ge(took, 2000);
    ck_assert_int_lt(took, 10000);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "within 2000 ms"), "%s", e.message);
    /* The connection is gone: its late reply cannot be taken for this request's. */
    ck_assert_int_eq(kill(f.pid, SIGCONT), 0);
    ck_assert_int_eq(memclient_free(c, b.handle), -ENOTCONN);
    memclient_disconnect(c);

    memclient *fresh = cu_connect(&f);
    ck_assert_int_eq(memclient_alloc(fresh, &r, &b), 0);
    ck_assert_int_eq(memclient_free(fresh, b.handle), 0);
    memclient_disconnect(fresh);
}
END_TEST

START_TEST(timeout_from_the_environment)
{
    memclient *c;
    setenv(MEMCLIENT_TIMEOUT_ENV, "soon", 1);
    ck_assert_int_eq(memclient_connect(f.socket_path, &c), -EINVAL);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "MEMD_TIMEOUT_MS=soon"), "%s", e.message);
    setenv(MEMCLIENT_TIMEOUT_ENV, "150", 1);
    ck_assert_int_eq(kill(f.pid, SIGSTOP), 0);
    long t0 = memd_test_now_ms();
    ck_assert_int_eq(memclient_connect(f.socket_path, &c), -ETIMEDOUT); /* its HELLO */
    ck_assert_int_ge(memd_test_now_ms() - t0, 150);
    ck_assert_int_eq(kill(f.pid, SIGCONT), 0);
    setenv(MEMCLIENT_TIMEOUT_ENV, "20000", 1); /* a running daemon (valgrind's too) */
    ck_assert_int_eq(memclient_connect(f.socket_path, &c), 0);
    memclient_disconnect(c);
    ck_assert_int_eq(memclient_connect_timeout(f.socket_path, NULL, 0, -5, &c), -EINVAL);
}
END_TEST

/* A MODEL_WAIT longer than the call timeout is not cut short by it. */
START_TEST(model_wait_timeout_on_top)
{
    static const memclient_tensor_desc t[] = {
        {.name = "w", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 4096},
        {.name = "x", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 64},
        {.name = "y", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 64},
    };
    static const uint32_t in[] = {1, 0}, out[] = {2};
    static const memclient_op_desc op = {.name = "fc", .inputs = in, .ninputs = 2,
                                         .outputs = out, .noutputs = 1};
    memclient_model_desc d = {.name = "timeout-wait", .scope = MEMD_SCOPE_DRAM, .tensors = t,
                              .ntensors = 3, .ops = &op, .nops = 1};
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f);
    memclient_model_info m;
    ck_assert_int_eq(memclient_model_load(c1, &d, NULL, &m, NULL), 0);
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m, NULL), 0);
    ck_assert_int_eq(memclient_set_timeout(c2, 100), 0);
    long t0 = memd_test_now_ms();
    ck_assert_int_eq(memclient_model_wait(c2, m.model_id, 400, &m, NULL, 0), -ETIMEDOUT);
    ck_assert_int_ge(memd_test_now_ms() - t0, 400);
    /* The daemon's answer, not the library's: the connection lives on. */
    ck_assert_int_eq(memclient_model_query(c2, m.model_id, &m, NULL, 0), 3);
    memclient_disconnect(c2);
    memclient_disconnect(c1);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-timeout");
    TCase *tc = tcase_create("timeout");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, stopped_daemon_times_out);
    tcase_add_test(tc, timeout_from_the_environment);
    tcase_add_test(tc, model_wait_timeout_on_top);
    suite_add_tcase(s, tc);
    return s;
}
