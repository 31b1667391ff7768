/* Post-mortems against the real daemon (issue 25): an out-of-memory refusal saves a
 * snapshot whose id the error and the log line name; it is a file under the state
 * directory, listed and read back with POSTMORTEM (the request, the region, its holders
 * and largest free blocks, the recorder's last events); the per-uid rate limit and the
 * count bound hold; a restart reads them back; others see only their uid's; memctl
 * postmortem shows them as text, JSON and one self-contained HTML page. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memd/protocol.h" /* MEMD_HIST_FAIL */

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"

static memd_fixture f;

static void teardown(void)
{
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}

/* Fills device 0's DRAM "data" to 60 % with one buffer, held by c (its handle). */
static uint64_t fill(memclient *c, uint64_t *big)
{
    *big = cu_region_size(c, 0, MEMD_KIND_DRAM, "data") / 10 * 6 / 4096 * 4096;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, *big);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    return b.handle;
}

/* memd started with limits and a client connected, holding fill()'s buffer. */
static memclient *start_filled(const char *limits, uint64_t *big)
{
    cu_start_limits(&f, limits);
    memclient *c = cu_connect(&f);
    fill(c, big);
    return c;
}

/* Another 60 %: refused. The post-mortem id the error names (0: none). */
static uint64_t refuse(memclient *c, uint64_t big)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_INTERNAL, big);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_int_eq(e.detail, MEMCLIENT_DETAIL_NOMEM);
    return e.postmortem;
}

static bool file_exists(uint64_t id)
{
    char path[256];
    struct stat sb;
    snprintf(path, sizeof path, "%s/postmortems/%" PRIu64 ".pm", f.dir, id);
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0;
}

/* The ids c may list, in *ids (at most 8); how many. */
static size_t list(memclient *c, uint64_t *ids)
{
    memclient_postmortem *v;
    size_t n;
    ck_assert_int_eq(memclient_postmortems(c, &v, &n), 0);
    for (size_t i = 0; i < n && i < 8; i++)
        ids[i] = v[i].id;
    free(v);
    return n;
}

START_TEST(oom_saves_a_snapshot)
{
    cu_start_limits(&f, "postmortem_interval_ms: 0");
    memclient *c;
    ck_assert_int_eq(memclient_connect_named(f.socket_path, "pm-test", &c), 0);
    uint64_t big, h = fill(c, &big);
    uint64_t id = refuse(c, big);
    ck_assert_uint_ne(id, 0);
    memclient_postmortem *v;
    size_t n;
    ck_assert_int_eq(memclient_postmortems(c, &v, &n), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(v[0].id, id);
    ck_assert_int_eq(v[0].status, -ENOMEM);
    ck_assert_uint_eq(v[0].requested, big);
    ck_assert_uint_eq(v[0].pid, (uint32_t)getpid());
    ck_assert_uint_eq(v[0].uid, getuid());
    ck_assert_str_eq(v[0].region_name, "data");
    ck_assert_str_eq(v[0].client_name, "pm-test");
    ck_assert_int_eq(v[0].cls, MEMD_CLASS_INTERNAL);
    ck_assert_int_eq(v[0].dir, MEMD_DIR_TOP_DOWN); /* internal: top-down in data */
    ck_assert_uint_lt(v[0].largest_free, big);
    ck_assert_ptr_nonnull(strstr(v[0].message, "no room"));
    free(v);
    ck_assert(file_exists(id));
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&f), "(postmortem 1)"));

    memclient_postmortem_report r;
    ck_assert_int_eq(memclient_postmortem_get(c, id, &r), 0);
    ck_assert_uint_eq(r.info.nholders, 1);
    ck_assert_uint_eq(r.holders[0].pid, (uint32_t)getpid());
    ck_assert_uint_ge(r.holders[0].bytes, big);
    /* The largest free blocks, largest first, the first one the region's largest. */
    ck_assert_uint_ge(r.info.nfree, 1);
    ck_assert_uint_eq(r.free_blocks[0].size, r.info.largest_free);
    for (uint32_t i = 1; i < r.info.nfree; i++)
        ck_assert_uint_le(r.free_blocks[i].size, r.free_blocks[i - 1].size);
    /* The events up to the refusal: the fill, then the refusal itself. */
    ck_assert_uint_ge(r.info.nevents, 2);
    const memclient_hist_event *last = &r.events[r.info.nevents - 1];
    ck_assert_uint_eq(last->type, MEMD_HIST_FAIL);
    ck_assert_int_eq(last->status, -ENOMEM);
    ck_assert_uint_eq(r.events[r.info.nevents - 2].handle, h);
    memclient_postmortem_report_free(&r);
    ck_assert_int_eq(memclient_postmortem_get(c, id + 1, &r), -ENOENT);
    memclient_disconnect(c);
}
END_TEST

/* At most one per uid per postmortem_interval_ms: the second refusal has none. */
START_TEST(rate_limit_holds)
{
    uint64_t big, ids[8];
    memclient *c = start_filled("postmortem_interval_ms: 60000", &big);
    ck_assert_uint_eq(refuse(c, big), 1);
    ck_assert_uint_eq(refuse(c, big), 0);
    ck_assert_uint_eq(list(c, ids), 1);
    memclient_disconnect(c);
}
END_TEST

/* limits.postmortems bounds them: the oldest goes, its file too. */
START_TEST(count_bound_holds)
{
    uint64_t big, ids[8];
    memclient *c = start_filled("postmortems: 2, postmortem_interval_ms: 0", &big);
    for (uint64_t i = 1; i <= 3; i++)
        ck_assert_uint_eq(refuse(c, big), i);
    ck_assert_uint_eq(list(c, ids), 2);
    ck_assert_uint_eq(ids[0], 2);
    ck_assert_uint_eq(ids[1], 3);
    ck_assert(!file_exists(1));
    ck_assert(file_exists(2) && file_exists(3));
    memclient_postmortem_report r;
    ck_assert_int_eq(memclient_postmortem_get(c, 1, &r), -ENOENT);
    memclient_disconnect(c);
}
END_TEST

/* On disk, so a restart reads them back, and the ids go on after them. */
START_TEST(survives_a_restart)
{
    uint64_t big, ids[8];
    memclient *c = start_filled("postmortem_interval_ms: 0", &big);
    ck_assert_uint_eq(refuse(c, big), 1);
    memclient_postmortem_report before;
    ck_assert_int_eq(memclient_postmortem_get(c, 1, &before), 0);
    memclient_disconnect(c);
    memd_fixture_opts o = {.capture_stderr = true};
    ck_assert_int_eq(memd_fixture_restart(&f, &o, SIGTERM), 0);
    c = cu_connect(&f);
    ck_assert_uint_eq(list(c, ids), 1);
    memclient_postmortem_report after;
    ck_assert_int_eq(memclient_postmortem_get(c, 1, &after), 0);
    ck_assert_mem_eq(&after.info, &before.info, sizeof before.info);
    ck_assert_uint_eq(after.info.nevents, before.info.nevents);
    ck_assert_uint_eq(after.events[0].seq, before.events[0].seq);
    memclient_postmortem_report_free(&before);
    memclient_postmortem_report_free(&after);
    /* Larger than the region: refused however much the first session left held. */
    ck_assert_uint_eq(refuse(c, 1ull << 50), 2);
    memclient_disconnect(c);
}
END_TEST

/* A restart with a lower limits.postmortems keeps the newest, and removes the others'
 * files. */
START_TEST(restart_with_a_lower_bound)
{
    uint64_t big, ids[8];
    memclient *c = start_filled("postmortems: 3, postmortem_interval_ms: 0", &big);
    for (uint64_t i = 1; i <= 3; i++)
        ck_assert_uint_eq(refuse(c, big), i);
    memclient_disconnect(c);
    char yaml[1024], path[512];
    snprintf(yaml, sizeof yaml,
             "limits: {postmortems: 1}\n"
             "devices:\n  - id: 0\n    descriptor: %s/config/devices/wormhole_b0.yaml\n",
             memd_fixture_source_root());
    ck_assert_int_eq(memd_fixture_write_file(&f, "memd.yaml", yaml, path, sizeof path), 0);
    memd_fixture_opts o = {.capture_stderr = true};
    ck_assert_int_eq(memd_fixture_restart(&f, &o, SIGTERM), 0);
    c = cu_connect(&f);
    ck_assert_uint_eq(list(c, ids), 1);
    ck_assert_uint_eq(ids[0], 3);
    ck_assert(!file_exists(1) && !file_exists(2) && file_exists(3));
    memclient_disconnect(c);
}
END_TEST

/* nobody sees neither root's post-mortem nor its list entry, but its own. */
static int nobody_reads(void *arg)
{
    const memd_fixture *g = arg;
    memclient *c;
    if (memclient_connect(g->socket_path, &c) < 0)
        return 10;
    memclient_postmortem_report r;
    uint64_t ids[8];
    int rc = memclient_postmortem_get(c, 1, &r) == -ENOENT ? 0 : 11;
    if (rc == 0 && list(c, ids) != 0)
        rc = 12;
    memclient_alloc_req q = cu_req(MEMD_CLASS_CONSTANT, 1ull << 50); /* larger than the region */
    memclient_buffer b;
    memclient_error e;
    if (rc == 0 && (memclient_alloc(c, &q, &b) != -ENOMEM || memclient_last_error(&e) >= 0 ||
                    e.postmortem != 2))
        rc = 13;
    if (rc == 0 && (list(c, ids) != 1 || ids[0] != 2))
        rc = 14;
    memclient_disconnect(c);
    return rc;
}

START_TEST(others_see_only_their_own)
{
    uint64_t big, ids[8];
    memclient *c = start_filled("postmortem_interval_ms: 0", &big);
    ck_assert_uint_eq(refuse(c, big), 1);
    cu_open_socket_to_all(&f);
    ck_assert_int_eq(cu_run_as(CU_NOBODY, nobody_reads, &f), 0);
    ck_assert_uint_eq(list(c, ids), 2); /* the admin sees both */
    memclient_disconnect(c);
}
END_TEST

START_TEST(memctl_postmortem_text_json_html)
{
    cu_start_limits(&f, "postmortem_interval_ms: 0");
    memclient *c;
    ck_assert_int_eq(memclient_connect_named(f.socket_path, "pm-memctl", &c), 0);
    uint64_t big;
    fill(c, &big);
    ck_assert_uint_eq(refuse(c, big), 1);
    char out[65536], html[256];
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"postmortem", NULL}, out,
                                    sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){"ID", "REQUESTED", "pm-memctl", "internal",
                                                 "dram/data", NULL});
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"postmortem", "1", NULL}, out,
                                    sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){"post-mortem 1", "top holders",
                                                 "largest free blocks", "last events", "fail",
                                                 NULL});
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"postmortem", "1", "--json", NULL},
                                    out, sizeof out), 0);
    memctl_expect_all(out, (const char *const[]){"\"id\": 1", "\"holders\": [{",
                                                 "\"free_blocks\": [{", "\"events\": [{",
                                                 "\"client\": \"pm-memctl\"", NULL});
    snprintf(html, sizeof html, "%s/pm.html", f.dir);
    ck_assert_int_eq(memctl_capture(&f, (const char *const[]){"postmortem", "1", "--html", html,
                                                              NULL}, out, sizeof out), 0);
    FILE *h = fopen(html, "r");
    ck_assert_ptr_nonnull(h);
    size_t n = fread(out, 1, sizeof out - 1, h);
    fclose(h);
    out[n] = '\0';
    memctl_expect_all(out, (const char *const[]){"<!DOCTYPE html>", "id=\"region\"",
                                                 "id=\"holders\"", "id=\"events\"", "</html>",
                                                 NULL});
    /* Self-contained: nothing fetched (the SVG namespace is a name, not a fetch). */
    ck_assert_ptr_null(strstr(out, "src="));
    ck_assert_ptr_null(strstr(out, "href="));
    ck_assert_ptr_null(strstr(out, "https:"));
    /* An id that does not exist: a clear failure. */
    ck_assert_int_ne(memctl_capture(&f, (const char *const[]){"postmortem", "9", NULL}, out,
                                    sizeof out), 0);
    memclient_disconnect(c);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("postmortem");
    TCase *t = tcase_create("postmortem");
    tcase_add_checked_fixture(t, NULL, teardown);
    tcase_set_timeout(t, 60);
    tcase_add_test(t, oom_saves_a_snapshot);
    tcase_add_test(t, rate_limit_holds);
    tcase_add_test(t, count_bound_holds);
    tcase_add_test(t, survives_a_restart);
    tcase_add_test(t, restart_with_a_lower_bound);
    tcase_add_test(t, others_see_only_their_own);
    tcase_add_test(t, memctl_postmortem_text_json_html);
    suite_add_tcase(s, t);
    return s;
}
