/* memd wire protocol, version 1.
 *
 * Unix stream socket. Every frame is a 24-byte header followed by `len` payload bytes.
 * All integers are little-endian; records are fixed-size and encoded field by field in
 * the order declared below with no padding (see client/wire.h for the codec — never
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
    int32_t status;  /* requests: 0; replies: 0 or -errno */
} memd_wire_hdr;

typedef enum memd_opcode {
    MEMD_OP_HELLO = 1,       /* memd_wire_hello -> memd_wire_welcome */
    MEMD_OP_ALLOC = 2,       /* memd_wire_alloc_req -> memd_wire_buffer */
    MEMD_OP_ALLOC_BATCH = 3, /* u32 count, u32 0, count x alloc_req -> u32 count, u32 0, count x buffer; all or nothing */
    MEMD_OP_FREE = 4,        /* u64 handle -> empty */
    MEMD_OP_FREE_BATCH = 5,  /* u32 count, u32 0, count x u64 handle -> empty; all or nothing */
    MEMD_OP_QUERY = 6,       /* u64 handle -> memd_wire_alloc_info */
    MEMD_OP_BANKS = 7,       /* u64 handle -> u32 count, u32 0, count x u64 absolute bank address */
    MEMD_OP_DUMP = 8,        /* memd_wire_dump_req -> sequence of tagged records */
    MEMD_OP_OPCODE_COUNT
} memd_opcode;

/* Reply status > 0 is never used; error payload: */
typedef struct memd_wire_error {
    int32_t status;            /* same as the header's */
    uint32_t detail;           /* MEMD_ERR_DETAIL_* */
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

enum { MEMD_ERR_DETAIL_NONE = 0, MEMD_ERR_DETAIL_NOMEM = 1, MEMD_ERR_DETAIL_QUOTA = 2 };

typedef struct memd_wire_hello {
    uint16_t min_version;      /* client accepts [min, max] */
    uint16_t max_version;
    uint32_t flags;
    char client_name[32];
} memd_wire_hello;

typedef struct memd_wire_welcome {
    uint16_t version;          /* chosen version */
    uint16_t pad;
    uint32_t session_id;
    uint32_t max_frame;        /* request payload limit */
    uint32_t ndevices;
    char server_version[32];
} memd_wire_welcome;

enum { MEMD_ALLOC_F_SHARED = 1u << 0 }; /* named + shared by refcount */

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
    uint8_t pad[6];
} memd_wire_buffer;

typedef struct memd_wire_alloc_info {
    memd_wire_buffer buf;
    uint32_t device;
    uint8_t cls;
    uint8_t scope;
    uint16_t pad;
    uint32_t pid;              /* creator's credentials (SO_PEERCRED) */
    uint32_t uid;
    uint32_t gid;
    uint32_t session_id;
    uint64_t created_ns;       /* CLOCK_REALTIME */
    char name[MEMD_NAME_MAX];
    char comm[16];             /* creator's process name */
} memd_wire_alloc_info;

enum { MEMD_DUMP_F_BLOCKS = 1u << 0 }; /* also every block of every region */

typedef struct memd_wire_dump_req {
    uint32_t device;           /* UINT32_MAX = all */
    uint32_t flags;            /* MEMD_DUMP_F_* */
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
} memd_rec_tag;

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
} memd_wire_session_rec;

#endif
