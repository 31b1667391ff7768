/* libmemclient: the biased lock of client pools (see memclient_pool_lock.h). */
#include "memclient_pool_lock.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

static int membarrier(int cmd)
{
    return (int)syscall(SYS_membarrier, cmd, 0, 0);
}

/* Registration is per process and idempotent: done at every pool's creation, cheap. */
static bool membarrier_ready(void)
{
    int q = membarrier(MEMBARRIER_CMD_QUERY);
    return q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

int memclient_pool_lock_init(memclient_pool_lock *l)
{
    atomic_init(&l->fast, 0);
    atomic_init(&l->owner, 0);
    int rc = pthread_mutex_init(&l->mu, NULL);
    if (rc != 0)
        return -rc;
    l->shared = !membarrier_ready();
    atomic_init(&l->foreign, l->shared); /* shared: the owner never takes its fast path */
    return 0;
}

void memclient_pool_lock_fini(memclient_pool_lock *l)
{
    pthread_mutex_destroy(&l->mu);
}

/* After foreign = 1, the owner either saw it or is seen inside: wait for it to leave. */
static void wait_owner_out(memclient_pool_lock *l)
{
    (void)membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED); /* cannot fail once registered */
    for (unsigned spins = 0; atomic_load_explicit(&l->fast, memory_order_acquire); spins++)
        if (spins > 64)
            sched_yield();
}

memclient_lock_how memclient_pool_lock_slow(memclient_pool_lock *l, bool rare)
{
    pthread_mutex_lock(&l->mu);
    if (l->shared)
        return MEMCLIENT_LOCK_MUTEX;
    atomic_store_explicit(&l->foreign, 1, memory_order_seq_cst);
    wait_owner_out(l);
    uintptr_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
    uintptr_t self = memclient_thread_key();
    if (!rare && owner == 0 && atomic_compare_exchange_strong(&l->owner, &owner, self))
        owner = self; /* the first to allocate, while the timer held the lock */
    if (!rare && owner != self) {
        /* A second thread allocates here: shared for good (foreign stays 1). */
        l->shared = true;
        return MEMCLIENT_LOCK_MUTEX;
    }
    return MEMCLIENT_LOCK_FOREIGN;
}
