/* Plans and models with the real daemon and libmemclient: the plan cache across
 * sessions, a precomputed plan rejected naming its overlapping pair, a plan too big for
 * one frame (uploaded in parts, planned off the event loop while other sessions are
 * served, replies kept in order on its own connection), models shared across sessions
 * (constants reference counted), instances (addresses inside their arena, no overlap,
 * reuse), a client killed with SIGKILL while holding an instance, and the memctl
 * subcommands (model check/load/list, plan-submit, dump). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "client_util.h"
#include "memctl_run.h"
#include "raw_client.h"
#include "test_clock.h"
#include "test_rand.h"

static memd_fixture f;

/* Nanoseconds: in milliseconds an answer and a plan finishing close together (valgrind)
 * would tie and prove nothing either way. */
static void setup(void)
{
    cu_start(&f);
}

static void teardown(void)
{
    ck_assert_int_eq(memd_fixture_stop(&f), 0);
}

static void problem(memclient_plan_buffer *b, size_t n, uint64_t seed)
{
    uint64_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        memd_test_lcg(&x);
        uint64_t lo = (x >> 33) % (n / 4 + 8);
        b[i] = (memclient_plan_buffer){.lower = lo, .upper = lo + 1 + (x >> 20) % 40,
                                       .size = 64 + (x >> 40) % 65536,
                                       .alignment = 1u << ((x >> 10) % 7)};
    }
}

static void assert_plan_sane(const memclient_plan_buffer *b, size_t n, const uint64_t *off,
                             const memclient_plan_info *pi)
{
    ck_assert_uint_ge(pi->arena, pi->lower_bound);
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_eq(off[i] % (b[i].alignment ? b[i].alignment : 1), 0);
        ck_assert_uint_le(off[i] + b[i].size, pi->arena);
    }
}

START_TEST(plan_cache_across_sessions)
{
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f);
    enum { N = 300 };
    memclient_plan_buffer b[N];
    problem(b, N, 1);
    uint64_t o1[N], o2[N];
    memclient_plan_info p1, p2;
    memclient_plan_opts opts = {.budget_ms = 20, .seed = 3};
    ck_assert_int_eq(memclient_plan_submit(c1, b, N, &opts, &p1, o1), 0);
    ck_assert(!p1.cached);
    assert_plan_sane(b, N, o1, &p1);
    memclient_disconnect(c1);
    /* A session that comes later gets the cached plan, whatever its budget or seed. */
    opts = (memclient_plan_opts){.budget_ms = 900, .seed = 77};
    ck_assert_int_eq(memclient_plan_submit(c2, b, N, &opts, &p2, o2), 0);
    ck_assert(p2.cached);
    ck_assert_uint_eq(p2.plan_id, p1.plan_id);
    ck_assert_uint_eq(p2.arena, p1.arena);
    ck_assert_mem_eq(o1, o2, sizeof o1);
    /* The dump lists it with its hit. */
    memclient_snapshot *s;
    ck_assert_int_eq(memclient_dump(c2, MEMCLIENT_ALL_DEVICES, MEMCLIENT_DUMP_MODELS, &s), 0);
    ck_assert_uint_eq(s->nplans, 1);
    ck_assert_uint_eq(s->plans[0].plan_id, p1.plan_id);
    ck_assert_uint_eq(s->plans[0].hits, 1);
    ck_assert_uint_eq(s->plans[0].buffers, N);
    memclient_snapshot_free(s);
    memclient_disconnect(c2);
}
END_TEST

START_TEST(precomputed_plan_rejected_with_pair)
{
    memclient *c = cu_connect(&f);
    memclient_plan_buffer b[] = {
        {.lower = 0, .upper = 2, .size = 100, .offset = 0},
        {.lower = 0, .upper = 4, .size = 100, .offset = 128},
        {.lower = 2, .upper = 4, .size = 50, .offset = 0},
        {.lower = 1, .upper = 3, .size = 100, .offset = 192}, /* onto buffer 1 */
    };
    memclient_plan_opts o = {.flags = MEMCLIENT_PLAN_PRECOMPUTED};
    memclient_plan_info pi;
    ck_assert_int_eq(memclient_plan_submit(c, b, 4, &o, &pi, NULL), -EINVAL);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "buffers 3 and 1 overlap"), "%s", e.message);
    /* The connection is fine; the corrected plan is accepted as given. */
    b[3].offset = 256;
    uint64_t off[4];
    ck_assert_int_eq(memclient_plan_submit(c, b, 4, &o, &pi, off), 0);
    ck_assert(pi.precomputed);
    ck_assert_uint_eq(pi.arena, 356);
    ck_assert_uint_eq(off[3], 256);
    memclient_disconnect(c);
}
END_TEST

typedef struct big_job {
    memd_fixture *f;
    memclient_plan_buffer *b;
    uint64_t *off;
    size_t n;
    memclient_plan_info pi;
    int rc;
    uint64_t done_ns;
} big_job;

static void *big_plan(void *arg)
{
    big_job *j = arg;
    memclient *c = cu_connect(j->f);
    memclient_plan_opts o = {.budget_ms = 700, .seed = 5};
    j->rc = memclient_plan_submit(c, j->b, j->n, &o, &j->pi, j->off);
    j->done_ns = memd_test_now_ns();
    memclient_disconnect(c);
    return NULL;
}

/* 25000 buffers: 1.2 MB, more than one 1 MiB frame, so the library uploads it in parts.
 * While the daemon plans it (700 ms budget) another session is served at once. */
START_TEST(big_plan_uploaded_off_the_loop)
{
    big_job j = {.f = &f, .n = 25000};
    j.b = calloc(j.n, sizeof *j.b);
    j.off = calloc(j.n, sizeof *j.off);
    problem(j.b, j.n, 9);
    memclient *c = cu_connect(&f);
    pthread_t t;
    uint64_t t0 = memd_test_now_ns();
    ck_assert_int_eq(pthread_create(&t, NULL, big_plan, &j), 0);
    /* Let the upload arrive and the job start, then ask for something small. */
    memd_test_sleep_ms(250);
    memclient_buffer buf;
    memclient_alloc_req r = cu_req(MEMD_CLASS_CONSTANT, 4096);
    ck_assert_int_eq(memclient_alloc(c, &r, &buf), 0);
    uint64_t t2 = memd_test_now_ns();
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(j.rc, 0);
    ck_assert(!j.pi.cached);
    assert_plan_sane(j.b, j.n, j.off, &j.pi);
    /* The small request was answered while the plan was still being made. (No bound in
     * milliseconds: CI machines are slow and shared; the order is the property.) */
    ck_assert_msg(t2 < j.done_ns, "alloc done at +%" PRIu64 " us, plan at +%" PRIu64 " us",
                  (t2 - t0) / 1000, (j.done_ns - t0) / 1000);
    /* Submitted again: cached (uploaded again, not planned again). */
    memclient_plan_info p2;
    ck_assert_int_eq(memclient_plan_submit(c, j.b, j.n, NULL, &p2, NULL), 0);
    ck_assert(p2.cached);
    ck_assert_uint_eq(p2.plan_id, j.pi.plan_id);
    memclient_disconnect(c);
    free(j.b);
    free(j.off);
}
END_TEST

/* The next reply on fd (header in *h, payload in rb, up to 1 MiB) answers id, with
 * success. */
static void reply_ok(int fd, memd_wire_hdr *h, uint8_t *rb, uint64_t id)
{
    ck_assert_int_eq(raw_recv(fd, h, rb, 1 << 20, 10000), 0);
    ck_assert_uint_eq(h->id, id);
    ck_assert_int_eq(h->status, 0);
}

/* On one connection, replies stay in request order even when a plan is answered later
 * than the requests behind it could be. */
START_TEST(replies_in_order_behind_a_plan)
{
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    enum { N = 2000 };
    size_t len = 8 + MEMD_WIRE_PLAN_REQ_SIZE + N * MEMD_WIRE_PLAN_BUF_SIZE;
    uint8_t *doc = calloc(1, len), *p = memd_wire_put_u64(doc, 0);
    memd_wire_plan_req rq = {.count = N, .budget_ms = 200};
    p = memd_wire_plan_req_put(p, &rq);
    memclient_plan_buffer b[N];
    problem(b, N, 4);
    for (int i = 0; i < N; i++) {
        memd_wire_plan_buf w = {.lower = b[i].lower, .upper = b[i].upper, .size = b[i].size,
                                .align = b[i].alignment};
        p = memd_wire_plan_buf_put(p, &w);
    }
    ck_assert_int_eq(raw_send(fd, MEMD_OP_PLAN, 1, doc, (uint32_t)len), 0);
    memd_wire_alloc_req a = raw_req(0, MEMD_CLASS_CONSTANT, MEMD_SCOPE_DRAM, 4096);
    uint8_t ap[MEMD_WIRE_ALLOC_REQ_SIZE];
    memd_wire_alloc_req_put(ap, &a);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_ALLOC, 2, ap, sizeof ap), 0);
    memd_wire_hdr h;
    uint8_t *rb = malloc(1 << 20);
    reply_ok(fd, &h, rb, 1);
    ck_assert_uint_eq(h.len, MEMD_WIRE_PLAN_INFO_SIZE + 8 * N);
    reply_ok(fd, &h, rb, 2);
    /* A client that shuts down its sending side right after a plan still gets it. */
    rq.seed = 1; /* another problem: not cached */
    memd_wire_plan_req_put(doc + 8, &rq);
    memd_wire_plan_buf w = {.lower = 0, .upper = 1, .size = 12345, .align = 1};
    memd_wire_plan_buf_put(doc + 8 + MEMD_WIRE_PLAN_REQ_SIZE, &w);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_PLAN, 3, doc, (uint32_t)len), 0);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_ALLOC, 4, ap, sizeof ap), 0);
    shutdown(fd, SHUT_WR);
    reply_ok(fd, &h, rb, 3);
    reply_ok(fd, &h, rb, 4);
    ck_assert(raw_closed(fd, 5000));
    close(fd);
    free(rb);
    free(doc);
}
END_TEST

static uint8_t *raw_plan_doc(size_t n, uint64_t seed, uint32_t budget_ms, size_t *len)
{
    *len = 8 + MEMD_WIRE_PLAN_REQ_SIZE + n * MEMD_WIRE_PLAN_BUF_SIZE;
    uint8_t *doc = calloc(1, *len), *p = memd_wire_put_u64(doc, 0);
    memd_wire_plan_req rq = {.count = (uint32_t)n, .budget_ms = budget_ms};
    p = memd_wire_plan_req_put(p, &rq);
    memclient_plan_buffer *b = calloc(n, sizeof *b);
    problem(b, n, seed);
    for (size_t i = 0; i < n; i++) {
        memd_wire_plan_buf w = {.lower = b[i].lower, .upper = b[i].upper, .size = b[i].size,
                                .align = b[i].alignment};
        p = memd_wire_plan_buf_put(p, &w);
    }
    free(b);
    return doc;
}

/* A new connection that sends a PLAN request (id) for raw_plan_doc's 3000 buffers and
 * gives the daemon 50 ms to start on it; the document in *doc (the caller frees it). */
static int plan_in_flight(uint64_t seed, uint32_t budget_ms, uint64_t id, uint8_t **doc)
{
    size_t len;
    *doc = raw_plan_doc(3000, seed, budget_ms, &len);
    int fd = memd_fixture_connect(&f);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(raw_send(fd, MEMD_OP_PLAN, id, *doc, (uint32_t)len), 0);
    memd_test_sleep_ms(50);
    return fd;
}

/* A client that goes away while its plan is being made: the job finishes detached, the
 * plan is cached all the same, and the daemon goes on. */
START_TEST(client_gone_during_planning)
{
    uint8_t *doc;
    int fd = plan_in_flight(11, 300, 1, &doc);
    close(fd);
    memclient *c = cu_connect(&f);
    bool cached = false;
    for (int i = 0; i < 300 && !cached; i++) {
        memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
        cached = s->nplans == 1 && s->plans[0].buffers == 3000;
        memclient_snapshot_free(s);
        if (!cached)
            memd_test_sleep_ms(10);
    }
    ck_assert_msg(cached, "the detached job's plan never reached the cache");
    memclient_disconnect(c);
    free(doc);
}
END_TEST

/* SIGTERM while a plan is being made: the request already received still gets its
 * reply, then the daemon exits cleanly. */
START_TEST(shutdown_during_planning)
{
    uint8_t *doc;
    int fd = plan_in_flight(12, 400, 7, &doc);
    ck_assert_int_eq(kill(f.pid, SIGTERM), 0);
    memd_wire_hdr h;
    uint8_t *rb = malloc(1 << 20);
    reply_ok(fd, &h, rb, 7);
    ck_assert(raw_closed(fd, 5000));
    close(fd);
    free(rb);
    free(doc);
    ck_assert_int_eq(memd_fixture_wait(&f, 10000), 0);
    ck_assert_int_eq(memd_fixture_stop(&f), 0); /* removes its directory */
    cu_start(&f);                               /* for the teardown */
}
END_TEST

/* ---- models ---- */

/* x -> conv(w) -> a -> relu -> b -> reshape (view) v -> fc(w2) -> y, with a residual:
 * a is read again by the last op. */
enum { X, W, A, B, V, W2, Y, NT };
static const uint32_t op0_in[] = {X, W}, op0_out[] = {A};
static const uint32_t op1_in[] = {A}, op1_out[] = {B};
static const uint32_t op2_in[] = {B}, op2_out[] = {V};
static const uint32_t op3_in[] = {V, W2, A}, op3_out[] = {Y};
static const memclient_tensor_desc tensors[NT] = {
    [X] = {.name = "x", .role = MEMCLIENT_TENSOR_INPUT, .bytes = 3 * 1024},
    [W] = {.name = "w", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 20000, .alignment = 4096},
    [A] = {.name = "a", .dtype = MEMD_DTYPE_F16, .ndim = 2, .shape = {64, 128}},
    [B] = {.name = "b", .bytes = 16384},
    [V] = {.name = "v", .bytes = 16384},
    [W2] = {.name = "w2", .role = MEMCLIENT_TENSOR_WEIGHT, .bytes = 5000},
    [Y] = {.name = "y", .role = MEMCLIENT_TENSOR_OUTPUT, .bytes = 40},
};
static const memclient_op_desc ops[] = {
    {.name = "conv", .inputs = op0_in, .ninputs = 2, .outputs = op0_out, .noutputs = 1},
    {.name = "relu", .inputs = op1_in, .ninputs = 1, .outputs = op1_out, .noutputs = 1},
    {.name = "view", .inputs = op2_in, .ninputs = 1, .outputs = op2_out, .noutputs = 1,
     .inplace = 1},
    {.name = "fc", .inputs = op3_in, .ninputs = 3, .outputs = op3_out, .noutputs = 1},
};

static memclient_model_desc model(const char *name)
{
    return (memclient_model_desc){.name = name, .device = 0, .scope = MEMD_SCOPE_DRAM,
                                  .code_bytes = 8192, .tensors = tensors, .ntensors = NT,
                                  .ops = ops, .nops = 4};
}

static const memclient_alloc_info *find_alloc(const memclient_snapshot *s, uint64_t h)
{
    return cu_find(s, h);
}

static void assert_instance(const memclient_instance *in, const memclient_tensor_addr *ta,
                            const memclient_tensor_info *ti, const memclient_model_info *mi)
{
    ck_assert_uint_eq(in->arena_bytes, mi->arena);
    for (int t = 0; t < NT; t++) {
        const memclient_tensor_info *src = ti[t].role == MEMCLIENT_TENSOR_ALIAS ? &ti[ti[t].alias_of]
                                                                              : &ti[t];
        if (src->role == MEMCLIENT_TENSOR_ACTIVATION) {
            ck_assert_uint_eq(ta[t].address, in->arena_address + src->value);
            ck_assert_uint_eq(ta[t].handle, in->arena_handle);
            ck_assert_uint_le(ta[t].address + ti[t].size, in->arena_address + in->arena_bytes);
        } else if (src->role == MEMCLIENT_TENSOR_WEIGHT) {
            ck_assert_uint_eq(ta[t].address, src->value);
            ck_assert_uint_eq(ta[t].handle, mi->const_handle);
        } else {
            ck_assert_uint_ne(ta[t].handle, in->arena_handle);
        }
    }
}

START_TEST(models_and_instances_across_sessions)
{
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f);
    uint64_t base = cu_data_allocated(c1);

    memclient_model_desc d = model("resnet-ish");
    memclient_model_info m1, m2;
    memclient_tensor_info t1[NT], t2[NT];
    ck_assert_int_eq(memclient_model_load(c1, &d, NULL, &m1, t1), 0);
    ck_assert(m1.created);
    ck_assert(!m1.plan_cached);
    ck_assert_uint_eq(m1.users, 1);
    ck_assert_uint_eq(t1[V].role, MEMCLIENT_TENSOR_ALIAS);
    ck_assert_uint_eq(t1[V].alias_of, B);
    ck_assert_uint_eq(t1[W].value % 4096, 0);
    /* a (16 KiB) lives [0,4), b [1,3): the arena holds both at once, no more. */
    ck_assert_uint_eq(m1.lower_bound, 16384 + 16384);
    ck_assert_uint_eq(m1.arena, m1.lower_bound);
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m2, t2), 0);
    ck_assert(!m2.created);
    ck_assert(m2.plan_cached);
    ck_assert_uint_eq(m2.model_id, m1.model_id);
    ck_assert_uint_eq(m2.users, 2);
    ck_assert_uint_eq(m2.const_address, m1.const_address);
    ck_assert_uint_eq(t2[W2].value, t1[W2].value);
    memclient_snapshot *s = cu_dump(c1, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(find_alloc(s, m1.const_handle)->buf.refcount, 2);
    ck_assert_uint_eq(find_alloc(s, m1.code_handle)->buf.refcount, 2);
    ck_assert_str_eq(find_alloc(s, m1.const_handle)->name, "model:resnet-ish:const");
    ck_assert_uint_eq(s->nmodels, 1);
    ck_assert_uint_eq(s->models[0].users, 2);
    memclient_snapshot_free(s);

    /* Instances: pipelined, each with its own arena and placeholders. */
    memclient_instance i1, i2, i3;
    memclient_tensor_addr a1[NT], a2[NT], a3[NT];
    ck_assert_int_eq(memclient_instance_create(c1, m1.model_id, &i1, a1, NT), NT);
    ck_assert_int_eq(memclient_instance_create(c1, m1.model_id, &i2, a2, NT), NT);
    assert_instance(&i1, a1, t1, &m1);
    assert_instance(&i2, a2, t1, &m1);
    /* Disjoint in every bank: an interleaved arena reserves size_per_bank there. */
    memclient_alloc_info q1, q2;
    ck_assert_int_eq(memclient_query(c1, i1.arena_handle, &q1), 0);
    ck_assert_int_eq(memclient_query(c1, i2.arena_handle, &q2), 0);
    ck_assert(i1.arena_address + q1.buf.size_per_bank <= i2.arena_address ||
              i2.arena_address + q2.buf.size_per_bank <= i1.arena_address);
    ck_assert_uint_ne(a1[X].address, a2[X].address);
    /* c2 cannot touch c1's instances; its own are separate. */
    ck_assert_int_eq(memclient_instance_release(c2, i1.instance_id, 0), -ENOENT);
    ck_assert_int_eq(memclient_instance_create(c2, m1.model_id, &i3, a3, NT), NT);
    ck_assert_uint_ne(i3.arena_handle, i1.arena_handle);
    /* The instance's buffers are not FREE-able one by one. */
    ck_assert_int_eq(memclient_free(c1, i1.arena_handle), -EBUSY);
    /* Reuse: a released instance comes back as it was. */
    ck_assert_int_eq(memclient_instance_release(c1, i1.instance_id, 0), 0);
    ck_assert_int_eq(memclient_instance_create(c1, m1.model_id, &i3, a3, NT), NT);
    ck_assert(i3.reused);
    ck_assert_uint_eq(i3.instance_id, i1.instance_id);
    ck_assert_mem_eq(a3, a1, sizeof a1);
    ck_assert_int_eq(memclient_model_unload(c1, m1.model_id, 0), -EBUSY);
    ck_assert_int_eq(memclient_model_unload(c1, m1.model_id, MEMCLIENT_MODEL_FORCE), 0);
    s = cu_dump(c2, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(find_alloc(s, m1.const_handle)->buf.refcount, 1);
    ck_assert_ptr_null(find_alloc(s, i1.arena_handle));
    ck_assert_uint_eq(s->models[0].users, 1);
    ck_assert_uint_eq(s->ninstances, 1);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c2);
    /* Everything of the model is gone with its last session. */
    uint64_t h[] = {m1.const_handle, m1.code_handle};
    ck_assert(cu_wait_gone(c1, h, 2, 5000));
    s = cu_dump(c1, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, base);
    ck_assert_uint_eq(s->nmodels, 0);
    ck_assert_uint_eq(s->nplans, 1); /* the plan stays cached */
    memclient_snapshot_free(s);
    memclient_disconnect(c1);
}
END_TEST

/* The child of killed_client_with_instance: loads model *arg and makes an instance;
 * the handles of its arena and of tensors X and Y. */
static void instance_holder(const char *socket_path, const void *arg, uint64_t *h, size_t n)
{
    (void)n;
    memclient *cc;
    memclient_model_info cm;
    memclient_instance in;
    memclient_tensor_addr ta[NT];
    if (memclient_connect(socket_path, &cc) == 0 &&
        memclient_model_load(cc, arg, NULL, &cm, NULL) == 0 &&
        memclient_instance_create(cc, cm.model_id, &in, ta, NT) == NT) {
        h[0] = in.arena_handle;
        h[1] = ta[X].handle;
        h[2] = ta[Y].handle;
    }
}

START_TEST(killed_client_with_instance)
{
    memclient *c = cu_connect(&f);
    memclient_model_desc d = model("victim");
    memclient_model_info m;
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &m, NULL), 0);
    uint64_t loaded = cu_data_allocated(c);

    uint64_t h[3];
    pid_t pid = cu_fork_holder(&f, instance_holder, &d, h, 3);
    ck_assert_msg(h[0] && h[1] && h[2], "the child could not create an instance");
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(cu_find(s, m.const_handle)->buf.refcount, 2);
    ck_assert_uint_eq(cu_find(s, h[0])->pid, (uint32_t)pid);
    ck_assert_uint_eq(s->ninstances, 1);
    ck_assert_uint_eq(s->instances[0].pid, (uint32_t)pid);
    ck_assert_uint_gt(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, loaded);
    memclient_snapshot_free(s);

    cu_kill_holder(pid);
    ck_assert_msg(cu_wait_gone(c, h, 3, 5000), "the killed client's instance is still held");
    s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(cu_region(s, MEMD_KIND_DRAM, "data")->stats.allocated, loaded);
    ck_assert_uint_eq(cu_find(s, m.const_handle)->buf.refcount, 1);
    ck_assert_uint_eq(s->ninstances, 0);
    ck_assert_uint_eq(s->nmodels, 1);
    ck_assert_uint_eq(s->models[0].users, 1);
    ck_assert_int_eq(cu_check_map(s), 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
}
END_TEST

START_TEST(model_errors)
{
    memclient *c = cu_connect(&f);
    memclient_model_desc d = model("m1");
    memclient_model_info m;
    d.device = 42;
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &m, NULL), -ENODEV);
    d.device = 0;
    d.name = "has space";
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &m, NULL), -EINVAL);
    d.name = "m1";
    ck_assert_int_eq(memclient_model_load(c, &d, NULL, &m, NULL), 0);
    /* Same name, other content (another code size). */
    memclient *c2 = cu_connect(&f);
    d.code_bytes = 4096;
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m, NULL), -EEXIST);
    memclient_error e;
    memclient_last_error(&e);
    ck_assert_ptr_nonnull(strstr(e.message, "other content"));
    /* A precomputed plan for the activations that is wrong is refused with its pair. */
    uint64_t off[NT] = {[A] = 0, [B] = 0};
    d.name = "m2";
    d.offsets = off;
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m, NULL), -EINVAL);
    memclient_last_error(&e);
    ck_assert_msg(strstr(e.message, "overlap"), "%s", e.message);
    off[B] = 16384;
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m, NULL), 0);
    ck_assert(m.plan_precomputed);
    ck_assert_int_eq(memclient_instance_create(c2, 999999, &(memclient_instance){0}, NULL, 0),
                     -ENOENT);
    memclient_disconnect(c2);
    memclient_disconnect(c);
}
END_TEST

/* ---- memctl ---- */

static char *out, *err; /* the last run's output */

static int memctl(const char *const *args)
{
    char op[256], ep[256];
    snprintf(op, sizeof op, "%s/o.txt", f.dir);
    snprintf(ep, sizeof ep, "%s/e.txt", f.dir);
    return memctl_run(&f, args, 0, op, ep, &out, &err);
}

#define MEMCTL(...) memctl(MEMCTL_ARGS(__VA_ARGS__))

/* The one instance's id (the dump's). */
static uint64_t last_instance(memclient *c)
{
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(s->ninstances, 1);
    uint64_t id = s->instances[0].instance_id;
    memclient_snapshot_free(s);
    return id;
}

START_TEST(memctl_commands)
{
    char model[1024];
    snprintf(model, sizeof model, "%s/config/models/tiny_cnn.yaml", memd_fixture_source_root());
    ck_assert_int_eq(MEMCTL("model", "check", model), 0);
    ck_assert_ptr_nonnull(strstr(out, "6 activations (lower bound 65536 bytes)"));
    ck_assert_int_eq(MEMCTL("model", "load", model, "--instances", "2"), 0);
    ck_assert_msg(strstr(out, "model tiny-cnn: id"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "instance 2"));
    ck_assert_ptr_nonnull(strstr(out, "planned now"));
    /* The plan stays cached after memctl went away. */
    ck_assert_int_eq(MEMCTL("model", "load", model, "--device", "0"), 0);
    ck_assert_ptr_nonnull(strstr(out, "cached"));
    ck_assert_int_eq(MEMCTL("model", "load", model, "--device", "42"), 1);
    ck_assert_ptr_nonnull(strstr(err, "no device 42"));

    /* --json: one document each, read by a JSON parser, with the figures of the tables. */
    char py[512];
    snprintf(py, sizeof py, "%s/o.txt", f.dir);
    ck_assert_int_eq(MEMCTL("model", "check", model, "--json"), 0);
    ck_assert_msg(cu_python("import json,sys; d=json.load(open(sys.argv[1])); "
                                "assert d['schema_version'] == 1 and d['model'] == 'tiny-cnn'; "
                                "assert d['activations'] == 6 and d['lower_bound'] == 65536; "
                                "assert len(d['tensors']) == 15, len(d['tensors']); "
                                "assert all('value' not in t for t in d['tensors'])", py) == 0, "%s", out);
    ck_assert_int_eq(MEMCTL("model", "load", model, "--instances", "2", "--json"), 0);
    ck_assert_msg(cu_python("import json,sys; d=json.load(open(sys.argv[1])); "
                                "assert d['model'] == 'tiny-cnn' and d['device'] == 0; "
                                "assert d['plan']['cached'] and d['plan']['arena'] == 65536; "
                                "assert d['model_id_str'] == str(d['model_id']); "
                                "assert d['code']['bytes'] > 0 and d['constants']['bytes'] > 0; "
                                "t = d['tensors']; assert len(t) == 15; "
                                "acts = [x for x in t if x['role'] == 'activation' and "
                                "x['alias_of'] is None]; "
                                "assert all(x['value'] + x['bytes'] <= 65536 for x in acts); "
                                "i = d['instances']; assert len(i) == 2; "
                                "assert i[0]['arena_address'] != i[1]['arena_address']; "
                                "assert all(len(k['tensors']) == 15 for k in i)", py) == 0, "%s", out);
    ck_assert_int_eq(MEMCTL("model", "check", model, "--json", "extra"), 2);

    char bad[512];
    ck_assert_int_eq(memd_fixture_write_file(&f, "bad.yaml",
                                             "model: m\ntensors:\n  - {name: x, size: 4, "
                                             "role: bias}\nops: []\n", bad, sizeof bad), 0);
    ck_assert_int_eq(MEMCTL("model", "check", bad), 1);
    ck_assert_msg(strstr(err, "bad.yaml:3:30: role: 'bias'"), "%s", err);
    ck_assert_int_eq(MEMCTL("model", "load", bad), 1);
    ck_assert_int_eq(MEMCTL("model", "frobnicate"), 2);

    char csv[512];
    ck_assert_int_eq(memd_fixture_write_file(&f, "p.csv",
                                             "id,lower,upper,size\na,0,2,100\nb,1,3,200\n"
                                             "c,2,4,100\n", csv, sizeof csv), 0);
    ck_assert_int_eq(MEMCTL("plan-submit", csv), 0);
    ck_assert_msg(strstr(out, "planned now") && strstr(out, "lower bound 300 bytes"), "%s", out);
    ck_assert_int_eq(MEMCTL("plan-submit", csv, "--budget-ms", "5"), 0);
    ck_assert_ptr_nonnull(strstr(out, ", cached\n"));
    ck_assert_int_eq(MEMCTL("plan-submit", csv, "--validate"), 1);
    ck_assert_ptr_nonnull(strstr(err, "needs an offset on every row"));
    ck_assert_int_eq(memd_fixture_write_file(&f, "v.csv",
                                             "id,lower,upper,size,offset\na,0,2,100,0\n"
                                             "b,1,3,200,50\nc,2,4,100,0\n", csv, sizeof csv), 0);
    ck_assert_int_eq(MEMCTL("plan-submit", csv, "--validate"), 1);
    ck_assert_msg(strstr(err, "buffers 1 and 0 overlap"), "%s", err);

    /* dump shows models, plans, instances: a holder runs in the background. */
    int null = open("/dev/null", O_WRONLY);
    pid_t holder = memctl_spawn(
        &f, MEMCTL_ARGS("model", "load", model, "--instances", "1", "--hold"), 0, null, null);
    close(null);
    memclient *c = cu_connect(&f);
    bool seen = false;
    for (int i = 0; i < 500 && !seen; i++) {
        memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
        seen = s->ninstances == 1;
        memclient_snapshot_free(s);
        if (!seen)
            memd_test_sleep_ms(10);
    }
    ck_assert(seen);
    ck_assert_int_eq(MEMCTL("dump"), 0);
    ck_assert_msg(strstr(out, "models: 1") && strstr(out, "tiny-cnn") &&
                  strstr(out, "instances: 1") && strstr(out, "plans: 2"), "%s", out);
    /* The instance's buffers say what they are for (the daemon allocates them unnamed). */
    char role[64];
    snprintf(role, sizeof role, " tiny-cnn/instance %" PRIu64 "/", last_instance(c));
    ck_assert_msg(strstr(out, role), "no '%s' in:\n%.3000s", role, out);
    ck_assert_msg(strstr(out, "/arena ") && strstr(out, "/placeholder 0 ") &&
                  strstr(out, "/placeholder 1 "), "%.3000s", out);
    ck_assert_int_eq(MEMCTL("dump", "--json"), 0);
    memctl_expect_all(out, MEMCTL_ARGS("\"models\": [", "\"name\": \"tiny-cnn\"",
                                        "\"plans\": [", "\"gap_pct\": 0.0000",
                                        "\"instances\": ["));
    ck_assert_int_eq(MEMCTL("model", "list"), 0);
    ck_assert_ptr_nonnull(strstr(out, "tiny-cnn"));
    ck_assert_int_eq(kill(holder, SIGTERM), 0);
    int ws;
    ck_assert_int_eq(waitpid(holder, &ws, 0), holder);
    ck_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    memclient_snapshot *s = cu_dump(c, MEMCLIENT_DUMP_MODELS);
    ck_assert_uint_eq(s->nmodels, 0);
    ck_assert_uint_eq(s->ninstances, 0);
    memclient_snapshot_free(s);
    memclient_disconnect(c);
    free(out);
    free(err);
    out = err = NULL;
}
END_TEST

/* The line of out that starts with "plan", parsed by the one format; false if none. */
static bool plan_line(const char *text, bool with_id, unsigned long long *arena,
                      unsigned long long *lb, char *tail, size_t len)
{
    const char *p = text;
    while (p && strncmp(p, "plan", 4))
        p = (p = strchr(p, '\n')) ? p + 1 : NULL;
    if (!p)
        return false;
    char id[17] = "", strategy[40], line[512];
    unsigned long long buffers;
    int used = 0;
    snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
    int n = with_id ? sscanf(line, "plan %16[0-9a-f]: %llu buffers, arena %llu bytes, lower bound "
                                   "%llu bytes, gap %*f%%, strategy %39[^,], %n",
                             id, &buffers, arena, lb, strategy, &used)
                    : sscanf(line, "plan: %llu buffers, arena %llu bytes, lower bound %llu bytes, "
                                   "gap %*f%%, strategy %39[^,], %n",
                             &buffers, arena, lb, strategy, &used);
    if (n != (with_id ? 5 : 4) || !used || buffers != 3)
        return false;
    snprintf(tail, len, "%s", line + used);
    return true;
}

/* The JSON keys of a one-line object, in order, as "k1,k2,...". */
static void json_keys(const char *text, char *keys, size_t len)
{
    keys[0] = '\0';
    for (const char *p = strchr(text, '{'); p && (p = strchr(p, '"'));) {
        const char *q = strchr(p + 1, '"');
        if (!q)
            break;
        if (q[1] == ':')
            snprintf(keys + strlen(keys), len - strlen(keys), "%.*s,", (int)(q - p - 1), p + 1);
        p = q + 1;
    }
}

/* ---- readiness ---- */

/* A MODEL_WAIT on its own thread: what it returned and how long it took. */
typedef struct waiter {
    memclient *c;
    uint64_t model_id;
    int timeout_ms;
    int rc;
    memclient_model_info mi;
    long waited_ms;
    pthread_t t;
} waiter;

static void *wait_main(void *arg)
{
    waiter *w = arg;
    long t0 = memd_test_now_ms();
    w->rc = memclient_model_wait(w->c, w->model_id, w->timeout_ms, &w->mi, NULL, 0);
    w->waited_ms = memd_test_now_ms() - t0;
    return NULL;
}

static void wait_start(waiter *w, memclient *c, uint64_t model_id, int timeout_ms)
{
    *w = (waiter){.c = c, .model_id = model_id, .timeout_ms = timeout_ms};
    ck_assert_int_eq(pthread_create(&w->t, NULL, wait_main, w), 0);
}

static void wait_join(waiter *w)
{
    ck_assert_int_eq(pthread_join(w->t, NULL), 0);
}

/* The second loader waits (parked: the daemon serves others meanwhile) until the filler
 * sets the model ready; memctl model list and the events say filling, then ready. */
START_TEST(second_loader_waits_for_ready)
{
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f), *c3 = cu_connect(&f);
    memclient_model_desc d = model("ready-wait");
    memclient_model_info m1, m2;
    ck_assert_int_eq(memclient_model_load(c1, &d, NULL, &m1, NULL), 0);
    ck_assert(m1.created);
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m2, NULL), 0);
    ck_assert(!m2.created);
    ck_assert_int_eq(memclient_model_wait(c2, m2.model_id, 0, &m2, NULL, 0), -ETIMEDOUT);
    ck_assert_int_eq(memclient_model_set_ready(c2, m2.model_id), -EPERM); /* not its filler */
    ck_assert_int_eq(MEMCTL("model", "list"), 0);
    ck_assert_msg(strstr(out, "filling (session"), "%s", out);

    enum { HOLD_MS = 300 };
    waiter w;
    long t0 = memd_test_now_ms();
    wait_start(&w, c2, m2.model_id, -1);
    memd_test_sleep_ms(HOLD_MS / 3);
    /* Meanwhile the daemon serves everyone else at once. */
    memclient_buffer b;
    memclient_alloc_req r = cu_req(MEMD_CLASS_PLACEHOLDER, 4096);
    long a0 = memd_test_now_ms();
    ck_assert_int_eq(memclient_alloc(c3, &r, &b), 0);
    ck_assert_int_lt(memd_test_now_ms() - a0, HOLD_MS / 3);
    ck_assert_int_eq(MEMCTL("model", "list", "--json"), 0);
    ck_assert_msg(strstr(out, "\"state\": \"filling\"") && strstr(out, "\"waiters\": 1"), "%s", out);
    memd_test_sleep_ms(HOLD_MS - (memd_test_now_ms() - t0));
    ck_assert_int_eq(memclient_model_set_ready(c1, m1.model_id), 0);
    wait_join(&w);
    ck_assert_int_eq(w.rc, NT);
    ck_assert(!w.mi.created);
    ck_assert_int_ge(w.waited_ms, HOLD_MS * 2 / 3);
    printf("# second loader waited %ld ms for a filler that took %d ms\n", w.waited_ms, HOLD_MS);
    ck_assert_int_eq(memclient_model_set_ready(c1, m1.model_id), 0); /* again: no-op */
    ck_assert_int_eq(MEMCTL("model", "list"), 0);
    ck_assert_msg(strstr(out, " ready"), "%s", out);
    ck_assert_int_eq(MEMCTL("events"), 0);
    ck_assert_msg(strstr(out, "model ready-wait ready: session"), "%s", out);
    memclient_disconnect(c3);
    memclient_disconnect(c2);
    memclient_disconnect(c1);
}
END_TEST

/* A filler that goes away (or unloads) before MODEL_SET_READY hands the job to the
 * longest waiting session; a wait with a timeout ends with -ETIMEDOUT on a connection
 * that goes on working. */
START_TEST(filler_gone_hands_the_job_over)
{
    memclient *c1 = cu_connect(&f), *c2 = cu_connect(&f), *c3 = cu_connect(&f);
    memclient_model_desc d = model("ready-handover");
    memclient_model_info m1, m;
    ck_assert_int_eq(memclient_model_load(c1, &d, NULL, &m1, NULL), 0);
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m, NULL), 0);
    ck_assert_int_eq(memclient_model_load(c3, &d, NULL, &m, NULL), 0);
    ck_assert(m1.created && !m.created);
    long t0 = memd_test_now_ms();
    ck_assert_int_eq(memclient_model_wait(c3, m1.model_id, 150, &m, NULL, 0), -ETIMEDOUT);
    ck_assert_int_ge(memd_test_now_ms() - t0, 150);
    ck_assert_int_eq(memclient_model_query(c3, m1.model_id, &m, NULL, 0), NT); /* still usable */

    waiter w2, w3;
    wait_start(&w2, c2, m1.model_id, -1);
    memd_test_sleep_ms(100); /* c2 waits first */
    wait_start(&w3, c3, m1.model_id, 10000);
    memd_test_sleep_ms(100);
    memclient_disconnect(c1); /* the filler dies before set_ready */
    wait_join(&w2);
    ck_assert_int_eq(w2.rc, NT);
    ck_assert(w2.mi.created); /* the job is c2's now */
    ck_assert_int_eq(MEMCTL("events"), 0);
    ck_assert_msg(strstr(out, "left before MODEL_SET_READY"), "%s", out);
    /* c2 unloads without setting it ready: c3 is next. */
    ck_assert_int_eq(memclient_model_unload(c2, m1.model_id, 0), 0);
    wait_join(&w3);
    ck_assert_int_eq(w3.rc, NT);
    ck_assert(w3.mi.created);
    ck_assert_int_eq(memclient_model_set_ready(c3, m1.model_id), 0);
    /* A later loader: ready at once. */
    ck_assert_int_eq(memclient_model_load(c2, &d, NULL, &m, NULL), 0);
    ck_assert(!m.created);
    ck_assert_int_eq(memclient_model_wait(c2, m.model_id, 0, &m, NULL, 0), NT);
    memclient_disconnect(c3);
    memclient_disconnect(c2);
}
END_TEST

/* plan, plan-submit and model load report a plan in one format (they printed JSON,
 * key=value and prose before), with --json the same keys; and a budget the daemon
 * would cut short is refused, not silently cut to 1 s. */
START_TEST(plan_output_is_one_format)
{
    char csv[512], model[1024], tail[256], keys1[512], keys2[512];
    unsigned long long arena, lb;
    ck_assert_int_eq(memd_fixture_write_file(&f, "p.csv",
                                             "id,lower,upper,size\na,0,2,100\nb,1,3,200\n"
                                             "c,2,4,100\n", csv, sizeof csv), 0);
    snprintf(model, sizeof model, "%s/config/models/tiny_cnn.yaml", memd_fixture_source_root());

    ck_assert_int_eq(MEMCTL("plan", csv, "--budget-ms", "20"), 0);
    ck_assert_msg(plan_line(out, false, &arena, &lb, tail, sizeof tail), "%s", out);
    ck_assert(arena == 300 && lb == 300 && strstr(tail, "planned now in "));
    ck_assert_int_eq(MEMCTL("plan-submit", csv), 0);
    ck_assert_msg(plan_line(out, true, &arena, &lb, tail, sizeof tail), "%s", out);
    ck_assert(arena == 300 && lb == 300 && strstr(tail, "planned now in "));
    ck_assert_int_eq(MEMCTL("plan-submit", csv), 0);
    ck_assert_msg(plan_line(out, true, &arena, &lb, tail, sizeof tail) && !strcmp(tail, "cached"),
                  "%s", out);
    ck_assert_int_eq(MEMCTL("model", "load", model), 0);
    unsigned long long model_arena;
    const char *pl = strstr(out, "\nplan ");
    ck_assert_msg(pl && sscanf(pl, "\nplan %*16[0-9a-f]: %*u buffers, arena %llu bytes, lower "
                               "bound 65536 bytes, gap", &model_arena) == 1, "%s", out);

    ck_assert_int_eq(MEMCTL("plan", csv, "--budget-ms", "20", "--json"), 0);
    json_keys(out, keys1, sizeof keys1);
    ck_assert_ptr_nonnull(strstr(out, "\"plan_id\": null"));
    ck_assert_int_eq(MEMCTL("plan-submit", csv, "--json"), 0);
    json_keys(out, keys2, sizeof keys2);
    ck_assert_msg(!strcmp(keys1, keys2) && strstr(keys1, "plan_id,buffers,arena,lower_bound,"),
                  "%s vs %s", keys1, keys2);
    ck_assert_ptr_nonnull(strstr(out, "\"cached\": true"));

    ck_assert_int_eq(MEMCTL("plan-submit", csv, "--budget-ms", "1001"), 2);
    ck_assert_msg(strstr(err, "at most 1000 ms") && strstr(err, "--validate"), "%s", err);
    ck_assert_int_eq(MEMCTL("model", "load", model, "--budget-ms", "5000"), 2);
    ck_assert_msg(strstr(err, "at most 1000 ms"), "%s", err);
    ck_assert_int_eq(MEMCTL("plan-submit", csv, "--budget-ms", "1000"), 0);
}
END_TEST

Suite *memd_test_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("daemon");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, plan_cache_across_sessions);
    tcase_add_test(tc, precomputed_plan_rejected_with_pair);
    tcase_add_test(tc, big_plan_uploaded_off_the_loop);
    tcase_add_test(tc, replies_in_order_behind_a_plan);
    tcase_add_test(tc, client_gone_during_planning);
    tcase_add_test(tc, shutdown_during_planning);
    tcase_add_test(tc, models_and_instances_across_sessions);
    tcase_add_test(tc, killed_client_with_instance);
    tcase_add_test(tc, model_errors);
    tcase_add_test(tc, memctl_commands);
    tcase_add_test(tc, plan_output_is_one_format);
    tcase_add_test(tc, second_loader_waits_for_ready);
    tcase_add_test(tc, filler_gone_hands_the_job_over);
    suite_add_tcase(s, tc);
    return s;
}
