/* memd daemon — the typed boundary: wire records <-> core's domain types, and the one
 * conversion of the daemon's error to the wire's. */
#ifndef MEMD_DAEMON_CONVERT_H
#define MEMD_DAEMON_CONVERT_H

#include <string.h>

#include "alloc.h"
#include "error.h"
#include "event.h"
#include "memd/protocol.h"
#include "pool_books.h"

void memd_error_to_wire(const memd_error *e, memd_wire_error *w);

/* w->name is read through r->name: w must outlive r's use. Inline: one per record of
 * every ALLOC_BATCH, the copy folds into the decoding loop. */
static inline void memd_alloc_request_of(const memd_wire_alloc_req *w, memd_alloc_request *r)
{
    *r = (memd_alloc_request){
        .device = w->device,
        .cls = w->cls,
        .scope = w->scope,
        .dtype = w->dtype,
        .ndim = w->ndim,
        .bytes = w->bytes,
        .page_size = w->page_size,
        .alignment = w->alignment,
        .banks = w->banks,
        .shared = (w->flags & MEMD_ALLOC_F_SHARED) != 0,
        .pool = (w->flags & MEMD_ALLOC_F_POOL) != 0,
        .name = w->name,
    };
    memcpy(r->shape, w->shape, sizeof r->shape);
}

void memd_pool_op_of(const memd_wire_pool_op *w, memd_pool_op *op);
/* A bank set's flags, its ids decoded from raw (the encoded ids after w) into ids and, with
 * MEMD_BANKSET_F_SIZES, its sizes into sizes (each with room for w->count; b->set and
 * b->sizes point there, so they must outlive b's use). */
memd_alloc_banks memd_alloc_banks_of(const memd_wire_bankset *w, const uint8_t *raw,
                                     uint32_t *ids, uint64_t *sizes);
/* Whether an ALLOC_BANKS payload's set asks for anything but plain lockstep. */
static inline bool memd_alloc_banks_any(const memd_alloc_banks *b)
{
    return b->nset || b->per_bank || b->range_lockstep;
}

void memd_alloc_to_buffer(const memd_state *st, const memd_alloc *a, memd_wire_buffer *b);
void memd_alloc_to_info(const memd_state *st, const memd_alloc *a, memd_wire_alloc_info *i);
void memd_bank_addr_to_wire(const memd_bank_addr *b, memd_wire_bank_addr *w);
/* Writes count n, then the first n banks of a (memd_alloc_bank_at) at o: the bank list
 * of BANK_ADDRS, ALLOC_BANKS and ALLOC_BATCH_BANKS replies. Returns the end. */
uint8_t *memd_alloc_put_bank_addrs(const memd_state *st, const memd_alloc *a, uint32_t n,
                                   uint8_t *o);
void memd_event_to_wire(const memd_event_rec *e, memd_wire_event *w);
/* A flight recorder record as HISTORY sends it (history.c). */
struct memd_hist_view;
void memd_hist_view_to_wire(const struct memd_hist_view *v, memd_wire_hist_event *e);

#endif
