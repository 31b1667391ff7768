/* High-water marks through the real daemon and libmemclient: a peak stays after a free,
 * a reset brings it back to what is held, a non-admin sees and resets only its own
 * session's, a client pool's peak follows its reports, memctl peaks prints them (table
 * and JSON) and memctl metrics exports them. Run under valgrind and ASan by CI with the
 * daemon itself. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "memctl_run.h"

static memd_fixture f;

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

static uint32_t session_of(memclient *c)
{
    memclient_session_info i;
    ck_assert_int_eq(memclient_session(c, &i), 0);
    return i.session_id;
}

/* The peak record (what, device 0 DRAM; region, session or pool when they apply), or
 * NULL. */
static const memclient_peak *find(const memclient_peak *v, size_t n, unsigned what,
                                  uint32_t region, uint32_t session, uint64_t pool)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].what == what && v[i].device == 0 && v[i].kind == MEMD_KIND_DRAM &&
            (what != MEMCLIENT_PEAK_REGION || v[i].region == region) &&
            (what != MEMCLIENT_PEAK_SESSION || v[i].session_id == session) &&
            (what != MEMCLIENT_PEAK_POOL || v[i].pool == pool))
            return &v[i];
    return NULL;
}

START_TEST(peak_stays_after_free_and_resets)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint64_t banks = cu_dram_banks(c), mib = 1u << 20;
    uint32_t me = session_of(c);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, mib);
    memclient_buffer a, b;
    ck_assert_int_eq(memclient_alloc(c, &r, &a), 0);
    r.bytes = 2 * mib;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);

    memclient_peak *v;
    size_t n;
    ck_assert_int_eq(memclient_peaks(c, 0, &v, &n), 0);
    const memclient_peak *g = find(v, n, MEMCLIENT_PEAK_GROUP, 0, 0, 0);
    const memclient_peak *s = find(v, n, MEMCLIENT_PEAK_SESSION, 0, me, 0);
    const memclient_peak *d = find(v, n, MEMCLIENT_PEAK_REGION, a.region, 0, 0);
    ck_assert_ptr_nonnull(g);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(d);
    ck_assert_uint_eq(g->current, mib * banks);
    ck_assert_uint_eq(g->peak, 3 * mib * banks);
    ck_assert_uint_eq(d->peak, 3 * mib * banks);
    ck_assert_uint_eq(s->current, mib * banks);
    ck_assert_uint_eq(s->peak, 3 * mib * banks);
    ck_assert_uint_eq(s->pid, (uint32_t)getpid());
    ck_assert_uint_gt(s->peak_ns, 0);
    free(v);

    /* Its own session's: the device's peak stays. */
    ck_assert_int_eq(memclient_peaks_reset(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_PEAKS_OWN), 0);
    ck_assert_int_eq(memclient_peaks(c, 0, &v, &n), 0);
    ck_assert_uint_eq(find(v, n, MEMCLIENT_PEAK_SESSION, 0, me, 0)->peak, mib * banks);
    ck_assert_uint_eq(find(v, n, MEMCLIENT_PEAK_GROUP, 0, 0, 0)->peak, 3 * mib * banks);
    free(v);
    /* Everything (root is admin). */
    ck_assert_int_eq(memclient_peaks_reset(c, 0, MEMCLIENT_PEAKS_ALL), 0);
    ck_assert_int_eq(memclient_peaks(c, 0, &v, &n), 0);
    ck_assert_uint_eq(find(v, n, MEMCLIENT_PEAK_GROUP, 0, 0, 0)->peak, mib * banks);
    ck_assert_uint_eq(find(v, n, MEMCLIENT_PEAK_REGION, a.region, 0, 0)->peak, mib * banks);
    free(v);
    ck_assert_int_eq(memclient_peaks_reset(c, 0, 999999), -ENOENT);
    ck_assert_int_eq(memclient_peaks_reset(c, 77, MEMCLIENT_PEAKS_ALL), -ENODEV);
    ck_assert_int_eq(memclient_peaks(c, 77, &v, &n), -ENODEV);

    /* The snapshot carries them too (memctl status and metrics read it). */
    memclient_snapshot *snap = cu_dump(c, MEMCLIENT_DUMP_PEAKS);
    ck_assert_ptr_nonnull(find(snap->peaks, snap->npeaks, MEMCLIENT_PEAK_SESSION, 0, me, 0));
    memclient_snapshot_free(snap);
    memclient_disconnect(c);
}
END_TEST

/* As nobody: one allocation, its own peaks only, no reset of others' or of all. */
static int nobody_peaks(void *arg)
{
    const uint32_t *other = ((const uint32_t *const *)arg)[1];
    memclient *c = NULL;
    if (memclient_connect(((const char *const *)arg)[0], &c) < 0)
        return 10;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 64 << 10);
    memclient_buffer b;
    int rc = 0;
    if (memclient_alloc(c, &r, &b) < 0)
        rc = 11;
    memclient_peak *v = NULL;
    size_t n = 0;
    if (!rc && memclient_peaks(c, MEMCLIENT_ALL_DEVICES, &v, &n) < 0)
        rc = 12;
    for (size_t i = 0; !rc && i < n; i++)
        if (v[i].what == MEMCLIENT_PEAK_SESSION && v[i].session_id == *other)
            rc = 13; /* another's session */
    if (!rc && !find(v, n, MEMCLIENT_PEAK_GROUP, 0, 0, 0))
        rc = 14;
    free(v);
    if (!rc && memclient_peaks_reset(c, MEMCLIENT_ALL_DEVICES, *other) != -EPERM)
        rc = 15;
    memclient_error e;
    memclient_last_error(&e);
    if (!rc && !strstr(e.message, "only an admin"))
        rc = 16;
    if (!rc && memclient_peaks_reset(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_PEAKS_ALL) != -EPERM)
        rc = 17;
    if (!rc && memclient_peaks_reset(c, MEMCLIENT_ALL_DEVICES, MEMCLIENT_PEAKS_OWN) != 0)
        rc = 18;
    memclient_disconnect(c);
    return rc;
}

START_TEST(non_admin_sees_and_resets_its_own)
{
    cu_start(&f);
    cu_open_socket_to_all(&f);
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 128 << 10);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    uint32_t me = session_of(c);
    const void *args[] = {f.socket_path, &me};
    ck_assert_int_eq(cu_run_as(CU_NOBODY, nobody_peaks, args), 0);
    /* Root's session kept its peak through nobody's attempts. */
    memclient_peak *v;
    size_t n;
    ck_assert_int_eq(memclient_peaks(c, 0, &v, &n), 0);
    ck_assert_uint_eq(find(v, n, MEMCLIENT_PEAK_SESSION, 0, me, 0)->peak,
                      (128u << 10) * cu_dram_banks(c));
    free(v);
    memclient_disconnect(c);
}
END_TEST

START_TEST(pool_peak_from_reports)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, 1u << 20);
    memclient_pool *p = NULL;
    ck_assert_int_eq(memclient_pool_create(c, &r, &p), 0);
    memclient_buffer lease;
    ck_assert_int_eq(memclient_pool_lease(p, 0, &lease), 0);
    memclient_pool_buffer x, y;
    ck_assert_int_eq(memclient_pool_alloc(p, 4096, 0, "x", &x), 0);
    ck_assert_int_eq(memclient_pool_alloc(p, 8192, 0, "y", &y), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    ck_assert_int_eq(memclient_pool_free(p, y.handle), 0);
    ck_assert_int_eq(memclient_pool_flush(p), 0);
    memclient_peak *v;
    size_t n;
    ck_assert_int_eq(memclient_peaks(c, 0, &v, &n), 0);
    const memclient_peak *pk = find(v, n, MEMCLIENT_PEAK_POOL, 0, 0, lease.handle);
    ck_assert_ptr_nonnull(pk);
    ck_assert_uint_eq(pk->current, 4096);
    ck_assert_uint_eq(pk->peak, 4096 + 8192);
    ck_assert_uint_eq(pk->session_id, session_of(c));
    free(v);
    ck_assert_int_eq(memclient_peaks_reset(c, 0, MEMCLIENT_PEAKS_OWN), 0);
    ck_assert_int_eq(memclient_peaks(c, 0, &v, &n), 0);
    ck_assert_uint_eq(find(v, n, MEMCLIENT_PEAK_POOL, 0, 0, lease.handle)->peak, 4096);
    free(v);

    /* memctl: the table, JSON and the metrics families. */
    char out[65536];
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"peaks", "--device", "0", NULL},
                                    out, sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){"WHAT", "PEAK", "WHEN", "group", "region",
                                                  "session", "pool 0x", "data", NULL});
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"peaks", "--json", NULL}, out,
                                    sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){"\"what\": \"pool\"", "\"peak\": 4096",
                                                  "\"what\": \"region\"", "\"peak_ns\"", NULL});
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"metrics", NULL}, out,
                                    sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){
        "memd_device_peak_bytes{device=\"0\",group=\"dram\"} ",
        "# TYPE memd_region_peak_bytes gauge", "memd_process_peak_bytes{pid=",
        "memd_pool_peak_bytes{pid=", NULL});
    char want[96];
    snprintf(want, sizeof want, "memd_pool_peak_bytes{pid=\"%d\"", (int)getpid());
    ck_assert_msg(strstr(out, want), "%s", out);
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"status", NULL}, out, sizeof out),
                     0);
    memctl_expect_all(out, (const char *const[]){"PEAK", "WHAT", "region", NULL});
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"peaks", "reset", "--device", "0",
                                                               "--json", NULL},
                                    out, sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){"{\"reset\": true, \"device\": 0, \"session\": null}", NULL});
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"peaks", "reset", "--session", "x",
                                                               NULL},
                                    out, sizeof out), 2);
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"peaks", "--device", "99", NULL},
                                    out, sizeof out), 1);
    memctl_expect_all(out, (const char *const[]){"no device 99", NULL});
    ck_assert_int_eq(memclient_pool_destroy(p), 0);
    memclient_disconnect(c);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-peaks");
    TCase *tc = tcase_create("peaks");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, peak_stays_after_free_and_resets);
    tcase_add_test(tc, non_admin_sees_and_resets_its_own);
    tcase_add_test(tc, pool_peak_from_reports);
    suite_add_tcase(s, tc);
    return s;
}
