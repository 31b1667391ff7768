/* memd daemon — UPLOAD: documents larger than one frame (big plans and models) arrive in
 * ordered parts keyed by a client-chosen id, bounded per upload, per session and in
 * total; PLAN and MODEL_LOAD then name the upload instead of carrying the document. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "model_internal.h"
#include "wire.h"

static memd_upload *find(memd_models *ms, const memd_session *s, uint64_t id)
{
    for (memd_upload *u = ms->uploads; u; u = u->next)
        if (u->s == s && u->id == id)
            return u;
    return NULL;
}

static unsigned open_count(const memd_models *ms, const memd_session *s)
{
    unsigned n = 0;
    for (const memd_upload *u = ms->uploads; u; u = u->next)
        n += u->s == s;
    return n;
}

int memd_models_upload(memd_state *st, memd_session *s, const memd_upload_part *u,
                       memd_error *err)
{
    memd_models *ms = memd_models_of(st);
    if (!ms)
        return -ENOMEM;
    uint64_t n = u->len;
    memd_upload *up = find(ms, s, u->upload_id);
    if (!up) {
        if (u->offset != 0)
            return memd_error_set(err, -ENOENT, "upload %llu: no such upload open (a first part "
                         "has offset 0)", (unsigned long long)u->upload_id);
        if (u->total == 0 || u->total > MEMD_UPLOAD_MAX)
            return memd_error_set(err, -EFBIG, "upload %llu: total of %llu bytes is outside 1..%u",
                         (unsigned long long)u->upload_id, (unsigned long long)u->total,
                         MEMD_UPLOAD_MAX);
        if (open_count(ms, s) >= MEMD_UPLOAD_MAX_OPEN)
            return memd_error_set(err, -EMFILE, "upload %llu: this session already has %u uploads "
                         "open", (unsigned long long)u->upload_id, MEMD_UPLOAD_MAX_OPEN);
        if (ms->upload_bytes + u->total > MEMD_UPLOAD_TOTAL) {
            return memd_error_set(err, -ENOSPC, "upload %llu: the daemon holds %llu bytes of open "
                         "uploads; %llu more would pass its limit of %u",
                         (unsigned long long)u->upload_id,
                         (unsigned long long)ms->upload_bytes, (unsigned long long)u->total,
                         MEMD_UPLOAD_TOTAL);
        }
        if (!(up = calloc(1, sizeof *up)))
            return -ENOMEM;
        up->s = s;
        up->id = u->upload_id;
        up->total = u->total;
        up->next = ms->uploads;
        ms->uploads = up;
        ms->upload_bytes += up->total;
    } else if (u->total != up->total || u->offset != up->received) {
        /* Out of order or inconsistent: the document cannot be trusted any more. */
        memd_error_set(err, -EINVAL, "upload %llu: part at offset %llu of total %llu, "
                       "expected offset %llu of total %llu; upload dropped",
                       (unsigned long long)u->upload_id, (unsigned long long)u->offset,
                       (unsigned long long)u->total, (unsigned long long)up->received,
                       (unsigned long long)up->total);
        memd_models_upload_drop(ms, up);
        return err->code;
    }
    if (n > up->total - up->received) {
        memd_error_set(err, -EINVAL, "upload %llu: part of %llu bytes at offset %llu passes "
                       "the total of %llu; upload dropped", (unsigned long long)u->upload_id,
                       (unsigned long long)n, (unsigned long long)u->offset,
                       (unsigned long long)up->total);
        memd_models_upload_drop(ms, up);
        return err->code;
    }
    if (up->received + n > up->cap) {
        /* Grow by doubling (bounded by the total): memory follows what was sent. */
        size_t cap = up->cap ? up->cap : 64 * 1024;
        while (cap < up->received + n)
            cap *= 2;
        if (cap > up->total)
            cap = up->total;
        uint8_t *d = realloc(up->data, cap);
        if (!d) {
            memd_models_upload_drop(ms, up);
            return memd_error_set(err, -ENOMEM, "upload %llu: daemon out of memory; upload dropped",
                         (unsigned long long)u->upload_id);
        }
        up->data = d;
        up->cap = cap;
    }
    if (n)
        memcpy(up->data + up->received, u->data, n);
    up->received += n;
    return 0;
}

int memd_models_doc(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                    memd_doc *d, memd_error *err)
{
    *d = (memd_doc){0};
    /* Dispatch checked the shape (proto's opcode table): an id, then the document
     * inline when the id is 0, else nothing. */
    uint64_t id = memd_wire_u64(p);
    if (id == 0) {
        d->p = p + MEMD_WIRE_DOC_SIZE;
        d->len = h->len - MEMD_WIRE_DOC_SIZE;
        return 0;
    }
    memd_models *ms = memd_models_of(st);
    if (!ms)
        return memd_error_set(err, -ENOMEM, "daemon out of memory");
    memd_upload *up = find(ms, s, id);
    if (!up)
        return memd_error_set(err, -ENOENT, "%s: this session has no upload %llu",
                            memd_wire_opcode_name(h->opcode), (unsigned long long)id);
    if (up->received != up->total) {
        int rc = memd_error_set(err, -EINVAL, "%s: upload %llu has %llu of its %llu bytes; "
                              "upload dropped", memd_wire_opcode_name(h->opcode),
                              (unsigned long long)id, (unsigned long long)up->received,
                              (unsigned long long)up->total);
        memd_models_upload_drop(ms, up);
        return rc;
    }
    d->p = up->data;
    d->len = up->total;
    d->up = up;
    return 0;
}

void memd_models_doc_done(memd_state *st, memd_doc *d)
{
    if (d->up && st->models)
        memd_models_upload_drop(st->models, d->up);
    d->up = NULL;
}
