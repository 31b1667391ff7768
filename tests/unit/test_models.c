/* Plans and models in the daemon, driven through memd_frames_process without a socket
 * (planning runs inline here: no runner is installed). Covers the content hash, the plan
 * cache across sessions, precomputed plans rejected with the overlapping pair, chunked
 * uploads and their limits, model loads shared across sessions (constants reference
 * counted), instances (addresses, reuse, FREE), refusal to FREE a model's buffers, the
 * release of everything at session close, and the DUMP records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check_main.h"
#include "dispatch.h"
#include "frames.h"
#include "digest.h"
#include "dump_iter.h"
#include "model_internal.h"
#include "session.h"
#include "state.h"
#include "wire.h"
#include "wire_frame.h"

#define KIB 1024ull
#define DEV 7

static memd_state st;
static memd_buf out;
static memd_session sa, sb, sroot;
static uint64_t next_id = 100;

static void start(void)
{
    memd_config cfg;
    memd_device_spec spec;
    memset(&cfg, 0, sizeof cfg);
    memset(&spec, 0, sizeof spec);
    spec.id = DEV;
    strcpy(spec.name, "testdev");
    strcpy(spec.arch, "unit");
    memd_bank_group_spec *d = &spec.groups[MEMD_KIND_DRAM];
    d->banks = 2;
    d->bank_size = 4096 * KIB;
    d->alignment = 32;
    d->nregions = 2;
    d->regions[0] = (memd_region_spec){"code", 0, 256 * KIB, true};
    d->regions[1] = (memd_region_spec){"data", 256 * KIB, 3840 * KIB, true};
    memd_device_spec_default_policy(&spec);
    strcpy(cfg.path, "unit.yaml");
    cfg.limits = (memd_limits){.max_frame = 1u << 20, .max_sessions = 16,
                               .max_allocs_per_session = 1000, .max_reply_backlog = 4u << 20,
                               .max_suballocs_per_pool = MEMD_POOL_MAX_SUBALLOCS};
    cfg.ndevices = 1;
    cfg.devices = &spec;
    memd_error err;
    ck_assert_int_eq(memd_state_init(&st, &cfg, &err), 0);
    memset(&out, 0, sizeof out);
    memd_session *ss[] = {&sa, &sb, &sroot};
    for (int i = 0; i < 3; i++) {
        memset(ss[i], 0, sizeof *ss[i]);
        ss[i]->uid = i == 2 ? 0 : 1000; /* sa and sb: one uid, whose sessions share models */
        ss[i]->pid = 500 + (uint32_t)i;
        ss[i]->admin = i == 2;
        memd_session_open(&st, ss[i]);
    }
}

static void stop(void)
{
    memd_state_fini(&st);
    memd_buf_free(&out);
}

/* ---- requests ---- */

typedef struct reply {
    memd_wire_hdr h;
    uint8_t *p;         /* malloc'd payload */
    memd_wire_error err;
    int rc;
} reply;

static void reply_free(reply *r)
{
    free(r->p);
    r->p = NULL;
}

static void pop(reply *r)
{
    ck_assert_uint_ge(out.len, MEMD_HDR_SIZE);
    ck_assert_int_eq(memd_wire_hdr_get(out.data, out.len, MEMD_MAX_REPLY, &r->h), 0);
    ck_assert_uint_ge(out.len, MEMD_HDR_SIZE + r->h.len);
    r->p = malloc(r->h.len + 1);
    memcpy(r->p, out.data + MEMD_HDR_SIZE, r->h.len);
    if (r->h.status < 0)
        ck_assert_int_eq(memd_wire_error_get_any(r->p, r->h.len, &r->err), 0);
    memd_buf_consume(&out, MEMD_HDR_SIZE + r->h.len);
}

static int req(memd_session *s, uint16_t op, const void *payload, size_t len, reply *r)
{
    uint8_t *buf = malloc(MEMD_HDR_SIZE + len);
    uint64_t id = next_id++;
    frame(buf, op, id, payload, (uint32_t)len);
    size_t used = 0;
    r->rc = memd_frames_process(&st, s, buf, MEMD_HDR_SIZE + len, &out, SIZE_MAX, &used);
    free(buf);
    ck_assert_uint_eq(used, MEMD_HDR_SIZE + len);
    pop(r);
    ck_assert_uint_eq(r->h.id, id);
    ck_assert_uint_eq(out.len, 0);
    return r->h.status;
}

/* A plan document (inline: upload id 0). */
static uint8_t *plan_doc(const memd_wire_plan_buf *b, uint32_t n, uint32_t flags, uint64_t seed,
                         size_t *len)
{
    *len = 8 + MEMD_WIRE_PLAN_REQ_SIZE + (size_t)n * MEMD_WIRE_PLAN_BUF_SIZE;
    uint8_t *d = calloc(1, *len), *p = memd_wire_put_u64(d, 0);
    memd_wire_plan_req rq = {.count = n, .flags = flags, .budget_ms = 5, .seed = seed};
    p = memd_wire_plan_req_put(p, &rq);
    for (uint32_t i = 0; i < n; i++)
        p = memd_wire_plan_buf_put(p, &b[i]);
    return d;
}

static int plan(memd_session *s, const memd_wire_plan_buf *b, uint32_t n, uint32_t flags,
                memd_wire_plan_info *pi, uint64_t *offsets, reply *r)
{
    size_t len;
    uint8_t *d = plan_doc(b, n, flags, 1, &len);
    int st_ = req(s, MEMD_OP_PLAN, d, len, r);
    free(d);
    ck_assert_int_eq(r->rc, 0);
    if (st_ == 0) {
        ck_assert_uint_eq(r->h.len, MEMD_WIRE_PLAN_INFO_SIZE + 8 * (size_t)n);
        ck_assert_int_eq(memd_wire_plan_info_get(r->p, r->h.len, pi), 0);
        for (uint32_t i = 0; offsets && i < n; i++)
            offsets[i] = memd_wire_u64(r->p + MEMD_WIRE_PLAN_INFO_SIZE + 8 * i);
    }
    return st_;
}

#define PB(lo, up, sz) ((memd_wire_plan_buf){.lower = (lo), .upper = (up), .size = (sz), .align = 64})

/* Checks offsets against the problem: aligned, and no two live-together buffers share
 * bytes (quadratic: fine for test sizes). */
static void assert_valid(const memd_wire_plan_buf *b, uint32_t n, const uint64_t *off,
                         uint64_t arena)
{
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_uint_eq(off[i] % (b[i].align ? b[i].align : 1), 0);
        ck_assert_uint_le(off[i] + b[i].size, arena);
        for (uint32_t j = i + 1; j < n; j++) {
            bool time = b[i].lower < b[j].upper && b[j].lower < b[i].upper;
            bool space = off[i] < off[j] + b[j].size && off[j] < off[i] + b[i].size;
            ck_assert_msg(!(time && space), "buffers %u and %u overlap", i, j);
        }
    }
}

/* ---- tests ---- */

START_TEST(digest_vectors)
{
    /* Published XXH64 values (seed 0). */
    ck_assert_uint_eq(memd_digest64("", 0, 0), 0xEF46DB3751D8E999ull);
    ck_assert_uint_eq(memd_digest64("a", 1, 0), 0xD24EC4F1A98C6E5Bull);
    ck_assert_uint_eq(memd_digest64("abc", 3, 0), 0x44BC2CF5AD770999ull);
    const char *s = "Nobody inspects the spammish repetition";
    ck_assert_uint_eq(memd_digest64(s, strlen(s), 0), 0xFBCEA83C8A378BF1ull);
    ck_assert_uint_ne(memd_digest64("abc", 3, 1), memd_digest64("abc", 3, 0));
}
END_TEST

static const memd_wire_plan_buf problem[] = {
    PB(0, 2, 1000), PB(1, 3, 500), PB(2, 5, 700), PB(3, 4, 300), PB(0, 5, 64), PB(4, 6, 900),
};
#define NPROB ((uint32_t)(sizeof problem / sizeof problem[0]))

START_TEST(plan_cache_across_sessions)
{
    memd_wire_plan_info a, b;
    uint64_t oa[NPROB], ob[NPROB];
    reply r;
    ck_assert_int_eq(plan(&sa, problem, NPROB, 0, &a, oa, &r), 0);
    reply_free(&r);
    ck_assert(!(a.flags & MEMD_PLAN_I_CACHED));
    ck_assert_uint_ne(a.plan_id, 0);
    ck_assert_uint_ge(a.arena, a.lower_bound);
    ck_assert_uint_eq(a.lower_bound, 700 + 64 + 900); /* at time 4 */
    assert_valid(problem, NPROB, oa, a.arena);
    /* Another session, another seed: the same problem comes from the cache. */
    size_t len;
    uint8_t *d = plan_doc(problem, NPROB, 0, 99, &len);
    ck_assert_int_eq(req(&sb, MEMD_OP_PLAN, d, len, &r), 0);
    free(d);
    ck_assert_int_eq(memd_wire_plan_info_get(r.p, r.h.len, &b), 0);
    for (uint32_t i = 0; i < NPROB; i++)
        ob[i] = memd_wire_u64(r.p + MEMD_WIRE_PLAN_INFO_SIZE + 8 * i);
    reply_free(&r);
    ck_assert(b.flags & MEMD_PLAN_I_CACHED);
    ck_assert_uint_eq(b.plan_id, a.plan_id);
    ck_assert_uint_eq(b.arena, a.arena);
    ck_assert_mem_eq(oa, ob, sizeof oa);
    /* Canonical form: alignment 0 is 1, an unpinned offset means nothing. */
    memd_wire_plan_buf p1[] = {{.lower = 0, .upper = 1, .size = 8, .align = 0, .offset = 77},
                               {.lower = 0, .upper = 1, .size = 8, .align = 1}};
    memd_wire_plan_buf p2[] = {{.lower = 0, .upper = 1, .size = 8, .align = 1},
                               {.lower = 0, .upper = 1, .size = 8, .align = 0, .offset = 5}};
    ck_assert_int_eq(plan(&sa, p1, 2, 0, &a, NULL, &r), 0);
    reply_free(&r);
    ck_assert_int_eq(plan(&sa, p2, 2, 0, &b, NULL, &r), 0);
    reply_free(&r);
    ck_assert(b.flags & MEMD_PLAN_I_CACHED);
    ck_assert_uint_eq(a.plan_id, b.plan_id);
    /* Any real difference is another plan: a size, or a pin. */
    p2[1].size = 9;
    ck_assert_int_eq(plan(&sa, p2, 2, 0, &b, NULL, &r), 0);
    reply_free(&r);
    ck_assert(!(b.flags & MEMD_PLAN_I_CACHED));
    ck_assert_uint_ne(a.plan_id, b.plan_id);
    p2[1] = (memd_wire_plan_buf){.lower = 0, .upper = 1, .size = 8, .align = 8, .offset = 64,
                                 .flags = MEMD_PLAN_BUF_F_PINNED};
    uint64_t po[2];
    ck_assert_int_eq(plan(&sa, p2, 2, 0, &b, po, &r), 0);
    reply_free(&r);
    ck_assert_uint_eq(po[1], 64);
    ck_assert_uint_ne(a.plan_id, b.plan_id);
    /* An empty problem is a plan too (a model without activations). */
    ck_assert_int_eq(plan(&sa, NULL, 0, 0, &a, NULL, &r), 0);
    reply_free(&r);
    ck_assert_uint_eq(a.arena, 0);
    ck_assert_uint_eq(st.models->plan_bytes > 0, 1);
}
END_TEST

START_TEST(precomputed_plans)
{
    /* Valid: accepted as given, with its arena, marked precomputed. */
    memd_wire_plan_buf b[] = {PB(0, 2, 100), PB(0, 4, 100), PB(2, 4, 50), PB(1, 3, 100)};
    b[0].offset = 0;
    b[1].offset = 128;
    b[2].offset = 0;
    b[3].offset = 256;
    memd_wire_plan_info pi;
    uint64_t off[4];
    reply r;
    ck_assert_int_eq(plan(&sa, b, 4, MEMD_PLAN_F_PRECOMPUTED, &pi, off, &r), 0);
    reply_free(&r);
    ck_assert(pi.flags & MEMD_PLAN_I_PRECOMPUTED);
    ck_assert_uint_eq(pi.arena, 356);
    ck_assert_uint_eq(off[3], 256);
    ck_assert_str_eq(pi.strategy, "precomputed");
    /* Buffer 3 moved onto buffer 1 while both live: the reply names 3 and 1. */
    b[3].offset = 192;
    ck_assert_int_eq(plan(&sb, b, 4, MEMD_PLAN_F_PRECOMPUTED, &pi, NULL, &r), -EINVAL);
    ck_assert_int_eq(r.rc, 0); /* an answer, not a broken connection */
    ck_assert_msg(strstr(r.err.message, "buffers 3 and 1 overlap"), "%s", r.err.message);
    reply_free(&r);
    /* Misaligned. */
    b[3].offset = 260;
    ck_assert_int_eq(plan(&sb, b, 4, MEMD_PLAN_F_PRECOMPUTED, &pi, NULL, &r), -EINVAL);
    ck_assert_msg(strstr(r.err.message, "buffer 3: misaligned"), "%s", r.err.message);
    reply_free(&r);
    /* An invalid problem is named too, solved or precomputed. */
    b[3].offset = 256;
    b[2].lower = 4;
    ck_assert_int_eq(plan(&sb, b, 4, 0, &pi, NULL, &r), -EINVAL);
    ck_assert_msg(strstr(r.err.message, "buffer 2"), "%s", r.err.message);
    reply_free(&r);
    /* Pinned buffers that overlap: no plan can exist. */
    memd_wire_plan_buf pins[] = {PB(0, 2, 100), PB(1, 3, 100)};
    pins[0].flags = pins[1].flags = MEMD_PLAN_BUF_F_PINNED;
    pins[1].offset = 64;
    ck_assert_int_eq(plan(&sb, pins, 2, 0, &pi, NULL, &r), -EINVAL);
    ck_assert_msg(strstr(r.err.message, "pinned buffers"), "%s", r.err.message);
    reply_free(&r);
}
END_TEST

START_TEST(plan_documents_checked)
{
    reply r;
    uint8_t d[8 + MEMD_WIRE_PLAN_REQ_SIZE + MEMD_WIRE_PLAN_BUF_SIZE] = {0};
    memd_wire_plan_req rq = {.count = 2};
    memd_wire_plan_req_put(d + 8, &rq);
    ck_assert_int_eq(req(&sa, MEMD_OP_PLAN, d, sizeof d, &r), -EBADMSG);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_ptr_nonnull(strstr(r.err.message, "does not hold the 2 buffers"));
    reply_free(&r);
    rq.count = 1;
    rq.flags = 8;
    memd_wire_plan_req_put(d + 8, &rq);
    ck_assert_int_eq(req(&sa, MEMD_OP_PLAN, d, sizeof d, &r), -EINVAL);
    reply_free(&r);
    rq.flags = 0;
    memd_wire_plan_req_put(d + 8, &rq);
    memd_wire_plan_buf pb = PB(0, 1, 8);
    pb.flags = 2;
    memd_wire_plan_buf_put(d + 8 + MEMD_WIRE_PLAN_REQ_SIZE, &pb);
    ck_assert_int_eq(req(&sa, MEMD_OP_PLAN, d, sizeof d, &r), -EINVAL);
    reply_free(&r);
    /* A frame too short for the upload id is malformed: the connection closes. */
    ck_assert_int_eq(req(&sa, MEMD_OP_PLAN, d, 4, &r), -EBADMSG);
    ck_assert_int_eq(r.rc, MEMD_CLOSE);
    reply_free(&r);
    /* Naming an upload and sending a document too is malformed as well. */
    memd_wire_put_u64(d, 5);
    ck_assert_int_eq(req(&sb, MEMD_OP_PLAN, d, sizeof d, &r), -EBADMSG);
    ck_assert_int_eq(r.rc, MEMD_CLOSE);
    reply_free(&r);
    ck_assert_int_eq(req(&sb, MEMD_OP_PLAN, d, 8, &r), -ENOENT);
    ck_assert_int_eq(r.rc, 0);
    reply_free(&r);
}
END_TEST

static int upload(memd_session *s, uint64_t id, uint64_t total, uint64_t off, const uint8_t *data,
                  size_t n, reply *r)
{
    uint8_t *p = malloc(MEMD_WIRE_UPLOAD_SIZE + n);
    memd_wire_upload u = {.upload_id = id, .total = total, .offset = off};
    memd_wire_upload_put(p, &u);
    if (n)
        memcpy(p + MEMD_WIRE_UPLOAD_SIZE, data, n);
    int rc = req(s, MEMD_OP_UPLOAD, p, MEMD_WIRE_UPLOAD_SIZE + n, r);
    free(p);
    return rc;
}

START_TEST(uploads)
{
    size_t len;
    uint8_t *doc = plan_doc(problem, NPROB, 0, 1, &len);
    const uint8_t *body = doc + 8;
    size_t blen = len - 8;
    reply r;
    /* Three parts in order, then PLAN names the upload. */
    ck_assert_int_eq(upload(&sa, 42, blen, 0, body, 100, &r), 0);
    reply_free(&r);
    ck_assert_int_eq(upload(&sa, 42, blen, 100, body + 100, 100, &r), 0);
    reply_free(&r);
    /* Not complete yet: the request fails and the upload is gone. */
    uint8_t ref[8];
    memd_wire_put_u64(ref, 42);
    ck_assert_int_eq(req(&sa, MEMD_OP_PLAN, ref, 8, &r), -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "200 of its"));
    reply_free(&r);
    ck_assert_int_eq(upload(&sa, 42, blen, 200, body + 200, blen - 200, &r), -ENOENT);
    reply_free(&r);
    for (size_t off = 0; off < blen; off += 100) {
        size_t n = blen - off < 100 ? blen - off : 100;
        ck_assert_int_eq(upload(&sa, 43, blen, off, body + off, n, &r), 0);
        reply_free(&r);
    }
    memd_wire_put_u64(ref, 43);
    ck_assert_int_eq(req(&sa, MEMD_OP_PLAN, ref, 8, &r), 0);
    memd_wire_plan_info pi;
    ck_assert_int_eq(memd_wire_plan_info_get(r.p, r.h.len, &pi), 0);
    reply_free(&r);
    ck_assert_uint_eq(pi.count, NPROB);
    ck_assert_uint_eq(st.models->upload_bytes, 0); /* consumed */
    /* Another session cannot use sa's upload ids. */
    ck_assert_int_eq(upload(&sa, 44, blen, 0, body, blen, &r), 0);
    reply_free(&r);
    memd_wire_put_u64(ref, 44);
    ck_assert_int_eq(req(&sb, MEMD_OP_PLAN, ref, 8, &r), -ENOENT);
    reply_free(&r);
    /* Out of order, past the total, over the size limit, too many open. */
    ck_assert_int_eq(upload(&sb, 1, 300, 0, body, 100, &r), 0);
    reply_free(&r);
    ck_assert_int_eq(upload(&sb, 1, 300, 150, body, 100, &r), -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "expected offset 100"));
    reply_free(&r);
    ck_assert_int_eq(upload(&sb, 2, 50, 0, body, 100, &r), -EINVAL);
    reply_free(&r);
    ck_assert_int_eq(upload(&sb, 3, (uint64_t)MEMD_UPLOAD_MAX + 1, 0, body, 1, &r), -EFBIG);
    reply_free(&r);
    for (uint64_t id = 10; id < 10 + MEMD_UPLOAD_MAX_OPEN; id++) {
        ck_assert_int_eq(upload(&sb, id, 1000, 0, body, 10, &r), 0);
        reply_free(&r);
    }
    ck_assert_int_eq(upload(&sb, 99, 1000, 0, body, 10, &r), -EMFILE);
    reply_free(&r);
    /* Upload id 0 is malformed. */
    ck_assert_int_eq(upload(&sb, 0, 1000, 0, body, 10, &r), -EINVAL);
    ck_assert_int_eq(r.rc, MEMD_CLOSE);
    reply_free(&r);
    /* A session that goes away drops its uploads. */
    ck_assert_uint_gt(st.models->upload_bytes, 0);
    memd_session_close(&st, &sb);
    memd_session_close(&st, &sa);
    ck_assert_uint_eq(st.models->upload_bytes, 0);
    ck_assert_ptr_null(st.models->uploads);
    memd_session_open(&st, &sa);
    memd_session_open(&st, &sb);
    free(doc);
}
END_TEST

/* ---- models ---- */

/* x(input) w1 w2 (weights) a b c (activations) v (view of c) y (output). */
enum { T_X, T_W1, T_W2, T_A, T_B, T_C, T_V, T_Y, NT };
static memd_wire_tensor tensors[NT];

static void model_tensors(void)
{
    memd_wire_tensor t[NT] = {
        [T_X] = {.size = 4096, .align = 64, .role = MEMD_TENSOR_INPUT, .alias_of = MEMD_NO_TENSOR},
        [T_W1] = {.size = 1000, .align = 64, .role = MEMD_TENSOR_WEIGHT, .alias_of = MEMD_NO_TENSOR},
        [T_W2] = {.size = 3000, .align = 512, .role = MEMD_TENSOR_WEIGHT, .alias_of = MEMD_NO_TENSOR},
        [T_A] = {.size = 8192, .align = 64, .lower = 0, .upper = 2, .role = MEMD_TENSOR_ACTIVATION,
                 .alias_of = MEMD_NO_TENSOR},
        [T_B] = {.size = 8192, .align = 64, .lower = 1, .upper = 3, .role = MEMD_TENSOR_ACTIVATION,
                 .alias_of = MEMD_NO_TENSOR},
        [T_C] = {.size = 4096, .align = 128, .lower = 2, .upper = 4,
                 .role = MEMD_TENSOR_ACTIVATION, .alias_of = MEMD_NO_TENSOR},
        [T_V] = {.size = 4096, .role = MEMD_TENSOR_ALIAS, .alias_of = T_C},
        [T_Y] = {.size = 256, .align = 64, .role = MEMD_TENSOR_OUTPUT, .alias_of = MEMD_NO_TENSOR},
    };
    memcpy(tensors, t, sizeof t);
}

static uint64_t model_plan(memd_session *s)
{
    memd_wire_plan_buf b[3];
    int k = 0;
    for (int i = 0; i < NT; i++)
        if (tensors[i].role == MEMD_TENSOR_ACTIVATION)
            b[k++] = (memd_wire_plan_buf){.lower = tensors[i].lower, .upper = tensors[i].upper,
                                          .size = tensors[i].size, .align = tensors[i].align};
    memd_wire_plan_info pi;
    reply r;
    ck_assert_int_eq(plan(s, b, 3, 0, &pi, NULL, &r), 0);
    reply_free(&r);
    return pi.plan_id;
}

static int load(memd_session *s, const char *name, uint64_t plan_id, memd_wire_model_info *mi,
                memd_wire_tensor_info *ti, reply *r)
{
    size_t len = 8 + MEMD_WIRE_MODEL_REQ_SIZE + NT * MEMD_WIRE_TENSOR_SIZE;
    uint8_t *d = calloc(1, len), *p = d + 8;
    memd_wire_model_req mr = {.device = DEV, .scope = MEMD_SCOPE_DRAM, .ntensors = NT,
                              .plan_id = plan_id, .code_bytes = 10000};
    memd_wire_strset(mr.name, sizeof mr.name, name);
    p = memd_wire_model_req_put(p, &mr);
    for (int i = 0; i < NT; i++)
        p = memd_wire_tensor_put(p, &tensors[i]);
    int rc = req(s, MEMD_OP_MODEL_LOAD, d, len, r);
    free(d);
    ck_assert_int_eq(r->rc, 0);
    if (rc == 0) {
        ck_assert_uint_eq(r->h.len, MEMD_WIRE_MODEL_INFO_SIZE + NT * MEMD_WIRE_TENSOR_INFO_SIZE);
        ck_assert_int_eq(memd_wire_model_info_get(r->p, r->h.len, mi), 0);
        for (int i = 0; ti && i < NT; i++)
            ck_assert_int_eq(memd_wire_tensor_info_get(r->p + MEMD_WIRE_MODEL_INFO_SIZE +
                                                           i * MEMD_WIRE_TENSOR_INFO_SIZE,
                                                       MEMD_WIRE_TENSOR_INFO_SIZE, &ti[i]),
                             0);
    }
    return rc;
}

static int ref_req(memd_session *s, uint16_t op, uint64_t id, uint32_t flags, reply *r)
{
    uint8_t p[MEMD_WIRE_REF_SIZE];
    memd_wire_ref ref = {.id = id, .flags = flags};
    memd_wire_ref_put(p, &ref);
    return req(s, op, p, sizeof p, r);
}

static int instance(memd_session *s, uint64_t model, memd_wire_instance_info *ii,
                    memd_wire_tensor_addr *ta)
{
    reply r;
    int rc = ref_req(s, MEMD_OP_INSTANCE_CREATE, model, 0, &r);
    if (rc == 0) {
        ck_assert_int_eq(memd_wire_instance_info_get(r.p, r.h.len, ii), 0);
        ck_assert_uint_eq(r.h.len, MEMD_WIRE_INSTANCE_INFO_SIZE + NT * MEMD_WIRE_TENSOR_ADDR_SIZE);
        for (int i = 0; i < NT; i++)
            memd_wire_tensor_addr_get(r.p + MEMD_WIRE_INSTANCE_INFO_SIZE +
                                          i * MEMD_WIRE_TENSOR_ADDR_SIZE,
                                      MEMD_WIRE_TENSOR_ADDR_SIZE, &ta[i]);
    }
    reply_free(&r);
    return rc;
}

static uint64_t dram_allocated(void)
{
    memd_range_stats rs;
    ck_assert_int_eq(memd_device_group_stats(st.devs[0].dev, MEMD_KIND_DRAM, &rs), 0);
    return rs.allocated;
}

/* The model's tensors registered, DRAM in use before any of it (*base), and sa's plan
 * of the model (its id returned). */
static uint64_t fresh_plan(uint64_t *base)
{
    model_tensors();
    *base = dram_allocated();
    return model_plan(&sa);
}

START_TEST(models_shared_across_sessions)
{
    uint64_t base, plan_id = fresh_plan(&base);
    memd_wire_model_info ma, mb;
    memd_wire_tensor_info ta[NT];
    reply r;
    ck_assert_int_eq(load(&sa, "net", plan_id, &ma, ta, &r), 0);
    reply_free(&r);
    ck_assert(ma.flags & MEMD_MODEL_I_NEW);
    ck_assert_uint_eq(ma.users, 1);
    ck_assert_uint_eq(ma.code_bytes, 10000);
    /* Weights laid out bottom-up at their alignment: w1 at 0, w2 at 1024. */
    ck_assert_uint_eq(ma.const_bytes, 1024 + 3000);
    ck_assert_uint_eq(ta[T_W1].value, ma.const_address);
    ck_assert_uint_eq(ta[T_W2].value, ma.const_address + 1024);
    ck_assert_uint_eq(ma.const_address % 512, 0);
    ck_assert_uint_eq(ta[T_V].role, MEMD_TENSOR_ALIAS);
    ck_assert_uint_eq(ta[T_V].value, ta[T_C].value);
    memd_alloc *cst = memd_alloc_find(&st, ma.const_handle);
    ck_assert_ptr_nonnull(cst);
    ck_assert_str_eq(memd_alloc_name(cst), "model:net:const");
    ck_assert_uint_eq(cst->refcount, 1);
    /* Loading it again in the same session changes nothing. */
    ck_assert_int_eq(load(&sa, "net", plan_id, &mb, NULL, &r), 0);
    reply_free(&r);
    ck_assert(!(mb.flags & MEMD_MODEL_I_NEW));
    ck_assert_uint_eq(cst->refcount, 1);
    /* A second session shares code and constants. */
    ck_assert_int_eq(load(&sb, "net", plan_id, &mb, NULL, &r), 0);
    reply_free(&r);
    ck_assert(!(mb.flags & MEMD_MODEL_I_NEW));
    ck_assert_uint_eq(mb.model_id, ma.model_id);
    ck_assert_uint_eq(mb.users, 2);
    ck_assert_uint_eq(mb.const_handle, ma.const_handle);
    ck_assert_uint_eq(mb.code_address, ma.code_address);
    ck_assert_uint_eq(cst->refcount, 2);
    ck_assert_uint_eq(memd_alloc_find(&st, ma.code_handle)->refcount, 2);
    /* The same name with other content is refused. */
    tensors[T_W1].size = 999;
    ck_assert_int_eq(load(&sb, "net", plan_id, &mb, NULL, &r), -EEXIST);
    reply_free(&r);
    /* Another uid: model names are scoped per uid as shared names are, so the same name
     * (with this content or another) is a model of its own, with buffers of its own. */
    ck_assert_int_eq(load(&sroot, "net", plan_id, &mb, NULL, &r), 0);
    reply_free(&r);
    ck_assert(mb.flags & MEMD_MODEL_I_NEW);
    ck_assert_uint_ne(mb.model_id, ma.model_id);
    ck_assert_uint_ne(mb.const_handle, ma.const_handle);
    ck_assert_uint_eq(cst->refcount, 2);
    ck_assert_int_eq(ref_req(&sroot, MEMD_OP_MODEL_UNLOAD, mb.model_id, 0, &r), 0);
    reply_free(&r);
    tensors[T_W1].size = 1000;
    /* A plan that is not the activations', or none at all. */
    tensors[T_A].size = 4096;
    ck_assert_int_eq(load(&sb, "other", plan_id, &mb, NULL, &r), -EINVAL);
    ck_assert_ptr_nonnull(strstr(r.err.message, "does not match plan"));
    reply_free(&r);
    tensors[T_A].size = 8192;
    ck_assert_int_eq(load(&sb, "other", plan_id ^ 1, &mb, NULL, &r), -ENOENT);
    reply_free(&r);
    ck_assert_int_eq(load(&sb, "bad name!", plan_id, &mb, NULL, &r), -EINVAL);
    reply_free(&r);
    tensors[T_V].alias_of = T_V;
    ck_assert_int_eq(load(&sb, "other", plan_id, &mb, NULL, &r), -EINVAL);
    reply_free(&r);
    tensors[T_V].alias_of = T_C;
    tensors[T_V].size = 5000; /* larger than its source */
    ck_assert_int_eq(load(&sb, "other", plan_id, &mb, NULL, &r), -EINVAL);
    reply_free(&r);
    tensors[T_V].size = 4096;

    /* sa goes away: sb still holds everything, one reference less. */
    memd_session_close(&st, &sa);
    ck_assert_uint_eq(cst->refcount, 1);
    ck_assert_int_eq(ref_req(&sb, MEMD_OP_MODEL_INFO, ma.model_id, 0, &r), 0);
    ck_assert_int_eq(memd_wire_model_info_get(r.p, r.h.len, &mb), 0);
    reply_free(&r);
    ck_assert_uint_eq(mb.users, 1);
    /* Unloading the last use frees code and constants; the plan stays cached. */
    ck_assert_int_eq(ref_req(&sb, MEMD_OP_MODEL_UNLOAD, ma.model_id, 0, &r), 0);
    reply_free(&r);
    ck_assert_ptr_null(memd_alloc_find(&st, ma.const_handle));
    ck_assert_uint_eq(dram_allocated(), base);
    memd_plan_entry *e = memd_plan_cache_get(st.models, plan_id);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->models, 0);
    ck_assert_int_eq(ref_req(&sb, MEMD_OP_MODEL_UNLOAD, ma.model_id, 0, &r), -ENOENT);
    reply_free(&r);
    memd_session_open(&st, &sa);
}
END_TEST

START_TEST(instances)
{
    uint64_t base, plan_id = fresh_plan(&base);
    memd_wire_model_info m;
    memd_wire_tensor_info ti[NT];
    reply r;
    ck_assert_int_eq(load(&sa, "net", plan_id, &m, ti, &r), 0);
    reply_free(&r);
    memd_wire_instance_info i1, i2, i3;
    memd_wire_tensor_addr a1[NT], a2[NT], a3[NT];
    ck_assert_int_eq(instance(&sa, m.model_id, &i1, a1), 0);
    ck_assert_int_eq(instance(&sa, m.model_id, &i2, a2), 0);
    ck_assert_uint_ne(i1.instance_id, i2.instance_id);
    ck_assert(!(i1.flags & MEMD_INST_I_REUSED));
    ck_assert_uint_eq(i1.arena_bytes, m.arena);
    ck_assert_uint_eq(i1.arena_address % 128, 0);
    /* Activations at arena + plan offset, inside the arena; the view at its source. */
    for (int t = T_A; t <= T_C; t++) {
        ck_assert_uint_eq(a1[t].address, i1.arena_address + ti[t].value);
        ck_assert_uint_eq(a1[t].handle, i1.arena_handle);
        ck_assert_uint_le(a1[t].address + tensors[t].size, i1.arena_address + i1.arena_bytes);
    }
    ck_assert_uint_eq(a1[T_V].address, a1[T_C].address);
    /* Weights are shared, placeholders per instance; the two arenas do not overlap. */
    ck_assert_uint_eq(a1[T_W2].address, a2[T_W2].address);
    ck_assert_uint_eq(a1[T_W2].handle, m.const_handle);
    ck_assert_uint_ne(a1[T_X].address, a2[T_X].address);
    ck_assert(i1.arena_address + i1.arena_bytes <= i2.arena_address ||
              i2.arena_address + i2.arena_bytes <= i1.arena_address);
    ck_assert_uint_eq(m.instances, 0);

    /* The arena may not be freed behind the instance's back (an admin may). */
    uint8_t h[8];
    memd_wire_handle_put(h, i1.arena_handle);
    ck_assert_int_eq(req(&sa, MEMD_OP_FREE, h, 8, &r), -EBUSY);
    reply_free(&r);
    uint8_t fb[16];
    memd_wire_count_put(fb, 1);
    memd_wire_handle_put(fb + 8, a1[T_X].handle);
    ck_assert_int_eq(req(&sa, MEMD_OP_FREE_BATCH, fb, 16, &r), -EBUSY);
    reply_free(&r);

    /* Release: back on the free list; the next create reuses it as it was. */
    uint64_t in_use = dram_allocated();
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_INSTANCE_RELEASE, i1.instance_id, 0, &r), 0);
    reply_free(&r);
    ck_assert_uint_eq(dram_allocated(), in_use);
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_INSTANCE_RELEASE, i1.instance_id, 0, &r), -EALREADY);
    reply_free(&r);
    ck_assert_int_eq(instance(&sa, m.model_id, &i3, a3), 0);
    ck_assert(i3.flags & MEMD_INST_I_REUSED);
    ck_assert_uint_eq(i3.instance_id, i1.instance_id);
    ck_assert_mem_eq(a3, a1, sizeof a1);
    /* Another session can neither release sa's instance nor instantiate unloaded models. */
    ck_assert_int_eq(ref_req(&sb, MEMD_OP_INSTANCE_RELEASE, i1.instance_id, 0, &r), -ENOENT);
    reply_free(&r);
    ck_assert_int_eq(instance(&sb, m.model_id, &i3, a3), -ENOENT);
    /* FREE gives the memory back. */
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_INSTANCE_RELEASE, i2.instance_id, MEMD_INST_F_FREE,
                             &r), 0);
    reply_free(&r);
    ck_assert_uint_lt(dram_allocated(), in_use);
    ck_assert_ptr_null(memd_alloc_find(&st, a2[T_X].handle));
    /* Unload refuses while an instance is in use, unless forced. */
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_MODEL_UNLOAD, m.model_id, 0, &r), -EBUSY);
    reply_free(&r);
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_MODEL_UNLOAD, m.model_id, 4, &r), -EINVAL);
    ck_assert_int_eq(r.rc, MEMD_CLOSE);
    reply_free(&r);
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_MODEL_UNLOAD, m.model_id, MEMD_MODEL_F_FORCE, &r), 0);
    reply_free(&r);
    ck_assert_uint_eq(dram_allocated(), base);
    ck_assert_ptr_null(st.models->models);
    ck_assert_uint_eq(st.models->managed.len, 0);
    ck_assert_uint_eq(st.models->instances.len, 0);
}
END_TEST

START_TEST(session_close_releases_instances)
{
    uint64_t base, plan_id = fresh_plan(&base);
    memd_wire_model_info m;
    reply r;
    ck_assert_int_eq(load(&sa, "net", plan_id, &m, NULL, &r), 0);
    reply_free(&r);
    ck_assert_int_eq(load(&sb, "net", plan_id, &m, NULL, &r), 0);
    reply_free(&r);
    memd_wire_instance_info ii;
    memd_wire_tensor_addr ta[NT];
    ck_assert_int_eq(instance(&sa, m.model_id, &ii, ta), 0);
    ck_assert_int_eq(instance(&sa, m.model_id, &ii, ta), 0);
    ck_assert_int_eq(instance(&sb, m.model_id, &ii, ta), 0);
    uint64_t sb_arena = ii.arena_handle;
    uint32_t sa_holds = sa.nholds;
    ck_assert_uint_eq(sa_holds, 2 + 2 * 3); /* code, const; 2 x (arena, x, y) */
    memd_session_close(&st, &sa);
    memd_alloc *cst = memd_alloc_find(&st, m.const_handle);
    ck_assert_ptr_nonnull(cst);
    ck_assert_uint_eq(cst->refcount, 1);
    ck_assert_ptr_nonnull(memd_alloc_find(&st, sb_arena));
    ck_assert_uint_eq(st.models->models->instances, 1);
    memd_session_close(&st, &sb);
    ck_assert_uint_eq(dram_allocated(), base);
    ck_assert_ptr_null(st.models->models);
    ck_assert_ptr_null(st.models->uses);
    memd_session_open(&st, &sa);
    memd_session_open(&st, &sb);
}
END_TEST

static int count_tag(const uint8_t *p, size_t len, uint32_t want)
{
    int n = 0;
    dump_iter it = {.p = p, .len = len, .next = UINT64_MAX};
    while (dump_next(&it))
        n += it.tag == want;
    return n;
}

START_TEST(dump_records)
{
    model_tensors();
    uint64_t plan_id = model_plan(&sa);
    memd_wire_model_info m;
    reply r;
    ck_assert_int_eq(load(&sa, "net", plan_id, &m, NULL, &r), 0);
    reply_free(&r);
    memd_wire_instance_info ii;
    memd_wire_tensor_addr ta[NT];
    ck_assert_int_eq(instance(&sa, m.model_id, &ii, ta), 0);
    uint8_t q[MEMD_WIRE_DUMP_REQ_SIZE];
    memd_wire_dump_req d = {.device = UINT32_MAX, .flags = 0};
    memd_wire_dump_req_put(q, &d);
    /* Without the flag, no new record: old clients never meet an unknown tag. */
    ck_assert_int_eq(req(&sa, MEMD_OP_DUMP, q, sizeof q, &r), 0);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_MODEL), 0);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_PLAN), 0);
    reply_free(&r);
    d.flags = MEMD_DUMP_F_MODELS;
    memd_wire_dump_req_put(q, &d);
    ck_assert_int_eq(req(&sa, MEMD_OP_DUMP, q, sizeof q, &r), 0);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_PLAN), 1);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_MODEL), 1);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_INSTANCE), 1);
    reply_free(&r);
    /* Another session sees the plan, not sa's model or instance; an admin sees all. */
    ck_assert_int_eq(req(&sb, MEMD_OP_DUMP, q, sizeof q, &r), 0);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_PLAN), 1);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_MODEL), 0);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_INSTANCE), 0);
    reply_free(&r);
    ck_assert_int_eq(req(&sroot, MEMD_OP_DUMP, q, sizeof q, &r), 0);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_MODEL), 1);
    ck_assert_int_eq(count_tag(r.p, r.h.len, MEMD_REC_INSTANCE), 1);
    reply_free(&r);
    /* The admin may query the model and reclaim an instance's buffer. */
    ck_assert_int_eq(ref_req(&sroot, MEMD_OP_MODEL_INFO, m.model_id, 0, &r), 0);
    reply_free(&r);
    uint8_t h[8];
    memd_wire_handle_put(h, ii.arena_handle);
    ck_assert_int_eq(req(&sroot, MEMD_OP_FREE, h, 8, &r), 0);
    reply_free(&r);
    /* The instance survives that as records; releasing it later is harmless. */
    ck_assert_int_eq(ref_req(&sa, MEMD_OP_INSTANCE_RELEASE, ii.instance_id, MEMD_INST_F_FREE,
                             &r), 0);
    reply_free(&r);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("daemon");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, digest_vectors);
    tcase_add_test(tc, plan_cache_across_sessions);
    tcase_add_test(tc, precomputed_plans);
    tcase_add_test(tc, plan_documents_checked);
    tcase_add_test(tc, uploads);
    tcase_add_test(tc, models_shared_across_sessions);
    tcase_add_test(tc, instances);
    tcase_add_test(tc, session_close_releases_instances);
    tcase_add_test(tc, dump_records);
    suite_add_tcase(s, tc);
    return s;
}
