/* The flight recorder against the real daemon (issue 25): every allocation, free,
 * refusal, release at session end and admin free (revocation) is a record naming who,
 * where and in what context (memclient_set_context); filters by device, pid, client name
 * and time; others see only their uid's records; the ring is bounded by
 * limits.history_events and says what it lost; memctl history prints it as a table and
 * as JSON lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memd/protocol.h" /* memd_hist_type */

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"

CU_DEFAULT_FIXTURE

static memclient *connect_named(const char *name)
{
    memclient *c;
    ck_assert_int_eq(memclient_connect_named(f.socket_path, name, &c), 0);
    return c;
}

/* A client named `client` that allocated a constant buffer `name` of `bytes` in context
 * ctx (with stack, or NULL): what the history tests record. */
static memclient *named_holder(const char *client, const char *ctx, const char *stack,
                               uint64_t bytes, const char *name, memclient_buffer *b)
{
    memclient *c = connect_named(client);
    ck_assert_int_eq(memclient_set_context(c, ctx, stack), 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, bytes);
    r.name = name;
    ck_assert_int_eq(memclient_alloc(c, &r, b), 0);
    return c;
}

static memclient_history_page history(memclient *c, const memclient_history_filter *flt)
{
    memclient_history_page pg;
    ck_assert_int_eq(memclient_history(c, 0, 0, flt, &pg), 0);
    return pg;
}

/* The record of type t about handle h in pg (h 0: the last of type t), or NULL. */
static const memclient_hist_event *find(const memclient_history_page *pg, unsigned t, uint64_t h)
{
    const memclient_hist_event *e = NULL;
    for (size_t i = 0; i < pg->n; i++)
        if (pg->events[i].type == t && (!h || pg->events[i].handle == h))
            e = &pg->events[i];
    return e;
}

static uint32_t session_of(memclient *c)
{
    memclient_session_info si;
    ck_assert_int_eq(memclient_session(c, &si), 0);
    return si.session_id;
}

START_TEST(alloc_free_and_refusal_with_context)
{
    memclient_buffer b;
    memclient *c = named_holder("decoder-svc", "decoder/layer3",
                                "model.py:42 forward\nrun.py:7 main", 3u << 20, "weights.l3", &b);
    ck_assert_int_eq(memclient_set_context(c, "decoder/teardown", NULL), 0);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
    memclient_alloc_req big = cu_req(MEMD_CLASS_CONSTANT, 1ull << 40);
    memclient_buffer nb;
    int refused = memclient_alloc(c, &big, &nb);
    ck_assert_int_lt(refused, 0);

    memclient_history_page pg = history(c, NULL);
    ck_assert_uint_eq(pg.capacity, 1u << 20); /* the default ring */
    ck_assert_uint_eq(pg.record_size, 64);
    const memclient_hist_event *a = find(&pg, MEMD_HIST_ALLOC, b.handle);
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->address, b.address);
    ck_assert_uint_eq(a->size_per_bank, b.size_per_bank);
    ck_assert_uint_eq(a->banks, b.banks);
    ck_assert_uint_eq(a->bytes, b.size_per_bank * b.banks);
    ck_assert_uint_eq(a->device, 0);
    ck_assert_uint_eq(a->kind, b.kind);
    ck_assert_uint_eq(a->region, b.region);
    ck_assert_uint_eq(a->cls, MEMD_CLASS_CONSTANT);
    ck_assert_uint_eq(a->pid, (uint32_t)getpid());
    ck_assert_uint_eq(a->uid, getuid());
    ck_assert_uint_eq(a->session_id, session_of(c));
    ck_assert_str_eq(a->client_name, "decoder-svc");
    ck_assert_str_eq(a->name, "weights.l3");
    ck_assert_str_eq(a->context, "decoder/layer3");
    ck_assert_str_eq(a->stack, "model.py:42 forward\nrun.py:7 main");
    ck_assert_uint_gt(a->time_ns, 0);
    const memclient_hist_event *fr = find(&pg, MEMD_HIST_FREE, b.handle);
    ck_assert_ptr_nonnull(fr);
    ck_assert_uint_gt(fr->seq, a->seq);
    ck_assert_uint_ge(fr->time_ns, a->time_ns);
    ck_assert_str_eq(fr->context, "decoder/teardown");
    ck_assert_str_eq(fr->stack, "");
    const memclient_hist_event *fail = find(&pg, MEMD_HIST_FAIL, 0);
    ck_assert_ptr_nonnull(fail);
    ck_assert_int_eq(fail->status, refused);
    ck_assert_uint_eq(fail->bytes, 1ull << 40);
    ck_assert_uint_eq(fail->handle, 0);
    ck_assert_str_eq(fail->context, "decoder/teardown");
    memclient_history_page_free(&pg);
    memclient_disconnect(c);
}
END_TEST

START_TEST(context_is_checked)
{
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_set_context(c, "bad\x1b[2J", NULL), -EINVAL);
    char longer[200];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    ck_assert_int_eq(memclient_set_context(c, longer, NULL), -EINVAL);
    ck_assert_int_eq(memclient_set_context(c, "ok", "frame\x7f"), -EINVAL);
    ck_assert_int_eq(memclient_set_context(c, "", ""), 0); /* none */
    memclient_disconnect(c);
}
END_TEST

START_TEST(session_end_releases_and_admin_free_revokes)
{
    memclient *owner = connect_named("owner"), *admin = connect_named("operator");
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer kept, taken;
    ck_assert_int_eq(memclient_alloc(owner, &r, &kept), 0);
    ck_assert_int_eq(memclient_alloc(owner, &r, &taken), 0);
    uint32_t owner_sid = session_of(owner), admin_sid = session_of(admin);
    ck_assert_int_eq(memclient_set_context(admin, "memctl free: stuck job", NULL), 0);
    ck_assert_int_eq(memclient_free(admin, taken.handle), 0); /* root: an admin */

    /* The owner learns of it by reading the recorder. */
    memclient_history_page pg = history(owner, NULL);
    const memclient_hist_event *rv = find(&pg, MEMD_HIST_REVOKE, taken.handle);
    ck_assert_ptr_nonnull(rv);
    ck_assert_uint_eq(rv->session_id, owner_sid);
    ck_assert_str_eq(rv->client_name, "owner");
    ck_assert_uint_eq(rv->actor_session, admin_sid);
    ck_assert_uint_eq(rv->actor_pid, (uint32_t)getpid());
    ck_assert_str_eq(rv->context, "memctl free: stuck job");
    ck_assert_ptr_null(find(&pg, MEMD_HIST_FREE, taken.handle));
    memclient_history_page_free(&pg);

    memclient_disconnect(owner);
    uint64_t gone[] = {kept.handle};
    ck_assert(cu_wait_gone(admin, gone, 1, 5000));
    pg = history(admin, NULL);
    const memclient_hist_event *rl = find(&pg, MEMD_HIST_RELEASE, kept.handle);
    ck_assert_ptr_nonnull(rl);
    ck_assert_uint_eq(rl->session_id, owner_sid);
    ck_assert_uint_eq(rl->actor_session, 0);
    memclient_history_page_free(&pg);
    memclient_disconnect(admin);
}
END_TEST

START_TEST(filters)
{
    memclient *a = connect_named("alpha"), *b = connect_named("beta");
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer x;
    ck_assert_int_eq(memclient_alloc(a, &r, &x), 0);
    r.device = 1;
    ck_assert_int_eq(memclient_alloc(b, &r, &x), 0);

    memclient_history_filter flt = {.device = MEMCLIENT_ANY_DEVICE, .client = "beta"};
    memclient_history_page pg = history(a, &flt);
    ck_assert_uint_eq(pg.n, 1);
    ck_assert_str_eq(pg.events[0].client_name, "beta");
    ck_assert_uint_eq(pg.events[0].device, 1);
    memclient_history_page_free(&pg);

    flt = (memclient_history_filter){.device = 0};
    pg = history(a, &flt);
    ck_assert_uint_eq(pg.n, 1);
    ck_assert_str_eq(pg.events[0].client_name, "alpha");
    memclient_history_page_free(&pg);

    flt = (memclient_history_filter){.device = MEMCLIENT_ANY_DEVICE, .pid = (uint32_t)getpid() + 1};
    pg = history(a, &flt);
    ck_assert_uint_eq(pg.n, 0);
    memclient_history_page_free(&pg);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    flt = (memclient_history_filter){.device = MEMCLIENT_ANY_DEVICE,
                                     .since_ns = (uint64_t)ts.tv_sec * 1000000000ull + 60000000000ull};
    pg = history(a, &flt);
    ck_assert_uint_eq(pg.n, 0);
    memclient_history_page_free(&pg);

    char name[40];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    flt = (memclient_history_filter){.device = MEMCLIENT_ANY_DEVICE, .client = name};
    ck_assert_int_eq(memclient_history(a, 0, 0, &flt, &pg), -EINVAL);
    memclient_disconnect(a);
    memclient_disconnect(b);
}
END_TEST

static int nobody_reads(memclient *c)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer b;
    if (memclient_alloc(c, &r, &b) < 0)
        return 11;
    memclient_history_page pg;
    if (memclient_history(c, 0, 0, NULL, &pg) < 0)
        return 12;
    int rc = pg.n == 1 ? 0 : 13;
    for (size_t i = 0; i < pg.n; i++)
        if (pg.events[i].uid != CU_NOBODY)
            rc = 14;
    memclient_history_page_free(&pg);
    return rc;
}

START_TEST(others_see_only_their_own_records)
{
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0); /* root's: nobody must not see it */
    cu_open_socket_to_all(&f);
    ck_assert_int_eq(cu_run_connected_as(CU_NOBODY, &f, nobody_reads), 0);
    memclient_history_page pg = history(c, NULL); /* the admin sees nobody's too */
    bool seen = false;
    for (size_t i = 0; i < pg.n; i++)
        seen |= pg.events[i].uid == CU_NOBODY && pg.events[i].type == MEMD_HIST_ALLOC;
    ck_assert(seen);
    memclient_history_page_free(&pg);
    memclient_disconnect(c);
}
END_TEST

/* limits.history_events bounds the ring; a reader from 1 learns how many it lost. */
START_TEST(ring_is_bounded)
{
    memd_fixture g;
    cu_start_limits(&g, "history_events: 8");
    memclient *c;
    ck_assert_int_eq(memclient_connect(g.socket_path, &c), 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    for (int i = 0; i < 10; i++) {
        memclient_buffer b;
        ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
        ck_assert_int_eq(memclient_free(c, b.handle), 0);
    }
    memclient_history_page pg;
    ck_assert_int_eq(memclient_history(c, 1, 0, NULL, &pg), 0);
    ck_assert_uint_eq(pg.capacity, 8);
    ck_assert_uint_eq(pg.n, 8);
    ck_assert_uint_eq(pg.lost, 12);
    ck_assert_uint_eq(pg.events[0].seq, 13);
    ck_assert_uint_eq(pg.next_seq, 21);
    memclient_history_page_free(&pg);
    ck_assert_int_eq(memclient_history(c, 3, 2, NULL, &pg), 0); /* max pages it */
    ck_assert_uint_eq(pg.n, 2);
    ck_assert_uint_eq(pg.next_seq, 15);
    memclient_history_page_free(&pg);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&g), 0);
}
END_TEST

START_TEST(memctl_history_table_and_json)
{
    memclient_buffer b;
    memclient *c = named_holder("svc-json", "encoder/attn", NULL, 2u << 20, "kv-cache", &b);
    char out[16384], want[128];
    const char *const table[] = {"history", "--client", "svc-json", NULL};
    ck_assert_int_eq(memctl_capture(&f, table, out, sizeof out), 0);
    snprintf(want, sizeof want, "%#" PRIx64, b.address);
    memctl_expect_all(out, (const char *const[]){"TIME", "CONTEXT", "alloc", "svc-json",
                                                 "kv-cache", "encoder/attn", want, NULL});
    const char *const json[] = {"history", "--json", "--device", "0", "--since", "10m", NULL};
    ck_assert_int_eq(memctl_capture(&f, json, out, sizeof out), 0);
    snprintf(want, sizeof want, "\"handle\": %" PRIu64 ", \"address\": %" PRIu64, b.handle,
             b.address);
    memctl_expect_all(out, (const char *const[]){"{\"seq\": 1, ", "\"type\": \"alloc\"",
                                                 "\"client\": \"svc-json\"",
                                                 "\"context\": \"encoder/attn\"",
                                                 "\"name\": \"kv-cache\"", want, NULL});
    const char *const other[] = {"history", "--json", "--device", "3", NULL};
    ck_assert_int_eq(memctl_capture(&f, other, out, sizeof out), 0);
    ck_assert_str_eq(out, "");
    const char *const bad[] = {"history", "--since", "soon", NULL};
    ck_assert_int_eq(memctl_capture(&f, bad, out, sizeof out), 2);
    memclient_disconnect(c);
}
END_TEST

/* --html: one page, its records' JSON inside a <script> element that a hostile buffer
 * name cannot close; exclusive with --json and --follow; an unwritable path fails. */
START_TEST(memctl_history_html_page)
{
    memclient_buffer b;
    memclient *c = named_holder("svc-html", "loader/batch", NULL, 1u << 20,
                                "</script><script>alert(1)</script>", &b);
    char out[4096], path[128];
    snprintf(path, sizeof path, "%s/timeline.html", f.dir);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("history", "--html", path), out, sizeof out),
                     0);
    char *page = memctl_slurp(path);
    ck_assert(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    ck_assert_ptr_nonnull(strstr(page, "</script></body></html>\n"));
    memctl_expect_all(page, (const char *const[]){"\"client\": \"svc-html\"",
                                                  "\"context\": \"loader/batch\"",
                                                  "\"name\": \"\\u003c/script>\\u003cscript>",
                                                  "\"bank_sets\": [", NULL});
    ck_assert_ptr_null(strstr(page, "<script>alert"));
    ck_assert_ptr_null(strstr(page, "http"));
    free(page);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("history", "--html", path, "--json"), out,
                                    sizeof out), 2);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("history", "--follow", "--html", path), out,
                                    sizeof out), 2);
    ck_assert_int_eq(memctl_capture(&f, MEMCTL_ARGS("history", "--html", "/nonexistent/t.html"),
                                    out, sizeof out), 1);
    memclient_disconnect(c);
}
END_TEST

/* An admin's memctl free reaches the owner: memclient_revoked returns nothing until the
 * owner's next request brings the notice, then the handle and the admin's pid and uid,
 * once; the recorder has the REVOKE naming both sessions. */
START_TEST(memctl_free_reaches_the_owner_by_poll)
{
    memclient *owner = connect_named("owner-poll");
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer gone, kept;
    ck_assert_int_eq(memclient_alloc(owner, &r, &gone), 0);
    ck_assert_int_eq(memclient_alloc(owner, &r, &kept), 0);
    char out[4096], handle[32];
    snprintf(handle, sizeof handle, "%" PRIu64, gone.handle);
    const char *const argv[] = {"free", handle, NULL};
    ck_assert_int_eq(memctl_capture(&f, argv, out, sizeof out), 0);
    memclient_revoke n[4];
    ck_assert_int_eq(memclient_revoked(owner, n, 4), 0); /* no request since: not yet */
    memclient_alloc_info ai;
    ck_assert_int_eq(memclient_query(owner, kept.handle, &ai), 0);
    ck_assert_int_eq(memclient_revoked(owner, n, 4), 1);
    ck_assert_uint_eq(n[0].handle, gone.handle);
    ck_assert_uint_eq(n[0].device, 0);
    ck_assert_uint_eq(n[0].actor_uid, getuid());
    ck_assert_uint_gt(n[0].actor_pid, 0);
    ck_assert_uint_ne(n[0].actor_pid, (uint32_t)getpid()); /* memctl's */
    ck_assert_str_eq(n[0].actor_comm, "memctl");
    ck_assert_uint_gt(n[0].time_ns, 0);
    ck_assert_int_eq(memclient_revoked(owner, n, 4), 0); /* taken */
    ck_assert_int_eq(memclient_free(owner, gone.handle), -ENOENT);

    memclient_history_page pg = history(owner, NULL);
    const memclient_hist_event *rv = find(&pg, MEMD_HIST_REVOKE, gone.handle);
    ck_assert_ptr_nonnull(rv);
    ck_assert_uint_eq(rv->session_id, session_of(owner));
    ck_assert_uint_eq(rv->pid, (uint32_t)getpid());
    ck_assert_uint_eq(rv->actor_session, n[0].actor_session);
    ck_assert_uint_eq(rv->actor_pid, n[0].actor_pid);
    ck_assert_uint_eq(rv->actor_uid, getuid());
    memclient_history_page_free(&pg);
    ck_assert_int_eq(memclient_free(owner, kept.handle), 0);
    memclient_disconnect(owner);
}
END_TEST

typedef struct got {
    memclient *c;
    int calls;
    memclient_revoke last;
    int nested;            /* what a libmemclient call from inside the callback returned */
} got;

static void on_revoke(void *arg, const memclient_revoke *n)
{
    got *g = arg;
    g->calls++;
    g->last = *n;
    memclient_session_info si;
    g->nested = memclient_session(g->c, &si); /* the connection's lock is not held */
}

/* The callback runs at the end of the owner's next call, once per notice, with every
 * holder of a shared buffer told; notices queued before the callback was set go to it. */
START_TEST(callback_on_the_next_call)
{
    memclient *owner = connect_named("owner-cb"), *other = connect_named("owner-cb2");
    memclient *admin = connect_named("operator");
    uint64_t shared = cu_share(owner, other, 1u << 20, "shared-rv");
    got g = {.c = owner};
    ck_assert_int_eq(memclient_set_revoke_cb(owner, on_revoke, &g), 0);
    ck_assert_int_eq(memclient_free(admin, shared), 0); /* root: an admin */
    ck_assert_int_eq(g.calls, 0);
    memclient_buffer c2;
    memclient_alloc_req plain = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    ck_assert_int_eq(memclient_alloc(owner, &plain, &c2), 0);
    ck_assert_int_eq(g.calls, 1);
    ck_assert_uint_eq(g.last.handle, shared);
    ck_assert_uint_eq(g.last.actor_session, session_of(admin));
    ck_assert_uint_eq(g.last.actor_pid, (uint32_t)getpid());
    ck_assert_str_eq(g.last.actor_client, "operator");
    ck_assert_int_eq(g.nested, 0);
    memclient_revoke n;
    ck_assert_int_eq(memclient_revoked(owner, &n, 1), 0); /* the callback took it */
    /* The other holder, without a callback, polls it after its next call; then a callback
     * set later gets nothing more. */
    memclient_alloc_info ai;
    ck_assert_int_eq(memclient_query(other, c2.handle, &ai), 0);
    got g2 = {.c = other};
    ck_assert_int_eq(memclient_set_revoke_cb(other, on_revoke, &g2), 0);
    ck_assert_int_eq(g2.calls, 1); /* what was queued went to the new callback at once */
    ck_assert_uint_eq(g2.last.handle, shared);
    ck_assert_int_eq(memclient_set_revoke_cb(other, NULL, NULL), 0);
    ck_assert_int_eq(memclient_revoked(owner, NULL, 0), 0);
    ck_assert_int_eq(memclient_revoked(NULL, &n, 1), -EINVAL);
    memclient_disconnect(owner);
    memclient_disconnect(other);
    memclient_disconnect(admin);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("history");
    TCase *tc = tcase_create("history");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, alloc_free_and_refusal_with_context);
    tcase_add_test(tc, context_is_checked);
    tcase_add_test(tc, session_end_releases_and_admin_free_revokes);
    tcase_add_test(tc, filters);
    tcase_add_test(tc, others_see_only_their_own_records);
    tcase_add_test(tc, memctl_history_table_and_json);
    tcase_add_test(tc, memctl_history_html_page);
    tcase_add_test(tc, memctl_free_reaches_the_owner_by_poll);
    tcase_add_test(tc, callback_on_the_next_call);
    suite_add_tcase(s, tc);
    TCase *ring = tcase_create("ring");
    tcase_set_timeout(ring, 60);
    tcase_add_test(ring, ring_is_bounded);
    suite_add_tcase(s, ring);
    return s;
}
