/* memd wire protocol, version 1.
 *
 * Unix stream socket. Every frame is a 24-byte header followed by `len` payload bytes.
 * All integers are little-endian; records are fixed-size and encoded field by field in
 * the order declared below with no padding (see proto/wire.h for the codec — never
 * memcpy these structs to the wire). Strings are fixed-size, NUL-padded, and a receiver
 * rejects one without a NUL.
 *
 * Requests may be pipelined; replies come in order and echo the request id. A reply's
 * status is 0 or a negative Linux errno; an error reply's payload is one
 * memd_wire_error record. A frame whose header is malformed (bad magic, version, length
 * over the limit) gets an error reply with request id 0 where possible, then the
 * connection is closed. */
#ifndef MEMD_PROTOCOL_H
#define MEMD_PROTOCOL_H

#include <stdint.h>

#include "memd/types.h"

#define MEMD_PROTO_MAGIC 0x444d454du /* "MEMD" */
#define MEMD_PROTO_VERSION 1
#define MEMD_HDR_SIZE 24
#define MEMD_MAX_REPLY (64u << 20) /* clients refuse larger replies */

typedef struct memd_wire_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t opcode;
    uint64_t id;     /* chosen by the client, echoed in the reply */
    uint32_t len;    /* payload bytes after the header */
    int32_t status;  /* requests: MEMD_REQ_F_* (0 before they existed); replies: 0 or -errno */
} memd_wire_hdr;

/* Request flags, in a request header's status field.
 * RETRY: this request (same opcode, same id, same payload) was sent before on this session
 * and its reply was lost (the daemon restarted; the session was reclaimed). If the
 * session already has its effect, the daemon answers as the first time instead of
 * applying it again: an ALLOC, ALLOC_BATCH or ALLOC_BATCH_BANKS gets the buffers its
 * first sending created (the session's holds remember the request id that made them, in
 * the state store too), a FREE or FREE_BATCH of handles the session no longer holds
 * succeeds without touching
 * anything (an admin's retried free never reclaims another session's hold); likewise
 * an INSTANCE_CREATE gets the instance its first sending made busy (instances remember
 * that request id), and an INSTANCE_RELEASE of an instance already released or freed, or
 * a MODEL_UNLOAD of a model the session no longer uses, succeeds (MODEL_LOAD is always
 * idempotent within a session). Without a trace of the first sending, the request is
 * applied as new. */
enum { MEMD_REQ_F_RETRY = 1u << 0 };

typedef enum memd_opcode {
    MEMD_OP_HELLO = 1,       /* memd_wire_hello -> memd_wire_welcome */
    MEMD_OP_ALLOC = 2,       /* memd_wire_alloc_req -> memd_wire_buffer */
    MEMD_OP_ALLOC_BATCH = 3, /* u32 count, u32 0, count x alloc_req -> u32 count, u32 0, count x buffer; all or nothing */
    MEMD_OP_FREE = 4,        /* u64 handle -> empty */
    MEMD_OP_FREE_BATCH = 5,  /* u32 count, u32 0, count x u64 handle -> empty; all or nothing */
    MEMD_OP_QUERY = 6,       /* u64 handle -> memd_wire_alloc_info */
    MEMD_OP_BANKS = 7,       /* u64 handle -> u32 count, u32 0, count x u64 absolute bank address */
    MEMD_OP_DUMP = 8,        /* memd_wire_dump_req -> sequence of tagged records */
    /* Plans and models (see the section at the end of this file). */
    MEMD_OP_UPLOAD = 9,           /* memd_wire_upload + data -> empty */
    MEMD_OP_PLAN = 10,            /* doc(plan body) -> memd_wire_plan_info + count x u64 offset */
    MEMD_OP_MODEL_LOAD = 11,      /* doc(model body) -> memd_wire_model_info + n x tensor_info */
    MEMD_OP_MODEL_UNLOAD = 12,    /* memd_wire_ref (model id) -> empty */
    MEMD_OP_MODEL_INFO = 13,      /* memd_wire_ref (model id) -> as MODEL_LOAD */
    MEMD_OP_INSTANCE_CREATE = 14, /* memd_wire_ref (model id) -> instance_info + n x tensor_addr */
    MEMD_OP_INSTANCE_RELEASE = 15, /* memd_wire_ref (instance id, MEMD_INST_F_*) -> empty */
    /* The daemon's event log (see the section "Events" at the end of this file). */
    MEMD_OP_EVENTS = 16,          /* memd_wire_events_req -> events_info + count x event */
    /* Client pools (see the section at the end of this file). */
    MEMD_OP_POOL_REPORT = 17,     /* u32 count, u32 0, count x memd_wire_pool_op -> empty; all or nothing */
    /* Bank subsets (see "Bank subsets" below). */
    MEMD_OP_ALLOC_BANKS = 18,     /* alloc_req + memd_wire_bankset + count x u32 bank ->
                                     memd_wire_buffer + u32 count, u32 0, count x bank_addr */
    MEMD_OP_BANK_ADDRS = 19,      /* u64 handle -> u32 count, u32 0, count x bank_addr */
    MEMD_OP_SUBDEV_DEFINE = 20,   /* memd_wire_subdev_def + count x u32 bank -> empty; admin */
    MEMD_OP_SUBDEV_BIND = 21,     /* char name[MEMD_NAME_MAX] -> empty */
    MEMD_OP_ALLOC_BATCH_BANKS = 22, /* u32 count, u32 0, count x ALLOC_BANKS payload ->
                                       u32 count, u32 0, count x ALLOC_BANKS reply; all or
                                       nothing (see "Bank subsets" below) */
    MEMD_OP_OPCODE_COUNT
} memd_opcode;

/* Reply status > 0 is never used; error payload: */
typedef struct memd_wire_error {
    int32_t status;            /* same as the header's */
    uint32_t detail;           /* MEMD_ERR_DETAIL_* (types.h) */
    char message[192];         /* human readable, says what and where */
    /* Filled for -ENOMEM (detail NOMEM) and quota errors: */
    uint64_t requested;        /* bytes the client asked for */
    uint64_t size_per_bank;    /* what lockstep sizing made of it */
    uint64_t allocated;        /* region state at the time of failure */
    uint64_t free;
    uint64_t largest_free;
    uint32_t device;
    uint8_t cls;
    uint8_t kind;
    uint8_t region;
    uint8_t pad;
} memd_wire_error;

#define MEMD_TOKEN_SIZE 16 /* session reclaim token (HELLO, welcome) */

typedef struct memd_wire_hello {
    uint16_t min_version;      /* client accepts [min, max] */
    uint16_t max_version;
    uint32_t flags;            /* MEMD_HELLO_F_* */
    char client_name[32];
    /* Appended (a 40-byte HELLO without them is still accepted and gets the 48-byte
     * welcome of before): with MEMD_HELLO_F_RECLAIM, the session to take back after a
     * daemon restart and the token its welcome carried. */
    uint32_t reclaim_session;
    uint32_t pad;
    uint8_t reclaim_token[MEMD_TOKEN_SIZE];
} memd_wire_hello;

/* Take over the orphaned session reclaim_session with all it holds (same handles, same
 * addresses). Refused with -ESTALE (no such orphaned session: released after its grace
 * period, its process was gone, or the state was reset), -EACCES (token or uid does not
 * match), -EBUSY (that session is connected), -EISCONN (this session holds allocations
 * already); the connection stays usable with its own new session. */
enum { MEMD_HELLO_F_RECLAIM = 1u << 0 };

typedef struct memd_wire_welcome {
    uint16_t version;          /* chosen version */
    uint16_t pad;
    uint32_t session_id;
    uint32_t max_frame;        /* request payload limit */
    uint32_t ndevices;
    char server_version[32];
    /* Appended (sent only in reply to the 64-byte HELLO): */
    uint32_t flags;            /* MEMD_WELCOME_F_* */
    uint32_t reclaimed;        /* MEMD_WELCOME_F_RECLAIMED: allocations taken over */
    uint8_t token[MEMD_TOKEN_SIZE]; /* the secret that reclaims this session */
} memd_wire_welcome;

enum {
    MEMD_WELCOME_F_PERSISTENT = 1u << 0, /* the map survives a daemon restart: token is valid */
    MEMD_WELCOME_F_RECLAIMED = 1u << 1,  /* this HELLO took an orphaned session back */
};

enum {
    MEMD_ALLOC_F_SHARED = 1u << 0, /* named + shared by refcount */
    /* A client pool: an ordinary allocation that its session sub-allocates itself and
     * reports with POOL_REPORT. Not with SHARED. */
    MEMD_ALLOC_F_POOL = 1u << 1,
};

typedef struct memd_wire_alloc_req {
    uint32_t device;
    uint8_t cls;               /* memd_class */
    uint8_t scope;             /* memd_scope */
    uint8_t dtype;             /* memd_dtype; NONE: use bytes */
    uint8_t ndim;
    uint64_t bytes;
    uint64_t shape[MEMD_MAX_DIMS];
    uint64_t page_size;        /* 0: one page */
    uint64_t alignment;        /* 0: class policy */
    uint32_t banks;            /* 0: all banks of the group */
    uint32_t flags;            /* MEMD_ALLOC_F_* */
    char name[MEMD_NAME_MAX];  /* "" = anonymous */
} memd_wire_alloc_req;

typedef struct memd_wire_buffer {
    uint64_t handle;           /* never reused while the daemon's state lives */
    uint64_t address;          /* same in every bank of the group */
    uint64_t size_per_bank;
    uint64_t page_size;
    uint64_t pitch;            /* dram.texture row pitch, else 0 */
    uint32_t banks;
    uint32_t refcount;
    uint8_t kind;              /* memd_kind */
    uint8_t region;
    uint8_t bank_mode;         /* memd_bank_mode (0, lockstep over every bank, before) */
    uint8_t pad[5];
} memd_wire_buffer;

typedef struct memd_wire_alloc_info {
    memd_wire_buffer buf;
    uint32_t device;
    uint8_t cls;
    uint8_t scope;
    uint16_t flags;            /* MEMD_ALLOC_I_* */
    uint32_t pid;              /* creator's credentials (SO_PEERCRED) */
    uint32_t uid;
    uint32_t gid;
    uint32_t session_id;
    uint64_t created_ns;       /* CLOCK_REALTIME */
    char name[MEMD_NAME_MAX];
    char comm[16];             /* creator's process name */
} memd_wire_alloc_info;

enum {
    MEMD_DUMP_F_BLOCKS = 1u << 0, /* also every block of every region */
    /* Also PLAN, MODEL and INSTANCE records. Opt-in, so a client that predates them
     * never meets a tag it does not know. */
    MEMD_DUMP_F_MODELS = 1u << 1,
    /* Also SESSION_USE records: bytes each session holds per device and bank group. */
    MEMD_DUMP_F_USAGE = 1u << 2,
    /* Also a POOL record per client pool; with SUBALLOCS too, each followed by its
     * SUBALLOC records (there may be many: metrics need only the pools). */
    MEMD_DUMP_F_POOLS = 1u << 3,
    MEMD_DUMP_F_SUBALLOCS = 1u << 4,
    /* A page of the dump, from cursor on, ending with a PAGE record that names the next
     * cursor (0: this was the last page). The first page (cursor 0) holds SERVER, the
     * devices, groups and regions (and blocks), then allocations in handle order; later
     * pages only allocations; the last one also the sessions (and models). Each page
     * is bounded, so a dump of a million allocations does not stall the daemon's other
     * clients, and never meets the reply size limit. An allocation that lives through
     * the whole dump appears exactly once; one created or freed meanwhile may or may
     * not. */
    MEMD_DUMP_F_PAGED = 1u << 5,
    /* Also BANK records (per-bank use of every allocatable region, after the region) and
     * ALLOC_BANK records after the ALLOC record of every subset or per-bank buffer. */
    MEMD_DUMP_F_BANKS = 1u << 6,
    /* With BANKS: also a SUBDEV_BANKS record right after each SUBDEV record, with the
     * sub-device's whole bank list (its 128-byte string is cut on big grids). A flag of
     * its own because clients refuse record tags they do not know. */
    MEMD_DUMP_F_SUBDEV_BANKS = 1u << 7,
};

enum { MEMD_ALLOC_I_POOL = 1u << 0 }; /* alloc_info.flags: the allocation is a client pool */

typedef struct memd_wire_dump_req {
    uint32_t device;           /* UINT32_MAX = all */
    uint32_t flags;            /* MEMD_DUMP_F_* */
    uint64_t cursor;           /* MEMD_DUMP_F_PAGED: 0, or the last page's PAGE.next.
                                  Appended: an 8-byte request (no cursor) is still
                                  accepted. */
} memd_wire_dump_req;

/* A DUMP reply is a sequence of records, each: u32 tag, then the record for that tag. */
typedef enum memd_rec_tag {
    MEMD_REC_SERVER = 1,  /* memd_wire_server_rec, exactly one, first */
    MEMD_REC_DEVICE = 2,  /* memd_wire_device_rec */
    MEMD_REC_GROUP = 3,   /* memd_wire_group_rec, after its device */
    MEMD_REC_REGION = 4,  /* memd_wire_region_rec, after its group */
    MEMD_REC_ALLOC = 5,   /* memd_wire_alloc_info */
    MEMD_REC_BLOCK = 6,   /* memd_wire_block_rec (MEMD_DUMP_F_BLOCKS) */
    MEMD_REC_SESSION = 7, /* memd_wire_session_rec */
    MEMD_REC_PLAN = 8,    /* memd_wire_plan_rec (MEMD_DUMP_F_MODELS) */
    MEMD_REC_MODEL = 9,   /* memd_wire_model_rec (MEMD_DUMP_F_MODELS) */
    MEMD_REC_INSTANCE = 10, /* memd_wire_instance_rec (MEMD_DUMP_F_MODELS) */
    MEMD_REC_SESSION_USE = 11, /* memd_wire_session_use (MEMD_DUMP_F_USAGE), after SESSIONs */
    MEMD_REC_POOL = 12,     /* memd_wire_pool_rec (MEMD_DUMP_F_POOLS) */
    MEMD_REC_SUBALLOC = 13, /* memd_wire_suballoc_rec, after its pool, in address order
                               (MEMD_DUMP_F_POOLS | MEMD_DUMP_F_SUBALLOCS) */
    MEMD_REC_PAGE = 14,   /* memd_wire_page_rec, last (MEMD_DUMP_F_PAGED) */
    MEMD_REC_BANK = 15,     /* memd_wire_bank_rec (MEMD_DUMP_F_BANKS), after its region */
    MEMD_REC_ALLOC_BANK = 16, /* memd_wire_alloc_bank_rec (MEMD_DUMP_F_BANKS): one per bank
                                 of a subset / per-bank buffer, after its ALLOC record */
    MEMD_REC_SUBDEV = 17,     /* memd_wire_subdev_rec (MEMD_DUMP_F_BANKS), after the devices */
    MEMD_REC_SUBDEV_BANKS = 18, /* memd_wire_subdev_banks_rec + count x u32 bank id, right
                                   after its SUBDEV record (MEMD_DUMP_F_SUBDEV_BANKS); the
                                   one record whose size varies: 8 + 4 x count */
} memd_rec_tag;

typedef struct memd_wire_page_rec {
    uint64_t next;             /* the cursor of the next page; 0: the dump is complete */
} memd_wire_page_rec;

typedef struct memd_wire_stats {
    uint64_t total;
    uint64_t allocated;
    uint64_t free;
    uint64_t largest_free;
    uint64_t largest_free_addr;
    uint64_t free_blocks;
    uint64_t allocations;
} memd_wire_stats;

typedef struct memd_wire_server_rec {
    char version[32];
    uint64_t start_ns;         /* CLOCK_REALTIME */
    uint64_t now_ns;
    uint32_t sessions;
    uint32_t pid;
    /* counters since start */
    uint64_t requests;
    uint64_t allocs;
    uint64_t frees;
    uint64_t alloc_failures;
    uint64_t protocol_errors;
    uint64_t sessions_total;
    uint64_t bytes_in;
    uint64_t bytes_out;
} memd_wire_server_rec;

typedef struct memd_wire_device_rec {
    uint32_t id;
    uint32_t texture;          /* 1 if dram.texture is offered */
    char name[MEMD_NAME_MAX];
    char arch[MEMD_NAME_MAX];
} memd_wire_device_rec;

typedef struct memd_wire_group_rec {
    uint32_t device;
    uint8_t kind;
    uint8_t nregions;
    uint16_t pad;
    uint32_t banks;
    uint32_t clients;          /* sessions holding something here */
    uint64_t bank_size;
    uint64_t alignment;
    memd_wire_stats stats;     /* over the allocatable regions */
} memd_wire_group_rec;

typedef struct memd_wire_region_rec {
    uint32_t device;
    uint8_t kind;
    uint8_t region;
    uint8_t allocatable;
    uint8_t pad;
    char name[MEMD_NAME_MAX];
    uint64_t base;
    uint64_t size;
    memd_wire_stats stats;     /* zeros if not allocatable */
} memd_wire_region_rec;

typedef struct memd_wire_block_rec {
    uint32_t device;
    uint8_t kind;
    uint8_t region;
    uint8_t allocated;
    uint8_t pad;
    uint64_t address;
    uint64_t size;
} memd_wire_block_rec;

typedef struct memd_wire_session_rec {
    uint32_t id;
    uint32_t pid;
    uint32_t uid;
    uint32_t gid;
    uint64_t connected_ns;     /* CLOCK_REALTIME */
    uint64_t allocations;
    uint64_t requests;
    char comm[16];
    char client_name[32];
    /* Appended: */
    uint32_t flags;            /* MEMD_SESSION_F_* */
    uint32_t subdev;           /* bound sub-device: index of its SUBDEV record + 1; 0 none */
    uint64_t reclaim_deadline_ns; /* ORPHANED: released at this time (CLOCK_REALTIME) */
} memd_wire_session_rec;

/* An orphaned session is one from before a daemon restart whose client has not
 * reclaimed it yet (HELLO with MEMD_HELLO_F_RECLAIM); it holds its allocations until
 * then, until its process is gone, or until reclaim_grace_ms pass. */
enum { MEMD_SESSION_F_ORPHANED = 1u << 0 };

/* What one session holds in one bank group (MEMD_DUMP_F_USAGE): one record per session
 * and (device, kind) where it holds something. bytes counts every bank the buffers
 * reserve (size per bank x the banks reserved); a shared buffer counts in full for each
 * of its holders, and also in shared_bytes. */
typedef struct memd_wire_session_use {
    uint32_t session_id;
    uint32_t device;
    uint8_t kind;              /* memd_kind */
    uint8_t pad[3];
    uint32_t allocations;      /* buffers held there */
    uint64_t bytes;
    uint64_t shared_bytes;
} memd_wire_session_use;

/* ---- Bank subsets -----------------------------------------------------------------------
 *
 * A buffer may use a subset of its bank group's banks: one address free in every bank of
 * a bank set (range lockstep), or an independent address in each bank of the set (per
 * bank, MEMD_BANKSET_F_PER_BANK). ALLOC_BANKS is ALLOC plus the set: ids strictly
 * increasing, below the group's bank count; an empty set with PER_BANK means every bank.
 * Bank ids are the device's: for tt-metal devices, tt-metal's allocator bank ids (see
 * doc: compute cores row by row, then storage cores), with their core coordinates in
 * memd_wire_bank_addr. A bank-set allocation cannot be SHARED.
 *
 * ALLOC_BATCH_BANKS is ALLOC_BATCH for elements that may have bank sets: after the count
 * prefix, count elements, each exactly an ALLOC_BANKS payload (alloc_req, bankset, its
 * ids); an element whose bankset is {0, 0} (no set, not PER_BANK) is a plain ALLOC
 * (lockstep, may be SHARED). The reply's elements are ALLOC_BANKS replies in request
 * order: memd_wire_buffer, then u32 count, u32 0 and count x memd_wire_bank_addr (the
 * buffer's banks in id order; count 0 for a plain element). All or nothing as
 * ALLOC_BATCH: every element passes the same checks as its own ALLOC_BANKS (or ALLOC)
 * would, sub-device rules and quotas included, or nothing is allocated. The daemon first
 * checks the whole frame: an element that does not decode (lengths, unknown flags, a set
 * over MEMD_BANKSET_MAX, bad enums) is a malformed frame (the connection is closed); ids
 * not strictly increasing (a duplicate) get -EINVAL naming the element, with nothing
 * allocated. A reply over MEMD_MAX_REPLY is -E2BIG (nothing allocated). RETRY is
 * honoured as for ALLOC_BATCH. */
enum { MEMD_BANKSET_F_PER_BANK = 1u << 0 };

typedef struct memd_wire_bankset {
    uint32_t flags;            /* MEMD_BANKSET_F_* */
    uint32_t count;            /* bank ids that follow, 0..MEMD_BANKSET_MAX */
} memd_wire_bankset;

/* One bank of a buffer. */
typedef struct memd_wire_bank_addr {
    uint32_t bank;             /* bank id in the group */
    uint16_t logical_x, logical_y; /* the bank's core (MEMD_NO_CORE: none known) */
    uint16_t noc_x, noc_y;
    uint32_t pad;
    uint64_t address;          /* in the bank group's address map */
    uint64_t absolute;         /* address + the bank's offset */
} memd_wire_bank_addr;

typedef struct memd_wire_bank_rec {
    uint32_t device;
    uint8_t kind;
    uint8_t region;
    uint16_t pad;
    uint32_t bank;
    uint16_t logical_x, logical_y, noc_x, noc_y;
    uint32_t pad2;
    memd_wire_stats stats;     /* this bank's map of the region */
} memd_wire_bank_rec;

typedef struct memd_wire_alloc_bank_rec {
    uint64_t handle;
    uint8_t bank_mode;         /* memd_bank_mode */
    uint8_t pad[7];
    memd_wire_bank_addr bank;
} memd_wire_alloc_bank_rec;

/* Sub-devices (partitions): a named subset of one bank group's banks with an optional
 * byte budget. A session bound to one (by the config's users/groups, or by SUBDEV_BIND,
 * before it allocates) allocates only inside it: requests without a bank set get the
 * sub-device's banks (lockstep over them), a bank set must lie inside, other devices and
 * groups are refused (-EACCES), the budget gives -EDQUOT. SUBDEV_DEFINE is admin only and
 * follows the config's rules (overlap only with sub-devices it names, or that name it);
 * a defined sub-device is in the state store before the reply, so a daemon restart brings
 * it back (unless the config then takes its name or banks). A bound session cannot
 * rebind (-EPERM); a binding by request is stored with its session, and a session that
 * reclaims itself after a restart is still bound. */
#define MEMD_SUBDEV_OVERLAPS 4

typedef struct memd_wire_subdev_def {
    char name[MEMD_NAME_MAX];
    uint32_t device;
    uint8_t kind;              /* memd_kind */
    uint8_t pad[3];
    uint64_t budget;           /* bytes over all its banks; 0: none */
    char overlap[MEMD_SUBDEV_OVERLAPS][MEMD_NAME_MAX]; /* "" unused */
    uint32_t count;            /* bank ids that follow (strictly increasing) */
    uint32_t pad2;
} memd_wire_subdev_def;

typedef struct memd_wire_subdev_rec {
    char name[MEMD_NAME_MAX];
    uint32_t device;
    uint8_t kind;
    uint8_t from_config;
    uint16_t pad;
    uint32_t nbanks;
    uint32_t sessions;         /* bound sessions */
    uint64_t budget;           /* 0: none */
    uint64_t used;             /* bytes charged: size per bank x banks, over its buffers */
    uint64_t allocations;
    char banks[128];           /* bank list ("0-31,40"), cut with "..." when longer */
} memd_wire_subdev_rec;

/* The whole bank list of the SUBDEV record before it: count (= its nbanks, at most
 * MEMD_BANKSET_MAX) ids follow, strictly increasing, below its group's bank count. */
typedef struct memd_wire_subdev_banks_rec {
    uint32_t count;
    uint32_t pad;
} memd_wire_subdev_banks_rec;

/* ---- Plans and models ------------------------------------------------------------------
 *
 * Documents. PLAN and MODEL_LOAD carry a document whose size depends on the problem:
 * their payload is a u64 upload id followed by the document. Upload id 0: the document
 * follows inline in the same frame. Otherwise the payload is exactly those 8 bytes and
 * the document is the session's completed upload with that id, sent before in UPLOAD
 * parts; the request consumes the upload (whatever its outcome). So a document may be
 * larger than the frame limit (up to MEMD_UPLOAD_MAX bytes) without raising it.
 *
 * UPLOAD parts: memd_wire_upload then the data bytes. The first part (offset 0) opens the
 * upload with its total size; parts must come in order (offset = bytes received so far)
 * and never pass the total. A session may have MEMD_UPLOAD_MAX_OPEN uploads open; they
 * are dropped when it goes away. */
#define MEMD_UPLOAD_MAX (64u << 20) /* bytes in one uploaded document */
#define MEMD_UPLOAD_MAX_OPEN 4      /* open uploads per session */

typedef struct memd_wire_upload {
    uint64_t upload_id;        /* chosen by the client, not 0 */
    uint64_t total;            /* the document's size in bytes, 1..MEMD_UPLOAD_MAX */
    uint64_t offset;           /* where this part's data goes */
} memd_wire_upload;

/* Plan problem (PLAN document): memd_wire_plan_req then count x memd_wire_plan_buf.
 * The plan is cached by a hash of the canonical problem (see daemon/models/model_cache.c):
 * the same problem submitted again, by any session, gets the cached plan at once. With
 * MEMD_PLAN_F_PRECOMPUTED every buffer's offset is a plan (from a compiler) that the
 * daemon validates instead of planning; an invalid one is rejected with -EINVAL naming
 * the first two buffers that overlap. */
enum { MEMD_PLAN_F_PRECOMPUTED = 1u << 0 };
enum { MEMD_PLAN_BUF_F_PINNED = 1u << 0 }; /* offset is a pin the planner must keep */
#define MEMD_PLAN_MAX_BUFFERS (1u << 20)
#define MEMD_PLAN_BUDGET_DEFAULT_MS 100 /* budget_ms 0 */
#define MEMD_PLAN_BUDGET_MAX_MS 1000    /* larger budgets are capped */

typedef struct memd_wire_plan_req {
    uint32_t count;            /* buffers, 0..MEMD_PLAN_MAX_BUFFERS */
    uint32_t flags;            /* MEMD_PLAN_F_* */
    uint32_t budget_ms;        /* improvement time; 0: default; capped by the daemon */
    uint32_t pad;
    uint64_t seed;             /* the planner's random steps */
} memd_wire_plan_req;

typedef struct memd_wire_plan_buf {
    uint64_t lower;            /* lifetime [lower, upper) */
    uint64_t upper;
    uint64_t size;
    uint64_t align;            /* power of two; 0 means 1 */
    uint64_t offset;           /* pin (MEMD_PLAN_BUF_F_PINNED) or the precomputed offset */
    uint32_t flags;            /* MEMD_PLAN_BUF_F_* */
    uint32_t pad;
} memd_wire_plan_buf;

enum {
    MEMD_PLAN_I_CACHED = 1u << 0,      /* answered from the cache */
    MEMD_PLAN_I_OPTIMAL = 1u << 1,     /* arena == lower bound, or proven minimal */
    MEMD_PLAN_I_PRECOMPUTED = 1u << 2, /* a validated precomputed plan */
};

/* PLAN reply: memd_wire_plan_info then count x u64 offset (buffer order). */
typedef struct memd_wire_plan_info {
    uint64_t plan_id;          /* content hash: names the plan in MODEL_LOAD and dumps */
    uint64_t arena;            /* bytes: max(offset + size) */
    uint64_t lower_bound;      /* max over time of the live bytes */
    uint64_t iterations;       /* improvement iterations spent */
    uint64_t plan_us;          /* time the planner or validator took (when it ran) */
    uint32_t count;
    uint32_t flags;            /* MEMD_PLAN_I_* */
    char strategy[32];         /* what produced the plan */
} memd_wire_plan_info;

/* Tensor roles. An ACTIVATION lives in the instance's arena at its plan offset; a
 * WEIGHT in the model's shared constants buffer; INPUT/OUTPUT/INOUT are placeholders,
 * one buffer each per instance; an ALIAS (in-place op: reshape, view) is stored in the
 * tensor alias_of names, which is not itself an alias. */
typedef enum memd_tensor_role {
    MEMD_TENSOR_ACTIVATION = 0,
    MEMD_TENSOR_WEIGHT = 1,
    MEMD_TENSOR_INPUT = 2,
    MEMD_TENSOR_OUTPUT = 3,
    MEMD_TENSOR_INOUT = 4,
    MEMD_TENSOR_ALIAS = 5,
    MEMD_TENSOR_ROLE_COUNT
} memd_tensor_role;

#define MEMD_MODEL_MAX_TENSORS (1u << 20)
#define MEMD_NO_TENSOR UINT32_MAX

/* Model (MODEL_LOAD document): memd_wire_model_req then ntensors x memd_wire_tensor.
 * A model is identified by (device, name); loading it again with the same content (by
 * any session) shares it: code and constants are allocated once, as shared named
 * buffers "model:NAME:code" and "model:NAME:const" held by every loading session.
 * The ACTIVATION tensors, in tensor order, must be exactly the buffers of plan plan_id
 * (size, alignment, lifetime): submit the plan first. */
typedef struct memd_wire_model_req {
    uint32_t device;
    uint8_t scope;             /* memd_scope of every buffer of the model */
    uint8_t pad0;
    uint16_t pad1;
    uint32_t ntensors;         /* 1..MEMD_MODEL_MAX_TENSORS */
    uint32_t flags;            /* none defined: 0 */
    uint64_t plan_id;          /* the activations' plan (PLAN reply) */
    uint64_t code_bytes;       /* 0: no code buffer */
    char name[MEMD_NAME_MAX];  /* [A-Za-z0-9._-], at most MEMD_MODEL_NAME_MAX bytes */
} memd_wire_model_req;

#define MEMD_MODEL_NAME_MAX 48

typedef struct memd_wire_tensor {
    uint64_t size;             /* bytes (> 0 unless an alias) */
    uint64_t align;            /* power of two; 0 means 1 */
    uint64_t lower;            /* ACTIVATION: lifetime [lower, upper); else 0 */
    uint64_t upper;
    uint8_t role;              /* memd_tensor_role */
    uint8_t pad0;
    uint16_t pad1;
    uint32_t alias_of;         /* ALIAS: the tensor holding the data; else MEMD_NO_TENSOR */
} memd_wire_tensor;

enum {
    MEMD_MODEL_I_NEW = 1u << 0,         /* this request created the model */
    MEMD_MODEL_I_PLAN_OPTIMAL = 1u << 1,
    MEMD_MODEL_I_PLAN_PRECOMPUTED = 1u << 2,
};

/* MODEL_LOAD / MODEL_INFO reply: memd_wire_model_info then ntensors x memd_wire_tensor_info. */
typedef struct memd_wire_model_info {
    uint64_t model_id;         /* never reused while the daemon runs */
    uint64_t plan_id;
    uint64_t arena;            /* bytes of one instance's arena */
    uint64_t lower_bound;      /* of the plan */
    uint64_t code_handle;      /* 0 without code */
    uint64_t code_address;
    uint64_t code_bytes;
    uint64_t const_handle;     /* 0 without weights */
    uint64_t const_address;
    uint64_t const_bytes;
    uint64_t created_ns;       /* CLOCK_REALTIME */
    uint32_t device;
    uint32_t users;            /* sessions that loaded it */
    uint32_t ntensors;
    uint32_t instances;        /* of every session */
    uint32_t flags;            /* MEMD_MODEL_I_* */
    uint32_t pad;
    char name[MEMD_NAME_MAX];
    char strategy[32];         /* the plan's */
} memd_wire_model_info;

typedef struct memd_wire_tensor_info {
    uint64_t value;            /* WEIGHT: absolute address; ACTIVATION: offset in the arena;
                                  placeholders: 0; ALIAS: its source's value */
    uint64_t size;
    uint8_t role;
    uint8_t pad0;
    uint16_t pad1;
    uint32_t alias_of;
} memd_wire_tensor_info;

/* MODEL_UNLOAD, MODEL_INFO, INSTANCE_CREATE, INSTANCE_RELEASE. */
typedef struct memd_wire_ref {
    uint64_t id;
    uint32_t flags;
    uint32_t pad;
} memd_wire_ref;

/* MODEL_UNLOAD: without FORCE, a session with an instance in use gets -EBUSY. */
enum { MEMD_MODEL_F_FORCE = 1u << 0 };
/* INSTANCE_RELEASE: without FREE the instance goes to its session's free list for that
 * model and the next INSTANCE_CREATE gets it back (same addresses, nothing allocated);
 * with FREE its buffers are freed. */
enum { MEMD_INST_F_FREE = 1u << 0 };

enum { MEMD_INST_I_REUSED = 1u << 0 };

/* INSTANCE_CREATE reply: memd_wire_instance_info then ntensors x memd_wire_tensor_addr,
 * in the model's tensor order. */
typedef struct memd_wire_instance_info {
    uint64_t instance_id;      /* never reused while the daemon runs */
    uint64_t model_id;
    uint64_t arena_handle;     /* 0 when the model has no activations */
    uint64_t arena_address;
    uint64_t arena_bytes;
    uint32_t ntensors;
    uint32_t flags;            /* MEMD_INST_I_* */
} memd_wire_instance_info;

typedef struct memd_wire_tensor_addr {
    uint64_t address;          /* absolute (the bank group's address map) */
    uint64_t handle;           /* the allocation holding it */
} memd_wire_tensor_addr;

/* DUMP records (MEMD_DUMP_F_MODELS). Plans: every cached plan (they carry no owner).
 * Models and instances: the session's own, or all for an admin. */
typedef struct memd_wire_plan_rec {
    uint64_t plan_id;
    uint64_t arena;
    uint64_t lower_bound;
    uint64_t created_ns;
    uint64_t plan_us;
    uint64_t hits;             /* requests answered from the cache */
    uint32_t buffers;
    uint32_t flags;            /* MEMD_PLAN_I_OPTIMAL, MEMD_PLAN_I_PRECOMPUTED */
    uint32_t models;           /* loaded models using it (it is not evicted meanwhile) */
    uint32_t pad;
    char strategy[32];
} memd_wire_plan_rec;

typedef struct memd_wire_model_rec {
    uint64_t model_id;
    uint64_t plan_id;
    uint64_t code_handle;
    uint64_t const_handle;
    uint64_t code_bytes;
    uint64_t const_bytes;
    uint64_t arena;
    uint64_t created_ns;
    uint32_t device;
    uint32_t users;
    uint32_t ntensors;
    uint32_t instances;
    char name[MEMD_NAME_MAX];
} memd_wire_model_rec;

typedef struct memd_wire_instance_rec {
    uint64_t instance_id;
    uint64_t model_id;
    uint64_t arena_handle;
    uint64_t arena_address;
    uint64_t arena_bytes;
    uint64_t placeholder_bytes;
    uint32_t session_id;
    uint32_t pid;
    uint32_t placeholders;
    uint32_t busy;             /* 1 in use, 0 on the free list */
} memd_wire_instance_rec;


/* ---- Events ----------------------------------------------------------------------------
 *
 * The daemon keeps its last events (sessions opened and closed, allocation failures,
 * quota hits, reclaims after a restart, model loads, protocol errors, reloads) in a
 * bounded ring, numbered from 1 without gaps. EVENTS returns up to max events with
 * seq >= since that this session may see: an admin sees all, others the events of their
 * own uid. A reader follows the log by asking again with since = next_seq. When the ring
 * has dropped events the reader had not seen yet, lost says how many. */
/* memd_event_type: types.h */

/* WAIT: when no event >= since is there for this session, memd answers as soon as one
 * comes, or after MEMD_EVENTS_WAIT_MS with none (a long poll: memctl events --follow).
 * The session's requests after it wait behind it, as they do behind a plan. */
enum { MEMD_EVENTS_F_WAIT = 1u << 0 };
#define MEMD_EVENTS_WAIT_MS 10000

typedef struct memd_wire_events_req {
    uint64_t since;            /* first sequence number wanted (0 or 1: the oldest kept) */
    uint32_t max;              /* at most this many (0: as many as fit one reply) */
    uint32_t flags;            /* MEMD_EVENTS_F_* */
} memd_wire_events_req;

typedef struct memd_wire_events_info {
    uint64_t next_seq;         /* ask for this one next */
    uint64_t lost;             /* events >= since the ring no longer has */
    uint32_t count;            /* memd_wire_event records that follow */
    uint32_t pad;
} memd_wire_events_info;

typedef struct memd_wire_event {
    uint64_t seq;
    uint64_t time_ns;          /* CLOCK_REALTIME */
    uint32_t type;             /* memd_event_type */
    uint32_t priority;         /* syslog priority: LOG_ERR 3 .. LOG_DEBUG 7 */
    uint32_t pid;              /* the session's credentials; 0 when not a session's */
    uint32_t uid;
    uint32_t session_id;       /* 0: none */
    uint32_t device;           /* UINT32_MAX: none */
    uint64_t bytes;            /* see memd_event_type; else 0 */
    char comm[16];
    char message[256];         /* the line written to the daemon's log */
} memd_wire_event;
/* ---- Client pools ----------------------------------------------------------------------
 *
 * A pool is an allocation made with MEMD_ALLOC_F_POOL: to memd an ordinary allocation of
 * its session (quotas, dumps, release when the session ends), marked MEMD_ALLOC_I_POOL.
 * The client places sub-allocations inside it itself, without a round trip, and tells
 * memd what it did in POOL_REPORT requests, batched. memd keeps per-pool books of the
 * reported sub-allocations (visibility only: they are not in the state store) and
 * validates each report against them: an ALLOC must lie inside the pool and overlap no
 * live sub-allocation, a FREE must name a live sub-allocation by its exact offset and
 * size, and the pool must be a live pool of this session. A report is applied in order
 * and all or nothing: one op that lies refuses the whole report (-EINVAL, -ERANGE for
 * bounds, -EEXIST for an overlap, -ENOENT for a free of nothing, -EPERM/-ENOENT for a
 * pool that is not the session's or no longer exists, -EMFILE past
 * MEMD_POOL_MAX_SUBALLOCS), with a message naming the op. */
#define MEMD_POOL_MAX_SUBALLOCS (1u << 20) /* live sub-allocations per pool */

/* RESET (offset and size 0): forget every sub-allocation the books hold for this pool;
 * the ops after it report the pool's whole state again. libmemclient sends it after memd
 * refused one of its reports, whose books then disagree with the process's. */
enum { MEMD_POOL_OP_ALLOC = 1, MEMD_POOL_OP_FREE = 2, MEMD_POOL_OP_RESET = 3 };

typedef struct memd_wire_pool_op {
    uint64_t pool;             /* handle of the pool allocation */
    uint64_t offset;           /* from the pool's address */
    uint64_t size;             /* bytes (of each bank: the pool's own unit), > 0 */
    uint8_t op;                /* MEMD_POOL_OP_* */
    uint8_t pad[7];
    char name[MEMD_NAME_MAX];  /* ALLOC: "" = anonymous; FREE, RESET: ignored */
} memd_wire_pool_op;

/* DUMP (MEMD_DUMP_F_POOLS): the session's own pools, or every one for an admin. */
typedef struct memd_wire_pool_rec {
    uint64_t handle;
    uint64_t as_of_ns;         /* CLOCK_REALTIME of the last report applied (or creation) */
    uint64_t pooled_bytes;     /* sum of the live sub-allocations' sizes */
    uint64_t reports;          /* reports applied */
    uint32_t suballocs;        /* SUBALLOC records that follow */
    uint32_t pad;
} memd_wire_pool_rec;

typedef struct memd_wire_suballoc_rec {
    uint64_t pool;
    uint64_t offset;           /* from the pool's address */
    uint64_t size;
    char name[MEMD_NAME_MAX];
} memd_wire_suballoc_rec;

#endif
