/* memd — vocabulary shared by the engine, the wire protocol and the client API.
 * Values are part of the wire protocol: never renumber, only append. */
#ifndef MEMD_TYPES_H
#define MEMD_TYPES_H

#include <stdint.h>

/* Bank group kinds. */
typedef enum memd_kind {
    MEMD_KIND_DRAM = 0,
    MEMD_KIND_SRAM = 1,
    MEMD_KIND_COUNT
} memd_kind;

/* Buffer classes (Esperanto host runtime vocabulary). */
typedef enum memd_class {
    MEMD_CLASS_CODE = 0,
    MEMD_CLASS_CONSTANT = 1,
    MEMD_CLASS_PLACEHOLDER = 2,
    MEMD_CLASS_INTERNAL = 3,
    MEMD_CLASS_LOGGING = 4,
    MEMD_CLASS_COUNT
} memd_class;

/* Memory scopes (TVM vocabulary). "global" is an alias of dram, "l1" of sram. */
typedef enum memd_scope {
    MEMD_SCOPE_DRAM = 0,
    MEMD_SCOPE_SRAM = 1,
    MEMD_SCOPE_DRAM_TEXTURE = 2,
    MEMD_SCOPE_COUNT
} memd_scope;

/* Element types for shape + dtype requests. */
typedef enum memd_dtype {
    MEMD_DTYPE_NONE = 0, /* request is in bytes */
    MEMD_DTYPE_U8 = 1,
    MEMD_DTYPE_I8 = 2,
    MEMD_DTYPE_U16 = 3,
    MEMD_DTYPE_I16 = 4,
    MEMD_DTYPE_F16 = 5,
    MEMD_DTYPE_BF16 = 6,
    MEMD_DTYPE_U32 = 7,
    MEMD_DTYPE_I32 = 8,
    MEMD_DTYPE_F32 = 9,
    MEMD_DTYPE_U64 = 10,
    MEMD_DTYPE_I64 = 11,
    MEMD_DTYPE_F64 = 12,
    MEMD_DTYPE_COUNT
} memd_dtype;

/* Placement direction inside a region. */
typedef enum memd_dir {
    MEMD_DIR_BOTTOM_UP = 0,
    MEMD_DIR_TOP_DOWN = 1
} memd_dir;

/* Fit policy: exact first fit (tt-metal semantics) or best fit. */
typedef enum memd_fit {
    MEMD_FIT_FIRST = 0,
    MEMD_FIT_BEST = 1
} memd_fit;

/* How a buffer uses the banks of its group (tt-metal's names in doc/ttmetal.md):
 *  ALL:      one address, reserved in every bank of the group (lockstep; the default);
 *  RANGE:    one address, reserved only in the banks of its bank set (tt-metal's
 *            uniform per-core allocation); the other banks keep that range usable;
 *  PER_BANK: a set of pieces, an independent address in each bank of its set
 *            (tt-metal's per-core allocation);
 *  RANGE_LOCKSTEP: one address searched in the banks of its set only, then reserved in
 *            every bank of the group like ALL (tt-metal's range lockstep): it may lie
 *            over pieces that other banks held before it. */
typedef enum memd_bank_mode {
    MEMD_BANKS_ALL = 0,
    MEMD_BANKS_RANGE = 1,
    MEMD_BANKS_PER_BANK = 2,
    MEMD_BANKS_RANGE_LOCKSTEP = 3,
    MEMD_BANKS_MODE_COUNT
} memd_bank_mode;

#define MEMD_BANKSET_MAX 65536u /* bank ids in one bank set */
#define MEMD_NO_CORE 0xffffu    /* a coordinate of a bank without a known core */

#define MEMD_MAX_DIMS 4
#define MEMD_NAME_MAX 64 /* including the terminating NUL */

/* What an event of the daemon's event log is about (protocol.h, "Events"). */
typedef enum memd_event_type {
    MEMD_EVENT_DAEMON = 1,         /* started, stopping, reloaded, reload refused */
    MEMD_EVENT_SESSION_OPEN = 2,
    MEMD_EVENT_SESSION_CLOSE = 3,  /* bytes: what its closing released */
    MEMD_EVENT_ALLOC_FAIL = 4,     /* out of memory: the message has the region's state */
    MEMD_EVENT_QUOTA = 5,          /* a per-uid quota refused an allocation */
    MEMD_EVENT_RECLAIM = 6,        /* a session took its orphaned session back */
    MEMD_EVENT_ORPHAN_RELEASE = 7, /* an orphaned session released (grace over, process gone) */
    MEMD_EVENT_MODEL_LOAD = 8,     /* bytes: code + constants */
    MEMD_EVENT_PROTOCOL_ERROR = 9, /* a malformed frame; the connection was closed */
    MEMD_EVENT_TYPE_COUNT
} memd_event_type;

/* What a failed request's error says besides its status (memd_wire_error.detail): which
 * figures it carries. Shared by the wire and the daemon's own error (engine/error.h). */
enum {
    MEMD_ERR_DETAIL_NONE = 0,
    MEMD_ERR_DETAIL_NOMEM = 1,
    MEMD_ERR_DETAIL_QUOTA = 2,
    MEMD_ERR_DETAIL_LIMIT = 3, /* -ENOMEM: a cgroup limit (the message names it) */
};

#endif
