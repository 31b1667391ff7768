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
 *   is dead: every later call on it returns -ENOTCONN; disconnect and connect again.
 *
 * Threads
 *   Every function is thread-safe. A connection serialises its socket with a mutex, so
 *   several threads may share one connection (their requests are pipelined on one
 *   socket); for throughput give each thread its own connection. memclient_disconnect()
 *   must be the last call on a connection, made when no other thread uses it. After
 *   fork() only one of the two processes may go on using an inherited connection (the
 *   session, and so the ownership of its buffers, is the connection's, not the process's).
 *   Calls block until the daemon answers; there is no timeout.
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
} memclient_session_info;

MEMCLIENT_API int memclient_session(memclient *c, memclient_session_info *out);

/* Largest batch memclient_alloc_batch / memclient_free_batch accept on this connection
 * (from the daemon's frame limit). */
MEMCLIENT_API size_t memclient_max_alloc_batch(memclient *c);
MEMCLIENT_API size_t memclient_max_free_batch(memclient *c);

/* ---- allocation --------------------------------------------------------------------- */

enum {
    /* Named allocation shared by reference count: a request with the same device, name,
     * class and size gets the same buffer; it is released when the last holder frees it
     * or goes away. Needs a name. */
    MEMCLIENT_ALLOC_SHARED = 1u << 0,
};

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
} memclient_buffer;

MEMCLIENT_API int memclient_alloc(memclient *c, const memclient_alloc_req *req,
                                  memclient_buffer *out);

/* All or nothing: either every request is placed (out[0..n) filled) or none is and the
 * error is the first failing element's. */
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
} memclient_alloc_info;

/* An allocation's details. Only the owner (or an admin) may ask: -EPERM otherwise. */
MEMCLIENT_API int memclient_query(memclient *c, uint64_t handle, memclient_alloc_info *out);

/* Absolute address of the buffer in each of its bank group's banks. Writes at most cap
 * entries and returns the number of banks (which may be more than cap: call again with
 * a larger array). */
MEMCLIENT_API int memclient_bank_addresses(memclient *c, uint64_t handle, uint64_t *addrs,
                                           size_t cap);

/* ---- pipelining --------------------------------------------------------------------- */

/* Each submit queues one request frame and stores its ticket in *ticket (may be NULL).
 * Frames are sent when the send buffer fills, at memclient_flush(), or when a call waits
 * for a reply. Output arrays must stay valid until the request completes. */
MEMCLIENT_API int memclient_submit_alloc(memclient *c, const memclient_alloc_req *req,
                                         memclient_buffer *out, uint64_t *ticket);
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
} memclient_error;

/* Static text for a negative errno (or a positive one). Never NULL. */
MEMCLIENT_API const char *memclient_strerror(int err);

/* Copies the details of the calling thread's most recent failed memclient call (any
 * connection) into *out and returns out->status; a successful call does not clear it. */
MEMCLIENT_API int memclient_last_error(memclient_error *out);

/* ---- names ---------------------------------------------------------------------------- */

/* Lower-case names as memctl and the JSON dump use them ("dram", "constant",
 * "dram.texture", "bf16"); "?" for an unknown value. Parsing accepts the aliases
 * "global" (dram) and "l1" (sram) and returns 0 or -EINVAL. */
MEMCLIENT_API const char *memclient_kind_name(memd_kind k);
MEMCLIENT_API const char *memclient_class_name(memd_class c);
MEMCLIENT_API const char *memclient_scope_name(memd_scope s);
MEMCLIENT_API const char *memclient_dtype_name(memd_dtype t);
MEMCLIENT_API int memclient_kind_parse(const char *s, memd_kind *out);
MEMCLIENT_API int memclient_class_parse(const char *s, memd_class *out);
MEMCLIENT_API int memclient_scope_parse(const char *s, memd_scope *out);
MEMCLIENT_API int memclient_dtype_parse(const char *s, memd_dtype *out);

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

typedef struct memclient_block {
    uint32_t device;
    memd_kind kind;
    uint32_t region;
    int allocated;
    uint64_t address;
    uint64_t size;
} memclient_block;

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
} memclient_session_rec;

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
} memclient_snapshot;

enum {
    MEMCLIENT_DUMP_BLOCKS = 1u << 0, /* also every free and allocated block of every region */
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

#ifdef __cplusplus
}
#endif

#endif
