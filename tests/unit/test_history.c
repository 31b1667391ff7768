/* The flight recorder in core (daemon/core/history.c) and revocation notices, through
 * the dispatch fixture: many short sessions with a small ring keep as many who-entries as
 * the ring's records name (each record still names its own session's pid), and an admin's
 * free reaches a session that asked for notices as one REVOKED frame before its next
 * reply, a session that did not with nothing; a HISTORY request of before the types after
 * REVOKE gets none of them. */
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "frames.h"
#include "history.h"
#include "dispatch_fixture.h" /* after the daemon's headers: its `st` would shadow theirs */

#define RING 32u
#define SESSIONS 10000u

typedef struct seen {
    uint32_t n;
    uint32_t pid[RING];
    uint8_t type[RING];
} seen;

static int collect(void *ctx, const memd_hist_view *v)
{
    seen *s = ctx;
    ck_assert_uint_lt(s->n, RING);
    s->pid[s->n] = v->who->pid;
    s->type[s->n++] = v->rec->type;
    return 0;
}

START_TEST(who_entries_stay_bounded)
{
    memd_limits lim = default_limits();
    lim.history_events = RING;
    start(lim);
    for (uint32_t i = 0; i < SESSIONS; i++) {
        memd_session s;
        open_session(&s, 1001, false);
        s.pid = 50000 + i;
        reply r;
        ck_assert_int_eq(handle_op(&s, MEMD_OP_FREE, must_alloc(&s, MEMD_CLASS_CONSTANT, 4 * KIB),
                                   &r), 0);
        memd_session_close(&st, &s);
        /* The ring holds the last RING / 2 sessions' alloc and free: no more entries. */
        ck_assert_uint_le(memd_history_whos(&st), RING / 2);
    }
    ck_assert_uint_eq(memd_history_whos(&st), RING / 2);
    /* Reused entries name the right sessions: record 2k and 2k + 1 are one session's. */
    seen sn = {0};
    uint64_t lost;
    memd_hist_filter f = {.device = UINT32_MAX, .client = ""};
    memd_history_read(&st, &sroot, 0, 0, &f, &lost, collect, &sn);
    ck_assert_uint_eq(sn.n, RING);
    ck_assert_uint_eq(lost, 2 * SESSIONS - RING);
    for (uint32_t k = 0; k < RING; k++) {
        ck_assert_uint_eq(sn.pid[k], 50000 + SESSIONS - RING / 2 + k / 2);
        ck_assert_uint_eq(sn.type[k], k % 2 ? MEMD_HIST_FREE : MEMD_HIST_ALLOC);
    }
    memd_state_fini(&st);
    memd_buf_free(&out);
}
END_TEST

/* A live session's entry stays while it lives, however many records the ring dropped. */
START_TEST(live_session_keeps_its_entry)
{
    memd_limits lim = default_limits();
    lim.history_events = 4;
    start(lim);
    uint64_t h = must_alloc(&sa, MEMD_CLASS_CONSTANT, 4 * KIB);
    for (int i = 0; i < 10; i++) {
        reply r;
        ck_assert_int_eq(handle_op(&sb, MEMD_OP_FREE, must_alloc(&sb, MEMD_CLASS_CONSTANT, 4 * KIB),
                                   &r), 0);
    }
    ck_assert_uint_eq(memd_history_whos(&st), 2); /* sa's record is gone, sa is not */
    reply r;
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, h, &r), 0);
    seen sn = {0};
    uint64_t lost;
    memd_hist_filter f = {.device = UINT32_MAX, .client = ""};
    memd_history_read(&st, &sroot, 0, 0, &f, &lost, collect, &sn);
    ck_assert_uint_eq(sn.pid[sn.n - 1], sa.pid);
    memd_state_fini(&st);
    memd_buf_free(&out);
}
END_TEST

START_TEST(revoke_notice_before_the_next_reply)
{
    sa.wants_notices = true; /* HELLO with MEMD_HELLO_F_NOTICES */
    uint64_t ha = must_alloc(&sa, MEMD_CLASS_CONSTANT, 4 * KIB);
    uint64_t hb = must_alloc(&sb, MEMD_CLASS_CONSTANT, 4 * KIB);
    reply r;
    ck_assert_int_eq(handle_op(&sroot, MEMD_OP_FREE, ha, &r), 0);
    ck_assert_int_eq(handle_op(&sroot, MEMD_OP_FREE, hb, &r), 0);
    /* sb did not ask: its next reply comes alone (req checks nothing else is queued). */
    must_alloc(&sb, MEMD_CLASS_CONSTANT, 4 * KIB);
    /* sa's next request: the notice first, then the reply. */
    uint8_t frame[MEMD_HDR_SIZE];
    memd_wire_hdr h = {.magic = MEMD_PROTO_MAGIC, .version = 1, .opcode = MEMD_OP_QUERY,
                       .id = 77, .len = 8};
    uint8_t buf[MEMD_HDR_SIZE + 8];
    memd_wire_hdr_put(frame, &h);
    memcpy(buf, frame, sizeof frame);
    memd_wire_handle_put(buf + MEMD_HDR_SIZE, ha);
    size_t used;
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf, sizeof buf, &out, SIZE_MAX, &used), 0);
    pop(&r);
    ck_assert_uint_eq(r.h.opcode, MEMD_OP_REVOKED);
    ck_assert_uint_eq(r.h.id, 0);
    ck_assert_int_eq(r.h.status, 0);
    ck_assert_uint_eq(r.h.len, MEMD_WIRE_COUNT_SIZE + MEMD_WIRE_REVOKE_NOTICE_SIZE);
    ck_assert_uint_eq(memd_wire_u32(r.p), 1);
    memd_wire_revoke_notice n;
    ck_assert_int_eq(memd_wire_revoke_notice_get(r.p + MEMD_WIRE_COUNT_SIZE,
                                                 MEMD_WIRE_REVOKE_NOTICE_SIZE, &n), 0);
    ck_assert_uint_eq(n.handle, ha);
    ck_assert_uint_eq(n.device, DEV);
    ck_assert_uint_eq(n.actor_session, sroot.id);
    ck_assert_uint_eq(n.actor_pid, sroot.pid);
    ck_assert_uint_eq(n.actor_uid, 0);
    ck_assert_str_eq(n.actor_comm, "unit");
    pop(&r);
    ck_assert_uint_eq(r.h.id, 77);
    ck_assert_int_eq(r.h.status, -ENOENT); /* it is gone */
    ck_assert_uint_eq(out.len, 0);
    /* Sent once: the next reply comes alone. */
    must_alloc(&sa, MEMD_CLASS_CONSTANT, 4 * KIB);
    /* Nobody sends REVOKED. */
    req(&sa, MEMD_OP_REVOKED, (const uint8_t[8]){0}, 8, &r);
    ck_assert_int_eq(r.h.status, -EINVAL);
}
END_TEST

/* A 64-byte HISTORY (a client from before the types after REVOKE) gets the buffer records
 * only, each of the v1 size; MEMD_HISTORY_F_ALL gets the others too, in full. */
START_TEST(old_history_request_gets_buffer_records_only)
{
    must_alloc(&sa, MEMD_CLASS_CONSTANT, 4 * KIB);
    memd_hist_obj o = {.type = MEMD_HIST_SUBDEV_BIND, .device = DEV, .kind = MEMD_KIND_SRAM,
                       .count = 2, .bytes = 8 * KIB, .name = "half"};
    memd_history_object(&st, &sa, &o);
    uint8_t p[MEMD_WIRE_HISTORY_REQ_SIZE];
    memd_wire_history_req q = {.device = UINT32_MAX};
    memd_wire_history_req_put(p, &q);
    reply r;
    req(&sa, MEMD_OP_HISTORY, p, MEMD_WIRE_HISTORY_REQ_V1_SIZE, &r);
    memd_wire_history_info hi;
    ck_assert_int_eq(memd_wire_history_info_get(r.p, r.h.len, &hi), 0);
    ck_assert_uint_eq(hi.count, 1);
    ck_assert_uint_eq(r.h.len, MEMD_WIRE_HISTORY_INFO_SIZE + MEMD_WIRE_HIST_EVENT_V1_SIZE);
    q.flags = MEMD_HISTORY_F_ALL;
    memd_wire_history_req_put(p, &q);
    req(&sa, MEMD_OP_HISTORY, p, sizeof p, &r);
    ck_assert_int_eq(memd_wire_history_info_get(r.p, r.h.len, &hi), 0);
    ck_assert_uint_eq(hi.count, 2);
    ck_assert_uint_eq(r.h.len, MEMD_WIRE_HISTORY_INFO_SIZE + 2 * MEMD_WIRE_HIST_EVENT_SIZE);
    memd_wire_hist_event e;
    ck_assert_int_eq(memd_wire_hist_event_get(r.p + MEMD_WIRE_HISTORY_INFO_SIZE +
                                                  MEMD_WIRE_HIST_EVENT_SIZE,
                                              MEMD_WIRE_HIST_EVENT_SIZE, &e), 0);
    ck_assert_uint_eq(e.type, MEMD_HIST_SUBDEV_BIND);
    ck_assert_str_eq(e.name, "half");
    ck_assert_uint_eq(e.count, 2);
    ck_assert_uint_eq(e.bytes, 8 * KIB);
    ck_assert_uint_eq(e.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(e.pid, sa.pid);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("history");
    memd_test_tcase(s, "whos", 120, NULL, NULL,
                    (const TTest *const[]){who_entries_stay_bounded, live_session_keeps_its_entry,
                                           NULL});
    memd_test_tcase(s, "revoke", 0, setup, teardown,
                    (const TTest *const[]){revoke_notice_before_the_next_reply,
                                           old_history_request_gets_buffer_records_only, NULL});
    return s;
}
