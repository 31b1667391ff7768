/* The wire as it was before the generated codec (issue 23): every record of
 * tests/data/frames/records.txt, written by the hand-written codec, must be what this
 * tree's codec writes for the same value, and must read back to that value; every
 * malformed record the old codec refused must be refused with the same errno. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "check_main.h"
#include "frames_golden.h"
#include "wire.h"

#define LINE_MAX_BYTES (2 * FRAMES_BUF_MAX + 256)

typedef struct line {
    char kind[8], name[64], base[64], err[24];
    uint8_t bytes[FRAMES_BUF_MAX];
    size_t len;
} line;

static line *lines;
static size_t nlines;

static int unhex(const char *s, uint8_t *out, size_t *len)
{
    size_t n = strlen(s);
    if (n % 2 || n / 2 > FRAMES_BUF_MAX)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    *len = n / 2;
    return 0;
}

static void load(void)
{
    const char *root = getenv("MEMD_SOURCE_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/data/frames/records.txt", root ? root : ".");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[LINE_MAX_BYTES];
    char hex[2 * FRAMES_BUF_MAX + 1];
    while (fgets(buf, sizeof buf, f)) {
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        lines = realloc(lines, (nlines + 1) * sizeof *lines);
        ck_assert_ptr_nonnull(lines);
        line *l = &lines[nlines++];
        memset(l, 0, sizeof *l);
        int k;
        if (strncmp(buf, "rec ", 4) == 0)
            k = sscanf(buf, "%7s %63s %2048s", l->kind, l->name, hex) == 3;
        else
            k = sscanf(buf, "%7s %63s %63s %23s %2048s", l->kind, l->name, l->base, l->err,
                       hex) == 5;
        ck_assert_msg(k, "%s: bad line: %s", path, buf);
        ck_assert_msg(unhex(hex, l->bytes, &l->len) == 0, "%s: bad hex in %s", path, l->name);
    }
    fclose(f);
    ck_assert_uint_gt(nlines, 0);
}

static void unload(void)
{
    free(lines);
    lines = NULL;
    nlines = 0;
}

static void dump_diff(const char *name, const uint8_t *want, size_t wn, const uint8_t *got,
                      size_t gn)
{
    for (size_t i = 0; i < wn && i < gn; i++)
        if (want[i] != got[i]) {
            ck_abort_msg("%s: byte %zu is 0x%02x, recorded 0x%02x (lengths %zu, recorded %zu)",
                         name, i, got[i], want[i], gn, wn);
        }
    ck_assert_msg(wn == gn, "%s: %zu bytes, recorded %zu", name, gn, wn);
}

/* Every value encodes to the recorded bytes. */
START_TEST(encode_matches_recording)
{
    size_t checked = 0;
    for (size_t i = 0; i < nlines; i++) {
        const line *l = &lines[i];
        if (strcmp(l->kind, "rec") != 0)
            continue;
        const frames_rec *r = frames_rec_find(l->name);
        ck_assert_msg(r != NULL, "recorded %s has no golden value", l->name);
        uint8_t got[FRAMES_BUF_MAX];
        memset(got, 0xa5, sizeof got);
        size_t n = r->put(got);
        dump_diff(l->name, l->bytes, l->len, got, n);
        checked++;
    }
    ck_assert_uint_eq(checked, frames_nrecs);
}
END_TEST

/* Every recorded record decodes, and encodes again to the same bytes: with every field
 * distinct and non-zero, a field the decoder drops or misplaces shows as a byte. */
START_TEST(decode_reads_every_field)
{
    for (size_t i = 0; i < nlines; i++) {
        const line *l = &lines[i];
        if (strcmp(l->kind, "rec") != 0)
            continue;
        uint8_t got[FRAMES_BUF_MAX];
        size_t n = 0;
        int rc = frames_rec_find(l->name)->reput(l->bytes, l->len, got, &n);
        ck_assert_msg(rc == 0, "%s: recorded bytes refused: %d", l->name, rc);
        dump_diff(l->name, l->bytes, l->len, got, n);
    }
}
END_TEST

/* Every golden value is in the file: a record added to the table without regenerating the
 * file (from the reference codec) is not silently skipped. */
START_TEST(every_value_recorded)
{
    for (size_t k = 0; k < frames_nrecs; k++) {
        int found = 0;
        for (size_t i = 0; i < nlines && !found; i++)
            found = strcmp(lines[i].kind, "rec") == 0 &&
                    strcmp(lines[i].name, frames_recs[k].name) == 0;
        ck_assert_msg(found, "%s is not in records.txt", frames_recs[k].name);
    }
    for (size_t k = 0; k < frames_nbads; k++) {
        int found = 0;
        for (size_t i = 0; i < nlines && !found; i++)
            found = strcmp(lines[i].kind, "bad") == 0 &&
                    strcmp(lines[i].name, frames_bads[k].name) == 0;
        ck_assert_msg(found, "%s is not in records.txt", frames_bads[k].name);
    }
}
END_TEST

/* What the old decoder refused, the codec of this tree refuses with the same errno. */
START_TEST(malformed_refused_alike)
{
    size_t checked = 0;
    for (size_t i = 0; i < nlines; i++) {
        const line *l = &lines[i];
        if (strcmp(l->kind, "bad") != 0)
            continue;
        const frames_rec *r = frames_rec_find(l->base);
        ck_assert_msg(r != NULL, "%s: unknown base %s", l->name, l->base);
        int want = frames_errno_value(l->err);
        ck_assert_msg(want != 0, "%s: unknown errno %s", l->name, l->err);
        uint8_t got[FRAMES_BUF_MAX];
        size_t n;
        int rc = r->reput(l->bytes, l->len, got, &n);
        /* The recorded unknown tag (19) was assigned since (SESSION_CGROUP): still refused,
         * now as a record of the wrong size. */
        if (!strcmp(l->name, "dump.unknown_tag") && memd_wire_rec_size(memd_wire_u32(l->bytes)))
            want = EBADMSG;
        /* The recorded bad error detail (3) was assigned since (MEMD_ERR_DETAIL_LIMIT, a
         * cgroup limit): it decodes now. */
        if (!strcmp(l->name, "error.bad_detail") &&
            memd_wire_u32(l->bytes + 4) == MEMD_ERR_DETAIL_LIMIT)
            want = 0;
        /* The recorded bad bank mode (3) and unknown bank-set flag (2) were assigned since
         * (range lockstep): accepted now; test_wire.c refuses the first values past them. */
        if (!strcmp(l->name, "buffer.bad_bank_mode") && l->bytes[50] < MEMD_BANKS_MODE_COUNT)
            want = 0;
        if (!strcmp(l->name, "alloc_banks.unknown_flag") &&
            memd_wire_u32(l->bytes + MEMD_WIRE_ALLOC_REQ_SIZE) == MEMD_BANKSET_F_RANGE_LOCKSTEP)
            want = 0;
        /* The recorded unknown batch element flag (4) was assigned since (per-core shard
         * sizes): the element now says sizes follow its ids, and the frame is cut short. */
        if (!strcmp(l->name, "alloc_batch_banks.unknown_flag") &&
            memd_wire_u32(l->bytes + MEMD_WIRE_COUNT_SIZE + MEMD_WIRE_ALLOC_REQ_SIZE) ==
                MEMD_BANKSET_F_SIZES)
            want = EBADMSG;
        ck_assert_msg(rc == -want, "%s: decoder says %d, the old one -%s", l->name, rc, l->err);
        checked++;
    }
    ck_assert_uint_eq(checked, frames_nbads);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("frames-golden");
    TCase *tc = tcase_create("records");
    tcase_add_checked_fixture(tc, load, unload);
    tcase_add_test(tc, encode_matches_recording);
    tcase_add_test(tc, decode_reads_every_field);
    tcase_add_test(tc, every_value_recorded);
    tcase_add_test(tc, malformed_refused_alike);
    suite_add_tcase(s, tc);
    return s;
}
