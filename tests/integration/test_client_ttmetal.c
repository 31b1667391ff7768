/* tt-metal devices end to end: memd built from tt-metal's own Wormhole (galaxy) and
 * Grayskull (E150) descriptors (../shared/data/soc/tt-metal, MEMD_SHARED_DATA), bank-set
 * buffers on their L1 banks, and what a runtime sees of them: the bank ids tt-metal's
 * allocator uses with each bank's logical and NOC core, through memclient_bank_info and
 * memclient_bank_addresses, in an allocation's own reply (bank_out), in `memctl dump`
 * (table and JSON) and in an ENOMEM naming the bank that ran out; and a sub-device given
 * by cores (rows 0-3) in memd.yaml. The expected cores are
 * the ones test_banks_ttmetal.c worked out by hand from the files and from the shuffle
 * tt-metal's C++ library computes (not from memd):
 *   Wormhole bank 0 = logical (1,4), NOC (2,5); bank 34 = (0,0), NOC (1,1);
 *   bank 63 = (1,0), NOC (2,1).
 *   Grayskull banks 13 and 120 = the two banks of storage core logical (1,9), NOC (2,11),
 *   bank 13 at L1 offset 0 and bank 120 at 512 KiB. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/ttmetal_galaxy_ids.h"
#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"
#include "raw_client.h"

MEMCTL_SUITE_STATICS
#define RUN MEMCTL_RUN

static void start(void)
{
    const char *data = getenv("MEMD_SHARED_DATA");
    ck_assert_ptr_nonnull(data);
    char yaml[2048] = "devices:\n";
    size_t n = strlen(yaml);
    n += cu_galaxy_yaml(yaml + n, sizeof yaml - n, 0, "wormhole_b0");
    snprintf(yaml + n, sizeof yaml - n,
             "  - id: 1\n"
             "    name: grayskull_e150\n"
             "    tt_metal:\n"
             "      soc_descriptor: %s/soc/tt-metal/soc_grayskull_120_arch.yaml\n"
             "      core_descriptor: %s/soc/tt-metal/core_grayskull_120_arch.yaml\n"
             "      product: E150\n"
             "      hw_cqs: 1\n"
             "    sram:\n"
             "      reserved: 128KiB\n"
             "sub_devices:\n"
             "  - {name: rows, device: 0, group: sram, cores: {x: 0-7, y: 0-3}}\n",
             data, data);
    memctl_yaml_start(&f, yaml, false, out_path, err_path);
}

static void teardown(void)
{
    memctl_yaml_stop(&f, out_path, err_path, &out, &err);
}

static void core_is(const memclient_bank *b, uint32_t bank, int lx, int ly, int nx, int ny)
{
    ck_assert_msg(b->bank == bank && b->logical_x == lx && b->logical_y == ly &&
                      b->noc_x == nx && b->noc_y == ny,
                  "bank %u: logical %u,%u noc %u,%u; expected bank %u at %d,%d noc %d,%d",
                  b->bank, b->logical_x, b->logical_y, b->noc_x, b->noc_y, bank, lx, ly, nx,
                  ny);
}

START_TEST(wormhole_cores_everywhere)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t set[] = {63, 0, 34}; /* any order: the library sorts */
    memclient_bank got[3], info[3];
    memclient_alloc_req r = cu_l1(0, 4096, 0, set, 3, 1);
    r.bank_out = got;
    r.nbank_out = 3;
    memclient_buffer per, range;
    ck_assert_int_eq(memclient_alloc(c, &r, &per), 0);
    ck_assert_int_eq(memclient_bank_info(c, per.handle, info, 3), 3);
    for (int i = 0; i < 2; i++) {
        const memclient_bank *b = i ? info : got;
        core_is(&b[0], 0, 1, 4, 2, 5);
        core_is(&b[1], 34, 0, 0, 1, 1);
        core_is(&b[2], 63, 1, 0, 2, 1);
    }
    memclient_alloc_req q = cu_l1(0, 8192, 0, set, 3, 0);
    ck_assert_int_eq(memclient_alloc(c, &q, &range), 0);
    ck_assert_int_eq(memclient_bank_info(c, range.handle, info, 3), 3);
    core_is(&info[0], 0, 1, 4, 2, 5);
    core_is(&info[2], 63, 1, 0, 2, 1);

    /* memctl dump: the per-bank use rows and the spans name the cores, logical@noc. */
    ck_assert_int_eq(RUN("dump", "--device", "0"), 0);
    char want[96];
    snprintf(want, sizeof want, "0:0x%" PRIx64 "(1,4@2,5),34:0x%" PRIx64 "(0,0@1,1),63:0x",
             got[0].address, got[1].address);
    ck_assert_msg(strstr(out, want) && strstr(out, "  0      1,4@2,5  ") &&
                      strstr(out, "  34     0,0@1,1  ") && strstr(out, "(core logical@noc)"),
                  "%s", out);
    /* The sub-device of the cores of rows 0-3: a bound session's per-bank buffer lies on
     * those 32 cores (bank 63 at (1,0) among them), bank 0 at (1,4) is out of its reach;
     * an interleaved one is refused, as tt-metal's sub-device allocators refuse it. */
    memclient *rt = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(rt, "rows"), 0);
    memclient_alloc_req lr = cu_sram(4096);
    memclient_buffer lb, x;
    ck_assert_int_eq(memclient_alloc(rt, &lr, &lb), -EINVAL);
    lr.per_bank = 1;
    ck_assert_int_eq(memclient_alloc(rt, &lr, &lb), 0);
    memclient_bank rows[64];
    ck_assert_int_eq(memclient_bank_info(rt, lb.handle, rows, 64), 32);
    bool saw63 = false;
    for (int i = 0; i < 32; i++) {
        ck_assert_msg(rows[i].logical_y <= 3, "bank %u at %u,%u", rows[i].bank, rows[i].logical_x,
                      rows[i].logical_y);
        saw63 |= rows[i].bank == 63;
    }
    ck_assert(saw63);
    uint32_t zero = 0;
    memclient_alloc_req z = cu_l1(0, 4096, 0, &zero, 1, 1);
    ck_assert_int_eq(memclient_alloc(rt, &z, &x), -EACCES);
    /* memctl subdev define --cores: columns 0-1 of every row, 16 banks (sharing rows 0-3
     * with 'rows', so only with --overlap); a session bound to it stays in columns 0-1. */
    ck_assert_int_eq(RUN("subdev", "define", "cols", "--device", "0", "--group", "l1", "--cores",
                         "0-1:0-7", "--json"), 1);
    ck_assert_msg(strstr(err, "shares bank") && strstr(err, "'rows'"), "%s", err);
    ck_assert_int_eq(RUN("subdev", "define", "cols", "--device", "0", "--group", "l1", "--cores",
                         "0-1:0-7", "--overlap", "rows", "--json"), 0);
    ck_assert_msg(strstr(out, "\"nbanks\": 16"), "%s", out);
    memclient *cc = cu_connect(&f);
    ck_assert_int_eq(memclient_subdev_bind(cc, "cols"), 0);
    ck_assert_int_eq(memclient_alloc(cc, &lr, &x), 0);
    ck_assert_int_eq(memclient_bank_info(cc, x.handle, rows, 64), 16);
    for (int i = 0; i < 16; i++)
        ck_assert_msg(rows[i].logical_x <= 1, "bank %u at %u,%u", rows[i].bank,
                      rows[i].logical_x, rows[i].logical_y);
    memclient_disconnect(cc);
    ck_assert_int_eq(RUN("subdev", "define", "none", "--device", "0", "--group", "l1", "--cores",
                         "50:50"), 2);
    ck_assert_msg(strstr(err, "no bank lies on these cores"), "%s", err);
    ck_assert_int_eq(RUN("subdev", "define", "bad", "--device", "0", "--group", "l1", "--cores",
                         "0-7"), 2);
    ck_assert_int_eq(RUN("subdev", "define", "both", "--device", "0", "--group", "l1", "--cores",
                         "0:0", "--banks", "1"), 2);
    /* Its sub-devices are listed with device 0. */
    ck_assert_int_eq(RUN("dump", "--device", "0"), 0);
    ck_assert_msg(strstr(out, "sub-devices: 2\n") && strstr(out, "  rows ") &&
                      strstr(out, "  cols "), "%s", out);
    ck_assert_int_eq(RUN("dump", "--device", "0", "--json"), 0);
    ck_assert_msg(strstr(out, "{\"bank\": 0, \"address\": ") &&
                      strstr(out, "\"core\": {\"logical\": [1, 4], \"noc\": [2, 5]}") &&
                      strstr(out, "\"core\": {\"logical\": [0, 0], \"noc\": [1, 1]}") &&
                      strstr(out, "\"bank_ids\": [0, 34, 63]"),
                  "%s", out);
    /* Several --cores rectangles (resolved over one dump): columns 0 and 1 of every row,
     * with a rectangle holding no bank between them, are the 16 banks of 'cols'. */
    ck_assert_int_eq(RUN("subdev", "define", "cols2", "--device", "0", "--group", "l1",
                         "--cores", "0:0-7", "--cores", "50:50", "--cores", "1:0-7", "--overlap",
                         "rows,cols", "--json"), 0);
    ck_assert_msg(strstr(out, "\"nbanks\": 16"), "%s", out);
    memclient_disconnect(rt);
    memclient_disconnect(c);
}
END_TEST

START_TEST(grayskull_storage_core_banks)
{
    start();
    memclient *c = cu_connect(&f);
    uint32_t set[] = {13, 120};
    memclient_alloc_req r = cu_l1(1, 4096, 0, set, 2, 1);
    memclient_buffer b;
    ck_assert_int_eq(memclient_alloc(c, &r, &b), 0);
    memclient_bank info[2];
    ck_assert_int_eq(memclient_bank_info(c, b.handle, info, 2), 2);
    core_is(&info[0], 13, 1, 9, 2, 11);
    core_is(&info[1], 120, 1, 9, 2, 11);
    /* One core, two banks: the same place in each bank's map, 512 KiB apart in L1. */
    ck_assert_uint_eq(info[0].address, info[1].address);
    ck_assert_uint_eq(info[1].absolute - info[0].absolute, 512 * 1024);
    uint64_t abs[2];
    ck_assert_int_eq(memclient_bank_addresses(c, b.handle, abs, 2), 2);
    ck_assert_uint_eq(abs[0], info[0].absolute);
    ck_assert_uint_eq(abs[1], info[1].absolute);

    /* Bank 13 full: a range over both banks names it with its core. */
    uint64_t left = cu_region_size(c, 1, MEMD_KIND_SRAM, "buffers") - 4096;
    memclient_alloc_req fill = cu_l1(1, left, 0, set, 1, 0);
    memclient_buffer x;
    ck_assert_int_eq(memclient_alloc(c, &fill, &x), 0);
    memclient_alloc_req q = cu_l1(1, 4096, 0, set, 2, 0);
    ck_assert_int_eq(memclient_alloc(c, &q, &x), -ENOMEM);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "bank 13 (core 1,9, noc 2,11) ran out"), "%s", e.message);

    /* memctl dump of device 1: its banks' cores; not device 0's sub-device. */
    ck_assert_int_eq(RUN("dump", "--device", "1"), 0);
    ck_assert_msg(strstr(out, "13:0x") && strstr(out, "(1,9@2,11),120:0x") &&
                      strstr(out, "  13       1,9@2,11  ") && !strstr(out, "sub-devices") &&
                      !strstr(out, "rows"),
                  "%s", out);
    ck_assert_int_eq(RUN("dump", "--device", "1", "--json"), 0);
    ck_assert_msg(strstr(out, "\"sub_devices\": []") &&
                      strstr(out, "\"core\": {\"logical\": [1, 9], \"noc\": [2, 11]}"),
                  "%s", out);
    ck_assert_int_eq(RUN("devices"), 0);
    ck_assert_msg(strstr(out, "sub-devices: 1\n"), "%s", out); /* 'rows' of device 0 */
    memclient_disconnect(c);
}
END_TEST

/* Bank ids as ranges, "0-3,8": the test's own writer, to compare memd's text with. */
static void ranges(const uint32_t *ids, uint32_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && ids[j] == ids[j - 1] + 1; j++)
            ;
        used += (size_t)snprintf(buf + used, cap - used, j - i > 1 ? "%s%u-%u" : "%s%u",
                                 i ? "," : "", ids[i], ids[j - 1]);
        ck_assert_uint_lt(used, cap);
    }
}

static const memclient_subdev_rec *subdev_named(const memclient_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->nsubdevs; i++)
        if (!strcmp(s->subdevs[i].name, name))
            return &s->subdevs[i];
    ck_abort_msg("no sub-device %s", name);
    return NULL;
}

/* Sub-device bank lists far past the SUBDEV record's 128-byte string come out whole: every
 * even L1 bank of the Grayskull (ids that never form ranges) and the cores of rows 0-3 of
 * the Wormhole galaxy (tt-metal's shuffled ids), through the client API (bank_ids),
 * `memctl devices` and `memctl dump --json`. A client from before SUBDEV_BANKS (it does not ask for them) gets
 * no such record, only the cut string. */
START_TEST(subdev_bank_lists_whole)
{
    start();
    memclient *c = cu_connect(&f);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    uint32_t nl1[2] = {0, 0}, evens[256], n = 0;
    for (size_t i = 0; i < s->ngroups; i++)
        if (s->groups[i].device < 2 && s->groups[i].kind == MEMD_KIND_SRAM)
            nl1[s->groups[i].device] = s->groups[i].banks;
    ck_assert_uint_ge(nl1[1], 120);
    ck_assert_uint_le(nl1[1], 2 * 256);
    for (uint32_t b = 0; b < nl1[1]; b += 2)
        evens[n++] = b;
    /* The Wormhole banks whose core lies in rows 0-3, from the per-bank records. */
    ck_assert_uint_le(nl1[0], 512);
    bool in_rows[512] = {false};
    uint32_t rows[512], nrows = 0;
    for (size_t i = 0; i < s->nbank_use; i++) {
        const memclient_bank_use *u = &s->bank_use[i];
        if (u->device == 0 && u->kind == MEMD_KIND_SRAM && u->logical_y <= 3)
            in_rows[u->bank] = true;
    }
    for (uint32_t b = 0; b < nl1[0]; b++)
        if (in_rows[b])
            rows[nrows++] = b;
    ck_assert_uint_eq(nrows, 32);
    memclient_snapshot_free(s);

    memclient_subdev sd = {.name = "evens", .device = 1, .kind = MEMD_KIND_SRAM,
                           .banks = evens, .nbanks = n};
    ck_assert_int_eq(memclient_subdev_define(c, &sd), 0);
    s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    const memclient_subdev_rec *ev = subdev_named(s, "evens"), *rw = subdev_named(s, "rows");
    ck_assert_uint_eq(ev->nbanks, n);
    ck_assert_ptr_nonnull(ev->bank_ids);
    ck_assert_mem_eq(ev->bank_ids, evens, n * sizeof *evens);
    ck_assert_uint_eq(rw->nbanks, 32);
    ck_assert_ptr_nonnull(rw->bank_ids);
    ck_assert_mem_eq(rw->bank_ids, rows, 32 * sizeof *rows);
    ck_assert_ptr_nonnull(strstr(ev->banks, "...")); /* the old field, cut as before */
    memclient_snapshot_free(s);

    char want_ev[2048], want_rows[512], json[8192], ids_json[2048];
    ranges(evens, n, want_ev, sizeof want_ev);
    ranges(rows, 32, want_rows, sizeof want_rows);
    ck_assert_uint_gt(strlen(want_ev), 150); /* the record's string holds 127 bytes */
    ck_assert_int_eq(RUN("devices"), 0);
    char cell[2100];
    snprintf(cell, sizeof cell, "  %s  ", want_ev);
    ck_assert_msg(strstr(out, cell) && !strstr(out, "..."), "%s", out);
    snprintf(cell, sizeof cell, "  %s  ", want_rows);
    ck_assert_msg(strstr(out, cell), "want %s in %s", want_rows, out);
    ck_assert_int_eq(RUN("dump", "--json"), 0);
    size_t used = 0;
    for (uint32_t i = 0; i < n; i++)
        used += (size_t)snprintf(ids_json + used, sizeof ids_json - used, "%s%u", i ? ", " : "",
                                 evens[i]);
    snprintf(json, sizeof json, "\"banks\": \"%s\", \"bank_ids\": [%s], \"nbanks\": %u", want_ev,
             ids_json, n);
    ck_assert_msg(strstr(out, json), "want %s in %s", json, out);
    snprintf(json, sizeof json, "\"banks\": \"%s\", \"bank_ids\": [", want_rows);
    ck_assert_msg(strstr(out, json), "want %s in %s", json, out);

    /* An older client asks for BANKS only: no SUBDEV_BANKS record it would refuse. */
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    memd_wire_welcome w;
    ck_assert_int_eq(raw_hello(fd, "old", &w), 0);
    uint8_t *d;
    size_t len;
    ck_assert_int_eq(raw_dump(fd, 0, MEMD_DUMP_F_BANKS, &d, &len), 0);
    ck_assert_int_eq(raw_dump_count(d, len, MEMD_REC_SUBDEV), 2);
    ck_assert_int_eq(raw_dump_count(d, len, MEMD_REC_SUBDEV_BANKS), 0);
    free(d);
    ck_assert_int_eq(raw_dump(fd, 0, MEMD_DUMP_F_BANKS | MEMD_DUMP_F_SUBDEV_BANKS, &d, &len), 0);
    ck_assert_int_eq(raw_dump_count(d, len, MEMD_REC_SUBDEV_BANKS), 2);
    free(d);
    close(fd);
    memclient_disconnect(c);
}
END_TEST

/* tt-metal's own core -> bank mapping of the Wormhole galaxy grid (8 x 8 workers): scan
 * position y * 8 + x has the id at that index (hand values, see tests/common). */
static bool galaxy_rows_0_3(uint32_t bank)
{
    for (int i = 0; i < 32; i++)
        if (memd_test_galaxy_l1_ids[i] == bank)
            return true;
    return false;
}

/* memclient_banks_on_cores (and memclient_snapshot_banks_on_cores over a dump): rows 0-3
 * of the Wormhole galaxy are exactly the 32 banks tt-metal's mapping puts there (and memd.yaml's cores: picked for 'rows'); single cores
 * give their bank; a short array gets the smallest ids and the count. Failures: no bank
 * on the cores (-ENXIO), no device (-ENODEV), bad arguments (-EINVAL); on the default
 * config, a group without cores (-ENODATA) and a device without that group (-ENOENT). */
START_TEST(banks_on_cores_c)
{
    start();
    memclient *c = cu_connect(&f);
    const uint32_t cols[] = {0, 1, 2, 3, 4, 5, 6, 7}, rows[] = {3, 1, 0, 2}; /* any order */
    uint32_t ids[64], want[32], n = 0;
    for (uint32_t b = 0; b < 64; b++)
        if (galaxy_rows_0_3(b))
            want[n++] = b;
    ck_assert_uint_eq(n, 32);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, cols, 8, rows, 4, ids, 64),
                     32);
    ck_assert_mem_eq(ids, want, sizeof want);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BANKS);
    const memclient_subdev_rec *rw = subdev_named(s, "rows");
    ck_assert_mem_eq(rw->bank_ids, want, sizeof want);
    /* The same from that snapshot, without a round trip (memctl's several rectangles). */
    uint32_t snap_ids[64];
    ck_assert_int_eq(memclient_snapshot_banks_on_cores(s, 0, MEMD_KIND_SRAM, cols, 8, rows, 4,
                                                       snap_ids, 64),
                     32);
    ck_assert_mem_eq(snap_ids, want, sizeof want);
    ck_assert_int_eq(memclient_snapshot_banks_on_cores(s, 7, MEMD_KIND_SRAM, cols, 8, rows, 4,
                                                       snap_ids, 64),
                     -ENOENT); /* not in this snapshot */
    ck_assert_int_eq(memclient_snapshot_banks_on_cores(NULL, 0, MEMD_KIND_SRAM, cols, 8, rows,
                                                       4, snap_ids, 64),
                     -EINVAL);
    memclient_snapshot_free(s);
    /* Too small an array: the first ids and the count. */
    ids[3] = 12345;
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, cols, 8, rows, 4, ids, 3), 32);
    ck_assert_mem_eq(ids, want, 3 * sizeof want[0]);
    ck_assert_uint_eq(ids[3], 12345);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, cols, 8, rows, 4, NULL, 0),
                     32);
    /* One core each: (1,4) is bank 0, (0,0) bank 34, (1,0) bank 63. */
    const uint32_t x1 = 1, x0 = 0, y4 = 4, y0 = 0;
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, &x1, 1, &y4, 1, ids, 64), 1);
    ck_assert_uint_eq(ids[0], 0);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, &x0, 1, &y0, 1, ids, 64), 1);
    ck_assert_uint_eq(ids[0], 34);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, &x1, 1, &y0, 1, ids, 64), 1);
    ck_assert_uint_eq(ids[0], 63);

    memclient_error e;
    const uint32_t far = 40;
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, &far, 1, &far, 1, ids, 64),
                     -ENXIO);
    memclient_last_error(&e);
    ck_assert_str_eq(e.message, "no bank lies on these cores");
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, cols, 0, rows, 4, ids, 64),
                     -ENXIO);
    ck_assert_int_eq(memclient_banks_on_cores(c, 7, MEMD_KIND_SRAM, cols, 8, rows, 4, ids, 64),
                     -ENODEV);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_COUNT, cols, 8, rows, 4, ids, 64),
                     -EINVAL);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, NULL, 8, rows, 4, ids, 64),
                     -EINVAL);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, cols, 8, rows, 4, NULL, 64),
                     -EINVAL);
    ck_assert_int_eq(memclient_banks_on_cores(c, MEMCLIENT_ALL_DEVICES, MEMD_KIND_SRAM, cols, 8,
                                              rows, 4, ids, 64),
                     -EINVAL);
    memclient_disconnect(c);

    /* The default config: device 0's SRAM banks have no cores, device 1 has no SRAM. */
    memd_fixture plain;
    cu_start(&plain);
    c = cu_connect(&plain);
    ck_assert_int_eq(memclient_banks_on_cores(c, 0, MEMD_KIND_SRAM, cols, 8, rows, 4, ids, 64),
                     -ENODATA);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "no core coordinates"), "%s", e.message);
    ck_assert_int_eq(memclient_banks_on_cores(c, 1, MEMD_KIND_SRAM, cols, 8, rows, 4, ids, 64),
                     -ENOENT);
    memclient_last_error(&e);
    ck_assert_str_eq(e.message, "device 1 has no sram banks");
    /* memctl subdev define --cores asks the library too. */
    ck_assert_int_eq(memctl_run(&plain, (const char *const[]){"subdev", "define", "x", "--device",
                                                              "0", "--group", "l1", "--cores",
                                                              "0-7:0-3", NULL},
                                0, out_path, err_path, &out, &err),
                     2);
    ck_assert_msg(strstr(err, "no core coordinates"), "%s", err);
    memclient_disconnect(c);
    memd_fixture_destroy(&plain);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-ttmetal");
    TCase *tc = tcase_create("ttmetal");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, NULL, teardown);
    tcase_add_test(tc, wormhole_cores_everywhere);
    tcase_add_test(tc, grayskull_storage_core_banks);
    tcase_add_test(tc, subdev_bank_lists_whole);
    tcase_add_test(tc, banks_on_cores_c);
    suite_add_tcase(s, tc);
    return s;
}
