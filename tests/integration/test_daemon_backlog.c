/* The real daemon: large replies against max_reply_backlog (issue 27). An unpaged DUMP
 * too large for the backlog is refused before memd builds it, and connections that
 * never read hold at most about their backlog each, whatever they ask for. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "raw_client.h"
#include "test_clock.h"

#define CONNS 30

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* n small buffers held by c, in batches. */
static void fill(memclient *c, size_t n)
{
    enum { BATCH = 4096 };
    memclient_alloc_req *r = calloc(BATCH, sizeof *r);
    memclient_buffer *b = calloc(BATCH, sizeof *b);
    for (size_t i = 0; i < BATCH; i++)
        r[i] = cu_req(MEMD_CLASS_PLACEHOLDER, 32);
    for (size_t done = 0; done < n; done += BATCH) {
        size_t k = n - done < BATCH ? n - done : BATCH;
        ck_assert_int_eq(memclient_alloc_batch(c, r, k, b), 0);
    }
    free(r);
    free(b);
}

/* memd's resident memory, in KiB. */
static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    ck_assert_ptr_nonnull(fp);
    long kib = -1;
    while (fgets(line, sizeof line, fp))
        if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
            break;
    fclose(fp);
    ck_assert_int_gt(kib, 0);
    return kib;
}

static size_t dump_frame(uint8_t *buf, uint64_t id, uint32_t flags, uint64_t cursor)
{
    uint8_t p[MEMD_WIRE_DUMP_REQ_SIZE];
    memd_wire_dump_req d = {.device = UINT32_MAX, .flags = flags, .cursor = cursor};
    memd_wire_dump_req_put(p, &d);
    memd_wire_hdr h = {.magic = MEMD_PROTO_MAGIC, .version = MEMD_PROTO_VERSION,
                       .opcode = MEMD_OP_DUMP, .id = id, .len = sizeof p};
    memd_wire_hdr_put(buf, &h);
    memcpy(buf + MEMD_HDR_SIZE, p, sizeof p);
    return MEMD_HDR_SIZE + sizeof p;
}

/* At 40k allocations a whole-map DUMP is ~7 MB: more than the 4 MiB backlog. memd says
 * so at once instead of building it (at 1M allocations that took 600 ms of the loop);
 * the paged dump of the same map works. */
START_TEST(unpaged_dump_over_the_backlog_is_refused)
{
    memd_fixture f;
    cu_start_limits(&f, "max_allocs_per_session: 100000");
    memclient *c = cu_connect(&f);
    fill(c, 40000);
    int fd = memd_fixture_connect(&f);
    uint8_t req[64], buf[MEMD_WIRE_ERROR_SIZE];
    size_t n = dump_frame(req, 7, 0, 0);
    ck_assert_int_eq(raw_write(fd, req, n), 0);
    memd_wire_hdr h;
    memd_wire_error e;
    ck_assert_int_eq(raw_recv_err(fd, &h, buf, sizeof buf, &e, 10000), 0);
    ck_assert_int_eq(h.status, -E2BIG);
    ck_assert_msg(strstr(e.message, "MEMD_DUMP_F_PAGED"), "%s", e.message);
    memclient_snapshot *s = cu_dump(c, 0);
    ck_assert_uint_eq(s->nallocs, 40000);
    memclient_snapshot_free(s);
    close(fd);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Issue 27: 30 connections that never read, at 60k allocations, added 298 MB to memd
 * (each held a whole reply). Each now holds about max_reply_backlog (1 MiB here): what
 * it asked for waits unbuilt. */
START_TEST(silent_readers_hold_about_their_backlog)
{
    memd_fixture f;
    cu_start_limits(&f, "max_allocs_per_session: 100000, max_reply_backlog: 1MiB");
    memclient *c = cu_connect(&f);
    fill(c, 60000);
    long before = rss_kib(f.pid);
    /* Each asks for the whole map unpaged, then for its first page 50 times. */
    static uint8_t req[51 * 64];
    size_t n = dump_frame(req, 1, 0, 0);
    for (uint64_t id = 2; id <= 51; id++)
        n += dump_frame(req + n, id, MEMD_DUMP_F_PAGED, 0);
    int fds[CONNS];
    for (int i = 0; i < CONNS; i++) {
        fds[i] = memd_fixture_connect(&f);
        ck_assert_int_eq(raw_write(fds[i], req, n), 0);
    }
    /* memd has built all it will once a bystander's request goes through after them */
    long t0 = memd_test_now_ms();
    memclient_snapshot *s = cu_dump(c, 0);
    memclient_snapshot_free(s);
    memd_test_sleep_ms(200);
    long after = rss_kib(f.pid);
    printf("# memd RSS %ld KiB before, %ld KiB with %d silent readers (+%ld KiB); "
           "a bystander's dump took %ld ms\n",
           before, after, CONNS, after - before, memd_test_now_ms() - t0);
    /* 2 MiB each (the backlog and the reply that passed it) plus the allocator's slack;
     * valgrind and ASan keep memory of their own (shadow, quarantine): not measured. */
    if (!getenv("MEMD_TEST_DAEMON_WRAPPER") && !SANITIZED)
        ck_assert_int_le(after - before, CONNS * 2048 + 16384);
    /* A reader that comes back gets every answer, in order: the unpaged dump refused,
     * then the pages. */
    static uint8_t buf[2u << 20];
    for (uint64_t id = 1; id <= 51; id++) {
        memd_wire_hdr h;
        ck_assert_int_eq(raw_recv(fds[0], &h, buf, sizeof buf, 20000), 0);
        ck_assert_uint_eq(h.id, id);
        ck_assert_int_eq(h.status, id == 1 ? -E2BIG : 0);
    }
    for (int i = 0; i < CONNS; i++)
        close(fds[i]);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Issue 27: a paged dump with blocks (memctl dump --csv --report, --svg) built every
 * block of the map into its first page: 60k allocations, 2.2 MB at once (14 MB and a
 * stall of the loop at 400k). The blocks of a large map now come in pages of their own
 * after the allocations, each about a page's size, with cursors that grow, and
 * libmemclient gathers the same blocks. */
START_TEST(blocks_come_in_pages)
{
    enum { N = 60000 };
    memd_fixture f;
    cu_start_limits(&f, "max_allocs_per_session: 100000");
    memclient *c = cu_connect(&f);
    fill(c, N);
    int fd = memd_fixture_connect(&f);
    static uint8_t buf[8u << 20];
    uint64_t cursor = 0, id = 1;
    int blocks = 0, pages = 0;
    do {
        uint8_t req[64];
        size_t n = dump_frame(req, id, MEMD_DUMP_F_PAGED | MEMD_DUMP_F_BLOCKS, cursor);
        ck_assert_int_eq(raw_write(fd, req, n), 0);
        memd_wire_hdr h;
        ck_assert_int_eq(raw_recv(fd, &h, buf, sizeof buf, 20000), 0);
        ck_assert_uint_eq(h.id, id++);
        ck_assert_int_eq(h.status, 0);
        ck_assert_msg(h.len <= (1u << 20) + 4096, "a page of %u bytes", h.len);
        int k = raw_dump_count(buf, h.len, MEMD_REC_BLOCK);
        ck_assert_int_ge(k, 0);
        blocks += k;
        pages++;
        /* The PAGE record is the last one: the next cursor. */
        memd_wire_page_rec pr;
        size_t at = h.len - MEMD_WIRE_PAGE_REC_SIZE;
        ck_assert_int_eq(memd_wire_page_rec_get(buf + at, MEMD_WIRE_PAGE_REC_SIZE, &pr), 0);
        ck_assert_msg(pr.next == 0 || pr.next > cursor, "cursor %" PRIu64 " after %" PRIu64,
                      pr.next, cursor);
        cursor = pr.next;
    } while (cursor != 0);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_BLOCKS);
    printf("# %d blocks in %d pages\n", blocks, pages);
    ck_assert_int_gt(blocks, N);
    ck_assert_uint_eq(s->nblocks, (size_t)blocks);
    ck_assert_int_ge(pages, 3);
    memclient_snapshot_free(s);
    close(fd);
    memclient_disconnect(c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("daemon-backlog");
    TCase *tc = tcase_create("backlog");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, unpaged_dump_over_the_backlog_is_refused);
    tcase_add_test(tc, silent_readers_hold_about_their_backlog);
    tcase_add_test(tc, blocks_come_in_pages);
    suite_add_tcase(s, tc);
    return s;
}
