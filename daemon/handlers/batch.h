/* memd daemon — what ALLOC_BATCH (batch.c) and ALLOC_BATCH_BANKS (batch_banks.c) share:
 * undoing a half-applied batch, and answering a retried one from the holds its first
 * sending made. */
#ifndef MEMD_DAEMON_BATCH_H
#define MEMD_DAEMON_BATCH_H

#include "buf.h"
#include "memd/protocol.h"
#include "state.h"

/* st->scratch holds n allocations (grown to the largest batch seen, then reused: no
 * allocation per request): 0 or -ENOMEM. */
int memd_batch_scratch(memd_state *st, uint32_t n);

/* Releases the session's k newest holds: memd_alloc_create puts each new hold at the
 * head of the session's list, so these are a batch's last k allocations. */
void memd_batch_rollback(memd_state *st, memd_session *s, uint32_t k);

/* The holds a retried batch's first sending made (protocol.h, MEMD_REQ_F_RETRY). */
typedef struct memd_batch_again {
    memd_hold **hs;            /* the n holds of request h->id, newest first */
    uint32_t n;
    size_t next;               /* unshared holds are taken from the oldest (the end) on */
} memd_batch_again;

/* For a retried batch of n records: 1 with *ag filled (free ag->hs after); 0 when the
 * first sending left no trace (apply the batch as new); -1 when the session holds some
 * but not n of them, or memory ran out: the error reply is queued and *ret is what the
 * handler returns (memd_reply_fail's result). */
int memd_batch_again_begin(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                           uint32_t n, memd_buf *out, memd_batch_again *ag, int *ret);

/* The allocation that answers the next record, req (NULL when it does not decode): a
 * shared record is the held allocation with its device and name; the others were
 * created in record order, so their handles rise with it. */
memd_alloc *memd_batch_again_next(const memd_state *st, memd_batch_again *ag,
                                  const memd_wire_alloc_req *req);

#endif
