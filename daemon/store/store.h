/* memd daemon — the state store: the allocation map kept in an LMDB file in the runtime
 * directory, so that a restarted memd (after a crash or a stop) serves the same map
 * instead of handing out addresses that living clients still use.
 *
 * Model: memory is the truth, the store a durable copy of it. Every change marks its
 * key (an allocation's record, store_internal.h; a session id) dirty; memd_store_flush
 * writes the current state of every dirty key, plus the counters, in ONE write
 * transaction. The service loop commits once per pass (all frames dispatched from every
 * connection read in one loop iteration, server.h), before any of their replies can reach
 * the socket, so no client is ever told about a change the store has not got.
 * Because a flush writes everything dirty at once, the store always equals the memory
 * map of one instant: a crash at any point restores a consistent map (never two
 * allocations on one range), which contains every allocation a client was told about.
 *
 * Sessions: each stored session has a random token, given to its client in the welcome.
 * After a restart, stored sessions come back as orphans holding their allocations; a
 * client reclaims its orphan with the token (HELLO MEMD_HELLO_F_RECLAIM). An orphan whose
 * process is gone (pid absent, or reused: /proc/PID/stat start time differs) is released
 * at once, any other after limits.reclaim_grace_ms unless reclaimed.
 *
 * Everything here runs on the loop thread. With st->store NULL (unit tests, tools) every
 * hook is a no-op, and HELLO offers no token. See /work/notes/readme-state.md. */
#ifndef MEMD_DAEMON_STORE_H
#define MEMD_DAEMON_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memd/protocol.h"
#include "state.h"

#define MEMD_STORE_FILE "memd-state.mdb"
#define MEMD_STORE_MAX_DEFAULT (1ull << 30) /* bytes the store file may grow to */

typedef struct memd_store_opts {
    const char *dir;        /* the state directory (made absolute by the caller) */
    uint64_t max_bytes;     /* 0: MEMD_STORE_MAX_DEFAULT */
    bool discard;           /* set the stored map aside, start empty (memd --discard-state) */
    const char *failpoint;  /* tests only (memd-test, unit tests), see memd_store_failpoint
                             * in store_internal.h. Plainly: while a file exists at
                             * this path, every commit fails as on a broken disk */
} memd_store_opts;

/* The state directory: the config's state_dir, else the socket's folder, made absolute.
 * 0, or a negative errno with err (no such directory; a socket without a path). */
int memd_store_dir(const char *state_dir, const char *socket_path, char *out, size_t outlen,
                   memd_error *err);

/* Opens (creating) DIR/memd-state.mdb, takes its lock, checks it and restores the map it
 * holds into st, which must be initialised with the current config and hold nothing yet:
 * allocations are re-reserved at their addresses (memd_device_alloc_at), stored sessions
 * become orphans, those of processes that are gone are released, and the handle and
 * session counters continue where they were. A store that exists is never read as empty
 * and never trusted unchecked (store_check.c: LMDB's meta pages, then every record with
 * its checksum, read by a child process so that damage LMDB trips over cannot crash memd;
 * memd then works on the checked copy). Returns 0, or a negative errno with err naming
 * the file and what to do: a store locked by another memd, empty, cut short, damaged,
 * of another format, or written for a device whose memory map has changed is never
 * applied, nor silently discarded; o->discard (memd --discard-state, logged) sets it aside
 * as DIR/memd-state.mdb.discarded and starts empty. A store written before the last boot
 * is discarded (device memory was reset since). On failure st holds no orphan, st->store
 * is NULL and the file is as it was. */
int memd_store_open(memd_state *st, const memd_store_opts *o, memd_error *err);

/* Stops recording and closes the file (releasing its lock). Orphans are dropped from st
 * without touching the store: they are restored again at the next start. */
void memd_store_close(memd_state *st);

/* ---- the request path ----
 *
 * While open, the store listens to core's changes (hooks.h, store_hooks.c): before a
 * session creates or acquires an allocation it records the session and checks that the
 * file has room (growing it when it must; a full store refuses the allocation with
 * -EIO); every allocation created or changed and every session closed marks its record
 * dirty. Alone, an allocation has a record of its own; inside memd_store_batch, the
 * allocations of one request share records by chunks of consecutive handles
 * (store_internal.h). */

/* ALLOC_BATCH: on before its allocations are created, off after (whatever happened). */
void memd_store_batch(memd_state *st, bool on);

/* HELLO: a reclaim (MEMD_HELLO_F_RECLAIM) takes an orphan's identity and holds over into
 * s; otherwise s is recorded. Fills w's session_id, flags, reclaimed and token. 0, or a
 * negative errno with err filled (see MEMD_HELLO_F_RECLAIM) and s unchanged. */
int memd_store_hello(memd_state *st, memd_session *s, const memd_wire_hello *h,
                     memd_wire_welcome *w, memd_error *err);

/* Orphaned sessions right now (they do not count against max_sessions). */
uint32_t memd_store_orphans(const memd_state *st);

/* DUMP: MEMD_SESSION_F_* of s, and for an orphan when it will be released. */
uint32_t memd_store_session_flags(const memd_state *st, const memd_session *s,
                                  uint64_t *deadline_ns);

/* ---- commit points ---- */

/* A request round: frames of one session being dispatched (frames.c). What a round
 * changes is recorded even while stopping. begin returns a mark of the changes so far,
 * for memd_store_round_changed; end commits nothing (memd_store_commit does). */
uint64_t memd_store_round_begin(memd_state *st);
bool memd_store_round_changed(const memd_state *st, uint64_t mark);
void memd_store_round_end(memd_state *st);

/* Flushes if anything changed since the last commit (the service loop: once per pass,
 * before any reply of the pass is written). 0, or -EIO with err filled: no change since
 * the last commit may be confirmed (they stay dirty for the next flush). */
int memd_store_commit(memd_state *st, memd_error *err);

/* on: something calls memd_store_commit before any reply leaves and before the process
 * sleeps (the service loop), so closed sessions leave their flush to it instead of
 * flushing at once. Calls nest; off undoes one on. */
void memd_store_defer(memd_state *st, bool on);

/* Writes every dirty key and the counters in one transaction. 0, or -EIO with err
 * filled (the dirty keys stay dirty for the next flush). */
int memd_store_flush(memd_state *st, memd_error *err);

/* ---- service loop ---- */

/* SIGTERM/SIGINT: from now on only request rounds are recorded, not the sessions that
 * the shutdown closes, so a restarted memd finds them as orphans. */
void memd_store_stopping(memd_state *st);

/* Periodic work: releases orphans whose process is gone or whose grace period is over,
 * retries a failed flush. Returns the number of orphans left. */
uint32_t memd_store_tick(memd_state *st);
/* How often memd_store_tick should run (ms), from reclaim_grace_ms. */
uint32_t memd_store_tick_ms(const memd_state *st);

#endif
