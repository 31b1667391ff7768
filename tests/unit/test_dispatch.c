/* Daemon request path without a socket: frames in, replies out, through the real
 * engine on a hand-built device. Covers ownership, sharing, permissions, batches (all or
 * nothing), limits, quotas, error details and DUMP (frame-level cases:
 * test_dispatch_frames.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "quota.h"
#include "alloc.h"
#include "check_main.h"
#include "dispatch_fixture.h"
#include "dump_iter.h"
#include "frames.h"
#include "reload.h"

/* ---- tests ---- */

/* Restarts the fixture with the default limits but one field set to value. */
#define RESTART_WITH(field, value)                                                         \
    do {                                                                                   \
        teardown();                                                                        \
        memd_limits lim_ = default_limits();                                               \
        lim_.field = (value);                                                              \
        start(lim_);                                                                       \
    } while (0)

START_TEST(hello_negotiates)
{
    uint8_t p[MEMD_WIRE_HELLO_SIZE];
    memd_wire_hello h = {.min_version = 1, .max_version = 9};
    memd_wire_strset(h.client_name, sizeof h.client_name, "unit-client");
    memd_wire_hello_put(p, &h);
    reply r;
    req(&sa, MEMD_OP_HELLO, p, sizeof p, &r);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(r.h.status, 0);
    memd_wire_welcome w;
    ck_assert_int_eq(memd_wire_welcome_get(r.p, r.h.len, &w), 0);
    ck_assert_uint_eq(w.version, MEMD_PROTO_VERSION);
    ck_assert_uint_eq(w.session_id, sa.id);
    ck_assert_uint_eq(w.max_frame, 1u << 20);
    ck_assert_uint_eq(w.ndevices, 1);
    ck_assert_str_eq(sa.client_name, "unit-client");

    /* a client name is text: a control character or bad UTF-8 is refused, clearly */
    memd_wire_strset(h.client_name, sizeof h.client_name, "evil\x1b[2J");
    memd_wire_hello_put(p, &h);
    req(&sb, MEMD_OP_HELLO, p, sizeof p, &r);
    ck_assert_int_eq(r.h.status, -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "client name: byte 4 is a control character"));
    ck_assert_str_eq(sb.client_name, "");
    memd_wire_strset(h.client_name, sizeof h.client_name, "unit-client");

    h.min_version = 2; /* nothing in common: refused and closed */
    memd_wire_hello_put(p, &h);
    req(&sb, MEMD_OP_HELLO, p, sizeof p, &r);
    ck_assert_int_eq(r.rc, MEMD_CLOSE);
    ck_assert_int_eq(r.h.status, -EPROTONOSUPPORT);
}
END_TEST

START_TEST(alloc_query_banks_free)
{
    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 4000);
    memd_wire_strset(a.name, sizeof a.name, "label");
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), 0);
    ck_assert_uint_ge(b.handle, 1);
    ck_assert_uint_eq(b.size_per_bank, 4000 + 0); /* 4000 is 32-aligned */
    ck_assert_uint_eq(b.banks, 4);
    ck_assert_uint_eq(b.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(b.region, 1); /* constants go to data */
    ck_assert_uint_eq(b.refcount, 1);
    ck_assert_uint_ge(b.address, 64 * KIB);
    ck_assert_uint_eq(sa.nholds, 1);
    ck_assert_uint_eq(dram_allocated(), 4000);

    ck_assert_int_eq(handle_op(&sa, MEMD_OP_QUERY, b.handle, &r), 0);
    memd_wire_alloc_info info;
    ck_assert_int_eq(memd_wire_alloc_info_get(r.p, r.h.len, &info), 0);
    ck_assert_uint_eq(info.buf.handle, b.handle);
    ck_assert_uint_eq(info.device, DEV);
    ck_assert_uint_eq(info.cls, MEMD_CLASS_CONSTANT);
    ck_assert_uint_eq(info.pid, sa.pid);
    ck_assert_uint_eq(info.uid, 1001);
    ck_assert_uint_eq(info.session_id, sa.id);
    ck_assert_str_eq(info.name, "label");
    ck_assert_str_eq(info.comm, "unit");
    ck_assert_uint_gt(info.created_ns, 0);

    ck_assert_int_eq(handle_op(&sa, MEMD_OP_BANKS, b.handle, &r), 0);
    uint32_t n;
    ck_assert_int_eq(memd_wire_count_get(r.p, r.h.len, 8, UINT32_MAX, &n), 0);
    ck_assert_uint_eq(n, 4);
    ck_assert_uint_eq(memd_wire_u64(r.p + 8), b.address); /* no offsets configured */

    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, b.handle, &r), 0);
    ck_assert_uint_eq(r.h.len, 0);
    ck_assert_uint_eq(sa.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 0);
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, b.handle, &r), -ENOENT);
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_QUERY, b.handle, &r), -ENOENT);

    /* handles are never reused */
    uint64_t h2 = must_alloc(&sa, MEMD_CLASS_CONSTANT, 4000);
    ck_assert_uint_gt(h2, b.handle);
    ck_assert_uint_eq(st.ctr.allocs, 2);
    ck_assert_uint_eq(st.ctr.frees, 1);
}
END_TEST

START_TEST(permissions)
{
    uint64_t h = must_alloc(&sa, MEMD_CLASS_PLACEHOLDER, 1024);
    reply r;
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_FREE, h, &r), -EPERM);
    /* another uid's pid and session are not told (issue 14) */
    ck_assert_ptr_nonnull(strstr(r.err.message, "belongs to another user"));
    char pid[16], sess[32];
    snprintf(pid, sizeof pid, "%u", sa.pid);
    snprintf(sess, sizeof sess, "session %u", sa.id);
    ck_assert_ptr_null(strstr(r.err.message, pid));
    ck_assert_ptr_null(strstr(r.err.message, sess));
    uint8_t fb[32];
    uint8_t *fe = memd_wire_handle_put(memd_wire_count_put(fb, 1), h);
    req(&sb, MEMD_OP_FREE_BATCH, fb, (uint32_t)(fe - fb), &r);
    ck_assert_int_eq(r.h.status, -EPERM);
    ck_assert_ptr_nonnull(strstr(r.err.message, "belongs to another user"));
    ck_assert_ptr_null(strstr(r.err.message, sess));
    /* a session of the same uid is told which session holds it */
    memd_session sa2;
    open_session(&sa2, 1001, false);
    ck_assert_int_eq(handle_op(&sa2, MEMD_OP_FREE, h, &r), -EPERM);
    ck_assert_ptr_nonnull(strstr(r.err.message, sess));
    memd_session_close(&st, &sa2);
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_QUERY, h, &r), -EPERM);
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_BANKS, h, &r), -EPERM);
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_FREE, 999999, &r), -ENOENT);
    /* root sees and reclaims everything */
    ck_assert_int_eq(handle_op(&sroot, MEMD_OP_QUERY, h, &r), 0);
    ck_assert_int_eq(handle_op(&sroot, MEMD_OP_FREE, h, &r), 0);
    ck_assert_uint_eq(sa.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 0);
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_QUERY, h, &r), -ENOENT);
}
END_TEST

START_TEST(admin_group_member)
{
    st.have_admin_gid = true;
    st.admin_gid = 4242;
    gid_t groups[] = {10, 4242};
    ck_assert(memd_session_is_admin(&st, 1001, 1001, groups, 2));
    ck_assert(memd_session_is_admin(&st, 1001, 4242, NULL, 0));
    ck_assert(!memd_session_is_admin(&st, 1001, 1001, groups, 1));
    ck_assert(memd_session_is_admin(&st, 0, 0, NULL, 0));
    st.have_admin_gid = false;
    ck_assert(!memd_session_is_admin(&st, 1001, 4242, NULL, 0));
}
END_TEST

START_TEST(close_releases_everything)
{
    for (int i = 0; i < 10; i++)
        must_alloc(&sa, MEMD_CLASS_INTERNAL, 2048);
    uint64_t kept = must_alloc(&sb, MEMD_CLASS_INTERNAL, 2048);
    ck_assert_uint_eq(dram_allocated(), 11 * 2048);
    memd_session_close(&st, &sa);
    ck_assert_uint_eq(dram_allocated(), 2048);
    ck_assert_uint_eq(st.nsessions, 2);
    reply r;
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_QUERY, kept, &r), 0);
    open_session(&sa, 1001, false); /* for teardown symmetry */
}
END_TEST

/* By default each uid has its own shared names (issue 14: another uid squatted root's
 * name and kept root's buffer alive by attaching to it). */
START_TEST(shared_names_per_uid)
{
    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 8192);
    a.flags = MEMD_ALLOC_F_SHARED;
    memd_wire_strset(a.name, sizeof a.name, "weights");
    memd_wire_buffer b1, b2, b3;
    reply r;
    ck_assert_int_eq(do_alloc(&sroot, &a, &b1, &r), 0);
    ck_assert_int_eq(do_alloc(&sb, &a, &b2, &r), 0); /* sb's own "weights" */
    ck_assert_uint_ne(b2.handle, b1.handle);
    ck_assert_uint_eq(b2.refcount, 1);
    ck_assert_uint_eq(dram_allocated(), 2 * 8192);
    /* another size under the same name is no conflict across uids either */
    memd_wire_alloc_req other = a;
    other.bytes = 4096;
    ck_assert_int_eq(do_alloc(&sa, &other, &b3, &r), 0);
    /* root freeing its buffer releases it: nobody else holds it */
    ck_assert_int_eq(handle_op(&sroot, MEMD_OP_FREE, b1.handle, &r), 0);
    ck_assert_uint_eq(dram_allocated(), 8192 + 4096);
    /* within one uid the name is shared as before */
    memd_session sb2;
    open_session(&sb2, 1002, false);
    ck_assert_int_eq(do_alloc(&sb2, &a, &b3, &r), 0);
    ck_assert_uint_eq(b3.handle, b2.handle);
    ck_assert_uint_eq(b3.refcount, 2);
    memd_session_close(&st, &sb2);
}
END_TEST

/* shared_names: global: one namespace for every uid, as the operator allowed. */
START_TEST(shared_names_refcount)
{
    st.names.global = true; /* set at start in the daemon; the table is empty here */
    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 8192);
    a.flags = MEMD_ALLOC_F_SHARED;
    memd_wire_strset(a.name, sizeof a.name, "weights");
    memd_wire_buffer b1, b2;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &a, &b1, &r), 0);
    ck_assert_uint_eq(b1.refcount, 1);
    ck_assert_int_eq(do_alloc(&sb, &a, &b2, &r), 0);
    ck_assert_uint_eq(b2.handle, b1.handle);
    ck_assert_uint_eq(b2.address, b1.address);
    ck_assert_uint_eq(b2.refcount, 2);
    ck_assert_uint_eq(dram_allocated(), 8192); /* one placement */
    /* sb holds it, so it may query it */
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_QUERY, b1.handle, &r), 0);

    /* same name, other size or class: refused */
    memd_wire_alloc_req other = a;
    other.bytes = 4096;
    ck_assert_int_eq(do_alloc(&sb, &other, &b2, &r), -EEXIST);
    other = a;
    other.cls = MEMD_CLASS_PLACEHOLDER;
    ck_assert_int_eq(do_alloc(&sb, &other, &b2, &r), -EEXIST);
    /* names are text: control characters and bad UTF-8 are refused (issue 14) */
    other = a;
    memd_wire_strset(other.name, sizeof other.name, "w\x1b]0;owned\x07");
    ck_assert_int_eq(do_alloc(&sb, &other, &b2, &r), -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "allocation name: byte 1 is a control character"));
    memd_wire_strset(other.name, sizeof other.name, "w\xff");
    other.flags = 0;
    ck_assert_int_eq(do_alloc(&sb, &other, &b2, &r), -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "byte 1 is not valid UTF-8"));
    memd_wire_strset(other.name, sizeof other.name, "gewichte-\xc3\xa4");
    ck_assert_int_eq(do_alloc(&sb, &other, &b2, &r), 0); /* UTF-8 names are fine */
    ck_assert_int_eq(handle_op(&sb, MEMD_OP_FREE, b2.handle, &r), 0);
    /* shared needs a name */
    other = a;
    other.name[0] = '\0';
    ck_assert_int_eq(do_alloc(&sb, &other, &b2, &r), -EINVAL);

    /* the creator frees: still alive for sb */
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, b1.handle, &r), 0);
    ck_assert_uint_eq(dram_allocated(), 8192);
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_QUERY, b1.handle, &r), -EPERM);
    /* sa acquires it again (creator's embedded hold is reused) */
    ck_assert_int_eq(do_alloc(&sa, &a, &b2, &r), 0);
    ck_assert_uint_eq(b2.handle, b1.handle);
    ck_assert_uint_eq(b2.refcount, 2);
    /* the last holder going away releases it */
    memd_session_close(&st, &sb);
    ck_assert_uint_eq(dram_allocated(), 8192);
    memd_session_close(&st, &sa);
    ck_assert_uint_eq(dram_allocated(), 0);
    ck_assert_uint_eq(st.names.len, 0);
    open_session(&sa, 1001, false);
    open_session(&sb, 1002, false);
    /* and the name can be created afresh, with a new handle */
    ck_assert_int_eq(do_alloc(&sa, &a, &b2, &r), 0);
    ck_assert_uint_gt(b2.handle, b1.handle);
}
END_TEST

static void batch_payload(uint8_t *p, const memd_wire_alloc_req *reqs, uint32_t n, size_t *len)
{
    uint8_t *q = memd_wire_count_put(p, n);
    for (uint32_t i = 0; i < n; i++)
        q = memd_wire_alloc_req_put(q, &reqs[i]);
    *len = (size_t)(q - p);
}

START_TEST(alloc_batch_all_or_nothing)
{
    static uint8_t p[64 * MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req reqs[3] = {dram(MEMD_CLASS_CONSTANT, 1024),
                                   dram(MEMD_CLASS_INTERNAL, 2048),
                                   dram(MEMD_CLASS_INTERNAL, 100 * 1024 * KIB)};
    size_t len;
    reply r;
    uint64_t before = st.next_handle;
    batch_payload(p, reqs, 3, &len);
    req(&sa, MEMD_OP_ALLOC_BATCH, p, (uint32_t)len, &r);
    ck_assert_int_eq(r.rc, 0); /* not a protocol error: the connection stays */
    ck_assert_int_eq(r.h.status, -ENOMEM); /* larger than its region: out of memory too */
    ck_assert_ptr_nonnull(strstr(r.err.message, "record 2 of 3"));
    ck_assert_uint_eq(sa.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 0);

    /* out of memory on the last one: the first two are rolled back */
    reqs[2] = dram(MEMD_CLASS_INTERNAL, 800 * KIB);
    memd_wire_alloc_req big = dram(MEMD_CLASS_CONSTANT, 100 * KIB);
    memd_wire_buffer b;
    ck_assert_int_eq(do_alloc(&sb, &big, &b, &r), 0);
    batch_payload(p, reqs, 3, &len);
    req(&sa, MEMD_OP_ALLOC_BATCH, p, (uint32_t)len, &r);
    ck_assert_int_eq(r.h.status, -ENOMEM);
    ck_assert_uint_eq(r.err.detail, MEMD_ERR_DETAIL_NOMEM);
    ck_assert_uint_eq(sa.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 100 * KIB);

    reqs[2] = dram(MEMD_CLASS_INTERNAL, 4096);
    batch_payload(p, reqs, 3, &len);
    req(&sa, MEMD_OP_ALLOC_BATCH, p, (uint32_t)len, &r);
    ck_assert_int_eq(r.h.status, 0);
    uint32_t n;
    ck_assert_int_eq(memd_wire_count_get(r.p, r.h.len, MEMD_WIRE_BUFFER_SIZE, 3, &n), 0);
    ck_assert_uint_eq(n, 3);
    memd_wire_buffer bufs[3];
    for (uint32_t i = 0; i < 3; i++) {
        ck_assert_int_eq(memd_wire_buffer_get(r.p + 8 + i * MEMD_WIRE_BUFFER_SIZE,
                                              MEMD_WIRE_BUFFER_SIZE, &bufs[i]),
                         0);
        ck_assert_uint_gt(bufs[i].handle, before);
        for (uint32_t j = 0; j < i; j++) /* no overlap, distinct handles */
            ck_assert(bufs[i].address + bufs[i].size_per_bank <= bufs[j].address ||
                      bufs[j].address + bufs[j].size_per_bank <= bufs[i].address);
    }
    ck_assert_uint_eq(sa.nholds, 3);

    /* an empty batch is valid */
    batch_payload(p, reqs, 0, &len);
    req(&sa, MEMD_OP_ALLOC_BATCH, p, (uint32_t)len, &r);
    ck_assert_int_eq(r.h.status, 0);
    ck_assert_uint_eq(r.h.len, 8);
}
END_TEST

static uint32_t free_batch(memd_session *s, const uint64_t *h, uint32_t n, reply *r)
{
    uint8_t p[8 + 64 * 8];
    uint8_t *q = memd_wire_count_put(p, n);
    for (uint32_t i = 0; i < n; i++)
        q = memd_wire_handle_put(q, h[i]);
    req(s, MEMD_OP_FREE_BATCH, p, (uint32_t)(q - p), r);
    ck_assert_int_eq(r->rc, 0);
    return (uint32_t)r->h.status;
}

START_TEST(model_names_reserved)
{
    /* A plain ALLOC, alone or in a batch, cannot take a model's shared name. */
    memd_wire_alloc_req a = dram(MEMD_CLASS_CONSTANT, 4096);
    a.flags = MEMD_ALLOC_F_SHARED;
    snprintf(a.name, sizeof a.name, "model:resnet:const");
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -EPERM);
    ck_assert_ptr_nonnull(strstr(r.err.message, "model:resnet:const"));
    static uint8_t p[MEMD_WIRE_COUNT_SIZE + 2 * MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req reqs[2] = {dram(MEMD_CLASS_CONSTANT, 1024), a};
    size_t len;
    batch_payload(p, reqs, 2, &len);
    req(&sa, MEMD_OP_ALLOC_BATCH, p, (uint32_t)len, &r);
    ck_assert_int_eq(r.h.status, -EPERM);
    ck_assert_ptr_nonnull(strstr(r.err.message, "record 1 of 2"));
    ck_assert_uint_eq(sa.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 0);
    /* Other names, including ones that merely contain "model:", are fine. */
    snprintf(a.name, sizeof a.name, "my-model:weights");
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), 0);
}
END_TEST

START_TEST(free_batch_all_or_nothing)
{
    uint64_t h[4];
    for (int i = 0; i < 3; i++)
        h[i] = must_alloc(&sa, MEMD_CLASS_INTERNAL, 1024);
    h[3] = must_alloc(&sb, MEMD_CLASS_INTERNAL, 1024);
    reply r;
    ck_assert_int_eq((int)free_batch(&sa, h, 4, &r), -EPERM);
    ck_assert_uint_eq(sa.nholds, 3);
    uint64_t dup[3] = {h[0], h[1], h[0]};
    ck_assert_int_eq((int)free_batch(&sa, dup, 3, &r), -EINVAL);
    ck_assert_uint_eq(sa.nholds, 3);
    uint64_t gone[2] = {h[0], 424242};
    ck_assert_int_eq((int)free_batch(&sa, gone, 2, &r), -ENOENT);
    ck_assert_uint_eq(sa.nholds, 3);
    ck_assert_int_eq((int)free_batch(&sa, h, 3, &r), 0);
    ck_assert_uint_eq(sa.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 1024);
    /* admin frees another session's handle in a batch */
    ck_assert_int_eq((int)free_batch(&sroot, &h[3], 1, &r), 0);
    ck_assert_uint_eq(sb.nholds, 0);
    ck_assert_uint_eq(dram_allocated(), 0);
}
END_TEST

START_TEST(oom_reply_details)
{
    memd_wire_alloc_req big = dram(MEMD_CLASS_CONSTANT, 800 * KIB);
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &big, &b, &r), 0);
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 200 * KIB);
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -ENOMEM);
    ck_assert_uint_eq(r.err.detail, MEMD_ERR_DETAIL_NOMEM);
    ck_assert_uint_eq(r.err.requested, 200 * KIB);
    ck_assert_uint_eq(r.err.size_per_bank, 200 * KIB);
    ck_assert_uint_eq(r.err.allocated, 800 * KIB);
    ck_assert_uint_eq(r.err.free, 96 * KIB);
    ck_assert_uint_eq(r.err.largest_free, 96 * KIB);
    ck_assert_uint_eq(r.err.device, DEV);
    ck_assert_uint_eq(r.err.cls, MEMD_CLASS_INTERNAL);
    ck_assert_uint_eq(r.err.kind, MEMD_KIND_DRAM);
    ck_assert_uint_eq(r.err.region, 1);
    /* Human sizes, per bank and total apart, and who holds the region. */
    ck_assert_msg(strstr(r.err.message, "device 7 dram/data: no room for 200.0 KiB (200.0 KiB "
                                        "per bank x ") &&
                      strstr(r.err.message, "per bank 96.0 KiB free, largest 96.0 KiB; held by pid "),
                  "%s", r.err.message);
    ck_assert_uint_eq(st.ctr.alloc_failures, 1);
}
END_TEST

START_TEST(unsupported_and_unknown)
{
    memd_wire_alloc_req a = {.device = DEV, .cls = MEMD_CLASS_LOGGING,
                             .scope = MEMD_SCOPE_SRAM, .bytes = 64};
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(r.err.message, "device 7 (testdev)"));
    ck_assert_ptr_nonnull(strstr(r.err.message, "scope sram"));
    a.scope = MEMD_SCOPE_DRAM_TEXTURE; /* no texture on this device */
    a.cls = MEMD_CLASS_CONSTANT;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -EOPNOTSUPP);
    ck_assert_ptr_nonnull(strstr(r.err.message, "scope dram.texture"));
    a = dram(MEMD_CLASS_CONSTANT, 64);
    a.device = 3;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -ENODEV);
    a = dram(MEMD_CLASS_CONSTANT, 0); /* zero bytes */
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -EINVAL);
    ck_assert_int_eq(r.rc, 0); /* a bad request is not a bad frame */
    /* SRAM works, and lands in "buffers" above the reserved region */
    a = (memd_wire_alloc_req){.device = DEV, .cls = MEMD_CLASS_INTERNAL,
                              .scope = MEMD_SCOPE_SRAM, .bytes = 100};
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), 0);
    ck_assert_uint_eq(b.kind, MEMD_KIND_SRAM);
    ck_assert_uint_ge(b.address, 16 * KIB);
    ck_assert_uint_eq(b.banks, 8);
}
END_TEST

START_TEST(session_alloc_limit)
{
    RESTART_WITH(max_allocs_per_session, 3);
    for (int i = 0; i < 3; i++)
        must_alloc(&sa, MEMD_CLASS_INTERNAL, 64);
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 64);
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -EMFILE);
    ck_assert_ptr_nonnull(strstr(r.err.message, "max_allocs_per_session"));
    must_alloc(&sb, MEMD_CLASS_INTERNAL, 64); /* per session, not global */
    /* a batch that would cross the limit is rolled back whole */
    uint8_t p[8 + 2 * MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req two[2] = {a, a};
    size_t len;
    batch_payload(p, two, 2, &len);
    memd_session_close(&st, &sa);
    open_session(&sa, 1001, false);
    must_alloc(&sa, MEMD_CLASS_INTERNAL, 64);
    must_alloc(&sa, MEMD_CLASS_INTERNAL, 64);
    req(&sa, MEMD_OP_ALLOC_BATCH, p, (uint32_t)len, &r);
    ck_assert_int_eq(r.h.status, -EMFILE);
    ck_assert_uint_eq(sa.nholds, 2);
}
END_TEST

/* Shared buffers are charged to every uid holding them, once, for as long as it holds
 * them (issue 14: attaching charged nothing, and a creator that let go stayed charged). */
START_TEST(quota_charges_holders)
{
    RESTART_WITH(quota_per_uid, 16 * KIB);
    st.names.global = true; /* cross-uid sharing allowed (shared_names: global) */
    memd_wire_alloc_req w = dram(MEMD_CLASS_CONSTANT, 8 * KIB);
    w.flags = MEMD_ALLOC_F_SHARED;
    memd_wire_strset(w.name, sizeof w.name, "weights");
    memd_wire_buffer b;
    reply r;
    uint32_t dev = 0; /* DEV's index */
    ck_assert_int_eq(do_alloc(&sa, &w, &b, &r), 0);
    uint64_t h = b.handle;
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), 8 * KIB);
    /* the attaching uid is charged, once however many of its sessions attach */
    ck_assert_int_eq(do_alloc(&sb, &w, &b, &r), 0);
    memd_session sb2;
    open_session(&sb2, 1002, false);
    ck_assert_int_eq(do_alloc(&sb2, &w, &b, &r), 0);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1002), 8 * KIB);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), 8 * KIB);
    /* and what it holds counts against its quota */
    memd_wire_alloc_req big = dram(MEMD_CLASS_INTERNAL, 12 * KIB);
    ck_assert_int_eq(do_alloc(&sb, &big, &b, &r), -EDQUOT);
    ck_assert_ptr_nonnull(strstr(r.err.message, "8192 in use"));
    /* a uid over its quota cannot attach either */
    memd_wire_alloc_req v = w;
    memd_wire_strset(v.name, sizeof v.name, "vocab");
    v.bytes = 12 * KIB;
    ck_assert_int_eq(do_alloc(&sa, &v, &b, &r), -EDQUOT);
    ck_assert_int_eq(do_alloc(&sroot, &v, &b, &r), 0);
    ck_assert_int_eq(do_alloc(&sb, &v, &b, &r), -EDQUOT);
    /* the creator lets go while others hold it: no longer charged */
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, h, &r), 0);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), 0);
    big.bytes = 16 * KIB;
    ck_assert_int_eq(do_alloc(&sa, &big, &b, &r), 0);
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, b.handle, &r), 0);
    /* one of two sessions of a uid going keeps the charge; the last one ends it */
    memd_session_close(&st, &sb2);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1002), 8 * KIB);
    memd_session_close(&st, &sb);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1002), 0);
    open_session(&sb, 1002, false);
    /* a recount (a quota set by a reload) comes to the same books */
    ck_assert_int_eq(do_alloc(&sb, &w, &b, &r), 0); /* "weights" afresh: sb creates it */
    ck_assert_int_eq(do_alloc(&sa, &w, &b, &r), 0);
    uint64_t ua = memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), ub = memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1002),
             u0 = memd_quota_used(&st, dev, MEMD_KIND_DRAM, 0);
    ck_assert_int_eq(memd_quota_recount(&st), 0);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), ua);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1002), ub);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 0), u0);
    ck_assert_uint_eq(ua, 8 * KIB);
    ck_assert_uint_eq(ub, 8 * KIB);
    ck_assert_uint_eq(u0, 12 * KIB); /* root's "vocab" */
}
END_TEST

START_TEST(uid_quota)
{
    RESTART_WITH(quota_per_uid, 8 * KIB);
    uint64_t h1 = must_alloc(&sa, MEMD_CLASS_INTERNAL, 4 * KIB);
    must_alloc(&sa, MEMD_CLASS_INTERNAL, 4 * KIB);
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 32);
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &a, &b, &r), -EDQUOT);
    ck_assert_uint_eq(r.err.detail, MEMD_ERR_DETAIL_QUOTA);
    ck_assert_uint_eq(r.err.size_per_bank, 32);
    ck_assert_uint_eq(r.err.device, DEV);
    /* another session of the same uid shares the quota */
    memd_session other;
    open_session(&other, 1001, false);
    ck_assert_int_eq(do_alloc(&other, &a, &b, &r), -EDQUOT);
    /* another uid has its own */
    must_alloc(&sb, MEMD_CLASS_INTERNAL, 8 * KIB);
    /* freeing gives it back */
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, h1, &r), 0);
    ck_assert_int_eq(do_alloc(&other, &a, &b, &r), 0);
    memd_session_close(&st, &other);
}
END_TEST

/* The quota counts each bank group of a device on its own (issue 27: 1 MiB of DRAM
 * blocked an SRAM per-bank allocation): DRAM and SRAM are separate address spaces. */
START_TEST(quota_per_bank_group)
{
    RESTART_WITH(quota_per_uid, 8 * KIB);
    must_alloc(&sa, MEMD_CLASS_INTERNAL, 6 * KIB);
    memd_wire_alloc_req s = dram(MEMD_CLASS_INTERNAL, 6 * KIB);
    s.scope = MEMD_SCOPE_SRAM;
    memd_wire_buffer b;
    reply r;
    ck_assert_int_eq(do_alloc(&sa, &s, &b, &r), 0);
    ck_assert_uint_eq(b.kind, MEMD_KIND_SRAM);
    uint32_t dev = 0; /* DEV's index */
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), 6 * KIB);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_SRAM, 1001), b.size_per_bank);
    /* each group still has its own limit */
    ck_assert_int_eq(do_alloc(&sa, &s, &b, &r), -EDQUOT);
    ck_assert_ptr_nonnull(strstr(r.err.message, "sram"));
    memd_wire_alloc_req d = dram(MEMD_CLASS_INTERNAL, 4 * KIB);
    ck_assert_int_eq(do_alloc(&sa, &d, &b, &r), -EDQUOT);
    /* a recount keeps them apart */
    ck_assert_int_eq(memd_quota_recount(&st), 0);
    ck_assert_uint_eq(memd_quota_used(&st, dev, MEMD_KIND_DRAM, 1001), 6 * KIB);
}
END_TEST

/* Walks a DUMP payload: counts per tag, checks the order rules and decodes all. */
static void parse_dump(const uint8_t *p, size_t len, int counts[8], memd_wire_server_rec *srv)
{
    memset(counts, 0, 8 * sizeof counts[0]);
    uint32_t last = 0;
    dump_iter it = {.p = p, .len = len, .next = UINT64_MAX};
    while (dump_next(&it)) {
        uint32_t tag = it.tag;
        size_t sz = it.size;
        const uint8_t *r = it.rec;
        if (last == 0) /* the first record: tag 0 is none */
            ck_assert_uint_eq(tag, MEMD_REC_SERVER);
        switch (tag) {
        case MEMD_REC_SERVER: ck_assert_int_eq(memd_wire_server_rec_get(r, sz, srv), 0); break;
        case MEMD_REC_GROUP: ck_assert(last == MEMD_REC_DEVICE || last == MEMD_REC_REGION || last == MEMD_REC_BLOCK); break;
        case MEMD_REC_REGION: ck_assert(last == MEMD_REC_GROUP || last == MEMD_REC_REGION || last == MEMD_REC_BLOCK); break;
        case MEMD_REC_ALLOC: {
            memd_wire_alloc_info i;
            ck_assert_int_eq(memd_wire_alloc_info_get(r, sz, &i), 0);
            break;
        }
        default: break;
        }
        counts[tag]++;
        last = tag;
    }
}

static void dump(memd_session *s, uint32_t dev, uint32_t flags, reply *r, uint8_t **payload,
                 size_t *len)
{
    uint8_t p[MEMD_WIRE_DUMP_REQ_SIZE]; /* sent as the 8-byte request of older clients */
    memd_wire_dump_req d = {.device = dev, .flags = flags};
    memd_wire_dump_req_put(p, &d);
    static uint8_t buf[64];
    size_t n = frame(buf, MEMD_OP_DUMP, 55, p, 8), used;
    ck_assert_int_eq(memd_frames_process(&st, s, buf, n, &out, SIZE_MAX, &used), 0);
    ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &r->h), 0);
    *len = r->h.len;
    *payload = malloc(*len + 1);
    memcpy(*payload, out.data + MEMD_HDR_SIZE, *len);
    out.len = 0;
}

/* One page of a paged DUMP: the handles of its ALLOC records in h[] (*n), the count of
 * each tag, and the next cursor. */
static uint64_t dump_page(memd_session *s, uint64_t cursor, uint64_t *h, size_t *n,
                          int counts[16])
{
    uint8_t p[MEMD_WIRE_DUMP_REQ_SIZE];
    memd_wire_dump_req d = {.device = UINT32_MAX, .flags = MEMD_DUMP_F_PAGED, .cursor = cursor};
    memd_wire_dump_req_put(p, &d);
    static uint8_t buf[64];
    size_t len = frame(buf, MEMD_OP_DUMP, 56, p, sizeof p), used;
    ck_assert_int_eq(memd_frames_process(&st, s, buf, len, &out, SIZE_MAX, &used), 0);
    memd_wire_hdr hdr;
    ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &hdr), 0);
    ck_assert_int_eq(hdr.status, 0);
    memset(counts, 0, 16 * sizeof counts[0]);
    *n = 0;
    dump_iter it = {.p = out.data + MEMD_HDR_SIZE, .len = hdr.len, .next = UINT64_MAX};
    while (dump_next(&it)) { /* which checks that nothing follows PAGE */
        if (it.tag == MEMD_REC_ALLOC) {
            memd_wire_alloc_info i;
            ck_assert_int_eq(memd_wire_alloc_info_get(it.rec, it.size, &i), 0);
            h[(*n)++] = i.buf.handle;
        }
        counts[it.tag]++;
    }
    ck_assert_uint_ne(it.next, UINT64_MAX); /* every page ends with PAGE */
    out.len = 0;
    return it.next;
}

/* A paged dump (issue 14: one reply stopped at ~390k allocations and stalled the loop):
 * bounded pages in handle order; what lives through the dump appears exactly once. */
START_TEST(dump_pages)
{
    enum { N = 2 * 4096 + 50 };
    RESTART_WITH(max_allocs_per_session, 2 * N);
    uint64_t *mine = malloc(N * sizeof *mine), *seen = malloc((N + 8) * sizeof *seen);
    for (int i = 0; i < N; i++)
        mine[i] = must_alloc(&sa, MEMD_CLASS_INTERNAL, 32);
    uint64_t theirs = must_alloc(&sb, MEMD_CLASS_INTERNAL, 32);
    int counts[16];
    size_t n, total = 0;
    uint64_t cur = dump_page(&sroot, 0, seen, &n, counts);
    ck_assert_int_eq(counts[MEMD_REC_SERVER], 1);
    ck_assert_int_eq(counts[MEMD_REC_DEVICE], 1);
    ck_assert_int_eq(counts[MEMD_REC_SESSION], 0); /* sessions come with the last page */
    ck_assert_uint_eq(n, 4096);
    ck_assert_uint_eq(cur >> 21, seen[n - 1] + 1); /* the next handle (dump.c: SUB_BITS) */
    total += n;
    /* between pages: one already shown and one not yet shown go, one comes */
    reply r;
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, mine[10], &r), 0);
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, mine[5000], &r), 0);
    uint64_t fresh = must_alloc(&sa, MEMD_CLASS_INTERNAL, 32);
    for (int page = 2; cur; page++) {
        ck_assert_int_le(page, 3);
        cur = dump_page(&sroot, cur, seen + total, &n, counts);
        ck_assert_int_eq(counts[MEMD_REC_SERVER], 0);
        ck_assert_int_eq(counts[MEMD_REC_SESSION], cur ? 0 : 3);
        total += n;
    }
    /* N + 1 at the start, one freed ahead of the cursor, one created after it */
    ck_assert_uint_eq(total, N + 1);
    for (size_t i = 1; i < total; i++)
        ck_assert_uint_lt(seen[i - 1], seen[i]);
    ck_assert_uint_eq(seen[total - 1], fresh);
    bool has_theirs = false, has_freed_ahead = false;
    for (size_t i = 0; i < total; i++) {
        has_theirs |= seen[i] == theirs;
        has_freed_ahead |= seen[i] == mine[5000];
    }
    ck_assert(has_theirs && !has_freed_ahead);
    /* a session that is not admin pages through its own only */
    cur = dump_page(&sb, 0, seen, &n, counts);
    ck_assert_uint_eq(cur, 0); /* under a page's scan of handles */
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(seen[0], theirs);
    ck_assert_int_eq(counts[MEMD_REC_SESSION], 1);
    free(mine);
    free(seen);
}
END_TEST

/* A paged dump with MEMD_DUMP_F_BANKS: a bank-set buffer's ALLOC_BANK records follow its
 * ALLOC record in the same page, one per bank of its set, and pages are also cut by
 * bytes (per-bank buffers bring 8 records each here). */
START_TEST(dump_pages_banks)
{
    enum { N = 3000 };
    RESTART_WITH(max_allocs_per_session, 2 * N);
    static uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + 8];
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 16);
    a.scope = MEMD_SCOPE_SRAM;
    uint32_t pair[2] = {1, 3};
    for (int i = 0; i < N; i++) {
        /* Every 10th in range lockstep over banks 1 and 3, the others per bank over all 8. */
        bool range = i % 10 == 0;
        memd_wire_bankset bs = {range ? 0 : MEMD_BANKSET_F_PER_BANK, range ? 2 : 0};
        memd_wire_bankset_put(memd_wire_alloc_req_put(p, &a), &bs, pair);
        reply r;
        req(&sa, MEMD_OP_ALLOC_BANKS, p,
            MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + (range ? 8 : 0), &r);
        ck_assert_int_eq(r.h.status, 0);
    }
    must_alloc(&sa, MEMD_CLASS_INTERNAL, 64); /* a lockstep one: no ALLOC_BANK records */
    uint64_t cursor = 0;
    size_t allocs = 0, bank_recs = 0, banks_first_page = 0;
    int pages = 0;
    do {
        uint8_t q[MEMD_WIRE_DUMP_REQ_SIZE];
        memd_wire_dump_req d = {.device = UINT32_MAX,
                                .flags = MEMD_DUMP_F_PAGED | MEMD_DUMP_F_BANKS,
                                .cursor = cursor};
        memd_wire_dump_req_put(q, &d);
        static uint8_t buf[64];
        size_t len = frame(buf, MEMD_OP_DUMP, 57, q, sizeof q), used;
        ck_assert_int_eq(memd_frames_process(&st, &sroot, buf, len, &out, SIZE_MAX, &used), 0);
        memd_wire_hdr hdr;
        ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &hdr), 0);
        ck_assert_int_eq(hdr.status, 0);
        ck_assert_uint_le(hdr.len, (1u << 20) + 4096); /* a page's bytes, plus one buffer */
        dump_iter it = {.p = out.data + MEMD_HDR_SIZE, .len = hdr.len, .next = UINT64_MAX};
        uint64_t open = 0; /* the bank-set buffer being listed */
        uint32_t want = 0, got = 0;
        while (dump_next(&it)) {
            uint32_t tag = it.tag;
            if (tag != MEMD_REC_ALLOC_BANK) {
                ck_assert_uint_eq(got, want); /* every bank of the last buffer was listed */
                open = 0;
            }
            if (tag == MEMD_REC_ALLOC) {
                memd_wire_alloc_info i;
                ck_assert_int_eq(memd_wire_alloc_info_get(it.rec, it.size, &i), 0);
                allocs++;
                open = i.buf.bank_mode == MEMD_BANKS_ALL ? 0 : i.buf.handle;
                want = i.buf.bank_mode == MEMD_BANKS_ALL ? 0 : i.buf.banks;
                got = 0;
                if (i.buf.bank_mode == MEMD_BANKS_RANGE)
                    ck_assert_uint_eq(want, 2);
                else if (i.buf.bank_mode == MEMD_BANKS_PER_BANK)
                    ck_assert_uint_eq(want, 8);
            } else if (tag == MEMD_REC_ALLOC_BANK) {
                memd_wire_alloc_bank_rec b;
                ck_assert_int_eq(memd_wire_alloc_bank_rec_get(it.rec, it.size, &b), 0);
                ck_assert_uint_ne(open, 0); /* right after its ALLOC, in this page */
                ck_assert_uint_eq(b.handle, open);
                ck_assert_uint_lt(got, want);
                ck_assert_uint_eq(b.bank.bank, b.bank_mode == MEMD_BANKS_RANGE ? pair[got] : got);
                got++;
                bank_recs++;
            } else if (tag == MEMD_REC_BANK) {
                ck_assert_int_eq(pages, 0); /* per-bank use: with the map, on the first page */
                banks_first_page++;
            }
        }
        ck_assert_uint_ne(it.next, UINT64_MAX);
        out.len = 0;
        cursor = it.next;
        pages++;
    } while (cursor);
    ck_assert_int_ge(pages, 2); /* 3001 allocations are under one page's 4096: bytes cut */
    ck_assert_uint_eq(allocs, N + 1);
    ck_assert_uint_eq(bank_recs, (N / 10) * 2 + (N - N / 10) * 8);
    ck_assert_uint_eq(banks_first_page, 8 + 3 * 4); /* every allocatable region, bank by bank */
}
END_TEST

/* A client pool is one address map: memd refuses a per-bank one (range lockstep is fine). */
START_TEST(pool_not_per_bank)
{
    static uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE + MEMD_WIRE_BANKSET_SIZE + 8];
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 4096);
    a.scope = MEMD_SCOPE_SRAM;
    a.flags = MEMD_ALLOC_F_POOL;
    uint32_t set[2] = {2, 5};
    memd_wire_bankset bs = {MEMD_BANKSET_F_PER_BANK, 2};
    memd_wire_bankset_put(memd_wire_alloc_req_put(p, &a), &bs, set);
    reply r;
    req(&sa, MEMD_OP_ALLOC_BANKS, p, sizeof p, &r);
    ck_assert_int_eq(r.h.status, -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "pool"));
    bs.flags = 0;
    memd_wire_bankset_put(memd_wire_alloc_req_put(p, &a), &bs, set);
    req(&sa, MEMD_OP_ALLOC_BANKS, p, sizeof p, &r);
    ck_assert_int_eq(r.h.status, 0);
}
END_TEST

START_TEST(dump_records)
{
    must_alloc(&sa, MEMD_CLASS_CONSTANT, 1024);
    must_alloc(&sa, MEMD_CLASS_INTERNAL, 2048);
    must_alloc(&sb, MEMD_CLASS_INTERNAL, 4096);
    reply r;
    uint8_t *p;
    size_t len;
    int c[8];
    memd_wire_server_rec srv;

    dump(&sa, UINT32_MAX, 0, &r, &p, &len);
    ck_assert_int_eq(r.h.status, 0);
    parse_dump(p, len, c, &srv);
    ck_assert_int_eq(c[MEMD_REC_SERVER], 1);
    ck_assert_int_eq(c[MEMD_REC_DEVICE], 1);
    ck_assert_int_eq(c[MEMD_REC_GROUP], 2);
    ck_assert_int_eq(c[MEMD_REC_REGION], 5);
    ck_assert_int_eq(c[MEMD_REC_BLOCK], 0);
    ck_assert_int_eq(c[MEMD_REC_ALLOC], 2);   /* only its own */
    ck_assert_int_eq(c[MEMD_REC_SESSION], 1); /* only itself */
    ck_assert_uint_eq(srv.sessions, 3);
    ck_assert_uint_eq(srv.allocs, 3);
    ck_assert_uint_ge(srv.requests, 3);
    ck_assert_uint_eq(srv.sessions_total, 3);
    free(p);

    dump(&sroot, DEV, MEMD_DUMP_F_BLOCKS, &r, &p, &len);
    ck_assert_int_eq(r.h.status, 0);
    parse_dump(p, len, c, &srv);
    ck_assert_int_eq(c[MEMD_REC_ALLOC], 3);
    ck_assert_int_eq(c[MEMD_REC_SESSION], 3);
    /* code: 1 free; data: 3 allocated + free space; logging: 1; buffers: 1 */
    ck_assert_int_ge(c[MEMD_REC_BLOCK], 3 + 4);
    /* the DRAM group says two sessions hold something there */
    size_t off = 0;
    while (off < len) {
        uint32_t tag = memd_wire_u32(p + off);
        size_t sz = memd_wire_rec_size(tag);
        if (tag == MEMD_REC_GROUP) {
            memd_wire_group_rec g;
            ck_assert_int_eq(memd_wire_group_rec_get(p + off + 4, sz, &g), 0);
            ck_assert_uint_eq(g.device, DEV);
            if (g.kind == MEMD_KIND_DRAM) {
                ck_assert_uint_eq(g.clients, 2);
                ck_assert_uint_eq(g.stats.allocated, 1024 + 2048 + 4096);
                ck_assert_uint_eq(g.banks, 4);
            } else {
                ck_assert_uint_eq(g.clients, 0);
            }
        }
        off += 4 + sz;
    }
    free(p);

    dump(&sa, 3, 0, &r, &p, &len);
    ck_assert_int_eq(r.h.status, -ENODEV);
    free(p);
}
END_TEST

/* A reload takes limits and the admin group, refuses another device map or an unknown
 * group, and then changes nothing. */
START_TEST(reload_limits_not_devices)
{
    memd_config cfg;
    memd_device_spec spec;
    memd_limits lim = default_limits();
    lim.max_allocs_per_session = 5;
    lim.max_frame = 4096;
    make_config(&cfg, &spec, lim);
    memd_error e = {0};
    spec.groups[MEMD_KIND_SRAM].bank_size *= 2;
    ck_assert_int_eq(memd_state_reload(&st, &cfg, &e), -EBUSY);
    ck_assert_str_eq(e.msg, "device map changed: device 7 (testdev): sram bank_size");
    spec.groups[MEMD_KIND_SRAM].bank_size /= 2;
    spec.policy[MEMD_KIND_DRAM][MEMD_CLASS_CODE].dir ^= 1;
    ck_assert_int_eq(memd_state_reload(&st, &cfg, &e), -EBUSY);
    ck_assert_str_eq(e.msg, "device map changed: device 7 (testdev): dram class policy");
    spec.policy[MEMD_KIND_DRAM][MEMD_CLASS_CODE].dir ^= 1;
    strcpy(cfg.admin_group, "memd-unit-no-such-group");
    ck_assert_int_eq(memd_state_reload(&st, &cfg, &e), -ENOENT);
    ck_assert_uint_eq(st.limits.max_allocs_per_session, default_limits().max_allocs_per_session);
    strcpy(cfg.admin_group, "4242");
    ck_assert_int_eq(memd_state_reload(&st, &cfg, &e), 0);
    ck_assert_uint_eq(st.limits.max_allocs_per_session, 5);
    ck_assert(st.have_admin_gid);
    ck_assert_uint_eq(st.admin_gid, 4242);
    /* clients learned max_frame in HELLO: it stays until a restart */
    ck_assert_uint_eq(st.limits.max_frame, default_limits().max_frame);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("dispatch");
    TCase *tc = tcase_create("dispatch");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, hello_negotiates);
    tcase_add_test(tc, alloc_query_banks_free);
    tcase_add_test(tc, permissions);
    tcase_add_test(tc, model_names_reserved);
    tcase_add_test(tc, admin_group_member);
    tcase_add_test(tc, reload_limits_not_devices);
    tcase_add_test(tc, close_releases_everything);
    tcase_add_test(tc, shared_names_refcount);
    tcase_add_test(tc, shared_names_per_uid);
    tcase_add_test(tc, alloc_batch_all_or_nothing);
    tcase_add_test(tc, free_batch_all_or_nothing);
    tcase_add_test(tc, oom_reply_details);
    tcase_add_test(tc, unsupported_and_unknown);
    tcase_add_test(tc, session_alloc_limit);
    tcase_add_test(tc, uid_quota);
    tcase_add_test(tc, quota_charges_holders);
    tcase_add_test(tc, quota_per_bank_group);
    tcase_add_test(tc, dump_records);
    tcase_add_test(tc, dump_pages);
    tcase_add_test(tc, dump_pages_banks);
    tcase_add_test(tc, pool_not_per_bank);
    suite_add_tcase(s, tc);
    return s;
}
