/* common/bisect.h: the one binary search, against a linear scan. */
#include <stdint.h>
#include <stdlib.h>

#include "bisect.h"
#include "check_main.h"

typedef struct counted {
    uint64_t k;
    size_t calls;
} counted;

static bool counted_below(const void *elem, const void *key)
{
    counted *q = (counted *)key;
    q->calls++;
    return *(const uint64_t *)elem < q->k;
}

/* Every length up to 70 (odd, even, powers of two and their neighbours), runs of
 * duplicates, keys below, between, on and above the entries, and the extremes. */
START_TEST(lower_bound_against_scan)
{
    uint64_t a[70];
    for (size_t n = 0; n <= 70; n++) {
        for (size_t i = 0; i < n; i++)
            a[i] = 10 * (i / 3);
        if (n > 5)
            a[n - 1] = UINT64_MAX;
        uint64_t keys[200];
        size_t nk = 0;
        for (uint64_t k = 0; k <= 10 * (n / 3) + 11; k += 1 + (k % 5 == 0) * 4)
            keys[nk++] = k;
        keys[nk++] = UINT64_MAX - 1;
        keys[nk++] = UINT64_MAX;
        for (size_t j = 0; j < nk; j++) {
            size_t want = 0;
            while (want < n && a[want] < keys[j])
                want++;
            ck_assert_uint_eq(memd_lower_bound_u64(a, n, keys[j]), want);
            counted q = {keys[j], 0};
            ck_assert_uint_eq(memd_partition_point(a, n, sizeof(*a), counted_below, &q), want);
            size_t log2n = 0;
            while (((size_t)1 << log2n) < n)
                log2n++;
            ck_assert_uint_le(q.calls, log2n + 1); /* O(log n) */
        }
    }
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("bisect");
    TCase *tc = tcase_create("bisect");
    tcase_add_test(tc, lower_bound_against_scan);
    suite_add_tcase(s, tc);
    return s;
}
