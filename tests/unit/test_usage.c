/* Usage records (MEMD_DUMP_F_USAGE): what each session holds per (device, bank group).
 *
 * alloc.c keeps per-session counts as holds come and go, so a dump's usage records cost
 * O(sessions) instead of a walk over every hold (issue 14: the last page of a paged dump
 * walked a million holds in one loop turn). A seeded random mix of private and shared
 * allocations (attached by other sessions of the same uid), frees, and sessions closing
 * and coming back is checked against the old walk over each session's holds, through
 * paged and one-reply dumps.
 *
 * Seed: MEMD_TEST_SEED (decimal or 0x-hex) or a fixed default, printed as a TAP comment. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check_main.h"
#include "dispatch_fixture.h"
#include "dump_iter.h"
#include "event.h"
#include "frames.h"
#include "test_rand.h"

#define NSESS 4
#define MAXH 512

static uint64_t rng;

typedef struct use_rec {
    uint32_t session_id, device, allocations;
    uint8_t kind;
    uint64_t bytes, shared_bytes;
} use_rec;

/* The reference: the walk over every hold of every session the dump used to make. */
static size_t walk_use(use_rec *res, size_t cap)
{
    size_t n = 0;
    for (const memd_session *s = st.sessions; s; s = s->next) {
        use_rec per[MEMD_KIND_COUNT] = {{0}};
        for (const memd_hold *h = s->holds; h; h = h->next) {
            const memd_alloc *a = memd_hold_alloc(h);
            ck_assert_uint_eq(a->dev, 0); /* one device in the fixture */
            use_rec *u = &per[a->pl.kind];
            uint64_t bytes = memd_alloc_device_bytes(&st, a);
            u->allocations++;
            u->bytes += bytes;
            if (a->shared)
                u->shared_bytes += bytes;
        }
        for (int k = 0; k < MEMD_KIND_COUNT; k++) {
            if (!per[k].allocations)
                continue;
            ck_assert_uint_lt(n, cap);
            per[k].session_id = s->id;
            per[k].device = DEV;
            per[k].kind = (uint8_t)k;
            res[n++] = per[k];
        }
    }
    return n;
}

/* The usage records of a dump by root with MEMD_DUMP_F_USAGE, paged or in one reply. */
static size_t dump_use(bool paged, use_rec *res, size_t cap)
{
    size_t n = 0;
    uint64_t cursor = 0;
    do {
        uint8_t p[MEMD_WIRE_DUMP_REQ_SIZE], buf[64];
        memd_wire_dump_req d = {.device = UINT32_MAX, .cursor = cursor,
                                .flags = MEMD_DUMP_F_USAGE | (paged ? MEMD_DUMP_F_PAGED : 0)};
        memd_wire_dump_req_put(p, &d);
        size_t len = frame(buf, MEMD_OP_DUMP, 77, p, sizeof p), used;
        ck_assert_int_eq(memd_frames_process(&st, &sroot, buf, len, &out, SIZE_MAX,
                                             &used), 0);
        memd_wire_hdr hdr;
        ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &hdr), 0);
        ck_assert_int_eq(hdr.status, 0);
        dump_iter it = {.p = out.data + MEMD_HDR_SIZE, .len = hdr.len, .next = UINT64_MAX};
        while (dump_next(&it)) {
            if (it.tag != MEMD_REC_SESSION_USE)
                continue;
            memd_wire_session_use u;
            ck_assert_int_eq(memd_wire_session_use_get(it.rec, it.size, &u), 0);
            ck_assert_uint_lt(n, cap);
            res[n++] = (use_rec){.session_id = u.session_id, .device = u.device,
                                 .kind = u.kind, .allocations = u.allocations,
                                 .bytes = u.bytes, .shared_bytes = u.shared_bytes};
        }
        /* An unpaged reply has no PAGE record: its walk stops after this one. */
        cursor = it.next == UINT64_MAX ? 0 : it.next;
        out.len = 0;
    } while (paged && cursor);
    return n;
}

static int cmp_use(const void *x, const void *y)
{
    const use_rec *a = x, *b = y;
    if (a->session_id != b->session_id)
        return a->session_id < b->session_id ? -1 : 1;
    return (a->kind > b->kind) - (a->kind < b->kind);
}

static void check_use(bool paged, uint64_t seed, int step)
{
    use_rec want[NSESS * 2 * MEMD_KIND_COUNT + 8], got[NSESS * 2 * MEMD_KIND_COUNT + 8];
    size_t nw = walk_use(want, sizeof want / sizeof want[0]);
    size_t ng = dump_use(paged, got, sizeof got / sizeof got[0]);
    qsort(want, nw, sizeof want[0], cmp_use);
    qsort(got, ng, sizeof got[0], cmp_use);
    ck_assert_msg(nw == ng, "seed 0x%" PRIx64 " step %d: %zu usage records, walk says %zu",
                  seed, step, ng, nw);
    for (size_t i = 0; i < nw; i++)
        ck_assert_msg(want[i].session_id == got[i].session_id && want[i].kind == got[i].kind &&
                          want[i].device == got[i].device &&
                          want[i].allocations == got[i].allocations &&
                          want[i].bytes == got[i].bytes &&
                          want[i].shared_bytes == got[i].shared_bytes,
                      "seed 0x%" PRIx64 " step %d: session %u kind %u: %u allocations %" PRIu64
                      " bytes %" PRIu64 " shared; walk: %u %" PRIu64 " %" PRIu64,
                      seed, step, got[i].session_id, got[i].kind, got[i].allocations,
                      got[i].bytes, got[i].shared_bytes, want[i].allocations, want[i].bytes,
                      want[i].shared_bytes);
}

typedef struct sess {
    memd_session s;
    uint32_t uid;
    uint64_t h[MAXH];
    size_t n;
} sess;

static void alloc_one(sess *x)
{
    if (x->n == MAXH)
        return;
    memd_wire_alloc_req a = dram(MEMD_CLASS_INTERNAL, 32 + memd_test_rand(&rng) % 4096);
    if (memd_test_rand(&rng) % 3 == 0)
        a.scope = MEMD_SCOPE_SRAM;
    if (memd_test_rand(&rng) % 4 == 0) { /* shared: the same uid's sessions attach to it */
        a = dram(MEMD_CLASS_CONSTANT, 2048);
        a.flags = MEMD_ALLOC_F_SHARED;
        snprintf(a.name, sizeof a.name, "use-%u", (unsigned)(memd_test_rand(&rng) % 6));
    }
    memd_wire_buffer b;
    reply r;
    if (do_alloc(&x->s, &a, &b, &r) != 0)
        return; /* full, or the session holds that name already: both fine here */
    x->h[x->n++] = b.handle;
}

START_TEST(usage_follows_holds)
{
    uint64_t seed = memd_test_seed(0x5eed0014u);
    rng = seed;
    printf("# usage: MEMD_TEST_SEED=0x%" PRIx64 "\n", seed);
    static sess ss[NSESS];
    const uint32_t uids[NSESS] = {1001, 1001, 1002, 1002};
    for (int i = 0; i < NSESS; i++) {
        ss[i].uid = uids[i];
        ss[i].n = 0;
        open_session(&ss[i].s, uids[i], false);
    }
    for (int step = 0; step < 4000; step++) {
        sess *x = &ss[memd_test_rand(&rng) % NSESS];
        unsigned op = (unsigned)(memd_test_rand(&rng) % 100);
        if (op < 55) {
            alloc_one(x);
        } else if (op < 97) {
            if (x->n) {
                size_t i = memd_test_rand(&rng) % x->n;
                reply r;
                ck_assert_int_eq(handle_op(&x->s, MEMD_OP_FREE, x->h[i], &r), 0);
                x->h[i] = x->h[--x->n];
            }
        } else { /* the session goes, everything it holds with it; a new one comes */
            memd_session_close(&st, &x->s);
            x->n = 0;
            open_session(&x->s, x->uid, false);
        }
        if (step % 97 == 0)
            check_use(step % 2 == 0, seed, step);
    }
    check_use(true, seed, -1);
    for (int i = 0; i < NSESS; i++)
        memd_session_close(&st, &ss[i].s);
    check_use(false, seed, -2); /* nothing left but the fixture's (empty) sessions */
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("usage");
    memd_test_tcase(s, "core", 120, setup, teardown,
                    (const TTest *const[]){usage_follows_holds, NULL});
    return s;
}
