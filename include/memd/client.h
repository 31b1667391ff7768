/* libmemclient — the C client API of memd, the device memory daemon.
 *
 *   #include <memd/client.h>      pkg-config: memclient
 *
 * Model
 *   A memclient is one connection (one session) to memd. The session owns every
 *   allocation made through it; when the connection closes, for any reason, memd releases
 *   all of them (named shared ones drop one reference).
 *
 * Errors
 *   Every function that can fail returns 0 (or a count, where documented) on success and
 *   a negative errno on failure, e.g. -ENOMEM (the region has no room), -EPERM (the handle
 *   belongs to another session), -ENOENT (no such handle), -EINVAL (bad request),
 *   -EOPNOTSUPP (scope or class not offered by the device), -ECONNREFUSED / -ENOENT at
 *   connect. memclient_strerror() names the code; memclient_last_error() gives the
 *   details of the calling thread's most recent failure (the daemon's message and, for
 *   -ENOMEM, the state of the region that could not fit the request).
 *   After a transport failure (-EPIPE, -ECONNRESET, -EPROTO, -EBADMSG, ...) the connection
 *   is dead: every later call on it returns -ENOTCONN; disconnect and connect again, or,
 *   when the daemon itself went away (it crashed or was restarted), memclient_reconnect()
 *   to take the same session back with everything it held.
 *
 * Threads
 *   Every function is thread-safe. A connection serialises its socket with a mutex, so
 *   several threads may share one connection (their requests are pipelined on one
 *   socket); for throughput give each thread its own connection. memclient_disconnect()
 *   must be the last call on a connection, made when no other thread uses it. After
 *   fork() only one of the two processes may go on using an inherited connection (the
 *   session, and so the ownership of its buffers, is the connection's, not the process's).
 *   Calls block until the daemon answers, or until the connection's timeout
 *   (memclient_set_timeout, $MEMD_TIMEOUT_MS) passes: then the call fails with
 *   -ETIMEDOUT and the connection is closed (a late reply can never be taken for
 *   another request's; the daemon releases the session as after a disconnect):
 *   connect again.
 *
 * Pipelining
 *   memclient_submit_*() queue a request and return a ticket at once; memclient_complete()
 *   returns finished requests in submission order. Results are written to the output
 *   arrays given at submit time, which must stay valid until the request completes.
 *   The blocking calls (memclient_alloc, ...) may be mixed with pipelined requests on the
 *   same connection: they wait only for their own reply.
 *
 * Versioning
 *   Symbols are prefixed memclient_; the SONAME is libmemclient.so.0. Structs passed in
 *   are zero-initialised by the caller (e.g. `memclient_alloc_req r = {0};`); fields that
 *   are 0 take the documented default. */
#ifndef MEMD_CLIENT_H
#define MEMD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <memd/types.h>
#include <memd/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MEMCLIENT_API
#define MEMCLIENT_API __attribute__((visibility("default")))
#endif

/* The socket used when memclient_connect() gets NULL and $MEMD_SOCKET is unset or empty.
 * The daemon's build may choose another default: memclient_default_socket() tells. */
#define MEMCLIENT_SOCKET_ENV "MEMD_SOCKET"

/* ---- connection --------------------------------------------------------------------- */

typedef struct memclient memclient; /* one connection; opaque */

/* Connects to the daemon and negotiates the protocol version (HELLO).
 * path: the socket; NULL or "": $MEMD_SOCKET, then memclient_default_socket().
 * On failure *out is NULL and memclient_last_error() says which path and why. */
MEMCLIENT_API int memclient_connect(const char *path, memclient **out);

/* Same, with the client name the daemon shows in `memctl sessions` (NULL: the process
 * name). */
MEMCLIENT_API int memclient_connect_named(const char *path, const char *client_name,
                                          memclient **out);

/* Connect flags (memclient_connect_flags). */
enum {
    /* Reconnect by itself: when the daemon goes away (it crashed or was restarted), the
     * next blocking call, or the one that was waiting for its reply, reconnects (retrying
     * for up to MEMCLIENT_RECONNECT_MS while memd restarts), reclaims the session with
     * everything it held, and goes on. A blocking request whose reply was lost is sent
     * again marked as a retry (MEMD_REQ_F_RETRY, memd/protocol.h): the daemon answers an
     * ALLOC or ALLOC_BATCH its first sending applied with the same buffers (a retried
     * allocation never creates a second buffer) and a FREE it applied with success. If
     * the session cannot be reclaimed (not within the daemon's grace period, state
     * discarded) the call fails with -ESTALE and the connection has a new, empty session,
     * as after memclient_reconnect(). Pipelined requests (memclient_submit_*) are kept
     * until they complete: memclient_complete() reconnects and sends every unanswered one
     * again, in order and with its ticket, as a retry. */
    MEMCLIENT_CONNECT_RECONNECT = 1u << 0,
};

/* How long a MEMCLIENT_CONNECT_RECONNECT connection waits for the daemon to come back: the
 * daemon's default reclaim grace period. */
#define MEMCLIENT_RECONNECT_MS 30000

/* Same as memclient_connect_named, with MEMCLIENT_CONNECT_* flags. */
MEMCLIENT_API int memclient_connect_flags(const char *path, const char *client_name,
                                          unsigned flags, memclient **out);

/* Call timeouts. memclient_connect, _named and _flags take the timeout from
 * $MEMD_TIMEOUT_MS (milliseconds; unset, empty or 0: none; anything else not a number is
 * -EINVAL); memclient_connect_timeout takes it as an argument (0: none), and it bounds
 * the connect's own HELLO. A call whose reply does not come within the timeout fails with
 * -ETIMEDOUT and closes the connection (a stopped or hung daemon): every later call on
 * it is -ENOTCONN; connect again. Requests the daemon holds by design wait that long
 * more: memclient_events_wait (MEMD_EVENTS_WAIT_MS), and a
 * memclient_model_wait has its own timeout. */
#define MEMCLIENT_TIMEOUT_ENV "MEMD_TIMEOUT_MS"
MEMCLIENT_API int memclient_connect_timeout(const char *path, const char *client_name,
                                            unsigned flags, int timeout_ms, memclient **out);
/* Sets the timeout of the calls made from now on (0: none); -EINVAL when negative. */
MEMCLIENT_API int memclient_set_timeout(memclient *c, int timeout_ms);

/* Closes the connection; the daemon releases everything the session owned. Requests
 * still in flight are abandoned. NULL is allowed. */
MEMCLIENT_API void memclient_disconnect(memclient *c);

/* The built-in default socket path (a constant string). */
MEMCLIENT_API const char *memclient_default_socket(void);

typedef struct memclient_session_info {
    uint16_t protocol_version;  /* negotiated */
    uint32_t session_id;        /* the daemon's id of this session */
    uint32_t max_frame;         /* largest request payload the daemon accepts, bytes */
    uint32_t ndevices;
    char server_version[32];
    char socket_path[108];      /* the path actually connected to */
    int reclaimable;            /* the daemon keeps its map across restarts: the session
                                   can be taken back with memclient_reconnect() */
    uint32_t reclaimed;         /* allocations the last memclient_reconnect() took back */
} memclient_session_info;

MEMCLIENT_API int memclient_session(memclient *c, memclient_session_info *out);

/* After the daemon went away (a call failed with -ECONNRESET, -EPIPE or -ENOTCONN because
 * memd crashed or was restarted), connects again to the same socket and takes the
 * session back with the token the daemon gave at connect: the same session id and every
 * allocation it held, at the same handles and addresses. Connecting is retried for up to
 * timeout_ms (the daemon may still be starting; 0: one attempt, -1: no limit). Requests
 * cut off by the failure have failed (memclient_complete reports them) and are not sent
 * again: a request whose reply was lost may or may not have been applied, so check with
 * memclient_query() or memclient_dump(). Returns 0, or:
 *   -EISCONN  the connection is alive: nothing to do (nothing is changed)
 *   -ESTALE   the daemon no longer knows the session (not reclaimed within its grace
 *             period, thought dead, state reset) or keeps no state; -EACCES: it refused
 *             the token; -EBUSY: another connection has the session. In these cases the
 *             connection is up again with a NEW, empty session: every old handle is void.
 *   -ETIMEDOUT, -ECONNREFUSED, -ENOENT, ...: no daemon to reach; the connection stays
 *             dead and memclient_reconnect() may be called again. */
MEMCLIENT_API int memclient_reconnect(memclient *c, int timeout_ms);

/* Largest batch memclient_alloc_batch / memclient_free_batch accept on this connection
 * (from the daemon's frame limit), for plain requests: a request with a bank set takes
 * 8 + 4 x nbank_set bytes more of the frame. */
MEMCLIENT_API size_t memclient_max_alloc_batch(memclient *c);
MEMCLIENT_API size_t memclient_max_free_batch(memclient *c);

/* ---- allocation --------------------------------------------------------------------- */

enum {
    /* Named allocation shared by reference count: a request with the same device, name,
     * class and size gets the same buffer; it is released when the last holder frees it
     * or goes away. Needs a name. */
    MEMCLIENT_ALLOC_SHARED = 1u << 0,
    /* At memclient_alloc_req.address or not at all (tt-metal's allocate_at_address):
     * lockstep, a bank set (that address in each of its banks) or per bank (each piece
     * there). Refused with -EINVAL when the address is not a multiple of the request's
     * alignment, -ERANGE when the buffer would leave its region, -EBUSY when part of the
     * range is taken; the error's message says which. memclient_alloc and
     * memclient_submit_alloc only (not batches or pools); not with SHARED. */
    MEMCLIENT_ALLOC_AT = 1u << 1,
    /* With a bank set (not per_bank): tt-metal's range lockstep. The address is searched
     * in the set's banks only (what other banks hold of uniform or per-bank buffers is
     * not looked at), then the range is reserved in every bank of the group, as a
     * lockstep buffer's, for every later request (bank_mode MEMD_BANKS_RANGE_LOCKSTEP).
     * Without it a bank set is tt-metal's uniform per-core allocation (MEMD_BANKS_RANGE).
     * -EINVAL without a set or with per_bank; -EOPNOTSUPP from a memd without it; not in
     * a session bound to a sub-device (it would reserve banks outside it). */
    MEMCLIENT_ALLOC_RANGE_LOCKSTEP = 1u << 2,
};

/* One bank a buffer uses: its id (for tt-metal devices, tt-metal's allocator bank id),
 * its core (MEMD_NO_CORE when the device names none), and the buffer's address there. */
typedef struct memclient_bank {
    uint32_t bank;
    uint16_t logical_x, logical_y;
    uint16_t noc_x, noc_y;
    uint64_t address;           /* in the bank group's address map */
    uint64_t absolute;          /* plus the bank's offset */
} memclient_bank;

typedef struct memclient_alloc_req {
    uint32_t device;            /* device id */
    memd_class cls;             /* buffer class: decides region and direction */
    memd_scope scope;           /* dram (global), sram (l1), dram.texture */
    uint64_t bytes;             /* size in bytes, when dtype is MEMD_DTYPE_NONE */
    memd_dtype dtype;           /* else: shape[0..ndim) elements of dtype */
    uint32_t ndim;              /* 1..MEMD_MAX_DIMS with a dtype; texture: 2 (h, w) */
    uint64_t shape[MEMD_MAX_DIMS];
    uint64_t page_size;         /* 0: the whole buffer is one page */
    uint64_t alignment;         /* 0: the class policy's alignment */
    uint32_t banks;             /* banks to spread over; 0: every bank of the group */
    uint32_t flags;             /* MEMCLIENT_ALLOC_* */
    const char *name;           /* NULL or "": anonymous; at most MEMD_NAME_MAX - 1 bytes */
    /* Bank subsets. A bank set (nbank_set ids of the group's banks, any order, no
     * duplicates): one address free in every bank of the set, the other banks keep
     * that range usable (tt-metal's uniform per-core allocation; with
     * MEMCLIENT_ALLOC_RANGE_LOCKSTEP, tt-metal's range lockstep). per_bank: an independent
     * address in each bank of the set (every bank of the group without a set; tt-metal's
     * per-core allocation). The pages are spread over
     * the set's banks. Not shared. Batches may mix such requests with plain ones
     * (memclient_alloc_batch: all or nothing, each request judged as its own
     * memclient_alloc would be). */
    const uint32_t *bank_set;
    uint32_t nbank_set;
    int per_bank;
    /* Optional, with a bank set or per_bank: the allocation's banks, from its own reply
     * (no second round trip), exactly as memclient_bank_info() gives them (id order; id,
     * core, address in each bank), at most nbank_out of them; out->banks says how many
     * there are. memclient_alloc, memclient_alloc_batch and their submit forms fill it;
     * for a submitted request, the request (or batch array) and its bank_out must stay
     * valid until it completes. NULL: not wanted (memclient_bank_info asks later). */
    memclient_bank *bank_out;
    uint32_t nbank_out;
    uint64_t address;           /* with MEMCLIENT_ALLOC_AT: where in the group's map */
    /* Per-core shard sizes (tt-metal's set_per_core_shard_sizes): with per_bank and a bank
     * set in increasing id order, sizes[i] bytes for the piece in bank bank_set[i] (each
     * rounded up as a buffer is); bytes, dtype and page_size are then 0, and the buffer's
     * size_per_bank is the largest piece; in a batch too (MEMD_WELCOME_F_SIZES).
     * NULL: every piece is the request's size. */
    const uint64_t *sizes;
} memclient_alloc_req;

typedef struct memclient_buffer {
    uint64_t handle;            /* never reused while the daemon's state lives */
    uint64_t address;           /* same offset in every bank of the group */
    uint64_t size_per_bank;     /* bytes reserved in each bank (lockstep) */
    uint64_t page_size;         /* effective (padded) page size */
    uint64_t pitch;             /* dram.texture row pitch in bytes, else 0 */
    uint32_t banks;             /* banks the data is spread over */
    uint32_t refcount;          /* holders of a shared buffer, else 1 */
    memd_kind kind;             /* bank group: DRAM or SRAM */
    uint32_t region;            /* region index in the group (see memclient_dump) */
    memd_bank_mode bank_mode;   /* ALL (lockstep), RANGE (bank set, uniform per-core),
                                   RANGE_LOCKSTEP (bank set, reserved in every bank) or
                                   PER_BANK; for
                                   PER_BANK, address is the first bank's, or 0 on a
                                   tt-metal device (as tt-metal reports it) */
} memclient_buffer;

MEMCLIENT_API int memclient_alloc(memclient *c, const memclient_alloc_req *req,
                                  memclient_buffer *out);

/* All or nothing: either every request is placed (out[0..n) filled) or none is and the
 * error is the first failing element's ("element I of N: ..."). Requests with a bank set
 * or per_bank may be mixed with plain ones (one ALLOC_BATCH_BANKS round trip; without
 * them, ALLOC_BATCH); each is judged as its own memclient_alloc would be (sub-device,
 * quotas, limits). */
MEMCLIENT_API int memclient_alloc_batch(memclient *c, const memclient_alloc_req *reqs,
                                        size_t n, memclient_buffer *out);

MEMCLIENT_API int memclient_free(memclient *c, uint64_t handle);

/* All or nothing: if any handle cannot be freed, none is. */
MEMCLIENT_API int memclient_free_batch(memclient *c, const uint64_t *handles, size_t n);

typedef struct memclient_alloc_info {
    memclient_buffer buf;
    uint32_t device;
    memd_class cls;
    memd_scope scope;
    uint32_t pid;               /* creator's credentials */
    uint32_t uid;
    uint32_t gid;
    uint32_t session_id;
    uint64_t created_ns;        /* CLOCK_REALTIME */
    char name[MEMD_NAME_MAX];
    char comm[16];              /* creator's process name */
    int pool;                   /* a client pool's range (memclient_pool_create) */
} memclient_alloc_info;

/* An allocation's details. Only the owner (or an admin) may ask: -EPERM otherwise. */
MEMCLIENT_API int memclient_query(memclient *c, uint64_t handle, memclient_alloc_info *out);

/* Absolute address of the buffer in each of its bank group's banks. Writes at most cap
 * entries and returns the number of banks (which may be more than cap: call again with
 * a larger array). */
MEMCLIENT_API int memclient_bank_addresses(memclient *c, uint64_t handle, uint64_t *addrs,
                                           size_t cap);

/* Every bank the buffer uses (all of its group for lockstep, its set otherwise), in id
 * order. Writes at most cap entries and returns the number of banks. */
MEMCLIENT_API int memclient_bank_info(memclient *c, uint64_t handle, memclient_bank *out,
                                      size_t cap);

/* Where one byte of a buffer is, to write it with a device driver. */
typedef struct memclient_location {
    uint32_t bank;              /* bank id (for tt-metal devices, its allocator bank id) */
    uint64_t address;           /* in the bank: the bank group's address map */
    uint64_t absolute;          /* address + the bank's offset */
    uint64_t page;              /* the page of the buffer holding the byte */
    uint16_t logical_x, logical_y; /* the bank's core: for tt-metal DRAM the channel's, for */
    uint16_t noc_x, noc_y;      /* L1 the worker core's; MEMD_NO_CORE: none known */
} memclient_location;

/* Byte `offset` of buffer buf, whose banks (memclient_bank_info, or bank_out) are
 * banks[0..nbanks), computed here without a round trip, as tt-metal interleaves pages
 * (InterleavedAddrGen): page = offset / page_size, bank = banks[page % buf->banks],
 * address = that bank's address + (page / buf->banks) * page_size + offset % page_size.
 * page_size is buf->page_size (padded to the group's alignment): offsets count pages of
 * that size, which is the data's layout whenever the page size asked for was a multiple
 * of the alignment (model buffers always are). A one-page buffer is all in its first
 * bank. 0, or -EINVAL (NULL, fewer banks than buf->banks), -ERANGE (offset past the
 * pages the buffer reserves). */
MEMCLIENT_API int memclient_locate(const memclient_buffer *buf, const memclient_bank *banks,
                                   size_t nbanks, uint64_t offset, memclient_location *out);

/* The lowest address of bank `bank` of a bank group that any buffer occupies (lockstep
 * buffers and bank-set pieces, every session's; tt-metal's lowest_occupied_address, which
 * it checks circular buffers against): 1 with *address (in the group's map) and
 * *absolute (NULL: not wanted), 0 when the bank holds nothing, or a negative errno
 * (-ENODEV, -EINVAL for no such bank). One small round trip, no dump. */
MEMCLIENT_API int memclient_lowest_occupied(memclient *c, uint32_t device, memd_kind kind,
                                            uint32_t bank, uint64_t *address, uint64_t *absolute);
/* ---- client pools ----------------------------------------------------------------------
 *
 * In-process speed with memd still owning the map. memclient_pool_create() leases one
 * range from memd (an ordinary allocation of the session, made from the same request as
 * memclient_alloc, marked as a pool in every view); memclient_pool_alloc() and
 * memclient_pool_free() then place buffers inside it in the process, with memd's own
 * range allocator (exact first fit, bottom-up, O(log n)), without a round trip: a mutex
 * and the allocator, nothing on the socket. Thread-safe: threads may share one pool.
 *
 * Units: a pool is a range of the bank group's address map, the same in every bank (a
 * lockstep buffer), so a sub-allocation's bytes and addresses are in that map: bytes of
 * each bank, as memclient_buffer.size_per_bank. Sub-allocations start at a multiple of
 * max(alignment, MEMCLIENT_POOL_MIN_ALIGN) and their sizes are rounded up to
 * MEMCLIENT_POOL_MIN_ALIGN.
 *
 * Growth: with MEMCLIENT_POOL_GROW in req.flags, a sub-allocation that does not fit
 * leases one more range (the same request; for a one-page pool, at least the size
 * needed) and places it there; memclient_pool_set_limit() caps the bytes all ranges may
 * add up to (default: no cap but the device's room, the quota, and
 * MEMCLIENT_POOL_MAX_RANGES ranges). Without it, a full pool fails with -ENOMEM.
 *
 * Visibility: what the pool did reaches memd in batches, sent with the next request any
 * thread makes on the connection or, while there is something to send, by a timer thread
 * of the connection every MEMCLIENT_POOL_STALENESS_MS: memd's view (memclient_dump,
 * `memctl dump`, metrics of pooled bytes) lags the process by at most that plus one round
 * trip, unless the connection is busy with a long request (a plan) meanwhile. A buffer
 * allocated and freed between two reports is never reported. memd validates every report
 * (inside the pool, no overlap, a free of a live sub-allocation) and refuses one that
 * lies; libmemclient's reports never do. memclient_pool_flush() sends at once.
 *
 * Crash and restart: the pools are the session's allocations: when the session ends
 * (even by SIGKILL) they go back whole. memd keeps its books of sub-allocations in memory
 * only; after memclient_reconnect() reclaims the session, the library reports every live
 * sub-allocation again. */

typedef struct memclient_pool memclient_pool; /* opaque */

enum {
    /* memclient_alloc_req.flags of memclient_pool_create: lease more when full. */
    MEMCLIENT_POOL_GROW = 1u << 8,
};

#define MEMCLIENT_POOL_MIN_ALIGN 32     /* bytes: sub-allocation start and size unit */
#define MEMCLIENT_POOL_STALENESS_MS 50  /* the report timer's period */
#define MEMCLIENT_POOL_MAX_RANGES 64    /* ranges a growing pool may lease */

typedef struct memclient_pool_buffer {
    uint64_t handle;            /* for memclient_pool_free; pool-local, never 0 */
    uint64_t address;           /* in the bank group's address map (same in every bank) */
    uint64_t size;              /* bytes reserved (rounded to MEMCLIENT_POOL_MIN_ALIGN) */
    uint64_t offset;            /* from the start of the range holding it */
    uint64_t lease;             /* memd handle of that range */
} memclient_pool_buffer;

typedef struct memclient_pool_info {
    uint64_t handle;            /* memd handle of the first range */
    uint64_t address;           /* its address */
    uint64_t leased;            /* bytes of every range together */
    uint64_t used;              /* bytes in live sub-allocations */
    uint64_t peak;              /* the most used ever was */
    uint64_t limit;             /* growth cap, 0: none */
    uint32_t leases;            /* ranges */
    uint32_t allocations;       /* live sub-allocations */
    uint32_t unreported;        /* changes memd has not heard of yet (after a refusal: every
                                   live sub-allocation, until a report is accepted) */
    uint32_t refused_errno;     /* errno (positive) of memd's refusal of the connection's
                                   pool reports while its books still lag (the library
                                   then retries after a growing back-off); 0: none */
} memclient_pool_info;

/* Leases the pool's first range: req as for memclient_alloc (device, class, scope, size,
 * page size, banks, name), plus MEMCLIENT_POOL_GROW in flags; not MEMCLIENT_ALLOC_SHARED.
 * Errors as memclient_alloc. */
MEMCLIENT_API int memclient_pool_create(memclient *c, const memclient_alloc_req *req,
                                        memclient_pool **out);

/* Growth never takes the pool's ranges past max_bytes together (0: no cap). */
MEMCLIENT_API int memclient_pool_set_limit(memclient_pool *pool, uint64_t max_bytes);

/* bytes > 0; alignment 0 or a power of two; name NULL or at most MEMD_NAME_MAX - 1 bytes
 * (shown in dumps). -ENOMEM when it does not fit (and growth is off or at its limit, or
 * memd refused a lease: memclient_last_error() says which). */
MEMCLIENT_API int memclient_pool_alloc(memclient_pool *pool, uint64_t bytes, uint64_t alignment,
                                       const char *name, memclient_pool_buffer *out);

/* -ENOENT for a handle that is not a live sub-allocation of this pool. */
MEMCLIENT_API int memclient_pool_free(memclient_pool *pool, uint64_t handle);

/* Sends what memd has not heard yet and waits for its answer (at once, whatever the
 * timer's back-off after refusals: memclient_pool_info.refused_errno): 0, or the error of a
 * report memd refused since the last flush (a correct program sees one only past the
 * daemon's max_suballocs_per_pool, -EMFILE, or when memd is short of memory). After a
 * refusal memd's books disagree with the pool until the library reports the pool whole
 * again (a reset, then every live sub-allocation): the report timer does it within the
 * staleness bound, or this call before it returns. */
MEMCLIENT_API int memclient_pool_flush(memclient_pool *pool);

MEMCLIENT_API int memclient_pool_query(memclient_pool *pool, memclient_pool_info *out);

/* The i-th range the pool leased (0: the first). -ENOENT past the last. */
MEMCLIENT_API int memclient_pool_lease(memclient_pool *pool, uint32_t i, memclient_buffer *out);

/* Frees every range of the pool (and so every sub-allocation) and the pool. Unsent
 * reports are dropped. Like memclient_disconnect() for a connection, it must be the last
 * call on the pool, made when no other thread uses it. memclient_disconnect() destroys
 * the pools left on it. */
MEMCLIENT_API int memclient_pool_destroy(memclient_pool *pool);

/* ---- pipelining --------------------------------------------------------------------- */

/* Each submit queues one request frame and stores its ticket in *ticket (may be NULL).
 * Frames are sent when the send buffer fills, at memclient_flush(), or when a call waits
 * for a reply. Output arrays must stay valid until the request completes. */
MEMCLIENT_API int memclient_submit_alloc(memclient *c, const memclient_alloc_req *req,
                                         memclient_buffer *out, uint64_t *ticket);
/* reqs must stay valid until the request completes when one of them has a bank_out. */
MEMCLIENT_API int memclient_submit_alloc_batch(memclient *c, const memclient_alloc_req *reqs,
                                               size_t n, memclient_buffer *out,
                                               uint64_t *ticket);
MEMCLIENT_API int memclient_submit_free(memclient *c, uint64_t handle, uint64_t *ticket);
MEMCLIENT_API int memclient_submit_free_batch(memclient *c, const uint64_t *handles, size_t n,
                                              uint64_t *ticket);

/* Sends every queued frame (reading replies meanwhile, so it never deadlocks against a
 * daemon that applies backpressure). */
MEMCLIENT_API int memclient_flush(memclient *c);

typedef struct memclient_completion {
    uint64_t ticket;            /* as returned by the submit call */
    int status;                 /* 0 or the request's negative errno */
} memclient_completion;

/* Waits for the oldest submitted request still uncompleted and reports it. Returns 0
 * with *out filled (out->status is the request's own result; on failure the details are
 * in memclient_last_error()), or -ENOENT when no submitted request is outstanding. A
 * request cut off by a transport failure completes with that failure as its status (the
 * connection is then dead: later submits return -ENOTCONN). */
MEMCLIENT_API int memclient_complete(memclient *c, memclient_completion *out);

/* Number of submitted requests not yet returned by memclient_complete(). */
MEMCLIENT_API size_t memclient_pending(memclient *c);

/* ---- errors ------------------------------------------------------------------------- */

typedef enum memclient_error_detail {
    MEMCLIENT_DETAIL_NONE = 0,
    MEMCLIENT_DETAIL_NOMEM = 1, /* the region could not fit the request */
    MEMCLIENT_DETAIL_QUOTA = 2, /* the uid's quota on the device would be exceeded */
    MEMCLIENT_DETAIL_LIMIT = 3, /* a cgroup limit would be passed (the message names it) */
} memclient_error_detail;

typedef struct memclient_error {
    int status;                 /* negative errno, 0 if the last call succeeded */
    memclient_error_detail detail;
    char message[256];          /* the daemon's message, or the library's */
    /* Filled for MEMCLIENT_DETAIL_NOMEM and _QUOTA: */
    uint32_t device;
    memd_class cls;
    memd_kind kind;
    uint32_t region;
    uint64_t requested;         /* bytes asked for */
    uint64_t size_per_bank;     /* what lockstep sizing made of it */
    uint64_t allocated;         /* the region at the time of failure */
    uint64_t free;
    uint64_t largest_free;
    /* An out-of-memory's post-mortem (memclient_postmortem_get), 0: none saved (the
     * daemon's rate limit, post-mortems off, or a daemon from before them). */
    uint64_t postmortem;
} memclient_error;

/* One of the sessions holding the most of a region (memclient_region_holders). */
typedef struct memclient_holder {
    uint64_t bytes;             /* held in the region, over all its banks */
    uint32_t session_id, pid, uid;
    char comm[16];              /* the process name */
    char client_name[32];
} memclient_holder;

/* Who holds region `region` of bank group kind on device: at most cap holders, the
 * biggest first (after a -ENOMEM: memclient_last_error's device, kind and region).
 * Returns how many it wrote, or a negative errno. */
MEMCLIENT_API int memclient_region_holders(memclient *c, uint32_t device, memd_kind kind,
                                           uint32_t region, memclient_holder *out,
                                           size_t cap);

/* What is left of a region's allocatable range (memclient_region_shrink and _reset, and
 * snapshots taken with MEMCLIENT_DUMP_RANGES). */
typedef struct memclient_range {
    uint32_t device;
    memd_kind kind;
    uint32_t region;
    uint64_t bottom;            /* bytes given up at the bottom */
    uint64_t top;               /* bytes given up at the top */
    uint64_t start, end;        /* what is left: [start, end) of the group's address map */
} memclient_range;

enum {
    MEMCLIENT_RANGE_BOTTOM = 1u << 0,
    MEMCLIENT_RANGE_TOP = 1u << 1,
};

/* tt-metal's shrink_size and reset_size (admin only). memclient_region_shrink gives up
 * `bytes` more (per bank, a multiple of the group's alignment) at one end of what is
 * left of region `region` of bank group kind on device (end: MEMCLIENT_RANGE_BOTTOM or
 * _TOP); -EBUSY while a buffer lies there (memclient_last_error's message names the
 * lowest address occupied there, or the end of the highest buffer), -ERANGE when less
 * is left, -EINVAL for a bad size, -EPERM for a session that is not admin.
 * memclient_region_reset gives back what was given up at the ends in `ends` (one or
 * both). Both fill *out (may be NULL) with what is left and return 0 or a negative
 * errno. The daemon keeps the parts given up across a restart. */
MEMCLIENT_API int memclient_region_shrink(memclient *c, uint32_t device, memd_kind kind,
                                          uint32_t region, unsigned end, uint64_t bytes,
                                          memclient_range *out);
MEMCLIENT_API int memclient_region_reset(memclient *c, uint32_t device, memd_kind kind,
                                         uint32_t region, unsigned ends, memclient_range *out);

/* Static text for a negative errno (or a positive one). Never NULL. */
MEMCLIENT_API const char *memclient_strerror(int err);

/* Copies the details of the calling thread's most recent failed memclient call (any
 * connection) into *out and returns out->status; a successful call does not clear it. */
MEMCLIENT_API int memclient_last_error(memclient_error *out);

/* ---- names ---------------------------------------------------------------------------- */

/* Lower-case names as memctl and the JSON dump use them ("dram", "constant",
 * "dram.texture", "bf16"); "unknown" for an unknown value. Parsing accepts exactly what
 * the daemon's config accepts, aliases included ("global" = dram, "l1" = sram,
 * "global.texture", "float32", "bfloat16", ...) and returns 0 or -EINVAL. */
MEMCLIENT_API const char *memclient_kind_name(memd_kind k);
MEMCLIENT_API const char *memclient_class_name(memd_class c);
MEMCLIENT_API const char *memclient_scope_name(memd_scope s);
MEMCLIENT_API const char *memclient_dtype_name(memd_dtype t);
MEMCLIENT_API int memclient_kind_parse(const char *s, memd_kind *out);
MEMCLIENT_API int memclient_class_parse(const char *s, memd_class *out);
MEMCLIENT_API int memclient_scope_parse(const char *s, memd_scope *out);
MEMCLIENT_API int memclient_dtype_parse(const char *s, memd_dtype *out);
/* Bank modes: "all", "range", "per_bank", "range_lockstep" (the dump's names). */
MEMCLIENT_API const char *memclient_bank_mode_name(memd_bank_mode m);
/* A bank set's mode by tt-metal's name, into r's per_bank and MEMCLIENT_ALLOC_RANGE_LOCKSTEP:
 * "uniform_per_core" (or "range": neither), "range_lockstep" (the flag), "per_core" (or
 * "per_bank": per_bank). 0, or -EINVAL for any other name (r unchanged). */
MEMCLIENT_API int memclient_alloc_req_set_mode(memclient_alloc_req *r, const char *mode);

/* ---- sub-devices ----------------------------------------------------------------------
 *
 * A sub-device is a named subset of one bank group's banks (memd.yaml `sub_devices`, or
 * memclient_subdev_define by an admin) with an optional byte budget. A session bound to
 * one (by the config's users/groups, or by memclient_subdev_bind before allocating)
 * allocates only inside it: a request without a bank set is placed over the
 * sub-device's banks; a bank set must lie inside; other devices or bank groups give
 * -EACCES, the budget -EDQUOT. Even an admin session, once bound, frees only its own
 * buffers and those charged to its sub-device (-EACCES for any other). Sub-devices share
 * banks only where one names the other in overlap. */
typedef struct memclient_subdev {
    const char *name;
    uint32_t device;
    memd_kind kind;
    const uint32_t *banks;      /* nbanks ids, any order, no duplicates */
    uint32_t nbanks;
    uint64_t budget;            /* bytes over all its banks; 0: none */
    const char *overlap[4];     /* sub-devices it may share banks with; NULL unused */
    uint64_t window;            /* bytes per bank it owns at the bottom of its group's first
                                   allocatable region (tt-metal's local L1); 0: none */
} memclient_subdev;

/* Admin only (-EPERM otherwise). Kept in memd's state store before the reply: a daemon
 * restart brings it back (unless the config then takes its name or banks).
 *
 * A window (tt-metal's sub-device manager local L1) is carved from the global map: no
 * other buffer lands there, memclient_region_shrink can no longer shrink or reset that
 * bottom, and the sub-device's sessions' buffers are placed inside it (lockstep over
 * their bank set there; per bank is -EINVAL; a full window -ENOMEM). Windowed
 * sub-devices share those addresses, never banks (-EINVAL). -EBUSY while a buffer lies
 * where the window goes; -EINVAL when the size is not a multiple of the group's
 * alignment, -ERANGE when the region is smaller; -EOPNOTSUPP from a memd from before
 * windows (without a window the definition is sent in the form it reads). */
MEMCLIENT_API int memclient_subdev_define(memclient *c, const memclient_subdev *sd);
/* Binds this session to the sub-device called name; -EPERM if bound to another. */
MEMCLIENT_API int memclient_subdev_bind(memclient *c, const char *name);

/* ---- cgroup limits --------------------------------------------------------------------
 *
 * Device memory limits per cgroup with the kernel dmem controller's meaning: what the
 * sessions of processes in cgroup C and its descendants hold on (device, bank group),
 * counted in bytes on the device (size per bank x banks), may not pass C's max; an
 * allocation that would is refused with -ENOMEM, error detail MEMD_ERR_DETAIL_LIMIT,
 * and a message naming C, its max and usage. memd.yaml's `cgroup_limits` and these
 * calls (admin only, -EPERM otherwise; kept in memd's state store) set them. */
MEMCLIENT_API int memclient_limit_set(memclient *c, const char *cgroup, uint32_t device,
                                      memd_kind kind, uint64_t max);
/* Removes cgroup's limits on device (MEMCLIENT_ALL_DEVICES: every one) and kind
 * (MEMD_KIND_COUNT: both groups). -ENOENT if it had none there. Admin only. */
MEMCLIENT_API int memclient_limit_clear(memclient *c, const char *cgroup, uint32_t device,
                                        memd_kind kind);

/* ---- peaks ----------------------------------------------------------------------------
 *
 * High-water marks, like PyTorch's max_memory_allocated: the most bytes in use since the
 * daemon started or the last reset that covered them, and when. In memd's memory only:
 * they restart with the daemon. */
typedef enum memclient_peak_what {
    MEMCLIENT_PEAK_GROUP = 0,   /* a device's bank group: its buffers, every bank counted */
    MEMCLIENT_PEAK_REGION = 1,  /* a region of it, likewise */
    MEMCLIENT_PEAK_SESSION = 2, /* a session in a bank group (a shared buffer counts in
                                   full for each holder) */
    MEMCLIENT_PEAK_POOL = 3,    /* a client pool: the bytes its owner reported
                                   sub-allocated, per bank (the pool's unit) */
} memclient_peak_what;

typedef struct memclient_peak {
    unsigned what;              /* memclient_peak_what */
    memd_kind kind;             /* the bank group */
    uint32_t region;            /* REGION, POOL: region index in the group */
    uint32_t device;
    uint32_t session_id, pid;   /* SESSION, POOL: the session holding it, its process */
    uint64_t pool;              /* POOL: the pool allocation's handle */
    uint64_t current;           /* bytes in use now */
    uint64_t peak;              /* the most since the daemon started or the last reset */
    uint64_t peak_ns;           /* when it was reached (or reset), CLOCK_REALTIME */
} memclient_peak;

/* The peaks this session may see on device (MEMCLIENT_ALL_DEVICES: every one): every bank
 * group's and allocatable region's, then this session's own per bank group (those it has
 * held something in) and client pool; an admin's, every session's. *out: *n records, to
 * release with free(). 0 or a negative errno. */
MEMCLIENT_API int memclient_peaks(memclient *c, uint32_t device, memclient_peak **out,
                                  size_t *n);

#define MEMCLIENT_PEAKS_OWN 0u          /* memclient_peaks_reset: this session's */
#define MEMCLIENT_PEAKS_ALL 0xffffffffu /* every peak: bank groups, regions, sessions, pools
                                           and the cgroup limits' dmem.peak (admin only) */

/* Sets the peaks on device (MEMCLIENT_ALL_DEVICES: every one) to the current bytes, now:
 * session MEMCLIENT_PEAKS_OWN this session's (its bank groups and pools),
 * MEMCLIENT_PEAKS_ALL every one, else that session's. -EPERM: not admin, and not its own
 * session; -ENOENT: no such session; -ENODEV: no such device. */
MEMCLIENT_API int memclient_peaks_reset(memclient *c, uint32_t device, uint32_t session);

/* "group", "region", "session", "pool" for a memclient_peak's what; "?" otherwise. */
MEMCLIENT_API const char *memclient_peak_what_name(unsigned what);

/* The ids of the banks of device's bank group kind whose logical core (x, y) has x among
 * xs[0..nx) and y among ys[0..ny): what memclient_subdev_define needs for a partition of
 * cores on a tt-metal device, whose L1 bank ids are shuffled over the grid (memd.yaml's
 * `cores:` picks the same banks). Read from memd's per-bank records (a dump with
 * MEMCLIENT_DUMP_BANKS: one round trip per page). Writes at most cap ids, increasing,
 * and returns how many there are (which may be more than cap: call again with a larger
 * array), or:
 *   -ENODEV   no such device
 *   -ENOENT   the device has no bank group kind (or no banks in it)
 *   -ENODATA  the group's banks have no core coordinates (tt-metal devices' do)
 *   -ENXIO    no bank lies on these cores
 *   -EINVAL   a kind out of range, MEMCLIENT_ALL_DEVICES, or a NULL array with a count */
MEMCLIENT_API int memclient_banks_on_cores(memclient *c, uint32_t device, memd_kind kind,
                                           const uint32_t *xs, size_t nx, const uint32_t *ys,
                                           size_t ny, uint32_t *ids, size_t cap);

/* ---- state dump ----------------------------------------------------------------------- */

typedef struct memclient_stats {
    uint64_t total;             /* bytes per bank */
    uint64_t allocated;
    uint64_t free;
    uint64_t largest_free;
    uint64_t largest_free_addr;
    uint64_t free_blocks;
    uint64_t allocations;
} memclient_stats;

typedef struct memclient_server {
    char version[32];
    uint64_t start_ns;          /* CLOCK_REALTIME */
    uint64_t now_ns;            /* the daemon's clock when it wrote the dump */
    uint32_t sessions;
    uint32_t pid;
    uint64_t requests;          /* counters since start */
    uint64_t allocs;
    uint64_t frees;
    uint64_t alloc_failures;
    uint64_t protocol_errors;
    uint64_t sessions_total;
    uint64_t bytes_in;
    uint64_t bytes_out;
} memclient_server;

typedef struct memclient_device {
    uint32_t id;
    int texture;                /* 1 if dram.texture is offered */
    char name[MEMD_NAME_MAX];
    char arch[MEMD_NAME_MAX];
} memclient_device;

typedef struct memclient_group {
    uint32_t device;
    memd_kind kind;
    uint32_t nregions;
    uint32_t banks;
    uint32_t clients;           /* sessions holding something in this group */
    uint64_t bank_size;
    uint64_t alignment;
    memclient_stats stats;      /* over the allocatable regions, per bank */
} memclient_group;

typedef struct memclient_region {
    uint32_t device;
    memd_kind kind;
    uint32_t region;            /* index in the group: memclient_buffer.region */
    int allocatable;
    char name[MEMD_NAME_MAX];
    uint64_t base;
    uint64_t size;
    memclient_stats stats;      /* zeros if not allocatable */
} memclient_region;

/* With MEMCLIENT_DUMP_BANKS: one bank's map of one allocatable region. */
typedef struct memclient_bank_use {
    uint32_t device;
    memd_kind kind;
    uint32_t region;
    uint32_t bank;
    uint16_t logical_x, logical_y, noc_x, noc_y; /* MEMD_NO_CORE: none */
    memclient_stats stats;
} memclient_bank_use;

/* With MEMCLIENT_DUMP_BANKS: one bank of a subset or per-bank allocation (one entry per
 * bank, an allocation's entries together, after it in the daemon's order). */
typedef struct memclient_alloc_bank {
    uint64_t handle;
    memd_bank_mode mode;
    memclient_bank bank;
} memclient_alloc_bank;

typedef struct memclient_block {
    uint32_t device;
    memd_kind kind;
    uint32_t region;
    int allocated;
    uint64_t address;
    uint64_t size;
} memclient_block;

/* Plans, models and instances: with MEMCLIENT_DUMP_MODELS (see "plans and models"). */
typedef struct memclient_plan_rec {
    uint64_t plan_id;
    uint64_t arena;             /* bytes */
    uint64_t lower_bound;       /* bytes: no plan can use less */
    uint64_t created_ns;
    uint64_t plan_us;           /* time the daemon spent planning or validating it */
    uint64_t hits;              /* requests answered from the cache */
    uint32_t buffers;
    uint32_t models;            /* loaded models using it */
    int optimal;
    int precomputed;
    char strategy[32];
} memclient_plan_rec;

typedef struct memclient_model_rec {
    uint64_t model_id;
    uint64_t plan_id;
    uint64_t code_handle;       /* 0: none */
    uint64_t const_handle;      /* 0: no weights */
    uint64_t code_bytes;
    uint64_t const_bytes;
    uint64_t arena;             /* bytes of one instance's arena */
    uint64_t created_ns;
    uint32_t device;
    uint32_t users;             /* sessions that loaded it */
    uint32_t ntensors;
    uint32_t instances;
    char name[MEMD_NAME_MAX];
    /* With MEMCLIENT_DUMP_MODEL_STATE (state_known; one request more, MODEL_STATES):
     * filling or ready (see memclient_model_set_ready), who fills it, how many
     * memclient_model_wait calls wait for it. */
    int state_known;
    int ready;
    uint32_t filler_session;    /* filling: 0 when nobody fills it yet */
    uint32_t filler_pid;
    uint32_t waiters;
} memclient_model_rec;

/* A MODEL_STATES record, which memclient_dump folds into its memclient_model_rec. */
typedef struct memclient_model_state {
    uint64_t model_id;
    int ready;
    uint32_t filler_session, filler_pid, waiters;
} memclient_model_state;

typedef struct memclient_instance_rec {
    uint64_t instance_id;
    uint64_t model_id;
    uint64_t arena_handle;
    uint64_t arena_address;
    uint64_t arena_bytes;
    uint64_t placeholder_bytes;
    uint32_t session_id;
    uint32_t pid;
    uint32_t placeholders;
    int busy;                   /* 0: released, on its session's free list */
} memclient_instance_rec;

typedef struct memclient_session_rec {
    uint32_t id;
    uint32_t pid;
    uint32_t uid;
    uint32_t gid;
    uint64_t connected_ns;      /* CLOCK_REALTIME */
    uint64_t allocations;
    uint64_t requests;
    char comm[16];
    char client_name[32];
    int orphaned;               /* from before a daemon restart, not reclaimed yet */
    uint64_t reclaim_deadline_ns; /* orphaned: released at this time (CLOCK_REALTIME) */
    uint32_t subdev;            /* bound sub-device: index in subdevs + 1; 0 none (needs
                                   MEMCLIENT_DUMP_BANKS to resolve) */
    char cgroup[256];           /* MEMCLIENT_DUMP_CGROUPS: the process's cgroup when it
                                   connected (v2 path); "" unknown or not asked for */
} memclient_session_rec;

/* With MEMCLIENT_DUMP_BANKS: a sub-device (see "sub-devices"). */
typedef struct memclient_subdev_rec {
    char name[MEMD_NAME_MAX];
    uint32_t device;
    memd_kind kind;
    int from_config;            /* else defined by an admin's request */
    uint32_t nbanks;
    uint32_t sessions;          /* bound sessions */
    uint64_t budget;            /* bytes; 0: none */
    uint64_t used;              /* bytes charged (size per bank x banks) */
    uint64_t allocations;
    char banks[128];            /* "0-31,40" ("..." when cut: use bank_ids) */
    const uint32_t *bank_ids;   /* all nbanks ids, increasing (in the snapshot's storage);
                                   NULL when memd sent no list (a daemon from before it) */
    uint64_t window;            /* bytes per bank of its window (memclient_subdev); 0: none */
    uint64_t window_start;      /* [window_start, + window) of region window_region */
    uint32_t window_region;
    uint64_t window_allocated;  /* bytes per bank its buffers take in the window */
    uint64_t window_allocations;
} memclient_subdev_rec;
/* With MEMCLIENT_DUMP_LIMITS: a cgroup limit (see "cgroup limits"). */
typedef struct memclient_limit {
    char cgroup[256];
    uint32_t device;
    memd_kind kind;
    int from_config;            /* memd.yaml's; else set by memclient_limit_set */
    uint64_t max;               /* dmem.max: bytes on the device */
    uint64_t current;           /* dmem.current: charged to it and its descendants */
    uint64_t peak;              /* dmem.peak: since the limit was set (or memd started) */
} memclient_limit;

/* With MEMCLIENT_DUMP_FAILURES: allocations refused on one device, by reason. */
typedef struct memclient_failures {
    uint32_t device;
    uint64_t no_room;           /* -ENOMEM: no free range fits */
    uint64_t quota;             /* -EDQUOT: per-uid quota or sub-device budget */
    uint64_t limit;             /* -ENOMEM: a cgroup limit */
    uint64_t too_large;         /* -E2BIG, -EOVERFLOW */
    uint64_t other;
} memclient_failures;

/* What one session holds in one bank group (MEMCLIENT_DUMP_USAGE). bytes counts every
 * bank a buffer reserves (size per bank x the group's banks); a shared buffer counts in
 * full for each holder, and also in shared_bytes. */
typedef struct memclient_session_use {
    uint32_t session_id;
    uint32_t device;
    memd_kind kind;
    uint32_t allocations;
    uint64_t bytes;
    uint64_t shared_bytes;
} memclient_session_use;

/* Client pools: with MEMCLIENT_DUMP_POOLS; sub-allocations with MEMCLIENT_DUMP_SUBALLOCS. */
typedef struct memclient_pool_rec {
    uint64_t handle;            /* the pool range's allocation (in allocs[]) */
    uint64_t as_of_ns;          /* CLOCK_REALTIME of the last report memd applied */
    uint64_t pooled_bytes;      /* bytes in its sub-allocations, as of then */
    uint64_t reports;
    uint32_t suballocs;
} memclient_pool_rec;

typedef struct memclient_suballoc_rec {
    uint64_t pool;              /* handle of the pool range */
    uint64_t offset;            /* from the range's address */
    uint64_t size;
    uint64_t as_of_ns;          /* its pool's */
    char name[MEMD_NAME_MAX];
} memclient_suballoc_rec;

/* A parsed snapshot of the daemon's state, in the daemon's order (groups after their
 * device, regions after their group). Free it with memclient_snapshot_free(). */
typedef struct memclient_snapshot {
    memclient_server server;
    size_t ndevices;
    memclient_device *devices;
    size_t ngroups;
    memclient_group *groups;
    size_t nregions;
    memclient_region *regions;
    size_t nallocs;
    memclient_alloc_info *allocs;
    size_t nsessions;
    memclient_session_rec *sessions;
    size_t nblocks;             /* only with MEMCLIENT_DUMP_BLOCKS */
    memclient_block *blocks;
    size_t nplans;              /* only with MEMCLIENT_DUMP_MODELS */
    memclient_plan_rec *plans;
    size_t nmodels;
    memclient_model_rec *models;
    size_t ninstances;
    memclient_instance_rec *instances;
    size_t nbank_use;           /* only with MEMCLIENT_DUMP_BANKS */
    memclient_bank_use *bank_use;
    size_t nalloc_banks;
    memclient_alloc_bank *alloc_banks;
    size_t nsubdevs;            /* only with MEMCLIENT_DUMP_BANKS */
    memclient_subdev_rec *subdevs;
    size_t nusage;              /* only with MEMCLIENT_DUMP_USAGE */
    memclient_session_use *usage;
    size_t npools;              /* only with MEMCLIENT_DUMP_POOLS or _SUBALLOCS */
    memclient_pool_rec *pools;
    size_t nsuballocs;          /* only with MEMCLIENT_DUMP_SUBALLOCS: by pool, in address
                                   order */
    memclient_suballoc_rec *suballocs;
    size_t nsubdev_bank_ids;
    uint32_t *subdev_bank_ids;  /* storage of every subdevs[i].bank_ids */
    size_t nlimits;             /* only with MEMCLIENT_DUMP_LIMITS */
    memclient_limit *limits;
    size_t nfailures;           /* only with MEMCLIENT_DUMP_FAILURES: one per device */
    memclient_failures *failures;
    size_t nranges;             /* only with MEMCLIENT_DUMP_RANGES: one per allocatable
                                   region, in the regions' order */
    memclient_range *ranges;
    size_t npeaks;              /* only with MEMCLIENT_DUMP_PEAKS (memclient_peaks) */
    memclient_peak *peaks;
} memclient_snapshot;

enum {
    MEMCLIENT_DUMP_BLOCKS = 1u << 0, /* also every free and allocated block of every region */
    MEMCLIENT_DUMP_MODELS = 1u << 1, /* also cached plans, models and instances */
    MEMCLIENT_DUMP_USAGE = 1u << 2,  /* also what each session holds per bank group */
    MEMCLIENT_DUMP_POOLS = 1u << 3,  /* also client pools (pools[]) */
    MEMCLIENT_DUMP_SUBALLOCS = 1u << 4, /* also their sub-allocations (implies POOLS) */
    MEMCLIENT_DUMP_BANKS = 1u << 5,  /* also per-bank use, the banks of bank-set buffers and
                                        the sub-devices with their whole bank lists */
    MEMCLIENT_DUMP_CGROUPS = 1u << 6, /* also each session's cgroup (sessions[].cgroup) */
    MEMCLIENT_DUMP_MODEL_STATE = 1u << 7, /* with MODELS: each model's readiness */
    MEMCLIENT_DUMP_LIMITS = 1u << 8, /* also the cgroup limits (limits[]) */
    MEMCLIENT_DUMP_FAILURES = 1u << 9, /* also refused allocations per device (failures[]) */
    MEMCLIENT_DUMP_RANGES = 1u << 10, /* also what is left of each allocatable region's range
                                        (ranges[]: memclient_region_shrink) */
    MEMCLIENT_DUMP_PEAKS = 1u << 11, /* also the high-water marks (peaks[]; one request more,
                                        PEAKS) */
    /* Every flag above: memclient_dump refuses the others with -EINVAL. */
    MEMCLIENT_DUMP_ALL = (1u << 12) - 1,
};

#define MEMCLIENT_ALL_DEVICES UINT32_MAX

/* The daemon's state for one device (or MEMCLIENT_ALL_DEVICES), as far as the daemon
 * lets this session see it (root and the admin group see every session's allocations). */
MEMCLIENT_API int memclient_dump(memclient *c, uint32_t device, unsigned flags,
                                 memclient_snapshot **out);
MEMCLIENT_API void memclient_snapshot_free(memclient_snapshot *s);

/* Lookups in a snapshot; NULL if absent. */
MEMCLIENT_API const memclient_region *memclient_snapshot_region(const memclient_snapshot *s,
                                                                uint32_t device, memd_kind kind,
                                                                uint32_t region);
/* memclient_banks_on_cores over a snapshot taken with MEMCLIENT_DUMP_BANKS, without a
 * round trip (several partitions from one dump). Its errors, but not -ENODEV (the dump's
 * own), and -EINVAL also for a NULL snapshot. */
MEMCLIENT_API int memclient_snapshot_banks_on_cores(const memclient_snapshot *s, uint32_t device,
                                                    memd_kind kind, const uint32_t *xs,
                                                    size_t nx, const uint32_t *ys, size_t ny,
                                                    uint32_t *ids, size_t cap);

/* ---- event log ------------------------------------------------------------------------
 *
 * The daemon keeps its last events (protocol.h, "Events") in a ring numbered from 1. An
 * admin reads all of them, others those of their own uid. Follow the log by calling
 * again with since = the page's next_seq; lost counts events the ring overwrote before
 * they were read. */
typedef struct memclient_event {
    uint64_t seq;
    uint64_t time_ns;           /* CLOCK_REALTIME */
    memd_event_type type;
    int priority;               /* syslog: 3 error .. 7 debug */
    uint32_t pid, uid, session_id; /* 0: not a session's event */
    uint32_t device;            /* UINT32_MAX: none */
    uint64_t bytes;             /* released (session close, orphan release), requested
                                   (failures), code + constants (model load) */
    char comm[16];
    char message[256];
} memclient_event;

typedef struct memclient_events_page {
    size_t n;
    memclient_event *events;
    uint64_t next_seq;
    uint64_t lost;
} memclient_events_page;

/* Up to max events (0: up to the daemon's page size, 1024) with seq >= since. Free the
 * page with memclient_events_page_free(). */
MEMCLIENT_API int memclient_events(memclient *c, uint64_t since, uint32_t max,
                                   memclient_events_page *out);
/* The same, but when there is no event >= since for this session yet, memd answers when
 * one comes, or after MEMD_EVENTS_WAIT_MS (10 s) with an empty page: a follower calls it
 * in a loop with since = out->next_seq. Other requests on the connection wait meanwhile
 * (use a connection of its own). */
MEMCLIENT_API int memclient_events_wait(memclient *c, uint64_t since, uint32_t max,
                                        memclient_events_page *out);
MEMCLIENT_API void memclient_events_page_free(memclient_events_page *p);
/* "session_open", "alloc_fail", ...; "?" for an unknown type. */
MEMCLIENT_API const char *memclient_event_type_name(memd_event_type t);

/* ---- post-mortems ----------------------------------------------------------------------
 *
 * Each out-of-memory refusal saves a snapshot in the daemon (protocol.h, "Post-mortems"):
 * the request and who made it, the region's state, its top holders, its largest free
 * blocks and the last recorder events on the device. memclient_error.postmortem names it.
 * An admin reads every one, others those of their own uid. */
typedef struct memclient_postmortem {
    uint64_t id;
    uint64_t time_ns;           /* CLOCK_REALTIME of the refusal */
    uint64_t requested;         /* bytes asked for */
    uint64_t size_per_bank;
    uint64_t alignment;         /* the request's, 0: the class policy's */
    uint64_t region_base;       /* in the bank group's address map */
    uint64_t region_size;       /* per bank */
    uint64_t allocated, free, largest_free; /* the region (or the bank that ran out) */
    int32_t status;             /* the negative errno the client got */
    memclient_error_detail detail;
    uint32_t device;
    uint32_t banks;
    uint32_t session_id, pid, uid;
    uint32_t nholders, nfree, nevents; /* of the report (memclient_postmortem_get) */
    memd_class cls;
    memd_kind kind;
    uint32_t region;
    memd_scope scope;
    memd_dir dir;
    char region_name[MEMD_NAME_MAX];
    char comm[16];
    char client_name[32];
    char cgroup[256];
    char message[192];          /* what the client was told */
} memclient_postmortem;

typedef struct memclient_free_block {
    uint64_t address;           /* in the bank group's map */
    uint64_t size;              /* per bank */
} memclient_free_block;

struct memclient_hist_event;
typedef struct memclient_postmortem_report {
    memclient_postmortem info;
    memclient_holder *holders;         /* info.nholders, the biggest first */
    memclient_free_block *free_blocks; /* info.nfree, the largest first */
    struct memclient_hist_event *events; /* info.nevents, oldest first */
} memclient_postmortem_report;

/* The post-mortems this session may see, oldest first: *out (free() it) gets *n. */
MEMCLIENT_API int memclient_postmortems(memclient *c, memclient_postmortem **out, size_t *n);
/* Post-mortem id: -ENOENT when there is none this session may see. Free the report with
 * memclient_postmortem_report_free(). */
MEMCLIENT_API int memclient_postmortem_get(memclient *c, uint64_t id,
                                           memclient_postmortem_report *out);
MEMCLIENT_API void memclient_postmortem_report_free(memclient_postmortem_report *r);

/* ---- the flight recorder ---------------------------------------------------------------
 *
 * Every allocation, free, refused allocation and release, with who made it and in what
 * context (protocol.h, "History"). An admin reads every record, others those of their own
 * uid. Follow it by calling again with since = the page's next_seq. */
/* protocol.h's MEMD_CONTEXT_MAX and MEMD_STACK_MAX (the generated converter checks them) */
#define MEMCLIENT_CONTEXT_MAX 128
#define MEMCLIENT_STACK_MAX 512

typedef struct memclient_hist_event {
    uint64_t seq;
    uint64_t time_ns;           /* CLOCK_REALTIME */
    uint64_t handle;            /* 0: none (a refused allocation) */
    uint64_t address;
    uint64_t size_per_bank;
    uint64_t bytes;             /* FAIL: bytes asked for; else size_per_bank x banks */
    uint8_t type;               /* memd_hist_type (<memd/protocol.h>): MEMD_HIST_ALLOC, ... */
    uint8_t cls;                /* memd_class */
    uint8_t kind;               /* memd_kind: the bank group */
    uint8_t region;             /* the region's index in its group */
    int32_t status;             /* MEMD_HIST_FAIL: the negative errno; else 0 */
    uint32_t device;
    uint32_t banks;
    uint32_t session_id, pid, uid;
    uint32_t actor_session, actor_pid, actor_uid; /* MEMD_HIST_REVOKE: the admin */
    char comm[16];
    char client_name[32];
    char name[MEMD_NAME_MAX];
    char context[MEMCLIENT_CONTEXT_MAX];
    char stack[MEMCLIENT_STACK_MAX];
    /* The types after REVOKE (a daemon with them; older ones send none):
     * MEMD_HIST_POOL_REPORT: handle and address are the pool's, bytes its live
     * sub-allocations, count how many, added and removed what the report changed;
     * MEMD_HIST_MODEL_LOAD / _UNLOAD: id (the model's), name, bytes (code and constants);
     * MEMD_HIST_INSTANCE_CREATE / _RELEASE: id (the instance's), model_id, name (the
     * model's), bytes (arena and placeholders); MEMD_HIST_SUBDEV_DEFINE / _BIND: name,
     * device, kind, count (banks), bytes (budget). */
    uint64_t id, model_id;
    uint32_t count, added, removed;
} memclient_hist_event;

typedef struct memclient_history_page {
    size_t n;
    memclient_hist_event *events;
    uint64_t next_seq;
    uint64_t lost;
    uint64_t capacity;          /* records the daemon's ring keeps (0: recorder off) */
    uint32_t record_size;       /* bytes the daemon keeps per record */
} memclient_history_page;

/* Which records memclient_history returns (zero-initialised: all). */
typedef struct memclient_history_filter {
    uint64_t since_ns;          /* at or after this CLOCK_REALTIME; 0: any time */
    uint32_t device;            /* MEMCLIENT_ANY_DEVICE: any */
    uint32_t pid;               /* 0: any */
    const char *client;         /* client or process name; NULL or "": any */
} memclient_history_filter;

#define MEMCLIENT_ANY_DEVICE UINT32_MAX

/* Up to max records (0: the daemon's page size) with seq >= since that pass f (NULL: all
 * records, any device). Free the page with memclient_history_page_free(). -EINVAL for a
 * client name of 32 bytes or more. */
MEMCLIENT_API int memclient_history(memclient *c, uint64_t since, uint32_t max,
                                    const memclient_history_filter *f,
                                    memclient_history_page *out);
MEMCLIENT_API void memclient_history_page_free(memclient_history_page *p);
/* "alloc", "free", "fail", "release", "revoke", "pool_report", "model_load",
 * "model_unload", "instance_create", "instance_release", "subdev_define", "subdev_bind";
 * "?" for an unknown type. */
MEMCLIENT_API const char *memclient_hist_type_name(unsigned type);

/* ---- revocation ------------------------------------------------------------------------
 *
 * An admin may free a buffer this connection's session holds (memctl free). A daemon that
 * knows revocation notices (protocol.h, "Revocation notices") tells the session with the
 * reply to its next request; the library keeps what came until memclient_revoked takes it,
 * or hands each notice to the callback of memclient_set_revoke_cb. No thread and no extra
 * request: a notice arrives with whatever the connection asks next. */
typedef struct memclient_revoke {
    uint64_t handle;            /* the buffer this session lost */
    uint64_t time_ns;           /* CLOCK_REALTIME of the free */
    uint32_t device;
    uint32_t actor_session, actor_pid, actor_uid; /* the admin who freed it */
    char actor_comm[16];        /* its process name */
    char actor_client[32];      /* its client name */
} memclient_revoke;

/* Takes up to cap of the notices received so far, oldest first, into out; returns how
 * many (0: none), or -EINVAL (c NULL, or out NULL with cap > 0). Makes no request. */
MEMCLIENT_API int memclient_revoked(memclient *c, memclient_revoke *out, size_t cap);

/* fn(arg, notice) for every notice, called at the end of the libmemclient call whose reply
 * brought it, in the caller's thread and without the connection's lock (fn may call
 * libmemclient; the pool report timer never calls it). Notices go to fn instead of
 * memclient_revoked's queue, those already queued too; fn NULL: back to the queue. */
typedef void (*memclient_revoke_fn)(void *arg, const memclient_revoke *notice);
MEMCLIENT_API int memclient_set_revoke_cb(memclient *c, memclient_revoke_fn fn, void *arg);

/* What this connection's next requests are about, recorded with each allocation it makes
 * until the next call: context (e.g. "decoder/layer3") and an optional short stack (NULL
 * or "": none). -EINVAL when context is 128 bytes or more or stack 512 or more. */
MEMCLIENT_API int memclient_set_context(memclient *c, const char *context, const char *stack);

/* ---- plans and models ------------------------------------------------------------------
 *
 * Plan: offsets for buffers with known lifetimes inside one arena, so that no two buffers
 * live at the same time share a byte. memd plans a problem (or validates a compiler's
 * precomputed plan) and caches the result by a hash of the problem: the same problem
 * submitted again, by any session, is answered from the cache at once.
 *
 * Model: a graph's tensors and ops. memd derives each activation's lifetime (from the op
 * that produces it to the last op that reads it; in-place ops alias their input and
 * extend its lifetime; an alias that is a graph output keeps its source to the end),
 * plans the activations into one arena, and allocates the model's code and weights once
 * per device as shared buffers that every session loading the same model (same name and
 * content) holds by reference count. Model names are scoped as shared names are
 * (memd.yaml shared_names): per uid by default, so another uid's model of the same name
 * is another model.
 *
 * Instance: one inference in flight: an arena (class internal) sized by the plan plus one
 * buffer per input, output and in-out tensor, with every tensor's absolute address.
 * Several instances of a model may exist at once. A released instance stays allocated on
 * the session's free list for that model and the next instance_create hands it back
 * (same addresses, nothing allocated) unless released with MEMCLIENT_INSTANCE_FREE.
 * Everything is released when the model is unloaded or the connection closes. */

typedef struct memclient_plan_buffer {
    uint64_t lower;             /* lifetime [lower, upper), in any unit of time */
    uint64_t upper;
    uint64_t size;              /* bytes */
    uint64_t alignment;         /* power of two; 0 means 1 */
    uint64_t offset;            /* the pin when pinned; with MEMCLIENT_PLAN_PRECOMPUTED the
                                   plan's offset of every buffer */
    int pinned;                 /* the planner must place the buffer at offset */
} memclient_plan_buffer;

enum {
    /* The offsets are a plan to validate, not a problem to plan. An invalid plan fails
     * with -EINVAL naming the first two buffers that overlap. */
    MEMCLIENT_PLAN_PRECOMPUTED = 1u << 0,
};

typedef struct memclient_plan_opts {
    unsigned flags;             /* MEMCLIENT_PLAN_* */
    uint32_t budget_ms;         /* improvement time; 0: the daemon's default (100 ms); the
                                   daemon caps it (1000 ms). A cached plan is reused whatever
                                   the budget. */
    uint64_t seed;              /* the planner's random steps */
} memclient_plan_opts;

typedef struct memclient_plan_info {
    uint64_t plan_id;           /* the cache key; names the plan in dumps */
    uint64_t arena;             /* bytes */
    uint64_t lower_bound;       /* bytes; gap = (arena - lower_bound) / lower_bound */
    uint64_t iterations;
    uint64_t plan_us;           /* daemon time spent when it was planned */
    uint32_t buffers;
    int cached;                 /* answered from the cache */
    int optimal;
    int precomputed;
    char strategy[32];
} memclient_plan_info;

/* Plans bufs[0..n) (opts may be NULL) and writes each buffer's offset to offsets[0..n)
 * (may be NULL). Problems larger than one frame are uploaded in parts. */
MEMCLIENT_API int memclient_plan_submit(memclient *c, const memclient_plan_buffer *bufs,
                                        size_t n, const memclient_plan_opts *opts,
                                        memclient_plan_info *out, uint64_t *offsets);

/* Tensor roles. ALIAS appears only in what memd reports: a tensor written by an in-place
 * op is stored in the tensor it aliases. */
typedef enum memclient_tensor_role {
    MEMCLIENT_TENSOR_ACTIVATION = 0, /* intermediate: planned into the instance's arena */
    MEMCLIENT_TENSOR_WEIGHT = 1,     /* constant: in the model's shared constants buffer */
    MEMCLIENT_TENSOR_INPUT = 2,      /* placeholders: one buffer each per instance */
    MEMCLIENT_TENSOR_OUTPUT = 3,
    MEMCLIENT_TENSOR_INOUT = 4,
    MEMCLIENT_TENSOR_ALIAS = 5,
} memclient_tensor_role;

#define MEMCLIENT_MODEL_DEFAULT_ALIGN 64 /* tensor alignment when none is given */
#define MEMCLIENT_NO_TENSOR UINT32_MAX

typedef struct memclient_tensor_desc {
    const char *name;           /* for messages; may be NULL */
    memclient_tensor_role role; /* ACTIVATION .. INOUT */
    uint64_t bytes;             /* size, when dtype is MEMD_DTYPE_NONE */
    memd_dtype dtype;           /* else shape[0..ndim) elements of dtype */
    uint32_t ndim;
    uint64_t shape[MEMD_MAX_DIMS];
    uint64_t alignment;         /* 0: MEMCLIENT_MODEL_DEFAULT_ALIGN */
} memclient_tensor_desc;

typedef struct memclient_op_desc {
    const char *name;           /* for messages; may be NULL */
    const uint32_t *inputs;     /* tensor indices */
    uint32_t ninputs;
    const uint32_t *outputs;
    uint32_t noutputs;
    int inplace;                /* reshape, view...: every output aliases inputs[0] */
} memclient_op_desc;

typedef struct memclient_model_desc {
    const char *name;           /* [A-Za-z0-9._-], at most 48 bytes */
    uint32_t device;
    memd_scope scope;           /* every buffer of the model */
    uint64_t code_bytes;        /* 0: no code buffer */
    const memclient_tensor_desc *tensors;
    size_t ntensors;
    const memclient_op_desc *ops; /* in execution order: op i runs at time i */
    size_t nops;
    /* Optional precomputed plan (a compiler's): offsets[i] for every ACTIVATION tensor i
     * that is not an alias (other entries are ignored). memd validates it. NULL: memd
     * plans. */
    const uint64_t *offsets;
    /* The page the constants, the arena and the placeholders interleave over the banks
     * with (page i in bank i % banks, memclient_locate): 0: the device's default for
     * the scope (memd.yaml's, see memclient_page_size; a device without one: one page);
     * MEMCLIENT_MODEL_ONE_PAGE: each buffer one page, whole in every bank; else a power
     * of two from the group's alignment to a bank's size. Weights start on page
     * boundaries and activations are planned with at least the page as alignment. */
    uint64_t page_size;
} memclient_model_desc;

#define MEMCLIENT_MODEL_ONE_PAGE UINT64_MAX

/* The default page size of class cls in the bank group of scope on device (the class
 * policy's, else the group's; 0: one page), and that group's alignment and bank count
 * (either pointer may be NULL). */
MEMCLIENT_API int memclient_page_size(memclient *c, uint32_t device, memd_scope scope,
                                      memd_class cls, uint64_t *page_size, uint64_t *alignment,
                                      uint32_t *banks);

/* What memd derives per tensor (memclient_model_lifetimes). */
typedef struct memclient_tensor_life {
    uint64_t size;              /* bytes */
    uint64_t alignment;
    uint64_t lower, upper;      /* storage lifetime [lower, upper) in op steps: activations
                                   and aliases of activations (the source's); others
                                   [0, nops) */
    uint32_t alias_of;          /* the tensor holding the data, or MEMCLIENT_NO_TENSOR */
    uint32_t producer;          /* op index, or MEMCLIENT_NO_TENSOR */
    uint32_t last_use;          /* last op reading it, or MEMCLIENT_NO_TENSOR */
} memclient_tensor_life;

typedef struct memclient_model_error {
    int status;                 /* negative errno */
    size_t op;                  /* the op concerned, or SIZE_MAX */
    size_t tensor;              /* the tensor concerned, or SIZE_MAX */
    char message[256];
} memclient_model_error;

/* Derives every tensor's size and lifetime from the graph (no daemon involved). 0, or
 * -EINVAL with *err (may be NULL) naming the op and tensor at fault: an unknown tensor
 * index, a tensor read before it is written or never written, written twice, a weight or
 * input written, an unused activation, an in-place output larger than its source. */
MEMCLIENT_API int memclient_model_lifetimes(const memclient_model_desc *d,
                                            memclient_tensor_life *out,
                                            memclient_model_error *err);

typedef struct memclient_model_info {
    uint64_t model_id;
    uint64_t plan_id;
    uint64_t arena;             /* bytes of one instance's arena */
    uint64_t lower_bound;
    uint64_t code_handle;       /* 0: none */
    uint64_t code_address;
    uint64_t code_bytes;
    uint64_t const_handle;      /* 0: no weights */
    uint64_t const_address;
    uint64_t const_bytes;
    uint64_t created_ns;
    uint32_t device;
    uint32_t users;             /* sessions that loaded it */
    uint32_t ntensors;
    uint32_t instances;
    int created;                /* this load created the model (else it was shared) */
    int plan_cached;            /* model_load: the plan came from the cache */
    int plan_optimal;
    int plan_precomputed;
    char name[MEMD_NAME_MAX];
    char strategy[32];
    uint64_t page_size;         /* model_load: the page its buffers use (0: one page);
                                   model_query: 0 */
} memclient_model_info;

typedef struct memclient_tensor_info {
    memclient_tensor_role role; /* ALIAS for a tensor stored in another */
    uint32_t alias_of;          /* MEMCLIENT_NO_TENSOR unless ALIAS */
    uint64_t size;
    uint64_t value;             /* WEIGHT: absolute address; ACTIVATION: offset in the
                                   arena; placeholders: 0; ALIAS: its source's value */
} memclient_tensor_info;

/* Loads a model (opts: the plan's, may be NULL): derives lifetimes, submits the plan,
 * loads. tensors (may be NULL) receives d->ntensors entries. Loading a model this
 * session already loaded answers the same and takes nothing more; loading a name that is
 * loaded with other content fails with -EEXIST. */
MEMCLIENT_API int memclient_model_load(memclient *c, const memclient_model_desc *d,
                                       const memclient_plan_opts *opts,
                                       memclient_model_info *out,
                                       memclient_tensor_info *tensors);

/* A loaded model's details (this session's, or any for an admin); writes at most cap
 * tensors and returns the model's tensor count. */
MEMCLIENT_API int memclient_model_query(memclient *c, uint64_t model_id,
                                        memclient_model_info *out,
                                        memclient_tensor_info *tensors, size_t cap);

enum { MEMCLIENT_MODEL_FORCE = 1u << 0 }; /* unload even with instances in use */

/* Releases this session's load of the model, with all its instances. -EBUSY while an
 * instance is in use, unless MEMCLIENT_MODEL_FORCE. */
MEMCLIENT_API int memclient_model_unload(memclient *c, uint64_t model_id, unsigned flags);

/* Readiness. A model's constants are written by the runtime: the load that created it
 * (out->created) makes this session its filler, which writes them and then calls
 * memclient_model_set_ready. Other loaders get created == 0 at once and call
 * memclient_model_wait before they read the constants. Only the filler may set it ready
 * (-EPERM); again once ready is a no-op. */
MEMCLIENT_API int memclient_model_set_ready(memclient *c, uint64_t model_id);
/* Waits (without blocking the daemon or its other clients) until the model this session
 * loaded is ready: 0 with out->created == 0. When its filler went away or unloaded it
 * before setting it ready, the longest waiting session gets the job instead:
 * out->created == 1, fill and memclient_model_set_ready. -ETIMEDOUT when still filling
 * after timeout_ms (-1: no limit; 0: just look); the connection stays usable. The
 * connection's call timeout (memclient_set_timeout) comes on top of timeout_ms. Writes at
 * most cap tensors; returns the model's tensor count. */
MEMCLIENT_API int memclient_model_wait(memclient *c, uint64_t model_id, int timeout_ms,
                                       memclient_model_info *out,
                                       memclient_tensor_info *tensors, size_t cap);

typedef struct memclient_instance {
    uint64_t instance_id;
    uint64_t model_id;
    uint64_t arena_handle;      /* 0 when the model has no activations */
    uint64_t arena_address;
    uint64_t arena_bytes;
    uint32_t ntensors;
    int reused;                 /* handed back from the free list */
} memclient_instance;

typedef struct memclient_tensor_addr {
    uint64_t address;           /* absolute, in the bank group's address map */
    uint64_t handle;            /* the allocation holding the tensor */
} memclient_tensor_addr;

/* A new (or reused) instance; addrs (cap entries, may be NULL) receives every tensor's
 * address in the model's tensor order. Returns the model's tensor count. */
MEMCLIENT_API int memclient_instance_create(memclient *c, uint64_t model_id,
                                            memclient_instance *out,
                                            memclient_tensor_addr *addrs, size_t cap);

enum { MEMCLIENT_INSTANCE_FREE = 1u << 0 }; /* free the buffers instead of keeping them */

MEMCLIENT_API int memclient_instance_release(memclient *c, uint64_t instance_id,
                                             unsigned flags);

#ifdef __cplusplus
}
#endif

#endif
