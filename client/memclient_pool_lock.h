/* libmemclient internals: the lock of a client pool, biased towards one thread.
 *
 * A pool is usually used by one runtime thread, and its fast path (one placement or one
 * free, a few dozen nanoseconds) is where a lock's atomic read-modify-writes show: a
 * pthread mutex's lock and unlock, or a spinlock's exchange, measured as much as the
 * allocator itself on memd-bench-replay. So the first thread that allocates becomes the
 * pool's owner and takes the lock with plain stores and loads (Dekker's algorithm):
 *
 *   owner:  fast = 1; compiler barrier; if (foreign == 0) enter; else back off
 *   others: mutex; foreign = 1; membarrier(); wait until fast == 0; enter
 *
 * The owner's side has no hardware fence; the other side's membarrier(2)
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED) runs a full barrier on every CPU running a thread of
 * the process, which pairs with the owner's program order: either the owner sees
 * foreign == 1, or the other sees fast == 1 and waits (the asymmetric fence of userspace
 * RCU and of folly's hazard pointers). Others are the report timer, every 50 ms at most,
 * and growth; a second thread allocating in the pool makes it shared for good: foreign
 * stays 1, so the owner takes the mutex too, and from then on the lock is the mutex
 * alone. Without membarrier (an old kernel, a sandbox), every pool is shared. */
#ifndef MEMD_CLIENT_MEMCLIENT_POOL_LOCK_H
#define MEMD_CLIENT_MEMCLIENT_POOL_LOCK_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct memclient_pool_lock {
    atomic_int fast;            /* the owner is inside (written by the owner only) */
    atomic_int foreign;         /* another thread is inside or waiting, or shared */
    atomic_uintptr_t owner;     /* the owner thread's key, 0 until the first allocation */
    pthread_mutex_t mu;         /* everyone but the owner on its fast path */
    bool shared;                /* under mu: foreign stays 1, the mutex alone is the lock */
} memclient_pool_lock;

typedef enum memclient_lock_how {
    MEMCLIENT_LOCK_FAST,        /* the owner, without the mutex */
    MEMCLIENT_LOCK_FOREIGN,     /* the mutex, foreign set until unlock */
    MEMCLIENT_LOCK_MUTEX,       /* the mutex alone (shared pool) */
} memclient_lock_how;

/* 0, or -errno when membarrier is not there: then the lock starts shared. */
int memclient_pool_lock_init(memclient_pool_lock *l);
void memclient_pool_lock_fini(memclient_pool_lock *l);
/* The slow side: the mutex, and the handshake with the owner. rare: the report timer
 * or growth, which do not make the pool shared. */
memclient_lock_how memclient_pool_lock_slow(memclient_pool_lock *l, bool rare);

/* A key per live thread: the thread pointer where the compiler gives it in one
 * instruction, else pthread_self (a call; the address of a _Thread_local would cost a
 * call to __tls_get_addr in a shared library). */
static inline uintptr_t memclient_thread_key(void)
{
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__x86_64__)
    return (uintptr_t)__builtin_thread_pointer();
#else
    return (uintptr_t)pthread_self();
#endif
}

static inline memclient_lock_how memclient_pool_lock_take(memclient_pool_lock *l)
{
    uintptr_t self = memclient_thread_key();
    uintptr_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
    /* The first thread to allocate becomes the owner (a failed exchange loads the
     * owner there is). */
    if (owner == 0 && !atomic_load_explicit(&l->foreign, memory_order_relaxed) &&
        atomic_compare_exchange_strong(&l->owner, &owner, self))
        owner = self;
    if (owner == self) {
        atomic_store_explicit(&l->fast, 1, memory_order_relaxed);
        /* The other side's membarrier is the hardware half of this fence. */
        atomic_signal_fence(memory_order_seq_cst);
        if (!atomic_load_explicit(&l->foreign, memory_order_relaxed))
            return MEMCLIENT_LOCK_FAST;
        atomic_store_explicit(&l->fast, 0, memory_order_release);
    }
    return memclient_pool_lock_slow(l, false);
}

static inline void memclient_pool_lock_give(memclient_pool_lock *l, memclient_lock_how how)
{
    if (how == MEMCLIENT_LOCK_FAST) {
        atomic_store_explicit(&l->fast, 0, memory_order_release);
        return;
    }
    if (how == MEMCLIENT_LOCK_FOREIGN)
        atomic_store_explicit(&l->foreign, 0, memory_order_release);
    pthread_mutex_unlock(&l->mu);
}

#endif
