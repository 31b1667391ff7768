/* Dispatch test fixture (dispatch_fixture.h). */
#include "dispatch_fixture.h"

#include <check.h>
#include <string.h>

#include "frames.h"
#include "unit_device.h"

memd_state st;
memd_buf out;
memd_session sa, sb, sroot;
static uint64_t next_id = 100;

void make_config(memd_config *cfg, memd_device_spec *spec, memd_limits lim)
{
    memset(cfg, 0, sizeof *cfg);
    unit_device_spec(spec, DEV, 896);
    strcpy(spec->name, "testdev");
    strcpy(cfg->path, "unit.yaml");
    cfg->limits = lim;
    cfg->ndevices = 1;
    cfg->devices = spec;
}

memd_limits default_limits(void)
{
    return (memd_limits){.max_frame = 1u << 20, .max_sessions = 16,
                         .max_allocs_per_session = 1000, .max_reply_backlog = 4u << 20,
                         .max_suballocs_per_pool = MEMD_POOL_MAX_SUBALLOCS,
                         .history_events = 256}; /* the recorder on, small */
}

void open_session(memd_session *s, uint32_t uid, bool admin)
{
    memset(s, 0, sizeof *s);
    s->pid = 1000 + uid;
    s->uid = uid;
    s->gid = uid;
    s->admin = admin;
    strcpy(s->comm, "unit");
    memd_session_open(&st, s);
}

void start(memd_limits lim)
{
    memd_config cfg;
    memd_device_spec spec;
    make_config(&cfg, &spec, lim);
    memd_error err;
    ck_assert_int_eq(memd_state_init(&st, &cfg, &err), 0);
    memset(&out, 0, sizeof out);
    open_session(&sa, 1001, false);
    open_session(&sb, 1002, false);
    open_session(&sroot, 0, true);
}

void setup(void)
{
    start(default_limits());
}

void teardown(void)
{
    memd_state_fini(&st);
    memd_buf_free(&out);
}

/* Pops the first reply frame from out. */
void pop(reply *r)
{
    ck_assert_uint_ge(out.len, MEMD_HDR_SIZE);
    ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &r->h), 0);
    ck_assert_uint_ge(out.len, MEMD_HDR_SIZE + r->h.len);
    size_t keep = r->h.len < sizeof r->p ? r->h.len : sizeof r->p;
    memcpy(r->p, out.data + MEMD_HDR_SIZE, keep);
    if (r->h.status < 0) {
        /* The fixture's sessions send no HELLO flags: the error of before post-mortems. */
        ck_assert_uint_eq(r->h.len, MEMD_WIRE_ERROR_V1_SIZE);
        ck_assert_int_eq(memd_wire_error_get_any(r->p, r->h.len, &r->err), 0);
        ck_assert_int_eq(r->err.status, r->h.status);
    }
    memd_buf_consume(&out, MEMD_HDR_SIZE + r->h.len);
}

/* Sends raw bytes as one read; expects exactly one reply. */
void send_raw(memd_session *s, const uint8_t *buf, size_t len, reply *r)
{
    size_t used = 0;
    r->rc = memd_frames_process(&st, s, buf, len, &out, SIZE_MAX, &used);
    pop(r);
    ck_assert_uint_eq(out.len, 0);
}

void req(memd_session *s, uint16_t op, const void *payload, uint32_t len, reply *r)
{
    static uint8_t buf[1u << 20];
    uint64_t id = next_id++;
    size_t n = frame(buf, op, id, payload, len);
    size_t used = 0;
    r->rc = memd_frames_process(&st, s, buf, n, &out, SIZE_MAX, &used);
    ck_assert_uint_eq(used, n);
    pop(r);
    ck_assert_uint_eq(r->h.id, id);
    ck_assert_uint_eq(r->h.opcode, op);
    ck_assert_uint_eq(out.len, 0);
}

memd_wire_alloc_req dram(uint8_t cls, uint64_t bytes)
{
    return (memd_wire_alloc_req){.device = DEV, .cls = cls, .scope = MEMD_SCOPE_DRAM,
                                 .bytes = bytes};
}

int do_alloc(memd_session *s, const memd_wire_alloc_req *a, memd_wire_buffer *b,
                    reply *r)
{
    uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req_put(p, a);
    req(s, MEMD_OP_ALLOC, p, sizeof p, r);
    ck_assert_int_eq(r->rc, 0);
    if (r->h.status == 0) {
        ck_assert_uint_eq(r->h.len, MEMD_WIRE_BUFFER_SIZE);
        ck_assert_int_eq(memd_wire_buffer_get(r->p, r->h.len, b), 0);
    }
    return r->h.status;
}

uint64_t must_alloc(memd_session *s, uint8_t cls, uint64_t bytes)
{
    memd_wire_alloc_req a = dram(cls, bytes);
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(s, &a, &b, &r), 0);
    return b.handle;
}

int handle_op(memd_session *s, uint16_t op, uint64_t handle, reply *r)
{
    uint8_t p[8];
    memd_wire_handle_put(p, handle);
    req(s, op, p, sizeof p, r);
    ck_assert_int_eq(r->rc, 0);
    return r->h.status;
}

uint64_t dram_allocated(void)
{
    memd_range_stats rs;
    ck_assert_int_eq(memd_device_group_stats(st.devs[0].dev, MEMD_KIND_DRAM, &rs), 0);
    return rs.allocated;
}
