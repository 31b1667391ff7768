/* The daemon's event log and per-session accounting against the real daemon: session
 * open/close events with the bytes released, allocation failures with the region's
 * state, protocol errors naming the session, who may read which events (admin all,
 * others their uid's), paging and the lost count; SESSION_USE records per bank group;
 * SIGHUP reloads the log level and never ends the daemon; journald's <N> prefixes. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "raw_client.h"
#include "test_clock.h"

CU_DEFAULT_FIXTURE

/* Every event readable by c, from the first. */
static memclient_events_page all_events(memclient *c)
{
    memclient_events_page pg;
    ck_assert_int_eq(memclient_events(c, 0, 0, &pg), 0);
    return pg;
}

/* The last event of type t in pg about session sid (0: any), or NULL. */
static const memclient_event *last_of(const memclient_events_page *pg, memd_event_type t,
                                      uint32_t sid)
{
    const memclient_event *e = NULL;
    for (size_t i = 0; i < pg->n; i++)
        if (pg->events[i].type == t && (!sid || pg->events[i].session_id == sid))
            e = &pg->events[i];
    return e;
}

static uint32_t session_id_of(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, 0);
    /* A non-admin dump lists only its own session; an admin's: find ours by pid. */
    uint32_t id = 0;
    for (size_t i = 0; i < s->nsessions; i++)
        if (s->sessions[i].pid == (uint32_t)getpid())
            id = s->sessions[i].id;
    memclient_snapshot_free(s);
    return id;
}

START_TEST(session_close_says_what_it_released)
{
    memclient *c = cu_connect(&f), *admin = cu_connect(&f);
    uint32_t sid = session_id_of(c);
    ck_assert_uint_ne(sid, 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1u << 20);
    memclient_buffer b1, b2;
    ck_assert_int_eq(memclient_alloc(c, &r, &b1), 0);
    r.bytes = 3u << 20;
    ck_assert_int_eq(memclient_alloc(c, &r, &b2), 0);

    /* While held: the usage records say the same bytes (12 DRAM banks, one page each). */
    memclient_snapshot *s = cu_dump(admin, MEMCLIENT_DUMP_USAGE);
    const memclient_session_use *u = NULL;
    for (size_t i = 0; i < s->nusage; i++)
        if (s->usage[i].session_id == sid)
            u = &s->usage[i];
    ck_assert_ptr_nonnull(u);
    ck_assert_uint_eq(u->device, 0);
    ck_assert_int_eq(u->kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(u->allocations, 2);
    uint64_t held = (b1.size_per_bank + b2.size_per_bank) * 12;
    ck_assert_uint_eq(u->bytes, held);
    ck_assert_uint_eq(u->shared_bytes, 0);
    memclient_snapshot_free(s);

    memclient_disconnect(c);
    /* The close is processed when the daemon sees the hang-up: poll for it. */
    const memclient_event *e = NULL;
    memclient_events_page pg = {0};
    for (int i = 0; i < 200 && !e; i++) {
        memclient_events_page_free(&pg);
        pg = all_events(admin);
        e = last_of(&pg, MEMD_EVENT_SESSION_CLOSE, sid);
        if (!e)
            memd_test_sleep_ms(10);
    }
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->bytes, held);
    ck_assert_uint_eq(e->pid, (uint32_t)getpid());
    ck_assert_uint_eq(e->uid, getuid());
    ck_assert_ptr_nonnull(strstr(e->message, "released 2 allocation holds"));
    ck_assert_ptr_nonnull(last_of(&pg, MEMD_EVENT_SESSION_OPEN, sid));
    /* Numbered without gaps, oldest first. */
    for (size_t i = 1; i < pg.n; i++)
        ck_assert_uint_eq(pg.events[i].seq, pg.events[i - 1].seq + 1);
    ck_assert_uint_eq(pg.next_seq, pg.events[pg.n - 1].seq + 1);
    memclient_events_page_free(&pg);
    memclient_disconnect(admin);
}
END_TEST

START_TEST(out_of_memory_event_has_the_region_state)
{
    memclient *c = cu_connect(&f);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 600u << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    memclient_events_page pg = all_events(c);
    const memclient_event *e = last_of(&pg, MEMD_EVENT_ALLOC_FAIL, 0);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->priority, 4); /* LOG_WARNING */
    ck_assert_uint_eq(e->device, 0);
    ck_assert_uint_eq(e->bytes, 600u << 20);
    ck_assert_ptr_nonnull(strstr(e->message, "no room"));
    ck_assert_ptr_nonnull(strstr(e->message, "per bank"));
    ck_assert_ptr_nonnull(strstr(e->message, ", largest "));
    memclient_events_page_free(&pg);
    memclient_disconnect(c);
}
END_TEST

START_TEST(protocol_error_names_the_session)
{
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    uint8_t junk[MEMD_HDR_SIZE];
    memset(junk, 0x5a, sizeof junk);
    ck_assert_int_eq(raw_write(fd, junk, sizeof junk), 0);
    memd_wire_hdr h;
    uint8_t buf[512];
    ck_assert_int_ge(raw_recv(fd, &h, buf, sizeof buf, 5000), 0);
    ck_assert_int_eq(h.status, -EPROTO);
    close(fd);
    memclient *c = cu_connect(&f);
    memclient_events_page pg = all_events(c);
    const memclient_event *e = last_of(&pg, MEMD_EVENT_PROTOCOL_ERROR, 0);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->pid, (uint32_t)getpid());
    ck_assert_uint_ne(e->session_id, 0);
    ck_assert_ptr_nonnull(strstr(e->message, "bad frame magic"));
    memclient_events_page_free(&pg);
    memclient_disconnect(c);
}
END_TEST

/* As nobody: only events of uid 65534 are listed, and they include its own session. */
static int nobody_reads(memclient *c)
{
    memclient_events_page pg;
    if (memclient_events(c, 0, 0, &pg) < 0)
        return 11;
    int rc = pg.n ? 0 : 12;
    for (size_t i = 0; i < pg.n; i++)
        if (pg.events[i].uid != CU_NOBODY || pg.events[i].session_id == 0)
            rc = 13;
    memclient_events_page_free(&pg);
    return rc;
}

START_TEST(others_see_only_their_own_events)
{
    memclient *c = cu_connect(&f); /* root's session: an event nobody must not see */
    cu_open_socket_to_all(&f);
    ck_assert_int_eq(cu_run_connected_as(CU_NOBODY, &f, nobody_reads), 0);
    /* The admin sees nobody's session too. */
    memclient_events_page pg = all_events(c);
    bool seen = false;
    for (size_t i = 0; i < pg.n; i++)
        seen |= pg.events[i].uid == CU_NOBODY && pg.events[i].type == MEMD_EVENT_SESSION_OPEN;
    ck_assert(seen);
    memclient_events_page_free(&pg);
    memclient_disconnect(c);
}
END_TEST

/* max pages the log; since skips what was read; a since past the end reads nothing. */
START_TEST(paging)
{
    memclient *c = cu_connect(&f);
    for (int i = 0; i < 5; i++)
        memclient_disconnect(cu_connect(&f));
    memclient_events_page a, b;
    ck_assert_int_eq(memclient_events(c, 0, 3, &a), 0);
    ck_assert_uint_eq(a.n, 3);
    ck_assert_uint_eq(a.lost, 0);
    ck_assert_int_eq(memclient_events(c, a.next_seq, 0, &b), 0);
    ck_assert_uint_gt(b.n, 0);
    ck_assert_uint_eq(b.events[0].seq, a.next_seq);
    uint64_t end = b.next_seq;
    memclient_events_page_free(&a);
    memclient_events_page_free(&b);
    ck_assert_int_eq(memclient_events(c, end, 0, &a), 0);
    ck_assert_uint_eq(a.n, 0);
    ck_assert_uint_eq(a.next_seq, end);
    memclient_events_page_free(&a);
    memclient_disconnect(c);
}
END_TEST

/* The ring keeps the last MEMD_EVENT_RING (4096) client events; a reader from 1 learns
 * how many it missed. The daemon's own events (here "serving") have a ring of their own
 * and stay. No per-uid budget here: one client fills the ring. */
START_TEST(ring_overwrites_and_says_so)
{
    memd_fixture g;
    cu_start_limits(&g, "events_per_uid: 0");
    memclient *c = cu_connect(&g);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 2ull << 30); /* too large: refused */
    r.page_size = 0;
    memclient_buffer b;
    for (int i = 0; i < 4200; i++)
        ck_assert_int_lt(memclient_alloc(c, &r, &b), 0);
    memclient_events_page pg;
    ck_assert_int_eq(memclient_events(c, 1, 0, &pg), 0);
    ck_assert_uint_gt(pg.lost, 0);
    ck_assert_uint_eq(pg.events[0].type, MEMD_EVENT_DAEMON);
    ck_assert_uint_eq(pg.events[0].seq, 1);
    ck_assert_uint_eq(pg.events[1].seq, 2 + pg.lost);
    ck_assert_uint_eq(pg.n, 1024); /* one reply's page */
    memclient_events_page_free(&pg);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&g), 0);
}
END_TEST

/* Issue 27: failing allocations at ~18k/s used up the log's lines and overwrote the ring,
 * so 0 of 2 reload results reached stderr or memctl events. Now a flood of one uid is
 * held to events_per_uid a second (and says how many it left out), and the daemon's own
 * events have a ring and a log budget of their own. */
START_TEST(flood_of_one_uid_leaves_reloads_visible)
{
    memd_fixture g;
    cu_start_limits(&g, "events_per_uid: 50");
    pid_t flooder = fork();
    if (flooder == 0) {
        memclient *c;
        if (memclient_connect(g.socket_path, &c) < 0)
            _exit(1);
        memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 2ull << 30); /* refused */
        memclient_buffer b;
        for (long t0 = memd_test_now_ms(); memd_test_now_ms() - t0 < 2500;)
            if (memclient_alloc(c, &r, &b) == 0)
                _exit(2);
        _exit(0);
    }
    memd_test_sleep_ms(700);
    ck_assert_int_eq(kill(g.pid, SIGHUP), 0);
    int ws;
    ck_assert_int_eq(waitpid(flooder, &ws, 0), flooder);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    memclient *c = cu_connect(&g);
    memclient_events_page pg;
    ck_assert_int_eq(memclient_events(c, 1, 0, &pg), 0);
    int reloads = 0, refusals = 0, left_out = 0;
    for (size_t i = 0; i < pg.n; i++) {
        const memclient_event *ev = &pg.events[i];
        reloads += ev->type == MEMD_EVENT_DAEMON && strstr(ev->message, "reloaded") != NULL;
        refusals += ev->type == MEMD_EVENT_ALLOC_FAIL && ev->session_id != 0;
        left_out += strstr(ev->message, "left out of the event log") != NULL;
    }
    printf("# %zu events, %d refusals recorded, %d reports of ones left out\n", pg.n,
           refusals, left_out);
    ck_assert_int_eq(reloads, 1);
    ck_assert_int_le(refusals, 50 * 5); /* the budget of the (at most 5) seconds it spans */
    ck_assert_int_ge(left_out, 1);
    memclient_events_page_free(&pg);
    memclient_disconnect(c);
    for (int i = 0; i < 100 && !strstr(memd_fixture_log(&g), "reloaded"); i++)
        memd_test_sleep_ms(10);
    ck_assert_msg(strstr(memd_fixture_log(&g), "reloaded"), "no reload line on stderr");
    ck_assert_int_eq(memd_fixture_stop(&g), 0);
}
END_TEST

/* EVENTS with MEMD_EVENTS_F_WAIT on a raw connection: the request, the reply's info. */
static void send_wait(int fd, uint64_t id, uint64_t since)
{
    uint8_t q[MEMD_WIRE_EVENTS_REQ_SIZE];
    memd_wire_events_req_put(q, &(memd_wire_events_req){.since = since,
                                                        .flags = MEMD_EVENTS_F_WAIT});
    ck_assert_int_eq(raw_send(fd, MEMD_OP_EVENTS, id, q, sizeof q), 0);
}

static memd_wire_events_info recv_events(int fd, uint64_t id, int timeout_ms)
{
    static uint8_t buf[1 << 20];
    memd_wire_hdr h;
    ck_assert_int_eq(raw_recv(fd, &h, buf, sizeof buf, timeout_ms), 0);
    ck_assert_uint_eq(h.id, id);
    ck_assert_int_eq(h.opcode, MEMD_OP_EVENTS);
    ck_assert_int_eq(h.status, 0);
    memd_wire_events_info ei;
    ck_assert_int_eq(memd_wire_events_info_get(buf, h.len, &ei), 0);
    return ei;
}

/* The long poll: nothing to read parks the request (no reply), an event answers it at
 * once, a request sent behind it waits and comes after it, and libmemclient's
 * memclient_events_wait returns the next event as it happens. */
START_TEST(wait_answers_when_an_event_comes)
{
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    memd_wire_welcome w;
    ck_assert_int_eq(raw_hello(fd, "follower", &w), 0);
    memclient *c = cu_connect(&f);
    memclient_events_page pg;
    ck_assert_int_eq(memclient_events(c, 0, 0, &pg), 0);
    uint64_t next = pg.next_seq;
    memclient_events_page_free(&pg);

    send_wait(fd, 41, next);
    /* A DUMP pipelined behind it must not overtake it. */
    uint8_t dq[MEMD_WIRE_DUMP_REQ_SIZE];
    memd_wire_dump_req_put(dq, &(memd_wire_dump_req){.device = UINT32_MAX});
    ck_assert_int_eq(raw_send(fd, MEMD_OP_DUMP, 42, dq, sizeof dq), 0);
    memd_wire_hdr h;
    uint8_t buf[256];
    ck_assert_int_eq(raw_recv(fd, &h, buf, sizeof buf, 300), -ETIMEDOUT); /* parked */
    long t0 = memd_test_now_ms();
    memclient_disconnect(cu_connect(&f)); /* a session opens and closes: two events */
    memd_wire_events_info ei = recv_events(fd, 41, 2000);
    ck_assert_msg(memd_test_now_ms() - t0 < 1000, "answered %llu ms after the event",
                  (unsigned long long)(memd_test_now_ms() - t0));
    ck_assert_uint_ge(ei.count, 1);
    ck_assert_uint_eq(ei.lost, 0);
    static uint8_t dump[1 << 20];
    ck_assert_int_eq(raw_recv(fd, &h, dump, sizeof dump, 2000), 0);
    ck_assert_uint_eq(h.id, 42);
    ck_assert_int_eq(h.opcode, MEMD_OP_DUMP);

    /* libmemclient: the next event, as it happens. */
    ck_assert_int_eq(memclient_events(c, 0, 0, &pg), 0);
    next = pg.next_seq;
    memclient_events_page_free(&pg);
    pid_t kid = fork();
    if (kid == 0) {
        memd_test_sleep_ms(300);
        memclient *k = NULL;
        _exit(memclient_connect(f.socket_path, &k) == 0 ? 0 : 1);
    }
    t0 = memd_test_now_ms();
    bool opened = false;
    while (!opened) { /* the first session's close may come first */
        ck_assert_int_eq(memclient_events_wait(c, next, 0, &pg), 0);
        ck_assert_uint_ge(pg.n, 1);
        for (size_t i = 0; i < pg.n; i++)
            opened |= pg.events[i].type == MEMD_EVENT_SESSION_OPEN &&
                      pg.events[i].pid == (uint32_t)kid;
        next = pg.next_seq;
        memclient_events_page_free(&pg);
        ck_assert_uint_lt(memd_test_now_ms() - t0, 5000);
    }
    ck_assert_uint_ge(memd_test_now_ms() - t0, 200); /* it waited for the child */
    int ws;
    ck_assert_int_eq(waitpid(kid, &ws, 0), kid);
    memclient_disconnect(c);
    close(fd);
}
END_TEST

/* With nothing happening the wait ends after MEMD_EVENTS_WAIT_MS with an empty page;
 * another uid's events do not end it; the daemon's shutdown answers a waiting request. */
START_TEST(wait_runs_out_empty)
{
    cu_start(&f); /* its own daemon: the test stops it */
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    memd_wire_welcome w;
    ck_assert_int_eq(raw_hello(fd, "follower", &w), 0);
    send_wait(fd, 7, UINT64_MAX / 2); /* past the end: every event of this daemon, none yet */
    memd_wire_events_info ei0 = recv_events(fd, 7, 2000); /* the log is not empty: at once */
    ck_assert_uint_gt(ei0.count, 0);
    long t0 = memd_test_now_ms();
    send_wait(fd, 8, ei0.next_seq);
    memd_wire_events_info ei = recv_events(fd, 8, MEMD_EVENTS_WAIT_MS + 3000);
    long waited = memd_test_now_ms() - t0;
    ck_assert_uint_eq(ei.count, 0);
    ck_assert_uint_eq(ei.next_seq, ei0.next_seq);
    ck_assert_msg(waited >= MEMD_EVENTS_WAIT_MS - 100 && waited < MEMD_EVENTS_WAIT_MS + 2000,
                  "the wait lasted %llu ms", (unsigned long long)waited);
    /* Parked again, then memd stops: the request is answered before the connection ends. */
    send_wait(fd, 9, ei.next_seq);
    memd_wire_hdr h;
    uint8_t buf[256];
    ck_assert_int_eq(raw_recv(fd, &h, buf, sizeof buf, 200), -ETIMEDOUT);
    ck_assert_int_eq(kill(f.pid, SIGTERM), 0);
    static uint8_t rep[1 << 20];
    ck_assert_int_eq(raw_recv(fd, &h, rep, sizeof rep, 5000), 0);
    ck_assert_uint_eq(h.id, 9);
    ck_assert_int_eq(h.status, 0);
    close(fd);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 0); /* and it stopped cleanly */
    memd_fixture_destroy(&f);
}
END_TEST

START_TEST(sighup_reloads_log_level_and_never_exits)
{
    memd_fixture g;
    memd_fixture_opts o = {.capture_stderr = true,
                           .config_yaml = "log_level: info\n"
                                          "devices:\n  - id: 0\n    descriptor: DESC\n"};
    char desc[1024], yaml[1400];
    snprintf(desc, sizeof desc, "%s/config/devices/gmem_tpu.yaml", memd_fixture_source_root());
    snprintf(yaml, sizeof yaml, "log_level: info\ndevices:\n  - id: 0\n    descriptor: %s\n",
             desc);
    o.config_yaml = yaml;
    ck_assert_int_eq(memd_fixture_start(&g, &o), 0);
    memclient *c;
    ck_assert_int_eq(memclient_connect(g.socket_path, &c), 0);
    memclient_disconnect(c);
    for (int i = 0; i < 100 && !strstr(memd_fixture_log(&g), "session 1 closed"); i++)
        memd_test_sleep_ms(10);
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&g), "session 1 closed"));
    /* warning: the info lines about sessions stop; the ring still has them. */
    snprintf(yaml, sizeof yaml, "log_level: warning\ndevices:\n  - id: 0\n    descriptor: %s\n",
             desc);
    char path[600];
    ck_assert_int_eq(memd_fixture_write_file(&g, "memd.yaml", yaml, path, sizeof path), 0);
    for (int i = 0; i < 3; i++) { /* several in a row: each one reloads, none ends memd */
        ck_assert_int_eq(kill(g.pid, SIGHUP), 0);
        memd_test_sleep_ms(50);
    }
    ck_assert_int_eq(memd_fixture_wait(&g, 200), -ETIMEDOUT);
    ck_assert_int_eq(memclient_connect(g.socket_path, &c), 0);
    memclient_events_page pg;
    ck_assert_int_eq(memclient_events(c, 0, 0, &pg), 0);
    int reloads = 0;
    for (size_t i = 0; i < pg.n; i++)
        reloads += pg.events[i].type == MEMD_EVENT_DAEMON &&
                   strstr(pg.events[i].message, "reloaded") != NULL;
    ck_assert_int_eq(reloads, 3);
    uint32_t sid = 0;
    for (size_t i = 0; i < pg.n; i++)
        if (pg.events[i].type == MEMD_EVENT_SESSION_OPEN)
            sid = pg.events[i].session_id;
    memclient_events_page_free(&pg);
    memclient_disconnect(c);
    memd_test_sleep_ms(100);
    char line[64];
    snprintf(line, sizeof line, "session %u opened", sid);
    ck_assert_ptr_null(strstr(memd_fixture_log(&g), line));
    /* A bad log level is refused and the running config kept. */
    snprintf(yaml, sizeof yaml, "log_level: loud\ndevices:\n  - id: 0\n    descriptor: %s\n",
             desc);
    ck_assert_int_eq(memd_fixture_write_file(&g, "memd.yaml", yaml, path, sizeof path), 0);
    ck_assert_int_eq(kill(g.pid, SIGHUP), 0);
    for (int i = 0; i < 100 && !strstr(memd_fixture_log(&g), "reload refused"); i++)
        memd_test_sleep_ms(10);
    ck_assert_ptr_nonnull(strstr(memd_fixture_log(&g), "expected log_level"));
    ck_assert_int_eq(memd_fixture_stop(&g), 0);
}
END_TEST

/* Under systemd (JOURNAL_STREAM set), every event line starts with journald's <N>
 * priority, so journalctl -p filters them: info for sessions, warning for an OOM. */
START_TEST(journald_priority_prefixes)
{
    memd_fixture g;
    static const char *const env[] = {"JOURNAL_STREAM=8:12345", NULL};
    memd_fixture_opts o = {.capture_stderr = true, .env = env};
    ck_assert_int_eq(memd_fixture_start(&g, &o), 0);
    memclient *c;
    ck_assert_int_eq(memclient_connect(g.socket_path, &c), 0);
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 600u << 20);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    memclient_disconnect(c);
    for (int i = 0; i < 200 && !strstr(memd_fixture_log(&g), "<6>session 1 closed"); i++)
        memd_test_sleep_ms(10);
    const char *log = memd_fixture_log(&g);
    ck_assert_msg(strstr(log, "<6>session 1 opened: pid "), "%s", log);
    ck_assert_msg(strstr(log, "\n<4>refused to session 1 (pid "), "%s", log);
    ck_assert_msg(strstr(log, "<6>session 1 closed: pid "), "%s", log);
    ck_assert_ptr_null(strstr(log, "memd: session")); /* the plain prefix is for terminals */
    ck_assert_int_eq(memd_fixture_stop(&g), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("events");
    TCase *tc = tcase_create("events");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, session_close_says_what_it_released);
    tcase_add_test(tc, out_of_memory_event_has_the_region_state);
    tcase_add_test(tc, protocol_error_names_the_session);
    tcase_add_test(tc, others_see_only_their_own_events);
    tcase_add_test(tc, paging);
    tcase_add_test(tc, ring_overwrites_and_says_so);
    tcase_add_test(tc, flood_of_one_uid_leaves_reloads_visible);
    tcase_add_test(tc, wait_answers_when_an_event_comes);
    suite_add_tcase(s, tc);
    TCase *wait = tcase_create("wait");
    tcase_set_timeout(wait, 60);
    tcase_add_test(wait, wait_runs_out_empty);
    suite_add_tcase(s, wait);
    TCase *hup = tcase_create("reload");
    tcase_set_timeout(hup, 60);
    tcase_add_test(hup, sighup_reloads_log_level_and_never_exits);
    tcase_add_test(hup, journald_priority_prefixes);
    suite_add_tcase(s, hup);
    return s;
}
