/* Cgroup limits through the real daemon and libmemclient, on the cgroup this test runs in
 * (memd reads it at connect; limits_test.py does the hierarchy with cgroups of its own):
 * a limit refuses what would pass it (-ENOMEM, detail LIMIT, the message naming it), the
 * dump shows max, current and peak, a free uncharges, a limit set by request survives a
 * restart, non-admins get -EPERM, a clear removes it. Run under valgrind and ASan by CI
 * with the daemon itself. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"

static memd_fixture f;
static char own[256];

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

/* This process's cgroup v2 path, as memd will read it for our sessions. */
static bool own_cgroup(void)
{
    FILE *p = fopen("/proc/self/cgroup", "r");
    char line[512];
    bool found = false;
    while (p && !found && fgets(line, sizeof line, p))
        if (!strncmp(line, "0::", 3)) {
            size_t n = strcspn(line + 3, "\n");
            found = line[3] == '/' && n < sizeof own;
            memcpy(own, line + 3, found ? n : 0);
            own[found ? n : 0] = '\0';
        }
    if (p)
        fclose(p);
    return found;
}

static const memclient_limit *limit_of(const memclient_snapshot *s)
{
    for (size_t i = 0; i < s->nlimits; i++)
        if (!strcmp(s->limits[i].cgroup, own))
            return &s->limits[i];
    return NULL;
}

static int nobody_sets(void *arg)
{
    memclient *c = NULL;
    if (memclient_connect(arg, &c) < 0)
        return 10;
    int r = memclient_limit_set(c, own, 0, MEMD_KIND_DRAM, 1);
    memclient_error e;
    memclient_last_error(&e);
    memclient_disconnect(c);
    return r == -EPERM && strstr(e.message, "admins only") ? 0 : 11;
}

START_TEST(limit_bounds_own_cgroup)
{
    if (!own_cgroup()) { /* no cgroup v2 path: nothing memd could limit */
        printf("# no cgroup v2 path for this process: limits not checked\n");
        return;
    }
    cu_start(&f);
    cu_open_socket_to_all(&f);
    memclient *c = cu_connect(&f);
    uint64_t banks = cu_dram_banks(c), mx = (1u << 20) * banks;
    ck_assert_int_eq(memclient_limit_set(c, own, 0, MEMD_KIND_DRAM, mx), 0);
    ck_assert_int_eq(memclient_limit_set(c, "no/slash", 0, MEMD_KIND_DRAM, mx), -EINVAL);
    ck_assert_int_eq(memclient_limit_set(c, "/x", 99, MEMD_KIND_DRAM, mx), -ENODEV);

    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 512 << 10);
    memclient_buffer b, over;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    r.bytes = 768 << 10;
    ck_assert_int_eq(memclient_alloc(c, &r, &over), -ENOMEM);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_uint_eq(e.detail, MEMCLIENT_DETAIL_LIMIT);
    ck_assert_msg(strstr(e.message, "cgroup limit of") && strstr(e.message, "max "), "%s",
                  e.message);

    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_LIMITS | MEMCLIENT_DUMP_FAILURES);
    const memclient_limit *l = limit_of(s);
    ck_assert_ptr_nonnull(l);
    ck_assert_uint_eq(l->max, mx);
    ck_assert_uint_eq(l->current, (512u << 10) * banks);
    ck_assert_uint_eq(l->peak, (512u << 10) * banks);
    ck_assert(!l->from_config);
    ck_assert_uint_ge(s->nfailures, 1);
    ck_assert_uint_eq(s->failures[0].device, 0);
    ck_assert_uint_eq(s->failures[0].limit, 1);
    memclient_snapshot_free(s);

    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    s = cu_dump(c, MEMCLIENT_DUMP_LIMITS);
    ck_assert_uint_eq(limit_of(s)->current, 0);
    ck_assert_uint_eq(limit_of(s)->peak, (512u << 10) * banks);
    memclient_snapshot_free(s);
    memclient_disconnect(c);

    ck_assert_int_eq(cu_run_as(CU_NOBODY, nobody_sets, f.socket_path), 0);

    /* Kept in the state store: back after a restart (usage counted afresh). */
    ck_assert_int_eq(memd_fixture_restart(&f, NULL, SIGTERM), 0);
    c = cu_connect(&f);
    s = cu_dump(c, MEMCLIENT_DUMP_LIMITS);
    ck_assert_ptr_nonnull(limit_of(s));
    ck_assert_uint_eq(limit_of(s)->max, mx);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_limit_clear(c, own, MEMCLIENT_ALL_DEVICES, MEMD_KIND_COUNT), 0);
    ck_assert_int_eq(memclient_limit_clear(c, own, 0, MEMD_KIND_DRAM), -ENOENT);
    r.bytes = 768 << 10;
    ck_assert_int_eq(memclient_alloc(c, &r, &over), 0); /* no limit now */
    memclient_disconnect(c);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-limits");
    TCase *tc = tcase_create("limits");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, limit_bounds_own_cgroup);
    suite_add_tcase(s, tc);
    return s;
}
