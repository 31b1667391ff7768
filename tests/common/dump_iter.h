/* memd tests — walking the records of one DUMP reply payload, for the tests that read
 * DUMP frames by hand. Header-only, like wire_frame.h: the codec it needs is linked by
 * those suites, not by memd-test-common. */
#ifndef MEMD_TESTS_DUMP_ITER_H
#define MEMD_TESTS_DUMP_ITER_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "wire.h"

/* Start with {.p = payload, .len = its length, .next = UINT64_MAX}. Each dump_next sets
 * tag, rec and size to the next record; a PAGE record also sets next, its cursor. */
typedef struct dump_iter {
    const uint8_t *p;
    size_t len, off;
    uint32_t tag;
    const uint8_t *rec;
    size_t size;
    uint64_t next; /* UINT64_MAX until a PAGE record is read */
} dump_iter;

/* false at the end of the payload; every record's tag header must fit it, and nothing
 * may follow a PAGE record (it ends a page). */
static inline bool dump_next(dump_iter *it)
{
    if (it->off == it->len)
        return false;
    ck_assert_uint_eq(it->next, UINT64_MAX);
    ck_assert_int_eq(memd_wire_tag_get(it->p + it->off, it->len - it->off, &it->tag, &it->size),
                     0);
    it->rec = it->p + it->off + MEMD_WIRE_TAG_SIZE;
    it->off += MEMD_WIRE_TAG_SIZE + it->size;
    if (it->tag == MEMD_REC_PAGE) {
        memd_wire_page_rec pr;
        ck_assert_int_eq(memd_wire_page_rec_get(it->rec, it->size, &pr), 0);
        it->next = pr.next;
    }
    return true;
}

#endif
