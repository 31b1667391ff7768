/* libmemclient internals: client pools (memclient_pool.c: sub-allocation;
 * memclient_pool_report.c: telling the daemon). Nothing here is exported. */
#ifndef MEMD_CLIENT_MEMCLIENT_POOL_H
#define MEMD_CLIENT_MEMCLIENT_POOL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "memclient_internal.h"
#include "memclient_pool_lock.h"
#include "range.h"

#define MEMCLIENT_POOL_NONE UINT32_MAX
#define MEMCLIENT_POOL_LIVE (UINT32_MAX - 1) /* next_free of a live record */
#define MEMCLIENT_POOL_MAX_LEASES MEMCLIENT_POOL_MAX_RANGES

/* One range memd leased to the pool (the first, and one per growth). */
typedef struct memclient_plx_lease {
    memd_range *range;          /* [address, address + size) in the group's address map */
    memclient_buffer buf;
} memclient_plx_lease;

/* One sub-allocation (live), or a free record on the pool's free list. */
typedef struct memclient_plx_rec {
    uint64_t address, size;
    uint32_t gen;               /* in the handle: a stale handle is refused */
    uint32_t lease;
    uint32_t reported;          /* memd has heard of it (else a free need not be told) */
    uint32_t next_free;         /* the free list; LIVE while in use */
    char name[MEMD_NAME_MAX];
} memclient_plx_rec;

/* A freed sub-allocation the daemon has been told of and must hear freed. */
typedef struct memclient_plx_gone {
    uint64_t lease_handle, offset, size;
} memclient_plx_gone;

struct memclient_pool {
    memclient *c;
    memclient_pool_lock lk;     /* pool_lock: everything below but the list links (c->mu) */
    pthread_mutex_t grow_mu;    /* one growth at a time; taken before c->mu, never under mu */
    memclient_alloc_req req;    /* what each lease asks for (name copied into req_name) */
    char req_name[MEMD_NAME_MAX];
    bool grow;
    uint64_t limit;             /* growth: leased bytes never exceed it (0: no limit) */
    uint64_t min_align;
    memclient_plx_lease leases[MEMCLIENT_POOL_MAX_LEASES];
    uint32_t nleases;
    uint64_t leased;            /* bytes */
    memclient_plx_rec *recs;
    uint32_t nrecs, recs_cap, free_head;
    uint32_t nfresh;            /* live sub-allocations not reported yet (the report finds
                                   them by a walk over the records: no list to keep on the
                                   fast path) */
    memclient_plx_gone *gone;  /* frees not reported yet */
    uint32_t ngone, gone_cap;
    bool dirty;
    bool reset;                 /* the next report begins with a RESET of every lease */
    uint64_t used, peak;
    uint32_t live;
    struct memclient_pool *prev, *next; /* c->pools, under c->mu */
};

/* The pool's lock (memclient_pool_lock.h): pool_lock on the fast path (allocation and
 * free), pool_lock_rare elsewhere (reports, growth, queries). */
static inline memclient_lock_how pool_lock(memclient_pool *p)
{
    return memclient_pool_lock_take(&p->lk);
}

static inline memclient_lock_how pool_lock_rare(memclient_pool *p)
{
    return memclient_pool_lock_slow(&p->lk, true);
}

static inline void pool_unlock(memclient_pool *p, memclient_lock_how how)
{
    memclient_pool_lock_give(&p->lk, how);
}

/* ---- memclient_pool_report.c (caller holds c->mu) ---- */
/* Queues POOL_REPORT frames for every dirty pool of c (the piggyback on a request).
 * Their replies are read by whoever waits next; a refused one is kept for
 * memclient_pool_flush and makes the next timer tick or flush resync (never a
 * piggyback: a report memd keeps refusing must not ride on every request). */
void memclient_pools_queue(memclient *c);
/* After a reclaim: the daemon's books are empty, so every live sub-allocation is
 * reported again and the pending frees are dropped. */
void memclient_pools_resync(memclient *c);
/* Starts the connection's report timer once (0 or -errno). */
int memclient_pools_timer_start(memclient *c);
/* Stops it (memclient_disconnect, without c->mu). */
void memclient_pools_timer_stop(memclient *c);


#endif
