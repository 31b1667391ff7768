/* The state store without a daemon: records (codec), round trips through a real LMDB
 * file (allocations at their addresses, holders, shared names, counters), orphans and
 * reclaim, dead owners, the grace period, and every way a store is refused at start:
 * not an LMDB file, a damaged record, another device map, a locked file, another boot.
 * Plus a full store and a failing commit on the request sf_path (frames.c). */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "check_main.h"
#include "dispatch.h"
#include "frames.h"
#include "procstat.h"
#include "session.h"
#include "state.h"
#include "store.h"
#include "store_codec.h"
#include "store_fixture.h"
#include "wire_frame.h"
#include "subdev.h"
#include "test_clock.h"
#include "unit_device.h"
#include "wire.h"

#define DEV_A 7
#define DEV_B 9

/* ---- fixtures ---- */

typedef struct variant {
    uint64_t data_a, data_b;  /* KiB of each device's data region (default 896) */
    uint32_t grace_ms;
    uint64_t max_bytes;
    bool reset;
} variant;

static void setup(void)
{
    sf_setup_in("memd-store");
}

static int start_v(memd_state *st, variant v, memd_error *err)
{
    memd_device_spec specs[2];
    unit_device_spec(&specs[0], DEV_A, v.data_a ? v.data_a : 896);
    unit_device_spec(&specs[1], DEV_B, v.data_b ? v.data_b : 896);
    return sf_start(st, specs, 2, v.grace_ms,
                    (memd_store_opts){.max_bytes = v.max_bytes, .discard = v.reset}, err);
}

static void start(memd_state *st, variant v)
{
    memd_error err = {0};
    int rc = start_v(st, v, &err);
    ck_assert_msg(rc == 0, "store open failed (%d): %s", rc, err.msg);
}

static void end_session(memd_state *st, memd_session *s)
{
    memd_session_close(st, s);
    free(s);
}

static memd_wire_welcome hello(memd_state *st, memd_session *s)
{
    memd_wire_hello h = {.min_version = 1, .max_version = 1};
    memd_wire_welcome w = {0};
    memd_error err = {0};
    ck_assert_int_eq(memd_store_hello(st, s, &h, &w, &err), 0);
    sf_flush(st);
    return w;
}

static int reclaim(memd_state *st, memd_session *s, uint32_t id, const uint8_t *token,
                   memd_wire_welcome *w, memd_error *err)
{
    memd_wire_hello h = {.min_version = 1, .max_version = 1, .flags = MEMD_HELLO_F_RECLAIM,
                         .reclaim_session = id};
    memcpy(h.reclaim_token, token, MEMD_TOKEN_SIZE);
    memset(w, 0, sizeof *w);
    return memd_store_hello(st, s, &h, w, err);
}

static memd_session *find_session(memd_state *st, uint32_t id)
{
    for (memd_session *s = st->sessions; s; s = s->next)
        if (s->id == id)
            return s;
    return NULL;
}

/* A pid with no process: a child that has exited and been reaped. */
static uint32_t dead_pid(void)
{
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    ck_assert_int_gt(p, 0);
    ck_assert_int_eq(waitpid(p, NULL, 0), p);
    return (uint32_t)p;
}

/* ---- codec ---- */

START_TEST(codec_alloc_record)
{
    memd_store_alloc_rec r = {.handle = 42, .device = 7, .requested = 1000, .created_ns = 5,
                              .pid = 1, .uid = 2, .gid = 3, .session_id = 4,
                              .cls = MEMD_CLASS_CONSTANT, .scope = MEMD_SCOPE_DRAM,
                              .flags = MEMD_STORE_REC_SHARED, .nholders = 2};
    r.pl = (memd_placement){.kind = MEMD_KIND_SRAM, .region = 1, .address = 0x4000,
                            .size_per_bank = 1024, .banks = 8, .page_size = 512, .pitch = 0};
    strcpy(r.comm, "proc");
    strcpy(r.name, "weights");
    uint8_t buf[512];
    size_t n = memd_store_alloc_rec_size(&r);
    ck_assert_uint_eq(n, MEMD_STORE_ALLOC_REC_BASE + 4 + 7 + 2 * MEMD_STORE_HOLDER_SIZE);
    uint8_t *p = memd_store_alloc_rec_put(buf, &r);
    p = memd_store_holder_put(p, 4, 1, 0);
    p = memd_store_holder_put(p, 9, 3, 77);
    ck_assert_uint_eq((size_t)(p - buf), n);
    memd_store_alloc_rec_seal(buf, n);
    memd_store_alloc_rec g;
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    ck_assert_uint_eq(g.handle, 42);
    ck_assert_uint_eq(g.pl.address, 0x4000);
    ck_assert_uint_eq(g.pl.kind, MEMD_KIND_SRAM);
    ck_assert_str_eq(g.name, "weights");
    ck_assert_str_eq(g.comm, "proc");
    uint32_t sid, count;
    uint64_t req;
    memd_store_holder_at(&g, 1, &sid, &count, &req);
    ck_assert_uint_eq(sid, 9);
    ck_assert_uint_eq(count, 3);
    ck_assert_uint_eq(req, 77);
    /* Damage is reported, never trusted: every single flipped bit fails the checksum
     * (or, in the format byte, the format). */
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n - 1, &g), -EBADMSG);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, 20, &g), -EBADMSG);
    for (size_t bit = 8; bit < 8 * n; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
        ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), -EBADMSG);
        buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    /* With a good checksum, fields are still checked. */
    buf[1] = MEMD_KIND_COUNT;
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), -EINVAL);
    buf[1] = MEMD_KIND_SRAM;
    buf[0] = 99;
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), -EPROTONOSUPPORT);
    buf[0] = MEMD_STORE_FORMAT;
    memd_store_holder_put(buf + n - 16, 9, 0, 0); /* a holder with count 0 */
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), -EINVAL);
    r.nholders = 0;
    p = memd_store_alloc_rec_put(buf, &r);
    memd_store_alloc_rec_seal(buf, (size_t)(p - buf));
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, (size_t)(p - buf), &g), -EBADMSG);
}
END_TEST

/* Bank-set placements: the mode in the flags byte's bits 2-3, the set (and per bank, the
 * addresses) between the strings and the holders; lockstep records are as before. */
START_TEST(codec_alloc_record_banks)
{
    uint32_t set[] = {2, 5, 9};
    uint64_t addrs[] = {0x100, 0x200, 0x300};
    memd_store_alloc_rec r = {.handle = 7, .device = 1, .requested = 64, .pid = 1, .uid = 2,
                              .gid = 3, .session_id = 4, .cls = MEMD_CLASS_CONSTANT,
                              .scope = MEMD_SCOPE_SRAM, .flags = MEMD_STORE_REC_POOL,
                              .nholders = 1};
    r.pl = (memd_placement){.kind = MEMD_KIND_SRAM, .region = 1, .address = 0x100,
                            .size_per_bank = 64, .banks = 3, .page_size = 64,
                            .mode = MEMD_BANKS_PER_BANK, .nset = 3, .set = set, .addrs = addrs};
    uint8_t buf[512];
    size_t n = memd_store_alloc_rec_size(&r);
    ck_assert_uint_eq(n, MEMD_STORE_ALLOC_REC_BASE + 4 + 12 + 24 + MEMD_STORE_HOLDER_SIZE);
    uint8_t *p = memd_store_holder_put(memd_store_alloc_rec_put(buf, &r), 4, 1, 55);
    ck_assert_uint_eq((size_t)(p - buf), n);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_uint_eq(buf[5], MEMD_STORE_REC_POOL | MEMD_BANKS_PER_BANK << 2);
    size_t len;
    ck_assert_int_eq(memd_store_alloc_rec_len(buf, n, &len), 0);
    ck_assert_uint_eq(len, n);
    memd_store_alloc_rec g;
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    ck_assert_uint_eq(g.flags, MEMD_STORE_REC_POOL); /* the mode is not a flag */
    memd_placement pl;
    ck_assert_int_eq(memd_store_rec_placement(&g, &pl), 0);
    ck_assert_int_eq(pl.mode, MEMD_BANKS_PER_BANK);
    ck_assert_uint_eq(pl.nset, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(pl.set[i], set[i]);
        ck_assert_uint_eq(pl.addrs[i], addrs[i]);
    }
    memd_placement_fini(&pl);
    uint32_t sid, count;
    uint64_t req;
    memd_store_holder_at(&g, 0, &sid, &count, &req);
    ck_assert_uint_eq(sid, 4);
    ck_assert_uint_eq(req, 55);
    /* Per-core shard sizes: flags bit 4 and a u64 per piece after the addresses. */
    uint64_t sizes[] = {32, 64, 96};
    r.pl.sizes = sizes;
    r.pl.size_per_bank = 96;
    n = memd_store_alloc_rec_size(&r);
    ck_assert_uint_eq(n, MEMD_STORE_ALLOC_REC_BASE + 4 + 12 + 24 + 24 + MEMD_STORE_HOLDER_SIZE);
    memd_store_holder_put(memd_store_alloc_rec_put(buf, &r), 4, 1, 55);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_uint_eq(buf[5], MEMD_STORE_REC_POOL | MEMD_BANKS_PER_BANK << 2 | MEMD_STORE_REC_SIZES);
    ck_assert_int_eq(memd_store_alloc_rec_len(buf, n, &len), 0);
    ck_assert_uint_eq(len, n);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    ck_assert_uint_eq(g.flags, MEMD_STORE_REC_POOL);
    ck_assert_int_eq(memd_store_rec_placement(&g, &pl), 0);
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(pl.addrs[i], addrs[i]);
        ck_assert_uint_eq(pl.sizes[i], sizes[i]);
    }
    memd_placement_fini(&pl);
    /* Sizes on a range placement are damage. */
    buf[5] = (uint8_t)(MEMD_STORE_REC_POOL | MEMD_BANKS_RANGE << 2 | MEMD_STORE_REC_SIZES);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_ne(memd_store_alloc_rec_get(buf, n, &g), 0);
    r.pl.sizes = NULL;
    r.pl.size_per_bank = 64;
    /* Range lockstep: ids only. */
    r.pl.mode = MEMD_BANKS_RANGE;
    r.pl.addrs = NULL;
    n = memd_store_alloc_rec_size(&r);
    ck_assert_uint_eq(n, MEMD_STORE_ALLOC_REC_BASE + 4 + 12 + MEMD_STORE_HOLDER_SIZE);
    memd_store_holder_put(memd_store_alloc_rec_put(buf, &r), 4, 1, 0);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    ck_assert_int_eq(g.pl.mode, MEMD_BANKS_RANGE);
    /* Range lockstep (the last value of the 2-bit mode field): the same layout. */
    buf[5] = (uint8_t)(MEMD_STORE_REC_POOL | MEMD_BANKS_RANGE_LOCKSTEP << 2);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    ck_assert_int_eq(g.pl.mode, MEMD_BANKS_RANGE_LOCKSTEP);
    ck_assert_int_eq(memd_store_alloc_rec_len(buf, n, &len), 0);
    /* Damage (resealed, so the fields themselves are checked): a set size that disagrees
     * with banks, a cut record. */
    memd_wire_put_u32(buf + MEMD_STORE_ALLOC_REC_BASE, 2);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_ne(memd_store_alloc_rec_get(buf, n, &g), 0);
    memd_wire_put_u32(buf + MEMD_STORE_ALLOC_REC_BASE, 3);
    buf[5] = (uint8_t)(MEMD_STORE_REC_POOL | MEMD_BANKS_RANGE << 2);
    memd_store_alloc_rec_seal(buf, n);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n, &g), 0);
    ck_assert_int_eq(memd_store_alloc_rec_get(buf, n - 9, &g), -EBADMSG);
    /* Lockstep: no mode bits, nothing between the strings and the holders. */
    r.pl.mode = MEMD_BANKS_ALL;
    r.pl.nset = 0;
    r.pl.set = NULL;
    n = memd_store_alloc_rec_size(&r);
    ck_assert_uint_eq(n, MEMD_STORE_ALLOC_REC_BASE + MEMD_STORE_HOLDER_SIZE);
    memd_store_holder_put(memd_store_alloc_rec_put(buf, &r), 4, 1, 0);
    ck_assert_uint_eq(buf[5], MEMD_STORE_REC_POOL);
}
END_TEST

/* A sub-device defined by request, as core keeps it in the store (subdev_record.c):
 * name, group, device, budget, overlap names, banks, window (version 2; version 1, of a
 * memd before windows, reads as no window); the envelope (store_object.c) carries its
 * checksum. */
START_TEST(codec_subdev_record)
{
    uint32_t banks[] = {3, 4, 9};
    memd_subdev_spec sd = {.name = "mid", .device = 7, .kind = MEMD_KIND_SRAM, .nbanks = 3,
                           .banks = banks, .budget = 65536, .window = 3200, .noverlap = 2};
    strcpy(sd.overlap[0], "left");
    strcpy(sd.overlap[1], "right");
    sd.nusers = 1; /* never stored: only the config binds by credentials */
    size_t n;
    uint8_t *buf = memd_subdev_record_encode(&sd, &n);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(n, 84 + 2 * MEMD_NAME_MAX + 12 + 8);
    memd_subdev_spec g;
    ck_assert_int_eq(memd_subdev_record_decode(buf, n - 8, 1, &g), 0);
    ck_assert_uint_eq(g.window, 0);
    ck_assert_uint_eq(g.banks[2], 9);
    memd_subdev_spec_free(&g);
    ck_assert_int_eq(memd_subdev_record_decode(buf, n, 1, &g), -EBADMSG);
    ck_assert_int_eq(memd_subdev_record_decode(buf, n, 2, &g), 0);
    ck_assert_uint_eq(g.window, 3200);
    ck_assert_str_eq(g.name, "mid");
    ck_assert_uint_eq(g.device, 7);
    ck_assert_int_eq(g.kind, MEMD_KIND_SRAM);
    ck_assert_uint_eq(g.budget, 65536);
    ck_assert_uint_eq(g.noverlap, 2);
    ck_assert_str_eq(g.overlap[1], "right");
    ck_assert_uint_eq(g.nbanks, 3);
    ck_assert_uint_eq(g.banks[2], 9);
    ck_assert_uint_eq(g.nusers, 0);
    memd_subdev_spec_free(&g);
    ck_assert_int_eq(memd_subdev_record_decode(buf, n - 4, 2, &g), -EBADMSG);
    free(buf);
    banks[1] = 2; /* not increasing */
    buf = memd_subdev_record_encode(&sd, &n);
    ck_assert_int_eq(memd_subdev_record_decode(buf, n, 2, &g), -EINVAL);
    free(buf);
    banks[1] = 4;
    sd.name[0] = '\0'; /* no name */
    buf = memd_subdev_record_encode(&sd, &n);
    ck_assert_int_eq(memd_subdev_record_decode(buf, n, 2, &g), -EINVAL);
    free(buf);
}
END_TEST

START_TEST(codec_session_and_meta)
{
    memd_store_sess_rec s = {.id = 3, .pid = 77, .uid = 1000, .gid = 100, .starttime = 12345,
                             .connected_ns = 9};
    memset(s.token, 0xab, sizeof s.token);
    strcpy(s.comm, "client");
    strcpy(s.client_name, "runtime");
    uint8_t buf[MEMD_STORE_SESS_REC_SIZE];
    memd_store_sess_rec_put(buf, &s);
    memd_store_sess_rec g;
    ck_assert_int_eq(memd_store_sess_rec_get(buf, sizeof buf, &g), 0);
    ck_assert_uint_eq(g.starttime, 12345);
    ck_assert_mem_eq(g.token, s.token, MEMD_TOKEN_SIZE);
    ck_assert_str_eq(g.client_name, "runtime");
    ck_assert_int_eq(memd_store_sess_rec_get(buf, sizeof buf - 1, &g), -EBADMSG);
    for (size_t bit = 8; bit < 8 * sizeof buf; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
        ck_assert_int_eq(memd_store_sess_rec_get(buf, sizeof buf, &g), -EBADMSG);
        buf[bit / 8] ^= (uint8_t)(1u << bit % 8);
    }
    memset(buf + 56, 'x', 16); /* comm without NUL, under a good checksum */
    memd_wire_put_u32(buf + 20, memd_store_sum(buf, sizeof buf, 20));
    ck_assert_int_eq(memd_store_sess_rec_get(buf, sizeof buf, &g), -EINVAL);

    memd_store_dev_fp devs[2] = {{7, 0x1111}, {9, 0x2222}};
    memd_store_meta m = {.handle_hwm = 5000, .session_hwm = 300, .ndevs = 2};
    strcpy(m.boot_id, "boot");
    uint8_t mb[MEMD_STORE_META_BASE + 2 * MEMD_STORE_DEV_FP_SIZE + 4];
    ck_assert_uint_eq(memd_store_meta_size(2), sizeof mb);
    ck_assert_ptr_eq(memd_store_meta_put(mb, &m, devs), mb + sizeof mb);
    memd_store_meta gm;
    ck_assert_int_eq(memd_store_meta_get(mb, sizeof mb, &gm), 0);
    ck_assert_uint_eq(gm.handle_hwm, 5000);
    ck_assert_uint_eq(memd_store_meta_dev(&gm, 1).fingerprint, 0x2222);
    ck_assert_int_eq(memd_store_meta_get(mb, sizeof mb - 1, &gm), -EBADMSG);
    /* A flipped boot id is damage, not another boot. */
    mb[24] ^= 1;
    ck_assert_int_eq(memd_store_meta_get(mb, sizeof mb, &gm), -EBADMSG);
    mb[24] ^= 1;
    mb[0] ^= 1;
    ck_assert_int_eq(memd_store_meta_get(mb, sizeof mb, &gm), -EBADMSG);
}
END_TEST

START_TEST(fingerprint_follows_the_memory_map)
{
    memd_device_spec a, b;
    unit_device_spec(&a, 7, 896);
    unit_device_spec(&b, 7, 896);
    ck_assert_uint_eq(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    strcpy(b.name, "renamed"); /* names and policy do not move placements */
    b.policy[MEMD_KIND_DRAM][MEMD_CLASS_CONSTANT].dir = MEMD_DIR_TOP_DOWN;
    ck_assert_uint_eq(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    b.groups[MEMD_KIND_DRAM].regions[1].size -= 32;
    ck_assert_uint_ne(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    unit_device_spec(&b, 7, 896);
    b.groups[MEMD_KIND_SRAM].banks = 7;
    ck_assert_uint_ne(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    /* Bank ids' cores (a tt-metal remap) and bank offsets count too. */
    unit_device_spec(&b, 7, 896);
    memd_bank_core ca[8], cb[8];
    int64_t off[8] = {0};
    for (uint16_t i = 0; i < 8; i++)
        ca[i] = cb[i] = (memd_bank_core){i, 0, (uint16_t)(i + 1), 1};
    a.groups[MEMD_KIND_SRAM].cores = ca;
    b.groups[MEMD_KIND_SRAM].cores = cb;
    ck_assert_uint_eq(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    cb[2] = ca[5];
    cb[5] = ca[2]; /* banks 2 and 5 swapped */
    ck_assert_uint_ne(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    cb[2] = ca[2];
    cb[5] = ca[5];
    a.groups[MEMD_KIND_SRAM].bank_offsets = off;
    ck_assert_uint_ne(memd_store_device_fingerprint(&a), memd_store_device_fingerprint(&b));
    a.groups[MEMD_KIND_SRAM].cores = b.groups[MEMD_KIND_SRAM].cores = NULL;
    a.groups[MEMD_KIND_SRAM].bank_offsets = NULL;
}
END_TEST

START_TEST(proc_stat_parsing)
{
    uint64_t t = 0;
    const char *ok = "123 (a) b) c) S 1 1 1 0 -1 4194560 10 0 0 0 0 0 0 0 20 0 1 0 987654 "
                     "1000 10 18446744073709551615\n";
    ck_assert_int_eq(memd_proc_parse_stat(ok, strlen(ok), &t), 0);
    ck_assert_uint_eq(t, 987654);
    const char *zombie = "9 (z) Z 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0\n";
    ck_assert_int_eq(memd_proc_parse_stat(zombie, strlen(zombie), &t), -ENOENT);
    const char *cut = "9 (z) S 1 1 1";
    ck_assert_int_eq(memd_proc_parse_stat(cut, strlen(cut), &t), -EINVAL);
    ck_assert_int_eq(memd_proc_parse_stat("garbage", 7, &t), -EINVAL);
    /* This process exists and keeps its start time; a reaped child does not exist. */
    uint64_t a, b;
    ck_assert_int_eq(memd_proc_starttime((uint32_t)getpid(), &a), 0);
    ck_assert_int_eq(memd_proc_starttime((uint32_t)getpid(), &b), 0);
    ck_assert_uint_eq(a, b);
    ck_assert_int_eq(memd_proc_starttime(dead_pid(), &a), -ENOENT);
}
END_TEST

/* ---- round trips ---- */

START_TEST(round_trip_keeps_the_map)
{
    memd_state st;
    start(&st, (variant){0});
    uint32_t me = (uint32_t)getpid(), uid = (uint32_t)getuid();
    memd_session *a = sf_session(&st, me, uid), *b = sf_session(&st, me, uid);
    memd_wire_welcome wa = hello(&st, a);
    ck_assert(wa.flags & MEMD_WELCOME_F_PERSISTENT);
    uint64_t h1 = sf_alloc(&st, a, DEV_A, MEMD_CLASS_CONSTANT, 3000, NULL)->handle;
    uint64_t h2 = sf_alloc(&st, a, DEV_A, MEMD_CLASS_PLACEHOLDER, 5000, NULL)->handle;
    uint64_t hgone = sf_alloc(&st, a, DEV_B, MEMD_CLASS_CONSTANT, 100, NULL)->handle;
    memd_alloc *sh = sf_alloc(&st, a, DEV_B, MEMD_CLASS_CONSTANT, 4096, "weights");
    ck_assert_ptr_eq(sf_alloc(&st, b, DEV_B, MEMD_CLASS_CONSTANT, 4096, "weights"), sh);
    ck_assert_ptr_eq(sf_alloc(&st, b, DEV_B, MEMD_CLASS_CONSTANT, 4096, "weights"), sh);
    memd_hold_release(&st, memd_alloc_hold_of(memd_alloc_find(&st, hgone), a));
    sf_flush(&st);
    uint64_t sh_handle = sh->handle, sh_addr = sh->pl.address;
    memd_alloc_pl p1 = memd_alloc_find(&st, h1)->pl, p2 = memd_alloc_find(&st, h2)->pl;
    uint32_t ida = a->id, idb = b->id;
    uint64_t next = st.next_handle;
    sf_stop(&st);
    free(a);
    free(b);

    start(&st, (variant){0});
    ck_assert_ptr_null(memd_alloc_find(&st, hgone));
    memd_alloc *r1 = memd_alloc_find(&st, h1), *r2 = memd_alloc_find(&st, h2);
    ck_assert_ptr_nonnull(r1);
    ck_assert_ptr_nonnull(r2);
    ck_assert_uint_eq(r1->pl.address, p1.address);
    ck_assert_uint_eq(r1->pl.size_per_bank, p1.size_per_bank);
    ck_assert_uint_eq(r2->pl.address, p2.address);
    ck_assert_uint_eq(r1->cls, MEMD_CLASS_CONSTANT);
    memd_alloc *rs = memd_names_find(&st.names, 1, (uint32_t)getuid(), "weights");
    ck_assert_ptr_nonnull(rs);
    ck_assert_uint_eq(rs->handle, sh_handle);
    ck_assert_uint_eq(rs->pl.address, sh_addr);
    ck_assert_uint_eq(rs->refcount, 3); /* a once, b twice */
    /* Both sessions came back as orphans. */
    memd_session *oa = find_session(&st, ida), *ob = find_session(&st, idb);
    ck_assert_ptr_nonnull(oa);
    ck_assert_ptr_nonnull(ob);
    uint64_t deadline;
    ck_assert_uint_eq(memd_store_session_flags(&st, oa, &deadline), MEMD_SESSION_F_ORPHANED);
    ck_assert_uint_gt(deadline, memd_now_ns());
    ck_assert_uint_eq(oa->nholds, 3);
    ck_assert_uint_eq(ob->nholds, 2);
    /* Counters continue: no handle or session id is given out twice. */
    ck_assert_uint_ge(st.next_handle, next);
    memd_session *c = sf_session(&st, me, uid);
    ck_assert_uint_gt(c->id, idb);
    memd_alloc *n = sf_alloc(&st, c, DEV_A, MEMD_CLASS_CONSTANT, 3000, NULL);
    uint64_t hn = n->handle;
    ck_assert_uint_gt(hn, h2);
    ck_assert(n->pl.address >= p1.address + p1.size_per_bank ||
              n->pl.address + n->pl.size_per_bank <= p1.address);

    /* Reclaim: wrong token, wrong uid, unknown id, then the real thing. */
    memd_wire_welcome w;
    memd_error err = {0};
    uint8_t bad[MEMD_TOKEN_SIZE];
    memcpy(bad, wa.token, sizeof bad);
    bad[0] ^= 1;
    memd_session *d = sf_session(&st, me, uid);
    ck_assert_int_eq(reclaim(&st, d, ida, bad, &w, &err), -EACCES);
    memd_session *other = sf_session(&st, me, uid + 1);
    ck_assert_int_eq(reclaim(&st, other, ida, wa.token, &w, &err), -EACCES);
    ck_assert_int_eq(reclaim(&st, d, 999999, wa.token, &w, &err), -ESTALE);
    ck_assert_int_eq(reclaim(&st, c, ida, wa.token, &w, &err), -EISCONN); /* c holds one */
    ck_assert_int_eq(reclaim(&st, d, ida, wa.token, &w, &err), 0);
    ck_assert_uint_eq(w.session_id, ida);
    ck_assert(w.flags & MEMD_WELCOME_F_RECLAIMED);
    ck_assert_uint_eq(w.reclaimed, 3);
    ck_assert_mem_eq(w.token, wa.token, MEMD_TOKEN_SIZE);
    ck_assert_uint_eq(d->id, ida);
    ck_assert_ptr_eq(find_session(&st, ida), d); /* the orphan object is gone */
    ck_assert_uint_eq(memd_store_session_flags(&st, d, &deadline), 0);
    ck_assert_ptr_nonnull(memd_alloc_hold_of(r1, d));
    /* Taken already: a second reclaim finds a connected session. */
    memd_session *e = sf_session(&st, me, uid);
    ck_assert_int_eq(reclaim(&st, e, ida, wa.token, &w, &err), -EBUSY);
    /* Another uid, or a wrong token, is not told that (issue 27). */
    ck_assert_int_eq(reclaim(&st, other, ida, wa.token, &w, &err), -EACCES);
    ck_assert_ptr_null(strstr(err.msg, "connected"));
    ck_assert_int_eq(reclaim(&st, e, ida, bad, &w, &err), -EACCES);
    ck_assert_ptr_null(strstr(err.msg, "connected"));
    sf_flush(&st);
    /* The reclaimed session frees as its own. */
    memd_hold_release(&st, memd_alloc_hold_of(r1, d));
    ck_assert_ptr_null(memd_alloc_find(&st, h1));
    sf_flush(&st);
    end_session(&st, other);
    end_session(&st, e);
    end_session(&st, c); /* a live session's close is recorded */
    sf_stop(&st);
    free(d);

    /* Third start: d's remaining holds (h2, one on weights) and b's orphan are there,
     * c's allocation went with c. */
    start(&st, (variant){0});
    ck_assert_ptr_null(memd_alloc_find(&st, h1));
    ck_assert_ptr_nonnull(memd_alloc_find(&st, h2));
    ck_assert_ptr_null(memd_alloc_find(&st, hn));
    ck_assert_uint_eq(memd_names_find(&st.names, 1, (uint32_t)getuid(), "weights")->refcount, 3);
    sf_stop(&st);
}
END_TEST

START_TEST(dead_owner_released_at_start)
{
    memd_state st;
    start(&st, (variant){0});
    memd_session *live = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    memd_session *dead = sf_session(&st, dead_pid(), (uint32_t)getuid());
    uint64_t hl = sf_alloc(&st, live, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL)->handle;
    uint64_t hd = sf_alloc(&st, dead, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL)->handle;
    memd_alloc *sh = sf_alloc(&st, dead, DEV_A, MEMD_CLASS_CONSTANT, 64, "both");
    sf_alloc(&st, live, DEV_A, MEMD_CLASS_CONSTANT, 64, "both");
    uint64_t hs = sh->handle;
    uint32_t dead_id = dead->id;
    sf_flush(&st);
    sf_stop(&st);
    free(live);
    free(dead);

    start(&st, (variant){0});
    ck_assert_ptr_nonnull(memd_alloc_find(&st, hl));
    ck_assert_ptr_null(memd_alloc_find(&st, hd)); /* its process is gone */
    ck_assert_ptr_null(find_session(&st, dead_id));
    memd_alloc *s = memd_alloc_find(&st, hs); /* shared: only the dead holder's share goes */
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->refcount, 1);
    sf_stop(&st);
    /* And the release was recorded: the next start does not see it either. */
    start(&st, (variant){0});
    ck_assert_ptr_null(memd_alloc_find(&st, hd));
    ck_assert_uint_eq(memd_alloc_find(&st, hs)->refcount, 1);
    sf_stop(&st);
}
END_TEST

START_TEST(grace_period_expires)
{
    memd_state st;
    variant v = {.grace_ms = 100};
    start(&st, v);
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    uint64_t h = sf_alloc(&st, s, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL)->handle;
    sf_flush(&st);
    sf_stop(&st);
    free(s);

    start(&st, v);
    ck_assert_ptr_nonnull(memd_alloc_find(&st, h));
    ck_assert_uint_eq(memd_store_tick(&st), 1); /* within the grace period: kept */
    ck_assert_ptr_nonnull(memd_alloc_find(&st, h));
    memd_test_sleep_ms(150);
    ck_assert_uint_eq(memd_store_tick(&st), 0);
    ck_assert_ptr_null(memd_alloc_find(&st, h));
    memd_range_stats rs; /* and its memory went back to the engine */
    ck_assert_int_eq(memd_device_group_stats(st.devs[0].dev, MEMD_KIND_DRAM, &rs), 0);
    ck_assert_uint_eq(rs.allocated, 0);
    sf_stop(&st);
    start(&st, v);
    ck_assert_ptr_null(memd_alloc_find(&st, h));
    sf_stop(&st);
}
END_TEST

START_TEST(stop_keeps_sessions_that_shutdown_closes)
{
    /* What SIGTERM does: memd_store_stopping, then the connections close. */
    memd_state st;
    start(&st, (variant){0});
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    uint64_t h = sf_alloc(&st, s, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL)->handle;
    sf_flush(&st);
    memd_store_stopping(&st);
    end_session(&st, s);
    sf_stop(&st);
    start(&st, (variant){0});
    ck_assert_ptr_nonnull(memd_alloc_find(&st, h));
    sf_stop(&st);
}
END_TEST

/* ---- refusals ---- */

static void write_file(const char *p, const void *data, size_t n)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, data, n), (ssize_t)n);
    close(fd);
}

START_TEST(not_an_lmdb_file)
{
    char junk[8192];
    memset(junk, 'j', sizeof junk);
    write_file(sf_path, junk, sizeof junk);
    memd_state st;
    memd_error err = {0};
    ck_assert_int_lt(start_v(&st, (variant){0}, &err), 0);
    ck_assert_ptr_null(st.store);
    ck_assert_msg(strstr(err.msg, sf_path) && strstr(err.msg, "not an LMDB file") &&
                      strstr(err.msg, "--discard-state"),
                  "%s", err.msg);
    memd_state_fini(&st);
    /* The way out: --discard-state. */
    start(&st, (variant){.reset = true});
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    sf_alloc(&st, s, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL);
    sf_flush(&st);
    sf_stop(&st);
    free(s);
}
END_TEST

/* Puts raw bytes under a key of one table. */
static void poke(const char *table, const void *key, size_t klen, const void *val, size_t vlen)
{
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = sf_raw_open(table, &txn, &dbi);
    MDB_val k = {klen, (void *)key}, v = {vlen, (void *)val};
    ck_assert_int_eq(mdb_put(txn, dbi, &k, &v, 0), 0);
    sf_raw_close(env, txn);
}

static uint64_t one_allocation(void)
{
    memd_state st;
    start(&st, (variant){0});
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    uint64_t h = sf_alloc(&st, s, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL)->handle;
    sf_flush(&st);
    sf_stop(&st);
    free(s);
    return h;
}

START_TEST(empty_file_is_damage_not_new)
{
    one_allocation();
    int fd = open(sf_path, O_WRONLY | O_TRUNC);
    ck_assert_int_ge(fd, 0);
    close(fd);
    memd_state st;
    memd_error err = {0};
    ck_assert_int_lt(start_v(&st, (variant){0}, &err), 0);
    ck_assert_msg(strstr(err.msg, sf_path) && strstr(err.msg, "empty (0 bytes)") &&
                      strstr(err.msg, "--discard-state"),
                  "%s", err.msg);
    memd_state_fini(&st);
    /* Refused, the file is as it was: still refused. */
    ck_assert_int_lt(start_v(&st, (variant){0}, &err), 0);
    memd_state_fini(&st);
    /* --discard-state keeps the old file aside and starts empty. */
    start(&st, (variant){.reset = true});
    ck_assert_uint_eq(st.handles.len, 0);
    sf_stop(&st);
    char aside[600];
    snprintf(aside, sizeof aside, "%s.discarded", sf_path);
    struct stat sb;
    ck_assert_int_eq(stat(aside, &sb), 0);
    ck_assert_int_eq(sb.st_size, 0);
    unlink(aside);
}
END_TEST

START_TEST(damaged_record_refused)
{
    uint64_t h = one_allocation();
    uint8_t k[8];
    memd_store_key_u64(k, h);
    poke("allocations", k, sizeof k, "short", 5);
    memd_state st;
    memd_error err = {0};
    ck_assert_int_lt(start_v(&st, (variant){0}, &err), 0);
    ck_assert_msg(strstr(err.msg, sf_path) && strstr(err.msg, "damaged"), "%s", err.msg);
    ck_assert_ptr_null(st.store);
    ck_assert_ptr_null(st.sessions); /* the orphans restored before the damage are gone */
    memd_state_fini(&st);
}
END_TEST

START_TEST(overlap_refused)
{
    /* A second record at the same place: the map in the store is inconsistent. */
    memd_state st;
    start(&st, (variant){0});
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    memd_alloc *a = sf_alloc(&st, s, DEV_A, MEMD_CLASS_CONSTANT, 1000, NULL);
    sf_flush(&st);
    memd_store_alloc_rec r = {.handle = a->handle + 100, .device = DEV_A,
                              .cls = a->cls, .scope = a->scope, .nholders = 1};
    memd_alloc_placement(a, &r.pl);
    uint8_t rec[256], k[8];
    uint8_t *p = memd_store_alloc_rec_put(rec, &r);
    p = memd_store_holder_put(p, s->id, 1, 0);
    memd_store_alloc_rec_seal(rec, (size_t)(p - rec));
    sf_stop(&st);
    free(s);
    memd_store_key_u64(k, r.handle);
    poke("allocations", k, sizeof k, rec, (size_t)(p - rec));
    memd_error err = {0};
    ck_assert_int_lt(start_v(&st, (variant){0}, &err), 0);
    ck_assert_msg(strstr(err.msg, "overlaps another one"), "%s", err.msg);
    memd_state_fini(&st);
}
END_TEST

START_TEST(changed_device_map_refused)
{
    one_allocation(); /* on device A */
    memd_state st;
    memd_error err = {0};
    /* B changed, and B holds nothing: fine. */
    start(&st, (variant){.data_b = 512});
    sf_stop(&st);
    /* A changed under its allocation: refused, naming the device and the way out. */
    ck_assert_int_lt(start_v(&st, (variant){.data_a = 512}, &err), 0);
    ck_assert_msg(strstr(err.msg, sf_path) && strstr(err.msg, "device 7 (dev7)") &&
                      strstr(err.msg, "another memory map") && strstr(err.msg, "--discard-state"),
                  "%s", err.msg);
    memd_state_fini(&st);
    /* The old config still applies. */
    start(&st, (variant){0});
    ck_assert_uint_eq(st.handles.len, 1);
    sf_stop(&st);
}
END_TEST

START_TEST(locked_by_another_memd)
{
    memd_state a, b;
    start(&a, (variant){0});
    memd_error err = {0};
    ck_assert_int_eq(start_v(&b, (variant){0}, &err), -EBUSY);
    ck_assert_msg(strstr(err.msg, "in use by another memd"), "%s", err.msg);
    memd_state_fini(&b);
    sf_stop(&a);
    start(&b, (variant){0}); /* the lock went with the first */
    sf_stop(&b);
}
END_TEST

START_TEST(store_of_another_boot_discarded)
{
    one_allocation();
    /* Rewrite the meta record with another boot id. */
    MDB_txn *txn;
    MDB_dbi dbi;
    MDB_env *env = sf_raw_open("meta", &txn, &dbi);
    MDB_val k = {4, "meta"}, v;
    ck_assert_int_eq(mdb_get(txn, dbi, &k, &v), 0);
    uint8_t meta[1024];
    ck_assert_uint_le(v.mv_size, sizeof meta);
    memd_store_meta m;
    ck_assert_int_eq(memd_store_meta_get(v.mv_data, v.mv_size, &m), 0);
    memd_store_dev_fp fps[4];
    ck_assert_uint_le(m.ndevs, 4);
    for (uint32_t i = 0; i < m.ndevs; i++)
        fps[i] = memd_store_meta_dev(&m, i);
    strcpy(m.boot_id, "an-earlier-boot"); /* a whole meta record, checksum and all */
    memd_store_meta_put(meta, &m, fps);
    MDB_val nv = {v.mv_size, meta};
    ck_assert_int_eq(mdb_put(txn, dbi, &k, &nv, 0), 0);
    sf_raw_close(env, txn);

    memd_state st;
    start(&st, (variant){0});
    ck_assert_uint_eq(st.handles.len, 0);
    ck_assert_ptr_null(st.sessions);
    sf_stop(&st);
}
END_TEST

/* ---- full store, failing commits ---- */

START_TEST(full_store_refuses_allocations)
{
    memd_state st;
    variant v = {.max_bytes = 1u << 20};
    start(&st, v);
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    memd_alloc_request r = {.device = DEV_A, .cls = MEMD_CLASS_CONSTANT,
                            .scope = MEMD_SCOPE_DRAM, .bytes = 32, .name = ""};
    memd_error err = {0};
    memd_alloc *a;
    int rc = 0, n = 0;
    uint64_t *handles = calloc(30000, sizeof *handles);
    while (n < 30000 && (rc = memd_alloc_create(&st, s, &r, &a, &err)) == 0) {
        handles[n++] = a->handle;
        sf_flush(&st);
    }
    ck_assert_int_eq(rc, -EIO);
    ck_assert_msg(strstr(err.msg, "state store is full"), "%s", err.msg);
    ck_assert_int_gt(n, 100);
    /* Releases still go in, and make room again. */
    for (int i = 0; i < n / 2; i++)
        memd_hold_release(&st, memd_alloc_hold_of(memd_alloc_find(&st, handles[i]), s));
    sf_flush(&st);
    ck_assert_int_eq(memd_alloc_create(&st, s, &r, &a, &err), 0);
    sf_flush(&st);
    uint64_t kept = st.handles.len;
    sf_stop(&st);
    free(s);
    free(handles);
    start(&st, v);
    ck_assert_uint_eq(st.handles.len, kept);
    sf_stop(&st);
}
END_TEST

START_TEST(failed_commit_answers_eio_and_closes)
{
    memd_state st;
    start(&st, (variant){0});
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    memd_wire_alloc_req r = {.device = DEV_A, .cls = MEMD_CLASS_CONSTANT,
                             .scope = MEMD_SCOPE_DRAM, .bytes = 4096};
    uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE], in[4 * (MEMD_HDR_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE)];
    memd_wire_alloc_req_put(p, &r);
    memd_buf out = {0};
    size_t used, n;

    /* Works while the disk does. */
    n = frame(in, MEMD_OP_ALLOC, 1, p, sizeof p);
    ck_assert_int_eq(memd_frames_process(&st, s, in, n, &out, SIZE_MAX, &used), 0);
    memd_wire_hdr h;
    ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &h), 0);
    ck_assert_int_eq(h.status, 0);
    out.len = out.off = 0;

    /* Two ALLOCs in one read while commits fail: both replies -EIO, and the connection
     * is to be closed. */
    write_file(sf_fail, "x", 1);
    n = frame(in, MEMD_OP_ALLOC, 2, p, sizeof p);
    n += frame(in + n, MEMD_OP_ALLOC, 3, p, sizeof p);
    ck_assert_int_eq(memd_frames_process(&st, s, in, n, &out, SIZE_MAX, &used), MEMD_CLOSE);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_eq(out.len, 2 * (MEMD_HDR_SIZE + MEMD_WIRE_ERROR_V1_SIZE)); /* the closing session's: short */
    for (int i = 0; i < 2; i++) {
        const uint8_t *q = out.data + i * (MEMD_HDR_SIZE + MEMD_WIRE_ERROR_V1_SIZE);
        ck_assert_int_eq(memd_wire_hdr_get(q, MEMD_HDR_SIZE, MEMD_MAX_REPLY, &h), 0);
        ck_assert_int_eq(h.status, -EIO);
        ck_assert_uint_eq(h.id, (uint64_t)(2 + i));
        memd_wire_error e;
        ck_assert_int_eq(memd_wire_error_get_any(q + MEMD_HDR_SIZE, MEMD_WIRE_ERROR_V1_SIZE, &e), 0);
        ck_assert_msg(strstr(e.message, "not recorded"), "%s", e.message);
    }
    /* The connection closes: the session's memory goes. Recording that fails too, but
     * memory and store stay consistent: the next good flush writes it all. */
    end_session(&st, s);
    ck_assert_uint_eq(st.handles.len, 0);
    unlink(sf_fail);
    memd_store_tick(&st); /* retries */
    sf_stop(&st);
    start(&st, (variant){0});
    ck_assert_uint_eq(st.handles.len, 0);
    ck_assert_ptr_null(st.sessions);
    sf_stop(&st);
    memd_buf_free(&out);
}
END_TEST

/* The commit is refused after a read-only frame and two changes: the read-only reply
 * stands as it was, only the replies from the first change on become -EIO errors. */
START_TEST(failed_commit_keeps_replies_before_the_first_change)
{
    memd_state st;
    start(&st, (variant){0});
    memd_session *s = sf_session(&st, (uint32_t)getpid(), (uint32_t)getuid());
    memd_alloc *kept = sf_alloc(&st, s, DEV_A, MEMD_CLASS_CONSTANT, 4096, NULL);
    sf_flush(&st);
    memd_wire_alloc_req r = {.device = DEV_A, .cls = MEMD_CLASS_CONSTANT,
                             .scope = MEMD_SCOPE_DRAM, .bytes = 4096};
    uint8_t p[MEMD_WIRE_ALLOC_REQ_SIZE], q[8], in[3 * (MEMD_HDR_SIZE + sizeof p)];
    memd_wire_alloc_req_put(p, &r);
    memd_wire_put_u64(q, kept->handle);
    size_t n = frame(in, MEMD_OP_QUERY, 1, q, sizeof q);
    n += frame(in + n, MEMD_OP_ALLOC, 2, p, sizeof p);
    n += frame(in + n, MEMD_OP_ALLOC, 3, p, sizeof p);
    memd_buf out = {0}, good = {0};
    size_t used;
    ck_assert_int_eq(memd_frames_process(&st, s, in, MEMD_HDR_SIZE + sizeof q, &good,
                                         SIZE_MAX, &used), 0);
    write_file(sf_fail, "x", 1);
    ck_assert_int_eq(memd_frames_process(&st, s, in, n, &out, SIZE_MAX, &used), MEMD_CLOSE);
    ck_assert_uint_eq(used, n);
    ck_assert_uint_eq(out.len, good.len + 2 * (MEMD_HDR_SIZE + MEMD_WIRE_ERROR_V1_SIZE));
    ck_assert_mem_eq(out.data, good.data, good.len);
    memd_wire_hdr h;
    for (int i = 0; i < 2; i++) {
        const uint8_t *e = out.data + good.len + i * (MEMD_HDR_SIZE + MEMD_WIRE_ERROR_V1_SIZE);
        ck_assert_int_eq(memd_wire_hdr_get(e, MEMD_HDR_SIZE, MEMD_MAX_REPLY, &h), 0);
        ck_assert_int_eq(h.status, -EIO);
        ck_assert_uint_eq(h.opcode, MEMD_OP_ALLOC);
        ck_assert_uint_eq(h.id, (uint64_t)(2 + i));
    }
    end_session(&st, s);
    unlink(sf_fail);
    sf_stop(&st);
    memd_buf_free(&out);
    memd_buf_free(&good);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("store");
    tcase_add_checked_fixture(tc, setup, sf_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, codec_alloc_record);
    tcase_add_test(tc, codec_alloc_record_banks);
    tcase_add_test(tc, codec_subdev_record);
    tcase_add_test(tc, codec_session_and_meta);
    tcase_add_test(tc, fingerprint_follows_the_memory_map);
    tcase_add_test(tc, proc_stat_parsing);
    tcase_add_test(tc, round_trip_keeps_the_map);
    tcase_add_test(tc, dead_owner_released_at_start);
    tcase_add_test(tc, grace_period_expires);
    tcase_add_test(tc, stop_keeps_sessions_that_shutdown_closes);
    tcase_add_test(tc, empty_file_is_damage_not_new);
    tcase_add_test(tc, not_an_lmdb_file);
    tcase_add_test(tc, damaged_record_refused);
    tcase_add_test(tc, overlap_refused);
    tcase_add_test(tc, changed_device_map_refused);
    tcase_add_test(tc, locked_by_another_memd);
    tcase_add_test(tc, store_of_another_boot_discarded);
    tcase_add_test(tc, full_store_refuses_allocations);
    tcase_add_test(tc, failed_commit_answers_eio_and_closes);
    tcase_add_test(tc, failed_commit_keeps_replies_before_the_first_change);
    suite_add_tcase(s, tc);
    return s;
}
