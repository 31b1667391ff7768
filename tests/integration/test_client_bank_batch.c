/* Batches with bank sets (ALLOC_BATCH_BANKS) through the real daemon: range lockstep,
 * per-bank and plain requests mixed in one memclient_alloc_batch (and its submit form),
 * the banks each element's reply brings (bank_out) against memclient_bank_info, all or
 * nothing when the last element cannot fit, sub-device rules applied to each element,
 * and raw frames that lie about their elements refused without harming another
 * session. Device 0 of the default config: 64 SRAM banks. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "daemon_fixture.h"
#include "raw_client.h"
#include "test_rand.h"

static memd_fixture f;

static void teardown(void)
{
    memd_fixture_destroy(&f);
}

/* What the reply put in bank_out is what memclient_bank_info says, bank for bank. */
static void same_as_bank_info(memclient *c, const memclient_buffer *b, const memclient_bank *got,
                              uint32_t want)
{
    memclient_bank info[64];
    ck_assert_int_eq(memclient_bank_info(c, b->handle, info, 64), (int)want);
    ck_assert_uint_eq(b->banks, want);
    for (uint32_t i = 0; i < want; i++) {
        ck_assert_uint_eq(got[i].bank, info[i].bank);
        ck_assert_uint_eq(got[i].address, info[i].address);
        ck_assert_uint_eq(got[i].absolute, info[i].absolute);
        ck_assert_uint_eq(got[i].noc_x, info[i].noc_x);
        ck_assert_uint_eq(got[i].logical_y, info[i].logical_y);
    }
}

/* The allocations the dump shows, every bank's map consistent. */
static size_t allocations(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    ck_assert_int_eq(cu_check_map(s), 0);
    ck_assert_int_eq(cu_check_banks(s), 0);
    size_t n = s->nallocs;
    memclient_snapshot_free(s);
    return n;
}

START_TEST(mixed_batch)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint32_t range[] = {8, 0, 1, 2, 3}, per[] = {5, 4, 3, 2};
    memclient_bank rb[8], pb[8], all[64];
    memclient_alloc_req r[5] = {cu_sram(8192), cu_sram(4096), cu_sram(4096), cu_sram(1024),
                                cu_req(MEMD_CLASS_CONSTANT, 4096)};
    r[1].bank_set = range;
    r[1].nbank_set = 5;
    r[1].bank_out = rb;
    r[1].nbank_out = 8;
    r[2].bank_set = per;
    r[2].nbank_set = 4;
    r[2].per_bank = 1;
    r[2].bank_out = pb;
    r[2].nbank_out = 8;
    r[3].per_bank = 1; /* every bank */
    r[3].bank_out = all;
    r[3].nbank_out = 64;
    memclient_buffer b[5];
    ck_assert_int_eq(memclient_alloc_batch(c, r, 5, b), 0);
    ck_assert_int_eq(b[0].bank_mode, MEMD_BANKS_ALL);
    ck_assert_int_eq(b[1].bank_mode, MEMD_BANKS_RANGE);
    ck_assert_int_eq(b[2].bank_mode, MEMD_BANKS_PER_BANK);
    ck_assert_int_eq(b[3].bank_mode, MEMD_BANKS_PER_BANK);
    ck_assert_int_eq(b[4].bank_mode, MEMD_BANKS_ALL);
    ck_assert_int_eq(b[4].kind, MEMD_KIND_DRAM);
    same_as_bank_info(c, &b[1], rb, 5);
    same_as_bank_info(c, &b[2], pb, 4);
    same_as_bank_info(c, &b[3], all, 64);
    for (int i = 0; i < 5; i++)
        ck_assert_uint_eq(rb[i].address, b[1].address);
    ck_assert_uint_eq(pb[0].bank, 2);
    ck_assert_uint_eq(pb[0].address, b[2].address); /* the first bank's, as memclient_alloc */
    ck_assert_uint_eq(allocations(c), 5);

    /* The single call fills bank_out the same way. */
    memclient_bank one[4];
    uint32_t two[] = {7, 6};
    memclient_alloc_req q = cu_sram(2048);
    q.bank_set = two;
    q.nbank_set = 2;
    q.per_bank = 1;
    q.bank_out = one;
    q.nbank_out = 1; /* at most 1 written; banks says 2 */
    memclient_buffer s;
    ck_assert_int_eq(memclient_alloc(c, &q, &s), 0);
    ck_assert_uint_eq(s.banks, 2);
    ck_assert_uint_eq(one[0].bank, 6);
    ck_assert_uint_eq(one[0].address, s.address);

    /* Pipelined: a batch of bank-set requests and a plain one. */
    uint32_t grid[] = {16, 17, 24, 25};
    memclient_bank gb[4];
    memclient_alloc_req p[2] = {cu_sram(512), cu_sram(512)};
    p[0].bank_set = grid;
    p[0].nbank_set = 4;
    p[0].per_bank = 1;
    p[0].bank_out = gb;
    p[0].nbank_out = 4;
    memclient_buffer pbuf[2];
    uint64_t ticket;
    ck_assert_int_eq(memclient_submit_alloc_batch(c, p, 2, pbuf, &ticket), 0);
    memclient_completion done;
    ck_assert_int_eq(memclient_complete(c, &done), 0);
    ck_assert_uint_eq(done.ticket, ticket);
    ck_assert_int_eq(done.status, 0);
    same_as_bank_info(c, &pbuf[0], gb, 4);
    ck_assert_int_eq(pbuf[1].bank_mode, MEMD_BANKS_ALL);
    ck_assert_uint_eq(allocations(c), 8);

    uint64_t h[8] = {b[0].handle, b[1].handle, b[2].handle, b[3].handle, b[4].handle,
                     s.handle, pbuf[0].handle, pbuf[1].handle};
    ck_assert_int_eq(memclient_free_batch(c, h, 8), 0);
    ck_assert_uint_eq(allocations(c), 0);
    memclient_disconnect(c);
}
END_TEST

/* The last element cannot fit: nothing of the batch stays, in any bank. */
START_TEST(last_element_cannot_fit)
{
    cu_start(&f);
    memclient *c = cu_connect(&f);
    uint64_t region = cu_region_size(c, 0, MEMD_KIND_SRAM, "buffers");
    uint32_t range[] = {1, 2}, three = 3, seven = 7;
    memclient_alloc_req r[4] = {cu_sram(4096), cu_sram(4096), cu_sram(4096), cu_sram(region)};
    r[0].bank_set = range;
    r[0].nbank_set = 2;
    r[1].bank_set = &three;
    r[1].nbank_set = 1;
    r[1].per_bank = 1;
    r[3].bank_set = &seven; /* the lockstep element r[2] took some of bank 7 */
    r[3].nbank_set = 1;
    r[3].per_bank = 1;
    memclient_buffer b[4];
    ck_assert_int_eq(memclient_alloc_batch(c, r, 4, b), -ENOMEM);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "element 3 of 4, nothing allocated") &&
                      strstr(e.message, "bank 7"),
                  "%s", e.message);
    ck_assert_uint_eq(allocations(c), 0);
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_SRAM, "buffers")->stats.allocated, 0);
    memclient_snapshot_free(s);
    /* Without it the batch fits, and the whole region is there for bank 7 alone after. */
    ck_assert_int_eq(memclient_alloc_batch(c, r, 3, b), 0);
    ck_assert_uint_eq(allocations(c), 3);
    uint64_t h[3] = {b[0].handle, b[1].handle, b[2].handle};
    ck_assert_int_eq(memclient_free_batch(c, h, 3), 0);
    ck_assert_int_eq(memclient_alloc_batch(c, &r[3], 1, b), 0);

    /* The client refuses a duplicate bank before sending, naming the element. */
    uint32_t dup[] = {3, 1, 3};
    r[1].bank_set = dup;
    r[1].nbank_set = 3;
    ck_assert_int_eq(memclient_alloc_batch(c, r, 2, b), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "batch element 1") && strstr(e.message, "twice"), "%s",
                  e.message);
    ck_assert_uint_eq(allocations(c), 1);
    memclient_disconnect(c);
}
END_TEST

/* The reference: every live buffer of the workload and the banks its reply gave. */
typedef struct live_buf {
    memclient_buffer b;
    uint32_t nbanks;
    memclient_bank banks[8];
} live_buf;

/* Seeded random batches of 1..12 elements mixing range, per-bank and plain requests on
 * shard grids (a row of 8, a 2 x 4 block, one core), some too large to fit, and frees.
 * After every step: a refused batch left the dump's allocations exactly as they were,
 * every bank's map is consistent, and the live buffers' banks are still what their
 * replies said (the newest after each step, all of them every 10). Seed: MEMD_TEST_SEED. */
START_TEST(random_batches_against_reference)
{
    uint64_t seed = memd_test_seed(0x62617463686573ull), st = seed;
    printf("# seed %#llx\n", (unsigned long long)seed);
    cu_start(&f);
    memclient *c = cu_connect(&f);
    static live_buf live[512];
    size_t n = 0, placed = 0, refused = 0;
    for (int step = 0; step < 120; step++) {
        if (n > 12 && memd_test_rand(&st) % 3 == 0) {
            for (int k = (int)(memd_test_rand(&st) % 6); k >= 0 && n > 0; k--) {
                size_t i = memd_test_rand(&st) % n;
                ck_assert_int_eq(memclient_free(c, live[i].b.handle), 0);
                live[i] = live[--n];
            }
        } else {
            memclient_alloc_req r[12];
            uint32_t sets[12][8], nb = 1 + (uint32_t)(memd_test_rand(&st) % 12);
            live_buf got[12];
            for (uint32_t j = 0; j < nb; j++) {
                uint32_t ns = 0, kind = (uint32_t)(memd_test_rand(&st) % 4);
                uint32_t row = (uint32_t)(memd_test_rand(&st) % 8), col = (uint32_t)(memd_test_rand(&st) % 4);
                if (kind == 1)
                    for (uint32_t x = 0; x < 8; x++)
                        sets[j][ns++] = row * 8 + 7 - x; /* unsorted: the library sorts */
                else if (kind == 2)
                    for (uint32_t y = 0; y < 2 && row + y < 8; y++)
                        for (uint32_t x = 0; x < 4; x++)
                            sets[j][ns++] = (row + y) * 8 + col + x;
                else if (kind == 3)
                    sets[j][ns++] = (uint32_t)(memd_test_rand(&st) % 64);
                /* now and then one too large for what is left */
                r[j] = cu_sram(memd_test_rand(&st) % 16 == 0 ? 1024 * 1024 : 32 + memd_test_rand(&st) % 32768);
                r[j].cls = memd_test_rand(&st) % 2 ? MEMD_CLASS_CONSTANT : MEMD_CLASS_PLACEHOLDER;
                r[j].bank_set = ns ? sets[j] : NULL;
                r[j].nbank_set = ns;
                r[j].per_bank = ns && memd_test_rand(&st) % 2;
                r[j].bank_out = got[j].banks;
                r[j].nbank_out = 8;
            }
            memclient_buffer b[12];
            size_t before = allocations(c);
            int rc = memclient_alloc_batch(c, r, nb, b);
            ck_assert_msg(rc == 0 || rc == -ENOMEM, "seed %#llx step %d: %d",
                          (unsigned long long)seed, step, rc);
            if (rc < 0) {
                ck_assert_uint_eq(allocations(c), before); /* nothing of it stayed */
                refused++;
                continue;
            }
            placed++;
            for (uint32_t j = 0; j < nb; j++) {
                got[j].b = b[j];
                got[j].nbanks = r[j].nbank_set || r[j].per_bank ? b[j].banks : 0;
                ck_assert_uint_lt(n, sizeof live / sizeof live[0]);
                live[n++] = got[j];
            }
        }
        ck_assert_uint_eq(allocations(c), n);
        /* Every live buffer every 10 steps, else the newest (valgrind: a round trip each). */
        for (size_t i = step % 10 == 9 ? 0 : n - (n < 12 ? n : 12); i < n; i++) {
            memclient_bank info[64];
            int k = memclient_bank_info(c, live[i].b.handle, info, 64);
            ck_assert_int_gt(k, 0);
            for (uint32_t j = 0; j < live[i].nbanks; j++) {
                ck_assert_uint_eq(info[j].bank, live[i].banks[j].bank);
                ck_assert_uint_eq(info[j].address, live[i].banks[j].address);
            }
            if (live[i].b.bank_mode != MEMD_BANKS_PER_BANK) /* one address in every bank */
                for (int j = 0; j < k; j++)
                    ck_assert_uint_eq(info[j].address, live[i].b.address);
        }
    }
    printf("# %zu batches placed, %zu refused, %zu buffers live\n", placed, refused, n);
    ck_assert_uint_gt(placed, 10); /* the workload did both */
    ck_assert_uint_gt(refused, 2);
    memclient_disconnect(c);
}
END_TEST

static void start_subdev(void)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/config/devices/wormhole_b0.yaml\n"
             "sub_devices:\n"
             "  - name: right\n"
             "    device: 0\n"
             "    group: sram\n"
             "    banks: 32-63\n"
             "    budget: 1MiB\n",
             memd_fixture_source_root());
    memd_fixture_opts o = {.config_yaml = yaml, .capture_stderr = true};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
}

static uint64_t right_used(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    ck_assert_uint_eq(s->nsubdevs, 1);
    uint64_t used = s->subdevs[0].used;
    ck_assert_int_eq(cu_check_banks(s), 0);
    memclient_snapshot_free(s);
    return used;
}

/* A bound session's batch: each element under the sub-device's rules, as its own
 * ALLOC_BANKS; one outside (or over the budget) and nothing is allocated. */
START_TEST(subdev_rules_per_element)
{
    start_subdev();
    memclient *c = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(c, "right"), 0);
    uint32_t in[] = {33, 34}, out3 = 3;
    memclient_alloc_req r[3] = {cu_sram(4096), cu_sram(4096), cu_sram(4096)};
    r[1].bank_set = in;
    r[1].nbank_set = 2;
    r[1].per_bank = 1;
    r[2].bank_set = &out3;
    r[2].nbank_set = 1;
    memclient_buffer b[3];
    ck_assert_int_eq(memclient_alloc_batch(c, r, 3, b), -EACCES);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "element 2 of 3") && strstr(e.message, "bank 3") &&
                      strstr(e.message, "right"),
                  "%s", e.message);
    ck_assert_uint_eq(allocations(c), 0);
    ck_assert_uint_eq(right_used(c), 0);
    /* Another device: refused as ALLOC would be. */
    r[2] = cu_req(MEMD_CLASS_CONSTANT, 4096);
    ck_assert_int_eq(memclient_alloc_batch(c, r, 3, b), -EACCES);
    ck_assert_uint_eq(allocations(c), 0);
    /* The budget (1 MiB over its banks): 4 KiB x 32 + 4 KiB x 2, then 32 KiB x 32. */
    r[2] = cu_sram(32 * 1024);
    ck_assert_int_eq(memclient_alloc_batch(c, r, 3, b), -EDQUOT);
    ck_assert_uint_eq(allocations(c), 0);
    ck_assert_uint_eq(right_used(c), 0);
    /* Inside: the plain element is placed over the sub-device's banks. */
    ck_assert_int_eq(memclient_alloc_batch(c, r, 2, b), 0);
    ck_assert_int_eq(b[0].bank_mode, MEMD_BANKS_RANGE);
    ck_assert_uint_eq(b[0].banks, 32);
    ck_assert_uint_eq(right_used(c), 4096ull * 32 + 4096ull * 2);
    memclient_disconnect(c);
}
END_TEST

/* ---- raw frames ---- */

/* One element: the request, its bank set (flags, n ids as given, unsorted on purpose). */
static uint8_t *elem_put(uint8_t *p, const memd_wire_alloc_req *r, uint32_t flags,
                         const uint32_t *ids, uint32_t n)
{
    memd_wire_bankset b = {flags, n};
    return memd_wire_bankset_put(memd_wire_alloc_req_put(p, r), &b, ids);
}

static memd_wire_alloc_req raw_sram(uint64_t bytes)
{
    return raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_SRAM, bytes);
}

/* Sends an op frame with header status flags; the reply's status (payload into buf). */
static int exchange_op(int fd, uint16_t op, uint64_t id, int32_t flags, const uint8_t *p,
                       uint32_t len, uint8_t *buf, size_t cap, memd_wire_error *err)
{
    uint8_t hdr[MEMD_HDR_SIZE];
    memd_wire_hdr h = {MEMD_PROTO_MAGIC, 1, op, id, len, flags};
    memd_wire_hdr_put(hdr, &h);
    ck_assert_int_eq(raw_write(fd, hdr, sizeof hdr), 0);
    ck_assert_int_eq(raw_write(fd, p, len), 0);
    memd_wire_hdr rh;
    ck_assert_int_eq(raw_recv_err(fd, &rh, buf, cap, err, 10000), 0);
    ck_assert_uint_eq(rh.id, id);
    return rh.status;
}

static int exchange(int fd, uint64_t id, int32_t flags, const uint8_t *p, uint32_t len,
                    uint8_t *buf, size_t cap, memd_wire_error *err)
{
    return exchange_op(fd, MEMD_OP_ALLOC_BATCH_BANKS, id, flags, p, len, buf, cap, err);
}

/* A fresh connection sends p; the reply is status (message containing what), and the
 * daemon closes the connection. */
static void malformed(const uint8_t *p, uint32_t len, int status, const char *what)
{
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    uint8_t buf[512];
    memd_wire_error err;
    ck_assert_int_eq(exchange(fd, 5, 0, p, len, buf, sizeof buf, &err), status);
    ck_assert_msg(strstr(err.message, what), "%s", err.message);
    ck_assert(raw_closed(fd, 10000));
    close(fd);
}

/* The reply of a good frame: count elements, each a buffer and its bank list; the
 * handles into h, the list lengths checked against nb. */
static void good_reply(const uint8_t *p, uint32_t count, const uint32_t *nb, uint64_t *h)
{
    ck_assert_uint_eq(memd_wire_u32(p), count);
    size_t off = MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < count; i++) {
        memd_wire_buffer b;
        ck_assert_int_eq(memd_wire_buffer_get(p + off, MEMD_WIRE_BUFFER_SIZE, &b), 0);
        h[i] = b.handle;
        off += MEMD_WIRE_BUFFER_SIZE;
        ck_assert_uint_eq(memd_wire_u32(p + off), nb[i]);
        off += MEMD_WIRE_COUNT_SIZE + (size_t)nb[i] * MEMD_WIRE_BANK_ADDR_SIZE;
    }
}

START_TEST(bad_frames_refused)
{
    cu_start(&f);
    /* A bystander holding memory, through the library. */
    memclient *by = cu_connect(&f);
    memclient_alloc_req br = cu_sram(65536);
    memclient_buffer held;
    ck_assert_int_eq(memclient_alloc(by, &br, &held), 0);

    static uint8_t p[4096];
    memd_wire_alloc_req r = raw_sram(4096);
    uint32_t ids[] = {4, 5, 6}, dup[] = {3, 3}, down[] = {5, 2}, far[] = {1, 64};
    /* Count 2, one element. */
    uint8_t *e = memd_wire_count_put(p, 2);
    e = elem_put(e, &r, MEMD_BANKSET_F_PER_BANK, ids, 3);
    malformed(p, (uint32_t)(e - p), -EBADMSG, "element 1 of 2 is cut short");
    /* The last element's ids cut short. */
    malformed(p, (uint32_t)(e - p) - 4, -EBADMSG, "element 0 of 2 is cut short");
    /* Bytes after the elements. */
    memd_wire_put_u32(p, 1);
    memset(e, 0, 4);
    malformed(p, (uint32_t)(e - p) + 4, -EBADMSG, "4 bytes follow its 1 element(s)");
    /* A set over MEMD_BANKSET_MAX, unknown flags. */
    memd_wire_put_u32(p + MEMD_WIRE_COUNT_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE + 4,
                      MEMD_BANKSET_MAX + 1);
    malformed(p, (uint32_t)(e - p), -EINVAL, "element 0 of 1");
    e = elem_put(p + MEMD_WIRE_COUNT_SIZE, &r, MEMD_BANKSET_F_SIZES << 1, ids, 3);
    malformed(p, (uint32_t)(e - p), -EINVAL, "unknown bank-set flags");
    /* A bad enum in the request. */
    memd_wire_alloc_req bad = r;
    bad.cls = 200;
    e = elem_put(p + MEMD_WIRE_COUNT_SIZE, &bad, 0, ids, 3);
    malformed(p, (uint32_t)(e - p), -EINVAL, "element 0 of 1");

    /* Refusals that leave the connection open, with nothing allocated. */
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    uint8_t buf[8192];
    memd_wire_error err;
    memd_wire_put_u32(p, 2);
    e = elem_put(p + MEMD_WIRE_COUNT_SIZE, &r, 0, ids, 3);
    uint8_t *second = e;
    e = elem_put(second, &r, MEMD_BANKSET_F_PER_BANK, dup, 2);
    ck_assert_int_eq(exchange(fd, 6, 0, p, (uint32_t)(e - p), buf, sizeof buf, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "element 1 of 2: bank 3 is in the bank set twice"), "%s",
                  err.message);
    e = elem_put(second, &r, 0, down, 2);
    ck_assert_int_eq(exchange(fd, 7, 0, p, (uint32_t)(e - p), buf, sizeof buf, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "strictly increasing, 2 comes after 5"), "%s",
                  err.message);
    e = elem_put(second, &r, 0, far, 2); /* bank 64 of 64: the engine's refusal */
    ck_assert_int_eq(exchange(fd, 8, 0, p, (uint32_t)(e - p), buf, sizeof buf, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "element 1 of 2") && strstr(err.message, "bank set"),
                  "%s", err.message);
    r.flags = MEMD_ALLOC_F_SHARED;
    memd_wire_strset(r.name, sizeof r.name, "w");
    e = elem_put(second, &r, 0, ids, 3);
    ck_assert_int_eq(exchange(fd, 9, 0, p, (uint32_t)(e - p), buf, sizeof buf, &err), -EINVAL);
    ck_assert_msg(strstr(err.message, "cannot be shared"), "%s", err.message);
    ck_assert_uint_eq(allocations(by), 1);

    /* A good frame: a range element, a plain shared one; then sent again as a retry it
     * gets the same buffers, nothing new. */
    e = elem_put(second, &r, 0, NULL, 0);
    uint32_t len = (uint32_t)(e - p), nb[2] = {3, 0};
    uint64_t h1[2], h2[2];
    ck_assert_int_eq(exchange(fd, 10, 0, p, len, buf, sizeof buf, &err), 0);
    good_reply(buf, 2, nb, h1);
    ck_assert_uint_eq(allocations(by), 3);
    ck_assert_int_eq(exchange(fd, 10, MEMD_REQ_F_RETRY, p, len, buf, sizeof buf, &err), 0);
    good_reply(buf, 2, nb, h2);
    ck_assert_uint_eq(h1[0], h2[0]);
    ck_assert_uint_eq(h1[1], h2[1]);
    ck_assert_uint_eq(allocations(by), 3);
    /* One of its buffers freed since: a retry cannot be answered (-EIO), is not applied
     * again, and gets exactly one reply (the next request's reply is the next one). */
    ck_assert_int_eq(raw_free(fd, h1[0], NULL), 0);
    ck_assert_int_eq(exchange(fd, 10, MEMD_REQ_F_RETRY, p, len, buf, sizeof buf, &err), -EIO);
    ck_assert_msg(strstr(err.message, "holds 1 from its first sending"), "%s", err.message);
    ck_assert_uint_eq(allocations(by), 2);
    /* The same for ALLOC_BATCH (the helper is shared; it used to apply such a retry
     * after queueing its error: two replies, a second set of buffers). */
    memd_wire_alloc_req d = raw_req(0, MEMD_CLASS_INTERNAL, MEMD_SCOPE_DRAM, 4096);
    e = memd_wire_alloc_req_put(memd_wire_alloc_req_put(memd_wire_count_put(p, 2), &d), &d);
    uint32_t blen = (uint32_t)(e - p);
    ck_assert_int_eq(exchange_op(fd, MEMD_OP_ALLOC_BATCH, 12, 0, p, blen, buf, sizeof buf, &err),
                     0);
    ck_assert_int_eq(raw_free(fd, memd_wire_u64(buf + MEMD_WIRE_COUNT_SIZE), NULL), 0);
    ck_assert_int_eq(exchange_op(fd, MEMD_OP_ALLOC_BATCH, 12, MEMD_REQ_F_RETRY, p, blen, buf,
                                 sizeof buf, &err), -EIO);
    ck_assert_uint_eq(allocations(by), 3);
    /* A single ALLOC_BANKS sent again as a retry: its buffer again, not a second one. */
    r.flags = 0;
    e = elem_put(p, &r, MEMD_BANKSET_F_PER_BANK, ids, 3);
    len = (uint32_t)(e - p);
    ck_assert_int_eq(exchange_op(fd, MEMD_OP_ALLOC_BANKS, 11, 0, p, len, buf, sizeof buf, &err), 0);
    h1[0] = memd_wire_u64(buf);
    ck_assert_int_eq(exchange_op(fd, MEMD_OP_ALLOC_BANKS, 11, MEMD_REQ_F_RETRY, p, len, buf,
                                 sizeof buf, &err), 0);
    ck_assert_uint_eq(memd_wire_u64(buf), h1[0]);
    ck_assert_uint_eq(memd_wire_u32(buf + MEMD_WIRE_BUFFER_SIZE), 3);
    ck_assert_uint_eq(allocations(by), 4);
    close(fd);

    /* The bystander still holds its buffer and can allocate. */
    memclient_alloc_info qi;
    ck_assert_int_eq(memclient_query(by, held.handle, &qi), 0);
    memclient_buffer more;
    ck_assert_int_eq(memclient_alloc(by, &br, &more), 0);
    memclient_disconnect(by);
}
END_TEST

/* A batch whose reply (every element's bank addresses) would pass MEMD_MAX_REPLY: on a
 * 65536-bank L1 group a per-bank buffer over every bank lists 2 MiB of addresses, so 31
 * of them fit in one reply and 32 do not. The caller sees -E2BIG with memd's reason, for
 * the call and the submit form; nothing was allocated (dump, region, and the state store
 * after a crash), and the same session then gets the largest batch that fits. */
static void start_many_banks(void)
{
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "devices:\n"
             "  - id: 0\n"
             "    descriptor: %s/tests/data/soc/devices/l1_65536.yaml\n",
             memd_fixture_source_root());
    memd_fixture_opts o = {.config_yaml = yaml};
    ck_assert_int_eq(memd_fixture_start(&f, &o), 0);
}

/* Device 0's allocations and the bytes its L1 region holds, from a dump. */
static void nothing_held(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_SRAM, "buffers")->stats.allocated, 0);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_SRAM, "buffers")->stats.allocations, 0);
    memclient_snapshot_free(s);
}

START_TEST(reply_too_big)
{
    enum { BANKS = 65536 };
    const uint64_t elem = MEMD_WIRE_BUFFER_SIZE + MEMD_WIRE_COUNT_SIZE +
                          (uint64_t)BANKS * MEMD_WIRE_BANK_ADDR_SIZE;
    const size_t over = (size_t)((MEMD_MAX_REPLY - MEMD_WIRE_COUNT_SIZE) / elem + 1);
    ck_assert_uint_eq(over, 32); /* the arithmetic above is the protocol's, checked once */
    ck_assert_uint_gt(MEMD_WIRE_COUNT_SIZE + over * elem, MEMD_MAX_REPLY);
    ck_assert_uint_le(MEMD_WIRE_COUNT_SIZE + (over - 1) * elem, MEMD_MAX_REPLY);
    start_many_banks();
    memclient *c = cu_connect(&f);
    memclient_alloc_req r[32];
    memclient_buffer b[32];
    for (size_t i = 0; i < over; i++) {
        r[i] = cu_sram(64);
        r[i].per_bank = 1; /* every bank of the group */
    }
    memclient_error e;
    ck_assert_int_eq(memclient_alloc_batch(c, r, over, b), -E2BIG);
    memclient_last_error(&e);
    ck_assert_int_eq(e.status, -E2BIG);
    ck_assert_msg(strstr(e.message, "ALLOC_BATCH_BANKS of 32 elements") &&
                      strstr(e.message, "would exceed 67108864 bytes") &&
                      strstr(e.message, "split the batch") &&
                      strstr(e.message, "nothing allocated"),
                  "%s", e.message);
    nothing_held(c);

    /* The submit form completes with the same error. */
    uint64_t ticket;
    ck_assert_int_eq(memclient_submit_alloc_batch(c, r, over, b, &ticket), 0);
    memclient_completion done;
    ck_assert_int_eq(memclient_complete(c, &done), 0);
    ck_assert_uint_eq(done.ticket, ticket);
    ck_assert_int_eq(done.status, -E2BIG);
    nothing_held(c);

    /* Nothing reached the state store either. */
    ck_assert_int_eq(memd_fixture_restart(&f, NULL, SIGKILL), 0);
    ck_assert_int_eq(memclient_reconnect(c, 5000), 0);
    nothing_held(c);

    /* One element fewer fits: its reply, just under the limit, comes back whole. */
    memclient_bank last[2];
    r[over - 2].bank_out = last;
    r[over - 2].nbank_out = 2;
    ck_assert_int_eq(memclient_alloc_batch(c, r, over - 1, b), 0);
    ck_assert_uint_eq(b[over - 2].bank_mode, MEMD_BANKS_PER_BANK);
    ck_assert_uint_eq(b[over - 2].banks, BANKS);
    ck_assert_uint_eq(last[1].bank, 1);
    uint64_t h[32];
    for (size_t i = 0; i + 1 < over; i++)
        h[i] = b[i].handle;
    ck_assert_int_eq(memclient_free_batch(c, h, over - 1), 0);
    nothing_held(c);
    memclient_disconnect(c);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-bank-batch");
    TCase *tc = tcase_create("bank_batch");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, mixed_batch);
    tcase_add_test(tc, last_element_cannot_fit);
    tcase_add_test(tc, random_batches_against_reference);
    tcase_add_test(tc, subdev_rules_per_element);
    tcase_add_test(tc, bad_frames_refused);
    tcase_add_test(tc, reply_too_big);
    suite_add_tcase(s, tc);
    return s;
}
