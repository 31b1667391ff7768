/* libmemclient internals: the connection object, its in-flight request queue, and the
 * functions the per-concern files share. Nothing here is exported. */
#ifndef MEMD_CLIENT_MEMCLIENT_INTERNAL_H
#define MEMD_CLIENT_MEMCLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "memd/client.h"
#include "memd/protocol.h"

/* Queued frames are sent once this many bytes are waiting (or when a call waits). */
#define MEMCLIENT_TX_FLUSH_AT (64u * 1024u)
/* Each recv asks for at least this much; the buffer grows to hold one whole reply
 * (up to MEMD_MAX_REPLY + header) and is released once empty if larger than RX_KEEP. */
#define MEMCLIENT_RX_CHUNK (64u * 1024u)
#define MEMCLIENT_RX_KEEP (4u << 20)

/* What a reply is decoded into. */
typedef enum memclient_out_kind {
    MEMCLIENT_OUT_NONE,     /* FREE, FREE_BATCH: empty payload */
    MEMCLIENT_OUT_WELCOME,  /* HELLO */
    MEMCLIENT_OUT_BUFFER,   /* ALLOC: one memclient_buffer */
    MEMCLIENT_OUT_BUFFERS,  /* ALLOC_BATCH: n memclient_buffer */
    MEMCLIENT_OUT_INFO,     /* QUERY: memclient_alloc_info */
    MEMCLIENT_OUT_BANKS,    /* BANKS: up to n u64, result = count */
    MEMCLIENT_OUT_SNAPSHOT, /* DUMP: memclient_snapshot ** */
    MEMCLIENT_OUT_RAW,      /* a copy of the payload in a memclient_raw (memclient_model.c) */
    MEMCLIENT_OUT_BUFFER_BANKS, /* ALLOC_BANKS: one memclient_buffer and its bank list */
    MEMCLIENT_OUT_BANK_INFO,    /* BANK_ADDRS: up to n memclient_bank, result = count */
    MEMCLIENT_OUT_BUFFERS_BANKS, /* ALLOC_BATCH_BANKS: n memclient_buffer, bank lists */
} memclient_out_kind;

/* MEMCLIENT_OUT_RAW: the reply payload, malloc'd; the caller frees data. */
typedef struct memclient_raw {
    uint8_t *data;
    size_t len;
} memclient_raw;

/* One request of op with payload p[0, len) whose reply the caller parses from *raw (its
 * data to free); hold_ms: how long memd may hold it on purpose, on top of the call
 * timeout. 0, or a negative errno (nothing to free). (memclient_events.c) */
int memclient_raw_call(memclient *c, uint16_t op, const uint8_t *p, uint32_t len,
                       const char *what, uint32_t hold_ms, memclient_raw *raw);
/* Locks c and begins a request of op with a payload of len bytes (returned, to fill; then
 * memclient_finish(c, *seq)) whose reply payload goes to *raw. NULL, unlocked, with *r
 * the negative errno (recorded, "WHAT request: ...") when it cannot. */
uint8_t *memclient_begin_raw(memclient *c, uint16_t op, uint32_t len, const char *what,
                             memclient_raw *raw, uint64_t *seq, int *r);
/* Frees raw's data and fails with -EBADMSG "malformed OP reply". */
int memclient_bad_reply(memclient_raw *raw, const char *op);

/* One request in flight, in submission order. */
typedef struct memclient_slot {
    uint64_t id;            /* request id on the wire == the caller's ticket */
    uint16_t op;            /* memd_opcode */
    uint8_t out_kind;       /* memclient_out_kind */
    bool done;              /* reply received and decoded */
    bool waited;            /* owned by a blocking call, not by memclient_complete */
    bool consumed;          /* its blocking caller has taken the result */
    bool cut;               /* failed because the connection died (memclient_kill) */
    int status;             /* 0 or negative errno, valid when done */
    int result;             /* BANKS: number of banks */
    size_t n;               /* BUFFERS: expected count; BANKS: capacity of out */
    void *out;
    /* ALLOC_BANKS, ALLOC_BATCH_BANKS: the caller's request(s), whose bank_out take the
     * reply's bank lists (so they stay valid until the request completes). */
    const memclient_alloc_req *reqs;
    memclient_error err;    /* details when status < 0 */
    uint8_t *frame;         /* a submitted request's frame, kept to send it again after a
                               restart (MEMCLIENT_CONNECT_RECONNECT); freed when consumed */
    size_t frame_len;
    int hold_ms;            /* how long the daemon may keep this request parked by design
                               (EVENTS WAIT, MODEL_WAIT) on top of the call timeout;
                               -1: as long as it likes (no timeout) */
} memclient_slot;

struct memclient {
    pthread_mutex_t mu;     /* guards everything below: one caller on the socket at a time */
    int fd;
    int dead;               /* 0, or the transport error that ended the connection */
    uint64_t next_id;       /* 0 is reserved: the daemon uses it for header errors */

    uint8_t *tx;            /* frames not yet sent: tx[tx_off, tx_len) */
    size_t tx_off, tx_len, tx_cap;
    size_t last_frame;      /* where the last begun frame starts in tx (memclient_unbegin) */
    uint8_t *rx;            /* bytes received but not yet decoded: rx[rx_off, rx_len) */
    size_t rx_off, rx_len, rx_cap;

    memclient_slot *slots;  /* ring, slots_cap is a power of two; seq -> slots[seq & mask] */
    size_t slots_cap;
    uint64_t head;          /* oldest slot not yet retired */
    uint64_t reply_seq;     /* next slot expecting a reply */
    uint64_t tail;          /* next free seq */
    size_t pipelined;       /* submitted, not yet returned by memclient_complete */

    memclient_session_info info;
    /* Reclaiming the session after a daemon restart (memclient_reconnect). */
    char client_name[32];   /* as given at connect, sent again */
    uint32_t welcome_flags; /* MEMD_WELCOME_F_* */
    uint8_t token[MEMD_TOKEN_SIZE];

    /* Client pools (memclient_pool*.c). The connection reaches them only through
     * pool_hooks, set by the first memclient_pool_create: so the connection's code does
     * not depend on the pools' (which call it). */
    const struct memclient_pool_hooks *pool_hooks;
    struct memclient_pool *pools; /* list, under mu */
    atomic_uint pools_dirty;    /* some pool has something to report: checked lock-free */
    uint64_t report_seq;        /* last POOL_REPORT queued (valid when report_queued) */
    bool report_queued;
    memclient_error report_err; /* the first report the daemon refused (status 0: none) */
    bool reports_refused;       /* memd's books disagree: the timer or a flush resyncs */
    bool refused_marked;        /* since the refusal, every pool is marked unreported */
    uint32_t refusals;          /* reports refused in a row: the timer's resyncs back off */
    uint64_t resync_at_ns;      /* CLOCK_MONOTONIC before which the timer does not resync */
    atomic_uint refused_errno;  /* errno of the refusal memd's books lag behind; 0: none */
    pthread_t timer;
    bool timer_on, timer_stop;
    pthread_mutex_t timer_mu;   /* with timer_cv: the timer's sleep and its stop */
    pthread_cond_t timer_cv;
    bool auto_reconnect;    /* MEMCLIENT_CONNECT_RECONNECT */
    int timeout_ms;         /* memclient_set_timeout / $MEMD_TIMEOUT_MS; 0: none */

    /* Revocation notices received (REVOKED frames) and not yet taken (memclient_revoke.c). */
    memclient_revoke *revoked;
    size_t nrevoked, revoked_cap;
    memclient_revoke_fn revoke_cb;
    void *revoke_arg;
};

#define MEMCLIENT_POOL_REPORT_MS MEMCLIENT_POOL_STALENESS_MS
/* The longest a refused pool waits before the timer reports it whole again: a report
 * memd keeps refusing (a pool past max_suballocs_per_pool) is retried after 0, 2, 4, ...
 * report periods, never in a loop (issue 27). */
#define MEMCLIENT_POOL_RESYNC_MAX_MS 60000

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t memclient_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What the connection asks of its pools (memclient_pool.c fills it). */
typedef struct memclient_pool_hooks {
    void (*queue)(memclient *c);  /* under mu: queue the pending reports */
    void (*resync)(memclient *c); /* under mu, after a reclaim: report everything again */
    void (*close)(memclient *c);  /* disconnect, without mu: stop the timer, free pools */
} memclient_pool_hooks;

/* ---- memclient_error.c ---- */
/* Records a failure for memclient_last_error() and returns err (negative). */
int memclient_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Same, with a full detail record (from a reply). */
int memclient_fail_with(const memclient_error *e);
/* Puts "prefix: " before e->message (truncating the end if needed). */
void memclient_error_prefix(memclient_error *e, const char *prefix);
/* Fills e->message with the library's text for err. */
void memclient_error_set(memclient_error *e, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- memclient_io.c: socket I/O and the request queue (caller holds c->mu) ---- */
/* Reserves a slot and room for one frame of payload_len bytes in the send buffer;
 * returns the payload pointer to fill (the header is written), or NULL with *err set. */
uint8_t *memclient_begin(memclient *c, uint16_t op, uint32_t payload_len,
                         memclient_out_kind out_kind, void *out, size_t n, bool waited,
                         uint64_t *seq, int *err);
/* Takes back the frame of slot seq, which must be the last one begun and not yet sent
 * (an element of a batch turned out invalid while it was being encoded). */
void memclient_unbegin(memclient *c, uint64_t seq);
/* Sends queued frames if the buffer is over the threshold (force: all of them). */
int memclient_send(memclient *c, bool force);
/* Flushes and reads replies until slot seq is done. With a timeout (c->timeout_ms plus
 * the slot's hold_ms) that passes first, kills the connection with -ETIMEDOUT: a late
 * reply must never be taken for the next request's. */
int memclient_wait(memclient *c, uint64_t seq);
memclient_slot *memclient_slot_at(memclient *c, uint64_t seq);
/* The slot's result has been taken (by its blocking caller or memclient_complete):
 * retire it, and every taken slot after it, once it reaches the head. */
void memclient_consume(memclient *c, uint64_t seq);
/* Marks the connection dead with err and fails every slot still pending. */
int memclient_kill(memclient *c, int err, const char *what);
/* A blocking call's end (memclient_ops.c): waits for slot seq (the last frame begun),
 * sending it again as a retry after a reconnect if the daemon went away meanwhile
 * (MEMCLIENT_CONNECT_RECONNECT), retires it, unlocks c and returns its status or result
 * (its error recorded). */
int memclient_finish(memclient *c, uint64_t seq);
/* Queues frame (a copy of one sent before, len bytes) again with MEMD_REQ_F_RETRY, in a
 * new slot like old's; 0 with *seq, or -ENOMEM. */
int memclient_resend(memclient *c, const uint8_t *frame, size_t len, const memclient_slot *old,
                     uint64_t *seq);

/* ---- memclient_revoke.c ---- */
/* A REVOKED frame's payload (len bytes): its notices are queued. 0, or -EPROTO / -ENOMEM. */
int memclient_revoke_notices(memclient *c, const uint8_t *p, size_t len);
/* memclient_unlock: unlocks c, then hands the queued notices to the callback, if any. */
void memclient_revoke_unlock(memclient *c);

/* ---- memclient_access.c ---- */
/* " (why)" for connect(2)'s EACCES on path: the folder this user may not enter, or the
 * socket's owner, group and mode and what to do; "" when nothing more is known. */
void memclient_explain_eacces(const char *path, char *buf, size_t len);

/* ---- memclient_decode.c: reply payloads -> caller structs ---- */
int memclient_decode(memclient *c, memclient_slot *s, const uint8_t *p, size_t len);
/* memclient_<x>_from_wire: wire records -> memclient_*, generated (the mirror keys). */
#include "memclient_wire_gen.h"

/* ---- memclient_dump.c ---- */
int memclient_snapshot_parse(const uint8_t *p, size_t len, memclient_snapshot **out);

/* ---- memclient_conn.c ---- */
long memclient_now_ms(void); /* CLOCK_MONOTONIC */

/* ---- memclient_model.c ---- */
/* MODEL_STATES: each model's readiness into s's model records (memclient_dump with
 * MEMCLIENT_DUMP_MODEL_STATE). 0 or a recorded error. */
int memclient_model_states(memclient *c, uint32_t device, memclient_snapshot *s);

/* ---- memclient_ops.c ---- */
int memclient_encode_alloc_req(const memclient_alloc_req *r, memd_wire_alloc_req *w);
/* memclient_alloc of an encoded request (pools set flags the public API does not). */
int memclient_alloc_wire(memclient *c, const memd_wire_alloc_req *w, memclient_buffer *out);

/* Locking with the connection's dead check, shared by every public call (with
 * auto_reconnect, a connection the daemon dropped is reconnected here); it also queues
 * the pools' pending reports, so they leave with the caller's request. */
int memclient_lock(memclient *c);
/* The connection died because the daemon went away (not a protocol error). */
bool memclient_gone(int err);
/* memclient_reconnect with c->mu held. */
int memclient_reconnect_locked(memclient *c, int timeout_ms);
void memclient_unlock(memclient *c);

#endif
