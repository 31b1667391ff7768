/* Cgroup limits in core (daemon/core/cglimit.c) against a walk over every hold: three
 * sessions in /a, /a/b and /a/bc (a sibling whose name starts like /a/b's: a limit on
 * /a/b must not see it) allocate and free at random under limits on /, /a, /a/b and
 * /a/bc; after every step each limit's current is what the holds of the sessions in its
 * subtree add up to, never above its max, its peak at least that and never falling;
 * refusals say which limit. Limits set, cleared and set again midway count what is held
 * already.
 *
 * Seed: MEMD_TEST_SEED (decimal or 0x-hex) or a fixed default, printed as a TAP comment. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "alloc.h"
#include "cglimit.h"
#include "check_main.h"
#include "dispatch_fixture.h"
#include "event.h"
#include "test_rand.h"

#define MAXH 256

/* The reference: bytes on (device 0, DRAM) held by the sessions in path's subtree. */
static uint64_t walk(const char *path)
{
    size_t n = strlen(path);
    uint64_t sum = 0;
    for (const memd_session *s = st.sessions; s; s = s->next) {
        bool in = n == 1 || (!strncmp(s->cgroup, path, n) &&
                             (s->cgroup[n] == '\0' || s->cgroup[n] == '/'));
        for (const memd_hold *h = s->holds; in && h; h = h->next) {
            const memd_alloc *a = memd_hold_alloc(h);
            if (a->dev == 0 && a->pl.kind == MEMD_KIND_DRAM)
                sum += memd_alloc_device_bytes(&st, a);
        }
    }
    return sum;
}

static const char *const limited_paths[] = {"/", "/a", "/a/b", "/a/bc"};
static uint64_t last_peak[4];

static void check(uint64_t seed, int step)
{
    uint32_t n;
    const memd_cglimit *v = memd_cglimit_list(&st, &n);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t want = walk(v[i].cgroup);
        ck_assert_msg(v[i].current == want && v[i].current <= v[i].max &&
                          v[i].peak >= v[i].current,
                      "seed 0x%" PRIx64 " step %d: %s current %" PRIu64 " (walk %" PRIu64
                      ") max %" PRIu64 " peak %" PRIu64,
                      seed, step, v[i].cgroup, v[i].current, want, v[i].max, v[i].peak);
        for (int k = 0; k < 4; k++)
            if (!strcmp(v[i].cgroup, limited_paths[k])) {
                ck_assert_msg(v[i].peak >= last_peak[k], "seed 0x%" PRIx64 " step %d: %s's "
                              "peak fell", seed, step, v[i].cgroup);
                last_peak[k] = v[i].peak;
            }
    }
}

static void set(const char *path, uint64_t max)
{
    memd_error err;
    memd_error_reset(&err);
    ck_assert_msg(memd_cglimit_set(&st, path, 0, MEMD_KIND_DRAM, max, MEMD_CGLIMIT_CONFIG,
                                   &err) == 0, "%s", err.msg);
}

START_TEST(random_against_walk)
{
    uint64_t seed = memd_test_seed(0x5eedc9u), rng = seed;
    memd_session *ss[] = {&sa, &sb, &sroot};
    const char *paths[] = {"/a/b", "/a/bc", "/a"};
    for (int i = 0; i < 3; i++)
        strcpy(ss[i]->cgroup, paths[i]);
    /* DEV's DRAM: 4 banks, 896 KiB of data each. */
    set("/", 3000 * KIB);
    set("/a/b", 1200 * KIB);
    set("/a/bc", 900 * KIB);
    memd_alloc *held[MAXH];
    memd_session *by[MAXH];
    size_t nh = 0;
    uint32_t limited = 0;
    for (int step = 0; step < 3000; step++) {
        if (step == 1000)
            set("/a", 2000 * KIB); /* while holding: counted from the holds */
        if (step == 2000)
            ck_assert_uint_eq(memd_cglimit_clear(&st, "/a/b", 0, MEMD_KIND_DRAM), 1);
        if (step == 2500) { /* again, while /a/b and its look-alike sibling /a/bc hold */
            set("/a/b", 1200 * KIB);
            last_peak[2] = 0;
        }
        if (nh && (nh == MAXH || memd_test_rand(&rng) % 2)) {
            size_t k = memd_test_rand(&rng) % nh;
            memd_hold_release(&st, memd_alloc_hold_of(held[k], by[k]));
            held[k] = held[--nh];
            by[k] = by[nh];
        } else {
            memd_session *s = ss[memd_test_rand(&rng) % 3];
            memd_alloc_request r = {.device = DEV, .cls = MEMD_CLASS_CONSTANT,
                                    .scope = MEMD_SCOPE_DRAM,
                                    .bytes = 4 * KIB * (1 + memd_test_rand(&rng) % 32),
                                    .name = ""};
            memd_error err;
            memd_error_reset(&err);
            memd_alloc *a;
            int rc = memd_alloc_create(&st, s, &r, &a, &err);
            if (rc == 0) {
                held[nh] = a;
                by[nh++] = s;
            } else {
                limited += err.detail == MEMD_ERR_DETAIL_LIMIT;
                ck_assert_msg(rc == -ENOMEM, "%s", err.msg);
                ck_assert_msg(err.detail != MEMD_ERR_DETAIL_LIMIT ||
                                  strstr(err.msg, "cgroup limit of /"), "%s", err.msg);
            }
        }
        check(seed, step);
    }
    /* The limits did bind (else this test could not fail on a wrong charge). */
    ck_assert_uint_gt(limited, 10);
    while (nh) {
        nh--;
        memd_hold_release(&st, memd_alloc_hold_of(held[nh], by[nh]));
    }
    check(seed, -1);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("cglimits");
    TCase *tc = tcase_create("cglimits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, random_against_walk);
    suite_add_tcase(s, tc);
    return s;
}
