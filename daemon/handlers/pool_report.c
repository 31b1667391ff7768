/* memd daemon — POOL_REPORT: a session's batch of sub-allocations made inside its client
 * pools (protocol.h, "Client pools"); the books validate it (core/pool_books.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "alloc.h"
#include "dispatch.h"
#include "error.h"
#include "oom.h"
#include "pool_books.h"
#include "reply.h"
#include "wire.h"

/* The pool an op names, when it is a live pool of s; else NULL with the error in err. */
static memd_alloc *pool_of(memd_state *st, memd_session *s, uint32_t i,
                           const memd_pool_op *op, memd_error *err)
{
    memd_alloc *a = memd_alloc_find(st, op->pool);
    if (!a || !memd_alloc_hold_of(a, s)) {
        memd_access_error(s, op->pool, a, err);
        char why[160];
        memcpy(why, err->msg, sizeof why);
        why[sizeof why - 1] = '\0';
        memd_error_set(err, err->code, "pool report op %u: %s%s", i, why,
                     a ? "" : " (a pool freed already, or never created)");
        return NULL;
    }
    if (!a->pool) {
        memd_error_set(err, -EINVAL, "pool report op %u: handle %llu is not a pool (allocate "
                     "it with the pool flag)", i, (unsigned long long)op->pool);
        return NULL;
    }
    return a;
}

int memd_op_pool_report(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    uint32_t n = memd_wire_u32(p); /* dispatch checked it against the records */
    memd_error err;
    memd_error_reset(&err);
    memd_pool_op *ops = malloc(((size_t)n + 1) * sizeof *ops);
    memd_alloc **pools = malloc(((size_t)n + 1) * sizeof *pools);
    if (!ops || !pools) {
        free(ops);
        free(pools);
        memd_self_oom(&err);
        return memd_reply_fail(st, h, out, &err, false);
    }
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++, p += MEMD_WIRE_POOL_OP_SIZE) {
        memd_wire_pool_op w;
        int rc = memd_wire_pool_op_get(p, MEMD_WIRE_POOL_OP_SIZE, &w);
        if (rc < 0) {
            free(ops);
            free(pools);
            memd_error_set(&err, rc, "malformed POOL_REPORT: op %u of %u has an unknown kind or "
                                   "a name without its NUL", i, n);
            return memd_reply_fail(st, h, out, &err, true);
        }
        memd_pool_op_of(&w, &ops[i]);
        /* The pool's granule (libmemclient rounds every sub-allocation to it): a report
         * of offset 3 or size 5 describes no sub-allocation a client made. */
        if (w.op != MEMD_POOL_OP_RESET &&
            (w.offset % MEMD_POOL_GRANULE || w.size % MEMD_POOL_GRANULE)) {
            free(ops);
            free(pools);
            memd_error_set(&err, -EINVAL, "pool report op %u: [%llu, +%llu) on pool %llu: "
                           "offsets and sizes are multiples of %u bytes", i,
                           (unsigned long long)w.offset, (unsigned long long)w.size,
                           (unsigned long long)w.pool, MEMD_POOL_GRANULE);
            return memd_reply_fail(st, h, out, &err, false);
        }
    }
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++)
        if (!(pools[i] = pool_of(st, s, i, &ops[i], &err)))
            rc = err.code;
    if (rc == 0)
        rc = memd_pool_report(st, s, pools, ops, n, &err);
    free(ops);
    free(pools);
    return memd_reply_done(st, h, out, &err, rc);
}
