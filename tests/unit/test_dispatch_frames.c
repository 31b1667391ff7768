/* Daemon request path, frame level: every malformed-frame kind, a connection cut in a
 * frame, pipelining, backpressure, and the opcode table's part in dispatch (the length
 * check before any handler; read-only opcodes that change nothing). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "dispatch_fixture.h"
#include "frames.h"
#include "hooks.h"

/* Each malformed frame: an error reply, MEMD_CLOSE, and a protocol error counted. */
static void expect_malformed(const uint8_t *buf, size_t len, int status, uint64_t id)
{
    reply r;
    uint64_t before = st.ctr.protocol_errors;
    send_raw(&sa, buf, len, &r);
    ck_assert_int_eq(r.rc, MEMD_CLOSE);
    ck_assert_int_eq(r.h.status, status);
    ck_assert_uint_eq(r.h.id, id);
    ck_assert_uint_gt(strlen(r.err.message), 10);
    ck_assert_uint_eq(st.ctr.protocol_errors, before + 1);
}

START_TEST(malformed_frames)
{
    static uint8_t buf[4096];
    uint8_t p[2 * MEMD_WIRE_ALLOC_REQ_SIZE + 8];
    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 64);
    size_t n;

    n = frame(buf, MEMD_OP_ALLOC, 5, NULL, 0);
    buf[0] ^= 0xff; /* bad magic */
    expect_malformed(buf, n, -EPROTO, 0);
    n = frame(buf, MEMD_OP_ALLOC, 5, NULL, 0);
    buf[4] = 2; /* bad version */
    expect_malformed(buf, n, -EPROTONOSUPPORT, 0);
    n = frame(buf, MEMD_OP_ALLOC, 5, NULL, 0);
    memd_wire_put_u32(buf + 16, (1u << 20) + 1); /* over max_frame */
    expect_malformed(buf, n, -EMSGSIZE, 0);
    n = frame(buf, 77, 6, NULL, 0); /* unknown opcode */
    expect_malformed(buf, n, -EBADRQC, 6);
    memd_wire_alloc_req_put(p, &a);
    n = frame(buf, MEMD_OP_ALLOC, 7, p, MEMD_WIRE_ALLOC_REQ_SIZE - 8); /* short payload */
    expect_malformed(buf, n, -EBADMSG, 7);
    n = frame(buf, MEMD_OP_FREE, 8, p, 12); /* FREE with 12 bytes */
    expect_malformed(buf, n, -EBADMSG, 8);
    memd_wire_alloc_req_put(p, &a);
    p[5] = MEMD_SCOPE_COUNT; /* bad enum */
    n = frame(buf, MEMD_OP_ALLOC, 9, p, MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_malformed(buf, n, -EINVAL, 9);
    memd_wire_alloc_req_put(p, &a);
    memset(p + 72, 'x', MEMD_NAME_MAX); /* name without NUL */
    n = frame(buf, MEMD_OP_ALLOC, 10, p, MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_malformed(buf, n, -EINVAL, 10);
    memd_wire_count_put(p, 2); /* count 2, one record */
    memd_wire_alloc_req_put(p + 8, &a);
    n = frame(buf, MEMD_OP_ALLOC_BATCH, 11, p, 8 + MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_malformed(buf, n, -EBADMSG, 11);
    memd_wire_count_put(p, 3); /* FREE_BATCH count 3, two handles */
    n = frame(buf, MEMD_OP_FREE_BATCH, 12, p, 8 + 16);
    expect_malformed(buf, n, -EBADMSG, 12);
    memd_wire_count_put(p, 2); /* a bad record inside a batch rolls back the good one */
    memd_wire_alloc_req_put(p + 8, &a);
    memd_wire_alloc_req_put(p + 8 + MEMD_WIRE_ALLOC_REQ_SIZE, &a);
    p[8 + MEMD_WIRE_ALLOC_REQ_SIZE + 4] = 99;
    n = frame(buf, MEMD_OP_ALLOC_BATCH, 13, p, 8 + 2 * MEMD_WIRE_ALLOC_REQ_SIZE);
    expect_malformed(buf, n, -EINVAL, 13);
    ck_assert_uint_eq(sa.nholds, 0);
    n = frame(buf, MEMD_OP_DUMP, 14, p, 4); /* DUMP with 4 bytes */
    expect_malformed(buf, n, -EBADMSG, 14);
    memd_wire_put_u32(p, UINT32_MAX);
    memd_wire_put_u32(p + 4, MEMD_DUMP_F_ALL + 1); /* the first unknown dump flag */
    n = frame(buf, MEMD_OP_DUMP, 15, p, 8);
    expect_malformed(buf, n, -EINVAL, 15);
    memd_wire_hdr h = {.magic = MEMD_PROTO_MAGIC, .version = 1, .opcode = MEMD_OP_FREE,
                       .id = 16, .len = 8, .status = 3}; /* positive status */
    memd_wire_hdr_put(buf, &h);
    expect_malformed(buf, MEMD_HDR_SIZE + 8, -EINVAL, 0);
}
END_TEST

START_TEST(truncated_at_eof)
{
    uint8_t buf[64];
    reply r;
    size_t n = frame(buf, MEMD_OP_FREE, 21, "12345678", 8);
    memd_frames_truncated(&st, NULL, buf, n - 3, &out);
    pop(&r);
    ck_assert_int_eq(r.h.status, -EBADMSG);
    ck_assert_uint_eq(r.h.id, 21);
    ck_assert_ptr_nonnull(strstr(r.err.message, "5 of 8 payload bytes"));
    memd_frames_truncated(&st, NULL, buf, 10, &out);
    pop(&r);
    ck_assert_int_eq(r.h.status, -EBADMSG);
    ck_assert_uint_eq(r.h.id, 0);
}
END_TEST

/* Five ALLOC frames (DRAM, 64 bytes), ids 1 to 5, back to back in buf; returns their size. */
static size_t five_allocs(uint8_t *buf)
{
    uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 64);
    memd_wire_alloc_req_put(p, &a);
    size_t n = 0;
    for (uint64_t id = 1; id <= 5; id++)
        n += frame(buf + n, MEMD_OP_ALLOC, id, p, sizeof p);
    return n;
}

START_TEST(pipelined_in_order_and_partial)
{
    static uint8_t buf[4096];
    size_t n = five_allocs(buf), used;
    /* the last frame is cut: four are handled, the fifth waits */
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf, n - 10, &out, SIZE_MAX, &used), 0);
    ck_assert_uint_eq(used, 4 * (MEMD_HDR_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE));
    for (uint64_t id = 1; id <= 4; id++) {
        reply r;
        pop(&r);
        ck_assert_uint_eq(r.h.id, id);
        ck_assert_int_eq(r.h.status, 0);
    }
    ck_assert_uint_eq(out.len, 0);
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf + used, n - used, &out, SIZE_MAX, &used),
                     0);
    ck_assert_uint_eq(used, MEMD_HDR_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE);
    reply r;
    pop(&r);
    ck_assert_uint_eq(r.h.id, 5);
    /* less than a header: nothing consumed */
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf, 23, &out, SIZE_MAX, &used), 0);
    ck_assert_uint_eq(used, 0);
    ck_assert_uint_eq(out.len, 0);
}
END_TEST

START_TEST(backpressure_stops_dispatch)
{
    static uint8_t buf[4096];
    size_t n = five_allocs(buf), used;
    /* high-water mark of 100 bytes: one reply (80 bytes) fits, the second passes it */
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf, n, &out, 100, &used), 0);
    ck_assert_uint_eq(used, 2 * (MEMD_HDR_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE));
    ck_assert_uint_eq(sa.nholds, 2);
    /* already over the mark: nothing more until the output drains */
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf + used, n - used, &out, 100, &used), 0);
    ck_assert_uint_eq(used, 0);
    out.len = out.off = 0;
    ck_assert_int_eq(memd_frames_process(&st, &sa, buf, n, &out, SIZE_MAX, &used), 0);
    ck_assert_uint_eq(used, n);
}
END_TEST

/* Every opcode with a payload its shape in the opcode table rejects: the uniform
 * malformed reply, naming the opcode and what its shape expects, before any handler. */
START_TEST(length_checked_before_handler)
{
    static uint8_t p[2 * MEMD_WIRE_SUBDEV_DEF_SIZE]; /* the largest fixed part, twice */
    /* A document's shape says what it expects in words; the others by their lengths. */
    static const char *const doc_shape = "then a document only when the id is 0";
    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 64);
    for (uint16_t op = MEMD_OP_HELLO; op < MEMD_OP_OPCODE_COUNT; op++) {
        const memd_wire_op *o = memd_wire_op_of(op);
        uint32_t len = o->len + 1; /* FIXED */
        memset(p, 0, sizeof p);
        uint32_t least = o->len_v1 ? o->len_v1 : o->len;
        if (o->shape == MEMD_WIRE_SHAPE_MIN) {
            len = least - 1;
        } else if (o->shape == MEMD_WIRE_SHAPE_COUNT) {
            memd_wire_count_put(p, 2); /* two records announced, one sent */
            memd_wire_alloc_req_put(p + 8, &a);
            len = 8 + o->len;
        } else if (o->shape == MEMD_WIRE_SHAPE_DOC) {
            memd_wire_put_u64(p, 5); /* a named upload, and a byte after it */
            len = 9;
        }
        reply r;
        uint64_t before = st.ctr.protocol_errors;
        req(&sa, op, p, len, &r);
        ck_assert_int_eq(r.rc, MEMD_CLOSE);
        ck_assert_int_eq(r.h.status, -EBADMSG);
        char head[64];
        snprintf(head, sizeof head, "malformed %s request (%u payload bytes): ", o->name, len);
        ck_assert_msg(strstr(r.err.message, head) == r.err.message, "%s", r.err.message);
        char expect[80];
        if (o->shape == MEMD_WIRE_SHAPE_DOC)
            snprintf(expect, sizeof expect, "%s", doc_shape);
        else if (o->shape == MEMD_WIRE_SHAPE_COUNT)
            snprintf(expect, sizeof expect, "count does not match the %u-byte records that follow",
                     o->len);
        else if (o->shape == MEMD_WIRE_SHAPE_MIN)
            snprintf(expect, sizeof expect, "expected at least %u bytes", least);
        else if (o->len_v1)
            snprintf(expect, sizeof expect, "expected %u or %u bytes", o->len_v1, o->len);
        else
            snprintf(expect, sizeof expect, "expected %u bytes", o->len);
        ck_assert_msg(strstr(r.err.message, expect), "%s", r.err.message);
        ck_assert_uint_eq(st.ctr.protocol_errors, before + 1);
    }
    ck_assert_uint_eq(sa.nholds, 0);
}
END_TEST

/* The opcode table's mutating flag is what the service trusts to skip store commits:
 * every request of an opcode marked read-only, succeeding, must leave core's change hooks
 * silent; every mutating one is shown to change something. */
static unsigned changes;

static int count_prepare(void *data, memd_session *s, memd_error *err)
{
    (void)data, (void)s, (void)err;
    changes++;
    return 0;
}

static void count_created(void *data, memd_alloc *a)
{
    (void)data, (void)a;
    changes++;
}

static void count_changed(void *data, const memd_alloc *a)
{
    (void)data, (void)a;
    changes++;
}

/* Sends one request that must succeed; checks the hooks against the opcode's flag. */
static void step(uint16_t op, const void *payload, uint32_t len, reply *r, uint64_t *seen)
{
    changes = 0;
    req(&sa, op, payload, len, r);
    ck_assert_msg(r->h.status == 0, "%s: %s", memd_wire_opcode_name(op), r->err.message);
    ck_assert_msg((changes > 0) == memd_wire_opcode_mutating(op), "%s: %u changes",
                  memd_wire_opcode_name(op), changes);
    *seen |= 1ull << op;
}

static void ref_step(uint16_t op, uint64_t id, uint32_t flags, reply *r, uint64_t *seen)
{
    uint8_t p[MEMD_WIRE_REF_SIZE];
    memd_wire_ref ref = {.id = id, .flags = flags};
    memd_wire_ref_put(p, &ref);
    step(op, p, sizeof p, r, seen);
}

/* HELLO, the allocation opcodes, QUERY, BANKS and DUMP, in an order that leaves nothing. */
static void alloc_steps(uint8_t *p, uint64_t *seen)
{
    reply r;
    /* HELLO records the session in the state store itself, not through a hook. */
    memd_wire_hello hello = {.min_version = 1, .max_version = 1};
    memd_wire_hello_put(p, &hello);
    req(&sa, MEMD_OP_HELLO, p, MEMD_WIRE_HELLO_SIZE, &r);
    ck_assert_int_eq(r.h.status, 0);
    ck_assert(memd_wire_opcode_mutating(MEMD_OP_HELLO));
    *seen |= 1ull << MEMD_OP_HELLO;

    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 4096);
    memd_wire_buffer b;
    memd_wire_alloc_req_put(p, &a);
    step(MEMD_OP_ALLOC, p, MEMD_WIRE_ALLOC_REQ_SIZE, &r, seen);
    ck_assert_int_eq(memd_wire_buffer_get(r.p, r.h.len, &b), 0);
    uint8_t *q = memd_wire_count_put(p, 2);
    q = memd_wire_alloc_req_put(q, &a);
    memd_wire_alloc_req_put(q, &a);
    step(MEMD_OP_ALLOC_BATCH, p, 8 + 2 * MEMD_WIRE_ALLOC_REQ_SIZE, &r, seen);
    uint64_t batch[2];
    for (int i = 0; i < 2; i++)
        batch[i] = memd_wire_u64(r.p + 8 + (size_t)i * MEMD_WIRE_BUFFER_SIZE);
    memd_wire_handle_put(p, b.handle);
    step(MEMD_OP_QUERY, p, 8, &r, seen);
    step(MEMD_OP_BANKS, p, 8, &r, seen);
    /* A pool, a report of one sub-allocation in it (books only: no hook), the pool freed. */
    memd_wire_alloc_req pa = dram(MEMD_CLASS_INTERNAL, 8192);
    pa.flags = MEMD_ALLOC_F_POOL;
    memd_wire_buffer pool;
    memd_wire_alloc_req_put(p, &pa);
    step(MEMD_OP_ALLOC, p, MEMD_WIRE_ALLOC_REQ_SIZE, &r, seen);
    ck_assert_int_eq(memd_wire_buffer_get(r.p, r.h.len, &pool), 0);
    memd_wire_pool_op po = {.pool = pool.handle, .size = 64, .op = MEMD_POOL_OP_ALLOC};
    memd_wire_pool_op_put(memd_wire_count_put(p, 1), &po);
    step(MEMD_OP_POOL_REPORT, p, MEMD_WIRE_COUNT_SIZE + MEMD_WIRE_POOL_OP_SIZE, &r, seen);
    memd_wire_handle_put(p, pool.handle);
    step(MEMD_OP_FREE, p, 8, &r, seen);
    memd_wire_dump_req d = {.device = UINT32_MAX,
                            .flags = MEMD_DUMP_F_BLOCKS | MEMD_DUMP_F_MODELS | MEMD_DUMP_F_POOLS |
                                     MEMD_DUMP_F_SUBALLOCS};
    memd_wire_dump_req_put(p, &d);
    step(MEMD_OP_DUMP, p, MEMD_WIRE_DUMP_REQ_SIZE, &r, seen);
    memd_wire_page_req pg = {.device = DEV, .cls = MEMD_CLASS_INTERNAL, .scope = MEMD_SCOPE_DRAM};
    memd_wire_page_req_put(p, &pg);
    step(MEMD_OP_PAGE_SIZE, p, MEMD_WIRE_PAGE_REQ_SIZE, &r, seen);
    /* A per-bank buffer in bank 0, its banks, and freed again. */
    uint32_t bank0 = 0;
    memd_wire_bankset bs = {MEMD_BANKSET_F_PER_BANK, 1};
    memd_wire_bankset_put(memd_wire_alloc_req_put(p, &a), &bs, &bank0);
    step(MEMD_OP_ALLOC_BANKS, p, MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + 4, &r, seen);
    uint64_t per_bank = memd_wire_u64(r.p), at = memd_wire_u64(r.p + 8);
    memd_wire_handle_put(p, per_bank);
    step(MEMD_OP_BANK_ADDRS, p, 8, &r, seen);
    ck_assert_uint_eq(memd_wire_u32(r.p), 1);
    step(MEMD_OP_FREE, p, 8, &r, seen);
    /* Lockstep where that piece was (free in every bank), and freed again. */
    memd_wire_bankset none = {0, 0};
    memd_wire_bankset_put(memd_wire_alloc_req_put(memd_wire_put_u64(p, at), &a), &none, NULL);
    step(MEMD_OP_ALLOC_AT, p, MEMD_WIRE_ADDRESS_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE +
         MEMD_WIRE_BANKSET_SIZE, &r, seen);
    ck_assert_uint_eq(memd_wire_u64(r.p + 8), at);
    memd_wire_lowest_req lq = {.device = DEV, .bank = 0, .kind = MEMD_KIND_DRAM};
    uint64_t handle = memd_wire_u64(r.p);
    memd_wire_lowest_req_put(p, &lq);
    step(MEMD_OP_LOWEST, p, MEMD_WIRE_LOWEST_REQ_SIZE, &r, seen);
    ck_assert_uint_eq(r.p[16], 1); /* found */
    memd_wire_handle_put(p, handle);
    step(MEMD_OP_FREE, p, 8, &r, seen);
    /* A batch of a plain buffer and a per-bank one in bank 0, freed again. */
    q = memd_wire_count_put(p, 2);
    q = memd_wire_bankset_put(memd_wire_alloc_req_put(q, &a), &none, NULL);
    q = memd_wire_bankset_put(memd_wire_alloc_req_put(q, &a), &bs, &bank0);
    step(MEMD_OP_ALLOC_BATCH_BANKS, p, (uint32_t)(q - p), &r, seen);
    uint64_t pair[2] = {memd_wire_u64(r.p + 8),
                        memd_wire_u64(r.p + 8 + MEMD_WIRE_BUFFER_SIZE + 8)};
    ck_assert_uint_eq(memd_wire_u32(r.p + 8 + MEMD_WIRE_BUFFER_SIZE), 0); /* plain: no list */
    ck_assert_uint_eq(memd_wire_u32(r.p + 16 + 2 * MEMD_WIRE_BUFFER_SIZE), 1);
    q = memd_wire_count_put(p, 2);
    memd_wire_handle_put(memd_wire_handle_put(q, pair[0]), pair[1]);
    step(MEMD_OP_FREE_BATCH, p, 8 + 16, &r, seen);
    memd_wire_handle_put(p, b.handle);
    step(MEMD_OP_FREE, p, 8, &r, seen);
    q = memd_wire_count_put(p, 2);
    memd_wire_handle_put(memd_wire_handle_put(q, batch[0]), batch[1]);
    step(MEMD_OP_FREE_BATCH, p, 8 + 16, &r, seen);
}

/* A one-buffer plan (uploaded, then named by PLAN), a model with code and that one
 * activation, one instance; all released again. */
static void model_steps(uint8_t *p, uint64_t *seen)
{
    reply r;
    memd_wire_plan_req pr = {.count = 1};
    memd_wire_plan_buf pb = {.lower = 0, .upper = 1, .size = 4096};
    memd_wire_upload up = {.upload_id = 9,
                           .total = MEMD_WIRE_PLAN_REQ_SIZE + MEMD_WIRE_PLAN_BUF_SIZE};
    uint8_t *q = memd_wire_upload_put(p, &up);
    memd_wire_plan_buf_put(memd_wire_plan_req_put(q, &pr), &pb);
    step(MEMD_OP_UPLOAD, p, (uint32_t)(MEMD_WIRE_UPLOAD_SIZE + up.total), &r, seen);
    memd_wire_put_u64(p, 9);
    step(MEMD_OP_PLAN, p, 8, &r, seen);
    memd_wire_plan_info pi;
    ck_assert_int_eq(memd_wire_plan_info_get(r.p, r.h.len, &pi), 0);

    memd_wire_model_req mr = {.device = DEV, .scope = MEMD_SCOPE_DRAM, .ntensors = 1,
                              .plan_id = pi.plan_id, .code_bytes = 4096};
    memd_wire_strset(mr.name, sizeof mr.name, "ro-test");
    memd_wire_tensor t = {.size = 4096, .lower = 0, .upper = 1,
                          .role = MEMD_TENSOR_ACTIVATION, .alias_of = MEMD_NO_TENSOR};
    q = memd_wire_put_u64(p, 0);
    memd_wire_tensor_put(memd_wire_model_req_put(q, &mr), &t);
    step(MEMD_OP_MODEL_LOAD, p, 8 + MEMD_WIRE_MODEL_REQ_SIZE + MEMD_WIRE_TENSOR_SIZE, &r,
         seen);
    memd_wire_model_info mi;
    ck_assert_int_eq(memd_wire_model_info_get(r.p, r.h.len, &mi), 0);
    ref_step(MEMD_OP_MODEL_INFO, mi.model_id, 0, &r, seen);
    /* MODEL_SET_READY and MODEL_WAIT change a model's record (the models layer saves it
     * itself, no allocation hook sees it); on a ready model a wait answers at once. */
    memd_wire_ref rr = {.id = mi.model_id};
    memd_wire_ref_put(p, &rr);
    req(&sa, MEMD_OP_MODEL_SET_READY, p, MEMD_WIRE_REF_SIZE, &r); /* sa is the filler */
    ck_assert_msg(r.h.status == 0, "MODEL_SET_READY: %s", r.err.message);
    *seen |= 1ull << MEMD_OP_MODEL_SET_READY;
    memd_wire_model_wait mw = {.model_id = mi.model_id};
    memd_wire_model_wait_put(p, &mw);
    req(&sa, MEMD_OP_MODEL_WAIT, p, MEMD_WIRE_MODEL_WAIT_SIZE, &r);
    ck_assert_msg(r.h.status == 0, "MODEL_WAIT: %s", r.err.message);
    *seen |= 1ull << MEMD_OP_MODEL_WAIT;
    memd_wire_model_states_req ms = {.device = UINT32_MAX};
    memd_wire_model_states_req_put(p, &ms);
    step(MEMD_OP_MODEL_STATES, p, MEMD_WIRE_MODEL_STATES_REQ_SIZE, &r, seen);
    memd_wire_holders_req hq = {.device = DEV, .kind = MEMD_KIND_DRAM};
    memd_wire_holders_req_put(p, &hq);
    step(MEMD_OP_REGION_HOLDERS, p, MEMD_WIRE_HOLDERS_REQ_SIZE, &r, seen);
    /* Peaks live in memory only: reading and resetting them records nothing. */
    memd_wire_peaks_req pq = {.device = UINT32_MAX};
    memd_wire_peaks_req_put(p, &pq);
    step(MEMD_OP_PEAKS, p, MEMD_WIRE_PEAKS_REQ_SIZE, &r, seen);
    step(MEMD_OP_PEAKS_RESET, p, MEMD_WIRE_PEAKS_REQ_SIZE, &r, seen);
    ref_step(MEMD_OP_INSTANCE_CREATE, mi.model_id, 0, &r, seen);
    memd_wire_instance_info ii;
    ck_assert_int_eq(memd_wire_instance_info_get(r.p, r.h.len, &ii), 0);
    ref_step(MEMD_OP_INSTANCE_RELEASE, ii.instance_id, MEMD_INST_F_FREE, &r, seen);
    ref_step(MEMD_OP_MODEL_UNLOAD, mi.model_id, 0, &r, seen);
    memd_wire_events_req er = {.since = 1};
    memd_wire_events_req_put(p, &er);
    step(MEMD_OP_EVENTS, p, MEMD_WIRE_EVENTS_REQ_SIZE, &r, seen);
    memd_wire_events_info ei;
    ck_assert_int_eq(memd_wire_events_info_get(r.p, r.h.len, &ei), 0);
    ck_assert_uint_gt(ei.count, 0); /* the refused and the loaded: at least the model load */
    memd_wire_context_req cr = {0};
    memd_wire_strset(cr.context, sizeof cr.context, "ro-test/layer1");
    memd_wire_context_req_put(p, &cr);
    step(MEMD_OP_CONTEXT, p, MEMD_WIRE_CONTEXT_REQ_SIZE, &r, seen);
    memd_wire_history_req hr = {.device = UINT32_MAX};
    memd_wire_history_req_put(p, &hr);
    step(MEMD_OP_HISTORY, p, MEMD_WIRE_HISTORY_REQ_SIZE, &r, seen);
    memd_wire_history_info hi;
    ck_assert_int_eq(memd_wire_history_info_get(r.p, r.h.len, &hi), 0);
    ck_assert_uint_eq(hi.capacity, 256);
    ck_assert_uint_gt(hi.count, 0); /* alloc_steps' buffers, made and freed */
    memd_wire_pm_req pm = {0}; /* the list: reading it changes nothing */
    memd_wire_pm_req_put(p, &pm);
    step(MEMD_OP_POSTMORTEM, p, MEMD_WIRE_PM_REQ_SIZE, &r, seen);
    ck_assert_uint_ge(r.h.len, MEMD_WIRE_COUNT_SIZE);
}

START_TEST(read_only_opcodes_change_nothing)
{
    static const memd_state_events ev = {.prepare = count_prepare,
                                         .alloc_created = count_created,
                                         .alloc_changed = count_changed};
    static memd_hook hook;
    static uint8_t p[4096];
    uint64_t seen = 0;
    memd_hook_add(&st, &hook, &ev, NULL);
    alloc_steps(p, &seen);
    model_steps(p, &seen);
    /* Last: a sub-device (sroot is admin) and sa bound to it: both state store records,
     * so mutating (each asks the store for room first). */
    reply r;
    memd_wire_subdev_def sd = {.device = DEV, .kind = MEMD_KIND_SRAM, .count = 2};
    memd_wire_strset(sd.name, sizeof sd.name, "half");
    uint32_t banks[] = {0, 1};
    memd_wire_subdev_def_put(p, &sd, banks);
    changes = 0;
    req(&sroot, MEMD_OP_SUBDEV_DEFINE, p, MEMD_WIRE_SUBDEV_DEF_SIZE + 8, &r);
    ck_assert_msg(r.h.status == 0, "%s", r.err.message);
    ck_assert_uint_gt(changes, 0);
    ck_assert(memd_wire_opcode_mutating(MEMD_OP_SUBDEV_DEFINE));
    seen |= 1ull << MEMD_OP_SUBDEV_DEFINE;
    memd_wire_put_str(p, "half", MEMD_NAME_MAX);
    step(MEMD_OP_SUBDEV_BIND, p, MEMD_NAME_MAX, &r, &seen);
    /* A cgroup limit set, then cleared (admin, state store records). */
    memd_wire_limit_def ld = {.device = DEV, .kind = MEMD_KIND_DRAM, .max = 1u << 20};
    memd_wire_strset(ld.cgroup, sizeof ld.cgroup, "/pod");
    memd_wire_limit_def_put(p, &ld);
    for (uint16_t op = MEMD_OP_LIMIT_SET; op <= MEMD_OP_LIMIT_CLEAR; op++) {
        changes = 0;
        req(&sroot, op, p, MEMD_WIRE_LIMIT_DEF_SIZE, &r);
        ck_assert_msg(r.h.status == 0, "%s", r.err.message);
        ck_assert_uint_gt(changes, 0);
        ck_assert(memd_wire_opcode_mutating(op));
        seen |= 1ull << op;
    }
    /* REVOKED is memd's notice, refused as a request: nothing changes. */
    memd_wire_count_put(p, 0);
    changes = 0;
    req(&sa, MEMD_OP_REVOKED, p, MEMD_WIRE_COUNT_SIZE, &r);
    ck_assert_int_eq(r.h.status, -EINVAL);
    ck_assert_uint_eq(changes, 0);
    ck_assert(!memd_wire_opcode_mutating(MEMD_OP_REVOKED));
    seen |= 1ull << MEMD_OP_REVOKED;
    /* A region's range given up and back (admin): a state store record each time. */
    memd_wire_range_req rq = {.device = DEV, .kind = MEMD_KIND_SRAM, .region = 1,
                              .op = MEMD_RANGE_SHRINK, .ends = MEMD_RANGE_TOP, .bytes = 1024};
    for (int i = 0; i < 2; i++) {
        memd_wire_range_req_put(p, &rq);
        changes = 0;
        req(&sroot, MEMD_OP_REGION_RANGE, p, MEMD_WIRE_RANGE_REQ_SIZE, &r);
        ck_assert_msg(r.h.status == 0, "%s", r.err.message);
        ck_assert_uint_gt(changes, 0);
        rq.op = MEMD_RANGE_RESET;
        rq.bytes = 0;
    }
    ck_assert(memd_wire_opcode_mutating(MEMD_OP_REGION_RANGE));
    seen |= 1ull << MEMD_OP_REGION_RANGE;
    memd_hook_remove(&st, &hook);
    /* Every opcode was tried: a new one needs its step here. */
    ck_assert_uint_eq(seen, ((1ull << MEMD_OP_OPCODE_COUNT) - 1) & ~1ull);
    ck_assert_uint_eq(sa.nholds, 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("dispatch-frames");
    TCase *tc = tcase_create("frames");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, malformed_frames);
    tcase_add_test(tc, truncated_at_eof);
    tcase_add_test(tc, pipelined_in_order_and_partial);
    tcase_add_test(tc, backpressure_stops_dispatch);
    tcase_add_test(tc, length_checked_before_handler);
    tcase_add_test(tc, read_only_opcodes_change_nothing);
    suite_add_tcase(s, tc);
    return s;
}
