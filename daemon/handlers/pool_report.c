/* memd daemon — POOL_REPORT: a session's batch of sub-allocations made inside its client
 * pools (protocol.h, "Client pools"); the books validate it (core/pool_books.c). */
#include <errno.h>
#include <stdlib.h>

#include "dispatch.h"
#include "errmsg.h"
#include "pool_books.h"
#include "reply.h"
#include "wire.h"

int memd_op_pool_report(memd_state *st, memd_session *s, const memd_wire_hdr *h,
                        const uint8_t *p, memd_buf *out)
{
    uint32_t n = memd_wire_u32(p); /* dispatch checked it against the records */
    memd_wire_error err = {0};
    memd_wire_pool_op *ops = malloc(((size_t)n + 1) * sizeof *ops);
    if (!ops) {
        memd_err_set(&err, -ENOMEM, "daemon out of memory");
        return memd_reply_fail(st, h, out, &err, false);
    }
    p += MEMD_WIRE_COUNT_SIZE;
    for (uint32_t i = 0; i < n; i++, p += MEMD_WIRE_POOL_OP_SIZE) {
        int rc = memd_wire_pool_op_get(p, MEMD_WIRE_POOL_OP_SIZE, &ops[i]);
        if (rc < 0) {
            free(ops);
            memd_err_set(&err, rc, "malformed POOL_REPORT: op %u of %u has an unknown kind or "
                                   "a name without its NUL", i, n);
            return memd_reply_fail(st, h, out, &err, true);
        }
    }
    int rc = memd_pool_report(st, s, ops, n, &err);
    free(ops);
    if (rc < 0)
        return memd_reply_fail(st, h, out, &err, false);
    return memd_reply_begin(out, h->opcode, h->id, 0) ? 0 : -ENOMEM;
}
