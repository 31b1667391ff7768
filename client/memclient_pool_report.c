/* libmemclient: client pools — telling memd what the pools did.
 *
 * Each pool keeps what memd has not heard yet: the sub-allocations made since the last
 * report (a free of one of those cancels it: memd never hears of a buffer that lived
 * between two reports) and the frees of reported ones. A report goes out as POOL_REPORT
 * frames, frees first (so an allocation may reuse their space), either
 *  - piggybacked: the next request of any thread on the connection queues it just before
 *    its own frame, so both leave in one write (memclient_lock), or
 *  - from the connection's report timer, every MEMCLIENT_POOL_REPORT_MS (50 ms) while
 *    something is unreported; the timer waits for memd's answer.
 * So memd's books lag the process by at most 50 ms plus one round trip, unless the
 * connection is held by a long request (a plan), which is preceded by its own report. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memclient_pool.h"
#include "wire.h"

/* Room for one more op in the current frame, beginning a new frame when needed. */
typedef struct report_frame {
    uint8_t *p;                 /* next op's bytes */
    uint32_t left;              /* ops that still fit in the frame begun */
    uint8_t *count_at;
    uint32_t count;
} report_frame;

static void frame_end(report_frame *f)
{
    if (f->count_at)
        memd_wire_count_put(f->count_at, f->count);
    f->count_at = NULL;
    f->left = 0;
}

static uint8_t *next_op(memclient *c, report_frame *f, uint32_t remaining)
{
    if (f->left == 0) {
        frame_end(f);
        uint32_t per = (c->info.max_frame - MEMD_WIRE_COUNT_SIZE) / MEMD_WIRE_POOL_OP_SIZE;
        uint32_t n = remaining < per ? remaining : per;
        uint64_t seq;
        int err = 0;
        uint8_t *p = memclient_begin(c, MEMD_OP_POOL_REPORT,
                                     MEMD_WIRE_COUNT_SIZE + n * MEMD_WIRE_POOL_OP_SIZE,
                                     MEMCLIENT_OUT_NONE, NULL, 0, true, &seq, &err);
        if (!p)
            return NULL;
        /* Nobody takes this result: it is retired as soon as its reply is read. */
        memclient_slot_at(c, seq)->consumed = true;
        c->report_seq = seq;
        c->report_queued = true;
        f->count_at = p;
        f->p = p + MEMD_WIRE_COUNT_SIZE;
        f->left = n;
        f->count = 0;
    }
    uint8_t *p = f->p;
    f->p += MEMD_WIRE_POOL_OP_SIZE;
    f->left--;
    f->count++;
    return p;
}

/* Everything p has not reported, into frames (p->mu held). False if the send buffer
 * could not grow: what is left stays for the next report. */
static bool queue_pool(memclient *c, memclient_pool *p, report_frame *f)
{
    for (uint32_t i = 0; p->reset && i < p->nleases; i++) {
        uint8_t *o = next_op(c, f, p->nleases - i + p->nfresh);
        if (!o)
            return false; /* all resets again next time: a second one is harmless */
        memd_wire_pool_op op = {.pool = p->leases[i].buf.handle, .op = MEMD_POOL_OP_RESET};
        memd_wire_pool_op_put(o, &op);
    }
    p->reset = false;
    while (p->ngone > 0) {
        uint8_t *o = next_op(c, f, p->ngone + p->nfresh);
        if (!o)
            return false;
        const memclient_plx_gone *g = &p->gone[p->ngone - 1];
        memd_wire_pool_op op = {.pool = g->lease_handle, .offset = g->offset, .size = g->size,
                                .op = MEMD_POOL_OP_FREE};
        memd_wire_pool_op_put(o, &op);
        p->ngone--;
    }
    for (uint32_t i = 0; i < p->nrecs && p->nfresh > 0; i++) {
        memclient_plx_rec *r = &p->recs[i];
        if (r->next_free != MEMCLIENT_POOL_LIVE || r->reported)
            continue;
        uint8_t *o = next_op(c, f, p->nfresh);
        if (!o)
            return false;
        const memclient_buffer *l = &p->leases[r->lease].buf;
        memd_wire_pool_op op = {.pool = l->handle, .offset = r->address - l->address,
                                .size = r->size, .op = MEMD_POOL_OP_ALLOC};
        memcpy(op.name, r->name, sizeof op.name);
        memd_wire_pool_op_put(o, &op);
        r->reported = 1;
        p->nfresh--;
    }
    return true;
}

static void queue_all(memclient *c)
{
    /* Cleared first: a pool that changes meanwhile sets it again. */
    atomic_store_explicit(&c->pools_dirty, 0, memory_order_relaxed);
    report_frame f = {0};
    for (memclient_pool *p = c->pools; p; p = p->next) {
        memclient_lock_how how = pool_lock_rare(p);
        bool ok = true;
        if (p->dirty) {
            ok = queue_pool(c, p, &f);
            p->dirty = !ok;
        }
        pool_unlock(p, how);
        if (!ok) {
            atomic_store_explicit(&c->pools_dirty, 1, memory_order_relaxed);
            break;
        }
        /* Each pool's ops in frames of their own: a frame is never left half empty at
         * the end of a pool and then filled with another's count wrongly. */
        frame_end(&f);
    }
    frame_end(&f);
}

void memclient_pools_queue(memclient *c)
{
    if (!c->reports_refused)
        queue_all(c);
}

/* Every live sub-allocation is to be reported again; reset: after telling memd to
 * forget what its books hold for the pool. */
static void resync(memclient *c, bool reset)
{
    for (memclient_pool *p = c->pools; p; p = p->next) {
        memclient_lock_how how = pool_lock_rare(p);
        p->reset = reset;
        p->ngone = 0;
        p->nfresh = 0;
        for (uint32_t i = 0; i < p->nrecs; i++) {
            memclient_plx_rec *r = &p->recs[i];
            if (r->next_free == MEMCLIENT_POOL_LIVE) {
                r->reported = 0;
                p->nfresh++;
            }
        }
        p->dirty = true;
        pool_unlock(p, how);
    }
    atomic_store_explicit(&c->pools_dirty, 1, memory_order_relaxed);
}

void memclient_pools_resync(memclient *c)
{
    c->reports_refused = false; /* a reclaim's books start empty: no reset needed */
    resync(c, false);
}

/* The timer's and flush's report: after a refusal, the pools' whole state (c->mu held).
 * Every pool counts as unreported from then on (memclient_pool_info.unreported); the
 * timer sends the resync only once its back-off passed (memclient_io.c), a flush at
 * once. */
static void queue_or_resync(memclient *c, bool now)
{
    if (c->reports_refused) {
        if (!c->refused_marked) {
            resync(c, true);
            c->refused_marked = true;
        }
        if (!now && memclient_now_ns() < c->resync_at_ns)
            return;
        c->reports_refused = false;
    }
    queue_all(c);
}

/* Sends every pending report and waits for memd's answer to the last (c->mu held). */
static int sync_reports(memclient *c)
{
    if (!c->report_queued || c->report_seq < c->reply_seq)
        return memclient_send(c, true);
    return memclient_wait(c, c->report_seq);
}

int memclient_pool_flush(memclient_pool *p)
{
    if (!p)
        return memclient_fail(-EINVAL, "memclient_pool_flush: NULL pool");
    memclient *c = p->c;
    int rc = memclient_lock(c); /* queues the reports (unless one was refused) */
    if (rc < 0)
        return rc;
    rc = sync_reports(c);
    if (c->reports_refused && !c->dead) { /* put memd's books right before saying so */
        queue_or_resync(c, true);
        int again = sync_reports(c);
        rc = rc < 0 ? rc : again;
    }
    memclient_error e = c->report_err;
    c->report_err.status = 0;
    memclient_unlock(c);
    if (rc < 0 && rc != e.status)
        return memclient_fail(rc, "pool report: %s", memclient_strerror(rc));
    if (e.status < 0)
        return memclient_fail_with(&e);
    return 0;
}

static void *timer_main(void *arg)
{
    memclient *c = arg;
    pthread_mutex_lock(&c->timer_mu);
    while (!c->timer_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        long ns = ts.tv_nsec + (MEMCLIENT_POOL_REPORT_MS % 1000) * 1000000L;
        ts.tv_sec += MEMCLIENT_POOL_REPORT_MS / 1000 + ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        /* 0: woken (by stop, or spuriously); anything else ends the wait, so an error can
         * never turn this into a loop that holds timer_mu. */
        while (!c->timer_stop && pthread_cond_timedwait(&c->timer_cv, &c->timer_mu, &ts) == 0)
            ;
        if (c->timer_stop)
            break;
        if (!atomic_load_explicit(&c->pools_dirty, memory_order_relaxed))
            continue;
        pthread_mutex_unlock(&c->timer_mu);
        pthread_mutex_lock(&c->mu);
        if (!c->dead) {
            queue_or_resync(c, false);
            (void)sync_reports(c); /* a refusal is kept in report_err */
        }
        pthread_mutex_unlock(&c->mu);
        pthread_mutex_lock(&c->timer_mu);
    }
    pthread_mutex_unlock(&c->timer_mu);
    return NULL;
}

int memclient_pools_timer_start(memclient *c)
{
    if (c->timer_on)
        return 0;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&c->timer_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0)
        return -rc;
    pthread_mutex_init(&c->timer_mu, NULL);
    c->timer_stop = false;
    rc = pthread_create(&c->timer, NULL, timer_main, c);
    if (rc != 0) {
        pthread_cond_destroy(&c->timer_cv);
        pthread_mutex_destroy(&c->timer_mu);
        return -rc;
    }
    c->timer_on = true;
    return 0;
}

void memclient_pools_timer_stop(memclient *c)
{
    if (!c->timer_on)
        return;
    pthread_mutex_lock(&c->timer_mu);
    c->timer_stop = true;
    pthread_cond_signal(&c->timer_cv);
    pthread_mutex_unlock(&c->timer_mu);
    pthread_join(c->timer, NULL);
    pthread_cond_destroy(&c->timer_cv);
    pthread_mutex_destroy(&c->timer_mu);
    c->timer_on = false;
}
