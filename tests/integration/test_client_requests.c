/* libmemclient + the real daemon: what requests return. Out-of-memory replies carry the
 * region's state as the dump shows it; batches are all or nothing (a batch whose last
 * element cannot fit leaves nothing allocated, a free batch with one bad handle frees
 * nothing); pipelined requests complete in order, each with its own result; bank
 * addresses and queries agree with the allocation. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"

static memd_fixture f;
static memclient *c;

static void setup(void)
{
    cu_start(&f);
    c = cu_connect(&f);
}

static void teardown(void)
{
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}

/* A request no larger than the data region, but larger than its largest free block once
 * a 1 MiB buffer sits at the bottom of it: the engine accepts the footprint, then finds
 * no room (-ENOMEM, not -E2BIG). */
static uint64_t too_big_for(const memclient_region *data)
{
    return data->size - (512u << 10);
}

START_TEST(nomem_reply_describes_the_region)
{
    memclient_buffer small;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 1 << 20);
    ck_assert_int_eq(memclient_alloc(c, &r, &small), 0);
    memclient_snapshot *s = cu_dump(c, 0);
    const memclient_region *data = cu_region(s, MEMD_KIND_DRAM, "data");
    ck_assert_ptr_nonnull(data);
    uint64_t want = too_big_for(data);

    r = cu_req(MEMD_CLASS_CONSTANT, want);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    memclient_error e;
    ck_assert_int_eq(memclient_last_error(&e), -ENOMEM);
    ck_assert_int_eq(e.detail, MEMCLIENT_DETAIL_NOMEM);
    ck_assert_msg(strlen(e.message) > 10, "message '%s'", e.message);
    ck_assert_uint_eq(e.requested, want);
    ck_assert_uint_ge(e.size_per_bank, want);
    ck_assert_uint_eq(e.device, 0);
    ck_assert_int_eq(e.kind, MEMD_KIND_DRAM);
    ck_assert_int_eq(e.cls, MEMD_CLASS_CONSTANT);
    ck_assert_uint_eq(e.region, data->region);
    ck_assert_uint_eq(e.allocated, data->stats.allocated);
    ck_assert_uint_eq(e.free, data->stats.free);
    ck_assert_uint_eq(e.largest_free, data->stats.largest_free);
    ck_assert_uint_lt(e.largest_free, e.size_per_bank);
    /* For people: human sizes, per bank and total apart, who holds the region (us). */
    char me[32];
    snprintf(me, sizeof me, "held by pid %d ", (int)getpid());
    ck_assert_msg(strstr(e.message, " MiB") && strstr(e.message, " per bank x ") &&
                      strstr(e.message, " total); per bank ") && strstr(e.message, me),
                  "message '%s'", e.message);

    /* The holders, as records. */
    memclient_holder h[4];
    int nh = memclient_region_holders(c, e.device, e.kind, e.region, h, 4);
    ck_assert_int_ge(nh, 1);
    ck_assert_uint_eq(h[0].pid, (uint32_t)getpid());
    ck_assert_uint_ge(h[0].bytes, 1u << 20);
    ck_assert_int_eq(memclient_region_holders(c, e.device, e.kind, 200, h, 4), -EINVAL);

    /* Larger than the region is out of memory too, with what would make it fit. */
    r = cu_req(MEMD_CLASS_CONSTANT, data->size * 2);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENOMEM);
    ck_assert_int_eq(memclient_last_error(&e), -ENOMEM);
    ck_assert_int_eq(e.detail, MEMCLIENT_DETAIL_NOMEM);
    ck_assert_uint_eq(e.requested, data->size * 2);
    ck_assert_uint_eq(e.free, data->stats.free);
    ck_assert_msg(strstr(e.message, "larger than the region") &&
                      (strstr(e.message, "a page size interleaves it") || strstr(e.message, "banks")),
                  "message '%s'", e.message);
    memclient_snapshot_free(s);

    /* The failure changed nothing and the connection goes on. */
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 1);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_free(c, small.handle), 0);
}
END_TEST

START_TEST(unsupported_and_invalid_requests)
{
    memclient_buffer b;
    memclient_error e;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.device = 999;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -ENODEV);
    memclient_last_error(&e);
    ck_assert_ptr_nonnull(strstr(e.message, "999"));
    r = cu_req(MEMD_CLASS_CONSTANT, 0);
    ck_assert_int_lt(memclient_alloc(c, &r, &b), 0);
    /* A power of two larger than a bank: malformed, not a lack of room. */
    r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    r.alignment = UINT64_C(1) << 63;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "invalid") &&
                      strstr(e.message, "alignment 9223372036854775808"),
                  "message '%s'", e.message);
    ck_assert_int_eq(memclient_free(c, 123456789), -ENOENT);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, 123456789, &info), -ENOENT);
    /* None of it hurt the session. */
    r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
}
END_TEST

START_TEST(alloc_batch_is_all_or_nothing)
{
    memclient_snapshot *s = cu_dump(c, 0);
    const memclient_region *data = cu_region(s, MEMD_KIND_DRAM, "data");
    uint64_t big = data->size - 4096;
    uint64_t before = data->stats.allocated;
    memclient_snapshot_free(s);

    memclient_alloc_req reqs[4] = {
        cu_req(MEMD_CLASS_CONSTANT, 4096), cu_req(MEMD_CLASS_PLACEHOLDER, 8192),
        cu_req(MEMD_CLASS_CONSTANT, 1 << 20), cu_req(MEMD_CLASS_CONSTANT, big),
    };
    memclient_buffer out[4];
    /* The first three fit alone, the last does not fit after them. */
    ck_assert_int_eq(memclient_alloc_batch(c, reqs, 4, out), -ENOMEM);
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, before);
    memclient_snapshot_free(s);

    /* Without it the batch goes through: distinct handles, no overlap. */
    ck_assert_int_eq(memclient_alloc_batch(c, reqs, 3, out), 0);
    ck_assert_uint_ne(out[0].handle, out[1].handle);
    ck_assert_uint_ne(out[1].handle, out[2].handle);
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 3);
    ck_assert_int_eq(cu_check_map(s), 0);
    for (int i = 0; i < 3; i++) {
        const memclient_alloc_info *a = cu_find(s, out[i].handle);
        ck_assert_ptr_nonnull(a);
        ck_assert_uint_eq(a->buf.address, out[i].address);
        ck_assert_int_eq(a->cls, reqs[i].cls);
    }
    memclient_snapshot_free(s);

    /* A free batch with one unknown handle frees nothing. */
    uint64_t h[4] = {out[0].handle, out[1].handle, out[2].handle, 987654321};
    ck_assert_int_eq(memclient_free_batch(c, h, 4), -ENOENT);
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 3);
    memclient_snapshot_free(s);
    /* A handle twice in one batch is refused as well. */
    uint64_t twice[2] = {out[0].handle, out[0].handle};
    ck_assert_int_lt(memclient_free_batch(c, twice, 2), 0);
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 3);
    memclient_snapshot_free(s);
    ck_assert_int_eq(memclient_free_batch(c, h, 3), 0);
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, before);
    memclient_snapshot_free(s);
    /* Empty batches are fine. */
    ck_assert_int_eq(memclient_alloc_batch(c, NULL, 0, NULL), 0);
    ck_assert_int_eq(memclient_free_batch(c, NULL, 0), 0);
}
END_TEST

START_TEST(large_batches)
{
    size_t n = memclient_max_alloc_batch(c);
    ck_assert_uint_gt(n, 1000);
    n = 4096 < n ? 4096 : n;
    memclient_alloc_req *reqs = calloc(n, sizeof(*reqs));
    memclient_buffer *out = calloc(n, sizeof(*out));
    uint64_t *h = calloc(n, sizeof(*h));
    for (size_t i = 0; i < n; i++)
        reqs[i] = cu_req(i % 2 ? MEMD_CLASS_CONSTANT : MEMD_CLASS_INTERNAL, 32 + 32 * (i % 7));
    ck_assert_int_eq(memclient_alloc_batch(c, reqs, n, out), 0);
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, n);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);
    for (size_t i = 0; i < n; i++)
        h[i] = out[i].handle;
    ck_assert_int_eq(memclient_free_batch(c, h, n), 0);
    free(reqs);
    free(out);
    free(h);
}
END_TEST

START_TEST(pipelined_requests_complete_in_order)
{
    enum { N = 64, BAD = 40 };
    memclient_snapshot *s = cu_dump(c, 0);
    uint64_t big = cu_region(s, MEMD_KIND_DRAM, "data")->size + 4096;
    memclient_snapshot_free(s);
    memclient_alloc_req reqs[N];
    memclient_buffer out[N];
    uint64_t t[N];
    for (int i = 0; i < N; i++) {
        reqs[i] = cu_req(MEMD_CLASS_CONSTANT, i == BAD ? big : 4096 + 64 * (uint64_t)i);
        ck_assert_int_eq(memclient_submit_alloc(c, &reqs[i], &out[i], &t[i]), 0);
    }
    /* A blocking call in between waits for its own reply only. */
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, 424242, &info), -ENOENT);
    ck_assert_uint_eq(memclient_pending(c), N);
    for (int i = 0; i < N; i++) {
        memclient_completion done;
        ck_assert_int_eq(memclient_complete(c, &done), 0);
        ck_assert_uint_eq(done.ticket, t[i]);
        if (i == BAD) {
            ck_assert_int_lt(done.status, 0);
            memclient_error e;
            ck_assert_int_eq(memclient_last_error(&e), done.status);
        } else {
            ck_assert_int_eq(done.status, 0);
            ck_assert_uint_ge(out[i].size_per_bank, reqs[i].bytes);
        }
    }
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, N - 1);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);
    for (int i = 0; i < N; i++)
        if (i != BAD)
            ck_assert_int_eq(memclient_submit_free(c, out[i].handle, NULL), 0);
    memclient_completion done;
    int n = 0;
    while (memclient_complete(c, &done) == 0) {
        ck_assert_int_eq(done.status, 0);
        n++;
    }
    ck_assert_int_eq(n, N - 1);
    s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    memclient_snapshot_free(s);
}
END_TEST

START_TEST(query_and_bank_addresses)
{
    memclient_alloc_req r = cu_req(MEMD_CLASS_PLACEHOLDER, 6 * 2048);
    r.page_size = 2048;
    r.name = "activations";
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_alloc_info info;
    ck_assert_int_eq(memclient_query(c, b.handle, &info), 0);
    ck_assert_uint_eq(info.buf.handle, b.handle);
    ck_assert_uint_eq(info.buf.address, b.address);
    ck_assert_uint_eq(info.buf.size_per_bank, b.size_per_bank);
    ck_assert_int_eq(info.cls, MEMD_CLASS_PLACEHOLDER);
    ck_assert_int_eq(info.scope, MEMD_SCOPE_DRAM);
    ck_assert_str_eq(info.name, "activations");
    ck_assert_uint_eq(info.pid, (uint32_t)getpid());
    ck_assert_uint_eq(info.uid, (uint32_t)getuid());
    uint32_t banks = cu_dram_banks(c);
    ck_assert_uint_gt(banks, 1);
    uint64_t addrs[256];
    int n = memclient_bank_addresses(c, b.handle, addrs, 256);
    ck_assert_int_eq(n, (int)b.banks);
    ck_assert_uint_le(b.banks, banks);
    /* Lockstep: every bank holds the buffer at the same offset from its bank base. */
    for (int i = 0; i < n; i++)
        ck_assert_uint_ge(addrs[i], b.address);
    ck_assert_int_eq(memclient_bank_addresses(c, b.handle, NULL, 0), n);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
}
END_TEST

START_TEST(texture_scope_and_shapes)
{
    /* Device 3 offers dram.texture: rows of width x 4 channels padded to its pitch. */
    memclient_alloc_req r = {.device = 3, .cls = MEMD_CLASS_PLACEHOLDER,
                             .scope = MEMD_SCOPE_DRAM_TEXTURE, .dtype = MEMD_DTYPE_F32,
                             .ndim = 2, .shape = {64, 100}};
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    ck_assert_uint_ge(b.pitch, 100 * 4 * 4);
    ck_assert_uint_eq(b.pitch % 256, 0);
    ck_assert_uint_ge(b.size_per_bank, b.pitch * 64);
    /* Device 0 has no texture memory: a clear refusal, not a placement. */
    r.device = 0;
    memclient_buffer none;
    ck_assert_int_eq(memclient_alloc(c, &r, &none), -EOPNOTSUPP);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_ptr_nonnull(strstr(e.message, "texture"));
    /* Shape + dtype in plain DRAM: 32 x 1024 bf16 = 64 KiB. */
    memclient_alloc_req t = {.device = 0, .cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_DRAM,
                             .dtype = MEMD_DTYPE_BF16, .ndim = 2, .shape = {32, 1024}};
    memclient_buffer tb;
    ck_assert_int_eq(memclient_alloc(c, &t, &tb), 0);
    ck_assert_uint_ge(tb.size_per_bank, 32 * 1024 * 2);
    ck_assert_uint_eq(tb.pitch, 0);
    ck_assert_int_eq(memclient_free(c, tb.handle), 0);
    ck_assert_int_eq(memclient_free(c, b.handle), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-requests");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, nomem_reply_describes_the_region);
    tcase_add_test(tc, unsupported_and_invalid_requests);
    tcase_add_test(tc, alloc_batch_is_all_or_nothing);
    tcase_add_test(tc, large_batches);
    tcase_add_test(tc, pipelined_requests_complete_in_order);
    tcase_add_test(tc, query_and_bank_addresses);
    tcase_add_test(tc, texture_scope_and_shapes);
    suite_add_tcase(s, tc);
    return s;
}
