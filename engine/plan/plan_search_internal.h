/* memd engine — the exact plan search's internals, shared by plan_search.c (the
 * branch and bound), plan_search_ctx.c (what every run shares) and plan_search_place.c
 * (one placement and its undo). Not part of the engine API. */
#ifndef MEMD_ENGINE_PLAN_SEARCH_INTERNAL_H
#define MEMD_ENGINE_PLAN_SEARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan_internal.h"

enum { S_NOTFOUND = 0, S_FOUND = 1, S_ABORT = 2 };

#define NONE UINT32_MAX
#define TR_WIT 0x80000000u /* trail entry restores a witness (else a lowest offset) */

typedef struct trail_ent {
    uint32_t i; /* buffer (lowest offset) or TR_WIT | section (witness) */
    uint32_t w; /* witness entries: the previous witness */
    uint64_t v; /* lowest-offset entries: the previous value */
} trail_ent;

struct plan_search_ctx {
    const memd_plan_buffer *b;
    size_t n;
    const plan_graph *g;
    /* sections: maximal cliques, one per distinct end time */
    size_t ns;
    uint32_t *sl, *sh;    /* buffer -> [first, last+1) section */
    size_t *soff;         /* section -> members CSR; the unplaced ones come first */
    uint32_t *smem;
    uint32_t *nun_s;      /* per section: unplaced members (a prefix of its CSR row) */
    size_t *mbase;        /* buffer -> its membership slots (one per section it spans) */
    uint32_t *mpos;       /* membership slot -> position in the section's row */
    uint64_t *total0;     /* size of every member, per section */
    /* heuristic keys */
    uint64_t *k_width, *k_area, *k_total, *k_size, *k_len, *k_guide;
    uint32_t *twin_key;   /* identical buffers share a twin class id */
    uint64_t *sz, *amask; /* size and alignment - 1, compact for the hot loops */
    /* per run */
    uint64_t cap;
    uint64_t *minoff, *off, *out;
    uint8_t *placed;
    uint32_t *rank;
    uint32_t *twin_prev;  /* the identical buffer placed just before, or NONE */
    uint64_t *total;      /* unplaced size per section */
    uint32_t *wit;        /* per section: an unplaced member with minoff <= cap - total */
    uint32_t *wcnt;       /* per buffer: sections it is the witness of */
    uint32_t *pool;       /* partition lists (unplaced buffers), stacked */
    size_t npool, poolcap;
    uint32_t *upos;       /* position of a buffer in its partition's list */
    uint32_t *cuts;       /* boundary k (sections k|k+1): unplaced buffers across it */
    uint32_t *zero;       /* stack of boundaries whose cut count reached zero */
    size_t nzero, zerocap;
    trail_ent *tr;
    size_t ntr, trcap;
    uint32_t *cand;
    size_t ncand, candcap;
    uint64_t *mx;         /* stacked per-node prefix/suffix maxima of section totals */
    size_t nmx, mxcap;
    uint32_t *raised;     /* scratch of one placement: raised buffers that are witnesses */
    uint32_t *order;      /* scratch: the preorder */
    uint64_t nodes, node_limit;
    uint32_t disc;        /* discrepancies left (limited discrepancy search) */
    bool cut;             /* a branch was skipped for lack of discrepancies */
    plan_budget *bu;
    bool oom;
};

/* A partition: unplaced buffers confined to sections [s0, s1) that no unplaced buffer
 * outside it overlaps in time, so it can be solved on its own. Its list lives in the
 * pool at [base, base + nun). */
typedef struct part {
    size_t base, nun;
    uint32_t s0, s1;
} part;

/* Makes room for need entries of size bytes in the stack a of *cap entries (doubling
 * past need): returns the stack, moved or not, or NULL with c->oom set. */
void *memd_plan_search_grow(plan_search_ctx *c, void *a, size_t *cap, size_t need, size_t size);

/* Places x at o and propagates: lowest offsets of its unplaced neighbours, section
 * totals and witnesses. Returns 1 when the inference still passes, 0 when this
 * placement cannot lead to a plan; *hatless tells whether nothing unplaced overlaps x.
 * Everything it changes is undone by memd_plan_search_unplace (c->oom is set on allocation
 * failure). */
int memd_plan_search_place(plan_search_ctx *c, part *pt, uint32_t x, uint64_t o, bool *hatless);
/* Undoes the placement of x: upos was its place in pt's list, tr the trail's length
 * before the placement. */
void memd_plan_search_unplace(plan_search_ctx *c, part *pt, uint32_t x, uint32_t upos, size_t tr);

/* Sorts ord[0..m) into the preorder of a run (see memd_plan_search_run in plan_internal.h). */
void memd_plan_search_preorder(plan_search_ctx *c, uint32_t *ord, size_t m, int heuristic,
                               uint64_t seed);

#endif
