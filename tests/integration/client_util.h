/* memd tests — helpers for the libmemclient integration suites: start the real daemon,
 * connect through the real library, check the daemon's map from a dump, and run a piece
 * of a test as an unprivileged user. */
#ifndef MEMD_TESTS_CLIENT_UTIL_H
#define MEMD_TESTS_CLIENT_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon_fixture.h"
#include "memd/client.h"

#define CU_NOBODY 65534u

/* Starts memd with the default config (fails the test if it cannot). */
void cu_start(memd_fixture *f);
/* The fixture of a suite whose every test runs against the default daemon: memd_fixture
 * f, and setup and teardown for tcase_add_checked_fixture (the teardown fails the test
 * unless memd stops cleanly). */
#define CU_DEFAULT_FIXTURE                                                                 \
    static memd_fixture f;                                                                 \
    static void setup(void)                                                                \
    {                                                                                      \
        cu_start(&f);                                                                      \
    }                                                                                      \
    static void teardown(void)                                                             \
    {                                                                                      \
        ck_assert_int_eq(memd_fixture_stop(&f), 0);                                        \
    }
/* Starts memd on one wormhole_b0 device (id 0) with the given limits block (YAML flow
 * mapping contents, "max_reply_backlog: 1MiB"), stderr captured. */
void cu_start_limits(memd_fixture *f, const char *limits);
/* Writes at yaml (len bytes) the devices: entry of device id: tt-metal's own Wormhole
 * galaxy descriptors (MEMD_SHARED_DATA/soc/tt-metal; fails the test without it), named
 * name, one command queue, 160 KiB of L1 reserved. Returns the length written. */
size_t cu_galaxy_yaml(char *yaml, size_t len, uint32_t id, const char *name);
/* Connects to f's daemon (fails the test if it cannot). */
memclient *cu_connect(const memd_fixture *f);
/* Dumps everything (fails the test on error); free with memclient_snapshot_free. */
memclient_snapshot *cu_dump(memclient *c, unsigned flags);

/* A DRAM request for device 0. */
memclient_alloc_req cu_req(memd_class cls, uint64_t bytes);
/* An SRAM request (class constant) for device 0: the bank-subset suites' buffers. */
memclient_alloc_req cu_sram(uint64_t bytes);
/* The same on any device, with a page size and a bank set (NULL, 0: none) or per bank. */
memclient_alloc_req cu_l1(uint32_t device, uint64_t bytes, uint64_t page_size,
                          const uint32_t *set, uint32_t nset, int per_bank);

/* A constant DRAM buffer of `bytes` named `name`, allocated shared by a and then by b
 * (fails the test unless both get it, the same handle). Returns its handle. */
uint64_t cu_share(memclient *a, memclient *b, uint64_t bytes, const char *name);
/* Fails the test unless memd's reply to the last failed call says what. */
void cu_last_error_says(const char *what);
/* Allocates r until memd refuses with -EIO because its state store is full (fails the
 * test on any other outcome, or if cap allocations all succeed). The acknowledged
 * handles go to handles[]; returns how many. */
size_t cu_fill_store(memclient *c, const memclient_alloc_req *r, uint64_t *handles, size_t cap);
/* Banks of device 0's DRAM group, from a dump of its own. */
uint32_t cu_dram_banks(memclient *c);

/* Region `name` of device 0's bank group `kind` in s, or NULL. */
const memclient_region *cu_region(const memclient_snapshot *s, memd_kind kind,
                                  const char *name);
/* The same on any device. */
const memclient_region *cu_region_of(const memclient_snapshot *s, uint32_t device,
                                     memd_kind kind, const char *name);
/* The size of that region, from a dump of its own (fails the test if there is none). */
uint64_t cu_region_size(memclient *c, uint32_t device, memd_kind kind, const char *name);
/* Bytes allocated in device 0's DRAM region "data", from a dump of its own. */
uint64_t cu_data_allocated(memclient *c);
/* The allocation with `handle` in s, or NULL. */
const memclient_alloc_info *cu_find(const memclient_snapshot *s, uint64_t handle);

/* Checks the map the dump shows: every allocation lies inside its region, no two live
 * allocations of a region overlap, and each allocatable region's allocated bytes and
 * allocation count equal the sums over its allocation records. Returns the number of
 * violations (each printed on stderr). Needs an admin dump (every session's records). */
int cu_check_map(const memclient_snapshot *s);
/* The per-bank view of a dump taken with MEMCLIENT_DUMP_BANKS: in every bank of every
 * region, the pieces of lockstep and bank-set buffers do not overlap, and the bank's
 * allocated bytes and count equal the sums over them. Returns the violations. */
int cu_check_banks(const memclient_snapshot *s);

/* Lets an unprivileged user reach the fixture's socket (directory 0711, socket 0666). */
void cu_open_socket_to_all(const memd_fixture *f);

/* Forks; the child drops to uid/gid `uid` (all groups), runs fn(arg) and exits with its
 * return value. Returns the child's exit status (128 + signal if killed). */
int cu_run_as(uint32_t uid, int (*fn)(void *arg), void *arg);

/* The same with a connection: the child connects to f's daemon (exit 10 if it cannot),
 * runs fn(c), disconnects and exits with fn's value. */
int cu_run_connected_as(uint32_t uid, const memd_fixture *f, int (*fn)(memclient *c));

/* A client process to kill: forks a child that runs make(socket_path, arg, handles, n)
 * to take what it will hold, reports handles[0..n) (0 where it failed) to the parent and
 * then waits to be killed. Returns the child's pid with its handles. */
typedef void (*cu_holder_fn)(const char *socket_path, const void *arg, uint64_t *handles,
                             size_t n);
pid_t cu_fork_holder(const memd_fixture *f, cu_holder_fn make, const void *arg,
                     uint64_t *handles, size_t n);
/* SIGKILLs the holder and reaps it. */
void cu_kill_holder(pid_t pid);

/* Runs `python3 -c script arg` (a check script's assertions on a file); its exit status,
 * 128 + signal if killed, -1 if it could not run. */
int cu_python(const char *script, const char *arg);

/* Polls dumps for up to timeout_ms until none of handles[0..n) is listed. true if so. */
bool cu_wait_gone(memclient *c, const uint64_t *handles, size_t n, int timeout_ms);

#endif
