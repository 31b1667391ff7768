/* libmemclient + the real daemon under concurrency: many client threads, each with its
 * own connection, allocate and free at random (blocking, pipelined and batched), while a
 * checker thread dumps the daemon's map and verifies that no two live allocations of a
 * region ever overlap and the region counters agree with the records. At the end every
 * handle a thread still holds must be in the map at the address it was given, and once
 * everyone disconnects the map must be empty. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "client_util.h"
#include "test_clock.h"
#include "test_rand.h"

enum { THREADS = 8, ITERS = 1000, MAXLIVE = 48, BATCH = 8, DEPTH = 8 };

typedef enum { MODE_BLOCKING, MODE_PIPELINED, MODE_BATCHED } mode;

typedef struct worker {
    const memd_fixture *f;
    mode m;
    uint64_t rng;
    memclient *c;
    memclient_buffer live[MAXLIVE + BATCH + DEPTH];
    size_t nlive;
    int errors;
    char why[320];
} worker;

static atomic_int stop_checker;

/* Random DRAM request: mixed classes so both directions of the data region and the code
 * region are in play. */
static memclient_alloc_req random_req(uint64_t *s)
{
    static const memd_class classes[] = {MEMD_CLASS_CONSTANT, MEMD_CLASS_PLACEHOLDER,
                                         MEMD_CLASS_INTERNAL, MEMD_CLASS_CODE};
    memclient_alloc_req r =
        cu_req(classes[memd_test_xorshift(s) % 4], 32 + memd_test_xorshift(s) % (256u << 10));
    return r;
}

static void note_error(worker *w, const char *what, int err)
{
    memclient_error e;
    memclient_last_error(&e);
    if (!w->errors++)
        snprintf(w->why, sizeof w->why, "%s: %d %s", what, err, e.message);
}

static void drop_random(worker *w, size_t i)
{
    w->live[i] = w->live[--w->nlive];
}

static void step_blocking(worker *w)
{
    if (w->nlive < MAXLIVE && (w->nlive == 0 || memd_test_xorshift(&w->rng) % 2)) {
        memclient_alloc_req r = random_req(&w->rng);
        int e = memclient_alloc(w->c, &r, &w->live[w->nlive]);
        if (e == 0)
            w->nlive++;
        else
            note_error(w, "alloc", e);
    } else {
        size_t i = memd_test_xorshift(&w->rng) % w->nlive;
        int e = memclient_free(w->c, w->live[i].handle);
        if (e)
            note_error(w, "free", e);
        drop_random(w, i);
    }
}

static void step_pipelined(worker *w)
{
    /* DEPTH requests in flight: frees of the oldest half, allocs for the rest. */
    memclient_alloc_req reqs[DEPTH];
    memclient_buffer out[DEPTH];
    size_t nfree = w->nlive > MAXLIVE / 2 ? DEPTH / 2 : 0;
    for (size_t i = 0; i < DEPTH; i++) {
        int e;
        if (i < nfree) {
            e = memclient_submit_free(w->c, w->live[i].handle, NULL);
        } else {
            reqs[i] = random_req(&w->rng);
            e = memclient_submit_alloc(w->c, &reqs[i], &out[i], NULL);
        }
        if (e)
            note_error(w, "submit", e);
    }
    for (size_t i = 0; i < DEPTH; i++) {
        memclient_completion done;
        int e = memclient_complete(w->c, &done);
        if (e || done.status) {
            note_error(w, i < nfree ? "pipelined free" : "pipelined alloc", e ? e : done.status);
            continue;
        }
    }
    memmove(w->live, w->live + nfree, (w->nlive - nfree) * sizeof(w->live[0]));
    w->nlive -= nfree;
    for (size_t i = nfree; i < DEPTH; i++)
        w->live[w->nlive++] = out[i];
}

static void step_batched(worker *w)
{
    if (w->nlive + BATCH <= MAXLIVE && memd_test_xorshift(&w->rng) % 2) {
        memclient_alloc_req reqs[BATCH];
        for (size_t i = 0; i < BATCH; i++)
            reqs[i] = random_req(&w->rng);
        int e = memclient_alloc_batch(w->c, reqs, BATCH, &w->live[w->nlive]);
        if (e)
            note_error(w, "alloc batch", e);
        else
            w->nlive += BATCH;
    } else if (w->nlive >= BATCH) {
        uint64_t h[BATCH];
        for (size_t i = 0; i < BATCH; i++)
            h[i] = w->live[w->nlive - 1 - i].handle;
        int e = memclient_free_batch(w->c, h, BATCH);
        if (e)
            note_error(w, "free batch", e);
        w->nlive -= BATCH;
    }
}

static void *work(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < ITERS && w->errors == 0; i++) {
        if (w->m == MODE_BLOCKING)
            step_blocking(w);
        else if (w->m == MODE_PIPELINED)
            step_pipelined(w);
        else
            step_batched(w);
    }
    return NULL;
}

typedef struct checker {
    memclient *c;
    int dumps, violations;
} checker;

static void *check_loop(void *arg)
{
    checker *k = arg;
    while (!atomic_load(&stop_checker)) {
        memclient_snapshot *s = NULL;
        if (memclient_dump(k->c, MEMCLIENT_ALL_DEVICES, 0, &s) == 0) {
            k->violations += cu_check_map(s);
            k->dumps++;
            memclient_snapshot_free(s);
        } else {
            k->violations++;
        }
        memd_test_sleep_ms(2);
    }
    return NULL;
}

START_TEST(concurrent_clients_never_overlap)
{
    memd_fixture f;
    cu_start(&f);
    static worker w[THREADS];
    pthread_t th[THREADS], ck;
    checker k = {.c = cu_connect(&f)};
    atomic_store(&stop_checker, 0);
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.f = &f, .m = (mode)(i % 3), .rng = 0x9e3779b97f4a7c15ull * (i + 1)};
        w[i].c = cu_connect(&f);
    }
    pthread_create(&ck, NULL, check_loop, &k);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, work, &w[i]);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    atomic_store(&stop_checker, 1);
    pthread_join(ck, NULL);
    for (int i = 0; i < THREADS; i++)
        ck_assert_msg(w[i].errors == 0, "worker %d: %s", i, w[i].why);
    ck_assert_int_eq(k.violations, 0);
    ck_assert_int_gt(k.dumps, 0);

    /* Every handle still held is in the map where its owner was told it is. */
    memclient_snapshot *s = cu_dump(k.c, 0);
    ck_assert_int_eq(cu_check_map(s), 0);
    size_t held = 0;
    for (int i = 0; i < THREADS; i++) {
        for (size_t j = 0; j < w[i].nlive; j++) {
            const memclient_alloc_info *a = cu_find(s, w[i].live[j].handle);
            ck_assert_msg(a, "handle %" PRIu64 " missing from the dump", w[i].live[j].handle);
            ck_assert_uint_eq(a->buf.address, w[i].live[j].address);
            ck_assert_uint_eq(a->buf.size_per_bank, w[i].live[j].size_per_bank);
        }
        held += w[i].nlive;
    }
    ck_assert_uint_eq(s->nallocs, held);
    /* The run did real work: thousands of allocations, checked by many dumps. */
    ck_assert_uint_ge(s->server.allocs, 2000);
    fprintf(stderr, "concurrency: %" PRIu64 " allocations, %" PRIu64 " frees, %d map checks\n",
            s->server.allocs, s->server.frees, k.dumps);
    memclient_snapshot_free(s);

    /* Disconnecting releases everything. */
    for (int i = 0; i < THREADS; i++)
        memclient_disconnect(w[i].c);
    for (int tries = 0;; tries++) {
        s = cu_dump(k.c, 0);
        size_t n = s->nallocs;
        uint64_t allocated = 0;
        for (size_t i = 0; i < s->nregions; i++)
            allocated += s->regions[i].stats.allocated;
        memclient_snapshot_free(s);
        if (n == 0 && allocated == 0)
            break;
        ck_assert_msg(tries < 500, "%zu allocations left after every client disconnected", n);
        memd_test_sleep_ms(10);
    }
    memclient_disconnect(k.c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

/* Several threads on ONE connection: the library serialises them, each gets its own
 * replies (the handle it frees is the one it allocated). */
typedef struct shared_conn {
    memclient *c;
    int errors;
} shared_conn;

static void *share_work(void *arg)
{
    shared_conn *sc = arg;
    uint64_t rng = (uint64_t)(uintptr_t)&rng | 1;
    for (int i = 0; i < 200; i++) {
        memclient_alloc_req r = random_req(&rng);
        memclient_buffer b;
        memclient_alloc_info info;
        if (memclient_alloc(sc->c, &r, &b) != 0 || memclient_query(sc->c, b.handle, &info) != 0 ||
            info.buf.address != b.address || info.cls != r.cls ||
            memclient_free(sc->c, b.handle) != 0)
            __atomic_add_fetch(&sc->errors, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

START_TEST(threads_share_one_connection)
{
    memd_fixture f;
    cu_start(&f);
    shared_conn sc = {.c = cu_connect(&f)};
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, share_work, &sc);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(sc.errors, 0);
    memclient_snapshot *s = cu_dump(sc.c, 0);
    ck_assert_uint_eq(s->nallocs, 0);
    memclient_snapshot_free(s);
    memclient_disconnect(sc.c);
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("client-concurrency");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, concurrent_clients_never_overlap);
    tcase_add_test(tc, threads_share_one_connection);
    suite_add_tcase(s, tc);
    return s;
}
