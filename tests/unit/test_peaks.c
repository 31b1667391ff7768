/* High-water marks in core (daemon/core/peak.h, noted in alloc.c) against a reference
 * model: three sessions allocate and free at random in DEV's DRAM regions and SRAM, and
 * now and then an admin resets every peak or one session's; after every step each bank
 * group's, region's and session's peak is the most its current bytes (counted from the
 * live buffers) have been since its last reset. Then PEAKS and PEAKS_RESET as frames:
 * what a non-admin sees and may reset, and that an admin's reset of everything resets
 * the cgroup limits' dmem.peak too.
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
#include "peak.h"
#include "test_rand.h"

#define MAXH 256
#define NSES 3

/* The reference: current bytes and their most since the last reset, per bank group, per
 * (group, region) and per (session, group). */
typedef struct ref {
    uint64_t cur, peak;
} ref;

static ref groups[MEMD_KIND_COUNT], regions[MEMD_KIND_COUNT][MEMD_MAX_REGIONS];
static ref uses[NSES][MEMD_KIND_COUNT];

static void count(memd_alloc *const *held, const int *by, size_t nh)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        groups[k].cur = 0;
        for (int r = 0; r < MEMD_MAX_REGIONS; r++)
            regions[k][r].cur = 0;
        for (int s = 0; s < NSES; s++)
            uses[s][k].cur = 0;
    }
    for (size_t i = 0; i < nh; i++) {
        const memd_alloc *a = held[i];
        uint64_t b = a->pl.size_per_bank * st.devs[0].spec->groups[a->pl.kind].banks;
        regions[a->pl.kind][a->pl.region].cur += b;
        uses[by[i]][a->pl.kind].cur += b;
    }
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        for (int r = 0; r < MEMD_MAX_REGIONS; r++) {
            groups[k].cur += regions[k][r].cur;
            if (regions[k][r].cur > regions[k][r].peak)
                regions[k][r].peak = regions[k][r].cur;
        }
        for (int s = 0; s < NSES; s++)
            if (uses[s][k].cur > uses[s][k].peak)
                uses[s][k].peak = uses[s][k].cur;
    }
    for (int k = 0; k < MEMD_KIND_COUNT; k++)
        if (groups[k].cur > groups[k].peak)
            groups[k].peak = groups[k].cur;
}

static void check(memd_session *const *ss, uint64_t seed, int step)
{
    const memd_dev *d = &st.devs[0];
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        ck_assert_msg(d->group[k].bytes == groups[k].cur && d->group[k].peak.bytes == groups[k].peak,
                      "seed 0x%" PRIx64 " step %d: group %d current %" PRIu64 " peak %" PRIu64
                      ", want %" PRIu64 " %" PRIu64, seed, step, k, d->group[k].bytes,
                      d->group[k].peak.bytes, groups[k].cur, groups[k].peak);
        for (int r = 0; r < MEMD_MAX_REGIONS; r++)
            ck_assert_msg(d->regions[k][r].bytes == regions[k][r].cur &&
                              d->regions[k][r].peak.bytes == regions[k][r].peak,
                          "seed 0x%" PRIx64 " step %d: group %d region %d current %" PRIu64
                          " peak %" PRIu64 ", want %" PRIu64 " %" PRIu64, seed, step, k, r,
                          d->regions[k][r].bytes, d->regions[k][r].peak.bytes,
                          regions[k][r].cur, regions[k][r].peak);
        for (int s = 0; s < NSES; s++) {
            const memd_group_use *u = ss[s]->group_holds ? &ss[s]->group_holds[k] : NULL;
            uint64_t cur = u ? u->bytes : 0, peak = u ? u->peak.bytes : 0;
            ck_assert_msg(cur == uses[s][k].cur && peak == uses[s][k].peak,
                          "seed 0x%" PRIx64 " step %d: session %d group %d current %" PRIu64
                          " peak %" PRIu64 ", want %" PRIu64 " %" PRIu64, seed, step, s, k,
                          cur, peak, uses[s][k].cur, uses[s][k].peak);
        }
    }
}

static void reset_ref(int only)
{
    for (int k = 0; k < MEMD_KIND_COUNT; k++) {
        for (int s = 0; s < NSES; s++)
            if (only < 0 || only == s)
                uses[s][k].peak = uses[s][k].cur;
        if (only >= 0)
            continue;
        groups[k].peak = groups[k].cur;
        for (int r = 0; r < MEMD_MAX_REGIONS; r++)
            regions[k][r].peak = regions[k][r].cur;
    }
}

START_TEST(random_against_model)
{
    uint64_t seed = memd_test_seed(0x9ea4u), rng = seed;
    memd_session *ss[NSES] = {&sa, &sb, &sroot};
    static const uint8_t classes[] = {MEMD_CLASS_CODE, MEMD_CLASS_CONSTANT, MEMD_CLASS_LOGGING,
                                      MEMD_CLASS_PLACEHOLDER};
    memd_alloc *held[MAXH];
    int by[MAXH];
    size_t nh = 0;
    int resets = 0, full = 0;
    memset(groups, 0, sizeof groups);
    memset(regions, 0, sizeof regions);
    memset(uses, 0, sizeof uses);
    for (int step = 0; step < 4000; step++) {
        uint64_t roll = memd_test_below(&rng, 100);
        if (roll < 2) { /* an admin's reset of everything, or of one session */
            int only = roll == 0 ? -1 : (int)memd_test_below(&rng, NSES);
            memd_peaks_reset(&st, -1, only < 0 ? NULL : ss[only]);
            reset_ref(only);
            resets++;
        } else if (nh && (nh == MAXH || roll < 50)) {
            size_t k = memd_test_below(&rng, nh);
            memd_hold_release(&st, memd_alloc_hold_of(held[k], ss[by[k]]));
            held[k] = held[nh - 1];
            by[k] = by[--nh];
        } else {
            int s = (int)memd_test_below(&rng, NSES);
            bool sram = memd_test_below(&rng, 4) == 0;
            memd_alloc_request r = {
                .device = DEV, .cls = sram ? MEMD_CLASS_CONSTANT : classes[memd_test_below(&rng, 4)],
                .scope = sram ? MEMD_SCOPE_SRAM : MEMD_SCOPE_DRAM,
                .bytes = 4 * KIB * (1 + memd_test_below(&rng, 24)), .name = ""};
            memd_error err;
            memd_error_reset(&err);
            memd_alloc *a;
            int rc = memd_alloc_create(&st, ss[s], &r, &a, &err);
            if (rc == 0) {
                held[nh] = a;
                by[nh++] = s;
            } else {
                full++;
                ck_assert_msg(rc == -ENOMEM, "%s", err.msg);
            }
        }
        count(held, by, nh);
        check(ss, seed, step);
    }
    /* Resets and full regions both happened: peaks fell back and were held at the top. */
    ck_assert_int_gt(resets, 20);
    ck_assert_int_gt(full, 10);
    while (nh) {
        nh--;
        memd_hold_release(&st, memd_alloc_hold_of(held[nh], ss[by[nh]]));
    }
    count(held, by, nh);
    check(ss, seed, -1);
}
END_TEST

/* PEAKS as a session sees it: its records, by what, and the sessions named. */
typedef struct seen {
    uint32_t n, by_what[MEMD_PEAK_WHAT_COUNT];
    uint32_t sessions[8];
    uint64_t peak_of[8];
} seen;

static void peaks_of(memd_session *s, seen *v)
{
    reply r;
    memd_wire_peaks_req q = {.device = UINT32_MAX};
    uint8_t p[MEMD_WIRE_PEAKS_REQ_SIZE];
    memd_wire_peaks_req_put(p, &q);
    req(s, MEMD_OP_PEAKS, p, sizeof p, &r);
    ck_assert_int_eq(r.h.status, 0);
    memset(v, 0, sizeof *v);
    uint32_t n = memd_wire_u32(r.p);
    ck_assert_uint_eq(r.h.len, MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_PEAK_REC_SIZE);
    for (uint32_t i = 0; i < n; i++) {
        memd_wire_peak_rec w;
        ck_assert_int_eq(memd_wire_peak_rec_get(r.p + MEMD_WIRE_COUNT_SIZE +
                                                    i * MEMD_WIRE_PEAK_REC_SIZE,
                                                MEMD_WIRE_PEAK_REC_SIZE, &w), 0);
        ck_assert_uint_eq(w.device, DEV);
        v->by_what[w.what]++;
        if (w.what == MEMD_PEAK_SESSION && v->n < 8) {
            v->sessions[v->n] = w.session_id;
            v->peak_of[v->n++] = w.peak;
        }
    }
}

static int reset_as(memd_session *s, uint32_t session)
{
    reply r;
    memd_wire_peaks_req q = {.device = DEV, .session = session};
    uint8_t p[MEMD_WIRE_PEAKS_REQ_SIZE];
    memd_wire_peaks_req_put(p, &q);
    req(s, MEMD_OP_PEAKS_RESET, p, sizeof p, &r);
    return r.h.status;
}

START_TEST(frames_visibility_and_reset)
{
    strcpy(sa.cgroup, "/pod");
    strcpy(sb.cgroup, "/pod");
    memd_error err;
    memd_error_reset(&err);
    ck_assert_int_eq(memd_cglimit_set(&st, "/pod", 0, MEMD_KIND_DRAM, 1u << 30,
                                      MEMD_CGLIMIT_CONFIG, &err), 0);
    uint32_t nl;
    const memd_cglimit *lim = memd_cglimit_list(&st, &nl);
    ck_assert_uint_eq(nl, 1);
    uint64_t ha = must_alloc(&sa, MEMD_CLASS_CONSTANT, 64 * KIB);
    must_alloc(&sb, MEMD_CLASS_CONSTANT, 32 * KIB);
    reply r;
    ck_assert_int_eq(handle_op(&sa, MEMD_OP_FREE, ha, &r), 0);
    seen v;
    peaks_of(&sa, &v);
    /* DEV: DRAM's group and its three regions, SRAM's group and its one allocatable
     * region; of the sessions only sa's own, its peak kept after the free. */
    ck_assert_uint_eq(v.by_what[MEMD_PEAK_GROUP], 2);
    ck_assert_uint_eq(v.by_what[MEMD_PEAK_REGION], 4);
    ck_assert_uint_eq(v.n, 1);
    ck_assert_uint_eq(v.sessions[0], sa.id);
    ck_assert_uint_eq(v.peak_of[0], 64 * KIB * 4);
    peaks_of(&sroot, &v);
    ck_assert_uint_eq(v.n, 2); /* the admin sees sa's and sb's (root holds nothing) */

    ck_assert_int_eq(reset_as(&sa, sb.id), -EPERM);
    ck_assert_int_eq(reset_as(&sa, MEMD_PEAKS_ALL), -EPERM);
    ck_assert_int_eq(reset_as(&sroot, 999), -ENOENT);
    ck_assert_int_eq(reset_as(&sa, 0), 0); /* its own: back to what it holds, nothing */
    ck_assert_uint_eq(sa.group_holds[0].peak.bytes, 0);
    ck_assert_uint_eq(st.devs[0].group[MEMD_KIND_DRAM].peak.bytes, 96 * KIB * 4);
    ck_assert_uint_eq(lim->peak, 96 * KIB * 4); /* a session's reset leaves dmem.peak */
    ck_assert_int_eq(reset_as(&sroot, MEMD_PEAKS_ALL), 0);
    ck_assert_uint_eq(lim->peak, 32 * KIB * 4);
    ck_assert_uint_eq(lim->current, 32 * KIB * 4);
    ck_assert_uint_eq(st.devs[0].group[MEMD_KIND_DRAM].peak.bytes, 32 * KIB * 4);
    ck_assert_uint_eq(sb.group_holds[0].peak.bytes, 32 * KIB * 4);

    memd_wire_peaks_req q = {.device = 12345};
    uint8_t p[MEMD_WIRE_PEAKS_REQ_SIZE];
    memd_wire_peaks_req_put(p, &q);
    req(&sa, MEMD_OP_PEAKS, p, sizeof p, &r);
    ck_assert_int_eq(r.h.status, -ENODEV);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("peaks");
    memd_test_tcase(s, "peaks", 0, setup, teardown,
                    (const TTest *const[]){random_against_model, frames_visibility_and_reset,
                                           NULL});
    return s;
}
