/* What the state-store suites (test_store.c, test_store_chunks.c) share: a temporary
 * store directory, a unit device, a daemon state with its store opened there, sessions,
 * allocations and commits. */
#ifndef MEMD_TESTS_STORE_FIXTURE_H
#define MEMD_TESTS_STORE_FIXTURE_H

#include <lmdb.h>
#include <stdint.h>

#include "alloc.h"
#include "session.h"
#include "state.h"
#include "store.h"

#define KIB 1024ull

extern char sf_dir[64];   /* the store's directory, made by sf_setup */
extern char sf_path[128]; /* the store file in it */
extern char sf_fail[128]; /* while a file exists here, the store's commits fail */

/* Check fixture hooks: a fresh directory /tmp/<prefix>-XXXXXX; everything in it removed. */
void sf_setup_in(const char *prefix);
void sf_teardown(void);


/* Initialises st for the n devices (grace_ms 0: 30 s) and opens the store in sf_dir with
 * opts (dir and failpoint = sf_fail are filled in). Returns memd_store_open's result
 * with err filled. */
int sf_start(memd_state *st, const memd_device_spec *specs, uint32_t n, uint32_t grace_ms,
             memd_store_opts opts, memd_error *err);
/* The same, calling before(st) between the state's init and the store's open (where a
 * layer that keeps records in the store registers its hooks). */
int sf_start_with(memd_state *st, const memd_device_spec *specs, uint32_t n, uint32_t grace_ms,
                  memd_store_opts opts, memd_error *err, void (*before)(memd_state *st));

/* What a stop (or a crash after the last commit) leaves: the store as committed. */
void sf_stop(memd_state *st);

memd_session *sf_session(memd_state *st, uint32_t pid, uint32_t uid);
memd_alloc *sf_alloc(memd_state *st, memd_session *s, uint32_t dev, uint8_t cls,
                     uint64_t bytes, const char *shared_name);
void sf_flush(memd_state *st);

/* The store file opened directly with LMDB (memd not running), a write transaction on
 * one of its tables: to damage it as a broken disk or another program would. The close
 * commits. */
MDB_env *sf_raw_open(const char *table, MDB_txn **txn, MDB_dbi *dbi);
void sf_raw_close(MDB_env *env, MDB_txn *txn);

#endif
