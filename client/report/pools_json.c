/* The client pools of a snapshot in the JSON dump: each pool with its owner, range,
 * pooled bytes, "as of" time and, when dumped with MEMCLIENT_DUMP_SUBALLOCS, its
 * sub-allocations (name, offset from the pool, absolute address, size). */
#include <inttypes.h>
#include <stdio.h>

#include "json.h"
#include "report.h"

static const memclient_alloc_info *alloc_of(const memclient_snapshot *s, uint64_t handle)
{
    for (size_t i = 0; i < s->nallocs; i++)
        if (s->allocs[i].buf.handle == handle)
            return &s->allocs[i];
    return NULL;
}

void memd_report_pools_json(FILE *f, const memclient_snapshot *s)
{
    fprintf(f, ",\n  \"pools\": [");
    size_t sub = 0;
    for (size_t i = 0; i < s->npools; i++) {
        const memclient_pool_rec *p = &s->pools[i];
        const memclient_alloc_info *a = alloc_of(s, p->handle);
        uint64_t age = s->server.now_ns > p->as_of_ns ? s->server.now_ns - p->as_of_ns : 0;
        fprintf(f, "%s\n    {\"handle\": %" PRIu64 ", \"device\": %" PRIu32
                   ", \"address\": %" PRIu64 ", \"size\": %" PRIu64 ", \"pid\": %" PRIu32
                   ", \"session\": %" PRIu32 ", \"process\": ",
                i ? "," : "", p->handle, a ? a->device : 0, a ? a->buf.address : 0,
                a ? a->buf.size_per_bank : 0, a ? a->pid : 0, a ? a->session_id : 0);
        memd_json_str(f, a ? a->comm : "");
        fprintf(f, ", \"name\": ");
        memd_json_str(f, a ? a->name : "");
        fprintf(f, ", \"pooled_bytes\": %" PRIu64 ", \"suballocation_count\": %" PRIu32
                   ", \"reports\": %" PRIu64 ", \"as_of_ns\": %" PRIu64 ", \"as_of_age_s\": %.3f"
                   ", \"suballocations\": [",
                p->pooled_bytes, p->suballocs, p->reports, p->as_of_ns, (double)age / 1e9);
        bool first = true;
        for (; sub < s->nsuballocs && s->suballocs[sub].pool == p->handle; sub++) {
            const memclient_suballoc_rec *x = &s->suballocs[sub];
            fprintf(f, "%s\n      {\"name\": ", first ? "" : ",");
            memd_json_str(f, x->name);
            fprintf(f, ", \"offset\": %" PRIu64 ", \"address\": %" PRIu64 ", \"size\": %" PRIu64
                       "}", x->offset, (a ? a->buf.address : 0) + x->offset, x->size);
            first = false;
        }
        fprintf(f, "%s]}", first ? "" : "\n    ");
    }
    fprintf(f, "%s]", s->npools ? "\n  " : "");
}
