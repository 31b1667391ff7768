/* memd daemon — plans and models: the records shared by the model_*.c files. */
#ifndef MEMD_DAEMON_MODEL_INTERNAL_H
#define MEMD_DAEMON_MODEL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"
#include "map.h"
#include "memd/protocol.h" /* the documents are decoded here (wire.h) */
#include "model.h"

/* Daemon-side bounds (protocol.h has the ones clients see). */
#define MEMD_UPLOAD_TOTAL (256u << 20)     /* bytes of open uploads, all sessions */

/* One cached plan: the canonical problem (compared on every hit, so a hash collision
 * can never hand out another problem's offsets) and its offsets. */
struct memd_plan_entry {
    uint64_t id;                   /* content hash, the wire's plan_id (never 0) */
    memd_plan_buffer *bufs;        /* canonical: align >= 1, offset 0 unless pinned */
    uint64_t *offsets;
    uint32_t n;
    bool precomputed, optimal;
    uint64_t arena, lower_bound, iterations, plan_us, created_ns, hits;
    char strategy[32];
    uint32_t models;               /* loaded models using it: never evicted meanwhile */
    uint32_t pins;                 /* planning jobs reading it on a worker: likewise */
    bool recorded;                 /* in the state store (MEMD_PLAN_RECORD_AT_ONCE) */
    size_t bytes;                  /* memory it takes, for the cache budget */
    struct memd_plan_entry *prev, *next; /* LRU: head is the most recently used */
};

/* A document being uploaded in parts. */
typedef struct memd_upload {
    const memd_session *s;
    uint64_t id, total, received;
    uint8_t *data;
    size_t cap;
    struct memd_upload *next;
} memd_upload;

enum { MEMD_JOB_PREPARE, MEMD_JOB_ANSWER }; /* the stage a worker runs next, or ran */

struct memd_model_job {
    memd_session *s;               /* NULL once the session went away */
    struct memd_buf *out;          /* where the reply goes (the handlers'); NULL: the
                                      session went away */
    uint64_t req_id;
    uint16_t op;
    uint8_t stage;
    bool queued;                   /* its stage is on a worker */
    memd_plan_reply_fn encode;     /* the handler's reply, built on the worker */
    uint8_t *doc;                  /* owned, until decoded (PREPARE) */
    size_t doc_len;
    uint64_t key;
    bool precomputed;
    memd_plan_buffer *bufs;        /* owned; handed to the cache entry on success */
    uint64_t *offsets;
    uint32_t n;
    uint64_t seed, budget_ns;
    memd_plan_entry *hit;          /* ANSWER: the key's entry, pinned */
    /* results (worker) */
    int rc;
    memd_error err;                /* rc < 0: why */
    bool cached;                   /* hit holds this very problem: the reply is its plan */
    memd_plan_violation v;
    memd_plan_result res;
    char strategy[32];
    uint64_t plan_us;
    memd_plan_entry mine;          /* planned: the entry it becomes (arrays the job's) */
    uint8_t *rec;                  /* and its record for the state store, or NULL */
    memd_plan_reply reply;
    struct memd_model_job *next;
};

typedef struct memd_model_tensor {
    uint64_t size, align, lower, upper;
    uint64_t off;                  /* WEIGHT: offset in the constants buffer */
    uint32_t ref;                  /* ACTIVATION: plan index; placeholders: their index;
                                      ALIAS: the source tensor */
    uint8_t role;
} memd_model_tensor;

struct memd_model {
    uint64_t id, hash, created_ns;
    uint32_t dev;                  /* index into memd_state.devs */
    uint32_t uid;                  /* its first loader's: names are scoped per uid (model.h) */
    uint8_t scope;
    char name[MEMD_NAME_MAX];
    memd_plan_entry *plan;
    memd_model_tensor *t;
    uint32_t n, nph;
    uint32_t *ph;                  /* placeholder index -> tensor index */
    uint64_t code_bytes, const_bytes, const_align, arena_align;
    uint64_t page_size;            /* constants, arena, placeholders; 0: one page each */
    uint64_t code_handle, const_handle; /* shared allocations, held by every user */
    uint32_t users, instances;
    /* Readiness (model_ready.c): filling until its filler sends MODEL_SET_READY. */
    bool ready;
    uint32_t filler;               /* filling: the filler's session id; 0: nobody yet */
    struct memd_model *next;
};

/* A MODEL_WAIT parked until its model is ready, the fill job comes to it, or until_ms. */
typedef struct memd_model_wait {
    memd_session *s;
    uint64_t model_id, req_id;
    uint64_t until_ms;             /* memd_mono_ms deadline; UINT64_MAX: none */
    uint32_t timeout_ms;           /* as asked, for the message */
    struct memd_model_wait *next;  /* FIFO: the longest waiting first */
} memd_model_wait;


/* One session's load of a model. */
typedef struct memd_model_use {
    memd_model *m;
    memd_session *s;
    memd_instance *insts;          /* busy and idle ones */
    struct memd_model_use *next;
} memd_model_use;

struct memd_instance {
    uint64_t id;
    memd_model_use *use;
    bool busy;                     /* false: on the free list, handed out again first */
    bool reused;                   /* the last INSTANCE_CREATE took it from the free list */
    uint64_t req;                  /* the client request id of that INSTANCE_CREATE (0:
                                      unknown): a retry of it finds this instance */
    uint64_t arena_handle, arena_address, arena_bytes, ph_bytes;
    uint64_t *ph_handle, *ph_address; /* m->nph each */
    memd_instance *next;
};

#define MEMD_PLAN_CACHE_BYTES (128u << 20) /* plan_cache_bytes when the limits have none */
/* Plans up to this many buffers are recorded in the state store as they are cached
 * (about 0.9 MB, encoded by their job); larger ones once a model uses them: copying a
 * 200k-buffer plan's 11 MB record into the store held the loop about a second on a
 * loaded machine, and a plan no model uses is only worth a replan after a restart. */
#define MEMD_PLAN_RECORD_AT_ONCE 16384u

struct memd_models {
    memd_hook hook;                /* core's session and teardown events */
    const memd_state_events *restore; /* records at start, reclaims (model_restore.c,
                                     * set by memd_models_init; NULL: not listening) */
    memd_state *st;
    bool quiet;                    /* restoring or tearing down: nothing to record */
    uint64_t saved_model_ids, saved_instance_ids; /* the counters as recorded */
    uint8_t *enc;                  /* record encoding (model_persist.c) */
    size_t enc_cap;
    bool enc_failed;
    memd_map plans;                /* plan id -> memd_plan_entry * */
    memd_plan_entry *lru_head, *lru_tail;
    size_t plan_bytes;
    memd_model *models;
    memd_model_use *uses;
    memd_map instances;            /* instance id -> memd_instance * */
    memd_map managed;              /* allocation handle -> references from models/instances */
    uint64_t next_model_id, next_instance_id;
    memd_upload *uploads;
    uint64_t upload_bytes;
    memd_model_job *jobs;
    uint32_t njobs;
    memd_model_wait *waits;        /* parked MODEL_WAITs, oldest first */
    uint32_t nwaits;
    memd_models_runner run;
    void *run_ctx;
};

/* model_state.c */
memd_models *memd_models_of(memd_state *st); /* creates on first use; NULL on -ENOMEM */
/* Unlinks upload up and frees it (model_upload_drop.c). */
void memd_models_upload_drop(memd_models *ms, memd_upload *up);
int memd_models_manage(memd_models *ms, uint64_t handle);   /* 0 or -ENOMEM */
void memd_models_unmanage(memd_models *ms, uint64_t handle);
/* Drops s's hold on the allocation with this handle, if it still exists and s holds it. */
void memd_models_release_handle(memd_state *st, memd_session *s, uint64_t handle);
memd_model_use *memd_models_use_of(memd_models *ms, const memd_session *s, uint64_t model_id);
void memd_models_use_release(memd_state *st, memd_models *ms, memd_model_use *u);
/* model_history.c: s's model load or unload (in NULL), or instance made busy or released
 * (in), to the flight recorder (type: MEMD_HIST_MODEL_* / MEMD_HIST_INSTANCE_*). */
void memd_models_record(memd_state *st, memd_session *s, uint8_t type, const memd_model *m,
                        const memd_instance *in);
void memd_models_instance_destroy(memd_state *st, memd_models *ms, memd_instance *in);
/* A new instance of u (use, placeholder arrays set; nothing allocated), or NULL: -ENOMEM. */
memd_instance *memd_models_instance_new(memd_model_use *u);
/* Ends building in: rc == 0 links it into its load; rc < 0 frees it (its buffers were
 * already let go). Returns rc. */
int memd_models_instance_built(memd_instance *in, int rc);
uint64_t memd_models_handle_address(const memd_state *st, uint64_t handle);
memd_session *memd_models_session_by_id(const memd_state *st, uint32_t id); /* or NULL */

/* model_ready.c */
/* u's session stops using its model: a filler that leaves before MODEL_SET_READY leaves
 * the job to the next waiter or loader. */
void memd_models_filler_gone(memd_state *st, memd_models *ms, memd_model_use *u);
/* s goes away: its parked waits are dropped (no reply: the connection is gone). */
void memd_models_waits_drop(memd_models *ms, const memd_session *s);
/* MODEL_LOAD of an existing model by s: s takes the fill job when nobody has it (and
 * nobody waits for it). True when s took it now (its filler already: false, as a load
 * again in the same session answers the same; its MODEL_WAIT says it fills). */
bool memd_models_take_fill(memd_state *st, memd_models *ms, memd_session *s, memd_model *m);

/* model_save.c: the records the state store keeps (hooks.h memd_record; formats there,
 * restored by model_restore.c). Each save hands the current state of one object to core;
 * gone says it no longer exists; ids records the id counters once they pass what was
 * recorded. Nothing while ms->quiet. */
#define MEMD_MODELS_RECORD_VERSION 1
#define MEMD_MODELS_PLAN_HEAD 88u
#define MEMD_MODELS_PLAN_BUF 48u
#define MEMD_MODELS_MODEL_HEAD 160u
#define MEMD_MODELS_MODEL_TENSOR 48u
#define MEMD_MODELS_INST_HEAD 64u
#define MEMD_MODELS_INST_PH 16u
/* A plan's record, rec when a planning job encoded it off the loop (NULL: encoded here). */
void memd_models_save_plan(memd_models *ms, const memd_plan_entry *e, const uint8_t *rec);
size_t memd_models_plan_rec_len(uint32_t n);
void memd_models_plan_rec_encode(const memd_plan_entry *e, uint8_t *p); /* pure */
void memd_models_save_model(memd_models *ms, const memd_model *m);
void memd_models_save_instance(memd_models *ms, const memd_instance *in);
void memd_models_save_gone(memd_models *ms, uint8_t kind, uint64_t id);
void memd_models_save_ids(memd_models *ms);

/* model_upload.c: the document of a PLAN / MODEL_LOAD request. */
struct memd_doc {
    const uint8_t *p;
    size_t len;
    memd_upload *up;               /* consumed when the request is done */
};
/* 0, or a negative errno with err filled (an unknown or unfinished upload); the frame's
 * shape was checked by dispatch. */
int memd_models_doc(memd_state *st, memd_session *s, const memd_wire_hdr *h, const uint8_t *p,
                    memd_doc *d, memd_error *err);
void memd_models_doc_done(memd_state *st, memd_doc *d);
void memd_models_uploads_drop(memd_models *ms, const memd_session *s);

/* model_cache.c */
/* Canonical form of a problem in place (align 0 -> 1, unpinned offsets 0) and its key. */
void memd_plan_canonical(memd_plan_buffer *bufs, uint32_t n);
int memd_plan_key(const memd_plan_buffer *bufs, const uint64_t *offsets, uint32_t n,
                  bool precomputed, uint64_t *key);
/* Whether e holds exactly this problem (and, precomputed, these offsets): O(n), read
 * only (a worker's, e pinned). */
bool memd_plan_cache_same(const memd_plan_entry *e, const memd_plan_buffer *bufs,
                          const uint64_t *offsets, uint32_t n, bool precomputed);
memd_plan_entry *memd_plan_cache_get(memd_models *ms, uint64_t id);
void memd_plan_cache_touch(memd_models *ms, memd_plan_entry *e);
/* The job's plan (job->mine) into the cache: takes ownership of the job's arrays. NULL
 * on -ENOMEM (the job keeps them). */
memd_plan_entry *memd_plan_cache_insert(memd_models *ms, memd_model_job *job);
/* A restored entry (model_restore.c: bufs, offsets, n and the results set): linked in
 * the LRU list by its creation time, nothing evicted, not recorded again. 0 or -ENOMEM. */
int memd_plan_cache_adopt(memd_models *ms, memd_plan_entry *e);
/* Evicts past the limit, the entry last inserted too (once its reply is built). */
void memd_plan_cache_trim(memd_models *ms);
void memd_plan_cache_ref(memd_models *ms, memd_plan_entry *e);
void memd_plan_cache_unref(memd_models *ms, memd_plan_entry *e);
void memd_plan_cache_free(memd_models *ms);

#endif
