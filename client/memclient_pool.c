/* libmemclient: client pools — sub-allocation inside ranges memd leased to the session,
 * in the process, with the engine's own range allocator (exact first fit, O(log n)).
 *
 * The fast path (memclient_pool_alloc / memclient_pool_free) takes the pool's mutex and
 * never the connection's: it places the buffer, records it, and marks the pool dirty.
 * What it did reaches memd later, batched (memclient_pool_report.c). A sub-allocation's
 * handle is (generation << 32 | record index + 1), so a free finds its record at once and
 * a stale or forged handle is refused instead of freeing someone else's buffer. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memclient_pool.h"
#include "units.h"

static void pools_close(memclient *c);

static const memclient_pool_hooks hooks = {
    .queue = memclient_pools_queue,
    .resync = memclient_pools_resync,
    .close = pools_close,
};

static int grow_array(void **arr, uint32_t *cap, size_t elem)
{
    uint32_t n = *cap ? *cap * 2 : 64;
    if (n < *cap)
        return -ENOMEM;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = n;
    return 0;
}

/* Leases one more range from memd (c->mu is taken inside: the caller holds no pool
 * lock). bytes: the size asked for, or 0 for the pool's request as it is. */
static int lease(memclient_pool *p, uint64_t bytes, memclient_buffer *buf)
{
    memclient_alloc_req r = p->req;
    if (bytes)
        r.bytes = bytes;
    memd_wire_alloc_req w;
    int rc = memclient_encode_alloc_req(&r, &w);
    if (rc < 0)
        return rc;
    w.flags |= MEMD_ALLOC_F_POOL;
    return memclient_alloc_wire(p->c, &w, buf);
}

static int add_lease(memclient_pool *p, const memclient_buffer *buf)
{
    memclient_plx_lease *l = &p->leases[p->nleases];
    int rc = memd_range_create_flags(buf->address, buf->size_per_bank, p->min_align,
                                     MEMD_RANGE_F_CALLER_SIZES, &l->range);
    if (rc < 0)
        return rc;
    l->buf = *buf;
    p->nleases++;
    p->leased += buf->size_per_bank;
    return 0;
}

int memclient_pool_create(memclient *c, const memclient_alloc_req *req, memclient_pool **out)
{
    if (!c || !req || !out)
        return memclient_fail(-EINVAL, "memclient_pool_create: NULL argument");
    *out = NULL;
    if (req->flags & MEMCLIENT_ALLOC_SHARED)
        return memclient_fail(-EINVAL, "a pool cannot be shared: it is its session's");
    if (req->flags & ~(uint32_t)MEMCLIENT_POOL_GROW)
        return memclient_fail(-EINVAL, "unknown pool flags 0x%x", req->flags);
    /* The pool places by one address map: lockstep over the group (or, for a session
     * bound to a sub-device, over its banks), never a bank set of its own. */
    if (req->nbank_set || req->per_bank)
        return memclient_fail(-EINVAL, "a pool takes no bank set and is not per bank");
    memclient_pool *p = calloc(1, sizeof *p);
    if (!p)
        return memclient_fail(-ENOMEM, "out of memory");
    p->c = c;
    p->req = *req;
    p->req.flags = 0;
    if (req->name) {
        size_t n = strnlen(req->name, MEMD_NAME_MAX);
        if (n >= MEMD_NAME_MAX) {
            free(p);
            return memclient_fail(-ENAMETOOLONG, "pool name is %zu bytes or more, at most %d",
                                  n, MEMD_NAME_MAX - 1);
        }
        memcpy(p->req_name, req->name, n);
        p->req.name = p->req_name;
    }
    p->grow = req->flags & MEMCLIENT_POOL_GROW;
    _Static_assert(MEMCLIENT_POOL_MIN_ALIGN % MEMD_POOL_GRANULE == 0,
                   "pool sub-allocations are reported in memd's granule");
    p->min_align = MEMCLIENT_POOL_MIN_ALIGN;
    p->free_head = MEMCLIENT_POOL_NONE;
    memclient_pool_lock_init(&p->lk); /* without membarrier the pool is shared: still correct */
    pthread_mutex_init(&p->grow_mu, NULL);
    memclient_buffer buf;
    int rc = lease(p, 0, &buf);
    if (rc == 0 && (rc = add_lease(p, &buf)) < 0) {
        memclient_free(c, buf.handle);
        memclient_fail(rc, "pool: out of memory for its allocator");
    }
    if (rc == 0 && (rc = memclient_lock(c)) == 0) {
        rc = memclient_pools_timer_start(c);
        if (rc == 0) {
            c->pool_hooks = &hooks;
            p->next = c->pools;
            if (c->pools)
                c->pools->prev = p;
            c->pools = p;
        }
        memclient_unlock(c);
        if (rc < 0) {
            memclient_free(c, buf.handle);
            memclient_fail(rc, "pool: cannot start its report timer: %s",
                           memclient_strerror(rc));
        }
    }
    if (rc < 0) {
        if (p->nleases)
            memd_range_destroy(p->leases[0].range);
        pthread_mutex_destroy(&p->grow_mu);
        memclient_pool_lock_fini(&p->lk);
        free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int memclient_pool_set_limit(memclient_pool *p, uint64_t max_bytes)
{
    if (!p)
        return memclient_fail(-EINVAL, "memclient_pool_set_limit: NULL pool");
    memclient_lock_how how = pool_lock_rare(p);
    p->limit = max_bytes;
    pool_unlock(p, how);
    return 0;
}

/* Places bytes in the first lease with room (p->mu held). 0 or -ENOMEM. */
static int place(memclient_pool *p, uint64_t bytes, uint64_t align, uint32_t *li,
                 uint64_t *addr)
{
    for (uint32_t i = 0; i < p->nleases; i++) {
        int rc = memd_range_alloc(p->leases[i].range, bytes, align, MEMD_DIR_BOTTOM_UP,
                                  MEMD_FIT_FIRST, addr);
        if (rc == 0) {
            *li = i;
            return 0;
        }
        if (rc != -ENOMEM)
            return rc;
    }
    return -ENOMEM;
}

/* An out-of-memory refusal with the pool's figures, as the daemon gives a region's (the
 * pool's unit is bytes of each bank): requested, allocated (in use), free and the largest
 * free block over its ranges (p's lock held). */
static int pool_full(const memclient_pool *p, uint64_t bytes, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int pool_full(const memclient_pool *p, uint64_t bytes, const char *fmt, ...)
{
    memclient_error e = {.status = -ENOMEM, .detail = MEMCLIENT_DETAIL_NOMEM,
                         .device = p->req.device, .cls = p->req.cls,
                         .kind = p->leases[0].buf.kind, .region = p->leases[0].buf.region,
                         .requested = bytes, .size_per_bank = bytes, .allocated = p->used};
    for (uint32_t i = 0; i < p->nleases; i++) {
        memd_range_stats rs;
        memd_range_stats_get(p->leases[i].range, &rs);
        e.free += rs.free;
        if (rs.largest_free > e.largest_free)
            e.largest_free = rs.largest_free;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e.message, sizeof e.message, fmt, ap);
    va_end(ap);
    return memclient_fail_with(&e);
}

/* Growth, with no lock held on entry or exit: one more lease if the limit allows, big
 * enough for the request when the pool's pages allow choosing its size. */
static int grow(memclient_pool *p, uint64_t bytes, uint64_t align)
{
    pthread_mutex_lock(&p->grow_mu);
    memclient_lock_how how = pool_lock_rare(p);
    uint64_t first = p->leases[0].buf.size_per_bank, leased = p->leased, limit = p->limit;
    uint32_t n = p->nleases;
    /* Another thread may have grown the pool meanwhile: try again first. */
    uint32_t li;
    uint64_t addr;
    int rc = place(p, bytes, align, &li, &addr);
    if (rc == 0)
        (void)memd_range_free_sized(p->leases[li].range, addr, bytes);
    pool_unlock(p, how);
    if (rc == 0) {
        pthread_mutex_unlock(&p->grow_mu);
        return 0;
    }
    uint64_t want = 0; /* 0: the pool's request as it is */
    if (p->req.page_size == 0 && p->req.dtype == MEMD_DTYPE_NONE && bytes + align > first)
        want = bytes + align; /* one page: the whole buffer is what every bank reserves */
    uint64_t add = want ? want : first;
    if (n >= MEMCLIENT_POOL_MAX_LEASES || (limit && (leased > limit || add > limit - leased))) {
        char h[3][24];
        how = pool_lock_rare(p);
        rc = pool_full(p, bytes, "pool full: %s in %u ranges, growth by %s would pass the "
                       "limit of %s (or %d ranges)", memd_human_bytes(leased, h[0], 24), n,
                       memd_human_bytes(add, h[1], 24), memd_human_bytes(limit, h[2], 24),
                       MEMCLIENT_POOL_MAX_LEASES);
        pool_unlock(p, how);
        pthread_mutex_unlock(&p->grow_mu);
        return rc;
    }
    memclient_buffer buf;
    rc = lease(p, want, &buf);
    if (rc == 0) {
        how = pool_lock_rare(p);
        rc = add_lease(p, &buf);
        pool_unlock(p, how);
        if (rc < 0) {
            memclient_free(p->c, buf.handle);
            memclient_fail(rc, "pool: out of memory for its allocator");
        }
    }
    pthread_mutex_unlock(&p->grow_mu);
    return rc;
}

static inline void mark_dirty(memclient_pool *p)
{
    if (p->dirty)
        return;
    p->dirty = true;
    /* Read first: in steady state the flag is set and the line stays shared. */
    if (!atomic_load_explicit(&p->c->pools_dirty, memory_order_relaxed))
        atomic_store_explicit(&p->c->pools_dirty, 1, memory_order_relaxed);
}

/* Room in the books for one more sub-allocation (p locked). */
static inline bool books_room(const memclient_pool *p)
{
    return p->free_head != MEMCLIENT_POOL_NONE || p->nrecs < p->recs_cap;
}

static int books_grow(memclient_pool *p)
{
    if (p->free_head == MEMCLIENT_POOL_NONE && p->nrecs == p->recs_cap &&
        grow_array((void **)&p->recs, &p->recs_cap, sizeof *p->recs) < 0)
        return -ENOMEM;
    return 0;
}

/* Records a placed sub-allocation (p locked, books_room true). */
static inline void commit(memclient_pool *p, uint32_t li, uint64_t addr, uint64_t bytes,
                          const char *name, size_t nlen, memclient_pool_buffer *out)
{
    uint32_t idx = p->free_head;
    if (idx != MEMCLIENT_POOL_NONE) {
        p->free_head = p->recs[idx].next_free;
    } else {
        idx = p->nrecs++;
        p->recs[idx].gen = 0;
    }
    memclient_plx_rec *r = &p->recs[idx];
    r->next_free = MEMCLIENT_POOL_LIVE;
    /* What the range reserved: the size rounded up to its unit (range.h). */
    uint64_t size = (bytes + p->min_align - 1) & ~(p->min_align - 1);
    r->address = addr;
    r->size = size;
    r->lease = li;
    r->gen = r->gen + 1 ? r->gen + 1 : 1;
    r->reported = 0;
    p->nfresh++;
    if (nlen)
        memcpy(r->name, name, nlen);
    r->name[nlen] = '\0';
    p->used += size;
    p->live++;
    if (p->used > p->peak)
        p->peak = p->used;
    mark_dirty(p);
    const memclient_buffer *l = &p->leases[li].buf;
    *out = (memclient_pool_buffer){.handle = (uint64_t)r->gen << 32 | (idx + 1),
                                   .address = addr, .size = size,
                                   .offset = addr - l->address, .lease = l->handle};
}

/* Everything but the common case: bad arguments, books to grow, a full pool (growth). */
static int __attribute__((cold, noinline))
alloc_slow(memclient_pool *p, uint64_t bytes, uint64_t alignment, const char *name,
           memclient_pool_buffer *out)
{
    if (!p || !out)
        return memclient_fail(-EINVAL, "memclient_pool_alloc: NULL argument");
    if (bytes == 0 || (alignment & (alignment - 1)))
        return memclient_fail(-EINVAL, "pool sub-allocation of %llu bytes, alignment %llu: "
                              "the size must not be 0 and the alignment a power of two",
                              (unsigned long long)bytes, (unsigned long long)alignment);
    size_t nlen = name ? strnlen(name, MEMD_NAME_MAX) : 0;
    if (nlen >= MEMD_NAME_MAX)
        return memclient_fail(-ENAMETOOLONG, "sub-allocation name is %zu bytes or more, at "
                              "most %d", nlen, MEMD_NAME_MAX - 1);
    uint32_t li = 0;
    uint64_t addr = 0;
    memclient_lock_how how = pool_lock(p);
    int rc = books_grow(p);
    if (rc == 0)
        rc = place(p, bytes, alignment, &li, &addr);
    while (rc == -ENOMEM && p->grow && books_room(p)) {
        pool_unlock(p, how);
        if ((rc = grow(p, bytes, alignment)) < 0)
            return rc;
        how = pool_lock(p);
        /* The books' room may have been used meanwhile by another thread. */
        rc = books_grow(p);
        if (rc == 0)
            rc = place(p, bytes, alignment, &li, &addr);
    }
    if (rc < 0) {
        bool books = !books_room(p);
        if (rc == -ENOMEM && !books) {
            char h[3][24];
            rc = pool_full(p, bytes, "pool full: no room for %s (alignment %llu) in %s, %s in "
                           "use%s", memd_human_bytes(bytes, h[0], 24),
                           (unsigned long long)alignment, memd_human_bytes(p->leased, h[1], 24),
                           memd_human_bytes(p->used, h[2], 24),
                           p->grow ? "" : " (create it with MEMCLIENT_POOL_GROW to grow)");
            pool_unlock(p, how);
            return rc;
        }
        pool_unlock(p, how);
        if (books)
            return memclient_fail(-ENOMEM, "pool: out of memory for its books");
        return memclient_fail(rc, "pool sub-allocation of %llu bytes: %s",
                              (unsigned long long)bytes, memclient_strerror(rc));
    }
    commit(p, li, addr, bytes, name, nlen, out);
    pool_unlock(p, how);
    return 0;
}

int memclient_pool_alloc(memclient_pool *p, uint64_t bytes, uint64_t alignment,
                         const char *name, memclient_pool_buffer *out)
{
    /* The common case only; alloc_slow judges and says everything else. */
    if (__builtin_expect(!p || !out || bytes == 0 || (alignment & (alignment - 1)), 0))
        return alloc_slow(p, bytes, alignment, name, out);
    size_t nlen = name ? strnlen(name, MEMD_NAME_MAX) : 0;
    if (__builtin_expect(nlen >= MEMD_NAME_MAX, 0))
        return alloc_slow(p, bytes, alignment, name, out);
    memclient_lock_how how = pool_lock(p);
    uint32_t li = 0;
    uint64_t addr = 0;
    if (__builtin_expect(!books_room(p) || place(p, bytes, alignment, &li, &addr) < 0, 0)) {
        pool_unlock(p, how);
        return alloc_slow(p, bytes, alignment, name, out);
    }
    commit(p, li, addr, bytes, name, nlen, out);
    pool_unlock(p, how);
    return 0;
}

static int __attribute__((cold, noinline)) free_failed(uint64_t handle, int err)
{
    if (err == -ENOMEM)
        return memclient_fail(-ENOMEM, "pool: out of memory for its books");
    return memclient_fail(-ENOENT, "pool handle 0x%llx is not a live sub-allocation of this "
                          "pool (freed already?)", (unsigned long long)handle);
}

int memclient_pool_free(memclient_pool *p, uint64_t handle)
{
    if (!p)
        return memclient_fail(-EINVAL, "memclient_pool_free: NULL pool");
    uint32_t idx = (uint32_t)handle - 1, gen = (uint32_t)(handle >> 32);
    memclient_lock_how how = pool_lock(p);
    memclient_plx_rec *r = idx < p->nrecs ? &p->recs[idx] : NULL;
    if (__builtin_expect(!r || r->gen != gen || r->next_free != MEMCLIENT_POOL_LIVE, 0)) {
        pool_unlock(p, how);
        return free_failed(handle, -ENOENT);
    }
    if (!r->reported) {
        p->nfresh--; /* never reported: memd need not hear of it at all */
    } else {
        if (p->ngone == p->gone_cap &&
            grow_array((void **)&p->gone, &p->gone_cap, sizeof *p->gone) < 0) {
            pool_unlock(p, how);
            return free_failed(handle, -ENOMEM);
        }
        const memclient_plx_lease *l = &p->leases[r->lease];
        p->gone[p->ngone++] = (memclient_plx_gone){.lease_handle = l->buf.handle,
                                                    .offset = r->address - l->buf.address,
                                                    .size = r->size};
        mark_dirty(p);
    }
    (void)memd_range_free_sized(p->leases[r->lease].range, r->address, r->size);
    p->used -= r->size;
    p->live--;
    r->next_free = p->free_head;
    p->free_head = idx;
    pool_unlock(p, how);
    return 0;
}

static void pool_release(memclient_pool *p)
{
    for (uint32_t i = 0; i < p->nleases; i++)
        memd_range_destroy(p->leases[i].range);
    free(p->recs);
    free(p->gone);
    memclient_pool_lock_fini(&p->lk);
    pthread_mutex_destroy(&p->grow_mu);
    free(p);
}

static void unlink_pool(memclient *c, memclient_pool *p)
{
    if (p->prev)
        p->prev->next = p->next;
    else
        c->pools = p->next;
    if (p->next)
        p->next->prev = p->prev;
}

int memclient_pool_destroy(memclient_pool *p)
{
    if (!p)
        return 0;
    memclient *c = p->c;
    /* Off the list first: what it has not reported is never sent (its leases go). */
    pthread_mutex_lock(&c->mu);
    unlink_pool(c, p);
    pthread_mutex_unlock(&c->mu);
    uint64_t handles[MEMCLIENT_POOL_MAX_LEASES];
    for (uint32_t i = 0; i < p->nleases; i++)
        handles[i] = p->leases[i].buf.handle;
    int rc = memclient_free_batch(c, handles, p->nleases);
    pool_release(p);
    return rc;
}

static void pools_close(memclient *c)
{
    memclient_pools_timer_stop(c);
    while (c->pools) {
        memclient_pool *p = c->pools;
        unlink_pool(c, p);
        pool_release(p);
    }
}

int memclient_pool_query(memclient_pool *p, memclient_pool_info *out)
{
    if (!p || !out)
        return memclient_fail(-EINVAL, "memclient_pool_query: NULL argument");
    unsigned refused = atomic_load_explicit(&p->c->refused_errno, memory_order_relaxed);
    memclient_lock_how how = pool_lock_rare(p);
    *out = (memclient_pool_info){.handle = p->leases[0].buf.handle, .address =
                                 p->leases[0].buf.address, .leased = p->leased,
                                 .used = p->used, .peak = p->peak, .limit = p->limit,
                                 .leases = p->nleases, .allocations = p->live,
                                 .unreported = p->nfresh + p->ngone, .refused_errno = refused};
    if (refused) /* memd's books lag: none of the pool counts as heard of */
        out->unreported = p->live > out->unreported ? p->live : out->unreported;
    pool_unlock(p, how);
    return 0;
}

int memclient_pool_lease(memclient_pool *p, uint32_t i, memclient_buffer *out)
{
    if (!p || !out)
        return memclient_fail(-EINVAL, "memclient_plx_lease: NULL argument");
    memclient_lock_how how = pool_lock_rare(p);
    int rc = i < p->nleases ? 0 : -ENOENT;
    if (rc == 0)
        *out = p->leases[i].buf;
    pool_unlock(p, how);
    return rc < 0 ? memclient_fail(rc, "pool has %u ranges, no range %u", p->nleases, i) : 0;
}
